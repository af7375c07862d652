"""Specs of the LAPACK decompositions (linalg_lapack_ops) and their compositions against NumPy.

Singular vectors and eigenvectors are unique up to sign: both sides scale each column by the
sign of its first row before comparing.  Gradients are checked in float64 by the registry walk."""
from __future__ import annotations

import numpy as np
from opspec import FLOATS, HALF, Spec

from specs.linalg import _la, _spd, _spd_input, _well_conditioned
from specs.math import FH, _np_dtype, _vals  # noqa: F401

SPECS = []

SVD_SHAPES = [(3, 3), (4, 3), (3, 5), (2, 4, 2), (2, 2, 3), (1, 1), (0, 3), (2, 3, 0), (6, 6)]
SQUARE_SHAPES = [(3, 3), (2, 4, 4), (1, 1), (2, 0, 0), (0, 2, 2), (6, 6)]


def _np_sign_cols(u, v):
    if u.shape[-2] == 0:
        return u, v
    sgn = np.where(u[..., :1, :] < 0, -1.0, 1.0).astype(u.dtype)
    return u * sgn, v * sgn


def _tf_sign_cols(tf, u, v):
    if u.shape[-2] == 0:
        return u, v
    sgn = tf.where(u[..., :1, :] < 0, -tf.ones_like(u[..., :1, :]), tf.ones_like(u[..., :1, :]))
    return u * sgn, v * sgn


def _svd_ref(x, full_matrices=False, compute_uv=True):
    x64 = x.astype(np.float64)
    m, n = x.shape[-2:]
    k = min(m, n)
    if not compute_uv:
        return np.linalg.svd(x64, compute_uv=False).astype(x.dtype) if x.size else np.zeros(x.shape[:-2] + (k,),
                                                                                             x.dtype)
    if x.size == 0:
        uc, vr = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, uc), x.shape[:-2] + (m, uc))
        v = np.broadcast_to(np.eye(n, vr), x.shape[:-2] + (n, vr))
        s = np.zeros(x.shape[:-2] + (k,))
    else:
        u, s, vt = np.linalg.svd(x64, full_matrices=full_matrices)
        v = np.swapaxes(vt, -1, -2)
    if full_matrices:
        return tuple(np.asarray(o).astype(x.dtype) for o in (s, u @ np.swapaxes(u, -1, -2),
                                                               v @ np.swapaxes(v, -1, -2)))
    u, v = _np_sign_cols(u, v)
    return tuple(np.asarray(o).astype(x.dtype) for o in (s, u, v))


def _svd_fn(tf, x, full_matrices=False, compute_uv=True):
    x = tf.convert_to_tensor(x)
    if not compute_uv:
        return tf.linalg.svd(x, compute_uv=False)
    s, u, v = tf.linalg.svd(x, full_matrices=full_matrices)
    if full_matrices:   # the extra singular vectors are any orthonormal completion: compare u u^T, v v^T
        return s, tf.matmul(u, u, transpose_b=True), tf.matmul(v, v, transpose_b=True)
    u, v = _tf_sign_cols(tf, u, v)
    return s, u, v


def _eigh_ref(x):
    x64 = x.astype(np.float64)
    if x.size == 0:
        return np.zeros(x.shape[:-1], x.dtype), np.zeros(x.shape, x.dtype)
    e, v = np.linalg.eigh(x64, UPLO="L")
    v, _ = _np_sign_cols(v, v)
    return e.astype(x.dtype), v.astype(x.dtype)


def _eigh_fn(tf, x):
    e, v = tf.linalg.eigh(tf.convert_to_tensor(x))
    v, _ = _tf_sign_cols(tf, v, v)
    return e, v


def _qr_ref(x, full_matrices=False):
    m, n = x.shape[-2:]
    qc = m if full_matrices else min(m, n)
    if x.size == 0:
        return (np.broadcast_to(np.eye(m, qc), x.shape[:-2] + (m, qc)).astype(x.dtype),
                np.zeros(x.shape[:-2] + (qc, n), x.dtype))
    q, r = np.linalg.qr(x.astype(np.float64), mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype), r.astype(x.dtype)


def _lu_one(a):
    a = a.copy()
    n = a.shape[0]
    perm = np.arange(n)
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if p != j:
            a[[j, p]] = a[[p, j]]
            perm[[j, p]] = perm[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, perm


def _lu_ref(x, output_idx_type=None):
    n = x.shape[-1]
    if x.size == 0:
        return x.copy(), np.zeros(x.shape[:-1], np.int64 if str(output_idx_type) == "int64" else np.int32)
    flat = x.astype(np.float64).reshape(-1, n, n)
    outs = [_lu_one(m) for m in flat]
    lu = np.array([o[0] for o in outs]).reshape(x.shape) if outs else np.zeros(x.shape)
    perm = np.array([o[1] for o in outs]).reshape(x.shape[:-1]) if outs else np.zeros(x.shape[:-1])
    idx = np.int64 if output_idx_type is not None and str(output_idx_type) == "int64" else np.int32
    return lu.astype(x.dtype), perm.astype(idx)


def _expm_ref(a):
    a = a.astype(np.float64)
    out = np.zeros_like(a)
    n = a.shape[-1]
    for idx in np.ndindex(*a.shape[:-2]):
        m = a[idx]
        nrm = np.abs(m).sum(axis=0).max() if n else 0.0
        s = max(0, int(np.ceil(np.log2(nrm / 0.25))) if nrm > 0 else 0)
        m = m / 2.0 ** s
        term, total = np.eye(n), np.eye(n)
        for k in range(1, 30):
            term = term @ m / k
            total = total + term
        for _ in range(s):
            total = total @ total
        out[idx] = total
    return out


def _lstsq_ref(a, b, l2_regularizer=0.0, fast=True):
    m, n = a.shape[-2:]
    at = np.swapaxes(a, -1, -2)
    if not fast:
        return np.linalg.pinv(a) @ b
    if m >= n:
        return np.linalg.solve(at @ a + l2_regularizer * np.eye(n), at @ b)
    return at @ np.linalg.solve(a @ at + l2_regularizer * np.eye(m), b)


def _pinv_ref(a, rcond=None):
    m, n = a.shape[-2:]
    rcond = 10 * max(m, n) * np.finfo(np.float32 if a.dtype != np.float64 else np.float64).eps \
        if rcond is None else rcond
    return np.linalg.pinv(a, rcond=rcond)


def _set_diag_ref(x, d, k=0):
    out = x.copy()
    m, n = x.shape[-2:]
    i = np.arange(d.shape[-1])
    r, c = (i, i + k) if k >= 0 else (i - k, i)
    out[..., r, c] = d
    return out


def _norm2_ref(x, ord, axis, keepdims=False):
    out = np.linalg.norm(x.astype(np.float64), ord=ord, axis=tuple(axis), keepdims=keepdims)
    return np.asarray(out).astype(x.dtype)


def _with_half(spec):
    """The spec over float32/float64 with its tolerances, and over the half types with theirs."""
    import dataclasses

    return [dataclasses.replace(spec, dtypes=FLOATS),
            dataclasses.replace(spec, dtypes=HALF, rtol=None, atol=None, name=(spec.name + "-half").lstrip("-"),
                                grad=False)]


def _lu_packed(rng, sa, sb, dt):
    lu, p = _lu_ref(_well_conditioned(rng, sa, dt))
    return lu, p, _vals(rng, sb, dt)


def _lu_solve_ref(lu, p, b):
    n = lu.shape[-1]
    low = np.tril(lu, -1) + np.eye(n)
    a = low @ np.triu(lu)
    inv = np.argsort(p, axis=-1)
    a = np.take_along_axis(a, inv[..., None], axis=-2)   # A with A[p] = L U
    return np.linalg.solve(a, b)


def _sym(tf, a):
    """(a + a^T) / 2: cholesky reads one triangle but its gradient (TensorFlow's) is symmetric."""
    a = tf.convert_to_tensor(a)
    return (a + tf.linalg.matrix_transpose(a)) * tf.constant(0.5, a.dtype)


def _cases(rng, dt, shapes, sampler=_vals, **kw):
    return [((sampler(rng, s, dt, -1, 1) if sampler is _vals else sampler(rng, s, dt),), dict(kw)) for s in shapes]


SPECS += [
    Spec("svd", _svd_ref, lambda rng, dt: _cases(rng, dt, SVD_SHAPES), fn=_svd_fn, rtol=1e-4, atol=1e-5),
    Spec("svd", _svd_ref, lambda rng, dt: _cases(rng, dt, SVD_SHAPES, compute_uv=False), fn=_svd_fn,
         name="values", rtol=1e-4, atol=1e-5),
    Spec("svd", _svd_ref, lambda rng, dt: _cases(rng, dt, [(3, 3), (2, 4, 4), (0, 0)], full_matrices=True),
         fn=_svd_fn, name="full-square", rtol=1e-4, atol=1e-5),
    Spec("svd", _svd_ref, lambda rng, dt: _cases(rng, dt, [(4, 2), (2, 3, 5), (0, 3)], full_matrices=True),
         fn=_svd_fn, name="full", rtol=1e-4, atol=1e-5, grad=False),
    Spec("eigh", _eigh_ref, lambda rng, dt: _cases(rng, dt, SQUARE_SHAPES), fn=_eigh_fn, rtol=1e-4, atol=1e-5),
    Spec("eigvalsh", _la(lambda x: np.linalg.eigvalsh(x, UPLO="L") if x.size else np.zeros(x.shape[:-1])),
         lambda rng, dt: _cases(rng, dt, SQUARE_SHAPES), fn=lambda tf, x: tf.linalg.eigvalsh(tf.constant(x)),
         rtol=1e-4, atol=1e-5),
    Spec("qr", _qr_ref, lambda rng, dt: _cases(rng, dt, SVD_SHAPES), fn=lambda tf, x: tf.linalg.qr(tf.constant(x)),
         rtol=1e-4, atol=1e-5),
    Spec("qr", _qr_ref, lambda rng, dt: _cases(rng, dt, [(3, 3), (2, 3, 5), (0, 3), (2, 2)], full_matrices=True),
         fn=lambda tf, x, **kw: tf.linalg.qr(tf.constant(x), **kw), name="full", rtol=1e-4, atol=1e-5),
    Spec("lu", _lu_ref, lambda rng, dt: _cases(rng, dt, SQUARE_SHAPES),
         fn=lambda tf, x: tf.linalg.lu(tf.constant(x)), dtypes=FH, rtol=1e-4, atol=1e-5),
    Spec("lu", _lu_ref, lambda rng, dt: [((_vals(rng, (2, 3, 3), dt, -1, 1),), {"output_idx_type": "int64"})],
         fn=lambda tf, x, output_idx_type: tf.linalg.lu(tf.constant(x), output_idx_type=tf.int64), name="int64",
         rtol=1e-4, atol=1e-5),
    Spec("lu_solve", _la(lambda a, b: np.linalg.solve(a, b) if a.size and b.size else np.zeros(b.shape)),
         lambda rng, dt: [((_well_conditioned(rng, sa, dt), _vals(rng, sb, dt)), {}) for sa, sb in
                          [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((0, 2, 2), (0, 2, 3)), ((3, 3), (3, 0))]],
         fn=lambda tf, a, b: tf.linalg.lu_solve(*tf.linalg.lu(tf.constant(a)), tf.constant(b)), dtypes=FH,
         rtol=1e-4, atol=1e-5),
    Spec("expm", _la(_expm_ref), lambda rng, dt: _cases(rng, dt, SQUARE_SHAPES) + [
        ((_vals(rng, (3, 3), dt, -3, 3),), {}), ((np.zeros((2, 2), _np_dtype(dt)),), {})],
        dtypes=FH, rtol=1e-4, atol=1e-5, fn=lambda tf, x: tf.linalg.expm(tf.constant(x))),
    Spec("cholesky_solve", _la(lambda a, b: np.linalg.solve(a, b) if a.size and b.size else np.zeros(b.shape)),
         lambda rng, dt: [((_spd(_spd_input(rng, sa, dt)).astype(_np_dtype(dt)), _vals(rng, sb, dt)), {})
                          for sa, sb in [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((3, 3), (3, 0))]],
         fn=lambda tf, a, b: tf.linalg.cholesky_solve(tf.linalg.cholesky(_sym(tf, a)), tf.constant(b)),
         dtypes=FH, rtol=1e-4, atol=1e-5),
    Spec("lstsq", _la(_lstsq_ref),
         lambda rng, dt: [((_vals(rng, sa, dt, -1, 1), _vals(rng, sb, dt)), kw) for sa, sb, kw in [
             ((4, 3), (4, 2), {}), ((2, 5, 3), (2, 5, 1), {"l2_regularizer": 0.5}), ((2, 4), (2, 2), {}),
             ((3, 5), (3, 1), {"l2_regularizer": 0.1}), ((4, 3), (4, 2), {"fast": False}),
             ((2, 3, 4), (2, 3, 1), {"fast": False})]],
         fn=lambda tf, a, b, **kw: tf.linalg.lstsq(tf.constant(a), tf.constant(b), **kw), rtol=1e-4, atol=1e-4),
    Spec("pinv", _la(_pinv_ref), lambda rng, dt: _cases(rng, dt, [(3, 3), (4, 2), (2, 2, 5), (0, 3)]),
         fn=lambda tf, a: tf.linalg.pinv(tf.constant(a)), rtol=1e-4, atol=1e-4),
    Spec("matrix_rank", lambda a: (np.linalg.matrix_rank(a) if a.size else
                                   np.zeros(a.shape[:-2], np.int64)).astype(np.int32),
         lambda rng, dt: [((x.astype(_np_dtype(dt)),), {}) for x in [
             np.array([[1.0, 2.0], [2.0, 4.0]]), rng.uniform(-1, 1, (2, 3, 4)), np.zeros((3, 3)),
             rng.uniform(-1, 1, (4, 2)) @ rng.uniform(-1, 1, (2, 4)), np.zeros((0, 2))]],
         fn=lambda tf, a: tf.linalg.matrix_rank(tf.constant(a)), exact=True, grad=False),
    Spec("set_diag", _set_diag_ref, lambda rng, dt: [((_vals(rng, sx, dt), _vals(rng, sd, dt)), kw) for sx, sd, kw in [
        ((3, 3), (3,), {}), ((2, 3, 4), (2, 3), {}), ((3, 4), (3,), {"k": 1}), ((4, 3), (3,), {"k": -1}),
        ((0, 2, 2), (0, 2), {})]], dtypes=FH, exact=True),
    Spec("lu_solve", lambda lu, p, b: _la(lambda lu, p, b: _lu_solve_ref(lu, p, b))(lu, p, b),
         lambda rng, dt: [(_lu_packed(rng, sa, sb, dt), {}) for sa, sb in [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1))]],
         name="packed", rtol=1e-4, atol=1e-5),
    Spec("norm", _norm2_ref, lambda rng, dt: [((_vals(rng, s, dt),), kw) for s, kw in [
        ((3, 4), {"ord": 2, "axis": [0, 1]}), ((2, 3, 4), {"ord": 2, "axis": [2, 0], "keepdims": True}),
        ((3, 4), {"ord": "nuc", "axis": [-2, -1]}), ((2, 3, 3), {"ord": "nuc", "axis": [1, 2]})]],
         name="spectral", rtol=1e-4, atol=1e-5,
         fn=lambda tf, x, **kw: tf.norm(tf.constant(x), **kw)),
]


# half types: a second spec each, with the half tolerances (they round every intermediate factor)
SPECS = [t for s in SPECS for t in (_with_half(s) if s.dtypes == FH and not s.exact else [s])]
