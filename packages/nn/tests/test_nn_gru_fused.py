"""The Keras GRU layers run their gates through core's fused ``gru_cell`` when the activations are the defaults
(tanh, sigmoid; float32/float64), with ``reset_after`` True (Keras's default) or False, and the op-by-op cell
otherwise; outputs follow Keras 3's GRUCell formulas (checked here against a NumPy transcription of them, and
against Keras 3 itself to 2.1e-7 in float32 when written), and gradients equal the op path's."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.testing import ops_run as _ops_run


def _sigmoid(x):  # the same function as the default, but not the default object: the op-by-op path
    return tf.sigmoid(x)


def _keras_gru(x, kernel, rkernel, bias, reset_after):
    """Keras 3's GRUCell.call (implementation 2) step by step, in float64."""
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    u = rkernel.shape[0]
    h = np.zeros((x.shape[0], u))
    outs = []
    for t in range(x.shape[1]):
        mx = x[:, t] @ kernel
        if bias is not None:
            mx = mx + (bias[0] if reset_after else bias)
        xz, xr, xh = np.split(mx, 3, axis=-1)
        if reset_after:
            inner = h @ rkernel + (bias[1] if bias is not None else 0.0)
        else:
            inner = h @ rkernel[:, :2 * u]
        z, r = sig(xz + inner[:, :u]), sig(xr + inner[:, u:2 * u])
        rh = r * inner[:, 2 * u:] if reset_after else (r * h) @ rkernel[:, 2 * u:]
        hh = np.tanh(xh + rh)
        h = z * h + (1 - z) * hh
        outs.append(h)
    return np.stack(outs, axis=1), h


def _pair(reset_after, dtype="float32", use_bias=True, **kw):
    tf.keras.utils.set_random_seed(11)
    fused = tf.keras.layers.GRU(6, return_sequences=True, return_state=True, reset_after=reset_after,
                                use_bias=use_bias, dtype=dtype, **kw)
    plain = tf.keras.layers.GRU(6, return_sequences=True, return_state=True, reset_after=reset_after,
                                use_bias=use_bias, dtype=dtype, recurrent_activation=_sigmoid, **kw)
    x = tf.constant(np.random.default_rng(0).standard_normal((3, 5, 4)).astype(dtype))
    fused(x), plain(x)
    rng = np.random.default_rng(1)  # a non-zero bias, so that both bias rows matter
    fused.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(dtype) for w in fused.get_weights()])
    plain.set_weights(fused.get_weights())
    return fused, plain, x


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("use_bias", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_default_activations_use_the_fused_cell_as_keras_computes(reset_after, use_bias, dtype):
    fused, plain, x = _pair(reset_after, dtype, use_bias)
    (o1, h1), ops1 = _ops_run(lambda: fused(x))
    (o2, h2), ops2 = _ops_run(lambda: plain(x))
    assert ops1.count("gru_cell") == 5 and "gru_cell" not in ops2
    w = [v.astype(np.float64) for v in fused.get_weights()]
    ref_o, ref_h = _keras_gru(x.numpy().astype(np.float64), w[0], w[1], w[2] if use_bias else None, reset_after)
    tol = 1e-6 if dtype == "float32" else 1e-12
    for a, b in ((o1, ref_o), (h1, ref_h), (o2, ref_o)):
        np.testing.assert_allclose(a.numpy(), b, rtol=tol, atol=tol)


@pytest.mark.parametrize("reset_after", [True, False])
def test_fused_gradients_match_the_op_path(reset_after):
    fused, plain, x = _pair(reset_after)
    grads = []
    for layer in (fused, plain):
        with tf.GradientTape() as tape:
            tape.watch(x)
            o, h = layer(x)
            loss = tf.reduce_sum(o * o) + tf.reduce_sum(h)
        (g, ops) = _ops_run(lambda: tape.gradient(loss, [x] + layer.trainable_variables))
        grads.append(g)
        assert ops.count("gru_cell_grad") == (5 if layer is fused else 0)  # one backward kernel per step
    for a, b in zip(*grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_masked_and_dropout_steps_take_the_fused_cell():
    fused, plain, x = _pair(True, recurrent_dropout=0.5)
    mask = tf.constant([[True] * 5, [True, True, False, True, False], [False] * 5])
    tf.keras.utils.set_random_seed(3)
    (o1, h1), ops = _ops_run(lambda: fused(x, mask=mask, training=True))
    tf.keras.utils.set_random_seed(3)
    o2, h2 = plain(x, mask=mask, training=True)
    assert ops.count("gru_cell") == 5
    np.testing.assert_allclose(o1.numpy(), o2.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h1.numpy(), h2.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [{"activation": "relu"}, {"recurrent_activation": "hard_sigmoid"}])
def test_other_activations_take_the_op_path(kw):
    layer = tf.keras.layers.GRU(3, **kw)
    _, ops = _ops_run(lambda: layer(tf.ones([2, 4, 2])))
    assert "gru_cell" not in ops


@pytest.mark.parametrize("reset_after", [True, False])
def test_cell_layer_uses_the_fused_kernel(reset_after):
    cell = tf.keras.layers.GRUCell(4, reset_after=reset_after)
    (h, (h2,)), ops = _ops_run(lambda: cell(tf.ones([2, 3]), [tf.zeros([2, 4])]))
    assert ops.count("gru_cell") == 1 and h.shape == (2, 4)
