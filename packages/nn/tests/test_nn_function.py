"""Keras-style training under tf.function: the compiled step gives the eager step's numbers."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf

L = tf.keras.layers


def _data():
    rng = np.random.RandomState(0)
    return tf.constant(rng.randn(16, 4).astype("float32")), tf.constant(np.arange(16) % 2)


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "adam_schedule", "rmsprop"])
def test_compiled_custom_train_step_equals_eager_step_by_step(optimizer):
    def run(compiled):
        tf.random.set_seed(0)
        tf.keras.backend.clear_session()
        model = tf.keras.Sequential([L.Dense(8, activation="relu"), L.Dropout(0.25), L.Dense(2)])
        if optimizer == "sgd":
            opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
        elif optimizer == "adam":
            opt = tf.keras.optimizers.Adam(0.01)
        elif optimizer == "adam_schedule":
            opt = tf.keras.optimizers.Adam(tf.keras.optimizers.schedules.ExponentialDecay(0.01, 2, 0.5))
        else:
            opt = tf.keras.optimizers.RMSprop(0.01)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        if compiled:
            step = tf.function(step)
        x, y = _data()
        losses = [float(step(x, y)) for _ in range(4)]
        return losses, model.get_weights(), int(opt.iterations), step

    eager, w_eager, it_eager, _ = run(False)
    compiled, w_compiled, it_compiled, step = run(True)
    # dropout draws the same masks, the optimizer makes the same updates (its per-step constants are
    # computed by tapeflow ops in the graph, by NumPy eagerly: equal on the CPU, within an ulp on a GPU)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
    for a, b in zip(w_compiled, w_eager):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert it_compiled == it_eager == 4 and step.experimental_get_tracing_count() == 1


def _fit(run_eagerly, **compile_kwargs):
    tf.random.set_seed(1)
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([L.Dense(8, activation="relu", input_shape=(4,)), L.Dropout(0.2), L.Dense(2)])
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
                  run_eagerly=run_eagerly, **compile_kwargs)
    x, y = _data()
    hist = model.fit(x.numpy(), y.numpy(), batch_size=5, epochs=3, verbose=0, validation_split=0.25)
    return model, hist.history


def test_fit_runs_its_steps_through_tf_function_and_equals_run_eagerly():
    compiled, h_compiled = _fit(False)
    eager, h_eager = _fit(True)
    assert h_compiled.keys() == h_eager.keys()
    for k in h_eager:
        np.testing.assert_allclose(h_compiled[k], h_eager[k], rtol=1e-6)
    for a, b in zip(compiled.get_weights(), eager.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    fns = compiled._step_functions
    assert set(fns) == {"train_step", "test_step"} and not eager._step_functions
    # batches of 5 from 12 examples: a full batch and the last one of 2: two traces, not one per step
    assert fns["train_step"][1].experimental_get_tracing_count() == 2
    x, _ = _data()
    np.testing.assert_allclose(compiled.predict(x, verbose=0), compiled(x).numpy(), rtol=1e-6)


def test_compile_arguments_are_checked_and_run_functions_eagerly_switches_graphs_off():
    model, _ = _fit(False, jit_compile=True)
    assert model.jit_compile is True and model.run_eagerly is False
    with pytest.raises(TypeError, match="run_eagerly"):
        model.compile("sgd", "mse", run_eagerly="yes")
    with pytest.raises(ValueError, match="steps_per_execution"):
        model.compile("sgd", "mse", steps_per_execution=0)
    tf.config.run_functions_eagerly(True)
    try:
        seen = []
        f = tf.function(lambda x: seen.append(x.numpy()) or x)  # .numpy() works: it runs as Python
        f(tf.constant(1.0))
        assert seen == [1.0] and f.experimental_get_tracing_count() == 0
    finally:
        tf.config.run_functions_eagerly(False)
