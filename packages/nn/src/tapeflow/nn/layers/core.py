"""Core layers: Dense, Activation, Dropout, Flatten, Reshape, Embedding, Lambda."""
from __future__ import annotations

from tapeflow.core.errors import InvalidArgumentError

from .. import _ops as K
from .. import activations as _act
from .. import initializers as _init
from .base import InputSpec, Layer, _TRAINING  # noqa: F401


def _cfg_init(x):
    return _init.serialize(_init.get(x)) if x is not None else None


class Dense(Layer):
    """A fully connected layer: ``activation(inputs @ kernel + bias)``.

    The kernel has shape ``(input_dim, units)`` (Glorot uniform), the bias ``(units,)`` (zeros).
    Inputs of rank > 2 are multiplied along their last axis.

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.Dense(10)
    >>> layer(tf.zeros([1, 1, 784])).shape, layer.kernel.shape
    (TensorShape([1, 1, 10]), TensorShape([784, 10]))
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if int(units) <= 0:
            raise ValueError(f"units must be a positive integer, got {units}")
        self.units = int(units)
        self.activation = _act.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError(f'the last dimension of the inputs to layer "{self.name}" must be known, '
                             f"got shape {tuple(input_shape)}")
        self.kernel = self.add_weight("kernel", (in_dim, self.units), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", (self.units,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=2, axes={-1: int(in_dim)})

    def call(self, inputs):
        shape = inputs._shape
        kernel = self.kernel.read_value()
        if len(shape) == 2:
            y = K.matmul(inputs, kernel)
        else:
            y = K.reshape(K.matmul(K.reshape(inputs, (-1, shape[-1])), kernel), shape[:-1] + (self.units,))
        if self.bias is not None:
            y = K.add(y, self.bias.read_value())
        act = self.activation
        return y if act is _act.linear else act(y)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": _act.serialize(self.activation),
                "use_bias": self.use_bias, "kernel_initializer": _cfg_init(self.kernel_initializer),
                "bias_initializer": _cfg_init(self.bias_initializer)}


class Activation(Layer):
    """Applies an activation function (a name like ``"relu"`` or a callable).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Activation("relu")(tf.constant([[-1.0, 1.0]])).numpy().tolist()
    [[0.0, 1.0]]
    """

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = _act.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "activation": _act.serialize(self.activation)}


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of the inputs while training and scales the rest by 1 / (1 - rate).

    At inference (``training`` false or not given) it passes inputs through.

    >>> import tapeflow as tf
    >>> d = tf.keras.layers.Dropout(0.5)
    >>> d(tf.ones([2, 2])).numpy().tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    >>> y = d(tf.ones([1000]), training=True)
    >>> sorted(set(y.numpy().tolist()))
    [0.0, 2.0]
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"rate must be in [0, 1], got {rate}")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        self._calls = 0

    def call(self, inputs, training=None):
        if not training or self.rate == 0.0:
            return inputs
        noise_shape = None
        if self.noise_shape is not None:
            noise_shape = [inputs.shape[i] if d is None else d for i, d in enumerate(self.noise_shape)]
        seed = None
        if self.seed is not None:
            # a fresh mask per call, reproducible from the layer's seed
            self.__dict__["_calls"] += 1
            seed = self.seed * 1000003 + self._calls
        return K.dropout(inputs, rate=self.rate, noise_shape=noise_shape, seed=seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class Flatten(Layer):
    """Flattens every axis but the batch axis: (batch, d1, d2, ...) -> (batch, d1 * d2 * ...).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Flatten()(tf.zeros([2, 3, 4])).shape
    TensorShape([2, 12])
    """

    def call(self, inputs):
        shape = inputs._shape
        if len(shape) == 1:
            return K.reshape(inputs, (shape[0], 1))
        return K.reshape(inputs, (shape[0], -1) if shape[0] else (0, _prod(shape[1:])))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        n = None if any(d is None for d in rest) else _prod(rest)
        return (input_shape[0], n)


class Reshape(Layer):
    """Reshapes each example to ``target_shape`` (the batch axis stays; one entry may be -1).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Reshape((2, 6))(tf.zeros([3, 12])).shape
    TensorShape([3, 2, 6])
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(1 for d in self.target_shape if d == -1) > 1:
            raise ValueError(f"target_shape may hold at most one -1, got {self.target_shape}")

    def call(self, inputs):
        return K.reshape(inputs, (inputs._shape[0],) + self._resolve(inputs._shape[1:]))

    def _resolve(self, rest):
        n = _prod(rest)
        known = _prod(d for d in self.target_shape if d != -1)
        if -1 in self.target_shape:
            if known == 0 or n % known:
                raise InvalidArgumentError(f"cannot reshape examples of shape {tuple(rest)} ({n} values) to "
                                           f"{self.target_shape}", "Reshape")
            return tuple(n // known if d == -1 else d for d in self.target_shape)
        if known != n:
            raise InvalidArgumentError(f"cannot reshape examples of shape {tuple(rest)} ({n} values) to "
                                       f"{self.target_shape} ({known} values)", "Reshape")
        return self.target_shape

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        if any(d is None for d in rest):
            return (input_shape[0],) + tuple(None if d == -1 else d for d in self.target_shape)
        return (input_shape[0],) + self._resolve(rest)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Embedding(Layer):
    """Maps integer ids in [0, input_dim) to rows of a (input_dim, output_dim) table.

    >>> import tapeflow as tf
    >>> e = tf.keras.layers.Embedding(100, 8)
    >>> e(tf.constant([[1, 2, 3]])).shape, e.count_params()
    (TensorShape([1, 3, 8]), 800)
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 mask_zero=False, input_length=None, **kwargs):
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if self.input_dim <= 0 or self.output_dim <= 0:
            raise ValueError(f"input_dim and output_dim must be positive, got {input_dim} and {output_dim}")
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        self.mask_zero, self.input_length = bool(mask_zero), input_length

    def build(self, input_shape=None):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer)

    def call(self, inputs):
        ids = inputs
        if not ids.dtype.is_integer:
            ids = K.cast(ids, K.int32)
        return K.gather(self.embeddings.read_value(), ids)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "mask_zero": self.mask_zero}


class Lambda(Layer):
    """Wraps a function of tensors as a layer (no weights).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Lambda(lambda x: x * 2)(tf.constant([1.0])).numpy().tolist()
    [2.0]
    """

    def __init__(self, function, output_shape=None, **kwargs):
        super().__init__(**kwargs)
        self.function, self._output_shape = function, output_shape

    def call(self, inputs):
        return self.function(inputs)


def _prod(xs):
    n = 1
    for d in xs:
        n *= int(d)
    return n
