"""Everyday array names of issue 14: repeat, sequence_mask, ensure_shape, reverse_sequence, dynamic_partition,
dynamic_stitch, unravel_index, shape_n, broadcast_dynamic_shape, saturate_cast, realdiv, parallel_stack,
space_to_batch(_nd), batch_to_space and histogram_fixed_width_bins.

All but ensure_shape are composites over gathers, masks, pads, reshapes and transposes (so their gradients are
those ops'); ``ensure_shape`` is a primitive: a static check while tracing and, where dimensions are unknown
then, a runtime check each time the graph runs (its gradient and JVP pass through).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dispatch import dtype_arg, int_arg, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import current_graph, primitive, run
from ..tensor import Tensor, TensorShape, make
from .array_ops import (concat, expand_dims, ones, pad, range_, reshape, shape, stack, transpose, where,
                        zeros_like)
from .index_ops import boolean_mask, gather
from .math_ops import add, cast, clip_by_value, divide, equal, floor, floordiv, floormod, less, multiply, subtract
from .reduce_ops import reduce_max, reduce_sum
from .segment_ops import unsorted_segment_max
from .set_ops import searchsorted
from .sort_ops import cumprod, cumsum

__all__ = ["repeat", "sequence_mask", "ensure_shape", "reverse_sequence", "dynamic_partition", "dynamic_stitch",
           "unravel_index", "shape_n", "broadcast_static_shape", "broadcast_dynamic_shape", "saturate_cast",
           "realdiv", "parallel_stack", "space_to_batch_nd", "space_to_batch", "batch_to_space",
           "histogram_fixed_width_bins"]

_INTS = (_dt.int32, _dt.int64)


def _t(x, op, dtype=None):
    if hasattr(x, "_as_tensor") and hasattr(x, "assign"):
        x = x.read_value()
    return x if isinstance(x, Tensor) else to_tensor(x, op, dtype)


def _concrete(t) -> bool:
    return t._h is not None or t._arr is not None


def _int_tensor(x, op, what):
    t = _t(x, op)
    if t._dtype not in _INTS:
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: int32, int64", op)
    return t


def _axis(axis, ndim, op):
    a = int_arg(axis, op, "axis")
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise InvalidArgumentError(f"axis = {a} is not in [{-max(ndim, 1)}, {max(ndim, 1)})", op)
    return a % max(ndim, 1)


def _dim(x, axis):
    """x.shape[axis]: an int, or an int32 scalar tensor when unknown while tracing."""
    d = x._shape[axis]
    return d if d is not None else shape(x)[axis]


# ---- repeat, sequence_mask ---------------------------------------------------------------------

@register("repeat", "Repeat", kind="composite")
def repeat(input, repeats, axis=None, name=None):
    """Each slice of ``input`` along ``axis`` repeated ``repeats[i]`` times (``repeats`` a scalar: all alike);
    ``axis=None`` repeats the flattened input, as ``tf.repeat``.

    >>> import tapeflow as tf
    >>> tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy().tolist()
    [[1, 2], [3, 4], [3, 4]]
    >>> tf.repeat([1, 2], 2).numpy().tolist()
    [1, 1, 2, 2]
    """
    op = "Repeat"
    x = _t(input, op)
    if axis is None:
        x, a = reshape(x, [-1]), 0
    else:
        a = _axis(axis, len(x._shape), op)
        if not x._shape:
            raise InvalidArgumentError("input is a scalar; allowed: a tensor of rank >= 1 with an axis", op)
    r = _int_tensor(repeats, op, "repeats")
    if len(r._shape) > 1:
        raise InvalidArgumentError(f"repeats has shape {tuple(r._shape)}; allowed: a scalar or a vector", op)
    n = x._shape[a]
    if r._shape and r._shape[0] is not None and n is not None and r._shape[0] not in (1, n):
        raise InvalidArgumentError(f"repeats has {r._shape[0]} entries but input has {n} along axis {a}; allowed: "
                                   f"1 or {n}", op)
    if _concrete(r) and bool(_any_negative(r)):
        raise InvalidArgumentError("repeats holds a negative count; allowed: counts >= 0", op)
    r = cast(r, _dt.int32)
    if not r._shape or r._shape[0] == 1:
        r = add(reshape(r, []), multiply(range_(_dim(x, a)), 0))  # one count per slice (also for unknown n)
    ends = cumsum(r)
    idx = searchsorted(ends, range_(reduce_sum(r)), side="right")
    return gather(x, idx, axis=a)


def _any_negative(t) -> bool:
    return bool(reduce_sum(cast(less(t, 0), _dt.int32)).numpy() > 0) if t._shape != (0,) else False


@register("sequence_mask", "SequenceMask", kind="composite")
def sequence_mask(lengths, maxlen=None, dtype=_dt.bool_, name=None):
    """``mask[i..., j] = j < lengths[i...]`` for ``j`` in ``[0, maxlen)`` (default ``max(lengths)``), as
    ``tf.sequence_mask``.

    >>> import tapeflow as tf
    >>> tf.sequence_mask([1, 3, 2], 4).numpy().astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0]]
    """
    op = "SequenceMask"
    dt = dtype_arg(dtype, op)
    lens = _int_tensor(lengths, op, "lengths")
    if maxlen is None:
        m = reduce_max(lens) if lens._shape != (0,) else 0
    else:
        mt = _int_tensor(maxlen, op, "maxlen")
        if mt._shape:
            raise InvalidArgumentError(f"maxlen has shape {tuple(mt._shape)}; allowed: a scalar", op)
        if _concrete(mt) and int(mt.numpy()) < 0:
            raise InvalidArgumentError(f"maxlen = {int(mt.numpy())}; allowed: >= 0", op)
        m = mt
    row = range_(cast(m, lens._dtype) if isinstance(m, Tensor) else m, dtype=lens._dtype)
    mask = less(row, expand_dims(lens, -1))
    return mask if dt is _dt.bool_ else cast(mask, dt)


# ---- ensure_shape ------------------------------------------------------------------------------

def _shape_spec(shape_, op):
    if isinstance(shape_, TensorShape):
        return tuple(shape_.as_list()) if hasattr(shape_, "as_list") else tuple(shape_)
    if isinstance(shape_, Tensor):
        shape_ = shape_.numpy().tolist() if _concrete(shape_) else None
    if shape_ is None:
        raise TypeError(f"shape must be a list of ints (None for unknown dimensions), got None [Op:{op}]")
    if not isinstance(shape_, (list, tuple)):
        raise TypeError(f"shape must be a list of ints (None for unknown dimensions), got "
                        f"{type(shape_).__name__} {shape_!r:.60} [Op:{op}]")
    out = []
    for d in shape_:
        if d is None or (isinstance(d, (int, np.integer)) and not isinstance(d, bool) and int(d) == -1):
            out.append(None)
            continue
        v = int_arg(d, op, "shape")
        if not 0 <= v < 2 ** 63:
            raise InvalidArgumentError(f"shape holds {v}; allowed: sizes >= 0 or None", op)
        out.append(v)
    return tuple(out)


def _fmt(shape_) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape_) + "]"


def _compatible(actual, spec) -> bool:
    return len(actual) == len(spec) and all(a is None or s is None or a == s for a, s in zip(actual, spec))


def _ensure_infer(x, *, shape):
    return tuple(s if a is None else a for a, s in zip(x._shape, shape)), x._dtype


@primitive("ensure_shape", "EnsureShape", infer=_ensure_infer)
def _ENSURE_SHAPE(dev, x, *, shape):
    if not _compatible(tuple(x._shape), shape):
        raise InvalidArgumentError(f"Shape of tensor input {_fmt(x._shape)} is not compatible with expected shape "
                                   f"{_fmt(shape)}.", "EnsureShape")
    return make(x._h, x._arr, x._shape, x._dtype, x._dev, x._size)


@register("ensure_shape", "EnsureShape")
def ensure_shape(x, shape, name=None):
    """``x`` itself, after checking that its shape fits ``shape`` (None for a dimension that may be anything),
    as ``tf.ensure_shape``: at once where the shape is known, and each time a graph runs where it is not; the
    result's static shape has the dimensions ``shape`` gives.

    >>> import tapeflow as tf
    >>> tf.ensure_shape(tf.ones([2, 3]), [None, 3]).shape
    TensorShape([2, 3])
    """
    op = "EnsureShape"
    t = _t(x, op)
    spec = _shape_spec(shape, op)
    if not _compatible(tuple(t._shape), spec):
        raise InvalidArgumentError(f"Shape of tensor input {_fmt(t._shape)} is not compatible with expected shape "
                                   f"{_fmt(spec)}.", op)
    return run(_ENSURE_SHAPE, (t,), {"shape": spec})


# ---- reverse_sequence, dynamic_partition, dynamic_stitch ---------------------------------------

@register("reverse_sequence", "ReverseSequence", kind="composite")
def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):
    """For each batch entry ``b``, the first ``seq_lengths[b]`` elements along ``seq_axis`` reversed (the rest
    unchanged), as ``tf.reverse_sequence``.

    >>> import tapeflow as tf
    >>> tf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1, batch_axis=0).numpy().tolist()
    [[2, 1, 3], [6, 5, 4]]
    """
    op = "ReverseSequence"
    x = _t(input, op)
    nd = len(x._shape)
    if seq_axis is None:
        raise TypeError(f"seq_axis must be an int, got None [Op:{op}]")
    s = _axis(seq_axis, nd, op)
    b = _axis(0 if batch_axis is None else batch_axis, nd, op)
    if nd < 2 or s == b:
        raise InvalidArgumentError(f"seq_axis = {s} and batch_axis = {b} of a rank-{nd} input; allowed: two "
                                   f"different axes of a rank >= 2 input", op)
    lens = _int_tensor(seq_lengths, op, "seq_lengths")
    if len(lens._shape) != 1 or (lens._shape[0] is not None and x._shape[b] is not None
                                 and lens._shape[0] != x._shape[b]):
        raise InvalidArgumentError(f"seq_lengths has shape {tuple(lens._shape)}; allowed: a vector of "
                                   f"input.dims({b}) = {x._shape[b]} entries", op)
    if _concrete(lens) and x._shape[s] is not None:
        h = lens.numpy()
        if h.size and (h.max() > x._shape[s] or h.min() < 0):
            k = int(np.argmax((h > x._shape[s]) | (h < 0)))
            raise InvalidArgumentError(f"seq_lens({k}) = {int(h[k])}; allowed: in [0, input.dims({s}) = "
                                       f"{x._shape[s]}]", op)
    perm = [b, s] + [i for i in range(nd) if i not in (b, s)]
    xt = transpose(x, perm)
    lens = cast(lens, _dt.int32)
    pos = expand_dims(range_(_dim(x, s)), 0)                       # [1, T]
    ln = expand_dims(lens, 1)                                      # [B, 1]
    idx = where(less(pos, ln), subtract(subtract(ln, 1), pos), add(pos, multiply(ln, 0)))
    out = gather(xt, idx, axis=1, batch_dims=1)
    inv = [perm.index(i) for i in range(nd)]
    return transpose(out, inv)


@register("dynamic_partition", "DynamicPartition", kind="composite")
def dynamic_partition(data, partitions, num_partitions, name=None):
    """``num_partitions`` tensors: output ``k`` gathers the slices of ``data`` whose ``partitions`` entry is
    ``k``, in order (``partitions``' shape is a prefix of ``data``'s), as ``tf.dynamic_partition``.

    >>> import tapeflow as tf
    >>> [t.numpy().tolist() for t in tf.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 1], 2)]
    [[10, 30], [20, 40]]
    """
    op = "DynamicPartition"
    x = _t(data, op)
    p = _int_tensor(partitions, op, "partitions")
    n = int_arg(num_partitions, op, "num_partitions")
    if n < 1:
        raise InvalidArgumentError(f"num_partitions = {n}; allowed: >= 1", op)
    k = len(p._shape)
    if k > len(x._shape) or not _compatible(tuple(x._shape[:k]), tuple(p._shape)):
        raise InvalidArgumentError(f"data.shape {tuple(x._shape)} must start with partitions.shape "
                                   f"{tuple(p._shape)}", op)
    if _concrete(p):
        h = p.numpy().reshape(-1)
        bad = np.nonzero((h < 0) | (h >= n))[0]
        if bad.size:
            raise InvalidArgumentError(f"partitions[{int(bad[0])}] = {int(h[bad[0]])} is not in [0, {n})", op)
    if k == 0:
        x, p = expand_dims(x, 0), expand_dims(p, 0)
    return [boolean_mask(x, equal(p, cast(i, p._dtype))) for i in range(n)]


@register("dynamic_stitch", "DynamicStitch", kind="composite")
def dynamic_stitch(indices, data, name=None):
    """``merged[indices[m][i...]] = data[m][i...]`` (a later ``(m, i)`` wins a repeated index; indices never
    given are zeros), as ``tf.dynamic_stitch``.

    >>> import tapeflow as tf
    >>> tf.dynamic_stitch([[0, 2], [1, 3]], [[1, 2], [3, 4]]).numpy().tolist()
    [1, 3, 2, 4]
    """
    op = "DynamicStitch"
    if not isinstance(indices, (list, tuple)) or not isinstance(data, (list, tuple)):
        raise TypeError(f"indices and data must be lists of tensors, got {type(indices).__name__} and "
                        f"{type(data).__name__} [Op:{op}]")
    if len(indices) != len(data) or not indices:
        raise InvalidArgumentError(f"{len(indices)} indices and {len(data)} data tensors; allowed: as many of "
                                   f"each, at least one", op)
    idx = [_int_tensor(i, op, "indices") for i in indices]
    ds = [_t(d, op) for d in data]
    inner = None
    for k, (i, d) in enumerate(zip(idx, ds)):
        if d._dtype is not ds[0]._dtype:
            raise InvalidArgumentError(f"data[{k}] has dtype {d._dtype.name} but data[0] has "
                                       f"{ds[0]._dtype.name}; allowed: one dtype", op)
        r = len(i._shape)
        if len(d._shape) < r or not _compatible(tuple(d._shape[:r]), tuple(i._shape)):
            raise InvalidArgumentError(f"data[{k}].shape {tuple(d._shape)} does not start with indices[{k}].shape "
                                       f"{tuple(i._shape)}", op)
        rest = tuple(d._shape[r:])
        if inner is not None and not _compatible(inner, rest):
            raise InvalidArgumentError(f"data[{k}] has element shape {rest} but data[0] has {inner}", op)
        inner = rest if inner is None else inner
    if not all(_concrete(i) for i in idx):
        raise InvalidArgumentError("indices are unknown while tracing, but the output length is max(indices) + 1: "
                                   "a value; allowed: indices known when the function is traced", op)
    hosts = [i.numpy().reshape(-1) for i in idx]  # known: the output length is a static size
    low = min((int(h.min()) for h in hosts if h.size), default=0)
    if low < 0:
        raise InvalidArgumentError(f"indices hold {low}; allowed: values >= 0", op)
    size = max((int(h.max()) + 1 for h in hosts if h.size), default=0)
    flat_i = concat([reshape(cast(i, _dt.int32), [-1]) for i in idx], 0)
    flat_d = concat([reshape(d, [-1] + [s if s is not None else -1 for s in inner]) if None not in inner
                     else reshape(d, concat([[-1], shape(d)[len(i._shape):]], 0)) for i, d in zip(idx, ds)], 0)
    last = unsorted_segment_max(range_(_dim(flat_i, 0)), flat_i, size)
    present = less(-1, last)
    got = gather(flat_d, where(present, last, zeros_like(last)))
    mask = reshape(present, [-1] + [1] * len(inner))
    return where(mask, got, zeros_like(got))


# ---- unravel_index, shape_n, broadcast shapes ---------------------------------------------------

@register("unravel_index", "UnravelIndex", kind="composite")
def unravel_index(indices, dims, name=None):
    """The coordinates of flat ``indices`` in an array of shape ``dims``: shape ``[len(dims)] + indices.shape``,
    as ``tf.unravel_index``.

    >>> import tapeflow as tf
    >>> tf.unravel_index([5, 7], [3, 4]).numpy().tolist()
    [[1, 1], [1, 3]]
    """
    op = "UnravelIndex"
    if dims is None:
        raise TypeError(f"dims must be a vector of ints, got None [Op:{op}]")
    i = _int_tensor(indices, op, "indices")
    d = _t(dims, op, i._dtype if not isinstance(dims, Tensor) else None)
    if d._dtype is not i._dtype:
        raise InvalidArgumentError(f"dims has dtype {d._dtype.name} but indices has {i._dtype.name}; allowed: the "
                                   "same int32 or int64", op)
    if len(d._shape) != 1:
        raise InvalidArgumentError(f"dims has shape {tuple(d._shape)}; allowed: a vector", op)
    if len(i._shape) > 1:
        raise InvalidArgumentError(f"indices has shape {tuple(i._shape)}; allowed: a scalar or a vector", op)
    if _concrete(d) and _concrete(i):
        hd, hi = d.numpy(), i.numpy()
        if hd.size and hd.min() <= 0:
            raise InvalidArgumentError(f"dims = {hd.tolist()}; allowed: positive sizes", op)
        total = int(np.prod(hd.astype(object))) if hd.size else 1
        if hi.size and (hi.min() < 0 or hi.max() >= total):
            raise InvalidArgumentError("index is out of bound as with dims", op)
    strides = cumprod(d, exclusive=True, reverse=True)
    shp = [-1] + [1] * len(i._shape)
    return floormod(floordiv(expand_dims(i, 0), reshape(strides, shp)), reshape(d, shp))


@register("shape_n", "ShapeN", kind="composite")
def shape_n(input, out_type=_dt.int32, name=None):
    """``[tf.shape(x) for x in input]``, as ``tf.shape_n``.

    >>> import tapeflow as tf
    >>> [s.numpy().tolist() for s in tf.shape_n([tf.ones([2, 3]), tf.ones([4])])]
    [[2, 3], [4]]
    """
    op = "ShapeN"
    dt = dtype_arg(out_type, op, "out_type")
    if dt not in _INTS:
        raise InvalidArgumentError(f"out_type = {dt.name}; allowed: int32, int64", op)
    if not isinstance(input, (list, tuple)):
        raise TypeError(f"input must be a list of tensors, got {type(input).__name__} [Op:{op}]")
    return [shape(_t(x, op), out_type=dt) for x in input]


def _broadcast_dims(a, b, what):
    out = []
    for k in range(max(len(a), len(b))):
        x = a[len(a) - 1 - k] if k < len(a) else 1
        y = b[len(b) - 1 - k] if k < len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1 or y is None and x is not None:
            out.append(x if y == 1 else x)
        elif x is None:
            out.append(y)
        elif x == y:
            out.append(x)
        else:
            raise what
    return tuple(reversed(out))


def broadcast_static_shape(shape_x, shape_y):
    """The static shape that tensors of shapes ``shape_x`` and ``shape_y`` broadcast to, as
    ``tf.broadcast_static_shape`` (``None`` dimensions stay unknown unless the other side knows them).

    >>> import tapeflow as tf
    >>> tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3]))
    TensorShape([2, 3])
    """
    a = tuple(TensorShape(shape_x))
    b = tuple(TensorShape(shape_y))
    err = ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension pair "
                     f"they are either equal or one of them is 1. Received: {a} and {b}.")
    return TensorShape(_broadcast_dims(a, b, err))


@register("broadcast_dynamic_shape", "BroadcastArgs", kind="composite")
def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (a 1-D int tensor) that tensors of shapes ``shape_x`` and ``shape_y`` broadcast to, as
    ``tf.broadcast_dynamic_shape``.

    >>> import tapeflow as tf
    >>> tf.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist()
    [2, 3]
    """
    op = "BroadcastArgs"
    x, y = _int_tensor(shape_x, op, "shape_x"), _int_tensor(shape_y, op, "shape_y")
    if x._dtype is not y._dtype:
        y = cast(y, x._dtype) if not isinstance(shape_y, Tensor) else y
        if x._dtype is not y._dtype:
            raise InvalidArgumentError(f"shape_x is {x._dtype.name} but shape_y is {y._dtype.name}; allowed: one "
                                       "dtype", op)
    if len(x._shape) != 1 or len(y._shape) != 1 or None in (x._shape[0], y._shape[0]):
        raise InvalidArgumentError(f"shapes of shape {tuple(x._shape)} and {tuple(y._shape)}; allowed: vectors of "
                                   "known length", op)
    n = max(x._shape[0], y._shape[0])
    xp = concat([ones([n - x._shape[0]], x._dtype), x], 0)
    yp = concat([ones([n - y._shape[0]], x._dtype), y], 0)
    if _concrete(xp) and _concrete(yp):
        a, b = xp.numpy(), yp.numpy()
        if not np.all((a == b) | (a == 1) | (b == 1)):
            raise InvalidArgumentError(f"Incompatible shapes: {x.numpy().tolist()} vs. {y.numpy().tolist()}", op)
    return where(equal(xp, 1), yp, xp)


# ---- saturate_cast, realdiv, parallel_stack ----------------------------------------------------

def _limits(dt):
    if dt.is_floating:
        f = np.finfo(dt.as_numpy_dtype if dt not in (_dt.bfloat16,) else np.float32)
        if dt is _dt.bfloat16:
            return -3.3895313892515355e38, 3.3895313892515355e38
        return float(f.min), float(f.max)
    i = np.iinfo(dt.as_numpy_dtype)
    return int(i.min), int(i.max)


def _below(v, dt, up):
    """The value of ``dt`` nearest ``v`` on the inside (``up``: not below it) so casting it back stays in range."""
    if not dt.is_floating:
        return v
    npdt = np.float32 if dt in (_dt.float16, _dt.bfloat16, _dt.float32) else np.float64
    if dt is _dt.float16:
        npdt = np.float16
    f = npdt(v)
    if (float(f) < v) if up else (float(f) > v):  # Python compares a float with an int exactly
        f = np.nextafter(f, npdt(np.inf) if up else npdt(-np.inf))
    return float(f)


@register("saturate_cast", "SaturateCast", kind="composite")
def saturate_cast(value, dtype, name=None):
    """``value`` cast to ``dtype`` after clamping it to ``dtype``'s range (no wrap-around), as
    ``tf.saturate_cast``.  A float clamped for a 64-bit integer stops at the largest float below 2**63.

    >>> import tapeflow as tf
    >>> tf.saturate_cast(tf.constant([300.0, -5.0]), tf.uint8).numpy().tolist()
    [255, 0]
    """
    op = "SaturateCast"
    dt = dtype_arg(dtype, op)
    x = _t(value, op)
    if x._dtype in (_dt.string, _dt.complex64, _dt.complex128) or dt in (_dt.string, _dt.complex64, _dt.complex128):
        raise InvalidArgumentError(f"saturate_cast from {x._dtype.name} to {dt.name}; allowed: real numbers and "
                                   f"bool", op)
    if x._dtype is _dt.bool_ or dt is _dt.bool_ or x._dtype is dt:
        return cast(x, dt)
    lo_x, hi_x = _limits(x._dtype)
    lo_t, hi_t = _limits(dt)
    lo, hi = max(lo_x, lo_t), min(hi_x, hi_t)
    if (lo, hi) != (lo_x, hi_x):
        lo, hi = _below(lo, x._dtype, True), _below(hi, x._dtype, False)
        x = clip_by_value(x, cast(lo, x._dtype) if lo > lo_x else lo_x, cast(hi, x._dtype))
    return cast(x, dt)


@register("realdiv", "RealDiv", kind="composite")
def realdiv(x, y, name=None):
    """``x / y`` for real floating tensors (broadcasting), as ``tf.realdiv``; integers are refused as
    TensorFlow's RealDiv has no integer kernel.

    >>> import tapeflow as tf
    >>> float(tf.realdiv(1.0, 2.0))
    0.5
    """
    op = "RealDiv"
    a = _t(x, op)
    b = _t(y, op, a._dtype if not isinstance(y, Tensor) else None)
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        a = _t(x, op, b._dtype)
    for t in (a, b):
        if not t._dtype.is_floating:
            raise InvalidArgumentError(f"x and y have dtypes {a._dtype.name} and {b._dtype.name}; allowed: "
                                       "float16, bfloat16, float32, float64", op)
    if a._dtype is not b._dtype:
        raise InvalidArgumentError(f"x is {a._dtype.name} but y is {b._dtype.name}; allowed: one dtype", op)
    return divide(a, b)


@register("parallel_stack", "ParallelConcat", kind="composite")
def parallel_stack(values, name="parallel_stack"):
    """``tf.stack(values, axis=0)`` inside ``tf.function``, as ``tf.parallel_stack``; eagerly it raises
    ``RuntimeError`` as TensorFlow's does (use ``tf.stack``).

    >>> import tapeflow as tf
    >>> f = tf.function(lambda a, b: tf.parallel_stack([a, b]))
    >>> f(tf.constant([1, 2]), tf.constant([3, 4])).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    if current_graph() is None:
        raise RuntimeError("tf.parallel_stack() is not compatible with eager execution.")
    if not isinstance(values, (list, tuple)) or not values:
        raise TypeError(f"values must be a non-empty list of tensors, got {values!r:.60} [Op:ParallelConcat]")
    return stack(list(values), axis=0)


# ---- space_to_batch / batch_to_space -----------------------------------------------------------

def _block(block_shape, op):
    b = _t(block_shape, op)
    if b._dtype not in _INTS or len(b._shape) != 1 or not _concrete(b):
        raise InvalidArgumentError(f"block_shape is a {b._dtype.name} tensor of shape {tuple(b._shape)}; allowed: "
                                   "a known vector of ints", op)
    bs = [int(v) for v in b.numpy().tolist()]
    if not bs or min(bs) < 1:
        raise InvalidArgumentError(f"block_shape = {bs}; allowed: one or more sizes >= 1", op)
    return bs


def _pairs(p, m, op, what):
    t = _t(p, op)
    if t._dtype not in _INTS or tuple(t._shape) != (m, 2) or not _concrete(t):
        raise InvalidArgumentError(f"{what} is a {t._dtype.name} tensor of shape {tuple(t._shape)}; allowed: known "
                                   f"ints of shape ({m}, 2)", op)
    v = [[int(a), int(b)] for a, b in t.numpy().tolist()]
    if any(a < 0 or b < 0 for a, b in v):
        raise InvalidArgumentError(f"{what} = {v}; allowed: values >= 0", op)
    return v


def _target(dims, op):
    """A reshape target from dims (ints, None for unknown): one unknown becomes -1, more cannot be traced."""
    unknown = [k for k, d in enumerate(dims) if d is None]
    if len(unknown) > 1:
        raise InvalidArgumentError(f"dimensions {unknown} of the reshaped blocks are unknown while tracing; allowed: "
                                   f"at most one unknown dimension (the batch)", op)
    return [-1 if d is None else int(d) for d in dims]


@register("space_to_batch_nd", "SpaceToBatchND", kind="composite")
def space_to_batch_nd(input, block_shape, paddings, name=None):
    """Zero-pads the ``M = len(block_shape)`` spatial axes after the batch by ``paddings`` and moves each
    ``block_shape`` block of them into the batch: ``[B, *S, *R] -> [B * prod(block), *(S + pads) / block, *R]``,
    as ``tf.space_to_batch_nd``.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(4), [1, 2, 2, 1])
    >>> tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]).numpy().reshape(-1).tolist()
    [0, 1, 2, 3]
    """
    op = "SpaceToBatchND"
    x = _t(input, op)
    bs = _block(block_shape, op)
    m = len(bs)
    if len(x._shape) < m + 1:
        raise InvalidArgumentError(f"input has rank {len(x._shape)}; allowed: rank >= 1 + len(block_shape) = "
                                   f"{m + 1}", op)
    pads = _pairs(paddings, m, op, "paddings")
    nd = len(x._shape)
    xp = pad(x, [[0, 0]] + pads + [[0, 0]] * (nd - 1 - m))
    for k in range(m):
        d = xp._shape[1 + k]
        if d is not None and d % bs[k]:
            raise InvalidArgumentError(f"padded spatial dimension {k} is {d}, not a multiple of block_shape[{k}] = "
                                       f"{bs[k]}", op)
    sp = [None if xp._shape[1 + k] is None else xp._shape[1 + k] // bs[k] for k in range(m)]
    split = [xp._shape[0]]
    for k in range(m):
        split += [sp[k], bs[k]]
    split += list(xp._shape[1 + m:])
    y = reshape(xp, _target(split, op))
    perm = [2 + 2 * k for k in range(m)] + [0] + [1 + 2 * k for k in range(m)] + list(range(1 + 2 * m, nd + m))
    y = transpose(y, perm)
    b0 = None if xp._shape[0] is None else xp._shape[0] * int(np.prod(bs))
    return reshape(y, _target([b0] + sp + list(xp._shape[1 + m:]), op))


def space_to_batch(input, block_shape, paddings, name=None):
    """``tf.space_to_batch`` of TensorFlow 2: the same as ``tf.space_to_batch_nd``.

    >>> import tapeflow as tf
    >>> tf.space_to_batch(tf.ones([1, 4, 4, 1]), [2, 2], [[0, 0], [0, 0]]).shape
    TensorShape([4, 2, 2, 1])
    """
    return space_to_batch_nd(input, block_shape, paddings, name)


@register("batch_to_space", "BatchToSpaceND", kind="composite")
def batch_to_space(input, block_shape, crops, name=None):
    """The inverse of ``tf.space_to_batch_nd``: moves batch blocks back into the ``M = len(block_shape)``
    spatial axes and crops them by ``crops``, as ``tf.batch_to_space``.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(4), [4, 1, 1, 1])
    >>> tf.batch_to_space(x, [2, 2], [[0, 0], [0, 0]]).numpy().reshape(2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    op = "BatchToSpaceND"
    x = _t(input, op)
    bs = _block(block_shape, op)
    m = len(bs)
    nd = len(x._shape)
    if nd < m + 1:
        raise InvalidArgumentError(f"input has rank {nd}; allowed: rank >= 1 + len(block_shape) = {m + 1}", op)
    cr = _pairs(crops, m, op, "crops")
    nb = int(np.prod(bs))
    b = x._shape[0]
    if b is not None and b % nb:
        raise InvalidArgumentError(f"input batch {b} is not a multiple of prod(block_shape) = {nb}", op)
    b1 = None if b is None else b // nb
    y = reshape(x, _target(list(bs) + [b1] + list(x._shape[1:]), op))
    perm = [m] + [q for k in range(m) for q in (m + 1 + k, k)] + list(range(2 * m + 1, nd + m))
    y = transpose(y, perm)
    sp = [None if x._shape[1 + k] is None else x._shape[1 + k] * bs[k] for k in range(m)]
    y = reshape(y, _target([b1] + sp + list(x._shape[1 + m:]), op))
    for k in range(m):
        d = y._shape[1 + k]
        if d is not None and cr[k][0] + cr[k][1] > d:
            raise InvalidArgumentError(f"crops[{k}] = {cr[k]} remove more than the {d} entries of spatial dimension "
                                       f"{k}", op)
    key = (slice(None),) + tuple(slice(a, (-b) if b else None) for a, b in cr)
    return y[key]


# ---- histogram_fixed_width_bins ----------------------------------------------------------------

@register("histogram_fixed_width_bins", "HistogramFixedWidthBins", kind="composite")
def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dt.int32, name=None):
    """The bin of each value among ``nbins`` equal bins over ``value_range = [lo, hi]`` (values below ``lo`` go
    to bin 0, at or above ``hi`` to bin ``nbins - 1``), as ``tf.histogram_fixed_width_bins``.

    >>> import tapeflow as tf
    >>> tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5).numpy().tolist()
    [0, 0, 1, 2, 4, 4]
    """
    op = "HistogramFixedWidthBins"
    dt = dtype_arg(dtype, op)
    if dt not in _INTS:
        raise InvalidArgumentError(f"dtype = {dt.name}; allowed: int32, int64", op)
    v = _t(values, op)
    if v._dtype not in _dt.NUMERIC or v._dtype is _dt.bool_:
        raise InvalidArgumentError(f"values have dtype {v._dtype.name}; allowed: real numbers", op)
    r = _t(value_range, op, v._dtype if not isinstance(value_range, Tensor) else None)
    if r._dtype is not v._dtype or not _compatible(tuple(r._shape), (2,)):
        raise InvalidArgumentError(f"value_range is a {r._dtype.name} tensor of shape {tuple(r._shape)}; allowed: "
                                   f"2 values of the values' dtype {v._dtype.name}", op)
    n = _t(nbins, op)
    if n._dtype not in _INTS or n._shape:
        raise InvalidArgumentError(f"nbins is a {n._dtype.name} tensor of shape {tuple(n._shape)}; allowed: a "
                                   "scalar int", op)
    if _concrete(n) and int(n.numpy()) <= 0:
        raise InvalidArgumentError(f"nbins = {int(n.numpy())}; allowed: > 0", op)
    ft = v._dtype if v._dtype.is_floating else _dt.float64
    vf, rf = cast(v, ft), cast(r, ft)
    lo, hi = rf[0], rf[1]
    scaled = divide(subtract(vf, lo), subtract(hi, lo))
    nf = cast(n, ft)
    idx = floor(multiply(scaled, nf))
    idx = clip_by_value(idx, cast(0, ft), subtract(nf, 1))
    return cast(idx, dt)

