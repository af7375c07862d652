"""Specs of the everyday array names (core's ops/everyday_ops): repeat, sequence_mask, ensure_shape,
reverse_sequence, dynamic_partition, dynamic_stitch, unravel_index, shape_n, broadcast_dynamic_shape,
saturate_cast, realdiv, parallel_stack, space_to_batch_nd, batch_to_space, histogram_fixed_width_bins,
against NumPy."""
from __future__ import annotations

import numpy as np
from opspec import ALL, FLOATS, HALF, NUMERIC, Spec, uniform

EVERY = ALL + HALF


def _repeat_sample(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [((x, np.array([1, 0, 2], np.int32)), {"axis": 0}), ((x, np.array(2, np.int32)), {"axis": 1}),
            ((x, np.array(2, np.int64)), {}), ((x[:0], np.array(3, np.int32)), {"axis": 0}),
            ((uniform(rng, (2, 3, 2), dtype), np.array([2, 1, 0], np.int32)), {"axis": -2})]


def _ref_repeat(x, repeats, axis=None):
    return np.repeat(x, repeats, axis=axis)


def _mask_sample(rng, dtype):
    lens = rng.integers(0, 5, (3, 2)).astype(dtype)
    return [((lens,), {}), ((lens, 6), {}), ((lens[0], 3), {"dtype": "float32"}), ((lens[:0], 2), {})]


def _ref_mask(lengths, maxlen=None, dtype="bool"):
    m = int(lengths.max()) if maxlen is None else maxlen
    return (np.arange(m) < lengths[..., None]).astype(dtype)


def _ensure_sample(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [((x, [None, 3]), {}), ((x, [2, 3]), {}), ((x[:0], [0, None]), {}), ((uniform(rng, (), dtype), []), {})]


def _revseq_sample(rng, dtype):
    x = uniform(rng, (3, 4, 2), dtype)
    return [((x, np.array([2, 4, 0], np.int32)), {"seq_axis": 1, "batch_axis": 0}),
            ((x, np.array([1, 3], np.int64)), {"seq_axis": 1, "batch_axis": 2}),
            ((x, np.array([3, 1, 2, 0], np.int32)), {"seq_axis": 0, "batch_axis": 1})]


def _ref_revseq(x, seq_lengths, seq_axis=None, batch_axis=0):
    out = np.moveaxis(x, (batch_axis, seq_axis), (0, 1)).copy()
    for b, n in enumerate(seq_lengths):
        out[b, :n] = out[b, :n][::-1]
    return np.moveaxis(out, (0, 1), (batch_axis, seq_axis))


def _partition_sample(rng, dtype):
    x = uniform(rng, (5, 2), dtype)
    # every partition non-empty in the first case (a compiled gradient check skips no empty output)
    return [((x, rng.permutation(np.array([0, 1, 2, 0, 2], np.int32)), 3), {}),
            ((x, rng.integers(0, 2, (5, 2)).astype(np.int32), 2), {}),
            ((x[:0], np.zeros(0, np.int32), 2), {})]


def _ref_partition(data, partitions, num_partitions):
    return [data[partitions == k] for k in range(num_partitions)]


def _run_partition(tf, data, partitions, num_partitions):
    return tf.dynamic_partition(tf.constant(data), tf.constant(partitions), num_partitions)


def _stitch_sample(rng, dtype):
    a, b = uniform(rng, (2, 3), dtype), uniform(rng, (3, 3), dtype)
    return [((np.array([0, 4], np.int32), np.array([1, 2, 0], np.int32), a, b), {}),
            ((np.array([[1, 0]], np.int32), np.array([3], np.int32), a[None], b[:1]), {})]


def _ref_stitch(i0, i1, d0, d1):
    indices, data = [i0, i1], [d0, d1]
    inner = data[0].shape[indices[0].ndim:]
    n = max(int(i.max()) + 1 for i in indices if i.size)
    out = np.zeros((n,) + inner, data[0].dtype)
    for i, d in zip(indices, data):
        out[i.reshape(-1)] = d.reshape((-1,) + inner)
    return out


def _run_stitch(tf, i0, i1, d0, d1):
    return tf.dynamic_stitch([tf.constant(i0), tf.constant(i1)], [tf.constant(d0), tf.constant(d1)])


def _unravel_sample(rng, dtype):
    return [((np.array([5, 7, 0, 11], dtype), np.array([3, 4], dtype)), {}),
            ((np.array(13, dtype), np.array([2, 3, 4], dtype)), {}), ((np.zeros(0, dtype), np.array([2], dtype)), {})]


def _ref_unravel(indices, dims):
    return np.array(np.unravel_index(indices, dims), indices.dtype).reshape((len(dims),) + indices.shape)


def _run_shape_n(tf, a, b, out_type="int32"):
    return tf.shape_n([tf.constant(a), tf.constant(b)], out_type=out_type)


def _shape_n_sample(rng, dtype):
    return [((uniform(rng, (2, 3), dtype), uniform(rng, (0,), dtype)), {}),
            ((uniform(rng, (), dtype), uniform(rng, (1, 2, 1), dtype)), {"out_type": "int64"})]


def _bshape_sample(rng, dtype):
    return [((np.array([2, 1], dtype), np.array([3], dtype)), {}), ((np.array([5, 1, 3], dtype),
                                                                      np.array([4, 1], dtype)), {}),
            ((np.zeros(0, dtype), np.array([2, 0], dtype)), {})]


def _ref_bshape(x, y):
    return np.array(np.broadcast_shapes(tuple(x), tuple(y)), x.dtype)


def _sat_sample(rng, dtype):
    x = uniform(rng, (4, 3), dtype, -300.0, 300.0) if dtype != "uint8" else uniform(rng, (4, 3), dtype)
    big = np.array([1e20, -1e20, 3.7, -2.5], np.float32)
    return [((x, "uint8"), {}), ((x, "int8"), {}), ((x, "float32"), {}), ((big, "int32"), {}),
            ((big, "int16"), {}), ((np.array([70000, -70000, 5], np.int64), "int16"), {})]


def _ref_sat(value, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return value.astype(dt)
    info = np.iinfo(dt)
    lo, hi = float(info.min), float(info.max)
    if value.dtype.kind == "f":
        f = value.dtype.type
        hi = float(np.nextafter(f(hi), f(-np.inf))) if float(f(hi)) > info.max else hi
    return np.clip(value.astype(np.float64), lo, hi).astype(dt)


def _realdiv_sample(rng, dtype):
    return [((uniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype, 0.5, 3.0)), {}),
            ((uniform(rng, (), dtype), uniform(rng, (2, 1), dtype, 0.5, 3.0)), {})]


def _run_pstack(tf, a, b):
    return tf.function(lambda u, v: tf.parallel_stack([u, v]))(tf.constant(a), tf.constant(b))


def _pstack_sample(rng, dtype):
    return [((uniform(rng, (2, 3), dtype), uniform(rng, (2, 3), dtype)), {}),
            ((uniform(rng, (), dtype), uniform(rng, (), dtype)), {})]


def _s2b_sample(rng, dtype):
    return [((uniform(rng, (2, 4, 6, 3), dtype), [2, 3], [[0, 0], [0, 0]]), {}),
            ((uniform(rng, (1, 3, 5, 1), dtype), [2, 2], [[1, 0], [0, 1]]), {}),
            ((uniform(rng, (3, 5), dtype), [3], [[1, 0]]), {})]


def _ref_s2b(x, block_shape, paddings):
    m = len(block_shape)
    xp = np.pad(x, [(0, 0)] + [tuple(p) for p in paddings] + [(0, 0)] * (x.ndim - 1 - m))
    shp = [xp.shape[0]]
    for k, b in enumerate(block_shape):
        shp += [xp.shape[1 + k] // b, b]
    shp += list(xp.shape[1 + m:])
    y = xp.reshape(shp)
    perm = [2 + 2 * k for k in range(m)] + [0] + [1 + 2 * k for k in range(m)] + list(range(1 + 2 * m, y.ndim))
    y = y.transpose(perm)
    return y.reshape([xp.shape[0] * int(np.prod(block_shape))] + [xp.shape[1 + k] // b for k, b in
                                                                  enumerate(block_shape)] + list(xp.shape[1 + m:]))


def _b2s_sample(rng, dtype):
    return [((uniform(rng, (12, 2, 2, 3), dtype), [2, 3], [[0, 0], [0, 0]]), {}),
            ((uniform(rng, (4, 2, 3, 1), dtype), [2, 2], [[1, 0], [0, 1]]), {}),
            ((uniform(rng, (6, 2), dtype), [3], [[1, 2]]), {})]


def _ref_b2s(x, block_shape, crops):
    m = len(block_shape)
    nb = int(np.prod(block_shape))
    b = x.shape[0] // nb
    y = x.reshape(list(block_shape) + [b] + list(x.shape[1:]))
    perm = [m] + [q for k in range(m) for q in (m + 1 + k, k)] + list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    y = y.reshape([b] + [x.shape[1 + k] * block_shape[k] for k in range(m)] + list(x.shape[1 + m:]))
    key = (slice(None),) + tuple(slice(a, y.shape[1 + k] - c) for k, (a, c) in enumerate(crops))
    return y[key]


def _bins_sample(rng, dtype):
    v = uniform(rng, (4, 5), dtype, -4.0, 8.0)
    r = np.array([0, 5], v.dtype)
    return [((v, r), {"nbins": 5}), ((v, r), {"nbins": 1, "dtype": "int64"}), ((v.reshape(-1)[:0], r), {})]


def _ref_bins(values, value_range, nbins=100, dtype="int32"):
    v, (lo, hi) = values.astype(np.float64), value_range.astype(np.float64)
    return np.clip(np.floor((v - lo) / (hi - lo) * nbins), 0, nbins - 1).astype(dtype)


SPECS = [
    Spec("repeat", _ref_repeat, _repeat_sample, dtypes=EVERY, exact=True, grad_args=(0,)),
    Spec("sequence_mask", _ref_mask, _mask_sample, dtypes=("int32", "int64"), exact=True, grad=False),
    Spec("ensure_shape", lambda x, shape: x, _ensure_sample, dtypes=EVERY, exact=True, grad_args=(0,)),
    Spec("reverse_sequence", _ref_revseq, _revseq_sample, dtypes=EVERY, exact=True, grad_args=(0,)),
    Spec("dynamic_partition", _ref_partition, _partition_sample, dtypes=EVERY, exact=True, fn=_run_partition,
         grad_args=(0,)),
    Spec("dynamic_stitch", _ref_stitch, _stitch_sample, dtypes=NUMERIC, exact=True, fn=_run_stitch, grad=False),
    Spec("unravel_index", _ref_unravel, _unravel_sample, dtypes=("int32", "int64"), exact=True, grad=False),
    Spec("shape_n", lambda a, b, out_type="int32": [np.array(a.shape, out_type), np.array(b.shape, out_type)],
         _shape_n_sample, dtypes=EVERY, exact=True, fn=_run_shape_n, grad=False),
    Spec("shape_n", lambda xs, out_type="int32": [np.array(np.shape(x), out_type) for x in xs],
         lambda rng, dtype: [(([uniform(rng, (2, 3), dtype), uniform(rng, (2, 3), dtype)],), {"out_type": "int64"})],
         dtypes=("float32",), exact=True, grad=False, name="list"),
    Spec("broadcast_dynamic_shape", _ref_bshape, _bshape_sample, dtypes=("int32", "int64"), exact=True, grad=False),
    Spec("saturate_cast", _ref_sat, _sat_sample, dtypes=("float32", "float64", "int32", "int64"), exact=True,
         grad=False),
    Spec("realdiv", np.divide, _realdiv_sample, dtypes=FLOATS + HALF),
    Spec("parallel_stack", lambda a, b: np.stack([a, b]), _pstack_sample, dtypes=EVERY, exact=True, fn=_run_pstack,
         grad=False),
    Spec("space_to_batch_nd", _ref_s2b, _s2b_sample, dtypes=EVERY, exact=True, grad_args=(0,)),
    Spec("batch_to_space", _ref_b2s, _b2s_sample, dtypes=EVERY, exact=True, grad_args=(0,)),
    Spec("histogram_fixed_width_bins", _ref_bins, _bins_sample, dtypes=NUMERIC, exact=True, grad=False),
]
