"""Specs of core's linear algebra (linalg_ops) against NumPy: diagonals, band parts, traces,
factorisations and solves, with the helpers of specs/math.py."""
from __future__ import annotations

import numpy as np
from opspec import FLOATS, HALF, SHAPES, Spec

from specs.math import (AH, BF16, FH, NH, _away, _distinct, _f64, _is_float, _matmul_ref, _mixed,  # noqa: F401
                        _np_axis, _np_dtype, _vals)

SPECS = []

# ---- linalg -----------------------------------------------------------------------------------------

def _diag_part_ref(x, k=0):
    return np.diagonal(x, k, axis1=-2, axis2=-1).copy()


def _diag_part_sample(rng, dt):
    return [((_vals(rng, s, dt),), {} if k is None else {"k": k})
            for s, k in [((3, 4), None), ((4, 3), None), ((3, 4), 1), ((3, 4), -2), ((3, 4), 3), ((2, 3, 3), None),
                         ((2, 3, 3), -1), ((0, 3), None), ((2, 0, 0), None), ((1, 1), None)]]


def _diag_ref(d, k=0, num_rows=-1, num_cols=-1, padding_value=0):
    L = d.shape[-1]
    rows = L + abs(k) if num_rows == -1 and num_cols == -1 else (L + max(-k, 0) if num_rows == -1 else num_rows)
    cols = L + abs(k) if num_rows == -1 and num_cols == -1 else (L + max(k, 0) if num_cols == -1 else num_cols)
    out = np.full(d.shape[:-1] + (rows, cols), padding_value).astype(d.dtype)
    i = np.arange(L)
    r, c = (i, i + k) if k >= 0 else (i - k, i)
    out[..., r, c] = d
    return out


def _diag_sample(rng, dt):
    return [((_vals(rng, s, dt),), kw) for s, kw in [
        ((3,), {}), ((2, 3), {}), ((3,), {"k": 1}), ((3,), {"k": -2}), ((3,), {"k": 1, "num_rows": 4}),
        ((3,), {"num_rows": 3, "num_cols": 5}), ((3,), {"k": -1, "num_cols": 3}), ((0,), {}), ((2, 0), {}),
        ((2,), {"padding_value": 7})]]


def _norm_ref(x, ord="euclidean", axis=None, keepdims=None):
    x64 = np.abs(x.astype(np.float64))
    keepdims = bool(keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        a0, a1 = axis
        if ord in ("fro", "euclidean"):
            out = np.sqrt(np.sum(x64 ** 2, axis=(a0, a1), keepdims=keepdims))
        else:
            inner, outer = (a0, a1) if ord == 1 else (a1, a0)
            out = np.max(np.sum(x64, axis=inner, keepdims=True), axis=outer, keepdims=True)
            if not keepdims:
                out = np.squeeze(out, axis=(a0 % x.ndim, a1 % x.ndim))
        return np.asarray(out).astype(x.dtype)
    ax = _np_axis(axis)
    if ord in ("euclidean", "fro", 2):
        out = np.sqrt(np.sum(x64 ** 2, axis=ax, keepdims=keepdims))
    elif ord == np.inf:
        out = np.max(x64, axis=ax, keepdims=keepdims)
    else:
        out = np.sum(x64 ** ord, axis=ax, keepdims=keepdims) ** (1 / ord)
    return np.asarray(out).astype(x.dtype)


def _norm_sample(rng, dt):
    cases = []
    for ord_ in ("euclidean", 1, 2, np.inf, 3, 0.5):
        cases.append(((_away(rng, (3, 4), dt),), {"ord": ord_}))
        cases.append(((_away(rng, (3, 4), dt),), {"ord": ord_, "axis": 1, "keepdims": True}))
        cases.append(((_away(rng, (2, 3, 4), dt),), {"ord": ord_, "axis": [0]}))
    for ord_ in ("fro", "euclidean", 1, np.inf):
        cases.append(((_distinct(rng, (3, 4), dt),), {"ord": ord_, "axis": [0, 1]}))
        cases.append(((_distinct(rng, (2, 3, 4), dt),), {"ord": ord_, "axis": [2, 1], "keepdims": True}))
    cases.append(((_away(rng, (5,), dt),), {}))
    return cases


def _tensordot_sample(rng, dt):
    return [((_vals(rng, sa, dt, -2, 2), _vals(rng, sb, dt, -2, 2)), {"axes": ax}) for sa, sb, ax in [
        ((3, 4), (4, 5), 1), ((2, 3, 4), (4, 3, 5), [[1, 2], [1, 0]]), ((3,), (3,), 1), ((3,), (4,), 0),
        ((2, 3), (3, 2), [[0, 1], [1, 0]]), ((0, 3), (3, 2), 1), ((2, 3, 4), (3, 4, 2), 2), ((), (3,), 0)]]


EINSUM_CASES = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(2, 3), (3, 2)]), ("ii", [(3, 3)]), ("ii->i", [(4, 4)]),
                ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
                ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(5,), (5,)]),
                ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("bii->b", [(2, 3, 3)]), ("ijk->kji", [(2, 3, 4)]),
                ("ij,ij->ij", [(3, 4), (3, 4)]), ("ij,kj", [(3, 4), (2, 4)]), ("i,i", [(0,), (0,)]),
                ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ijk,k->ij", [(2, 3, 4), (4,)]),
                ("ab,cd->abcd", [(2, 1), (1, 3)])]


SPECS += [
    Spec("diag_part", _diag_part_ref, _diag_part_sample, dtypes=AH, exact=True),
    Spec("diag", _diag_ref, _diag_sample, dtypes=AH, exact=True),
    Spec("trace", lambda x: np.asarray(np.trace(x.astype(np.float64) if _is_float(x) else x, axis1=-2, axis2=-1))
         .astype(x.dtype), lambda rng, dt: [((_vals(rng, s, dt),), {}) for s in [(3, 3), (3, 4), (2, 4, 3), (0, 0)]],
         dtypes=NH),
    Spec("matrix_transpose", lambda x: np.swapaxes(x, -1, -2).copy(),
         lambda rng, dt: [((_vals(rng, s, dt),), {}) for s in [(3, 4), (2, 3, 4), (0, 3), (1, 2, 1, 5)]],
         dtypes=AH, exact=True, fn=lambda tf, x: tf.linalg.matrix_transpose(tf.constant(x))),
    Spec("matvec", lambda a, b: _matmul_ref(a, b[..., None])[..., 0],
         lambda rng, dt: [((_vals(rng, sa, dt, -2, 2), _vals(rng, sb, dt, -2, 2)), {})
                          for sa, sb in [((3, 4), (4,)), ((2, 3, 4), (2, 4)), ((2, 3, 4), (4,)), ((0, 4), (4,))]],
         dtypes=NH, fn=lambda tf, a, b: tf.linalg.matvec(tf.constant(a), tf.constant(b))),
    Spec("cross", _mixed(lambda a, b: np.cross(a, b)),
         lambda rng, dt: [((_vals(rng, s, dt), _vals(rng, s, dt)), {}) for s in [(3,), (4, 3), (2, 1, 3)]],
         dtypes=FH + ("int32", "int64"), fn=lambda tf, a, b: tf.linalg.cross(tf.constant(a), tf.constant(b))),
    Spec("norm", _norm_ref, _norm_sample, dtypes=FH),
    Spec("tensordot", _mixed(lambda a, b, axes: np.tensordot(a, b, axes)), _tensordot_sample, dtypes=NH),
    Spec("einsum", _mixed(lambda *ops, equation: np.einsum(equation, *ops)),
         lambda rng, dt: [(tuple(_vals(rng, s, dt, -2, 2) for s in shapes), {"equation": eq})
                          for eq, shapes in EINSUM_CASES],
         fn=lambda tf, *ops, equation: tf.einsum(equation, *[tf.convert_to_tensor(o) for o in ops]),
         dtypes=FLOATS + HALF + ("int32", "int64")),
    Spec("check_numerics", lambda x, message: x.copy(),
         lambda rng, dt: [((_vals(rng, s, dt), "x"), {}) for s in SHAPES], dtypes=FH,
         fn=lambda tf, x, message: tf.debugging.check_numerics(tf.convert_to_tensor(x), message)),
]


# ---- factorisations and solves ----------------------------------------------------------------------

LA_SHAPES = [(3, 3), (2, 4, 4), (1, 1), (2, 0, 0), (0, 2, 2), (16, 16)]


def _well_conditioned(rng, shape, dt):
    n = shape[-1]
    return np.asarray(rng.uniform(-1, 1, size=shape) + n * np.eye(n)).astype(_np_dtype(dt))


def _spd_input(rng, shape, dt):
    """A random matrix M; the specs take cholesky/logdet of M @ M^T + n I (symmetric positive definite)."""
    return np.asarray(rng.uniform(-1, 1, size=shape)).astype(_np_dtype(dt))


def _spd(m):
    m = m.astype(np.float64)
    return m @ np.swapaxes(m, -1, -2) + m.shape[-1] * np.eye(m.shape[-1])


def _sym_spd(tf, m):
    m = tf.convert_to_tensor(m)
    n = m.shape[-1]
    return tf.matmul(m, m, transpose_b=True) + tf.cast(tf.eye(n) * n, m.dtype)


def _la(fn):
    """A float64 NumPy linear-algebra reference rounded to the input dtype (empty batches kept)."""
    def ref(*args, **kwargs):
        dt = args[0].dtype
        out = fn(*[a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
        with np.errstate(over="ignore"):   # a float16 determinant may overflow, as tapeflow's does
            if isinstance(out, tuple):
                return tuple(np.asarray(o).astype(dt) for o in out)
            return np.asarray(out).astype(dt)
    return ref


def _solve_ref(a, b, adjoint=False):
    a = np.swapaxes(a, -1, -2) if adjoint else a
    if a.size == 0 or b.size == 0:
        return np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:])
    return np.linalg.solve(a, b)


def _tri_ref(a, b, lower=True, adjoint=False):
    a = np.tril(a) if lower else np.triu(a)
    return _solve_ref(a, b, adjoint)


def _band_ref(x, num_lower, num_upper):
    m, n = x.shape[-2:]
    d = np.arange(n)[None, :] - np.arange(m)[:, None]
    keep = np.ones((m, n), bool)
    if num_lower >= 0:
        keep &= d >= -num_lower
    if num_upper >= 0:
        keep &= d <= num_upper
    return np.where(keep, x, np.zeros((), x.dtype))


def _rhs_cases(rng, dt, a_sampler):
    return [((a_sampler(rng, sa, dt), _vals(rng, sb, dt)), kw) for sa, sb, kw in [
        ((3, 3), (3, 2), {}), ((3, 3), (3, 1), {"adjoint": True}), ((2, 4, 4), (2, 4, 3), {}),
        ((2, 4, 4), (4, 2), {"adjoint": True}), ((3, 3), (2, 3, 2), {}), ((0, 3, 3), (0, 3, 2), {}),
        ((3, 3), (3, 0), {})]]


def _tri_matrix(rng, shape, dt):
    return _well_conditioned(rng, shape, dt)


SPECS += [
    Spec("inv", _la(np.linalg.inv), lambda rng, dt: [((_well_conditioned(rng, s, dt),), {}) for s in LA_SHAPES],
         dtypes=FH, fn=lambda tf, x: tf.linalg.inv(tf.convert_to_tensor(x))),
    Spec("det", _la(np.linalg.det), lambda rng, dt: [((_well_conditioned(rng, s, dt),), {}) for s in LA_SHAPES],
         dtypes=FH, fn=lambda tf, x: tf.linalg.det(tf.convert_to_tensor(x))),
    Spec("det", _la(np.linalg.det), lambda rng, dt: [((np.array([[1.0, 2.0], [2.0, 4.0]], _np_dtype(dt)),), {})],
         dtypes=FH, fn=lambda tf, x: tf.linalg.det(tf.convert_to_tensor(x)), name="singular", grad=False),
    Spec("slogdet", _la(lambda x: tuple(np.linalg.slogdet(x))),
         lambda rng, dt: [((_well_conditioned(rng, s, dt) * np.asarray(-1.0, _np_dtype(dt)),), {})
                          for s in LA_SHAPES], dtypes=FH, fn=lambda tf, x: tf.linalg.slogdet(tf.convert_to_tensor(x))),
    Spec("solve", _la(_solve_ref), lambda rng, dt: _rhs_cases(rng, dt, _well_conditioned), dtypes=FH,
         fn=lambda tf, a, b, **kw: tf.linalg.solve(tf.convert_to_tensor(a), tf.convert_to_tensor(b), **kw)),
    Spec("triangular_solve", _la(_tri_ref),
         lambda rng, dt: [(args, dict(kw, lower=lower)) for args, kw in _rhs_cases(rng, dt, _tri_matrix)
                          for lower in (True, False)], dtypes=FH,
         fn=lambda tf, a, b, **kw: tf.linalg.triangular_solve(tf.convert_to_tensor(a), tf.convert_to_tensor(b),
                                                              **kw)),
    Spec("cholesky", lambda m: np.linalg.cholesky(_spd(m)).astype(m.dtype) if m.size else np.zeros(m.shape, m.dtype),
         lambda rng, dt: [((_spd_input(rng, s, dt),), {}) for s in LA_SHAPES],
         dtypes=FH, fn=lambda tf, m: tf.linalg.cholesky(_sym_spd(tf, m))),
    Spec("logdet", lambda m: np.asarray(np.linalg.slogdet(_spd(m))[1]).astype(m.dtype),
         lambda rng, dt: [((_spd_input(rng, s, dt),), {}) for s in LA_SHAPES],
         dtypes=FH, fn=lambda tf, m: tf.linalg.logdet(_sym_spd(tf, m))),
    Spec("band_part", _band_ref,
         lambda rng, dt: [((_vals(rng, s, dt), lo, up), {}) for s, lo, up in [
             ((4, 4), -1, 0), ((4, 4), 0, -1), ((3, 5), 1, 2), ((2, 3, 3), 0, 0), ((3, 3), -1, -1), ((0, 2), 1, 1)]],
         dtypes=AH, exact=True),
]
