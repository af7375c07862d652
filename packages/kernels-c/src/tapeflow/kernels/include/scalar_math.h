/* tapeflow's scalar math, once for the CPU kernels (C11, csrc/) and the GPU kernels
 * (OpenCL C 1.2 and CUDA C++, the .cl files in gpu/).
 *
 * The half/bfloat16 conversions, the float32 polynomials (exp, log, tanh, sigmoid, silu,
 * softplus), Python's float
 * floor division and remainder, the integer division, remainder and power, gelu and
 * polygamma live here and nowhere else, together with the expression macros that
 * elementwise.def names (TPF_X_*): csrc/elementwise.c turns each row into a loop per
 * dtype, gpu/elementwise.cl into a kernel per dtype.
 *
 * The few differences between the languages are guarded here:
 *   TPF_GPU             defined by gpu/tpf_gpu.h, which the host puts first: its types
 *                       (i32, u64, ...), DEV, AS_F32/AS_U32, TPF_INF/TPF_NAN, wf;
 *   __OPENCL_VERSION__  OpenCL C: overloaded fabs/copysign instead of fabsf/copysignf;
 *   __CUDACC__          CUDA C++ (NVRTC or nvcc), which has fabsf/copysignf.
 * In C the bit casts go through memcpy, the wide float is double and a function is
 * `static inline`.  A C file that wants type-generic names (exp of a float calling
 * expf) includes <tgmath.h> before this header, as csrc/elementwise.c does.
 *
 * Expression macros: a binary one is E(x, y, W), a unary one E(x, p, W), where W is a
 * wide unsigned type for wrapping integer arithmetic and p the unary op's parameter
 * (leaky_relu's alpha, gelu's approximate flag, polygamma's order); the caller casts
 * the value to the output type.
 */
#ifndef TPF_SCALAR_MATH_H
#define TPF_SCALAR_MATH_H

#ifdef TPF_GPU
/* ------------------------------------------------------------ GPU (tpf_gpu.h) */
#define TPF_FN DEV
typedef i8 tpf_i8;
typedef u8 tpf_u8;
typedef i16 tpf_i16;
typedef u16 tpf_u16;
typedef i32 tpf_i32;
typedef u32 tpf_u32;
typedef i64 tpf_i64;
typedef u64 tpf_u64;
typedef wf tpf_wf;
#define TPF_F32_FROM_BITS(u) AS_F32(u)
#define TPF_F32_BITS(f) AS_U32(f)
#define TPF_INFF TPF_INF
#define TPF_NANF TPF_NAN
#define TPF_ISNAN(x) ISNAN(x)
#define TPF_ISINF(x) ISINF(x)
#define TPF_ISFINITE(x) ISFINITE(x)
#ifdef TPF_FP64
#define TPF_HAS_F64 1
#define TPF_F64_FROM_BITS(u) AS_F64(u)
#define TPF_F64_BITS(d) AS_U64(d)
#endif
#else
/* ---------------------------------------------------------------------- C11 */
#include <stdint.h>
#include <string.h>
#include <math.h>
#define TPF_FN static inline
typedef int8_t tpf_i8;
typedef uint8_t tpf_u8;
typedef int16_t tpf_i16;
typedef uint16_t tpf_u16;
typedef int32_t tpf_i32;
typedef uint32_t tpf_u32;
typedef int64_t tpf_i64;
typedef uint64_t tpf_u64;
typedef double tpf_wf;      /* the wide float of a formula */
#define TPF_HAS_F64 1
static inline float tpf_f32_from_bits_(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t tpf_f32_bits_(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double tpf_f64_from_bits_(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static inline uint64_t tpf_f64_bits_(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
#define TPF_F32_FROM_BITS(u) tpf_f32_from_bits_((uint32_t)(u))
#define TPF_F32_BITS(f) tpf_f32_bits_(f)
#define TPF_F64_FROM_BITS(u) tpf_f64_from_bits_((uint64_t)(u))
#define TPF_F64_BITS(d) tpf_f64_bits_(d)
#define TPF_INFF INFINITY
#define TPF_NANF NAN
#define TPF_ISNAN(x) ((x) != (x))
#define TPF_ISINF(x) (isinf(x) != 0)      /* gcc's isinf gives -1 for -inf: a bool byte must be 0 or 1 */
#define TPF_ISFINITE(x) (isfinite(x) != 0)
#endif

#if defined(__OPENCL_VERSION__)
#define TPF_FABSF(x) fabs(x)
#define TPF_COPYSIGNF(x, y) copysign(x, y)
#define TPF_U64C(c) c##UL
#else
#define TPF_FABSF(x) fabsf(x)
#define TPF_COPYSIGNF(x, y) copysignf(x, y)
#define TPF_U64C(c) c##ULL
#endif

#include "vmath.h"   /* exp, expm1, tanh, sigmoid for float32 (vectorisable, <= 2 ulp) */

/* ---- half and bfloat16 conversions (software, round to nearest even) ------------------ */
TPF_FN float tpf_half_to_float(tpf_u16 h) {
    tpf_u32 sign = (tpf_u32)(h & 0x8000) << 16, ex = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (ex == 0) {
        if (man == 0) bits = sign;
        else {  /* subnormal half: normalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((tpf_u32)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (ex == 0x1f) bits = sign | 0x7f800000u | (man << 13);
    else bits = sign | ((ex + 112) << 23) | (man << 13);
    return TPF_F32_FROM_BITS(bits);
}
TPF_FN tpf_u16 tpf_float_to_half(float f) {
    tpf_u32 x = TPF_F32_BITS(f);
    tpf_u32 sign = (x >> 16) & 0x8000;
    tpf_i32 ex = (tpf_i32)((x >> 23) & 0xff) - 127 + 15;
    tpf_u32 man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return (tpf_u16)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (ex >= 0x1f) return (tpf_u16)(sign | 0x7c00);
    if (ex <= 0) {
        if (ex < -10) return (tpf_u16)sign;
        man |= 0x800000;
        tpf_u32 shift = (tpf_u32)(14 - ex);
        tpf_u32 h = man >> shift, rem = man & ((1u << shift) - 1), hw = 1u << (shift - 1);
        if (rem > hw || (rem == hw && (h & 1))) h++;
        return (tpf_u16)(sign | h);
    }
    tpf_u32 h = sign | ((tpf_u32)ex << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (tpf_u16)h;
}
TPF_FN float tpf_bf16_to_float(tpf_u16 b) { return TPF_F32_FROM_BITS((tpf_u32)b << 16); }
TPF_FN tpf_u16 tpf_float_to_bf16(float f) {
    tpf_u32 x = TPF_F32_BITS(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (tpf_u16)((x >> 16) | 0x40);  /* quiet NaN */
    x += 0x7fff + ((x >> 16) & 1);
    return (tpf_u16)(x >> 16);
}

/* ---- float32 polynomials (Cephes' coefficients, <= 2 ulp, branch-free: gcc
 * vectorizes them; on a GPU they make special values and rounding follow the CPU,
 * not the device's math library: pocl's tanh(inf) is 0.99999994) ------------------ */

/* e**x = p * 2**n1 * 2**n2 for x in [lo, hi]: x = n ln2 + r, |r| <= ln2/2, p = e**r by a
 * degree-6 polynomial, n split in two halves so that each power of two is a normal float.
 * Callers that multiply e**x by something (silu: x e**x) fold it into p before scaling, so
 * a product that is a normal float comes out right where e**x alone would be subnormal. */
TPF_FN float tpf_expf_r(float r) { return tpf_vm_expm1_r(r) + 1.0f; }   /* vmath.h's polynomial */
/* x = n ln2 + r: n rounded to nearest (by 1.5 * 2**23), r in two steps */
#define TPF_EXPF_REDUCE(x, n, r)                                          \
    float n = ((x) * 1.44269504088896341f + 12582912.0f) - 12582912.0f;   \
    float r = (x) - n * 0.693359375f;                                     \
    r = r + n * 2.12194440e-4f
TPF_FN float tpf_vexpf_parts(float xc, float *s1, float *s2) {
    TPF_EXPF_REDUCE(xc, n, r);
    float p = tpf_expf_r(r);
    tpf_i32 ni = (tpf_i32)n, n1 = ni >> 1, n2 = ni - n1;   /* >> is arithmetic (gcc, GPUs) */
    *s1 = TPF_F32_FROM_BITS((tpf_u32)(n1 + 127) << 23);
    *s2 = TPF_F32_FROM_BITS((tpf_u32)(n2 + 127) << 23);
    return p;
}

#define TPF_EXPF_HI 88.7228393554688f
#define TPF_EXPF_LO -103.972084045410f

/* e**x: vmath.h's (results down to the subnormals and up to FLT_MAX come out right) */
TPF_FN float tpf_vexpf(float x) { return tpf_vm_expf(x); }

/* natural log: x = m 2**e with m in [sqrt(1/2), sqrt(2)), log(m) by Cephes' polynomial */
TPF_FN float tpf_vlogf(float x) {
    float xs = x < 1.17549435e-38f ? x * 8388608.0f : x;   /* subnormals (when not flushed) */
    tpf_i32 bits = (tpf_i32)TPF_F32_BITS(xs);
    tpf_i32 e = ((bits >> 23) & 0xff) - 126 - (x < 1.17549435e-38f ? 23 : 0);
    float m = TPF_F32_FROM_BITS((tpf_u32)((bits & 0x007fffff) | 0x3f000000));   /* [0.5, 1) */
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
    res = x == TPF_INFF ? x : res;
    res = x == 0.0f ? -TPF_INFF : res;
    res = x < 0.0f ? TPF_NANF : res;
    return x != x ? x : res;
}

/* tanh and sigmoid: vmath.h's */
TPF_FN float tpf_vtanhf(float x) { return tpf_vm_tanhf(x); }
TPF_FN float tpf_vsigmoidf(float x) { return tpf_vm_sigmoidf(x); }

/* silu from e = e**-|x| (never overflows): x / (1 + e) for x >= 0 and x e / (1 + e) below;
 * silu below 0 scales x * p / (1 + e) by
 * 2**n last, so its normal results down to x = -92 come out right. */
TPF_FN float tpf_vsiluf(float x) {
    float a = -TPF_FABSF(x);
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
TPF_FN float tpf_vlog1pf_pos(float u) {
    float w = 1.0f + u;
    float l = tpf_vlogf(w);
    return w == 1.0f ? u : l - ((w - 1.0f) - u) / w;
}

/* softplus = max(x, 0) + log1p(e**-|x|) */
TPF_FN float tpf_vsoftplusf(float x) {
    float m = x > 0 ? x : 0.0f;
    float y = m + tpf_vlog1pf_pos(tpf_vexpf(-TPF_FABSF(x)));
    return x != x ? x : y;
}

/* ---- integer division, remainder and power --------------------------------------- */

/* floor division and remainder (Python's, y != 0: checked before the loop on the CPU,
 * flagged on a GPU); INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0 */
TPF_FN tpf_i64 tpf_floordiv_i(tpf_i64 x, tpf_i64 y) {
    if (y == -1) return (tpf_i64)(0 - (tpf_u64)x);
    tpf_i64 q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}
TPF_FN tpf_i64 tpf_floormod_i(tpf_i64 x, tpf_i64 y) {
    if (y == -1) return 0;
    tpf_i64 r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}
TPF_FN tpf_i64 tpf_truncdiv_i(tpf_i64 x, tpf_i64 y) { return y == -1 ? (tpf_i64)(0 - (tpf_u64)x) : x / y; }
TPF_FN tpf_i64 tpf_truncmod_i(tpf_i64 x, tpf_i64 y) { return y == -1 ? 0 : x % y; }
/* x ** y wrapping (y < 0 only reaches here for bases 1 and -1) */
TPF_FN tpf_u64 tpf_ipow(tpf_i64 x, tpf_i64 y) {
    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? (tpf_u64)0 - 1 : 1) : 0);
    tpf_u64 r = 1, b = (tpf_u64)x;
    while (y) { if (y & 1) r *= b; b *= b; y >>= 1; }
    return r;
}

/* ---- Python's float floor division and remainder (NumPy's npy_divmod) -------------- */
#define TPF_PY_DIVMOD(SUF, T)                                                          \
TPF_FN T tpf_pymod_##SUF(T a, T b) {                                                   \
    T mod = fmod(a, b);                                                                \
    if (b == 0) return mod;                                                            \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                              \
    else mod = copysign((T)0, b);                                                      \
    return mod;                                                                        \
}                                                                                      \
TPF_FN T tpf_pyfloordiv_##SUF(T a, T b) {                                              \
    if (b == 0) return a / b;                                                          \
    T mod = fmod(a, b), div = (a - mod) / b;                                           \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                                  \
    if (div != 0) { T f = floor(div); if (div - f > (T)0.5) f += 1; return f; }        \
    return copysign((T)0, a / b);                                                      \
}
TPF_PY_DIVMOD(f32, float)
#ifdef TPF_HAS_F64
TPF_PY_DIVMOD(f64, double)
#endif

/* ---- gelu, polygamma (in the wide float: double where the device has it) ------------ */

/* gelu(x) = x Phi(x) = x / 2 erfc(-x / sqrt 2): erfc, not 1 + erf, which cancels for x < 0
 * (192 ulp at -2.7; gelu(-10) = -0 instead of -7.6e-23).  The argument -x / sqrt 2 = t + e
 * in double-double (erfc magnifies its rounding 2 t**2 times: 100x at x = -10), erfc(t + e)
 * = erfc(t) - e 2 / sqrt(pi) e**-t**2. */
TPF_FN tpf_wf tpf_gelu(tpf_wf x) {
    const tpf_wf c = (tpf_wf)0.70710678118654757, c_lo = (tpf_wf)-4.8336466567264567e-17;   /* 1 / sqrt 2 */
    tpf_wf t = -x * c;
    tpf_wf e = fma(-x, c, -t) + -x * c_lo;
    tpf_wf corr = fabs(t) < 27 ? e * (tpf_wf)1.1283791670955126 * exp(-t * t) : (tpf_wf)0;
    return (tpf_wf)0.5 * x * (erfc(t) - corr);
}
/* TensorFlow's approximate=True: x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x**3))) */
TPF_FN tpf_wf tpf_gelu_tanh(tpf_wf x) {
    return (tpf_wf)0.5 * x * (1 + tanh((tpf_wf)0.7978845608028654 * (x + (tpf_wf)0.044715 * (x * x * x))));
}

/* polygamma(m, x) = d^m/dx^m digamma(x); m = 0 is digamma.  Shift x up by the
 * recurrence psi_m(x) = psi_m(x + 1) - (-1)^m m! / x^(m+1) until x >= 10, then sum
 * the asymptotic series; digamma of a negative x by reflection. */
TPF_FN tpf_wf tpf_polygamma(int m, tpf_wf x) {
    const tpf_wf B2k[10] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                            -3617.0 / 510, 43867.0 / 798, -174611.0 / 330};
    const tpf_wf PI = (tpf_wf)3.14159265358979323846;
    if (x != x) return x;
    if (x <= 0 && floor(x) == x) return m == 0 ? (tpf_wf)TPF_NANF : ((m & 1) ? (tpf_wf)TPF_INFF : (tpf_wf)TPF_NANF);
    tpf_wf refl = 0;
    if (m == 0 && x < 0) {   /* reflection: psi(x) = psi(1 - x) - pi / tan(pi x) */
        refl = -(PI / tan(PI * x));
        x = 1 - x;
    }
    if (x == (tpf_wf)TPF_INFF) return m == 0 ? (tpf_wf)TPF_INFF + refl : (tpf_wf)0;
    tpf_wf fact = 1;   /* m! */
    for (int i = 2; i <= m; i++) fact *= i;
    tpf_wf sign = (m & 1) ? (tpf_wf)1 : (tpf_wf)-1;   /* (-1)^(m+1) */
    tpf_wf acc = 0;
    while (x < 10) {
        acc += m == 0 ? -1 / x : sign * fact / pow(x, (tpf_wf)(m + 1));
        x += 1;
    }
    if (m == 0) {
        tpf_wf f = 1 / (x * x), s = 0, fp = f;
        for (int k = 1; k <= 10; k++) { s += B2k[k - 1] / (tpf_wf)(2.0 * k) * fp; fp *= f; }
        return (acc + log(x) - (tpf_wf)0.5 / x - s) + refl;
    }
    /* psi_m(x) ~ (-1)^(m+1) [ (m-1)!/x^m + m!/(2 x^(m+1)) + sum_k B2k (2k+m-1)!/((2k)! x^(2k+m)) ] */
    tpf_wf fm1 = fact / m;
    tpf_wf s = fm1 / pow(x, (tpf_wf)m) + fact / (2 * pow(x, (tpf_wf)(m + 1)));
    tpf_wf coef = fact * (m + 1) / (tpf_wf)2.0;   /* (2k+m-1)! / (2k)! at k = 1 */
    tpf_wf xp = pow(x, (tpf_wf)(m + 2)), x2 = x * x;
    for (int k = 1; k <= 10; k++) {
        tpf_wf term = B2k[k - 1] * coef / xp;
        s += term;
        if (fabs(term) < (tpf_wf)1e-17 * fabs(s)) break;
        coef *= (tpf_wf)(2 * k + m) * (2 * k + m + 1) / (((tpf_wf)2.0 * k + 1) * ((tpf_wf)2.0 * k + 2));
        xp *= x2;
    }
    return acc + sign * s;
}

/* ---- the expressions elementwise.def names ------------------------------------------- */

/* binary: E(x, y, W) */
#define TPF_X_ADD(x, y, W) ((x) + (y))
#define TPF_X_SUB(x, y, W) ((x) - (y))
#define TPF_X_MUL(x, y, W) ((x) * (y))
#define TPF_X_DIV(x, y, W) ((x) / (y))
#define TPF_X_ADD_W(x, y, W) ((W)(x) + (W)(y))      /* integers wrap modulo 2**bits */
#define TPF_X_SUB_W(x, y, W) ((W)(x) - (W)(y))
#define TPF_X_MUL_W(x, y, W) ((W)(x) * (W)(y))
#define TPF_X_FLOORDIV_f32(x, y, W) tpf_pyfloordiv_f32(x, y)
#define TPF_X_FLOORDIV_f64(x, y, W) tpf_pyfloordiv_f64(x, y)
#define TPF_X_FLOORDIV_I(x, y, W) ((y) == 0 ? 0 : tpf_floordiv_i(x, y))
#define TPF_X_MOD_f32(x, y, W) tpf_pymod_f32(x, y)
#define TPF_X_MOD_f64(x, y, W) tpf_pymod_f64(x, y)
#define TPF_X_MOD_I(x, y, W) ((y) == 0 ? 0 : tpf_floormod_i(x, y))
#define TPF_X_POW(x, y, W) pow(x, y)
#define TPF_X_POW_I(x, y, W) tpf_ipow(x, y)
#define TPF_X_MAXIMUM(x, y, W) (TPF_ISNAN(x) || (x) > (y) ? (x) : (y))   /* NaN propagates */
#define TPF_X_MINIMUM(x, y, W) (TPF_ISNAN(x) || (x) < (y) ? (x) : (y))
#define TPF_X_MAXIMUM_I(x, y, W) ((x) > (y) ? (x) : (y))
#define TPF_X_MINIMUM_I(x, y, W) ((x) < (y) ? (x) : (y))
#define TPF_X_ATAN2(x, y, W) atan2(x, y)
#define TPF_X_SQUARED_DIFFERENCE(x, y, W) (((x) - (y)) * ((x) - (y)))
#define TPF_X_SQUARED_DIFFERENCE_W(x, y, W) (((W)(x) - (W)(y)) * ((W)(x) - (W)(y)))
#define TPF_X_DIV_NO_NAN(x, y, W) ((y) == 0 ? 0 : (x) / (y))
#define TPF_X_EQUAL(x, y, W) ((x) == (y))
#define TPF_X_NOT_EQUAL(x, y, W) ((x) != (y))
#define TPF_X_LESS(x, y, W) ((x) < (y))
#define TPF_X_LESS_EQUAL(x, y, W) ((x) <= (y))
#define TPF_X_GREATER(x, y, W) ((x) > (y))
#define TPF_X_GREATER_EQUAL(x, y, W) ((x) >= (y))
#define TPF_X_LOGICAL_AND(x, y, W) ((x) && (y))
#define TPF_X_LOGICAL_OR(x, y, W) ((x) || (y))
#define TPF_X_LOGICAL_XOR(x, y, W) ((!(x)) != (!(y)))
#define TPF_X_BITWISE_AND(x, y, W) ((x) & (y))
#define TPF_X_BITWISE_OR(x, y, W) ((x) | (y))
#define TPF_X_BITWISE_XOR(x, y, W) ((x) ^ (y))
#define TPF_NBITS(x) ((tpf_i64)(8 * sizeof(x)))
#define TPF_X_LEFT_SHIFT(x, y, W) (((y) < 0 || (y) >= TPF_NBITS(x)) ? 0 : ((W)(x) << (y)))
#define TPF_X_RIGHT_SHIFT(x, y, W) (((y) < 0 || (y) >= TPF_NBITS(x)) ? ((x) < 0 ? -1 : 0) : ((x) >> (y)))
/* gradient helpers: g * (x > 0), g * (1 - y*y), g * y * (1 - y) */
#define TPF_X_RELU_GRAD(x, y, W) ((y) > 0 ? (x) : 0)
#define TPF_X_TANH_GRAD(x, y, W) ((x) * (1 - (y) * (y)))
#define TPF_X_SIGMOID_GRAD(x, y, W) ((x) * (y) * (1 - (y)))
/* C's truncating division and remainder */
#define TPF_X_TRUNCATEDIV(x, y, W) trunc((x) / (y))
#define TPF_X_TRUNCATEDIV_I(x, y, W) ((y) == 0 ? 0 : tpf_truncdiv_i(x, y))
#define TPF_X_TRUNCATEMOD(x, y, W) fmod(x, y)
#define TPF_X_TRUNCATEMOD_I(x, y, W) ((y) == 0 ? 0 : tpf_truncmod_i(x, y))

/* unary: E(x, p, W) */
#define TPF_SIGMOID(x) ((x) >= 0 ? 1 / (1 + exp(-(x))) : exp(x) / (1 + exp(x)))
#define TPF_SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
#define TPF_SELU_A 1.6732632423543772848170429916717
#define TPF_SELU_S 1.0507009873554804934193349852946
#define TPF_X_NEG(x, p, W) (-(x))
#define TPF_X_NEG_W(x, p, W) ((W)0 - (W)(x))
#define TPF_X_ABS(x, p, W) fabs(x)
#define TPF_X_ABS_W(x, p, W) ((x) < 0 ? (W)0 - (W)(x) : (W)(x))
#define TPF_X_SIGN(x, p, W) (TPF_ISNAN(x) ? (x) : ((x) > 0) - ((x) < 0))
#define TPF_X_SIGN_I(x, p, W) (((x) > 0) - ((x) < 0))
#define TPF_X_SQUARE(x, p, W) ((x) * (x))
#define TPF_X_SQUARE_W(x, p, W) ((W)(x) * (W)(x))
#define TPF_X_SQRT(x, p, W) sqrt(x)
#define TPF_X_RSQRT(x, p, W) (1 / sqrt(x))
#define TPF_X_EXP_f32(x, p, W) tpf_vexpf(x)
#define TPF_X_EXP_f64(x, p, W) exp(x)
#define TPF_X_EXPM1_f32(x, p, W) tpf_vm_expm1f(x)
#define TPF_X_EXPM1_f64(x, p, W) expm1(x)
#define TPF_X_LOG_f32(x, p, W) tpf_vlogf(x)
#define TPF_X_LOG_f64(x, p, W) log(x)
#define TPF_X_LOG1P(x, p, W) log1p(x)
#define TPF_X_SIN(x, p, W) sin(x)
#define TPF_X_COS(x, p, W) cos(x)
#define TPF_X_TAN(x, p, W) tan(x)
#define TPF_X_ASIN(x, p, W) asin(x)
#define TPF_X_ACOS(x, p, W) acos(x)
#define TPF_X_ATAN(x, p, W) atan(x)
#define TPF_X_SINH(x, p, W) sinh(x)
#define TPF_X_COSH(x, p, W) cosh(x)
#define TPF_X_TANH_f32(x, p, W) tpf_vtanhf(x)
#define TPF_X_TANH_f64(x, p, W) tanh(x)
#define TPF_X_ASINH(x, p, W) asinh(x)
#define TPF_X_ACOSH(x, p, W) acosh(x)
#define TPF_X_ATANH(x, p, W) atanh(x)
#define TPF_X_SIGMOID_f32(x, p, W) tpf_vsigmoidf(x)
#define TPF_X_SIGMOID_f64(x, p, W) TPF_SIGMOID(x)
#define TPF_X_RELU(x, p, W) ((x) > 0 ? (x) : (TPF_ISNAN(x) ? (x) : 0))
#define TPF_X_RELU_I(x, p, W) ((x) > 0 ? (x) : 0)
#define TPF_X_SOFTPLUS_f32(x, p, W) tpf_vsoftplusf(x)
#define TPF_X_SOFTPLUS_f64(x, p, W) TPF_SOFTPLUS(x)
#define TPF_X_ELU(x, p, W) ((x) > 0 ? (x) : expm1(x))
#define TPF_X_GELU(x, p, W) ((p) != 0 ? tpf_gelu_tanh((tpf_wf)(x)) : tpf_gelu((tpf_wf)(x)))
#define TPF_X_SELU(x, p, W) (TPF_SELU_S * ((x) > 0 ? (x) : TPF_SELU_A * expm1(x)))
#define TPF_X_FLOOR(x, p, W) floor(x)
#define TPF_X_CEIL(x, p, W) ceil(x)
#define TPF_X_ROUND(x, p, W) rint(x)       /* halves to even */
#define TPF_X_RECIPROCAL(x, p, W) (1 / (x))
#define TPF_X_ERF(x, p, W) erf(x)
#define TPF_X_ERFC(x, p, W) erfc(x)
#define TPF_X_LOGICAL_NOT(x, p, W) (!(x))
#define TPF_X_BITWISE_NOT(x, p, W) (~(x))
#define TPF_X_ISNAN(x, p, W) TPF_ISNAN(x)
#define TPF_X_ISINF(x, p, W) TPF_ISINF(x)
#define TPF_X_ISFINITE(x, p, W) TPF_ISFINITE(x)
#define TPF_X_RELU6(x, p, W) ((x) > 6 ? 6 : ((x) > 0 ? (x) : (TPF_ISNAN(x) ? (x) : 0)))
#define TPF_X_LEAKY_RELU(x, p, W) ((x) > 0 ? (x) : (x) * (p))
#define TPF_X_LOG_SIGMOID_f32(x, p, W) (-tpf_vsoftplusf(-(x)))
#define TPF_X_LOG_SIGMOID_f64(x, p, W) (-TPF_SOFTPLUS(-(x)))
#define TPF_X_SILU_f32(x, p, W) tpf_vsiluf(x)
#define TPF_X_SILU_f64(x, p, W) ((x) * TPF_SIGMOID(x))
#define TPF_X_LGAMMA(x, p, W) lgamma(x)
#define TPF_X_DIGAMMA(x, p, W) tpf_polygamma(0, (tpf_wf)(x))
#define TPF_X_SOFTSIGN(x, p, W) ((x) / (1 + fabs(x)))
#define TPF_X_POLYGAMMA(x, p, W) tpf_polygamma((int)(p), (tpf_wf)(x))


/* det, sign and log|det| of one LU factor A (n x n) with LAPACK's 1-based pivots piv: sign from the
 * pivots and the diagonal, log|det| as a sum of logs (a zero pivot makes det and sign 0) */
#define TPF_LU_DET(A, piv, n, T, det, sign, logabs) do {                                   \
    tpf_wf s_ = 1, l_ = 0, p_ = 1;                                                          \
    for (tpf_i64 i_ = 0; i_ < (n); i_++) {                                                  \
        tpf_wf d_ = (A)[i_ * (n) + i_];                                                     \
        if ((piv)[i_] != i_ + 1) s_ = -s_;                                                  \
        if (d_ < 0) { s_ = -s_; d_ = -d_; }                                                 \
        l_ += log(d_);                                                                      \
        p_ *= (A)[i_ * (n) + i_];                                                           \
    }                                                                                       \
    int sing_ = l_ == -TPF_INFF;                                                            \
    for (tpf_i64 i_ = 0; i_ < (n); i_++) if ((piv)[i_] != i_ + 1) p_ = -p_;                 \
    (det) = (T)(sing_ ? 0 : p_); (sign) = (T)(sing_ ? 0 : s_); (logabs) = (T)l_;            \
} while (0)

#endif
