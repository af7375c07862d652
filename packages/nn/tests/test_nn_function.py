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
    assert compiled == eager  # dropout draws the same masks, the optimizer the same updates
    for a, b in zip(w_compiled, w_eager):
        np.testing.assert_array_equal(a, b)
    assert it_compiled == it_eager == 4 and step.experimental_get_tracing_count() == 1
