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


class Metric:
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

    def __init__(self, name=None, dtype=None):
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

    def reset_state(self):
        """Set every state variable back to its initial value."""
        for v in self._variables:
            v.assign(v._metric_init(tuple(v.shape), v.dtype))

    reset_states = reset_state

    def update_state(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} must define update_state")

    def result(self):
        raise TypeError(f"{type(self).__name__} must define result")

    def __call__(self, *args, **kwargs):
        with pause_all():
            self.update_state(*args, **kwargs)
            return self.result()

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        """A metric like the one ``get_config`` described.

        >>> import tapeflow as tf
        >>> tf.metrics.Mean.from_config({"name": "avg"}).name
        'avg'
        """
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Reduce(Metric):
    def __init__(self, reduction, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._reduction = reduction
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count") if reduction == "mean" else None

    def update_state(self, values, sample_weight=None):
        values = _f32(values)
        if sample_weight is None:
            self.total.assign_add(K.reduce_sum(values) if values._shape else values)
            if self.count is not None:
                self.count.assign_add(_scalar(values._size))
        elif isinstance(sample_weight, (int, float)) and not values._shape:
            # a scalar with a Python weight (fit's loss tracker: the batch loss weighted by the batch size)
            self.total.assign_add(K.multiply(values, float(sample_weight)))
            if self.count is not None:
                self.count.assign_add(_scalar(sample_weight))
        else:
            w = _f32(sample_weight)
            values, w = _broadcast_weights(values, w)
            self.total.assign_add(K.reduce_sum(values * w))
            if self.count is not None:
                self.count.assign_add(K.reduce_sum(w) if w._shape else w)

    def result(self):
        if self.count is None:
            return K.identity(self.total.read_value())
        return K.div_no_nan(self.total.read_value(), self.count.read_value())


def _broadcast_weights(values, w):
    w, values = _losses._same_rank(w, values)
    if len(w.shape) < len(values.shape):
        w = K.reshape(w, tuple(w.shape) + (1,) * (len(values.shape) - len(w.shape)))
    return values, w


class Mean(Reduce):
    """The (weighted) mean of every value seen.

    >>> import tapeflow as tf
    >>> m = tf.metrics.Mean()
    >>> float(m([1.0, 3.0], sample_weight=[1.0, 0.0]))
    1.0
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__("mean", name=name, dtype=dtype)


class Sum(Reduce):
    """The (weighted) sum of every value seen.

    >>> import tapeflow as tf
    >>> float(tf.metrics.Sum()([1.0, 3.0]))
    4.0
    """

    def __init__(self, name="sum", dtype=None):
        super().__init__("sum", name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred)`` over every example seen.

    >>> import tapeflow as tf
    >>> m = tf.metrics.MeanMetricWrapper(tf.losses.mean_absolute_error, name="mae")
    >>> float(m([[0.0], [0.0]], [[1.0], [3.0]]))
    2.0
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or fn.__name__, dtype=dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight=sample_weight)


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

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often (y_pred > threshold) equals the binary label.

    >>> import tapeflow as tf
    >>> float(tf.metrics.BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]]))
    0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) equals argmax of the one-hot label.

    >>> import tapeflow as tf
    >>> float(tf.metrics.CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]))
    0.5
    """

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) equals the integer label.

    >>> import tapeflow as tf
    >>> float(tf.metrics.SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]]))
    0.5
    """

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    """The mean over examples of mean((y_true - y_pred) ** 2).

    >>> import tapeflow as tf
    >>> float(tf.metrics.MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]]))
    0.25
    """

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean over examples of mean(|y_true - y_pred|).

    >>> import tapeflow as tf
    >>> float(tf.metrics.MeanAbsoluteError()([[0, 1], [0, 0]], [[1, 1], [0, 0]]))
    0.25
    """

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_losses.mean_absolute_error, name=name, dtype=dtype)


# ---- confusion-matrix metrics ---------------------------------------------------------------

class _Confusion(Metric):
    """True/false positives/negatives counted at thresholds (``y_pred > t`` predicts positive)."""

    def _setup(self, thresholds, kinds):
        self.thresholds = [float(t) for t in thresholds]
        n = len(self.thresholds)
        for t in self.thresholds:
            if not -1.0 <= t <= 2.0:
                raise ValueError(f"thresholds must lie in [0, 1], got {t}")
        self._thr = K.constant([self.thresholds], dtype=K.float32)  # (1, n)
        for k in kinds:
            setattr(self, k, self.add_variable((n,), name=k))
        self._kinds = kinds

    def _update(self, y_true, y_pred, sample_weight):
        y_pred = _f32(y_pred)
        shape = tuple(y_pred.shape)
        w = None
        if sample_weight is not None:
            w = _f32(sample_weight)
            if len(w.shape) < len(shape):  # per-example weights apply to every value of the example
                w = K.reshape(w, tuple(w.shape) + (1,) * (len(shape) - len(w.shape)))
            w = K.reshape(K.broadcast_to(w, shape), (-1, 1))
        y_pred = K.reshape(y_pred, (-1, 1))
        y_true = K.reshape(_f32(y_true), (-1, 1))
        if tuple(y_pred.shape) != tuple(y_true.shape):
            raise InvalidArgumentError(f"y_true has {y_true.shape[0]} values but y_pred has {y_pred.shape[0]}",
                                       type(self).__name__)
        pos = K.cast(K.greater(y_pred, self._thr), K.float32)  # (N, n)
        label = K.cast(K.greater(y_true, 0.5), K.float32)  # labels are 0/1
        parts = {"true_positives": pos * label, "false_positives": pos * (1.0 - label),
                 "true_negatives": (1.0 - pos) * (1.0 - label), "false_negatives": (1.0 - pos) * label}
        for k in self._kinds:
            v = parts[k] if w is None else parts[k] * w
            getattr(self, k).assign_add(K.reduce_sum(v, axis=0))

    def _single(self, r):
        return K.reshape(r, ()) if len(self.thresholds) == 1 else r


class Precision(_Confusion):
    """tp / (tp + fp), predictions counted positive above ``thresholds`` (0.5 by default).

    >>> import tapeflow as tf
    >>> float(tf.metrics.Precision()([0, 1, 1, 1], [1, 0, 1, 1]))
    0.6666666865348816
    """

    def __init__(self, thresholds=None, name="precision", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._setup(_thresholds(thresholds), ("true_positives", "false_positives"))

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._update(y_true, y_pred, sample_weight)

    def result(self):
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        return self._single(K.div_no_nan(tp, tp + fp))


class Recall(_Confusion):
    """tp / (tp + fn), predictions counted positive above ``thresholds`` (0.5 by default).

    >>> import tapeflow as tf
    >>> float(tf.metrics.Recall()([0, 1, 1, 1], [1, 0, 1, 1]))
    0.6666666865348816
    """

    def __init__(self, thresholds=None, name="recall", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._setup(_thresholds(thresholds), ("true_positives", "false_negatives"))

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._update(y_true, y_pred, sample_weight)

    def result(self):
        tp, fn = self.true_positives.read_value(), self.false_negatives.read_value()
        return self._single(K.div_no_nan(tp, tp + fn))


def _thresholds(t):
    if t is None:
        return [0.5]
    return [t] if isinstance(t, (int, float)) else list(t)


class AUC(_Confusion):
    """The area under the ROC (or precision-recall, ``curve="PR"``) curve, from confusion counts at
    ``num_thresholds`` evenly spaced thresholds, summed as Keras does (``summation_method``).

    >>> import tapeflow as tf
    >>> m = tf.metrics.AUC(num_thresholds=3)
    >>> float(m([0, 0, 1, 1], [0.0, 0.5, 0.3, 0.9]))
    0.75
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name="auc", dtype=None,
                 thresholds=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        curve = curve.upper()
        if curve not in ("ROC", "PR"):
            raise ValueError(f"curve must be 'ROC' or 'PR', got {curve!r}")
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError("summation_method must be 'interpolation', 'minoring' or 'majoring', "
                             f"got {summation_method!r}")
        self.curve, self.summation_method, self.from_logits = curve, summation_method, bool(from_logits)
        eps = 1e-7
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            if num_thresholds <= 1:
                raise ValueError(f"num_thresholds must be > 1, got {num_thresholds}")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thr = [0.0 - eps] + inner + [1.0 + eps]
        self.num_thresholds = len(thr)
        self._setup(thr, ("true_positives", "false_positives", "true_negatives", "false_negatives"))

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.from_logits:
            y_pred = K.sigmoid(_f32(y_pred))
        self._update(y_true, y_pred, sample_weight)

    def result(self):
        n = self.num_thresholds
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        if self.curve == "PR" and self.summation_method == "interpolation":
            dtp = tp[:n - 1] - tp[1:]
            p = tp + fp
            dp = p[:n - 1] - p[1:]
            slope = K.div_no_nan(dtp, K.maximum(dp, 0.0))
            intercept = tp[1:] - slope * p[1:]
            both = K.cast(K.logical_and(K.greater(p[:n - 1], 0.0), K.greater(p[1:], 0.0)), K.float32)
            ratio = both * K.div_no_nan(p[:n - 1], K.maximum(p[1:], 0.0)) + (1.0 - both)
            inc = K.div_no_nan(slope * (dtp + intercept * K.log(ratio)), K.maximum(tp[1:] + fn[1:], 0.0))
            return K.reduce_sum(inc)
        recall = K.div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = K.div_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, K.div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = K.minimum(y[:n - 1], y[1:])
        else:
            heights = K.maximum(y[:n - 1], y[1:])
        return K.reduce_sum((x[:n - 1] - x[1:]) * heights)


_BY_NAME = {
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError, "precision": Precision, "recall": Recall, "auc": AUC, "mean": Mean, "sum": Sum,
}


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
