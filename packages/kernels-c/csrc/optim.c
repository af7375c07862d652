/* Fused optimizer updates: one pass over a variable, its slots and its gradient, in place.
 *
 * tpf_optim_update(kind, dt, flags, var, s0, s1, s2, grad, n, h0..h4) runs one step of
 *
 *   kind 0 SGD      h0 = lr, h1 = momentum;             s0 = momentum slot (flags & 1: momentum, & 2: nesterov)
 *                   var -= g * lr, or m = m * mu - g * lr; var += m (nesterov: var += m * mu - g * lr)
 *   kind 1 Adam     h0 = alpha, h1 = 1 - beta_1, h2 = 1 - beta_2, h3 = epsilon;  s0 = m, s1 = v, s2 = v_hat
 *                   (flags & 1: amsgrad)  m += (g - m) * h1; v += (g * g - v) * h2; v_hat = max(v_hat, v);
 *                   var -= m * alpha / (sqrt(v or v_hat) + epsilon)
 *   kind 2 RMSprop  h0 = lr, h1 = rho, h2 = 1 - rho, h3 = momentum, h4 = epsilon;
 *                   s0 = v, s1 = average gradient (flags & 2: centered), s2 = momentum slot (flags & 1)
 *                   v = v * rho + g * g * (1 - rho); a = a * rho + g * (1 - rho); d = (v - a * a) or v;
 *                   inc = g * lr / sqrt(d + epsilon); m = m * mu + inc; var -= m (or inc)
 *   kind 3 Adagrad  h0 = lr, h1 = epsilon; s0 = accumulator: acc += g * g; var -= g * lr / sqrt(acc + epsilon)
 *
 * in float32 or float64 (the hyper-parameters are given as the float32 values the op-by-op update
 * uses).  Each formula is evaluated in the dtype in the same order, operation by operation, as the
 * update written with tapeflow ops (tapeflow.nn.optimizers), so the results are bitwise the same.
 */
#include "tpf.h"

#define LOOP(VAR, N, ...) for (int64_t VAR = 0; VAR < (N); VAR++) { __VA_ARGS__ }

#define OPT_LOOP(T, SQRT)                                                                              \
    do {                                                                                               \
        T *w = (T *)var, *a0 = (T *)s0, *a1 = (T *)s1, *a2 = (T *)s2;                                  \
        const T *g = (const T *)grad;                                                                  \
        const T c0 = (T)h0, c1 = (T)h1, c2 = (T)h2, c3 = (T)h3, c4 = (T)h4;                            \
        (void)a1; (void)a2; (void)c2; (void)c3; (void)c4;                                              \
        switch (kind) {                                                                                \
        case 0:                                                                                        \
            if (!(flags & 1)) {                                                                        \
                LOOP(i, n, { T s = g[i] * c0; w[i] = w[i] - s; });                                 \
            } else if (flags & 2) {                                                                    \
                LOOP(i, n, { T s = g[i] * c0; T m = a0[i] * c1 - s; a0[i] = m;                     \
                                 T u = m * c1 - s; w[i] = w[i] + u; });                                \
            } else {                                                                                   \
                LOOP(i, n, { T s = g[i] * c0; T m = a0[i] * c1 - s; a0[i] = m; w[i] = w[i] + m; });\
            }                                                                                          \
            break;                                                                                     \
        case 1:                                                                                        \
            LOOP(i, n, {                                                                           \
                T gi = g[i];                                                                           \
                T d1 = gi - a0[i]; T m = a0[i] + d1 * c1; a0[i] = m;                                   \
                T sq = gi * gi; T d2 = sq - a1[i]; T v = a1[i] + d2 * c2; a1[i] = v;                   \
                if (flags & 1) { T vh = a2[i]; v = (vh != vh || vh > v) ? vh : v; a2[i] = v; }          \
                T num = m * c0; T den = SQRT(v) + c3; T u = num / den; w[i] = w[i] - u;                \
            });                                                                                        \
            break;                                                                                     \
        case 2:                                                                                        \
            LOOP(i, n, {                                                                           \
                T gi = g[i];                                                                           \
                T p = a0[i] * c1; T sq = gi * gi; T q = sq * c2; T v = p + q; a0[i] = v;               \
                T den;                                                                                 \
                if (flags & 2) {                                                                       \
                    T pa = a1[i] * c1; T qa = gi * c2; T av = pa + qa; a1[i] = av;                     \
                    T a2v = av * av; T dv = v - a2v; den = dv + c4;                                    \
                } else {                                                                               \
                    den = v + c4;                                                                      \
                }                                                                                      \
                T num = gi * c0; T inc = num / SQRT(den);                                              \
                if (flags & 1) { T mm = a2[i] * c3; T m = mm + inc; a2[i] = m; w[i] = w[i] - m; }      \
                else w[i] = w[i] - inc;                                                                \
            });                                                                                        \
            break;                                                                                     \
        case 3:                                                                                        \
            LOOP(i, n, {                                                                           \
                T gi = g[i];                                                                           \
                T sq = gi * gi; T acc = a0[i] + sq; a0[i] = acc;                                       \
                T num = gi * c0; T s = acc + c1; T u = num / SQRT(s); w[i] = w[i] - u;                 \
            });                                                                                        \
            break;                                                                                     \
        }                                                                                              \
    } while (0)

static void optim_block(int kind, int dt, int flags, void *var, void *s0, void *s1, void *s2, const void *grad,
                        int64_t n, double h0, double h1, double h2, double h3, double h4) {
    tpf_fp_enter();
    if (dt == TPF_F32) OPT_LOOP(float, sqrtf);
    else OPT_LOOP(double, sqrt);
}

int tpf_optim_update(int kind, int dt, int flags, void *var, void *s0, void *s1, void *s2, const void *grad,
                     int64_t n, double h0, double h1, double h2, double h3, double h4) {
    if (kind < 0 || kind > 3) return TPF_EBADOP;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    /* the slots each kind and flag set reads */
    int need0 = kind != 0 || (flags & 1);
    int need1 = kind == 1 || (kind == 2 && (flags & 2));
    int need2 = (kind == 1 || kind == 2) && (flags & 1);
    if (n && (!var || !grad || (need0 && !s0) || (need1 && !s1) || (need2 && !s2))) return TPF_EBADARG;
    if (n == 0) return TPF_OK;
    int nt = TPF_NTHREADS(n);
    if (nt <= 1) {
        optim_block(kind, dt, flags, var, s0, s1, s2, grad, n, h0, h1, h2, h3, h4);
        return TPF_OK;
    }
    /* each thread takes a contiguous block (each element's update reads and writes that element only) */
    size_t es = dt == TPF_F32 ? 4 : 8;
    int64_t chunk = (n + nt - 1) / nt;
    chunk = (chunk + 15) & ~(int64_t)15;
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (lo < hi) {
            size_t off = (size_t)lo * es;
            optim_block(kind, dt, flags, (char *)var + off, s0 ? (char *)s0 + off : NULL,
                        s1 ? (char *)s1 + off : NULL, s2 ? (char *)s2 + off : NULL,
                        (const char *)grad + off, hi - lo, h0, h1, h2, h3, h4);
        }
    }
    return TPF_OK;
}
