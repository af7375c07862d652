"""tf.nn when tapeflow-nn is not installed: core's nn ops, and a clear message for the rest."""
from __future__ import annotations

import types

from . import ops as _ops


def module(dist: str) -> types.ModuleType:
    names = {n: getattr(_ops, n) for n in _ops.nn_ops.__all__ + _ops.conv_ops.__all__}

    mod = types.ModuleType("tapeflow.nn", "core's nn ops (tapeflow-nn is not installed)")
    mod.__dict__.update(names)

    def __getattr__(name):
        raise AttributeError(f"tf.nn.{name} needs the {dist} package, which is not installed: pip install {dist}")

    mod.__getattr__ = __getattr__
    return mod
