"""1-D pooling and global pooling layers (channels-last; ``channels_first`` transposes and back).

The 2-D window poolings and GlobalAveragePooling1D/2D, GlobalMaxPooling2D live in ``conv.py``;
this module re-exports them so every pooling layer can be imported from here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import tapeflow.core as K

from .. import _args as A
from .base import InputSpec, Layer
from .conv import (AveragePooling2D, AvgPool2D, GlobalAveragePooling1D, GlobalAveragePooling2D,  # noqa: F401
                   GlobalAvgPool1D, GlobalAvgPool2D, GlobalMaxPool2D, GlobalMaxPooling2D, MaxPool2D, MaxPooling2D)
from .convolutional import _data_format, _out_len

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


class _Pool1D(Layer):
    _op = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.pool_size = A.int_tuple(pool_size, "pool_size", self, 1)[0]
        self.strides = self.pool_size if strides is None else A.int_tuple(strides, "strides", self, 1)[0]
        self.padding = A.choice(padding, "padding", self, ("valid", "same"))
        self.data_format = _data_format(data_format, self)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs) -> Tensor:
        x = inputs if self.data_format == "channels_last" else K.transpose(inputs, (0, 2, 1))
        y = getattr(K, self._op)(K.expand_dims(x, 1), ksize=(1, self.pool_size), strides=(1, self.strides),
                                 padding=self.padding.upper())
        y = K.squeeze(y, 1)
        return y if self.data_format == "channels_last" else K.transpose(y, (0, 2, 1))

    def compute_output_shape(self, input_shape):
        n, a, b = input_shape
        if self.data_format == "channels_last":
            return (n, _out_len(a, self.pool_size, self.strides, 1, self.padding), b)
        return (n, a, _out_len(b, self.pool_size, self.strides, 1, self.padding))

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format}


class MaxPooling1D(_Pool1D):
    """The maximum over each ``pool_size`` window of the steps of (batch, steps, channels).

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.constant([1.0, 5.0, 2.0, 3.0, 4.0]), [1, 5, 1])
    >>> tf.keras.layers.MaxPooling1D(2)(x).numpy().ravel().tolist()
    [5.0, 3.0]
    """

    _op = "max_pool2d"


class AveragePooling1D(_Pool1D):
    """The mean over each ``pool_size`` window of the steps ("same" padding averages the real steps only).

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.constant([1.0, 5.0, 2.0, 3.0, 4.0]), [1, 5, 1])
    >>> tf.keras.layers.AveragePooling1D(2, padding="same")(x).numpy().ravel().tolist()
    [3.0, 2.5, 4.0]
    """

    _op = "avg_pool2d"


class _Global1D(Layer):
    def __init__(self, data_format=None, keepdims=False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format, self)
        self.keepdims = A.boolean(keepdims, "keepdims", self)
        self.input_spec = InputSpec(ndim=3)

    def _axis(self):
        return 1 if self.data_format == "channels_last" else 2

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        if self.keepdims:
            shape[self._axis()] = 1
        else:
            del shape[self._axis()]
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalMaxPooling1D(_Global1D):
    """The maximum over the steps: (batch, steps, channels) -> (batch, channels).

    >>> import tapeflow as tf
    >>> tf.keras.layers.GlobalMaxPooling1D()(tf.constant([[[1.0, 4.0], [3.0, 2.0]]])).numpy().tolist()
    [[3.0, 4.0]]
    """

    def call(self, inputs) -> Tensor:
        return K.reduce_max(inputs, axis=self._axis(), keepdims=self.keepdims)


GlobalMaxPool1D = GlobalMaxPooling1D
MaxPool1D, AvgPool1D = MaxPooling1D, AveragePooling1D
