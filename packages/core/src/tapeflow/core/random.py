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

import types as _types

import enum
import os
import threading

from . import dtypes as _dt
from .ops import random_ops as _r
from .ops.random_ops import categorical, random_shuffle as shuffle  # noqa: F401
from .ops.random_ops import random_normal as normal, random_uniform as uniform, truncated_normal  # noqa: F401
from .ops.random_ops import (stateless_random_normal as stateless_normal,  # noqa: F401
                             stateless_random_uniform as stateless_uniform, stateless_truncated_normal,
                             stateless_categorical)
from .ops.random_dist_ops import random_gamma as gamma, random_poisson as poisson  # noqa: F401
from .ops.random_dist_ops import (stateless_random_gamma as stateless_gamma,  # noqa: F401
                                  stateless_random_poisson as stateless_poisson,
                                  stateless_random_binomial as stateless_binomial)
from .ops import random_dist_ops as _rd
from .runner import current_graph

__all__ = ["set_seed", "get_seed", "normal", "uniform", "truncated_normal", "categorical", "shuffle",
           "stateless_normal", "stateless_uniform", "stateless_truncated_normal", "stateless_categorical",
           "gamma", "poisson", "stateless_gamma", "stateless_poisson", "stateless_binomial",
           "Generator", "get_global_generator", "set_global_generator", "experimental", "split", "fold_in",
           "Algorithm"]


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

    def __init__(self, key: int, counter: int = 0) -> None:
        self._key = int(key) & _r._M64
        self._counter = int(counter) & _r._M64
        self._lock = threading.Lock()

    @classmethod
    def from_seed(cls, seed, alg=None) -> "Generator":
        """A generator whose draws depend only on ``seed``."""
        _check_alg(alg)
        return cls(_r.splitmix64(_r._seed_int(seed, "Generator") & _r._M64))

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> "Generator":
        """A generator seeded from the operating system's entropy."""
        _check_alg(alg)
        return cls(int.from_bytes(os.urandom(8), "little"))

    @property
    def key(self) -> int:
        return self._key

    @property
    def counter(self) -> int:
        """How many draws this generator has made."""
        return self._counter

    @property
    def algorithm(self) -> int:
        """TensorFlow's code of the generator's algorithm: 1, Philox."""
        return RNG_ALG_PHILOX

    def _take(self):
        with self._lock:
            c = self._counter
            self._counter = (c + 1) & _r._M64
        return self._key, c

    def _next(self):
        """(key, stream) of the next draw: now, or, inside a graph being traced, each time the graph runs (so a
        compiled function draws fresh numbers per call and advances the generator as the eager code does)."""
        if current_graph() is not None:
            late = _GeneratorStream(self)
            return late, late
        return self._take()
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

    @classmethod
    def from_key_counter(cls, key, counter, alg=None) -> "Generator":
        """A generator at Philox ``key`` (an int) with ``counter`` draws made (an int; TensorFlow's list of counter
        words is read as its first word)."""
        _check_alg(alg)
        c = counter[0] if isinstance(counter, (list, tuple)) else counter
        return cls(_r._seed_int(key, "Generator", "key"), _r._seed_int(c, "Generator", "counter"))

    def uniform_full_int(self, shape, dtype=_dt.int64, name=None):
        """Integers uniform over the whole range of ``dtype`` (int32; int64 but for its largest value).

        >>> import tapeflow as tf
        >>> tf.random.Generator.from_seed(2).uniform_full_int([3], tf.int32).dtype
        tf.int32
        """
        dt = _dt.as_dtype(dtype)
        if dt not in (_dt.int32, _dt.int64):
            raise _r.InvalidArgumentError(f"dtype {dt.name}; allowed: int32, int64", "StatefulUniformFullInt")
        key, stream = self._next()
        lo, hi = (-2 ** 31, 2 ** 31) if dt is _dt.int32 else (-2 ** 63, 2 ** 63 - 1)
        return _r.uniform_from(shape, lo, hi, dt, key, stream, "StatefulUniformFullInt")

    def split(self, count: int = 1) -> list:
        """``count`` new generators with independent keys derived from this one's next draws."""
        out = []
        for _ in range(_r.int_arg(count, "Generator.split", "count")):
            key, stream = self._take()
            out.append(Generator(_r.philox_key(key, stream)))
        return out

    def make_seeds(self, count: int = 1):
        """A [2, count] int64 tensor of seeds for the stateless ops (``tf.random.stateless_*(seed=seeds[:, i])``),
        drawn from this generator (uniform over int64 but for its largest value).

        >>> import tapeflow as tf
        >>> g = tf.random.Generator.from_seed(5)
        >>> seeds = g.make_seeds(3)
        >>> seeds.shape, seeds.dtype
        (TensorShape([2, 3]), tf.int64)
        """
        n = _r.int_arg(count, "Generator.make_seeds", "count")
        if n < 0:
            raise _r.InvalidArgumentError(f"count = {n}; allowed: count >= 0", "Generator.make_seeds")
        key, stream = self._next()
        return _r.uniform_from([2, n], -2 ** 63, 2 ** 63 - 1, _dt.int64, key, stream, "StatefulUniformFullInt")

    def binomial(self, shape, counts, probs, dtype=_dt.int32, name=None):
        """Binomial(counts, probs) counts of shape ``shape`` (``counts`` and ``probs`` broadcast to it), as
        :func:`tapeflow.random.stateless_binomial` draws them.

        >>> import tapeflow as tf
        >>> g = tf.random.Generator.from_seed(3)
        >>> x = g.binomial([2, 3], counts=[5.0, 10.0, 20.0], probs=0.5)
        >>> x.shape, x.dtype, bool(tf.reduce_all(x <= [5, 10, 20]))
        (TensorShape([2, 3]), tf.int32, True)
        """
        key, stream = self._next()
        return _rd.binomial_from(shape, counts, probs, dtype, key, stream, "StatefulRandomBinomial")

    @property
    def state(self):
        """The generator's state as TensorFlow lays out Philox's: an int64 tensor ``[counter, 0, key]`` (a snapshot:
        change the state with :meth:`reset`, :meth:`reset_from_key_counter` or :meth:`skip`).

        >>> import tapeflow as tf
        >>> g = tf.random.Generator.from_key_counter(7, 2)
        >>> g.state.numpy().tolist()
        [2, 0, 7]
        """
        from .dispatch import to_tensor

        signed = [v - (1 << 64) if v >= 1 << 63 else v for v in (self._counter, 0, self._key)]
        return to_tensor(signed, "Generator.state", _dt.int64)

    @classmethod
    def from_state(cls, state, alg=None) -> "Generator":
        """A generator from a ``state`` as :attr:`state` gives it (``[counter, 0, key]``).

        >>> import tapeflow as tf
        >>> g = tf.random.Generator.from_seed(1); _ = g.normal([2])
        >>> h = tf.random.Generator.from_state(g.state)
        >>> h.normal([2]).numpy().tolist() == g.normal([2]).numpy().tolist()
        True
        """
        _check_alg(alg)
        c, k = _state_words(state)
        return cls(k, c)

    def reset(self, state) -> None:
        """Set the state to ``state`` (``[counter, 0, key]``, as :attr:`state` gives it)."""
        c, k = _state_words(state)
        with self._lock:
            self._key, self._counter = k & _r._M64, c & _r._M64

    def reset_from_seed(self, seed) -> None:
        """Set the state to the one :meth:`from_seed` makes from ``seed``."""
        g = Generator.from_seed(seed)
        with self._lock:
            self._key, self._counter = g._key, g._counter

    def reset_from_key_counter(self, key, counter) -> None:
        """Set the state to Philox ``key`` with ``counter`` draws made."""
        g = Generator.from_key_counter(key, counter)
        with self._lock:
            self._key, self._counter = g._key, g._counter

    def skip(self, delta) -> None:
        """Advance the generator by ``delta`` draws (as if ``delta`` draws were made).

        >>> import tapeflow as tf
        >>> g, h = tf.random.Generator.from_seed(2), tf.random.Generator.from_seed(2)
        >>> _ = g.normal([1]); h.skip(1)
        >>> g.normal([3]).numpy().tolist() == h.normal([3]).numpy().tolist()
        True
        """
        d = _r._seed_int(delta, "Generator.skip", "delta")
        with self._lock:
            self._counter = (self._counter + d) & _r._M64

    def __repr__(self):
        return f"<tf.random.Generator key=0x{self._key:016x} counter={self._counter}>"


def _state_words(state):
    """(counter, key) of a Philox state ``[counter, 0, key]`` (a list or an int tensor of shape [3])."""
    from .dispatch import static_value
    from .tensor import Tensor

    op = "Generator.from_state"
    if isinstance(state, Tensor) or hasattr(state, "_as_tensor"):
        state = static_value(state if isinstance(state, Tensor) else state._as_tensor(), op, "state").tolist()
    try:
        c, _, k = (int(v) for v in state)
    except (TypeError, ValueError):
        raise _r.InvalidArgumentError(f"state must be three ints [counter, 0, key] (Philox), got {state!r}",
                                      op) from None
    return c & _r._M64, k & _r._M64


RNG_ALG_PHILOX = 1   # TensorFlow's tf.random.Algorithm.PHILOX


class Algorithm(enum.Enum):
    """TensorFlow's random algorithms: tapeflow runs Philox 4x32-10 (AUTO_SELECT picks it); THREEFRY raises.

    >>> import tapeflow as tf
    >>> tf.random.Generator.from_seed(1, alg=tf.random.Algorithm.PHILOX).algorithm
    1
    """

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _check_alg(alg):
    v = alg.value if isinstance(alg, Algorithm) else alg
    if v is None or v in (RNG_ALG_PHILOX, 3) or (isinstance(v, str) and v.lower() in ("philox", "auto_select")):
        return
    raise _r.InvalidArgumentError(f"alg = {alg!r}; allowed: None, 'philox', 'auto_select', 1, 3 or tf.random.Algorithm"
                                  ".PHILOX/AUTO_SELECT (tapeflow's generators are Philox 4x32-10)", "Generator")


class _GeneratorStream:
    """A generator's draw in a graph being traced: the graph takes the generator's next (key, stream) each time
    it runs (``late_attrs``, as random_ops.LateStream does for the seeded ops)."""

    __slots__ = ("gen",)

    def __init__(self, gen) -> None:
        self.gen = gen

    def late_attrs(self) -> dict:
        key, stream = self.gen._take()
        return {"key": key, "stream": stream}

    def __repr__(self):
        return f"GeneratorStream({self.gen!r})"


_GLOBAL = []   # the global generator, made on first use


def get_global_generator() -> Generator:
    """The process-wide generator (from the operating system's entropy on first use, or what
    set_global_generator gave).

    >>> import tapeflow as tf
    >>> tf.random.get_global_generator() is tf.random.get_global_generator()
    True
    """
    if not _GLOBAL:
        _GLOBAL.append(Generator.from_non_deterministic_state())
    return _GLOBAL[0]


def set_global_generator(generator) -> None:
    """Make ``generator`` the global generator (what get_global_generator returns).

    >>> import tapeflow as tf
    >>> g = tf.random.Generator.from_seed(4)
    >>> tf.random.set_global_generator(g); tf.random.get_global_generator() is g
    True
    """
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator takes a tf.random.Generator, got {type(generator).__name__}")
    _GLOBAL[:] = [generator]


def _stateless_split(seed, num=2, alg=None):
    """``num`` new seed pairs ([num, 2] int64) derived from the stateless ``seed``, for stateless ops: the same
    seed gives the same pairs.

    >>> import tapeflow as tf
    >>> s = tf.random.experimental.stateless_split([1, 2], num=3)
    >>> s.shape, s.dtype, s.numpy().tolist() == tf.random.experimental.stateless_split([1, 2], 3).numpy().tolist()
    (TensorShape([3, 2]), tf.int64, True)
    """
    _check_alg(alg)
    n = _r.int_arg(num, "StatelessSplit", "num")
    if n < 0:
        raise _r.InvalidArgumentError(f"num = {n}; allowed: num >= 0", "StatelessSplit")
    return _r.stateless_random_uniform([n, 2], seed, -2 ** 63, 2 ** 63 - 1, _dt.int64)


def _stateless_fold_in(seed, data, alg=None):
    """A new stateless seed pair (shape [2], int64) from ``seed`` and the integer ``data``: different data give
    independent seeds (a per-step seed from one base seed, say).

    >>> import tapeflow as tf
    >>> a = tf.random.experimental.stateless_fold_in([1, 2], 7)
    >>> b = tf.random.experimental.stateless_fold_in([1, 2], 8)
    >>> a.shape, a.numpy().tolist() != b.numpy().tolist()
    (TensorShape([2]), True)
    """
    _check_alg(alg)
    key, stream = _r._seed_pair(seed, "StatelessFoldIn")
    d = _r._seed_int(data, "StatelessFoldIn", "data")
    return _r.stateless_random_uniform([2], [_r.philox_key(key, d), stream], -2 ** 63, 2 ** 63 - 1, _dt.int64)


experimental = _types.ModuleType("tapeflow.random.experimental", "tf.random.experimental: stateless_split, "
                                  "stateless_fold_in, Generator, get/set_global_generator (the names above).")
experimental.stateless_split = _stateless_split
experimental.stateless_fold_in = _stateless_fold_in
experimental.Generator = Generator
experimental.get_global_generator = get_global_generator
experimental.set_global_generator = set_global_generator
experimental.random_gamma_grad = _rd.random_gamma_grad


split = _stateless_split      # tf.random.split: TensorFlow 2's name of experimental.stateless_split
fold_in = _stateless_fold_in  # tf.random.fold_in
