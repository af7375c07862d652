/* Reductions over the middle axis of an (outer, r, inner) view (csrc/reduce.c on the device).
 *
 * reduce_<op>_<dt>: one work-item per output (o, j) and part p: it reduces
 * i in [p * chunk, (p + 1) * chunk) with eight accumulators along a contiguous row (the
 * CPU's way), or on GPUs every nparts-th i from p (coalesced), and either finishes the
 * value (nparts == 1) or
 * stores the raw accumulator in P; reducec_<op>_<dt> then combines the parts in
 * order.  Few outputs over a long axis thus still spread over the device.
 * Accumulators are csrc/reduce.c's: float32 sums and products in double, integer
 * sums, products and means in wrapping 64-bit unsigned arithmetic.
 *
 * argreduce_<op>_<dt> (+ argreducec_...): the first index of the extreme value, the
 * first NaN winning, whatever the split.
 */

#define RED_KERNEL(NAME, SUF, T, ACC, TO, INIT, STEP, FIN)                                       \
KERNEL reduce_##NAME##_##SUF(const G T *X, G TO *O, G ACC *P, i64 outer, i64 r, i64 inner,       \
                             i64 nparts, i64 chunk, int il) {                                    \
    i64 q = GID0(), count = outer * inner;                                                       \
    if (q >= count * nparts) return;                                                             \
    i64 part = q / count;                                                                        \
    q -= part * count;                                                                           \
    i64 o = q / inner, j = q - o * inner;                                                        \
    const G T *x = X + o * r * inner + j;                                                        \
    ACC acc = INIT;                                                                              \
    if (il) {              /* interleaved (GPUs): neighbouring work-items read neighbours */     \
        for (i64 i = part; i < r; i += nparts) { T v = x[i * inner]; STEP; }                     \
    } else {               /* a chunk per work-item (CPUs): contiguous, 8 accumulators */        \
        i64 i0 = part * chunk, i1 = i0 + chunk < r ? i0 + chunk : r, i = i0;                     \
        if (inner == 1 && i1 - i0 >= 16) {                                                       \
            ACC a[8];                                                                            \
            for (int k = 0; k < 8; k++) a[k] = INIT;                                             \
            for (; i + 8 <= i1; i += 8)                                                          \
                for (int k = 0; k < 8; k++) { ACC acc = a[k]; T v = x[i + k]; STEP; a[k] = acc; } \
            for (int k = 0; k < 8; k++) { ACC v = a[k]; STEP; }                                  \
        }                                                                                        \
        for (; i < i1; i++) { T v = x[i * inner]; STEP; }                                        \
    }                                                                                            \
    if (nparts == 1) O[q] = (TO)(FIN);                                                           \
    else P[part * count + q] = acc;                                                              \
}                                                                                                \
KERNEL reducec_##NAME##_##SUF(const G ACC *P, G TO *O, i64 count, i64 nparts, i64 r) {          \
    i64 q = GID0();                                                                              \
    if (q >= count) return;                                                                      \
    ACC acc = P[q];                                                                              \
    for (i64 t = 1; t < nparts; t++) { ACC v = P[t * count + q]; STEP; }                         \
    O[q] = (TO)(FIN);                                                                            \
}

#define RED RED_KERNEL
#include "reduce.def"
#undef RED

/* ---- argmax / argmin ------------------------------------------------------ */

#define ARG_KERNEL(NAME, SUF, T, BETTER)                                                         \
KERNEL argreduce_##NAME##_##SUF(const G T *X, G i64 *O, G i64 *P, i64 outer, i64 r, i64 inner,   \
                                i64 nparts, i64 chunk) {                                         \
    i64 q = GID0(), count = outer * inner;                                                       \
    if (q >= count * nparts) return;                                                             \
    i64 part = q / count;                                                                        \
    q -= part * count;                                                                           \
    i64 o = q / inner, j = q - o * inner;                                                        \
    i64 i0 = part * chunk, i1 = i0 + chunk < r ? i0 + chunk : r;                                 \
    const G T *x = X + o * r * inner + j;                                                        \
    i64 best = i0;                                                                               \
    T bv = x[i0 * inner];                                                                        \
    for (i64 i = i0 + 1; i < i1; i++) {                                                          \
        T v = x[i * inner];                                                                      \
        if (bv != bv) break;                                                                     \
        if (BETTER) { bv = v; best = i; }                                                        \
    }                                                                                            \
    if (nparts == 1) O[q] = best;                                                                \
    else P[part * count + q] = best;                                                             \
}                                                                                                \
KERNEL argreducec_##NAME##_##SUF(const G T *X, const G i64 *P, G i64 *O, i64 count, i64 nparts,  \
                                 i64 r, i64 inner) {                                             \
    i64 q = GID0();                                                                              \
    if (q >= count) return;                                                                      \
    i64 o = q / inner, j = q - o * inner;                                                        \
    const G T *x = X + o * r * inner + j;                                                        \
    i64 best = P[q];                                                                             \
    T bv = x[best * inner];                                                                      \
    for (i64 t = 1; t < nparts; t++) {                                                           \
        if (bv != bv) break;                                                                     \
        i64 c = P[t * count + q];                                                                \
        T v = x[c * inner];                                                                      \
        if (BETTER) { bv = v; best = c; }                                                        \
    }                                                                                            \
    O[q] = best;                                                                                 \
}
#define ARG_ALL(SUF, T) ARG_KERNEL(max, SUF, T, v > bv || v != v) ARG_KERNEL(min, SUF, T, v < bv || v != v)
ARG_ALL(f32, float)
#ifdef TPF_FP64
ARG_ALL(f64, double)
#endif
ARG_ALL(i8, i8) ARG_ALL(u8, u8) ARG_ALL(i16, i16) ARG_ALL(i32, i32) ARG_ALL(i64, i64) ARG_ALL(b, u8)
