/* Element-wise unary and binary math over every dtype.
 *
 * Each (op, dtype) pair is one inner loop `fn(a, sa, b, sb, out, n)`; strides
 * sa/sb are 1 (dense) or 0 (a repeated scalar), so the same loop serves the
 * same-shape fast path, the scalar fast path and the rows of a broadcast.
 */
#include "tpf.h"
#include "elementwise.h"
#include <tgmath.h>

typedef void (*binfn)(const void *, int64_t, const void *, int64_t, void *, int64_t);
typedef void (*unfn)(const void *, void *, int64_t, double);

/* ---- binary ---------------------------------------------------------- */

#define BIN_LOOP(NAME, SUF, T, TO, EXPR)                                          \
static void bin_##NAME##_##SUF(const void *av, int64_t sa, const void *bv,        \
                               int64_t sb, void *ov, int64_t n) {                 \
    const T *A = (const T *)av; const T *B = (const T *)bv; TO *O = (TO *)ov;     \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < n; i++) { T x = A[i], y = B[i]; O[i] = (TO)(EXPR); } } \
    else if (sa == 0 && sb == 1) { T x = A[0]; for (int64_t i = 0; i < n; i++) { T y = B[i]; O[i] = (TO)(EXPR); } } \
    else if (sa == 1 && sb == 0) { T y = B[0]; for (int64_t i = 0; i < n; i++) { T x = A[i]; O[i] = (TO)(EXPR); } } \
    else { for (int64_t i = 0; i < n; i++) { T x = A[i * sa], y = B[i * sb]; O[i] = (TO)(EXPR); } } \
}

/* float ops (f32, f64) */
#define BIN_F(NAME, EXPR) BIN_LOOP(NAME, f32, float, float, EXPR) BIN_LOOP(NAME, f64, double, double, EXPR)
/* integer ops (all int dtypes) */
#define BIN_I(NAME, EXPR)                                                          \
    BIN_LOOP(NAME, i8, int8_t, int8_t, EXPR) BIN_LOOP(NAME, u8, uint8_t, uint8_t, EXPR) \
    BIN_LOOP(NAME, i16, int16_t, int16_t, EXPR) BIN_LOOP(NAME, i32, int32_t, int32_t, EXPR) \
    BIN_LOOP(NAME, i64, int64_t, int64_t, EXPR)
/* comparisons: any dtype in, bool out */
#define BIN_CMP(NAME, EXPR)                                                        \
    BIN_LOOP(NAME, f32, float, uint8_t, EXPR) BIN_LOOP(NAME, f64, double, uint8_t, EXPR) \
    BIN_LOOP(NAME, i8, int8_t, uint8_t, EXPR) BIN_LOOP(NAME, u8, uint8_t, uint8_t, EXPR) \
    BIN_LOOP(NAME, i16, int16_t, uint8_t, EXPR) BIN_LOOP(NAME, i32, int32_t, uint8_t, EXPR) \
    BIN_LOOP(NAME, i64, int64_t, uint8_t, EXPR) BIN_LOOP(NAME, b, uint8_t, uint8_t, EXPR)

static inline int64_t tpf_floordiv_i(int64_t x, int64_t y) {
    int64_t q = x / y; if ((x % y != 0) && ((x < 0) != (y < 0))) q--; return q;
}
static inline int64_t tpf_floormod_i(int64_t x, int64_t y) {
    int64_t r = x % y; if (r != 0 && ((r < 0) != (y < 0))) r += y; return r;
}
static inline int64_t tpf_ipow(int64_t x, int64_t y) {
    if (y < 0) return (x == 1) ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
    int64_t r = 1; while (y) { if (y & 1) r *= x; x *= x; y >>= 1; } return r;
}
#define FMOD_PY(x, y) ((y) == 0 ? NAN : ((x) - floor((x) / (y)) * (y)))
#define MAXF(x, y) (isnan(x) || (x) > (y) ? (x) : (y))
#define MINF(x, y) (isnan(x) || (x) < (y) ? (x) : (y))

BIN_F(add, x + y)           BIN_I(add, x + y)
BIN_F(sub, x - y)           BIN_I(sub, x - y)
BIN_F(mul, x * y)           BIN_I(mul, x * y)
BIN_F(div, x / y)
BIN_F(floordiv, floor(x / y))
BIN_I(floordiv, y == 0 ? 0 : tpf_floordiv_i(x, y))
BIN_F(mod, y == 0 ? NAN : (fmod(x, y) != 0 && ((fmod(x, y) < 0) != (y < 0)) ? fmod(x, y) + y : fmod(x, y)))
BIN_I(mod, y == 0 ? 0 : tpf_floormod_i(x, y))
BIN_F(pow, pow(x, y))       BIN_I(pow, tpf_ipow(x, y))
BIN_F(maximum, MAXF(x, y))  BIN_I(maximum, x > y ? x : y)
BIN_F(minimum, MINF(x, y))  BIN_I(minimum, x < y ? x : y)
BIN_F(atan2, atan2(x, y))
BIN_F(squared_difference, (x - y) * (x - y))
BIN_I(squared_difference, (x - y) * (x - y))
BIN_F(div_no_nan, y == 0 ? 0 : x / y)
BIN_CMP(equal, x == y)
BIN_CMP(not_equal, x != y)
BIN_CMP(less, x < y)
BIN_CMP(less_equal, x <= y)
BIN_CMP(greater, x > y)
BIN_CMP(greater_equal, x >= y)
BIN_LOOP(logical_and, b, uint8_t, uint8_t, x && y)
BIN_LOOP(logical_or, b, uint8_t, uint8_t, x || y)
BIN_LOOP(logical_xor, b, uint8_t, uint8_t, (!x) != (!y))
BIN_I(bitwise_and, x & y)   BIN_LOOP(bitwise_and, b, uint8_t, uint8_t, x & y)
BIN_I(bitwise_or, x | y)    BIN_LOOP(bitwise_or, b, uint8_t, uint8_t, x | y)
BIN_I(bitwise_xor, x ^ y)   BIN_LOOP(bitwise_xor, b, uint8_t, uint8_t, x ^ y)
BIN_I(left_shift, (y < 0 || y >= (int64_t)(8 * sizeof(x))) ? 0 : (x << y))
BIN_I(right_shift, (y < 0 || y >= (int64_t)(8 * sizeof(x))) ? (x < 0 ? -1 : 0) : (x >> y))
/* gradient helpers: g * (x > 0), g * (1 - y*y), g * y * (1 - y) */
BIN_F(relu_grad, y > 0 ? x : 0)
BIN_F(tanh_grad, x * (1 - y * y))
BIN_F(sigmoid_grad, x * y * (1 - y))

#define ROW_F(NAME) [TPF_F32] = bin_##NAME##_f32, [TPF_F64] = bin_##NAME##_f64
#define ROW_I(NAME) [TPF_I8] = bin_##NAME##_i8, [TPF_U8] = bin_##NAME##_u8, [TPF_I16] = bin_##NAME##_i16, \
                    [TPF_I32] = bin_##NAME##_i32, [TPF_I64] = bin_##NAME##_i64
#define ROW_CMP(NAME) ROW_F(NAME), ROW_I(NAME), [TPF_BOOL] = bin_##NAME##_b

static const binfn bin_table[TPF_BIN_NOPS][TPF_NDTYPES] = {
    [TPF_BIN_ADD] = {ROW_F(add), ROW_I(add)},
    [TPF_BIN_SUB] = {ROW_F(sub), ROW_I(sub)},
    [TPF_BIN_MUL] = {ROW_F(mul), ROW_I(mul)},
    [TPF_BIN_DIV] = {ROW_F(div)},
    [TPF_BIN_FLOORDIV] = {ROW_F(floordiv), ROW_I(floordiv)},
    [TPF_BIN_MOD] = {ROW_F(mod), ROW_I(mod)},
    [TPF_BIN_POW] = {ROW_F(pow), ROW_I(pow)},
    [TPF_BIN_MAXIMUM] = {ROW_F(maximum), ROW_I(maximum)},
    [TPF_BIN_MINIMUM] = {ROW_F(minimum), ROW_I(minimum)},
    [TPF_BIN_ATAN2] = {ROW_F(atan2)},
    [TPF_BIN_SQUARED_DIFFERENCE] = {ROW_F(squared_difference), ROW_I(squared_difference)},
    [TPF_BIN_DIV_NO_NAN] = {ROW_F(div_no_nan)},
    [TPF_BIN_EQUAL] = {ROW_CMP(equal)},
    [TPF_BIN_NOT_EQUAL] = {ROW_CMP(not_equal)},
    [TPF_BIN_LESS] = {ROW_CMP(less)},
    [TPF_BIN_LESS_EQUAL] = {ROW_CMP(less_equal)},
    [TPF_BIN_GREATER] = {ROW_CMP(greater)},
    [TPF_BIN_GREATER_EQUAL] = {ROW_CMP(greater_equal)},
    [TPF_BIN_LOGICAL_AND] = {[TPF_BOOL] = bin_logical_and_b},
    [TPF_BIN_LOGICAL_OR] = {[TPF_BOOL] = bin_logical_or_b},
    [TPF_BIN_LOGICAL_XOR] = {[TPF_BOOL] = bin_logical_xor_b},
    [TPF_BIN_BITWISE_AND] = {ROW_I(bitwise_and), [TPF_BOOL] = bin_bitwise_and_b},
    [TPF_BIN_BITWISE_OR] = {ROW_I(bitwise_or), [TPF_BOOL] = bin_bitwise_or_b},
    [TPF_BIN_BITWISE_XOR] = {ROW_I(bitwise_xor), [TPF_BOOL] = bin_bitwise_xor_b},
    [TPF_BIN_LEFT_SHIFT] = {ROW_I(left_shift)},
    [TPF_BIN_RIGHT_SHIFT] = {ROW_I(right_shift)},
    [TPF_BIN_RELU_GRAD] = {ROW_F(relu_grad)},
    [TPF_BIN_TANH_GRAD] = {ROW_F(tanh_grad)},
    [TPF_BIN_SIGMOID_GRAD] = {ROW_F(sigmoid_grad)},
};

static int bin_out_bool(int op) { return op >= TPF_BIN_EQUAL && op <= TPF_BIN_GREATER_EQUAL; }

static int int_divides_by_zero(int op, int dt, const void *b, int64_t sb, int64_t n) {
    if (!(op == TPF_BIN_FLOORDIV || op == TPF_BIN_MOD) || dt == TPF_F32 || dt == TPF_F64) return 0;
    int64_t m = sb ? n : 1;
    size_t es = tpf_dtype_size(dt);
    for (int64_t i = 0; i < m; i++) {
        const char *p = (const char *)b + i * es;
        int64_t v = dt == TPF_I8 ? *(const int8_t *)p : dt == TPF_U8 ? *(const uint8_t *)p :
                    dt == TPF_I16 ? *(const int16_t *)p : dt == TPF_I32 ? *(const int32_t *)p : *(const int64_t *)p;
        if (v == 0) return 1;
    }
    return 0;
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
    if (int_divides_by_zero(op, dt, b, sb, n)) return TPF_EDIVZERO;
    size_t es = tpf_dtype_size(dt), eo = bin_out_bool(op) ? 1 : es;
    int nt = TPF_NTHREADS(n);
    if (nt <= 1) { tpf_fp_enter(); fn(a, sa, b, sb, out, n); return TPF_OK; }
    int64_t chunk = (n + nt - 1) / nt;
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
    if (op == TPF_BIN_FLOORDIV || op == TPF_BIN_MOD) {
        /* check every element of b reachable through its strides */
        int64_t idx[TPF_MAXDIMS] = {0};
        size_t es = tpf_dtype_size(dt);
        for (int64_t r = 0; r < rows; r++) {
            int64_t off = 0, rem = r;
            for (int d = ndim - 2; d >= 0; d--) { idx[d] = rem % shape[d]; rem /= shape[d]; off += idx[d] * bstr[d]; }
            if (int_divides_by_zero(op, dt, (const char *)b + off * es, bstr[ndim - 1], n)) return TPF_EDIVZERO;
        }
    }
    size_t es = tpf_dtype_size(dt), eo = bin_out_bool(op) ? 1 : es;
    int nt = TPF_NTHREADS(rows * n);
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        tpf_fp_enter();
        int64_t offa = 0, offb = 0, rem = r;
        for (int d = ndim - 2; d >= 0; d--) {
            int64_t i = rem % shape[d]; rem /= shape[d];
            offa += i * astr[d]; offb += i * bstr[d];
        }
        fn((const char *)a + offa * es, astr[ndim - 1], (const char *)b + offb * es, bstr[ndim - 1],
           (char *)out + r * n * eo, n);
    }
    return TPF_OK;
}

/* ---- unary ----------------------------------------------------------- */

#define UN_LOOP(NAME, SUF, T, TO, EXPR)                                            \
static void un_##NAME##_##SUF(const void *xv, void *ov, int64_t n, double p) {    \
    const T *X = (const T *)xv; TO *O = (TO *)ov; (void)p;                        \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; O[i] = (TO)(EXPR); }           \
}
#define UN_F(NAME, EXPR) UN_LOOP(NAME, f32, float, float, EXPR) UN_LOOP(NAME, f64, double, double, EXPR)
#define UN_I(NAME, EXPR)                                                            \
    UN_LOOP(NAME, i8, int8_t, int8_t, EXPR) UN_LOOP(NAME, u8, uint8_t, uint8_t, EXPR) \
    UN_LOOP(NAME, i16, int16_t, int16_t, EXPR) UN_LOOP(NAME, i32, int32_t, int32_t, EXPR) \
    UN_LOOP(NAME, i64, int64_t, int64_t, EXPR)
#define UN_FB(NAME, EXPR) UN_LOOP(NAME, f32, float, uint8_t, EXPR) UN_LOOP(NAME, f64, double, uint8_t, EXPR)

#define SIGMOID(x) ((x) >= 0 ? 1 / (1 + exp(-(x))) : exp(x) / (1 + exp(x)))
#define SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
#define SELU_A 1.6732632423543772848170429916717
#define SELU_S 1.0507009873554804934193349852946

UN_F(neg, -x)                  UN_I(neg, -x)
UN_F(abs, fabs(x))             UN_I(abs, x < 0 ? -x : x)
UN_F(sign, (x > 0) - (x < 0) + x * 0)  UN_I(sign, (x > 0) - (x < 0))
UN_F(square, x * x)            UN_I(square, x * x)
UN_F(sqrt, sqrt(x))
UN_F(rsqrt, 1 / sqrt(x))
UN_F(exp, exp(x))
UN_F(expm1, expm1(x))
UN_F(log, log(x))
UN_F(log1p, log1p(x))
UN_F(sin, sin(x))
UN_F(cos, cos(x))
UN_F(tan, tan(x))
UN_F(asin, asin(x))
UN_F(acos, acos(x))
UN_F(atan, atan(x))
UN_F(sinh, sinh(x))
UN_F(cosh, cosh(x))
UN_F(tanh, tanh(x))
UN_F(asinh, asinh(x))
UN_F(acosh, acosh(x))
UN_F(atanh, atanh(x))
UN_F(sigmoid, SIGMOID(x))
UN_F(relu, x > 0 ? x : (x != x ? x : 0))  UN_I(relu, x > 0 ? x : 0)
UN_F(softplus, SOFTPLUS(x))
UN_F(elu, x > 0 ? x : expm1(x))
UN_F(gelu, 0.5 * x * (1 + erf(x * 0.70710678118654752440)))
UN_F(selu, SELU_S * (x > 0 ? x : SELU_A * expm1(x)))
UN_F(floor, floor(x))
UN_F(ceil, ceil(x))
UN_F(round, rint(x))
UN_F(reciprocal, 1 / x)
UN_F(erf, erf(x))
UN_F(erfc, erfc(x))
UN_LOOP(logical_not, b, uint8_t, uint8_t, !x)
UN_I(bitwise_not, ~x)          UN_LOOP(bitwise_not, b, uint8_t, uint8_t, !x)
UN_FB(isnan, isnan(x))
UN_FB(isinf, isinf(x))
UN_FB(isfinite, isfinite(x))
UN_F(relu6, x > 6 ? 6 : (x > 0 ? x : (x != x ? x : 0)))
UN_F(leaky_relu, x > 0 ? x : x * p)
UN_F(log_sigmoid, -SOFTPLUS(-x))
UN_F(silu, x * SIGMOID(x))
UN_F(lgamma, lgamma(x))

UN_F(softsign, x / (1 + fabs(x)))

static double tpf_digamma(double x) {
    double r = 0;
    if (x <= 0 && floor(x) == x) return NAN;
    if (x < 0) return tpf_digamma(1 - x) - 3.14159265358979323846 / tan(3.14159265358979323846 * x);
    while (x < 6) { r -= 1 / x; x += 1; }
    double f = 1 / (x * x);
    return r + log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}
static void un_digamma_f32_real(const void *xv, void *ov, int64_t n, double p) {
    const float *X = xv; float *O = ov; (void)p;
    for (int64_t i = 0; i < n; i++) O[i] = (float)tpf_digamma(X[i]);
}
static void un_digamma_f64_real(const void *xv, void *ov, int64_t n, double p) {
    const double *X = xv; double *O = ov; (void)p;
    for (int64_t i = 0; i < n; i++) O[i] = tpf_digamma(X[i]);
}

#define UROW_F(NAME) [TPF_F32] = un_##NAME##_f32, [TPF_F64] = un_##NAME##_f64
#define UROW_I(NAME) [TPF_I8] = un_##NAME##_i8, [TPF_U8] = un_##NAME##_u8, [TPF_I16] = un_##NAME##_i16, \
                     [TPF_I32] = un_##NAME##_i32, [TPF_I64] = un_##NAME##_i64

static const unfn un_table[TPF_UN_NOPS][TPF_NDTYPES] = {
    [TPF_UN_NEG] = {UROW_F(neg), UROW_I(neg)},
    [TPF_UN_ABS] = {UROW_F(abs), UROW_I(abs)},
    [TPF_UN_SIGN] = {UROW_F(sign), UROW_I(sign)},
    [TPF_UN_SQUARE] = {UROW_F(square), UROW_I(square)},
    [TPF_UN_SQRT] = {UROW_F(sqrt)}, [TPF_UN_RSQRT] = {UROW_F(rsqrt)},
    [TPF_UN_EXP] = {UROW_F(exp)}, [TPF_UN_EXPM1] = {UROW_F(expm1)},
    [TPF_UN_LOG] = {UROW_F(log)}, [TPF_UN_LOG1P] = {UROW_F(log1p)},
    [TPF_UN_SIN] = {UROW_F(sin)}, [TPF_UN_COS] = {UROW_F(cos)}, [TPF_UN_TAN] = {UROW_F(tan)},
    [TPF_UN_ASIN] = {UROW_F(asin)}, [TPF_UN_ACOS] = {UROW_F(acos)}, [TPF_UN_ATAN] = {UROW_F(atan)},
    [TPF_UN_SINH] = {UROW_F(sinh)}, [TPF_UN_COSH] = {UROW_F(cosh)}, [TPF_UN_TANH] = {UROW_F(tanh)},
    [TPF_UN_ASINH] = {UROW_F(asinh)}, [TPF_UN_ACOSH] = {UROW_F(acosh)}, [TPF_UN_ATANH] = {UROW_F(atanh)},
    [TPF_UN_SIGMOID] = {UROW_F(sigmoid)},
    [TPF_UN_RELU] = {UROW_F(relu), UROW_I(relu)},
    [TPF_UN_SOFTPLUS] = {UROW_F(softplus)}, [TPF_UN_ELU] = {UROW_F(elu)},
    [TPF_UN_GELU] = {UROW_F(gelu)}, [TPF_UN_SELU] = {UROW_F(selu)},
    [TPF_UN_FLOOR] = {UROW_F(floor)}, [TPF_UN_CEIL] = {UROW_F(ceil)}, [TPF_UN_ROUND] = {UROW_F(round)},
    [TPF_UN_RECIPROCAL] = {UROW_F(reciprocal)},
    [TPF_UN_ERF] = {UROW_F(erf)}, [TPF_UN_ERFC] = {UROW_F(erfc)},
    [TPF_UN_LOGICAL_NOT] = {[TPF_BOOL] = un_logical_not_b},
    [TPF_UN_BITWISE_NOT] = {UROW_I(bitwise_not), [TPF_BOOL] = un_bitwise_not_b},
    [TPF_UN_ISNAN] = {UROW_F(isnan)}, [TPF_UN_ISINF] = {UROW_F(isinf)}, [TPF_UN_ISFINITE] = {UROW_F(isfinite)},
    [TPF_UN_RELU6] = {UROW_F(relu6)}, [TPF_UN_LEAKY_RELU] = {UROW_F(leaky_relu)},
    [TPF_UN_LOG_SIGMOID] = {UROW_F(log_sigmoid)}, [TPF_UN_SILU] = {UROW_F(silu)},
    [TPF_UN_LGAMMA] = {UROW_F(lgamma)},
    [TPF_UN_DIGAMMA] = {[TPF_F32] = un_digamma_f32_real, [TPF_F64] = un_digamma_f64_real},
    [TPF_UN_SOFTSIGN] = {UROW_F(softsign)},
};

static int un_out_bool(int op) { return op == TPF_UN_ISNAN || op == TPF_UN_ISINF || op == TPF_UN_ISFINITE; }

int tpf_unary(int op, int dt, const void *x, void *out, int64_t n, double param) {
    if (op < 0 || op >= TPF_UN_NOPS) return TPF_EBADOP;
    if (dt < 0 || dt >= TPF_NDTYPES || !un_table[op][dt]) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    unfn fn = un_table[op][dt];
    size_t es = tpf_dtype_size(dt), eo = un_out_bool(op) ? 1 : es;
    int nt = TPF_NTHREADS(n);
    if (nt <= 1) { tpf_fp_enter(); fn(x, out, n, param); return TPF_OK; }
    int64_t chunk = (n + nt - 1) / nt;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (lo < hi) fn((const char *)x + lo * es, (char *)out + lo * eo, hi - lo, param);
    }
    return TPF_OK;
}
