"""The gradient all-reduce overlapped with the backward pass (MultiWorkerMirroredStrategy over MPI).

``tape.gradient(loss, variables)`` inside a replica tells this module each variable's gradient as soon as
the ops left to differentiate cannot add to it (tapeflow.autodiff's ``on_gradient`` hook).  The variables
are packed into buckets in reverse order (the last layers' gradients are ready first); a bucket whose
gradients are all ready is copied into a reused host buffer and handed to a helper thread, which runs its
blocking ``MPI_Allreduce`` on a communicator of its own while the main thread goes on differentiating (the
MPI call releases the GIL).  ``apply_gradients`` (or ``get_replica_context().all_reduce``) given exactly
those gradient tensors waits for the buckets and takes their sums; given other tensors (gradients clipped or
changed in between) it reduces those as usual.  Every rank launches the same buckets in the same order
(the same program differentiates the same variables), and the variables' names, shapes and dtypes are
checked across ranks before the first bucket leaves.  Each bucket also carries the number of gradients
that were None on this rank: ranks that disagree raise an error naming the variables.
"""
from __future__ import annotations

import atexit
import queue
import threading

import numpy as np

import tapeflow.core as K
from tapeflow.autodiff import pause_all
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

from . import _collective as C


class _Job:
    __slots__ = ("buf", "done", "error")

    def __init__(self, buf) -> None:
        self.buf, self.done, self.error = buf, threading.Event(), None

    def wait(self):
        self.done.wait()
        if self.error is not None:
            raise self.error


class Reducer:
    """The helper thread and its communicator: runs the submitted in-place sums one after another."""

    def __init__(self, comm) -> None:
        self.comm = comm.Dup()   # its collectives never interleave with the main thread's
        self.size, self.rank = comm.Get_size(), comm.Get_rank()
        self.buffers = C._Buckets()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="tapeflow-allreduce", daemon=True)
        self._thread.start()
        atexit.register(self.close)   # before mpi4py's MPI_Finalize (registered earlier, runs later)

    def _loop(self):
        from mpi4py import MPI

        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                self.comm.Allreduce(MPI.IN_PLACE, job.buf, op=MPI.SUM)
            except BaseException as e:  # noqa: BLE001 - raised where the sum is waited for
                job.error = e
            job.done.set()

    def submit(self, buf) -> _Job:
        job = _Job(buf)
        self._queue.put(job)
        return job

    def close(self):
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


class Step:
    """The all-reduce of one ``tape.gradient`` call's gradients, bucket by bucket as they become ready
    (the tape calls it: ``step(j, grad)``)."""

    def __init__(self, reducer, variables, scale, bytes_per_pack) -> None:
        self.reducer = reducer
        self.variables = variables
        self.scale = scale   # this replica's share of fit's global batch, or None
        n = len(variables)
        self.grads: list = [None] * n
        self.fired = [False] * n
        self.plan: list = []        # [(source indices, wire dtype)], in launch order
        self.bucket_of = [0] * n
        open_: dict = {}
        for j in reversed(range(n)):
            v = variables[j]
            w = C._wire(v.dtype)
            nbytes = v._value._size * np.dtype(w.np).itemsize
            cur = open_.get(w.name)
            if cur is None or (cur[2] + nbytes > bytes_per_pack and cur[0]):
                cur = open_[w.name] = [[], w, 0, len(self.plan)]
                self.plan.append((cur[0], w))
            cur[0].append(j)
            cur[2] += nbytes
            self.bucket_of[j] = cur[3]
        self.left = [len(idx) for idx, _ in self.plan]
        self.jobs: list = [None] * len(self.plan)
        self.nones = [0] * len(self.plan)
        self.results: list | None = None

    # -- during the backward pass -------------------------------------------------------------------
    def __call__(self, j, g):
        if self.fired[j]:
            return
        self.fired[j] = True
        self.grads[j] = g
        b = self.bucket_of[j]
        self.left[b] -= 1
        if self.left[b] == 0:
            self._launch(b)

    def _launch(self, b):
        idx, w = self.plan[b]
        npdt = np.dtype(w.np)
        parts, nones = [], 0
        with pause_all():
            for j in idx:
                g, v = self.grads[j], self.variables[j]
                if g is None:
                    nones += 1
                    parts.append(np.zeros(v._value._size, npdt))
                    continue
                if not isinstance(g, Tensor):
                    g = K.convert_to_tensor(g, v.dtype)
                if self.scale is not None:   # the same op as the synchronous path's, so the same bits
                    g = K.multiply(g, K.cast(self.scale, g.dtype))
                if g._dtype is not w:
                    g = K.cast(g, w)
                parts.append(C._host_view(g))
        parts.append(np.array([nones], npdt))
        buf = self.reducer.buffers.get(sum(p.size for p in parts), npdt)
        np.concatenate(parts, out=buf)
        self.nones[b] = nones
        self.jobs[b] = self.reducer.submit(buf)

    # -- when the gradients are used --------------------------------------------------------------------
    def finish(self):
        """Launch the buckets of gradients the tape never reported (a backward pass that returned early)."""
        for j, f in enumerate(self.fired):
            if not f:
                self(j, None)

    def sums(self) -> list:
        """Every variable's summed gradient (None where this rank's was None), once all buckets are back."""
        if self.results is not None:
            return self.results
        self.finish()
        out: list = [None] * len(self.variables)
        size = self.reducer.size
        for b, (idx, w) in enumerate(self.plan):
            job = self.jobs[b]
            job.wait()
            flat = job.buf
            total = flat[-1]
            if total != size * self.nones[b]:
                names = [self.variables[j].name for j in idx]
                none = [self.variables[j].name for j in idx if self.grads[j] is None]
                raise InvalidArgumentError(
                    f"gradients of tape.gradient: the replicas disagree on which gradients are None: of the "
                    f"variables {names[:6]}, rank {self.reducer.rank} has {len(none)} None {none[:6]}, the {size} "
                    f"ranks {total:g} in all; allowed: the same variables connected to the loss on every replica",
                    "CollectiveReduce")
            o = 0
            for j in idx:
                v, g = self.variables[j], self.grads[j]
                n = v._value._size
                if g is not None:
                    like = g if isinstance(g, Tensor) else K.convert_to_tensor(g, v.dtype)
                    dev = like._dev
                    if dev.kind == "cpu":
                        host = flat[o:o + n].reshape(like._shape)
                        r = C.make(dev.backend.host_ptr(host), host, like._shape, w, dev, n)
                    else:
                        r = C._wrap(flat[o:o + n], like._shape, w, dev, None)
                    out[j] = r if like._dtype is w else K.cast(r, like._dtype)
                o += n
        self.results = out
        del self.jobs   # the buffers are the results' now
        return out

    def match(self, grads, variables=None):
        """The sums for ``grads`` when they are exactly the gradients this step reduces (and, given, of
        ``variables``), else None."""
        pos = {id(g): j for j, g in enumerate(self.grads) if g is not None}
        js = []
        for i, g in enumerate(grads):
            j = pos.get(id(g))
            if j is None or (variables is not None and self.variables[j] is not variables[i]):
                return None
            js.append(j)
        if len(set(js)) != len(js):
            return None
        sums = self.sums()
        return [sums[j] for j in js]


def wants(sources) -> bool:
    """Whether a tape.gradient over ``sources`` is overlapped: floating-point variables, at least one."""
    return bool(sources) and all(type(v) is Variable or isinstance(v, Variable) for v in sources) and \
        all(v.dtype.is_floating for v in sources)
