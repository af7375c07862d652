"""tapeflow.nn: Keras-style layers and models, optimizers, losses, metrics, checkpoints and summaries.

The facade maps it as ``tf.nn`` and ``tf.keras`` (``tf.keras.layers.Dense`` or ``tf.nn.Dense``),
``tf.optimizers``, ``tf.losses``, ``tf.metrics``, ``tf.initializers``, ``tf.train`` and
``tf.summary``.  Core's nn ops are here too, so TensorFlow's spellings work
(``tf.nn.relu``, ``tf.nn.softmax_cross_entropy_with_logits``, ``tf.nn.conv2d``...).

>>> import tapeflow as tf
>>> model = tf.keras.Sequential([tf.keras.layers.Dense(10, input_shape=(784,)), tf.keras.layers.Dense(10)])
>>> model(tf.zeros([1, 784])).shape
TensorShape([1, 10])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

from tapeflow.core.ops import conv_ops as _conv_ops
from tapeflow.core.ops import nn_ops as _nn_ops

# core's nn ops under their TensorFlow names (tf.nn.relu, tf.nn.softmax, tf.nn.conv2d, ...)
for _n in list(_nn_ops.__all__) + list(_conv_ops.__all__):
    globals()[_n] = getattr(_nn_ops, _n, None) or getattr(_conv_ops, _n)
del _n
if TYPE_CHECKING:  # the loop above, for type checkers (their __all__ lists are what it copies)
    from tapeflow.core.ops.conv_ops import *  # noqa: F403
    from tapeflow.core.ops.nn_ops import *  # noqa: F403

from . import (activations, backend, callbacks, checkpoint, initializers, layers, losses, metrics,  # noqa: E402,F401
               optimizers, regularizers, summary, train)
from .layers import *  # noqa: E402,F401,F403
# ``name as name``: re-exported for type checkers (PEP 484)
from .layers import Input as Input, InputLayer as InputLayer, InputSpec as InputSpec, Layer as Layer  # noqa: E402,F401
from .models import Model as Model, Sequential as Sequential  # noqa: E402,F401
from .checkpoint import Checkpoint as Checkpoint, CheckpointManager as CheckpointManager  # noqa: E402,F401
from . import applications, datasets, mixed_precision, utils  # noqa: E402,F401

models = __import__("tapeflow.nn.models", fromlist=["Model"])

# the seeds' tf.nn.graph_callable: a graph function (tf.function)
from tapeflow.core.function import function as graph_callable  # noqa: E402,F401
