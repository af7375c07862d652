/* Connectionist temporal classification loss (Graves et al. 2006), as tf.nn.ctc_loss with dense labels.
 *
 * logits [T, B, C] time-major (float32 or float64), labels [B, L] int32 (as are the lengths) (the first label_len[b] of a row
 * count), logit_len[b] <= T frames per sequence, ``blank`` the blank class.  loss[b] = -log p(labels[b] |
 * logits[:, b]) from the forward recursion over the label with blanks between and around its symbols
 * (log space, double precision); an impossible alignment (too few frames) gives +inf.  When ``grad`` is
 * not NULL it gets d loss[b] / d logits[t, b, c] = softmax - posterior occupancy (forward-backward), 0 for
 * frames past logit_len[b] and for sequences whose loss is infinite.
 *
 * Bad input stops the kernel before it writes: bad[0] = the sequence, bad[1] = the position, bad[2] = what
 * (0: a label outside [0, C) or equal to the blank, 1: label_len outside [0, L], 2: logit_len outside
 * [0, T]); TPF_ERANGE.  Sequences run in parallel. */
#include "tpf.h"
#include <stdlib.h>

static inline double lse2(double a, double b) {
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

static inline double rd(int dt, const void *p, int64_t i) {
    return dt == TPF_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static inline void wr(int dt, void *p, int64_t i, double v) {
    if (dt == TPF_F32) ((float *)p)[i] = (float)v; else ((double *)p)[i] = v;
}

/* one sequence; returns TPF_ENOMEM if scratch cannot be allocated */
static int ctc_one(int dt, const void *logits, const int32_t *lab, int64_t n, int64_t tb, int64_t b,
                   int64_t B, int64_t C, int64_t blank, void *loss, void *grad) {
    int64_t S = 2 * n + 1, t1 = tb ? tb : 1;
    /* scratch: log-softmax [tb, C], alpha and beta [tb, S], one row of per-class sums [C] */
    double *lp = malloc(sizeof(double) * (size_t)(t1 * C + 2 * t1 * S + C));
    if (!lp) return TPF_ENOMEM;
    double *alpha = lp + t1 * C, *beta = alpha + t1 * S, *acc = beta + t1 * S;
#define EXT(s) ((s) % 2 ? (int64_t)lab[(s) / 2] : blank)
    for (int64_t t = 0; t < tb; t++) {  /* log-softmax of each frame */
        const int64_t row = (t * B + b) * C;
        double m = -INFINITY;
        for (int64_t c = 0; c < C; c++) { double v = rd(dt, logits, row + c); if (v > m) m = v; }
        double sum = 0.0;
        for (int64_t c = 0; c < C; c++) sum += exp(rd(dt, logits, row + c) - m);
        double lz = m + log(sum);
        for (int64_t c = 0; c < C; c++) lp[t * C + c] = rd(dt, logits, row + c) - lz;
    }
    double nll;
    if (tb == 0) {
        nll = n == 0 ? 0.0 : INFINITY;
    } else {
        for (int64_t s = 0; s < S; s++) alpha[s] = -INFINITY;
        alpha[0] = lp[EXT(0)];
        if (S > 1) alpha[1] = lp[EXT(1)];
        for (int64_t t = 1; t < tb; t++) {
            const double *pa = alpha + (t - 1) * S;
            double *a = alpha + t * S;
            for (int64_t s = 0; s < S; s++) {
                double v = pa[s];
                if (s >= 1) v = lse2(v, pa[s - 1]);
                if (s >= 2 && s % 2 && EXT(s) != EXT(s - 2)) v = lse2(v, pa[s - 2]);
                a[s] = v == -INFINITY ? v : v + lp[t * C + EXT(s)];
            }
        }
        const double *last = alpha + (tb - 1) * S;
        double lpz = S > 1 ? lse2(last[S - 1], last[S - 2]) : last[0];
        nll = -lpz;
    }
    wr(dt, loss, b, nll);
    if (grad) {
        for (int64_t t = 0; t < tb; t++)
            for (int64_t c = 0; c < C; c++) wr(dt, grad, (t * B + b) * C + c, 0.0);
        if (tb > 0 && nll != INFINITY) {
            for (int64_t s = 0; s < S; s++) beta[(tb - 1) * S + s] = -INFINITY;
            beta[(tb - 1) * S + S - 1] = lp[(tb - 1) * C + EXT(S - 1)];
            if (S > 1) beta[(tb - 1) * S + S - 2] = lp[(tb - 1) * C + EXT(S - 2)];
            for (int64_t t = tb - 2; t >= 0; t--) {
                const double *nb = beta + (t + 1) * S;
                double *bt = beta + t * S;
                for (int64_t s = 0; s < S; s++) {
                    double v = nb[s];
                    if (s + 1 < S) v = lse2(v, nb[s + 1]);
                    if (s + 2 < S && s % 2 && EXT(s) != EXT(s + 2)) v = lse2(v, nb[s + 2]);
                    bt[s] = v == -INFINITY ? v : v + lp[t * C + EXT(s)];
                }
            }
            for (int64_t t = 0; t < tb; t++) {
                /* log of the sum over s with EXT(s) == c of alpha * beta, per class c */
                for (int64_t c = 0; c < C; c++) acc[c] = -INFINITY;
                for (int64_t s = 0; s < S; s++) {
                    double v = alpha[t * S + s] + beta[t * S + s];
                    if (v != -INFINITY && !isnan(v)) acc[EXT(s)] = lse2(acc[EXT(s)], v);
                }
                for (int64_t c = 0; c < C; c++) {
                    double l = lp[t * C + c];
                    double post = acc[c] == -INFINITY ? 0.0 : exp(acc[c] - l + nll);
                    wr(dt, grad, (t * B + b) * C + c, exp(l) - post);
                }
            }
        }
    }
#undef EXT
    free(lp);
    return TPF_OK;
}

int tpf_ctc_loss(int dt, const void *logits, const void *labels_, const void *label_len_,
                 const void *logit_len_, int64_t T, int64_t B, int64_t C, int64_t L, int64_t blank,
                 void *loss, void *grad, int64_t *bad) {
    const int32_t *labels = labels_, *label_len = label_len_, *logit_len = logit_len_;
    if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    if (T < 0 || B < 0 || C < 1 || L < 0 || blank < 0 || blank >= C) return TPF_EBADSIZE;
    for (int64_t b = 0; b < B; b++) {
        int64_t n = label_len[b], tb = logit_len[b];
        if (n < 0 || n > L) { bad[0] = b; bad[1] = n; bad[2] = 1; return TPF_ERANGE; }
        if (tb < 0 || tb > T) { bad[0] = b; bad[1] = tb; bad[2] = 2; return TPF_ERANGE; }
        for (int64_t i = 0; i < n; i++) {
            int64_t v = labels[b * L + i];
            if (v < 0 || v >= C || v == blank) { bad[0] = b; bad[1] = i; bad[2] = 0; return TPF_ERANGE; }
        }
    }
    if (grad)  /* frames past a sequence's length get no gradient */
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++)
                if (t >= logit_len[b])
                    for (int64_t c = 0; c < C; c++) wr(dt, grad, (t * B + b) * C + c, 0.0);
    int nt = TPF_NTHREADS(T * B * C * 8);
    if (B < 2) nt = 1;
    int status = TPF_OK;
    TPF_PFOR(b, B,
        int st = ctc_one(dt, logits, labels + b * L, label_len[b], logit_len[b], b, B, C, blank, loss, grad);
        if (st) {
            _Pragma("omp atomic write")
            status = st;
        }
    );
    return status;
}
