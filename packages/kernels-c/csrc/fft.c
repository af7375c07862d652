/* Fast Fourier transforms of complex64/complex128 lines, and the real-input / real-output halves.
 *
 * A plan of length n is a mixed-radix decimation in time (radix 4, 2, 3 and 5 butterflies, recursive
 * and out of place, as in KISS FFT) when n has no prime factor above 5, and Bluestein's chirp-z
 * algorithm otherwise (the DFT as a convolution of length m = the power of two >= 2n - 1, computed
 * with a radix-2/4 plan of length m).  Every transform computes in double precision (float lines are
 * widened per line) with twiddles from cos/sin in double; the inverse is conj(fft(conj(x))) / n.
 * Lines are independent: the batch splits over threads, each with its own scratch. */
#include "tpf.h"
#include <stdlib.h>

typedef struct { double r, i; } cd;

#define MAXFACT 64

typedef struct fplan {
    int64_t n;
    int blue;                  /* Bluestein */
    int nfact;
    int64_t fact[2 * MAXFACT]; /* (radix, remaining length) pairs */
    cd *tw;                    /* exp(-2 pi i k / n), k < n (mixed radix) */
    int64_t m;                 /* Bluestein: the convolution length */
    cd *w;                     /* Bluestein: exp(-i pi k^2 / n), k < n */
    cd *B;                     /* Bluestein: fft of the conjugate chirp, length m */
    struct fplan *sub;         /* Bluestein: the plan of length m */
} fplan;

static inline cd cmul(cd a, cd b) { return (cd){a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r}; }
static inline cd cadd(cd a, cd b) { return (cd){a.r + b.r, a.i + b.i}; }
static inline cd csub(cd a, cd b) { return (cd){a.r - b.r, a.i - b.i}; }

static void plan_free(fplan *p) {
    if (!p) return;
    free(p->tw);
    free(p->w);
    free(p->B);
    plan_free(p->sub);
    free(p);
}

static void plan_exec(const fplan *p, const cd *in, cd *out, cd *scratch);

/* the scratch a plan's execution needs (in elements) */
static int64_t plan_scratch(const fplan *p) {
    if (!p->blue) return 5;           /* the generic butterfly's radix (at most 5) */
    return 2 * p->m + plan_scratch(p->sub);
}

static fplan *plan_new(int64_t n) {
    fplan *p = calloc(1, sizeof(fplan));
    if (!p) return NULL;
    p->n = n;
    int64_t rem = n;
    int nf = 0;
    while (rem > 1 && nf < MAXFACT) {
        int64_t r;
        if (rem % 4 == 0) r = 4;
        else if (rem % 2 == 0) r = 2;
        else if (rem % 3 == 0) r = 3;
        else if (rem % 5 == 0) r = 5;
        else break;
        rem /= r;
        p->fact[2 * nf] = r;
        p->fact[2 * nf + 1] = rem;
        nf++;
    }
    p->nfact = nf;
    if (rem == 1) {
        p->tw = malloc(sizeof(cd) * (size_t)(n > 0 ? n : 1));
        if (!p->tw) { plan_free(p); return NULL; }
        for (int64_t k = 0; k < n; k++) {
            double a = -2.0 * 3.14159265358979323846 * (double)k / (double)n;
            p->tw[k] = (cd){cos(a), sin(a)};
        }
        return p;
    }
    /* Bluestein */
    p->blue = 1;
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    p->m = m;
    p->w = malloc(sizeof(cd) * (size_t)n);
    p->B = calloc((size_t)m, sizeof(cd));
    p->sub = plan_new(m);
    cd *b = calloc((size_t)m, sizeof(cd));
    cd *sc = p->sub ? malloc(sizeof(cd) * (size_t)plan_scratch(p->sub)) : NULL;
    if (!p->w || !p->B || !p->sub || !b || !sc) { free(b); free(sc); plan_free(p); return NULL; }
    for (int64_t k = 0; k < n; k++) {
        int64_t k2 = (int64_t)(((unsigned __int128)k * (unsigned __int128)k) % (unsigned __int128)(2 * n));
        double a = -3.14159265358979323846 * (double)k2 / (double)n;
        p->w[k] = (cd){cos(a), sin(a)};
        cd c = {p->w[k].r, -p->w[k].i};
        b[k] = c;
        if (k) b[m - k] = c;
    }
    plan_exec(p->sub, b, p->B, sc);
    free(b);
    free(sc);
    return p;
}

/* ---- mixed radix (forward) ---- */

static void bfly2(cd *F, int64_t fstride, const fplan *p, int64_t m) {
    const cd *tw = p->tw;
    for (int64_t k = 0; k < m; k++) {
        cd t = cmul(F[m + k], tw[k * fstride]);
        F[m + k] = csub(F[k], t);
        F[k] = cadd(F[k], t);
    }
}

static void bfly4(cd *F, int64_t fstride, const fplan *p, int64_t m) {
    const cd *tw = p->tw;
    for (int64_t k = 0; k < m; k++) {
        cd s0 = cmul(F[k + m], tw[k * fstride]);
        cd s1 = cmul(F[k + 2 * m], tw[2 * k * fstride]);
        cd s2 = cmul(F[k + 3 * m], tw[3 * k * fstride]);
        cd s5 = csub(F[k], s1);
        cd f0 = cadd(F[k], s1);
        cd s3 = cadd(s0, s2), s4 = csub(s0, s2);
        F[k + 2 * m] = csub(f0, s3);
        F[k] = cadd(f0, s3);
        F[k + m] = (cd){s5.r + s4.i, s5.i - s4.r};
        F[k + 3 * m] = (cd){s5.r - s4.i, s5.i + s4.r};
    }
}

static void bfly3(cd *F, int64_t fstride, const fplan *p, int64_t m) {
    const cd *tw = p->tw;
    const double epi3i = tw[fstride * m].i;   /* sin(-2 pi / 3) */
    for (int64_t k = 0; k < m; k++) {
        cd s1 = cmul(F[k + m], tw[k * fstride]);
        cd s2 = cmul(F[k + 2 * m], tw[2 * k * fstride]);
        cd s3 = cadd(s1, s2), s0 = csub(s1, s2);
        cd f1 = {F[k].r - 0.5 * s3.r, F[k].i - 0.5 * s3.i};
        s0.r *= epi3i;
        s0.i *= epi3i;
        F[k] = cadd(F[k], s3);
        F[k + 2 * m] = (cd){f1.r + s0.i, f1.i - s0.r};
        F[k + m] = (cd){f1.r - s0.i, f1.i + s0.r};
    }
}

/* any radix (used for 5): the direct DFT of each group of ``r`` with the stage's twiddles */
static void bfly_generic(cd *F, int64_t fstride, const fplan *p, int64_t m, int64_t r, cd *scratch) {
    const cd *tw = p->tw;
    int64_t n = p->n;
    for (int64_t u = 0; u < m; u++) {
        for (int64_t q = 0, k = u; q < r; q++, k += m) scratch[q] = F[k];
        for (int64_t q1 = 0, k = u; q1 < r; q1++, k += m) {
            int64_t idx = 0;
            cd acc = scratch[0];
            for (int64_t q = 1; q < r; q++) {
                idx += fstride * k;
                if (idx >= n) idx %= n;
                acc = cadd(acc, cmul(scratch[q], tw[idx]));
            }
            F[k] = acc;
        }
    }
}

static void work(cd *out, const cd *f, int64_t fstride, const int64_t *fact, const fplan *p, cd *scratch) {
    const int64_t r = fact[0], m = fact[1];
    cd *beg = out, *end = out + r * m;
    if (m == 1) {
        for (; out != end; out++, f += fstride) *out = *f;
    } else {
        for (; out != end; out += m, f += fstride) work(out, f, fstride * r, fact + 2, p, scratch);
    }
    switch (r) {
    case 2: bfly2(beg, fstride, p, m); break;
    case 3: bfly3(beg, fstride, p, m); break;
    case 4: bfly4(beg, fstride, p, m); break;
    default: bfly_generic(beg, fstride, p, m, r, scratch); break;
    }
}

/* out = DFT(in) (forward, unscaled); in and out do not overlap */
static void plan_exec(const fplan *p, const cd *in, cd *out, cd *scratch) {
    int64_t n = p->n;
    if (n == 1) { out[0] = in[0]; return; }
    if (!p->blue) { work(out, in, 1, p->fact, p, scratch); return; }
    int64_t m = p->m;
    cd *a = scratch, *A = scratch + m, *sub = scratch + 2 * m;
    for (int64_t k = 0; k < n; k++) a[k] = cmul(in[k], p->w[k]);
    for (int64_t k = n; k < m; k++) a[k] = (cd){0, 0};
    plan_exec(p->sub, a, A, sub);
    /* inverse transform of A * B by conj(fft(conj(.))) */
    for (int64_t k = 0; k < m; k++) { cd t = cmul(A[k], p->B[k]); a[k] = (cd){t.r, -t.i}; }
    plan_exec(p->sub, a, A, sub);
    double s = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) out[k] = cmul((cd){A[k].r * s, -A[k].i * s}, p->w[k]);
}

static int is_cplx(int dt) { return dt == TPF_C64 || dt == TPF_C128; }

/* load element j of a complex (``cdt``) or real (``rdt``) buffer as cd */
static inline cd load(int dt, const void *x, int64_t j) {
    switch (dt) {
    case TPF_C64: return (cd){((const float *)x)[2 * j], ((const float *)x)[2 * j + 1]};
    case TPF_C128: return (cd){((const double *)x)[2 * j], ((const double *)x)[2 * j + 1]};
    case TPF_F32: return (cd){((const float *)x)[j], 0};
    default: return (cd){((const double *)x)[j], 0};
    }
}

static inline void store(int dt, void *o, int64_t j, cd v) {
    switch (dt) {
    case TPF_C64: ((float *)o)[2 * j] = (float)v.r; ((float *)o)[2 * j + 1] = (float)v.i; break;
    case TPF_C128: ((double *)o)[2 * j] = v.r; ((double *)o)[2 * j + 1] = v.i; break;
    case TPF_F32: ((float *)o)[j] = (float)v.r; break;
    default: ((double *)o)[j] = v.r; break;
    }
}

/* The three transforms over lines of a tensor viewed as [outer, n, inner] (the transformed axis in the
 * middle), one routine: kind 0 complex -> complex (``inverse``: conj(fft(conj x)) / n); kind 1 real ->
 * complex (rfft: x is real [outer, n, inner], out complex [outer, n/2+1, inner]); kind 2 complex -> real
 * (irfft: x complex [outer, n/2+1, inner], out real [outer, n, inner]; the imaginary parts of the first and,
 * for an even n, the last input element are ignored, as the Hermitian spectrum of a real signal has none) */
static int fft_lines(int kind, int xdt, int odt, int inverse, int64_t outer, int64_t n, int64_t inner,
                     const void *x, void *out) {
    if (outer < 0 || n < 0 || inner < 0) return TPF_EBADSIZE;
    int64_t lines = outer * inner;
    if (lines == 0 || n == 0) return TPF_OK;
    int64_t nin = kind == 2 ? n / 2 + 1 : n, nout = kind == 1 ? n / 2 + 1 : n;
    fplan *p = plan_new(n);
    if (!p) return TPF_ENOMEM;
    int64_t need = 2 * n + plan_scratch(p);
    int nt = TPF_NTHREADS(lines * n);
    int failed = 0;
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        tpf_fp_enter();
        cd *buf = malloc(sizeof(cd) * (size_t)need);
        if (!buf) {
            #pragma omp atomic write
            failed = 1;
        } else {
            cd *a = buf, *b = buf + n, *sc = buf + 2 * n;
            #pragma omp for schedule(static)
            for (int64_t line = 0; line < lines; line++) {
                int64_t o = line / inner, i = line % inner;
                int64_t xoff = o * nin * inner + i, ooff = o * nout * inner + i;
                if (kind == 2) {
                    for (int64_t k = 0; k < nin; k++) a[k] = load(xdt, x, xoff + k * inner);
                    a[0].i = 0;
                    if (n % 2 == 0) a[n / 2].i = 0;
                    for (int64_t k = nin; k < n; k++) a[k] = a[n - k];   /* conj below */
                    for (int64_t k = 0; k < n; k++) a[k].i = k < nin ? -a[k].i : a[k].i;
                } else {
                    for (int64_t k = 0; k < n; k++) a[k] = load(xdt, x, xoff + k * inner);
                    if (inverse) for (int64_t k = 0; k < n; k++) a[k].i = -a[k].i;
                }
                plan_exec(p, a, b, sc);
                double s = (inverse || kind == 2) ? 1.0 / (double)n : 1.0;
                double si = (inverse || kind == 2) ? -s : 1.0;
                for (int64_t k = 0; k < nout; k++)
                    store(odt, out, ooff + k * inner, (cd){b[k].r * s, b[k].i * si});
            }
            free(buf);
        }
    }
    plan_free(p);
    return failed ? TPF_ENOMEM : TPF_OK;
}

/* complex -> complex along the middle axis of x [outer, n, inner]; ``inverse`` scales by 1 / n */
int tpf_fft(int dt, int inverse, int64_t outer, int64_t n, int64_t inner, const void *x, void *out) {
    if (!is_cplx(dt)) return TPF_EBADDTYPE;
    return fft_lines(0, dt, dt, inverse != 0, outer, n, inner, x, out);
}

/* real (float32/float64 ``dt``) [outer, n, inner] -> complex [outer, n/2+1, inner] of the matching precision */
int tpf_rfft(int dt, int64_t outer, int64_t n, int64_t inner, const void *x, void *out) {
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    return fft_lines(1, dt, dt == TPF_F32 ? TPF_C64 : TPF_C128, 0, outer, n, inner, x, out);
}

/* complex [outer, n/2+1, inner] -> real (float32/float64 ``dt``) [outer, n, inner], scaled by 1 / n */
int tpf_irfft(int dt, int64_t outer, int64_t n, int64_t inner, const void *x, void *out) {
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    return fft_lines(2, dt == TPF_F32 ? TPF_C64 : TPF_C128, dt, 1, outer, n, inner, x, out);
}
