"""Noise and dropout layers that act only while training: SpatialDropout2D, GaussianNoise."""
from __future__ import annotations

from typing import TYPE_CHECKING

import tapeflow.core as K

from .. import _args as A
from .base import InputSpec, Layer
from .convolutional import _data_format
from .core import Dropout

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


class SpatialDropout2D(Dropout):
    """Dropout of whole feature maps: while training, each (sample, channel) map is zeroed with
    probability ``rate`` and the others scaled by 1 / (1 - rate).

    >>> import tapeflow as tf
    >>> y = tf.keras.layers.SpatialDropout2D(0.5, seed=1)(tf.ones([2, 3, 3, 8]), training=True).numpy()
    >>> bool(((y == 0).all(axis=(1, 2)) | (y == 2).all(axis=(1, 2))).all())
    True
    """

    def __init__(self, rate, data_format=None, seed=None, **kwargs) -> None:
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = _data_format(data_format, self)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs, training=None) -> Tensor:
        n, a, b, c = inputs.shape
        self.__dict__["noise_shape"] = (n, 1, 1, c) if self.data_format == "channels_last" else (n, a, 1, 1)
        try:
            return super().call(inputs, training=training)
        finally:
            self.__dict__["noise_shape"] = None

    def get_config(self):
        cfg = super().get_config()
        del cfg["noise_shape"]
        return {**cfg, "data_format": self.data_format}


class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of standard deviation ``stddev`` while training (identity otherwise).

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.GaussianNoise(0.1, seed=3)
    >>> noisy = layer(tf.ones([10000]), training=True)
    >>> layer(tf.ones([2])).numpy().tolist(), abs(float(tf.reduce_mean(noisy)) - 1) < 0.01
    ([1.0, 1.0], True)
    """

    supports_masking = True

    def __init__(self, stddev, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.stddev = A.number(stddev, "stddev", self, lo=0.0)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0

    def call(self, inputs, training=None) -> Tensor:
        if not training or self.stddev == 0.0:
            return inputs
        seed = None
        if self.seed is not None:
            self.__dict__["_calls"] += 1
            seed = self.seed * 1000003 + self._calls
        return K.add(inputs, K.random.normal(inputs.shape, stddev=self.stddev, dtype=inputs.dtype, seed=seed))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}
