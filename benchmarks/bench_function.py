"""tf.function benchmarks: the seeds' linear regression compiled vs eager, and the cost of a call.

Measured in this process beside TensorFlow's ``tf.function``, JAX's ``jit`` and PyTorch (each where
installed), the frameworks taking turns, so the ratios are meaningful on a noisy machine.

* linreg: the guide's 300-step linear regression (2000 points, lr 0.01), ms per run and µs per step:
  the train step eager, and under ``@tf.function`` traced once beforehand (as TensorFlow's and JAX's
  are), with and without the C executor (``kernel_executor``); TensorFlow eager, ``tf.function`` and
  ``tf.function(jit_compile=True)``; JAX: the step under ``jax.jit``; PyTorch: eager autograd.  The
  compiled run must end at the eager run's weights (checked before timing).  The first call of a fresh
  compiled step (trace, passes, plan) is reported apart.
* call overhead: µs per call of a compiled function that does no work (``tf.function(lambda x: x)``)
  and of one with one tiny op (``x + 1`` on a scalar): what calling a graph costs over the Python
  call itself (the aim is under 10 µs).
"""
from __future__ import annotations

import time

import numpy as np
import tapeflow as tf
from _common import optional, save, table

torch = optional("torch")
tensorflow = optional("tensorflow")
jax = optional("jax")
if torch is not None:
    torch.set_num_threads(1)

STEPS, LR = 300, 0.01
results: dict = {}


def interleaved(fns: dict, number: int, repeat: int = 7) -> dict:
    """CPU seconds per call (this process) of each function: the best of ``repeat`` rounds, the functions
    taking turns within each round (CPU time: other work on a shared machine does not count)."""
    for f in fns.values():
        f()
        f()
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.process_time()
            for _ in range(number):
                f()
            best[k] = min(best[k], (time.process_time() - t0) / number)
    return best


# -- the guide's linear regression -----------------------------------------------------
rng = np.random.default_rng(0)
xs_np = rng.standard_normal(2000).astype(np.float32)
ys_np = (xs_np * 3 + 2 + rng.standard_normal(2000).astype(np.float32)).astype(np.float32)


def tapeflow_linreg(compiled: bool, executor: bool = True):
    xs, ys = tf.constant(xs_np), tf.constant(ys_np)
    W, B = tf.Variable(5.0), tf.Variable(10.0)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * LR)
        B.assign_sub(dB * LR)
        return loss

    if compiled:  # traced (and planned) once, outside the timed runs
        tf.config.optimizer.set_experimental_options({"kernel_executor": executor})
        step = tf.function(step)
        step.get_concrete_function(xs, ys)
        tf.config.optimizer.set_experimental_options({"kernel_executor": True})

    def run():
        W.assign(5.0)
        B.assign(10.0)
        for _ in range(STEPS):
            loss = step(xs, ys)
        return float(loss), float(W.numpy()), float(B.numpy())
    return run


def tapeflow_first_call_ms() -> float:
    """A fresh compiled step's first call: trace, graph passes, plan, one run."""
    xs, ys = tf.constant(xs_np), tf.constant(ys_np)
    W, B = tf.Variable(5.0), tf.Variable(10.0)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * LR)
        B.assign_sub(dB * LR)
        return loss

    t0 = time.process_time()
    step(xs, ys)
    return (time.process_time() - t0) * 1e3


def tf_linreg(compiled: bool, jit: bool = False):
    T = tensorflow
    xs, ys = T.constant(xs_np), T.constant(ys_np)
    W, B = T.Variable(5.0), T.Variable(10.0)

    def step(x, y):
        with T.GradientTape() as tape:
            loss = T.reduce_mean(T.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * LR)
        B.assign_sub(dB * LR)
        return loss

    if compiled:
        step = T.function(step, jit_compile=jit or None)

    def run():
        W.assign(5.0)
        B.assign(10.0)
        for _ in range(STEPS):
            loss = step(xs, ys)
        return float(loss)
    return run


def jax_linreg():
    jnp = jax.numpy
    xs, ys = jnp.asarray(xs_np), jnp.asarray(ys_np)

    def loss_fn(p, x, y):
        return jnp.mean(jnp.square(x * p[0] + p[1] - y))

    @jax.jit
    def step(p, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return (p[0] - LR * g[0], p[1] - LR * g[1]), loss

    def run():
        p = (jnp.float32(5.0), jnp.float32(10.0))
        for _ in range(STEPS):
            p, loss = step(p, xs, ys)
        return float(loss)
    return run


def torch_linreg():
    xs, ys = torch.tensor(xs_np), torch.tensor(ys_np)

    def run():
        W = torch.tensor(5.0, requires_grad=True)
        B = torch.tensor(10.0, requires_grad=True)
        for _ in range(STEPS):
            loss = torch.mean(torch.square(xs * W + B - ys))
            dW, dB = torch.autograd.grad(loss, [W, B])
            with torch.no_grad():
                W -= dW * LR
                B -= dB * LR
        return float(loss.detach())
    return run


eager_run, compiled_run = tapeflow_linreg(False), tapeflow_linreg(True)
want, got = eager_run(), compiled_run()
assert np.allclose(got, want, rtol=1e-5, atol=1e-6), f"compiled linreg ends at {got}, eager at {want}"
lin = {"tapeflow eager": eager_run, "tapeflow tf.function": compiled_run,
       "tapeflow tf.function, executor off": tapeflow_linreg(True, executor=False)}
if tensorflow is not None:
    lin["tensorflow eager"] = tf_linreg(False)
    lin["tensorflow tf.function"] = tf_linreg(True)
    lin["tensorflow tf.function(jit_compile=True)"] = tf_linreg(True, jit=True)
if jax is not None:
    lin["jax jit"] = jax_linreg()
if torch is not None:
    lin["pytorch eager"] = torch_linreg()
lin_ms = {k: v * 1e3 for k, v in interleaved(lin, 1, repeat=7).items()}
ref = lin_ms["tapeflow tf.function"]
print(table(f"Seeds' linear regression, {STEPS} steps on 2000 points (CPU ms per run; ratio = other / tapeflow "
            "tf.function, >1 means the compiled tapeflow step is faster)", ["framework", "ms", "µs/step", "ratio"],
            [[k, f"{v:.1f}", f"{v / STEPS * 1e3:.1f}", f"{v / ref:.2f}x"] for k, v in lin_ms.items()]))
first = sorted(tapeflow_first_call_ms() for _ in range(3))[1]
print(f"a fresh compiled step's first call (trace, passes, plan, run): {first:.1f} ms (median of 3)")
results["linreg_300_steps_ms"] = lin_ms
results["linreg_us_per_step"] = {k: v / STEPS * 1e3 for k, v in lin_ms.items()}
results["linreg_first_compiled_call_ms"] = first

# -- the cost of a call ---------------------------------------------------------------
x_tf = tf.constant(1.5)
calls = {"tapeflow identity": (tf.function(lambda x: x), x_tf),
         "tapeflow one add": (tf.function(lambda x: x + 1.0), x_tf),
         "tapeflow eager add (no function)": (lambda x: x + 1.0, x_tf)}
if tensorflow is not None:
    x_t = tensorflow.constant(1.5)
    calls["tensorflow identity"] = (tensorflow.function(lambda x: x), x_t)
    calls["tensorflow one add"] = (tensorflow.function(lambda x: x + 1.0), x_t)
if jax is not None:
    x_j = jax.numpy.float32(1.5)
    calls["jax jit identity"] = (jax.jit(lambda x: x), x_j)
    calls["jax jit one add"] = (jax.jit(lambda x: x + 1.0), x_j)
call_fns = {k: (lambda f=f, a=a: f(a)) for k, (f, a) in calls.items()}
call_us = {k: v * 1e6 for k, v in interleaved(call_fns, 2000).items()}
print(table("Calling a compiled function with no work, CPU µs per call (aim for tapeflow: < 10 µs; ratio = other / "
            "tapeflow's same function)", ["function", "µs/call", "ratio"],
            [[k, f"{v:.2f}", f"{v / call_us['tapeflow ' + ('identity' if 'identity' in k else 'one add')]:.2f}x"]
             for k, v in call_us.items()]))
results["call_overhead_us"] = call_us
save("function", results)
