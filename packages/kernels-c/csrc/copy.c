/* Strided copy: the one kernel behind transpose, slicing with steps, reversal,
 * broadcast_to, tile, concat, split and pad.  Copies `shape` elements of size
 * `elsize` from src (offset, strides) to dst (offset, strides); strides are in
 * elements and may be 0 (repeat) or negative (reverse). */
#include "tpf.h"

int tpf_strided_copy(int64_t elsize, int ndim, const int64_t *shape,
                     const void *src, int64_t src_off, const int64_t *src_str,
                     void *dst, int64_t dst_off, const int64_t *dst_str) {
    if (ndim < 0 || ndim > TPF_MAXDIMS) return TPF_EBADSIZE;
    if (!(elsize == 1 || elsize == 2 || elsize == 4 || elsize == 8 || elsize == 16)) return TPF_EBADARG;
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) { if (shape[d] < 0) return TPF_EBADSIZE; total *= shape[d]; }
    if (total == 0) return TPF_OK;
    if (ndim == 0) { memcpy((char *)dst + dst_off * elsize, (const char *)src + src_off * elsize, (size_t)elsize); return TPF_OK; }
    int64_t n = shape[ndim - 1], ss = src_str[ndim - 1], ds = dst_str[ndim - 1];
    int64_t rows = total / n;
    int nt = TPF_NTHREADS(total);
    TPF_PFOR(r, rows,
        int64_t so = src_off, dof = dst_off, rem = r;
        for (int d = ndim - 2; d >= 0; d--) {
            int64_t i = rem % shape[d]; rem /= shape[d];
            so += i * src_str[d]; dof += i * dst_str[d];
        }
        const char *s = (const char *)src + so * elsize;
        char *o = (char *)dst + dof * elsize;
        if (ss == 1 && ds == 1) { memcpy(o, s, (size_t)(n * elsize)); continue; }
        switch (elsize) {
        case 1: for (int64_t i = 0; i < n; i++) ((uint8_t *)o)[i * ds] = ((const uint8_t *)s)[i * ss]; break;
        case 2: for (int64_t i = 0; i < n; i++) ((uint16_t *)o)[i * ds] = ((const uint16_t *)s)[i * ss]; break;
        case 4: for (int64_t i = 0; i < n; i++) ((uint32_t *)o)[i * ds] = ((const uint32_t *)s)[i * ss]; break;
        case 16: for (int64_t i = 0; i < n; i++) memcpy(o + i * ds * 16, s + i * ss * 16, 16); break;   /* complex128 */
        default: for (int64_t i = 0; i < n; i++) ((uint64_t *)o)[i * ds] = ((const uint64_t *)s)[i * ss]; break;
        }
    );
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
