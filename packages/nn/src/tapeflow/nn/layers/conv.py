"""Convolution and pooling layers (NHWC: batch, height, width, channels), and the 1-D global average over time."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
import tapeflow.core as K
from .base import InputSpec, Layer
from .convolutional import Conv2D, Convolution2D  # noqa: F401 (grouped convolution of any rank lives there)

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


def _pair(v, what, owner):
    return A.int_tuple(v, what, owner, 2)


def _padding(p, owner):
    return A.choice(p, "padding", owner, ("valid", "same"))


def _data_format(f, owner):
    if f is not None:
        A.choice(f, "data_format", owner, ("channels_last",), lower=False)  # NHWC only


def _out_len(n, k, s, d, padding):
    if n is None:
        return None
    if padding == "same":
        return -(-n // s)
    eff = d * (k - 1) + 1
    return max(0, (n - eff) // s + 1)


class _Pool2D(Layer):
    _op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        _data_format(data_format, self)
        self.pool_size = _pair(pool_size, "pool_size", self)
        self.strides = _pair(strides, "strides", self) if strides is not None else self.pool_size
        self.padding = _padding(padding, self)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs) -> Tensor:
        return getattr(K, self._op)(inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding.upper())

    def compute_output_shape(self, input_shape):
        n, h, w, c = input_shape
        return (n, _out_len(h, self.pool_size[0], self.strides[0], 1, self.padding),
                _out_len(w, self.pool_size[1], self.strides[1], 1, self.padding), c)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last"}


class MaxPooling2D(_Pool2D):
    """The maximum over each ``pool_size`` window (stride ``strides``, default the pool size).

    >>> import tapeflow as tf
    >>> tf.keras.layers.MaxPooling2D().compute_output_shape((None, 26, 26, 16))
    (None, 13, 13, 16)
    """

    _op = "max_pool2d"


class AveragePooling2D(_Pool2D):
    """The mean over each ``pool_size`` window (stride ``strides``, default the pool size).

    >>> import tapeflow as tf
    >>> tf.keras.layers.AveragePooling2D(3, strides=1, padding="same").compute_output_shape((None, 8, 8, 4))
    (None, 8, 8, 4)
    """

    _op = "avg_pool2d"


class GlobalAveragePooling2D(Layer):
    """The mean over height and width: (batch, h, w, c) -> (batch, c).

    >>> import tapeflow as tf
    >>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones([2, 3, 3, 4])).numpy().tolist()[0]
    [1.0, 1.0, 1.0, 1.0]
    """

    def __init__(self, data_format=None, keepdims=False, **kwargs) -> None:
        super().__init__(**kwargs)
        _data_format(data_format, self)
        self.keepdims = A.boolean(keepdims, "keepdims", self)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs) -> Tensor:
        n, h, w, c = inputs.shape
        if inputs.dtype in (K.float32, K.float64) and all(isinstance(d, int) and d > 0 for d in (h, w, c)):
            # one average-pooling window over the whole image: the same mean, and its gradient is one
            # kernel (reduce_mean's is a broadcast copy, several times slower at a small CNN's sizes)
            y = K.avg_pool2d(inputs, (h, w), (h, w), "VALID")
            return y if self.keepdims else K.reshape(y, (-1, c))
        return K.reduce_mean(inputs, axis=(1, 2), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        n, _, _, c = input_shape
        return (n, 1, 1, c) if self.keepdims else (n, c)

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


class GlobalAveragePooling1D(Layer):
    """The mean over time: (batch, time, features) -> (batch, features), over the unmasked steps only
    when the input carries a mask (Keras's rule: ``sum(x * mask) / sum(mask)``).

    >>> import tapeflow as tf
    >>> x = tf.constant([[[1.0], [3.0], [8.0]]])
    >>> pool = tf.keras.layers.GlobalAveragePooling1D()
    >>> pool(x).numpy().tolist(), pool(x, mask=tf.constant([[True, True, False]])).numpy().tolist()
    ([[4.0]], [[2.0]])
    """

    supports_masking = True

    def __init__(self, data_format=None, keepdims=False, **kwargs) -> None:
        super().__init__(**kwargs)
        _data_format(data_format, self)
        self.keepdims = A.boolean(keepdims, "keepdims", self)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs, mask=None) -> Tensor:
        if mask is None:
            return K.reduce_mean(inputs, axis=1, keepdims=self.keepdims)
        if tuple(mask._shape) != tuple(inputs._shape[:2]):
            raise InvalidArgumentError(f'the mask of layer "{self.name}" has shape {tuple(mask._shape)}; allowed: '
                                       f"(batch, time) = {tuple(inputs._shape[:2])}", type(self).__name__)
        m = K.expand_dims(K.cast(mask, inputs.dtype), -1)
        return K.truediv(K.reduce_sum(K.multiply(inputs, m), axis=1, keepdims=self.keepdims),
                         K.reduce_sum(m, axis=1, keepdims=self.keepdims))

    def compute_mask(self, inputs, mask=None):
        return None  # the time axis is gone

    def compute_output_shape(self, input_shape):
        n, _, c = input_shape
        return (n, 1, c) if self.keepdims else (n, c)

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


class GlobalMaxPooling2D(GlobalAveragePooling2D):
    """The maximum over height and width: (batch, h, w, c) -> (batch, c).

    >>> import tapeflow as tf
    >>> tf.keras.layers.GlobalMaxPooling2D()(tf.ones([2, 3, 3, 4])).shape
    TensorShape([2, 4])
    """

    def call(self, inputs) -> Tensor:
        return K.reduce_max(inputs, axis=(1, 2), keepdims=self.keepdims)


MaxPool2D, AvgPool2D, GlobalAvgPool2D, GlobalMaxPool2D = (MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D,
                                                          GlobalMaxPooling2D)
GlobalAvgPool1D = GlobalAveragePooling1D
