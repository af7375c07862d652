"""Collectives inside a ``tf.function``: the MPI all-reduce as a stateful graph node.

While a function is traced, a collective has no values to send yet; it becomes a node of primitive
``collective_all_reduce`` that sums its inputs over the ranks (checked across ranks first, then the bucketed
``MPIComm.all_reduce``) each time the graph runs.  It is stateful, so the graph never drops it, merges it or
computes it ahead of time, and runs it in program order (every rank runs the same collectives in the same
order).  Its gradient is the all-reduce sum of the gradient, as TensorFlow's ``CollectiveReduceV2``; its
tangent the all-reduce sum of the tangent.
"""
from __future__ import annotations

import tapeflow.core as _K
from tapeflow.core.dispatch import hooks
from tapeflow.core.runner import current_graph, primitive, run_tensors
from tapeflow.core.saved_model import onnx_ops as _onnx_ops

from . import _collective as C

OP = "CollectiveReduce"

# an ONNX model has no collectives (the exporter names the node as not exportable, with this reason)
_onnx_ops.NOT_EXPORTABLE.setdefault(
    "collective_all_reduce", "a tf.distribute all-reduce over MPI ranks: an ONNX graph runs in one process")


def _infer(*tensors, group, names, what, bytes_per_pack, prepare):
    return [(t._shape, t._dtype) for t in tensors]


@primitive("collective_all_reduce", "CollectiveReduceV2", infer=_infer, stateful=True,
           internal="tf.distribute's MPI all-reduce in a graph: a host node that sums its inputs over the ranks "
                    "each time the graph runs (tapeflow-distribute's, no core op)")
def _ALL_REDUCE(dev, *tensors, group, names, what, bytes_per_pack, prepare):
    ts = list(tensors)
    with hooks.paused():   # the node is what tapes record (its rule is an all-reduce too), not its casts
        if prepare is not None:
            prepare(ts)   # the cross-rank check naming the variables, and their first broadcast
        elif group.size > 1:
            group.check(C.signature(names, ts), what, OP)
        out = group.all_reduce(ts, bytes_per_pack)
        # (one rank: new tensors over the same values, not the inputs themselves, which a tape would count twice)
        return tuple(_K.identity(r) if r is t else r for r, t in zip(out, ts))


def tracing() -> bool:
    """Whether ops on this thread are being traced into a tf.function's graph now."""
    return current_graph() is not None


def all_reduce(group, tensors, names, what, bytes_per_pack, prepare=None) -> list:
    """The node summing ``tensors`` over the ranks of ``group`` (an ``MPIComm``) when the traced graph runs.

    ``names`` name the tensors in the cross-rank check's error; ``prepare(tensors)``, if given, replaces that
    check (it runs on the values, before the sum)."""
    if not tensors:
        return []
    out = run_tensors(_ALL_REDUCE, tuple(tensors), {"group": group, "names": tuple(str(n) for n in names),
                                                   "what": what, "bytes_per_pack": int(bytes_per_pack),
                                                   "prepare": prepare})
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _sum_again(values, attrs, what):
    """The all-reduce sum of ``values`` (gradients or tangents of the node's outputs), a node of its own."""
    group, n = attrs["group"], len(values)
    names = [f"{what}/{x}" for x in attrs["names"]][:n]
    if current_graph() is None:   # a tape that differentiates eagerly: the values are there
        with hooks.paused():
            group.check(C.signature(names, values), what, OP)
            return group.all_reduce(list(values), attrs["bytes_per_pack"])
    return all_reduce(group, list(values), names, what, attrs["bytes_per_pack"])


try:   # gradients and tangents where tapeflow-autodiff is installed (a declared dependency)
    from tapeflow.autodiff.forward_rules import defjvp
    from tapeflow.autodiff.registry import defgrad
except ImportError:  # pragma: no cover
    pass
else:
    @defgrad("collective_all_reduce")
    def _all_reduce_grad(g, ans, *tensors, **attrs):
        gs = list(g) if isinstance(g, (tuple, list)) else [g]
        gs = [_K.zeros_like(x) if d is None else d for d, x in zip(gs, tensors)]
        return tuple(_sum_again(gs, attrs, "gradient of all_reduce"))

    @defjvp("collective_all_reduce")
    def _all_reduce_jvp(ts, ans, *tensors, **attrs):
        tans = [_K.zeros_like(x) if t is None else t for t, x in zip(ts, tensors)]
        return tuple(_sum_again(tans, attrs, "tangent of all_reduce"))
