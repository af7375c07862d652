"""Element-wise fusion: ``y = tanh(x*2+1)*sigmoid(x) - exp(-x*x)`` on 4M float32 (issue 15).

Unfused, the chain is 8 kernels, each reading and writing 16 MB; fused (tf.function's
``elementwise_fusion`` pass) it is one kernel that reads x once and writes y once.  Milliseconds per
call (best of 5), for NumPy eager, tapeflow eager, tapeflow compiled without and with fusion, and
PyTorch eager / torch.compile, TensorFlow eager / ``tf.function(jit_compile=True)`` (XLA) and JAX jit
where installed.  "x memory limit" is the time over the
memory floor of the fused kernel: one read and one write of 16 MB at the bandwidth of a plain copy
(NumPy's ``copyto`` of the same array, measured here).  The compiled results are checked equal
(bit for bit on the CPU) before timing.  The fused kernel runs as generated C (compiled at first use,
``fusion_codegen``, the default) and through the bytecode interpreter (``fusion_codegen`` off).  Then the
chain's pieces (tanh, sigmoid, exp, each with its neighbouring ops) compiled alone, beside ``jax.jit``.
"""
from __future__ import annotations

import numpy as np
import tapeflow as tf
from _common import best_of, optional, save, table

N = 4 * 1024 * 1024
rng = np.random.default_rng(0)
x_np = rng.standard_normal(N).astype(np.float32)


def chain(x):
    return tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x) - tf.exp(-x * x)


def np_chain(x):
    return np.tanh(x * 2 + 1) * (1 / (1 + np.exp(-x))) - np.exp(-x * x)


def compiled(fusion: bool):
    tf.config.optimizer.set_experimental_options({"elementwise_fusion": fusion})
    cf = tf.function(chain).get_concrete_function(tf.TensorSpec([N], tf.float32))
    tf.config.optimizer.set_experimental_options({"elementwise_fusion": True})
    return cf


x = tf.constant(x_np)
unfused, fused = compiled(False), compiled(True)
assert [st[6].prim.name for st in fused._plan.steps] == ["fused_elementwise"]
want = unfused(x).numpy()
assert fused(x).numpy().tobytes() == want.tobytes(), "fused result differs from the unfused graph"


def with_codegen(on: bool):
    def run():
        tf.config.optimizer.set_experimental_options({"fusion_codegen": on})
        return fused(x)
    return run


assert with_codegen(False)().numpy().tobytes() == want.tobytes(), "interpreted result differs from the unfused graph"
np.testing.assert_allclose(want, np_chain(x_np), rtol=1e-5, atol=1e-6)

out = np.empty_like(x_np)
fns = {
    "memory floor (numpy copy)": lambda: np.copyto(out, x_np),
    "numpy eager": lambda: np_chain(x_np),
    "tapeflow eager": lambda: chain(x),
    "tapeflow compiled, unfused": lambda: unfused(x),
    "tapeflow compiled, fused": with_codegen(True),
    "tapeflow compiled, fused, interpreted": with_codegen(False),
}
torch = optional("torch")
if torch is not None:
    xt = torch.from_numpy(x_np)

    def torch_chain(v):
        return torch.tanh(v * 2 + 1) * torch.sigmoid(v) - torch.exp(-v * v)

    fns["pytorch eager"] = lambda: torch_chain(xt)
    try:
        tc = torch.compile(torch_chain)
        tc(xt)
        fns["torch.compile"] = lambda: tc(xt)
    except Exception as e:  # noqa: BLE001 (any failure of the inductor toolchain: compare without it)
        print(f"torch.compile unavailable: {type(e).__name__}: {str(e)[:120]}")
tensorflow = optional("tensorflow")
if tensorflow is not None:
    T = tensorflow
    xtf = T.constant(x_np)

    def tf_chain(v):
        return T.tanh(v * 2 + 1) * T.sigmoid(v) - T.exp(-v * v)

    fns["tensorflow eager"] = lambda: tf_chain(xtf).numpy()
    xla = T.function(tf_chain, jit_compile=True)
    xla(xtf)
    fns["tensorflow tf.function(jit_compile=True)"] = lambda: xla(xtf).numpy()
jax = optional("jax")
if jax is not None:
    jnp = jax.numpy
    xj = jnp.asarray(x_np)
    jf = jax.jit(lambda v: jnp.tanh(v * 2 + 1) * jax.nn.sigmoid(v) - jnp.exp(-v * v))
    jf(xj).block_until_ready()
    fns["jax jit"] = lambda: jf(xj).block_until_ready()

times = {k: best_of(f, 3) for k, f in fns.items()}
tf.config.optimizer.set_experimental_options({"fusion_codegen": True})
floor = times["memory floor (numpy copy)"]
npt = times["numpy eager"]
rows = [[k, f"{t * 1e3:.2f}", f"{t / floor:.1f}", f"{npt / t:.2f}x"] for k, t in times.items()]
print(table(f"element-wise chain on {N} float32 (8 ops), ms per call", ["", "ms", "x memory limit", "vs NumPy"],
            rows))
print(f"fused vs unfused compiled: {times['tapeflow compiled, unfused'] / times['tapeflow compiled, fused']:.2f}x; "
      f"generated C vs interpreted: "
      f"{times['tapeflow compiled, fused, interpreted'] / times['tapeflow compiled, fused']:.2f}x")
for peer in ("jax jit", "torch.compile", "tensorflow tf.function(jit_compile=True)"):
    if peer in times:
        print(f"tapeflow compiled, fused vs {peer}: {times[peer] / times['tapeflow compiled, fused']:.2f}x "
              f"(> 1: tapeflow faster)")

# the chain's pieces alone, compiled, beside jax.jit (where the time goes: each is one fused kernel)
PIECES = {"tanh(x*2+1)": lambda v: tf.tanh(v * 2.0 + 1.0), "sigmoid(x)*2": lambda v: tf.sigmoid(v) * 2.0,
          "exp(-x*x)": lambda v: tf.exp(-v * v)}
pieces = {}
for name, fn in PIECES.items():
    cf = tf.function(fn).get_concrete_function(tf.TensorSpec([N], tf.float32))
    row = {"tapeflow": best_of(lambda cf=cf: cf(x), 3)}
    if jax is not None:
        jp = jax.jit({"tanh(x*2+1)": lambda v: jnp.tanh(v * 2 + 1), "sigmoid(x)*2": lambda v: jax.nn.sigmoid(v) * 2,
                      "exp(-x*x)": lambda v: jnp.exp(-v * v)}[name])
        jp(xj).block_until_ready()
        row["jax jit"] = best_of(lambda jp=jp: jp(xj).block_until_ready(), 3)
    pieces[name] = row
cols = ["tapeflow compiled"] + (["jax jit", "jax / tapeflow"] if jax is not None else [])
print(table(f"the chain's pieces on {N} float32, ms per call", [""] + cols,
            [[k, f"{r['tapeflow'] * 1e3:.2f}"] + ([f"{r['jax jit'] * 1e3:.2f}", f"{r['jax jit'] / r['tapeflow']:.2f}x"]
                                                  if jax is not None else []) for k, r in pieces.items()]))
save("fusion", {"n": N, "ms": {k: t * 1e3 for k, t in times.items()},
                "pieces_ms": {k: {c: t * 1e3 for c, t in r.items()} for k, r in pieces.items()}})
