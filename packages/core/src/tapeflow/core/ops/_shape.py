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
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..tensor import Tensor

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
