"""Variable: a mutable, named tensor-like that ops read as a tensor."""
from __future__ import annotations

import itertools

import numpy as np

from . import dtypes as _dt
from .dispatch import hooks
from .errors import InvalidArgumentError
from .ops import _ew
from .tensor import Tensor, convert_to_tensor, make, numpy_repr

_uid = itertools.count()


class Variable:
    """A mutable tensor: ``assign``, ``assign_add``, ``assign_sub``, ``read_value``.

    Usable wherever a tensor is: ops read its current value.  Trainable
    variables read inside a ``GradientTape`` are watched automatically.

    >>> import tapeflow as tf
    >>> v = tf.Variable([1.0, 2.0], name="v")
    >>> _ = v.assign_add([1.0, 1.0])
    >>> v.numpy().tolist(), (v * 2).numpy().tolist()
    ([2.0, 3.0], [4.0, 6.0])
    """

    __array_priority__ = 100
    __hash__ = object.__hash__  # variables are hashable (by identity), unlike tensors

    def __init__(self, initial_value, trainable=True, name=None, dtype=None, shape=None):
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value) if dtype is None or isinstance(initial_value, Tensor) \
            else convert_to_tensor(initial_value, dtype)
        if dtype is not None and value._dtype is not _dt.as_dtype(dtype):
            from .ops import cast

            value = cast(value, dtype)
        from .dispatch import run_device, on_device

        value = on_device(value, run_device(value))
        self._value = value
        self.trainable = bool(trainable)
        self._id = next(_uid)
        self._name = name or "Variable"
        self._handle_name = f"{self._name}:0"

    # -- tensor protocol ----------------------------------------------------
    def _as_tensor(self) -> Tensor:
        return self._value

    @property
    def name(self) -> str:
        return self._handle_name

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value._dtype

    @property
    def device(self) -> str:
        return self._value.device

    @property
    def ndim(self):
        return len(self._value._shape)

    def numpy(self):
        return self._value.numpy()

    def __array__(self, dtype=None, copy=None):
        return self._value.__array__(dtype, copy)

    def value(self) -> Tensor:
        return self.read_value()

    def read_value(self) -> Tensor:
        """The current value as a tensor (a read the tape can see)."""
        if hooks.variable_read is not None:
            hooks.variable_read(self)
        return self._value

    # -- mutation -------------------------------------------------------------
    def _coerce(self, value, op):
        t = value if type(value) is Tensor else convert_to_tensor(value, self._value._dtype) \
            if not isinstance(value, Variable) else value._value
        if t._dtype is not self._value._dtype:
            raise InvalidArgumentError(f"cannot assign a {t._dtype.name} value to a {self._value._dtype.name} "
                                       f"variable {self._name!r}", op)
        if t._shape != self._value._shape:
            raise InvalidArgumentError(f"cannot assign a value of shape {tuple(t._shape)} to variable "
                                       f"{self._name!r} of shape {tuple(self._value._shape)}", op)
        if t._dev is not self._value._dev:
            t = t.to(self._value._dev)
        return t

    # Assignments are not differentiable: the new value is a fresh tensor no tape
    # has seen, so gradients never flow through an assignment (as in TensorFlow).

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Set the value (same shape and dtype).  Returns the variable."""
        t = self._coerce(value, "AssignVariableOp")
        # a new Tensor object sharing the (immutable) buffer: tensors read before keep their values
        self._value = make(t._h, t._arr, t._shape, t._dtype, t._dev, t._size)
        return self if read_value else None

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """``self = self + delta``.  Returns the variable."""
        t = self._coerce(delta, "AssignAddVariableOp")
        self._value = _ew.raw_binary(_ew.BIN["add"], self._value, t, "AssignAddVariableOp")
        return self if read_value else None

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        """``self = self - delta``.  Returns the variable."""
        t = self._coerce(delta, "AssignSubVariableOp")
        self._value = _ew.raw_binary(_ew.BIN["sub"], self._value, t, "AssignSubVariableOp")
        return self if read_value else None

    # -- Python protocol -----------------------------------------------------
    def __repr__(self):
        return (f"<tf.Variable '{self._handle_name}' shape={tuple(self._value._shape)} "
                f"dtype={self._value._dtype.name}, numpy={numpy_repr(self._value._host())}>")

    def __str__(self):
        return self.__repr__()

    def __bool__(self):
        return bool(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __index__(self):
        return self.read_value().__index__()

    def __format__(self, spec):
        return format(self.read_value(), spec)

    def __len__(self):
        return len(self._value)

    def __iter__(self):
        return iter(self.read_value())

    def __getitem__(self, key):
        return self.read_value()[key]

    def __deepcopy__(self, memo):
        return Variable(self._value, trainable=self.trainable, name=self._name)


def _bind_variable_operators():
    names = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
             "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
             "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__",
             "__and__", "__or__", "__xor__", "__invert__", "__eq__", "__ne__"]
    for n in names:
        def method(self, *args, _n=n):
            if _n in ("__eq__", "__ne__") and isinstance(args[0], Variable) is False and args[0] is None:
                return _n == "__ne__"
            return getattr(self.read_value(), _n)(*args)

        method.__name__ = n
        setattr(Variable, n, method)


_bind_variable_operators()
