"""Forward-mode autodiff: ``tf.autodiff.ForwardAccumulator``.

An accumulator maps tensors to their tangents.  While it is entered it listens to core's recorder
hook (as the GradientTape does): after each primitive whose inputs carry tangents, the op's JVP
rule (``forward_rules.JVPS``) computes the tangents of its floating-point outputs.  The rules are
tapeflow ops, so they are seen by everything else that listens:

* an accumulator computing a JVP pauses itself and the accumulators entered inside it, while the
  ones entered before it see the JVP's ops (forward-over-forward: the outer one differentiates the
  inner one's tangents);
* tapes record the JVP's ops (backward-over-forward), and an accumulator sees the ops a tape's
  gradient runs (forward-over-backward: Hessian-vector products).

To keep the tapes' recordings in order (an op before the ops of its JVP), the accumulators'
subscription is moved behind the tapes' whenever the tapes subscribe.
"""
from __future__ import annotations

import threading

from tapeflow.core import dispatch as _dispatch
from tapeflow.core import ops as _ops
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, convert_to_tensor
from tapeflow.core.variables import Variable

from . import _nest
from . import tape as _tape
from .forward_rules import JVPS
from .tape import UnconnectedGradients, _unconnected_mode

_hooks = _dispatch.hooks


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list = []        # accumulators entered on this thread, outermost first
        self.paused: tuple = ()      # while a JVP is computed: it and the ones entered inside it (not listening)


_state = _State()
_lock = threading.Lock()
_entered = 0
_subscription = None


def _active(st):
    if not st.paused:
        return st.stack
    return [a for a in st.stack if all(a is not p for p in st.paused)]


def _record(op, inputs, out, attrs, _id=id):
    st = _state
    accs = _active(st)
    if not accs:
        return
    for i in range(len(accs) - 1, -1, -1):   # the innermost first: the outer ones see its JVP
        acc = accs[i]
        tans = acc._tangents
        ts = None
        for k, t in enumerate(inputs):
            e = tans.get(_id(t))
            if e is not None:
                if ts is None:
                    ts = [None] * len(inputs)
                ts[k] = e[1]
        if ts is None:
            continue
        outs = (out,) if type(out) is Tensor else out
        if not any(o._dtype.is_inexact for o in outs):
            continue
        rule = JVPS.get(op)
        if rule is None:
            d = _dispatch.REGISTRY.get(op)
            if d is not None and d.nondiff:
                continue
            raise LookupError(f"no forward-mode (JVP) rule is registered for op {op!r}, which a "
                              f"ForwardAccumulator needs; add one in "
                              f"packages/autodiff/src/tapeflow/autodiff/forward_rules.py with defjvp({op!r})")
        saved = st.paused
        st.paused = saved + tuple(accs[i:])   # accumulators entered while the rule runs (control flow's) listen
        try:
            res = rule(tuple(ts), out, *inputs, **attrs) if attrs else rule(tuple(ts), out, *inputs)
        finally:
            st.paused = saved
        res = (res,) if type(out) is Tensor else tuple(res) if res is not None else (None,) * len(outs)
        for o, r in zip(outs, res):
            if r is None or not o._dtype.is_inexact:
                continue
            if type(r) is not Tensor and not isinstance(r, Tensor):
                r = convert_to_tensor(r, o._dtype)
            if r._dtype is not o._dtype:
                r = _ops.cast(r, o._dtype)
            if r._shape != o._shape:
                r = _ops.add(r, _ops.zeros_like(o)) if None in o._shape else _ops.broadcast_to(r, o._shape)
            tans[_id(o)] = (o, r)


def _on_read(var):
    for acc in _active(_state):
        t = acc._var_tangents.get(var)
        if t is not None:
            v = var._tape_value()
            acc._tangents[id(v)] = (v, t)


def _subscribe():
    global _subscription
    _subscription = _hooks.subscribe(_record, variable_read=_on_read)


def _behind_tapes():
    """Called when the tapes subscribe: move the accumulators' subscription behind theirs."""
    global _subscription
    with _lock:
        if _subscription is not None:
            _subscription.remove()
            _subscribe()


_tape._SUBSCRIBE_LISTENERS.append(_behind_tapes)


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward-mode autodiff, as ``tf.autodiff.ForwardAccumulator``.

    ``primals`` (a tensor, a variable or a nested structure of them) are watched with ``tangents``
    (the same structure, shapes and dtypes).  Ops run inside ``with acc:`` propagate the tangents;
    ``acc.jvp(y)`` is then ``J u``, the derivative of ``y`` in the direction of the tangents.
    Nesting an accumulator inside another gives higher-order forward derivatives; an accumulator
    around a :class:`GradientTape`'s gradient gives Hessian-vector products.

    >>> import tapeflow as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
    ...     y = x * x
    >>> acc.jvp(y).numpy().tolist()
    [2.0, 0.0]

    Hessian-vector product (forward over backward):

    >>> v = tf.constant([1.0, 1.0])
    >>> with tf.autodiff.ForwardAccumulator(x, v) as acc:
    ...     with tf.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = tf.reduce_sum(x ** 3)
    ...     g = tape.gradient(y, x)
    >>> acc.jvp(g).numpy().tolist()
    [6.0, 12.0]
    """

    def __init__(self, primals, tangents) -> None:
        self._tangents: dict = {}       # id -> (tensor, tangent)
        self._var_tangents: dict = {}   # variable -> tangent
        self._depth = 0
        flat_p = _nest.flatten(primals)
        flat_t = _nest.flatten(tangents)
        if len(flat_p) != len(flat_t):
            raise InvalidArgumentError(f"ForwardAccumulator needs one tangent per primal; got {len(flat_p)} "
                                       f"primals and {len(flat_t)} tangents")
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            self._watch(p, t, i)

    def _watch(self, p, t, i):
        if isinstance(p, Variable):
            value = p._value
        elif isinstance(p, Tensor):
            value = p
        else:
            raise TypeError(f"ForwardAccumulator watches tensors and variables; primal {i} is "
                            f"{type(p).__name__} {p!r:.40}")
        if not value._dtype.is_inexact:
            raise InvalidArgumentError(f"ForwardAccumulator watches floating-point or complex tensors; primal {i} is "
                                       f"{value._dtype.name}; allowed: float16, bfloat16, float32, float64, complex64, "
                                       "complex128")
        t = t if isinstance(t, Tensor) else convert_to_tensor(t, value._dtype)
        if t._shape != value._shape:
            raise InvalidArgumentError(f"the tangent of primal {i} has shape {tuple(t._shape)} but the primal has "
                                       f"shape {tuple(value._shape)}; allowed: the primal's shape")
        if t._dtype is not value._dtype:
            raise InvalidArgumentError(f"the tangent of primal {i} has dtype {t._dtype.name} but the primal is "
                                       f"{value._dtype.name}; allowed: the primal's dtype")
        if isinstance(p, Variable):
            self._var_tangents[p] = t
        self._tangents[id(value)] = (value, t)

    def __enter__(self):
        global _entered
        _state.stack.append(self)
        self._depth += 1
        with _lock:
            _entered += 1
            if _subscription is None:
                _subscribe()
        return self

    def __exit__(self, *exc):
        global _entered, _subscription
        st = _state
        for i in range(len(st.stack) - 1, -1, -1):
            if st.stack[i] is self:
                del st.stack[i]
                break
        self._depth -= 1
        with _lock:
            _entered -= 1
            if _entered <= 0:
                _entered = 0
                if _subscription is not None:
                    _subscription.remove()
                    _subscription = None
        return False

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangents of ``primals`` (a tensor, a variable or a nested structure of them).

        A tensor that does not depend on the watched primals gets None, or zeros with
        ``unconnected_gradients="zero"``.

        >>> import tapeflow as tf
        >>> x = tf.constant(3.0)
        >>> with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        ...     y = tf.sin(x)
        ...     z = tf.constant(2.0) * 2.0
        >>> [t.numpy().round(4) for t in acc.jvp([y, z], unconnected_gradients="zero")]
        [np.float32(-0.99), np.float32(0.0)]
        """
        mode = _unconnected_mode(unconnected_gradients)
        flat = _nest.flatten(primals)
        out = []
        for i, p in enumerate(flat):
            if isinstance(p, Variable):
                t = self._var_tangents.get(p)
                if t is None:
                    e = self._tangents.get(id(p._value))
                    t = None if e is None else e[1]
                value = p._value
            elif isinstance(p, Tensor):
                e = self._tangents.get(id(p))
                t = None if e is None else e[1]
                value = p
            else:
                raise TypeError(f"ForwardAccumulator.jvp takes tensors and variables (or nested structures of "
                                f"them); got {type(p).__name__} {p!r:.40}")
            if t is None and mode == "zero":
                t = _ops.zeros_like(value)
            out.append(t)
        return _nest.pack_as(primals, out) if _nest.is_nested(primals) else out[0]

    def __repr__(self):
        return f"<ForwardAccumulator {len(self._tangents)} tangents>"
