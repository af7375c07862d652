/* Reductions over the middle axis of an (outer, r, inner) view; the Python
 * side coalesces any set of reduced axes into that form (transposing first when
 * the reduced axes are not adjacent).
 *
 * Accumulators: float32 sums and products accumulate in double; integer sums,
 * products and means accumulate in 64-bit unsigned arithmetic and wrap to the
 * dtype (as TensorFlow's int reductions and NumPy's `sum(dtype=...)` do); integer
 * means truncate toward zero.  Empty reductions give the identity: sum 0, prod 1,
 * max the lowest value (-inf), min the highest, float mean NaN, integer mean 0.
 * max/min propagate NaN.
 *
 * Loops keep eight independent accumulators along a contiguous row (inner == 1)
 * or a block of accumulators across `inner`, so they vectorize without
 * reassociating anything the compiler may not.  Work is split across threads by
 * output rows, by inner columns, or (for few outputs) by slices of the reduced
 * axis whose partial results are combined at the end.
 */
#include <stdlib.h>
#include "tpf.h"
#include "reduce.h"

#define BLK 256      /* accumulators kept across `inner` */
#define LANES 64     /* independent accumulators along a contiguous row */

/* the loops are compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time */

/* One kernel per (op, dtype): reduce x[o, i, j] over i in [i0, i1) for o in
 * [o0, o1) and j in [j0, j1).  With part == NULL the finished values go to out;
 * otherwise the raw accumulators go to part[o * inner + j].  Inside STEP, `acc` is
 * the accumulator and `v` the value; FIN turns `acc` into the output (r = length). */
#define RED_DEF(NAME, SUF, T, ACC, TO, INIT, STEP, FIN)                                  \
TPF_CLONES static void rk_##NAME##_##SUF(const void *xv, void *ov, void *pv, int64_t r, int64_t inner, \
                              int64_t o0, int64_t o1, int64_t j0, int64_t j1,             \
                              int64_t i0, int64_t i1) {                                   \
    const T *X = (const T *)xv; TO *O = (TO *)ov; ACC *P = (ACC *)pv;                     \
    for (int64_t o = o0; o < o1; o++) {                                                   \
        if (inner == 1) {                                                                 \
            const T *x = X + o * r;                                                       \
            ACC acc = INIT;                                                               \
            int64_t i = i0;                                                               \
            if (i1 - i0 >= 2 * LANES) {                                                   \
                ACC a[LANES];                                                             \
                for (int k = 0; k < LANES; k++) a[k] = INIT;                              \
                for (; i + LANES <= i1; i += LANES)                                       \
                    for (int k = 0; k < LANES; k++) { ACC acc = a[k]; T v = x[i + k]; STEP; a[k] = acc; } \
                acc = a[0];                                                               \
                for (int k = 1; k < LANES; k++) { ACC v = a[k]; STEP; }                   \
            }                                                                             \
            for (; i < i1; i++) { T v = x[i]; STEP; }                                     \
            if (P) P[o] = acc; else O[o] = (TO)(FIN);                                     \
        } else if (inner <= BLK / 2 && j0 == 0 && j1 == inner) {                          \
            /* few columns: the (i, j) slab is contiguous; accumulate W = m * inner         \
             * consecutive values at once (m partial sums per column), then fold them */    \
            int64_t W = (BLK / inner) * inner, tot = (i1 - i0) * inner, q0 = 0;            \
            const T *x = X + (o * r + i0) * inner;                                        \
            ACC a[BLK];                                                                   \
            for (int64_t q = 0; q < W; q++) a[q] = INIT;                                  \
            for (; q0 + W <= tot; q0 += W)                                                \
                for (int64_t q = 0; q < W; q++) { ACC acc = a[q]; T v = x[q0 + q]; STEP; a[q] = acc; } \
            for (int64_t q = 0; q < tot - q0; q++) { ACC acc = a[q]; T v = x[q0 + q]; STEP; a[q] = acc; } \
            for (int64_t k = 0; k < inner; k++) {                                         \
                ACC acc = a[k];                                                           \
                for (int64_t q = k + inner; q < W; q += inner) { ACC v = a[q]; STEP; }    \
                if (P) P[o * inner + k] = acc; else O[o * inner + k] = (TO)(FIN);         \
            }                                                                             \
        } else {                                                                          \
            for (int64_t jb = j0; jb < j1; jb += BLK) {                                   \
                int64_t nb = j1 - jb < BLK ? j1 - jb : BLK;                               \
                ACC a[BLK];                                                               \
                for (int64_t k = 0; k < nb; k++) a[k] = INIT;                             \
                for (int64_t i = i0; i < i1; i++) {                                       \
                    const T *x = X + (o * r + i) * inner + jb;                            \
                    for (int64_t k = 0; k < nb; k++) { ACC acc = a[k]; T v = x[k]; STEP; a[k] = acc; } \
                }                                                                         \
                if (P) { for (int64_t k = 0; k < nb; k++) P[o * inner + jb + k] = a[k]; } \
                else { for (int64_t k = 0; k < nb; k++) { ACC acc = a[k]; O[o * inner + jb + k] = (TO)(FIN); } } \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
}                                                                                         \
static void rc_##NAME##_##SUF(const void *pv, int nparts, int64_t count, void *ov, int64_t r) { \
    const ACC *P = (const ACC *)pv; TO *O = (TO *)ov;                                     \
    for (int64_t q = 0; q < count; q++) {                                                 \
        ACC acc = P[q];                                                                   \
        for (int t = 1; t < nparts; t++) { ACC v = P[t * count + q]; STEP; }              \
        O[q] = (TO)(FIN);                                                                 \
    }                                                                                     \
}

#define RED RED_DEF
#include "reduce.def"
#undef RED

typedef void (*redfn)(const void *, void *, void *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                      int64_t, int64_t);
typedef void (*combfn)(const void *, int, int64_t, void *, int64_t);
typedef struct { redfn k; combfn c; size_t acc; } redk;

#define RK(NAME, SUF, ACC) {rk_##NAME##_##SUF, rc_##NAME##_##SUF, sizeof(ACC)}
#define RROW(NAME) {[TPF_F32] = RK(NAME, f32, double), [TPF_F64] = RK(NAME, f64, double),          \
    [TPF_I8] = RK(NAME, i8, uint64_t), [TPF_U8] = RK(NAME, u8, uint64_t), [TPF_I16] = RK(NAME, i16, uint64_t), \
    [TPF_I32] = RK(NAME, i32, uint64_t), [TPF_I64] = RK(NAME, i64, uint64_t)}
#define MROW(NAME) {[TPF_F32] = RK(NAME, f32, float), [TPF_F64] = RK(NAME, f64, double),           \
    [TPF_I8] = RK(NAME, i8, int8_t), [TPF_U8] = RK(NAME, u8, uint8_t), [TPF_I16] = RK(NAME, i16, int16_t), \
    [TPF_I32] = RK(NAME, i32, int32_t), [TPF_I64] = RK(NAME, i64, int64_t), [TPF_BOOL] = RK(NAME, b, uint8_t)}

static const redk red_table[TPF_RED_NOPS][TPF_NDTYPES] = {
    [TPF_RED_SUM] = RROW(sum), [TPF_RED_PROD] = RROW(prod), [TPF_RED_MEAN] = RROW(mean),
    [TPF_RED_MAX] = MROW(max), [TPF_RED_MIN] = MROW(min),
    [TPF_RED_ANY] = {[TPF_BOOL] = RK(any, b, uint8_t)},
    [TPF_RED_ALL] = {[TPF_BOOL] = RK(all, b, uint8_t)},
};

int tpf_reduce(int op, int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner) {
    if (op < 0 || op >= TPF_RED_NOPS) return TPF_EBADOP;
    if (dt < 0 || dt >= TPF_NDTYPES || !red_table[op][dt].k) return TPF_EBADDTYPE;
    if (outer < 0 || r < 0 || inner < 0) return TPF_EBADSIZE;
    if (outer == 0 || inner == 0) return TPF_OK;
    const redk *K = &red_table[op][dt];
    int nt = TPF_NTHREADS(outer * r * inner);
    if (nt <= 1) {
        tpf_fp_enter();
        K->k(x, out, NULL, r, inner, 0, outer, 0, inner, 0, r);
        return TPF_OK;
    }
    if (outer >= nt) {                      /* split output rows */
        int64_t chunk = (outer + nt - 1) / nt;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < nt; t++) {
            tpf_fp_enter();
            int64_t lo = t * chunk, hi = lo + chunk < outer ? lo + chunk : outer;
            if (lo < hi) K->k(x, out, NULL, r, inner, lo, hi, 0, inner, 0, r);
        }
        return TPF_OK;
    }
    if (inner >= (int64_t)nt * 64) {        /* split columns */
        int64_t chunk = (inner + nt - 1) / nt;
        chunk = (chunk + 15) & ~(int64_t)15;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < nt; t++) {
            tpf_fp_enter();
            int64_t lo = t * chunk, hi = lo + chunk < inner ? lo + chunk : inner;
            if (lo < hi) K->k(x, out, NULL, r, inner, 0, outer, lo, hi, 0, r);
        }
        return TPF_OK;
    }
    /* few outputs: slices of the reduced axis, then combine the partial results */
    int64_t count = outer * inner;
    char *part = malloc((size_t)nt * (size_t)count * K->acc);
    if (!part) return TPF_ENOMEM;
    int64_t chunk = (r + nt - 1) / nt;
    chunk = (chunk + 7) & ~(int64_t)7;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        int64_t lo = t * chunk < r ? t * chunk : r, hi = lo + chunk < r ? lo + chunk : r;
        K->k(x, out, part + (size_t)t * (size_t)count * K->acc, r, inner, 0, outer, 0, inner, lo, hi);
    }
    K->c(part, nt, count, out, r);
    free(part);
    return TPF_OK;
}

/* argmax/argmin: the first index of the extreme value; the first NaN wins (as in NumPy).
 * Along a row, LANES independent (best value, index) pairs are updated branch-free and
 * merged at the end (equal values: the smaller index); across `inner`, one pair per
 * column of a block, walking the rows in order. */
#define ARG_LOOP(NAME, SUF, T, BETTER)                                               \
TPF_CLONES static void arg_##NAME##_##SUF(const void *xv, int64_t *O, int64_t o0, int64_t o1, \
                                int64_t r, int64_t inner) {                          \
    const T *X = (const T *)xv;                                                      \
    for (int64_t o = o0; o < o1; o++) {                                              \
        if (inner == 1) {                                                            \
            const T *x = X + o * r;                                                  \
            T b = x[0]; int64_t best = 0, i = 1;                                     \
            if (r >= 2 * LANES) {                                                    \
                T bv[LANES]; int64_t bi[LANES];                                      \
                for (int k = 0; k < LANES; k++) { bv[k] = x[k]; bi[k] = k; }         \
                for (i = LANES; i + LANES <= r; i += LANES)                          \
                    for (int k = 0; k < LANES; k++) {                                \
                        T v = x[i + k], bk = bv[k];                                  \
                        int up = BETTER;                                             \
                        bv[k] = up ? v : bk; bi[k] = up ? i + k : bi[k];             \
                    }                                                                \
                b = bv[0]; best = bi[0];                                             \
                for (int k = 1; k < LANES; k++) {                                    \
                    T v = bv[k], bk = b;                                             \
                    int same = (v == bk) | ((v != v) & (bk != bk));                  \
                    if ((BETTER) || (same && bi[k] < best)) { b = v; best = bi[k]; } \
                }                                                                    \
            }                                                                        \
            for (; i < r; i++) { T v = x[i], bk = b; if (BETTER) { b = v; best = i; } } \
            O[o] = best;                                                             \
        } else {                                                                     \
            for (int64_t jb = 0; jb < inner; jb += BLK) {                            \
                int64_t nb = inner - jb < BLK ? inner - jb : BLK;                    \
                const T *x0 = X + o * r * inner + jb;                                \
                T bv[BLK]; int64_t bi[BLK];                                          \
                for (int64_t k = 0; k < nb; k++) { bv[k] = x0[k]; bi[k] = 0; }       \
                for (int64_t i = 1; i < r; i++) {                                    \
                    const T *xr = x0 + i * inner;                                    \
                    for (int64_t k = 0; k < nb; k++) {                               \
                        T v = xr[k], bk = bv[k];                                     \
                        int up = BETTER;                                             \
                        bv[k] = up ? v : bk; bi[k] = up ? i : bi[k];                 \
                    }                                                                \
                }                                                                    \
                for (int64_t k = 0; k < nb; k++) O[o * inner + jb + k] = bi[k];      \
            }                                                                        \
        }                                                                            \
    }                                                                                \
}
/* v beats the best so far bk: strictly greater (smaller), or the first NaN */
#define ARG_ALL(SUF, T) ARG_LOOP(max, SUF, T, (v > bk) | ((v != v) & (bk == bk))) \
                        ARG_LOOP(min, SUF, T, (v < bk) | ((v != v) & (bk == bk)))
ARG_ALL(f32, float) ARG_ALL(f64, double) ARG_ALL(i8, int8_t) ARG_ALL(u8, uint8_t)
ARG_ALL(i16, int16_t) ARG_ALL(i32, int32_t) ARG_ALL(i64, int64_t) ARG_ALL(b, uint8_t)

typedef void (*argfn)(const void *, int64_t *, int64_t, int64_t, int64_t, int64_t);

int tpf_argreduce(int op, int dt, const void *x, void *outv, int64_t outer, int64_t r, int64_t inner) {
    static const argfn tab[2][TPF_NDTYPES] = {
        {[TPF_F32] = arg_max_f32, [TPF_F64] = arg_max_f64, [TPF_I8] = arg_max_i8, [TPF_U8] = arg_max_u8,
         [TPF_I16] = arg_max_i16, [TPF_I32] = arg_max_i32, [TPF_I64] = arg_max_i64, [TPF_BOOL] = arg_max_b},
        {[TPF_F32] = arg_min_f32, [TPF_F64] = arg_min_f64, [TPF_I8] = arg_min_i8, [TPF_U8] = arg_min_u8,
         [TPF_I16] = arg_min_i16, [TPF_I32] = arg_min_i32, [TPF_I64] = arg_min_i64, [TPF_BOOL] = arg_min_b},
    };
    if (op < 0 || op > 1) return TPF_EBADOP;
    if (dt < 0 || dt >= TPF_NDTYPES || !tab[op][dt]) return TPF_EBADDTYPE;
    if (outer < 0 || r < 1 || inner < 0) return TPF_EBADSIZE;
    int64_t *out = (int64_t *)outv;
    int nt = TPF_NTHREADS(outer * r * inner);
    if (nt > outer) nt = (int)(outer > 0 ? outer : 1);
    if (nt <= 1) { tab[op][dt](x, out, 0, outer, r, inner); return TPF_OK; }
    int64_t chunk = (outer + nt - 1) / nt;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        int64_t lo = t * chunk, hi = lo + chunk < outer ? lo + chunk : outer;
        if (lo < hi) tab[op][dt](x, out, lo, hi, r, inner);
    }
    return TPF_OK;
}
