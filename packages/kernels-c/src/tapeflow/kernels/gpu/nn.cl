/* Softmax, log-softmax and the fused softmax cross-entropies (csrc/nn.c on the device).
 *
 * A tensor is an (outer, r, inner) view: one work-item per row (o, j), element k at
 * o * r * inner + k * inner + j.  The formulas are the CPU's: the row maximum is
 * subtracted first (a NaN or +inf logit, or a row of -inf, gives a NaN row), log-softmax
 * is (x - max) - log(sum) (keeping the digits of log(sum)), softmax multiplies by 1 / sum, the losses are sum l * (lse - (x - max)) and
 * lse - (x[label] - max), the backprop softmax - labels.
 */

#define SOFTMAX(DS, T)                                                                              \
KERNEL softmax_##DS(const G T *X, G T *O, int log_, i64 outer, i64 r, i64 inner) {                  \
    i64 q = GID0();                                                                                 \
    if (q >= outer * inner) return;                                                                 \
    i64 base = (q / inner) * r * inner + q % inner;                                                 \
    const G T *x = X + base;                                                                        \
    G T *o = O + base;                                                                              \
    T mx = -TPF_INF;                                                                                \
    for (i64 i = 0; i < r; i++) { T v = x[i * inner]; mx = v > mx ? v : mx; }                       \
    T s = 0;                                                                                        \
    for (i64 i = 0; i < r; i++) { T e = exp(x[i * inner] - mx); if (!log_) o[i * inner] = e; s += e; } \
    if (log_) { T ls = log(s); for (i64 i = 0; i < r; i++) o[i * inner] = (x[i * inner] - mx) - ls; } \
    else { T inv = 1 / s; for (i64 i = 0; i < r; i++) o[i * inner] *= inv; }                        \
}                                                                                                   \
/* loss [outer, inner]; backprop (when want_bp) like logits */                                     \
KERNEL softmax_xent_##DS(const G T *L, const G T *X, G T *loss, G T *B, int want_bp, i64 outer,    \
                         i64 r, i64 inner) {                                                        \
    i64 q = GID0();                                                                                 \
    if (q >= outer * inner) return;                                                                 \
    i64 base = (q / inner) * r * inner + q % inner;                                                 \
    const G T *x = X + base, *l = L + base;                                                         \
    T mx = -TPF_INF;                                                                                \
    for (i64 i = 0; i < r; i++) { T v = x[i * inner]; mx = v > mx ? v : mx; }                       \
    T s = 0;                                                                                        \
    for (i64 i = 0; i < r; i++) { T e = exp(x[i * inner] - mx); if (want_bp) B[base + i * inner] = e; s += e; } \
    T lse = log(s), acc = 0;                                                                        \
    for (i64 i = 0; i < r; i++) { T li = l[i * inner]; if (li != 0) acc += li * (lse - (x[i * inner] - mx)); } \
    loss[q] = acc;                                                                                  \
    if (want_bp) {                                                                                  \
        if (inner == 1) { T inv = 1 / s; for (i64 i = 0; i < r; i++) B[base + i] = B[base + i] * inv - l[i]; } \
        else for (i64 i = 0; i < r; i++) B[base + i * inner] = B[base + i * inner] / s - l[i * inner]; \
    }                                                                                               \
}

SOFTMAX(f32, float)
#ifdef TPF_FP64
SOFTMAX(f64, double)
#endif

/* labels [rows] (validated by the host), logits [rows, r] */
#define SPARSE(DS, T, LS, LT)                                                                       \
KERNEL sparse_softmax_xent_##DS##_##LS(const G LT *labels, const G T *X, G T *loss, G T *B,        \
                                       int want_bp, i64 rows, i64 r) {                              \
    i64 row = GID0();                                                                               \
    if (row >= rows) return;                                                                        \
    const G T *x = X + row * r;                                                                     \
    i64 k = labels[row];                                                                            \
    T mx = -TPF_INF;                                                                                \
    for (i64 i = 0; i < r; i++) { T v = x[i]; mx = v > mx ? v : mx; }                               \
    T s = 0;                                                                                        \
    for (i64 i = 0; i < r; i++) { T e = exp(x[i] - mx); if (want_bp) B[row * r + i] = e; s += e; }  \
    loss[row] = log(s) - (x[k] - mx);                                                               \
    if (want_bp) {                                                                                  \
        T inv = 1 / s;                                                                              \
        for (i64 i = 0; i < r; i++) B[row * r + i] *= inv;                                          \
        B[row * r + k] -= 1;                                                                        \
    }                                                                                               \
}                                                                                                   \

SPARSE(f32, float, i32, i32)
SPARSE(f32, float, i64, i64)
#ifdef TPF_FP64
SPARSE(f64, double, i32, i32)
SPARSE(f64, double, i64, i64)
#endif
