"""Gamma, Poisson and binomial draws: ``tf.random.gamma``/``poisson``, their stateless versions and
``tf.random.stateless_binomial`` (TensorFlow's names, shapes and seed rules).

The samplers are C (``kernels-c/csrc/random_dist.c``: Marsaglia-Tsang for the gamma, Knuth/PTRS
for the Poisson, inversion/BTRS for the binomial); each output element has its own Philox
sub-stream, so a draw is a pure function of (key, stream, element, parameters) on every backend.
The gamma sample is differentiable in its shape parameter ``alpha`` (and through the division in
``beta``) by TensorFlow's implicit reparameterization gradient,
``dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha)`` with ``P`` the regularized incomplete gamma
function (``random_gamma_grad``, computed in C by carrying the derivative through ``P``'s series or
continued fraction); Poisson and binomial counts are not differentiable, as in TensorFlow.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import alloc, dtype_arg, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from . import _ew
from .math_ops import _cast_raw
from .random_ops import _F, _run_on, _seed_int, _seed_pair, _shape, next_stream

__all__ = ["random_gamma", "random_poisson", "stateless_random_gamma", "stateless_random_poisson",
           "stateless_random_binomial", "random_gamma_grad"]

_NONDIFF = "random sampling"
_COUNT_DTYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def _param_infer(x, *, shape, dtype, key, stream):
    return tuple(shape) + tuple(x._shape), dtype


def _gamma_impl(dev, alpha, *, shape, dtype, key, stream):
    out = alloc(tuple(shape) + tuple(alpha._shape), alpha._dtype, dev)
    check(dev.backend.random_gamma(alpha._dtype.code, alpha._h, alpha._size, _prod(shape), out._h, key, stream),
          "random_gamma")
    return out


def _poisson_impl(dev, rate, *, shape, dtype, key, stream):
    direct = dtype if dtype in (_dt.float32, _dt.float64, _dt.int32, _dt.int64) else _dt.float32
    out = alloc(tuple(shape) + tuple(rate._shape), direct, dev)
    check(dev.backend.random_poisson(rate._dtype.code, rate._h, rate._size, _prod(shape), direct.code, out._h, key,
                                     stream), "random_poisson")
    return out if direct is dtype else _cast_raw(out, dtype)


def _binomial_infer(counts, probs, *, dtype, key, stream):
    return counts._shape, dtype


def _binomial_impl(dev, counts, probs, *, dtype, key, stream):
    direct = dtype if dtype in (_dt.float32, _dt.float64, _dt.int32, _dt.int64) else _dt.float32
    out = alloc(counts._shape, direct, dev)
    check(dev.backend.random_binomial(counts._dtype.code, counts._h, probs._h, counts._size, direct.code, out._h,
                                      key, stream), "random_binomial")
    return out if direct is dtype else _cast_raw(out, dtype)


_RANDOM_GAMMA = primitive("random_gamma", "RandomGamma", infer=_param_infer, dtypes=_F, stateful=True)(_gamma_impl)
_STATELESS_GAMMA = primitive("stateless_random_gamma", "StatelessRandomGammaV3", infer=_param_infer,
                             dtypes=_F)(_gamma_impl)
_RANDOM_POISSON = primitive("random_poisson", "RandomPoissonV2", infer=_param_infer, dtypes=_F,
                            stateful=True)(_poisson_impl)
_STATELESS_POISSON = primitive("stateless_random_poisson", "StatelessRandomPoisson", infer=_param_infer,
                               dtypes=_F)(_poisson_impl)
_RANDOM_BINOMIAL = primitive("random_binomial", "StatefulRandomBinomial", infer=_binomial_infer, dtypes=_F,
                             stateful=True, internal="the draw of tf.random.Generator.binomial (its spec: "
                             "stateless_random_binomial, the same kernel)")(_binomial_impl)
_STATELESS_BINOMIAL = primitive("stateless_random_binomial", "StatelessRandomBinomial", infer=_binomial_infer,
                                dtypes=_F)(_binomial_impl)


@primitive("random_gamma_grad", "RandomGammaGrad", infer=lambda alpha, x: (x._shape, x._dtype), dtypes=_F)
def _GAMMA_GRAD(dev, alpha, x):
    out = alloc(x._shape, x._dtype, dev)
    check(dev.backend.random_gamma_grad(x._dtype.code, alpha._h, alpha._size, x._h, x._size, out._h),
          "random_gamma_grad")
    return out


# ---- argument handling -------------------------------------------------------------------

def _param(v, op, what, dtype):
    """A float parameter tensor: ``v`` converted to ``dtype`` (a tensor keeps its float dtype if ``dtype`` is None)."""
    t = v if isinstance(v, Tensor) else to_tensor(v, op, dtype)
    if not t._dtype.is_floating:
        if dtype is None:
            raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: float16, bfloat16, float32, "
                                       "float64", op)
        t = _cast(t, dtype)
    elif dtype is not None and t._dtype is not dtype:
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name} but the op's dtype is {dtype.name}; allowed: "
                                   f"{dtype.name}", op)
    return t


def _cast(t, dtype):
    from .math_ops import cast

    return t if t._dtype is dtype else cast(t, dtype)


def _compute(t):
    """``t`` in the dtype the kernels draw in: float32 for the half floats."""
    return t if t._dtype in _F else _cast(t, _dt.float32)


def _float_out(dtype, op):
    dt = dtype_arg(dtype, op)
    if not dt.is_floating:
        raise InvalidArgumentError(f"dtype {dt.name} is not supported; allowed: float16, bfloat16, float32, float64",
                                   op)
    return dt


def _count_out(dtype, op):
    dt = dtype_arg(dtype, op)
    if dt not in _COUNT_DTYPES:
        raise InvalidArgumentError(f"dtype {dt.name} is not supported; allowed: "
                                   f"{', '.join(d.name for d in _COUNT_DTYPES)}", op)
    return dt


def _to_shape(t, shape, op, what):
    """``t`` broadcast to the full output ``shape`` (a stateless op's parameters)."""
    if tuple(t._shape) == tuple(shape):
        return t
    try:
        target = _ew.broadcast_shape(tuple(t._shape), tuple(shape), op)
    except InvalidArgumentError:
        target = None
    if target != tuple(shape):
        raise InvalidArgumentError(f"{what} of shape {tuple(t._shape)} does not broadcast to the output shape "
                                   f"{tuple(shape)}; allowed: a shape that broadcasts to it", op)
    from .array_ops import broadcast_to

    return broadcast_to(t, shape)


# ---- gamma -----------------------------------------------------------------------------------

@register("random_gamma", "RandomGamma")
def random_gamma(shape, alpha, beta=None, dtype=_dt.float32, seed=None, name=None):
    """Samples of Gamma(alpha, beta) (shape ``alpha``, rate ``beta``), of shape ``shape + broadcast(alpha, beta)``.

    Differentiable in ``alpha`` and ``beta`` (TensorFlow's implicit reparameterization gradient).  As in
    TensorFlow, ``alpha = 0`` gives the dtype's smallest normal number and ``alpha < 0`` gives NaN.

    >>> import tapeflow as tf
    >>> x = tf.random.gamma([1000], alpha=[1.0, 9.0], seed=1)
    >>> x.shape
    TensorShape([1000, 2])
    >>> [round(float(m)) for m in tf.reduce_mean(x, axis=0)]
    [1, 9]
    """
    op = "RandomGamma"
    dt = _float_out(dtype, op)
    a = _param(alpha, op, "alpha", dt)
    shape = _shape(shape, op)
    if beta is not None:
        b = _param(beta, op, "beta", dt)
        a = _to_shape(a, _ew.broadcast_shape(tuple(a._shape), tuple(b._shape), op), op, "alpha")
    if seed is not None:
        seed = _seed_int(seed, op)
    key, stream = next_stream(seed)
    g = run(_RANDOM_GAMMA, (_compute(a),), {"shape": shape, "dtype": _compute(a)._dtype, "key": key,
                                              "stream": stream})
    g = _cast_out(g, dt)
    if beta is None:
        return g
    from .math_ops import divide

    return divide(g, b)


def _cast_out(g, dt):
    return _cast(g, dt)   # differentiable: the gradient reaches alpha of a half-float draw


@register("stateless_random_gamma", "StatelessRandomGammaV3")
def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=_dt.float32, name=None):
    """Gamma(alpha, beta) samples of shape ``shape`` that depend only on ``seed`` (a pair of ints); ``alpha`` and
    ``beta`` broadcast to ``shape``.  Differentiable in ``alpha`` and ``beta``, as :func:`random_gamma`.

    >>> import tapeflow as tf
    >>> a = tf.random.stateless_gamma([2, 3], seed=[1, 2], alpha=[0.5, 1.0, 4.0])
    >>> b = tf.random.stateless_gamma([2, 3], seed=[1, 2], alpha=[0.5, 1.0, 4.0])
    >>> a.shape, a.numpy().tolist() == b.numpy().tolist()
    (TensorShape([2, 3]), True)
    """
    op = "StatelessRandomGammaV3"
    dt = _float_out(dtype, op)
    key, stream = _seed_pair(seed, op)
    shape = _shape(shape, op)
    a = _to_shape(_param(alpha, op, "alpha", dt), shape, op, "alpha")
    g = _cast_out(run(_STATELESS_GAMMA, (_compute(a),), {"shape": (), "dtype": _compute(a)._dtype, "key": key,
                                                          "stream": stream}), dt)
    if beta is None:
        return g
    from .math_ops import divide

    return divide(g, _to_shape(_param(beta, op, "beta", dt), shape, op, "beta"))


@register("random_gamma_grad", "RandomGammaGrad", nondiff="the derivative of a gamma sample is not differentiated "
          "again (as in TensorFlow)")
def random_gamma_grad(alpha, sample, name=None):
    """``d sample / d alpha`` of Gamma(alpha, 1) samples: the implicit reparameterization gradient
    ``-(dP(alpha, x) / d alpha) / p(x; alpha)``; ``alpha`` and ``sample`` broadcast (TensorFlow's
    RandomGammaGrad).

    >>> import tapeflow as tf
    >>> g = tf.random.experimental.random_gamma_grad(tf.constant([0.5, 2.0]), tf.constant([0.3, 1.5]))
    >>> [round(float(v), 4) for v in g]
    [1.0098, 0.9366]
    """
    op = "RandomGammaGrad"
    a = alpha if isinstance(alpha, Tensor) else to_tensor(alpha, op)
    x = sample if isinstance(sample, Tensor) else to_tensor(sample, op, a._dtype)
    if a._dtype not in _F or x._dtype is not a._dtype:
        raise InvalidArgumentError(f"alpha and sample must both be float32 or both float64, got {a._dtype.name} and "
                                   f"{x._dtype.name}", op)
    k = len(a._shape)
    if k > len(x._shape) or not all(p is None or q is None or p == q for p, q in zip(x._shape[-k:] if k else (),
                                                                                 a._shape)):   # as TensorFlow
        full = _ew.broadcast_shape(tuple(a._shape), tuple(x._shape), op)
        a, x = _to_shape(a, full, op, "alpha"), _to_shape(x, full, op, "sample")
    return run(_GAMMA_GRAD, (a, x), {})


# ---- Poisson ----------------------------------------------------------------------------------

def _rate(lam, op):
    r = _param(lam, op, "lam", None if isinstance(lam, Tensor) else _dt.float32)
    return _compute(r)


@register("random_poisson", "RandomPoissonV2", nondiff=_NONDIFF)
def random_poisson(shape, lam, dtype=_dt.float32, seed=None, name=None):
    """Poisson(lam) counts of shape ``shape + lam.shape``, in ``dtype`` (a float or int32/int64); ``lam <= 0``
    gives 0, as TensorFlow.

    >>> import tapeflow as tf
    >>> x = tf.random.poisson([2000], lam=[0.5, 30.0], seed=3)
    >>> x.shape, x.dtype, [round(float(m)) for m in tf.reduce_mean(x, axis=0) * 2]
    (TensorShape([2000, 2]), tf.float32, [1, 60])
    """
    op = "RandomPoissonV2"
    dt = _count_out(dtype, op)
    r = _rate(lam, op)
    shape = _shape(shape, op)
    if seed is not None:
        seed = _seed_int(seed, op)
    key, stream = next_stream(seed)
    return run(_RANDOM_POISSON, (r,), {"shape": shape, "dtype": dt, "key": key, "stream": stream})


@register("stateless_random_poisson", "StatelessRandomPoisson", nondiff=_NONDIFF)
def stateless_random_poisson(shape, seed, lam, dtype=_dt.int32, name=None):
    """Poisson(lam) counts of shape ``shape`` (``lam`` broadcast to it) that depend only on ``seed``.

    >>> import tapeflow as tf
    >>> x = tf.random.stateless_poisson([3, 2], seed=[1, 2], lam=[1.0, 100.0])
    >>> x.shape, x.dtype
    (TensorShape([3, 2]), tf.int32)
    """
    op = "StatelessRandomPoisson"
    dt = _count_out(dtype, op)
    key, stream = _seed_pair(seed, op)
    shape = _shape(shape, op)
    r = _to_shape(_rate(lam, op), shape, op, "lam")
    return run(_STATELESS_POISSON, (r,), {"shape": (), "dtype": dt, "key": key, "stream": stream})


# ---- binomial ---------------------------------------------------------------------------------

def _binomial_args(shape, counts, probs, dtype, op):
    dt = _count_out(dtype, op)
    shape = _shape(shape, op)
    c = counts if isinstance(counts, Tensor) else to_tensor(counts, op, _dt.float32)
    p = probs if isinstance(probs, Tensor) else to_tensor(probs, op, c._dtype if c._dtype.is_floating else None)
    for t, what in ((c, "counts"), (p, "probs")):
        if not t._dtype.is_floating and t._dtype not in (_dt.int32, _dt.int64):
            raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: a float or int32/int64", op)
    compute = _dt.float64 if _dt.float64 in (c._dtype, p._dtype) else _dt.float32
    c, p = _cast(c, compute), _cast(p, compute)
    return dt, shape, _to_shape(c, shape, op, "counts"), _to_shape(p, shape, op, "probs")


@register("stateless_random_binomial", "StatelessRandomBinomial", nondiff=_NONDIFF)
def stateless_random_binomial(shape, seed, counts, probs, output_dtype=_dt.int32, name=None):
    """Binomial(counts, probs) counts of shape ``shape`` (``counts`` and ``probs`` broadcast to it) that depend
    only on ``seed``.  ``counts`` are floored; ``probs`` outside [0, 1] act as 0 or 1.

    >>> import tapeflow as tf
    >>> x = tf.random.stateless_binomial([4000], seed=[1, 2], counts=10.0, probs=0.3)
    >>> x.dtype, round(float(tf.reduce_mean(tf.cast(x, tf.float32))))
    (tf.int32, 3)
    """
    op = "StatelessRandomBinomial"
    key, stream = _seed_pair(seed, op)
    dt, shape, c, p = _binomial_args(shape, counts, probs, output_dtype, op)
    return run(_STATELESS_BINOMIAL, (c, p), {"dtype": dt, "key": key, "stream": stream})


def binomial_from(shape, counts, probs, dtype, key, stream, op):
    """Binomial counts from an explicit Philox stream (a Generator's draw)."""
    dt, shape, c, p = _binomial_args(shape, counts, probs, dtype, op)
    return _run_on(_RANDOM_BINOMIAL, (c, p), {"dtype": dt, "key": key, "stream": stream}, None)
