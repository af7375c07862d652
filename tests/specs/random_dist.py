"""Specs of the gamma, Poisson and binomial draws: a scalar Python re-implementation of the samplers of
``kernels-c/csrc/random_dist.c`` (each element's Philox sub-stream, Marsaglia-Tsang, Knuth/PTRS,
inversion/BTRS) in double precision with libm's functions (``math``), under fixed seeds.

The gamma's gradient in ``alpha`` is not the derivative of this sampler (a path through the rejection
step) but the implicit reparameterization gradient ``-(dP(alpha, x)/dalpha) / p(x; alpha)``: its spec gives a
reference gradient (``grad_ref``) computed independently, from central differences of a float64
regularized incomplete gamma function written here with NumPy.
"""
from __future__ import annotations

import math

import numpy as np

from opspec import FLOATS, HALF, Spec
from specs.random import GLOBAL, OP, _M32, _out, philox4x32_10, u53

SEED = [21, 5]
_NAN = float("nan")


class _Sub:
    """Element e's sub-stream: block t has counter {lo32(e), hi32(e) | t << 24, stream}; two u53 per block."""

    def __init__(self, key, stream, e):
        self.key, self.stream, self.e, self.t, self.used, self.w, self.spare = key, stream, e, 0, 2, None, None

    def u(self):
        if self.used == 2:
            ctr = ([self.e & _M32], [(self.e >> 32) | ((self.t & 255) << 24)], [self.stream & _M32],
                   [self.stream >> 32])
            self.w = [np.uint64(int(c[0])) for c in philox4x32_10(ctr, (self.key & _M32, self.key >> 32))]
            self.t += 1
            self.used = 0
        j = self.used
        self.used += 1
        return float(u53(np.asarray([self.w[2 * j]]), np.asarray([self.w[2 * j + 1]]))[0])

    def normal(self):
        if self.spare is not None:
            z, self.spare = self.spare, None
            return z
        u1, u2 = self.u() + 2.0 ** -53, self.u()
        r, th = math.sqrt(-2.0 * math.log(u1)), 6.283185307179586 * u2
        self.spare = r * math.sin(th)
        return r * math.cos(th)


def _gamma_mt(q, a):
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        z = q.normal()
        v = 1.0 + c * z
        if v <= 0.0:
            continue
        v = v * v * v
        u = q.u()
        if u < 1.0 - 0.0331 * z * z * z * z:
            return d * v
        if u > 0.0 and math.log(u) < 0.5 * z * z + d * (1.0 - v + math.log(v)):
            return d * v


def _gamma(q, a, tiny):
    if not a >= 0.0:
        return _NAN
    if a >= 1.0:
        return max(_gamma_mt(q, a), tiny)
    g, u = _gamma_mt(q, a + 1.0), q.u() + 2.0 ** -53
    if a == 0.0:
        return tiny
    return max(math.exp(math.log(g) + math.log(u) / a), tiny)


def _poisson(q, lam):
    if lam != lam:
        return _NAN
    if not lam > 0.0:
        return 0.0
    if lam < 10.0:
        lim, p, k = math.exp(-lam), 1.0, 0.0
        while True:
            p *= q.u()
            if p <= lim:
                return k
            k += 1.0
    slam, loglam = math.sqrt(lam), math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha, vr = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u, v = q.u() - 0.5, q.u()
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        if v > 0.0 and math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= \
                -lam + k * loglam - math.lgamma(k + 1.0):
            return k


def _binomial_small(q, n, p):
    logq, total, k = math.log1p(-p), 0.0, 0.0
    while True:
        total += math.ceil(math.log(q.u() + 2.0 ** -53) / logq)
        if total > n:
            return k
        k += 1.0


def _binomial_btrs(q, n, p):
    m, r = math.floor((n + 1.0) * p), p / (1.0 - p)
    lr, snpq = math.log(r), math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * snpq
    a, c = -0.0873 + 0.0248 * b + 0.01 * p, n * p + 0.5
    alpha, vr = (2.83 + 5.1 / b) * snpq, 0.92 - 4.2 / b
    base = math.lgamma(m + 1.0) + math.lgamma(n - m + 1.0)
    while True:
        u, v = q.u() - 0.5, q.u()
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0.0 or k > n or v <= 0.0:
            continue
        lv = math.log(v * alpha / (a / (us * us) + b))
        if lv <= base - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0) + (k - m) * lr:
            return k


def _binomial(q, n, p):
    if n != n or p != p:
        return _NAN
    n = math.floor(n)
    if n <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - (_binomial_small(q, n, 1.0 - p) if n * (1.0 - p) < 10.0 else _binomial_btrs(q, n, 1.0 - p))
    return _binomial_small(q, n, p) if n * p < 10.0 else _binomial_btrs(q, n, p)


def _draw(params, key, stream, fn):
    """fn(substream, *params[e]) for every element e of the broadcast parameters (flattened order)."""
    flat = [np.asarray(p, np.float64).reshape(-1) for p in params]
    return np.asarray([fn(_Sub(key, stream, e), *(float(p[e]) for p in flat)) for e in range(flat[0].size)])


def _counts_out(values, dtype):
    if dtype in ("int32", "int64"):
        return np.where(np.isnan(values), 0, values).astype(dtype)
    return _out(values, dtype)


# ---- references of each op (the parameters broadcast to the output's shape, as the op does) --------------

def ref_stateless_gamma(shape, alpha, dtype):
    compute = np.float32 if dtype in HALF else np.dtype(dtype)
    a = np.broadcast_to(np.asarray(alpha).astype(compute), shape)
    tiny = float(np.finfo(compute).tiny)
    g = _draw([a], SEED[0], SEED[1], lambda q, x: _gamma(q, x, tiny))
    return _out(g.astype(compute).reshape(shape), dtype)


def ref_stateless_poisson(shape, lam, dtype):
    r = np.broadcast_to(np.asarray(lam, np.float32), shape)
    return _counts_out(_draw([r], SEED[0], SEED[1], _poisson), dtype).reshape(shape)


def ref_stateless_binomial(shape, counts, probs, dtype):
    c = np.broadcast_to(np.asarray(counts, np.float32), shape)
    p = np.broadcast_to(np.asarray(probs, np.float32), shape)
    return _counts_out(_draw([c, p], SEED[0], SEED[1], _binomial), dtype).reshape(shape)


def _op_key():
    from tapeflow.core.ops.random_ops import philox_key

    return philox_key(GLOBAL, OP)


def ref_random_gamma(shape, alpha, dtype):
    compute = np.float32 if dtype in HALF else np.dtype(dtype)
    a = np.asarray(alpha).astype(compute)
    full = tuple(shape) + a.shape
    tiny = float(np.finfo(compute).tiny)
    g = _draw([np.broadcast_to(a, full)], _op_key(), 0, lambda q, x: _gamma(q, x, tiny))
    return _out(g.astype(compute).reshape(full), dtype)


def ref_random_poisson(shape, lam, dtype):
    r = np.asarray(lam, np.float32)
    full = tuple(shape) + r.shape
    return _counts_out(_draw([np.broadcast_to(r, full)], _op_key(), 0, _poisson), dtype).reshape(full)


# ---- the implicit gradient's reference: central differences of P(a, x) in alpha ------------------------------

def _igamma_p(a, x):
    """The regularized lower incomplete gamma function P(a, x) in float64 (series or continued fraction)."""
    if x <= 0.0:
        return 0.0
    if x < a + 1.0:
        term = total = 1.0 / a
        n = a
        for _ in range(5000):
            n += 1.0
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-17:
                break
        return total * math.exp(-x + a * math.log(x) - math.lgamma(a))
    b, c, d = x + 1.0 - a, 1.0 / 1e-300, 1.0 / (x + 1.0 - a)
    h = d
    for i in range(1, 5000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < 1e-17:
            break
    return 1.0 - math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def implicit_gamma_grad(alpha, x):
    """dx/dalpha = -(dP/dalpha) / p(x; alpha), dP/dalpha by a central difference (step 1e-5 alpha)."""
    h = 1e-5 * alpha
    dp = (_igamma_p(alpha + h, x) - _igamma_p(alpha - h, x)) / (2.0 * h)
    pdf = math.exp((alpha - 1.0) * math.log(x) - x - math.lgamma(alpha))
    return -dp / pdf


def _gamma_grad_ref(args, kwargs, out, w):
    """The gradient of sum(out * w) in alpha: sum over the sample axes of w * dx/dalpha."""
    alpha = np.asarray(args[1], np.float64)
    full = np.broadcast_to(alpha, np.shape(out))
    d = np.vectorize(implicit_gamma_grad)(full, np.asarray(out, np.float64))
    g = w * d
    lead = len(np.shape(out)) - alpha.ndim
    g = g.sum(axis=tuple(range(lead))) if lead else g
    # alpha broadcast inside the op (stateless: to the output's shape): sum back over its size-1 axes
    return np.sum(g, axis=tuple(i for i, s in enumerate(alpha.shape) if s == 1 and g.shape[i] != 1),
                  keepdims=True).reshape(alpha.shape)


# ---- samples --------------------------------------------------------------------------------------------

_GAMMA_CASES = [((5,), [0.7]), ((3, 4), [0.3, 1.0, 2.5, 40.0]), ((2, 3), [[1.5], [0.05]]), ((0, 2), [1.0, 2.0]),
                ((4,), [0.0, -1.0, 3.0, 1e-3])]
_POISSON_CASES = [((6,), [0.5]), ((3, 4), [0.0, 2.5, 9.9, 250.0]), ((2, 2), [[-1.0], [30.0]]), ((0,), [1.0])]
_BINOMIAL_CASES = [((6,), [10.0], [0.3]), ((2, 4), [5.0, 40.0, 1000.0, 7.9], [0.9, 0.5, 0.1, 0.99]),
                   ((3,), [10.0, -1.0, 20.0], [1.5, 0.1, -0.2]), ((0,), [1.0], [0.5])]


def _gamma_sample(rng, dtype):
    # negative alpha (NaN draws) only in float32/64: a NaN's payload in a half float may differ between backends
    cases = _GAMMA_CASES if dtype not in HALF else [c for c in _GAMMA_CASES if min(np.ravel(c[1])) >= 0]
    return [((shape, np.asarray(a, np.float64).astype(np.float32 if dtype in HALF else dtype)), {"dtype": dtype})
            for shape, a in cases]


def _gamma_grad_sample(rng, dtype):   # positive alpha (the gradient is NaN where alpha <= 0)
    return [((shape, np.asarray(a, dtype)), {"dtype": dtype}) for shape, a in _GAMMA_CASES[:3]]


def _alpha(tf, alpha, dtype):
    return tf.cast(alpha if isinstance(alpha, tf.Tensor) else tf.constant(alpha), dtype)


def _run_stateless_gamma(tf, shape, alpha, dtype):
    return tf.random.stateless_gamma(shape, SEED, _alpha(tf, alpha, dtype), dtype=dtype)


def _run_random_gamma(tf, shape, alpha, dtype):
    tf.random.set_seed(GLOBAL)
    return tf.random.gamma(shape, _alpha(tf, alpha, dtype), dtype=dtype, seed=OP)


def _poisson_sample(rng, dtype):
    return [((shape, lam), {"dtype": dtype}) for shape, lam in _POISSON_CASES]


def _run_stateless_poisson(tf, shape, lam, dtype):
    return tf.random.stateless_poisson(shape, SEED, lam, dtype=dtype)


def _run_random_poisson(tf, shape, lam, dtype):
    tf.random.set_seed(GLOBAL)
    return tf.random.poisson(shape, lam, dtype=dtype, seed=OP)


def _binomial_sample(rng, dtype):
    return [((shape, c, p), {"dtype": dtype}) for shape, c, p in _BINOMIAL_CASES]


def _run_binomial(tf, shape, counts, probs, dtype):
    return tf.random.stateless_binomial(shape, SEED, counts, probs, output_dtype=dtype)


def _ref_gamma_grad(alpha, x):
    a = np.asarray(alpha, np.float64)
    xs = np.asarray(x, np.float64)
    return np.vectorize(implicit_gamma_grad)(np.broadcast_to(a, xs.shape), xs).astype(np.asarray(x).dtype)


def _gamma_grad_op_sample(rng, dtype):
    return [((np.asarray(a, dtype), np.asarray(x, dtype)), {}) for a, x in
            [([0.5, 2.0, 10.0], [[0.3, 1.5, 12.0], [2.0, 0.1, 7.0]]), ([1.0], [0.5, 3.0, 1e-4]),
             (np.float64(4.0), np.float64(2.0))]]


COUNTS = ("float32", "float64", "int32", "int64") + HALF
SPECS = [
    Spec("stateless_random_gamma", lambda s, a, dtype: ref_stateless_gamma(s, a, dtype), _gamma_sample,
         dtypes=FLOATS + HALF, fn=_run_stateless_gamma, rtol=1e-6, f64_tol=(1e-12, 0), grad=False,
         name="values"),
    Spec("random_gamma", lambda s, a, dtype: ref_random_gamma(s, a, dtype), _gamma_sample,
         dtypes=FLOATS + HALF, fn=_run_random_gamma, rtol=1e-6, f64_tol=(1e-12, 0), grad=False, name="values"),
    Spec("stateless_random_gamma", lambda s, a, dtype: ref_stateless_gamma(s, a, dtype), _gamma_grad_sample,
         dtypes=FLOATS, fn=_run_stateless_gamma,
         grad_args=(1,), grad_ref=_gamma_grad_ref, grad_rtol=1e-6, name="implicit-gradient"),
    Spec("random_gamma", lambda s, a, dtype: ref_random_gamma(s, a, dtype), _gamma_grad_sample, dtypes=FLOATS,
         fn=_run_random_gamma, grad_args=(1,),
         grad_ref=_gamma_grad_ref, grad_rtol=1e-6, name="implicit-gradient"),
    Spec("random_gamma_grad", _ref_gamma_grad, _gamma_grad_op_sample, dtypes=FLOATS, rtol=1e-5,
         f64_tol=(1e-7, 1e-12), grad=False,
         fn=lambda tf, a, x: tf.random.experimental.random_gamma_grad(tf.constant(a), tf.constant(x))),
    Spec("stateless_random_poisson", lambda s, lam, dtype: ref_stateless_poisson(s, lam, dtype), _poisson_sample,
         dtypes=COUNTS, fn=_run_stateless_poisson, exact=True, grad=False),
    Spec("random_poisson", lambda s, lam, dtype: ref_random_poisson(s, lam, dtype), _poisson_sample,
         dtypes=COUNTS, fn=_run_random_poisson, exact=True, grad=False),
    Spec("stateless_random_binomial", lambda s, c, p, dtype: ref_stateless_binomial(s, c, p, dtype),
         _binomial_sample, dtypes=COUNTS, fn=_run_binomial, exact=True, grad=False),
]
