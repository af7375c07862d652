"""Gradients of the complex ops (``complex_ops``) and of tf.signal's transforms (``fft_ops``), as TensorFlow's.

TensorFlow's convention for complex numbers: the gradient of a real loss L with respect to z = x + iy is
dL/dx + i dL/dy.  For an op holomorphic in its inputs (multiply, divide, exp, matmul) that is the upstream
gradient times the conjugate of the derivative, so the real rules hold with every input and output
conjugated: ``_conjugated`` wraps them so.  add, subtract, negative and reduce_sum use no input values and
hold as they are.

The transforms are linear: fft's gradient is n * ifft(g), ifft's fft(g) / n (n: the points of the
transformed axes); rfft's is the real part of n * ifft of g zero-extended to the full spectrum (the
frequencies rfft drops had zero gradient); irfft's is rfft(g) / n with the frequencies that stand for two
(all but the zero and, for an even length, the Nyquist one) doubled.
"""
from __future__ import annotations

from tapeflow.core.ops import cast, complex, conj, div_no_nan, imag, multiply, negative, real, real_div, zeros_like
from tapeflow.core.ops import fft_ops as _f
from tapeflow.core.ops.array_ops import constant, pad

from ..registry import GRADIENTS, PER_INPUT, defgrad
from . import math as _math_rules  # noqa: F401  (the real rules this module wraps are registered first)


def _conjugated(op: str):
    """Re-register ``op``'s rules so complex inputs see conjugated inputs and output."""
    fns, rule = PER_INPUT.get(op), GRADIENTS[op]
    HOLOMORPHIC[op] = (fns, rule)
    if fns is None:

        def whole(g, ans, *ins, **attrs):
            if ins[0]._dtype.is_complex:
                return rule(g, conj(ans), *(conj(t) for t in ins), **attrs)
            return rule(g, ans, *ins, **attrs)

        defgrad(op)(whole)
        return

    def wrap(f):
        def per(g, ans, *ins, **attrs):
            if ins[0]._dtype.is_complex:
                return f(g, conj(ans), *(conj(t) for t in ins), **attrs)
            return f(g, ans, *ins, **attrs)
        return per

    defgrad(op, *(wrap(f) for f in fns))


#: op -> (per-input rules or None, rule): the unconjugated rules of the ops ``_conjugated`` wraps, which
#: forward mode applies to complex tangents (t * f'(z))
HOLOMORPHIC: dict = {}

for _op in ("multiply", "real_div", "exp", "matmul"):
    _conjugated(_op)


# ---- complex, real, imag, conj, angle, abs, cast ------------------------------------

defgrad("complex", lambda g, ans, re, im: real(g), lambda g, ans, re, im: imag(g))
defgrad("real", lambda g, ans, x: (complex(g, zeros_like(g)),))
defgrad("imag", lambda g, ans, x: (complex(zeros_like(g), g),))
defgrad("conj", lambda g, ans, x: (conj(g),))


@defgrad("angle")
def _angle_grad(g, ans, x):
    # d angle = (x dy - y dx) / |z|^2: -g / (im + i re) as TensorFlow writes it
    z = complex(imag(x), real(x))
    return (negative(real_div(complex(g, zeros_like(g)), z)),)


_real_abs = GRADIENTS["abs"]


@defgrad("abs")
def _abs_grad(g, ans, x):
    if x._dtype.is_complex:  # TensorFlow's ComplexAbs: g * z / |z| (0 at z = 0)
        s = div_no_nan(g, ans)
        return (multiply(complex(s, zeros_like(s)), x),)
    return _real_abs(g, ans, x)


_real_cast = GRADIENTS["cast"]
_CASTABLE = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


@defgrad("cast")
def _cast_grad(g, ans, x, dtype):
    # TensorFlow: between float and complex dtypes the gradient is cast back (complex -> real keeps the real part)
    if (x._dtype.is_complex or dtype.is_complex) and x._dtype.name in _CASTABLE and dtype.name in _CASTABLE:
        return (cast(g, x._dtype),)
    return _real_cast(g, ans, x, dtype)


# ---- transforms -----------------------------------------------------------------------

def _points(shape, rank):
    n = 1
    for d in shape[-rank:]:
        n *= d
    return n


def _scale(t, s):
    return multiply(t, s)


def _c2c_grad(rank, inverse):
    other = _f.C2C[(rank, not inverse)]

    def rule(g, ans, x):
        n = _points(x._shape, rank)
        return (_scale(other(g), n if not inverse else 1.0 / max(n, 1)),)
    return rule


for (_rank, _inv), _fn in _f.C2C.items():
    defgrad(_fn.__name__, _c2c_grad(_rank, _inv))


def _rfft_grad(rank):
    ifft_n = _f.C2C[(rank, True)]

    def rule(g, ans, x, fft_length):
        n = fft_length[-1]
        kept = g._shape[-1]
        full = pad(g, [[0, 0]] * (len(g._shape) - 1) + [[0, n - kept]]) if n > kept else g
        return (_scale(real(ifft_n(full)), float(_points(x._shape, rank))),)
    return rule


def _irfft_grad(rank):
    rfft_n = _f.RFFTS[(rank, False)]

    def rule(g, ans, x, fft_length):
        n = fft_length[-1]
        m = n // 2 + 1
        rdt = g._dtype
        ones = [1.0] * m
        for k in range(1, m):
            if not (n % 2 == 0 and k == n // 2):
                ones[k] = 2.0
        mask = constant(ones, rdt)
        mask = complex(mask, zeros_like(mask))
        y = rfft_n(g, list(fft_length))
        return (_scale(multiply(y, mask), 1.0 / max(_points(g._shape, rank), 1)),)
    return rule


for (_rank, _inv), _fn in _f.RFFTS.items():
    defgrad(_fn.__name__, _irfft_grad(_rank) if _inv else _rfft_grad(_rank))
