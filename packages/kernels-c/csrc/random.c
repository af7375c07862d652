/* Counter-based random numbers: Philox 4x32-10 (Salmon et al., SC'11; Random123).
 *
 * A stream is a 64-bit key and a 64-bit stream number.  Block b of a stream is
 *     philox4x32_10(counter = {lo32(b), hi32(b), lo32(stream), hi32(stream)},
 *                   key     = {lo32(key), hi32(key)})
 * and yields four 32-bit words w[4b .. 4b+3].  Every output element is a pure
 * function of (key, stream, its index), so threads may split the work anywhere
 * and another backend (OpenCL, CUDA) reproduces the same values by evaluating the
 * same formulas.  The mapping from words to values (the contract):
 *
 *   uniform float32      element i  <- w[i]:           (w >> 8) * 2^-24, in [0, 1)
 *   uniform float64      element i  <- w[2i], w[2i+1]: tpf_u53(a, b) * 2^-53, in [0, 1)
 *                        with tpf_u53(a, b) = (a << 21) | (b >> 11)
 *     scaled to [lo, hi): lo + u * (hi - lo) in the dtype, no fused multiply-add,
 *     a result that rounds up to hi becomes the largest value below hi.
 *   uniform float16      element i  <- w[i]: (w >> 21) * 2^-11 (exact in float16)
 *   uniform bfloat16     element i  <- w[i]: (w >> 24) * 2^-8 (exact in bfloat16)
 *     float16/bfloat16 scale in float32 (lo + (k * 2^-p) * (hi - lo)) and round
 *     once; a result at or above hi becomes the largest value of the dtype below hi.
 *   uniform int32        element i  <- w[i]:           lo + ((w * (hi - lo)) >> 32)
 *   uniform int64        element i  <- w[2i], w[2i+1]: lo + mulhi64((a << 32) | b, hi - lo)
 *   normal float32       block k -> elements 4k..4k+3: Box-Muller, in double, on the
 *                        pairs (w0, w1) and (w2, w3) of the block:
 *                        u1 = (w0 + 1) * 2^-32 in (0, 1], u2 = w1 * 2^-32,
 *                        r = sqrt(-2 log u1), z = (r cos(2 pi u2), r sin(2 pi u2))
 *                        (the pair's first value from cos, the second from sin),
 *                        then mean + stddev * z rounded once to float32.
 *   normal float64       block k -> elements 2k, 2k+1: Box-Muller on
 *                        u1 = (tpf_u53(w0, w1) + 1) * 2^-53, u2 = tpf_u53(w2, w3) * 2^-53.
 *   truncated normal     element i, attempt t = 0, 1, ...: block with counter
 *                        {lo32(i), hi32(i) | t << 24, stream} (i < 2^56) gives a float64
 *                        Box-Muller pair as above; the first of the pair within 2
 *                        (standard deviations) is taken, else the next attempt.
 *   dropout mask         element i  <- w[i]: kept when (w >> 8) * 2^-24 >= rate; the mask
 *                        value is 1 / (1 - rate) when kept, else 0.
 *   categorical          element e (row r, sample s; e = r * num_samples + s) <- w[2e],
 *                        w[2e+1]: u = u53 * 2^-53; the class is the first c whose running
 *                        sum of exp(logit - max) (in double) exceeds u * total.
 *   shuffle              Fisher-Yates over rows, i = n-1 .. 1: j = mulhi64(u64(w[2i], w[2i+1]),
 *                        i + 1), swap rows i and j of the index permutation.
 *
 * log, sin and cos above are tapeflow's own (the fdlibm polynomials in philox.h, within
 * 1 ulp), built from +, -, *, / and sqrt only, and nothing is contracted into a
 * fused multiply-add: a backend with IEEE double arithmetic that evaluates the same
 * expressions in the same order reproduces every value bit for bit.  (They are also
 * what lets the compiler vectorise the normal kernels.)
 */
/* bit-exact results: no a*b+c contraction, whatever the clone's instruction set (set
 * before the includes: philox.h's log, sin and cos are compiled under it) */
#pragma GCC optimize("fp-contract=off")

#include "tpf.h"
#include "philox.h"   /* Philox, u24/u53, log/sin/cos and Box-Muller: shared with gpu/random.cl */
#include <stdlib.h>


typedef struct { uint32_t k0, k1, s0, s1; } stream_t;

static inline stream_t mkstream(uint64_t key, uint64_t stream) {
    stream_t s = {(uint32_t)key, (uint32_t)(key >> 32), (uint32_t)stream, (uint32_t)(stream >> 32)};
    return s;
}

static inline void block(const stream_t *s, uint64_t b, uint32_t out[4]) {
    out[0] = (uint32_t)b; out[1] = (uint32_t)(b >> 32); out[2] = s->s0; out[3] = s->s1;
    tpf_philox_block(out, s->k0, s->k1);
}

/* PB blocks at once, lanes side by side so the rounds vectorise: the words of blocks
 * b0 .. b0+PB-1 in block order, w[4j + k].  `hi_or` is or-ed into the counter's second
 * word (the truncated normal's attempt number). */
#define PB 32
static inline void philox_batch(const stream_t *s, uint64_t b0, uint32_t hi_or, uint32_t *w) {
    uint32_t c0[PB], c1[PB], c2[PB], c3[PB];
    for (int j = 0; j < PB; j++) {
        uint64_t b = b0 + (uint64_t)j;
        c0[j] = (uint32_t)b; c1[j] = (uint32_t)(b >> 32) | hi_or; c2[j] = s->s0; c3[j] = s->s1;
    }
    uint32_t k0 = s->k0, k1 = s->k1;
    for (int r = 0; r < 10; r++) {
        if (r) TPF_PHILOX_BUMP(k0, k1);
        for (int j = 0; j < PB; j++) TPF_PHILOX_ROUND(c0[j], c1[j], c2[j], c3[j], k0, k1);
    }
    for (int j = 0; j < PB; j++) {
        w[4 * j] = c0[j]; w[4 * j + 1] = c1[j]; w[4 * j + 2] = c2[j]; w[4 * j + 3] = c3[j];
    }
}

static inline uint64_t mulhi64(uint64_t a, uint64_t b) {
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* ---- running batches over threads ------------------------------------------------ */

/* Split the batches of PB blocks covering `nblocks` over threads; CALL sees the block
 * range [b_lo, b_hi) (multiples of PB) of one thread. */
#define RUN_BATCHES(nblocks, nelems, CALL)                                              \
    do {                                                                              \
        int64_t nbat_ = ((nblocks) + PB - 1) / PB;                                    \
        int nt_ = TPF_NTHREADS(nelems);                                               \
        if (nt_ > nbat_) nt_ = nbat_ > 0 ? (int)nbat_ : 1;                            \
        if (nt_ <= 1) {  /* entering OpenMP costs about a microsecond: not for small draws */ \
            int64_t b_lo = 0, b_hi = nbat_ * PB;                                      \
            if (b_lo < b_hi) CALL;                                                    \
            break;                                                                    \
        }                                                                             \
        int64_t chunk_ = (nbat_ + nt_ - 1) / nt_;                                     \
        _Pragma("omp parallel for num_threads(nt_) schedule(static)")                 \
        for (int t_ = 0; t_ < nt_; t_++) {                                            \
            int64_t b_lo = (int64_t)t_ * chunk_ * PB, b_hi = b_lo + chunk_ * PB;      \
            if (b_hi > nbat_ * PB) b_hi = nbat_ * PB;                                 \
            if (b_lo < b_hi) CALL;                                                    \
        }                                                                             \
    } while (0)

/* ---- raw blocks (known-answer tests, other backends' cross-checks) ---------- */

int tpf_philox4x32_10(const uint32_t *ctr, const uint32_t *key, uint32_t *out, int64_t nblocks) {
    if (nblocks < 0) return TPF_EBADSIZE;
    /* block j uses the counter ctr + j (a 128-bit add, carrying through the words) */
    for (int64_t j = 0; j < nblocks; j++) {
        uint32_t *c = out + 4 * j;
        c[0] = ctr[0]; c[1] = ctr[1]; c[2] = ctr[2]; c[3] = ctr[3];
        tpf_philox_counter_add(c, (uint64_t)j);
        tpf_philox_block(c, key[0], key[1]);
    }
    return TPF_OK;
}

/* ---- uniform floats ------------------------------------------------------------ */

static inline float narrow_to_float(int half, uint16_t h) {
    return half ? tpf_half_to_float(h) : tpf_bf16_to_float(h);
}

/* the largest float16 (half = 1) or bfloat16 value below hi */
static uint16_t narrow_below(int half, float hi) {
    uint16_t h = half ? tpf_float_to_half(hi) : tpf_float_to_bf16(hi);
    while (narrow_to_float(half, h) >= hi) {
        if (h == 0x0000) h = 0x8001;                 /* +0 -> the smallest negative value */
        else if (h & 0x8000) h = (uint16_t)(h + 1);  /* negative: away from zero */
        else h = (uint16_t)(h - 1);                  /* positive: toward zero */
    }
    return h;
}

#define EMIT_WORDS(PER_BLOCK, ...)                                                      \
    uint32_t w[4 * PB];                                                              \
    for (int64_t b = b_lo; b < b_hi; b += PB) {                                      \
        philox_batch(s, (uint64_t)b, 0, w);                                          \
        int64_t e0 = b * (PER_BLOCK), m = n - e0 < (PER_BLOCK) * PB ? n - e0 : (PER_BLOCK) * PB; \
        __VA_ARGS__                                                                  \
    }

static void TPF_CLONES uniform_f32(const stream_t *s, float *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                   float lo, float hi) {
    float width = hi - lo, below = nextafterf(hi, lo);
    int unit = lo == 0.0f && hi == 1.0f;
    EMIT_WORDS(4, {
        if (unit) {
            for (int64_t i = 0; i < m; i++) o[e0 + i] = tpf_u24(w[i]);
        } else {
            for (int64_t i = 0; i < m; i++) { float v = lo + tpf_u24(w[i]) * width; o[e0 + i] = v < hi ? v : below; }
        }
    })
}

static void TPF_CLONES uniform_f64(const stream_t *s, double *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                   double lo, double hi) {
    double width = hi - lo, below = nextafter(hi, lo);
    EMIT_WORDS(2, {
        for (int64_t i = 0; i < m; i++) {
            double u = tpf_u53(w[2 * i], w[2 * i + 1]), v = lo + u * width;
            o[e0 + i] = v < hi ? v : below;
        }
    })
}

static void TPF_CLONES uniform_narrow(const stream_t *s, uint16_t *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                      int half, float lo, float hi) {
    int shift = half ? 21 : 24;
    float scale = half ? 0x1p-11f : 0x1p-8f, width = hi - lo;
    uint16_t below = narrow_below(half, hi);
    EMIT_WORDS(4, {
        for (int64_t i = 0; i < m; i++) {
            float v = lo + (float)(w[i] >> shift) * scale * width;
            uint16_t h = half ? tpf_float_to_half(v) : tpf_float_to_bf16(v);
            o[e0 + i] = narrow_to_float(half, h) < hi ? h : below;
        }
    })
}

int tpf_random_uniform(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double lo, double hi) {
    if (n < 0) return TPF_EBADSIZE;
    if (!(lo < hi)) return TPF_EBADARG;
    stream_t st = mkstream(key, stream), *s = &st;
    if (dt == TPF_F32) RUN_BATCHES((n + 3) / 4, n, uniform_f32(s, (float *)out, n, b_lo, b_hi, (float)lo, (float)hi));
    else if (dt == TPF_F64) RUN_BATCHES((n + 1) / 2, n, uniform_f64(s, (double *)out, n, b_lo, b_hi, lo, hi));
    else if (dt == TPF_F16 || dt == TPF_BF16)
        RUN_BATCHES((n + 3) / 4, n, uniform_narrow(s, (uint16_t *)out, n, b_lo, b_hi, dt == TPF_F16, (float)lo,
                                                   (float)hi));
    else return TPF_EBADDTYPE;
    return TPF_OK;
}

/* ---- uniform integers ----------------------------------------------------------- */

static void TPF_CLONES uniform_i32(const stream_t *s, int32_t *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                   int64_t lo, uint64_t range) {
    EMIT_WORDS(4, {
        for (int64_t i = 0; i < m; i++) o[e0 + i] = (int32_t)(lo + (int64_t)(((uint64_t)w[i] * range) >> 32));
    })
}

static void TPF_CLONES uniform_i64(const stream_t *s, int64_t *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                   int64_t lo, uint64_t range) {
    EMIT_WORDS(2, {
        for (int64_t i = 0; i < m; i++) {
            uint64_t u = ((uint64_t)w[2 * i] << 32) | w[2 * i + 1];
            o[e0 + i] = (int64_t)((uint64_t)lo + mulhi64(u, range));
        }
    })
}

int tpf_random_uniform_int(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, int64_t lo, int64_t hi) {
    if (n < 0) return TPF_EBADSIZE;
    if (!(lo < hi)) return TPF_EBADARG;
    stream_t st = mkstream(key, stream), *s = &st;
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    if (dt == TPF_I32) {
        if (lo < INT32_MIN || hi > (int64_t)INT32_MAX + 1) return TPF_EBADARG;
        RUN_BATCHES((n + 3) / 4, n, uniform_i32(s, (int32_t *)out, n, b_lo, b_hi, lo, range));
    } else if (dt == TPF_I64) {
        RUN_BATCHES((n + 1) / 2, n, uniform_i64(s, (int64_t *)out, n, b_lo, b_hi, lo, range));
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* ---- normal ---------------------------------------------------------------------- */

static void TPF_CLONES normal_f32(const stream_t *s, float *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                  double mean, double stddev) {
    double z[4 * PB];
    EMIT_WORDS(4, {
        for (int p = 0; p < 2 * PB; p++)
            tpf_box_muller(((double)w[2 * p] + 1.0) * 0x1p-32, (double)w[2 * p + 1] * 0x1p-32, &z[2 * p], &z[2 * p + 1]);
        for (int64_t i = 0; i < m; i++) o[e0 + i] = (float)(mean + stddev * z[i]);
    })
}

static void TPF_CLONES normal_f64(const stream_t *s, double *o, int64_t n, int64_t b_lo, int64_t b_hi,
                                  double mean, double stddev) {
    double z[2 * PB];
    EMIT_WORDS(2, {
        for (int j = 0; j < PB; j++)
            tpf_box_muller(tpf_u53(w[4 * j], w[4 * j + 1]) + 0x1p-53, tpf_u53(w[4 * j + 2], w[4 * j + 3]), &z[2 * j],
                       &z[2 * j + 1]);
        for (int64_t i = 0; i < m; i++) o[e0 + i] = mean + stddev * z[i];
    })
}

int tpf_random_normal(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double mean, double stddev) {
    if (n < 0) return TPF_EBADSIZE;
    stream_t st = mkstream(key, stream), *s = &st;
    if (dt == TPF_F32) RUN_BATCHES((n + 3) / 4, n, normal_f32(s, (float *)out, n, b_lo, b_hi, mean, stddev));
    else if (dt == TPF_F64) RUN_BATCHES((n + 1) / 2, n, normal_f64(s, (double *)out, n, b_lo, b_hi, mean, stddev));
    else return TPF_EBADDTYPE;
    return TPF_OK;
}

/* ---- truncated normal -------------------------------------------------------------- */

/* A standard normal within [-2, 2] for element i from attempt t = 1, 2, ... (attempt 0
 * is batched below): deterministic per element. */
static double truncated_retry(const stream_t *s, uint64_t i) {
    for (uint32_t t = 1; t < 256; t++) {
        uint32_t w[4] = {(uint32_t)i, (uint32_t)(i >> 32) | (t << 24), s->s0, s->s1};
        tpf_philox_block(w, s->k0, s->k1);
        double z0, z1;
        tpf_box_muller(tpf_u53(w[0], w[1]) + 0x1p-53, tpf_u53(w[2], w[3]), &z0, &z1);
        if (fabs(z0) <= 2.0) return z0;
        if (fabs(z1) <= 2.0) return z1;
    }
    return 0.0;  /* 512 rejections in a row: probability 0.0455^512, never seen */
}

/* element i uses block i; here the "blocks" are elements, PB at a time */
static void TPF_CLONES truncated_any(const stream_t *s, void *out, int f32, int64_t n, int64_t b_lo, int64_t b_hi,
                                    double mean, double stddev) {
    uint32_t w[4 * PB];
    double z[PB];
    for (int64_t b = b_lo; b < b_hi; b += PB) {
        philox_batch(s, (uint64_t)b, 0, w);
        int64_t m = n - b < PB ? n - b : PB;
        for (int j = 0; j < PB; j++) {
            double z0, z1;
            tpf_box_muller(tpf_u53(w[4 * j], w[4 * j + 1]) + 0x1p-53, tpf_u53(w[4 * j + 2], w[4 * j + 3]), &z0, &z1);
            z[j] = fabs(z0) <= 2.0 ? z0 : (fabs(z1) <= 2.0 ? z1 : NAN);
        }
        for (int64_t j = 0; j < m; j++) {
            double v = z[j] == z[j] ? z[j] : truncated_retry(s, (uint64_t)(b + j));
            if (f32) ((float *)out)[b + j] = (float)(mean + stddev * v);
            else ((double *)out)[b + j] = mean + stddev * v;
        }
    }
}

int tpf_random_truncated_normal(int dt, void *out, int64_t n, uint64_t key, uint64_t stream,
                                double mean, double stddev) {
    if (n < 0 || n > ((int64_t)1 << 56)) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    stream_t st = mkstream(key, stream), *s = &st;
    RUN_BATCHES(n, n, truncated_any(s, out, dt == TPF_F32, n, b_lo, b_hi, mean, stddev));
    return TPF_OK;
}

/* ---- dropout mask ------------------------------------------------------------------ */

static void TPF_CLONES mask_f32(const stream_t *s, float *o, int64_t n, int64_t b_lo, int64_t b_hi, double rate) {
    float keep = (float)(1.0 / (1.0 - rate));
    EMIT_WORDS(4, { for (int64_t i = 0; i < m; i++) o[e0 + i] = (double)tpf_u24(w[i]) >= rate ? keep : 0.0f; })
}

static void TPF_CLONES mask_f64(const stream_t *s, double *o, int64_t n, int64_t b_lo, int64_t b_hi, double rate) {
    double keep = 1.0 / (1.0 - rate);
    EMIT_WORDS(4, { for (int64_t i = 0; i < m; i++) o[e0 + i] = (double)tpf_u24(w[i]) >= rate ? keep : 0.0; })
}

int tpf_random_dropout_mask(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double rate) {
    if (n < 0) return TPF_EBADSIZE;
    if (!(rate >= 0.0 && rate < 1.0)) return TPF_EBADARG;
    stream_t st = mkstream(key, stream), *s = &st;
    if (dt == TPF_F32) RUN_BATCHES((n + 3) / 4, n, mask_f32(s, (float *)out, n, b_lo, b_hi, rate));
    else if (dt == TPF_F64) RUN_BATCHES((n + 3) / 4, n, mask_f64(s, (double *)out, n, b_lo, b_hi, rate));
    else return TPF_EBADDTYPE;
    return TPF_OK;
}
/* ---- categorical ---------------------------------------------------------------------
 * logits: (batch, classes) float32/float64; out: (batch, num_samples) int32/int64.
 * A row whose probabilities do not sum to a finite positive number (all -inf, NaN,
 * +inf) fails with TPF_EBADARG and its index in *bad_row. */

int tpf_random_categorical(int dt, const void *logits, int64_t batch, int64_t classes, int64_t num_samples,
                           int out_dt, void *out, uint64_t key, uint64_t stream, int64_t *bad_row) {
    if (batch < 0 || classes < 0 || num_samples < 0) return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    if (out_dt != TPF_I32 && out_dt != TPF_I64) return TPF_EBADDTYPE;
    if (batch == 0 || num_samples == 0) return TPF_OK;
    if (classes == 0) { *bad_row = 0; return TPF_EBADARG; }
    stream_t s = mkstream(key, stream);
    int nt = TPF_NTHREADS(batch * (classes + num_samples));
    if (nt > batch) nt = (int)batch;
    int status = TPF_OK;
    int64_t first_bad = batch;
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *cdf = (double *)malloc((size_t)classes * sizeof(double));
        if (!cdf) {
            #pragma omp atomic write
            status = TPF_ENOMEM;
        }
        #pragma omp for schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            if (!cdf) continue;
            double mx = -INFINITY, total = 0.0;
            for (int64_t c = 0; c < classes; c++) {
                double v = dt == TPF_F32 ? (double)((const float *)logits)[r * classes + c]
                                         : ((const double *)logits)[r * classes + c];
                if (v > mx || v != v) mx = v;
            }
            for (int64_t c = 0; c < classes; c++) {
                double v = dt == TPF_F32 ? (double)((const float *)logits)[r * classes + c]
                                         : ((const double *)logits)[r * classes + c];
                total += exp(v - mx);  /* libm: another backend's last bit moves a draw only within 2^-50 of a boundary */
                cdf[c] = total;
            }
            if (mx != mx || isinf(mx)) {  /* NaN, +inf, or every logit -inf */
                #pragma omp critical(tpf_categorical_bad)
                { if (r < first_bad) first_bad = r; }
                continue;
            }
            for (int64_t k = 0; k < num_samples; k++) {
                uint64_t e = (uint64_t)(r * num_samples + k);
                uint32_t w[4]; block(&s, e >> 1, w);
                int j = (int)(e & 1);
                double target = tpf_u53(w[2 * j], w[2 * j + 1]) * total;
                int64_t lo = 0, hi = classes - 1;  /* first c with cdf[c] > target */
                while (lo < hi) {
                    int64_t mid = lo + (hi - lo) / 2;
                    if (cdf[mid] > target) hi = mid; else lo = mid + 1;
                }
                if (out_dt == TPF_I32) ((int32_t *)out)[e] = (int32_t)lo;
                else ((int64_t *)out)[e] = lo;
            }
        }
        free(cdf);
    }
    if (status) return status;
    if (first_bad < batch) { *bad_row = first_bad; return TPF_EBADARG; }
    return TPF_OK;
}

/* ---- shuffle ---------------------------------------------------------------------------
 * dst row k = src row perm[k]; perm is a Fisher-Yates permutation (sequential, as the
 * contract above says; `perm_buf` is caller-provided scratch of n int64). */

int tpf_random_shuffle(int64_t rowbytes, int64_t n, const void *src, void *dst, void *perm_buf,
                       uint64_t key, uint64_t stream) {
    if (rowbytes < 0 || n < 0) return TPF_EBADSIZE;
    stream_t s = mkstream(key, stream);
    int64_t *perm = (int64_t *)perm_buf;
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        uint32_t w[4]; block(&s, (uint64_t)i >> 1, w);
        int j = (int)(i & 1);
        uint64_t u = ((uint64_t)w[2 * j] << 32) | w[2 * j + 1];
        int64_t k = (int64_t)mulhi64(u, (uint64_t)i + 1);
        int64_t t = perm[i]; perm[i] = perm[k]; perm[k] = t;
    }
    if (rowbytes == 0) return TPF_OK;
    int nt = TPF_NTHREADS(n * rowbytes);
    TPF_PFOR(k, n, memcpy((char *)dst + k * rowbytes, (const char *)src + perm[k] * rowbytes, (size_t)rowbytes););
    return TPF_OK;
}
