/* tapeflow's float32 vector math: exp, expm1, tanh and sigmoid that compilers vectorise.
 *
 * Included by scalar_math.h (after its types and bit casts: TPF_FN, tpf_i32, tpf_u32,
 * TPF_F32_FROM_BITS, TPF_F32_BITS, TPF_FABSF, TPF_COPYSIGNF), so the CPU's eager loops
 * (csrc/elementwise.c), the fused interpreter (csrc/fused.c), the generated fused kernels
 * (kernels/codegen.py), the fused LSTM cell and the GPU kernels all compute the same values.
 *
 * Every function is branch-free straight-line code over one float (selects, min/max clamps
 * and integer bit operations only), with no table and no libm call, so that a loop over an
 * array of floats becomes SIMD code (SSE/AVX2/AVX-512).  The special values cost no test
 * of their own:
 *   - x is clamped into the range where the result is finite and non-zero, with clamps
 *     written so that a NaN passes through them (`x > hi ? hi : x` is false for a NaN);
 *     the clamped value still overflows to inf or underflows to 0 in the last multiply
 *     (inf, -inf and the out-of-range x come out right from the arithmetic);
 *   - a NaN propagates through the arithmetic (its integer part, read from the bits of
 *     a float, is garbage but defined: no float-to-int conversion of a NaN);
 *   - 2**n is built in two halves that are each a normal float, so results down to the
 *     subnormals (when not flushed to zero) are rounded once, at the last multiply.
 * Maximum errors over all 2**32 float32 inputs, against a float64 reference, without
 * flush-to-zero (tests/test_vmath.py sweeps densely through the ops):
 *   exp 1.02 ulp, expm1 1.44, tanh 1.33, sigmoid 1.998 (scalar_math.h's log: 0.83).
 */
#ifndef TPF_VMATH_H
#define TPF_VMATH_H

/* x = n ln2 + r, |r| <= ln2 / 2 (a little more at the clamps): n = round(x / ln2) by adding
 * 1.5 * 2**23 (its integer value ni read from the bits of the sum), ln2 in two parts so
 * that r = x - n ln2 is exact to float32 precision (Cephes' split). */
#define TPF_VM_REDUCE(x, n, ni, r)                                                       \
    float n##_t = (x) * 1.44269504088896341f + 12582912.0f;                              \
    tpf_i32 ni = (tpf_i32)(TPF_F32_BITS(n##_t) - 0x4b400000u);                           \
    float n = n##_t - 12582912.0f;                                                       \
    float r = (x) - n * 0.693359375f;                                                    \
    r = r + n * 2.12194440e-4f

/* e**r - 1 - r over r**2 times r**2, plus r: e**r - 1 for |r| <= 0.35 (Cephes' expf
 * polynomial, relative error below 2**-25) */
TPF_FN float tpf_vm_expm1_r(float r) {
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * (r * r) + r;
}

/* e**r - 1 for |r| <= 0.35 to e**r's precision: r**2 P(r) + r, P a degree-4 fit of (e**r - 1 - r) / r**2 minimising
 * its error times r**2 e**-r (below 2**-27.7 with the coefficients rounded to float: a hundredth of an ulp of
 * e**r): exp and tanh, which add 1 to it (expm1 and sigmoid keep tpf_vm_expm1_r, whose smaller error their bounds
 * need: sigmoid would be 2.05 ulp with this one, expm1 1.58 with a fit for |r| (P - that)) */
TPF_FN float tpf_vm_expr1_r(float r) {
    float p = 1.3814478880e-3f;
    p = p * r + 8.3687659353e-3f;
    p = p * r + 4.1668392718e-2f;
    p = p * r + 1.6666519642e-1f;
    p = p * r + 4.9999994040e-1f;
    return p * (r * r) + r;
}

/* 2**ni as two normal floats s1 = 2**(ni >> 1), s2 = 2**(ni - (ni >> 1)) (ni in [-252, 254]), from
 * u = ni + 254 >= 0: s1's exponent field is u >> 1, s2's is u - (u >> 1) (5 integer operations) */
#define TPF_VM_POW2_HALVES(ni, s1, s2)                                                   \
    tpf_u32 ni##_u = (tpf_u32)(ni + 254);                                                \
    tpf_u32 ni##_b1 = (ni##_u >> 1) << 23;                                               \
    float s1 = TPF_F32_FROM_BITS(ni##_b1);                                               \
    float s2 = TPF_F32_FROM_BITS((ni##_u << 23) - ni##_b1)

/* e**x, <= 1.02 ulp.  x is clamped to [-104, 88.8]: e**88.8 overflows to inf and e**-104 rounds
 * to 0 (below half the smallest subnormal), as every x beyond them does. */
TPF_FN float tpf_vm_expf(float x) {
    float xc = x > 88.8f ? 88.8f : x;
    xc = xc < -104.0f ? -104.0f : xc;
    TPF_VM_REDUCE(xc, n, ni, r);
    TPF_VM_POW2_HALVES(ni, s1, s2);
    float q = tpf_vm_expr1_r(r);
    return (q * s1 + s1) * s2;   /* (q + 1) s1 rounded once (s1 a normal power of two, q s1 exact), times s2 */
}

/* e**x - 1, <= 1.5 ulp: 2**n (e**r - 1) + (2**n - 1), one rounding (a fused multiply-add where
 * the target has one; 2**n - 1 is exact for n >= -24, and below e**x - 1 rounds to -1).  x is
 * clamped to [-30, 88.8] (expm1(-30) rounds to -1), so n is in [-44, 128]; at n = 128 (2**n is
 * not a float) the same value is 2**127 (2 e**r - 1) + (2**127 - 1). */
TPF_FN float tpf_vm_expm1f(float x) {
    float xc = x > 88.8f ? 88.8f : x;
    xc = xc < -30.0f ? -30.0f : xc;
    TPF_VM_REDUCE(xc, n, ni, r);
    tpf_i32 top = ni > 127;
    float s = TPF_F32_FROM_BITS((tpf_u32)(ni - top + 127) << 23);
    float q = tpf_vm_expm1_r(r);
    q = top ? q * 2.0f + 1.0f : q;
    float y = s * q + (s - 1.0f);
    return x == 0.0f ? x : y;   /* -0 stays -0 */
}

/* tanh: an odd polynomial below |x| = 0.625 (Cephes'), 1 - 2 / (e**2|x| + 1) above, both of |x|, then
 * the sign of x copied on; e**2|x| + 1 rounded once; <= 1.34 ulp.  2|x| is clamped to 19 (tanh(9.5) rounds
 * to 1), so 2**n is one normal float.  A NaN takes the polynomial, which propagates it.
 * Its last operation is not a multiply (codegen.py leaves its result unbarriered). */
TPF_FN float tpf_vm_tanhf(float x) {
    float a = TPF_FABSF(x);
    float u = a > 9.5f ? 19.0f : a + a;
    TPF_VM_REDUCE(u, n, ni, r);
    float s = TPF_F32_FROM_BITS((tpf_u32)(ni + 127) << 23);   /* n in [0, 28] */
    float d = s * (tpf_vm_expr1_r(r) + 1.0f) + 1.0f;           /* e**2|x| + 1 */
    float big = 1.0f - 2.0f / d;
    float z = a * a;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    float sm = q * z * a + a;
    return TPF_COPYSIGNF(a >= 0.625f ? big : sm, x);   /* tanh(-0) = -0 */
}

/* sigmoid(x) = 1 / (1 + e**-x) from e = e**-|x| (never overflows): (x >= 0 ? 1 : e) / d with
 * d = 1 + e rounded once, then corrected for d's rounding error d_lo (exact by a fused
 * multiply-add; 1 / d ~ 2 - d is close enough for a correction below an ulp); <= 2 ulp.
 * Below x = -88.7 the result is e**x itself (subnormal, or 0 when flushed), down to 0 below
 * -104.  A NaN propagates through e.  Its last operation is a fused multiply-add, not a multiply
 * (codegen.py leaves its result unbarriered). */
TPF_FN float tpf_vm_sigmoidf(float x) {
    float a = -TPF_FABSF(x);
    a = a < -104.0f ? -104.0f : a;
    TPF_VM_REDUCE(a, n, ni, r);
    TPF_VM_POW2_HALVES(ni, s1, s2);
    float s = s1 * s2;                 /* 2**n: exact (a subnormal power of two), 0 at n = -150 */
    float q = tpf_vm_expm1_r(r);
    float e = (q + 1.0f) * s;          /* e**-|x|: the same bits as s q + s (s q is exact), but no subnormal
                                          product that a device flushing denormals would zero (x near -87) */
    float s1p = s + 1.0f;
    float d = s * q + s1p;             /* 1 + e**-|x| */
    float d_lo = s * q + (s1p - d);
    float y0 = (x >= 0.0f ? 1.0f : e) / d;
    return y0 - y0 * (d_lo * (2.0f - d));
}

#endif
