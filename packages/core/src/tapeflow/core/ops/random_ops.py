"""Random ops (Philox 4x32-10): the same seed gives the same numbers on every backend."""
from __future__ import annotations

__all__: list = []
