"""Private helpers shared by the shape, slice, index and sort ops (array_ops, slice_ops, index_ops,
sort_ops)."""
from __future__ import annotations

import builtins

import numpy as np

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    hooks,
    int_arg,
    int_list,
    kernel_failed,
    on_device,
    static_value,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..tensor import Tensor
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


def _dim_eq(a, b) -> bool:
    """Whether two dimensions can be equal: equal, or one unknown (None, while tracing)."""
    return a is None or b is None or a == b


def _shape_eq(sa, sb) -> bool:
    """Whether two shapes can be equal: the same rank and every dimension ``_dim_eq``."""
    return len(sa) == len(sb) and all(a is None or b is None or a == b for a, b in zip(sa, sb))


def _dim_prod(xs):
    """The product of dimensions: 0 when one is 0, None (unknown) when one is unknown, else the product."""
    xs = tuple(xs)
    if None in xs:
        return 0 if 0 in xs else None
    return _prod(xs)


def _dim_sum(xs):
    """The sum of dimensions, None when one is unknown."""
    xs = tuple(xs)
    return None if None in xs else sum(xs)


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
        return static_value(value, op, what).reshape(()).tobytes()
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


def _split_sizes(num_or_size_splits, dim, ax, op):
    if isinstance(num_or_size_splits, (int, np.integer)) or (
            isinstance(num_or_size_splits, Tensor) and not num_or_size_splits._shape):
        n = int(num_or_size_splits)
        if dim is None and n >= 1:  # traced, the axis unknown: equal parts the graph works out when it runs
            return [None] * n
        if n < 1 or dim % n:
            raise InvalidArgumentError(f"cannot split axis {ax} of size {dim} into {n} equal parts; allowed: a "
                                       f"positive divisor of {dim}, or a list of sizes", op)
        return [dim // n] * n
    sizes = list(_shape_arg(num_or_size_splits, op, "num_or_size_splits"))
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise InvalidArgumentError(f"size_splits = {sizes}; allowed: non-negative sizes and at most one -1", op)
    if dim is None:  # traced, the axis unknown: the -1 part (and the sum) wait until the graph runs
        return [None if s == -1 else s for s in sizes]
    if -1 in sizes:
        rest = dim - sum(s for s in sizes if s != -1)
        if rest < 0:
            raise InvalidArgumentError(f"size_splits = {sizes} need more than the {dim} entries of axis {ax}", op)
        sizes[sizes.index(-1)] = rest
    if sum(sizes) != dim:
        raise InvalidArgumentError(f"size_splits = {sizes} add up to {sum(sizes)}, not to the size {dim} of axis "
                                   f"{ax}; allowed: sizes that add up to {dim} (one may be -1)", op)
    return sizes


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
