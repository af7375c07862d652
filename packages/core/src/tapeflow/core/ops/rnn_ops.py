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


# ---- the LSTM step's backward pass ----------------------------------------------------------------------------

_OP_LSTM_GRAD = "LSTMGatesGrad"


def _lstm_grad_args(z, c, c_new, gh, gc):
    b, u = _shapes(z, c)
    for name, t in (("c_new", c_new), ("gh", gh), ("gc", gc)):
        if tuple(t._shape) != tuple(c._shape) and not all(a is None or d is None or a == d
                                                           for a, d in zip(t._shape, c._shape)) \
                or len(t._shape) != 2:
            raise InvalidArgumentError(f"{name} has shape {tuple(t._shape)}; allowed: c's shape "
                                       f"{tuple(c._shape)} (batch, units)", _OP_LSTM_GRAD)
    return b, u


def _lstm_grad_infer(z, c, c_new, gh, gc):
    b, u = _lstm_grad_args(z, c, c_new, gh, gc)
    return [((b, None if u is None else 4 * u), z._dtype), ((b, u), z._dtype)]


@primitive("lstm_cell_grad", _OP_LSTM_GRAD, infer=_lstm_grad_infer, dtypes=_DTYPES, same_dtype=True)
def _LSTM_CELL_GRAD(dev, z, c, c_new, gh, gc):
    b, u = _lstm_grad_args(z, c, c_new, gh, gc)
    dz, dc = alloc((b, 4 * u), z._dtype, dev), alloc((b, u), z._dtype, dev)
    check(dev.backend.lstm_cell_grad(z._dtype.code, b, u, z._h, c._h, c_new._h, gh._h, gc._h, dz._h, dc._h),
          "lstm_cell_grad")
    return dz, dc


@register("lstm_cell_grad", _OP_LSTM_GRAD, nondiff="the backward kernel of lstm_cell: its gradient rule runs the "
          "differentiable op chain instead whenever a tape or accumulator records the backward pass")
def lstm_cell_grad(z, c, c_new, gh, gc, name=None):
    """The gradients ``(dz, dc)`` of an ``lstm_cell`` step from its inputs ``z``, ``c``, its new cell state
    ``c_new`` and the gradients ``gh``, ``gc`` of its outputs, in one kernel: with ``i, f, o = sigmoid(z_i, z_f,
    z_o)``, ``g = tanh(z_g)``, ``t = tanh(c_new)`` and ``d = gc + gh * o * (1 - t**2)``:
    ``dz = [d g i (1 - i), d c f (1 - f), d i (1 - g**2), gh t o (1 - o)]`` and ``dc = d f``.

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.rnn_ops import lstm_cell_grad
    >>> dz, dc = lstm_cell_grad(tf.zeros([1, 4]), tf.ones([1, 1]), tf.ones([1, 1]) * 0.5, tf.zeros([1, 1]),
    ...                         tf.ones([1, 1]))
    >>> dz.numpy().round(4).tolist(), dc.numpy().tolist()
    ([[0.0, 0.25, 0.5, 0.0]], [[0.5]])
    """
    ts = tuple(to_tensor(t, _OP_LSTM_GRAD) for t in (z, c, c_new, gh, gc))
    _lstm_grad_args(*ts)
    return run(_LSTM_CELL_GRAD, ts)


# ---- the GRU step -----------------------------------------------------------------------------------------------

_OP_GRU = "GRUGates"
_OP_GRU_GRAD = "GRUGatesGrad"


def _gru_shapes(xw, hu, h, op):
    sx, su, sh = tuple(xw._shape), tuple(hu._shape), tuple(h._shape)
    if len(sx) != 2 or len(su) != 2 or len(sh) != 2:
        raise InvalidArgumentError(f"gru_cell takes xw and hu of rank 2 (batch, 3 * units) and h of rank 2 "
                                   f"(batch, units); got shapes {sx}, {su} and {sh}", op)
    b, u = sh
    for name, s in (("xw", sx), ("hu", su)):
        if s[0] is not None and b is not None and s[0] != b:
            raise InvalidArgumentError(f"{name} has {s[0]} rows but h has {b}; allowed: the same batch", op)
        if s[1] is not None and u is not None and s[1] != 3 * u:
            raise InvalidArgumentError(f"{name} has {s[1]} columns but h has {u} units; allowed: 3 * units = "
                                       f"{3 * u} columns (gates z, r, h)", op)
    if u is None:
        u = next((s[1] // 3 for s in (sx, su) if s[1] is not None), None)
    if b is None:
        b = next((s[0] for s in (sx, su) if s[0] is not None), None)
    return b, u


def _reset_after(reset_after, op):
    if type(reset_after) is not bool:
        raise TypeError(f"reset_after must be a bool; got {type(reset_after).__name__} {reset_after!r} [Op:{op}]")
    return reset_after


def _gru_infer(xw, hu, h, *, reset_after):
    return _gru_shapes(xw, hu, h, _OP_GRU), xw._dtype


@primitive("gru_cell", _OP_GRU, infer=_gru_infer, dtypes=_DTYPES, same_dtype=True)
def _GRU_CELL(dev, xw, hu, h, *, reset_after):
    b, u = _gru_shapes(xw, hu, h, _OP_GRU)
    out = alloc((b, u), xw._dtype, dev)
    check(dev.backend.gru_cell(xw._dtype.code, b, u, int(reset_after), xw._h, hu._h, h._h, out._h), "gru_cell")
    return out


@register("gru_cell", _OP_GRU)
def gru_cell(xw, hu, h, reset_after=True, name=None):
    """One GRU step's gates from the input projection ``xw = x @ kernel + input_bias`` and the recurrent one ``hu``
    (both (batch, 3 * units), gates z, r, h as Keras orders them) and the state ``h`` (batch, units):
    ``z = sigmoid(xw_z + hu_z)``, ``n = tanh(xw_h + q)``, returns ``z * h + (1 - z) * n``.

    With ``reset_after=True`` (Keras's default, ``hu = h @ recurrent_kernel + recurrent_bias``)
    ``q = sigmoid(xw_r + hu_r) * hu_h``; with ``reset_after=False`` the caller has applied the reset gate before
    its matmul, ``hu_h = (r * h) @ recurrent_kernel[:, 2 * units:]``, and ``q = hu_h`` (the r blocks of ``xw``
    and ``hu`` are not read: their gradient is zero).

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.rnn_ops import gru_cell
    >>> h = gru_cell(tf.zeros([1, 3]), tf.zeros([1, 3]), tf.ones([1, 1]))
    >>> round(float(h[0, 0]), 4)
    0.5
    """
    xw, hu, h = to_tensor(xw, _OP_GRU), to_tensor(hu, _OP_GRU), to_tensor(h, _OP_GRU)
    _gru_shapes(xw, hu, h, _OP_GRU)
    return run(_GRU_CELL, (xw, hu, h), {"reset_after": _reset_after(reset_after, _OP_GRU)})


def _gru_grad_args(xw, hu, h, gout):
    b, u = _gru_shapes(xw, hu, h, _OP_GRU_GRAD)
    if len(gout._shape) != 2 or not all(a is None or d is None or a == d for a, d in zip(gout._shape, h._shape)):
        raise InvalidArgumentError(f"gout has shape {tuple(gout._shape)}; allowed: h's shape {tuple(h._shape)} "
                                   "(batch, units)", _OP_GRU_GRAD)
    return b, u


def _gru_grad_infer(xw, hu, h, gout, *, reset_after):
    b, u = _gru_grad_args(xw, hu, h, gout)
    w = None if u is None else 3 * u
    return [((b, w), xw._dtype), ((b, w), xw._dtype), ((b, u), xw._dtype)]


@primitive("gru_cell_grad", _OP_GRU_GRAD, infer=_gru_grad_infer, dtypes=_DTYPES, same_dtype=True)
def _GRU_CELL_GRAD(dev, xw, hu, h, gout, *, reset_after):
    b, u = _gru_grad_args(xw, hu, h, gout)
    dt = xw._dtype
    dxw, dhu, dh = alloc((b, 3 * u), dt, dev), alloc((b, 3 * u), dt, dev), alloc((b, u), dt, dev)
    check(dev.backend.gru_cell_grad(dt.code, b, u, int(reset_after), xw._h, hu._h, h._h, gout._h, dxw._h, dhu._h,
                                    dh._h), "gru_cell_grad")
    return dxw, dhu, dh


@register("gru_cell_grad", _OP_GRU_GRAD, nondiff="the backward kernel of gru_cell: its gradient rule runs the "
          "differentiable op chain instead whenever a tape or accumulator records the backward pass")
def gru_cell_grad(xw, hu, h, gout, reset_after=True, name=None):
    """The gradients ``(dxw, dhu, dh)`` of a ``gru_cell`` step given the gradient ``gout`` of its output, in one
    kernel: with ``dn = gout (1 - z)`` and ``da = dn (1 - n**2)``, ``dxw = [gout (h - n) z (1 - z), dr, da]``,
    ``dhu = [gout (h - n) z (1 - z), dr, da r]`` and ``dh = gout z``, where ``dr = da hu_h r (1 - r)`` with
    ``reset_after`` (``r = 1``, ``dr = 0`` without).

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.rnn_ops import gru_cell_grad
    >>> dxw, dhu, dh = gru_cell_grad(tf.zeros([1, 3]), tf.zeros([1, 3]), tf.ones([1, 1]), tf.ones([1, 1]))
    >>> dxw.numpy().tolist(), dhu.numpy().tolist(), dh.numpy().tolist()
    ([[0.25, 0.0, 0.5]], [[0.25, 0.0, 0.25]], [[0.5]])
    """
    ts = tuple(to_tensor(t, _OP_GRU_GRAD) for t in (xw, hu, h, gout))
    _gru_grad_args(*ts)
    return run(_GRU_CELL_GRAD, ts, {"reset_after": _reset_after(reset_after, _OP_GRU_GRAD)})
