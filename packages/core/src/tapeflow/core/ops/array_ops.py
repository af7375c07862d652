"""Shape ops: creation, shapes, reshaping, joining and splitting, padding, select/where.

Every op here moves bytes through one kernel launch where it can (concat, split, unstack, tile,
pad, ...), so all dtypes work, float16/bfloat16/bool included.  Slicing and ``t[key]`` live in
slice_ops, gather/scatter/segment sums/one_hot/boolean_mask in index_ops, scans and sorting in
sort_ops; their names stay importable from here.
"""
from __future__ import annotations

import math as _math
import numbers

import numpy as np

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    dtype_arg,
    hooks,
    kernel_failed,
    normalize_axis,
    register,
    scoped,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..tensor import Tensor, constant, make
from . import _ew
from ._shape import (
    _HALF,
    _INDEX,
    _NUMERIC,
    _ONE,
    _contig_strides,
    _creation_device,
    _int_arg,
    _names,
    _place,
    _place_all,
    _prod,
    _record,
    _scope,
    _shape_arg,
    _unvar,
    _value_bytes,
    _zeros,
    strided_copy,
)

# ---- creation ---------------------------------------------------------------

@register("fill", "Fill", nondiff="creates a constant")
def fill(dims, value, dtype=None, name=None):
    """A tensor of shape ``dims`` filled with ``value``.

    >>> import tapeflow as tf
    >>> tf.fill([2, 2], 7).numpy().tolist()
    [[7, 7], [7, 7]]
    """
    shape = _shape_arg(dims, "Fill", "dims")
    if any(d < 0 for d in shape):
        raise InvalidArgumentError(f"dims must be non-negative, got {list(shape)}", "Fill")
    if isinstance(value, Tensor):
        dtype = dtype or value._dtype
        value = value.numpy()
    if dtype is None:
        dtype = _dt.bool_ if isinstance(value, (bool, np.bool_)) else \
            _dt.int32 if isinstance(value, (int, np.integer)) else _dt.float32
    dtype = dtype_arg(dtype, "Fill")
    dev = _creation_device()
    out = alloc(shape, dtype, dev)
    be = dev.backend
    raw = np.asarray(value).astype(dtype.np).tobytes()
    st = be.fill(dtype.size, be.host_ptr(raw), out._h, out._size)
    if st:
        kernel_failed(st, "fill", "Fill")
    return out


@register("zeros", "Zeros", kind="composite")
def zeros(shape, dtype=_dt.float32, name=None):
    """A tensor of zeros.

    >>> import tapeflow as tf
    >>> print(tf.zeros([1, 1, 784]).shape)
    (1, 1, 784)
    """
    return fill(shape, 0, dtype_arg(dtype, "Zeros"))


@register("ones", "Ones", kind="composite")
def ones(shape, dtype=_dt.float32, name=None):
    """A tensor of ones.

    >>> import tapeflow as tf
    >>> tf.ones([2]).numpy().tolist()
    [1.0, 1.0]
    """
    return fill(shape, 1, dtype_arg(dtype, "Ones"))


@register("zeros_like", "ZerosLike", kind="composite")
def zeros_like(input, dtype=None, name=None):
    """Zeros of ``input``'s shape and dtype.

    >>> import tapeflow as tf
    >>> tf.zeros_like(tf.constant([1, 2])).numpy().tolist()
    [0, 0]
    """
    x = to_tensor(input, "ZerosLike")
    with _device.device(_device.current() or x._dev):
        return fill(x._shape, 0, x._dtype if dtype is None else dtype_arg(dtype, "ZerosLike"))


@register("ones_like", "OnesLike", kind="composite")
def ones_like(input, dtype=None, name=None):
    """Ones of ``input``'s shape and dtype.

    >>> import tapeflow as tf
    >>> tf.ones_like(tf.constant([1.5, 2.5])).numpy().tolist()
    [1.0, 1.0]
    """
    x = to_tensor(input, "OnesLike")
    with _device.device(_device.current() or x._dev):
        return fill(x._shape, 1, x._dtype if dtype is None else dtype_arg(dtype, "OnesLike"))


@register("eye", "Eye", nondiff="creates a constant")
def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dt.float32, name=None):
    """An identity matrix (ones on the diagonal), optionally batched.

    >>> import tapeflow as tf
    >>> tf.eye(2, 3, dtype=tf.int32).numpy().tolist()
    [[1, 0, 0], [0, 1, 0]]
    """
    rows = _int_arg(num_rows, "Eye", "num_rows")
    cols = rows if num_columns is None else _int_arg(num_columns, "Eye", "num_columns")
    batch = () if batch_shape is None else _shape_arg(batch_shape, "Eye", "batch_shape")
    if rows < 0 or cols < 0 or any(d < 0 for d in batch):
        raise InvalidArgumentError(f"num_rows = {rows}, num_columns = {cols}, batch_shape = {list(batch)}; "
                                   "allowed: non-negative sizes", "Eye")
    dtype = dtype_arg(dtype, "Eye")
    dev = _creation_device()
    out = _zeros(batch + (rows, cols), dtype, dev)
    nb, nd = _prod(batch), min(rows, cols)
    if nb and nd:
        with _device.device(dev):
            one = fill((), 1, dtype)
        strided_copy(one, (nb, nd), 0, (0, 0), out=out, dst_strides=(rows * cols, cols + 1), op="Eye")
    return out


def _range_dtype(vals):
    order = [_dt.int32, _dt.int64, _dt.float32, _dt.float64]
    best = 0
    for v in vals:
        if isinstance(v, Tensor):
            d = v._dtype
            best = max(best, order.index(d) if d in order else (2 if d.is_floating else 1))
        elif isinstance(v, (float, np.floating)):
            best = max(best, 2)
        elif not -(2 ** 31) <= int(v) < 2 ** 31:
            best = max(best, 1)
    return order[best]


@register("range", "Range", nondiff="creates a constant")
def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """Numbers from ``start`` up to (not including) ``limit`` by ``delta``: start + i * delta.

    >>> import tapeflow as tf
    >>> tf.range(5).numpy().tolist(), tf.range(1.0, 2.0, 0.5).numpy().tolist()
    ([0, 1, 2, 3, 4], [1.0, 1.5])
    """
    if limit is None:
        start, limit = 0, start
    if type(start) is int and type(limit) is int and type(delta) is int and dtype is None and delta > 0 \
            and 0 <= start <= limit < 2 ** 31:  # the common tf.range(n): int32, no checks left to make
        n = -((start - limit) // delta)
        dev = _creation_device()
        out = alloc((n,), _dt.int32, dev)
        st = dev.backend.iota(_dt.int32.code, 0.0, 0.0, start, delta, out._h, n)
        if st:
            kernel_failed(st, "iota", "Range")
        return out
    raw = [v if isinstance(v, Tensor) else to_tensor(v, "Range") if hasattr(v, "_as_tensor") else v
           for v in (start, limit, delta)]
    for what, v in zip(("start", "limit", "delta"), raw):
        if isinstance(v, Tensor):
            if v._size != 1 or v._shape:
                raise InvalidArgumentError(f"{what} must be a scalar, got shape {tuple(v._shape)}", "Range")
        elif isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number)):
            raise InvalidArgumentError(f"{what} must be a number, got {v!r}", "Range")
    dtype = dtype_arg(dtype, "Range") if dtype is not None else _range_dtype(raw)
    if dtype.is_bool:
        raise InvalidArgumentError("dtype bool; allowed: " + _names(_NUMERIC), "Range")
    vals = [v._host().item() if isinstance(v, Tensor) else v for v in raw]
    if dtype.is_integer:
        if any(float(v) != int(v) for v in vals):
            raise InvalidArgumentError(f"start, limit, delta = {vals} cannot be represented as {dtype.name}", "Range")
        s, lim, d = (int(v) for v in vals)
    else:
        s, lim, d = (float(np.asarray(v).astype(dtype.np if dtype not in _HALF else np.float32)) for v in vals)
    if d == 0:
        raise InvalidArgumentError("delta = 0; allowed: a non-zero delta", "Range")
    if d > 0 and s > lim:
        raise InvalidArgumentError(f"start = {s} > limit = {lim} with delta = {d} > 0; allowed: start <= limit "
                                   "when delta > 0", "Range")
    if d < 0 and s < lim:
        raise InvalidArgumentError(f"start = {s} < limit = {lim} with delta = {d} < 0; allowed: start >= limit "
                                   "when delta < 0", "Range")
    n = -((s - lim) // d) if dtype.is_integer else _math.ceil((lim - s) / d)
    if dtype.is_integer and n and not (dtype.min <= s + (n - 1) * d <= dtype.max):
        raise InvalidArgumentError(f"range({s}, {lim}, {d}) leaves the range of {dtype.name}", "Range")
    dev = _creation_device()
    out = alloc((n,), dtype, dev)
    if dtype.is_integer:
        st = dev.backend.iota(dtype.code, 0.0, 0.0, s, d, out._h, n)
    else:
        st = dev.backend.iota(dtype.code, s, d, 0, 0, out._h, n)
    if st:
        kernel_failed(st, "iota", "Range")
    return out


@register("linspace", "LinSpace", kind="composite")
def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive: start + i * (stop - start) / (num - 1).

    Python-number ends run one kernel; tensor ends (any matching shapes) are
    differentiable and put the new axis at ``axis``.

    >>> import tapeflow as tf
    >>> tf.linspace(0.0, 1.0, 5).numpy().tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    n = _int_arg(num, "LinSpace", "num")
    if n < 0:
        raise InvalidArgumentError(f"num = {n}; allowed: num >= 0", "LinSpace")
    plain = all(isinstance(v, (numbers.Real, np.number)) and not isinstance(v, (bool, np.bool_))
                for v in (start, stop))
    if plain:
        normalize_axis(axis, 1, "LinSpace")  # the output is 1-D: axis 0 or -1
        kinds = [_dt.as_dtype(v.dtype) if isinstance(v, np.floating) else _dt.float32 if isinstance(v, float)
                 else _dt.float64 for v in (start, stop)]  # Python ints give float64, as in TensorFlow
        dtype = kinds[0] if kinds[0] is kinds[1] else _dt.float64 if _dt.float64 in kinds else _dt.float32
        dev = _creation_device()
        out = alloc((n,), dtype, dev)
        st = dev.backend.linspace(dtype.code, float(start), float(stop), out._h, n)
        if st:
            kernel_failed(st, "linspace", "LinSpace")
        return out
    a, b = _ew.coerce_pair(_unvar(start, "LinSpace"), _unvar(stop, "LinSpace"), "LinSpace")
    if a._dtype is not b._dtype:
        _ew.dtype_mismatch(a, b, "LinSpace")
    if not a._dtype.is_floating:
        from .math_ops import cast

        a, b = cast(a, _dt.float64), cast(b, _dt.float64)
    shape = _ew.broadcast_shape(a._shape, b._shape, "LinSpace")
    ax = normalize_axis(axis, len(shape) + 1, "LinSpace")
    with _device.device(a._dev):
        ramp = alloc((n,), a._dtype, a._dev)
        st = a._dev.backend.linspace(a._dtype.code, 0.0, 1.0, ramp._h, n)
        if st:
            kernel_failed(st, "linspace", "LinSpace")
        a2, b2 = expand_dims(a, -1), expand_dims(b, -1)
        out = a2 + ramp * (b2 - a2)
        if n > 1:  # the last value is exactly stop
            out = concat([out[..., :-1], broadcast_to(b2, shape + (1,))], -1)
        if ax != len(shape):
            perm = list(range(len(shape)))
            perm.insert(ax, len(shape))
            out = transpose(out, perm)
    return out


@register("meshgrid", "Meshgrid", kind="composite")
def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D coordinate vectors (``indexing`` "xy", the default, or "ij").

    >>> import tapeflow as tf
    >>> x, y = tf.meshgrid([1, 2], [3, 4, 5])
    >>> x.numpy().tolist(), y.numpy().tolist()
    ([[1, 2], [1, 2], [1, 2]], [[3, 3], [4, 4], [5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise InvalidArgumentError(f"unexpected arguments {sorted(kwargs)}; allowed: indexing, name", "Meshgrid")
    if indexing not in ("xy", "ij"):
        raise InvalidArgumentError(f"indexing = {indexing!r}; allowed: 'xy', 'ij'", "Meshgrid")
    ts = [reshape(to_tensor(a, "Meshgrid"), [-1]) for a in args]
    if not ts:
        return []
    lens = [t._shape[0] for t in ts]
    if indexing == "xy" and len(ts) > 1:
        lens[0], lens[1] = lens[1], lens[0]
    outs = []
    for i, t in enumerate(ts):
        pos = i if indexing == "ij" or len(ts) < 2 else (1 if i == 0 else 0 if i == 1 else i)
        shape = [1] * len(ts)
        shape[pos] = t._shape[0]
        outs.append(broadcast_to(reshape(t, shape), lens))
    return outs


# ---- shape, size, rank -------------------------------------------------------

def _out_type(out_type, op):
    dt = dtype_arg(out_type, op, "out_type")
    if dt not in _INDEX:
        raise InvalidArgumentError(f"out_type = {dt.name}; allowed: int32, int64", op)
    return dt


def _meta_tensor(value, dtype):
    with _device.device(_creation_device()):
        return constant(np.asarray(value, dtype.np))


@register("shape", "Shape", nondiff="integer output (the input's shape)")
def shape(input, out_type=_dt.int32, name=None):
    """The shape of ``input`` as a 1-D integer tensor.

    >>> import tapeflow as tf
    >>> tf.shape(tf.zeros([2, 3])).numpy().tolist()
    [2, 3]
    """
    x = to_tensor(input, "Shape")
    return _meta_tensor(list(x._shape), _out_type(out_type, "Shape"))


@register("size", "Size", nondiff="integer output (the number of elements)")
def size(input, out_type=_dt.int32, name=None):
    """The number of elements of ``input`` as a scalar integer tensor.

    >>> import tapeflow as tf
    >>> int(tf.size(tf.zeros([2, 3])))
    6
    """
    x = to_tensor(input, "Size")
    return _meta_tensor(x._size, _out_type(out_type, "Size"))


@register("rank", "Rank", nondiff="integer output (the number of axes)")
def rank(input, name=None):
    """The number of axes of ``input`` as a scalar int32 tensor.

    >>> import tapeflow as tf
    >>> int(tf.rank(tf.zeros([2, 3])))
    2
    """
    x = to_tensor(input, "Rank")
    return _meta_tensor(len(x._shape), _dt.int32)


# ---- views (no copy) --------------------------------------------------------

def _view(x: Tensor, shape) -> Tensor:
    host = x._arr.reshape(shape) if x._arr is not None else None
    return make(x._h, host, tuple(shape), x._dtype, x._dev, x._size)


@register("reshape", "Reshape")
def reshape(tensor, shape, name=None):
    """The same values in a new shape (one dimension may be -1).  No copy.

    >>> import tapeflow as tf
    >>> tf.reshape(tf.range(6), [2, -1]).numpy().tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    x = scoped(tensor if type(tensor) is Tensor else to_tensor(tensor, "Reshape"))
    shape = _shape_arg(shape, "Reshape")
    if shape.count(-1) > 1:
        raise InvalidArgumentError(f"only one dimension may be -1, got {list(shape)}", "Reshape")
    if -1 in shape:
        known = _prod(d for d in shape if d != -1)
        if known == 0 or x._size % known:
            raise InvalidArgumentError(
                f"cannot reshape a tensor with {x._size} elements to shape {list(shape)}", "Reshape")
        shape = tuple(x._size // known if d == -1 else d for d in shape)
    if any(d < 0 for d in shape) or _prod(shape) != x._size:
        raise InvalidArgumentError(
            f"cannot reshape a tensor with {x._size} elements (shape {tuple(x._shape)}) to shape {list(shape)} "
            f"({_prod(shape)} elements)", "Reshape")
    out = _view(x, shape)
    rec = hooks.recorder
    if rec is not None:
        rec("reshape", (x,), out, {"shape": shape})
    return out


@register("identity", "Identity")
def identity(input, name=None):
    """The same value as a new tensor (shares memory).

    >>> import tapeflow as tf
    >>> tf.identity(tf.constant([1.0])).numpy().tolist()
    [1.0]
    """
    x = scoped(input if type(input) is Tensor else to_tensor(input, "Identity"))
    out = _view(x, x._shape)
    rec = hooks.recorder
    if rec is not None:
        rec("identity", (x,), out, None)
    return out


@register("squeeze", "Squeeze", kind="composite")
def squeeze(input, axis=None, name=None):
    """Remove axes of size 1 (all of them, or those in ``axis``).  No copy.

    >>> import tapeflow as tf
    >>> tf.squeeze(tf.zeros([1, 2, 1]), axis=0).shape
    TensorShape([2, 1])
    """
    x = to_tensor(input, "Squeeze")
    nd = len(x._shape)
    if axis is None:
        new = [d for d in x._shape if d != 1]
    else:
        axes = [axis] if isinstance(axis, (int, np.integer)) else list(_shape_arg(axis, "Squeeze", "axis"))
        norm = set()
        for a in axes:
            a = int(a)
            if not -nd <= a < nd:
                raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {nd}; allowed: "
                                           f"[{-nd}, {nd})", "Squeeze")
            a %= nd
            if x._shape[a] != 1:
                raise InvalidArgumentError(f"cannot squeeze axis {a} of size {x._shape[a]} (shape "
                                           f"{tuple(x._shape)}); allowed: axes of size 1", "Squeeze")
            norm.add(a)
        new = [d for i, d in enumerate(x._shape) if i not in norm]
    return reshape(x, new)


@register("expand_dims", "ExpandDims", kind="composite")
def expand_dims(input, axis, name=None):
    """Insert an axis of size 1 at ``axis`` (negative counts from the end).  No copy.

    >>> import tapeflow as tf
    >>> tf.expand_dims(tf.zeros([2, 3]), -1).shape
    TensorShape([2, 3, 1])
    """
    x = to_tensor(input, "ExpandDims")
    nd = len(x._shape)
    a = _int_arg(axis, "ExpandDims", "axis")
    if not -(nd + 1) <= a <= nd:
        raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {nd}; allowed: "
                                   f"[{-(nd + 1)}, {nd}]", "ExpandDims")
    a = a % (nd + 1)
    return reshape(x, x._shape[:a] + (1,) + x._shape[a:])


# ---- transpose, broadcast, tile, reverse ---------------------------------------

@register("transpose", "Transpose")
def transpose(a, perm=None, conjugate=False, name=None):
    """Permute the axes (reverse them by default).

    >>> import tapeflow as tf
    >>> tf.transpose(tf.constant([[1, 2, 3]])).numpy().tolist()
    [[1], [2], [3]]
    """
    x = a if type(a) is Tensor else to_tensor(a, "Transpose")
    nd = len(x._shape)
    if perm is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = _shape_arg(perm, "Transpose", "perm")
        if len(perm) != nd or sorted(p % nd if nd and -nd <= p < nd else -1 for p in perm) != list(range(nd)):
            raise InvalidArgumentError(f"perm {list(perm)} is not a permutation of the {nd} axes of "
                                       f"shape {tuple(x._shape)}", "Transpose")
        perm = tuple(p % nd for p in perm)
    shape = tuple(x._shape[p] for p in perm)
    if perm == tuple(range(nd)):
        out = _view(x, shape)
    else:
        _, x = _place(x)
        strides = _contig_strides(x._shape)
        out = strided_copy(x, shape, 0, [strides[p] for p in perm], op="Transpose")
    rec = hooks.recorder
    if rec is not None:
        rec("transpose", (x,), out, {"perm": perm})
    return out


@register("broadcast_to", "BroadcastTo")
def broadcast_to(input, shape, name=None):
    """``input`` repeated along axes of size 1 (and new leading axes) to ``shape``.

    >>> import tapeflow as tf
    >>> tf.broadcast_to(tf.constant([1, 2]), [2, 2]).numpy().tolist()
    [[1, 2], [1, 2]]
    """
    x = input if type(input) is Tensor else to_tensor(input, "BroadcastTo")
    shape = _shape_arg(shape, "BroadcastTo")
    target = _ew.broadcast_shape(x._shape, shape, "BroadcastTo") if len(shape) >= len(x._shape) else None
    if target != shape:
        raise InvalidArgumentError(f"cannot broadcast shape {tuple(x._shape)} to {shape}; allowed: a shape "
                                   "whose trailing dimensions equal the input's or where the input has 1",
                                   "BroadcastTo")
    if shape == x._shape:
        out = _view(x, shape)
    else:
        _, x = _place(x)
        out = strided_copy(x, shape, 0, _ew._strides_for(x._shape, shape), op="BroadcastTo")
    rec = hooks.recorder
    if rec is not None:
        rec("broadcast_to", (x,), out, {"shape": shape})
    return out


@register("tile", "Tile")
def tile(input, multiples, name=None):
    """``input`` repeated ``multiples[i]`` times along each axis i.

    >>> import tapeflow as tf
    >>> tf.tile(tf.constant([[1, 2]]), [2, 2]).numpy().tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = to_tensor(input, "Tile")
    mult = _shape_arg(multiples, "Tile", "multiples")
    nd = len(x._shape)
    if len(mult) != nd or any(m < 0 for m in mult):
        raise InvalidArgumentError(f"multiples = {list(mult)} for a tensor of rank {nd}; allowed: exactly {nd} "
                                   "non-negative ints", "Tile")
    _, x = _place(x)
    out_shape = tuple(m * d for m, d in zip(mult, x._shape))
    if out_shape == x._shape:
        out = _view(x, out_shape)
    else:
        strides = _contig_strides(x._shape)
        vshape, vstr = [], []  # the output seen as [m0, d0, m1, d1, ...]: repeats read with stride 0
        for m, d, s in zip(mult, x._shape, strides):
            for size, stride in ((m, 0), (d, s)):
                if size == 1:
                    continue
                if vshape and vstr[-1] == stride * size and (stride != 0 or vstr[-1] == 0):
                    vshape[-1] *= size
                    vstr[-1] = stride
                else:
                    vshape.append(size)
                    vstr.append(stride)
        if len(vshape) <= 12:
            out = strided_copy(x, vshape, 0, vstr, op="Tile")
            out = _view(out, out_shape)
        else:  # very high rank: one axis at a time
            out = x
            for i, m in enumerate(mult):
                if m != 1:
                    mm = [1] * nd
                    mm[i] = m
                    out = _tile_unrecorded(out, mm)
    _record("tile", (x,), out, {"multiples": mult})
    return out


def _tile_unrecorded(x, mult):
    with hooks.paused():
        return tile(x, mult)


def _axes_arg(axis, nd, op):
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(_shape_arg(axis, op, "axis"))
    out = []
    for a in axes:
        a = int(a)
        if not -nd <= a < nd:
            raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {nd}; allowed: "
                                       f"[{-nd}, {nd})", op)
        if a % nd in out:
            raise InvalidArgumentError(f"axis {list(axes)} repeats axis {a % nd}", op)
        out.append(a % nd)
    return tuple(sorted(out))


@register("reverse", "ReverseV2")
def reverse(tensor, axis, name=None):
    """``tensor`` with the order of elements reversed along each axis in ``axis``.

    >>> import tapeflow as tf
    >>> tf.reverse(tf.constant([[1, 2, 3]]), [1]).numpy().tolist()
    [[3, 2, 1]]
    """
    x = to_tensor(tensor, "ReverseV2")
    axes = _axes_arg(axis, len(x._shape), "ReverseV2")
    _, x = _place(x)
    strides = _contig_strides(x._shape)
    off, st = 0, list(strides)
    for a in axes:
        if x._shape[a] > 0:
            off += (x._shape[a] - 1) * strides[a]
        st[a] = -strides[a]
    out = strided_copy(x, x._shape, off, st, op="ReverseV2") if axes else _view(x, x._shape)
    _record("reverse", (x,), out, {"axis": axes})
    return out


# ---- joining and splitting -------------------------------------------------------

def _join_inputs(values, op):
    if type(values) in (list, tuple) and values and not _scope.stack:
        # the common case: tensors of one dtype on one device
        t0 = values[0]
        if type(t0) is Tensor:
            dt, dev = t0._dtype, t0._dev
            for t in values:
                if type(t) is not Tensor or t._dtype is not dt or t._dev is not dev:
                    break
            else:
                return dev, values
    values = list(values) if not isinstance(values, Tensor) else list(unstack(values))
    if not values:
        raise InvalidArgumentError("got an empty list; allowed: at least one tensor", op)
    first = next((v for v in values if isinstance(v, Tensor) or hasattr(v, "_as_tensor")), None)
    dtype = to_tensor(first, op)._dtype if first is not None else None
    ts = []
    for i, v in enumerate(values):
        t = to_tensor(v, op) if isinstance(v, Tensor) or hasattr(v, "_as_tensor") or dtype is None \
            else to_tensor(v, op, dtype)
        ts.append(t)
    dt = ts[0]._dtype
    for i, t in enumerate(ts):
        if t._dtype is not dt:
            raise InvalidArgumentError(f"values[{i}] has dtype {t._dtype.name} but values[0] has {dt.name}; "
                                       "allowed: one dtype for all values", op)
    dev, ts = _place_all(ts)
    return dev, ts


@register("concat", "ConcatV2")
def concat(values, axis, name=None):
    """Join tensors along an existing axis (one kernel launch for all of them).

    >>> import tapeflow as tf
    >>> tf.concat([tf.constant([[1, 2]]), tf.constant([[3, 4]])], axis=0).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    dev, ts = _join_inputs(values, "ConcatV2")
    s0 = ts[0]._shape
    nd = len(s0)
    if nd == 0:
        raise InvalidArgumentError("cannot concatenate scalars (rank 0); allowed: tensors of rank >= 1 "
                                   "(use tf.stack for scalars)", "ConcatV2")
    ax = normalize_axis(_int_arg(axis, "ConcatV2", "axis"), nd, "ConcatV2")
    for i, t in enumerate(ts):
        s = t._shape
        if len(s) != nd or s[:ax] != s0[:ax] or s[ax + 1:] != s0[ax + 1:]:
            raise InvalidArgumentError(f"values[{i}] has shape {tuple(s)} but values[0] has {tuple(s0)}; allowed: "
                                       f"shapes equal except along axis {ax}", "ConcatV2")
    out_shape = s0[:ax] + (sum(t._shape[ax] for t in ts),) + s0[ax + 1:]
    if len(ts) == 1:
        out = _view(ts[0], out_shape)
    else:
        outer, inner = _prod(s0[:ax]), _prod(s0[ax + 1:])
        out = alloc(out_shape, ts[0]._dtype, dev)
        st = dev.backend.concat(ts[0]._dtype.size, len(ts), [t._h for t in ts],
                                [t._shape[ax] * inner for t in ts], outer, out._h)
        if st:
            kernel_failed(st, "concat", "ConcatV2")
    _record("concat", tuple(ts), out, {"axis": ax})
    return out


@register("stack", "Pack")
def stack(values, axis=0, name=None):
    """Join same-shaped tensors along a new axis (one kernel launch for all of them).

    >>> import tapeflow as tf
    >>> tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    dev, ts = _join_inputs(values, "Pack")
    s0 = ts[0]._shape
    for i, t in enumerate(ts):
        if t._shape != s0:
            raise InvalidArgumentError(f"shapes of all inputs must match: values[0].shape = {list(s0)} != "
                                       f"values[{i}].shape = {list(t._shape)}", "Pack")
    nd = len(s0)
    a = _int_arg(axis, "Pack", "axis")
    if not -(nd + 1) <= a <= nd:
        raise InvalidArgumentError(f"axis {a} is out of range for stacking tensors of rank {nd}; allowed: "
                                   f"[{-(nd + 1)}, {nd}]", "Pack")
    a %= nd + 1
    out_shape = s0[:a] + (len(ts),) + s0[a:]
    inner = _prod(s0[a:])
    out = alloc(out_shape, ts[0]._dtype, dev)
    st = dev.backend.concat(ts[0]._dtype.size, len(ts), [t._h for t in ts], [inner] * len(ts), _prod(s0[:a]),
                            out._h)
    if st:
        kernel_failed(st, "concat", "Pack")
    _record("stack", tuple(ts), out, {"axis": a})
    return out


def _split_sizes(num_or_size_splits, dim, ax, op):
    if isinstance(num_or_size_splits, (int, np.integer)) or (
            isinstance(num_or_size_splits, Tensor) and not num_or_size_splits._shape):
        n = int(num_or_size_splits)
        if n < 1 or dim % n:
            raise InvalidArgumentError(f"cannot split axis {ax} of size {dim} into {n} equal parts; allowed: a "
                                       f"positive divisor of {dim}, or a list of sizes", op)
        return [dim // n] * n
    sizes = list(_shape_arg(num_or_size_splits, op, "num_or_size_splits"))
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise InvalidArgumentError(f"size_splits = {sizes}; allowed: non-negative sizes and at most one -1", op)
    if -1 in sizes:
        rest = dim - sum(s for s in sizes if s != -1)
        if rest < 0:
            raise InvalidArgumentError(f"size_splits = {sizes} need more than the {dim} entries of axis {ax}", op)
        sizes[sizes.index(-1)] = rest
    if sum(sizes) != dim:
        raise InvalidArgumentError(f"size_splits = {sizes} add up to {sum(sizes)}, not to the size {dim} of axis "
                                   f"{ax}; allowed: sizes that add up to {dim} (one may be -1)", op)
    return sizes


def _split_kernel(x, dev, outer, widths, shapes, op):
    outs = [alloc(s, x._dtype, dev) for s in shapes]
    if outs:
        st = dev.backend.split(x._dtype.size, len(outs), x._h, widths, outer, [o._h for o in outs])
        if st:
            kernel_failed(st, "split", op)
    return outs


@register("split", "SplitV")
def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Split along ``axis`` into equal parts (an int) or parts of given sizes (a list, one may be -1).

    >>> import tapeflow as tf
    >>> [t.numpy().tolist() for t in tf.split(tf.range(5), [2, -1])]
    [[0, 1], [2, 3, 4]]
    """
    x = to_tensor(value, "SplitV")
    nd = len(x._shape)
    if nd == 0:
        raise InvalidArgumentError("cannot split a scalar (shape ()); allowed: tensors of rank >= 1", "SplitV")
    ax = normalize_axis(_int_arg(axis, "SplitV", "axis"), nd, "SplitV")
    dim = x._shape[ax]
    sizes = _split_sizes(num_or_size_splits, dim, ax, "SplitV")
    if num is not None and num != len(sizes):
        raise InvalidArgumentError(f"num = {num} but the split makes {len(sizes)} parts", "SplitV")
    dev, x = _place(x)
    inner = _prod(x._shape[ax + 1:])
    shapes = [x._shape[:ax] + (s,) + x._shape[ax + 1:] for s in sizes]
    outs = _split_kernel(x, dev, _prod(x._shape[:ax]), [s * inner for s in sizes], shapes, "SplitV")
    _record("split", (x,), tuple(outs), {"num_or_size_splits": tuple(sizes), "axis": ax})
    return outs


@register("unstack", "Unpack")
def unstack(value, num=None, axis=0, name=None):
    """Split along ``axis`` into a list of tensors of one rank less (one kernel launch).

    >>> import tapeflow as tf
    >>> [t.numpy().tolist() for t in tf.unstack(tf.constant([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    x = value if type(value) is Tensor else to_tensor(value, "Unpack")
    if not x._shape:
        raise InvalidArgumentError("cannot unstack a scalar (shape ()); allowed: tensors of rank >= 1", "Unpack")
    ax = normalize_axis(axis, len(x._shape), "Unpack")
    n = x._shape[ax]
    if num is not None and num != n:
        raise InvalidArgumentError(f"num = {num} does not match dimension {ax} of size {n}", "Unpack")
    dev, x = _place(x)
    rest = x._shape[:ax] + x._shape[ax + 1:]
    inner = _prod(x._shape[ax + 1:])
    outs = _split_kernel(x, dev, _prod(x._shape[:ax]), [inner] * n, [rest] * n, "Unpack")
    _record("unstack", (x,), tuple(outs), {"num": n, "axis": ax})
    return outs


# ---- padding -------------------------------------------------------------------

_PAD_MODES = {"CONSTANT": 0, "REFLECT": 1, "SYMMETRIC": 2}


@register("pad", "PadV2")
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pad each axis i with ``paddings[i] = [before, after]`` entries.

    ``mode`` CONSTANT fills with ``constant_values``; REFLECT mirrors without
    repeating the edge (pads < size); SYMMETRIC mirrors with it (pads <= size).

    >>> import tapeflow as tf
    >>> tf.pad(tf.constant([1, 2, 3]), [[2, 1]], "REFLECT").numpy().tolist()
    [3, 2, 1, 2, 3, 2]
    """
    x = to_tensor(tensor, "PadV2")
    nd = len(x._shape)
    m = str(mode).upper()
    if m not in _PAD_MODES:
        raise InvalidArgumentError(f"mode = {mode!r}; allowed: 'CONSTANT', 'REFLECT', 'SYMMETRIC'", "PadV2")
    p = np.asarray(paddings) if not isinstance(paddings, Tensor) else paddings._host()
    if p.size == 0 and nd == 0:
        p = p.reshape(0, 2)
    if p.shape != (nd, 2) or (p.size and p.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"paddings has shape {list(p.shape)}; allowed: [{nd}, 2] integers (one "
                                   f"[before, after] pair per axis of shape {tuple(x._shape)})", "PadV2")
    pads = tuple((int(a), int(b)) for a, b in p.tolist())
    for i, (a, b) in enumerate(pads):
        if a < 0 or b < 0:
            raise InvalidArgumentError(f"paddings[{i}] = [{a}, {b}]; allowed: non-negative pads", "PadV2")
        n = x._shape[i]
        limit = n - 1 if m == "REFLECT" else n
        if m != "CONSTANT" and (a > limit or b > limit):
            raise InvalidArgumentError(f"{m} padding [{a}, {b}] of axis {i} (size {n}); allowed: at most {limit} "
                                       "on each side", "MirrorPad")
    dev, x = _place(x)
    raw = _value_bytes(constant_values, x._dtype, "PadV2", "constant_values")
    out_shape = tuple(n + a + b for n, (a, b) in zip(x._shape, pads))
    out = alloc(out_shape, x._dtype, dev)
    be = dev.backend
    st = be.pad(x._dtype.size, _PAD_MODES[m], nd, list(x._shape), [a for a, _ in pads], list(out_shape), x._h,
                out._h, be.host_ptr(raw))
    if st:
        kernel_failed(st, "pad", "PadV2")
    cv = constant_values if not isinstance(constant_values, Tensor) else constant_values._host().item()
    _record("pad", (x,), out, {"paddings": pads, "mode": m, "constant_values": cv})
    return out


_select_cache: dict = {}


def _select_plan(shapes, op):
    hit = _select_cache.get(shapes)
    if hit is None:
        hit = _select_plan_uncached(shapes, op)
        if len(_select_cache) > 1024:
            _select_cache.clear()
        _select_cache[shapes] = hit
    return hit


def _select_plan_uncached(shapes, op):
    out = ()
    for s in shapes:
        out = _ew.broadcast_shape(out, s, op)
    strides = [_ew._strides_for(s, out) for s in shapes]
    dims, st = [], [[] for _ in shapes]
    for i, d in enumerate(out):  # merge axes every operand walks contiguously
        if d == 1:
            continue
        if dims and all(st[j][-1] == strides[j][i] * d for j in range(len(shapes))):
            dims[-1] *= d
            for j in range(len(shapes)):
                st[j][-1] = strides[j][i]
        else:
            dims.append(d)
            for j in range(len(shapes)):
                st[j].append(strides[j][i])
    if not dims:
        dims, st = [1], [[0] for _ in shapes]
    return out, dims, st


@register("select", "SelectV2")
def _select(condition, x, y, name=None):
    """``x`` where ``condition`` is true, else ``y`` (all three broadcast): the 3-argument ``tf.where``.

    >>> import tapeflow as tf
    >>> tf.where(tf.constant([True, False]), 1.0, 2.0).numpy().tolist()
    [1.0, 2.0]
    """
    c = condition if type(condition) is Tensor else to_tensor(condition, "SelectV2")
    if type(x) is Tensor and type(y) is Tensor and c._shape == x._shape == y._shape and x._dtype is y._dtype \
            and c._dtype is _dt.bool_ and not _scope.stack and c._dev is x._dev is y._dev:
        # same shapes: one flat run
        dev = x._dev
        out = alloc(x._shape, x._dtype, dev)
        if out._size:
            n = (out._size,)
            st = dev.backend.select(x._dtype.size, 1, n, c._h, _ONE, x._h, _ONE, y._h, _ONE, out._h)
            if st:
                kernel_failed(st, "select", "SelectV2")
        _record("select", (c, x, y), out, None)
        return out
    if c._dtype is not _dt.bool_:
        raise InvalidArgumentError(f"condition has dtype {c._dtype.name}; allowed: bool", "SelectV2")
    x, y = _unvar(x, "SelectV2"), _unvar(y, "SelectV2")
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        x, y = _ew.coerce_pair(x, y, "SelectV2")
    else:
        x = to_tensor(x, "SelectV2")
        y = to_tensor(y, "SelectV2", x._dtype) if _ew._is_py_scalar(y) else to_tensor(y, "SelectV2")
    if x._dtype is not y._dtype:
        _ew.dtype_mismatch(x, y, "SelectV2")
    dev, (c, x, y) = _place_all([c, x, y])
    out_shape, dims, (cs, xs, ys) = _select_plan((c._shape, x._shape, y._shape), "SelectV2")
    out = alloc(out_shape, x._dtype, dev)
    if out._size:
        st = dev.backend.select(x._dtype.size, len(dims), dims, c._h, cs, x._h, xs, y._h, ys, out._h)
        if st:
            kernel_failed(st, "select", "SelectV2")
    _record("select", (c, x, y), out, None)
    return out


@register("where", "Where", nondiff="1 argument: integer indices (the 3-argument form records as select)")
def where(condition, x=None, y=None, name=None):
    """``where(c)``: int64 coordinates [n, rank] of the true (non-zero) entries; ``where(c, x, y)``: select.

    >>> import tapeflow as tf
    >>> tf.where([True, False, True]).numpy().tolist()
    [[0], [2]]
    >>> tf.where([True, False], [1, 2], [10, 20]).numpy().tolist()
    [1, 20]
    """
    if x is None and y is None:
        return _nonzero(to_tensor(condition, "Where"))
    if x is None or y is None:
        raise InvalidArgumentError("x and y must both be given or both be None", "Where")
    return _select(condition, x, y)


__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem", "TopKV2")]

# the index, sort and slice families live in their own modules; their names stay importable from here
from .index_ops import *
from .index_ops import _copy, _nonzero, _scatter_add_axis, _tensor_scatter  # noqa: F401
from .slice_ops import *
from .slice_ops import getitem  # noqa: F401
from .sort_ops import *
from .sort_ops import TopKV2  # noqa: F401
