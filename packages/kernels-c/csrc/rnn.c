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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define TPF_RNN_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef TPF_RNN_CLONES
#define TPF_RNN_CLONES
#endif

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

LSTM_ROW(lstm_row_f32, float, tpf_vsigmoidf, tpf_vtanhf, TPF_RNN_CLONES)
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
