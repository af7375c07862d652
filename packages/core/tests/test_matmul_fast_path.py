"""The matmul hot path (issue 16 item 2): two 2-D CPU tensors of one float dtype, outside any device scope
and any trace, go straight to the GEMM kernel without the general path's plan and placement; it gives
what the general path gives, is recorded on tapes (tests/test_core_with_tapes.py), and everything else still
takes the general path."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.ops import math_ops


@pytest.fixture(autouse=True, params=["c", "python"])
def hot_path(request):
    """Each test twice: with the C fast path (tapeflow.kernels._fastpath) and with the Python hot path alone."""
    from tapeflow.core.ops import _ew

    _ew.use_c_fast_path(request.param == "c")
    yield request.param
    _ew.use_c_fast_path(True)


@pytest.fixture
def count_general(monkeypatch):
    """How many times the general path's eager matmul runs."""
    calls = []
    real = math_ops._matmul_eager

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(math_ops, "_matmul_eager", counted)
    return calls


def _cpu(x, dtype="float32"):
    with tf.device("cpu:0"):
        return tf.constant(np.asarray(x, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flags", [{}, {"transpose_a": True}, {"transpose_b": True},
                                   {"transpose_a": True, "transpose_b": True}, {"adjoint_a": True},
                                   {"adjoint_b": True}])
def test_2d_float_matmul_skips_the_general_path(count_general, dtype, flags):
    rng = np.random.default_rng(1)
    a_np, b_np = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
    if flags.get("transpose_a") or flags.get("adjoint_a"):
        a_np = np.ascontiguousarray(a_np.T)
    if flags.get("transpose_b") or flags.get("adjoint_b"):
        b_np = np.ascontiguousarray(b_np.T)
    a, b = _cpu(a_np, dtype), _cpu(b_np, dtype)
    fast = tf.matmul(a, b, **flags)
    assert count_general == []
    with tf.device("cpu:0"):  # a device scope takes the general path
        slow = tf.matmul(a, b, **flags)
    assert count_general == [1]
    assert fast.shape == slow.shape == (3, 5) and fast.dtype == slow.dtype == tf.as_dtype(dtype)
    np.testing.assert_array_equal(fast.numpy(), slow.numpy())


def test_other_cases_take_the_general_path(count_general):
    a3, i2 = _cpu(np.ones((2, 2, 2))), _cpu([[1, 2], [3, 4]], "int32")
    assert tf.matmul(a3, a3).shape == (2, 2, 2)          # batched
    assert tf.matmul(i2, i2).numpy().tolist() == [[7, 10], [15, 22]]  # integers
    assert len(count_general) == 2
    a = _cpu([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"inner dimensions differ.*\[Op:MatMul\]"):
        tf.matmul(a, _cpu(np.ones((3, 2))))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"MatMul"):
        tf.matmul(a, _cpu([[1.0, 2.0]], "float64"))


def test_empty_inner_dimension_gives_zeros():
    out = tf.matmul(_cpu(np.ones((2, 0))), _cpu(np.ones((0, 3))))
    assert out.shape == (2, 3) and out.numpy().tolist() == [[0.0] * 3] * 2
