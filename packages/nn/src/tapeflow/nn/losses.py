"""Losses as functions (one value per example) and as objects (reduced to a scalar), as Keras's.

``Loss`` objects reduce the per-example values: ``"sum_over_batch_size"`` (the default:
the sum divided by the number of values), ``"sum"``, ``"mean_with_sample_weight"``
(divided by the sum of the weights) or ``"none"``.

>>> import tapeflow as tf
>>> loss = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
>>> round(float(loss([0, 1], [[2.0, 0.0], [0.0, 2.0]])), 4)
0.1269
"""
from __future__ import annotations

from typing import Any

from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor

from . import _masks
import tapeflow.core as K

EPSILON = 1e-7


def _pred(y_pred):
    if type(y_pred) is Tensor:
        return y_pred
    if hasattr(y_pred, "read_value"):
        return y_pred.read_value()
    t = K.convert_to_tensor(y_pred)
    return t if t.dtype.is_floating else K.cast(t, K.float32)


def _true(y_true, dtype):
    t = y_true if type(y_true) is Tensor else (y_true.read_value() if hasattr(y_true, "read_value")
                                              else K.convert_to_tensor(y_true))
    return t if t.dtype == dtype else K.cast(t, dtype)


def _same_rank(a, b, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank: when one rank exceeds the other by one and its last axis
    is 1, that axis is squeezed, except that a rank-1 partner is expanded instead (with ``expand_rank_1``)."""
    ra, rb = len(a.shape), len(b.shape)
    if ra == rb + 1 and a.shape[-1] == 1:
        if rb == 1 and expand_rank_1:
            b = K.reshape(b, tuple(b.shape) + (1,))
        else:
            a = K.reshape(a, tuple(a.shape[:-1]))
    elif rb == ra + 1 and b.shape[-1] == 1:
        if ra == 1 and expand_rank_1:
            a = K.reshape(a, tuple(a.shape) + (1,))
        else:
            b = K.reshape(b, tuple(b.shape[:-1]))
    return a, b


def _check_same(y_true, y_pred, fn):
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise InvalidArgumentError(f"y_true and y_pred must have the same shape, got {tuple(y_true.shape)} and "
                                   f"{tuple(y_pred.shape)}", fn)


# ---- functions: one loss per example (the last axis is reduced) --------------------------

def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred) ** 2, axis=-1).

    >>> import tapeflow as tf
    >>> tf.losses.mean_squared_error([[0.0, 1.0]], [[1.0, 1.0]]).numpy().tolist()
    [0.5]
    """
    y_pred = _pred(y_pred)
    y_true, y_pred = _same_rank(_true(y_true, y_pred.dtype), y_pred)
    return K.reduce_mean(K.square(K.subtract(y_true, y_pred)), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|, axis=-1).

    >>> import tapeflow as tf
    >>> tf.losses.mean_absolute_error([[0.0, 1.0]], [[1.0, 3.0]]).numpy().tolist()
    [1.5]
    """
    y_pred = _pred(y_pred)
    y_true, y_pred = _same_rank(_true(y_true, y_pred.dtype), y_pred)
    return K.reduce_mean(K.abs(K.subtract(y_true, y_pred)), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """mean(0.5 * e**2 if |e| <= delta else delta * |e| - 0.5 * delta**2, axis=-1), e = y_pred - y_true.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.huber([[0.0, 1.0], [0.0, 0.0]], [[0.6, 0.4], [0.4, 0.6]])[0]), 3)
    0.18
    """
    y_pred = _pred(y_pred)
    y_true, y_pred = _same_rank(_true(y_true, y_pred.dtype), y_pred)
    err = K.subtract(y_pred, y_true)
    a = K.abs(err)
    small = K.cast(K.less_equal(a, delta), a.dtype)
    quad = 0.5 * K.square(err)
    lin = delta * a - 0.5 * delta * delta
    return K.reduce_mean(small * quad + (1.0 - small) * lin, axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean(-(y log p + (1 - y) log(1 - p)), axis), p clipped to [1e-7, 1 - 1e-7] (or from logits, stably).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.binary_crossentropy([[1.0]], [[0.0]], from_logits=True)[0]), 4)
    0.6931
    """
    y_pred = _pred(y_pred)
    y_true, y_pred = _same_rank(_true(y_true, y_pred.dtype), y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        bce = K.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = K.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        bce = K.negative(y_true * K.log(p) + (1.0 - y_true) * K.log(1.0 - p))
    return K.reduce_mean(bce, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(p), axis) for one-hot (or soft) labels; p = softmax(logits) or the normalised,
    clipped probabilities.

    >>> import tapeflow as tf
    >>> y = tf.losses.categorical_crossentropy([[0, 1, 0], [0, 0, 1]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [0.0513, 2.3026]
    """
    y_pred = _pred(y_pred)
    y_true = _true(y_true, y_pred.dtype)
    _check_same(y_true, y_pred, "CategoricalCrossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    if from_logits:
        return K.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    p = y_pred / K.reduce_sum(y_pred, axis=axis, keepdims=True)
    p = K.clip_by_value(p, EPSILON, 1.0 - EPSILON)
    return K.negative(K.reduce_sum(y_true * K.log(p), axis=axis))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """-log(p[y_true]) for integer labels (any integer dtype: uint8 labels from MNIST work);
    p = softmax(logits) or the clipped probabilities.  Labels equal to ``ignore_class`` give 0 and
    are masked out of the reduction of a Loss object.

    >>> import tapeflow as tf
    >>> y = tf.losses.sparse_categorical_crossentropy([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [0.0513, 2.3026]
    """
    y_pred = _pred(y_pred)
    labels = _labels(y_true, "SparseCategoricalCrossentropy")
    ls, ps = labels._shape, y_pred._shape
    if len(ls) == len(ps) and ls and ls[-1] == 1:
        labels = K.reshape(labels, ls[:-1])
        ls = ls[:-1]
    if ls != ps[:-1]:
        raise InvalidArgumentError(f"labels of shape {ls} do not match predictions of shape {ps}; allowed: labels "
                                   f"of shape {ps[:-1]}", "SparseCategoricalCrossentropy")
    if axis not in (-1, len(ps) - 1):
        raise InvalidArgumentError(f"axis must be the last axis, got {axis}", "SparseCategoricalCrossentropy")
    valid = None
    if ignore_class is not None:
        valid = K.not_equal(labels, K.cast(int(ignore_class), labels.dtype))
        labels = K.where(valid, labels, K.zeros_like(labels))
    logits = y_pred if from_logits else K.log(K.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    res = K.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    if valid is not None:
        res = K.where(valid, res, K.zeros_like(res))
        _masks.set_mask(res, valid)
    return res


def _labels(y_true, op):
    """Integer class labels: any integer dtype (uint8, int16...) or whole floats, as int32/int64."""
    t = y_true if type(y_true) is Tensor else (y_true.read_value() if hasattr(y_true, "read_value")
                                              else K.convert_to_tensor(y_true))
    if t.dtype in (K.int32, K.int64):
        return t
    if not (t.dtype.is_integer or t.dtype.is_floating or t.dtype == K.bool):
        raise InvalidArgumentError(f"labels have dtype {t.dtype.name}; allowed: an integer or float dtype", op)
    return K.cast(t, K.int32)


def _pair(y_true, y_pred):
    """y_pred as a float tensor, y_true in its dtype, ranks matched as Keras's squeeze_or_expand_to_same_rank."""
    y_pred = _pred(y_pred)
    return _same_rank(_true(y_true, y_pred.dtype), y_pred)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|(y_true - y_pred) / max(|y_true|, 1e-7)|, axis=-1).

    >>> import tapeflow as tf
    >>> tf.losses.mean_absolute_percentage_error([[2.0, 4.0]], [[1.0, 4.0]]).numpy().tolist()
    [25.0]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    diff = K.abs(K.subtract(y_true, y_pred) / K.maximum(K.abs(y_true), EPSILON))
    return 100.0 * K.reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1)) ** 2, axis=-1).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.mean_squared_logarithmic_error([[0.0, 1.0]], [[1.0, 1.0]])[0]), 4)
    0.2402
    """
    y_true, y_pred = _pair(y_true, y_pred)
    a = K.log(K.maximum(y_pred, EPSILON) + 1.0)
    b = K.log(K.maximum(y_true, EPSILON) + 1.0)
    return K.reduce_mean(K.square(a - b), axis=-1)


def _normalize(x, axis):
    """x / ||x|| along ``axis`` (the inverse norm capped at 1e7, as Keras's ops.normalize)."""
    inv = K.minimum(K.rsqrt(K.reduce_sum(K.square(x), axis=axis, keepdims=True)), 1.0 / EPSILON)
    return x * inv


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for parallel vectors, 0 for orthogonal.

    >>> import tapeflow as tf
    >>> tf.losses.cosine_similarity([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]]).numpy().round(4).tolist()
    [-0.0, -1.0]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return K.negative(K.reduce_sum(_normalize(y_true, axis) * _normalize(y_pred, axis), axis=axis))


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true)), axis=-1), computed as x + softplus(-2x) - log(2).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.log_cosh([[0.0, 1.0]], [[1.0, 1.0]])[0]), 4)
    0.2169
    """
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return K.reduce_mean(x + K.softplus(x * -2.0) - 0.6931471805599453, axis=-1)


logcosh = log_cosh


def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [1e-7, 1].

    >>> import tapeflow as tf
    >>> round(float(tf.losses.kl_divergence([[0.5, 0.5]], [[0.25, 0.75]])[0]), 4)
    0.1438
    """
    y_pred = _pred(y_pred)
    y_true = K.clip_by_value(_true(y_true, y_pred.dtype), EPSILON, 1.0)
    y_pred = K.clip_by_value(y_pred, EPSILON, 1.0)
    return K.reduce_sum(y_true * K.log(y_true / y_pred), axis=-1)


kld = KLD = kullback_leibler_divergence = kl_divergence


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.poisson([[1.0, 0.0]], [[1.0, 1.0]])[0]), 4)
    1.0
    """
    y_pred = _pred(y_pred)
    y_true = _true(y_true, y_pred.dtype)
    return K.reduce_mean(y_pred - y_true * K.log(y_pred + EPSILON), axis=-1)


def _hinge_labels(y_true):
    """Labels in {0, 1} become {-1, 1} (all of them, or none: as Keras)."""
    binary = K.reduce_all(K.logical_or(K.equal(y_true, 0.0), K.equal(y_true, 1.0)))
    return K.where(binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0), axis=-1); labels in {0, 1} are taken as {-1, 1}.

    >>> import tapeflow as tf
    >>> tf.losses.hinge([[1.0, 0.0]], [[0.5, -2.0]]).numpy().tolist()
    [0.25]
    """
    y_pred = _pred(y_pred)
    y_true = _hinge_labels(_true(y_true, y_pred.dtype))
    return K.reduce_mean(K.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0) ** 2, axis=-1); labels in {0, 1} are taken as {-1, 1}.

    >>> import tapeflow as tf
    >>> tf.losses.squared_hinge([[1.0, 0.0]], [[0.5, -2.0]]).numpy().tolist()
    [0.125]
    """
    y_pred = _pred(y_pred)
    y_true = _hinge_labels(_true(y_true, y_pred.dtype))
    return K.reduce_mean(K.square(K.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis (one-hot labels).

    >>> import tapeflow as tf
    >>> [round(v, 4) for v in tf.losses.categorical_hinge([[0.0, 1.0]], [[0.6, 0.4]]).numpy().tolist()]
    [1.2]
    """
    y_pred = _pred(y_pred)
    y_true = _true(y_true, y_pred.dtype)
    pos = K.reduce_sum(y_true * y_pred, axis=-1)
    neg = K.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return K.maximum(neg - pos + 1.0, 0.0)


def _smooth(y_true, label_smoothing, classes=None):
    if not label_smoothing:
        return y_true
    if classes is None:
        return y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return y_true * (1.0 - label_smoothing) + label_smoothing / classes


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    """mean((1 - p_t) ** gamma * bce, axis), p_t = y p + (1 - y)(1 - p); with ``apply_class_balancing``
    each term also weighs ``alpha`` (positives) or ``1 - alpha`` (negatives).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.binary_focal_crossentropy([[1.0]], [[0.5]])[0]), 4)
    0.1733
    """
    y_pred = _pred(y_pred)
    y_true = _smooth(_true(y_true, y_pred.dtype), label_smoothing)
    if from_logits:
        y_pred = K.sigmoid(y_pred)
    p = K.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    bce = K.negative(y_true * K.log(p) + (1.0 - y_true) * K.log(1.0 - p))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = K.pow(1.0 - p_t, float(gamma)) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return K.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """sum(alpha * (1 - p) ** gamma * -y_true * log(p), axis), p the normalised, clipped probabilities
    (softmax of ``y_pred`` with ``from_logits=True``).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.categorical_focal_crossentropy([[0.0, 1.0]], [[0.5, 0.5]])[0]), 4)
    0.0433
    """
    y_pred = _pred(y_pred)
    y_true = _true(y_true, y_pred.dtype)
    _check_same(y_true, y_pred, "CategoricalFocalCrossentropy")
    y_true = _smooth(y_true, label_smoothing, y_pred.shape[-1])
    if from_logits:
        y_pred = K.softmax(y_pred, axis=axis)
    out = y_pred / K.reduce_sum(y_pred, axis=axis, keepdims=True)
    out = K.clip_by_value(out, EPSILON, 1.0 - EPSILON)
    cce = K.negative(y_true) * K.log(out)
    return K.reduce_sum(K.pow(1.0 - out, float(gamma)) * alpha * cce, axis=axis)


def dice(y_true, y_pred, axis=None):
    """1 - 2 sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + 1e-7), the sums over ``axis`` (all by default).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.dice([[1.0, 0.0]], [[0.5, 0.5]])), 4)
    0.5
    """
    y_pred = _pred(y_pred)
    y_true = _true(y_true, y_pred.dtype)
    inter = K.reduce_sum(y_true * y_pred, axis=axis)
    return 1.0 - 2.0 * inter / (K.reduce_sum(y_true, axis=axis) + K.reduce_sum(y_pred, axis=axis) + EPSILON)


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - tp / (tp + alpha fp + beta fn + 1e-7) with soft counts tp = sum(y_true y_pred),
    fp = sum((1 - y_pred) y_true), fn = sum(y_pred (1 - y_true)) over ``axis`` (as Keras names them).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.tversky([[1.0, 0.0]], [[0.5, 0.5]])), 4)
    0.5
    """
    y_pred = _pred(y_pred)
    y_true = _true(y_true, y_pred.dtype)
    inter = K.reduce_sum(y_true * y_pred, axis=axis)
    fp = K.reduce_sum((1.0 - y_pred) * y_true, axis=axis)
    fn = K.reduce_sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - inter / (inter + fp * alpha + fn * beta + EPSILON)


_NEG = -1e30  # stands for log(0) where -inf would turn a logsumexp into NaN


def _masked_logsumexp(x, mask, axis):
    """logsumexp of the entries where ``mask`` holds (-inf where none does, as Keras's where(mask, x, -inf))."""
    neg = K.fill(tuple(x.shape), float("-inf")) if x.shape else K.constant(float("-inf"), x.dtype)
    return K.reduce_logsumexp(K.where(mask, x, K.cast(neg, x.dtype)), axis=axis)


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """The Circle loss of metric learning over L2-normalised embeddings ``y_pred`` and integer labels:
    softplus(logsumexp over positives of -gamma a_p (margin - d) + logsumexp over negatives of
    gamma a_n (1 - margin - d)), d the cosine distances; a Loss object averages over its positive values.

    >>> import tapeflow as tf
    >>> e = tf.constant([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6], [0.0, 1.0]])
    >>> [round(v, 3) for v in tf.losses.circle([0, 1, 0, 1], e).numpy().tolist()]
    [6.402, 51.328, 51.328, 6.402]
    """
    y_pred = _pred(y_pred)
    y_true = K.cast(_true(y_true, K.int32) if not _is_int_like(y_true) else _labels(y_true, "Circle"), K.int32)
    ref_emb = y_pred if ref_embeddings is None else _true(ref_embeddings, y_pred.dtype)
    ref_lab = y_true if ref_labels is None else K.cast(_labels(ref_labels, "Circle"), K.int32)
    dist = K.maximum(1.0 - K.matmul(y_pred, K.transpose(ref_emb)), 0.0)
    q = K.reshape(y_true, (-1, 1))
    r = K.reshape(ref_lab, (1, -1))
    pos = K.equal(q, r)
    neg = K.logical_not(pos)
    if remove_diagonal:
        n, m = int(q.shape[0]), int(r.shape[1])
        pos = K.logical_and(pos, K.logical_not(K.cast(K.eye(n, m), K.bool)))
    posf, negf = K.cast(pos, dist.dtype), K.cast(neg, dist.dtype)
    pos_w = K.maximum((margin + dist) * posf, 0.0)
    neg_w = K.maximum((1.0 + margin - dist) * negf, 0.0)
    p_loss = _masked_logsumexp(-1.0 * gamma * pos_w * (margin - dist), pos, 1)
    n_loss = _masked_logsumexp(gamma * neg_w * ((1.0 - margin) - dist), neg, 1)
    out = K.softplus(p_loss + n_loss)
    _masks.set_mask(out, K.greater(out, 0.0))
    return out


def _is_int_like(x):
    dt = getattr(x, "dtype", None)
    return dt is not None and getattr(K.as_dtype(dt), "is_integer", False)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """(1 - p ** q) / q, p the predicted probability of the integer label (q in (0, 1): robust to noisy labels).

    >>> import tapeflow as tf
    >>> tf.losses.categorical_generalized_cross_entropy([1], [[0.75, 0.25]], q=0.5).numpy().tolist()
    [1.0]
    """
    y_pred = _pred(y_pred)
    labels = _labels(y_true, "CategoricalGeneralizedCrossEntropy")
    onehot = K.one_hot(labels, int(y_pred.shape[-1]), dtype=y_pred.dtype)
    p = K.reduce_sum(y_pred * onehot, axis=-1)
    return (1.0 - K.pow(p, float(q))) / q


def ctc(y_true, y_pred):
    """The CTC loss (connectionist temporal classification): -log of the probability, summed over every
    alignment, of the label sequence ``y_true`` (batch, max_length) of ints padded with 0, under the
    per-step logits ``y_pred`` (batch, steps, classes); class 0 is the blank.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.ctc([[1]], [[[0.0, 0.0], [0.0, 0.0]]])[0]), 4)
    0.2877
    """
    y_pred = _pred(y_pred)
    labels = _labels(y_true, "CTC")
    if len(labels.shape) != 2:
        raise InvalidArgumentError(f"y_true must have shape (batch_size, max_length), got {tuple(labels.shape)}",
                                   "CTC")
    if len(y_pred.shape) != 3:
        raise InvalidArgumentError("y_pred must have shape (batch_size, max_length, num_classes), got "
                                   f"{tuple(y_pred.shape)}", "CTC")
    b, steps, classes = (int(d) for d in y_pred.shape)
    if int(labels.shape[0]) != b:
        raise InvalidArgumentError(f"y_true has {int(labels.shape[0])} rows but y_pred has {b}", "CTC")
    labels = K.cast(labels, K.int32)
    dtype = y_pred.dtype
    logp = K.log_softmax(K.cast(y_pred, K.float32) if dtype != K.float32 else y_pred, axis=-1)
    n_lab = int(labels.shape[1])
    lengths = K.reduce_sum(K.cast(K.not_equal(labels, 0), K.int32), axis=-1)
    # the extended sequence: blank, l1, blank, l2, ..., blank (length 2L + 1)
    blanks = K.zeros_like(labels)
    ext = K.concat([K.reshape(K.stack([blanks, labels], axis=-1), (b, 2 * n_lab)), K.zeros((b, 1), K.int32)], axis=1)
    s = 2 * n_lab + 1
    emit = K.matmul(logp, K.one_hot(ext, classes, dtype=K.float32), transpose_b=True)  # (b, steps, s)
    prev2 = K.concat([K.fill((b, 2), -1), ext[:, :-2]], axis=1)
    skip = K.logical_and(K.not_equal(ext, 0), K.not_equal(ext, prev2))
    neg = K.fill((b, s), _NEG)
    pos = K.reshape(K.range(s), (1, s))
    start = K.logical_and(K.less(pos, 2), K.less(pos, K.reshape(2 * lengths + 1, (b, 1))))
    alpha = K.where(start, emit[:, 0, :], neg)
    pad1, pad2 = K.fill((b, 1), _NEG), K.fill((b, 2), _NEG)
    for t in range(1, steps):
        a1 = K.concat([pad1, alpha[:, :-1]], axis=1)
        a2 = K.where(skip, K.concat([pad2, alpha[:, :-2]], axis=1), neg)
        alpha = K.reduce_logsumexp(K.stack([alpha, a1, a2], axis=0), axis=0) + emit[:, t, :]
    pos = K.reshape(K.range(s), (1, s))
    ends = K.logical_or(K.equal(pos, K.reshape(2 * lengths, (b, 1))), K.equal(pos, K.reshape(2 * lengths - 1, (b, 1))))
    out = K.negative(K.reduce_logsumexp(K.where(ends, alpha, neg), axis=1))
    return out if out.dtype == dtype else K.cast(out, dtype)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error


# ---- TensorFlow 1 spellings used by the seeds: scalar means -------------------------------

def sparse_softmax_cross_entropy(labels, logits, weights=1.0) -> Tensor:
    """The mean over examples of -log softmax(logits)[labels] (``tf.losses.sparse_softmax_cross_entropy``).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.sparse_softmax_cross_entropy(labels=[0], logits=[[0.0, 0.0]])), 4)
    0.6931
    """
    per = sparse_categorical_crossentropy(labels, logits, from_logits=True)
    return _weighted_mean(per, weights)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0.0):
    """The mean over examples of -sum(onehot_labels * log softmax(logits)).

    >>> import tapeflow as tf
    >>> round(float(tf.losses.softmax_cross_entropy([[1.0, 0.0]], [[0.0, 0.0]])), 4)
    0.6931
    """
    per = categorical_crossentropy(onehot_labels, logits, from_logits=True, label_smoothing=label_smoothing)
    return _weighted_mean(per, weights)


def _weighted_mean(per, weights):
    if isinstance(weights, (int, float)) and weights == 1.0:
        return K.reduce_mean(per)
    w = _true(weights, per.dtype)
    return K.reduce_sum(per * w) / float(per.shape.num_elements() if per.shape else 1)


# ---- objects --------------------------------------------------------------------------------

_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none")


def _reduction(r, owner="Loss"):
    if r is None:
        return "none"
    if r == "auto":
        return "sum_over_batch_size"
    if r not in _REDUCTIONS:
        raise InvalidArgumentError(f"reduction must be one of {', '.join(_REDUCTIONS)} or None, got {r!r}", owner)
    return r


def reduce_weighted(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Weight per-example losses and reduce them (Keras's rule).

    >>> import tapeflow as tf
    >>> float(tf.losses.reduce_weighted(tf.constant([1.0, 3.0]), [1.0, 0.0]))
    0.5
    """
    return _reduce_weighted(values, sample_weight, _reduction(reduction))


def _reduce_weighted(values, sample_weight, reduction):
    if sample_weight is not None:
        w = _true(sample_weight, values.dtype)
        values, w = _same_rank(values, w)
        if len(w.shape) < len(values.shape):
            w = K.reshape(w, tuple(w.shape) + (1,) * (len(values.shape) - len(w.shape)))
        values = values * w
        sample_weight = w
    shape = values._shape
    if reduction == "none" or not shape or shape == (0,):
        return values
    total = K.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        return K.div_no_nan(total, K.reduce_sum(sample_weight))
    n = values._size
    return K.truediv(total, float(n)) if n else total


def _mask_weights(sample_weight, mask, values, reduction):
    """Fold the mask of y_pred into the sample weights, as Keras: for the mean reductions the kept
    entries weigh ``mask.size / mask.sum()`` so the mean is over the kept entries only."""
    dtype = values.dtype
    m = K.cast(mask, dtype)
    if reduction in ("sum_over_batch_size", "mean"):
        m = K.multiply(m, K.div_no_nan(K.cast(float(mask._size), dtype), K.reduce_sum(m)))
    if sample_weight is None:
        return m
    w = _true(sample_weight, dtype)
    m, w = _same_rank(m, w)
    if len(w.shape) < len(m.shape):
        w = K.reshape(w, tuple(w.shape) + (1,) * (len(m.shape) - len(w.shape)))
    elif len(m.shape) < len(w.shape):
        m = K.reshape(m, tuple(m.shape) + (1,) * (len(w.shape) - len(m.shape)))
    return K.multiply(w, m)


_SIGNATURES: dict = {}


def _bind_init(cls, args, kwargs):
    """The constructor arguments of ``cls(*args, **kwargs)`` by name, defaults filled in (None if they do
    not bind: ``copy`` calls ``__new__`` with none)."""
    import inspect

    sig = _SIGNATURES.get(cls)
    if sig is None:
        sig = _SIGNATURES[cls] = inspect.signature(cls.__init__)
    try:
        bound = sig.bind(None, *args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    out = {}
    for i, (k, v) in enumerate(bound.arguments.items()):
        kind = sig.parameters[k].kind
        if i == 0 or kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update(v)
        else:
            out[k] = v
    return out


class ConfigFromInit:
    """Mixin: ``get_config()`` returns the arguments the object was constructed with (by name, defaults
    filled in; ``name`` is the object's name), so ``type(obj).from_config(obj.get_config())`` rebuilds it.

    >>> import tapeflow as tf
    >>> tf.losses.Huber(delta=2.0).get_config()["delta"]
    2.0
    """

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._init_args = _bind_init(cls, args, kwargs)
        return self

    def get_config(self):
        config = dict(getattr(self, "_init_args", None) or {})
        if "name" in config or not config:
            config["name"] = self.name
        dt = config.get("dtype")
        if dt is not None and hasattr(dt, "name") and not isinstance(dt, str):
            config["dtype"] = dt.name
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _compute_dtype(dtype, owner):
    """The float dtype a loss or metric computes in: ``None`` is float32 (Keras's floatx); a mixed
    precision policy name (``"mixed_float16"``) computes in its float16/bfloat16."""
    if dtype is None:
        return K.float32
    if isinstance(dtype, str) and dtype.startswith("mixed_"):
        dtype = dtype[len("mixed_"):]
    if hasattr(dtype, "compute_dtype"):  # a dtype policy object
        dtype = dtype.compute_dtype
    try:
        dt = K.as_dtype(dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{owner}: dtype must be a float dtype or None, got {dtype!r}") from e
    if not dt.is_floating:
        raise InvalidArgumentError(f"dtype must be a float dtype, got {dt.name}", owner)
    return dt


class Loss(ConfigFromInit):
    """Base class: ``loss(y_true, y_pred, sample_weight=None)`` = reduce(call(y_true, y_pred)).

    ``y_pred`` is computed in ``dtype`` (float32 by default, as Keras's floatx).  When ``y_pred``
    carries a Keras mask (the output of a layer after ``Embedding(mask_zero=True)`` or ``Masking``),
    masked entries weigh nothing and the mean is over the others, as in Keras.

    >>> import tapeflow as tf
    >>> class Abs(tf.losses.Loss):
    ...     def call(self, y_true, y_pred):
    ...         return tf.abs(y_pred - y_true)
    >>> float(Abs()([1.0, 2.0], [2.0, 4.0]))
    1.5
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None) -> None:
        self.reduction = _reduction(reduction, type(self).__name__)
        self.name = name or _snake(type(self).__name__)
        self._dtype_arg = dtype
        self.dtype = _compute_dtype(dtype, type(self).__name__)

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Tensor:
        mask = _masks.get_mask(y_pred) if _masks._MASKS else None
        y_pred = _pred(y_pred)
        if y_pred.dtype != self.dtype:
            y_pred = K.cast(y_pred, self.dtype)
        values = self.call(y_true, y_pred)
        out_mask = _masks.get_mask(values) if _masks._MASKS else None
        if out_mask is not None:
            mask = out_mask if mask is None else K.logical_and(K.cast(mask, K.bool), out_mask)
        if mask is not None:  # a masked y_pred (e.g. an LSTM's sequences over padding): as Keras's apply_mask
            sample_weight = _mask_weights(sample_weight, mask, values, self.reduction)
        return _reduce_weighted(values, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise TypeError(f"{type(self).__name__} must define call(y_true, y_pred)")


class LossFunctionWrapper(Loss):
    """A Loss object around a per-example loss function (its extra keyword arguments bound).

    >>> import tapeflow as tf
    >>> loss = tf.losses.LossFunctionWrapper(tf.losses.mean_absolute_error, reduction="sum")
    >>> float(loss([[0.0], [0.0]], [[1.0], [2.0]]))
    3.0
    """

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs) -> None:
        if not callable(fn):
            raise TypeError(f"LossFunctionWrapper: fn must be a function, got {type(fn).__name__}")
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)


class MeanSquaredError(LossFunctionWrapper):
    """mean((y_true - y_pred) ** 2), reduced.

    >>> import tapeflow as tf
    >>> float(tf.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None) -> None:
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """mean(|y_true - y_pred|), reduced.

    >>> import tapeflow as tf
    >>> float(tf.losses.MeanAbsoluteError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None) -> None:
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """100 * mean(|(y_true - y_pred) / y_true|), reduced.

    >>> import tapeflow as tf
    >>> float(tf.losses.MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 4.0]]))
    25.0
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None) -> None:
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """mean((log(y_pred + 1) - log(y_true + 1)) ** 2), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.MeanSquaredLogarithmicError()([[0.0, 1.0]], [[1.0, 1.0]])), 4)
    0.2402
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None) -> None:
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name, dtype=dtype)


class CosineSimilarity(LossFunctionWrapper):
    """-cosine similarity of y_true and y_pred along ``axis``, reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.CosineSimilarity()([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]])), 4)
    -0.5
    """

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None) -> None:
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=axis)


class Huber(LossFunctionWrapper):
    """The Huber loss (quadratic within ``delta``, linear beyond), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.Huber()([[0.0, 1.0], [0.0, 0.0]], [[0.6, 0.4], [0.4, 0.6]])), 3)
    0.155
    """

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None) -> None:
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=float(delta))


class LogCosh(LossFunctionWrapper):
    """mean(log(cosh(y_pred - y_true))), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.LogCosh()([[0.0, 1.0]], [[1.0, 1.0]])), 4)
    0.2169
    """

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None) -> None:
        super().__init__(log_cosh, reduction=reduction, name=name, dtype=dtype)


class Hinge(LossFunctionWrapper):
    """mean(max(1 - y_true * y_pred, 0)), reduced; labels in {0, 1} are taken as {-1, 1}.

    >>> import tapeflow as tf
    >>> float(tf.losses.Hinge()([[1.0, 0.0]], [[0.5, -2.0]]))
    0.25
    """

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None) -> None:
        super().__init__(hinge, reduction=reduction, name=name, dtype=dtype)


class SquaredHinge(LossFunctionWrapper):
    """mean(max(1 - y_true * y_pred, 0) ** 2), reduced; labels in {0, 1} are taken as {-1, 1}.

    >>> import tapeflow as tf
    >>> float(tf.losses.SquaredHinge()([[1.0, 0.0]], [[0.5, -2.0]]))
    0.125
    """

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None) -> None:
        super().__init__(squared_hinge, reduction=reduction, name=name, dtype=dtype)


class CategoricalHinge(LossFunctionWrapper):
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.CategoricalHinge()([[0.0, 1.0]], [[0.6, 0.4]])), 4)
    1.2
    """

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None) -> None:
        super().__init__(categorical_hinge, reduction=reduction, name=name, dtype=dtype)


class KLDivergence(LossFunctionWrapper):
    """The Kullback-Leibler divergence sum(y_true * log(y_true / y_pred)), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.KLDivergence()([[0.5, 0.5]], [[0.25, 0.75]])), 4)
    0.1438
    """

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None) -> None:
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)


class Poisson(LossFunctionWrapper):
    """mean(y_pred - y_true * log(y_pred)), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.Poisson()([[1.0, 0.0]], [[1.0, 1.0]])), 4)
    1.0
    """

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None) -> None:
        super().__init__(poisson, reduction=reduction, name=name, dtype=dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy of probabilities (or logits with ``from_logits=True``), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.BinaryCrossentropy()([[0.0, 1.0]], [[0.4, 0.6]])), 4)
    0.5108
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None) -> None:
        super().__init__(binary_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=bool(from_logits), label_smoothing=float(label_smoothing), axis=axis)
        self.from_logits, self.label_smoothing, self.axis = bool(from_logits), float(label_smoothing), axis


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """The focal loss for binary labels: cross-entropy scaled by (1 - p_t) ** gamma, reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.BinaryFocalCrossentropy(gamma=2.0)([[1.0]], [[0.5]])), 4)
    0.1733
    """

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None) -> None:
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         apply_class_balancing=bool(apply_class_balancing), alpha=float(alpha), gamma=float(gamma),
                         from_logits=bool(from_logits), label_smoothing=float(label_smoothing), axis=axis)
        self.from_logits, self.label_smoothing, self.axis = bool(from_logits), float(label_smoothing), axis
        self.apply_class_balancing, self.alpha, self.gamma = bool(apply_class_balancing), float(alpha), float(gamma)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy against one-hot labels (probabilities, or logits with ``from_logits=True``), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.CategoricalCrossentropy()([[0, 1, 0], [0, 0, 1]],
    ...                                                 [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 3)
    1.177
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None) -> None:
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=bool(from_logits), label_smoothing=float(label_smoothing), axis=axis)
        self.from_logits, self.label_smoothing, self.axis = bool(from_logits), float(label_smoothing), axis


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """The focal loss for one-hot labels: alpha * (1 - p) ** gamma * cross-entropy, reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.CategoricalFocalCrossentropy()([[0.0, 1.0]], [[0.5, 0.5]])), 4)
    0.0433
    """

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None) -> None:
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         alpha=float(alpha), gamma=float(gamma), from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=axis)
        self.from_logits, self.label_smoothing, self.axis = bool(from_logits), float(label_smoothing), axis
        self.alpha, self.gamma = float(alpha), float(gamma)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy against integer labels of any integer dtype (probabilities, or logits with
    ``from_logits=True``), reduced; labels equal to ``ignore_class`` do not count.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.SparseCategoricalCrossentropy()([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 3)
    1.177
    """

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size", axis=-1,
                 name="sparse_categorical_crossentropy", dtype=None) -> None:
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=bool(from_logits), ignore_class=ignore_class, axis=axis)
        self.from_logits, self.ignore_class, self.axis = bool(from_logits), ignore_class, axis


class CTC(LossFunctionWrapper):
    """The CTC loss of integer label sequences (0-padded; 0 is the blank) under per-step logits, reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.CTC()([[1]], [[[0.0, 0.0], [0.0, 0.0]]])), 4)
    0.2877
    """

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None) -> None:
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)


class Dice(LossFunctionWrapper):
    """The Dice loss 1 - 2|y_true . y_pred| / (|y_true| + |y_pred|), summed over ``axis``, reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.Dice()([[1.0, 0.0]], [[0.5, 0.5]])), 4)
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None) -> None:
        super().__init__(dice, reduction=reduction, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class Tversky(LossFunctionWrapper):
    """The Tversky loss (``alpha`` weighs false positives, ``beta`` false negatives), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.Tversky(alpha=0.5, beta=0.5)([[1.0, 0.0]], [[0.5, 0.5]])), 4)
    0.5
    """

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None,
                 dtype=None) -> None:
        super().__init__(tversky, reduction=reduction, name=name, dtype=dtype, alpha=float(alpha), beta=float(beta),
                         axis=axis)
        self.alpha, self.beta, self.axis = float(alpha), float(beta), axis


class Circle(LossFunctionWrapper):
    """The Circle loss of metric learning (L2-normalised embeddings, integer labels), averaged over
    the examples whose loss is positive.

    >>> import tapeflow as tf
    >>> e = tf.constant([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6], [0.0, 1.0]])
    >>> round(float(tf.losses.Circle()([0, 1, 0, 1], e)), 3)
    28.865
    """

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size", name="circle",
                 dtype=None) -> None:
        super().__init__(circle, reduction=reduction, name=name, dtype=dtype, gamma=float(gamma),
                         margin=float(margin), remove_diagonal=bool(remove_diagonal))
        self.gamma, self.margin, self.remove_diagonal = float(gamma), float(margin), bool(remove_diagonal)


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    """The generalized cross-entropy (1 - p ** q) / q of integer labels, q in (0, 1), reduced.

    >>> import tapeflow as tf
    >>> float(tf.losses.CategoricalGeneralizedCrossEntropy(q=0.5)([1], [[0.75, 0.25]]))
    1.0
    """

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None) -> None:
        if not 0 < q < 1:
            raise InvalidArgumentError(f"q must be in the interval (0, 1), got {q!r}",
                                       "CategoricalGeneralizedCrossEntropy")
        super().__init__(categorical_generalized_cross_entropy, reduction=reduction, name=name, dtype=dtype,
                         q=float(q))
        self.q = float(q)


_BY_NAME = {
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError, "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError, "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError, "huber": Huber, "huber_loss": Huber,
    "binary_crossentropy": BinaryCrossentropy, "binary_focal_crossentropy": BinaryFocalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "categorical_focal_crossentropy": CategoricalFocalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy, "cosine_similarity": CosineSimilarity,
    "log_cosh": LogCosh, "logcosh": LogCosh, "hinge": Hinge, "squared_hinge": SquaredHinge,
    "categorical_hinge": CategoricalHinge, "kl_divergence": KLDivergence, "kld": KLDivergence,
    "kullback_leibler_divergence": KLDivergence, "poisson": Poisson, "ctc": CTC, "dice": Dice, "tversky": Tversky,
    "circle": Circle, "categorical_generalized_cross_entropy": CategoricalGeneralizedCrossEntropy,
}

__all__ = [
    "Loss", "LossFunctionWrapper", "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError", "CosineSimilarity", "Huber", "LogCosh", "Hinge", "SquaredHinge",
    "CategoricalHinge", "KLDivergence", "Poisson", "BinaryCrossentropy", "BinaryFocalCrossentropy",
    "CategoricalCrossentropy", "CategoricalFocalCrossentropy", "SparseCategoricalCrossentropy", "CTC", "Dice",
    "Tversky", "Circle", "CategoricalGeneralizedCrossEntropy",
    "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_logarithmic_error",
    "cosine_similarity", "huber", "log_cosh", "hinge", "squared_hinge", "categorical_hinge", "kl_divergence",
    "poisson", "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy",
    "categorical_focal_crossentropy", "sparse_categorical_crossentropy", "ctc", "dice", "tversky", "circle",
    "categorical_generalized_cross_entropy", "get", "serialize", "deserialize", "reduce_weighted",
    "sparse_softmax_cross_entropy", "softmax_cross_entropy",
]


def serialize(obj):
    """A loss as a dict ``{"class_name", "config"}`` (a function as its name).

    >>> import tapeflow as tf
    >>> tf.losses.serialize(tf.losses.Huber(delta=2.0))["config"]["delta"]
    2.0
    """
    if isinstance(obj, Loss):
        return {"module": "keras.losses", "class_name": type(obj).__name__, "config": obj.get_config(),
                "registered_name": None}
    if callable(obj) and getattr(obj, "__name__", None) in globals():
        return obj.__name__
    raise TypeError(f"serialize: a Loss object or a loss function of tapeflow.losses is needed, "
                    f"got {type(obj).__name__}")


def deserialize(config, custom_objects=None):
    """A loss from ``serialize``'s dict or a name (``custom_objects`` maps names to your own classes).

    >>> import tapeflow as tf
    >>> tf.losses.deserialize({"class_name": "Huber", "config": {"delta": 2.0}}).get_config()["delta"]
    2.0
    """
    custom = dict(custom_objects or {})
    if isinstance(config, str):
        if config in custom:
            return custom[config]
        fn = globals().get(config)
        if callable(fn) and config in __all__ and not isinstance(fn, type):
            return fn
        return get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise TypeError(f"deserialize: a dict with 'class_name' and 'config' or a name is needed, got {config!r}")
    name = config["class_name"]
    cls = custom.get(name) or (globals().get(name) if name in __all__ else None)
    if not (isinstance(cls, type) and issubclass(cls, Loss)):
        raise ValueError(f"unknown loss class {name!r}; allowed: the classes of tapeflow.losses or custom_objects")
    return cls.from_config(config.get("config") or {})


def get(identifier):
    """A Loss object from a name (``"mse"``, ``"sparse_categorical_crossentropy"``), an object or a function.

    >>> import tapeflow as tf
    >>> type(tf.losses.get("mse")).__name__
    'MeanSquaredError'
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        key = identifier if identifier in _BY_NAME else _snake(identifier)
        try:
            return _BY_NAME[key]()
        except KeyError:
            raise ValueError(f"unknown loss {identifier!r}; allowed: {', '.join(sorted(_BY_NAME))}") from None
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return LossFunctionWrapper(identifier)
    raise TypeError(f"a loss must be a name, a Loss or a function, not {type(identifier).__name__}")


def _snake(name: str) -> str:
    from .layers.base import _snake as s

    return s(name)
