"""keras.mixed_precision: dtype policies (float16/bfloat16 compute, float32 variables) and dynamic loss scaling."""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

mp = tf.keras.mixed_precision
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _policy_reset():
    tf.random.set_seed(3)
    yield
    mp.set_global_policy("float32")
    tf.random.set_seed(None)


def test_policies():
    p = mp.Policy("mixed_float16")
    assert (p.name, p.compute_dtype, p.variable_dtype) == ("mixed_float16", "float16", "float32")
    assert mp.Policy("bfloat16").variable_dtype == "bfloat16" and mp.global_policy().name == "float32"
    mp.set_global_policy("mixed_bfloat16")
    assert mp.global_policy() == mp.Policy("mixed_bfloat16")
    mp.set_global_policy(None)
    assert mp.global_policy().name == "float32"
    with pytest.raises(ValueError, match="mixed_float16"):
        mp.Policy("mixed_float8")
    with pytest.raises(ValueError, match="floating"):
        mp.set_global_policy("int32")


@pytest.mark.parametrize("policy,compute", [("mixed_float16", "float16"), ("mixed_bfloat16", "bfloat16")])
def test_layers_compute_in_16_bits_with_float32_variables(policy, compute, rng):
    mp.set_global_policy(policy)
    model = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(8, activation="relu"), L.BatchNormalization(),
                                 L.Dense(3), L.Activation("linear", dtype="float32")])
    dense = model.layers[0]
    assert dense.compute_dtype == compute and dense.variable_dtype == "float32" and dense.dtype.name == "float32"
    assert dense.dtype_policy.name == policy and dense.get_config()["dtype"] == policy
    assert all(v.dtype.name == "float32" for v in model.weights)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    h = dense(x)
    assert h.dtype.name == compute
    out = model(x, training=True)
    assert out.dtype.name == "float32"  # the float32 layer at the end casts back
    # the same computation in float32 from the same weights agrees to 16-bit precision
    mp.set_global_policy("float32")
    ref = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(8, activation="relu"), L.BatchNormalization(),
                               L.Dense(3)])
    ref.set_weights(model.get_weights())
    tol = 2e-2 if compute == "float16" else 1e-1
    np.testing.assert_allclose(out.numpy(), ref(x, training=True).numpy(), rtol=tol, atol=tol)
    # gradients reach the float32 variables through the casts, in float32
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x, training=True))
    grads = tape.gradient(loss, model.trainable_weights)
    assert all(g is not None and g.dtype.name == "float32" for g in grads)


def test_loss_scale_optimizer_dynamic_scale():
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
    v = tf.Variable([1.0, 2.0])
    assert float(opt.scale_loss(tf.constant(3.0))) == 12.0
    # finite gradients are unscaled before the inner update: v - 0.5 * g / 4
    opt.apply_gradients([(tf.constant([4.0, 8.0]), v)])
    assert v.numpy().tolist() == [0.5, 1.0] and int(opt.iterations.numpy()) == 1
    assert float(opt.dynamic_scale.numpy()) == 4.0
    opt.apply_gradients([(tf.constant([0.0, 0.0]), v)])  # the second finite step in a row: the scale doubles
    assert float(opt.dynamic_scale.numpy()) == 8.0 and int(opt.step_counter.numpy()) == 0
    # a non-finite gradient: no update, the scale halves
    opt.apply_gradients([(tf.constant([np.inf, 1.0]), v)])
    assert v.numpy().tolist() == [0.5, 1.0] and float(opt.dynamic_scale.numpy()) == 4.0
    assert int(opt.iterations.numpy()) == 2
    opt.learning_rate = 0.25
    assert opt.inner_optimizer.learning_rate == 0.25
    with pytest.raises(ValueError, match="does not support"):
        mp.LossScaleOptimizer("sgd", clipnorm=1.0)
    with pytest.raises(ValueError, match="initial_scale"):
        mp.LossScaleOptimizer("sgd", initial_scale=0)
    cfg = opt.get_config()
    assert cfg["initial_scale"] == 4.0 and cfg["dynamic_growth_steps"] == 2


def test_fit_with_mixed_float16_scales_the_loss_and_learns(rng):
    mp.set_global_policy("mixed_float16")
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [1.5]], np.float32)).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(16, activation="relu"), L.Dense(1),
                                 L.Activation("linear", dtype="float32")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    assert isinstance(model.optimizer, mp.LossScaleOptimizer)  # as Keras 3's compile does
    h = model.fit(x, y, batch_size=16, epochs=30, verbose=0)
    # the initial scale 2**15 overflows float16 gradients: those steps are skipped and the scale falls
    scale = float(model.optimizer.dynamic_scale.numpy())
    assert scale < 2 ** 15
    assert int(model.optimizer.iterations.numpy()) > 0
    assert h.history["loss"][-1] < 0.2 * h.history["loss"][0]
    assert all(v.dtype.name == "float32" for v in model.weights)
    # auto_scale_loss=False keeps the optimizer; bfloat16 needs no scaling (as Keras)
    model.compile(optimizer="sgd", loss="mse", auto_scale_loss=False)
    assert not isinstance(model.optimizer, mp.LossScaleOptimizer)
    mp.set_global_policy("mixed_bfloat16")
    m2 = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(1)])
    m2.compile("sgd", "mse")
    assert not isinstance(m2.optimizer, mp.LossScaleOptimizer)


def test_outputs_close_to_keras_mixed_float16(rng):
    tensorflow = tf_or_none()
    if tensorflow is None:
        pytest.skip("comparing with Keras 3 needs TensorFlow (the behaviour tests above run without it)")
    keras = tensorflow.keras
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        km = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        x = rng.normal(size=(5, 4)).astype(np.float32)
        kout = km(x).numpy()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    mp.set_global_policy("mixed_float16")
    ours = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(8, activation="relu"), L.Dense(3)])
    ours.set_weights(km.get_weights())
    out = ours(x)
    assert out.dtype.name == kout.dtype.name == "float16"
    np.testing.assert_allclose(out.numpy().astype(np.float32), kout.astype(np.float32), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("make", [lambda: L.LSTM(3), lambda: L.GRU(3), lambda: L.SimpleRNN(3),
                                  lambda: L.Conv2D(2, 3), lambda: L.DepthwiseConv2D(3), lambda: L.Embedding(5, 2)])
def test_other_layers_run_under_mixed_float16(make, rng):
    mp.set_global_policy("mixed_float16")
    layer = make()
    name = type(layer).__name__
    x = rng.integers(0, 5, size=(2, 3)) if name == "Embedding" else \
        rng.normal(size=(2, 5, 5, 2) if "Conv" in name else (2, 4, 2)).astype(np.float32)
    out = layer(x)
    assert out.dtype.name == "float16" and all(v.dtype.name == "float32" for v in layer.weights)
