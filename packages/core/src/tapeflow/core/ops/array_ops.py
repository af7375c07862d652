"""Shape ops: creation, reshape, transpose, broadcasting, slicing, joining, gathering."""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dispatch import alloc, hooks, kernel_failed, normalize_axis, register, to_tensor
from ..errors import InvalidArgumentError
from ..tensor import Tensor, make
from .. import devices as _device
from . import _ew


def _prod(xs):
    p = 1
    for v in xs:
        p *= int(v)
    return p


def _shape_arg(shape, op):
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"shape must be a list of ints, got {shape!r}", op) from None
    return out


def _contig_strides(shape):
    strides, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return strides


def strided_copy(src: Tensor, shape, src_off, src_strides, out: Tensor = None, dst_off=0, dst_strides=None,
                 op="StridedCopy") -> Tensor:
    """Copy a strided view of ``src`` into ``out`` (a new dense tensor by default)."""
    dev = src._dev
    be = dev.backend
    if out is None:
        out = alloc(tuple(shape), src._dtype, dev)
    if dst_strides is None:
        dst_strides = _contig_strides(shape)
    st = be.strided_copy(src._dtype.size, len(shape), be.new_int64(shape), src._h, src_off,
                         be.new_int64(src_strides), out._h, dst_off, be.new_int64(dst_strides))
    if st:
        kernel_failed(st, "strided_copy", op)
    return out


# ---- creation ---------------------------------------------------------------

@register("fill", "Fill", nondiff="creates a constant")
def fill(dims, value, dtype=None, name=None):
    """A tensor of shape ``dims`` filled with ``value``.

    >>> import tapeflow as tf
    >>> tf.fill([2, 2], 7).numpy().tolist()
    [[7, 7], [7, 7]]
    """
    shape = _shape_arg(dims, "Fill")
    if any(d < 0 for d in shape):
        raise InvalidArgumentError(f"dims must be non-negative, got {shape}", "Fill")
    if isinstance(value, Tensor):
        dtype = dtype or value._dtype
        value = value.numpy()
    if dtype is None:
        dtype = _dt.bool_ if isinstance(value, bool) else _dt.int32 if isinstance(value, (int, np.integer)) else _dt.float32
    dtype = _dt.as_dtype(dtype)
    dev = _device.current() or _device.default_device()
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
    return fill(shape, 0, dtype)


@register("ones", "Ones", kind="composite")
def ones(shape, dtype=_dt.float32, name=None):
    """A tensor of ones.

    >>> import tapeflow as tf
    >>> tf.ones([2]).numpy().tolist()
    [1.0, 1.0]
    """
    return fill(shape, 1, dtype)


@register("zeros_like", "ZerosLike", kind="composite")
def zeros_like(input, dtype=None, name=None):
    """Zeros of ``input``'s shape and dtype.

    >>> import tapeflow as tf
    >>> tf.zeros_like(tf.constant([1, 2])).numpy().tolist()
    [0, 0]
    """
    x = to_tensor(input, "ZerosLike")
    with _device.device(x._dev):
        return fill(x._shape, 0, dtype or x._dtype)


@register("ones_like", "OnesLike", kind="composite")
def ones_like(input, dtype=None, name=None):
    """Ones of ``input``'s shape and dtype.

    >>> import tapeflow as tf
    >>> tf.ones_like(tf.constant([1.5, 2.5])).numpy().tolist()
    [1.0, 1.0]
    """
    x = to_tensor(input, "OnesLike")
    with _device.device(x._dev):
        return fill(x._shape, 1, dtype or x._dtype)


# ---- views (no copy) --------------------------------------------------------

def _view(x: Tensor, shape) -> Tensor:
    host = x._arr.reshape(shape) if x._arr is not None else None
    return make(x._h, host, shape, x._dtype, x._dev, x._size)


@register("reshape", "Reshape")
def reshape(tensor, shape, name=None):
    """The same values in a new shape (one dimension may be -1).  No copy.

    >>> import tapeflow as tf
    >>> tf.reshape(tf.range(6), [2, -1]).numpy().tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    x = tensor if type(tensor) is Tensor else to_tensor(tensor, "Reshape")
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
    x = input if type(input) is Tensor else to_tensor(input, "Identity")
    out = _view(x, x._shape)
    rec = hooks.recorder
    if rec is not None:
        rec("identity", (x,), out, None)
    return out


# ---- transpose and broadcast -------------------------------------------------

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
        perm = _shape_arg(perm, "Transpose")
        if sorted(p % nd if nd else p for p in perm) != list(range(nd)) or len(perm) != nd:
            raise InvalidArgumentError(f"perm {list(perm)} is not a permutation of the {nd} axes of "
                                       f"shape {tuple(x._shape)}", "Transpose")
        perm = tuple(p % nd for p in perm)
    shape = tuple(x._shape[p] for p in perm)
    if perm == tuple(range(nd)):
        out = _view(x, shape)
    else:
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
    target = _ew.broadcast_shape(x._shape, shape, "BroadcastTo")
    if target != shape:
        raise InvalidArgumentError(f"cannot broadcast shape {tuple(x._shape)} to {shape}", "BroadcastTo")
    if shape == x._shape:
        out = _view(x, shape)
    else:
        out = strided_copy(x, shape, 0, _ew._strides_for(x._shape, shape), op="BroadcastTo")
    rec = hooks.recorder
    if rec is not None:
        rec("broadcast_to", (x,), out, {"shape": shape})
    return out


# ---- indexing ---------------------------------------------------------------

def _index_plan(shape, key):
    """Resolve a basic index (ints, slices, ..., None) into (offset, out_shape,
    strides, squeezed result shape)."""
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise InvalidArgumentError("an index can only have a single ellipsis ('...')", "StridedSlice")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise InvalidArgumentError(f"too many indices for a tensor of shape {tuple(shape)}: {n_real} given",
                                   "StridedSlice")
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
        if isinstance(k, slice):
            start, stop, step = k.indices(shape[dim])
            length = len(range(start, stop, step))
            offset += (start if length else 0) * strides[dim]
            out_shape.append(length)
            out_strides.append(strides[dim] * step)
            result_shape.append(length)
            dim += 1
            continue
        try:
            i = int(k.__index__() if not isinstance(k, Tensor) else int(k))
        except (AttributeError, TypeError):
            raise InvalidArgumentError(
                f"only integers, slices, '...', None and integer/bool tensors are valid indices, got {k!r}",
                "StridedSlice") from None
        if not -shape[dim] <= i < shape[dim]:
            raise InvalidArgumentError(
                f"index {i} is out of bounds for axis {dim} with size {shape[dim]}; allowed: "
                f"[{-shape[dim]}, {shape[dim]})", "StridedSlice")
        offset += (i % shape[dim]) * strides[dim]
        dim += 1
    return offset, tuple(out_shape), out_strides, tuple(result_shape)


def getitem(tensor, key):
    """``t[key]`` with ints, slices (any step), ``...`` and ``None``.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(6), [2, 3])
    >>> x[1].numpy().tolist(), x[:, ::-1].numpy().tolist(), x[..., None].shape
    ([3, 4, 5], [[2, 1, 0], [5, 4, 3]], TensorShape([2, 3, 1]))
    """
    x = tensor
    offset, shape, strides, result = _index_plan(x._shape, key)
    out = strided_copy(x, shape, offset, strides, op="StridedSlice")
    out = _view(out, result)
    rec = hooks.recorder
    if rec is not None:
        rec("getitem", (x,), out, {"key": key})
    return out


@register("unstack", "Unpack")
def unstack(value, num=None, axis=0, name=None):
    """Split along ``axis`` into a list of tensors of one rank less.

    >>> import tapeflow as tf
    >>> [t.numpy().tolist() for t in tf.unstack(tf.constant([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    x = value if type(value) is Tensor else to_tensor(value, "Unpack")
    if not x._shape:
        raise InvalidArgumentError("cannot unstack a scalar (shape ())", "Unpack")
    ax = normalize_axis(axis, len(x._shape), "Unpack")
    n = x._shape[ax]
    if num is not None and num != n:
        raise InvalidArgumentError(f"num = {num} does not match dimension {ax} of size {n}", "Unpack")
    rest = x._shape[:ax] + x._shape[ax + 1:]
    strides = _contig_strides(x._shape)
    rest_strides = strides[:ax] + strides[ax + 1:]
    outs = tuple(strided_copy(x, rest, i * strides[ax], rest_strides, op="Unpack") for i in range(n))
    rec = hooks.recorder
    if rec is not None:
        rec("unstack", (x,), outs, {"axis": ax})
    return list(outs)


@register("range", "Range", nondiff="creates a constant")
def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """Numbers from ``start`` up to (not including) ``limit`` by ``delta``.

    >>> import tapeflow as tf
    >>> tf.range(5).numpy().tolist(), tf.range(1.0, 2.0, 0.5).numpy().tolist()
    ([0, 1, 2, 3, 4], [1.0, 1.5])
    """
    if limit is None:
        start, limit = 0, start
    vals = [v.numpy().item() if isinstance(v, Tensor) else v for v in (start, limit, delta)]
    if vals[2] == 0:
        raise InvalidArgumentError("delta must not be 0", "Range")
    if dtype is None:
        dtype = _dt.float32 if any(isinstance(v, float) for v in vals) else _dt.int32
    dtype = _dt.as_dtype(dtype)
    import math

    n = max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    # values are start + i * delta: an iota kernel through fill + cumsum is overkill here;
    # the host builds the index sequence, as constant() does for literals
    from ..tensor import constant

    return constant(np.arange(n, dtype=np.float64) * vals[2] + vals[0], dtype=dtype)


__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem")]
__all__.append("range_")
