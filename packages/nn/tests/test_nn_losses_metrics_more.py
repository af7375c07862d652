"""Keras 3's losses and metrics, complete: every class against NumPy's formula or hand-worked numbers
(no TensorFlow needed), and against Keras 3 itself on the same inputs where TensorFlow is installed."""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

f32 = np.float32
EPS = 1e-7

# Keras 3.15's public names (keras.losses / keras.metrics), so the walk runs without TensorFlow too
KERAS_LOSSES = [
    "BinaryCrossentropy", "BinaryFocalCrossentropy", "CTC", "CategoricalCrossentropy", "CategoricalFocalCrossentropy",
    "CategoricalGeneralizedCrossEntropy", "CategoricalHinge", "Circle", "CosineSimilarity", "Dice", "Hinge", "Huber",
    "KLDivergence", "LogCosh", "Loss", "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredError",
    "MeanSquaredLogarithmicError", "Poisson", "SparseCategoricalCrossentropy", "SquaredHinge", "Tversky",
    "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy", "categorical_focal_crossentropy",
    "categorical_generalized_cross_entropy", "categorical_hinge", "circle", "cosine_similarity", "ctc", "deserialize",
    "dice", "get", "hinge", "huber", "kl_divergence", "log_cosh", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error", "poisson", "serialize",
    "sparse_categorical_crossentropy", "squared_hinge", "tversky"]
KERAS_METRICS = [
    "AUC", "Accuracy", "BinaryAccuracy", "BinaryCrossentropy", "BinaryIoU", "CategoricalAccuracy",
    "CategoricalCrossentropy", "CategoricalHinge", "ConcordanceCorrelation", "CosineSimilarity", "F1Score",
    "FBetaScore", "FalseNegatives", "FalsePositives", "Hinge", "IoU", "KLDivergence", "LogCoshError", "Mean",
    "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanIoU", "MeanMetricWrapper", "MeanSquaredError",
    "MeanSquaredLogarithmicError", "Metric", "OneHotIoU", "OneHotMeanIoU", "PearsonCorrelation", "Poisson",
    "Precision", "PrecisionAtRecall", "R2Score", "Recall", "RecallAtPrecision", "RootMeanSquaredError",
    "SensitivityAtSpecificity", "SparseCategoricalAccuracy", "SparseCategoricalCrossentropy",
    "SparseTopKCategoricalAccuracy", "SpecificityAtSensitivity", "SquaredHinge", "Sum", "TopKCategoricalAccuracy",
    "TrueNegatives", "TruePositives", "binary_accuracy", "binary_crossentropy", "binary_focal_crossentropy",
    "categorical_accuracy", "categorical_crossentropy", "categorical_focal_crossentropy", "categorical_hinge",
    "concordance_correlation", "deserialize", "get", "hinge", "huber", "kl_divergence", "log_cosh",
    "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error",
    "pearson_correlation", "poisson", "serialize", "sparse_categorical_accuracy", "sparse_categorical_crossentropy",
    "sparse_top_k_categorical_accuracy", "squared_hinge", "top_k_categorical_accuracy"]


def _keras():
    if tf_or_none() is None:
        pytest.skip("comparing with Keras 3 needs TensorFlow (the NumPy and hand-worked tests run without it)")
    import keras

    return keras


def _missing(module, names):
    return sorted(n for n in names if not n.startswith("_") and not hasattr(module, n))


def test_every_keras3_loss_and_metric_name_exists():
    assert _missing(tf.keras.losses, KERAS_LOSSES) == []
    assert _missing(tf.keras.metrics, KERAS_METRICS) == []


def test_walk_keras_losses_and_metrics_all():
    keras = _keras()
    assert _missing(tf.keras.losses, dir(keras.losses)) == [], "keras.losses names missing from tapeflow"
    assert _missing(tf.keras.metrics, dir(keras.metrics)) == [], "keras.metrics names missing from tapeflow"


# ---- data ------------------------------------------------------------------------------------

def _data(seed=0, n=8, c=4):
    rng = np.random.default_rng(seed)
    d = {"reg": (rng.normal(size=(n, c)).astype(f32), rng.normal(size=(n, c)).astype(f32)),
         "pos": (rng.uniform(0, 2, (n, c)).astype(f32), rng.uniform(0.1, 2, (n, c)).astype(f32))}
    bin_t = (rng.random((n, c)) < 0.5).astype(f32)
    prob = rng.uniform(0.01, 0.99, (n, c)).astype(f32)
    logit = rng.normal(0, 2, (n, c)).astype(f32)
    oh = np.eye(c, dtype=f32)[rng.integers(0, c, n)]
    sm = prob / prob.sum(1, keepdims=True)
    lab = rng.integers(0, c, n).astype(np.uint8)
    emb = rng.normal(size=(n, c)).astype(f32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    d.update({"bin": (bin_t, prob), "bin_logits": (bin_t, logit), "pm_logits": (np.where(bin_t > 0, 1, -1).astype(f32),
                                                                                 logit),
              "onehot": (oh, sm), "onehot_logits": (oh, logit), "sparse": (lab, sm), "sparse_logits": (lab, logit),
              "kl": (sm, sm[::-1].copy()), "embed": (lab, emb), "w": rng.uniform(0, 2, n).astype(f32)})
    return d


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _bce(y, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def _np_focal_b(y, p, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0):
    y = y * (1 - label_smoothing) + 0.5 * label_smoothing
    p = _sig(p) if from_logits else p
    pt = y * p + (1 - y) * (1 - p)
    out = (1 - pt) ** gamma * _bce(y, p)
    if apply_class_balancing:
        out = (y * alpha + (1 - y) * (1 - alpha)) * out
    return out.mean(-1)


def _np_focal_c(y, p, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0):
    y = y * (1 - label_smoothing) + label_smoothing / y.shape[-1]
    p = np.exp(_log_softmax(p)) if from_logits else p
    q = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return (alpha * (1 - q) ** gamma * -y * np.log(q)).sum(-1)


def _np_hinge_labels(y):
    return 2 * y - 1 if np.isin(y, (0, 1)).all() else y


def _np_norm(x, axis):
    return x * np.minimum(1 / np.sqrt((x * x).sum(axis, keepdims=True)), 1 / EPS)


def _np_sparse(y, p, from_logits=False, ignore_class=None):
    y = y.astype(np.int64)
    lp = _log_softmax(p if from_logits else np.log(np.clip(p, EPS, 1 - EPS)))
    out = -lp[np.arange(len(y)), np.where(y == ignore_class, 0, y)]
    return np.where(y == ignore_class, 0.0, out)


def _np_circle(y, e, gamma=80.0, margin=0.4, remove_diagonal=True):
    d = np.maximum(1 - e @ e.T, 0)
    pos = y[:, None] == y[None, :]
    neg = ~pos
    if remove_diagonal:
        pos &= ~np.eye(len(y), dtype=bool)
    pw = np.maximum((margin + d) * pos, 0)
    nw = np.maximum((1 + margin - d) * neg, 0)

    def lse(x, m):
        x = np.where(m, x, -np.inf)
        mx = np.max(np.where(m, x, -1e30), 1, keepdims=True)
        with np.errstate(divide="ignore"):
            return (mx + np.log(np.exp(x - mx).sum(1, keepdims=True)))[:, 0]

    z = lse(-gamma * pw * (margin - d), pos) + lse(gamma * nw * (1 - margin - d), neg)
    return np.logaddexp(0, z)


def _np_ctc(labels, logits):
    """-log p(labels | logits) by the CTC forward recursion over the extended label sequence (blank 0)."""
    out = []
    for lab, z in zip(labels, logits):
        lab = [int(v) for v in lab if v != 0]
        lp = _log_softmax(z.astype(np.float64))
        ext = [0]
        for v in lab:
            ext += [v, 0]
        a = np.full(len(ext), -np.inf)
        a[0] = lp[0, 0]
        if len(ext) > 1:
            a[1] = lp[0, ext[1]]
        for t in range(1, len(z)):
            prev = a.copy()
            for s in range(len(ext)):
                terms = [prev[s]] + ([prev[s - 1]] if s else [])
                if s > 1 and ext[s] != 0 and ext[s] != ext[s - 2]:
                    terms.append(prev[s - 2])
                a[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
        out.append(-np.logaddexp.reduce(a[-2:] if len(ext) > 1 else a[-1:]))
    return np.array(out)


def _ctc_data(seed=0):
    rng = np.random.default_rng(seed)
    return np.array([[1, 2, 0], [3, 0, 0], [1, 1, 2], [2, 3, 1]], np.int32), rng.normal(size=(4, 7, 4)).astype(f32)


# name, constructor kwargs, data kind, NumPy per-example reference (None: reduced over everything)
LOSSES = [
    ("MeanAbsolutePercentageError", {}, "reg",
     lambda y, p: 100 * np.abs((y - p) / np.maximum(np.abs(y), EPS)).mean(-1)),
    ("MeanSquaredLogarithmicError", {}, "pos",
     lambda y, p: ((np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(y, EPS) + 1)) ** 2).mean(-1)),
    ("CosineSimilarity", {}, "reg", lambda y, p: -(_np_norm(y, -1) * _np_norm(p, -1)).sum(-1)),
    ("Huber", {"delta": 0.5}, "reg", lambda y, p: np.where(np.abs(p - y) <= 0.5, 0.5 * (p - y) ** 2,
                                                           0.5 * np.abs(p - y) - 0.125).mean(-1)),
    ("LogCosh", {}, "reg", lambda y, p: np.log(np.cosh(p - y)).mean(-1)),
    ("Hinge", {}, "bin_logits", lambda y, p: np.maximum(1 - _np_hinge_labels(y) * p, 0).mean(-1)),
    ("Hinge", {}, "pm_logits", lambda y, p: np.maximum(1 - y * p, 0).mean(-1)),
    ("SquaredHinge", {}, "bin_logits", lambda y, p: np.maximum(1 - _np_hinge_labels(y) * p, 0).__pow__(2).mean(-1)),
    ("CategoricalHinge", {}, "onehot_logits",
     lambda y, p: np.maximum(((1 - y) * p).max(-1) - (y * p).sum(-1) + 1, 0)),
    ("KLDivergence", {}, "kl", lambda y, p: (np.clip(y, EPS, 1) * np.log(np.clip(y, EPS, 1) / np.clip(p, EPS, 1)))
     .sum(-1)),
    ("Poisson", {}, "pos", lambda y, p: (p - y * np.log(p + EPS)).mean(-1)),
    ("BinaryFocalCrossentropy", {}, "bin", _np_focal_b),
    ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5, "from_logits": True,
                                 "label_smoothing": 0.2}, "bin_logits",
     lambda y, p: _np_focal_b(y, p, True, 0.3, 1.5, True, 0.2)),
    ("CategoricalFocalCrossentropy", {}, "onehot", _np_focal_c),
    ("CategoricalFocalCrossentropy", {"alpha": 0.5, "gamma": 3.0, "from_logits": True, "label_smoothing": 0.1},
     "onehot_logits", lambda y, p: _np_focal_c(y, p, 0.5, 3.0, True, 0.1)),
    ("CategoricalCrossentropy", {"label_smoothing": 0.1}, "onehot",
     lambda y, p: -((y * 0.9 + 0.025) * np.log(np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS))).sum(-1)),
    ("SparseCategoricalCrossentropy", {}, "sparse", _np_sparse),
    ("SparseCategoricalCrossentropy", {"from_logits": True, "ignore_class": 1}, "sparse_logits",
     lambda y, p: _np_sparse(y, p, True, 1)),
    ("Dice", {}, "bin", None),
    ("Dice", {"axis": 1}, "bin", lambda y, p: 1 - 2 * (y * p).sum(1) / (y.sum(1) + p.sum(1) + EPS)),
    ("Tversky", {"alpha": 0.3, "beta": 0.7}, "bin", None),
    ("Tversky", {"axis": 1}, "bin",
     lambda y, p: 1 - (y * p).sum(1) / ((y * p).sum(1) + 0.5 * ((1 - p) * y).sum(1) + 0.5 * (p * (1 - y)).sum(1)
                                        + EPS)),
    ("Circle", {}, "embed", _np_circle),
    ("Circle", {"gamma": 2.0, "margin": 0.25, "remove_diagonal": False}, "embed",
     lambda y, e: _np_circle(y, e, 2.0, 0.25, False)),
    ("CategoricalGeneralizedCrossEntropy", {"q": 0.7}, "sparse",
     lambda y, p: (1 - p[np.arange(len(y)), y.astype(int)] ** 0.7) / 0.7),
    ("CTC", {}, "ctc", lambda y, p: _np_ctc(y, p)),
]
_IDS = [f"{n}-{i}" for i, (n, *_) in enumerate(LOSSES)]


def _inputs(kind, seed=0):
    return _ctc_data(seed) if kind == "ctc" else _data(seed)[kind]


def _np_reduce(per, w, reduction, mask=None):
    if mask is not None:
        valid = mask.astype(f32)
        if reduction in ("sum_over_batch_size", "mean"):
            valid = valid * (valid.size / valid.sum())
        w = valid if w is None else w * valid
    v = per if w is None else per * w
    if reduction == "none":
        return v
    if reduction == "sum":
        return v.sum()
    if reduction == "mean_with_sample_weight" and w is not None:
        return v.sum() / w.sum()
    return v.sum() / v.size


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none", "mean_with_sample_weight"])
@pytest.mark.parametrize("name,cfg,kind,ref", LOSSES, ids=_IDS)
def test_loss_equals_numpy(name, cfg, kind, ref, reduction):
    y, p = _inputs(kind)
    w = _data()["w"][:len(y)]
    loss = getattr(tf.losses, name)(reduction=reduction, **cfg)
    got = np.asarray(loss(y, p, sample_weight=w if ref is not None else None))
    if ref is None:  # Dice / Tversky over every axis: one value
        yy, pp = y.astype(np.float64), p.astype(np.float64)
        tp = (yy * pp).sum()
        if name == "Dice":
            want = 1 - 2 * tp / (yy.sum() + pp.sum() + EPS)
        else:
            want = 1 - tp / (tp + cfg["alpha"] * ((1 - pp) * yy).sum() + cfg["beta"] * (pp * (1 - yy)).sum() + EPS)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        return
    per = ref(y.astype(np.float64) if y.dtype.kind == "f" else y, p.astype(np.float64))
    mask = None
    if name == "SparseCategoricalCrossentropy" and cfg.get("ignore_class") is not None:
        mask = y != cfg["ignore_class"]
    if name == "Circle":
        mask = per > 0
    np.testing.assert_allclose(got, _np_reduce(per, w, reduction, mask), rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none", "mean_with_sample_weight"])
@pytest.mark.parametrize("name,cfg,kind,ref", LOSSES, ids=_IDS)
def test_loss_equals_keras(name, cfg, kind, ref, reduction):
    keras = _keras()
    y, p = _inputs(kind, seed=3)
    w = _data(3)["w"][:len(y)] if ref is not None else None
    for sw in (None, w):
        got = np.asarray(getattr(tf.losses, name)(reduction=reduction, **cfg)(y, p, sample_weight=sw))
        want = np.asarray(getattr(keras.losses, name)(reduction=reduction, **cfg)(y, p, sample_weight=sw))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("fn", ["mean_absolute_percentage_error", "mean_squared_logarithmic_error",
                                "cosine_similarity", "log_cosh", "hinge", "squared_hinge", "categorical_hinge",
                                "kl_divergence", "poisson", "binary_focal_crossentropy",
                                "categorical_focal_crossentropy", "dice", "tversky"])
def test_loss_functions_equal_keras(fn):
    keras = _keras()
    y, p = _data(5)["bin"]
    np.testing.assert_allclose(np.asarray(getattr(tf.losses, fn)(y, p)), np.asarray(getattr(keras.losses, fn)(y, p)),
                               rtol=2e-5, atol=2e-6)


def test_ctc_gradient_matches_finite_differences():
    labels, logits = _ctc_data(1)
    z = tf.Variable(logits.astype(np.float64))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.losses.ctc(labels, z))
    g = np.asarray(tape.gradient(loss, z))
    num = np.zeros_like(logits, dtype=np.float64)
    base = logits.astype(np.float64)
    for idx in [(0, 0, 0), (1, 3, 2), (2, 6, 1), (3, 2, 3)]:
        hi, lo = base.copy(), base.copy()
        hi[idx] += 1e-5
        lo[idx] -= 1e-5
        num[idx] = (_np_ctc(labels, hi).sum() - _np_ctc(labels, lo).sum()) / 2e-5
        assert abs(g[idx] - num[idx]) < 1e-3, (idx, g[idx], num[idx])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int64, np.float32])
def test_integer_labels_of_any_dtype(dtype):
    y = np.array([1, 0, 2, 2], dtype)
    p = np.array([[0.2, 0.7, 0.1], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.5, 0.4, 0.1]], f32)
    ref = y.astype(np.int32)
    for loss in (tf.losses.SparseCategoricalCrossentropy(), tf.losses.SparseCategoricalCrossentropy(from_logits=True),
                 tf.losses.CategoricalGeneralizedCrossEntropy()):
        np.testing.assert_allclose(np.asarray(loss(y, p)), np.asarray(loss(ref, p)), rtol=1e-6)
    for cls in (tf.metrics.SparseCategoricalAccuracy, tf.metrics.SparseCategoricalCrossentropy):
        assert float(cls()(y, p)) == pytest.approx(float(cls()(ref, p)))
    assert float(tf.metrics.SparseTopKCategoricalAccuracy(k=1)(y, p)) == 0.75
    assert float(tf.metrics.MeanIoU(num_classes=3)(y, np.array([1, 0, 2, 0], dtype))) == pytest.approx(
        float(tf.metrics.MeanIoU(num_classes=3)(ref, np.array([1, 0, 2, 0]))))


def test_loss_objects_check_their_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError, match="reduction must be one of"):
        tf.losses.Dice(reduction="average")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"q must be in the interval \(0, 1\)"):
        tf.losses.CategoricalGeneralizedCrossEntropy(q=1.5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:CTC\]"):
        tf.losses.ctc([1, 2], np.zeros((2, 3, 4), f32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="labels have dtype string"):  # (a tf.string tensor)
        tf.losses.sparse_categorical_crossentropy(np.array(["a"]), np.zeros((1, 2), f32))
    assert float(tf.losses.MeanSquaredError(reduction=None)([[1.0]], [[3.0]])[0]) == 4.0


def test_loss_dtype_computes_in_it():
    y, p = _data()["reg"]
    loss = tf.losses.MeanSquaredError(dtype="float64")
    assert loss(y, p).dtype == tf.float64
    assert tf.losses.MeanSquaredError()(y, p.astype(np.float64)).dtype == tf.float32  # Keras's floatx


def _classes(module):
    return [getattr(module, n) for n in module.__all__ if isinstance(getattr(module, n), type)]


_CTOR = {"IoU": {"num_classes": 3, "target_class_ids": [0, 2]}, "MeanIoU": {"num_classes": 3},
         "OneHotIoU": {"num_classes": 3, "target_class_ids": [1]}, "OneHotMeanIoU": {"num_classes": 3},
         "PrecisionAtRecall": {"recall": 0.4}, "RecallAtPrecision": {"precision": 0.6},
         "SensitivityAtSpecificity": {"specificity": 0.3}, "SpecificityAtSensitivity": {"sensitivity": 0.7},
         "MeanMetricWrapper": {"fn": tf.losses.mean_squared_error},
         "LossFunctionWrapper": {"fn": tf.losses.mean_squared_error}}


@pytest.mark.parametrize("module", ["losses", "metrics"])
def test_every_class_round_trips_through_get_config(module):
    mod = getattr(tf.keras, module)
    for cls in _classes(mod):
        if cls.__name__ in ("Loss", "Metric"):
            continue
        obj = cls(**_CTOR.get(cls.__name__, {}), name="custom_name")
        config = obj.get_config()
        again = cls.from_config(config)
        assert type(again) is cls and again.get_config() == config, cls.__name__
        assert config["name"] == "custom_name"
        assert mod.deserialize(mod.serialize(obj)).get_config() == config


def test_get_config_gives_the_constructor_arguments():
    assert tf.losses.BinaryFocalCrossentropy(gamma=3.0, from_logits=True).get_config() == {
        "apply_class_balancing": False, "alpha": 0.25, "gamma": 3.0, "from_logits": True, "label_smoothing": 0.0,
        "axis": -1, "reduction": "sum_over_batch_size", "name": "binary_focal_crossentropy", "dtype": None}
    assert tf.metrics.SparseTopKCategoricalAccuracy(k=3).get_config() == {
        "k": 3, "name": "sparse_top_k_categorical_accuracy", "dtype": None, "from_sorted_ids": False}
    m = tf.metrics.AUC.from_config(tf.metrics.AUC(num_thresholds=7, curve="PR", multi_label=True).get_config())
    assert (m.num_thresholds, m.curve, m.multi_label) == (7, "PR", True)


# ---- metrics: hand-worked numbers (no TensorFlow) --------------------------------------------

def _run(metric, *batches):
    for b in batches:
        metric.update_state(*b)
    return np.asarray(metric.result())


def test_regression_and_probabilistic_metrics_by_hand():
    y, p = [[0.0, 1.0], [2.0, 4.0]], [[1.0, 1.0], [1.0, 4.0]]
    assert _run(tf.metrics.RootMeanSquaredError(), (y, p)) == pytest.approx(np.sqrt(0.5))
    assert _run(tf.metrics.MeanAbsolutePercentageError(), (y, p)) == pytest.approx((5e8 + 25.0) / 2, rel=1e-6)
    msle = np.mean([np.mean((np.log1p([1, 1]) - np.log1p([EPS, 1])) ** 2),
                    np.mean((np.log1p([1, 4]) - np.log1p([2, 4])) ** 2)])
    assert _run(tf.metrics.MeanSquaredLogarithmicError(), (y, p)) == pytest.approx(msle, rel=1e-5)
    assert _run(tf.metrics.LogCoshError(), (y, p)) == pytest.approx(np.mean(np.log(np.cosh([1, 0, 1, 0]))), rel=1e-5)
    assert _run(tf.metrics.CosineSimilarity(), ([[0, 1], [1, 1]], [[0, 3], [-1, -1]])) == pytest.approx(0.0, abs=1e-6)
    assert _run(tf.metrics.Poisson(), ([[1.0, 0.0]], [[1.0, 1.0]])) == pytest.approx(1.0)
    assert _run(tf.metrics.KLDivergence(), ([[0.5, 0.5]], [[0.25, 0.75]])) == pytest.approx(
        0.5 * np.log(2) + 0.5 * np.log(0.5 / 0.75), rel=1e-5)
    assert _run(tf.metrics.Hinge(), ([[1.0, 0.0]], [[0.5, -2.0]])) == pytest.approx(0.25)
    assert _run(tf.metrics.SquaredHinge(), ([[1.0, 0.0]], [[0.5, -2.0]])) == pytest.approx(0.125)
    assert _run(tf.metrics.CategoricalHinge(), ([[0.0, 1.0]], [[0.6, 0.4]])) == pytest.approx(1.2)
    assert _run(tf.metrics.BinaryCrossentropy(), ([[1.0]], [[0.5]])) == pytest.approx(np.log(2), rel=1e-6)
    assert _run(tf.metrics.CategoricalCrossentropy(), ([[0, 1]], [[0.5, 0.5]])) == pytest.approx(np.log(2), rel=1e-6)
    assert _run(tf.metrics.SparseCategoricalCrossentropy(), ([1], [[0.5, 0.5]])) == pytest.approx(np.log(2), rel=1e-6)
    assert _run(tf.metrics.PearsonCorrelation(), ([[1.0, 2.0, 3.0]], [[2.0, 4.0, 6.5]])) == pytest.approx(
        np.corrcoef([1, 2, 3], [2, 4, 6.5])[0, 1], rel=1e-5)
    assert _run(tf.metrics.ConcordanceCorrelation(), ([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]])) == pytest.approx(1.0)


def test_mean_counts_examples_as_keras():
    # a weighted batch of rows, then an unweighted one: each example counts once (its row averaged)
    m = tf.metrics.Mean()
    m.update_state([[1.0, 3.0], [5.0, 7.0]], sample_weight=[1.0, 3.0])
    m.update_state([[0.0, 2.0]])
    assert float(m.result()) == pytest.approx((2.0 + 18.0 + 1.0) / 5.0)
    assert float(tf.metrics.RootMeanSquaredError()([[0.0, 0.0], [0.0, 0.0]], [[1.0, 3.0], [2.0, 2.0]],
                                                   sample_weight=[1.0, 0.0])) == pytest.approx(np.sqrt(5.0))


def test_r2_score_by_hand():
    y = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 5.0]], f32)
    p = np.array([[1.0, 1.0], [2.0, 1.0], [4.0, 4.0]], f32)
    ss_res = ((y - p) ** 2).sum(0)
    ss_tot = ((y - y.mean(0)) ** 2).sum(0)
    raw = 1 - ss_res / ss_tot
    assert float(tf.metrics.R2Score()(y, p)) == pytest.approx(raw.mean(), rel=1e-5)
    np.testing.assert_allclose(tf.metrics.R2Score(class_aggregation=None)(y, p), raw, rtol=1e-5)
    assert float(tf.metrics.R2Score(class_aggregation="variance_weighted_average")(y, p)) == pytest.approx(
        (raw * ss_tot).sum() / ss_tot.sum(), rel=1e-5)
    n, k = y.size, 1
    assert float(tf.metrics.R2Score(num_regressors=k)(y, p)) == pytest.approx(
        1 - (1 - raw.mean()) * (n - 1) / (n - k - 1), rel=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected 2D inputs"):
        tf.metrics.R2Score()([1.0, 2.0], [1.0, 2.0])


def test_top_k_and_f_scores_by_hand():
    p = [[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.9, 0.05, 0.05]]
    # ties count as in the top k (row 2: only 0.4 is above the label's 0.3)
    assert float(tf.metrics.SparseTopKCategoricalAccuracy(k=2)([0, 0, 1], p)) == pytest.approx(2 / 3)
    assert float(tf.metrics.TopKCategoricalAccuracy(k=1)([[0, 0, 1], [0, 0, 1], [1, 0, 0]], p)) == pytest.approx(2 / 3)
    ids = [[1, 2, 0], [2, 0, 1]]
    assert float(tf.metrics.SparseTopKCategoricalAccuracy(k=1, from_sorted_ids=True)([1, 0], ids)) == 0.5
    y = [[1, 0], [1, 1], [0, 1]]
    pr = [[0.9, 0.2], [0.3, 0.7], [0.6, 0.8]]
    # threshold 0.5: class 0 tp=1 fp=1 fn=1; class 1 tp=2 fp=0 fn=0
    np.testing.assert_allclose(tf.metrics.F1Score(threshold=0.5)(y, pr), [0.5, 1.0], rtol=1e-5)
    assert float(tf.metrics.F1Score(threshold=0.5, average="micro")(y, pr)) == pytest.approx(2 * 0.75 * 0.75 / 1.5,
                                                                                                 rel=1e-5)
    assert float(tf.metrics.FBetaScore(beta=2.0, threshold=0.5, average="weighted")(y, pr)) == pytest.approx(
        (2 * 0.5 + 2 * 1.0) / 4, rel=1e-5)
    with pytest.raises(TypeError, match="beta must be a Python float"):
        tf.metrics.FBetaScore(beta=2)


def test_iou_metrics_by_hand():
    y, p = [0, 0, 1, 1, 2], [0, 1, 1, 1, 0]
    # class 0: tp 1, fp 1, fn 1 -> 1/3; class 1: tp 2, fp 1 -> 2/3; class 2: tp 0, fn 1 -> 0
    assert float(tf.metrics.MeanIoU(num_classes=3)(y, p)) == pytest.approx((1 / 3 + 2 / 3 + 0) / 3, rel=1e-5)
    assert float(tf.metrics.IoU(3, target_class_ids=[1])(y, p)) == pytest.approx(2 / 3, rel=1e-5)
    # ignoring class 2's example: class 0 is 1/2, class 1 2/3, class 2 never occurs (not counted)
    assert float(tf.metrics.MeanIoU(num_classes=3, ignore_class=2)(y, p)) == pytest.approx(7 / 12, rel=1e-5)
    binary = tf.metrics.BinaryIoU(target_class_ids=[1], threshold=0.3)
    assert float(binary([0, 1, 1], [0.2, 0.8, 0.3])) == pytest.approx(1.0)
    onehot = np.eye(3, dtype=f32)[y]
    scores = np.eye(3, dtype=f32)[p] * 0.8 + 0.05
    assert float(tf.metrics.OneHotMeanIoU(num_classes=3)(onehot, scores)) == pytest.approx(1 / 3, rel=1e-5)
    assert float(tf.metrics.OneHotIoU(3, target_class_ids=[0, 1])(onehot, scores)) == pytest.approx(0.5, rel=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="target_class_ids"):
        tf.metrics.IoU(num_classes=2, target_class_ids=[2])


def test_confusion_metrics_by_hand():
    y = [0, 1, 1, 1, 0, 0]
    p = [0.9, 0.8, 0.3, 0.6, 0.1, 0.4]
    assert float(tf.metrics.TruePositives()(y, p)) == 2.0
    assert float(tf.metrics.FalsePositives()(y, p)) == 1.0
    assert float(tf.metrics.TrueNegatives()(y, p)) == 2.0
    assert float(tf.metrics.FalseNegatives()(y, p)) == 1.0
    np.testing.assert_array_equal(tf.metrics.TruePositives(thresholds=[0.2, 0.7])(y, p), [3.0, 1.0])
    rows = [[0, 1, 1], [1, 0, 1]]
    scores = [[0.1, 0.7, 0.6], [0.8, 0.3, 0.2]]
    assert float(tf.metrics.Precision(top_k=1)(rows, scores)) == 1.0
    assert float(tf.metrics.Recall(top_k=1)(rows, scores)) == 0.5
    assert float(tf.metrics.Precision(class_id=2)(rows, scores)) == 1.0
    assert float(tf.metrics.Recall(class_id=2)(rows, scores)) == 0.5
    # sorted scores: positives at 0.8, 0.6, 0.3; negatives at 0.9, 0.4, 0.1
    assert float(tf.metrics.SensitivityAtSpecificity(2 / 3)(y, p)) == pytest.approx(2 / 3)
    assert float(tf.metrics.SpecificityAtSensitivity(1.0)(y, p)) == pytest.approx(1 / 3)
    assert float(tf.metrics.PrecisionAtRecall(2 / 3)(y, p)) == pytest.approx(2 / 3)
    assert float(tf.metrics.RecallAtPrecision(0.75)(y, p)) == pytest.approx(0.0)
    assert float(tf.metrics.RecallAtPrecision(0.6)(y, p)) == pytest.approx(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"recall must be in \[0, 1\]"):
        tf.metrics.PrecisionAtRecall(1.5)


def test_auc_variants_by_hand():
    y = [0, 0, 1, 1]
    p = [0.1, 0.4, 0.35, 0.8]
    assert float(tf.metrics.AUC(num_thresholds=1001)(y, p)) == pytest.approx(0.75, abs=2e-3)
    m = tf.metrics.AUC(num_thresholds=1001, multi_label=True)
    both = np.stack([y, y], 1)
    assert float(m(both, np.stack([p, [0.9, 0.8, 0.1, 0.2]], 1))) == pytest.approx((0.75 + 0.0) / 2, abs=2e-3)
    lw = tf.metrics.AUC(num_thresholds=1001, multi_label=True, label_weights=[1.0, 0.0])
    assert float(lw(both, np.stack([p, [0.9, 0.8, 0.1, 0.2]], 1))) == pytest.approx(0.75, abs=2e-3)
    assert float(tf.metrics.AUC(num_thresholds=1001, from_logits=True)(y, np.log(np.array(p) / (1 - np.array(p))))) \
        == pytest.approx(0.75, abs=2e-3)
    assert 0.0 < float(tf.metrics.AUC(curve="PRGAIN")(y, p)) <= 1.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="curve must be"):
        tf.metrics.AUC(curve="XY")
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_labels is needed only"):
        tf.metrics.AUC(num_labels=3)


def test_metric_reset_state_starts_over():
    for m, batch in [(tf.metrics.MeanIoU(num_classes=2), ([0, 1], [0, 0])),
                     (tf.metrics.F1Score(average="macro", threshold=0.5), ([[1, 0]], [[0.9, 0.6]])),
                     (tf.metrics.R2Score(), ([[1.0], [2.0], [4.0]], [[1.0], [3.0], [3.0]])),
                     (tf.metrics.AUC(multi_label=True), ([[1, 0], [0, 1]], [[0.7, 0.2], [0.4, 0.9]]))]:
        first = _run(m, batch)
        _run(m, ([[0, 1]], [[0.2, 0.1]]) if isinstance(m, tf.metrics.F1Score) else batch)
        m.reset_state()
        np.testing.assert_allclose(_run(m, batch), first, rtol=1e-6)


# ---- metrics against Keras 3 -----------------------------------------------------------------

def _metric_data(seed=1, n=12, c=4):
    rng = np.random.default_rng(seed)
    reg_t, reg_p = rng.normal(size=(n, c)).astype(f32), rng.normal(size=(n, c)).astype(f32)
    pos_t, pos_p = rng.uniform(0, 2, (n, c)).astype(f32), rng.uniform(0.1, 2, (n, c)).astype(f32)
    bin_t = (rng.random((n, c)) < 0.5).astype(f32)
    prob = rng.uniform(0, 1, (n, c)).astype(f32)
    prob[0, 0], prob[1, 1], prob[2, 2] = 0.0, 1.0, 0.5
    logit = rng.normal(0, 2, (n, c)).astype(f32)
    oh = np.eye(c, dtype=f32)[rng.integers(0, c, n)]
    sm = prob / prob.sum(1, keepdims=True)
    lab, plab = rng.integers(0, c, n).astype(np.uint8), rng.integers(0, c, n).astype(np.int32)
    return {"reg": (reg_t, reg_p), "pos": (pos_t, pos_p), "bin": (bin_t, prob), "bin_logits": (bin_t, logit),
            "onehot": (oh, sm), "onehot_logits": (oh, logit), "sparse": (lab, sm), "sparse_logits": (lab, logit),
            "labels": (lab, plab), "kl": (sm, sm[::-1].copy()), "r2": (reg_t, reg_t + 0.5 * reg_p),
            "bin1": ((rng.random(n) < 0.5).astype(f32), rng.uniform(0, 1, n).astype(f32)),
            "w": rng.integers(0, 3, n).astype(f32)}


METRICS = [
    ("MeanSquaredError", {}, "reg"), ("MeanAbsoluteError", {}, "reg"), ("MeanAbsolutePercentageError", {}, "reg"),
    ("MeanSquaredLogarithmicError", {}, "pos"), ("RootMeanSquaredError", {}, "reg"), ("CosineSimilarity", {}, "reg"),
    ("LogCoshError", {}, "reg"), ("KLDivergence", {}, "kl"), ("Poisson", {}, "pos"),
    ("BinaryCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "bin_logits"),
    ("CategoricalCrossentropy", {}, "onehot"), ("SparseCategoricalCrossentropy", {}, "sparse"),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits"), ("Hinge", {}, "bin_logits"),
    ("SquaredHinge", {}, "bin_logits"), ("CategoricalHinge", {}, "onehot_logits"),
    ("PearsonCorrelation", {}, "reg"), ("ConcordanceCorrelation", {}, "reg"), ("Accuracy", {}, "labels"),
    ("BinaryAccuracy", {"threshold": 0.3}, "bin"), ("CategoricalAccuracy", {}, "onehot"),
    ("SparseCategoricalAccuracy", {}, "sparse"), ("TopKCategoricalAccuracy", {"k": 2}, "onehot"),
    ("SparseTopKCategoricalAccuracy", {"k": 2}, "sparse"), ("R2Score", {}, "r2"),
    ("R2Score", {"class_aggregation": "variance_weighted_average", "num_regressors": 2}, "r2"),
    ("R2Score", {"class_aggregation": None}, "r2"), ("F1Score", {}, "onehot"),
    ("F1Score", {"average": "micro", "threshold": 0.3}, "bin"),
    ("FBetaScore", {"beta": 2.0, "average": "macro"}, "bin"),
    ("FBetaScore", {"beta": 0.5, "average": "weighted", "threshold": 0.4}, "bin"),
    ("IoU", {"num_classes": 4, "target_class_ids": [0, 2]}, "labels"), ("MeanIoU", {"num_classes": 4}, "labels"),
    ("MeanIoU", {"num_classes": 4, "ignore_class": 1}, "labels"), ("BinaryIoU", {}, "bin1"),
    ("BinaryIoU", {"target_class_ids": [1], "threshold": 0.3}, "bin1"),
    ("OneHotIoU", {"num_classes": 4, "target_class_ids": [1, 3]}, "onehot"),
    ("OneHotMeanIoU", {"num_classes": 4}, "onehot"), ("TruePositives", {}, "bin"),
    ("FalsePositives", {"thresholds": [0.15, 0.5, 0.85]}, "bin"), ("TrueNegatives", {}, "bin"),
    ("FalseNegatives", {"thresholds": 0.3}, "bin"), ("Precision", {"thresholds": [0.2, 0.6]}, "bin"),
    ("Precision", {"top_k": 2}, "bin"), ("Precision", {"class_id": 1}, "bin"),
    ("Recall", {"top_k": 1, "class_id": 2}, "bin"), ("Recall", {}, "bin"),
    ("SensitivityAtSpecificity", {"specificity": 0.6}, "bin"),
    ("SpecificityAtSensitivity", {"sensitivity": 0.7, "num_thresholds": 50}, "bin"),
    ("PrecisionAtRecall", {"recall": 0.5}, "bin"), ("RecallAtPrecision", {"precision": 0.6, "class_id": 1}, "bin"),
    ("SensitivityAtSpecificity", {"specificity": 0.5, "num_thresholds": 1}, "bin"), ("AUC", {}, "bin"),
    ("AUC", {"curve": "PR"}, "bin"), ("AUC", {"curve": "PRGAIN", "num_thresholds": 37}, "bin"),
    ("AUC", {"summation_method": "minoring"}, "bin"), ("AUC", {"summation_method": "majoring", "curve": "PR"}, "bin"),
    ("AUC", {"thresholds": [0.1, 0.4, 0.8]}, "bin"), ("AUC", {"thresholds": [0.25, 0.5, 0.75]}, "bin"),
    ("AUC", {"multi_label": True}, "bin"),
    ("AUC", {"multi_label": True, "num_labels": 4, "label_weights": [1, 2, 0, 1], "curve": "PR"}, "bin"),
    ("AUC", {"label_weights": [1, 2, 0, 1]}, "bin"), ("AUC", {"from_logits": True}, "bin_logits"),
]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name,cfg,kind", METRICS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(METRICS)])
def test_metric_equals_keras(name, cfg, kind, weighted):
    keras = _keras()
    d = _metric_data()
    t, p = d[kind]
    w = d["w"] if weighted else None

    def run(m):
        m.update_state(t, p, sample_weight=w)
        m.update_state(t[:5], p[:5])
        first = np.asarray(m.result())
        m.reset_state()
        m.update_state(t[3:], p[3:])
        return first, np.asarray(m.result())

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Keras's IoU warns that float weights are cast to its int counts
        want = run(getattr(keras.metrics, name)(**cfg))
    got = run(getattr(tf.metrics, name)(**cfg))
    for g, k in zip(got, want):
        assert g.shape == k.shape
        np.testing.assert_allclose(g, k, rtol=1e-5, atol=1e-5)
