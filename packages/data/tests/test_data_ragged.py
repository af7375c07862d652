"""tf.data with ragged tensors: from_tensor_slices of a tf.RaggedTensor, ragged_batch, batch of ragged elements and
padded_batch's refusal, as TensorFlow 2.21 (expected values are TensorFlow's)."""
from __future__ import annotations

import os

import pytest
import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError


def _tf_or_none():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow
    except Exception:  # noqa: BLE001 (a broken TensorFlow install is as good as none)
        return None
    return tensorflow


TF = _tf_or_none()


def _rt():
    return tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])


def test_from_tensor_slices_of_ragged_yields_rows():
    ds = tf.data.Dataset.from_tensor_slices(_rt())
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    assert isinstance(ds.element_spec, tf.RaggedTensorSpec) and ds.element_spec.ragged_rank == 0
    rows = list(ds)
    assert all(isinstance(r, tf.Tensor) for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3], [], [4, 5, 6]]
    assert int(ds.cardinality()) == 4
    pairs = list(tf.data.Dataset.from_tensor_slices((_rt(), tf.constant([0, 1, 2, 3]))))
    assert [(r.numpy().tolist(), int(y)) for r, y in pairs][:2] == [([1, 2], 0), ([3], 1)]
    with pytest.raises(InvalidArgumentError, match="same size in their first dimension"):
        tf.data.Dataset.from_tensor_slices((_rt(), tf.constant([0, 1])))


def test_batch_of_ragged_elements_gives_ragged_tensors():
    batches = list(tf.data.Dataset.from_tensor_slices(_rt()).batch(2))
    assert [b.to_list() for b in batches] == [[[1, 2], [3]], [[], [4, 5, 6]]]
    x, y = next(iter(tf.data.Dataset.from_tensor_slices((_rt(), tf.constant([0, 1, 2, 3]))).ragged_batch(2)))
    assert isinstance(x, tf.RaggedTensor) and x.to_list() == [[1, 2], [3]] and y.numpy().tolist() == [0, 1]


def test_ragged_batch():
    ds = tf.data.Dataset.range(1, 5).map(lambda n: tf.range(n))
    rb = ds.ragged_batch(3)
    assert repr(rb.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)"
    assert [b.to_list() for b in rb] == [[[0], [0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]
    assert [b.to_list() for b in tf.data.Dataset.from_tensor_slices(_rt()).ragged_batch(3, drop_remainder=True)] == \
        [[[1, 2], [3], []]]
    dense = list(tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).ragged_batch(2))
    assert isinstance(dense[0], tf.Tensor) and dense[0].numpy().tolist() == [[1, 2], [3, 4]]  # a known shape stacks
    nested = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[[1], [2, 3]], [[4]]]))
    assert [e.to_list() for e in nested] == [[[1], [2, 3]], [[4]]]
    assert [b.to_list() for b in nested.ragged_batch(2)] == [[[[1], [2, 3]], [[4]]]]
    with pytest.raises(InvalidArgumentError, match="row_splits_dtype"):
        ds.ragged_batch(2, row_splits_dtype=tf.int32)


def test_padded_batch_of_ragged_elements_is_a_type_error():
    with pytest.raises(TypeError, match="`padded_batch` is only supported for datasets that produce tensor elements"):
        tf.data.Dataset.from_tensor_slices(_rt()).padded_batch(2)


@pytest.mark.skipif(TF is None, reason="compares with TensorFlow where it is installed")
def test_ragged_datasets_match_tensorflow():
    def run(mod):
        rt = mod.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
        ds = mod.data.Dataset.from_tensor_slices((rt, mod.constant([0, 1, 2, 3])))
        seq = mod.data.Dataset.range(1, 5).map(lambda n: mod.range(n))
        return [repr(ds.element_spec[0]), [(x.numpy().tolist(), int(y)) for x, y in ds],
                [(x.to_list(), y.numpy().tolist()) for x, y in ds.batch(3)],
                [b.to_list() for b in seq.ragged_batch(3)], repr(seq.ragged_batch(3).element_spec)]

    assert run(tf) == run(TF)
