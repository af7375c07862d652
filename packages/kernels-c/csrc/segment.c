/* Segment reductions other than the sum (the sum is tpf_scatter_add_axis in index.c):
 * out[s, c] = max / min / prod of data[j, c] over the j with idx[j] == s.
 *
 * data [nidx, inner], idx [nidx] (int32 or int64), out [nseg, inner].  Negative ids are
 * skipped (TensorFlow's unsorted_segment_* drop them); an id >= nseg stops the kernel
 * before it writes, with *bad = its position (TPF_ERANGE).  Empty segments hold the
 * reduction's identity: the lowest value for max, the highest for min, 1 for prod; as in
 * TensorFlow, max and min start from those finite limits (so -inf data give the lowest
 * finite value).  Float limits are those of ``lim_dt`` (F16/BF16 when the caller computes
 * half types in float32, else ``dt``).
 * Float max/min propagate NaN (as tf.maximum/minimum do here).  Integer products wrap
 * modulo 2**bits (unsigned arithmetic: signed overflow is undefined in C).
 * Work splits over column chunks, so each thread owns its output columns. */
#include "tpf.h"
#include <float.h>

static inline int64_t seg_idx(const void *p, int is64, int64_t i) {
    return is64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

#define SEG_LOOP(T, INIT, STMT)                                                          \
    do {                                                                                 \
        T *O = (T *)out; const T *D = (const T *)data;                                   \
        for (int64_t i = 0; i < nseg * inner; i++) O[i] = (INIT);                        \
        TPF_PFOR(ch, nch,                                                                \
            int64_t c0 = ch * csz, c1 = c0 + csz < inner ? c0 + csz : inner;             \
            for (int64_t j = 0; j < nidx; j++) {                                         \
                int64_t s = seg_idx(idx, is64, j);                                       \
                if (s < 0) continue;                                                     \
                T *o = O + s * inner; const T *d = D + j * inner;                        \
                for (int64_t c = c0; c < c1; c++) { T u = d[c]; STMT; }                  \
            }                                                                            \
        );                                                                               \
    } while (0)

#define FMAX(T) SEG_LOOP(T, (T)-flim, if (u > o[c] || u != u) o[c] = u)
#define FMIN(T) SEG_LOOP(T, (T)flim, if (u < o[c] || u != u) o[c] = u)
#define IMAX(T, LO) SEG_LOOP(T, LO, if (u > o[c]) o[c] = u)
#define IMIN(T, HI) SEG_LOOP(T, HI, if (u < o[c]) o[c] = u)
#define IPROD(T, W) SEG_LOOP(T, (T)1, o[c] = (T)((W)o[c] * (W)u))

int tpf_segment_reduce(int op, int dt, int lim_dt, int idx_dt, const void *data, const void *idx, void *out,
                       int64_t nidx, int64_t nseg, int64_t inner, int64_t *bad) {
    if (op < 0 || op > 2) return TPF_EBADOP;
    if (idx_dt != TPF_I32 && idx_dt != TPF_I64) return TPF_EBADDTYPE;
    if (nidx < 0 || nseg < 0 || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    double flim = lim_dt == TPF_F16 ? 65504.0 : lim_dt == TPF_BF16 ? 3.38953138925153547590470800371487866880e38
                : lim_dt == TPF_F32 ? (double)FLT_MAX : DBL_MAX;
    for (int64_t j = 0; j < nidx; j++)
        if (seg_idx(idx, is64, j) >= nseg) { *bad = j; return TPF_ERANGE; }
    int nt = TPF_NTHREADS(nidx * inner);
    int64_t nch = inner >= 64 * nt ? nt : 1;
    if (nch == 1) nt = 1;
    int64_t csz = nch ? (inner + nch - 1) / nch : 0;
    tpf_fp_enter();  /* scoped: restores the caller's FP mode on return */
    switch (dt) {
    case TPF_F32: if (op == 0) FMAX(float); else if (op == 1) FMIN(float); else SEG_LOOP(float, 1.0f, o[c] *= u); break;
    case TPF_F64: if (op == 0) FMAX(double); else if (op == 1) FMIN(double); else SEG_LOOP(double, 1.0, o[c] *= u); break;
    case TPF_I8: if (op == 0) IMAX(int8_t, INT8_MIN); else if (op == 1) IMIN(int8_t, INT8_MAX); else IPROD(int8_t, uint32_t); break;
    case TPF_U8: if (op == 0) IMAX(uint8_t, 0); else if (op == 1) IMIN(uint8_t, UINT8_MAX); else IPROD(uint8_t, uint32_t); break;
    case TPF_I16: if (op == 0) IMAX(int16_t, INT16_MIN); else if (op == 1) IMIN(int16_t, INT16_MAX); else IPROD(int16_t, uint32_t); break;
    case TPF_I32: if (op == 0) IMAX(int32_t, INT32_MIN); else if (op == 1) IMIN(int32_t, INT32_MAX); else IPROD(int32_t, uint32_t); break;
    case TPF_I64: if (op == 0) IMAX(int64_t, INT64_MIN); else if (op == 1) IMIN(int64_t, INT64_MAX); else IPROD(int64_t, uint64_t); break;
    default: return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* ---- tensor_scatter_nd_max / _min ------------------------------------------
 * out [dims[0..k), inner] holds the tensor; idx [n, k] index tuples, upd [n, inner]:
 * out[idx[t]] = max (op 0) or min (op 1) of itself and upd[t].  A tuple outside dims stops
 * the kernel before it writes, with *bad = its row (TPF_ERANGE).  Float max/min propagate
 * NaN.  Work splits over column chunks (each thread owns its columns). */
#define SCATTER_REDUCE(T, STMT)                                                          \
    do {                                                                                 \
        T *O = (T *)out; const T *U = (const T *)upd;                                    \
        TPF_PFOR(ch, nch,                                                                \
            int64_t c0 = ch * csz, c1 = c0 + csz < inner ? c0 + csz : inner;             \
            for (int64_t t = 0; t < n; t++) {                                            \
                int64_t off = 0;                                                         \
                for (int j = 0; j < k; j++) off = off * dims[j] + seg_idx(idx, is64, t * k + j); \
                T *o = O + off * inner; const T *u = U + t * inner;                      \
                for (int64_t c = c0; c < c1; c++) { T v = u[c]; STMT; }                  \
            }                                                                            \
        );                                                                               \
    } while (0)

#define SR_MAX(T) SCATTER_REDUCE(T, if (v > o[c] || v != v) o[c] = v)
#define SR_MIN(T) SCATTER_REDUCE(T, if (v < o[c] || v != v) o[c] = v)

int tpf_scatter_nd_reduce(int op, int dt, int idx_dt, const void *idx, const void *upd, void *out,
                          int64_t n, int k, const int64_t *dims, int64_t inner, int64_t *bad) {
    if (op != 0 && op != 1) return TPF_EBADOP;
    if (idx_dt != TPF_I32 && idx_dt != TPF_I64) return TPF_EBADDTYPE;
    if (n < 0 || k < 0 || k > TPF_MAXDIMS || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    for (int64_t t = 0; t < n; t++)
        for (int j = 0; j < k; j++) {
            int64_t v = seg_idx(idx, is64, t * k + j);
            if (v < 0 || v >= dims[j]) { *bad = t; return TPF_ERANGE; }
        }
    if (n == 0 || inner == 0) return TPF_OK;
    int nt = TPF_NTHREADS(n * inner);
    int64_t nch = inner >= 64 * nt ? nt : 1;
    if (nch == 1) nt = 1;
    int64_t csz = (inner + nch - 1) / nch;
    tpf_fp_enter();  /* scoped: restores the caller's FP mode on return */
    switch (dt) {
    case TPF_F32: if (op == 0) SR_MAX(float); else SR_MIN(float); break;
    case TPF_F64: if (op == 0) SR_MAX(double); else SR_MIN(double); break;
    case TPF_I8: if (op == 0) SR_MAX(int8_t); else SR_MIN(int8_t); break;
    case TPF_U8: if (op == 0) SR_MAX(uint8_t); else SR_MIN(uint8_t); break;
    case TPF_I16: if (op == 0) SR_MAX(int16_t); else SR_MIN(int16_t); break;
    case TPF_I32: if (op == 0) SR_MAX(int32_t); else SR_MIN(int32_t); break;
    case TPF_I64: if (op == 0) SR_MAX(int64_t); else SR_MIN(int64_t); break;
    default: return TPF_EBADDTYPE;
    }
    return TPF_OK;
}
