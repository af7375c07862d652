"""The gradient registry: one rule per differentiable core op.

A rule receives the upstream gradient ``g`` (a tuple of them for ops with
several outputs; zeros stand in for outputs nothing depends on), the op's
output ``ans``, its inputs, and its attributes as keywords; it returns one
gradient per input (``None`` for an input with no gradient).  Rules use tapeflow
ops only, so they differentiate again.  The tape sums each gradient back to its
input's shape, so rules ignore broadcasting.

>>> from tapeflow.autodiff.registry import defgrad
>>> @defgrad("my_square")
... def _(g, ans, x):
...     return (g * 2 * x,)
"""
from __future__ import annotations

GRADIENTS: dict = {}


def defgrad(op: str, fn=None):
    """Register the gradient rule of core op ``op`` (usable as a decorator)."""
    def deco(f):
        GRADIENTS[op] = f
        return f

    return deco(fn) if fn is not None else deco


def get(op: str):
    return GRADIENTS.get(op)
