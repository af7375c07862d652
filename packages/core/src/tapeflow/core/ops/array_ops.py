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
    static_value,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run, run_tensors
from ..tensor import Tensor, constant, make
from . import _ew
from ._shape import (
    _axes_arg,
    _dim_sum,
    _range_dtype,
    _pyslice,
    _select_plan,
    _shape_eq,
    _split_sizes,
    _HALF,
    _INDEX,
    _NUMERIC,
    _ONE,
    _contig_strides,
    _creation_device,
    _int_arg,
    _names,
    _dim_prod,
    _prod,
    _scope,
    _shape_arg,
    _unvar,
    _value_bytes,
    _zeros,  # noqa: F401 (array_ops._zeros: tapeflow.core.variables uses it)
    strided_copy,
)

# ---- creation ---------------------------------------------------------------

def _filled(shape, dtype, dev, raw):
    """A new tensor of ``shape`` with every entry the bytes ``raw`` (inside a primitive: check())."""
    out = alloc(shape, dtype, dev)
    be = dev.backend
    check(be.fill(dtype.size, be.host_ptr(raw), out._h, out._size), "fill")
    return out


def _fill_infer(*like, shape, value, dtype):
    return shape, dtype


@primitive("fill", "Fill", infer=_fill_infer)
def _fill(dev, *like, shape, value, dtype):
    # ``like``: zeros_like/ones_like of a tensor traced with unknown dimensions, whose shape the output takes
    return _filled(like[0]._shape if like else shape, dtype, dev, np.asarray(value).astype(dtype.np).tobytes())


def _fill_like(x, value, dtype, op):
    """``fill(x.shape, value, dtype)``; traced with unknown dimensions, the shape is ``x``'s at run time."""
    dtype = x._dtype if dtype is None else dtype_arg(dtype, op)
    if x._size is None:
        return run_tensors(_fill, (x,), {"shape": x._shape, "value": value, "dtype": dtype})
    return fill(x._shape, value, dtype)


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
        value = static_value(value, "Fill", "value")
    if np.ndim(value) != 0:
        raise InvalidArgumentError(f"value must be a scalar, got shape {list(np.shape(value))}", "Fill")
    if dtype is None:
        dtype = _dt.bool_ if isinstance(value, (bool, np.bool_)) else \
            _dt.int32 if isinstance(value, (int, np.integer)) else _dt.float32
    dtype = dtype_arg(dtype, "Fill")
    return run_tensors(_fill, (), {"shape": shape, "value": value, "dtype": dtype})


@register("zeros", "Zeros", kind="composite")
def zeros(shape, dtype=_dt.float32, name=None) -> Tensor:
    """A tensor of zeros.

    >>> import tapeflow as tf
    >>> print(tf.zeros([1, 1, 784]).shape)
    (1, 1, 784)
    """
    dt = dtype_arg(dtype, "Zeros")
    return fill(shape, b"" if dt.is_string else 0, dt)  # a string tensor's zero is b"", as TensorFlow's


@register("ones", "Ones", kind="composite")
def ones(shape, dtype=_dt.float32, name=None) -> Tensor:
    """A tensor of ones.

    >>> import tapeflow as tf
    >>> tf.ones([2]).numpy().tolist()
    [1.0, 1.0]
    """
    return fill(shape, 1, dtype_arg(dtype, "Ones"))


@register("zeros_like", "ZerosLike", kind="composite")
def zeros_like(input, dtype=None, name=None) -> Tensor:
    """Zeros of ``input``'s shape and dtype.

    >>> import tapeflow as tf
    >>> tf.zeros_like(tf.constant([1, 2])).numpy().tolist()
    [0, 0]
    """
    x = to_tensor(input, "ZerosLike")
    with _device.device(_device.current() or x._dev):
        return _fill_like(x, 0, dtype, "ZerosLike")


@register("ones_like", "OnesLike", kind="composite")
def ones_like(input, dtype=None, name=None) -> Tensor:
    """Ones of ``input``'s shape and dtype.

    >>> import tapeflow as tf
    >>> tf.ones_like(tf.constant([1.5, 2.5])).numpy().tolist()
    [1.0, 1.0]
    """
    x = to_tensor(input, "OnesLike")
    with _device.device(_device.current() or x._dev):
        return _fill_like(x, 1, dtype, "OnesLike")


def _eye_infer(*, num_rows, num_columns, batch_shape, dtype):
    return batch_shape + (num_rows, num_columns), dtype


@primitive("eye", "Eye", infer=_eye_infer)
def _eye(dev, *, num_rows, num_columns, batch_shape, dtype):
    rows, cols = num_rows, num_columns
    out = _filled(batch_shape + (rows, cols), dtype, dev, bytes(dtype.size))
    nb, nd = _prod(batch_shape), min(rows, cols)
    if nb and nd:
        one = _filled((), dtype, dev, np.asarray(1).astype(dtype.np).tobytes())
        strided_copy(one, (nb, nd), 0, (0, 0), out=out, dst_strides=(rows * cols, cols + 1), op="Eye")
    return out


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
    return run_tensors(_eye, (), {"num_rows": rows, "num_columns": cols, "batch_shape": batch, "dtype": dtype})


def _range_len(start, limit, delta, dtype):
    return -((start - limit) // delta) if dtype.is_integer else _math.ceil((limit - start) / delta)


def _range_infer(*, start, limit, delta, dtype):
    return (_range_len(start, limit, delta, dtype),), dtype


@primitive("range", "Range", infer=_range_infer)
def _range(dev, *, start, limit, delta, dtype):
    n = _range_len(start, limit, delta, dtype)
    out = alloc((n,), dtype, dev)
    if dtype.is_integer:
        check(dev.backend.iota(dtype.code, 0.0, 0.0, start, delta, out._h, n), "iota")
    else:
        check(dev.backend.iota(dtype.code, start, delta, 0, 0, out._h, n), "iota")
    return out


@primitive("range_dynamic", "Range", infer=lambda start, limit, delta, *, dtype: ((None,), dtype),
           internal="tf.range with bounds a graph computes (its length is known when the graph runs)")
def _range_dynamic(dev, start, limit, delta, *, dtype):
    s, lim, d = (t.numpy().item() for t in (start, limit, delta))
    out = range_(s, lim, d, dtype=dtype)  # the eager op: its checks, then its kernel
    return out if out._dev is dev else out.to(dev)


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
        return run_tensors(_range, (), {"start": start, "limit": limit, "delta": delta, "dtype": _dt.int32})
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
    if any(isinstance(v, Tensor) and v._h is None for v in raw):  # a bound known when the graph runs
        from .math_ops import cast

        bounds = tuple(cast(v, dtype) if isinstance(v, Tensor) else to_tensor(v, "Range", dtype) for v in raw)
        return run_tensors(_range_dynamic, bounds, {"dtype": dtype})
    vals = [static_value(v, "Range", what).item() if isinstance(v, Tensor) else v
            for what, v in zip(("start", "limit", "delta"), raw)]
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
    attrs = {"start": s, "limit": lim, "delta": d, "dtype": dtype}
    n = _range_len(s, lim, d, dtype)
    if dtype.is_integer and n and not (dtype.min <= s + (n - 1) * d <= dtype.max):
        raise InvalidArgumentError(f"range({s}, {lim}, {d}) leaves the range of {dtype.name}", "Range")
    return run_tensors(_range, (), attrs)


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
            last = broadcast_to(b2, shape + (1,)) if None not in shape else _broadcast_with(b2, a2)
            out = concat([out[..., :-1], last], -1)
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
    outs, cols = [], []
    for i, t in enumerate(ts):
        pos = i if indexing == "ij" or len(ts) < 2 else (1 if i == 0 else 0 if i == 1 else i)
        shape = [1] * len(ts)
        shape[pos] = -1
        cols.append(reshape(t, shape))
    for i, c in enumerate(cols):
        if None in lens:  # traced with unknown lengths: broadcast against the other coordinate columns
            for j, other in enumerate(cols):
                if j != i:
                    c = _broadcast_with(c, other)
            outs.append(c)
        else:
            outs.append(broadcast_to(c, lens))
    return outs


def _broadcast_with(x, other):
    """``x`` broadcast against ``other``'s shape (for shapes known only when a traced graph runs)."""
    return _select(_fill_like(other, True, _dt.bool_, "SelectV2"), x, x)


# ---- shape, size, rank -------------------------------------------------------

def _out_type(out_type, op):
    dt = dtype_arg(out_type, op, "out_type")
    if dt not in _INDEX:
        raise InvalidArgumentError(f"out_type = {dt.name}; allowed: int32, int64", op)
    return dt


def _meta_tensor(value, dtype, dev):
    with _device.device(dev):
        return constant(np.asarray(value, dtype.np))


@primitive("shape", "Shape", infer=lambda x, *, out_type: ((len(x._shape),), out_type))
def _shape(dev, x, *, out_type):
    return _meta_tensor(list(x._shape), out_type, dev)


@primitive("size", "Size", infer=lambda x, *, out_type: ((), out_type))
def _size(dev, x, *, out_type):
    return _meta_tensor(x._size, out_type, dev)


@primitive("rank", "Rank", infer=lambda x: ((), _dt.int32))
def _rank(dev, x):
    return _meta_tensor(len(x._shape), _dt.int32, dev)


@register("shape", "Shape", nondiff="integer output (the input's shape)")
def shape(input, out_type=_dt.int32, name=None):
    """The shape of ``input`` as a 1-D integer tensor.

    >>> import tapeflow as tf
    >>> tf.shape(tf.zeros([2, 3])).numpy().tolist()
    [2, 3]
    """
    return run_tensors(_shape, (to_tensor(input, "Shape"),), {"out_type": _out_type(out_type, "Shape")})


@register("size", "Size", nondiff="integer output (the number of elements)")
def size(input, out_type=_dt.int32, name=None):
    """The number of elements of ``input`` as a scalar integer tensor.

    >>> import tapeflow as tf
    >>> int(tf.size(tf.zeros([2, 3])))
    6
    """
    return run_tensors(_size, (to_tensor(input, "Size"),), {"out_type": _out_type(out_type, "Size")})


@register("rank", "Rank", nondiff="integer output (the number of axes)")
def rank(input, name=None):
    """The number of axes of ``input`` as a scalar int32 tensor.

    >>> import tapeflow as tf
    >>> int(tf.rank(tf.zeros([2, 3])))
    2
    """
    return run_tensors(_rank, (to_tensor(input, "Rank"),))


# ---- views (no copy) --------------------------------------------------------

def _view(x: Tensor, shape) -> Tensor:
    host = x._arr.reshape(shape) if x._arr is not None else None
    return make(x._h, host, tuple(shape), x._dtype, x._dev, x._size)


def _same_infer(x, **attrs):
    return x._shape, x._dtype


def _shape_infer(x, *, shape):
    return shape, x._dtype


def _reshape_infer(x, *, shape):
    if -1 in shape:  # traced with unknown dimensions: known when the rest of x's elements are
        known = _dim_prod(d for d in shape if d != -1)
        n = x._size
        shape = tuple((n // known if n is not None and known else None) if d == -1 else d for d in shape)
    return shape, x._dtype


def _resolve_shape(x, shape):
    """A reshape target with its -1 (traced, the input's size unknown until run time) resolved against ``x``."""
    known = _prod(d for d in shape if d != -1)
    if known == 0 or x._size % known:
        raise InvalidArgumentError(f"cannot reshape a tensor with {x._size} elements to shape {list(shape)}",
                                   "Reshape")
    return tuple(x._size // known if d == -1 else d for d in shape)


@primitive("reshape", "Reshape", infer=_reshape_infer)
def _reshape(dev, x, *, shape):
    if None in shape:
        raise InvalidArgumentError(f"a reshape to {shape} traced with several unknown dimensions cannot run; "
                                   "allowed: at most one unknown dimension in the target", "Reshape")
    if -1 in shape:
        shape = _resolve_shape(x, shape)
    elif _prod(shape) != x._size:
        raise InvalidArgumentError(f"cannot reshape a tensor with {x._size} elements (shape {tuple(x._shape)}) to "
                                   f"shape {list(shape)}", "Reshape")
    return _view(x, shape)


@primitive("identity", "Identity", infer=_same_infer)
def _identity(dev, x):
    return _view(x, x._shape)


def _run_view(prim, x, attrs):
    """run(prim, (x,), attrs) for the no-kernel view ops (reshape, identity): the same pieces, inline."""
    stack = _scope.stack
    if hooks.tracing or (stack and stack[-1] is not None and stack[-1] is not x._dev):
        return run(prim, (x,), attrs)
    out = _view(x, attrs["shape"] if attrs else x._shape)
    rec = hooks.recorder
    if rec is not None:
        rec(prim.name, (x,), out, attrs)
    return out


@register("reshape", "Reshape")
def reshape(tensor, shape, name=None):
    """The same values in a new shape (one dimension may be -1).  No copy.

    >>> import tapeflow as tf
    >>> tf.reshape(tf.range(6), [2, -1]).numpy().tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    x = tensor if type(tensor) is Tensor else to_tensor(tensor, "Reshape")
    if hooks.tracing and x._size is None and isinstance(shape, (tuple, list)) and None in shape:
        # a composite op's target made of the unknown dimensions of a traced tensor: one becomes -1
        if list(shape).count(None) == 1:
            shape = [-1 if d is None else d for d in shape]
        else:
            return run(_reshape, (x,), {"shape": tuple(None if d is None else _int_arg(d, "Reshape", "shape")
                                                         for d in shape)})
    shape = _shape_arg(shape, "Reshape")
    if shape.count(-1) > 1:
        raise InvalidArgumentError(f"only one dimension may be -1, got {list(shape)}", "Reshape")
    if x._size is None:  # traced with unknown dimensions: -1 (and the size check) wait until the graph runs
        if any(d < -1 for d in shape):
            raise InvalidArgumentError(f"shape {list(shape)} has a negative dimension; allowed: sizes >= 0 and "
                                       "one -1", "Reshape")
        known, target = _dim_prod(x._shape), _prod(d for d in shape if d != -1)
        if known is not None and (known != target if -1 not in shape else target == 0 or known % target):
            raise InvalidArgumentError(
                f"cannot reshape a tensor with {known} elements to shape {list(shape)}", "Reshape")
        return run(_reshape, (x,), {"shape": shape})
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
    return _run_view(_reshape, x, {"shape": shape})


@register("identity", "Identity")
def identity(input, name=None):
    """The same value as a new tensor (shares memory).

    >>> import tapeflow as tf
    >>> tf.identity(tf.constant([1.0])).numpy().tolist()
    [1.0]
    """
    return _run_view(_identity, input if type(input) is Tensor else to_tensor(input, "Identity"), None)


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
        if x._size is None and None in x._shape:
            raise InvalidArgumentError(f"cannot squeeze every axis of size 1 of shape {tuple(x._shape)}: the rank of "
                                       "the result depends on the unknown dimensions; allowed: an explicit axis",
                                       "Squeeze")
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
            if x._shape[a] not in (1, None):
                raise InvalidArgumentError(f"cannot squeeze axis {a} of size {x._shape[a]} (shape "
                                           f"{tuple(x._shape)}); allowed: axes of size 1", "Squeeze")
            norm.add(a)
        new = [d for i, d in enumerate(x._shape) if i not in norm]
    if x._size is None:
        return _traced_reshape(x, new, tuple(0 if i in norm else _pyslice(None) for i in range(nd)))
    return reshape(x, new)


def _traced_reshape(x, new, key):
    """reshape(x, new) for a tensor traced with unknown dimensions (None in ``new``): one unknown becomes -1;
    with several, ``x[key]`` (a strided_slice with new-axis or shrink entries) says the same thing."""
    if new.count(None) <= 1:
        return reshape(x, [-1 if d is None else d for d in new])
    return x[key]


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
    if x._size is None:
        return _traced_reshape(x, list(x._shape[:a] + (1,) + x._shape[a:]), (_pyslice(None),) * a + (None, ...))
    return reshape(x, x._shape[:a] + (1,) + x._shape[a:])


# ---- transpose, broadcast, tile, reverse ---------------------------------------

@primitive("transpose", "Transpose", infer=lambda x, *, perm: (tuple(x._shape[p] for p in perm), x._dtype))
def _transpose(dev, x, *, perm):
    shape = tuple(x._shape[p] for p in perm)
    if perm == tuple(range(len(perm))):
        return _view(x, shape)
    strides = _contig_strides(x._shape)
    return strided_copy(x, shape, 0, [strides[p] for p in perm], op="Transpose")


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
    return run_tensors(_transpose, (x,), {"perm": perm})


@primitive("broadcast_to", "BroadcastTo", infer=_shape_infer)
def _broadcast_to(dev, x, *, shape):
    if shape == x._shape:
        return _view(x, shape)
    return strided_copy(x, shape, 0, _ew._strides_for(x._shape, shape), op="BroadcastTo")


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
    return run_tensors(_broadcast_to, (x,), {"shape": shape})


def _tile_infer(x, *, multiples):
    return tuple(None if d is None else m * d for m, d in zip(multiples, x._shape)), x._dtype


@primitive("tile", "Tile", infer=_tile_infer)
def _tile(dev, x, *, multiples):
    mult = multiples
    nd = len(x._shape)
    out_shape = tuple(m * d for m, d in zip(mult, x._shape))
    if out_shape == x._shape:
        return _view(x, out_shape)
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
        return _view(strided_copy(x, vshape, 0, vstr, op="Tile"), out_shape)
    out = x  # very high rank: one axis at a time
    for i, m in enumerate(mult):
        if m != 1:
            mm = [1] * nd
            mm[i] = m
            out = _tile.impl(dev, out, multiples=tuple(mm))
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
    return run_tensors(_tile, (x,), {"multiples": mult})


@primitive("reverse", "ReverseV2", infer=_same_infer)
def _reverse(dev, x, *, axis):
    if not axis:
        return _view(x, x._shape)
    strides = _contig_strides(x._shape)
    off, st = 0, list(strides)
    for a in axis:
        if x._shape[a] > 0:
            off += (x._shape[a] - 1) * strides[a]
        st[a] = -strides[a]
    return strided_copy(x, x._shape, off, st, op="ReverseV2")


@register("reverse", "ReverseV2")
def reverse(tensor, axis, name=None):
    """``tensor`` with the order of elements reversed along each axis in ``axis``.

    >>> import tapeflow as tf
    >>> tf.reverse(tf.constant([[1, 2, 3]]), [1]).numpy().tolist()
    [[3, 2, 1]]
    """
    x = to_tensor(tensor, "ReverseV2")
    return run_tensors(_reverse, (x,), {"axis": _axes_arg(axis, len(x._shape), "ReverseV2")})


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
                return values
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
    return ts


def _merged(shapes):
    """One shape from shapes that must agree: each dimension the first known one (traced: None where none is)."""
    s0 = shapes[0]
    if None not in s0:
        return s0
    return tuple(next((s[i] for s in shapes if s[i] is not None), None) for i in range(len(s0)))


def _concat_infer(*ts, axis):
    s0 = _merged([t._shape for t in ts])
    return s0[:axis] + (_dim_sum(t._shape[axis] for t in ts),) + s0[axis + 1:], ts[0]._dtype


@primitive("concat", "ConcatV2", infer=_concat_infer)
def _concat(dev, *ts, axis):
    s0, dt = ts[0]._shape, ts[0]._dtype
    widths = [t._shape[axis] for t in ts]
    out_shape = s0[:axis] + (sum(widths),) + s0[axis + 1:]
    if len(ts) == 1:
        return _view(ts[0], out_shape)
    inner = _prod(s0[axis + 1:])
    out = alloc(out_shape, dt, dev)
    check(dev.backend.concat(dt.size, len(ts), [t._h for t in ts], [w * inner for w in widths],
                             _prod(s0[:axis]), out._h), "concat")
    return out


@register("concat", "ConcatV2")
def concat(values, axis, name=None):
    """Join tensors along an existing axis (one kernel launch for all of them).

    >>> import tapeflow as tf
    >>> tf.concat([tf.constant([[1, 2]]), tf.constant([[3, 4]])], axis=0).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    if isinstance(values, (list, tuple)) and any(hasattr(v, "nested_row_splits") for v in values):
        from .. import ragged  # RaggedTensors: tf.ragged's concat, as TensorFlow dispatches

        return ragged._concat(values, axis)
    ts = _join_inputs(values, "ConcatV2")
    s0 = ts[0]._shape
    nd = len(s0)
    if nd == 0:
        raise InvalidArgumentError("cannot concatenate scalars (rank 0); allowed: tensors of rank >= 1 "
                                   "(use tf.stack for scalars)", "ConcatV2")
    ax = normalize_axis(_int_arg(axis, "ConcatV2", "axis"), nd, "ConcatV2")
    for i, t in enumerate(ts):
        s = t._shape
        if (len(s) != nd or s[:ax] != s0[:ax] or s[ax + 1:] != s0[ax + 1:]) and \
                not _shape_eq(s[:ax] + s[ax + 1:], s0[:ax] + s0[ax + 1:]):
            raise InvalidArgumentError(f"values[{i}] has shape {tuple(s)} but values[0] has {tuple(s0)}; allowed: "
                                       f"shapes equal except along axis {ax}", "ConcatV2")
    return run_tensors(_concat, tuple(ts), {"axis": ax})


def _stack_infer(*ts, axis):
    s0 = _merged([t._shape for t in ts])
    return s0[:axis] + (len(ts),) + s0[axis:], ts[0]._dtype


@primitive("stack", "Pack", infer=_stack_infer)
def _stack(dev, *ts, axis):
    s0, dt = ts[0]._shape, ts[0]._dtype
    out = alloc(s0[:axis] + (len(ts),) + s0[axis:], dt, dev)
    check(dev.backend.concat(dt.size, len(ts), [t._h for t in ts], [_prod(s0[axis:])] * len(ts), _prod(s0[:axis]),
                             out._h), "concat")
    return out


@register("stack", "Pack")
def stack(values, axis=0, name=None):
    """Join same-shaped tensors along a new axis (one kernel launch for all of them).

    >>> import tapeflow as tf
    >>> tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    ts = _join_inputs(values, "Pack")
    s0 = ts[0]._shape
    for i, t in enumerate(ts):
        if t._shape != s0 and not _shape_eq(t._shape, s0):
            raise InvalidArgumentError(f"shapes of all inputs must match: values[0].shape = {list(s0)} != "
                                       f"values[{i}].shape = {list(t._shape)}", "Pack")
    nd = len(s0)
    a = _int_arg(axis, "Pack", "axis")
    if not -(nd + 1) <= a <= nd:
        raise InvalidArgumentError(f"axis {a} is out of range for stacking tensors of rank {nd}; allowed: "
                                   f"[{-(nd + 1)}, {nd}]", "Pack")
    a %= nd + 1
    return run_tensors(_stack, tuple(ts), {"axis": a})


def _flat_view(x, dev):
    """x's CPU memory as a flat NumPy array that holds x's host array (through a memoryview), or None where it
    cannot be shared this way (another backend, strings, bfloat16: NumPy exports no buffer of it)."""
    arr = x._arr
    if dev.backend.name != "cpu" or arr is None or x._dtype.is_string:
        return None
    try:
        return np.frombuffer(memoryview(arr), arr.dtype)
    except (TypeError, ValueError, BufferError):
        return None


def _pieces(flat, dev, dtype, sizes, shapes):
    """Tensors over consecutive runs of ``flat`` (``sizes`` elements each, in order), no copy."""
    from_buffer = dev.backend.host_ptr
    s0, n0 = shapes[0], sizes[0]
    if s0 and sizes.count(n0) == len(sizes):  # equal pieces (unstack, an even split): walk the first axis
        return tuple(make(from_buffer(host), host, s0, dtype, dev, n0)
                     for host in flat.reshape((len(shapes),) + s0))
    outs, off = [], 0
    for n, s in zip(sizes, shapes):
        host = flat[off:off + n].reshape(s)
        off += n
        outs.append(make(from_buffer(host), host, s, dtype, dev, n))
    return tuple(outs)


def _split_kernel(x, dev, outer, widths, shapes):
    """The pieces of x seen as [outer, sum(widths)]: piece i is [outer, widths[i]], of shape shapes[i].

    On the CPU, with nothing before the axis (``outer == 1``) each piece is one run of x's buffer: the pieces
    are views of it, no copy and no allocation (PyTorch's ``chunk``/``unbind`` are views too).  Tensors are
    immutable; the views hold x's host array, so a variable whose value x is sees them in its reference counts
    and copies before an update in place (copy on write).  Otherwise one kernel call copies every piece.  (One
    buffer for all the copied pieces, views of it, measured no faster: a view costs what a small allocation
    does.)"""
    dtype = x._dtype
    if outer == 1 and len(shapes) > 1:
        flat = _flat_view(x, dev)
        if flat is not None:
            return _pieces(flat, dev, dtype, widths, shapes)
    outs = tuple(alloc(s, dtype, dev) for s in shapes)
    if outs:
        check(dev.backend.split(dtype.size, len(outs), x._h, widths, outer, [o._h for o in outs]), "split")
    return outs


def _split_infer(x, *, num_or_size_splits, axis):
    return [(x._shape[:axis] + (s,) + x._shape[axis + 1:], x._dtype) for s in num_or_size_splits]


# (shape, sizes, axis) -> (outer, widths, shapes): a split's sizes worked out once per geometry (an LSTM splits
# the same [batch, 4 * units] every step; building the lists cost ~1 us of a 12 us split)
_split_plans: dict = {}


@primitive("split", "SplitV", infer=_split_infer)
def _split(dev, x, *, num_or_size_splits, axis):
    xs = x._shape
    if None in num_or_size_splits:  # traced with an unknown axis: the sizes are known now
        num_or_size_splits = _split_sizes(len(num_or_size_splits) if set(num_or_size_splits) == {None} else
                                          [-1 if s is None else s for s in num_or_size_splits], xs[axis], axis,
                                          "SplitV")
    key = (xs, num_or_size_splits, axis)
    plan = _split_plans.get(key)
    if plan is None:
        inner = _prod(xs[axis + 1:])
        plan = (_prod(xs[:axis]), [s * inner for s in num_or_size_splits],
                [xs[:axis] + (s,) + xs[axis + 1:] for s in num_or_size_splits])
        if len(_split_plans) >= 512:
            _split_plans.clear()
        _split_plans[key] = plan
    return _split_kernel(x, dev, *plan)


def _unstack_infer(x, *, num, axis):
    return [(x._shape[:axis] + x._shape[axis + 1:], x._dtype)] * num


@primitive("unstack", "Unpack", infer=_unstack_infer)
def _unstack(dev, x, *, num, axis):
    if x._shape[axis] != num:
        raise InvalidArgumentError(f"num = {num} does not match dimension {axis} of size {x._shape[axis]}", "Unpack")
    return _split_kernel(x, dev, _prod(x._shape[:axis]), [_prod(x._shape[axis + 1:])] * num,
                         [x._shape[:axis] + x._shape[axis + 1:]] * num)


@register("split", "SplitV")
def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Split along ``axis`` into equal parts (an int) or parts of given sizes (a list, one may be -1).

    On the CPU, a split with nothing before ``axis`` (the first axis, or leading axes of size 1) returns views
    of ``value``'s memory (no copy, as PyTorch's ``chunk``); the others copy in one kernel launch.

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
    return list(run_tensors(_split, (x,), {"num_or_size_splits": tuple(sizes), "axis": ax}))


@register("unstack", "Unpack")
def unstack(value, num=None, axis=0, name=None):
    """Split along ``axis`` into a list of tensors of one rank less (one kernel launch; on the CPU, views of
    ``value``'s memory when nothing comes before ``axis``, as PyTorch's ``unbind``).

    >>> import tapeflow as tf
    >>> [t.numpy().tolist() for t in tf.unstack(tf.constant([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    x = value if type(value) is Tensor else to_tensor(value, "Unpack")
    if not x._shape:
        raise InvalidArgumentError("cannot unstack a scalar (shape ()); allowed: tensors of rank >= 1", "Unpack")
    ax = normalize_axis(axis, len(x._shape), "Unpack")
    n = x._shape[ax]
    if n is None:
        if num is None:
            raise InvalidArgumentError(f"cannot infer num from shape {tuple(x._shape)}: dimension {ax} is unknown "
                                       "while tracing; allowed: an explicit num", "Unpack")
        n = _int_arg(num, "Unpack", "num")
    if num is not None and num != n:
        raise InvalidArgumentError(f"num = {num} does not match dimension {ax} of size {n}", "Unpack")
    return list(run_tensors(_unstack, (x,), {"num": n, "axis": ax}))


# ---- padding -------------------------------------------------------------------

_PAD_MODES = {"CONSTANT": 0, "REFLECT": 1, "SYMMETRIC": 2}


def _pad_infer(x, *, paddings, mode, constant_values):
    return tuple(None if n is None else n + a + b for n, (a, b) in zip(x._shape, paddings)), x._dtype


@primitive("pad", "PadV2", infer=_pad_infer)
def _pad(dev, x, *, paddings, mode, constant_values):
    raw = _value_bytes(constant_values, x._dtype, "PadV2", "constant_values")
    out_shape = tuple(n + a + b for n, (a, b) in zip(x._shape, paddings))
    out = alloc(out_shape, x._dtype, dev)
    be = dev.backend
    check(be.pad(x._dtype.size, _PAD_MODES[mode], len(out_shape), list(x._shape), [a for a, _ in paddings],
                 list(out_shape), x._h, out._h, be.host_ptr(raw)), "pad")
    return out


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
    p = np.asarray(paddings) if not isinstance(paddings, Tensor) else static_value(paddings, "PadV2", "paddings")
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
        limit = None if n is None else n - 1 if m == "REFLECT" else n
        if m != "CONSTANT" and limit is not None and (a > limit or b > limit):
            raise InvalidArgumentError(f"{m} padding [{a}, {b}] of axis {i} (size {n}); allowed: at most {limit} "
                                       "on each side", "MirrorPad")
    _value_bytes(constant_values, x._dtype, "PadV2", "constant_values")  # a scalar that fits x's dtype
    cv = constant_values if not isinstance(constant_values, Tensor) else \
        static_value(constant_values, "PadV2", "constant_values").item()
    return run_tensors(_pad, (x,), {"paddings": pads, "mode": m, "constant_values": cv})


def _select_infer(c, x, y):
    return _ew.broadcast_shape(_ew.broadcast_shape(c._shape, x._shape, "SelectV2"), y._shape, "SelectV2"), x._dtype


@primitive("select", "SelectV2", infer=_select_infer)
def _select_impl(dev, c, x, y):
    if c._shape == x._shape == y._shape:  # same shapes: one flat run
        out_shape, dims, cs, xs, ys = x._shape, (x._size,), _ONE, _ONE, _ONE
    else:
        out_shape, dims, (cs, xs, ys) = _select_plan((c._shape, x._shape, y._shape), "SelectV2")
    out = alloc(out_shape, x._dtype, dev)
    if out._size:
        check(dev.backend.select(x._dtype.size, len(dims), dims, c._h, cs, x._h, xs, y._h, ys, out._h), "select")
    return out


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
        return run_tensors(_select_impl, (c, x, y))  # same shapes, dtypes and device: nothing to convert
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
    _select_infer(c, x, y)  # shapes that broadcast
    return run_tensors(_select_impl, (c, x, y))


@primitive("where", "Where", infer=lambda c: ((None, len(c._shape)), _dt.int64))
def _where_indices(dev, c):
    be = dev.backend
    cnt = be.new_int64([0])
    check(be.count_nonzero(c._dtype.code, c._h, c._size, cnt), "count_nonzero")
    out = alloc((int(cnt[0]), len(c._shape)), _dt.int64, dev)
    if out._size:
        check(be.where_indices(c._dtype.code, c._h, len(c._shape), list(c._shape), c._size, out._h), "where_indices")
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
        return run_tensors(_where_indices, (to_tensor(condition, "Where"),))
    if x is None or y is None:
        raise InvalidArgumentError("x and y must both be given or both be None", "Where")
    return _select(condition, x, y)


__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem", "TopKV2")]

# the index, sort and slice families live in their own modules; their names stay importable from here
from .index_ops import *
from .index_ops import _scatter_add_axis, _tensor_scatter  # noqa: F401 (autodiff.grads.array, variables)
from .slice_ops import *
from .slice_ops import getitem  # noqa: F401
from .sort_ops import *
from .sort_ops import TopKV2  # noqa: F401
