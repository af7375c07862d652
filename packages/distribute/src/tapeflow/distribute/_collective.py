"""Collectives between replicas: over MPI (one replica per process) and over threads (one per device).

Gradients and variables travel in buckets: many small tensors of one wire dtype are packed into one
flat host buffer of at most ``bytes_per_pack`` bytes (one copy each, into a buffer reused across
steps) and reduced in place by one ``MPI_Allreduce``; the results are views of that buffer (no copy
out).  A host tensor bigger than a bucket goes to MPI without a copy (its buffer through the buffer
protocol, the result received straight into a new tensor's buffer); a tensor on a GPU device is staged
through host memory (CUDA-aware MPI is not used).  These calls block; the overlap of gradient buckets
with the backward pass is ``_overlap``'s (a helper thread: MPICH's non-blocking collectives progress
only inside MPI calls).
"""
from __future__ import annotations

import hashlib
import sys
import threading

import numpy as np

import tapeflow.core as K
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import CancelledError, InvalidArgumentError
from tapeflow.core.tensor import Tensor, from_numpy, make

DEFAULT_BYTES_PER_PACK = 4 << 20   # 4 MiB buckets (TensorFlow's and Horovod's fusion sizes are of this order)

# dtypes MPI reduces as they are; float16/bfloat16 travel as float32 (cast there and back)
_NATIVE = {"float32", "float64", "int32", "int64", "uint8", "int8", "int16", "uint16", "uint32", "uint64"}


def _wire(dtype):
    return dtype if dtype.name in _NATIVE else _dt.float32


def signature(names, tensors) -> list:
    """What every replica must agree on before a collective: (name, shape, dtype) per tensor."""
    return [(str(n), tuple(t._shape), t._dtype.name) for n, t in zip(names, tensors)]


def mismatch_error(sigs, what, op) -> InvalidArgumentError:
    """The error for replicas that disagree: names the variable (or the count) and the ranks."""
    ref = sigs[0]
    for r, s in enumerate(sigs[1:], 1):
        if len(s) != len(ref):
            n0 = {x[0] for x in ref}
            nr = {x[0] for x in s}
            extra = sorted(n0 - nr)[:3] or sorted(nr - n0)[:3]
            return InvalidArgumentError(
                f"{what}: rank 0 has {len(ref)} variables but rank {r} has {len(s)} (differing: {extra}); "
                "allowed: the same variables, in the same order, on every replica", op)
        for (n0, sh0, dt0), (nr, shr, dtr) in zip(ref, s):
            if (sh0, dt0) != (shr, dtr):
                return InvalidArgumentError(
                    f"{what}: variable {n0!r} is {dt0}{list(sh0)} on rank 0 but {nr!r} is {dtr}{list(shr)} on "
                    f"rank {r}; allowed: the same shapes and dtypes on every replica", op)
    return InvalidArgumentError(f"{what}: the replicas disagree on the tensors to reduce", op)


def _digest(sig) -> int:
    return int.from_bytes(hashlib.blake2b(repr(sig).encode(), digest_size=8).digest(), "little", signed=True)


def _host_view(t: Tensor) -> np.ndarray:
    """The tensor's values as a flat host array: its own buffer on the CPU, a staged copy from a GPU."""
    arr = t._arr if t._arr is not None else t._host()
    return arr if arr.ndim == 1 else arr.reshape(-1)


_HUGE = 2 << 20   # a huge page


def _empty(shape, npdt) -> np.ndarray:
    """A new host array for MPI to write into.  NumPy asks the kernel for huge pages for big arrays; one that
    also starts on a huge-page boundary took MPI's shared-memory copies up to ~1.5x less time to receive 16 MiB
    into than a buffer of the kernels' allocator or an unaligned one (the result depended on where it fell)."""
    n = int(np.prod(shape, dtype=np.int64)) * npdt.itemsize
    if n < 2 * _HUGE:
        return np.empty(shape, npdt)
    raw = np.empty(n + _HUGE, np.uint8)
    skip = -raw.ctypes.data % _HUGE
    return raw[skip:skip + n].view(npdt).reshape(shape)


def _refs(a: np.ndarray) -> int:
    """References to the array that owns ``a``'s memory: every NumPy view of it (of ``a`` or of its views)
    holds one, whatever the chain of views it was made by."""
    return sys.getrefcount(a if a.base is None else a.base)


class _Pool:
    """Host buffers for the results of collectives, reused once no tensor uses them any more.

    A fresh buffer costs page faults on its first write, which took longer than the all-reduce itself
    for megabyte gradients; a step's gradients have the same shapes as the last step's, whose tensors
    are gone by then.  A buffer is free when nothing but the pool refers to its memory or to its handle
    (a tensor over it, a NumPy view of it or a tensor sharing its handle all hold a reference)."""

    KEEP = 4   # buffers kept per shape and dtype

    def __init__(self) -> None:
        self._free = {}

    def get(self, shape, npdt, dev):
        pool = self._free.setdefault((tuple(shape), npdt.str, dev.name), [])
        for entry in pool:
            if sys.getrefcount(entry[0]) == entry[2] and _refs(entry[1]) == entry[3]:
                return entry[0], entry[1]
        host = _empty(tuple(shape), npdt)
        h = dev.backend.host_ptr(host)
        entry = [h, host, 0, 0]
        del h, host
        pool.append(entry)
        if len(pool) > self.KEEP:
            pool.pop(0)   # forgotten, not freed: a tensor may still use it
        entry[2], entry[3] = sys.getrefcount(entry[0]), _refs(entry[1])
        return entry[0], entry[1]


class _Buckets:
    """Flat host buffers for buckets, reused across steps: a bucket's results are views of its buffer (no copy
    out), so a buffer is taken again only once none of those views (nor NumPy views of them) is alive."""

    KEEP = 3   # buffers kept per size and dtype

    def __init__(self) -> None:
        self._free = {}

    def get(self, n, npdt):
        pool = self._free.setdefault((n, npdt.str), [])
        for entry in pool:
            if _refs(entry[0]) == entry[1]:
                return entry[0]
        entry = [_empty((n,), npdt), 0]
        pool.append(entry)
        if len(pool) > self.KEEP:
            pool.pop(0)   # forgotten, not freed: tensors may still view it
        entry[1] = _refs(entry[0])
        return entry[0]


def _views(flat: np.ndarray, tensors, dev) -> list:
    """Tensors on the CPU device ``dev`` over consecutive slices of ``flat`` (shapes and sizes of ``tensors``)."""
    ptr = dev.backend.host_ptr
    out, o = [], 0
    for t in tensors:
        n, shape = t._size, t._shape
        host = flat[o:o + n]
        if len(shape) != 1:
            host = host.reshape(shape)
        out.append(make(ptr(host), host, shape, t._dtype, dev, n))
        o += n
    return out


def _wrap(flat: np.ndarray, shape, dtype, dev, pool) -> Tensor:
    """A tensor on ``dev`` holding ``flat`` (one copy out of the bucket; staged onto a GPU device)."""
    if dev.kind == "cpu":
        h, host = pool.get(shape, np.dtype(dtype.np), dev)
        host.reshape(-1)[...] = flat
        return make(h, host, tuple(shape), dtype, dev, int(flat.size))
    return from_numpy(np.array(flat.reshape(shape), order="C", copy=True), dtype, dev)   # (0-d stays 0-d)


class MPIComm:
    """Collectives over an MPI communicator (mpi4py); one replica per process."""

    def __init__(self, comm) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._pool = _Pool()
        self._bucket_bufs = _Buckets()

    # -- agreement ------------------------------------------------------------------------------
    def check(self, sig, what, op):
        """Raise the same InvalidArgumentError on every rank when the ranks' signatures differ."""
        digests = self.comm.allgather(_digest(sig))
        if len(set(digests)) > 1:
            raise mismatch_error(self.comm.allgather(sig), what, op)

    # -- tensors --------------------------------------------------------------------------------
    def _buckets(self, tensors, bytes_per_pack):
        """Lists of indices, each list one message: tensors of one wire dtype, at most bytes_per_pack bytes."""
        open_, out, wires = {}, [], {}
        for i, t in enumerate(tensors):
            dt = t._dtype
            hit = wires.get(dt)
            if hit is None:
                w = _wire(dt)
                hit = wires[dt] = (w, np.dtype(w.np).itemsize)
            w, itemsize = hit
            n = t._size * itemsize
            cur = open_.get(w.name)
            if cur is None or (cur[1] + n > bytes_per_pack and cur[0]):
                cur = [[], 0, w]
                open_[w.name] = cur
                out.append(cur)
            cur[0].append(i)
            cur[1] += n
        return out

    def all_reduce(self, tensors, bytes_per_pack=DEFAULT_BYTES_PER_PACK):
        """The element-wise sums over the ranks of ``tensors`` (a list), bucketed; the same bits on every rank."""
        if self.size == 1 or not tensors:
            return list(tensors)
        from mpi4py import MPI

        out = [None] * len(tensors)
        for idx, _, w in self._buckets(tensors, bytes_per_pack):
            ts = [tensors[i] if tensors[i]._dtype is w else K.cast(tensors[i], w) for i in idx]
            if len(ts) == 1 and ts[0]._dev.kind == "cpu":
                # one big tensor: sent from its own buffer, received into the new tensor's buffer
                t = ts[0]
                h, host = self._pool.get(t._shape, np.dtype(w.np), t._dev)
                self.comm.Allreduce(_host_view(t), host.reshape(-1), op=MPI.SUM)
                results = [make(h, host, t._shape, w, t._dev, t._size)]
            else:
                # many tensors: packed by one copy each into a reused buffer, reduced in place, and the results
                # are views of that buffer (CPU) or staged from it (a GPU device)
                flat = self._bucket_bufs.get(sum(t._size for t in ts), np.dtype(w.np))
                np.concatenate([_host_view(t) for t in ts], out=flat)
                self.comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
                dev = ts[0]._dev
                if dev.kind == "cpu" and all(t._dev is dev for t in ts):
                    results = _views(flat, ts, dev)
                else:
                    results, o = [], 0
                    for t in ts:
                        results.append(_wrap(flat[o:o + t._size], t._shape, t._dtype, t._dev, self._pool))
                        o += t._size
            for i, r in zip(idx, results):
                orig = tensors[i]
                out[i] = r if r._dtype is orig._dtype else K.cast(r, orig._dtype)
        return out

    def broadcast(self, tensors, root=0, bytes_per_pack=DEFAULT_BYTES_PER_PACK):
        """Rank ``root``'s ``tensors`` on every rank (bucketed like all_reduce)."""
        if self.size == 1 or not tensors:
            return list(tensors)
        out = [None] * len(tensors)
        for idx, _, w in self._buckets(tensors, bytes_per_pack):
            ts = [tensors[i] if tensors[i]._dtype is w else K.cast(tensors[i], w) for i in idx]
            flat = np.empty(sum(t._size for t in ts), np.dtype(w.np))
            if self.rank == root:
                o = 0
                for t in ts:
                    flat[o:o + t._size] = _host_view(t)
                    o += t._size
            self.comm.Bcast(flat, root=root)
            o = 0
            for i, t in zip(idx, ts):
                r = _wrap(flat[o:o + t._size], t._shape, t._dtype, t._dev, self._pool)
                out[i] = r if r._dtype is tensors[i]._dtype else K.cast(r, tensors[i]._dtype)
                o += t._size
        return out

    def all_gather(self, tensor: Tensor) -> list:
        """Every rank's ``tensor`` (shapes may differ along the first axis), in rank order."""
        if self.size == 1:
            return [tensor]
        arrs = self.comm.allgather(np.asarray(tensor))
        return [t if r == self.rank else from_numpy(np.array(a, order="C", copy=True), tensor._dtype, tensor._dev)
                for r, (a, t) in enumerate(zip(arrs, [tensor] * self.size))]

    def bcast_object(self, obj, root=0):
        return obj if self.size == 1 else self.comm.bcast(obj, root=root)

    def barrier(self):
        if self.size > 1:
            self.comm.Barrier()


class ThreadGroup:
    """Collectives between the replica threads of one process (MirroredStrategy): each replica posts its
    tensors, replica 0 sums them in replica order with tapeflow ops, every replica gets those same tensors.
    A replica that fails breaks the group: the others get CancelledError instead of waiting forever."""

    def __init__(self, n) -> None:
        self.size = n
        self._barrier = threading.Barrier(n)
        self._slots = [None] * n
        self._result = None

    def _wait(self):
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise CancelledError("another replica failed; this replica's collective was cancelled",
                                   "CollectiveReduce") from None

    def abort(self):
        self._barrier.abort()

    def reset(self):
        self._barrier.reset()
        self._slots = [None] * self.size

    def exchange(self, rank, value, combine):
        """``combine([value of replica 0, 1, ...])``, computed once by replica 0, returned to every replica."""
        self._slots[rank] = value
        self._wait()
        if rank == 0:
            try:
                self._result = (True, combine(list(self._slots)))
            except BaseException as e:  # noqa: BLE001 - handed to every replica, which raises it
                self._result = (False, e)
        self._wait()
        ok, res = self._result
        self._wait()   # nobody posts the next value before everyone has read this result
        if not ok:
            raise res
        return res

    def barrier(self):
        self._wait()
