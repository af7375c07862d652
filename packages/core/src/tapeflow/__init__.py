"""tapeflow: an eager-execution tensor framework.

``import tapeflow as tf`` gives core's names at once (tensors, ops, devices,
variables) and the upper packages' names on first use (``tf.GradientTape``
from tapeflow-autodiff, ``tf.nn.Dense`` from tapeflow-nn, ``tf.data`` from
tapeflow-data), so importing is quick and a missing package says how to install it.

>>> import tapeflow as tf
>>> print(tf.matmul([[2.]], [[2.]]))
Tensor([[4.]], shape=(1, 1), dtype=float32)
"""
# the tapeflow namespace spans several distributions (kernels, core, autodiff, nn, data),
# each of which may be installed on its own, regularly or in editable mode
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from tapeflow.core import *  # noqa: E402,F401,F403
from tapeflow.core import __version__, errors, dtypes  # noqa: E402,F401
from tapeflow.core.api import (config, debugging, image, linalg, math, random, strings, _lazy_attr)  # noqa: E402,F401

newaxis = None  # tf.newaxis: x[:, tf.newaxis] inserts an axis of size 1

# names of upper packages: attribute -> (module, attribute or None for the module itself, distribution)
_LAZY = {
    "print": ("tapeflow.core.printing", "print_", "tapeflow-core"),
    "TensorArray": ("tapeflow.core.tensor_array", "TensorArray", "tapeflow-core"),
    "io": ("tapeflow.core.io", None, "tapeflow-core"),
    "ragged": ("tapeflow.core.ragged", None, "tapeflow-core"),
    "RaggedTensor": ("tapeflow.core.ragged", "RaggedTensor", "tapeflow-core"),
    "sparse": ("tapeflow.core.sparse", None, "tapeflow-core"),
    "SparseTensor": ("tapeflow.core.sparse", "SparseTensor", "tapeflow-core"),
    "GradientTape": ("tapeflow.autodiff", "GradientTape", "tapeflow-autodiff"),
    "UnconnectedGradients": ("tapeflow.autodiff", "UnconnectedGradients", "tapeflow-autodiff"),
    "gradients_function": ("tapeflow.autodiff", "gradients_function", "tapeflow-autodiff"),
    "value_and_gradients_function": ("tapeflow.autodiff", "value_and_gradients_function", "tapeflow-autodiff"),
    "implicit_gradients": ("tapeflow.autodiff", "implicit_gradients", "tapeflow-autodiff"),
    "implicit_value_and_gradients": ("tapeflow.autodiff", "implicit_value_and_gradients", "tapeflow-autodiff"),
    "custom_gradient": ("tapeflow.autodiff", "custom_gradient", "tapeflow-autodiff"),
    "register_gradient": ("tapeflow.autodiff", "register_gradient", "tapeflow-autodiff"),
    "autodiff": ("tapeflow.autodiff", None, "tapeflow-autodiff"),
    "experimental": ("tapeflow.experimental", None, "tapeflow-core"),
    "vectorized_map": ("tapeflow.autodiff.vectorize", "vectorized_map", "tapeflow-autodiff"),
    "nn": ("tapeflow.nn", None, "tapeflow-nn"),
    "keras": ("tapeflow.keras", None, "tapeflow-nn"),
    "optimizers": ("tapeflow.nn.optimizers", None, "tapeflow-nn"),
    "losses": ("tapeflow.nn.losses", None, "tapeflow-nn"),
    "metrics": ("tapeflow.nn.metrics", None, "tapeflow-nn"),
    "initializers": ("tapeflow.nn.initializers", None, "tapeflow-nn"),
    "train": ("tapeflow.nn.train", None, "tapeflow-nn"),
    "summary": ("tapeflow.nn.summary", None, "tapeflow-nn"),
    "data": ("tapeflow.data", None, "tapeflow-data"),
    "RaggedTensorSpec": ("tapeflow.data._ragged", "RaggedTensorSpec", "tapeflow-data"),
    "distribute": ("tapeflow.distribute", None, "tapeflow-distribute"),
}


def __getattr__(name):
    return _lazy_attr(globals(), _LAZY, name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
