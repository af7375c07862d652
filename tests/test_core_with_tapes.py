"""Core behaviours checked through a GradientTape (tapeflow-autodiff): the hot paths record, in-place updates keep
what a tape recorded, and the gamma draws' implicit gradient (core's own suites run without autodiff)."""
from __future__ import annotations

import numpy as np

import tapeflow as tf


def _np(t):
    return np.asarray(t.numpy(), np.float64)


def _fresh(values, dtype="float32"):
    """A CPU variable that owns its buffer (one update made it a new one)."""
    with tf.device("cpu:0"):
        v = tf.Variable(np.asarray(values, dtype))
    v.assign_add(tf.zeros(v.shape, v.dtype))
    return v


def test_elementwise_hot_path_is_recorded():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.exp(x) * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp([1.0, 2.0]) * [2.0, 3.0], rtol=1e-6)


def test_tape_sees_the_value_it_recorded():
    w = _fresh([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = w * w
        w.assign_sub(tf.constant([1.0, 1.0]))
        z = tf.reduce_sum(y * w)
    # z = sum(w0**2 * w1), w0 = [1, 2] the first read, w1 = w0 - 1 the second: 2 * w0 * w1 + w0**2
    assert tape.gradient(z, w).numpy().tolist() == [1.0, 8.0]
    np.testing.assert_array_equal(y.numpy(), [1.0, 4.0])


def test_gradient_of_a_mean_sample_is_unbiased():
    # E[x] = alpha / beta, so d E[x] / d alpha = 1 / beta and d E[x] / d beta = -alpha / beta^2
    alpha, beta = tf.constant([0.7, 3.0], tf.float64), tf.constant([2.0, 0.5], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([alpha, beta])
        m = tf.reduce_mean(tf.random.stateless_gamma([100_000, 2], seed=[1, 1], alpha=alpha, beta=beta,
                                                     dtype=tf.float64), axis=0)
        total = tf.reduce_sum(m)
    da, db = tape.gradient(total, [alpha, beta])
    np.testing.assert_allclose(_np(da), [0.5, 2.0], rtol=0.02)
    np.testing.assert_allclose(_np(db), [-0.7 / 4, -3.0 / 0.25], rtol=0.02)


def test_poisson_and_binomial_have_no_gradient():
    lam = tf.constant([2.0])
    with tf.GradientTape() as tape:
        tape.watch(lam)
        x = tf.random.poisson([3], lam, seed=1)
    assert tape.gradient(x, lam) is None


def _cpu_const(x, dtype="float32"):
    with tf.device("cpu:0"):
        return tf.constant(np.asarray(x, dtype))


def test_matmul_hot_path_is_recorded():
    a, b = _cpu_const([[1.0, 2.0], [3.0, 4.0]]), _cpu_const([[0.5, -1.0], [2.0, 1.0]])
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = tf.reduce_sum(tf.matmul(a, b, transpose_b=True))
    ga, gb = tape.gradient(y, [a, b])
    ones = np.ones((2, 2), np.float32)
    np.testing.assert_allclose(ga.numpy(), ones @ b.numpy())
    np.testing.assert_allclose(gb.numpy(), ones.T @ a.numpy())
