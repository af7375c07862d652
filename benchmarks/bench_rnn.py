"""Recurrent steps and splits, tapeflow beside PyTorch eager in one process, interleaved (A/B/A/B), medians.

* LSTM step, batch 32, input 128, hidden 256: the step tf.keras.layers.LSTM runs (two matmuls, an add, core's
  fused ``lstm_cell``) beside torch.nn.LSTMCell; forward, and forward + backward to both weight matrices.
* GRU step, same sizes: the step tf.keras.layers.GRU runs (reset_after=True, Keras's default and PyTorch's
  formula: two matmuls, their biases, core's fused ``gru_cell``) beside torch.nn.GRUCell.
* split of [32, 1024] float32 in 4 along axis 1 (the seeds' LSTM gates) and along axis 0, and unstack of it,
  beside torch.chunk/unbind + contiguous (tapeflow has no views: its parts are copies).

With ``--threads 1`` the times are the calling thread's CPU time (``time.thread_time``: every framework then
computes on the calling thread), which a loaded machine inflates far less than wall time; otherwise wall time.
tapeflow is imported first (its OpenMP runtime), then torch with as many threads as tapeflow.  Ratios are
tapeflow / PyTorch: below 1 is faster.  The "op chain" rows are the previous code paths, for comparison: the
cells' backward as the tapeflow ops of the rules' higher-order path (what ran before the backward kernels), and the
GRU step op by op (before the fused ``gru_cell``).

usage: python benchmarks/bench_rnn.py [--quick] [--threads N]
"""
from __future__ import annotations

import os
import statistics
import sys
import time

ARGS = sys.argv[1:]
QUICK = "--quick" in ARGS
if "--threads" in ARGS:  # before any runtime starts
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = ARGS[ARGS.index("--threads") + 1]

import numpy as np  # noqa: E402
import tapeflow as tf  # noqa: E402
import tapeflow.autodiff.grads.rnn as _rnn_grads  # noqa: E402
from tapeflow.core.ops.rnn_ops import gru_cell, lstm_cell  # noqa: E402

from _common import optional, save, table  # noqa: E402

torch = optional("torch")
THREADS = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))
if torch is not None:
    torch.set_num_threads(THREADS)
B, IN, HID = 32, 128, 256
rng = np.random.default_rng(0)
x_np = rng.standard_normal((B, IN)).astype(np.float32)
h_np = rng.standard_normal((B, HID)).astype(np.float32)
c_np = rng.standard_normal((B, HID)).astype(np.float32)


def op_chain(fn):
    """``fn`` with the fused cells' gradient rules running their op chain (the backward before the kernels)."""
    def run():
        saved = _rnn_grads._first_order
        _rnn_grads._first_order = lambda: False
        try:
            return fn()
        finally:
            _rnn_grads._first_order = saved
    return run


def weights(gates):
    return ((rng.standard_normal((IN, gates * HID)) * 0.05).astype(np.float32),
            (rng.standard_normal((HID, gates * HID)) * 0.05).astype(np.float32),
            (rng.standard_normal((2, gates * HID)) * 0.05).astype(np.float32))


def lstm_pair():
    wx, wh, _ = weights(4)
    x, h, c, Wx, Wh = (tf.constant(a) for a in (x_np, h_np, c_np, wx, wh))

    def tfwd():
        return lstm_cell(tf.matmul(x, Wx) + tf.matmul(h, Wh), c)

    def tboth():
        with tf.GradientTape() as tape:
            tape.watch([Wx, Wh])
            h2, c2 = lstm_cell(tf.matmul(x, Wx) + tf.matmul(h, Wh), c)
            loss = tf.reduce_sum(h2) + tf.reduce_sum(c2)
        return tape.gradient(loss, [Wx, Wh])
    out = {"lstm forward": [tfwd], "lstm forward+backward": [tboth],
           "lstm forward+backward, op chain backward": [op_chain(tboth)]}
    if torch is not None:
        cell = torch.nn.LSTMCell(IN, HID, bias=False)
        with torch.no_grad():
            cell.weight_ih.copy_(torch.tensor(wx.T))
            cell.weight_hh.copy_(torch.tensor(wh.T))
        xt, ht, ct = torch.tensor(x_np), torch.tensor(h_np), torch.tensor(c_np)

        def pfwd():
            with torch.no_grad():
                return cell(xt, (ht, ct))

        def pboth():
            h2, c2 = cell(xt, (ht, ct))
            return torch.autograd.grad(h2.sum() + c2.sum(), [cell.weight_ih, cell.weight_hh])
        out["lstm forward"].append(pfwd)
        out["lstm forward+backward"].append(pboth)
        out["lstm forward+backward, op chain backward"].append(pboth)
    return out


def gru_pair():
    wx, wh, b = weights(3)
    x, h, Wx, Wh, bx, bh = (tf.constant(a) for a in (x_np, h_np, wx, wh, b[0], b[1]))

    def step():
        return gru_cell(tf.matmul(x, Wx) + bx, tf.matmul(h, Wh) + bh, h)

    def ops(xw, hu, h):  # the GRU step op by op, as Keras's GRUCell wrote it before the fused kernel
        xz, xr, xh = tf.split(xw, 3, axis=-1)
        hz, hr, hh = tf.split(hu, 3, axis=-1)
        z, r = tf.sigmoid(xz + hz), tf.sigmoid(xr + hr)
        return z * h + (1.0 - z) * tf.tanh(xh + r * hh)

    def step_ops():
        return ops(tf.matmul(x, Wx) + bx, tf.matmul(h, Wh) + bh, h)

    def both(step):
        def run():
            with tf.GradientTape() as tape:
                tape.watch([Wx, Wh, bx, bh])
                loss = tf.reduce_sum(step())
            return tape.gradient(loss, [Wx, Wh, bx, bh])
        return run
    out = {"gru forward": [step], "gru forward, op chain": [step_ops], "gru forward+backward": [both(step)],
           "gru forward+backward, op chain": [both(step_ops)]}
    if torch is not None:
        cell = torch.nn.GRUCell(IN, HID)
        xt, ht = torch.tensor(x_np), torch.tensor(h_np)

        def pfwd():
            with torch.no_grad():
                return cell(xt, ht)

        def pboth():
            return torch.autograd.grad(cell(xt, ht).sum(), list(cell.parameters()))
        for k in out:
            out[k].append(pboth if "backward" in k else pfwd)
    return out


def split_pair():
    a = rng.standard_normal((32, 1024)).astype(np.float32)
    x = tf.constant(a)
    out = {"split [32,1024] in 4, axis 1": [lambda: tf.split(x, 4, axis=1)],
           "split [32,1024] in 4, axis 0": [lambda: tf.split(x, 4, axis=0)],
           "unstack [32,1024], axis 0": [lambda: tf.unstack(x)]}
    if torch is not None:
        xt = torch.tensor(a)
        out["split [32,1024] in 4, axis 1"].append(lambda: [p.contiguous() for p in torch.chunk(xt, 4, dim=1)])
        out["split [32,1024] in 4, axis 0"].append(lambda: [p.contiguous() for p in torch.chunk(xt, 4, dim=0)])
        out["unstack [32,1024], axis 0"].append(lambda: [p.contiguous() for p in torch.unbind(xt, 0)])
    return out


CLOCK = time.thread_time if THREADS == 1 else time.perf_counter


def interleaved(fns, number, repeat):
    """Median seconds per call of each function, the functions taking turns ``repeat`` times."""
    for f in fns:
        for _ in range(5):
            f()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for k, f in enumerate(fns):
            t0 = CLOCK()
            for _ in range(number):
                f()
            times[k].append((CLOCK() - t0) / number)
    return [statistics.median(t) for t in times]


rows, results = [], {"threads": THREADS}
for group, number in ((lstm_pair(), 100), (gru_pair(), 100), (split_pair(), 300)):
    for work, fns in group.items():
        med = interleaved(fns, number // 4 if QUICK else number, 5 if QUICK else 11)
        us = [m * 1e6 for m in med]
        ratio = f"{us[0] / us[1]:.2f}x" if len(us) > 1 else "-"
        rows.append([work, f"{us[0]:.1f}", f"{us[1]:.1f}" if len(us) > 1 else "-", ratio])
        results[work] = {"tapeflow_us": us[0], **({"pytorch_us": us[1]} if len(us) > 1 else {})}
clock = "CPU time of the calling thread" if THREADS == 1 else "wall time"
print(table(f"Recurrent steps and splits (µs per call, {clock}, medians, {THREADS} thread(s), interleaved)",
            ["work", "tapeflow", "pytorch", "ratio"], rows))
save("rnn" if "--threads" not in ARGS else f"rnn_{THREADS}thread", results)
