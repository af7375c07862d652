"""The op registry, the recorder hook and the pieces every op shares.

Every public op registers itself here (``@register``), so tests can walk the
registry: a primitive op runs kernels and reports itself to the recorder; a
composite op is Python over primitives.  Core never imports autodiff: autodiff
installs ``hooks.recorder`` while a tape is active, and core calls it after each
primitive as ``recorder(op_name, inputs, outputs, attrs)``.
"""
from __future__ import annotations

from tapeflow import kernels

from . import devices as _device
from . import dtypes as _dt
from . import errors
from .tensor import Tensor, convert_to_tensor, make

REGISTRY: dict = {}


class OpDef:
    """What the registry knows of an op."""

    __slots__ = ("name", "tf_name", "fn", "kind", "nondiff", "notes")

    def __init__(self, name, tf_name, fn, kind, nondiff, notes):
        self.name, self.tf_name, self.fn, self.kind = name, tf_name, fn, kind
        self.nondiff, self.notes = nondiff, notes

    def __repr__(self):
        return f"OpDef({self.name!r}, {self.kind})"


def register(name: str, tf_name: str | None = None, kind: str = "primitive",
             nondiff: str | None = None, notes: str = ""):
    """Register ``fn`` as op ``name``.

    ``kind`` is ``"primitive"`` (runs kernels, recorded on tapes) or
    ``"composite"`` (Python over primitives).  ``nondiff`` gives the reason a
    primitive has no gradient (e.g. ``"integer output"``); autodiff must give a
    gradient to every other primitive.
    """
    if kind not in ("primitive", "composite"):
        raise ValueError(f"kind must be 'primitive' or 'composite', not {kind!r}")

    def deco(fn):
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"op {name!r} is registered twice")
        REGISTRY[name] = OpDef(name, tf_name or _camel(name), fn, kind, nondiff, notes)
        return fn

    return deco


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


class Hooks:
    """Callbacks installed by upper layers; None when unused (the fast path)."""

    __slots__ = ("recorder", "variable_read")

    def __init__(self):
        self.recorder = None        # recorder(op_name, inputs, outputs, attrs)
        self.variable_read = None   # variable_read(variable) when an op reads a Variable


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
    if status == kernels.EDIVZERO:
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


def normalize_axis(axis, ndim: int, op: str) -> int:
    a = int(axis)
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise errors.InvalidArgumentError(
            f"axis {a} is out of range for a tensor of rank {ndim}; allowed: [{-max(ndim, 1)}, {max(ndim, 1)})", op)
    return a % max(ndim, 1)


def normalize_axes(axis, ndim: int, op: str) -> tuple:
    """A sorted tuple of distinct non-negative axes (None = all)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    if isinstance(axis, (list, tuple)):
        out = []
        for a in axis:
            if not -ndim <= int(a) < max(ndim, 1) or (ndim == 0 and int(a) not in (0, -1)):
                raise errors.InvalidArgumentError(
                    f"axis {int(a)} is out of range for a tensor of rank {ndim}; allowed: [{-ndim}, {ndim})", op)
            out.append(int(a) % max(ndim, 1))
        if len(set(out)) != len(out):
            raise errors.InvalidArgumentError(f"axis {list(axis)} repeats an axis", op)
        return tuple(sorted(out)) if ndim else ()
    a = int(axis)
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
