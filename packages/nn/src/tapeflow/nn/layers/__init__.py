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
from .activation import ELU, LeakyReLU, PReLU, ReLU, Softmax  # noqa: F401
from .attention import Attention, MultiHeadAttention  # noqa: F401
from .convolutional import (Conv1D, Conv2DTranspose, Conv3D, Convolution1D, Convolution2DTranspose,  # noqa: F401
                            Convolution3D, DepthwiseConv2D, SeparableConv2D, SeparableConvolution2D)
from .core import Activation, Dense, Dropout, Embedding, Flatten, Lambda, Masking, Reshape  # noqa: F401
from .merge import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,  # noqa: F401
                    concatenate, dot, maximum, minimum, multiply, subtract)
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .pooling import (AveragePooling1D, AvgPool1D, GlobalMaxPool1D, GlobalMaxPooling1D, MaxPool1D,  # noqa: F401
                      MaxPooling1D)
from .preprocessing import (CategoryEncoding, Normalization, RandomCrop, RandomFlip, RandomRotation,  # noqa: F401
                            RandomZoom, Rescaling)
from .regularization import GaussianNoise, SpatialDropout2D  # noqa: F401
from .reshaping import Cropping2D, Permute, RepeatVector, UpSampling2D, ZeroPadding2D  # noqa: F401
from .rnn import GRU, LSTM, Bidirectional, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell, TimeDistributed  # noqa: F401
from .text import IntegerLookup, StringLookup, TextVectorization  # noqa: F401

__all__ = ["Activation", "AveragePooling2D", "AvgPool2D", "BatchNormalization", "Conv2D", "Convolution2D", "Dense",
           "Dropout", "Embedding", "Flatten", "GRU", "GRUCell", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool2D", "GlobalMaxPooling2D", "Input", "InputLayer",
           "InputSpec", "LSTM", "LSTMCell", "Lambda", "Layer", "LayerNormalization", "Masking", "MaxPool2D",
           "MaxPooling2D", "Reshape"]
__all__ += ["Attention", "AveragePooling1D", "AvgPool1D", "Bidirectional", "CategoryEncoding", "Conv1D",
            "Conv2DTranspose", "Conv3D", "Convolution1D", "Convolution2DTranspose", "Convolution3D", "Cropping2D",
            "DepthwiseConv2D", "ELU", "GaussianNoise", "GlobalMaxPool1D", "GlobalMaxPooling1D", "LeakyReLU",
            "MaxPool1D", "MaxPooling1D", "MultiHeadAttention", "Normalization", "PReLU", "Permute", "ReLU",
            "RandomCrop", "RandomFlip", "RandomRotation", "RandomZoom", "RepeatVector", "Rescaling",
            "SeparableConv2D", "SeparableConvolution2D", "SimpleRNN", "SimpleRNNCell", "Softmax", "SpatialDropout2D",
            "TimeDistributed", "UpSampling2D", "ZeroPadding2D"]
__all__ += ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract", "add",
            "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]
__all__ += ["IntegerLookup", "StringLookup", "TextVectorization"]
