"""tapeflow.data: tf.data-style input pipelines over tapeflow tensors (``tf.data`` on the facade).

Sources (``Dataset.from_tensor_slices``, ``from_tensors``, ``range``, ``from_generator``, ``zip``,
``list_files``, :class:`TextLineDataset`, :class:`TFRecordDataset`, :class:`IDXDataset`), TensorFlow's transformations
(``map``, ``filter``, ``batch``, ``padded_batch``, ``unbatch``, ``shuffle``, ``repeat``, ``take``,
``skip``, ``shard``, ``prefetch``, ``cache``, ``interleave``, ``flat_map``, ``enumerate``,
``concatenate``, ``reduce``, ``apply``) with the same semantics, plain ``for x, y in ds:``
iteration, and loaders in :mod:`tapeflow.data.datasets` (MNIST, Fashion-MNIST, scikit-learn's
digits).

>>> import tapeflow as tf
>>> ds = tf.data.Dataset.range(8).shuffle(8, seed=0).batch(4).prefetch(tf.data.AUTOTUNE)
>>> sorted(int(v) for b in ds for v in b)
[0, 1, 2, 3, 4, 5, 6, 7]
"""
from __future__ import annotations

import importlib

from . import experimental
from ._structure import TensorSpec, string
from ._windows import DatasetSpec
from .dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    Iterator,
    OptimizationOptions,
    Options,
    ThreadingOptions,
)
from ._readers_more import TFRecordDataset
from .readers import IDXDataset, TextLineDataset, read_idx, write_idx

__version__ = "0.1.0"

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "DatasetSpec",
    "IDXDataset",
    "Iterator",
    "OptimizationOptions",
    "Options",
    "TFRecordDataset",
    "TensorSpec",
    "TextLineDataset",
    "ThreadingOptions",
    "datasets",
    "experimental",
    "read_idx",
    "string",
    "write_idx",
]


def __getattr__(name):
    if name == "datasets":  # loaders import urllib and hashlib: only on first use
        mod = importlib.import_module(".datasets", __name__)
        globals()["datasets"] = mod
        return mod
    raise AttributeError(f"module 'tapeflow.data' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"datasets"})
