"""The element-wise hot path (issue 16 item 2): two CPU tensors of one real dtype and one shape (or one CPU
tensor for a unary op) go straight to the kernel, without the general path's conversion, placement,
broadcasting and half/complex/string dispatch; it gives what the general path gives.
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core import dispatch
from tapeflow.core.ops import _ew

DTYPES = ["float32", "float64", "int8", "uint8", "int16", "int32", "int64"]


@pytest.fixture(autouse=True, params=["c", "python"])
def hot_path(request):
    """Each test twice: with the C fast path (tapeflow.kernels._fastpath) and with the Python hot path alone."""
    from tapeflow.core.ops import _ew

    _ew.use_c_fast_path(request.param == "c")
    yield request.param
    _ew.use_c_fast_path(True)


@pytest.fixture
def no_general_path(monkeypatch):
    """The general path's kernels raise: only the hot path may run."""
    def boom(*a, **k):
        raise AssertionError("the general path ran")

    monkeypatch.setattr(_ew, "binary_kernel", boom)
    monkeypatch.setattr(_ew, "unary_eager", boom)


def test_same_shape_binary_and_unary_skip_the_general_path(no_general_path):
    with tf.device("cpu:0"):  # CPU tensors (the ops below run outside any device scope)
        a, z, i = tf.constant([1.0, 2.0]), tf.zeros([2, 3]), tf.constant([3, 4])
    assert (a + a).numpy().tolist() == [2.0, 4.0]
    assert tf.maximum(a, a * 2.0).numpy().tolist() == [2.0, 4.0]
    assert tf.less(a, a + 1.0).numpy().tolist() == [True, True]
    assert tf.negative(a).numpy().tolist() == [-1.0, -2.0]
    assert tf.exp(z).numpy().tolist() == [[1.0] * 3] * 2
    assert (i * i).numpy().tolist() == [9, 16] and tf.abs(-i).numpy().tolist() == [3, 4]


@pytest.mark.parametrize("dtype", DTYPES)
def test_hot_path_equals_the_general_path(dtype):
    rng = np.random.default_rng(0)
    x = tf.constant((rng.uniform(1, 9, (3, 4))).astype(dtype))
    y = tf.constant((rng.uniform(1, 9, (3, 4))).astype(dtype))
    ops = [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.minimum, tf.less, tf.equal, tf.math.floordiv]
    for op in ops:
        fast = op(x, y)
        with tf.device("cpu:0"):  # a device scope takes the general path
            slow = op(x, y)
        assert fast.dtype == slow.dtype and fast.shape == slow.shape
        np.testing.assert_array_equal(fast.numpy(), slow.numpy())
    for op in (tf.negative, tf.abs, tf.square):
        fast = op(x)
        with tf.device("cpu:0"):
            slow = op(x)
        np.testing.assert_array_equal(fast.numpy(), slow.numpy())


def test_hot_path_errors_are_typed():   # (its recording under a tape: tests/test_core_with_tapes.py)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"division by zero.*\[Op:FloorDiv\]"):
        tf.math.floordiv(tf.constant([1, 2]), tf.constant([1, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:AddV2\]"):
        tf.add(tf.constant([1.0]), tf.constant([1.0], tf.float64))


def test_hot_path_under_tracing_and_recorders():
    seen = []
    sub = dispatch.hooks.subscribe(lambda op, ins, out, attrs: seen.append(op))
    try:
        a = tf.constant([1.0, 2.0])
        tf.add(a, a)
        tf.sqrt(a)
    finally:
        sub.remove()
    assert seen == ["add", "sqrt"]

    @tf.function
    def f(x):
        return tf.exp(x + x)

    np.testing.assert_allclose(f(tf.constant([0.5])).numpy(), np.exp([1.0]), rtol=1e-6)
