"""MultiWorkerMirroredStrategy under mpiexec -n 2 and -n 3 (core + autodiff only): a custom training loop
equals one process on the same global batch, replicas stay bit-identical, initial variables are broadcast,
buckets do not change the sums, and faults end the job."""
import json
import subprocess
import textwrap
import time

import numpy as np
import pytest

from tapeflow.distribute.testing import run_mpi

# one replica's training loop: a 2-layer MLP, SGD by hand over all-reduced gradients
LOOP = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tapeflow as tf

    out, bytes_per_pack, seeded = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    overlap = len(sys.argv) < 5 or sys.argv[4] == "1"
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(bytes_per_pack=bytes_per_pack,
                                                                               overlap_backward=overlap))
    from tapeflow.distribute import _overlap
    launches, served = [], []   # each bucket sent during tape.gradient: its variables, which gradients were ready
    launch, match = _overlap.Step._launch, _overlap.Step.match

    def record_launch(self, b):
        launches.append(([self.variables[j].name for j in self.plan[b][0]], list(self.fired)))
        return launch(self, b)

    def record_match(self, *args):
        got = match(self, *args)
        served.append(got is not None)
        return got

    _overlap.Step._launch, _overlap.Step.match = record_launch, record_match
    rank, n = strategy.cluster_resolver.task_id, strategy.num_replicas_in_sync
    if seeded:
        tf.random.set_seed(1)
    else:
        tf.random.set_seed(100 + rank)        # every worker draws other values: the broadcast makes them equal
    with strategy.scope():
        w1 = tf.Variable(tf.random.normal([5, 16]), name="w1")
        b1 = tf.Variable(tf.zeros([16]), name="b1")
        w2 = tf.Variable(tf.random.normal([16, 3]) * 0.3, name="w2")
        b2 = tf.Variable(tf.zeros([3]), name="b2")
    variables = [w1, b1, w2, b2]
    initial = [v.numpy().tolist() for v in variables]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=60)
    GLOBAL = 12
    batches = [(x[i:i + GLOBAL], y[i:i + GLOBAL]) for i in range(0, 60, GLOBAL)] * 4   # 4 epochs

    def step(xb, yb):
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(xb, w1) + b1), w2) + b2
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=logits)
            loss = tf.distribute.compute_average_loss(per_example, global_batch_size=GLOBAL)
        grads = tape.gradient(loss, variables)
        grads = tf.distribute.get_replica_context().all_reduce("SUM", grads)
        for v, g in zip(variables, grads):
            v.assign_sub(0.2 * g)
        return loss

    losses = []
    for xb, yb in strategy.experimental_distribute_dataset(batches):
        per_replica = strategy.run(step, args=(tf.constant(xb), tf.constant(yb, tf.int32)))
        losses.append(float(strategy.reduce("SUM", per_replica, axis=None)))
    gathered = strategy.gather(tf.fill([2], float(rank)), axis=0).numpy().tolist()
    with open(f"{out}.{rank}.json", "w") as f:
        json.dump({"n": n, "initial": initial, "final": [v.numpy().tolist() for v in variables],
                   "losses": losses, "gathered": gathered, "launches": launches, "served": served}, f)
""")


def _run(tmp_path, n, bytes_per_pack=0, seeded=True, name="loop", overlap=True):
    script = tmp_path / f"{name}.py"
    script.write_text(LOOP)
    out = tmp_path / f"{name}-{n}-{bytes_per_pack}-{int(overlap)}"
    proc = run_mpi(script, n, [out, bytes_per_pack, int(seeded), int(overlap)], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(open(f"{out}.{r}.json").read()) for r in range(n)]


def _close(a, b, rtol=1e-5):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("one"), 1)[0]


@pytest.mark.parametrize("n", [2, 3])
def test_custom_loop_equals_one_process_and_replicas_are_bit_identical(tmp_path, one_process, n):
    runs = _run(tmp_path, n, bytes_per_pack=256)   # several buckets per step
    assert all(r["n"] == n for r in runs)
    for r in runs[1:]:
        assert r["final"] == runs[0]["final"]     # bit-identical replicas
        assert r["losses"] == runs[0]["losses"]
    for got, want in zip(runs[0]["final"], one_process["final"]):
        assert _close(got, want), (got, want)
    assert _close(runs[0]["losses"], one_process["losses"])
    assert sum(one_process["losses"][-5:]) < sum(one_process["losses"][:5])     # it trained
    assert runs[0]["gathered"] == [float(r) for r in range(n) for _ in range(2)]


@pytest.mark.parametrize("n", [2, 3])
def test_buckets_are_all_reduced_during_the_backward_pass_with_the_same_result(tmp_path, n):
    runs = _run(tmp_path, n, bytes_per_pack=64)   # b2, w2, b1, w1: a bucket each
    steps = len(runs[0]["losses"])
    for r in runs:
        # every step's buckets leave in reverse order of the variables, each as soon as its gradient is final:
        # the first while only b2's gradient exists (the backward pass has w2, b1, w1 still to differentiate)
        assert [names for names, _ in r["launches"]] == [["b2:0"], ["w2:0"], ["b1:0"], ["w1:0"]] * steps
        assert [ready for _, ready in r["launches"][:4]] == [[False, False, False, True], [False, False, True, True],
                                                              [False, True, True, True], [True, True, True, True]]
        assert r["served"] == [True] * steps   # all_reduce(grads) took the sums made during tape.gradient
    sync = _run(tmp_path, n, bytes_per_pack=64, overlap=False)
    assert sync[0]["launches"] == [] and sync[0]["served"] == []
    for r, s in zip(runs, sync):
        assert r["final"] == s["final"] and r["losses"] == s["losses"]   # the same bits as all at once


def test_variables_created_in_scope_are_broadcast_from_rank_0_without_a_shared_seed(tmp_path):
    runs = _run(tmp_path, 2, seeded=False)
    assert runs[0]["initial"] == runs[1]["initial"]
    assert runs[0]["final"] == runs[1]["final"]


FAULT = textwrap.dedent("""
    import os, signal, sys, time
    import tapeflow as tf

    mode = sys.argv[1]
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(overlap_backward=True))
    rank = strategy.cluster_resolver.task_id
    shape = [3, 4 + rank] if mode == "shape" else [3, 4]
    with strategy.scope():
        vs = [tf.Variable(tf.zeros([2]), name=f"v{i}") for i in range(2 + (rank if mode == "count" else 0))]
        vs.append(tf.Variable(tf.zeros(shape), name="kernel"))
    ctx_grads = [tf.ones(v.shape) for v in vs]
    if mode == "function":   # an all-reduce in a tf.function: the ranks' shapes are checked when its graph runs
        ctx = tf.distribute.get_replica_context
        strategy.run(tf.function(lambda: ctx().all_reduce("SUM", [tf.ones([3, 4 + rank])])))
    if mode == "none":   # rank 1's loss does not use v0: its gradient is None there only
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(v) for v in vs[1 if rank == 1 else 0:])
        ctx_grads = strategy.run(lambda: tape.gradient(loss, vs))
        ctx_grads = [tf.zeros(v.shape) if g is None else g for g, v in zip(ctx_grads, vs)]
    if mode == "raise" and rank == 1:
        raise RuntimeError("worker one broke on purpose")
    if mode == "kill" and rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", ctx_grads))
    time.sleep(60)   # the healthy workers would wait here for the failed one (well past the test's limit)
""")


def _fault(tmp_path, mode, n=2):
    script = tmp_path / "fault.py"
    script.write_text(FAULT)
    t0 = time.monotonic()
    proc = run_mpi(script, n, [mode], timeout=45)
    return proc, time.monotonic() - t0


def test_an_exception_on_one_worker_ends_the_job_with_its_traceback(tmp_path):
    proc, _ = _fault(tmp_path, "raise", n=3)
    assert proc.returncode != 0
    assert "worker 1 raised RuntimeError" in proc.stderr and "worker one broke on purpose" in proc.stderr


def test_a_worker_killed_with_sigkill_makes_mpiexec_fail(tmp_path):
    proc, _ = _fault(tmp_path, "kill")
    assert proc.returncode != 0


def test_mismatched_shapes_are_named_at_the_first_collective(tmp_path):
    proc, _ = _fault(tmp_path, "shape")
    assert proc.returncode != 0
    assert "variable 'kernel:0' is float32[3, 4] on rank 0 but 'kernel:0' is float32[3, 5] on rank 1" in proc.stderr
    assert "[Op:CollectiveBcast]" in proc.stderr


def test_mismatched_variable_counts_are_named_at_the_first_collective(tmp_path):
    proc, _ = _fault(tmp_path, "count")
    assert proc.returncode != 0
    assert "rank 0 has 3 variables but rank 1 has 4 (differing: ['v2:0'])" in proc.stderr


def test_gradients_none_on_one_rank_only_are_named_when_reduced_during_the_backward_pass(tmp_path):
    proc, _ = _fault(tmp_path, "none")
    assert proc.returncode != 0
    assert "the replicas disagree on which gradients are None: of the variables ['kernel:0', 'v1:0', 'v0:0'], rank" \
        in proc.stderr
    assert "rank 1 has 1 None ['v0:0'], the 2 ranks 1 in all" in proc.stderr or \
        "rank 0 has 0 None [], the 2 ranks 1 in all" in proc.stderr


def test_mismatched_shapes_inside_a_tf_function_are_named_when_its_graph_runs(tmp_path):
    proc, _ = _fault(tmp_path, "function")
    assert proc.returncode != 0
    assert "InvalidArgumentError: all_reduce: variable 'all_reduce/0' is float32[3, 4] on rank 0 but " \
        "'all_reduce/0' is float32[3, 5] on rank 1" in proc.stderr
    assert "[Op:CollectiveReduce]" in proc.stderr


# TensorFlow's canonical custom loop: strategy.run and strategy.reduce inside a tf.function, the replica context's
# all_reduce inside the step; the same model trained eagerly beside it
FUNCTION_LOOP = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tapeflow as tf

    out = sys.argv[1]
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(bytes_per_pack=256))
    rank, n = strategy.cluster_resolver.task_id, strategy.num_replicas_in_sync
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=60)
    GLOBAL = 12
    batches = [(x[i:i + GLOBAL], y[i:i + GLOBAL]) for i in range(0, 60, GLOBAL)] * 3

    def make():
        tf.random.set_seed(100 + rank)   # other values on every worker: the broadcast makes them equal
        with strategy.scope():
            return [tf.Variable(tf.random.normal([5, 16]), name="w1"), tf.Variable(tf.zeros([16]), name="b1"),
                    tf.Variable(tf.random.normal([16, 3]) * 0.3, name="w2"), tf.Variable(tf.zeros([3]), name="b2")]

    def make_step(variables):
        w1, b1, w2, b2 = variables

        def step_fn(xb, yb):
            with tf.GradientTape() as tape:
                logits = tf.matmul(tf.nn.relu(tf.matmul(xb, w1) + b1), w2) + b2
                per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=logits)
                loss = tf.distribute.compute_average_loss(per_example, global_batch_size=GLOBAL)
            grads = tape.gradient(loss, variables)
            grads = tf.distribute.get_replica_context().all_reduce("SUM", grads)
            for v, g in zip(variables, grads):
                v.assign_sub(0.2 * g)
            return loss

        def train_step(xb, yb):
            per_replica = strategy.run(step_fn, args=(xb, yb))
            return (strategy.reduce("SUM", per_replica, axis=None),
                    strategy.reduce("MEAN", xb[:, 0], axis=0))   # over the rows of all workers
        return train_step

    result = {"n": n}
    for name, wrap in (("eager", lambda f: f), ("function", tf.function)):
        variables = make()
        train_step = wrap(make_step(variables))
        losses, means = [], []
        for xb, yb in strategy.experimental_distribute_dataset(batches):
            loss, mean = train_step(tf.constant(xb), tf.constant(yb, tf.int32))
            losses.append(float(loss))
            means.append(float(mean))
        result[name] = {"final": [v.numpy().tolist() for v in variables], "losses": losses, "means": means}
    result["global_means"] = [float(np.mean(xb[:, 0])) for xb, _ in batches]

    # the gradient through an all-reduce, eagerly and in a tf.function: the all-reduce of the gradient (TensorFlow's)
    with strategy.scope():
        v = tf.Variable([1.0, 2.0])

    def grad():
        with tf.GradientTape() as tape:
            summed = strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", v * (rank + 1.0)))
            s = tf.reduce_sum(summed * (rank + 1.0))
        return tape.gradient(s, v)

    result["grad"] = [grad().numpy().tolist(), tf.function(grad)().numpy().tolist()]
    with open(f"{out}.{rank}.json", "w") as f:
        json.dump(result, f)
""")


@pytest.fixture(scope="module")
def function_one_process(tmp_path_factory):
    return _run_function_loop(tmp_path_factory.mktemp("fone"), 1)[0]


def _run_function_loop(tmp_path, n):
    script = tmp_path / "function_loop.py"
    script.write_text(FUNCTION_LOOP)
    out = tmp_path / f"function-{n}"
    proc = run_mpi(script, n, [out], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(open(f"{out}.{r}.json").read()) for r in range(n)]


def test_tf_function_custom_loop_in_one_process_equals_the_eager_loop(function_one_process):
    r = function_one_process
    for got, want in zip(r["function"]["final"], r["eager"]["final"]):
        assert _close(got, want), (got, want)
    assert _close(r["function"]["losses"], r["eager"]["losses"])
    assert sum(r["eager"]["losses"][-5:]) < sum(r["eager"]["losses"][:5])     # it trained
    assert _close(r["function"]["means"], r["global_means"])
    assert r["grad"] == [[1.0, 1.0]] * 2


@pytest.mark.parametrize("n", [2, 3])
def test_tf_function_custom_loop_equals_the_eager_loop_and_one_process(tmp_path, function_one_process, n):
    runs = _run_function_loop(tmp_path, n)
    for r in runs[1:]:   # bit-identical replicas
        assert r["function"]["final"] == runs[0]["function"]["final"]
        assert r["function"]["losses"] == runs[0]["function"]["losses"]
    for r in runs:
        for got, want in zip(r["function"]["final"], r["eager"]["final"]):
            assert _close(got, want), (got, want)
        for got, want in zip(r["function"]["final"], function_one_process["eager"]["final"]):
            assert _close(got, want), (got, want)
        assert _close(r["function"]["losses"], function_one_process["eager"]["losses"])
        assert _close(r["function"]["means"], r["global_means"])
    # d/dv sum_q (q + 1) * allreduce((r + 1) v) on rank r: (r + 1) * sum_q (q + 1)
    total = sum(q + 1.0 for q in range(n))
    assert [r["grad"] for r in runs] == [[[(k + 1.0) * total] * 2] * 2 for k in range(n)]


def test_mpiexec_comes_with_the_package():
    from tapeflow.distribute.testing import mpiexec

    out = subprocess.run([mpiexec(), "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "HYDRA" in out.stdout.upper()


TWO_GRADIENTS = textwrap.dedent("""
    import json, sys
    import tapeflow as tf
    from tapeflow.distribute import _overlap

    out, overlap = sys.argv[1], sys.argv[2] == "1"
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(overlap_backward=overlap))
    rank = strategy.cluster_resolver.task_id
    served, match = [], _overlap.Step.match

    def record_match(self, *args):
        got = match(self, *args)
        served.append(got is not None)
        return got

    _overlap.Step.match = record_match
    tf.random.set_seed(3)
    with strategy.scope():
        g_w = tf.Variable(tf.random.normal([4, 4]), name="generator")
        d_w = tf.Variable(tf.random.normal([4, 1]), name="discriminator")
    x = tf.random.stateless_normal([6, 4], seed=[rank, 1])

    def step():   # a GAN's shape: two gradients of one persistent tape, then their two updates
        with tf.GradientTape(persistent=True) as tape:
            d = tf.matmul(tf.tanh(tf.matmul(x, g_w)), d_w)
            d_loss = tf.distribute.compute_average_loss(tf.reshape(tf.square(d - 1.0), [-1]), global_batch_size=12)
            g_loss = tf.distribute.compute_average_loss(tf.reshape(tf.square(d), [-1]), global_batch_size=12)
        gd = tape.gradient(d_loss, [d_w])
        gg = tape.gradient(g_loss, [g_w])
        ctx = tf.distribute.get_replica_context()
        for v, g in zip([d_w, g_w], ctx.all_reduce("SUM", gd) + ctx.all_reduce("SUM", gg)):
            v.assign_sub(0.1 * g)

    for _ in range(3):
        strategy.run(step)
    with open(f"{out}.{rank}.json", "w") as f:
        json.dump({"final": [g_w.numpy().tolist(), d_w.numpy().tolist()], "served": served}, f)
""")


def test_two_gradients_of_one_tape_are_each_summed_during_the_backward_pass(tmp_path):
    script = tmp_path / "two.py"
    script.write_text(TWO_GRADIENTS)
    runs = {}
    for overlap in (1, 0):
        proc = run_mpi(script, 2, [tmp_path / f"out{overlap}", overlap], timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        runs[overlap] = [json.loads((tmp_path / f"out{overlap}.{r}.json").read_text()) for r in range(2)]
    # each step's two all_reduce calls both took sums made during tape.gradient (the older gradient's too)
    assert [r["served"].count(True) for r in runs[1]] == [6, 6]
    assert runs[1][0]["final"] == runs[1][1]["final"] == runs[0][0]["final"]
