/* Dense linear algebra, float32/float64, row-major, batched (csrc/linalg.c's LAPACK
 * entries on the device).
 *
 * lu_<dt>:      LU with partial pivoting in place, one work-group per matrix (LAPACK's
 *               getf2: the pivot is the first largest |a| of the column, rows swapped
 *               whole, multipliers by the pivot's reciprocal, a rank-1 update); 1-based
 *               int32 pivots, info = the first zero pivot (1-based) or 0.
 * lu_solve_<dt>: op(A) X = B from the factors, one work-item per (matrix, column of B).
 * lu_inverse_<dt>: the inverse from the factors into scratch, copied back by the host.
 * lu_det_<dt>:  det, sign and log|det| per matrix, csrc/linalg.c's arithmetic.
 * cholesky_<dt>: the lower factor in place (potf2), info = the order of the first
 *               minor that is not positive definite; the strict upper triangle zeroed.
 * triangular_solve_<dt>: B := op(A)^-1 B, one work-item per (matrix, column of B).
 *
 * NaN in, NaN out, as on the CPU: a matrix with a NaN (in its lower triangle, for
 * Cholesky) factors to NaN with identity pivots and info 0.
 */

#define LA_LOCAL 64

#define LINALG(DS, T, SFMIN)                                                                        \
KERNEL lu_##DS(G T *A, G i32 *piv, G i32 *info, i64 n) {                                            \
    const i64 b = GRP0();                                                                           \
    const int t = LID0();                                                                           \
    G T *a = A + b * n * n;                                                                         \
    LOCAL i64 p_s;                                                                                  \
    LOCAL int bad_s;                                                                                \
    LOCAL int nan_s;                                                                                \
    if (t == 0) { bad_s = 0; nan_s = 0; }                                                           \
    BARRIER();                                                                                      \
    for (i64 e = t; e < n * n; e += LA_LOCAL)                                                       \
        if (a[e] != a[e]) nan_s = 1;                                                                \
    BARRIER();                                                                                      \
    if (nan_s) {                                                                                    \
        for (i64 e = t; e < n * n; e += LA_LOCAL) a[e] = (T)TPF_NAN;                                \
        for (i64 i = t; i < n; i += LA_LOCAL) piv[b * n + i] = (i32)(i + 1);                        \
        if (t == 0) info[b] = 0;                                                                    \
        return;                                                                                     \
    }                                                                                               \
    for (i64 k = 0; k < n; k++) {                                                                   \
        if (t == 0) {                                                                               \
            i64 p = k;                                                                              \
            T best = fabs(a[k * n + k]);                                                            \
            for (i64 i = k + 1; i < n; i++) {                                                       \
                T v = fabs(a[i * n + k]);                                                           \
                if (v > best) { best = v; p = i; }                                                  \
            }                                                                                       \
            p_s = p;                                                                                \
            piv[b * n + k] = (i32)(p + 1);                                                          \
            if (a[p * n + k] == 0 && bad_s == 0) bad_s = (int)(k + 1);                              \
        }                                                                                           \
        BARRIER();                                                                                  \
        const i64 p = p_s;                                                                          \
        const int zero = a[p * n + k] == 0;                                                         \
        if (!zero && p != k)                                                                        \
            for (i64 j = t; j < n; j += LA_LOCAL) { T x = a[k * n + j]; a[k * n + j] = a[p * n + j]; a[p * n + j] = x; } \
        BARRIER();                                                                                  \
        if (!zero) {                                                                                \
            const T d = a[k * n + k];                                                               \
            const T r = 1 / d;                                                                      \
            for (i64 i = k + 1 + t; i < n; i += LA_LOCAL)                                           \
                a[i * n + k] = fabs(d) >= SFMIN ? a[i * n + k] * r : a[i * n + k] / d;              \
        }                                                                                           \
        BARRIER();                                                                                  \
        if (!zero) {                                                                                \
            const i64 m = n - k - 1;                                                                \
            for (i64 e = t; e < m * m; e += LA_LOCAL) {                                             \
                i64 i = k + 1 + e / m, j = k + 1 + e % m;                                           \
                a[i * n + j] -= a[i * n + k] * a[k * n + j];                                        \
            }                                                                                       \
        }                                                                                           \
        BARRIER();                                                                                  \
    }                                                                                               \
    if (t == 0) info[b] = bad_s;                                                                    \
}                                                                                                   \
/* op(A) X = B: P L U x = b, or (P L U)^T x = b = U^T L^T P^T x */                                 \
KERNEL lu_solve_##DS(const G T *LU, const G i32 *piv, G T *B, int trans, i64 batch, i64 n, i64 nrhs) { \
    i64 q = GID0();                                                                                 \
    if (q >= batch * nrhs) return;                                                                  \
    i64 b = q / nrhs, c = q - b * nrhs;                                                             \
    const G T *a = LU + b * n * n;                                                                  \
    const G i32 *pv = piv + b * n;                                                                  \
    G T *x = B + b * n * nrhs + c;                                                                  \
    if (!trans) {                                                                                   \
        for (i64 i = 0; i < n; i++) {                                                               \
            i64 p = pv[i] - 1;                                                                      \
            if (p != i) { T s = x[i * nrhs]; x[i * nrhs] = x[p * nrhs]; x[p * nrhs] = s; }          \
        }                                                                                           \
        for (i64 i = 0; i < n; i++) {                                                               \
            T s = x[i * nrhs];                                                                      \
            for (i64 k = 0; k < i; k++) s -= a[i * n + k] * x[k * nrhs];                            \
            x[i * nrhs] = s;                                                                        \
        }                                                                                           \
        for (i64 i = n - 1; i >= 0; i--) {                                                          \
            T s = x[i * nrhs];                                                                      \
            for (i64 k = i + 1; k < n; k++) s -= a[i * n + k] * x[k * nrhs];                        \
            x[i * nrhs] = s / a[i * n + i];                                                         \
        }                                                                                           \
    } else {                                                                                        \
        for (i64 i = 0; i < n; i++) {                                                               \
            T s = x[i * nrhs];                                                                      \
            for (i64 k = 0; k < i; k++) s -= a[k * n + i] * x[k * nrhs];                            \
            x[i * nrhs] = s / a[i * n + i];                                                         \
        }                                                                                           \
        for (i64 i = n - 1; i >= 0; i--) {                                                          \
            T s = x[i * nrhs];                                                                      \
            for (i64 k = i + 1; k < n; k++) s -= a[k * n + i] * x[k * nrhs];                        \
            x[i * nrhs] = s;                                                                        \
        }                                                                                           \
        for (i64 i = n - 1; i >= 0; i--) {                                                          \
            i64 p = pv[i] - 1;                                                                      \
            if (p != i) { T s = x[i * nrhs]; x[i * nrhs] = x[p * nrhs]; x[p * nrhs] = s; }          \
        }                                                                                           \
    }                                                                                               \
}                                                                                                   \
/* scratch X [batch, n, n] := identity, then solved column by column by lu_solve */                \
KERNEL eye_##DS(G T *X, i64 batch, i64 n) {                                                         \
    i64 e = GID0();                                                                                 \
    if (e >= batch * n * n) return;                                                                 \
    i64 r = e % (n * n);                                                                            \
    X[e] = (r / n == r % n) ? (T)1 : (T)0;                                                          \
}                                                                                                   \
/* the first matrix (in order) with a zero on U's diagonal */                                       \
KERNEL lu_singular_##DS(const G T *LU, i64 batch, i64 n, G int *flag) {                             \
    i64 q = GID0();                                                                                 \
    if (q >= batch * n) return;                                                                     \
    i64 b = q / n, i = q - b * n;                                                                   \
    if (LU[b * n * n + i * n + i] == 0) ATOMIC_MIN_I32(flag, b);                                    \
}                                                                                                   \
KERNEL lu_det_##DS(const G T *LU, const G i32 *piv, G T *det, G T *sign, G T *logabs, i64 batch, i64 n) { \
    i64 b = GID0();                                                                                 \
    if (b >= batch) return;                                                                         \
    TPF_LU_DET(LU + b * n * n, piv + b * n, n, T, det[b], sign[b], logabs[b]);                      \
}                                                                                                   \
KERNEL cholesky_##DS(G T *A, G i32 *info, i64 n) {                                                  \
    const i64 b = GRP0();                                                                           \
    const int t = LID0();                                                                           \
    G T *a = A + b * n * n;                                                                         \
    LOCAL int bad_s;                                                                                \
    LOCAL int nan_s;                                                                                \
    if (t == 0) { bad_s = 0; nan_s = 0; }                                                           \
    BARRIER();                                                                                      \
    for (i64 e = t; e < n * n; e += LA_LOCAL)                                                       \
        if (e % n <= e / n && a[e] != a[e]) nan_s = 1;                                              \
    BARRIER();                                                                                      \
    if (nan_s) {                                                                                    \
        for (i64 e = t; e < n * n; e += LA_LOCAL) a[e] = e % n > e / n ? (T)0 : (T)TPF_NAN;          \
        if (t == 0) info[b] = 0;                                                                    \
        return;                                                                                     \
    }                                                                                               \
    for (i64 j = 0; j < n; j++) {                                                                   \
        if (t == 0 && bad_s == 0) {                                                                 \
            T d = a[j * n + j];                                                                     \
            for (i64 k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];                           \
            if (d <= 0 || d != d) { a[j * n + j] = d; bad_s = (int)(j + 1); }                       \
            else a[j * n + j] = sqrt(d);                                                            \
        }                                                                                           \
        BARRIER();                                                                                  \
        if (bad_s == 0) {                                                                           \
            const T d = a[j * n + j];                                                               \
            for (i64 i = j + 1 + t; i < n; i += LA_LOCAL) {                                         \
                T s = a[i * n + j];                                                                 \
                for (i64 k = 0; k < j; k++) s -= a[i * n + k] * a[j * n + k];                       \
                a[i * n + j] = s / d;                                                               \
            }                                                                                       \
        }                                                                                           \
        BARRIER();                                                                                  \
    }                                                                                               \
    for (i64 e = t; e < n * n; e += LA_LOCAL)                                                       \
        if (e % n > e / n) a[e] = 0;                                                                \
    if (t == 0) info[b] = bad_s;                                                                    \
}                                                                                                   \
KERNEL triangular_solve_##DS(const G T *A, i64 a_bstride, G T *B, int lower, int trans, i64 batch,  \
                              i64 n, i64 nrhs) {                                                    \
    i64 q = GID0();                                                                                 \
    if (q >= batch * nrhs) return;                                                                  \
    i64 b = q / nrhs, c = q - b * nrhs;                                                             \
    const G T *a = A + b * a_bstride;                                                               \
    G T *x = B + b * n * nrhs + c;                                                                  \
    /* op(A) is lower triangular for (lower, no transpose) and (upper, transpose) */               \
    const int forward = lower != trans;                                                             \
    for (i64 s_ = 0; s_ < n; s_++) {                                                                \
        i64 i = forward ? s_ : n - 1 - s_;                                                          \
        T s = x[i * nrhs];                                                                          \
        if (forward) for (i64 k = 0; k < i; k++) s -= (trans ? a[k * n + i] : a[i * n + k]) * x[k * nrhs]; \
        else for (i64 k = i + 1; k < n; k++) s -= (trans ? a[k * n + i] : a[i * n + k]) * x[k * nrhs]; \
        x[i * nrhs] = s / a[i * n + i];                                                             \
    }                                                                                               \
}

LINALG(f32, float, 1.17549435e-38f)
#ifdef TPF_FP64
LINALG(f64, double, 2.2250738585072014e-308)
#endif
