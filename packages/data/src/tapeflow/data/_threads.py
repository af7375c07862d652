"""Background work: prefetching and parallel map on daemon threads.

Workers never outlive their use: an iterator that is closed, garbage collected or abandoned at
interpreter exit tells its threads to stop, and every thread is a daemon, so a worker stuck in
user code cannot hold the process open.  An exception raised in a worker travels to the
iterating thread as the same exception object, so its traceback still shows the frames where it
was raised (e.g. inside the user's ``map`` function).
"""
from __future__ import annotations

import atexit
import collections
import contextlib
import queue
import threading
import time
import weakref

_live: weakref.WeakSet = weakref.WeakSet()
_live_lock = threading.Lock()

_ITEM, _END, _ERROR = 0, 1, 2


def _register(obj):
    with _live_lock:
        _live.add(obj)


@atexit.register
def _shutdown_all():  # pragma: no cover - runs at interpreter exit
    with _live_lock:
        objs = list(_live)
    for o in objs:
        o.stop()
    deadline = time.monotonic() + 1.0  # workers stuck in user code are daemons: exit without them
    for o in objs:
        o.join(max(0.0, deadline - time.monotonic()))


def _put(q, stop, item) -> bool:
    """Put ``item`` unless ``stop`` is set first; False when stopped."""
    while not stop.is_set():
        try:
            q.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def _close_quietly(it):
    """Close an iterator while shutting down; its errors have nowhere useful to go."""
    close = getattr(it, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            close()


def _prefetch_worker(make_iter, q, stop):
    it = None
    try:
        it = make_iter()
        for item in it:
            if not _put(q, stop, (_ITEM, item)):
                return
            item = None
        _put(q, stop, (_END, None))
    except BaseException as e:  # noqa: BLE001 - forwarded to the consumer, which re-raises it
        _put(q, stop, (_ERROR, e))
    finally:
        _close_quietly(it)


class Prefetcher:
    """An iterator that runs ``make_iter()`` on a daemon thread, ``size`` elements ahead."""

    def __init__(self, make_iter, size: int) -> None:
        self._q = queue.Queue(max(1, size))
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=_prefetch_worker, args=(make_iter, self._q, self._stop),
                                        name="tapeflow-data-prefetch", daemon=True)
        _register(self)
        self._thread.start()

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        kind, value = self._q.get()
        if kind == _ITEM:
            return value
        self._done = True
        self.stop()
        if kind == _END:
            raise StopIteration
        raise value

    def ready(self) -> bool:
        """Whether :meth:`__next__` would return (an item, the end or an error) without waiting."""
        return self._done or not self._q.empty()

    def stop(self):
        self._stop.set()
        try:  # unblock a worker waiting on a full queue
            while True:
                self._q.get_nowait()
        except queue.Empty:
            pass

    close = stop

    def join(self, timeout=None):
        self._thread.join(timeout)

    def __del__(self):
        self.stop()


# ---- parallel map ------------------------------------------------------------

class _Task:
    __slots__ = ("arg", "event", "fn", "ok", "seq", "value")

    def __init__(self, fn, arg, seq) -> None:
        self.fn, self.arg, self.seq = fn, arg, seq
        self.ok = None
        self.value = None
        self.event = threading.Event()


def _pool_worker(tasks, done, stop):
    while not stop.is_set():
        try:
            task = tasks.get(timeout=0.1)
        except queue.Empty:
            continue
        if task is None:
            return
        try:
            task.value = task.fn(task.arg)
            task.ok = True
        except BaseException as e:  # noqa: BLE001 - re-raised in the consuming thread
            task.value = e
            task.ok = False
        task.arg = None
        task.event.set()
        if done is not None:
            done.put(task.seq)


class ParallelMap:
    """``fn`` over an input iterator on ``n`` daemon threads, in input order when ``deterministic``."""

    def __init__(self, it, fn, n: int, deterministic: bool = True) -> None:
        self._it, self._fn, self._n = it, fn, max(1, n)
        self._det = deterministic
        self._tasks = queue.SimpleQueue()
        self._done = queue.SimpleQueue()
        self._stop = threading.Event()
        self._pending = collections.OrderedDict()
        self._seq = 0
        self._exhausted = False
        done = None if deterministic else self._done
        self._threads = [threading.Thread(target=_pool_worker, args=(self._tasks, done, self._stop),
                                          name=f"tapeflow-data-map-{i}", daemon=True) for i in range(self._n)]
        _register(self)
        for t in self._threads:
            t.start()

    def __iter__(self):
        return self

    def _fill(self):
        while not self._exhausted and len(self._pending) < 2 * self._n:
            try:
                arg = next(self._it)
            except StopIteration:
                self._exhausted = True
                break
            except BaseException:
                self.stop()
                raise
            task = _Task(self._fn, arg, self._seq)
            self._pending[self._seq] = task
            self._seq += 1
            self._tasks.put(task)

    def __next__(self):
        self._fill()
        if not self._pending:
            self.stop()
            raise StopIteration
        if self._det:
            _, task = self._pending.popitem(last=False)
            task.event.wait()
        else:
            while True:
                seq = self._done.get()
                task = self._pending.pop(seq, None)
                if task is not None:
                    break
        if task.ok:
            return task.value
        self.stop()
        self._pending.clear()
        self._exhausted = True
        raise task.value

    def stop(self):
        if self._stop.is_set():
            return
        self._stop.set()
        for _ in self._threads:
            self._tasks.put(None)
        _close_quietly(self._it)

    close = stop

    def join(self, timeout=None):
        for t in self._threads:
            t.join(timeout)

    def __del__(self):
        self.stop()
