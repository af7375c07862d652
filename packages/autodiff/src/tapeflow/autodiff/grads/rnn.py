"""Gradients and JVPs of the fused recurrent cells (core's ``lstm_cell`` and ``gru_cell``).

A first-order backward pass runs the cells' backward kernels (``lstm_cell_grad``, ``gru_cell_grad``: one pass
each).  When a tape or a forward accumulator records the backward pass itself (higher-order derivatives), the
rules run the same formulas with differentiable tapeflow ops instead, so that they differentiate again.
"""
from __future__ import annotations

from tapeflow.core.ops import add, concat, multiply, sigmoid, split, subtract, tanh
from tapeflow.core.ops.rnn_ops import gru_cell_grad, lstm_cell_grad

from .. import forward as _forward
from ..forward_rules import defjvp
from ..registry import defgrad
from ..tape import recording


def _first_order():
    """Whether the backward pass now running is recorded by nothing (no tape, no forward accumulator)."""
    return not recording() and not _forward._active(_forward._state)


def _gates(z):
    zi, zf, zg, zo = split(z, 4, axis=1)
    return sigmoid(zi), sigmoid(zf), tanh(zg), sigmoid(zo)


def _dsig(s):
    return multiply(s, subtract(1.0, s))      # sigmoid' = s (1 - s)


def _dtanh(t):
    return subtract(1.0, multiply(t, t))      # tanh' = 1 - t**2


@defgrad("lstm_cell")
def _lstm_cell_grad(g, ans, z, c):
    gh, gc = g
    if _first_order():
        return lstm_cell_grad(z, c, ans[1], gh, gc)
    i, f, gg, o = _gates(z)
    tc = tanh(ans[1])
    dc = add(gc, multiply(multiply(gh, o), _dtanh(tc)))        # d loss / d c_new, through h and directly
    do = multiply(multiply(gh, tc), _dsig(o))
    di = multiply(multiply(dc, gg), _dsig(i))
    df = multiply(multiply(dc, c), _dsig(f))
    dg = multiply(multiply(dc, i), _dtanh(gg))
    return concat([di, df, dg, do], axis=1), multiply(dc, f)


@defjvp("lstm_cell")
def _lstm_cell_jvp(ts, ans, z, c):
    tz, tcin = ts
    i, f, gg, o = _gates(z)
    tc = tanh(ans[1])
    dcn = None
    if tz is not None:
        ti, tf_, tg, to = split(tz, 4, axis=1)
        dcn = add(add(multiply(c, multiply(_dsig(f), tf_)), multiply(gg, multiply(_dsig(i), ti))),
                  multiply(i, multiply(_dtanh(gg), tg)))
    if tcin is not None:
        fc = multiply(f, tcin)
        dcn = fc if dcn is None else add(dcn, fc)
    dh = multiply(multiply(o, _dtanh(tc)), dcn)
    if tz is not None:
        dh = add(dh, multiply(tc, multiply(_dsig(o), to)))
    return dh, dcn


def _sum(*ts):
    """The sum of the tensors that are not None (None when all are)."""
    out = None
    for t in ts:
        if t is not None:
            out = t if out is None else add(out, t)
    return out


def _gru_parts(xw, hu, reset_after):
    """z, r (None without reset_after), hu's candidate block and the candidate n of a GRU step."""
    xz, xr, xh = split(xw, 3, axis=1)
    hz, hr, hh = split(hu, 3, axis=1)
    z = sigmoid(add(xz, hz))
    r = sigmoid(add(xr, hr)) if reset_after else None
    n = tanh(add(xh, multiply(r, hh) if reset_after else hh))
    return z, r, hh, n


@defgrad("gru_cell")
def _gru_cell_grad(g, ans, xw, hu, h, reset_after):
    if _first_order():
        return gru_cell_grad(xw, hu, h, g, reset_after=reset_after)
    z, r, hh, n = _gru_parts(xw, hu, reset_after)
    dzp = multiply(multiply(g, subtract(h, n)), _dsig(z))
    da = multiply(multiply(g, subtract(1.0, z)), _dtanh(n))
    if reset_after:
        dr = multiply(multiply(da, hh), _dsig(r))
        dxw, dhu = concat([dzp, dr, da], axis=1), concat([dzp, dr, multiply(da, r)], axis=1)
    else:
        zero = multiply(dzp, 0.0)
        dxw = dhu = concat([dzp, zero, da], axis=1)
    return dxw, dhu, multiply(g, z)


@defjvp("gru_cell")
def _gru_cell_jvp(ts, ans, xw, hu, h, reset_after):
    txw, thu, th = ts
    z, r, hh, n = _gru_parts(xw, hu, reset_after)
    tx = split(txw, 3, axis=1) if txw is not None else (None, None, None)
    tu = split(thu, 3, axis=1) if thu is not None else (None, None, None)
    tzp = _sum(tx[0], tu[0])
    if reset_after:
        trp = _sum(tx[1], tu[1])
        tq = _sum(None if tu[2] is None else multiply(r, tu[2]),
                  None if trp is None else multiply(hh, multiply(_dsig(r), trp)))
    else:
        tq = tu[2]
    ta = _sum(tx[2], tq)
    return _sum(None if tzp is None else multiply(subtract(h, n), multiply(_dsig(z), tzp)),
                None if th is None else multiply(z, th),
                None if ta is None else multiply(subtract(1.0, z), multiply(_dtanh(n), ta)))
