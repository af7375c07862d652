"""Gradients of core's nn ops through the tape
(moved from packages/core/tests/test_nn_ops.py: they need tapeflow-autodiff)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.testing import np_log_softmax, np_softmax
from tapeflow.core.testing import raises_invalid_argument as _raises


def test_softmax_xent_gradients(rng):
    logits = tf.constant(rng.normal(size=(4, 3)))
    labels = tf.constant(np_softmax(rng.normal(size=(4, 3))))
    w = tf.constant(rng.normal(size=(4,)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([logits, labels])
        loss = tf.nn.softmax_cross_entropy_with_logits(labels, logits) * w
    g_logits, g_labels = tape.gradient(loss, [logits, labels])
    np.testing.assert_allclose(g_logits.numpy(), w.numpy()[:, None] * (np_softmax(logits.numpy()) - labels.numpy()),
                               rtol=1e-12)
    np.testing.assert_allclose(g_labels.numpy(), -w.numpy()[:, None] * np_log_softmax(logits.numpy()), rtol=1e-12)


def test_softmax_xent_second_order(rng):
    x = tf.constant(rng.normal(size=(2, 3)))
    labels = tf.constant(np_softmax(rng.normal(size=(2, 3))))
    v = rng.normal(size=(2, 3))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels, x))
        g = inner.gradient(loss, x)
        gv = tf.reduce_sum(g * v)
    hv = outer.gradient(gv, x).numpy()
    p = np_softmax(x.numpy())
    # Hessian of the loss per row: diag(p) - p p^T
    want = p * v - p * (p * v).sum(-1, keepdims=True)
    np.testing.assert_allclose(hv, want, rtol=1e-10, atol=1e-12)


def test_sparse_xent_gradient_is_softmax_minus_one_hot(rng):
    logits = tf.constant(rng.normal(size=(4, 3)).astype(np.float32))
    labels = tf.constant([0, 2, 1, 2])
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    g = tape.gradient(loss, logits).numpy()
    want = (np_softmax(logits.numpy().astype(np.float64)) - np.eye(3)[[0, 2, 1, 2]]) / 4
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)


def test_sparse_xent_second_order(rng):
    x = tf.constant(rng.normal(size=(2, 4)))
    v = rng.normal(size=(2, 4))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits([3, 0], x))
        gv = tf.reduce_sum(inner.gradient(loss, x) * v)
    p = np_softmax(x.numpy())
    np.testing.assert_allclose(outer.gradient(gv, x).numpy(), p * v - p * (p * v).sum(-1, keepdims=True),
                               rtol=1e-10, atol=1e-12)


def test_sparse_xent_label_out_of_range_names_the_label():
    op = r"\[Op:SparseSoftmaxCrossEntropyWithLogits\]"
    _raises(r"^labels\[1\] = 7 is not in \[0, 3\) \(logits has 3 classes\) " + op + "$",
            tf.nn.sparse_softmax_cross_entropy_with_logits, [0, 7], tf.zeros([2, 3]))
    _raises(r"labels\[1, 0\] = -1 is not in \[0, 4\)", tf.nn.sparse_softmax_cross_entropy_with_logits,
            tf.constant([[0], [-1]], tf.int64), tf.zeros([2, 1, 4]))
    # also when a tape is recording (the gradient is computed in the same pass)
    with tf.GradientTape() as tape:
        x = tf.zeros([1, 2])
        tape.watch(x)
        _raises(r"labels\[0\] = 2 is not in \[0, 2\)", tf.nn.sparse_softmax_cross_entropy_with_logits, [2], x)


def test_sigmoid_xent_gradient_at_zero_logits():
    # a kink-free gradient: sigmoid(0) - z = 0.5 - z (zero-initialised models start here)
    x = tf.zeros([3], tf.float64)
    z = tf.constant([0.0, 0.25, 1.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([x, z])
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    gx, gz = tape.gradient(loss, [x, z])
    assert gx.numpy().tolist() == [0.5, 0.25, -0.5]
    assert gz.numpy().tolist() == [-0.0, -0.0, -0.0]


def test_bias_add_gradient_is_a_reduce_sum(rng):
    x = tf.constant(rng.normal(size=(4, 3)))
    b = tf.constant(rng.normal(size=3))
    with tf.GradientTape() as tape:
        tape.watch(b)
        y = tf.nn.bias_add(x, b) * tf.constant(np.arange(12.0).reshape(4, 3))
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), np.arange(12.0).reshape(4, 3).sum(0))


def test_dropout_gradient_is_the_mask(rng):
    x = tf.constant(rng.normal(size=(200,)).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.dropout(x, 0.5, seed=3)
    g = tape.gradient(y, x).numpy()
    mask = y.numpy() / x.numpy()
    np.testing.assert_allclose(g, mask, rtol=1e-6)


def test_layer_norm_from_moments_and_batch_normalization(rng):
    # what a LayerNormalization layer computes, and its gradient through the composites
    x = tf.constant(rng.normal(size=(4, 6)))
    gamma = tf.constant(rng.normal(size=6))
    with tf.GradientTape() as tape:
        tape.watch([x, gamma])
        m, v = tf.nn.moments(x, axes=[-1], keepdims=True)
        y = tf.nn.batch_normalization(x, m, v, None, gamma, 1e-5)
        loss = tf.reduce_sum(y * y)
    gx, gg = tape.gradient(loss, [x, gamma])
    xn = (x.numpy() - x.numpy().mean(-1, keepdims=True)) / np.sqrt(x.numpy().var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), xn * gamma.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gg.numpy(), (2 * xn * xn * gamma.numpy()).sum(0), rtol=1e-8)
    assert gx.shape == (4, 6)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_gradient_matches_central_differences(approximate):
    x = tf.Variable(np.array([-9.0, -4.0, -2.7, -0.5, 0.0, 0.4, 1.3, 3.0, 7.0]))
    with tf.GradientTape() as tape:
        y = tf.nn.gelu(x, approximate=approximate)
    g = tape.gradient(y, x).numpy()
    v, h = x.numpy(), 1e-6
    num = (tf.nn.gelu(v + h, approximate=approximate).numpy() - tf.nn.gelu(v - h, approximate=approximate).numpy())
    np.testing.assert_allclose(g, num / (2 * h), rtol=1e-6, atol=1e-12)
