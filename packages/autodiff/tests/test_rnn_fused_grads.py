"""First-order gradients of the fused recurrent cells (core's lstm_cell and gru_cell) run one backward kernel
(lstm_cell_grad / gru_cell_grad); when a tape or a forward accumulator records the backward pass (higher order)
the rules run differentiable ops instead.  Both give the same values."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.testing import ops_run as _ops_run
from tapeflow.core.ops.rnn_ops import gru_cell, lstm_cell


def _inputs(kind, dtype=np.float64):
    rng = np.random.default_rng(5)
    if kind == "lstm":
        shapes = [(3, 8), (3, 2)]
    else:
        shapes = [(3, 6), (3, 6), (3, 2)]
    return [tf.constant(rng.uniform(-2, 2, s).astype(dtype)) for s in shapes]


def _loss(kind, args, reset_after=True):
    if kind == "lstm":
        h, c = lstm_cell(*args)
        return tf.reduce_sum(h * h) + tf.reduce_sum(c * tf.constant(np.arange(2.0), c.dtype))
    h = gru_cell(*args, reset_after=reset_after)
    return tf.reduce_sum(h * h * tf.constant(np.arange(1.0, 3.0), h.dtype))


CASES = [("lstm", True), ("gru", True), ("gru", False)]


@pytest.mark.parametrize("kind,reset_after", CASES)
def test_first_order_runs_the_backward_kernel_and_matches_central_differences(kind, reset_after):
    args = _inputs(kind)
    with tf.GradientTape() as tape:
        tape.watch(args)
        loss = _loss(kind, args, reset_after)
    grads, ops = _ops_run(lambda: tape.gradient(loss, args))
    assert ops.count(f"{kind}_cell_grad") == 1 and "sigmoid" not in ops
    for k, a in enumerate(args):
        x = a.numpy()
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[idx] = 1e-6
            plus = [tf.constant(x + e) if j == k else b for j, b in enumerate(args)]
            minus = [tf.constant(x - e) if j == k else b for j, b in enumerate(args)]
            num[idx] = (float(_loss(kind, plus, reset_after)) - float(_loss(kind, minus, reset_after))) / 2e-6
        np.testing.assert_allclose(grads[k].numpy(), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind,reset_after", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_recorded_backward_uses_the_op_chain_with_the_same_values(kind, reset_after, dtype):
    args = _inputs(kind, dtype)
    with tf.GradientTape() as tape:
        tape.watch(args)
        loss = _loss(kind, args, reset_after)
    fused = tape.gradient(loss, args)
    with tf.GradientTape() as outer:
        outer.watch(args)
        with tf.GradientTape() as tape:
            tape.watch(args)
            loss = _loss(kind, args, reset_after)
        chain, ops = _ops_run(lambda: tape.gradient(loss, args))
    assert f"{kind}_cell_grad" not in ops and "sigmoid" in ops
    tol = 1e-6 if dtype == np.float32 else 1e-13
    for a, b in zip(fused, chain):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("kind,reset_after", CASES)
def test_forward_over_backward_differentiates_the_backward_pass(kind, reset_after):
    args = _inputs(kind)
    tangent = tf.constant(np.random.default_rng(2).standard_normal(args[0].shape))

    def grad0(a0):
        with tf.GradientTape() as tape:
            tape.watch(a0)
            loss = _loss(kind, [a0] + args[1:], reset_after)
        return tape.gradient(loss, a0)

    with tf.autodiff.ForwardAccumulator(args[0], tangent) as acc:
        g = grad0(args[0])
    hvp = acc.jvp(g).numpy()
    eps = 1e-5
    num = (grad0(args[0] + eps * tangent).numpy() - grad0(args[0] - eps * tangent).numpy()) / (2 * eps)
    assert np.abs(hvp).max() > 1e-3
    np.testing.assert_allclose(hvp, num, rtol=1e-5, atol=1e-7)
