"""Every gradient example of the seeds, with the values the seeds print.

Sources: the eager announcement (000), the symposium slides (001), the course notes
(002), the user guide notebook (003) and the R guide (004) in ../shared/seeds/.
"""
from __future__ import annotations

import gc
import itertools

import numpy as np
import psutil
import pytest
import tapeflow as tf

# ---- gradients_function and higher orders (000, 001, 003) ---------------------------------------

def test_square_and_its_derivatives(capsys):
    def square(x):
        return tf.multiply(x, x)

    grad = tf.gradients_function(square)
    gradgrad = tf.gradients_function(lambda x: grad(x)[0])
    gradgradgrad = tf.gradients_function(lambda x: gradgrad(x)[0])
    print(square(3.0))
    print(grad(3.0))
    print(gradgrad(3.0))
    print(gradgradgrad(3.0))
    assert capsys.readouterr().out.splitlines() == [
        "Tensor(9.0, shape=(), dtype=float32)",
        "[<Tensor: shape=(), dtype=float32, numpy=6.0>]",
        "[<Tensor: shape=(), dtype=float32, numpy=2.0>]",
        "[None]",
    ]


def test_square_written_with_pow():   # 002: def square(x): return x ** 2
    g = tf.gradients_function(lambda x: x ** 2)(3.0)
    assert len(g) == 1 and float(g[0]) == 6.0


def test_abs_with_python_control_flow():
    def abs(x):
        return x if x > 0. else -x

    g = tf.gradients_function(abs)
    assert [float(g(v)[0]) for v in (2.0, -2.0, 3.0, -3.0)] == [1.0, -1.0, 1.0, -1.0]
    assert repr(g(-3.0)) == "[<Tensor: shape=(), dtype=float32, numpy=-1.0>]"


# ---- custom gradients (000, 001, 003, 004) ----------------------------------------------------------

def test_log1pexp_naive_and_custom():
    def log1pexp(x):
        return tf.log(1 + tf.exp(x))

    grad_log1pexp = tf.gradients_function(log1pexp)
    assert float(grad_log1pexp(0.0)[0]) == 0.5
    assert np.isnan(float(grad_log1pexp(100.0)[0]))    # [nan]: exp(100) overflows float32

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    grad_log1pexp = tf.gradients_function(log1pexp)
    assert float(grad_log1pexp(0.0)[0]) == 0.5
    assert float(grad_log1pexp(100.0)[0]) == 1.0
    assert repr(grad_log1pexp(100.0)) == "[<Tensor: shape=(), dtype=float32, numpy=1.0>]"


def test_log1pexp_on_a_tape_as_the_r_guide_writes_it():
    def log1pexp(x):
        return tf.math.log(1 + tf.exp(x))

    def grad_log1pexp(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            value = log1pexp(x)
        return tape.gradient(value, x)

    assert str(grad_log1pexp(tf.constant(0.0))) == "Tensor(0.5, shape=(), dtype=float32)"
    assert str(grad_log1pexp(tf.constant(100.0))) == "Tensor(nan, shape=(), dtype=float32)"


def test_symposium_custom_gradient_ignores_the_computed_gradient():
    def f(x):
        return tf.square(x)

    assert float(tf.gradients_function(f)(3.0)[0]) == 6.0

    @tf.custom_gradient
    def f(x):
        y = tf.square(x)

        def grad_fn(dresult):
            return [x + y]
        return y, grad_fn

    assert float(f(3.0)) == 9.0
    assert float(tf.gradients_function(f)(3.0)[0]) == 12.0


def test_clip_gradient_by_norm():
    @tf.custom_gradient
    def clip_gradient_by_norm(x, norm):
        y = tf.identity(x)

        def grad_fn(dresult):
            return [tf.clip_by_norm(dresult, norm), None]
        return y, grad_fn

    x = tf.constant([1.0, 2.0])
    norm = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch([x, norm])
        y = clip_gradient_by_norm(x, norm) * tf.constant([3.0, 4.0])  # upstream gradient [3, 4], norm 5
    gx, gnorm = tape.gradient(y, [x, norm])
    np.testing.assert_allclose(gx.numpy(), [0.6, 0.8], rtol=1e-6)
    assert gnorm is None
    assert clip_gradient_by_norm(x, 1.0).numpy().tolist() == [1.0, 2.0]   # the forward value is x


# ---- tapes (003, 004) --------------------------------------------------------------------------------

def test_w_times_w_on_a_tape(capsys):
    w = tf.Variable([[1.0]])
    with tf.GradientTape() as tape:
        loss = w * w
    grad = tape.gradient(loss, [w])
    print(grad)
    assert capsys.readouterr().out == "[<Tensor: shape=(1, 1), dtype=float32, numpy=array([[2.]], dtype=float32)>]\n"

    w = tf.Variable(1.0)   # the R guide: a scalar, gradient of a single source
    with tf.GradientTape() as tape:
        loss = w * w
    assert str(tape.gradient(loss, w)) == "Tensor(2.0, shape=(), dtype=float32)"


def test_a_tape_computes_one_gradient():   # 004: subsequent calls throw a runtime error
    w = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        loss = w * w
    tape.gradient(loss, w)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(loss, w)


def test_implicit_gradients_course_notes(capsys):
    x = tf.Variable(2.0)

    def loss(y):
        return (y - x ** 2) ** 2

    grad = tf.implicit_gradients(loss)
    print(loss(7.0))
    print(grad(7.0))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Tensor(9.0, shape=(), dtype=float32)"
    assert out[1] == ("[(<Tensor: shape=(), dtype=float32, numpy=-24.0>, "
                      "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=2.0>)]")
    (g, v), = grad(7.0)
    assert v is x and float(g) == -24.0


def line_search_step(fn, init_x, rate=1.0):
    with tf.GradientTape() as tape:
        # Variables are automatically recorded, but manually watch a tensor
        tape.watch(init_x)
        value = fn(init_x)
    grad, = tape.gradient(value, [init_x])
    grad_norm = tf.reduce_sum(grad * grad)
    init_value = value
    while value > init_value - rate * grad_norm:
        x = init_x - rate * grad
        value = fn(x)
        rate /= 2.0
    return x, value


def test_line_search_step_with_tape_watch():
    # |x| from 0.375 (gradient 1): the step of 1 overshoots to -0.625; the step of 0.5 reaches -0.125,
    # whose value 0.125 is not above 0.375 - 0.25 * 1 (the rate is halved before the test)
    x, value = line_search_step(lambda x: tf.reduce_sum(tf.abs(x)), tf.constant([0.375]))
    assert x.numpy().tolist() == [-0.125] and float(value) == 0.125
    # a concave objective accepts the first full step: x - grad
    x, value = line_search_step(lambda x: tf.reduce_sum(tf.sin(x)), tf.constant([1.0, 2.0]))
    want = np.array([1.0, 2.0], np.float32) - np.cos(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(float(value), np.sin(want).sum(), rtol=1e-6)


# ---- the guide's linear regression (003) --------------------------------------------------------

NUM_EXAMPLES = 2000


def _data(seed=1):
    tf.random.set_seed(seed)
    training_inputs = tf.random.normal([NUM_EXAMPLES])
    noise = tf.random.normal([NUM_EXAMPLES])
    training_outputs = training_inputs * 3 + 2 + noise
    return training_inputs, training_outputs


class Model:
    def __init__(self):
        self.W = tf.Variable(5., name='weight')
        self.B = tf.Variable(10., name='bias')

    def predict(self, inputs):
        return inputs * self.W + self.B


def loss(model, inputs, targets):
    error = model.predict(inputs) - targets
    return tf.reduce_mean(tf.square(error))


def grad(model, inputs, targets):
    with tf.GradientTape() as tape:
        loss_value = loss(model, inputs, targets)
    return tape.gradient(loss_value, [model.W, model.B])


def train(model, inputs, outputs, steps, learning_rate=0.01, log=None):
    for i in range(steps):
        dW, dB = grad(model, inputs, outputs)
        model.W.assign_sub(dW * learning_rate)
        model.B.assign_sub(dB * learning_rate)
        if log is not None and i % 20 == 0:
            log.append(f"Loss at step {i:03d}: {loss(model, inputs, outputs):.3f}")


def test_linear_regression_of_the_guide():
    training_inputs, training_outputs = _data()
    model = Model()
    initial = float(loss(model, training_inputs, training_outputs))
    log = []
    train(model, training_inputs, training_outputs, 300, log=log)
    final = float(loss(model, training_inputs, training_outputs))
    # the guide: Initial loss 69.830 ... Final loss 1.032, W = 2.99, B = 2.03 (its own random draw)
    assert 55.0 < initial < 85.0
    assert len(log) == 15 and log[0].startswith("Loss at step 000: ") and log[-1].startswith("Loss at step 280: ")
    losses = [float(line.split(": ")[1]) for line in log]
    assert all(a > b for a, b in itertools.pairwise(losses))   # steadily down
    assert abs(float(model.W.numpy()) - 3.0) < 0.1 and abs(float(model.B.numpy()) - 2.0) < 0.1
    assert 0.9 < final < 1.15
    # the minimum of this data: the loss can only approach the least-squares fit's
    x, y = training_inputs.numpy().astype(np.float64), training_outputs.numpy().astype(np.float64)
    A = np.stack([x, np.ones_like(x)], axis=1)
    (w_ls, b_ls), *_ = np.linalg.lstsq(A, y, rcond=None)
    best = float(np.mean((A @ [w_ls, b_ls] - y) ** 2))
    assert best <= final + 1e-4 and final - best < 0.02


def test_linear_regression_gradients_match_the_closed_form():
    training_inputs, training_outputs = _data(seed=7)
    model = Model()
    dW, dB = grad(model, training_inputs, training_outputs)
    x, y = training_inputs.numpy().astype(np.float64), training_outputs.numpy().astype(np.float64)
    err = x * 5.0 + 10.0 - y
    np.testing.assert_allclose(float(dW), np.mean(2 * err * x), rtol=1e-4)
    np.testing.assert_allclose(float(dB), np.mean(2 * err), rtol=1e-4)


# ---- bad use -------------------------------------------------------------------------------------

def test_bad_use_gets_clear_errors():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="sources must be tensors or variables.*got str 'x'"):
        tape.gradient(y, "x")
    with pytest.raises(TypeError, match="target of GradientTape.gradient must be a tensor"):
        tape.gradient([1.0, 2.0], x)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"output_gradients\[0\] has shape \(3,\) but target\[0\] has shape \(2,\)"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 1.0, 1.0]))
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]   # the errors above did not use the tape up
    with pytest.raises(RuntimeError, match="non-persistent tape that has already computed a gradient"):
        tape.gradient(y, x)


# ---- memory ----------------------------------------------------------------------------------------

def test_twenty_thousand_training_steps_keep_memory_flat():
    training_inputs, training_outputs = _data(seed=3)
    model = Model()

    def rss():
        gc.collect()
        return psutil.Process().memory_info().rss

    train(model, training_inputs, training_outputs, 2000)   # warm caches and allocator pools
    before = rss()
    train(model, training_inputs, training_outputs, 18000)
    grown = rss() - before
    assert grown < 8 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB over 18,000 training steps"
    assert abs(float(model.W.numpy()) - 3.0) < 0.1
