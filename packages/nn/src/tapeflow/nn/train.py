"""``tf.train``: the checkpoint names (defined in :mod:`tapeflow.nn.checkpoint`) and the TensorFlow 1
training names the seeds use (``GradientDescentOptimizer``, ``get_or_create_global_step``).

>>> import tapeflow as tf
>>> _ = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(tf.constant(1.0), tf.Variable(1.0))])
>>> tf.train.Checkpoint is tf.nn.checkpoint.Checkpoint
True
"""
from __future__ import annotations

import numpy as np
from tapeflow.core.io import BytesList, Example, Feature, Features, FloatList, Int64List  # noqa: F401 (tf.train)
from tapeflow.core.variables import Variable

from .checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CheckpointManager,
    latest_checkpoint,
    list_variables,
    load_variable,
)
from .optimizers import SGD, Adam

# ---- TensorFlow 1 names ----------------------------------------------------------------------------

_GLOBAL_STEP = []


def get_or_create_global_step() -> Variable:
    """The process's global step counter (an int64 variable; ``apply_gradients(global_step=...)`` adds 1).

    >>> import tapeflow as tf
    >>> tf.train.get_or_create_global_step().dtype
    tf.int64
    """
    if not _GLOBAL_STEP:
        _GLOBAL_STEP.append(Variable(np.int64(0), trainable=False, name="global_step"))
    return _GLOBAL_STEP[0]


def get_global_step():
    """The global step made by ``get_or_create_global_step``, or None."""
    return _GLOBAL_STEP[0] if _GLOBAL_STEP else None


class GradientDescentOptimizer(SGD):
    """TensorFlow 1's name for plain SGD: ``var -= learning_rate * grad``.

    >>> import tapeflow as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(tf.constant(1.0), w)])
    >>> float(w)
    0.5
    """

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent") -> None:
        super().__init__(learning_rate=learning_rate, name=name)


class MomentumOptimizer(SGD):
    """TensorFlow 1's momentum optimizer (the same steps as SGD with momentum at a constant rate).

    >>> import tapeflow as tf
    >>> tf.train.MomentumOptimizer(0.1, 0.9).momentum
    0.9
    """

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False) -> None:
        super().__init__(learning_rate=learning_rate, momentum=momentum, nesterov=use_nesterov, name=name)


class AdamOptimizer(Adam):
    """TensorFlow 1's Adam (epsilon 1e-8 by default).

    >>> import tapeflow as tf
    >>> tf.train.AdamOptimizer().epsilon
    1e-08
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="Adam") -> None:
        super().__init__(learning_rate=learning_rate, beta_1=beta1, beta_2=beta2, epsilon=epsilon, name=name)


__all__ = [
    "AdamOptimizer",
    "BytesList",
    "Example",
    "Feature",
    "Features",
    "FloatList",
    "Int64List",
    "Checkpoint",
    "CheckpointLoadStatus",
    "CheckpointManager",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "get_global_step",
    "get_or_create_global_step",
    "latest_checkpoint",
    "list_variables",
    "load_variable",
]
