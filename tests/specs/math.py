"""Specs of core's math ops (math_ops, reduce_ops, check_numerics) against NumPy (linalg: specs/linalg.py).

Float references compute in float64 and round to the input dtype (so float16/bfloat16
are checked against correctly rounded values); integer references run in the dtype
itself, where NumPy wraps on overflow as tapeflow does.  Samplers cover the default
shapes (scalars, size 0), broadcasting pairs, random axis sets with keepdims, every
dtype an op allows, and edge values (NaN, +-inf, -0.0, integer extremes) in the
specs named ``special`` and ``wrap``.
"""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
from opspec import (
    BROADCAST_PAIRS,
    FLOATS,
    HALF,
    INTS,
    SHAPES,
    SIGNED,
    Spec,
    uniform,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
FH = FLOATS + HALF                  # float dtypes, half types included
NH = FH + INTS                      # numeric dtypes
AH = NH + ("bool",)                 # every dtype


def _np_dtype(d):
    return BF16 if d == "bfloat16" else np.dtype(d)


def _is_float(a) -> bool:
    return np.asarray(a).dtype.kind == "f" or np.asarray(a).dtype == BF16


try:    # scipy is in the full test environment (through scikit-learn); plain float64 fallbacks otherwise
    from scipy import special as _sp

    _erf, _erfc, _lgamma = _sp.erf, _sp.erfc, _sp.gammaln

    def _polygamma(m, x):
        return _sp.polygamma(m, x)
except ImportError:  # pragma: no cover - exercised only without scipy
    _erf = np.vectorize(math.erf, otypes=[np.float64])
    _erfc = np.vectorize(math.erfc, otypes=[np.float64])
    _lgamma = np.vectorize(math.lgamma, otypes=[np.float64])

    def _polygamma(m, x):
        """psi^(m)(x) for x > 0: shift up by the recurrence, then the asymptotic series."""
        b2k = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]

        def one(v):
            acc = 0.0
            while v < 20:
                acc += -1 / v if m == 0 else (-1) ** (m + 1) * math.factorial(m) / v ** (m + 1)
                v += 1
            if m == 0:
                return acc + math.log(v) - 0.5 / v - sum(b / (2 * k) / v ** (2 * k) for k, b in enumerate(b2k, 1))
            s = math.factorial(m - 1) / v ** m + math.factorial(m) / (2 * v ** (m + 1))
            s += sum(b * math.factorial(2 * k + m - 1) / math.factorial(2 * k) / v ** (2 * k + m)
                     for k, b in enumerate(b2k, 1))
            return acc + (-1) ** (m + 1) * s

        return np.vectorize(one, otypes=[np.float64])(x)


def _f64(fn):
    """A float reference: compute in float64, round to the dtype of the first array argument."""
    def ref(*args, **kwargs):
        dt = next(np.asarray(a).dtype for a in args if isinstance(a, np.ndarray))
        with np.errstate(all="ignore"):
            out = fn(*[a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
            return np.asarray(out).astype(dt)
    return ref


def _mixed(float_fn, int_fn=None):
    """float64 for floats, the dtype's own arithmetic for integers (and bool)."""
    f = _f64(float_fn)
    g = int_fn or float_fn

    def ref(*args, **kwargs):
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        if _is_float(arrays[0]):
            return f(*args, **kwargs)
        with np.errstate(all="ignore"):
            return np.asarray(g(*args, **kwargs)).astype(arrays[0].dtype)
    return ref


def _vals(rng, shape, dtype, lo=-3.0, hi=3.0):
    return uniform(rng, shape, dtype, lo, hi)


def _away(rng, shape, dtype, lo=0.3, hi=3.0):
    """Values with lo <= |v| < hi and a random sign (divisors, reciprocals)."""
    if dtype in INTS:
        v = rng.integers(1, 8, size=shape)
        if dtype != "uint8":
            v = np.asarray(v * rng.choice([-1, 1], size=shape))
        return v.astype(dtype)
    v = np.asarray(rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape))
    return v.astype(_np_dtype(dtype))


SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.5, -2.5, 3.0, 40.0, -40.0]


def _special(dtype):
    return np.array(SPECIAL, dtype=np.float64).astype(_np_dtype(dtype))


# ---- unary --------------------------------------------------------------------------------------

def _unary_sample(lo, hi, scalar_shapes=SHAPES):
    def sample(rng, dtype):
        return [((_vals(rng, s, dtype, lo, hi),), {}) for s in scalar_shapes] + \
               [((_vals(rng, (300, 150), dtype, lo, hi),), {})]   # parallel kernels (> 32768 elements)
    return sample


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# op, float64 reference, integer reference (None: floats only), domain, dtypes, second-order
UNARY = [
    ("negative", np.negative, np.negative, (-3, 3), NH),
    ("abs", np.abs, np.abs, (-3, 3), NH),
    ("sign", np.sign, np.sign, (-3, 3), NH),
    ("square", np.square, np.square, (-3, 3), NH),
    ("sqrt", np.sqrt, None, (0.1, 4), FH),
    ("rsqrt", lambda x: 1 / np.sqrt(x), None, (0.2, 4), FH),
    ("exp", np.exp, None, (-5, 5), FH),
    ("expm1", np.expm1, None, (-3, 3), FH),
    ("log", np.log, None, (0.05, 5), FH),
    ("log1p", np.log1p, None, (-0.9, 3), FH),
    ("sin", np.sin, None, (-3, 3), FH),
    ("cos", np.cos, None, (-3, 3), FH),
    ("tan", np.tan, None, (-1.2, 1.2), FH),
    ("asin", np.arcsin, None, (-0.9, 0.9), FH),
    ("acos", np.arccos, None, (-0.9, 0.9), FH),
    ("atan", np.arctan, None, (-3, 3), FH),
    ("sinh", np.sinh, None, (-3, 3), FH),
    ("cosh", np.cosh, None, (-3, 3), FH),
    ("tanh", np.tanh, None, (-4, 4), FH),
    ("asinh", np.arcsinh, None, (-3, 3), FH),
    ("acosh", np.arccosh, None, (1.2, 4), FH),
    ("atanh", np.arctanh, None, (-0.9, 0.9), FH),
    ("sigmoid", _sigmoid, None, (-6, 6), FH),
    ("relu", lambda x: np.maximum(x, 0), lambda x: np.maximum(x, 0), (-3, 3), NH),
    ("softplus", lambda x: np.logaddexp(0, x), None, (-6, 6), FH),
    ("elu", lambda x: np.where(x > 0, x, np.expm1(x)), None, (-3, 3), FH),
    ("selu", lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(x)), None, (-3, 3), FH),
    ("floor", np.floor, None, (-3, 3), FH),
    ("ceil", np.ceil, None, (-3, 3), FH),
    ("round", np.round, None, (-3, 3), FH),
    ("reciprocal", lambda x: 1 / x, None, None, FH),
    ("erf", _erf, None, (-2.5, 2.5), FH),
    ("erfc", _erfc, None, (-2.5, 2.5), FH),
    ("relu6", lambda x: np.clip(x, 0, 6), None, (-2, 8), FH),
    ("log_sigmoid", lambda x: -np.logaddexp(0, -x), None, (-6, 6), FH),
    ("silu", lambda x: x * _sigmoid(x), None, (-5, 5), FH),
    ("lgamma", _lgamma, None, (0.2, 5), FH),
    ("digamma", lambda x: _polygamma(0, x), None, (0.3, 5), FH),
    ("softsign", lambda x: x / (1 + np.abs(x)), None, (-3, 3), FH),
]


_PI_100 = ("3.14159265358979323846264338327950288419716939937510"
           "58209749445923078164062862089986280348253421170679")


def _gelu_exact(v: float) -> float:
    """gelu(v) = v / 2 * erfc(-v / sqrt 2) to double precision, independently of any libm: erf's
    Taylor series in 100-digit decimals (its cancellation costs < 25 digits for |v| <= 12)."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 100
        d = decimal.Decimal(v)
        z = -d / decimal.Decimal(2).sqrt()
        term, total, n = z, z, 0
        while abs(term) > decimal.Decimal(10) ** -90 * (1 + abs(total)):
            n += 1
            term = -term * z * z / n
            total += term / (2 * n + 1)
        erfc = 1 - 2 / decimal.Decimal(_PI_100).sqrt() * total
        return float(d / 2 * erfc)


_libm_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _gelu_decimal_ref(x):
    """The exact gelu of each element of x, element by element in decimals (few elements)."""
    x = np.asarray(x)
    out = np.array([_gelu_exact(float(v)) if np.isfinite(v) and abs(v) <= 12 else
                    (v if v > 12 else (-0.0 if v < -12 and np.isfinite(v) else 0.5 * v * (1 + np.sign(v))))
                    for v in x.astype(np.float64).ravel()], np.float64)
    return out.reshape(x.shape).astype(x.dtype)


def _gelu_ref(x):
    """gelu to about an ulp in float64, vectorized: erfc (libm's: scipy's is 60 ulp off in the far
    tail) of -x / sqrt 2 = t + e with the
    rounding error e of the product from Dekker's two-product, erfc(t + e) = erfc(t) - e 2/sqrt(pi) e**-t**2."""
    x64 = np.asarray(x, np.float64)
    c, c_lo = 0.70710678118654757, -4.8336466567264567e-17
    with np.errstate(all="ignore"):
        t = -x64 * c
        split = 134217729.0
        ah = (-x64 * split) - ((-x64 * split) - -x64)
        al = -x64 - ah
        bh = (c * split) - ((c * split) - c)
        bl = c - bh
        e = ((ah * bh - t) + ah * bl + al * bh) + al * bl + -x64 * c_lo
        corr = np.where(np.abs(t) < 27, e * (2 / np.sqrt(np.pi)) * np.exp(-t * t), 0.0)
        out = 0.5 * x64 * (_libm_erfc(t) - corr)
    return out.astype(np.asarray(x).dtype)


def _gelu_tanh_ref(x, approximate):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _unary_spec(op, f, fi, dom, dtypes):
    sample = _unary_sample(*dom) if dom else (
        lambda rng, dt: [((_away(rng, s, dt),), {}) for s in SHAPES])
    return Spec(op, _mixed(f, fi) if fi else _f64(f), sample, dtypes=dtypes)


def _special_unary(op, f):
    return Spec(op, _f64(f), lambda rng, dt: [((_special(dt),), {})], dtypes=FH, name="special", grad=False)


SPECS = [_unary_spec(*row) for row in UNARY]
SPECS += [_special_unary(op, f) for op, f, _, _, _ in UNARY
          if op not in ("lgamma", "digamma", "erf", "erfc", "gelu", "asin", "acos", "acosh", "atanh")]
SPECS += [
    # gelu: the exact form against a 100-digit reference to a few ulps in float64 (its tails
    # included: gelu(-10) = -7.6e-23), TensorFlow's tanh form (approximate=True) likewise
    Spec("gelu", _gelu_ref, _unary_sample(-10, 5), dtypes=FH, f64_tol=(2e-15, 0)),
    Spec("gelu", _gelu_decimal_ref, lambda rng, dt: [((np.array(
        [-12, -10, -9.5, -8, -5, -2.7, -1, -1e-3, -1e-300, -0.0, 0.0, 1e-3, 1, 2.7, 5, 9, 12], _np_dtype(dt)),), {})],
        dtypes=FH, f64_tol=(2e-15, 0), name="tails", grad=False),
    Spec("gelu", _f64(_gelu_tanh_ref), lambda rng, dt: [((_vals(rng, s, dt, -6, 6),), {"approximate": True})
                                                        for s in SHAPES], dtypes=FH, f64_tol=(1e-11, 0),
         name="approximate"),
    _special_unary("gelu", _gelu_decimal_ref),
    Spec("leaky_relu", _f64(lambda x, alpha: np.where(x > 0, x, alpha * x)),
         lambda rng, dt: [((_vals(rng, s, dt),), {"alpha": a}) for s, a in zip(SHAPES, [0.2, 0.1, 0.3] * 3)],
         dtypes=FH),
    Spec("polygamma", lambda m, x: _f64(lambda v: _polygamma(m, v))(x),
         lambda rng, dt: [((m, _vals(rng, s, dt, 0.5, 5)), {}) for m in (1, 2, 3) for s in SHAPES[:6]],
         dtypes=FH),
    Spec("digamma", _f64(lambda x: _polygamma(0, x)),
         lambda rng, dt: [((np.array([-2.5, -0.5, -1.25, 0.75, 7.5, 30.0], _np_dtype(dt)),), {})],
         dtypes=FLOATS, name="negative", grad=False),
    # bool outputs and integer-only ops
    Spec("is_nan", np.isnan, lambda rng, dt: [((_special(dt),), {}), ((_vals(rng, (3, 4), dt),), {})],
         dtypes=FH, exact=True),
    Spec("is_inf", np.isinf, lambda rng, dt: [((_special(dt),), {}), ((_vals(rng, (3, 4), dt),), {})],
         dtypes=FH, exact=True),
    Spec("is_finite", np.isfinite, lambda rng, dt: [((_special(dt),), {}), ((_vals(rng, (3, 4), dt),), {})],
         dtypes=FH, exact=True),
    Spec("logical_not", np.logical_not, lambda rng, dt: [((_vals(rng, s, dt),), {}) for s in SHAPES],
         dtypes=("bool",), exact=True),
    Spec("bitwise_not", np.invert, lambda rng, dt: [((_vals(rng, s, dt),), {}) for s in SHAPES]
         + [((np.array([0, 1, -1 if dt in SIGNED else 7], dt) if dt != "bool" else np.array([True, False]),), {})],
         dtypes=INTS + ("bool",), exact=True),
]


def _wrap_values(dt):
    info = np.iinfo(dt)
    return np.array([info.min, info.max, info.min + 1, info.max - 1, -1 if info.min else 1, 0, 7], dt)


SPECS += [Spec(op, f, lambda rng, dt: [((_wrap_values(dt),), {})], dtypes=INTS, name="wrap", exact=True)
          for op, f in (("negative", np.negative), ("abs", np.abs), ("square", np.square), ("sign", np.sign))]


# ---- binary -------------------------------------------------------------------------------------

def _binary_sample(xs=_vals, ys=_vals, pairs=BROADCAST_PAIRS):
    def sample(rng, dtype):
        return [((xs(rng, sa, dtype), ys(rng, sb, dtype)), {}) for sa, sb in pairs] + \
               [((xs(rng, (300, 150), dtype), ys(rng, (150,), dtype)), {})]
    return sample


def _pos(lo, hi):
    return lambda rng, shape, dt: _vals(rng, shape, dt, lo, hi)


def _small_ints(lo, hi):
    """Floats and ints from a few integers, so that comparisons meet ties."""
    def f(rng, shape, dt):
        v = rng.integers(lo, hi, size=shape)
        if dt == "bool":
            return v % 2 == 0
        if dt == "uint8":
            v = np.abs(v)
        return np.asarray(v).astype(_np_dtype(dt))
    return f


def _pow_base(rng, shape, dt):
    if dt in INTS:
        return rng.integers(0 if dt == "uint8" else -4, 5, size=shape).astype(dt)
    return _vals(rng, shape, dt, 0.5, 2.5)


def _pow_exp(rng, shape, dt):
    if dt in INTS:
        return rng.integers(0, 4, size=shape).astype(dt)
    return _vals(rng, shape, dt, -2, 2)


def _float32_for_half(fn):
    """NumPy's own float loops (floor division rounds x / y in the dtype); half types through float32."""
    def ref(x, y):
        with np.errstate(all="ignore"):
            if x.dtype == BF16 or x.dtype == np.float16:
                return fn(x.astype(np.float32), y.astype(np.float32)).astype(x.dtype)
            return fn(x, y)
    return ref


def _trunc_div(x, y):
    if _is_float(x):
        return np.trunc(x / y)
    x, y = np.broadcast_arrays(x, y)
    bits, signed = 8 * x.dtype.itemsize, x.dtype.kind == "i"
    out = []
    for a, b in zip(x.ravel().tolist(), y.ravel().tolist()):
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        q %= 2 ** bits                                    # wrap like the dtype (INT_MIN // -1)
        out.append(q - 2 ** bits if signed and q >= 2 ** (bits - 1) else q)
    return np.array(out, dtype=x.dtype).reshape(x.shape)


def _shift(rng, shape, dt):
    return rng.integers(-2, 8 * np.dtype(dt).itemsize + 2, size=shape).astype(dt) if dt != "uint8" else \
        rng.integers(0, 10, size=shape).astype(dt)


BINARY = [
    # op, reference, x sampler, y sampler, dtypes, exact
    ("add", _mixed(np.add), _vals, _vals, NH),
    ("subtract", _mixed(np.subtract), _vals, _vals, NH),
    ("multiply", _mixed(np.multiply), _vals, _vals, NH),
    ("real_div", _f64(np.divide), _vals, _away, FH),
    ("floordiv", _float32_for_half(np.floor_divide), _vals, _away, NH),
    ("floormod", _float32_for_half(np.mod), _vals, _away, NH),
    ("truncatediv", _float32_for_half(_trunc_div), _vals, _away, NH),
    ("truncatemod", _float32_for_half(np.fmod), _vals, _away, NH),
    ("pow", _mixed(np.power), _pow_base, _pow_exp, NH),
    ("maximum", _mixed(np.maximum), _vals, _vals, NH),
    ("minimum", _mixed(np.minimum), _vals, _vals, NH),
    ("atan2", _f64(np.arctan2), _vals, _away, FH),
    ("squared_difference", _mixed(lambda x, y: (x - y) ** 2, lambda x, y: (x - y) * (x - y)), _vals, _vals, NH),
    ("div_no_nan", _f64(lambda x, y: np.where(y == 0, 0.0, x / np.where(y == 0, 1, y))), _vals, _away, FH),
    ("relu_grad", _f64(lambda g, x: np.where(x > 0, g, 0.0)), _vals, _vals, FH),
    ("tanh_grad", _f64(lambda g, y: g * (1 - y * y)), _vals, _pos(-0.99, 0.99), FH),
    ("sigmoid_grad", _f64(lambda g, y: g * y * (1 - y)), _vals, _pos(0.01, 0.99), FH),
]
_CMP = [("equal", np.equal, AH), ("not_equal", np.not_equal, AH), ("less", np.less, NH),
        ("less_equal", np.less_equal, NH), ("greater", np.greater, NH), ("greater_equal", np.greater_equal, NH)]


def _binary_spec(op, ref, xs, ys, dtypes):
    return Spec(op, ref, _binary_sample(xs, ys), dtypes=dtypes)


SPECS += [_binary_spec(*row) for row in BINARY]
SPECS += [Spec(op, lambda x, y, _f=f: _f(x, y), _binary_sample(_small_ints(-2, 3), _small_ints(-2, 3)),
               dtypes=dtypes, exact=True) for op, f, dtypes in _CMP]
SPECS += [Spec(op, f, _binary_sample(_small_ints(0, 2), _small_ints(0, 2)), dtypes=("bool",), exact=True)
          for op, f in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                        ("logical_xor", np.logical_xor))]
SPECS += [Spec(op, f, _binary_sample(_small_ints(-60, 60), _small_ints(-60, 60)), dtypes=INTS + ("bool",),
               exact=True) for op, f in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                                         ("bitwise_xor", np.bitwise_xor))]
SPECS += [Spec(op, f, _binary_sample(_small_ints(-60, 60), _shift), dtypes=INTS, exact=True)
          for op, f in (("left_shift", np.left_shift), ("right_shift", np.right_shift))]


def _special_pair(dt):
    v = np.array(SPECIAL, np.float64)
    x, y = np.meshgrid(v, v)
    return x.astype(_np_dtype(dt)), y.astype(_np_dtype(dt))


SPECS += [Spec(op, ref, lambda rng, dt: [(_special_pair(dt), {})], dtypes=FH, name="special", grad=False)
          for op, ref in (("add", _f64(np.add)), ("multiply", _f64(np.multiply)), ("real_div", _f64(np.divide)),
                          ("floordiv", _float32_for_half(np.floor_divide)), ("floormod", _float32_for_half(np.mod)),
                          ("maximum", _f64(np.maximum)), ("minimum", _f64(np.minimum)),
                          ("pow", _f64(np.power)), ("atan2", _f64(np.arctan2)))]


def _quiet(fn):
    def ref(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return ref


def _int_extremes(rng, dt):
    v = _wrap_values(dt)
    x, y = np.meshgrid(v, v)
    return x, y


def _nonzero_extremes(rng, dt):
    x, y = _int_extremes(rng, dt)
    return x, np.where(y == 0, 3, y).astype(dt)


SPECS += [Spec(op, lambda x, y, _f=f: _f(x, y), lambda rng, dt, _s=s: [(_s(rng, dt), {})], dtypes=INTS,
               name="wrap", exact=True)
          for op, f, s in (("add", np.add, _int_extremes), ("subtract", np.subtract, _int_extremes),
                           ("multiply", np.multiply, _int_extremes),
                           ("squared_difference", lambda x, y: (x - y) * (x - y), _int_extremes),
                           ("floordiv", _quiet(np.floor_divide), _nonzero_extremes),
                           ("floormod", _quiet(np.mod), _nonzero_extremes),
                           ("truncatediv", _trunc_div, _nonzero_extremes), ("truncatemod", np.fmod, _nonzero_extremes),
                           ("maximum", np.maximum, _int_extremes), ("minimum", np.minimum, _int_extremes))]


def _pow_wrap(rng, dt):
    x = np.array([3, -3, 2, -1, -1, 1, 0, 7], dt if dt in SIGNED else "int64")
    y = np.array([5, 7, 9, -1, -2, -5, 0, 11], "int64")
    if dt not in SIGNED:
        x, y = np.abs(x), np.abs(y)
    return x.astype(dt), y.astype(dt)


def _pow_ref(x, y):
    # NumPy refuses negative integer powers; the only defined ones are of +-1
    out = np.power(x, np.abs(y))
    return np.where(y < 0, np.where(np.abs(x) == 1, np.where(y % 2 == 0, 1, x), 0), out).astype(x.dtype)


SPECS.append(Spec("pow", _pow_ref, lambda rng, dt: [(_pow_wrap(rng, dt), {})], dtypes=INTS, name="wrap",
                  exact=True))
SPECS.append(Spec("div_no_nan", _f64(lambda x, y: np.where(y == 0, 0.0, x / np.where(y == 0, 1, y))),
                  _binary_sample(_vals, _small_ints(-1, 2)), dtypes=FH, name="zeros", grad=False))


def _with_zeros(rng, shape, dt, values):
    """``values`` with about a third of the entries replaced by 0."""
    return np.where(rng.random(shape) < 0.3, 0, values(rng, shape, dt)).astype(_np_dtype(dt))


def _truediv_ref(x, y):
    if _is_float(x):
        return _f64(np.true_divide)(x, y)
    target = np.float64 if np.dtype(x.dtype).itemsize >= 4 else np.float32
    return (x.astype(np.float64) / y.astype(np.float64)).astype(target)


SPECS += [
    Spec("truediv", _truediv_ref, _binary_sample(_vals, _away), dtypes=NH),
    Spec("xlogy", _f64(lambda x, y: np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1, y)))),
         lambda rng, dt: [((_with_zeros(rng, sa, dt, _vals), _vals(rng, sb, dt, 0.2, 3)), {})
                          for sa, sb in BROADCAST_PAIRS], dtypes=FH, name="zeros", grad=False),
    Spec("xlogy", _f64(lambda x, y: x * np.log(y)), _binary_sample(_away, _pos(0.2, 3)), dtypes=FLOATS),
    Spec("xdivy", _f64(lambda x, y: np.where(x == 0, 0.0, x / np.where(x == 0, 1, y))),
         lambda rng, dt: [((_with_zeros(rng, sa, dt, _vals), _with_zeros(rng, sb, dt, _away)), {})
                          for sa, sb in BROADCAST_PAIRS], dtypes=FH, name="zeros", grad=False),
    Spec("xdivy", _f64(lambda x, y: x / y), _binary_sample(_away, _away), dtypes=FLOATS),
    Spec("multiply_no_nan", _f64(lambda x, y: np.where(y == 0, 0.0, x * y)),
         lambda rng, dt: [((np.where(rng.random(sa) < 0.2, np.inf, _vals(rng, sa, dt)).astype(_np_dtype(dt)),
                            _with_zeros(rng, sb, dt, _vals)), {}) for sa, sb in BROADCAST_PAIRS],
         dtypes=FH, name="zeros", grad=False),
    Spec("multiply_no_nan", _f64(np.multiply), _binary_sample(_vals, _away), dtypes=FLOATS),
    Spec("reciprocal_no_nan", _f64(lambda x: np.where(x == 0, 0.0, 1 / np.where(x == 0, 1, x))),
         lambda rng, dt: [((_with_zeros(rng, s, dt, _away),), {}) for s in SHAPES], dtypes=FH, name="zeros",
         grad=False),
    Spec("reciprocal_no_nan", _f64(lambda x: 1 / x), lambda rng, dt: [((_away(rng, s, dt),), {}) for s in SHAPES],
         dtypes=FLOATS),
    Spec("scalar_mul", _mixed(lambda a, x: a * x), lambda rng, dt: [((2, _vals(rng, s, dt)), {}) for s in SHAPES],
         dtypes=NH),
    Spec("add_n", _mixed(lambda *xs: sum(xs[1:], xs[0])),
         lambda rng, dt: [(tuple(_vals(rng, s, dt) for _ in range(n)), {}) for s in SHAPES for n in (1, 3)],
         fn=lambda tf, *xs: tf.add_n([tf.convert_to_tensor(x) for x in xs]), dtypes=NH),
]


# ---- clipping -------------------------------------------------------------------------------------

def _clip_sample(rng, dt):
    lo, hi = (-1, 2) if dt in INTS else (-1.0, 2.0)
    if dt == "uint8":
        lo, hi = 2, 6
    cases = [((_vals(rng, s, dt), lo, hi), {}) for s in SHAPES]
    # tensor bounds broadcast against t
    lo_t = _vals(rng, (4,), dt, -2, 0)
    hi_t = (lo_t.astype(np.float64) + rng.integers(1, 4, size=(4,))).astype(lo_t.dtype)
    cases.append(((_vals(rng, (3, 4), dt), lo_t, hi_t), {}))
    return cases


def _clip_ref(x, lo, hi):
    if _is_float(x):
        return _f64(lambda a, b, c: np.minimum(np.maximum(a, b), c))(x, np.asarray(lo, np.float64),
                                                                    np.asarray(hi, np.float64))
    return np.minimum(np.maximum(x, np.asarray(lo, x.dtype)), np.asarray(hi, x.dtype)).astype(x.dtype)


def _clip_norm_ref(t, c, axes=None):
    t64 = t.astype(np.float64)
    n = np.sqrt(np.sum(t64 * t64, axis=None if axes is None else tuple(np.atleast_1d(axes)), keepdims=True))
    return (t64 * c / np.maximum(n, c)).astype(t.dtype)


def _global_norm_ref(*ts):
    return np.asarray(np.sqrt(sum(np.sum(t.astype(np.float64) ** 2) for t in ts))).astype(ts[0].dtype)


def _clip_global_ref(c, *ts):
    g = np.sqrt(sum(np.sum(t.astype(np.float64) ** 2) for t in ts))
    return [(t.astype(np.float64) * c / max(g, c)).astype(t.dtype) for t in ts], np.asarray(g).astype(ts[0].dtype)


SPECS += [
    Spec("clip_by_value", _clip_ref, _clip_sample, dtypes=NH),
    Spec("clip_by_norm", _clip_norm_ref,
         lambda rng, dt: [((_vals(rng, s, dt), c), {} if ax is None else {"axes": ax})
                          for s, c, ax in [((5,), 1.0, None), ((3, 4), 2.0, None), ((3, 4), 100.0, None),
                                           ((2, 3, 4), 1.5, 1), ((2, 3, 4), 1.0, [0, 2]), ((0, 3), 1.0, None),
                                           ((), 0.5, None)]],
         dtypes=FH),
    Spec("global_norm", _global_norm_ref,
         lambda rng, dt: [(tuple(_vals(rng, s, dt) for s in shapes), {})
                          for shapes in [[(3,)], [(2, 3), (4,), ()], [(0, 2), (3,)]]],
         fn=lambda tf, *ts: tf.linalg.global_norm([tf.convert_to_tensor(t) for t in ts]), dtypes=FH),
    Spec("clip_by_global_norm", _clip_global_ref,
         lambda rng, dt: [((c,) + tuple(_vals(rng, s, dt) for s in shapes), {})
                          for c, shapes in [(1.0, [(3,)]), (2.0, [(2, 3), (4,), ()]), (100.0, [(3, 2), (2,)])]],
         fn=lambda tf, c, *ts: tf.clip_by_global_norm([tf.convert_to_tensor(t) for t in ts], c), dtypes=FH),
]


# ---- reductions -----------------------------------------------------------------------------------

RED_SHAPES = [(), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0, 3), (3, 0), (4, 0, 2)]
BIG_CASES = [((300, 200), None), ((300, 200), 0), ((300, 200), 1), ((2, 30000, 3), 1), ((1, 40000, 3), [0, 1]),
             ((40000, 3), [0, 1])]


def _axes_cases(rng, shape):
    nd = len(shape)
    out = [None, []]
    if nd:
        out.append(int(rng.integers(-nd, nd)))
        k = int(rng.integers(1, nd + 1))
        out.append(sorted(int(a) for a in rng.choice(nd, size=k, replace=False)))
        if nd > 2:
            out.append([0, nd - 1])   # non-adjacent axes: a transpose first
    return out


def _reduce_sample(values=_vals, big=True):
    def sample(rng, dtype):
        cases = []
        for shape in RED_SHAPES:
            for axes in _axes_cases(rng, shape):
                cases.append(((values(rng, shape, dtype),), {"axis": axes, "keepdims": bool(rng.random() < 0.5)}))
        if big:
            cases += [((values(rng, s, dtype),), {"axis": a, "keepdims": False}) for s, a in BIG_CASES]
        return cases
    return sample


def _np_axis(axis):
    return None if axis is None else (tuple(axis) if isinstance(axis, list) else axis)


def _red_size(x, axis):
    if axis is None:
        return x.size
    axes = [axis] if isinstance(axis, int) else axis
    return int(np.prod([x.shape[a] for a in axes])) if axes else 1


def _sum_ref(x, axis=None, keepdims=False):
    ax = _np_axis(axis)
    if _is_float(x):
        return np.sum(x.astype(np.float64), axis=ax, keepdims=keepdims).astype(x.dtype)
    return np.asarray(np.sum(x, axis=ax, keepdims=keepdims, dtype=x.dtype))


def _prod_ref(x, axis=None, keepdims=False):
    ax = _np_axis(axis)
    with np.errstate(all="ignore"):
        if _is_float(x):
            return np.prod(x.astype(np.float64), axis=ax, keepdims=keepdims).astype(x.dtype)
        return np.asarray(np.prod(x, axis=ax, keepdims=keepdims, dtype=x.dtype))


def _mean_ref(x, axis=None, keepdims=False):
    ax = _np_axis(axis)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the mean of an empty slice is NaN
        if _is_float(x):
            return np.asarray(np.mean(x.astype(np.float64), axis=ax, keepdims=keepdims)).astype(x.dtype)
        n = _red_size(x, axis)
        s = np.sum(x.astype(np.int64), axis=ax, keepdims=keepdims)
        return np.asarray(np.trunc(s / n) if n else np.zeros_like(s)).astype(x.dtype)


def _extreme_ref(fn, empty):
    def ref(x, axis=None, keepdims=False):
        ax = _np_axis(axis)
        xx = x.astype(np.float64) if _is_float(x) else x
        if _red_size(x, axis) == 0:
            shape = np.sum(np.zeros(x.shape), axis=ax, keepdims=keepdims).shape
            if x.dtype == bool:
                v = empty == "hi"
            elif _is_float(x):
                v = -np.inf if empty == "lo" else np.inf
            else:
                info = np.iinfo(x.dtype)
                v = info.min if empty == "lo" else info.max
            return np.full(shape, v).astype(x.dtype)
        return np.asarray(fn(xx, axis=ax, keepdims=keepdims)).astype(x.dtype)
    return ref


def _prod_values(rng, shape, dt):
    if dt in INTS:
        return rng.integers(-3 if dt != "uint8" else 0, 4, size=shape).astype(dt)
    return np.asarray(rng.uniform(0.7, 1.4, size=shape) * rng.choice([-1.0, 1.0], size=shape)).astype(_np_dtype(dt))


def _near_one(rng, shape, dt):
    if dt in INTS:
        return rng.choice(np.array([1, 1, 1, -1] if dt != "uint8" else [1], dtype=dt), size=shape)
    return (1 + rng.uniform(-1e-3, 1e-3, size=shape)).astype(_np_dtype(dt))


def _distinct(rng, shape, dt):
    """Values without ties (max/min gradients are only defined there)."""
    n = int(np.prod(shape))
    v = rng.permutation(n).reshape(shape) - n // 2
    if dt in INTS:
        v = v % 120 if dt in ("int8", "uint8") else v
        return v.astype(dt)
    return np.asarray(v * 0.25 + rng.uniform(-0.05, 0.05, size=shape)).astype(_np_dtype(dt))


def _logsumexp_ref(x, axis=None, keepdims=False):
    ax = _np_axis(axis)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x64, axis=ax, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0.0)
        out = np.log(np.sum(np.exp(x64 - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=ax) if ax is not None else out.reshape(())
    return np.asarray(out).astype(x.dtype)


def _moment_ref(fn):
    def ref(x, axis=None, keepdims=False):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # empty slices give NaN
            return np.asarray(fn(x.astype(np.float64), axis=_np_axis(axis), keepdims=keepdims)).astype(x.dtype)
    return ref


def _euclid_ref(x, axis=None, keepdims=False):
    s = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=_np_axis(axis), keepdims=keepdims))
    return np.asarray(np.trunc(s) if not _is_float(x) else s).astype(x.dtype)


def _count_ref(x, axis=None, keepdims=False, dtype="int64"):
    return np.asarray(np.sum(x != 0, axis=_np_axis(axis), keepdims=keepdims)).astype(dtype)


SPECS += [
    Spec("reduce_sum", _sum_ref, _reduce_sample(), dtypes=NH),
    Spec("reduce_prod", _prod_ref, _reduce_sample(_prod_values, big=False), dtypes=NH),
    Spec("reduce_prod", _prod_ref,   # the threaded paths, on values whose products stay finite
         lambda rng, dt: [((_near_one(rng, s, dt),), {"axis": a}) for s, a in BIG_CASES], dtypes=NH, name="big",
         grad=False, rtol=1e-4),
    Spec("reduce_prod", _prod_ref,
         lambda rng, dt: [((np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.5, 2.0, -1.0]], _np_dtype(dt)),),
                           {"axis": a}) for a in (0, 1, None)], dtypes=FH, name="zeros"),
    Spec("reduce_mean", _mean_ref, _reduce_sample(), dtypes=NH),
    Spec("reduce_max", _extreme_ref(np.max, "lo"), _reduce_sample(_distinct), dtypes=NH + ("bool",)),
    Spec("reduce_min", _extreme_ref(np.min, "hi"), _reduce_sample(_distinct), dtypes=NH + ("bool",)),
    Spec("reduce_max", _extreme_ref(np.max, "lo"),
         lambda rng, dt: [((_special(dt).reshape(3, 4),), {"axis": a}) for a in (0, 1, None)], dtypes=FH,
         name="special", grad=False),
    Spec("reduce_min", _extreme_ref(np.min, "hi"),
         lambda rng, dt: [((_special(dt).reshape(3, 4),), {"axis": a}) for a in (0, 1, None)], dtypes=FH,
         name="special", grad=False),
    Spec("reduce_any", lambda x, axis=None, keepdims=False: np.any(x, axis=_np_axis(axis), keepdims=keepdims),
         _reduce_sample(), dtypes=("bool",), exact=True),
    Spec("reduce_all", lambda x, axis=None, keepdims=False: np.all(x, axis=_np_axis(axis), keepdims=keepdims),
         _reduce_sample(), dtypes=("bool",), exact=True),
    Spec("reduce_logsumexp", _logsumexp_ref, _reduce_sample(big=False), dtypes=FH),
    Spec("reduce_logsumexp", _logsumexp_ref,
         lambda rng, dt: [((np.array([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf]], _np_dtype(dt)),),
                           {"axis": 1})], dtypes=FLOATS, name="special", grad=False),
    Spec("reduce_variance", _moment_ref(np.var), _reduce_sample(big=False), dtypes=FH),
    Spec("reduce_std", _moment_ref(np.std), _reduce_sample(_distinct, big=False), dtypes=FH),
    Spec("reduce_euclidean_norm", _euclid_ref, _reduce_sample(big=False), dtypes=NH),
    Spec("count_nonzero", _count_ref, _reduce_sample(_small_ints(-1, 2), big=False), dtypes=AH, exact=True,
         grad=False),
    Spec("count_nonzero", _count_ref,
         lambda rng, dt: [((_small_ints(-1, 2)(rng, (3, 4), dt),), {"axis": 0, "dtype": "int32"})],
         dtypes=NH, name="int32", exact=True, grad=False),
]


def _arg_sample(rng, dt):
    cases = []
    for shape in [(5,), (3, 4), (2, 3, 4), (4, 1), (1, 6), (2000, 30)]:
        for axis in range(-len(shape), len(shape)):
            cases.append(((_small_ints(-3, 4)(rng, shape, dt),), {"axis": axis}))
    cases.append(((_small_ints(-3, 4)(rng, (3, 4), dt),), {}))
    cases.append(((_small_ints(-3, 4)(rng, (3, 4), dt),), {"axis": 1, "output_type": "int32"}))
    if dt in FH:
        cases.append(((_special(dt).reshape(3, 4),), {"axis": 1}))
        cases.append(((np.array([1.0, np.nan, 3.0, np.nan], _np_dtype(dt)),), {}))
    return cases


def _arg_ref(fn):
    def ref(x, axis=None, output_type="int64"):
        xx = x.astype(np.float64) if x.dtype == BF16 else x
        return np.asarray(fn(xx, axis=0 if axis is None else axis)).astype(output_type)
    return ref


SPECS += [Spec("argmax", _arg_ref(np.argmax), _arg_sample, dtypes=AH, exact=True),
          Spec("argmin", _arg_ref(np.argmin), _arg_sample, dtypes=AH, exact=True)]


# ---- matmul, cast ---------------------------------------------------------------------------------

MATMUL_CASES = [((3, 4), (4, 5), False, False), ((4, 3), (4, 5), True, False), ((3, 4), (5, 4), False, True),
                ((4, 3), (5, 4), True, True), ((2, 3, 4), (2, 4, 5), False, False), ((3, 4), (2, 4, 5), False, False),
                ((2, 3, 4), (4, 5), False, False), ((2, 1, 3, 4), (5, 4, 2), False, False),
                ((2, 4, 3), (1, 2, 5, 4), True, True), ((0, 3), (3, 4), False, False), ((3, 0), (0, 4), False, False),
                ((2, 0, 3), (2, 3, 4), False, False), ((1, 1), (1, 1), False, False), ((64, 48), (48, 40), False, False)]


def _matmul_sample(rng, dt):
    return [((_vals(rng, sa, dt, -2, 2), _vals(rng, sb, dt, -2, 2)), {"transpose_a": ta, "transpose_b": tb})
            for sa, sb, ta, tb in MATMUL_CASES]


def _matmul_ref(a, b, transpose_a=False, transpose_b=False):
    a = np.swapaxes(a, -1, -2) if transpose_a else a
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    if _is_float(a):
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    return np.matmul(a, b)


def _matmul_wrap(rng, dt):
    info = np.iinfo(dt)
    a = np.array([[info.max, info.max], [info.min, 3]], dt)
    return [((a, a.T.copy()), {})]


def _cast_sample(rng, dt):
    cases = []
    for target in AH:
        for shape in [(3, 4), (), (0,)]:
            if dt in FH:
                x = _vals(rng, shape, dt, -300, 300)
            else:
                x = _vals(rng, shape, dt)
            cases.append(((x,), {"dtype": target}))
        if dt in FH:
            cases.append(((_special(dt),), {"dtype": target}))
        elif dt != "bool":
            cases.append(((_wrap_values(dt),), {"dtype": target}))
    return cases


def _cast_ref(x, dtype):
    """Float to integer truncates toward zero and saturates (NaN -> 0); integers wrap; anything -> bool is x != 0."""
    target = _np_dtype(dtype)
    if _is_float(x) and target.kind in "iu":
        info = np.iinfo(target)
        v = np.trunc(x.astype(np.float64))
        v = np.where(np.isnan(v), 0.0, v)
        hi, lo = v >= float(info.max), v <= float(info.min)
        mid = np.where(hi | lo, 0.0, v).astype(target)
        return np.where(hi, info.max, np.where(lo, info.min, mid)).astype(target)
    with np.errstate(all="ignore"):
        return x.astype(target)


def _cast_float_sample(rng, dt):
    # float32 -> float64 (smooth; the rule casts the gradient back) and the float32 identity
    return [((_vals(rng, s, dt),), {"dtype": t}) for s in [(3, 4), (5,), ()] for t in ("float64", "float32")]


SPECS += [
    Spec("matmul", _matmul_ref, _matmul_sample, dtypes=NH),
    Spec("matmul", _matmul_ref, lambda rng, dt: _matmul_wrap(rng, dt), dtypes=INTS, name="wrap", exact=True),
    Spec("cast", _cast_ref, _cast_sample, dtypes=AH, grad=False, name="pairs"),
    Spec("cast", _cast_ref, _cast_float_sample, dtypes=("float32",), name="float"),
]
