/* Joining, splitting, padding and sequences: concat, split (also unstack),
 * pad (constant, reflect, symmetric), iota (range) and linspace.
 *
 * concat/split see each tensor as [outer, width] with widths in elements (the
 * axis length times everything after it), so one launch moves every piece.
 */
#include "tpf.h"
#include "index_par.h"
#include <stdlib.h>

static int okelsize(int64_t e) { return e == 1 || e == 2 || e == 4 || e == 8 || e == 16; }   /* 16: complex128 */

/* concat/split are memcpy bound: below this many bytes one thread copies faster than two (waking a second
 * thread costs more than the copy: split of [32, 1024] floats took 24-69 us on 2 threads, 12 us on one). */
#define JOIN_PAR_MIN_BYTES ((int64_t)1 << 21)
static int join_threads(int64_t elements, int64_t elsize) {
    return elements * elsize >= JOIN_PAR_MIN_BYTES ? TPF_NTHREADS(elements) : 1;
}

/* dst [outer, sum(widths)] <- srcs[i] [outer, widths[i]] */
int tpf_concat(int64_t elsize, int n, void **srcs, const int64_t *widths, int64_t outer, void *dst) {
    if (!okelsize(elsize)) return TPF_EBADARG;
    if (n < 0 || outer < 0) return TPF_EBADSIZE;
    int64_t total = 0;
    for (int i = 0; i < n; i++) { if (widths[i] < 0) return TPF_EBADSIZE; total += widths[i]; }
    if (total == 0 || outer == 0) return TPF_OK;
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!off) return TPF_ENOMEM;
    off[0] = 0;
    for (int i = 0; i < n; i++) off[i + 1] = off[i] + widths[i];
    int nt = join_threads(outer * total, elsize);
    PFOR(task, outer * n,
        int64_t r = task / n; int i = (int)(task % n);
        if (widths[i])
            memcpy((char *)dst + (r * total + off[i]) * elsize, (const char *)srcs[i] + r * widths[i] * elsize,
                   (size_t)(widths[i] * elsize));
    );
    free(off);
    return TPF_OK;
}

/* dsts[i] [outer, widths[i]] <- src [outer, sum(widths)] */
int tpf_split(int64_t elsize, int n, const void *src, const int64_t *widths, int64_t outer, void **dsts) {
    if (!okelsize(elsize)) return TPF_EBADARG;
    if (n < 0 || outer < 0) return TPF_EBADSIZE;
    int64_t total = 0;
    for (int i = 0; i < n; i++) { if (widths[i] < 0) return TPF_EBADSIZE; total += widths[i]; }
    if (total == 0 || outer == 0) return TPF_OK;
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!off) return TPF_ENOMEM;
    off[0] = 0;
    for (int i = 0; i < n; i++) off[i + 1] = off[i] + widths[i];
    int nt = join_threads(outer * total, elsize);
    PFOR(task, outer * n,
        int64_t r = task / n; int i = (int)(task % n);
        int64_t w = widths[i];
        if (!w) continue;
        char *d = (char *)dsts[i] + r * w * elsize;
        const char *s = (const char *)src + (r * total + off[i]) * elsize;
        switch (w == 1 ? elsize : 0) {
        case 1: *(uint8_t *)d = *(const uint8_t *)s; break;
        case 2: memcpy(d, s, 2); break;
        case 4: memcpy(d, s, 4); break;
        case 8: memcpy(d, s, 8); break;
        default: memcpy(d, s, (size_t)(w * elsize)); break;
        }
    );
    free(off);
    return TPF_OK;
}

/* ---- pad ----------------------------------------------------------------------
 * mode 0: constant (*value), 1: reflect (edge not repeated), 2: symmetric (edge repeated).
 * Mirror modes need before/after <= in - 1 (reflect) or <= in (symmetric): checked by the caller. */
static inline int64_t pad_src(int64_t j, int64_t n, int mode) {
    if (j >= 0 && j < n) return j;
    if (mode == 0) return -1;
    if (j < 0) return mode == 1 ? -j : -j - 1;
    return mode == 1 ? 2 * n - 2 - j : 2 * n - 1 - j;
}

int tpf_pad(int64_t elsize, int mode, int ndim, const int64_t *in_shape, const int64_t *before,
            const int64_t *out_shape, const void *src, void *dst, const void *value) {
    if (!okelsize(elsize)) return TPF_EBADARG;
    if (mode < 0 || mode > 2) return TPF_EBADOP;
    if (ndim < 0 || ndim > TPF_MAXDIMS) return TPF_EBADSIZE;
    const char *S = (const char *)src;
    char *D = (char *)dst;
    if (ndim == 0) { memcpy(D, S, (size_t)elsize); return TPF_OK; }
    int64_t total = 1, in_strides[TPF_MAXDIMS], acc = 1;
    for (int d = 0; d < ndim; d++) {
        if (out_shape[d] < 0 || in_shape[d] < 0) return TPF_EBADSIZE;
        total *= out_shape[d];
    }
    for (int d = ndim - 1; d >= 0; d--) { in_strides[d] = acc; acc *= in_shape[d]; }
    if (total == 0) return TPF_OK;
    int64_t n = out_shape[ndim - 1], nin = in_shape[ndim - 1], b = before[ndim - 1];
    int64_t rows = total / n;
    int nt = TPF_NTHREADS(total);
    PFOR(r, rows,
        int64_t rem = r, so = 0;
        int inside = 1;
        for (int d = ndim - 2; d >= 0; d--) {
            int64_t i = rem % out_shape[d]; rem /= out_shape[d];
            int64_t s = pad_src(i - before[d], in_shape[d], mode);
            if (s < 0) { inside = 0; break; }
            so += s * in_strides[d];
        }
        char *o = D + r * n * elsize;
        if (!inside || (mode == 0 && nin == 0)) {
            for (int64_t i = 0; i < n; i++) memcpy(o + i * elsize, value, (size_t)elsize);
            continue;
        }
        const char *srow = S + so * elsize;
        int64_t lo = b < 0 ? 0 : (b > n ? n : b), hi = b + nin > n ? n : b + nin;  /* interior [lo, hi) */
        if (hi > lo) memcpy(o + lo * elsize, srow + (lo - b) * elsize, (size_t)((hi - lo) * elsize));
        for (int64_t i = 0; i < lo; i++) {
            int64_t s = pad_src(i - b, nin, mode);
            memcpy(o + i * elsize, s < 0 ? (const char *)value : srow + s * elsize, (size_t)elsize);
        }
        for (int64_t i = hi > lo ? hi : lo; i < n; i++) {
            int64_t s = pad_src(i - b, nin, mode);
            memcpy(o + i * elsize, s < 0 ? (const char *)value : srow + s * elsize, (size_t)elsize);
        }
    );
    return TPF_OK;
}

/* ---- sequences ---------------------------------------------------------------- */
#define IOTA_INT(T) { T *O = (T *)out; for (int64_t i = 0; i < n; i++) O[i] = (T)(istart + i * idelta); } break
#define IOTA_FLT(T) { T *O = (T *)out; for (int64_t i = 0; i < n; i++) O[i] = (T)(start + (double)i * delta); } break

/* out[i] = start + i * delta; integer dtypes use (istart, idelta) exactly, floats (start, delta). */
int tpf_iota(int dt, double start, double delta, int64_t istart, int64_t idelta, void *out, int64_t n) {
    if (n < 0) return TPF_EBADSIZE;
    switch (dt) {
    case TPF_F16: { uint16_t *O = (uint16_t *)out; for (int64_t i = 0; i < n; i++) O[i] = tpf_float_to_half((float)(start + (double)i * delta)); } break;
    case TPF_BF16: { uint16_t *O = (uint16_t *)out; for (int64_t i = 0; i < n; i++) O[i] = tpf_float_to_bf16((float)(start + (double)i * delta)); } break;
    case TPF_F32: IOTA_FLT(float);
    case TPF_F64: IOTA_FLT(double);
    case TPF_I8: IOTA_INT(int8_t);
    case TPF_U8: IOTA_INT(uint8_t);
    case TPF_I16: IOTA_INT(int16_t);
    case TPF_I32: IOTA_INT(int32_t);
    case TPF_I64: IOTA_INT(int64_t);
    default: return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* n evenly spaced values from start to stop inclusive (the last is exactly stop). */
int tpf_linspace(int dt, double start, double stop, void *out, int64_t n) {
    if (n < 0) return TPF_EBADSIZE;
    double step = n > 1 ? (stop - start) / (double)(n - 1) : 0.0;
    for (int64_t i = 0; i < n; i++) {
        double v = (i == n - 1 && n > 1) ? stop : start + (double)i * step;
        switch (dt) {
        case TPF_F16: ((uint16_t *)out)[i] = tpf_float_to_half((float)v); break;
        case TPF_BF16: ((uint16_t *)out)[i] = tpf_float_to_bf16((float)v); break;
        case TPF_F32: ((float *)out)[i] = (float)v; break;
        case TPF_F64: ((double *)out)[i] = v; break;
        default: return TPF_EBADDTYPE;
        }
    }
    return TPF_OK;
}
