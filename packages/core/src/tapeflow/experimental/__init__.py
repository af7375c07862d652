"""tf.experimental: ``tf.experimental.numpy`` (the NumPy API over tapeflow tensors), loaded on first use.

>>> import tapeflow as tf
>>> tf.experimental.numpy.ones([2]).dtype
tf.float64
"""
from __future__ import annotations

import importlib

__all__ = ["numpy"]


def __getattr__(name):
    if name == "numpy":
        return importlib.import_module(f"{__name__}.numpy")
    raise AttributeError(f"module 'tapeflow.experimental' has no attribute {name!r}")
