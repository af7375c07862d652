"""tf.linalg from LAPACK: svd, eigh/eigvalsh, qr, lu/lu_solve, expm, lstsq, pinv, cholesky_solve,
matrix_rank, set_diag and norm's spectral orders: TensorFlow's conventions, batching, dtypes, NaN,
bad input.  Values and gradients against NumPy are in the spec walk (tests/specs/linalg_lapack.py);
gradients against TensorFlow in packages/autodiff/tests/test_linalg_lapack_grads.py."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
InvalidArgumentError = tf.errors.InvalidArgumentError

RNG = np.random.default_rng(1234)
A = RNG.uniform(-1, 1, (2, 4, 3))     # tall, batched
W = RNG.uniform(-1, 1, (3, 5))        # wide
S = RNG.uniform(-1, 1, (2, 3, 3))     # square, batched


def _t(x):
    return np.swapaxes(x, -1, -2)


# ---- conventions ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x", [A, W, S], ids=["tall", "wide", "square"])
def test_svd_returns_s_u_v_with_v_untransposed(x, dtype):
    s, u, v = tf.linalg.svd(tf.constant(x.astype(dtype)))
    k = min(x.shape[-2:])
    assert s.shape == x.shape[:-2] + (k,) and u.shape == x.shape[:-1] + (k,)
    assert v.shape == x.shape[:-2] + (x.shape[-1], k)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose((u.numpy() * s.numpy()[..., None, :]) @ _t(v.numpy()), x, atol=tol * 10)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(x, compute_uv=False), rtol=tol * 10, atol=tol)
    assert (np.diff(s.numpy(), axis=-1) <= 0).all()   # descending


def test_svd_full_matrices_gives_square_orthogonal_factors():
    s, u, v = tf.linalg.svd(tf.constant(A), full_matrices=True)
    assert u.shape == (2, 4, 4) and v.shape == (2, 3, 3)
    np.testing.assert_allclose(u.numpy() @ _t(u.numpy()), np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-12)
    assert tf.linalg.svd(tf.constant(A), compute_uv=False).shape == (2, 3)


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16])
def test_half_types_compute_in_float32_and_return_their_dtype(dtype):
    x = tf.cast(tf.constant(S), dtype)
    s, u, v = tf.linalg.svd(x)
    assert s.dtype == u.dtype == v.dtype == dtype
    exact = np.linalg.svd(tf.cast(x, tf.float64).numpy(), compute_uv=False)
    np.testing.assert_allclose(tf.cast(s, tf.float64).numpy(), exact, rtol=2e-2, atol=2e-2)
    e, _ = tf.linalg.eigh(x)
    assert e.dtype == dtype and tf.linalg.expm(x).dtype == dtype and tf.linalg.qr(x)[0].dtype == dtype


def test_eigh_reads_the_lower_triangle_and_sorts_ascending():
    lower = np.tril(S) + _t(np.tril(S, -1))
    e, v = tf.linalg.eigh(tf.constant(S))   # the strict upper triangle of S is ignored
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(lower), atol=1e-12)
    np.testing.assert_allclose(v.numpy() @ (e.numpy()[..., None] * _t(v.numpy())), lower, atol=1e-12)
    np.testing.assert_allclose(tf.linalg.eigvalsh(tf.constant(S)).numpy(), e.numpy(), atol=0)


def test_qr_is_lapack_householder_like_tensorflow():
    for x, full in ((A, False), (A, True), (W, False), (W, True)):
        q, r = tf.linalg.qr(tf.constant(x), full_matrices=full)
        qn, rn = np.linalg.qr(x, mode="complete" if full else "reduced")
        np.testing.assert_allclose(q.numpy(), qn, atol=1e-12)
        np.testing.assert_allclose(r.numpy(), rn, atol=1e-12)


def test_lu_packs_l_and_u_and_gives_the_row_permutation():
    a = np.array([[4.0, 3.0, 1.0], [6.0, 3.0, 2.0], [1.0, 5.0, 7.0]], np.float32)
    lu, p = tf.linalg.lu(tf.constant(a))
    assert p.dtype == tf.int32 and p.numpy().tolist() == [1, 2, 0]   # TensorFlow's answer for this matrix
    lu = lu.numpy()
    np.testing.assert_allclose((np.tril(lu, -1) + np.eye(3)) @ np.triu(lu), a[p.numpy()], rtol=1e-6)
    _, p64 = tf.linalg.lu(tf.constant(S), output_idx_type=tf.int64)
    assert p64.dtype == tf.int64 and p64.shape == (2, 3)
    x = tf.linalg.lu_solve(*tf.linalg.lu(tf.constant(S)), tf.constant(A[:, :3, :]))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(S, A[:, :3, :]), atol=1e-12)


def test_expm_squares_large_matrices_and_matches_the_series():
    def series(m):
        s = 8
        m = m / 2.0 ** s
        term = total = np.eye(len(m))
        for k in range(1, 40):
            term = term @ m / k
            total = total + term
        for _ in range(s):
            total = total @ total
        return total

    for scale in (1e-3, 0.3, 2.0, 20.0):   # Pade 3 up to 13 with squarings
        got = tf.linalg.expm(tf.constant(S * scale)).numpy()
        want = np.stack([series(m) for m in S * scale])
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tf.linalg.expm(tf.constant(S.astype(np.float32))).numpy(),
                               np.stack([series(m) for m in S]), rtol=1e-5)


def test_lstsq_fast_and_min_norm():
    b = RNG.uniform(-1, 1, (2, 4, 2))
    want = np.linalg.lstsq(A[0], b[0], rcond=None)[0]
    np.testing.assert_allclose(tf.linalg.lstsq(tf.constant(A), tf.constant(b)).numpy()[0], want, atol=1e-10)
    np.testing.assert_allclose(tf.linalg.lstsq(tf.constant(A), tf.constant(b), fast=False).numpy()[0], want,
                               atol=1e-10)
    ridge = np.linalg.solve(_t(A[0]) @ A[0] + 0.5 * np.eye(3), _t(A[0]) @ b[0])
    np.testing.assert_allclose(tf.linalg.lstsq(tf.constant(A), tf.constant(b), l2_regularizer=0.5).numpy()[0],
                               ridge, atol=1e-10)
    deficient = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])   # rank 1: fast=False gives the min-norm answer
    rhs = np.array([[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(tf.linalg.lstsq(tf.constant(deficient), tf.constant(rhs), fast=False).numpy(),
                               np.linalg.pinv(deficient) @ rhs, atol=1e-12)


def test_pinv_rank_and_spectral_norms():
    deficient = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(tf.linalg.pinv(tf.constant(deficient)).numpy(), np.linalg.pinv(deficient),
                               atol=1e-12)
    r = tf.linalg.matrix_rank(tf.constant(np.stack([deficient, np.eye(2)])))
    assert r.dtype == tf.int32 and r.numpy().tolist() == [1, 2]
    assert int(tf.linalg.matrix_rank(tf.constant(deficient), tol=100.0)) == 0
    np.testing.assert_allclose(tf.norm(tf.constant(A), ord=2, axis=[-2, -1]).numpy(),
                               np.linalg.norm(A, 2, axis=(-2, -1)), rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.norm(tf.constant(A), ord="nuc", axis=[1, 2]).numpy(),
                               np.linalg.norm(A, "nuc", axis=(1, 2)), rtol=1e-12)


def test_set_diag_and_cholesky_solve():
    x = tf.linalg.set_diag(tf.constant(A), tf.constant(np.ones((2, 3))))
    want = A.copy()
    want[:, [0, 1, 2], [0, 1, 2]] = 1.0
    np.testing.assert_array_equal(x.numpy(), want)
    inf = tf.linalg.set_diag(tf.constant([[np.inf, 1.0], [2.0, np.nan]]), tf.constant([5.0, 6.0]))
    assert inf.numpy().tolist() == [[5.0, 1.0], [2.0, 6.0]]   # the old diagonal is replaced, not subtracted
    spd = S @ _t(S) + 3 * np.eye(3)
    got = tf.linalg.cholesky_solve(tf.linalg.cholesky(tf.constant(spd)), tf.constant(A[:, :3, :]))
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(spd, A[:, :3, :]), atol=1e-12)


def test_nan_in_nan_out():
    x = S.copy()
    x[1, 2, 0] = np.nan
    s = tf.linalg.svd(tf.constant(x), compute_uv=False).numpy()
    assert np.isfinite(s[0]).all() and np.isnan(s[1]).all()
    assert np.isnan(tf.linalg.eigh(tf.constant(x))[0].numpy()[1]).all()
    assert np.isnan(tf.linalg.expm(tf.constant(x)).numpy()[1]).all()
    assert np.isnan(tf.linalg.qr(tf.constant(x))[1].numpy()[1]).all()


def test_size_zero_batches_and_matrices():
    assert tf.linalg.svd(tf.zeros([0, 3, 2]))[1].shape == (0, 3, 2)
    s, u, v = tf.linalg.svd(tf.zeros([2, 0]), full_matrices=True)
    assert s.shape == (0,) and u.shape == (2, 2) and v.shape == (0, 0)
    assert tf.linalg.expm(tf.zeros([0, 0])).shape == (0, 0)
    assert tf.linalg.qr(tf.zeros([3, 0]))[0].shape == (3, 0)


# ---- bad input -------------------------------------------------------------------------------

SQUARE_ONLY = {
    "eigh": (lambda x: tf.linalg.eigh(x), "SelfAdjointEigV2"),
    "eigvalsh": (lambda x: tf.linalg.eigvalsh(x), "SelfAdjointEigV2"),
    "lu": (lambda x: tf.linalg.lu(x), "Lu"),
    "expm": (lambda x: tf.linalg.expm(x), "MatrixExponential"),
    "cholesky_solve": (lambda x: tf.linalg.cholesky_solve(x, tf.ones([2, 1], x.dtype)), "CholeskySolve"),
    "lu_solve": (lambda x: tf.linalg.lu_solve(x, tf.constant([0, 1]), tf.ones([2, 1], x.dtype)), "LuSolve"),
}
ANY_MATRIX = {
    "svd": (lambda x: tf.linalg.svd(x), "Svd"),
    "qr": (lambda x: tf.linalg.qr(x), "Qr"),
    "pinv": (lambda x: tf.linalg.pinv(x), "Pinv"),
    "matrix_rank": (lambda x: tf.linalg.matrix_rank(x), "MatrixRank"),
    "lstsq": (lambda x: tf.linalg.lstsq(x, tf.ones([2, 1], x.dtype)), "MatrixSolveLs"),
    **SQUARE_ONLY,
}


@pytest.mark.parametrize("name", sorted(SQUARE_ONLY))
def test_non_square_is_refused_naming_the_op(name):
    fn, op = SQUARE_ONLY[name]
    with pytest.raises(InvalidArgumentError, match=rf"square matrices.*\[Op:{op}\]"):
        fn(tf.ones([2, 3]))


@pytest.mark.parametrize("name", sorted(ANY_MATRIX))
def test_wrong_rank_is_refused_naming_the_op(name):
    fn, op = ANY_MATRIX[name]
    with pytest.raises(InvalidArgumentError, match=rf"rank >= 2.*\[Op:{op}\]"):
        fn(tf.ones([3]))


@pytest.mark.parametrize("name", sorted(ANY_MATRIX))
def test_integer_dtype_is_refused_naming_the_op(name):
    fn, op = ANY_MATRIX[name]
    with pytest.raises(InvalidArgumentError, match=rf"int32; allowed: .*float.*\[Op:{op}\]"):
        fn(tf.ones([2, 2], tf.int32))


def test_bad_arguments_are_refused_naming_the_op():
    x = tf.constant(S)
    with pytest.raises(TypeError, match=r"full_matrices.*\[Op:Svd\]"):
        tf.linalg.svd(x, full_matrices="yes")
    with pytest.raises(InvalidArgumentError, match=r"output_idx_type.*\[Op:Lu\]"):
        tf.linalg.lu(x, output_idx_type=tf.float32)
    with pytest.raises(InvalidArgumentError, match=r"l2_regularizer.*fast=False.*\[Op:MatrixSolveLs\]"):
        tf.linalg.lstsq(x, x, l2_regularizer=0.1, fast=False)
    with pytest.raises(InvalidArgumentError, match=r"rhs needs 4 rows.*\[Op:MatrixSolveLs\]"):
        tf.linalg.lstsq(tf.constant(A), x)
    with pytest.raises(InvalidArgumentError, match=r"perm has dtype float32.*\[Op:LuSolve\]"):
        tf.linalg.lu_solve(x, tf.zeros([2, 3]), x)
    with pytest.raises(InvalidArgumentError, match=r"not a permutation.*\[Op:LuSolve\]"):
        tf.linalg.lu_solve(x, tf.zeros([2, 3], tf.int32), x, validate_args=True)
    with pytest.raises(InvalidArgumentError, match=r"diagonal has shape.*\[Op:MatrixSetDiagV3\]"):
        tf.linalg.set_diag(x, tf.ones([2, 2], x.dtype))
    with pytest.raises(InvalidArgumentError, match=r"align.*\[Op:MatrixSetDiagV3\]"):
        tf.linalg.set_diag(x, tf.ones([2, 3], x.dtype), align="UP")
    with pytest.raises(InvalidArgumentError, match=r"ord = 3 for a matrix norm.*\[Op:Norm\]"):
        tf.norm(x, ord=3, axis=[-2, -1])


def test_kernels_check_their_arguments():
    from tapeflow.kernels import _cpu

    ffi, lib = _cpu.ffi, _cpu.lib
    piv = np.array([0, 1], np.int32)   # LAPACK pivots are 1-based: 0 is out of range
    perm = np.zeros(2, np.int32)
    assert lib.tpf_lu_perm(1, 2, ffi.from_buffer(piv), ffi.from_buffer(perm), 7) == 7   # TPF_EBADARG
    a = np.zeros(4, np.int32)
    assert lib.tpf_expm(7, 1, 2, ffi.from_buffer(a), ffi.from_buffer(a)) == 2         # int32: TPF_EBADDTYPE
    assert lib.tpf_qr(2, 1, -1, 2, ffi.NULL, ffi.NULL, ffi.NULL, 0) == 1               # TPF_EBADSIZE
    assert lib.tpf_svd(7, 1, 2, 2, ffi.NULL, ffi.NULL, ffi.NULL, ffi.NULL, 0, 0, ffi.NULL) == 2         # TPF_EBADDTYPE
