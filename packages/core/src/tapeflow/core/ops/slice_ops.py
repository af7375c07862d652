"""Slicing: slice, strided_slice (and its adjoint strided_slice_grad) and ``t[key]``.

Basic keys copy one strided view; integer arrays and boolean masks go through the index ops
(gather, gather_nd, boolean_mask) with NumPy's rules."""
from __future__ import annotations

import numpy as np

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    hooks,
    kernel_failed,
    register,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..runner import primitive, run, run_tensors
from ..tensor import Tensor, constant
from . import _ew
from ._shape import (
    _ONE,
    _contig_strides,
    _int_arg,
    _prod,
    _pyslice,
    _shape_eq,
    _scope,
    _shape_arg,
    _zeros,
    strided_copy,
)
from .array_ops import _view, broadcast_to, stack, transpose, where
from .index_ops import boolean_mask, gather, gather_nd

# ---- slicing --------------------------------------------------------------------

def _slice_sizes(begin, size, shape):
    """``size`` with its -1 entries resolved against ``shape`` (traced, None where the dimension is unknown),
    after checking that the block fits (what an unknown dimension decides waits until the graph runs)."""
    sizes = []
    for i, (bi, si, d) in enumerate(zip(begin, size, shape)):
        if bi < 0 or (d is not None and bi > d):
            raise InvalidArgumentError(f"begin[{i}] = {bi} is not in [0, {d}]", "Slice")
        if si == -1:
            si = None if d is None else d - bi
        elif si < 0 or (d is not None and si > d - bi):
            raise InvalidArgumentError(f"size[{i}] = {si} is not in [0, {'?' if d is None else d - bi}] (begin[{i}] "
                                       f"= {bi}, dimension {d}); allowed: -1 or a size that fits", "Slice")
        sizes.append(si)
    return tuple(sizes)


@primitive("slice", "Slice", infer=lambda x, *, begin, size: (_slice_sizes(begin, size, x._shape), x._dtype))
def _slice(dev, x, *, begin, size):
    size = _slice_sizes(begin, size, x._shape)  # traced attrs are checked (and their -1 resolved) only now
    if size == x._shape:
        return _view(x, size)
    strides = _contig_strides(x._shape)
    off = sum(bi * st for bi, st in zip(begin, strides)) if _prod(size) else 0
    return strided_copy(x, size, off, strides, op="Slice")


@register("slice", "Slice")
def slice(input_, begin, size, name=None):
    """The block starting at ``begin`` with ``size`` entries per axis (-1: all the rest).

    >>> import tapeflow as tf
    >>> tf.slice(tf.reshape(tf.range(12), [3, 4]), [1, 1], [2, -1]).numpy().tolist()
    [[5, 6, 7], [9, 10, 11]]
    """
    x = to_tensor(input_, "Slice")
    nd = len(x._shape)
    b = _shape_arg(begin, "Slice", "begin")
    s = _shape_arg(size, "Slice", "size")
    if len(b) != nd or len(s) != nd:
        raise InvalidArgumentError(f"begin has {len(b)} and size {len(s)} entries for a tensor of rank {nd}; "
                                   f"allowed: {nd} each", "Slice")
    sizes = _slice_sizes(b, s, x._shape)
    return run_tensors(_slice, (x,), {"begin": b, "size": s if None in sizes else sizes})


def _index_plan(shape, key, op="StridedSlice"):
    """Resolve a basic index (ints, slices, ..., None) into (offset, view shape, view strides, result shape)."""
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = 0
    n_real = 0
    for k in key:
        if k is Ellipsis:
            n_ell += 1
        elif k is not None:
            n_real += 1
    if n_ell > 1:
        raise InvalidArgumentError("an index can only have a single ellipsis ('...')", op)
    if n_real > len(shape):
        raise InvalidArgumentError(f"too many indices for a tensor of shape {tuple(shape)}: {n_real} given; "
                                   f"allowed: at most {len(shape)}", op)
    if n_ell == 0:
        key = key + (Ellipsis,)
    strides = _contig_strides(shape) if None not in shape else [0] * len(shape)  # traced: shapes only
    offset, out_shape, out_strides, result_shape = 0, [], [], []
    dim = 0
    for k in key:
        if k is Ellipsis:
            for _ in range(len(shape) - n_real):
                out_shape.append(shape[dim])
                out_strides.append(strides[dim])
                result_shape.append(shape[dim])
                dim += 1
            continue
        if k is None:
            result_shape.append(1)
            continue
        if isinstance(k, _pyslice):
            if k.step == 0:
                raise InvalidArgumentError(f"slice step of axis {dim} is 0; allowed: a non-zero step", op)
            try:
                if shape[dim] is None:  # traced, the axis unknown: the slice's length is too
                    [v.__index__() for v in (k.start, k.stop, k.step) if v is not None]
                    out_shape.append(None)
                    out_strides.append(0)
                    result_shape.append(None)
                    dim += 1
                    continue
                start, stop, step = k.indices(shape[dim])
            except (TypeError, AttributeError):
                raise InvalidArgumentError(f"slice {k} of axis {dim} has non-integer bounds; allowed: ints or None",
                                           op) from None
            length = len(range(start, stop, step))
            offset += (start if length else 0) * strides[dim]
            out_shape.append(length)
            out_strides.append(strides[dim] * step)
            result_shape.append(length)
            dim += 1
            continue
        if isinstance(k, (bool, np.bool_)):
            raise InvalidArgumentError(f"a boolean scalar index ({k}) is not supported; allowed: ints, slices, "
                                       "'...', None, integer or boolean tensors", op)
        try:
            i = k.__index__()
        except (AttributeError, TypeError):
            raise InvalidArgumentError(
                f"only integers, slices, '...', None and integer/bool tensors are valid indices, got {k!r}",
                op) from None
        if shape[dim] is None:  # traced, the axis unknown: the bounds are checked when the graph runs
            dim += 1
            continue
        if not -shape[dim] <= i < shape[dim]:
            raise InvalidArgumentError(
                f"index {i} is out of bounds for axis {dim} with size {shape[dim]}; allowed: "
                f"[{-shape[dim]}, {shape[dim]})", op)
        offset += (i % shape[dim]) * strides[dim]
        dim += 1
    return offset, tuple(out_shape), out_strides, tuple(result_shape)


def _spec_key(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask):
    key = []
    for i in range(len(begin)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(int(begin[i]))
        else:
            key.append(_pyslice(None if begin_mask & bit else int(begin[i]), None if end_mask & bit else int(end[i]),
                                int(strides[i])))
    return tuple(key)


def _key_spec(key):
    """The strided_slice arguments of a basic index (as TensorFlow's __getitem__ builds them)."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    bm = em = elm = nam = sam = 0
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            elm |= bit
            b, e, s = 0, 0, 1
        elif k is None:
            nam |= bit
            b, e, s = 0, 0, 1
        elif isinstance(k, _pyslice):
            b, e, s = k.start, k.stop, 1 if k.step is None else k.step.__index__()
            if b is None:
                bm |= bit
                b = 0
            if e is None:
                em |= bit
                e = 0
            b, e = b.__index__(), e.__index__()
        else:
            b = k.__index__()
            e, s = b + 1, 1
            sam |= bit
        begin.append(b)
        end.append(e)
        strides.append(s)
    return {"begin": tuple(begin), "end": tuple(end), "strides": tuple(strides), "begin_mask": bm,
            "end_mask": em, "ellipsis_mask": elm, "new_axis_mask": nam, "shrink_axis_mask": sam}


def _masks(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, op):
    return (_int_arg(begin_mask, op, "begin_mask"), _int_arg(end_mask, op, "end_mask"),
            _int_arg(ellipsis_mask, op, "ellipsis_mask"), _int_arg(new_axis_mask, op, "new_axis_mask"),
            _int_arg(shrink_axis_mask, op, "shrink_axis_mask"))


def _spec_args(begin, end, strides, op):
    b = _shape_arg(begin, op, "begin")
    e = _shape_arg(end, op, "end")
    s = _shape_arg(strides, op, "strides") if strides is not None else (1,) * len(b)
    if not len(b) == len(e) == len(s):
        raise InvalidArgumentError(f"begin, end and strides have {len(b)}, {len(e)} and {len(s)} entries; allowed: "
                                   "the same number", op)
    for i, v in enumerate(s):
        if v == 0:
            raise InvalidArgumentError(f"strides[{i}] = 0; allowed: non-zero strides", op)
    return b, e, s


_plan_cache: dict = {}


def _slice_plan(shape, attrs, op="StridedSlice"):
    """_index_plan of the strided_slice arguments ``attrs`` (cached: the wrapper checks, the primitive runs it)."""
    key = (tuple(shape), op, *(attrs[k] for k in _SPEC))
    hit = _plan_cache.get(key)
    if hit is None:
        hit = _index_plan(shape, _spec_key(*(attrs[k] for k in _SPEC)), op)
        if len(_plan_cache) > 1024:
            _plan_cache.clear()
        _plan_cache[key] = hit
    return hit


_SPEC = ("begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _spec_attrs(b, e, s, masks):
    return dict(zip(_SPEC, (b, e, s) + tuple(masks)))


def _copy_plan(x, plan):
    off, vshape, vstr, result = plan
    return _view(strided_copy(x, vshape, off, vstr, op="StridedSlice"), result)


@primitive("strided_slice", "StridedSlice", infer=lambda x, **attrs: (_slice_plan(x._shape, attrs)[3], x._dtype))
def _strided_slice(dev, x, **attrs):
    return _copy_plan(x, _slice_plan(x._shape, attrs))


@register("strided_slice", "StridedSlice")
def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """``input_[begin:end:strides]`` per axis, with TensorFlow's masks.

    Bit i of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]`` (the
    whole range); ``ellipsis_mask`` makes entry i an ``...``; ``new_axis_mask``
    inserts an axis of size 1; ``shrink_axis_mask`` takes the single index
    ``begin[i]`` and drops the axis.

    >>> import tapeflow as tf
    >>> tf.strided_slice(tf.range(10), [1], [8], [3]).numpy().tolist()
    [1, 4, 7]
    """
    if var is not None:
        raise InvalidArgumentError("var= (slice assignment to a variable) is not supported by strided_slice; "
                                   "allowed: var=None (assign through the variable: v.assign(...), "
                                   "v.scatter_nd_update(...))", "StridedSlice")
    x = to_tensor(input_, "StridedSlice")
    b, e, s = _spec_args(begin, end, strides, "StridedSlice")
    masks = _masks(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, "StridedSlice")
    attrs = _spec_attrs(b, e, s, masks)
    _slice_plan(x._shape, attrs)  # the index fits x's shape
    return run_tensors(_strided_slice, (x,), attrs)


def _ssg_infer(dy, *, shape, **spec):
    return shape, dy._dtype


@primitive("strided_slice_grad", "StridedSliceGrad", infer=_ssg_infer)
def _strided_slice_grad(dev, dy, *, shape, **spec):
    off, vshape, vstr, _ = _slice_plan(shape, spec, "StridedSliceGrad")
    out = _zeros(shape, dy._dtype, dev)
    strided_copy(dy, vshape, 0, _contig_strides(vshape), out=out, dst_off=off, dst_strides=vstr,
                 op="StridedSliceGrad")
    return out


@register("strided_slice_grad", "StridedSliceGrad")
def strided_slice_grad(shape, begin, end, strides, dy, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                       shrink_axis_mask=0, name=None):
    """The adjoint of strided_slice: ``dy`` written where the slice read, zeros elsewhere, in a tensor of ``shape``.

    >>> import tapeflow as tf
    >>> tf.strided_slice_grad([5], [1], [5], [2], tf.constant([1.0, 2.0])).numpy().tolist()
    [0.0, 1.0, 0.0, 2.0, 0.0]
    """
    dy = to_tensor(dy, "StridedSliceGrad")
    shp = _shape_arg(shape, "StridedSliceGrad")
    b, e, s = _spec_args(begin, end, strides, "StridedSliceGrad")
    masks = _masks(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, "StridedSliceGrad")
    spec = _spec_attrs(b, e, s, masks)
    result = _slice_plan(shp, spec, "StridedSliceGrad")[3]
    if not _shape_eq(dy._shape, result):
        raise InvalidArgumentError(f"dy has shape {tuple(dy._shape)}; allowed: {result}, the shape of the slice",
                                   "StridedSliceGrad")
    return run_tensors(_strided_slice_grad, (dy,), {"shape": shp, **spec})


# ---- indexing: t[key] -------------------------------------------------------------

def _is_advanced(k):
    if isinstance(k, Tensor):
        return bool(k._shape) or k._dtype.is_bool
    if hasattr(k, "_as_tensor"):
        return True
    return isinstance(k, (list, np.ndarray))


def getitem(tensor, key):
    """``t[key]`` with ints, slices (any step), ``...``, ``None``, integer lists/tensors and boolean masks.

    Basic indices copy one strided view; an integer array gathers, a boolean mask
    selects (NumPy's rules when several arrays combine); all are differentiable.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(6), [2, 3])
    >>> x[1].numpy().tolist(), x[:, ::-1].numpy().tolist(), x[..., None].shape
    ([3, 4, 5], [[2, 1, 0], [5, 4, 3]], TensorShape([2, 3, 1]))
    >>> x[:, [2, 0]].numpy().tolist(), x[x > 2].numpy().tolist()
    ([[2, 0], [5, 3]], [3, 4, 5])
    """
    x = tensor
    tk = type(key)
    if (tk is int or tk is _pyslice and (key.step is None or key.step == 1)) and x._shape and not _scope.stack \
            and not hooks.tracing and not x._dtype.is_string:
        # t[i] and t[a:b], eager: one contiguous block (strided_slice's pieces, inline)
        d = x._shape[0]
        if tk is int:
            if not -d <= key < d:
                return _basic_getitem(x, (key,))  # raises the bounds error
            i, rows, shape = key + d if key < 0 else key, 1, x._shape[1:]
        else:
            i, stop, _ = key.indices(d)
            rows = max(stop - i, 0)
            shape = (rows,) + x._shape[1:]
        n = (x._size // d if d else 0) * rows
        out = alloc(shape, x._dtype, x._dev)
        if n:
            st = x._dev.backend.strided_copy(x._dtype.size, 1, (n,), x._h, i * (n // rows), _ONE, out._h, 0, _ONE)
            if st:
                kernel_failed(st, "strided_copy", "StridedSlice")
            rec = hooks.recorder
            if rec is not None:
                rec("strided_slice", (x,), out, _key_spec((key,)))
            return out
    keys = key if isinstance(key, tuple) else (key,)
    if hooks.tracing and any(_symbolic_bound(k) for k in keys):
        return _traced_getitem(x, keys)
    for k in keys:
        if _is_advanced(k):
            return _advanced_getitem(x, keys)
    return _basic_getitem(x, keys)


def _symbolic_bound(k) -> bool:
    """A scalar index, or a slice bound, that a graph being traced computes (known when it runs)."""
    if isinstance(k, _pyslice):
        return any(isinstance(b, Tensor) and b._h is None for b in (k.start, k.stop, k.step))
    return isinstance(k, Tensor) and k._h is None and not k._shape and k._dtype.is_integer


def _traced_getitem(x, keys):
    """``x[keys]`` where an index or a slice bound is computed by the graph: gathers along each such axis
    (a scalar index drops its axis; a slice ``a:b`` with step 1 gathers ``range(a', b')`` after Python's
    clamping of ``a`` and ``b`` to the axis), the other keys as usual."""
    from .. import ops as K

    op = "StridedSlice"
    if any(k is Ellipsis or k is None or (not isinstance(k, (int, _pyslice)) and not _symbolic_bound(k))
           for k in keys):
        raise InvalidArgumentError("inside a graph function, an index computed by the graph combines only with "
                                   "ints and slices (no '...', None or index arrays); use tf.gather / "
                                   "tf.strided_slice for more", op)
    if len(keys) > len(x._shape):
        raise InvalidArgumentError(f"too many indices for a tensor of shape {tuple(x._shape)}", op)
    y, ax = x, 0
    for k in keys:
        if isinstance(k, _pyslice):
            if not _symbolic_bound(k):
                y = getitem(y, (_pyslice(None),) * ax + (k,))
                ax += 1
                continue
            if k.step is not None and not (isinstance(k.step, int) and k.step == 1):
                raise InvalidArgumentError("a slice with bounds computed by the graph takes step 1 (or none)", op)
            d = K.cast(K.shape(y)[ax], "int64")

            def bound(b, default):
                if b is None:
                    return default
                b = K.cast(b, "int64")
                return K.minimum(K.maximum(K.where(K.less(b, 0), K.add(b, d), b), 0), d)

            start = bound(k.start, K.cast(0, "int64"))
            stop = K.maximum(bound(k.stop, d), start)
            y = K.gather(y, K.range_(start, stop, 1, dtype="int64"), axis=ax)
            ax += 1
        else:  # an int, or a scalar the graph computes: that entry along the axis (the axis goes)
            i = k
            if isinstance(k, Tensor):
                d = K.cast(K.shape(y)[ax], k._dtype)
                i = K.where(K.less(k, 0), K.add(k, d), k)
            y = K.gather(y, i, axis=ax)
    return y


def _basic_getitem(x, keys):
    plan = _index_plan(x._shape, keys)  # the index fits x's shape (its messages name the key as written)
    if hooks.tracing or _scope.stack or x._dtype.is_string:  # (strings: the primitive's host implementation)
        return run(_strided_slice, (x,), _key_spec(keys))
    out = _copy_plan(x, plan)  # eager, no scope: the primitive's pieces with the plan made above
    rec = hooks.recorder
    if rec is not None:
        rec("strided_slice", (x,), out, _key_spec(keys))
    return out


def _advanced_getitem(x, keys):
    """NumPy advanced indexing over tapeflow ops (strided_slice, gather, boolean_mask, gather_nd, transpose)."""
    op = "StridedSlice"
    n_ell = sum(1 for k in keys if k is Ellipsis)
    if n_ell > 1:
        raise InvalidArgumentError("an index can only have a single ellipsis ('...')", op)
    consumed = 0
    conv = []
    for k in keys:
        if _is_advanced(k):
            if isinstance(k, (list, np.ndarray)) and np.size(k) == 0:
                k = np.zeros(np.shape(k), np.int64)  # an empty list indexes nothing (NumPy's rule)
            t = k if isinstance(k, Tensor) else to_tensor(k, op)
            if not (t._dtype.is_integer or t._dtype.is_bool):
                raise InvalidArgumentError(f"an index array has dtype {t._dtype.name}; allowed: integer or bool",
                                           op)
            conv.append(t)
            consumed += len(t._shape) if t._dtype.is_bool else 1
        else:
            conv.append(k)
            if k is not None and k is not Ellipsis:
                consumed += 1
    if consumed > len(x._shape):
        raise InvalidArgumentError(f"too many indices for a tensor of shape {tuple(x._shape)}: {consumed} given; "
                                   f"allowed: at most {len(x._shape)}", op)
    if n_ell == 0:
        conv.append(Ellipsis)
    # basic pass: arrays (and, with them, plain ints, as NumPy does) keep their axes whole
    basic, in_dim, out_dim, adv = [], 0, 0, []
    for k in conv:
        if k is Ellipsis:
            span = len(x._shape) - consumed
            basic.append(Ellipsis)
            in_dim += span
            out_dim += span
        elif k is None:
            basic.append(None)
            out_dim += 1
        elif isinstance(k, _pyslice):
            basic.append(k)
            in_dim += 1
            out_dim += 1
        elif isinstance(k, Tensor):
            nd = len(k._shape) if k._dtype.is_bool else 1
            if k._dtype.is_bool and not _shape_eq(k._shape, x._shape[in_dim:in_dim + nd]):
                raise InvalidArgumentError(f"boolean index of shape {tuple(k._shape)} does not match the "
                                           f"indexed axes {tuple(x._shape[in_dim:in_dim + nd])}", op)
            basic.extend([_pyslice(None)] * nd)
            adv.append((out_dim, k, in_dim))
            in_dim += nd
            out_dim += nd
        else:
            i = k.__index__()
            d = x._shape[in_dim]
            if not -d <= i < d:
                raise InvalidArgumentError(f"index {i} is out of bounds for axis {in_dim} with size {d}; allowed: "
                                           f"[{-d}, {d})", op)
            basic.append(_pyslice(None))
            adv.append((out_dim, constant(i % d), in_dim))
            in_dim += 1
            out_dim += 1
    y = getitem(x, tuple(basic))
    with _device.device(y._dev):
        if len(adv) == 1:
            pos, t, _ = adv[0]
            if t._dtype.is_bool:
                return boolean_mask(y, t, axis=pos)
            return gather(y, _wrap_negative(t, y._shape[pos], (y, pos)), axis=pos)
        # several arrays: broadcast them together, move their axes to the front, gather_nd
        cols, axes = [], []
        for pos, t, _ in adv:
            if t._dtype.is_bool:
                w = where(t)
                for j in range(len(t._shape)):
                    cols.append(w[:, j])
                    axes.append(pos + j)
            else:
                cols.append(_wrap_negative(t, y._shape[pos], (y, pos)))
                axes.append(pos)
        cols = [c if c._dtype is _dt.int64 else _cast_index(c) for c in cols]
        bshape = ()
        for c in cols:
            bshape = _ew.broadcast_shape(bshape, c._shape, op)
        idx = stack([broadcast_to(c, bshape) for c in cols], axis=-1)
        rest = [i for i in range(len(y._shape)) if i not in axes]
        yt = transpose(y, axes + rest) if axes + rest != list(range(len(y._shape))) else y
        out = gather_nd(yt, idx)
        adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
        if adjacent and axes[0] > 0:
            nb, first = len(bshape), axes[0]
            n_rest = len(out._shape) - nb
            perm = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, nb + n_rest))
            out = transpose(out, perm)
        return out


def _cast_index(t):
    from .math_ops import cast

    return cast(t, _dt.int64)


def _wrap_negative(t, n, y_of_n=None):
    """Integer index tensor with negative entries counted from the end (NumPy's rule for t[[...]])."""
    if t._size == 0:
        return t
    if n is None:  # traced, the axis unknown: its size when the graph runs
        from .array_ops import shape
        from .math_ops import cast

        n = cast(shape(y_of_n[0])[y_of_n[1]], t._dtype) if y_of_n else None
    host = t._host()
    if int(host.min()) >= 0:  # no negatives: nothing to do (a read of the indices, not math on them)
        return t
    from .math_ops import add, less

    return where(less(t, 0), add(t, n), t)



__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("getitem", "TopKV2")]
