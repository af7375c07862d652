"""Specs of core's nn ops (softmax, cross-entropies, bias_add, dropout, normalisation) against NumPy."""
from __future__ import annotations

import numpy as np

from opspec import FLOATS, HALF, Spec, uniform

from specs.random import philox_words, u24


def _np_softmax(x, axis=-1):
    x = np.asarray(x)
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _np_log_softmax(x, axis=-1):
    x = np.asarray(x)
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def _as(dtype, v):
    return np.asarray(v, dtype=np.float32 if dtype in HALF else dtype)


# ---- softmax / log_softmax -------------------------------------------------------

# (300, 10): rows in several chunks of the kernel; (2, 300): the long-row path
_SOFTMAX_CASES = [((5,), None), ((3, 4), None), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((1,), 0),
                  ((0, 3), -1), ((3, 0), 0), ((2, 3, 40), -1), ((300, 10), -1), ((2, 300), -1)]


def _softmax_sample(rng, dtype):
    cases = []
    for shape, axis in _SOFTMAX_CASES:
        x = uniform(rng, shape, dtype, -4, 4)
        cases.append(((x,), {} if axis is None else {"axis": axis}))
    # large logits: stability (no overflow in exp)
    cases.append(((uniform(rng, (2, 5), dtype, 500, 600),), {}))
    return cases


def _ref_softmax(x, axis=-1):
    return _np_softmax(x.astype(np.float64), axis).astype(x.dtype)


def _ref_log_softmax(x, axis=-1):
    return _np_log_softmax(x.astype(np.float64), axis).astype(x.dtype)


# ---- cross-entropies -----------------------------------------------------------------

def _xent_sample(rng, dtype):
    cases = []
    for shape, axis in [((3, 4), -1), ((5,), -1), ((2, 3, 4), -1), ((2, 3, 4), 1), ((4, 3), 0), ((0, 4), -1),
                        ((3, 1), -1), ((64, 10), -1), ((300, 10), -1), ((2, 300), -1)]:
        logits = uniform(rng, shape, dtype, -3, 3)
        labels = _np_softmax(rng.normal(size=shape), axis=axis).astype(logits.dtype)
        cases.append(((labels, logits), {"axis": axis}))
    # one-hot labels
    logits = uniform(rng, (3, 3), dtype, -2, 2)
    cases.append(((np.eye(3).astype(logits.dtype), logits), {"axis": -1}))
    return cases


def _ref_xent(labels, logits, axis=-1):
    out = -np.sum(labels.astype(np.float64) * _np_log_softmax(logits.astype(np.float64), axis), axis=axis)
    return np.asarray(out).astype(logits.dtype)


def _sparse_sample(rng, dtype):
    cases = []
    for lshape, classes, ldt in [((3,), 4, "int32"), ((2, 3), 5, "int64"), ((), 6, "int32"), ((0,), 4, "int64"),
                                 ((32,), 10, "int32"), ((4,), 1, "int64"), ((300,), 10, "int32"),
                                 ((2,), 300, "int64")]:
        logits = uniform(rng, lshape + (classes,), dtype, -3, 3)
        labels = rng.integers(0, classes, size=lshape).astype(ldt)
        cases.append(((labels, logits), {}))
    return cases


def _ref_sparse(labels, logits):
    ls = _np_log_softmax(logits.astype(np.float64), -1)
    picked = np.take_along_axis(ls, labels.astype(np.int64)[..., None], axis=-1)[..., 0] if ls.size else \
        np.zeros(labels.shape)
    return np.asarray(-picked).astype(logits.dtype)


def _sigmoid_xent_sample(rng, dtype):
    cases = []
    for shape in [(), (5,), (3, 4), (2, 3, 4), (0,), (3, 0)]:
        logits = uniform(rng, shape, dtype, -5, 5)
        labels = uniform(rng, shape, dtype, 0, 1)
        cases.append(((labels, logits), {}))
    big = uniform(rng, (4,), dtype, 50, 90)  # large |logits| of both signs: no overflow
    cases.append(((uniform(rng, (4,), dtype, 0, 1), big * np.array([1, -1, 1, -1]).astype(big.dtype)), {}))
    return cases


def _ref_sigmoid_xent(labels, logits):
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    return (np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))).astype(logits.dtype)


# ---- bias_add ------------------------------------------------------------------------------

def _bias_sample(rng, dtype):
    cases = []
    for shape, fmt in [((2, 3), None), ((2, 3, 4, 5), "NHWC"), ((2, 3, 4), "NCW"), ((2, 3, 4, 5), "NCHW"),
                       ((0, 3), None), ((4, 1), "N...C")]:
        x = uniform(rng, shape, dtype)
        c = shape[-1] if fmt is None or fmt.endswith("C") else shape[1]
        b = uniform(rng, (c,), dtype)
        cases.append(((x, b), {} if fmt is None else {"data_format": fmt}))
    return cases


def _ref_bias(x, b, data_format=None):
    if data_format is not None and not data_format.endswith("C"):
        b = b.reshape((b.shape[0],) + (1,) * (x.ndim - 2))
    return x + b


# ---- dropout -----------------------------------------------------------------------------------
# The spec runs dropout under a fixed global and op seed; the reference rebuilds the
# Philox mask in NumPy (the first call of that seed pair uses stream 0).

_DROP_GLOBAL, _DROP_OP = 1234, 99


def _dropout_sample(rng, dtype):
    cases = []
    for shape, rate, noise in [((1000,), 0.5, None), ((3, 4), 0.25, None), ((2, 3, 4), 0.9, [2, 1, 4]),
                               ((0, 3), 0.5, None), ((5,), 0.0, None), ((4, 4), 0.5, [1, 4])]:
        kw = {"rate": rate}
        if noise is not None:
            kw["noise_shape"] = noise
        cases.append(((uniform(rng, shape, dtype, 0.5, 2.0),), kw))
    return cases


def _run_dropout(tf, x, rate, noise_shape=None):
    tf.random.set_seed(_DROP_GLOBAL)
    try:
        return tf.nn.dropout(tf.constant(x), rate, noise_shape=noise_shape, seed=_DROP_OP)
    finally:
        tf.random.set_seed(None)


def _ref_dropout(x, rate, noise_shape=None):
    if rate == 0:
        return x
    from tapeflow.core.ops.random_ops import philox_key

    shape = tuple(noise_shape) if noise_shape is not None else x.shape
    n = int(np.prod(shape))
    w = philox_words(philox_key(_DROP_GLOBAL, _DROP_OP), 0, (n + 3) // 4)[:n]
    calc = np.float32 if x.dtype in (np.float16,) or str(x.dtype) == "bfloat16" else x.dtype
    keep = np.asarray(1.0 / (1.0 - rate)).astype(calc)
    mask = np.where(u24(w).astype(np.float64) >= rate, keep, np.zeros((), calc)).reshape(shape)
    return (x * mask.astype(x.dtype)).astype(x.dtype)


# ---- normalisation --------------------------------------------------------------------------------

def _l2_sample(rng, dtype):
    return [((uniform(rng, s, dtype),), kw) for s, kw in
            [((5,), {}), ((3, 4), {"axis": 1}), ((3, 4), {"axis": 0}), ((2, 3, 4), {"axis": [1, 2]}),
             ((3, 4), {"axis": -1, "epsilon": 1e-3}), ((0, 3), {"axis": 1})]] + \
        [((uniform(rng, (2, 3), dtype) * 0,), {"axis": 1})]  # all zeros: epsilon keeps it finite


def _ref_l2(x, axis=None, epsilon=1e-12):
    x64 = x.astype(np.float64)
    ax = tuple(axis) if isinstance(axis, list) else axis
    sq = np.sum(x64 * x64, axis=ax, keepdims=True)
    return (x64 / np.sqrt(np.maximum(sq, epsilon))).astype(x.dtype)


def _moments_sample(rng, dtype):
    return [((uniform(rng, s, dtype),), kw) for s, kw in
            [((5,), {"axes": [0]}), ((3, 4), {"axes": [0]}), ((2, 3, 4), {"axes": [0, 1]}),
             ((2, 3, 4), {"axes": [0, 2], "keepdims": True}), ((4, 3), {"axes": [1]}), ((3, 4), {"axes": [-1]})]]


def _ref_moments(x, axes, keepdims=False):
    x64 = x.astype(np.float64)
    ax = tuple(axes)
    return (np.mean(x64, axis=ax, keepdims=keepdims).astype(x.dtype),
            np.var(x64, axis=ax, keepdims=keepdims).astype(x.dtype))


def _bn_sample(rng, dtype):
    cases = []
    for shape, pshape, with_offset, with_scale in [((4, 3), (3,), True, True), ((2, 3, 5), (5,), False, True),
                                                   ((2, 3, 5), (5,), True, False), ((6,), (), False, False),
                                                   ((0, 3), (3,), True, True)]:
        x = uniform(rng, shape, dtype)
        mean = uniform(rng, pshape, dtype)
        var = uniform(rng, pshape, dtype, 0.5, 2.0)
        off = uniform(rng, pshape, dtype) if with_offset else None
        sc = uniform(rng, pshape, dtype) if with_scale else None
        cases.append(((x, mean, var, off, sc), {"variance_epsilon": 1e-3}))
    return cases


def _run_bn(tf, x, mean, var, off, sc, variance_epsilon):
    c = (lambda a: None if a is None else tf.constant(a))
    return tf.nn.batch_normalization(tf.constant(x), c(mean), c(var), c(off), c(sc), variance_epsilon)


def _ref_bn(x, mean, var, off, sc, variance_epsilon):
    f = (lambda a, d: np.full((), d) if a is None else a.astype(np.float64))
    y = (x.astype(np.float64) - f(mean, 0)) / np.sqrt(f(var, 1) + variance_epsilon) * f(sc, 1) + f(off, 0)
    return y.astype(x.dtype)


_FH = FLOATS + HALF

SPECS = [
    Spec("softmax", _ref_softmax, _softmax_sample, dtypes=_FH, second_order=True),
    Spec("log_softmax", _ref_log_softmax, _softmax_sample, dtypes=_FH, rtol=1e-5, atol=1e-5, second_order=True),
    Spec("softmax_cross_entropy_with_logits", _ref_xent, _xent_sample, dtypes=_FH, rtol=1e-5, atol=1e-5,
         second_order=True),
    Spec("sparse_softmax_cross_entropy_with_logits", _ref_sparse, _sparse_sample, dtypes=_FH, rtol=1e-5,
         atol=1e-5, grad_args=(1,), second_order=True),
    Spec("sigmoid_cross_entropy_with_logits", _ref_sigmoid_xent, _sigmoid_xent_sample, dtypes=_FH,
         second_order=True),
    Spec("bias_add", _ref_bias, _bias_sample, dtypes=_FH),
    Spec("dropout", _ref_dropout, _dropout_sample, dtypes=_FH, fn=_run_dropout),
    Spec("l2_normalize", _ref_l2, _l2_sample, dtypes=_FH),
    Spec("moments", _ref_moments, _moments_sample, dtypes=_FH),
    Spec("batch_normalization", _ref_bn, _bn_sample, dtypes=_FH, fn=_run_bn),
]
