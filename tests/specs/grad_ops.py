"""Specs of the ops that exist for differentiation (stop_gradient)."""
from __future__ import annotations

from opspec import ALL, HALF, SHAPES, Spec, uniform


def _sample(rng, dtype):
    return [([uniform(rng, shape, dtype)], {}) for shape in SHAPES]


SPECS = [
    # the value passes through unchanged in every dtype; no gradient by definition
    Spec("stop_gradient", lambda x: x, _sample, dtypes=ALL + HALF, exact=True, grad=False),
]


def _copy(tf, x):
    from tapeflow.core.ops.grad_ops import copy_to_device

    return copy_to_device(tf.constant(x), "cpu:0")


# a copy to the CPU (from whichever device the test runs on) of every dtype; the gradient flows back
SPECS.append(Spec("copy_to_device", lambda x: x, _sample, dtypes=ALL + HALF, fn=_copy, exact=True))
