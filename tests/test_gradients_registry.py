"""Every differentiable op has a gradient rule, and every rule matches central differences.

Walks core's op registry and the per-op specs (tests/specs/*.py):

* a primitive op that is not declared ``nondiff`` must have a rule in
  ``tapeflow.autodiff.registry.GRADIENTS`` (the failure lists every missing op);
* every differentiable spec's gradient is checked against central differences in
  float64 on its sampled inputs (shapes, broadcasts, size 0), projecting the outputs
  on a random direction so one backward pass covers all of them;
* second order (the gradient of the gradient) for the element-wise ops, matmul and
  every spec with ``second_order=True``.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.autodiff
from opspec import Spec, load_specs
from tapeflow.autodiff import _nest, check_gradients, record, register_gradient
from tapeflow.autodiff.registry import GRADIENTS, missing
from tapeflow.core.dispatch import REGISTRY
from tapeflow.core.ops import math_ops
from tapeflow.core.runner import INTERNAL

SPECS = load_specs()
ELEMENTWISE = {row[0] for row in math_ops._UNARY} | {row[0] for row in math_ops._BINARY} | {"leaky_relu"}
SECOND_ORDER_OPS = ELEMENTWISE | {"matmul"}
MAX_ELEMENTS = 24   # elements perturbed one by one per input; larger inputs use random directions


def _differentiable(op: str) -> bool:
    d = REGISTRY.get(op)
    return d is not None and not d.nondiff


def _has_float_dtype(spec: Spec) -> bool:
    return any(d.startswith(("float", "bfloat")) for d in spec.dtypes)


# specs sampling only integer dtypes (e.g. wrap-around behaviour) have nothing to differentiate
GRAD_SPECS = [s for s in SPECS if s.grad and _differentiable(s.op) and _has_float_dtype(s)]
SECOND_SPECS = [s for s in GRAD_SPECS if s.second_order or s.op in SECOND_ORDER_OPS]


# ---- coverage -------------------------------------------------------------------------------------

def test_every_differentiable_primitive_has_a_gradient_rule():
    miss = missing()
    assert not miss, (f"{len(miss)} differentiable primitive op(s) have no gradient rule: {miss}. Add a rule in "
                      f"packages/autodiff/src/tapeflow/autodiff/grads/<family>.py with defgrad(op), or declare "
                      f"the op nondiff=\"reason\" in core.")


def test_rules_name_registered_ops():
    """A rule under a name core never registers (a typo, or an op core records but forgot to register)."""
    ours = {op for op, fn in GRADIENTS.items()
            if getattr(fn, "__module__", "").startswith("tapeflow.autodiff.grads")}
    unknown = sorted(ours - set(REGISTRY) - set(INTERNAL))
    assert not unknown, f"gradient rules for ops that are not in core's registry: {unknown}"


def test_nondiff_ops_have_no_rule():
    both = sorted(op for op, d in REGISTRY.items() if d.nondiff and op in GRADIENTS)
    assert not both, f"ops declared nondiff in core but given a gradient rule (which one is right?): {both}"


def test_every_differentiable_op_has_a_gradient_spec():
    covered = {s.op for s in GRAD_SPECS}
    miss = sorted(op for op, d in REGISTRY.items() if d.kind == "primitive" and not d.nondiff and op not in covered)
    assert not miss, (f"differentiable ops whose gradient no spec checks (add a Spec with grad=True in "
                      f"tests/specs/): {miss}")


# ---- numeric checks -----------------------------------------------------------------------------------

def _dtype_for(spec: Spec) -> str:
    if "float64" in spec.dtypes:
        return "float64"
    floats = [d for d in spec.dtypes if d.startswith(("float", "bfloat"))]
    return floats[0] if floats else spec.dtypes[0]


def _cases(spec: Spec, dtype: str, rng):
    cases = spec.sample(rng, dtype)
    return cases if isinstance(cases, list) else [cases]


def _grad_positions(spec: Spec, args) -> list:
    if spec.grad_args is not None:
        return list(spec.grad_args)
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and (a.dtype.kind == "f"
                                                                              or a.dtype.name == "bfloat16")]


HALF_TOL = {"float16": 3e-2, "bfloat16": 8e-2}


def _projected_gradient(spec, args, kwargs, pos, dtype, weights_rng):
    """The tape's gradient of sum(outputs * w) with the inputs at ``pos`` cast to ``dtype`` (host arrays)."""
    inputs = [tf.constant(np.asarray(args[i]).astype(np.float64)) for i in pos]
    if dtype != "float64":
        inputs = [tf.cast(t, dtype) for t in inputs]
    full = list(args)
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        for i, t in zip(pos, inputs):
            full[i] = t
        outs = [o for o in _nest.flatten(spec.run(tf, full, kwargs))
                if isinstance(o, tf.Tensor) and o.dtype.is_floating and o.size]
    if not outs:
        return None
    ws = [weights_rng.standard_normal(tuple(o.shape)) for o in outs]
    seeds = [tf.cast(tf.constant(w), o.dtype) for w, o in zip(ws, outs)]
    grads = tape.gradient(outs, inputs, output_gradients=seeds)
    return [None if g is None else np.asarray(tf.cast(g, tf.float64)) for g in grads]


def check_half_spec(spec: Spec, args, kwargs, pos, dtype) -> None:
    """float16/bfloat16: finite differences mean nothing at 3 significant digits, so the half gradient is
    compared with the float64 gradient at the same (exactly representable) values, which the float32/64
    specs of the op check against central differences."""
    seed = zlib.crc32(f"half-{spec}".encode())
    got = _projected_gradient(spec, args, kwargs, pos, dtype, np.random.default_rng(seed))
    want = _projected_gradient(spec, args, kwargs, pos, "float64", np.random.default_rng(seed))
    tol = HALF_TOL[dtype]
    for i, g, w in zip(pos, got or [], want or []):
        assert (g is None) == (w is None), f"{spec}: input {i} gradient is {g} in {dtype} but {w} in float64"
        if g is None:
            continue
        assert g.shape == w.shape, f"{spec}: input {i} gradient shape {g.shape} != {w.shape}"
        scale = float(np.mean(np.abs(w))) if w.size else 0.0
        err = np.abs(g - w)
        bad = err > tol * (np.abs(w) + scale)
        assert not bad.any(), (f"{spec} {dtype} input {i}: {int(bad.sum())} of {w.size} gradient entries differ "
                               f"from float64 by more than {tol:g} (worst {float(err.max()):.3g}, scale {scale:.3g})")


def check_reference_gradient(spec: Spec, args, kwargs, pos, order, rng) -> None:
    """The tape's gradient of sum(output * w) against the spec's own reference (``grad_ref``)."""
    assert order == 1 and len(pos) == 1, f"{spec}: grad_ref checks first-order gradients of one input"
    x = tf.constant(args[pos[0]])
    full = list(args)
    with tf.GradientTape() as tape:
        tape.watch(x)
        full[pos[0]] = x
        out = spec.run(tf, full, kwargs)
    w = rng.standard_normal(tuple(out.shape))
    got = tape.gradient(out, x, output_gradients=tf.cast(tf.constant(w), out.dtype))
    want = spec.grad_ref(args, kwargs, out.numpy(), w)
    loose = 1 if x.dtype == tf.float64 else 200
    np.testing.assert_allclose(np.asarray(got), want, rtol=spec.grad_rtol * loose, atol=spec.grad_atol * loose,
                               err_msg=f"{spec}: gradient differs from the spec's reference (grad_ref)")


def check_spec(spec: Spec, order: int) -> int:
    """Check every sampled case of ``spec``; returns how many cases had something to differentiate."""
    dtype = _dtype_for(spec)
    rng = np.random.default_rng(zlib.crc32(f"grad{order}-{spec}".encode()))
    checked = 0
    for args, kwargs in _cases(spec, dtype, rng):
        pos = _grad_positions(spec, args)
        if not pos:
            continue
        if dtype in HALF_TOL:
            check_half_spec(spec, args, kwargs, pos, dtype)
            checked += 1
            continue
        if spec.grad_ref is not None:
            check_reference_gradient(spec, args, kwargs, pos, order, rng)
            checked += 1
            continue

        def f(*ts, _args=args, _kwargs=kwargs, _pos=pos):
            full = list(_args)
            for i, t in zip(_pos, ts):
                full[i] = t
            return spec.run(tf, full, _kwargs)

        f.__name__ = str(spec)
        inputs = [tf.constant(args[i]) for i in pos]
        f64 = all(t.dtype == tf.float64 for t in inputs)
        loose = 1 if f64 else 200
        report = check_gradients(f, inputs, order=order, rtol=spec.grad_rtol * loose,
                                 atol=spec.grad_atol * loose, max_elements=MAX_ELEMENTS,
                                 seed=zlib.crc32(f"{spec}-{checked}".encode()))
        where = f"shapes={[np.shape(args[i]) for i in pos]} kwargs={kwargs}"
        assert report.ok, f"{spec} {where}\n{report}"
        checked += 1
    return checked


@pytest.mark.parametrize("spec", GRAD_SPECS, ids=str)
def test_gradient_matches_central_differences(spec):
    assert check_spec(spec, order=1), f"{spec}: no sampled case has a floating-point input to differentiate"


@pytest.mark.parametrize("spec", SECOND_SPECS, ids=str)
def test_second_order_gradient_matches_central_differences(spec):
    assert check_spec(spec, order=2), f"{spec}: no sampled case has a floating-point input to differentiate"


# ---- the harness catches a wrong rule ----------------------------------------------------------------

def _bad_cube(x):
    y = tf.constant(np.asarray(x) ** 3)
    record("registry_test_bad_cube", [x], y)
    return y


@register_gradient("registry_test_bad_cube")
def _bad_cube_grad(g, ans, x):
    return (g * 3.0 * x * x * 1.001,)   # 0.1% off: far beyond float64 tolerances


def test_the_harness_flags_a_wrong_gradient():
    spec = Spec("registry_test_bad_cube", lambda x: x ** 3,
                sample=lambda rng, dt: ([rng.uniform(0.5, 2.0, (2, 3)).astype(dt)], {}),
                fn=lambda tf_, x: _bad_cube(tf_.constant(x)))
    with pytest.raises(AssertionError, match="registry_test_bad_cube.*FAILED"):
        check_spec(spec, order=1)
