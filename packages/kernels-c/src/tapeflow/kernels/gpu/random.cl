/* Counter-based random numbers: Philox 4x32-10 (csrc/random.c on the device).
 *
 * Block b of stream (key, stream) is philox4x32_10({lo32(b), hi32(b), lo32(stream),
 * hi32(stream)}, {lo32(key), hi32(key)}); every output element is a pure function
 * of (key, stream, its index) through the mapping csrc/random.c documents, evaluated
 * here with the same integer and floating-point operations (no contraction), so the
 * words, the uniforms, the integers, the normals (through the CPU's own log, sin and
 * cos below), the dropout masks and the shuffles are bit for bit the CPU's.  The
 * categorical draws use exp from the math library, as the CPU does: a last-bit
 * difference moves a draw only within 2^-50 of a class boundary.
 */

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

typedef struct { u32 v[4]; } words_t;

DEV words_t philox(u32 c0, u32 c1, u32 c2, u32 c3, u32 k0, u32 k1) {
    for (int r = 0; r < 10; r++) {
        if (r) { k0 += PHILOX_W0; k1 += PHILOX_W1; }
        u32 hi0 = MULHI_U32(PHILOX_M0, c0), lo0 = PHILOX_M0 * c0;
        u32 hi1 = MULHI_U32(PHILOX_M1, c2), lo1 = PHILOX_M1 * c2;
        u32 n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    }
    words_t w;
    w.v[0] = c0; w.v[1] = c1; w.v[2] = c2; w.v[3] = c3;
    return w;
}

DEV words_t block(u64 key, u64 stream, u64 b) {
    return philox((u32)b, (u32)(b >> 32), (u32)stream, (u32)(stream >> 32), (u32)key, (u32)(key >> 32));
}

DEV float u24(u32 w) { return (float)(w >> 8) * 5.9604644775390625e-8f; }   /* 2^-24 */
#ifdef TPF_FP64
DEV double u53(u32 a, u32 b) { return (double)(((u64)a << 21) | (b >> 11)) * 1.1102230246251565e-16; } /* 2^-53 */
#endif

/* ---- raw blocks: block j uses the counter ctr + j (128-bit add) --------------------- */
KERNEL philox_raw(u32 c0, u32 c1, u32 c2, u32 c3, u32 k0, u32 k1, G u32 *out, i64 nblocks) {
    i64 j = GID0();
    if (j >= nblocks) return;
    u32 c[4];
    c[0] = c0; c[1] = c1; c[2] = c2; c[3] = c3;
    u64 add = (u64)j;
    for (int w = 0; w < 4 && add; w++) {
        u64 s = (u64)c[w] + (add & 0xffffffffu);
        c[w] = (u32)s;
        add = (add >> 32) + (s >> 32);
    }
    words_t r = philox(c[0], c[1], c[2], c[3], k0, k1);
    for (int w = 0; w < 4; w++) out[4 * j + w] = r.v[w];
}

/* ---- uniform floats ----------------------------------------------------------------- */
KERNEL random_uniform_f32(G float *o, i64 n, u64 key, u64 stream, wf lo, wf hi) {
    i64 b = GID0();
    if (b * 4 >= n) return;
    float flo = (float)lo, fhi = (float)hi, fw = fhi - flo;
    int unit = flo == 0.0f && fhi == 1.0f;
    words_t w = block(key, stream, (u64)b);
    for (int j = 0; j < 4 && b * 4 + j < n; j++) {
        float u = u24(w.v[j]);
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
        double u = u53(w.v[2 * j], w.v[2 * j + 1]);
        if (!unit) { double v = lo + u * width; u = v < hi ? v : nextafter(hi, lo); }
        o[b * 2 + j] = u;
    }
}
#endif

/* float16 / bfloat16: (w >> 21) * 2^-11 or (w >> 24) * 2^-8, scaled in float32, rounded
 * once; a result that rounds to hi or above becomes the largest value below hi */
DEV float narrow_to_float(int is_half, u16 h) { return is_half ? half_to_float(h) : bf16_to_float(h); }
DEV u16 narrow_below(int is_half, float hi) {
    u16 h = is_half ? float_to_half(hi) : float_to_bf16(hi);
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
        u16 h = HALF ? float_to_half(v) : float_to_bf16(v);                                         \
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
/* log, sin and cos are csrc/random.c's (fdlibm's kernels, only +, -, *, / and sqrt), not the
 * device's math library: with IEEE double arithmetic and no contraction, bit for bit the CPU's */
DEV double rng_log(double x) {
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                 Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                 Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01,
                 ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    u64 bits = AS_U64(x);
    double k = AS_F64((bits >> 52) | 0x4330000000000000UL) - 4503599627370496.0 - 1023.0;
    double m = AS_F64((bits & 0x000fffffffffffffUL) | 0x3ff0000000000000UL);
    int big = m > 1.4142135623730951;
    m = big ? m * 0.5 : m;
    k = big ? k + 1.0 : k;
    double f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
    double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    double R = t2 + t1, hfsq = 0.5 * f * f;
    return k * ln2_hi - ((hfsq - (s * (hfsq + R) + k * ln2_lo)) - f);
}

DEV void rng_sincos_2pi(double u, double *sn, double *cs) {
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10,
                 C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    double q = (4.0 * u + 6755399441055744.0) - 6755399441055744.0;
    double a = (u - 0.25 * q) * 6.283185307179586476925286766559;
    double z = a * a;
    double s = a + a * z * (S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))));
    double hz = 0.5 * z, wc = 1.0 - hz;
    double c = wc + (((1.0 - wc) - hz) + z * z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6))))));
    double qm = q == 4.0 ? 0.0 : q;
    int swap = (qm == 1.0) | (qm == 3.0);
    double s2 = swap ? c : s, c2 = swap ? s : c;
    double h = (qm * 0.5 - 0.25 + 6755399441055744.0) - 6755399441055744.0;
    *sn = (1.0 - 2.0 * h) * s2;
    *cs = (2.0 * (fabs(qm - 1.5) - 0.5) - 1.0) * c2;
}

DEV void box_muller(double u1, double u2, double *z0, double *z1) {
    double r = sqrt(-2.0 * rng_log(u1)), sn, cs;
    rng_sincos_2pi(u2, &sn, &cs);
    *z0 = r * cs;
    *z1 = r * sn;
}

KERNEL random_normal_f32(G float *o, i64 n, u64 key, u64 stream, double mean, double stddev) {
    i64 b = GID0();
    if (b * 4 >= n) return;
    words_t w = block(key, stream, (u64)b);
    double z[4];
    box_muller(((double)w.v[0] + 1.0) * 2.3283064365386963e-10, (double)w.v[1] * 2.3283064365386963e-10, &z[0], &z[1]);
    box_muller(((double)w.v[2] + 1.0) * 2.3283064365386963e-10, (double)w.v[3] * 2.3283064365386963e-10, &z[2], &z[3]);
    for (int j = 0; j < 4 && b * 4 + j < n; j++) o[b * 4 + j] = (float)(mean + stddev * z[j]);
}
KERNEL random_normal_f64(G double *o, i64 n, u64 key, u64 stream, double mean, double stddev) {
    i64 b = GID0();
    if (b * 2 >= n) return;
    words_t w = block(key, stream, (u64)b);
    double z[2];
    box_muller(u53(w.v[0], w.v[1]) + 1.1102230246251565e-16, u53(w.v[2], w.v[3]), &z[0], &z[1]);
    for (int j = 0; j < 2 && b * 2 + j < n; j++) o[b * 2 + j] = mean + stddev * z[j];
}

/* one standard normal within [-2, 2] for element i */
DEV double truncated_draw(u64 key, u64 stream, u64 i) {
    for (u32 t = 0; t < 256; t++) {
        words_t w = philox((u32)i, (u32)(i >> 32) | (t << 24), (u32)stream, (u32)(stream >> 32), (u32)key,
                           (u32)(key >> 32));
        double z0, z1;
        box_muller(u53(w.v[0], w.v[1]) + 1.1102230246251565e-16, u53(w.v[2], w.v[3]), &z0, &z1);
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
    for (int j = 0; j < 4 && b * 4 + j < n; j++) o[b * 4 + j] = (wf)u24(w.v[j]) >= rate ? keep : (T)0; \
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
        double target = u53(w.v[2 * j], w.v[2 * j + 1]) * total;                                    \
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
