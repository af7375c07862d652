/* Image kernels: resizing (forward and its transpose, the gradient) and the RGB <-> HSV conversions,
 * with TensorFlow 2's numbers.
 *
 * Resizing is separable: out[b, y, x, c] = sum_i sum_j Wy[y, i] Wx[x, j] in[b, i, j, c], where each
 * axis's weights (K taps per output index: an input index and a weight) follow the TensorFlow kernel
 * that tf.image.resize runs for the method:
 *   0 bilinear  ResizeBilinear(half_pixel_centers):  in = (o + 0.5) * s - 0.5, two clamped taps
 *   1 nearest   ResizeNearestNeighbor(half_pixel_centers): in = floor((o + 0.5) * s), clamped
 *   2 bicubic   ResizeBicubic(half_pixel_centers): Keys' cubic (a = -0.5) from its 1024-entry table,
 *               taps outside the image get weight 0 and the rest are renormalised
 *   3 area      ResizeArea: each output cell averages the input cells it overlaps, by overlap
 *   4 lanczos3, 5 lanczos5, 6 gaussian, 7 mitchellcubic, 8 triangle, 9 keyscubic: ScaleAndTranslate
 *               (bilinear and bicubic with antialias run 8 and 9); with antialias a downscale widens
 *               the kernel by 1 / scale
 * where s = in / out (as float32, like TensorFlow's scale arithmetic, so indices agree exactly).
 * Two passes: along x into a [b, ih, ow, c] buffer, then along y.  Float kernels compute in double
 * and store float32/float64; nearest copies elements of any dtype (by size).  The gradient applies
 * the transposed passes (a scatter-add), so it is exact for every method. */
#include "tpf.h"
#include <float.h>
#include <stdlib.h>

enum { RZ_BILINEAR, RZ_NEAREST, RZ_BICUBIC, RZ_AREA, RZ_LANCZOS3, RZ_LANCZOS5, RZ_GAUSSIAN, RZ_MITCHELL,
       RZ_TRIANGLE, RZ_KEYSCUBIC, RZ_NMETHODS };

typedef struct { int64_t K; int64_t *idx; float *w; } rz_axis;

static float rz_kernel(int m, float x) {
    x = fabsf(x);
    switch (m) {
    case RZ_LANCZOS3: case RZ_LANCZOS5: {
        float r = m == RZ_LANCZOS3 ? 3.0f : 5.0f;
        const float pi = 3.14159265358979323846f;
        if (x > r) return 0.0f;
        if (x <= 1e-3f) return 1.0f;
        return r * sinf(pi * x) * sinf(pi * x / r) / (pi * pi * x * x);
    }
    case RZ_GAUSSIAN: {
        const float sigma = 0.5f, radius = 1.5f;
        return x >= radius ? 0.0f : expf(-x * x / (2.0f * sigma * sigma));
    }
    case RZ_MITCHELL:
        if (x >= 2.0f) return 0.0f;
        if (x >= 1.0f) return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
        return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
    case RZ_TRIANGLE: return x < 1.0f ? 1.0f - x : 0.0f;
    default: /* keys cubic */
        if (x >= 2.0f) return 0.0f;
        if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
        return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    }
}

static float rz_radius(int m) {
    return m == RZ_LANCZOS3 ? 3.0f : m == RZ_LANCZOS5 ? 5.0f : m == RZ_GAUSSIAN ? 1.5f : m == RZ_TRIANGLE ? 1.0f
         : 2.0f;
}

static inline int64_t rz_bound(int64_t v, int64_t n) { return v < 0 ? 0 : (v > n - 1 ? n - 1 : v); }

/* The weights of one axis (in -> out); returns 0 or TPF_ENOMEM. */
static int rz_weights(int m, int antialias, int64_t in, int64_t out, rz_axis *a) {
    float s = (float)in / (float)out;
    int64_t K;
    if (m == RZ_BILINEAR && antialias) m = RZ_TRIANGLE;
    if (m == RZ_BICUBIC && antialias) m = RZ_KEYSCUBIC;
    float kscale = 1.0f, scale = (float)out / (float)in;
    if (m == RZ_NEAREST) K = 1;
    else if (m == RZ_BILINEAR) K = 2;
    else if (m == RZ_BICUBIC) K = 4;
    else if (m == RZ_AREA) K = (int64_t)ceilf(s) + 2;
    else {
        if (antialias && scale < 1.0f) kscale = 1.0f / scale;
        K = 2 * (int64_t)ceilf(rz_radius(m) * kscale) + 1;
        if (K > in) K = in;
    }
    a->K = K;
    a->idx = calloc((size_t)(out * K + 1), sizeof(int64_t));
    a->w = calloc((size_t)(out * K + 1), sizeof(float));
    if (!a->idx || !a->w) return TPF_ENOMEM;
    for (int64_t o = 0; o < out; o++) {
        int64_t *ix = a->idx + o * K;
        float *w = a->w + o * K;
        if (m == RZ_NEAREST) {
            int64_t v = (int64_t)floorf(((float)o + 0.5f) * s);
            ix[0] = rz_bound(v, in); w[0] = 1.0f;
        } else if (m == RZ_BILINEAR) {
            float f = ((float)o + 0.5f) * s - 0.5f, fl = floorf(f);
            ix[0] = fl < 0 ? 0 : (int64_t)fl;
            ix[1] = (int64_t)ceilf(f) < in - 1 ? (int64_t)ceilf(f) : in - 1;
            w[1] = f - fl; w[0] = 1.0f - w[1];
        } else if (m == RZ_BICUBIC) {
            /* TensorFlow's table: entry i holds the weights at distance i / 1024 and 1 + i / 1024 */
            const float A = -0.5f;
            float f = ((float)o + 0.5f) * s - 0.5f, fl = floorf(f);
            int64_t off = lrintf((f - fl) * 1024.0f), base = (int64_t)fl;
            float x0 = (float)(off * 1.0 / 1024), x1 = (float)((1024 - off) * 1.0 / 1024);
            float t0 = ((A + 2) * x0 - (A + 3)) * x0 * x0 + 1, t1 = ((A * (x0 + 1) - 5 * A) * (x0 + 1) + 8 * A) * (x0 + 1) - 4 * A;
            float u0 = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1, u1 = ((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A;
            float ws[4] = {t1, t0, u0, u1}, total = 0.0f;
            for (int k = 0; k < 4; k++) {
                ix[k] = rz_bound(base - 1 + k, in);
                w[k] = ix[k] == base - 1 + k ? ws[k] : 0.0f;
                total += w[k];
            }
            if (fabsf(total) >= 1000.0f * FLT_MIN)
                for (int k = 0; k < 4; k++) w[k] *= 1.0f / total;
        } else if (m == RZ_AREA) {
            float i0 = (float)o * s, i1 = (float)(o + 1) * s;
            int64_t st = (int64_t)floorf(i0), en = (int64_t)ceilf(i1);
            for (int64_t i = st, k = 0; i < en && k < K; i++, k++) {
                float sc = (float)i < i0 ? ((float)(i + 1) > i1 ? s : (float)(i + 1) - i0)
                                         : ((float)(i + 1) > i1 ? i1 - (float)i : 1.0f);
                ix[k] = rz_bound(i, in); w[k] = sc / s;
            }
        } else {
            float radius = rz_radius(m) * kscale, inv = 1.0f / scale, sample = ((float)o + 0.5f) * inv;
            if (sample < 0 || sample > (float)in) continue;
            int64_t st = (int64_t)ceilf(sample - radius - 0.5f), en = (int64_t)floorf(sample + radius - 0.5f);
            st = rz_bound(st, in); en = rz_bound(en, in) + 1;
            float total = 0.0f;
            for (int64_t i = st, k = 0; i < en && k < K; i++, k++) {
                ix[k] = i; w[k] = rz_kernel(m, ((float)i + 0.5f - sample) * (1.0f / kscale)); total += w[k];
            }
            if (fabsf(total) >= 1000.0f * FLT_MIN)
                for (int64_t k = 0; k < K; k++) w[k] *= 1.0f / total;
        }
    }
    return TPF_OK;
}

static void rz_free(rz_axis *a) { free(a->idx); free(a->w); }

/* One pass along an axis: dst[o, r, inner] = sum_k w[o, k] src[idx[o, k], r, inner] for each of `outer`
 * blocks; src has n_in rows of `inner` elements per block, dst n_out.  `transpose` scatters instead:
 * dst[idx[o, k]] += w[o, k] src[o] (dst is zeroed first). */
#define RZ_PASS(T)                                                                                        \
    static void rz_pass_##T(const rz_axis *a, const T *src, T *dst, int64_t outer, int64_t n_in,          \
                            int64_t n_out, int64_t inner, int transpose) {                                \
        int nt = TPF_NTHREADS(outer * n_out * inner * a->K);                                              \
        if (!transpose) {                                                                                 \
            TPF_PFOR(r, outer * n_out,                                                                    \
                tpf_fp_enter();                                                                           \
                int64_t b = r / n_out, o = r % n_out;                                                     \
                T *d = dst + r * inner;                                                                   \
                for (int64_t c = 0; c < inner; c++) {                                                     \
                    double acc = 0.0;                                                             \
                    for (int64_t k = 0; k < a->K; k++)                                            \
                        acc += (double)a->w[o * a->K + k] * (double)src[(b * n_in + a->idx[o * a->K + k]) * inner + c]; \
                    d[c] = (T)acc;                                                                \
                }                                                                                         \
            );                                                                                            \
        } else {                                                                                          \
            memset(dst, 0, (size_t)(outer * n_in * inner) * sizeof(T));                                   \
            TPF_PFOR(b, outer,                                                                            \
                tpf_fp_enter();                                                                           \
                for (int64_t o = 0; o < n_out; o++)                                                       \
                    for (int64_t k = 0; k < a->K; k++) {                                                  \
                        T w = (T)a->w[o * a->K + k];                                                      \
                        if (w == 0) continue;                                                             \
                        T *d = dst + (b * n_in + a->idx[o * a->K + k]) * inner;                           \
                        const T *s = src + (b * n_out + o) * inner;                                       \
                        for (int64_t c = 0; c < inner; c++) d[c] += w * s[c];                             \
                    }                                                                                     \
            );                                                                                            \
        }                                                                                                 \
    }
RZ_PASS(float)
RZ_PASS(double)

static int rz_check(int method, int64_t b, int64_t ih, int64_t iw, int64_t c, int64_t oh, int64_t ow) {
    if (method < 0 || method >= RZ_NMETHODS) return TPF_EBADOP;
    if (b < 0 || ih <= 0 || iw <= 0 || c < 0 || oh <= 0 || ow <= 0) return TPF_EBADSIZE;
    return TPF_OK;
}

int tpf_resize(int method, int antialias, int dt, const void *in, void *out, int64_t b, int64_t ih, int64_t iw,
               int64_t c, int64_t oh, int64_t ow) {
    int st = rz_check(method, b, ih, iw, c, oh, ow);
    if (st) return st;
    rz_axis ay = {0}, ax = {0};
    if ((st = rz_weights(method, antialias, ih, oh, &ay)) || (st = rz_weights(method, antialias, iw, ow, &ax))) {
        rz_free(&ay); rz_free(&ax);
        return st;
    }
    if (method == RZ_NEAREST) {  /* a copy of whole pixels: any dtype */
        size_t es = tpf_dtype_size(dt), px = (size_t)c * es;
        if (!es) { rz_free(&ay); rz_free(&ax); return TPF_EBADDTYPE; }
        int nt = TPF_NTHREADS(b * oh * ow * c);
        TPF_PFOR(r, b * oh,
            int64_t bi = r / oh, y = r % oh;
            const char *srow = (const char *)in + (size_t)(bi * ih + ay.idx[y]) * (size_t)iw * px;
            char *drow = (char *)out + (size_t)r * (size_t)ow * px;
            for (int64_t x = 0; x < ow; x++) memcpy(drow + (size_t)x * px, srow + (size_t)ax.idx[x] * px, px);
        );
    } else if (dt == TPF_F32 || dt == TPF_F64) {
        size_t es = tpf_dtype_size(dt);
        void *tmp = malloc((size_t)(b * ih * ow * c) * es + 1);
        if (!tmp) { rz_free(&ay); rz_free(&ax); return TPF_ENOMEM; }
        if (dt == TPF_F32) {
            rz_pass_float(&ax, in, tmp, b * ih, iw, ow, c, 0);
            rz_pass_float(&ay, tmp, out, b, ih, oh, ow * c, 0);
        } else {
            rz_pass_double(&ax, in, tmp, b * ih, iw, ow, c, 0);
            rz_pass_double(&ay, tmp, out, b, ih, oh, ow * c, 0);
        }
        free(tmp);
    } else {
        st = TPF_EBADDTYPE;
    }
    rz_free(&ay); rz_free(&ax);
    return st;
}

int tpf_resize_grad(int method, int antialias, int dt, const void *g, void *gin, int64_t b, int64_t ih, int64_t iw,
                    int64_t c, int64_t oh, int64_t ow) {
    int st = rz_check(method, b, ih, iw, c, oh, ow);
    if (st) return st;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    rz_axis ay = {0}, ax = {0};
    if ((st = rz_weights(method, antialias, ih, oh, &ay)) || (st = rz_weights(method, antialias, iw, ow, &ax))) {
        rz_free(&ay); rz_free(&ax);
        return st;
    }
    size_t es = tpf_dtype_size(dt);
    void *tmp = malloc((size_t)(b * ih * ow * c) * es + 1);
    if (!tmp) { rz_free(&ay); rz_free(&ax); return TPF_ENOMEM; }
    if (dt == TPF_F32) {
        rz_pass_float(&ay, g, tmp, b, ih, oh, ow * c, 1);
        rz_pass_float(&ax, tmp, gin, b * ih, iw, ow, c, 1);
    } else {
        rz_pass_double(&ay, g, tmp, b, ih, oh, ow * c, 1);
        rz_pass_double(&ax, tmp, gin, b * ih, iw, ow, c, 1);
    }
    free(tmp);
    rz_free(&ay); rz_free(&ax);
    return TPF_OK;
}

/* ---- colour: TensorFlow's RGBToHSV / HSVToRGB (hue in [0, 1)) and their vector-Jacobian products ---- */

/* rgb -> hsv of one pixel; when d != NULL also d[3][3] = d(h, s, v) / d(r, g, b) (row per output) */
static void hsv_of(double r, double g, double b, double *out, double d[3][3]) {
    const double c[3] = {r, g, b};
    double v = r, mn = r;
    int imax = 0, imin = 0;
    if (g > v) v = g;
    if (b > v) v = b;
    if (g < mn) { mn = g; imin = 1; }
    if (b < mn) { mn = b; imin = 2; }
    imax = r == v ? 0 : (g == v ? 1 : 2);   /* TensorFlow's order of the hue cases */
    double range = v - mn, s = v > 0 ? range / v : 0.0, h = 0.0;
    int p = (imax + 1) % 3, q = (imax + 2) % 3;   /* hue = (c[p] - c[q]) / (6 range) + imax / 3 */
    if (range > 0) {
        h = (c[p] - c[q]) / (6.0 * range) + imax / 3.0;
        if (h < 0) h += 1.0;
    }
    out[0] = h; out[1] = s; out[2] = v;
    if (!d) return;
    memset(d, 0, 9 * sizeof(double));
    d[2][imax] = 1.0;
    if (v > 0) { d[1][imax] += mn / (v * v); d[1][imin] -= 1.0 / v; }
    if (range > 0) {
        double n = 1.0 / (6.0 * range), t = (c[p] - c[q]) * n / range;
        d[0][p] += n; d[0][q] -= n; d[0][imax] -= t; d[0][imin] += t;
    }
}

static void rgb_of(double h, double s, double v, double *out, double d[3][3]) {
    double ch = s * v, m = v - ch, dh = h * 6.0;
    int cat = (int)dh;
    double f = fmod(dh, 2.0);
    if (f < 0) f += 2.0;   /* TensorFlow's fmodu: the remainder in [0, 2) */
    double x = ch * (1.0 - fabs(f - 1.0)), sx = f - 1.0 > 0 ? -1.0 : (f - 1.0 < 0 ? 1.0 : 0.0);
    static const int pos[6][2] = {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 2}};  /* (where c, where x) */
    out[0] = out[1] = out[2] = 0.0;
    if (d) memset(d, 0, 9 * sizeof(double));
    if (cat >= 0 && cat < 6) {
        out[pos[cat][0]] = ch; out[pos[cat][1]] = x;
        if (d) {
            int ic = pos[cat][0], ixx = pos[cat][1];
            double dxdc = 1.0 - fabs(f - 1.0);
            /* row per rgb output, columns d/dh, d/ds, d/dv */
            d[ic][1] += v; d[ic][2] += s;
            d[ixx][0] += ch * sx * 6.0; d[ixx][1] += dxdc * v; d[ixx][2] += dxdc * s;
        }
    }
    for (int k = 0; k < 3; k++) {
        out[k] += m;
        if (d) { d[k][1] -= v; d[k][2] += 1.0 - s; }
    }
}

/* pixels in chunks of 4096, so the FP-mode guard is entered once per chunk, not per pixel */
#define COLOUR_LOOP(T, ...)                                                                               \
    do {                                                                                                  \
        int nt = TPF_NTHREADS(n * 16);                                                                    \
        int64_t nch = (n + 4095) / 4096;                                                                  \
        TPF_PFOR(ch, nch,                                                                                 \
            tpf_fp_enter();                                                                               \
            int64_t i1 = (ch + 1) * 4096 < n ? (ch + 1) * 4096 : n;                                       \
            for (int64_t i = ch * 4096; i < i1; i++) { __VA_ARGS__ });                                    \
    } while (0)

int tpf_rgb_to_hsv(int dt, const void *in, void *out, int64_t n) {
    if (n < 0) return TPF_EBADSIZE;
    if (dt == TPF_F32) {
        COLOUR_LOOP(float, const float *p = (const float *)in + 3 * i; float *o = (float *)out + 3 * i;
                    double r[3]; hsv_of(p[0], p[1], p[2], r, NULL);
                    o[0] = (float)r[0]; o[1] = (float)r[1]; o[2] = (float)r[2];);
    } else if (dt == TPF_F64) {
        COLOUR_LOOP(double, const double *p = (const double *)in + 3 * i; hsv_of(p[0], p[1], p[2], (double *)out + 3 * i, NULL););
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

int tpf_hsv_to_rgb(int dt, const void *in, void *out, int64_t n) {
    if (n < 0) return TPF_EBADSIZE;
    if (dt == TPF_F32) {
        COLOUR_LOOP(float, const float *p = (const float *)in + 3 * i; float *o = (float *)out + 3 * i;
                    double r[3]; rgb_of(p[0], p[1], p[2], r, NULL);
                    o[0] = (float)r[0]; o[1] = (float)r[1]; o[2] = (float)r[2];);
    } else if (dt == TPF_F64) {
        COLOUR_LOOP(double, const double *p = (const double *)in + 3 * i; rgb_of(p[0], p[1], p[2], (double *)out + 3 * i, NULL););
    } else {
        return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* gx[i, :] = g[i, :] @ J(x[i, :]) for the conversion `inverse` (0: rgb_to_hsv, 1: hsv_to_rgb) */
int tpf_colour_grad(int inverse, int dt, const void *x, const void *g, void *gx, int64_t n) {
    if (n < 0) return TPF_EBADSIZE;
    if (inverse != 0 && inverse != 1) return TPF_EBADOP;
#define VJP(T)                                                                                            \
    COLOUR_LOOP(T, const T *p = (const T *)x + 3 * i; const T *gi = (const T *)g + 3 * i;                 \
                T *o = (T *)gx + 3 * i; double r[3], J[3][3];                                             \
                if (inverse) rgb_of(p[0], p[1], p[2], r, J); else hsv_of(p[0], p[1], p[2], r, J);         \
                for (int k = 0; k < 3; k++)                                                               \
                    o[k] = (T)(gi[0] * J[0][k] + gi[1] * J[1][k] + gi[2] * J[2][k]););
    if (dt == TPF_F32) { VJP(float); }
    else if (dt == TPF_F64) { VJP(double); }
    else { return TPF_EBADDTYPE; }
#undef VJP
    return TPF_OK;
}
