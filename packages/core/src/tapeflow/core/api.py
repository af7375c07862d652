"""The TensorFlow-style namespaces of the facade: tf.math, tf.linalg, tf.strings, tf.random,
tf.config, tf.debugging, and the lazy loading of upper packages."""
from __future__ import annotations

import importlib
import sys
import types

from . import ops as _ops
from .dispatch import REGISTRY


def _namespace(name: str, doc: str, names: dict) -> types.ModuleType:
    mod = types.ModuleType(f"tapeflow.{name}", doc)
    mod.__dict__.update(names)
    mod.__all__ = sorted(names)
    sys.modules.setdefault(f"tapeflow.{name}", mod)
    return mod


_MATH_EXTRA = ("is_nan", "is_inf", "is_finite", "real_div", "floormod", "div_no_nan", "truediv", "divide",
               "divide_no_nan", "digamma", "lgamma", "erf", "erfc", "log_sigmoid", "squared_difference", "reduce_sum",
               "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
               "argmax", "argmin", "add_n", "softplus", "sigmoid", "tanh")
math = _namespace("math", "Element-wise math and reductions (tf.math).",
                  {n: getattr(_ops, n) for n in dir(_ops) if n in REGISTRY or n in _MATH_EXTRA})
math.log = getattr(_ops, "log")
math.mod = getattr(_ops, "floormod")
math.floordiv = getattr(_ops, "floordiv")
math.abs = getattr(_ops, "abs")
math.pow = getattr(_ops, "pow")
math.round = getattr(_ops, "round")

linalg = _namespace("linalg", "Linear algebra (tf.linalg).",
                    {"matmul": _ops.matmul, **{n: getattr(_ops, n) for n in _ops.linalg_ops.__all__}})

strings = _namespace("strings", "String ops (tf.strings): host computations over byte strings.",
                     dict(_ops.string_ops.STRINGS_API))

from .ops import image_ops as _image_ops  # noqa: E402
from .ops import fft_ops as _fft_ops  # noqa: E402

signal = _namespace("signal", "Signal processing (tf.signal): FFTs (csrc/fft.c), windows, frames, the STFT.",
                    dict(_fft_ops.SIGNAL_API))

image = _namespace("image", "Image ops (tf.image): resizing, crops, flips, colour, augmentation, metrics.",
                   dict(_image_ops.IMAGE_API))

from . import config as config  # noqa: E402
from . import debugging as debugging  # noqa: E402
from . import random as random  # noqa: E402
from . import io as io  # noqa: E402  (tf.io: importing it registers its ops, as the registry walks need)


#: core's own lazily imported namespaces, beside the facade's table (tapeflow/__init__.py's _LAZY)
CORE_LAZY = {"saved_model": ("tapeflow.core.saved_model", None, "tapeflow-core")}


def _lazy_attr(namespace: dict, table: dict, name: str):
    """Resolve a facade attribute from an upper package, or say how to install it."""
    try:
        modname, attr, dist = table[name] if name in table else CORE_LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tapeflow' has no attribute {name!r}") from None
    try:
        mod = importlib.import_module(modname)
    except ModuleNotFoundError as e:
        if e.name and (e.name == modname or modname.startswith(e.name + ".")):
            if name in ("nn",):
                from . import nn_fallback

                return nn_fallback.module(dist)
            raise ImportError(f"tf.{name} needs the {dist} package, which is not installed: "
                              f"pip install {dist}") from None
        raise
    value = mod if attr is None else getattr(mod, attr)
    if name != "print":  # cached, except tf.print: a module global `print` would shadow the builtin
        namespace[name] = value
    return value
