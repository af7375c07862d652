"""Gradients of core's math ops (``tapeflow.core.ops.math_ops``, ``linalg_ops`` and
``check_numerics``), in the order of those modules.

Rules reuse the op's output where that saves work (exp, sqrt, rsqrt, reciprocal,
tan; tanh, sigmoid and relu through their fused ``*_grad`` kernels), are written
with tapeflow ops so they differentiate again, and ignore broadcasting (the tape
sums each gradient back to its input's shape).  Binary ops give one function per
input, so the tape computes only the gradients a source needs.  floor, ceil,
round, floordiv, truncatediv, comparisons, logical and bitwise ops, argmax/argmin
and is_nan & co. are declared ``nondiff`` in core; composites (clip_by_value,
reduce_logsumexp, norm, einsum, band_part, logdet, ...) are recorded as the primitives
they call.  The linear-algebra rules (inv, det, slogdet, solve, triangular_solve,
cholesky) are TensorFlow's, written with matmul and the solves themselves.
"""
from __future__ import annotations

import math as _math

from tapeflow.core.debugging import check_numerics
from tapeflow.core.ops import abs as tf_abs
from tapeflow.core.ops import (
    add,
    cast,
    cos,
    cosh,
    diag,
    diag_part,
    digamma,
    div_no_nan,
    equal,
    erfc,
    exp,
    floordiv,
    greater,
    less,
    log,
    logical_and,
    matmul,
    multiply,
    negative,
    not_equal,
    polygamma,
    pow,
    real_div,
    reduce_prod,
    reduce_sum,
    relu_grad,
    reshape,
    rsqrt,
    sigmoid,
    sigmoid_grad,
    sign,
    sin,
    sinh,
    square,
    subtract,
    tanh,
    tanh_grad,
    truncatediv,
    where,
    zeros_like,
)
from tapeflow.core.ops.array_ops import broadcast_to, eye
from tapeflow.core.ops.linalg_ops import (
    band_part,
    inv,
    matrix_transpose,
    solve,
    triangular_solve,
)

from ..registry import defgrad

_SQRT_2PI = _math.sqrt(2 * _math.pi)
_GELU_C, _GELU_A = 0.7978845608028654, 0.044715   # gelu's tanh form: sqrt(2 / pi), TensorFlow's cubic
_TWO_OVER_SQRT_PI = 2 / _math.sqrt(_math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _mask(cond, like):
    """A boolean condition as 0/1 in ``like``'s dtype."""
    return cast(cond, like._dtype)


# ---- unary ------------------------------------------------------------------------

defgrad("negative", lambda g, ans, x: (negative(g),))
defgrad("abs", lambda g, ans, x: (multiply(g, sign(x)),))
defgrad("sign", lambda g, ans, x: (zeros_like(x),))
defgrad("square", lambda g, ans, x: (multiply(g, multiply(x, 2.0)),))
defgrad("sqrt", lambda g, ans, x: (real_div(multiply(g, 0.5), ans),))                   # via the output
defgrad("rsqrt", lambda g, ans, x: (multiply(g, multiply(square(ans), multiply(ans, -0.5))),))
defgrad("exp", lambda g, ans, x: (multiply(g, ans),))
defgrad("expm1", lambda g, ans, x: (multiply(g, add(ans, 1.0)),))
defgrad("log", lambda g, ans, x: (real_div(g, x),))
defgrad("log1p", lambda g, ans, x: (real_div(g, add(x, 1.0)),))
defgrad("sin", lambda g, ans, x: (multiply(g, cos(x)),))
defgrad("cos", lambda g, ans, x: (negative(multiply(g, sin(x))),))
defgrad("tan", lambda g, ans, x: (multiply(g, add(square(ans), 1.0)),))
defgrad("asin", lambda g, ans, x: (multiply(g, rsqrt(subtract(1.0, square(x)))),))
defgrad("acos", lambda g, ans, x: (negative(multiply(g, rsqrt(subtract(1.0, square(x))))),))
defgrad("atan", lambda g, ans, x: (real_div(g, add(square(x), 1.0)),))
defgrad("sinh", lambda g, ans, x: (multiply(g, cosh(x)),))
defgrad("cosh", lambda g, ans, x: (multiply(g, sinh(x)),))
defgrad("tanh", lambda g, ans, x: (tanh_grad(g, ans),))
defgrad("asinh", lambda g, ans, x: (multiply(g, rsqrt(add(square(x), 1.0))),))
defgrad("acosh", lambda g, ans, x: (multiply(g, rsqrt(subtract(square(x), 1.0))),))
defgrad("atanh", lambda g, ans, x: (real_div(g, subtract(1.0, square(x))),))
defgrad("sigmoid", lambda g, ans, x: (sigmoid_grad(g, ans),))
defgrad("relu", lambda g, ans, x: (relu_grad(g, ans),))
defgrad("softplus", lambda g, ans, x: (multiply(g, sigmoid(x)),))
# elu: 1 for x > 0, else e**x = ans + 1
defgrad("elu", lambda g, ans, x: (where(greater(x, 0.0), g, multiply(g, add(ans, 1.0))),))


@defgrad("gelu")
def _gelu_grad(g, ans, x, approximate=False):
    if approximate:  # x/2 (1 + t), t = tanh(u), u = c (x + a x**3): (1 + t)/2 + x/2 (1 - t**2) c (1 + 3 a x**2)
        t = tanh(multiply(add(x, multiply(multiply(x, square(x)), _GELU_A)), _GELU_C))
        du = multiply(add(multiply(square(x), 3 * _GELU_A), 1.0), _GELU_C)
        return (multiply(g, add(multiply(add(t, 1.0), 0.5),
                                multiply(multiply(x, 0.5), multiply(subtract(1.0, square(t)), du)))),)
    # Phi(x) + x phi(x), Phi(x) = erfc(-x / sqrt 2) / 2 (no cancellation for x < 0)
    cdf = multiply(erfc(multiply(x, -1 / _math.sqrt(2.0))), 0.5)
    pdf = multiply(exp(multiply(square(x), -0.5)), 1 / _SQRT_2PI)
    return (multiply(g, add(cdf, multiply(x, pdf))),)


# selu: scale for x > 0, else scale * alpha * e**x = ans + scale * alpha
defgrad("selu", lambda g, ans, x: (where(greater(x, 0.0), multiply(g, _SELU_SCALE),
                                         multiply(g, add(ans, _SELU_SCALE * _SELU_ALPHA))),))
defgrad("reciprocal", lambda g, ans, x: (negative(multiply(g, square(ans))),))
defgrad("erf", lambda g, ans, x: (multiply(g, multiply(exp(negative(square(x))), _TWO_OVER_SQRT_PI)),))
defgrad("erfc", lambda g, ans, x: (multiply(g, multiply(exp(negative(square(x))), -_TWO_OVER_SQRT_PI)),))
defgrad("relu6", lambda g, ans, x: (multiply(g, _mask(logical_and(greater(x, 0.0), less(x, 6.0)), g)),))
defgrad("log_sigmoid", lambda g, ans, x: (multiply(g, sigmoid(negative(x))),))


@defgrad("silu")
def _silu_grad(g, ans, x):
    # s + x * s * (1 - s) = s * (1 + x * (1 - s))
    s = sigmoid(x)
    return (multiply(g, multiply(s, add(multiply(x, subtract(1.0, s)), 1.0))),)


defgrad("lgamma", lambda g, ans, x: (multiply(g, digamma(x)),))
defgrad("digamma", lambda g, ans, x: (multiply(g, polygamma(1, x)),))
defgrad("softsign", lambda g, ans, x: (real_div(g, square(add(tf_abs(x), 1.0))),))


@defgrad("leaky_relu")
def _leaky_relu_grad(g, ans, x, alpha):
    return (where(greater(x, 0.0), g, multiply(g, alpha)),)


@defgrad("polygamma")
def _polygamma_grad(g, ans, x, order):
    return (multiply(g, polygamma(order + 1, x)),)


# ---- binary -----------------------------------------------------------------------

defgrad("add", lambda g, ans, x, y: g, lambda g, ans, x, y: g)
defgrad("subtract", lambda g, ans, x, y: g, lambda g, ans, x, y: negative(g))
defgrad("multiply", lambda g, ans, x, y: multiply(g, y), lambda g, ans, x, y: multiply(g, x))
defgrad("real_div", lambda g, ans, x, y: real_div(g, y),
        lambda g, ans, x, y: negative(real_div(multiply(g, ans), y)))           # -g x / y**2 = -g ans / y
defgrad("floormod", lambda g, ans, x, y: g, lambda g, ans, x, y: negative(multiply(g, floordiv(x, y))))


def _pow_x(g, ans, x, y):
    return multiply(g, multiply(y, pow(x, subtract(y, 1.0))))


def _pow_y(g, ans, x, y):
    # log(x) where x > 0 and 0 elsewhere (no false singularity at x = 0)
    pos = greater(x, 0.0)
    safe = where(pos, x, 1.0)
    return multiply(g, multiply(ans, where(pos, log(safe), 0.0)))


defgrad("pow", _pow_x, _pow_y)
defgrad("maximum", lambda g, ans, x, y: where(less(x, y), 0.0, g),             # ties go to x, as in TF
        lambda g, ans, x, y: where(less(x, y), g, 0.0))
defgrad("minimum", lambda g, ans, x, y: where(greater(x, y), 0.0, g),
        lambda g, ans, x, y: where(greater(x, y), g, 0.0))
defgrad("atan2", lambda g, ans, x, y: real_div(multiply(g, y), add(square(x), square(y))),
        lambda g, ans, x, y: negative(real_div(multiply(g, x), add(square(x), square(y)))))
defgrad("squared_difference", lambda g, ans, x, y: multiply(g, multiply(subtract(x, y), 2.0)),
        lambda g, ans, x, y: multiply(g, multiply(subtract(y, x), 2.0)))
defgrad("div_no_nan", lambda g, ans, x, y: div_no_nan(g, y),
        lambda g, ans, x, y: multiply(g, div_no_nan(div_no_nan(negative(x), y), y)))
# the fused gradient kernels, differentiated again: relu_grad(g, x) = g * (x > 0),
# tanh_grad(g, y) = g * (1 - y**2), sigmoid_grad(g, y) = g * y * (1 - y)
defgrad("relu_grad", lambda gg, ans, g, x: relu_grad(gg, x), lambda gg, ans, g, x: None)
defgrad("tanh_grad", lambda gg, ans, g, y: tanh_grad(gg, y),
        lambda gg, ans, g, y: multiply(multiply(gg, g), multiply(y, -2.0)))
defgrad("sigmoid_grad", lambda gg, ans, g, y: sigmoid_grad(gg, y),
        lambda gg, ans, g, y: multiply(multiply(gg, g), subtract(1.0, multiply(y, 2.0))))
defgrad("truncatemod", lambda g, ans, x, y: g, lambda g, ans, x, y: negative(multiply(g, truncatediv(x, y))))


# ---- cast ---------------------------------------------------------------------------

@defgrad("cast")
def _cast_grad(g, ans, x, dtype):
    # float -> float casts the gradient back; anything to or from an integer has none
    if x._dtype.is_floating and dtype.is_floating:
        return (cast(g, x._dtype),)
    return (None,)


# ---- reductions ---------------------------------------------------------------------

def _kept(x, axis):
    return tuple(1 if i in axis else d for i, d in enumerate(x._shape))


def _spread(g, x, axis):
    """g (the reduced shape, with or without kept dims) broadcast back over x."""
    if None in x._shape:  # x's size is known only when a graph runs: the kept axes back, then broadcast
        from tapeflow.core.ops import expand_dims, ones_like

        if len(g._shape) < len(x._shape):
            for a in sorted(axis):
                g = expand_dims(g, a)
        return multiply(g, ones_like(x))
    return broadcast_to(reshape(g, _kept(x, axis)), x._shape)


def _count(x, axis):
    """How many elements each reduced value of x summed: a number, or a tensor when a size is unknown."""
    if any(x._shape[i] is None for i in axis):
        from tapeflow.core.ops import gather, reduce_prod, shape

        return cast(reduce_prod(gather(shape(x), list(axis))), x._dtype)
    n = 1
    for i in axis:
        n *= x._shape[i]
    return n


@defgrad("reduce_sum")
def _reduce_sum_grad(g, ans, x, axis, keepdims):
    return (_spread(g, x, axis),)


@defgrad("reduce_mean")
def _reduce_mean_grad(g, ans, x, axis, keepdims):
    n = _count(x, axis)
    if isinstance(n, int):
        return (_spread(multiply(g, 1.0 / n) if n else g, x, axis),)
    return (_spread(div_no_nan(g, n), x, axis),)


def _extreme_grad(g, ans, x, axis, keepdims):
    # shared among ties, as in TensorFlow
    hit = _mask(equal(x, reshape(ans, _kept(x, axis))), x)
    count = reduce_sum(hit, axis, keepdims=True)
    return (multiply(_spread(real_div(reshape(g, _kept(x, axis)), count), x, axis), hit),)


defgrad("reduce_max", _extreme_grad)
defgrad("reduce_min", _extreme_grad)


@defgrad("reduce_prod")
def _reduce_prod_grad(g, ans, x, axis, keepdims):
    # d prod / d x_i = product of the others: prod / x_i where no zero is involved; at the
    # single zero of a slice, the product of the rest; 0 where a slice holds two zeros
    nz = _mask(not_equal(x, 0.0), x)
    zero = subtract(1.0, nz)
    safe = add(x, zero)                                   # zeros replaced by ones
    p = reduce_prod(safe, axis, keepdims=True)
    zeros = reduce_sum(zero, axis, keepdims=True)
    none_zero = _mask(equal(zeros, 0.0), x)
    one_zero = _mask(equal(zeros, 1.0), x)
    others = add(multiply(nz, multiply(real_div(p, safe), none_zero)), multiply(zero, multiply(p, one_zero)))
    return (multiply(_spread(g, x, axis), others),)


# ---- matmul -------------------------------------------------------------------------

def _matmul_a(g, ans, a, b, transpose_a, transpose_b):
    if transpose_a:
        return matmul(b, g, transpose_a=transpose_b, transpose_b=True)        # (g @ op(b)^T)^T
    return matmul(g, b, transpose_b=not transpose_b)


def _matmul_b(g, ans, a, b, transpose_a, transpose_b):
    if transpose_b:
        return matmul(g, a, transpose_a=True, transpose_b=transpose_a)        # (op(a)^T @ g)^T
    return matmul(a, g, transpose_a=not transpose_a)


defgrad("matmul", _matmul_a, _matmul_b)


# ---- linalg -------------------------------------------------------------------------

@defgrad("diag_part")
def _diag_part_grad(g, ans, x, k):
    return (diag(g, k=k, num_rows=x._shape[-2], num_cols=x._shape[-1]),)


@defgrad("diag")
def _diag_grad(g, ans, d, k, num_rows, num_cols, padding_value=0):
    return (diag_part(g, k=k),)


def _expand2(t):
    """A batch of scalars as a batch of 1x1 matrices, to scale matrices."""
    return reshape(t, tuple(t._shape) + (1, 1))


# inv: d(A^-1) = -A^-1 dA A^-1, so dA = -A^-T g A^-T
defgrad("inv", lambda g, ans, x: (negative(matmul(ans, matmul(g, ans, transpose_b=True), transpose_a=True)),))


@defgrad("det")
def _det_grad(g, ans, x):
    # d det = det * tr(A^-1 dA)
    return (multiply(_expand2(multiply(g, ans)), matrix_transpose(inv(x))),)


@defgrad("slogdet")
def _slogdet_grad(g, ans, x):
    # the sign is piecewise constant; d log|det| = tr(A^-1 dA)
    return (multiply(_expand2(g[1]), matrix_transpose(inv(x))),)


def _solve_rhs(g, ans, a, b, adjoint):
    return solve(a, g, adjoint=not adjoint)


def _solve_matrix(g, ans, a, b, adjoint):
    gb = solve(a, g, adjoint=not adjoint)
    return negative(matmul(ans, gb, transpose_b=True) if adjoint else matmul(gb, ans, transpose_b=True))


defgrad("solve", _solve_matrix, _solve_rhs)


def _tri_rhs(g, ans, a, b, lower, adjoint):
    return triangular_solve(a, g, lower=lower, adjoint=not adjoint)


def _tri_matrix(g, ans, a, b, lower, adjoint):
    gb = triangular_solve(a, g, lower=lower, adjoint=not adjoint)
    ga = negative(matmul(ans, gb, transpose_b=True) if adjoint else matmul(gb, ans, transpose_b=True))
    return band_part(ga, -1, 0) if lower else band_part(ga, 0, -1)   # only that triangle is read


defgrad("triangular_solve", _tri_matrix, _tri_rhs)


@defgrad("cholesky")
def _cholesky_grad(g, ans, x):
    # Murray (2016), as in TensorFlow: Phi(L^T g) pulled back through L, then symmetrised
    n = x._shape[-1]
    l_inv = triangular_solve(ans, broadcast_to(eye(n, dtype=ans._dtype), ans._shape), lower=True)
    middle = matmul(ans, g, transpose_a=True)
    middle = subtract(middle, multiply(diag(diag_part(middle)), 0.5))
    middle = band_part(middle, -1, 0)
    ga = matmul(matmul(l_inv, middle, transpose_a=True), l_inv)
    return (multiply(add(ga, matrix_transpose(ga)), 0.5),)


# ---- debugging ----------------------------------------------------------------------

@defgrad("check_numerics")
def _check_numerics_grad(g, ans, x, message):
    return (check_numerics(g, "Not a number (NaN) or infinity (Inf) values detected in gradient. " + message),)
