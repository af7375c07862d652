"""``tf.saved_model.load``: an exported model (ONNX, one model per signature) back as graph functions.

The importer reads each signature's ONNX model and traces it, node by node, into a tapeflow graph: every
ONNX node becomes the tapeflow ops that compute it (``Conv`` a transpose to NHWC, ``conv2d`` and a
transpose back; ``If`` a ``tf.cond``; ``Loop`` a ``tf.while_loop``), so the result is a ConcreteFunction
like a traced one: the graph compiler's passes and element-wise fusion run on it, tapes differentiate
through it and it can be called inside another ``tf.function``.  Nodes whose inputs are all known when the
model loads (shape arithmetic over initializers and static shapes) are computed once, at load time, on
tapeflow's kernels.  Nothing of the Python that built the model is needed: only ``onnx`` (to read the
protobuf files: ``pip install 'tapeflow-core[onnx]'``) and tapeflow.

A model with an op outside the supported set (:data:`SUPPORTED_OPS`) fails when it loads, naming the op
and its node, before anything runs.
"""
from __future__ import annotations

import collections
import json
import math
import os
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import errors, nest
from .. import ops as _o
from ..control_flow import cond as _cond
from ..control_flow import while_loop as _while_loop
from ..function import function as _function
from ..module import Module
from ..runner import current_graph, init_scope
from ..tensor import Tensor, convert_to_tensor
from ..tensor_spec import TensorSpec
from ..variables import Variable
from .export import DEFAULT_SIGNATURE, FORMAT, FORMAT_VERSION, MANIFEST

__all__ = ["load", "SUPPORTED_OPS", "LoadedModel", "LoadedSignature"]

OP = "LoadSavedModel"
_ONE_DAY = 2 ** 62  # |start|/|end| of an ONNX Slice at least this large mean "to the end"

# ONNX TensorProto.DataType -> tapeflow dtype
_DTYPES = {1: _dt.float32, 2: _dt.uint8, 3: _dt.int8, 5: _dt.int16, 6: _dt.int32, 7: _dt.int64, 8: _dt.string,
           9: _dt.bool_, 10: _dt.float16, 11: _dt.float64, 16: _dt.bfloat16}


def _onnx():
    try:
        import onnx
    except ModuleNotFoundError:
        raise ImportError("tf.saved_model.load reads ONNX files with the 'onnx' package, which is not installed; "
                          "install it with: pip install 'tapeflow-core[onnx]'") from None
    return onnx


def _decode_error():
    from google.protobuf.message import DecodeError  # protobuf: onnx's own dependency

    return DecodeError


def _dtype(code, where):
    dt = _DTYPES.get(int(code))
    if dt is None:
        raise errors.UnimplementedError(
            f"{where}: ONNX element type {code} has no tapeflow dtype; allowed: "
            f"{', '.join(f'{k} ({v.name})' for k, v in _DTYPES.items())}", OP)
    return dt


# ---- values the importer knows while it traces -------------------------------------------------------

def _known(x) -> bool:
    """Whether ``x`` has a value now (an initializer, a constant, a folded node) rather than a symbolic one."""
    return isinstance(x, Tensor) and x._h is not None


class _Dim:
    """An unknown dimension of a shape vector: dimension ``axis`` of tensor ``src`` (two are the same size when
    they name the same dimension of the same tensor)."""

    __slots__ = ("src", "axis")

    def __init__(self, src, axis) -> None:
        self.src, self.axis = src, axis

    def __eq__(self, other):
        return isinstance(other, _Dim) and other.src is self.src and other.axis == self.axis

    def __hash__(self):
        return hash((id(self.src), self.axis))

    def __repr__(self):
        return "?"


def _unknown(v) -> bool:
    return v is None or isinstance(v, _Dim)


def _dims_of(x) -> list:
    """``x``'s shape with a :class:`_Dim` for each unknown dimension."""
    return [_Dim(x, i) if d is None else d for i, d in enumerate(x._shape)]


class _Ctx:
    """What one import needs besides the values: the opset, the partial values of shape vectors
    (``id(tensor) -> [int or None, ...]``) and the shape tensors that are exactly ``Shape(ref)``."""

    def __init__(self, opset, where) -> None:
        self.opset, self.where = opset, where
        self.partial: dict = {}
        self.shape_of: dict = {}
        self.keep: list = []  # the tensors whose ids key the tables above

    def note(self, t, values, ref=None):
        self.keep.append(t)
        self.partial[id(t)] = list(values)
        if ref is not None:
            self.shape_of[id(t)] = ref
        return t


class _Node:
    """One ONNX node as the handlers see it: ``op``, ``name``, ``attrs`` (Python values), ``outputs``."""

    __slots__ = ("op", "name", "inputs", "outputs", "attrs", "ctx")

    def __init__(self, proto, ctx) -> None:
        onnx = _onnx()
        self.op, self.name, self.ctx = proto.op_type, proto.name or proto.output[0], ctx
        self.inputs, self.outputs = list(proto.input), list(proto.output)
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in proto.attribute}

    def attr(self, name, default=None):
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def fail(self, what, allowed, cls=errors.InvalidArgumentError):
        raise cls(f"ONNX node {self.name!r} ({self.op}) in {self.ctx.where}: {what}; allowed: {allowed}", OP)

    def ints(self, x, what, unknown=False):
        """The value of shape-like input ``x`` as Python ints (None for an unknown entry if ``unknown``)."""
        if _known(x):
            return [int(v) for v in np.asarray(x.numpy()).reshape(-1)]
        vals = self.ctx.partial.get(id(x))
        if vals is not None and (unknown or not any(map(_unknown, vals))):
            return list(vals)
        self.fail(f"{what} is computed from the model's inputs while tapeflow needs its value when the graph is "
                  f"built", "a constant (initializer, Constant node) or a shape of known dimensions")


def _prod(vals):
    return None if any(map(_unknown, vals)) else math.prod(vals)


def _rank(x, node):
    if x._shape is None:
        node.fail("an input of unknown rank", "inputs of known rank")
    return len(x._shape)


def _axis(a, rank, node, what="axis"):
    a = int(a)
    if not -rank <= a < max(rank, 1):
        node.fail(f"{what} = {a} is out of range for rank {rank}", f"[{-rank}, {rank})")
    return a % max(rank, 1)


def _const(value, dtype=None):
    with init_scope():
        return convert_to_tensor(np.asarray(value), dtype)


def _shape_tensor(x, ctx):
    """``Shape(x)`` as int64: a known constant when x's shape is static, else the symbolic shape with the
    known entries remembered."""
    shape = _dims_of(x)
    if None not in x._shape:
        return ctx.note(_const(np.asarray(shape, np.int64)), shape, x)
    return ctx.note(_o.shape(x, out_type=_dt.int64), shape, x)


# ---- handlers: each takes (node, *inputs) with None for an absent optional input, returns the outputs --------

#: ONNX op -> its handler ``fn(node, *inputs) -> output(s)`` (tapeflow ops; control flow is in ``CONTROL``)
HANDLERS: dict = {}


def _handler(*names):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco


def _unary(name, fn):
    HANDLERS[name] = lambda node, x: fn(x)


for _name, _fn in {"Abs": _o.abs, "Neg": _o.negative, "Exp": _o.exp, "Log": _o.log, "Sqrt": _o.sqrt,
                   "Reciprocal": _o.reciprocal, "Floor": _o.floor, "Ceil": _o.ceil, "Round": _o.round,
                   "Sign": _o.sign, "Sin": _o.sin, "Cos": _o.cos, "Tan": _o.tan, "Asin": _o.asin, "Acos": _o.acos,
                   "Atan": _o.atan, "Sinh": _o.sinh, "Cosh": _o.cosh, "Asinh": _o.asinh, "Acosh": _o.acosh,
                   "Atanh": _o.atanh, "Tanh": _o.tanh, "Sigmoid": _o.sigmoid, "Relu": _o.relu, "Erf": _o.erf,
                   "Softplus": _o.softplus, "Softsign": _o.softsign, "IsNaN": _o.is_nan, "Not": _o.logical_not,
                   "Identity": _o.identity, "BitwiseNot": _o.bitwise_not}.items():
    _unary(_name, _fn)

for _name, _fn in {"Add": _o.add, "Sub": _o.subtract, "Mul": _o.multiply, "Equal": _o.equal, "Less": _o.less,
                   "LessOrEqual": _o.less_equal, "Greater": _o.greater, "GreaterOrEqual": _o.greater_equal,
                   "And": _o.logical_and, "Or": _o.logical_or, "Xor": _o.logical_xor,
                   "BitwiseAnd": _o.bitwise_and, "BitwiseOr": _o.bitwise_or, "BitwiseXor": _o.bitwise_xor}.items():
    HANDLERS[_name] = (lambda fn: lambda node, a, b: fn(a, b))(_fn)


@_handler("Div")
def _div(node, a, b):
    return _o.divide(a, b) if a.dtype.is_floating else _o.truncatediv(a, b)


@_handler("Mod")
def _mod(node, a, b):
    return _o.truncatemod(a, b) if node.attr("fmod", 0) or a.dtype.is_floating else _o.floormod(a, b)


@_handler("Pow")
def _pow(node, a, b):
    return _o.pow(a, b if b.dtype is a.dtype else _o.cast(b, a.dtype))


@_handler("BitShift")
def _bitshift(node, a, b):
    return _o.left_shift(a, b) if node.attr("direction") == "LEFT" else _o.right_shift(a, b)


def _variadic(fn):
    def h(node, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out
    return h


HANDLERS["Max"] = _variadic(_o.maximum)
HANDLERS["Min"] = _variadic(_o.minimum)
HANDLERS["Sum"] = _variadic(_o.add)


@_handler("Mean")
def _mean(node, *xs):
    return _o.divide(_variadic(_o.add)(node, *xs), _const(len(xs), xs[0].dtype))


@_handler("IsInf")
def _isinf(node, x):
    pos, neg = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    inf = _o.is_inf(x)
    if pos and neg:
        return inf
    if not pos and not neg:
        return _o.logical_and(inf, _o.logical_not(inf))
    return _o.logical_and(inf, _o.greater(x, _const(0, x.dtype)) if pos else _o.less(x, _const(0, x.dtype)))


@_handler("LeakyRelu")
def _leaky(node, x):
    return _o.leaky_relu(x, alpha=float(node.attr("alpha", 0.01)))


def _elu_with(x, alpha):
    neg = _o.multiply(_const(alpha, x.dtype), _o.subtract(_o.exp(_o.minimum(x, _const(0, x.dtype))),
                                                           _const(1, x.dtype)))
    return _o.where(_o.greater(x, _const(0, x.dtype)), x, neg)


@_handler("Elu")
def _elu(node, x):
    alpha = float(node.attr("alpha", 1.0))
    return _o.elu(x) if alpha == 1.0 else _elu_with(x, alpha)


@_handler("Selu")
def _selu(node, x):
    alpha = float(node.attr("alpha", 1.67326319217681884765625))
    gamma = float(node.attr("gamma", 1.05070102214813232421875))
    return _o.multiply(_const(gamma, x.dtype), _elu_with(x, alpha))


@_handler("HardSigmoid")
def _hard_sigmoid(node, x):
    return _hard_sigmoid_of(x, float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5)))


def _hard_sigmoid_of(x, alpha, beta):
    y = _o.add(_o.multiply(x, _const(alpha, x.dtype)), _const(beta, x.dtype))
    return _o.minimum(_o.maximum(y, _const(0, x.dtype)), _const(1, x.dtype))


@_handler("HardSwish")
def _hard_swish(node, x):
    return _o.multiply(x, _hard_sigmoid_of(x, 1 / 6, 0.5))


@_handler("PRelu")
def _prelu(node, x, slope):
    return _o.where(_o.less(x, _const(0, x.dtype)), _o.multiply(x, slope), x)


@_handler("Gelu")
def _gelu(node, x):
    approx = node.attr("approximate", "none")
    if approx not in ("none", "tanh"):
        node.fail(f"approximate = {approx!r}", "'none', 'tanh'")
    return _o.gelu(x, approximate=approx == "tanh")


@_handler("Clip")
def _clip(node, x, lo=None, hi=None):
    if "min" in node.attrs:  # opset < 11: attributes
        lo = _const(node.attr("min"), x.dtype)
    if "max" in node.attrs:
        hi = _const(node.attr("max"), x.dtype)
    if lo is not None:
        x = _o.maximum(x, lo)
    if hi is not None:
        x = _o.minimum(x, hi)
    return x


@_handler("Where")
def _where(node, c, a, b):
    return _o.where(c, a, b)


@_handler("Cast")
def _cast(node, x):
    dt = _dtype(node.attr("to"), f"ONNX node {node.name!r} (Cast)")
    y = _o.cast(x, dt)
    vals = node.ctx.partial.get(id(x))
    if vals is not None and dt.is_integer:
        node.ctx.note(y, vals, node.ctx.shape_of.get(id(x)))
    return y


@_handler("CastLike")
def _cast_like(node, x, like):
    return _o.cast(x, like.dtype)


@_handler("Dropout")
def _dropout(node, x, ratio=None, training=None):
    if training is not None and (not _known(training) or bool(training.numpy())):
        node.fail("training_mode is true or computed", "inference (training_mode absent or false)")
    if len(node.outputs) > 1 and node.outputs[1]:
        return x, _o.cast(_o.ones_like(x), _dt.bool_)
    return x


# -- matrix products

@_handler("MatMul")
def _matmul(node, a, b):
    ra, rb = _rank(a, node), _rank(b, node)
    a2 = _o.expand_dims(a, 0) if ra == 1 else a
    b2 = _o.expand_dims(b, -1) if rb == 1 else b
    y = _o.matmul(a2, b2)
    if rb == 1:
        y = _o.squeeze(y, axis=[-1])
    if ra == 1:
        y = _o.squeeze(y, axis=[-1 if rb == 1 else -2])
    return y


@_handler("Gemm")
def _gemm(node, a, b, c=None):
    y = _o.matmul(a, b, transpose_a=bool(node.attr("transA", 0)), transpose_b=bool(node.attr("transB", 0)))
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    if alpha != 1.0:
        y = _o.multiply(y, _const(alpha, y.dtype))
    if c is not None:
        y = _o.add(y, c if beta == 1.0 else _o.multiply(c, _const(beta, c.dtype)))
    return y


@_handler("Einsum")
def _einsum(node, *xs):
    return _o.einsum(node.attr("equation").replace(" ", ""), *xs)


# -- reductions

def _reduce_axes(node, x, axes_in):
    rank = _rank(x, node)
    axes = node.attr("axes")
    if axes is None and axes_in is not None:
        axes = node.ints(axes_in, "axes")
    if not axes:
        return None if not node.attr("noop_with_empty_axes", 0) else ()
    return sorted({_axis(a, rank, node, "axes") for a in axes})


def _reducer(fn, pre=None, post=None):
    def h(node, x, axes_in=None):
        axes = _reduce_axes(node, x, axes_in)
        if axes == ():
            return x
        keep = bool(node.attr("keepdims", 1))
        y = fn(pre(x) if pre else x, axis=axes, keepdims=keep)
        return post(y) if post else y
    return h


for _name, _fn in {"ReduceSum": _o.reduce_sum, "ReduceMean": _o.reduce_mean, "ReduceMax": _o.reduce_max,
                   "ReduceMin": _o.reduce_min, "ReduceProd": _o.reduce_prod,
                   "ReduceLogSumExp": _o.reduce_logsumexp}.items():
    HANDLERS[_name] = _reducer(_fn)
HANDLERS["ReduceSumSquare"] = _reducer(_o.reduce_sum, pre=_o.square)
HANDLERS["ReduceL1"] = _reducer(_o.reduce_sum, pre=_o.abs)
HANDLERS["ReduceL2"] = _reducer(_o.reduce_sum, pre=_o.square, post=_o.sqrt)
HANDLERS["ReduceLogSum"] = _reducer(_o.reduce_sum, post=_o.log)


def _arg(fn):
    def h(node, x):
        rank = _rank(x, node)
        axis = _axis(node.attr("axis", 0), rank, node)
        if node.attr("select_last_index", 0):
            n = x._shape[axis]
            if n is None:
                node.fail("select_last_index over a dimension of unknown size", "a known size")
            y = _o.subtract(_const(n - 1, _dt.int64), fn(_o.reverse(x, [axis]), axis=axis, output_type=_dt.int64))
        else:
            y = fn(x, axis=axis, output_type=_dt.int64)
        return _o.expand_dims(y, axis) if node.attr("keepdims", 1) else y
    return h


HANDLERS["ArgMax"] = _arg(_o.argmax)
HANDLERS["ArgMin"] = _arg(_o.argmin)


def _softmax_like(fn):
    def h(node, x):
        rank = _rank(x, node)
        axis = _axis(node.attr("axis", -1 if node.ctx.opset >= 13 else 1), rank, node)
        if node.ctx.opset >= 13 or axis == rank - 1:
            return fn(x, axis=axis)
        # opset < 13: the input is seen as a matrix [prod(shape[:axis]), prod(shape[axis:])]
        inner = _prod(list(x._shape[axis:]))
        if inner is None:
            node.fail("softmax (opset < 13) over dimensions of unknown size", "known sizes from axis on")
        y = fn(_o.reshape(x, [-1, inner]), axis=1)
        return _o.reshape(y, _reshape_target(node, x, _dims_of(x)))
    return h


HANDLERS["Softmax"] = _softmax_like(_o.softmax)
HANDLERS["LogSoftmax"] = _softmax_like(_o.log_softmax)


@_handler("CumSum")
def _cumsum(node, x, axis):
    return _o.cumsum(x, axis=_axis(node.ints(axis, "axis")[0], _rank(x, node), node),
                     exclusive=bool(node.attr("exclusive", 0)), reverse=bool(node.attr("reverse", 0)))


@_handler("TopK")
def _topk(node, x, k):
    rank = _rank(x, node)
    axis = _axis(node.attr("axis", -1), rank, node)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    xt = _o.transpose(x, perm) if axis != rank - 1 else x
    largest = node.attr("largest", 1)
    if _known(k):
        vals, idx = _o.top_k(xt if largest else _o.negative(xt), k=node.ints(k, "K")[0], sorted=True)
        if not largest:
            vals = _o.negative(vals)
    else:  # K computed by the graph: a stable sort of the axis (ties keep the lower index first), its first K
        order = _o.argsort(xt, axis=-1, direction="DESCENDING" if largest else "ASCENDING", stable=True)
        first = _o.range_(_const(0, _dt.int32), _o.reshape(_o.cast(k, _dt.int32), []), _const(1, _dt.int32),
                          dtype=_dt.int32)
        idx = _o.gather(order, first, axis=rank - 1)
        vals = _o.gather(xt, idx, axis=rank - 1, batch_dims=rank - 1)
    if axis != rank - 1:
        vals, idx = _o.transpose(vals, perm), _o.transpose(idx, perm)
    return vals, _o.cast(idx, _dt.int64)


# -- shapes

def _reshape_target(node, x, target, allowzero=0):
    """``target`` (ints, -1 = infer, 0 = copy the input's, an unknown entry: None or a :class:`_Dim`) as a
    shape tapeflow's reshape takes (at most one -1).  Unknown entries that are dimensions of the input
    itself cancel against them, so ``[batch, -1]`` of an input ``[?, 3, 4]`` becomes ``[-1, 12]``."""
    dims = _dims_of(x)
    out = []
    for i, d in enumerate(target):
        if d == 0 and not isinstance(d, _Dim) and not allowzero:
            if i >= len(dims):
                node.fail(f"shape entry {i} is 0 (copy) but the input has rank {len(dims)}", "a rank above i")
            d = dims[i]
        out.append(d)
    unknown = [d for d in out if _unknown(d) or d == -1]
    if len(unknown) > 1:
        free_in = [d for d in dims if isinstance(d, _Dim)]
        matched = [d for d in out if isinstance(d, _Dim) and d in free_in]
        rest = [d for d in out if not isinstance(d, _Dim) or d not in free_in]
        if len(matched) == len(free_in) == 1 and not any(_unknown(d) for d in rest) and rest.count(-1) <= 1:
            known_in = math.prod(d for d in dims if not isinstance(d, _Dim))
            known_out = math.prod(d for d in rest if d != -1)
            if -1 in rest:
                if known_out == 0 or known_in % known_out:
                    node.fail(f"target shape {out} does not divide the input's {dims}", "a shape of as many elements")
                out = [known_in // known_out if (d == -1 and not isinstance(d, _Dim)) else d for d in out]
            return [-1 if isinstance(d, _Dim) else d for d in out]
        node.fail(f"target shape {['?' if _unknown(d) else d for d in out]} has {len(unknown)} entries unknown "
                  f"when the graph is built", "at most one unknown entry (or -1)")
    return [-1 if _unknown(d) else d for d in out]


@_handler("Reshape")
def _reshape(node, x, shape):
    target = _reshape_target(node, x, node.ints(shape, "shape", unknown=True), node.attr("allowzero", 0))
    return _o.reshape(x, target)


@_handler("Flatten")
def _flatten(node, x):
    rank = _rank(x, node)
    axis = node.attr("axis", 1)
    axis = axis + rank if axis < 0 else axis
    shape = _dims_of(x)
    head, tail = _prod(shape[:axis]), _prod(shape[axis:])
    if head is None and tail is None:
        node.fail(f"input shape {shape} has unknown dimensions on both sides of axis {axis}",
                  "known dimensions on one side")
    return _o.reshape(x, [-1 if head is None else head, -1 if head is not None or tail is None else tail])


@_handler("Transpose")
def _transpose(node, x):
    rank = _rank(x, node)
    perm = node.attr("perm") or list(range(rank))[::-1]
    return _o.transpose(x, [int(p) for p in perm])


@_handler("Squeeze")
def _squeeze(node, x, axes=None):
    rank = _rank(x, node)
    ax = node.attr("axes")
    if ax is None and axes is not None:
        ax = node.ints(axes, "axes")
    if ax is None:
        ax = [i for i, d in enumerate(x._shape) if d == 1]
    ax = sorted(_axis(a, rank, node, "axes") for a in ax)
    y = _o.squeeze(x, axis=ax) if ax else x
    vals = node.ctx.partial.get(id(x))
    if vals is not None and ax == [0] and rank == 1:  # a one-entry shape vector to a scalar
        node.ctx.note(y, vals)
    return y


@_handler("Unsqueeze")
def _unsqueeze(node, x, axes=None):
    ax = node.attr("axes")
    if ax is None:
        ax = node.ints(axes, "axes")
    rank = _rank(x, node) + len(ax)
    y = x
    for a in sorted(_axis(a, rank, node, "axes") for a in ax):
        y = _o.expand_dims(y, a)
    vals = node.ctx.partial.get(id(x))
    if vals is not None and rank == 1:  # a scalar of a shape to a one-entry vector
        node.ctx.note(y, vals)
    return y


@_handler("Concat")
def _concat(node, *xs):
    xs = [x for x in xs if x is not None]
    rank = _rank(xs[0], node)
    axis = _axis(node.attr("axis"), rank, node)
    y = _o.concat(list(xs), axis=axis)
    if rank == 1:
        parts = []
        for x in xs:
            vals = _known(x) and [int(v) for v in x.numpy().reshape(-1)] or node.ctx.partial.get(id(x))
            if vals is None:
                break
            parts += vals
        else:
            node.ctx.note(y, parts)
    return y


@_handler("Split")
def _split(node, x, split=None):
    rank = _rank(x, node)
    axis = _axis(node.attr("axis", 0), rank, node)
    sizes = node.attr("split")
    if sizes is None and split is not None:
        sizes = node.ints(split, "split")
    n = len(node.outputs)
    if sizes is None:
        d = x._shape[axis]
        num = node.attr("num_outputs", n)
        if d is None:
            return tuple(_o.split(x, num, axis=axis))
        chunk = -(-d // num)
        sizes = [min(chunk, d - i * chunk) for i in range(num)]
    return tuple(_o.split(x, [int(s) for s in sizes], axis=axis))


@_handler("Slice")
def _slice(node, x, starts=None, ends=None, axes=None, steps=None):
    rank = _rank(x, node)
    if starts is None:  # opset < 10: attributes
        st, en, ax, sp = node.attr("starts"), node.attr("ends"), node.attr("axes"), None
    else:
        st, en = node.ints(starts, "starts"), node.ints(ends, "ends")
        ax = node.ints(axes, "axes") if axes is not None else None
        sp = node.ints(steps, "steps") if steps is not None else None
    ax = list(range(len(st))) if ax is None else [_axis(a, rank, node, "axes") for a in ax]
    sp = [1] * len(st) if sp is None else sp
    begin, end, strides = [0] * rank, [0] * rank, [1] * rank
    bmask = emask = (1 << rank) - 1
    for a, s, e, k in zip(ax, st, en, sp):
        if k == 0:
            node.fail("a step of 0", "non-zero steps")
        strides[a] = k
        if abs(s) < _ONE_DAY:
            begin[a], bmask = s, bmask & ~(1 << a)
        if abs(e) < _ONE_DAY:
            end[a], emask = e, emask & ~(1 << a)
    y = _o.strided_slice(x, begin, end, strides, begin_mask=bmask, end_mask=emask)
    vals = node.ctx.partial.get(id(x))
    if vals is not None and rank == 1:
        node.ctx.note(y, _slice_list(vals, begin[0], end[0], strides[0], bmask & 1, emask & 1))
    return y


def _slice_list(vals, b, e, k, bm, em):
    n = len(vals)
    sl = slice(None if bm else b, None if em else e, k)
    return [vals[i] for i in range(*sl.indices(n))]


@_handler("Shape")
def _shape(node, x):
    t = _shape_tensor(x, node.ctx)
    start, end = node.attr("start"), node.attr("end")
    if start is None and end is None:
        return t
    vals = _dims_of(x)[slice(start, end)]
    if not any(map(_unknown, vals)):
        return _const(np.asarray(vals, np.int64))
    return node.ctx.note(_o.strided_slice(t, [start or 0], [end or 0], [1], begin_mask=int(start is None),
                                          end_mask=int(end is None)), vals)


@_handler("Size")
def _size(node, x):
    n = _prod(list(x._shape))
    return _const(np.int64(n)) if n is not None else _o.size(x, out_type=_dt.int64)


@_handler("Expand")
def _expand(node, x, shape):
    target = node.ints(shape, "shape", unknown=True)
    dims = _dims_of(x)
    if any(_unknown(d) for d in target):
        # an unknown entry broadcasts against the input's dimension when it is that dimension, else against 1
        k = len(target) - len(dims)
        fixed = []
        for i, d in enumerate(target):
            if not _unknown(d):
                fixed.append(d)
            elif isinstance(d, _Dim) and i >= k and dims[i - k] == d:
                fixed.append(1)
            else:
                ref = node.ctx.shape_of.get(id(shape))
                if ref is None:
                    node.fail(f"target shape {target} has entries computed from the inputs",
                              "a constant shape, dimensions of the input itself, or Shape(t)")
                return _broadcast_like(x, ref)
        target = fixed
    if None not in x._shape:
        out = [max(a, b) for a, b in zip([1] * (len(target) - len(dims)) + dims,
                                         [1] * (len(dims) - len(target)) + target)]
        return _o.broadcast_to(x, out)
    return _broadcast_like(x, _o.ones(target, dtype=x.dtype if x.dtype is not _dt.bool_ else _dt.int8))


def _broadcast_like(x, ref):
    """``x`` broadcast against ``ref``'s shape (values of ``x``)."""
    if x.dtype is _dt.bool_:
        return _o.logical_or(x, _o.cast(_o.zeros_like(ref, dtype=_dt.int8), _dt.bool_))
    return _o.multiply(x, _o.ones_like(ref, dtype=x.dtype))


@_handler("Tile")
def _tile(node, x, repeats):
    return _o.tile(x, node.ints(repeats, "repeats"))


@_handler("ConstantOfShape")
def _constant_of_shape(node, shape):
    value = node.attrs.get("value")
    value = np.zeros([1], np.float32) if value is None else _onnx().numpy_helper.to_array(value)
    dims = node.ints(shape, "shape", unknown=True)
    if any(map(_unknown, dims)):
        ref = node.ctx.shape_of.get(id(shape))
        if ref is None:
            node.fail(f"shape {dims} has entries computed from the inputs", "a constant shape or Shape(t)")
        return _o.multiply(_o.ones_like(ref, dtype=_dt.as_dtype(value.dtype)), _const(value.reshape(())))
    return _o.fill(dims, _const(value.reshape(())))


@_handler("Constant")
def _constant(node):
    a = node.attrs
    onnx = _onnx()
    if "value" in a:
        return _const(onnx.numpy_helper.to_array(a["value"]))
    for key, dt in (("value_float", np.float32), ("value_floats", np.float32), ("value_int", np.int64),
                    ("value_ints", np.int64)):
        if key in a:
            return _const(np.asarray(a[key], dt))
    node.fail(f"attributes {sorted(a)}", "value, value_float(s), value_int(s)")


@_handler("Range")
def _range(node, start, limit, delta):
    return _o.range_(start, limit, delta, dtype=start.dtype)


@_handler("Pad")
def _pad(node, x, pads=None, value=None, axes=None):
    rank = _rank(x, node)
    mode = node.attr("mode", "constant")
    p = node.attr("pads") if pads is None else node.ints(pads, "pads")
    ax = list(range(rank)) if axes is None else [_axis(a, rank, node, "axes") for a in node.ints(axes, "axes")]
    k = len(ax)
    paddings = [[0, 0] for _ in range(rank)]
    for i, a in enumerate(ax):
        paddings[a] = [int(p[i]), int(p[i + k])]
    if any(v < 0 for row in paddings for v in row):
        node.fail(f"negative pads {p}", "pads >= 0")
    if mode == "constant":
        cv = 0 if value is None else value
        if "value" in node.attrs:
            cv = node.attr("value")
        return _o.pad(x, paddings, mode="CONSTANT", constant_values=_scalar(node, cv, "constant_value"))
    if mode == "reflect":
        return _o.pad(x, paddings, mode="REFLECT")
    if mode == "edge":
        y = x
        for a, (lo, hi) in enumerate(paddings):
            if lo or hi:
                parts = [_edge(y, a, 0, lo)] * bool(lo) + [y] + [_edge(y, a, -1, hi)] * bool(hi)
                y = _o.concat(parts, axis=a)
        return y
    node.fail(f"mode {mode!r}", "'constant', 'reflect', 'edge'")


def _scalar(node, v, what):
    """A one-value input as a Python number (tapeflow takes these attributes as values)."""
    if not isinstance(v, Tensor):
        return v
    if not _known(v):
        node.fail(f"{what} is computed from the model's inputs", "a constant")
    return np.asarray(v.numpy()).reshape(-1)[0].item()


def _edge(x, axis, index, n):
    rank = len(x._shape)
    begin, end, strides = [0] * rank, [0] * rank, [1] * rank
    begin[axis], end[axis] = index, index + 1 if index != -1 else 0
    mask = ((1 << rank) - 1) & ~(1 << axis)
    e_mask = mask | ((1 << axis) if index == -1 else 0)
    one = _o.strided_slice(x, begin, end, strides, begin_mask=mask, end_mask=e_mask)
    mult = [1] * rank
    mult[axis] = n
    return _o.tile(one, mult)


# -- gather / scatter

def _nonneg(node, idx, dim):
    """ONNX indices may be negative (from the end); tapeflow's gather takes them in [0, dim)."""
    if _known(idx):
        v = idx.numpy()
        if dim is not None and (v < 0).any():
            return _const(np.where(v < 0, v + dim, v).astype(v.dtype))
        if (v >= 0).all():
            return idx
    n = _const(dim, idx.dtype) if dim is not None else None
    if n is None:
        return idx  # the dimension is unknown here: negative indices would fail in the gather, with its message
    return _o.where(_o.less(idx, _const(0, idx.dtype)), _o.add(idx, n), idx)


@_handler("Gather")
def _gather(node, x, idx):
    rank = _rank(x, node)
    axis = _axis(node.attr("axis", 0), rank, node)
    idx = _nonneg(node, idx, x._shape[axis])
    y = _o.gather(x, idx, axis=axis)
    vals = node.ctx.partial.get(id(x))
    if vals is not None and rank == 1 and _known(idx):
        iv = np.asarray(idx.numpy())
        node.ctx.note(y, [vals[int(i)] for i in iv.reshape(-1)])
    return y


@_handler("GatherElements")
def _gather_elements(node, x, idx):
    rank = _rank(x, node)
    axis = _axis(node.attr("axis", 0), rank, node)
    shape = list(idx._shape)
    if None in shape:
        node.fail(f"indices of shape {shape}", "indices of known shape")
    idx = _o.cast(_nonneg(node, idx, x._shape[axis]), _dt.int64)
    coords = []
    for a in range(rank):
        if a == axis:
            coords.append(idx)
            continue
        r = _o.range_(_const(0, _dt.int64), _const(shape[a], _dt.int64), _const(1, _dt.int64), dtype=_dt.int64)
        view = [1] * rank
        view[a] = shape[a]
        coords.append(_o.broadcast_to(_o.reshape(r, view), shape))
    return _o.gather_nd(x, _o.stack(coords, axis=-1))


@_handler("GatherND")
def _gather_nd(node, x, idx):
    return _o.gather_nd(x, idx, batch_dims=int(node.attr("batch_dims", 0)))


@_handler("ScatterND")
def _scatter_nd(node, x, idx, updates):
    red = node.attr("reduction", "none")
    fns = {"none": _o.tensor_scatter_nd_update, "add": _o.tensor_scatter_nd_add, "max": _o.tensor_scatter_nd_max,
           "min": _o.tensor_scatter_nd_min}
    if red not in fns:
        node.fail(f"reduction {red!r}", "'none', 'add', 'max', 'min'")
    return fns[red](x, idx, updates)


@_handler("OneHot")
def _one_hot(node, idx, depth, values):
    d = node.ints(depth, "depth")[0]
    if not _known(values):
        node.fail("values computed from the model's inputs", "constant [off, on] values")
    off, on = [v.item() for v in np.asarray(values.numpy()).reshape(-1)]
    rank = _rank(idx, node) + 1
    axis = _axis(node.attr("axis", -1), rank, node)
    idx = _nonneg(node, idx, d)
    return _o.one_hot(idx, d, on_value=on, off_value=off, axis=axis, dtype=values.dtype)


# -- normalization

def _channel_view(t, rank):
    return _o.reshape(t, [-1] + [1] * (rank - 2))


@_handler("BatchNormalization")
def _batch_norm(node, x, scale, bias, mean, var):
    if node.attr("training_mode", 0) or len([o for o in node.outputs if o]) > 1:
        node.fail("training_mode = 1 (or running statistics requested)", "inference (training_mode = 0)")
    rank = _rank(x, node)
    eps = float(node.attr("epsilon", 1e-5))
    if rank == 2:
        return _o.batch_normalization(x, mean, var, bias, scale, eps)
    return _o.batch_normalization(x, *(_channel_view(t, rank) for t in (mean, var, bias, scale)), eps)


@_handler("LayerNormalization")
def _layer_norm(node, x, scale, bias=None):
    rank = _rank(x, node)
    axis = _axis(node.attr("axis", -1), rank, node)
    eps = _const(float(node.attr("epsilon", 1e-5)), x.dtype)
    axes = list(range(axis, rank))
    mean = _o.reduce_mean(x, axis=axes, keepdims=True)
    centred = _o.subtract(x, mean)
    inv = _o.rsqrt(_o.add(_o.reduce_mean(_o.square(centred), axis=axes, keepdims=True), eps))
    y = _o.multiply(_o.multiply(centred, inv), scale)
    if bias is not None:
        y = _o.add(y, bias)
    return y, mean, inv


@_handler("InstanceNormalization")
def _instance_norm(node, x, scale, bias):
    rank = _rank(x, node)
    eps = _const(float(node.attr("epsilon", 1e-5)), x.dtype)
    axes = list(range(2, rank))
    mean = _o.reduce_mean(x, axis=axes, keepdims=True)
    centred = _o.subtract(x, mean)
    inv = _o.rsqrt(_o.add(_o.reduce_mean(_o.square(centred), axis=axes, keepdims=True), eps))
    return _o.add(_o.multiply(_o.multiply(centred, inv), _channel_view(scale, rank)), _channel_view(bias, rank))


@_handler("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(node, x):
    axes = list(range(2, _rank(x, node)))
    fn = _o.reduce_mean if node.op == "GlobalAveragePool" else _o.reduce_max
    return fn(x, axis=axes, keepdims=True)


# -- convolution and pooling (ONNX is channels-first; tapeflow's kernels are channels-last)

def _to_last(x):
    r = len(x._shape)
    return _o.transpose(x, [0] + list(range(2, r)) + [1])


def _to_first(x):
    r = len(x._shape)
    return _o.transpose(x, [0, r - 1] + list(range(1, r - 1)))


def _spatial(node, x):
    rank = _rank(x, node)
    if rank not in (3, 4):
        node.fail(f"an input of rank {rank}", "1-D and 2-D convolution and pooling (rank 3 or 4, channels first)")
    return rank - 2


def _pads(node, x, kernel, strides, dilations):
    """tapeflow padding for an ONNX conv/pool: 'VALID', 'SAME' or explicit [[lo, hi], ...] per spatial dim."""
    n = len(kernel)
    auto = node.attr("auto_pad", "NOTSET")
    if auto == "VALID":
        return [[0, 0]] * n
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(n):
            d = x._shape[2 + i]
            if d is None:
                if auto == "SAME_UPPER":
                    return "SAME"
                node.fail("auto_pad SAME_LOWER over a spatial dimension of unknown size", "known spatial sizes")
            eff = (kernel[i] - 1) * dilations[i] + 1
            total = max((-(-d // strides[i]) - 1) * strides[i] + eff - d, 0)
            small, big = total // 2, total - total // 2
            out.append([small, big] if auto == "SAME_UPPER" else [big, small])
        return out
    if auto != "NOTSET":
        node.fail(f"auto_pad {auto!r}", "'NOTSET', 'VALID', 'SAME_UPPER', 'SAME_LOWER'")
    p = node.attr("pads") or [0] * (2 * n)
    return [[int(p[i]), int(p[i + n])] for i in range(n)]


def _geometry(node, x, w_shape=None):
    n = _spatial(node, x)
    kernel = node.attr("kernel_shape") or list(w_shape[2:])
    strides = node.attr("strides") or [1] * n
    dil = node.attr("dilations") or [1] * n
    return n, list(kernel), list(strides), list(dil), _pads(node, x, kernel, strides, dil)


def _as_2d(x, n):
    return x if n == 2 else _o.expand_dims(x, 2)  # N C W -> N C 1 W


def _from_2d(y, n):
    return y if n == 2 else _o.squeeze(y, axis=[2])


def _lift(vals, n, one):
    return list(vals) if n == 2 else [one] + list(vals)


def _tf_padding(pads):
    if pads == "SAME":
        return "SAME"
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return "VALID"
    return [[0, 0]] + [list(p) for p in pads] + [[0, 0]]


@_handler("Conv")
def _conv(node, x, w, b=None):
    if w._shape is None or None in w._shape:
        node.fail("a weight of unknown shape", "a weight of known shape")
    n, kernel, strides, dil, pads = _geometry(node, x, w._shape)
    group = int(node.attr("group", 1))
    c_out, c_in_g = w._shape[0], w._shape[1]
    xl = _to_last(_as_2d(x, n))
    wl = _o.transpose(_as_2d(w, n), [2, 3, 1, 0])  # O I kh kw -> kh kw I O
    st, dl = _lift(strides, n, 1), _lift(dil, n, 1)
    pd = pads if pads == "SAME" else _lift(pads, n, [0, 0])
    padding = _tf_padding(pd)
    if group == 1:
        y = _o.conv2d(xl, wl, strides=st, padding=padding, dilations=dl)
    elif c_in_g == 1 and x._shape[1] == group:  # depthwise: O = C * multiplier
        mult = c_out // group
        wd = _o.reshape(wl, list(wl._shape[:2]) + [group, mult])
        if padding not in ("SAME", "VALID"):
            xl, padding = _o.pad(xl, padding), "VALID"
        y = _o.depthwise_conv2d(xl, wd, [1] + st + [1], padding, dilations=dl)
    else:
        xs = _o.split(xl, group, axis=3)
        ws = _o.split(wl, group, axis=3)
        y = _o.concat([_o.conv2d(a, k, strides=st, padding=padding, dilations=dl) for a, k in zip(xs, ws)], axis=3)
    if b is not None:
        y = _o.add(y, b)
    return _from_2d(_to_first(y), n)


@_handler("ConvTranspose")
def _conv_transpose(node, x, w, b=None):
    """A transposed convolution as a convolution: the input spread out by the strides (zeros between its
    rows and columns), padded by the dilated kernel's extent less the ONNX pads, convolved with the kernel
    flipped and its channels swapped."""
    if w._shape is None or None in w._shape:
        node.fail("a weight of unknown shape", "a weight of known shape")
    if int(node.attr("group", 1)) != 1:
        node.fail(f"group = {node.attr('group')}", "group = 1")
    n = _spatial(node, x)
    kernel = list(node.attr("kernel_shape") or w._shape[2:])
    strides = list(node.attr("strides") or [1] * n)
    dil = list(node.attr("dilations") or [1] * n)
    outpad = list(node.attr("output_padding") or [0] * n)
    if node.attr("output_shape") is not None or node.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        node.fail("output_shape or auto_pad SAME_*", "explicit pads")
    p = list(node.attr("pads") or [0] * (2 * n))
    if any(d is None for d in x._shape[2:]):
        node.fail("a spatial dimension of unknown size", "known spatial sizes")
    xl = _to_last(_as_2d(x, n))  # N H W C
    kernel, strides, dil, outpad = (_lift(v, n, 1 if v is not outpad else 0) for v in (kernel, strides, dil, outpad))
    pb, pe = _lift(p[:n], n, 0), _lift(p[n:], n, 0)
    _, h, wd, c = xl._shape
    sh, sw = strides
    if sh > 1 or sw > 1:  # N H W C -> N H sh W sw C (zeros after each value) -> N H*sh W*sw C, less the last zeros
        y = _o.reshape(xl, [-1, h, 1, wd, 1, c])
        y = _o.pad(y, [[0, 0], [0, 0], [0, sh - 1], [0, 0], [0, sw - 1], [0, 0]])
        y = _o.reshape(y, [-1, h * sh, wd * sw, c])
        xl = _o.strided_slice(y, [0, 0, 0, 0], [0, (h - 1) * sh + 1, (wd - 1) * sw + 1, 0], [1, 1, 1, 1],
                              begin_mask=15, end_mask=9)
    lo = [(k - 1) * d - a for k, d, a in zip(kernel, dil, pb)]
    hi = [(k - 1) * d - a + o for k, d, a, o in zip(kernel, dil, pe, outpad)]
    padding = [[0, 0]] + [[max(a, 0), max(z, 0)] for a, z in zip(lo, hi)] + [[0, 0]]
    wl = _o.reverse(_o.transpose(_as_2d(w, n), [2, 3, 0, 1]), [0, 1])  # I O kh kw -> kh kw I O, flipped
    y = _o.conv2d(xl, wl, strides=1, padding=_tf_padding(padding[1:3]), dilations=dil)
    if any(a < 0 for a in lo) or any(z < 0 for z in hi):
        begin = [0] + [max(-a, 0) for a in lo] + [0]
        end = [0] + [min(z, 0) for z in hi] + [0]
        emask = 9 | sum(1 << (1 + j) for j, z in enumerate(end[1:3]) if z == 0)
        y = _o.strided_slice(y, begin, end, [1, 1, 1, 1], begin_mask=9, end_mask=emask)
    if b is not None:
        y = _o.add(y, b)
    return _from_2d(_to_first(y), n)


@_handler("MaxPool", "AveragePool")
def _pool(node, x):
    n, kernel, strides, dil, pads = _geometry(node, x)
    if any(d != 1 for d in dil):
        node.fail(f"dilations {dil}", "dilations of 1")
    if len([o for o in node.outputs if o]) > 1:
        node.fail("the Indices output", "the pooled values only")
    if node.attr("ceil_mode", 0) and pads != "SAME":
        pads = [list(p) for p in pads]
        for i in range(n):
            d = x._shape[2 + i]
            if d is None:
                node.fail("ceil_mode over a spatial dimension of unknown size", "known spatial sizes")
            span = d + pads[i][0] + pads[i][1] - kernel[i]
            extra = (-span) % strides[i]
            if extra and (span + extra) // strides[i] * strides[i] < d + pads[i][0]:
                pads[i][1] += extra  # the last window starts inside the input (or its left padding)
    xl = _to_last(_as_2d(x, n))
    k, st = [1] + _lift(kernel, n, 1) + [1], [1] + _lift(strides, n, 1) + [1]
    pd = pads if pads == "SAME" else _lift(pads, n, [0, 0])
    padding = _tf_padding(pd)
    if node.op == "MaxPool":
        if padding not in ("SAME", "VALID"):
            lowest = float(np.finfo(np.dtype(x.dtype.as_numpy_dtype)).min) if x.dtype.is_floating else \
                int(np.iinfo(np.dtype(x.dtype.as_numpy_dtype)).min)
            xl, padding = _o.pad(xl, padding, constant_values=lowest), "VALID"
        y = _o.max_pool2d(xl, k, st, padding)
    elif padding in ("SAME", "VALID") and (padding == "VALID" or not node.attr("count_include_pad", 0)):
        y = _o.avg_pool2d(xl, k, st, padding)
    else:
        if padding == "SAME":
            node.fail("count_include_pad with auto_pad SAME over unknown sizes", "known spatial sizes")
        y = _o.avg_pool2d(_o.pad(xl, padding), k, st, "VALID")
        if not node.attr("count_include_pad", 0):  # the mean over the input's elements only
            y = _o.divide(y, _o.avg_pool2d(_o.pad(_o.ones_like(xl), padding), k, st, "VALID"))
    return _from_2d(_to_first(y), n)


@_handler("Det")
def _det(node, x):
    return _o.det(x)


@_handler("NonZero")
def _nonzero(node, x):
    return _o.transpose(_o.where(x if x.dtype is _dt.bool_ else _o.not_equal(x, _const(0, x.dtype))), [1, 0])


#: ONNX Resize (mode, coordinate_transformation_mode, nearest_mode / cubic attributes) -> tf.image.resize's method
_RESIZE = {("linear", "half_pixel", None): "bilinear", ("nearest", "tf_half_pixel_for_nn", "floor"): "nearest",
           ("cubic", "half_pixel", (-0.5, 1)): "bicubic"}


@_handler("Resize")
def _resize(node, x, roi=None, scales=None, sizes=None):
    from ..ops.image_ops import IMAGE_API

    mode, ctm = node.attr("mode", "nearest"), node.attr("coordinate_transformation_mode", "half_pixel")
    extra = node.attr("nearest_mode", "round_prefer_floor") if mode == "nearest" else (
        (float(node.attr("cubic_coeff_a", -0.75)), int(node.attr("exclude_outside", 0))) if mode == "cubic" else None)
    method = _RESIZE.get((mode, ctm, extra))
    if method is None:
        node.fail(f"mode {mode!r} with coordinate_transformation_mode {ctm!r} and {extra!r}",
                  "linear/half_pixel (bilinear), nearest/tf_half_pixel_for_nn/floor (nearest), "
                  "cubic/half_pixel with cubic_coeff_a -0.5 and exclude_outside 1 (bicubic)")
    if node.attr("axes") is not None:
        node.fail(f"axes {node.attr('axes')}", "Resize over every axis (scales or sizes of the input's rank)")
    antialias = bool(node.attr("antialias", 0)) and mode != "nearest"
    shape = list(x._shape)
    if len(shape) != 4:
        node.fail(f"an input of rank {len(shape)}", "4-D images")
    if sizes is not None:
        target = node.ints(sizes, "sizes", unknown=True)
    elif scales is not None:
        sc = [float(v) for v in scales.numpy().reshape(-1)] if _known(scales) else node.fail(
            "scales computed from the inputs", "constant scales")
        target = [None if d is None else int(math.floor(d * f)) for d, f in zip(shape, sc)]
        target = [d if f == 1.0 else t for d, t, f in zip(shape, target, sc)]
    else:
        node.fail("neither scales nor sizes", "one of them")
    same = [t is None and d is None or t == d for t, d in zip(target, shape)]
    if same[0] and same[3] and None not in target[1:3]:  # channels last (tapeflow's exports)
        y = IMAGE_API["resize"](x if x.dtype.is_floating else _o.cast(x, _dt.float32), target[1:3], method=method,
                                antialias=antialias)
    elif same[0] and same[1] and None not in target[2:4]:  # channels first
        y = _to_first(IMAGE_API["resize"](_to_last(x) if x.dtype.is_floating else _o.cast(_to_last(x), _dt.float32),
                                          target[2:4], method=method, antialias=antialias))
    else:
        node.fail(f"a resize of {shape} to {target}", "resizing the two spatial axes of NHWC or NCHW images to "
                  "known sizes")
    return y if y.dtype is x.dtype else _o.cast(y, x.dtype)


# -- control flow

def _if(node, run_sub, cond):
    then_g, else_g = node.attrs["then_branch"], node.attrs["else_branch"]
    pred = _o.reshape(cond, [])
    if _known(pred):
        return run_sub(then_g if bool(pred.numpy()) else else_g, [])
    outs = _cond(pred, lambda: tuple(run_sub(then_g, [])), lambda: tuple(run_sub(else_g, [])))
    return tuple(outs)


def _loop(node, run_sub, trip=None, cond=None, *carried):
    body = node.attrs["body"]
    n_carried = len(carried)
    n_scan = len(body.output) - 1 - n_carried
    # scan outputs: each iteration's value stacked along a new first axis (the accumulator grows by one row)
    scans = []
    for vi in list(body.output)[1 + n_carried:]:
        shape = _declared_shape(vi)
        t = vi.type.tensor_type
        if shape is None or None in shape or not t.elem_type:
            node.fail(f"scan output {vi.name!r} of the body has no fully known declared shape and element type",
                      "scan outputs whose value_info gives a static shape (or loops without scan outputs)")
        scans.append(_o.zeros([0] + shape, dtype=_dtype(t.elem_type, f"ONNX node {node.name!r} (Loop)")))
    i0 = _const(0, _dt.int64)
    c0 = _o.reshape(cond, []) if cond is not None else _const(True)
    limit = _o.cast(_o.reshape(trip, []), _dt.int64) if trip is not None else None

    def test(i, c, *vs):
        return c if limit is None else _o.logical_and(c, _o.less(i, limit))

    def step(i, c, *vs):
        outs = run_sub(body, [i, c] + list(vs[:n_carried]))
        c2 = _o.reshape(outs[0], [])
        stacked = tuple(_o.concat([acc, _o.expand_dims(_o.cast(v, acc.dtype) if v.dtype is not acc.dtype else v, 0)],
                                  axis=0) for acc, v in zip(vs[n_carried:], outs[1 + n_carried:]))
        return (_o.add(i, _const(1, _dt.int64)), c2) + tuple(outs[1:1 + n_carried]) + stacked

    # the body's declared input shapes say where a carried value may change shape across iterations
    invariants = [[], []]
    for j, v in enumerate(carried):
        declared = _declared_shape(body.input[2 + j]) if 2 + j < len(body.input) else None
        own = list(v._shape)
        if declared is None:  # no shape declared: any size (of the same rank)
            declared = [None] * len(own)
        elif len(declared) != len(own):
            declared = own
        invariants.append([d if o == d else None for o, d in zip(own, declared)])
    invariants += [[None] + list(acc._shape[1:]) for acc in scans]
    res = _while_loop(test, step, (i0, c0) + tuple(carried) + tuple(scans), shape_invariants=invariants)
    return tuple(res[2:2 + n_carried + n_scan])


def _declared_shape(value_info):
    """The shape a value_info declares (None for a free dimension), or None when it declares none."""
    t = value_info.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]


CONTROL = {"If": _if, "Loop": _loop}

#: the ONNX ops (default domain) the importer maps onto tapeflow's ops
SUPPORTED_OPS = frozenset(HANDLERS) | frozenset(CONTROL)


# ---- the graph walk ---------------------------------------------------------------------------------

def _check_supported(graph, where, path=()):
    """Every node of ``graph`` and of its subgraphs is one the importer maps: else the error naming it."""
    onnx = _onnx()
    for n in graph.node:
        name = "/".join(path + (n.name or (n.output[0] if n.output else "?"),))
        if n.domain not in ("", "ai.onnx") or n.op_type not in SUPPORTED_OPS:
            dom = f" (domain {n.domain!r})" if n.domain not in ("", "ai.onnx") else ""
            raise errors.UnimplementedError(
                f"{where}: ONNX op {n.op_type}{dom} of node {name!r} has no tapeflow mapping, so the model cannot "
                f"be loaded; supported ops: {', '.join(sorted(SUPPORTED_OPS))}", OP)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _check_supported(a.g, where, path + (n.name or n.op_type,))
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    _check_supported(g, where, path + (n.name or n.op_type,))


def _run_graph(graph, env, ctx):
    """Trace ``graph``'s nodes over ``env`` (name -> tensor, the outer scopes' names too); returns env."""
    for proto in graph.node:
        node = _Node(proto, ctx)
        ins = []
        for name in node.inputs:
            if not name:
                ins.append(None)
                continue
            if name not in env:
                node.fail(f"input {name!r} is not produced by any earlier node, initializer or graph input",
                          "a topologically sorted graph")
            ins.append(env[name])
        try:
            if node.op in CONTROL:
                def run_sub(g, args, _env=env):
                    sub = dict(_env)
                    for vi, a in zip(g.input, args):
                        sub[vi.name] = a
                    _add_initializers(g, sub)
                    sub = _run_graph(g, sub, ctx)
                    return [sub[o.name] for o in g.output]

                outs = CONTROL[node.op](node, run_sub, *ins)
            elif all(x is None or _known(x) for x in ins) and current_graph() is not None:
                with init_scope():  # every input is known: computed once, now
                    outs = HANDLERS[node.op](node, *ins)
            else:
                outs = HANDLERS[node.op](node, *ins)
        except errors.OpError as e:
            if e.op == OP:
                raise
            raise type(e)(f"{e.message}\n  in ONNX node {node.name!r} ({node.op}) of {ctx.where}", e.op) from None
        except (TypeError, ValueError) as e:
            e.add_note(f"in ONNX node {node.name!r} ({node.op}) of {ctx.where}")
            raise
        if isinstance(outs, Tensor):
            outs = (outs,)
        for name, t in zip(node.outputs, outs):
            if name:
                env[name] = t
    return env


def _add_initializers(graph, env):
    onnx = _onnx()
    for init in graph.initializer:
        env[init.name] = _const(onnx.numpy_helper.to_array(init))


# ---- the loaded object ----------------------------------------------------------------------------

class LoadedSignature:
    """One loaded signature: called with its inputs by keyword (as TensorFlow's ``loaded.signatures[name]``),
    it returns a dict of its outputs by name.  ``concrete_function`` is the compiled graph function
    (positional inputs, the outputs in ``output_names`` order, or a single tensor); ``graph`` its graph.

    >>> import tapeflow as tf
    >>> from onnx import helper, TensorProto
    >>> from tapeflow.core.saved_model.load import load_model
    >>> g = helper.make_graph([helper.make_node("Mul", ["a", "b"], ["prod"])], "g",
    ...                       [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "ab"],
    ...                       [helper.make_tensor_value_info("prod", TensorProto.FLOAT, [None])])
    >>> sig = load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), "mul")
    >>> sig
    <LoadedSignature mul(a: float32[None], b: float32[None]) -> ['prod']>
    >>> sig(a=tf.constant([2.0, 3.0]), b=tf.constant([4.0, 5.0]))["prod"].numpy().tolist()
    [8.0, 15.0]
    """

    def __init__(self, name, fn, cf, input_specs, output_names) -> None:
        self.name = name
        self._fn = fn
        self.concrete_function = cf
        self.input_specs = input_specs
        self.output_names = list(output_names)

    @property
    def graph(self):
        return self.concrete_function.graph

    @property
    def structured_input_signature(self):
        return (), {s.name: s for s in self.input_specs}

    @property
    def structured_outputs(self):
        return {n: TensorSpec(tuple(t.shape), t.dtype, n) for n, t in zip(self.output_names, self._flat_outputs())}

    def _flat_outputs(self):
        outs = self.concrete_function.outputs
        return outs

    def _bind(self, args, kwargs):
        if args:
            raise TypeError(f"signature '{self.name}' takes its inputs by keyword "
                            f"({', '.join(s.name for s in self.input_specs)}); got {len(args)} positional")
        names = [s.name for s in self.input_specs]
        extra = sorted(set(kwargs) - set(names))
        missing = [n for n in names if n not in kwargs]
        if extra or missing:
            raise TypeError(f"signature '{self.name}' takes inputs {names}; missing {missing}, unexpected {extra}")
        return [kwargs[n] for n in names]

    def call_flat(self, flat):
        """The outputs (a list, ``output_names`` order) for the inputs ``flat`` (``input_specs`` order)."""
        out = self.concrete_function(*flat)  # (inside another tf.function, its graph joins the caller's)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def __call__(self, *args, **kwargs):
        return dict(zip(self.output_names, self.call_flat(self._bind(args, kwargs))))

    def __repr__(self):
        ins = ", ".join(f"{s.name}: {s.dtype.name}{list(s.shape)}" for s in self.input_specs)
        return f"<LoadedSignature {self.name}({ins}) -> {self.output_names}>"


class LoadedModel(Module):
    """What ``tf.saved_model.load`` returns: ``signatures`` (name -> :class:`LoadedSignature`), a call of
    the default signature with positional inputs (returning the outputs in the structure the exported
    function returned), the other signatures as methods of the same kind (``loaded.norm(v)``), and the
    trainable initializers as ``variables``.

    >>> import os, tempfile, tapeflow as tf
    >>> m = tf.Module()
    >>> m.f = tf.function(lambda x: (x + 1.0, x * 2.0), input_signature=[tf.TensorSpec([2], name="x")])
    >>> d = os.path.join(tempfile.mkdtemp(), "m")
    >>> tf.saved_model.save(m, d, signatures=m.f)
    >>> loaded = tf.saved_model.load(d)
    >>> sorted(loaded.signatures)
    ['serving_default']
    >>> [t.numpy().tolist() for t in loaded(tf.constant([1.0, 2.0]))]
    [[2.0, 3.0], [2.0, 4.0]]
    """

    def __init__(self, signatures, structures, default, variables, manifest) -> None:
        super().__init__(name="loaded")
        self.signatures = signatures
        self._structures = structures
        self._default = default
        self._loaded_variables = list(variables)
        self.manifest = manifest

    @property
    def variables(self):
        return tuple(self._loaded_variables)

    @property
    def trainable_variables(self):
        return tuple(v for v in self._loaded_variables if v.trainable)

    def _saved_model_signatures(self) -> dict:
        """Each signature as a ``tf.function`` over its input specs returning the exported structure: what
        ``tf.saved_model.save`` writes when this model (fine-tuned, say) is saved again."""
        out = {}
        for name, sig in self.signatures.items():
            def call(*flat, _name=name, _sig=sig):
                return _pack(self._structures.get(_name), _sig.output_names, _sig.call_flat(list(flat)))
            call.__name__ = _identifier(name)
            out[name] = _function(call, input_signature=list(sig.input_specs), autograph=False)
        return out

    def __call__(self, *args, **kwargs):
        if self._default is None:
            raise TypeError(f"this loaded model has no default signature to call; its signatures are "
                            f"{sorted(self.signatures)}")
        return self._call_signature(self._default, args, kwargs)

    def __getattr__(self, name):
        """A signature other than the default one as a method, as TensorFlow restores a module's functions:
        ``loaded.norm(v)`` (positional inputs, the exported structure of outputs)."""
        sigs = self.__dict__.get("signatures")
        if sigs is not None and name in sigs and not name.startswith("_"):
            return lambda *args, **kwargs: self._call_signature(name, args, kwargs)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _call_signature(self, name, args, kwargs):
        sig = self.signatures[name]
        names = [s.name for s in sig.input_specs]
        what = "the loaded model" if name == self._default else f"the loaded function {name!r}"
        if len(args) > len(names):
            raise TypeError(f"{what} takes {len(names)} inputs {names}; got {len(args)} positional")
        flat = list(args) + [None] * (len(names) - len(args))
        for i, n in enumerate(names):
            if n in kwargs:
                if i < len(args):
                    raise TypeError(f"{what} got input {n!r} twice (positional and keyword)")
                flat[i] = kwargs.pop(n)
        if kwargs or any(v is None for v in flat):
            raise TypeError(f"{what} takes inputs {names}; missing "
                            f"{[n for n, v in zip(names, flat) if v is None]}, unexpected {sorted(kwargs)}")
        return _pack(self._structures.get(name), sig.output_names, sig.call_flat(flat))


def _pack(structure, names, outs):
    """The outputs in the exported function's structure: ``structure`` is the manifest's ``output_structure``
    (output names nested as the function returned them), else one tensor for one output and a dict by name
    for several."""
    by_name = dict(zip(names, outs))
    if structure is None:
        return outs[0] if len(outs) == 1 else by_name
    return nest.map_structure(lambda n: by_name[n], structure)


def _graph_inputs(graph, where):
    inits = {i.name for i in graph.initializer}
    specs = []
    for vi in graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise errors.UnimplementedError(f"{where}: input {vi.name!r} is not a tensor; allowed: tensor inputs", OP)
        shape = None
        if tt.HasField("shape"):
            shape = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if shape is None:
            raise errors.UnimplementedError(f"{where}: input {vi.name!r} has no shape (not even a rank); allowed: "
                                            f"inputs of known rank", OP)
        specs.append(TensorSpec(shape, _dtype(tt.elem_type, f"{where}: input {vi.name!r}"), vi.name))
    return specs


def load_model(model, name=DEFAULT_SIGNATURE, where=None, trainable=(), variables=None, non_trainable=(),
               keys=None):
    """One ONNX ``ModelProto`` as a :class:`LoadedSignature` (its graph traced and compiled now).

    ``trainable`` and ``non_trainable`` name initializers that become ``tf.Variable`` s (trainable or not) instead
    of constants, in ``variables``, a dict shared between signatures by the variable's name (``keys`` maps an
    initializer to it where the two differ).

    >>> import onnx, numpy as np, tapeflow as tf
    >>> from onnx import helper, TensorProto
    >>> from tapeflow.core.saved_model.load import load_model
    >>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
    ...                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2])],
    ...                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])])
    >>> sig = load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    >>> sig(x=tf.constant([[-1.0, 2.0]]))["y"].numpy().tolist()
    [[0.0, 2.0]]
    """
    onnx = _onnx()
    where = where or f"signature '{name}'"
    graph = model.graph
    opset = max([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] or [1])
    _check_supported(graph, where)
    specs = _graph_inputs(graph, where)
    variables = {} if variables is None else variables
    keys = dict(keys or {})
    consts, var_of = {}, {}
    for init in graph.initializer:
        value = onnx.numpy_helper.to_array(init)
        if init.name in trainable or init.name in non_trainable:
            key = var_of[init.name] = keys.get(init.name, init.name)
            if key not in variables:
                with init_scope():
                    variables[key] = Variable(value, name=key, trainable=init.name in trainable)
        else:
            consts[init.name] = _const(value)
    out_names = [o.name for o in graph.output]

    def fn(*flat):
        ctx = _Ctx(opset, where)
        env = dict(consts)
        for init_name, key in var_of.items():
            env[init_name] = variables[key].read_value()
        for s, t in zip(specs, flat):
            env[s.name] = t
        env = _run_graph(graph, env, ctx)
        missing = [n for n in out_names if n not in env]
        if missing:
            raise errors.InvalidArgumentError(f"{where}: outputs {missing} are not produced by any node", OP)
        return tuple(env[n] for n in out_names)

    fn.__name__ = _identifier(name)
    cf = _function(fn, input_signature=specs, autograph=False).get_concrete_function()
    return LoadedSignature(name, fn, cf, specs, out_names)


def _identifier(name):
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
    return s if s and not s[0].isdigit() else f"f_{s}"


def _read_manifest(export_dir):
    """The exporter's manifest (its format: export.py's docstring), or None for a directory without one."""
    path = os.path.join(export_dir, MANIFEST)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise errors.DataLossError(f"tf.saved_model.load: the manifest {path!r} is not readable JSON ({e})", OP) \
            from None
    if manifest.get("format") != FORMAT or int(manifest.get("format_version", 0)) > FORMAT_VERSION:
        raise errors.InvalidArgumentError(
            f"tf.saved_model.load: {path!r} is format {manifest.get('format')!r} version "
            f"{manifest.get('format_version')!r}; allowed: {FORMAT!r} up to version {FORMAT_VERSION}", OP)
    return manifest


def load(export_dir: str | os.PathLike[str], tags: Any = None, options: Any = None) -> Any:
    """Load a saved model (a directory ``tf.saved_model.save`` wrote: one ONNX model per signature and a
    manifest; or any directory of ``.onnx`` files, or one ``.onnx`` file) as graph functions on tapeflow's
    kernels, without the Python code that built it.

    The result's ``signatures[name](**inputs)`` returns a dict of outputs by name; calling the result
    runs the default signature (``serving_default``) on positional inputs and returns its outputs in the
    structure the exported function returned.  A model with an op outside :data:`SUPPORTED_OPS` raises
    ``UnimplementedError`` naming the op and its node, before anything runs.

    >>> import os, tempfile, onnx, tapeflow as tf
    >>> from onnx import helper, TensorProto
    >>> g = helper.make_graph([helper.make_node("Softmax", ["x"], ["p"])], "g",
    ...                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])],
    ...                       [helper.make_tensor_value_info("p", TensorProto.FLOAT, [None, 3])])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    >>> onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    >>> loaded = tf.saved_model.load(path)
    >>> [round(v, 3) for v in loaded(tf.constant([[0.0, 0.0, 0.0]]))[0].numpy().tolist()]
    [0.333, 0.333, 0.333]
    >>> sorted(loaded.signatures["serving_default"](x=tf.constant([[1.0, 1.0, 1.0]])))
    ['p']
    """
    if tags is not None:  # one tag set, TensorFlow's serving one
        if not isinstance(tags, (str, list, tuple, set)):
            raise TypeError(f"tf.saved_model.load: tags must be a string or a list of strings, got "
                            f"{type(tags).__name__}")
        if ({tags} if isinstance(tags, str) else set(tags)) != {"serve"}:
            raise ValueError(f"tf.saved_model.load: a tapeflow saved model has one tag set, ['serve'], not {tags!r}")
    if options is not None:
        raise ValueError(f"tf.saved_model.load: options are not used by tapeflow's saved models (got {options!r}); "
                         f"leave them unset")
    onnx = _onnx()
    export_dir = os.fspath(export_dir)
    if not os.path.exists(export_dir):
        raise errors.NotFoundError(f"tf.saved_model.load: {export_dir!r} does not exist", OP)
    manifest = None
    files = {}
    if os.path.isfile(export_dir):
        files[DEFAULT_SIGNATURE] = export_dir
    else:
        manifest = _read_manifest(export_dir)
        if manifest is not None:
            for sig, info in _signatures_of(manifest).items():
                files[sig] = os.path.join(export_dir, info["file"])
        else:
            names = sorted(f for f in os.listdir(export_dir) if f.endswith(".onnx"))
            for f in names:
                files[f[:-5] if len(names) > 1 else DEFAULT_SIGNATURE] = os.path.join(export_dir, f)
        if not files:
            raise errors.NotFoundError(f"tf.saved_model.load: {export_dir!r} holds no {MANIFEST} and no .onnx file; "
                                       f"allowed: a directory tf.saved_model.save wrote, or ONNX models", OP)
    infos = _signatures_of(manifest) if manifest else {}
    variables: dict = {}
    signatures, structures = {}, {}
    for sig, path in files.items():
        info = infos.get(sig, {})
        try:
            model = onnx.load(path)
        except (OSError, ValueError, _decode_error()) as e:
            raise errors.DataLossError(f"tf.saved_model.load: {path!r} is not a readable ONNX model ({e})", OP) \
                from None
        signatures[sig] = load_model(model, sig, f"signature '{sig}' ({os.path.basename(path)})",
                                     trainable=tuple(info.get("trainable_variables", ())), variables=variables,
                                     non_trainable=tuple(info.get("non_trainable_variables", ())),
                                     keys=info.get("variable_keys"))
        if "output_nest" in info:
            structures[sig] = _nest_of(info["output_nest"], sig)
        elif "output_structure" in info:
            structures[sig] = info["output_structure"]
    order = {v.get("name"): k for k, v in enumerate((manifest or {}).get("variables", ()))}
    variables = dict(sorted(variables.items(), key=lambda kv: order.get(kv[0], len(order))))
    default = (manifest or {}).get("default_signature") or (
        DEFAULT_SIGNATURE if DEFAULT_SIGNATURE in signatures else next(iter(signatures)) if len(signatures) == 1
        else None)
    return LoadedModel(signatures, structures, default, variables.values(), manifest)


def _nest_of(entry, sig):
    """The output structure an export's ``output_nest`` describes (export.nest_entry), output names as leaves."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and len(entry) == 1:
        (kind, v), = entry.items()
        if kind == "list":
            return [_nest_of(x, sig) for x in v]
        if kind == "tuple":
            return tuple(_nest_of(x, sig) for x in v)
        if kind == "dict":
            return {k: _nest_of(x, sig) for k, x in v}
        if kind == "namedtuple":
            cls = collections.namedtuple(v["name"], v["fields"])
            return cls(*[_nest_of(x, sig) for x in v["values"]])
    raise errors.DataLossError(f"tf.saved_model.load: signature '{sig}': output_nest {entry!r:.80} is not an output "
                               f"structure; allowed: a name, or {{'list'|'tuple'|'dict'|'namedtuple': ...}}", OP)


def _signatures_of(manifest):
    return manifest.get("signatures", {})
