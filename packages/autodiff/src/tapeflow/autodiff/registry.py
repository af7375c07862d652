"""The gradient registry: one rule per differentiable core op.

A rule receives the upstream gradient ``g`` (a tuple of them for ops with
several outputs; zeros stand in for outputs nothing depends on), the op's
output ``ans``, its inputs, and its attributes as keywords; it returns one
gradient per input (``None`` for an input with no gradient).  Rules use tapeflow
ops only, so they differentiate again.  The tape sums each gradient back to its
input's shape, so rules ignore broadcasting.  Ops that core declares
``nondiff`` need no rule: no gradient flows through them.

>>> from tapeflow.autodiff.registry import defgrad
>>> @defgrad("my_square")
... def _(g, ans, x):
...     return (g * 2 * x,)
"""
from __future__ import annotations

GRADIENTS: dict = {}


def defgrad(op: str, fn=None):
    """Register the gradient rule of core op ``op`` (usable as a decorator).

    >>> from tapeflow.autodiff.registry import defgrad, get
    >>> _ = defgrad("my_negate", lambda g, ans, x: (-g,))
    >>> get("my_negate") is not None
    True
    """
    def deco(f):
        GRADIENTS[op] = f
        return f

    return deco(fn) if fn is not None else deco


def get(op: str):
    """The rule registered for ``op``, or None.

    >>> from tapeflow.autodiff.registry import get
    >>> get("no such op") is None
    True
    """
    return GRADIENTS.get(op)


def missing() -> list:
    """Core's primitive ops that are neither differentiable by a rule nor declared ``nondiff``.

    >>> import tapeflow.autodiff
    >>> from tapeflow.autodiff.registry import missing
    >>> isinstance(missing(), list)
    True
    """
    from tapeflow.core.dispatch import REGISTRY

    return sorted(name for name, d in REGISTRY.items()
                  if d.kind == "primitive" and not d.nondiff and name not in GRADIENTS)
