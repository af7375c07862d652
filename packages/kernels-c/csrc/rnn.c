/* Fused recurrent cell gates: the element-wise part of one LSTM step after its matmuls.
 *
 * tpf_lstm_cell(dt, batch, units, z, c, h_out, c_out): z is [batch, 4 * units] (the pre-activations
 * x @ kernel + h @ recurrent_kernel + bias, gates in Keras's order i, f, g, o), c is [batch, units]:
 *
 *   i = sigmoid(z_i), f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o)
 *   c_out = f * c + i * g,  h_out = o * tanh(c_out)
 *
 * in float32 (scalar_math.h's sigmoid and tanh, those of the element-wise kernels) or float64 (libm's
 * tanh, sigmoid as elementwise.def's).  One pass over the row instead of the four slices, four
 * activations and five products the op-by-op cell runs; the float32 row loops vectorize (AVX-512, AVX2 or
 * baseline clones, picked at load time).  Rows split over threads when there are many.
 */
/* As csrc/elementwise.c: the AVX2 and AVX-512 clones may fuse a*b+c into one FMA (set before the includes, so
 * that scalar_math.h's polynomials are compiled under it). */
#pragma GCC optimize("fp-contract=fast")
#include "tpf.h"
#include <tgmath.h>         /* before scalar_math.h: exp of a float is expf */
#include "scalar_math.h"


static inline double lstm_sigmoid_f64(double x) { return TPF_SIGMOID(x); }

/* One row: two flat loops (the new c, then h), each one vectorizable. */
#define LSTM_ROW(NAME, T, SIG, TANH, CLONES)                                                      \
    CLONES static void NAME(const T *restrict z, const T *restrict c, T *restrict h, T *restrict cn, \
                            int64_t u) {                                                          \
        const T *zi = z, *zf = z + u, *zg = z + 2 * u, *zo = z + 3 * u;                           \
        for (int64_t j = 0; j < u; j++) {                                                         \
            T fc = SIG(zf[j]) * c[j];                                                             \
            T ig = SIG(zi[j]) * TANH(zg[j]);                                                      \
            cn[j] = fc + ig;                                                                      \
        }                                                                                         \
        for (int64_t j = 0; j < u; j++)                                                           \
            h[j] = SIG(zo[j]) * TANH(cn[j]);                                                      \
    }

LSTM_ROW(lstm_row_f32, float, tpf_vsigmoidf, tpf_vtanhf, TPF_CLONES)
LSTM_ROW(lstm_row_f64, double, lstm_sigmoid_f64, tanh, )

int tpf_lstm_cell(int dt, int64_t batch, int64_t units, const void *z, const void *c, void *h_out,
                  void *c_out) {
    if (batch < 0 || units < 0)
        return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64)
        return TPF_EBADDTYPE;
    if (batch == 0 || units == 0)
        return TPF_OK;
    int nt = TPF_NTHREADS(batch * units * 4);
    if (dt == TPF_F32) {
        const float *Z = (const float *)z, *C = (const float *)c;
        float *H = (float *)h_out, *CN = (float *)c_out;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            lstm_row_f32(Z + r * 4 * units, C + r * units, H + r * units, CN + r * units, units);
        }
    } else {
        const double *Z = (const double *)z, *C = (const double *)c;
        double *H = (double *)h_out, *CN = (double *)c_out;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            lstm_row_f64(Z + r * 4 * units, C + r * units, H + r * units, CN + r * units, units);
        }
    }
    return TPF_OK;
}

/* ---- the LSTM step's backward pass ------------------------------------------------------------------------
 * tpf_lstm_cell_grad(dt, batch, units, z, c, c_new, gh, gc, dz, dc): from the step's inputs z, c, its new cell
 * state c_new and the gradients gh, gc of the new h and c, the gradients dz [batch, 4 * units] and dc
 * [batch, units] (the rule autodiff's grads/rnn.py writes op by op, in one pass):
 *
 *   dcn = gc + gh * o * (1 - tanh(c_new)^2)
 *   dz_i = dcn * g * i (1 - i),  dz_f = dcn * c * f (1 - f),  dz_g = dcn * i * (1 - g^2),
 *   dz_o = gh * tanh(c_new) * o (1 - o),  dc = dcn * f
 */
#define LSTM_GRAD_ROW(NAME, T, SIG, TANH, CLONES)                                                   \
    CLONES static void NAME(const T *restrict z, const T *restrict c, const T *restrict cn,          \
                            const T *restrict gh, const T *restrict gc, T *restrict dz, T *restrict dc, \
                            int64_t u) {                                                            \
        const T *zi = z, *zf = z + u, *zg = z + 2 * u, *zo = z + 3 * u;                             \
        T *di = dz, *df = dz + u, *dg = dz + 2 * u, *dO = dz + 3 * u;                               \
        for (int64_t j = 0; j < u; j++) {                                                           \
            T i = SIG(zi[j]), f = SIG(zf[j]), g = TANH(zg[j]), o = SIG(zo[j]), tc = TANH(cn[j]);    \
            T d = gc[j] + gh[j] * o * (1 - tc * tc);                                                \
            dO[j] = gh[j] * tc * (o * (1 - o));                                                     \
            di[j] = d * g * (i * (1 - i));                                                          \
            df[j] = d * c[j] * (f * (1 - f));                                                       \
            dg[j] = d * i * (1 - g * g);                                                            \
            dc[j] = d * f;                                                                          \
        }                                                                                           \
    }

LSTM_GRAD_ROW(lstm_grad_row_f32, float, tpf_vsigmoidf, tpf_vtanhf, TPF_CLONES)
LSTM_GRAD_ROW(lstm_grad_row_f64, double, lstm_sigmoid_f64, tanh, )

int tpf_lstm_cell_grad(int dt, int64_t batch, int64_t units, const void *z, const void *c, const void *c_new,
                       const void *gh, const void *gc, void *dz, void *dc) {
    if (batch < 0 || units < 0)
        return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64)
        return TPF_EBADDTYPE;
    if (batch == 0 || units == 0)
        return TPF_OK;
    int nt = TPF_NTHREADS(batch * units * 8);
    int64_t u = units;
    if (dt == TPF_F32) {
        const float *Z = z, *C = c, *CN = c_new, *GH = gh, *GC = gc;
        float *DZ = dz, *DC = dc;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            lstm_grad_row_f32(Z + r * 4 * u, C + r * u, CN + r * u, GH + r * u, GC + r * u, DZ + r * 4 * u,
                              DC + r * u, u);
        }
    } else {
        const double *Z = z, *C = c, *CN = c_new, *GH = gh, *GC = gc;
        double *DZ = dz, *DC = dc;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            lstm_grad_row_f64(Z + r * 4 * u, C + r * u, CN + r * u, GH + r * u, GC + r * u, DZ + r * 4 * u,
                              DC + r * u, u);
        }
    }
    return TPF_OK;
}

/* ---- the GRU step -------------------------------------------------------------------------------------------
 * tpf_gru_cell(dt, batch, units, reset_after, xw, hu, h, h_out): xw = x @ kernel + input bias and hu, both
 * [batch, 3 * units] in Keras's gate order z, r, h, and the state h [batch, units]:
 *
 *   z = sigmoid(xw_z + hu_z),  n = tanh(xw_h + q),  h_out = z * h + (1 - z) * n
 *
 * with reset_after = 1 (Keras's default; hu = h @ recurrent_kernel + recurrent bias) q = r * hu_h, where
 * r = sigmoid(xw_r + hu_r); with reset_after = 0 the caller has applied r before its matmul
 * (hu_h = (r * h) @ recurrent_kernel[:, 2u:]), q = hu_h, and the r blocks are not read.
 *
 * tpf_gru_cell_grad(..., xw, hu, h, gout, dxw, dhu, dh): the gradients of h_out's, given gout:
 *   dn = gout (1 - z),  dz_pre = gout (h - n) z (1 - z),  da = dn (1 - n^2),
 *   dxw_z = dhu_z = dz_pre,  dxw_h = da,  dhu_h = da * r (reset_after) or da,
 *   dxw_r = dhu_r = da * hu_h * r (1 - r) (reset_after) or 0,  dh = gout * z
 */
#define GRU_ROW(NAME, T, SIG, TANH, CLONES)                                                          \
    CLONES static void NAME(const T *restrict xw, const T *restrict hu, const T *restrict h,          \
                            T *restrict out, int64_t u, int reset_after) {                           \
        if (reset_after) {                                                                           \
            for (int64_t j = 0; j < u; j++) {                                                        \
                T z = SIG(xw[j] + hu[j]), r = SIG(xw[u + j] + hu[u + j]);                            \
                T n = TANH(xw[2 * u + j] + r * hu[2 * u + j]);                                       \
                out[j] = z * h[j] + (1 - z) * n;                                                     \
            }                                                                                        \
        } else {                                                                                     \
            for (int64_t j = 0; j < u; j++) {                                                        \
                T z = SIG(xw[j] + hu[j]);                                                            \
                T n = TANH(xw[2 * u + j] + hu[2 * u + j]);                                           \
                out[j] = z * h[j] + (1 - z) * n;                                                     \
            }                                                                                        \
        }                                                                                            \
    }

/* One loop per variant (a reset_after test inside the loop keeps it from vectorizing). */
#define GRU_GRAD_ROW(NAME, T, SIG, TANH, CLONES)                                                     \
    CLONES static void NAME(const T *restrict xw, const T *restrict hu, const T *restrict h,          \
                            const T *restrict g, T *restrict dxw, T *restrict dhu, T *restrict dh,   \
                            int64_t u, int reset_after) {                                            \
        if (reset_after) {                                                                           \
            for (int64_t j = 0; j < u; j++) {                                                        \
                T z = SIG(xw[j] + hu[j]), r = SIG(xw[u + j] + hu[u + j]);                            \
                T n = TANH(xw[2 * u + j] + r * hu[2 * u + j]);                                       \
                T dzp = g[j] * (h[j] - n) * (z * (1 - z));                                           \
                T da = g[j] * (1 - z) * (1 - n * n);                                                 \
                T drp = da * hu[2 * u + j] * (r * (1 - r));                                          \
                dxw[j] = dzp; dhu[j] = dzp;                                                          \
                dxw[u + j] = drp; dhu[u + j] = drp;                                                  \
                dxw[2 * u + j] = da; dhu[2 * u + j] = da * r;                                        \
                dh[j] = g[j] * z;                                                                    \
            }                                                                                        \
        } else {                                                                                     \
            for (int64_t j = 0; j < u; j++) {                                                        \
                T z = SIG(xw[j] + hu[j]);                                                            \
                T n = TANH(xw[2 * u + j] + hu[2 * u + j]);                                           \
                T dzp = g[j] * (h[j] - n) * (z * (1 - z));                                           \
                T da = g[j] * (1 - z) * (1 - n * n);                                                 \
                dxw[j] = dzp; dhu[j] = dzp;                                                          \
                dxw[u + j] = 0; dhu[u + j] = 0;                                                      \
                dxw[2 * u + j] = da; dhu[2 * u + j] = da;                                            \
                dh[j] = g[j] * z;                                                                    \
            }                                                                                        \
        }                                                                                            \
    }

GRU_ROW(gru_row_f32, float, tpf_vsigmoidf, tpf_vtanhf, TPF_CLONES)
GRU_ROW(gru_row_f64, double, lstm_sigmoid_f64, tanh, )
GRU_GRAD_ROW(gru_grad_row_f32, float, tpf_vsigmoidf, tpf_vtanhf, TPF_CLONES)
GRU_GRAD_ROW(gru_grad_row_f64, double, lstm_sigmoid_f64, tanh, )

int tpf_gru_cell(int dt, int64_t batch, int64_t units, int reset_after, const void *xw, const void *hu,
                 const void *h, void *h_out) {
    if (batch < 0 || units < 0)
        return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64)
        return TPF_EBADDTYPE;
    if (reset_after != 0 && reset_after != 1)
        return TPF_EBADARG;
    if (batch == 0 || units == 0)
        return TPF_OK;
    int nt = TPF_NTHREADS(batch * units * 4);
    int64_t u = units;
    if (dt == TPF_F32) {
        const float *XW = xw, *HU = hu, *H = h;
        float *O = h_out;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            gru_row_f32(XW + r * 3 * u, HU + r * 3 * u, H + r * u, O + r * u, u, reset_after);
        }
    } else {
        const double *XW = xw, *HU = hu, *H = h;
        double *O = h_out;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            gru_row_f64(XW + r * 3 * u, HU + r * 3 * u, H + r * u, O + r * u, u, reset_after);
        }
    }
    return TPF_OK;
}

int tpf_gru_cell_grad(int dt, int64_t batch, int64_t units, int reset_after, const void *xw, const void *hu,
                      const void *h, const void *gout, void *dxw, void *dhu, void *dh) {
    if (batch < 0 || units < 0)
        return TPF_EBADSIZE;
    if (dt != TPF_F32 && dt != TPF_F64)
        return TPF_EBADDTYPE;
    if (reset_after != 0 && reset_after != 1)
        return TPF_EBADARG;
    if (batch == 0 || units == 0)
        return TPF_OK;
    int nt = TPF_NTHREADS(batch * units * 8);
    int64_t u = units;
    if (dt == TPF_F32) {
        const float *XW = xw, *HU = hu, *H = h, *G = gout;
        float *DX = dxw, *DU = dhu, *DH = dh;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            gru_grad_row_f32(XW + r * 3 * u, HU + r * 3 * u, H + r * u, G + r * u, DX + r * 3 * u, DU + r * 3 * u,
                             DH + r * u, u, reset_after);
        }
    } else {
        const double *XW = xw, *HU = hu, *H = h, *G = gout;
        double *DX = dxw, *DU = dhu, *DH = dh;
        #pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < batch; r++) {
            tpf_fp_enter();
            gru_grad_row_f64(XW + r * 3 * u, HU + r * 3 * u, H + r * u, G + r * u, DX + r * 3 * u, DU + r * 3 * u,
                             DH + r * u, u, reset_after);
        }
    }
    return TPF_OK;
}
