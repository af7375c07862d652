"""Specs of the ops that exist for differentiation (stop_gradient)."""
from __future__ import annotations

from opspec import ALL, HALF, SHAPES, Spec, uniform


def _sample(rng, dtype):
    return [([uniform(rng, shape, dtype)], {}) for shape in SHAPES]


SPECS = [
    # the value passes through unchanged in every dtype; no gradient by definition
    Spec("stop_gradient", lambda x: x, _sample, dtypes=ALL + HALF, exact=True, grad=False),
]
