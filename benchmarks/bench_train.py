"""Training-step benchmarks: an MLP, the seeds' small CNN and the seeds' LSTM cell, beside PyTorch and
TensorFlow (raw ops with a tape, and Keras), in one run.

* MLP 784-256-256-10 (ReLU), batch 128, sparse softmax cross-entropy, SGD: one step = forward,
  backward, update.  tapeflow twice: raw ops on a tape, and Keras-style layers.
* CNN: the seeds' Conv2D(16, 3)-Conv2D(16, 3)-GlobalAveragePooling2D-Dense(10) on 28x28x1, batch 32.
* LSTM cell: the seeds' ``lstm_cell`` (concat, matmul, split, sigmoid/tanh), batch 32, input 128,
  hidden 256: one forward step, and forward + backward; "fused": the same step as tf.keras.layers.LSTM runs it
  (two matmuls, then core's one-kernel ``lstm_cell``), beside torch.nn.LSTMCell.

Compiled rows (issue 15): "fit step (compiled)" is the train step ``model.fit`` runs, the model's ``train_step``
under ``tf.function`` (tapeflow: ``model._step_function("train_step")``, what fit calls per batch; TensorFlow: Keras's
``model.train_function`` after ``make_train_function()``), both with the compiled SGD and loss; the LSTM cell's
"tf.function" rows are the seeds' cell (forward, and forward + backward) under ``tf.function``.  TensorFlow runs
from the same interpreter when installed there, else from ``$BENCH_TENSORFLOW_PYTHON`` (another venv's python).

Targets (issue 5): MLP < 2 ms, CNN < 6 ms, LSTM cell < 0.25 ms per step.  Each framework runs in
its own worker process (one OpenMP runtime per process: importing PyTorch next to tapeflow makes
tapeflow's kernels run on PyTorch's bundled libgomp, many times slower), the workers take turns
(``--rounds``, default 3) so a busy machine slows them alike, and the best round counts.
Finally the tapeflow MLP step is profiled to show where its Python time goes.

``--threads 1`` runs every framework on one thread (OpenMP, OpenBLAS, MKL, PyTorch, TensorFlow):
the per-step cost without thread scheduling, steadier on a shared machine (timed in process CPU time).

usage: python benchmarks/bench_train.py [--quick] [--rounds N] [--threads N] [mlp] [cnn] [lstm] [profile]
"""
from __future__ import annotations

import cProfile
import json
import os
import pstats
import subprocess
import sys
import time

import numpy as np

from _common import optional, save, table

QUICK = "--quick" in sys.argv
ARGS = [a for a in sys.argv[1:]]
WORKER = ARGS[ARGS.index("--worker") + 1] if "--worker" in ARGS else None
ROUNDS = int(ARGS[ARGS.index("--rounds") + 1]) if "--rounds" in ARGS else 3
PARTS = {a for a in ARGS if a in ("mlp", "cnn", "lstm", "profile")} or {"mlp", "cnn", "lstm", "profile"}
THREADS = int(ARGS[ARGS.index("--threads") + 1]) if "--threads" in ARGS else (os.cpu_count() or 1)
if "--threads" in ARGS:  # before any runtime starts
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(THREADS)
rng = np.random.default_rng(0)
tf = torch = tensorflow = None
if WORKER == "tapeflow":
    import tapeflow as tf
elif WORKER == "pytorch":
    torch = optional("torch")
    if torch is not None:
        torch.set_num_threads(THREADS)
elif WORKER == "tensorflow":
    tensorflow = optional("tensorflow")
    if tensorflow is not None and "--threads" in ARGS:
        tensorflow.config.threading.set_intra_op_parallelism_threads(THREADS)
        tensorflow.config.threading.set_inter_op_parallelism_threads(THREADS)


def optional_installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def interleaved(fns: dict, number: int, repeat: int = 5) -> dict:
    """Seconds per call of each function: best of ``repeat`` rounds, the functions taking turns (with
    ``--threads 1``, the process's CPU time: what other work on a shared machine takes is not counted)."""
    clock = time.process_time if THREADS == 1 and "--threads" in ARGS else time.perf_counter
    for f in fns.values():
        for _ in range(3):
            f()
    best = {k: float("inf") for k in fns}
    for _ in range(2 if QUICK else repeat):
        for k, f in fns.items():
            n = max(2, number // 4) if k.startswith("tensorflow") else number
            t0 = clock()
            for _ in range(n):
                f()
            best[k] = min(best[k], (clock() - t0) / n)
    return best


def ms(s):
    return f"{s * 1e3:.3f}"


def report(title, times, target_ms, ref="tapeflow"):
    rows = []
    for k, t in times.items():
        rows.append([k, ms(t), f"{t / times[ref]:.2f}x"])
    target = f"; target < {target_ms} ms)" if target_ms != "-" else ")"
    print(table(f"{title} (ms per step, {THREADS} thread(s); ratio = other / {ref}, >1 means {ref} is "
                f"faster{target}", ["framework", "ms/step", "ratio"], rows))


# ==== MLP 784-256-256-10, batch 128 =========================================================
B, SIZES = 128, [784, 256, 256, 10]
x_np = rng.normal(size=(B, 784)).astype(np.float32)
y_np = rng.integers(0, 10, B).astype(np.int64)
w_np = [(rng.normal(size=(a, b)) * np.sqrt(2 / a)).astype(np.float32) for a, b in zip(SIZES, SIZES[1:])]
LR = 0.01


def tapeflow_raw_mlp():
    x, y = tf.constant(x_np), tf.constant(y_np)
    params = []
    for w in w_np:
        params += [tf.Variable(w), tf.Variable(tf.zeros([w.shape[1]]))]
    opt = tf.optimizers.SGD(LR)

    def step():
        with tf.GradientTape() as tape:
            h = x
            for i in range(0, len(params), 2):
                h = tf.matmul(h, params[i].read_value()) + params[i + 1].read_value()
                if i < len(params) - 2:
                    h = tf.nn.relu(h)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        grads = tape.gradient(loss, params)
        opt.apply_gradients(zip(grads, params))
    return step


def tapeflow_layers_mlp(optimizer="sgd"):
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                                 L.Dense(256, activation="relu"), L.Dense(10)])
    model.set_weights([a for w in w_np for a in (w, np.zeros(w.shape[1], np.float32))])
    loss_fn = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.optimizers.SGD(LR) if optimizer == "sgd" else tf.optimizers.Adam(1e-3)
    x, y = tf.constant(x_np), tf.constant(y_np)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tvars = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, tvars), tvars))
    return step


def tapeflow_fit_step(model, x_np_, y_np_):
    """The step ``model.fit`` runs per batch: the compiled ``train_step`` (SGD, sparse cross-entropy)."""
    model.compile(optimizer=tf.optimizers.SGD(LR), loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True))
    fn = model._step_function("train_step")
    data = (tf.constant(x_np_), tf.constant(y_np_))
    return lambda: fn(data)


def tapeflow_fit_mlp():
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Dense(256, activation="relu", input_shape=(784,)),
                                 L.Dense(256, activation="relu"), L.Dense(10)])
    model.set_weights([a for w in w_np for a in (w, np.zeros(w.shape[1], np.float32))])
    return tapeflow_fit_step(model, x_np, y_np)


def tf_fit_step(model, x_np_, y_np_):
    """Keras's compiled train function (``model.fit``'s step, a ``tf.function``) on one batch."""
    T, k = tensorflow, tensorflow.keras
    model.compile(optimizer=k.optimizers.SGD(LR), loss=k.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.make_train_function()
    fn = model.train_function
    data = (T.constant(x_np_), T.constant(y_np_))
    return lambda: fn(iter([data]))


def tf_fit_mlp():
    k = tensorflow.keras
    model = k.Sequential([k.Input((784,)), k.layers.Dense(256, activation="relu"),
                          k.layers.Dense(256, activation="relu"), k.layers.Dense(10)])
    model.set_weights([a for w in w_np for a in (w, np.zeros(w.shape[1], np.float32))])
    return tf_fit_step(model, x_np, y_np)


def torch_mlp():
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = torch.tensor(x_np), torch.tensor(y_np)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def tf_raw_mlp():
    T = tensorflow
    x, y = T.constant(x_np), T.constant(y_np)
    params = []
    for w in w_np:
        params += [T.Variable(w), T.Variable(T.zeros([w.shape[1]]))]
    opt = T.keras.optimizers.SGD(LR)

    def step():
        with T.GradientTape() as tape:
            h = x
            for i in range(0, len(params), 2):
                h = T.matmul(h, params[i]) + params[i + 1]
                if i < len(params) - 2:
                    h = T.nn.relu(h)
            loss = T.reduce_mean(T.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
    return step


def tf_keras_mlp():
    T, k = tensorflow, tensorflow.keras
    model = k.Sequential([k.Input((784,)), k.layers.Dense(256, activation="relu"),
                          k.layers.Dense(256, activation="relu"), k.layers.Dense(10)])
    loss_fn = k.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = k.optimizers.SGD(LR)
    x, y = T.constant(x_np), T.constant(y_np)

    def step():
        with T.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return step


MEASURED: dict = {}  # workload -> {name: seconds per step} (in a worker)
if WORKER and "mlp" in PARTS:
    fns = {}
    if tf is not None:
        fns = {"tapeflow": tapeflow_raw_mlp(), "tapeflow layers": tapeflow_layers_mlp(),
               "tapeflow layers+Adam": tapeflow_layers_mlp("adam"), "tapeflow fit step (compiled)": tapeflow_fit_mlp()}
    if torch is not None:
        fns["pytorch"] = torch_mlp()
    if tensorflow is not None:
        fns["tensorflow raw+tape"] = tf_raw_mlp()
        fns["tensorflow keras"] = tf_keras_mlp()
        fns["tensorflow fit step (tf.function)"] = tf_fit_mlp()
    MEASURED["mlp"] = interleaved(fns, 30)

# ==== the seeds' CNN, batch 32 ===============================================================
xc_np = rng.normal(size=(32, 28, 28, 1)).astype(np.float32)
yc_np = rng.integers(0, 10, 32).astype(np.int64)


def tapeflow_cnn():
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Conv2D(16, 3, activation="relu", input_shape=(28, 28, 1)),
                                 L.Conv2D(16, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(10)])
    loss_fn = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.optimizers.SGD(LR)
    x, y = tf.constant(xc_np), tf.constant(yc_np)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tvars = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, tvars), tvars))
    return step


def tapeflow_fit_cnn():
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Conv2D(16, 3, activation="relu", input_shape=(28, 28, 1)),
                                 L.Conv2D(16, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(10)])
    return tapeflow_fit_step(model, xc_np, yc_np)


def tf_fit_cnn():
    k = tensorflow.keras
    model = k.Sequential([k.Input((28, 28, 1)), k.layers.Conv2D(16, 3, activation="relu"),
                          k.layers.Conv2D(16, 3, activation="relu"), k.layers.GlobalAveragePooling2D(),
                          k.layers.Dense(10)])
    return tf_fit_step(model, xc_np, yc_np)


def torch_cnn():
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.Conv2d(16, 16, 3), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = torch.tensor(xc_np).permute(0, 3, 1, 2).contiguous(), torch.tensor(yc_np)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def tf_raw_cnn():
    T = tensorflow
    g = lambda *s: T.Variable(T.random.normal(s, stddev=0.1))  # noqa: E731
    k1, b1, k2, b2, w, b = g(3, 3, 1, 16), g(16), g(3, 3, 16, 16), g(16), g(16, 10), g(10)
    params = [k1, b1, k2, b2, w, b]
    opt = T.keras.optimizers.SGD(LR)
    x, y = T.constant(xc_np), T.constant(yc_np)

    def step():
        with T.GradientTape() as tape:
            h = T.nn.relu(T.nn.conv2d(x, k1, 1, "VALID") + b1)
            h = T.nn.relu(T.nn.conv2d(h, k2, 1, "VALID") + b2)
            logits = T.reduce_mean(h, axis=[1, 2]) @ w + b
            loss = T.reduce_mean(T.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
    return step


def tf_keras_cnn():
    T, k = tensorflow, tensorflow.keras
    model = k.Sequential([k.Input((28, 28, 1)), k.layers.Conv2D(16, 3, activation="relu"),
                          k.layers.Conv2D(16, 3, activation="relu"), k.layers.GlobalAveragePooling2D(),
                          k.layers.Dense(10)])
    loss_fn = k.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = k.optimizers.SGD(LR)
    x, y = T.constant(xc_np), T.constant(yc_np)

    def step():
        with T.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return step


if WORKER and "cnn" in PARTS:
    fns = {"tapeflow": tapeflow_cnn(), "tapeflow fit step (compiled)": tapeflow_fit_cnn()} if tf is not None else {}
    if torch is not None:
        fns["pytorch"] = torch_cnn()
    if tensorflow is not None:
        fns["tensorflow raw+tape"] = tf_raw_cnn()
        fns["tensorflow keras"] = tf_keras_cnn()
        fns["tensorflow fit step (tf.function)"] = tf_fit_cnn()
    MEASURED["cnn"] = interleaved(fns, 20)

# ==== the seeds' LSTM cell ===================================================================
BATCH, IN, HID = 32, 128, 256
xl = rng.normal(size=(BATCH, IN)).astype(np.float32)
hl = rng.normal(size=(BATCH, HID)).astype(np.float32)
cl = rng.normal(size=(BATCH, HID)).astype(np.float32)
wl = (rng.normal(size=(IN + HID, 4 * HID)) * 0.05).astype(np.float32)


def lstm_cell(T, x, w, h, c, split, concat):
    xhw = T.matmul(concat([x, h], axis=1), w)
    y = split(xhw, 4, axis=1)
    in_value = T.tanh(y[0])
    in_gate, forget_gate, out_gate = [T.sigmoid(v) for v in y[1:]]
    c = (forget_gate * c) + (in_gate * in_value)
    h = out_gate * T.tanh(c)
    return h, c


def tapeflow_lstm(compiled=False, T=None):
    T = T or tf
    x, h, c, w = T.constant(xl), T.constant(hl), T.constant(cl), T.constant(wl)

    def fwd(x, w, h, c):
        return lstm_cell(T, x, w, h, c, T.split, T.concat)

    def fwd_bwd(x, w, h, c):
        with T.GradientTape() as tape:
            tape.watch(w)
            h2, c2 = lstm_cell(T, x, w, h, c, T.split, T.concat)
            loss = T.reduce_sum(h2) + T.reduce_sum(c2)
        return tape.gradient(loss, w)
    if compiled:  # traced once beforehand
        fwd, fwd_bwd = T.function(fwd), T.function(fwd_bwd)
        fwd(x, w, h, c)
        fwd_bwd(x, w, h, c)
    return (lambda: fwd(x, w, h, c)), (lambda: fwd_bwd(x, w, h, c))


# the same step in Keras's gate order (i, f, g, o: the seeds' g block moved third), split into the input and
# recurrent kernels, through tapeflow's fused gate kernel (what tf.keras.layers.LSTM runs) and torch's LSTMCell
wl_ifgo = np.concatenate([wl[:, HID:2 * HID], wl[:, 2 * HID:3 * HID], wl[:, :HID], wl[:, 3 * HID:]], axis=1)


def tapeflow_lstm_fused():
    from tapeflow.core.ops.rnn_ops import lstm_cell as fused

    x, h, c = tf.constant(xl), tf.constant(hl), tf.constant(cl)
    wx, wh = tf.constant(wl_ifgo[:IN]), tf.constant(wl_ifgo[IN:])

    def fwd():
        return fused(tf.matmul(x, wx) + tf.matmul(h, wh), c)

    def fwd_bwd():
        with tf.GradientTape() as tape:
            tape.watch([wx, wh])
            h2, c2 = fused(tf.matmul(x, wx) + tf.matmul(h, wh), c)
            loss = tf.reduce_sum(h2) + tf.reduce_sum(c2)
        return tape.gradient(loss, [wx, wh])
    return fwd, fwd_bwd


def torch_lstm_fused():
    x, h, c = torch.tensor(xl), torch.tensor(hl), torch.tensor(cl)
    cell = torch.nn.LSTMCell(IN, HID, bias=False)
    with torch.no_grad():
        cell.weight_ih.copy_(torch.tensor(wl_ifgo[:IN].T))
        cell.weight_hh.copy_(torch.tensor(wl_ifgo[IN:].T))

    def fwd():
        with torch.no_grad():
            return cell(x, (h, c))

    def fwd_bwd():
        h2, c2 = cell(x, (h, c))
        return torch.autograd.grad(h2.sum() + c2.sum(), [cell.weight_ih, cell.weight_hh])
    return fwd, fwd_bwd


def torch_lstm():
    x, h, c = torch.tensor(xl), torch.tensor(hl), torch.tensor(cl)
    w = torch.tensor(wl, requires_grad=True)
    split = lambda t, n, axis: torch.chunk(t, n, dim=axis)  # noqa: E731
    concat = lambda ts, axis: torch.cat(ts, dim=axis)  # noqa: E731

    def fwd():
        with torch.no_grad():
            return lstm_cell(torch, x, w, h, c, split, concat)

    def fwd_bwd():
        h2, c2 = lstm_cell(torch, x, w, h, c, split, concat)
        (g,) = torch.autograd.grad(h2.sum() + c2.sum(), w)
        return g
    return fwd, fwd_bwd


def tf_lstm(compiled=False):
    return tapeflow_lstm(compiled, tensorflow)


if WORKER and "lstm" in PARTS:
    makers = {"tapeflow": tapeflow_lstm, "tapeflow fused": tapeflow_lstm_fused,
              "tapeflow tf.function": lambda: tapeflow_lstm(True)} if tf is not None else {}
    if torch is not None:
        makers["pytorch"] = torch_lstm
        makers["pytorch LSTMCell"] = torch_lstm_fused
    if tensorflow is not None:
        makers["tensorflow"] = tf_lstm
        makers["tensorflow tf.function"] = lambda: tf_lstm(True)
    pairs = {k: m() for k, m in makers.items()}
    MEASURED["lstm_fwd"] = interleaved({k: p[0] for k, p in pairs.items()}, 300)
    MEASURED["lstm_fwd_bwd"] = interleaved({k: p[1] for k, p in pairs.items()}, 100)

# ==== where the tapeflow MLP step's time goes ================================================
if WORKER == "tapeflow" and "profile" in PARTS and os.environ.get("BENCH_PROFILE"):
    step = tapeflow_layers_mlp()
    for _ in range(5):
        step()
    N = 50 if QUICK else 200
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(N):
        step()
    prof.disable()
    stats = pstats.Stats(prof)
    groups: dict = {}
    for (filename, _, func), (_, _, tottime, _, _) in stats.stats.items():
        if "tapeflow.kernels" in func or "_cffi_backend" in func or "tpf_" in func:
            g = "C kernels (cffi calls)"
        elif "/nn/" in filename:
            g = "nn (layers, losses, optimizer)"
        elif "/autodiff/" in filename:
            g = "autodiff (tape, gradient rules)"
        elif "/core/" in filename:
            g = "core (op dispatch, tensors, variables)"
        else:
            g = "other (builtins, NumPy host glue)"
        groups[g] = groups.get(g, 0.0) + tottime
    total = sum(groups.values())
    ranked = sorted(groups.items(), key=lambda kv: -kv[1])
    rows = [[g, f"{t / N * 1e6:.0f}", f"{100 * t / total:.0f}%"] for g, t in ranked]
    print(table(f"Where a tapeflow MLP step spends its time (layers + SGD; cProfile, so inflated; {N} steps)",
                ["part", "µs/step", "share"], rows))
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:12]
    rows = [[f"{os.path.basename(fn)}:{ln}({fu})"[:70], cc, f"{tt / N * 1e6:.1f}"]
            for (fn, ln, fu), (cc, _, tt, _, _) in top]
    print(table("Top functions by own time (µs per step)", ["function", "calls", "µs/step"],
                [[r[0], r[1] // N, r[2]] for r in rows]))
    MEASURED["profile_us"] = {g: t / N * 1e6 for g, t in groups.items()}

if WORKER:
    print("RESULT " + json.dumps(MEASURED))
    sys.exit(0)

# ==== the parent: workers in turn, the best of each, the tables ==============================
results: dict = {"threads": THREADS}
best: dict = {}
name = "train" if "--threads" not in ARGS else f"train_{THREADS}thread"
frameworks = ["tapeflow"] + [f for f, mod in (("pytorch", "torch"), ("tensorflow", "tensorflow"))
                              if optional_installed(mod)]
python_of = {fw: sys.executable for fw in frameworks}
if "tensorflow" not in frameworks and os.environ.get("BENCH_TENSORFLOW_PYTHON"):  # TensorFlow from another venv
    frameworks.append("tensorflow")
    python_of["tensorflow"] = os.environ["BENCH_TENSORFLOW_PYTHON"]
for r in range(1 if QUICK else ROUNDS):
    for fw in frameworks:
        last = r == (0 if QUICK else ROUNDS - 1) and fw == "tapeflow" and "profile" in PARTS
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **({"BENCH_PROFILE": "1"} if last else {}))
        out = subprocess.run([python_of[fw], __file__, "--worker", fw] + [a for a in ARGS if a != "--worker"],
                             capture_output=True, text=True, env=env, cwd=os.path.dirname(os.path.abspath(__file__)))
        if out.returncode:
            sys.exit(f"the {fw} worker failed:\n{out.stderr[-3000:]}")
        for line in out.stdout.splitlines():
            if line.startswith("RESULT "):
                for work, times in json.loads(line[7:]).items():
                    dst = best.setdefault(work, {})
                    for k, v in times.items():
                        dst[k] = min(dst.get(k, float("inf")), v) if work != "profile_us" else v
            elif last:
                print(line)
order = ["tapeflow", "tapeflow layers", "tapeflow layers+Adam", "tapeflow fit step (compiled)", "tapeflow fused",
         "tapeflow tf.function", "pytorch", "pytorch LSTMCell", "tensorflow raw+tape", "tensorflow keras",
         "tensorflow fit step (tf.function)", "tensorflow", "tensorflow tf.function"]
for work in best:
    best[work] = {k: best[work][k] for k in sorted(best[work], key=order.index)} if work != "profile_us" else best[work]
COMPILED = "tapeflow fit step (compiled)"


def report_compiled(title, times):
    """The compiled fit step against PyTorch eager and TensorFlow's compiled fit step (issue 15)."""
    if COMPILED in times:
        report(title + ": compiled through fit", {k: times[k] for k in times if k == COMPILED or k == "pytorch" or
                                                   k == "tensorflow fit step (tf.function)"}, "-", ref=COMPILED)


if "mlp" in best:
    report("MLP 784-256-256-10, batch 128, SGD", best["mlp"], 2)
    report_compiled("MLP 784-256-256-10, batch 128, SGD", best["mlp"])
    results["mlp_ms"] = {k: v * 1e3 for k, v in best["mlp"].items()}
if "cnn" in best:
    report("The seeds' CNN (Conv2D 16-Conv2D 16-GAP-Dense 10), 28x28x1, batch 32, SGD", best["cnn"], 6)
    report_compiled("The seeds' CNN, batch 32, SGD", best["cnn"])
    results["cnn_ms"] = {k: v * 1e3 for k, v in best["cnn"].items()}
if "lstm_fwd" in best:
    fwd, both = best["lstm_fwd"], best["lstm_fwd_bwd"]
    rows = [[k, ms(fwd[k]), f"{fwd[k] / fwd['tapeflow']:.2f}x", ms(both[k]), f"{both[k] / both['tapeflow']:.2f}x"]
            for k in fwd]
    print(table(f"The seeds' LSTM cell, batch 32, input 128, hidden 256 (ms per step, {THREADS} thread(s); "
                "target forward < 0.25 ms)",
                ["framework", "forward", "ratio", "fwd+bwd", "ratio"], rows))
    results["lstm_cell_forward_ms"] = {k: v * 1e3 for k, v in fwd.items()}
    results["lstm_cell_fwd_bwd_ms"] = {k: v * 1e3 for k, v in both.items()}
if "profile_us" in best:
    results["mlp_profile_us_per_step"] = best["profile_us"]
save(name, results)
