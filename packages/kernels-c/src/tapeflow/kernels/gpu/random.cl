/* Counter-based random numbers: Philox 4x32-10 (csrc/random.c on the device).
 *
 * Block b of stream (key, stream) is philox4x32_10({lo32(b), hi32(b), lo32(stream),
 * hi32(stream)}, {lo32(key), hi32(key)}); every output element is a pure function
 * of (key, stream, its index) through the mapping csrc/random.c documents, evaluated
 * here with the same integer and floating-point operations (no contraction), so the
 * words, the uniforms, the integers, the normals (through the CPU's own log, sin and
 * cos in philox.h), the dropout masks and the shuffles are bit for bit the CPU's.  The
 * categorical draws use exp from the math library, as the CPU does: a last-bit
 * difference moves a draw only within 2^-50 of a class boundary.
 */

#include "philox.h"   /* Philox, u24/u53, log/sin/cos and Box-Muller: csrc/random.c's */

typedef struct { u32 v[4]; } words_t;

DEV words_t philox(u32 c0, u32 c1, u32 c2, u32 c3, u32 k0, u32 k1) {
    words_t w;
    w.v[0] = c0; w.v[1] = c1; w.v[2] = c2; w.v[3] = c3;
    tpf_philox_block(w.v, k0, k1);
    return w;
}

DEV words_t block(u64 key, u64 stream, u64 b) {
    return philox((u32)b, (u32)(b >> 32), (u32)stream, (u32)(stream >> 32), (u32)key, (u32)(key >> 32));
}

/* ---- raw blocks: block j uses the counter ctr + j (128-bit add) --------------------- */
KERNEL philox_raw(u32 c0, u32 c1, u32 c2, u32 c3, u32 k0, u32 k1, G u32 *out, i64 nblocks) {
    i64 j = GID0();
    if (j >= nblocks) return;
    u32 c[4];
    c[0] = c0; c[1] = c1; c[2] = c2; c[3] = c3;
    tpf_philox_counter_add(c, (u64)j);
    tpf_philox_block(c, k0, k1);
    for (int w = 0; w < 4; w++) out[4 * j + w] = c[w];
}

/* ---- uniform floats ----------------------------------------------------------------- */
KERNEL random_uniform_f32(G float *o, i64 n, u64 key, u64 stream, wf lo, wf hi) {
    i64 b = GID0();
    if (b * 4 >= n) return;
    float flo = (float)lo, fhi = (float)hi, fw = fhi - flo;
    int unit = flo == 0.0f && fhi == 1.0f;
    words_t w = block(key, stream, (u64)b);
    for (int j = 0; j < 4 && b * 4 + j < n; j++) {
        float u = tpf_u24(w.v[j]);
        if (!unit) { float v = flo + u * fw; u = v < fhi ? v : nextafter(fhi, flo); }
        o[b * 4 + j] = u;
    }
}
#ifdef TPF_FP64
KERNEL random_uniform_f64(G double *o, i64 n, u64 key, u64 stream, double lo, double hi) {
    i64 b = GID0();
    if (b * 2 >= n) return;
    double width = hi - lo;
    int unit = lo == 0.0 && hi == 1.0;
    words_t w = block(key, stream, (u64)b);
    for (int j = 0; j < 2 && b * 2 + j < n; j++) {
        double u = tpf_u53(w.v[2 * j], w.v[2 * j + 1]);
        if (!unit) { double v = lo + u * width; u = v < hi ? v : nextafter(hi, lo); }
        o[b * 2 + j] = u;
    }
}
#endif

/* float16 / bfloat16: (w >> 21) * 2^-11 or (w >> 24) * 2^-8, scaled in float32, rounded
 * once; a result that rounds to hi or above becomes the largest value below hi */
DEV float narrow_to_float(int is_half, u16 h) { return is_half ? tpf_half_to_float(h) : tpf_bf16_to_float(h); }
DEV u16 narrow_below(int is_half, float hi) {
    u16 h = is_half ? tpf_float_to_half(hi) : tpf_float_to_bf16(hi);
    while (narrow_to_float(is_half, h) >= hi) {
        if (h == 0x0000) h = 0x8001;
        else if (h & 0x8000) h = (u16)(h + 1);
        else h = (u16)(h - 1);
    }
    return h;
}
#define NARROW_UNIFORM(DS, HALF, SHIFT, SCALE)                                                      \
KERNEL random_uniform_##DS(G u16 *o, i64 n, u64 key, u64 stream, wf lo, wf hi) {                    \
    i64 b = GID0();                                                                                 \
    if (b * 4 >= n) return;                                                                         \
    float flo = (float)lo, fhi = (float)hi, fw = fhi - flo;                                         \
    u16 below = narrow_below(HALF, fhi);                                                            \
    words_t w = block(key, stream, (u64)b);                                                         \
    for (int j = 0; j < 4 && b * 4 + j < n; j++) {                                                  \
        float v = flo + (float)(w.v[j] >> SHIFT) * SCALE * fw;                                      \
        u16 h = HALF ? tpf_float_to_half(v) : tpf_float_to_bf16(v);                                         \
        o[b * 4 + j] = narrow_to_float(HALF, h) < fhi ? h : below;                                  \
    }                                                                                               \
}
NARROW_UNIFORM(f16, 1, 21, 4.8828125e-4f)
NARROW_UNIFORM(bf16, 0, 24, 3.90625e-3f)

/* ---- uniform integers ------------------------------------------------------------------ */
KERNEL random_uniform_int_i32(G i32 *o, i64 n, u64 key, u64 stream, i64 lo, i64 hi) {
    i64 b = GID0();
    if (b * 4 >= n) return;
    u64 range = (u64)hi - (u64)lo;
    words_t w = block(key, stream, (u64)b);
    for (int j = 0; j < 4 && b * 4 + j < n; j++) o[b * 4 + j] = (i32)(lo + (i64)(((u64)w.v[j] * range) >> 32));
}
KERNEL random_uniform_int_i64(G i64 *o, i64 n, u64 key, u64 stream, i64 lo, i64 hi) {
    i64 b = GID0();
    if (b * 2 >= n) return;
    u64 range = (u64)hi - (u64)lo;
    words_t w = block(key, stream, (u64)b);
    for (int j = 0; j < 2 && b * 2 + j < n; j++) {
        u64 u = ((u64)w.v[2 * j] << 32) | w.v[2 * j + 1];
        o[b * 2 + j] = (i64)((u64)lo + MULHI_U64(u, range));
    }
}

/* ---- normals (Box-Muller in double) ------------------------------------------------------ */
#ifdef TPF_FP64
KERNEL random_normal_f32(G float *o, i64 n, u64 key, u64 stream, double mean, double stddev) {
    i64 b = GID0();
    if (b * 4 >= n) return;
    words_t w = block(key, stream, (u64)b);
    double z[4];
    tpf_box_muller(((double)w.v[0] + 1.0) * 2.3283064365386963e-10, (double)w.v[1] * 2.3283064365386963e-10, &z[0], &z[1]);
    tpf_box_muller(((double)w.v[2] + 1.0) * 2.3283064365386963e-10, (double)w.v[3] * 2.3283064365386963e-10, &z[2], &z[3]);
    for (int j = 0; j < 4 && b * 4 + j < n; j++) o[b * 4 + j] = (float)(mean + stddev * z[j]);
}
KERNEL random_normal_f64(G double *o, i64 n, u64 key, u64 stream, double mean, double stddev) {
    i64 b = GID0();
    if (b * 2 >= n) return;
    words_t w = block(key, stream, (u64)b);
    double z[2];
    tpf_box_muller(tpf_u53(w.v[0], w.v[1]) + 1.1102230246251565e-16, tpf_u53(w.v[2], w.v[3]), &z[0], &z[1]);
    for (int j = 0; j < 2 && b * 2 + j < n; j++) o[b * 2 + j] = mean + stddev * z[j];
}

/* one standard normal within [-2, 2] for element i */
DEV double truncated_draw(u64 key, u64 stream, u64 i) {
    for (u32 t = 0; t < 256; t++) {
        words_t w = philox((u32)i, (u32)(i >> 32) | (t << 24), (u32)stream, (u32)(stream >> 32), (u32)key,
                           (u32)(key >> 32));
        double z0, z1;
        tpf_box_muller(tpf_u53(w.v[0], w.v[1]) + 1.1102230246251565e-16, tpf_u53(w.v[2], w.v[3]), &z0, &z1);
        if (fabs(z0) <= 2.0) return z0;
        if (fabs(z1) <= 2.0) return z1;
    }
    return 0.0;
}
KERNEL random_truncated_normal_f32(G float *o, i64 n, u64 key, u64 stream, double mean, double stddev) {
    i64 i = GID0();
    if (i < n) o[i] = (float)(mean + stddev * truncated_draw(key, stream, (u64)i));
}
KERNEL random_truncated_normal_f64(G double *o, i64 n, u64 key, u64 stream, double mean, double stddev) {
    i64 i = GID0();
    if (i < n) o[i] = mean + stddev * truncated_draw(key, stream, (u64)i);
}
#endif

/* ---- dropout masks: kept (1 / (1 - rate)) when u24 >= rate ---------------------------------- */
#define DROPOUT(DS, T)                                                                              \
KERNEL random_dropout_mask_##DS(G T *o, i64 n, u64 key, u64 stream, wf rate, T keep) {              \
    i64 b = GID0();                                                                                 \
    if (b * 4 >= n) return;                                                                         \
    words_t w = block(key, stream, (u64)b);                                                         \
    for (int j = 0; j < 4 && b * 4 + j < n; j++) o[b * 4 + j] = (wf)tpf_u24(w.v[j]) >= rate ? keep : (T)0; \
}
DROPOUT(f32, float)
#ifdef TPF_FP64
DROPOUT(f64, double)

/* ---- categorical: one work-item per row; cdf is scratch [batch, classes] ---------------------- */
#define CATEGORICAL(DS, T, OS, OT)                                                                  \
KERNEL random_categorical_##DS##_##OS(const G T *logits, i64 batch, i64 classes, i64 num_samples,  \
                                      G OT *out, u64 key, u64 stream, G double *cdf, G int *flag) { \
    i64 r = GID0();                                                                                 \
    if (r >= batch) return;                                                                         \
    const G T *x = logits + r * classes;                                                            \
    G double *c = cdf + r * classes;                                                                \
    double mx = -TPF_INF, total = 0.0;                                                              \
    for (i64 k = 0; k < classes; k++) { double v = (double)x[k]; if (v > mx || v != v) mx = v; }    \
    for (i64 k = 0; k < classes; k++) { total += exp((double)x[k] - mx); c[k] = total; }            \
    if (mx != mx || ISINF(mx)) { ATOMIC_MIN_I32(flag, r); return; }                                 \
    for (i64 s = 0; s < num_samples; s++) {                                                         \
        u64 e = (u64)(r * num_samples + s);                                                         \
        words_t w = block(key, stream, e >> 1);                                                     \
        int j = (int)(e & 1);                                                                       \
        double target = tpf_u53(w.v[2 * j], w.v[2 * j + 1]) * total;                                    \
        i64 lo = 0, hi = classes - 1;                                                               \
        while (lo < hi) { i64 mid = lo + (hi - lo) / 2; if (c[mid] > target) hi = mid; else lo = mid + 1; } \
        out[e] = (OT)lo;                                                                            \
    }                                                                                               \
}
CATEGORICAL(f32, float, i32, i32)
CATEGORICAL(f32, float, i64, i64)
CATEGORICAL(f64, double, i32, i32)
CATEGORICAL(f64, double, i64, i64)
#endif

/* ---- shuffle: the Fisher-Yates permutation (one work-item), then the rows ---------------------- */
KERNEL shuffle_perm(G i64 *perm, i64 n, u64 key, u64 stream) {
    if (GID0() != 0) return;
    for (i64 i = 0; i < n; i++) perm[i] = i;
    for (i64 i = n - 1; i > 0; i--) {
        words_t w = block(key, stream, (u64)i >> 1);
        int j = (int)(i & 1);
        u64 u = ((u64)w.v[2 * j] << 32) | w.v[2 * j + 1];
        i64 k = (i64)MULHI_U64(u, (u64)i + 1);
        i64 t = perm[i]; perm[i] = perm[k]; perm[k] = t;
    }
}
#define SHUFFLE_ROWS(E, T)                                                                          \
KERNEL shuffle_rows_##E(const G T *S, G T *D, const G i64 *perm, i64 n, i64 roww) {                 \
    i64 e = GID0();                                                                                 \
    if (e >= n * roww) return;                                                                      \
    i64 k = e / roww, c = e - k * roww;                                                             \
    D[e] = S[perm[k] * roww + c];                                                                   \
}
SHUFFLE_ROWS(1, u8)
SHUFFLE_ROWS(2, u16)
SHUFFLE_ROWS(4, u32)
SHUFFLE_ROWS(8, u64)
