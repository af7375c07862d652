"""compile / fit / evaluate / predict, the progress bar and the callbacks."""
import io
import os

import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import event_accumulator

L = tf.keras.layers


@pytest.fixture(autouse=True)
def _seeded_weights():
    """Every test here trains: weights, fit's shuffling and dropout follow the global seed, so each run
    repeats exactly (the data come from the per-test ``rng``)."""
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


def test_fit_arrays_learns_and_reports_history(rng):
    x, y = _blobs(rng)
    model = _compile(_classifier())
    h = model.fit(x, y, batch_size=32, epochs=8, verbose=0, validation_split=0.25)
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(h.history["loss"]) == 8 and h.epoch == list(range(8))
    assert h.history["loss"][-1] < h.history["loss"][0]
    assert h.history["accuracy"][-1] > 0.95 and h.history["val_accuracy"][-1] > 0.95
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.95 and loss < 0.3
    assert model.evaluate(x, y, verbose=0, return_dict=True)["accuracy"] == pytest.approx(acc)
    pred = model.predict(x, batch_size=50, verbose=0)
    assert isinstance(pred, np.ndarray) and pred.shape == (256, 3)
    assert (pred.argmax(1) == y).mean() == pytest.approx(acc, abs=1e-6)
    assert model.optimizer.iterations.numpy() == 8 * 6  # 192 training examples / 32


def test_progress_bar_on_a_terminal_redraws_in_place():
    class TTY(io.StringIO):
        def isatty(self):
            return True

    out = TTY()
    bar = tf.keras.callbacks.Progbar(3, stream=out, interval=0.0)
    for i in range(1, 4):
        bar.update(i, [("loss", 1.0 / i)])
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n")
    assert "1/3 [=========>....................] - ETA:" in text
    assert "3/3 [==============================]" in text and "loss: 0.3333" in text


def test_sample_weights_change_the_loss(rng):
    x = rng.normal(size=(40, 3)).astype(np.float32)
    y = rng.normal(size=(40, 1)).astype(np.float32)
    model = tf.keras.Sequential([L.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    w = np.zeros(40, np.float32)
    w[:10] = 1.0
    full = model.evaluate(x, y, verbose=0, batch_size=40)
    part = model.evaluate(x, y, sample_weight=w, verbose=0, batch_size=40)
    err = ((model.predict(x, verbose=0) - y) ** 2)[:, 0]
    assert full == pytest.approx(err.mean(), rel=1e-5)
    assert part == pytest.approx((err * w).sum() / 40, rel=1e-5)


def test_early_stopping_stops_and_restores_best_weights(rng):
    x, y = _blobs(rng, 64)
    model = _compile(_classifier(), lr=0.0)  # nothing improves
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=2, min_delta=1e-4, restore_best_weights=True)
    h = model.fit(x, y, epochs=20, verbose=0, callbacks=[stop])
    assert len(h.history["loss"]) == 3 and stop.stopped_epoch == 2
    # a real improvement resets the patience
    stop2 = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0)
    h = _compile(_classifier()).fit(x, y, epochs=20, verbose=0, callbacks=[stop2])
    assert len(h.history["loss"]) == 2


def test_model_checkpoint_and_tensorboard_callbacks(tmp_path, rng):
    x, y = _blobs(rng, 128)
    model = _compile(_classifier())
    ckpt = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "w-{epoch:02d}-{loss:.2f}"))
    best = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "best"), monitor="val_loss", save_best_only=True)
    board = tf.keras.callbacks.TensorBoard(str(tmp_path / "logs"), histogram_freq=1)
    model.fit(x, y, epochs=3, verbose=0, validation_data=(x[:32], y[:32]), callbacks=[ckpt, best, board])
    saved = sorted(p for p in os.listdir(tmp_path) if p.startswith("w-"))
    assert len(saved) == 3 and saved[0].startswith("w-01-") and saved[0].endswith(".safetensors")
    assert os.path.exists(tmp_path / "best.safetensors")
    # the best weights load into a fresh model
    fresh = _classifier()
    fresh.load_weights(str(tmp_path / "best")).assert_consumed()
    ea = event_accumulator()
    train = ea.EventAccumulator(str(tmp_path / "logs" / "train"))
    train.Reload()
    assert [e.step for e in train.Scalars("epoch_loss")] == [0, 1, 2]
    assert "epoch_accuracy" in train.Tags()["scalars"]
    assert any(t.endswith("/histogram") for t in train.Tags()["histograms"])
    val = ea.EventAccumulator(str(tmp_path / "logs" / "validation"))
    val.Reload()
    assert len(val.Scalars("epoch_loss")) == 3


def test_learning_rate_scheduler_and_lambda_callback(rng):
    x, y = _blobs(rng, 64)
    model = _compile(_classifier(), lr=0.1)
    seen = []
    sched = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    spy = tf.keras.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs=None: seen.append(model.optimizer.lr))
    h = model.fit(x, y, epochs=3, verbose=0, callbacks=[sched, spy])
    assert seen == pytest.approx([0.1, 0.05, 0.1 / 3])
    assert h.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.1 / 3])


def test_compile_and_fit_errors(rng):
    x, y = _blobs(rng, 16)
    model = _classifier()
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, y, verbose=0)
    _compile(model)
    with pytest.raises(tf.errors.InvalidArgumentError, match="x has 16 examples but y has 15"):
        model.fit(x, y[:15], verbose=0)
    with pytest.raises(ValueError, match="unknown loss"):
        model.compile(optimizer="adam", loss="cross_entropy_typo")
    with pytest.raises(TypeError, match="functional"):
        tf.keras.Model(inputs=None, outputs=None)


def test_train_on_batch_and_regularization_losses(rng):
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8, 1)).astype(np.float32)
    model = tf.keras.Sequential([L.Dense(1, input_shape=(3,), kernel_regularizer=tf.keras.regularizers.L2(0.5))])
    model.compile(optimizer=tf.optimizers.SGD(0.0), loss="mse")
    k = model.layers[0].kernel.numpy()
    loss = model.train_on_batch(x, y)
    mse = ((x @ k + model.layers[0].bias.numpy() - y) ** 2).mean()
    assert loss == pytest.approx(mse + 0.5 * (k ** 2).sum(), rel=1e-5)
    assert model.test_on_batch(x, y) == pytest.approx(loss, rel=1e-6)
    assert model.predict_on_batch(x).shape == (8, 1)


@pytest.mark.parametrize("data_seed", range(20))
def test_accuracy_picks_the_form_from_the_loss_or_shapes(data_seed):
    rng = np.random.default_rng(data_seed)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    yb = (x[:, :1] > 0).astype(np.float32)
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(4,))])
    model.compile(optimizer=tf.optimizers.Adam(0.1), loss="binary_crossentropy", metrics=["accuracy"])
    h = model.fit(x, yb, epochs=60, verbose=0)
    assert h.history["accuracy"][-1] > 0.9
    model2 = tf.keras.Sequential([L.Dense(3, input_shape=(4,))])
    model2.compile(optimizer="sgd", loss=lambda a, b: tf.reduce_mean(tf.square(b)), metrics=["accuracy"])
    logs = model2.evaluate(x, np.zeros(32, np.int64), verbose=0, return_dict=True)
    pred = model2.predict(x, verbose=0)
    assert logs["accuracy"] == pytest.approx((pred.argmax(1) == 0).mean())


def test_long_training_does_not_grow_in_memory(rng):
    psutil = pytest.importorskip("psutil", reason="memory is measured with psutil (a test dependency)")
    x = rng.random((256, 16)).astype(np.float32)
    y = rng.integers(0, 4, 256)
    model = tf.keras.Sequential([L.Dense(32, activation="relu", input_shape=(16,)), L.BatchNormalization(),
                                 L.Dropout(0.2), L.Dense(4)])
    model.compile(optimizer=tf.optimizers.Adam(0.01),
                  loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    proc = psutil.Process()
    model.fit(x, y, epochs=5, verbose=0)
    start = proc.memory_info().rss
    for _ in range(4):
        model.fit(x, y, epochs=5, verbose=0)  # 160 more steps
    grown = (proc.memory_info().rss - start) / 2 ** 20
    assert grown < 8, f"RSS grew by {grown:.1f} MB over 160 training steps"


def test_seeded_training_repeats_exactly(rng):
    x, y = _blobs(rng, 64)
    runs = []
    for _ in range(2):
        tf.random.set_seed(7)
        model = tf.keras.Sequential([L.Dense(8, activation="relu", input_shape=(2,)), L.Dropout(0.3), L.Dense(3)])
        _compile(model)
        h = model.fit(x, y, batch_size=16, epochs=3, verbose=0)  # shuffled batches, dropout
        runs.append((h.history["loss"], [w.copy() for w in model.get_weights()]))
    assert runs[0][0] == runs[1][0]
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_array_equal(a, b)


# ---- metric names in logs and history -------------------------------------------------------

def _mean_error(y_true, y_pred):
    return tf.reduce_mean(y_pred - y_true, axis=-1)


def test_history_keys_are_the_metric_names_given(rng):
    x = rng.normal(size=(20, 3)).astype(np.float32)
    y = rng.normal(size=(20, 1)).astype(np.float32)
    model = tf.keras.Sequential([L.Dense(1, input_shape=(3,))])
    model.compile("sgd", "mse", metrics=["mae", "mse", "acc", "accuracy"])
    h = model.fit(x, y, epochs=2, verbose=0, validation_split=0.2)
    # Keras 3's keys for the same compile call (checked against keras 3.15)
    assert sorted(h.history) == ["acc", "accuracy", "loss", "mae", "mse", "val_acc", "val_accuracy", "val_loss",
                                 "val_mae", "val_mse"]
    assert h.history["mse"][-1] == pytest.approx(h.history["loss"][-1], rel=1e-5)
    assert sorted(model.evaluate(x, y, verbose=0, return_dict=True)) == ["acc", "accuracy", "loss", "mae", "mse"]
    model.compile("sgd", "mse", metrics=["mean_absolute_error", tf.metrics.MeanAbsoluteError(name="foo"),
                                         _mean_error, tf.metrics.MeanSquaredError(), "AUC"])
    h = model.fit(x, y, epochs=1, verbose=0, validation_data=(x, y))
    assert sorted(h.history) == sorted(["loss", "mean_absolute_error", "foo", "_mean_error", "mean_squared_error",
                                        "AUC"] + ["val_" + k for k in ["loss", "mean_absolute_error", "foo",
                                                                       "_mean_error", "mean_squared_error", "AUC"]])


# ---- compile() without a loss ------------------------------------------------------------------

class _OwnStep(tf.keras.Model):
    """The keras.io VAE/GAN pattern: compile(optimizer) only, the loss computed in train_step."""

    def __init__(self):
        super().__init__()
        self.dense = L.Dense(1)
        self.total = tf.metrics.Mean(name="total_loss")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data[0], data[1]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.total.update_state(loss)
        return {"total_loss": self.total.result(), "last": loss}


def test_compile_without_loss_trains_a_model_with_its_own_train_step(rng):
    x = rng.normal(size=(64, 2)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0]], np.float32)
    model = _OwnStep()
    model.compile(optimizer=tf.optimizers.SGD(0.1))
    h = model.fit(x, y, batch_size=16, epochs=5, verbose=0)
    assert sorted(h.history) == ["last", "total_loss"]
    assert h.history["total_loss"][-1] < 0.1 * h.history["total_loss"][0]
    # its metric is the model's (reset each epoch, as Keras's attribute-tracked metrics)
    assert any(m is model.total for m in model.metrics)


def test_the_default_train_step_without_a_loss_raises_keras_error_when_it_runs(rng):
    x = rng.normal(size=(8, 2)).astype(np.float32)
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd")
    with pytest.raises(ValueError, match=r"No loss to compute\. Provide a `loss` argument in `compile\(\)`"):
        model.fit(x, x[:, :1], verbose=0)
    with pytest.raises(ValueError, match="No loss to compute"):
        model.evaluate(x, x[:, :1], verbose=0)
    assert model.predict(x, verbose=0).shape == (8, 1)  # predicting needs no loss
    # a loss added by a layer is enough, as in Keras
    reg = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_regularizer=tf.keras.regularizers.L2(1.0))])
    reg.compile(optimizer=tf.optimizers.SGD(0.1))
    h = reg.fit(x, x[:, :1], epochs=3, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
