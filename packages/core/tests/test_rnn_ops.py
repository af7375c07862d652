"""rnn_ops.lstm_cell: one LSTM step's gates in one kernel (csrc/rnn.c), its argument checks and dtypes."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.ops.rnn_ops import lstm_cell


def _ref(z, c):
    s = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    zi, zf, zg, zo = np.split(z.astype(np.float64), 4, axis=1)
    cn = s(zf) * c + s(zi) * np.tanh(zg)
    return s(zo) * np.tanh(cn), cn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_the_formula(dtype):
    rng = np.random.default_rng(3)
    z, c = rng.uniform(-4, 4, (6, 20)).astype(dtype), rng.uniform(-2, 2, (6, 5)).astype(dtype)
    with tf.device("cpu:0"):
        h2, c2 = lstm_cell(tf.constant(z), tf.constant(c))
    assert h2.dtype == c2.dtype == tf.as_dtype(dtype) and h2.shape == c2.shape == (6, 5)
    h_ref, c_ref = _ref(z, c)
    tol = 2e-7 if dtype == "float32" else 1e-15
    np.testing.assert_allclose(c2.numpy(), c_ref, rtol=tol * 8, atol=tol * 8)
    np.testing.assert_allclose(h2.numpy(), h_ref, rtol=tol * 8, atol=tol * 8)


def test_bad_arguments_raise_typed_errors():
    z, c = tf.zeros([2, 8]), tf.zeros([2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"4 \* units = 12 columns.*\[Op:LSTMGates\]"):
        lstm_cell(z, tf.zeros([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"3 rows but c has 2.*\[Op:LSTMGates\]"):
        lstm_cell(tf.zeros([3, 8]), c)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank 2.*\[Op:LSTMGates\]"):
        lstm_cell(tf.zeros([8]), c)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"LSTMGates"):
        lstm_cell(tf.zeros([2, 8], tf.int32), tf.zeros([2, 2], tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"LSTMGates"):
        lstm_cell(z, tf.zeros([2, 2], tf.float64))


def test_empty_batch():
    h2, c2 = lstm_cell(tf.zeros([0, 12]), tf.zeros([0, 3]))
    assert h2.shape == c2.shape == (0, 3)
