"""Activation functions by name (``tf.keras.activations``): ``get("relu")`` and friends.

>>> import tapeflow as tf
>>> f = tf.keras.activations.get("relu")
>>> f(tf.constant([-1.0, 2.0])).numpy().tolist()
[0.0, 2.0]
"""
from __future__ import annotations

import tapeflow.core as K


def linear(x):
    """The identity: ``x``.

    >>> import tapeflow as tf
    >>> tf.keras.activations.linear(tf.constant([-1.0])).numpy().tolist()
    [-1.0]
    """
    return x


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """max(x, 0), with an optional negative slope ``alpha`` and cap ``max_value``.

    >>> import tapeflow as tf
    >>> tf.keras.activations.relu(tf.constant([-1.0, 8.0]), max_value=6.0).numpy().tolist()
    [0.0, 6.0]
    """
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return K.relu(x)
    if threshold != 0.0:
        x = K.multiply(x, K.cast(K.greater(x, threshold), x.dtype))
        y = x
    else:
        y = K.leaky_relu(x, alpha=alpha) if alpha else K.relu(x)
    return y if max_value is None else K.minimum(y, float(max_value))


def sigmoid(x):
    """1 / (1 + e**-x).

    >>> import tapeflow as tf
    >>> tf.keras.activations.sigmoid(tf.constant([0.0])).numpy().tolist()
    [0.5]
    """
    return K.sigmoid(x)


def tanh(x):
    """The hyperbolic tangent.

    >>> import tapeflow as tf
    >>> tf.keras.activations.tanh(tf.constant([0.0])).numpy().tolist()
    [0.0]
    """
    return K.tanh(x)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``.

    >>> import tapeflow as tf
    >>> tf.keras.activations.softmax(tf.constant([[0.0, 0.0]])).numpy().tolist()
    [[0.5, 0.5]]
    """
    return K.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """x - log(sum(exp(x))) along ``axis``.

    >>> import tapeflow as tf
    >>> round(float(tf.keras.activations.log_softmax(tf.constant([[0.0, 0.0]]))[0, 0]), 4)
    -0.6931
    """
    return K.log_softmax(x, axis=axis)


def elu(x, alpha=1.0):
    """x if x > 0 else alpha * (e**x - 1).

    >>> import tapeflow as tf
    >>> tf.keras.activations.elu(tf.constant([1.0, 0.0])).numpy().tolist()
    [1.0, 0.0]
    """
    y = K.elu(x)
    return y if alpha == 1.0 else K.multiply(y, K.add(K.cast(K.greater(x, 0.0), x.dtype) * (1.0 - alpha), alpha))


def selu(x):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> import tapeflow as tf
    >>> tf.keras.activations.selu(tf.constant([0.0])).numpy().tolist()
    [0.0]
    """
    return K.selu(x)


def gelu(x, approximate=False):
    """x * Phi(x) (the exact erfc form; ``approximate=True`` uses TensorFlow's tanh form): tf.nn.gelu.

    >>> import tapeflow as tf
    >>> tf.keras.activations.gelu(tf.constant([0.0])).numpy().tolist()
    [0.0]
    """
    return K.gelu(x, approximate=approximate)


def softplus(x):
    """log(1 + e**x).

    >>> import tapeflow as tf
    >>> round(float(tf.keras.activations.softplus(tf.constant(0.0))), 4)
    0.6931
    """
    return K.softplus(x)


def softsign(x):
    """x / (1 + |x|).

    >>> import tapeflow as tf
    >>> tf.keras.activations.softsign(tf.constant([1.0])).numpy().tolist()
    [0.5]
    """
    return K.softsign(x)


def silu(x):
    """x * sigmoid(x) (also called swish).

    >>> import tapeflow as tf
    >>> tf.keras.activations.silu(tf.constant([0.0])).numpy().tolist()
    [0.0]
    """
    return K.silu(x)


swish = silu


def relu6(x):
    """min(max(x, 0), 6).

    >>> import tapeflow as tf
    >>> tf.keras.activations.relu6(tf.constant([7.0])).numpy().tolist()
    [6.0]
    """
    return K.relu6(x)


def leaky_relu(x, negative_slope=0.2):
    """x if x > 0 else negative_slope * x.

    >>> import tapeflow as tf
    >>> tf.keras.activations.leaky_relu(tf.constant([-1.0]), 0.5).numpy().tolist()
    [-0.5]
    """
    return K.leaky_relu(x, alpha=negative_slope)


def exponential(x):
    """e**x.

    >>> import tapeflow as tf
    >>> tf.keras.activations.exponential(tf.constant([0.0])).numpy().tolist()
    [1.0]
    """
    return K.exp(x)


def hard_sigmoid(x):
    """relu6(x + 3) / 6, a cheap piecewise-linear sigmoid.

    >>> import tapeflow as tf
    >>> tf.keras.activations.hard_sigmoid(tf.constant([0.0])).numpy().tolist()
    [0.5]
    """
    return K.relu6(x + 3.0) / 6.0


_BY_NAME = {f.__name__: f for f in (linear, relu, sigmoid, tanh, softmax, log_softmax, elu, selu, gelu, softplus,
                                    softsign, silu, relu6, leaky_relu, exponential, hard_sigmoid)}
_BY_NAME["swish"] = silu


def get(identifier):
    """The activation function for a name, a callable, or None (linear).

    >>> import tapeflow as tf
    >>> tf.keras.activations.get(None).__name__, tf.keras.activations.get("swish").__name__
    ('linear', 'silu')
    """
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]
        except KeyError:
            raise ValueError(f"unknown activation {identifier!r}; allowed: {', '.join(sorted(_BY_NAME))}") from None
    raise TypeError(f"an activation must be a name, a callable or None, not {type(identifier).__name__}")


def serialize(activation) -> str:
    """The name of an activation function (for ``get_config``).

    >>> import tapeflow as tf
    >>> tf.keras.activations.serialize(tf.keras.activations.relu)
    'relu'
    """
    return getattr(activation, "__name__", repr(activation))
