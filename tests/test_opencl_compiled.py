"""Compiled functions on opencl:0 (issue 15's opencl row): where a traced graph's ops run, and the values,
against eager mode on the same device."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
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
