"""``tf.keras.backend``: session-wide settings (layer name counters, the fuzz factor, the float type).

>>> import tapeflow as tf
>>> tf.keras.backend.epsilon(), tf.keras.backend.floatx()
(1e-07, 'float32')
"""
from __future__ import annotations

from .layers.base import clear_session  # noqa: F401


def epsilon() -> float:
    """The fuzz factor losses and metrics use to avoid log(0) and division by zero (1e-7).

    >>> import tapeflow as tf
    >>> tf.keras.backend.epsilon()
    1e-07
    """
    return 1e-7


def floatx() -> str:
    """The default float type of layers' weights: ``"float32"``.

    >>> import tapeflow as tf
    >>> tf.keras.backend.floatx()
    'float32'
    """
    return "float32"
