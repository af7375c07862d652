"""``tf.TensorSpec``: the shape (``None`` for an unknown dimension) and dtype a tensor must have."""
from __future__ import annotations

from . import dtypes as _dt
from .tensor import Tensor, TensorShape


def _as_shape(shape) -> TensorShape:
    if shape is None:
        raise TypeError("TensorSpec needs a shape with a known rank (use None for unknown dimensions, "
                        "e.g. [None, 3])")
    if isinstance(shape, int):
        shape = (shape,)
    dims = []
    for d in shape:
        if d is not None:
            if isinstance(d, bool) or not hasattr(d, "__index__") or int(d) < 0:
                raise TypeError(f"TensorSpec dimensions are non-negative ints or None; got {d!r} in {shape!r}")
            d = int(d)
        dims.append(d)
    return TensorShape(dims)


class TensorSpec:
    """The type of a tensor: its shape, which may have unknown (``None``) dimensions, and dtype.

    ``tf.function(input_signature=[...])`` takes them, as does ``get_concrete_function``.

    >>> import tapeflow as tf
    >>> spec = tf.TensorSpec([None, 3], tf.float32)
    >>> spec
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    >>> spec.is_compatible_with(tf.zeros([5, 3])), spec.is_compatible_with(tf.zeros([5, 4]))
    (True, False)
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=_dt.float32, name=None) -> None:
        self._shape = _as_shape(shape)
        self._dtype = _dt.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name=None) -> TensorSpec:
        """The spec of ``tensor`` (its exact shape and dtype).

        >>> import tapeflow as tf
        >>> tf.TensorSpec.from_tensor(tf.zeros([2], tf.int32))
        TensorSpec(shape=(2,), dtype=tf.int32, name=None)
        """
        return cls(tuple(tensor.shape), tensor.dtype, name)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, other) -> bool:
        """Whether ``other`` (a tensor or spec) has this dtype and a shape these dimensions allow."""
        if isinstance(other, TensorSpec):
            shape, dtype = other._shape, other._dtype
        elif isinstance(other, Tensor) or hasattr(other, "_as_tensor"):
            shape, dtype = tuple(other.shape), other.dtype
        else:
            return False
        return dtype is self._dtype and shapes_compatible(self._shape, shape)

    def most_specific_compatible_type(self, other: TensorSpec) -> TensorSpec:
        """The narrowest spec both this and ``other`` satisfy (differing dimensions become None).

        >>> import tapeflow as tf
        >>> tf.TensorSpec([2, 3]).most_specific_compatible_type(tf.TensorSpec([4, 3]))
        TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
        """
        if other._dtype is not self._dtype or len(other._shape) != len(self._shape):
            raise ValueError(f"{self!r} and {other!r} have no common spec (dtypes or ranks differ)")
        return TensorSpec(relax(self._shape, other._shape), self._dtype, self._name)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self._shape, self._dtype, self._name) == \
            (other._shape, other._dtype, other._name)

    def __hash__(self):
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self):
        shape = tuple(self._shape)
        return f"TensorSpec(shape={shape}, dtype=tf.{self._dtype.name}, name={self._name!r})"


def shapes_compatible(spec_shape, shape) -> bool:
    """Whether ``shape`` fits ``spec_shape`` (same rank; each dimension equal or None in either)."""
    return len(spec_shape) == len(shape) and all(a is None or b is None or a == b for a, b in zip(spec_shape, shape))


def relax(a, b) -> tuple:
    """The dimensions of ``a`` and ``b`` (same rank) where they agree, None where they differ."""
    return tuple(x if x == y else None for x, y in zip(a, b))
