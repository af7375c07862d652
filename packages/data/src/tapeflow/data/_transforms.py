"""Transformations: what ``Dataset.map``, ``filter``, ``batch``, ``padded_batch``, ``unbatch``,
``shuffle``, ``repeat``, ``take``, ``skip``, ``shard``, ``prefetch``, ``cache``, ``interleave`` and
``flat_map`` return.

Over a random-access chain (see :mod:`tapeflow.data._common`) ``shuffle``, ``take``, ``skip``,
``shard`` and ``repeat`` rewrite the index stream, and ``batch`` gathers whole batches and runs
the ``map`` functions between them once per batch where they are element-wise.
"""
from __future__ import annotations

import itertools
import os
import threading
from itertools import islice

import numpy as np
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor

from . import _batching as B
from . import _structure as S
from . import _threads, _vectorize
from ._common import (
    _AUTOTUNE_PREFETCH,
    _RA,
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    _caller,
    _close,
    _count,
    _interleave,
    _ra_elements,
    _rechunk,
    _seed_key,
    _shuffled,
    _shuffled_indices,
    _to_bool,
)
from ._stateful import skipped
from ._structure import TensorSpec
from .dataset import Dataset, Iterator, _Ctx


class _Unary(Dataset):
    def __init__(self, input_dataset) -> None:
        self._input = input_dataset
        self._inputs = (input_dataset,)

    def _compute_spec(self):
        return self._input.element_spec

    def _card(self):
        return self._input._card()


class _OptionsDataset(_Unary):
    def __init__(self, input_dataset, options) -> None:
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

    def __init__(self, input_dataset, map_func, num_parallel_calls=None, deterministic=None) -> None:
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
            n = _parallelism(n, ctx)
        if n is not None and n > 1:
            det = ctx.deterministic if self._deterministic is None else bool(self._deterministic)
            if ctx.skip_errors:
                def fn(e):
                    try:
                        return norm(call(e))
                    except Exception as err:  # noqa: BLE001 - inside ignore_errors: drop this element
                        if skipped(ctx, err):
                            return _SKIPPED
                        raise
            else:
                def fn(e):
                    return norm(call(e))
            pm = _threads.ParallelMap(it, fn, n, det)
            try:
                for r in pm:
                    if r is not _SKIPPED:
                        yield r
            finally:
                pm.close()
            return
        try:
            if ctx.skip_errors:
                for e in it:
                    try:
                        r = norm(call(e))
                    except Exception as err:  # noqa: BLE001 - inside ignore_errors: drop this element
                        if skipped(ctx, err):
                            continue
                        raise
                    yield r
                return
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


_SKIPPED = object()  # a parallel map's result for an element dropped inside ignore_errors


def _parallelism(n, ctx):
    """The threads a parallel stage runs: ``n`` (the CPUs for AUTOTUNE), at most the private thread pool's size."""
    n = (ctx.threads or os.cpu_count() or 1) if n == AUTOTUNE else n
    return min(n, ctx.threads) if ctx.threads else n


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

    def __init__(self, input_dataset, predicate) -> None:
        super().__init__(input_dataset)
        self._call = _caller(predicate, "FilterDataset")

    def _iterator(self, ctx):
        call = self._call
        it = self._input._iterator(ctx)
        try:
            for e in it:
                try:
                    keep = _to_bool(call(e), "FilterDataset")
                except Exception as err:  # noqa: BLE001 - inside ignore_errors: drop this element
                    if skipped(ctx, err):
                        continue
                    raise
                if keep:
                    yield e
        finally:
            _close(it)

    def _card(self):
        return UNKNOWN_CARDINALITY


class TakeWhileDataset(_Unary):
    """What ``Dataset.take_while`` returns: the elements up to the first for which ``predicate`` is False."""

    def __init__(self, input_dataset, predicate) -> None:
        super().__init__(input_dataset)
        self._call = _caller(predicate, "TakeWhileDataset")

    def _iterator(self, ctx):
        call = self._call
        it = self._input._iterator(ctx)
        try:
            for e in it:
                if not _to_bool(call(e), "TakeWhileDataset"):
                    return
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

    def __init__(self, input_dataset, batch_size, drop_remainder=False) -> None:
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

        def one(s):
            kind = S.SparseTensorSpec if isinstance(s, S.SparseTensorSpec) else TensorSpec
            return kind(None if s.shape is None else (first,) + tuple(s.shape), s.dtype)
        return S.map_structure(one, self._input.element_spec)

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

    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None,
                 drop_remainder=False) -> None:
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
            kind = S.SparseTensorSpec if isinstance(s, S.SparseTensorSpec) else TensorSpec
            return kind(None if s.shape is None else s.shape[1:], s.dtype)
        return S.map_structure(one, self._input.element_spec)

    def _card(self):
        return UNKNOWN_CARDINALITY


class ShuffleDataset(_Unary):
    """What ``Dataset.shuffle`` returns."""

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=True) -> None:
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

    def __init__(self, input_dataset, count=None) -> None:
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

    def __init__(self, input_dataset, count) -> None:
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

    def __init__(self, input_dataset, count) -> None:
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

    def __init__(self, input_dataset, num_shards, index) -> None:
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

    def __init__(self, input_dataset, buffer_size) -> None:
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

    def __init__(self, input_dataset, filename="") -> None:
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
                 deterministic=None, repr_name=None) -> None:
        super().__init__(input_dataset)
        op = "InterleaveDataset"
        self._call = _caller(map_func, op)
        cl = AUTOTUNE if cycle_length is None else _count(cycle_length, "cycle_length", op, 1, allow_autotune=True)
        self._cycle = (os.cpu_count() or 1) if cl == AUTOTUNE else cl
        self._block = 1 if block_length is None else _count(block_length, "block_length", op, 1)
        self._parallel = None
        if num_parallel_calls is not None:
            self._parallel = _count(num_parallel_calls, "num_parallel_calls", op, 1, allow_autotune=True)
        self._deterministic = deterministic
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
        n = self._parallel
        if n is None or (n != AUTOTUNE and n < 2):
            return _interleave(self._input._iterator(ctx), lambda x: self._open(x, ctx), self._cycle, self._block)
        # parallel: each open input runs ahead on its own thread, at most ``n`` producing at once; in the
        # deterministic order, or (deterministic=False) taking from a ready input when the next is not
        n = min(_parallelism(n, ctx), self._cycle)
        det = ctx.deterministic if self._deterministic is None else bool(self._deterministic)
        gate = threading.BoundedSemaphore(n)

        def gated(it):
            try:
                while True:
                    with gate:
                        try:
                            e = next(it)
                        except StopIteration:
                            return
                    yield e
            finally:
                _close(it)

        def open_fn(x):
            it = self._open(x, ctx)
            return _threads.Prefetcher(lambda: gated(it), max(2, self._block))

        return _interleave(self._input._iterator(ctx), open_fn, self._cycle, self._block,
                           None if det else _threads.Prefetcher.ready)

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
