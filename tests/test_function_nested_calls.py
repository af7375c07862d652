"""A ConcreteFunction called inside another tf.function (TensorFlow: the outer graph calls the inner function):
its graph joins the outer one, variables are read when the outer graph runs, and tapes differentiate through it."""
import numpy as np
import pytest

import tapeflow as tf


def _cf():
    return tf.function(lambda x: tf.sin(x) + 1.0).get_concrete_function(tf.TensorSpec([None, 3], tf.float32))


def test_concrete_function_inside_tf_function():
    f = _cf()
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    outer = tf.function(lambda x: f(x) * 2.0)
    np.testing.assert_allclose(outer(x).numpy(), (np.sin(x.numpy()) + 1.0) * 2.0, rtol=1e-6)
    # a new batch size: the same traces (the callee takes [None, 3], the outer function retraces for the shape)
    x5 = tf.ones([5, 3])
    np.testing.assert_allclose(outer(x5).numpy(), (np.sin(1.0) + 1.0) * 2.0 * np.ones([5, 3]), rtol=1e-6)
    # the inner graph's ops are in the outer graph (no eager run of symbolic tensors)
    names = [n.prim.name for n in outer.get_concrete_function(tf.TensorSpec([None, 3])).graph.nodes]
    assert names, names


def test_concrete_function_inside_tf_function_reads_variables_when_the_outer_runs():
    v = tf.Variable([1.0, 2.0, 3.0])
    f = tf.function(lambda x: x * v).get_concrete_function(tf.TensorSpec([None, 3]))
    outer = tf.function(lambda x: tf.reduce_sum(f(x), axis=1))
    x = tf.ones([2, 3])
    np.testing.assert_allclose(outer(x).numpy(), [6.0, 6.0])
    v.assign([2.0, 2.0, 2.0])
    np.testing.assert_allclose(outer(x).numpy(), [6.0, 6.0])
    v.assign([0.0, 0.0, 1.0])
    np.testing.assert_allclose(outer(x).numpy(), [1.0, 1.0])
    assert [id(w) for w in outer.get_concrete_function(x).variables] == [id(v)]


def test_concrete_function_with_structured_outputs_and_control_flow_inside_tf_function():
    def g(x):
        y = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: -x)
        return {"y": y, "n": (tf.reduce_max(y), tf.shape(y)[0])}

    f = tf.function(g).get_concrete_function(tf.TensorSpec([None], tf.float32))
    outer = tf.function(lambda x: f(x)["y"] + tf.cast(f(x)["n"][1], tf.float32))
    np.testing.assert_allclose(outer(tf.constant([1.0, 2.0])).numpy(), [4.0, 6.0])
    np.testing.assert_allclose(outer(tf.constant([-1.0, -2.0])).numpy(), [3.0, 4.0])


def test_concrete_function_under_gradient_tape_inside_tf_function():
    w = tf.Variable([[1.0, -2.0], [0.5, 3.0]])
    f = tf.function(lambda x: tf.tanh(tf.matmul(x, w))).get_concrete_function(tf.TensorSpec([None, 2]))

    @tf.function
    def grads(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(f(x) ** 2)
        return tape.gradient(loss, [x, w])

    def ref(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2)
        return tape.gradient(loss, [x, w])

    x = tf.constant([[0.3, -0.2], [1.0, 0.5], [0.1, 0.1]])
    for g, r in zip(grads(x), ref(x)):
        assert np.abs(r.numpy()).max() > 0
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_concrete_function_inside_tf_function_checks_its_signature():
    f = tf.function(lambda x: x + 1.0).get_concrete_function(tf.TensorSpec([2], tf.float32))
    outer = tf.function(lambda x: f(x))
    with pytest.raises(TypeError, match="does not match"):
        outer(tf.ones([3]))


def test_concrete_function_updating_a_variable_inside_tf_function():
    v = tf.Variable(0.0)

    def step(x):
        v.assign_add(tf.reduce_sum(x))
        return v * 1.0

    f = tf.function(step).get_concrete_function(tf.TensorSpec([None]))

    @tf.function
    def outer(x):
        before = v * 1.0
        after = f(x)
        return before, after, v * 10.0

    b, a, later = outer(tf.constant([1.0, 2.0]))
    assert (b.numpy(), a.numpy(), later.numpy()) == (0.0, 3.0, 30.0)
    b, a, later = outer(tf.constant([1.0]))
    assert (b.numpy(), a.numpy(), later.numpy()) == (3.0, 4.0, 40.0)


def test_gradient_through_a_concrete_function_with_tf_cond_inside_tf_function():
    def body(x):
        return tf.cond(tf.reduce_sum(x) > 0.0, lambda: tf.sin(x) * x, lambda: x * 3.0)

    f = tf.function(body).get_concrete_function(tf.TensorSpec([None]))

    def grad_of(fn):
        def g(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(fn(x) ** 2)
            return tape.gradient(loss, x)
        return g

    for x in (tf.constant([1.0, 2.0]), tf.constant([-1.0, -2.0, 0.5])):
        want = grad_of(body)(x).numpy()
        assert np.abs(want).max() > 0
        np.testing.assert_allclose(tf.function(grad_of(f))(x).numpy(), want, rtol=1e-5)


def test_concrete_function_holding_a_custom_gradient_inside_tf_function_is_a_clear_error():
    @tf.custom_gradient
    def clip(x):
        return x * 1.0, lambda dy: tf.clip_by_value(dy, -1.0, 1.0)

    f = tf.function(lambda x: clip(x) * 2.0).get_concrete_function(tf.TensorSpec([None]))
    with pytest.raises(ValueError, match="custom_gradient.*call the tf.function itself"):
        tf.function(lambda x: f(x) + 1.0)(tf.ones([2]))
    np.testing.assert_allclose(tf.function(lambda x: clip(x) * 2.0 + 1.0)(tf.ones([2])).numpy(), [3.0, 3.0])
