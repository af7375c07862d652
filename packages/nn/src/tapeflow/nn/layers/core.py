"""Core layers: Dense, Activation, Dropout, Flatten, Reshape, Embedding, Masking, Lambda."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
import tapeflow.core as K
from .. import activations as _act
from .. import initializers as _init
from .. import regularizers as _reg
from .base import InputSpec, Layer, _TRAINING  # noqa: F401

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


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
                 bias_constraint=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = A.integer(units, "units", self, lo=1)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        A.lookups(self, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    supports_masking = True  # acts on the last axis: a mask over the others passes through

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

    def call(self, inputs) -> Tensor:
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
                "bias_initializer": _cfg_init(self.bias_initializer),
                "kernel_regularizer": _reg.serialize(self.kernel_regularizer),
                "bias_regularizer": _reg.serialize(self.bias_regularizer), "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint}


class Activation(Layer):
    """Applies an activation function (a name like ``"relu"`` or a callable).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Activation("relu")(tf.constant([[-1.0, 1.0]])).numpy().tolist()
    [[0.0, 1.0]]
    """

    def __init__(self, activation, **kwargs) -> None:
        super().__init__(**kwargs)
        self.activation = A.resolved(_act.get, activation, "activation", self)

    supports_masking = True

    def call(self, inputs) -> Tensor:
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

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate = A.number(rate, "rate", self, lo=0.0, hi=1.0)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        if noise_shape is not None:
            if not isinstance(noise_shape, (list, tuple)) or \
                    not all(d is None or A._is_int(d) for d in noise_shape):
                raise TypeError(f"Dropout: noise_shape must be a tuple of ints or None, got {noise_shape!r}")
            noise_shape = tuple(noise_shape)
        self.noise_shape = noise_shape
        self._calls = 0

    supports_masking = True

    def call(self, inputs, training=None) -> Tensor:
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

    _casts_ints = False  # moves values

    def call(self, inputs) -> Tensor:
        shape = inputs._shape
        if len(shape) == 1:
            return K.reshape(inputs, (shape[0], 1))
        if shape[0] is None:  # a symbolic input of unknown batch (its other sizes known)
            return K.reshape(inputs, (-1, _prod(shape[1:])))
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

    _casts_ints = False  # moves values

    def __init__(self, target_shape, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(target_shape, (list, tuple)) or not all(A._is_int(d) for d in target_shape):
            raise TypeError(f"Reshape: target_shape must be a tuple of ints, got {target_shape!r}")
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(1 for d in self.target_shape if d == -1) > 1:
            raise ValueError(f"target_shape may hold at most one -1, got {self.target_shape}")

    def call(self, inputs) -> Tensor:
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

    _casts_ints = False  # ids stay integers

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 mask_zero=False, input_length=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.input_dim = A.integer(input_dim, "input_dim", self, lo=1)
        self.output_dim = A.integer(output_dim, "output_dim", self, lo=1)
        A.lookups(self, embeddings_initializer=embeddings_initializer, embeddings_regularizer=embeddings_regularizer)
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        self.mask_zero = A.boolean(mask_zero, "mask_zero", self)
        self.input_length = A.integer(input_length, "input_length", self, lo=1, none_ok=True)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer)

    def call(self, inputs) -> Tensor:
        ids = inputs
        if not ids.dtype.is_integer:
            ids = K.cast(ids, K.int32)
        return K.gather(self.embeddings.read_value(), ids)

    def compute_mask(self, inputs, mask=None):
        """With ``mask_zero=True``, ``inputs != 0`` (id 0 is padding); else None."""
        if not self.mask_zero:
            return None
        return K.not_equal(inputs, K.zeros((), inputs.dtype))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": _cfg_init(self.embeddings_initializer),
                "embeddings_regularizer": _reg.serialize(self.embeddings_regularizer), "mask_zero": self.mask_zero,
                "input_length": self.input_length}


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``, for the layers after it.

    Inputs are (batch, time, features...).  A step is masked when every feature equals
    ``mask_value``; masked steps are set to zero in the output, and layers that take masks
    (LSTM, GRU) skip them.

    >>> import tapeflow as tf
    >>> x = tf.constant([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
    >>> masking = tf.keras.layers.Masking(mask_value=0.0)
    >>> masking.compute_mask(x).numpy().tolist()
    [[True, False, True]]
    >>> lstm = tf.keras.layers.LSTM(2)
    >>> with_mask = lstm(masking(x))
    >>> bool((with_mask.numpy() == lstm(tf.gather(x, [0, 2], axis=1)).numpy()).all())
    True
    """

    _casts_ints = False  # keeps the input's dtype, as Keras

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mask_value = A.number(mask_value, "mask_value", self)

    def compute_mask(self, inputs, mask=None):
        return K.reduce_any(K.not_equal(inputs, K.cast(self.mask_value, inputs.dtype)), axis=-1)

    def call(self, inputs) -> Tensor:
        keep = K.cast(self.compute_mask(inputs), inputs.dtype)
        return K.multiply(inputs, K.expand_dims(keep, -1))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}


class Lambda(Layer):
    """Wraps a function of tensors as a layer (no weights), as Keras 3's ``Lambda``.

    ``arguments`` are passed to ``function`` as keyword arguments; ``output_shape`` (a shape
    without the batch axis, or a function of the input shape) answers ``compute_output_shape``;
    ``mask`` is the output's mask: a function ``mask(inputs, previous_mask)`` or a fixed tensor
    (without it the layer takes no masked input, as Keras 3).
    Integer inputs reach ``function`` unchanged.

    >>> import tapeflow as tf
    >>> tf.keras.layers.Lambda(lambda x: x * 2)(tf.constant([1.0])).numpy().tolist()
    [2.0]
    >>> double = tf.keras.layers.Lambda(lambda x, k: x * k, arguments={"k": 2}, output_shape=(7,))
    >>> double.compute_output_shape((None, 7))
    (None, 7)
    """

    _casts_ints = False  # the function decides (Lambda(lambda x: tf.one_hot(x, 3)) takes ids)

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if not callable(function):
            raise A._type_error(self, "function", function, "a callable")
        if output_shape is not None and not callable(output_shape) and not (
                isinstance(output_shape, (list, tuple)) and all(d is None or A._is_int(d) for d in output_shape)):
            raise A._type_error(self, "output_shape", output_shape, "None, a tuple of ints or a callable")
        if arguments is not None and not isinstance(arguments, dict):
            raise A._type_error(self, "arguments", arguments, "None or a dict of keyword arguments")
        self.function = function
        self._output_shape = tuple(output_shape) if isinstance(output_shape, list) else output_shape
        self.mask = mask
        self.supports_masking = mask is not None  # as Keras 3: without mask= a masked input is refused
        self.arguments = dict(arguments or {})

    def call(self, inputs):
        return self.function(inputs, **self.arguments)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        if self.mask is not None:
            return self.mask if isinstance(self.mask, K.Tensor) else K.convert_to_tensor(self.mask)
        return None

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._output_shape):
            return tuple(self._output_shape(tuple(input_shape)))
        return (tuple(input_shape)[0],) + tuple(self._output_shape)

    def get_config(self):
        return {**super().get_config(), "function": self.function, "output_shape": self._output_shape,
                "mask": self.mask, "arguments": self.arguments}


def _prod(xs):
    n = 1
    for d in xs:
        n *= int(d)
    return n
