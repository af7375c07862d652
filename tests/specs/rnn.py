"""Specs of the fused recurrent cells (core's rnn_ops: lstm_cell, gru_cell and their backward kernels)
against NumPy."""
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


def _lstm_grad_ref(z, c, cn, gh, gc):
    z64, c64, cn64, gh64, gc64 = (a.astype(np.float64) for a in (z, c, cn, gh, gc))
    zi, zf, zg, zo = np.split(z64, 4, axis=1)
    i, f, g, o, t = _sigmoid(zi), _sigmoid(zf), np.tanh(zg), _sigmoid(zo), np.tanh(cn64)
    d = gc64 + gh64 * o * (1 - t * t)
    dz = np.concatenate([d * g * i * (1 - i), d * c64 * f * (1 - f), d * i * (1 - g * g), gh64 * t * o * (1 - o)],
                        axis=1)
    return dz.astype(z.dtype), (d * f).astype(z.dtype)


def _lstm_grad_fn(tf, *args):
    from tapeflow.core.ops.rnn_ops import lstm_cell_grad

    return lstm_cell_grad(*[tf.constant(a) for a in args])


def _lstm_grad_cases(rng, dt):
    return [((rng.uniform(-3, 3, (b, 4 * u)).astype(dt),) + tuple(rng.uniform(-2, 2, (b, u)).astype(dt)
                                                                 for _ in range(4)), {})
            for b, u in SHAPES]


def _gru_parts(xw, hu, h, reset_after):
    xz, xr, xh = np.split(xw.astype(np.float64), 3, axis=1)
    hz, hr, hh = np.split(hu.astype(np.float64), 3, axis=1)
    z = _sigmoid(xz + hz)
    r = _sigmoid(xr + hr) if reset_after else np.ones_like(z)
    n = np.tanh(xh + (r * hh if reset_after else hh))
    return z, r, hh, n


def _gru_ref(xw, hu, h, reset_after=True):
    z, _, _, n = _gru_parts(xw, hu, h, reset_after)
    return (z * h.astype(np.float64) + (1 - z) * n).astype(xw.dtype)


def _gru_fn(tf, xw, hu, h, reset_after=True):
    from tapeflow.core.ops.rnn_ops import gru_cell

    return gru_cell(tf.constant(xw), tf.constant(hu), tf.constant(h), reset_after=reset_after)


def _gru_cases(rng, dt):
    return [((rng.uniform(-3, 3, (b, 3 * u)).astype(dt), rng.uniform(-3, 3, (b, 3 * u)).astype(dt),
              rng.uniform(-2, 2, (b, u)).astype(dt)), {"reset_after": ra})
            for b, u in SHAPES for ra in (True, False)]


def _gru_grad_ref(xw, hu, h, gout, reset_after=True):
    z, r, hh, n = _gru_parts(xw, hu, h, reset_after)
    g = gout.astype(np.float64)
    dzp = g * (h.astype(np.float64) - n) * z * (1 - z)
    da = g * (1 - z) * (1 - n * n)
    dr = da * hh * r * (1 - r) if reset_after else np.zeros_like(da)
    return (np.concatenate([dzp, dr, da], axis=1).astype(xw.dtype),
            np.concatenate([dzp, dr, da * r], axis=1).astype(xw.dtype), (g * z).astype(xw.dtype))


def _gru_grad_fn(tf, xw, hu, h, gout, reset_after=True):
    from tapeflow.core.ops.rnn_ops import gru_cell_grad

    return gru_cell_grad(*[tf.constant(a) for a in (xw, hu, h, gout)], reset_after=reset_after)


def _gru_grad_cases(rng, dt):
    return [(args + (rng.uniform(-2, 2, args[2].shape).astype(dt),), kw) for args, kw in _gru_cases(rng, dt)]


SPECS = [Spec("lstm_cell", _lstm_ref, _cases, dtypes=FLOATS, fn=_lstm_fn, rtol=1e-5, atol=1e-6, second_order=True),
         Spec("lstm_cell_grad", _lstm_grad_ref, _lstm_grad_cases, dtypes=FLOATS, fn=_lstm_grad_fn, rtol=1e-5,
              atol=1e-6, grad=False),
         Spec("gru_cell", _gru_ref, _gru_cases, dtypes=FLOATS, fn=_gru_fn, rtol=1e-5, atol=1e-6, second_order=True),
         Spec("gru_cell_grad", _gru_grad_ref, _gru_grad_cases, dtypes=FLOATS, fn=_gru_grad_fn, rtol=1e-5, atol=1e-6,
              grad=False)]
