"""Convolution benchmarks: conv2d forward + backward (input and filter gradients), and pooling.

Measured in this process beside PyTorch (``torch.nn.functional.conv2d`` with
autograd, its native NCHW layout) and TensorFlow (``tf.nn.conv2d`` under a
GradientTape, NHWC), when installed; every framework uses both cores.

* ``tapeflow ops``: the forward op and the two backprop ops called directly
  (what the tape runs);
* ``tapeflow tape``: the same through ``tf.GradientTape`` (``output_gradients``);
* ``fwd``: the forward convolution alone.

Shapes: the seeds' small CNN layers, batch 32: 28x28x1 -> 16 filters 3x3 and
28x28x16 -> 16 filters 3x3 (VALID, stride 1); then 2x2/2 max and average pooling
of 32x26x26x16, forward + backward.

usage: python benchmarks/bench_conv.py [--quick]
"""
from __future__ import annotations

import sys

import numpy as np
import tapeflow as tf
from _common import best_of, optional, save, table

torch = optional("torch")
tensorflow = optional("tensorflow")

QUICK = "--quick" in sys.argv
# the fastest of many single calls: on a shared machine the minimum is the least disturbed figure
NUMBER, REPEAT = (1, 20) if QUICK else (1, 150)
CONVS = [("32x28x28x1 -> 16 3x3", (32, 28, 28, 1), (3, 3, 1, 16)),
         ("32x28x28x16 -> 16 3x3", (32, 28, 28, 16), (3, 3, 16, 16))]
POOL_SHAPE = (32, 26, 26, 16)


def ms(s):
    return f"{s * 1e3:.3f}"


def tapeflow_conv(x, w, dy):
    x, w, dy = tf.constant(x), tf.constant(w), tf.constant(dy)

    def ops():
        tf.conv2d(x, w, 1, "VALID")
        tf.conv2d_backprop_input(x.shape, w, dy, 1, "VALID")
        tf.conv2d_backprop_filter(x, w.shape, dy, 1, "VALID")

    def tape():
        with tf.GradientTape() as t:
            t.watch(x)
            t.watch(w)
            y = tf.conv2d(x, w, 1, "VALID")
        return t.gradient(y, [x, w], output_gradients=dy)

    return {"fwd": lambda: tf.conv2d(x, w, 1, "VALID"), "tapeflow ops": ops, "tapeflow tape": tape}


def torch_conv(x, w, dy):
    xt = torch.tensor(x.transpose(0, 3, 1, 2).copy(), requires_grad=True)
    wt = torch.tensor(w.transpose(3, 2, 0, 1).copy(), requires_grad=True)
    dyt = torch.tensor(dy.transpose(0, 3, 1, 2).copy())
    F = torch.nn.functional

    def fwd():
        with torch.no_grad():
            return F.conv2d(xt, wt)

    def fb():
        y = F.conv2d(xt, wt)
        return torch.autograd.grad(y, [xt, wt], dyt)

    return {"fwd": fwd, "fwd+bwd": fb}


def tensorflow_conv(x, w, dy):
    T = tensorflow
    xt, wt, dyt = T.constant(x), T.constant(w), T.constant(dy)

    def fb():
        with T.GradientTape() as t:
            t.watch(xt)
            t.watch(wt)
            y = T.nn.conv2d(xt, wt, 1, "VALID")
        return t.gradient(y, [xt, wt], output_gradients=dyt)

    return {"fwd": lambda: T.nn.conv2d(xt, wt, 1, "VALID"), "fwd+bwd": fb}


def tapeflow_pool(kind, x):
    xt = tf.constant(x)
    if kind == "max":
        def run():
            y = tf.max_pool2d(xt, 2, 2, "VALID")
            return tf.max_pool_grad(xt, y, tf.ones(y.shape), 2, 2, "VALID")
    else:
        def run():
            y = tf.avg_pool2d(xt, 2, 2, "VALID")
            return tf.avg_pool_grad(xt.shape, tf.ones(y.shape), 2, 2, "VALID")
    return run


def torch_pool(kind, x):
    xx = torch.tensor(x.transpose(0, 3, 1, 2).copy(), requires_grad=True)
    pool = torch.nn.functional.max_pool2d if kind == "max" else torch.nn.functional.avg_pool2d

    def run():
        out = pool(xx, 2, 2)
        return torch.autograd.grad(out, xx, torch.ones_like(out))
    return run


def tensorflow_pool(kind, x):
    T = tensorflow
    xt = T.constant(x)
    pool = T.nn.max_pool2d if kind == "max" else T.nn.avg_pool2d

    def run():
        with T.GradientTape() as t:
            t.watch(xt)
            out = pool(xt, 2, 2, "VALID")
        return t.gradient(out, xt)
    return run


def check_agreement(x, w, dy):
    """The frameworks compute the same numbers (so the timings compare like with like)."""
    xt, wt, dyt = tf.constant(x), tf.constant(w), tf.constant(dy)
    ours = [tf.conv2d(xt, wt, 1, "VALID").numpy(), tf.conv2d_backprop_input(xt.shape, wt, dyt, 1, "VALID").numpy(),
            tf.conv2d_backprop_filter(xt, wt.shape, dyt, 1, "VALID").numpy()]
    if torch is not None:
        xx = torch.tensor(x.transpose(0, 3, 1, 2).copy(), requires_grad=True)
        ww = torch.tensor(w.transpose(3, 2, 0, 1).copy(), requires_grad=True)
        y = torch.nn.functional.conv2d(xx, ww)
        gx, gw = torch.autograd.grad(y, [xx, ww], torch.tensor(dy.transpose(0, 3, 1, 2).copy()))
        theirs = [y.detach().numpy().transpose(0, 2, 3, 1), gx.numpy().transpose(0, 2, 3, 1),
                  gw.numpy().transpose(2, 3, 1, 0)]
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)


def main():
    rng = np.random.default_rng(0)
    results: dict = {"conv": {}, "pool": {}}
    rows = []
    for label, xs, ws in CONVS:
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32) * 0.1
        dy = rng.standard_normal((xs[0], xs[1] - 2, xs[2] - 2, ws[3])).astype(np.float32)
        check_agreement(x, w, dy)
        timings = {}
        for name, fn in tapeflow_conv(x, w, dy).items():
            timings[name] = best_of(fn, NUMBER, REPEAT)
        if torch is not None:
            for name, fn in torch_conv(x, w, dy).items():
                timings[f"pytorch {name}"] = best_of(fn, NUMBER, REPEAT)
        if tensorflow is not None:
            for name, fn in tensorflow_conv(x, w, dy).items():
                timings[f"tensorflow {name}"] = best_of(fn, NUMBER, REPEAT)
        results["conv"][label] = {k: v * 1e3 for k, v in timings.items()}
        base_fb, base_f = timings["tapeflow tape"], timings["fwd"]
        rows.append([label, "tapeflow", ms(timings["fwd"]), ms(timings["tapeflow ops"]), ms(timings["tapeflow tape"]),
                     "1.00x"])
        for fw in ("pytorch", "tensorflow"):
            if f"{fw} fwd" in timings:
                rows.append([label, fw, ms(timings[f"{fw} fwd"]), "", ms(timings[f"{fw} fwd+bwd"]),
                             f"{timings[f'{fw} fwd+bwd'] / base_fb:.2f}x"])
        _ = base_f
    print(table("conv2d, float32, ms per call (ratio: framework fwd+bwd / tapeflow tape fwd+bwd; > 1 means "
                "tapeflow is faster)", ["shape", "framework", "fwd", "fwd+bwd ops", "fwd+bwd", "ratio"], rows))

    x = rng.standard_normal(POOL_SHAPE).astype(np.float32)
    prow = []
    for kind in ("max", "avg"):
        timings = {"tapeflow": best_of(tapeflow_pool(kind, x), NUMBER, REPEAT)}
        if torch is not None:
            timings["pytorch"] = best_of(torch_pool(kind, x), NUMBER, REPEAT)
        if tensorflow is not None:
            timings["tensorflow"] = best_of(tensorflow_pool(kind, x), NUMBER, REPEAT)
        results["pool"][kind] = {k: v * 1e3 for k, v in timings.items()}
        for fw, t in timings.items():
            prow.append([f"{kind} 2x2/2 of {'x'.join(map(str, POOL_SHAPE))}", fw, ms(t),
                         f"{t / timings['tapeflow']:.2f}x"])
    print(table("pooling forward + backward, float32, ms (ratio vs tapeflow; > 1 means tapeflow is faster)",
                ["op", "framework", "ms", "ratio"], prow))
    save("conv", results)


if __name__ == "__main__":
    main()
