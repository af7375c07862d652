/* complex64 / complex128 kernels: element-wise arithmetic (broadcast through strides), the parts of
 * a complex number (real, imag, abs, angle), building one from two real tensors, a sum over one
 * axis, and the batched complex matmul (OpenBLAS cgemm/zgemm).
 *
 * A complex element is two floats of its precision, real part first (NumPy's and C99's layout). */
#include "tpf.h"
#include <cblas.h>

typedef struct { float r, i; } tpf_c64;
typedef struct { double r, i; } tpf_c128;

static int is_complex(int dt) { return dt == TPF_C64 || dt == TPF_C128; }

/* a / b as C99 Annex G's careful division would give for finite values (scaled by the larger part
 * of b, so no overflow for large |b|); division by zero gives inf/nan as in TensorFlow */
#define CDIV(ar, ai, br, bi, OR, OI) do {                                     \
        if (fabs(br) >= fabs(bi)) {                                           \
            if (br == 0 && bi == 0) { OR = (ar) / fabs(br); OI = (ai) / fabs(br); break; } \
            double rat_ = (bi) / (br), den_ = (br) + (bi) * rat_;            \
            OR = ((ar) + (ai) * rat_) / den_; OI = ((ai) - (ar) * rat_) / den_; \
        } else {                                                              \
            double rat_ = (br) / (bi), den_ = (br) * rat_ + (bi);            \
            OR = ((ar) * rat_ + (ai)) / den_; OI = ((ai) * rat_ - (ar)) / den_; \
        }                                                                     \
    } while (0)

/* op: 0 add, 1 subtract, 2 multiply, 3 divide */
static inline void cbin(int op, double ar, double ai, double br, double bi, double *or_, double *oi) {
    switch (op) {
    case 0: *or_ = ar + br; *oi = ai + bi; break;
    case 1: *or_ = ar - br; *oi = ai - bi; break;
    case 2: *or_ = ar * br - ai * bi; *oi = ar * bi + ai * br; break;
    default: { double r, i; CDIV(ar, ai, br, bi, r, i); *or_ = r; *oi = i; } break;
    }
}

int tpf_cbinary(int op, int dt, int nd, const int64_t *shape, const void *a, const int64_t *astr,
                const void *b, const int64_t *bstr, void *out) {
    if (op < 0 || op > 3) return TPF_EBADOP;
    if (!is_complex(dt)) return TPF_EBADDTYPE;
    if (nd < 1 || nd > TPF_MAXDIMS) return TPF_EBADSIZE;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] < 0) return TPF_EBADSIZE;
        n *= shape[d];
    }
    if (n == 0) return TPF_OK;
    int64_t inner = shape[nd - 1], rows = n / inner;
    int64_t as = astr[nd - 1], bs = bstr[nd - 1];
    int nt = TPF_NTHREADS(n);
    TPF_PFOR(row, rows,
        int64_t rem = row, ao = 0, bo = 0;
        for (int d = nd - 2; d >= 0; d--) {
            int64_t idx = rem % shape[d];
            rem /= shape[d];
            ao += idx * astr[d];
            bo += idx * bstr[d];
        }
        int64_t o = row * inner;
        if (dt == TPF_C64) {
            const tpf_c64 *A = (const tpf_c64 *)a + ao, *B = (const tpf_c64 *)b + bo;
            tpf_c64 *O = (tpf_c64 *)out + o;
            for (int64_t j = 0; j < inner; j++) {
                double r, i;
                cbin(op, A[j * as].r, A[j * as].i, B[j * bs].r, B[j * bs].i, &r, &i);
                O[j].r = (float)r; O[j].i = (float)i;
            }
        } else {
            const tpf_c128 *A = (const tpf_c128 *)a + ao, *B = (const tpf_c128 *)b + bo;
            tpf_c128 *O = (tpf_c128 *)out + o;
            for (int64_t j = 0; j < inner; j++) {
                double r, i;
                cbin(op, A[j * as].r, A[j * as].i, B[j * bs].r, B[j * bs].i, &r, &i);
                O[j].r = r; O[j].i = i;
            }
        }
    );
    return TPF_OK;
}

/* op: 0 negative, 1 conj, 2 exp, 3 square, 4 reciprocal; complex in, complex out */
static inline void cun(int op, double r, double i, double *or_, double *oi) {
    switch (op) {
    case 0: *or_ = -r; *oi = -i; break;
    case 1: *or_ = r; *oi = -i; break;
    case 2: { double e = exp(r); *or_ = i == 0 ? e : e * cos(i); *oi = i == 0 ? i : e * sin(i); } break;
    case 3: *or_ = r * r - i * i; *oi = 2 * r * i; break;
    default: { double x, y; CDIV(1.0, 0.0, r, i, x, y); *or_ = x; *oi = y; } break;
    }
}

int tpf_cunary(int op, int dt, const void *x, void *out, int64_t n) {
    if (op < 0 || op > 4) return TPF_EBADOP;
    if (!is_complex(dt)) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    int nt = TPF_NTHREADS(n);
    TPF_PFOR(k, n,
        double r, i;
        if (dt == TPF_C64) {
            const tpf_c64 v = ((const tpf_c64 *)x)[k];
            cun(op, v.r, v.i, &r, &i);
            ((tpf_c64 *)out)[k] = (tpf_c64){(float)r, (float)i};
        } else {
            const tpf_c128 v = ((const tpf_c128 *)x)[k];
            cun(op, v.r, v.i, &r, &i);
            ((tpf_c128 *)out)[k] = (tpf_c128){r, i};
        }
    );
    return TPF_OK;
}

/* op: 0 real, 1 imag, 2 abs (hypot, no overflow), 3 angle (atan2(imag, real)); complex in, real out of
 * the same precision (float32 for complex64, float64 for complex128) */
static inline double cpart(int op, double r, double i) {
    switch (op) {
    case 0: return r;
    case 1: return i;
    case 2: return hypot(r, i);
    default: return atan2(i, r);
    }
}

int tpf_cpart(int op, int dt, const void *x, void *out, int64_t n) {
    if (op < 0 || op > 3) return TPF_EBADOP;
    if (!is_complex(dt)) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    int nt = TPF_NTHREADS(n);
    TPF_PFOR(k, n,
        if (dt == TPF_C64) {
            const tpf_c64 v = ((const tpf_c64 *)x)[k];
            ((float *)out)[k] = op == 2 ? hypotf(v.r, v.i) : (float)cpart(op, v.r, v.i);
        } else {
            const tpf_c128 v = ((const tpf_c128 *)x)[k];
            ((double *)out)[k] = cpart(op, v.r, v.i);
        }
    );
    return TPF_OK;
}

/* out = re + i * im for ``n`` elements; ``dt`` is the complex dtype (re and im have its precision) */
int tpf_cmake(int dt, const void *re, const void *im, void *out, int64_t n) {
    if (!is_complex(dt)) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    int nt = TPF_NTHREADS(n);
    TPF_PFOR(k, n,
        if (dt == TPF_C64) ((tpf_c64 *)out)[k] = (tpf_c64){((const float *)re)[k], ((const float *)im)[k]};
        else ((tpf_c128 *)out)[k] = (tpf_c128){((const double *)re)[k], ((const double *)im)[k]};
    );
    return TPF_OK;
}

/* out[o, i] = sum over r of x[o, r, i] (x is [outer, r, inner]); sums in double, pairwise over r */
int tpf_creduce_sum(int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner) {
    if (!is_complex(dt)) return TPF_EBADDTYPE;
    if (outer < 0 || r < 0 || inner < 0) return TPF_EBADSIZE;
    int64_t lines = outer * inner;
    int nt = TPF_NTHREADS(lines * r);
    TPF_PFOR(line, lines,
        int64_t o = line / inner, i = line % inner;
        double sr = 0, si = 0;
        if (dt == TPF_C64) {
            const tpf_c64 *X = (const tpf_c64 *)x + o * r * inner + i;
            for (int64_t k = 0; k < r; k++) { sr += X[k * inner].r; si += X[k * inner].i; }
            ((tpf_c64 *)out)[line] = (tpf_c64){(float)sr, (float)si};
        } else {
            const tpf_c128 *X = (const tpf_c128 *)x + o * r * inner + i;
            for (int64_t k = 0; k < r; k++) { sr += X[k * inner].r; si += X[k * inner].i; }
            ((tpf_c128 *)out)[line] = (tpf_c128){sr, si};
        }
    );
    return TPF_OK;
}

/* out[b] = op(a[b]) @ op(b[b]) for ``batch`` products, op 0: as is, 1: transposed, 2: adjoint
 * (conjugate transpose); a is [m, k] after op, b [k, n]; a batch stride of 0 reuses one matrix */
int tpf_cmatmul(int dt, int ta, int tb, int64_t batch, int64_t m, int64_t n, int64_t k,
                const void *a, int64_t a_bstride, const void *b, int64_t b_bstride, void *out) {
    if (!is_complex(dt)) return TPF_EBADDTYPE;
    if (ta < 0 || ta > 2 || tb < 0 || tb > 2) return TPF_EBADARG;
    if (batch < 0 || m < 0 || n < 0 || k < 0) return TPF_EBADSIZE;
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return TPF_EBADSIZE;
    size_t es = tpf_dtype_size(dt);
    static const enum CBLAS_TRANSPOSE TR[3] = {CblasNoTrans, CblasTrans, CblasConjTrans};
    int lda = ta ? (int)m : (int)k, ldb = tb ? (int)k : (int)n;
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    for (int64_t p = 0; p < batch; p++) {
        const char *A = (const char *)a + (size_t)(p * a_bstride) * es;
        const char *B = (const char *)b + (size_t)(p * b_bstride) * es;
        char *O = (char *)out + (size_t)(p * m * n) * es;
        if (m == 0 || n == 0) continue;
        if (k == 0) { memset(O, 0, (size_t)(m * n) * es); continue; }
        if (dt == TPF_C64) {
            const float one[2] = {1, 0}, zero[2] = {0, 0};
            scipy_cblas_cgemm(CblasRowMajor, TR[ta], TR[tb], (int)m, (int)n, (int)k, one, A, lda, B, ldb,
                              zero, O, (int)n);
        } else {
            const double one[2] = {1, 0}, zero[2] = {0, 0};
            scipy_cblas_zgemm(CblasRowMajor, TR[ta], TR[tb], (int)m, (int)n, (int)k, one, A, lda, B, ldb,
                              zero, O, (int)n);
        }
    }
    return TPF_OK;
}
