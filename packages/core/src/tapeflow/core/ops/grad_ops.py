"""Ops that exist for differentiation: stop_gradient, and the device copy tapes must see."""
from __future__ import annotations

from .. import devices as _devices
from ..dispatch import hooks, register, to_tensor
from ..runner import _trace, primitive, run, trace_node
from ..tensor import Tensor, copy_to, make


def _same(x, **attrs):
    return x._shape, x._dtype


@primitive("stop_gradient", "StopGradient", infer=_same)
def _STOP_GRADIENT(dev, x):
    return make(x._h, x._arr, x._shape, x._dtype, x._dev, x._size)  # the same buffer, a new tensor


@register("stop_gradient", "StopGradient", nondiff="blocks gradients by definition")
def stop_gradient(input, name=None):
    """The same value, seen by tapes as a constant: no gradient flows through it.

    >>> import tapeflow as tf
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * tf.stop_gradient(x)
    >>> tape.gradient(y, x).numpy()
    np.float32(3.0)
    """
    return run(_STOP_GRADIENT, (input,))


@primitive("copy_to_device", "Copy", infer=_same)
def _COPY(dev, x, *, device):
    return copy_to(x, _devices.get(device))


@register("copy_to_device", "Copy")
def copy_to_device(input, device):
    """A copy of ``input`` on ``device``, recorded so gradients flow back to the source's device.

    ``t.to(device)`` and the implicit copies of an op's inputs go through here.

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.grad_ops import copy_to_device
    >>> copy_to_device(tf.constant([1.0]), "cpu:0").device
    'cpu:0'
    """
    # Not runner.run: this op IS the runner's placement (run copies misplaced inputs through it), so
    # its input stays where it is and the output goes to ``device``; the rest is what run does.
    x = input if type(input) is Tensor else to_tensor(input, "Copy")
    dev = _devices.get(device)
    attrs = {"device": dev.name}
    if hooks.tracing and _trace.graph is not None:
        out = trace_node(_COPY, (x,), attrs, _trace.graph, dev)
    else:
        out = _COPY.impl(x._dev, x, **attrs)
    rec = hooks.recorder
    if rec is not None:
        rec("copy_to_device", (x,), out, attrs)
    return out


__all__ = ["stop_gradient"]
