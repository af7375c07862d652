"""The benchmarks' workloads on every backend present, side by side in one process.

Each workload runs on ``cpu:0`` and on each accelerator found (``opencl:0``,
``cuda:0``), with its inputs already on the device; a timed run ends by reading a
value back, so queued work is counted.  Ratios are device time / CPU time (>1 means
the CPU is faster).  On pocl (an OpenCL driver for the CPU) the ratios show what
the backend costs over calling our C kernels directly: the enqueue of each kernel
(small ops), and the kernels' code generation (large ops).

* small ops: add of 2-element vectors, 2x2 matmul (µs per op, 2000 ops then one read);
* 1024x1024 float32 matmul (GFLOP/s);
* 4M-element float32 exp, tanh, add and sum (ms);
* conv2d 32x28x28x16 -> 16 3x3 VALID, forward and forward + both gradients (ms);
* training steps: MLP 784-256-256-10 (batch 128, SGD) and the seeds' CNN
  (Conv 16 3x3, Conv 16 3x3, global average pool, Dense 10; batch 32) on a tape (ms);
* transfers: 16 MB host -> device and device -> host (GB/s).

usage: python benchmarks/bench_backends.py [--quick]
"""
from __future__ import annotations

import itertools
import sys
import time

import numpy as np
import tapeflow as tf
import tapeflow.kernels as K
from _common import save, table

QUICK = "--quick" in sys.argv
REPEAT = 3 if QUICK else 7
rng = np.random.default_rng(0)


def devices() -> list:
    found = ["cpu:0"]
    for kind in ("opencl", "cuda"):
        try:
            K.get_backend(kind)
        except Exception as e:  # noqa: BLE001 - not registered, no driver, no device
            print(f"{kind}: not measured ({str(e).splitlines()[0]})")
            continue
        found.append(f"{kind}:0")
    return found


def sync(out):
    """Read one value of the result back: the host waits for the queued work."""
    t = out[0] if isinstance(out, (list, tuple)) else out
    np.asarray(t.numpy()).reshape(-1)[:1].copy()


def timed(fn, number=1):
    """Seconds per call: the best of REPEAT rounds of `number` calls, each round ending with a read."""
    sync(fn())
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        for _ in range(number):
            out = fn()
        sync(out)
        best = min(best, (time.perf_counter() - t0) / number)
    return best


# ---- workloads: each builds its inputs on the current device and returns (fn, number) ----------

def small_add():
    a = tf.constant([1.0, 2.0])
    return (lambda: a + a), 2000


def small_matmul():
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return (lambda: tf.matmul(m, m)), 2000


def matmul_1024():
    x = tf.constant(rng.standard_normal((1024, 1024)).astype(np.float32))
    return (lambda: tf.matmul(x, x)), 1


_E = rng.uniform(-3, 3, 4 << 20).astype(np.float32)


def ew(op):
    def make():
        e = tf.constant(_E)
        return (lambda: op(e)), 5
    return make


def conv(backward):
    def make():
        x = tf.constant(rng.standard_normal((32, 28, 28, 16)).astype(np.float32))
        w = tf.constant(rng.standard_normal((3, 3, 16, 16)).astype(np.float32) * 0.1)
        if not backward:
            return (lambda: tf.nn.conv2d(x, w, 1, "VALID")), 1

        def step():
            with tf.GradientTape() as tape:
                tape.watch([x, w])
                y = tf.nn.conv2d(x, w, 1, "VALID")
                loss = tf.reduce_sum(y * y)
            return tape.gradient(loss, [x, w])
        return step, 1
    return make


def mlp_step():
    sizes = [784, 256, 256, 10]
    x = tf.constant(rng.standard_normal((128, 784)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, 128).astype(np.int64))
    params = []
    for a, b in itertools.pairwise(sizes):
        params += [tf.Variable((rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32)),
                   tf.Variable(tf.zeros([b]))]

    def step():
        with tf.GradientTape() as tape:
            h = x
            for i in range(0, len(params), 2):
                h = tf.matmul(h, params[i]) + params[i + 1]
                if i < len(params) - 2:
                    h = tf.nn.relu(h)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.01 * g)
        return loss
    return step, 1


def cnn_step():
    x = tf.constant(rng.standard_normal((32, 28, 28, 1)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, 32).astype(np.int64))
    params = [tf.Variable((rng.standard_normal((3, 3, 1, 16)) * 0.3).astype(np.float32)), tf.Variable(tf.zeros([16])),
              tf.Variable((rng.standard_normal((3, 3, 16, 16)) * 0.1).astype(np.float32)), tf.Variable(tf.zeros([16])),
              tf.Variable((rng.standard_normal((16, 10)) * 0.3).astype(np.float32)), tf.Variable(tf.zeros([10]))]

    def step():
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.conv2d(x, params[0], 1, "VALID") + params[1])
            h = tf.nn.relu(tf.nn.conv2d(h, params[2], 1, "VALID") + params[3])
            h = tf.reduce_mean(h, axis=[1, 2])
            logits = tf.matmul(h, params[4]) + params[5]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.01 * g)
        return loss
    return step, 1


WORKLOADS = [
    ("add, 2 elements", small_add, "us"),
    ("matmul 2x2", small_matmul, "us"),
    ("matmul 1024x1024 f32", matmul_1024, "gflops"),
    ("exp, 4M f32", ew(tf.exp), "ms"),
    ("tanh, 4M f32", ew(tf.tanh), "ms"),
    ("add, 4M f32", ew(lambda e: e + e), "ms"),
    ("reduce_sum, 4M f32", ew(tf.reduce_sum), "ms"),
    ("conv2d 32x28x28x16->16 fwd", conv(False), "ms"),
    ("conv2d fwd+bwd (tape)", conv(True), "ms"),
    ("MLP train step", mlp_step, "ms"),
    ("CNN train step", cnn_step, "ms"),
]


def transfers(dev):
    host = rng.standard_normal(4 << 20).astype(np.float32)
    with tf.device(dev):
        on = tf.constant(host)
    be = on._dev.backend
    best_in = best_out = float("inf")
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        _h, _ = be.from_numpy(host)
        be.synchronize()
        best_in = min(best_in, time.perf_counter() - t0)
        t0 = time.perf_counter()
        be.to_numpy(on._h, None, on._shape, np.float32)
        best_out = min(best_out, time.perf_counter() - t0)
    return host.nbytes / best_in / 1e9, host.nbytes / best_out / 1e9


def main():
    devs = devices()
    results = {"devices": devs, "workloads": {}}
    rows = []
    for name, make, unit in WORKLOADS:
        per = {}
        for dev in devs:
            with tf.device(dev):
                fn, number = make()
                per[dev] = timed(fn, number)
        results["workloads"][name] = per
        cpu = per["cpu:0"]
        row = [name]
        for dev in devs:
            s = per[dev]
            row.append(f"{2 * 1024 ** 3 / s / 1e9:.1f}" if unit == "gflops" else
                       f"{s * 1e6:.1f}" if unit == "us" else f"{s * 1e3:.2f}")
        row += [f"{per[d] / cpu:.2f}x" for d in devs[1:]]
        rows.append(row)
        print(f"  {name}: " + ", ".join(f"{d} {row[1 + i]}" for i, d in enumerate(devs)), flush=True)
    header = ["workload (unit)"] + devs + [f"{d} / cpu:0" for d in devs[1:]]
    for r, (name, _, unit) in zip(rows, WORKLOADS):
        r[0] = f"{name} ({'GFLOP/s' if unit == 'gflops' else unit})"
    print(table("The benchmarks' workloads per backend (time ratio = device / cpu:0, >1 means the CPU backend "
                "is faster; for GFLOP/s the ratio is still of times)", header, rows))
    trows = []
    for dev in devs[1:]:
        gin, gout = transfers(dev)
        trows.append([dev, f"{gin:.2f}", f"{gout:.2f}"])
        results.setdefault("transfer_gbps", {})[dev] = {"to_device": gin, "to_host": gout}
    if trows:
        print(table("16 MB transfers (GB/s)", ["device", "host -> device", "device -> host"], trows))
    save("backends", results)


if __name__ == "__main__":
    main()
