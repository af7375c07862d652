"""tf.random: seeded random numbers (Philox 4x32-10).

TensorFlow's seed rules: ``set_seed(g)`` makes the sequence of random ops that
follows reproducible; an op seed with it gives a reproducible stream per op
(successive calls still differ); with no seed at all every call is fresh.  The
stateless ops depend only on their seed pair, and a :class:`Generator` carries
its own state.  Values are identical on every backend (see
``tapeflow.core.ops.random_ops`` for how seeds become Philox keys).

>>> import tapeflow as tf
>>> tf.random.set_seed(42)
>>> a = tf.random.uniform([3])
>>> tf.random.set_seed(42)
>>> b = tf.random.uniform([3])
>>> a.numpy().tolist() == b.numpy().tolist()
True
"""
from __future__ import annotations

import os

from . import dtypes as _dt
from .ops import random_ops as _r
from .ops.random_ops import categorical, random_shuffle as shuffle  # noqa: F401
from .ops.random_ops import random_normal as normal, random_uniform as uniform, truncated_normal  # noqa: F401
from .ops.random_ops import (stateless_random_normal as stateless_normal,  # noqa: F401
                             stateless_random_uniform as stateless_uniform, stateless_truncated_normal)

__all__ = ["set_seed", "get_seed", "normal", "uniform", "truncated_normal", "categorical", "shuffle",
           "stateless_normal", "stateless_uniform", "stateless_truncated_normal", "Generator"]


def set_seed(seed) -> None:
    """Set the global seed: the random ops that follow repeat their values on every run.

    ``None`` clears it (fresh numbers again).

    >>> import tapeflow as tf
    >>> tf.random.set_seed(7); x = tf.random.normal([2])
    >>> tf.random.set_seed(7); y = tf.random.normal([2])
    >>> x.numpy().tolist() == y.numpy().tolist()
    True
    """
    if seed is not None:
        seed = _r._seed_int(seed, "SetSeed")
    _r.STATE.set_seed(seed)


def get_seed(op_seed=None):
    """The (global seed, op seed) pair the next random op with ``op_seed`` would use.

    Returns ``(None, None)`` when neither is set.  Does not consume an op seed.

    >>> import tapeflow as tf
    >>> tf.random.set_seed(3)
    >>> tf.random.get_seed(5)
    (3, 5)
    """
    st = _r.STATE
    g = st.global_seed
    if g is None and op_seed is None:
        return None, None
    if g is None:
        g = _r.DEFAULT_GLOBAL_SEED
    return g, (st.op_counter if op_seed is None else int(op_seed))


class Generator:
    """A random generator with its own state: a Philox key and a call counter.

    Each draw uses the next stream of the key, so a generator made from a seed
    gives the same sequence of draws on every run and every backend, independent
    of the global seed.

    >>> import tapeflow as tf
    >>> g1 = tf.random.Generator.from_seed(1)
    >>> g2 = tf.random.Generator.from_seed(1)
    >>> g1.normal([3]).numpy().tolist() == g2.normal([3]).numpy().tolist()
    True
    >>> g1.uniform([2], maxval=10, dtype=tf.int64).dtype
    tf.int64
    """

    def __init__(self, key: int, counter: int = 0):
        self._key = int(key) & _r._M64
        self._counter = int(counter) & _r._M64

    @classmethod
    def from_seed(cls, seed) -> "Generator":
        """A generator whose draws depend only on ``seed``."""
        return cls(_r.splitmix64(_r._seed_int(seed, "Generator") & _r._M64))

    @classmethod
    def from_non_deterministic_state(cls) -> "Generator":
        """A generator seeded from the operating system's entropy."""
        return cls(int.from_bytes(os.urandom(8), "little"))

    @property
    def key(self) -> int:
        return self._key

    @property
    def counter(self) -> int:
        """How many draws this generator has made."""
        return self._counter

    def _next(self):
        c = self._counter
        self._counter = (c + 1) & _r._M64
        return self._key, c

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """Normal values (see :func:`tapeflow.random.normal`)."""
        key, stream = self._next()
        return _r.normal_from(shape, mean, stddev, dtype, key, stream, "StatefulStandardNormalV2")

    def uniform(self, shape, minval=0, maxval=None, dtype=_dt.float32, name=None):
        """Uniform values in [minval, maxval) (see :func:`tapeflow.random.uniform`)."""
        key, stream = self._next()
        return _r.uniform_from(shape, minval, maxval, dtype, key, stream, "StatefulUniform")

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """Normal values within two standard deviations of the mean."""
        key, stream = self._next()
        return _r.truncated_normal_from(shape, mean, stddev, dtype, key, stream, "StatefulTruncatedNormal")

    def split(self, count: int = 1) -> list:
        """``count`` new generators with independent keys derived from this one's next draws."""
        out = []
        for _ in range(int(count)):
            key, stream = self._next()
            out.append(Generator(_r.philox_key(key, stream)))
        return out

    def __repr__(self):
        return f"<tf.random.Generator key=0x{self._key:016x} counter={self._counter}>"
