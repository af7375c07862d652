"""The op mapping of the ONNX exporter: each tapeflow primitive that can be in an inference graph, as ONNX nodes.

``CONVERTERS[primitive]`` is ``fn(cx, node, ins)``: it emits ONNX nodes through ``cx`` (an
:class:`~tapeflow.core.saved_model.export.Emitter`) for the traced ``node`` whose inputs have the ONNX names
``ins``, and returns the ONNX name of its output (a tuple of names for several outputs).
``NOT_EXPORTABLE[primitive]`` says why a primitive has no ONNX form: exporting a graph that holds one raises
``UnimplementedError`` naming it, its source line and the signature, never a silently different model.
``ONNX_OPS`` is every ONNX op a converter may emit (the importer maps each back).

>>> from tapeflow.core.saved_model import onnx_ops
>>> "conv2d" in onnx_ops.CONVERTERS, "Conv" in onnx_ops.ONNX_OPS
(True, True)
>>> onnx_ops.NOT_EXPORTABLE["random_uniform"].split(":")[0]
'a random draw'
"""
from __future__ import annotations

import numpy as np

from .. import errors

__all__ = ["CONVERTERS", "NOT_EXPORTABLE", "ONNX_OPS", "PARTIAL"]

CONVERTERS: dict = {}
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

#: every ONNX op (default domain) a converter may emit
ONNX_OPS = frozenset("""
Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool BitwiseAnd BitwiseNot BitwiseOr BitwiseXor
Cast Ceil Clip Concat ConstantOfShape Conv ConvTranspose Cos Cosh CumSum Det Div Elu Equal Erf Exp Expand
Floor Gather GatherElements GatherND Greater GreaterOrEqual Identity If IsInf IsNaN LeakyRelu Less LessOrEqual Log
LogSoftmax Loop MatMul Max MaxPool Min Mod Mul Neg NonZero Not OneHot Or Pad Pow Range Reciprocal ReduceMax ReduceMean
ReduceMin ReduceProd ReduceSum Relu Reshape Resize Round ScatterND Selu Shape Sigmoid Sign Sin Sinh Size Slice
Softmax Softplus Softsign Split Sqrt Squeeze Sub Tan Tanh Tile TopK Transpose Unsqueeze Where Xor
""".split())

_WHY_RANDOM = "a random draw: ONNX has no Philox generator, so the exported model could not draw tapeflow's numbers"
_WHY_STATE = "it changes state (a variable, a file, the console) when the graph runs; an ONNX graph is a pure function"
_WHY_STRING = "a string op: ONNX's string ops do not cover tapeflow's (and ONNX Runtime runs few of them)"
_WHY_IO = "it reads, writes or parses files or encoded data, which an ONNX graph cannot do"
_WHY_LINALG = "a matrix decomposition or solver: ONNX has no op for it"
_WHY_GRAD = "a gradient kernel: in a graph only where the function takes gradients, which an inference export has not"
_WHY_SPECIAL = "a special function ONNX has no op for"

NOT_EXPORTABLE: dict = {
    **{p: _WHY_RANDOM for p in ("random_binomial", "random_gamma", "random_poisson", "stateless_random_binomial",
                                "stateless_random_gamma", "stateless_random_poisson", "random_uniform",
                                "random_normal", "truncated_normal", "random_shuffle", "categorical", "dropout_mask",
                                "stateless_random_uniform", "stateless_random_normal",
                                "stateless_truncated_normal", "stateless_categorical")},
    **{p: _WHY_STATE for p in ("variable_update", "print", "write_file", "read_file")},
    **{p: _WHY_STRING for p in ("as_string", "reduce_join", "regex_full_match", "regex_replace", "string_bytes_split",
                                "string_format", "string_join", "string_length", "string_lower", "string_ngrams",
                                "string_split", "string_strip", "string_to_hash_bucket_fast", "string_to_number",
                                "string_upper", "substr", "unicode_decode", "unicode_encode", "lookup_table_find",
                                "ragged_to_dense")},
    **{p: _WHY_IO for p in ("decode_csv", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg", "encode_png",
                            "parse_example", "parse_tensor", "serialize_tensor")},
    **{p: _WHY_LINALG for p in ("cholesky", "eigh", "expm", "inv", "lu", "qr", "slogdet", "solve", "svd",
                                "triangular_solve")},
    **{p: "complex numbers: ONNX Runtime computes with no complex element type"
       for p in ("angle", "complex", "conj", "imag", "real", "fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d",
                 "irfft", "irfft2d", "irfft3d", "rfft", "rfft2d", "rfft3d")},
    **{p: _WHY_GRAD for p in ("random_gamma_grad", "avg_pool_grad", "colour_grad", "conv2d_backprop_filter",
                              "ctc_loss_grad", "lstm_cell_grad", "gru_cell_grad",
                              "depthwise_conv2d_backprop_filter", "depthwise_conv2d_backprop_input", "max_pool_grad",
                              "max_pool_grad_grad", "resize_grad", "strided_slice_grad")},
    **{p: _WHY_SPECIAL for p in ("digamma", "lgamma", "polygamma")},
    "learning_rate_schedule": "an optimizer's learning-rate schedule: training state, not inference",
    "optimizer_update": "an optimizer's step on a variable and its slots: training, not inference",
    "sparse_softmax_xent_backprop": _WHY_GRAD,
    "while_loop_grad": _WHY_GRAD,
    "while_loop_jvp": "a forward-mode derivative of a loop: in a graph only where the function differentiates",
    "check_numerics": "it raises when a value is NaN or infinite; ONNX has no assertion, so the model would not check",
    "assert": "tf.Assert raises when its condition is False; ONNX has no assertion, so the model would not check",
    "assert_holds": "tf.debugging.assert_* raise when their condition fails; ONNX has no assertion, so the model "
                    "would not check",
    **{p: "it calls a Python function on the host, which an ONNX graph cannot hold"
       for p in ("py_function", "numpy_function", "py_function_vjp", "py_function_jvp")},
    "ctc_loss": "a training loss over a dynamic-programming recursion with no ONNX form written",
    "cumprod": "ONNX has CumSum but no cumulative product",
    "left_shift": "ONNX's BitShift takes unsigned integers only (tapeflow shifts signed ones)",
    "right_shift": "ONNX's BitShift takes unsigned integers only (tapeflow shifts signed ones arithmetically)",
    "rgb_to_hsv": "a colour-space conversion with no ONNX form written",
    "hsv_to_rgb": "a colour-space conversion with no ONNX form written",
    "fused_elementwise": "the exporter reads the graph before fusion; a fused node left in it is an exporter bug",
    "custom_gradient": "a custom gradient's forward function runs Python the graph does not hold",
    "unsorted_segment_prod": "ONNX's ScatterND has no product reduction",
}


#: primitives exported for some attributes only: what raises (UnimplementedError naming the op)
PARTIAL: dict = {
    "resize": "methods other than bilinear, nearest and bicubic (area, lanczos, gaussian, mitchellcubic)",
    "diag": "a diagonal other than the main one (k != 0) or a non-square result",
    "diag_part": "a diagonal other than the main one (k != 0)",
    "pad": "mode SYMMETRIC (ONNX pads CONSTANT, REFLECT and EDGE)",
    "real_div": "integer inputs",
    "unsorted_segment_sum": "an axis other than 0",
    "softmax_cross_entropy_with_logits": "the backprop output (a training graph's)",
    "sparse_softmax_cross_entropy_with_logits": "the backprop output (a training graph's)",
    "depthwise_conv2d": "a filter of unknown shape",
    "conv2d_backprop_input": "unknown spatial sizes",
}


def converts(*names):
    def deco(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return deco


def _unsupported(node, what):
    raise errors.UnimplementedError(f"{node.prim.name}: {what} has no ONNX form", node.prim.tf_name)


def _rank(t) -> int:
    return len(t._shape)


def _dt(t) -> str:
    return t._dtype.name


def _is_float(t) -> bool:
    return t._dtype.is_floating


# ---- element-wise -------------------------------------------------------------------------------

_UNARY = {"abs": "Abs", "acos": "Acos", "acosh": "Acosh", "asin": "Asin", "asinh": "Asinh", "atan": "Atan",
          "atanh": "Atanh", "ceil": "Ceil", "cos": "Cos", "cosh": "Cosh", "erf": "Erf", "exp": "Exp", "floor": "Floor",
          "log": "Log", "negative": "Neg", "reciprocal": "Reciprocal", "relu": "Relu", "sigmoid": "Sigmoid",
          "sign": "Sign", "sin": "Sin", "sinh": "Sinh", "sqrt": "Sqrt", "tan": "Tan", "tanh": "Tanh",
          "softplus": "Softplus", "softsign": "Softsign", "elu": "Elu", "selu": "Selu", "logical_not": "Not",
          "is_nan": "IsNaN", "is_inf": "IsInf", "bitwise_not": "BitwiseNot", "round": "Round", "identity": "Identity",
          "ensure_shape": "Identity",
          "stop_gradient": "Identity", "copy_to_device": "Identity"}
_BINARY = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "real_div": "Div", "pow": "Pow", "maximum": "Max",
           "minimum": "Min", "equal": "Equal", "greater": "Greater", "greater_equal": "GreaterOrEqual",
           "less": "Less", "less_equal": "LessOrEqual", "logical_and": "And", "logical_or": "Or",
           "logical_xor": "Xor", "bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr", "bitwise_xor": "BitwiseXor"}


def _unary(op_type):
    def conv(cx, node, ins):
        if node.prim.name == "abs" and not _is_float(node.inputs[0]) and _dt(node.inputs[0]) == "bool":
            return cx.node("Identity", ins)
        return cx.node(op_type, ins)
    return conv


def _binary(op_type):
    def conv(cx, node, ins):
        if op_type == "Div" and not _is_float(node.inputs[0]):
            _unsupported(node, f"integer {node.prim.name}")
        return cx.node(op_type, ins)
    return conv


for _n, _o in _UNARY.items():
    CONVERTERS[_n] = _unary(_o)
for _n, _o in _BINARY.items():
    CONVERTERS[_n] = _binary(_o)


def _scalar(cx, value, like):
    """A scalar constant of ``like``'s dtype (a tensor of the node)."""
    return cx.const(np.asarray(value, dtype=like._dtype.np))


@converts("not_equal")
def _not_equal(cx, node, ins):
    return cx.node("Not", [cx.node("Equal", ins)])


@converts("erfc")
def _erfc(cx, node, ins):
    return cx.node("Sub", [_scalar(cx, 1, node.inputs[0]), cx.node("Erf", ins)])


@converts("expm1")
def _expm1(cx, node, ins):
    return cx.node("Sub", [cx.node("Exp", ins), _scalar(cx, 1, node.inputs[0])])


@converts("log1p")
def _log1p(cx, node, ins):
    return cx.node("Log", [cx.node("Add", [ins[0], _scalar(cx, 1, node.inputs[0])])])


@converts("rsqrt")
def _rsqrt(cx, node, ins):
    return cx.node("Reciprocal", [cx.node("Sqrt", ins)])


@converts("square")
def _square(cx, node, ins):
    return cx.node("Mul", [ins[0], ins[0]])


@converts("squared_difference")
def _squared_difference(cx, node, ins):
    d = cx.node("Sub", ins)
    return cx.node("Mul", [d, d])


@converts("relu6")
def _relu6(cx, node, ins):
    x = node.inputs[0]
    return cx.node("Clip", [ins[0], _scalar(cx, 0, x), _scalar(cx, 6, x)])


@converts("log_sigmoid")
def _log_sigmoid(cx, node, ins):
    return cx.node("Neg", [cx.node("Softplus", [cx.node("Neg", ins)])])


@converts("silu")
def _silu(cx, node, ins):
    return cx.node("Mul", [ins[0], cx.node("Sigmoid", ins)])


@converts("gelu")
def _gelu(cx, node, ins):
    x = node.inputs[0]
    if node.attrs.get("approximate"):
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = cx.node("Mul", [cx.node("Mul", [ins[0], ins[0]]), ins[0]])
        inner = cx.node("Mul", [cx.node("Add", [ins[0], cx.node("Mul", [x3, _scalar(cx, 0.044715, x)])]),
                                _scalar(cx, np.sqrt(2.0 / np.pi), x)])
        t = cx.node("Add", [cx.node("Tanh", [inner]), _scalar(cx, 1, x)])
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        t = cx.node("Add", [cx.node("Erf", [cx.node("Mul", [ins[0], _scalar(cx, 1 / np.sqrt(2.0), x)])]),
                            _scalar(cx, 1, x)])
    return cx.node("Mul", [cx.node("Mul", [ins[0], t]), _scalar(cx, 0.5, x)])


@converts("leaky_relu")
def _leaky_relu(cx, node, ins):
    return cx.node("LeakyRelu", ins, alpha=float(node.attrs.get("alpha", 0.2)))


@converts("is_finite")
def _is_finite(cx, node, ins):
    return cx.node("Not", [cx.node("Or", [cx.node("IsNaN", ins), cx.node("IsInf", ins)])])


@converts("atan2")
def _atan2(cx, node, ins):
    """C's atan2(y, x): r = atan(|y| / |x|) in [0, pi/2] (pi/4 for two infinities, 0 for two zeros), then pi - r
    where x is negative (-0 included) and -r where y is (signed zeros told apart by the sign of 1 / z)."""
    yv, xv = ins
    like = node.inputs[0]
    zero, one = _scalar(cx, 0, like), _scalar(cx, 1, like)

    def negative(v):
        is0 = cx.node("Equal", [v, zero])
        return cx.node("Or", [cx.node("Less", [v, zero]),
                              cx.node("And", [is0, cx.node("Less", [cx.node("Div", [one, v]), zero])])])

    ay, ax = cx.node("Abs", [yv]), cx.node("Abs", [xv])
    both_inf = cx.node("And", [cx.node("IsInf", [ay]), cx.node("IsInf", [ax])])
    both_zero = cx.node("And", [cx.node("Equal", [ay, zero]), cx.node("Equal", [ax, zero])])
    r = cx.node("Atan", [cx.node("Div", [ay, ax])])
    r = cx.node("Where", [both_inf, _scalar(cx, np.pi / 4, like), r])
    r = cx.node("Where", [both_zero, zero, r])
    r = cx.node("Where", [negative(xv), cx.node("Sub", [_scalar(cx, np.pi, like), r]), r])
    return cx.node("Where", [negative(yv), cx.node("Neg", [r]), r])


@converts("div_no_nan")
def _div_no_nan(cx, node, ins):
    x = node.inputs[0]
    zero = _scalar(cx, 0, x)
    is0 = cx.node("Equal", [ins[1], zero])
    safe = cx.node("Where", [is0, _scalar(cx, 1, x), ins[1]])
    return cx.node("Where", [is0, zero, cx.node("Div", [ins[0], safe])])


def _py_divmod(cx, node, ins):
    """Python's float divmod (tapeflow's kernel): mod = fmod(x, y), moved by y where its sign differs from y's;
    div = (x - fmod) / y, less one then, rounded to the nearest integer below."""
    x, y = ins
    like = node.inputs[0]
    zero, one = _scalar(cx, 0, like), _scalar(cx, 1, like)
    fm = cx.node("Mod", [x, y], fmod=1)
    nz = cx.node("Not", [cx.node("Equal", [fm, zero])])
    adj = cx.node("And", [nz, cx.node("Xor", [cx.node("Less", [y, zero]), cx.node("Less", [fm, zero])])])
    mod = cx.node("Where", [adj, cx.node("Add", [fm, y]), cx.node("Where", [nz, fm, zero])])
    div = cx.node("Div", [cx.node("Sub", [x, fm]), y])
    div = cx.node("Where", [adj, cx.node("Sub", [div, one]), div])
    fl = cx.node("Floor", [div])
    up = cx.node("Greater", [cx.node("Sub", [div, fl]), _scalar(cx, 0.5, like)])
    fl = cx.node("Where", [up, cx.node("Add", [fl, one]), fl])
    whole = cx.node("Where", [cx.node("Equal", [div, zero]), zero, fl])
    whole = cx.node("Where", [cx.node("Equal", [y, zero]), cx.node("Div", [x, y]), whole])  # x / 0: +-inf, nan
    return whole, mod


@converts("floordiv")
def _floordiv(cx, node, ins):
    if _is_float(node.inputs[0]):
        return _py_divmod(cx, node, ins)[0]
    # integers: the truncated quotient, less one where the remainder's sign differs from y's
    x, y = ins
    zero = _scalar(cx, 0, node.inputs[0])
    q = cx.node("Div", ins)
    r = cx.node("Sub", [x, cx.node("Mul", [q, y])])
    adj = cx.node("And", [cx.node("Not", [cx.node("Equal", [r, zero])]),
                          cx.node("Xor", [cx.node("Less", [r, zero]), cx.node("Less", [y, zero])])])
    return cx.node("Sub", [q, cx.node("Cast", [adj], to=cx.onnx_dtype(_dt(node.inputs[0])))])


@converts("floormod")
def _floormod(cx, node, ins):
    if _is_float(node.inputs[0]):
        return _py_divmod(cx, node, ins)[1]
    return cx.node("Mod", ins, fmod=0)


@converts("truncatediv")
def _truncatediv(cx, node, ins):
    if _is_float(node.inputs[0]):
        d = cx.node("Div", ins)
        return cx.node("Mul", [cx.node("Floor", [cx.node("Abs", [d])]), cx.node("Sign", [d])])
    return cx.node("Div", ins)


@converts("truncatemod")
def _truncatemod(cx, node, ins):
    return cx.node("Mod", ins, fmod=1)


@converts("sigmoid_grad")
def _sigmoid_grad(cx, node, ins):  # dy y (1 - y), with inputs (dy, y)
    g, y = ins
    one = _scalar(cx, 1, node.inputs[1])
    return cx.node("Mul", [g, cx.node("Mul", [y, cx.node("Sub", [one, y])])])


@converts("tanh_grad")
def _tanh_grad(cx, node, ins):  # dy (1 - y^2), with inputs (dy, y)
    g, y = ins
    return cx.node("Mul", [g, cx.node("Sub", [_scalar(cx, 1, node.inputs[1]), cx.node("Mul", [y, y])])])


@converts("relu_grad")
def _relu_grad(cx, node, ins):  # dy where x > 0, with inputs (dy, x)
    g = node.inputs[0]
    return cx.node("Where", [cx.node("Greater", [ins[1], _scalar(cx, 0, node.inputs[1])]), ins[0],
                             _scalar(cx, 0, g)])


@converts("lstm_cell")
def _lstm_cell(cx, node, ins):  # gates i, f, g, o of z; c' = sig(f) c + sig(i) tanh(g), h' = sig(o) tanh(c')
    u = node.inputs[1]._shape[1]
    if u is None:
        _unsupported(node, "the fused LSTM cell with an unknown number of units")
    zi, zf, zg, zo = cx.node("Split", [ins[0], cx.i64([u] * 4)], n_out=4, axis=1)
    cn = cx.node("Add", [cx.node("Mul", [cx.node("Sigmoid", [zf]), ins[1]]),
                         cx.node("Mul", [cx.node("Sigmoid", [zi]), cx.node("Tanh", [zg])])])
    return cx.node("Mul", [cx.node("Sigmoid", [zo]), cx.node("Tanh", [cn])]), cn


@converts("gru_cell")
def _gru_cell(cx, node, ins):  # gates z, r, h of xw and hu; h' = z h + (1 - z) tanh(xw_h + q)
    u = node.inputs[2]._shape[1]
    if u is None:
        _unsupported(node, "the fused GRU cell with an unknown number of units")
    xz, xr, xh = cx.node("Split", [ins[0], cx.i64([u] * 3)], n_out=3, axis=1)
    hz, hr, hh = cx.node("Split", [ins[1], cx.i64([u] * 3)], n_out=3, axis=1)
    z = cx.node("Sigmoid", [cx.node("Add", [xz, hz])])
    if node.attrs["reset_after"]:  # q = sigmoid(xw_r + hu_r) * hu_h; without reset_after, hu_h itself
        hh = cx.node("Mul", [cx.node("Sigmoid", [cx.node("Add", [xr, hr])]), hh])
    n = cx.node("Tanh", [cx.node("Add", [xh, hh])])
    return cx.node("Add", [cx.node("Mul", [z, ins[2]]),
                           cx.node("Mul", [cx.node("Sub", [_scalar(cx, 1, node.inputs[2]), z]), n])])


@converts("sigmoid_cross_entropy_with_logits")
def _sigmoid_xent(cx, node, ins):  # max(x, 0) - x z + log(1 + exp(-|x|)), inputs (labels z, logits x)
    z, lg = ins
    return cx.node("Add", [cx.node("Sub", [cx.node("Relu", [lg]), cx.node("Mul", [lg, z])]),
                           cx.node("Softplus", [cx.node("Neg", [cx.node("Abs", [lg])])])])


@converts("softmax_cross_entropy_with_logits")
def _softmax_xent(cx, node, ins):
    if isinstance(node.outputs, tuple):
        _unsupported(node, "the loss with its backprop output")
    axis = node.attrs["axis"]
    prod = cx.node("Mul", [ins[0], cx.node("LogSoftmax", [ins[1]], axis=axis)])
    return cx.node("Neg", [cx.node("ReduceSum", [prod, cx.i64([axis])], keepdims=0)])


@converts("sparse_softmax_cross_entropy_with_logits")
def _sparse_softmax_xent(cx, node, ins):
    if isinstance(node.outputs, tuple):
        _unsupported(node, "the loss with its backprop output")
    lsm = cx.node("LogSoftmax", [ins[1]], axis=-1)
    labels = cx.node("Unsqueeze", [cx.node("Cast", [ins[0]], to=cx.onnx_dtype("int64")), cx.i64([-1])])
    picked = cx.node("GatherElements", [lsm, labels], axis=-1)
    return cx.node("Neg", [cx.node("Squeeze", [picked, cx.i64([-1])])])


# ---- casts, reductions ------------------------------------------------------------------------------

@converts("cast")
def _cast(cx, node, ins):
    return cx.node("Cast", ins, to=cx.onnx_dtype(node.attrs["dtype"].name))


def _axes(node):
    ax = node.attrs.get("axis")
    return None if ax is None else [int(a) for a in (ax if isinstance(ax, (tuple, list)) else (ax,))]


def _reduce(op_type):
    def conv(cx, node, ins):
        axes = _axes(node)
        keep = int(bool(node.attrs.get("keepdims", False)))
        x = ins[0]
        if axes is not None and not axes:
            return cx.node("Identity", [x])
        args = [x] if axes is None else [x, cx.i64(axes)]
        return cx.node(op_type, args, keepdims=keep)
    return conv


for _n, _o in {"reduce_sum": "ReduceSum", "reduce_mean": "ReduceMean", "reduce_max": "ReduceMax",
               "reduce_min": "ReduceMin", "reduce_prod": "ReduceProd"}.items():
    CONVERTERS[_n] = _reduce(_o)


def _bool_reduce(op_type):
    def conv(cx, node, ins):
        as_int = cx.node("Cast", ins, to=cx.onnx_dtype("int32"))
        r = _reduce(op_type)(cx, node, [as_int])
        return cx.node("Cast", [r], to=cx.onnx_dtype("bool"))
    return conv


CONVERTERS["reduce_all"] = _bool_reduce("ReduceMin")
CONVERTERS["reduce_any"] = _bool_reduce("ReduceMax")


def _arg(op_type):
    def conv(cx, node, ins):
        r = cx.node(op_type, ins, axis=int(node.attrs["axis"]), keepdims=0)
        out = node.attrs["output_type"].name
        return r if out == "int64" else cx.node("Cast", [r], to=cx.onnx_dtype(out))
    return conv


CONVERTERS["argmax"] = _arg("ArgMax")
CONVERTERS["argmin"] = _arg("ArgMin")


@converts("cumsum")
def _cumsum(cx, node, ins):
    return cx.node("CumSum", [ins[0], cx.i64(int(node.attrs["axis"]))], exclusive=int(bool(node.attrs["exclusive"])),
                   reverse=int(bool(node.attrs["reverse"])))


@converts("softmax")
def _softmax(cx, node, ins):
    return cx.node("Softmax", ins, axis=int(node.attrs["axis"]))


@converts("log_softmax")
def _log_softmax(cx, node, ins):
    return cx.node("LogSoftmax", ins, axis=int(node.attrs["axis"]))


# ---- matmul, convolutions, pooling ---------------------------------------------------------------------

def _swap_last(cx, name, rank):
    perm = list(range(rank))
    perm[-2:] = perm[-1], perm[-2]
    return cx.node("Transpose", [name], perm=perm)


@converts("matmul")
def _matmul(cx, node, ins):
    a, b = ins
    if node.attrs.get("transpose_a"):
        a = _swap_last(cx, a, _rank(node.inputs[0]))
    if node.attrs.get("transpose_b"):
        b = _swap_last(cx, b, _rank(node.inputs[1]))
    return cx.node("MatMul", [a, b])


def _pads(node, padding):
    """ONNX's auto_pad or explicit pads for a 2-D window op's ``padding`` attribute."""
    if padding == "SAME":
        return {"auto_pad": "SAME_UPPER"}
    if padding == "VALID":
        return {"auto_pad": "VALID"}
    (t, b), (le, r) = padding
    return {"pads": [int(t), int(le), int(b), int(r)]}


def _nchw(cx, x):
    return cx.node("Transpose", [x], perm=[0, 3, 1, 2])


def _nhwc(cx, x):
    return cx.node("Transpose", [x], perm=[0, 2, 3, 1])


@converts("conv2d")
def _conv2d(cx, node, ins):
    a = node.attrs
    w = cx.node("Transpose", [ins[1]], perm=[3, 2, 0, 1])  # HWIO -> OIHW
    kh, kw = node.inputs[1]._shape[:2]
    y = cx.node("Conv", [_nchw(cx, ins[0]), w], strides=list(a["strides"]), dilations=list(a["dilations"]),
                kernel_shape=[int(kh), int(kw)], **_pads(node, a["padding"]))
    return _nhwc(cx, y)


@converts("depthwise_conv2d")
def _depthwise_conv2d(cx, node, ins):
    a = node.attrs
    kh, kw, c, m = node.inputs[1]._shape
    if None in (kh, kw, c, m):
        _unsupported(node, "a depthwise filter of unknown shape")
    w = cx.node("Reshape", [ins[1], cx.i64([kh, kw, 1, c * m])])
    w = cx.node("Transpose", [w], perm=[3, 2, 0, 1])  # (C*M, 1, kh, kw)
    y = cx.node("Conv", [_nchw(cx, ins[0]), w], group=int(c), strides=list(a["strides"]),
                dilations=list(a["dilations"]), kernel_shape=[int(kh), int(kw)], **_pads(node, a["padding"]))
    return _nhwc(cx, y)


@converts("conv2d_backprop_input")
def _conv2d_transpose(cx, node, ins):
    a = node.attrs
    wt, dy = node.inputs
    kh, kw = wt._shape[:2]
    out_hw = a["input_sizes"][1:3]
    in_hw = dy._shape[1:3]
    if None in (kh, kw) or None in tuple(in_hw) or None in tuple(out_hw):
        _unsupported(node, "a transposed convolution of unknown spatial size")
    pads_b, pads_e, out_pad = [], [], []
    for i in range(2):
        k_eff = (int((kh, kw)[i]) - 1) * a["dilations"][i] + 1
        s = a["strides"][i]
        full = (in_hw[i] - 1) * s + k_eff
        if a["padding"] == "SAME":
            total = max(full - out_hw[i], 0)
            pb = total // 2
            pe = total - pb
        elif a["padding"] == "VALID":
            pb = pe = 0
        else:
            pb, pe = a["padding"][i]
        op = out_hw[i] - (full - pb - pe)
        if op < 0:
            pe += -op
            op = 0
        pads_b.append(int(pb))
        pads_e.append(int(pe))
        out_pad.append(int(op))
    w = cx.node("Transpose", [ins[0]], perm=[3, 2, 0, 1])  # (H, W, C_out, C_in) -> (C_in, C_out, H, W)
    y = cx.node("ConvTranspose", [_nchw(cx, ins[1]), w], strides=list(a["strides"]),
                dilations=list(a["dilations"]), kernel_shape=[int(kh), int(kw)], pads=pads_b + pads_e,
                output_padding=out_pad)
    return _nhwc(cx, y)


def _pool(op_type):
    def conv(cx, node, ins):
        a = node.attrs
        extra = {"count_include_pad": 0} if op_type == "AveragePool" else {}
        y = cx.node(op_type, [_nchw(cx, ins[0])], kernel_shape=list(a["ksize"]), strides=list(a["strides"]),
                    **_pads(node, a["padding"]), **extra)
        return _nhwc(cx, y)
    return conv


CONVERTERS["max_pool2d"] = _pool("MaxPool")
CONVERTERS["avg_pool2d"] = _pool("AveragePool")


@converts("resize")
def _resize(cx, node, ins):
    a = node.attrs
    modes = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
    if a["method"] not in modes:
        _unsupported(node, f"resize method {a['method']!r} (ONNX's Resize has {sorted(modes)})")
    x, out = node.inputs[0], node.outputs
    mode = modes[a["method"]]
    shape = cx.node("Shape", ins)
    sizes = cx.node("Concat", [cx.node("Slice", [shape, cx.i64([0]), cx.i64([1])]), cx.i64(list(a["size"])),
                               cx.node("Slice", [shape, cx.i64([3]), cx.i64([4])])], axis=0)
    kw = {"nearest_mode": "floor"} if mode == "nearest" else {}
    if mode == "cubic":
        kw = {"cubic_coeff_a": -0.5, "exclude_outside": 1}
    if a.get("antialias") and mode != "nearest":  # (no effect on nearest, as in TensorFlow)
        kw["antialias"] = 1
    xin = ins[0] if x._dtype.name == "float32" else cx.node("Cast", ins, to=cx.onnx_dtype("float32"))
    # (nearest: tapeflow samples floor((o + 0.5) * scale), ONNX's tf_half_pixel_for_nn with floor)
    ctm = "tf_half_pixel_for_nn" if mode == "nearest" else "half_pixel"
    y = cx.node("Resize", [xin, "", "", sizes], mode=mode, coordinate_transformation_mode=ctm, **kw)
    return y if out._dtype.name == "float32" else cx.node("Cast", [y], to=cx.onnx_dtype(out._dtype.name))


# ---- shapes --------------------------------------------------------------------------------------

@converts("reshape")
def _reshape(cx, node, ins):
    return cx.node("Reshape", [ins[0], cx.i64(list(node.attrs["shape"]))], allowzero=1)


@converts("transpose")
def _transpose(cx, node, ins):
    return cx.node("Transpose", ins, perm=[int(p) for p in node.attrs["perm"]])


@converts("concat")
def _concat(cx, node, ins):
    return cx.node("Concat", ins, axis=int(node.attrs["axis"]))


@converts("stack")
def _stack(cx, node, ins):
    ax = int(node.attrs["axis"])
    return cx.node("Concat", [cx.node("Unsqueeze", [i, cx.i64([ax])]) for i in ins], axis=ax)


@converts("unstack")
def _unstack(cx, node, ins):
    ax, num = int(node.attrs["axis"]), int(node.attrs["num"])
    outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
    if num == 1:
        parts = [ins[0]]
    else:
        parts = cx.node("Split", [ins[0], cx.i64([1] * num)], n_out=num, axis=ax)
    res = tuple(cx.node("Squeeze", [p, cx.i64([ax])]) for p in parts)
    return res if isinstance(node.outputs, tuple) else res[0] if outs else ()


@converts("split")
def _split(cx, node, ins):
    sizes = [int(s) for s in node.attrs["num_or_size_splits"]]
    if len(sizes) == 1:
        return (cx.node("Identity", ins),) if isinstance(node.outputs, tuple) else cx.node("Identity", ins)
    return tuple(cx.node("Split", [ins[0], cx.i64(sizes)], n_out=len(sizes), axis=int(node.attrs["axis"])))


@converts("tile")
def _tile(cx, node, ins):
    return cx.node("Tile", [ins[0], cx.i64(list(node.attrs["multiples"]))])


@converts("broadcast_to")
def _broadcast_to(cx, node, ins):
    return cx.node("Expand", [ins[0], cx.i64(list(node.attrs["shape"]))])


@converts("pad")
def _pad(cx, node, ins):
    a = node.attrs
    mode = a["mode"].upper()
    if mode not in ("CONSTANT", "REFLECT"):
        _unsupported(node, f"pad mode {mode!r} (ONNX pads CONSTANT and REFLECT as tapeflow does)")
    p = [tuple(map(int, q)) for q in a["paddings"]]
    pads = cx.i64([q[0] for q in p] + [q[1] for q in p])
    args = [ins[0], pads]
    if mode == "CONSTANT":
        args.append(_scalar(cx, a.get("constant_values", 0) or 0, node.inputs[0]))
    return cx.node("Pad", args, mode=mode.lower())


def _clamped_slice(cx, x, starts, ends, axes, steps):
    return cx.node("Slice", [x, cx.i64(starts), cx.i64(ends), cx.i64(axes), cx.i64(steps)])


@converts("slice")
def _slice(cx, node, ins):
    begin, size = node.attrs["begin"], node.attrs["size"]
    ends = [INT64_MAX if s == -1 else b + s for b, s in zip(begin, size)]
    return _clamped_slice(cx, ins[0], list(begin), ends, list(range(len(begin))), [1] * len(begin))


@converts("strided_slice")
def _strided_slice(cx, node, ins):
    a = node.attrs
    begin, end, strides = a["begin"], a["end"], a["strides"]
    n = len(begin)
    rank = _rank(node.inputs[0])
    starts, ends, axes, steps, squeeze, newaxes = [], [], [], [], [], []
    dim = 0   # the input dimension the spec entry i addresses
    out_dim = 0  # the output dimension (for new axes)
    for i in range(n):
        bit = 1 << i
        if a["ellipsis_mask"] & bit:
            after = sum(1 for j in range(i + 1, n) if not (a["new_axis_mask"] & (1 << j)))
            skip = rank - dim - after
            dim += skip
            out_dim += skip
            continue
        if a["new_axis_mask"] & bit:
            newaxes.append(out_dim)
            out_dim += 1
            continue
        s = int(strides[i])
        if a["shrink_axis_mask"] & bit:
            b = int(begin[i])
            starts.append(b)
            ends.append(INT64_MAX if b == -1 else b + 1)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
            dim += 1
            continue
        b = (0 if s > 0 else INT64_MAX) if a["begin_mask"] & bit else int(begin[i])
        e = (INT64_MAX if s > 0 else INT64_MIN) if a["end_mask"] & bit else int(end[i])
        starts.append(b)
        ends.append(e)
        axes.append(dim)
        steps.append(s)
        dim += 1
        out_dim += 1
    y = ins[0]
    if axes:
        y = _clamped_slice(cx, y, starts, ends, axes, steps)
    if squeeze:
        y = cx.node("Squeeze", [y, cx.i64(squeeze)])
    if newaxes:
        y = cx.node("Unsqueeze", [y, cx.i64(newaxes)])
    return y if y is not ins[0] else cx.node("Identity", [y])


@converts("reverse")
def _reverse(cx, node, ins):
    axes = [int(a) for a in node.attrs["axis"]]
    if not axes:
        return cx.node("Identity", ins)
    return _clamped_slice(cx, ins[0], [-1] * len(axes), [INT64_MIN] * len(axes), axes, [-1] * len(axes))


@converts("shape")
def _shape(cx, node, ins):
    s = cx.node("Shape", ins)
    out = node.attrs["out_type"].name
    return s if out == "int64" else cx.node("Cast", [s], to=cx.onnx_dtype(out))


@converts("size")
def _size(cx, node, ins):
    s = cx.node("Size", ins)
    out = node.attrs["out_type"].name
    return s if out == "int64" else cx.node("Cast", [s], to=cx.onnx_dtype(out))


@converts("rank")
def _rank_op(cx, node, ins):
    return cx.const(np.asarray(_rank(node.inputs[0]), dtype=node.outputs._dtype.np))


@converts("fill")
def _fill(cx, node, ins):
    a = node.attrs
    out = node.outputs
    value = np.asarray(a["value"]).astype(out._dtype.np).reshape(1)
    if node.inputs:  # ``*like``: the shape of a tensor known when the graph runs
        shape = cx.node("Shape", ins[:1])
    else:
        shape = cx.i64(list(a["shape"]))
    return cx.node("ConstantOfShape", [shape], value=cx.tensor_attr(value))


@converts("eye", "range")
def _static_value(cx, node, ins):
    """Ops of static attributes only: the value, computed now by tapeflow, as an initializer."""
    from ..runner import run_tensors
    from ..runner import init_scope

    with init_scope():
        v = run_tensors(node.prim, (), dict(node.attrs))
    return cx.const(v.numpy())


@converts("range_dynamic")
def _range_dynamic(cx, node, ins):
    dt = node.outputs._dtype.name
    args = [i if _dt(t) == dt else cx.node("Cast", [i], to=cx.onnx_dtype(dt)) for i, t in zip(ins, node.inputs)]
    return cx.node("Range", args)


@converts("one_hot")
def _one_hot(cx, node, ins):
    a = node.attrs
    idx = node.inputs[0]
    depth = int(a["depth"])
    # tapeflow (as TensorFlow) gives all-off rows for negative indices; ONNX counts them from the end
    i64 = cx.node("Cast", ins, to=cx.onnx_dtype("int64")) if _dt(idx) != "int64" else ins[0]
    safe = cx.node("Where", [cx.node("Less", [i64, cx.i64(0)]), cx.i64(depth), i64])
    dt = node.outputs._dtype  # (the attribute's, or int32 where 8- and 16-bit integers run widened)
    on = np.asarray(_host(a["on_value"])).astype(dt.np).reshape(())
    off = np.asarray(_host(a["off_value"])).astype(dt.np).reshape(())
    # ONNX Runtime's OneHot has kernels for few value types: a 0/1 int64 one-hot picks on or off by Where
    hot = cx.node("OneHot", [safe, cx.i64(depth), cx.i64([0, 1])], axis=int(a["axis"]))
    return cx.node("Where", [cx.node("Cast", [hot], to=cx.onnx_dtype("bool")), cx.const(on), cx.const(off)])


def _host(v):
    return v.numpy() if hasattr(v, "numpy") else v


# ---- gather, scatter, where, sort ---------------------------------------------------------------------

def _as_i64(cx, t, name):
    return name if _dt(t) == "int64" else cx.node("Cast", [name], to=cx.onnx_dtype("int64"))


@converts("gather")
def _gather(cx, node, ins):
    p, i = node.inputs
    b, axis = int(node.attrs.get("batch_dims", 0)), int(node.attrs["axis"])
    idx = _as_i64(cx, i, ins[1])
    if not b:
        return cx.node("Gather", [ins[0], idx], axis=axis)
    # batch_dims b: move the gathered axis next to the batch, GatherND over it, move the rest back
    pr, ni = _rank(p), _rank(i) - b
    axis %= pr
    x = ins[0]
    if axis != b:
        x = cx.node("Transpose", [x], perm=list(range(b)) + [axis] + [d for d in range(b, pr) if d != axis])
    y = cx.node("GatherND", [x, cx.node("Unsqueeze", [idx, cx.i64([-1])])], batch_dims=b)
    if axis == b:
        return y
    m = axis - b  # the dimensions between the batch and the gathered axis end up after the indices' ones
    perm = list(range(b)) + [b + ni + j for j in range(m)] + [b + j for j in range(ni)] + \
        list(range(b + ni + m, b + ni + m + pr - axis - 1))
    return cx.node("Transpose", [y], perm=perm)


@converts("gather_nd")
def _gather_nd(cx, node, ins):
    return cx.node("GatherND", [ins[0], _as_i64(cx, node.inputs[1], ins[1])],
                   batch_dims=int(node.attrs.get("batch_dims", 0)))


@converts("scatter_nd")
def _scatter_nd(cx, node, ins):
    upd = node.inputs[1]
    zeros = cx.node("ConstantOfShape", [cx.i64(list(node.attrs["shape"]))],
                    value=cx.tensor_attr(np.zeros(1, dtype=upd._dtype.np)))
    return cx.node("ScatterND", [zeros, _as_i64(cx, node.inputs[0], ins[0]), ins[1]], reduction="add")


def _tensor_scatter(reduction):
    def conv(cx, node, ins):
        kw = {"reduction": reduction} if reduction else {}
        return cx.node("ScatterND", [ins[0], _as_i64(cx, node.inputs[1], ins[1]), ins[2]], **kw)
    return conv


CONVERTERS["tensor_scatter_nd_update"] = _tensor_scatter(None)
CONVERTERS["tensor_scatter_nd_add"] = _tensor_scatter("add")
CONVERTERS["tensor_scatter_nd_max"] = _tensor_scatter("max")
CONVERTERS["tensor_scatter_nd_min"] = _tensor_scatter("min")


def _segment(reduction):
    def conv(cx, node, ins):
        data, ids = node.inputs
        a = node.attrs
        if int(a.get("axis", 0) or 0) or int(a.get("batch_dims", 0) or 0):
            _unsupported(node, "a segment reduction over an axis other than 0")
        np_dt = data._dtype.np
        orig = getattr(data, "_orig", data)._dtype.np  # (8- and 16-bit integers run widened: their own bounds)
        info = np.finfo(orig) if data._dtype.is_floating else np.iinfo(orig)
        init = np.array([0 if reduction == "add" else info.min if reduction == "max" else info.max], np_dt)
        k = _rank(ids)
        i64 = _as_i64(cx, ids, ins[1])
        neg = cx.node("Less", [i64, cx.i64(0)])
        # negative ids are dropped: they scatter the reduction's identity into segment 0
        safe = cx.node("Where", [neg, cx.i64(0), i64])
        negx = neg
        for _ in range(_rank(data) - k):
            negx = cx.node("Unsqueeze", [negx, cx.i64([-1])])
        upd = cx.node("Where", [negx, cx.const(init.reshape(())), ins[0]])
        tail = cx.node("Slice", [cx.node("Shape", [ins[0]]), cx.i64([k]), cx.i64([INT64_MAX])])
        shape = cx.node("Concat", [cx.i64([int(a["num_segments"])]), tail], axis=0)
        base = cx.node("ConstantOfShape", [shape], value=cx.tensor_attr(init))
        return cx.node("ScatterND", [base, cx.node("Unsqueeze", [safe, cx.i64([-1])]), upd], reduction=reduction)
    return conv


CONVERTERS["unsorted_segment_sum"] = _segment("add")
CONVERTERS["unsorted_segment_max"] = _segment("max")
CONVERTERS["unsorted_segment_min"] = _segment("min")


@converts("select")
def _select(cx, node, ins):
    return cx.node("Where", ins)


@converts("where")
def _where(cx, node, ins):
    return cx.node("Transpose", [cx.node("NonZero", ins)], perm=[1, 0])


def _topk_all(cx, node, x, axis, largest):
    """TopK over the whole ``axis`` (a sort): (values, int64 indices)."""
    n = cx.node("Gather", [cx.node("Shape", [x]), cx.i64([axis])], axis=0)
    return cx.node("TopK", [x, n], n_out=2, axis=axis, largest=largest, sorted=1)


@converts("sort")
def _sort(cx, node, ins):
    ax = int(node.attrs["axis"]) % max(_rank(node.inputs[0]), 1)
    return _topk_all(cx, node, ins[0], ax, int(node.attrs["direction"] == "DESCENDING"))[0]


@converts("argsort")
def _argsort(cx, node, ins):
    ax = int(node.attrs["axis"]) % max(_rank(node.inputs[0]), 1)
    idx = _topk_all(cx, node, ins[0], ax, int(node.attrs["direction"] == "DESCENDING"))[1]
    return cx.node("Cast", [idx], to=cx.onnx_dtype(node.outputs._dtype.name))


@converts("top_k")
def _top_k(cx, node, ins):
    v, i = cx.node("TopK", [ins[0], cx.i64([int(node.attrs["k"])])], n_out=2, axis=-1, largest=1, sorted=1)
    return v, cx.node("Cast", [i], to=cx.onnx_dtype(node.outputs[1]._dtype.name))


@converts("det")
def _det(cx, node, ins):
    return cx.node("Det", ins)


@converts("diag")
def _diag(cx, node, ins):
    a = node.attrs
    n = node.inputs[0]._shape[-1]
    if a.get("k", 0) not in (0, (0, 0)) or n is None or a.get("num_rows", -1) not in (-1, n) or \
            a.get("num_cols", -1) not in (-1, n):
        _unsupported(node, "diag off the main diagonal, of a non-square or unknown size")
    d = node.inputs[0]
    eye = cx.const(np.eye(n, dtype=d._dtype.np))
    y = cx.node("Mul", [cx.node("Unsqueeze", [ins[0], cx.i64([-1])]), eye])
    pad = _host(a.get("padding_value", 0))
    if np.any(np.asarray(pad) != 0):
        off = cx.const((1 - np.eye(n)).astype(d._dtype.np) * np.asarray(pad, d._dtype.np))
        y = cx.node("Add", [y, off])
    return y


@converts("diag_part")
def _diag_part(cx, node, ins):
    x = node.inputs[0]
    if node.attrs.get("k", 0) not in (0, (0, 0)):
        _unsupported(node, "diag_part with k != 0")
    m, n = x._shape[-2:]
    if m is None or n is None:
        _unsupported(node, "diag_part of a matrix of unknown size")
    d = min(m, n)
    # x[..., i, i]: flatten the last two axes and take every (n + 1)-th element
    flat = cx.node("Reshape", [ins[0], cx.i64([0] * (_rank(x) - 2) + [m * n])])
    return cx.node("Gather", [flat, cx.const(np.arange(d, dtype=np.int64) * (n + 1))], axis=-1)


@converts("read_variable")
def _read_variable(cx, node, ins):
    return cx.variable(node.attrs["var"])


@converts("branch")
def _branch(cx, node, ins):
    return cx.branch(node)


@converts("while_loop")
def _while_loop(cx, node, ins):
    return cx.while_loop(node)


def not_exportable_reason(name: str):
    """Why primitive ``name`` has no ONNX form, or None when it has one."""
    if name in CONVERTERS:
        return None
    return NOT_EXPORTABLE.get(name, "no ONNX mapping is written for it")
