"""The primitive runner: the one path every primitive op takes.

A primitive is declared once, with what the runner needs to run it and to trace it::

    @primitive("reduce_sum", "Sum", infer=_reduce_infer, dtypes=NUMERIC)
    def _sum(dev, x, *, axis, keepdims):
        ...   # the kernel call(s); ``check(status, "reduce")`` after each

and a public op is its argument validation plus one call, ``run(SUM, (x,), {"axis": ..., ...})``.
``run`` owns, in order: conversion of the inputs (naming the op when one cannot be converted),
the dtype rule declared with the primitive, placement (the innermost ``tf.device`` scope, else
the first input's device; other inputs are copied there), either the kernel (eager) or shape and
dtype inference (tracing), kernel status to a typed error (with the primitive's ``detail`` hook
for the message), and the report to the recorder subscribers under the primitive's name.

Tracing: inside ``with tracing(graph):`` no kernel runs.  Each primitive's ``infer(*inputs,
**attrs)`` gives its outputs' ``(shape, dtype)`` (a list of them for several outputs), the
runner returns symbolic tensors (a Tensor with no buffer: its shape, dtype and device are
known, its value is not) and appends a ``Node`` to the graph.  Graph functions are built on this.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from . import devices as _device
from . import errors
from .dispatch import hooks, kernel_failed, to_tensor
from .tensor import Tensor, make

PRIMITIVES: dict = {}
#: primitives that are not public ops (they appear in graphs only: variable reads and updates, tf.print,
#: control flow, custom gradients) -> the reason, which tests/test_runner.py shows
INTERNAL: dict = {}


class Primitive:
    """A primitive op: its kernel implementation, its shape/dtype rule and its dtype rule.

    >>> from tapeflow.core.runner import PRIMITIVES
    >>> p = PRIMITIVES["reduce_sum"]
    >>> p.name, p.tf_name
    ('reduce_sum', 'Sum')
    """

    __slots__ = ("name", "tf_name", "impl", "infer", "dtypes", "mask", "same_dtype", "detail", "stateful",
                 "__weakref__")

    def __init__(self, name, tf_name, impl, infer, dtypes, same_dtype, detail, stateful=False) -> None:
        self.name, self.tf_name, self.impl, self.infer = name, tf_name, impl, infer
        self.dtypes, self.same_dtype, self.detail = dtypes, same_dtype, detail
        self.stateful = stateful
        self.mask = 0
        for d in dtypes or ():
            self.mask |= 1 << d.code

    def __call__(self, *inputs, **attrs):
        return run(self, inputs, attrs)

    def __repr__(self):
        return f"<primitive {self.name} ({self.tf_name})>"


def primitive(name: str, tf_name: str, *, infer, dtypes=None, same_dtype: bool = False, detail=None,
              stateful: bool = False, internal: str | None = None):
    """Declare the function below as primitive ``name``'s eager implementation.

    ``impl(dev, *inputs, **attrs)`` runs the kernels on device ``dev`` (inputs are already there)
    and returns a Tensor or a tuple of them. ``infer(*inputs, **attrs)`` returns ``(shape, dtype)``
    of the output, or a list of them for several, from the inputs' shapes and dtypes alone.
    ``dtypes`` are the dtypes the first input may have (every input's when ``same_dtype``);
    ``detail(status, inputs, attrs)`` may return the message for a failed kernel.  A ``stateful``
    primitive (random draws, variable updates, printing) runs on every call of a graph even when
    nothing uses its output, and is never merged with another or computed ahead of time.  An
    ``internal`` primitive is no public op of its own (say why): a graph's variable read, for instance.

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import primitive, run
    >>> from tapeflow.core.dtypes import float32
    >>> @primitive("doc_twice", "DocTwice", infer=lambda x: (x.shape, x.dtype), dtypes=(float32,))
    ... def _twice(dev, x):
    ...     return tf.add(x, x)
    >>> run(_twice, (tf.constant([1.0, 2.0]),)).numpy().tolist()
    [2.0, 4.0]
    >>> _ = PRIMITIVES.pop("doc_twice")
    """
    def deco(impl):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is declared twice")
        p = PRIMITIVES[name] = Primitive(name, tf_name, impl, infer, dtypes and tuple(dtypes), same_dtype, detail,
                                         stateful)
        if internal:
            INTERNAL[name] = internal
        return p

    return deco


class KernelStatus(Exception):
    """Raised by ``check`` inside an implementation; the runner turns it into the typed error."""

    def __init__(self, status: int, kernel: str) -> None:
        super().__init__(status, kernel)
        self.status, self.kernel = status, kernel


def check(status: int, kernel: str):
    """After a kernel call in an implementation: a non-zero status becomes the op's typed error."""
    if status:
        raise KernelStatus(status, kernel)


# ---- tracing -------------------------------------------------------------------------------

class Node:
    """One traced primitive: ``outputs = primitive(*inputs, **attrs)``, traced at ``where`` (the
    user's ``file:line``: a graph's errors name it) on device ``dev``."""

    __slots__ = ("prim", "inputs", "outputs", "attrs", "where", "dev")

    def __init__(self, prim, inputs, outputs, attrs, where=None, dev=None) -> None:
        self.prim, self.inputs, self.outputs, self.attrs = prim, inputs, outputs, attrs
        self.where, self.dev = where, dev

    def __repr__(self):
        outs = self.outputs if isinstance(self.outputs, tuple) else (self.outputs,)
        return f"Node({self.prim.name}: {', '.join(f'{o.dtype.name}{list(o._shape)}' for o in outs)})"


class Graph:
    """The nodes recorded while tracing, in order; ``reads`` maps each variable read while tracing
    to the symbolic tensor of its latest read (or update), so later reads see updates in order."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.reads: dict = {}

    def add(self, node: Node):
        self.nodes.append(node)


class _TraceState(threading.local):
    graph = None
    outer = ()  # the graphs that init_scope left, innermost last


_trace = _TraceState()


class tracing:
    """Run primitives in tracing mode on this thread: no kernel runs, ``graph`` gets a node per primitive.

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import Graph, tracing
    >>> g = Graph()
    >>> x = tf.ones([2, 3])
    >>> with tracing(g):
    ...     y = tf.reduce_sum(x, axis=1)
    >>> y.shape, y.dtype.name, g.nodes
    (TensorShape([2]), 'float32', [Node(reduce_sum: float32[2])])
    """

    __slots__ = ("graph", "_prev")

    def __init__(self, graph: Graph | None = None) -> None:
        self.graph = graph if graph is not None else Graph()

    def __enter__(self):
        self._prev = _trace.graph
        _trace.graph = self.graph
        with _lock:
            hooks.tracing += 1
        return self.graph

    def __exit__(self, *exc):
        _trace.graph = self._prev
        with _lock:
            hooks.tracing -= 1
        return False


_lock = threading.Lock()


def current_graph():
    """The graph this thread is tracing into, or None when ops run eagerly."""
    return _trace.graph if hooks.tracing else None


class init_scope:
    """Leave graph building for a while: ops inside run eagerly (and tapes do not record them),
    as TensorFlow's ``tf.init_scope``: how layers create their weights on the first trace.

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import Graph, tracing, init_scope
    >>> with tracing(Graph()):
    ...     with init_scope():
    ...         w = tf.ones([2])
    >>> w.numpy().tolist()
    [1.0, 1.0]
    """

    __slots__ = ("_prev", "_pause")

    def __enter__(self):
        self._prev = _trace.graph
        if self._prev is not None:
            _trace.outer = _trace.outer + (self._prev,)
            _trace.graph = None
        self._pause = hooks.paused()
        self._pause.__enter__()
        return self

    def __exit__(self, *exc):
        self._pause.__exit__(*exc)
        if self._prev is not None:
            _trace.graph = self._prev
            _trace.outer = _trace.outer[:-1]
        return False


def user_frame():
    """``file:line`` of the innermost frame outside tapeflow's modules (where a traced op was written)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_globals.get("__name__") or ""
        if not name.startswith("tapeflow.") and not f.f_code.co_filename.startswith("<frozen"):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return None


def symbolic(shape, dtype, dev) -> Tensor:
    """A tensor with a shape, dtype and device but no value (the output of a traced primitive)."""
    size = None
    if None not in shape:
        size = 1
        for d in shape:
            size *= d
    return make(None, None, tuple(shape), dtype, dev, size)


def trace_node(prim: Primitive, inputs: tuple, attrs, graph, dev=None):
    """Infer ``prim``'s outputs, add its node to ``graph`` and return the symbolic outputs."""
    dev = dev or (inputs[0]._dev if inputs else _device.default_device())
    spec = prim.infer(*inputs, **(attrs or {}))
    if isinstance(spec, list):
        out = tuple(symbolic(s, d, dev) for s, d in spec)
    else:
        out = symbolic(spec[0], spec[1], dev)
    graph.add(Node(prim, inputs, out, attrs, user_frame(), dev))
    return out


# ---- the runner ------------------------------------------------------------------------------

def _not_allowed(prim, dt):
    raise errors.InvalidArgumentError(
        f"{prim.tf_name} does not support {dt.name}; allowed: {', '.join(d.name for d in prim.dtypes)}",
        prim.tf_name)


def _same_dtype(prim, ins):
    dt = ins[0]._dtype
    for i, t in enumerate(ins[1:], 1):
        if t._dtype is not dt:
            raise errors.InvalidArgumentError(
                f"cannot compute {prim.tf_name} as input #{i}(zero-based) was expected to be a {dt.name} tensor "
                f"but is a {t._dtype.name} tensor; tapeflow does not mix dtypes, use tf.cast", prim.tf_name)


def fail(prim: Primitive, e: KernelStatus, ins, attrs):
    """A kernel status as ``prim``'s typed error, with its ``detail`` hook's message where it gives one."""
    detail = prim.detail(e.status, ins, attrs) if prim.detail is not None else ""
    kernel_failed(e.status, e.kernel, prim.tf_name, detail or "")


def run(prim: Primitive, inputs, attrs=None) -> Any:  # a Tensor, or a tuple of them for several outputs
    """Run primitive ``prim`` on ``inputs`` (tensors or convertible values) with ``attrs``.

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import PRIMITIVES, run
    >>> run(PRIMITIVES["reduce_sum"], ([[1, 2], [3, 4]],), {"axis": (1,), "keepdims": False}).numpy().tolist()
    [3, 7]
    """
    ins = inputs if type(inputs) is tuple else tuple(inputs)
    for x in ins:  # the common case, tensors only, without building a new tuple
        if type(x) is not Tensor:
            op = prim.tf_name
            ins = tuple(x if type(x) is Tensor else to_tensor(x, op) for x in inputs)
            break
    if ins:
        t0 = ins[0]
        if prim.mask and not (prim.mask >> t0._dtype.code) & 1:
            _not_allowed(prim, t0._dtype)
        if prim.same_dtype and len(ins) > 1:
            _same_dtype(prim, ins)
    return run_tensors(prim, ins, attrs)


def run_tensors(prim: Primitive, ins: tuple, attrs=None) -> Any:  # as run()
    """``run`` for inputs a wrapper has already converted to Tensors and checked against the dtype rule:
    placement, the kernel (or, tracing, the node), the typed error and the report to the recorder.

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import PRIMITIVES, run_tensors
    >>> run_tensors(PRIMITIVES["transpose"], (tf.constant([[1, 2]]),), {"perm": (1, 0)}).numpy().tolist()
    [[1], [2]]
    """
    stack = _device._scope.stack
    if stack and stack[-1] is not None:
        dev = stack[-1]
        ins = tuple(t if t._dev is dev or t._h is None else t.to(dev) for t in ins)
    elif ins:
        dev = ins[0]._dev
        for t in ins:
            if t._dev is not dev:
                ins = tuple(t if t._dev is dev or t._h is None else t.to(dev) for t in ins)
                break
    else:
        dev = _device.default_device()
    if hooks.tracing and _trace.graph is not None:
        out = trace_node(prim, ins, attrs, _trace.graph, dev)
    else:
        try:
            out = prim.impl(dev, *ins, **attrs) if attrs else prim.impl(dev, *ins)
        except KernelStatus as e:
            fail(prim, e, ins, attrs)
    rec = hooks.recorder
    if rec is not None:
        rec(prim.name, ins, out, attrs or None)
    return out
