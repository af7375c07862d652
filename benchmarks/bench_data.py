"""Input-pipeline benchmark: one epoch of 60,000 x 784 float32 images (random data) with int32 labels.

The natural pipeline, written the same way in each framework:

    from_tensor_slices((x, y)).shuffle(10000).map(normalize).batch(128).prefetch(AUTOTUNE)

with ``normalize`` a per-example function ``(x - 0.5) / 0.25``.  Beside it: tf.data's hand-tuned
variant (batch first, then a vectorized parallel map), PyTorch's DataLoader over a TensorDataset
(and with the per-example map), and a NumPy permutation-gather floor.  Each figure is the best of
several epochs after a warm-up epoch, measured in this one process; ratios are other / tapeflow
(> 1 means tapeflow is faster).

Each framework runs with its own threading defaults, as its users get them (this benchmark used to force
``OMP_WAIT_POLICY=PASSIVE`` on all: with it every parallel kernel of a 128-row batch pays a futex wake-up,
about 50 µs on a busy 2-core machine, which doubled tapeflow's epoch; tapeflow's default lets its threads
spin briefly and then sleep).  Set ``OMP_WAIT_POLICY`` yourself to compare under one policy.
"""
from __future__ import annotations

import os
import time

import numpy as np
import tapeflow as tf
from _common import optional, save, table

torch = optional("torch")
tensorflow = optional("tensorflow")

N, D, BATCH, BUFFER = 60000, 784, 128, 10000
MEAN, STD = 0.5, 0.25
rng = np.random.default_rng(0)
X = rng.random((N, D), dtype=np.float32)
Y = rng.integers(0, 10, N).astype(np.int32)


def epoch_seconds(make_iter, epochs=5) -> float:
    """Best of ``epochs`` timed epochs after one warm-up epoch; checks every example is seen."""
    best = float("inf")
    for k in range(epochs + 1):
        t0 = time.perf_counter()
        seen = 0
        for xb, yb in make_iter():
            seen += len(yb)
        dt = time.perf_counter() - t0
        assert seen == N, seen
        if k:
            best = min(best, dt)
    return best


results = {}


def normalize(x, y):
    return (x - MEAN) / STD, y


# -- tapeflow -----------------------------------------------------------------------------
tp = tf.data.Dataset.from_tensor_slices((X, Y))
natural = tp.shuffle(BUFFER).map(normalize).batch(BATCH).prefetch(tf.data.AUTOTUNE)
results["tapeflow: natural pipeline"] = epoch_seconds(lambda: natural)
no_vec = tf.data.Options()
no_vec.experimental_optimization.map_vectorization = False
per_elem = tp.shuffle(BUFFER).map(normalize).batch(BATCH).prefetch(tf.data.AUTOTUNE).with_options(no_vec)
results["tapeflow: natural, map vectorization off"] = epoch_seconds(lambda: per_elem, epochs=1)
tuned = tp.shuffle(BUFFER).batch(BATCH).map(normalize, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
results["tapeflow: batch then map"] = epoch_seconds(lambda: tuned)

# -- tf.data ------------------------------------------------------------------------------
if tensorflow is not None:
    T = tensorflow
    tds = T.data.Dataset.from_tensor_slices((X, Y))
    t_nat = tds.shuffle(BUFFER).map(normalize).batch(BATCH).prefetch(T.data.AUTOTUNE)
    results["tf.data: natural pipeline"] = epoch_seconds(lambda: t_nat, epochs=2)
    t_tuned = tds.shuffle(BUFFER).batch(BATCH).map(normalize, num_parallel_calls=T.data.AUTOTUNE).prefetch(
        T.data.AUTOTUNE)
    results["tf.data: batch then map (hand-tuned)"] = epoch_seconds(lambda: t_tuned)

# -- PyTorch ------------------------------------------------------------------------------
if torch is not None:
    torch.set_num_threads(2)
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data import Dataset as TorchDataset

    xt, yt = torch.from_numpy(X.copy()), torch.from_numpy(Y.copy())
    loader = DataLoader(TensorDataset(xt, yt), batch_size=BATCH, shuffle=True)
    results["PyTorch DataLoader(TensorDataset)"] = epoch_seconds(lambda: loader)

    class Mapped(TorchDataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            return normalize(xt[i], yt[i])

    mapped = DataLoader(Mapped(), batch_size=BATCH, shuffle=True)
    results["PyTorch DataLoader, per-example map"] = epoch_seconds(lambda: mapped, epochs=2)

# -- NumPy floor ---------------------------------------------------------------------------
gen = np.random.default_rng(1)


def numpy_gather():
    perm = gen.permutation(N)
    for i in range(0, N, BATCH):
        idx = perm[i:i + BATCH]
        yield X[idx], Y[idx]


def numpy_gather_normalize():
    for xb, yb in numpy_gather():
        xb -= MEAN
        xb /= STD
        yield xb, yb


results["NumPy permutation-gather (floor)"] = epoch_seconds(numpy_gather)
results["NumPy permutation-gather + normalize"] = epoch_seconds(numpy_gather_normalize)

base = results["tapeflow: natural pipeline"]
rows = [[name, f"{s:.3f}", f"{s / base:.2f}x"] for name, s in results.items()]
print(table(f"Input pipeline: one epoch of {N} x {D} float32, batch {BATCH}, shuffle buffer {BUFFER} "
            f"(seconds per epoch; ratio = other / tapeflow natural, > 1 means tapeflow is faster; "
            f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')})",
            ["pipeline", "s/epoch", "ratio"], rows))
save("data", {"seconds_per_epoch": results, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")})
