"""tf.experimental: ``tf.experimental.numpy`` (the NumPy API over tapeflow tensors) and ``tf.experimental.dlpack``
(zero-copy exchange with NumPy, PyTorch, JAX), loaded on first use.

>>> import tapeflow as tf
>>> tf.experimental.numpy.ones([2]).dtype
tf.float64
"""
from __future__ import annotations

import importlib

__all__ = ["dlpack", "numpy"]


def __getattr__(name):
    if name == "numpy":
        return importlib.import_module(f"{__name__}.numpy")
    if name == "dlpack":
        return importlib.import_module("tapeflow.core.dlpack")
    raise AttributeError(f"module 'tapeflow.experimental' has no attribute {name!r}")
