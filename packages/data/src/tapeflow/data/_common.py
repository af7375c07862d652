"""Pipeline machinery under every dataset: random-access tables and their index streams, the
interleave order, shuffle buffers and seeds, and argument checks.

A dataset over rows of in-memory tensors describes itself as a table (``gather`` a batch of rows,
or ``rows`` as separate elements) plus a factory of index streams, one per epoch: chunks of int64
row indices that ``shuffle``, ``take``, ``skip``, ``shard`` and ``repeat`` rewrite without touching
the data.
"""
from __future__ import annotations

import secrets
import time
from itertools import islice

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, constant

from . import _batching as B
from . import _structure as S

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INT64_MAX = 2 ** 63 - 1
_CHUNK = 4096
_AUTOTUNE_PREFETCH = 4

# ---- random-access tables ---------------------------------------------------------

class _RA:
    """A table of rows plus a factory of index streams (one per epoch)."""

    __slots__ = ("identity", "stream", "table")

    def __init__(self, table, stream, identity=False) -> None:
        self.table, self.stream, self.identity = table, stream, identity


def _arange_chunks(n: int):
    i = 0
    while i < n:
        j = min(n, i + _CHUNK)
        yield np.arange(i, j, dtype=np.int64)
        i = j


class _SliceTable:
    """Rows of in-memory components (tensors, or object arrays for text)."""

    def __init__(self, structure, flat, n) -> None:
        self.structure, self.flat, self.n = structure, flat, n
        self.pack = S.packer(structure)

    def gather(self, idx):
        return self.pack([B.gather(c, idx) for c in self.flat])

    def rows(self, idx):
        pk = self.pack
        return [pk(col) for col in zip(*[B.rows_at(c, idx) for c in self.flat])]


class _RangeTable:
    def __init__(self, start, step, n, dtype) -> None:
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
    def __init__(self, structure, tables) -> None:
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


def _interleave(in_it, open_fn, cycle_length: int, block_length: int, ready=None):
    """TensorFlow's interleave order over iterators: a cycle of ``cycle_length`` open iterators,
    ``block_length`` items from each in turn; an exhausted slot is refilled from the next input when
    the cycle reaches it.  With ``ready`` (non-deterministic order), a slot whose next item is not
    ready yet gives its turn to the next slot that has one ready."""
    L, block = cycle_length, block_length
    cycle = [None] * L
    nopen, ci, bi, end = 0, 0, 0, False
    try:
        while not end or nopen:
            cur = cycle[ci]
            if cur is not None and ready is not None and not ready(cur):
                # open the whole cycle, then poll until some open input has its next item
                for j in range(L):
                    if cycle[j] is None and not end:
                        try:
                            cycle[j] = open_fn(next(in_it))
                            nopen += 1
                        except StopIteration:
                            end = True
                while not any(c is not None and ready(c) for c in cycle):
                    time.sleep(0.0005)
                j = next(j for j in range(L) if cycle[(ci + j) % L] is not None and ready(cycle[(ci + j) % L]))
                if j:
                    ci, bi = (ci + j) % L, 0
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
        e = S.for_user(e)  # text as tf.string tensors, as TensorFlow hands it to the function
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
