"""Ops that exist for differentiation: stop_gradient."""
from __future__ import annotations

from ..dispatch import hooks, register, to_tensor
from ..tensor import Tensor, make


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
    x = input if type(input) is Tensor else to_tensor(input, "StopGradient")
    out = make(x._h, x._arr, x._shape, x._dtype, x._dev, x._size)
    rec = hooks.recorder
    if rec is not None:
        rec("stop_gradient", (x,), out, None)
    return out


__all__ = ["stop_gradient"]
