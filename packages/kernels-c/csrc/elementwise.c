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
 * float32 exp, log, tanh, sigmoid, silu and softplus use branch-free polynomial
 * forms (Cephes' coefficients, <= 2 ulp in float32) that gcc vectorizes; the loops
 * are compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time
 * (target_clones), since the build may not use one machine's -march=native.
 */
#include "tpf.h"
#include "elementwise.h"
#include <tgmath.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define TPF_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef TPF_CLONES
#define TPF_CLONES
#endif

/* The AVX2 and AVX-512 clones may fuse a*b+c into one FMA (one rounding instead
 * of two): faster polynomials, last-bit differences between machines. */
#pragma GCC optimize("fp-contract=fast")

typedef void (*binfn)(const void *, int64_t, const void *, int64_t, void *, int64_t);
typedef void (*unfn)(const void *, void *, int64_t, double);

/* ---- vectorizable float32 math --------------------------------------- */

static inline float f_from_bits(int32_t i) { float f; memcpy(&f, &i, 4); return f; }
static inline int32_t f_bits(float f) { int32_t i; memcpy(&i, &f, 4); return i; }

/* e**x = p * 2**n1 * 2**n2 for x in [lo, hi]: x = n ln2 + r, |r| <= ln2/2, p = e**r by a
 * degree-6 polynomial, n split in two halves so that each power of two is a normal float.
 * Callers that multiply e**x by something (silu: x e**x) fold it into p before scaling, so
 * a product that is a normal float comes out right where e**x alone would be subnormal. */
static inline float tpf_vexpf_parts(float xc, float *s1, float *s2) {
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* round to nearest */
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t ni = (int32_t)n, n1 = ni >> 1, n2 = ni - n1;   /* gcc: >> is arithmetic */
    *s1 = f_from_bits((int32_t)((uint32_t)(n1 + 127) << 23));
    *s2 = f_from_bits((int32_t)((uint32_t)(n2 + 127) << 23));
    return p;
}

#define TPF_EXPF_HI 88.7228393554688f
#define TPF_EXPF_LO -103.972084045410f

/* e**x (results down to the subnormals and up to FLT_MAX come out right) */
static inline float tpf_vexpf(float x) {
    const float hi = TPF_EXPF_HI, lo = TPF_EXPF_LO;
    float xc = x < hi ? x : hi;          /* NaN becomes hi here; it is restored below */
    xc = xc > lo ? xc : lo;
    float s1, s2;
    float y = tpf_vexpf_parts(xc, &s1, &s2) * s1 * s2;
    y = x > hi ? INFINITY : y;
    y = x < lo ? 0.0f : y;
    return x != x ? x : y;
}

/* natural log: x = m 2**e with m in [sqrt(1/2), sqrt(2)), log(m) by Cephes' polynomial */
static inline float tpf_vlogf(float x) {
    float xs = x < 1.17549435e-38f ? x * 8388608.0f : x;   /* subnormals (when not flushed) */
    int32_t bits = f_bits(xs);
    int32_t e = ((bits >> 23) & 0xff) - 126 - (x < 1.17549435e-38f ? 23 : 0);
    float m = f_from_bits((bits & 0x007fffff) | 0x3f000000);   /* [0.5, 1) */
    int small = m < 0.707106781186547524f;
    float fe = (float)(small ? e - 1 : e);
    float t = small ? m + m - 1.0f : m - 1.0f;
    float z = t * t;
    float y = 7.0376836292e-2f;
    y = y * t - 1.1514610310e-1f;
    y = y * t + 1.1676998740e-1f;
    y = y * t - 1.2420140846e-1f;
    y = y * t + 1.4249322787e-1f;
    y = y * t - 1.6668057665e-1f;
    y = y * t + 2.0000714765e-1f;
    y = y * t - 2.4999993993e-1f;
    y = y * t + 3.3333331174e-1f;
    y = y * t * z;
    y = y - 2.12194440e-4f * fe;
    y = y - 0.5f * z;
    float res = t + y;
    res = res + 0.693359375f * fe;
    res = x == INFINITY ? x : res;
    res = x == 0.0f ? -INFINITY : res;
    res = x < 0.0f ? NAN : res;
    return x != x ? x : res;
}

/* tanh: an odd polynomial below |x| = 0.625, 1 - 2 / (e**2|x| + 1) above, with
 * |x| clamped to 10 (tanh(10) rounds to 1) so that e**2|x| needs no range checks.
 * NaN takes the polynomial branch, which propagates it. */
static inline float tpf_vtanhf(float x) {
    float a = fabsf(x);
    float z2 = a < 10.0f ? a + a : 20.0f;
    float n = (z2 * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = z2 - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    float e = p * f_from_bits((int32_t)((uint32_t)((int32_t)n + 127) << 23));
    float big = copysignf(1.0f - 2.0f / (e + 1.0f), x);
    float z = x * x;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    float small = copysignf(q * z * x + x, x);   /* keeps tanh(-0) = -0 */
    return a >= 0.625f ? big : small;
}

/* sigmoid and silu from e = e**-|x| (never overflows): sigmoid = 1 / (1 + e) for x >= 0 and
 * e / (1 + e) below, so that sigmoid(x) for x in [-104, -88.7] is e**x (subnormal, or 0
 * when flushed) rather than 1 / (1 + inf) = 0; silu below 0 scales x * p / (1 + e) by
 * 2**n last, so its normal results down to x = -92 come out right. */
static inline float tpf_vsigmoidf(float x) {
    float a = -fabsf(x);
    float ac = a > TPF_EXPF_LO ? a : TPF_EXPF_LO;   /* NaN stays NaN: propagated below */
    float s1, s2;
    float e = tpf_vexpf_parts(ac, &s1, &s2) * s1 * s2;
    e = a < TPF_EXPF_LO ? 0.0f : e;
    float d = 1.0f / (1.0f + e);
    float y = x >= 0 ? d : e * d;
    return x != x ? x : y;
}

static inline float tpf_vsiluf(float x) {
    float a = -fabsf(x);
    float ac = a > TPF_EXPF_LO ? a : TPF_EXPF_LO;
    float s1, s2;
    float p = tpf_vexpf_parts(ac, &s1, &s2);
    float e = p * s1 * s2;
    e = a < TPF_EXPF_LO ? 0.0f : e;
    float d = 1.0f / (1.0f + e);
    float neg = (x * p * d) * s1 * s2;
    neg = x < TPF_EXPF_LO ? x * 0.0f : neg;         /* -0 (NaN at -inf, as x * sigmoid(x) gives) */
    float y = x >= 0 ? x * d : neg;
    return x != x ? x : y;
}

/* log1p(u) for u >= 0 from log: log(1 + u) - ((1 + u) - 1 - u) / (1 + u) */
static inline float tpf_vlog1pf_pos(float u) {
    float w = 1.0f + u;
    float l = tpf_vlogf(w);
    return w == 1.0f ? u : l - ((w - 1.0f) - u) / w;
}

/* softplus = max(x, 0) + log1p(e**-|x|) */
static inline float tpf_vsoftplusf(float x) {
    float m = x > 0 ? x : 0.0f;
    float y = m + tpf_vlog1pf_pos(tpf_vexpf(-fabsf(x)));
    return x != x ? x : y;
}

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

/* float ops (f32, f64); BIN_FV for the ones that vectorize (compiled per instruction set) */
#define BIN_F(NAME, EXPR) BIN_LOOP(NAME, f32, float, float, uint32_t, EXPR) \
                          BIN_LOOP(NAME, f64, double, double, uint64_t, EXPR)
#define BIN_FV(NAME, EXPR) BIN_LOOP_A(NAME, f32, float, float, uint32_t, EXPR, TPF_CLONES) \
                           BIN_LOOP_A(NAME, f64, double, double, uint64_t, EXPR, TPF_CLONES)
/* integer ops (all int dtypes) */
#define BIN_I(NAME, EXPR)                                                                \
    BIN_LOOP(NAME, i8, int8_t, int8_t, uint32_t, EXPR) BIN_LOOP(NAME, u8, uint8_t, uint8_t, uint32_t, EXPR) \
    BIN_LOOP(NAME, i16, int16_t, int16_t, uint32_t, EXPR) BIN_LOOP(NAME, i32, int32_t, int32_t, uint32_t, EXPR) \
    BIN_LOOP(NAME, i64, int64_t, int64_t, uint64_t, EXPR)
/* comparisons: any dtype in, bool out */
#define BIN_CMP(NAME, EXPR)                                                              \
    BIN_LOOP(NAME, f32, float, uint8_t, uint32_t, EXPR) BIN_LOOP(NAME, f64, double, uint8_t, uint64_t, EXPR) \
    BIN_LOOP(NAME, i8, int8_t, uint8_t, uint32_t, EXPR) BIN_LOOP(NAME, u8, uint8_t, uint8_t, uint32_t, EXPR) \
    BIN_LOOP(NAME, i16, int16_t, uint8_t, uint32_t, EXPR) BIN_LOOP(NAME, i32, int32_t, uint8_t, uint32_t, EXPR) \
    BIN_LOOP(NAME, i64, int64_t, uint8_t, uint64_t, EXPR) BIN_LOOP(NAME, b, uint8_t, uint8_t, uint32_t, EXPR)

/* integer floor division and remainder (y != 0 is checked before the loop) */
static inline int64_t tpf_floordiv_i(int64_t x, int64_t y) {
    if (y == -1) return (int64_t)(0 - (uint64_t)x);   /* INT64_MIN // -1 wraps */
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}
static inline int64_t tpf_floormod_i(int64_t x, int64_t y) {
    if (y == -1) return 0;
    int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}
static inline int64_t tpf_truncdiv_i(int64_t x, int64_t y) {
    return y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y;
}
static inline int64_t tpf_truncmod_i(int64_t x, int64_t y) { return y == -1 ? 0 : x % y; }
/* x ** y wrapping (y < 0 only reaches here for bases 1 and -1) */
static inline uint64_t tpf_ipow(int64_t x, int64_t y) {
    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? (uint64_t)-1 : 1) : 0);
    uint64_t r = 1, b = (uint64_t)x;
    while (y) { if (y & 1) r *= b; b *= b; y >>= 1; }
    return r;
}

/* Python's float floor division and remainder (NumPy's npy_divmod) */
#define PY_DIVMOD(SUF, T)                                                              \
static inline T tpf_pymod_##SUF(T a, T b) {                                            \
    T mod = fmod(a, b);                                                                \
    if (b == 0) return mod;                                                            \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                              \
    else mod = copysign((T)0, b);                                                      \
    return mod;                                                                        \
}                                                                                      \
static inline T tpf_pyfloordiv_##SUF(T a, T b) {                                       \
    if (b == 0) return a / b;                                                          \
    T mod = fmod(a, b), div = (a - mod) / b;                                           \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                                  \
    if (div != 0) { T f = floor(div); if (div - f > (T)0.5) f += 1; return f; }        \
    return copysign((T)0, a / b);                                                      \
}
PY_DIVMOD(f, float)
PY_DIVMOD(d, double)
#define PYMOD(x, y) _Generic((x), float: tpf_pymod_f, default: tpf_pymod_d)(x, y)
#define PYFLOORDIV(x, y) _Generic((x), float: tpf_pyfloordiv_f, default: tpf_pyfloordiv_d)(x, y)
#define MAXF(x, y) (isnan(x) || (x) > (y) ? (x) : (y))
#define MINF(x, y) (isnan(x) || (x) < (y) ? (x) : (y))
#define WRAP(OP) ((Wt)x OP (Wt)y)
#define NBITS ((int64_t)(8 * sizeof(x)))

BIN_FV(add, x + y)           BIN_I(add, WRAP(+))
BIN_FV(sub, x - y)           BIN_I(sub, WRAP(-))
BIN_FV(mul, x * y)           BIN_I(mul, WRAP(*))
BIN_FV(div, x / y)
BIN_F(floordiv, PYFLOORDIV(x, y))
BIN_I(floordiv, y == 0 ? 0 : tpf_floordiv_i(x, y))
BIN_F(mod, PYMOD(x, y))
BIN_I(mod, y == 0 ? 0 : tpf_floormod_i(x, y))
BIN_F(pow, pow(x, y))       BIN_I(pow, tpf_ipow(x, y))
BIN_FV(maximum, MAXF(x, y))  BIN_I(maximum, x > y ? x : y)
BIN_FV(minimum, MINF(x, y))  BIN_I(minimum, x < y ? x : y)
BIN_F(atan2, atan2(x, y))
BIN_FV(squared_difference, (x - y) * (x - y))
BIN_I(squared_difference, ((Wt)x - (Wt)y) * ((Wt)x - (Wt)y))
BIN_FV(div_no_nan, y == 0 ? 0 : x / y)
BIN_CMP(equal, x == y)
BIN_CMP(not_equal, x != y)
BIN_CMP(less, x < y)
BIN_CMP(less_equal, x <= y)
BIN_CMP(greater, x > y)
BIN_CMP(greater_equal, x >= y)
BIN_LOOP(logical_and, b, uint8_t, uint8_t, uint32_t, x && y)
BIN_LOOP(logical_or, b, uint8_t, uint8_t, uint32_t, x || y)
BIN_LOOP(logical_xor, b, uint8_t, uint8_t, uint32_t, (!x) != (!y))
BIN_I(bitwise_and, x & y)   BIN_LOOP(bitwise_and, b, uint8_t, uint8_t, uint32_t, x & y)
BIN_I(bitwise_or, x | y)    BIN_LOOP(bitwise_or, b, uint8_t, uint8_t, uint32_t, x | y)
BIN_I(bitwise_xor, x ^ y)   BIN_LOOP(bitwise_xor, b, uint8_t, uint8_t, uint32_t, x ^ y)
BIN_I(left_shift, (y < 0 || y >= NBITS) ? 0 : ((Wt)x << y))
BIN_I(right_shift, (y < 0 || y >= NBITS) ? (x < 0 ? -1 : 0) : (x >> y))
/* gradient helpers: g * (x > 0), g * (1 - y*y), g * y * (1 - y) */
BIN_FV(relu_grad, y > 0 ? x : 0)
BIN_FV(tanh_grad, x * (1 - y * y))
BIN_FV(sigmoid_grad, x * y * (1 - y))
/* C's truncating division and remainder */
BIN_F(truncatediv, trunc(x / y))
BIN_I(truncatediv, y == 0 ? 0 : tpf_truncdiv_i(x, y))
BIN_F(truncatemod, fmod(x, y))
BIN_I(truncatemod, y == 0 ? 0 : tpf_truncmod_i(x, y))

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
    [TPF_BIN_TRUNCATEDIV] = {ROW_F(truncatediv), ROW_I(truncatediv)},
    [TPF_BIN_TRUNCATEMOD] = {ROW_F(truncatemod), ROW_I(truncatemod)},
};

static int bin_out_bool(int op) { return op >= TPF_BIN_EQUAL && op <= TPF_BIN_GREATER_EQUAL; }

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
    if (op == TPF_BIN_FLOORDIV || op == TPF_BIN_MOD || op == TPF_BIN_TRUNCATEDIV || op == TPF_BIN_TRUNCATEMOD) {
        int64_t m = sb ? n : 1;
        for (int64_t i = 0; i < m; i++)
            if (int_at(dt, b, i * sb) == 0) return TPF_EDIVZERO;
    } else if (op == TPF_BIN_POW && dt != TPF_U8) {
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
    if (is_int_dtype(dt) && (op == TPF_BIN_FLOORDIV || op == TPF_BIN_MOD || op == TPF_BIN_POW ||
                             op == TPF_BIN_TRUNCATEDIV || op == TPF_BIN_TRUNCATEMOD)) {
        /* check every pair of operands the loop will meet */
        for (int64_t r = 0; r < rows; r++) {
            int64_t offa = 0, offb = 0, rem = r;
            for (int d = ndim - 2; d >= 0; d--) {
                int64_t i = rem % shape[d]; rem /= shape[d];
                offa += i * astr[d]; offb += i * bstr[d];
            }
            if (op == TPF_BIN_POW) {
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
#define UN_F(NAME, EXPR) UN_LOOP(NAME, f32, float, float, uint32_t, EXPR) \
                         UN_LOOP(NAME, f64, double, double, uint64_t, EXPR)
/* UN_FV: loops that vectorize, compiled per instruction set; UN_F2: float32 through a
 * vectorizable formula, float64 through libm */
#define UN_FV(NAME, EXPR) UN_LOOP_A(NAME, f32, float, float, uint32_t, EXPR, TPF_CLONES) \
                          UN_LOOP_A(NAME, f64, double, double, uint64_t, EXPR, TPF_CLONES)
#define UN_F2(NAME, EXPR32, EXPR64) UN_LOOP_A(NAME, f32, float, float, uint32_t, EXPR32, TPF_CLONES) \
                                    UN_LOOP(NAME, f64, double, double, uint64_t, EXPR64)
#define UN_I(NAME, EXPR)                                                                  \
    UN_LOOP(NAME, i8, int8_t, int8_t, uint32_t, EXPR) UN_LOOP(NAME, u8, uint8_t, uint8_t, uint32_t, EXPR) \
    UN_LOOP(NAME, i16, int16_t, int16_t, uint32_t, EXPR) UN_LOOP(NAME, i32, int32_t, int32_t, uint32_t, EXPR) \
    UN_LOOP(NAME, i64, int64_t, int64_t, uint64_t, EXPR)
#define UN_FB(NAME, EXPR) UN_LOOP(NAME, f32, float, uint8_t, uint32_t, EXPR) \
                          UN_LOOP(NAME, f64, double, uint8_t, uint64_t, EXPR)

#define SIGMOID(x) ((x) >= 0 ? 1 / (1 + exp(-(x))) : exp(x) / (1 + exp(x)))
#define SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
/* gelu(x) = x Phi(x) = x / 2 erfc(-x / sqrt 2): erfc, not 1 + erf, which cancels for x < 0
 * (192 ulp at -2.7; gelu(-10) = -0 instead of -7.6e-23).  The argument -x / sqrt 2 = t + e
 * in double-double (erfc magnifies its rounding 2 t**2 times: 100x at x = -10), erfc(t + e)
 * = erfc(t) - e 2 / sqrt(pi) e**-t**2.  float32 goes through double. */
static inline double tpf_gelu(double x) {
    const double c = 0.70710678118654757, c_lo = -4.8336466567264567e-17;   /* c + c_lo = 1 / sqrt 2 */
    double t = -x * c;
    double e = fma(-x, c, -t) + -x * c_lo;
    double corr = fabs(t) < 27 ? e * 1.1283791670955126 * exp(-t * t) : 0.0;
    return 0.5 * x * (erfc(t) - corr);
}
/* TensorFlow's approximate=True: x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x**3))) */
static inline double tpf_gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x))));
}
#define SELU_A 1.6732632423543772848170429916717
#define SELU_S 1.0507009873554804934193349852946

UN_FV(neg, -x)                  UN_I(neg, (Wt)0 - (Wt)x)
UN_FV(abs, fabs(x))             UN_I(abs, x < 0 ? (Wt)0 - (Wt)x : (Wt)x)
UN_FV(sign, x != x ? x : (x > 0) - (x < 0))  UN_I(sign, (x > 0) - (x < 0))
UN_FV(square, x * x)            UN_I(square, (Wt)x * (Wt)x)
UN_FV(sqrt, sqrt(x))
UN_FV(rsqrt, 1 / sqrt(x))
UN_F2(exp, tpf_vexpf(x), exp(x))
UN_F(expm1, expm1(x))
UN_F2(log, tpf_vlogf(x), log(x))
UN_F(log1p, log1p(x))
UN_F(sin, sin(x))
UN_F(cos, cos(x))
UN_F(tan, tan(x))
UN_F(asin, asin(x))
UN_F(acos, acos(x))
UN_F(atan, atan(x))
UN_F(sinh, sinh(x))
UN_F(cosh, cosh(x))
UN_F2(tanh, tpf_vtanhf(x), tanh(x))
UN_F(asinh, asinh(x))
UN_F(acosh, acosh(x))
UN_F(atanh, atanh(x))
UN_F2(sigmoid, tpf_vsigmoidf(x), SIGMOID(x))
UN_FV(relu, x > 0 ? x : (x != x ? x : 0))  UN_I(relu, x > 0 ? x : 0)
UN_F2(softplus, tpf_vsoftplusf(x), SOFTPLUS(x))
UN_F(elu, x > 0 ? x : expm1(x))
UN_F(gelu, p != 0 ? tpf_gelu_tanh(x) : tpf_gelu(x))
UN_F(selu, SELU_S * (x > 0 ? x : SELU_A * expm1(x)))
UN_FV(floor, floor(x))
UN_FV(ceil, ceil(x))
UN_FV(round, rint(x))
UN_FV(reciprocal, 1 / x)
UN_F(erf, erf(x))
UN_F(erfc, erfc(x))
UN_LOOP(logical_not, b, uint8_t, uint8_t, uint32_t, !x)
UN_I(bitwise_not, ~x)          UN_LOOP(bitwise_not, b, uint8_t, uint8_t, uint32_t, !x)
UN_FB(isnan, isnan(x))
UN_FB(isinf, isinf(x))
UN_FB(isfinite, isfinite(x))
UN_FV(relu6, x > 6 ? 6 : (x > 0 ? x : (x != x ? x : 0)))
UN_FV(leaky_relu, x > 0 ? x : x * p)
UN_F2(log_sigmoid, -tpf_vsoftplusf(-x), -SOFTPLUS(-x))
UN_F2(silu, tpf_vsiluf(x), x * SIGMOID(x))
UN_F(lgamma, lgamma(x))
UN_FV(softsign, x / (1 + fabs(x)))

/* polygamma(m, x) = d^m/dx^m digamma(x); m = 0 is digamma.  Shift x up by the
 * recurrence psi_m(x) = psi_m(x + 1) - (-1)^m m! / x^(m+1) until x >= 10, then sum
 * the asymptotic series. */
static double tpf_polygamma(int m, double x) {
    static const double B2k[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                                 -3617.0 / 510, 43867.0 / 798, -174611.0 / 330};
    if (x != x) return x;
    if (x <= 0 && floor(x) == x) return m == 0 ? NAN : ((m & 1) ? INFINITY : NAN);
    if (m == 0 && x < 0)   /* reflection: psi(x) = psi(1 - x) - pi / tan(pi x) */
        return tpf_polygamma(0, 1 - x) - 3.14159265358979323846 / tan(3.14159265358979323846 * x);
    if (x == INFINITY) return m == 0 ? INFINITY : 0.0;
    double fact = 1;   /* m! */
    for (int i = 2; i <= m; i++) fact *= i;
    double sign = (m & 1) ? 1.0 : -1.0;   /* (-1)^(m+1) */
    double acc = 0;
    while (x < 10) {
        acc += m == 0 ? -1 / x : sign * fact / pow(x, m + 1);
        x += 1;
    }
    if (m == 0) {
        double f = 1 / (x * x), s = 0, fp = f;
        for (int k = 1; k <= 10; k++) { s += B2k[k - 1] / (2.0 * k) * fp; fp *= f; }
        return acc + log(x) - 0.5 / x - s;
    }
    /* psi_m(x) ~ (-1)^(m+1) [ (m-1)!/x^m + m!/(2 x^(m+1)) + sum_k B2k (2k+m-1)!/((2k)! x^(2k+m)) ] */
    double fm1 = fact / m;
    double s = fm1 / pow(x, m) + fact / (2 * pow(x, m + 1));
    double coef = fact * (m + 1) / 2.0;   /* (2k+m-1)! / (2k)! at k = 1 */
    double xp = pow(x, m + 2), x2 = x * x;
    for (int k = 1; k <= 10; k++) {
        double term = B2k[k - 1] * coef / xp;
        s += term;
        if (fabs(term) < 1e-17 * fabs(s)) break;
        coef *= (double)(2 * k + m) * (2 * k + m + 1) / ((2.0 * k + 1) * (2.0 * k + 2));
        xp *= x2;
    }
    return acc + sign * s;
}
static void un_digamma_f32(const void *xv, void *ov, int64_t n, double p) {
    const float *X = xv; float *O = ov; (void)p;
    for (int64_t i = 0; i < n; i++) O[i] = (float)tpf_polygamma(0, X[i]);
}
static void un_digamma_f64(const void *xv, void *ov, int64_t n, double p) {
    const double *X = xv; double *O = ov; (void)p;
    for (int64_t i = 0; i < n; i++) O[i] = tpf_polygamma(0, X[i]);
}
static void un_polygamma_f32(const void *xv, void *ov, int64_t n, double p) {
    const float *X = xv; float *O = ov;
    for (int64_t i = 0; i < n; i++) O[i] = (float)tpf_polygamma((int)p, X[i]);
}
static void un_polygamma_f64(const void *xv, void *ov, int64_t n, double p) {
    const double *X = xv; double *O = ov;
    for (int64_t i = 0; i < n; i++) O[i] = tpf_polygamma((int)p, X[i]);
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
    [TPF_UN_DIGAMMA] = {UROW_F(digamma)},
    [TPF_UN_SOFTSIGN] = {UROW_F(softsign)},
    [TPF_UN_POLYGAMMA] = {UROW_F(polygamma)},
};

static int un_out_bool(int op) { return op == TPF_UN_ISNAN || op == TPF_UN_ISINF || op == TPF_UN_ISFINITE; }

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
