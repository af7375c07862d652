"""TensorFlow 2's top-level initializer classes (``tf.zeros_initializer`` ...): callables ``init(shape, dtype)``.

These are core's own (tapeflow-core does not depend on tapeflow-nn, whose ``tf.keras.initializers`` are the
Keras ones).  A seeded random initializer draws the same values on every call (a stateless draw from
``[seed, 0]``), as TensorFlow 2's; without a seed each call draws new values.

>>> import tapeflow as tf
>>> init = tf.constant_initializer([1, 2, 3, 4])
>>> init([2, 2], tf.int32).numpy().tolist()
[[1, 2], [3, 4]]
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .dispatch import dtype_arg, shape_arg
from .tensor import Tensor, convert_to_tensor

__all__ = ["zeros_initializer", "ones_initializer", "constant_initializer", "random_normal_initializer",
           "random_uniform_initializer"]


def _ops():
    from . import ops

    return ops


def _rnd():
    from .ops import random_ops

    return random_ops


def _shape(shape, what):
    return shape_arg(shape, what, "shape")


def _numeric(dtype, what):
    dt = dtype_arg(dtype, what)
    if dt is _dt.string or dt in (_dt.complex64, _dt.complex128):
        raise ValueError(f"Argument `dtype` expected to be numeric or boolean. Received {dt!r}.")
    return dt


def _floating(dtype, what):
    dt = dtype_arg(dtype, what)
    if not dt.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dt!r}.")
    return dt


class _Initializer:
    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _check_kwargs(self, kwargs):
        extra = set(kwargs) - {"partition_info"}
        if extra:
            raise TypeError(f"{type(self).__name__}: unknown keyword argument(s) {sorted(extra)}")


class zeros_initializer(_Initializer):  # noqa: N801  (TensorFlow's name)
    """Initializer of zeros: ``init(shape, dtype=tf.float32)``.

    >>> import tapeflow as tf
    >>> tf.zeros_initializer()([2], tf.int32).numpy().tolist()
    [0, 0]
    """

    def __call__(self, shape, dtype=_dt.float32, **kwargs):
        self._check_kwargs(kwargs)
        return _ops().zeros(_shape(shape, "zeros_initializer"), _numeric(dtype, "zeros_initializer"))


class ones_initializer(_Initializer):  # noqa: N801
    """Initializer of ones: ``init(shape, dtype=tf.float32)``.

    >>> import tapeflow as tf
    >>> tf.ones_initializer()([2]).numpy().tolist()
    [1.0, 1.0]
    """

    def __call__(self, shape, dtype=_dt.float32, **kwargs):
        self._check_kwargs(kwargs)
        return _ops().ones(_shape(shape, "ones_initializer"), _numeric(dtype, "ones_initializer"))


class constant_initializer(_Initializer):  # noqa: N801
    """Initializer of a constant ``value``: a scalar fills the shape, a list or array with as many elements as
    the shape is reshaped to it.

    >>> import tapeflow as tf
    >>> tf.constant_initializer(3)([2], tf.int32).numpy().tolist()
    [3, 3]
    """

    def __init__(self, value=0):
        if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
            value = value.numpy()
        if not isinstance(value, (int, float, bool, list, tuple, np.ndarray, np.generic)):
            raise TypeError(f"Invalid type for initial value={value!r:.60} of type {type(value).__name__}; "
                            "expected a Python number, a list or an array")
        self.value = value

    def __call__(self, shape, dtype=_dt.float32, **kwargs):
        self._check_kwargs(kwargs)
        what = "constant_initializer"
        shp = _shape(shape, what)
        dt = _numeric(dtype, what)
        v = convert_to_tensor(self.value, dt)
        n = int(np.prod(shp)) if shp else 1
        if not v._shape:
            return _ops().fill(list(shp), v)
        size = int(np.prod(v._shape))
        if size != n:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor {v.numpy()} has {size} "
                            f"elements, but got `shape` {tuple(shp)} with {n} elements).")
        return _ops().reshape(v, list(shp))

    def get_config(self) -> dict:
        return {"value": self.value}


class _Random(_Initializer):
    def __init__(self, a, b, seed):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"{type(self).__name__}: seed must be an int or None, got {seed!r}")
        self.seed = seed
        self._a, self._b = a, b

    def __call__(self, shape, dtype=_dt.float32, **kwargs):
        self._check_kwargs(kwargs)
        what = type(self).__name__
        shp = list(_shape(shape, what))
        dt = _floating(dtype, what)
        return self._draw(shp, dt)


class random_normal_initializer(_Random):  # noqa: N801
    """Initializer of normal draws with ``mean`` and ``stddev`` (floats only).

    >>> import tapeflow as tf
    >>> init = tf.random_normal_initializer(stddev=0.1, seed=1)
    >>> bool(tf.reduce_all(init([3]) == init([3])))
    True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(mean, stddev, seed)
        self.mean, self.stddev = mean, stddev

    def _draw(self, shape, dt):
        o = _ops()
        if self.seed is None:
            return o.random_normal(shape, mean=self.mean, stddev=self.stddev, dtype=dt)
        return _rnd().stateless_random_normal(shape, seed=[int(self.seed), 0], mean=self.mean, stddev=self.stddev,
                                         dtype=dt)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(_Random):  # noqa: N801
    """Initializer of uniform draws in ``[minval, maxval)`` (floats only).

    >>> import tapeflow as tf
    >>> x = tf.random_uniform_initializer(0.0, 1.0, seed=3)([100])
    >>> bool(tf.reduce_all((x >= 0.0) & (x < 1.0)))
    True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(minval, maxval, seed)
        self.minval, self.maxval = minval, maxval

    def _draw(self, shape, dt):
        o = _ops()
        if self.seed is None:
            return o.random_uniform(shape, minval=self.minval, maxval=self.maxval, dtype=dt)
        return _rnd().stateless_random_uniform(shape, seed=[int(self.seed), 0], minval=self.minval, maxval=self.maxval,
                                          dtype=dt)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}
