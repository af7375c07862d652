/* Sorting along the last axis and scans (csrc/sort.c on the device).
 *
 * sort/argsort/top_k: the rows of x [outer, n] become (key, position) pairs (keys
 * widened to float for f16/bf16/f32, double for f64, int64 for integers and bool),
 * then a stable merge sort runs as log2(n) passes, each one launch over every
 * element of every row: an element's place in the merge of its run with the
 * neighbouring run is its offset in its own run plus the number of elements of the
 * other run that go before it, found by binary search.  Stable, like the CPU's merge
 * sort, and with the same order (NaN above every number; top_k's ties to the lower
 * index), so positions agree exactly.
 *
 * cumulative_<op>_<dt>: running sums/products along n of x [outer, n, inner], one
 * work-item per (outer, inner) column in the CPU's order.
 */

#define KEY_LOAD(DS, T, KT, CONV)                                                                   \
KERNEL sort_load_##DS(const G T *X, G KT *keys, G i64 *ids, i64 n, i64 total) {                    \
    i64 e = GID0();                                                                                 \
    if (e >= total) return;                                                                         \
    keys[e] = CONV(X[e]);                                                                           \
    ids[e] = e % n;                                                                                 \
}
#define CONV_ID(v) (v)
#define CONV_H(v) tpf_half_to_float(v)
#define CONV_BF(v) tpf_bf16_to_float(v)
#define CONV_L(v) ((i64)(v))
KEY_LOAD(f16, u16, float, CONV_H)
KEY_LOAD(bf16, u16, float, CONV_BF)
KEY_LOAD(f32, float, float, CONV_ID)
#ifdef TPF_FP64
KEY_LOAD(f64, double, double, CONV_ID)
#endif
KEY_LOAD(i8, i8, i64, CONV_L)
KEY_LOAD(u8, u8, i64, CONV_L)
KEY_LOAD(i16, i16, i64, CONV_L)
KEY_LOAD(i32, i32, i64, CONV_L)
KEY_LOAD(i64, i64, i64, CONV_L)
KEY_LOAD(b, u8, i64, CONV_L)

/* BEFORE(a, b): a sorts strictly before b */
#define ASC_F(a, b) ((a) < (b) || (ISNAN(b) && !ISNAN(a)))
#define DESC_F(a, b) ((a) > (b) || (ISNAN(a) && !ISNAN(b)))
#define ASC_I(a, b) ((a) < (b))
#define DESC_I(a, b) ((a) > (b))

/* One merge pass: runs of length w (sorted) merge pairwise into runs of 2w. */
#define MERGE(NAME, KT, BEFORE)                                                                     \
KERNEL sort_merge_##NAME(const G KT *kin, const G i64 *iin, G KT *kout, G i64 *iout, i64 n, i64 w, \
                         i64 total) {                                                               \
    i64 e = GID0();                                                                                 \
    if (e >= total) return;                                                                         \
    i64 row = e / n, pos = e - row * n;                                                             \
    const G KT *k = kin + row * n;                                                                  \
    i64 base = pos / (2 * w) * (2 * w);                                                             \
    i64 mid = base + w < n ? base + w : n, hi = base + 2 * w < n ? base + 2 * w : n;                \
    KT v = k[pos];                                                                                  \
    i64 dest;                                                                                       \
    if (pos < mid) {   /* left run: count right-run elements strictly before v */                  \
        i64 lo = mid, up = hi;                                                                      \
        while (lo < up) { i64 m = lo + (up - lo) / 2; if (BEFORE(k[m], v)) lo = m + 1; else up = m; } \
        dest = pos + (lo - mid);                                                                    \
    } else {           /* right run: count left-run elements not after v */                         \
        i64 lo = base, up = mid;                                                                    \
        while (lo < up) { i64 m = lo + (up - lo) / 2; if (!BEFORE(v, k[m])) lo = m + 1; else up = m; } \
        dest = base + (pos - mid) + (lo - base);                                                    \
    }                                                                                               \
    kout[row * n + dest] = v;                                                                       \
    iout[row * n + dest] = iin[e];                                                                  \
}
MERGE(f_asc, float, ASC_F)
MERGE(f_desc, float, DESC_F)
#ifdef TPF_FP64
MERGE(d_asc, double, ASC_F)
MERGE(d_desc, double, DESC_F)
#endif
MERGE(l_asc, i64, ASC_I)
MERGE(l_desc, i64, DESC_I)

/* the first m of each sorted row: values copied from x (bit for bit), positions */
#define EMIT(E, T, IS, IT)                                                                          \
KERNEL sort_emit_##E##_##IS(const G T *X, const G i64 *ids, G T *vals, G IT *idx, i64 n, i64 m,    \
                            int want_vals, int want_idx, i64 total) {                               \
    i64 e = GID0();                                                                                 \
    if (e >= total) return;                                                                         \
    i64 row = e / m, j = e - row * m, id = ids[row * n + j];                                        \
    if (want_vals) vals[e] = X[row * n + id];                                                       \
    if (want_idx) idx[e] = (IT)id;                                                                  \
}
#define EMIT_ALL(IS, IT) EMIT(1, u8, IS, IT) EMIT(2, u16, IS, IT) EMIT(4, u32, IS, IT) EMIT(8, u64, IS, IT)
EMIT_ALL(i32, i32)
EMIT_ALL(i64, i64)

/* ---- scans ---------------------------------------------------------------------- */
#define SCAN(DS, T, W)                                                                              \
KERNEL cumulative_##DS(const G T *X, G T *O, int op, i64 outer, i64 n, i64 inner, int exclusive,    \
                       int reverse) {                                                               \
    i64 q = GID0();                                                                                 \
    if (q >= outer * inner) return;                                                                 \
    i64 o = q / inner, c = q - o * inner;                                                           \
    T prev = 0;                                                                                     \
    for (i64 s = 0; s < n; s++) {                                                                   \
        i64 i = reverse ? n - 1 - s : s, p = reverse ? i + 1 : i - 1;                               \
        T v;                                                                                        \
        if (s == 0) v = exclusive ? (T)(op ? 1 : 0) : inner == 1 /* the CPU's running accumulator */ \
                      ? (op ? (T)((W)1 * (W)X[o * n + i]) : (T)((W)0 + (W)X[o * n + i]))          \
                      : X[(o * n + i) * inner + c];                                                 \
        else {                                                                                      \
            T xin = exclusive ? X[(o * n + p) * inner + c] : X[(o * n + i) * inner + c];            \
            v = op ? (T)((W)prev * (W)xin) : (T)((W)prev + (W)xin);                                 \
        }                                                                                           \
        O[(o * n + i) * inner + c] = v;                                                             \
        prev = v;                                                                                   \
    }                                                                                               \
}
SCAN(f32, float, float)
#ifdef TPF_FP64
SCAN(f64, double, double)
#endif
SCAN(i8, i8, u32)
SCAN(u8, u8, u32)
SCAN(i16, i16, u32)
SCAN(i32, i32, u32)
SCAN(i64, i64, u64)
