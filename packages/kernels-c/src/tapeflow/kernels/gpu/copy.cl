/* Data movement by element size (csrc/copy.c on the device).  Suffixes 1, 2, 4, 8
 * name the element size; the types are unsigned integers of that size, so every
 * dtype moves bit for bit.
 *
 * strided_copy_<e>: dst[dst_off + sum k_d dstr_d] = src[src_off + sum k_d sstr_d]
 *                   over the index space `shape` (strides may be 0 or negative);
 * fill_<e>:         dst[i] = value (its low e bytes);
 * rows_copy_<e>:    dst[r * dw + doff + c] = src[r * sw + soff + c] for c < w: one piece
 *                   of a concat or a split.
 */

#define COPY_KERNELS(E, T)                                                                      \
KERNEL strided_copy_##E(const G T *S, i64 src_off, G T *D, i64 dst_off, int nd, dims_t shape,   \
                        dims_t sstr, dims_t dstr, i64 total) {                                  \
    i64 i = GID0();                                                                             \
    if (i >= total) return;                                                                     \
    i64 so = src_off, dof = dst_off;                                                            \
    for (int d = nd - 1; d >= 0; d--) {                                                         \
        i64 n = shape.d[d], k = i % n;                                                          \
        i /= n;                                                                                 \
        so += k * sstr.d[d];                                                                    \
        dof += k * dstr.d[d];                                                                   \
    }                                                                                           \
    D[dof] = S[so];                                                                             \
}                                                                                               \
KERNEL fill_##E(G T *D, i64 n, u64 value) {                                                     \
    i64 i = GID0();                                                                             \
    if (i < n) D[i] = (T)value;                                                                 \
}                                                                                               \
KERNEL rows_copy_##E(const G T *S, i64 sw, i64 soff, G T *D, i64 dw, i64 doff, i64 w, i64 rows) { \
    i64 i = GID0();                                                                             \
    if (i >= rows * w) return;                                                                  \
    i64 r = i / w, c = i - r * w;                                                               \
    D[r * dw + doff + c] = S[r * sw + soff + c];                                                \
}
COPY_KERNELS(1, u8)
COPY_KERNELS(2, u16)
COPY_KERNELS(4, u32)
COPY_KERNELS(8, u64)
