"""GradientTape: records the ops run while it is active and plays them back for gradients.

How recording works: core calls ``hooks.recorder(op, inputs, outputs, attrs)`` after
every primitive op and ``hooks.variable_read(var)`` when an op reads a Variable.
Autodiff subscribes to them (``hooks.subscribe``) only while some tape is entered (on any
thread), so ops cost nothing extra when no tape exists.  Each thread has its own
stack of tapes; the recorder looks only at the calling thread's.

A tape keeps ``tracked`` (id -> tensor: what it watches and every output of an op it
recorded) and a list of entries ``(op, inputs, outputs, attrs)``.  An op is recorded
when one of its inputs is tracked.  The tape holds every tensor it names, so ids are
stable for its lifetime; it lets go of all of them after the gradient of a
non-persistent tape, or on ``reset()``.

Playback walks the entries backwards from the targets, calling each op's rule
(``registry.GRADIENTS``), summing gradients that meet at a tensor and reducing
broadcast gradients back to each input's shape.  Only tensors that depend on a
source through floating-point values receive gradients.  The rules are tapeflow
ops, so an enclosing tape records the playback: that is how higher-order
gradients work.
"""
from __future__ import annotations

import threading
from typing import Any, Literal, TypeVar, overload

import numpy as np
from tapeflow.core import dispatch as _dispatch
from tapeflow.core import ops as _core_ops
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, convert_to_tensor
from tapeflow.core.variables import Variable

from . import _nest
from .registry import GRADIENTS, PER_INPUT

_K = TypeVar("_K")

_hooks = _dispatch.hooks
_REGISTRY = _dispatch.REGISTRY


class _State(threading.local):
    """Per-thread: the tapes entered here (innermost last) and those recording now."""

    def __init__(self) -> None:
        self.stack: list = []
        self.rec: tuple = ()
        self.mark = 0  # tapes below this index of the stack are paused (pause_all)
        self.watchers: list = []  # dicts that collect variables read (custom_gradient)


_state = _State()
# on_gradient[0](sources) -> None or watch(j, grad), called by each tape.gradient: watch gets each source's
# gradient as soon as no op left can add to it (tapeflow.distribute overlaps its all-reduce with the backward pass)
on_gradient = [None]
_lock = threading.Lock()
_entered = 0  # tapes entered on any thread; the tape is subscribed to core's hooks while > 0
_subscription = None
_SUBSCRIBE_LISTENERS: list = []  # called after the tapes subscribe (forward mode moves itself behind them)


# ---- the two hooks (the hot path) ----------------------------------------------

def _record(op, inputs, out, attrs, _state=_state, _id=id, _Tensor=Tensor):
    for tape in _state.rec:
        tracked = tape._tracked
        for t in inputs:
            if _id(t) in tracked:
                break
        else:
            continue
        tape._ops.append((op, inputs, out, attrs))
        if type(out) is _Tensor:
            tracked[_id(out)] = out
        else:
            for o in out:
                tracked[_id(o)] = o


def _on_read(var):
    st = _state
    for tape in st.rec:
        if (tape._auto and var.trainable) or var in tape._watched_vars:
            tape._read(var)
    for w in st.watchers:
        w[var] = None


def _refresh(st):
    stack = st.stack
    st.mark = min(st.mark, len(stack))
    st.rec = tuple([t for t in (stack[st.mark:] if st.mark else stack) if t._recording and not t._used])


def _push(tape):
    global _entered
    st = _state
    stack = st.stack
    stack.append(tape)
    if len(stack) == 1 and tape._recording and not tape._used and not st.mark:
        st.rec = (tape,)
    else:
        _refresh(st)
    global _subscription
    with _lock:
        _entered += 1
        if _subscription is None:
            _subscription = _hooks.subscribe(_record, variable_read=_on_read)
            for f in _SUBSCRIBE_LISTENERS:
                f()


def _pop(tape):
    global _entered
    st = _state
    stack = st.stack
    if stack and stack[-1] is tape:
        stack.pop()
    else:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is tape:
                del stack[i]
                break
    if stack:
        _refresh(st)
    else:
        st.rec = ()
        st.mark = 0
    global _subscription
    with _lock:
        _entered -= 1
        if _entered <= 0:
            _entered = 0
            if _subscription is not None:
                _subscription.remove()
                _subscription = None


def recording() -> bool:
    """Whether a tape records ops on this thread now.

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff import recording
    >>> with tf.GradientTape():
    ...     recording()
    True
    >>> recording()
    False
    """
    return bool(_state.rec)


class _Paused:
    """Pause the tapes active on this thread (tapes entered inside still record)."""

    __slots__ = ("_saved",)

    def __enter__(self):
        st = _state
        self._saved = st.mark
        st.mark = len(st.stack)
        _refresh(st)
        return self

    def __exit__(self, *exc):
        st = _state
        st.mark = min(self._saved, len(st.stack))
        _refresh(st)
        return False


def pause_all():
    """A context in which the tapes active on this thread do not record (tapes entered inside do).

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff import pause_all
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with pause_all():
    ...         y = x * x
    >>> print(tape.gradient(y, x))
    None
    """
    return _Paused()


# ---- the tape ---------------------------------------------------------------------

class UnconnectedGradients:
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class GradientTape:
    """Records operations while active, to compute gradients by playing them back.

    Trainable variables read while the tape is active are watched automatically
    (unless ``watch_accessed_variables=False``); tensors are watched with
    :meth:`watch`.  A non-persistent tape gives one ``gradient`` (or ``jacobian``)
    and then lets go of everything it recorded; ``persistent=True`` keeps the
    recording until :meth:`reset` or the tape is dropped.  Tapes nest: gradients
    computed while an outer tape is active are recorded by it (higher-order
    gradients).

    >>> import tapeflow as tf
    >>> w = tf.Variable([[1.0]])
    >>> with tf.GradientTape() as tape:
    ...     loss = w * w
    >>> tape.gradient(loss, [w])
    [<Tensor: shape=(1, 1), dtype=float32, numpy=array([[2.]], dtype=float32)>]
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = bool(persistent)
        self._auto = bool(watch_accessed_variables)
        self._recording = True
        self._used = False
        self._depth = 0
        self._spent = None
        self._clear()

    def _clear(self):
        self._ops: list = []          # (op, inputs, outputs, attrs)
        self._tracked: dict = {}      # id -> tensor
        self._watched: dict = {}      # id -> tensor explicitly watched
        self._watched_vars: dict = {}  # variables watched with watch()
        self._vars: dict = {}         # variable -> its value tensors read on this tape

    # -- context --------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._depth += 1
        _push(self)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._depth -= 1
        _pop(self)
        return False

    def __repr__(self):
        state = "used" if self._used else f"{len(self._ops)} ops recorded"
        return f"<GradientTape persistent={self._persistent} {state}>"

    # -- watching -----------------------------------------------------------------------
    def watch(self, tensor) -> None:
        """Watch a tensor, a variable, or a nested structure of them.

        >>> import tapeflow as tf
        >>> x = tf.constant(3.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x).numpy()
        np.float32(6.0)
        """
        if type(tensor) is Tensor:
            self._tracked[id(tensor)] = tensor
            self._watched[id(tensor)] = tensor
            return
        for i, t in enumerate(_nest.flatten(tensor)):
            if type(t) is Tensor:
                self._tracked[id(t)] = t
                self._watched[id(t)] = t
            elif isinstance(t, Variable):
                self._watched_vars[t] = None
                self._read(t)
            elif isinstance(t, Tensor):
                self._tracked[id(t)] = t
                self._watched[id(t)] = t
            else:
                raise TypeError(f"GradientTape.watch takes tensors and variables (or nested lists, tuples, dicts "
                                f"of them); got {_describe(t)}{_where(tensor, i)}")

    def _read(self, var):
        t = var._tape_value()  # inside a graph function being traced: the graph's read of the variable
        k = id(t)
        if k not in self._tracked:
            self._tracked[k] = t
        vals = self._vars.get(var)
        if vals is None:
            self._vars[var] = [t]
        elif vals[-1] is not t and all(v is not t for v in vals):
            vals.append(t)

    def watched_variables(self) -> tuple:
        """The variables this tape watched (read while recording, or passed to :meth:`watch`).

        >>> import tapeflow as tf
        >>> a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b", trainable=False)
        >>> with tf.GradientTape() as tape:
        ...     y = a * b
        >>> [v.name for v in tape.watched_variables()]
        ['a:0']
        """
        return tuple(self._vars)

    def stop_recording(self) -> _StopRecording:
        """A context in which this tape does not record (other tapes still do).

        >>> import tapeflow as tf
        >>> x = tf.constant(2.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     with tape.stop_recording():
        ...         y = x * x
        >>> print(tape.gradient(y, x))
        None
        """
        if not self._depth:
            raise RuntimeError("GradientTape.stop_recording() needs a tape that is recording: call it inside "
                               "the tape's `with` block")
        return _StopRecording(self)

    def reset(self) -> None:
        """Forget everything recorded so far, as if the tape were entered anew.

        >>> import tapeflow as tf
        >>> x = tf.constant(2.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        ...     tape.reset()
        ...     tape.watch(x)
        ...     z = x * 3.0
        >>> tape.gradient(z, x).numpy()
        np.float32(3.0)
        """
        self._clear()
        self._used = False
        self._spent = None
        _refresh(_state)

    # -- gradients --------------------------------------------------------------------------
    @overload
    def gradient(self, target: Any, sources: Tensor | Variable, output_gradients: Any = None,
                 unconnected_gradients: str = UnconnectedGradients.NONE) -> Tensor: ...
    @overload
    def gradient(self, target: Any, sources: list[Any], output_gradients: Any = None,
                 unconnected_gradients: str = UnconnectedGradients.NONE) -> list[Tensor]: ...
    @overload
    def gradient(self, target: Any, sources: tuple[Any, ...], output_gradients: Any = None,
                 unconnected_gradients: str = UnconnectedGradients.NONE) -> tuple[Tensor, ...]: ...
    @overload
    def gradient(self, target: Any, sources: dict[_K, Any], output_gradients: Any = None,
                 unconnected_gradients: str = UnconnectedGradients.NONE) -> dict[_K, Tensor]: ...

    # (type checkers: a source the target does not reach gives None at run time, as TensorFlow's; the
    # declared types are those of the connected case, as torch.autograd.grad declares them)
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = UnconnectedGradients.NONE) -> Any:
        """d(sum of ``target``)/d``sources``, shaped like ``sources`` (a tensor, list or nested structure).

        ``target`` is a tensor or a nested structure of them (their gradients add);
        ``output_gradients`` weights each target (default: ones).  A source the
        target does not depend on gets ``None``, or zeros with
        ``unconnected_gradients="zero"``.  :meth:`explain` says why a gradient is None.

        >>> import tapeflow as tf
        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = tf.reduce_sum(x * x)
        >>> tape.gradient(y, x).numpy().tolist()
        [2.0, 4.0]
        """
        if self._used:
            self._check_usable("gradient")
        mode = "none" if unconnected_gradients == "none" else _unconnected_mode(unconnected_gradients)
        flat_t = [target] if type(target) is Tensor else _targets(target)
        flat_s = [sources] if type(sources) is Tensor else _sources(sources)
        seeds = [_ones(target)] if output_gradients is None and type(target) is Tensor else \
            _seeds(target, flat_t, output_gradients)
        hook = on_gradient[0]
        grads = self._backward(flat_t, flat_s, seeds, None if hook is None else hook(flat_s))
        if mode == "zero":
            grads = [_zeros_for(s) if g is None else g for g, s in zip(grads, flat_s)]
        if not self._persistent:
            self._release(None in grads)
        return _nest.pack_as(sources, grads) if _nest.is_nested(sources) else grads[0]

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: str = UnconnectedGradients.NONE,
                 parallel_iterations: int | None = None, experimental_use_pfor: bool = True) -> Any:
        """The full Jacobian: for each source, a tensor of shape ``target.shape + source.shape``.

        >>> import tapeflow as tf
        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.jacobian(y, x).numpy().tolist()
        [[2.0, 0.0], [0.0, 4.0]]
        """
        self._check_usable("jacobian")
        mode = _unconnected_mode(unconnected_gradients)
        t = _single_target(target, "jacobian")
        flat_s = _sources(sources)
        n = t._size
        if experimental_use_pfor and n:
            out = self._jacobian_pfor(t, flat_s, mode, n, parallel_iterations)
            if not self._persistent:
                self._release(any(g is None for g in out))
            return _nest.pack_as(sources, out) if _nest.is_nested(sources) else out[0]
        rows = [[] for _ in flat_s]
        basis = np.zeros(n, t._dtype.np)
        for i in range(n):
            basis[i] = 1
            seed = _seed_tensor(basis.reshape(t._shape), t)
            basis[i] = 0
            for r, g in zip(rows, self._backward([t], flat_s, [seed])):
                r.append(g)
        out = [_assemble(r, t._shape, _shape_of(s), _dtype_of(s), mode, n) for r, s in zip(rows, flat_s)]
        if not self._persistent:
            self._release(any(g is None for g in out))
        return _nest.pack_as(sources, out) if _nest.is_nested(sources) else out[0]

    def batch_jacobian(self, target: Any, source: Tensor | Variable, unconnected_gradients: str = UnconnectedGradients.NONE,
                       parallel_iterations: int | None = None, experimental_use_pfor: bool = True) -> Tensor:
        """Per-example Jacobians: ``target[b]`` by ``source[b]``, shape ``(B,) + target.shape[1:] + source.shape[1:]``.

        Rows of the batch must be independent (as in a model applied per example).

        >>> import tapeflow as tf
        >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.batch_jacobian(y, x).numpy().tolist()
        [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]
        """
        self._check_usable("batch_jacobian")
        mode = _unconnected_mode(unconnected_gradients)
        t = _single_target(target, "batch_jacobian")
        (s,) = _sources([source])
        ts, ss = t._shape, _shape_of(s)
        if not ts or not ss or ts[0] != ss[0]:
            raise InvalidArgumentError(f"batch_jacobian needs target and source with the same first (batch) "
                                       f"dimension; got target shape {tuple(ts)} and source shape {tuple(ss)}")
        b = ts[0]
        m = t._size // b if b else int(np.prod(ts[1:], dtype=np.int64))
        if experimental_use_pfor and m and b:
            out = self._batch_jacobian_pfor(t, s, mode, b, m, parallel_iterations)
            if not self._persistent:
                self._release(out is None)
            return out
        basis = np.zeros((b, m), t._dtype.np)
        rows = []
        for j in range(m):
            basis[:, j] = 1
            seed = _seed_tensor(basis.reshape(ts), t)
            basis[:, j] = 0
            rows.append(self._backward([t], [s], [seed])[0])
        out = _assemble_batch(rows, ts, ss, _dtype_of(s), mode, m)
        if not self._persistent:
            self._release(out is None)
        return out

    def explain(self, target, source) -> str:
        """Why the gradient of ``target`` with respect to ``source`` is None (or that it is not).

        Names the cause: the source was never watched, it was used only before the
        tape started, the path goes through an op without a gradient
        (``stop_gradient``, ``argmax``, a comparison, ...), or an integer or bool dtype.
        Works on a persistent tape, and on a non-persistent tape after a gradient
        that came back None.

        >>> import tapeflow as tf
        >>> x = tf.constant(3.0)
        >>> with tf.GradientTape(persistent=True) as tape:
        ...     y = x * x
        >>> print(tape.explain(y, x))
        no gradient: the source (a float32 tensor of shape ()) was never watched by this tape. Tensors are not watched automatically (only trainable variables are): call tape.watch(x) inside the `with` block before computing with x.
        """
        from ._explain import explain

        state = self._spent if self._used else (self._ops, self._tracked, self._watched, self._watched_vars,
                                                  self._vars, self._auto)
        if state is None:
            raise RuntimeError("this non-persistent tape has already computed its gradient (which was not None) "
                               "and let go of its recording; use GradientTape(persistent=True) to explain "
                               "after a gradient")
        return explain(state, target, source)

    # -- internals ---------------------------------------------------------------------------
    def _jacobian_pfor(self, t, flat_s, mode, n, parallel_iterations):
        """The Jacobian's rows at once: the backward pass vectorized over the one-hot seeds (in chunks of
        ``parallel_iterations`` seeds, by default as many as keep the seeds under 2**24 entries)."""
        eye = np.eye(n, dtype=t._dtype.np).reshape((n,) + tuple(t._shape))
        rows = _chunked(lambda seed: self._backward([t], flat_s, [seed]), eye, t, parallel_iterations)
        out = []
        for r, s in zip(rows, flat_s):
            full = tuple(t._shape) + tuple(_shape_of(s))
            if r is None:
                out.append(None if mode == "none" else _core_ops.zeros(full, _dtype_of(s)))
            else:
                out.append(_core_ops.reshape(r, full))
        return out

    def _batch_jacobian_pfor(self, t, s, mode, b, m, parallel_iterations):
        ts, ss = t._shape, _shape_of(s)
        basis = np.zeros((m, b, m), t._dtype.np)
        basis[np.arange(m), :, np.arange(m)] = 1
        rows = _chunked(lambda seed: self._backward([t], [s], [seed]), basis.reshape((m,) + tuple(ts)), t,
                        parallel_iterations)[0]
        full = (b,) + tuple(ts[1:]) + tuple(ss[1:])
        if rows is None:
            return None if mode == "none" else _core_ops.zeros(full, _dtype_of(s))
        perm = (1, 0) + tuple(range(2, len(rows._shape)))
        return _core_ops.reshape(_core_ops.transpose(rows, perm), full)

    def _check_usable(self, what):
        if self._used:
            raise RuntimeError(f"GradientTape.{what}() was called on a non-persistent tape that has already "
                               "computed a gradient; a non-persistent tape gives one gradient (or jacobian) and "
                               "then releases its recording. Use GradientTape(persistent=True) to call it more "
                               "than once.")

    def _release(self, keep_for_explain: bool):
        self._spent = (self._ops, self._tracked, self._watched, self._watched_vars, self._vars,
                       self._auto) if keep_for_explain else None
        self._clear()
        self._used = True
        if self._depth and self in _state.stack:
            _refresh(_state)

    def _source_ids(self, s):
        if type(s) is Tensor or isinstance(s, Tensor):
            return (id(s),) if s._dtype.is_inexact else ()
        vals = self._vars.get(s)
        if not vals or not s.dtype.is_inexact:
            return ()
        return tuple(id(v) for v in vals)

    def _backward(self, targets, sources, seeds, watch=None, _id=id, _Tensor=Tensor):
        """One gradient per source (None when unconnected) for targets weighted by seeds; ``watch(j, g)``
        (optional) gets source j's gradient once the ops left to run cannot add to it."""
        ops = self._ops
        src_ids = [self._source_ids(s) for s in sources]
        init = set()
        for ids in src_ids:
            init.update(ids)
        if not init:
            return [None] * len(sources)
        tracked = self._tracked
        n = len(ops)
        roots = set(self._watched)
        for vals in self._vars.values():
            for v in vals:
                roots.add(_id(v))
        if roots <= init:
            # the sources are every root the tape watches: everything it recorded depends on them
            # (through floating-point values where dtypes say so), no sweep needed
            reach, checkdt, first = tracked, True, 0
        else:
            # forward sweep: tensors that depend on a source through floating-point values
            reach, checkdt, first = init, False, n
            for i in range(n):
                op, ins, out, attrs = ops[i]
                for t in ins:
                    if _id(t) in reach:
                        break
                else:
                    continue
                if first == n:
                    first = i
                if type(out) is _Tensor:
                    if out._dtype.is_inexact:
                        reach.add(_id(out))
                else:
                    for o in out:
                        if o._dtype.is_inexact:
                            reach.add(_id(o))
        grads: dict = {}
        for t, g in zip(targets, seeds):
            k = _id(t)
            if k in reach and t._dtype.is_inexact:
                prev = grads.get(k)
                grads[k] = g if prev is None else _add(prev, g)
        if not grads:
            return [None] * len(sources)
        grads_get, grads_pop = grads.get, grads.pop
        per_get, rule_get, real_get = PER_INPUT.get, GRADIENTS.get, _REAL_RULES.get
        ready = None if watch is None else _ready_order(ops, src_ids, first)
        fired = {}
        for i in range(n - 1, first - 1, -1):
            while ready and ready[-1][0] > i:
                j = ready.pop()[1]
                fired[j] = _sum_of(src_ids[j], grads_get)
                watch(j, fired[j])
            op, ins, out, attrs = ops[i]
            if type(out) is _Tensor:
                k = _id(out)
                g = grads_pop(k, None)  # no op left to run adds to it (a source's own gradient stays)
                if g is None:
                    continue
                if k in init:
                    grads[k] = g
            else:
                gs = [grads_get(_id(o)) for o in out]
                if all(g is None for g in gs):
                    continue
                g = tuple(_zeros_like(o) if gi is None else gi for o, gi in zip(out, gs))
            per = per_get(op)
            if per is not None:
                # per-input rules: only the inputs that lead to a source, each gradient added in as it comes
                real = real_get(op)
                if real is None:
                    real = _real_rules(op, per)
                if real[0] is per and real[1] is not None and not ins[0]._dtype.is_complex:
                    per = real[1]  # the unconjugated rules, one Python call fewer per input
                for f, t in zip(per, ins):
                    k = _id(t)
                    if k not in reach or (checkdt and not t._dtype.is_inexact):
                        continue
                    gi = f(g, out, *ins, **attrs) if attrs else f(g, out, *ins)
                    if gi is None:
                        continue
                    if type(gi) is not _Tensor:
                        gi = convert_to_tensor(gi, t._dtype)
                    if gi._shape != t._shape:
                        gi = _unbroadcast(gi, t._shape, op)
                    prev = grads_get(k)
                    grads[k] = gi if prev is None else _add(prev, gi)
                continue
            rule = rule_get(op)
            if rule is None:
                if _nondiff(op):
                    continue
                raise LookupError(f"no gradient is registered for op {op!r}, which lies between the target "
                                  f"and a source; register one with "
                                  f"tapeflow.autodiff.register_gradient({op!r})")
            res = rule(g, out, *ins, **attrs) if attrs else rule(g, out, *ins)
            if type(res) is not tuple:
                res = tuple(res) if isinstance(res, list) else (res,)
            if len(res) != len(ins):
                raise ValueError(f"the gradient rule of op {op!r} returned {len(res)} gradients for its "
                                 f"{len(ins)} inputs")
            for t, gi in zip(ins, res):
                if gi is None:
                    continue
                k = _id(t)
                if k not in reach or (checkdt and not t._dtype.is_inexact):
                    continue
                if type(gi) is not _Tensor:
                    gi = convert_to_tensor(gi, t._dtype)
                if gi._shape != t._shape:
                    gi = _unbroadcast(gi, t._shape, op)
                prev = grads_get(k)
                grads[k] = gi if prev is None else _add(prev, gi)
        out = [fired[j] if j in fired else _sum_of(ids, grads_get) for j, ids in enumerate(src_ids)]
        for _, j in reversed(ready or ()):
            watch(j, out[j])
        return out


class _StopRecording:
    __slots__ = ("_tape", "_was")

    def __init__(self, tape) -> None:
        self._tape = tape

    def __enter__(self) -> _StopRecording:
        self._was = self._tape._recording
        self._tape._recording = False
        _refresh(_state)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._tape._recording = self._was
        _refresh(_state)
        return False


# ---- helpers ------------------------------------------------------------------------------

_nondiff_cache: dict = {}
#: op -> (its per-input rules as registered, the same rules for real inputs or None): the complex-aware
#: wrappers grads.fft puts around some real rules (multiply, real_div, exp, matmul) cost a Python call per
#: input; for real inputs the tape calls the rules they wrap.  Keyed by the registered tuple's identity,
#: so a rule registered again later is looked up afresh.
_REAL_RULES: dict = {}


def _real_rules(op, per):
    from .grads.fft import HOLOMORPHIC

    raw = HOLOMORPHIC.get(op)
    hit = _REAL_RULES[op] = (per, raw[0] if raw is not None and raw[0] is not None else None)
    return hit


def _sum_of(ids, grads_get):
    acc = None
    for k in ids:
        g = grads_get(k)
        if g is not None:
            acc = g if acc is None else _add(acc, g)
    return acc


def _ready_order(ops, src_ids, first) -> list:
    """(index of the first op that reads source j, j), sorted: j's gradient is final before that op's turn."""
    where = {k: j for j, ids in enumerate(src_ids) for k in ids}
    at = [-1] * len(src_ids)
    for i in range(len(ops) - 1, first - 1, -1):
        for t in ops[i][1]:
            j = where.get(id(t))
            if j is not None:
                at[j] = i
    return sorted((a, j) for j, a in enumerate(at))


def _nondiff(op) -> bool:
    hit = _nondiff_cache.get(op)
    if hit is None:
        d = _REGISTRY.get(op)
        hit = _nondiff_cache[op] = bool(d is not None and d.nondiff)
    return hit


_ones_cache: dict = {}


def _ones(t):
    """ones_like(t), cached for small shapes (tensors are immutable, so one can serve every tape)."""
    key = (t._shape, t._dtype, t._dev)
    hit = _ones_cache.get(key)
    if hit is None:
        hit = _core_ops.ones_like(t)
        if hit._h is not None and t._size <= 4096:  # never a symbolic tensor of a graph being traced
            if len(_ones_cache) >= 256:
                _ones_cache.clear()
            _ones_cache[key] = hit
    return hit


def _add(a, b):
    return _core_ops.add(a, b)


def _zeros_like(t):
    return _core_ops.zeros_like(t)


def _unbroadcast(g, shape, op):
    """Sum a broadcast gradient back to ``shape`` (or broadcast a smaller one up to it)."""
    ops = _core_ops
    gs = g._shape
    lead = len(gs) - len(shape)
    if lead >= 0:
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and gs[lead + i] != 1)
        ok = all(d == 1 or d == gs[lead + i] for i, d in enumerate(shape))
        if ok:
            if axes:
                g = ops.reduce_sum(g, axis=axes)
            return g if g._shape == shape else ops.reshape(g, shape)
    try:
        return ops.broadcast_to(g, shape)
    except InvalidArgumentError:
        raise ValueError(f"the gradient rule of op {op!r} returned a gradient of shape {tuple(gs)} for an input "
                         f"of shape {tuple(shape)}") from None


def _unconnected_mode(u):
    v = getattr(u, "value", u)
    if isinstance(v, str) and v.lower() in ("none", "zero"):
        return v.lower()
    raise InvalidArgumentError(f"unconnected_gradients must be 'none' or 'zero', got {u!r}")


def _describe(x) -> str:
    if x is None:
        return "None"
    r = repr(x)
    r = r if len(r) <= 40 else r[:37] + "..."
    return f"{type(x).__name__} {r}"


def _where(structure, i) -> str:
    return f" at position {i} of the structure" if _nest.is_nested(structure) else ""


def _targets(target) -> list:
    flat = _nest.flatten(target)
    if not flat:
        raise TypeError("GradientTape.gradient needs a target tensor; got an empty structure")
    out = []
    for i, t in enumerate(flat):
        if isinstance(t, Tensor):
            out.append(t)
        elif isinstance(t, Variable):
            out.append(t._value)
        else:
            raise TypeError(f"the target of GradientTape.gradient must be a tensor (or a structure of tensors) "
                            f"computed while the tape was recording; got {_describe(t)}{_where(target, i)}")
    return out


def _single_target(target, what):
    if isinstance(target, Variable):
        return target._value
    if not isinstance(target, Tensor):
        raise TypeError(f"the target of GradientTape.{what} must be one tensor; got {_describe(target)}")
    return target


def _sources(sources) -> list:
    flat = _nest.flatten(sources)
    for i, s in enumerate(flat):
        if not isinstance(s, (Tensor, Variable)):
            raise TypeError(f"gradient sources must be tensors or variables (or nested lists, tuples, dicts of "
                            f"them); got {_describe(s)}{_where(sources, i)}")
    return flat


def _seeds(target, flat_t, output_gradients) -> list:
    if output_gradients is None:
        return [_ones(t) for t in flat_t]
    flat_g = _nest.flatten(output_gradients) if _nest.is_nested(target) else [output_gradients]
    if len(flat_g) != len(flat_t):
        raise InvalidArgumentError(f"output_gradients has {len(flat_g)} entries but there are {len(flat_t)} targets")
    seeds = []
    for i, (t, g) in enumerate(zip(flat_t, flat_g)):
        if g is None:
            seeds.append(_ones(t))
            continue
        g = convert_to_tensor(g, t._dtype) if not isinstance(g, Tensor) else g
        if g._shape != t._shape:
            raise InvalidArgumentError(f"output_gradients[{i}] has shape {tuple(g._shape)} but target[{i}] has "
                                       f"shape {tuple(t._shape)}; they must match")
        if g._dtype is not t._dtype:
            raise InvalidArgumentError(f"output_gradients[{i}] has dtype {g._dtype.name} but target[{i}] has "
                                       f"dtype {t._dtype.name}; they must match")
        seeds.append(g)
    return seeds


def _chunked(fn, seeds, like, parallel_iterations):
    """vectorized_map of ``fn`` (a list of tensors or None) over host ``seeds``, a chunk at a time."""
    from .vectorize import vectorized_map

    n = len(seeds)
    per = max(1, seeds[0].size)
    chunk = int(parallel_iterations) if parallel_iterations else max(1, (1 << 24) // per)
    parts = [vectorized_map(fn, _seed_tensor(seeds[i:i + chunk], like), warn=False) for i in range(0, n, chunk)]
    if len(parts) == 1:
        return parts[0]
    return [None if p[0] is None else _core_ops.concat(list(p), 0) for p in zip(*parts)]


def _seed_tensor(arr, like):
    from tapeflow.core import devices

    with devices.device(like._dev):
        return convert_to_tensor(arr)


def _shape_of(s):
    return s._shape if isinstance(s, Tensor) else s._value._shape


def _dtype_of(s):
    return s._dtype if isinstance(s, Tensor) else s._value._dtype


def _zeros_for(s):
    return _zeros_like(s if isinstance(s, Tensor) else s._value)


def _assemble(rows, tshape, sshape, dtype, mode, n):
    """Stack per-target-element gradients into a (target.shape + source.shape) Jacobian."""
    ops = _core_ops
    if n == 0 or all(r is None for r in rows):
        if n and mode == "none":
            return None
        return ops.zeros(tuple(tshape) + tuple(sshape), dtype)
    z = None
    filled = []
    for r in rows:
        if r is None:
            z = z if z is not None else ops.zeros(sshape, dtype)
            r = z
        filled.append(r)
    return ops.reshape(ops.stack(filled), tuple(tshape) + tuple(sshape))


def _assemble_batch(rows, tshape, sshape, dtype, mode, m):
    ops = _core_ops
    b = tshape[0]
    full = (b,) + tuple(tshape[1:]) + tuple(sshape[1:])
    if m == 0 or all(r is None for r in rows):
        if m and mode == "none":
            return None
        return ops.zeros(full, dtype)
    z = None
    filled = []
    for r in rows:
        if r is None:
            z = z if z is not None else ops.zeros(sshape, dtype)
            r = z
        filled.append(r)
    return ops.reshape(ops.stack(filled, axis=1), full)
