"""Losses and metrics equal NumPy's formulas and TensorFlow's on random data."""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

f32 = np.float32


def _data(rng, kind, n=16, c=5):
    if kind == "regression":
        return rng.normal(size=(n, c)).astype(f32), rng.normal(size=(n, c)).astype(f32)
    if kind == "binary":
        return (rng.random((n, c)) < 0.5).astype(f32), rng.uniform(0.01, 0.99, size=(n, c)).astype(f32)
    if kind == "binary_logits":
        return (rng.random((n, c)) < 0.5).astype(f32), rng.normal(0, 3, size=(n, c)).astype(f32)
    if kind == "categorical":
        p = rng.random((n, c)).astype(f32)
        return np.eye(c, dtype=f32)[rng.integers(0, c, n)], p / p.sum(1, keepdims=True)
    if kind == "categorical_logits":
        return np.eye(c, dtype=f32)[rng.integers(0, c, n)], rng.normal(0, 2, size=(n, c)).astype(f32)
    if kind == "sparse":
        p = rng.random((n, c)).astype(f32)
        return rng.integers(0, c, n).astype(np.int32), p / p.sum(1, keepdims=True)
    if kind == "sparse_logits":
        return rng.integers(0, c, n).astype(np.int32), rng.normal(0, 2, size=(n, c)).astype(f32)
    raise ValueError(kind)


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _np_loss(name, y, p, **kw):
    eps = 1e-7
    if name == "MeanSquaredError":
        return ((y - p) ** 2).mean(-1)
    if name == "MeanAbsoluteError":
        return np.abs(y - p).mean(-1)
    if name == "Huber":
        d = kw.get("delta", 1.0)
        e = np.abs(p - y)
        return np.where(e <= d, 0.5 * e ** 2, d * e - 0.5 * d * d).mean(-1)
    if name == "BinaryCrossentropy":
        if kw.get("from_logits"):
            return (np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))).mean(-1)
        q = np.clip(p, eps, 1 - eps)
        return -(y * np.log(q) + (1 - y) * np.log(1 - q)).mean(-1)
    if name == "CategoricalCrossentropy":
        if kw.get("from_logits"):
            return -(y * _log_softmax(p)).sum(-1)
        q = np.clip(p / p.sum(-1, keepdims=True), eps, 1 - eps)
        return -(y * np.log(q)).sum(-1)
    if name == "SparseCategoricalCrossentropy":
        lp = _log_softmax(p if kw.get("from_logits") else np.log(np.clip(p, eps, 1 - eps)))
        return -lp[np.arange(len(y)), y]
    raise ValueError(name)


LOSSES = [
    ("MeanSquaredError", {}, "regression"),
    ("MeanAbsoluteError", {}, "regression"),
    ("Huber", {"delta": 0.7}, "regression"),
    ("BinaryCrossentropy", {}, "binary"),
    ("BinaryCrossentropy", {"from_logits": True}, "binary_logits"),
    ("CategoricalCrossentropy", {}, "categorical"),
    ("CategoricalCrossentropy", {"from_logits": True}, "categorical_logits"),
    ("SparseCategoricalCrossentropy", {}, "sparse"),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits"),
]


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
@pytest.mark.parametrize("name,cfg,kind", LOSSES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LOSSES)])
def test_losses_equal_numpy_and_tensorflow(name, cfg, kind, reduction, rng):
    y, p = _data(rng, kind)
    w = rng.uniform(0, 2, size=(len(y),)).astype(f32)
    loss = getattr(tf.losses, name)(reduction=reduction, **cfg)
    per = _np_loss(name, y, p, **cfg)
    for sw in (None, w):
        got = loss(y, p, sample_weight=sw).numpy()
        v = per if sw is None else per * w
        want = {"sum_over_batch_size": v.sum() / v.size, "sum": v.sum(), "none": v}[reduction]
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
        tensorflow = tf_or_none()
        if tensorflow is not None:
            tl = getattr(tensorflow.keras.losses, name)(reduction=reduction, **cfg)
            np.testing.assert_allclose(got, tl(y, p, sample_weight=sw).numpy(), rtol=2e-5, atol=1e-6)


def test_loss_functions_are_per_example_and_seed_spellings():
    y, p = np.array([[0.0, 1.0], [1.0, 1.0]], f32), np.array([[1.0, 1.0], [1.0, 3.0]], f32)
    np.testing.assert_allclose(tf.losses.mean_squared_error(y, p).numpy(), [0.5, 2.0])
    np.testing.assert_allclose(tf.losses.mse(y, p).numpy(), [0.5, 2.0])
    logits = np.array([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]], f32)
    labels = np.array([0, 2])
    want = -_log_softmax(logits)[[0, 1], labels].mean()
    np.testing.assert_allclose(float(tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)), want,
                               rtol=1e-6)
    np.testing.assert_allclose(
        float(tf.losses.softmax_cross_entropy(np.eye(3, dtype=f32)[labels], logits)), want, rtol=1e-6)
    np.testing.assert_allclose(
        tf.nn.softmax_cross_entropy_with_logits(labels=np.eye(3, dtype=f32)[labels], logits=logits).numpy(),
        -_log_softmax(logits)[[0, 1], labels], rtol=1e-6)


def test_loss_errors_and_lookup():
    with pytest.raises(tf.errors.InvalidArgumentError, match="labels of shape"):
        tf.losses.SparseCategoricalCrossentropy()(np.array([0, 1, 2]), np.ones((2, 3), f32) / 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
        tf.losses.CategoricalCrossentropy()(np.ones((2, 3), f32), np.ones((2, 4), f32))
    with pytest.raises(ValueError, match="reduction must be"):
        tf.losses.MeanSquaredError(reduction="avg")
    assert isinstance(tf.losses.get("sparse_categorical_crossentropy"), tf.losses.SparseCategoricalCrossentropy)
    with pytest.raises(ValueError, match="unknown loss"):
        tf.losses.get("hinge2")


def test_losses_are_differentiable(rng):
    y, logits = _data(rng, "sparse_logits", n=4, c=3)
    z = tf.Variable(logits)
    with tf.GradientTape() as tape:
        loss = tf.losses.SparseCategoricalCrossentropy(from_logits=True)(y, z)
    g = tape.gradient(loss, z).numpy()
    soft = np.exp(_log_softmax(logits))
    np.testing.assert_allclose(g, (soft - np.eye(3)[y]) / 4, rtol=1e-5, atol=1e-7)


# ---- metrics ---------------------------------------------------------------------------------------

def test_the_seeds_mean_metric():
    m = tf.metrics.Mean("loss")
    m(0)
    m(5)
    assert float(m.result()) == 2.5
    m([8, 9])
    assert float(m.result()) == 5.5
    m.reset_state()
    assert float(m.result()) == 0.0


def test_calling_a_metric_returns_the_result_and_state_is_in_variables():
    m = tf.metrics.Sum()
    assert float(m([1.0, 2.0])) == 3.0
    assert float(m(4.0)) == 7.0
    assert all(isinstance(v, tf.Variable) for v in m.variables)


METRICS = [
    ("Accuracy", {}, "classes"),
    ("BinaryAccuracy", {}, "binary"),
    ("BinaryAccuracy", {"threshold": 0.7}, "binary"),
    ("CategoricalAccuracy", {}, "categorical"),
    ("SparseCategoricalAccuracy", {}, "sparse"),
    ("MeanSquaredError", {}, "regression"),
    ("MeanAbsoluteError", {}, "regression"),
    ("Precision", {}, "binary"),
    ("Precision", {"thresholds": 0.3}, "binary"),
    ("Recall", {}, "binary"),
    ("Recall", {"thresholds": [0.2, 0.5, 0.8]}, "binary"),
    ("AUC", {}, "binary"),
    ("AUC", {"num_thresholds": 50, "curve": "PR"}, "binary"),
    ("AUC", {"summation_method": "minoring"}, "binary"),
]


def _np_metric(name, cfg, y, p, w):
    w = np.ones(len(y), f32) if w is None else w
    if name in ("Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "SparseCategoricalAccuracy",
                "MeanSquaredError", "MeanAbsoluteError"):
        if name == "Accuracy":
            v = (y == p).astype(f32)
        elif name == "BinaryAccuracy":
            v = (y == (p > cfg.get("threshold", 0.5))).astype(f32).mean(-1)
        elif name == "CategoricalAccuracy":
            v = (y.argmax(-1) == p.argmax(-1)).astype(f32)
        elif name == "SparseCategoricalAccuracy":
            v = (y == p.argmax(-1)).astype(f32)
        else:
            v = _np_loss(name, y, p)
        return (v * w).sum() / w.sum()
    if name in ("Precision", "Recall"):
        t = cfg.get("thresholds", 0.5)
        ts = [t] if np.isscalar(t) else t
        ww = np.broadcast_to(w[:, None], y.shape)
        out = []
        for th in ts:
            pos = p > th
            tp = (ww * (pos & (y > 0.5))).sum()
            other = (ww * (pos & (y <= 0.5))).sum() if name == "Precision" else (ww * (~pos & (y > 0.5))).sum()
            out.append(tp / (tp + other) if tp + other else 0.0)
        return out[0] if np.isscalar(t) else np.array(out)
    return None  # AUC: compared with TensorFlow only


@pytest.mark.parametrize("name,cfg,kind", METRICS, ids=[f"{m[0]}-{i}" for i, m in enumerate(METRICS)])
def test_metrics_equal_numpy_and_tensorflow_over_several_updates(name, cfg, kind, rng):
    m = getattr(tf.metrics, name)(**cfg)
    tensorflow = tf_or_none()
    tm = getattr(tensorflow.keras.metrics, name)(**cfg) if tensorflow is not None else None
    ys, ps, ws = [], [], []
    for i in range(3):
        if kind == "classes":
            y, p = rng.integers(0, 3, 20), rng.integers(0, 3, 20)
        else:
            y, p = _data(rng, kind, n=20, c=4 if kind != "sparse" else 5)
        w = rng.uniform(0.5, 2, size=(len(y),)).astype(f32) if i == 1 else None
        got = m(y, p, sample_weight=w)
        ys.append(y), ps.append(p), ws.append(w if w is not None else np.ones(len(y), f32))
        if tm is not None:
            tm.update_state(y, p, sample_weight=w)
            np.testing.assert_allclose(got.numpy(), tm.result().numpy(), rtol=1e-5, atol=1e-6)
    want = _np_metric(name, cfg, np.concatenate(ys), np.concatenate(ps), np.concatenate(ws))
    if want is not None:
        np.testing.assert_allclose(m.result().numpy(), want, rtol=1e-5, atol=1e-6)
    m.reset_state()
    assert np.all(np.asarray(m.result().numpy()) == 0.0)


def test_auc_of_a_perfect_and_a_reversed_ranking():
    m = tf.metrics.AUC()
    assert float(m([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])) == pytest.approx(1.0, abs=1e-6)
    m.reset_state()
    assert float(m([0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1])) == pytest.approx(0.0, abs=1e-6)


def test_metric_lookup():
    assert isinstance(tf.metrics.get("auc"), tf.metrics.AUC)
    assert tf.metrics.get(tf.losses.mean_absolute_error).name == "mean_absolute_error"
    with pytest.raises(ValueError, match="unknown metric"):
        tf.metrics.get("f2score")
