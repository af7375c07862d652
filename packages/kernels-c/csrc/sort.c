/* Sorting along the last axis (sort, argsort, top_k) and scans (cumsum, cumprod).
 *
 * Rows longer than 64 sort by a stable LSD radix sort over order-preserving
 * integer keys; shorter rows sort (key, index) pairs with keys widened to float
 * (f16, bf16, f32), double (f64) or int64 (integers and bool) by a stable merge
 * sort (insertion-sorted runs of 16).  Rows are shared out among threads.  NaN
 * sorts above every number, -0 ties with +0.  Values are copied from the input by element size, so half-precision
 * values come out bit for bit.  top_k keeps a heap of the k best when k is small
 * against the row; ties go to the lower index, as in TensorFlow.
 */
#include "tpf.h"
#include "index_par.h"
#include <stdlib.h>

#define NOT_NAN(x) 0
#define IS_NAN_F(x) isnan(x)

#define DEF_PAIR(KT, SUF, ISNAN)                                                               \
typedef struct { KT k; int64_t i; } pair_##SUF;                                                 \
static inline int asc_##SUF(pair_##SUF a, pair_##SUF b) { return a.k < b.k || (ISNAN(b.k) && !ISNAN(a.k)); } \
static inline int desc_##SUF(pair_##SUF a, pair_##SUF b) { return a.k > b.k || (ISNAN(a.k) && !ISNAN(b.k)); } \
static inline int desctb_##SUF(pair_##SUF a, pair_##SUF b) {                                    \
    if (desc_##SUF(a, b)) return 1;                                                              \
    if (desc_##SUF(b, a)) return 0;                                                              \
    return a.i < b.i;                                                                            \
}

#define DEF_MSORT(SUF, CMP)                                                                     \
static void msort_##CMP##_##SUF(pair_##SUF *a, pair_##SUF *t, int64_t n) {                      \
    const int64_t RUN = 16;                                                                      \
    for (int64_t s = 0; s < n; s += RUN) {                                                       \
        int64_t e = s + RUN < n ? s + RUN : n;                                                   \
        for (int64_t i = s + 1; i < e; i++) {                                                    \
            pair_##SUF v = a[i]; int64_t j = i;                                                  \
            while (j > s && CMP##_##SUF(v, a[j - 1])) { a[j] = a[j - 1]; j--; }                  \
            a[j] = v;                                                                            \
        }                                                                                        \
    }                                                                                            \
    pair_##SUF *src = a, *dst = t;                                                               \
    for (int64_t w = RUN; w < n; w *= 2) {                                                       \
        for (int64_t lo = 0; lo < n; lo += 2 * w) {                                              \
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;          \
            int64_t i = lo, j = mid, o = lo;                                                     \
            while (i < mid && j < hi) dst[o++] = CMP##_##SUF(src[j], src[i]) ? src[j++] : src[i++]; \
            while (i < mid) dst[o++] = src[i++];                                                 \
            while (j < hi) dst[o++] = src[j++];                                                  \
        }                                                                                        \
        pair_##SUF *tmp = src; src = dst; dst = tmp;                                             \
    }                                                                                            \
    if (src != a) memcpy(a, src, sizeof(pair_##SUF) * (size_t)n);                                \
}

/* heap of the k best (by desctb) whose root is the worst kept */
#define DEF_TOPK(SUF)                                                                           \
static void heap_down_##SUF(pair_##SUF *h, int64_t k, int64_t i) {                              \
    for (;;) {                                                                                   \
        int64_t l = 2 * i + 1, r = l + 1, w = i;                                                 \
        if (l < k && desctb_##SUF(h[w], h[l])) w = l;                                            \
        if (r < k && desctb_##SUF(h[w], h[r])) w = r;                                            \
        if (w == i) return;                                                                      \
        pair_##SUF tmp = h[i]; h[i] = h[w]; h[w] = tmp; i = w;                                   \
    }                                                                                            \
}                                                                                                \
static void select_k_##SUF(pair_##SUF *row, int64_t n, pair_##SUF *h, int64_t k) {             \
    for (int64_t i = 0; i < k; i++) h[i] = row[i];                                               \
    for (int64_t i = k / 2 - 1; i >= 0; i--) heap_down_##SUF(h, k, i);                          \
    for (int64_t i = k; i < n; i++)                                                              \
        if (desctb_##SUF(row[i], h[0])) { h[0] = row[i]; heap_down_##SUF(h, k, 0); }            \
}

DEF_PAIR(float, f, IS_NAN_F)
DEF_PAIR(double, d, IS_NAN_F)
DEF_PAIR(int64_t, i, NOT_NAN)
DEF_MSORT(f, asc) DEF_MSORT(f, desc) DEF_MSORT(f, desctb)
DEF_MSORT(d, asc) DEF_MSORT(d, desc) DEF_MSORT(d, desctb)
DEF_MSORT(i, asc) DEF_MSORT(i, desc) DEF_MSORT(i, desctb)
DEF_TOPK(f) DEF_TOPK(d) DEF_TOPK(i)

static int key_kind(int dt) {  /* 0 float, 1 double, 2 int64 */
    switch (dt) {
    case TPF_F16: case TPF_BF16: case TPF_F32: return 0;
    case TPF_F64: return 1;
    case TPF_I8: case TPF_U8: case TPF_I16: case TPF_I32: case TPF_I64: case TPF_BOOL: return 2;
    default: return -1;
    }
}

static void load_f(int dt, const void *x, int64_t base, int64_t n, pair_f *p) {
    for (int64_t j = 0; j < n; j++) {
        float k;
        if (dt == TPF_F16) k = tpf_half_to_float(((const uint16_t *)x)[base + j]);
        else if (dt == TPF_BF16) k = tpf_bf16_to_float(((const uint16_t *)x)[base + j]);
        else k = ((const float *)x)[base + j];
        p[j].k = k; p[j].i = j;
    }
}
static void load_d(int dt, const void *x, int64_t base, int64_t n, pair_d *p) {
    (void)dt;
    for (int64_t j = 0; j < n; j++) { p[j].k = ((const double *)x)[base + j]; p[j].i = j; }
}
static void load_i(int dt, const void *x, int64_t base, int64_t n, pair_i *p) {
    for (int64_t j = 0; j < n; j++) {
        int64_t k;
        switch (dt) {
        case TPF_I8: k = ((const int8_t *)x)[base + j]; break;
        case TPF_U8: case TPF_BOOL: k = ((const uint8_t *)x)[base + j]; break;
        case TPF_I16: k = ((const int16_t *)x)[base + j]; break;
        case TPF_I32: k = ((const int32_t *)x)[base + j]; break;
        default: k = ((const int64_t *)x)[base + j]; break;
        }
        p[j].k = k; p[j].i = j;
    }
}

/* write the first m values (copied from x by position) and positions */
static void emit(size_t es, const void *x, int64_t xbase, const int64_t *ids, int64_t m,
                 void *vals, void *idx, int idx64, int64_t obase) {
    if (vals) {
        switch (es) {
#define EMIT(T) { const T *X = (const T *)x + xbase; T *V = (T *)vals + obase; \
                  for (int64_t j = 0; j < m; j++) V[j] = X[ids[j]]; } break;
        case 1: EMIT(uint8_t)
        case 2: EMIT(uint16_t)
        case 4: EMIT(uint32_t)
        default: EMIT(uint64_t)
#undef EMIT
        }
    }
    if (idx) {
        if (idx64) memcpy((int64_t *)idx + obase, ids, sizeof(int64_t) * (size_t)m);
        else for (int64_t j = 0; j < m; j++) ((int32_t *)idx)[obase + j] = (int32_t)ids[j];
    }
}

#define DEF_SORT_ROWS(SUF)                                                                      \
static int sort_rows_##SUF(int dt, const void *x, void *vals, void *idx, int idx64, size_t es, int64_t n, \
                           int descending, int64_t k, int64_t r0, int64_t r1) {                  \
    if (r0 >= r1) return 0;                                                                      \
    pair_##SUF *p = malloc(sizeof(pair_##SUF) * (size_t)(2 * n));                                \
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)n);                                          \
    if (!p || !ids) { free(p); free(ids); return 1; }                                            \
    for (int64_t r = r0; r < r1; r++) {                                                          \
        load_##SUF(dt, x, r * n, n, p);                                                          \
        int64_t m = n;                                                                           \
        if (k < 0) {                                                                             \
            if (descending) msort_desc_##SUF(p, p + n, n);                                       \
            else msort_asc_##SUF(p, p + n, n);                                                   \
        } else if (k * 8 >= n) {                                                                 \
            msort_desc_##SUF(p, p + n, n); m = k;                                                \
        } else {                                                                                 \
            select_k_##SUF(p, n, p + n, k);                                                      \
            msort_desctb_##SUF(p + n, p, k);                                                     \
            memmove(p, p + n, sizeof(pair_##SUF) * (size_t)k); m = k;                           \
        }                                                                                        \
        for (int64_t j = 0; j < m; j++) ids[j] = p[j].i;                                         \
        emit(es, x, r * n, ids, m, vals, idx, idx64, r * m);                                     \
    }                                                                                            \
    free(p); free(ids);                                                                          \
    return 0;                                                                                    \
}
DEF_SORT_ROWS(f) DEF_SORT_ROWS(d) DEF_SORT_ROWS(i)

/* ---- radix sort: rows longer than RADIX_MIN, whole-row sorts --------------------------------
 * Keys become unsigned integers that order like the values (floats: sign-flipped bits, NaN
 * made the largest, -0 made +0; integers: offset by their minimum), inverted for descending
 * order; an LSD radix sort by bytes is stable, so ties keep their positions as in the merge
 * sort, and bytes every key shares are skipped. */
#define RADIX_MIN 64

static inline uint32_t fkey32(float f) {
    uint32_t b;
    if (f != f) return 0xffffffffu;       /* NaN: above +inf */
    if (f == 0.0f) f = 0.0f;              /* -0 sorts with +0 */
    memcpy(&b, &f, 4);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
static inline uint64_t fkey64(double f) {
    uint64_t b;
    if (f != f) return ~(uint64_t)0;
    if (f == 0.0) f = 0.0;
    memcpy(&b, &f, 8);
    return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}

/* key bytes per dtype: the number of radix passes */
static int key_bytes(int dt) {
    switch (dt) {
    case TPF_I8: case TPF_U8: case TPF_BOOL: return 1;
    case TPF_I16: return 2;
    case TPF_F64: case TPF_I64: return 8;
    default: return 4;                    /* f16, bf16 (as float), f32, i32 */
    }
}

static void load_keys(int dt, const void *x, int64_t base, int64_t n, uint64_t *k, int desc) {
    for (int64_t j = 0; j < n; j++) {
        uint64_t v;
        switch (dt) {
        case TPF_F16: v = fkey32(tpf_half_to_float(((const uint16_t *)x)[base + j])); break;
        case TPF_BF16: v = fkey32(tpf_bf16_to_float(((const uint16_t *)x)[base + j])); break;
        case TPF_F32: v = fkey32(((const float *)x)[base + j]); break;
        case TPF_F64: v = fkey64(((const double *)x)[base + j]); break;
        case TPF_I8: v = (uint64_t)(((const int8_t *)x)[base + j] + 128); break;
        case TPF_U8: case TPF_BOOL: v = ((const uint8_t *)x)[base + j]; break;
        case TPF_I16: v = (uint64_t)(((const int16_t *)x)[base + j] + 32768); break;
        case TPF_I32: v = (uint64_t)((int64_t)((const int32_t *)x)[base + j] + 2147483648LL); break;
        default: v = (uint64_t)((const int64_t *)x)[base + j] ^ 0x8000000000000000ull; break;
        }
        k[j] = desc ? ~v : v;
    }
}

/* rows [r0, r1): sort keys with their positions, emit the first m */
static int radix_rows(int dt, const void *x, void *vals, void *idx, int idx64, size_t es, int64_t n, int desc,
                      int64_t m, int64_t r0, int64_t r1) {
    if (r0 >= r1) return 0;
    uint64_t *k = malloc(sizeof(uint64_t) * (size_t)(2 * n));
    uint32_t *p = malloc(sizeof(uint32_t) * (size_t)(2 * n));
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)n);
    if (!k || !p || !ids) { free(k); free(p); free(ids); return 1; }
    int bytes = key_bytes(dt);
    for (int64_t r = r0; r < r1; r++) {
        uint64_t *ka = k, *kb = k + n;
        uint32_t *pa = p, *pb = p + n;
        load_keys(dt, x, r * n, n, ka, desc);
        for (int64_t j = 0; j < n; j++) pa[j] = (uint32_t)j;
        for (int pass = 0; pass < bytes; pass++) {
            int shift = 8 * pass;
            int64_t cnt[256] = {0};
            for (int64_t j = 0; j < n; j++) cnt[(ka[j] >> shift) & 255]++;
            if (cnt[(ka[0] >> shift) & 255] == n) continue;  /* every key has this byte */
            int64_t sum = 0;
            for (int d = 0; d < 256; d++) { int64_t c = cnt[d]; cnt[d] = sum; sum += c; }
            for (int64_t j = 0; j < n; j++) {
                int64_t o = cnt[(ka[j] >> shift) & 255]++;
                kb[o] = ka[j]; pb[o] = pa[j];
            }
            uint64_t *kt = ka; ka = kb; kb = kt;
            uint32_t *pt = pa; pa = pb; pb = pt;
        }
        for (int64_t j = 0; j < m; j++) ids[j] = pa[j];
        emit(es, x, r * n, ids, m, vals, idx, idx64, r * m);
    }
    free(k); free(p); free(ids);
    return 0;
}

static int sort_impl(int dt, const void *x, void *vals, void *idx, int idx_dt, int64_t outer, int64_t n,
                     int descending, int64_t k) {
    /* vals or idx may be NULL: that output is not written */
    int kind = key_kind(dt);
    if (kind < 0) return TPF_EBADDTYPE;
    if (idx && idx_dt != TPF_I32 && idx_dt != TPF_I64) return TPF_EBADDTYPE;
    if (outer < 0 || n < 0 || k > n) return TPF_EBADSIZE;
    if (outer == 0 || n == 0 || k == 0) return TPF_OK;
    size_t es = tpf_dtype_size(dt);
    int idx64 = idx_dt == TPF_I64, failed = 0;
    int64_t work = outer * n;
    int nt = TPF_NTHREADS(work);
    if (nt > outer) nt = (int)outer;
    /* whole-row sorts of long rows go by radix; short rows and small k by comparisons */
    int radix = n > RADIX_MIN && n < ((int64_t)1 << 32) && (k < 0 || k * 8 >= n);
    /* one block of rows per thread, each with its own buffers */
    PFOR(t, nt,
        int64_t r0 = outer * t / nt, r1 = outer * (t + 1) / nt;
        int bad = radix ? radix_rows(dt, x, vals, idx, idx64, es, n, k < 0 ? descending : 1, k < 0 ? n : k, r0, r1)
                : kind == 0 ? sort_rows_f(dt, x, vals, idx, idx64, es, n, descending, k, r0, r1)
                : kind == 1 ? sort_rows_d(dt, x, vals, idx, idx64, es, n, descending, k, r0, r1)
                : sort_rows_i(dt, x, vals, idx, idx64, es, n, descending, k, r0, r1);
        if (bad) failed = 1;
    );
    return failed ? TPF_ENOMEM : TPF_OK;
}

/* Sort each row of x [outer, n]: values into vals (when want & 1) and positions into idx (when want & 2). */
int tpf_sort(int dt, const void *x, void *vals, void *idx, int idx_dt, int64_t outer, int64_t n, int descending,
             int want) {
    if (!(want & 3)) return TPF_EBADARG;
    return sort_impl(dt, x, (want & 1) ? vals : NULL, (want & 2) ? idx : NULL, idx_dt, outer, n,
                     descending ? 1 : 0, -1);
}

/* The k largest of each row of x [outer, n], largest first: vals [outer, k], idx [outer, k]. */
int tpf_top_k(int dt, const void *x, void *vals, void *idx, int idx_dt, int64_t outer, int64_t n, int64_t k) {
    if (k < 0) return TPF_EBADSIZE;
    return sort_impl(dt, x, vals, idx, idx_dt, outer, n, 1, k);
}

/* ---- scans ---------------------------------------------------------------------
 * x [outer, n, inner] -> out: running sum (op 0) or product (op 1) along n, optionally
 * exclusive (shifted by one, starting from 0 or 1) and/or reversed (from the end).
 * Integers accumulate in unsigned W (wrapping modulo 2**bits, as NumPy does: signed
 * overflow is undefined in C; unsigned short operands would promote to int). */
#define SCAN_ROW(T, W, OP)                                                                       \
    {   /* one contiguous row: a running accumulator */                                          \
        const T *xr = X + o * n; T *orow = O + o * n;                                            \
        T acc = (T)(op ? 1 : 0);                                                                 \
        if (!reverse) {                                                                          \
            if (exclusive) for (int64_t i = 0; i < n; i++) { orow[i] = acc; acc = (T)((W)acc OP (W)xr[i]); } \
            else for (int64_t i = 0; i < n; i++) { acc = (T)((W)acc OP (W)xr[i]); orow[i] = acc; }     \
        } else {                                                                                 \
            if (exclusive) for (int64_t i = n - 1; i >= 0; i--) { orow[i] = acc; acc = (T)((W)acc OP (W)xr[i]); } \
            else for (int64_t i = n - 1; i >= 0; i--) { acc = (T)((W)acc OP (W)xr[i]); orow[i] = acc; } \
        }                                                                                        \
    }

#define SCAN(T, W)                                                                               \
    do {                                                                                         \
        const T *X = (const T *)x; T *O = (T *)out;                                             \
        PFOR(task, outer * nch,                                                                  \
            int64_t o = task / nch, ch = task % nch;                                             \
            int64_t c0 = ch * csz, c1 = c0 + csz < inner ? c0 + csz : inner;                     \
            tpf_fp_enter(); (void)isf;                                                           \
            if (inner == 1) {                                                                    \
                if (op) SCAN_ROW(T, W, *) else SCAN_ROW(T, W, +)                                       \
                continue;                                                                        \
            }                                                                                    \
            for (int64_t s = 0; s < n; s++) {                                                    \
                int64_t i = reverse ? n - 1 - s : s, p = reverse ? i + 1 : i - 1;                \
                T *orow = O + (o * n + i) * inner;                                               \
                const T *xrow = X + (o * n + i) * inner;                                         \
                if (s == 0) {                                                                    \
                    for (int64_t c = c0; c < c1; c++) orow[c] = exclusive ? (T)(op ? 1 : 0) : xrow[c]; \
                } else {                                                                         \
                    const T *prev = O + (o * n + p) * inner;                                     \
                    const T *xin = exclusive ? X + (o * n + p) * inner : xrow;                   \
                    if (op) for (int64_t c = c0; c < c1; c++) orow[c] = (T)((W)prev[c] * (W)xin[c]);   \
                    else for (int64_t c = c0; c < c1; c++) orow[c] = (T)((W)prev[c] + (W)xin[c]);      \
                }                                                                                \
            }                                                                                    \
        );                                                                                       \
    } while (0)

int tpf_cumulative(int op, int dt, const void *x, void *out, int64_t outer, int64_t n, int64_t inner,
                   int exclusive, int reverse) {
    if (op != 0 && op != 1) return TPF_EBADOP;
    if (outer < 0 || n < 0 || inner < 0) return TPF_EBADSIZE;
    if (outer == 0 || n == 0 || inner == 0) return TPF_OK;
    int nt = TPF_NTHREADS(outer * n * inner);
    int64_t nch = (outer >= nt) ? 1 : (inner >= 64 * nt ? nt : 1);
    int64_t csz = (inner + nch - 1) / nch;
    if (outer * nch < nt) nt = (int)(outer * nch);
    if (nt < 1) nt = 1;
    int isf = dt == TPF_F32 || dt == TPF_F64;
    switch (dt) {
    case TPF_F32: SCAN(float, float); break;
    case TPF_F64: SCAN(double, double); break;
    case TPF_I8: SCAN(int8_t, uint32_t); break;
    case TPF_U8: SCAN(uint8_t, uint32_t); break;
    case TPF_I16: SCAN(int16_t, uint32_t); break;
    case TPF_I32: SCAN(int32_t, uint32_t); break;
    case TPF_I64: SCAN(int64_t, uint64_t); break;
    default: return TPF_EBADDTYPE;
    }
    return TPF_OK;
}
