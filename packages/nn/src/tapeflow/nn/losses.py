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


def _same_rank(a, b):
    """Squeeze a trailing axis of size 1 so ranks agree (labels (n, 1) against predictions (n,))."""
    ra, rb = len(a.shape), len(b.shape)
    if ra == rb + 1 and a.shape[-1] == 1:
        a = K.reshape(a, tuple(a.shape[:-1]))
    elif rb == ra + 1 and b.shape[-1] == 1:
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


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """-log(p[y_true]) for integer labels; p = softmax(logits) or the clipped probabilities.

    >>> import tapeflow as tf
    >>> y = tf.losses.sparse_categorical_crossentropy([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [0.0513, 2.3026]
    """
    y_pred = _pred(y_pred)
    labels = y_true if type(y_true) is Tensor else K.convert_to_tensor(y_true)
    if not labels._dtype.is_integer:
        labels = K.cast(labels, K.int32)
    ls, ps = labels._shape, y_pred._shape
    if len(ls) == len(ps) and ls and ls[-1] == 1:
        labels = K.reshape(labels, ls[:-1])
        ls = ls[:-1]
    if ls != ps[:-1]:
        raise InvalidArgumentError(f"labels of shape {ls} do not match predictions of shape {ps}; allowed: labels "
                                   f"of shape {ps[:-1]}", "SparseCategoricalCrossentropy")
    if axis not in (-1, len(ps) - 1):
        raise InvalidArgumentError(f"axis must be the last axis, got {axis}", "SparseCategoricalCrossentropy")
    logits = y_pred if from_logits else K.log(K.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    return K.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


# ---- TensorFlow 1 spellings used by the seeds: scalar means -------------------------------

def sparse_softmax_cross_entropy(labels, logits, weights=1.0):
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


def _reduction(r):
    if r is None:
        return "none"
    if r == "auto":
        return "sum_over_batch_size"
    if r not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(_REDUCTIONS)}, got {r!r}")
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
        w, values = _same_rank(w, values)
        if len(w.shape) < len(values.shape):
            w = K.reshape(w, tuple(w.shape) + (1,) * (len(values.shape) - len(w.shape)))
        values = values * w
    shape = values._shape
    if reduction == "none" or not shape or shape == (0,):
        return values
    total = K.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        return K.div_no_nan(total, K.reduce_sum(K.cast(_true(sample_weight, values.dtype), values.dtype)))
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
    w, m = _same_rank(w, m)
    if len(w.shape) < len(m.shape):
        w = K.reshape(w, tuple(w.shape) + (1,) * (len(m.shape) - len(w.shape)))
    elif len(m.shape) < len(w.shape):
        m = K.reshape(m, tuple(m.shape) + (1,) * (len(w.shape) - len(m.shape)))
    return K.multiply(w, m)


class Loss:
    """Base class: ``loss(y_true, y_pred, sample_weight=None)`` = reduce(call(y_true, y_pred)).

    When ``y_pred`` carries a Keras mask (the output of a layer after ``Embedding(mask_zero=True)``
    or ``Masking``), masked entries weigh nothing and the mean is over the others, as in Keras.

    >>> import tapeflow as tf
    >>> class Abs(tf.losses.Loss):
    ...     def call(self, y_true, y_pred):
    ...         return tf.abs(y_pred - y_true)
    >>> float(Abs()([1.0, 2.0], [2.0, 4.0]))
    1.5
    """

    def __init__(self, reduction="sum_over_batch_size", name=None, dtype=None):
        self.reduction = _reduction(reduction)
        self.name = name or _snake(type(self).__name__)
        self.dtype = dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        mask = _masks.get_mask(y_pred) if _masks._MASKS else None
        y_pred = _pred(y_pred)
        values = self.call(y_true, y_pred)
        if mask is not None:  # a masked y_pred (e.g. an LSTM's sequences over padding): as Keras's apply_mask
            sample_weight = _mask_weights(sample_weight, mask, values, self.reduction)
        return _reduce_weighted(values, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise TypeError(f"{type(self).__name__} must define call(y_true, y_pred)")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss object around a per-example loss function (its extra keyword arguments bound).

    >>> import tapeflow as tf
    >>> loss = tf.losses.LossFunctionWrapper(tf.losses.mean_absolute_error, reduction="sum")
    >>> float(loss([[0.0], [0.0]], [[1.0], [2.0]]))
    3.0
    """

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(reduction=reduction, name=name or fn.__name__)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


class MeanSquaredError(LossFunctionWrapper):
    """mean((y_true - y_pred) ** 2), reduced.

    >>> import tapeflow as tf
    >>> float(tf.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction=reduction, name=name)


class MeanAbsoluteError(LossFunctionWrapper):
    """mean(|y_true - y_pred|), reduced.

    >>> import tapeflow as tf
    >>> float(tf.losses.MeanAbsoluteError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction=reduction, name=name)


class Huber(LossFunctionWrapper):
    """The Huber loss (quadratic within ``delta``, linear beyond), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.Huber()([[0.0, 1.0], [0.0, 0.0]], [[0.6, 0.4], [0.4, 0.6]])), 3)
    0.155
    """

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss"):
        super().__init__(huber, reduction=reduction, name=name, delta=float(delta))


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy of probabilities (or logits with ``from_logits=True``), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.BinaryCrossentropy()([[0.0, 1.0]], [[0.4, 0.6]])), 4)
    0.5108
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction=reduction, name=name, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=axis)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy against one-hot labels (probabilities, or logits with ``from_logits=True``), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.CategoricalCrossentropy()([[0, 1, 0], [0, 0, 1]],
    ...                                                 [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 3)
    1.177
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=axis)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy against integer labels (probabilities, or logits with ``from_logits=True``), reduced.

    >>> import tapeflow as tf
    >>> round(float(tf.losses.SparseCategoricalCrossentropy()([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 3)
    1.177
    """

    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=bool(from_logits))


_BY_NAME = {
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError, "huber": Huber, "huber_loss": Huber, "binary_crossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
}


def get(identifier):
    """A Loss object from a name (``"mse"``, ``"sparse_categorical_crossentropy"``), an object or a function.

    >>> import tapeflow as tf
    >>> type(tf.losses.get("mse")).__name__
    'MeanSquaredError'
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
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
