"""gradients_function, value_and_gradients_function, implicit_gradients, implicit_value_and_gradients."""
import pytest
import tapeflow as tf


def test_gradients_function_and_its_higher_orders():
    def square(x):
        return tf.multiply(x, x)

    grad = tf.gradients_function(square)
    g = grad(3.0)
    assert isinstance(g, list) and len(g) == 1 and float(g[0]) == 6.0
    gradgrad = tf.gradients_function(lambda x: grad(x)[0])
    assert float(gradgrad(3.0)[0]) == 2.0
    gradgradgrad = tf.gradients_function(lambda x: gradgrad(x)[0])
    assert gradgradgrad(3.0) == [None]


def test_gradients_function_params_and_dy():
    def f(x, y, z):
        return x * y * z

    grad = tf.gradients_function(f, params=[0, 2])
    gx, gz = grad(2.0, 3.0, 4.0)
    assert (float(gx), float(gz)) == (12.0, 6.0)
    gx, gz = tf.gradients_function(f, params=["x", "z"])(2.0, 3.0, 4.0)
    assert (float(gx), float(gz)) == (12.0, 6.0)
    (gx,) = tf.gradients_function(lambda x: x * x, params=[0])(tf.constant([1.0, 2.0]),
                                                               dy=tf.constant([10.0, 1.0]))
    assert gx.numpy().tolist() == [20.0, 4.0]
    with pytest.raises(ValueError, match="not a parameter"):
        tf.gradients_function(f, params=["w"])(1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="not a position"):
        tf.gradients_function(f, params=[5])(1.0, 2.0, 3.0)


def test_gradients_function_with_python_control_flow():
    def abs_(x):
        return x if x > 0.0 else -x

    grad = tf.gradients_function(abs_)
    assert [float(grad(v)[0]) for v in (2.0, -2.0, 3.0, -3.0)] == [1.0, -1.0, 1.0, -1.0]


def test_value_and_gradients_function():
    value, (gx, gy) = tf.value_and_gradients_function(lambda x, y: x * x * y)(3.0, 2.0)
    assert (float(value), float(gx), float(gy)) == (18.0, 12.0, 9.0)


def test_non_tensor_result_is_a_clear_error():
    with pytest.raises(TypeError, match="must return a tensor.*str"):
        tf.gradients_function(lambda x: "nope")(1.0)


def test_implicit_gradients_pairs_gradients_with_variables():
    x = tf.Variable(2.0)
    frozen = tf.Variable(1.0, trainable=False)

    def loss(y):
        return (y - x ** 2) ** 2 * frozen

    assert float(loss(7.0)) == 9.0
    pairs = tf.implicit_gradients(loss)(7.0)
    assert len(pairs) == 1
    g, v = pairs[0]
    assert v is x and float(g) == -24.0
    assert repr(pairs).startswith("[(<Tensor: shape=(), dtype=float32, numpy=-24.0>, <tf.Variable 'Variable:0'")


def test_implicit_value_and_gradients_and_unused_variables():
    a, b = tf.Variable(3.0, name="a"), tf.Variable(4.0, name="b")

    def f():
        _ = b * 1.0  # read, but not part of the result
        return a * a

    value, pairs = tf.implicit_value_and_gradients(f)()
    assert float(value) == 9.0
    # in the order the variables were first read
    assert [(None if g is None else float(g), v.name) for g, v in pairs] == [(None, "b:0"), (6.0, "a:0")]


def test_implicit_gradients_needs_a_variable():
    with pytest.raises(ValueError, match="no trainable variables were read"):
        tf.implicit_gradients(lambda x: x * 2.0)(tf.constant(1.0))
