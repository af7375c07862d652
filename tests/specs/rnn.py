"""Spec of the fused LSTM cell (core's rnn_ops.lstm_cell) against NumPy."""
from __future__ import annotations

import numpy as np
from opspec import FLOATS, Spec

# (batch, units): a size-0 batch and size-0 units too
SHAPES = [(3, 2), (1, 1), (5, 7), (0, 3), (2, 0)]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _lstm_ref(z, c):
    z64, c64 = z.astype(np.float64), c.astype(np.float64)
    zi, zf, zg, zo = np.split(z64, 4, axis=1)
    cn = _sigmoid(zf) * c64 + _sigmoid(zi) * np.tanh(zg)
    h = _sigmoid(zo) * np.tanh(cn)
    return h.astype(z.dtype), cn.astype(z.dtype)


def _lstm_fn(tf, z, c):
    from tapeflow.core.ops.rnn_ops import lstm_cell

    return lstm_cell(tf.constant(z), tf.constant(c))


def _cases(rng, dt):
    return [((rng.uniform(-3, 3, (b, 4 * u)).astype(dt), rng.uniform(-2, 2, (b, u)).astype(dt)), {})
            for b, u in SHAPES]


SPECS = [Spec("lstm_cell", _lstm_ref, _cases, dtypes=FLOATS, fn=_lstm_fn, rtol=1e-5, atol=1e-6, second_order=True)]
