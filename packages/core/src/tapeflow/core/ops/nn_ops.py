"""Neural-network ops: activations, softmax, cross-entropies, bias_add, dropout, moments, normalisation.

softmax, log_softmax and the two softmax cross-entropies run fused C row kernels
(``kernels-c/csrc/nn.c``); the cross-entropies compute their gradient,
softmax(logits) - labels, in the same pass while a tape is recording and hand it
to the tape, so the backward pass is one multiply.  The rest are composites.
"""
from __future__ import annotations

from tapeflow import kernels

from .. import dtypes as _dt
from ..dispatch import alloc, hooks, normalize_axes, normalize_axis, register, static_value, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from . import _ew
from .math_ops import (elu, gelu, leaky_relu, log_sigmoid, relu, relu6, selu, sigmoid, silu, softplus,  # noqa: F401
                       softsign, tanh)
from .math_ops import _cast_raw
from .reduce_ops import reduce_mean as _reduce_mean, reduce_sum as _reduce_sum
from .math_ops import (abs as _abs, add as _add, cast as _cast, maximum as _maximum, multiply as _multiply,
                       negative as _negative, rsqrt as _rsqrt, square as _square, squared_difference as _squared_difference,
                       subtract as _subtract)

__all__ = ["elu", "gelu", "leaky_relu", "log_sigmoid", "relu", "relu6", "selu", "sigmoid", "silu", "softplus",
           "softsign", "tanh",
           "softmax", "log_softmax", "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
           "sigmoid_cross_entropy_with_logits", "bias_add", "dropout", "l2_normalize", "moments",
           "batch_normalization"]

F = _dt.FLOATS
_F32, _F64 = _dt.float32, _dt.float64
_HALF = (_dt.float16, _dt.bfloat16)
_scope = _ew._scope


def _prod(xs):
    p = 1
    for v in xs:
        p *= v
    return p


def _float_input(x, op, what):
    t = x if type(x) is Tensor else to_tensor(x, op)
    if t._dtype not in F:
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: {', '.join(d.name for d in F)}", op)
    return t


# ---- softmax ------------------------------------------------------------------

def _softmax_primitive(name, tf_name, log_):
    """softmax or log_softmax along attr ``axis`` (normalised): one fused row kernel."""
    @primitive(name, tf_name, infer=lambda x, *, axis: (x._shape, x._dtype), dtypes=F)
    def impl(dev, x, *, axis):
        dt = x._dtype
        src = _cast_raw(x, _F32) if dt in _HALF else x
        shape = x._shape
        out = alloc(shape, src._dtype, dev)
        check(dev.backend.softmax(src._dtype.code, log_, src._h, out._h, _prod(shape[:axis]), shape[axis],
                                  _prod(shape[axis + 1:])), "softmax")
        return out if src is x else _cast_raw(out, dt)
    return impl


_SOFTMAX = _softmax_primitive("softmax", "Softmax", 0)
_LOG_SOFTMAX = _softmax_primitive("log_softmax", "LogSoftmax", 1)


def _softmax(prim, logits, axis):
    op = prim.tf_name
    x = _float_input(logits, op, "logits")
    if not x._shape:
        raise InvalidArgumentError("logits must have rank >= 1, got a scalar (shape ())", op)
    return run(prim, (x,), {"axis": _axis(axis, len(x._shape), op)})


def _axis(axis, nd, op):
    """``normalize_axis`` with the common cases (None or an in-range int) inline."""
    if axis is None:
        return nd - 1
    if type(axis) is int and -nd <= axis < nd:
        return axis % nd
    return normalize_axis(axis, nd, op)


@register("softmax", "Softmax")
def softmax(logits, axis=None, name=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis`` (default: the last), computed stably.

    softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x)

    >>> import tapeflow as tf
    >>> tf.nn.softmax(tf.constant([[1.0, 1.0], [0.0, 2.0]], tf.float64)).numpy().round(4).tolist()
    [[0.5, 0.5], [0.1192, 0.8808]]
    """
    return _softmax(_SOFTMAX, logits, axis)


@register("log_softmax", "LogSoftmax")
def log_softmax(logits, axis=None, name=None) -> Tensor:
    """log(softmax(x)) along ``axis`` (default: the last), without forming softmax.

    log_softmax(x)_i = x_i - max x - log sum_j exp(x_j - max x)

    >>> import tapeflow as tf
    >>> tf.nn.log_softmax(tf.constant([0.0, 0.0], tf.float64)).numpy().round(4).tolist()
    [-0.6931, -0.6931]
    """
    return _softmax(_LOG_SOFTMAX, logits, axis)


# ---- cross-entropies ------------------------------------------------------------
#
# While a recorder listens the kernels also write the gradient, softmax(logits) - labels, into the
# ``backprop`` attribute: a tensor the wrapper allocates (on the device the runner will pick) before
# run(), so the recorder receives it with the attrs.

def _backprop_buffer(x):
    """A buffer for the gradient of logits ``x`` when a recorder listens (eagerly), else None."""
    if hooks.recorder is None or hooks.tracing:
        return None
    stack = _scope.stack
    return alloc(x._shape, x._dtype, stack[-1] if stack and stack[-1] is not None else x._dev)


def _f32_work(x, bp):
    """(logits, backprop buffer) as the kernel computes them: float32 for half types."""
    if x._dtype not in _HALF:
        return x, bp
    return _cast_raw(x, _F32), (None if bp is None else alloc(bp._shape, _F32, bp._dev))


def _to_backprop(work, bp, dev):
    """Copy a float32 gradient into the half-type ``bp`` (nothing to do when the kernel wrote ``bp``)."""
    if work is not None and work is not bp:
        check(dev.backend.cast(_F32.code, work._h, bp._dtype.code, bp._h, bp._size), "cast")


def _xent_infer(y, x, *, axis, backprop):
    return x._shape[:axis] + x._shape[axis + 1:], x._dtype


@primitive("softmax_cross_entropy_with_logits", "SoftmaxCrossEntropyWithLogits", infer=_xent_infer, dtypes=F,
           same_dtype=True)
def _SOFTMAX_XENT(dev, y, x, *, axis, backprop):
    dt = x._dtype
    xw, bw = _f32_work(x, backprop)
    yw = _cast_raw(y, _F32) if xw is not x else y
    shape = x._shape
    be = dev.backend
    loss = alloc(shape[:axis] + shape[axis + 1:], xw._dtype, dev)
    check(be.softmax_xent(xw._dtype.code, yw._h, xw._h, loss._h, bw._h if bw is not None else be.ffi.NULL,
                          _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1:])), "softmax_xent")
    _to_backprop(bw, backprop, dev)
    return loss if xw is x else _cast_raw(loss, dt)


def _sparse_xent_infer(y, x, *, backprop):
    return y._shape, x._dtype


@primitive("sparse_softmax_cross_entropy_with_logits", "SparseSoftmaxCrossEntropyWithLogits",
           infer=_sparse_xent_infer, dtypes=(_dt.int32, _dt.int64))
def _SPARSE_XENT(dev, y, x, *, backprop):
    dt = x._dtype
    xw, bw = _f32_work(x, backprop)
    be = dev.backend
    classes = x._shape[-1]
    loss = alloc(y._shape, xw._dtype, dev)
    bad = be.new_int64([0, 0])
    st = be.sparse_softmax_xent(xw._dtype.code, y._dtype.code, y._h, xw._h, loss._h,
                                bw._h if bw is not None else be.ffi.NULL, y._size, classes, bad)
    if st == kernels.ERANGE:
        where = _unravel(int(bad[0]), y._shape)
        raise InvalidArgumentError(f"labels[{where}] = {int(bad[1])} is not in [0, {classes}) "
                                   f"(logits has {classes} classes)", "SparseSoftmaxCrossEntropyWithLogits")
    check(st, "sparse_softmax_xent")
    _to_backprop(bw, backprop, dev)
    return loss if xw is x else _cast_raw(loss, dt)


@register("softmax_cross_entropy_with_logits", "SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross-entropy between ``labels`` (a distribution per row) and softmax(``logits``).

    loss = -sum_i labels_i * log_softmax(logits)_i along ``axis``; the result has
    the logits' shape without that axis.  Gradients flow to logits and labels.

    >>> import tapeflow as tf
    >>> logits = tf.constant([[0.0, 0.0], [0.0, 1.0]], tf.float64)
    >>> tf.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0], [0.5, 0.5]], logits=logits).numpy().round(4).tolist()
    [0.6931, 0.8133]
    """
    op = "SoftmaxCrossEntropyWithLogits"
    x = _float_input(logits, op, "logits")
    dt = x._dtype
    if type(labels) is Tensor:
        y = labels
    else:
        y = to_tensor(labels, op, dt) if not hasattr(labels, "_as_tensor") else to_tensor(labels, op)
    if y._dtype is not dt:
        raise InvalidArgumentError(f"labels has dtype {y._dtype.name} but logits has dtype {dt.name}; they must "
                                   "match (use tf.cast)", op)
    if y._shape != x._shape:
        raise InvalidArgumentError(f"labels and logits must have the same shape, got labels {tuple(y._shape)} and "
                                   f"logits {tuple(x._shape)}", op)
    if not x._shape:
        raise InvalidArgumentError("logits must have rank >= 1, got a scalar (shape ())", op)
    ax = axis % len(x._shape) if type(axis) is int and -len(x._shape) <= axis < len(x._shape) else \
        normalize_axis(axis, len(x._shape), op)
    return run(_SOFTMAX_XENT, (y, x), {"axis": ax, "backprop": _backprop_buffer(x)})


@register("sparse_softmax_cross_entropy_with_logits", "SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Cross-entropy of softmax(``logits``) against integer class ``labels``.

    loss[b] = -log_softmax(logits[b])[labels[b]], with labels of shape logits.shape[:-1]
    (int32 or int64, each in [0, logits.shape[-1])).  Gradients flow to logits.

    >>> import tapeflow as tf
    >>> logits = tf.constant([[0.0, 0.0], [0.0, 1.0]], tf.float64)
    >>> tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0], logits=logits).numpy().round(4).tolist()
    [0.6931, 1.3133]
    """
    op = "SparseSoftmaxCrossEntropyWithLogits"
    x = _float_input(logits, op, "logits")
    y = labels if type(labels) is Tensor else to_tensor(labels, op)
    if y._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"labels has dtype {y._dtype.name}; allowed: int32, int64", op)
    if not x._shape:
        raise InvalidArgumentError("logits must have rank >= 1, got a scalar (shape ())", op)
    if y._shape != x._shape[:-1]:
        raise InvalidArgumentError(f"labels must have the shape of logits without its last dimension: labels "
                                   f"{tuple(y._shape)}, logits {tuple(x._shape)} (expected labels "
                                   f"{tuple(x._shape[:-1])})", op)
    return run(_SPARSE_XENT, (y, x), {"backprop": _backprop_buffer(x)})


def _unravel(i, shape):
    idx = []
    for d in reversed(shape):
        idx.append(i % d)
        i //= d
    return ", ".join(str(v) for v in reversed(idx))


@register("sigmoid_cross_entropy_with_logits", "SigmoidCrossEntropyWithLogits")
def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Element-wise cross-entropy of sigmoid(``logits``) against ``labels`` in [0, 1].

    loss = max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z (stable
    for any x); its gradient is sigmoid(x) - z for the logits and -x for the labels.

    >>> import tapeflow as tf
    >>> logits = tf.constant([0.0, 2.0], tf.float64)
    >>> tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=logits).numpy().round(4).tolist()
    [0.6931, 2.1269]
    """
    op = "SigmoidCrossEntropyWithLogits"
    if labels is None or logits is None:
        raise InvalidArgumentError("both labels and logits must be given", op)
    x = _float_input(logits, op, "logits")
    y = labels if type(labels) is Tensor else to_tensor(labels, op, x._dtype) if not hasattr(labels, "_as_tensor") \
        else to_tensor(labels, op)
    if y._dtype is not x._dtype:
        raise InvalidArgumentError(f"labels has dtype {y._dtype.name} but logits has dtype {x._dtype.name}; they "
                                   "must match (use tf.cast)", op)
    if y._shape != x._shape:
        raise InvalidArgumentError(f"labels and logits must have the same shape, got labels {tuple(y._shape)} and "
                                   f"logits {tuple(x._shape)}", op)
    return run(_SIGMOID_XENT, (y, x))


def _sigmoid_xent_loss(x, y):
    return _add(_subtract(relu(x), _multiply(x, y)), softplus(_negative(_abs(x))))


@primitive("sigmoid_cross_entropy_with_logits", "SigmoidCrossEntropyWithLogits",
           infer=lambda y, x: (x._shape, x._dtype), dtypes=F, same_dtype=True)
def _SIGMOID_XENT(dev, y, x):
    """Built from primitives: they are not recorded themselves (the tape sees this op once)."""
    if hooks.recorder is None:
        return _sigmoid_xent_loss(x, y)
    with hooks.paused():
        return _sigmoid_xent_loss(x, y)


# ---- composites -------------------------------------------------------------------

@register("bias_add", "BiasAdd", kind="composite")
def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` with the 1-D ``bias`` along the channel axis (last for "N...C", 1 for "NC...").

    >>> import tapeflow as tf
    >>> tf.nn.bias_add(tf.zeros([2, 3]), tf.constant([1.0, 2.0, 3.0])).numpy().tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    op = "BiasAdd"
    x = value if type(value) is Tensor else to_tensor(value, op)
    b = bias if type(bias) is Tensor else to_tensor(bias, op, x._dtype) if not hasattr(bias, "_as_tensor") \
        else to_tensor(bias, op)
    if x._dtype not in _dt.NUMERIC:
        raise InvalidArgumentError(f"value has dtype {x._dtype.name}; allowed: numeric dtypes", op)
    if b._dtype is not x._dtype:
        raise InvalidArgumentError(f"bias has dtype {b._dtype.name} but value has dtype {x._dtype.name}; they must "
                                   "match", op)
    if len(x._shape) < 2:
        raise InvalidArgumentError(f"value must have rank >= 2, got shape {tuple(x._shape)}", op)
    if len(b._shape) != 1:
        raise InvalidArgumentError(f"bias must be 1-D, got shape {tuple(b._shape)}", op)
    fmt = data_format or "NHWC"
    if not isinstance(fmt, str) or len(fmt) < 2 or fmt[0] != "N" or fmt.count("C") != 1 or \
            not (fmt.endswith("C") or fmt.startswith("NC")):
        raise InvalidArgumentError(f"data_format must put C last (e.g. 'NHWC', 'N...C') or second (e.g. 'NCHW', "
                                   f"'NC...'), got {data_format!r}", op)
    channel_last = fmt.endswith("C")
    axis = len(x._shape) - 1 if channel_last else 1
    if x._shape[axis] != b._shape[0] and None not in (x._shape[axis], b._shape[0]):
        raise InvalidArgumentError(f"bias has {b._shape[0]} values but value has {x._shape[axis]} channels on axis "
                                   f"{axis} (shape {tuple(x._shape)}, data_format {fmt!r})", op)
    if not channel_last:
        from .array_ops import reshape

        b = reshape(b, (-1,) + (1,) * (len(x._shape) - 2))
    return _add(x, b)


@register("dropout", "Dropout", kind="composite")
def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zero each element with probability ``rate`` and scale the rest by 1 / (1 - rate).

    ``noise_shape`` (broadcastable to x's shape) shares one keep/drop decision along
    its axes of size 1.  The mask comes from the Philox kernel (``seed`` as in
    ``tf.random``); ``rate == 0`` returns ``x`` itself.

    >>> import tapeflow as tf
    >>> y = tf.nn.dropout(tf.ones([1000]), rate=0.5, seed=1)
    >>> sorted(set(y.numpy().tolist()))
    [0.0, 2.0]
    """
    op = "Dropout"
    x = _float_input(x, op, "x")
    stack = _scope.stack
    if stack and stack[-1] is not None and stack[-1] is not x._dev:
        x = x.to(stack[-1])
    if isinstance(rate, Tensor) or hasattr(rate, "_as_tensor"):
        rt = to_tensor(rate, op)
        if rt._size != 1:
            raise InvalidArgumentError(f"rate must be a scalar, got shape {tuple(rt._shape)}", op)
        rate = static_value(rt, op, "rate").item()
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) and not hasattr(rate, "__float__"):
        raise InvalidArgumentError(f"rate must be a number in [0, 1), got {rate!r}", op)
    rate = float(rate)
    if not 0.0 <= rate < 1.0:
        raise InvalidArgumentError(f"rate must be in [0, 1), got {rate}", op)
    if rate == 0.0:
        return x
    if noise_shape is None:
        shape = x._shape
    else:
        from .random_ops import _shape

        shape = _shape(noise_shape, op)
        if _ew.broadcast_shape(shape, x._shape, op) != x._shape:
            raise InvalidArgumentError(f"noise_shape {list(shape)} does not broadcast to x's shape "
                                       f"{tuple(x._shape)}", op)
    if None in shape:
        raise InvalidArgumentError(f"the random mask takes x's shape {tuple(x._shape)}, whose unknown dimensions a "
                                   "trace does not have; allowed: known dimensions, or a noise_shape with 1 on the "
                                   "unknown axes", op)
    if seed is not None:
        from .random_ops import _seed_int

        seed = _seed_int(seed, op)
    from .random_ops import dropout_mask

    return _multiply(x, dropout_mask(shape, x._dtype, rate, seed, op, x._dev))


@register("l2_normalize", "L2Normalize", kind="composite")
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)): unit L2 norm along ``axis`` (None: all axes).

    >>> import tapeflow as tf
    >>> tf.math.l2_normalize(tf.constant([3.0, 4.0])).numpy().tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    op = "L2Normalize"
    t = _float_input(x, op, "x")
    if axis is None:
        axis = dim
    axes = normalize_axes(axis, len(t._shape), op)
    if t._dtype in _HALF:  # epsilon underflows in float16: compute in float32
        return _cast(l2_normalize(_cast(t, _F32), list(axes), epsilon), t._dtype)
    sq = _reduce_sum(_square(t), list(axes), keepdims=True)
    return _multiply(t, _rsqrt(_maximum(sq, float(epsilon))))


@register("moments", "Moments", kind="composite")
def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of ``x`` over ``axes``: (mean, mean((x - mean) ** 2)).

    >>> import tapeflow as tf
    >>> m, v = tf.nn.moments(tf.constant([[1.0, 2.0], [3.0, 6.0]]), axes=[0])
    >>> m.numpy().tolist(), v.numpy().tolist()
    ([2.0, 4.0], [1.0, 4.0])
    """
    op = "Moments"
    t = _float_input(x, op, "x")
    if axes is None:
        raise InvalidArgumentError("axes must be given (a list of axes to reduce)", op)
    ax = list(normalize_axes(axes, len(t._shape), op))
    src = _cast(t, _F32) if t._dtype in _HALF else t
    mean = _reduce_mean(src, ax, keepdims=True)
    var = _reduce_mean(_squared_difference(src, mean), ax, keepdims=True)
    if not keepdims:
        from .array_ops import reshape

        kept = tuple(d for i, d in enumerate(t._shape) if i not in ax)
        mean, var = reshape(mean, kept), reshape(var, kept)
    if src is not t:
        mean, var = _cast(mean, t._dtype), _cast(var, t._dtype)
    return mean, var


@register("batch_normalization", "BatchNormalization", kind="composite")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """Normalise ``x`` with given statistics: scale * (x - mean) / sqrt(variance + eps) + offset.

    ``offset`` and ``scale`` may be None (0 and 1).

    >>> import tapeflow as tf
    >>> tf.nn.batch_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0).numpy().tolist()
    [-1.0, 1.0]
    """
    op = "BatchNormalization"
    t = _float_input(x, op, "x")
    dt = t._dtype

    def param(v, what):
        p = v if type(v) is Tensor else to_tensor(v, op, dt) if not hasattr(v, "_as_tensor") else to_tensor(v, op)
        if p._dtype is not dt:
            raise InvalidArgumentError(f"{what} has dtype {p._dtype.name} but x has dtype {dt.name}; they must "
                                       "match", op)
        _ew.broadcast_shape(t._shape, p._shape, op)
        return p

    m, v = param(mean, "mean"), param(variance, "variance")
    sc = None if scale is None else param(scale, "scale")
    off = None if offset is None else param(offset, "offset")
    if dt in _HALF:  # compute in float32, round once
        def up(p):
            return None if p is None else _cast(p, _F32)

        return _cast(batch_normalization(up(t), up(m), up(v), up(off), up(sc), variance_epsilon), dt)
    inv = _rsqrt(_add(v, float(variance_epsilon)))
    if sc is not None:
        inv = _multiply(inv, sc)
    shift = _negative(_multiply(m, inv)) if off is None else _subtract(off, _multiply(m, inv))
    return _add(_multiply(t, inv), shift)


# tf.nn names of issue 14 (l2_loss, embedding_lookup, local_response_normalization, ...): nn_extra_ops
from .nn_extra_ops import *  # noqa: F401,F403,E402
from .nn_extra_ops import __all__ as _extra_all  # noqa: E402

__all__ += _extra_all
