"""Counting and set ops (issue 14): unique, unique_with_counts, bincount, confusion_matrix,
histogram_fixed_width, searchsorted.  Composites over primitives (argsort, gather, boolean_mask,
cumsum, the segment sums, scatter_nd), so they trace and differentiate through those.

unique's output length depends on the values: traced, it is unknown (None), as boolean_mask's.
bincount and confusion_matrix need their output length when called: from ``minlength == maxlength``
or ``num_classes`` when given, else from the values (a TypeError naming the op while tracing).
searchsorted compares every value with every boundary (O(values x boundaries) work and memory):
fine for the bucketing tables it is used for, not for very long sequences."""
from __future__ import annotations

import collections

from .. import dtypes as _dt
from ..dispatch import dtype_arg, register, static_value, to_tensor
from ..errors import InvalidArgumentError
from ..tensor import Tensor
from ._shape import _NUMERIC, _dim_eq, _int_arg, _names
from .array_ops import concat, ones_like, reshape, stack, where, zeros_like
from .index_ops import boolean_mask, gather, scatter_nd, unsorted_segment_sum
from .math_ops import (add, cast, floor, greater, greater_equal, less, less_equal, logical_and, maximum,
                       is_finite, minimum, multiply, not_equal, subtract, truediv)
from .reduce_ops import reduce_all, reduce_sum
from .sort_ops import argsort, cumsum

__all__ = ["unique", "unique_with_counts", "bincount", "confusion_matrix", "histogram_fixed_width", "searchsorted",
           "in_top_k"]

UniqueOutput = collections.namedtuple("UniqueOutput", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCountsOutput", ["y", "idx", "count"])


def _vector(x, op, what="x"):
    t = x if isinstance(x, Tensor) else to_tensor(x, op)
    if len(t._shape) != 1:
        raise InvalidArgumentError(f"{what} has shape {list(t._shape)}; allowed: a vector (rank 1)", op)
    return t


def _index_dtype(out_idx, op, what="out_idx"):
    dt = dtype_arg(out_idx, op, what)
    if dt not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"{what} = {dt.name}; allowed: int32, int64", op)
    return dt


def _unique(x, out_idx, op):
    """(y, idx, count) of vector ``x``: its distinct values in order of first occurrence, each entry's position
    in y, and how often each occurs."""
    n_ones = ones_like(x, dtype=_dt.int32)
    positions = cumsum(n_ones) - 1                       # range(n), also for an unknown n
    order = argsort(x, stable=True)                      # equal values keep their order: the first comes first
    xs = gather(x, order)
    starts = concat([n_ones[:1] > 0, not_equal(xs[1:], xs[:-1])], 0)   # where a run of equal values starts
    group = cumsum(cast(starts, _dt.int32)) - 1          # run number of each sorted entry
    leaders = boolean_mask(order, starts)                # first position of each value, by value
    by_first = argsort(leaders, stable=True)             # the runs in order of first occurrence
    rank = argsort(by_first, stable=True)                # run number -> its place in y (the inverse permutation)
    y = gather(x, gather(leaders, by_first))
    idx = gather(gather(rank, group), argsort(order, stable=True))
    run_starts = boolean_mask(positions, starts)
    ends = concat([run_starts[1:], reduce_sum(n_ones, keepdims=True)], 0)
    count = gather(ends - run_starts, by_first)
    return y, cast(idx, out_idx), cast(count, out_idx)


@register("unique", "Unique", kind="composite")
def unique(x, out_idx=_dt.int32, name=None):
    """The distinct values of a vector in order of first occurrence, and where each entry of ``x`` went:
    x == gather(y, idx).

    >>> import tapeflow as tf
    >>> y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    >>> y.numpy().tolist(), idx.numpy().tolist()
    ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    """
    op = "Unique"
    t, dt = _vector(x, op), _index_dtype(out_idx, op)
    y, idx, _ = _unique(t, dt, op)
    return UniqueOutput(y, idx)


@register("unique_with_counts", "UniqueWithCounts", kind="composite")
def unique_with_counts(x, out_idx=_dt.int32, name=None):
    """unique's (y, idx) and how often each value of y occurs in x.

    >>> import tapeflow as tf
    >>> y, idx, count = tf.unique_with_counts(tf.constant([4, 1, 4, 2]))
    >>> y.numpy().tolist(), idx.numpy().tolist(), count.numpy().tolist()
    ([4, 1, 2], [0, 1, 0, 2], [2, 1, 1])
    """
    op = "UniqueWithCounts"
    t, dt = _vector(x, op), _index_dtype(out_idx, op)
    return UniqueWithCountsOutput(*_unique(t, dt, op))


def _non_negative_ints(x, op, what):
    t = x if isinstance(x, Tensor) else to_tensor(x, op)
    if t._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: int32, int64", op)
    if t._h is not None or t._arr is not None:  # eager: checked here (traced: the segment kernel checks)
        h = static_value(t, op, what)
        if h.size and h.min() < 0:
            raise InvalidArgumentError(f"{what} holds {int(h.min())}; allowed: non-negative values", op)
    return t


def _opt_int(v, op, what):
    if v is None:
        return None
    n = _int_arg(v if not isinstance(v, Tensor) else static_value(v, op, what), op, what)
    if n < 0:
        raise InvalidArgumentError(f"{what} = {n}; allowed: >= 0", op)
    return n


@register("bincount", "Bincount", kind="composite")
def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dt.int32, name=None, axis=None,
             binary_output=False):
    """How often each value 0, 1, ... occurs in ``arr`` (or the sum of ``weights`` there).

    The output has max(max(arr) + 1, minlength) entries, at most maxlength (larger values are
    dropped); ``axis=-1`` counts each row of a matrix on its own; ``binary_output`` gives 1 where a
    value occurs.

    >>> import tapeflow as tf
    >>> tf.math.bincount(tf.constant([1, 1, 2, 5])).numpy().tolist()
    [0, 2, 1, 0, 0, 1]
    """
    op = "Bincount"
    a = _non_negative_ints(arr, op, "arr")
    lo, hi = _opt_int(minlength, op, "minlength"), _opt_int(maxlength, op, "maxlength")
    if axis not in (None, 0, -1):
        raise InvalidArgumentError(f"axis = {axis!r}; allowed: None, 0 or -1", op)
    if axis == -1 and len(a._shape) != 2:
        raise InvalidArgumentError(f"axis=-1 counts the rows of a matrix; arr has shape {list(a._shape)}", op)
    w = None
    if weights is not None:
        if binary_output:
            raise InvalidArgumentError("weights and binary_output=True cannot be used together", op)
        w = weights if isinstance(weights, Tensor) else to_tensor(weights, op)
        if w._dtype not in (_dt.int32, _dt.int64, _dt.float32, _dt.float64):
            raise InvalidArgumentError(f"weights has dtype {w._dtype.name}; allowed: int32, int64, float32, "
                                       "float64", op)
        if len(w._shape) != len(a._shape) or not all(_dim_eq(p, q) for p, q in zip(w._shape, a._shape)):
            raise InvalidArgumentError(f"weights has shape {list(w._shape)} but arr has {list(a._shape)}; allowed: "
                                       "the same shape", op)
        out_dt = w._dtype
    else:
        out_dt = dtype_arg(dtype, op, "dtype")
        if out_dt not in _NUMERIC:
            raise InvalidArgumentError(f"dtype = {out_dt.name}; allowed: {_names(_NUMERIC)}", op)
    if lo is not None and hi is not None and lo == hi:
        size = lo
    else:
        h = static_value(a, op, "arr (its largest value sets the output length)")  # as segment_sum's ids
        size = max(int(h.max()) + 1 if h.size else 0, lo or 0)
        if hi is not None:
            size = min(size, hi)
    ids = a
    if hi is not None:  # values at or beyond maxlength are dropped
        ids = where(less(ids, cast(size, ids._dtype)), ids, -ones_like(ids))
    vals = cast(ones_like(ids), out_dt) if w is None else w
    if axis == -1:
        rows = a._shape[0]
        offset = reshape(cumsum(ones_like(ids[:, 0])) - 1, [-1, 1]) * size
        ids = where(greater_equal(ids, 0), add(ids, cast(offset, ids._dtype)), ids)
        out = reshape(unsorted_segment_sum(reshape(vals, [-1]), reshape(ids, [-1]), rows * size), [rows, size])
    else:
        out = unsorted_segment_sum(reshape(vals, [-1]), reshape(ids, [-1]), size)
    if binary_output:
        out = cast(greater(out, zeros_like(out)), out_dt)
    return out


@register("confusion_matrix", "ConfusionMatrix", kind="composite")
def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dt.int32, name=None):
    """The [num_classes, num_classes] matrix whose entry (i, j) counts (or sums the weights of) the
    examples with label i predicted as j.  Without num_classes it is max(labels, predictions) + 1.

    >>> import tapeflow as tf
    >>> tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy().tolist()
    [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    """
    op = "ConfusionMatrix"
    lab, pred = _vector(labels, op, "labels"), _vector(predictions, op, "predictions")
    for t, what in ((lab, "labels"), (pred, "predictions")):
        if not t._dtype.is_integer:
            raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: integer dtypes", op)
    if not _dim_eq(lab._shape[0], pred._shape[0]):
        raise InvalidArgumentError(f"labels has {lab._shape[0]} entries but predictions {pred._shape[0]}; allowed: "
                                   "as many", op)
    out_dt = dtype_arg(dtype, op, "dtype")
    if out_dt not in _NUMERIC:
        raise InvalidArgumentError(f"dtype = {out_dt.name}; allowed: {_names(_NUMERIC)}", op)
    eager = lab._h is not None or lab._arr is not None
    if num_classes is None:
        what = "labels and predictions (their largest value sets num_classes)"
        hl, hp = static_value(lab, op, what), static_value(pred, op, what)
        n = max(int(hl.max()), int(hp.max())) + 1 if hl.size else 0
    else:
        n = _int_arg(num_classes if not isinstance(num_classes, Tensor) else static_value(num_classes, op,
                     "num_classes"), op, "num_classes")
        if n < 0:
            raise InvalidArgumentError(f"num_classes = {n}; allowed: >= 0", op)
    if eager and lab._shape[0]:
        for t, what in ((lab, "labels"), (pred, "predictions")):
            h = static_value(t, op, what)
            if h.min() < 0 or h.max() >= n:
                bad = int(h.min()) if h.min() < 0 else int(h.max())
                raise InvalidArgumentError(f"{what} holds {bad}, not in [0, {n}) (num_classes = {n})", op)
    lab, pred = cast(lab, _dt.int64), cast(pred, _dt.int64)
    if weights is None:
        vals = cast(ones_like(lab), out_dt)
    else:
        w = weights if isinstance(weights, Tensor) else to_tensor(weights, op)
        if len(w._shape) != 1 or not _dim_eq(w._shape[0], lab._shape[0]):
            raise InvalidArgumentError(f"weights has shape {list(w._shape)}; allowed: one weight per label", op)
        vals = cast(w, out_dt)
    return scatter_nd(stack([lab, pred], axis=1), vals, [n, n])


@register("histogram_fixed_width", "HistogramFixedWidth", kind="composite")
def histogram_fixed_width(values, value_range, nbins=100, dtype=_dt.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal bins over value_range = [lo, hi]; values below lo count in the
    first bin, values at or above hi in the last.

    >>> import tapeflow as tf
    >>> tf.histogram_fixed_width(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), [0.0, 5.0], nbins=5).numpy().tolist()
    [2, 1, 1, 0, 2]
    """
    op = "HistogramFixedWidth"
    v = values if isinstance(values, Tensor) else to_tensor(values, op)
    if v._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"values has dtype {v._dtype.name}; allowed: {_names(_NUMERIC)}", op)
    r = value_range if isinstance(value_range, Tensor) else to_tensor(value_range, op, v._dtype)
    if len(r._shape) != 1 or not _dim_eq(r._shape[0], 2):
        raise InvalidArgumentError(f"value_range has shape {list(r._shape)}; allowed: [2] (lo, hi)", op)
    if r._dtype is not v._dtype:
        raise InvalidArgumentError(f"value_range has dtype {r._dtype.name} but values {v._dtype.name}; allowed: the "
                                   "same dtype", op)
    bins = _int_arg(nbins, op, "nbins")
    if bins <= 0:
        raise InvalidArgumentError(f"nbins = {bins}; allowed: nbins > 0", op)
    out_dt = dtype_arg(dtype, op, "dtype")
    if out_dt not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"dtype = {out_dt.name}; allowed: int32, int64", op)
    if r._h is not None or r._arr is not None:
        lo_hi = static_value(r, op, "value_range")
        if not lo_hi[1] > lo_hi[0]:
            raise InvalidArgumentError(f"value_range = {lo_hi.tolist()}; allowed: lo < hi", op)
    flat = reshape(v, [-1])
    lo, hi = r[0], r[1]
    scaled = truediv(subtract(flat, lo), subtract(hi, lo))
    if scaled._dtype in (_dt.float16, _dt.bfloat16):
        scaled = cast(scaled, _dt.float32)
    idx = cast(floor(multiply(scaled, cast(bins, scaled._dtype))), _dt.int32)
    idx = minimum(maximum(idx, cast(0, _dt.int32)), cast(bins - 1, _dt.int32))
    return unsorted_segment_sum(cast(ones_like(idx), out_dt), idx, bins)


@register("searchsorted", "SearchSorted", kind="composite")
def searchsorted(sorted_sequence, values, side="left", out_type=_dt.int32, name=None):
    """Where each of ``values`` would go in the innermost sorted rows of ``sorted_sequence``: the number of
    entries < value (side='left') or <= value (side='right'), row by row over the leading axes.

    >>> import tapeflow as tf
    >>> tf.searchsorted([0.0, 3.0, 9.0, 10.0], [2.0, 3.0, 11.0]).numpy().tolist()
    [1, 1, 4]
    >>> tf.searchsorted([0.0, 3.0, 9.0, 10.0], [2.0, 3.0, 11.0], side="right").numpy().tolist()
    [1, 2, 4]
    """
    op = "SearchSorted"
    s = sorted_sequence if isinstance(sorted_sequence, Tensor) else to_tensor(sorted_sequence, op)
    v = values if isinstance(values, Tensor) else to_tensor(values, op, s._dtype)
    if side not in ("left", "right"):
        raise InvalidArgumentError(f"side = {side!r}; allowed: 'left', 'right'", op)
    dt = _index_dtype(out_type, op, "out_type")
    if s._dtype not in _NUMERIC or v._dtype is not s._dtype:
        raise InvalidArgumentError(f"sorted_sequence is {s._dtype.name} and values {v._dtype.name}; allowed: one "
                                   f"dtype of {_names(_NUMERIC)}", op)
    if not s._shape or len(v._shape) != len(s._shape) or \
            not all(_dim_eq(p, q) for p, q in zip(s._shape[:-1], v._shape[:-1])):
        raise InvalidArgumentError(f"sorted_sequence has shape {list(s._shape)} and values {list(v._shape)}; "
                                   "allowed: the same rank >= 1 and the same leading dimensions", op)
    cmp = less if side == "left" else less_equal
    below = cmp(s[..., None, :], v[..., :, None])           # [..., values, boundaries]
    return reduce_sum(cast(below, dt), axis=-1)



@register("in_top_k", "InTopKV2", kind="composite")
def in_top_k(targets, predictions, k, name=None):
    """Whether each target class is among the ``k`` largest predictions of its row: fewer than k classes score
    higher (so ties at the boundary count as in).  As TensorFlow's kernel: a row with a non-finite score, or a
    target outside [0, classes), gives False.

    >>> import tapeflow as tf
    >>> tf.math.in_top_k([2, 0], [[0.1, 0.5, 0.4], [0.2, 0.2, 0.6]], k=2).numpy().tolist()
    [True, True]
    """
    op = "InTopKV2"
    p = predictions if isinstance(predictions, Tensor) else to_tensor(predictions, op)
    if p._dtype is not _dt.float32:
        raise InvalidArgumentError(f"predictions has dtype {p._dtype.name}; allowed: float32", op)
    if len(p._shape) != 2:
        raise InvalidArgumentError(f"predictions has shape {list(p._shape)}; allowed: [batch, classes]", op)
    t = _vector(targets, op, "targets")
    if t._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"targets has dtype {t._dtype.name}; allowed: int32, int64", op)
    if not _dim_eq(t._shape[0], p._shape[0]):
        raise InvalidArgumentError(f"targets has {t._shape[0]} entries for {p._shape[0]} rows of predictions", op)
    kk = _int_arg(k if not isinstance(k, Tensor) else static_value(k, op, "k"), op, "k")
    classes = p._shape[1]
    ids = cast(t, _dt.int32)
    n_cls = reduce_sum(ones_like(p[:1], dtype=_dt.int32)) if classes is None else cast(classes, _dt.int32)
    valid = logical_and(greater_equal(ids, 0), less(ids, n_cls))
    safe = where(valid, ids, zeros_like(ids))
    score = gather(p, safe, axis=1, batch_dims=1)                         # each row's target score
    above = reduce_sum(cast(greater(p, score[:, None]), _dt.int32), axis=1)
    finite = reduce_all(is_finite(p), axis=1)                            # TensorFlow: any non-finite score: False
    return logical_and(logical_and(valid, finite), less(above, cast(kk, _dt.int32)))
