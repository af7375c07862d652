"""Graph passes: what a traced graph goes through before it is compiled into a plan.

In order: algebraic simplification (``x * 1``, ``x + 0``, ``x - 0``, ``x / 1``, a transpose of a
transpose, a reshape of a reshape, a cast to the dtype a tensor has, a ``broadcast_to`` read by a binary
element-wise op that broadcasts by itself), constant folding (a node whose
inputs are all constants runs once, now: never a stateful node, a random draw or a variable read),
common-subexpression elimination (two nodes of the same primitive on the same inputs with the same
attributes compute once), and dead-code elimination with the memory plan in ``function.Plan``
(nodes nothing needs are dropped, stateful ones kept; each intermediate is released after its last
use).  ``function.Plan`` then orders the steps so that kernels of known shapes on the CPU (fused
programs, lone element-wise ops) come in runs, each run executed by one C call (``csrc/executor.c``)
whose buffers that never leave it are allocated once and reused (``kernel_executor``).  Each pass can
be switched off for debugging, with TensorFlow's spelling:

>>> import tapeflow as tf
>>> tf.config.optimizer.set_experimental_options({"constant_folding": False})
>>> tf.config.optimizer.get_experimental_options()["constant_folding"]
False
>>> tf.config.optimizer.set_experimental_options({"constant_folding": True})
"""
from __future__ import annotations

import numpy as np

from .errors import OpError
from .runner import KernelStatus
from .tensor import Tensor

#: pass -> on; the keys are TensorFlow's (tf.config.optimizer.set_experimental_options)
OPTIONS = {
    "arithmetic_optimization": True,   # algebraic simplification and common-subexpression elimination
    "constant_folding": True,
    "disable_model_pruning": False,    # True keeps nodes nothing needs (dead-code elimination off)
    "memory_optimizer": True,          # release each intermediate after its last use
    "elementwise_fusion": True,        # chains of element-wise ops as one kernel (fusion.py)
    "kernel_executor": True,           # runs of kernels of known shapes as one C call (function.Plan)
    "fusion_codegen": True,            # fused kernels as generated C compiled at first use, else interpreted
}
#: TensorFlow's other switches: passes tapeflow does not have, so they may only be turned off
ABSENT = ("layout_optimizer", "shape_optimization", "remapping", "dependency_optimization", "loop_optimization",
          "function_optimization", "debug_stripper", "scoped_allocator_optimization", "pin_to_host_optimization",
          "implementation_selector", "auto_mixed_precision", "disable_meta_optimizer", "min_graph_nodes")

_FOLD_MAX = 1 << 16  # elements: larger constant results stay computed per call (memory over speed)
_NOT_FOLDED = {"read_variable", "variable_update", "print", "branch", "while_loop", "custom_gradient",
               "learning_rate_schedule", "while_loop_grad"}


def set_options(options: dict):
    for k, v in options.items():
        if k in OPTIONS:
            if not isinstance(v, bool):
                raise TypeError(f"tf.config.optimizer option {k!r} takes True or False, got {v!r}")
            OPTIONS[k] = v
            if k == "fusion_codegen":
                from .fusion import codegen_switch

                codegen_switch(v)
        elif k in ABSENT:
            if v not in (False, None) and not (k == "min_graph_nodes" and isinstance(v, int)):
                raise ValueError(f"tf.config.optimizer option {k!r}: tapeflow has no such pass, so it cannot be "
                                 f"turned on; tapeflow's passes: {sorted(OPTIONS)}")
        else:
            raise ValueError(f"unknown tf.config.optimizer option {k!r}; allowed: {sorted(OPTIONS)} (and "
                             f"TensorFlow's {', '.join(ABSENT)}, which tapeflow does not have, set to False)")


def optimize(graph, inputs, outputs) -> list:
    """Run the passes switched on over ``graph`` (its nodes change in place); returns ``outputs`` with
    every tensor a pass replaced by its equal."""
    sub: dict = {}
    if OPTIONS["arithmetic_optimization"]:
        _simplify(graph, sub)
    if OPTIONS["constant_folding"]:
        _fold(graph, sub)
    if OPTIONS["arithmetic_optimization"]:
        _cse(graph, sub)
    graph.replaced = {k: (old, _get(sub, old)) for k, (old, _) in sub.items()}  # closures may keep a replaced one
    outputs = [_get(sub, t) for t in outputs]
    if OPTIONS["elementwise_fusion"] or getattr(graph, "jit_compile", False):  # (jit_compile=True: always)
        from .fusion import fuse, xent_backprop

        taped = graph.nodes  # (what a tape records when the graph runs under one: each op, no fused kernel)
        graph.nodes = xent_backprop(graph.nodes)
        fuse(graph, outputs, bool(getattr(graph, "jit_compile", False)))
        graph.unfused_nodes = taped
    return outputs


def _get(sub, t):
    while isinstance(t, Tensor) and id(t) in sub:
        t = sub[id(t)][1]
    return t


def _put(sub, old, new):
    sub[id(old)] = (old, new)  # the old tensor is kept alive, so its id is not reused while the passes run


def _rewire(node, sub):
    if sub and any(id(t) in sub for t in node.inputs):
        node.inputs = tuple(_get(sub, t) for t in node.inputs)


def _const_value(t):
    """The value of a small constant tensor as a NumPy array, or None."""
    if not isinstance(t, Tensor) or t._h is None or t._size is None or t._size > 64 or t._dtype.is_string:
        return None  # (string constants are merged by identity only)
    return t.numpy()


def _is(t, value) -> bool:
    v = _const_value(t)
    return v is not None and v.size > 0 and bool(np.all(v == value))


def _same_type(a, b) -> bool:
    return a._dtype is b._dtype and tuple(a._shape) == tuple(b._shape) and None not in tuple(a._shape)


# ---- algebraic simplification ----------------------------------------------------------------------

_IDENTITY_RIGHT = {"multiply": 1, "add": 0, "subtract": 0, "real_div": 1, "truediv": 1}


def _simplify(graph, sub):
    keep = []
    made: dict = {}  # id(output) -> the node that makes it (a broadcast_to)
    jit = bool(getattr(graph, "jit_compile", False))
    for node in graph.nodes:
        _rewire(node, sub)
        out = node.outputs
        name = node.prim.name
        x = None
        if isinstance(out, Tensor):
            ins = node.inputs
            if name == "broadcast_to":
                made[id(out)] = node
            elif len(ins) == 2 and not jit and made and _broadcasting_binary(name):
                _unbroadcast(node, made)
                ins = node.inputs
            if name in _IDENTITY_RIGHT and len(ins) == 2:
                a, b = ins
                unit = _IDENTITY_RIGHT[name]
                if _is(b, unit) and _same_type(a, out):
                    x = a
                elif name in ("multiply", "add") and _is(a, unit) and _same_type(b, out):
                    x = b
            elif name == "cast" and len(ins) == 1 and ins[0]._dtype is out._dtype:
                x = ins[0]
            elif name == "transpose":
                src = _producer(graph, ins[0], keep)
                if src is not None and src.prim.name == "transpose":
                    p1, p2 = src.attrs["perm"], node.attrs["perm"]
                    if tuple(p1[i] for i in p2) == tuple(range(len(p2))):
                        x = src.inputs[0]
            elif name == "reshape":
                if tuple(ins[0]._shape) == tuple(out._shape) and None not in tuple(out._shape) and len(ins) == 1:
                    x = ins[0]
                else:
                    src = _producer(graph, ins[0], keep)
                    if src is not None and src.prim.name == "reshape" and len(src.inputs) == 1 and len(ins) == 1:
                        node.inputs = (src.inputs[0],)  # reshape(reshape(x)) = reshape(x)
        if x is not None and x._dev is out._dev:
            _put(sub, out, x)
            continue
        keep.append(node)
    graph.nodes = keep


def _broadcasting_binary(name) -> bool:
    from .fusion import _BI

    return name in _BI


def _known(t) -> bool:
    return isinstance(t, Tensor) and None not in tuple(t._shape)


def _unbroadcast(node, made):
    """A binary element-wise op (they broadcast their operands) reading a ``broadcast_to`` of ``x`` reads ``x``
    itself when that gives its output's shape: the same values without materializing the broadcast copy (the
    gradient of a mean over some axes is such a broadcast).  Not under ``jit_compile=True``: a fused kernel
    broadcasts only scalars and trailing dimensions."""
    out = node.outputs
    for k in (0, 1):
        b = made.get(id(node.inputs[k]))
        if b is None or len(b.inputs) != 1:
            continue
        x, other = b.inputs[0], node.inputs[1 - k]
        if not (_known(x) and _known(other) and _known(out)) or x._dtype is not node.inputs[k]._dtype or \
                x._dev is not node.inputs[k]._dev:
            continue
        try:
            shape = np.broadcast_shapes(tuple(x._shape), tuple(other._shape))
        except ValueError:
            continue
        if tuple(shape) == tuple(out._shape):
            node.inputs = (x, other) if k == 0 else (other, x)


def _producer(graph, t, nodes):
    for n in reversed(nodes):
        if n.outputs is t:
            return n
    return None


# ---- constant folding ------------------------------------------------------------------------------------

def _fold(graph, sub):
    from .runner import init_scope

    keep = []
    for node in graph.nodes:
        _rewire(node, sub)
        p = node.prim
        if (all(t._h is not None for t in node.inputs) and not p.stateful
                and p.name not in _NOT_FOLDED and not (node.attrs and "_graphs" in node.attrs)
                and all(not hasattr(v, "late_attrs") for v in (node.attrs or {}).values())):
            outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
            if all(o._size is not None and o._size <= _FOLD_MAX for o in outs):
                with init_scope():
                    try:
                        r = p.impl(node.dev, *node.inputs, **node.attrs) if node.attrs else \
                            p.impl(node.dev, *node.inputs)
                    except (OpError, KernelStatus, TypeError, ValueError, ArithmeticError, MemoryError):
                        r = None  # not folded: it fails when the graph runs, where the error names the line
                if r is not None:
                    for o, v in zip(outs, r if isinstance(node.outputs, tuple) else (r,)):
                        _put(sub, o, v)
                    continue
        keep.append(node)
    graph.nodes = keep


# ---- common-subexpression elimination ---------------------------------------------------------------------

def _freeze(v):
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return (type(v), v)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_freeze(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple(sorted((k, _freeze(x)) for k, x in v.items())))
    if hasattr(v, "is_floating") and hasattr(v, "name"):  # a dtype
        return ("dtype", v.name)
    raise TypeError("unhashable attribute")


def _input_key(t):
    v = _const_value(t)
    if v is not None:
        return ("const", t._dtype.name, tuple(t._shape), v.tobytes(), t._dev)
    return id(t)


def _cse(graph, sub):
    seen: dict = {}
    keep = []
    for node in graph.nodes:
        _rewire(node, sub)
        p = node.prim
        if not p.stateful and p.name not in _NOT_FOLDED and not (node.attrs and "_graphs" in node.attrs):
            try:
                key = (p.name, node.dev, tuple(_input_key(t) for t in node.inputs), _freeze(node.attrs or {}))
            except TypeError:
                key = None
            if key is not None:
                first = seen.get(key)
                if first is not None:
                    a = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
                    b = first.outputs if isinstance(first.outputs, tuple) else (first.outputs,)
                    for o, e in zip(a, b):
                        _put(sub, o, e)
                    continue
                seen[key] = node
        keep.append(node)
    graph.nodes = keep
