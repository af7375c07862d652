"""The gradient registry: one rule per differentiable core op.

A rule receives the upstream gradient ``g`` (a tuple of them for ops with
several outputs; zeros stand in for outputs nothing depends on), the op's
output ``ans``, its inputs, and its attributes as keywords; it returns one
gradient per input (``None`` for an input with no gradient).  Rules use tapeflow
ops only, so they differentiate again.  The tape sums each gradient back to its
input's shape, so rules ignore broadcasting.  Ops that core declares
``nondiff`` need no rule: no gradient flows through them.

Optionally, an op with several inputs may give one function per input instead
(``defgrad("multiply", lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)``):
``GRADIENTS`` still holds a rule returning the tuple, and the tape calls only the
functions of inputs that lead to a source (a constant factor costs nothing).

>>> from tapeflow.autodiff.registry import defgrad
>>> @defgrad("my_square")
... def _(g, ans, x):
...     return (g * 2 * x,)
"""
from __future__ import annotations

GRADIENTS: dict = {}
PER_INPUT: dict = {}  # op -> one function per input, for rules given that way


def defgrad(op: str, fn=None, *per_input):
    """Register the gradient rule of core op ``op`` (usable as a decorator).

    With several functions, they are per-input rules, each returning the
    gradient of one input (or None).

    >>> from tapeflow.autodiff.registry import defgrad, get
    >>> _ = defgrad("my_negate", lambda g, ans, x: (-g,))
    >>> _ = defgrad("my_mul", lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
    >>> get("my_negate") is not None, get("my_mul") is not None
    (True, True)
    """
    if per_input:
        fns = (fn,) + per_input

        def rule(g, ans, *inputs, **attrs):
            return tuple(f(g, ans, *inputs, **attrs) for f in fns)

        rule.__name__ = rule.__qualname__ = f"{op}_grad"
        GRADIENTS[op] = rule
        PER_INPUT[op] = fns
        return rule

    def deco(f):
        GRADIENTS[op] = f
        PER_INPUT.pop(op, None)
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
