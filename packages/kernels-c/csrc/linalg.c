/* Dense linear algebra through LAPACK (float32/float64, row-major, batched): LU, solve,
 * inverse, determinant, Cholesky, triangular solve (gpu/linalg.cl on the device).
 *
 * Factorisations work in place on a copy the caller owns.  Pivots and per-matrix
 * `info` are int32 (LAPACK's 1-based pivots; info > 0 flags a singular U or a matrix
 * that is not positive definite); the op decides what a bad info means. */
#include "tpf.h"
#include <cblas.h>     /* triangular solves */
#include <lapacke.h>

static int la_dtype(int dt) { return dt == TPF_F32 || dt == TPF_F64; }

/* NaN in, NaN out (TensorFlow's result, and the same on every backend): a matrix with a
 * NaN (in its lower triangle, for Cholesky) factors to NaN, with identity pivots and info
 * 0, rather than reaching LAPACKE, whose NaN check would reject it as a bad argument. */
static int la_has_nan(int dt, const void *a, int64_t n, int lower_only) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < (lower_only ? i + 1 : n); j++) {
            double v = dt == TPF_F32 ? (double)((const float *)a)[i * n + j] : ((const double *)a)[i * n + j];
            if (v != v) return 1;
        }
    return 0;
}
static void la_fill_nan(int dt, void *a, int64_t n, int lower_only) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = lower_only && j > i ? 0.0 : NAN;
            if (dt == TPF_F32) ((float *)a)[i * n + j] = (float)v;
            else ((double *)a)[i * n + j] = v;
        }
}
static int la_size_ok(int64_t batch, int64_t n, int64_t k) {
    return batch >= 0 && n >= 0 && k >= 0 && n <= INT32_MAX && k <= INT32_MAX;
}

int tpf_lu(int dt, int64_t batch, int64_t n, void *a, void *pivv, void *infov) {
    if (!la_dtype(dt)) return TPF_EBADDTYPE;
    if (!la_size_ok(batch, n, 0)) return TPF_EBADSIZE;
    int32_t *piv = pivv, *info = infov;
    size_t es = tpf_dtype_size(dt);
    tpf_fp_enter();
    for (int64_t b = 0; b < batch; b++) {
        char *A = (char *)a + (size_t)(b * n * n) * es;
        int32_t *P = piv + b * n;
        if (n == 0) { info[b] = 0; continue; }
        if (la_has_nan(dt, A, n, 0)) {
            la_fill_nan(dt, A, n, 0);
            for (int64_t i = 0; i < n; i++) P[i] = (int32_t)(i + 1);
            info[b] = 0;
            continue;
        }
        info[b] = dt == TPF_F32 ? scipy_LAPACKE_sgetrf(LAPACK_ROW_MAJOR, (int)n, (int)n, (float *)A, (int)n, P)
                                : scipy_LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (int)n, (int)n, (double *)A, (int)n, P);
        if (info[b] < 0) return TPF_EBADARG;
    }
    return TPF_OK;
}

int tpf_lu_solve(int dt, int trans, int64_t batch, int64_t n, int64_t nrhs, const void *lu, const void *pivv,
                 void *bm) {
    if (!la_dtype(dt)) return TPF_EBADDTYPE;
    if (!la_size_ok(batch, n, nrhs)) return TPF_EBADSIZE;
    if (n == 0 || nrhs == 0) return TPF_OK;
    const int32_t *piv = pivv;
    size_t es = tpf_dtype_size(dt);
    char t = trans ? 'T' : 'N';
    tpf_fp_enter();
    for (int64_t b = 0; b < batch; b++) {
        const char *A = (const char *)lu + (size_t)(b * n * n) * es;
        char *B = (char *)bm + (size_t)(b * n * nrhs) * es;
        /* the _work form skips LAPACKE's NaN check: NaN in the factors or in B propagates */
        int st = dt == TPF_F32
            ? scipy_LAPACKE_sgetrs_work(LAPACK_ROW_MAJOR, t, (int)n, (int)nrhs, (const float *)A, (int)n,
                                        piv + b * n, (float *)B, (int)nrhs)
            : scipy_LAPACKE_dgetrs_work(LAPACK_ROW_MAJOR, t, (int)n, (int)nrhs, (const double *)A, (int)n,
                                        piv + b * n, (double *)B, (int)nrhs);
        if (st) return TPF_EBADARG;
    }
    return TPF_OK;
}

int tpf_lu_inverse(int dt, int64_t batch, int64_t n, void *lu, const void *pivv) {
    if (!la_dtype(dt)) return TPF_EBADDTYPE;
    if (!la_size_ok(batch, n, 0)) return TPF_EBADSIZE;
    if (n == 0) return TPF_OK;
    const int32_t *piv = pivv;
    size_t es = tpf_dtype_size(dt);
    tpf_fp_enter();
    for (int64_t b = 0; b < batch; b++) {
        char *A = (char *)lu + (size_t)(b * n * n) * es;
        if (la_has_nan(dt, A, n, 0)) { la_fill_nan(dt, A, n, 0); continue; }
        int st = dt == TPF_F32 ? scipy_LAPACKE_sgetri(LAPACK_ROW_MAJOR, (int)n, (float *)A, (int)n, piv + b * n)
                               : scipy_LAPACKE_dgetri(LAPACK_ROW_MAJOR, (int)n, (double *)A, (int)n, piv + b * n);
        if (st < 0) return TPF_EBADARG;
        if (st > 0) return TPF_ERANGE;   /* singular */
    }
    return TPF_OK;
}

/* det = sign * prod(diag U): include/scalar_math.h's TPF_LU_DET, batch by batch */
#define LU_DET(T)                                                                           \
static void lu_det_##T(int64_t batch, int64_t n, const T *lu, const int32_t *piv, T *det, T *sign, T *logabs) { \
    for (int64_t b = 0; b < batch; b++)                                                     \
        TPF_LU_DET(lu + b * n * n, piv + b * n, n, T, det[b], sign[b], logabs[b]);          \
}
LU_DET(float) LU_DET(double)

int tpf_lu_det(int dt, int64_t batch, int64_t n, const void *lu, const void *piv, void *det, void *sign,
               void *logabs) {
    if (!la_dtype(dt)) return TPF_EBADDTYPE;
    if (!la_size_ok(batch, n, 0)) return TPF_EBADSIZE;
    tpf_fp_enter();
    if (dt == TPF_F32) lu_det_float(batch, n, lu, piv, det, sign, logabs);
    else lu_det_double(batch, n, lu, piv, det, sign, logabs);
    return TPF_OK;
}

/* Lower Cholesky factor in place (the strict upper triangle is zeroed). */
int tpf_cholesky(int dt, int64_t batch, int64_t n, void *a, void *infov) {
    if (!la_dtype(dt)) return TPF_EBADDTYPE;
    if (!la_size_ok(batch, n, 0)) return TPF_EBADSIZE;
    int32_t *info = infov;
    size_t es = tpf_dtype_size(dt);
    tpf_fp_enter();
    for (int64_t b = 0; b < batch; b++) {
        char *A = (char *)a + (size_t)(b * n * n) * es;
        if (n == 0) { info[b] = 0; continue; }
        if (la_has_nan(dt, A, n, 1)) { la_fill_nan(dt, A, n, 1); info[b] = 0; continue; }
        info[b] = dt == TPF_F32 ? scipy_LAPACKE_spotrf(LAPACK_ROW_MAJOR, 'L', (int)n, (float *)A, (int)n)
                                : scipy_LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (int)n, (double *)A, (int)n);
        if (info[b] < 0) return TPF_EBADARG;
        for (int64_t i = 0; i < n; i++)
            memset(A + (size_t)(i * n + i + 1) * es, 0, (size_t)(n - i - 1) * es);
    }
    return TPF_OK;
}

/* B := op(A)^-1 B for triangular A (lower or upper, op = transpose when trans); a batch
 * stride of 0 shares one A across the batch. */
int tpf_triangular_solve(int dt, int lower, int trans, int64_t batch, int64_t n, int64_t nrhs, const void *a,
                         int64_t a_bstride, void *bm) {
    if (!la_dtype(dt)) return TPF_EBADDTYPE;
    if (!la_size_ok(batch, n, nrhs)) return TPF_EBADSIZE;
    if (n == 0 || nrhs == 0) return TPF_OK;
    size_t es = tpf_dtype_size(dt);
    enum CBLAS_UPLO U = lower ? CblasLower : CblasUpper;
    enum CBLAS_TRANSPOSE T = trans ? CblasTrans : CblasNoTrans;
    tpf_fp_enter();
    for (int64_t b = 0; b < batch; b++) {
        const char *A = (const char *)a + (size_t)(b * a_bstride) * es;
        char *B = (char *)bm + (size_t)(b * n * nrhs) * es;
        if (dt == TPF_F32)
            scipy_cblas_strsm(CblasRowMajor, CblasLeft, U, T, CblasNonUnit, (int)n, (int)nrhs, 1.0f,
                              (const float *)A, (int)n, (float *)B, (int)nrhs);
        else
            scipy_cblas_dtrsm(CblasRowMajor, CblasLeft, U, T, CblasNonUnit, (int)n, (int)nrhs, 1.0,
                              (const double *)A, (int)n, (double *)B, (int)nrhs);
    }
    return TPF_OK;
}
