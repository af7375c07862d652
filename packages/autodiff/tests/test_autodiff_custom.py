"""custom_gradient, register_gradient and record."""
import numpy as np
import pytest
import tapeflow as tf
from tapeflow.autodiff import record, register_gradient


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.log(1 + e), grad


def test_custom_gradient_replaces_the_gradient():
    for x0, want in ((0.0, 0.5), (100.0, 1.0)):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = log1pexp(x)
        assert float(tape.gradient(y, x)) == want


def test_custom_gradient_without_a_tape_returns_just_the_value():
    y = log1pexp(tf.constant(0.0))
    assert isinstance(y, tf.Tensor) and abs(float(y) - np.log(2.0)) < 1e-6


def test_grad_fn_receives_the_upstream_gradient():
    seen = []

    @tf.custom_gradient
    def ident(x):
        def grad(dy):
            seen.append(dy.numpy().tolist())
            return dy * 10.0
        return tf.identity(x), grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = ident(x) * tf.constant([3.0, 4.0])
    assert tape.gradient(y, x).numpy().tolist() == [30.0, 40.0]
    assert seen == [[3.0, 4.0]]


def test_grad_fn_may_return_none_for_inputs():
    @tf.custom_gradient
    def clip_gradient_by_norm(x, norm):
        y = tf.identity(x)

        def grad_fn(dresult):
            return [dresult * 0.5, None]
        return y, grad_fn

    x, n = tf.constant([3.0, 4.0]), tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch([x, n])
        y = clip_gradient_by_norm(x, n)
    gx, gn = tape.gradient(y, [x, n])
    assert gx.numpy().tolist() == [0.5, 0.5] and gn is None


def test_grad_fn_with_variables():
    w = tf.Variable(3.0, name="w")

    @tf.custom_gradient
    def scaled(x):
        y = x * w

        def grad(dy, variables=None):
            assert [v.name for v in variables] == ["w:0"]
            return [dy * w * 100.0], [dy * x * 1000.0]
        return y, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gw = tape.gradient(y, [x, w])
    assert float(gx) == 300.0 and float(gw) == 2000.0


def test_grad_fn_must_accept_variables_when_f_reads_them():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scaled(x):
        return x * w, lambda dy: dy * w

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match="reads the trainable variables.*variables="):
            scaled(x)


def test_wrong_number_of_gradients_is_a_clear_error():
    @tf.custom_gradient
    def f(x, y):
        return x * y, lambda dy: dy

    x, y = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = f(x, y)
    with pytest.raises(ValueError, match="returned 1 gradients for its 2 arguments"):
        tape.gradient(z, [x, y])


def test_custom_gradient_inside_higher_order_gradients():
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x   # uses x: differentiable again
        return x * x * x, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0
    assert float(outer.gradient(dy, x)) == 12.0
    # the seeds' form: gradients_function over a custom gradient, twice
    g = tf.gradients_function(log1pexp)
    gg = tf.gradients_function(lambda x: g(x)[0])
    assert abs(float(gg(0.0)[0]) - 0.25) < 1e-6


def test_custom_gradient_with_several_outputs():
    @tf.custom_gradient
    def two(x):
        def grad(da, db):
            return da * 2.0 + db * 3.0
        return (x * 1.0, x * 1.0), grad

    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = two(x)
    assert float(tape.gradient(a, x)) == 2.0      # the unused output's gradient is zero
    assert float(tape.gradient([a, b], x)) == 5.0


# ---- user ops -----------------------------------------------------------------------------------

def _host_cube(x):
    x = tf.convert_to_tensor(x)
    y = tf.constant(np.asarray(x) ** 3)
    record("test_cube", [x], y)
    return y


@register_gradient("test_cube")
def _cube_grad(g, ans, x):
    return (g * 3.0 * x * x,)


def test_user_op_records_itself_and_uses_its_registered_gradient():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = _host_cube(x) * 2.0
    assert tape.gradient(y, x).numpy().tolist() == [6.0, 24.0]
    assert _host_cube(tf.constant(2.0)).numpy() == 8.0   # no tape: record() does nothing


def test_user_op_with_attrs_and_a_variable_input():
    v = tf.Variable([1.0, 2.0])

    def scale(x, k):
        y = tf.constant(np.asarray(x) * k)
        record("test_scale", [x], y, {"k": k})
        return y

    @register_gradient("test_scale")
    def _scale_grad(g, ans, x, k):
        return (g * k,)

    with tf.GradientTape() as tape:
        y = scale(v, 5.0)
    assert tape.gradient(y, v).numpy().tolist() == [5.0, 5.0]


def test_register_gradient_refuses_core_ops_and_bad_arguments():
    with pytest.raises(KeyError, match="one of tapeflow's own ops"):
        register_gradient("multiply")
    with pytest.raises(KeyError, match="one of tapeflow's own ops"):
        register_gradient("Mul")
    with pytest.raises(TypeError, match="op name"):
        register_gradient(3)
    with pytest.raises(TypeError, match="inputs must be tensors"):
        with tf.GradientTape():
            record("x", [1.0], tf.constant(1.0))
    # re-registering a user op replaces it (re-running a notebook cell)
    register_gradient("test_cube")(_cube_grad)
