"""Element-wise math, comparisons, casts, clipping and matmul (reductions: reduce_ops)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tapeflow import kernels

from .. import dtypes as _dt
from ..debugging import (
    check_numerics,  # re-exported: tf.check_numerics, the TF1 spelling
)
from ..dispatch import (
    dtype_arg,
    hooks,
    on_device,
    run_device,
    scoped,
    register,
    static_value,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..runner import KernelStatus, _trace, check, fail, primitive, trace_node
from ..tensor import Tensor, make
from . import _ew
from ._shape import _prod

if TYPE_CHECKING:  # what the generated element-wise ops look like to type checkers
    from typing import Any, Protocol

    class _UnaryOp(Protocol):
        def __call__(self, x: Any, name: str | None = None) -> Tensor: ...

    class _BinaryOp(Protocol):
        def __call__(self, x: Any, y: Any, name: str | None = None) -> Tensor: ...

_HALF_CODE = _ew._HALF_CODE   # float16 and bfloat16 have the lowest dtype codes
F = _dt.FLOATS
I = _dt.INTS
N = _dt.NUMERIC
ALL = _dt.ALL
B = (_dt.bool_,)
IB = I + B

# ---- unary ------------------------------------------------------------------
# kernel op (tapeflow.kernels.UNARY_OPS, read from include/elementwise.def) -> name, TensorFlow op
# name, allowed dtypes, formula, example (input, output).  _UNARY takes its rows and their order
# from the kernels' list; the ops in _UNARY_OWN have functions of their own below.
_UNARY_DOC = {
    "neg": ("negative", "Neg", N, "-x", ("[1.0, -2.0]", "[-1.0, 2.0]")),
    "abs": ("abs", "Abs", N, "|x|", ("[-1.5, 2.0]", "[1.5, 2.0]")),
    "sign": ("sign", "Sign", N, "-1, 0 or 1 by the sign of x (NaN stays NaN)", ("[-3.0, 0.0, 2.0]", "[-1.0, 0.0, 1.0]")),
    "square": ("square", "Square", N, "x * x", ("[3.0]", "[9.0]")),
    "sqrt": ("sqrt", "Sqrt", F, "x ** 0.5", ("[4.0]", "[2.0]")),
    "rsqrt": ("rsqrt", "Rsqrt", F, "1 / sqrt(x)", ("[4.0]", "[0.5]")),
    "exp": ("exp", "Exp", F, "e ** x", ("[0.0]", "[1.0]")),
    "expm1": ("expm1", "Expm1", F, "e ** x - 1, accurate near 0", ("[0.0]", "[0.0]")),
    "log": ("log", "Log", F, "natural logarithm", ("[1.0]", "[0.0]")),
    "log1p": ("log1p", "Log1p", F, "log(1 + x), accurate near 0", ("[0.0]", "[0.0]")),
    "sin": ("sin", "Sin", F, "sine", ("[0.0]", "[0.0]")),
    "cos": ("cos", "Cos", F, "cosine", ("[0.0]", "[1.0]")),
    "tan": ("tan", "Tan", F, "tangent", ("[0.0]", "[0.0]")),
    "asin": ("asin", "Asin", F, "inverse sine", ("[0.0]", "[0.0]")),
    "acos": ("acos", "Acos", F, "inverse cosine", ("[1.0]", "[0.0]")),
    "atan": ("atan", "Atan", F, "inverse tangent", ("[0.0]", "[0.0]")),
    "sinh": ("sinh", "Sinh", F, "hyperbolic sine", ("[0.0]", "[0.0]")),
    "cosh": ("cosh", "Cosh", F, "hyperbolic cosine", ("[0.0]", "[1.0]")),
    "tanh": ("tanh", "Tanh", F, "hyperbolic tangent", ("[0.0]", "[0.0]")),
    "asinh": ("asinh", "Asinh", F, "inverse hyperbolic sine", ("[0.0]", "[0.0]")),
    "acosh": ("acosh", "Acosh", F, "inverse hyperbolic cosine", ("[1.0]", "[0.0]")),
    "atanh": ("atanh", "Atanh", F, "inverse hyperbolic tangent", ("[0.0]", "[0.0]")),
    "sigmoid": ("sigmoid", "Sigmoid", F, "1 / (1 + e ** -x)", ("[0.0]", "[0.5]")),
    "relu": ("relu", "Relu", N, "max(x, 0)", ("[-1.0, 2.0]", "[0.0, 2.0]")),
    "softplus": ("softplus", "Softplus", F, "log(1 + e ** x), computed stably", ("[0.0]", "[0.6931471824645996]")),
    "elu": ("elu", "Elu", F, "x if x > 0 else e ** x - 1", ("[1.0, 0.0]", "[1.0, 0.0]")),
    "selu": ("selu", "Selu", F, "scale * (x if x > 0 else alpha * (e ** x - 1))", ("[0.0]", "[0.0]")),
    "floor": ("floor", "Floor", F, "largest integer <= x", ("[1.5, -1.5]", "[1.0, -2.0]")),
    "ceil": ("ceil", "Ceil", F, "smallest integer >= x", ("[1.5, -1.5]", "[2.0, -1.0]")),
    "round": ("round", "Round", F, "nearest integer, halves to even (banker's rounding)", ("[0.5, 1.5, 2.5]", "[0.0, 2.0, 2.0]")),
    "reciprocal": ("reciprocal", "Reciprocal", F, "1 / x", ("[4.0]", "[0.25]")),
    "erf": ("erf", "Erf", F, "the Gauss error function", ("[0.0]", "[0.0]")),
    "erfc": ("erfc", "Erfc", F, "1 - erf(x)", ("[0.0]", "[1.0]")),
    "logical_not": ("logical_not", "LogicalNot", B, "not x", ("[True, False]", "[False, True]")),
    "bitwise_not": ("bitwise_not", "Invert", IB, "~x (bit inversion)", ("[0]", "[-1]")),
    "isnan": ("is_nan", "IsNan", F, "x is NaN", ("[1.0]", "[False]")),
    "isinf": ("is_inf", "IsInf", F, "x is +-inf", ("[1.0]", "[False]")),
    "isfinite": ("is_finite", "IsFinite", F, "x is neither NaN nor +-inf", ("[1.0]", "[True]")),
    "relu6": ("relu6", "Relu6", F, "min(max(x, 0), 6)", ("[-1.0, 7.0]", "[0.0, 6.0]")),
    "log_sigmoid": ("log_sigmoid", "LogSigmoid", F, "log(sigmoid(x)) = -softplus(-x)", ("[0.0]", "[-0.6931471824645996]")),
    "silu": ("silu", "Silu", F, "x * sigmoid(x) (also called swish)", ("[0.0]", "[0.0]")),
    "lgamma": ("lgamma", "Lgamma", F, "log |Gamma(x)|", ("[1.0]", "[0.0]")),
    "digamma": ("digamma", "Digamma", F, "d/dx lgamma(x)", ("[1.0]", "[-0.5772156715393066]")),
    "softsign": ("softsign", "Softsign", F, "x / (1 + |x|)", ("[1.0]", "[0.5]")),
}
_UNARY_OWN = {"gelu", "leaky_relu", "polygamma"}
_UNARY = [(_UNARY_DOC[_k][0], _k, *_UNARY_DOC[_k][1:]) for _k in kernels.UNARY_OPS if _k in _UNARY_DOC]
_BOOL_OUT = {"is_nan", "is_inf", "is_finite"}
# piecewise constant: no gradient, as in TensorFlow (sign's gradient is zeros instead)
_STEP = {"floor", "ceil", "round"}


def _make_unary(name, kname, tf_name, allowed, formula, example) -> _UnaryOp:
    """The public op of one ``_UNARY`` row, over its primitive (declared here)."""
    code = _ew.UN[kname]
    bool_out = name in _BOOL_OUT
    prim = _ew.unary_primitive(name, tf_name, code, allowed, bool_out)
    unary = _ew.unary

    def op(x, name=None) -> Tensor:
        return unary(prim, code, x, 0.0, bool_out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{formula}, element-wise.\n\n"
                  f"    >>> import tapeflow as tf\n"
                  f"    >>> tf.{name}(tf.constant({example[0]})).numpy().tolist()\n"
                  f"    {example[1]}\n")
    reason = "boolean output" if bool_out or allowed in (B, IB) else None
    if name in _STEP:
        reason = "piecewise constant (zero gradient almost everywhere; TensorFlow gives None)"
    register(name, tf_name, nondiff=reason)(op)
    return op


_UNARY_OPS = {_row[0]: _make_unary(*_row) for _row in _UNARY}
(negative, abs, sign, square, sqrt, rsqrt, exp, expm1, log, log1p, sin, cos, tan, asin, acos, atan, sinh,
 cosh, tanh, asinh, acosh, atanh, sigmoid, relu, softplus, elu, selu, floor, ceil, round, reciprocal,
 erf, erfc, logical_not, bitwise_not, is_nan, is_inf, is_finite, relu6, log_sigmoid, silu, lgamma, digamma,
 softsign,) = _UNARY_OPS.values()
assert all(globals()[_n] is _f for _n, _f in _UNARY_OPS.items()), "the names above follow _UNARY's order"


@register("leaky_relu", "LeakyRelu")
def leaky_relu(features, alpha=0.2, name=None) -> Tensor:
    """x if x > 0 else alpha * x.

    >>> import tapeflow as tf
    >>> tf.nn.leaky_relu(tf.constant([-1.0, 2.0]), alpha=0.1).numpy().tolist()
    [-0.10000000149011612, 2.0]
    """
    alpha = float(static_value(alpha, "LeakyRelu", "alpha"))
    return _ew.unary(_LEAKY_RELU, _LEAKY_RELU_CODE, features, alpha, False, {"alpha": alpha})


_LEAKY_RELU_CODE = _ew.UN["leaky_relu"]
_LEAKY_RELU = _ew.unary_primitive("leaky_relu", "LeakyRelu", _LEAKY_RELU_CODE, F, param=lambda a: a["alpha"])


@register("gelu", "Gelu")
def gelu(features, approximate=False, name=None) -> Tensor:
    """The Gaussian error linear unit, x * Phi(x), element-wise.

    ``approximate=False``: x / 2 * erfc(-x / sqrt(2)), exact in the tails (gelu(-10.0) is
    -7.6e-23 in float64); ``approximate=True``: TensorFlow's tanh form
    x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).

    >>> import tapeflow as tf
    >>> [f"{v:.6f}" for v in tf.nn.gelu(tf.constant([-1.0, 0.0, 1.0])).numpy().tolist()]
    ['-0.158655', '0.000000', '0.841345']
    >>> [f"{v:.6f}" for v in tf.nn.gelu(tf.constant([-1.0, 1.0]), approximate=True).numpy().tolist()]
    ['-0.158808', '0.841192']
    >>> f"{float(tf.nn.gelu(tf.constant(-10.0, tf.float64))):.4g}"
    '-7.62e-23'
    """
    if not isinstance(approximate, (bool, np.bool_)):
        raise TypeError(f"approximate must be a bool, got {type(approximate).__name__} {approximate!r}; "
                        "allowed: True or False [Op:Gelu]")
    approximate = bool(approximate)
    return _ew.unary(_GELU, _GELU_CODE, features, 1.0 if approximate else 0.0, False, {"approximate": approximate})


_GELU_CODE = _ew.UN["gelu"]
_GELU = _ew.unary_primitive("gelu", "Gelu", _GELU_CODE, F, param=lambda a: 1.0 if a["approximate"] else 0.0)


def _order(a, op):
    """The derivative order of polygamma: a scalar non-negative integer."""
    if isinstance(a, Tensor) or hasattr(a, "_as_tensor"):
        t = to_tensor(a, op)
        if t._size != 1:
            raise InvalidArgumentError(f"a has shape {tuple(t._shape)}; allowed: a scalar order", op)
        a = static_value(t, op, "a").reshape(()).item()
    try:
        m = float(a)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"a = {a!r}; allowed: a non-negative integer order", op) from None
    if not (m >= 0 and m == int(m) and m <= 64):
        raise InvalidArgumentError(f"a = {a!r}; allowed: an integer order in [0, 64]", op)
    return int(m)


@register("polygamma", "Polygamma")
def polygamma(a, x, name=None) -> Tensor:
    """psi^(a)(x): the a-th derivative of digamma (a = 0 is digamma itself), element-wise.

    >>> import tapeflow as tf
    >>> "%.5f" % float(tf.math.polygamma(1, tf.constant(1.0)))  # pi**2 / 6
    '1.64493'
    """
    m = _order(a, "Polygamma")
    return _ew.unary(_POLYGAMMA, _POLYGAMMA_CODE, x, float(m), False, {"order": m})


_POLYGAMMA_CODE = _ew.UN["polygamma"]
_POLYGAMMA = _ew.unary_primitive("polygamma", "Polygamma", _POLYGAMMA_CODE, F, param=lambda a: float(a["order"]))


# ---- binary -----------------------------------------------------------------
# kernel op (tapeflow.kernels.BINARY_OPS) -> name, TF op, allowed, formula, example (x, y, out);
# _BINARY follows the kernels' list; _BINARY_OWN are the gradient helpers made below.
_BINARY_DOC = {
    "add": ("add", "AddV2", N, "x + y", ("[1, 2]", "[10, 20]", "[11, 22]")),
    "sub": ("subtract", "Sub", N, "x - y", ("[5, 7]", "[1, 2]", "[4, 5]")),
    "mul": ("multiply", "Mul", N, "x * y", ("[2, 3]", "[4, 5]", "[8, 15]")),
    "div": ("real_div", "RealDiv", F, "x / y for floats", ("[1.0, 3.0]", "[2.0, 4.0]", "[0.5, 0.75]")),
    "floordiv": ("floordiv", "FloorDiv", N, "floor(x / y) (Python's //)", ("[7, -7]", "[2, 2]", "[3, -4]")),
    "mod": ("floormod", "FloorMod", N, "x - floor(x / y) * y (Python's %: the sign follows y)",
        ("[7, -7]", "[3, 3]", "[1, 2]")),
    "pow": ("pow", "Pow", N, "x ** y", ("[2.0, 3.0]", "[3.0, 2.0]", "[8.0, 9.0]")),
    "maximum": ("maximum", "Maximum", N, "max(x, y) (NaN propagates)", ("[1, 5]", "[3, 2]", "[3, 5]")),
    "minimum": ("minimum", "Minimum", N, "min(x, y) (NaN propagates)", ("[1, 5]", "[3, 2]", "[1, 2]")),
    "atan2": ("atan2", "Atan2", F, "the angle of (y=x, x=y): atan2(x, y)", ("[0.0]", "[1.0]", "[0.0]")),
    "squared_difference": ("squared_difference", "SquaredDifference", N, "(x - y) ** 2",
        ("[1.0, 5.0]", "[3.0, 2.0]", "[4.0, 9.0]")),
    "div_no_nan": ("div_no_nan", "DivNoNan", F, "x / y, and 0 where y == 0",
        ("[1.0, 1.0]", "[2.0, 0.0]", "[0.5, 0.0]")),
    "equal": ("equal", "Equal", ALL, "x == y", ("[1, 2]", "[1, 3]", "[True, False]")),
    "not_equal": ("not_equal", "NotEqual", ALL, "x != y", ("[1, 2]", "[1, 3]", "[False, True]")),
    "less": ("less", "Less", N, "x < y", ("[1, 2]", "[2, 2]", "[True, False]")),
    "less_equal": ("less_equal", "LessEqual", N, "x <= y", ("[1, 3]", "[2, 2]", "[True, False]")),
    "greater": ("greater", "Greater", N, "x > y", ("[3, 2]", "[2, 2]", "[True, False]")),
    "greater_equal": ("greater_equal", "GreaterEqual", N, "x >= y", ("[1, 3]", "[2, 2]", "[False, True]")),
    "logical_and": ("logical_and", "LogicalAnd", B, "x and y", ("[True, True]", "[True, False]", "[True, False]")),
    "logical_or": ("logical_or", "LogicalOr", B, "x or y", ("[False, True]", "[False, False]", "[False, True]")),
    "logical_xor": ("logical_xor", "LogicalXor", B, "x xor y", ("[True, True]", "[True, False]", "[False, True]")),
    "bitwise_and": ("bitwise_and", "BitwiseAnd", IB, "x & y", ("[12]", "[10]", "[8]")),
    "bitwise_or": ("bitwise_or", "BitwiseOr", IB, "x | y", ("[12]", "[10]", "[14]")),
    "bitwise_xor": ("bitwise_xor", "BitwiseXor", IB, "x ^ y", ("[12]", "[10]", "[6]")),
    "left_shift": ("left_shift", "LeftShift", I, "x << y", ("[1]", "[3]", "[8]")),
    "right_shift": ("right_shift", "RightShift", I, "x >> y", ("[16]", "[2]", "[4]")),
    "truncatediv": ("truncatediv", "TruncateDiv", N, "x / y rounded toward zero (C's integer division)",
        ("[7, -7]", "[2, 2]", "[3, -3]")),
    "truncatemod": ("truncatemod", "TruncateMod", N, "x - truncatediv(x, y) * y (C's %: the sign follows x)",
        ("[7, -7]", "[3, 3]", "[1, -1]")),
}
_BINARY_OWN = {"relu_grad", "tanh_grad", "sigmoid_grad"}
_BINARY = [(_BINARY_DOC[_k][0], _k, *_BINARY_DOC[_k][1:]) for _k in kernels.BINARY_OPS if _k in _BINARY_DOC]
_CMP = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
_NONDIFF = _CMP | {"floordiv", "truncatediv", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                   "bitwise_xor", "left_shift", "right_shift"}


# integer ops whose kernels reject some operands: division by zero, negative powers
_CHECKED = {"floordiv", "floormod", "truncatediv", "truncatemod", "pow"}


def _operand_error(status, inputs, attrs):
    """The ``detail`` hook of the checked ops: a precise message for an integer operand a kernel rejected."""
    if status == kernels.EDIVZERO:
        return ("integer division by zero: the divisor y holds a 0; allowed: non-zero integer divisors "
                "(float division by 0 gives inf or nan)")
    if status == kernels.EBADARG:
        return ("integers to negative integer powers are not allowed: y holds a negative exponent for a base "
                "other than 1 or -1; allowed: y >= 0, or cast to a float dtype first")
    return ""


def _make_binary(name, kname, tf_name, allowed, formula, example) -> _BinaryOp:
    """The public op of one ``_BINARY`` row, over its primitive (declared here)."""
    code = _ew.BIN[kname]
    bool_out = name in _CMP
    prim = _ew.binary_primitive(name, tf_name, code, allowed, bool_out,
                                detail=_operand_error if name in _CHECKED else None)
    binary = _ew.binary

    def op(x, y, name=None) -> Tensor:
        return binary(prim, code, x, y, bool_out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{formula}, element-wise, with broadcasting.\n\n"
                  f"    >>> import tapeflow as tf\n"
                  f"    >>> tf.{'math.' if name in ('real_div', 'floormod', 'div_no_nan', 'truncatediv', 'truncatemod') else ''}{name}"
                  f"(tf.constant({example[0]}), tf.constant({example[1]})).numpy().tolist()\n"
                  f"    {example[2]}\n")
    reason = None
    if name in _NONDIFF:
        reason = "boolean output" if name in _CMP or allowed in (B, IB) else "piecewise constant (integer-valued)"
        if allowed in (I, IB):
            reason = "integer-only op"
    register(name, tf_name, nondiff=reason)(op)
    return op


_BINARY_OPS = {_row[0]: _make_binary(*_row) for _row in _BINARY}
(add, subtract, multiply, real_div, floordiv, floormod, pow, maximum, minimum, atan2, squared_difference,
 div_no_nan, equal, not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or, logical_xor,
 bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift, truncatediv, truncatemod,) = _BINARY_OPS.values()
assert all(globals()[_n] is _f for _n, _f in _BINARY_OPS.items()), "the names above follow _BINARY's order"

# gradient helpers with their own kernels: g * (x > 0), g * (1 - y**2), g * y * (1 - y)
relu_grad = _make_binary("relu_grad", "relu_grad", "ReluGrad", F,
                         "g * (x > 0): the gradient of relu, as relu_grad(g, x)",
                         ("[1.0, 1.0]", "[-1.0, 2.0]", "[0.0, 1.0]"))
tanh_grad = _make_binary("tanh_grad", "tanh_grad", "TanhGrad", F,
                         "g * (1 - y * y): the gradient of tanh from its output, as tanh_grad(g, y)",
                         ("[1.0]", "[0.0]", "[1.0]"))
sigmoid_grad = _make_binary("sigmoid_grad", "sigmoid_grad", "SigmoidGrad", F,
                            "g * y * (1 - y): the gradient of sigmoid from its output, as sigmoid_grad(g, y)",
                            ("[1.0]", "[0.5]", "[0.25]"))


@register("truediv", "TrueDiv", kind="composite")
def truediv(x, y, name=None) -> Tensor:
    """x / y; integer inputs are cast first (int8, uint8, int16 to float32; int32, int64 to float64).

    >>> import tapeflow as tf
    >>> tf.truediv(tf.constant([1, 3]), tf.constant([2, 4])).numpy().tolist()
    [0.5, 0.75]
    """
    if type(x) is not Tensor or type(y) is not Tensor:
        x, y = _ew.coerce_pair(x, y, "TrueDiv")
    dt = x._dtype
    if dt.is_integer and dt is y._dtype:
        target = _dt.float64 if dt.size >= 4 else _dt.float32
        x, y = cast(x, target), cast(y, target)
    return real_div(x, y)


divide = truediv
divide_no_nan = div_no_nan  # tf.math.divide_no_nan: TensorFlow 2's name of DivNoNan


@register("add_n", "AddN", kind="composite")
def add_n(inputs, name=None):
    """The sum of a list of tensors of one shape and dtype.

    >>> import tapeflow as tf
    >>> tf.add_n([tf.constant([1.0]), tf.constant([2.0]), tf.constant([3.0])]).numpy().tolist()
    [6.0]
    """
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    inputs = [t if type(t) is Tensor else to_tensor(t, "AddN") for t in inputs]
    if not inputs:
        raise InvalidArgumentError("inputs is empty; allowed: a non-empty list of tensors of one shape", "AddN")
    for i, t in enumerate(inputs[1:], 1):
        if t._dtype is not inputs[0]._dtype:
            raise InvalidArgumentError(f"inputs #{i} has dtype {t._dtype.name} but inputs #0 has "
                                       f"{inputs[0]._dtype.name}; allowed: one dtype (use tf.cast)", "AddN")
        if t._shape != inputs[0]._shape:
            raise InvalidArgumentError(f"inputs #{i} has shape {tuple(t._shape)} but inputs #0 has "
                                       f"{tuple(inputs[0]._shape)}; allowed: tensors of one shape", "AddN")
    total = inputs[0]
    for t in inputs[1:]:
        total = add(total, t)
    return total


@register("xlogy", "Xlogy", kind="composite")
def xlogy(x, y, name=None):
    """x * log(y), and 0 where x == 0 (even where y is 0 or NaN).

    >>> import tapeflow as tf
    >>> tf.math.xlogy(tf.constant([0.0, 2.0]), tf.constant([0.0, 1.0])).numpy().tolist()
    [0.0, 0.0]
    """
    from .array_ops import where

    x, y = _float_pair(x, y, "Xlogy")
    return where(equal(x, 0.0), _zero_of(x, y), multiply(x, log(y)))


@register("xdivy", "Xdivy", kind="composite")
def xdivy(x, y, name=None):
    """x / y, and 0 where x == 0 (even where y is 0).

    >>> import tapeflow as tf
    >>> tf.math.xdivy(tf.constant([0.0, 3.0]), tf.constant([0.0, 2.0])).numpy().tolist()
    [0.0, 1.5]
    """
    from .array_ops import where

    x, y = _float_pair(x, y, "Xdivy")
    return where(equal(x, 0.0), _zero_of(x, y), real_div(x, y))


@register("multiply_no_nan", "MulNoNan", kind="composite")
def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y == 0 (even where x is inf or NaN).

    >>> import tapeflow as tf
    >>> tf.math.multiply_no_nan(tf.constant([float("inf"), 2.0]), tf.constant([0.0, 3.0])).numpy().tolist()
    [0.0, 6.0]
    """
    from .array_ops import where

    x, y = _float_pair(x, y, "MulNoNan")
    return where(equal(y, 0.0), _zero_of(x, y), multiply(x, y))


@register("reciprocal_no_nan", "ReciprocalNoNan", kind="composite")
def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x == 0.

    >>> import tapeflow as tf
    >>> tf.math.reciprocal_no_nan(tf.constant([0.0, 4.0])).numpy().tolist()
    [0.0, 0.25]
    """
    x = _float_input(x, "ReciprocalNoNan")
    return div_no_nan(_ew.scalar_like(1, x, "ReciprocalNoNan"), x)


@register("scalar_mul", "ScalarMul", kind="composite")
def scalar_mul(scalar, x, name=None):
    """scalar * x for a scalar (a Python number or a single-element tensor).

    >>> import tapeflow as tf
    >>> tf.math.scalar_mul(2, tf.constant([1.0, 2.0])).numpy().tolist()
    [2.0, 4.0]
    """
    if isinstance(scalar, Tensor) and scalar._shape != ():
        if scalar._size != 1:
            raise InvalidArgumentError(f"scalar has shape {tuple(scalar._shape)}; allowed: a scalar", "ScalarMul")
        from .array_ops import reshape

        scalar = reshape(scalar, ())
    return multiply(scalar, x)


def _float_input(x, op):
    x = x if type(x) is Tensor else to_tensor(x, op)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"x has dtype {x._dtype.name}; allowed: {', '.join(d.name for d in F)}", op)
    return x


def _float_pair(x, y, op):
    if type(x) is not Tensor or type(y) is not Tensor:
        x, y = _ew.coerce_pair(x, y, op)
    if x._dtype is not y._dtype:
        _ew.dtype_mismatch(x, y, op)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"x and y have dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in F)}", op)
    return x, y


def _zero_of(x, y):
    """A zero of ``x``'s dtype (broadcast by the select that uses it)."""
    return _ew.scalar_like(0, x, "ZerosLike")


# ---- clipping ---------------------------------------------------------------

@register("clip_by_value", "ClipByValue", kind="composite")
def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max); the bounds broadcast to ``t``'s shape.

    >>> import tapeflow as tf
    >>> tf.clip_by_value(tf.constant([-2.0, 0.5, 3.0]), -1.0, 1.0).numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    t = t if type(t) is Tensor else to_tensor(t, "ClipByValue")
    if t._dtype not in N:
        raise InvalidArgumentError(f"t has dtype {t._dtype.name}; allowed: {', '.join(d.name for d in N)}",
                                   "ClipByValue")
    lo, hi = clip_value_min, clip_value_max
    if _ew._is_py_scalar(lo) and _ew._is_py_scalar(hi) and lo > hi:
        raise InvalidArgumentError(f"clip_value_min = {lo} is greater than clip_value_max = {hi}; allowed: "
                                   "clip_value_min <= clip_value_max", "ClipByValue")
    for what, v in (("clip_value_min", lo), ("clip_value_max", hi)):
        if isinstance(v, Tensor) and not _broadcasts_to(v._shape, t._shape):
            raise InvalidArgumentError(f"{what} has shape {tuple(v._shape)}, which does not broadcast to t's "
                                       f"shape {tuple(t._shape)}; allowed: shapes that broadcast to t's",
                                       "ClipByValue")
    return minimum(maximum(t, lo), hi)


def _broadcasts_to(shape, target):
    return len(shape) <= len(target) and all(d in (1, t) for d, t in zip(shape[::-1], target[::-1]))


@register("clip_by_norm", "ClipByNorm", kind="composite")
def clip_by_norm(t, clip_norm, axes=None, name=None) -> Tensor:
    """t * clip_norm / max(||t||, clip_norm): ``t`` rescaled so its L2 norm over ``axes`` is at most ``clip_norm``.

    >>> import tapeflow as tf
    >>> tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0).numpy().tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    from .array_ops import ones_like, where

    t = _float_input(t, "ClipByNorm")
    _check_clip_norm(clip_norm, "ClipByNorm")
    from .reduce_ops import reduce_sum

    l2sum = reduce_sum(square(t), axes, keepdims=True)
    pred = greater(l2sum, 0.0)
    # sqrt only where the sum is positive, so that the gradient at t = 0 stays finite
    l2norm = where(pred, sqrt(where(pred, l2sum, ones_like(l2sum))), l2sum)
    cn = clip_norm if _ew._is_py_scalar(clip_norm) else cast(to_tensor(clip_norm, "ClipByNorm"), t._dtype)
    return real_div(multiply(t, cn), maximum(l2norm, cn))


def _check_clip_norm(clip_norm, op):
    if _ew._is_py_scalar(clip_norm):
        if not clip_norm > 0:
            raise InvalidArgumentError(f"clip_norm = {clip_norm}; allowed: a positive number", op)
    else:
        cn = to_tensor(clip_norm, op)
        if cn._size != 1:
            raise InvalidArgumentError(f"clip_norm has shape {tuple(cn._shape)}; allowed: a scalar", op)


@register("clip_by_global_norm", "ClipByGlobalNorm", kind="composite")
def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Rescale tensors so their joint L2 norm is at most ``clip_norm``: (t * clip_norm / max(g, clip_norm), g).

    ``g`` is ``use_norm`` or the global norm sqrt(sum ||t||**2); ``None`` entries stay ``None``;
    an infinite or NaN global norm makes every entry NaN (as in TensorFlow).

    >>> import tapeflow as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0]), tf.constant([4.0])], 1.0)
    >>> [c.numpy().tolist() for c in clipped], float(norm)
    ([[0.6000000238418579], [0.800000011920929]], 5.0)
    """
    from .linalg_ops import global_norm

    if isinstance(t_list, Tensor) or not hasattr(t_list, "__iter__"):
        raise InvalidArgumentError(f"t_list is a {type(t_list).__name__}; allowed: a list or tuple of tensors",
                                   "ClipByGlobalNorm")
    items = [None if t is None else (t if type(t) is Tensor else to_tensor(t, "ClipByGlobalNorm")) for t in t_list]
    _check_clip_norm(clip_norm, "ClipByGlobalNorm")
    norm = global_norm(items) if use_norm is None else to_tensor(use_norm, "ClipByGlobalNorm")
    cn = clip_norm if _ew._is_py_scalar(clip_norm) else cast(to_tensor(clip_norm, "ClipByGlobalNorm"), norm._dtype)
    # (norm - norm) is NaN exactly when the norm is inf or NaN
    scale = add(real_div(cn, maximum(norm, cn)), subtract(norm, norm))
    out = [None if t is None else multiply(t, scale if scale._dtype is t._dtype else cast(scale, t._dtype))
           for t in items]
    return out, norm


# ---- cast -------------------------------------------------------------------

@register("cast", "Cast")
def cast(x, dtype, name=None) -> Tensor:
    """``x`` converted to ``dtype``.  Float to integer truncates toward zero (saturating; NaN -> 0).

    >>> import tapeflow as tf
    >>> tf.cast(tf.constant([1.7, -1.7]), tf.int32).numpy().tolist()
    [1, -1]
    """
    dtype = dtype_arg(dtype, "Cast")
    if type(x) is not Tensor:
        if hasattr(x, "nested_row_splits"):  # a RaggedTensor: its values cast, as TensorFlow dispatches
            return x.with_flat_values(cast(x.flat_values, dtype))
        if hasattr(x, "dense_shape") and hasattr(x, "indices"):  # a SparseTensor: likewise
            return type(x)(x.indices, cast(x.values, dtype), x.dense_shape)
        x = to_tensor(x, "Cast")
    x = scoped(x)  # runner.run(_CAST, (x,), attrs) for one input, hand-tuned: casts are everywhere
    if x._dtype is dtype and not hooks.tracing:
        return x  # no cast and no record, but on the tf.device scope's device like any cast
    if hooks.tracing and _trace.graph is not None:
        out = trace_node(_CAST, (x,), {"dtype": dtype}, _trace.graph, x._dev)
    else:
        out = _cast_raw(x, dtype)
    rec = hooks.recorder
    if rec is not None:
        rec("cast", (x,), out, {"dtype": dtype})
    return out


# the cast kernel alone (not recorded; a failure is the Cast error): for ops that compute half types in float32
_cast_raw = _ew.raw_cast


@primitive("cast", "Cast", infer=lambda x, *, dtype: (x._shape, dtype))
def _CAST(dev, x, *, dtype):
    return _cast_raw(x, dtype)


def _strided(src, shape, strides, op):
    """A dense copy of a strided view of ``src`` (not recorded)."""
    from .array_ops import strided_copy

    return strided_copy(src, tuple(shape), 0, list(strides), op=op)


# ---- matmul -----------------------------------------------------------------

@register("matmul", "MatMul")
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, name=None) -> Tensor:
    """Matrix product of the last two axes, batched over the leading axes (which broadcast).

    >>> import tapeflow as tf
    >>> print(tf.matmul([[2.]], [[2.]]))
    Tensor([[4.]], shape=(1, 1), dtype=float32)
    """
    ta = True if transpose_a or adjoint_a else False  # bool() without a call
    tb = True if transpose_b or adjoint_b else False
    fast = _ew.fast_matmul   # the C fast path: small 2-D CPU float matmuls (None for the rest)
    if fast is not None:
        out = fast(a, b, ta, tb)
        if out is not None:
            return out
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _ew.coerce_pair(a, b, "MatMul")
    else:
        # the hottest path: two 2-D CPU tensors of one float dtype, nothing to place or trace: the GEMM
        # kernel straight away (a real dtype's adjoint is its transpose)
        dt, sa, sb = a._dtype, a._shape, b._shape
        if a._dev is _mm_host[0] and b._dev is _mm_host[0] and dt is b._dtype and (dt is _F32 or dt is _F64) \
                and len(sa) == 2 and len(sb) == 2 and not _ew._scope.stack and not hooks.tracing:
            m, k = (sa[1], sa[0]) if ta else sa
            k2, n = (sb[1], sb[0]) if tb else sb
            if k == k2:
                shape = (m, n)
                h, host = _mm_host[1](shape, dt.np)
                st = _mm_host[2](dt.code, ta, tb, 1, m, n, k, a._h, m * k, b._h, k * n, h)
                attrs = _MM_ATTRS[ta, tb]
                if st:
                    fail(_MATMUL, KernelStatus(st, "matmul"), (a, b), attrs)
                out = _new(Tensor)
                out._h, out._arr, out._shape, out._dtype, out._dev, out._size = h, host, shape, dt, a._dev, m * n
                rec = hooks.recorder
                if rec is not None:
                    rec("matmul", (a, b), out, attrs)
                return out
        elif _mm_host[0] is None:
            _mm_host_init()
            return matmul(a, b, ta, tb)
    # runner.run(_MATMUL, (a, b), attrs), hand-tuned as _ew.binary is: a hot path
    dt = a._dtype
    if dt is not b._dtype:
        _ew.dtype_mismatch(a, b, "MatMul")
    if dt.is_complex:  # adjoints conjugate: complex_ops
        from .complex_ops import complex_matmul

        return complex_matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b)
    if not (_MM_MASK >> dt.code) & 1:
        _ew.not_allowed(dt, N, "MatMul")
    if a._dev is not b._dev or _ew._scope.stack:
        dev = run_device(a, b)
        a, b = on_device(a, dev), on_device(b, dev)
    plan = _mm_plans.get((a._shape, b._shape, ta, tb))
    if plan is None:
        plan = _mm_plan(a._shape, b._shape, ta, tb)
    if hooks.tracing and _trace.graph is not None:
        out = trace_node(_MATMUL, (a, b), plan[9], _trace.graph, a._dev)
    else:
        try:
            out = _matmul_eager(a._dev, a, b, plan, ta, tb)
        except KernelStatus as e:
            fail(_MATMUL, e, (a, b), plan[9])
    rec = hooks.recorder
    if rec is not None:
        rec("matmul", (a, b), out, plan[9])  # the attrs: transpose_a, transpose_b
    return out


_new = object.__new__
_F32, _F64 = _dt.float32, _dt.float64
#: the CPU device, its backend's alloc and matmul (set on first use: the backend loads lazily)
_mm_host: list = [None, None, None]
#: the attrs a matmul is recorded with, one dict per (transpose_a, transpose_b) (the plans' dicts are shared too)
_MM_ATTRS = _ew.MM_ATTRS


def _mm_host_init():
    from .. import devices as _devices

    dev = _devices.get("cpu:0")
    _mm_host[1], _mm_host[2] = dev.backend.alloc, dev.backend.matmul
    _mm_host[0] = dev


def _mm_infer(a, b, *, transpose_a, transpose_b):
    plan = _mm_plans.get((a._shape, b._shape, transpose_a, transpose_b))
    if plan is None:
        plan = _mm_plan(a._shape, b._shape, transpose_a, transpose_b)
    return plan[6], a._dtype


@primitive("matmul", "MatMul", infer=_mm_infer, dtypes=N, same_dtype=True)
def _MATMUL(dev, a, b, *, transpose_a, transpose_b):
    plan = _mm_plans.get((a._shape, b._shape, transpose_a, transpose_b))
    if plan is None:
        plan = _mm_plan(a._shape, b._shape, transpose_a, transpose_b)
    return _matmul_eager(dev, a, b, plan, transpose_a, transpose_b)


_MM_MASK = _MATMUL.mask


def _matmul_eager(dev, a, b, plan, ta, tb):
    """The matmul kernel on same-dtype tensors on ``dev`` by ``plan`` (half types compute in float32)."""
    m, n, k, batch, bstr_a, bstr_b, out_shape, bcast, size, _ = plan
    dt = a._dtype
    src_a, src_b = a, b
    if dt.code <= _HALF_CODE:
        src_a, src_b = _cast_raw(a, _dt.float32), _cast_raw(b, _dt.float32)
    if bcast is not None and size:
        src_a = _strided(src_a, bcast[0], bcast[1], "MatMul")
        src_b = _strided(src_b, bcast[2], bcast[3], "MatMul")
    be = dev.backend
    sdt = src_a._dtype
    h, host = be.alloc(out_shape, sdt.np)
    st = be.matmul(sdt.code, ta, tb, batch, m, n, k, src_a._h, bstr_a, src_b._h, bstr_b, h)
    if st:
        check(st, "matmul")
    out = make(h, host, out_shape, sdt, dev, size)
    return out if sdt is dt else _cast_raw(out, dt)


_mm_plans: dict = {}


def _mm_plan(sa, sb, ta, tb):
    """Sizes, batch strides and any broadcast copies for a matmul of these shapes (cached)."""
    if len(sa) < 2 or len(sb) < 2:
        raise InvalidArgumentError(f"matmul needs tensors of rank >= 2, got shapes {tuple(sa)} and {tuple(sb)}; "
                                   "allowed: rank >= 2 (use tf.linalg.matvec or reshape a vector)", "MatMul")
    m, k = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
    k2, n = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
    if k != k2 and k is not None and k2 is not None:
        raise InvalidArgumentError(
            f"inner dimensions differ: {tuple(sa)}{'ᵀ' if ta else ''} @ {tuple(sb)}{'ᵀ' if tb else ''} "
            f"({k} vs {k2})", "MatMul")
    ba, bb = sa[:-2], sb[:-2]
    if None in sa or None in sb:  # traced with unknown dimensions: the output's shape only
        return (m, n, k, None, None, None, _ew.broadcast_shape(ba, bb, "MatMul") + (m, n), None, None,
                {"transpose_a": ta, "transpose_b": tb})
    bcast = None
    if ba == bb:
        batch, bstr_a, bstr_b, bshape = _prod(ba), m * k, k * n, ba
    elif _prod(ba) == 1 and len(ba) <= len(bb):
        batch, bstr_a, bstr_b, bshape = _prod(bb), 0, k * n, bb
    elif _prod(bb) == 1 and len(bb) <= len(ba):
        batch, bstr_a, bstr_b, bshape = _prod(ba), m * k, 0, ba
    else:
        bshape = _ew.broadcast_shape(ba, bb, "MatMul")
        fa, fb = bshape + sa[-2:], bshape + sb[-2:]
        bcast = (fa, _ew._strides_for(sa, fa), fb, _ew._strides_for(sb, fb))
        batch, bstr_a, bstr_b = _prod(bshape), m * k, k * n
    out_shape = tuple(bshape) + (m, n)
    plan = (m, n, k, batch, bstr_a, bstr_b, out_shape, bcast, batch * m * n,
            {"transpose_a": ta, "transpose_b": tb})
    if len(_mm_plans) > 2048:
        _mm_plans.clear()
    _mm_plans[(sa, sb, ta, tb)] = plan
    return plan


__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_")] + ["divide", "check_numerics"]
