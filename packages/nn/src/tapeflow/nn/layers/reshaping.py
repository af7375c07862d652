"""Reshaping layers: UpSampling2D, ZeroPadding2D, Cropping2D, RepeatVector, Permute."""
from __future__ import annotations

from typing import TYPE_CHECKING

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
from .base import InputSpec, Layer
from .convolutional import _data_format

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


def _hw_axes(fmt):
    return (1, 2) if fmt == "channels_last" else (2, 3)


def _pairs(value, name, owner):
    """An int, a pair of ints (symmetric per axis) or a pair of pairs, as ((top, bottom), (left, right))."""
    allowed = "an int, a tuple of 2 ints or a tuple of 2 tuples of 2 ints, all >= 0"
    if A._is_int(value):
        out = ((value, value), (value, value))
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(A._is_int(v) for v in value):
        out = ((value[0], value[0]), (value[1], value[1]))
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(A._is_int(v) for v in p) for p in value):
        out = tuple(tuple(p) for p in value)
    else:
        raise A._type_error(owner, name, value, allowed)
    out = tuple(tuple(int(v) for v in p) for p in out)
    if any(v < 0 for p in out for v in p):
        raise InvalidArgumentError(f"{name} must be {allowed}, got {out!r}", A._owner(owner))
    return out


def _linear_weights(n_in, n_out):
    """Source rows and weights of a half-pixel-centred linear resize (TensorFlow's bilinear)."""
    scale = n_in / n_out
    lo, hi, frac = [], [], []
    for o in range(n_out):
        src = max((o + 0.5) * scale - 0.5, 0.0)
        i0 = min(int(src), n_in - 1)
        lo.append(i0)
        hi.append(min(i0 + 1, n_in - 1))
        frac.append(src - i0)
    return lo, hi, frac


def _lerp_axis(x, axis, n_out):
    lo, hi, frac = _linear_weights(x.shape[axis], n_out)
    shape = [1] * len(x.shape)
    shape[axis] = n_out
    f = K.reshape(K.constant(frac, dtype=x.dtype), shape)
    a, b = K.gather(x, lo, axis=axis), K.gather(x, hi, axis=axis)
    return K.add(a, K.multiply(K.subtract(b, a), f))


class UpSampling2D(Layer):
    """Repeats rows and columns ``size`` times ("nearest") or resizes bilinearly ("bilinear",
    half-pixel centres as TensorFlow's ``image.resize``).

    >>> import tapeflow as tf
    >>> tf.keras.layers.UpSampling2D(2)(tf.reshape(tf.constant([1.0, 2.0]), [1, 1, 2, 1]))[0, :, :, 0].numpy().tolist()
    [[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]
    """

    _casts_ints = False  # moves values: integers stay integers, as in Keras

    supports_masking = False

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs) -> None:
        super().__init__(**kwargs)
        self.size = A.int_tuple(size, "size", self, 2)
        self.data_format = _data_format(data_format, self)
        self.interpolation = A.choice(interpolation, "interpolation", self, ("nearest", "bilinear"))
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs) -> Tensor:
        x = inputs
        for axis, s in zip(_hw_axes(self.data_format), self.size):
            if s == 1:
                continue
            n = x.shape[axis]
            if self.interpolation == "nearest":
                x = K.gather(x, [i // s for i in range(n * s)], axis=axis)
            else:
                x = _lerp_axis(x, axis, n * s)
        return x

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, s in zip(_hw_axes(self.data_format), self.size):
            shape[axis] = None if shape[axis] is None else shape[axis] * s
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class ZeroPadding2D(Layer):
    """Pads rows and columns with zeros: ``padding`` is an int, (rows, cols) or ((top, bottom), (left, right)).

    >>> import tapeflow as tf
    >>> tf.keras.layers.ZeroPadding2D(((1, 0), (0, 2)))(tf.ones([1, 2, 2, 3])).shape
    TensorShape([1, 3, 4, 3])
    """

    _casts_ints = False  # moves values: integers stay integers, as in Keras

    def __init__(self, padding=(1, 1), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.padding = _pairs(padding, "padding", self)
        self.data_format = _data_format(data_format, self)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs) -> Tensor:
        pads = [[0, 0]] * 4
        for axis, p in zip(_hw_axes(self.data_format), self.padding):
            pads[axis] = list(p)
        return K.pad(inputs, pads)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, p in zip(_hw_axes(self.data_format), self.padding):
            shape[axis] = None if shape[axis] is None else shape[axis] + p[0] + p[1]
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class Cropping2D(Layer):
    """Crops rows and columns: ``cropping`` is an int, (rows, cols) or ((top, bottom), (left, right)).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Cropping2D(((1, 0), (0, 2)))(tf.ones([1, 4, 5, 3])).shape
    TensorShape([1, 3, 3, 3])
    """

    _casts_ints = False  # moves values: integers stay integers, as in Keras

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, "cropping", self)
        self.data_format = _data_format(data_format, self)
        self.input_spec = InputSpec(ndim=4)

    def _check(self, shape):
        for axis, (a, b) in zip(_hw_axes(self.data_format), self.cropping):
            if shape[axis] is not None and a + b >= shape[axis]:
                raise InvalidArgumentError(f'layer "{self.name}" crops {a + b} of the {shape[axis]} entries of axis '
                                           f"{axis} of inputs of shape {tuple(shape)}; allowed: fewer than the "
                                           "axis holds", "Cropping2D")

    def call(self, inputs) -> Tensor:
        self._check(inputs.shape)
        idx = [slice(None)] * 4
        for axis, (a, b) in zip(_hw_axes(self.data_format), self.cropping):
            idx[axis] = slice(a, inputs.shape[axis] - b)
        return inputs[tuple(idx)]

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        shape = list(input_shape)
        for axis, (a, b) in zip(_hw_axes(self.data_format), self.cropping):
            shape[axis] = None if shape[axis] is None else shape[axis] - a - b
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": self.data_format}


class RepeatVector(Layer):
    """Repeats a (batch, features) input ``n`` times: (batch, n, features).

    >>> import tapeflow as tf
    >>> tf.keras.layers.RepeatVector(3)(tf.constant([[1.0, 2.0]])).numpy().tolist()
    [[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]]
    """

    _casts_ints = False  # moves values: integers stay integers, as in Keras

    def __init__(self, n, **kwargs) -> None:
        super().__init__(**kwargs)
        self.n = A.integer(n, "n", self, lo=1)
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs) -> Tensor:
        return K.tile(K.expand_dims(inputs, 1), (1, self.n, 1))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Permute(Layer):
    """Permutes the non-batch axes: ``dims`` is a permutation of 1..rank-1 (the batch axis stays).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Permute((2, 1))(tf.ones([4, 2, 3])).shape
    TensorShape([4, 3, 2])
    """

    _casts_ints = False  # moves values: integers stay integers, as in Keras

    def __init__(self, dims, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(dims, (list, tuple)) or not all(A._is_int(d) for d in dims):
            raise A._type_error(self, "dims", dims, "a tuple of ints")
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise InvalidArgumentError(f"dims {self.dims} must be a permutation of 1..{len(self.dims)} (the batch "
                                       "axis 0 is not permuted)", "Permute")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs) -> Tensor:
        return K.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}
