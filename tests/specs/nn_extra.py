"""Specs of tf.nn.l2_loss, embedding_lookup and local_response_normalization (core's nn_extra_ops)."""
from __future__ import annotations

import numpy as np
from opspec import FLOATS, HALF, SHAPES, Spec, uniform


def _l2_sample(rng, dtype):
    return [((uniform(rng, s, dtype),), {}) for s in SHAPES]


def _ref_l2(t):
    return (np.sum(t.astype(np.float64) ** 2) / 2).astype(t.dtype)


def _embedding_sample(rng, dtype):
    table = uniform(rng, (5, 3), dtype)
    ids = rng.integers(0, 5, (2, 4)).astype(np.int32)
    return [((table, ids), {}), ((table, ids.astype(np.int64)[0]), {"max_norm": 1.0}),
            ((uniform(rng, (4,), dtype), np.array([3, 0, 3], np.int32)), {}),
            ((uniform(rng, (4, 2, 2), dtype), np.array([1], np.int32)), {"max_norm": 0.5}),
            ((table, np.zeros((0,), np.int32)), {})]


def _ref_embedding(params, ids, max_norm=None):
    out = params.astype(np.float64)[ids]
    if max_norm is not None:
        axes = tuple(range(ids.ndim, out.ndim))
        if axes:
            norm = np.sqrt(np.sum(out ** 2, axis=axes, keepdims=True))
            out = out * np.minimum(1.0, max_norm / np.maximum(norm, 1e-30))
    return out.astype(params.dtype)


def _run_sharded(tf, params, ids, max_norm=None):
    shards = [tf.constant(params[:2]), tf.constant(params[2:])]   # "div": contiguous blocks
    return tf.nn.embedding_lookup(shards, tf.constant(ids), max_norm=max_norm)


def _lrn_sample(rng, dtype):
    x = uniform(rng, (2, 2, 3, 7), dtype)
    return [((x,), {}), ((x,), {"depth_radius": 1, "bias": 2.0, "alpha": 0.3, "beta": 0.75}),
            ((x,), {"depth_radius": 0}), ((x[:, :, :, :2],), {"depth_radius": 3, "alpha": 0.5}),
            ((x[:0],), {})]


def _ref_lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    v = x.astype(np.float64)
    c = v.shape[-1]
    sq = np.zeros_like(v)
    for d in range(c):
        lo, hi = max(0, d - depth_radius), min(c, d + depth_radius + 1)
        sq[..., d] = np.sum(v[..., lo:hi] ** 2, axis=-1)
    return (v / (bias + alpha * sq) ** beta).astype(x.dtype)


SPECS = [
    Spec("l2_loss", _ref_l2, _l2_sample, dtypes=FLOATS + HALF, rtol=1e-5, atol=1e-5),
    Spec("embedding_lookup", _ref_embedding, _embedding_sample, dtypes=FLOATS + HALF, grad_args=(0,)),
    Spec("embedding_lookup", _ref_embedding, lambda rng, dt: _embedding_sample(rng, dt)[:2], dtypes=FLOATS,
         fn=_run_sharded, name="sharded", grad=False),
    Spec("local_response_normalization", _ref_lrn, _lrn_sample, dtypes=FLOATS + HALF, rtol=1e-5, atol=1e-6),
]


def _ctc_sample(rng, dtype):
    T, B, C = 6, 3, 5
    logits = uniform(rng, (T, B, C), dtype)
    labels = np.array([[1, 2, 2], [3, 1, 0], [3, 3, 4]], np.int32)
    lab_len, log_len = np.array([3, 1, 2], np.int32), np.array([6, 4, 5], np.int64)
    return [((labels, logits, lab_len, log_len), {}),
            ((labels.astype(np.int64) % 4, logits, lab_len, log_len.astype(np.int32)), {"blank_index": -1}),
            ((labels, logits.transpose(1, 0, 2).copy(), lab_len, log_len), {"logits_time_major": False}),
            ((labels[:, :0], logits, np.zeros(3, np.int32), log_len), {"blank_index": 2}),
            ((labels[:1], logits[:, :1], np.array([3], np.int32), np.array([2], np.int32)), {})]   # too short: inf


def _ref_ctc(labels, logits, label_length, logit_length, logits_time_major=True, blank_index=None):
    x = logits.astype(np.float64)
    if not logits_time_major:
        x = x.transpose(1, 0, 2)
    T, B, C = x.shape
    blank = 0 if blank_index is None else blank_index % C
    lp = x - np.log(np.sum(np.exp(x - x.max(-1, keepdims=True)), -1, keepdims=True)) - x.max(-1, keepdims=True)
    out = np.zeros(B)
    for b in range(B):
        ext = [blank]
        for v in labels[b, :label_length[b]]:
            ext += [int(v), blank]
        S, tb = len(ext), int(logit_length[b])
        if tb == 0:
            out[b] = 0.0 if S == 1 else np.inf
            continue
        a = np.full(S, -np.inf)
        a[0] = lp[0, b, ext[0]]
        if S > 1:
            a[1] = lp[0, b, ext[1]]
        for t in range(1, tb):
            prev = a.copy()
            for s in range(S):
                terms = [prev[s]] + ([prev[s - 1]] if s >= 1 else []) + \
                    ([prev[s - 2]] if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2] else [])
                a[s] = np.logaddexp.reduce(terms) + lp[t, b, ext[s]]
        out[b] = -np.logaddexp.reduce(a[-2:] if S > 1 else a[-1:])
    return out.astype(logits.dtype)


SPECS.append(Spec("ctc_loss", _ref_ctc, _ctc_sample, dtypes=FLOATS + HALF, grad_args=(1,), rtol=1e-5, atol=1e-5))
