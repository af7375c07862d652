"""Gradient and JVP of the fused LSTM cell (core's ``lstm_cell``), written with tapeflow ops (so that an
enclosing tape records them: higher-order gradients work)."""
from __future__ import annotations

from tapeflow.core.ops import add, concat, multiply, sigmoid, split, subtract, tanh

from ..forward_rules import defjvp
from ..registry import defgrad


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
