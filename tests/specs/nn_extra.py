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
