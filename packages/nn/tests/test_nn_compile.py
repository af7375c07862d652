"""compile() arguments that change the numbers."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf


def _loss(loss_weights):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse", loss_weights=loss_weights)
    return model.evaluate(np.ones((4, 2)), np.zeros((4, 1)), verbose=0)


def test_loss_weights_scale_a_single_outputs_loss_as_keras():
    base = _loss(None)
    assert _loss(0.5) == pytest.approx(base * 0.5)
    assert _loss([2.0]) == pytest.approx(base * 2.0)
    assert _loss({"dense": 3.0}) == pytest.approx(base * 3.0)
    with pytest.raises(ValueError, match="one output"):
        _loss([1.0, 2.0])
    with pytest.raises(TypeError, match="loss_weights"):
        _loss("heavy")


def test_merge_layers_keep_integer_inputs_integer_as_keras():
    a, b = tf.constant([[1, 2]]), tf.constant([[3, 4]])
    L = tf.keras.layers
    for layer in (L.Add(), L.Subtract(), L.Multiply(), L.Maximum(), L.Minimum(), L.Concatenate(), L.Dot(axes=1)):
        assert layer([a, b]).dtype == tf.int32, type(layer).__name__
    assert L.Dense(1)(a).dtype == tf.float32  # a float layer casts them


def test_steps_per_execution_calls_batch_callbacks_once_per_execution_as_keras():
    calls = []
    cb = tf.keras.callbacks.LambdaCallback(
        on_train_batch_begin=lambda b, logs: calls.append(("b", b)),
        on_train_batch_end=lambda b, logs: calls.append(("e", b)),
        on_test_batch_end=lambda b, logs: calls.append(("te", b)),
        on_predict_batch_end=lambda b, logs: calls.append(("pe", b, len(logs["outputs"]))))
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse", steps_per_execution=3)
    model.fit(np.ones((20, 2)), np.ones((20, 1)), batch_size=2, epochs=1, verbose=0, callbacks=[cb])
    model.evaluate(np.ones((14, 2)), np.ones((14, 1)), batch_size=2, verbose=0, callbacks=[cb])
    model.predict(np.ones((14, 2)), batch_size=2, verbose=0, callbacks=[cb])
    # what Keras 3 (TensorFlow 2.21) calls for the same program: an execution's end is its begin + 2
    assert calls == [("b", 0), ("e", 2), ("b", 3), ("e", 5), ("b", 6), ("e", 8), ("b", 9), ("e", 11),
                     ("te", 2), ("te", 5), ("te", 8), ("pe", 2, 6), ("pe", 5, 6), ("pe", 8, 2)]


def test_compile_rejects_arguments_keras3_does_not_take():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    with pytest.raises(TypeError, match="sample_weight_mode"):
        model.compile("sgd", "mse", sample_weight_mode="temporal")
