"""Linear algebra beyond matmul."""
from __future__ import annotations

__all__: list = []
