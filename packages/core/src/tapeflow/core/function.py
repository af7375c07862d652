"""Graph functions: ``tf.function`` traces a Python function into a graph of primitives, then runs the graph.

Tracing runs the Python function once per input signature under ``runner.tracing``: every primitive
returns a symbolic tensor (shape and dtype known, value not) and appends a node.  Tensors are keyed by
dtype, shape and device; Python values by value; lists, tuples, dicts and namedtuples by structure;
variables by identity (read at call time through ``read_variable`` nodes, never baked in).

A call looks its arguments' key up, and runs the concrete function's *plan*: the graph's nodes after
dead-node pruning (stateful nodes always stay), each a direct call of the primitive's implementation
over a flat list of slots.  When a tape records on the calling thread, each node is reported to it as
eager ops are, so gradients (of any order) flow through a call.

>>> import tapeflow as tf
>>> @tf.function
... def f(x):
...     return tf.reduce_sum(x * x)
>>> print(f(tf.constant([1.0, 2.0])))
Tensor(5.0, shape=(), dtype=float32)
>>> f.experimental_get_tracing_count()
1
"""
from __future__ import annotations

import copy
import functools
import inspect
import itertools
import re
import threading
import types
import warnings
from typing import TYPE_CHECKING, Any, Callable, Generic, ParamSpec, TypeVar, overload

import numpy as np

from . import devices as _device
from . import errors
from . import nest
from .dispatch import hooks
from .runner import Graph, KernelStatus, Node, _trace, fail, init_scope, symbolic, tracing
from .tensor import Tensor, convert_to_tensor, make
from .tensor_spec import TensorSpec, relax

__all__ = ["function", "defun", "Function", "ConcreteFunction", "FuncGraph", "init_scope", "TensorSpec",
           "RetracingWarning"]

_names = itertools.count()
# a Function's parameters and result: those of the Python function it wraps (for type checkers)
_P = ParamSpec("_P")
_R = TypeVar("_R", covariant=True)
_Q = ParamSpec("_Q")
_S = TypeVar("_S")
if TYPE_CHECKING:
    from typing import Concatenate


class RetracingWarning(errors.PerformanceWarning):
    """A tf.function traced again and again (each call with a new shape or Python value).

    A :class:`~tapeflow.errors.PerformanceWarning` (so a ``UserWarning``, as TensorFlow's retracing warning):
    ``warnings.filterwarnings("ignore", category=tf.errors.PerformanceWarning)`` silences it with the others.

    >>> import tapeflow as tf
    >>> from tapeflow.core.function import RetracingWarning
    >>> issubclass(RetracingWarning, tf.errors.PerformanceWarning), issubclass(RetracingWarning, UserWarning)
    (True, True)
    """


# ---- graphs ------------------------------------------------------------------------------------

class FuncGraph(Graph):
    """A traced graph: ``nodes`` in order, ``inputs`` (placeholders), ``outputs`` (flat) and
    ``structured_outputs``.  Printing it lists its ops with shapes and dtypes.

    >>> import tapeflow as tf
    >>> f = tf.function(lambda x: tf.reduce_sum(tf.nn.relu(x), axis=1) + 1.0)
    >>> print(f.get_concrete_function(tf.TensorSpec([None, 2])).graph)
    graph <lambda>(x: float32[?,2]) -> float32[?]
      %0 = relu(%x)  float32[?,2]
      %1 = reduce_sum(%0)  float32[?]
      %2 = add(%1, const float32[])  float32[?]

    A chain of element-wise ops runs as one fused kernel, printed with its program:

    >>> print(tf.function(lambda x: tf.nn.relu(x) * 2.0 + 1.0).get_concrete_function(tf.TensorSpec([3])).graph)
    graph <lambda>(x: float32[3]) -> float32[3]
      %0 = fused_elementwise[add(multiply(relu(%x), 2.0), 1.0)](%x, const float32[], const float32[])  float32[3]
    """

    def __init__(self, name, allow_variables=True, parent=None):
        super().__init__()
        self.name = name
        self.inputs: list = []
        self.input_names: list = []
        self.outputs: list = []
        self.structured_outputs = None
        self.variables: list = []  # created while tracing
        self.allow_variables = allow_variables
        self.parent = parent
        self.lifted: dict = {}  # id(symbolic) -> concrete value computed once while tracing (initializers)

    def captured_variables(self) -> list:
        """The variables the graph reads or updates, in first-use order."""
        seen = {}
        for n in self.nodes:
            v = n.attrs.get("var") if n.attrs else None
            if v is not None:
                seen.setdefault(id(v), v)
                for s in n.attrs.get("slots", ()):  # an optimizer's step updates its slot variables too
                    if s is not None:
                        seen.setdefault(id(s), s)
            for sub in _subgraphs(n):
                for v in sub.captured_variables():
                    seen.setdefault(id(v), v)
        return list(seen.values())

    def __str__(self):
        names: dict = {}
        for i, (t, n) in enumerate(zip(self.inputs, self.input_names)):
            names[id(t)] = f"%{n}"
        lines = []
        counter = itertools.count()

        def ref(t):
            if id(t) in names:
                return names[id(t)]
            if t._h is not None:
                return f"const {_ty(t)}"
            return f"%outer:{_ty(t)}"

        for node in self.nodes:
            outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
            labels = []
            for o in outs:
                names[id(o)] = lab = f"%{next(counter)}"
                labels.append(lab)
            attrs = ""
            if node.attrs and "var" in node.attrs:
                attrs = f"[{node.attrs['var'].name}]"
            elif node.prim.name == "fused_elementwise":  # its program, the inputs by name
                attrs = "[" + re.sub(r"\$(\d+)", lambda m: ref(node.inputs[int(m.group(1))]), node.attrs["text"]) + "]"
            lhs = (", ".join(labels) + " = ") if labels else ""
            types_ = "  " + ", ".join(_ty(o) for o in outs) if outs else ""
            lines.append(f"  {lhs}{node.prim.name}{attrs}({', '.join(ref(t) for t in node.inputs)}){types_}")
        ins = ", ".join(f"{n}: {_ty(t)}" for t, n in zip(self.inputs, self.input_names))
        outs = ", ".join(_ty(t) if isinstance(t, Tensor) else repr(t) for t in self.outputs)
        return "\n".join([f"graph {self.name}({ins}) -> {outs or '()'}"] + lines)


def _ty(t) -> str:
    return f"{t._dtype.name}[{','.join('?' if d is None else str(d) for d in t._shape)}]"


def _subgraphs(node):
    subs = node.attrs.get("_graphs") if node.attrs else None
    return subs or ()


def _stateful(node) -> bool:
    if getattr(node.prim, "stateful", False):
        return True
    return any(_has_state(g) for g in _subgraphs(node))


def _has_state(graph) -> bool:
    return any(_stateful(n) for n in graph.nodes)


# ---- the executor --------------------------------------------------------------------------------

class Plan:
    """A graph compiled for running: pruned nodes over numbered slots.

    Slots: the inputs first, then ``captures`` (symbolic tensors of an enclosing graph the nodes use:
    the caller passes their values after the inputs), then constants, then intermediates.
    """

    __slots__ = ("steps", "template", "n_args", "outs", "captures", "name", "slot", "fast")

    def __init__(self, graph, inputs, outputs, name="graph", keep_stateful=True):
        self.name = name
        lifted = _lifted_of(graph)
        from .graph_opt import OPTIONS

        needed = {id(t) for t in outputs if isinstance(t, Tensor)}
        keep = []
        prune = not (keep_stateful and OPTIONS["disable_model_pruning"])
        for node in reversed(graph.nodes):
            outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
            if not prune or (keep_stateful and _stateful(node)) or any(id(o) in needed for o in outs):
                keep.append(node)
                for t in node.inputs:
                    needed.add(id(t))
        keep.reverse()
        progs = _kernel_programs(keep) if OPTIONS["kernel_executor"] else {}
        if progs:
            keep = _cluster(keep, progs)
        slot: dict = {}
        for t in inputs:
            slot[id(t)] = len(slot)
        produced = set()
        for node in keep:
            outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
            produced.update(id(o) for o in outs)
        captures, consts = [], []

        def external(t):
            k = id(t)
            if k in slot or k in produced:
                return
            if t._h is None and k not in lifted:
                slot[k] = None
                captures.append(t)
            else:
                slot[k] = None
                consts.append(lifted.get(k, t) if t._h is None else t)
                consts[-1] = (k, consts[-1])

        for node in keep:
            for t in node.inputs:
                external(t)
        for t in outputs:
            if isinstance(t, Tensor):
                external(t)
        n = len(inputs)
        for t in captures:
            slot[id(t)] = n
            n += 1
        self.n_args = n
        template: list = [None] * n
        for k, v in consts:
            slot[k] = len(template)
            template.append(v)
        first_inter = len(template)  # the steps' outputs from here (replaced constants may follow them)
        steps = []
        for node in keep:
            outs = node.outputs
            if isinstance(outs, tuple):
                out = []
                for o in outs:
                    slot[id(o)] = len(template)
                    template.append(None)
                    out.append(slot[id(o)])
                out = tuple(out)
            else:
                slot[id(outs)] = out = len(template)
                template.append(None)
            attrs = node.attrs or None
            late = _late_of(attrs) if attrs else None
            # inputs already on the node's device (the common case) need no check when the graph runs
            move = any(t._dev is not node.dev for t in node.inputs)
            steps.append((node.prim.impl, node.dev, tuple(slot[id(t)] for t in node.inputs), out, attrs, late, node,
                          move))
        for k, (_, t) in getattr(graph, "replaced", {}).items():  # a replaced tensor: its replacement's slot
            if k not in slot and isinstance(t, Tensor) and id(t) in slot:
                slot[k] = slot[id(t)]
            elif k not in slot and isinstance(t, Tensor) and t._h is not None:
                slot[k] = len(template)
                template.append(t)
        if OPTIONS["memory_optimizer"] and not any(st[6].prim.name in ENV_PRIMITIVES for st in steps):
            # (a custom gradient's function may read any intermediate after the run: then none is released)
            # the memory plan: each intermediate is released after the last step that reads it
            last: dict = {}
            for k, st in enumerate(steps):
                for i in st[2]:
                    last[i] = k
            keep_slots = set(i for i in (slot[id(t)] for t in outputs if isinstance(t, Tensor)))
            frees = [[] for _ in steps]
            for i, k in last.items():
                if i >= first_inter and i not in keep_slots:
                    frees[k].append(i)
            steps = [st + (tuple(f),) for st, f in zip(steps, frees)]
        else:
            steps = [st + ((),) for st in steps]
        self.steps = tuple(steps)
        self.template = template
        self.outs = tuple(slot[id(t)] if isinstance(t, Tensor) else None for t in outputs)
        self.fast = _fast_steps(self.steps, self.outs, {} if any(
            st[6].prim.name in ENV_PRIMITIVES for st in steps) else progs, OPTIONS["memory_optimizer"])
        self.captures = captures
        self.slot = slot

    def run(self, args, fname=None):
        """Run on ``args`` (inputs then captures' values); returns the flat outputs."""
        env = self.template.copy()
        env[:len(args)] = args
        rec = hooks.recorder
        fast = self.fast
        if rec is None and fast is not None:  # the executor: pre-bound kernel calls over the slots
            k = 0
            try:
                for call, ins, out, frees, k in fast:
                    if ins is None:  # a run of kernels: one C call
                        call(env)
                        continue
                    n = len(ins)   # (one or two inputs without building a list: most steps)
                    if n == 2:
                        r = call(env[ins[0]], env[ins[1]])
                    elif n == 1:
                        r = call(env[ins[0]])
                    else:
                        r = call(*[env[i] for i in ins])
                    if type(out) is int:
                        env[out] = r
                    else:
                        for i, o in zip(out, r):
                            env[i] = o
                    for i in frees:
                        env[i] = None
            except Exception:  # noqa: BLE001 (any error: rerun from the failed step to raise it as usual)
                # again through the general loop from the failed step: the same error, named and located
                return self._run_from(env, k, fname)
            return [env[i] if i is not None else None for i in self.outs]
        return self._run_from(env, 0, fname)

    def _run_from(self, env, start, fname):
        rec = hooks.recorder
        for impl, dev, ins, out, attrs, late, node, move, frees in self.steps[start:] if start else self.steps:
            vals = [env[i] for i in ins]
            if move:
                vals = [v if v._dev is dev else v.to(dev) for v in vals]
            if late is not None:
                attrs = {**attrs, **late()}
            try:
                r = impl(dev, *vals, **attrs) if attrs else impl(dev, *vals)
            except KernelStatus as e:
                try:
                    fail(node.prim, e, tuple(vals), attrs)
                except errors.OpError as oe:
                    raise _located(oe, node, fname or self.name) from None
            except errors.OpError as e:
                raise _located(e, node, fname or self.name) from None
            except Exception as e:
                e.add_note(_where(node, fname or self.name))
                raise
            if type(out) is int:
                env[out] = r
            else:
                for i, o in zip(out, r):
                    env[i] = o
            for i in frees:
                env[i] = None
            if rec is not None and node.prim.name not in TRANSPARENT:
                if node.prim.name in ENV_PRIMITIVES:
                    attrs = {**(attrs or {}), "_env": _Env(env, self.slot)}
                rec(node.prim.name, tuple(vals), r, attrs)
        return [env[i] if i is not None else None for i in self.outs]


def _kernel_programs(nodes) -> dict:
    """id(node) -> the fused program that runs it, for the nodes the C executor can run (CPU, known shapes)."""
    from .fusion import kernel_program

    out = {}
    for node in nodes:
        be = node.dev.backend
        if getattr(be, "name", None) == "cpu" and hasattr(be, "exec_fused") and \
                all(t._dev is node.dev for t in node.inputs if isinstance(t, Tensor)):
            a = kernel_program(node)
            if a is not None:
                out[id(node)] = a
    return out


def _cluster(nodes, progs) -> list:
    """``nodes`` reordered so that the ones the C executor runs (``progs``) come in longer runs: a topological
    order that takes, among the nodes ready, one of the kind just taken (executor or not) when there is one,
    else the first in the old order.  Stateful nodes and variable reads keep their order among themselves."""
    from .fusion import _dependencies

    deps, users = _dependencies(nodes)
    kind = [id(n) in progs for n in nodes]
    ready = [k for k in range(len(nodes)) if not deps[k]]
    order = []
    cur = None
    while ready:
        same = [k for k in ready if kind[k] == cur]
        k = min(same) if same else min(ready)
        ready.remove(k)
        cur = kind[k]
        order.append(nodes[k])
        for u in users[k]:
            deps[u].discard(k)
            if not deps[u]:
                ready.append(u)
    return order if len(order) == len(nodes) else list(nodes)


def _fast_steps(steps, outs, progs, reuse=True):
    """The executor's program for ``steps``: per item (a call, its input slots, output slot(s), slots to
    release after it, the index of its first step).  A step is its implementation with device and attributes
    bound; a run of two or more consecutive CPU steps that are kernels of known shapes (fused programs, lone
    element-wise ops) is one item, a :class:`_Segment` (one C call; ``ins`` None).  None when a step
    recomputes attributes per run or moves inputs between devices (those run through the general loop)."""
    if any(st[5] is not None or st[7] for st in steps):
        return None
    progs = [progs.get(id(st[6])) for st in steps]
    users: dict = {}
    for k, st in enumerate(steps):
        for i in st[2]:
            users.setdefault(i, set()).add(k)
    fast = []
    k = 0
    while k < len(steps):
        j = k
        while j < len(steps) and progs[j] is not None and steps[j][1] is steps[k][1]:
            j += 1
        if j - k < 2:  # (one kernel: its own implementation calls it as directly)
            impl, dev, ins, out, attrs, late, node, move, frees = steps[k]
            call = _device_step(node) or (
                functools.partial(impl, dev, **attrs) if attrs else functools.partial(impl, dev))
            fast.append((call, ins, out, frees, k))
            k += 1
            continue
        fast.append((_Segment(steps[k:j], progs[k:j], k, users, set(outs), reuse), None, None, None, k))
        k = j
    return tuple(fast)


class _SegmentFailed(Exception):
    pass


_EW_CODES: list = []
#: the dtypes whose element-wise primitives run their kernel straight away (no half types, complex or strings)
_EW_DTYPES = frozenset(("float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"))


def _device_step(node):
    """A lone element-wise op or matmul of known shapes on a backend that offers ``elementwise_call``
    (OpenCL), as a pre-bound call of its kernel (None otherwise): what its implementation does (allocate,
    ``binary_flat``, ``unary`` or ``matmul``, wrap), with the shapes, codes and the backend's choices made when
    the plan is made.  On pocl a small op's Python is most of its cost, and the tiny element-wise ones run on
    the host mirror: this is what makes a compiled function of small ops no slower than eager mode there.  A
    failing kernel raises, so that the plan reruns the step through its implementation for the op's error."""
    be = node.dev.backend
    make_call = getattr(be, "elementwise_call", None)
    if make_call is None or isinstance(node.outputs, tuple):
        return None
    if node.prim.name == "matmul":
        return _device_matmul(node)
    if node.attrs:
        return None
    if not _EW_CODES:
        from .ops import _ew, math_ops as m

        _EW_CODES.append({r[0]: _ew.BIN[r[1]] for r in m._BINARY})
        _EW_CODES.append({r[0]: _ew.UN[r[1]] for r in m._UNARY})
    bi, un = _EW_CODES
    name, ins, o = node.prim.name, node.inputs, node.outputs
    if len(ins) not in (1, 2) or any(t._dtype.name not in _EW_DTYPES for t in ins) or \
            o._dtype.name not in _EW_DTYPES or any(None in tuple(t._shape) for t in (*ins, o)):
        return None
    dt, shape, size, odt, dev = ins[0]._dtype, tuple(o._shape), o._size, o._dtype, node.dev
    nbytes = size * odt.np.itemsize
    if len(ins) == 2 and name in bi:
        x, y = ins
        sx, sy = tuple(x._shape), tuple(y._shape)
        if y._dtype is not dt:
            return None
        if sx == sy:
            flags = (0, 0)
        elif y._size == 1 and len(sy) <= len(sx):
            flags = (0, 1)
        elif x._size == 1 and len(sx) <= len(sy):
            flags = (1, 0)
        else:
            return None
        kernel = make_call(1, bi[name], dt.code, size, nbytes, *flags)

        def binary(a, b):
            st, h = kernel(a._h, b._h)
            if st:
                raise _SegmentFailed(st, 0)
            return make(h, None, shape, odt, dev, size)
        return binary
    if len(ins) == 1 and name in un:
        kernel = make_call(0, un[name], dt.code, size, nbytes)

        def unary(a):
            st, h = kernel(a._h)
            if st:
                raise _SegmentFailed(st, 0)
            return make(h, None, shape, odt, dev, size)
        return unary
    return None


def _device_matmul(node):
    """``_device_step`` of a matmul (the backend's ``matmul_call``): real dtypes other than the half ones, batch
    dimensions equal or of one matrix (no broadcast copy), as ``math_ops._matmul_eager`` runs them."""
    from .ops import math_ops

    a, b = node.inputs
    dt, o, dev = a._dtype, node.outputs, node.dev
    if b._dtype is not dt or dt.name not in _EW_DTYPES or dt.name == "bool" or \
            any(None in tuple(t._shape) for t in (a, b, o)):
        return None
    ta, tb = node.attrs["transpose_a"], node.attrs["transpose_b"]
    m, n, k, batch, bstr_a, bstr_b, shape, bcast, size, _ = math_ops._mm_plan(tuple(a._shape), tuple(b._shape),
                                                                             ta, tb)
    if bcast is not None or tuple(shape) != tuple(o._shape):
        return None
    be = dev.backend
    alloc, np_dt = be.alloc, dt.np
    kernel = be.matmul_call(dt.code, ta, tb, batch, m, n, k, bstr_a, bstr_b)

    def matmul(x, y):
        h, host = alloc(shape, np_dt)
        st = kernel(x._h, y._h, h)
        if st:
            raise _SegmentFailed(st, 0)
        return make(h, host, shape, dt, dev, size)
    return matmul


class _Segment:
    """A run of plan steps that are fused programs, executed by one call of the C executor
    (``csrc/executor.c``): the programs' arrays are made once.  With the memory plan (``reuse``), the
    tensors that live only inside the run share buffers (one buffer serves tensors of its size whose
    lives do not overlap), allocated at the first call and kept for the later ones (when another thread
    runs the same plan meanwhile, it allocates its own); without it, each has its own buffer, per call."""

    __slots__ = ("first", "n", "dev", "ext_in", "ext_out", "internal", "n_slots", "keep", "args", "frees", "lock",
                 "bufs", "run", "ffi", "alloc", "failed", "sizes", "reuse")

    def __init__(self, steps, progs, first, users, graph_outs, reuse=True):
        self.first, self.n, self.dev = first, len(steps), steps[0][1]
        be = self.dev.backend
        self.run, self.ffi, self.alloc = be.exec_fused, be.ffi, be.alloc
        ffi = be.ffi
        self.failed = ffi.new("int32_t[1]")
        inside = set(range(first, first + len(steps)))
        produced = {}
        for k, st in enumerate(steps):
            for i in (st[3] if type(st[3]) is tuple else (st[3],)):
                produced[i] = k
        local: dict = {}
        self.ext_in, self.ext_out, self.internal = [], [], []
        for st in steps:  # inputs from outside the run
            for i in st[2]:
                if i not in produced and i not in local:
                    local[i] = len(local)
                    self.ext_in.append((local[i], i))
        for st in steps:
            node = st[6]
            outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
            for i, t in zip(st[3] if type(st[3]) is tuple else (st[3],), outs):
                local[i] = len(local)
                spec = (local[i], i, tuple(t._shape), t._dtype, t._size)
                if i in graph_outs or not users.get(i, set()) <= inside:
                    self.ext_out.append(spec)
                else:
                    self.internal.append(spec)
        self.n_slots = len(local)
        self.reuse = reuse
        # the memory plan inside the run: buffer per internal tensor, a freed buffer serving a later tensor
        # of the same byte size (freed after the step that last reads it, so never a step's input and output)
        made_at = {}
        for k, st in enumerate(steps):
            for i in (st[3] if type(st[3]) is tuple else (st[3],)):
                made_at[i] = k
        last = {}
        for k, st in enumerate(steps):
            for i in st[2]:
                last[i] = k
        nbytes = {i: size * dt.np.itemsize for _, i, _, dt, size in self.internal}
        free: dict = {}
        self.sizes, owner = [], {}
        for k in range(len(steps)):
            for _, i, _, _, _ in self.internal:
                if made_at[i] == k:
                    pool = free.get(nbytes[i]) if reuse else None
                    if pool:
                        owner[i] = pool.pop()
                    else:
                        owner[i] = len(self.sizes)
                        self.sizes.append(nbytes[i])
            for _, i, _, _, _ in self.internal:
                if last.get(i, made_at[i]) == k:
                    free.setdefault(nbytes[i], []).append(owner[i])
        self.internal = [(j, owner[i]) for j, i, _, _, _ in self.internal]
        self.keep = []
        ints, programs, params, regdts, scalars, sizes = [], [], [], [], [], []
        for st, a in zip(steps, progs):
            outs = st[3] if type(st[3]) is tuple else (st[3],)
            n_out = len(a["out_regs"])
            red = a.get("red", ())
            h = [len(a["program"]), len(a["reg_dtypes"]), len(st[2]), n_out, len(red)]
            h += [local[i] for i in st[2]] + [local[i] for i in outs[:n_out]] + list(a["out_regs"])
            h += [c for _, c, _ in red] + [r for r, _, _ in red] + [local[i] for i in outs[n_out:]]
            size = 1
            for d in a["shape"]:
                size *= d
            arrs = (ffi.new("int32_t[]", h), ffi.new("int32_t[]", [v for ins in a["program"] for v in ins] or [0]),
                    ffi.new("double[]", list(a["params"]) or [0.0]), ffi.new("int32_t[]", list(a["reg_dtypes"])),
                    ffi.new("int64_t[]", list(a["period"]) or [0]))
            self.keep.append(arrs)
            ints.append(arrs[0])
            programs.append(arrs[1])
            params.append(arrs[2])
            regdts.append(arrs[3])
            scalars.append(arrs[4])
            sizes.append(size)
        self.args = (len(steps), ffi.new("int32_t *[]", programs), ffi.new("double *[]", params),
                     ffi.new("int32_t *[]", regdts), ffi.new("int64_t *[]", scalars), ffi.new("int64_t[]", sizes),
                     ffi.new("int32_t *[]", ints))
        self.frees = tuple(i for st in steps for i in st[8])
        self.lock = threading.Lock()
        self.bufs = None

    def _alloc_internal(self):
        bufs = [self.alloc((max(1, n),), "uint8")[0] for n in self.sizes]
        return [(j, bufs[b]) for j, b in self.internal]

    def __call__(self, env):
        slots = self.ffi.new("void *[]", self.n_slots)
        for j, i in self.ext_in:
            slots[j] = env[i]._h
        dev = self.dev
        alloc = self.alloc
        for j, i, shape, dt, size in self.ext_out:
            h, host = alloc(shape, dt.np)
            slots[j] = h
            env[i] = make(h, host, shape, dt, dev, size)
        if self.reuse and self.lock.acquire(False):
            try:
                if self.bufs is None:
                    self.bufs = self._alloc_internal()
                for j, h in self.bufs:
                    slots[j] = h
                failed = self.failed
                st = self.run(*self.args, slots, self.n_slots, failed)
            finally:
                self.lock.release()
        else:  # another thread runs this plan (or no memory plan): buffers of its own
            bufs = self._alloc_internal()  # (held until the call returns)
            for j, h in bufs:
                slots[j] = h
            failed = self.ffi.new("int32_t[1]")
            st = self.run(*self.args, slots, self.n_slots, failed)
        if st:
            raise _SegmentFailed(st, failed[0])
        for i in self.frees:
            env[i] = None


#: control flow: its subgraphs' ops are recorded as they run, not the node itself
TRANSPARENT = {"branch", "while_loop"}
#: primitives whose gradient rule needs the values the graph computed (their attrs get ``_env`` when recorded)
ENV_PRIMITIVES = {"custom_gradient"}


class _Env:
    """The values of one run of a graph, by the symbolic tensor they stand for."""

    __slots__ = ("env", "slot")

    def __init__(self, env, slot):
        self.env, self.slot = env, slot

    def get(self, t):
        i = self.slot.get(id(t))
        return None if i is None else self.env[i]


def run_with_env(fn, args, env: _Env):
    """Run ``fn(*args)`` (tensors) as a traced graph whose free symbolic tensors take their values from
    ``env`` (a graph run): how a gradient function written while tracing runs after the graph did."""
    fg = FuncGraph(getattr(fn, "__name__", "grad"))
    phs = [symbolic(a._shape, a._dtype, a._dev) for a in args]
    with tracing(fg):
        out = fn(*phs)
    flat = nest.flatten(out)
    outs = [x for x in flat if isinstance(x, Tensor)]
    plan = Plan(fg, phs, outs, fg.name)
    vals = []
    for t in plan.captures:
        v = env.get(t)
        if v is None:
            raise ValueError(f"{fg.name}: uses a symbolic tensor that the graph it belongs to did not compute")
        vals.append(v)
    res = iter(plan.run(list(args) + vals, fg.name))
    return nest.pack_sequence_as(out, [next(res) if isinstance(x, Tensor) else x for x in flat]) \
        if nest.is_nested(out) else (next(res) if isinstance(out, Tensor) else out)


def _late_of(attrs):
    """A function giving the attributes a node recomputes each run (a random op's stream), or None."""
    objs = []
    for v in attrs.values():
        if hasattr(v, "late_attrs") and all(v is not o for o in objs):
            objs.append(v)
    if not objs:
        return None
    if len(objs) == 1:
        return objs[0].late_attrs

    def late():
        out = {}
        for o in objs:
            out.update(o.late_attrs())
        return out
    return late


def _lifted_of(graph):
    lifted = {}
    g = graph
    while g is not None:
        lifted.update(getattr(g, "lifted", {}))
        g = getattr(g, "parent", None)
    return lifted


def _where(node, fname) -> str:
    at = f", created at {node.where}" if node.where else ""
    return f"raised by op {node.prim.tf_name} ({node.prim.name}) in graph function '{fname}'{at}"


def _located(e, node, fname):
    """``e`` again, its message naming the graph node (op and the user's source line) that raised it."""
    new = type(e)(f"{e.message}\n  {_where(node, fname)}", e.op)
    return new


# ---- variables inside graphs ---------------------------------------------------------------------

def lift(t: Tensor, graph) -> Tensor:
    """The value of symbolic ``t`` computed now, when it depends on no input of ``graph`` and no variable
    (the initial value of a variable created while tracing).  The nodes it needed run once, here, and
    leave the graph: later uses of their outputs see these values (an initializer's random draw is not
    repeated on every call)."""
    probe = Plan(graph, [], [t], graph.name, keep_stateful=False)
    nodes = [s[6] for s in probe.steps]
    if probe.captures or any(n.prim.name == "read_variable" for n in nodes):
        raise ValueError(f"tf.function '{graph.name}' creates a variable whose initial value depends on the "
                         f"function's inputs or on other variables; create the variable outside the function, "
                         f"or give an initial value that does not depend on them (a constant, or a callable "
                         f"initializer: it runs under tf.init_scope())")
    outs = [o for n in nodes for o in (n.outputs if isinstance(n.outputs, tuple) else (n.outputs,))]
    plan = Plan(graph, [], outs, graph.name, keep_stateful=False)
    with init_scope():
        vals = plan.run([], graph.name)
    graph.lifted.update(zip(map(id, outs), vals))
    used = set(map(id, nodes))
    graph.nodes = [n for n in graph.nodes if id(n) not in used]
    return graph.lifted[id(t)]


# ---- signatures --------------------------------------------------------------------------------

_SCALARS = (int, float, bool, str, bytes, complex, type(None))


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _encode(x, leaves: list, held: list):
    """The part of the cache key for argument ``x``; its tensors (and specs) go to ``leaves``."""
    tx = type(x)
    if tx is Tensor:
        leaves.append(x)
        return (x._dtype, x._shape, x._dev)
    if tx in _SCALARS:
        return (tx, x)
    if tx is tuple or tx is list:
        return (tx, tuple([_encode(c, leaves, held) for c in x]))
    if tx is dict:
        try:
            keys = sorted(x)
        except TypeError:
            raise TypeError(f"tf.function arguments: dict keys must be sortable, got {list(x)!r}") from None
        return (dict, tuple((k, _encode(x[k], leaves, held)) for k in keys))
    if isinstance(x, Tensor):
        leaves.append(x)
        return (x._dtype, x._shape, x._dev)
    if hasattr(x, "_as_tensor") and hasattr(x, "assign"):  # a Variable: by identity, read at call time
        held.append(x)
        return ("variable", id(x))
    if isinstance(x, TensorSpec):
        leaves.append(x)
        return (x.dtype, tuple(x.shape), None)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        t = convert_to_tensor(x)
        leaves.append(t)
        return (t._dtype, t._shape, t._dev)
    if _is_namedtuple(x):
        return (tx, tuple(_encode(c, leaves, held) for c in x))
    if isinstance(x, (tuple, list)):
        return (tx, tuple(_encode(c, leaves, held) for c in x))
    if isinstance(x, dict):
        return (tx, tuple((k, _encode(x[k], leaves, held)) for k in sorted(x)))
    try:
        hash(x)
    except TypeError:
        held.append(x)
        return ("object", id(x))
    held.append(x)  # hashable objects (by equality, as TensorFlow): kept alive with the trace
    return ("value", tx, x)


def _replace(x, it):
    """``x`` with its tensor leaves (in ``_encode``'s order) replaced from iterator ``it``."""
    tx = type(x)
    if tx is Tensor or isinstance(x, (Tensor, TensorSpec, np.ndarray, np.generic)):
        return next(it)
    if tx in _SCALARS:
        return x
    if tx is tuple or tx is list:
        return tx(_replace(c, it) for c in x)
    if tx is dict:
        return _replace_dict(x, it)
    if hasattr(x, "_as_tensor") and hasattr(x, "assign"):
        return x
    if _is_namedtuple(x):
        return tx(*(_replace(c, it) for c in x))
    if isinstance(x, (tuple, list)):
        return tx(_replace(c, it) for c in x)
    if isinstance(x, dict):
        return _replace_dict(x, it)
    return x


def _replace_dict(x, it):
    made = {k: _replace(x[k], it) for k in sorted(x)}
    out = {k: made[k] for k in x}
    return out if type(x) is dict else type(x)(out)


def _relaxed_key(key):
    """``key`` with tensors' shapes reduced to their rank (reduce_retracing)."""
    if type(key) is tuple and len(key) == 3 and isinstance(key[1], tuple) and hasattr(key[0], "is_floating"):
        return (key[0], len(key[1]), key[2])
    if type(key) is tuple:
        return tuple(_relaxed_key(k) for k in key)
    return key


def _describe_key(k) -> str:
    if type(k) is tuple and len(k) == 3 and hasattr(k[0], "is_floating"):
        return f"{k[0].name} tensor of shape {tuple(k[1])}"
    if type(k) is tuple and k and k[0] in ("variable", "object"):
        return f"{k[0]} #{k[1]}"
    if type(k) is tuple and len(k) == 2 and k[0] in _SCALARS:
        return f"Python {k[0].__name__} {k[1]!r}"
    if type(k) is tuple and len(k) == 3 and k[0] == "value":
        return f"Python value {k[2]!r}"
    return "a structure " + repr(k)[:60]


# ---- concrete functions -------------------------------------------------------------------------------

class ConcreteFunction:
    """One trace of a ``tf.function``: its graph and how to call it.

    >>> import tapeflow as tf
    >>> f = tf.function(lambda x: x * 2.0)
    >>> cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    >>> cf(tf.constant([1.0, 2.0])).numpy().tolist()
    [2.0, 4.0]
    >>> cf.structured_input_signature
    ((TensorSpec(shape=(None,), dtype=tf.float32, name='x'),), {})
    """

    def __init__(self, graph: FuncGraph, args_structure, kwargs_structure, specs, function=None):
        self.graph = graph
        self._args, self._kwargs = args_structure, kwargs_structure
        self._specs = specs  # the flat input specs (TensorSpec), in the order of graph.inputs
        self._function = function
        from .graph_opt import optimize

        graph.outputs = optimize(graph, graph.inputs, graph.outputs)
        self._plan = Plan(graph, graph.inputs, graph.outputs, graph.name)
        self._taped_plan = self._plan  # what runs under a tape: no fused node (the tape records each op)
        unfused = getattr(graph, "unfused_nodes", None)
        if unfused is not None and unfused is not graph.nodes:
            g = copy.copy(graph)
            g.nodes = unfused
            self._taped_plan = Plan(g, graph.inputs, graph.outputs, graph.name)
        graph.nodes = [st[6] for st in self._plan.steps]  # the graph as it runs (what printing shows)
        if self._plan.captures:
            raise ValueError(f"tf.function '{graph.name}' uses a symbolic tensor of another graph (a tensor "
                             f"created while tracing a different function, kept in a Python variable); pass it "
                             f"as an argument instead")
        self._single = _single_output(graph)

    @property
    def name(self):
        return self.graph.name

    @property
    def inputs(self) -> list:
        return list(self.graph.inputs)

    @property
    def outputs(self) -> list:
        return [t for t in self.graph.outputs if isinstance(t, Tensor)]

    @property
    def structured_outputs(self):
        return self.graph.structured_outputs

    @property
    def structured_input_signature(self):
        it = iter(self._specs)
        return _replace(self._args, it), _replace(self._kwargs, it)

    @property
    def variables(self) -> tuple:
        return tuple(self.graph.captured_variables())

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.graph.captured_variables() if v.trainable)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves: list = []
        _encode((args, kwargs), leaves, [])
        if len(leaves) != len(self._specs):
            raise TypeError(f"concrete function '{self.name}' takes {len(self._specs)} tensor inputs "
                            f"{self._specs}, got {len(leaves)}")
        flat = []
        for t, spec in zip(leaves, self._specs):
            if not isinstance(t, Tensor):
                t = convert_to_tensor(t, spec.dtype)
            if not spec.is_compatible_with(t):
                raise TypeError(f"concrete function '{self.name}': input {spec.name or ''} of dtype "
                                f"{t.dtype.name} and shape {tuple(t.shape)} does not match {spec!r}")
            flat.append(t)
        return self._call_flat(flat)

    def _call_flat(self, flat, placed=False):
        if hooks.tracing and _trace.graph is not None:  # called while another function is traced
            outs = self._inline(flat)
            if self._single is not None:
                return outs[0]
            return _pack_outputs(self.graph, outs)
        if not placed:  # inputs go to the devices the graph was traced for
            phs = self.graph.inputs
            flat = [t if t._dev is p._dev else t.to(p._dev) for t, p in zip(flat, phs)]
        outs = (self._plan if hooks.recorder is None else self._taped_plan).run(flat, self.graph.name)
        if self._single is not None:
            return outs[0]
        return _pack_outputs(self.graph, outs)

    def _inline(self, flat) -> list:
        """This function's graph added to the graph being traced, its inputs bound to ``flat`` (symbolic or
        not); returns the flat outputs.  As TensorFlow's call of a function from another (the outer graph
        calls the inner one, and its optimizer inlines the call): the nodes (as the tape records them, before
        fusion) join the outer graph with their attributes, so the outer graph's passes run over them,
        variables are read when the outer graph runs, and a tape recording while the outer function traces
        records each op (gradients flow through the call)."""
        return _replay(self._taped_plan, {id(p): t for p, t in zip(self.graph.inputs, flat)}, self.name)

    def fused_kernels(self) -> list:
        """The element-wise kernels the fusion pass made for this graph, in the order they run: for each, a
        dict with ``program`` (the expressions it computes; ``$k`` is its input k), ``inputs`` and ``outputs``
        (``dtype[shape]``) and, on a GPU device, ``source`` (the generated OpenCL C or CUDA C).

        >>> import tapeflow as tf
        >>> f = tf.function(lambda x: tf.exp(-x * x) + 1.0)
        >>> [k["program"] for k in f.get_concrete_function(tf.TensorSpec([3])).fused_kernels()]
        ['add(exp(multiply(negative(x), x)), 1.0)']
        """
        from .fusion import kernel_info

        return [kernel_info(n, self.graph) for n in self.graph.nodes if n.prim.name == "fused_elementwise"]

    def pretty_printed_signature(self, verbose=True) -> str:
        """``name(args)`` with each argument's type, then the output's.

        >>> import tapeflow as tf
        >>> f = tf.function(lambda x: x + 1)
        >>> print(f.get_concrete_function(tf.TensorSpec([2], tf.int32)).pretty_printed_signature())
        Input Parameters:
          x: TensorSpec(shape=(2,), dtype=tf.int32, name='x')
        Output Type:
          TensorSpec(shape=(2,), dtype=tf.int32, name=None)
        """
        args, kwargs = self.structured_input_signature
        params = _param_names(self._function) if self._function is not None else []
        lines = ["Input Parameters:"]
        lines += [f"  {params[i] if i < len(params) else f'arg{i}'}: {a!r}" for i, a in enumerate(args)]
        lines += [f"  {k}: {v!r}" for k, v in kwargs.items()]
        outs = self.graph.outputs

        def spec(x):
            t = outs[x.i] if type(x) is _Slot else x
            return TensorSpec(tuple(t._shape), t._dtype) if isinstance(t, Tensor) else t

        lines += ["Output Type:", f"  {nest.map_structure(spec, self.graph.structured_outputs)!r}"]
        return "\n".join(lines)

    def __repr__(self):
        return f"<ConcreteFunction {self.name}({', '.join(map(repr, self._specs))})>"


def _replay(plan, env, fname) -> list:
    """Add ``plan``'s nodes (of another graph) to the graph being traced, the other graph's tensors mapped
    through ``env`` (id -> a tensor of this graph: the inputs and captures first; the outputs are added);
    returns the plan's outputs in this graph."""
    g = _trace.graph
    slot, template = plan.slot, plan.template

    def get(t):
        v = env.get(id(t))
        if v is None:
            i = slot.get(id(t))
            v = template[i] if i is not None and isinstance(template[i], Tensor) else t  # a constant, or lifted
        return v

    for node in (st[6] for st in plan.steps):
        if node.prim.name in ENV_PRIMITIVES:
            raise ValueError(f"concrete function '{fname}' holds a tf.custom_gradient, whose gradient function "
                             f"reads the values of the graph it was traced in; it cannot be called inside another "
                             f"tf.function: call the tf.function itself there (it traces again)")
        attrs = node.attrs
        if node.prim.name == "read_variable":  # as the outer function's own reads: one per variable until an
            env[id(node.outputs)] = attrs["var"].read_value()  # update, watched by tapes
            continue
        if node.prim.name == "variable_update":
            g.reads.pop(attrs["var"], None)
        ins = tuple(get(t) for t in node.inputs)
        if node.prim.name == "branch":  # built again from its branch graphs, replayed: its Python functions
            # (which a tape inside the outer function traces again) close over the other graph's tensors, and its
            # output shapes come from the branches over this graph's tensors
            from .control_flow import _build_branches

            fns = tuple(_branch_replayer(p, [ins[1 + j] for j in idx], fname)
                        for p, idx in zip(attrs["plans"], attrs["cap_index"]))
            res = _build_branches(ins[0], fns, attrs["names"], "tf.cond")
            for o, r in zip(node.outputs if isinstance(node.outputs, tuple) else (node.outputs,), res):
                env[id(o)] = r
            continue
        spec = node.prim.infer(*ins, **(attrs or {}))
        if isinstance(spec, list):
            out = tuple(symbolic(sh, dt, node.dev) for sh, dt in spec)
            for o, n in zip(node.outputs, out):
                env[id(o)] = n
        else:
            out = symbolic(spec[0], spec[1], node.dev)
            env[id(node.outputs)] = out
        g.add(Node(node.prim, ins, out, attrs, node.where, node.dev))
        rec = hooks.recorder
        if rec is not None:
            rec(node.prim.name, ins, out, attrs or None)
        if _subgraphs(node):
            g.reads.clear()  # control flow may have updated variables: read them again after it
    by_slot: dict = {}
    for k, i in slot.items():
        if k in env:
            by_slot.setdefault(i, env[k])
    return [None if i is None else by_slot[i] if i in by_slot else template[i] for i in plan.outs]


def _branch_replayer(plan, caps, fname):
    def fn():
        return _replay(plan, {id(c): t for c, t in zip(plan.captures, caps)}, fname)
    return fn


def _single_output(graph):
    so = graph.structured_outputs
    return so if isinstance(so, Tensor) else None


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _pack_outputs(graph, outs):
    so = graph.structured_outputs
    flat = nest.flatten(so)
    vals = [outs[x.i] if type(x) is _Slot else x for x in flat]
    return nest.pack_sequence_as(so, vals) if nest.is_nested(so) else vals[0]


def _param_names(fn) -> list:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


# ---- tf.function -------------------------------------------------------------------------------------

_RETRACE_WINDOW = 5


class _Eager:
    flag = False  # tf.config.run_functions_eagerly


_EAGER = _Eager()


def functions_run_eagerly() -> bool:
    """Whether tf.config.run_functions_eagerly(True) is in effect."""
    return _EAGER.flag


class Function(Generic[_P, _R]):
    """A Python function that runs as a traced graph (``tf.function``'s result).

    >>> import tapeflow as tf
    >>> v = tf.Variable(1.0)
    >>> @tf.function
    ... def step(x):
    ...     v.assign_add(x)
    ...     return v.read_value()
    >>> step(tf.constant(2.0)).numpy(), step(tf.constant(3.0)).numpy(), v.numpy()
    (np.float32(3.0), np.float32(6.0), np.float32(6.0))
    """

    def __init__(self, python_function: Callable[_P, _R], name: str | None = None,
                 input_signature: Any = None, autograph: bool = True, jit_compile: bool | None = None,
                 reduce_retracing: bool = False) -> None:
        if not callable(python_function):
            raise TypeError(f"tf.function needs a callable, got {type(python_function).__name__}")
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._autograph = bool(autograph)
        self._jit_compile = jit_compile
        self._reduce_retracing = bool(reduce_retracing)
        self._signature = None
        if input_signature is not None:
            if not isinstance(input_signature, (list, tuple)):
                raise TypeError(f"input_signature must be a list or tuple of tf.TensorSpec, got "
                                f"{type(input_signature).__name__}")
            for s in nest.flatten(list(input_signature)):
                if not isinstance(s, TensorSpec):
                    raise TypeError(f"input_signature may only contain tf.TensorSpec objects, got {s!r}")
            self._signature = tuple(input_signature)
        # a flat signature of TensorSpecs: (dtype, dims) per argument, for the call's check without nest
        self._flat_sig = None if self._signature is None or any(type(s) is not TensorSpec for s in self._signature) \
            else tuple((s._dtype, tuple(None if d is None else int(d) for d in s._shape)) for s in self._signature)
        self._cache: dict = {}
        self._relaxed: dict = {}
        self._held: dict = {}
        self._lock = threading.RLock()
        self._traces = 0
        self._streak = 0  # consecutive calls that traced (the retracing warning)
        self._fast: dict = {}  # calls with tensors only: ids of (dtype, shape, device) per argument -> concrete fn
        self._last_key = None
        self._converted = None
        self._variables_created = False
        self._warned = False
        functools.update_wrapper(self, python_function, updated=())

    # -- properties TensorFlow has
    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._signature

    @property
    def function_spec(self):
        return self._signature

    def experimental_get_tracing_count(self) -> int:
        """How many times this function has been traced (one per new input signature)."""
        return self._traces

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Function[_P, _R]: ...
    @overload
    def __get__(self: Function[Concatenate[_S, _Q], _R], instance: _S,
                owner: type | None = None) -> Function[_Q, _R]: ...

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        key = f"__tf_function_{id(self)}"
        d = getattr(instance, "__dict__", None)
        if d is None:
            return Function(types.MethodType(self._python_function, instance), self._name, self._signature,
                            self._autograph, self._jit_compile, self._reduce_retracing)
        bound = d.get(key)
        if bound is None:
            sig = self._signature
            bound = Function(types.MethodType(self._python_function, instance), self._name, sig,
                             self._autograph, self._jit_compile, self._reduce_retracing)
            d[key] = bound
        return bound

    def __repr__(self):
        return f"<tapeflow.function {self._name}>"

    # -- calling
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _EAGER.flag:
            return self._python_function(*args, **kwargs)
        if _trace.graph is not None and hooks.tracing:
            # called while another function is traced: its ops join that graph
            return self._traced_callable()(*args, **kwargs)
        if not kwargs and self._signature is None:  # the common case, tensors only: a flat key
            n = len(args)
            if n == 1:   # (one or two tensors, the most common calls, without a comprehension)
                a = args[0]
                key = ((id(a._dtype), a._shape, id(a._dev)),) if type(a) is Tensor else None
            elif n == 2:
                a, b = args
                key = ((id(a._dtype), a._shape, id(a._dev)), (id(b._dtype), b._shape, id(b._dev))) \
                    if type(a) is Tensor and type(b) is Tensor else None
            else:
                try:  # (dtypes and devices are interned: their ids stand for them, without Python-level hashing)
                    key = tuple([(id(a._dtype), a._shape, id(a._dev)) for a in args if type(a) is Tensor])
                except AttributeError:
                    key = None
            if key is not None and len(key) == len(args):
                cf = self._fast.get(key)
                if cf is not None:
                    self._streak = 0
                    return cf._call_flat(args, True)   # (placed: the tuple is only read)
                cf, flat = self._concrete(args, kwargs, run=True)
                self._fast[key] = cf
                return cf._call_flat(flat)
        fs = self._flat_sig
        if fs is not None and not kwargs and len(args) == len(fs):  # tensors matching a flat input_signature
            cf = self._cache.get("signature")
            if cf is not None:
                for a, (dt, dims) in zip(args, fs):
                    if type(a) is not Tensor or a._dtype is not dt or len(a._shape) != len(dims):
                        break
                    if any(d is not None and d != n for d, n in zip(dims, a._shape)):
                        break
                else:
                    self._streak = 0
                    return cf._call_flat(list(args))
        cf, flat = self._concrete(args, kwargs, run=True)
        return cf._call_flat(flat)

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The concrete function for these arguments (tensors, ``tf.TensorSpec``, Python values),
        tracing it if needed; with an ``input_signature``, no arguments are needed.

        >>> import tapeflow as tf
        >>> f = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([None])])
        >>> f.get_concrete_function().graph.inputs[0].shape
        TensorShape([None])
        """
        if self._signature is not None and not args and not kwargs:
            args = self._signature
        return self._concrete(args, kwargs, run=False)[0]

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every concrete function traced so far, with its signature (what to read when it retraces)."""
        out = []
        for cf in self._concretes():
            out.append(f"{self._name}({', '.join(_param_names(self._python_function)) })\n" +
                       "\n".join("  " + line for line in cf.pretty_printed_signature().splitlines()))
        return "\n\n".join(out)

    def _concretes(self):
        seen = []
        for cf in list(self._cache.values()) + list(self._relaxed.values()):
            if all(cf is not c for c in seen):
                seen.append(cf)
        return seen

    def _traced_callable(self):
        if self._converted is None:
            fn = self._python_function
            if self._autograph:
                try:
                    from . import autograph as _ag
                except ImportError:  # AutoGraph not present: plain Python tracing
                    _ag = None
                convert = getattr(_ag, "convert", None)
                if convert is not None:
                    fn = convert(fn)
            self._converted = fn
        return self._converted

    def _bind_signature(self, args, kwargs):
        """Arguments matched to ``input_signature``: (args as specs' structure, flat tensors)."""
        sig = self._signature
        params = _param_names(self._python_function)
        args = list(args)
        for name in params[len(args):len(sig)]:
            if name in kwargs:
                args.append(kwargs.pop(name))
        if kwargs or len(args) != len(sig):
            raise TypeError(f"tf.function '{self._name}' has input_signature {list(sig)}, which takes "
                            f"{len(sig)} positional arguments; got {len(args)} positional and keyword "
                            f"arguments {sorted(kwargs)}")
        flat = []
        for i, (a, s) in enumerate(zip(args, sig)):
            specs = nest.flatten(s)
            try:
                vals = nest.flatten(a)
                nest.assert_same_structure(s, a, check_types=False)
            except (ValueError, TypeError):
                raise TypeError(f"tf.function '{self._name}': argument {i} ({a!r:.60}) does not have the "
                                f"structure of input_signature[{i}] {s!r}") from None
            for v, spec in zip(vals, specs):
                t = v if isinstance(v, Tensor) else v.read_value() if hasattr(v, "assign") else None
                if t is None:
                    try:
                        t = convert_to_tensor(v, spec.dtype)
                    except (TypeError, ValueError, errors.OpError):
                        raise TypeError(f"tf.function '{self._name}': argument {i} = {v!r:.60} cannot be "
                                        f"converted to {spec!r}") from None
                if not spec.is_compatible_with(t):
                    raise TypeError(f"tf.function '{self._name}': argument {i} is a {t.dtype.name} tensor of "
                                    f"shape {tuple(t.shape)}, which input_signature {spec!r} does not allow")
                flat.append(t)
        return flat

    def _concrete(self, args, kwargs, run):
        if self._signature is not None:
            flat = self._bind_signature(args, kwargs) if run or any(
                not isinstance(a, TensorSpec) for a in nest.flatten(list(args))) else list(nest.flatten(list(args)))
            cf = self._cache.get("signature")
            if cf is None:
                with self._lock:
                    cf = self._cache.get("signature")
                    if cf is None:
                        cf = self._cache["signature"] = self._trace(
                            tuple(self._signature), {}, list(nest.flatten(list(self._signature))), "signature", None)
            self._streak = 0
            return cf, [t for t in flat if isinstance(t, Tensor)]
        leaves: list = []
        held: list = []
        key = _encode((args, kwargs), leaves, held)
        cf = self._cache.get(key)
        if cf is not None:
            self._streak = 0
            return cf, leaves
        with self._lock:
            cf = self._cache.get(key)
            if cf is None and self._reduce_retracing:
                rk = _relaxed_key(key)
                cf = self._relaxed.get(rk)
                if cf is not None and not all(s.is_compatible_with(t) for s, t in zip(cf._specs, leaves)):
                    specs = [TensorSpec(relax(s.shape, _leaf_shape(t)), s.dtype) for s, t in zip(cf._specs, leaves)]
                    cf = self._trace(args, kwargs, specs, key, held)
                    self._relaxed[rk] = cf
                elif cf is None:
                    cf = self._trace(args, kwargs, [_leaf_spec(t) for t in leaves], key, held)
                    self._relaxed[rk] = cf
                self._cache[key] = cf
            elif cf is None:
                cf = self._trace(args, kwargs, [_leaf_spec(t) for t in leaves], key, held)
                self._cache[key] = cf
        return cf, leaves

    def _trace(self, args, kwargs, specs, key, held):
        name = self._name
        fg = FuncGraph(name, allow_variables=not self._variables_created)
        devs = []
        leaves: list = []
        _encode((args, kwargs), leaves, [])
        for t in leaves:
            devs.append(t._dev if isinstance(t, Tensor) else _device.default_device())
        phs = [symbolic(tuple(s.shape), s.dtype, d) for s, d in zip(specs, devs)]
        params = _param_names(self._python_function)
        fg.inputs = phs
        fg.input_names = _leaf_names(args, kwargs, params)
        targs, tkwargs = _replace((args, kwargs), iter(phs))
        fn = self._traced_callable()
        fg.jit_compile = bool(self._jit_compile)  # the fusion pass: every element-wise op fused, or an error
        with tracing(fg):
            out = fn(*targs, **tkwargs)
            out = nest.map_structure(_read_if_variable, out)
        if fg.variables:
            self._variables_created = True
        flat = nest.flatten(out)
        outputs, marks = [], []
        for x in flat:
            if isinstance(x, Tensor):
                marks.append(_Slot(len(outputs)))
                outputs.append(x)
            else:
                marks.append(x)
        fg.outputs = outputs
        fg.structured_outputs = out if isinstance(out, Tensor) else (
            nest.pack_sequence_as(out, marks) if nest.is_nested(out) else marks[0])
        named = [TensorSpec(tuple(s.shape), s.dtype, n) for s, n in zip(specs, fg.input_names)]
        cf = ConcreteFunction(fg, args, kwargs, named, self._python_function)
        if isinstance(out, Tensor):
            cf._single = out
        self._traces += 1
        if held:
            self._held[key] = held
        self._warn_retracing(key, params)
        self._last_key = key
        self._streak += 1
        return cf

    def _warn_retracing(self, key, params):
        if self._warned or self._traces <= _RETRACE_WINDOW or self._streak + 1 < _RETRACE_WINDOW:
            return
        self._warned = True
        changed = _changed_argument(self._last_key, key, params)
        warnings.warn(
            f"{_RETRACE_WINDOW} out of the last {_RETRACE_WINDOW} calls to tf.function '{self._name}' triggered "
            f"retracing ({self._traces} traces so far){changed}. Tracing is expensive: pass tensors rather than "
            f"Python numbers, fix shapes with input_signature=[tf.TensorSpec([None, ...])], or use "
            f"reduce_retracing=True.", RetracingWarning, stacklevel=4)


def _changed_argument(old, new, params) -> str:
    if old is None or old == "signature":
        return ""
    (oargs, okw), (nargs, nkw) = old[1], new[1]
    oargs, nargs = oargs[1], nargs[1]
    for i, (a, b) in enumerate(zip(oargs, nargs)):
        if a != b:
            name = params[i] if i < len(params) else f"#{i}"
            return f"; argument '{name}' changed from {_describe_key(a)} to {_describe_key(b)}"
    for (ka, a), (kb, b) in zip(okw[1], nkw[1]):
        if a != b:
            return f"; argument '{ka}' changed from {_describe_key(a)} to {_describe_key(b)}"
    return ""


def _leaf_spec(t) -> TensorSpec:
    return t if isinstance(t, TensorSpec) else TensorSpec(tuple(t._shape), t._dtype)


def _leaf_shape(t):
    return tuple(t.shape)


def _leaf_names(args, kwargs, params) -> list:
    names = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"arg{i}"
        n = len(_leaves_of(a))
        names += [base] if n == 1 else [f"{base}_{j}" for j in range(n)]
    for k in sorted(kwargs):
        n = len(_leaves_of(kwargs[k]))
        names += [k] if n == 1 else [f"{k}_{j}" for j in range(n)]
    return names


def _leaves_of(x) -> list:
    leaves: list = []
    _encode(x, leaves, [])
    return leaves


def _read_if_variable(x):
    return x.read_value() if hasattr(x, "_as_tensor") and hasattr(x, "assign") else x


@overload
def function(func: Callable[_P, _R], input_signature: Any = None, autograph: bool = True,
             jit_compile: bool | None = None, reduce_retracing: bool = False, experimental_implements: Any = None,
             experimental_autograph_options: Any = None, experimental_attributes: Any = None,
             experimental_relax_shapes: bool | None = None, experimental_compile: bool | None = None,
             experimental_follow_type_hints: Any = None, name: str | None = None) -> Function[_P, _R]: ...
@overload
def function(func: None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: bool | None = None, reduce_retracing: bool = False, experimental_implements: Any = None,
             experimental_autograph_options: Any = None, experimental_attributes: Any = None,
             experimental_relax_shapes: bool | None = None, experimental_compile: bool | None = None,
             experimental_follow_type_hints: Any = None,
             name: str | None = None) -> Callable[[Callable[_Q, _S]], Function[_Q, _S]]: ...


def function(func: Callable[..., Any] | None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: bool | None = None, reduce_retracing: bool = False, experimental_implements: Any = None,
             experimental_autograph_options: Any = None, experimental_attributes: Any = None,
             experimental_relax_shapes: bool | None = None, experimental_compile: bool | None = None,
             experimental_follow_type_hints: Any = None, name: str | None = None) -> Any:
    """Compile ``func`` into a graph function: traced once per input signature, then run as a graph.

    Usable as ``@tf.function``, ``@tf.function(input_signature=[...])`` or ``tf.function(f)``.
    ``autograph`` (default True) converts Python ``if``/``while``/``for`` on tensors into graph control
    flow; ``reduce_retracing`` relaxes shapes to unknown dimensions instead of retracing per shape;
    ``jit_compile=True`` fuses aggressively (TensorFlow's "compile, or fail"): every element-wise op of the graph
    becomes part of a fused kernel (even a lone one), and the trace raises ``InvalidArgumentError`` naming an
    element-wise op that cannot be (a broadcast other than of a scalar or of the last dimensions, an integer
    or half dtype); other ops run as always.  Unset or False, the fusion pass (``elementwise_fusion``) fuses the
    chains of two or more.

    >>> import tapeflow as tf
    >>> @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    ... def scale(x):
    ...     return x * 3.0
    >>> scale(tf.constant([1.0, 2.0])).numpy().tolist(), scale.experimental_get_tracing_count()
    ([3.0, 6.0], 1)
    """
    for arg, what in ((experimental_implements, "experimental_implements"),
                      (experimental_autograph_options, "experimental_autograph_options"),
                      (experimental_attributes, "experimental_attributes"),
                      (experimental_follow_type_hints, "experimental_follow_type_hints")):
        if arg:
            raise ValueError(f"tf.function: {what} is not supported by tapeflow (got {arg!r}); leave it unset")
    if experimental_relax_shapes is not None:
        reduce_retracing = bool(experimental_relax_shapes) or reduce_retracing
    if experimental_compile is not None and jit_compile is None:
        jit_compile = experimental_compile

    def wrap(f):
        if isinstance(f, Function):
            f = f.python_function
        return Function(f, name=name, input_signature=input_signature, autograph=autograph,
                        jit_compile=jit_compile, reduce_retracing=reduce_retracing)

    return wrap(func) if func is not None else wrap


def defun(func=None, input_signature=None, autograph=True):
    """The seeds' ``tfe.defun``: :func:`function` under its first name.

    >>> import tapeflow as tf
    >>> tf.defun(lambda x: x * x)(tf.constant(3.0)).numpy()
    np.float32(9.0)
    """
    return function(func, input_signature=input_signature, autograph=autograph)
