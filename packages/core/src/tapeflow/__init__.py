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

from typing import TYPE_CHECKING  # noqa: E402

from tapeflow.core import *  # noqa: E402,F401,F403
# ``name as name``: re-exported for type checkers (PEP 484), as the names below
from tapeflow.core import __version__ as __version__, errors as errors, dtypes as dtypes  # noqa: E402,F401
from tapeflow.core.api import (config as config, debugging as debugging, image as image,  # noqa: E402,F401
                               linalg as linalg, math as math, random as random, signal as signal,
                               strings as strings, _lazy_attr)

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
    "recompute_grad": ("tapeflow.autodiff.everyday", "recompute_grad", "tapeflow-autodiff"),
    "grad_pass_through": ("tapeflow.autodiff.everyday", "grad_pass_through", "tapeflow-autodiff"),
    "gradients": ("tapeflow.autodiff.everyday", "gradients", "tapeflow-autodiff"),
    "hessians": ("tapeflow.autodiff.everyday", "hessians", "tapeflow-autodiff"),
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


if TYPE_CHECKING:  # the lazily loaded names, declared for type checkers (nothing is imported at run time)
    from tapeflow.core.printing import print_ as print  # noqa: A004
    from tapeflow.core.tensor_array import TensorArray as TensorArray
    from tapeflow.core import io as io
    from tapeflow.core import ragged as ragged
    from tapeflow.core.ragged import RaggedTensor as RaggedTensor
    from tapeflow.core import sparse as sparse
    from tapeflow.core.sparse import SparseTensor as SparseTensor
    from tapeflow.autodiff import GradientTape as GradientTape
    from tapeflow.autodiff import UnconnectedGradients as UnconnectedGradients
    from tapeflow.autodiff import gradients_function as gradients_function
    from tapeflow.autodiff import value_and_gradients_function as value_and_gradients_function
    from tapeflow.autodiff import implicit_gradients as implicit_gradients
    from tapeflow.autodiff import implicit_value_and_gradients as implicit_value_and_gradients
    from tapeflow.autodiff import custom_gradient as custom_gradient
    from tapeflow.autodiff import register_gradient as register_gradient
    from tapeflow import autodiff as autodiff
    from tapeflow.autodiff.everyday import recompute_grad as recompute_grad
    from tapeflow.autodiff.everyday import grad_pass_through as grad_pass_through
    from tapeflow.autodiff.everyday import gradients as gradients
    from tapeflow.autodiff.everyday import hessians as hessians
    from tapeflow import experimental as experimental
    from tapeflow.autodiff.vectorize import vectorized_map as vectorized_map
    from tapeflow import nn as nn
    from tapeflow import keras as keras
    from tapeflow.nn import optimizers as optimizers
    from tapeflow.nn import losses as losses
    from tapeflow.nn import metrics as metrics
    from tapeflow.nn import initializers as initializers
    from tapeflow.nn import train as train
    from tapeflow.nn import summary as summary
    from tapeflow import data as data
    from tapeflow.data._ragged import RaggedTensorSpec as RaggedTensorSpec
    from tapeflow import distribute as distribute


def __getattr__(name):
    return _lazy_attr(globals(), _LAZY, name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
