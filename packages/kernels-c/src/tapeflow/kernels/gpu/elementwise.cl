/* Element-wise unary and binary math (csrc/elementwise.c on the device).
 *
 * One kernel per (op, dtype): binary_<op>_<dt>, unary_<op>_<dt>.  A binary kernel
 * reads its operands through strides (nd = 1 with strides 0/1 is the flat and the
 * scalar fast path; nd > 1 a general broadcast), so one kernel serves
 * tpf_binary_flat and tpf_binary_strided.  Integer division by zero and integer
 * powers with a negative exponent set *flag (1 and 2) for the host to turn into
 * the CPU kernels' statuses.
 */

/* ---- binary ----------------------------------------------------------- */

#define BIN_KERNEL(NAME, SUF, T, TO, W, CHECK, EXPR)                                              \
KERNEL NAME##_##SUF(const G T *A, const G T *B, G TO *O, i64 n, int nd, dims_t shape,    \
                             dims_t as, dims_t bs, G int *flag) {                                 \
    i64 i = GID0();                                                                               \
    if (i >= n) return;                                                                           \
    i64 oa, ob;                                                                                   \
    if (nd == 1) { oa = i * as.d[0]; ob = i * bs.d[0]; }                                          \
    else { oa = strided_offset(i, nd, &shape, &as); ob = strided_offset(i, nd, &shape, &bs); }    \
    typedef W Wt;                                                                                 \
    T x = A[oa], y = B[ob];                                                                       \
    CHECK                                                                                         \
    O[i] = (TO)(EXPR);                                                                            \
}

#define NOCHECK
#define DIVCHECK if (y == 0) flag[0] = 1;
#define POWCHECK if (y < 0 && x != 1 && x != -1) flag[0] = 2;

#ifdef TPF_FP64
#define BIN_F(NAME, EXPR) BIN_KERNEL(binary_##NAME, f32, float, float, u32, NOCHECK, EXPR) \
                          BIN_KERNEL(binary_##NAME, f64, double, double, u64, NOCHECK, EXPR)
#define BIN_CMP_F(NAME, EXPR) BIN_KERNEL(binary_##NAME, f32, float, u8, u32, NOCHECK, EXPR) \
                              BIN_KERNEL(binary_##NAME, f64, double, u8, u64, NOCHECK, EXPR)
#else
#define BIN_F(NAME, EXPR) BIN_KERNEL(binary_##NAME, f32, float, float, u32, NOCHECK, EXPR)
#define BIN_CMP_F(NAME, EXPR) BIN_KERNEL(binary_##NAME, f32, float, u8, u32, NOCHECK, EXPR)
#endif
#define BIN_IC(NAME, CHECK, EXPR)                                                                 \
    BIN_KERNEL(binary_##NAME, i8, i8, i8, u32, CHECK, EXPR) BIN_KERNEL(binary_##NAME, u8, u8, u8, u32, CHECK, EXPR)  \
    BIN_KERNEL(binary_##NAME, i16, i16, i16, u32, CHECK, EXPR) BIN_KERNEL(binary_##NAME, i32, i32, i32, u32, CHECK, EXPR) \
    BIN_KERNEL(binary_##NAME, i64, i64, i64, u64, CHECK, EXPR)
#define BIN_I(NAME, EXPR) BIN_IC(NAME, NOCHECK, EXPR)
#define BIN_CMP(NAME, EXPR) BIN_CMP_F(NAME, EXPR)                                                 \
    BIN_KERNEL(binary_##NAME, i8, i8, u8, u32, NOCHECK, EXPR) BIN_KERNEL(binary_##NAME, u8, u8, u8, u32, NOCHECK, EXPR) \
    BIN_KERNEL(binary_##NAME, i16, i16, u8, u32, NOCHECK, EXPR) BIN_KERNEL(binary_##NAME, i32, i32, u8, u32, NOCHECK, EXPR) \
    BIN_KERNEL(binary_##NAME, i64, i64, u8, u64, NOCHECK, EXPR) BIN_KERNEL(binary_##NAME, b, u8, u8, u32, NOCHECK, EXPR)

/* integer floor division and remainder, as csrc/elementwise.c (y != 0 here) */
DEV i64 floordiv_i(i64 x, i64 y) {
    if (y == -1) return (i64)(0 - (u64)x);
    i64 q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}
DEV i64 floormod_i(i64 x, i64 y) {
    if (y == -1) return 0;
    i64 r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}
DEV i64 truncdiv_i(i64 x, i64 y) { return y == -1 ? (i64)(0 - (u64)x) : x / y; }
DEV i64 truncmod_i(i64 x, i64 y) { return y == -1 ? 0 : x % y; }
DEV u64 ipow(i64 x, i64 y) {
    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? (u64)-1 : 1) : 0);
    u64 r = 1, b = (u64)x;
    while (y) { if (y & 1) r *= b; b *= b; y >>= 1; }
    return r;
}

/* Python's float floor division and remainder (NumPy's npy_divmod) */
#define PY_DIVMOD(SUF, T)                                                  \
DEV T pymod_##SUF(T a, T b) {                                              \
    T mod = fmod(a, b);                                                    \
    if (b == 0) return mod;                                                \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                  \
    else mod = copysign((T)0, b);                                          \
    return mod;                                                            \
}                                                                          \
DEV T pyfloordiv_##SUF(T a, T b) {                                         \
    if (b == 0) return a / b;                                              \
    T mod = fmod(a, b), div = (a - mod) / b;                               \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                      \
    if (div != 0) { T f = floor(div); if (div - f > (T)0.5) f += 1; return f; } \
    return copysign((T)0, a / b);                                          \
}
PY_DIVMOD(f32, float)
#ifdef TPF_FP64
PY_DIVMOD(f64, double)
#endif
#define MAXF(x, y) (ISNAN(x) || (x) > (y) ? (x) : (y))
#define MINF(x, y) (ISNAN(x) || (x) < (y) ? (x) : (y))
#define WRAP(OP) ((Wt)x OP (Wt)y)
#define NBITS ((i64)(8 * sizeof(x)))

/* float ops whose float32 and float64 forms call different helpers */
#ifdef TPF_FP64
#define BIN_FP(NAME, E32, E64) BIN_KERNEL(binary_##NAME, f32, float, float, u32, NOCHECK, E32) \
                               BIN_KERNEL(binary_##NAME, f64, double, double, u64, NOCHECK, E64)
#else
#define BIN_FP(NAME, E32, E64) BIN_KERNEL(binary_##NAME, f32, float, float, u32, NOCHECK, E32)
#endif

BIN_F(add, x + y)           BIN_I(add, WRAP(+))
BIN_F(sub, x - y)           BIN_I(sub, WRAP(-))
BIN_F(mul, x * y)           BIN_I(mul, WRAP(*))
BIN_F(div, x / y)
BIN_FP(floordiv, pyfloordiv_f32(x, y), pyfloordiv_f64(x, y))
BIN_IC(floordiv, DIVCHECK, y == 0 ? 0 : floordiv_i(x, y))
BIN_FP(mod, pymod_f32(x, y), pymod_f64(x, y))
BIN_IC(mod, DIVCHECK, y == 0 ? 0 : floormod_i(x, y))
BIN_F(pow, pow(x, y))
BIN_KERNEL(binary_pow, i8, i8, i8, u32, POWCHECK, ipow(x, y))
BIN_KERNEL(binary_pow, u8, u8, u8, u32, NOCHECK, ipow(x, y))
BIN_KERNEL(binary_pow, i16, i16, i16, u32, POWCHECK, ipow(x, y))
BIN_KERNEL(binary_pow, i32, i32, i32, u32, POWCHECK, ipow(x, y))
BIN_KERNEL(binary_pow, i64, i64, i64, u64, POWCHECK, ipow(x, y))
BIN_F(maximum, MAXF(x, y))  BIN_I(maximum, x > y ? x : y)
BIN_F(minimum, MINF(x, y))  BIN_I(minimum, x < y ? x : y)
BIN_F(atan2, atan2(x, y))
BIN_F(squared_difference, (x - y) * (x - y))
BIN_I(squared_difference, ((Wt)x - (Wt)y) * ((Wt)x - (Wt)y))
BIN_F(div_no_nan, y == 0 ? 0 : x / y)
BIN_CMP(equal, x == y)
BIN_CMP(not_equal, x != y)
BIN_CMP(less, x < y)
BIN_CMP(less_equal, x <= y)
BIN_CMP(greater, x > y)
BIN_CMP(greater_equal, x >= y)
BIN_KERNEL(binary_logical_and, b, u8, u8, u32, NOCHECK, x && y)
BIN_KERNEL(binary_logical_or, b, u8, u8, u32, NOCHECK, x || y)
BIN_KERNEL(binary_logical_xor, b, u8, u8, u32, NOCHECK, (!x) != (!y))
BIN_I(bitwise_and, x & y)   BIN_KERNEL(binary_bitwise_and, b, u8, u8, u32, NOCHECK, x & y)
BIN_I(bitwise_or, x | y)    BIN_KERNEL(binary_bitwise_or, b, u8, u8, u32, NOCHECK, x | y)
BIN_I(bitwise_xor, x ^ y)   BIN_KERNEL(binary_bitwise_xor, b, u8, u8, u32, NOCHECK, x ^ y)
BIN_I(left_shift, (y < 0 || y >= NBITS) ? 0 : ((Wt)x << y))
BIN_I(right_shift, (y < 0 || y >= NBITS) ? (x < 0 ? -1 : 0) : (x >> y))
BIN_F(relu_grad, y > 0 ? x : 0)
BIN_F(tanh_grad, x * (1 - y * y))
BIN_F(sigmoid_grad, x * y * (1 - y))
BIN_F(truncatediv, trunc(x / y))
BIN_IC(truncatediv, DIVCHECK, y == 0 ? 0 : truncdiv_i(x, y))
BIN_F(truncatemod, fmod(x, y))
BIN_IC(truncatemod, DIVCHECK, y == 0 ? 0 : truncmod_i(x, y))

/* ---- unary ------------------------------------------------------------ */

#ifdef TPF_FP64
typedef double param_t;
#else
typedef float param_t;
#endif

#define UN_KERNEL(NAME, SUF, T, TO, W, EXPR)                                                \
KERNEL NAME##_##SUF(const G T *X, G TO *O, i64 n, param_t p) {                      \
    i64 i = GID0();                                                                         \
    if (i >= n) return;                                                                     \
    typedef W Wt;                                                                           \
    T x = X[i];                                                                             \
    O[i] = (TO)(EXPR);                                                                      \
}
#ifdef TPF_FP64
#define UN_F(NAME, EXPR) UN_KERNEL(unary_##NAME, f32, float, float, u32, EXPR) UN_KERNEL(unary_##NAME, f64, double, double, u64, EXPR)
#define UN_FB(NAME, EXPR) UN_KERNEL(unary_##NAME, f32, float, u8, u32, EXPR) UN_KERNEL(unary_##NAME, f64, double, u8, u64, EXPR)
#else
#define UN_F(NAME, EXPR) UN_KERNEL(unary_##NAME, f32, float, float, u32, EXPR)
#define UN_FB(NAME, EXPR) UN_KERNEL(unary_##NAME, f32, float, u8, u32, EXPR)
#endif
#define UN_I(NAME, EXPR)                                                                    \
    UN_KERNEL(unary_##NAME, i8, i8, i8, u32, EXPR) UN_KERNEL(unary_##NAME, u8, u8, u8, u32, EXPR)           \
    UN_KERNEL(unary_##NAME, i16, i16, i16, u32, EXPR) UN_KERNEL(unary_##NAME, i32, i32, i32, u32, EXPR)     \
    UN_KERNEL(unary_##NAME, i64, i64, i64, u64, EXPR)

#define SIGMOID(x) ((x) >= 0 ? 1 / (1 + exp(-(x))) : exp(x) / (1 + exp(x)))
#define SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
/* gelu = x / 2 erfc(-x / sqrt 2), the argument in double-double (csrc/elementwise.c's
 * tpf_gelu); approximate=True is TensorFlow's tanh form.  Both in double where the device
 * has it, as on the CPU. */
#ifdef TPF_FP64
typedef double gelu_t;
#else
typedef float gelu_t;
#endif
DEV gelu_t v_gelu(gelu_t x) {
    const gelu_t c = (gelu_t)0.70710678118654757, c_lo = (gelu_t)-4.8336466567264567e-17;
    gelu_t t = -x * c;
    gelu_t e = fma(-x, c, -t) + -x * c_lo;
    gelu_t corr = fabs(t) < 27 ? e * (gelu_t)1.1283791670955126 * exp(-t * t) : (gelu_t)0;
    return (gelu_t)0.5 * x * (erfc(t) - corr);
}
DEV gelu_t v_gelu_tanh(gelu_t x) {
    return (gelu_t)0.5 * x * (1 + tanh((gelu_t)0.7978845608028654 * (x + (gelu_t)0.044715 * (x * x * x))));
}
#define SELU_A 1.6732632423543772848170429916717
#define SELU_S 1.0507009873554804934193349852946

/* float32 exp, log, tanh, sigmoid, softplus: csrc/elementwise.c's branch-free forms
 * (Cephes' coefficients, <= 2 ulp), so special values and rounding follow the CPU
 * and not the device's math library (pocl's tanh(inf) is 0.99999994). */
/* e**x = p 2**n1 2**n2 (csrc/elementwise.c's tpf_vexpf_parts) */
DEV float v_expf_parts(float xc, float *s1, float *s2) {
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    i32 ni = (i32)n, n1 = ni >> 1, n2 = ni - n1;
    *s1 = AS_F32((u32)(n1 + 127) << 23);
    *s2 = AS_F32((u32)(n2 + 127) << 23);
    return p;
}
#define V_EXPF_HI 88.7228393554688f
#define V_EXPF_LO -103.972084045410f
DEV float v_expf(float x) {
    const float hi = V_EXPF_HI, lo = V_EXPF_LO;
    float xc = x < hi ? x : hi;
    xc = xc > lo ? xc : lo;
    float s1, s2;
    float y = v_expf_parts(xc, &s1, &s2) * s1 * s2;
    y = x > hi ? TPF_INF : y;
    y = x < lo ? 0.0f : y;
    return x != x ? x : y;
}
DEV float v_logf(float x) {
    float xs = x < 1.17549435e-38f ? x * 8388608.0f : x;
    i32 bits = (i32)AS_U32(xs);
    i32 e = ((bits >> 23) & 0xff) - 126 - (x < 1.17549435e-38f ? 23 : 0);
    float m = AS_F32((u32)((bits & 0x007fffff) | 0x3f000000));
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
    res = x == TPF_INF ? x : res;
    res = x == 0.0f ? -TPF_INF : res;
    res = x < 0.0f ? TPF_NAN : res;
    return x != x ? x : res;
}
DEV float v_tanhf(float x) {
    float a = fabs(x);
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
    float e = p * AS_F32((u32)((i32)n + 127) << 23);
    float big = copysign(1.0f - 2.0f / (e + 1.0f), x);
    float z = x * x;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    float sm = copysign(q * z * x + x, x);
    return a >= 0.625f ? big : sm;
}
/* sigmoid and silu from e = e**-|x|, silu's negative side scaled by 2**n last (csrc/elementwise.c) */
DEV float v_sigmoidf(float x) {
    float a = -fabs(x);
    float ac = a > V_EXPF_LO ? a : V_EXPF_LO;
    float s1, s2;
    float e = v_expf_parts(ac, &s1, &s2) * s1 * s2;
    e = a < V_EXPF_LO ? 0.0f : e;
    float d = 1.0f / (1.0f + e);
    float y = x >= 0 ? d : e * d;
    return x != x ? x : y;
}
DEV float v_siluf(float x) {
    float a = -fabs(x);
    float ac = a > V_EXPF_LO ? a : V_EXPF_LO;
    float s1, s2;
    float p = v_expf_parts(ac, &s1, &s2);
    float e = p * s1 * s2;
    e = a < V_EXPF_LO ? 0.0f : e;
    float d = 1.0f / (1.0f + e);
    float neg = (x * p * d) * s1 * s2;
    neg = x < V_EXPF_LO ? x * 0.0f : neg;
    float y = x >= 0 ? x * d : neg;
    return x != x ? x : y;
}
DEV float v_log1pf_pos(float u) {
    float w = 1.0f + u;
    float l = v_logf(w);
    return w == 1.0f ? u : l - ((w - 1.0f) - u) / w;
}
DEV float v_softplusf(float x) {
    float m = x > 0 ? x : 0.0f;
    float y = m + v_log1pf_pos(v_expf(-fabs(x)));
    return x != x ? x : y;
}
#ifdef TPF_FP64
#define UN_F2(NAME, E32, E64) UN_KERNEL(unary_##NAME, f32, float, float, u32, E32) \
                              UN_KERNEL(unary_##NAME, f64, double, double, u64, E64)
#else
#define UN_F2(NAME, E32, E64) UN_KERNEL(unary_##NAME, f32, float, float, u32, E32)
#endif

UN_F(neg, -x)                  UN_I(neg, (Wt)0 - (Wt)x)
UN_F(abs, fabs(x))             UN_I(abs, x < 0 ? (Wt)0 - (Wt)x : (Wt)x)
UN_F(sign, ISNAN(x) ? x : (x > 0) - (x < 0))  UN_I(sign, (x > 0) - (x < 0))
UN_F(square, x * x)            UN_I(square, (Wt)x * (Wt)x)
UN_F(sqrt, sqrt(x))
UN_F(rsqrt, 1 / sqrt(x))
UN_F2(exp, v_expf(x), exp(x))
UN_F(expm1, expm1(x))
UN_F2(log, v_logf(x), log(x))
UN_F(log1p, log1p(x))
UN_F(sin, sin(x))
UN_F(cos, cos(x))
UN_F(tan, tan(x))
UN_F(asin, asin(x))
UN_F(acos, acos(x))
UN_F(atan, atan(x))
UN_F(sinh, sinh(x))
UN_F(cosh, cosh(x))
UN_F2(tanh, v_tanhf(x), tanh(x))
UN_F(asinh, asinh(x))
UN_F(acosh, acosh(x))
UN_F(atanh, atanh(x))
UN_F2(sigmoid, v_sigmoidf(x), SIGMOID(x))
UN_F(relu, x > 0 ? x : (ISNAN(x) ? x : 0))  UN_I(relu, x > 0 ? x : 0)
UN_F2(softplus, v_softplusf(x), SOFTPLUS(x))
UN_F(elu, x > 0 ? x : expm1(x))
UN_F(gelu, p != 0 ? v_gelu_tanh(x) : v_gelu(x))
UN_F(selu, SELU_S * (x > 0 ? x : SELU_A * expm1(x)))
UN_F(floor, floor(x))
UN_F(ceil, ceil(x))
UN_F(round, rint(x))
UN_F(reciprocal, 1 / x)
UN_F(erf, erf(x))
UN_F(erfc, erfc(x))
UN_KERNEL(unary_logical_not, b, u8, u8, u32, !x)
UN_I(bitwise_not, ~x)          UN_KERNEL(unary_bitwise_not, b, u8, u8, u32, !x)
UN_FB(isnan, ISNAN(x))
UN_FB(isinf, ISINF(x))
UN_FB(isfinite, ISFINITE(x))
UN_F(relu6, x > 6 ? 6 : (x > 0 ? x : (ISNAN(x) ? x : 0)))
UN_F(leaky_relu, x > 0 ? x : x * p)
UN_F2(log_sigmoid, -v_softplusf(-x), -SOFTPLUS(-x))
UN_F2(silu, v_siluf(x), x * SIGMOID(x))
UN_F(lgamma, lgamma(x))
UN_F(softsign, x / (1 + fabs(x)))

/* polygamma(m, x): csrc/elementwise.c's recurrence and asymptotic series, in wide floats */
DEV wf polygamma_w(int m, wf x) {
    const wf B2k[10] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                        -3617.0 / 510, 43867.0 / 798, -174611.0 / 330};
    const wf PI = 3.14159265358979323846;
    if (x != x) return x;
    if (x <= 0 && floor(x) == x) return m == 0 ? (wf)TPF_NAN : ((m & 1) ? (wf)TPF_INF : (wf)TPF_NAN);
    wf refl = 0;
    if (m == 0 && x < 0) {   /* reflection: psi(x) = psi(1 - x) - pi / tan(pi x) */
        refl = -PI / tan(PI * x);
        x = 1 - x;
    }
    if (x == (wf)TPF_INF) return m == 0 ? (wf)TPF_INF + refl : (wf)0;
    wf fact = 1;
    for (int i = 2; i <= m; i++) fact *= i;
    wf sign = (m & 1) ? (wf)1 : (wf)-1;
    wf acc = 0;
    while (x < 10) {
        acc += m == 0 ? -1 / x : sign * fact / pow(x, (wf)(m + 1));
        x += 1;
    }
    if (m == 0) {
        wf f = 1 / (x * x), s = 0, fp = f;
        for (int k = 1; k <= 10; k++) { s += B2k[k - 1] / (2.0 * k) * fp; fp *= f; }
        return (acc + log(x) - 0.5 / x - s) + refl;
    }
    wf fm1 = fact / m;
    wf s = fm1 / pow(x, (wf)m) + fact / (2 * pow(x, (wf)(m + 1)));
    wf coef = fact * (m + 1) / 2.0;
    wf xp = pow(x, (wf)(m + 2)), x2 = x * x;
    for (int k = 1; k <= 10; k++) {
        wf term = B2k[k - 1] * coef / xp;
        s += term;
        if (fabs(term) < 1e-17 * fabs(s)) break;
        coef *= (wf)(2 * k + m) * (2 * k + m + 1) / ((2.0 * k + 1) * (2.0 * k + 2));
        xp *= x2;
    }
    return acc + sign * s;
}
UN_F(digamma, polygamma_w(0, (wf)x))
UN_F(polygamma, polygamma_w((int)p, (wf)x))
