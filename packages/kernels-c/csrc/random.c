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
 *   uniform float64      element i  <- w[2i], w[2i+1]: u53(a, b) * 2^-53, in [0, 1)
 *                        with u53(a, b) = (a << 21) | (b >> 11)
 *   uniform float16      element i  <- w[i]: (w >> 21) * 2^-11 (exact in float16)
 *   uniform bfloat16     element i  <- w[i]: (w >> 24) * 2^-8 (exact in bfloat16)
 *     float16/bfloat16 scale in float32 and round once; a result rounding to hi or
 *     above becomes the largest value of the dtype below hi.
 *     scaled to [lo, hi): lo + u * (hi - lo) in the dtype, no fused multiply-add,
 *     a result that rounds up to hi becomes the largest value below hi.
 *   uniform int32        element i  <- w[i]:           lo + ((w * (hi - lo)) >> 32)
 *   uniform int64        element i  <- w[2i], w[2i+1]: lo + mulhi64((a << 32) | b, hi - lo)
 *   normal float32       block k -> elements 4k..4k+3: Box-Muller, in double, on the
 *                        pairs (w0, w1) and (w2, w3) of the block:
 *                        u1 = (w0 + 1) * 2^-32 in (0, 1], u2 = w1 * 2^-32,
 *                        r = sqrt(-2 log u1), z = (r cos(2 pi u2), r sin(2 pi u2)),
 *                        then mean + stddev * z rounded once to float32.
 *   normal float64       block k -> elements 2k, 2k+1: Box-Muller on
 *                        u1 = (u53(w0, w1) + 1) * 2^-53, u2 = u53(w2, w3) * 2^-53.
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
 * Float32 normals are computed in double and rounded once, so a backend with
 * correctly rounded double arithmetic and faithful log/sin/cos produces the same
 * bits except in ties of probability ~2^-29 per value.
 */
#include "tpf.h"
#include <stdlib.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline void philox_round(uint32_t c[4], uint32_t k0, uint32_t k1) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0], p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
}

/* One Philox 4x32-10 block: ten rounds, the key bumped between rounds. */
static inline void philox4x32_10(const uint32_t ctr[4], uint32_t k0, uint32_t k1, uint32_t out[4]) {
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    for (int r = 0; r < 10; r++) {
        if (r) { k0 += PHILOX_W0; k1 += PHILOX_W1; }
        philox_round(c, k0, k1);
    }
    out[0] = c[0]; out[1] = c[1]; out[2] = c[2]; out[3] = c[3];
}

typedef struct { uint32_t k0, k1, s0, s1; } stream_t;

static inline stream_t mkstream(uint64_t key, uint64_t stream) {
    stream_t s = {(uint32_t)key, (uint32_t)(key >> 32), (uint32_t)stream, (uint32_t)(stream >> 32)};
    return s;
}

static inline void block(const stream_t *s, uint64_t b, uint32_t out[4]) {
    uint32_t c[4] = {(uint32_t)b, (uint32_t)(b >> 32), s->s0, s->s1};
    philox4x32_10(c, s->k0, s->k1, out);
}

static inline double u53(uint32_t a, uint32_t b) {
    return (double)(((uint64_t)a << 21) | (b >> 11)) * 0x1p-53;
}

static inline float u24(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }

static inline uint64_t mulhi64(uint64_t a, uint64_t b) {
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* Split `nblocks` blocks over threads; the body (variadic, so it may hold commas) sees `b` (block index). */
#define FOR_BLOCKS(nblocks, nelems, ...)                                              \
    do {                                                                             \
        int64_t nb_ = (nblocks);                                                     \
        int nt_ = TPF_NTHREADS(nelems);                                              \
        _Pragma("omp parallel for num_threads(nt_) schedule(static)")                \
        for (int64_t b = 0; b < nb_; b++) { __VA_ARGS__ }                                 \
    } while (0)

/* ---- raw blocks (known-answer tests, other backends' cross-checks) ---------- */

int tpf_philox4x32_10(const uint32_t *ctr, const uint32_t *key, uint32_t *out, int64_t nblocks) {
    if (nblocks < 0) return TPF_EBADSIZE;
    /* block j uses the counter ctr + j (a 128-bit add, carrying through the words) */
    for (int64_t j = 0; j < nblocks; j++) {
        uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
        uint64_t add = (uint64_t)j;
        for (int w = 0; w < 4 && add; w++) {
            uint64_t s = (uint64_t)c[w] + (add & 0xffffffffu);
            c[w] = (uint32_t)s;
            add = (add >> 32) + (s >> 32);
        }
        philox4x32_10(c, key[0], key[1], out + 4 * j);
    }
    return TPF_OK;
}

/* ---- uniform floats ------------------------------------------------------------ */

static inline float scale_f32(float u, float lo, float hi, float width) {
    float v = lo + u * width;
    return v < hi ? v : nextafterf(hi, lo);
}
static inline double scale_f64(double u, double lo, double hi, double width) {
    double v = lo + u * width;
    return v < hi ? v : nextafter(hi, lo);
}

static inline float narrow_to_float(int half, uint16_t h) {
    return half ? tpf_half_to_float(h) : tpf_bf16_to_float(h);
}

/* the largest float16 (half = 1) or bfloat16 value below hi */
static uint16_t narrow_below(int half, float hi) {
    uint16_t h = half ? tpf_float_to_half(hi) : tpf_float_to_bf16(hi);
    while (narrow_to_float(half, h) >= hi) {
        if (h == 0x0000) h = 0x8001;            /* +0 -> the smallest negative value */
        else if (h & 0x8000) h = (uint16_t)(h + 1);  /* negative: away from zero */
        else h = (uint16_t)(h - 1);             /* positive: toward zero */
    }
    return h;
}

int tpf_random_uniform(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double lo, double hi) {
    if (n < 0) return TPF_EBADSIZE;
    if (!(lo < hi)) return TPF_EBADARG;
    stream_t s = mkstream(key, stream);
    if (dt == TPF_F32) {
        float *o = (float *)out, flo = (float)lo, fhi = (float)hi, fw = fhi - flo;
        int unit = flo == 0.0f && fhi == 1.0f;
        FOR_BLOCKS((n + 3) / 4, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 4, m = n - i0 < 4 ? n - i0 : 4;
            for (int j = 0; j < m; j++) o[i0 + j] = unit ? u24(w[j]) : scale_f32(u24(w[j]), flo, fhi, fw);
        });
    } else if (dt == TPF_F64) {
        double *o = (double *)out, width = hi - lo;
        int unit = lo == 0.0 && hi == 1.0;
        FOR_BLOCKS((n + 1) / 2, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 2;
            for (int j = 0; j < 2 && i0 + j < n; j++) {
                double u = u53(w[2 * j], w[2 * j + 1]);
                o[i0 + j] = unit ? u : scale_f64(u, lo, hi, width);
            }
        });
    } else if (dt == TPF_F16 || dt == TPF_BF16) {
        uint16_t *o = (uint16_t *)out;
        int half = dt == TPF_F16, shift = half ? 21 : 24;
        float scale = half ? 0x1p-11f : 0x1p-8f, flo = (float)lo, fhi = (float)hi, fw = fhi - flo;
        uint16_t below = narrow_below(half, fhi);
        FOR_BLOCKS((n + 3) / 4, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 4, m = n - i0 < 4 ? n - i0 : 4;
            for (int j = 0; j < m; j++) {
                float v = flo + (float)(w[j] >> shift) * scale * fw;
                uint16_t h = half ? tpf_float_to_half(v) : tpf_float_to_bf16(v);
                o[i0 + j] = narrow_to_float(half, h) < fhi ? h : below;
            }
        });
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* ---- uniform integers ----------------------------------------------------------- */

int tpf_random_uniform_int(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, int64_t lo, int64_t hi) {
    if (n < 0) return TPF_EBADSIZE;
    if (!(lo < hi)) return TPF_EBADARG;
    stream_t s = mkstream(key, stream);
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    if (dt == TPF_I32) {
        if (lo < INT32_MIN || hi > (int64_t)INT32_MAX + 1) return TPF_EBADARG;
        int32_t *o = (int32_t *)out;
        FOR_BLOCKS((n + 3) / 4, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 4, m = n - i0 < 4 ? n - i0 : 4;
            for (int j = 0; j < m; j++) o[i0 + j] = (int32_t)(lo + (int64_t)(((uint64_t)w[j] * range) >> 32));
        });
    } else if (dt == TPF_I64) {
        int64_t *o = (int64_t *)out;
        FOR_BLOCKS((n + 1) / 2, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 2;
            for (int j = 0; j < 2 && i0 + j < n; j++) {
                uint64_t u = ((uint64_t)w[2 * j] << 32) | w[2 * j + 1];
                o[i0 + j] = (int64_t)((uint64_t)lo + mulhi64(u, range));
            }
        });
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* ---- normal ---------------------------------------------------------------------- */

static const double TWO_PI = 6.283185307179586476925286766559;

static inline void box_muller(double u1, double u2, double *z0, double *z1) {
    double r = sqrt(-2.0 * log(u1)), t = TWO_PI * u2;
    *z0 = r * cos(t);
    *z1 = r * sin(t);
}

int tpf_random_normal(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double mean, double stddev) {
    if (n < 0) return TPF_EBADSIZE;
    stream_t s = mkstream(key, stream);
    if (dt == TPF_F32) {
        float *o = (float *)out;
        FOR_BLOCKS((n + 3) / 4, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            double z[4];
            box_muller(((double)w[0] + 1.0) * 0x1p-32, (double)w[1] * 0x1p-32, &z[0], &z[1]);
            box_muller(((double)w[2] + 1.0) * 0x1p-32, (double)w[3] * 0x1p-32, &z[2], &z[3]);
            int64_t i0 = b * 4, m = n - i0 < 4 ? n - i0 : 4;
            for (int j = 0; j < m; j++) o[i0 + j] = (float)(mean + stddev * z[j]);
        });
    } else if (dt == TPF_F64) {
        double *o = (double *)out;
        FOR_BLOCKS((n + 1) / 2, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            double z[2];
            box_muller(u53(w[0], w[1]) + 0x1p-53, u53(w[2], w[3]), &z[0], &z[1]);
            int64_t i0 = b * 2;
            for (int j = 0; j < 2 && i0 + j < n; j++) o[i0 + j] = mean + stddev * z[j];
        });
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* One standard normal within [-2, 2] for element i: deterministic per element. */
static inline double truncated_draw(const stream_t *s, uint64_t i) {
    for (uint32_t t = 0; t < 256; t++) {
        uint32_t c[4] = {(uint32_t)i, (uint32_t)(i >> 32) | (t << 24), s->s0, s->s1}, w[4];
        philox4x32_10(c, s->k0, s->k1, w);
        double z0, z1;
        box_muller(u53(w[0], w[1]) + 0x1p-53, u53(w[2], w[3]), &z0, &z1);
        if (fabs(z0) <= 2.0) return z0;
        if (fabs(z1) <= 2.0) return z1;
    }
    return 0.0;  /* 512 rejections in a row: probability 0.0455^512, never seen */
}

int tpf_random_truncated_normal(int dt, void *out, int64_t n, uint64_t key, uint64_t stream,
                                double mean, double stddev) {
    if (n < 0) return TPF_EBADSIZE;
    if (n > ((int64_t)1 << 56)) return TPF_EBADSIZE;
    stream_t s = mkstream(key, stream);
    if (dt == TPF_F32) {
        float *o = (float *)out;
        FOR_BLOCKS(n, n, { o[b] = (float)(mean + stddev * truncated_draw(&s, (uint64_t)b)); });
    } else if (dt == TPF_F64) {
        double *o = (double *)out;
        FOR_BLOCKS(n, n, { o[b] = mean + stddev * truncated_draw(&s, (uint64_t)b); });
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* ---- dropout mask ------------------------------------------------------------------ */

int tpf_random_dropout_mask(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double rate) {
    if (n < 0) return TPF_EBADSIZE;
    if (!(rate >= 0.0 && rate < 1.0)) return TPF_EBADARG;
    stream_t s = mkstream(key, stream);
    if (dt == TPF_F32) {
        float *o = (float *)out, keep = (float)(1.0 / (1.0 - rate));
        FOR_BLOCKS((n + 3) / 4, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 4, m = n - i0 < 4 ? n - i0 : 4;
            for (int j = 0; j < m; j++) o[i0 + j] = (double)u24(w[j]) >= rate ? keep : 0.0f;
        });
    } else if (dt == TPF_F64) {
        double *o = (double *)out, keep = 1.0 / (1.0 - rate);
        FOR_BLOCKS((n + 3) / 4, n, {
            uint32_t w[4]; block(&s, (uint64_t)b, w);
            int64_t i0 = b * 4, m = n - i0 < 4 ? n - i0 : 4;
            for (int j = 0; j < m; j++) o[i0 + j] = (double)u24(w[j]) >= rate ? keep : 0.0;
        });
    } else {
        return TPF_EBADDTYPE;
    }
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
    #pragma omp parallel num_threads(nt)
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
                total += exp(v - mx);
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
                double target = u53(w[2 * j], w[2 * j + 1]) * total;
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
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t k = 0; k < n; k++)
        memcpy((char *)dst + k * rowbytes, (const char *)src + perm[k] * rowbytes, (size_t)rowbytes);
    return TPF_OK;
}
