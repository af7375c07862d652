"""Keras 3's training API: fit's arguments (class_weight, sample weights, validation, steps, shuffle),
generators, Sequences and datasets of (x, y, w), evaluate/predict and the *_on_batch methods, freezing."""
import warnings

import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

L = tf.keras.layers


@pytest.fixture(autouse=True)
def _seeded():
    tf.random.set_seed(7)
    yield
    tf.random.set_seed(None)


def _data(rng, n=24, classes=3):
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = rng.integers(0, classes, n)
    return x, y


def _model(weights=None):
    m = tf.keras.Sequential([L.Dense(5, activation="tanh", input_shape=(4,)), L.Dense(3)])
    if weights is not None:
        m.set_weights(weights)
    m.compile(optimizer=tf.keras.optimizers.SGD(0.1),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


class _Recorder(tf.keras.Sequential):
    """Records the first feature of every training batch it sees (to check batching and order)."""

    def __init__(self):
        super().__init__([L.Dense(1, input_shape=(1,))])
        self.seen = []

    def train_step(self, data):
        x = data[0] if isinstance(data, tuple) else data
        self.seen.append(x.numpy()[:, 0].tolist())
        return {"loss": 0.0}


def _recorder():
    m = _Recorder()
    m.compile("sgd", "mse", run_eagerly=True)  # its train_step reads values (x.numpy()): eager, as in Keras
    return m


# -- class_weight and sample weights ------------------------------------------------------------------

def test_class_weight_weighs_each_example_by_its_class(rng):
    x, y = _data(rng)
    w0 = _model().get_weights()
    cw = {0: 0.5, 1: 2.0, 2: 1.0}
    a = _model(w0)
    ha = a.fit(x, y, batch_size=8, epochs=3, shuffle=False, class_weight=cw, verbose=0)
    b = _model(w0)
    hb = b.fit(x, y, batch_size=8, epochs=3, shuffle=False, sample_weight=np.array([cw[c] for c in y], np.float32),
               verbose=0)
    np.testing.assert_allclose(ha.history["loss"], hb.history["loss"], rtol=1e-6)
    for u, v in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(u, v, rtol=1e-6)
    # it changes training: unweighted differs
    c = _model(w0)
    hc = c.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    assert abs(hc.history["loss"][-1] - ha.history["loss"][-1]) > 1e-4
    # one-hot targets: the class is the argmax; classes missing from the dict weigh 1
    onehot = np.eye(3, dtype=np.float32)[y]
    d = _model(w0)
    d.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
    hd = d.fit(x, onehot, batch_size=8, epochs=3, shuffle=False, class_weight={0: 0.5, 1: 2.0}, verbose=0)
    np.testing.assert_allclose(hd.history["loss"], hb.history["loss"], rtol=1e-5)


def test_class_weight_errors(rng):
    x, y = _data(rng)
    m = _model()
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        m.fit(x, y, class_weight={0: 1.0}, sample_weight=np.ones(len(y)), verbose=0)
    with pytest.raises(ValueError, match="class indices"):
        m.fit(x, y, class_weight={"a": 1.0}, verbose=0)
    with pytest.raises(ValueError, match="a dict"):
        m.fit(x, y, class_weight=[1.0, 2.0], verbose=0)
    ds = [(x[:8], y[:8], np.ones(8, np.float32))]
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        m.fit(iter(ds), class_weight={0: 2.0}, verbose=0)


def test_dataset_of_x_y_w_and_validation_weights(rng):
    pytest.importorskip("tapeflow.data", reason="fitting on a tf.data Dataset needs tapeflow-data")
    x, y = _data(rng)
    w = rng.uniform(0.1, 2.0, size=len(y)).astype(np.float32)
    w0 = _model().get_weights()
    a = _model(w0)
    ha = a.fit(x, y, sample_weight=w, batch_size=8, epochs=2, shuffle=False, verbose=0,
               validation_data=(x, y, w))
    b = _model(w0)
    ds = tf.data.Dataset.from_tensor_slices((x, y, w)).batch(8)
    hb = b.fit(ds, epochs=2, verbose=0, validation_data=ds)
    np.testing.assert_allclose(ha.history["loss"], hb.history["loss"], rtol=1e-6)
    np.testing.assert_allclose(ha.history["val_loss"], hb.history["val_loss"], rtol=1e-6)
    # the weighted validation loss is evaluate's with the same weights, not the unweighted one
    assert ha.history["val_loss"][-1] == pytest.approx(a.evaluate(x, y, sample_weight=w, verbose=0)[0], rel=1e-6)
    assert ha.history["val_loss"][-1] != pytest.approx(a.evaluate(x, y, verbose=0)[0], rel=1e-3)
    # a generator of (x, y, w) trains the same
    c = _model(w0)

    def gen():
        for i in range(0, 24, 8):
            yield x[i:i + 8], y[i:i + 8], w[i:i + 8]

    c.fit(gen(), epochs=1, verbose=0)
    a1 = _model(w0)
    a1.fit(x, y, sample_weight=w, batch_size=8, epochs=1, shuffle=False, verbose=0)
    for u, v in zip(a1.get_weights(), c.get_weights()):
        np.testing.assert_allclose(u, v, rtol=1e-6)


# -- steps, shuffling, generators, Sequences --------------------------------------------------------

def test_steps_per_epoch_continues_through_the_arrays_as_keras():
    m = _recorder()
    x = np.arange(10, dtype=np.float32)[:, None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = m.fit(x, x, batch_size=2, steps_per_epoch=3, epochs=3, shuffle=False, verbose=0)
    # Keras 3 gives exactly these batches: the second epoch ends where the data do (with a warning)
    assert m.seen == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [0, 1], [2, 3], [4, 5]]
    assert h.epoch == [0, 1, 2]
    assert any("ran out of data" in str(w.message) and w.category is tf.errors.TrainingWarning for w in caught)


def test_shuffle_batch_shuffles_within_each_batch():
    m = _recorder()
    x = np.arange(32, dtype=np.float32)[:, None]
    m.fit(x, x, batch_size=8, epochs=3, shuffle="batch", verbose=0)
    assert len(m.seen) == 12
    for i, batch in enumerate(m.seen):
        k = i % 4
        assert sorted(batch) == list(range(8 * k, 8 * k + 8))  # each batch keeps its own examples
    assert any(batch != sorted(batch) for batch in m.seen)  # ... in a shuffled order
    m.seen.clear()
    m.fit(x, x, batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert m.seen == [list(range(k, k + 8)) for k in range(0, 32, 8)]
    with pytest.raises(ValueError, match="shuffle"):
        m.fit(x, x, shuffle="all", verbose=0)


def test_generator_is_read_once_then_training_stops_with_a_warning():
    m = _recorder()
    x = np.arange(8, dtype=np.float32)[:, None]

    def gen():
        for i in range(0, 8, 2):
            yield x[i:i + 2], x[i:i + 2]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = m.fit(gen(), epochs=3, verbose=0)
    assert m.seen == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert h.epoch == [0]
    assert any("ran out of data" in str(w.message) and w.category is tf.errors.TrainingWarning for w in caught)
    # with steps_per_epoch the generator continues across epochs
    m.seen.clear()
    h = m.fit(gen(), epochs=2, steps_per_epoch=2, verbose=0)
    assert m.seen == [[0, 1], [2, 3], [4, 5], [6, 7]] and h.epoch == [0, 1]
    with pytest.raises(ValueError, match="y must not be given"):
        m.fit(gen(), x, verbose=0)


class _Seq:
    """A keras.utils.Sequence-like object: batches by index, on_epoch_end after each epoch."""

    def __init__(self, x):
        self.x, self.ends = x, 0

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.x[2 * i:2 * i + 2], self.x[2 * i:2 * i + 2]

    def on_epoch_end(self):
        self.ends += 1


def test_sequence_batches_by_index_shuffled_and_told_each_epoch_end():
    m = _recorder()
    x = np.arange(8, dtype=np.float32)[:, None]
    seq = _Seq(x)
    h = m.fit(seq, epochs=3, verbose=0, shuffle=False)
    assert m.seen == [[0, 1], [2, 3], [4, 5], [6, 7]] * 3 and seq.ends == 3 and h.epoch == [0, 1, 2]
    m.seen.clear()
    m.fit(seq, epochs=3, verbose=0, shuffle=True)
    orders = [tuple(b[0] for b in m.seen[i:i + 4]) for i in range(0, 12, 4)]
    assert all(sorted(o) == [0, 2, 4, 6] for o in orders)  # every batch once per epoch
    assert any(list(o) != [0, 2, 4, 6] for o in orders)  # in a shuffled order
    with pytest.raises(ValueError, match="batch_size must not be given"):
        m.fit(seq, batch_size=2, verbose=0)
    # the utility class is one such Sequence
    assert issubclass(tf.keras.utils.Sequence, tf.keras.utils.PyDataset) or \
        tf.keras.utils.Sequence is tf.keras.utils.PyDataset


def test_infinite_dataset_needs_steps(rng):
    pytest.importorskip("tapeflow.data", reason="fitting on a tf.data Dataset needs tapeflow-data")
    x, y = _data(rng)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat()
    m = _model()
    with pytest.raises(ValueError, match="infinite"):
        m.fit(ds, epochs=1, verbose=0)
    h = m.fit(ds, epochs=2, steps_per_epoch=5, verbose=0)
    assert h.epoch == [0, 1] and int(m.optimizer.iterations.numpy()) == 10


def test_validation_freq_steps_and_initial_epoch(rng):
    x, y = _data(rng)
    m = _model()
    seen = []
    cb = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append((e, "val_loss" in logs)))
    h = m.fit(x, y, epochs=4, validation_data=(x, y), validation_freq=[1, 3], verbose=0, callbacks=[cb])
    assert seen == [(0, True), (1, False), (2, True), (3, False)]
    assert len(h.history["val_loss"]) == 2
    seen.clear()
    h = m.fit(x, y, epochs=4, initial_epoch=2, validation_data=(x, y), validation_freq=2, verbose=0, callbacks=[cb])
    assert seen == [(2, False), (3, True)] and h.epoch == [2, 3]
    with pytest.raises(ValueError, match="validation_freq"):
        m.fit(x, y, validation_data=(x, y), validation_freq=0, verbose=0)

    # validation_steps: a validation generator continues across epochs, one batch each time
    batches = []

    def vgen():
        for i in range(0, 24, 8):
            batches.append(i)
            yield x[i:i + 8], y[i:i + 8]

    m.fit(x, y, epochs=3, validation_data=vgen(), validation_steps=1, verbose=0)
    assert batches == [0, 8, 16]


# -- evaluate, predict, *_on_batch ----------------------------------------------------------------------

def test_evaluate_predict_and_on_batch_methods(rng):
    x, y = _data(rng)
    m = _model()
    logs = m.evaluate(x, y, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "accuracy"}
    assert m.evaluate(x, y, verbose=0) == pytest.approx([logs["loss"], logs["accuracy"]])
    # test_on_batch on the whole data is evaluate on one batch
    assert m.test_on_batch(x, y, return_dict=True) == pytest.approx(logs)
    out = m.predict_on_batch(x)
    assert isinstance(out, np.ndarray) and out.shape == (24, 3)
    np.testing.assert_allclose(m.predict(x, batch_size=5, verbose=0), out, rtol=1e-6)
    # predict runs the on_predict hooks with each batch's outputs
    got = []
    cb = tf.keras.callbacks.LambdaCallback(on_predict_batch_end=lambda b, logs: got.append(logs["outputs"].shape))
    m.predict(x, batch_size=10, verbose=0, callbacks=[cb])
    assert got == [(10, 3), (10, 3), (4, 3)]
    # train_on_batch with class_weight = train_on_batch with the matching sample weights
    w0 = m.get_weights()
    cw = {0: 3.0, 1: 0.5}
    a = _model(w0)
    la = a.train_on_batch(x, y, class_weight=cw)
    b = _model(w0)
    lb = b.train_on_batch(x, y, sample_weight=np.array([cw.get(c, 1.0) for c in y], np.float32))
    assert la == pytest.approx(lb)
    for u, v in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(u, v, rtol=1e-6)
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        a.train_on_batch(x, y, sample_weight=np.ones(24), class_weight=cw)
    with pytest.raises(ValueError, match="verbose"):
        m.evaluate(x, y, verbose=3)


# -- freezing -------------------------------------------------------------------------------------------

def test_frozen_model_keeps_its_weights_and_its_variables_say_so(rng):
    x, y = _data(rng)
    m = tf.keras.Sequential([L.Dense(5, input_shape=(4,)), L.BatchNormalization(), L.Dense(3)])
    m.trainable = False
    assert m.trainable_weights == [] and len(m.non_trainable_weights) == 8
    assert [v.trainable for v in m.weights] == [False] * 8  # as Keras 3: the variables are frozen too
    m.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = m.get_weights()
    m.fit(x, y, epochs=2, verbose=0)
    for u, v in zip(before, m.get_weights()):  # moving statistics too: BatchNormalization ran in inference
        np.testing.assert_array_equal(u, v)
    # unfreezing restores what was trainable (the moving statistics stay non-trainable)
    m.trainable = True
    assert [v.trainable for v in m.layers[1].weights] == [True, True, False, False]
    assert len(m.trainable_weights) == 6
    # a frozen BatchNormalization inside a trainable model runs in inference mode
    m.layers[1].trainable = False
    assert len(m.trainable_weights) == 4
    bn_before = m.layers[1].get_weights()
    m.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    m.fit(x, y, epochs=1, verbose=0)
    for u, v in zip(bn_before, m.layers[1].get_weights()):
        np.testing.assert_array_equal(u, v)
    out_train = m(x, training=True).numpy()
    out_infer = m(x, training=False).numpy()
    np.testing.assert_array_equal(out_train, out_infer)
    # a GradientTape no longer watches the frozen layer's variables
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(m(x))
    grads = tape.gradient(loss, m.layers[1].weights[:2])
    assert grads == [None, None]


# -- against Keras 3 --------------------------------------------------------------------------------------

def test_fit_weights_equal_keras(rng):
    tensorflow = tf_or_none()
    if tensorflow is None:
        pytest.skip("comparing with Keras 3 needs TensorFlow (the behaviour tests above run without it)")
    keras = tensorflow.keras
    x, y = _data(rng, 32)
    w = rng.uniform(0.2, 2.0, size=32).astype(np.float32)
    xv, yv = _data(rng, 8)
    km = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="tanh"), keras.layers.Dense(3)])
    w0 = km.get_weights()
    km.compile(optimizer=keras.optimizers.SGD(0.1),
               loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    cw = {0: 0.5, 1: 2.0, 2: 1.5}
    kh = km.fit(x, y, batch_size=8, epochs=3, shuffle=False, class_weight=cw, verbose=0,
                validation_data=(xv, yv, w[:8]), validation_freq=[1, 3], initial_epoch=0)
    ours = _model(w0)
    h = ours.fit(x, y, batch_size=8, epochs=3, shuffle=False, class_weight=cw, verbose=0,
                 validation_data=(xv, yv, w[:8]), validation_freq=[1, 3], initial_epoch=0)
    for u, v in zip(km.get_weights(), ours.get_weights()):
        np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)
    for k in ("loss", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(h.history[k], kh.history[k], rtol=1e-5)
    # sample weights and *_on_batch
    kl = km.train_on_batch(x, y, sample_weight=w, return_dict=True)
    ol = ours.train_on_batch(x, y, sample_weight=w, return_dict=True)
    assert ol["loss"] == pytest.approx(float(kl["loss"]), rel=1e-5)
    kt = km.test_on_batch(xv, yv, return_dict=True)
    ot = ours.test_on_batch(xv, yv, return_dict=True)
    assert ot["loss"] == pytest.approx(float(kt["loss"]), rel=1e-5)
    np.testing.assert_allclose(ours.predict_on_batch(xv), km.predict_on_batch(xv), rtol=1e-5, atol=1e-6)


def test_only_weighted_metrics_see_sample_weights(rng):
    x, y = _data(rng)
    m = _model()
    m.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"], weighted_metrics=[tf.keras.metrics.SparseCategoricalAccuracy(name="wacc")])
    w = np.zeros(len(y), np.float32)
    hit = m.predict(x, verbose=0).argmax(1) == y
    w[np.argmax(hit)] = 1.0  # all the weight on one example the model gets right (if any)
    logs = m.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    assert logs["accuracy"] == pytest.approx(hit.mean())  # as Keras 3: `metrics` are unweighted
    assert logs["wacc"] == pytest.approx(float(hit.any()))
