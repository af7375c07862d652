"""Activation layers with arguments (Keras 3's ReLU, LeakyReLU, PReLU, ELU, Softmax)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
from .. import initializers as _init
from .base import Layer
from .convolutional import _reg_config

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


class _Elementwise(Layer):
    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class ReLU(_Elementwise):
    """Rectified linear unit: ``x`` for ``x >= threshold``, else ``negative_slope * (x - threshold)``,
    clipped at ``max_value``.

    >>> import tapeflow as tf
    >>> tf.keras.layers.ReLU(max_value=2.0)(tf.constant([-1.0, 1.0, 3.0])).numpy().tolist()
    [0.0, 1.0, 2.0]
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.max_value = A.number(max_value, "max_value", self, lo=0.0, none_ok=True)
        self.negative_slope = A.number(negative_slope, "negative_slope", self, lo=0.0)
        self.threshold = A.number(threshold, "threshold", self)

    def call(self, inputs) -> Tensor:
        x = inputs
        t, s = self.threshold, self.negative_slope
        if t == 0.0 and s == 0.0:
            y = K.relu(x)
        else:
            below = K.less(x, K.cast(t, x.dtype))
            y = K.where(below, K.multiply(K.subtract(x, K.cast(t, x.dtype)), K.cast(s, x.dtype)), x)
        if self.max_value is not None:
            y = K.minimum(y, K.cast(self.max_value, x.dtype))
        return y

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class LeakyReLU(_Elementwise):
    """Leaky ReLU: ``x`` for ``x >= 0``, else ``negative_slope * x`` (Keras 3's default slope 0.3;
    TF-Keras's ``alpha=`` is taken as the slope).

    >>> import tapeflow as tf
    >>> tf.keras.layers.LeakyReLU(0.5)(tf.constant([-2.0, 3.0])).numpy().tolist()
    [-1.0, 3.0]
    """

    def __init__(self, negative_slope=0.3, **kwargs) -> None:
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.negative_slope = A.number(negative_slope, "negative_slope", self, lo=0.0)

    def call(self, inputs) -> Tensor:
        return K.leaky_relu(inputs, alpha=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class PReLU(_Elementwise):
    """Parametric ReLU: ``max(x, 0) - alpha * max(-x, 0)`` with a learned ``alpha`` per input element
    (shared along ``shared_axes``, 1-based axes without the batch).

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25), shared_axes=[1])
    >>> layer(tf.constant([[[-4.0, 2.0], [4.0, -8.0]]])).numpy().tolist(), layer.weights[0].shape
    ([[[-1.0, 2.0], [4.0, -2.0]]], TensorShape([1, 2]))
    """

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        A.lookups(self, alpha_initializer=alpha_initializer, alpha_regularizer=alpha_regularizer,
                  alpha_constraint=alpha_constraint)
        self.alpha_initializer, self.alpha_regularizer = alpha_initializer, alpha_regularizer
        self.alpha_constraint = alpha_constraint
        if shared_axes is None:
            self.shared_axes = None
        else:
            axes = [shared_axes] if A._is_int(shared_axes) else shared_axes
            if not isinstance(axes, (list, tuple)) or not all(A._is_int(a) and a >= 1 for a in axes):
                raise A._type_error(self, "shared_axes", shared_axes, "None, an int or a list of ints >= 1")
            self.shared_axes = [int(a) for a in axes]

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for a in self.shared_axes or ():
            if a > len(shape):
                raise InvalidArgumentError(f"shared_axes {self.shared_axes} must be axes of inputs of rank "
                                           f"{len(input_shape)} (1 to {len(shape)})", "PReLU")
            shape[a - 1] = 1
        if any(d is None for d in shape):
            raise InvalidArgumentError(f'layer "{self.name}" needs known sizes for the axes it does not share, got '
                                       f"input shape {tuple(input_shape)}; allowed: shared_axes covering the None "
                                       "axes", "PReLU")
        self.alpha = self.add_weight("alpha", tuple(shape), initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)

    def call(self, inputs) -> Tensor:
        return K.subtract(K.relu(inputs), K.multiply(self.alpha.read_value(), K.relu(K.negative(inputs))))

    def get_config(self):
        return {**super().get_config(), "alpha_initializer": _init.serialize(_init.get(self.alpha_initializer)),
                "alpha_regularizer": _reg_config(self.alpha_regularizer), "alpha_constraint": self.alpha_constraint,
                "shared_axes": self.shared_axes}


class ELU(_Elementwise):
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    >>> import tapeflow as tf
    >>> round(float(tf.keras.layers.ELU(alpha=2.0)(tf.constant([-100.0]))[0]), 4)
    -2.0
    """

    def __init__(self, alpha=1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = A.number(alpha, "alpha", self)

    def call(self, inputs) -> Tensor:
        y = K.elu(inputs)
        if self.alpha == 1.0:
            return y
        return K.where(K.greater(inputs, K.cast(0.0, inputs.dtype)), inputs,
                       K.multiply(y, K.cast(self.alpha, inputs.dtype)))

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(_Elementwise):
    """Softmax over ``axis`` (an int or a list of ints); masked positions (``mask`` False) get 0,
    as in Keras 3 (they take -1e9 before the softmax and are zeroed after).

    >>> import tapeflow as tf
    >>> sm = tf.keras.layers.Softmax()
    >>> sm(tf.constant([[1.0, 1.0, 5.0]]), mask=tf.constant([[True, True, False]])).numpy().tolist()
    [[0.5, 0.5, 0.0]]
    """

    def __init__(self, axis=-1, **kwargs) -> None:
        super().__init__(**kwargs)
        if A._is_int(axis):
            self.axis = int(axis)
        elif isinstance(axis, (list, tuple)) and axis and all(A._is_int(a) for a in axis):
            self.axis = [int(a) for a in axis]
        else:
            raise A._type_error(self, "axis", axis, "an int or a non-empty list of ints")

    def call(self, inputs, mask=None) -> Tensor:
        x = inputs
        if mask is not None:
            if len(mask.shape) > len(x.shape) or any(m != 1 and m != i for m, i in
                                                     zip(reversed(mask.shape), reversed(x.shape))):
                raise InvalidArgumentError(f"the mask of layer \"{self.name}\" has shape {tuple(mask.shape)}; "
                                           f"allowed: a shape that broadcasts to the inputs' {tuple(x.shape)}",
                                           "Softmax")
            if mask.dtype is not K.bool_:
                mask = K.greater(mask, K.cast(0.5, mask.dtype))
            mask = K.broadcast_to(mask, x.shape)
            x = K.where(mask, x, K.fill(x.shape, -1e9 if x.dtype is not K.float16 else -65504.0))
        if isinstance(self.axis, list) and len(self.axis) > 1:
            y = K.exp(K.subtract(x, K.reduce_logsumexp(x, axis=self.axis, keepdims=True)))
        else:
            y = K.softmax(x, axis=self.axis[0] if isinstance(self.axis, list) else self.axis)
        if mask is not None:
            y = K.where(mask, y, K.zeros_like(y))
        return y

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
