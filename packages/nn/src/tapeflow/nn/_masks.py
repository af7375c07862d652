"""Keras masks travel with tensors: a side table from a tensor to its mask.

Keras sets ``tensor._keras_mask``; tapeflow's tensors have fixed slots, so the mask of a
tensor lives here, keyed by the tensor's identity and dropped when the tensor dies.  Layers
read the mask of their input in ``Layer.__call__`` and attach the mask of their output;
losses read the mask of ``y_pred``.  With no masked tensor alive the table is empty and a
lookup costs one truth test.
"""
from __future__ import annotations

import weakref

_MASKS: dict = {}  # id(tensor) -> (weak reference to the tensor, mask)


def set_mask(t, mask):
    """Attach ``mask`` (a bool tensor, or None to clear) to tensor ``t``."""
    key = id(t)
    if mask is None:
        _MASKS.pop(key, None)
        return

    def drop(ref, key=key):
        e = _MASKS.get(key)
        if e is not None and e[0] is ref:
            del _MASKS[key]

    _MASKS[key] = (weakref.ref(t, drop), mask)


def get_mask(t):
    """The mask attached to ``t`` (a tensor, or a list/tuple of them: a list of masks), or None."""
    if not _MASKS:
        return None
    if isinstance(t, (list, tuple)):
        masks = [get_mask(e) for e in t]
        return None if all(m is None for m in masks) else masks
    e = _MASKS.get(id(t))
    if e is None or e[0]() is not t:
        return None
    return e[1]
