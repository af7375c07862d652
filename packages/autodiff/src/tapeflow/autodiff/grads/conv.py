"""Gradients of core's convolution and pooling ops (``tapeflow.core.ops.conv_ops``), in the same order.

A convolution is bilinear in (input, filters), so each gradient is another
convolution op: the input gradient is ``conv2d_backprop_input``, the filter
gradient ``conv2d_backprop_filter``, and the gradients of those two are again
``conv2d`` and the backprop ops.  Rules are per input, so a tape that needs
only the filter gradient (a first layer) never computes the input gradient.
Pooling: ``max_pool_grad`` and ``max_pool_grad_grad`` are each other's
gradients with respect to ``grad`` (both route through the window maxima; the
maxima's positions are piecewise constant in the input, so the gradient with
respect to ``orig_input`` is zero), and ``avg_pool2d`` and ``avg_pool_grad`` are each other's
transposes.
"""
from __future__ import annotations

from tapeflow.core.ops import (
    avg_pool2d,
    avg_pool_grad,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    depthwise_conv2d,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
    max_pool_grad,
    max_pool_grad_grad,
    zeros_like,
)

from ..registry import defgrad

# ---- conv2d: inputs (input, filters) ----------------------------------------------

defgrad("conv2d",
        lambda g, ans, x, w, strides, padding, dilations:
            conv2d_backprop_input(x._shape, w, g, strides, padding, dilations=dilations),
        lambda g, ans, x, w, strides, padding, dilations:
            conv2d_backprop_filter(x, w._shape, g, strides, padding, dilations=dilations))

# inputs (filters, out_backprop); output shaped like the conv's input
defgrad("conv2d_backprop_input",
        lambda g, ans, w, dy, strides, padding, dilations, input_sizes:
            conv2d_backprop_filter(g, w._shape, dy, strides, padding, dilations=dilations),
        lambda g, ans, w, dy, strides, padding, dilations, input_sizes:
            conv2d(g, w, strides, padding, dilations=dilations))

# inputs (input, out_backprop); output shaped like the filters
defgrad("conv2d_backprop_filter",
        lambda g, ans, x, dy, strides, padding, dilations, filter_sizes:
            conv2d_backprop_input(x._shape, g, dy, strides, padding, dilations=dilations),
        lambda g, ans, x, dy, strides, padding, dilations, filter_sizes:
            conv2d(x, g, strides, padding, dilations=dilations))

# ---- depthwise_conv2d: the same three, depthwise ---------------------------------------

defgrad("depthwise_conv2d",
        lambda g, ans, x, w, strides, padding, dilations:
            depthwise_conv2d_backprop_input(x._shape, w, g, strides, padding, dilations=dilations),
        lambda g, ans, x, w, strides, padding, dilations:
            depthwise_conv2d_backprop_filter(x, w._shape, g, strides, padding, dilations=dilations))

defgrad("depthwise_conv2d_backprop_input",
        lambda g, ans, w, dy, strides, padding, dilations, input_sizes:
            depthwise_conv2d_backprop_filter(g, w._shape, dy, strides, padding, dilations=dilations),
        lambda g, ans, w, dy, strides, padding, dilations, input_sizes:
            depthwise_conv2d(g, w, strides, padding, dilations=dilations))

defgrad("depthwise_conv2d_backprop_filter",
        lambda g, ans, x, dy, strides, padding, dilations, filter_sizes:
            depthwise_conv2d_backprop_input(x._shape, g, dy, strides, padding, dilations=dilations),
        lambda g, ans, x, dy, strides, padding, dilations, filter_sizes:
            depthwise_conv2d(x, g, strides, padding, dilations=dilations))

# ---- pooling ------------------------------------------------------------------------


@defgrad("max_pool2d")
def _max_pool2d_grad(g, ans, x, ksize, strides, padding):
    return (max_pool_grad(x, ans, g, ksize, strides, padding),)


def _zeros_x(g, ans, x, y, grad, ksize, strides, padding):
    return zeros_like(x)


def _zeros_y(g, ans, x, y, grad, ksize, strides, padding):
    return zeros_like(y)


# the window maxima move only by jumps: zero gradient for orig_input and orig_output (as in TensorFlow)
defgrad("max_pool_grad", _zeros_x, _zeros_y,
        lambda g, ans, x, y, grad, ksize, strides, padding: max_pool_grad_grad(x, y, g, ksize, strides, padding))

defgrad("max_pool_grad_grad", _zeros_x, _zeros_y,
        lambda g, ans, x, y, grad, ksize, strides, padding: max_pool_grad(x, y, g, ksize, strides, padding))


@defgrad("avg_pool2d")
def _avg_pool2d_grad(g, ans, x, ksize, strides, padding):
    return (avg_pool_grad(x._shape, g, ksize, strides, padding),)


@defgrad("avg_pool_grad")
def _avg_pool_grad_grad(g, ans, grad, ksize, strides, padding, orig_input_shape):
    return (avg_pool2d(g, ksize, strides, padding),)
