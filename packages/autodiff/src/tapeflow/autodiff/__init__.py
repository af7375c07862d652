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

from tapeflow.core.ops import stop_gradient  # noqa: F401  (core's op; its gradient is None by definition)

from .registry import GRADIENTS, defgrad  # noqa: F401
from .tape import GradientTape, UnconnectedGradients, pause_all, recording  # noqa: F401
from .custom import custom_gradient, record, register_gradient  # noqa: F401
from .functions import (gradients_function, implicit_gradients, implicit_value_and_gradients,  # noqa: F401
                        value_and_gradients_function)
from .check import GradientCheck, check_gradients  # noqa: F401
from . import grads  # noqa: F401,E402  (registers every op's rule)

__all__ = ["GradientTape", "UnconnectedGradients", "gradients_function", "value_and_gradients_function",
           "implicit_gradients", "implicit_value_and_gradients", "custom_gradient", "register_gradient", "record",
           "stop_gradient", "check_gradients", "GradientCheck", "recording", "pause_all", "GRADIENTS", "defgrad"]
