"""Specs of the segment reductions beyond the sum (core's segment_ops): unsorted_segment_max/min/prod
(primitives), unsorted_segment_mean/sqrt_n and segment_max/min/prod/mean (composites).

Samples hold negative ids (dropped by the unsorted forms), empty segments, rank-2 ids and size-0 data;
float data have no ties, so max/min gradients are defined."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from opspec import FLOATS, HALF, NUMERIC, Spec, uniform

NUM_H = NUMERIC + HALF


def _data(rng, shape, dtype):
    if dtype not in FLOATS + HALF:
        return uniform(rng, shape, dtype)
    n = int(np.prod(shape))
    vals = (rng.permutation(n) - n // 2) * 0.25 + rng.uniform(-0.05, 0.05, n)
    return uniform(rng, (), dtype).dtype.type(0) + vals.reshape(shape).astype(uniform(rng, (), dtype).dtype)


def _unsorted_sample(rng, dtype):
    d = lambda s: _data(rng, s, dtype)
    return [((d((5, 3)), np.array([0, 2, 0, -1, 2], np.int32), 4), {}),
            ((d((2, 3, 2)), np.array([[1, 1, 0], [3, 0, 1]], np.int64), 4), {}),
            ((d((0, 2)), np.zeros((0,), np.int32), 2), {}),
            ((d((4,)), np.array([1, 1, 1, 1], np.int32), 2), {}),
            ((d((3,)), np.array([0, 1, 2], np.int32), 5), {})]


def _full_sample(rng, dtype):
    """Every segment occupied: max/min of an empty segment is the dtype's limit, which no difference quotient
    (nor a weighted sum of outputs) survives."""
    d = lambda s: _data(rng, s, dtype)
    return [((d((5, 3)), np.array([0, 2, 1, -1, 2], np.int32), 3), {}),
            ((d((2, 3, 2)), np.array([[1, 1, 0], [2, 0, 1]], np.int64), 3), {}),
            ((d((4,)), np.array([1, 0, 1, 1], np.int32), 2), {})]


def _sorted_sample(rng, dtype):
    d = lambda s: _data(rng, s, dtype)
    return [((d((5, 3)), np.array([0, 0, 1, 3, 3], np.int32)), {}), ((d((4,)), np.array([2, 2, 2, 2], np.int64)), {}),
            ((d((0, 2)), np.zeros((0,), np.int32)), {}), ((d((3,)), np.array([0, 1, 2], np.int32)), {})]


def _limits(dt):
    info = ml_dtypes.finfo(dt) if dt.kind == "V" or dt == ml_dtypes.bfloat16 else (
        np.finfo(dt) if dt.kind == "f" else np.iinfo(dt))
    return info.min, info.max


def _ref_reduce(kind):
    def ref(data, ids, num):
        lo, hi = _limits(data.dtype)
        init = {"max": lo, "min": hi, "prod": 1}[kind]
        work = data.astype(np.float64) if data.dtype.kind not in "iu" else data
        out = np.full((num,) + data.shape[ids.ndim:], init, work.dtype)
        keep = ids >= 0
        ufunc = {"max": np.maximum, "min": np.minimum, "prod": np.multiply}[kind]
        ufunc.at(out, ids[keep], work[keep])
        return out.astype(data.dtype)
    return ref


def _counts(data, ids, num):
    c = np.zeros(num, np.float64)
    np.add.at(c, ids[ids >= 0], 1.0)
    return c.reshape((num,) + (1,) * (data.ndim - ids.ndim))


def _ref_sum(data, ids, num):
    out = np.zeros((num,) + data.shape[ids.ndim:], np.float64)
    np.add.at(out, ids[ids >= 0], data[ids >= 0].astype(np.float64))
    return out


def _ref_mean(data, ids, num):
    out = _ref_sum(data, ids, num) / np.maximum(_counts(data, ids, num), 1)
    if data.dtype.kind in "iu":
        return out.astype(np.float32 if data.dtype.itemsize < 4 else np.float64)
    return out.astype(data.dtype)


def _ref_sqrt_n(data, ids, num):
    return (_ref_sum(data, ids, num) / np.sqrt(np.maximum(_counts(data, ids, num), 1))).astype(data.dtype)


def _num(ids):
    return int(ids[-1]) + 1 if ids.size else 0


def _ref_sorted(kind):
    def ref(data, ids):
        n = _num(ids)
        if kind == "mean":
            total, count = _ref_sum(data, ids, n), np.maximum(_counts(data, ids, n), 1)
            return np.trunc(total / count).astype(data.dtype) if data.dtype.kind in "iu" else \
                (total / count).astype(data.dtype)
        out = _ref_reduce(kind)(data, ids, n)
        if kind != "prod":
            out = np.where(_counts(data, ids, n) > 0, out, 0).astype(data.dtype)
        return out
    return ref


SPECS = [
    Spec("unsorted_segment_max", _ref_reduce("max"), _full_sample, dtypes=NUM_H, exact=True, grad_args=(0,)),
    Spec("unsorted_segment_max", _ref_reduce("max"), _unsorted_sample, dtypes=NUM_H, exact=True, grad=False,
         name="empty"),
    Spec("unsorted_segment_min", _ref_reduce("min"), _full_sample, dtypes=NUM_H, exact=True, grad_args=(0,)),
    Spec("unsorted_segment_min", _ref_reduce("min"), _unsorted_sample, dtypes=NUM_H, exact=True, grad=False,
         name="empty"),
    Spec("unsorted_segment_prod", _ref_reduce("prod"), _unsorted_sample, dtypes=NUM_H, grad_args=(0,)),
    Spec("unsorted_segment_mean", _ref_mean, _unsorted_sample, dtypes=NUM_H, grad_args=(0,)),
    Spec("unsorted_segment_sqrt_n", _ref_sqrt_n, _unsorted_sample, dtypes=FLOATS + HALF, grad_args=(0,)),
    Spec("segment_max", _ref_sorted("max"), _sorted_sample, dtypes=NUM_H, exact=True, grad_args=(0,)),
    Spec("segment_min", _ref_sorted("min"), _sorted_sample, dtypes=NUM_H, exact=True, grad_args=(0,)),
    Spec("segment_prod", _ref_sorted("prod"), _sorted_sample, dtypes=NUM_H, grad_args=(0,)),
    Spec("segment_mean", _ref_sorted("mean"), _sorted_sample, dtypes=NUM_H, grad_args=(0,)),
]
