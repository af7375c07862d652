"""tapeflow.distribute's collectives against raw mpi4py, and an MLP training step on 1, 2 and 3 processes.

* All-reduce bandwidth: the same buffers summed over the workers by raw ``mpi4py`` (``comm.Allreduce`` on a
  NumPy array, in place) and by the strategy's gradient path (tapeflow tensors in, tapeflow tensors out:
  bucketing, zero-copy for one large host tensor, the result wrapped as tensors).  Two shapes of the same
  total size: one tensor, and 64 equal tensors fused into buckets.  Bandwidth is the algorithm's
  (bytes of the buffer per second); the overhead column is what tapeflow adds over raw MPI.
* MLP 64-256-256-10, global batch 192, SGD with ``strategy.run`` + ``optimizer.apply_gradients``:
  ms per step on 1, 2 and 3 processes (the global batch split over them).

This machine's cores bound the scaling: with 2 cores, 2 processes share them and 3 oversubscribe
them, so the step time cannot fall much; the figure that matters is the all-reduce overhead against
raw MPI (target: within 10% for large buffers).

usage: python benchmarks/bench_distributed.py [--quick] [--procs 1,2,3]
"""
from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _median_best(fn, number, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def worker(quick: bool):
    import numpy as np
    from mpi4py import MPI

    import tapeflow as tf
    from tapeflow.distribute import _collective

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    comm = strategy._comm
    raw = comm.comm
    n = comm.size
    out = {"procs": n, "allreduce": [], "mlp_ms": None}
    repeat = 3 if quick else 5
    if n > 1:
        for nbytes in ([1 << 16, 1 << 22] if quick else [1 << 12, 1 << 16, 1 << 20, 1 << 22, 1 << 24]):
            elems = nbytes // 4
            arr = np.ones(elems, np.float32)
            number = max(3, min(200, (1 << 24) // nbytes))

            recv = np.empty_like(arr)

            def raw_allreduce():
                raw.Allreduce(MPI.IN_PLACE, arr, op=MPI.SUM)

            def raw_send_recv():
                raw.Allreduce(arr, recv, op=MPI.SUM)

            one = [tf.ones([elems])]
            many = [tf.ones([elems // 64]) for _ in range(64)]
            raw.Barrier()
            t_raw = _median_best(raw_allreduce, number, repeat)
            raw.Barrier()
            t_sr = _median_best(raw_send_recv, number, repeat)
            raw.Barrier()
            t_one = _median_best(lambda: comm.all_reduce(one, _collective.DEFAULT_BYTES_PER_PACK), number, repeat)
            raw.Barrier()
            t_many = _median_best(lambda: comm.all_reduce(many, _collective.DEFAULT_BYTES_PER_PACK), number, repeat)
            # every rank's figures, the slowest counts (a collective ends when its last rank does)
            t_raw, t_sr, t_one, t_many = (max(raw.allgather(t)) for t in (t_raw, t_sr, t_one, t_many))
            out["allreduce"].append({"bytes": nbytes, "raw_s": t_raw, "raw_send_recv_s": t_sr, "one_tensor_s": t_one,
                                     "64_tensors_s": t_many})
    # the MLP step
    tf.random.set_seed(0)
    gb = 192
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(256, activation="relu", input_shape=(64,)),
                                     tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(10)])
        opt = tf.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(gb, 64)).astype(np.float32)
    y = rng.integers(0, 10, gb)
    (xb, yb), = list(strategy.experimental_distribute_dataset([(x, y)]))
    xb, yb = tf.constant(xb), tf.constant(yb)

    def step():
        def fn():
            with tf.GradientTape() as tape:
                loss = tf.distribute.compute_average_loss(loss_fn(yb, model(xb, training=True)), global_batch_size=gb)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        strategy.run(fn)

    raw.Barrier()
    out["mlp_ms"] = max(raw.allgather(_median_best(step, 10 if quick else 30, repeat))) * 1e3
    if comm.rank == 0:
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

            rows.append([r["procs"], f"{a['bytes']:,}", bw(a["raw_s"]), bw(a["raw_send_recv_s"]),
                         bw(a["one_tensor_s"]), f"{(a['one_tensor_s'] / a['raw_send_recv_s'] - 1) * 100:+.0f}%",
                         bw(a["64_tensors_s"]), f"{(a['64_tensors_s'] / a['raw_s'] - 1) * 100:+.0f}%"])
    print(table("All-reduce (sum of float32 buffers), GiB/s: raw mpi4py vs tapeflow.distribute (one tensor: sent "
                "from its buffer like raw send->recv; 64 tensors: one bucket reduced in place like raw in-place)",
                ["procs", "bytes", "raw in-place", "raw send->recv", "1 tensor", "vs send->recv", "64 tensors",
                 "vs in-place"], rows))
    base = next((r["mlp_ms"] for r in results if r["procs"] == 1), None)
    print(table(f"MLP 64-256-256-10 step, global batch 192 ({os.cpu_count()} cores on this machine)",
                ["procs", "ms/step", "vs 1 process"],
                [[r["procs"], f"{r['mlp_ms']:.2f}", f"{r['mlp_ms'] / base:.2f}x" if base else "-"] for r in results]))
    save("distributed", {"results": results})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker("--quick" in sys.argv)
    else:
        main(sys.argv[1:])
