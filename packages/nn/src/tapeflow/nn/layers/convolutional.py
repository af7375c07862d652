"""Convolution layers of any rank over channels-last inputs (Conv1D, Conv2D, Conv3D, with ``groups``),
Conv2DTranspose, DepthwiseConv2D and SeparableConv2D.

1-D convolutions run as 2-D ones over a height of 1 (core's ``conv1d``), 3-D ones as a sum over
the kernel's depth of 2-D convolutions of strided depth slices, grouped ones as one convolution
per group of channels, concatenated.  ``data_format="channels_first"`` transposes to channels-last
and back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
from .. import activations as _act
from .. import initializers as _init
from .base import InputSpec, Layer

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


def _tuple(v, what, owner, n, lo=1):
    return A.int_tuple(v, what, owner, n, lo=lo)


def _data_format(f, owner):
    if f is None:
        return "channels_last"
    return A.choice(f, "data_format", owner, ("channels_last", "channels_first"), lower=False)


def _out_len(n, k, s, d, padding):
    """Keras's conv output length (``padding`` valid, same or causal)."""
    if n is None:
        return None
    if padding in ("same", "causal"):
        return -(-n // s)
    eff = d * (k - 1) + 1
    return max(0, (n - eff) // s + 1)


def _to_last(x, rank, fmt):
    if fmt == "channels_last":
        return x
    return K.transpose(x, (0,) + tuple(range(2, rank + 2)) + (1,))


def _to_first(x, rank, fmt):
    if fmt == "channels_last":
        return x
    return K.transpose(x, (0, rank + 1) + tuple(range(1, rank + 1)))


def _shape_last(shape, fmt):
    shape = tuple(shape)
    return shape if fmt == "channels_last" else (shape[0],) + shape[2:] + (shape[1],)


def _shape_back(shape, fmt):
    return shape if fmt == "channels_last" else (shape[0], shape[-1]) + tuple(shape[1:-1])


def _channels(layer, input_shape, rank):
    shape = _shape_last(input_shape, layer.data_format)
    if len(shape) != rank + 2:
        raise InvalidArgumentError(f'input 0 of layer "{layer.name}" is incompatible with the layer: expected '
                                   f"ndim={rank + 2}, found ndim={len(shape)}, full shape received: "
                                   f"{tuple(input_shape)}", type(layer).__name__)
    if shape[-1] is None:
        raise InvalidArgumentError(f'the channel dimension of the inputs to layer "{layer.name}" must be known, '
                                   f"got shape {tuple(input_shape)}", type(layer).__name__)
    return int(shape[-1])


def _reg_config(r):
    """A regularizer as a layer config holds it (``regularizers.serialize``)."""
    from .. import regularizers as _reg

    return _reg.serialize(r)


def _activity(layer, y):
    reg = layer.activity_regularizer
    if reg is not None:
        layer.add_loss(K.truediv(reg(y), K.cast(y.shape[0] or 1, y.dtype)))
    return y


def _finish(layer, y):
    if layer.bias is not None:
        y = K.add(y, layer.bias.read_value())
    act = layer.activation
    y = y if act is _act.linear else act(y)
    return _activity(layer, y)


def _conv3d(x, w, strides, padding, dilations):
    """3-D convolution (NDHWC, kernel (kd, kh, kw, cin, cout)) as 2-D convolutions of depth slices."""
    b, d, h, wd, c = x.shape
    kd = w.shape[0]
    sd, dd = strides[0], dilations[0]
    eff = dd * (kd - 1) + 1
    if padding == "same":
        out = -(-d // sd)
        total = max((out - 1) * sd + eff - d, 0)
        x = K.pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
        d = x.shape[1]
    do = max(0, (d - eff) // sd + 1)
    acc = None
    for i in range(kd):
        start = i * dd
        sl = x[:, start:start + (do - 1) * sd + 1:sd] if do else x[:, :0]
        y = K.conv2d(K.reshape(sl, (b * do, h, wd, c)), w[i], strides=strides[1:], padding=padding.upper(),
                     dilations=dilations[1:])
        acc = y if acc is None else K.add(acc, y)
    return K.reshape(acc, (b, do) + tuple(acc.shape[1:]))


class _Conv(Layer):
    rank = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(**kwargs)
        r = self.rank
        self.filters = A.integer(filters, "filters", self, lo=1)
        self.kernel_size = _tuple(kernel_size, "kernel_size", self, r)
        self.strides = _tuple(strides, "strides", self, r)
        allowed = ("valid", "same", "causal") if r == 1 else ("valid", "same")
        self.padding = A.choice(padding, "padding", self, allowed)
        self.data_format = _data_format(data_format, self)
        self.dilation_rate = _tuple(dilation_rate, "dilation_rate", self, r)
        self.groups = A.integer(groups, "groups", self, lo=1)
        if self.filters % self.groups:
            raise InvalidArgumentError(f"filters = {self.filters} must be a multiple of groups = {self.groups}",
                                       type(self).__name__)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise InvalidArgumentError(f"strides {self.strides} and dilation_rate {self.dilation_rate} are both > 1; "
                                       "allowed: one of them > 1", type(self).__name__)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        A.lookups(self, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                  bias_constraint=bias_constraint)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        from .. import regularizers as _reg

        self.activity_regularizer = _reg.get(activity_regularizer)
        self._activity_arg = activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=r + 2)

    def build(self, input_shape):
        cin = _channels(self, input_shape, self.rank)
        if cin % self.groups:
            raise InvalidArgumentError(f'layer "{self.name}" has groups = {self.groups}, which does not divide the '
                                       f"input channels ({cin}); allowed: groups dividing the channels",
                                       type(self).__name__)
        self.kernel = self.add_weight("kernel", self.kernel_size + (cin // self.groups, self.filters),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None
        axis = -1 if self.data_format == "channels_last" else 1
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={axis: cin})

    def _conv(self, x, w):
        r, pad = self.rank, self.padding
        if r == 1:
            if pad == "causal":
                x = K.pad(x, [[0, 0], [self.dilation_rate[0] * (self.kernel_size[0] - 1), 0], [0, 0]])
                pad = "valid"
            return K.conv1d(x, w, stride=self.strides[0], padding=pad.upper(), dilations=self.dilation_rate[0])
        if r == 2:
            return K.conv2d(x, w, strides=self.strides, padding=pad.upper(), dilations=self.dilation_rate)
        return _conv3d(x, w, self.strides, pad, self.dilation_rate)

    def call(self, inputs) -> Tensor:
        x = _to_last(inputs, self.rank, self.data_format)
        w = self.kernel.read_value()
        g = self.groups
        if g == 1:
            y = self._conv(x, w)
        else:
            xs = K.split(x, g, axis=-1)
            ws = K.split(w, g, axis=-1)
            y = K.concat([self._conv(xi, wi) for xi, wi in zip(xs, ws)], axis=-1)
        return _to_first(_finish(self, y), self.rank, self.data_format)

    def compute_output_shape(self, input_shape):
        shape = _shape_last(input_shape, self.data_format)
        sizes = tuple(_out_len(n, k, s, d, self.padding) for n, k, s, d in
                      zip(shape[1:-1], self.kernel_size, self.strides, self.dilation_rate))
        return _shape_back((shape[0],) + sizes + (self.filters,), self.data_format)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": _act.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": _init.serialize(_init.get(self.kernel_initializer)),
                "bias_initializer": _init.serialize(_init.get(self.bias_initializer)),
                "kernel_regularizer": _reg_config(self.kernel_regularizer),
                "bias_regularizer": _reg_config(self.bias_regularizer),
                "activity_regularizer": _reg_config(self._activity_arg), "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint}


class Conv1D(_Conv):
    """1-D convolution over (batch, steps, channels): ``activation(conv1d(inputs, kernel) + bias)``;
    ``padding="causal"`` pads only the past.  Kernel ``(kernel_size, in_channels // groups, filters)``.

    >>> import tapeflow as tf
    >>> conv = tf.keras.layers.Conv1D(4, 3, padding="causal", groups=2)
    >>> conv(tf.ones([2, 10, 6])).shape, conv.kernel.shape
    (TensorShape([2, 10, 4]), TensorShape([3, 3, 4]))
    """

    rank = 1


class Conv2D(_Conv):
    """2-D convolution over NHWC inputs: ``activation(conv2d(inputs, kernel) + bias)``.

    The kernel has shape ``(kh, kw, in_channels // groups, filters)`` (Glorot uniform); with
    ``groups > 1`` each group of input channels makes its own ``filters // groups`` outputs.

    >>> import tapeflow as tf
    >>> conv = tf.keras.layers.Conv2D(16, 3, activation="relu")
    >>> conv.compute_output_shape((None, 28, 28, 1))
    (None, 26, 26, 16)
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, groups=groups, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, **kwargs)


class Conv3D(_Conv):
    """3-D convolution over (batch, depth, height, width, channels).  Kernel
    ``(kd, kh, kw, in_channels // groups, filters)``.

    >>> import tapeflow as tf
    >>> conv = tf.keras.layers.Conv3D(2, 3, padding="same")
    >>> conv(tf.ones([1, 4, 4, 4, 3])).shape
    TensorShape([1, 4, 4, 4, 2])
    """

    rank = 3


class Conv2DTranspose(Layer):
    """Transposed 2-D convolution (the gradient of Conv2D with respect to its input), for upsampling.

    Kernel ``(kh, kw, filters, in_channels)``; each spatial size becomes
    ``n * stride + max(k - stride, 0)`` ("valid") or ``n * stride`` ("same"), or
    ``(n - 1) * stride + k - 2 * pad + output_padding`` when ``output_padding`` is given.

    >>> import tapeflow as tf
    >>> up = tf.keras.layers.Conv2DTranspose(8, 3, strides=2, padding="same")
    >>> up(tf.ones([1, 5, 5, 4])).shape, up.kernel.shape
    (TensorShape([1, 10, 10, 8]), TensorShape([3, 3, 8, 4]))
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.filters = A.integer(filters, "filters", self, lo=1)
        self.kernel_size = _tuple(kernel_size, "kernel_size", self, 2)
        self.strides = _tuple(strides, "strides", self, 2)
        self.padding = A.choice(padding, "padding", self, ("valid", "same"))
        self.output_padding = None if output_padding is None else _tuple(output_padding, "output_padding", self, 2,
                                                                          lo=0)
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise InvalidArgumentError(f"output_padding {self.output_padding} must be smaller than strides "
                                       f"{self.strides}", "Conv2DTranspose")
        self.data_format = _data_format(data_format, self)
        self.dilation_rate = _tuple(dilation_rate, "dilation_rate", self, 2)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        A.lookups(self, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                  bias_constraint=bias_constraint)
        from .. import regularizers as _reg

        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer, self._activity_arg = _reg.get(activity_regularizer), activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=4)

    def build(self, input_shape):
        cin = _channels(self, input_shape, 2)
        self.kernel = self.add_weight("kernel", self.kernel_size + (self.filters, cin),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None
        axis = -1 if self.data_format == "channels_last" else 1
        self.input_spec = InputSpec(ndim=4, axes={axis: cin})

    def _len(self, n, i):
        if n is None:
            return None
        k = self.kernel_size[i] + (self.kernel_size[i] - 1) * (self.dilation_rate[i] - 1)
        s = self.strides[i]
        if self.output_padding is None:
            return n * s + max(k - s, 0) if self.padding == "valid" else n * s
        pad = k // 2 if self.padding == "same" else 0
        return (n - 1) * s + k - 2 * pad + self.output_padding[i]

    def call(self, inputs) -> Tensor:
        x = _to_last(inputs, 2, self.data_format)
        b, h, w, _ = x.shape
        y = K.conv2d_transpose(x, self.kernel.read_value(), (b, self._len(h, 0), self._len(w, 1), self.filters),
                               strides=self.strides, padding=self.padding.upper(), dilations=self.dilation_rate)
        return _to_first(_finish(self, y), 2, self.data_format)

    def compute_output_shape(self, input_shape):
        n, h, w, _ = _shape_last(input_shape, self.data_format)
        return _shape_back((n, self._len(h, 0), self._len(w, 1), self.filters), self.data_format)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "output_padding": self.output_padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": _act.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": _init.serialize(_init.get(self.kernel_initializer)),
                "bias_initializer": _init.serialize(_init.get(self.bias_initializer)),
                "kernel_regularizer": _reg_config(self.kernel_regularizer),
                "bias_regularizer": _reg_config(self.bias_regularizer),
                "activity_regularizer": _reg_config(self._activity_arg), "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint}


class DepthwiseConv2D(Layer):
    """Depthwise 2-D convolution: each input channel convolved with its own ``depth_multiplier`` filters.

    Kernel ``(kh, kw, in_channels, depth_multiplier)``; outputs ``in_channels * depth_multiplier`` channels.

    >>> import tapeflow as tf
    >>> dw = tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
    >>> dw(tf.ones([1, 6, 6, 3])).shape, dw.kernel.shape
    (TensorShape([1, 6, 6, 6]), TensorShape([3, 3, 3, 2]))
    """

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.kernel_size = _tuple(kernel_size, "kernel_size", self, 2)
        self.strides = _tuple(strides, "strides", self, 2)
        self.padding = A.choice(padding, "padding", self, ("valid", "same"))
        self.depth_multiplier = A.integer(depth_multiplier, "depth_multiplier", self, lo=1)
        self.data_format = _data_format(data_format, self)
        self.dilation_rate = _tuple(dilation_rate, "dilation_rate", self, 2)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise InvalidArgumentError(f"strides {self.strides} and dilation_rate {self.dilation_rate} are both > 1; "
                                       "allowed: one of them > 1", type(self).__name__)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        self._init_args(depthwise_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                        depthwise_regularizer=depthwise_regularizer, bias_regularizer=bias_regularizer,
                        activity_regularizer=activity_regularizer, depthwise_constraint=depthwise_constraint,
                        bias_constraint=bias_constraint)
        self.input_spec = InputSpec(ndim=4)

    def _init_args(self, **args):
        from .. import regularizers as _reg

        A.lookups(self, **args)
        self._weight_args = args
        for k, v in args.items():
            setattr(self, k, v)
        self.activity_regularizer = _reg.get(args["activity_regularizer"])

    def _weight(self, name, shape, kind):
        a = self._weight_args
        return self.add_weight(name, shape, initializer=a[f"{kind}_initializer"], regularizer=a[f"{kind}_regularizer"],
                               constraint=a[f"{kind}_constraint"])

    def build(self, input_shape):
        cin = _channels(self, input_shape, 2)
        self.kernel = self._weight("kernel", self.kernel_size + (cin, self.depth_multiplier), "depthwise")
        self.bias = self._weight("bias", (cin * self.depth_multiplier,), "bias") if self.use_bias else None
        axis = -1 if self.data_format == "channels_last" else 1
        self.input_spec = InputSpec(ndim=4, axes={axis: cin})

    def _depthwise(self, x, w):
        return K.depthwise_conv2d(x, w, strides=(1,) + self.strides + (1,), padding=self.padding.upper(),
                                  dilations=self.dilation_rate)

    def call(self, inputs) -> Tensor:
        x = _to_last(inputs, 2, self.data_format)
        return _to_first(_finish(self, self._depthwise(x, self.kernel.read_value())), 2, self.data_format)

    def _out_channels(self, cin):
        return None if cin is None else cin * self.depth_multiplier

    def compute_output_shape(self, input_shape):
        n, h, w, c = _shape_last(input_shape, self.data_format)
        return _shape_back((n, _out_len(h, self.kernel_size[0], self.strides[0], self.dilation_rate[0], self.padding),
                            _out_len(w, self.kernel_size[1], self.strides[1], self.dilation_rate[1], self.padding),
                            self._out_channels(c)), self.data_format)

    def get_config(self):
        cfg = {**super().get_config(), "kernel_size": self.kernel_size, "strides": self.strides,
               "padding": self.padding, "depth_multiplier": self.depth_multiplier, "data_format": self.data_format,
               "dilation_rate": self.dilation_rate, "activation": _act.serialize(self.activation),
               "use_bias": self.use_bias}
        for k, v in self._weight_args.items():
            cfg[k] = _init.serialize(_init.get(v)) if k.endswith("initializer") else \
                _reg_config(v) if k.endswith("regularizer") else v
        return cfg


class SeparableConv2D(DepthwiseConv2D):
    """Depthwise separable 2-D convolution: a depthwise convolution, then a 1x1 convolution to ``filters``.

    Weights: depthwise_kernel ``(kh, kw, in_channels, depth_multiplier)``, pointwise_kernel
    ``(1, 1, in_channels * depth_multiplier, filters)``, bias ``(filters,)``.

    >>> import tapeflow as tf
    >>> sep = tf.keras.layers.SeparableConv2D(8, 3)
    >>> sep(tf.ones([1, 6, 6, 3])).shape, [w.shape for w in sep.weights]
    (TensorShape([1, 4, 4, 8]), [TensorShape([3, 3, 3, 1]), TensorShape([1, 1, 3, 8]), TensorShape([8])])
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs) -> None:
        Layer.__init__(self, **kwargs)
        self.filters = A.integer(filters, "filters", self, lo=1)
        self.kernel_size = _tuple(kernel_size, "kernel_size", self, 2)
        self.strides = _tuple(strides, "strides", self, 2)
        self.padding = A.choice(padding, "padding", self, ("valid", "same"))
        self.depth_multiplier = A.integer(depth_multiplier, "depth_multiplier", self, lo=1)
        self.data_format = _data_format(data_format, self)
        self.dilation_rate = _tuple(dilation_rate, "dilation_rate", self, 2)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise InvalidArgumentError(f"strides {self.strides} and dilation_rate {self.dilation_rate} are both > 1; "
                                       "allowed: one of them > 1", type(self).__name__)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        self._init_args(depthwise_initializer=depthwise_initializer, pointwise_initializer=pointwise_initializer,
                        bias_initializer=bias_initializer, depthwise_regularizer=depthwise_regularizer,
                        pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
                        activity_regularizer=activity_regularizer, depthwise_constraint=depthwise_constraint,
                        pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint)
        self.input_spec = InputSpec(ndim=4)

    def build(self, input_shape):
        cin = _channels(self, input_shape, 2)
        self.depthwise_kernel = self._weight("depthwise_kernel", self.kernel_size + (cin, self.depth_multiplier),
                                             "depthwise")
        self.pointwise_kernel = self._weight("pointwise_kernel", (1, 1, cin * self.depth_multiplier, self.filters),
                                             "pointwise")
        self.bias = self._weight("bias", (self.filters,), "bias") if self.use_bias else None
        axis = -1 if self.data_format == "channels_last" else 1
        self.input_spec = InputSpec(ndim=4, axes={axis: cin})

    def call(self, inputs) -> Tensor:
        x = _to_last(inputs, 2, self.data_format)
        y = self._depthwise(x, self.depthwise_kernel.read_value())
        y = K.conv2d(y, self.pointwise_kernel.read_value(), strides=1, padding="VALID")
        return _to_first(_finish(self, y), 2, self.data_format)

    def _out_channels(self, cin):
        return self.filters

    def get_config(self):
        return {**super().get_config(), "filters": self.filters}


Convolution1D, Convolution2D, Convolution3D, Convolution2DTranspose = Conv1D, Conv2D, Conv3D, Conv2DTranspose
SeparableConvolution2D = SeparableConv2D
