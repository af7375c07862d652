"""``tf.nest``: nested structures of lists, tuples, namedtuples and dicts, as TensorFlow walks them.

Leaves are everything else (tensors, variables, numbers, ``None``).  Dicts are walked in sorted key
order, as TensorFlow does, so two dicts with the same keys flatten alike whatever their insertion order.

>>> import tapeflow as tf
>>> tf.nest.flatten({"b": [1, 2], "a": (3,)})
[3, 1, 2]
>>> tf.nest.map_structure(lambda x: x * 10, {"b": [1, 2], "a": (3,)})
{'b': [10, 20], 'a': (30,)}
"""
from __future__ import annotations

import collections.abc as _abc

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_nested(structure) -> bool:
    """Whether ``structure`` is a list, tuple, namedtuple or dict (not a leaf).

    >>> import tapeflow as tf
    >>> tf.nest.is_nested([1]), tf.nest.is_nested(1), tf.nest.is_nested("ab")
    (True, False, False)
    """
    return isinstance(structure, (list, tuple, dict, _abc.Mapping))


def _keys(d):
    try:
        return sorted(d)
    except TypeError:  # keys of mixed types: TensorFlow's error
        raise TypeError(f"nest only supports dicts with sortable keys; got keys {list(d)!r}") from None


def _children(s):
    if isinstance(s, (dict, _abc.Mapping)):
        return [s[k] for k in _keys(s)]
    return list(s)


def flatten(structure, expand_composites=False) -> list:
    """The leaves of ``structure``, depth first (dicts by sorted key); ``expand_composites`` opens composite
    values (a TensorArray in a graph) into their tensors.

    >>> import tapeflow as tf
    >>> tf.nest.flatten([1, (2, [3]), {"x": 4}])
    [1, 2, 3, 4]
    >>> tf.nest.flatten(None)
    [None]
    """
    out: list = []
    _flatten(structure, out, expand_composites)
    return out


def _composite(s) -> bool:
    """A composite value (a graph TensorArray) that ``expand_composites=True`` opens into its tensors."""
    return hasattr(type(s), "_tf_flat")


def _flatten(s, out, expand=False):
    if is_nested(s):
        for c in _children(s):
            _flatten(c, out, expand)
    elif expand and _composite(s):
        out.extend(s._tf_flat())
    else:
        out.append(s)


def _rebuild(s, children):
    if isinstance(s, (dict, _abc.Mapping)):
        made = dict(zip(_keys(s), children))
        return type(s)((k, made[k]) for k in s) if type(s) is not dict else {k: made[k] for k in s}
    if _is_namedtuple(s):
        return type(s)(*children)
    if isinstance(s, tuple):
        return tuple(children) if type(s) is tuple else type(s)(children)
    return list(children) if type(s) is list else type(s)(children)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """``flat_sequence``'s leaves put back into the shape of ``structure``.

    >>> import tapeflow as tf
    >>> tf.nest.pack_sequence_as({"a": [0, 0], "b": 0}, [1, 2, 3])
    {'a': [1, 2], 'b': 3}
    """
    flat = list(flat_sequence)
    n = len(flatten(structure, expand_composites))
    if len(flat) != n:
        raise ValueError(f"pack_sequence_as: the structure has {n} leaves but flat_sequence has {len(flat)} "
                         f"elements; structure: {structure!r}")
    it = iter(flat)
    return _pack(structure, it, expand_composites)


def _pack(s, it, expand=False):
    if is_nested(s):
        return _rebuild(s, [_pack(c, it, expand) for c in _children(s)])
    if expand and _composite(s):
        return s._tf_pack([next(it) for _ in s._tf_flat()])
    return next(it)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raise ``ValueError`` (or ``TypeError`` for different sequence types) unless both nest alike.

    >>> import tapeflow as tf
    >>> tf.nest.assert_same_structure([1, (2, 3)], [4, (5, 6)])
    >>> try:
    ...     tf.nest.assert_same_structure([1, 2], [1, [2]])
    ... except ValueError as e:
    ...     print("ValueError")
    ValueError
    """
    _same(nest1, nest2, check_types, "")


def _same(a, b, check_types, path):
    na, nb = is_nested(a), is_nested(b)
    where = f" at {path}" if path else ""
    if na != nb:
        raise ValueError(f"the two structures don't have the same nested structure{where}: "
                         f"{a!r} is {'a sequence' if na else 'a leaf'}, {b!r} is {'a sequence' if nb else 'a leaf'}")
    if not na:
        return
    if check_types and type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        raise TypeError(f"the two structures don't have the same sequence type{where}: "
                        f"{type(a).__name__} and {type(b).__name__}")
    if isinstance(a, (dict, _abc.Mapping)):
        if _keys(a) != _keys(b):
            raise ValueError(f"the two dicts don't have the same keys{where}: {_keys(a)} and {_keys(b)}")
        for k in _keys(a):
            _same(a[k], b[k], check_types, f"{path}[{k!r}]")
        return
    if len(a) != len(b):
        raise ValueError(f"the two structures don't have the same number of elements{where}: "
                         f"{len(a)} and {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        _same(x, y, check_types, f"{path}[{i}]")


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """``func`` applied leaf by leaf to one or more structures of the same shape.

    >>> import tapeflow as tf
    >>> tf.nest.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    if not structure:
        raise ValueError("map_structure needs at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*flats)])
