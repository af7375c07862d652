"""The strategies, replica contexts and distributed datasets (see the package docstring)."""
from __future__ import annotations

import contextlib
import gc
import os
import threading
import typing
import weakref

import numpy as np

import tapeflow.core as K
from tapeflow.autodiff import pause_all
from tapeflow.core import variables as _variables
from tapeflow.core.errors import CancelledError, InvalidArgumentError
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

from . import _collective as C
from . import _faults, _graph, _overlap


# ---- reduce ops, options ------------------------------------------------------------------------

class ReduceOp:
    """How values of several replicas combine: ``ReduceOp.SUM`` or ``ReduceOp.MEAN`` (or the strings).

    >>> import tapeflow as tf
    >>> tf.distribute.ReduceOp.SUM
    'SUM'
    """

    SUM = "SUM"
    MEAN = "MEAN"


def _reduce_op(op, where):
    name = getattr(op, "value", op)
    if isinstance(name, str) and name.upper() in ("SUM", "MEAN"):
        return name.upper()
    raise InvalidArgumentError(f"reduce_op={op!r}; allowed: 'SUM', 'MEAN' or tf.distribute.ReduceOp", where)


class CommunicationOptions:
    """Options of the collectives (``tf.distribute.experimental.CommunicationOptions``).

    ``bytes_per_pack``: gradients are all-reduced in buckets of at most this many bytes (0: the
    default, 4 MiB); ``implementation`` is ``"AUTO"`` or ``"MPI"`` (both MPI); ``overlap_backward``
    (tapeflow's): True starts a bucket's all-reduce as soon as ``tape.gradient`` has its gradients, on a
    helper thread, while the rest of the backward pass runs; False reduces them all at once in
    ``apply_gradients``; None (the default) overlaps when this machine has at least two cores per process
    of the job on it (the helper thread's MPI polls a core: with fewer cores it slows the backward pass).

    >>> import tapeflow as tf
    >>> tf.distribute.experimental.CommunicationOptions(bytes_per_pack=1 << 20).bytes_per_pack
    1048576
    """

    def __init__(self, bytes_per_pack=0, timeout_seconds=None, implementation="AUTO", overlap_backward=None) -> None:
        if isinstance(bytes_per_pack, bool) or not isinstance(bytes_per_pack, (int, np.integer)) or bytes_per_pack < 0:
            raise InvalidArgumentError(f"bytes_per_pack={bytes_per_pack!r}; allowed: an int >= 0", "CollectiveReduce")
        if timeout_seconds is not None:
            raise InvalidArgumentError(
                f"timeout_seconds={timeout_seconds!r}: collectives here do not time out; a worker that fails "
                "aborts the whole job (MPI_Abort) so none waits for it; allowed: None", "CollectiveReduce")
        impl = getattr(implementation, "name", implementation)
        if str(impl).upper() not in ("AUTO", "MPI"):
            raise InvalidArgumentError(f"implementation={implementation!r}; allowed: 'AUTO' or 'MPI'",
                                       "CollectiveReduce")
        if overlap_backward is not None and not isinstance(overlap_backward, bool):
            raise TypeError(f"overlap_backward must be True, False or None, not {type(overlap_backward).__name__}")
        self.overlap_backward = overlap_backward
        self.bytes_per_pack = int(bytes_per_pack)
        self.timeout_seconds = None
        self.implementation = str(impl).upper()


# ---- per-thread state -------------------------------------------------------------------------------

class _State(threading.local):
    def __init__(self) -> None:
        self.scopes = []     # strategies whose scope this thread is in (innermost last)
        self.replica = None  # the ReplicaContext of the replica this thread runs, inside strategy.run


_state = _State()
_chief = [True]   # False on an MPI worker other than rank 0 (checkpoints and summaries are the chief's)


class PerReplica:
    """One value per local replica (what ``MirroredStrategy.run`` returns and its datasets yield).

    >>> import tapeflow as tf
    >>> s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])
    >>> out = s.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group * 1.0)
    >>> [float(v) for v in s.experimental_local_results(out)]
    [0.0, 1.0]
    """

    def __init__(self, values) -> None:
        self.values = tuple(values)

    def __repr__(self):
        return f"PerReplica({list(self.values)!r})"


def _local(x, i):
    """``x`` with every PerReplica replaced by replica ``i``'s value (in tuples, lists and dicts)."""
    if isinstance(x, PerReplica):
        return x.values[i]
    if isinstance(x, (list, tuple)):
        return type(x)(_local(e, i) for e in x)
    if isinstance(x, dict):
        return {k: _local(v, i) for k, v in x.items()}
    return x


def _per_replica(results):
    """Per-replica results as one structure of PerReplica (a tuple of outputs becomes a tuple of PerReplica)."""
    first = results[0]
    if isinstance(first, (list, tuple)) and all(isinstance(r, type(first)) and len(r) == len(first)
                                                for r in results):
        return type(first)(_per_replica([r[j] for r in results]) for j in range(len(first)))
    if isinstance(first, dict) and all(isinstance(r, dict) and r.keys() == first.keys() for r in results):
        return {k: _per_replica([r[k] for r in results]) for k in first}
    return PerReplica(results)


def _rows(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    if isinstance(x, dict) and x:
        x = next(iter(x.values()))
    shape = getattr(x, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else None


def split_batch(batch, n, what="ShardBatch", allow_empty=False):
    """``n`` row-slices of a global batch (nested tuples/lists/dicts of tensors or arrays), TensorFlow's
    rule: as even as possible, the first replicas one row larger when it does not divide.  With
    ``allow_empty`` (evaluation) a batch of fewer rows than replicas leaves the last replicas none."""
    rows = _rows(batch)
    if rows is None:
        raise InvalidArgumentError(f"cannot split a batch of {type(batch).__name__} over {n} replicas; allowed: "
                                   "tensors or arrays with a batch dimension", what)
    if rows < n and not allow_empty:
        raise InvalidArgumentError(f"a global batch of {rows} example(s) cannot be split over {n} replicas; "
                                   f"allowed: batches of at least num_replicas_in_sync = {n} examples "
                                   "(batch with drop_remainder=True)", what)
    base, extra = divmod(rows, n)
    bounds, lo = [], 0
    for r in range(n):
        hi = lo + base + (1 if r < extra else 0)
        bounds.append((lo, hi))
        lo = hi

    def cut(x, lo, hi):
        if isinstance(x, (list, tuple)):
            return type(x)(cut(e, lo, hi) for e in x)
        if isinstance(x, dict):
            return {k: cut(v, lo, hi) for k, v in x.items()}
        if x is None:
            return None
        if not isinstance(x, (Tensor, Variable)):
            x = K.convert_to_tensor(x)
        return x[lo:hi]

    return [cut(batch, lo, hi) for lo, hi in bounds], rows


# ---- replica contexts ------------------------------------------------------------------------------

class ReplicaContext:
    """The replica running now (inside ``strategy.run``): its id, and collectives with the other replicas.

    >>> import tapeflow as tf
    >>> ctx = tf.distribute.get_replica_context()      # outside any strategy: the one default replica
    >>> ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync
    (0, 1)
    >>> float(ctx.all_reduce("SUM", tf.constant(2.0)))
    2.0
    """

    def __init__(self, strategy, replica_id) -> None:
        self._strategy = strategy
        self._id = replica_id
        self._batch = None   # (local rows, global rows) of the step fit runs now

    @property
    def strategy(self):
        return self._strategy

    @property
    def replica_id_in_sync_group(self) -> int:
        return self._id

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    def all_reduce(self, reduce_op, value):
        """``value`` (a tensor, or a list/tuple/dict of tensors) summed or averaged over the replicas."""
        op = _reduce_op(reduce_op, "CollectiveReduce")
        flat, rebuild = _flatten(value)
        ts = [t if isinstance(t, Tensor) else K.convert_to_tensor(t) for t in flat]
        # MPI's all-reduce is a primitive tapes record (its gradient: the all-reduce of the gradient)
        with contextlib.nullcontext() if self._strategy._records_all_reduce else pause_all():
            out = self._strategy._all_reduce(self, ts, [f"all_reduce/{i}" for i in range(len(ts))])
            if op == "MEAN":
                n = self.num_replicas_in_sync
                out = [K.truediv(t, K.cast(n, t.dtype)) if n > 1 else t for t in out]
        return rebuild(out)

    def all_gather(self, value, axis):
        """Every replica's ``value`` concatenated along ``axis``, in replica order."""
        t = value if isinstance(value, Tensor) else K.convert_to_tensor(value)
        with pause_all():
            return K.concat(self._strategy._all_gather(self, t), axis)

    def _apply_gradients(self, optimizer, pairs, global_step, apply_fn):
        return self._strategy._apply_gradients(self, optimizer, pairs, global_step, apply_fn)

    def _scale_grads(self, grads):
        """In ``fit``: each replica's gradients of its mean loss, weighted by its share of the global batch,
        so that their sum is the gradient of the mean over the global batch (Keras's rule)."""
        if self._batch is None or self.num_replicas_in_sync == 1:
            return grads
        local, total = self._batch
        return [K.multiply(g, K.cast(local / total, g.dtype)) for g in grads]


def _flatten(value):
    if isinstance(value, (list, tuple)):
        items = list(value)
        return items, lambda out: type(value)(out)
    if isinstance(value, dict):
        keys = list(value)
        return [value[k] for k in keys], lambda out: dict(zip(keys, out))
    return [value], lambda out: out[0]


# ---- strategies ---------------------------------------------------------------------------------

class _Scope:
    def __init__(self, strategy, sync=True) -> None:
        self._strategy, self._sync, self._start = strategy, sync, None

    def __enter__(self):
        stack = _state.scopes
        if stack and stack[-1] is not self._strategy and not isinstance(stack[-1], _DefaultStrategy):
            raise ValueError("Mixing different tf.distribute.Strategy objects: a scope of "
                             f"{type(stack[-1]).__name__} is open; leave it before entering another strategy's")
        if self._sync and self._strategy._needs_sync and self._strategy not in stack:
            self._start = next(_variables._uid)   # variables created from here on are this scope's
        stack.append(self._strategy)
        return self._strategy

    def __exit__(self, tp, value, tb):
        _state.scopes.pop()
        if self._start is not None and tp is None:
            self._strategy._sync_created_since(self._start)
        return False


class Strategy:
    """What every strategy offers (``tf.distribute.Strategy``): ``scope``, ``run``, ``reduce``,
    ``gather``, ``experimental_distribute_dataset``, ``experimental_local_results`` and
    ``num_replicas_in_sync``.

    >>> import tapeflow as tf
    >>> isinstance(tf.distribute.get_strategy(), tf.distribute.Strategy)   # the default strategy too
    True
    """

    _needs_sync = False
    _records_all_reduce = False   # whether _all_reduce is a primitive that tapes record

    @property
    def num_replicas_in_sync(self) -> int:
        raise TypeError(f"{type(self).__name__} must define num_replicas_in_sync")

    def scope(self) -> _Scope:
        """A context in which variables are created for this strategy and ``get_strategy()`` returns it."""
        return _Scope(self)

    def experimental_local_results(self, value) -> tuple:
        """The values of the replicas of this process, as a tuple."""
        if isinstance(value, PerReplica):
            return value.values
        return (value,)

    def _in_replica(self, ctx, fn, args, kwargs):
        prev = _state.replica
        _state.replica = ctx
        _state.scopes.append(self)
        try:
            return fn(*args, **kwargs)
        finally:
            _state.scopes.pop()
            _state.replica = prev

    def experimental_distribute_dataset(self, dataset, options=None) -> DistributedDataset:
        """The dataset's global batches, each split over the replicas (TensorFlow's rule: a global batch
        of 32 on 2 replicas is 16 rows per replica)."""
        if options is not None:
            raise InvalidArgumentError(f"options={options!r}: there are no input options here; allowed: None",
                                       "DistributeDataset")
        if not hasattr(dataset, "__iter__"):
            raise TypeError(f"experimental_distribute_dataset takes a dataset (an iterable of batches), "
                            f"not {type(dataset).__name__}")
        return DistributedDataset(self, dataset)

    def reduce(self, reduce_op, value, axis=None) -> Tensor:
        """Per-replica ``value`` combined over all replicas: ``"SUM"`` or ``"MEAN"``; with ``axis``, also
        over that axis of each replica's value (the mean is then over all the rows of all replicas)."""
        op = _reduce_op(reduce_op, "StrategyReduce")
        parts = list(self._local_parts(value))
        with pause_all():
            counts, traced = [], _graph.tracing()
            for i, p in enumerate(parts):
                t = p if isinstance(p, Tensor) else K.convert_to_tensor(p)
                if axis is not None:
                    # in a tf.function the rows are counted when the graph runs (the batch may have no static size)
                    counts.append(K.shape(t)[axis] if traced else int(t.shape[axis]))
                    t = K.reduce_sum(t, axis)
                parts[i] = t
            total = self._sum_across(parts)
            if op == "SUM":
                return total
            if axis is None:
                n = self.num_replicas_in_sync
            elif traced:
                n = self._sum_across([K.cast(c, total.dtype) for c in counts])
            else:
                n = self._count_across(sum(counts))
            return K.truediv(total, K.cast(n, total.dtype))

    def gather(self, value, axis):
        """Every replica's ``value`` concatenated along ``axis`` (in replica order)."""
        parts = [p if isinstance(p, Tensor) else K.convert_to_tensor(p) for p in self._local_parts(value)]
        with pause_all():
            return K.concat(self._gather_across(parts), axis)

    # -- fit's hooks (tapeflow-nn) -------------------------------------------------------------------------
    def _shared_seed(self, seed, shuffle):
        return seed

    def _fit_step(self, model, data):
        """One step of ``fit`` on a global batch (one replica in this thread: the model's own step)."""
        return model._step_function("train_step")(data)

    def _test_step(self, model, data):
        """One step of ``evaluate`` (and of fit's validation) on a global batch: here the model's own step."""
        return model._step_function("test_step")(data)

    def _aggregate_logs(self, metrics):
        return {m.name: float(m.result()) for m in metrics}


class _DefaultStrategy(Strategy):
    """The strategy outside any scope: one replica, in this thread."""

    @property
    def num_replicas_in_sync(self):
        return 1

    def run(self, fn, args=(), kwargs=None, options=None) -> typing.Any:
        return fn(*args, **(kwargs or {}))

    def _local_parts(self, value):
        return [_local(value, 0)]

    def _sum_across(self, parts):
        return parts[0]

    def _count_across(self, n):
        return n

    def _gather_across(self, parts):
        return parts

    def _all_reduce(self, ctx, tensors, names):
        return list(tensors)

    def _all_gather(self, ctx, t):
        return [t]

    def _apply_gradients(self, ctx, optimizer, pairs, global_step, apply_fn):
        return apply_fn(pairs, global_step)


_DEFAULT = _DefaultStrategy()
_DEFAULT_REPLICA = ReplicaContext(_DEFAULT, 0)


class _IdentitySet:
    """Variables by identity (a variable's ``==`` is element-wise), without keeping them alive."""

    def __init__(self) -> None:
        self._refs = {}

    def has(self, v) -> bool:
        r = self._refs.get(id(v))
        return r is not None and r() is v

    def update(self, variables):
        for v in variables:
            self._refs[id(v)] = weakref.ref(v)


class MPIClusterResolver:
    """The cluster as MPI sees it: ``task_type`` ``"worker"``, ``task_id`` (the rank), ``num_workers``.

    >>> import tapeflow as tf
    >>> r = tf.distribute.MultiWorkerMirroredStrategy().cluster_resolver   # no mpiexec: one worker
    >>> r.task_type, r.task_id, r.num_workers
    ('worker', 0, 1)
    """

    task_type = "worker"
    rpc_layer = "mpi"

    def __init__(self, task_id, num_workers) -> None:
        self.task_id, self.num_workers = int(task_id), int(num_workers)

    def __repr__(self):
        return f"MPIClusterResolver(task_id={self.task_id}, num_workers={self.num_workers})"


def _eager_only(what, op):
    """The collectives without a graph node: a tf.function being traced has no values (yet) to send."""
    if _graph.tracing():
        raise InvalidArgumentError(
            f"{what} of MultiWorkerMirroredStrategy inside a tf.function being traced: it runs eagerly, on values; "
            "allowed inside a tf.function: strategy.run, strategy.reduce, the replica context's all_reduce and "
            "optimizer.apply_gradients (call gather outside the function)", op)


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data parallelism over processes: one replica per MPI process.

    Launch ``mpiexec -n N python train.py``; as a plain ``python train.py`` it is one replica.
    Variables created under ``scope()`` are broadcast from rank 0 when the scope ends, gradients
    given to ``optimizer.apply_gradients`` inside ``run`` (or ``fit``) are summed over the workers in
    buckets of ``communication_options.bytes_per_pack`` bytes, and an uncaught exception on any
    worker prints its traceback and aborts the job.

    >>> import tapeflow as tf
    >>> strategy = tf.distribute.MultiWorkerMirroredStrategy()
    >>> strategy.num_replicas_in_sync, strategy.cluster_resolver.task_id
    (1, 0)
    >>> with strategy.scope():
    ...     v = tf.Variable(1.0)
    >>> float(strategy.reduce("SUM", strategy.run(lambda: v * 2.0), axis=None))
    2.0
    """

    def __init__(self, cluster_resolver=None, communication_options=None) -> None:
        if cluster_resolver is not None and not isinstance(cluster_resolver, MPIClusterResolver):
            raise TypeError(f"cluster_resolver must be None or an MPIClusterResolver (the cluster is MPI's), "
                            f"not {type(cluster_resolver).__name__}")
        if communication_options is None:
            communication_options = CommunicationOptions()
        if not isinstance(communication_options, CommunicationOptions):
            raise TypeError("communication_options must be a tf.distribute.experimental.CommunicationOptions, not "
                            f"{type(communication_options).__name__}")
        try:
            from mpi4py import MPI
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ImportError(f"MultiWorkerMirroredStrategy needs mpi4py and an MPI library: pip install "
                              f"tapeflow-distribute (brings mpi4py and mpich) ({e})") from None
        self._comm = C.MPIComm(MPI.COMM_WORLD.Dup())
        self._records_all_reduce = True
        if cluster_resolver is not None and (cluster_resolver.task_id, cluster_resolver.num_workers) != \
                (self._comm.rank, self._comm.size):
            raise InvalidArgumentError(f"{cluster_resolver!r} does not match MPI (rank {self._comm.rank} of "
                                       f"{self._comm.size}); allowed: the resolver of this MPI job or None",
                                       "MultiWorkerMirroredStrategy")
        self.cluster_resolver = MPIClusterResolver(self._comm.rank, self._comm.size)
        self.communication_options = communication_options
        self._bytes = communication_options.bytes_per_pack or C.DEFAULT_BYTES_PER_PACK
        self._synced = _IdentitySet()
        self._needs_sync = self._comm.size > 1
        if self._comm.size > 1:
            _faults.install(self._comm.rank)
            _chief[0] = self._comm.rank == 0
        self._ctx = ReplicaContext(self, self._comm.rank)
        self._overlap = None   # the helper thread that all-reduces buckets during the backward pass
        self._pending = []     # the last tape.gradient calls' overlapped all-reduces, until their sums are used
        overlap = communication_options.overlap_backward
        if overlap is None and self._comm.size > 1:   # two cores per process of the job on this machine
            local = self._comm.comm.Split_type(MPI.COMM_TYPE_SHARED)
            overlap = len(os.sched_getaffinity(0)) >= 2 * local.Get_size()
            local.Free()
        if self._comm.size > 1 and overlap and MPI.Query_thread() == MPI.THREAD_MULTIPLE:
            from tapeflow.autodiff import tape as _tape

            self._overlap = _overlap.Reducer(self._comm.comm)
            _tape.on_gradient[0] = _on_gradient

    @property
    def num_replicas_in_sync(self) -> int:
        return self._comm.size

    def _begin_overlap(self, ctx, variables):
        """The overlapped all-reduce of one ``tape.gradient`` over ``variables`` (checked across ranks first)."""
        with pause_all():
            sig = [(v.name, tuple(v.shape), v.dtype.name + ("" if self._synced.has(v) else " (not yet broadcast)"))
                   for v in variables]
            self._comm.check(sig, "gradients of tape.gradient (all-reduced during the backward pass)",
                             "CollectiveReduce")
        scale = None
        if ctx._batch is not None:
            local, total = ctx._batch
            scale = local / total
        step = _overlap.Step(self._overlap, list(variables), scale, self._bytes)
        self._pending = self._pending[-3:] + [step]   # (a GAN's two gradients, then two apply_gradients)
        return step

    def _overlapped(self, tensors, variables=None):
        """The sums of ``tensors`` made during a recent tape.gradient, when they are its gradients; else None."""
        for step in reversed(self._pending):
            summed = step.match(tensors, variables)
            if summed is not None:
                self._pending.remove(step)
                return summed
        return None

    def run(self, fn, args=(), kwargs=None, options=None) -> typing.Any:
        """Call ``fn(*args, **kwargs)`` as this process's replica (per-replica values give its own part)."""
        if options is not None:
            raise InvalidArgumentError(f"options={options!r}: there are no run options here; allowed: None",
                                       "StrategyRun")
        ctx = ReplicaContext(self, self._comm.rank)
        return self._in_replica(ctx, fn, _local(args, 0), _local(kwargs or {}, 0))

    def _local_parts(self, value):
        return [_local(value, 0)]

    def _sum_across(self, parts):
        if _graph.tracing():   # a node of the tf.function's graph, run with it
            return _graph.all_reduce(self._comm, parts, ["reduce"], "strategy.reduce", self._bytes)[0]
        return self._comm.all_reduce(parts, self._bytes)[0]

    def _count_across(self, n):
        return int(self._comm.comm.allreduce(int(n)))

    def _gather_across(self, parts):
        _eager_only("strategy.gather", "CollectiveGather")
        return self._comm.all_gather(parts[0])

    def _all_reduce(self, ctx, tensors, names):
        if not _graph.tracing():
            summed = self._overlapped(tensors)   # gradients of a tape.gradient: summed during it
            if summed is not None:
                return summed
        # the primitive: run now, or in a tf.function a node of its graph, run with it
        return _graph.all_reduce(self._comm, tensors, names, "all_reduce", self._bytes)

    def _all_gather(self, ctx, t):
        _eager_only("all_gather", "CollectiveGather")
        self._comm.check([("all_gather", tuple(t._shape[1:]), t._dtype.name)], "all_gather", "CollectiveGather")
        return self._comm.all_gather(t)

    # -- variables --------------------------------------------------------------------------------------
    def _broadcast_variables(self, variables):
        """Every variable takes rank 0's value (one bucketed broadcast); they count as synchronised."""
        if not variables or self._comm.size == 1:
            self._synced.update(variables)
            return
        with pause_all():
            values = [v._value for v in variables]
            self._comm.check(C.signature([v.name for v in variables], values),
                             "broadcast of the variables created under strategy.scope()", "CollectiveBcast")
            new = self._comm.broadcast(values, 0, self._bytes)
            if self._comm.rank != 0:
                for v, t in zip(variables, new):
                    v.assign(t)
        self._synced.update(variables)

    def _sync_created_since(self, start):
        found = [o for o in gc.get_objects() if isinstance(o, Variable) and o._id > start and not self._synced.has(o)]
        found.sort(key=lambda v: v._id)
        self._broadcast_variables(found)

    def _apply_gradients(self, ctx, optimizer, pairs, global_step, apply_fn):
        if self._comm.size == 1:
            return apply_fn(pairs, global_step)
        with pause_all():
            raw = [g if isinstance(g, Tensor) else K.convert_to_tensor(g) for g, _ in pairs]
            variables = [v for _, v in pairs]
            summed = None if _graph.tracing() else self._overlapped(raw, variables)
            if summed is not None:   # all-reduced (and scaled) during the backward pass
                self._broadcast_variables([v for v in variables if not self._synced.has(v)])
            else:
                summed = self._reduce_gradients(ctx, optimizer, raw, variables)
        return apply_fn(list(zip(summed, variables)), global_step)

    def _reduce_gradients(self, ctx, optimizer, raw, variables):
        """The synchronous path: this replica's (scaled) gradients checked across ranks, then summed."""
        grads = ctx._scale_grads(raw)
        what = f"gradients of {type(optimizer).__name__}.apply_gradients"

        def prepare(values):   # on the gradients' values: eagerly now, in a tf.function each time its graph runs
            fresh = [not self._synced.has(v) for v in variables]
            sig = [(v.name, tuple(g._shape), g._dtype.name + (" (not yet broadcast)" if f else ""))
                   for g, v, f in zip(values, variables, fresh)]
            self._comm.check(sig, what, "CollectiveReduce")
            if any(fresh):   # created outside scope(): rank 0's value before the first update
                self._broadcast_variables([v for v, f in zip(variables, fresh) if f])

        if _graph.tracing():   # a node of the tf.function's graph, run with it
            return _graph.all_reduce(self._comm, grads, [v.name for v in variables], what, self._bytes, prepare)
        prepare(grads)
        return self._comm.all_reduce(grads, self._bytes)

    # -- fit's hooks ----------------------------------------------------------------------------------------
    def _shared_seed(self, seed, shuffle):
        if seed is None and shuffle and self._comm.size > 1:
            # every worker shuffles alike: the same global batches, each split over the workers
            seed = self._comm.bcast_object(int(K.random_uniform((), 0, 2 ** 31 - 1, dtype=K.int64)))
        return seed

    def _fit_step(self, model, data):
        """One step of ``fit`` on a global batch: this worker's rows, then the logs over all workers."""
        shards, total = split_batch(data, self._comm.size, "Fit")
        ctx = ReplicaContext(self, self._comm.rank)
        ctx._batch = (_rows(shards[self._comm.rank]), total)
        returned = self._in_replica(ctx, model.train_step, (shards[self._comm.rank],), {})
        return returned if isinstance(returned, dict) else self._aggregate_logs(model.metrics)

    def _test_step(self, model, data):
        """One step of ``evaluate`` (and of fit's validation): this worker's rows of the global batch (the
        last workers get none of a batch shorter than the job), then the metrics over all workers."""
        if self._comm.size == 1:
            return super()._test_step(model, data)
        shards, _ = split_batch(data, self._comm.size, "Evaluate", allow_empty=True)
        mine = shards[self._comm.rank]
        returned = None
        if _rows(mine):   # a worker without rows adds nothing to the metric states
            returned = self._in_replica(ReplicaContext(self, self._comm.rank), model._step_function("test_step"),
                                        (mine,), {})
        return returned if isinstance(returned, dict) else self._aggregate_logs(model.metrics)

    def _aggregate_logs(self, metrics):
        if self._comm.size == 1:
            return super()._aggregate_logs(metrics)
        state = [v for m in metrics for v in m.variables]
        with pause_all():
            local = [v._value for v in state]
            self._comm.check(C.signature([v.name for v in state], local), "metric states", "CollectiveReduce")
            summed = self._comm.all_reduce(local, self._bytes)
            try:
                for v, t in zip(state, summed):
                    v._value = t
                return {m.name: float(m.result()) for m in metrics}
            finally:
                for v, t in zip(state, local):
                    v._value = t


class MirroredStrategy(Strategy):
    """Synchronous data parallelism over the devices of this process: one replica (a thread) per device.

    ``devices`` are names such as ``"cpu:0"``, ``"opencl:0"``, ``"cuda:1"`` (default: every GPU,
    else the CPU).  Variables are stored once (where they are created) and read by every replica
    on its device; ``apply_gradients`` inside ``run`` sums the replicas' gradients (in replica
    order, with tapeflow ops) and applies the update once.

    >>> import tapeflow as tf
    >>> strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])
    >>> strategy.num_replicas_in_sync
    2
    >>> rid = lambda: tf.distribute.get_replica_context().replica_id_in_sync_group
    >>> per_replica = strategy.run(lambda: tf.constant(1.0) + rid())
    >>> float(strategy.reduce("SUM", per_replica, axis=None))
    3.0
    """

    def __init__(self, devices=None, cross_device_ops=None) -> None:
        from tapeflow.core import devices as _dev

        if cross_device_ops is not None:
            raise InvalidArgumentError(f"cross_device_ops={cross_device_ops!r}: replicas of one process reduce "
                                       "with tapeflow ops; allowed: None", "MirroredStrategy")
        if devices is None:
            devices = [d.name for d in _dev.gpus()] or ["cpu:0"]
        if isinstance(devices, str) or not isinstance(devices, (list, tuple)) or not devices:
            raise TypeError(f"devices must be a non-empty list of device names, not {devices!r}")
        self._devices = tuple(_dev.get(d) for d in devices)
        self._group = C.ThreadGroup(len(self._devices))

    @property
    def extended_devices(self) -> tuple:
        """The devices of the replicas, in replica order."""
        return tuple(d.name for d in self._devices)

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._devices)

    def run(self, fn, args=(), kwargs=None, options=None) -> typing.Any:
        """Call ``fn`` once per replica, each in its thread under its device, with its part of per-replica
        ``args``; returns per-replica results (PerReplica), a plain result for one replica."""
        if options is not None:
            raise InvalidArgumentError(f"options={options!r}: there are no run options here; allowed: None",
                                       "StrategyRun")
        return self._run(fn, args, kwargs or {})

    def _run(self, fn, args, kwargs, batch=None, raw=False):
        n = len(self._devices)
        results, errors = [None] * n, [None] * n
        self._group.reset()

        def body(i):
            ctx = ReplicaContext(self, i)
            if batch is not None:
                ctx._batch = (batch[0][i], batch[1])
            try:
                with K.device(self._devices[i].name):
                    results[i] = self._in_replica(ctx, fn, _local(args, i), _local(kwargs, i))
            except BaseException as e:  # noqa: BLE001 - raised by run() once every replica stopped
                errors[i] = e
                self._group.abort()   # the other replicas stop waiting in their collectives

        threads = [threading.Thread(target=body, args=(i,), name=f"replica-{i}", daemon=True) for i in range(1, n)]
        for t in threads:
            t.start()
        body(0)
        for t in threads:
            t.join()
        failed = [e for e in errors if e is not None]
        if failed:
            real = [e for e in failed if not isinstance(e, CancelledError)]
            raise (real or failed)[0]
        if raw:
            return results
        return results[0] if n == 1 else _per_replica(results)

    def _local_parts(self, value):
        if isinstance(value, PerReplica):
            return list(value.values)
        return [value] * len(self._devices)

    def _sum_across(self, parts):
        return parts[0] if len(parts) == 1 else K.add_n(parts)

    def _count_across(self, n):
        return n

    def _gather_across(self, parts):
        return parts

    def _combine(self, what):
        def combine(slots):
            sigs = [C.signature([f"{what}/{j}" for j in range(len(s))], s) for s in slots]
            if any(s != sigs[0] for s in sigs[1:]):
                raise C.mismatch_error(sigs, what, "CollectiveReduce")
            return [K.add_n([s[j] for s in slots]) if len(slots) > 1 else slots[0][j] for j in range(len(slots[0]))]
        return combine

    def _all_reduce(self, ctx, tensors, names):
        return self._group.exchange(ctx._id, list(tensors), self._combine("all_reduce"))

    def _all_gather(self, ctx, t):
        return self._group.exchange(ctx._id, t, list)

    def _apply_gradients(self, ctx, optimizer, pairs, global_step, apply_fn):
        if len(self._devices) == 1:
            return apply_fn(pairs, global_step)
        with pause_all():
            grads = ctx._scale_grads([g if isinstance(g, Tensor) else K.convert_to_tensor(g) for g, _ in pairs])
            variables = [v for _, v in pairs]

            def combine(slots):
                sigs = [[(v.name, tuple(g._shape), g._dtype.name) for g, v in zip(gs, vs)] for gs, vs in slots]
                if any(s != sigs[0] for s in sigs[1:]):
                    raise C.mismatch_error(sigs, f"gradients of {type(optimizer).__name__}.apply_gradients",
                                           "CollectiveReduce")
                summed = [K.add_n([gs[j] for gs, _ in slots]) for j in range(len(slots[0][0]))]
                # the one update, by the thread that combines (the variables are shared)
                return apply_fn(list(zip(summed, slots[0][1])), global_step)

            return self._group.exchange(ctx._id, (grads, variables), combine)

    # -- fit's hooks -------------------------------------------------------------------------------------------
    def _fit_step(self, model, data):
        """One step of ``fit`` on a global batch: a part per replica; the metrics are shared by the replicas."""
        shards, total = split_batch(data, len(self._devices), "Fit")
        out = self._run(model.train_step, (PerReplica(shards),), {}, batch=([_rows(s) for s in shards], total),
                        raw=True)
        return out[0] if isinstance(out[0], dict) else self._aggregate_logs(model.metrics)


class DistributedDataset:
    """A dataset whose global batches are split over the replicas: an MPI worker iterates its own rows of
    each batch, MirroredStrategy gets a PerReplica of the parts.

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])
    >>> batches = [np.arange(4.0)]                       # any iterable of global batches
    >>> dist = s.experimental_distribute_dataset(batches)
    >>> [[v.numpy().tolist() for v in s.experimental_local_results(b)] for b in dist]
    [[[0.0, 1.0], [2.0, 3.0]]]
    """

    def __init__(self, strategy, dataset) -> None:
        self._strategy, self._dataset = strategy, dataset

    def __iter__(self) -> typing.Iterator[typing.Any]:  # (declared: a batch or a PerReplica of its parts)
        s = self._strategy
        for batch in self._dataset:
            if isinstance(s, MultiWorkerMirroredStrategy):
                if s._comm.size == 1:
                    yield batch
                else:
                    yield split_batch(batch, s._comm.size, "DistributeDataset")[0][s._comm.rank]
            elif isinstance(s, MirroredStrategy) and len(s._devices) > 1:
                yield _per_replica(split_batch(batch, len(s._devices), "DistributeDataset")[0])
            else:
                yield batch


# ---- the module-level functions --------------------------------------------------------------------

def get_strategy():
    """The strategy whose scope (or ``run``) this thread is in; the default one-replica strategy otherwise.

    >>> import tapeflow as tf
    >>> s = tf.distribute.MirroredStrategy(["cpu:0"])
    >>> with s.scope():
    ...     tf.distribute.get_strategy() is s
    True
    """
    return _state.scopes[-1] if _state.scopes else _DEFAULT


def has_strategy() -> bool:
    """Whether this thread is inside a (non-default) strategy's scope.

    >>> import tapeflow as tf
    >>> tf.distribute.has_strategy()
    False
    """
    return bool(_state.scopes)


def in_cross_replica_context() -> bool:
    """Inside a strategy's scope but not inside ``run`` (TensorFlow's cross-replica context).

    >>> import tapeflow as tf
    >>> with tf.distribute.MirroredStrategy(["cpu:0"]).scope():
    ...     tf.distribute.in_cross_replica_context()
    True
    """
    return bool(_state.scopes) and _state.replica is None


def get_replica_context():
    """The running replica's context inside ``strategy.run``; None in a strategy's cross-replica scope;
    the default one-replica context outside any strategy (TensorFlow's rules).

    >>> import tapeflow as tf
    >>> s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])
    >>> ids = s.run(lambda: tf.constant(tf.distribute.get_replica_context().replica_id_in_sync_group))
    >>> [int(v) for v in s.experimental_local_results(ids)]
    [0, 1]
    """
    if _state.replica is not None:
        return _state.replica
    if _state.scopes:
        return None
    return _DEFAULT_REPLICA


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None) -> Tensor:
    """``sum(per_example_loss * sample_weight) / global_batch_size``: the loss each replica minimises so that
    the summed gradients are those of the mean over the global batch (``tf.nn.compute_average_loss``).

    Without ``global_batch_size`` it is this replica's batch size times ``num_replicas_in_sync``.

    >>> import tapeflow as tf
    >>> float(tf.distribute.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), global_batch_size=6))
    1.0
    """
    loss = per_example_loss if isinstance(per_example_loss, Tensor) else K.convert_to_tensor(per_example_loss)
    if not loss.dtype.is_floating:
        raise InvalidArgumentError(f"per_example_loss is {loss.dtype.name}; allowed: a floating-point tensor",
                                   "ComputeAverageLoss")
    if sample_weight is not None:
        loss = K.multiply(loss, K.cast(sample_weight, loss.dtype))
    if global_batch_size is None:
        ctx = get_replica_context()
        n = 1 if ctx is None else ctx.num_replicas_in_sync
        global_batch_size = (int(loss.shape[0]) if loss.shape else 1) * n
    if isinstance(global_batch_size, bool) or not isinstance(global_batch_size, (int, np.integer)) \
            or global_batch_size <= 0:
        raise InvalidArgumentError(f"global_batch_size={global_batch_size!r}; allowed: a positive int",
                                   "ComputeAverageLoss")
    return K.truediv(K.reduce_sum(loss), K.cast(int(global_batch_size), loss.dtype))


def scale_regularization_loss(regularization_loss):
    """``regularization_loss / num_replicas_in_sync`` (``tf.nn.scale_regularization_loss``): summed over the
    replicas it counts once.

    >>> import tapeflow as tf
    >>> float(tf.distribute.scale_regularization_loss(tf.constant(4.0)))
    4.0
    """
    loss = regularization_loss if isinstance(regularization_loss, Tensor) else K.convert_to_tensor(regularization_loss)
    ctx = get_replica_context()
    n = 1 if ctx is None else ctx.num_replicas_in_sync
    return loss if n == 1 else K.truediv(loss, K.cast(n, loss.dtype))


# ---- what tapeflow-nn asks (it never imports this package: it looks it up in sys.modules) ---------------------

def _update_context():
    """The replica context whose replicas sum gradients before an update: the running replica inside
    ``run``, or this process's replica inside a MultiWorkerMirroredStrategy's scope; else None."""
    ctx = _state.replica
    if ctx is not None:
        return None if ctx._strategy is _DEFAULT else ctx
    if _state.scopes and isinstance(_state.scopes[-1], MultiWorkerMirroredStrategy):
        return _state.scopes[-1]._ctx
    return None


def _on_gradient(sources):
    """tapeflow.autodiff's hook, called by every tape.gradient: the overlapped all-reduce of its gradients when
    a MultiWorkerMirroredStrategy replica differentiates variables, else None."""
    ctx = _update_context()
    if ctx is None:
        return None
    strategy = ctx._strategy
    if getattr(strategy, "_overlap", None) is None or not _overlap.wants(sources) or not K.executing_eagerly():
        return None
    return strategy._begin_overlap(ctx, sources)


def _current_strategy():
    return _state.scopes[-1] if _state.scopes else None


def _is_chief() -> bool:
    return _chief[0]
