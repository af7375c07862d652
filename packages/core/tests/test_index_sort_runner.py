"""The index and sort ops go through the primitive runner (issue 11 item 1).

Each op is reported once, under its name, with the attrs the gradient rules read (float16 is computed
in float32 inside the primitive, so no cast is reported beside it); tracing infers shapes and dtypes
without kernels; an argument whose value the op needs is one TypeError naming the op while tracing;
kernel index errors keep their messages.
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.dispatch import hooks
from tapeflow.core.runner import PRIMITIVES, tracing

OPS = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_update",
       "unsorted_segment_sum", "one_hot", "cumsum", "cumprod", "sort", "argsort", "top_k"]


class _Seen:
    """Subscribe to the recorder; ``ops`` lists (op, attrs) in order."""

    def __enter__(self):
        self.ops = []
        self._sub = hooks.subscribe(lambda op, inputs, out, attrs: self.ops.append((op, attrs)))
        return self

    def __exit__(self, *exc):
        self._sub.remove()


def _flat(x):
    return list(x) if isinstance(x, tuple) else [x]


def test_the_index_and_sort_ops_are_runner_primitives():
    assert [op for op in OPS if op not in PRIMITIVES] == []


def _cases(dtype):
    x = tf.constant([[3.0, 1.0], [2.0, 4.0]], dtype)
    upd = tf.constant([[5.0, 6.0]], dtype)
    ids = tf.constant([1, 0])
    nd = tf.constant([[1]])
    return [
        (lambda: tf.gather(x, ids, axis=1), "gather", {"axis": 1, "batch_dims": 0}),
        (lambda: tf.gather_nd(x, nd), "gather_nd", {"batch_dims": 0}),
        (lambda: tf.scatter_nd(nd, upd, [3, 2]), "scatter_nd", {"shape": (3, 2)}),
        (lambda: tf.tensor_scatter_nd_add(x, nd, upd), "tensor_scatter_nd_add", None),
        (lambda: tf.tensor_scatter_nd_update(x, nd, upd), "tensor_scatter_nd_update", None),
        (lambda: tf.math.unsorted_segment_sum(x, ids, 3), "unsorted_segment_sum", {"num_segments": 3}),
        (lambda: tf.math.segment_sum(x, [0, 0]), "unsorted_segment_sum", {"num_segments": 1}),
        (lambda: tf.cumsum(x, 1, reverse=True), "cumsum", {"axis": 1, "exclusive": False, "reverse": True}),
        (lambda: tf.math.cumprod(x, -1, exclusive=True), "cumprod", {"axis": 1, "exclusive": True, "reverse": False}),
        (lambda: tf.sort(x, 0, "DESCENDING"), "sort", {"axis": 0, "direction": "DESCENDING"}),
        (lambda: tf.argsort(x, 0), "argsort", {"axis": 0, "direction": "ASCENDING"}),
        (lambda: tf.math.top_k(x, 1), "top_k", {"k": 1, "sorted": True}),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_each_op_is_reported_once_with_the_attrs_its_gradient_reads(dtype):
    for i, (fn, op, attrs) in enumerate(_cases(tf.as_dtype(dtype))):
        eager = fn()
        with _Seen() as seen:
            out = fn()
        assert seen.ops == [(op, attrs)], (i, seen.ops)
        for a, b in zip(_flat(out), _flat(eager)):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_one_hot_is_reported_with_its_normalised_attrs():
    with _Seen() as seen:
        out = tf.one_hot(tf.constant([0, 2]), 3, on_value=5, off_value=-1, axis=0)
    assert out.numpy().tolist() == [[5, -1], [-1, -1], [-1, 5]]
    assert [op for op, _ in seen.ops] == ["one_hot"]
    attrs = seen.ops[0][1]
    assert (attrs["depth"], attrs["axis"], attrs["dtype"], attrs["on_value"], attrs["off_value"]) == (3, 0, tf.int32,
                                                                                                      5, -1)


def test_tracing_chains_the_ops_without_kernels():
    x = tf.constant([[3.0, 1.0, 2.0], [0.5, 4.0, 1.0]])
    with tracing() as graph:
        c = tf.cumsum(x, axis=1)
        g = tf.gather(c, tf.constant([2, 0, 2, 1]), axis=1)
        v, i = tf.math.top_k(g, k=2)
        s = tf.math.unsorted_segment_sum(v, tf.constant([1, 1]), 4)
        o = tf.one_hot(tf.constant([[0, 1]]), 5, axis=1)
    assert [n.prim.name for n in graph.nodes] == ["cumsum", "gather", "top_k", "unsorted_segment_sum", "one_hot"]
    for t, shape, dtype in [(c, (2, 3), tf.float32), (g, (2, 4), tf.float32), (v, (2, 2), tf.float32),
                            (i, (2, 2), tf.int32), (s, (4, 2), tf.float32), (o, (1, 5, 2), tf.float32)]:
        assert t._h is None and tuple(t.shape) == shape and t.dtype == dtype, (t, shape, dtype)


def test_values_an_op_needs_are_a_type_error_naming_it_while_tracing():
    x = tf.constant([1.0, 2.0, 3.0])
    with tracing():
        sym_ids = tf.cumsum(tf.constant([0, 0, 1]))          # symbolic: no value while tracing
        sym_k = tf.reduce_sum(tf.constant([1, 1]))
        sym_on = tf.reduce_sum(tf.constant([2.0]))
        with pytest.raises(TypeError, match=r"segment_ids needs a static value while tracing.*\[Op:SegmentSum\]"):
            tf.math.segment_sum(x, sym_ids)
        with pytest.raises(TypeError, match=r"k needs a static value while tracing.*\[Op:TopKV2\]"):
            tf.math.top_k(x, k=sym_k)
        with pytest.raises(TypeError, match=r"on_value needs a static value while tracing.*\[Op:OneHot\]"):
            tf.one_hot([0, 1], 2, on_value=sym_on)
        with pytest.raises(TypeError, match=r"num_segments needs a static value while tracing"):
            tf.math.unsorted_segment_sum(x, [0, 1, 1], sym_k)
        # symbolic indices are fine where only their shape matters
        assert tuple(tf.gather(x, sym_ids).shape) == (3,)


@pytest.mark.parametrize("fn, op, message", [
    (lambda: tf.gather(tf.zeros([2, 3]), [[0, 1], [2, 3]], axis=1, batch_dims=1), "Gather",
     "indices[1,1] = 3 is not in [0, 3)"),
    (lambda: tf.gather_nd(tf.zeros([2, 2]), [[0, 0], [1, 1], [-1, 0]]), "GatherNd",
     "indices[2] = [-1, 0] does not index into param shape [2, 2]"),
    (lambda: tf.scatter_nd([[[1], [4]]], tf.ones([1, 2]), [4]), "ScatterNd",
     "indices[0,1] = [4] does not index into shape [4]"),
    (lambda: tf.tensor_scatter_nd_add(tf.zeros([3], tf.float16), [[0], [3]], tf.ones([2], tf.float16)),
     "TensorScatterAdd", "indices[1] = [3] does not index into shape [3]"),
    (lambda: tf.math.unsorted_segment_sum(tf.ones([3]), [-1, 0, 9], 2), "UnsortedSegmentSum",
     "segment_ids[2] = 9 is not in [0, 2)"),
    (lambda: tf.math.segment_sum(tf.ones([3]), [0, 2, 1]), "SegmentSum",
     "segment_ids are not sorted: segment_ids[2] = 1 < segment_ids[1] = 2; allowed: non-decreasing ids (or use "
     "unsorted_segment_sum)"),
])
def test_kernel_index_errors_name_the_first_bad_index(fn, op, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        fn()
    assert str(info.value) == f"{message} [Op:{op}]"


def test_variable_scatter_updates_stay_unrecorded_and_name_their_op():
    v = tf.Variable([1.0, 2.0, 3.0])
    with _Seen() as seen:
        v.scatter_nd_add([[0], [2]], [10.0, 20.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:ResourceScatterNdUpdate\]$"):
            v.scatter_nd_update([[3]], [1.0])
    assert v.numpy().tolist() == [11.0, 2.0, 23.0]
    assert [op for op, _ in seen.ops if op.startswith("tensor_scatter")] == []


def test_boolean_mask_traces_with_an_eager_mask_and_with_a_symbolic_one():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tracing() as graph:
        y = tf.boolean_mask(tf.cumsum(x), [True, False, True])
        z = tf.boolean_mask(x, tf.reduce_any(tf.constant([[True, False, True]]), axis=0))  # count known at run time
    assert y._h is None and tuple(y.shape) == (2, 2) and "gather" in [n.prim.name for n in graph.nodes]
    assert z._h is None and tuple(z.shape) == (None, 2) and "where" in [n.prim.name for n in graph.nodes]
