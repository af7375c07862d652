"""Normalization layers: BatchNormalization, LayerNormalization."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
import tapeflow.core as K
from tapeflow.autodiff import pause_all
from .. import initializers as _init
from .. import regularizers as _reg
from .base import InputSpec, Layer

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


def _axis_arg(axis, owner):
    """``axis``: an int or a list/tuple of ints (checked against the rank at build)."""
    if A._is_int(axis):
        return int(axis)
    if isinstance(axis, (list, tuple)) and axis and all(A._is_int(a) for a in axis):
        return [int(a) for a in axis]
    raise A._type_error(owner, "axis", axis, "an int or a list of ints")


def _axes(axis, rank, name):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f'axis {a} is out of range for the rank-{rank} inputs of layer "{name}"')
        out.append(a % rank)
    return tuple(sorted(out))


class BatchNormalization(Layer):
    """Normalizes each feature (``axis``) by the batch's mean and variance while training,
    by moving averages of them at inference: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    The moving statistics (non-trainable) follow ``moving = moving * momentum + batch * (1 - momentum)``.
    A frozen layer (``trainable = False``) always runs in inference mode, as in Keras.  With a mask
    (e.g. after ``Embedding(mask_zero=True)``) the batch statistics cover the kept steps only.

    >>> import tapeflow as tf
    >>> bn = tf.keras.layers.BatchNormalization()
    >>> y = bn(tf.constant([[0.0], [2.0]]), training=True)
    >>> [round(v, 3) for v in y.numpy()[:, 0].tolist()], bn.moving_mean.numpy().tolist()
    ([-1.0, 1.0], [0.009999999776482582])
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = _axis_arg(axis, self)
        self.momentum = A.number(momentum, "momentum", self, lo=0.0, hi=1.0)
        self.epsilon = A.number(epsilon, "epsilon", self, lo=0.0)
        self.center, self.scale = A.boolean(center, "center", self), A.boolean(scale, "scale", self)
        A.lookups(self, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                  moving_mean_initializer=moving_mean_initializer,
                  moving_variance_initializer=moving_variance_initializer, beta_regularizer=beta_regularizer,
                  gamma_regularizer=gamma_regularizer)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer

    def build(self, input_shape):
        rank = len(input_shape)
        axes = _axes(self.axis, rank, self.name)
        shape = tuple(int(input_shape[a]) for a in axes)
        if len(axes) > 1:
            shape = tuple(int(input_shape[a]) if a in axes else 1 for a in range(rank))
        self._feature_axes = axes
        self._reduce_axes = tuple(a for a in range(rank) if a not in axes)
        self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", shape, initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape,
                                               initializer=self.moving_variance_initializer, trainable=False)
        self.input_spec = InputSpec(ndim=rank, axes={a: int(input_shape[a]) for a in axes})

    def _bshape(self, rank):
        # parameters broadcast against the inputs: (C,) works for the last axis, else a full-rank shape
        if self._feature_axes == (rank - 1,):
            return None
        return tuple(self.input_spec.axes.get(a, 1) for a in range(rank))

    supports_masking = True

    def call(self, inputs, training=None, mask=None) -> Tensor:
        rank = len(inputs._shape)
        bshape = self._bshape(rank)
        if mask is not None and len(mask._shape) != rank - 1:
            raise InvalidArgumentError(f'the mask of layer "{self.name}" has shape {tuple(mask._shape)}; allowed: '
                                       f"one axis less than the inputs {tuple(inputs._shape)}", "BatchNormalization")
        if training and self.trainable:
            if mask is None:
                mean, var = K.moments(inputs, self._reduce_axes, keepdims=bshape is not None)
            else:
                mean, var = self._masked_moments(inputs, mask, keepdims=bshape is not None)
            m = self.momentum
            with pause_all():
                mm, mv = K.stop_gradient(mean), K.stop_gradient(var)
                if bshape is not None and len(self.moving_mean.shape) != rank:
                    mm, mv = K.reshape(mm, self.moving_mean.shape), K.reshape(mv, self.moving_mean.shape)
                self.moving_mean.assign(self.moving_mean * m + mm * (1.0 - m))
                self.moving_variance.assign(self.moving_variance * m + mv * (1.0 - m))
        else:
            mean, var = self.moving_mean.read_value(), self.moving_variance.read_value()
            if bshape is not None and len(mean.shape) != rank:
                mean, var = K.reshape(mean, bshape), K.reshape(var, bshape)
        return _normalize(inputs, mean, var, self.beta, self.gamma, self.epsilon, bshape)

    def _masked_moments(self, inputs, mask, keepdims):
        """Mean and variance over the masked-in positions only, as Keras 3 (a mask over all but the last axis)."""
        axes = self._reduce_axes
        keep = K.broadcast_to(K.expand_dims(K.cast(mask, K.bool_), -1), inputs._shape)
        zeros = K.zeros_like(inputs)
        count = K.add(K.reduce_sum(K.cast(keep, inputs.dtype), axis=axes, keepdims=True), 1e-7)  # Keras's epsilon
        mean = K.truediv(K.reduce_sum(K.where(keep, inputs, zeros), axis=axes, keepdims=True), count)
        var = K.truediv(K.reduce_sum(K.square(K.where(keep, K.subtract(inputs, mean), zeros)), axis=axes,
                                     keepdims=True), count)
        if not keepdims:
            mean, var = K.reshape(mean, self.moving_mean.shape), K.reshape(var, self.moving_mean.shape)
        return mean, var

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": _init.serialize(_init.get(self.beta_initializer)),
                "gamma_initializer": _init.serialize(_init.get(self.gamma_initializer)),
                "moving_mean_initializer": _init.serialize(_init.get(self.moving_mean_initializer)),
                "moving_variance_initializer": _init.serialize(_init.get(self.moving_variance_initializer)),
                "beta_regularizer": _reg.serialize(self.beta_regularizer),
                "gamma_regularizer": _reg.serialize(self.gamma_regularizer)}


def _normalize(x, mean, var, beta, gamma, eps, bshape=None):
    beta = None if beta is None else beta.read_value()
    gamma = None if gamma is None else gamma.read_value()
    if bshape is not None:
        if beta is not None and len(beta.shape) != len(bshape):
            beta = K.reshape(beta, bshape)
        if gamma is not None and len(gamma.shape) != len(bshape):
            gamma = K.reshape(gamma, bshape)
    return K.batch_normalization(x, mean, var, beta, gamma, eps)


class LayerNormalization(Layer):
    """Normalizes each example over ``axis`` (the last by default):
    ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    >>> import tapeflow as tf
    >>> ln = tf.keras.layers.LayerNormalization()
    >>> [round(v, 3) for v in ln(tf.constant([[1.0, 3.0]])).numpy()[0].tolist()]
    [-1.0, 1.0]
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis, self.epsilon = _axis_arg(axis, self), A.number(epsilon, "epsilon", self, lo=0.0)
        self.center, self.scale = A.boolean(center, "center", self), A.boolean(scale, "scale", self)
        A.lookups(self, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                  beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer

    def build(self, input_shape):
        rank = len(input_shape)
        axes = _axes(self.axis, rank, self.name)
        self._axes = axes
        shape = tuple(int(input_shape[a]) for a in axes)
        self._bshape = None if axes == tuple(range(rank - len(axes), rank)) else \
            tuple(int(input_shape[a]) if a in axes else 1 for a in range(rank))
        self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self.input_spec = InputSpec(ndim=rank, axes={a: int(input_shape[a]) for a in axes})

    supports_masking = True  # per-position statistics: a mask over the other axes passes through

    def call(self, inputs) -> Tensor:
        mean, var = K.moments(inputs, self._axes, keepdims=True)
        return _normalize(inputs, mean, var, self.beta, self.gamma, self.epsilon, self._bshape)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale, "beta_initializer": _init.serialize(_init.get(self.beta_initializer)),
                "gamma_initializer": _init.serialize(_init.get(self.gamma_initializer)),
                "beta_regularizer": _reg.serialize(self.beta_regularizer),
                "gamma_regularizer": _reg.serialize(self.gamma_regularizer)}
