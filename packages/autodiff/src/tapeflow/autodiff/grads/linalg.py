"""Gradients of the LAPACK decompositions (``tapeflow.core.ops.linalg_lapack_ops``): svd, eigh,
qr and lu as TensorFlow's linalg_grad.py writes them, expm by the block-matrix identity
d expm(A)[G] = expm([[A^T, G], [0, A^T]])[:n, n:].  eigvalsh, lstsq, pinv, cholesky_solve,
lu_solve and matrix_rank are compositions: the tape records what they call.

Written with tapeflow ops only, so they differentiate again.
"""
from __future__ import annotations

from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.ops import (
    add,
    argsort,
    band_part,
    concat,
    diag,
    diag_part,
    expand_dims,
    expm,
    gather,
    matmul,
    matrix_transpose,
    multiply,
    ones_like,
    reciprocal,
    set_diag,
    square,
    subtract,
    svd,
    triangular_solve,
    zeros_like,
)

from ..registry import defgrad


def _safe_reciprocal(x, eps=1e-20):
    # TensorFlow's _SafeReciprocal: x / (x^2 + eps), 0 where x is 0
    return multiply(x, reciprocal(add(square(x), eps)))


def _off_diagonal_inverse_gaps(e):
    """f[..., i, j] = 1 / (e_j - e_i) off the diagonal, 0 on it."""
    f = _safe_reciprocal(subtract(expand_dims(e, -2), expand_dims(e, -1)))
    return set_diag(f, zeros_like(e))


@defgrad("svd")
def _svd_grad(g, ans, a, full_matrices, compute_uv):
    if not compute_uv:
        _, u, v = svd(a, compute_uv=True)
        return (matmul(u, matmul(diag(g), v, transpose_b=True)),)
    gs, gu, gv = g
    s, u, v = ans
    m, n = a._shape[-2:]
    if full_matrices and m != n:
        raise InvalidArgumentError(f"the gradient of svd with full_matrices=True needs square matrices, got "
                                   f"{tuple(a._shape)} (the extra singular vectors are not unique; TensorFlow has "
                                   "no gradient there either); allowed: full_matrices=False", "Svd")
    adjoint = m > n
    if adjoint:   # the gradient of A^T = V S U^T, transposed at the end
        m, n = n, m
        u, v, gu, gv = v, u, gv, gu
    f = _off_diagonal_inverse_gaps(square(s))
    s_mat = diag(s)
    u_gu = matmul(u, gu, transpose_a=True)
    v_gv = matmul(v, gv, transpose_a=True)
    f_u = multiply(f, u_gu)
    f_v = multiply(f, v_gv)
    inner = add(add(diag(gs), matmul(add(f_u, matrix_transpose(f_u)), s_mat)),
                matmul(s_mat, add(f_v, matrix_transpose(f_v))))
    grad = matmul(u, matmul(inner, v, transpose_b=True))
    if m != n:
        gvt = matrix_transpose(gv)
        term2 = subtract(gvt, matmul(matmul(gvt, v), v, transpose_b=True))
        grad = add(grad, matmul(matmul(u, diag(_safe_reciprocal(s))), term2))
    return (matrix_transpose(grad) if adjoint else grad,)


@defgrad("eigh")
def _eigh_grad(g, ans, a):
    ge, gv = g
    e, v = ans
    f = _off_diagonal_inverse_gaps(e)
    grad = matmul(v, matmul(add(diag(ge), multiply(f, matmul(v, gv, transpose_a=True))), v, transpose_b=True))
    # only the lower triangle is read: symmetrise onto it, the diagonal counted once
    grad = band_part(add(grad, matrix_transpose(grad)), -1, 0)
    return (set_diag(grad, multiply(diag_part(grad), 0.5)),)


def _solve_right_upper_t(x, r):
    """x @ inv(r)^T for upper-triangular r."""
    return matrix_transpose(triangular_solve(r, matrix_transpose(x), lower=False))


def _qr_grad_deep(q, r, dq, dr):
    qdq = matmul(q, dq, transpose_a=True)
    qdq_ = subtract(qdq, matrix_transpose(qdq))
    rdr = matmul(r, dr, transpose_b=True)
    rdr_ = subtract(rdr, matrix_transpose(rdr))
    tril = band_part(add(qdq_, rdr_), -1, 0)
    grad_a = matmul(q, add(dr, _solve_right_upper_t(tril, r)))
    grad_b = _solve_right_upper_t(subtract(dq, matmul(q, qdq)), r)
    return add(grad_a, grad_b)


@defgrad("qr")
def _qr_grad(g, ans, a, full_matrices):
    dq, dr = g
    q, r = ans
    m, n = a._shape[-2:]
    if full_matrices and m > n:
        raise InvalidArgumentError(f"the gradient of qr with full_matrices=True needs M <= N, got {tuple(a._shape)} "
                                   "(the extra columns of q are not unique; TensorFlow has no gradient there "
                                   "either); allowed: full_matrices=False", "Qr")
    if m >= n:
        return (_qr_grad_deep(q, r, dq, dr),)
    # wide: a = [x | y] with x = q u square, r = [u | v]; TensorFlow's reduction to the square case
    y, u, dv = a[..., :, m:], r[..., :, :m], dr[..., :, m:]
    dy = matmul(q, dv)
    dx = _qr_grad_deep(q, u, add(dq, matmul(y, dv, transpose_b=True)), dr[..., :, :m])
    return (concat([dx, dy], axis=-1),)


@defgrad("lu")
def _lu_grad(g, ans, a, output_idx_type):
    glu = g[0]
    lu, perm = ans
    lower = set_diag(band_part(lu, -1, 0), ones_like(diag_part(lu)))
    upper = band_part(lu, 0, -1)
    l_grad = set_diag(band_part(glu, -1, 0), zeros_like(diag_part(glu)))
    u_grad = band_part(glu, 0, -1)
    l_h_l_grad = matmul(lower, l_grad, transpose_a=True)
    u_grad_u_h = matmul(u_grad, upper, transpose_b=True)
    middle = add(set_diag(band_part(l_h_l_grad, -1, 0), zeros_like(diag_part(l_h_l_grad))),
                 band_part(u_grad_u_h, 0, -1))
    # grad_a = P^T L^-T middle U^-T
    x = triangular_solve(lower, middle, lower=True, adjoint=True)
    x = matrix_transpose(triangular_solve(upper, matrix_transpose(x), lower=False))
    nb = len(a._shape) - 2
    # rows back in a's order: the inverse permutation (argsort of a permutation), batched
    return (gather(x, argsort(perm, axis=-1), axis=nb, batch_dims=nb),)


@defgrad("expm")
def _expm_grad(g, ans, a):
    at = matrix_transpose(a)
    top = concat([at, g], axis=-1)
    bottom = concat([zeros_like(at), at], axis=-1)
    n = a._shape[-1]
    big = expm(concat([top, bottom], axis=-2))
    return (big[..., :n, n:],)
