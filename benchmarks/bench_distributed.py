"""tapeflow.distribute's collectives against raw mpi4py, and MLP/CNN training steps on 1, 2 and 3 processes.

* All-reduce: the same buffers summed over the workers by raw ``mpi4py`` (``comm.Allreduce`` on NumPy
  arrays: in place, and send->recv) and by the strategy's gradient path (tapeflow tensors in, tapeflow
  tensors out).  Two shapes of one total size: one tensor (sent from its own memory, received into the
  result's: compare with raw send->recv) and 64 equal tensors fused into one bucket (one copy in, reduced in
  place, results are views of the bucket: compare with raw in-place).  The rounds alternate raw and
  tapeflow calls; medians.  On a shared 2-core machine MPI's own time swings several-fold from call to call,
  so the table also gives **tapeflow's own time**: what the strategy's path spends outside the MPI call
  (packing, unpacking, wrapping), measured around that call in the same run, as a share of raw MPI's time.
* MLP 64-512-512-10 (global batch 192) and a small CNN (two 3x3 convolutions, 28x28x1, global batch 64),
  SGD with ``strategy.run`` + ``optimizer.apply_gradients``: ms per step on 1, 2 and 3 processes (the
  global batch split over them); with 2 or more processes, with the gradients' all-reduce overlapped with
  the backward pass (256 KiB buckets) and all at once after it, alternating, medians.

This machine's cores bound the scaling: with 2 cores, 2 processes share them and 3 oversubscribe
them, so the step time cannot fall much (and the helper thread that overlaps the all-reduce competes for
the same cores); the figure that matters is the all-reduce overhead against raw MPI.

usage: python benchmarks/bench_distributed.py [--quick] [--procs 1,2,3]
"""
from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


class _TimedComm:
    """The strategy's communicator, timing the MPI calls it makes (to tell MPI's time from tapeflow's)."""

    def __init__(self, comm):
        self.comm, self.mpi_s = comm, 0.0

    def Allreduce(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self.comm.Allreduce(*args, **kwargs)
        finally:
            self.mpi_s += time.perf_counter() - t0


def _model(tf, kind):
    L = tf.keras.layers
    if kind == "mlp":
        return tf.keras.Sequential([L.Dense(512, activation="relu", input_shape=(64,)),
                                    L.Dense(512, activation="relu"), L.Dense(10)]), (64,), 192
    return tf.keras.Sequential([L.Conv2D(16, 3, activation="relu", input_shape=(28, 28, 1)), L.MaxPooling2D(),
                                L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(), L.Flatten(),
                                L.Dense(10)]), (28, 28, 1), 64


def worker(quick: bool):
    import numpy as np
    from mpi4py import MPI

    import tapeflow as tf
    from tapeflow.distribute import _collective

    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(bytes_per_pack=256 << 10,
                                                                               overlap_backward=True))
    raw = strategy._comm.comm
    n = raw.Get_size()
    out = {"procs": n, "allreduce": [], "steps": {}}
    rounds = 5 if quick else 11
    if n > 1:
        comm = _collective.MPIComm(raw)
        timed = _TimedComm(raw)
        comm.comm = timed
        for nbytes in ([1 << 16, 1 << 22] if quick else [1 << 12, 1 << 16, 1 << 20, 1 << 22, 1 << 24]):
            elems = nbytes // 4
            arr = np.ones(elems, np.float32)
            recv = np.empty_like(arr)
            one = [tf.ones([elems])]
            many = [tf.ones([elems // 64]) for _ in range(64)]
            number = max(2, min(100, (1 << 23) // nbytes))
            fns = {"raw_s": lambda: raw.Allreduce(MPI.IN_PLACE, arr, op=MPI.SUM),
                   "raw_send_recv_s": lambda: raw.Allreduce(arr, recv, op=MPI.SUM),
                   "one_tensor_s": lambda: comm.all_reduce(one, _collective.DEFAULT_BYTES_PER_PACK),
                   "64_tensors_s": lambda: comm.all_reduce(many, _collective.DEFAULT_BYTES_PER_PACK)}
            times = {k: [] for k in fns}
            own = {"one_tensor_s": [], "64_tensors_s": []}
            for f in fns.values():
                f()
            for _ in range(rounds):
                for k, f in fns.items():
                    raw.Barrier()
                    timed.mpi_s = 0.0
                    t0 = time.perf_counter()
                    for _ in range(number):
                        f()
                    t = (time.perf_counter() - t0) / number
                    # the slowest rank's figure counts (a collective ends when its last rank does)
                    times[k].append(max(raw.allgather(t)))
                    if k in own:
                        own[k].append(max(raw.allgather(t - timed.mpi_s / number)))
            row = {"bytes": nbytes, **{k: _median(v) for k, v in times.items()}}
            row.update({k.replace("_s", "_own_s"): _median(v) for k, v in own.items()})
            out["allreduce"].append(row)
    # training steps
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    for kind in ("mlp", "cnn"):
        tf.random.set_seed(0)
        with strategy.scope():
            model, shape, gb = _model(tf, kind)
            opt = tf.optimizers.SGD(0.01)
        rng = np.random.default_rng(0)
        x = rng.normal(size=(gb, *shape)).astype(np.float32)
        y = rng.integers(0, 10, gb)
        (xb, yb), = list(strategy.experimental_distribute_dataset([(x, y)]))
        xb, yb = tf.constant(xb), tf.constant(yb)

        def fn():
            with tf.GradientTape() as tape:
                loss = tf.distribute.compute_average_loss(loss_fn(yb, model(xb, training=True)), global_batch_size=gb)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

        reducer = strategy._overlap
        modes = ["overlap", "at_once"] if n > 1 else ["at_once"]
        times = {m: [] for m in modes}
        steps = 3 if quick else 5
        for _ in range(rounds):
            for m in modes:
                strategy._overlap = reducer if m == "overlap" else None
                strategy.run(fn)
                raw.Barrier()
                t0 = time.perf_counter()
                for _ in range(steps):
                    strategy.run(fn)
                times[m].append(max(raw.allgather((time.perf_counter() - t0) / steps)))
        strategy._overlap = reducer
        out["steps"][kind] = {m: _median(v) * 1e3 for m, v in times.items()}
    if raw.Get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)


def main(argv):
    quick = "--quick" in argv
    procs = [1, 2, 3]
    if "--procs" in argv:
        procs = [int(p) for p in argv[argv.index("--procs") + 1].split(",")]
    from _common import save, table

    from tapeflow.distribute.testing import run_mpi

    results = []
    for n in procs:
        # the cores are shared out: n processes of cores/n kernel threads each (no OpenMP oversubscription)
        threads = str(max(1, (os.cpu_count() or 1) // n))
        proc = run_mpi(os.path.abspath(__file__), n, ["--worker"] + (["--quick"] if quick else []), timeout=600,
                       env={"OMP_NUM_THREADS": threads})
        if proc.returncode != 0:
            raise SystemExit(f"mpiexec -n {n} failed:\n{proc.stdout}\n{proc.stderr}")
        line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
    rows = []
    for r in results:
        for a in r["allreduce"]:
            mb = a["bytes"] / 2 ** 20

            def bw(t):
                return f"{mb / t / 1024:.2f}"

            def pct(t, ref):
                return f"{(t / ref - 1) * 100:+.0f}%"

            rows.append([r["procs"], f"{a['bytes']:,}", bw(a["raw_s"]), bw(a["raw_send_recv_s"]),
                         bw(a["one_tensor_s"]), pct(a["one_tensor_s"], a["raw_send_recv_s"]),
                         f"{a['one_tensor_own_s'] / a['raw_send_recv_s'] * 100:.1f}%",
                         bw(a["64_tensors_s"]), pct(a["64_tensors_s"], a["raw_s"]),
                         f"{a['64_tensors_own_s'] / a['raw_s'] * 100:.1f}%"])
    print(table("All-reduce (sum of float32 buffers), GiB/s, medians: raw mpi4py vs tapeflow.distribute; 'own': "
                "tapeflow's time outside the MPI call as a share of raw MPI's (one tensor vs send->recv; 64 tensors, "
                "one bucket, vs in-place)",
                ["procs", "bytes", "raw in-place", "raw send->recv", "1 tensor", "vs send->recv", "own",
                 "64 tensors", "vs in-place", "own"], rows))
    for kind, title in (("mlp", "MLP 64-512-512-10 step, global batch 192"),
                        ("cnn", "CNN (conv 16, conv 32, dense 10 on 28x28x1) step, global batch 64")):
        base = next((r["steps"][kind]["at_once"] for r in results if r["procs"] == 1), None)
        srows = []
        for r in results:
            st = r["steps"][kind]
            ov = st.get("overlap")
            srows.append([r["procs"], f"{st['at_once']:.2f}", f"{st['at_once'] / base:.2f}x" if base else "-",
                          "-" if ov is None else f"{ov:.2f}", "-" if ov is None else f"{ov / st['at_once']:.2f}"])
        print(table(f"{title}, ms/step ({os.cpu_count()} cores on this machine; all-reduce all at once after the "
                    "backward pass, or overlapped with it in 256 KiB buckets)",
                    ["procs", "ms/step", "vs 1 process", "overlapped", "overlapped / at once"], srows))
    save("distributed", {"results": results})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker("--quick" in sys.argv)
    else:
        main(sys.argv[1:])
