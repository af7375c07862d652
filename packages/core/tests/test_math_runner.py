"""The math family, stop_gradient, copy_to_device and check_numerics are runner primitives.

Their hand-tuned paths (element-wise ops, matmul, cast, copy) and ``runner.run`` agree: tracing
infers shapes and dtypes without running kernels, the recorder hears the op's name and attrs,
and a failed kernel is the op's typed error with its own message.
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.dispatch import hooks
from tapeflow.core.ops.grad_ops import copy_to_device
from tapeflow.core.runner import PRIMITIVES, tracing

IAE = tf.errors.InvalidArgumentError


def _symbolic(t, shape, dtype):
    assert t._h is None, f"a kernel ran while tracing: {t!r}"
    assert tuple(t.shape) == shape and t.dtype == dtype, (t.shape, t.dtype)


def test_element_wise_ops_trace_without_kernels():
    x, r = tf.ones([2, 1]), tf.ones([3])
    h = tf.ones([2], tf.float16)
    with tracing() as g:
        a = tf.add(x, r)                 # broadcast
        b = tf.exp(a)
        c = tf.less(b, 2.0)              # a Python scalar takes the tensor's dtype; bool out
        d = tf.nn.leaky_relu(b, alpha=0.1)
        e = tf.nn.gelu(h, approximate=True)
        f = tf.math.polygamma(1, b)
        k = tf.math.is_nan(h)
        m = b * 3.0 - 1.0
    for t in (a, b, d, f, m):
        _symbolic(t, (2, 3), tf.float32)
    _symbolic(c, (2, 3), tf.bool)
    _symbolic(e, (2,), tf.float16)
    _symbolic(k, (2,), tf.bool)
    assert [n.prim.name for n in g.nodes] == ["add", "exp", "less", "leaky_relu", "gelu", "polygamma", "is_nan",
                                              "multiply", "subtract"]
    assert g.nodes[3].attrs == {"alpha": pytest.approx(0.1)} and g.nodes[4].attrs == {"approximate": True}


def test_matmul_cast_argmax_stop_gradient_and_copy_trace_without_kernels():
    a, b = tf.ones([5, 2, 3]), tf.ones([4, 3])
    with tracing() as g:
        m = tf.matmul(a, b, transpose_b=True)
        c = tf.cast(m, tf.float16)
        same = tf.cast(m, tf.float32)    # a cast to the same dtype is still a node while tracing
        i = tf.argmax(c, axis=-1, output_type=tf.int32)
        s = tf.stop_gradient(i)
        cp = copy_to_device(a, "cpu:0")
    _symbolic(m, (5, 2, 4), tf.float32)
    _symbolic(c, (5, 2, 4), tf.float16)
    _symbolic(same, (5, 2, 4), tf.float32)
    _symbolic(i, (5, 2), tf.int32)
    _symbolic(s, (5, 2), tf.int32)
    _symbolic(cp, (5, 2, 3), tf.float32)
    assert cp.device == "cpu:0"
    assert [(n.prim.name, n.attrs) for n in g.nodes] == [
        ("matmul", {"transpose_a": False, "transpose_b": True}), ("cast", {"dtype": tf.float16}),
        ("cast", {"dtype": tf.float32}), ("argmax", {"axis": 2, "output_type": tf.int32}),
        ("stop_gradient", None), ("copy_to_device", {"device": "cpu:0"})]


def test_shape_errors_are_raised_while_tracing():
    with tracing():
        sym = tf.exp(tf.ones([2, 3]))
        with pytest.raises(IAE, match=r"incompatible shapes: \(2, 3\) vs. \(4,\).*\[Op:AddV2\]"):
            tf.add(sym, tf.ones([4]))
        with pytest.raises(IAE, match=r"inner dimensions differ.*\[Op:MatMul\]"):
            tf.matmul(sym, sym)


def test_host_values_of_symbolic_tensors_are_one_type_error():
    with tracing():
        order = tf.cast(tf.exp(tf.ones([])), tf.int32)
        alpha = tf.exp(tf.ones([]))
        with pytest.raises(TypeError, match=r"a needs a static value while tracing.*\[Op:Polygamma\]"):
            tf.math.polygamma(order, tf.ones([2]))
        with pytest.raises(TypeError, match=r"alpha needs a static value while tracing.*\[Op:LeakyRelu\]"):
            tf.nn.leaky_relu(tf.ones([2]), alpha=alpha)
    # eager tensors are fine
    assert tf.math.polygamma(tf.constant(0), tf.constant([1.0])).numpy().tolist() == pytest.approx([-0.5772157])
    assert tf.nn.leaky_relu(tf.constant([-1.0]), alpha=tf.constant(0.5)).numpy().tolist() == [-0.5]


def test_the_recorder_hears_each_primitive_once_with_its_attrs():
    seen = []
    sub = hooks.subscribe(lambda op, inputs, out, attrs: seen.append((op, attrs)))
    try:
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        tf.matmul(x, x, adjoint_a=True)
        tf.cast(x, tf.int32)
        tf.argmin(x, axis=0)
        tf.debugging.check_numerics(x, "x")   # its own is_finite/reduce_any checks are not reported
        tf.add(x, 1.0)
    finally:
        sub.remove()
    assert seen == [("matmul", {"transpose_a": True, "transpose_b": False}), ("cast", {"dtype": tf.int32}),
                    ("argmin", {"axis": 0, "output_type": tf.int64}), ("check_numerics", {"message": "x"}),
                    ("add", None)]


def test_runner_run_of_a_math_primitive_equals_its_fast_path():
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    for name, args, want in [("add", (x, x), tf.add(x, x)), ("exp", (x,), tf.exp(x)),
                             ("less", (x, x), tf.less(x, x)), ("matmul", (x, x), tf.matmul(x, x))]:
        attrs = {"transpose_a": False, "transpose_b": False} if name == "matmul" else {}
        got = PRIMITIVES[name](*args, **attrs)
        assert got.dtype == want.dtype and np.array_equal(got.numpy(), want.numpy()), name
    got = PRIMITIVES["leaky_relu"](x, alpha=0.5)
    assert got.numpy().tolist() == [[1.0, -1.0], [3.0, 4.0]]
    got = PRIMITIVES["cast"](x, dtype=tf.int32)
    assert got.numpy().tolist() == [[1, -2], [3, 4]]


def test_kernel_failures_keep_their_messages_on_both_paths():
    a, z = tf.constant([7, 8]), tf.constant([1, 0])
    for call in (lambda: tf.math.floordiv(a, z), lambda: PRIMITIVES["floormod"](a, z)):
        with pytest.raises(IAE, match=r"^integer division by zero: the divisor y holds a 0; allowed: non-zero"):
            call()
    for call in (lambda: tf.pow(a, tf.constant([-1, 2])), lambda: PRIMITIVES["pow"](a, tf.constant([-1, 2]))):
        with pytest.raises(IAE, match=r"negative integer powers are not allowed.*\[Op:Pow\]"):
            call()
    with pytest.raises(IAE, match=r"AddV2 does not support bool; allowed: float32"):
        PRIMITIVES["add"](tf.constant([True]), tf.constant([True]))
