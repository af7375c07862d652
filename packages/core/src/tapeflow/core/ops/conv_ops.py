"""Convolution and pooling (NHWC)."""
from __future__ import annotations

__all__: list = []
