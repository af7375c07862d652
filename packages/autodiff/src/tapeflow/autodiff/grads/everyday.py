"""Gradients and JVPs of core's everyday primitives: ``ensure_shape`` (the identity) and ``tf.py_function``'s
host node in a graph.

A graph's ``py_function`` node holds the Python function: its gradient is a host node that calls the function
again on the node's inputs under a ``GradientTape`` and returns the vector-Jacobian product with the upstream
gradients (TensorFlow's ``EagerPyFunc`` gradient does the same); its JVP runs the function under a
``ForwardAccumulator``.  Inputs that are not floating get no gradient.  ``numpy_function`` has none, as
TensorFlow's (its host node is declared with no rule: a tape reaches it only to stop).
"""
from __future__ import annotations

from tapeflow.core import dtypes as _dt
from tapeflow.core.ops import zeros_like
from tapeflow.core.runner import primitive, run_tensors

from ..forward_rules import defjvp
from ..registry import defgrad

defgrad("ensure_shape", lambda g, ans, x, *, shape: (g,))
defjvp("ensure_shape", lambda ts, ans, x, *, shape: ts[0])
# tf.numpy_function has no gradient (TensorFlow's PyFunc): None for every input, no tangent for the outputs
defgrad("numpy_function", lambda g, ans, *xs, **attrs: (None,) * len(xs))
defjvp("numpy_function", lambda ts, ans, *xs, **attrs: tuple(None for _ in ans) if isinstance(ans, tuple) else None)


def _diff(t) -> bool:
    return t._dtype.is_floating or t._dtype in (_dt.complex64, _dt.complex128)


def _vjp_infer(*ts, func, n_in, **_):
    return [(t._shape, t._dtype) for t in ts[:n_in] if _diff(t)]


@primitive("py_function_vjp", "EagerPyFuncGrad", infer=_vjp_infer, stateful=True,
           internal="the gradient of a graph's tf.py_function: calls the function again under a tape")
def _PY_VJP(dev, *ts, func, n_in, specs, single, numpy):
    from ..tape import GradientTape

    xs, gs = list(ts[:n_in]), list(ts[n_in:])
    src = [x for x in xs if _diff(x)]
    with GradientTape() as tape:
        tape.watch(src)
        out = func(*xs)
    out = [out] if single or not isinstance(out, (list, tuple)) else list(out)
    pairs = [(y, g) for y, g in zip(out, gs) if hasattr(y, "_dtype") and _diff(y)]
    if not pairs or not src:
        return tuple(zeros_like(x) for x in src)
    res = tape.gradient([y for y, _ in pairs], src, output_gradients=[g for _, g in pairs])
    return tuple(zeros_like(x) if r is None else r for r, x in zip(res, src))


@defgrad("py_function")
def _py_function_grad(g, ans, *xs, func, specs, single, numpy):
    gs = list(g) if isinstance(g, (tuple, list)) else [g]
    got = run_tensors(_PY_VJP, tuple(xs) + tuple(gs),
                      {"func": func, "n_in": len(xs), "specs": specs, "single": single, "numpy": numpy})
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    it = iter(got)
    return tuple(next(it) if _diff(x) else None for x in xs)


@primitive("py_function_jvp", "EagerPyFuncJvp", infer=lambda *ts, func, n_in, specs, single, numpy, outs:
           [(o._shape, o._dtype) for o in ts[2 * n_in:]], stateful=True,
           internal="the JVP of a graph's tf.py_function: calls the function again under a ForwardAccumulator")
def _PY_JVP(dev, *ts, func, n_in, specs, single, numpy, outs):
    from ..forward import ForwardAccumulator

    xs, tans, ys = list(ts[:n_in]), list(ts[n_in:2 * n_in]), list(ts[2 * n_in:])
    keep = [k for k, x in enumerate(xs) if _diff(x)]
    with ForwardAccumulator([xs[k] for k in keep], [tans[k] for k in keep]) as acc:
        out = func(*xs)
    out = [out] if single or not isinstance(out, (list, tuple)) else list(out)
    res = []
    for y, ref in zip(out, ys):
        t = acc.jvp(y) if hasattr(y, "_dtype") and _diff(y) else None
        res.append(zeros_like(ref) if t is None else t)
    return tuple(res)


@defjvp("py_function")
def _py_function_jvp(ts, ans, *xs, func, specs, single, numpy):
    ys = list(ans) if isinstance(ans, (tuple, list)) else [ans]
    tans = [t if t is not None else zeros_like(x) for t, x in zip(ts, xs)]
    got = run_tensors(_PY_JVP, tuple(xs) + tuple(tans) + tuple(ys),
                      {"func": func, "n_in": len(xs), "specs": specs, "single": single, "numpy": numpy,
                       "outs": len(ys)})
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    return tuple(got)  # the node always has a tuple of outputs (one tangent each)
