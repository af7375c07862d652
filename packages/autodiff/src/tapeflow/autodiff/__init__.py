"""tapeflow.autodiff: GradientTape, every core op's gradient, and the seeds' gradient APIs.

>>> import tapeflow as tf
>>> w = tf.Variable(1.0)
>>> with tf.GradientTape() as tape:
...     loss = w * w
>>> print(tape.gradient(loss, w))
Tensor(2.0, shape=(), dtype=float32)

User ops: compute the output, report it with :func:`record`, and give its gradient
with :func:`register_gradient`; or wrap a Python function in :func:`custom_gradient`.
"""
from __future__ import annotations

__version__ = "0.1.0"

from tapeflow.core.ops import stop_gradient  # core's op; its gradient is None by definition

from . import grads  # noqa: F401  (registers every op's rule)
from .check import GradientCheck, check_gradients
from .forward import ForwardAccumulator
from .custom import custom_gradient, record, register_gradient
from .functions import (gradients_function, implicit_gradients, implicit_value_and_gradients,
                        value_and_gradients_function)
from .registry import GRADIENTS, defgrad
from .tape import GradientTape, UnconnectedGradients, pause_all, recording

__all__ = ["ForwardAccumulator", "GRADIENTS", "GradientCheck", "GradientTape", "UnconnectedGradients",
           "check_gradients", "custom_gradient", "defgrad", "gradients_function", "implicit_gradients",
           "implicit_value_and_gradients", "pause_all", "record", "recording", "register_gradient", "stop_gradient",
           "value_and_gradients_function"]
