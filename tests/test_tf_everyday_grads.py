"""Gradients through the everyday tf.* names (issue 14): map_fn/scan/foldl, py_function (eagerly and as a graph's
host node, backward and forward mode), numpy_function (none, as TensorFlow's), recompute_grad,
grad_pass_through, and tf.gradients/tf.hessians refused as TensorFlow 2 refuses them eagerly."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf


def _grad(fn, *xs):
    with tf.GradientTape() as tape:
        tape.watch(list(xs))
        y = fn(*xs)
    return y, tape.gradient(y, list(xs))


def test_map_fn_gradient_eager_and_compiled():
    x = tf.constant([1.0, 2.0, 3.0])
    f = lambda t: tf.reduce_sum(tf.map_fn(lambda v: v * v * v, t))  # noqa: E731
    _, (g,) = _grad(f, x)
    assert g.numpy().tolist() == [3.0, 12.0, 27.0]
    _, (gc,) = _grad(tf.function(f), x)
    assert gc.numpy().tolist() == [3.0, 12.0, 27.0]
    _, (gs,) = _grad(lambda t: tf.reduce_sum(tf.map_fn(lambda v: v * 2, t, back_prop=False)), x)
    assert gs is None  # back_prop=False stops the gradient


def test_scan_and_foldl_gradients():
    x = tf.constant([1.0, 2.0, 3.0])
    # cumulative products [x0, x0 x1, x0 x1 x2]; d(sum)/dx
    _, (g,) = _grad(lambda t: tf.reduce_sum(tf.scan(lambda a, v: a * v, t)), x)
    np.testing.assert_allclose(g.numpy(), [1 + 2 + 6, 1 + 3, 2], rtol=1e-6)
    _, (gc,) = _grad(tf.function(lambda t: tf.reduce_sum(tf.scan(lambda a, v: a * v, t))), x)
    np.testing.assert_allclose(gc.numpy(), [9, 4, 2], rtol=1e-6)
    _, (gf,) = _grad(lambda t: tf.foldl(lambda a, v: a * v, t, initializer=tf.constant(2.0)), x)
    np.testing.assert_allclose(gf.numpy(), [12, 6, 4], rtol=1e-6)


def _host(a, b):
    return a * a * b


def test_py_function_gradient_eager_and_graph():
    x, y = tf.constant([1.0, 2.0]), tf.constant(3.0)
    want = ([6.0, 12.0], 5.0)
    _, (gx, gy) = _grad(lambda a, b: tf.py_function(_host, [a, b], Tout=tf.float32), x, y)
    assert (gx.numpy().tolist(), float(gy)) == want
    calls = []

    def host(a, b):
        calls.append(1)
        return _host(a, b)

    g = tf.function(lambda a, b: tf.py_function(host, [a, b], Tout=tf.float32))
    z, (gx, gy) = _grad(g, x, y)
    assert z.numpy().tolist() == [3.0, 12.0]
    assert (gx.numpy().tolist(), float(gy)) == want  # not doubled: the node's own ops are not recorded twice
    assert len(calls) == 2  # the run, and the gradient's rerun under a tape


def test_py_function_jvp_in_graph():
    x, y = tf.constant([1.0, 2.0]), tf.constant(3.0)
    g = tf.function(lambda a, b: tf.py_function(_host, [a, b], Tout=tf.float32))
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
        z = g(x, y)
    assert acc.jvp(z).numpy().tolist() == [6.0, 0.0]
    with tf.autodiff.ForwardAccumulator(y, tf.constant(1.0)) as acc:
        z = g(x, y)
    assert acc.jvp(z).numpy().tolist() == [1.0, 4.0]


def test_numpy_function_has_no_gradient():
    x = tf.constant([1.0, 2.0])
    _, (g,) = _grad(lambda a: tf.numpy_function(lambda v: v * 2, [a], Tout=tf.float32), x)
    assert g is None
    _, (gc,) = _grad(tf.function(lambda a: tf.numpy_function(lambda v: v * 2, [a], Tout=tf.float32)), x)
    assert gc is None


def test_ensure_shape_gradient_passes_through():
    x = tf.constant([1.0, 2.0, 3.0])
    _, (g,) = _grad(lambda t: tf.reduce_sum(tf.ensure_shape(t, [None]) * t), x)
    assert g.numpy().tolist() == [2.0, 4.0, 6.0]
    with tf.autodiff.ForwardAccumulator(x, tf.ones([3])) as acc:
        y = tf.ensure_shape(x, [3]) * 2.0
    assert acc.jvp(y).numpy().tolist() == [2.0, 2.0, 2.0]


def test_recompute_grad_matches_and_recomputes():
    w = tf.Variable([[0.5, -1.0], [2.0, 0.25]])
    calls = []

    def block(x):
        calls.append(1)
        return tf.tanh(tf.matmul(x, w))

    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        plain = tf.reduce_sum(block(x))
    want = tape.gradient(plain, [x, w])
    calls.clear()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.recompute_grad(block)(x))
    got = tape.gradient(y, [x, w])
    assert len(calls) == 2  # the forward pass, then its recomputation for the gradient
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)


def test_grad_pass_through():
    x = tf.constant([0.4, 1.6])
    y, (g,) = _grad(lambda t: tf.reduce_sum(tf.grad_pass_through(tf.round)(t) * 3.0), x)
    assert float(y) == 6.0 and g.numpy().tolist() == [3.0, 3.0]
    v = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        z = tf.constant(2.0)
        tape.watch(z)
        out = tf.grad_pass_through(v.assign)(z)
    assert float(v) == 2.0 and float(tape.gradient(out, z)) == 1.0


def test_gradients_and_hessians_refused_as_tensorflow_2():
    msg = "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead."
    with pytest.raises(RuntimeError, match=msg):
        tf.gradients(tf.constant(1.0), tf.constant(1.0))
    with pytest.raises(RuntimeError, match=msg):
        tf.hessians(tf.constant(1.0), tf.constant(1.0))
    with pytest.raises(RuntimeError, match="inside tf.function in tapeflow"):
        tf.function(lambda x: tf.gradients(x * x, x))(tf.constant(1.0))
