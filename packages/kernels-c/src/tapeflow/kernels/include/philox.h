/* Philox 4x32-10 (Salmon et al., SC'11; Random123) and the scalar math of tapeflow's
 * random numbers, once for csrc/random.c (C11) and gpu/random.cl (OpenCL C, CUDA C++);
 * the languages' differences are scalar_math.h's (TPF_GPU, __OPENCL_VERSION__).
 *
 * The mapping from words to values (the contract both backends keep) is documented at
 * the top of csrc/random.c.  log, sin and cos here are tapeflow's own (fdlibm's
 * polynomials, within 1 ulp), built from +, -, *, / and sqrt only; with IEEE double
 * arithmetic and no contraction into fused multiply-adds, every backend reproduces
 * every value bit for bit.
 */
#ifndef TPF_PHILOX_H
#define TPF_PHILOX_H
#include "scalar_math.h"

#define TPF_PHILOX_M0 0xD2511F53u
#define TPF_PHILOX_M1 0xCD9E8D57u
#define TPF_PHILOX_W0 0x9E3779B9u
#define TPF_PHILOX_W1 0xBB67AE85u

/* One round on the words (c0, c1, c2, c3) (lvalues: scalars, or lanes of arrays so that
 * a loop over many blocks vectorises) under the round key (k0, k1). */
#define TPF_PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                                                  \
    do {                                                                                          \
        tpf_u64 p0_ = (tpf_u64)TPF_PHILOX_M0 * (c0), p1_ = (tpf_u64)TPF_PHILOX_M1 * (c2);         \
        tpf_u32 n0_ = (tpf_u32)(p1_ >> 32) ^ (c1) ^ (k0), n2_ = (tpf_u32)(p0_ >> 32) ^ (c3) ^ (k1); \
        (c1) = (tpf_u32)p1_; (c3) = (tpf_u32)p0_; (c0) = n0_; (c2) = n2_;                        \
    } while (0)
/* the key between rounds */
#define TPF_PHILOX_BUMP(k0, k1) do { (k0) += TPF_PHILOX_W0; (k1) += TPF_PHILOX_W1; } while (0)

/* One block: the counter c[0..3] becomes the block's four words. */
TPF_FN void tpf_philox_block(tpf_u32 *c, tpf_u32 k0, tpf_u32 k1) {
    tpf_u32 c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    for (int r = 0; r < 10; r++) {
        if (r) TPF_PHILOX_BUMP(k0, k1);
        TPF_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
    }
    c[0] = c0; c[1] = c1; c[2] = c2; c[3] = c3;
}

/* c += add, a 128-bit add carrying through the four words (raw blocks: block j is ctr + j) */
TPF_FN void tpf_philox_counter_add(tpf_u32 *c, tpf_u64 add) {
    for (int w = 0; w < 4 && add; w++) {
        tpf_u64 s = (tpf_u64)c[w] + (add & 0xffffffffu);
        c[w] = (tpf_u32)s;
        add = (add >> 32) + (s >> 32);
    }
}

/* a word to a float32 in [0, 1): (w >> 8) * 2^-24 */
TPF_FN float tpf_u24(tpf_u32 w) { return (float)(w >> 8) * 5.9604644775390625e-8f; }

#ifdef TPF_HAS_F64
/* two words to the 53-bit integer of a float64 in [0, 1): u53(a, b) * 2^-53 */
TPF_FN double tpf_u53(tpf_u32 a, tpf_u32 b) {
    return (double)(((tpf_u64)a << 21) | (b >> 11)) * 1.1102230246251565e-16;
}

/* natural log of a positive normal double (here u1 in [2^-53, 1]) */
TPF_FN double tpf_rng_log(double x) {
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                 Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                 Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01,
                 ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    tpf_u64 bits = TPF_F64_BITS(x);
    /* x = m * 2^k with m in [sqrt(2)/2, sqrt(2)) */
    double k = TPF_F64_FROM_BITS((bits >> 52) | TPF_U64C(0x4330000000000000)) - 4503599627370496.0 - 1023.0;
    double m = TPF_F64_FROM_BITS((bits & TPF_U64C(0x000fffffffffffff)) | TPF_U64C(0x3ff0000000000000));
    int big = m > 1.4142135623730951;
    m = big ? m * 0.5 : m;
    k = big ? k + 1.0 : k;
    double f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
    double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    double R = t2 + t1, hfsq = 0.5 * f * f;
    return k * ln2_hi - ((hfsq - (s * (hfsq + R) + k * ln2_lo)) - f);
}

/* sin and cos of 2 pi u for u in [0, 1): exact quarter-turn reduction on u itself */
TPF_FN void tpf_rng_sincos_2pi(double u, double *sn, double *cs) {
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10,
                 C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    double q = (4.0 * u + 6755399441055744.0) - 6755399441055744.0;  /* nearest quarter turn */
    double a = (u - 0.25 * q) * 6.283185307179586476925286766559;     /* |a| <= pi/4 */
    double z = a * a;
    double s = a + a * z * (S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))));
    double hz = 0.5 * z, wc = 1.0 - hz;
    double c = wc + (((1.0 - wc) - hz) + z * z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6))))));
    double qm = q == 4.0 ? 0.0 : q;                                     /* quadrant 0..3 */
    int swap = (qm == 1.0) | (qm == 3.0);
    double s2 = swap ? c : s, c2 = swap ? s : c;
    /* signs as exact multiplications by +-1 (selects here stop GCC vectorising) */
    double h = (qm * 0.5 - 0.25 + 6755399441055744.0) - 6755399441055744.0;  /* 0, 0, 1, 1 */
    *sn = (1.0 - 2.0 * h) * s2;                                           /* +, +, -, - */
    *cs = (2.0 * (fabs(qm - 1.5) - 0.5) - 1.0) * c2;                      /* +, -, -, + */
}

/* z0 = r cos(2 pi u2), z1 = r sin(2 pi u2), r = sqrt(-2 log u1) */
TPF_FN void tpf_box_muller(double u1, double u2, double *z0, double *z1) {
    double r = sqrt(-2.0 * tpf_rng_log(u1)), sn, cs;
    tpf_rng_sincos_2pi(u2, &sn, &cs);
    *z0 = r * cs;
    *z1 = r * sn;
}
#endif

#endif
