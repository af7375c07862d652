/* Decompositions through LAPACK (float32/float64, row-major, batched): SVD (gesdd),
 * symmetric eigendecomposition (syevd), QR (geqrf + orgqr), LU pivots as a row
 * permutation, and the matrix exponential (Higham's scaling and squaring with Pade
 * approximants, computed in float64).  gpu_entries_nn.py runs the same functions on
 * the host for the device backends.
 *
 * Inputs are work copies the caller owns (they are overwritten).  A matrix with a NaN
 * gives NaN outputs (TensorFlow's result) rather than reaching LAPACKE, whose NaN
 * check would reject it as a bad argument.  `info` is int32 per matrix: > 0 when the
 * LAPACK iteration did not converge (the op decides what that means). */
#include "tpf.h"
#include <stdlib.h>
#include <cblas.h>
#include <lapacke.h>

static int lp_dtype(int dt) { return dt == TPF_F32 || dt == TPF_F64; }

static int lp_size_ok(int64_t batch, int64_t m, int64_t n) {
    return batch >= 0 && m >= 0 && n >= 0 && m <= INT32_MAX && n <= INT32_MAX && (m * n) <= INT32_MAX;
}

#define LP_FUNCS(T, P)                                                                          \
static int lp_nan_##P(const T *a, int64_t count) {                                              \
    for (int64_t i = 0; i < count; i++)                                                         \
        if (a[i] != a[i]) return 1;                                                             \
    return 0;                                                                                   \
}                                                                                               \
static void lp_fill_##P(T *a, int64_t count, T v) {                                             \
    for (int64_t i = 0; i < count; i++) a[i] = v;                                               \
}                                                                                               \
static void lp_eye_##P(T *a, int64_t rows, int64_t cols) {                                      \
    lp_fill_##P(a, rows * cols, (T)0);                                                          \
    for (int64_t i = 0; i < rows && i < cols; i++) a[i * cols + i] = (T)1;                      \
}                                                                                               \
/* one m x n matrix: s (k), u (m x uc), v (n x vr) = vt^T; uc = vr = m, n (full) or k */        \
static int svd_one_##P(int64_t m, int64_t n, T *A, T *s, T *u, T *v, int full, int uv, T *vt,  \
                       int32_t *info) {                                                         \
    int64_t k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;                            \
    *info = 0;                                                                                  \
    if (lp_nan_##P(A, m * n)) {                                                                 \
        lp_fill_##P(s, k, (T)NAN);                                                              \
        if (uv) { lp_fill_##P(u, m * uc, (T)NAN); lp_fill_##P(v, n * vr, (T)NAN); }            \
        return TPF_OK;                                                                          \
    }                                                                                           \
    if (k == 0) {                                                                               \
        if (uv) { lp_eye_##P(u, m, uc); lp_eye_##P(v, n, vr); }                                 \
        return TPF_OK;                                                                          \
    }                                                                                           \
    char job = !uv ? 'N' : full ? 'A' : 'S';                                                    \
    lapack_int st = scipy_LAPACKE_##P##gesdd(LAPACK_ROW_MAJOR, job, (int)m, (int)n, A, (int)n, s,     \
                                       uv ? u : NULL, uv ? (int)uc : 1, uv ? vt : NULL, (int)n);  \
    if (st < 0) return TPF_EBADARG;                                                             \
    *info = (int32_t)st;                                                                        \
    if (uv)                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                         \
            for (int64_t j = 0; j < vr; j++) v[i * vr + j] = vt[j * n + i];                     \
    return TPF_OK;                                                                              \
}                                                                                               \
static int qr_one_##P(int64_t m, int64_t n, T *A, T *q, T *r, int full, T *tau) {              \
    int64_t k = m < n ? m : n, qc = full ? m : k, rr = full ? m : k;                            \
    if (lp_nan_##P(A, m * n)) {                                                                 \
        lp_fill_##P(q, m * qc, (T)NAN);                                                         \
        lp_fill_##P(r, rr * n, (T)NAN);                                                         \
        return TPF_OK;                                                                          \
    }                                                                                           \
    if (k > 0 && scipy_LAPACKE_##P##geqrf(LAPACK_ROW_MAJOR, (int)m, (int)n, A, (int)n, tau) < 0)      \
        return TPF_EBADARG;                                                                     \
    for (int64_t i = 0; i < rr; i++)                                                            \
        for (int64_t j = 0; j < n; j++) r[i * n + j] = j >= i ? A[i * n + j] : (T)0;            \
    if (k == 0) { lp_eye_##P(q, m, qc); return TPF_OK; }                                        \
    for (int64_t i = 0; i < m; i++)                                                             \
        for (int64_t j = 0; j < qc; j++) q[i * qc + j] = j < n ? A[i * n + j] : (T)0;           \
    if (scipy_LAPACKE_##P##orgqr(LAPACK_ROW_MAJOR, (int)m, (int)qc, (int)k, q, (int)qc, tau) < 0)     \
        return TPF_EBADARG;                                                                     \
    return TPF_OK;                                                                              \
}

LP_FUNCS(float, s)
LP_FUNCS(double, d)

/* s (batch x k), u (batch x m x uc), v (batch x n x vr); u and v untouched unless compute_uv */
int tpf_svd(int dt, int64_t batch, int64_t m, int64_t n, void *a, void *s, void *u, void *v, int full_matrices,
            int compute_uv, void *infov) {
    if (!lp_dtype(dt)) return TPF_EBADDTYPE;
    if (!lp_size_ok(batch, m, n)) return TPF_EBADSIZE;
    int32_t *info = infov;
    int64_t k = m < n ? m : n, uc = full_matrices ? m : k, vr = full_matrices ? n : k;
    size_t es = tpf_dtype_size(dt);
    void *vt = compute_uv && vr * n > 0 ? malloc((size_t)(vr * n) * es) : NULL;
    if (compute_uv && vr * n > 0 && !vt) return TPF_ENOMEM;
    int st = TPF_OK;
    tpf_fp_enter();
    for (int64_t b = 0; b < batch && st == TPF_OK; b++) {
        if (dt == TPF_F32)
            st = svd_one_s(m, n, (float *)a + b * m * n, (float *)s + b * k,
                           compute_uv ? (float *)u + b * m * uc : NULL, compute_uv ? (float *)v + b * n * vr : NULL,
                           full_matrices, compute_uv, vt, info + b);
        else
            st = svd_one_d(m, n, (double *)a + b * m * n, (double *)s + b * k,
                           compute_uv ? (double *)u + b * m * uc : NULL, compute_uv ? (double *)v + b * n * vr : NULL,
                           full_matrices, compute_uv, vt, info + b);
    }
    free(vt);
    return st;
}

/* Eigenvalues (ascending) of the symmetric matrices whose lower triangle is in `a`; with
 * compute_v, `a` ends up holding the orthonormal eigenvectors as columns. */
int tpf_eigh(int dt, int64_t batch, int64_t n, void *a, void *w, int compute_v, void *infov) {
    if (!lp_dtype(dt)) return TPF_EBADDTYPE;
    if (!lp_size_ok(batch, n, n)) return TPF_EBADSIZE;
    int32_t *info = infov;
    char job = compute_v ? 'V' : 'N';
    tpf_fp_enter();
    for (int64_t b = 0; b < batch; b++) {
        info[b] = 0;
        if (n == 0) continue;
        int bad = 0;   /* NaN in the lower triangle */
        for (int64_t i = 0; i < n && !bad; i++)
            for (int64_t j = 0; j <= i && !bad; j++) {
                double x = dt == TPF_F32 ? (double)((float *)a)[b * n * n + i * n + j]
                                         : ((double *)a)[b * n * n + i * n + j];
                bad = x != x;
            }
        lapack_int st;
        if (dt == TPF_F32) {
            float *A = (float *)a + b * n * n, *W = (float *)w + b * n;
            if (bad) { lp_fill_s(W, n, NAN); lp_fill_s(A, n * n, NAN); continue; }
            st = scipy_LAPACKE_ssyevd(LAPACK_ROW_MAJOR, job, 'L', (int)n, A, (int)n, W);
        } else {
            double *A = (double *)a + b * n * n, *W = (double *)w + b * n;
            if (bad) { lp_fill_d(W, n, NAN); lp_fill_d(A, n * n, NAN); continue; }
            st = scipy_LAPACKE_dsyevd(LAPACK_ROW_MAJOR, job, 'L', (int)n, A, (int)n, W);
        }
        if (st < 0) return TPF_EBADARG;
        info[b] = (int32_t)st;
    }
    return TPF_OK;
}

/* q (batch x m x qc), r (batch x rr x n): qc = rr = m (full) or min(m, n) */
int tpf_qr(int dt, int64_t batch, int64_t m, int64_t n, void *a, void *q, void *r, int full_matrices) {
    if (!lp_dtype(dt)) return TPF_EBADDTYPE;
    if (!lp_size_ok(batch, m, n) || m * m > INT32_MAX) return TPF_EBADSIZE;
    int64_t k = m < n ? m : n, qc = full_matrices ? m : k, rr = qc;
    size_t es = tpf_dtype_size(dt);
    void *tau = malloc((size_t)(k + 1) * es);
    if (!tau) return TPF_ENOMEM;
    int st = TPF_OK;
    tpf_fp_enter();
    for (int64_t b = 0; b < batch && st == TPF_OK; b++) {
        if (dt == TPF_F32)
            st = qr_one_s(m, n, (float *)a + b * m * n, (float *)q + b * m * qc, (float *)r + b * rr * n,
                          full_matrices, tau);
        else
            st = qr_one_d(m, n, (double *)a + b * m * n, (double *)q + b * m * qc, (double *)r + b * rr * n,
                          full_matrices, tau);
    }
    free(tau);
    return st;
}

/* LAPACK's 1-based row interchanges (getrf's ipiv) as the permutation p with A[p] = L U
 * (TensorFlow's `perm` of tf.linalg.lu), int32 or int64. */
int tpf_lu_perm(int64_t batch, int64_t n, const void *pivv, void *perm, int perm_dt) {
    if (perm_dt != TPF_I32 && perm_dt != TPF_I64) return TPF_EBADDTYPE;
    if (batch < 0 || n < 0 || n > INT32_MAX) return TPF_EBADSIZE;
    const int32_t *piv = pivv;
    for (int64_t b = 0; b < batch; b++) {
        const int32_t *P = piv + b * n;
        for (int64_t i = 0; i < n; i++)
            if (P[i] < 1 || P[i] > n) return TPF_EBADARG;
        if (perm_dt == TPF_I32) {
            int32_t *p = (int32_t *)perm + b * n;
            for (int64_t i = 0; i < n; i++) p[i] = (int32_t)i;
            for (int64_t i = 0; i < n; i++) { int32_t t = p[i]; p[i] = p[P[i] - 1]; p[P[i] - 1] = t; }
        } else {
            int64_t *p = (int64_t *)perm + b * n;
            for (int64_t i = 0; i < n; i++) p[i] = i;
            for (int64_t i = 0; i < n; i++) { int64_t t = p[i]; p[i] = p[P[i] - 1]; p[P[i] - 1] = t; }
        }
    }
    return TPF_OK;
}

/* ---- matrix exponential (Higham 2005, "The scaling and squaring method revisited") ---- */

static const double PADE_B[5][14] = {
    {120., 60., 12., 1.},
    {30240., 15120., 3360., 420., 30., 1.},
    {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.},
    {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.},
    {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
     10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.},
};
static const int PADE_M[5] = {3, 5, 7, 9, 13};
static const double PADE_THETA[5] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                     2.097847961257068e0, 5.371920351148152e0};

static void mm(int n, const double *x, const double *y, double *out) {
    scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x, n, y, n, 0.0, out, n);
}

/* out = exp(A) for one n x n matrix (A is scaled in place); w: 6 n^2 doubles, ipiv: n ints */
static int expm_one(int n, double *A, double *out, double *w, int *ipiv) {
    size_t nn = (size_t)n * n;
    double norm1 = 0;
    for (int j = 0; j < n; j++) {
        double c = 0;
        for (int i = 0; i < n; i++) c += fabs(A[(size_t)i * n + j]);
        if (c > norm1 || c != c) norm1 = c;
    }
    if (!isfinite(norm1)) {
        for (size_t i = 0; i < nn; i++) out[i] = NAN;
        return TPF_OK;
    }
    int idx = 4, s = 0;
    for (int t = 0; t < 4; t++)
        if (norm1 <= PADE_THETA[t]) { idx = t; break; }
    if (idx == 4 && norm1 > PADE_THETA[4]) {
        s = (int)ceil(log2(norm1 / PADE_THETA[4]));
        if (s < 0) s = 0;
        double scale = ldexp(1.0, -s);
        for (size_t i = 0; i < nn; i++) A[i] *= scale;
    }
    const double *b = PADE_B[idx];
    int m = PADE_M[idx];
    double *A2 = w, *P = w + nn, *U = w + 2 * nn, *V = w + 3 * nn, *T = w + 4 * nn, *A4 = w + 5 * nn;
    mm(n, A, A, A2);
    memset(P, 0, nn * sizeof(double));   /* P: the odd polynomial before the product with A */
    memset(V, 0, nn * sizeof(double));
    if (m < 13) {
        memcpy(T, A2, nn * sizeof(double));   /* T = A^(2j) */
        for (int i = 0; i < n; i++) { P[(size_t)i * n + i] = b[1]; V[(size_t)i * n + i] = b[0]; }
        for (int j = 1; 2 * j <= m; j++) {
            for (size_t i = 0; i < nn; i++) { P[i] += b[2 * j + 1] * T[i]; V[i] += b[2 * j] * T[i]; }
            if (2 * (j + 1) <= m) { mm(n, T, A2, A4); memcpy(T, A4, nn * sizeof(double)); }
        }
    } else {
        double *A6 = out;   /* scratch until the end */
        mm(n, A2, A2, A4);
        mm(n, A4, A2, A6);
        for (size_t i = 0; i < nn; i++) T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
        mm(n, A6, T, P);
        for (size_t i = 0; i < nn; i++) P[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
        for (int i = 0; i < n; i++) P[(size_t)i * n + i] += b[1];
        for (size_t i = 0; i < nn; i++) T[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
        mm(n, A6, T, V);
        for (size_t i = 0; i < nn; i++) V[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
        for (int i = 0; i < n; i++) V[(size_t)i * n + i] += b[0];
    }
    mm(n, A, P, U);
    /* (V - U) R = (V + U) */
    for (size_t i = 0; i < nn; i++) { T[i] = V[i] - U[i]; out[i] = V[i] + U[i]; }
    lapack_int st = scipy_LAPACKE_dgesv_work(LAPACK_ROW_MAJOR, n, n, T, n, ipiv, out, n);
    if (st < 0) return TPF_EBADARG;
    if (st > 0) {
        for (size_t i = 0; i < nn; i++) out[i] = NAN;
        return TPF_OK;
    }
    for (int i = 0; i < s; i++) {
        mm(n, out, out, T);
        memcpy(out, T, nn * sizeof(double));
    }
    return TPF_OK;
}

int tpf_expm(int dt, int64_t batch, int64_t n, const void *a, void *out) {
    if (!lp_dtype(dt)) return TPF_EBADDTYPE;
    if (!lp_size_ok(batch, n, n)) return TPF_EBADSIZE;
    if (n == 0 || batch == 0) return TPF_OK;
    size_t nn = (size_t)(n * n);
    double *w = malloc((8 * nn) * sizeof(double));
    int *ipiv = malloc((size_t)n * sizeof(int));
    if (!w || !ipiv) { free(w); free(ipiv); return TPF_ENOMEM; }
    double *A = w + 6 * nn, *R = w + 7 * nn;
    int st = TPF_OK;
    tpf_fp_enter();
    for (int64_t b = 0; b < batch && st == TPF_OK; b++) {
        for (size_t i = 0; i < nn; i++)
            A[i] = dt == TPF_F32 ? (double)((const float *)a)[b * nn + i] : ((const double *)a)[b * nn + i];
        st = expm_one((int)n, A, R, w, ipiv);
        for (size_t i = 0; i < nn; i++) {
            if (dt == TPF_F32) ((float *)out)[b * nn + i] = (float)R[i];
            else ((double *)out)[b * nn + i] = R[i];
        }
    }
    free(w);
    free(ipiv);
    return st;
}
