"""Specs of core's shape ops (``tapeflow.core.ops.array_ops``) against NumPy.

Shape ops move bytes, so most run over every dtype (float16, bfloat16 and bool
included) and compare exactly; the ones that add or multiply (cumsum, cumprod,
segment sums, scatter-adds) run over the numeric dtypes with tolerances.
Samplers cover size-0 axes, negative axes and every mode of each op.
"""
from __future__ import annotations

import numpy as np
from opspec import ALL, FLOATS, HALF, INTS, NUMERIC, Spec, uniform

EVERY = ALL + HALF          # shape ops: every dtype
NUM_H = NUMERIC + HALF      # arithmetic ops


def _u(rng, shape, dtype, lo=-3.0, hi=3.0):
    return uniform(rng, shape, dtype, lo, hi)


def _distinct(rng, shape, dtype):
    """Values without ties (sorting gradients are only defined there); small ints may still tie."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        return _u(rng, shape, dtype)
    vals = (rng.permutation(n) - n // 2).astype(np.float64) * 0.25 + rng.uniform(-0.05, 0.05, n)
    return np.asarray(vals.reshape(shape)).astype(_u(rng, (), dtype).dtype)


# ---- creation ------------------------------------------------------------------------------------

def _fill_sample(rng, dtype):
    v = _u(rng, (), dtype)
    return [(([2, 3], v.item() if dtype not in HALF else float(v)), {"dtype": dtype}), (([0, 4], v.item()), {"dtype": dtype}),
            (([], v.item()), {"dtype": dtype}), (([5], v.item()), {"dtype": dtype})]


def _ref_fill(dims, value, dtype):
    return np.full(dims, value, dtype=_np_dtype(dtype))


def _np_dtype(name):
    import ml_dtypes

    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _shape_sample(rng, dtype):
    return [(([2, 3],), {"dtype": dtype}), (([0],), {"dtype": dtype}), (([],), {"dtype": dtype}),
            (([1, 0, 2],), {"dtype": dtype})]


def _like_sample(rng, dtype):
    return [((_u(rng, s, dtype),), {}) for s in [(2, 3), (0,), (), (1, 4, 1)]]


def _eye_sample(rng, dtype):
    return [((3,), {"dtype": dtype}), ((2,), {"num_columns": 4, "dtype": dtype}),
            ((4,), {"num_columns": 2, "batch_shape": [2], "dtype": dtype}), ((0,), {"dtype": dtype}),
            ((2,), {"batch_shape": [0, 3], "dtype": dtype})]


def _ref_eye(num_rows, num_columns=None, batch_shape=(), dtype="float32"):
    m = np.eye(num_rows, num_columns, dtype=_np_dtype(dtype))
    return np.broadcast_to(m, tuple(batch_shape) + m.shape).copy()


def _range_sample(rng, dtype):
    if dtype in ("float32", "float64"):
        return [((0.5, 3.0, 0.25), {"dtype": dtype}), ((2.0, -1.0, -0.5), {"dtype": dtype}),
                ((1.0, 1.0, 1.0), {"dtype": dtype}), ((4.0,), {"dtype": dtype})]
    lo = 0 if dtype == "uint8" else -5
    return [((lo, 9, 2), {"dtype": dtype}), ((9, lo, -3), {"dtype": dtype}), ((7,), {"dtype": dtype}),
            ((3, 3), {"dtype": dtype}), ((0,), {"dtype": dtype})]


def _ref_range(start, limit=None, delta=1, dtype="int32"):
    if limit is None:
        start, limit = 0, start
    return np.arange(start, limit, delta, dtype=np.float64).astype(dtype)


def _linspace_sample(rng, dtype):
    cases = []
    for shape, axis, num in [((), 0, 5), ((3,), 0, 4), ((3,), 1, 4), ((2, 2), -1, 3), ((2,), 0, 1), ((0,), 1, 3),
                             ((2,), 0, 0)]:
        cases.append(((_u(rng, shape, dtype), _u(rng, shape, dtype) + 1, num), {"axis": axis}))
    return cases


def _ref_linspace(start, stop, num, axis=0):
    out = np.linspace(start.astype(np.float64), stop.astype(np.float64), num, axis=axis)
    return out.astype(start.dtype)


def _linspace_plain_sample(rng, dtype):
    return [((0.0, 1.0, 5), {}), ((-2.5, 3.5, 7), {}), ((1.0, 1.0, 1), {}), ((0.0, 1.0, 0), {}), ((0, 10, 5), {})]


def _ref_linspace_plain(start, stop, num):
    dt = np.float32 if isinstance(start, float) else np.float64
    return np.linspace(start, stop, num).astype(dt)


def _meshgrid_sample(rng, dtype):
    return [((_u(rng, (2,), dtype), _u(rng, (3,), dtype)), {}),
            ((_u(rng, (2,), dtype), _u(rng, (3,), dtype), _u(rng, (4,), dtype)), {"indexing": "ij"}),
            ((_u(rng, (3,), dtype), _u(rng, (0,), dtype), _u(rng, (2,), dtype)), {"indexing": "xy"}),
            ((_u(rng, (4,), dtype),), {})]


def _ref_meshgrid(*args, indexing="xy"):
    return [a.copy() for a in np.meshgrid(*args, indexing=indexing)]


def _meta_sample(rng, dtype):
    return [((_u(rng, s, dtype),), {}) for s in [(2, 3), (0, 4), (), (1, 2, 3, 4)]]


# ---- views, transpose, broadcast, tile, reverse --------------------------------------------------

def _reshape_sample(rng, dtype):
    return [((_u(rng, (2, 3, 4), dtype), [6, -1]), {}), ((_u(rng, (6,), dtype), [2, 3]), {}),
            ((_u(rng, (), dtype), [1, 1]), {}), ((_u(rng, (0, 3), dtype), [3, 0]), {}),
            ((_u(rng, (1, 1), dtype), []), {})]


def _squeeze_sample(rng, dtype):
    return [((_u(rng, (1, 3, 1), dtype),), {}), ((_u(rng, (1, 3, 1), dtype),), {"axis": 0}),
            ((_u(rng, (1, 3, 1), dtype),), {"axis": [-1, 0]}), ((_u(rng, (0, 1), dtype),), {"axis": 1}),
            ((_u(rng, (2, 3), dtype),), {})]


def _expand_sample(rng, dtype):
    return [((_u(rng, (2, 3), dtype), a), {}) for a in (0, 1, 2, -1, -3)] + [((_u(rng, (), dtype), 0), {}),
                                                                          ((_u(rng, (0,), dtype), 1), {})]


def _transpose_sample(rng, dtype):
    return [((_u(rng, (2, 3), dtype),), {}), ((_u(rng, (2, 3, 4), dtype),), {"perm": [1, 2, 0]}),
            ((_u(rng, (2, 1, 3, 2), dtype),), {"perm": [3, 0, 2, 1]}), ((_u(rng, (0, 3), dtype),), {}),
            ((_u(rng, (), dtype),), {}), ((_u(rng, (3, 4), dtype),), {"perm": [0, 1]})]


def _ref_transpose(a, perm=None):
    return np.transpose(a, perm)


def _broadcast_sample(rng, dtype):
    return [((_u(rng, (3,), dtype), [2, 3]), {}), ((_u(rng, (3, 1), dtype), [2, 3, 4]), {}),
            ((_u(rng, (), dtype), [2, 2]), {}), ((_u(rng, (1,), dtype), [0]), {}),
            ((_u(rng, (2, 3), dtype), [2, 3]), {}), ((_u(rng, (1, 3, 1), dtype), [4, 3, 2]), {})]


def _ref_broadcast(x, shape):
    return np.broadcast_to(x, shape).copy()


def _tile_sample(rng, dtype):
    return [((_u(rng, (2, 3), dtype), [2, 1]), {}), ((_u(rng, (2, 3), dtype), [1, 3]), {}),
            ((_u(rng, (1, 2, 3), dtype), [2, 2, 2]), {}), ((_u(rng, (2,), dtype), [0]), {}),
            ((_u(rng, (0, 2), dtype), [3, 2]), {}), ((_u(rng, (), dtype), []), {}),
            ((_u(rng, (3, 1), dtype), [1, 4]), {})]


def _reverse_sample(rng, dtype):
    return [((_u(rng, (2, 3), dtype), [1]), {}), ((_u(rng, (2, 3, 4), dtype), [0, 2]), {}),
            ((_u(rng, (5,), dtype), [-1]), {}), ((_u(rng, (0, 3), dtype), [0, 1]), {}),
            ((_u(rng, (2, 3), dtype), []), {})]


def _ref_reverse(x, axis):
    return np.flip(x, tuple(axis)) if len(axis) else x.copy()


# ---- joining and splitting -------------------------------------------------------------------------

def _concat_sample(rng, dtype):
    return [((_u(rng, (2, 3), dtype), _u(rng, (4, 3), dtype)), {"axis": 0}),
            ((_u(rng, (2, 3), dtype), _u(rng, (2, 1), dtype), _u(rng, (2, 0), dtype)), {"axis": -1}),
            ((_u(rng, (2, 3, 4), dtype), _u(rng, (2, 2, 4), dtype)), {"axis": 1}),
            ((_u(rng, (0, 3), dtype), _u(rng, (0, 3), dtype)), {"axis": 0}),
            ((_u(rng, (3,), dtype),), {"axis": 0}),
            ((_u(rng, (40, 50), dtype), _u(rng, (40, 30), dtype)), {"axis": 1})]


def _run_concat(tf, *xs, axis):
    return tf.concat(list(xs), axis)


def _ref_concat(*xs, axis):
    return np.concatenate(xs, axis)


def _stack_sample(rng, dtype):
    return [((_u(rng, (2, 3), dtype), _u(rng, (2, 3), dtype)), {"axis": 0}),
            ((_u(rng, (2, 3), dtype), _u(rng, (2, 3), dtype), _u(rng, (2, 3), dtype)), {"axis": -1}),
            ((_u(rng, (), dtype), _u(rng, (), dtype)), {"axis": 0}),
            ((_u(rng, (0, 2), dtype),), {"axis": 1})]


def _run_stack(tf, *xs, axis):
    return tf.stack(list(xs), axis)


def _ref_stack(*xs, axis):
    return np.stack(xs, axis)


def _split_sample(rng, dtype):
    return [((_u(rng, (6, 2), dtype), 3), {}), ((_u(rng, (2, 5), dtype), [1, -1, 2]), {"axis": 1}),
            ((_u(rng, (2, 3, 4), dtype), [0, 4]), {"axis": -1}), ((_u(rng, (0, 4), dtype), 2), {"axis": 1}),
            ((_u(rng, (4,), dtype), 1), {})]


def _ref_split(x, num_or_size_splits, axis=0):
    n = x.shape[axis]
    if isinstance(num_or_size_splits, int):
        sizes = [n // num_or_size_splits] * num_or_size_splits
    else:
        sizes = list(num_or_size_splits)
        if -1 in sizes:
            sizes[sizes.index(-1)] = n - sum(s for s in sizes if s != -1)
    return [a.copy() for a in np.split(x, np.cumsum(sizes)[:-1], axis)]


def _unstack_sample(rng, dtype):
    return [((_u(rng, (3, 2), dtype),), {}), ((_u(rng, (2, 3, 4), dtype),), {"axis": 1}),
            ((_u(rng, (2, 3), dtype),), {"axis": -1}), ((_u(rng, (0, 3), dtype),), {}),
            ((_u(rng, (3, 0), dtype),), {"axis": 0}), ((_u(rng, (4,), dtype),), {})]


def _ref_unstack(x, axis=0):
    return [np.take(x, i, axis) for i in range(x.shape[axis])]


# ---- padding and slicing ---------------------------------------------------------------------------

def _pad_sample(rng, dtype):
    cv = _u(rng, (), dtype).item()
    return [((_u(rng, (2, 3), dtype), [[1, 2], [0, 1]]), {}),
            ((_u(rng, (2, 3), dtype), [[1, 0], [2, 2]]), {"constant_values": cv}),
            ((_u(rng, (3, 4), dtype), [[2, 1], [3, 3]]), {"mode": "REFLECT"}),
            ((_u(rng, (3, 4), dtype), [[3, 0], [2, 4]]), {"mode": "SYMMETRIC"}),
            ((_u(rng, (2, 3, 4), dtype), [[1, 1], [0, 2], [3, 1]]), {"mode": "reflect"}),
            ((_u(rng, (0, 2), dtype), [[1, 1], [1, 0]]), {}),
            ((_u(rng, (), dtype), []), {}),
            ((_u(rng, (4,), dtype), [[0, 0]]), {"mode": "SYMMETRIC"})]


def _ref_pad(x, paddings, mode="CONSTANT", constant_values=0):
    mode = mode.lower()
    if x.ndim == 0:
        return x.copy()
    if mode == "constant":
        return np.pad(x, paddings, mode, constant_values=np.asarray(constant_values).astype(x.dtype))
    return np.pad(x, paddings, mode)


def _slice_sample(rng, dtype):
    return [((_u(rng, (3, 4), dtype), [1, 1], [2, -1]), {}), ((_u(rng, (2, 3, 4), dtype), [0, 2, 1], [2, 1, 2]), {}),
            ((_u(rng, (5,), dtype), [5], [0]), {}), ((_u(rng, (0, 3), dtype), [0, 1], [-1, 2]), {}),
            ((_u(rng, (3, 4), dtype), [0, 0], [-1, -1]), {})]


def _ref_slice(x, begin, size):
    return x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))].copy()


# strided_slice: (shape, numpy key, TensorFlow arguments)
_STRIDED = [
    ((10,), np.s_[1:8:3], {"begin": [1], "end": [8], "strides": [3]}),
    ((10,), np.s_[::-2], {"begin": [0], "end": [0], "strides": [-2], "begin_mask": 1, "end_mask": 1}),
    ((3, 4), np.s_[1, :], {"begin": [1, 0], "end": [2, 0], "strides": [1, 1], "end_mask": 2, "begin_mask": 2,
                           "shrink_axis_mask": 1}),
    ((3, 4), np.s_[:, None, 3:0:-1], {"begin": [0, 0, 3], "end": [0, 0, 0], "strides": [1, 1, -1],
                                      "begin_mask": 1, "end_mask": 1, "new_axis_mask": 2}),
    ((2, 3, 4), np.s_[..., 1], {"begin": [0, 1], "end": [0, 2], "strides": [1, 1], "ellipsis_mask": 1,
                                "shrink_axis_mask": 2}),
    ((2, 3, 4), np.s_[-1, ..., ::2], {"begin": [-1, 0, 0], "end": [0, 0, 0], "strides": [1, 1, 2],
                                      "ellipsis_mask": 2, "shrink_axis_mask": 1, "begin_mask": 4, "end_mask": 4}),
    ((4, 5), np.s_[-3:-1, 10:], {"begin": [-3, 10], "end": [-1, 0], "strides": [1, 1], "end_mask": 2}),
    ((0, 3), np.s_[:, 1:], {"begin": [0, 1], "end": [0, 0], "strides": [1, 1], "begin_mask": 1, "end_mask": 3}),
]


def _strided_sample(rng, dtype):
    return [((_u(rng, shape, dtype), key, tfargs), {}) for shape, key, tfargs in _STRIDED]


def _run_strided(tf, x, key, tfargs):
    return tf.strided_slice(tf.constant(x), **tfargs)


def _ref_strided(x, key, tfargs):
    return x[key].copy()


def _strided_grad_sample(rng, dtype):
    cases = []
    for shape, key, tfargs in _STRIDED:
        dy = _u(rng, np.zeros(shape)[key].shape, dtype)
        cases.append(((shape, dy, key, tfargs), {}))
    return cases


def _run_strided_grad(tf, shape, dy, key, tfargs):
    a = dict(tfargs)
    return tf.strided_slice_grad(list(shape), a.pop("begin"), a.pop("end"), a.pop("strides"), tf.constant(dy), **a)


def _ref_strided_grad(shape, dy, key, tfargs):
    out = np.zeros(shape, dy.dtype)
    out[key] = dy
    return out


# t[key]: basic keys record as strided_slice, integer arrays as gather, masks as boolean_mask, several as gather_nd
_GETITEM_BASIC = [((2, 3, 4), np.s_[1]), ((2, 3, 4), np.s_[:, ::-1, 1:3]), ((2, 3, 4), np.s_[..., None, -1]),
                  ((5,), np.s_[::2]), ((3, 4), np.s_[10:]), ((0, 3), np.s_[:, 2]), ((3, 4), np.s_[...]),
                  ((3, 4), np.s_[-1, -1])]
_GETITEM_ADVANCED = [((4, 3), lambda r: np.s_[[2, 0, -1]]), ((2, 5), lambda r: np.s_[:, [[1, 4], [0, 0]]]),
                     ((3, 4), lambda r: np.s_[r.random((3, 4)) < 0.5]), ((3, 4), lambda r: np.s_[r.random(3) < 0.5, 1:]),
                     ((3, 4, 2), lambda r: np.s_[[0, 2], :, [1, 0]]), ((3, 4, 2), lambda r: np.s_[1:, [0, 3], [1, 1]]),
                     ((3, 4), lambda r: np.s_[[], :]), ((3, 4, 2), lambda r: np.s_[:, 0, [1, 0]]),
                     ((3, 4), lambda r: np.s_[np.array([1, 2])])]


class _Key:
    """An index key passed through the harness untouched (it prints, and np.shape sees a scalar)."""

    def __init__(self, key):
        self.key = key

    def __repr__(self):
        return f"key={self.key!r}"


def _getitem_sample(rng, dtype):
    return [((_u(rng, shape, dtype), _Key(key)), {}) for shape, key in _GETITEM_BASIC]


def _getitem_adv_sample(rng, dtype):
    return [((_u(rng, shape, dtype), _Key(make(rng))), {}) for shape, make in _GETITEM_ADVANCED]


def _run_getitem(tf, x, key):
    return tf.convert_to_tensor(x)[key.key]


def _ref_getitem(x, key):
    key = key.key
    if isinstance(key, list):
        key = np.asarray(key, dtype=np.int64)
    return np.asarray(x[key]).copy()


# ---- gather and scatter -------------------------------------------------------------------------

def _np_gather(p, idx, axis, bd):
    if bd == 0:
        return np.take(p, idx, axis=axis)
    return np.stack([_np_gather(p[b], idx[b], axis - 1, bd - 1) for b in range(p.shape[0])]) if p.shape[0] else \
        np.zeros(p.shape[:axis] + idx.shape[bd:] + p.shape[axis + 1:], p.dtype)


def _gather_sample(rng, dtype):
    p = lambda s: _u(rng, s, dtype)
    i = lambda hi, s, dt="int32": rng.integers(0, hi, s).astype(dt)
    return [((p((5, 3)), i(5, (4,))), {}), ((p((5, 3)), i(3, (2, 2), "int64")), {"axis": 1}),
            ((p((4,)), np.int32(2)), {}), ((p((2, 3, 4)), i(4, (2, 5))), {"axis": 2, "batch_dims": 1}),
            ((p((2, 3, 4)), i(3, (2, 3, 2))), {"axis": 1, "batch_dims": -2}),
            ((p((0, 3)), i(1, (0,))), {}), ((p((3, 0)), i(3, (2,))), {}), ((p((3, 2)), i(2, (3, 0))), {"axis": 1}),
            ((p((300, 40)), i(300, (500,))), {})]


def _ref_gather(params, indices, axis=None, batch_dims=0):
    idx = np.asarray(indices)
    bd = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    axis = bd if axis is None else axis % params.ndim
    return _np_gather(params, idx, axis, bd)


def _gather_nd_sample(rng, dtype):
    p = lambda s: _u(rng, s, dtype)

    def idx(shape, dims, dt="int32"):
        return np.stack([rng.integers(0, d, shape) for d in dims], -1).astype(dt).reshape(shape + (len(dims),))
    return [((p((3, 4)), idx((5,), (3, 4))), {}), ((p((3, 4, 2)), idx((2, 2), (3,), "int64")), {}),
            ((p((2, 3, 4)), idx((2, 5), (3,))), {"batch_dims": 1}), ((p((3, 4)), idx((0,), (3, 4))), {}),
            ((p((3, 4)), np.zeros((2, 0), np.int32)), {}), ((p((2, 3)), idx((), (2, 3))), {})]


def _ref_gather_nd(params, indices, batch_dims=0):
    if batch_dims:
        return np.stack([_ref_gather_nd(params[b], indices[b], batch_dims - 1) for b in range(params.shape[0])])
    k = indices.shape[-1]
    if k == 0:
        return np.broadcast_to(params, indices.shape[:-1] + params.shape).copy()
    flat = indices.reshape(-1, k)
    rows = [params[tuple(t)] for t in flat]
    out_shape = indices.shape[:-1] + params.shape[k:]
    return np.asarray(rows, params.dtype).reshape(out_shape) if rows else np.zeros(out_shape, params.dtype)


def _scatter_nd_sample(rng, dtype):
    u = lambda s: _u(rng, s, dtype)
    return [((np.array([[1], [3], [1]], np.int32), u((3,)), [5]), {}),
            ((np.array([[0, 1], [2, 0], [0, 1]], np.int64), u((3, 2)), [3, 2, 2]), {}),
            ((np.zeros((0, 1), np.int32), u((0, 4)), [2, 4]), {}),
            ((rng.integers(0, 20, (50, 1)).astype(np.int32), u((50, 300)), [20, 300]), {})]


def _ref_scatter_nd(indices, updates, shape):
    out = np.zeros(shape, np.float64)
    k = indices.shape[-1]
    np.add.at(out, tuple(indices.reshape(-1, k).T), updates.reshape((-1,) + tuple(shape[k:])).astype(np.float64))
    return out.astype(updates.dtype)


def _tensor_scatter_sample(rng, dtype, unique):
    t = lambda s: _u(rng, s, dtype)
    dup = np.array([[1], [0]] if unique else [[1], [0], [1]], np.int32)
    return [((t((4, 3)), dup, t((len(dup), 3))), {}),
            ((t((3, 4)), np.array([[2, 3], [0, 0]], np.int64), t((2,))), {}),
            ((t((2, 2)), np.zeros((0, 2), np.int32), t((0,))), {}),
            ((t((0, 3)), np.zeros((0, 1), np.int32), t((0, 3))), {})]


def _ref_tensor_scatter_update(tensor, indices, updates):
    out = tensor.copy()
    k = indices.shape[-1]
    for t, u in zip(indices.reshape(-1, k), updates.reshape((-1,) + tensor.shape[k:])):
        out[tuple(t)] = u
    return out


def _ref_tensor_scatter_add(tensor, indices, updates):
    out = tensor.astype(np.float64)
    k = indices.shape[-1]
    np.add.at(out, tuple(indices.reshape(-1, k).T), updates.reshape((-1,) + tensor.shape[k:]).astype(np.float64))
    return out.astype(tensor.dtype)


def _segment_sample(rng, dtype):
    d = lambda s: _u(rng, s, dtype)
    return [((d((5, 3)), np.array([0, 2, 0, -1, 1], np.int32), 3), {}),
            ((d((2, 3, 2)), np.array([[1, 1, 0], [3, 0, 1]], np.int64), 4), {}),
            ((d((0, 2)), np.zeros((0,), np.int32), 2), {}),
            ((d((4,)), np.array([1, 1, 1, 1], np.int32), 0 + 2), {}),
            ((d((3,)), np.array([0, 1, 2], np.int32), 0 + 5), {})]


def _ref_unsorted_segment_sum(data, ids, num):
    out = np.zeros((num,) + data.shape[ids.ndim:], np.float64)
    keep = ids >= 0
    np.add.at(out, ids[keep], data[keep].astype(np.float64))
    return out.astype(data.dtype)


def _sorted_segment_sample(rng, dtype):
    d = lambda s: _u(rng, s, dtype)
    return [((d((5, 3)), np.array([0, 0, 1, 3, 3], np.int32)), {}), ((d((4,)), np.array([2, 2, 2, 2], np.int64)), {}),
            ((d((0, 2)), np.zeros((0,), np.int32)), {}), ((d((3,)), np.array([0, 1, 2], np.int32)), {})]


def _ref_segment_sum(data, ids):
    return _ref_unsorted_segment_sum(data, ids, int(ids[-1]) + 1 if ids.size else 0)


# ---- one_hot, where, select, boolean_mask --------------------------------------------------------------

def _one_hot_sample(rng, dtype):
    on, off = _u(rng, (), dtype).item(), _u(rng, (), dtype).item()
    idx = rng.integers(-1, 5, (3, 2)).astype(np.int32)
    return [((idx, 4), {"dtype": dtype}), ((idx, 4), {"on_value": on, "off_value": off, "axis": 0, "dtype": dtype}),
            ((idx.astype(np.int64), 3), {"axis": 1, "dtype": dtype}), ((np.int32(2), 3), {"dtype": dtype}),
            ((np.zeros((0,), np.int32), 2), {"dtype": dtype}), ((idx, 0), {"dtype": dtype}),
            ((idx.astype(np.uint8).clip(0, 4), 5), {"dtype": dtype})]


def _ref_one_hot(indices, depth, on_value=1, off_value=0, axis=-1, dtype="float32"):
    idx = np.asarray(indices).astype(np.int64)
    hot = idx[..., None] == np.arange(depth)
    out = np.where(hot, on_value, off_value).astype(_np_dtype(dtype))
    return np.moveaxis(out, -1, axis if axis != -1 else out.ndim - 1)


def _where_sample(rng, dtype):
    return [((_u(rng, s, dtype),), {}) for s in [(3, 4), (5,), (), (0, 3), (2, 3, 4), (300, 200)]] + \
        [((np.zeros((4, 2), _u(rng, (), dtype).dtype),), {})]


def _ref_where(c):
    return np.argwhere(c).astype(np.int64) if np.ndim(c) else np.zeros((int(bool(c)), 0), np.int64)


def _select_sample(rng, dtype):
    cases = []
    for cs, xs, ys in [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), ()), ((4,), (3, 4), (3, 1)), ((), (2,), (2,)),
                       ((0, 2), (2,), (1, 2)), ((2, 1, 3), (4, 1), (1, 3)), ((200, 300), (200, 300), (300,))]:
        cases.append(((rng.random(cs) < 0.5, _u(rng, xs, dtype), _u(rng, ys, dtype)), {}))
    return cases


def _run_select(tf, c, x, y):
    return tf.where(tf.constant(c), tf.constant(x), tf.constant(y))


def _boolean_mask_sample(rng, dtype):
    x = lambda s: _u(rng, s, dtype)
    m = lambda s: rng.random(s) < 0.5
    return [((x((4, 3)), m(4)), {}), ((x((2, 3, 4)), m((3, 4))), {"axis": 1}), ((x((2, 3)), m((2, 3))), {}),
            ((x((0, 3)), m(0)), {}), ((x((3, 2)), np.zeros(3, bool)), {}), ((x((2, 5)), m(5)), {"axis": -1})]


def _ref_boolean_mask(x, mask, axis=0):
    a = axis % x.ndim if axis < 0 else axis
    flat = x.reshape(x.shape[:a] + (-1,) + x.shape[a + mask.ndim:])
    return np.take(flat, np.flatnonzero(mask), axis=a)


# ---- scans -------------------------------------------------------------------------------------------

def _scan_sample(rng, dtype, lo=-3.0, hi=3.0):
    x = lambda s: _u(rng, s, dtype, lo, hi)
    return [((x((5,)),), {}), ((x((3, 4)),), {"axis": 1, "exclusive": True}), ((x((2, 3, 4)),), {"axis": -2, "reverse": True}),
            ((x((3, 4)),), {"axis": 0, "exclusive": True, "reverse": True}), ((x((0, 3)),), {"axis": 1}),
            ((x((3, 0)),), {"axis": 1})]


def _ref_scan(fn, identity):
    def ref(x, axis=0, exclusive=False, reverse=False):
        a = np.asarray(x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.itemsize == 2 and x.dtype.kind == "V"
                       else x)
        if a.dtype.kind not in "fiu":
            a = a.astype(np.float64)
        if reverse:
            a = np.flip(a, axis)
        out = fn(a, axis=axis, dtype=a.dtype) if a.size else a.copy()
        if exclusive and a.size:
            out = np.concatenate([np.full_like(np.take(out, [0], axis), identity), np.delete(out, -1, axis)], axis)
        if reverse:
            out = np.flip(out, axis)
        return np.asarray(out).astype(x.dtype)
    return ref


# ---- sorting ------------------------------------------------------------------------------------------

def _sort_sample(rng, dtype):
    x = lambda s: _distinct(rng, s, dtype)
    return [((x((6,)),), {}), ((x((3, 5)),), {"direction": "DESCENDING"}), ((x((3, 4)),), {"axis": 0}),
            ((x((2, 3, 4)),), {"axis": 1, "direction": "DESCENDING"}), ((x((0, 3)),), {}), ((x((3, 0)),), {"axis": 0}),
            ((x((4, 300)),), {"direction": "DESCENDING"}), ((x((100, 40)),), {})]


def _np_argsort(x, axis=-1, direction="ASCENDING"):
    if direction == "ASCENDING":
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - flipped, axis)


def _ref_sort(values, axis=-1, direction="ASCENDING"):
    return np.take_along_axis(values, _np_argsort(values, axis, direction), axis)


def _argsort_sample(rng, dtype):
    x = lambda s: _u(rng, s, dtype)
    return [((x((8,)),), {}), ((x((3, 5)),), {"direction": "DESCENDING"}), ((x((3, 4)),), {"axis": 0}),
            ((x((0, 2)),), {}), ((x((2, 200)),), {"direction": "DESCENDING"})]


def _ref_argsort(values, axis=-1, direction="ASCENDING", stable=False):
    return _np_argsort(values, axis, direction).astype(np.int32)


def _top_k_sample(rng, dtype):
    x = lambda s: _distinct(rng, s, dtype)
    t = lambda s: _u(rng, s, dtype)
    return [((x((6,)),), {"k": 2}), ((x((3, 5)),), {"k": 5}), ((t((2, 3, 7)),), {"k": 3}), ((x((4,)),), {"k": 0}),
            ((x((0, 3)),), {"k": 2}), ((x((3, 400)),), {"k": 5}), ((t((2, 50)),), {"k": 40}),
            ((t((2, 100)),), {"k": 30})]


def _ref_top_k(input, k=1, sorted=True):
    order = _np_argsort(input, -1, "DESCENDING")[..., :k]
    return [np.take_along_axis(input, order, -1), order.astype(np.int32)]


def _run_top_k(tf, x, k=1, sorted=True):
    return list(tf.math.top_k(tf.constant(x), k=k, sorted=sorted))


SPECS = [
    # creation
    Spec("fill", _ref_fill, _fill_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("zeros", lambda shape, dtype: np.zeros(shape, _np_dtype(dtype)), _shape_sample, dtypes=EVERY, exact=True,
         grad=False),
    Spec("ones", lambda shape, dtype: np.ones(shape, _np_dtype(dtype)), _shape_sample, dtypes=EVERY, exact=True,
         grad=False),
    Spec("zeros_like", np.zeros_like, _like_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("ones_like", np.ones_like, _like_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("eye", _ref_eye, _eye_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("range", _ref_range, _range_sample, dtypes=NUMERIC, grad=False),
    Spec("linspace", _ref_linspace, _linspace_sample, dtypes=FLOATS + HALF),
    Spec("linspace", _ref_linspace_plain, _linspace_plain_sample, dtypes=("float32",), grad=False, name="scalars"),
    Spec("meshgrid", _ref_meshgrid, _meshgrid_sample, dtypes=EVERY, exact=True),
    Spec("shape", lambda x: np.array(x.shape, np.int32), _meta_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("size", lambda x: np.int32(x.size), _meta_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("rank", lambda x: np.int32(x.ndim), _meta_sample, dtypes=EVERY, exact=True, grad=False),
    # views, transpose, broadcast, tile, reverse
    Spec("reshape", lambda x, shape: x.reshape(shape), _reshape_sample, dtypes=EVERY, exact=True),
    Spec("identity", lambda x: x.copy(), _like_sample, dtypes=EVERY, exact=True),
    Spec("squeeze", lambda x, axis=None: np.squeeze(x, tuple(axis) if isinstance(axis, list) else axis),
         _squeeze_sample, dtypes=EVERY, exact=True),
    Spec("expand_dims", np.expand_dims, _expand_sample, dtypes=EVERY, exact=True),
    Spec("transpose", _ref_transpose, _transpose_sample, dtypes=EVERY, exact=True),
    Spec("broadcast_to", _ref_broadcast, _broadcast_sample, dtypes=EVERY, exact=True),
    Spec("tile", np.tile, _tile_sample, dtypes=EVERY, exact=True),
    Spec("reverse", _ref_reverse, _reverse_sample, dtypes=EVERY, exact=True),
    # joining and splitting
    Spec("concat", _ref_concat, _concat_sample, dtypes=EVERY, fn=_run_concat, exact=True),
    Spec("stack", _ref_stack, _stack_sample, dtypes=EVERY, fn=_run_stack, exact=True),
    Spec("split", _ref_split, _split_sample, dtypes=EVERY, exact=True),
    Spec("unstack", _ref_unstack, _unstack_sample, dtypes=EVERY, exact=True),
    # padding and slicing
    Spec("pad", _ref_pad, _pad_sample, dtypes=EVERY, exact=True),
    Spec("slice", _ref_slice, _slice_sample, dtypes=EVERY, exact=True),
    Spec("strided_slice", _ref_strided, _strided_sample, dtypes=EVERY, fn=_run_strided, exact=True,
         grad_args=(0,)),
    Spec("strided_slice_grad", _ref_strided_grad, _strided_grad_sample, dtypes=EVERY, fn=_run_strided_grad,
         exact=True, grad_args=(1,)),
    Spec("strided_slice", _ref_getitem, _getitem_sample, dtypes=EVERY, fn=_run_getitem, exact=True, grad_args=(0,),
         name="getitem"),
    Spec("gather", _ref_getitem, _getitem_adv_sample, dtypes=EVERY, fn=_run_getitem, exact=True, grad_args=(0,),
         name="getitem"),
    # gather and scatter
    Spec("gather", _ref_gather, _gather_sample, dtypes=EVERY, exact=True, second_order=True),
    Spec("gather_nd", _ref_gather_nd, _gather_nd_sample, dtypes=EVERY, exact=True, second_order=True),
    Spec("scatter_nd", _ref_scatter_nd, _scatter_nd_sample, dtypes=NUM_H, second_order=True),
    Spec("tensor_scatter_nd_update", _ref_tensor_scatter_update,
         lambda rng, dt: _tensor_scatter_sample(rng, dt, True), dtypes=EVERY, exact=True),
    Spec("tensor_scatter_nd_add", _ref_tensor_scatter_add, lambda rng, dt: _tensor_scatter_sample(rng, dt, False),
         dtypes=NUM_H),
    Spec("unsorted_segment_sum", _ref_unsorted_segment_sum, _segment_sample, dtypes=NUM_H,
         second_order=True),
    Spec("segment_sum", _ref_segment_sum, _sorted_segment_sample, dtypes=NUM_H),
    # one_hot, where, select, boolean_mask
    Spec("one_hot", _ref_one_hot, _one_hot_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("where", _ref_where, _where_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("select", np.where, _select_sample, dtypes=EVERY, fn=_run_select, exact=True, grad_args=(1, 2)),
    Spec("boolean_mask", _ref_boolean_mask, _boolean_mask_sample, dtypes=EVERY, exact=True),
    # scans
    Spec("cumsum", _ref_scan(np.cumsum, 0), _scan_sample, dtypes=NUM_H, second_order=True),
    Spec("cumprod", _ref_scan(np.cumprod, 1), lambda rng, dt: _scan_sample(rng, dt, 0.5, 2.0), dtypes=NUM_H,
         ),
    # sorting
    Spec("sort", _ref_sort, _sort_sample, dtypes=EVERY, exact=True),
    Spec("argsort", _ref_argsort, _argsort_sample, dtypes=EVERY, exact=True, grad=False),
    Spec("top_k", _ref_top_k, _top_k_sample, dtypes=NUM_H, fn=_run_top_k, exact=True),
]
