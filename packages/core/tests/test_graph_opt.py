"""The graph passes of tf.function: each changes the graph as it says, keeps the values, and switches off."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import tapeflow as tf


def _ops(f, *specs):
    """The primitives the compiled function runs, in order."""
    return [st[6].prim.name for st in f.get_concrete_function(*specs)._plan.steps]


@pytest.fixture(autouse=True)
def _no_fusion():
    """These tests count the nodes the other passes leave: element-wise fusion (test_fusion.py) is off."""
    saved = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"elementwise_fusion": False})
    yield
    tf.config.optimizer.set_experimental_options(saved)


@pytest.fixture
def options():
    saved = tf.config.optimizer.get_experimental_options()
    yield tf.config.optimizer.set_experimental_options
    tf.config.optimizer.set_experimental_options(saved)


def test_algebraic_simplification_removes_identities(options):
    def f(x):
        y = tf.transpose(tf.transpose(x * 1.0 + 0.0))
        y = tf.reshape(tf.reshape(y, [12]), [4, 3])
        return tf.cast(y, tf.float32) / 1.0 - 0.0

    spec = tf.TensorSpec([3, 4])
    assert _ops(tf.function(f), spec) == ["reshape"]  # reshape(reshape(x)) became one reshape
    x = tf.reshape(tf.range(12.0), [3, 4])
    np.testing.assert_array_equal(tf.function(f)(x).numpy(), f(x).numpy())
    options({"arithmetic_optimization": False})
    assert len(_ops(tf.function(f), spec)) == 9


def test_simplification_keeps_ops_that_broadcast_or_change_dtype():
    f = tf.function(lambda x: x * tf.ones([2, 3]))  # x [3] times ones [2, 3]: broadcasts, not an identity
    assert _ops(f, tf.TensorSpec([3])) == ["multiply"]
    assert f(tf.constant([1.0, 2.0, 3.0])).shape == (2, 3)
    g = tf.function(lambda x: tf.cast(x, tf.float32))
    assert _ops(g, tf.TensorSpec([2], tf.int32)) == ["cast"]


def test_constant_folding_runs_constant_subgraphs_once(options):
    def f(x):
        table = tf.exp(tf.range(4.0)) * 2.0  # constants only: folded
        return x + table

    assert _ops(tf.function(f), tf.TensorSpec([4])) == ["add"]
    np.testing.assert_allclose(tf.function(f)(tf.zeros([4])).numpy(), np.exp(np.arange(4.0)) * 2, rtol=1e-6)
    options({"constant_folding": False})
    assert len(_ops(tf.function(f), tf.TensorSpec([4]))) > 1


def test_constant_folding_never_folds_draws_or_variable_reads():
    v = tf.Variable(2.0)
    f = tf.function(lambda: tf.random.uniform([3]) + v * tf.constant(3.0))
    names = _ops(f)
    assert "random_uniform" in names and "read_variable" in names
    a, b = f().numpy(), f().numpy()
    assert not np.array_equal(a, b)
    v.assign(10.0)
    assert f().numpy().min() >= 30.0


def test_common_subexpressions_compute_once(options):
    def f(x):
        return tf.exp(x * 2.0) + tf.exp(x * 2.0)

    assert _ops(tf.function(f), tf.TensorSpec([3])) == ["multiply", "exp", "add"]
    np.testing.assert_allclose(tf.function(f)(tf.ones([3])).numpy(), 2 * np.exp(2.0) * np.ones(3), rtol=1e-6)
    options({"arithmetic_optimization": False})
    assert len(_ops(tf.function(f), tf.TensorSpec([3]))) == 5


def test_stateful_nodes_are_never_merged():
    f = tf.function(lambda: tf.stack([tf.random.normal([2]), tf.random.normal([2])]))
    a = f().numpy()
    assert not np.array_equal(a[0], a[1])
    assert _ops(f).count("random_normal") == 2


def test_dead_code_is_pruned_unless_pruning_is_disabled(options):
    def f(x):
        unused = tf.exp(x)  # noqa: F841
        return x + 1.0

    cf = tf.function(f).get_concrete_function(tf.TensorSpec([2]))
    assert [s[6].prim.name for s in cf._plan.steps] == ["add"]
    options({"disable_model_pruning": True})
    cf = tf.function(f).get_concrete_function(tf.TensorSpec([2]))
    assert [s[6].prim.name for s in cf._plan.steps] == ["exp", "add"]


def test_memory_plan_releases_intermediates_so_peak_memory_is_below_eager(options):
    n = 1 << 20  # 4 MB per float32 intermediate

    def chain(x):
        a = x * 2.0
        b = a + 1.0
        c = tf.tanh(b)
        d = c * tf.sigmoid(x)
        e = d - tf.exp(-x * x)
        return e

    x = tf.ones([n])
    compiled = tf.function(chain)
    compiled(x)

    def peak(fn):
        tracemalloc.start()
        tracemalloc.reset_peak()
        out = fn(x)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del out
        return top

    eager_peak, compiled_peak = peak(chain), peak(compiled)
    assert compiled_peak < eager_peak  # eager keeps a, b, c, d alive until the function returns
    options({"memory_optimizer": False})
    unplanned = tf.function(chain)
    unplanned(x)
    assert peak(unplanned) > compiled_peak


def test_unknown_or_absent_options_say_what_is_allowed(options):
    with pytest.raises(ValueError, match="unknown tf.config.optimizer option 'nope'"):
        options({"nope": True})
    options({"layout_optimizer": False})  # a TensorFlow pass tapeflow does not have: off is what it is
    with pytest.raises(ValueError, match="no such pass"):
        options({"layout_optimizer": True})
    with pytest.raises(TypeError):
        options({"constant_folding": "yes"})


def test_broadcast_to_read_by_a_binary_op_is_not_materialized(options):
    def f(x, y):  # the gradient of a mean over the spatial axes is such a broadcast
        m = tf.reduce_mean(x, axis=[1, 2], keepdims=True)
        return tf.broadcast_to(m, [2, 5, 5, 3]) * y, y - tf.broadcast_to(m, [2, 5, 5, 3])

    spec = tf.TensorSpec([2, 5, 5, 3])
    assert "broadcast_to" not in _ops(tf.function(f), spec, spec)
    rng = np.random.default_rng(0)
    x, y = (tf.constant(rng.standard_normal([2, 5, 5, 3]).astype(np.float32)) for _ in range(2))
    for got, want in zip(tf.function(f)(x, y), f(x, y)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # a broadcast that makes the op's output larger than the other operand stays
    g = tf.function(lambda x, y: tf.broadcast_to(x, [4, 3]) + y)
    assert "broadcast_to" in _ops(g, tf.TensorSpec([3]), tf.TensorSpec([3]))
    np.testing.assert_array_equal(g(tf.ones([3]), tf.ones([3])).numpy(), np.full([4, 3], 2.0, np.float32))
    # jit_compile=True keeps it (a fused kernel broadcasts only scalars and trailing dimensions)
    assert "broadcast_to" in _ops(tf.function(f, jit_compile=True), spec, spec)
    options({"arithmetic_optimization": False})
    assert "broadcast_to" in _ops(tf.function(f), spec, spec)


def test_memory_plan_releases_reads_when_folded_constants_follow_the_steps(options):
    """A variable read is an intermediate like any other, also in a graph whose passes replaced tensors by
    constants (kept after the steps' outputs): released after its last use, so the update after it writes the
    variable's own buffer in place instead of copying it each call."""
    v = tf.Variable(np.ones([64, 64], np.float32))

    @tf.function
    def step(x):
        scale = tf.exp(tf.constant(0.0)) * 0.5  # folded into a constant
        v.assign_sub(tf.matmul(x, v.read_value()) * scale)

    x = tf.constant(np.full([64, 64], 1e-3, np.float32))
    step(x)
    assert tf.function(step.python_function).get_concrete_function(x).graph.replaced  # the folded constant
    if v._value._dev.kind == "cpu":  # (the in-place update is the CPU's)
        addrs = []
        for _ in range(3):
            step(x)
            addrs.append(v._value._arr.__array_interface__["data"][0])
        assert addrs[0] == addrs[1] == addrs[2]
    reads = [st for st in step.get_concrete_function(x)._plan.steps if st[6].prim.name == "read_variable"]
    assert all(st[3] in (i for s in step.get_concrete_function(x)._plan.steps for i in s[8]) for st in reads)
