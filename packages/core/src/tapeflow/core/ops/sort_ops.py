"""Scans and sorting: cumsum, cumprod, sort, argsort, top_k (the C kernels' index_sort.c).

Scans compute float16/bfloat16 in float32; sorting is stable and puts NaN above every number."""
from __future__ import annotations

import collections

from .. import dtypes as _dt
from ..dispatch import alloc, dtype_arg, int_arg, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from ._shape import _HALF, _NUMERIC, _contig_strides, _names, _prod, strided_copy
from .math_ops import _cast_raw
from .math_ops import cast as _cast_indices

# ---- scans ----------------------------------------------------------------------------


def _axis(x, axis, op):
    nd = len(x._shape)
    a = axis if type(axis) is int else int_arg(axis, op, "axis")
    if not -nd <= a < nd:
        raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {nd}; allowed: [{-nd}, {nd})", op)
    return a % nd


def _same_infer(x, **attrs):
    return x._shape, x._dtype


def _scan(name, tf_name, code):
    """The primitive of one scan kernel: attrs are the normalised ``axis``, ``exclusive`` and ``reverse``."""
    @primitive(name, tf_name, infer=_same_infer, dtypes=_NUMERIC)
    def impl(dev, x, *, axis, exclusive, reverse):
        dt, s = x._dtype, x._shape
        src = _cast_raw(x, _dt.float32) if dt in _HALF else x
        out = alloc(s, src._dtype, dev)
        check(dev.backend.cumulative(code, src._dtype.code, src._h, out._h, _prod(s[:axis]), s[axis],
                                     _prod(s[axis + 1:]), int(exclusive), int(reverse)), "cumulative")
        return out if out._dtype is dt else _cast_raw(out, dt)
    return impl


_CUMSUM = _scan("cumsum", "Cumsum", 0)
_CUMPROD = _scan("cumprod", "Cumprod", 1)


def _scan_op(prim, x, axis, exclusive, reverse):
    """Validation (dtype, axis) and one call of the scan primitive."""
    op = prim.tf_name
    if type(x) is not Tensor:
        x = to_tensor(x, op)
    if x._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"x has dtype {x._dtype.name}; allowed: {_names(_NUMERIC)}", op)
    return run(prim, (x,), {"axis": _axis(x, axis, op), "exclusive": bool(exclusive), "reverse": bool(reverse)})


@register("cumsum", "Cumsum")
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running sum along ``axis``: out[i] = x[0] + ... + x[i] (exclusive: up to x[i-1]; reverse: from the end).

    >>> import tapeflow as tf
    >>> tf.cumsum(tf.constant([1, 2, 3])).numpy().tolist(), tf.cumsum([1, 2, 3], exclusive=True).numpy().tolist()
    ([1, 3, 6], [0, 1, 3])
    """
    return _scan_op(_CUMSUM, x, axis, exclusive, reverse)


@register("cumprod", "Cumprod")
def cumprod(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running product along ``axis``: out[i] = x[0] * ... * x[i] (exclusive, reverse as in cumsum).

    >>> import tapeflow as tf
    >>> tf.math.cumprod(tf.constant([1, 2, 3]), reverse=True).numpy().tolist()
    [6, 6, 3]
    """
    return _scan_op(_CUMPROD, x, axis, exclusive, reverse)


# ---- sorting ---------------------------------------------------------------------------

def _direction(direction, op):
    d = str(direction).upper()
    if d not in ("ASCENDING", "DESCENDING"):
        raise InvalidArgumentError(f"direction = {direction!r}; allowed: 'ASCENDING', 'DESCENDING'", op)
    return d


def _sort_last(dev, x, ax, descending, want_values, op):
    """Sort along ``ax`` through the row kernel (moving ``ax`` last and back when needed): the values
    (``want_values``) or else their int32 positions."""
    nd = len(x._shape)
    if ax != nd - 1:
        perm = [i for i in range(nd) if i != ax] + [ax]
        strides = _contig_strides(x._shape)
        src = strided_copy(x, tuple(x._shape[p] for p in perm), 0, [strides[p] for p in perm], op=op)
    else:
        perm, src = None, x
    out = alloc(src._shape, x._dtype if want_values else _dt.int32, dev)
    # the kernel writes only the output it is asked for (flags: 1 values, 2 positions)
    check(dev.backend.sort(x._dtype.code, src._h, out._h, out._h, _dt.int32.code, _prod(src._shape[:-1]),
                           src._shape[-1], int(descending), 1 if want_values else 2), "sort")
    if perm is not None:
        inv = [perm.index(i) for i in range(nd)]
        ts = _contig_strides(out._shape)
        out = strided_copy(out, x._shape, 0, [ts[p] for p in inv], op=op)
    return out


@primitive("sort", "Sort", infer=_same_infer)
def _sort(dev, x, *, axis, direction):
    return _sort_last(dev, x, axis, direction == "DESCENDING", True, "Sort")


def _argsort_infer(x, *, axis, direction):
    return x._shape, _dt.int32


@primitive("argsort", "Argsort", infer=_argsort_infer)
def _argsort(dev, x, *, axis, direction):
    return _sort_last(dev, x, axis, direction == "DESCENDING", False, "Argsort")


def _sort_attrs(values, axis, direction, op):
    x = values if type(values) is Tensor else to_tensor(values, op)
    return x, {"axis": _axis(x, axis, op), "direction": _direction(direction, op)}


@register("sort", "Sort")
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (stable; NaN sorts above every number).

    >>> import tapeflow as tf
    >>> tf.sort(tf.constant([3, 1, 2]), direction="DESCENDING").numpy().tolist()
    [3, 2, 1]
    """
    x, attrs = _sort_attrs(values, axis, direction, "Sort")
    return run(_sort, (x,), attrs)


@register("argsort", "Argsort", nondiff="integer output")
def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 positions that would sort ``values`` along ``axis`` (always stable: ties keep their order,
    which ``stable=False`` allows too).

    >>> import tapeflow as tf
    >>> tf.argsort(tf.constant([3.0, 1.0, 2.0])).numpy().tolist()
    [1, 2, 0]
    """
    x, attrs = _sort_attrs(values, axis, direction, "Argsort")
    return run(_argsort, (x,), attrs)


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _top_k_infer(x, *, k, sorted):
    shape = x._shape[:-1] + (k,)
    return [(shape, x._dtype), (shape, _dt.int32)]


@primitive("top_k", "TopKV2", infer=_top_k_infer, dtypes=_NUMERIC)
def _top_k(dev, x, *, k, sorted):
    s = x._shape
    if k > s[-1]:
        raise InvalidArgumentError(f"k = {k} is not in [0, {s[-1]}] (the last axis has {s[-1]} entries)", "TopKV2")
    shape = s[:-1] + (k,)
    vals, idx = alloc(shape, x._dtype, dev), alloc(shape, _dt.int32, dev)
    check(dev.backend.top_k(x._dtype.code, x._h, vals._h, idx._h, _dt.int32.code, _prod(s[:-1]), s[-1], k), "top_k")
    return TopKV2(vals, idx)


@register("top_k", "TopKV2")
def top_k(input, k=1, sorted=True, index_type=_dt.int32, name=None):
    """The ``k`` largest entries along the last axis, largest first, and their positions (``index_type``: int32 or
    int64).

    Ties go to the lower position; NaN counts as the largest value (the result is sorted whatever
    ``sorted`` says: TensorFlow allows any order when it is False).

    >>> import tapeflow as tf
    >>> v, i = tf.math.top_k(tf.constant([1.0, 3.0, 2.0]), k=2)
    >>> v.numpy().tolist(), i.numpy().tolist()
    ([3.0, 2.0], [1, 2])
    """
    x = input if type(input) is Tensor else to_tensor(input, "TopKV2")
    if x._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"input has dtype {x._dtype.name}; allowed: {_names(_NUMERIC)}", "TopKV2")
    if not x._shape:
        raise InvalidArgumentError("input is a scalar; allowed: rank >= 1 (top_k works along the last axis)",
                                   "TopKV2")
    kk = k if type(k) is int else int_arg(k, "TopKV2", "k")
    n = x._shape[-1]
    if kk < 0 or (n is not None and kk > n):  # traced, the axis unknown: checked when the graph runs
        raise InvalidArgumentError(f"k = {kk} is not in [0, {n}] (the last axis has {n} entries)", "TopKV2")
    it = dtype_arg(index_type, "TopKV2", "index_type")
    if it not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"index_type = {it.name}; allowed: int32, int64", "TopKV2")
    out = run(_top_k, (x,), {"k": kk, "sorted": bool(sorted)})
    out = out if type(out) is TopKV2 else TopKV2(*out)
    return out if it is _dt.int32 else TopKV2(out.values, _cast_indices(out.indices, it))


__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem", "TopKV2")]
