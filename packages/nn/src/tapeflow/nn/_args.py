"""Checks of layers' and optimizers' constructor arguments, shared so every class says the same thing.

A wrong Python type is a ``TypeError``; a value of the right type outside what is allowed is an
``InvalidArgumentError`` (a ``ValueError``).  Both name the class and what was allowed, e.g.
``Dense: units must be a positive int, got '3' (str)``.  Nothing is coerced
silently: ``Dense("3")`` and ``Adam(learning_rate="x")`` fail where TensorFlow's fail.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from tapeflow.core.errors import InvalidArgumentError


def _owner(owner) -> str:
    return owner if isinstance(owner, str) else type(owner).__name__


def _type_error(owner, name, value, allowed):
    return TypeError(f"{_owner(owner)}: {name} must be {allowed}, got {value!r} ({type(value).__name__})")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _bounds(lo, hi, lo_open=False, hi_open=False) -> str:
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {hi}")
    return " and ".join(parts)


def integer(value, name, owner, lo=None, hi=None, none_ok=False):
    """``value`` as an int (a Python or NumPy integer; not a bool, float or string), in [lo, hi]."""
    if value is None and none_ok:
        return None
    if lo == 1 and hi is None:
        allowed = "a positive int"
    else:
        allowed = "an int" + (f" {_bounds(lo, hi)}" if lo is not None or hi is not None else "")
    allowed += " or None" if none_ok else ""
    if not _is_int(value):
        raise _type_error(owner, name, value, allowed)
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise InvalidArgumentError(f"{name} must be {allowed}, got {v}", _owner(owner))
    return v


def number(value, name, owner, lo=None, hi=None, lo_open=False, hi_open=False, none_ok=False, allowed=None):
    """``value`` as a float (any real number but a bool), in the given bounds."""
    if value is None and none_ok:
        return None
    rng = _bounds(lo, hi, lo_open, hi_open)
    allowed = allowed or "a float" + (f" {rng}" if rng else "") + (" or None" if none_ok else "")
    if not _is_number(value):
        raise _type_error(owner, name, value, allowed)
    v = float(value)
    bad = math.isnan(v) or (lo is not None and (v <= lo if lo_open else v < lo)) or \
        (hi is not None and (v >= hi if hi_open else v > hi))
    if bad:
        raise InvalidArgumentError(f"{name} must be {allowed}, got {v}", _owner(owner))
    return v


def boolean(value, name, owner):
    """``value`` as a bool (Python or NumPy bools only: ``"no"`` is not False)."""
    if not isinstance(value, (bool, np.bool_)):
        raise _type_error(owner, name, value, "a bool")
    return bool(value)


def choice(value, name, owner, allowed, lower=True):
    """``value``, a string among ``allowed`` (compared in lower case unless ``lower=False``)."""
    names = ", ".join(repr(a) for a in allowed)
    if not isinstance(value, str):
        raise _type_error(owner, name, value, f"one of {names}")
    v = value.lower() if lower else value
    if v not in allowed:
        raise InvalidArgumentError(f"{name} must be one of {names}, got {value!r}", _owner(owner))
    return v


def int_tuple(value, name, owner, n, lo=1):
    """An int, or a tuple/list of ``n`` ints, each >= lo, as a tuple of ``n`` ints."""
    allowed = f"an int or a tuple of {n} ints >= {lo}"
    if _is_int(value):
        items = (value,) * n
    elif isinstance(value, (tuple, list)) and len(value) == n and all(_is_int(v) for v in value):
        items = tuple(value)
    elif isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        raise InvalidArgumentError(f"{name} must be {allowed}, got {tuple(value)!r}", _owner(owner))
    else:
        raise _type_error(owner, name, value, allowed)
    items = tuple(int(v) for v in items)
    if any(v < lo for v in items):
        raise InvalidArgumentError(f"{name} must be {allowed}, got {items!r}", _owner(owner))
    return items


def resolved(get, value, name, owner):
    """``get(value)`` (an activation, initializer or regularizer lookup), its errors naming the class."""
    try:
        return get(value)
    except TypeError as e:
        raise TypeError(f"{_owner(owner)}: {name}: {e}") from None
    except ValueError as e:
        raise InvalidArgumentError(f"{name}: {e}", _owner(owner)) from None


def lookups(owner, **args):
    """Check initializer, regularizer and constraint arguments when the layer is made (not at build)."""
    from . import initializers, regularizers

    for name, value in args.items():
        if value is None:
            continue
        if name.endswith("initializer"):
            resolved(initializers.get, value, name, owner)
        elif name.endswith("regularizer"):
            resolved(regularizers.get, value, name, owner)
        elif not callable(value):
            raise _type_error(owner, name, value, "a callable or None")
