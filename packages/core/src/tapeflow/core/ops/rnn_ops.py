"""Fused recurrent-cell kernels: the element-wise part of an LSTM step in one pass.

``lstm_cell(z, c)`` takes the gate pre-activations ``z = x @ kernel + h @ recurrent_kernel + bias``
([batch, 4 * units], gates in Keras's order i, f, g, o) and the cell state ``c`` ([batch, units]) and
returns the new ``(h, c)``; the Keras LSTM layers call it when their activations are the defaults.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import alloc, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run

__all__: list = []  # no tf.* name: tf.keras.layers.LSTM / LSTMCell use it

_OP = "LSTMGates"
_DTYPES = (_dt.float32, _dt.float64)


def _shapes(z, c):
    """(batch, units) of a step, or an InvalidArgumentError naming what was wrong."""
    sz, sc = tuple(z._shape), tuple(c._shape)
    if len(sz) != 2 or len(sc) != 2:
        raise InvalidArgumentError(f"lstm_cell takes z of rank 2 (batch, 4 * units) and c of rank 2 (batch, units); "
                                   f"got shapes {sz} and {sc}", _OP)
    b, u = sc
    if sz[0] is not None and b is not None and sz[0] != b:
        raise InvalidArgumentError(f"z has {sz[0]} rows but c has {b}; allowed: the same batch", _OP)
    if sz[1] is not None and u is not None and sz[1] != 4 * u:
        raise InvalidArgumentError(f"z has {sz[1]} columns but c has {u} units; allowed: z of 4 * units = "
                                   f"{4 * u} columns (gates i, f, g, o)", _OP)
    if u is None and sz[1] is not None:
        u = sz[1] // 4
    return (b if b is not None else sz[0]), u


def _lstm_infer(z, c):
    b, u = _shapes(z, c)
    return [((b, u), z._dtype), ((b, u), z._dtype)]


@primitive("lstm_cell", _OP, infer=_lstm_infer, dtypes=_DTYPES, same_dtype=True)
def _LSTM_CELL(dev, z, c):
    b, u = _shapes(z, c)
    h2, c2 = alloc((b, u), z._dtype, dev), alloc((b, u), z._dtype, dev)
    check(dev.backend.lstm_cell(z._dtype.code, b, u, z._h, c._h, h2._h, c2._h), "lstm_cell")
    return h2, c2


@register("lstm_cell", _OP)
def lstm_cell(z, c, name=None):
    """One LSTM step's gates from their pre-activations: with ``z = [z_i, z_f, z_g, z_o]`` along the last axis,
    ``c_new = sigmoid(z_f) * c + sigmoid(z_i) * tanh(z_g)`` and ``h_new = sigmoid(z_o) * tanh(c_new)``;
    returns ``(h_new, c_new)``.  float32 or float64, z of shape (batch, 4 * units), c of (batch, units).

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.rnn_ops import lstm_cell
    >>> h, c = lstm_cell(tf.zeros([1, 4]), tf.ones([1, 1]))
    >>> round(float(c[0, 0]), 4), round(float(h[0, 0]), 4)
    (0.5, 0.2311)
    """
    z, c = to_tensor(z, _OP), to_tensor(c, _OP)
    _shapes(z, c)
    return run(_LSTM_CELL, (z, c))
