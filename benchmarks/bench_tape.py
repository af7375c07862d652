"""Tape benchmarks: recorded-op overhead (forward + backward) and the seeds' linear regression.

Measured in this process beside PyTorch autograd and TensorFlow's GradientTape (when
installed), so the ratios are meaningful on a noisy machine.

* chain: a 100-op scalar chain ``y = y * c + ...`` recorded on a tape and played
  back; the figure is µs per recorded op, forward and backward together.
* no tape: the same chain without any tape (what recording adds is the difference).
* linreg: the guide's 300-step linear regression (2000 points, lr 0.01), ms per run.
* optimizer steps: one ``apply_gradients`` over the MLP's parameters (784-256-256-10), µs per step,
  beside ``torch.optim``'s ``step()`` (tapeflow runs one fused kernel per variable, in place).
"""
from __future__ import annotations

import time

import numpy as np
import tapeflow as tf
from _common import optional, save, table

torch = optional("torch")
tensorflow = optional("tensorflow")
if torch is not None:
    torch.set_num_threads(1)

N_OPS = 100
results: dict = {}


def interleaved(fns: dict, number: int, repeat: int = 9) -> dict:
    """CPU seconds per call (this process, all its threads) for each function: the best of ``repeat``
    rounds, the frameworks taking turns within each round.  CPU time rather than wall time, so other
    work on a shared machine does not count; single-threaded at these sizes, it equals wall time on an
    idle machine."""
    for f in fns.values():
        f()
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            n = max(1, number // 5) if k.startswith("tensorflow") else number
            t0 = time.process_time()
            for _ in range(n):
                f()
            best[k] = min(best[k], (time.process_time() - t0) / n)
    return best


def us(s):
    return f"{s * 1e6:.2f}"


# -- chains ------------------------------------------------------------------------
# two 100-op scalar chains: multiply by a constant; and mul/add/sin/mul-by-x (x-dependent on both sides)
def tapeflow_step(chain):
    x = tf.constant(0.5)
    c = tf.constant(1.001)

    def run():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = chain(x, c)
        return tape.gradient(y, x)

    def fwd():
        return chain(x, c)

    return run, fwd


def torch_step(chain):
    x = torch.tensor(0.5, requires_grad=True)
    c = torch.tensor(1.001)

    def run():
        y = chain(x, c)
        (g,) = torch.autograd.grad(y, x)
        return g

    def fwd():
        with torch.no_grad():
            return chain(x, c)

    return run, fwd


def tf_step(chain):
    x = tensorflow.constant(0.5)
    c = tensorflow.constant(1.001)

    def run():
        with tensorflow.GradientTape() as tape:
            tape.watch(x)
            y = chain(x, c)
        return tape.gradient(y, x)

    def fwd():
        return chain(x, c)

    return run, fwd


def mul_chain(x, c):
    y = x
    for _ in range(N_OPS):
        y = y * c
    return y


def make_mixed(sin):
    def mixed_chain(x, c):
        y = x
        for _ in range(N_OPS // 4):
            y = y * c
            y = y + c
            y = sin(y)
            y = y * x
        return y
    return mixed_chain


frameworks = {"tapeflow": (tapeflow_step, tf.sin)}
if torch is not None:
    frameworks["pytorch"] = (torch_step, torch.sin)
if tensorflow is not None:
    frameworks["tensorflow"] = (tf_step, tensorflow.sin)

rows = []
chain_res: dict = {}
for cname in ("mul by const", "mixed mul/add/sin/mul"):
    fns = {}
    for fname, (step, sin) in frameworks.items():
        chain = mul_chain if cname == "mul by const" else make_mixed(sin)
        run, fwd = step(chain)
        fns[fname + " recorded"] = run
        fns[fname + " no tape"] = fwd
    t = interleaved(fns, 100)
    for fname in frameworks:
        chain_res.setdefault(cname, {})[fname] = {"recorded_us": t[fname + " recorded"] / N_OPS * 1e6,
                                                  "no_tape_us": t[fname + " no tape"] / N_OPS * 1e6}
    base = chain_res[cname]["tapeflow"]["recorded_us"]
    for fname, r in chain_res[cname].items():
        rows.append([cname, fname, f"{r['no_tape_us']:.2f}", f"{r['recorded_us']:.2f}",
                     f"{r['recorded_us'] / base:.2f}x"])
print(table(f"{N_OPS}-op scalar chain, CPU µs per op (recorded = forward on a tape + backward; ratio = other / tapeflow, "
            ">1 means tapeflow is faster)", ["chain", "framework", "no tape", "recorded", "ratio"], rows))
results["chain_us_per_op"] = chain_res

# -- the guide's linear regression -----------------------------------------------------
rng = np.random.default_rng(0)
xs_np = rng.standard_normal(2000).astype(np.float32)
ys_np = (xs_np * 3 + 2 + rng.standard_normal(2000).astype(np.float32)).astype(np.float32)


def tapeflow_linreg():
    xs, ys = tf.constant(xs_np), tf.constant(ys_np)
    W, B = tf.Variable(5.0), tf.Variable(10.0)
    for _ in range(300):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(xs * W + B - ys))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * 0.01)
        B.assign_sub(dB * 0.01)
    return float(loss)


def torch_linreg():
    xs, ys = torch.tensor(xs_np), torch.tensor(ys_np)
    W = torch.tensor(5.0, requires_grad=True)
    B = torch.tensor(10.0, requires_grad=True)
    for _ in range(300):
        loss = torch.mean(torch.square(xs * W + B - ys))
        dW, dB = torch.autograd.grad(loss, [W, B])
        with torch.no_grad():
            W -= dW * 0.01
            B -= dB * 0.01
    return float(loss)


def tf_linreg():
    xs, ys = tensorflow.constant(xs_np), tensorflow.constant(ys_np)
    W, B = tensorflow.Variable(5.0), tensorflow.Variable(10.0)
    for _ in range(300):
        with tensorflow.GradientTape() as tape:
            loss = tensorflow.reduce_mean(tensorflow.square(xs * W + B - ys))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * 0.01)
        B.assign_sub(dB * 0.01)
    return float(loss)


lin = {"tapeflow": tapeflow_linreg}
if torch is not None:
    lin["pytorch"] = torch_linreg
if tensorflow is not None:
    lin["tensorflow"] = tf_linreg
lin_ms = {k: v * 1e3 for k, v in interleaved(lin, 1, repeat=5).items()}
print(table("Seeds' linear regression, 300 steps on 2000 points (CPU ms per run; ratio = other / tapeflow)",
            ["framework", "ms", "ratio"], [[k, f"{v:.1f}", f"{v / lin_ms['tapeflow']:.2f}x"] for k, v in lin_ms.items()]))
results["linreg_300_steps_ms"] = lin_ms

# -- optimizer steps over an MLP's parameters --------------------------------------------
SHAPES = [(784, 256), (256,), (256, 256), (256,), (256, 10), (10,)]
w_np = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
g_np = [rng.standard_normal(s).astype(np.float32) * 1e-3 for s in SHAPES]
OPTS = {"SGD": ({}, {}), "SGD momentum": ({"momentum": 0.9}, {"momentum": 0.9}), "Adam": ({}, {}),
        "RMSprop": ({}, {}), "Adagrad": ({}, {})}


def tapeflow_opt(name, kw):
    cls = tf.optimizers.SGD if name.startswith("SGD") else getattr(tf.optimizers, name)
    vs, gs, opt = [tf.Variable(w) for w in w_np], [tf.constant(g) for g in g_np], cls(1e-3, **kw)
    return lambda: opt.apply_gradients(zip(gs, vs))


def torch_opt(name, kw):
    cls = torch.optim.SGD if name.startswith("SGD") else getattr(torch.optim, name)
    ps = [torch.tensor(w, requires_grad=True) for w in w_np]
    for p, g in zip(ps, g_np):
        p.grad = torch.tensor(g)
    return cls(ps, 1e-3, **kw).step


opt_rows, opt_us = [], {}
for name, (kw, tkw) in OPTS.items():
    fns = {"tapeflow": tapeflow_opt(name, kw)}
    if torch is not None:
        fns["pytorch"] = torch_opt(name, tkw)
    t = {k: v * 1e6 for k, v in interleaved(fns, 50, repeat=5).items()}
    opt_us[name] = t
    opt_rows += [[name, k, f"{v:.0f}", f"{v / t['tapeflow']:.2f}x"] for k, v in t.items()]
print(table("Optimizer step over the MLP's parameters (CPU µs per step; ratio = other / tapeflow)",
            ["optimizer", "framework", "µs", "ratio"], opt_rows))
results["optimizer_step_us"] = opt_us
save("tape", results)
