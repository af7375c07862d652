"""Model.fit / evaluate / predict on tapeflow Datasets: they need tapeflow-nn and tapeflow-data, so they live
with the cross-package tests (moved from packages/nn/tests/test_nn_training.py, which runs without tapeflow-data)."""
import io
import sys

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


@pytest.fixture(autouse=True)
def _seeded_weights():
    """Every test here trains: weights, fit's shuffling and dropout follow the global seed, so each run
    repeats exactly (the data come from the per-test ``rng``); layer names start afresh, as in nn's tests."""
    tf.keras.backend.clear_session()
    tf.random.set_seed(1234)
    yield
    tf.random.set_seed(None)


def _blobs(rng, n=256):
    """Three separable 2-D clusters."""
    centers = np.array([[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]], np.float32)
    y = rng.integers(0, 3, n)
    x = (centers[y] + rng.normal(0, 0.6, size=(n, 2))).astype(np.float32)
    return x, y


def _classifier():
    return tf.keras.Sequential([L.Dense(16, activation="relu", input_shape=(2,)), L.Dense(3)])


def _compile(model, lr=0.05):
    model.compile(optimizer=tf.optimizers.Adam(lr), loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def test_fit_on_a_tapeflow_dataset(rng):
    x, y = _blobs(rng)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(256, seed=1).batch(32)
    val = tf.data.Dataset.from_tensor_slices((x[:64], y[:64])).batch(64)
    model = _compile(_classifier())
    out = io.StringIO()
    old, sys.stdout = sys.stdout, out
    try:
        h = model.fit(ds, epochs=5, validation_data=val)
    finally:
        sys.stdout = old
    text = out.getvalue()
    # the progress bar: epoch header, steps, time per step, loss and metrics
    assert "Epoch 1/5" in text and "Epoch 5/5" in text
    last = [line for line in text.splitlines() if line.startswith("8/8")][-1]
    assert "[==============================]" in last and "/step" in last
    assert "loss: " in last and "accuracy: " in last and "val_loss: " in last
    assert h.history["accuracy"][-1] > 0.95
    assert model.evaluate(ds, verbose=0)[1] > 0.95
    assert model.predict(ds.map(lambda a, b: a), verbose=0).shape == (256, 3)


def test_fit_with_steps_per_epoch_on_a_repeated_dataset(rng):
    x, y = _blobs(rng, 64)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat()
    model = _compile(_classifier())
    model.fit(ds, epochs=3, steps_per_epoch=5, verbose=0)
    assert int(model.optimizer.iterations) == 15
