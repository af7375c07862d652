"""Gradients of graph control flow taken by a tape inside the graph function being traced.

When a graph runs under a tape, its branch and loop nodes record the ops of the branch taken and of
each iteration (the tape replays them).  A tape *inside* the traced function sees the node itself: a
branch's gradient is another branch node, on the same selector, whose branches are the gradients of
the original branches with respect to the tensors they capture; a loop's gradient is a node that runs
the loop again under a tape and plays its iterations back.  (Variables read inside a loop body get no
gradient from a tape inside the function: read them before the loop, or take the gradient outside.)
"""
from __future__ import annotations

from tapeflow.core import nest
from tapeflow.core.control_flow import _WHILE, _build_branches
from tapeflow.core.runner import primitive, run_tensors
from tapeflow.core.tensor import Tensor

from ..registry import defgrad


def _branch_grad_fn(fn, caps, gs):
    def grad():
        from ..tape import GradientTape

        with GradientTape(persistent=False, watch_accessed_variables=False) as tape:
            for c in caps:
                tape.watch(c)
            out = fn()
        flat = [x for x in nest.flatten(out) if isinstance(x, Tensor)]
        return tape.gradient(flat, list(caps), output_gradients=list(gs), unconnected_gradients="zero")
    return grad


@defgrad("branch")
def _branch(g, ans, selector, *caps, plans, cap_index, specs, fns, names, _graphs):
    gs = g if isinstance(g, tuple) else (g,)
    floats = [c for c in caps if c._dtype.is_floating]
    if not floats:
        return (None,) * (1 + len(caps))
    grads = _build_branches(selector, tuple(_branch_grad_fn(f, floats, gs) for f in fns),
                            tuple(f"grad_{n}" for n in names), "the gradient of tf.cond")
    it = iter(grads)
    return (None,) + tuple(next(it) if c._dtype.is_floating else None for c in caps)


def _while_grad_infer(*tensors, n_in, attrs):
    return [(t._shape, t._dtype) for t in tensors[:n_in] if t._dtype.is_floating]


@primitive("while_loop_grad", "WhileGrad", infer=_while_grad_infer,
           internal="the gradient of a tf.while_loop taken inside the traced function (replays the loop)")
def _WHILE_GRAD(dev, *tensors, n_in, attrs):
    from ..tape import GradientTape

    ins, gs = tensors[:n_in], tensors[n_in:]
    floats = [t for t in ins if t._dtype.is_floating]
    with GradientTape(watch_accessed_variables=False) as tape:
        for t in floats:
            tape.watch(t)
        outs = _WHILE.impl(dev, *ins, **attrs)  # the iterations run again, recorded op by op
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, g) for o, g in zip(outs, gs) if o._dtype.is_floating]
    grads = tape.gradient([o for o, _ in pairs], floats, output_gradients=[g for _, g in pairs],
                          unconnected_gradients="zero")
    return tuple(grads)  # one output per float input, as _while_grad_infer says (a tuple even for one)


@defgrad("while_loop")
def _while(g, ans, *inputs, **attrs):
    gs = g if isinstance(g, tuple) else (g,)
    n_vars = attrs["n_vars"]
    # upstream gradients of the loop variables (zeros for integer ones: the replay ignores them)
    res = run_tensors(_WHILE_GRAD, tuple(inputs) + tuple(gs[:n_vars]), {"n_in": len(inputs), "attrs": attrs})
    res = iter((res,) if isinstance(res, Tensor) else res)
    return tuple(next(res) if t._dtype.is_floating else None for t in inputs)
