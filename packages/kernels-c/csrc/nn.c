/* Fused row kernels of a training step: softmax, log_softmax and the two softmax
 * cross-entropies (loss and its gradient in one pass).
 *
 * A tensor reaches these kernels as an (outer, r, inner) view: rows of length r
 * along the softmax axis, element k of row (o, j) at o * r * inner + k * inner + j.
 * The last axis (inner == 1) is the fast path: contiguous rows, vectorised exp.
 * Rows are independent, so large inputs split rows over threads.
 *
 * float32 uses a branch-free exp (Cody-Waite range reduction and a degree-6
 * polynomial, as Cephes' expf; within 2 ulp of the correctly rounded value) that
 * the compiler vectorises; float64 uses libm.
 */
#include "tpf.h"
#include "scalar_math.h"


/* exp for x <= ~88 (softmax arguments are <= 0): 0 below -87.3, NaN stays NaN. */
static inline float exp_f32(float x) {
    float xc = x < -87.3f ? -87.3f : (x > 88.0f ? 88.0f : x);
    float t = xc * 1.44269504088896341f + 12582912.0f;   /* round(x / ln 2) via 1.5 * 2^23 */
    float n = t - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float y = tpf_expf_r(r);   /* e**r, scalar_math.h's polynomial */
    int32_t ti; memcpy(&ti, &t, 4);
    uint32_t e = ((uint32_t)ti - 0x4B400000u + 127u) << 23;   /* 2^n as float bits (unsigned: no UB) */
    float scale; memcpy(&scale, &e, 4);
    float v = y * scale;
    v = x < -87.3f ? 0.0f : v;
    return x != x ? x : v;
}

/* ---- float32 contiguous rows --------------------------------------------------
 * Rows go through in chunks of about CHUNK values so that exp runs as one flat,
 * vectorised loop over many short rows (10-class logits are the common case);
 * the per-row work (max, sum, scale) stays short.  Small reductions use plain
 * loops: an `omp simd` reduction costs more than it saves below ~64 values.
 * Rows of 256 and more take one fused exp-and-sum pass each instead. */

#define CHUNK 2048

static inline float max_f32(const float *x, int64_t r) {
    float mx = -INFINITY;
    if (r < 64) {
        for (int64_t i = 0; i < r; i++) mx = x[i] > mx ? x[i] : mx;
        return mx;
    }
    #pragma omp simd reduction(max:mx)
    for (int64_t i = 0; i < r; i++) mx = x[i] > mx ? x[i] : mx;
    return mx;  /* a NaN is skipped here but reaches the sum through exp, so the row is NaN */
}

static inline float sum_f32(const float *e, int64_t r) {
    float s = 0.0f;
    if (r < 64) {
        for (int64_t i = 0; i < r; i++) s += e[i];
        return s;
    }
    #pragma omp simd reduction(+:s)
    for (int64_t i = 0; i < r; i++) s += e[i];
    return s;
}

static inline void shift_f32(const float *x, float *o, float mx, int64_t r) {
    for (int64_t i = 0; i < r; i++) o[i] = x[i] - mx;
}

static inline void exp_flat_f32(float *v, int64_t n) {
    for (int64_t k = 0; k < n; k++) v[k] = exp_f32(v[k]);
}

/* sum of exp(x - mx) over one long row in a single pass, storing the terms in e when given */
static inline float rowexp_f32(const float *x, float *e, float mx, int64_t r) {
    float s = 0.0f;
    if (e) {
        #pragma omp simd reduction(+:s)
        for (int64_t i = 0; i < r; i++) { float v = exp_f32(x[i] - mx); e[i] = v; s += v; }
    } else {
        #pragma omp simd reduction(+:s)
        for (int64_t i = 0; i < r; i++) s += exp_f32(x[i] - mx);
    }
    return s;
}

/* sums[q] = sum of exp(x - mxs[q]) for the nr rows of a chunk; the terms land in e
 * (nr * r values) when e is given, else in the scratch buffer */
static inline void chunk_sumexp_f32(const float *x, const float *mxs, float *e, float *sums, int64_t nr, int64_t r,
                                    float *scratch) {
    if (r >= 256) {  /* long rows: one fused pass per row is faster */
        for (int64_t q = 0; q < nr; q++) sums[q] = rowexp_f32(x + q * r, e ? e + q * r : NULL, mxs[q], r);
        return;
    }
    float *t = e ? e : scratch;
    for (int64_t q = 0; q < nr; q++) shift_f32(x + q * r, t + q * r, mxs[q], r);
    exp_flat_f32(t, nr * r);
    for (int64_t q = 0; q < nr; q++) sums[q] = sum_f32(t + q * r, r);
}

static void TPF_CLONES softmax_rows_f32(const float *X, float *O, int log_, int64_t r0, int64_t r1, int64_t r) {
    float scratch[CHUNK], mxs[CHUNK], sums[CHUNK];
    int64_t per = r >= CHUNK ? 1 : CHUNK / r;
    for (int64_t c0 = r0; c0 < r1; c0 += per) {
        int64_t nr = r1 - c0 < per ? r1 - c0 : per;
        const float *x = X + c0 * r;
        float *o = O + c0 * r;
        /* NaN or +inf logits, or every logit -inf, give a NaN row (as TensorFlow) */
        for (int64_t q = 0; q < nr; q++) mxs[q] = max_f32(x + q * r, r);
        chunk_sumexp_f32(x, mxs, log_ ? NULL : o, sums, nr, r, scratch);
        for (int64_t q = 0; q < nr; q++) {
            float *oq = o + q * r;
            if (log_) {
                /* (x - mx) - log(s), not x - (mx + log(s)): keeps the digits of log(s) */
                const float *xq = x + q * r;
                float mx = mxs[q], ls = logf(sums[q]);
                #pragma omp simd
                for (int64_t i = 0; i < r; i++) oq[i] = (xq[i] - mx) - ls;
            } else {
                float inv = 1.0f / sums[q];
                #pragma omp simd
                for (int64_t i = 0; i < r; i++) oq[i] *= inv;
            }
        }
    }
}

static void TPF_CLONES xent_rows_f32(const float *L, const float *X, float *loss, float *B, int64_t r0, int64_t r1,
                                    int64_t r) {
    float scratch[CHUNK], mxs[CHUNK], sums[CHUNK];
    int64_t per = r >= CHUNK ? 1 : CHUNK / r;
    for (int64_t c0 = r0; c0 < r1; c0 += per) {
        int64_t nr = r1 - c0 < per ? r1 - c0 : per;
        const float *x = X + c0 * r, *l = L + c0 * r;
        float *b = B ? B + c0 * r : NULL;
        for (int64_t q = 0; q < nr; q++) mxs[q] = max_f32(x + q * r, r);
        chunk_sumexp_f32(x, mxs, b, sums, nr, r, scratch);
        for (int64_t q = 0; q < nr; q++) {
            const float *xq = x + q * r, *lq = l + q * r;
            float mx = mxs[q], ls = logf(sums[q]), acc = 0.0f;
            for (int64_t i = 0; i < r; i++) acc += lq[i] != 0.0f ? lq[i] * (ls - (xq[i] - mx)) : 0.0f;
            loss[c0 + q] = acc;
            if (b) {
                float *bq = b + q * r, inv = 1.0f / sums[q];
                #pragma omp simd
                for (int64_t i = 0; i < r; i++) bq[i] = bq[i] * inv - lq[i];
            }
        }
    }
}

/* ---- float64 contiguous rows -------------------------------------------------- */

static inline double rowmax_f64(const double *x, int64_t r) {
    double mx = -INFINITY;
    for (int64_t i = 0; i < r; i++) mx = x[i] > mx ? x[i] : mx;
    return mx;
}

static inline double rowexp_f64(const double *x, double *e, double mx, int64_t r) {
    double s = 0.0;
    for (int64_t i = 0; i < r; i++) { double v = exp(x[i] - mx); if (e) e[i] = v; s += v; }
    return s;
}

static void TPF_CLONES softmax_rows_f64(const double *X, double *O, int log_, int64_t r0, int64_t r1, int64_t r) {
    for (int64_t row = r0; row < r1; row++) {
        const double *x = X + row * r; double *o = O + row * r;
        double mx = rowmax_f64(x, r);
        if (log_) {
            double ls = log(rowexp_f64(x, NULL, mx, r));
            for (int64_t i = 0; i < r; i++) o[i] = (x[i] - mx) - ls;
        } else {
            double inv = 1.0 / rowexp_f64(x, o, mx, r);
            for (int64_t i = 0; i < r; i++) o[i] *= inv;
        }
    }
}

static void TPF_CLONES xent_rows_f64(const double *L, const double *X, double *loss, double *B, int64_t r0, int64_t r1,
                          int64_t r) {
    for (int64_t row = r0; row < r1; row++) {
        const double *l = L + row * r, *x = X + row * r;
        double *b = B ? B + row * r : NULL;
        double mx = rowmax_f64(x, r);
        double s = rowexp_f64(x, b, mx, r), lse = log(s), acc = 0.0;
        for (int64_t i = 0; i < r; i++) acc += l[i] != 0.0 ? l[i] * (lse - (x[i] - mx)) : 0.0;
        loss[row] = acc;
        if (b) { double inv = 1.0 / s; for (int64_t i = 0; i < r; i++) b[i] = b[i] * inv - l[i]; }
    }
}

/* ---- strided rows (a softmax axis other than the last) -------------------------- */

#define STRIDED(SUF, T, EXP, LOG)                                                                 \
static void softmax_strided_##SUF(const T *X, T *O, int log_, int64_t q0, int64_t q1, int64_t r,   \
                                  int64_t inner) {                                                 \
    for (int64_t q = q0; q < q1; q++) {                                                            \
        int64_t base = (q / inner) * r * inner + q % inner;                                        \
        const T *x = X + base; T *o = O + base;                                                    \
        T mx = -INFINITY;                                                                          \
        for (int64_t i = 0; i < r; i++) { T v = x[i * inner]; mx = v > mx ? v : mx; }             \
        T s = 0;                                                                                   \
        for (int64_t i = 0; i < r; i++) { T e = EXP(x[i * inner] - mx); if (!log_) o[i * inner] = e; \
                                          s += e; }                                                \
        if (log_) { T ls = LOG(s); for (int64_t i = 0; i < r; i++) o[i * inner] = (x[i * inner] - mx) - ls; } \
        else { T inv = 1 / s; for (int64_t i = 0; i < r; i++) o[i * inner] *= inv; }               \
    }                                                                                              \
}                                                                                                  \
static void xent_strided_##SUF(const T *L, const T *X, T *loss, T *B, int64_t q0, int64_t q1,      \
                               int64_t r, int64_t inner) {                                         \
    for (int64_t q = q0; q < q1; q++) {                                                            \
        int64_t base = (q / inner) * r * inner + q % inner;                                        \
        const T *x = X + base, *l = L + base;                                                      \
        T mx = -INFINITY;                                                                          \
        for (int64_t i = 0; i < r; i++) { T v = x[i * inner]; mx = v > mx ? v : mx; }             \
        T s = 0;                                                                                   \
        for (int64_t i = 0; i < r; i++) s += EXP(x[i * inner] - mx);                               \
        T lse = LOG(s), acc = 0;                                                                   \
        for (int64_t i = 0; i < r; i++) {                                                          \
            T li = l[i * inner];                                                                   \
            if (li != 0) acc += li * (lse - (x[i * inner] - mx));                                  \
            if (B) B[base + i * inner] = EXP(x[i * inner] - mx) / s - li;                          \
        }                                                                                          \
        loss[q] = acc;                                                                             \
    }                                                                                              \
}
STRIDED(f32, float, exp_f32, logf)
STRIDED(f64, double, exp, log)

/* Run fn(lo, hi) over [0, rows), splitting rows over threads when the work is large. */
#define SPLIT_ROWS(rows, work, CALL)                                                 \
    do {                                                                             \
        int64_t rows_ = (rows);                                                      \
        int nt_ = TPF_NTHREADS(work);                                                \
        if (nt_ > rows_) nt_ = rows_ > 0 ? (int)rows_ : 1;                           \
        if (nt_ <= 1) { int64_t lo = 0, hi = rows_; tpf_fp_enter(); CALL; break; }   \
        int64_t chunk_ = (rows_ + nt_ - 1) / nt_;                                    \
        _Pragma("omp parallel for num_threads(nt_) schedule(static)")                \
        for (int t_ = 0; t_ < nt_; t_++) {                                           \
            tpf_fp_enter();                                                          \
            int64_t lo = t_ * chunk_, hi = lo + chunk_ < rows_ ? lo + chunk_ : rows_; \
            if (lo < hi) CALL;                                                       \
        }                                                                            \
    } while (0)

int tpf_softmax(int dt, int log_, const void *x, void *out, int64_t outer, int64_t r, int64_t inner) {
    if (outer < 0 || r < 0 || inner < 0) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    int64_t n = outer * r * inner;
    if (n == 0) return TPF_OK;
    if (inner == 1) {
        if (dt == TPF_F32) SPLIT_ROWS(outer, n, softmax_rows_f32((const float *)x, (float *)out, log_, lo, hi, r));
        else SPLIT_ROWS(outer, n, softmax_rows_f64((const double *)x, (double *)out, log_, lo, hi, r));
    } else {
        if (dt == TPF_F32)
            SPLIT_ROWS(outer * inner, n, softmax_strided_f32((const float *)x, (float *)out, log_, lo, hi, r, inner));
        else
            SPLIT_ROWS(outer * inner, n, softmax_strided_f64((const double *)x, (double *)out, log_, lo, hi, r, inner));
    }
    return TPF_OK;
}

/* loss: (outer, inner) = sum over the axis of -labels * log_softmax(logits);
 * backprop (same shape as logits, may be NULL) = softmax(logits) - labels. */
int tpf_softmax_xent(int dt, const void *labels, const void *logits, void *loss, void *backprop,
                     int64_t outer, int64_t r, int64_t inner) {
    if (outer < 0 || r < 0 || inner < 0) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    int64_t n = outer * r * inner;
    if (outer * inner == 0) return TPF_OK;
    if (inner == 1) {
        if (dt == TPF_F32)
            SPLIT_ROWS(outer, n, xent_rows_f32((const float *)labels, (const float *)logits, (float *)loss,
                                               (float *)backprop, lo, hi, r));
        else
            SPLIT_ROWS(outer, n, xent_rows_f64((const double *)labels, (const double *)logits, (double *)loss,
                                               (double *)backprop, lo, hi, r));
    } else {
        if (dt == TPF_F32)
            SPLIT_ROWS(outer * inner, n, xent_strided_f32((const float *)labels, (const float *)logits,
                                                          (float *)loss, (float *)backprop, lo, hi, r, inner));
        else
            SPLIT_ROWS(outer * inner, n, xent_strided_f64((const double *)labels, (const double *)logits,
                                                          (double *)loss, (double *)backprop, lo, hi, r, inner));
    }
    return TPF_OK;
}

/* ---- sparse: integer labels ------------------------------------------------------- */

static inline int64_t label_at(int ldt, const void *labels, int64_t i) {
    return ldt == TPF_I32 ? (int64_t)((const int32_t *)labels)[i] : ((const int64_t *)labels)[i];
}

static void TPF_CLONES sparse_rows_f32(int ldt, const void *lab, const float *X, float *loss, float *B, int64_t r0,
                                      int64_t r1, int64_t r) {
    float scratch[CHUNK], mxs[CHUNK], sums[CHUNK];
    int64_t per = r >= CHUNK ? 1 : CHUNK / r;
    for (int64_t c0 = r0; c0 < r1; c0 += per) {
        int64_t nr = r1 - c0 < per ? r1 - c0 : per;
        const float *x = X + c0 * r;
        float *b = B ? B + c0 * r : NULL;
        for (int64_t q = 0; q < nr; q++) mxs[q] = max_f32(x + q * r, r);
        chunk_sumexp_f32(x, mxs, b, sums, nr, r, scratch);
        for (int64_t q = 0; q < nr; q++) {
            int64_t k = label_at(ldt, lab, c0 + q);
            loss[c0 + q] = logf(sums[q]) - (x[q * r + k] - mxs[q]);
            if (b) {
                float *bq = b + q * r, inv = 1.0f / sums[q];
                #pragma omp simd
                for (int64_t i = 0; i < r; i++) bq[i] *= inv;
                bq[k] -= 1.0f;
            }
        }
    }
}

static void TPF_CLONES sparse_rows_f64(int ldt, const void *lab, const double *X, double *loss, double *B, int64_t r0,
                            int64_t r1, int64_t r) {
    for (int64_t row = r0; row < r1; row++) {
        const double *x = X + row * r;
        double *b = B ? B + row * r : NULL;
        int64_t k = label_at(ldt, lab, row);
        double mx = rowmax_f64(x, r);
        double s = rowexp_f64(x, b, mx, r);
        loss[row] = log(s) - (x[k] - mx);
        if (b) { double inv = 1.0 / s; for (int64_t i = 0; i < r; i++) b[i] *= inv; b[k] -= 1.0; }
    }
}

/* loss[row] = -log_softmax(logits[row])[labels[row]]; backprop = softmax - one_hot(labels).
 * Labels must lie in [0, r): otherwise TPF_ERANGE, with bad[0] = the first bad row and
 * bad[1] = its label. */
int tpf_sparse_softmax_xent(int dt, int label_dt, const void *labels, const void *logits, void *loss,
                            void *backprop, int64_t rows, int64_t r, int64_t *bad) {
    if (rows < 0 || r < 0) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    if (label_dt != TPF_I32 && label_dt != TPF_I64) return TPF_EBADDTYPE;
    for (int64_t i = 0; i < rows; i++) {
        int64_t k = label_at(label_dt, labels, i);
        if (k < 0 || k >= r) { bad[0] = i; bad[1] = k; return TPF_ERANGE; }
    }
    if (rows == 0) return TPF_OK;
    int64_t n = rows * r;
    if (dt == TPF_F32)
        SPLIT_ROWS(rows, n, sparse_rows_f32(label_dt, labels, (const float *)logits, (float *)loss,
                                            (float *)backprop, lo, hi, r));
    else
        SPLIT_ROWS(rows, n, sparse_rows_f64(label_dt, labels, (const double *)logits, (double *)loss,
                                            (double *)backprop, lo, hi, r));
    return TPF_OK;
}
