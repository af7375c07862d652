"""The graph executor (function.Plan): runs of kernels of known shapes run as one C call (csrc/executor.c)
with the general loop's results, bit for bit; buffers that never leave a run are reused from call to call."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.testing import seeded_rng

ON_CPU = tf.constant(0.0)._dev.kind == "cpu"


@pytest.fixture
def options():
    saved = tf.config.optimizer.get_experimental_options()
    yield tf.config.optimizer.set_experimental_options
    tf.config.optimizer.set_experimental_options(saved)


def _items(cf):
    """The executor's items: 'C' for a run of kernels (with its length), else the primitive's name."""
    plan = cf._plan
    out = []
    for call, ins, _, _, k in plan.fast:
        out.append(f"C{call.n}" if ins is None else plan.steps[k][6].prim.name)
    return out


def _both(fn, *args):
    specs = [tf.TensorSpec(a.shape, a.dtype) for a in args]
    tf.config.optimizer.set_experimental_options({"kernel_executor": True})
    on = tf.function(fn).get_concrete_function(*specs)
    tf.config.optimizer.set_experimental_options({"kernel_executor": False})
    off = tf.function(fn).get_concrete_function(*specs)
    tf.config.optimizer.set_experimental_options({"kernel_executor": True})
    return on, off


def _same(a, b):
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        x, y = x.numpy(), y.numpy()
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def linreg_step(W, B, lr=0.01):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * lr)
        B.assign_sub(dB * lr)
        return loss
    return step


def test_linreg_step_runs_its_kernels_in_one_call_and_ends_where_the_general_loop_does(options):
    rng = seeded_rng("executor::linreg")
    xs = tf.constant(rng.standard_normal(2000), tf.float32)
    ys = xs * 3.0 + 2.0 + tf.constant(rng.standard_normal(2000), tf.float32)
    results = []
    for on in (True, False):
        options({"kernel_executor": on})
        W, B = tf.Variable(5.0), tf.Variable(10.0)
        step = tf.function(linreg_step(W, B))
        losses = [step(xs, ys).numpy() for _ in range(50)]
        results.append((np.array(losses), W.numpy(), B.numpy()))
        items = _items(step.get_concrete_function(xs, ys))
        if on and ON_CPU:  # the fused kernel (with its three reductions) and the two scaled gradients: one call
            assert items == ["read_variable", "read_variable", "C3", "variable_update", "variable_update"]
        else:
            assert not any(i.startswith("C") for i in items)
    (l1, w1, b1), (l2, w2, b2) = results
    assert l1.tobytes() == l2.tobytes() and w1 == w2 and b1 == b2
    assert abs(float(w1) - 3.0) < 1.0  # it trains


@pytest.mark.skipif(not ON_CPU, reason="the C executor runs CPU kernels; other devices use the general loop")
def test_results_of_several_calls_do_not_share_buffers(options):
    def f(x):
        a = tf.exp(x) * 2.0          # fused kernel: a never leaves the run (an internal buffer, reused)
        b = tf.reduce_sum(a * a)
        return a + 1.0, b * 0.5      # two outputs leaving the run

    x1 = tf.constant(seeded_rng("executor::a").standard_normal(1000), tf.float32)
    x2 = tf.constant(seeded_rng("executor::b").standard_normal(1000), tf.float32)
    on, off = _both(f, x1)
    assert all(i.startswith("C") for i in _items(on))
    r1 = on(x1)
    keep = [t.numpy().copy() for t in r1]
    r2 = on(x2)
    assert [t.numpy().tobytes() for t in r1] == [k.tobytes() for k in keep]  # the first call's results stay
    _same(r1, off(x1))
    _same(r2, off(x2))


@pytest.mark.skipif(not ON_CPU, reason="the C executor runs CPU kernels; other devices use the general loop")
def test_lone_elementwise_ops_and_fused_kernels_between_other_ops(options):
    def f(x, m):
        a = tf.nn.relu(x) * 3.0 + 1.0      # fused
        b = tf.matmul(m, m)                # not a kernel the executor runs
        c = tf.sqrt(b + 1.0)               # fused (two ops)
        d = tf.reduce_max(a) - 1.0         # max ends the first kernel; the subtraction is a lone op
        return c * d, tf.cast(c > 2.0, tf.float32)

    x = tf.constant(seeded_rng("executor::x").standard_normal(257), tf.float32)
    m = tf.constant(seeded_rng("executor::m").standard_normal((3, 3)), tf.float32)
    on, off = _both(f, x, m)
    _same(on(x, m), off(x, m))
    assert "matmul" in _items(on) and any(i.startswith("C") for i in _items(on))


@pytest.mark.skipif(not ON_CPU, reason="the C executor runs CPU kernels; other devices use the general loop")
def test_threads_calling_one_function_at_once(options):
    f = tf.function(lambda x: tf.reduce_sum(tf.tanh(x * 2.0) * x) + tf.reduce_max(x) * 0.5)
    xs = [tf.constant(seeded_rng(f"executor::t{i}").standard_normal(5000), tf.float32) for i in range(4)]
    want = [f(x).numpy() for x in xs]
    got = {}

    def work(i):
        for _ in range(50):
            r = f(xs[i]).numpy()
            if r != want[i]:
                got[i] = r
                return
        got.setdefault(i, None)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == {i: None for i in range(4)}


def test_unknown_dimensions_and_tapes_use_the_general_loop(options):
    f = tf.function(lambda x: tf.exp(x) * 2.0 + 1.0, input_signature=[tf.TensorSpec([None], tf.float32)])
    cf = f.get_concrete_function()
    assert not any(i.startswith("C") for i in _items(cf))
    x = tf.constant([0.5, 1.5])
    g = tf.function(lambda x: tf.exp(x) * 2.0 + 1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = g(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2.0 * np.exp([0.5, 1.5]), rtol=1e-6)
    assert f(x).numpy().tolist() == g(x).numpy().tolist()


@pytest.mark.skipif(not ON_CPU, reason="the C executor runs CPU kernels; other devices use the general loop")
def test_tensors_inside_a_run_share_buffers_by_the_memory_plan(options):
    options({"elementwise_fusion": False})  # eight lone ops: seven tensors that never leave the run

    def chain(x):
        return tf.exp(tf.tanh(tf.sqrt(tf.abs(x * 2.0) + 1.0)) - 0.5) * 3.0

    x = tf.constant(seeded_rng("executor::chain").standard_normal(1000), tf.float32)
    planned = tf.function(chain).get_concrete_function(x)
    (seg, *_), = planned._plan.fast
    assert seg.n == 8 and len(seg.internal) == 7 and seg.sizes == [4000, 4000]  # two buffers take turns
    options({"memory_optimizer": False})
    unplanned = tf.function(chain).get_concrete_function(x)
    (useg, *_), = unplanned._plan.fast
    assert useg.sizes == [4000] * 7
    options({"elementwise_fusion": True})
    _same(planned(x), tf.function(chain).get_concrete_function(x)(x))
    _same(planned(x), unplanned(x))


def test_every_backend_runs_the_executor_loop_alike():
    # two fused programs over a slot table: y = relu(x * 2 + bias) (bias repeats every 4), s = sum(y * y)
    from tapeflow import kernels
    from tapeflow.kernels import gpu_fused

    U, B, F32 = 0, 1, 2
    mul, add = gpu_fused._op(B, "mul"), gpu_fused._op(B, "add")
    relu, square = gpu_fused._op(U, "relu"), gpu_fused._op(U, "square")
    prog1 = [B, mul, F32, 3, 0, 1, 0, B, add, F32, 4, 3, 2, 0, U, relu, F32, 5, 4, 0, 0]
    prog2 = [U, square, F32, 1, 0, 0, 0]
    # slots: 0 x, 1 two, 2 bias, 3 y, 4 s
    ints1 = [3, 6, 3, 1, 0, 0, 1, 2, 3, 5]
    ints2 = [1, 2, 1, 0, 1, 3, 0, 1, 4]  # no output written, register 1 summed into slot 4
    rng = seeded_rng("executor::backends")
    x = rng.standard_normal(1000).astype(np.float32)
    host = [x, np.float32(2.0).reshape(()), rng.standard_normal(4).astype(np.float32), np.zeros(1000, np.float32),
            np.zeros((), np.float32)]
    results = {}
    for name in ("cpu", "opencl"):
        try:
            be = kernels.get_backend(name)
        except kernels.BackendUnavailable:
            continue
        hs = [be.from_numpy(a) for a in host]
        if name == "cpu":
            ffi = be.ffi
            keep = [ffi.new("int32_t[]", prog1), ffi.new("int32_t[]", prog2), ffi.new("double[]", [0.0] * 3),
                    ffi.new("double[]", [0.0]), ffi.new("int32_t[]", [F32] * 6), ffi.new("int32_t[]", [F32] * 2),
                    ffi.new("int64_t[]", [0, 1, 4]), ffi.new("int64_t[]", [0]), ffi.new("int32_t[]", ints1),
                    ffi.new("int32_t[]", ints2)]
            args = (2, ffi.new("int32_t *[]", keep[0:2]), ffi.new("double *[]", keep[2:4]),
                    ffi.new("int32_t *[]", keep[4:6]), ffi.new("int64_t *[]", keep[6:8]),
                    ffi.new("int64_t[]", [1000] * 2), ffi.new("int32_t *[]", keep[8:10]),
                    ffi.new("void *[]", [h for h, _ in hs]), 5, ffi.new("int32_t[1]"))
        else:
            args = (2, [prog1, prog2], [[0.0] * 3, [0.0]], [[F32] * 6, [F32] * 2], [[0, 1, 4], [0]], [1000] * 2,
                    [ints1, ints2], [h for h, _ in hs], 5, [0])
        assert be.exec_fused(*args) == 0
        results[name] = [be.to_numpy(h, hst, a.shape, a.dtype).copy() for (h, hst), a in zip(hs[3:], host[3:])]
    y = np.maximum(x * np.float32(2) + np.tile(host[2], 250), 0)
    np.testing.assert_array_equal(results["cpu"][0], y)
    np.testing.assert_allclose(results["cpu"][1], np.sum(y.astype(np.float64) ** 2), rtol=1e-6)
    for name, (y_dev, s_dev) in results.items():  # the GPU's generated kernels: within an ulp
        np.testing.assert_array_max_ulp(y_dev, results["cpu"][0], maxulp=1)
        np.testing.assert_allclose(s_dev, results["cpu"][1], rtol=1e-6)
