"""Dataset: a lazy, re-iterable sequence of elements with TensorFlow's transformations.

A dataset is a small graph of Python objects; iterating one (``for x, y in ds:``) starts a fresh
epoch.  Each dataset either *produces elements* (``_iterator``) or, when its elements are rows
of in-memory tensors in some index order (``from_tensor_slices``, ``range``, ``zip`` of those,
and ``shuffle``, ``take``, ``skip``, ``shard``, ``repeat`` over them), describes itself as a
*random-access table plus a stream of row indices* (``_ra``).  ``batch`` over such a chain (with
any ``map`` in between) takes whole batches of indices and gathers each component with one
kernel call per batch; ``map`` functions built from element-wise ops then run once per batch
(see :mod:`tapeflow.data._vectorize`), others once per element on zero-copy row views.

Shuffling draws the index order from NumPy's ``Generator`` (PCG64) seeded from the shuffle's
seed (or ``tf.random``'s global seed) and the epoch number: an index order is bookkeeping, not
the math of an op, and the same seed gives the same order on any path through this module.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import threading
from itertools import islice

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError, OutOfRangeError
from tapeflow.core.tensor import Tensor, constant

from . import _batching as B
from . import _structure as S
from . import _threads, _vectorize
from ._structure import TensorSpec

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INT64_MAX = 2 ** 63 - 1
_CHUNK = 4096
_AUTOTUNE_PREFETCH = 4


# ---- options ------------------------------------------------------------------

class OptimizationOptions:
    """Optimization switches of a pipeline.

    ``map_vectorization`` (default True): run a ``map`` that feeds a ``batch`` once per batch when
    its function is provably element-wise (see :mod:`tapeflow.data._vectorize`).

    >>> from tapeflow.data import Options
    >>> Options().experimental_optimization.map_vectorization is None
    True
    """

    def __init__(self):
        self.map_vectorization = None

    def _merge(self, other):
        out = OptimizationOptions()
        out.map_vectorization = (other.map_vectorization if other.map_vectorization is not None
                                 else self.map_vectorization)
        return out


class Options:
    """Options of a pipeline, set with :meth:`Dataset.with_options` (later settings win).

    ``deterministic``: whether parallel ``map`` keeps input order when its own ``deterministic``
    is None (default True).

    >>> import tapeflow as tf
    >>> opts = tf.data.Options(); opts.deterministic = False
    >>> tf.data.Dataset.range(3).with_options(opts).options().deterministic
    False
    """

    def __init__(self):
        self.deterministic = None
        self.experimental_optimization = OptimizationOptions()

    def merge(self, other: Options) -> Options:
        """These options with ``other``'s set fields on top."""
        out = Options()
        out.deterministic = other.deterministic if other.deterministic is not None else self.deterministic
        out.experimental_optimization = self.experimental_optimization._merge(other.experimental_optimization)
        return out


class _Ctx:
    """What one iteration knows: the options of the dataset being iterated."""

    __slots__ = ("deterministic", "vectorize")

    def __init__(self, options: Options):
        mv = options.experimental_optimization.map_vectorization
        self.vectorize = True if mv is None else bool(mv)
        self.deterministic = True if options.deterministic is None else bool(options.deterministic)


# ---- random-access tables ---------------------------------------------------------

class _RA:
    """A table of rows plus a factory of index streams (one per epoch)."""

    __slots__ = ("identity", "stream", "table")

    def __init__(self, table, stream, identity=False):
        self.table, self.stream, self.identity = table, stream, identity


def _arange_chunks(n: int):
    i = 0
    while i < n:
        j = min(n, i + _CHUNK)
        yield np.arange(i, j, dtype=np.int64)
        i = j


class _SliceTable:
    """Rows of in-memory components (tensors, or object arrays for text)."""

    def __init__(self, structure, flat, n):
        self.structure, self.flat, self.n = structure, flat, n
        self.pack = S.packer(structure)

    def gather(self, idx):
        return self.pack([B.gather(c, idx) for c in self.flat])

    def rows(self, idx):
        pk = self.pack
        return [pk(col) for col in zip(*[B.rows_at(c, idx) for c in self.flat])]


class _RangeTable:
    def __init__(self, start, step, n, dtype):
        self.start, self.step, self.n, self.dtype = start, step, n, dtype

    def _values(self, idx):
        # the values of a source: start + i * step for the requested rows (host-side bookkeeping,
        # as tf.range builds its sequence)
        return constant((np.asarray(idx, np.int64) * self.step + self.start).astype(self.dtype.np))

    def gather(self, idx):
        return self._values(idx)

    def rows(self, idx):
        return B.rows(self._values(idx))


class _ZipTable:
    def __init__(self, structure, tables):
        self.tables = tables
        self.pack = S.packer(structure)
        self.n = min(t.n for t in tables)

    def gather(self, idx):
        return self.pack([t.gather(idx) for t in self.tables])

    def rows(self, idx):
        pk = self.pack
        return [pk(col) for col in zip(*[t.rows(idx) for t in self.tables])]


def _ra_elements(ra):
    table = ra.table
    for idx in ra.stream():
        yield from table.rows(idx)


def _rechunk(stream, size: int):
    """Index arrays of exactly ``size`` (the last may be shorter)."""
    pending, have = [], 0
    for chunk in stream:
        pos, n = 0, len(chunk)
        if not pending and n == size:
            yield chunk
            continue
        while pos < n:
            take = min(size - have, n - pos)
            pending.append(chunk[pos:pos + take])
            have += take
            pos += take
            if have == size:
                yield pending[0] if len(pending) == 1 else np.concatenate(pending)
                pending, have = [], 0
    if have:
        yield pending[0] if len(pending) == 1 else np.concatenate(pending)


def _interleave(in_it, open_fn, cycle_length: int, block_length: int):
    """TensorFlow's interleave order over iterators: a cycle of ``cycle_length`` open iterators,
    ``block_length`` items from each in turn; an exhausted slot is refilled from the next input when
    the cycle reaches it."""
    L, block = cycle_length, block_length
    cycle = [None] * L
    nopen, ci, bi, end = 0, 0, 0, False
    try:
        while not end or nopen:
            cur = cycle[ci]
            if cur is not None:
                try:
                    e = next(cur)
                except StopIteration:
                    cycle[ci] = None
                    nopen -= 1
                    ci, bi = (ci + 1) % L, 0
                    continue
                bi += 1
                if bi == block:
                    ci, bi = (ci + 1) % L, 0
                yield e
            elif not end:
                try:
                    x = next(in_it)
                except StopIteration:
                    end = True
                    continue
                cycle[ci] = open_fn(x)
                nopen += 1
            else:
                ci, bi = (ci + 1) % L, 0
    finally:
        for c in cycle:
            if c is not None:
                _close(c)
        _close(in_it)


def _close(it):
    close = getattr(it, "close", None)
    if close is not None:
        close()


# ---- seeds ------------------------------------------------------------------------

def _seed_key(seed) -> tuple:
    """A NumPy seed sequence for a shuffle from its seed and tf.random's global seed, as TF derives one:
    with neither set the order is fresh on every run; with the global seed only, each shuffle made
    after ``tf.random.set_seed`` takes the next op seed, so the whole program repeats."""
    from tapeflow.core import random as _random

    g, s = _random.get_seed(None if seed is None else int(seed))
    if g is None:
        return (secrets.randbits(63),)
    if seed is None:
        _random.uniform([0])  # consume that op seed, as any random op would (TF's get_seed does too)
    return (int(g) & _INT64_MAX, int(s) & _INT64_MAX)


def _shuffled(it, size: int, rng):
    """TensorFlow's shuffle buffer: fill ``size`` items, then repeatedly emit a uniformly chosen
    buffered item and put the next input in its place; at the end emit the rest in random order."""
    buf = list(islice(it, size))
    js, k = [], 0
    for v in it:
        if k == len(js):
            js, k = rng.integers(0, size, 1024).tolist(), 0
        j = js[k]
        k += 1
        out = buf[j]
        buf[j] = v
        yield out
    for j in rng.permutation(len(buf)).tolist():
        yield buf[j]


def _shuffled_indices(stream, size: int, rng):
    """:func:`_shuffled` over index chunks, vectorized per chunk; the same order for the same rng.

    In the steady state step ``t`` draws slot ``j[t]``, emits what the slot holds and stores input
    ``v[t]`` there, so the output is ``v[s]`` for the latest earlier step ``s`` with ``j[s] == j[t]``,
    or the slot's content before the chunk when there is none.
    """
    buf = np.empty(0, np.int64)
    pending = np.empty(0, np.int64)  # slot draws left over from the last block of 1024
    for chunk in stream:
        if len(buf) < size:  # filling
            take = size - len(buf)
            buf = np.concatenate([buf, chunk[:take]])
            chunk = chunk[take:]
        m = len(chunk)
        if not m:
            continue
        while len(pending) < m:
            pending = np.concatenate([pending, rng.integers(0, size, 1024)])
        js, pending = pending[:m], pending[m:]
        order = np.argsort(js, kind="stable")
        sj = js[order]
        same = np.empty(m, bool)
        same[0] = False
        same[1:] = sj[1:] == sj[:-1]
        prev = np.empty(m, np.int64)
        prev[order] = np.where(same, np.concatenate([[-1], order[:-1]]), -1)
        yield np.where(prev >= 0, chunk[np.maximum(prev, 0)], buf[js])
        last = np.empty(m, bool)
        last[-1] = True
        last[:-1] = sj[1:] != sj[:-1]
        buf = buf.copy()
        buf[sj[last]] = chunk[order[last]]
    if len(buf):
        yield buf[rng.permutation(len(buf))]


# ---- helpers ----------------------------------------------------------------------

def _caller(fn, op):
    """Call ``fn`` on an element, unpacking a plain tuple into arguments, as tf.data does."""
    if not callable(fn):
        raise InvalidArgumentError(f"expected a function, got {type(fn).__name__} {fn!r:.60}", op)

    def call(e):
        return fn(*e) if type(e) is tuple else fn(e)

    return call


def _count(value, what, op, minimum=None, allow_autotune=False):
    if isinstance(value, Tensor):
        value = value.numpy().item()
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgumentError(f"{what} must be an integer, got {type(value).__name__} {value!r:.40}", op)
    value = int(value)
    if allow_autotune and value == AUTOTUNE:
        return value
    if minimum is not None and value < minimum:
        allowed = f">= {minimum}" + (" or tf.data.AUTOTUNE (-1)" if allow_autotune else "")
        raise InvalidArgumentError(f"{what} = {value} is not allowed; allowed: {allowed}", op)
    return value


def _to_bool(r, op):
    if isinstance(r, (bool, np.bool_)):
        return bool(r)
    if isinstance(r, Tensor) and r._dtype is _dt.bool_ and not r._shape:
        return bool(r)
    desc = (f"a tensor of shape {tuple(r.shape)} and dtype {r.dtype.name}" if isinstance(r, Tensor)
            else f"{type(r).__name__} {r!r:.40}")
    raise InvalidArgumentError(f"the predicate must return a scalar bool tensor (or a Python bool), got {desc}", op)


def _fmt_shape(s):
    return "<unknown>" if s.shape is None else str(s.shape)


# ---- Dataset ----------------------------------------------------------------------

class Dataset:
    """A sequence of elements with TensorFlow's ``tf.data`` transformations, iterated eagerly.

    Elements are tensors or (nested) tuples and dicts of tensors.  Iterating the dataset again
    starts a new epoch (reshuffled when it holds a ``shuffle``).

    >>> import tapeflow as tf
    >>> ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3, 4, 5], [0, 1, 0, 1, 0]))
    >>> ds = ds.map(lambda x, y: (x * 10, y)).batch(2)
    >>> for x, y in ds:
    ...     print(x.numpy().tolist(), y.numpy().tolist())
    [10, 20] [0, 1]
    [30, 40] [0, 1]
    [50] [0]
    """

    _inputs: tuple = ()
    _own_options = None
    _spec_cache = None

    # -- what subclasses provide ----------------------------------------------------
    def _ra(self):
        """A random-access description (:class:`_RA`), or None."""
        return

    def _iterator(self, ctx):
        ra = self._ra()
        return _ra_elements(ra)

    def _compute_spec(self):  # pragma: no cover - every dataset defines it
        raise NotImplementedError

    def _card(self) -> int:
        return UNKNOWN_CARDINALITY

    # -- iteration ------------------------------------------------------------------
    def __iter__(self):
        return Iterator(self)

    def as_numpy_iterator(self):
        """Iterate with NumPy values (text as ``bytes``).

        >>> import tapeflow as tf
        >>> list(tf.data.Dataset.range(3).as_numpy_iterator())
        [np.int64(0), np.int64(1), np.int64(2)]
        """
        it = Iterator(self)

        def gen():
            try:
                for e in it:
                    yield _to_numpy(e)
            finally:
                it.close()

        return gen()

    @property
    def element_spec(self):
        """The structure of :class:`TensorSpec` of one element.

        >>> import tapeflow as tf
        >>> tf.data.Dataset.from_tensor_slices(tf.zeros([4, 3])).batch(2).element_spec
        TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
        """
        spec = self._spec_cache
        if spec is None:
            spec = self._spec_cache = self._compute_spec()
        return spec

    def cardinality(self):
        """The number of elements as an int64 scalar; -1 when infinite, -2 when unknown.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(10)
        >>> int(ds.cardinality()), int(ds.repeat().cardinality()), int(ds.filter(lambda x: x > 3).cardinality())
        (10, -1, -2)
        """
        return constant(np.int64(self._card()))

    def __len__(self):
        n = self._card()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - a repr must not fail; the spec error shows on use
            return f"<{self._repr_name()} shapes: <unknown>, types: <unknown>>"
        shapes = S.format_structure(spec, _fmt_shape)
        types = S.format_structure(spec, lambda s: repr(s.dtype))
        return f"<{self._repr_name()} shapes: {shapes}, types: {types}>"

    def _repr_name(self):
        return type(self).__name__

    # -- options ------------------------------------------------------------------------
    def options(self) -> Options:
        """The options of this pipeline (its inputs' merged, then its own).

        >>> import tapeflow as tf
        >>> tf.data.Dataset.range(2).options().deterministic is None
        True
        """
        opts = Options()
        for d in self._inputs:
            opts = opts.merge(d.options())
        if self._own_options is not None:
            opts = opts.merge(self._own_options)
        return opts

    def with_options(self, options: Options) -> Dataset:
        """This dataset with ``options`` applied to the whole pipeline.

        >>> import tapeflow as tf
        >>> o = tf.data.Options(); o.experimental_optimization.map_vectorization = False
        >>> ds = tf.data.Dataset.range(4).map(lambda x: x * 2).batch(2).with_options(o)
        >>> [b.numpy().tolist() for b in ds]
        [[0, 2], [4, 6]]
        """
        if not isinstance(options, Options):
            raise InvalidArgumentError(f"options must be a tf.data.Options, got {type(options).__name__}",
                                       "OptionsDataset")
        return _OptionsDataset(self, options)

    # -- sources ----------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None) -> Dataset:
        """One element per row (first-axis slice) of ``tensors``: a tensor, array, list, or a (nested)
        tuple or dict of them, all with the same first dimension.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.from_tensor_slices({"x": [[1, 2], [3, 4]], "y": [0, 1]})
        >>> [(e["x"].numpy().tolist(), int(e["y"])) for e in ds]
        [([1, 2], 0), ([3, 4], 1)]
        """
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors, name=None) -> Dataset:
        """A dataset of exactly one element, ``tensors``.

        >>> import tapeflow as tf
        >>> [t.numpy().tolist() for t in tf.data.Dataset.from_tensors([1, 2, 3])]
        [[1, 2, 3]]
        """
        return TensorDataset(tensors)

    @staticmethod
    def range(*args, output_type=_dt.int64, dtype=None, name=None) -> Dataset:
        """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)`` as int64 scalars
        (or ``output_type``; ``dtype`` is accepted as its alias).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(1, 10, 3)]
        [1, 4, 7]
        """
        return RangeDataset(*args, dtype=output_type if dtype is None else dtype)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None) -> Dataset:
        """Elements from calling ``generator(*args)`` each epoch, checked against ``output_signature``.

        >>> import tapeflow as tf
        >>> def gen():
        ...     for i in range(3):
        ...         yield i, [1.0] * i
        >>> sig = (tf.data.TensorSpec([], tf.int32), tf.data.TensorSpec([None], tf.float32))
        >>> [(int(i), v.numpy().tolist()) for i, v in tf.data.Dataset.from_generator(gen, output_signature=sig)]
        [(0, []), (1, [1.0]), (2, [1.0, 1.0])]
        """
        return GeneratorDataset(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def zip(*args, datasets=None, name=None) -> Dataset:
        """Elements of several datasets side by side, as a (nested) tuple or dict; stops at the shortest.

        >>> import tapeflow as tf
        >>> a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)
        >>> [(int(x), int(y)) for x, y in tf.data.Dataset.zip(a, b)]
        [(0, 10), (1, 11)]
        """
        if datasets is not None:
            if args:
                raise InvalidArgumentError("give the datasets either positionally or as datasets=, not both",
                                           "ZipDataset")
            structure = datasets
        elif len(args) == 1:
            structure = args[0]
        else:
            structure = tuple(args)
        return ZipDataset(structure)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None) -> Dataset:
        """The file names matching a glob pattern (or a list of patterns), shuffled unless ``shuffle=False``.

        >>> import tapeflow as tf, tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> for n in ("b.txt", "a.txt"): _ = (d / n).write_text("x")
        >>> [pathlib.Path(f.decode()).name for f in tf.data.Dataset.list_files(str(d / "*.txt"), shuffle=False)]
        ['a.txt', 'b.txt']
        """
        from .readers import _list_files

        return _list_files(file_pattern, shuffle, seed)

    # -- transformations -----------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None) -> Dataset:
        """``map_func`` applied to each element (a tuple element is passed as separate arguments).

        ``num_parallel_calls`` (an int or ``tf.data.AUTOTUNE``) runs it on that many background
        threads; ``deterministic=False`` lets results come in completion order.

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(4).map(lambda x: x * x, num_parallel_calls=tf.data.AUTOTUNE)]
        [0, 1, 4, 9]
        """
        return MapDataset(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate, name=None) -> Dataset:
        """The elements for which ``predicate`` returns True (a scalar bool tensor or Python bool).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(6).filter(lambda x: x % 2 == 0)]
        [0, 2, 4]
        """
        return FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None,
              name=None) -> Dataset:
        """Consecutive elements stacked into batches of ``batch_size`` (the last may be smaller).

        ``num_parallel_calls`` and ``deterministic`` are accepted as in TensorFlow; a batch is
        already one kernel call per component.

        >>> import tapeflow as tf
        >>> [b.numpy().tolist() for b in tf.data.Dataset.range(5).batch(2)]
        [[0, 1], [2, 3], [4]]
        >>> [b.numpy().tolist() for b in tf.data.Dataset.range(5).batch(2, drop_remainder=True)]
        [[0, 1], [2, 3]]
        """
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False,
                     name=None) -> Dataset:
        """Batches whose components are padded (after their values) to a common shape.

        Dimensions given as None or -1 in ``padded_shapes`` (all of them by default) pad to the
        largest in the batch; ``padding_values`` defaults to 0 (``b""`` for text).

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n))
        >>> [b.numpy().tolist() for b in ds.padded_batch(2, padding_values=tf.constant(-1, tf.int64))]
        [[[1, -1], [2, 2]], [[3, 3, 3]]]
        """
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name=None) -> Dataset:
        """Split each element along its first axis into separate elements.

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(5).batch(2).unbatch()]
        [0, 1, 2, 3, 4]
        """
        return UnbatchDataset(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None) -> Dataset:
        """Elements in random order through a buffer of ``buffer_size`` (uniform when it holds them all).

        Each iteration reshuffles unless ``reshuffle_each_iteration=False``; a ``seed`` (or
        ``tf.random.set_seed``) makes the sequence of orders repeat from run to run.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(5).shuffle(5, seed=1)
        >>> sorted(int(x) for x in ds)
        [0, 1, 2, 3, 4]
        """
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None) -> Dataset:
        """The elements ``count`` times (forever when None or -1).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(2).repeat(3)]
        [0, 1, 0, 1, 0, 1]
        """
        return RepeatDataset(self, count)

    def take(self, count, name=None) -> Dataset:
        """The first ``count`` elements (all of them when -1).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(10).take(3)]
        [0, 1, 2]
        """
        return TakeDataset(self, count)

    def skip(self, count, name=None) -> Dataset:
        """All but the first ``count`` elements (none when -1).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(5).skip(3)]
        [3, 4]
        """
        return SkipDataset(self, count)

    def shard(self, num_shards, index, name=None) -> Dataset:
        """Every ``num_shards``-th element starting at ``index``.

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(10).shard(3, 1)]
        [1, 4, 7]
        """
        return ShardDataset(self, num_shards, index)

    def prefetch(self, buffer_size, name=None) -> Dataset:
        """Produce up to ``buffer_size`` elements ahead on a background thread (AUTOTUNE picks).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(3).prefetch(tf.data.AUTOTUNE)]
        [0, 1, 2]
        """
        return PrefetchDataset(self, buffer_size)

    def cache(self, filename="", name=None) -> Dataset:
        """Keep the elements of the first complete iteration in memory (or in ``filename``) and replay them.

        >>> import tapeflow as tf
        >>> calls = []
        >>> ds = tf.data.Dataset.range(3).map(lambda x: calls.append(1) or x).cache()
        >>> _ = list(ds); _ = list(ds); len(calls)
        3
        """
        return CacheDataset(self, filename)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None) -> Dataset:
        """Datasets made by ``map_func`` from input elements, read ``cycle_length`` at a time,
        ``block_length`` elements from each in turn.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(1, 4).interleave(
        ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length=2, block_length=2)
        >>> [int(x) for x in ds]
        [1, 1, 2, 2, 1, 2, 3, 3, 3]
        """
        return InterleaveDataset(self, map_func, cycle_length, block_length, num_parallel_calls, deterministic)

    def flat_map(self, map_func, name=None) -> Dataset:
        """The elements of the datasets ``map_func`` makes from each element, one after another.

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(3).flat_map(lambda x: tf.data.Dataset.range(x))]
        [0, 0, 1]
        """
        return InterleaveDataset(self, map_func, 1, 1, None, None, repr_name="FlatMapDataset")

    def enumerate(self, start=0, name=None) -> Dataset:
        """Pairs ``(i, element)`` with an int64 counter from ``start``.

        >>> import tapeflow as tf
        >>> [(int(i), int(x)) for i, x in tf.data.Dataset.range(5, 7).enumerate()]
        [(0, 5), (1, 6)]
        """
        start = _count(start, "start", "EnumerateDataset")
        return ZipDataset((RangeDataset(start, _INT64_MAX), self))

    def concatenate(self, dataset, name=None) -> Dataset:
        """This dataset's elements followed by ``dataset``'s (same structure and dtypes).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(2).concatenate(tf.data.Dataset.range(5, 7))]
        [0, 1, 5, 6]
        """
        return ConcatenateDataset(self, dataset)

    def reduce(self, initial_state, reduce_func, name=None):
        """Fold the elements: ``state = reduce_func(state, element)``, starting at ``initial_state``.

        >>> import tapeflow as tf
        >>> int(tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x))
        10
        """
        state = S.normalize(S.to_components(initial_state, "ReduceDataset"), "ReduceDataset")
        if not callable(reduce_func):
            raise InvalidArgumentError(f"reduce_func must be callable, got {type(reduce_func).__name__}",
                                       "ReduceDataset")
        specs = S.flatten(S.spec_of(state))
        for e in self:
            new = S.normalize(reduce_func(state, e), "ReduceDataset")
            if not S.same_structure(new, state):
                raise InvalidArgumentError(f"reduce_func returned a state nested as {S.describe(new)}; the initial "
                                           f"state is nested as {S.describe(state)}", "ReduceDataset")
            for a, b in zip(specs, S.flatten(new)):
                bd = S.TensorSpec.from_value(b).dtype
                if bd != a.dtype:
                    raise InvalidArgumentError(f"reduce_func returned a state component of dtype {bd.name} where "
                                               f"the initial state has {a.dtype.name}", "ReduceDataset")
            state = new
        return state

    def apply(self, transformation_func) -> Dataset:
        """``transformation_func(self)``, which must return a Dataset (for chaining custom steps).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(6).apply(lambda ds: ds.filter(lambda x: x < 2))]
        [0, 1]
        """
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise InvalidArgumentError(f"the transformation returned {type(out).__name__}, not a Dataset",
                                       "ApplyDataset")
        return out


def _to_numpy(e):
    t = type(e)
    if t is Tensor:
        return e.numpy()
    if isinstance(e, (tuple, dict)):
        return S.map_structure(_to_numpy, e)
    return e


class Iterator:
    """An iterator over one epoch of a dataset (what ``iter(ds)`` returns).

    >>> import tapeflow as tf
    >>> it = iter(tf.data.Dataset.range(2))
    >>> int(next(it)), int(it.get_next())
    (0, 1)
    """

    def __init__(self, dataset: Dataset):
        self._dataset = dataset
        self._it = dataset._iterator(_Ctx(dataset.options()))

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def get_next(self):
        """The next element; ``tf.errors.OutOfRangeError`` at the end."""
        try:
            return next(self._it)
        except StopIteration:
            raise OutOfRangeError("End of sequence", "IteratorGetNext") from None

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def close(self):
        """Stop this iteration now (its background threads too)."""
        it, self._it = self._it, iter(())
        _close(it)

    def __del__(self):
        with contextlib.suppress(Exception):  # nothing to report at collection time
            self.close()


# ---- sources ----------------------------------------------------------------------

class TensorSliceDataset(Dataset):
    """What ``Dataset.from_tensor_slices`` returns: the rows of in-memory components."""

    def __init__(self, tensors):
        op = "TensorSliceDataset"
        structure = S.to_components(tensors, op)
        flat = S.flatten(structure)
        if not flat:
            raise InvalidArgumentError("from_tensor_slices needs at least one component, got an empty structure", op)
        dims = []
        for i, c in enumerate(flat):
            shape = B.leaf_shape(c)
            if not shape:
                raise InvalidArgumentError(f"component {i} is a scalar (shape ()); slicing needs rank >= 1", op)
            dims.append(shape[0])
        if len(set(dims)) > 1:
            raise InvalidArgumentError(
                "all components must have the same size in their first dimension; got "
                + ", ".join(f"{d} (component {i}, shape {tuple(B.leaf_shape(c))})" for i, (d, c) in
                            enumerate(zip(dims, flat))), op)
        self._structure, self._flat, self._n = structure, flat, dims[0]
        self._table = _SliceTable(structure, flat, dims[0])

    def _ra(self):
        n = self._n
        return _RA(self._table, lambda: _arange_chunks(n), identity=True)

    def _compute_spec(self):
        return S.pack(self._structure, [TensorSpec(B.leaf_shape(c)[1:], _leaf_dtype(c)) for c in self._flat])

    def _card(self):
        return self._n


def _leaf_dtype(c):
    return c.dtype if isinstance(c, Tensor) else S.string


class TensorDataset(Dataset):
    """What ``Dataset.from_tensors`` returns: one element."""

    def __init__(self, tensors):
        self._element = S.to_components(tensors, "TensorDataset")

    def _iterator(self, ctx):
        yield self._element

    def _compute_spec(self):
        return S.spec_of(self._element)

    def _card(self):
        return 1


class RangeDataset(Dataset):
    """What ``Dataset.range`` returns: int64 (or ``dtype``) scalars."""

    def __init__(self, *args, dtype=_dt.int64):
        op = "RangeDataset"
        if not 1 <= len(args) <= 3:
            raise InvalidArgumentError(f"range takes 1 to 3 arguments (stop; start, stop; start, stop, step), "
                                       f"got {len(args)}", op)
        vals = [_count(a, what, op) for a, what in zip(args, ("start", "stop", "step") if len(args) > 1 else ("stop",))]
        start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals + [1])[:3]
        if step == 0:
            raise InvalidArgumentError("step must be a non-zero integer, got 0", op)
        self._dtype = _dt.as_dtype(dtype)
        self._start, self._step = start, step
        self._n = len(range(start, stop, step))

    def _ra(self):
        n = self._n
        return _RA(_RangeTable(self._start, self._step, n, self._dtype), lambda: _arange_chunks(n), identity=True)

    def _compute_spec(self):
        return TensorSpec((), self._dtype)

    def _card(self):
        return self._n


class GeneratorDataset(Dataset):
    """What ``Dataset.from_generator`` returns: a Python generator's values, checked."""

    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        op = "FromGenerator"
        if not callable(generator):
            raise InvalidArgumentError(f"generator must be a callable returning an iterator, got "
                                       f"{type(generator).__name__}", op)
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise InvalidArgumentError("give output_signature or output_types/output_shapes, not both", op)
            for s in S.flatten(output_signature):
                if not isinstance(s, TensorSpec):
                    raise InvalidArgumentError(f"output_signature must be a structure of tf.data.TensorSpec, found "
                                               f"{type(s).__name__}", op)
            spec = output_signature
        elif output_types is not None:
            if output_shapes is None:
                spec = S.map_structure(lambda t: TensorSpec(None, t), _tuplify(output_types))
            else:
                types, shapes = _tuplify(output_types), output_shapes
                flat_t = S.flatten(types)
                flat_s = _flatten_up_to(types, shapes, op)
                spec = S.pack(types, [TensorSpec(s, t) for t, s in zip(flat_t, flat_s)])
        else:
            raise InvalidArgumentError("from_generator needs output_signature (or output_types)", op)
        self._gen, self._args, self._spec_cache = generator, tuple(args) if args is not None else (), spec
        self._flat_spec = S.flatten(spec)

    def _iterator(self, ctx):
        g = iter(self._gen(*self._args))
        try:
            for k, v in enumerate(g):
                yield self._convert(v)
        finally:
            _close(g)

    def _convert(self, v):
        op = "FromGenerator"
        spec = self._spec_cache
        v = _like(spec, v)
        if not S.same_structure(v, spec):
            raise InvalidArgumentError(f"`generator` yielded an element that did not match the expected structure. "
                                       f"The expected structure was {S.describe(spec)}, but the yielded element "
                                       f"was {v!r:.80}", op)
        out = []
        for s, x in zip(self._flat_spec, S.flatten(v)):
            if s.dtype is S.string:
                t = S.to_text(x)
            elif type(x) is Tensor and x._dtype is s.dtype:
                t = x
            else:
                try:
                    t = constant(x, dtype=s.dtype)
                except InvalidArgumentError as e:
                    raise InvalidArgumentError(f"`generator` yielded an element that could not be converted to the "
                                               f"expected type {s.dtype.name}: {e.message}", op) from None
                except (TypeError, ValueError) as e:
                    raise InvalidArgumentError(f"`generator` yielded an element that could not be converted to the "
                                               f"expected type {s.dtype.name}: {e}", op) from None
            shape = B.leaf_shape(t)
            if not S.shapes_compatible(s.shape, shape):
                raise InvalidArgumentError(f"`generator` yielded an element of shape {tuple(shape)} where an element "
                                           f"of shape {_fmt_shape(s)} was expected", op)
            out.append(t)
        return S.pack(spec, out)

    def _compute_spec(self):
        return self._spec_cache


def _like(spec, v):
    """``v`` with lists where ``spec`` has tuples read as tuples (a generator may yield lists)."""
    if isinstance(spec, tuple) and type(v) in (list, tuple) and len(v) == len(spec):
        vals = [_like(s, x) for s, x in zip(spec, v)]
        return type(spec)(*vals) if hasattr(type(spec), "_fields") else tuple(vals)
    if isinstance(spec, dict) and isinstance(v, dict) and set(v) == set(spec):
        return type(v)((k, _like(spec[k], x)) for k, x in v.items())
    return v


def _tuplify(v):
    if type(v) is list:
        return tuple(_tuplify(x) for x in v)
    if type(v) is tuple:
        return tuple(_tuplify(x) for x in v)
    return v


def _flatten_up_to(types, shapes, op):
    if isinstance(types, tuple):
        if not isinstance(shapes, (tuple, list)) or len(shapes) != len(types):
            raise InvalidArgumentError(f"output_shapes {shapes!r} does not match the nesting of output_types", op)
        return [s for t, sh in zip(types, shapes) for s in _flatten_up_to(t, sh, op)]
    if isinstance(types, dict):
        if not isinstance(shapes, dict) or set(shapes) != set(types):
            raise InvalidArgumentError(f"output_shapes {shapes!r} does not match the nesting of output_types", op)
        return [s for k in sorted(types) for s in _flatten_up_to(types[k], shapes[k], op)]
    return [shapes]


class ZipDataset(Dataset):
    """What ``Dataset.zip`` (and ``enumerate``) returns."""

    def __init__(self, structure):
        flat = S.flatten(structure)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise InvalidArgumentError("The argument to `Dataset.zip()` must be a (nested) structure of `Dataset` "
                                       f"objects, got {structure!r:.80}", "ZipDataset")
        self._structure, self._inputs = structure, tuple(flat)
        self._pack = S.packer(structure)

    def _ra(self):
        ras = [d._ra() for d in self._inputs]
        if not all(r is not None and r.identity for r in ras):
            return None
        table = _ZipTable(self._structure, [r.table for r in ras])
        n = table.n
        return _RA(table, lambda: _arange_chunks(n), identity=True)

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            yield from _ra_elements(ra)
            return
        its = [d._iterator(ctx) for d in self._inputs]
        pk = self._pack
        try:
            while True:
                try:
                    vals = [next(it) for it in its]
                except StopIteration:
                    return
                yield pk(vals)
        finally:
            for it in its:
                _close(it)

    def _compute_spec(self):
        return S.pack(self._structure, [d.element_spec for d in self._inputs])

    def _card(self):
        cards = [d._card() for d in self._inputs]
        if UNKNOWN_CARDINALITY in cards:
            return UNKNOWN_CARDINALITY
        known = [c for c in cards if c >= 0]
        return min(known) if known else INFINITE_CARDINALITY


class ConcatenateDataset(Dataset):
    """What ``Dataset.concatenate`` returns."""

    def __init__(self, first, second):
        op = "ConcatenateDataset"
        if not isinstance(second, Dataset):
            raise InvalidArgumentError(f"concatenate needs a Dataset, got {type(second).__name__}", op)
        a, b = first.element_spec, second.element_spec
        if not S.same_structure(a, b):
            raise InvalidArgumentError(f"Incompatible dataset elements: nested as {S.describe(a)} vs. "
                                       f"{S.describe(b)}", op)
        for x, y in zip(S.flatten(a), S.flatten(b)):
            if x.dtype != y.dtype:
                raise InvalidArgumentError(f"Incompatible dataset elements: dtype {x.dtype.name} vs. {y.dtype.name}",
                                           op)
        self._inputs = (first, second)

    def _iterator(self, ctx):
        for d in self._inputs:
            it = d._iterator(ctx)
            try:
                yield from it
            finally:
                _close(it)

    def _compute_spec(self):
        a, b = (d.element_spec for d in self._inputs)
        return S.map_structure(lambda x, y: x.most_specific_compatible(y), a, b)

    def _card(self):
        a, b = (d._card() for d in self._inputs)
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in (a, b):
            return UNKNOWN_CARDINALITY
        return a + b


# ---- unary transformations ------------------------------------------------------------

class _Unary(Dataset):
    def __init__(self, input_dataset):
        self._input = input_dataset
        self._inputs = (input_dataset,)

    def _compute_spec(self):
        return self._input.element_spec

    def _card(self):
        return self._input._card()


class _OptionsDataset(_Unary):
    def __init__(self, input_dataset, options):
        super().__init__(input_dataset)
        self._own_options = options

    def _ra(self):
        return self._input._ra()

    def _iterator(self, ctx):
        return self._input._iterator(ctx)

    def _repr_name(self):
        return "OptionsDataset"


class MapDataset(_Unary):
    """What ``Dataset.map`` returns (``ParallelMapDataset`` in its repr when parallel)."""

    def __init__(self, input_dataset, map_func, num_parallel_calls=None, deterministic=None):
        super().__init__(input_dataset)
        op = "MapDataset"
        self._fn = map_func
        self._call = _caller(map_func, op)
        if num_parallel_calls is not None:
            num_parallel_calls = _count(num_parallel_calls, "num_parallel_calls", "ParallelMapDataset", 1,
                                        allow_autotune=True)
        self._parallel = num_parallel_calls
        self._deterministic = deterministic
        self._vec = None  # map vectorization: None undecided, True/False decided (see _vectorize)

    def _repr_name(self):
        return "ParallelMapDataset" if self._parallel is not None else "MapDataset"

    def _iterator(self, ctx):
        call, norm = self._call, S.normalize
        it = self._input._iterator(ctx)
        n = self._parallel
        if n is not None and (n == AUTOTUNE or n > 1):
            n = (os.cpu_count() or 1) if n == AUTOTUNE else n
            det = ctx.deterministic if self._deterministic is None else bool(self._deterministic)
            pm = _threads.ParallelMap(it, lambda e: norm(call(e)), n, det)
            try:
                yield from pm
            finally:
                pm.close()
            return
        try:
            for e in it:
                yield norm(call(e))
        finally:
            _close(it)

    def _compute_spec(self):
        in_spec = self._input.element_spec
        call = self._call
        # two placeholder elements (ones with unknown sizes 1, twos with sizes 2): dimensions that
        # differ between the two results depend on sizes or values and become None
        try:
            out1 = S.spec_of(S.normalize(call(S.dummy(in_spec, 1, 1))))
            out2 = S.spec_of(S.normalize(call(S.dummy(in_spec, 2, 2))))
        except Exception:  # noqa: BLE001 - the function rejects placeholder values: use a real element
            out1 = out2 = None
        if out1 is not None and S.same_structure(out1, out2):
            return S.map_structure(lambda a, b: a.most_specific_compatible(b), out1, out2)
        return _spec_from_first(self)


def _spec_from_first(ds):
    it = Iterator(ds)
    try:
        try:
            first = next(it)
        except StopIteration:
            raise InvalidArgumentError("cannot infer the element_spec: the function rejects placeholder inputs and "
                                       "the dataset is empty", "MapDataset") from None
    finally:
        it.close()
    return S.spec_of(first)


class FilterDataset(_Unary):
    """What ``Dataset.filter`` returns."""

    def __init__(self, input_dataset, predicate):
        super().__init__(input_dataset)
        self._call = _caller(predicate, "FilterDataset")

    def _iterator(self, ctx):
        call = self._call
        it = self._input._iterator(ctx)
        try:
            for e in it:
                if _to_bool(call(e), "FilterDataset"):
                    yield e
        finally:
            _close(it)

    def _card(self):
        return UNKNOWN_CARDINALITY


def _peel_maps(ds):
    """(maps in application order, the dataset under them) for ``batch``'s fast path."""
    maps = []
    while True:
        if type(ds) is MapDataset:
            maps.append(ds)
        elif type(ds) is not _OptionsDataset:
            break
        ds = ds._input
    maps.reverse()
    return maps, ds


class BatchDataset(_Unary):
    """What ``Dataset.batch`` returns; over in-memory slices it gathers whole batches."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        super().__init__(input_dataset)
        self._bs = _count(batch_size, "batch_size", "BatchDataset", 1)
        self._drop = bool(drop_remainder)

    def _iterator(self, ctx):
        maps, base = _peel_maps(self._input)
        ra = base._ra()
        if ra is not None:
            return self._gathered(ra, maps, ctx)
        return self._stacked(ctx)

    def _stacked(self, ctx):
        it = self._input._iterator(ctx)
        bs, drop = self._bs, self._drop
        try:
            while True:
                elems = list(islice(it, bs))
                if not elems or (drop and len(elems) < bs):
                    return
                yield _vectorize.stack_outputs(elems)
        finally:
            _close(it)

    def _gathered(self, ra, maps, ctx):
        bs, drop, table = self._bs, self._drop, ra.table
        for idx in _rechunk(ra.stream(), bs):
            n = len(idx)
            if drop and n < bs:
                return
            batch = table.gather(idx)
            if maps:
                batch = _apply_maps(batch, n, maps, ctx.vectorize)
            yield batch

    def _compute_spec(self):
        first = self._bs if self._drop else None
        return S.map_structure(lambda s: TensorSpec(None if s.shape is None else (first,) + tuple(s.shape), s.dtype),
                               self._input.element_spec)

    def _card(self):
        n = self._input._card()
        if n < 0:
            return n
        return n // self._bs if self._drop else -(-n // self._bs)


def _split(batch, n):
    flat = S.flatten(batch)
    pk = S.packer(batch)
    return [pk(col) for col in zip(*[B.rows(t) for t in flat])] if n else []


def _apply_maps(batch, n, maps, vectorize):
    """The map chain over a gathered batch: once per batch where vectorized, else per element."""
    elems = None
    for m in maps:
        call = m._call
        state = m._vec if vectorize else False
        if state is True:
            if batch is None:
                batch = _vectorize.stack_outputs(elems)
                elems = None
            batch = S.normalize(call(batch))
        elif state is False or n < 2:
            if elems is None:
                elems = _split(batch, n)
            elems = [S.normalize(call(e)) for e in elems]
            batch = None
        else:
            if elems is None:
                elems = _split(batch, n)
            if batch is None:
                batch = _vectorize.stack_outputs(elems)
            elems, ok, batch = _vectorize.probe(call, elems, batch)
            m._vec = ok
    if batch is None:
        batch = _vectorize.stack_outputs(elems)
    return batch


class PaddedBatchDataset(_Unary):
    """What ``Dataset.padded_batch`` returns."""

    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        super().__init__(input_dataset)
        op = "PaddedBatchDataset"
        self._bs = _count(batch_size, "batch_size", op, 1)
        self._drop = bool(drop_remainder)
        spec = input_dataset.element_spec
        flat_spec = S.flatten(spec)
        if padded_shapes is None:
            # every dimension pads to the largest in the batch; the spec keeps the known ones
            shapes = [None] * len(flat_spec)
        else:
            shapes = _flatten_up_to_spec(spec, padded_shapes, "padded_shapes", op)
            shapes = [S._shape(x) for x in shapes]
            for i, (s, p) in enumerate(zip(flat_spec, shapes)):
                if s.shape is not None and p is not None and len(s.shape) != len(p):
                    raise InvalidArgumentError(f"The padded shape {tuple(p)} is not compatible with the shape "
                                               f"{tuple(s.shape)} of component {i}: the ranks differ", op)
        if padding_values is None:
            values = [None] * len(flat_spec)
        elif not S.is_nest(padding_values):
            values = [padding_values] * len(flat_spec)
        else:
            values = _flatten_up_to_spec(spec, padding_values, "padding_values", op)
        for i, (s, v) in enumerate(zip(flat_spec, values)):
            if isinstance(v, Tensor) and s.dtype is not S.string and v.dtype != s.dtype:
                raise InvalidArgumentError(f"padding value of dtype {v.dtype.name} for component {i} of dtype "
                                           f"{s.dtype.name}", op)
        self._shapes, self._values, self._flat_spec = shapes, values, flat_spec

    def _iterator(self, ctx):
        it = self._input._iterator(ctx)
        bs, drop = self._bs, self._drop
        op = "PaddedBatchDataset"
        try:
            while True:
                elems = list(islice(it, bs))
                if not elems or (drop and len(elems) < bs):
                    return
                flats = [S.flatten(e) for e in elems]
                out = []
                for j, col in enumerate(zip(*flats)):
                    shapes = [B.leaf_shape(v) for v in col]
                    rank = len(shapes[0])
                    if any(len(s) != rank for s in shapes):
                        raise InvalidArgumentError(f"all elements of component {j} must have the same rank to be "
                                                   f"padded; got shapes {[tuple(s) for s in shapes]}", op)
                    ps = self._shapes[j]
                    target = tuple(max(s[d] for s in shapes) if ps is None or ps[d] is None else ps[d]
                                   for d in range(rank))
                    v = self._values[j]
                    if isinstance(v, Tensor):
                        v = v.numpy().item()
                    if v is None and isinstance(col[0], Tensor):
                        v = 0
                    out.append(B.pad_stack(list(col), target, v, op, f"component {j}"))
                yield S.pack(elems[0], out)
        finally:
            _close(it)

    def _compute_spec(self):
        first = self._bs if self._drop else None
        out = []
        for s, p in zip(self._flat_spec, self._shapes):
            if p is None:
                shape = None if s.shape is None else (first,) + tuple(s.shape)
            else:
                shape = (first,) + tuple(p)
            out.append(TensorSpec(shape, s.dtype))
        return S.pack(self._input.element_spec, out)

    def _card(self):
        return BatchDataset._card(self)


def _flatten_up_to_spec(spec, value, what, op):
    if isinstance(spec, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            raise InvalidArgumentError(f"{what} {value!r:.60} does not match the element's nesting "
                                       f"{S.describe(spec)}", op)
        return [x for s, v in zip(spec, value) for x in _flatten_up_to_spec(s, v, what, op)]
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise InvalidArgumentError(f"{what} {value!r:.60} does not match the element's nesting "
                                       f"{S.describe(spec)}", op)
        return [x for k in sorted(spec) for x in _flatten_up_to_spec(spec[k], value[k], what, op)]
    return [value]


class UnbatchDataset(_Unary):
    """What ``Dataset.unbatch`` returns."""

    def _iterator(self, ctx):
        it = self._input._iterator(ctx)
        op = "UnbatchDataset"
        try:
            for e in it:
                flat = S.flatten(e)
                for i, t in enumerate(flat):
                    if not B.leaf_shape(t):
                        raise InvalidArgumentError(f"component {i} is a scalar; unbatching needs rank >= 1 in every "
                                                   "component", op)
                n = B.first_dim(flat[0])
                if any(B.first_dim(t) != n for t in flat):
                    raise InvalidArgumentError("the components of an element to unbatch differ in their first "
                                               f"dimension: {[B.first_dim(t) for t in flat]}", op)
                pk = S.packer(e)
                for col in zip(*[B.rows(t) for t in flat]):
                    yield pk(col)
        finally:
            _close(it)

    def _compute_spec(self):
        def one(s):
            if s.shape is not None and not s.shape:
                raise InvalidArgumentError("unbatch needs rank >= 1 in every component, found a scalar",
                                           "UnbatchDataset")
            return TensorSpec(None if s.shape is None else s.shape[1:], s.dtype)
        return S.map_structure(one, self._input.element_spec)

    def _card(self):
        return UNKNOWN_CARDINALITY


class ShuffleDataset(_Unary):
    """What ``Dataset.shuffle`` returns."""

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=True):
        super().__init__(input_dataset)
        self._size = _count(buffer_size, "buffer_size", "ShuffleDataset", 1)
        self._key = _seed_key(seed)
        self._reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        self._epochs = itertools.count()

    def _rng(self):
        epoch = next(self._epochs) if self._reshuffle else 0
        return np.random.default_rng(self._key + (epoch,))

    def _ra(self):
        ra = self._input._ra()
        if ra is None:
            return None
        size, stream = self._size, ra.stream
        return _RA(ra.table, lambda: _shuffled_indices(stream(), size, self._rng()))

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            return _ra_elements(ra)
        return self._buffered(ctx)

    def _buffered(self, ctx):
        rng = self._rng()
        it = self._input._iterator(ctx)
        try:
            yield from _shuffled(it, self._size, rng)
        finally:
            _close(it)


class RepeatDataset(_Unary):
    """What ``Dataset.repeat`` returns."""

    def __init__(self, input_dataset, count=None):
        super().__init__(input_dataset)
        self._count = -1 if count is None else _count(count, "count", "RepeatDataset")

    def _epochs(self):
        return itertools.count() if self._count < 0 else range(self._count)

    def _ra(self):
        ra = self._input._ra()
        if ra is None:
            return None

        def stream():
            for _ in self._epochs():
                empty = True
                for chunk in ra.stream():
                    empty = False
                    yield chunk
                if empty:
                    return
        return _RA(ra.table, stream)

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            yield from _ra_elements(ra)
            return
        for _ in self._epochs():
            empty = True
            it = self._input._iterator(ctx)
            try:
                for e in it:
                    empty = False
                    yield e
            finally:
                _close(it)
            if empty:
                return

    def _card(self):
        n = self._input._card()
        if self._count < 0:
            return 0 if n == 0 else INFINITE_CARDINALITY
        if n < 0:
            return 0 if self._count == 0 else n
        return n * self._count


def _take_chunks(stream, count):
    left = count
    for chunk in stream:
        if left <= 0:
            return
        if len(chunk) > left:
            chunk = chunk[:left]
        left -= len(chunk)
        yield chunk


def _skip_chunks(stream, count):
    left = count
    for chunk in stream:
        if left > 0:
            if len(chunk) <= left:
                left -= len(chunk)
                continue
            chunk = chunk[left:]
            left = 0
        yield chunk


def _shard_chunks(stream, num, index):
    pos = 0
    for chunk in stream:
        part = chunk[(index - pos) % num::num]
        pos += len(chunk)
        if len(part):
            yield part


class TakeDataset(_Unary):
    """What ``Dataset.take`` returns."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._n = _count(count, "count", "TakeDataset")

    def _ra(self):
        ra = self._input._ra()
        if ra is None or self._n < 0:
            return ra
        n = self._n
        return _RA(ra.table, lambda: _take_chunks(ra.stream(), n))

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            yield from _ra_elements(ra)
            return
        it = self._input._iterator(ctx)
        try:
            yield from (it if self._n < 0 else islice(it, self._n))
        finally:
            _close(it)

    def _card(self):
        n = self._input._card()
        if self._n < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._n
        if n == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return min(n, self._n)


class SkipDataset(_Unary):
    """What ``Dataset.skip`` returns."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._n = _count(count, "count", "SkipDataset")

    def _ra(self):
        ra = self._input._ra()
        if ra is None:
            return None
        if self._n < 0:
            return _RA(ra.table, lambda: iter(()))
        n = self._n
        return _RA(ra.table, lambda: _skip_chunks(ra.stream(), n))

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            yield from _ra_elements(ra)
            return
        it = self._input._iterator(ctx)
        try:
            if self._n < 0:
                for _ in it:
                    pass
                return
            yield from islice(it, self._n, None)
        finally:
            _close(it)

    def _card(self):
        n = self._input._card()
        if n < 0:
            return n
        return 0 if self._n < 0 else max(0, n - self._n)


class ShardDataset(_Unary):
    """What ``Dataset.shard`` returns."""

    def __init__(self, input_dataset, num_shards, index):
        super().__init__(input_dataset)
        op = "ShardDataset"
        self._num = _count(num_shards, "num_shards", op, 1)
        self._index = _count(index, "index", op)
        if not 0 <= self._index < self._num:
            raise InvalidArgumentError(f"index = {self._index} is not in [0, {self._num}) (num_shards = "
                                       f"{self._num})", op)

    def _ra(self):
        ra = self._input._ra()
        if ra is None:
            return None
        num, index = self._num, self._index
        return _RA(ra.table, lambda: _shard_chunks(ra.stream(), num, index))

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            yield from _ra_elements(ra)
            return
        it = self._input._iterator(ctx)
        try:
            yield from islice(it, self._index, None, self._num)
        finally:
            _close(it)

    def _card(self):
        n = self._input._card()
        if n < 0:
            return n
        return n // self._num + (1 if self._index < n % self._num else 0)


class PrefetchDataset(_Unary):
    """What ``Dataset.prefetch`` returns: a background thread works ahead."""

    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset)
        self._size = _count(buffer_size, "buffer_size", "PrefetchDataset", 0, allow_autotune=True)

    def _iterator(self, ctx):
        if self._size == 0:
            return self._input._iterator(ctx)
        size = _AUTOTUNE_PREFETCH if self._size == AUTOTUNE else self._size
        inp = self._input
        return _threads.Prefetcher(lambda: inp._iterator(ctx), size)


class CacheDataset(_Unary):
    """What ``Dataset.cache`` returns."""

    def __init__(self, input_dataset, filename=""):
        super().__init__(input_dataset)
        self._filename = os.fspath(filename) if filename else ""
        self._memory = None
        self._lock = threading.Lock()

    def _iterator(self, ctx):
        if self._filename:
            from . import _cachefile

            return _cachefile.iterate(self, ctx)
        return self._memory_iter(ctx)

    def _memory_iter(self, ctx):
        mem = self._memory
        if mem is not None:
            yield from mem
            return
        buf = []
        it = self._input._iterator(ctx)
        try:
            for e in it:
                buf.append(e)
                yield e
        finally:
            _close(it)
        with self._lock:
            if self._memory is None:
                self._memory = buf


class InterleaveDataset(_Unary):
    """What ``Dataset.interleave`` and ``Dataset.flat_map`` return."""

    def __init__(self, input_dataset, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                 deterministic=None, repr_name=None):
        super().__init__(input_dataset)
        op = "InterleaveDataset"
        self._call = _caller(map_func, op)
        cl = AUTOTUNE if cycle_length is None else _count(cycle_length, "cycle_length", op, 1, allow_autotune=True)
        self._cycle = (os.cpu_count() or 1) if cl == AUTOTUNE else cl
        self._block = 1 if block_length is None else _count(block_length, "block_length", op, 1)
        if num_parallel_calls is not None:
            _count(num_parallel_calls, "num_parallel_calls", op, 1, allow_autotune=True)
        self._name = repr_name or ("ParallelInterleaveDataset" if num_parallel_calls is not None
                                   else "InterleaveDataset")

    def _repr_name(self):
        return self._name

    def _open(self, e, ctx):
        ds = self._call(e)
        if not isinstance(ds, Dataset):
            raise InvalidArgumentError(f"`map_func` must return a `Dataset` object, got {type(ds).__name__}",
                                       self._name)
        return ds._iterator(ctx)

    def _iterator(self, ctx):
        return _interleave(self._input._iterator(ctx), lambda x: self._open(x, ctx), self._cycle, self._block)

    def _compute_spec(self):
        in_spec = self._input.element_spec
        try:
            ds = self._call(S.dummy(in_spec, 1))
        except Exception:  # noqa: BLE001 - the function rejects a placeholder: use a real element
            ds = None
        if isinstance(ds, Dataset):
            return ds.element_spec
        it = self._input._iterator(_Ctx(self.options()))
        try:
            first = next(it)
        except StopIteration:
            raise InvalidArgumentError("cannot infer the element_spec of an interleave over an empty dataset",
                                       self._name) from None
        finally:
            _close(it)
        ds = self._call(first)
        if not isinstance(ds, Dataset):
            raise InvalidArgumentError(f"`map_func` must return a `Dataset` object, got {type(ds).__name__}",
                                       self._name)
        return ds.element_spec

    def _card(self):
        return UNKNOWN_CARDINALITY
