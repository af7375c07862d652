/* Random draws from the gamma, Poisson and binomial distributions, and the gamma
 * sample's derivative with respect to its shape (the implicit reparameterization
 * gradient of tf.random.gamma).
 *
 * Each output element e owns a sub-stream of the op's Philox stream (random.c):
 * its t-th block (t = 0 .. 255) has the counter {lo32(e), hi32(e) | t << 24, lo32(stream),
 * hi32(stream)}, and every block gives two uniforms tpf_u53(w0, w1), tpf_u53(w2, w3) in [0, 1)
 * (philox.h).  A rejection sampler takes uniforms from it until it accepts, so every
 * element is a pure function of (key, stream, e, parameters), whatever the threads.  Every
 * sampler accepts with probability above 1/2 per try; after TRIES tries (never reached in
 * practice) the element is NaN (a count: 0 for integer outputs) rather than a hang.
 *
 *   gamma (shape a >= 1)    Marsaglia and Tsang (2000): z normal (Box-Muller on two
 *                           uniforms, both values used), u uniform.
 *   gamma (0 <= a < 1)      gamma(a + 1) * u^(1/a), in log space; the result is at least
 *                           the dtype's smallest normal number (as TensorFlow's); a < 0 or
 *                           NaN gives NaN.
 *   Poisson (rate < 10)     Knuth's product of uniforms; rate <= 0 gives 0, NaN gives NaN.
 *   Poisson (rate >= 10)    Hoermann's PTRS (transformed rejection with squeeze, 1993).
 *   binomial                counts floored; counts <= 0 or p <= 0 give 0, p >= 1 gives
 *                           counts; p > 1/2 draws counts - B(counts, 1 - p); n p < 10:
 *                           inversion by geometric waiting times; else Hoermann's BTRS
 *                           (1993), accepting against the exact log-pmf ratio (lgamma).
 *
 * The math is libm's (log, exp, sqrt, lgamma) in double: the GPU backends run this
 * file on host copies (gpu_entries_host.py), so every backend gives the same values.
 */
#define _DEFAULT_SOURCE   /* lgamma_r: lgamma writes the global signgam, a race between threads */
#include "tpf.h"
#include "philox.h"
#include <float.h>
#include <math.h>

#define TRIES 4096

#if defined(__GLIBC__) || defined(__APPLE__)
static inline double lgam(double x) { int sign; return lgamma_r(x, &sign); }
#else
#define lgam lgamma
#endif

typedef struct {
    uint32_t k0, k1, s0, s1;
    uint64_t e;
    uint32_t t;       /* next block */
    int used;         /* uniforms taken from the current block (0, 1, 2) */
    uint32_t w[4];
    double spare;     /* the second Box-Muller value, NaN when none */
} substream;

static inline void sub_init(substream *q, uint64_t key, uint64_t stream, uint64_t e) {
    q->k0 = (uint32_t)key; q->k1 = (uint32_t)(key >> 32);
    q->s0 = (uint32_t)stream; q->s1 = (uint32_t)(stream >> 32);
    q->e = e; q->t = 0; q->used = 2; q->spare = NAN;
}

/* the next uniform in [0, 1); after 512 of them (never needed in practice: every
 * sampler here accepts with probability > 1/2 per try) the sub-stream repeats */
static inline double sub_u(substream *q) {
    if (q->used == 2) {
        q->w[0] = (uint32_t)q->e; q->w[1] = (uint32_t)(q->e >> 32) | ((q->t & 255u) << 24);
        q->w[2] = q->s0; q->w[3] = q->s1;
        tpf_philox_block(q->w, q->k0, q->k1);
        q->t++;
        q->used = 0;
    }
    int j = q->used++;
    return tpf_u53(q->w[2 * j], q->w[2 * j + 1]);
}

static inline double sub_normal(substream *q) {
    if (q->spare == q->spare) { double z = q->spare; q->spare = NAN; return z; }
    double u1 = sub_u(q) + 0x1p-53, u2 = sub_u(q);   /* u1 in (0, 1] */
    double r = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
    q->spare = r * sin(th);
    return r * cos(th);
}

/* a standard gamma(a) draw, a >= 1 (Marsaglia-Tsang) */
static double gamma_mt(substream *q, double a) {
    double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (int tries = 0; tries < TRIES; tries++) {
        double z = sub_normal(q), v = 1.0 + c * z;
        if (v <= 0.0) continue;
        v = v * v * v;
        double u = sub_u(q);
        if (u < 1.0 - 0.0331 * z * z * z * z) return d * v;
        if (u > 0.0 && log(u) < 0.5 * z * z + d * (1.0 - v + log(v))) return d * v;
    }
    return NAN;
}

static double gamma_draw(substream *q, double a, double tiny) {
    if (!(a >= 0.0)) return NAN;
    if (isinf(a)) return INFINITY;
    if (a >= 1.0) return fmax(gamma_mt(q, a), tiny);
    double g = gamma_mt(q, a + 1.0), u = sub_u(q) + 0x1p-53;   /* u in (0, 1] */
    if (a == 0.0) return tiny;
    double r = exp(log(g) + log(u) / a);
    return r < tiny ? tiny : r;
}

int tpf_random_gamma(int dt, const void *alpha, int64_t nalpha, int64_t nsamples, void *out,
                     uint64_t key, uint64_t stream) {
    if (nalpha < 0 || nsamples < 0) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    int64_t n = nalpha * nsamples;
    if (n > ((int64_t)1 << 56)) return TPF_EBADSIZE;
    double tiny = dt == TPF_F32 ? (double)FLT_MIN : DBL_MIN;
    int nt = TPF_NTHREADS(n * 16);
    TPF_PFOR(e, n, {
        substream q; sub_init(&q, key, stream, (uint64_t)e);
        int64_t j = e % nalpha;
        double a = dt == TPF_F32 ? (double)((const float *)alpha)[j] : ((const double *)alpha)[j];
        double g = gamma_draw(&q, a, tiny);
        if (dt == TPF_F32) ((float *)out)[e] = (float)g; else ((double *)out)[e] = g;
    });
    return TPF_OK;
}

/* ---- d sample / d alpha: -(dP(a, x) / da) / p(x; a), P the regularized lower incomplete gamma ---- */

static double digamma(double x) {
    double r = 0.0;
    while (x < 6.0) { r -= 1.0 / x; x += 1.0; }
    double f = 1.0 / (x * x);
    return r + log(x) - 0.5 / x
           - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
}

/* the derivative, carried through the series (x < a + 1) or the continued fraction of
 * Q = 1 - P (Numerical Recipes' gser/gcf) as (value, d/da) pairs; the density's factor
 * cancels in closed form, so nothing underflows for tiny x */
static double gamma_sample_grad(double a, double x) {
    if (!(a > 0.0) || !(x > 0.0) || isinf(a) || isinf(x)) return NAN;
    const double eps = 1e-16, fpmin = 1e-300;
    double lx = log(x);
    if (x < a + 1.0) {
        double t = 1.0, dt = 0.0, s = 1.0, ds = 0.0;
        for (int n = 1; n < 2000; n++) {
            double k = x / (a + n);
            dt = dt * k - t * k / (a + n);
            t *= k;
            s += t; ds += dt;
            if (fabs(t) < fabs(s) * eps && fabs(dt) <= fabs(ds) * eps) break;
        }
        /* dP/da / pdf = (x / a) ((ln x - psi(a + 1)) s + ds) */
        return -(x / a) * ((lx - digamma(a + 1.0)) * s + ds);
    }
    double b = x + 1.0 - a, db = -1.0;
    double c = 1.0 / fpmin, dc = 0.0;
    double d = 1.0 / b, dd = -db / (b * b);
    double h = d, dh = dd;
    for (int i = 1; i < 2000; i++) {
        double an = -i * (i - a), dan = (double)i;
        b += 2.0;
        double dn = an * d + b, ddn = dan * d + an * dd + db;
        if (fabs(dn) < fpmin) { dn = fpmin; ddn = 0.0; }
        double cn = b + an / c, dcn = db + (dan * c - an * dc) / (c * c);
        if (fabs(cn) < fpmin) { cn = fpmin; dcn = 0.0; }
        d = 1.0 / dn; dd = -ddn * d * d;
        c = cn; dc = dcn;
        double del = d * c, ddel = dd * c + d * dc;
        dh = dh * del + h * ddel;
        h *= del;
        if (fabs(del - 1.0) < eps && fabs(ddel) <= fabs(dh) * eps) break;
    }
    /* -dP/da / pdf = dQ/da / pdf = x ((ln x - psi(a)) h + dh) */
    return x * ((lx - digamma(a)) * h + dh);
}

int tpf_random_gamma_grad(int dt, const void *alpha, int64_t nalpha, const void *x, int64_t n, void *out) {
    if (n < 0 || nalpha < 0 || (nalpha == 0 && n > 0) || (nalpha > 0 && n % nalpha)) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    int nt = TPF_NTHREADS(n * 32);
    TPF_PFOR(i, n, {   /* x[i] is a draw of alpha[i % nalpha] (random_gamma's layout) */
        int64_t j = i % nalpha;
        if (dt == TPF_F32)
            ((float *)out)[i] = (float)gamma_sample_grad(((const float *)alpha)[j], ((const float *)x)[i]);
        else
            ((double *)out)[i] = gamma_sample_grad(((const double *)alpha)[j], ((const double *)x)[i]);
    });
    return TPF_OK;
}

/* ---- Poisson ---------------------------------------------------------------------------- */

static double poisson_draw(substream *q, double lam) {
    if (lam != lam) return NAN;
    if (!(lam > 0.0)) return 0.0;
    if (isinf(lam)) return INFINITY;
    if (lam < 10.0) {
        double lim = exp(-lam), p = 1.0, k = 0.0;
        for (int tries = 0; tries < TRIES; tries++) {
            p *= sub_u(q);
            if (p <= lim) return k;
            k += 1.0;
        }
        return NAN;
    }
    double slam = sqrt(lam), loglam = log(lam);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
    for (int tries = 0; tries < TRIES; tries++) {
        double u = sub_u(q) - 0.5, v = sub_u(q), us = 0.5 - fabs(u);
        double k = floor((2.0 * a / us + b) * u + lam + 0.43);
        if (us >= 0.07 && v <= vr) return k;
        if (k < 0.0 || (us < 0.013 && v > us)) continue;
        if (v > 0.0 && log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgam(k + 1.0))
            return k;
    }
    return NAN;
}

static void store_count(int out_dt, void *out, int64_t e, double v) {
    switch (out_dt) {
    case TPF_F32: ((float *)out)[e] = (float)v; break;
    case TPF_F64: ((double *)out)[e] = v; break;
    /* integer outputs: NaN and out-of-range counts saturate (TensorFlow casts the same way on x86) */
    case TPF_I32: ((int32_t *)out)[e] = v != v ? 0 : v >= 2147483647.0 ? INT32_MAX : (int32_t)v; break;
    default: ((int64_t *)out)[e] = v != v ? 0 : v >= 9.2233720368547758e18 ? INT64_MAX : (int64_t)v; break;
    }
}

static int count_dtype_ok(int out_dt) {
    return out_dt == TPF_F32 || out_dt == TPF_F64 || out_dt == TPF_I32 || out_dt == TPF_I64;
}

int tpf_random_poisson(int dt, const void *rate, int64_t nrate, int64_t nsamples, int out_dt, void *out,
                       uint64_t key, uint64_t stream) {
    if (nrate < 0 || nsamples < 0) return TPF_EBADSIZE;
    if ((dt != TPF_F32 && dt != TPF_F64) || !count_dtype_ok(out_dt)) return TPF_EBADDTYPE;
    int64_t n = nrate * nsamples;
    if (n > ((int64_t)1 << 56)) return TPF_EBADSIZE;
    int nt = TPF_NTHREADS(n * 16);
    TPF_PFOR(e, n, {
        substream q; sub_init(&q, key, stream, (uint64_t)e);
        int64_t j = e % nrate;
        double lam = dt == TPF_F32 ? (double)((const float *)rate)[j] : ((const double *)rate)[j];
        store_count(out_dt, out, e, poisson_draw(&q, lam));
    });
    return TPF_OK;
}

/* ---- binomial --------------------------------------------------------------------------- */

static double binomial_small(substream *q, double n, double p) {   /* n p < 10: geometric waiting times */
    double logq = log1p(-p), sum = 0.0, k = 0.0;
    for (int tries = 0; tries < TRIES; tries++) {
        double u = sub_u(q) + 0x1p-53;
        sum += ceil(log(u) / logq);
        if (sum > n) return k;
        k += 1.0;
    }
    return NAN;
}

static double binomial_btrs(substream *q, double n, double p) {
    double m = floor((n + 1.0) * p), r = p / (1.0 - p), lr = log(r);
    double snpq = sqrt(n * p * (1.0 - p));
    double b = 1.15 + 2.53 * snpq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
    double alpha = (2.83 + 5.1 / b) * snpq, vr = 0.92 - 4.2 / b;
    double base = lgam(m + 1.0) + lgam(n - m + 1.0);
    for (int tries = 0; tries < TRIES; tries++) {
        double u = sub_u(q) - 0.5, v = sub_u(q), us = 0.5 - fabs(u);
        double k = floor((2.0 * a / us + b) * u + c);
        if (us >= 0.07 && v <= vr) return k;
        if (k < 0.0 || k > n || v <= 0.0) continue;
        double lv = log(v * alpha / (a / (us * us) + b));
        if (lv <= base - lgam(k + 1.0) - lgam(n - k + 1.0) + (k - m) * lr) return k;
    }
    return NAN;
}

static double binomial_draw(substream *q, double n, double p) {
    if (n != n || p != p) return NAN;
    n = floor(n);
    if (n <= 0.0 || p <= 0.0) return 0.0;
    if (p >= 1.0) return n;
    if (p > 0.5) return n - (n * (1.0 - p) < 10.0 ? binomial_small(q, n, 1.0 - p) : binomial_btrs(q, n, 1.0 - p));
    return n * p < 10.0 ? binomial_small(q, n, p) : binomial_btrs(q, n, p);
}

int tpf_random_binomial(int dt, const void *counts, const void *probs, int64_t n, int out_dt, void *out,
                        uint64_t key, uint64_t stream) {
    if (n < 0 || n > ((int64_t)1 << 56)) return TPF_EBADSIZE;
    if ((dt != TPF_F32 && dt != TPF_F64) || !count_dtype_ok(out_dt)) return TPF_EBADDTYPE;
    int nt = TPF_NTHREADS(n * 16);
    TPF_PFOR(e, n, {
        substream q; sub_init(&q, key, stream, (uint64_t)e);
        double cnt = dt == TPF_F32 ? (double)((const float *)counts)[e] : ((const double *)counts)[e];
        double p = dt == TPF_F32 ? (double)((const float *)probs)[e] : ((const double *)probs)[e];
        store_count(out_dt, out, e, binomial_draw(&q, cnt, p));
    });
    return TPF_OK;
}
