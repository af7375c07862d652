"""Keras-style layers (``tf.keras.layers``, also on ``tf.nn``): Dense, Conv2D, pooling, normalization,
Dropout, Embedding, LSTM, GRU and the ``Layer`` base class to write your own.

>>> import tapeflow as tf
>>> layer = tf.keras.layers.Dense(4, activation="relu")
>>> layer(tf.ones([2, 3])).shape
TensorShape([2, 4])
"""
from __future__ import annotations

from .base import Input, InputLayer, InputSpec, Layer, clear_session  # noqa: F401
from .conv import (AveragePooling2D, AvgPool2D, Conv2D, Convolution2D, GlobalAveragePooling1D,  # noqa: F401
                   GlobalAveragePooling2D, GlobalAvgPool1D, GlobalAvgPool2D, GlobalMaxPool2D, GlobalMaxPooling2D,
                   MaxPool2D, MaxPooling2D)
from .core import Activation, Dense, Dropout, Embedding, Flatten, Lambda, Masking, Reshape  # noqa: F401
from .merge import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,  # noqa: F401
                    concatenate, dot, maximum, minimum, multiply, subtract)
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .rnn import GRU, LSTM, GRUCell, LSTMCell  # noqa: F401

__all__ = ["Activation", "AveragePooling2D", "AvgPool2D", "BatchNormalization", "Conv2D", "Convolution2D", "Dense",
           "Dropout", "Embedding", "Flatten", "GRU", "GRUCell", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool2D", "GlobalMaxPooling2D", "Input", "InputLayer",
           "InputSpec", "LSTM", "LSTMCell", "Lambda", "Layer", "LayerNormalization", "Masking", "MaxPool2D",
           "MaxPooling2D", "Reshape"]
__all__ += ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract", "add",
            "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]
