"""dtypes: float16, bfloat16, float32, float64, int8, uint8, int16, int32, int64, bool, string.

Python floats become float32, ints int32, bools bool; NumPy arrays keep their
dtype.  A binary op needs both operands of one dtype (as in TensorFlow); a Python
scalar takes the dtype of the tensor it meets.

>>> import tapeflow as tf
>>> tf.float32.name, tf.float32.is_floating, tf.as_dtype("int32").size
('float32', True, 4)

``tf.string`` holds byte strings of any length (Python ``str`` converts as UTF-8).  String tensors
live in host memory on every device, as TensorFlow's do: their ops (``tf.strings``) are host
computations, and no kernel of a device backend ever sees a string buffer.

>>> tf.string.name, tf.string.is_string, tf.as_dtype(bytes) is tf.string
('string', True, True)

``tf.complex64`` and ``tf.complex128`` hold complex numbers (two float32 or two float64, real part
first, NumPy's layout); a Python complex converts to complex128, as in TensorFlow.  ``real_dtype`` is
the dtype of their parts.

>>> tf.complex64.is_complex, tf.complex64.real_dtype, tf.constant(1 + 2j).dtype
(True, tf.float32, tf.complex128)
"""
from __future__ import annotations

import numpy as np

from tapeflow.kernels import DTYPE_CODES

import ml_dtypes  # bfloat16 as a NumPy dtype (the one TensorFlow and JAX use)

#: tf.string's code: past every kernel dtype code (op dtype masks use one bit per code)
STRING_CODE = 31


class DType:
    """A tensor element type.  Compare with ``==`` against DTypes, strings or NumPy dtypes."""

    __slots__ = ("name", "code", "np", "size", "is_floating", "is_integer", "is_bool",
                 "is_unsigned", "is_half", "min", "max", "is_string", "is_complex", "is_inexact")

    def __init__(self, name, np_dtype, size) -> None:
        self.name = name
        #: the kernels' code; tf.string has none of theirs (a host dtype: no kernel sees it)
        self.code = DTYPE_CODES[name] if name != "string" else STRING_CODE
        self.is_string = name == "string"
        self.is_complex = name.startswith("complex")
        #: floating or complex: the dtypes gradients flow through
        self.is_inexact = self.is_complex or name.startswith(("float", "bfloat"))
        self.np = np_dtype
        self.size = size
        self.is_floating = name.startswith(("float", "bfloat"))
        self.is_bool = name == "bool"
        self.is_integer = not (self.is_floating or self.is_bool or self.is_string or self.is_complex)
        self.is_unsigned = name.startswith("uint")
        #: float16/bfloat16: stored as such, computed in float32 (a fast check for hot paths)
        self.is_half = name in ("float16", "bfloat16")
        if self.is_integer:
            info = np.iinfo(np_dtype)
            self.min, self.max = int(info.min), int(info.max)
        elif self.is_floating:
            info = ml_dtypes.finfo(np_dtype)
            self.min, self.max = float(info.min), float(info.max)
        elif self.is_bool:
            self.min, self.max = 0, 1
        else:
            self.min = self.max = None

    @property
    def as_numpy_dtype(self):
        return self.np.type

    @property
    def real_dtype(self) -> "DType":
        """The dtype of a complex dtype's real and imaginary parts; the dtype itself for the others."""
        return _REAL.get(self.name, self)

    @property
    def is_compute(self) -> bool:
        """Whether kernels compute in this dtype directly (float16/bfloat16 go through float32)."""
        return self.code not in (0, 1)

    def __repr__(self):
        return f"tf.{self.name}"

    __str__ = __repr__

    def __eq__(self, other):
        if other is self:
            return True
        if type(other) is DType:  # dtypes are singletons
            return False
        try:
            return as_dtype(other) is self
        except (TypeError, ValueError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.dtype(np.float16), 2)
bfloat16 = DType("bfloat16", np.dtype(ml_dtypes.bfloat16), 2)
float32 = DType("float32", np.dtype(np.float32), 4)
float64 = DType("float64", np.dtype(np.float64), 8)
int8 = DType("int8", np.dtype(np.int8), 1)
uint8 = DType("uint8", np.dtype(np.uint8), 1)
int16 = DType("int16", np.dtype(np.int16), 2)
int32 = DType("int32", np.dtype(np.int32), 4)
int64 = DType("int64", np.dtype(np.int64), 8)
bool_ = DType("bool", np.dtype(np.bool_), 1)
#: byte strings, held as NumPy object arrays of ``bytes`` in host memory (TensorFlow's tf.string)
string = DType("string", np.dtype(object), 8)
complex64 = DType("complex64", np.dtype(np.complex64), 8)
complex128 = DType("complex128", np.dtype(np.complex128), 16)
_REAL = {"complex64": float32, "complex128": float64}
#: the complex dtypes: not in ALL (most ops have no complex kernels); ops that take them list them
COMPLEX = (complex64, complex128)

# the common dtypes first: op dtype checks test membership in these tuples on the hot path
ALL = (float32, int32, float64, int64, bool_, float16, bfloat16, int8, uint8, int16)
FLOATS = (float32, float64, float16, bfloat16)
INTS = (int32, int64, int8, uint8, int16)
NUMERIC = FLOATS + INTS
BY_NAME = {d.name: d for d in ALL}
BY_NAME.update(half=float16, float=float32, double=float64, bool_=bool_, string=string, complex64=complex64,
               complex128=complex128)
_BY_NP = {d.np: d for d in ALL + COMPLEX}
_BY_NP[string.np] = string
_BY_CODE = {d.code: d for d in ALL + COMPLEX}
_BY_CODE[STRING_CODE] = string


def as_dtype(value) -> DType:
    """Turn a DType, name, NumPy dtype or Python type into a :class:`DType`.

    >>> import tapeflow as tf
    >>> tf.as_dtype("float64"), tf.as_dtype(int)
    (tf.float64, tf.int32)
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        try:
            return BY_NAME[value]
        except KeyError:
            raise TypeError(f"unknown dtype {value!r}; allowed: {', '.join(d.name for d in ALL)}") from None
    if value is None:  # np.dtype(None) would be float64
        raise TypeError(f"dtype None is not a dtype; allowed: a tf.DType, a name ({', '.join(d.name for d in ALL)}), "
                        "a NumPy dtype or float/int/bool")
    if value is float:
        return float32
    if value is int:
        return int32
    if value is bool:
        return bool_
    if value is complex:
        return complex128
    if value is bytes or value is str:
        return string
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"cannot interpret {value!r} as a dtype; allowed: a tf.DType, a name "
                        f"({', '.join(d.name for d in ALL)}), a NumPy dtype or float/int/bool") from None
    d = _BY_NP.get(npd)
    if d is None and npd.kind in "SU":  # NumPy's fixed-width byte and unicode strings
        return string
    if d is None:
        raise TypeError(f"NumPy dtype {npd} has no tapeflow dtype; allowed: {', '.join(d.name for d in ALL)}")
    return d


def from_code(code: int) -> DType:
    return _BY_CODE[code]
