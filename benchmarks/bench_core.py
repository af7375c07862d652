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
