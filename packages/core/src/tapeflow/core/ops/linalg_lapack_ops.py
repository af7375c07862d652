"""Linear algebra from LAPACK decompositions: svd, eigh, qr, lu and expm are primitives
(csrc/lapack.c; the GPU backends run it on the host with copies, see
``tapeflow.kernels.gpu_entries_nn``); eigvalsh, lstsq, pinv, cholesky_solve, lu_solve,
matrix_rank and set_diag are TensorFlow's compositions of them, so tapes record the
primitives and the gradients compose.

Batched over leading axes; float32 and float64 (float16/bfloat16 compute in float32).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..dispatch import alloc, dtype_arg, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from . import _ew
from .array_ops import expand_dims, gather, ones_like, shape, zeros_like
from .linalg_ops import (
    _back,
    _lu,
    _matrix,
    _prod,
    _same_infer,
    _square,
    _work_copy,
    band_part,
    cholesky,
    diag,
    diag_part,
    triangular_solve,
)
from .math_ops import add, cast, divide, greater, matmul, multiply
from .reduce_ops import reduce_max, reduce_sum


def _float_matrix(x, op, what="input"):
    x = _matrix(x, op, what)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"{what} has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.FLOATS)}", op)
    return x


def _min(m, n):
    return None if m is None or n is None else min(m, n)


def _no_convergence(info, op, what):
    bad = info.numpy().reshape(-1) if info._size else ()
    for i, v in enumerate(bad):
        if v > 0:
            where = f" (matrix #{i} of the batch)" if info._shape else ""
            raise InvalidArgumentError(f"{what} did not converge{where} (LAPACK info {v}); allowed: finite "
                                       "matrices", op)


# ---- svd ------------------------------------------------------------------------------

def _svd_infer(x, *, full_matrices, compute_uv):
    *batch, m, n = x._shape
    batch, k = tuple(batch), _min(m, n)
    s = (batch + (k,), x._dtype)
    if not compute_uv:
        return s
    uc, vr = (m, n) if full_matrices else (k, k)
    return [s, (batch + (m, uc), x._dtype), (batch + (n, vr), x._dtype)]


@primitive("svd", "Svd", infer=_svd_infer, dtypes=_dt.FLOATS)
def _SVD(dev, x, *, full_matrices, compute_uv):
    *batch, m, n = x._shape
    batch, k = tuple(batch), min(m, n)
    a = _work_copy(x)
    s = alloc(batch + (k,), a._dtype, dev)
    uc, vr = (m, n) if full_matrices else (k, k)
    u = alloc(batch + (m, uc), a._dtype, dev) if compute_uv else None
    v = alloc(batch + (n, vr), a._dtype, dev) if compute_uv else None
    info = alloc(batch, _dt.int32, dev)
    null = dev.backend.ffi.NULL
    check(dev.backend.svd(a._dtype.code, _prod(batch), m, n, a._h, s._h, u._h if u is not None else null,
                          v._h if v is not None else null, 1 if full_matrices else 0, 1 if compute_uv else 0,
                          info._h), "svd")
    _no_convergence(info, "Svd", "the SVD")
    if not compute_uv:
        return _back(s, x._dtype)
    return _back(s, x._dtype), _back(u, x._dtype), _back(v, x._dtype)


@register("svd", "Svd")
def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular value decomposition tensor = u @ diag(s) @ v^T of each matrix in the last two axes.

    Returns ``s`` (descending, [..., K] with K = min(M, N)), and with ``compute_uv`` also ``u``
    ([..., M, K], or [..., M, M] with ``full_matrices``) and ``v`` ([..., N, K] or [..., N, N]):
    TensorFlow's order (s, u, v), v not transposed.  LAPACK's gesdd.

    >>> import tapeflow as tf
    >>> s, u, v = tf.linalg.svd(tf.constant([[3.0, 0.0], [0.0, -4.0]]))
    >>> s.numpy().tolist(), tf.matmul(u * s, v, transpose_b=True).numpy().tolist()
    ([4.0, 3.0], [[3.0, 0.0], [0.0, -4.0]])
    """
    op = "Svd"
    x = _float_matrix(tensor, op, "tensor")
    for what, v in (("full_matrices", full_matrices), ("compute_uv", compute_uv)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{what} is a {type(v).__name__}; allowed: a bool [Op:{op}]")
    return run(_SVD, (x,), {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)})


# ---- eigh -----------------------------------------------------------------------------

def _eigh_infer(x):
    *batch, n, _ = x._shape
    return [(tuple(batch) + (n,), x._dtype), (tuple(x._shape), x._dtype)]


@primitive("eigh", "SelfAdjointEigV2", infer=_eigh_infer, dtypes=_dt.FLOATS)
def _EIGH(dev, x):
    *batch, n, _ = x._shape
    v = _work_copy(x)
    e = alloc(tuple(batch) + (n,), v._dtype, dev)
    info = alloc(tuple(batch), _dt.int32, dev)
    check(dev.backend.eigh(v._dtype.code, _prod(batch), n, v._h, e._h, 1, info._h), "eigh")
    _no_convergence(info, "SelfAdjointEigV2", "the eigendecomposition")
    return _back(e, x._dtype), _back(v, x._dtype)


@register("eigh", "SelfAdjointEigV2")
def eigh(tensor, name=None):
    """Eigenvalues (ascending) and eigenvectors (the columns of v) of self-adjoint matrices:
    tensor = v @ diag(e) @ v^T.  Only the lower triangle is read (LAPACK's syevd).

    >>> import tapeflow as tf
    >>> e, v = tf.linalg.eigh(tf.constant([[2.0, 1.0], [1.0, 2.0]]))
    >>> [round(float(t), 5) for t in e]
    [1.0, 3.0]
    """
    return run(_EIGH, (_square(tensor, "SelfAdjointEigV2", "tensor"),))


@register("eigvalsh", "SelfAdjointEigV2", kind="composite")
def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of self-adjoint matrices (the lower triangle is read): eigh's first output.

    >>> import tapeflow as tf
    >>> [round(float(t), 5) for t in tf.linalg.eigvalsh(tf.constant([[2.0, 1.0], [1.0, 2.0]]))]
    [1.0, 3.0]
    """
    return eigh(tensor)[0]


# ---- qr -------------------------------------------------------------------------------

def _qr_infer(x, *, full_matrices):
    *batch, m, n = x._shape
    qc = m if full_matrices else _min(m, n)
    return [(tuple(batch) + (m, qc), x._dtype), (tuple(batch) + (qc, n), x._dtype)]


@primitive("qr", "Qr", infer=_qr_infer, dtypes=_dt.FLOATS)
def _QR(dev, x, *, full_matrices):
    *batch, m, n = x._shape
    qc = m if full_matrices else min(m, n)
    a = _work_copy(x)
    q = alloc(tuple(batch) + (m, qc), a._dtype, dev)
    r = alloc(tuple(batch) + (qc, n), a._dtype, dev)
    check(dev.backend.qr(a._dtype.code, _prod(batch), m, n, a._h, q._h, r._h, 1 if full_matrices else 0), "qr")
    return _back(q, x._dtype), _back(r, x._dtype)


@register("qr", "Qr")
def qr(input, full_matrices=False, name=None):
    """QR decomposition input = q @ r: q with orthonormal columns ([..., M, K], K = min(M, N), or [..., M, M]
    with ``full_matrices``), r upper triangular ([..., K, N] or [..., M, N]); Householder (LAPACK's geqrf), so
    r's diagonal may be negative, as TensorFlow's.

    >>> import tapeflow as tf
    >>> q, r = tf.linalg.qr(tf.constant([[3.0, 1.0], [4.0, 2.0]]))
    >>> [[round(float(t), 4) for t in row] for row in r.numpy()]
    [[-5.0, -2.2], [0.0, 0.4]]
    """
    op = "Qr"
    x = _float_matrix(input, op)
    if not isinstance(full_matrices, (bool, np.bool_)):
        raise TypeError(f"full_matrices is a {type(full_matrices).__name__}; allowed: a bool [Op:{op}]")
    return run(_QR, (x,), {"full_matrices": bool(full_matrices)})


# ---- lu -------------------------------------------------------------------------------

def _lu_infer(x, *, output_idx_type):
    return [(tuple(x._shape), x._dtype), (tuple(x._shape[:-1]), output_idx_type)]


@primitive("lu", "Lu", infer=_lu_infer, dtypes=_dt.FLOATS)
def _LU(dev, x, *, output_idx_type):
    *batch, n, _ = x._shape
    lu, piv, _ = _lu(x)
    perm = alloc(tuple(batch) + (n,), output_idx_type, dev)
    check(dev.backend.lu_perm(_prod(batch), n, piv._h, perm._h, output_idx_type.code), "lu_perm")
    return _back(lu, x._dtype), perm


@register("lu", "Lu")
def lu(input, output_idx_type=_dt.int32, name=None):
    """LU decomposition with partial pivoting: ``(lu, p)`` with input[..., p, :] = L @ U, L unit lower
    triangular (below lu's diagonal) and U upper triangular (lu's diagonal and above), as TensorFlow packs them.
    ``p`` is the row permutation (``output_idx_type`` int32 or int64).  A singular matrix factors too.

    >>> import tapeflow as tf
    >>> lu, p = tf.linalg.lu(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu.numpy().tolist(), p.numpy().tolist()
    ([[3.0, 4.0], [0.3333333432674408, 0.6666666269302368]], [1, 0])
    """
    op = "Lu"
    idx = dtype_arg(output_idx_type, op, "output_idx_type")
    if idx not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"output_idx_type = {idx.name}; allowed: int32, int64", op)
    return run(_LU, (_square(input, op),), {"output_idx_type": idx})


def _unit_lower(lower_upper):
    """L of a packed LU: the strictly lower part with ones on the diagonal."""
    return set_diag(band_part(lower_upper, -1, 0), ones_like(diag_part(lower_upper)))


@register("lu_solve", "LuSolve", kind="composite")
def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """X with A @ X = rhs from tf.linalg.lu(A)'s ``(lower_upper, perm)``: two triangular solves of rhs[perm].

    >>> import tapeflow as tf
    >>> a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> lu, p = tf.linalg.lu(a)
    >>> [[round(float(t), 4) for t in row] for row in tf.linalg.lu_solve(lu, p, tf.constant([[5.0], [11.0]])).numpy()]
    [[1.0], [2.0]]
    """
    op = "LuSolve"
    lu_ = _square(lower_upper, op, "lower_upper")
    p = perm if type(perm) is Tensor else to_tensor(perm, op)
    b = _matrix(rhs, op, "rhs")
    if b._dtype is not lu_._dtype:
        _ew.dtype_mismatch(lu_, b, op)
    if p._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"perm has dtype {p._dtype.name}; allowed: int32, int64", op)
    if tuple(p._shape) != tuple(lu_._shape[:-1]) and None not in tuple(p._shape) + tuple(lu_._shape[:-1]):
        raise InvalidArgumentError(f"perm has shape {tuple(p._shape)} and lower_upper {tuple(lu_._shape)}; "
                                   f"allowed: perm of shape {tuple(lu_._shape[:-1])}", op)
    n = lu_._shape[-1]
    if b._shape[-2] != n and None not in (b._shape[-2], n):
        raise InvalidArgumentError(f"lower_upper has shape {tuple(lu_._shape)} and rhs {tuple(b._shape)}: rhs needs "
                                   f"{n} rows; allowed: rhs of shape [..., {n}, K]", op)
    if validate_args:
        _check_perm(p, op)
    batch = len(lu_._shape) - 2
    if len(b._shape) - 2 != batch or any(i is not None and j is not None and i != j
                                         for i, j in zip(b._shape[:-2], lu_._shape[:-2])):
        raise InvalidArgumentError(f"rhs has shape {tuple(b._shape)} and lower_upper {tuple(lu_._shape)}; allowed: "
                                   "the same batch shape", op)
    permuted = gather(b, p, axis=batch, batch_dims=batch)
    y = triangular_solve(_unit_lower(lu_), permuted, lower=True)
    return triangular_solve(band_part(lu_, 0, -1), y, lower=False)


def _check_perm(p, op):
    vals = p.numpy()
    n = vals.shape[-1]
    if not (np.sort(vals.reshape(-1, n), axis=-1) == np.arange(n)).all():
        raise InvalidArgumentError(f"perm is not a permutation of [0, {n}); allowed: tf.linalg.lu's perm", op)


# ---- expm -----------------------------------------------------------------------------

@primitive("expm", "MatrixExponential", infer=_same_infer, dtypes=_dt.FLOATS)
def _EXPM(dev, x):
    *batch, n, _ = x._shape
    a = _work_copy(x)
    out = alloc(tuple(x._shape), a._dtype, dev)
    check(dev.backend.expm(a._dtype.code, _prod(batch), n, a._h, out._h), "expm")
    return _back(out, x._dtype)


@register("expm", "MatrixExponential")
def expm(input, name=None):
    """The matrix exponential sum_k input^k / k! of each square matrix (Higham's scaling and squaring with
    Pade approximants of degree 3 to 13, computed in float64).

    >>> import tapeflow as tf
    >>> tf.linalg.expm(tf.constant([[0.0, 1.0], [0.0, 0.0]])).numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return run(_EXPM, (_square(input, "MatrixExponential"),))


# ---- compositions -----------------------------------------------------------------------

@register("cholesky_solve", "CholeskySolve", kind="composite")
def cholesky_solve(chol, rhs, name=None):
    """X with A @ X = rhs from A's Cholesky factor ``chol`` (lower, tf.linalg.cholesky(A)): two triangular solves.

    >>> import tapeflow as tf
    >>> chol = tf.linalg.cholesky(tf.constant([[4.0, 2.0], [2.0, 5.0]]))
    >>> tf.linalg.cholesky_solve(chol, tf.constant([[6.0], [7.0]])).numpy().tolist()
    [[1.0], [1.0]]
    """
    op = "CholeskySolve"
    c = _square(chol, op, "chol")
    b = _matrix(rhs, op, "rhs")
    y = triangular_solve(c, b, lower=True)
    return triangular_solve(c, y, lower=True, adjoint=True)


def _eps_scale(x):
    """max(M, N) as a scalar of x's dtype: a Python number when known, else from tf.shape."""
    m, n = x._shape[-2:]
    if m is not None and n is not None:
        return float(max(m, n))
    return cast(reduce_max(shape(x)[-2:]), x._dtype)


def _eps(dtype):
    return float(np.finfo(_dt.float32.np if dtype in _ew._HALF else dtype.np).eps)


@register("pinv", "Pinv", kind="composite")
def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse from the SVD: v @ diag(1/s) @ u^T over the singular values above
    ``rcond * max(s)`` (default rcond: 10 * max(M, N) * eps), TensorFlow's formula.

    >>> import tapeflow as tf
    >>> tf.linalg.pinv(tf.constant([[2.0, 0.0], [0.0, 0.0]])).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    op = "Pinv"
    x = _float_matrix(a, op, "a")
    if rcond is None:
        sc = _eps_scale(x)
        rcond = 10.0 * _eps(x._dtype) * sc if isinstance(sc, float) else multiply(sc, 10.0 * _eps(x._dtype))
    elif isinstance(rcond, numbers.Real) and not isinstance(rcond, bool):
        if rcond < 0:
            raise InvalidArgumentError(f"rcond = {rcond}; allowed: a number >= 0", op)
        rcond = float(rcond)
    else:
        rcond = to_tensor(rcond, op, x._dtype)
    s, u, v = svd(x, full_matrices=False, compute_uv=True)
    cutoff = multiply(reduce_max(s, axis=-1, keepdims=True), rcond)
    keep = greater(s, cutoff)
    from .array_ops import where

    inv_s = where(keep, divide(ones_like(s), where(keep, s, ones_like(s))), zeros_like(s))
    return matmul(multiply(v, expand_dims(inv_s, -2)), u, transpose_b=True)


@register("matrix_rank", "MatrixRank", kind="composite")
def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above ``tol`` (default eps * max(M, N) * max(s)), as int32.

    >>> import tapeflow as tf
    >>> int(tf.linalg.matrix_rank(tf.constant([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    op = "MatrixRank"
    x = _float_matrix(a, op, "a")
    s = svd(x, compute_uv=False)
    if tol is None:
        sc = _eps_scale(x)
        tol = multiply(reduce_max(s, axis=-1, keepdims=True),
                       sc * _eps(x._dtype) if isinstance(sc, float) else multiply(sc, _eps(x._dtype)))
    elif isinstance(tol, numbers.Real) and not isinstance(tol, bool):
        tol = float(tol)
    else:
        tol = expand_dims(to_tensor(tol, op, x._dtype), -1)
    return reduce_sum(cast(greater(s, tol), _dt.int32), axis=-1)


@register("lstsq", "MatrixSolveLs", kind="composite")
def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least squares: X minimising ||matrix @ X - rhs||^2 + l2_regularizer * ||X||^2.

    ``fast=True`` (TensorFlow's default): the normal equations by Cholesky, (A^T A + l2 I) X = A^T b for
    M >= N and X = A^T (A A^T + l2 I)^-1 b for M < N; ``fast=False``: the minimum-norm solution through the
    SVD (pinv), which also handles rank-deficient matrices (l2_regularizer must then be 0, as TensorFlow's
    fast=False path has no regulariser).

    >>> import tapeflow as tf
    >>> a = tf.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> [[round(float(t), 4) for t in row] for row in tf.linalg.lstsq(a, tf.constant([[1.0], [2.0], [3.0]])).numpy()]
    [[1.0], [2.0]]
    """
    op = "MatrixSolveLs"
    a = _float_matrix(matrix, op, "matrix")
    b = _matrix(rhs, op, "rhs")
    if b._dtype is not a._dtype:
        _ew.dtype_mismatch(a, b, op)
    if b._shape[-2] != a._shape[-2] and None not in (b._shape[-2], a._shape[-2]):
        raise InvalidArgumentError(f"matrix has shape {tuple(a._shape)} and rhs {tuple(b._shape)}: rhs needs "
                                   f"{a._shape[-2]} rows; allowed: rhs of shape [..., {a._shape[-2]}, K]", op)
    if not isinstance(fast, (bool, np.bool_)):
        raise TypeError(f"fast is a {type(fast).__name__}; allowed: a bool [Op:{op}]")
    if not (isinstance(l2_regularizer, numbers.Real) and not isinstance(l2_regularizer, bool)):
        raise TypeError(f"l2_regularizer is a {type(l2_regularizer).__name__}; allowed: a number [Op:{op}]")
    if l2_regularizer < 0:
        raise InvalidArgumentError(f"l2_regularizer = {l2_regularizer}; allowed: >= 0", op)
    if not fast:
        if l2_regularizer != 0:
            raise InvalidArgumentError(f"l2_regularizer = {l2_regularizer} with fast=False; allowed: 0 (the "
                                       "regularised problem needs fast=True)", op)
        return matmul(pinv(a), b)
    m, n = a._shape[-2:]

    def gram(g):
        if l2_regularizer:
            eye = set_diag(zeros_like(g), multiply(ones_like(diag_part(g)), float(l2_regularizer)))
            g = add(g, eye)
        return cholesky(g)

    def tall():
        return cholesky_solve(gram(matmul(a, a, transpose_a=True)), matmul(a, b, transpose_a=True))

    def wide():
        return matmul(a, cholesky_solve(gram(matmul(a, a, transpose_b=True)), b), transpose_a=True)

    if m is None or n is None:  # traced with a side unknown: the equations are chosen when the graph runs
        from ..control_flow import cond
        from .math_ops import greater_equal

        sides = shape(a)
        return cond(greater_equal(sides[-2], sides[-1]), tall, wide)
    return tall() if m >= n else wide()


@register("set_diag", "MatrixSetDiagV3", kind="composite")
def set_diag(input, diagonal, name=None, k=0, align="RIGHT_LEFT"):
    """input with its k-th diagonal replaced by ``diagonal`` (batched; one diagonal, so ``align`` changes
    nothing but is checked).

    >>> import tapeflow as tf
    >>> tf.linalg.set_diag(tf.zeros([2, 3]), tf.constant([1.0, 2.0])).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    """
    op = "MatrixSetDiagV3"
    x = _matrix(input, op)
    from ..dispatch import int_arg

    k = int_arg(k, op, "k")
    if align not in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        raise InvalidArgumentError(f"align = {align!r}; allowed: 'RIGHT_LEFT', 'LEFT_RIGHT', 'LEFT_LEFT', "
                                   "'RIGHT_RIGHT'", op)
    d = diagonal if type(diagonal) is Tensor else to_tensor(diagonal, op, x._dtype)
    if d._dtype is not x._dtype:
        _ew.dtype_mismatch(x, d, op)
    m, n = x._shape[-2:]
    want = tuple(x._shape[:-2]) + ((max(0, min(m, n - k) if k >= 0 else min(m + k, n)),)
                                   if None not in (m, n) else (None,))
    if len(d._shape) != len(want) or any(a is not None and b is not None and a != b
                                         for a, b in zip(d._shape, want)):
        raise InvalidArgumentError(f"diagonal has shape {tuple(d._shape)} for input {tuple(x._shape)} at k = {k}; "
                                   f"allowed: {want}", op)
    from .array_ops import where

    rows, cols = (m if m is not None else -1), (n if n is not None else -1)
    mask = diag(ones_like(d, _dt.bool_), k=k, num_rows=rows, num_cols=cols, padding_value=False)
    return where(mask, diag(d, k=k, num_rows=rows, num_cols=cols), x)


__all__ = ["cholesky_solve", "eigh", "eigvalsh", "expm", "lstsq", "lu", "lu_solve", "matrix_rank", "pinv", "qr",
           "set_diag", "svd"]
