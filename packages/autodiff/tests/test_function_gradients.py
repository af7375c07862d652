"""Gradients through and inside tf.function: any order, custom gradients, control flow, train steps."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf


def test_gradients_flow_through_a_call_to_any_order():
    w = tf.Variable([[1.0, 2.0]])

    @tf.function
    def f(x):
        return tf.reduce_sum(tf.tanh(tf.matmul(x, w, transpose_b=True)))

    def eager(x):
        return tf.reduce_sum(tf.tanh(tf.matmul(x, w, transpose_b=True)))

    x = tf.constant([[0.5, 0.3]])
    for fn in (f, eager):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape(persistent=True) as t1:
                t1.watch(x)
                y = fn(x)
            gx, gw = t1.gradient(y, [x, w])
        hx = t2.gradient(gx, x)
        if fn is f:
            got = (gx.numpy(), gw.numpy(), hx.numpy())
        else:
            want = (gx.numpy(), gw.numpy(), hx.numpy())
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_a_compiled_train_step_equals_the_eager_one():
    def make():
        return tf.Variable([[0.1, -0.2], [0.3, 0.4]]), tf.Variable([0.0, 0.1])

    def step(w, b, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(x, w) + b - y) ** 2)
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    x = tf.constant([[1.0, 2.0], [3.0, -1.0]])
    y = tf.constant([[1.0, 0.0], [0.0, 1.0]])
    we, be = make()
    wc, bc = make()
    compiled = tf.function(step)
    for _ in range(5):
        le = step(we, be, x, y)
        lc = compiled(wc, bc, x, y)
        np.testing.assert_allclose(lc.numpy(), le.numpy(), rtol=1e-6)
    np.testing.assert_allclose(wc.numpy(), we.numpy(), rtol=1e-6)
    assert compiled.experimental_get_tracing_count() == 1


def test_custom_gradient_inside_a_function():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    f = tf.function(lambda x: log1pexp(x))
    x = tf.constant(100.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    assert float(t.gradient(y, x)) == 1.0  # the naive gradient would be nan

    @tf.function
    def inside(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = log1pexp(x)
        return t.gradient(y, x)

    assert float(inside(x)) == 1.0


def test_control_flow_in_graphs_and_its_gradients():
    @tf.function
    def f(x):
        return tf.cond(x > 0.0, lambda: x * x, lambda: -3.0 * x)

    for v, want, dwant in ((2.0, 4.0, 4.0), (-1.0, 3.0, -3.0)):
        x = tf.constant(v)
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        assert (float(y), float(t.gradient(y, x))) == (want, dwant)
    assert f.experimental_get_tracing_count() == 1

    @tf.function
    def power(x, n):
        return tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * x), (0, tf.ones_like(x)),
                             maximum_iterations=10)[1]

    x = tf.constant(1.5)
    with tf.GradientTape() as t:
        t.watch(x)
        y = power(x, tf.constant(3))
    np.testing.assert_allclose([float(y), float(t.gradient(y, x))], [1.5 ** 3, 3 * 1.5 ** 2], rtol=1e-6)
    assert float(power(x, tf.constant(50))) == pytest.approx(1.5 ** 10)  # maximum_iterations



def test_a_tape_inside_the_function_differentiates_a_while_loop():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc * x), (0, tf.ones_like(x)))[1]
        return y, t.gradient(y, x)

    y, g = f(tf.constant(1.5))
    np.testing.assert_allclose([float(y), float(g)], [1.5 ** 3, 3 * 1.5 ** 2], rtol=1e-6)

    @tf.function
    def h(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cond(x > 0.0, lambda: x * x * 3.0, lambda: -x)
        return t.gradient(y, x)

    assert (float(h(tf.constant(2.0))), float(h(tf.constant(-2.0)))) == (12.0, -1.0)


def test_a_tape_inside_the_function_differentiates_a_single_vector_loop_variable():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.while_loop(lambda v: tf.reduce_sum(v) < 100.0, lambda v: [v * 2.0], [x])[0]
        return t.gradient(y, x)

    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [64.0, 64.0])  # six doublings
