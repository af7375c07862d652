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
the math of an op, and the same seed gives the same order on any path through this package.

This module holds the API: :class:`Dataset`, whose methods construct the sources
(:mod:`tapeflow.data._sources`) and transformations (:mod:`tapeflow.data._transforms`), its
:class:`Iterator` and :class:`Options`; the machinery they share is :mod:`tapeflow.data._common`.
"""
from __future__ import annotations

import contextlib
import typing

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError, OutOfRangeError
from tapeflow.core.tensor import Tensor, constant

from . import _structure as S
from ._common import (
    _INT64_MAX,
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    _close,
    _count,
    _fmt_shape,
    _ra_elements,
)

# ---- options ------------------------------------------------------------------

class OptimizationOptions:
    """Optimization switches of a pipeline.

    ``map_vectorization`` (default True): run a ``map`` that feeds a ``batch`` once per batch when
    its function is provably element-wise (see :mod:`tapeflow.data._vectorize`).

    >>> from tapeflow.data import Options
    >>> Options().experimental_optimization.map_vectorization is None
    True
    """

    def __init__(self) -> None:
        self.map_vectorization = None

    def _merge(self, other):
        out = OptimizationOptions()
        out.map_vectorization = (other.map_vectorization if other.map_vectorization is not None
                                 else self.map_vectorization)
        return out


class ThreadingOptions:
    """Threading options of a pipeline (``Options().threading``).

    ``private_threadpool_size``: the most threads a parallel ``map`` or ``interleave`` of the pipeline
    runs at once (``AUTOTUNE`` parallelism picks this many; 0 or None: the number of CPUs).
    ``max_intra_op_parallelism`` is TensorFlow's per-op thread cap; tapeflow's kernels share one
    OpenMP pool, so setting it raises instead of being ignored.

    >>> import tapeflow as tf
    >>> o = tf.data.Options(); o.threading.private_threadpool_size = 2
    >>> tf.data.Dataset.range(3).with_options(o).options().threading.private_threadpool_size
    2
    """

    __slots__ = ("_pool",)

    def __init__(self) -> None:
        self._pool = None

    @property
    def private_threadpool_size(self):
        return self._pool

    @private_threadpool_size.setter
    def private_threadpool_size(self, value):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
            raise InvalidArgumentError(f"threading.private_threadpool_size must be an integer >= 0 or None, got "
                                       f"{value!r:.40}", "OptionsDataset")
        self._pool = None if value is None else int(value)

    @property
    def max_intra_op_parallelism(self):
        return None

    @max_intra_op_parallelism.setter
    def max_intra_op_parallelism(self, value):
        if value is not None:
            raise InvalidArgumentError("threading.max_intra_op_parallelism is not supported: tapeflow's kernels share "
                                       "one OpenMP thread pool (tf.config.threading sets its size); allowed: None",
                                       "OptionsDataset")

    def _merge(self, other):
        out = ThreadingOptions()
        out._pool = other._pool if other._pool is not None else self._pool
        return out


class Options:
    """Options of a pipeline, set with :meth:`Dataset.with_options` (later settings win).

    ``deterministic``: whether parallel ``map`` and ``interleave`` keep input order when their own
    ``deterministic`` is None (default True; False lets an element that is ready first come first).
    ``experimental_optimization``: :class:`OptimizationOptions`; ``threading``: :class:`ThreadingOptions`.

    >>> import tapeflow as tf
    >>> opts = tf.data.Options(); opts.deterministic = False
    >>> tf.data.Dataset.range(3).with_options(opts).options().deterministic
    False
    """

    def __init__(self) -> None:
        self.deterministic = None
        self.experimental_optimization = OptimizationOptions()
        self.threading = ThreadingOptions()

    def merge(self, other: Options) -> Options:
        """These options with ``other``'s set fields on top."""
        out = Options()
        out.deterministic = other.deterministic if other.deterministic is not None else self.deterministic
        out.experimental_optimization = self.experimental_optimization._merge(other.experimental_optimization)
        out.threading = self.threading._merge(other.threading)
        return out


class _Ctx:
    """What one iteration knows: the options of the dataset being iterated, and whether errors of single
    elements are skipped (inside ``ignore_errors``: True, or a function that logs each)."""

    __slots__ = ("deterministic", "skip_errors", "threads", "vectorize")

    def __init__(self, options: Options) -> None:
        mv = options.experimental_optimization.map_vectorization
        self.vectorize = True if mv is None else bool(mv)
        self.deterministic = True if options.deterministic is None else bool(options.deterministic)
        self.threads = options.threading.private_threadpool_size or None
        self.skip_errors = False

    def replace(self, **changes):
        out = object.__new__(_Ctx)
        for k in _Ctx.__slots__:
            setattr(out, k, changes.get(k, getattr(self, k)))
        return out

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
    def __iter__(self) -> Iterator:
        return Iterator(self)

    def as_numpy_iterator(self) -> typing.Iterator[typing.Any]:  # (elements: arrays or structures of them)
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

    def cardinality(self) -> Tensor:
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
        from . import _ragged

        if _ragged.has_ragged(tensors) or any(isinstance(v, S.SparseTensor) for v in S.flatten(tensors)):
            return _ragged.RaggedSliceDataset(tensors)  # a tf.RaggedTensor or SparseTensor: its rows (data/_ragged.py)
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
        >>> [pathlib.Path(f.numpy().decode()).name for f in tf.data.Dataset.list_files(str(d / "*.txt"), shuffle=False)]
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

    def take_while(self, predicate, name=None) -> Dataset:
        """The elements up to (not including) the first for which ``predicate`` returns False.

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.range(10).take_while(lambda x: x < 3)]
        [0, 1, 2]
        """
        from ._transforms import TakeWhileDataset

        return TakeWhileDataset(self, predicate)

    def get_single_element(self, name=None):
        """The one element of a dataset of exactly one element (``InvalidArgumentError`` otherwise).

        >>> import tapeflow as tf
        >>> tf.data.Dataset.from_tensors([1, 2]).get_single_element().numpy().tolist()
        [1, 2]
        """
        it = Iterator(self)
        try:
            try:
                first = next(it)
            except StopIteration:
                raise InvalidArgumentError("Dataset was empty.", "DatasetToSingleElement") from None
            for _ in it:
                raise InvalidArgumentError("Dataset had more than one element.", "DatasetToSingleElement")
        finally:
            it.close()
        return first

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
        from . import _ragged

        if _ragged.upstream_ragged(self) and _ragged.spec_has_ragged(self.element_spec):
            return _ragged.RaggedBatchDataset(self, batch_size, drop_remainder, all_unknown=False)
        return BatchDataset(self, batch_size, drop_remainder)

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=_dt.int64, name=None) -> Dataset:
        """Batches in which components of different shapes (ragged or with unknown dimensions in their spec)
        become ``tf.RaggedTensor`` values; components of a fully known shape are stacked, as TensorFlow's.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(1, 5).map(lambda n: tf.range(n))
        >>> [b.to_list() for b in ds.ragged_batch(3)]
        [[[0], [0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]
        """
        from . import _ragged

        if _dt.as_dtype(row_splits_dtype) is not _dt.int64:
            raise InvalidArgumentError(f"row_splits_dtype = {row_splits_dtype!r}; allowed: tf.int64 (tapeflow's "
                                       "RaggedTensors keep int64 row splits)", "RaggedBatchDataset")
        return _ragged.RaggedBatchDataset(self, batch_size, drop_remainder)

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
        from . import _ragged

        if _ragged.upstream_ragged(self):
            for s in S.flatten(self.element_spec):
                if isinstance(s, _ragged.RaggedTensorSpec):
                    raise TypeError(f"`padded_batch` is only supported for datasets that produce tensor elements but "
                                    f"type spec of elements in the input dataset is not a subclass of TensorSpec: "
                                    f"`{s!r}`; use ragged_batch")
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

    def reduce(self, initial_state: typing.Any, reduce_func: typing.Callable[..., typing.Any],
               name: str | None = None) -> typing.Any:
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
            new = S.normalize(reduce_func(S.for_user(state), e), "ReduceDataset")
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

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None) -> Dataset:
        """A dataset of windows: each window is a dataset (a tuple or dict of datasets for a tuple or dict
        element) of ``size`` elements taken every ``stride``, windows starting every ``shift`` (default
        ``size``) elements; the last windows may be shorter unless ``drop_remainder``.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(7).window(3, shift=2, drop_remainder=True)
        >>> [b.numpy().tolist() for b in ds.flat_map(lambda w: w.batch(3))]
        [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
        """
        from ._windows import WindowDataset

        return WindowDataset(self, size, shift, stride, drop_remainder)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None) -> Dataset:
        """Elements grouped by ``key_func`` (a scalar int64 per element); a group reaching ``window_size``
        (or ``window_size_func(key)``) elements becomes ``reduce_func(key, window_dataset)``, whose
        elements are emitted; the groups left at the end follow in increasing key order.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(10).group_by_window(
        ...     key_func=lambda x: x % 2, reduce_func=lambda k, w: w.batch(3), window_size=3)
        >>> [b.numpy().tolist() for b in ds]
        [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
        """
        from ._windows import GroupByWindowDataset

        return GroupByWindowDataset(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None) -> Dataset:
        """Batches of elements of similar length: bucket ``i`` holds lengths in
        ``[bucket_boundaries[i-1], bucket_boundaries[i])`` and batches ``bucket_batch_sizes[i]`` of them,
        padded (``padded_shapes``, ``padding_values``; to ``boundary - 1`` with ``pad_to_bucket_boundary``)
        unless ``no_padding``.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.from_generator(lambda: ([1] * n for n in (1, 5, 2, 6, 3)),
        ...                                     output_signature=tf.data.TensorSpec([None], tf.int32))
        >>> ds = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [4], [2, 2])
        >>> [b.numpy().tolist() for b in ds]
        [[[1, 0], [1, 1]], [[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]], [[1, 1, 1]]]
        """
        from ._windows import bucket_by_sequence_length

        return bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                         padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
                                         drop_remainder)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> Dataset:
        """The next element of ``datasets[i]`` for each int64 ``i`` of ``choice_dataset``; an empty chosen
        dataset ends the result (``stop_on_empty_dataset=True``) or is passed over.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.choose_from_datasets(
        ...     [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)],
        ...     tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64)))
        >>> [int(x) for x in ds]
        [0, 10, 11, 1]
        """
        from ._sampling import ChooseFromDatasetsDataset

        return ChooseFromDatasetsDataset(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None) -> Dataset:
        """Elements drawn at random from ``datasets`` with probabilities ``weights`` (uniform by default;
        a dataset of weight vectors gives one vector per draw).  An exhausted input ends the result when
        ``stop_on_empty_dataset``, else the draws continue over the others.  The same draws repeat each
        epoch unless ``rerandomize_each_iteration``.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.sample_from_datasets(
        ...     [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)], weights=[0.5, 0.5], seed=7)
        >>> sorted(int(x) for x in ds)
        [0, 1, 2, 10, 11, 12]
        """
        from ._sampling import SampleFromDatasetsDataset

        return SampleFromDatasetsDataset(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None) -> Dataset:
        """``(class, element)`` pairs resampled so that the classes (``class_func(element)``, an integer in
        ``[0, len(target_dist))``) follow ``target_dist``; ``initial_dist`` (estimated when None) is
        the input's class distribution.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(8).rejection_resample(lambda x: tf.cast(x % 2, tf.int32),
        ...     target_dist=[0.0, 1.0], initial_dist=[0.5, 0.5], seed=1)
        >>> [(int(c), int(x)) for c, x in ds]
        [(1, 1), (1, 3), (1, 5), (1, 7)]
        """
        from ._sampling import RejectionResampleDataset

        return RejectionResampleDataset(self, class_func, target_dist, initial_dist, seed)

    def scan(self, initial_state, scan_func, name=None) -> Dataset:
        """A running state: ``state, out = scan_func(state, element)`` for each element, emitting ``out``.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))
        >>> [int(x) for x in ds]
        [0, 1, 3, 6, 10]
        """
        from ._stateful import ScanDataset

        return ScanDataset(self, initial_state, scan_func)

    def unique(self, name=None) -> Dataset:
        """Each distinct element once, in order of first appearance (int32, int64 or string elements).

        >>> import tapeflow as tf
        >>> [int(x) for x in tf.data.Dataset.from_tensor_slices([1, 3, 1, 2, 3]).unique()]
        [1, 3, 2]
        """
        from ._stateful import UniqueDataset

        return UniqueDataset(self)

    def ignore_errors(self, log_warning=False, name=None) -> Dataset:
        """The elements whose computation raised no error (a failing ``map``/``filter`` call or generator
        value drops its element); ``log_warning`` logs each error dropped.

        >>> import tapeflow as tf
        >>> ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0])
        >>> ds = ds.map(lambda x: tf.debugging.check_numerics(1 / x, "inf")).ignore_errors()
        >>> [float(x) for x in ds]
        [1.0, 0.5]
        """
        from ._stateful import IgnoreErrorsDataset

        return IgnoreErrorsDataset(self, log_warning)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None) -> None:
        """Write the elements to the directory ``path`` (tapeflow's format: see :mod:`tapeflow.data._persist`;
        ``compression`` None or ``"GZIP"``; ``shard_func(element)`` picks each element's shard file).
        The save appears only complete; the element_spec is stored with it.

        >>> import tapeflow as tf, tempfile
        >>> d = tempfile.mkdtemp()
        >>> tf.data.Dataset.range(4).map(lambda x: (x, x * 2)).save(d)
        >>> [(int(a), int(b)) for a, b in tf.data.Dataset.load(d)]
        [(0, 0), (1, 2), (2, 4), (3, 6)]
        """
        from ._persist import save

        save(self, path, compression, shard_func, checkpoint_args)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None, wait=False) -> Dataset:
        """A dataset :meth:`save` wrote to ``path`` (``element_spec`` read from it when None, checked when given;
        ``reader_func`` maps the dataset of shard datasets to the result).

        >>> import tapeflow as tf, tempfile
        >>> d = tempfile.mkdtemp()
        >>> tf.data.Dataset.from_tensor_slices([1.5, 2.5]).save(d, compression="GZIP")
        >>> ds = tf.data.Dataset.load(d)
        >>> ds.element_spec, [float(x) for x in ds]
        (TensorSpec(shape=(), dtype=tf.float32, name=None), [1.5, 2.5])
        """
        from ._persist import LoadDataset

        return LoadDataset(path, element_spec, compression, reader_func, wait)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None) -> Dataset:
        """This dataset, written to a directory under ``path`` (named by a fingerprint of the pipeline) on
        its first complete iteration and read back from there on later ones, in this process or another.
        ``compression``: ``"AUTO"`` (none), None or ``"GZIP"``; ``shard_func`` and ``reader_func`` as for
        :meth:`save` and :meth:`load`.

        >>> import tapeflow as tf, tempfile
        >>> calls = []
        >>> ds = tf.data.Dataset.range(3).map(lambda x: calls.append(1) or x).snapshot(tempfile.mkdtemp())
        >>> first = [int(x) for x in ds]; n = len(calls)
        >>> first, [int(x) for x in ds], len(calls) == n  # the second epoch reads the files
        ([0, 1, 2], [0, 1, 2], True)
        """
        from ._persist import SnapshotDataset

        return SnapshotDataset(self, path, compression, reader_func, shard_func)

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

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset
        self._it = dataset._iterator(_Ctx(dataset.options()))

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> typing.Any:  # (declared: a type checker would infer "never" from the base Dataset)
        return S.for_user(next(self._it))

    def get_next(self):
        """The next element; ``tf.errors.OutOfRangeError`` at the end."""
        try:
            return S.for_user(next(self._it))
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


# The sources and transformations subclass Dataset, so they are defined after it (the methods
# above construct them); they are importable from here as before.
from ._sources import (
    ConcatenateDataset,
    GeneratorDataset,
    RangeDataset,
    TensorDataset,
    TensorSliceDataset,
    ZipDataset,
)
from ._transforms import (
    BatchDataset,
    CacheDataset,
    FilterDataset,
    InterleaveDataset,
    MapDataset,
    PaddedBatchDataset,
    PrefetchDataset,
    RepeatDataset,
    ShardDataset,
    ShuffleDataset,
    SkipDataset,
    TakeDataset,
    UnbatchDataset,
    _OptionsDataset,
)

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "BatchDataset",
    "CacheDataset",
    "ConcatenateDataset",
    "Dataset",
    "FilterDataset",
    "GeneratorDataset",
    "InterleaveDataset",
    "Iterator",
    "MapDataset",
    "OptimizationOptions",
    "Options",
    "PaddedBatchDataset",
    "PrefetchDataset",
    "RangeDataset",
    "RepeatDataset",
    "ShardDataset",
    "ShuffleDataset",
    "ThreadingOptions",
    "SkipDataset",
    "TakeDataset",
    "TensorDataset",
    "TensorSliceDataset",
    "UnbatchDataset",
    "ZipDataset",
]
