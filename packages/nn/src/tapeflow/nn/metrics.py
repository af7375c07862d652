"""Metrics: stateful objects with ``update_state``, ``result`` and ``reset_state``.

Calling a metric updates it and returns the result.  State lives in variables.

>>> import tapeflow as tf
>>> m = tf.metrics.Mean("loss")
>>> _ = m(0); _ = m(5)
>>> float(m.result())
2.5
>>> _ = m([8, 9])
>>> float(m.result())
5.5
"""
from __future__ import annotations

from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

import tapeflow.core as K
from tapeflow.autodiff import pause_all
from . import _args, _masks
from . import losses as _losses


def _f32(x):
    if type(x) is Tensor:
        return x if x.dtype is K.float32 else K.cast(x, K.float32)
    if isinstance(x, Variable):
        return _f32(x.read_value())
    t = K.convert_to_tensor(x)
    return t if t.dtype is K.float32 else K.cast(t, K.float32)


def _tensor(x):
    if type(x) is Tensor:
        return x
    if isinstance(x, Variable):
        return x.read_value()
    return K.convert_to_tensor(x)


_SCALARS: dict = {}


def _scalar(v):
    """A float32 scalar tensor for a Python number (cached: batch sizes repeat every step)."""
    t = _SCALARS.get(v)
    if t is None:
        if len(_SCALARS) > 1024:
            _SCALARS.clear()
        t = _SCALARS[v] = K.constant(float(v), dtype=K.float32)
    return t


class Metric(_losses.ConfigFromInit):
    """Base class: subclasses create state with ``add_variable`` and define ``update_state`` and ``result``.

    >>> import tapeflow as tf
    >>> class Max(tf.metrics.Metric):
    ...     def __init__(self, name="max"):
    ...         super().__init__(name=name)
    ...         self.best = self.add_variable((), initializer="zeros", name="best")
    ...     def update_state(self, x):
    ...         self.best.assign(tf.maximum(self.best, tf.reduce_max(x)))
    ...     def result(self):
    ...         return self.best.read_value()
    >>> m = Max()
    >>> float(m([1.0, 3.0])), float(m([2.0]))
    (3.0, 3.0)
    """

    def __init__(self, name=None, dtype=None) -> None:
        self.name = name or _snake(type(self).__name__)
        self.dtype = K.float32 if dtype is None else dtype
        self._variables = []

    def add_variable(self, shape, initializer="zeros", dtype=None, name=None):
        """A state variable (not trainable), reset to its initial value by ``reset_state``."""
        from . import initializers as _init

        init = _init.get(initializer)
        v = Variable(init(tuple(shape), dtype or self.dtype), trainable=False, name=f"{self.name}/{name or 'var'}")
        v._metric_init = init
        self._variables.append(v)
        return v

    add_weight = add_variable

    @property
    def variables(self):
        return list(self._variables)

    def reset_state(self) -> None:
        """Set every state variable back to its initial value."""
        for v in self._variables:
            v.assign(v._metric_init(tuple(v.shape), v.dtype))

    reset_states = reset_state

    def update_state(self, *args, **kwargs) -> None:
        raise TypeError(f"{type(self).__name__} must define update_state")

    def result(self) -> Tensor:
        raise TypeError(f"{type(self).__name__} must define result")

    def __call__(self, *args, **kwargs) -> Tensor:
        with pause_all():
            self.update_state(*args, **kwargs)
            return self.result()

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _examples(values):
    """The number of examples (the first axis; 1 for a scalar) as a float32 scalar, also when traced with an
    unknown batch size."""
    if not values._shape:
        return _scalar(1)
    n = values._shape[0]
    return _scalar(n) if n is not None else K.cast(K.shape(values)[0], K.float32)


class Reduce(Metric):
    def __init__(self, reduction, name=None, dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        self._reduction = reduction
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count") if reduction == "mean" else None

    def update_state(self, values, sample_weight=None) -> None:
        """Add ``values`` (weighted by ``sample_weight``), as Keras: each example (the first axis)
        counts once, its values reduced (mean or sum) over the axes its weight does not cover."""
        mask = _masks.get_mask(values) if _masks._MASKS else None
        values = _f32(values)
        if sample_weight is None:
            if values._shape:
                if len(values._shape) > 1 and self.count is not None:
                    values = K.reduce_mean(values, axis=list(range(1, len(values._shape))))
                self.total.assign_add(K.reduce_sum(values))
            else:
                self.total.assign_add(values)
            if self.count is not None:
                self.count.assign_add(_examples(values))
            return
        if isinstance(sample_weight, (int, float)) and not values._shape:
            # a scalar with a Python weight (fit's loss tracker: the batch loss weighted by the batch size)
            self.total.assign_add(K.multiply(values, float(sample_weight)))
            if self.count is not None:
                self.count.assign_add(_scalar(sample_weight))
            return
        reduce = K.reduce_mean if self.count is not None else K.reduce_sum
        w = _f32(sample_weight)
        if mask is not None:
            m, w = _losses._same_rank(K.cast(mask, K.float32), w)
            w = K.multiply(w, m)
        values, w = _losses._same_rank(values, w)
        wn, vn = len(w.shape), len(values.shape)
        if vn > wn:
            values = reduce(values, axis=list(range(wn, vn)))
        w = K.broadcast_to(w, tuple(values.shape))
        values = values * w
        if wn > 1:
            w = reduce(w, axis=list(range(1, wn)))
        if len(values.shape) > 1:
            values = reduce(values, axis=list(range(1, len(values.shape))))
        self.total.assign_add(K.reduce_sum(values))
        if self.count is not None:
            self.count.assign_add(K.reduce_sum(w))

    def result(self) -> Tensor:
        if self.count is None:
            return K.identity(self.total.read_value())
        return K.div_no_nan(self.total.read_value(), self.count.read_value())


class Mean(Reduce):
    """The (weighted) mean of every value seen.

    >>> import tapeflow as tf
    >>> m = tf.metrics.Mean()
    >>> float(m([1.0, 3.0], sample_weight=[1.0, 0.0]))
    1.0
    """

    def __init__(self, name="mean", dtype=None) -> None:
        super().__init__("mean", name=name, dtype=dtype)


class Sum(Reduce):
    """The (weighted) sum of every value seen.

    >>> import tapeflow as tf
    >>> float(tf.metrics.Sum()([1.0, 3.0]))
    4.0
    """

    def __init__(self, name="sum", dtype=None) -> None:
        super().__init__("sum", name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred)`` over every example seen.

    >>> import tapeflow as tf
    >>> m = tf.metrics.MeanMetricWrapper(tf.losses.mean_absolute_error, name="mae")
    >>> float(m([[0.0], [0.0]], [[1.0], [3.0]]))
    2.0
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs) -> None:
        super().__init__(name=name or fn.__name__, dtype=dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        mask = _masks.get_mask(y_pred) if _masks._MASKS else None
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        if mask is not None:  # masked steps count for nothing (Keras's apply_mask with reduction "sum")
            m = K.cast(mask, K.float32)
            if sample_weight is None:
                sample_weight = m
            else:
                w, m = _losses._same_rank(_f32(sample_weight), m)
                sample_weight = K.multiply(w, m)
        super().update_state(values, sample_weight=sample_weight)


# ---- per-example accuracy functions -------------------------------------------------------

def accuracy(y_true, y_pred):
    """1.0 where y_true == y_pred, else 0.0.

    >>> import tapeflow as tf
    >>> tf.metrics.accuracy([1, 2], [1, 3]).numpy().tolist()
    [1.0, 0.0]
    """
    y_pred = _tensor(y_pred)
    y_true = _tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = K.cast(y_true, y_pred.dtype)
    y_true, y_pred = _losses._same_rank(y_true, y_pred)
    return K.cast(K.equal(y_true, y_pred), K.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """mean over the last axis of (y_pred > threshold) == y_true.

    >>> import tapeflow as tf
    >>> tf.metrics.binary_accuracy([[1.0], [0.0]], [[0.7], [0.6]]).numpy().tolist()
    [1.0, 0.0]
    """
    y_pred = _f32(y_pred)
    y_true = _f32(y_true)
    y_true, y_pred = _losses._same_rank(y_true, y_pred)
    hit = K.cast(K.equal(y_true, K.cast(K.greater(y_pred, threshold), K.float32)), K.float32)
    return K.reduce_mean(hit, axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_pred) == argmax(y_true) (one-hot labels).

    >>> import tapeflow as tf
    >>> tf.metrics.categorical_accuracy([[0, 1], [1, 0]], [[0.2, 0.8], [0.3, 0.7]]).numpy().tolist()
    [1.0, 0.0]
    """
    return K.cast(K.equal(K.argmax(_tensor(y_true), axis=-1), K.argmax(_tensor(y_pred), axis=-1)), K.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_pred) == y_true (integer labels).

    >>> import tapeflow as tf
    >>> tf.metrics.sparse_categorical_accuracy([1, 0], [[0.2, 0.8], [0.3, 0.7]]).numpy().tolist()
    [1.0, 0.0]
    """
    y_pred = _tensor(y_pred)
    y_true = _tensor(y_true)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = K.reshape(y_true, tuple(y_true.shape[:-1]))
    pred = K.argmax(y_pred, axis=-1)
    if y_true.dtype != pred.dtype:
        y_true = K.cast(y_true, pred.dtype)
    return K.cast(K.equal(y_true, pred), K.float32)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels.

    >>> import tapeflow as tf
    >>> float(tf.metrics.Accuracy()([1, 2, 3, 4], [0, 2, 3, 4]))
    0.75
    """

    def __init__(self, name="accuracy", dtype=None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often (y_pred > threshold) equals the binary label.

    >>> import tapeflow as tf
    >>> float(tf.metrics.BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]]))
    0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) equals argmax of the one-hot label.

    >>> import tapeflow as tf
    >>> float(tf.metrics.CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]))
    0.5
    """

    def __init__(self, name="categorical_accuracy", dtype=None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) equals the integer label.

    >>> import tapeflow as tf
    >>> float(tf.metrics.SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]]))
    0.5
    """

    def __init__(self, name="sparse_categorical_accuracy", dtype=None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    """The mean over examples of mean((y_true - y_pred) ** 2).

    >>> import tapeflow as tf
    >>> float(tf.metrics.MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]]))
    0.25
    """

    def __init__(self, name="mean_squared_error", dtype=None) -> None:
        super().__init__(_losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean over examples of mean(|y_true - y_pred|).

    >>> import tapeflow as tf
    >>> float(tf.metrics.MeanAbsoluteError()([[0, 1], [0, 0]], [[1, 1], [0, 0]]))
    0.25
    """

    def __init__(self, name="mean_absolute_error", dtype=None) -> None:
        super().__init__(_losses.mean_absolute_error, name=name, dtype=dtype)


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The mean over examples of 100 * mean(|(y_true - y_pred) / y_true|).

    >>> import tapeflow as tf
    >>> float(tf.metrics.MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 4.0]]))
    25.0
    """

    def __init__(self, name="mean_absolute_percentage_error", dtype=None) -> None:
        super().__init__(_losses.mean_absolute_percentage_error, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The mean over examples of mean((log(y_pred + 1) - log(y_true + 1)) ** 2).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.MeanSquaredLogarithmicError()([[0.0, 1.0]], [[1.0, 1.0]])), 4)
    0.2402
    """

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None) -> None:
        super().__init__(_losses.mean_squared_logarithmic_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean of (y_pred - y_true) ** 2 over everything seen.

    >>> import tapeflow as tf
    >>> float(tf.metrics.RootMeanSquaredError()([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]))
    0.5
    """

    def __init__(self, name="root_mean_squared_error", dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        y_true, y_pred = _losses._same_rank(_f32(y_true), _f32(y_pred))
        super().update_state(K.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self) -> Tensor:
        return K.sqrt(super().result())


def cosine_similarity(y_true, y_pred, axis=-1):
    """sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): the cosine of the angle between them.

    >>> import tapeflow as tf
    >>> tf.metrics.cosine_similarity([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]]).numpy().round(4).tolist()
    [0.0, 1.0]
    """
    return K.negative(_losses.cosine_similarity(y_true, y_pred, axis=axis))


class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine similarity of y_true and y_pred along ``axis``.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.CosineSimilarity()([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]])), 4)
    0.5
    """

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1) -> None:
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)


class LogCoshError(MeanMetricWrapper):
    """The mean over examples of mean(log(cosh(y_pred - y_true))).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.LogCoshError()([[0.0, 1.0]], [[1.0, 1.0]])), 4)
    0.2169
    """

    def __init__(self, name="logcosh", dtype=None) -> None:
        super().__init__(_losses.log_cosh, name=name, dtype=dtype)


class KLDivergence(MeanMetricWrapper):
    """The mean Kullback-Leibler divergence sum(y_true * log(y_true / y_pred)).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.KLDivergence()([[0.5, 0.5]], [[0.25, 0.75]])), 4)
    0.1438
    """

    def __init__(self, name="kl_divergence", dtype=None) -> None:
        super().__init__(_losses.kl_divergence, name=name, dtype=dtype)


class Poisson(MeanMetricWrapper):
    """The mean of mean(y_pred - y_true * log(y_pred)).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.Poisson()([[1.0, 0.0]], [[1.0, 1.0]])), 4)
    1.0
    """

    def __init__(self, name="poisson", dtype=None) -> None:
        super().__init__(_losses.poisson, name=name, dtype=dtype)


class BinaryCrossentropy(MeanMetricWrapper):
    """The mean binary cross-entropy (of probabilities, or of logits with ``from_logits=True``).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.BinaryCrossentropy()([[0.0, 1.0]], [[0.4, 0.6]])), 4)
    0.5108
    """

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0) -> None:
        super().__init__(_losses.binary_crossentropy, name=name, dtype=dtype, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing))


class CategoricalCrossentropy(MeanMetricWrapper):
    """The mean cross-entropy against one-hot labels.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.CategoricalCrossentropy()([[0, 1, 0], [0, 0, 1]],
    ...                                                  [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 3)
    1.177
    """

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0,
                 axis=-1) -> None:
        super().__init__(_losses.categorical_crossentropy, name=name, dtype=dtype, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=axis)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The mean cross-entropy against integer labels (any integer dtype).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.SparseCategoricalCrossentropy()([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 3)
    1.177
    """

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, ignore_class=None,
                 axis=-1) -> None:
        super().__init__(_losses.sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=bool(from_logits), ignore_class=ignore_class, axis=axis)


class Hinge(MeanMetricWrapper):
    """The mean hinge loss mean(max(1 - y_true * y_pred, 0)).

    >>> import tapeflow as tf
    >>> float(tf.metrics.Hinge()([[1.0, 0.0]], [[0.5, -2.0]]))
    0.25
    """

    def __init__(self, name="hinge", dtype=None) -> None:
        super().__init__(_losses.hinge, name=name, dtype=dtype)


class SquaredHinge(MeanMetricWrapper):
    """The mean squared hinge loss.

    >>> import tapeflow as tf
    >>> float(tf.metrics.SquaredHinge()([[1.0, 0.0]], [[0.5, -2.0]]))
    0.125
    """

    def __init__(self, name="squared_hinge", dtype=None) -> None:
        super().__init__(_losses.squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(MeanMetricWrapper):
    """The mean categorical hinge loss.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.CategoricalHinge()([[0.0, 1.0]], [[0.6, 0.4]])), 4)
    1.2
    """

    def __init__(self, name="categorical_hinge", dtype=None) -> None:
        super().__init__(_losses.categorical_hinge, name=name, dtype=dtype)


def _in_top_k(labels, y_pred, k):
    """1.0 where fewer than ``k`` classes score strictly above the label's (ties count as in, as
    TensorFlow's in_top_k) and the label's score is finite."""
    n, c = int(y_pred.shape[0]), int(y_pred.shape[-1])
    labels = K.reshape(labels, (n, 1))
    if c == 0:
        return K.zeros((n,), K.float32)
    target = K.gather(y_pred, labels, batch_dims=1)  # (n, 1)
    above = K.reduce_sum(K.cast(K.greater(y_pred, target), K.int32), axis=-1)
    hit = K.logical_and(K.less(above, int(k)), K.is_finite(K.reshape(target, (n,))))
    return K.cast(hit, K.float32)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the one-hot label's class is among the ``k`` highest predictions.

    >>> import tapeflow as tf
    >>> tf.metrics.top_k_categorical_accuracy([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.15, 0.8]],
    ...                                       k=1).numpy().tolist()
    [0.0, 0.0]
    """
    y_pred = _f32(y_pred)
    labels = K.argmax(_tensor(y_true), axis=-1)
    shape = tuple(labels.shape)
    out = _in_top_k(K.reshape(labels, (-1,)), K.reshape(y_pred, (-1, int(y_pred.shape[-1]))), k)
    return K.reshape(out, shape)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1.0 where the integer label (any integer dtype) is among the ``k`` highest predictions; with
    ``from_sorted_ids`` y_pred holds class ids sorted best first and the label must be in the first k.

    >>> import tapeflow as tf
    >>> tf.metrics.sparse_top_k_categorical_accuracy([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]],
    ...                                              k=1).numpy().tolist()
    [0.0, 1.0]
    """
    y_pred = _tensor(y_pred)
    if from_sorted_ids:
        labels = K.reshape(K.cast(_tensor(y_true), y_pred.dtype), (-1, 1))
        shape = tuple(_tensor(y_true).shape)
        ids = K.reshape(y_pred, (-1, int(y_pred.shape[-1])))[:, :int(k)]
        out = K.cast(K.reduce_any(K.equal(labels, ids), axis=1), K.float32)
        return K.reshape(out, shape)
    y_pred = _f32(y_pred)
    labels = _losses._labels(y_true, "SparseTopKCategoricalAccuracy")
    shape = tuple(labels.shape)
    out = _in_top_k(K.reshape(labels, (-1,)), K.reshape(y_pred, (-1, int(y_pred.shape[-1]))), k)
    return K.reshape(out, shape)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the ``k`` highest predictions.

    >>> import tapeflow as tf
    >>> float(tf.metrics.TopKCategoricalAccuracy(k=1)([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]))
    0.5
    """

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None) -> None:
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=_args.integer(k, "k", self, lo=1))
        self.k = int(k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` highest predictions.

    >>> import tapeflow as tf
    >>> float(tf.metrics.SparseTopKCategoricalAccuracy(k=1)([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]))
    0.5
    """

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None, from_sorted_ids=False) -> None:
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype,
                         k=_args.integer(k, "k", self, lo=1), from_sorted_ids=bool(from_sorted_ids))
        self.k, self.from_sorted_ids = int(k), bool(from_sorted_ids)


def pearson_correlation(y_true, y_pred, axis=-1):
    """The Pearson correlation of y_true and y_pred along ``axis``.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.pearson_correlation([[1.0, 2.0, 3.0]], [[2.0, 4.0, 7.0]])[0]), 4)
    0.9934
    """
    y_true, y_pred = _losses._pair(y_true, y_pred)
    t = y_true - K.reduce_mean(y_true, axis=axis, keepdims=True)
    p = y_pred - K.reduce_mean(y_pred, axis=axis, keepdims=True)
    t = t / K.reduce_std(t, axis=axis, keepdims=True)
    p = p / K.reduce_std(p, axis=axis, keepdims=True)
    return K.reduce_mean(t * p, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation of y_true and y_pred along ``axis`` (as Keras computes it).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.concordance_correlation([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]])[0]), 4)
    1.0
    """
    y_true, y_pred = _losses._pair(y_true, y_pred)
    tm = K.reduce_mean(y_true, axis=axis, keepdims=True)
    pm = K.reduce_mean(y_pred, axis=axis, keepdims=True)
    tv = K.reduce_variance(y_true - tm, axis=axis, keepdims=True)
    pv = K.reduce_variance(y_pred - pm, axis=axis, keepdims=True)
    covar = (y_true - pm) * (y_pred - pm)
    norm = tv + pv + K.square(tm - pm)
    return K.reduce_mean(2.0 * covar / (norm + _losses.EPSILON), axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """The mean over examples of the Pearson correlation along ``axis``.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.PearsonCorrelation()([[1.0, 2.0, 3.0]], [[2.0, 4.0, 7.0]])), 4)
    0.9934
    """

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1) -> None:
        super().__init__(pearson_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    """The mean over examples of the concordance correlation along ``axis``.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.ConcordanceCorrelation()([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]])), 4)
    1.0
    """

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1) -> None:
        super().__init__(concordance_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class R2Score(Metric):
    """The coefficient of determination 1 - SS_res / SS_tot per output, averaged by ``class_aggregation``
    (``"uniform_average"``, ``"variance_weighted_average"`` or None for one score per output); with
    ``num_regressors`` > 0 the adjusted R2.  Inputs are (batch, outputs).

    >>> import tapeflow as tf
    >>> float(tf.metrics.R2Score()([[1.0], [2.0], [3.0]], [[1.0], [2.0], [4.0]]))
    0.5
    """

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise InvalidArgumentError("class_aggregation must be None, 'uniform_average' or "
                                       f"'variance_weighted_average', got {class_aggregation!r}", "R2Score")
        self.class_aggregation = class_aggregation
        self.num_regressors = _args.integer(num_regressors, "num_regressors", self, lo=0)
        self.num_samples = self.add_variable((), name="num_samples")
        self._built = False

    def _build(self, shape_true, shape_pred):
        if len(shape_pred) != 2 or len(shape_true) != 2:
            raise InvalidArgumentError(f"expected 2D inputs (batch_size, output_dim), got y_true {shape_true} and "
                                       f"y_pred {shape_pred}", "R2Score")
        n = int(shape_pred[-1])
        self.squared_sum = self.add_variable((n,), name="squared_sum")
        self.sum = self.add_variable((n,), name="sum")
        self.total_mse = self.add_variable((n,), name="residual")
        self.count = self.add_variable((n,), name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        y_true, y_pred = _losses._same_rank(_f32(y_true), _f32(y_pred))
        if not self._built:
            self._build(tuple(y_true.shape), tuple(y_pred.shape))
        w = K.ones_like(y_true) if sample_weight is None else _f32(sample_weight)
        if len(w.shape) == 1:
            w = K.reshape(w, (-1, 1))
        w = K.broadcast_to(w, tuple(y_true.shape))
        wt = y_true * w
        self.sum.assign_add(K.reduce_sum(wt, axis=0))
        self.squared_sum.assign_add(K.reduce_sum(y_true * wt, axis=0))
        self.total_mse.assign_add(K.reduce_sum(K.square(y_true - y_pred) * w, axis=0))
        self.count.assign_add(K.reduce_sum(w, axis=0))
        self.num_samples.assign_add(_scalar(y_true._size))

    def result(self) -> Tensor:
        if not self._built:
            return K.constant(0.0)
        s, c = self.sum.read_value(), self.count.read_value()
        total = self.squared_sum.read_value() - s * (s / c)
        raw = 1.0 - self.total_mse.read_value() / total
        raw = K.where(K.is_inf(raw), K.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            r2 = K.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            r2 = K.reduce_sum(total * raw) / K.reduce_sum(total)
        else:
            r2 = raw
        if self.num_regressors:
            n = self.num_samples.read_value()
            p = float(self.num_regressors)
            adjusted = 1.0 - (1.0 - r2) * (n - 1.0) / (n - p - 1.0)
            r2 = K.where(K.less(p, n - 1.0), adjusted, r2)  # too few samples: the plain score, as Keras
        return r2


class FBetaScore(Metric):
    """The F-beta score (1 + beta^2) P R / (beta^2 P + R) of multi-label predictions (batch, classes):
    per class (``average=None``), or ``"micro"``, ``"macro"`` or ``"weighted"``.  Predictions above
    ``threshold`` count as positive (the row's maximum without one).

    >>> import tapeflow as tf
    >>> m = tf.metrics.FBetaScore(beta=2.0, threshold=0.5)
    >>> [round(v, 4) for v in m([[1, 0], [1, 1]], [[0.9, 0.2], [0.3, 0.7]]).numpy().tolist()]
    [0.5556, 1.0]
    """

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise InvalidArgumentError(f"average must be None, 'micro', 'macro' or 'weighted', got {average!r}",
                                       type(self).__name__)
        if not isinstance(beta, float):
            raise TypeError(f"{type(self).__name__}: beta must be a Python float, got {beta!r}")
        if beta <= 0.0:
            raise InvalidArgumentError(f"beta must be > 0, got {beta}", type(self).__name__)
        if threshold is not None:
            if not isinstance(threshold, float):
                raise TypeError(f"{type(self).__name__}: threshold must be a Python float or None, got {threshold!r}")
            if not 0.0 < threshold <= 1.0:
                raise InvalidArgumentError(f"threshold must satisfy 0 < threshold <= 1, got {threshold}",
                                           type(self).__name__)
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, shape_true, shape_pred):
        if len(shape_pred) != 2 or len(shape_true) != 2:
            raise InvalidArgumentError(f"expected 2D inputs (batch_size, output_dim), got y_true {shape_true} and "
                                       f"y_pred {shape_pred}", type(self).__name__)
        shape = () if self.average == "micro" else (int(shape_pred[-1]),)
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self.intermediate_weights = self.add_variable(shape, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _f32(y_true), _f32(y_pred)
        if not self._built:
            self._build(tuple(y_true.shape), tuple(y_pred.shape))
        if self.threshold is None:
            top = K.reduce_max(y_pred, axis=-1, keepdims=True)
            pred = K.logical_and(K.greater_equal(y_pred, top), K.greater(K.abs(y_pred), 1e-9))
        else:
            pred = K.greater(y_pred, self.threshold)
        pred = K.cast(pred, K.float32)
        w = None if sample_weight is None else K.reshape(_f32(sample_weight), (-1, 1))

        def wsum(v):
            return K.reduce_sum(v if w is None else v * w, axis=self.axis)

        self.true_positives.assign_add(wsum(pred * y_true))
        self.false_positives.assign_add(wsum(pred * (1.0 - y_true)))
        self.false_negatives.assign_add(wsum((1.0 - pred) * y_true))
        self.intermediate_weights.assign_add(wsum(y_true))

    def result(self) -> Tensor:
        if not self._built:
            return K.constant(0.0)
        eps = _losses.EPSILON
        tp, fp, fn = (v.read_value() for v in (self.true_positives, self.false_positives, self.false_negatives))
        precision = tp / (tp + fp + eps)
        recall = tp / (tp + fn + eps)
        b2 = self.beta ** 2
        f = precision * recall / (b2 * precision + recall + eps) * (1.0 + b2)
        if self.average == "weighted":
            iw = self.intermediate_weights.read_value()
            return K.reduce_sum(f * (iw / (K.reduce_sum(iw) + eps)))
        if self.average is not None:
            return K.reduce_mean(f)
        return f


class F1Score(FBetaScore):
    """The F1 score 2 P R / (P + R) (FBetaScore with beta = 1).

    >>> import tapeflow as tf
    >>> m = tf.metrics.F1Score(threshold=0.5, average="micro")
    >>> round(float(m([[1, 0], [1, 1]], [[0.9, 0.2], [0.3, 0.7]])), 4)
    0.8
    """

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None) -> None:
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)


# ---- IoU metrics ----------------------------------------------------------------------------

class _IoUBase(Metric):
    """A confusion matrix over ``num_classes`` classes (rows: labels, columns: predictions)."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True,
                 axis=-1) -> None:
        super().__init__(name=name, dtype=K.float32)
        self._int_weights = dtype is None or K.as_dtype(dtype).is_integer  # Keras counts in ints by default
        self.num_classes = _args.integer(num_classes, "num_classes", self, lo=1)
        self.ignore_class, self.sparse_y_true, self.sparse_y_pred, self.axis = (ignore_class, bool(sparse_y_true),
                                                                                bool(sparse_y_pred), axis)
        self.total_cm = self.add_variable((self.num_classes, self.num_classes), name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        y_true, y_pred = _tensor(y_true), _tensor(y_pred)
        if not self.sparse_y_true:
            y_true = K.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = K.argmax(y_pred, axis=self.axis)
        t = K.reshape(K.cast(y_true, K.int32) if y_true.dtype != K.int32 else y_true, (-1,))
        p = K.reshape(K.cast(y_pred, K.int32) if y_pred.dtype != K.int32 else y_pred, (-1,))
        if t._size != p._size:
            raise InvalidArgumentError(f"y_true has {t._size} values but y_pred has {p._size}", type(self).__name__)
        w = K.ones((t._size,), K.float32) if sample_weight is None else _f32(sample_weight)
        if sample_weight is not None:
            if self._int_weights:
                w = K.cast(K.cast(w, K.int64), K.float32)
            w = K.broadcast_to(K.reshape(w, (-1,)) if len(w.shape) > 1 else w, (t._size,))
        nc = self.num_classes
        ok = K.logical_and(K.logical_and(K.greater_equal(t, 0), K.less(t, nc)),
                           K.logical_and(K.greater_equal(p, 0), K.less(p, nc)))
        if self.ignore_class is not None:
            ok = K.logical_and(ok, K.not_equal(t, int(self.ignore_class)))
        idx = K.where(ok, t * nc + p, K.zeros_like(t))
        w = K.where(ok, w, K.zeros_like(w))
        cm = K.unsorted_segment_sum(w, idx, nc * nc)
        self.total_cm.assign_add(K.reshape(cm, (nc, nc)))


class IoU(_IoUBase):
    """Intersection over union tp / (tp + fp + fn) from the confusion matrix, averaged over
    ``target_class_ids`` (classes that never occur do not count).

    >>> import tapeflow as tf
    >>> m = tf.metrics.IoU(num_classes=2, target_class_ids=[0])
    >>> round(float(m([0, 0, 1, 1], [0, 1, 0, 1])), 4)
    0.3333
    """

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1) -> None:
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)
        ids = [int(i) for i in target_class_ids]
        if not ids or max(ids) >= num_classes or min(ids) < 0:
            raise InvalidArgumentError(f"target_class_ids must be class ids in [0, {num_classes}), got {ids}",
                                       type(self).__name__)
        self.target_class_ids = ids

    def result(self) -> Tensor:
        cm = self.total_cm.read_value()
        rows, cols = K.reduce_sum(cm, axis=0), K.reduce_sum(cm, axis=1)
        tp = K.diag_part(cm)
        denom = rows + cols - tp
        ids = K.constant(self.target_class_ids, dtype=K.int32)
        tp, denom = K.gather(tp, ids), K.gather(denom, ids)
        valid = K.greater(denom, 1e-9)
        iou = K.where(valid, tp / (denom + _losses.EPSILON), K.zeros_like(tp))
        return K.reduce_sum(iou) / (K.reduce_sum(K.cast(valid, K.float32)) + _losses.EPSILON)


class BinaryIoU(IoU):
    """IoU of binary labels against predictions thresholded at ``threshold`` (>= counts as 1), averaged over
    ``target_class_ids`` of (0, 1).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.BinaryIoU(target_class_ids=[1])([0, 1, 1], [0.2, 0.8, 0.4])), 4)
    0.5
    """

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None) -> None:
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = float(threshold)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        y_pred = K.cast(K.greater_equal(_f32(y_pred), self.threshold), K.int32)
        super().update_state(y_true, y_pred, sample_weight)


class MeanIoU(IoU):
    """The mean IoU over all ``num_classes`` classes (integer labels and predictions).

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.MeanIoU(num_classes=2)([0, 0, 1, 1], [0, 1, 0, 1])), 4)
    0.3333
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True,
                 axis=-1) -> None:
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)


class OneHotIoU(IoU):
    """IoU of one-hot labels against class scores (argmax), averaged over ``target_class_ids``.

    >>> import tapeflow as tf
    >>> m = tf.metrics.OneHotIoU(num_classes=2, target_class_ids=[1])
    >>> round(float(m([[1, 0], [0, 1], [0, 1]], [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])), 4)
    0.5
    """

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1) -> None:
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)


class OneHotMeanIoU(MeanIoU):
    """The mean IoU of one-hot labels against class scores (argmax) over all classes.

    >>> import tapeflow as tf
    >>> m = tf.metrics.OneHotMeanIoU(num_classes=2)
    >>> round(float(m([[1, 0], [0, 1], [0, 1]], [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])), 4)
    0.5
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1) -> None:
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)


# ---- confusion-matrix metrics ---------------------------------------------------------------

_NEG_INF = -1e10


def _evenly(thresholds):
    n = len(thresholds)
    return n >= 3 and all(abs(t - i / (n - 1)) <= _losses.EPSILON for i, t in enumerate(thresholds))


class _Confusion(Metric):
    """True/false positives/negatives counted at thresholds (``y_pred > t`` predicts positive, a nonzero
    label is positive).  Evenly spaced thresholds over [0, 1] count as Keras's bucketed path does
    (predictions clipped to [0, 1])."""

    def _setup(self, thresholds, kinds, evenly=False, with_epsilon=False, shape=None):
        self.thresholds = [float(t) for t in thresholds]
        n = len(self.thresholds)
        self._evenly = evenly
        if evenly:  # compare y * (n - 1) with the threshold's index, as Keras's buckets do
            idx = [float(i) for i in range(n)]
            if with_epsilon:
                idx[0] = -1.0
            self._thr_values = idx
        else:
            self._thr_values = self.thresholds
        self._kinds = kinds
        if shape is not None or not getattr(self, "multi_label", False):
            self._make_vars(shape)

    def _make_vars(self, labels):
        n = len(self.thresholds)
        shape = (n,) if labels is None else (n, int(labels))
        for k in self._kinds:
            setattr(self, k, self.add_variable(shape, name=k))
        self._built = True

    def _update(self, y_true, y_pred, sample_weight, top_k=None, class_id=None, multi_label=False,
                label_weights=None):
        y_pred, y_true = _losses._same_rank(_f32(y_pred), _f32(y_true))
        shape = tuple(y_pred.shape)
        if tuple(y_true.shape) != shape:
            raise InvalidArgumentError(f"y_true of shape {tuple(y_true.shape)} does not match y_pred of shape "
                                       f"{shape}", type(self).__name__)
        w = None
        if sample_weight is not None:
            w = _f32(sample_weight)
            if len(w.shape) < len(shape):  # per-example weights apply to every value of the example
                w = K.reshape(w, tuple(w.shape) + (1,) * (len(shape) - len(w.shape)))
            w = K.broadcast_to(w, shape)
        if label_weights is not None:
            lw = K.broadcast_to(K.constant(label_weights, dtype=K.float32), shape)
            w = lw if w is None else w * lw
        if top_k is not None:
            _, idx = K.top_k(y_pred, int(top_k))
            keep = K.reduce_sum(K.one_hot(idx, int(shape[-1]), dtype=K.float32), axis=-2)
            y_pred = y_pred * keep + _NEG_INF * (1.0 - keep)
        if class_id is not None:
            if len(shape) < 2:
                raise InvalidArgumentError(f"class_id needs y_pred of shape (num_samples, num_classes), got {shape}",
                                           type(self).__name__)
            c = int(class_id)
            y_true, y_pred = y_true[..., c:c + 1], y_pred[..., c:c + 1]
            w = None if w is None else w[..., c:c + 1]
        if self._evenly:
            y_pred = K.clip_by_value(y_pred, 0.0, 1.0) * float(len(self.thresholds) - 1)
        if multi_label:
            nl = int(y_pred.shape[-1])
            if not getattr(self, "_built", False):
                self._make_vars(nl)
            y_pred, y_true = K.reshape(y_pred, (-1, 1, nl)), K.reshape(y_true, (-1, 1, nl))
            w = None if w is None else K.reshape(w, (-1, 1, nl))
            thr = K.constant([[[t] for t in self._thr_values]], dtype=K.float32)  # (1, n, 1)
        else:
            y_pred, y_true = K.reshape(y_pred, (-1, 1)), K.reshape(y_true, (-1, 1))
            w = None if w is None else K.reshape(w, (-1, 1))
            thr = K.constant([self._thr_values], dtype=K.float32)  # (1, n)
        pos = K.cast(K.greater(y_pred, thr), K.float32)
        label = K.cast(K.not_equal(y_true, 0.0), K.float32)
        parts = {"true_positives": lambda: pos * label, "false_positives": lambda: pos * (1.0 - label),
                 "true_negatives": lambda: (1.0 - pos) * (1.0 - label), "false_negatives": lambda: (1.0 - pos) * label}
        for k in self._kinds:
            v = parts[k]()
            if w is not None:
                v = v * w
            getattr(self, k).assign_add(K.reduce_sum(v, axis=0))

    def _single(self, r):
        return K.reshape(r, ()) if len(self.thresholds) == 1 else r


def _thresholds(t, default=0.5, owner="Metric"):
    if t is None:
        return [default]
    ts = [t] if isinstance(t, (int, float)) else list(t)
    bad = [v for v in ts if v is None or not 0.0 <= float(v) <= 1.0]
    if bad:
        raise InvalidArgumentError(f"thresholds must lie in [0, 1], got {bad}", owner)
    return [float(v) for v in ts]


class _Count(_Confusion):
    _kind = ""

    def __init__(self, thresholds=None, name=None, dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        self._setup(_thresholds(thresholds, owner=type(self).__name__), (self._kind,))
        self.accumulator = getattr(self, self._kind)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        self._update(y_true, y_pred, sample_weight)

    def result(self) -> Tensor:
        return self._single(self.accumulator.read_value())


class TruePositives(_Count):
    """The (weighted) number of true positives at each threshold (0.5 by default).

    >>> import tapeflow as tf
    >>> float(tf.metrics.TruePositives()([0, 1, 1, 1], [1, 0, 1, 1]))
    2.0
    """

    _kind = "true_positives"


class FalsePositives(_Count):
    """The (weighted) number of false positives at each threshold (0.5 by default).

    >>> import tapeflow as tf
    >>> float(tf.metrics.FalsePositives()([0, 1, 0, 0], [0, 0, 1, 1]))
    2.0
    """

    _kind = "false_positives"


class TrueNegatives(_Count):
    """The (weighted) number of true negatives at each threshold (0.5 by default).

    >>> import tapeflow as tf
    >>> float(tf.metrics.TrueNegatives()([0, 1, 0, 0], [1, 1, 0, 0]))
    2.0
    """

    _kind = "true_negatives"


class FalseNegatives(_Count):
    """The (weighted) number of false negatives at each threshold (0.5 by default).

    >>> import tapeflow as tf
    >>> float(tf.metrics.FalseNegatives()([0, 1, 1, 1], [0, 1, 0, 0]))
    2.0
    """

    _kind = "false_negatives"


class Precision(_Confusion):
    """tp / (tp + fp), predictions counted positive above ``thresholds`` (0.5 by default); ``top_k`` counts
    only each row's k best predictions, ``class_id`` only one class.

    >>> import tapeflow as tf
    >>> float(tf.metrics.Precision()([0, 1, 1, 1], [1, 0, 1, 1]))
    0.6666666865348816
    """

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.top_k = _args.integer(top_k, "top_k", self, lo=1, none_ok=True)
        self.class_id = _args.integer(class_id, "class_id", self, lo=0, none_ok=True)
        self._setup(_thresholds(thresholds, 0.5 if top_k is None else _NEG_INF, type(self).__name__),
                    ("true_positives", "false_positives"))

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        self._update(y_true, y_pred, sample_weight, top_k=self.top_k, class_id=self.class_id)

    def result(self) -> Tensor:
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        return self._single(K.div_no_nan(tp, tp + fp))


class Recall(_Confusion):
    """tp / (tp + fn), predictions counted positive above ``thresholds`` (0.5 by default); ``top_k`` counts
    only each row's k best predictions, ``class_id`` only one class.

    >>> import tapeflow as tf
    >>> float(tf.metrics.Recall()([0, 1, 1, 1], [1, 0, 1, 1]))
    0.6666666865348816
    """

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.top_k = _args.integer(top_k, "top_k", self, lo=1, none_ok=True)
        self.class_id = _args.integer(class_id, "class_id", self, lo=0, none_ok=True)
        self._setup(_thresholds(thresholds, 0.5 if top_k is None else _NEG_INF, type(self).__name__),
                    ("true_positives", "false_negatives"))

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        self._update(y_true, y_pred, sample_weight, top_k=self.top_k, class_id=self.class_id)

    def result(self) -> Tensor:
        tp, fn = self.true_positives.read_value(), self.false_negatives.read_value()
        return self._single(K.div_no_nan(tp, tp + fn))


class _AtConstraint(_Confusion):
    """Counts at ``num_thresholds`` evenly spaced thresholds over [0, 1]; the result is the best
    ``dependent`` rate among thresholds whose ``constrained`` rate reaches ``value``."""

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.num_thresholds = _args.integer(num_thresholds, "num_thresholds", self, lo=1)
        self.class_id = _args.integer(class_id, "class_id", self, lo=0, none_ok=True)
        self.value = float(value)
        if self.num_thresholds == 1:
            self._setup([0.5], ("true_positives", "false_positives", "true_negatives", "false_negatives"))
        else:
            n = self.num_thresholds
            ts = [0.0] + [(i + 1) * 1.0 / (n - 1) for i in range(n - 2)] + [1.0]
            self._setup(ts, ("true_positives", "false_positives", "true_negatives", "false_negatives"), evenly=True)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        self._update(y_true, y_pred, sample_weight, class_id=self.class_id)

    def _rates(self):
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        return {"recall": K.div_no_nan(tp, tp + fn), "specificity": K.div_no_nan(tn, tn + fp),
                "precision": K.div_no_nan(tp, tp + fp)}

    def _best(self, constrained, dependent):
        r = self._rates()
        feasible = K.greater_equal(r[constrained], self.value)
        return K.maximum(K.reduce_max(K.where(feasible, r[dependent], K.zeros_like(r[dependent]))), 0.0)


def _unit(v, name, owner):
    if not 0.0 <= float(v) <= 1.0:
        raise InvalidArgumentError(f"{name} must be in [0, 1], got {v}", owner)
    return float(v)


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity (recall) among thresholds whose specificity is >= ``specificity``.

    >>> import tapeflow as tf
    >>> float(tf.metrics.SensitivityAtSpecificity(0.5)([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]))
    0.5
    """

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None) -> None:
        self.specificity = _unit(specificity, "specificity", type(self).__name__)
        super().__init__(specificity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self) -> Tensor:
        return self._best("specificity", "recall")


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity among thresholds whose sensitivity (recall) is >= ``sensitivity``.

    >>> import tapeflow as tf
    >>> round(float(tf.metrics.SpecificityAtSensitivity(0.5)([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])), 4)
    0.6667
    """

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None) -> None:
        self.sensitivity = _unit(sensitivity, "sensitivity", type(self).__name__)
        super().__init__(sensitivity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self) -> Tensor:
        return self._best("recall", "specificity")


class PrecisionAtRecall(_AtConstraint):
    """The best precision among thresholds whose recall is >= ``recall``.

    >>> import tapeflow as tf
    >>> float(tf.metrics.PrecisionAtRecall(0.5)([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]))
    0.5
    """

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None) -> None:
        self.recall = _unit(recall, "recall", type(self).__name__)
        super().__init__(recall, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self) -> Tensor:
        return self._best("recall", "precision")


class RecallAtPrecision(_AtConstraint):
    """The best recall among thresholds whose precision is >= ``precision``.

    >>> import tapeflow as tf
    >>> float(tf.metrics.RecallAtPrecision(0.8)([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]))
    0.5
    """

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None) -> None:
        self.precision = _unit(precision, "precision", type(self).__name__)
        super().__init__(precision, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self) -> Tensor:
        return self._best("precision", "recall")


class AUC(_Confusion):
    """The area under the ROC, precision-recall (``curve="PR"``) or precision-recall-gain (``"PRGAIN"``)
    curve, from confusion counts at ``num_thresholds`` evenly spaced thresholds (or ``thresholds``),
    summed as Keras does (``summation_method``).  ``multi_label=True`` scores each label (column) on its
    own and averages them (weighted by ``label_weights``); otherwise ``label_weights`` weigh the labels'
    counts.  ``from_logits`` applies a sigmoid first.

    >>> import tapeflow as tf
    >>> m = tf.metrics.AUC(num_thresholds=3)
    >>> float(m([0, 0, 1, 1], [0.0, 0.5, 0.3, 0.9]))
    0.75
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False) -> None:
        super().__init__(name=name, dtype=dtype)
        curve = {"roc": "ROC", "pr": "PR", "prgain": "PRGAIN"}.get(str(curve).lower())
        if curve is None:
            raise InvalidArgumentError(f"curve must be 'ROC', 'PR' or 'PRGAIN', got {curve!r}", "AUC")
        method = str(summation_method).lower()
        if method not in ("interpolation", "minoring", "majoring"):
            raise InvalidArgumentError("summation_method must be 'interpolation', 'minoring' or 'majoring', "
                                       f"got {summation_method!r}", "AUC")
        self.curve, self.summation_method, self.from_logits = curve, method, bool(from_logits)
        self.multi_label, self.num_labels = bool(multi_label), num_labels
        if num_labels is not None and not self.multi_label:
            raise InvalidArgumentError("num_labels is needed only when multi_label is True", "AUC")
        self.label_weights = None if label_weights is None else [float(v) for v in label_weights]
        eps = _losses.EPSILON
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            evenly = _evenly([0.0] + inner + [1.0])
        else:
            if num_thresholds <= 1:
                raise InvalidArgumentError(f"num_thresholds must be > 1, got {num_thresholds}", "AUC")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            evenly = True
        thr = [0.0 - eps] + inner + [1.0 + eps]
        self.num_thresholds = len(thr)
        self._setup(thr, ("true_positives", "false_positives", "true_negatives", "false_negatives"), evenly=evenly,
                    with_epsilon=True, shape=num_labels if self.multi_label else None)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        if self.from_logits:
            y_pred = K.sigmoid(_f32(y_pred))
        if self.multi_label and len(_tensor(y_pred).shape) != 2:
            raise InvalidArgumentError(f"y_pred must have rank 2 when multi_label=True, got shape "
                                       f"{tuple(_tensor(y_pred).shape)}", "AUC")
        self._update(y_true, y_pred, sample_weight, multi_label=self.multi_label,
                     label_weights=None if self.multi_label else self.label_weights)

    def _by_label(self, terms):
        if not self.multi_label:
            return K.reduce_sum(terms)
        per = K.reduce_sum(terms, axis=0)
        if self.label_weights is None:
            return K.reduce_mean(per)
        lw = K.constant(self.label_weights, dtype=K.float32)
        return K.div_no_nan(K.reduce_sum(per * lw), K.reduce_sum(lw))

    def result(self) -> Tensor:
        if not getattr(self, "_built", False):
            return K.constant(0.0)
        n = self.num_thresholds
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        if self.curve == "PR" and self.summation_method == "interpolation":
            dtp = tp[:n - 1] - tp[1:]
            p = tp + fp
            dp = p[:n - 1] - p[1:]
            slope = K.div_no_nan(dtp, K.maximum(dp, 0.0))
            intercept = tp[1:] - slope * p[1:]
            both = K.logical_and(K.greater(p[:n - 1], 0.0), K.greater(p[1:], 0.0))
            ratio = K.where(both, K.div_no_nan(p[:n - 1], K.maximum(p[1:], 0.0)), K.ones_like(dtp))
            inc = K.div_no_nan(slope * (dtp + intercept * K.log(ratio)), K.maximum(tp[1:] + fn[1:], 0.0))
            return self._by_label(inc)
        recall = K.div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = K.div_no_nan(fp, fp + tn), recall
        elif self.curve == "PR":
            x, y = recall, K.div_no_nan(tp, tp + fp)
        else:
            scale = K.div_no_nan(tp + fn, tn + fp)
            rg = 1.0 - scale * K.div_no_nan(fn, tp)
            pg = 1.0 - scale * K.div_no_nan(fp, tp)
            none = K.equal(tp, 0.0)
            x = K.maximum(K.where(none, K.zeros_like(rg), rg), 0.0)
            y = K.where(none, K.ones_like(pg), pg)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = K.minimum(y[:n - 1], y[1:])
        else:
            heights = K.maximum(y[:n - 1], y[1:])
        return self._by_label((x[:n - 1] - x[1:]) * heights)


# the loss functions, as keras.metrics offers them
binary_crossentropy = _losses.binary_crossentropy
binary_focal_crossentropy = _losses.binary_focal_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
categorical_focal_crossentropy = _losses.categorical_focal_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge
huber = _losses.huber
kl_divergence = _losses.kl_divergence
log_cosh = _losses.log_cosh
poisson = _losses.poisson
mean_squared_error = mse = _losses.mean_squared_error
mean_absolute_error = mae = _losses.mean_absolute_error
mean_absolute_percentage_error = mape = _losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = msle = _losses.mean_squared_logarithmic_error


_BY_NAME = {
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError, "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError, "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError, "root_mean_squared_error": RootMeanSquaredError,
    "cosine_similarity": CosineSimilarity, "logcosh": LogCoshError, "log_cosh": LogCoshError,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "poisson": Poisson, "hinge": Hinge,
    "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy, "r2_score": R2Score,
    "pearson_correlation": PearsonCorrelation, "concordance_correlation": ConcordanceCorrelation,
    "precision": Precision, "recall": Recall, "auc": AUC, "true_positives": TruePositives,
    "false_positives": FalsePositives, "true_negatives": TrueNegatives, "false_negatives": FalseNegatives,
    "f1_score": F1Score, "fbeta_score": FBetaScore, "mean": Mean, "sum": Sum,
}

__all__ = [
    "Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
    "SparseCategoricalAccuracy", "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanSquaredError",
    "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "RootMeanSquaredError",
    "CosineSimilarity", "LogCoshError", "KLDivergence", "Poisson", "BinaryCrossentropy", "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy", "Hinge", "SquaredHinge", "CategoricalHinge", "PearsonCorrelation",
    "ConcordanceCorrelation", "R2Score", "FBetaScore", "F1Score", "IoU", "BinaryIoU", "MeanIoU", "OneHotIoU",
    "OneHotMeanIoU", "TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives", "Precision", "Recall",
    "SensitivityAtSpecificity", "SpecificityAtSensitivity", "PrecisionAtRecall", "RecallAtPrecision", "AUC",
    "accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
    "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "cosine_similarity", "pearson_correlation",
    "concordance_correlation", "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy",
    "categorical_focal_crossentropy", "sparse_categorical_crossentropy", "hinge", "squared_hinge",
    "categorical_hinge", "huber", "kl_divergence", "log_cosh", "poisson", "mean_squared_error",
    "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "get", "serialize",
    "deserialize",
]


def serialize(metric):
    """A metric as a dict ``{"class_name", "config"}`` (a function as its name).

    >>> import tapeflow as tf
    >>> tf.metrics.serialize(tf.metrics.TopKCategoricalAccuracy(k=3))["config"]["k"]
    3
    """
    if isinstance(metric, Metric):
        return {"module": "keras.metrics", "class_name": type(metric).__name__, "config": metric.get_config(),
                "registered_name": None}
    if callable(metric) and getattr(metric, "__name__", None) in __all__:
        return metric.__name__
    raise TypeError(f"serialize: a Metric or a metric function of tapeflow.metrics is needed, "
                    f"got {type(metric).__name__}")


def deserialize(config, custom_objects=None):
    """A metric from ``serialize``'s dict or a name (``custom_objects`` maps names to your own classes).

    >>> import tapeflow as tf
    >>> tf.metrics.deserialize({"class_name": "TopKCategoricalAccuracy", "config": {"k": 3}}).k
    3
    """
    custom = dict(custom_objects or {})
    if isinstance(config, str):
        if config in custom:
            return custom[config]
        fn = globals().get(config)
        if config in __all__ and callable(fn) and not isinstance(fn, type):
            return fn
        return get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise TypeError(f"deserialize: a dict with 'class_name' and 'config' or a name is needed, got {config!r}")
    name = config["class_name"]
    cls = custom.get(name) or (globals().get(name) if name in __all__ else None)
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise ValueError(f"unknown metric class {name!r}; allowed: the classes of tapeflow.metrics or custom_objects")
    return cls.from_config(config.get("config") or {})


def get(identifier, name=None):
    """A Metric from a name (``"accuracy"``, ``"mse"``...), a Metric or a per-example function.

    ``name`` names a metric made from a string (``compile`` passes the string itself, so
    ``"mae"`` logs as ``mae``).

    >>> import tapeflow as tf
    >>> tf.metrics.get("auc").name, tf.metrics.get("mae", name="mae").name
    ('auc', 'mae')
    """
    if isinstance(identifier, Metric):
        if name is not None and name != identifier.name:
            raise ValueError(f"metric {identifier.name!r} is already named; allowed: name=None for a Metric object")
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        key = identifier if identifier in _BY_NAME else _snake(identifier)
        try:
            cls = _BY_NAME[key]
        except KeyError:
            raise ValueError(f"unknown metric {identifier!r}; allowed: {', '.join(sorted(_BY_NAME))}") from None
        return cls() if name is None else cls(name=name)
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier() if name is None else identifier(name=name)
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=name)
    raise TypeError(f"a metric must be a name, a Metric or a function, not {type(identifier).__name__}")


def _snake(name):
    from .layers.base import _snake as s

    return s(name)
