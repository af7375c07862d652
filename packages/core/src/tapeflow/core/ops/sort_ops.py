"""Scans and sorting: cumsum, cumprod, sort, argsort, top_k (the C kernels' index_sort.c).

Scans compute float16/bfloat16 in float32; sorting is stable and puts NaN above every number."""
from __future__ import annotations

import collections

from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    kernel_failed,
    register,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ._shape import (
    _NUMERIC,
    _back_to,
    _contig_strides,
    _half_to_f32,
    _int_arg,
    _names,
    _place,
    _prod,
    _record,
    strided_copy,
)

# ---- scans ----------------------------------------------------------------------------

def _scan(name, tf_name, code, x, axis, exclusive, reverse):
    x = to_tensor(x, tf_name)
    if x._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"x has dtype {x._dtype.name}; allowed: {_names(_NUMERIC)}", tf_name)
    nd = len(x._shape)
    a = _int_arg(axis, tf_name, "axis")
    if not -nd <= a < nd:
        raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {nd}; allowed: [{-nd}, {nd})",
                                   tf_name)
    a %= nd
    dev, x = _place(x)
    src = _half_to_f32(x)
    out = alloc(x._shape, src._dtype, dev)
    st = dev.backend.cumulative(code, src._dtype.code, src._h, out._h, _prod(x._shape[:a]), x._shape[a],
                                _prod(x._shape[a + 1:]), int(bool(exclusive)), int(bool(reverse)))
    if st:
        kernel_failed(st, "cumulative", tf_name)
    out = _back_to(out, x._dtype)
    _record(name, (x,), out, {"axis": a, "exclusive": bool(exclusive), "reverse": bool(reverse)})
    return out


@register("cumsum", "Cumsum")
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sum along ``axis``: out[i] = x[0] + ... + x[i] (exclusive: up to x[i-1]; reverse: from the end).

    >>> import tapeflow as tf
    >>> tf.cumsum(tf.constant([1, 2, 3])).numpy().tolist(), tf.cumsum([1, 2, 3], exclusive=True).numpy().tolist()
    ([1, 3, 6], [0, 1, 3])
    """
    return _scan("cumsum", "Cumsum", 0, x, axis, exclusive, reverse)


@register("cumprod", "Cumprod")
def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running product along ``axis``: out[i] = x[0] * ... * x[i] (exclusive, reverse as in cumsum).

    >>> import tapeflow as tf
    >>> tf.math.cumprod(tf.constant([1, 2, 3]), reverse=True).numpy().tolist()
    [6, 6, 3]
    """
    return _scan("cumprod", "Cumprod", 1, x, axis, exclusive, reverse)


# ---- sorting ---------------------------------------------------------------------------

def _direction(direction, op):
    d = str(direction).upper()
    if d not in ("ASCENDING", "DESCENDING"):
        raise InvalidArgumentError(f"direction = {direction!r}; allowed: 'ASCENDING', 'DESCENDING'", op)
    return d


def _sort_last(x, ax, want_values, want_indices, descending, idx_dtype, op):
    """Sort along ``ax`` through the row kernel (moving ``ax`` last and back when needed)."""
    nd = len(x._shape)
    dev = x._dev
    if ax != nd - 1:
        perm = [i for i in range(nd) if i != ax] + [ax]
        strides = _contig_strides(x._shape)
        src = strided_copy(x, tuple(x._shape[p] for p in perm), 0, [strides[p] for p in perm], op=op)
    else:
        perm, src = None, x
    n = src._shape[-1]
    be = dev.backend
    vals = alloc(src._shape, x._dtype, dev) if want_values else None
    idx = alloc(src._shape, idx_dtype, dev) if want_indices else None
    either = vals if vals is not None else idx  # the kernel skips the output it is not asked for
    st = be.sort(x._dtype.code, src._h, either._h if vals is None else vals._h, either._h if idx is None else idx._h,
                 idx_dtype.code, _prod(src._shape[:-1]),
                 n, int(descending), (1 if vals is not None else 0) | (2 if idx is not None else 0))
    if st:
        kernel_failed(st, "sort", op)
    outs = []
    for t in (vals, idx):
        if t is None:
            continue
        if perm is not None:
            inv = [perm.index(i) for i in range(nd)]
            ts = _contig_strides(t._shape)
            t = strided_copy(t, x._shape, 0, [ts[p] for p in inv], op=op)
        outs.append(t)
    return outs


def _sort_args(values, axis, direction, op, allowed):
    x = to_tensor(values, op)
    if x._dtype not in allowed:
        raise InvalidArgumentError(f"values has dtype {x._dtype.name}; allowed: {_names(allowed)}", op)
    nd = len(x._shape)
    a = _int_arg(axis, op, "axis")
    if not -nd <= a < nd:
        raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {nd}; allowed: [{-nd}, {nd})", op)
    _, x = _place(x)
    return x, a % nd, _direction(direction, op)


@register("sort", "Sort")
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (stable; NaN sorts above every number).

    >>> import tapeflow as tf
    >>> tf.sort(tf.constant([3, 1, 2]), direction="DESCENDING").numpy().tolist()
    [3, 2, 1]
    """
    x, a, d = _sort_args(values, axis, direction, "Sort", _dt.ALL)
    (out,) = _sort_last(x, a, True, False, d == "DESCENDING", _dt.int64, "Sort")
    _record("sort", (x,), out, {"axis": a, "direction": d})
    return out


@register("argsort", "Argsort", nondiff="integer output")
def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 positions that would sort ``values`` along ``axis`` (always stable: ties keep their order).

    >>> import tapeflow as tf
    >>> tf.argsort(tf.constant([3.0, 1.0, 2.0])).numpy().tolist()
    [1, 2, 0]
    """
    x, a, d = _sort_args(values, axis, direction, "Argsort", _dt.ALL)
    (idx,) = _sort_last(x, a, False, True, d == "DESCENDING", _dt.int32, "Argsort")
    return idx


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


@register("top_k", "TopKV2")
def top_k(input, k=1, sorted=True, name=None):
    """The ``k`` largest entries along the last axis, largest first, and their int32 positions.

    Ties go to the lower position; NaN counts as the largest value.

    >>> import tapeflow as tf
    >>> v, i = tf.math.top_k(tf.constant([1.0, 3.0, 2.0]), k=2)
    >>> v.numpy().tolist(), i.numpy().tolist()
    ([3.0, 2.0], [1, 2])
    """
    x = to_tensor(input, "TopKV2")
    if x._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"input has dtype {x._dtype.name}; allowed: {_names(_NUMERIC)}", "TopKV2")
    if not x._shape:
        raise InvalidArgumentError("input is a scalar; allowed: rank >= 1 (top_k works along the last axis)",
                                   "TopKV2")
    kk = _int_arg(k, "TopKV2", "k")
    n = x._shape[-1]
    if not 0 <= kk <= n:
        raise InvalidArgumentError(f"k = {kk} is not in [0, {n}] (the last axis has {n} entries)", "TopKV2")
    dev, x = _place(x)
    shp = x._shape[:-1] + (kk,)
    vals, idx = alloc(shp, x._dtype, dev), alloc(shp, _dt.int32, dev)
    st = dev.backend.top_k(x._dtype.code, x._h, vals._h, idx._h, _dt.int32.code, _prod(x._shape[:-1]), n, kk)
    if st:
        kernel_failed(st, "top_k", "TopKV2")
    out = TopKV2(vals, idx)
    _record("top_k", (x,), out, {"k": kk, "sorted": bool(sorted)})
    return out


__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem", "TopKV2")]
