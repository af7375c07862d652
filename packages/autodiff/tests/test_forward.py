"""tf.autodiff.ForwardAccumulator: JVP rules for every differentiable primitive, checked against the tape's VJPs.

The registry walk runs every differentiable spec of tests/specs/ (float64) under an accumulator with a
random tangent ``u`` and checks ``<v, J u>`` against the tape's ``<J^T v, u>`` for a random ``v``.
"""
from __future__ import annotations

import pathlib
import sys
import zlib

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.autodiff import _nest
from tapeflow.autodiff.forward_rules import JVPS, VIA_VJP, missing
from tapeflow.core.dispatch import REGISTRY

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests"))
from opspec import load_specs  # noqa: E402

SPECS = [s for s in load_specs() if s.grad and REGISTRY.get(s.op) is not None and not REGISTRY[s.op].nondiff
         and any(d.startswith(("float", "bfloat")) for d in s.dtypes)]


def test_every_differentiable_primitive_has_a_jvp_rule():
    miss = missing()
    assert not miss, (f"{len(miss)} differentiable primitive op(s) have no forward-mode (JVP) rule: {miss}. Add one "
                      f"in packages/autodiff/src/tapeflow/autodiff/forward_rules.py with defjvp(op) (or linear(op), "
                      f"bilinear(op), diagonal(op), or via_vjp(op, why) where a forward formula is genuinely hard).")


def test_jvp_rules_name_registered_ops():
    from tapeflow.core.runner import INTERNAL

    unknown = sorted(set(JVPS) - set(REGISTRY) - set(INTERNAL))
    assert not unknown, f"JVP rules for ops that are not in core's registry: {unknown}"


TOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2}   # relative to sum |v| |J u|


def _dtype(spec):
    return "float64" if "float64" in spec.dtypes else [d for d in spec.dtypes if d.startswith(("float", "bfloat"))][0]


def _positions(spec, args):
    if spec.grad_args is not None:
        return list(spec.grad_args)
    return [i for i, a in enumerate(args)
            if isinstance(a, np.ndarray) and (a.dtype.kind == "f" or a.dtype.name == "bfloat16")]


def _floats(out):
    return [o for o in _nest.flatten(out) if isinstance(o, tf.Tensor) and o.dtype.is_floating]


def check_spec_jvp(spec) -> int:
    dtype = _dtype(spec)
    rng = np.random.default_rng(zlib.crc32(f"jvp-{spec}".encode()))
    cases = spec.sample(rng, dtype)
    cases = cases if isinstance(cases, list) else [cases]
    checked = 0
    for args, kwargs in cases:
        pos = _positions(spec, args)
        if not pos:
            continue
        full = list(args)
        inputs = [tf.constant(np.asarray(args[i])) for i in pos]
        us = [tf.constant(rng.standard_normal(np.shape(args[i])).astype(np.asarray(args[i]).dtype)) for i in pos]
        for i, t in zip(pos, inputs):
            full[i] = t
        with tf.autodiff.ForwardAccumulator(inputs, us) as acc:
            outs = _floats(spec.run(tf, full, kwargs))
        jus = acc.jvp(outs, unconnected_gradients="zero")
        # a non-finite output (the mean of nothing) has no derivative to compare: weight 0 there
        vs = [np.where(np.isfinite(np.asarray(o, np.float64)), rng.standard_normal(tuple(o.shape)), 0.0)
              for o in outs]
        jus = [np.where(v != 0, np.asarray(ju, np.float64), 0.0) for v, ju in zip(vs, jus)]
        forward = sum(float(np.sum(v * ju)) for v, ju in zip(vs, jus))
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            outs2 = _floats(spec.run(tf, full, kwargs))
        if outs2:
            grads = tape.gradient(outs2, inputs, output_gradients=[tf.cast(tf.constant(v), o.dtype)
                                                                   for v, o in zip(vs, outs2)],
                                  unconnected_gradients="zero")
            backward = sum(float(np.sum(np.asarray(g, np.float64) * np.asarray(u, np.float64)))
                           for g, u in zip(grads, us))
        else:
            backward = 0.0
        scale = sum(float(np.sum(np.abs(v) * np.abs(ju))) for v, ju in zip(vs, jus)) + 1.0
        tol = TOL.get(dtype, 1e-9)
        assert abs(forward - backward) <= tol * scale, (
            f"{spec}: <v, J u> = {forward!r} by the JVP rule but <J^T v, u> = {backward!r} by the tape "
            f"(shapes={[np.shape(args[i]) for i in pos]} kwargs={kwargs}); the rule is in "
            f"packages/autodiff/src/tapeflow/autodiff/forward_rules.py")
        checked += 1
    return checked


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_jvp_matches_the_tapes_vjp(spec):
    assert check_spec_jvp(spec), f"{spec}: no sampled case has a floating-point input"


# ---- the transpose trick (decompositions) -------------------------------------------------------------

DECOMPOSITIONS = {"svd": lambda m: tf.linalg.svd(m)[0], "eigh": lambda m: tf.linalg.eigh(m)[0],
                  "qr": lambda m: tf.linalg.qr(m)[1], "lu": lambda m: tf.linalg.lu(m)[0], "expm": tf.linalg.expm}


@pytest.mark.parametrize("op", sorted(DECOMPOSITIONS))
def test_via_vjp_rules_match_central_differences(op):
    assert op in VIA_VJP
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    a = rng.standard_normal((3, 3))
    if op == "eigh":
        a = a + a.T
    fn = DECOMPOSITIONS[op]
    u = rng.standard_normal((3, 3))
    if op == "eigh":
        u = np.tril(u) + np.tril(u, -1).T   # eigh reads the lower triangle: a symmetric direction
    x = tf.constant(a)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(u)) as acc:
        y = fn(x)
    eps = 1e-6
    want = (np.asarray(fn(tf.constant(a + eps * u))) - np.asarray(fn(tf.constant(a - eps * u)))) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-6, atol=1e-7)


def test_a_missing_rule_names_the_op_and_the_file():
    rule = JVPS.pop("sin")
    try:
        x = tf.constant(1.0)
        with pytest.raises(LookupError, match="'sin'.*forward_rules.py"):
            with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)):
                tf.sin(x)
    finally:
        JVPS["sin"] = rule


# ---- the accumulator ---------------------------------------------------------------------------------

def test_jvp_of_a_composite_matches_the_analytic_derivative():
    x = tf.constant([0.5, -1.0, 2.0], tf.float64)
    u = tf.constant([1.0, 2.0, -1.0], tf.float64)
    with tf.autodiff.ForwardAccumulator(x, u) as acc:
        y = tf.tanh(x) * tf.exp(x) + x ** 2
    xn, un = x.numpy(), u.numpy()
    want = ((1 - np.tanh(xn) ** 2) * np.exp(xn) + np.tanh(xn) * np.exp(xn) + 2 * xn) * un
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-12)


def test_hessian_vector_product_forward_over_backward():
    # TensorFlow's example: H v by an accumulator around the tape's gradient
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = tf.constant([1.0, -2.0], tf.float64)
    v = tf.constant([0.5, 1.5], tf.float64)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * tf.linalg.matvec(tf.constant(a), x)) + tf.reduce_sum(tf.sin(x))
        g = tape.gradient(y, x)
    hv = acc.jvp(g).numpy()
    want = (2 * a - np.diag(np.sin(x.numpy()))) @ v.numpy()
    np.testing.assert_allclose(hv, want, rtol=1e-12)


def test_tensorflows_documented_example_with_a_variable():
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 0.0])) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    assert backward.numpy().tolist() == [3.0, 12.0]
    assert acc.jvp(backward).numpy().tolist() == [6.0, 0.0]   # as TensorFlow 2.21 prints


def test_backward_over_forward():
    x = tf.constant([1.0, 2.0], tf.float64)
    u = tf.constant([1.0, 1.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, u) as acc:
            y = tf.reduce_sum(tf.exp(x) * x)
        jvp = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(jvp, x).numpy(), np.exp(x.numpy()) * (x.numpy() + 2), rtol=1e-12)


def test_backward_over_forward_with_the_tape_inside_the_accumulator():
    # the tape subscribes after the accumulator: it must still record each op before the ops of its JVP
    x = tf.constant([1.0, 2.0], tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0], tf.float64)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.exp(x) * x)
            jvp = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(jvp, x).numpy(), np.exp(x.numpy()) * (x.numpy() + 2), rtol=1e-12)


def test_nested_accumulators_give_second_derivatives():
    x = tf.constant(0.7, tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, tf.float64)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, tf.float64)) as inner:
            y = tf.sin(x) * x
        dy = inner.jvp(y)
    d2 = outer.jvp(dy)
    xn = 0.7
    np.testing.assert_allclose(dy.numpy(), np.cos(xn) * xn + np.sin(xn), rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), 2 * np.cos(xn) - xn * np.sin(xn), rtol=1e-12)
    assert outer.jvp(y) is not None   # the outer accumulator saw the inner one's ops too


def test_variables_as_primals():
    w = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(w, tf.constant([1.0, 0.0])) as acc:
        y = tf.reduce_sum(w * w)
    assert acc.jvp(y).numpy() == 2.0
    assert acc.jvp(w).numpy().tolist() == [1.0, 0.0]


def test_unconnected_and_integer_outputs():
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.ones([2])) as acc:
        y = tf.constant([3.0, 4.0]) * 2.0
        i = tf.argmax(x)
        s = tf.stop_gradient(x) * 3.0
    assert acc.jvp(y) is None and acc.jvp(i) is None and acc.jvp(s) is None
    assert acc.jvp(y, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy().tolist() == [0.0, 0.0]
    assert acc.jvp({"a": x, "b": [y]}, unconnected_gradients="zero")["b"][0].numpy().tolist() == [0.0, 0.0]


def test_ops_outside_the_block_do_not_propagate():
    x = tf.constant(2.0)
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
    y = x * x
    assert acc.jvp(y) is None
    assert acc.jvp(x).numpy() == 1.0


def test_inside_tf_function():
    @tf.function
    def f(x, u):
        with tf.autodiff.ForwardAccumulator(x, u) as acc:
            y = tf.reduce_sum(tf.square(x))
        return acc.jvp(y)

    assert f(tf.constant([1.0, 2.0]), tf.constant([1.0, 1.0])).numpy() == 6.0


def test_bad_arguments():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        tf.autodiff.ForwardAccumulator(x, tf.ones([3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="one tangent per primal"):
        tf.autodiff.ForwardAccumulator([x, x], [tf.ones([2])])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
        tf.autodiff.ForwardAccumulator(x, tf.ones([2], tf.float64))
    with pytest.raises(TypeError, match="tensors and variables"):
        tf.autodiff.ForwardAccumulator("x", 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="unconnected_gradients"):
        tf.autodiff.ForwardAccumulator(x, x).jvp(x, unconnected_gradients="sometimes")


def test_inside_tf_function_through_cond_and_while_loop():
    x, u = tf.constant([0.5, 1.0]), tf.constant([1.0, 2.0])

    @tf.function
    def f(x, u):
        with tf.autodiff.ForwardAccumulator(x, u) as acc:
            c = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * x, lambda: x * 3.0)
            _, y, z = tf.while_loop(lambda i, y, z: i < 3, lambda i, y, z: (i + 1, y * x, z + y),
                                    [tf.constant(0), x, x])
        return acc.jvp(c), acc.jvp(y), acc.jvp(z)

    xn, un = x.numpy(), u.numpy()
    c, y, z = f(x, u)
    np.testing.assert_allclose(c.numpy(), (np.cos(xn) * xn + np.sin(xn)) * un, rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), 4 * xn ** 3 * un, rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), (2 + 2 * xn + 3 * xn ** 2) * un, rtol=1e-6)
    np.testing.assert_allclose(f(-x, u)[0].numpy(), 3 * un, rtol=1e-6)   # the other branch


def test_accumulator_around_a_tf_function_call():
    @tf.function
    def f(x):
        return tf.exp(-x * x) + tf.reduce_sum(tf.nn.relu(x))

    x = tf.constant([1.0, -2.0, 3.0], tf.float64)
    u = tf.constant([1.0, 0.5, -1.0], tf.float64)
    with tf.autodiff.ForwardAccumulator(x, u) as acc:
        y = f(x)
    xn, un = x.numpy(), u.numpy()
    want = -2 * xn * np.exp(-xn * xn) * un + np.sum((xn > 0) * un)
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-12)
