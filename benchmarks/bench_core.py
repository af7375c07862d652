"""Core benchmarks: small-op dispatch, 1024x1024 matmul, a 4M-element elementwise op, import time.

Each figure is measured in this process beside NumPy (and PyTorch, TensorFlow, JAX when
installed), so ratios are meaningful on a noisy machine.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from _common import best_of, optional, save, table

import tapeflow as tf

# load tapeflow's kernel library (and its OpenMP runtime) before the other frameworks,
# whose bundled runtimes would otherwise be the ones our kernels bind to
tf.exp(tf.constant([0.0]))
torch = optional("torch")
tensorflow = optional("tensorflow")
jax = optional("jax")

results = {}


def us(s):
    return f"{s * 1e6:.2f}"


# -- small-op dispatch -------------------------------------------------------------
rows = []
a_np, m_np = np.array([1.0, 2.0], np.float32), np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
N = 20000
cands = {"tapeflow": (tf.constant(a_np), tf.constant(m_np), tf.add, tf.matmul),
         "numpy": (a_np, m_np, np.add, np.matmul)}
if torch is not None:
    torch.set_num_threads(2)
    cands["pytorch"] = (torch.tensor(a_np), torch.tensor(m_np), torch.add, torch.matmul)
if tensorflow is not None:
    cands["tensorflow"] = (tensorflow.constant(a_np), tensorflow.constant(m_np), tensorflow.add, tensorflow.matmul)
if jax is not None:
    jnp = jax.numpy
    cands["jax"] = (jnp.asarray(a_np), jnp.asarray(m_np), lambda x, y: jnp.add(x, y).block_until_ready(),
                    lambda x, y: jnp.matmul(x, y).block_until_ready())
small = {}
for name, (a, m, add, mm) in cands.items():
    t_add = best_of(lambda: add(a, a), N)
    t_mm = best_of(lambda: mm(m, m), N)
    small[name] = (t_add, t_mm)
# the same two ops with core's C fast path off (TAPEFLOW_C_FASTPATH=0): the Python hot path alone
from tapeflow.core.ops import _ew  # noqa: E402

if _ew.use_c_fast_path(True):   # the kernels have it: time the Python path beside it
    _ew.use_c_fast_path(False)
    a, m = cands["tapeflow"][:2]
    small["tapeflow, Python path"] = (best_of(lambda: tf.add(a, a), N), best_of(lambda: tf.matmul(m, m), N))
    _ew.use_c_fast_path(True)
tp_add, tp_mm = small["tapeflow"]
for name, (t_add, t_mm) in small.items():
    rows.append([name, us(t_add), f"{t_add / tp_add:.2f}x", us(t_mm), f"{t_mm / tp_mm:.2f}x"])
print(table("Small-op dispatch (µs per op; ratio = other / tapeflow, >1 means tapeflow is faster)",
            ["framework", "add 2-elem", "ratio", "matmul 2x2", "ratio"], rows))
results["small_ops_us"] = {k: {"add": v[0] * 1e6, "matmul": v[1] * 1e6} for k, v in small.items()}

# -- 1024 matmul -------------------------------------------------------------------
n = 1024
x_np = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
flop = 2 * n ** 3
mm = {"tapeflow": (lambda x=tf.constant(x_np): tf.matmul(x, x)), "numpy": (lambda: x_np @ x_np)}
if torch is not None:
    xt = torch.tensor(x_np)
    mm["pytorch"] = lambda: xt @ xt
if tensorflow is not None:
    xtf = tensorflow.constant(x_np)
    mm["tensorflow"] = lambda: tensorflow.matmul(xtf, xtf).numpy()
gf = {k: flop / best_of(f, 5) / 1e9 for k, f in mm.items()}
print(table("1024x1024 float32 matmul (GFLOP/s; ratio = tapeflow / other)", ["framework", "GFLOP/s", "ratio"],
            [[k, f"{v:.1f}", f"{gf['tapeflow'] / v:.2f}x"] for k, v in gf.items()]))
results["matmul_gflops"] = gf

# -- 4M-element elementwise --------------------------------------------------------------
size = 4 * 2 ** 20
e_np = np.random.default_rng(1).uniform(-3, 3, size).astype(np.float32)
e_tf = tf.constant(e_np)
ew = {}
for opname, tfo, npo, tho in (("exp", tf.exp, np.exp, "exp"), ("tanh", tf.tanh, np.tanh, "tanh"),
                              ("add", lambda x: x + x, lambda x: x + x, None)):
    row = {"tapeflow": best_of(lambda: tfo(e_tf), 10), "numpy": best_of(lambda: npo(e_np), 10)}
    if torch is not None:
        et = torch.tensor(e_np)
        row["pytorch"] = best_of((lambda: getattr(torch, tho)(et)) if tho else (lambda: et + et), 10)
    ew[opname] = row
rows = []
for opname, row in ew.items():
    nbytes = size * 4 * (3 if opname == "add" else 2)
    for k, t in row.items():
        rows.append([opname, k, f"{nbytes / t / 1e9:.1f}", f"{t * 1e3:.2f}", f"{row['numpy'] / row['tapeflow']:.2f}x"
                     if k == "tapeflow" else ""])
print(table("4M-element float32 elementwise (GB/s moved; tapeflow speedup over NumPy)",
            ["op", "framework", "GB/s", "ms", "vs numpy"], rows))
results["elementwise_4M_s"] = ew

# -- the CNN/LSTM steps' mid-size kernels (issue 16): one 295k-element activation, its gradients, the LSTM's splits ----
def _interleaved(f_a, f_b, rounds=31, calls=20):
    """Median seconds per call of f_a and f_b, timed in alternating rounds (A/B/A/B) in this process."""
    import statistics
    import time

    for _ in range(3):
        f_a(), f_b()
    ta, tb = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            f_a()
        ta.append((time.perf_counter() - t0) / calls)
        t0 = time.perf_counter()
        for _ in range(calls):
            f_b()
        tb.append((time.perf_counter() - t0) / calls)
    return statistics.median(ta), statistics.median(tb)


if torch is not None:
    from tapeflow.core.ops.array_ops import broadcast_to

    F = torch.nn.functional
    rng = np.random.default_rng(2)
    act = rng.standard_normal((32, 24, 24, 16)).astype(np.float32)
    a26 = rng.standard_normal((32, 26, 26, 16)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    h_np = rng.standard_normal((32, 1024)).astype(np.float32)
    seq = rng.standard_normal((28, 32, 128)).astype(np.float32)
    X, B, H, S, X26 = tf.constant(act), tf.constant(bias), tf.constant(h_np), tf.constant(seq), tf.constant(a26)
    T, TB, TH, TS = torch.from_numpy(act), torch.from_numpy(bias), torch.from_numpy(h_np), torch.from_numpy(seq)
    TC = T.permute(0, 3, 1, 2).contiguous()   # PyTorch's layout for the same pooling
    P26 = torch.from_numpy(a26.transpose(0, 3, 1, 2).copy())
    pooled = tf.nn.max_pool2d(X26, 2, 2, "VALID")
    pool_g, (p_out, p_idx) = tf.ones(pooled.shape), F.max_pool2d(P26, 2, 2, return_indices=True)
    p_g = torch.ones_like(p_out)
    g_mean, p_mean = tf.reduce_mean(X, axis=[1, 2]), TC.mean((2, 3))
    per_op = [("relu", lambda: tf.nn.relu(X), lambda: torch.relu(T)),
              ("bias add [32,24,24,16]+[16]", lambda: X + B, lambda: T + TB),
              ("global average pool", lambda: tf.reduce_mean(X, axis=[1, 2]), lambda: TC.mean(dim=(2, 3))),
              ("mean of all", lambda: tf.reduce_mean(X), lambda: T.mean()),
              ("sigmoid", lambda: tf.sigmoid(X), lambda: torch.sigmoid(T)),
              ("tanh", lambda: tf.tanh(X), lambda: torch.tanh(T)),
              ("bias grad: sum over 0,1,2", lambda: tf.reduce_sum(X, axis=[0, 1, 2]), lambda: T.sum((0, 1, 2))),
              ("mean grad: broadcast to [32,24,24,16]",
               lambda: broadcast_to(tf.reshape(g_mean, [32, 1, 1, 16]), [32, 24, 24, 16]),
               lambda: p_mean.view(32, 16, 1, 1).expand(32, 16, 24, 24).contiguous()),
              ("max pool grad 2x2/2 [32,26,26,16]", lambda: tf.max_pool_grad(X26, pooled, pool_g, 2, 2, "VALID"),
               lambda: torch.ops.aten.max_pool2d_with_indices_backward(p_g, P26, [2, 2], [2, 2], [0, 0], [1, 1],
                                                                       False, p_idx)),
              ("split [32,1024] in 4 (axis 1)", lambda: tf.split(H, 4, axis=1), lambda: TH.chunk(4, 1)),
              ("split [28,32,128] in 4 (axis 0)", lambda: tf.split(S, 4), lambda: TS.chunk(4, 0)),
              ("unstack [28,32,128] (axis 0)", lambda: tf.unstack(S), lambda: TS.unbind(0))]
    rows, mid = [], {}
    for opname, f_tp, f_pt in per_op:
        t_tp, t_pt = _interleaved(f_tp, f_pt)
        mid[opname] = {"tapeflow": t_tp * 1e6, "pytorch": t_pt * 1e6}
        rows.append([opname, us(t_tp), us(t_pt), f"{t_tp / t_pt:.2f}x"])
    print(table("Mid-size kernels of the CNN/LSTM steps (µs, medians of interleaved rounds; ratio = tapeflow / "
                "PyTorch, <1 means tapeflow is faster; PyTorch's splits are views, ours too along the first axis; "
                "PyTorch's max-pool gradient reads saved indices, ours recomputes them)",
                ["op", "tapeflow", "pytorch", "ratio"], rows))
    results["mid_size_ops_us"] = mid


# -- the seeds' matmul benchmark: x = x @ x from normal / 64, through float32 subnormals -------
def seeds_matmul(fw, steps=200, first=None):
    """Seconds for the seeds' benchmark in a fresh process; ``first``: a module imported before the framework
    (issue 16: importing PyTorch first must not change tapeflow's speed, though both load an OpenMP runtime)."""
    code = f"""
import os, sys, time
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
{f"import {first}" if first else ""}
import numpy as np
x0 = (np.random.default_rng(0).standard_normal((1000, 1000)) / 64).astype(np.float32)
if {fw!r} == "tapeflow":
    import tapeflow as m
    mm, const, host = m.matmul, m.constant, lambda t: t.numpy()
elif {fw!r} == "tensorflow":
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as m
    mm, const, host = m.matmul, m.constant, lambda t: t.numpy()
else:
    import torch as m
    mm, const, host = m.matmul, m.from_numpy, lambda t: t.numpy()
x = const(x0)
mm(x, x)
t0 = time.perf_counter()
for _ in range({steps}):
    x = mm(x, x)
    _ = host(x)
print(time.perf_counter() - t0)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(out.stdout.split()[-1]) if out.returncode == 0 else None


seeds = {fw: seeds_matmul(fw) for fw, mod in (("tapeflow", tf), ("tensorflow", tensorflow), ("pytorch", torch))
         if mod is not None}
if torch is not None:
    seeds["tapeflow, torch imported first"] = seeds_matmul("tapeflow", first="torch")
seeds = {k: v for k, v in seeds.items() if v is not None}
print(table("The seeds' 1000x1000 matmul benchmark, 200 steps from normal / 64 (s; each in its own process)",
            ["framework", "seconds", "ratio to tapeflow"],
            [[k, f"{v:.2f}", f"{v / seeds['tapeflow']:.2f}x"] for k, v in seeds.items()]))
results["seeds_matmul_s"] = seeds

# -- import time --------------------------------------------------------------------------
def import_time(mod):
    code = f"import time; t=time.perf_counter(); import {mod}; print(time.perf_counter()-t)"
    best = float("inf")
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if r.returncode:
            return None
        best = min(best, float(r.stdout.strip().splitlines()[-1]))
    return best


imports = {m: import_time(m) for m in ("tapeflow", "numpy", "torch", "tensorflow")}
print(table("Import time (s, best of 3 fresh interpreters)", ["module", "seconds"],
            [[k, f"{v:.3f}" if v is not None else "not installed"] for k, v in imports.items()]))
results["import_s"] = imports
save("core", results)
