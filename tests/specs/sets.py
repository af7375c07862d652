"""Specs of the counting and set ops (core's set_ops): unique, unique_with_counts, bincount,
confusion_matrix, histogram_fixed_width, searchsorted, against NumPy."""
from __future__ import annotations

import numpy as np
from opspec import ALL, HALF, INTS, NUMERIC, Spec, uniform

EVERY = ALL + HALF


def _unique_sample(rng, dtype):
    small = lambda n: uniform(rng, (n,), dtype, -2.0, 2.0)
    rounded = lambda n: np.round(small(n).astype(np.float64)).astype(small(1).dtype) if dtype not in INTS + ("bool",) \
        else small(n)
    return [((rounded(9),), {}), ((rounded(1),), {}), ((rounded(0),), {}), ((rounded(6),), {"out_idx": "int64"})]


def _ref_unique_counts(x, out_idx="int32"):
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return x[first[order]], rank[inverse.reshape(-1)].astype(out_idx), counts[order].astype(out_idx)


def _ref_unique(x, out_idx="int32"):
    return _ref_unique_counts(x, out_idx)[:2]


def _bincount_sample(rng, dtype):
    a = rng.integers(0, 6, (7,)).astype(np.int32)
    w = uniform(rng, (7,), dtype)
    m = rng.integers(0, 4, (3, 5)).astype(np.int64)
    return [((a,), {}), ((a,), {"minlength": 9}), ((a,), {"maxlength": 3}), ((a, w), {}),
            ((a,), {"minlength": 4, "maxlength": 4, "binary_output": True}), ((np.zeros(0, np.int32),), {}),
            ((m,), {"axis": -1}), ((m,), {"axis": -1, "maxlength": 2, "dtype": "int64"})]


def _ref_bincount(arr, weights=None, minlength=None, maxlength=None, dtype="int32", axis=None, binary_output=False):
    out_dt = weights.dtype if weights is not None else np.dtype(dtype)
    size = max(int(arr.max()) + 1 if arr.size else 0, minlength or 0)
    if maxlength is not None:
        size = min(size, maxlength)
    rows = arr if axis == -1 else arr.reshape(1, -1)
    wr = None if weights is None else weights.reshape(rows.shape).astype(np.float64)
    out = np.zeros((rows.shape[0], size), np.float64)
    for r in range(rows.shape[0]):
        for j, v in enumerate(rows[r]):
            if v < size:
                out[r, v] += 1.0 if wr is None else wr[r, j]
    if binary_output:
        out = (out > 0).astype(np.float64)
    out = out.astype(out_dt)
    return out if axis == -1 else out[0]


def _confusion_sample(rng, dtype):
    lab, pred = rng.integers(0, 4, (8,)).astype(np.int32), rng.integers(0, 4, (8,)).astype(np.int64)
    w = uniform(rng, (8,), "float64")
    return [((lab, pred), {"dtype": dtype}), ((lab, pred), {"num_classes": 6, "dtype": dtype}),
            ((lab, pred), {"weights": w, "dtype": dtype}), ((np.zeros(0, np.int32), np.zeros(0, np.int32)),
                                                           {"num_classes": 2, "dtype": dtype})]


def _ref_confusion(labels, predictions, num_classes=None, weights=None, dtype="int32"):
    n = num_classes if num_classes is not None else int(max(labels.max(), predictions.max())) + 1
    out = np.zeros((n, n), np.float64)
    w = np.ones(labels.size) if weights is None else weights.astype(np.dtype(dtype)).astype(np.float64)
    np.add.at(out, (labels, predictions), w)
    return out.astype(dtype)


def _histogram_sample(rng, dtype):
    v = uniform(rng, (4, 5), dtype, -4.0, 8.0)
    r = np.array([0, 5], v.dtype)
    return [((v, r), {"nbins": 5}), ((v, r), {"nbins": 1, "dtype": "int64"}), ((v.reshape(-1)[:0], r), {})]


def _ref_histogram(values, value_range, nbins=100, dtype="int32"):
    v, (lo, hi) = values.astype(np.float64).reshape(-1), value_range.astype(np.float64)
    idx = np.clip(np.floor((v - lo) / (hi - lo) * nbins).astype(np.int64), 0, nbins - 1)
    return np.bincount(idx, minlength=nbins).astype(dtype)


def _searchsorted_sample(rng, dtype):
    s = np.sort(uniform(rng, (3, 6), dtype), axis=-1)
    v = uniform(rng, (3, 4), dtype)
    v[:, 0] = s[:, 2]  # a value equal to a boundary: left and right differ
    return [((s, v), {}), ((s, v), {"side": "right"}), ((s[0], v[0]), {"out_type": "int64"}),
            ((s[:, :0], v), {}), ((s, v[:, :0]), {"side": "right"})]


def _ref_searchsorted(s, v, side="left", out_type="int32"):
    if s.ndim == 1:
        return np.searchsorted(s, v, side=side).astype(out_type)
    return np.stack([np.searchsorted(a, b, side=side) for a, b in zip(s, v)]).reshape(v.shape).astype(out_type)


def _run_unique(tf, x, out_idx="int32"):
    return tuple(tf.unique(tf.constant(x), out_idx=tf.as_dtype(out_idx)))


def _run_unique_counts(tf, x, out_idx="int32"):
    return tuple(tf.unique_with_counts(tf.constant(x), out_idx=tf.as_dtype(out_idx)))


SPECS = [
    Spec("unique", _ref_unique, _unique_sample, dtypes=EVERY, exact=True, fn=_run_unique, grad=False),
    Spec("unique_with_counts", _ref_unique_counts, _unique_sample, dtypes=EVERY, exact=True, fn=_run_unique_counts,
         grad=False),
    Spec("bincount", _ref_bincount, _bincount_sample, dtypes=("float32", "float64", "int32", "int64"), exact=True,
         grad=False),
    Spec("confusion_matrix", _ref_confusion, _confusion_sample, dtypes=NUMERIC, exact=True, grad=False),
    Spec("histogram_fixed_width", _ref_histogram, _histogram_sample, dtypes=NUMERIC + HALF, exact=True, grad=False),
    Spec("searchsorted", _ref_searchsorted, _searchsorted_sample, dtypes=NUMERIC, exact=True, grad=False),
]


def _in_top_k_sample(rng, dtype):
    p = uniform(rng, (5, 4), "float32")
    p[1, 2] = p[1, 0]                      # a tie at the boundary
    p[3, 1] = np.nan                       # a row with a non-finite score
    t = np.array([0, 2, 3, 0, 7], np.int32)  # 7: outside the classes
    return [((t, p, 1), {}), ((t.astype(np.int64), p, 2), {}), ((t, p, 0), {}), ((t, p, 4), {}),
            ((t[:0], p[:0], 1), {})]


def _ref_in_top_k(targets, predictions, k):
    out = []
    for t, row in zip(targets, predictions):
        if not 0 <= t < row.size or not np.all(np.isfinite(row)):
            out.append(False)
        else:
            out.append(int(np.sum(row > row[t])) < k)
    return np.array(out, bool)


SPECS.append(Spec("in_top_k", _ref_in_top_k, _in_top_k_sample, dtypes=("float32",), exact=True, grad=False))
