"""Neural-network ops: softmax, cross-entropies, bias_add, dropout, moments, normalisation, conv, pooling."""
from __future__ import annotations

from .math_ops import elu, gelu, leaky_relu, log_sigmoid, relu, relu6, selu, sigmoid, silu, softplus, softsign, tanh  # noqa: F401

__all__ = ["elu", "gelu", "leaky_relu", "log_sigmoid", "relu", "relu6", "selu", "sigmoid", "silu", "softplus",
           "softsign", "tanh"]
