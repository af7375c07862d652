/* Indexing (csrc/index.c on the device): gather and its adjoint scatter-add along an
 * axis, gather_nd / scatter_nd, one_hot, the non-zero count and coordinates behind
 * where(x), select.  Suffixes: element size (1, 2, 4, 8) for pure data movement,
 * the dtype for arithmetic, the index dtype (i32, i64) last.
 *
 * Index validation runs first (validate_*): the first bad position goes to *flag
 * through an atomic minimum, the host reads it and fails before anything is
 * written, as the CPU kernels do.  Scatters keep the CPU's order of updates (one
 * work-item per output column walks the updates in order), so sums come out bit
 * for bit and "the last update wins" holds.
 */

#define IDX_VARIANTS(M) M(i32, i32) M(i64, i64)

/* ---- validation ------------------------------------------------------------- */

#define VALIDATE(IS, IT)                                                                            \
/* v in [0, hi), or v < 0 allowed when allow_neg */                                                \
KERNEL validate_idx_##IS(const G IT *idx, i64 base, i64 n, int allow_neg, i64 hi, G int *flag) {  \
    i64 i = GID0();                                                                                 \
    if (i >= n) return;                                                                             \
    i64 v = idx[base + i];                                                                          \
    if (v >= hi || (v < 0 && !allow_neg)) ATOMIC_MIN_I32(flag, i);                                  \
}                                                                                                   \
/* non-decreasing within each row of nidx indices (sorted segment ids) */                          \
KERNEL validate_sorted_##IS(const G IT *idx, i64 base, i64 n, i64 nidx, G int *flag) {             \
    i64 i = GID0(), g = base + i;                                                                   \
    if (i >= n) return;                                                                             \
    if (g % nidx && idx[g] < idx[g - 1]) ATOMIC_MIN_I32(flag, i);                                   \
}                                                                                                   \
/* tuples of k indices, component d in [0, dims[d]) */                                            \
KERNEL validate_nd_##IS(const G IT *idx, i64 base, i64 ntup, int k, dims_t dims, G int *flag) {   \
    i64 t = GID0();                                                                                 \
    if (t >= ntup) return;                                                                          \
    for (int d = 0; d < k; d++) {                                                                   \
        i64 v = idx[(base + t) * k + d];                                                            \
        if (v < 0 || v >= dims.d[d]) { ATOMIC_MIN_I32(flag, t); return; }                          \
    }                                                                                               \
}
IDX_VARIANTS(VALIDATE)

/* ---- gather along an axis ------------------------------------------------------
 * params [batch, outer, axis_n, inner], idx [batch, nidx] -> out [batch, outer, nidx, inner] */
#define GATHER(E, T, IS, IT)                                                                        \
KERNEL gather_##E##_##IS(const G T *P, const G IT *idx, G T *O, i64 outer, i64 axis_n, i64 nidx,  \
                          i64 inner, i64 total) {                                                   \
    i64 e = GID0();                                                                                 \
    if (e >= total) return;                                                                         \
    i64 r = e / inner, c = e - r * inner;                                                           \
    i64 j = r % nidx, bo = r / nidx, b = bo / outer;                                                \
    i64 v = idx[b * nidx + j];                                                                      \
    O[e] = P[(bo * axis_n + v) * inner + c];                                                        \
}
#define GATHER_ALL(IS, IT) GATHER(1, u8, IS, IT) GATHER(2, u16, IS, IT) GATHER(4, u32, IS, IT) GATHER(8, u64, IS, IT)
IDX_VARIANTS(GATHER_ALL)

/* ---- scatter-add along an axis (out zeroed by the host) --------------------------
 * upd [batch, outer, nidx, inner], idx [batch, nidx] -> out [batch, outer, axis_n, inner];
 * negative indices are skipped (the host has validated them already). */
#define SCATTER_ADD(DS, T, W, IS, IT)                                                               \
KERNEL scatter_add_axis_##DS##_##IS(const G T *U, const G IT *idx, G T *O, i64 bo_n, i64 outer,    \
                                    i64 axis_n, i64 nidx, i64 inner) {                              \
    i64 q = GID0();                                                                                 \
    if (q >= bo_n * inner) return;                                                                  \
    i64 bo = q / inner, c = q - bo * inner, b = bo / outer;                                         \
    for (i64 j = 0; j < nidx; j++) {                                                                \
        i64 v = idx[b * nidx + j];                                                                  \
        if (v < 0) continue;                                                                        \
        i64 o = (bo * axis_n + v) * inner + c;                                                      \
        O[o] = (T)((W)O[o] + (W)U[(bo * nidx + j) * inner + c]);                                    \
    }                                                                                               \
}
#ifdef TPF_FP64
#define SCATTER_F64(M, IS, IT) M(f64, double, double, IS, IT)
#else
#define SCATTER_F64(M, IS, IT)
#endif
#define NUMERIC_KERNELS(M, IS, IT)                                                                  \
    M(f32, float, float, IS, IT) SCATTER_F64(M, IS, IT) M(i8, i8, u32, IS, IT) M(u8, u8, u32, IS, IT) \
    M(i16, i16, u32, IS, IT) M(i32, i32, u32, IS, IT) M(i64, i64, u64, IS, IT)
#define SCATTER_ADD_ALL(IS, IT) NUMERIC_KERNELS(SCATTER_ADD, IS, IT)
IDX_VARIANTS(SCATTER_ADD_ALL)

/* ---- gather_nd / scatter_nd ------------------------------------------------------ */

#define TUPLE_OFFSET(IDX, T, K, DIMS, OFF)                                                          \
    { OFF = 0; for (int d_ = 0; d_ < (K); d_++) OFF = OFF * (DIMS).d[d_] + (IDX)[(T) * (K) + d_]; }

/* params [batch, dims..., inner], idx [batch, nrest, k] -> out [batch, nrest, inner] */
#define GATHER_ND(E, T, IS, IT)                                                                     \
KERNEL gather_nd_##E##_##IS(const G T *P, const G IT *idx, G T *O, i64 nrest, int k, dims_t dims,  \
                             i64 slab, i64 inner, i64 total) {                                      \
    i64 e = GID0();                                                                                 \
    if (e >= total) return;                                                                         \
    i64 r = e / inner, c = e - r * inner, b = r / nrest, off;                                       \
    TUPLE_OFFSET(idx, r, k, dims, off)                                                              \
    O[e] = P[(b * slab + off) * inner + c];                                                         \
}
#define GATHER_ND_ALL(IS, IT) GATHER_ND(1, u8, IS, IT) GATHER_ND(2, u16, IS, IT) GATHER_ND(4, u32, IS, IT) \
                              GATHER_ND(8, u64, IS, IT)
IDX_VARIANTS(GATHER_ND_ALL)

/* out [dims..., inner] holds the starting values; one work-item per column c walks the
 * n updates in order: set (the last wins) by element size, add by dtype */
#define SCATTER_ND(NAME, T, W, STMT, IS, IT)                                                        \
KERNEL scatter_nd_##NAME##_##IS(const G IT *idx, const G T *U, G T *O, i64 n, int k, dims_t dims,  \
                                 i64 inner) {                                                       \
    i64 c = GID0();                                                                                 \
    if (c >= inner) return;                                                                         \
    typedef T Tt;                                                                                   \
    typedef W Wt;                                                                                   \
    for (i64 t = 0; t < n; t++) {                                                                   \
        i64 off;                                                                                    \
        TUPLE_OFFSET(idx, t, k, dims, off)                                                          \
        i64 o = off * inner + c;                                                                    \
        T u = U[t * inner + c];                                                                     \
        STMT;                                                                                       \
    }                                                                                               \
}
#define SET_STMT O[o] = u
#define ADD_STMT O[o] = (Tt)((Wt)O[o] + (Wt)u)
#define SCATTER_ND_SET(IS, IT)                                                                      \
    SCATTER_ND(set_1, u8, u8, SET_STMT, IS, IT) SCATTER_ND(set_2, u16, u16, SET_STMT, IS, IT)      \
    SCATTER_ND(set_4, u32, u32, SET_STMT, IS, IT) SCATTER_ND(set_8, u64, u64, SET_STMT, IS, IT)
IDX_VARIANTS(SCATTER_ND_SET)
#define SCATTER_ND_ADD1(DS, T, W, IS, IT) SCATTER_ND(add_##DS, T, W, ADD_STMT, IS, IT)
#define SCATTER_ND_ADD(IS, IT) NUMERIC_KERNELS(SCATTER_ND_ADD1, IS, IT)
IDX_VARIANTS(SCATTER_ND_ADD)

/* ---- one_hot: idx [outer, inner] -> out [outer, depth, inner] ---------------------- */
#define ONE_HOT(E, T, IS, IT)                                                                       \
KERNEL one_hot_##E##_##IS(const G IT *idx, G T *O, i64 depth, i64 inner, u64 on, u64 off, i64 total) { \
    i64 e = GID0();                                                                                 \
    if (e >= total) return;                                                                         \
    i64 c = e % inner, od = e / inner, d = od % depth, o = od / depth;                              \
    O[e] = (i64)idx[o * inner + c] == d ? (T)on : (T)off;                                           \
}
#define ONE_HOT_ALL(IS, IT) ONE_HOT(1, u8, IS, IT) ONE_HOT(2, u16, IS, IT) ONE_HOT(4, u32, IS, IT) ONE_HOT(8, u64, IS, IT)
IDX_VARIANTS(ONE_HOT_ALL)

/* ---- non-zeros: counts per chunk, their exclusive scan, coordinates ------------------ */
#define NZ(DS, T, TEST)                                                                             \
KERNEL nz_count_##DS(const G T *X, i64 n, i64 chunk, G i64 *counts) {                               \
    i64 q = GID0(), s = q * chunk;                                                                  \
    if (s >= n) return;                                                                             \
    i64 e = s + chunk < n ? s + chunk : n, c = 0;                                                   \
    for (i64 i = s; i < e; i++) { T v = X[i]; c += (TEST) ? 1 : 0; }                                \
    counts[q] = c;                                                                                  \
}                                                                                                   \
KERNEL nz_write_##DS(const G T *X, i64 n, i64 chunk, const G i64 *offsets, int nd, dims_t shape,   \
                     G i64 *O) {                                                                    \
    i64 q = GID0(), s = q * chunk;                                                                  \
    if (s >= n) return;                                                                             \
    i64 e = s + chunk < n ? s + chunk : n;                                                          \
    G i64 *o = O + offsets[q] * nd;                                                                 \
    for (i64 i = s; i < e; i++) {                                                                   \
        T v = X[i];                                                                                 \
        if (TEST) {                                                                                 \
            i64 rem = i;                                                                            \
            for (int d = nd - 1; d >= 0; d--) { o[d] = rem % shape.d[d]; rem /= shape.d[d]; }        \
            o += nd;                                                                                \
        }                                                                                           \
    }                                                                                               \
}
NZ(h16, u16, (v & 0x7fff) != 0)
NZ(f32, float, v != 0)
#ifdef TPF_FP64
NZ(f64, double, v != 0)
#else
NZ(f64, u64, (v & 0x7fffffffffffffffUL) != 0)
#endif
NZ(i8, i8, v != 0)
NZ(u8, u8, v != 0)
NZ(i16, i16, v != 0)
NZ(i32, i32, v != 0)
NZ(i64, i64, v != 0)

/* exclusive prefix sums of counts (in place), the total in total[0]: one work-item */
KERNEL nz_scan(G i64 *counts, i64 nchunks, G i64 *total) {
    if (GID0() != 0) return;
    i64 acc = 0;
    for (i64 q = 0; q < nchunks; q++) { i64 c = counts[q]; counts[q] = acc; acc += c; }
    total[0] = acc;
}

/* ---- select: out = cond ? a : b, every operand through strides -------------------- */
#define SELECT(E, T)                                                                                \
KERNEL select_##E(const G u8 *C, const G T *A, const G T *B, G T *O, int nd, dims_t shape,         \
                  dims_t cs, dims_t as, dims_t bs, i64 total) {                                     \
    i64 i = GID0();                                                                                 \
    if (i >= total) return;                                                                         \
    i64 rem = i, co = 0, ao = 0, bo = 0;                                                            \
    for (int d = nd - 1; d >= 0; d--) {                                                             \
        i64 n = shape.d[d], k = rem % n;                                                            \
        rem /= n;                                                                                   \
        co += k * cs.d[d]; ao += k * as.d[d]; bo += k * bs.d[d];                                    \
    }                                                                                               \
    O[i] = C[co] ? A[ao] : B[bo];                                                                   \
}
SELECT(1, u8)
SELECT(2, u16)
SELECT(4, u32)
SELECT(8, u64)
