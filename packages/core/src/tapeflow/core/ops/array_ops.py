"""Shape ops: creation, reshaping, joining and splitting, slicing and indexing,
gathering and scattering, masks, scans and sorting.

Every op here moves bytes through one kernel launch where it can (concat, split,
unstack, tile, pad, gather, ...), so all dtypes work, float16/bfloat16/bool
included; the few that do arithmetic (cumsum, segment sums, scatter-adds)
compute float16/bfloat16 in float32.  Kernels validate indices before writing
and report the first bad one, which becomes a message such as
``indices = 7 is not in [0, 3) [Op:Gather]``.
"""
from __future__ import annotations

import builtins
import collections
import math as _math
import numbers

import numpy as np

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    scoped,
    dtype_arg,
    hooks,
    int_arg,
    int_list,
    kernel_failed,
    normalize_axis,
    on_device,
    register,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..tensor import Tensor, constant, make
from . import _ew

_pyslice = builtins.slice
_ONE = (1,)
_scope = _device._scope
_HALF = (_dt.float16, _dt.bfloat16)
_NUMERIC = _dt.NUMERIC
_INDEX = (_dt.int32, _dt.int64)
_ERANGE = 4
_EBADARG = 7


def _prod(xs):
    p = 1
    for v in xs:
        p *= int(v)
    return p


def _names(dts):
    return ", ".join(d.name for d in dts)


def _shape_arg(shape, op, what="shape"):
    return int_list(shape, op, what)


def _int_arg(v, op, what):
    """A Python int from an int, NumPy integer or scalar integer tensor."""
    return int_arg(v, op, what)


def _contig_strides(shape):
    strides, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return strides


def _place(x: Tensor):
    """The device a one-input op runs on (the innermost scope, else the input's), and the input there."""
    stack = _scope.stack
    if stack and stack[-1] is not None and stack[-1] is not x._dev:
        return stack[-1], on_device(x, stack[-1])
    return x._dev, x


def _place_all(ts):
    stack = _scope.stack
    dev = stack[-1] if stack and stack[-1] is not None else ts[0]._dev
    return dev, [t if t._dev is dev else on_device(t, dev) for t in ts]


def _unvar(v, op):
    """Variables (anything with ``_as_tensor``) as their tensor; other values unchanged."""
    return to_tensor(v, op) if not isinstance(v, Tensor) and hasattr(v, "_as_tensor") else v


def _creation_device():
    return _device.current() or _device.default_device()


def _value_bytes(value, dtype, op, what="value"):
    """The bytes of a scalar ``value`` as ``dtype`` (a host-side literal, like constant())."""
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        value = to_tensor(value, op)
        if value._size != 1:
            raise InvalidArgumentError(f"{what} must be a scalar, got shape {tuple(value._shape)}", op)
        if value._dtype is not dtype:
            raise InvalidArgumentError(f"{what} has dtype {value._dtype.name}; allowed: {dtype.name} (the "
                                       "dtype of the result)", op)
        return value._host().reshape(()).tobytes()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != () or arr.dtype.kind not in "biuf":
        raise InvalidArgumentError(f"{what} must be a scalar number, got {value!r}", op)
    if dtype.is_integer and arr.dtype.kind == "f" and not float(arr) == int(arr):
        raise InvalidArgumentError(f"{what} = {value!r} cannot be represented as {dtype.name}", op)
    return arr.astype(dtype.np).tobytes()


def _zeros(shape, dtype, dev):
    out = alloc(tuple(shape), dtype, dev)
    if out._size:
        be = dev.backend
        st = be.fill(dtype.size, be.host_ptr(bytes(dtype.size)), out._h, out._size)
        if st:
            kernel_failed(st, "fill", "Fill")
    return out


def _index_tensor(indices, op, what="indices", dev=None):
    """``indices`` as an int32/int64 tensor on ``dev`` (other integer dtypes widen to int64)."""
    t = indices if type(indices) is Tensor else to_tensor(indices, op)
    if t._dtype not in _INDEX:
        if not t._dtype.is_integer:
            raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: int32, int64 (or another "
                                       "integer dtype)", op)
        from .math_ops import cast

        t = cast(t, _dt.int64)
    if dev is not None and t._dev is not dev:
        t = on_device(t, dev)
    return t


def _pos(flat, shape):
    """``[i,j]`` for a flat position in ``shape`` ('' for a scalar), TensorFlow's way of naming an element."""
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(int(flat), tuple(shape))) + "]"


def _bad_index(t: Tensor, flat: int):
    return int(t._host().reshape(-1)[flat])


def _half_to_f32(x):
    if x._dtype in _HALF:
        from .math_ops import cast

        return cast(x, _dt.float32)
    return x


def _back_to(x, dtype):
    if x._dtype is not dtype:
        from .math_ops import cast

        return cast(x, dtype)
    return x


def strided_copy(src: Tensor, shape, src_off, src_strides, out: Tensor = None, dst_off=0, dst_strides=None,
                 op="StridedCopy") -> Tensor:
    """Copy a strided view of ``src`` into ``out`` (a new dense tensor by default)."""
    dev = src._dev
    be = dev.backend
    if out is None:
        out = alloc(tuple(shape), src._dtype, dev)
    if dst_strides is None:
        dst_strides = _contig_strides(shape)
    st = be.strided_copy(src._dtype.size, len(shape), shape, src._h, src_off, src_strides, out._h, dst_off,
                         dst_strides)
    if st:
        kernel_failed(st, "strided_copy", op)
    return out


def _record(name, inputs, out, attrs=None):
    rec = hooks.recorder
    if rec is not None:
        rec(name, inputs, out, attrs)


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


# ---- slicing --------------------------------------------------------------------

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
    sizes = []
    for i, (bi, si, d) in enumerate(zip(b, s, x._shape)):
        if not 0 <= bi <= d:
            raise InvalidArgumentError(f"begin[{i}] = {bi} is not in [0, {d}]", "Slice")
        if si == -1:
            si = d - bi
        if not 0 <= si <= d - bi:
            raise InvalidArgumentError(f"size[{i}] = {si} is not in [0, {d - bi}] (begin[{i}] = {bi}, dimension "
                                       f"{d}); allowed: -1 or a size that fits", "Slice")
        sizes.append(si)
    sizes = tuple(sizes)
    _, x = _place(x)
    if sizes == x._shape:
        out = _view(x, sizes)
    else:
        strides = _contig_strides(x._shape)
        off = sum(bi * st for bi, st in zip(b, strides)) if _prod(sizes) else 0
        out = strided_copy(x, sizes, off, strides, op="Slice")
    _record("slice", (x,), out, {"begin": b, "size": sizes})
    return out


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
    strides = _contig_strides(shape)
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
                start, stop, step = k.indices(shape[dim])
            except TypeError:
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
    x = to_tensor(input_, "StridedSlice")
    b, e, s = _spec_args(begin, end, strides, "StridedSlice")
    masks = _masks(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, "StridedSlice")
    key = _spec_key(b, e, s, *masks)
    _, x = _place(x)
    off, vshape, vstr, result = _index_plan(x._shape, key)
    out = _view(strided_copy(x, vshape, off, vstr, op="StridedSlice"), result)
    _record("strided_slice", (x,), out, {"begin": b, "end": e, "strides": s, "begin_mask": masks[0],
                                         "end_mask": masks[1], "ellipsis_mask": masks[2],
                                         "new_axis_mask": masks[3], "shrink_axis_mask": masks[4]})
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
    off, vshape, vstr, result = _index_plan(shp, _spec_key(b, e, s, *masks), "StridedSliceGrad")
    if tuple(dy._shape) != result:
        raise InvalidArgumentError(f"dy has shape {tuple(dy._shape)}; allowed: {result}, the shape of the slice",
                                   "StridedSliceGrad")
    dev, dy = _place(dy)
    out = _zeros(shp, dy._dtype, dev)
    strided_copy(dy, vshape, 0, _contig_strides(vshape), out=out, dst_off=off, dst_strides=vstr,
                 op="StridedSliceGrad")
    _record("strided_slice_grad", (dy,), out, {"shape": shp, "begin": b, "end": e, "strides": s,
                                               "begin_mask": masks[0], "end_mask": masks[1],
                                               "ellipsis_mask": masks[2], "new_axis_mask": masks[3],
                                               "shrink_axis_mask": masks[4]})
    return out


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
    if (tk is int or tk is _pyslice and (key.step is None or key.step == 1)) and x._shape and not _scope.stack:
        # t[i] and t[a:b]: one contiguous block
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
    for k in keys:
        if _is_advanced(k):
            return _advanced_getitem(x, keys)
    return _basic_getitem(x, keys)


def _basic_getitem(x, keys):
    _, x = _place(x)
    offset, vshape, vstr, result = _index_plan(x._shape, keys)
    if vshape == x._shape and offset == 0 and vstr == _contig_strides(vshape):
        out = _view(x, result)
    else:
        out = _view(strided_copy(x, vshape, offset, vstr, op="StridedSlice"), result)
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
            if k._dtype.is_bool and k._shape != x._shape[in_dim:in_dim + nd]:
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
            return gather(y, _wrap_negative(t, y._shape[pos]), axis=pos)
        # several arrays: broadcast them together, move their axes to the front, gather_nd
        cols, axes = [], []
        for pos, t, _ in adv:
            if t._dtype.is_bool:
                w = where(t)
                for j in range(len(t._shape)):
                    cols.append(w[:, j])
                    axes.append(pos + j)
            else:
                cols.append(_wrap_negative(t, y._shape[pos]))
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


def _wrap_negative(t, n):
    """Integer index tensor with negative entries counted from the end (NumPy's rule for t[[...]])."""
    if t._size == 0:
        return t
    host = t._host()
    if int(host.min()) >= 0:  # no negatives: nothing to do (a read of the indices, not math on them)
        return t
    from .math_ops import add, less

    return where(less(t, 0), add(t, n), t)


# ---- gather and scatter -------------------------------------------------------------

def _gather_dims(params, indices, axis, batch_dims, op):
    pnd, ind = len(params._shape), len(indices._shape)
    bd = _int_arg(batch_dims, op, "batch_dims")
    if bd < 0:
        bd += ind
    if not 0 <= bd <= ind:
        raise InvalidArgumentError(f"batch_dims = {batch_dims} for indices of rank {ind}; allowed: "
                                   f"[{-ind}, {ind}]", op)
    if pnd == 0:
        raise InvalidArgumentError("params is a scalar (shape ()); allowed: tensors of rank >= 1", op)
    ax = bd if axis is None else _int_arg(axis, op, "axis")
    if not -pnd <= ax < pnd:
        raise InvalidArgumentError(f"axis {ax} is out of range for params of rank {pnd}; allowed: [{-pnd}, {pnd})",
                                   op)
    ax %= pnd
    if bd > ax:
        raise InvalidArgumentError(f"batch_dims = {bd} > axis = {ax}; allowed: batch_dims <= axis", op)
    for i in range(bd):
        if params._shape[i] != indices._shape[i]:
            raise InvalidArgumentError(f"params.shape[{i}] = {params._shape[i]} != indices.shape[{i}] = "
                                       f"{indices._shape[i]}; allowed: equal batch dimensions", op)
    return ax, bd


@register("gather", "Gather")
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Entries of ``params`` along ``axis`` at ``indices`` (batched over the first ``batch_dims`` axes).

    Output shape: params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:].

    >>> import tapeflow as tf
    >>> tf.gather(tf.constant([[1, 2], [3, 4], [5, 6]]), [2, 0]).numpy().tolist()
    [[5, 6], [1, 2]]
    """
    p = params if type(params) is Tensor else to_tensor(params, "Gather")
    dev, p = _place(p)
    idx = indices if type(indices) is Tensor and indices._dtype in _INDEX and indices._dev is dev else \
        _index_tensor(indices, "Gather", dev=dev)
    if axis is None and batch_dims == 0 and p._shape:
        ax = bd = 0
    else:
        ax, bd = _gather_dims(p, idx, axis, batch_dims, "Gather")
    ps = p._shape
    out_shape = ps[:ax] + idx._shape[bd:] + ps[ax + 1:]
    out = alloc(out_shape, p._dtype, dev)
    be = dev.backend
    bad = be.new_int64([0])
    st = be.gather(p._dtype.size, idx._dtype.code, p._h, idx._h, out._h, _prod(ps[:bd]), _prod(ps[bd:ax]), ps[ax],
                   _prod(idx._shape[bd:]), _prod(ps[ax + 1:]), bad)
    if st:
        if st == _ERANGE:
            raise InvalidArgumentError(f"indices{_pos(bad[0], idx._shape)} = {_bad_index(idx, bad[0])} is not in "
                                       f"[0, {ps[ax]})", "Gather")
        kernel_failed(st, "gather", "Gather")
    _record("gather", (p, idx), out, {"axis": ax, "batch_dims": bd})
    return out


def _segment_dims(data, ids, op):
    ds, is_ = data._shape, ids._shape
    if ds[:len(is_)] != is_:
        raise InvalidArgumentError(f"data.shape = {list(ds)} does not start with segment_ids.shape = {list(is_)}; "
                                   "allowed: segment_ids whose shape is a prefix of data's", op)


def _scatter_add_axis(data, ids, num, axis, batch_dims, op, drop_negative=False, sorted_ids=False,
                      record_attrs=None):
    """out[..., ids[j], ...] += data[..., j, ...] along ``axis``: the adjoint of gather(axis, batch_dims)."""
    dt = data._dtype
    if dt not in _NUMERIC:
        raise InvalidArgumentError(f"data has dtype {dt.name}; allowed: {_names(_NUMERIC)}", op)
    src = _half_to_f32(data)
    dev = data._dev
    bd = batch_dims
    nidx = _prod(ids._shape[bd:])
    ds = src._shape
    out_shape = ds[:axis] + (num,) + ds[axis + len(ids._shape) - bd:]
    out = alloc(out_shape, src._dtype, dev)
    be = dev.backend
    bad = be.new_int64([0])
    flags = (1 if drop_negative else 0) | (2 if sorted_ids else 0)
    st = be.scatter_add_axis(src._dtype.code, ids._dtype.code, src._h, ids._h, out._h, _prod(ds[:bd]),
                             _prod(ds[bd:axis]), num, nidx, _prod(out_shape[axis + 1:]), flags, bad)
    if st:
        if st == _ERANGE:
            v = _bad_index(ids, bad[0])
            what = "segment_ids" if op != "Gather" else "indices"
            raise InvalidArgumentError(f"{what}{_pos(bad[0], ids._shape)} = {v} is not in [0, {num})", op)
        if st == _EBADARG and sorted_ids:
            raise InvalidArgumentError(f"segment_ids are not sorted: segment_ids{_pos(bad[0], ids._shape)} = "
                                       f"{_bad_index(ids, bad[0])} < segment_ids{_pos(bad[0] - 1, ids._shape)} = "
                                       f"{_bad_index(ids, bad[0] - 1)}; allowed: non-decreasing ids (or use "
                                       "unsorted_segment_sum)", op)
        kernel_failed(st, "scatter_add_axis", op)
    out = _back_to(out, dt)
    _record("unsorted_segment_sum", (data, ids), out,
            record_attrs if record_attrs is not None else {"num_segments": num, "axis": axis,
                                                           "batch_dims": batch_dims, "drop_negative": drop_negative})
    return out


@register("unsorted_segment_sum", "UnsortedSegmentSum")
def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums of the slices of ``data`` that share a segment id: out[s] = sum of data[i] where segment_ids[i] == s.

    Ids may come in any order; negative ids are dropped.  The output has
    ``num_segments`` rows (empty segments are 0).

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_sum(tf.constant([1, 2, 3, 4]), [0, 2, 0, 1], 3).numpy().tolist()
    [4, 4, 2]
    """
    x = to_tensor(data, "UnsortedSegmentSum")
    dev, x = _place(x)
    ids = _index_tensor(segment_ids, "UnsortedSegmentSum", "segment_ids", dev)
    n = _int_arg(num_segments, "UnsortedSegmentSum", "num_segments")
    if n < 0:
        raise InvalidArgumentError(f"num_segments = {n}; allowed: num_segments >= 0", "UnsortedSegmentSum")
    _segment_dims(x, ids, "UnsortedSegmentSum")
    return _scatter_add_axis(x, ids, n, 0, 0, "UnsortedSegmentSum", drop_negative=True,
                             record_attrs={"num_segments": n})


@register("segment_sum", "SegmentSum", kind="composite")
def segment_sum(data, segment_ids, name=None):
    """Sums over runs of equal, sorted segment ids: out[s] = sum of data[i] where segment_ids[i] == s.

    ``segment_ids`` is 1-D, sorted, non-negative; the output has segment_ids[-1] + 1 rows.

    >>> import tapeflow as tf
    >>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 0, 2]).numpy().tolist()
    [3.0, 0.0, 3.0]
    """
    x = to_tensor(data, "SegmentSum")
    ids = _index_tensor(segment_ids, "SegmentSum", "segment_ids", x._dev)
    if len(ids._shape) != 1 or not x._shape or x._shape[0] != ids._shape[0]:
        raise InvalidArgumentError(f"segment_ids has shape {list(ids._shape)} for data of shape {list(x._shape)}; "
                                   "allowed: a vector as long as data's first axis", "SegmentSum")
    n = _bad_index(ids, ids._size - 1) + 1 if ids._size else 0  # sorted: the last id is the largest
    return _scatter_add_axis(x, ids, n, 0, 0, "SegmentSum", sorted_ids=True, record_attrs={"num_segments": n})


def _nd_indices(indices, op, dev):
    idx = _index_tensor(indices, op, dev=dev)
    if not idx._shape:
        raise InvalidArgumentError("indices is a scalar; allowed: rank >= 1 (the last axis holds index tuples)", op)
    return idx


@register("gather_nd", "GatherNd")
def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of ``params`` at the index tuples in the last axis of ``indices``.

    Output shape: indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:].

    >>> import tapeflow as tf
    >>> tf.gather_nd(tf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).numpy().tolist()
    [3, 2]
    """
    p = to_tensor(params, "GatherNd")
    dev, p = _place(p)
    idx = _nd_indices(indices, "GatherNd", dev)
    bd = _int_arg(batch_dims, "GatherNd", "batch_dims")
    ps, is_ = p._shape, idx._shape
    k = is_[-1]
    if not 0 <= bd < len(is_) or bd > len(ps):
        raise InvalidArgumentError(f"batch_dims = {bd}; allowed: [0, {min(len(is_) - 1, len(ps))}]", "GatherNd")
    if ps[:bd] != is_[:bd]:
        raise InvalidArgumentError(f"params.shape[:{bd}] = {list(ps[:bd])} != indices.shape[:{bd}] = "
                                   f"{list(is_[:bd])}; allowed: equal batch dimensions", "GatherNd")
    if k > len(ps) - bd:
        raise InvalidArgumentError(f"index tuples of length {k} for params of shape {list(ps)} (batch_dims {bd}); "
                                   f"allowed: at most {len(ps) - bd}", "GatherNd")
    dims = list(ps[bd:bd + k])
    out_shape = is_[:-1] + ps[bd + k:]
    out = alloc(out_shape, p._dtype, dev)
    be = dev.backend
    bad = be.new_int64([0])
    st = be.gather_nd(p._dtype.size, idx._dtype.code, p._h, idx._h, out._h, _prod(ps[:bd]), _prod(is_[bd:-1]), k,
                      dims, _prod(ps[bd + k:]), bad)
    if st:
        if st == _ERANGE:
            tup = idx._host().reshape(-1, k)[bad[0]].tolist() if k else []
            raise InvalidArgumentError(f"indices{_pos(bad[0], is_[:-1]) or '[0]'} = {tup} does not index into param "
                                       f"shape {list(ps)}", "GatherNd")
        kernel_failed(st, "gather_nd", "GatherNd")
    _record("gather_nd", (p, idx), out, {"batch_dims": bd})
    return out


def _scatter_nd_run(out, idx, upd, op_code, op, shape):
    """Validate shapes and run the scatter kernel into ``out`` (already holding the starting values)."""
    is_, us = idx._shape, upd._shape
    k = is_[-1]
    if k > len(shape):
        raise InvalidArgumentError(f"index tuples of length {k} for shape {list(shape)}; allowed: at most "
                                   f"{len(shape)}", op)
    want = is_[:-1] + tuple(shape[k:])
    if us != want:
        raise InvalidArgumentError(f"updates has shape {list(us)}; allowed: indices.shape[:-1] + shape[{k}:] = "
                                   f"{list(want)}", op)
    be = out._dev.backend
    bad = be.new_int64([0])
    st = be.scatter_nd(op_code, out._dtype.code, idx._dtype.code, idx._h, upd._h, out._h, _prod(is_[:-1]), k,
                       list(shape[:k]), _prod(shape[k:]), bad)
    if st:
        if st == _ERANGE:
            tup = idx._host().reshape(-1, k)[bad[0]].tolist()
            raise InvalidArgumentError(f"indices{_pos(bad[0], is_[:-1]) or '[0]'} = {tup} does not index into shape "
                                       f"{list(shape)}", op)
        kernel_failed(st, "scatter_nd", op)
    return out


def _copy(x):
    out = alloc(x._shape, x._dtype, x._dev)
    if x._size:
        strided_copy(x, (x._size,), 0, (1,), out=out)
    return out


@register("scatter_nd", "ScatterNd")
def scatter_nd(indices, updates, shape, name=None):
    """A tensor of ``shape``, zero except at ``indices``, where ``updates`` are summed in.

    >>> import tapeflow as tf
    >>> tf.scatter_nd([[1], [3], [1]], tf.constant([1.0, 2.0, 3.0]), [4]).numpy().tolist()
    [0.0, 4.0, 0.0, 2.0]
    """
    u = to_tensor(updates, "ScatterNd")
    dev, u = _place(u)
    idx = _nd_indices(indices, "ScatterNd", dev)
    shp = _shape_arg(shape, "ScatterNd")
    if any(d < 0 for d in shp):
        raise InvalidArgumentError(f"shape = {list(shp)}; allowed: non-negative sizes", "ScatterNd")
    dt = u._dtype
    if dt not in _NUMERIC:
        raise InvalidArgumentError(f"updates has dtype {dt.name}; allowed: {_names(_NUMERIC)}", "ScatterNd")
    src = _half_to_f32(u)
    out = _scatter_nd_run(_zeros(shp, src._dtype, dev), idx, src, 1, "ScatterNd", shp)
    out = _back_to(out, dt)
    _record("scatter_nd", (idx, u), out, {"shape": shp})
    return out


def _tensor_scatter(tensor, indices, updates, op_code, op, allowed):
    x = to_tensor(tensor, op)
    dev, x = _place(x)
    u = to_tensor(updates, op, x._dtype) if not isinstance(updates, Tensor) else updates
    u = on_device(u, dev)
    idx = _nd_indices(indices, op, dev)
    if u._dtype is not x._dtype:
        raise InvalidArgumentError(f"updates has dtype {u._dtype.name} but tensor has {x._dtype.name}; allowed: "
                                   "the same dtype", op)
    if x._dtype not in allowed:
        raise InvalidArgumentError(f"tensor has dtype {x._dtype.name}; allowed: {_names(allowed)}", op)
    src, us = _half_to_f32(x), _half_to_f32(u)
    out = _scatter_nd_run(_copy(src), idx, us, op_code, op, x._shape)
    return x, idx, u, _back_to(out, x._dtype)


@register("tensor_scatter_nd_update", "TensorScatterUpdate")
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with the entries at ``indices`` replaced by ``updates``.

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_update(tf.constant([1, 2, 3]), [[0], [2]], [9, 7]).numpy().tolist()
    [9, 2, 7]
    """
    x, idx, u, out = _tensor_scatter(tensor, indices, updates, 0, "TensorScatterUpdate", _dt.ALL)
    _record("tensor_scatter_nd_update", (x, idx, u), out, None)
    return out


@register("tensor_scatter_nd_add", "TensorScatterAdd")
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (repeated indices add up).

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_add(tf.constant([1, 2, 3]), [[0], [0]], [5, 5]).numpy().tolist()
    [11, 2, 3]
    """
    x, idx, u, out = _tensor_scatter(tensor, indices, updates, 1, "TensorScatterAdd", _NUMERIC)
    _record("tensor_scatter_nd_add", (x, idx, u), out, None)
    return out


# ---- one_hot, where, boolean_mask -------------------------------------------------------

@register("one_hot", "OneHot", nondiff="integer indices in; on/off values are constants")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``on_value`` where the new axis equals the index, ``off_value`` elsewhere (out-of-range indices: all off).

    >>> import tapeflow as tf
    >>> tf.one_hot([0, 2], 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    dev = _device.current() or (indices._dev if isinstance(indices, Tensor) else _creation_device())
    idx = _index_tensor(indices, "OneHot", dev=dev)
    d = _int_arg(depth, "OneHot", "depth")
    if d < 0:
        raise InvalidArgumentError(f"depth = {d}; allowed: depth >= 0", "OneHot")
    if dtype is None:
        ref = next((v for v in (on_value, off_value) if v is not None), None)
        if isinstance(ref, Tensor):
            dtype = ref._dtype
        elif isinstance(ref, (bool, np.bool_)):
            dtype = _dt.bool_
        elif isinstance(ref, (int, np.integer)):
            dtype = _dt.int32
        else:
            dtype = _dt.float32
    dtype = dtype_arg(dtype, "OneHot")
    on = _value_bytes(1 if on_value is None else on_value, dtype, "OneHot", "on_value")
    off = _value_bytes(0 if off_value is None else off_value, dtype, "OneHot", "off_value")
    nd = len(idx._shape)
    a = -1 if axis is None else _int_arg(axis, "OneHot", "axis")
    if not -1 <= a <= nd:
        raise InvalidArgumentError(f"axis = {a} for indices of rank {nd}; allowed: [-1, {nd}]", "OneHot")
    if a == -1:
        a = nd
    out_shape = idx._shape[:a] + (d,) + idx._shape[a:]
    out = alloc(out_shape, dtype, dev)
    be = dev.backend
    st = be.one_hot(dtype.size, idx._dtype.code, idx._h, be.host_ptr(on), be.host_ptr(off), out._h,
                    _prod(idx._shape[:a]), d, _prod(idx._shape[a:]))
    if st:
        kernel_failed(st, "one_hot", "OneHot")
    return out


def _nonzero(x: Tensor):
    dev, x = _place(x)
    be = dev.backend
    cnt = be.new_int64([0])
    st = be.count_nonzero(x._dtype.code, x._h, x._size, cnt)
    if st:
        kernel_failed(st, "count_nonzero", "Where")
    out = alloc((int(cnt[0]), len(x._shape)), _dt.int64, dev)
    if out._size:
        st = be.where_indices(x._dtype.code, x._h, len(x._shape), list(x._shape), x._size, out._h)
        if st:
            kernel_failed(st, "where_indices", "Where")
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


@register("boolean_mask", "BooleanMask", kind="composite")
def boolean_mask(tensor, mask, axis=None, name=None):
    """The entries of ``tensor`` where ``mask`` (covering axes axis..axis+mask.rank) is true, flattened there.

    >>> import tapeflow as tf
    >>> tf.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True]).numpy().tolist()
    [[1, 2], [5, 6]]
    """
    x = to_tensor(tensor, "BooleanMask")
    m = to_tensor(mask, "BooleanMask")
    if m._dtype is not _dt.bool_:
        raise InvalidArgumentError(f"mask has dtype {m._dtype.name}; allowed: bool", "BooleanMask")
    k = len(m._shape)
    if k == 0:
        raise InvalidArgumentError("mask is a scalar; allowed: a mask of rank >= 1", "BooleanMask")
    a = 0 if axis is None else _int_arg(axis, "BooleanMask", "axis")
    nd = len(x._shape)
    if a < 0:
        a += nd
    if not 0 <= a <= nd - k:
        raise InvalidArgumentError(f"axis = {axis} with a mask of rank {k} for a tensor of rank {nd}; allowed: "
                                   f"[0, {nd - k}]", "BooleanMask")
    if x._shape[a:a + k] != m._shape:
        raise InvalidArgumentError(f"mask has shape {list(m._shape)} but the tensor's axes {a}..{a + k - 1} have "
                                   f"{list(x._shape[a:a + k])}; allowed: equal shapes", "BooleanMask")
    with _device.device(x._dev):
        flat = reshape(x, x._shape[:a] + (m._size,) + x._shape[a + k:])
        idx = reshape(_nonzero(reshape(m, [-1])), [-1])
        return gather(flat, idx, axis=a)


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
