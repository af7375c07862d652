"""tapeflow-distribute with tapeflow-nn (needs both, so it lives with the cross-package tests): under
mpiexec -n 2 and -n 3, Keras-style fit and a custom loop with optimizer.apply_gradients equal one process on the
same global batch, replicas stay bit-identical, metrics are aggregated, checkpoints and summaries are the chief's,
and a checkpoint written by a job that then dies loads."""
import json
import textwrap

import numpy as np
import pytest

pytest.importorskip("tapeflow.distribute", reason="the distributed tests need tapeflow-distribute")
from tapeflow.distribute.testing import run_mpi  # noqa: E402

TRAIN = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import tapeflow as tf

    out, mode = sys.argv[1], sys.argv[2]
    # gradients all-reduced during the backward pass (the default only where there are two cores per process)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(overlap_backward=True))
    from tapeflow.distribute import _overlap
    served, match = [], _overlap.Step.match

    def record_match(self, *args):
        got = match(self, *args)
        served.append(got is not None)
        return got

    _overlap.Step.match = record_match
    rank = strategy.cluster_resolver.task_id
    rng = np.random.default_rng(0)
    x = rng.normal(size=(72, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    result = {"n": strategy.num_replicas_in_sync}

    seen = [0, 0]

    class CountRows(tf.keras.layers.Layer):   # the examples this worker trains on, and evaluates
        def call(self, inputs, training=None):
            seen[0 if training else 1] += int(inputs.shape[0])
            return inputs

    def make_model():
        return tf.keras.Sequential([CountRows(input_shape=(6,)), tf.keras.layers.Dense(16, activation="relu"),
                                    tf.keras.layers.Dense(3)])

    # Keras-style fit: global batch 12, shuffled, sharded by fit itself
    tf.random.set_seed(7)
    with strategy.scope():
        model = make_model()
        model.compile(optimizer=tf.optimizers.SGD(0.2, momentum=0.5),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
                      run_eagerly=True)   # (CountRows counts in Python)
    # validation and evaluate: 23 examples in batches of 11 (the last batch of one row leaves workers without)
    xv, yv = x[:23] * 0.5, y[:23]
    seen[1] = 0   # (building the model called it)
    hist = model.fit(x, y, batch_size=12, epochs=3, verbose=0, validation_data=(xv, yv), validation_batch_size=11)
    result["fit"] = [w.numpy().tolist() for w in model.weights]
    result["history"] = hist.history
    result["rows"] = seen[0]
    result["eval"] = model.evaluate(xv, yv, batch_size=11, verbose=0, return_dict=True)
    result["eval_rows"] = seen[1]

    # a custom loop: strategy.run, tf.distribute.compute_average_loss, Adam's apply_gradients
    tf.random.set_seed(8)
    with strategy.scope():
        model2 = make_model()
        opt = tf.optimizers.Adam(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.distribute.compute_average_loss(loss_fn(yb, model2(xb, training=True)), global_batch_size=24)
        grads = tape.gradient(loss, model2.trainable_variables)
        opt.apply_gradients(zip(grads, model2.trainable_variables))
        return loss

    batches = [(x[i:i + 24], y[i:i + 24]) for i in range(0, 72, 24)] * 2
    for xb, yb in strategy.experimental_distribute_dataset(batches):
        strategy.run(step, args=(tf.constant(xb), tf.constant(yb)))
    result["loop"] = [w.numpy().tolist() for w in model2.weights]
    result["served"] = served

    # the same loop as TensorFlow writes it: strategy.run and strategy.reduce inside a tf.function
    tf.random.set_seed(8)
    with strategy.scope():
        model3 = make_model()
        opt3 = tf.optimizers.Adam(0.01)

    def step3(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.distribute.compute_average_loss(loss_fn(yb, model3(xb, training=True)), global_batch_size=24)
        grads = tape.gradient(loss, model3.trainable_variables)
        opt3.apply_gradients(zip(grads, model3.trainable_variables))
        return loss

    @tf.function
    def train_step(xb, yb):
        return strategy.reduce("SUM", strategy.run(step3, args=(xb, yb)), axis=None)

    result["function_losses"] = [float(train_step(tf.constant(xb), tf.constant(yb)))
                                 for xb, yb in strategy.experimental_distribute_dataset(batches)]
    result["function_loop"] = [w.numpy().tolist() for w in model3.weights]

    # the chief alone writes checkpoints and summaries (each worker is given its own directory here)
    mine = os.path.join(os.path.dirname(out), f"rank{rank}")
    ckpt = tf.train.Checkpoint(model=model2, optimizer=opt)
    ckpt.save(os.path.join(mine, "ckpt"))
    writer = tf.summary.create_file_writer(os.path.join(mine, "logs"))
    with writer.as_default():
        tf.summary.scalar("loss", 1.0, step=1)
    writer.flush()
    if mode == "die":
        with open(f"{out}.{rank}.json", "w") as f:
            json.dump(result, f)
        strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", tf.ones([2])))   # all wrote
        if rank == strategy.num_replicas_in_sync - 1:
            raise RuntimeError("the last worker dies after the checkpoint")
        strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", tf.ones([2])))
    with open(f"{out}.{rank}.json", "w") as f:
        json.dump(result, f)
""")


def _run(tmp_path, n, mode="ok"):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    proc = run_mpi(script, n, [tmp_path / "out", mode], timeout=150)
    return proc, [json.loads((tmp_path / f"out.{r}.json").read_text()) if (tmp_path / f"out.{r}.json").exists()
                  else None for r in range(n)]


def _close(got, want, rtol=1e-5):
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * np.abs(w).max())


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    proc, runs = _run(tmp_path_factory.mktemp("one"), 1)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return runs[0]


@pytest.mark.parametrize("n", [2, 3])
def test_fit_and_custom_loop_equal_one_process(tmp_path, one_process, n):
    proc, runs = _run(tmp_path, n)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["rows"] for r in runs] == [3 * 72 // n] * n    # each worker trains on its part of every batch
    # every apply_gradients (fit's 3 x 6, the loop's 6) took the sums made during tape.gradient
    assert [r["served"] for r in runs] == [[True] * 24] * n and one_process["served"] == []
    # and evaluates its part of every batch (3 validations + evaluate; batches of 11, 11, 1 rows)
    share = {2: [6 + 6 + 1, 5 + 5], 3: [4 + 4 + 1, 4 + 4, 3 + 3]}[n]
    assert [r["eval_rows"] for r in runs] == [4 * s for s in share]
    for r in runs[1:]:
        assert r["fit"] == runs[0]["fit"] and r["loop"] == runs[0]["loop"]   # bit-identical replicas
        assert r["function_loop"] == runs[0]["function_loop"]
        assert r["function_losses"] == runs[0]["function_losses"]
        assert r["history"] == runs[0]["history"]
    _close(runs[0]["fit"], one_process["fit"])
    _close(runs[0]["loop"], one_process["loop"])
    # the loop in a tf.function (apply_gradients all-reduces in its graph) equals the eager loop and one process
    _close(runs[0]["function_loop"], runs[0]["loop"])
    _close(runs[0]["function_loop"], one_process["function_loop"])
    _close(runs[0]["function_losses"], one_process["function_losses"])
    _close(one_process["function_loop"], one_process["loop"])
    # the logged loss and accuracy, validation's and evaluate's, are over all workers' examples
    for k in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(runs[0]["history"][k], one_process["history"][k], rtol=1e-5)
    assert runs[0]["eval"].keys() == one_process["eval"].keys() == {"loss", "accuracy"}
    for r in runs:
        assert r["eval"] == runs[0]["eval"]
        for k in ("loss", "accuracy"):
            np.testing.assert_allclose(r["eval"][k], one_process["eval"][k], rtol=1e-5)
    assert one_process["eval_rows"] == 4 * 23
    assert one_process["history"]["loss"][-1] < one_process["history"]["loss"][0]
    # checkpoints and summaries: the chief's directory only
    assert (tmp_path / "rank0" / "checkpoint").exists() and list((tmp_path / "rank0" / "logs").iterdir())
    for r in range(1, n):
        assert not (tmp_path / f"rank{r}").exists() or not any((tmp_path / f"rank{r}").rglob("*.*"))


def test_a_checkpoint_written_before_a_worker_dies_loads(tmp_path):
    import tapeflow as tf

    proc, runs = _run(tmp_path, 2, mode="die")
    assert proc.returncode != 0 and "the last worker dies after the checkpoint" in proc.stderr
    class Pass(tf.keras.layers.Layer):   # stands for the script's CountRows (no weights)
        def call(self, inputs):
            return inputs

    model = tf.keras.Sequential([Pass(input_shape=(6,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    tf.train.Checkpoint(model=model).restore(tf.train.latest_checkpoint(str(tmp_path / "rank0"))).expect_partial()
    _close([w.numpy() for w in model.weights], runs[0]["loop"], rtol=0)


def test_the_example_prints_the_same_final_accuracy_under_mpiexec_n_2(tmp_path):
    import pathlib

    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "distributed_mnist.py"
    lines = {}
    for n in (1, 2):
        proc = run_mpi(example, n, ["--epochs", "2"], timeout=150)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        lines[n] = [line for line in proc.stdout.splitlines() if "final test accuracy" in line]
    assert lines[1][0].replace("workers: 1", "") == lines[2][0].replace("workers: 2", "")
    assert float(lines[1][0].rsplit(" ", 1)[1]) > 0.8


def test_fit_and_evaluate_in_the_default_strategys_scope_are_one_process():
    import tapeflow as tf

    x = np.arange(12, dtype=np.float32).reshape(6, 2) / 10
    y = x.sum(axis=1, keepdims=True)
    logs = []
    for scoped in (False, True):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
        if scoped:
            with tf.distribute.get_strategy().scope():
                model.compile(optimizer=tf.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
                hist = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
                ev = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
        else:
            model.compile(optimizer=tf.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
            hist = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
            ev = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
        logs.append((hist.history, ev))
    assert logs[0] == logs[1]


MISMATCH = textwrap.dedent("""
    import tapeflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rank = strategy.cluster_resolver.task_id
    kernel = tf.Variable(tf.ones([2, 2 + rank]), name="kernel")   # outside scope(): not broadcast, other shapes
    opt = tf.optimizers.SGD(0.1)

    def step_fn():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(kernel * kernel)
        opt.apply_gradients([(tape.gradient(loss, kernel), kernel)])

    tf.function(lambda: strategy.run(step_fn))()
""")


def test_apply_gradients_in_a_tf_function_names_the_mismatched_variable_and_ranks(tmp_path):
    script = tmp_path / "mismatch.py"
    script.write_text(MISMATCH)
    proc = run_mpi(script, 2, timeout=60)
    assert proc.returncode != 0
    assert "gradients of SGD.apply_gradients: variable 'kernel:0' is float32 (not yet broadcast)[2, 2] on rank 0 " \
        "but 'kernel:0' is float32 (not yet broadcast)[2, 3] on rank 1" in proc.stderr, proc.stderr
    assert "[Op:CollectiveReduce]" in proc.stderr
