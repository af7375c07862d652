"""Element-wise dispatch: the hot path shared by every unary and binary op.

Every element-wise op is a runner primitive (``unary_primitive``/``binary_primitive``:
its names, dtype rule, shape/dtype inference and eager implementation), but the public
ops do not go through ``runner.run``: ``unary``/``binary`` below are hand-tuned paths that
do what ``run`` does with the same pieces (the primitive's dtype rule, the device rule, the
primitive's ``infer`` through ``runner.trace_node`` while tracing, its kernel otherwise,
the report to the recorder under the primitive's name), only faster.

A binary op converts Python operands to the other operand's dtype, checks that
dtypes agree, picks the device, and calls one of three kernels: the flat kernel
when shapes are equal or one side is a single element (the fast paths), the
strided kernel for any other broadcast (shapes and strides cached per shape
pair).  float16/bfloat16 compute in float32 and round back.

Before any of that, ``binary``/``unary`` (and ``math_ops.matmul``) hand their operands to the C fast path
(``tapeflow.kernels._fastpath``, see ``use_c_fast_path``): plain CPU tensors of a real dtype, equal shapes or
a single-element operand, no device scope, no trace, an output below the caching allocator's size: it
allocates, runs the kernel, makes the Tensor and reports it to the recorder, as the Python lines below do.
It returns None for anything else (and for a kernel status other than 0), and the Python path runs.
"""
from __future__ import annotations

import numbers
import os

import numpy as np

from tapeflow import kernels

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import hooks, kernel_failed, on_device, run_device, to_tensor
from ..errors import InvalidArgumentError
from ..runner import KernelStatus, _trace, check, fail, primitive, trace_node
from ..tensor import Tensor, constant, make

_scope = _device._scope
F32, F64, BOOL = _dt.float32, _dt.float64, _dt.bool_
_COMPUTE_FLOATS = (F32, F64)
_HALF = (_dt.float16, _dt.bfloat16)

# ---- Python scalars ---------------------------------------------------------

_scalar_cache: dict = {}


def scalar_like(v, t: Tensor, op: str) -> Tensor:
    """A Python scalar as a tensor of ``t``'s dtype on ``t``'s device (cached)."""
    dt, dev = t._dtype, t._dev
    key = (type(v), v, dt.code, dev.name)
    hit = _scalar_cache.get(key)
    if hit is not None:
        return hit
    if dt.is_string and not isinstance(v, (str, bytes)):
        raise TypeError(f"cannot convert {v!r} to a string: the other operand is a string tensor; allowed: a str or "
                        f"bytes operand (tf.strings.as_string for numbers) [Op:{op}]")
    if dt.is_integer or dt.is_bool:
        if isinstance(v, float) and not (v == v and v == int(v)) or isinstance(v, complex):
            raise InvalidArgumentError(f"cannot convert {v!r} to {dt.name}: the other operand is a "
                                       f"{dt.name} tensor and tapeflow does not mix dtypes; cast first", op)
        if not dt.is_bool and not dt.min <= int(v) <= dt.max:
            raise InvalidArgumentError(f"{v!r} is out of range for {dt.name} [{dt.min}, {dt.max}]", op)
    with _device.device(dev):
        out = constant(np.asarray(v).astype(dt.np))
    if not (isinstance(v, float) and v == 0.0):  # keep -0.0 and 0.0 apart
        if len(_scalar_cache) > 4096:
            _scalar_cache.clear()
        _scalar_cache[key] = out
    return out


def coerce_pair(x, y, op: str):
    """Convert a binary op's operands; Python scalars take the tensor's dtype."""
    if not isinstance(x, Tensor) and hasattr(x, "_as_tensor"):
        x = to_tensor(x, op)  # a Variable: its value (a read the tape sees)
    if not isinstance(y, Tensor) and hasattr(y, "_as_tensor"):
        y = to_tensor(y, op)
    xt, yt = isinstance(x, Tensor), isinstance(y, Tensor)
    if xt and not yt:
        y = scalar_like(y, x, op) if _is_py_scalar(y) else array_like(y, x, op) if type(y) is np.ndarray \
            else to_tensor(y, op)
    elif yt and not xt:
        x = scalar_like(x, y, op) if _is_py_scalar(x) else array_like(x, y, op) if type(x) is np.ndarray \
            else to_tensor(x, op)
    elif not xt and not yt:
        x = to_tensor(x, op)
        y = scalar_like(y, x, op) if _is_py_scalar(y) else to_tensor(y, op)
    return x, y


def array_like(a: np.ndarray, t: Tensor, op: str) -> Tensor:
    """A NumPy operand converted to ``t``'s dtype, as TensorFlow 2 converts it (``t + np.ones(2)`` is float32).

    TensorFlow casts silently; here a conversion that would change values (1.5 or NaN to an int, 300 to
    uint8) raises instead, as it does for a Python scalar.
    """
    dt = t._dtype
    if a.dtype == dt.np or dt.is_string or dt.is_bool or a.dtype.kind not in "biuf":
        return to_tensor(a, op)  # same dtype, or nothing to convert (the dtype check names the mismatch)
    if dt.is_integer and a.dtype.kind == "f" and a.size and \
            not (np.isfinite(a).all() and (np.floor(a) == a).all()):
        raise InvalidArgumentError(f"cannot convert a {a.dtype} array with fractional or non-finite values to "
                                   f"{dt.name}: the other operand is a {dt.name} tensor and tapeflow does not "
                                   "mix dtypes; cast first", op)
    if dt.is_integer and a.dtype.kind in "iuf" and a.size and not (dt.min <= a.min() and a.max() <= dt.max):
        raise InvalidArgumentError(f"{a.dtype} array values in [{a.min()}, {a.max()}] are out of range for "
                                   f"{dt.name} [{dt.min}, {dt.max}]; cast first", op)
    with _device.device(t._dev):
        return constant(a.astype(dt.np))


def _is_py_scalar(v) -> bool:
    return isinstance(v, (numbers.Number, np.generic))


def dtype_mismatch(x: Tensor, y: Tensor, op: str):
    raise InvalidArgumentError(
        f"cannot compute {op} as input #1(zero-based) was expected to be a {x._dtype.name} tensor "
        f"but is a {y._dtype.name} tensor; tapeflow does not mix dtypes, use tf.cast", op)


# ---- broadcasting -----------------------------------------------------------

_bcast_cache: dict = {}


def broadcast_shape(sa: tuple, sb: tuple, op: str = "BroadcastTo") -> tuple:
    nd = max(len(sa), len(sb))
    pa, pb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    out = []
    for da, db in zip(pa, pb):
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        elif da is None or db is None:  # traced, a dimension unknown: the other one unless it is 1
            out.append(db if da is None else da)
        else:
            raise InvalidArgumentError(
                f"incompatible shapes: {tuple(sa)} vs. {tuple(sb)} (dimensions must be equal or 1)", op)
    return tuple(out)


def _strides_for(shape: tuple, out: tuple) -> list:
    """Element strides reading ``shape`` (right-aligned) broadcast to ``out``."""
    nd = len(out)
    padded = (1,) * (nd - len(shape)) + shape
    strides, acc = [0] * nd, 1
    for i in range(nd - 1, -1, -1):
        strides[i] = acc if padded[i] != 1 or out[i] == 1 else 0
        if padded[i] == 1:
            strides[i] = 0
        acc *= padded[i]
    return strides


def _coalesce(out: tuple, sa: list, sb: list):
    """Merge adjacent dims that both operands walk contiguously."""
    shape, A, B = [], [], []
    for d, a, b in zip(out, sa, sb):
        if d == 1:
            continue
        if shape and A[-1] == a * d and B[-1] == b * d:
            shape[-1] *= d
            A[-1], B[-1] = a, b
        else:
            shape.append(d)
            A.append(a)
            B.append(b)
    if not shape:
        shape, A, B = [1], [0], [0]
    return shape, A, B


def broadcast_plan(sa: tuple, sb: tuple, be, op: str):
    key = (sa, sb, be.name)
    plan = _bcast_cache.get(key)
    if plan is None:
        out = broadcast_shape(sa, sb, op)
        shape, A, B = _coalesce(out, _strides_for(sa, out), _strides_for(sb, out))
        size = 1
        for d in out:
            size *= d
        plan = (out, size, len(shape), be.new_int64(shape), be.new_int64(A), be.new_int64(B))
        if len(_bcast_cache) > 2048:
            _bcast_cache.clear()
        _bcast_cache[key] = plan
    return plan


# ---- kernels ----------------------------------------------------------------

def binary_kernel(code: int, x: Tensor, y: Tensor, out_dtype, op: str) -> Tensor:
    """Run binary kernel ``code`` on same-dtype, same-device tensors (broadcasting).

    A failed kernel raises ``runner.KernelStatus`` (the caller turns it into the op's error).
    """
    dev = x._dev
    be = dev.backend
    dt = x._dtype
    sx, sy = x._shape, y._shape
    if sx == sy:
        size = x._size
        h, host = be.alloc(sx, out_dtype.np)
        st = be.binary_flat(code, dt.code, x._h, 0, y._h, 0, h, size)
        out = make(h, host, sx, out_dtype, dev, size)
    elif y._size == 1 and len(sy) <= len(sx):
        size = x._size
        h, host = be.alloc(sx, out_dtype.np)
        st = be.binary_flat(code, dt.code, x._h, 0, y._h, 1, h, size)
        out = make(h, host, sx, out_dtype, dev, size)
    elif x._size == 1 and len(sx) <= len(sy):
        size = y._size
        h, host = be.alloc(sy, out_dtype.np)
        st = be.binary_flat(code, dt.code, x._h, 1, y._h, 0, h, size)
        out = make(h, host, sy, out_dtype, dev, size)
    else:
        shape, size, nd, cshape, astr, bstr = broadcast_plan(sx, sy, be, op)
        h, host = be.alloc(shape, out_dtype.np)
        st = be.binary_strided(code, dt.code, nd, cshape, x._h, astr, y._h, bstr, h) if size else 0
        out = make(h, host, shape, out_dtype, dev, size)
    if st:
        check(st, "binary")
    return out


def binary_eager(code: int, x: Tensor, y: Tensor, bool_out: bool, op: str) -> Tensor:
    """A binary primitive's eager implementation: half types compute in float32 and round once."""
    dt = x._dtype
    if dt.is_half:
        out = binary_kernel(code, raw_cast(x, F32), raw_cast(y, F32), BOOL if bool_out else F32, op)
        return out if bool_out else raw_cast(out, dt)
    return binary_kernel(code, x, y, BOOL if bool_out else dt, op)


def unary_eager(code: int, x: Tensor, dev, param: float, bool_out: bool) -> Tensor:
    """A unary primitive's eager implementation on ``x`` (on ``dev``): half types compute in float32."""
    dt = x._dtype
    src = raw_cast(x, F32) if dt.is_half else x
    out_dt = BOOL if bool_out else src._dtype
    be = dev.backend
    size = x._size
    h, host = be.alloc(x._shape, out_dt.np)
    st = be.unary(code, src._dtype.code, src._h, h, size, param)
    if st:
        check(st, "unary")
    out = make(h, host, x._shape, out_dt, dev, size)
    if dt.is_half and not bool_out:
        out = raw_cast(out, dt)
    return out


def not_allowed(dt, allowed, op: str):
    raise InvalidArgumentError(
        f"{op} does not support {dt.name}; allowed: {', '.join(d.name for d in allowed)}", op)


def raw_cast(x: Tensor, dtype) -> Tensor:
    """``x`` as ``dtype`` without reporting to a tape (for updates that are not differentiable)."""
    dev = x._dev
    h, host = dev.backend.alloc(x._shape, dtype.np)
    st = dev.backend.cast(x._dtype.code, x._h, dtype.code, h, x._size)
    if st:
        kernel_failed(st, "cast", "Cast")
    return make(h, host, x._shape, dtype, dev, x._size)


def raw_binary(code: int, x: Tensor, y: Tensor, op: str) -> Tensor:
    """A binary kernel on same-dtype tensors, unrecorded (variable updates)."""
    try:
        return binary_eager(code, x, y, False, op)
    except KernelStatus as e:
        kernel_failed(e.status, e.kernel, op)


# ---- the primitives ---------------------------------------------------------

def binary_primitive(name: str, tf_name: str, code: int, allowed, bool_out: bool = False, detail=None):
    """Declare binary element-wise primitive ``name``: broadcast shape, ``x``'s dtype (bool when ``bool_out``).

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import PRIMITIVES
    >>> PRIMITIVES["add"].infer(tf.ones([2, 1]), tf.ones([3])), PRIMITIVES["less"].infer(tf.ones([2]), tf.ones([2]))[1]
    (((2, 3), tf.float32), tf.bool)
    """
    def infer(x, y):
        return broadcast_shape(x._shape, y._shape, tf_name), BOOL if bool_out else x._dtype

    def impl(dev, x, y):
        return binary_eager(code, x, y, bool_out, tf_name)

    impl.__name__ = impl.__qualname__ = f"_{name}"
    return primitive(name, tf_name, infer=infer, dtypes=allowed, same_dtype=True, detail=detail)(impl)


def unary_primitive(name: str, tf_name: str, code: int, allowed, bool_out: bool = False, param=None):
    """Declare unary element-wise primitive ``name``: ``x``'s shape and dtype (bool when ``bool_out``).

    ``param(attrs)`` gives the kernel's scalar parameter from the op's attributes (alpha, order, ...).

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import PRIMITIVES
    >>> PRIMITIVES["exp"].infer(tf.ones([2, 3])), PRIMITIVES["is_nan"].infer(tf.ones([2]))
    (((2, 3), tf.float32), ((2,), tf.bool))
    """
    def infer(x, **attrs):
        return x._shape, BOOL if bool_out else x._dtype

    if param is None:
        def impl(dev, x):
            return unary_eager(code, x, dev, 0.0, bool_out)
    else:
        def impl(dev, x, **attrs):
            return unary_eager(code, x, dev, param(attrs), bool_out)

    impl.__name__ = impl.__qualname__ = f"_{name}"
    return primitive(name, tf_name, infer=infer, dtypes=allowed)(impl)


def extend_complex(prim, complex_impl, out_dtype=None):
    """Let primitive ``prim`` take complex64/complex128 inputs: ``complex_impl(dev, *inputs, **attrs)`` runs
    for them (the real kernels have no complex loops); ``out_dtype(dtype)`` gives the output's dtype for a
    complex input when it is not the input's (abs: the real dtype).  The hot paths above call ``prim.impl``
    for complex dtypes.

    >>> from tapeflow.core.runner import PRIMITIVES
    >>> import tapeflow as tf
    >>> PRIMITIVES["abs"].infer(tf.constant([1j]))
    ((1,), tf.float64)
    """
    real_impl, real_infer = prim.impl, prim.infer

    def impl(dev, *inputs, **attrs):
        if inputs[0]._dtype.is_complex:
            return complex_impl(dev, *inputs, **attrs)
        return real_impl(dev, *inputs, **attrs)

    impl.__name__ = impl.__qualname__ = real_impl.__name__
    prim.impl = impl
    if out_dtype is not None:
        def infer(x, *rest, **attrs):
            shape, dt = real_infer(x, *rest, **attrs)
            return shape, (out_dtype(x._dtype) if x._dtype.is_complex else dt)

        prim.infer = infer
    prim.dtypes = tuple(prim.dtypes) + _dt.COMPLEX
    for d in _dt.COMPLEX:
        prim.mask |= 1 << d.code
    return prim


# ---- the hot paths ----------------------------------------------------------

_new = object.__new__
# the dtypes whose CPU kernels binary_flat/unary run directly (no half types, strings or complex)
_FAST_DTYPES = 0
for _d in (F32, F64, _dt.int8, _dt.uint8, _dt.int16, _dt.int32, _dt.int64, BOOL):
    _FAST_DTYPES |= 1 << _d.code
#: the CPU device and its backend's alloc, binary_flat and unary (set on first use: the backend loads lazily)
_HOST = _alloc = _binary_flat = _unary = None
#: the attrs a matmul is recorded with, one dict per (transpose_a, transpose_b)
MM_ATTRS = {(ta, tb): {"transpose_a": ta, "transpose_b": tb} for ta in (False, True) for tb in (False, True)}
#: the C fast path's binary, unary and matmul (tapeflow.kernels._fastpath; None: the Python paths only, as
#: with TAPEFLOW_C_FASTPATH=0 or a kernels build without it).  Each returns the op's output, or None for
#: anything it does not handle (the Python path then runs, raising the op's errors)
fast_binary = fast_unary = fast_matmul = None
_c_fast_wanted = os.environ.get("TAPEFLOW_C_FASTPATH", "1") != "0"


def _host_init():
    global _HOST, _alloc, _binary_flat, _unary
    dev = _device.get("cpu:0")
    be = dev.backend
    _alloc, _binary_flat, _unary = be.alloc, be.binary_flat, be.unary
    _HOST = dev
    use_c_fast_path(_c_fast_wanted)


def use_c_fast_path(on: bool | None = None) -> bool:
    """Turn the C fast path of small CPU ops on or off (the Python paths then do all the work); returns
    whether it is on (False when the kernels were built without it or the CPU backend has no ``ffi``).
    ``on=None`` changes nothing.  ``TAPEFLOW_C_FASTPATH=0`` starts with it off.

    >>> from tapeflow.core.ops import _ew
    >>> was_on = _ew.use_c_fast_path()
    >>> _ew.use_c_fast_path(False), _ew.fast_binary
    (False, None)
    >>> _ = _ew.use_c_fast_path(was_on)
    """
    global fast_binary, fast_unary, fast_matmul, _c_fast_wanted
    if on is None:
        if _HOST is None:
            _host_init()
        return fast_binary is not None
    fast_binary = fast_unary = fast_matmul = None
    _c_fast_wanted = bool(on)
    if not on:
        return False
    if _HOST is None:
        _host_init()   # loads the CPU backend, then calls back here
        return fast_binary is not None
    be = _HOST.backend
    try:
        from tapeflow.kernels import _fastpath
    except ImportError:
        return False
    ffi, lib = getattr(be, "ffi", None), getattr(be, "lib", None)
    if ffi is None or lib is None:
        return False

    def addr(name):
        return int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))

    fast = tuple((d.code, d, d.np) for d in _dt.ALL if (_FAST_DTYPES >> d.code) & 1)
    mm_mask = (1 << F32.code) | (1 << F64.code)
    _fastpath.init(Tensor, np.ndarray, _HOST, hooks, _scope, np.empty, ffi.from_buffer, fast, BOOL.code,
                   be.CACHED_MIN, addr("tpf_binary_flat"), addr("tpf_unary"), addr("tpf_matmul"),
                   tuple(MM_ATTRS[ta, tb] for ta in (False, True) for tb in (False, True)), mm_mask)
    fast_binary, fast_unary, fast_matmul = _fastpath.binary, _fastpath.unary, _fastpath.matmul
    return True


def binary(prim, code: int, x, y, bool_out: bool = False) -> Tensor:
    """``runner.run(prim, (x, y))`` for a binary primitive, hand-tuned (Python scalars take the other
    operand's dtype)."""
    if fast_binary is not None:
        out = fast_binary(prim.name, code, prim.mask, bool_out, x, y)
        if out is not None:
            return out
    tx, ty = type(x), type(y)
    if tx is not Tensor or ty is not Tensor:
        if tx is Tensor and (ty is float or ty is int):
            y = scalar_like(y, x, prim.tf_name)
        elif ty is Tensor and (tx is float or tx is int):
            x = scalar_like(x, y, prim.tf_name)
        else:
            x, y = coerce_pair(x, y, prim.tf_name)
        if fast_binary is not None:   # converted operands (a Python number, a Variable's value): C again
            out = fast_binary(prim.name, code, prim.mask, bool_out, x, y)
            if out is not None:
                return out
    dt = x._dtype
    # the hottest path: two CPU tensors of one real dtype, of one shape or one of them a single element,
    # nothing to place or trace: the flat kernel straight away
    if x._dev is _HOST and y._dev is _HOST and dt is y._dtype and (prim.mask & _FAST_DTYPES) >> dt.code & 1 \
            and not _scope.stack and not hooks.tracing:
        sx, sy = x._shape, y._shape
        if sx == sy:
            shape, size, ax, ay = sx, x._size, 0, 0
        elif y._size == 1 and len(sy) <= len(sx):
            shape, size, ax, ay = sx, x._size, 0, 1
        elif x._size == 1 and len(sx) <= len(sy):
            shape, size, ax, ay = sy, y._size, 1, 0
        else:
            shape = None
        if shape is not None:
            out_dt = BOOL if bool_out else dt
            h, host = _alloc(shape, out_dt.np)
            st = _binary_flat(code, dt.code, x._h, ax, y._h, ay, h, size)
            if st:
                fail(prim, KernelStatus(st, "binary"), (x, y), None)
            out = _new(Tensor)
            out._h, out._arr, out._shape, out._dtype, out._dev, out._size = h, host, shape, out_dt, x._dev, size
            rec = hooks.recorder
            if rec is not None:
                rec(prim.name, (x, y), out, None)
            return out
    elif _HOST is None:
        _host_init()
        return binary(prim, code, x, y, bool_out)
    if dt is not y._dtype:
        dtype_mismatch(x, y, prim.tf_name)
    if x._dev is not y._dev or _scope.stack:
        dev = run_device(x, y)
        x, y = on_device(x, dev), on_device(y, dev)
    if not (prim.mask >> dt.code) & 1:
        not_allowed(dt, prim.dtypes, prim.tf_name)
    if hooks.tracing and _trace.graph is not None:
        out = trace_node(prim, (x, y), None, _trace.graph, x._dev)
    else:
        try:
            if dt.is_half:
                out = binary_eager(code, x, y, bool_out, prim.tf_name)
            elif dt.is_string or dt.is_complex:  # strings: host implementation; complex: extend_complex's
                out = prim.impl(x._dev, x, y)
            else:
                out = binary_kernel(code, x, y, BOOL if bool_out else dt, prim.tf_name)
        except KernelStatus as e:
            fail(prim, e, (x, y), None)
    rec = hooks.recorder
    if rec is not None:
        rec(prim.name, (x, y), out, None)
    return out


def unary(prim, code: int, x, param: float = 0.0, bool_out: bool = False, attrs=None) -> Tensor:
    """``runner.run(prim, (x,), attrs)`` for a unary primitive, hand-tuned; ``param`` is the kernel's
    scalar parameter for ``attrs``."""
    if fast_unary is not None:
        out = fast_unary(prim.name, code, prim.mask, bool_out, param, attrs, x)
        if out is not None:
            return out
    if type(x) is Tensor:
        dt = x._dtype
        # the hottest path: a CPU tensor of a real dtype, nothing to place or trace
        if x._dev is _HOST and (prim.mask & _FAST_DTYPES) >> dt.code & 1 and not _scope.stack \
                and not hooks.tracing:
            size, shape, dev = x._size, x._shape, x._dev
            out_dt = BOOL if bool_out else dt
            h, host = _alloc(shape, out_dt.np)
            st = _unary(code, dt.code, x._h, h, size, param)
            if st:
                fail(prim, KernelStatus(st, "unary"), (x,), attrs)
            out = _new(Tensor)
            out._h, out._arr, out._shape, out._dtype, out._dev, out._size = h, host, shape, out_dt, dev, size
            rec = hooks.recorder
            if rec is not None:
                rec(prim.name, (x,), out, attrs)
            return out
        if _HOST is None:
            _host_init()
            return unary(prim, code, x, param, bool_out, attrs)
    else:
        x = to_tensor(x, prim.tf_name)
    dt = x._dtype
    if not (prim.mask >> dt.code) & 1:
        not_allowed(dt, prim.dtypes, prim.tf_name)
    dev = x._dev
    stack = _scope.stack
    if stack and stack[-1] is not None and stack[-1] is not dev:
        dev = stack[-1]
        x = on_device(x, dev)
    if hooks.tracing and _trace.graph is not None:
        out = trace_node(prim, (x,), attrs, _trace.graph, dev)
    else:
        try:
            out = unary_eager(code, x, dev, param, bool_out) if not dt.is_complex else prim.impl(dev, x)
        except KernelStatus as e:
            fail(prim, e, (x,), attrs)
    rec = hooks.recorder
    if rec is not None:
        rec(prim.name, (x,), out, attrs)
    return out


_HALF_CODE = max(d.code for d in _HALF)   # float16 and bfloat16 have the lowest dtype codes
assert all((d.code <= _HALF_CODE) == (d in _HALF) for d in _dt.ALL)

BIN = kernels.BINARY_CODES
UN = kernels.UNARY_CODES
