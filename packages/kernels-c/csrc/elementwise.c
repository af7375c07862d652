/* Element-wise unary and binary math over every dtype.
 *
 * Each (op, dtype) pair is one inner loop `fn(a, sa, b, sb, out, n)`; strides
 * sa/sb are 1 (dense) or 0 (a repeated scalar), so the same loop serves the
 * same-shape fast path, the scalar fast path and the rows of a broadcast.
 *
 * Semantics follow NumPy where TensorFlow and NumPy agree, and NumPy where they
 * differ only on edge cases:
 * - integer +, -, *, negation, abs, square, pow and << wrap modulo 2**bits (computed
 *   in unsigned arithmetic: signed overflow is undefined in C);
 * - floor division and floor mod follow Python (and NumPy's divmod): the remainder
 *   takes the sign of the divisor, a zero remainder is +-0 by the divisor's sign,
 *   INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0;
 * - an integer raised to a negative integer power is an error (TPF_EBADARG), as in
 *   TensorFlow and NumPy, except for bases 1 and -1.
 *
 * The ops, their dtypes and their scalar expressions are the rows of elementwise.def;
 * the formulas (float32 exp, log, tanh, sigmoid, silu and softplus as branch-free
 * polynomials gcc vectorizes, integer division, remainder and power, Python's float
 * divmod, gelu, polygamma) are scalar_math.h's, shared with gpu/elementwise.cl.
 * Vectorizable loops are compiled for AVX-512, AVX2 and baseline x86-64 and picked at
 * load time (target_clones), since the build may not use one machine's -march=native.
 */
/* The AVX2 and AVX-512 clones may fuse a*b+c into one FMA (one rounding instead
 * of two): faster polynomials, last-bit differences between machines.  (Set before
 * the includes: scalar_math.h's polynomials are compiled under it.) */
#pragma GCC optimize("fp-contract=fast")
#include "tpf.h"
#include "elementwise.h"
#include <tgmath.h>         /* before scalar_math.h: exp of a float is expf */
#include "scalar_math.h"


typedef void (*binfn)(const void *, int64_t, const void *, int64_t, void *, int64_t);
typedef void (*unfn)(const void *, void *, int64_t, double);

/* ---- binary ---------------------------------------------------------- */

/* Inside EXPR: x, y of the element type T, and W, a wide unsigned type for wrapping
 * integer arithmetic. */
#define BIN_LOOP(NAME, SUF, T, TO, W, EXPR) BIN_LOOP_A(NAME, SUF, T, TO, W, EXPR, )
#define BIN_LOOP_A(NAME, SUF, T, TO, W, EXPR, ATTR)                                   \
ATTR static void bin_##NAME##_##SUF(const void *av, int64_t sa, const void *bv, \
                               int64_t sb, void *ov, int64_t n) {                     \
    typedef W Wt; (void)sizeof(Wt);                                                   \
    const T *A = (const T *)av; const T *B = (const T *)bv; TO *O = (TO *)ov;         \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < n; i++) { T x = A[i], y = B[i]; O[i] = (TO)(EXPR); } } \
    else if (sa == 0 && sb == 1) { T x = A[0]; for (int64_t i = 0; i < n; i++) { T y = B[i]; O[i] = (TO)(EXPR); } } \
    else if (sa == 1 && sb == 0) { T y = B[0]; for (int64_t i = 0; i < n; i++) { T x = A[i]; O[i] = (TO)(EXPR); } } \
    else { for (int64_t i = 0; i < n; i++) { T x = A[i * sa], y = B[i * sb]; O[i] = (TO)(EXPR); } } \
}

/* One loop per (op, dtype) from elementwise.def's rows: BIN_<class>_<kind>(name, expr). */
#define BIN_T(NAME, SUF, T, TO, W, E, ATTR) BIN_LOOP_A(NAME, SUF, T, TO, W, E(x, y, Wt), ATTR)
#define BIN_F_NO(NAME, E)
#define BIN_F_F(NAME, E) BIN_T(NAME, f32, float, float, uint32_t, E, ) BIN_T(NAME, f64, double, double, uint64_t, E, )
#define BIN_F_FV(NAME, E) BIN_T(NAME, f32, float, float, uint32_t, E, TPF_CLONES) \
                          BIN_T(NAME, f64, double, double, uint64_t, E, TPF_CLONES)
#define BIN_F_FS(NAME, E) BIN_T(NAME, f32, float, float, uint32_t, E##_f32, ) \
                          BIN_T(NAME, f64, double, double, uint64_t, E##_f64, )
#define BIN_F_FB(NAME, E) BIN_T(NAME, f32, float, uint8_t, uint32_t, E, ) BIN_T(NAME, f64, double, uint8_t, uint64_t, E, )
#define BIN_INTS(NAME, E, TO8, TOU8, TO16, TO32, TO64)                                                  \
    BIN_T(NAME, i8, int8_t, TO8, uint32_t, E, ) BIN_T(NAME, u8, uint8_t, TOU8, uint32_t, E, )           \
    BIN_T(NAME, i16, int16_t, TO16, uint32_t, E, ) BIN_T(NAME, i32, int32_t, TO32, uint32_t, E, )       \
    BIN_T(NAME, i64, int64_t, TO64, uint64_t, E, )
#define BIN_I_NO(NAME, E)
#define BIN_I_I(NAME, E) BIN_INTS(NAME, E, int8_t, uint8_t, int16_t, int32_t, int64_t)
#define BIN_I_ID BIN_I_I      /* the divisors are checked before the loop (int_operand_error) */
#define BIN_I_IP BIN_I_I      /* so are the exponents */
#define BIN_I_IB(NAME, E) BIN_INTS(NAME, E, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t)
#define BIN_B_NO(NAME, E)
#define BIN_B_B(NAME, E) BIN_T(NAME, b, uint8_t, uint8_t, uint32_t, E, )

#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) BIN_F_##FK(name, FE) BIN_I_##IK(name, IE) BIN_B_##BK(name, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"

#define ROW_F_NO(NAME)
#define ROW_F_F(NAME) [TPF_F32] = bin_##NAME##_f32, [TPF_F64] = bin_##NAME##_f64,
#define ROW_F_FV ROW_F_F
#define ROW_F_FS ROW_F_F
#define ROW_F_FB ROW_F_F
#define ROW_I_NO(NAME)
#define ROW_I_I(NAME) [TPF_I8] = bin_##NAME##_i8, [TPF_U8] = bin_##NAME##_u8, [TPF_I16] = bin_##NAME##_i16, \
                      [TPF_I32] = bin_##NAME##_i32, [TPF_I64] = bin_##NAME##_i64,
#define ROW_I_ID ROW_I_I
#define ROW_I_IP ROW_I_I
#define ROW_I_IB ROW_I_I
#define ROW_B_NO(NAME)
#define ROW_B_B(NAME) [TPF_BOOL] = bin_##NAME##_b,

static const binfn bin_table[TPF_BIN_NOPS][TPF_NDTYPES] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_BIN_##NAME] = {ROW_F_##FK(name) ROW_I_##IK(name) ROW_B_##BK(name)},
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"
};

/* per op: boolean output (FB/IB), integer operands to check before the loop (ID: 1, IP: 2) */
#define OUTB_NO 0
#define OUTB_F 0
#define OUTB_FV 0
#define OUTB_FS 0
#define OUTB_FB 1
#define OUTB_I 0
#define OUTB_ID 0
#define OUTB_IP 0
#define OUTB_IB 1
#define ICHK_NO 0
#define ICHK_I 0
#define ICHK_IB 0
#define ICHK_ID 1
#define ICHK_IP 2
static const unsigned char bin_bool_out[TPF_BIN_NOPS] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_BIN_##NAME] = OUTB_##FK || OUTB_##IK,
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"
};
static const unsigned char bin_int_check[TPF_BIN_NOPS] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_BIN_##NAME] = ICHK_##IK,
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"
};

static int bin_out_bool(int op) { return bin_bool_out[op]; }

static int is_int_dtype(int dt) { return dt >= TPF_I8 && dt <= TPF_I64; }

static int64_t int_at(int dt, const void *b, int64_t i) {
    switch (dt) {
    case TPF_I8: return ((const int8_t *)b)[i];
    case TPF_U8: return ((const uint8_t *)b)[i];
    case TPF_I16: return ((const int16_t *)b)[i];
    case TPF_I32: return ((const int32_t *)b)[i];
    default: return ((const int64_t *)b)[i];
    }
}

/* Integer ops with operands they cannot take: a zero divisor (TPF_EDIVZERO) or,
 * for pow, a negative exponent on a base other than +-1 (TPF_EBADARG).  `a` is
 * only read for pow. */
static int int_operand_error(int op, int dt, const void *a, int64_t sa, const void *b, int64_t sb, int64_t n) {
    if (!is_int_dtype(dt)) return TPF_OK;
    if (bin_int_check[op] == 1) {
        int64_t m = sb ? n : 1;
        for (int64_t i = 0; i < m; i++)
            if (int_at(dt, b, i * sb) == 0) return TPF_EDIVZERO;
    } else if (bin_int_check[op] == 2 && dt != TPF_U8) {
        for (int64_t i = 0; i < (sb ? n : 1); i++) {
            if (int_at(dt, b, i * sb) < 0) {
                int64_t base = int_at(dt, a, i * sa);
                if (base != 1 && base != -1) return TPF_EBADARG;
            }
        }
    }
    return TPF_OK;
}

static binfn bin_lookup(int op, int dt) {
    if (op < 0 || op >= TPF_BIN_NOPS || dt < 0 || dt >= TPF_NDTYPES) return NULL;
    return bin_table[op][dt];
}

int tpf_binary_flat(int op, int dt, const void *a, int a_scalar, const void *b, int b_scalar,
                    void *out, int64_t n) {
    binfn fn = bin_lookup(op, dt);
    if (!fn) return op < 0 || op >= TPF_BIN_NOPS ? TPF_EBADOP : TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    if (n == 0) return TPF_OK;
    int64_t sa = a_scalar ? 0 : 1, sb = b_scalar ? 0 : 1;
    int st = int_operand_error(op, dt, a, sa, b, sb, n);
    if (st) return st;
    size_t es = tpf_dtype_size(dt), eo = bin_out_bool(op) ? 1 : es;
    int nt = TPF_NTHREADS(n);
    if (nt <= 1) { tpf_fp_enter(); fn(a, sa, b, sb, out, n); return TPF_OK; }
    int64_t chunk = (n + nt - 1) / nt;
    chunk = (chunk + 15) & ~(int64_t)15;   /* keep each thread's slice vector-aligned */
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (lo < hi)
            fn((const char *)a + lo * sa * es, sa, (const char *)b + lo * sb * es, sb,
               (char *)out + lo * eo, hi - lo);
    }
    return TPF_OK;
}

/* The period of an operand whose values repeat along the flat output: strides 0 on the
 * leading axes and row-major over the trailing ones from some axis on (a bias [c] added to
 * [n, h, w, c]).  0 when it is not such an operand. */
static int64_t periodic_len(int ndim, const int64_t *shape, const int64_t *str) {
    int64_t p = 1;
    int d = ndim - 1;
    for (; d >= 0 && (str[d] == p || shape[d] == 1); d--) p *= shape[d];
    for (; d >= 0; d--) if (str[d] != 0 && shape[d] != 1) return 0;
    return p;
}

static int is_dense(int ndim, const int64_t *shape, const int64_t *str) {
    int64_t p = 1;
    for (int d = ndim - 1; d >= 0; d--) { if (str[d] != p && shape[d] != 1) return 0; p *= shape[d]; }
    return 1;
}

/* One dense operand and one periodic operand with a short period (rows too short for a call
 * per row to pay): the periodic one is tiled into a buffer of whole periods, and the loop
 * runs over long dense stretches of the flat output.  Returns 1 when it did the work. */
#define TPF_TILE_BYTES 4096
static int binary_periodic(binfn fn, int dt, size_t es, size_t eo, int ndim, const int64_t *shape,
                           const void *a, const int64_t *astr, const void *b, const int64_t *bstr,
                           void *out) {
    (void)dt;
    if (shape[ndim - 1] >= 256) return 0;
    int a_dense = is_dense(ndim, shape, astr), b_dense = is_dense(ndim, shape, bstr);
    if (a_dense == b_dense) return 0;
    const void *rep = a_dense ? b : a;
    int64_t p = periodic_len(ndim, shape, a_dense ? bstr : astr);
    if (p <= 0 || (size_t)p * es > TPF_TILE_BYTES / 2) return 0;
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    int64_t per = TPF_TILE_BYTES / es / (size_t)p, L = per * p;   /* whole periods in a tile */
    _Alignas(64) unsigned char tile[TPF_TILE_BYTES];
    for (int64_t q = 0; q < per; q++) memcpy(tile + (size_t)(q * p) * es, rep, (size_t)p * es);
    int64_t ntiles = (total + L - 1) / L;
    int nt = TPF_NTHREADS(total);
    if (nt > ntiles) nt = (int)ntiles;
    int64_t chunk = (ntiles + nt - 1) / nt;
    TPF_PFOR(t, nt,
        tpf_fp_enter();
        for (int64_t c = t * chunk; c < (t + 1) * chunk && c < ntiles; c++) {
            int64_t lo = c * L, len = total - lo < L ? total - lo : L;
            if (a_dense) fn((const char *)a + lo * es, 1, tile, 1, (char *)out + lo * eo, len);
            else fn(tile, 1, (const char *)b + lo * es, 1, (char *)out + lo * eo, len);
        }
    );
    return 1;
}

/* General broadcast: out has `shape` (dense); a and b are read through strides. */
int tpf_binary_strided(int op, int dt, int ndim, const int64_t *shape,
                       const void *a, const int64_t *astr, const void *b, const int64_t *bstr,
                       void *out) {
    binfn fn = bin_lookup(op, dt);
    if (!fn) return op < 0 || op >= TPF_BIN_NOPS ? TPF_EBADOP : TPF_EBADDTYPE;
    if (ndim < 1 || ndim > TPF_MAXDIMS) return TPF_EBADSIZE;
    int64_t rows = 1, n = shape[ndim - 1];
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (rows * n == 0) return TPF_OK;
    size_t es = tpf_dtype_size(dt), eo = bin_out_bool(op) ? 1 : es;
    if (is_int_dtype(dt) && bin_int_check[op]) {
        /* check every pair of operands the loop will meet */
        for (int64_t r = 0; r < rows; r++) {
            int64_t offa = 0, offb = 0, rem = r;
            for (int d = ndim - 2; d >= 0; d--) {
                int64_t i = rem % shape[d]; rem /= shape[d];
                offa += i * astr[d]; offb += i * bstr[d];
            }
            if (bin_int_check[op] == 2) {
                for (int64_t j = 0; j < n; j++) {
                    int st = int_operand_error(op, dt, (const char *)a + (offa + j * astr[ndim - 1]) * es, 0,
                                               (const char *)b + (offb + j * bstr[ndim - 1]) * es, 0, 1);
                    if (st) return st;
                }
            } else {
                int st = int_operand_error(op, dt, NULL, 0, (const char *)b + offb * es, bstr[ndim - 1], n);
                if (st) return st;
            }
        }
    }
    if (binary_periodic(fn, dt, es, eo, ndim, shape, a, astr, b, bstr, out)) return TPF_OK;
    int nt = TPF_NTHREADS(rows * n);
    if (nt > rows) nt = (int)rows;
    int64_t chunk = (rows + nt - 1) / nt;
    /* each thread takes a block of rows and walks their offsets with an odometer
     * (no division per row: broadcasts like x + bias have many short rows) */
    TPF_PFOR(t, nt,
        tpf_fp_enter();
        int64_t r0 = t * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
        if (r0 < r1) {
            int64_t idx[TPF_MAXDIMS] = {0}, offa = 0, offb = 0, rem = r0;
            for (int d = ndim - 2; d >= 0; d--) {
                idx[d] = rem % shape[d]; rem /= shape[d];
                offa += idx[d] * astr[d]; offb += idx[d] * bstr[d];
            }
            for (int64_t r = r0; r < r1; r++) {
                fn((const char *)a + offa * es, astr[ndim - 1], (const char *)b + offb * es, bstr[ndim - 1],
                   (char *)out + r * n * eo, n);
                for (int d = ndim - 2; d >= 0; d--) {  /* next row */
                    offa += astr[d]; offb += bstr[d];
                    if (++idx[d] < shape[d]) break;
                    offa -= shape[d] * astr[d]; offb -= shape[d] * bstr[d]; idx[d] = 0;
                }
            }
        }
    );
    return TPF_OK;
}

/* ---- unary ----------------------------------------------------------- */

#define UN_LOOP(NAME, SUF, T, TO, W, EXPR) UN_LOOP_A(NAME, SUF, T, TO, W, EXPR, )
#define UN_LOOP_A(NAME, SUF, T, TO, W, EXPR, ATTR)                                    \
ATTR static void un_##NAME##_##SUF(const void *xv, void *ov, int64_t n, double p) { \
    typedef W Wt; (void)sizeof(Wt);                                                   \
    const T *X = (const T *)xv; TO *O = (TO *)ov; (void)p;                            \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; O[i] = (TO)(EXPR); }               \
}
/* One loop per (op, dtype) from elementwise.def's rows: UN_<class>_<kind>(name, expr). */
#define UN_T(NAME, SUF, T, TO, W, E, ATTR) UN_LOOP_A(NAME, SUF, T, TO, W, E(x, p, Wt), ATTR)
#define UN_F_NO(NAME, E)
#define UN_F_F(NAME, E) UN_T(NAME, f32, float, float, uint32_t, E, ) UN_T(NAME, f64, double, double, uint64_t, E, )
#define UN_F_FV(NAME, E) UN_T(NAME, f32, float, float, uint32_t, E, TPF_CLONES) \
                         UN_T(NAME, f64, double, double, uint64_t, E, TPF_CLONES)
/* float32 through a vectorizable formula, float64 through libm */
#define UN_F_FS(NAME, E) UN_T(NAME, f32, float, float, uint32_t, E##_f32, TPF_CLONES) \
                         UN_T(NAME, f64, double, double, uint64_t, E##_f64, )
#define UN_F_FB(NAME, E) UN_T(NAME, f32, float, uint8_t, uint32_t, E, ) UN_T(NAME, f64, double, uint8_t, uint64_t, E, )
#define UN_I_NO(NAME, E)
#define UN_I_I(NAME, E)                                                                              \
    UN_T(NAME, i8, int8_t, int8_t, uint32_t, E, ) UN_T(NAME, u8, uint8_t, uint8_t, uint32_t, E, )    \
    UN_T(NAME, i16, int16_t, int16_t, uint32_t, E, ) UN_T(NAME, i32, int32_t, int32_t, uint32_t, E, ) \
    UN_T(NAME, i64, int64_t, int64_t, uint64_t, E, )
#define UN_B_NO(NAME, E)
#define UN_B_B(NAME, E) UN_T(NAME, b, uint8_t, uint8_t, uint32_t, E, )

#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) UN_F_##FK(name, FE) UN_I_##IK(name, IE) UN_B_##BK(name, BE)
#include "elementwise.def"

#define UROW_F_NO(NAME)
#define UROW_F_F(NAME) [TPF_F32] = un_##NAME##_f32, [TPF_F64] = un_##NAME##_f64,
#define UROW_F_FV UROW_F_F
#define UROW_F_FS UROW_F_F
#define UROW_F_FB UROW_F_F
#define UROW_I_NO(NAME)
#define UROW_I_I(NAME) [TPF_I8] = un_##NAME##_i8, [TPF_U8] = un_##NAME##_u8, [TPF_I16] = un_##NAME##_i16, \
                       [TPF_I32] = un_##NAME##_i32, [TPF_I64] = un_##NAME##_i64,
#define UROW_B_NO(NAME)
#define UROW_B_B(NAME) [TPF_BOOL] = un_##NAME##_b,

static const unfn un_table[TPF_UN_NOPS][TPF_NDTYPES] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_UN_##NAME] = {UROW_F_##FK(name) UROW_I_##IK(name) UROW_B_##BK(name)},
#include "elementwise.def"
};

static const unsigned char un_bool_out[TPF_UN_NOPS] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_UN_##NAME] = OUTB_##FK,
#include "elementwise.def"
};

static int un_out_bool(int op) { return un_bool_out[op]; }

int tpf_unary(int op, int dt, const void *x, void *out, int64_t n, double param) {
    if (op < 0 || op >= TPF_UN_NOPS) return TPF_EBADOP;
    if (dt < 0 || dt >= TPF_NDTYPES || !un_table[op][dt]) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    if (op == TPF_UN_POLYGAMMA && !(param >= 0 && param <= 64 && param == floor(param))) return TPF_EBADARG;
    unfn fn = un_table[op][dt];
    size_t es = tpf_dtype_size(dt), eo = un_out_bool(op) ? 1 : es;
    int nt = TPF_NTHREADS(n);
    if (nt <= 1) { tpf_fp_enter(); fn(x, out, n, param); return TPF_OK; }
    int64_t chunk = (n + nt - 1) / nt;
    chunk = (chunk + 15) & ~(int64_t)15;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (lo < hi) fn((const char *)x + lo * es, (char *)out + lo * eo, hi - lo, param);
    }
    return TPF_OK;
}
