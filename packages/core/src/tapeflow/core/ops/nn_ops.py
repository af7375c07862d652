"""Neural-network ops: activations, softmax, cross-entropies, bias_add, dropout, moments, normalisation."""
from __future__ import annotations

from .math_ops import (elu, gelu, leaky_relu, log_sigmoid, relu, relu6, selu, sigmoid, silu, softplus,  # noqa: F401
                       softsign, tanh)

__all__ = ["elu", "gelu", "leaky_relu", "log_sigmoid", "relu", "relu6", "selu", "sigmoid", "silu", "softplus",
           "softsign", "tanh"]
