"""Compiled functions on opencl:0 (issue 15's opencl row): where a traced graph's ops run, and the values,
against eager mode on the same device."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.kernels as K
from tapeflow.kernels import opencl

pytestmark = pytest.mark.skipif(opencl.device_count() == 0, reason="this machine has no OpenCL device")


def _mlp(seed):
    rng = np.random.default_rng(seed)
    with tf.device("opencl:0"):
        x = tf.constant(rng.standard_normal((16, 12)).astype(np.float32))
        y = tf.constant(rng.integers(0, 3, 16).astype(np.int64))
        params = [tf.Variable(rng.standard_normal((12, 8)).astype(np.float32)), tf.Variable(tf.zeros([8])),
                  tf.Variable(rng.standard_normal((8, 3)).astype(np.float32)), tf.Variable(tf.zeros([3]))]

    def step():
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, params[0]) + params[1])
            logits = tf.matmul(h, params[2]) + params[3]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.1 * g)
        return loss
    return step, params


def test_a_function_traced_outside_the_device_scope_reads_and_updates_variables_where_they_live():
    # variables on opencl:0, the function traced and called with no device scope: the reads run on the
    # variables' device (as TensorFlow colocates ReadVariableOp with the resource), so the whole step stays
    # there, as in eager mode; it used to read on the default device, copy every weight to opencl:0 and every
    # gradient back, and update the variables on the CPU
    eager, eager_params = _mlp(3)
    compiled, params = _mlp(3)
    compiled = tf.function(compiled)
    cf = compiled.get_concrete_function()
    nodes = cf.graph.nodes
    assert not [n.prim.name for n in nodes if "copy" in n.prim.name]
    reads = [n for n in nodes if n.prim.name == "read_variable"]
    assert len(reads) == 4 and all(str(n.dev) == "opencl:0" for n in reads)
    assert all(str(n.dev) == "opencl:0" for n in nodes)
    for _ in range(3):
        want, got = eager(), compiled()
        assert got.device == "opencl:0"
        assert got.numpy().tobytes() == want.numpy().tobytes()
    for p, q in zip(params, eager_params):
        assert p.device == "opencl:0"
        assert p.numpy().tobytes() == q.numpy().tobytes()


def test_a_device_scope_inside_the_function_still_moves_the_read_value():
    with tf.device("opencl:0"):
        v = tf.Variable([1.5, -2.0])

    @tf.function
    def f():
        with tf.device("cpu:0"):
            return v * 2.0

    out = f()
    assert out.device == "cpu:0"
    np.testing.assert_array_equal(out.numpy(), [3.0, -4.0])
    read = [n for n in f.get_concrete_function().graph.nodes if n.prim.name == "read_variable"]
    assert [str(n.dev) for n in read] == ["opencl:0"]


def _cases():
    rng = np.random.default_rng(5)
    f = rng.standard_normal(6).astype(np.float32)
    i = rng.integers(-9, 9, 6).astype(np.int32)
    return [
        ("add", lambda x, y: x + y, f, f[::-1].copy()),
        ("scalar on the right", lambda x, y: x * y, f, np.float32(1.5)),
        ("scalar on the left", lambda x, y: y - x, f, np.float32(0.25)),
        ("comparison", lambda x, y: tf.less(x, y), f, f[::-1].copy()),
        ("int floordiv (on the device)", lambda x, y: x // y, i, np.where(i == 0, 3, i).astype(np.int32)),
        ("float64 div", lambda x, y: x / y, f.astype(np.float64), np.float64(3.0)),
        ("unary", lambda x, y: tf.abs(x), f, f),
        ("a fused chain (on the device)", lambda x, y: tf.abs(-x) + tf.square(y), f, f),
        ("exp (on the device)", lambda x, y: tf.exp(x) * y, f, f),
        ("big (on the device)", lambda x, y: tf.maximum(x, y) - x,
         np.linspace(-1, 1, 5000).astype(np.float32), np.float32(0.5)),
        ("matmul", lambda x, y: tf.matmul(x, y), f.reshape(2, 3), f.reshape(3, 2)),
        ("matmul transposed", lambda x, y: tf.matmul(x, y, transpose_a=True), f.reshape(3, 2), f.reshape(3, 2)),
        ("batched matmul", lambda x, y: tf.matmul(x, y), f.reshape(2, 1, 3), f.reshape(2, 3, 1)),
    ]


@pytest.mark.parametrize("name, fn, x, y", _cases(), ids=[c[0] for c in _cases()])
def test_compiled_small_ops_run_their_kernels_directly_with_the_eager_values(name, fn, x, y, monkeypatch):
    # a compiled function's lone element-wise ops and matmuls on opencl:0 are pre-bound kernel calls (shapes,
    # codes and the host-mirror decision made once): no call of the primitives' Python implementations, the
    # same bits as eager mode, tiny ones on the host mirror as in eager mode
    from tapeflow.core.runner import PRIMITIVES

    be = K.get_backend("opencl")
    with tf.device("opencl:0"):
        tx, ty = tf.constant(x), tf.constant(y)
    want = fn(tx, ty)
    calls = []
    for prim in PRIMITIVES.values():
        impl = prim.impl
        monkeypatch.setattr(prim, "impl", lambda *a, _impl=impl, _n=prim.name, **k: calls.append(_n) or _impl(*a, **k))
    f = tf.function(fn)
    f.get_concrete_function(tx, ty)   # (made with the counting implementations)
    host_ops = be.stats["host_ops"]
    got = f(tx, ty)
    assert got.device == "opencl:0" and got.dtype == want.dtype and got.shape == want.shape
    assert got.numpy().tobytes() == want.numpy().tobytes()
    assert not [c for c in calls if c != "fused_elementwise"]
    if x.nbytes <= 64 and "device" not in name and "matmul" not in name:
        assert be.stats["host_ops"] > host_ops


def test_a_failing_prebound_kernel_raises_the_ops_error():
    with tf.device("opencl:0"):
        x, y = tf.constant([7, -7, 3]), tf.constant([2, 0, 1])
    f = tf.function(lambda a, b: a // b)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"(?s)integer division by zero.*FloorDiv"):
        x // y
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"(?s)integer division by zero.*FloorDiv"):
        f(x, y)
    with tf.device("opencl:0"):
        np.testing.assert_array_equal(f(x, tf.constant([2, 3, 1])).numpy(), [3, -3, 3])
