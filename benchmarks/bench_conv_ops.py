"""The seeds' CNN step op by op (batch 32): tapeflow beside PyTorch in one process, taking turns (A/B/A/B).

Each op: the median and the minimum of R rounds of N calls.  ``CPU=1`` times the calling thread's CPU
time (``time.thread_time``) instead of wall time: with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``
the steadiest per-op cost on a shared machine.  PyTorch runs its native NCHW layout.

usage: [CPU=1] [OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1] [R=21] [N=5] python benchmarks/bench_conv_ops.py [filter...]
"""
import os
import statistics
import sys
import time

import numpy as np
import tapeflow as tf
from _common import optional
from tapeflow.core.ops import math_ops as M
from tapeflow.core.ops.array_ops import broadcast_to

torch = optional("torch")
if torch is None:
    print("bench_conv_ops: PyTorch is not installed (it is the reference here); skipped")
    sys.exit(0)
F = torch.nn.functional
T = int(os.environ.get("OMP_NUM_THREADS", "2"))
torch.set_num_threads(T)
CLK = time.thread_time if os.environ.get("CPU") else time.perf_counter
R = int(os.environ.get("R", "21"))
N = int(os.environ.get("N", "5"))
rng = np.random.default_rng(0)


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


x1, w1 = f32(32, 28, 28, 1), f32(3, 3, 1, 16) * .1
x2, w2 = f32(32, 26, 26, 16), f32(3, 3, 16, 16) * .1
dy1, dy2 = f32(32, 26, 26, 16), f32(32, 24, 24, 16)
b, lg, lab = f32(16), f32(32, 10), rng.integers(0, 10, 32)
C = tf.constant


def nchw(a):
    return torch.tensor(a.transpose(0, 3, 1, 2).copy())


def oihw(a):
    return torch.tensor(a.transpose(3, 2, 0, 1).copy())


tx1, tw1, tx2, tw2, tdy1, tdy2 = C(x1), C(w1), C(x2), C(w2), C(dy1), C(dy2)
px1, pw1, px2, pw2, pdy1, pdy2 = nchw(x1), oihw(w1), nchw(x2), oihw(w2), nchw(dy1), nchw(dy2)
tb, pb = C(b), torch.tensor(b)
tmp = tf.nn.max_pool2d(tx2, 2, 2, "VALID")
tpg = tf.ones(tmp.shape)
ppm = F.max_pool2d(px2, 2, 2, return_indices=True)
ppg = torch.ones_like(ppm[0])
tr, pr = tf.nn.relu(tx2), torch.relu(px2)
tmean, pmean = tf.reduce_mean(tdy2, axis=[1, 2]), pdy2.mean((2, 3))
tlg, tlab, plg, plab = C(lg), C(lab), torch.tensor(lg, requires_grad=True), torch.tensor(lab)
cb = torch.ops.aten.convolution_backward
ops = [
 ("conv2d fwd 32x28x28x1->16 3x3", lambda: tf.nn.conv2d(tx1, tw1, 1, "VALID"), lambda: F.conv2d(px1, pw1)),
 ("conv2d fwd 32x26x26x16->16 3x3", lambda: tf.nn.conv2d(tx2, tw2, 1, "VALID"), lambda: F.conv2d(px2, pw2)),
 ("conv2d bp filter (layer 1)", lambda: tf.nn.conv2d_backprop_filter(tx1, tw1.shape, tdy1, 1, "VALID"),
     lambda: cb(pdy1, px1, pw1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False])),
 ("conv2d bp filter (layer 2)", lambda: tf.nn.conv2d_backprop_filter(tx2, tw2.shape, tdy2, 1, "VALID"),
     lambda: cb(pdy2, px2, pw2, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False])),
 ("conv2d bp input (layer 2)", lambda: tf.nn.conv2d_backprop_input(tx2.shape, tw2, tdy2, 1, "VALID"),
     lambda: cb(pdy2, px2, pw2, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, False, False])),
 ("relu 32x26x26x16", lambda: tf.nn.relu(tx2), lambda: torch.relu(px2)),
 ("relu grad", lambda: M.relu_grad(tdy1, tr), lambda: torch.ops.aten.threshold_backward(pdy1, pr, 0)),
 ("bias add", lambda: tf.add(tx2, tb), lambda: px2 + pb.view(1, -1, 1, 1)),
 ("bias add grad (sum 0,1,2)", lambda: tf.reduce_sum(tdy1, axis=[0, 1, 2]), lambda: pdy1.sum((0, 2, 3))),
 ("max pool 2x2", lambda: tf.nn.max_pool2d(tx2, 2, 2, "VALID"), lambda: F.max_pool2d(px2, 2, 2)),
 ("max pool grad", lambda: tf.max_pool_grad(tx2, tmp, tpg, 2, 2, "VALID"),
     lambda: torch.ops.aten.max_pool2d_with_indices_backward(ppg, px2, [2, 2], [2, 2], [0, 0], [1, 1], False, ppm[1])),
 ("avg pool 2x2", lambda: tf.nn.avg_pool2d(tx2, 2, 2, "VALID"), lambda: F.avg_pool2d(px2, 2, 2)),
 ("avg pool grad", lambda: tf.avg_pool_grad(tx2.shape, tpg, 2, 2, "VALID"),
     lambda: torch.ops.aten.avg_pool2d_backward(ppg, px2, [2, 2], [2, 2], [0, 0], False, True, None)),
 ("mean over H,W 32x24x24x16", lambda: tf.reduce_mean(tdy2, axis=[1, 2]), lambda: pdy2.mean((2, 3))),
 ("mean grad (broadcast)", lambda: broadcast_to(tf.reshape(tmean * (1 / 576), [32, 1, 1, 16]), [32, 24, 24, 16]),
     lambda: (pmean / 576).view(32, 16, 1, 1).expand(32, 16, 24, 24).contiguous()),
 ("sparse softmax xent 32x10", lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tlab, logits=tlg),
     lambda: F.cross_entropy(plg.detach(), plab, reduction="none")),
]


def _cnn_steps():
    """bench_train.py's seeds' CNN step (Keras layers, SGD) in both frameworks."""
    xc, yc = f32(32, 28, 28, 1), rng.integers(0, 10, 32)
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Conv2D(16, 3, activation="relu", input_shape=(28, 28, 1)),
                                 L.Conv2D(16, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(10)])
    loss_fn, opt = tf.losses.SparseCategoricalCrossentropy(from_logits=True), tf.optimizers.SGD(0.01)
    x, y = tf.constant(xc), tf.constant(yc)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tv = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, tv), tv))
    nn = torch.nn
    pm = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.Conv2d(16, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                       nn.Flatten(), nn.Linear(16, 10))
    popt = torch.optim.SGD(pm.parameters(), lr=0.01)
    px, py = nchw(xc), torch.tensor(yc)

    def pstep():
        popt.zero_grad()
        F.cross_entropy(pm(px), py).backward()
        popt.step()
    return step, pstep


ops.append(("seeds' CNN train step, b32", *_cnn_steps()))
sel = sys.argv[1:]
print(f"threads={T} rounds={R} calls/round={N}")
print(f"{'op':34s} {'tapeflow us':>12s} {'torch us':>10s} {'ratio':>6s}   (min tf/torch)")
for name, a, bfn in ops:
    if sel and not any(s in name for s in sel):
        continue
    for _ in range(3):
        a()
        bfn()
    ta, tb_ = [], []
    for _ in range(R):
        t0 = CLK()
        for _ in range(N):
            a()
        ta.append((CLK() - t0) / N)
        t0 = CLK()
        for _ in range(N):
            bfn()
        tb_.append((CLK() - t0) / N)
    ma, mb = statistics.median(ta), statistics.median(tb_)
    print(f"{name:34s} {ma*1e6:12.1f} {mb*1e6:10.1f} {ma/mb:6.2f}   ({min(ta)*1e6:.1f}/{min(tb_)*1e6:.1f})", flush=True)
