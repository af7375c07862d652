"""Flatten and rebuild nested structures (lists, tuples, namedtuples, dicts) of tensors and variables."""
from __future__ import annotations


def flatten(structure) -> list:
    """The leaves of ``structure`` in a fixed order (dicts by sorted key, as TensorFlow does).

    >>> flatten({"b": [1, 2], "a": (3,)})
    [3, 1, 2]
    """
    out: list = []
    _flatten(structure, out)
    return out


def _flatten(s, out):
    if isinstance(s, dict):
        for k in _sorted_keys(s):
            _flatten(s[k], out)
    elif isinstance(s, (list, tuple)):
        for v in s:
            _flatten(v, out)
    else:
        out.append(s)


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:  # keys of mixed types keep their insertion order
        return list(d)


def pack_as(structure, leaves):
    """``structure`` with its leaves replaced, in :func:`flatten` order, by ``leaves``.

    >>> pack_as({"b": [1, 2], "a": (3,)}, ["x", "y", "z"])
    {'b': ['y', 'z'], 'a': ('x',)}
    """
    it = iter(leaves)
    return _pack(structure, it)


def _pack(s, it):
    if isinstance(s, dict):
        new = {k: _pack(s[k], it) for k in _sorted_keys(s)}
        return type(s)((k, new[k]) for k in s) if type(s) is not dict else {k: new[k] for k in s}
    if isinstance(s, tuple) and hasattr(s, "_fields"):  # namedtuple
        return type(s)(*[_pack(v, it) for v in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_pack(v, it) for v in s)
    return next(it)


def is_nested(s) -> bool:
    return isinstance(s, (list, tuple, dict))
