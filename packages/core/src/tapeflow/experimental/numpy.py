"""tf.experimental.numpy: the NumPy API over tapeflow tensors, as TensorFlow's ``tnp``.

``tnp.ndarray`` is ``tf.Tensor``: every function takes tensors, variables, NumPy arrays or Python values
and returns tensors, computed by tapeflow ops (so they run on any device, trace inside ``tf.function``
and differentiate on tapes).  Dtypes follow NumPy's rules, as TensorFlow's tnp documents: Python floats
and ints make float64 and int64 arrays, creation functions default to float64, binary functions promote
as ``numpy.result_type`` (Python scalars are weak: float32 + 1.0 stays float32), true division and the
float functions of integers give float64, sums of small integers int64.  The result dtype of each call is
NumPy's, found by applying the NumPy function to one-element dummies (the values are computed by
tapeflow).  Dtypes tapeflow lacks (complex, uint16/32/64) raise.

>>> import tapeflow.experimental.numpy as tnp
>>> x = tnp.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> x.dtype, tnp.sum(x, axis=0).numpy().tolist()
(tf.float64, [4.0, 6.0])
>>> tnp.add(tnp.ones([2], dtype=tnp.float32), 1.0).dtype
tf.float32
"""
from __future__ import annotations

import builtins
import math as _math

import numpy as _np

from tapeflow.core import api as _api
from tapeflow.core import dtypes as _dt
from tapeflow.core import ops as _ops
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.ops import random_ops as _random_ops
from tapeflow.core.tensor import Tensor, convert_to_tensor

ndarray = Tensor
bool_, int8, uint8, int16, int32, int64 = _dt.bool_, _dt.int8, _dt.uint8, _dt.int16, _dt.int32, _dt.int64
float16, bfloat16, float32, float64 = _dt.float16, _dt.bfloat16, _dt.float32, _dt.float64
half, single, double = float16, float32, float64
pi, e, inf, nan, newaxis = _math.pi, _math.e, _math.inf, _math.nan, None

_OP = "tnp"


# ---- dtypes ------------------------------------------------------------------------------------

def _tf_dtype(npdt, what="dtype"):
    """The tapeflow dtype of a NumPy dtype (or a tapeflow dtype, a name, a Python type)."""
    if npdt is None:
        return None
    if isinstance(npdt, _dt.DType):
        return npdt
    if npdt in (float, builtins.float):
        return float64
    if npdt in (int, builtins.int):
        return int64
    if npdt in (bool, builtins.bool):
        return bool_
    try:
        return _dt.as_dtype(_np.dtype(npdt))
    except (TypeError, ValueError, KeyError):
        raise InvalidArgumentError(f"{what} {npdt!r} is not a tapeflow dtype; allowed: bool, int8, uint8, int16, "
                                   "int32, int64, float16, bfloat16, float32, float64", _OP) from None


def _np_of(x):
    """What numpy.result_type sees for an argument: a dtype for arrays, the value for Python scalars (weak)."""
    if isinstance(x, Tensor):
        return x._dtype.np
    if hasattr(x, "_as_tensor"):
        return x._as_tensor()._dtype.np
    if isinstance(x, (builtins.bool, builtins.int, builtins.float)):
        return x
    if isinstance(x, _np.dtype) or (isinstance(x, type) and issubclass(x, _np.generic)):
        return _np.dtype(x)
    return _np.asarray(x).dtype


def result_type(*arrays_and_dtypes):
    """The dtype NumPy gives a computation over these arrays, dtypes and scalars (Python scalars are weak).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.result_type(tnp.int32, tnp.float32), tnp.result_type(tnp.ones([1], tnp.float32), 2.0)
    (tf.float64, tf.float32)
    """
    items = [a.np if isinstance(a, _dt.DType) else _np_of(a) for a in arrays_and_dtypes]
    return _tf_dtype(_np.result_type(*items))


def _dummy(x):
    v = _np_of(x)
    return _np.ones((1,), v) if isinstance(v, _np.dtype) else v


def _out_dtype(np_fn, args, **kwargs):
    with _np.errstate(all="ignore"):
        return _tf_dtype(_np.asarray(np_fn(*[_dummy(a) for a in args], **kwargs)).dtype)


def asarray(a, dtype=None):
    """``a`` as a tensor (no copy for a tensor of that dtype); Python floats make float64, ints int64.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.asarray([1, 2]).dtype, tnp.asarray(1.5).dtype, tnp.asarray([1, 2], dtype=tnp.float32).dtype
    (tf.int64, tf.float64, tf.float32)
    """
    dt = _tf_dtype(dtype)
    if isinstance(a, Tensor) or hasattr(a, "_as_tensor"):
        t = convert_to_tensor(a)
        return t if dt is None or t._dtype is dt else _ops.cast(t, dt)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(v, Tensor) or hasattr(v, "_as_tensor") for v in a):
        parts = [asarray(v) for v in a]
        common = dt or result_type(*parts)
        return _ops.stack([_ops.cast(p, common) if p._dtype is not common else p for p in parts])
    arr = _np.asarray(a, dtype=None if dt is None else dt.np)   # the host container of the value
    return convert_to_tensor(arr) if dt is None else convert_to_tensor(arr, dt)


def array(object, dtype=None, copy=True, ndmin=0):
    """A tensor of ``object`` (a copy when ``copy``), with at least ``ndmin`` axes (leading ones added).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.array([1.0, 2.0], ndmin=2).shape
    TensorShape([1, 2])
    """
    t = asarray(object, dtype)
    if copy:
        t = _ops.identity(t)
    if len(t._shape) < ndmin:
        t = _ops.reshape(t, (1,) * (ndmin - len(t._shape)) + tuple(t._shape))
    return t


def _promote(*args):
    """The arguments as tensors of their NumPy result type."""
    dt = result_type(*args)
    return [_cast(asarray(a), dt) for a in args]


def _cast(t, dt):
    return t if t._dtype is dt else _ops.cast(t, dt)


# ---- element-wise functions --------------------------------------------------------------------------

def _unary(name, np_fn, tf_fn, example):
    def f(x):
        t = asarray(x)
        out = _out_dtype(np_fn, (t,))
        if out is bool_:   # predicates compute in the input's dtype (integers as float64: nan/inf tests)
            return tf_fn(t if t._dtype.is_floating or t._dtype is bool_ else _cast(t, float64))
        return _cast(tf_fn(_cast(t, out)), out)

    want = _np.asarray(np_fn(_np.asarray(example)))
    shown = ".numpy().tolist()" if want.dtype == bool else ".numpy().round(6).tolist()"   # to 6 places: ulps differ
    expect = (want if want.dtype == bool else want.round(6)).tolist()
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"numpy.{np_fn.__name__} of a tensor, element-wise, with NumPy's result dtype.\n\n"
                 f"    >>> import tapeflow.experimental.numpy as tnp\n"
                 f"    >>> tnp.{name}(tnp.asarray({example!r})){shown}\n"
                 f"    {expect!r}\n")
    return f


def _binary(name, np_fn, tf_fn, example, compute_in_inputs=False):
    def f(x1, x2):
        out = _out_dtype(np_fn, (x1, x2))
        a, b = _promote(x1, x2)
        if not compute_in_inputs and a._dtype is not out:
            a, b = _cast(a, out), _cast(b, out)
        return _cast(tf_fn(a, b), out)

    expect = _np.asarray(np_fn(_np.asarray(example[0]), _np.asarray(example[1]))).tolist()
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"numpy.{np_fn.__name__} of two tensors, element-wise with broadcasting, with NumPy's type "
                 f"promotion.\n\n"
                 f"    >>> import tapeflow.experimental.numpy as tnp\n"
                 f"    >>> tnp.{name}(tnp.asarray({example[0]!r}), tnp.asarray({example[1]!r})).numpy().tolist()\n"
                 f"    {expect!r}\n")
    return f


def _log_base(base):
    return lambda t: _ops.real_div(_ops.log(t), _ops.log(_ops.cast(base, t._dtype)))


_F = [0.25, 0.5]
_UNARY = {
    "negative": (_np.negative, _ops.negative, [1.0, -2.0]),
    "positive": (_np.positive, _ops.identity, [1.0, -2.0]),
    "abs": (_np.abs, _ops.abs, [-1.5, 2.0]),
    "absolute": (_np.absolute, _ops.abs, [-1.5, 2.0]),
    "sqrt": (_np.sqrt, _ops.sqrt, [1.0, 4.0]),
    "square": (_np.square, _ops.square, [1.5, -2.0]),
    "exp": (_np.exp, _ops.exp, [0.0, 1.0]),
    "expm1": (_np.expm1, _ops.expm1, [0.0, 1.0]),
    "log": (_np.log, _ops.log, [1.0, 2.0]),
    "log1p": (_np.log1p, _ops.log1p, [0.0, 1.0]),
    "log2": (_np.log2, _log_base(2.0), [1.0, 8.0]),
    "log10": (_np.log10, _log_base(10.0), [1.0, 100.0]),
    "sin": (_np.sin, _ops.sin, _F),
    "cos": (_np.cos, _ops.cos, _F),
    "tan": (_np.tan, _ops.tan, _F),
    "arcsin": (_np.arcsin, _ops.asin, _F),
    "arccos": (_np.arccos, _ops.acos, _F),
    "arctan": (_np.arctan, _ops.atan, _F),
    "sinh": (_np.sinh, _ops.sinh, _F),
    "cosh": (_np.cosh, _ops.cosh, _F),
    "tanh": (_np.tanh, _ops.tanh, _F),
    "arcsinh": (_np.arcsinh, _ops.asinh, _F),
    "arccosh": (_np.arccosh, _ops.acosh, [1.5, 2.0]),
    "arctanh": (_np.arctanh, _ops.atanh, _F),
    "sign": (_np.sign, _ops.sign, [-2.0, 0.0, 3.0]),
    "floor": (_np.floor, _ops.floor, [-1.5, 1.5]),
    "ceil": (_np.ceil, _ops.ceil, [-1.5, 1.5]),
    "rint": (_np.rint, _ops.round, [0.5, 1.5, 2.4]),
    "reciprocal": (_np.reciprocal, _ops.reciprocal, [2.0, 4.0]),
    "isnan": (_np.isnan, _ops.is_nan, [1.0, _math.nan]),
    "isinf": (_np.isinf, _ops.is_inf, [1.0, _math.inf]),
    "isfinite": (_np.isfinite, _ops.is_finite, [1.0, _math.inf]),
    "logical_not": (_np.logical_not, _ops.logical_not, [True, False]),
}
_BINARY = {
    "add": (_np.add, _ops.add, ([1.0, 2.0], [3.0, 4.0])),
    "subtract": (_np.subtract, _ops.subtract, ([1.0, 2.0], [3.0, 5.0])),
    "multiply": (_np.multiply, _ops.multiply, ([1.5, 2.0], [2.0, 4.0])),
    "divide": (_np.divide, _ops.real_div, ([1, 3], [2, 4])),
    "true_divide": (_np.true_divide, _ops.real_div, ([1, 3], [2, 4])),
    "floor_divide": (_np.floor_divide, _ops.floordiv, ([7, -7], [2, 2])),
    "mod": (_np.mod, _ops.floormod, ([7, -7], [3, 3])),
    "remainder": (_np.remainder, _ops.floormod, ([7, -7], [3, 3])),
    "power": (_np.power, _ops.pow, ([2.0, 3.0], [3.0, 2.0])),
    "maximum": (_np.maximum, _ops.maximum, ([1, 5], [3, 2])),
    "minimum": (_np.minimum, _ops.minimum, ([1, 5], [3, 2])),
    "arctan2": (_np.arctan2, _ops.atan2, ([1.0, -1.0], [1.0, 1.0])),
    "equal": (_np.equal, _ops.equal, ([1, 2], [1, 3])),
    "not_equal": (_np.not_equal, _ops.not_equal, ([1, 2], [1, 3])),
    "less": (_np.less, _ops.less, ([1, 2], [2, 2])),
    "less_equal": (_np.less_equal, _ops.less_equal, ([1, 3], [2, 2])),
    "greater": (_np.greater, _ops.greater, ([3, 2], [2, 2])),
    "greater_equal": (_np.greater_equal, _ops.greater_equal, ([1, 3], [2, 2])),
    "logical_and": (_np.logical_and, _ops.logical_and, ([True, True], [True, False])),
    "logical_or": (_np.logical_or, _ops.logical_or, ([False, True], [False, False])),
    "logical_xor": (_np.logical_xor, _ops.logical_xor, ([True, True], [True, False])),
}
_COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
for _n, (_nf, _tf_fn, _ex) in _UNARY.items():
    globals()[_n] = _unary(_n, _nf, _tf_fn, _ex)
for _n, (_nf, _tf_fn, _ex) in _BINARY.items():
    globals()[_n] = _binary(_n, _nf, _tf_fn, _ex, compute_in_inputs=_n in _COMPARE or _n.startswith("logical"))
del _n, _nf, _tf_fn, _ex


def around(a, decimals=0):
    """Values rounded to ``decimals`` places, halves to even (numpy.around).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.around(tnp.asarray([1.25, 2.5, 3.14159]), 2).numpy().tolist()
    [1.25, 2.5, 3.14]
    """
    t = asarray(a)
    if not t._dtype.is_floating:
        return t
    if decimals == 0:
        return _ops.round(t)
    scale = _ops.cast(10.0 ** decimals, t._dtype)
    return _ops.real_div(_ops.round(_ops.multiply(t, scale)), scale)


round = around  # noqa: A001  (tnp.round, as numpy.round)


def clip(a, a_min, a_max):
    """``a`` limited to [a_min, a_max] (numpy.clip).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.clip(tnp.asarray([1, 5, 9]), 2, 6).numpy().tolist()
    [2, 5, 6]
    """
    t, lo, hi = _promote(a, a_min, a_max)
    return _ops.minimum(_ops.maximum(t, lo), hi)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y`` (promoted as NumPy), or with only ``condition`` the tuple of index
    arrays of its true entries (numpy.where).

    >>> import tapeflow as tf
    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.where(tnp.asarray([True, False]), 1.0, tnp.asarray([5, 6])).numpy().tolist()
    [1.0, 6.0]
    >>> [i.numpy().tolist() for i in tnp.where(tnp.asarray([[0, 1], [1, 0]]))]
    [[0, 1], [1, 0]]
    """
    c = asarray(condition)
    if x is None and y is None:
        idx = _ops.where(c if c._dtype is bool_ else _ops.not_equal(c, _ops.zeros_like(c)))
        return tuple(idx[:, i] for i in range(len(c._shape)))
    if x is None or y is None:
        raise InvalidArgumentError("where takes a condition alone or with both x and y", _OP)
    a, b = _promote(x, y)
    c = c if c._dtype is bool_ else _ops.not_equal(c, _ops.zeros_like(c))
    return _ops.where(c, a, b)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b|, element-wise (numpy.isclose).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.isclose(tnp.asarray([1.0, 2.0]), tnp.asarray([1.0 + 1e-9, 2.1])).numpy().tolist()
    [True, False]
    """
    x, y = _promote(a, b)
    if not x._dtype.is_floating:
        x, y = _cast(x, float64), _cast(y, float64)
    dt = x._dtype
    close = _ops.less_equal(_ops.abs(_ops.subtract(x, y)),
                            _ops.add(_ops.cast(atol, dt), _ops.multiply(_ops.cast(rtol, dt), _ops.abs(y))))
    close = _ops.logical_or(close, _ops.equal(x, y))   # equal infinities
    if equal_nan:
        close = _ops.logical_or(close, _ops.logical_and(_ops.is_nan(x), _ops.is_nan(y)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every pair is close (numpy.allclose), as a bool tensor.

    >>> import tapeflow.experimental.numpy as tnp
    >>> bool(tnp.allclose(tnp.asarray([1.0, 2.0]), [1.0, 2.0 + 1e-9]))
    True
    """
    return _ops.reduce_all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2):
    """Whether two arrays have one shape and equal entries (numpy.array_equal).

    >>> import tapeflow.experimental.numpy as tnp
    >>> bool(tnp.array_equal([1, 2], [1, 2])), bool(tnp.array_equal([1, 2], [1, 2, 3]))
    (True, False)
    """
    x, y = _promote(a1, a2)
    if tuple(x._shape) != tuple(y._shape):
        return convert_to_tensor(False)
    return _ops.reduce_all(_ops.equal(x, y))


# ---- creation --------------------------------------------------------------------------------------------

def _shape(shape):
    return [int(shape)] if isinstance(shape, (builtins.int, _np.integer)) else [int(d) for d in shape]


def zeros(shape, dtype=float):
    """A tensor of zeros (float64 by default, as NumPy).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.zeros([2]).numpy().tolist(), tnp.zeros(2, dtype=tnp.int32).dtype
    ([0.0, 0.0], tf.int32)
    """
    return _ops.zeros(_shape(shape), _tf_dtype(dtype))


def ones(shape, dtype=float):
    """A tensor of ones (float64 by default).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.ones([2, 1]).numpy().tolist()
    [[1.0], [1.0]]
    """
    return _ops.ones(_shape(shape), _tf_dtype(dtype))


def empty(shape, dtype=float):
    """A tensor of the shape (zeros: tapeflow has no uninitialised memory to show), as TensorFlow's tnp.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.empty([3]).shape
    TensorShape([3])
    """
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    """A tensor filled with ``fill_value`` (its NumPy dtype unless ``dtype``).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.full([2], 7).numpy().tolist(), tnp.full([2], 7).dtype
    ([7, 7], tf.int64)
    """
    v = asarray(fill_value, dtype)
    return _ops.broadcast_to(v, _shape(shape))


def _like(a, dtype):
    t = asarray(a)
    return t, (_tf_dtype(dtype) or t._dtype)


def zeros_like(a, dtype=None):
    """Zeros of ``a``'s shape and dtype.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.zeros_like(tnp.asarray([1, 2])).numpy().tolist()
    [0, 0]
    """
    t, dt = _like(a, dtype)
    return _ops.zeros_like(t, dtype=dt)


def ones_like(a, dtype=None):
    """Ones of ``a``'s shape and dtype.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.ones_like(tnp.asarray([1.5, 2.0])).numpy().tolist()
    [1.0, 1.0]
    """
    t, dt = _like(a, dtype)
    return _ops.ones_like(t, dtype=dt)


def empty_like(a, dtype=None):
    """zeros_like (tapeflow has no uninitialised memory to show).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.empty_like(tnp.asarray([1, 2])).shape
    TensorShape([2])
    """
    return zeros_like(a, dtype)


def full_like(a, fill_value, dtype=None):
    """``fill_value`` in ``a``'s shape (and dtype unless given).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.full_like(tnp.asarray([1, 2]), 9).numpy().tolist()
    [9, 9]
    """
    t, dt = _like(a, dtype)
    return _ops.broadcast_to(asarray(fill_value, dt), tuple(t._shape))


def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in [start, stop) (numpy.arange: int64 for ints, float64 for floats).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.arange(4).numpy().tolist(), tnp.arange(0.0, 1.0, 0.25).numpy().tolist()
    ([0, 1, 2, 3], [0.0, 0.25, 0.5, 0.75])
    """
    if stop is None:
        start, stop = 0, start
    dt = _tf_dtype(dtype) or result_type(_np.asarray(start).dtype, _np.asarray(stop).dtype, _np.asarray(step).dtype)
    if step == 0:
        raise InvalidArgumentError("arange: step = 0; allowed: a non-zero step", _OP)
    return _ops.range_(start, stop, step, dtype=dt)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=float, axis=0):
    """``num`` evenly spaced values from start to stop (stop excluded when not ``endpoint``).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.linspace(0, 1, 5).numpy().tolist(), tnp.linspace(0, 1, 4, endpoint=False).numpy().tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.25, 0.5, 0.75])
    """
    dt = _tf_dtype(dtype) or float64
    work = dt if dt.is_floating else float64
    lo, hi = _cast(asarray(start), work), _cast(asarray(stop), work)
    n = int(num)
    if n < 0:
        raise InvalidArgumentError(f"linspace: num = {n}; allowed: >= 0", _OP)
    if endpoint:
        vals = _ops.linspace(lo, hi, n, axis=axis)
        step = _ops.real_div(_ops.subtract(hi, lo), _ops.cast(builtins.max(n - 1, 1), work))
    else:
        step = _ops.real_div(_ops.subtract(hi, lo), _ops.cast(builtins.max(n, 1), work))
        vals = _ops.linspace(lo, _ops.subtract(hi, step), n, axis=axis) if n else _ops.zeros([0], work)
    vals = _cast(vals, dt)
    return (vals, step) if retstep else vals


def eye(N, M=None, k=0, dtype=float):
    """A 2-D tensor with ones on diagonal ``k`` (numpy.eye).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.eye(2, 3, k=1).numpy().tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    m = N if M is None else M
    dt = _tf_dtype(dtype)
    if k == 0:
        return _ops.eye(N, m, dtype=dt)
    ones_ = _ops.ones([builtins.max(0, builtins.min(N, m - k) if k > 0 else builtins.min(N + k, m))], dt)
    return _ops.diag(ones_, k=k, num_rows=N, num_cols=m)


def identity(n, dtype=float):
    """The n x n identity matrix.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.identity(2, dtype=tnp.int32).numpy().tolist()
    [[1, 0], [0, 1]]
    """
    return _ops.eye(n, dtype=_tf_dtype(dtype))


def diag(v, k=0):
    """The diagonal ``k`` of a matrix, or the matrix with vector ``v`` on diagonal ``k`` (numpy.diag).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.diag(tnp.asarray([[1, 2], [3, 4]])).numpy().tolist(), tnp.diag(tnp.asarray([1, 2])).numpy().tolist()
    ([1, 4], [[1, 0], [0, 2]])
    """
    t = asarray(v)
    if len(t._shape) == 1:
        return _ops.diag(t, k=k)
    if len(t._shape) == 2:
        return diagonal(t, k)
    raise InvalidArgumentError(f"diag takes a vector or a matrix, got shape {list(t._shape)}", _OP)


def diagonal(a, offset=0):
    """The diagonal ``offset`` of a matrix (last two axes).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.diagonal(tnp.asarray([[1, 2], [3, 4]]), 1).numpy().tolist()
    [2]
    """
    t = asarray(a)
    return _api.linalg.diag_part(t, k=offset)


def trace(a, offset=0):
    """The sum of the diagonal ``offset`` (numpy.trace).

    >>> import tapeflow.experimental.numpy as tnp
    >>> int(tnp.trace(tnp.asarray([[1, 2], [3, 4]])))
    5
    """
    return sum(diagonal(a, offset), axis=-1)


def meshgrid(*xi, indexing="xy"):
    """Coordinate matrices from coordinate vectors (numpy.meshgrid).

    >>> import tapeflow.experimental.numpy as tnp
    >>> [g.numpy().tolist() for g in tnp.meshgrid([1, 2], [3, 4, 5])][0]
    [[1, 2], [1, 2], [1, 2]]
    """
    return _ops.meshgrid(*[asarray(x) for x in xi], indexing=indexing)


# ---- shapes ------------------------------------------------------------------------------------------------

def shape(a):
    """The shape of ``a`` as a tuple.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.shape([[1, 2, 3]])
    (1, 3)
    """
    return tuple(asarray(a)._shape)


def ndim(a):
    """The number of axes of ``a``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.ndim([[1, 2, 3]])
    2
    """
    return len(asarray(a)._shape)


def size(a, axis=None):
    """The number of entries of ``a`` (along ``axis`` when given).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.size([[1, 2, 3]]), tnp.size([[1, 2, 3]], axis=1)
    (3, 3)
    """
    s = asarray(a)._shape
    if axis is not None:
        return s[axis]
    n = 1
    for d in s:
        n *= d
    return n


def copy(a):
    """A copy of ``a``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.copy([1, 2]).numpy().tolist()
    [1, 2]
    """
    return _ops.identity(asarray(a))


def reshape(a, newshape, order="C"):
    """``a`` with shape ``newshape`` (one -1 allowed; C order only).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.reshape(tnp.arange(6), (2, -1)).numpy().tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    if order != "C":
        raise InvalidArgumentError(f"reshape: order = {order!r}; allowed: 'C'", _OP)
    return _ops.reshape(asarray(a), _shape(newshape))


def ravel(a):
    """``a`` flattened (C order).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.ravel([[1, 2], [3, 4]]).numpy().tolist()
    [1, 2, 3, 4]
    """
    return _ops.reshape(asarray(a), [-1])


def transpose(a, axes=None):
    """``a`` with its axes reversed or permuted by ``axes``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.transpose([[1, 2, 3]]).numpy().tolist()
    [[1], [2], [3]]
    """
    return _ops.transpose(asarray(a), perm=None if axes is None else list(axes))


def swapaxes(a, axis1, axis2):
    """``a`` with two axes exchanged.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.swapaxes(tnp.zeros([2, 3, 4]), 0, 2).shape
    TensorShape([4, 3, 2])
    """
    t = asarray(a)
    r = len(t._shape)
    perm = list(range(r))
    i, j = axis1 % r, axis2 % r
    perm[i], perm[j] = perm[j], perm[i]
    return _ops.transpose(t, perm)


def moveaxis(a, source, destination):
    """``a`` with axes moved from ``source`` to ``destination`` positions (the others keep their order).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.moveaxis(tnp.zeros([2, 3, 4]), 0, -1).shape
    TensorShape([3, 4, 2])
    """
    t = asarray(a)
    r = len(t._shape)
    src = [s % r for s in ([source] if isinstance(source, builtins.int) else source)]
    dst = [d % r for d in ([destination] if isinstance(destination, builtins.int) else destination)]
    if len(src) != len(dst):
        raise InvalidArgumentError("moveaxis: source and destination need as many axes", _OP)
    order = [i for i in range(r) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _ops.transpose(t, order)


def expand_dims(a, axis):
    """``a`` with a new axis of size 1 at ``axis``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.expand_dims([1, 2], 0).shape
    TensorShape([1, 2])
    """
    return _ops.expand_dims(asarray(a), axis)


def squeeze(a, axis=None):
    """``a`` without its axes of size 1 (or only ``axis``).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.squeeze(tnp.zeros([1, 2, 1])).shape
    TensorShape([2])
    """
    return _ops.squeeze(asarray(a), axis)


def atleast_1d(*arys):
    """The arrays with at least one axis.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.atleast_1d(3).shape
    TensorShape([1])
    """
    out = [a if len(a._shape) >= 1 else _ops.reshape(a, [1]) for a in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """The arrays with at least two axes (a vector becomes a row).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.atleast_2d([1, 2]).shape
    TensorShape([1, 2])
    """
    out = [a if len(a._shape) >= 2 else _ops.reshape(a, (1,) * (2 - len(a._shape)) + tuple(a._shape))
           for a in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


def concatenate(arys, axis=0):
    """The arrays joined along ``axis`` (promoted to their common dtype).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.concatenate([[1, 2], [3.5]]).numpy().tolist()
    [1.0, 2.0, 3.5]
    """
    parts = _promote(*arys)
    if axis is None:
        return _ops.concat([_ops.reshape(p, [-1]) for p in parts], 0)
    return _ops.concat(parts, axis)


def stack(arrays, axis=0):
    """The arrays stacked along a new axis.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.stack([[1, 2], [3, 4]], axis=1).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    return _ops.stack(_promote(*arrays), axis)


def hstack(tup):
    """Stacked horizontally (along axis 1; axis 0 for vectors).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.hstack([[1, 2], [3]]).numpy().tolist()
    [1, 2, 3]
    """
    parts = atleast_1d(*tup)
    parts = parts if isinstance(parts, list) else [parts]
    return concatenate(parts, axis=0 if len(parts[0]._shape) == 1 else 1)


def vstack(tup):
    """Stacked vertically (vectors become rows).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.vstack([[1, 2], [3, 4]]).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    parts = atleast_2d(*tup)
    return concatenate(parts if isinstance(parts, list) else [parts], axis=0)


def split(ary, indices_or_sections, axis=0):
    """Sub-arrays: ``indices_or_sections`` equal parts, or the pieces between the given split points.

    >>> import tapeflow.experimental.numpy as tnp
    >>> [p.numpy().tolist() for p in tnp.split(tnp.arange(5), [2, 3])]
    [[0, 1], [2], [3, 4]]
    """
    t = asarray(ary)
    n = t._shape[axis]
    if isinstance(indices_or_sections, (builtins.int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise InvalidArgumentError(f"split: {n} entries do not split into {k} equal parts", _OP)
        return _ops.split(t, k, axis=axis)
    points = [builtins.min(builtins.max(int(p), 0), n) for p in indices_or_sections]
    bounds = [0] + points + [n]
    sizes = [builtins.max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    return _ops.split(t, sizes, axis=axis)


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis (numpy.tile).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.tile([1, 2], 2).numpy().tolist()
    [1, 2, 1, 2]
    """
    t = asarray(A)
    reps = _shape(reps)
    if len(reps) < len(t._shape):
        reps = [1] * (len(t._shape) - len(reps)) + reps
    elif len(reps) > len(t._shape):
        t = _ops.reshape(t, (1,) * (len(reps) - len(t._shape)) + tuple(t._shape))
    return _ops.tile(t, reps)


def repeat(a, repeats, axis=None):
    """Each entry repeated ``repeats`` times (an int) along ``axis`` (the flattened array when None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.repeat([[1, 2], [3, 4]], 2, axis=1).numpy().tolist()
    [[1, 1, 2, 2], [3, 3, 4, 4]]
    """
    t = asarray(a)
    if not isinstance(repeats, (builtins.int, _np.integer)):
        raise InvalidArgumentError("repeat: repeats must be an int (one count for every entry)", _OP)
    if axis is None:
        t, axis = _ops.reshape(t, [-1]), 0
    n, r = t._shape[axis], int(repeats)
    idx = _ops.floordiv(_ops.range_(0, n * r, dtype=int64), _ops.cast(r, int64)) if r > 0 else \
        _ops.zeros([0], int64)
    return _ops.gather(t, idx, axis=axis)


def flip(m, axis=None):
    """``m`` with the order of entries reversed along ``axis`` (every axis when None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.flip([[1, 2], [3, 4]], axis=1).numpy().tolist()
    [[2, 1], [4, 3]]
    """
    t = asarray(m)
    axes = list(range(len(t._shape))) if axis is None else ([axis] if isinstance(axis, builtins.int) else list(axis))
    return _ops.reverse(t, axes)


def roll(a, shift, axis=None):
    """Entries shifted along ``axis`` (the flattened array when None), wrapping around.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.roll(tnp.arange(5), 2).numpy().tolist()
    [3, 4, 0, 1, 2]
    """
    t = asarray(a)
    if axis is None:
        return _ops.reshape(_ops.roll(_ops.reshape(t, [-1]), shift, 0), tuple(t._shape))
    return _ops.roll(t, shift, axis)


def broadcast_to(array, shape):
    """``array`` broadcast to ``shape``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.broadcast_to([1, 2], (2, 2)).numpy().tolist()
    [[1, 2], [1, 2]]
    """
    return _ops.broadcast_to(asarray(array), _shape(shape))


def take(a, indices, axis=None):
    """Entries of ``a`` at ``indices`` along ``axis`` (of the flattened array when None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.take([4, 5, 6], [2, 0]).numpy().tolist()
    [6, 4]
    """
    t = asarray(a)
    if axis is None:
        t, axis = _ops.reshape(t, [-1]), 0
    return _ops.gather(t, asarray(indices), axis=axis)


def sort(a, axis=-1):
    """``a`` sorted along ``axis`` (the flattened array when None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.sort([3, 1, 2]).numpy().tolist()
    [1, 2, 3]
    """
    t = asarray(a)
    if axis is None:
        t, axis = _ops.reshape(t, [-1]), 0
    return _ops.sort(t, axis=axis)


def argsort(a, axis=-1):
    """The int64 positions that sort ``a`` along ``axis`` (stable).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.argsort([3, 1, 2]).numpy().tolist()
    [1, 2, 0]
    """
    t = asarray(a)
    if axis is None:
        t, axis = _ops.reshape(t, [-1]), 0
    return _ops.cast(_ops.argsort(t, axis=axis, stable=True), int64)


# ---- reductions ----------------------------------------------------------------------------------------------

def _reduce(np_fn, tf_fn, a, axis, dtype, keepdims, **np_kwargs):
    t = asarray(a)
    with _np.errstate(all="ignore"):
        out = _tf_dtype(_np.asarray(np_fn(_np.ones((1,), t._dtype.np), dtype=None if dtype is None
                                                 else _tf_dtype(dtype).np, **np_kwargs)).dtype)
    return tf_fn(_cast(t, out), axis=axis, keepdims=keepdims)


def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """The sum over ``axis`` (all when None); small integers and bools sum as int64, as NumPy.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.sum([[1, 2], [3, 4]], axis=1).numpy().tolist(), tnp.sum([True, True]).dtype
    ([3, 7], tf.int64)
    """
    return _reduce(_np.sum, _ops.reduce_sum, a, axis, dtype, keepdims)


def prod(a, axis=None, dtype=None, keepdims=False):
    """The product over ``axis``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.prod([[1, 2], [3, 4]]).numpy().tolist()
    24
    """
    return _reduce(_np.prod, _ops.reduce_prod, a, axis, dtype, keepdims)


def mean(a, axis=None, dtype=None, keepdims=False):
    """The mean over ``axis`` (float64 for integers).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.mean([1, 2, 3, 4]).numpy().item()
    2.5
    """
    return _reduce(_np.mean, _ops.reduce_mean, a, axis, dtype, keepdims)


def _moments(a, axis, dtype, ddof, keepdims):
    t = asarray(a)
    out = _tf_dtype(_np.asarray(_np.var(_np.ones((2,), t._dtype.np), dtype=None if dtype is None else
                                        _tf_dtype(dtype).np)).dtype)
    x = _cast(t, out)
    m = _ops.reduce_mean(x, axis=axis, keepdims=True)
    sq = _ops.reduce_sum(_ops.square(_ops.subtract(x, m)), axis=axis, keepdims=keepdims)
    n = size(x) if axis is None else _math.prod(x._shape[i] for i in ([axis] if isinstance(axis, builtins.int)
                                                                       else axis))
    return _ops.real_div(sq, _ops.cast(builtins.max(n - ddof, 0), out))


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """The variance over ``axis``: mean((a - mean(a)) ** 2) * n / (n - ddof).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.var([1.0, 2.0, 3.0, 4.0]).numpy().item(), tnp.var([1.0, 2.0, 3.0, 4.0], ddof=1).numpy().item()
    (1.25, 1.6666666666666667)
    """
    return _moments(a, axis, dtype, ddof, keepdims)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """The standard deviation over ``axis`` (sqrt of var).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.std([0, 2]).numpy().item()
    1.0
    """
    return _ops.sqrt(_moments(a, axis, dtype, ddof, keepdims))


def amax(a, axis=None, keepdims=False):
    """The largest entry over ``axis``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.amax([[1, 5], [3, 2]], axis=0).numpy().tolist()
    [3, 5]
    """
    return _ops.reduce_max(asarray(a), axis=axis, keepdims=keepdims)


def amin(a, axis=None, keepdims=False):
    """The smallest entry over ``axis``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.amin([[1, 5], [3, 2]], axis=1).numpy().tolist()
    [1, 2]
    """
    return _ops.reduce_min(asarray(a), axis=axis, keepdims=keepdims)


max = amax  # noqa: A001
min = amin  # noqa: A001


def all(a, axis=None, keepdims=False):  # noqa: A001
    """Whether every entry over ``axis`` is true (non-zero).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.all([[1, 0], [1, 1]], axis=1).numpy().tolist()
    [False, True]
    """
    t = asarray(a)
    return _ops.reduce_all(t if t._dtype is bool_ else _ops.not_equal(t, _ops.zeros_like(t)), axis=axis,
                           keepdims=keepdims)


def any(a, axis=None, keepdims=False):  # noqa: A001
    """Whether some entry over ``axis`` is true (non-zero).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.any([[1, 0], [0, 0]], axis=1).numpy().tolist()
    [True, False]
    """
    t = asarray(a)
    return _ops.reduce_any(t if t._dtype is bool_ else _ops.not_equal(t, _ops.zeros_like(t)), axis=axis,
                           keepdims=keepdims)


def _arg(tf_fn, a, axis):
    t = asarray(a)
    if axis is None:
        t, axis = _ops.reshape(t, [-1]), 0
    return tf_fn(t, axis=axis, output_type=int64)


def argmax(a, axis=None):
    """The int64 position of the largest entry (of the flattened array when ``axis`` is None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.argmax([[1, 5], [7, 2]]).numpy().item(), tnp.argmax([[1, 5], [7, 2]], axis=1).numpy().tolist()
    (2, [1, 0])
    """
    return _arg(_ops.argmax, a, axis)


def argmin(a, axis=None):
    """The int64 position of the smallest entry (of the flattened array when ``axis`` is None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.argmin([[1, 5], [7, 0]]).numpy().item()
    3
    """
    return _arg(_ops.argmin, a, axis)


def _scan(tf_fn, np_fn, a, axis, dtype):
    t = asarray(a)
    out = _tf_dtype(_np.asarray(np_fn(_np.ones((1,), t._dtype.np), dtype=None if dtype is None
                                      else _tf_dtype(dtype).np)).dtype)
    t = _cast(t, out)
    if axis is None:
        t, axis = _ops.reshape(t, [-1]), 0
    return tf_fn(t, axis=axis)


def cumsum(a, axis=None, dtype=None):
    """Running sums along ``axis`` (of the flattened array when None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.cumsum([[1, 2], [3, 4]]).numpy().tolist()
    [1, 3, 6, 10]
    """
    return _scan(_ops.cumsum, _np.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    """Running products along ``axis`` (of the flattened array when None).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.cumprod([1, 2, 3]).numpy().tolist()
    [1, 2, 6]
    """
    return _scan(_ops.cumprod, _np.cumprod, a, axis, dtype)


def count_nonzero(a, axis=None):
    """How many entries are non-zero (int64).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.count_nonzero([[0, 1], [2, 0]]).numpy().item()
    2
    """
    return _ops.count_nonzero(asarray(a), axis=axis, dtype=int64)


def average(a, axis=None, weights=None):
    """The (weighted) mean over ``axis``.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.average([1.0, 2.0, 4.0], weights=[1.0, 1.0, 2.0]).numpy().item()
    2.75
    """
    if weights is None:
        return mean(a, axis)
    t, w = _promote(a, weights)
    if not t._dtype.is_floating:
        t, w = _cast(t, float64), _cast(w, float64)
    if axis is not None and len(w._shape) == 1 and len(t._shape) > 1:
        ax = axis % len(t._shape)
        w = _ops.reshape(w, [-1 if i == ax else 1 for i in range(len(t._shape))])
    return _ops.real_div(_ops.reduce_sum(_ops.multiply(t, w), axis=axis),
                         _ops.reduce_sum(_ops.multiply(_ops.ones_like(t), w), axis=axis))


# ---- linear algebra ------------------------------------------------------------------------------------------

def matmul(x1, x2):
    """The matrix product (numpy.matmul: batched over leading axes; vectors are promoted and squeezed).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.matmul([[1, 2]], [[3], [4]]).numpy().tolist()
    [[11]]
    """
    a, b = _promote(x1, x2)
    va, vb = len(a._shape) == 1, len(b._shape) == 1
    if va:
        a = _ops.reshape(a, [1, -1])
    if vb:
        b = _ops.reshape(b, [-1, 1])
    out = _ops.matmul(a, b)
    if va:
        out = _ops.squeeze(out, -2)
    if vb:
        out = _ops.squeeze(out, -1)
    return out


def dot(a, b):
    """numpy.dot: products of scalars, inner product of vectors, matrix products, and for N-d arrays the sum over
    a's last axis and b's second-to-last.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.dot([1, 2, 3], [4, 5, 6]).numpy().item()
    32
    """
    x, y = _promote(a, b)
    if not x._shape or not y._shape:
        return _ops.multiply(x, y)
    if len(y._shape) == 1:
        return _ops.tensordot(x, y, [[len(x._shape) - 1], [0]])
    return _ops.tensordot(x, y, [[len(x._shape) - 1], [len(y._shape) - 2]])


def vdot(a, b):
    """The inner product of the flattened arrays.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.vdot([[1, 2], [3, 4]], [[1, 1], [1, 1]]).numpy().item()
    10
    """
    x, y = _promote(a, b)
    return _ops.reduce_sum(_ops.multiply(_ops.reshape(x, [-1]), _ops.reshape(y, [-1])))


def inner(a, b):
    """Sums over the last axes of both (numpy.inner).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.inner([[1, 2], [3, 4]], [1, 1]).numpy().tolist()
    [3, 7]
    """
    x, y = _promote(a, b)
    if not x._shape or not y._shape:
        return _ops.multiply(x, y)
    return _ops.tensordot(x, y, [[len(x._shape) - 1], [len(y._shape) - 1]])


def outer(a, b):
    """The outer product of the flattened arrays.

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.outer([1, 2], [3, 4, 5]).numpy().tolist()
    [[3, 4, 5], [6, 8, 10]]
    """
    x, y = _promote(a, b)
    return _ops.multiply(_ops.reshape(x, [-1, 1]), _ops.reshape(y, [1, -1]))


def tensordot(a, b, axes=2):
    """Sums of products over ``axes`` (an int: the last axes of a and first of b; or two lists).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.tensordot(tnp.ones([2, 3]), tnp.ones([3, 4]), axes=1).shape
    TensorShape([2, 4])
    """
    x, y = _promote(a, b)
    return _ops.tensordot(x, y, axes)


def einsum(subscripts, *operands):
    """Einstein summation over the operands (promoted to their common dtype).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.einsum("ij,j->i", [[1, 2], [3, 4]], [1, 1]).numpy().tolist()
    [3, 7]
    """
    return _ops.einsum(subscripts, *_promote(*operands))


# ---- tnp.random ----------------------------------------------------------------------------------------------

class _Random:
    """tnp.random: NumPy's random functions over tapeflow's seeded generator (float64 by default).

    >>> import tapeflow.experimental.numpy as tnp
    >>> tnp.random.seed(1); a = tnp.random.rand(3)
    >>> tnp.random.seed(1); b = tnp.random.rand(3)
    >>> a.numpy().tolist() == b.numpy().tolist(), a.dtype
    (True, tf.float64)
    """

    __name__ = "tapeflow.experimental.numpy.random"

    @staticmethod
    def seed(s):
        """Seed tnp.random (tapeflow's global seed, as TensorFlow's tnp.random.seed)."""
        import tapeflow.core.random as _r

        _r.set_seed(int(s))

    @staticmethod
    def rand(*size):
        """Uniform float64 values in [0, 1) of shape ``size``."""
        return _random_ops.random_uniform(list(size), dtype=float64)

    @staticmethod
    def random(size=None):
        """Uniform float64 values in [0, 1)."""
        return _random_ops.random_uniform([] if size is None else _shape(size), dtype=float64)

    @staticmethod
    def randn(*size):
        """Standard normal float64 values of shape ``size``."""
        return _random_ops.random_normal(list(size), dtype=float64)

    @staticmethod
    def standard_normal(size=None):
        """Standard normal float64 values."""
        return _random_ops.random_normal([] if size is None else _shape(size), dtype=float64)

    @staticmethod
    def uniform(low=0.0, high=1.0, size=None):
        """Uniform float64 values in [low, high)."""
        return _random_ops.random_uniform([] if size is None else _shape(size), low, high, dtype=float64)

    @staticmethod
    def randint(low, high=None, size=None, dtype=int):
        """Uniform integers in [low, high) ([0, low) with one bound), int64 by default."""
        if high is None:
            low, high = 0, low
        return _random_ops.random_uniform([] if size is None else _shape(size), low, high,
                                          dtype=_tf_dtype(dtype))


random = _Random()

__all__ = sorted(n for n, v in list(globals().items()) if not n.startswith("_") and n not in
                 ("annotations", "builtins", "InvalidArgumentError", "Tensor", "convert_to_tensor"))
