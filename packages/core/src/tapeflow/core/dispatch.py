"""The op registry, the recorder hook and the pieces every op shares.

Every public op registers itself here (``@register``), so tests can walk the
registry: a primitive op runs kernels and reports itself to the recorder; a
composite op is Python over primitives.  Core never imports autodiff: autodiff
subscribes to ``hooks`` while a tape is active, and core calls ``hooks.recorder`` after
each primitive as ``recorder(op_name, inputs, outputs, attrs)`` (see ``runner``).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

import numpy as np

from tapeflow import kernels

from . import devices as _device
from . import dtypes as _dt
from . import errors
from .tensor import Tensor, convert_to_tensor, make

if TYPE_CHECKING:
    from typing import ParamSpec, TypeVar
    _P = ParamSpec("_P")   # a registered op keeps its signature (what type checkers see of tf.*)
    _R = TypeVar("_R")

REGISTRY: dict = {}


class OpDef:
    """What the registry knows of an op."""

    __slots__ = ("name", "tf_name", "fn", "kind", "nondiff", "notes")

    def __init__(self, name, tf_name, fn, kind, nondiff, notes) -> None:
        self.name, self.tf_name, self.fn, self.kind = name, tf_name, fn, kind
        self.nondiff, self.notes = nondiff, notes

    def __repr__(self):
        return f"OpDef({self.name!r}, {self.kind})"


def register(name: str, tf_name: str | None = None, kind: str = "primitive",
             nondiff: str | None = None, notes: str = "") -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Register ``fn`` as op ``name``.

    ``kind`` is ``"primitive"`` (runs kernels, recorded on tapes) or
    ``"composite"`` (Python over primitives).  ``nondiff`` gives the reason a
    primitive has no gradient (e.g. ``"integer output"``); autodiff must give a
    gradient to every other primitive.
    """
    if kind not in ("primitive", "composite"):
        raise ValueError(f"kind must be 'primitive' or 'composite', not {kind!r}")

    def deco(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"op {name!r} is registered twice")
        REGISTRY[name] = OpDef(name, tf_name or _camel(name), fn, kind, nondiff, notes)
        return fn

    return deco


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


class Subscription:
    """What ``hooks.subscribe`` returns: ``remove()`` ends the subscription (idempotent)."""

    __slots__ = ("recorder", "variable_read", "_hooks")

    def __init__(self, hooks_, recorder, variable_read) -> None:
        self._hooks, self.recorder, self.variable_read = hooks_, recorder, variable_read

    def remove(self):
        self._hooks._unsubscribe(self)


class _Paused(threading.local):
    depth = 0


class Hooks:
    """Who hears about primitives: recorder subscribers (tapes, tracers, the data vectorizer).

    ``hooks.recorder`` is what an op calls after a primitive: None when nobody listens (the fast
    path), the one subscriber's function, or a fan-out over several.  It is derived from the
    subscriptions: never assign it; ``subscribe(recorder, variable_read=None)`` returns a
    handle whose ``remove()`` unsubscribes, and ``paused()`` silences recording on this thread
    (for a primitive built from other primitives).  ``tracing`` counts the threads tracing now.

    >>> from tapeflow.core.dispatch import hooks
    >>> import tapeflow as tf
    >>> seen = []
    >>> sub = hooks.subscribe(lambda op, inputs, out, attrs: seen.append(op))
    >>> _ = tf.add(1.0, 2.0)
    >>> sub.remove()
    >>> _ = tf.add(1.0, 2.0)
    >>> seen
    ['add']
    """

    __slots__ = ("recorder", "variable_read", "tracing", "_subs", "_lock", "_paused", "_npaused")

    def __init__(self) -> None:
        self.recorder = None        # recorder(op_name, inputs, outputs, attrs)
        self.variable_read = None   # variable_read(variable) when an op reads a Variable
        self.tracing = 0
        self._subs = ()
        self._lock = threading.Lock()
        self._paused = _Paused()
        self._npaused = 0

    def subscribe(self, recorder, variable_read=None) -> Subscription:
        sub = Subscription(self, recorder, variable_read)
        with self._lock:
            self._subs = self._subs + (sub,)
            self._refresh()
        return sub

    def _unsubscribe(self, sub):
        with self._lock:
            if sub in self._subs:
                self._subs = tuple(s for s in self._subs if s is not sub)
                self._refresh()

    def _refresh(self):
        recs = tuple(s.recorder for s in self._subs if s.recorder is not None)
        reads = tuple(s.variable_read for s in self._subs if s.variable_read is not None)
        if not recs:
            rec = None
        elif self._npaused:
            paused = self._paused

            def rec(op, inputs, out, attrs):
                if not paused.depth:
                    for r in recs:
                        r(op, inputs, out, attrs)
        elif len(recs) == 1:
            rec = recs[0]
        else:
            def rec(op, inputs, out, attrs):
                for r in recs:
                    r(op, inputs, out, attrs)
        if not reads:
            read = None
        elif len(reads) == 1:
            read = reads[0]
        else:
            def read(var):
                for r in reads:
                    r(var)
        self.recorder, self.variable_read = rec, read

    def paused(self):
        """A context in which this thread's primitives are not reported (other threads' still are)."""
        return _Pause(self)


class _Pause:
    __slots__ = ("_h",)

    def __init__(self, h) -> None:
        self._h = h

    def __enter__(self):
        h = self._h
        h._paused.depth += 1
        with h._lock:
            h._npaused += 1
            h._refresh()

    def __exit__(self, *exc):
        h = self._h
        h._paused.depth -= 1
        with h._lock:
            h._npaused -= 1
            h._refresh()
        return False


hooks = Hooks()


def record(name, inputs, outputs, attrs=None):
    """Report a primitive to the recorder (call only when ``hooks.recorder`` is set)."""
    hooks.recorder(name, inputs, outputs, attrs)


# -- kernel status -> typed errors -------------------------------------------

_STATUS_ERRORS = {
    kernels.EBADSIZE: errors.InvalidArgumentError,
    kernels.EBADDTYPE: errors.UnimplementedError,
    kernels.EBADOP: errors.InternalError,
    kernels.ERANGE: errors.InvalidArgumentError,
    kernels.EDIVZERO: errors.InvalidArgumentError,
    kernels.ENOMEM: errors.ResourceExhaustedError,
    kernels.EBADARG: errors.InvalidArgumentError,
}


def kernel_failed(status: int, kernel: str, op: str, detail: str = ""):
    """Raise the typed error for a failed kernel call."""
    cls = _STATUS_ERRORS.get(status, errors.InternalError)
    msg = detail or f"{kernels.status_message(status)} in kernel {kernel}"
    if status == kernels.EDIVZERO and not detail:
        msg = "integer division by zero"
    raise cls(msg, op)


# -- inputs ------------------------------------------------------------------

def to_tensor(x, op: str, dtype=None) -> Tensor:
    """Convert an op input, naming the op when conversion fails."""
    if type(x) is Tensor:
        return x
    try:
        t = convert_to_tensor(x, dtype)
    except errors.InvalidArgumentError as e:
        raise errors.InvalidArgumentError(e.message, op) from None
    except TypeError as e:
        raise errors.InvalidArgumentError(str(e), op) from None
    if hooks.variable_read is not None and hasattr(x, "_as_tensor"):
        hooks.variable_read(x)
    return t


def run_device(*tensors):
    """The device an op runs on: the innermost scope, else its first input's."""
    stack = _device._scope.stack
    if stack and stack[-1] is not None:
        return stack[-1]
    for t in tensors:
        return t._dev
    return _device.default_device()


def scoped(t: Tensor) -> Tensor:
    """``t`` on the innermost ``tf.device`` scope's device (itself when there is no scope or it is there)."""
    stack = _device._scope.stack
    if stack and stack[-1] is not None and stack[-1] is not t._dev:
        return t.to(stack[-1])
    return t


def on_device(t: Tensor, dev) -> Tensor:
    return t if t._dev is dev else t.to(dev)


def alloc(shape, dtype, dev):
    """A new uninitialised tensor."""
    size = 1
    for d in shape:
        size *= d
    h, host = dev.backend.alloc(shape, dtype.np)
    return make(h, host, shape, dtype, dev, size)


# -- Python arguments: ints, int lists, axes, dtypes ------------------------------------
#
# Wrong Python types raise TypeError (as TensorFlow does for a float or str axis, shape or dtype);
# integer tensors of the wrong shape and integers out of range raise InvalidArgumentError.
# bool counts as an int (TensorFlow accepts ``axis=True``); NumPy integers and 0-d integer
# tensors are ints.

_I64_MIN, _I64_MAX = -(2 ** 63), 2 ** 63 - 1
_INT_ALLOWED = "an int, a NumPy integer or a 0-d integer tensor"
_LIST_ALLOWED = "a list or tuple of ints, a 1-D integer tensor or array"


def _what(v) -> str:
    s = repr(v)
    return f"{type(v).__name__} {s if len(s) <= 40 else s[:37] + '...'}"


def _type_error(msg: str, op: str):
    return TypeError(f"{msg} [Op:{op}]" if op else msg)


def static_value(v, op: str, what: str):
    """``v`` itself, or for a tensor its value (a NumPy array): for an argument an op needs on the host at
    call time (a shape or size given as a tensor, a seed, an index checked before the kernel).

    A symbolic tensor (one made while a graph is traced) has no value yet: a ``TypeError`` naming the op.

    >>> import tapeflow as tf
    >>> from tapeflow.core.dispatch import static_value
    >>> static_value(tf.constant([2, 3]), "Reshape", "shape").tolist(), static_value([2, 3], "Reshape", "shape")
    ([2, 3], [2, 3])
    """
    if isinstance(v, Tensor):
        if v._h is None and v._arr is None:
            raise _type_error(f"{what} needs a static value while tracing, got a symbolic {v._dtype.name} tensor "
                              f"of shape {tuple(v._shape)}; allowed: a Python value or an eager tensor", op)
        return v._host()
    return v


def int_arg(v, op: str, what: str) -> int:
    """A Python int from an int (bool included), NumPy integer or 0-d integer tensor.

    Anything else (a float, str, None, list) is a ``TypeError`` naming the op; an int
    beyond int64 is an ``InvalidArgumentError``.

    >>> from tapeflow.core.dispatch import int_arg
    >>> int_arg(3, "Sum", "axis"), int_arg(__import__("numpy").int64(-1), "Sum", "axis")
    (3, -1)
    >>> int_arg(1.5, "Sum", "axis")
    Traceback (most recent call last):
    TypeError: axis must be an integer, got float 1.5; allowed: an int, a NumPy integer or a 0-d integer tensor [Op:Sum]
    """
    if type(v) is not int:
        if isinstance(v, (int, np.integer)):
            v = int(v)
        elif isinstance(v, (Tensor, np.ndarray)) or hasattr(v, "_as_tensor"):
            arr = np.asarray(static_value(v, op, what))
            if arr.dtype.kind not in "iu":
                raise errors.InvalidArgumentError(f"{what} is a {_np_name(arr)} tensor; allowed: {_INT_ALLOWED}", op)
            if arr.ndim:
                raise errors.InvalidArgumentError(f"{what} is a tensor of shape {arr.shape}; allowed: "
                                                  f"{_INT_ALLOWED}", op)
            return int(arr)
        else:
            raise _type_error(f"{what} must be an integer, got {_what(v)}; allowed: {_INT_ALLOWED}", op)
    if not _I64_MIN <= v <= _I64_MAX:
        raise errors.InvalidArgumentError(f"{what} = {v} is out of the int64 range; allowed: integers in "
                                          f"[-2**63, 2**63)", op)
    return v


def _np_name(arr) -> str:
    try:
        return _dt.as_dtype(arr.dtype).name
    except TypeError:
        return str(arr.dtype)


def int_list(v, op: str, what: str, scalar_ok: bool = True) -> tuple:
    """A tuple of Python ints from a list/tuple of ints, a 1-D integer tensor or array
    (or, with ``scalar_ok``, a single int).

    Floats, strs, None (alone or inside the list) are a ``TypeError`` naming the op.

    >>> from tapeflow.core.dispatch import int_list
    >>> int_list([2, 3], "Reshape", "shape"), int_list(4, "Fill", "dims")
    ((2, 3), (4,))
    >>> int_list(["2", "3"], "Reshape", "shape")
    Traceback (most recent call last):
    TypeError: shape[0] must be an integer, got str '2'; allowed: a list or tuple of ints, a 1-D integer tensor or array [Op:Reshape]
    """
    if isinstance(v, (list, tuple)):
        for d in v:  # the common case: Python ints in int64 range
            if type(d) is not int or not _I64_MIN <= d <= _I64_MAX:
                break
        else:
            return tuple(v)
        out = []
        for i, d in enumerate(v):
            if isinstance(d, (list, tuple)):
                raise errors.InvalidArgumentError(f"{what} must be 1-D, got {_what(v)}; allowed: {_LIST_ALLOWED}",
                                                  op)
            if not isinstance(d, (int, np.integer, Tensor, np.ndarray)) and not hasattr(d, "_as_tensor"):
                raise _type_error(f"{what}[{i}] must be an integer, got {_what(d)}; allowed: {_LIST_ALLOWED}", op)
            out.append(int_arg(d, op, f"{what}[{i}]"))
        return tuple(out)
    if isinstance(v, (Tensor, np.ndarray)) or hasattr(v, "_as_tensor"):
        arr = np.asarray(static_value(v, op, what))
        if arr.dtype.kind not in "iu":
            raise errors.InvalidArgumentError(f"{what} is a {_np_name(arr)} tensor; allowed: {_LIST_ALLOWED}", op)
        if arr.ndim > 1 or (arr.ndim == 0 and not scalar_ok):
            raise errors.InvalidArgumentError(f"{what} is a tensor of shape {arr.shape}; allowed: {_LIST_ALLOWED}",
                                              op)
        return tuple(int(d) for d in arr.reshape(-1))
    if scalar_ok and isinstance(v, (int, np.integer)):
        return (int_arg(v, op, what),)
    raise _type_error(f"{what} must be a list of integers, got {_what(v)}; allowed: {_LIST_ALLOWED}"
                      + (" or a single int" if scalar_ok else ""), op)


def shape_arg(shape, op: str, what: str = "shape") -> tuple:
    """A shape as a tuple of ints (see :func:`int_list`; a single int is a 1-D shape)."""
    return int_list(shape, op, what)


def dtype_arg(dtype, op: str, what: str = "dtype"):
    """A DType from a DType, name, NumPy dtype or Python type; anything else (None included) is a
    ``TypeError`` naming the op.

    >>> from tapeflow.core.dispatch import dtype_arg
    >>> dtype_arg("int64", "Cast")
    tf.int64
    """
    if type(dtype) is _dt.DType:
        return dtype
    try:
        return _dt.as_dtype(dtype)
    except TypeError as e:
        raise _type_error(f"{what}: {e}", op) from None


def normalize_axis(axis, ndim: int, op: str) -> int:
    a = axis if type(axis) is int else int_arg(axis, op, "axis")
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise errors.InvalidArgumentError(
            f"axis {a} is out of range for a tensor of rank {ndim}; allowed: [{-max(ndim, 1)}, {max(ndim, 1)})", op)
    return a % max(ndim, 1)


def normalize_axes(axis, ndim: int, op: str) -> tuple:
    """A sorted tuple of distinct non-negative axes (None = all)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)) or ((isinstance(axis, (Tensor, np.ndarray)) or hasattr(axis, "_as_tensor"))
                                          and np.ndim(axis) == 1):
        out = []
        for a in int_list(axis, op, "axis"):
            if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
                raise errors.InvalidArgumentError(
                    f"axis {a} is out of range for a tensor of rank {ndim}; allowed: [{-ndim}, {ndim})", op)
            out.append(a % max(ndim, 1))
        if len(set(out)) != len(out):
            raise errors.InvalidArgumentError(f"axis {list(axis)} repeats an axis", op)
        return tuple(sorted(out)) if ndim else ()
    a = axis if type(axis) is int else int_arg(axis, op, "axis")
    if ndim == 0:
        if a in (0, -1):
            return ()
        raise errors.InvalidArgumentError(f"axis {a} is out of range for a scalar; allowed: [-1, 1)", op)
    return (normalize_axis(a, ndim, op),)


def check_dtype(t: Tensor, allowed, op: str, what: str = "x"):
    if t._dtype not in allowed:
        raise errors.InvalidArgumentError(
            f"{what} has dtype {t._dtype.name}; allowed: {', '.join(d.name for d in allowed)}", op)


_ = _dt  # re-exported for op modules
