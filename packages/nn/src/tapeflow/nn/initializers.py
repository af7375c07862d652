"""Weight initializers (``tf.initializers``, ``tf.keras.initializers``).

An initializer is called with a shape and a dtype and returns a tensor.  Random
ones draw from ``tf.random`` (Philox); with ``seed=`` an initializer gives the
same values at every call, as Keras 3's do.

>>> import tapeflow as tf
>>> init = tf.initializers.GlorotUniform(seed=1)
>>> w = init((3, 4))
>>> w.shape, bool(tf.reduce_all(w == init((3, 4))))
(TensorShape([3, 4]), True)
"""
from __future__ import annotations

import math

from tapeflow.core import dtypes as _dt

import tapeflow.core as K


def _random():
    from tapeflow.core import random as R  # tf.random: Philox, the same numbers on every backend

    return R


def _draw(kind, shape, dtype, seed, **kw):
    """Random numbers from tf.random; a seeded draw is stateless (the same seed, the same values)."""
    R = _random()
    shape = tuple(int(d) for d in shape)
    if seed is not None:
        f = getattr(R, f"stateless_{kind}", None)
        if f is not None:
            return f(shape, seed=(int(seed), 0), dtype=dtype, **kw)
    return getattr(R, kind)(shape, dtype=dtype, seed=seed, **kw)


class Initializer:
    """Base class: ``init(shape, dtype=tf.float32)`` returns a tensor; ``get_config`` gives the arguments.

    >>> import tapeflow as tf
    >>> class Twos(tf.initializers.Initializer):
    ...     def __call__(self, shape, dtype=None):
    ...         return tf.fill(shape, 2.0)
    >>> Twos()((2,)).numpy().tolist()
    [2.0, 2.0]
    """

    def __call__(self, shape, dtype=None):
        raise TypeError(f"{type(self).__name__} must define __call__(shape, dtype)")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _dtype(dtype):
    return _dt.float32 if dtype is None else _dt.as_dtype(dtype)


class Zeros(Initializer):
    """All zeros.

    >>> import tapeflow as tf
    >>> tf.initializers.Zeros()((2,)).numpy().tolist()
    [0.0, 0.0]
    """

    def __call__(self, shape, dtype=None):
        return K.zeros(tuple(shape), _dtype(dtype))


class Ones(Initializer):
    """All ones.

    >>> import tapeflow as tf
    >>> tf.initializers.Ones()((2,)).numpy().tolist()
    [1.0, 1.0]
    """

    def __call__(self, shape, dtype=None):
        return K.ones(tuple(shape), _dtype(dtype))


class Constant(Initializer):
    """Every element ``value``.

    >>> import tapeflow as tf
    >>> tf.initializers.Constant(3.0)((2,)).numpy().tolist()
    [3.0, 3.0]
    """

    def __init__(self, value=0.0) -> None:
        self.value = value

    def __call__(self, shape, dtype=None):
        return K.fill(tuple(shape), self.value, _dtype(dtype))

    def get_config(self):
        return {"value": self.value}


class RandomUniform(Initializer):
    """Uniform in [minval, maxval).

    >>> import tapeflow as tf
    >>> w = tf.initializers.RandomUniform(-1.0, 1.0, seed=0)((100,))
    >>> bool(tf.reduce_all(w >= -1.0)) and bool(tf.reduce_all(w < 1.0))
    True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None):
        return _draw("uniform", shape, _dtype(dtype), self.seed, minval=self.minval, maxval=self.maxval)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(Initializer):
    """Normal with ``mean`` and ``stddev``.

    >>> import tapeflow as tf
    >>> w = tf.initializers.RandomNormal(stddev=1.0, seed=0)((10000,))
    >>> abs(float(tf.reduce_mean(w))) < 0.05
    True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return _draw("normal", shape, _dtype(dtype), self.seed, mean=self.mean, stddev=self.stddev)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(Initializer):
    """Normal with ``mean`` and ``stddev``, redrawn beyond two standard deviations.

    >>> import tapeflow as tf
    >>> w = tf.initializers.TruncatedNormal(stddev=1.0, seed=0)((1000,))
    >>> float(tf.reduce_max(tf.abs(w))) <= 2.0
    True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return _draw("truncated_normal", shape, _dtype(dtype), self.seed, mean=self.mean, stddev=self.stddev)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


def _fans(shape):
    shape = tuple(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for d in shape[:-2]:
        receptive *= d
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Random values scaled to the layer's fan: variance ``scale / n``.

    ``n`` is fan_in, fan_out or their average (``mode``); the distribution is
    ``"truncated_normal"``, ``"untruncated_normal"`` or ``"uniform"`` (limit sqrt(3 * scale / n)).

    >>> import tapeflow as tf
    >>> w = tf.initializers.VarianceScaling(2.0, "fan_in", "uniform", seed=0)((50, 10))
    >>> float(tf.reduce_max(tf.abs(w))) <= (3 * 2.0 / 50) ** 0.5
    True
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None) -> None:
        if scale <= 0.0:
            raise ValueError(f"scale must be positive, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"mode must be 'fan_in', 'fan_out' or 'fan_avg', got {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("distribution must be 'uniform', 'truncated_normal' or 'untruncated_normal', "
                             f"got {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dt = _dtype(dtype)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return _draw("uniform", shape, dt, self.seed, minval=-limit, maxval=limit)
        if self.distribution == "truncated_normal":
            # the stddev of a unit normal truncated to [-2, 2]
            return _draw("truncated_normal", shape, dt, self.seed, mean=0.0,
                         stddev=math.sqrt(scale) / 0.87962566103423978)
        return _draw("normal", shape, dt, self.seed, mean=0.0, stddev=math.sqrt(scale))

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


class GlorotUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / (fan_in + fan_out)): the default for Dense and Conv2D kernels.

    >>> import tapeflow as tf
    >>> w = tf.initializers.GlorotUniform(seed=0)((30, 30))
    >>> float(tf.reduce_max(tf.abs(w))) <= (6 / 60) ** 0.5
    True
    """

    def __init__(self, seed=None) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)).

    >>> import tapeflow as tf
    >>> tf.initializers.GlorotNormal(seed=0)((4, 4)).shape
    TensorShape([4, 4])
    """

    def __init__(self, seed=None) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / fan_in), for ReLU networks.

    >>> import tapeflow as tf
    >>> w = tf.initializers.HeUniform(seed=0)((24, 8))
    >>> float(tf.reduce_max(tf.abs(w))) <= (6 / 24) ** 0.5
    True
    """

    def __init__(self, seed=None) -> None:
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / fan_in), for ReLU networks.

    >>> import tapeflow as tf
    >>> tf.initializers.HeNormal(seed=0)((4, 4)).shape
    TensorShape([4, 4])
    """

    def __init__(self, seed=None) -> None:
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunUniform(VarianceScaling):
    """Uniform in ±sqrt(3 / fan_in).

    >>> import tapeflow as tf
    >>> tf.initializers.LecunUniform(seed=0)((4, 4)).shape
    TensorShape([4, 4])
    """

    def __init__(self, seed=None) -> None:
        super().__init__(1.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(1 / fan_in).

    >>> import tapeflow as tf
    >>> tf.initializers.LecunNormal(seed=0)((4, 4)).shape
    TensorShape([4, 4])
    """

    def __init__(self, seed=None) -> None:
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class Orthogonal(Initializer):
    """A random orthogonal matrix (times ``gain``): rows or columns orthonormal.

    The orthogonal factor of a Gaussian matrix (its polar factor, found by
    Newton-Schulz iterations of matmuls in float64) is uniformly distributed over
    the orthogonal matrices, as the QR construction of Keras gives.  Shapes of
    rank > 2 are flattened to (prod(shape[:-1]), shape[-1]).

    >>> import tapeflow as tf
    >>> q = tf.initializers.Orthogonal(seed=0)((3, 6))
    >>> eye = tf.matmul(q, q, transpose_b=True).numpy()
    >>> bool(abs(eye - [[1, 0, 0], [0, 1, 0], [0, 0, 1]]).max() < 1e-5)
    True
    """

    def __init__(self, gain=1.0, seed=None) -> None:
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None):
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError(f"the orthogonal initializer needs a shape of rank >= 2, got {shape}")
        rows = 1
        for d in shape[:-1]:
            rows *= d
        cols = shape[-1]
        n, m = max(rows, cols), min(rows, cols)
        x = _draw("normal", (n, m), _dt.float64, self.seed, mean=0.0, stddev=1.0)
        # scale so every singular value is <= 1 (Frobenius bounds the spectral norm), then
        # X <- 1.5 X - 0.5 X (X^T X) drives every singular value to 1, keeping the singular vectors
        x = x / K.sqrt(K.reduce_sum(K.square(x)))
        for _ in range(100):
            xtx = K.matmul(x, x, transpose_a=True)
            x = 1.5 * x - 0.5 * K.matmul(x, xtx)
            err = float(K.reduce_max(K.abs(xtx - _eye(m))))
            if err < 1e-12:
                break
        if rows < cols:
            x = K.transpose(x)
        return K.cast(K.reshape(self.gain * x, shape), _dtype(dtype))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


def _eye(n):
    i = K.range(n)
    return K.cast(K.equal(K.reshape(i, (n, 1)), K.reshape(i, (1, n))), _dt.float64)


_ALIASES = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_uniform": RandomUniform,
    "random_normal": RandomNormal, "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_uniform": HeUniform,
    "he_normal": HeNormal, "lecun_uniform": LecunUniform, "lecun_normal": LecunNormal, "orthogonal": Orthogonal,
    "uniform": RandomUniform, "normal": RandomNormal,
}

# TensorFlow's lower-case spellings
zeros, ones, constant, random_uniform, random_normal = Zeros, Ones, Constant, RandomUniform, RandomNormal
truncated_normal, glorot_uniform, glorot_normal, he_uniform, he_normal = (TruncatedNormal, GlorotUniform,
                                                                          GlorotNormal, HeUniform, HeNormal)
orthogonal, variance_scaling = Orthogonal, VarianceScaling


def get(identifier):
    """An initializer from a name (``"he_normal"``), a class, an instance, a config dict or a callable.

    >>> import tapeflow as tf
    >>> tf.initializers.get("glorot_uniform")
    GlorotUniform(seed=None)
    """
    if identifier is None:
        return None
    if isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        key = identifier if identifier in _ALIASES else _snake(identifier)
        try:
            return _ALIASES[key]()
        except KeyError:
            raise ValueError(f"unknown initializer {identifier!r}; allowed: {', '.join(sorted(_ALIASES))}") from None
    if isinstance(identifier, dict):
        cls = get(identifier["class_name"]).__class__
        return cls.from_config(identifier.get("config", {}))
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise TypeError(f"an initializer must be a name, an Initializer or a callable, not {type(identifier).__name__}")


def serialize(initializer) -> dict:
    """``{"class_name": ..., "config": ...}`` for ``get_config``.

    >>> import tapeflow as tf
    >>> tf.initializers.serialize(tf.initializers.Constant(2.0))
    {'class_name': 'Constant', 'config': {'value': 2.0}}
    """
    if isinstance(initializer, Initializer):
        return {"class_name": type(initializer).__name__, "config": initializer.get_config()}
    return getattr(initializer, "__name__", repr(initializer))


def _snake(name: str) -> str:
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(c.lower())
    return "".join(out)
