"""Tensor: an immutable value on a device, and conversion of Python and NumPy values."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from . import devices as _device
from . import dtypes as _dt
from .errors import InvalidArgumentError

if TYPE_CHECKING:  # the operators ops/__init__.py binds, declared for type checkers (a stub: nothing at run time)
    from ._typing import TensorOperators as _Operators
else:
    _Operators = object


class TensorShape(tuple):
    """A tensor's shape: a tuple of ints that prints like one.

    >>> import tapeflow as tf
    >>> s = tf.zeros([1, 1, 784]).shape
    >>> print(s)
    (1, 1, 784)
    >>> s.rank, s.num_elements(), s.as_list()
    (3, 784, [1, 1, 784])
    """

    __slots__ = ()

    @property
    def rank(self) -> int:
        return len(self)

    ndims = rank

    def as_list(self) -> list:
        return list(self)

    def num_elements(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def is_compatible_with(self, other) -> bool:
        other = tuple(other)
        return len(other) == len(self) and all(o is None or o == s for s, o in zip(self, other))

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return tuple.__repr__(self)


class Tensor(_Operators):
    """An immutable, typed n-dimensional value on a device.

    >>> import tapeflow as tf
    >>> print(tf.matmul([[2.]], [[2.]]))
    Tensor([[4.]], shape=(1, 1), dtype=float32)
    """

    __slots__ = ("_h", "_arr", "_shape", "_dtype", "_dev", "_size", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # unhashable, like NumPy arrays; use id(t) or t.ref()

    # -- basic properties -------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._shape)

    @property
    def dtype(self) -> _dt.DType:
        return self._dtype

    @property
    def device(self) -> str:
        return self._dev.name

    @property
    def ndim(self) -> int:
        return len(self._shape)

    rank = ndim

    @property
    def size(self) -> int:
        return self._size

    def get_shape(self) -> TensorShape:
        return self.shape

    def numpy(self) -> Any:
        """The value as a NumPy array (read-only, no copy on the CPU); a NumPy scalar for 0-d."""
        arr = self._host()
        if not self._shape:
            return arr[()]
        view = arr.view()
        view.flags.writeable = False
        return view

    def _host(self) -> np.ndarray:
        arr = self._arr
        if arr is None:
            if self._h is None:
                raise _symbolic_error(self, "its value (numpy(), np.asarray(), int(), float())",
                                      "tapeflow ops on it (they are recorded), tf.print to see it when the graph runs")
            arr = self._dev.backend.to_numpy(self._h, None, self._shape, self._dtype.np)
            self._arr = arr
        return arr

    def __array__(self, dtype=None, copy=None):
        arr = self._host()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        view = arr.view()
        view.flags.writeable = False
        return view

    def ref(self):
        """A hashable reference to this tensor (compares by identity)."""
        return _Ref(self)

    def __dlpack__(self, stream=None, *, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this tensor (zero-copy, read-only on the CPU; see ``tapeflow.core.dlpack``)."""
        from .dlpack import dlpack

        return dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        """``(device_type, device_id)`` in DLPack's codes: ``(1, 0)`` on the CPU."""
        from .dlpack import dlpack_device

        return dlpack_device(self)

    # -- Python protocol ------------------------------------------------------
    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a scalar tensor (shape ()) is undefined")
        n = self._shape[0]
        if n is None:
            raise _symbolic_error(self, "len() of its unknown first dimension", "tf.shape(t)[0] (the size when the "
                                  "graph runs)")
        return n

    def __iter__(self) -> Iterator[Tensor]:
        if not self._shape:
            raise TypeError("iteration over a scalar tensor (shape ()) is undefined")
        if self._shape[0] is None:
            raise _symbolic_error(self, "iteration over its unknown first dimension",
                                  "tf.unstack(t, num=...), tf.map_fn, or a loop over tf.range(tf.shape(t)[0])")
        from .ops import unstack

        return iter(unstack(self) if self._shape[0] else ())

    def _scalar(self, what):
        if self._h is None and self._arr is None:
            raise _symbolic_error(self, f"its {what}", "tf.cond (or AutoGraph) for a branch on it, tapeflow ops "
                                  "for arithmetic, tf.shape(t) for sizes" if what == "truth value" else
                                  "tapeflow ops on it (they are recorded), tf.shape(t) for sizes")
        if self._size != 1:
            raise InvalidArgumentError(
                f"the {what} of a tensor with {self._size} elements (shape {tuple(self._shape)}) is "
                "ambiguous; only single-element tensors convert"
                + ("; use tf.reduce_any or tf.reduce_all" if what == "truth value" else ""))
        return self._host().reshape(()).item()

    def __bool__(self) -> bool:
        return bool(self._scalar("truth value"))

    def __float__(self) -> float:
        return float(self._scalar("float value"))

    def __int__(self) -> int:
        return int(self._scalar("int value"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex value"))

    def __index__(self) -> int:
        if not (self._dtype.is_integer or self._dtype.is_bool) or self._shape:
            raise TypeError(f"only scalar integer tensors can be used as an index, not {self._dtype.name} "
                            f"with shape {tuple(self._shape)}")
        return int(self._host().item())

    def __format__(self, spec: str) -> str:
        if not spec:
            return str(self)
        return format(self._scalar("formatted value"), spec)

    def __str__(self):
        if self._h is None and self._arr is None:
            return self.__repr__()
        body = np.array2string(self._host(), separator=" ") if self._shape else str(self._host().item() if self._dtype.is_bool else self._host()[()])
        if "\n" in body:
            body = "\n" + body
        return f"Tensor({body}, shape={tuple(self._shape)}, dtype={self._dtype.name})"

    def __repr__(self):
        if self._h is None and self._arr is None:  # symbolic: no value to print
            return f"<tf.Tensor shape={_shape_str(self._shape)} dtype={self._dtype.name}>"
        return f"<Tensor: shape={tuple(self._shape)}, dtype={self._dtype.name}, numpy={numpy_repr(self._host())}>"

    def __reduce__(self):
        return _rebuild, (np.array(self._host()), self._dtype.name, self._dev.name)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # -- device movement --------------------------------------------------
    def to(self, device) -> "Tensor":
        """This tensor on ``device`` (itself when it is already there)."""
        dev = _device.get(device)
        if dev is self._dev:
            return self
        if self._dtype.is_string:  # strings stay in host memory on every device: only the placement changes
            return make(self._h, self._arr, self._shape, self._dtype, dev, self._size)
        from .ops.grad_ops import copy_to_device

        return copy_to_device(self, dev)

    def cpu(self) -> "Tensor":
        return self.to("cpu:0")

    def gpu(self, index: int = 0) -> "Tensor":
        return self.to(f"gpu:{index}")


def _shape_str(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _symbolic_error(t, what, instead) -> TypeError:
    """The TypeError for asking a symbolic tensor (traced inside a graph function) for a value it does not have."""
    return TypeError(f"a symbolic tensor (shape={_shape_str(t._shape)}, dtype={t._dtype.name}) inside a graph "
                     f"function (tf.function) has no value while the function is traced, so {what} is not "
                     f"available; use {instead}")


def numpy_repr(arr: np.ndarray) -> str:
    """``array([...], dtype=...)``, or the bare value for a 0-d array, as TensorFlow prints them."""
    return str(arr[()]) if arr.ndim == 0 else np.array_repr(arr)


class _Ref:
    __slots__ = ("_t",)

    def __init__(self, t) -> None:
        self._t = t

    def deref(self):
        return self._t

    def __hash__(self):
        return id(self._t)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._t is self._t


def _rebuild(arr, dtype, dev):
    return constant(arr, dtype=dtype)


_new = object.__new__


def make(h, arr, shape, dtype, dev, size) -> Tensor:
    """Wrap a device buffer as a Tensor (no checks: for op implementations)."""
    t = _new(Tensor)
    t._h = h
    t._arr = arr
    t._shape = shape
    t._dtype = dtype
    t._dev = dev
    t._size = size
    return t


def from_numpy(arr: np.ndarray, dtype: _dt.DType, dev) -> Tensor:
    """A new tensor holding a copy of a host array (already of ``dtype``).

    A string tensor keeps a NumPy object array of ``bytes`` in host memory on every device (its
    handle is that array: no device backend sees it).
    """
    if dtype.is_string:
        host = np.array(arr, dtype=object, copy=True)
        host.flags.writeable = False
        return make(host, host, tuple(host.shape), dtype, dev, host.size)
    h, host = dev.backend.from_numpy(arr)
    size = 1
    for d in arr.shape:
        size *= d
    return make(h, host, tuple(arr.shape), dtype, dev, size)


def copy_to(t: Tensor, dev) -> Tensor:
    return from_numpy(t._host(), t._dtype, dev)


_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def _is_stringy(value) -> bool:
    """Whether a Python/NumPy value holds strings (str, bytes, or NumPy string/object arrays of them)."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return True
    if isinstance(value, Tensor):  # a list of string tensors packs into one, as TensorFlow's
        return value._dtype.is_string
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SU":
            return True
        if value.dtype == object and value.size:
            return isinstance(value.flat[0], (str, bytes))
    return False


def _string_array(value) -> np.ndarray:
    """An object array of ``bytes`` (str as UTF-8) for a string value; a typed error for mixed/ragged ones."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        arr = value.astype(object)
    else:
        try:
            arr = np.array(value, dtype=object)
        except ValueError:
            arr = None
        if arr is None or (arr.size and isinstance(arr.flat[0], (list, tuple))) or \
                (arr.dtype == object and _nested_depth(value) != arr.ndim):
            raise InvalidArgumentError(f"cannot convert {_short(value)} to a tensor: ragged nesting (every row must "
                                       "have the same length)", "Const")
    out = np.empty(arr.shape, dtype=object)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat_in):
        if isinstance(v, bytes):
            flat_out[i] = bytes(v)
        elif isinstance(v, str):
            flat_out[i] = v.encode("utf-8")
        elif isinstance(v, Tensor) and v._dtype.is_string and not v._shape:
            flat_out[i] = v._host()[()]
        else:
            raise InvalidArgumentError(f"cannot convert {_short(value)} to a tensor: mixed strings and "
                                       f"{type(v).__name__} values; allowed: str or bytes only for a string tensor",
                                       "Const")
    return out


def _nested_depth(value) -> int:
    d = 0
    while isinstance(value, (list, tuple)):
        if not value:
            return d + 1
        value = value[0]
        d += 1
    return d + (value.ndim if isinstance(value, np.ndarray) else len(value._shape) if isinstance(value, Tensor) else 0)


def _infer_array(value, dtype):
    """Host array for a Python value: floats -> float32, ints -> int32, NumPy keeps its dtype."""
    if (dtype is not None and dtype.is_string) or (dtype is None and _is_stringy(value)):
        if dtype is None or _is_stringy(value) or (isinstance(value, np.ndarray) and value.dtype == object) or \
                (isinstance(value, (list, tuple)) and not np.size(np.array(value, dtype=object))):
            return _string_array(value), _dt.string
        raise InvalidArgumentError(f"cannot convert {_short(value)} to a string tensor; allowed: str or bytes "
                                   "values (use tf.strings.as_string for numbers)", "Const")
    if dtype is not None and dtype.is_string is False and _is_stringy(value):
        raise InvalidArgumentError(f"cannot convert {_short(value)} to {dtype.name}: it holds strings "
                                   "(use tf.strings.to_number)", "Const")
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if dtype is None:
            dtype = _dt.as_dtype(arr.dtype)  # raises TypeError for unsupported NumPy dtypes
        elif arr.dtype != dtype.np:
            arr = _cast_host(arr, dtype)
        return arr, dtype
    if isinstance(value, bool):
        arr = np.asarray(value)
    elif isinstance(value, numbers.Integral):
        if not _INT64_MIN <= value <= _INT64_MAX:
            if dtype is not None and dtype.is_floating:
                return np.asarray(float(value)).astype(dtype.np), dtype
            raise _int_overflow(value, dtype)
        arr = np.asarray(value, np.int32 if _INT32_MIN <= value <= _INT32_MAX else np.int64)
    elif isinstance(value, numbers.Real):
        # straight to a requested float dtype (no detour through float32)
        arr = np.asarray(value, dtype.np if dtype is not None and dtype.is_floating else np.float32)
    else:
        try:
            arr = np.asarray(value)
        except ValueError:
            raise InvalidArgumentError(
                f"cannot convert {_short(value)} to a tensor: ragged nesting (every row must have the same "
                "length)") from None
        if arr.dtype == object or arr.dtype == np.uint64:
            big = _big_int(value)
            if big is not None:
                if dtype is not None and dtype.is_floating:
                    return np.asarray(value, np.float64).astype(dtype.np), dtype
                raise _int_overflow(big, dtype)
        if arr.dtype == object:
            raise InvalidArgumentError(
                f"cannot convert {_short(value)} to a tensor: ragged or mixed nesting "
                f"(every row must have the same length and type)")
        if arr.dtype == np.float64 and dtype is None and not _has_numpy_float64(value):
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and (arr.size == 0 or (arr.min() >= _INT32_MIN and arr.max() <= _INT32_MAX)):
            arr = arr.astype(np.int32)
        elif arr.dtype.kind in "US":
            raise InvalidArgumentError(f"cannot convert {_short(value)} to a tensor: strings are not supported")
    if dtype is None:
        try:
            dtype = _dt.as_dtype(arr.dtype)
        except TypeError as e:
            raise InvalidArgumentError(f"cannot convert {_short(value)} to a tensor: {e}") from None
    elif arr.dtype != dtype.np:
        arr = _cast_host(arr, dtype, value)
    return arr, dtype


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _big_int(value):
    """The first Python int beyond int64 in a nested list, or None."""
    if isinstance(value, (list, tuple)):
        for v in value:
            b = _big_int(v)
            if b is not None:
                return b
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, np.integer) and \
            not _INT64_MIN <= value <= _INT64_MAX:
        return value
    return None


def _int_overflow(value, dtype):
    if dtype is not None and dtype.is_integer:
        allowed = f"integers in [{dtype.min}, {dtype.max}]"
    else:
        allowed = "integers in [-2**63, 2**63) (or a floating dtype, e.g. tf.constant(x, tf.float64))"
    return InvalidArgumentError(f"cannot convert {_short(value)} to a tensor: integer out of range of "
                                f"{dtype.name if dtype is not None else 'int64'}; allowed: {allowed}", "Const")


def _has_numpy_float64(value) -> bool:
    """Whether a nested list holds float64 NumPy values or tensors (which keep float64)."""
    if isinstance(value, (list, tuple)):
        return any(_has_numpy_float64(v) for v in value)
    return (isinstance(value, np.ndarray) and value.dtype == np.float64) or isinstance(value, np.float64) or (
        isinstance(value, Tensor) and value._dtype is _dt.float64)


def _cast_host(arr, dtype, value=None):
    if arr.dtype.kind == "c" and not dtype.is_complex and np.any(arr.imag != 0):
        raise InvalidArgumentError(f"cannot convert {_short(value if value is not None else arr)} to {dtype.name}: "
                                   "it has imaginary parts; allowed: complex64, complex128 (or tf.math.real)")
    if dtype.is_integer and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(np.floor(arr) == arr):
            raise InvalidArgumentError(f"cannot convert {_short(value if value is not None else arr)} "
                                       f"to {dtype.name} without losing precision")
    if dtype.is_integer and arr.dtype.kind in "iu" and arr.size:
        if arr.min() < dtype.min or arr.max() > dtype.max:
            raise InvalidArgumentError(f"cannot convert {_short(value if value is not None else arr)} "
                                       f"to {dtype.name}: out of range [{dtype.min}, {dtype.max}]")
    return arr.astype(dtype.np)


def _short(value) -> str:
    s = repr(value)
    return s if len(s) <= 60 else s[:57] + "..."


def constant(value, dtype=None, shape=None, name=None) -> Tensor:
    """A tensor holding ``value`` (a Python scalar, nested list, NumPy array or tensor).

    >>> import tapeflow as tf
    >>> tf.constant([[1, 2], [3, 4]]).dtype, tf.constant(1.5).dtype
    (tf.int32, tf.float32)
    >>> tf.constant(0.0, shape=[2]).numpy().tolist()
    [0.0, 0.0]
    """
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and dtype is not value._dtype:
            if dtype.is_string or value._dtype.is_string:
                raise InvalidArgumentError(f"cannot convert a {value._dtype.name} tensor to {dtype.name}; use "
                                           "tf.strings.as_string or tf.strings.to_number", "Const")
            from .ops import cast

            value = cast(value, dtype)
        return value if shape is None else _reshape_const(value, shape)
    value = _unwrap(value)
    arr, dtype = _infer_array(value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape)
            if dtype.is_string:
                arr = np.array(arr, dtype=object)
        elif arr.shape != shape:
            if int(np.prod(shape)) != arr.size:
                raise InvalidArgumentError(f"value with {arr.size} elements cannot take shape {shape}", "Const")
            arr = arr.reshape(shape)
    dev = _device.current() or _device.default_device()
    return from_numpy(arr, dtype, dev)


def _reshape_const(t, shape):
    from .ops import reshape

    return reshape(t, shape)


def _unwrap(value):
    """Variables (and anything with ``_as_tensor``) become their tensor value."""
    conv = getattr(value, "_as_tensor", None)
    return conv() if conv is not None else value


def convert_to_tensor(value, dtype=None, name=None) -> Tensor:
    """``value`` as a Tensor: tensors pass through, variables give their value, the rest converts.

    >>> import tapeflow as tf
    >>> tf.convert_to_tensor([1.0, 2.0]).shape
    TensorShape([2])
    """
    if type(value) is Tensor:
        if dtype is not None and _dt.as_dtype(dtype) is not value._dtype:
            raise InvalidArgumentError(f"tensor of dtype {value._dtype.name} where {_dt.as_dtype(dtype).name} "
                                       "was requested; use tf.cast to convert")
        return value
    value = _unwrap(value)
    if isinstance(value, Tensor):
        return convert_to_tensor(value, dtype)
    return constant(value, dtype)
