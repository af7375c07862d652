"""Specs of roll, identity_n and tensor_scatter_nd_sub/max/min (core's manip_ops), against NumPy."""
from __future__ import annotations

import numpy as np
from opspec import ALL, FLOATS, HALF, NUMERIC, Spec, uniform

EVERY = ALL + HALF
NUM_H = NUMERIC + HALF


def _roll_sample(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [((x, 1, 0), {}), ((x, -5, 1), {}), ((x, [1, 2], [0, -1]), {}), ((x, [2, 2], [1, 1]), {}),
            ((uniform(rng, (5,), dtype), 7, 0), {}), ((uniform(rng, (0, 3), dtype), 1, 0), {}),
            ((uniform(rng, (2, 3, 2), dtype), np.array([1, -1], np.int64), [2, 0]), {})]


def _ref_roll(x, shift, axis):
    return np.roll(x, shift, axis)


def _identity_n_sample(rng, dtype):
    return [((uniform(rng, (2, 3), dtype), uniform(rng, (), dtype)), {}), ((uniform(rng, (0,), dtype),), {})]


def _run_identity_n(tf, *xs):
    return tf.identity_n([tf.constant(x) for x in xs])


def _distinct(rng, shape, dtype):
    if dtype not in FLOATS + HALF:
        return uniform(rng, shape, dtype)
    n = int(np.prod(shape))
    vals = ((rng.permutation(n) - n // 2) * 0.25 + rng.uniform(-0.05, 0.05, n)).reshape(shape)
    return vals.astype(uniform(rng, (), dtype).dtype)


def _scatter_sample(rng, dtype):
    both = _distinct(rng, (4 * 3 + 3 * 3,), dtype)
    x, u = both[:12].reshape(4, 3), both[12:].reshape(3, 3)
    both2 = _distinct(rng, (6 + 2,), dtype)
    return [((x, np.array([[1], [3], [0]], np.int32), u), {}),
            ((both2[:6].reshape(2, 3), np.array([[0, 2], [1, 1]], np.int64), both2[6:]), {}),
            ((x, np.zeros((0, 1), np.int32), u[:0]), {})]


def _ref_scatter(kind):
    def ref(x, idx, u):
        out = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.kind == "V" else x.copy()
        k = idx.shape[-1]
        for t in range(idx.shape[0]):
            pos = tuple(idx[t][:k])
            if kind == "sub":
                out[pos] = out[pos] - u[t]
            else:
                out[pos] = (np.maximum if kind == "max" else np.minimum)(out[pos], u[t])
        return out.astype(x.dtype)
    return ref


SPECS = [
    Spec("roll", _ref_roll, _roll_sample, dtypes=EVERY, exact=True, grad_args=(0,)),
    Spec("identity_n", lambda *xs: list(xs), _identity_n_sample, dtypes=EVERY, fn=_run_identity_n, exact=True,
         grad=False),
    Spec("tensor_scatter_nd_sub", _ref_scatter("sub"), _scatter_sample, dtypes=NUM_H, grad_args=(0, 2)),
    Spec("tensor_scatter_nd_max", _ref_scatter("max"), _scatter_sample, dtypes=NUM_H, exact=True, grad_args=(0, 2)),
    Spec("tensor_scatter_nd_min", _ref_scatter("min"), _scatter_sample, dtypes=NUM_H, exact=True, grad_args=(0, 2)),
]
