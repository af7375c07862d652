"""Convolution and pooling (NHWC), with TensorFlow's argument conventions.

Layouts: input ``[batch, height, width, channels]``; conv filters
``[height, width, in_channels, out_channels]`` (HWIO); depthwise filters
``[height, width, channels, multiplier]``.  ``strides``, ``dilations`` and
``ksize`` are an int or a list of 1, 2 or 4 ints (``[1, h, w, 1]``).
``padding`` is ``"SAME"`` (output ``ceil(in / stride)``, the padding split as
TensorFlow does: ``total // 2`` before, the rest after), ``"VALID"`` (no padding)
or explicit pairs ``[[0, 0], [top, bottom], [left, right], [0, 0]]`` (or just
``[[top, bottom], [left, right]]``).

The gradient ops (``conv2d_backprop_input``, ``conv2d_backprop_filter``,
``max_pool_grad``, ...) are primitives of their own, so gradients differentiate
again.  float16 and bfloat16 compute in float32.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import int_list, register, static_value, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor, make
from .array_ops import reshape
from .math_ops import _cast_raw

__all__ = [
    "avg_pool2d",
    "avg_pool_grad",
    "conv1d",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "depthwise_conv2d",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "max_pool2d",
    "max_pool_grad",
    "max_pool_grad_grad",
]

F32, F16, BF16 = _dt.float32, _dt.float16, _dt.bfloat16
_ALLOWED = _dt.FLOATS
_ALLOWED_CODES = frozenset(d.code for d in _ALLOWED)


# ---- arguments --------------------------------------------------------------

#: the largest stride, dilation, window or explicit padding: TensorFlow's attributes are int32
#: (larger ones would also overflow the kernels' int64 index arithmetic)
_ATTR_MAX = 2**31 - 1


def _pair(v, what: str, op: str) -> tuple:
    """An int or a list of 1, 2 or 4 ints ([1, h, w, 1]) as (h, w), each >= 1."""
    vals = int_list(v, op, what)
    if len(vals) == 1:
        hw = (vals[0], vals[0])
    elif len(vals) == 2:
        hw = vals
    elif len(vals) == 4:
        if vals[0] != 1 or vals[3] != 1:
            raise InvalidArgumentError(
                f"{what} = {list(vals)} moves along the batch or channel axis; allowed: [1, h, w, 1] (NHWC)", op)
        hw = (vals[1], vals[2])
    else:
        raise InvalidArgumentError(f"{what} must be an int or a list of 1, 2 or 4 ints, got {list(vals)} "
                                   f"({len(vals)} values)", op)
    if hw[0] < 1 or hw[1] < 1:
        raise InvalidArgumentError(f"{what} must be positive, got {v!r}; allowed: >= 1", op)
    if hw[0] > _ATTR_MAX or hw[1] > _ATTR_MAX:
        raise InvalidArgumentError(f"{what} = {v!r} is out of range; allowed: 1 <= {what} <= {_ATTR_MAX} "
                                   "(an int32, as in TensorFlow)", op)
    return hw


def _padding(padding, op: str, explicit: bool = True):
    """'SAME', 'VALID' or ((top, bottom), (left, right))."""
    if isinstance(padding, str):
        up = padding.upper()
        if up in ("SAME", "VALID"):
            return up
        raise InvalidArgumentError(f"padding {padding!r} is not allowed; allowed: 'SAME', 'VALID'"
                                   + (" or explicit pairs [[0, 0], [top, bottom], [left, right], [0, 0]]"
                                      if explicit else ""), op)
    if not explicit:
        raise InvalidArgumentError(f"padding {padding!r} is not allowed; allowed: 'SAME', 'VALID' "
                                   "(explicit padding is not supported by this op)", op)
    if isinstance(padding, Tensor):
        padding = static_value(padding, op, "padding").tolist()
    try:
        pairs = [int_list(p, op, "padding", scalar_ok=False) for p in padding]
    except TypeError:
        pairs = None
    if pairs is None or len(pairs) not in (2, 4) or any(len(p) != 2 for p in pairs):
        raise InvalidArgumentError(
            f"padding {padding!r} is not allowed; allowed: 'SAME', 'VALID' or explicit pairs "
            "[[0, 0], [top, bottom], [left, right], [0, 0]]", op)
    if len(pairs) == 4:
        if pairs[0] != (0, 0) or pairs[3] != (0, 0):
            raise InvalidArgumentError(f"padding {[list(p) for p in pairs]} pads the batch or channel axis; "
                                       "allowed: [[0, 0], [top, bottom], [left, right], [0, 0]]", op)
        pairs = pairs[1:3]
    if min(pairs[0] + pairs[1]) < 0:
        raise InvalidArgumentError(f"padding {[list(p) for p in pairs]} has a negative amount; allowed: >= 0", op)
    if max(pairs[0] + pairs[1]) > _ATTR_MAX:
        raise InvalidArgumentError(f"padding {[list(p) for p in pairs]} is out of range; allowed: "
                                   f"0 <= padding <= {_ATTR_MAX}", op)
    return (pairs[0], pairs[1])


def _format(data_format, op: str):
    if data_format not in (None, "NHWC"):
        raise InvalidArgumentError(f"data_format {data_format!r} is not supported; allowed: 'NHWC'", op)


def _dim(size: int, k: int, s: int, d: int, pad, axis: str, op: str, what: str = "filter") -> tuple:
    """(output size, padding before) along one spatial axis, as TensorFlow computes them."""
    if size is None or k is None:  # traced, a size unknown: the output's too (checked when the graph runs)
        return None, 0
    ek = (k - 1) * d + 1
    if pad == "SAME":
        out = -(-size // s)
        return out, max((out - 1) * s + ek - size, 0) // 2
    before, after = (0, 0) if pad == "VALID" else pad
    padded = size + before + after
    if ek > padded:
        eff = f" (dilated to {ek})" if d > 1 else ""
        raise InvalidArgumentError(
            f"the {what} {axis} {k}{eff} is larger than the {'padded ' if before or after else ''}input {axis} "
            f"{padded}; allowed: {what} {axis} <= input {axis}{' + padding' if pad != 'VALID' else ''}", op)
    return (padded - ek) // s + 1, before


def _rank4(t: Tensor, what: str, op: str, layout: str = "NHWC"):
    if len(t._shape) != 4:
        raise InvalidArgumentError(f"{what} must be 4-dimensional ({layout}), got shape {tuple(t._shape)}", op)


def _floats(x: Tensor, w: Tensor, names: tuple, op: str):
    if x._dtype.code not in _ALLOWED_CODES:
        raise InvalidArgumentError(f"{names[0]} has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _ALLOWED)}", op)
    if w._dtype is not x._dtype:
        raise InvalidArgumentError(f"{names[1]} has dtype {w._dtype.name} but {names[0]} has dtype "
                                   f"{x._dtype.name}; they must match (use tf.cast)", op)


def _sizes(v, what: str, op: str) -> tuple:
    out = int_list(v, op, what, scalar_ok=False)
    if len(out) != 4 or min(out) < 0:
        raise InvalidArgumentError(f"{what} must be 4 non-negative ints, got {list(out)}", op)
    return out


def _k(v):
    """A strides/ksize/dilations/padding argument as a cache key: ints, strs and (nested) lists of ints
    only, so that 1.0 or True never hits the plan of 1 (anything else is unhashable: not cached)."""
    t = type(v)
    if t is int or t is str:
        return v
    if t is list or t is tuple:
        out = []
        for e in v:
            te = type(e)
            if te is int:
                out.append(e)
            elif (te is list or te is tuple) and all(type(i) is int for i in e):
                out.append(tuple(e))
            else:
                return [v]
        return tuple(out)
    return [v]


# ---- plans and kernels --------------------------------------------------------

def _run(kernel: str, geom, shape: tuple, size: int, dtype, dev, *ins) -> Tensor:
    """Allocate a ``shape`` output and run ``kernel(dtype, geom, *ins, out)`` (float16/bfloat16 in float32)."""
    if dtype is F16 or dtype is BF16:
        return _cast_raw(_run(kernel, geom, shape, size, F32, dev, *[_cast_raw(t, F32) for t in ins]), dtype)
    h, host = dev.backend.alloc(shape, dtype.np)
    check(getattr(dev.backend, kernel)(dtype.code, geom, *[t._h for t in ins], h), kernel)
    return make(h, host, shape, dtype, dev, size)


class _Plan:
    """A geometry worked out once: output shape and size, the kernel's geometry numbers (and their
    array, made once per backend), the attributes the tape records."""

    __slots__ = ("_geoms", "attrs", "nums", "shape", "size")

    def __init__(self, shape, nums, attrs) -> None:
        self.shape, self.size, self.nums, self.attrs = shape, _size(shape), nums, attrs
        self._geoms = {}

    def geom(self, be):
        g = self._geoms.get(be.name)
        if g is None:
            g = self._geoms[be.name] = be.new_int64(self.nums)
        return g


def _compatible(sa, sb) -> bool:
    """Equal shapes, where a dimension unknown while tracing (None) matches any."""
    return sa == sb or (len(sa) == len(sb) and all(a is None or b is None or a == b for a, b in zip(sa, sb)))


def _size(shape):
    if None in shape:  # traced with unknown dimensions
        return None
    n = 1
    for d in shape:
        n *= d
    return n


_plans: dict = {}


def _cached(key, build):
    """The plan under ``key``, built on a miss (unhashable arguments, e.g. tensors: not cached).

    The key of normalised arguments (the attrs a primitive receives) is the key itself (``_k``
    leaves tuples of ints alone), so an implementation finds its plan with one lookup."""
    try:
        plan = _plans.get(key)
    except TypeError:
        return build()
    if plan is None:
        plan = build()
        if len(_plans) > 1024:
            _plans.clear()
        _plans[key] = plan
    return plan


def _conv_geometry(xs, ws, strides, padding, dilations, op, depthwise=False):
    """The plan of a conv of an input of shape xs with a filter of shape ws (arguments checked here)."""
    n, h, w, c = xs
    kh, kw, wc, m = ws
    sh, sw = _pair(strides, "strides", op)
    dh, dw = _pair(1 if dilations is None else dilations, "dilations", op)
    pad = _padding(padding, op)
    if wc != c and wc is not None and c is not None:
        raise InvalidArgumentError(
            f"input has {c} channels but the filter expects {wc} (input {tuple(xs)}, filter {tuple(ws)}); "
            f"allowed: filter shape [height, width, {c}, {'multiplier' if depthwise else 'out_channels'}]", op)
    oh, pt = _dim(h, kh, sh, dh, pad if isinstance(pad, str) else pad[0], "height", op)
    ow, pl = _dim(w, kw, sw, dw, pad if isinstance(pad, str) else pad[1], "width", op)
    oc = (None if c is None or m is None else c * m) if depthwise else m
    return _Plan((n, oh, ow, oc), [n, h, w, c, kh, kw, oc, oh, ow, sh, sw, dh, dw, pt, pl],
                 {"strides": (sh, sw), "padding": pad, "dilations": (dh, dw)})


def _conv_plan(op, xs, ws, strides, padding, dilations, depthwise=False):
    return _cached((op, xs, ws, _k(strides), _k(padding), _k(dilations)),
                   lambda: _conv_geometry(xs, ws, strides, padding, dilations, op, depthwise))


def _conv_primitive(name, tf_name, depthwise):
    """A forward convolution: inputs (input, filter), attrs strides, padding, dilations (normalised)."""
    def infer(x, w, *, strides, padding, dilations):
        return _conv_plan(tf_name, x._shape, w._shape, strides, padding, dilations, depthwise).shape, x._dtype

    @primitive(name, tf_name, infer=infer, dtypes=_ALLOWED, same_dtype=True)
    def impl(dev, x, w, *, strides, padding, dilations):
        plan = _plans.get((tf_name, x._shape, w._shape, strides, padding, dilations)) or \
            _conv_plan(tf_name, x._shape, w._shape, strides, padding, dilations, depthwise)
        return _run(name, plan.geom(dev.backend), plan.shape, plan.size, x._dtype, dev, x, w)
    return impl


def _backprop_input_primitive(name, tf_name, depthwise):
    """The input gradient: inputs (filter, out_backprop), attrs strides, padding, dilations, input_sizes."""
    def infer(w, dy, *, strides, padding, dilations, input_sizes):
        return tuple(input_sizes), dy._dtype

    @primitive(name, tf_name, infer=infer, dtypes=_ALLOWED, same_dtype=True)
    def impl(dev, w, dy, *, strides, padding, dilations, input_sizes):
        if input_sizes[0] is None:  # traced with a free batch: out_backprop's
            input_sizes = (dy._shape[0],) + tuple(input_sizes[1:])
        plan = _conv_plan(tf_name, input_sizes, w._shape, strides, padding, dilations, depthwise)
        return _run(name, plan.geom(dev.backend), input_sizes, _size(input_sizes), dy._dtype, dev, dy, w)
    return impl


def _backprop_filter_primitive(name, tf_name, depthwise):
    """The filter gradient: inputs (input, out_backprop), attrs strides, padding, dilations, filter_sizes."""
    def infer(x, dy, *, strides, padding, dilations, filter_sizes):
        return tuple(filter_sizes), x._dtype

    @primitive(name, tf_name, infer=infer, dtypes=_ALLOWED, same_dtype=True)
    def impl(dev, x, dy, *, strides, padding, dilations, filter_sizes):
        plan = _conv_plan(tf_name, x._shape, filter_sizes, strides, padding, dilations, depthwise)
        return _run(name, plan.geom(dev.backend), filter_sizes, _size(filter_sizes), x._dtype, dev, x, dy)
    return impl


_CONV2D = _conv_primitive("conv2d", "Conv2D", False)
_DEPTHWISE = _conv_primitive("depthwise_conv2d", "DepthwiseConv2dNative", True)
_CONV2D_BP_INPUT = _backprop_input_primitive("conv2d_backprop_input", "Conv2DBackpropInput", False)
_CONV2D_BP_FILTER = _backprop_filter_primitive("conv2d_backprop_filter", "Conv2DBackpropFilter", False)
_DEPTHWISE_BP_INPUT = _backprop_input_primitive("depthwise_conv2d_backprop_input",
                                                "DepthwiseConv2dNativeBackpropInput", True)
_DEPTHWISE_BP_FILTER = _backprop_filter_primitive("depthwise_conv2d_backprop_filter",
                                                  "DepthwiseConv2dNativeBackpropFilter", True)


# ---- conv2d -----------------------------------------------------------------

@register("conv2d", "Conv2D")
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution (cross-correlation, as in TensorFlow) of an NHWC batch with HWIO filters.

    ``out[b, i, j, o] = sum_{di, dj, c} input[b, i*sh + di*dh - pad_top, j*sw + dj*dw - pad_left, c]
    * filters[di, dj, c, o]``, reading zeros outside the input.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(1.0, 10.0), [1, 3, 3, 1])
    >>> tf.conv2d(x, tf.ones([2, 2, 1, 1]), strides=1, padding="VALID").numpy().ravel().tolist()
    [12.0, 16.0, 24.0, 28.0]
    """
    op = "Conv2D"
    x = input if type(input) is Tensor else to_tensor(input, op)
    w = filters if type(filters) is Tensor else to_tensor(filters, op)
    _rank4(x, "input", op)
    _rank4(w, "filters", op, "height, width, in_channels, out_channels")
    _floats(x, w, ("input", "filters"), op)
    if data_format != "NHWC":
        _format(data_format, op)
    return run(_CONV2D, (x, w), _conv_plan(op, x._shape, w._shape, strides, padding, dilations).attrs)


def _backprop_input(prim, input_sizes, filters, out_backprop, strides, padding, data_format,
                    dilations, depthwise):
    op = prim.tf_name
    w = filters if type(filters) is Tensor else to_tensor(filters, op)
    dy = out_backprop if type(out_backprop) is Tensor else to_tensor(out_backprop, op)
    _rank4(w, "filter", op, "height, width, in_channels, " + ("multiplier" if depthwise else "out_channels"))
    _rank4(dy, "out_backprop", op)
    _floats(dy, w, ("out_backprop", "filter"), op)
    _format(data_format, op)
    xs = _input_sizes(input_sizes, dy, op)
    plan = _conv_plan(op, xs, w._shape, strides, padding, dilations, depthwise)
    if not _compatible(dy._shape, plan.shape):
        raise InvalidArgumentError(
            f"out_backprop has shape {tuple(dy._shape)} but the convolution of an input {xs} with a filter "
            f"{tuple(w._shape)} gives {plan.shape}", op)
    return run(prim, (w, dy), dict(plan.attrs, input_sizes=xs))


def _input_sizes(v, dy, op) -> tuple:
    """``input_sizes`` of a backprop-input (transposed) convolution: 4 ints, the batch (always out_backprop's)
    may be None or -1: out_backprop's, unknown while a graph is traced with a free batch, taken when it runs."""
    if isinstance(v, (list, tuple)) and len(v) == 4 and (v[0] is None or (type(v[0]) is int and v[0] == -1)):
        xs = (0,) + _sizes([0, *v[1:]], "input_sizes", op)[1:]
        return (dy._shape[0],) + xs[1:]
    return _sizes(v, "input_sizes", op)


def _backprop_filter(prim, input, filter_sizes, out_backprop, strides, padding, data_format,
                     dilations, depthwise):
    op = prim.tf_name
    x = input if type(input) is Tensor else to_tensor(input, op)
    dy = out_backprop if type(out_backprop) is Tensor else to_tensor(out_backprop, op)
    _rank4(x, "input", op)
    _rank4(dy, "out_backprop", op)
    _floats(x, dy, ("input", "out_backprop"), op)
    _format(data_format, op)
    ws = _sizes(filter_sizes, "filter_sizes", op)
    plan = _conv_plan(op, x._shape, ws, strides, padding, dilations, depthwise)
    if not _compatible(dy._shape, plan.shape):
        raise InvalidArgumentError(
            f"out_backprop has shape {tuple(dy._shape)} but the convolution of an input {tuple(x._shape)} with "
            f"a filter {ws} gives {plan.shape}", op)
    return run(prim, (x, dy), dict(plan.attrs, filter_sizes=ws))


@register("conv2d_backprop_input", "Conv2DBackpropInput")
def conv2d_backprop_input(input_sizes, filters, out_backprop, strides, padding, data_format="NHWC",
                          dilations=None, name=None):
    """The gradient of :func:`conv2d` with respect to its input (the transposed convolution).

    ``dx = d(sum(conv2d(x, filters) * out_backprop)) / dx`` for an ``x`` of shape ``input_sizes``.

    >>> import tapeflow as tf
    >>> dy = tf.ones([1, 2, 2, 1])
    >>> tf.conv2d_backprop_input([1, 3, 3, 1], tf.ones([2, 2, 1, 1]), dy, 1, "VALID").numpy().ravel().tolist()
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]
    """
    return _backprop_input(_CONV2D_BP_INPUT, input_sizes, filters, out_backprop, strides, padding, data_format,
                           dilations, False)


@register("conv2d_backprop_filter", "Conv2DBackpropFilter")
def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, data_format="NHWC",
                           dilations=None, name=None):
    """The gradient of :func:`conv2d` with respect to its filters.

    ``dw = d(sum(conv2d(input, w) * out_backprop)) / dw`` for a ``w`` of shape ``filter_sizes``.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(1.0, 10.0), [1, 3, 3, 1])
    >>> tf.conv2d_backprop_filter(x, [2, 2, 1, 1], tf.ones([1, 2, 2, 1]), 1, "VALID").numpy().ravel().tolist()
    [12.0, 16.0, 24.0, 28.0]
    """
    return _backprop_filter(_CONV2D_BP_FILTER, input, filter_sizes, out_backprop, strides, padding, data_format, dilations, False)


@register("conv2d_transpose", "Conv2DTranspose", kind="composite")
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None,
                     name=None):
    """The transposed ("deconvolution") 2-D convolution: :func:`conv2d_backprop_input` with the
    conv's output as ``input``.  ``filters`` is ``[height, width, out_channels, in_channels]``.
    ``output_shape``'s batch may be None (or -1): the input's, so that a graph traced with a free batch
    (``tf.TensorSpec([None, ...])``) takes it when it runs.

    >>> import tapeflow as tf
    >>> y = tf.conv2d_transpose(tf.ones([1, 2, 2, 1]), tf.ones([2, 2, 1, 1]), [1, 4, 4, 1], 2, "VALID")
    >>> y.shape
    TensorShape([1, 4, 4, 1])
    >>> up = tf.function(lambda x: tf.conv2d_transpose(x, tf.ones([2, 2, 1, 1]), [None, 4, 4, 1], 2, "VALID"))
    >>> up.get_concrete_function(tf.TensorSpec([None, 2, 2, 1])).outputs[0].shape
    TensorShape([None, 4, 4, 1])
    >>> up(tf.ones([3, 2, 2, 1])).shape
    TensorShape([3, 4, 4, 1])
    """
    op = "Conv2DTranspose"
    try:
        return conv2d_backprop_input(output_shape, filters, input, strides, padding, data_format, dilations)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(e.message.replace("out_backprop", "input"), op) from None


@register("conv1d", "Conv1D", kind="composite")
def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """1-D convolution of ``[batch, width, channels]`` with filters ``[width, in_channels, out_channels]``.

    Runs as :func:`conv2d` over a height of 1.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(1.0, 5.0), [1, 4, 1])
    >>> tf.conv1d(x, tf.ones([2, 1, 1]), stride=1, padding="VALID").numpy().ravel().tolist()
    [3.0, 5.0, 7.0]
    """
    op = "Conv1D"
    x = input if type(input) is Tensor else to_tensor(input, op)
    w = filters if type(filters) is Tensor else to_tensor(filters, op)
    if data_format not in (None, "NWC"):
        raise InvalidArgumentError(f"data_format {data_format!r} is not supported; allowed: 'NWC'", op)
    if len(x._shape) != 3:
        raise InvalidArgumentError(f"input must be 3-dimensional (NWC), got shape {tuple(x._shape)}", op)
    if len(w._shape) != 3:
        raise InvalidArgumentError(f"filters must be 3-dimensional (width, in_channels, out_channels), "
                                   f"got shape {tuple(w._shape)}", op)

    def one(v, what):
        vals = int_list(v, op, what)
        if len(vals) == 1:
            return (1, vals[0])
        if len(vals) == 3 and vals[0] == vals[2] == 1:
            return (1, vals[1])
        raise InvalidArgumentError(f"{what} must be an int or a list of 1 or 3 ints ([1, w, 1]), got {v!r}", op)

    pad = padding
    if not isinstance(padding, str):
        pairs = static_value(padding, op, "padding").tolist() if isinstance(padding, Tensor) else list(padding)
        if len(pairs) == 3:
            pairs = pairs[1:2] if list(pairs[0]) == [0, 0] and list(pairs[2]) == [0, 0] else None
        if not pairs or len(pairs) != 1:
            raise InvalidArgumentError(f"padding {padding!r} is not allowed; allowed: 'SAME', 'VALID' or explicit "
                                       "pairs [[0, 0], [left, right], [0, 0]]", op)
        pad = [[0, 0], list(pairs[0])]
    n, wd, c = x._shape
    try:
        y = conv2d(reshape(x, (n, 1, wd, c)), reshape(w, (1,) + tuple(w._shape)), one(stride, "stride"), pad,
                   dilations=one(1 if dilations is None else dilations, "dilations"))
    except InvalidArgumentError as e:
        raise InvalidArgumentError(e.message, op) from None
    return reshape(y, (n, y._shape[2], y._shape[3]))


# ---- depthwise conv2d -----------------------------------------------------------

@register("depthwise_conv2d", "DepthwiseConv2dNative")
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):
    """Depthwise 2-D convolution: each input channel convolved with its own ``multiplier`` filters.

    ``out[b, i, j, c*m + k] = sum_{di, dj} input[b, i*sh + di*dh - pt, j*sw + dj*dw - pl, c] * filter[di, dj, c, k]``;
    ``filter`` is ``[height, width, channels, multiplier]``.

    >>> import tapeflow as tf
    >>> x = tf.ones([1, 3, 3, 2])
    >>> tf.depthwise_conv2d(x, tf.ones([2, 2, 2, 1]), [1, 1, 1, 1], "VALID").shape
    TensorShape([1, 2, 2, 2])
    """
    op = "DepthwiseConv2dNative"
    x = input if type(input) is Tensor else to_tensor(input, op)
    w = filter if type(filter) is Tensor else to_tensor(filter, op)
    _rank4(x, "input", op)
    _rank4(w, "filter", op, "height, width, channels, multiplier")
    _floats(x, w, ("input", "filter"), op)
    _format(data_format, op)
    return run(_DEPTHWISE, (x, w), _conv_plan(op, x._shape, w._shape, strides, padding, dilations, True).attrs)


@register("depthwise_conv2d_backprop_input", "DepthwiseConv2dNativeBackpropInput")
def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding, data_format="NHWC",
                                    dilations=None, name=None):
    """The gradient of :func:`depthwise_conv2d` with respect to its input.

    >>> import tapeflow as tf
    >>> dx = tf.depthwise_conv2d_backprop_input([1, 3, 3, 1], tf.ones([2, 2, 1, 1]), tf.ones([1, 2, 2, 1]),
    ...                                         1, "VALID")
    >>> dx.numpy().ravel().tolist()
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]
    """
    return _backprop_input(_DEPTHWISE_BP_INPUT, input_sizes, filter, out_backprop, strides, padding, data_format,
                           dilations, True)


@register("depthwise_conv2d_backprop_filter", "DepthwiseConv2dNativeBackpropFilter")
def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, data_format="NHWC",
                                     dilations=None, name=None):
    """The gradient of :func:`depthwise_conv2d` with respect to its filter.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(1.0, 10.0), [1, 3, 3, 1])
    >>> tf.depthwise_conv2d_backprop_filter(x, [2, 2, 1, 1], tf.ones([1, 2, 2, 1]), 1, "VALID").numpy().ravel().tolist()
    [12.0, 16.0, 24.0, 28.0]
    """
    return _backprop_filter(_DEPTHWISE_BP_FILTER, input, filter_sizes, out_backprop, strides, padding,
                            data_format, dilations, True)


# ---- pooling ------------------------------------------------------------------

def _pool_geometry(xs, ksize, strides, padding, op, explicit):
    n, h, w, c = xs
    kh, kw = _pair(ksize, "ksize", op)
    sh, sw = _pair(strides, "strides", op)
    pad = _padding(padding, op, explicit)
    if not isinstance(pad, str):
        for (before, after), k, axis in ((pad[0], kh, "height"), (pad[1], kw, "width")):
            if max(before, after) >= k:
                raise InvalidArgumentError(f"padding {max(before, after)} along the {axis} is not smaller than the "
                                           f"window {axis} {k}; allowed: padding < window", op)
    oh, pt = _dim(h, kh, sh, 1, pad if isinstance(pad, str) else pad[0], "height", op, "window")
    ow, pl = _dim(w, kw, sw, 1, pad if isinstance(pad, str) else pad[1], "width", op, "window")
    return _Plan((n, oh, ow, c), [n, h, w, c, kh, kw, c, oh, ow, sh, sw, 1, 1, pt, pl],
                 {"ksize": (kh, kw), "strides": (sh, sw), "padding": pad})


def _pool_plan(op, xs, ksize, strides, padding, explicit):
    return _cached((op, xs, _k(ksize), _k(strides), _k(padding)),
                   lambda: _pool_geometry(xs, ksize, strides, padding, op, explicit))


def _pool_input(x, op, what="input"):
    x = x if type(x) is Tensor else to_tensor(x, op)
    _rank4(x, what, op)
    if x._dtype.code not in _ALLOWED_CODES:
        raise InvalidArgumentError(f"{what} has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _ALLOWED)}", op)
    return x


def _pool_primitive(name, tf_name, explicit):
    """A pool: input (input,), attrs ksize, strides, padding (normalised)."""
    def infer(x, *, ksize, strides, padding):
        return _pool_plan(tf_name, x._shape, ksize, strides, padding, explicit).shape, x._dtype

    @primitive(name, tf_name, infer=infer, dtypes=_ALLOWED)
    def impl(dev, x, *, ksize, strides, padding):
        plan = _plans.get((tf_name, x._shape, ksize, strides, padding)) or \
            _pool_plan(tf_name, x._shape, ksize, strides, padding, explicit)
        return _run(name, plan.geom(dev.backend), plan.shape, plan.size, x._dtype, dev, x)
    return impl


def _max_pool_grad_primitive(name, tf_name, kernel, grad_is_input):
    """max_pool_grad(_grad): inputs (orig_input, orig_output, grad), attrs ksize, strides, padding; the
    kernel reads orig_input and grad (the maxima are recomputed)."""
    def infer(x, y, g, *, ksize, strides, padding):
        return (_pool_plan(tf_name, x._shape, ksize, strides, padding, True).shape if grad_is_input else x._shape,
                x._dtype)

    @primitive(name, tf_name, infer=infer, dtypes=_ALLOWED, same_dtype=True)
    def impl(dev, x, y, g, *, ksize, strides, padding):
        plan = _pool_plan(tf_name, x._shape, ksize, strides, padding, True)
        shape, size = (plan.shape, plan.size) if grad_is_input else (x._shape, x._size)
        return _run(kernel, plan.geom(dev.backend), shape, size, x._dtype, dev, x, g)
    return impl


def _avg_pool_grad_infer(g, *, ksize, strides, padding, orig_input_shape):
    return tuple(orig_input_shape), g._dtype


@primitive("avg_pool_grad", "AvgPoolGrad", infer=_avg_pool_grad_infer, dtypes=_ALLOWED)
def _avg_pool_grad(dev, g, *, ksize, strides, padding, orig_input_shape):
    plan = _pool_plan("AvgPoolGrad", orig_input_shape, ksize, strides, padding, False)
    return _run("avg_pool2d_grad", plan.geom(dev.backend), orig_input_shape, _size(orig_input_shape), g._dtype,
                dev, g)


_MAX_POOL = _pool_primitive("max_pool2d", "MaxPool", True)
_AVG_POOL = _pool_primitive("avg_pool2d", "AvgPool", False)
_MAX_POOL_GRAD = _max_pool_grad_primitive("max_pool_grad", "MaxPoolGrad", "max_pool2d_grad", False)
_MAX_POOL_GRAD_GRAD = _max_pool_grad_primitive("max_pool_grad_grad", "MaxPoolGradGrad", "max_pool2d_grad_grad", True)


@register("max_pool2d", "MaxPool")
def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The largest value of each ``ksize`` window (padding never wins; NaN is ignored, as in TensorFlow).

    ``out[b, i, j, c] = max_{di < kh, dj < kw} input[b, i*sh + di - pt, j*sw + dj - pl, c]``

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.max_pool2d(x, ksize=2, strides=2, padding="VALID").numpy().ravel().tolist()
    [5.0, 7.0, 13.0, 15.0]
    """
    op = "MaxPool"
    x = _pool_input(input, op)
    if data_format != "NHWC":
        _format(data_format, op)
    return run(_MAX_POOL, (x,), _pool_plan(op, x._shape, ksize, strides, padding, True).attrs)


def _max_pool_grad(prim, orig_input, orig_output, grad, ksize, strides, padding, data_format, grad_is_input):
    op = prim.tf_name
    x = _pool_input(orig_input, op, "orig_input")
    y = orig_output if type(orig_output) is Tensor else to_tensor(orig_output, op)
    g = grad if type(grad) is Tensor else to_tensor(grad, op)
    _floats(x, g, ("orig_input", "grad"), op)
    _format(data_format, op)
    plan = _pool_plan(op, x._shape, ksize, strides, padding, True)
    if tuple(y._shape) != plan.shape:
        raise InvalidArgumentError(f"orig_output has shape {tuple(y._shape)} but max-pooling orig_input "
                                   f"{tuple(x._shape)} gives {plan.shape}", op)
    want = x._shape if grad_is_input else plan.shape
    if g._shape != want:
        raise InvalidArgumentError(f"grad has shape {tuple(g._shape)}; allowed: {tuple(want)} (the shape of "
                                   f"{'orig_input' if grad_is_input else 'orig_output'})", op)
    return run(prim, (x, y, g), plan.attrs)


@register("max_pool_grad", "MaxPoolGrad")
def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC", name=None):
    """The gradient of :func:`max_pool2d`: each window's ``grad`` goes to the position of its maximum
    (the first one in row-major order on ties, as in TensorFlow); overlapping windows add up.

    ``orig_output`` is ``max_pool2d(orig_input, ...)`` (checked for shape; the maxima are recomputed).

    >>> import tapeflow as tf
    >>> x = tf.constant([[[[1.0], [3.0]], [[3.0], [2.0]]]])
    >>> y = tf.max_pool2d(x, 2, 1, "VALID")
    >>> tf.max_pool_grad(x, y, tf.ones([1, 1, 1, 1]), 2, 1, "VALID").numpy().ravel().tolist()
    [0.0, 1.0, 0.0, 0.0]
    """
    return _max_pool_grad(_MAX_POOL_GRAD, orig_input, orig_output, grad, ksize, strides, padding, data_format,
                          False)


@register("max_pool_grad_grad", "MaxPoolGradGrad")
def max_pool_grad_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC", name=None):
    """The gradient of :func:`max_pool_grad` with respect to its ``grad``: each window picks ``grad``
    (shaped like ``orig_input``) at the position of its maximum.

    >>> import tapeflow as tf
    >>> x = tf.constant([[[[1.0], [3.0]], [[3.0], [2.0]]]])
    >>> y = tf.max_pool2d(x, 2, 1, "VALID")
    >>> gg = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
    >>> tf.max_pool_grad_grad(x, y, gg, 2, 1, "VALID").numpy().ravel().tolist()
    [1.0]
    """
    return _max_pool_grad(_MAX_POOL_GRAD_GRAD, orig_input, orig_output, grad, ksize, strides, padding, data_format,
                          True)


@register("avg_pool2d", "AvgPool")
def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The mean of each ``ksize`` window; with "SAME" padding, windows average only the positions
    inside the input (padding is not counted), as in TensorFlow.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
    >>> tf.avg_pool2d(x, ksize=2, strides=2, padding="SAME").numpy().ravel().tolist()
    [2.0, 3.5, 6.5, 8.0]
    """
    op = "AvgPool"
    x = _pool_input(input, op)
    if data_format != "NHWC":
        _format(data_format, op)
    return run(_AVG_POOL, (x,), _pool_plan(op, x._shape, ksize, strides, padding, False).attrs)


@register("avg_pool_grad", "AvgPoolGrad")
def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, data_format="NHWC", name=None):
    """The gradient of :func:`avg_pool2d`: each window's ``grad`` spread evenly over the positions it
    averaged; overlapping windows add up.

    >>> import tapeflow as tf
    >>> tf.avg_pool_grad([1, 2, 2, 1], tf.ones([1, 1, 1, 1]), 2, 2, "VALID").numpy().ravel().tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    op = "AvgPoolGrad"
    g = _pool_input(grad, op, "grad")
    _format(data_format, op)
    xs = _sizes(orig_input_shape, "orig_input_shape", op)
    plan = _pool_plan(op, xs, ksize, strides, padding, False)
    if not _compatible(g._shape, plan.shape):
        raise InvalidArgumentError(f"grad has shape {tuple(g._shape)} but average-pooling an input {xs} gives "
                                   f"{plan.shape}", op)
    return run(_avg_pool_grad, (g,), dict(plan.attrs, orig_input_shape=xs))
