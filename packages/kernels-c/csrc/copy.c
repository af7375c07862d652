/* Strided copy: the one kernel behind transpose, slicing with steps, reversal,
 * broadcast_to, tile, concat, split and pad.  Copies `shape` elements of size
 * `elsize` from src (offset, strides) to dst (offset, strides); strides are in
 * elements and may be 0 (repeat) or negative (reverse).
 *
 * Size-1 axes are dropped and neighbouring axes that step through both buffers
 * as one are merged first, so a broadcast [32, 1, 1, 16] -> [32, 24, 24, 16] is
 * a [32, 576, 16] copy.  Each thread takes a run of rows (all axes but the
 * last) and walks it with an odometer (no division per row); short contiguous
 * rows are copied with fixed-size moves instead of a memcpy call per row, a
 * repeated element (source stride 0) is a fill. */
#include "tpf.h"

/* copy_rows is compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time (32-byte moves) */

/* nb bytes, contiguous both sides: fixed-size moves (inlined) below 256 bytes */
static inline void copy_bytes(char *o, const char *s, size_t nb) {
    if (nb >= 256) { memcpy(o, s, nb); return; }
    for (; nb >= 32; nb -= 32, o += 32, s += 32) memcpy(o, s, 32);
    if (nb >= 16) { memcpy(o, s, 16); o += 16; s += 16; nb -= 16; }
    if (nb >= 8) { memcpy(o, s, 8); o += 8; s += 8; nb -= 8; }
    if (nb >= 4) { memcpy(o, s, 4); o += 4; s += 4; nb -= 4; }
    if (nb >= 2) { memcpy(o, s, 2); o += 2; s += 2; nb -= 2; }
    if (nb) *o = *s;
}

#define ROW_LOOP(T) {                                                                       \
        T *O = (T *)o; const T *Sp = (const T *)s;                                          \
        if (ss == 0) { T v = *Sp; if (ds == 1) for (int64_t i = 0; i < n; i++) O[i] = v;   \
                       else for (int64_t i = 0; i < n; i++) O[i * ds] = v; }                \
        else for (int64_t i = 0; i < n; i++) O[i * ds] = Sp[i * ss];                        \
    } break

/* one row of n elements */
static inline void copy_row(int64_t elsize, int64_t n, const char *s, int64_t ss, char *o, int64_t ds) {
    if (ss == 1 && ds == 1) { copy_bytes(o, s, (size_t)(n * elsize)); return; }
    switch (elsize) {
    case 1: ROW_LOOP(uint8_t);
    case 2: ROW_LOOP(uint16_t);
    case 4: ROW_LOOP(uint32_t);
    case 8: ROW_LOOP(uint64_t);
    default: for (int64_t i = 0; i < n; i++) memcpy(o + i * ds * 16, s + i * ss * 16, 16); break;   /* complex128 */
    }
}

/* rows [r0, r1) of the (merged) nd axes: a row is the last axis, rows count the others; the
 * second-to-last axis is walked by a pointer step, the ones before it by an odometer */
TPF_CLONES static void copy_rows(int64_t elsize, int nd, const int64_t *sh, const char *src, const int64_t *sst,
                      char *dst, const int64_t *dstr, int64_t r0, int64_t r1) {
    int64_t idx[TPF_MAXDIMS], so = 0, dof = 0, rem = r0;
    int64_t n = sh[nd - 1], ss = sst[nd - 1], ds = dstr[nd - 1];
    for (int d = nd - 2; d >= 0; d--) {
        idx[d] = rem % sh[d]; rem /= sh[d];
        so += idx[d] * sst[d]; dof += idx[d] * dstr[d];
    }
    if (nd == 1) { copy_row(elsize, n, src + so * elsize, ss, dst + dof * elsize, ds); return; }
    int64_t m = sh[nd - 2], sb = sst[nd - 2] * elsize, db = dstr[nd - 2] * elsize;
    size_t nb = (size_t)(n * elsize);
    int contig = ss == 1 && ds == 1;
    for (int64_t r = r0; r < r1;) {
        int64_t k = m - idx[nd - 2];
        if (k > r1 - r) k = r1 - r;
        const char *s = src + so * elsize;
        char *o = dst + dof * elsize;
        if (contig && nb <= 128 && sb == 0) {
            /* one source row repeated down the axis (a broadcast): a private copy of it, which the stores
             * cannot alias, so it stays in registers (a 64-byte row: 30 -> 15 us for [32,24,24,16]) */
            char row[128];
            memcpy(row, s, nb);
            if (nb == 64) {
                for (int64_t j = 0; j < k; j++, o += db) memcpy(o, row, 64);
            } else {
                for (int64_t j = 0; j < k; j++, o += db) {
                    size_t b = 0;
                    for (; b + 32 <= nb; b += 32) memcpy(o + b, row + b, 32);
                    for (; b < nb; b++) o[b] = row[b];
                }
            }
        } else if (contig && nb < 256) {
            for (int64_t j = 0; j < k; j++, s += sb, o += db) {
                size_t b = 0;
                for (; b + 32 <= nb; b += 32) memcpy(o + b, s + b, 32);
                if (b + 16 <= nb) { memcpy(o + b, s + b, 16); b += 16; }
                for (; b < nb; b++) o[b] = s[b];
            }
        } else {
            for (int64_t j = 0; j < k; j++, s += sb, o += db) copy_row(elsize, n, s, ss, o, ds);
        }
        r += k;
        so += k * sst[nd - 2]; dof += k * dstr[nd - 2]; idx[nd - 2] += k;
        if (idx[nd - 2] < m) break;   /* only at r == r1 */
        so -= m * sst[nd - 2]; dof -= m * dstr[nd - 2]; idx[nd - 2] = 0;
        for (int d = nd - 3; d >= 0; d--) {
            so += sst[d]; dof += dstr[d];
            if (++idx[d] < sh[d]) break;
            so -= sst[d] * sh[d]; dof -= dstr[d] * sh[d]; idx[d] = 0;
        }
    }
}

int tpf_strided_copy(int64_t elsize, int ndim, const int64_t *shape,
                     const void *src, int64_t src_off, const int64_t *src_str,
                     void *dst, int64_t dst_off, const int64_t *dst_str) {
    if (ndim < 0 || ndim > TPF_MAXDIMS) return TPF_EBADSIZE;
    if (!(elsize == 1 || elsize == 2 || elsize == 4 || elsize == 8 || elsize == 16)) return TPF_EBADARG;
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) { if (shape[d] < 0) return TPF_EBADSIZE; total *= shape[d]; }
    if (total == 0) return TPF_OK;
    const char *s = (const char *)src + src_off * elsize;
    char *o = (char *)dst + dst_off * elsize;
    /* drop size-1 axes; merge axis d into the previous one when stepping the previous one is
     * stepping d shape[d] times, in both buffers */
    int64_t sh[TPF_MAXDIMS], ss[TPF_MAXDIMS], ds[TPF_MAXDIMS];
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        if (nd > 0 && ss[nd - 1] == src_str[d] * shape[d] && ds[nd - 1] == dst_str[d] * shape[d]) {
            sh[nd - 1] *= shape[d]; ss[nd - 1] = src_str[d]; ds[nd - 1] = dst_str[d];
        } else {
            sh[nd] = shape[d]; ss[nd] = src_str[d]; ds[nd] = dst_str[d]; nd++;
        }
    }
    if (nd == 0) { memcpy(o, s, (size_t)elsize); return TPF_OK; }
    int64_t rows = total / sh[nd - 1];
    int nt = TPF_NTHREADS(total);
    if (nt > rows) nt = (int)rows;
    if (nt <= 1) { copy_rows(elsize, nd, sh, s, ss, o, ds, 0, rows); return TPF_OK; }
    int64_t chunk = (rows + nt - 1) / nt;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        int64_t lo = t * chunk, hi = lo + chunk < rows ? lo + chunk : rows;
        if (lo < hi) copy_rows(elsize, nd, sh, s, ss, o, ds, lo, hi);
    }
    return TPF_OK;
}

/* Fill n elements of size elsize with the bytes of *value. */
int tpf_fill(int64_t elsize, const void *value, void *dst, int64_t n) {
    if (n < 0) return TPF_EBADSIZE;
    switch (elsize) {
    case 1: memset(dst, *(const uint8_t *)value, (size_t)n); break;
    case 2: { uint16_t v; memcpy(&v, value, 2); for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = v; } break;
    case 4: { uint32_t v; memcpy(&v, value, 4); for (int64_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = v; } break;
    case 8: { uint64_t v; memcpy(&v, value, 8); for (int64_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = v; } break;
    case 16: for (int64_t i = 0; i < n; i++) memcpy((char *)dst + i * 16, value, 16); break;   /* complex128 */
    default: return TPF_EBADARG;
    }
    return TPF_OK;
}
