"""Tensors on opencl:0 whose tiny ops run on the host mirror (issue 16 item 5): placement, values,
gradients and the hand-over to device kernels are those of the device path."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.kernels as K
from tapeflow.kernels import opencl

pytestmark = pytest.mark.skipif(opencl.device_count() == 0, reason="this machine has no OpenCL device")


@pytest.fixture
def be():
    be = K.get_backend("opencl")
    before = be.set_host_ops(1024)
    yield be
    be.set_host_ops(before)


def train(be, host_ops):
    """A few SGD steps of a tiny model on opencl:0 mixing host-path ops and device kernels."""
    be.set_host_ops(host_ops)
    with tf.device("opencl:0"):
        x = tf.constant(np.linspace(-1, 1, 16).astype(np.float32))
        y = tf.constant(np.linspace(0, 3, 16).astype(np.float32))
        w, b = tf.Variable(0.5), tf.Variable(-0.25)
        for _ in range(5):
            with tf.GradientTape() as tape:
                err = x * w + b - y
                loss = tf.reduce_mean(err * err)
            gw, gb = tape.gradient(loss, [w, b])
            w.assign_sub(gw * 0.1)
            b.assign_sub(gb * 0.1)
        scaled = tf.exp(tf.abs(-(x * 2.0)) - 1.0)   # host ops feeding device kernels
    return [t.numpy() for t in (loss, w, b, scaled)], [t.device for t in (loss, w, b, scaled, err)]


def test_tiny_ops_run_on_the_host_and_keep_the_device_and_the_values(be):
    with tf.device("opencl:0"):
        a = tf.constant([1.5, -2.0, 3.25])
        one = tf.constant(1.0)   # (a Python scalar would come from core's cache, made under any setting)
        host_ops, launches = be.stats["host_ops"], be.stats["launches"]
        c = a * a + a - one
        assert be.stats["host_ops"] == host_ops + 3 and be.stats["launches"] == launches
    assert c.device == "opencl:0"
    np.testing.assert_array_equal(c.numpy(), np.array([1.5, -2.0, 3.25], np.float32) ** 2 + [1.5, -2.0, 3.25]
                                  - np.float32(1.0))
    before, before_devs = train(be, 0)
    host_ops = be.stats["host_ops"]
    after, after_devs = train(be, 1024)
    assert be.stats["host_ops"] > host_ops
    assert before_devs == after_devs == ["opencl:0"] * 5
    for u, v in zip(before, after):
        assert u.tobytes() == v.tobytes()   # the same bits as with every op on the device
