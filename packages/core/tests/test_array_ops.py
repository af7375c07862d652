"""Shape ops: bad input (typed errors naming the op and what was allowed) and behaviour
the NumPy differential specs (tests/specs/array.py) cannot express: kernel launch
counts, the parallel paths of large inputs, ties, NaN, exact values, gradients
through indexing."""
from __future__ import annotations

import re

import numpy as np
import pytest
import tapeflow as tf

InvalidArgumentError = tf.errors.InvalidArgumentError


def _raises(fn, op, *fragments):
    """``fn()`` raises InvalidArgumentError ending with [Op:op] and containing every fragment."""
    with pytest.raises(InvalidArgumentError) as info:
        fn()
    msg = str(info.value)
    assert msg.endswith(f"[Op:{op}]"), msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


# ---- the seed's error, exactly ------------------------------------------------------------------

def test_gather_out_of_range_message_is_exact():
    with pytest.raises(InvalidArgumentError) as info:
        tf.gather([0, 1, 2], 7)
    assert str(info.value) == "indices = 7 is not in [0, 3) [Op:Gather]"
    assert isinstance(info.value, ValueError)


def test_gather_names_the_position_of_the_bad_index():
    _raises(lambda: tf.gather([0, 1, 2], [[1, 7]]), "Gather", "indices[0,1] = 7 is not in [0, 3)")
    _raises(lambda: tf.gather([0, 1, 2], [0, -1]), "Gather", "indices[1] = -1 is not in [0, 3)")
    _raises(lambda: tf.gather(tf.zeros([2, 3]), [3], axis=1), "Gather", "indices[0] = 3 is not in [0, 3)")


# ---- bad input, op by op ----------------------------------------------------------------------------

BAD = [
    # creation
    (lambda: tf.range(0, 5, 0), "Range", ["delta = 0"]),
    (lambda: tf.range(5, 1), "Range", ["start = 5 > limit = 1", "allowed: start <= limit"]),
    (lambda: tf.range(1, 5, -1), "Range", ["start = 1 < limit = 5"]),
    (lambda: tf.range(0, 300, dtype=tf.int8), "Range", ["int8"]),
    (lambda: tf.range("a"), "Range", ["must be a number"]),
    (lambda: tf.eye(-1), "Eye", ["allowed: non-negative"]),
    (lambda: tf.linspace(0.0, 1.0, -2), "LinSpace", ["num = -2", "allowed: num >= 0"]),
    (lambda: tf.meshgrid([1], indexing="zz"), "Meshgrid", ["'xy', 'ij'"]),
    (lambda: tf.shape(tf.zeros([2]), out_type=tf.float32), "Shape", ["allowed: int32, int64"]),
    # views
    (lambda: tf.reshape(tf.zeros([2, 3]), [4, 2]), "Reshape", ["6 elements", "[4, 2]"]),
    (lambda: tf.squeeze(tf.zeros([2, 3]), 1), "Squeeze", ["cannot squeeze axis 1 of size 3", "axes of size 1"]),
    (lambda: tf.squeeze(tf.zeros([1, 3]), 2), "Squeeze", ["axis 2 is out of range", "[-2, 2)"]),
    (lambda: tf.expand_dims(tf.zeros([2, 3]), 3), "ExpandDims", ["axis 3", "[-3, 2]"]),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0, 0]), "Transpose", ["not a permutation"]),
    (lambda: tf.broadcast_to(tf.zeros([2, 3]), [3, 3]), "BroadcastTo", ["(2, 3)", "(3, 3)"]),
    (lambda: tf.broadcast_to(tf.zeros([2, 3]), [3]), "BroadcastTo", ["(2, 3)"]),
    (lambda: tf.tile(tf.zeros([2]), [1, 2]), "Tile", ["multiples = [1, 2]", "exactly 1 non-negative"]),
    (lambda: tf.tile(tf.zeros([2]), [-1]), "Tile", ["non-negative"]),
    (lambda: tf.reverse(tf.zeros([2, 3]), [2]), "ReverseV2", ["axis 2 is out of range", "[-2, 2)"]),
    (lambda: tf.reverse(tf.zeros([2, 3]), [1, -1]), "ReverseV2", ["repeats axis 1"]),
    # joining and splitting
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0), "ConcatV2",
     ["values[1] has shape (2, 4)", "equal except along axis 0"]),
    (lambda: tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], 0), "ConcatV2",
     ["values[1] has dtype int32 but values[0] has float32"]),
    (lambda: tf.concat([tf.zeros([2])], 1), "ConcatV2", ["axis 1 is out of range", "[-1, 1)"]),
    (lambda: tf.concat([tf.zeros([])], 0), "ConcatV2", ["scalars", "tf.stack"]),
    (lambda: tf.concat([], 0), "ConcatV2", ["at least one tensor"]),
    (lambda: tf.stack([tf.zeros([2]), tf.zeros([3])]), "Pack",
     ["values[0].shape = [2] != values[1].shape = [3]"]),
    (lambda: tf.stack([tf.zeros([2])], axis=2), "Pack", ["axis 2", "[-2, 1]"]),
    (lambda: tf.split(tf.zeros([5]), 2), "SplitV", ["axis 0 of size 5 into 2 equal parts", "divisor of 5"]),
    (lambda: tf.split(tf.zeros([5]), [2, 2]), "SplitV", ["add up to 4", "add up to 5"]),
    (lambda: tf.split(tf.zeros([5]), [-1, -1]), "SplitV", ["at most one -1"]),
    (lambda: tf.split(tf.zeros([5]), [4, -1, 3]), "SplitV", ["need more than the 5 entries"]),
    (lambda: tf.split(tf.zeros([]), 1), "SplitV", ["scalar"]),
    (lambda: tf.unstack(tf.zeros([])), "Unpack", ["scalar"]),
    (lambda: tf.unstack(tf.zeros([2, 3]), num=3), "Unpack", ["num = 3", "size 2"]),
    (lambda: tf.unstack(tf.zeros([2, 3]), axis=2), "Unpack", ["axis 2 is out of range"]),
    # pad and slicing
    (lambda: tf.pad(tf.zeros([2, 3]), [[1, 1]]), "PadV2", ["paddings has shape [1, 2]", "allowed: [2, 2]"]),
    (lambda: tf.pad(tf.zeros([2]), [[-1, 0]]), "PadV2", ["paddings[0] = [-1, 0]", "non-negative"]),
    (lambda: tf.pad(tf.zeros([3]), [[3, 0]], "REFLECT"), "MirrorPad", ["REFLECT padding [3, 0] of axis 0 (size 3)",
                                                                      "at most 2"]),
    (lambda: tf.pad(tf.zeros([3]), [[0, 4]], "SYMMETRIC"), "MirrorPad", ["at most 3"]),
    (lambda: tf.pad(tf.zeros([3]), [[0, 1]], "WRAP"), "PadV2", ["'CONSTANT', 'REFLECT', 'SYMMETRIC'"]),
    (lambda: tf.pad(tf.zeros([3], tf.int32), [[0, 1]], constant_values=1.5), "PadV2",
     ["constant_values = 1.5 cannot be represented as int32"]),
    (lambda: tf.pad(tf.zeros([3]), [[0, 1]], constant_values=tf.constant(1)), "PadV2",
     ["constant_values has dtype int32; allowed: float32"]),
    (lambda: tf.slice(tf.zeros([3]), [1], [4]), "Slice", ["size[0] = 4 is not in [0, 2]"]),
    (lambda: tf.slice(tf.zeros([3]), [4], [-1]), "Slice", ["begin[0] = 4 is not in [0, 3]"]),
    (lambda: tf.slice(tf.zeros([3, 2]), [0], [1]), "Slice", ["allowed: 2 each"]),
    (lambda: tf.strided_slice(tf.range(10), [1], [8], [0]), "StridedSlice", ["strides[0] = 0", "non-zero"]),
    (lambda: tf.strided_slice(tf.range(10), [12], [13], shrink_axis_mask=1), "StridedSlice",
     ["index 12 is out of bounds for axis 0 with size 10", "[-10, 10)"]),
    (lambda: tf.strided_slice(tf.range(10), [1, 2], [3]), "StridedSlice", ["the same number"]),
    (lambda: tf.strided_slice_grad([4], [0], [4], [2], tf.zeros([3])), "StridedSliceGrad",
     ["dy has shape (3,)", "allowed: (2,)"]),
    # gather and scatter
    (lambda: tf.gather(tf.zeros([3]), [0.5]), "Gather", ["indices has dtype float32", "int32, int64"]),
    (lambda: tf.gather(tf.zeros([3]), [0], axis=1), "Gather", ["axis 1 is out of range for params of rank 1"]),
    (lambda: tf.gather(tf.zeros([]), [0]), "Gather", ["params is a scalar"]),
    (lambda: tf.gather(tf.zeros([2, 3]), tf.zeros([3, 1], tf.int32), axis=1, batch_dims=1), "Gather",
     ["params.shape[0] = 2 != indices.shape[0] = 3"]),
    (lambda: tf.gather(tf.zeros([2, 3]), tf.zeros([2, 1], tf.int32), axis=0, batch_dims=1), "Gather",
     ["batch_dims = 1 > axis = 0"]),
    (lambda: tf.gather(tf.zeros([2, 3]), [0], batch_dims=2), "Gather", ["batch_dims = 2", "[-1, 1]"]),
    (lambda: tf.gather_nd([[1, 2], [3, 4]], [[2, 0]]), "GatherNd",
     ["indices[0] = [2, 0] does not index into param shape [2, 2]"]),
    (lambda: tf.gather_nd([[1, 2], [3, 4]], [[0, 0], [1, -1]]), "GatherNd", ["indices[1] = [1, -1]"]),
    (lambda: tf.gather_nd([1, 2], [[0, 0]]), "GatherNd", ["index tuples of length 2", "at most 1"]),
    (lambda: tf.gather_nd([1, 2], 0), "GatherNd", ["indices is a scalar"]),
    (lambda: tf.gather_nd(tf.zeros([2, 3]), tf.zeros([3, 1], tf.int32), batch_dims=1), "GatherNd",
     ["params.shape[:1] = [2] != indices.shape[:1] = [3]"]),
    (lambda: tf.scatter_nd([[5]], tf.constant([1.0]), [4]), "ScatterNd",
     ["indices[0] = [5] does not index into shape [4]"]),
    (lambda: tf.scatter_nd([[1], [2]], tf.constant([1.0]), [4]), "ScatterNd",
     ["updates has shape [1]", "indices.shape[:-1] + shape[1:] = [2]"]),
    (lambda: tf.scatter_nd([[1]], tf.constant([True]), [4]), "ScatterNd", ["updates has dtype bool"]),
    (lambda: tf.scatter_nd([[1]], tf.constant([1.0]), [-4]), "ScatterNd", ["non-negative"]),
    (lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [[0]], tf.constant([1], tf.int32)), "TensorScatterUpdate",
     ["updates has dtype int32 but tensor has float32"]),
    (lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [[3]], [1.0]), "TensorScatterUpdate",
     ["indices[0] = [3] does not index into shape [3]"]),
    (lambda: tf.tensor_scatter_nd_add(tf.constant([True]), [[0]], [True]), "TensorScatterAdd",
     ["tensor has dtype bool"]),
    (lambda: tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0]), [0, 5], 3), "UnsortedSegmentSum",
     ["segment_ids[1] = 5 is not in [0, 3)"]),
    (lambda: tf.math.unsorted_segment_sum(tf.zeros([3, 2]), [0, 1], 3), "UnsortedSegmentSum",
     ["data.shape = [3, 2] does not start with segment_ids.shape = [2]"]),
    (lambda: tf.math.unsorted_segment_sum(tf.zeros([2]), [0, 1], -1), "UnsortedSegmentSum", ["num_segments = -1"]),
    (lambda: tf.math.unsorted_segment_sum(tf.constant([True]), [0], 1), "UnsortedSegmentSum",
     ["data has dtype bool"]),
    (lambda: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [1, 0, 1]), "SegmentSum",
     ["segment_ids are not sorted: segment_ids[1] = 0 < segment_ids[0] = 1"]),
    (lambda: tf.math.segment_sum(tf.constant([1.0, 2.0]), [-1, 0]), "SegmentSum",
     ["segment_ids[0] = -1 is not in [0, 1)"]),
    (lambda: tf.math.segment_sum(tf.constant([1.0, 2.0]), [0, 0, 1]), "SegmentSum",
     ["a vector as long as data's first axis"]),
    # one_hot, where, boolean_mask
    (lambda: tf.one_hot([0, 1], -1), "OneHot", ["depth = -1"]),
    (lambda: tf.one_hot([0.0], 2), "OneHot", ["indices has dtype float32"]),
    (lambda: tf.one_hot([0, 1], 2, axis=3), "OneHot", ["axis = 3", "[-1, 1]"]),
    (lambda: tf.one_hot([0], 2, on_value=tf.constant(1), dtype=tf.float32), "OneHot",
     ["on_value has dtype int32; allowed: float32"]),
    (lambda: tf.where([1.0, 0.0], 1.0, 2.0), "SelectV2", ["condition has dtype float32; allowed: bool"]),
    (lambda: tf.where([True], tf.constant([1.0]), tf.constant([1])), "SelectV2",
     ["float32", "int32"]),
    (lambda: tf.where([True, False, True], tf.zeros([2]), 0.0), "SelectV2", ["incompatible shapes"]),
    (lambda: tf.where([True], x=1.0), "Where", ["both be given"]),
    (lambda: tf.boolean_mask(tf.zeros([3, 2]), [True, False]), "BooleanMask",
     ["mask has shape [2] but the tensor's axes 0..0 have [3]"]),
    (lambda: tf.boolean_mask(tf.zeros([3]), [1, 0, 1]), "BooleanMask", ["mask has dtype int32; allowed: bool"]),
    (lambda: tf.boolean_mask(tf.zeros([3]), True), "BooleanMask", ["mask is a scalar"]),
    (lambda: tf.boolean_mask(tf.zeros([3, 2]), [True, False], axis=2), "BooleanMask", ["allowed: [0, 1]"]),
    # scans and sorting
    (lambda: tf.cumsum(tf.constant(3.0)), "Cumsum", ["axis 0 is out of range for a tensor of rank 0"]),
    (lambda: tf.cumsum(tf.zeros([2, 3]), axis=2), "Cumsum", ["axis 2", "[-2, 2)"]),
    (lambda: tf.cumsum(tf.constant([True])), "Cumsum", ["x has dtype bool"]),
    (lambda: tf.math.cumprod(tf.constant([True])), "Cumprod", ["x has dtype bool"]),
    (lambda: tf.sort(tf.zeros([3]), direction="UP"), "Sort", ["'ASCENDING', 'DESCENDING'"]),
    (lambda: tf.sort(tf.zeros([3]), axis=1), "Sort", ["axis 1 is out of range for a tensor of rank 1"]),
    (lambda: tf.sort(tf.constant(1.0)), "Sort", ["rank 0"]),
    (lambda: tf.argsort(tf.zeros([3]), direction="x"), "Argsort", ["'ASCENDING', 'DESCENDING'"]),
    (lambda: tf.math.top_k(tf.constant([1.0, 2.0]), 3), "TopKV2", ["k = 3 is not in [0, 2]"]),
    (lambda: tf.math.top_k(tf.constant(1.0)), "TopKV2", ["scalar"]),
    (lambda: tf.math.top_k(tf.constant([True])), "TopKV2", ["input has dtype bool"]),
]


@pytest.mark.parametrize("case", range(len(BAD)), ids=lambda i: f"{BAD[i][1]}-{i}")
def test_bad_input_raises_typed_error_naming_op(case):
    fn, op, fragments = BAD[case]
    _raises(fn, op, *fragments)


GETITEM_BAD = [
    (lambda x: x[5], ["index 5 is out of bounds for axis 0 with size 2", "[-2, 2)"]),
    (lambda x: x[0, 0, 0], ["too many indices", "at most 2"]),
    (lambda x: x[..., ...], ["single ellipsis"]),
    (lambda x: x[1.5], ["only integers, slices"]),
    (lambda x: x[::0], ["step of axis 0 is 0"]),
    (lambda x: x[True], ["boolean scalar index"]),
    (lambda x: x[[0.5]], ["an index array has dtype float32"]),
    (lambda x: x[np.array([True, False, True])], ["boolean index of shape (3,) does not match", "(2,)"]),
    (lambda x: x[[0, 1], 5], ["index 5 is out of bounds for axis 1 with size 3"]),
]


@pytest.mark.parametrize("case", range(len(GETITEM_BAD)))
def test_getitem_bad_keys(case):
    x = tf.reshape(tf.range(6.0), [2, 3])
    fn, fragments = GETITEM_BAD[case]
    _raises(lambda: fn(x), "StridedSlice", *fragments)


def test_getitem_array_index_out_of_range_names_gather():
    x = tf.reshape(tf.range(6.0), [2, 3])
    _raises(lambda: x[:, [0, 3]], "Gather", "indices[1] = 3 is not in [0, 3)")


def test_kernel_status_errors_are_typed():
    be = tf.constant([1.0])._dev.backend
    assert be.gather(3, 2, tf.zeros([2])._h, tf.zeros([1])._h, tf.zeros([1])._h, 1, 1, 2, 1, 1,
                     be.new_int64([0])) != 0  # element size 3: rejected, not a crash


# ---- behaviour ----------------------------------------------------------------------------------------

class _Count:
    """Count calls of backend kernels (instance attributes of the backend) inside a with block."""

    def __init__(self, be, names):
        self.be, self.names, self.calls = be, names, {n: 0 for n in names}
        self.saved = {n: getattr(be, n) for n in names}

    def __enter__(self):
        for n, real in self.saved.items():
            def wrap(*a, _real=real, _n=n):
                self.calls[_n] += 1
                return _real(*a)
            setattr(self.be, n, wrap)
        return self.calls

    def __exit__(self, *exc):
        for n, real in self.saved.items():
            setattr(self.be, n, real)


def test_unstack_split_concat_are_one_kernel_launch_each():
    x = tf.reshape(tf.range(60.0), [3, 4, 5])
    be = x._dev.backend
    with _Count(be, ["split", "concat", "strided_copy"]) as calls:
        parts = tf.unstack(x, axis=1)
        assert calls == {"split": 1, "concat": 0, "strided_copy": 0}
        y = tf.concat(parts, axis=0)
        assert calls["concat"] == 1
        tf.split(x, [1, 3], axis=1)
        assert calls["split"] == 2 and calls["strided_copy"] == 0
    np.testing.assert_array_equal(y.numpy(), np.concatenate(list(np.moveaxis(x.numpy(), 1, 0)), 0))


LARGE = 1 << 17  # above the kernels' threshold for using every core


def test_large_inputs_take_the_parallel_paths_correctly(rng):
    a = rng.normal(size=(LARGE // 64, 64)).astype(np.float32)
    t = tf.constant(a)
    idx = rng.integers(0, a.shape[0], 3000).astype(np.int32)
    np.testing.assert_array_equal(tf.gather(t, idx).numpy(), a[idx])
    np.testing.assert_array_equal(tf.gather(t, idx[:50], axis=0).numpy(), a[idx[:50]])
    np.testing.assert_array_equal(tf.concat([t, t[:, :3]], 1).numpy(), np.concatenate([a, a[:, :3]], 1))
    for got, want in zip(tf.split(t, [10, 54], 1), np.split(a, [10], 1)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(tf.pad(t, [[2, 3], [1, 4]], "REFLECT").numpy(),
                                  np.pad(a, [[2, 3], [1, 4]], "reflect"))
    np.testing.assert_array_equal(tf.where(t > 0.5).numpy(), np.argwhere(a > 0.5))
    np.testing.assert_array_equal(tf.where(t > 0, t, -t).numpy(), np.abs(a))
    np.testing.assert_array_equal(tf.sort(t, axis=-1).numpy(), np.sort(a, -1))
    np.testing.assert_array_equal(tf.argsort(t, axis=0).numpy(), np.argsort(a, 0, kind="stable"))
    v, i = tf.math.top_k(t, 5)
    np.testing.assert_array_equal(i.numpy(), np.argsort(-a, -1, kind="stable")[:, :5])
    np.testing.assert_array_equal(v.numpy(), np.take_along_axis(a, i.numpy(), -1))
    np.testing.assert_allclose(tf.cumsum(t, axis=0).numpy(), np.cumsum(a, 0, dtype=np.float64), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(tf.cumsum(t, axis=1).numpy(), np.cumsum(a, 1), rtol=1e-5, atol=1e-5)
    ids = rng.integers(0, 7, a.shape[0]).astype(np.int32)
    want = np.zeros((7, 64), np.float64)
    np.add.at(want, ids, a)
    np.testing.assert_allclose(tf.math.unsorted_segment_sum(t, ids, 7).numpy(), want, rtol=1e-4, atol=1e-3)
    wide = rng.normal(size=(2, LARGE)).astype(np.float32)
    wide_ids = np.array([1, 1], np.int32)  # few rows, many columns: the column-split path
    np.testing.assert_allclose(tf.math.unsorted_segment_sum(wide, wide_ids, 2).numpy()[1], wide.sum(0), rtol=1e-5,
                               atol=1e-5)
    oh = tf.one_hot(idx, 50).numpy()
    np.testing.assert_array_equal(oh.argmax(-1), np.where(idx < 50, idx, 0))
    sc = tf.scatter_nd(np.array([[1], [1]], np.int32), wide, [3, LARGE]).numpy()
    np.testing.assert_allclose(sc[1], wide.sum(0), rtol=1e-5, atol=1e-5)


def test_top_k_ties_take_the_lower_index_and_nan_is_largest():
    v, i = tf.math.top_k(tf.constant([1.0, 3.0, 3.0, 2.0, 3.0]), 3)
    assert i.numpy().tolist() == [1, 2, 4] and i.dtype == tf.int32
    row = np.zeros(100, np.float32)
    row[[7, 3, 90]] = 1.0
    _, i = tf.math.top_k(row, 2)  # the heap path (k much smaller than the row)
    assert i.numpy().tolist() == [3, 7]
    v, i = tf.math.top_k(tf.constant([1.0, np.nan, 2.0]), 1)
    assert np.isnan(v.numpy()[0]) and i.numpy().tolist() == [1]


def test_sort_and_argsort_are_stable_and_place_nan_last():
    x = tf.constant([2, 1, 2, 1, 0])
    assert tf.argsort(x).numpy().tolist() == [4, 1, 3, 0, 2]
    assert tf.argsort(x, direction="DESCENDING").numpy().tolist() == [0, 2, 1, 3, 4]
    s = tf.sort(tf.constant([1.0, np.nan, -1.0, 0.0])).numpy()
    assert s[:3].tolist() == [-1.0, 0.0, 1.0] and np.isnan(s[3])
    h = tf.sort(tf.constant([3.0, -1.0, 2.5], tf.bfloat16), direction="DESCENDING")
    assert h.dtype == tf.bfloat16 and h.numpy().astype(np.float32).tolist() == [3.0, 2.5, -1.0]


def test_long_rows_sort_nan_last_and_keep_signed_zero_ties_stable():
    row = np.zeros(200, np.float32)  # long rows take the radix path
    row[::2] = -0.0
    row[[5, 50, 150]] = [np.nan, 2.0, -3.0]
    order = tf.argsort(row).numpy()
    assert order[0] == 150 and order[-2:].tolist() == [50, 5]
    zeros = order[1:-2]
    assert zeros.tolist() == sorted(zeros.tolist())  # -0 and +0 tie: original order kept
    s = tf.sort(tf.constant(row, tf.float16), direction="DESCENDING").numpy()
    assert np.isnan(s[0]) and s[1] == 2 and s[-1] == -3
    ints = np.arange(300, dtype=np.int64)[::-1] - 150
    np.testing.assert_array_equal(tf.sort(ints).numpy(), np.sort(ints))


def test_range_is_exact_for_large_int64_and_keeps_float_steps():
    r = tf.range(2 ** 40, 2 ** 40 + 5, dtype=tf.int64).numpy()
    assert r.tolist() == [2 ** 40 + i for i in range(5)]
    assert tf.range(2 ** 33, 2 ** 33 + 2).dtype == tf.int64
    assert tf.range(tf.constant(3, tf.int64)).dtype == tf.int64
    assert tf.range(0.0, 1.0, 0.25).numpy().tolist() == [0.0, 0.25, 0.5, 0.75]
    assert tf.range(3, dtype=tf.float16).dtype == tf.float16


def test_linspace_ends_exactly_on_stop():
    x = tf.linspace(0.1, 0.7, 7).numpy()
    assert x[0] == np.float32(0.1) and x[-1] == np.float32(0.7)
    assert tf.linspace(2.0, 5.0, 1).numpy().tolist() == [2.0]
    t = tf.linspace(tf.constant([0.0, 1.0]), tf.constant([0.3, 2.7]), 4, axis=-1).numpy()
    assert t[:, -1].tolist() == np.float32([0.3, 2.7]).tolist()


def test_where_one_argument_treats_minus_zero_as_false_and_nan_as_true():
    x = tf.constant([0.0, -0.0, np.nan, 1.0])
    assert tf.where(x).numpy().tolist() == [[2], [3]]
    assert tf.where(tf.constant([0, 3], tf.float16)).numpy().tolist() == [[1]]
    assert tf.where(tf.constant(True)).shape == (1, 0)


def test_one_hot_out_of_range_rows_are_off_and_custom_values():
    out = tf.one_hot([1, 5, -1], 3, on_value=7, off_value=-2)
    assert out.dtype == tf.int32
    assert out.numpy().tolist() == [[-2, 7, -2], [-2, -2, -2], [-2, -2, -2]]
    b = tf.one_hot([0], 2, dtype=tf.bool)
    assert b.numpy().tolist() == [[True, False]]


def test_unsorted_segment_sum_drops_negative_ids_and_half_sums_in_float32():
    assert tf.math.unsorted_segment_sum(tf.constant([1, 2, 3]), [0, -1, 0], 2).numpy().tolist() == [4, 0]
    ones = tf.ones([3000], tf.float16)
    got = tf.math.unsorted_segment_sum(ones, tf.zeros([3000], tf.int32), 1)
    assert got.dtype == tf.float16 and float(got.numpy()[0]) == 3000.0  # float16 steps are 2 above 2048
    c = tf.cumsum(tf.fill([3000], 0.1), axis=0)
    assert abs(float(c[-1]) - 300.0) < 0.1


def test_shape_size_rank_types():
    x = tf.zeros([2, 0, 3])
    assert tf.shape(x).numpy().tolist() == [2, 0, 3] and tf.shape(x).dtype == tf.int32
    assert tf.shape(x, out_type=tf.int64).dtype == tf.int64
    assert int(tf.size(x)) == 0 and int(tf.rank(x)) == 3
    assert tf.shape(tf.Variable([1.0, 2.0])).numpy().tolist() == [2]


def test_eye_batched_and_typed():
    e = tf.eye(2, 3, batch_shape=[2], dtype=tf.bool)
    assert e.shape == (2, 2, 3) and e.dtype == tf.bool
    assert e.numpy()[1].tolist() == [[True, False, False], [False, True, False]]


def test_getitem_advanced_follows_numpy(rng):
    a = rng.normal(size=(3, 4, 5)).astype(np.float32)
    t = tf.constant(a)
    for key in [np.s_[[2, -1]], np.s_[:, [0, 3], 1:], np.s_[[0, 2], :, [4, 0]], np.s_[1, [0, 1], [2, 3]],
                np.s_[..., [1]], np.s_[:, None, [1, 2]]]:
        np.testing.assert_array_equal(t[key].numpy(), a[key], err_msg=str(key))
    m = a > 0
    np.testing.assert_array_equal(t[m].numpy(), a[m])
    np.testing.assert_array_equal(t[tf.constant(m[:, 0, 0])].numpy(), a[m[:, 0, 0]])
    np.testing.assert_array_equal(t[t > 1.0].numpy(), a[a > 1.0])
    np.testing.assert_array_equal(t[tf.constant([2, 0], tf.int64)].numpy(), a[[2, 0]])
    np.testing.assert_array_equal(t[tf.constant([-1, 0])].numpy(), a[[-1, 0]])
    assert t[[]].shape == (0, 4, 5)


def test_ops_accept_variables_lists_and_device_scopes():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.device("cpu:0"):
        assert tf.concat([v, [[5.0, 6.0]]], 0).numpy().tolist() == [[1, 2], [3, 4], [5, 6]]
        assert tf.where([True, False], v[0], v[1]).numpy().tolist() == [1.0, 4.0]
        assert tf.reverse(v, [0]).device == "cpu:0"
    assert [r.numpy().tolist() for r in tf.constant([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]


def test_bool_and_half_move_through_every_shape_op():
    for dt in (tf.bool, tf.float16, tf.bfloat16, tf.int8):
        x = tf.cast(tf.reshape(tf.range(6), [2, 3]) % 2, dt)
        a = x.numpy()
        np.testing.assert_array_equal(tf.tile(x, [2, 1]).numpy(), np.tile(a, [2, 1]))
        np.testing.assert_array_equal(tf.pad(x, [[1, 0], [0, 1]], "SYMMETRIC").numpy(),
                                      np.pad(a, [[1, 0], [0, 1]], "symmetric"))
        np.testing.assert_array_equal(tf.gather_nd(x, [[1, 2]]).numpy(), a[[1], [2]])
        np.testing.assert_array_equal(tf.tensor_scatter_nd_update(x, [[0, 0]], x[1:, 1]).numpy()[0, 0], a[1, 1])


def test_docstring_names_every_public_op():
    from tapeflow.core.ops import array_ops

    for name in array_ops.__all__:
        fn = getattr(array_ops, name)
        doc = fn.__doc__ or ""
        assert doc.strip() and ">>>" in doc, f"{name} lacks a docstring example"
        assert re.match(r"\S", doc), name
