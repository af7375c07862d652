/* Padding and sequences (csrc/join.c on the device).  concat and split are
 * rows_copy launches of the copy family, one per piece.
 *
 * pad_<e>: mode 0 constant (value), 1 reflect (edge not repeated), 2 symmetric (edge
 * repeated); one work-item per output element.
 * iota_<dt>: out[i] = start + i * delta (integers exactly, in wrapping 64-bit
 * arithmetic; floats in double, rounded once).  linspace_<dt>: n values from start to
 * stop, the last exactly stop.
 */

DEV i64 pad_src(i64 j, i64 n, int mode) {
    if (j >= 0 && j < n) return j;
    if (mode == 0) return -1;
    if (j < 0) return mode == 1 ? -j : -j - 1;
    return mode == 1 ? 2 * n - 2 - j : 2 * n - 1 - j;
}

#define PAD(E, T)                                                                                   \
KERNEL pad_##E(const G T *S, G T *D, int nd, dims_t in_shape, dims_t before, dims_t out_shape,     \
               int mode, u64 value, i64 total) {                                                    \
    i64 i = GID0();                                                                                 \
    if (i >= total) return;                                                                         \
    i64 rem = i, so = 0, stride = 1;                                                                \
    for (int d = nd - 1; d >= 0; d--) {                                                             \
        i64 k = rem % out_shape.d[d];                                                               \
        rem /= out_shape.d[d];                                                                      \
        i64 s = pad_src(k - before.d[d], in_shape.d[d], mode);                                      \
        if (s < 0) { D[i] = (T)value; return; }                                                     \
        so += s * stride;                                                                           \
        stride *= in_shape.d[d];                                                                    \
    }                                                                                               \
    D[i] = S[so];                                                                                   \
}
PAD(1, u8)
PAD(2, u16)
PAD(4, u32)
PAD(8, u64)

#define IOTA_INT(DS, T)                                                                             \
KERNEL iota_##DS(G T *O, i64 n, wf start, wf delta, i64 istart, i64 idelta) {                       \
    i64 i = GID0();                                                                                 \
    if (i < n) O[i] = (T)((u64)istart + (u64)i * (u64)idelta);                                      \
}
#define IOTA_FLT(DS, T, CONV)                                                                       \
KERNEL iota_##DS(G T *O, i64 n, wf start, wf delta, i64 istart, i64 idelta) {                       \
    i64 i = GID0();                                                                                 \
    if (i < n) O[i] = CONV(start + (wf)i * delta);                                                  \
}                                                                                                   \
KERNEL linspace_##DS(G T *O, i64 n, wf start, wf stop, wf step) {                                   \
    i64 i = GID0();                                                                                 \
    if (i >= n) return;                                                                             \
    wf v = (i == n - 1 && n > 1) ? stop : start + (wf)i * step;                                     \
    O[i] = CONV(v);                                                                                 \
}
#define TO_F16(v) tpf_float_to_half((float)(v))
#define TO_BF16(v) tpf_float_to_bf16((float)(v))
#define TO_F32(v) ((float)(v))
#define TO_F64(v) ((double)(v))
IOTA_FLT(f16, u16, TO_F16)
IOTA_FLT(bf16, u16, TO_BF16)
IOTA_FLT(f32, float, TO_F32)
#ifdef TPF_FP64
IOTA_FLT(f64, double, TO_F64)
#endif
IOTA_INT(i8, i8)
IOTA_INT(u8, u8)
IOTA_INT(i16, i16)
IOTA_INT(i32, i32)
IOTA_INT(i64, i64)
