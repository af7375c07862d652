"""The core ops nn builds on, in one place (every one runs tapeflow's C kernels).

Where core does not offer an op nn needs, a composite over core primitives stands in
(``clip_by_value``), so nn's math is always tapeflow ops and differentiable by the tape.
"""
from __future__ import annotations

from tapeflow.core import ops as _core
from tapeflow.core import dtypes as _dt
from tapeflow.core.tensor import Tensor, constant, convert_to_tensor  # noqa: F401

float32, float64, int32, int64, bool_ = _dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.bool_

matmul = _core.matmul
add = _core.add
subtract = _core.subtract
multiply = _core.multiply
truediv = _core.truediv
maximum = _core.maximum
minimum = _core.minimum
square = _core.square
sqrt = _core.sqrt
exp = _core.exp
log = _core.log
abs = _core.abs
negative = _core.negative
tanh = _core.tanh
sigmoid = _core.sigmoid
relu = _core.relu
cast = _core.cast
reshape = _core.reshape
transpose = _core.transpose
reduce_sum = _core.reduce_sum
reduce_mean = _core.reduce_mean
reduce_max = _core.reduce_max
reduce_min = _core.reduce_min
argmax = _core.argmax
equal = _core.equal
not_equal = _core.not_equal
greater = _core.greater
greater_equal = _core.greater_equal
less = _core.less
less_equal = _core.less_equal
logical_and = _core.logical_and
zeros = _core.zeros
ones = _core.ones
fill = _core.fill
identity = _core.identity
range = _core.range_
stop_gradient = _core.stop_gradient


def _has(name):
    return getattr(_core, name, None)


def clip_by_value(t, lo, hi):
    """min(max(t, lo), hi)."""
    f = _has("clip_by_value")
    if f is not None:
        return f(t, lo, hi)
    return minimum(maximum(t, lo), hi)


def log_softmax(logits, axis=-1):
    return _core.log_softmax(logits, axis=axis)


def softmax(logits, axis=-1):
    return _core.softmax(logits, axis=axis)


def one_hot(indices, depth, dtype=float32):
    return _core.one_hot(indices, depth, dtype=dtype)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    return _core.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=axis)


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    return _core.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


def sigmoid_cross_entropy_with_logits(labels, logits):
    return _core.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)


def moments(x, axes, keepdims=False):
    return _core.moments(x, axes, keepdims=keepdims)


def gather(params, indices):
    return _core.gather(params, indices)


def __getattr__(name):
    # every other op comes from core (concat, stack, conv2d, pools, dropout, random...)
    return getattr(_core, name)


_pause = []


def no_record():
    """A context in which no tape records (state updates such as moving averages are not differentiated)."""
    if not _pause:
        from tapeflow.autodiff import pause_all

        _pause.append(pause_all)
    return _pause[0]()
