"""Gradient rules of core's image_ops (tf.image), as TensorFlow's image_grad.py.

resize and resize_grad are each other's adjoint (both are linear in the image): the gradient of a
resize is the transposed resampling of the incoming gradient (ResizeBilinearGrad and friends), and the
gradient of that is a resize again, so second derivatives come free.  The colour conversions take the
per-pixel vector-Jacobian product of their C kernel (csrc/image.c).  The crops, flips, pads and
adjust_* are composites: their gradients come from the ops they are made of.
"""
from __future__ import annotations

from tapeflow.core.ops.image_ops import _RESIZE, _resize_grad, colour_grad
from tapeflow.core.runner import run

from ..registry import defgrad


@defgrad("resize")
def _resize_grad_rule(g, ans, x, *, size, method, antialias):
    # the image's own dtype: float methods compute in float32, so a float64/half image's gradient is cast back
    h, w = x.shape[1], x.shape[2]
    dx = run(_resize_grad, (g,), {"image_size": (h, w), "method": method, "antialias": antialias})
    return (dx if dx.dtype == x.dtype else dx.astype(x.dtype),)


@defgrad("resize_grad")
def _resize_grad_grad(g, ans, grads, *, image_size, method, antialias):
    size = (grads.shape[1], grads.shape[2])
    return (run(_RESIZE, (g,), {"size": size, "method": method, "antialias": antialias}),)


defgrad("rgb_to_hsv", lambda g, ans, x: (colour_grad(x, g, inverse=False),))
defgrad("hsv_to_rgb", lambda g, ans, x: (colour_grad(x, g, inverse=True),))
