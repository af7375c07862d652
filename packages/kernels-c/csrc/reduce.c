/* Reductions over the middle axis of an (outer, r, inner) view; the Python
 * side coalesces any set of reduced axes into that form (transposing first when
 * the reduced axes are not adjacent).  Float sums accumulate in double for
 * float32 to keep large sums accurate. */
#include "tpf.h"
#include "reduce.h"

#define RED_LOOP(NAME, SUF, T, ACC, TO, INIT, STEP, FINISH)                          \
static void red_##NAME##_##SUF(const void *xv, void *ov, int64_t o0, int64_t o1,     \
                                int64_t r, int64_t inner) {                          \
    const T *X = (const T *)xv; TO *O = (TO *)ov;                                    \
    for (int64_t o = o0; o < o1; o++) {                                              \
        if (inner == 1) {                                                            \
            const T *x = X + o * r; ACC acc = INIT;                                  \
            for (int64_t i = 0; i < r; i++) { T v = x[i]; STEP; }                    \
            O[o] = (TO)(FINISH);                                                     \
        } else {                                                                     \
            for (int64_t j = 0; j < inner; j++) {                                    \
                const T *x = X + o * r * inner + j; ACC acc = INIT;                  \
                for (int64_t i = 0; i < r; i++) { T v = x[i * inner]; STEP; }        \
                O[o * inner + j] = (TO)(FINISH);                                     \
            }                                                                        \
        }                                                                            \
    }                                                                                \
}

#define RED_ALL(NAME, INITF, INITI, STEP, FINISH)                                    \
    RED_LOOP(NAME, f32, float, double, float, INITF, STEP, FINISH)                   \
    RED_LOOP(NAME, f64, double, double, double, INITF, STEP, FINISH)                 \
    RED_LOOP(NAME, i8, int8_t, int64_t, int8_t, INITI, STEP, FINISH)                 \
    RED_LOOP(NAME, u8, uint8_t, int64_t, uint8_t, INITI, STEP, FINISH)               \
    RED_LOOP(NAME, i16, int16_t, int64_t, int16_t, INITI, STEP, FINISH)              \
    RED_LOOP(NAME, i32, int32_t, int64_t, int32_t, INITI, STEP, FINISH)              \
    RED_LOOP(NAME, i64, int64_t, int64_t, int64_t, INITI, STEP, FINISH)

RED_ALL(sum, 0.0, 0, acc += v, acc)
RED_ALL(prod, 1.0, 1, acc *= v, acc)
RED_ALL(mean, 0.0, 0, acc += v, r ? acc / r : 0)
/* max/min propagate NaN like TensorFlow and NumPy */
RED_LOOP(max, f32, float, float, float, -INFINITY, if (v > acc || v != v) acc = (acc != acc) ? acc : v, acc)
RED_LOOP(max, f64, double, double, double, -INFINITY, if (v > acc || v != v) acc = (acc != acc) ? acc : v, acc)
RED_LOOP(min, f32, float, float, float, INFINITY, if (v < acc || v != v) acc = (acc != acc) ? acc : v, acc)
RED_LOOP(min, f64, double, double, double, INFINITY, if (v < acc || v != v) acc = (acc != acc) ? acc : v, acc)
#define RED_IMINMAX(SUF, T, LO, HI)                                                  \
    RED_LOOP(max, SUF, T, T, T, LO, if (v > acc) acc = v, acc)                       \
    RED_LOOP(min, SUF, T, T, T, HI, if (v < acc) acc = v, acc)
RED_IMINMAX(i8, int8_t, INT8_MIN, INT8_MAX)
RED_IMINMAX(u8, uint8_t, 0, UINT8_MAX)
RED_IMINMAX(i16, int16_t, INT16_MIN, INT16_MAX)
RED_IMINMAX(i32, int32_t, INT32_MIN, INT32_MAX)
RED_IMINMAX(i64, int64_t, INT64_MIN, INT64_MAX)
RED_LOOP(any, b, uint8_t, int, uint8_t, 0, acc |= (v != 0), acc)
RED_LOOP(all, b, uint8_t, int, uint8_t, 1, acc &= (v != 0), acc)
RED_LOOP(max, b, uint8_t, int, uint8_t, 0, acc |= (v != 0), acc)
RED_LOOP(min, b, uint8_t, int, uint8_t, 1, acc &= (v != 0), acc)

/* argmax/argmin: first index of the extreme value; NaN wins (as in NumPy) */
#define ARG_LOOP(NAME, SUF, T, BETTER)                                               \
static void arg_##NAME##_##SUF(const void *xv, int64_t *O, int64_t o0, int64_t o1,   \
                                int64_t r, int64_t inner) {                          \
    const T *X = (const T *)xv;                                                      \
    for (int64_t o = o0; o < o1; o++)                                                \
        for (int64_t j = 0; j < inner; j++) {                                        \
            const T *x = X + o * r * inner + j; int64_t best = 0; T bv = x[0];       \
            for (int64_t i = 1; i < r; i++) {                                        \
                T v = x[i * inner];                                                  \
                if (bv != bv) break;                                                 \
                if (BETTER) { bv = v; best = i; }                                    \
            }                                                                        \
            O[o * inner + j] = best;                                                 \
        }                                                                            \
}
#define ARG_ALL(SUF, T) ARG_LOOP(max, SUF, T, v > bv || v != v) ARG_LOOP(min, SUF, T, v < bv || v != v)
ARG_ALL(f32, float) ARG_ALL(f64, double) ARG_ALL(i8, int8_t) ARG_ALL(u8, uint8_t)
ARG_ALL(i16, int16_t) ARG_ALL(i32, int32_t) ARG_ALL(i64, int64_t) ARG_ALL(b, uint8_t)

typedef void (*redfn)(const void *, void *, int64_t, int64_t, int64_t, int64_t);
typedef void (*argfn)(const void *, int64_t *, int64_t, int64_t, int64_t, int64_t);

#define RROW(NAME) {[TPF_F32] = red_##NAME##_f32, [TPF_F64] = red_##NAME##_f64, [TPF_I8] = red_##NAME##_i8, \
    [TPF_U8] = red_##NAME##_u8, [TPF_I16] = red_##NAME##_i16, [TPF_I32] = red_##NAME##_i32, [TPF_I64] = red_##NAME##_i64}

static const redfn red_table[TPF_RED_NOPS][TPF_NDTYPES] = {
    [TPF_RED_SUM] = RROW(sum), [TPF_RED_PROD] = RROW(prod), [TPF_RED_MEAN] = RROW(mean),
    [TPF_RED_MAX] = {[TPF_F32] = red_max_f32, [TPF_F64] = red_max_f64, [TPF_I8] = red_max_i8,
        [TPF_U8] = red_max_u8, [TPF_I16] = red_max_i16, [TPF_I32] = red_max_i32, [TPF_I64] = red_max_i64,
        [TPF_BOOL] = red_max_b},
    [TPF_RED_MIN] = {[TPF_F32] = red_min_f32, [TPF_F64] = red_min_f64, [TPF_I8] = red_min_i8,
        [TPF_U8] = red_min_u8, [TPF_I16] = red_min_i16, [TPF_I32] = red_min_i32, [TPF_I64] = red_min_i64,
        [TPF_BOOL] = red_min_b},
    [TPF_RED_ANY] = {[TPF_BOOL] = red_any_b},
    [TPF_RED_ALL] = {[TPF_BOOL] = red_all_b},
};

int tpf_reduce(int op, int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner) {
    if (op < 0 || op >= TPF_RED_NOPS) return TPF_EBADOP;
    if (dt < 0 || dt >= TPF_NDTYPES || !red_table[op][dt]) return TPF_EBADDTYPE;
    if (outer < 0 || r < 0 || inner < 0) return TPF_EBADSIZE;
    redfn fn = red_table[op][dt];
    int nt = TPF_NTHREADS(outer * r * inner);
    if (nt > outer) nt = (int)(outer > 0 ? outer : 1);
    if (nt <= 1) { tpf_fp_enter(); fn(x, out, 0, outer, r, inner); return TPF_OK; }
    int64_t chunk = (outer + nt - 1) / nt;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        int64_t lo = t * chunk, hi = lo + chunk < outer ? lo + chunk : outer;
        if (lo < hi) fn(x, out, lo, hi, r, inner);
    }
    return TPF_OK;
}

int tpf_argreduce(int op, int dt, const void *x, int64_t *out, int64_t outer, int64_t r, int64_t inner) {
    static const argfn tab[2][TPF_NDTYPES] = {
        {[TPF_F32] = arg_max_f32, [TPF_F64] = arg_max_f64, [TPF_I8] = arg_max_i8, [TPF_U8] = arg_max_u8,
         [TPF_I16] = arg_max_i16, [TPF_I32] = arg_max_i32, [TPF_I64] = arg_max_i64, [TPF_BOOL] = arg_max_b},
        {[TPF_F32] = arg_min_f32, [TPF_F64] = arg_min_f64, [TPF_I8] = arg_min_i8, [TPF_U8] = arg_min_u8,
         [TPF_I16] = arg_min_i16, [TPF_I32] = arg_min_i32, [TPF_I64] = arg_min_i64, [TPF_BOOL] = arg_min_b},
    };
    if (op < 0 || op > 1) return TPF_EBADOP;
    if (dt < 0 || dt >= TPF_NDTYPES || !tab[op][dt]) return TPF_EBADDTYPE;
    if (outer < 0 || r < 1 || inner < 0) return TPF_EBADSIZE;
    tab[op][dt](x, out, 0, outer, r, inner);
    return TPF_OK;
}
