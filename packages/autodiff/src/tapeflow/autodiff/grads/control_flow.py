"""Gradients of graph control flow taken by a tape inside the graph function being traced.

When a graph runs under a tape, its branch and loop nodes record the ops of the branch taken and of
each iteration (the tape replays them).  A tape *inside* the traced function sees the branch node
itself: its gradient is another branch node, on the same selector, whose branches are the gradients
of the original branches with respect to the tensors they capture.
"""
from __future__ import annotations

from tapeflow.core import nest
from tapeflow.core.control_flow import _build_branches
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


@defgrad("while_loop")
def _while(g, ans, *inputs, name, **_):
    raise LookupError(f"the gradient of tf.while_loop '{name}' taken by a GradientTape inside the same "
                      f"tf.function is not available yet: compute the gradient outside the function (a tape "
                      f"around the call replays the iterations), or unroll the loop with a Python range")
