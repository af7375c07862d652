"""The C fast path of small CPU ops (issue 16 item 2; tapeflow.kernels._fastpath over core/ops/_ew.py):
what it runs equals the Python path bit for bit (values, dtype, shape, device, the recorder's report),
and everything else, errors included, falls back to the Python path.  ``TAPEFLOW_C_FASTPATH=0`` or
``_ew.use_c_fast_path(False)`` turns it off; test_fast_dispatch.py and test_matmul_fast_path.py run
their hot-path tests both ways.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core import dispatch
from tapeflow.core.ops import _ew, math_ops
from tapeflow.core.runner import PRIMITIVES

REAL = ["float32", "float64", "int8", "uint8", "int16", "int32", "int64"]


@pytest.fixture
def c_path():
    """The C fast path on, and new tensors on the CPU (the opencl leg's default device is not)."""
    assert _ew.use_c_fast_path(True), "the kernels were built without tapeflow.kernels._fastpath"
    yield
    _ew.use_c_fast_path(True)


def _cpu(value, dtype=None):
    with tf.device("cpu:0"):
        return tf.constant(value, dtype)


def _ones(*shape):
    return _cpu(np.ones(shape, "f4"))


def _both(fn):
    """fn() with the C fast path, then with the Python path only."""
    assert _ew.use_c_fast_path(True)
    try:
        fast = fn()
        _ew.use_c_fast_path(False)
        slow = fn()
    finally:
        _ew.use_c_fast_path(True)
    return fast, slow


def _same(fast, slow):
    assert type(fast) is type(slow) is tf.Tensor
    assert fast.dtype == slow.dtype and fast.shape == slow.shape and fast.device == slow.device
    np.testing.assert_array_equal(fast.numpy(), slow.numpy())
    assert fast.numpy().tobytes() == slow.numpy().tobytes()   # -0.0 and NaN payloads too


def _samples(dtype, shape, rng):
    if dtype.startswith("float"):
        a = rng.standard_normal(shape).astype(dtype) * 3
        if a.size > 2:
            a.flat[0], a.flat[1] = -0.0, np.nan
        return a
    lo, hi = (0, 9) if dtype == "uint8" else (-9, 9)
    return rng.integers(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), ()), ((), (3, 4)), ((2, 3), (1,)), ((0, 2), (0, 2)),
                                    ((3, 4), (4,)), ((1,), (2, 1, 3))])
def test_binary_ops_equal_the_python_path(c_path, dtype, shapes):
    rng = np.random.default_rng(0)
    x, y = _cpu(_samples(dtype, shapes[0], rng)), _cpu(_samples(dtype, shapes[1], rng))
    ops = [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.minimum, tf.less, tf.equal, tf.greater_equal]
    ops += [tf.math.divide] if dtype.startswith("float") else [math_ops.bitwise_and]
    for op in ops:
        _same(*_both(lambda: op(x, y)))


@pytest.mark.parametrize("dtype", REAL + ["bool"])
def test_unary_ops_equal_the_python_path(c_path, dtype):
    rng = np.random.default_rng(1)
    x = _cpu(_samples(dtype, (5, 3), rng) if dtype != "bool" else rng.integers(0, 2, (5, 3)) > 0)
    if dtype == "bool":
        ops = [tf.logical_not]
    elif dtype.startswith("float"):
        ops = [tf.negative, tf.abs, tf.exp, tf.sin, tf.nn.relu, tf.math.is_nan, tf.sigmoid, tf.tanh,
               lambda v: tf.nn.leaky_relu(v, 0.3), lambda v: tf.nn.elu(v)]
    else:
        ops = [tf.negative, tf.abs, tf.square, tf.sign]
    for op in ops:
        _same(*_both(lambda: op(x)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_equals_the_python_path(c_path, dtype, ta, tb):
    rng = np.random.default_rng(2)
    a = _cpu(rng.standard_normal((4, 3) if ta else (3, 4)).astype(dtype))
    b = _cpu(rng.standard_normal((5, 4) if tb else (4, 5)).astype(dtype))
    _same(*_both(lambda: tf.matmul(a, b, transpose_a=ta, transpose_b=tb)))
    _same(*_both(lambda: tf.matmul(_cpu(np.zeros((0, 2), dtype)), _cpu(np.zeros((2, 3), dtype)))))


def test_the_c_path_runs_the_plain_cases_and_declines_the_rest(c_path):
    """Called directly: a Tensor for two plain CPU tensors, None for what only the Python path does."""
    add, exp = PRIMITIVES["add"], PRIMITIVES["exp"]
    code, ecode = _ew.BIN["add"], _ew.UN["exp"]
    a, h = _cpu([1.0, 2.0]), _cpu([1.0, 2.0], tf.float16)
    out = _ew.fast_binary("add", code, add.mask, False, a, a)
    assert type(out) is tf.Tensor and out.numpy().tolist() == [2.0, 4.0] and out.device == a.device
    assert _ew.fast_unary("exp", ecode, exp.mask, False, 0.0, None, a).numpy().tolist() == \
        tf.exp(a).numpy().tolist()
    assert _ew.fast_matmul(_ones(2, 3), _ones(3, 2), False, False).numpy().tolist() == [[3.0, 3.0]] * 2
    declined = [
        _ew.fast_binary("add", code, add.mask, False, a, 1.0),                   # a Python scalar: converted first
        _ew.fast_binary("add", code, add.mask, False, a, np.ones(2, "f4")),      # a NumPy operand
        _ew.fast_binary("add", code, add.mask, False, h, h),                     # float16 computes in float32
        _ew.fast_binary("add", code, add.mask, False, a, _cpu([1.0], tf.float64)),  # dtype mismatch: error
        _ew.fast_binary("add", code, add.mask, False, _ones(2, 3), _ones(3)),      # strided broadcast
        _ew.fast_binary("add", code, 0, False, a, a),                            # dtype not allowed: error
        _ew.fast_binary("floordiv", _ew.BIN["floordiv"], PRIMITIVES["floordiv"].mask, False,
                        _cpu([1, 2]), _cpu([1, 0])),                             # kernel status: the op's error
        _ew.fast_binary("add", code, add.mask, False, tf.Variable(a), a),        # a Variable: a recorded read
        _ew.fast_binary("add", code, add.mask, False, _ones(40000), _ones(40000)),  # the caching allocator's
        _ew.fast_matmul(_ones(2, 2, 2), _ones(2, 2, 2), False, False),    # batched
        _ew.fast_matmul(_ones(2, 3), _ones(2, 3), False, False),          # inner dims differ: error
        _ew.fast_matmul(_cpu([[1]]), _cpu([[1]]), False, False),   # integers
    ]
    assert declined == [None] * len(declined)
    with tf.device("cpu:0"):   # a device scope places: the Python path
        assert _ew.fast_binary("add", code, add.mask, False, a, a) is None
        assert _ew.fast_unary("exp", ecode, exp.mask, False, 0.0, None, a) is None
    seen = []

    @tf.function
    def f(x):
        seen.append(_ew.fast_binary("add", code, add.mask, False, a, a))   # tracing: symbolic outputs
        return x + x

    f(a)
    assert seen == [None]


def test_errors_are_the_python_paths(c_path):
    for fn, pattern in [(lambda: tf.math.floordiv(tf.constant([1, 2]), tf.constant([1, 0])),
                         r"division by zero.*\[Op:FloorDiv\]"),
                        (lambda: tf.add(tf.constant([1.0]), tf.constant([1.0], tf.float64)), r"\[Op:AddV2\]"),
                        (lambda: tf.add(tf.ones([2]), tf.ones([3])), r"incompatible shapes.*\[Op:AddV2\]"),
                        (lambda: tf.matmul(tf.ones([2, 3]), tf.ones([2, 3])), r"inner dimensions.*\[Op:MatMul\]"),
                        (lambda: tf.logical_not(tf.ones([2])), r"\[Op:LogicalNot\]")]:
        msgs = []
        for on in (True, False):
            _ew.use_c_fast_path(on)
            with pytest.raises(tf.errors.InvalidArgumentError, match=pattern) as e:
                fn()
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_the_recorder_hears_the_same(c_path):
    def run():
        seen = []
        sub = dispatch.hooks.subscribe(lambda op, ins, out, attrs: seen.append(
            (op, tuple(i.numpy().tolist() for i in ins), out.numpy().tolist(), attrs)))
        try:
            a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            tf.matmul(a, tf.exp(a - a), transpose_b=True)
            tf.nn.leaky_relu(-a, 0.5)
            tf.less(a, a * a)
        finally:
            sub.remove()
        return seen

    fast, slow = _both(run)
    assert fast == slow and [s[0] for s in fast] == ["subtract", "exp", "matmul", "negative", "leaky_relu",
                                                    "multiply", "less"]
    assert fast[2][3] == {"transpose_a": False, "transpose_b": True}


def test_device_scopes_are_per_thread(c_path):
    """Another thread's device scope does not turn this thread's fast path off, nor the reverse."""
    a = _cpu([1.0, 2.0])
    code, mask = _ew.BIN["add"], PRIMITIVES["add"].mask
    inside, entered, done = [], threading.Event(), threading.Event()

    def other():
        with tf.device("cpu:0"):
            inside.append(_ew.fast_binary("add", code, mask, False, a, a))
            entered.set()
            done.wait(10)

    t = threading.Thread(target=other)
    t.start()
    entered.wait(10)
    try:
        assert _ew.fast_binary("add", code, mask, False, a, a) is not None
    finally:
        done.set()
        t.join()
    assert inside == [None]


def test_env_switch_turns_it_off():
    code = ("import tapeflow as tf; from tapeflow.core.ops import _ew; tf.constant(1.0) + 1.0; "
            "print(_ew.fast_binary is None, (tf.constant([1.0]) + tf.constant([2.0])).numpy().tolist())")
    for value, off in (("0", "True"), ("1", "False")):
        env = dict(os.environ, TAPEFLOW_C_FASTPATH=value, TAPEFLOW_DEVICE="cpu:0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.split() == [off, "[3.0]"]


def test_outputs_own_their_memory(c_path):
    """Each output is a fresh buffer that outlives its inputs (no reuse while referenced)."""
    outs = []
    for i in range(200):
        x = tf.constant([float(i), 1.0])
        outs.append(x + x)
    assert [o.numpy().tolist() for o in outs] == [[2.0 * i, 2.0] for i in range(200)]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_converted_operands_equal_the_python_path(c_path, dtype):
    """A Python number, a NumPy array or a Variable is converted by the Python path, then the C path runs the op."""
    x = _cpu(np.arange(6).reshape(2, 3).astype(dtype))
    with tf.device("cpu:0"):
        v = tf.Variable(np.full((2, 3), 3, dtype))

    def run():
        seen = []
        sub = dispatch.hooks.subscribe(lambda op, ins, out, attrs: seen.append((op, len(ins))))
        try:
            outs = [x * 2, 3 - x, x + np.ones(3, dtype), v * x, tf.maximum(x, v), x < 4]
        finally:
            sub.remove()
        return outs, seen

    (fast, seen_fast), (slow, seen_slow) = _both(run)
    for f, s in zip(fast, slow):
        _same(f, s)
    assert seen_fast == seen_slow
