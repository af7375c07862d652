"""Map vectorization: run a per-element ``map`` function once per batch when that is provably the same.

``ds.map(f).batch(n)`` calls ``f`` on every element and stacks the results.  When ``f`` is built
from element-wise ops only (arithmetic, comparisons, casts, unary math), calling it once on the
stacked batch gives the same tensor, with a few kernel calls per batch instead of per element.
TensorFlow's own ``map`` traces ``f`` once into a graph, so a valid TensorFlow map function
cannot branch in Python on element values; tapeflow runs ``f`` eagerly and checks instead:

1. on the first batch, ``f`` runs element by element as written (those results are what the
   first batch yields), and the ops of its first two calls are recorded through core's
   recorder hook (only on this thread; tapes keep working meanwhile);
2. the two recordings must list the same element-wise ops, where every tensor derived from the
   element has the rank of the op's output (so a leading batch axis broadcasts the same way),
   every other operand (constants, captured tensors) is equal in both calls (so ``f`` draws
   no fresh random numbers and reads no per-call state), and every output derives from the
   element;
3. ``f`` applied to the whole first batch must give, bit for bit, the stacked per-element
   results.

Only then do later batches call ``f`` once per batch.  Any failure (an op that is not
element-wise, an exception, a single differing bit) keeps the per-element path for good.
``Options().experimental_optimization.map_vectorization = False`` turns this off.
"""
from __future__ import annotations

import threading

from tapeflow.core import ops as _ops
from tapeflow.core.dispatch import hooks
from tapeflow.core.tensor import Tensor

from . import _batching as B
from . import _structure as S

_BASE = {
    "negative", "abs", "sign", "square", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu", "softplus",
    "elu", "gelu", "selu", "floor", "ceil", "round", "reciprocal", "erf", "erfc", "logical_not", "bitwise_not",
    "is_nan", "is_inf", "is_finite", "relu6", "log_sigmoid", "silu", "lgamma", "digamma", "softsign",
    "leaky_relu", "add", "subtract", "multiply", "real_div", "floordiv", "floormod", "pow", "maximum", "minimum",
    "atan2", "squared_difference", "div_no_nan", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift", "cast", "identity", "stop_gradient",
}


def _elementwise_names() -> frozenset:
    names = set(_BASE)
    mo = getattr(_ops, "math_ops", None)
    for table in ("_UNARY", "_BINARY"):
        for row in getattr(mo, table, ()) or ():
            names.add(row[0])
    return frozenset(names)


ELEMENTWISE = _elementwise_names()


class _Recorder:
    """Logs the ops of one thread (a subscriber of core's hooks, beside any tape)."""

    __slots__ = ("log", "tid")

    def __init__(self) -> None:
        self.tid = threading.get_ident()
        self.log = []

    def __call__(self, name, inputs, out, attrs):
        if threading.get_ident() == self.tid:
            self.log.append((name, tuple(inputs), out, attrs))


def traced(call, elem):
    """``call(elem)`` and the ops it ran on this thread."""
    rec = _Recorder()
    sub = hooks.subscribe(rec)
    try:
        out = call(elem)
    finally:
        sub.remove()
    return out, rec.log


def _signature(elem, out, log):
    """What must agree between two calls, or None when the calls cannot be vectorized."""
    leaves = S.flatten(elem)
    if not leaves or not all(type(t) is Tensor for t in leaves):
        return None
    derived = {id(t) for t in leaves}
    sig = []
    for name, inputs, o, attrs in log:
        if name not in ELEMENTWISE or type(o) is not Tensor:
            return None
        mask = tuple(id(t) in derived for t in inputs)
        if any(mask):
            rank = len(o._shape)
            if any(m and len(t._shape) != rank for m, t in zip(mask, inputs)):
                return None
            derived.add(id(o))
        ext = tuple(t for m, t in zip(mask, inputs) if not m)
        sig.append((name, attrs, mask, ext))
    for t in S.flatten(out):
        if type(t) is not Tensor or id(t) not in derived:
            return None
    return sig


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    return a._dtype is b._dtype and a._shape == b._shape and a._host().tobytes() == b._host().tobytes()


def _same_signature(s0, s1) -> bool:
    if s0 is None or s1 is None or len(s0) != len(s1):
        return False
    for (n0, a0, m0, e0), (n1, a1, m1, e1) in zip(s0, s1):
        if n0 != n1 or m0 != m1 or len(e0) != len(e1):
            return False
        try:
            if a0 != a1:
                return False
        except Exception:  # noqa: BLE001 - attrs that do not compare are treated as different
            return False
        if not all(_same_value(x, y) for x, y in zip(e0, e1)):
            return False
    return True


def probe(call, elems: list, batch):
    """Run ``call`` on each element of the first batch; return (results, vectorizable)."""
    out0, log0 = traced(call, elems[0])
    out0 = S.normalize(out0)
    out1, log1 = traced(call, elems[1])
    out1 = S.normalize(out1)
    outs = [out0, out1] + [S.normalize(call(e)) for e in elems[2:]]
    ok = (S.same_structure(out0, out1) and _same_signature(_signature(elems[0], out0, log0),
                                                           _signature(elems[1], out1, log1)))
    del log0, log1
    if not ok:
        return outs, False, None
    stacked = stack_outputs(outs)
    try:
        vec = S.normalize(call(batch))
    except Exception:  # noqa: BLE001 - not vectorizable after all; the per-element results stand
        return outs, False, stacked
    if not S.same_structure(vec, stacked):
        return outs, False, stacked
    for v, s in zip(S.flatten(vec), S.flatten(stacked)):
        if not _same_value(v, s):
            return outs, False, stacked
    return outs, True, stacked


def stack_outputs(outs):
    """Stack a list of elements (same structure) into one batched element, one kernel per component."""
    first = outs[0]
    t = type(first)
    if t is Tensor or t is bytes:
        for o in outs:
            if type(o) is not t:
                S.assert_same_structure(first, o, "two elements of a batch", "BatchDataset")
        return B.stack(outs, "BatchDataset", "component 0")
    if t is tuple and not any(isinstance(v, (tuple, dict)) for v in first):
        n = len(first)
        for o in outs:
            if type(o) is not tuple or len(o) != n:
                S.assert_same_structure(first, o, "two elements of a batch", "BatchDataset")
        cols = zip(*outs)
        return tuple(B.stack(list(c), "BatchDataset", f"component {j}") for j, c in enumerate(cols))
    for o in outs:
        if not S.same_structure(first, o):
            S.assert_same_structure(first, o, "two elements of a batch", "BatchDataset")
    flats = [S.flatten(o) for o in outs]
    for f in flats:
        if len(f) != len(flats[0]):  # leaves that are nests in one element and values in another
            S.assert_same_structure(first, outs[flats.index(f)], "two elements of a batch", "BatchDataset")
    return S.pack(first, [B.stack(list(col), "BatchDataset", f"component {j}")
                          for j, col in enumerate(zip(*flats))])
