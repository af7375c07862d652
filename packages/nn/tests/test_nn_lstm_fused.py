"""The Keras LSTM layers run their gates through core's fused ``lstm_cell`` when the activations are the
defaults (tanh, sigmoid; float32/float64), and the op-by-op cell otherwise; both give the same outputs and
gradients."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.testing import ops_run as _ops_run


def _sigmoid(x):  # the same function as the default, but not the default object: the op-by-op path
    return tf.sigmoid(x)


def _pair(**kw):
    tf.keras.utils.set_random_seed(7)
    fused = tf.keras.layers.LSTM(6, return_sequences=True, return_state=True, **kw)
    plain = tf.keras.layers.LSTM(6, return_sequences=True, return_state=True, recurrent_activation=_sigmoid, **kw)
    x = tf.constant(np.random.default_rng(0).standard_normal((3, 5, 4)).astype(np.float32))
    fused(x), plain(x)
    plain.set_weights(fused.get_weights())
    return fused, plain, x


def test_default_activations_use_the_fused_cell():
    fused, plain, x = _pair()
    (o1, h1, c1), ops1 = _ops_run(lambda: fused(x))
    (o2, h2, c2), ops2 = _ops_run(lambda: plain(x))
    assert ops1.count("lstm_cell") == 5 and "lstm_cell" not in ops2
    for a, b in ((o1, o2), (h1, h2), (c1, c2)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


def test_fused_gradients_match_the_op_path():
    fused, plain, x = _pair()
    grads = []
    for layer in (fused, plain):
        with tf.GradientTape() as tape:
            tape.watch(x)
            o, h, c = layer(x)
            loss = tf.reduce_sum(o * o) + tf.reduce_sum(c)
        grads.append(tape.gradient(loss, [x] + layer.trainable_variables))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [{"activation": "relu"}, {"recurrent_activation": "hard_sigmoid"}])
def test_other_activations_take_the_op_path(kw):
    layer = tf.keras.layers.LSTM(3, **kw)
    _, ops = _ops_run(lambda: layer(tf.ones([2, 4, 2])))
    assert "lstm_cell" not in ops and ops.count("tanh") + ops.count("relu") >= 4  # the op-by-op cell, per step


def test_cell_layer_uses_the_fused_kernel():
    cell = tf.keras.layers.LSTMCell(4)
    (h, (h2, c)), ops = _ops_run(lambda: cell(tf.ones([2, 3]), [tf.zeros([2, 4]), tf.zeros([2, 4])]))
    assert ops.count("lstm_cell") == 1 and h.shape == c.shape == (2, 4)
