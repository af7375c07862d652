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

Then, for the issues' reports (issue 15: "the same workloads on opencl:0 compiled vs
eager"; issue 16 item 5: the small-op cost on pocl), eager vs compiled
(``tf.function``, traced beforehand) on each device, and on OpenCL devices eager
again with the tiny-op host path off (``set_host_ops(0)``: every op enqueued, as
before that path existed), the configurations taking turns within each round
(medians of the rounds, wall time, since the device's threads do the work):

* small add (2 elements, µs per op), 2x2 matmul (µs per op), the seeds' linear
  regression (300 steps on 2000 points, ms per run), the MLP step above (ms);
* PyTorch CPU's small add and 2x2 matmul in the same rounds, where installed;
* with ``--phases`` (or alone: ``--phases-only``): where a small add's time goes on
  each OpenCL device, phase by phase (wall and this thread's CPU time per op).

Beside each round's wall time, the CPU time each group of threads spent in it (Linux's per-thread
clocks): the calling thread, our other threads (OpenMP, BLAS) and the threads the device drivers
started (pocl's workers), to tell whose threads ran when a CPU step is slow beside a loaded driver.

usage: python benchmarks/bench_backends.py [--quick] [--phases | --phases-only]
"""
from __future__ import annotations

import itertools
import os
import statistics
import sys
import threading
import time

import numpy as np
import tapeflow as tf
import tapeflow.kernels as K
from _common import optional, save, table

QUICK = "--quick" in sys.argv
PHASES = "--phases" in sys.argv or "--phases-only" in sys.argv
REPEAT = 3 if QUICK else 7
rng = np.random.default_rng(0)


#: the thread ids each device driver started when its backend was made (pocl's workers), by backend kind
DRIVER_THREADS: dict = {}


def _tids() -> set:
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:   # not Linux: no per-thread accounting
        return set()


def _thread_cpu(tid) -> float:
    """CPU seconds thread ``tid`` of this process has run (Linux's per-thread CPU clock; 0 elsewhere)."""
    try:
        return time.clock_gettime(((~int(tid)) << 3) | 6)   # MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
    except (OSError, OverflowError, AttributeError):   # the thread ended, or no such clock here
        return 0.0


def _cpu_by_group() -> dict:
    """CPU seconds so far of this process's threads: the caller's, the drivers' (DRIVER_THREADS) and the rest."""
    me = str(threading.get_native_id())
    drivers = set().union(*DRIVER_THREADS.values()) if DRIVER_THREADS else set()
    out = {"caller": 0.0, "ours": 0.0, "driver": 0.0}
    for t in _tids():
        out["caller" if t == me else "driver" if t in drivers else "ours"] += _thread_cpu(t)
    return out


def devices() -> list:
    found = ["cpu:0"]
    for kind in ("opencl", "cuda"):
        before = _tids()
        try:
            K.get_backend(kind)
        except Exception as e:  # noqa: BLE001 - not registered, no driver, no device
            print(f"{kind}: not measured ({str(e).splitlines()[0]})")
            continue
        DRIVER_THREADS[kind] = _tids() - before
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


# ---- eager vs compiled per device (issue 15's opencl row, issue 16 item 5) ----------------------

STEPS, LR = 300, 0.01
_XS = rng.standard_normal(2000).astype(np.float32)
_YS = (_XS * 3 + 2 + rng.standard_normal(2000).astype(np.float32)).astype(np.float32)


def linreg(compiled):
    """The seeds' linear regression: 300 SGD steps of y = W x + B on 2000 points; returns run()."""
    xs, ys = tf.constant(_XS), tf.constant(_YS)
    W, B = tf.Variable(5.0), tf.Variable(10.0)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * LR)
        B.assign_sub(dB * LR)
        return loss

    if compiled:
        step = tf.function(step)
        step.get_concrete_function(xs, ys)

    def run():
        W.assign(5.0)
        B.assign(10.0)
        for _ in range(STEPS):
            loss = step(xs, ys)
        return loss
    return run


def mode_workloads(compiled):
    """(name, unit, ops per timed call, make) of the eager-vs-compiled table; make() builds on the current
    device and returns a function whose result is read back to end a timed call."""
    def wrap(f, *args):
        g = tf.function(f) if compiled else f
        if compiled:
            g.get_concrete_function(*args)
        return lambda: g(*args)

    def small_add_fn():
        a = tf.constant([1.0, 2.0])
        return wrap(lambda x: x + x, a)

    def small_mm_fn():
        m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        return wrap(lambda x: tf.matmul(x, x), m)

    def mlp_fn():
        global rng
        rng = np.random.default_rng(1)   # the same weights and data in every column
        step, _ = mlp_step()
        return tf.function(step) if compiled else step

    return [("add, 2 elements", "us", 500, small_add_fn), ("matmul 2x2", "us", 500, small_mm_fn),
            ("linreg, 300 steps", "ms", 1, lambda: linreg(compiled)), ("MLP train step", "ms", 1, mlp_fn)]


def _rounds(fns: dict, number: dict, rounds: int, cpu: dict | None = None) -> dict:
    """Seconds per call of each function: the median of ``rounds`` rounds, the functions taking turns.  With
    ``cpu`` (a dict), ``cpu[k]`` gets the CPU seconds per call of each thread group (``_cpu_by_group``) in the
    round of median wall time."""
    for f in fns.values():
        sync(f())
    got = {k: [] for k in fns}
    spent = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            n = number[k]
            time.sleep(0.05)   # the previous one's spinning threads (OpenMP, BLAS, the driver's) go to sleep
            c0 = _cpu_by_group() if cpu is not None else None
            t0 = time.perf_counter()
            for _ in range(n):
                out = f()
            sync(out)
            got[k].append((time.perf_counter() - t0) / n)
            if c0 is not None:
                c1 = _cpu_by_group()
                spent[k].append({g: (c1[g] - c0[g]) / n for g in c0})
    if cpu is not None:
        for k, v in got.items():
            cpu[k] = spent[k][v.index(sorted(v)[len(v) // 2])]
    return {k: statistics.median(v) for k, v in got.items()}


def eager_vs_compiled(devs):
    torch = optional("torch")
    rounds = 3 if QUICK else 9
    configs = []   # (column, device, compiled, host ops)
    for dev in devs:
        configs += [(f"{dev} eager", dev, False, None), (f"{dev} compiled", dev, True, None)]
        if dev.startswith("opencl"):
            configs.append((f"{dev} eager, host ops off", dev, False, 0))
    rows, results, crows = [], {}, []
    for i, (name, unit, number, _) in enumerate(mode_workloads(False)):
        fns, nums = {}, {}
        for col, dev, compiled, host in configs:
            with tf.device(dev):
                fn = mode_workloads(compiled)[i][3]()
            if host is not None:   # the device's host path off while this function runs
                be = K.get_backend(dev.split(":")[0])

                def fn(f=fn, be=be, host=host):
                    before = be.set_host_ops(host)
                    try:
                        return f()
                    finally:
                        be.set_host_ops(before)
            fns[col], nums[col] = fn, number
        if torch is not None and i < 2:
            torch.set_num_threads(1)
            t = torch.tensor([1.0, 2.0]) if i == 0 else torch.tensor([[1.0, 2.0], [3.0, 4.0]])
            fns["pytorch cpu eager"] = (lambda t=t: t + t) if i == 0 else (lambda t=t: t @ t)
            nums["pytorch cpu eager"] = number
        spent: dict = {}
        got = _rounds(fns, nums, rounds, spent)
        results[name] = got
        results.setdefault("cpu_by_thread_group", {})[name] = spent
        scale = 1e6 if unit == "us" else 1e3
        rows.append([f"{name} ({unit})"] + [f"{got[c] * scale:.1f}" if c in got else "-" for c in
                                             [c[0] for c in configs] + ["pytorch cpu eager"]])
        crows.append([f"{name} ({unit})"] + ["/".join(f"{spent[c][g] * scale:.1f}" for g in ("caller", "ours",
                                                                                                "driver"))
                                             if c in spent else "-" for c in [c[0] for c in configs]])
        print(f"  {name}: " + ", ".join(f"{k} {v * scale:.1f}" for k, v in got.items()), flush=True)
    header = ["workload"] + [c[0] for c in configs] + ["pytorch cpu eager"]
    print(table(f"Eager vs compiled (tf.function) per device: medians of {rounds} interleaved rounds, wall time",
                header, rows))
    print(table("CPU time per call in the round of median wall time, by thread: the caller / our other threads "
                "(OpenMP, BLAS) / the device drivers' threads (pocl's workers), same units", header[:-1], crows))
    return results


def phases(dev):
    """Where a 2-element add's time goes on an OpenCL device: per op, wall and this thread's CPU (µs)."""
    be = K.get_backend(dev.split(":")[0])
    ffi, cl = be.ffi, be.cl
    before = be.set_host_ops(0)
    with tf.device(dev):
        a_dev = tf.constant([1.0, 2.0])   # made with host ops off: no host mirror, its ops run on the device
    be.set_host_ops(before)
    n = 1000 if QUICK else 3000
    k, _ = be._entry("binary_add_f32")
    outs = [be._buffer(8) for _ in range(2)]
    gs, ls = ffi.new("size_t[1]", [256]), ffi.new("size_t[1]", [256])
    hbuf = np.empty(2, np.float32)

    def op_loop(a=None):
        with tf.device(dev):
            if a is None:
                a = tf.constant([1.0, 2.0])   # from host data: mirrored, so a + a runs on the host
            for _ in range(n):
                a + a

    def dispatch_only():   # tapeflow's Python from the op to the launch, the enqueue stubbed out
        be._launch = lambda *args: None
        try:
            op_loop(a_dev)
        finally:
            del be._launch

    def pool():
        for _ in range(n):
            be._buffer(8)

    def raw(f):
        """A loop of raw driver calls on the add kernel, its arguments first set by a real 2-element launch (the
        kernel keeps the last launch's: a large n would write past the 8-byte outputs); the launcher's record of
        the arguments set is dropped after, since the loop changes them behind its back."""
        def run():
            be._last_args.pop(k, None)
            assert be.binary_flat(K.BINARY_CODES["add"], K.DTYPE_CODES["float32"], a_dev._h, 0, a_dev._h, 0,
                                  outs[0], 2) == 0
            try:
                f()
            finally:
                be._last_args.pop(k, None)
        return run

    @raw
    def set_arg():
        for i in range(n):
            cl.clSetKernelArg(k, 2, 8, outs[i & 1].arg)

    @raw
    def enqueue():
        for _ in range(n):
            cl.clEnqueueNDRangeKernel(be._queue, k, 1, ffi.NULL, gs, ls, 0, ffi.NULL, ffi.NULL)

    @raw
    def enqueue_finish():
        for _ in range(n):
            cl.clEnqueueNDRangeKernel(be._queue, k, 1, ffi.NULL, gs, ls, 0, ffi.NULL, ffi.NULL)
            cl.clFinish(be._queue)

    def read():
        for _ in range(n):
            be._read(outs[0].mem, hbuf)

    def device_op():
        op_loop(a_dev)

    with tf.device("cpu:0"):
        c = tf.constant([1.0, 2.0])

    def cpu_op():
        with tf.device("cpu:0"):
            for _ in range(n):
                c + c

    steps = [("tapeflow dispatch to the driver (enqueue stubbed)", dispatch_only),
             ("buffer from the pool + back", pool), ("clSetKernelArg (the output; the rest cached)", set_arg),
             ("clEnqueueNDRangeKernel", enqueue),
             ("  (clEnqueueNDRangeKernel + clFinish each: not done)", enqueue_finish),
             ("blocking 8-byte read (clEnqueueReadBuffer)", read),
             ("a + a on the device, whole op", device_op), ("a + a, tiny-op host path, whole op", op_loop),
             ("a + a on cpu:0, whole op", cpu_op)]
    got = {name: ([], []) for name, _ in steps}
    for _ in range(3 if QUICK else 7):
        for name, f in steps:
            be.synchronize()
            t0, c0 = time.perf_counter(), time.thread_time()
            f()
            be.synchronize()   # queued work counts
            got[name][0].append((time.perf_counter() - t0) / n * 1e6)
            got[name][1].append((time.thread_time() - c0) / n * 1e6)
    rows = [[name, f"{statistics.median(w):.1f}", f"{statistics.median(t):.1f}"] for name, (w, t) in got.items()]
    print(table(f"Where a 2-element add's time goes on {dev} ({be.hardware}): µs per op, medians; 'this thread' "
                "is the caller's CPU time (the rest of the wall time is the driver's threads and waiting)",
                ["phase", "wall", "this thread"], rows))
    return {name: {"wall_us": statistics.median(w), "thread_us": statistics.median(t)}
            for name, (w, t) in got.items()}


def main():
    devs = devices()
    if "--phases-only" in sys.argv:
        for dev in devs:
            if dev.startswith("opencl"):
                phases(dev)
        return
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
    results["eager_vs_compiled"] = eager_vs_compiled(devs)
    if PHASES:
        results["small_add_phases"] = {dev: phases(dev) for dev in devs if dev.startswith("opencl")}
    save("backends", results)


if __name__ == "__main__":
    main()
