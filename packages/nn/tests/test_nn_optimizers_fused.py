"""Fused optimizer steps (issue 16 item 3): one kernel per variable (csrc/optim.c), in place.

Eager steps of float32/float64 variables on the CPU run ``tpf_optim_update``: the variable and its
slots are written in place, in one pass; inside a tf.function, each variable's step is one stateful
``optimizer_update`` node that runs the same kernel.  The op-by-op update (``Optimizer._fused = False``; other
devices and half types always take it) is the reference: the two give the same bits.
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.kernels import get_backend

OPT = tf.optimizers
CASES = {
    "sgd": lambda: OPT.SGD(0.1),
    "sgd_momentum": lambda: OPT.SGD(0.1, momentum=0.9),
    "sgd_nesterov": lambda: OPT.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: OPT.Adam(0.01),
    "adam_amsgrad": lambda: OPT.Adam(0.01, amsgrad=True),
    "adamw": lambda: OPT.AdamW(0.01, weight_decay=0.1),
    "adamw_amsgrad": lambda: OPT.AdamW(0.01, weight_decay=0.1, amsgrad=True),
    "rmsprop": lambda: OPT.RMSprop(0.01),
    "rmsprop_momentum": lambda: OPT.RMSprop(0.01, momentum=0.5),
    "rmsprop_centered": lambda: OPT.RMSprop(0.01, centered=True),
    "rmsprop_centered_momentum": lambda: OPT.RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda: OPT.Adagrad(0.1),
}


def _train(make, fused, dtype, shape, steps=4):
    v = tf.Variable(np.random.default_rng(7).standard_normal(shape).astype(dtype))
    opt = make()
    opt._fused = fused
    r = np.random.default_rng(1)
    for _ in range(steps):
        g = r.standard_normal(shape).astype(dtype)
        g[..., :1] = 0.0  # zero gradients (amsgrad's max, Adagrad's accumulator) and tiny ones
        g[..., 1:2] *= 1e-30
        opt.apply_gradients([(tf.constant(g), v)])
    return v.numpy().copy(), [s.numpy().copy() for s in opt.variables]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 5), (40000,)])  # one thread, and several (csrc/tpf.h's TPF_PAR_MIN)
def test_fused_step_equals_op_by_op(name, dtype, shape):
    a, slots_a = _train(CASES[name], True, dtype, shape)
    b, slots_b = _train(CASES[name], False, dtype, shape)
    assert a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a, b)
    for x, y in zip(slots_a, slots_b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(4, 3), (300, 200)])
def test_fused_step_writes_in_place(name, shape):
    with tf.device("cpu:0"):  # the fused step runs on CPU variables
        v = tf.Variable(np.ones(shape, np.float32))
        g = tf.constant(np.full(shape, 0.5, np.float32))
    opt = CASES[name]()
    opt.apply_gradients([(g, v)])  # first step: slots made; the value becomes the variable's own
    addr = [s._value._arr.__array_interface__["data"][0] for s in (v, *opt._slots[v].values())]
    before = v.numpy().copy()
    opt.apply_gradients([(g, v)])
    after = [s._value._arr.__array_interface__["data"][0] for s in (v, *opt._slots[v].values())]
    assert after == addr
    assert not np.array_equal(v.numpy(), before)


def test_values_read_before_a_step_keep_them():
    with tf.device("cpu:0"):
        v = tf.Variable(np.ones(3, np.float32))
        g = tf.constant([1.0, 2.0, 3.0])
    opt = OPT.Adam(0.1)
    opt.apply_gradients([(g, v)])
    r, n, m = v.read_value(), v.numpy(), opt.get_slot(v, "momentum").read_value()
    kept = r.numpy().copy(), n.copy(), m.numpy().copy()
    opt.apply_gradients([(g, v)])
    np.testing.assert_array_equal(r.numpy(), kept[0])
    np.testing.assert_array_equal(n, kept[1])
    np.testing.assert_array_equal(m.numpy(), kept[2])
    assert not np.array_equal(v.numpy(), kept[0])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(6,), (300, 200)])
def test_compiled_step_is_one_fused_node_per_variable_and_matches(name, shape):
    """Inside tf.function each variable's step is one ``optimizer_update`` node (the fused kernel, in place, when
    the graph runs); it equals the eager fused step and the compiled op-by-op update bit for bit."""
    def run(compiled, fused=True):
        v = tf.Variable(np.linspace(-1, 1, int(np.prod(shape))).astype(np.float32).reshape(shape))
        w = tf.Variable(np.full([3], 0.25, np.float32))
        opt = CASES[name]()
        opt._fused = fused

        def step(g):
            opt.apply_gradients([(g, v), (g[..., :3] if len(shape) == 1 else g[0, :3], w)])

        if compiled:
            step = tf.function(step)
        g = np.linspace(0.5, -0.5, v.shape.num_elements()).astype(np.float32).reshape(shape)
        for i in range(3):
            step(tf.constant(g * (i + 1)))
        ops = [] if not compiled else [st[6].prim.name for st in step.get_concrete_function(
            tf.TensorSpec(shape, tf.float32))._plan.steps]
        return v.numpy(), w.numpy(), [s.numpy() for s in opt.variables], ops

    eager, compiled, op_by_op = run(False), run(True), run(True, fused=False)
    on_cpu = tf.constant(0.0)._dev.kind == "cpu"
    if on_cpu:  # (the fused kernel is the CPU's; other devices trace the ops, which their fused kernels run)
        assert compiled[3].count("optimizer_update") == 2
    assert "optimizer_update" not in op_by_op[3]
    same = np.testing.assert_array_equal if on_cpu else lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-6)
    for a, b, c in zip(eager[:2] + tuple(eager[2]), compiled[:2] + tuple(compiled[2]),
                       op_by_op[:2] + tuple(op_by_op[2]), strict=True):
        same(b, a)
        same(c, a)


def test_half_variables_take_the_op_path():
    v = tf.Variable(np.ones(4, np.float16))
    OPT.Adam(0.1).apply_gradients([(tf.constant(np.ones(4, np.float16)), v)])
    assert v.dtype == tf.float16 and np.allclose(v.numpy(), 0.9, atol=1e-3)


def test_kernel_rejects_bad_arguments():
    be = get_backend("cpu")
    null = be.ffi.NULL
    buf = be.ffi.new("float[4]")
    assert be.optim_update(9, 2, 0, buf, null, null, null, buf, 4, 0.1, 0, 0, 0, 0) == 3  # TPF_EBADOP
    assert be.optim_update(0, 7, 0, buf, null, null, null, buf, 4, 0.1, 0, 0, 0, 0) == 2  # TPF_EBADDTYPE
    assert be.optim_update(1, 2, 0, buf, null, null, null, buf, 4, 0.1, 0, 0, 0, 0) == 7  # Adam without slots
    assert be.optim_update(0, 2, 0, buf, null, null, null, buf, -1, 0.1, 0, 0, 0, 0) == 1  # TPF_EBADSIZE
