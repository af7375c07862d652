/* Indexing kernels: gather (and its adjoint, a scatter-add along an axis),
 * gather_nd / scatter_nd, one_hot, where (indices of non-zeros) and select.
 *
 * Index arrays are int32 or int64 (idx_dt = TPF_I32 / TPF_I64).  Kernels that
 * read indices validate them all first, before writing anything, and report the
 * flat position of the first bad one through *bad with TPF_ERANGE, so the caller
 * can name it and no output is left half written.  Data are moved by element
 * size, so every dtype works; the scatter-adds loop per numeric dtype.
 */
#include "tpf.h"
#include "index_par.h"
#include <stdlib.h>

static inline int64_t rd_idx(const void *p, int is64, int64_t i) {
    return is64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

typedef struct { uint64_t lo, hi; } tpf_el16;   /* a 16-byte element (complex128) */

static inline void copy_el(char *dst, const char *src, int64_t elsize) {
    switch (elsize) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, 16); break;   /* complex128 */
    }
}

static int check_common(int64_t elsize, int idx_dt) {
    if (!(elsize == 1 || elsize == 2 || elsize == 4 || elsize == 8 || elsize == 16)) return TPF_EBADARG;
    if (idx_dt != TPF_I32 && idx_dt != TPF_I64) return TPF_EBADDTYPE;
    return TPF_OK;
}

/* ---- gather along an axis ------------------------------------------------
 * params [batch, outer, axis_n, inner], idx [batch, nidx] -> out [batch, outer, nidx, inner]. */
int tpf_gather(int64_t elsize, int idx_dt, const void *params, const void *idx, void *out,
               int64_t batch, int64_t outer, int64_t axis_n, int64_t nidx, int64_t inner, int64_t *bad) {
    int st = check_common(elsize, idx_dt);
    if (st) return st;
    if (batch < 0 || outer < 0 || axis_n < 0 || nidx < 0 || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    for (int64_t i = 0; i < batch * nidx; i++) {
        int64_t v = rd_idx(idx, is64, i);
        if (v < 0 || v >= axis_n) { *bad = i; return TPF_ERANGE; }
    }
    int64_t rows = batch * outer * nidx;
    if (rows == 0 || inner == 0) return TPF_OK;
    const char *P = (const char *)params;
    char *O = (char *)out;
    size_t rb = (size_t)(inner * elsize);
    int nt = TPF_NTHREADS(rows * inner);
    PFOR(r, rows,
        int64_t j = r % nidx, bo = r / nidx, b = bo / outer;
        int64_t v = rd_idx(idx, is64, b * nidx + j);
        const char *s = P + ((bo * axis_n + v) * inner) * elsize;
        if (inner == 1) copy_el(O + r * elsize, s, elsize);
        else memcpy(O + r * rb, s, rb);
    );
    return TPF_OK;
}

/* ---- scatter-add along an axis (the adjoint of gather; unsorted_segment_sum) --
 * upd [batch, outer, nidx, inner], idx [batch, nidx] -> out [batch, outer, axis_n, inner]
 * (zeroed here first).  flags & 1: negative indices are skipped (else they are errors);
 * flags & 2: indices must not decrease (TPF_EBADARG at the first that does).
 * Integers add in unsigned W: they wrap modulo 2**bits, as in NumPy (signed overflow is
 * undefined in C). */
#define SCATTER_ADD_AXIS(T, W)                                                           \
    do {                                                                                 \
        T *Ot = (T *)out; const T *U = (const T *)upd;                                   \
        PFOR(task, bo_n * nch,                                                           \
            int64_t bo = task / nch, ch = task % nch, b = bo / outer;                    \
            int64_t c0 = ch * csz, c1 = c0 + csz < inner ? c0 + csz : inner;             \
            for (int64_t j = 0; j < nidx; j++) {                                         \
                int64_t v = rd_idx(idx, is64, b * nidx + j);                             \
                if (v < 0) continue;                                                     \
                T *o = Ot + (bo * axis_n + v) * inner;                                   \
                const T *u = U + (bo * nidx + j) * inner;                                \
                for (int64_t c = c0; c < c1; c++) o[c] = (T)((W)o[c] + (W)u[c]);        \
            }                                                                            \
        );                                                                               \
    } while (0)

int tpf_scatter_add_axis(int dt, int idx_dt, const void *upd, const void *idx, void *out,
                         int64_t batch, int64_t outer, int64_t axis_n, int64_t nidx, int64_t inner,
                         int flags, int64_t *bad) {
    size_t es = tpf_dtype_size(dt);
    if (!es) return TPF_EBADDTYPE;
    if (idx_dt != TPF_I32 && idx_dt != TPF_I64) return TPF_EBADDTYPE;
    if (batch < 0 || outer < 0 || axis_n < 0 || nidx < 0 || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    if (flags & 2)
        for (int64_t i = 1; i < batch * nidx; i++)
            if (i % nidx && rd_idx(idx, is64, i) < rd_idx(idx, is64, i - 1)) { *bad = i; return TPF_EBADARG; }
    for (int64_t i = 0; i < batch * nidx; i++) {
        int64_t v = rd_idx(idx, is64, i);
        if (v >= axis_n || (v < 0 && !(flags & 1))) { *bad = i; return TPF_ERANGE; }
    }
    int64_t bo_n = batch * outer;
    memset(out, 0, (size_t)(bo_n * axis_n * inner) * es);
    if (bo_n == 0 || inner == 0 || nidx == 0) return TPF_OK;
    int nt = TPF_NTHREADS(bo_n * nidx * inner);
    /* split the columns when there are fewer (batch, outer) rows than threads: race free */
    int64_t nch = (bo_n >= nt) ? 1 : (inner >= 64 * nt ? nt : 1);
    int64_t csz = (inner + nch - 1) / nch;
    tpf_fp_enter();  /* scoped: restores the caller's FP mode on return */
    switch (dt) {
    case TPF_F32: SCATTER_ADD_AXIS(float, float); break;
    case TPF_F64: SCATTER_ADD_AXIS(double, double); break;
    case TPF_I8: SCATTER_ADD_AXIS(int8_t, uint32_t); break;
    case TPF_U8: SCATTER_ADD_AXIS(uint8_t, uint32_t); break;
    case TPF_I16: SCATTER_ADD_AXIS(int16_t, uint32_t); break;
    case TPF_I32: SCATTER_ADD_AXIS(int32_t, uint32_t); break;
    case TPF_I64: SCATTER_ADD_AXIS(int64_t, uint64_t); break;
    default: return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* ---- gather_nd ------------------------------------------------------------
 * params [batch, dims[0..k), inner], idx [batch, nrest, k] -> out [batch, nrest, inner]. */
static int check_tuples(int is64, const void *idx, int64_t ntup, int k, const int64_t *dims, int64_t *bad) {
    for (int64_t t = 0; t < ntup; t++)
        for (int d = 0; d < k; d++) {
            int64_t v = rd_idx(idx, is64, t * k + d);
            if (v < 0 || v >= dims[d]) { *bad = t; return TPF_ERANGE; }
        }
    return TPF_OK;
}

static inline int64_t tuple_offset(int is64, const void *idx, int64_t t, int k, const int64_t *dims) {
    int64_t off = 0;
    for (int d = 0; d < k; d++) off = off * dims[d] + rd_idx(idx, is64, t * k + d);
    return off;
}

int tpf_gather_nd(int64_t elsize, int idx_dt, const void *params, const void *idx, void *out,
                  int64_t batch, int64_t nrest, int k, const int64_t *dims, int64_t inner, int64_t *bad) {
    int st = check_common(elsize, idx_dt);
    if (st) return st;
    if (batch < 0 || nrest < 0 || k < 0 || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    st = check_tuples(is64, idx, batch * nrest, k, dims, bad);
    if (st) return st;
    int64_t slab = 1;
    for (int d = 0; d < k; d++) slab *= dims[d];
    int64_t rows = batch * nrest;
    if (rows == 0 || inner == 0) return TPF_OK;
    const char *P = (const char *)params;
    char *O = (char *)out;
    size_t rb = (size_t)(inner * elsize);
    int nt = TPF_NTHREADS(rows * inner);
    PFOR(r, rows,
        int64_t b = r / nrest;
        const char *s = P + ((b * slab + tuple_offset(is64, idx, r, k, dims)) * inner) * elsize;
        if (inner == 1) copy_el(O + r * elsize, s, elsize);
        else memcpy(O + r * rb, s, rb);
    );
    return TPF_OK;
}

/* ---- scatter_nd -----------------------------------------------------------
 * out [dims[0..k), inner] holds the starting values; idx [n, k], upd [n, inner].
 * op 0 sets (the last update of a position wins), op 1 adds (numeric dtypes). */
#define SCATTER_ND(T, STMT)                                                              \
    do {                                                                                 \
        T *Ot = (T *)out; const T *U = (const T *)upd;                                   \
        PFOR(ch, nch,                                                                    \
            int64_t c0 = ch * csz, c1 = c0 + csz < inner ? c0 + csz : inner;             \
            for (int64_t t = 0; t < n; t++) {                                            \
                T *o = Ot + tuple_offset(is64, idx, t, k, dims) * inner;                 \
                const T *u = U + t * inner;                                              \
                for (int64_t c = c0; c < c1; c++) STMT;                                  \
            }                                                                            \
        );                                                                               \
    } while (0)

int tpf_scatter_nd(int op, int dt, int idx_dt, const void *idx, const void *upd, void *out,
                   int64_t n, int k, const int64_t *dims, int64_t inner, int64_t *bad) {
    size_t es = tpf_dtype_size(dt);
    if (!es) return TPF_EBADDTYPE;
    if (idx_dt != TPF_I32 && idx_dt != TPF_I64) return TPF_EBADDTYPE;
    if (op != 0 && op != 1) return TPF_EBADOP;
    if (n < 0 || k < 0 || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    int st = check_tuples(is64, idx, n, k, dims, bad);
    if (st) return st;
    if (n == 0 || inner == 0) return TPF_OK;
    int nt = TPF_NTHREADS(n * inner);
    int64_t nch = inner >= 64 * nt ? nt : 1;
    if (nch == 1) nt = 1;
    int64_t csz = (inner + nch - 1) / nch;
    if (op == 0) {
        switch (es) {
        case 1: SCATTER_ND(uint8_t, o[c] = u[c]); break;
        case 2: SCATTER_ND(uint16_t, o[c] = u[c]); break;
        case 4: SCATTER_ND(uint32_t, o[c] = u[c]); break;
        default: SCATTER_ND(uint64_t, o[c] = u[c]); break;
        }
        return TPF_OK;
    }
    tpf_fp_enter();  /* scoped: restores the caller's FP mode on return */
    switch (dt) {
    case TPF_F32: SCATTER_ND(float, o[c] += u[c]); break;
    case TPF_F64: SCATTER_ND(double, o[c] += u[c]); break;
    case TPF_I8: SCATTER_ND(int8_t, o[c] = (int8_t)((uint32_t)o[c] + (uint32_t)u[c])); break;
    case TPF_U8: SCATTER_ND(uint8_t, o[c] = (uint8_t)((uint32_t)o[c] + (uint32_t)u[c])); break;
    case TPF_I16: SCATTER_ND(int16_t, o[c] = (int16_t)((uint32_t)o[c] + (uint32_t)u[c])); break;
    case TPF_I32: SCATTER_ND(int32_t, o[c] = (int32_t)((uint32_t)o[c] + (uint32_t)u[c])); break;
    case TPF_I64: SCATTER_ND(int64_t, o[c] = (int64_t)((uint64_t)o[c] + (uint64_t)u[c])); break;
    default: return TPF_EBADDTYPE;
    }
    return TPF_OK;
}

/* n copies of the element *v (elsize bytes) */
static void fill_el(char *dst, const void *v, int64_t n, int64_t elsize) {
    switch (elsize) {
#define FILL(T) { T x; memcpy(&x, v, sizeof(T)); T *p = (T *)dst; for (int64_t j = 0; j < n; j++) p[j] = x; } break;
    case 1: memset(dst, *(const uint8_t *)v, (size_t)n); break;
    case 2: FILL(uint16_t)
    case 4: FILL(uint32_t)
    case 8: FILL(uint64_t)
    default: FILL(tpf_el16)   /* complex128 */
#undef FILL
    }
}

/* ---- one_hot --------------------------------------------------------------
 * idx [outer, inner] -> out [outer, depth, inner]: *on where idx == d, else *off
 * (indices outside [0, depth) give a row of *off, as in TensorFlow). */
int tpf_one_hot(int64_t elsize, int idx_dt, const void *idx, const void *on, const void *off, void *out,
                int64_t outer, int64_t depth, int64_t inner) {
    int st = check_common(elsize, idx_dt);
    if (st) return st;
    if (outer < 0 || depth < 0 || inner < 0) return TPF_EBADSIZE;
    int is64 = idx_dt == TPF_I64;
    char *O = (char *)out;
    int64_t block = depth * inner;  /* one [depth, inner] block per outer index: fill with off, set the ons */
    int nt = TPF_NTHREADS(outer * block);
    PFOR(o, outer,
        char *blk = O + o * block * elsize;
        fill_el(blk, off, block, elsize);
        for (int64_t c = 0; c < inner; c++) {
            int64_t v = rd_idx(idx, is64, o * inner + c);
            if (v >= 0 && v < depth) copy_el(blk + (v * inner + c) * elsize, (const char *)on, elsize);
        }
    );
    return TPF_OK;
}

/* ---- where(x): indices of non-zero elements --------------------------------- */
#define NZ_SWITCH(MACRO)                                                             \
    switch (dt) {                                                                    \
    case TPF_F16: case TPF_BF16: MACRO(uint16_t, (v & 0x7fff) != 0); break;          \
    case TPF_F32: MACRO(float, v != 0); break;                                       \
    case TPF_F64: MACRO(double, v != 0); break;                                      \
    case TPF_I8: MACRO(int8_t, v != 0); break;                                       \
    case TPF_U8: case TPF_BOOL: MACRO(uint8_t, v != 0); break;                       \
    case TPF_I16: MACRO(int16_t, v != 0); break;                                     \
    case TPF_I32: MACRO(int32_t, v != 0); break;                                     \
    case TPF_I64: MACRO(int64_t, v != 0); break;                                     \
    default: return TPF_EBADDTYPE;                                                   \
    }

#define NZ_COUNT(T, TEST)                                                            \
    { const T *X = (const T *)x;                                                     \
      for (int64_t i = s; i < e; i++) { T v = X[i]; c += (TEST); } }

static int count_range(int dt, const void *x, int64_t s, int64_t e, int64_t *out) {
    int64_t c = 0;
    NZ_SWITCH(NZ_COUNT)
    *out = c;
    return TPF_OK;
}

int tpf_count_nonzero(int dt, const void *x, int64_t n, int64_t *count) {
    if (n < 0) return TPF_EBADSIZE;
    if (!tpf_dtype_size(dt)) return TPF_EBADDTYPE;
    int nt = TPF_NTHREADS(n);
    if (nt <= 1) return count_range(dt, x, 0, n, count);
    int64_t total = 0;
    #pragma omp parallel for num_threads(nt) schedule(static) reduction(+:total)
    for (int t = 0; t < nt; t++) {
        int64_t c = 0, s = n * t / nt, e = n * (t + 1) / nt;
        count_range(dt, x, s, e, &c);
        total += c;
    }
    *count = total;
    return TPF_OK;
}

#define NZ_WRITE(T, TEST)                                                            \
    { const T *X = (const T *)x;                                                     \
      for (int64_t i = s; i < e; i++) {                                              \
          T v = X[i];                                                                \
          if (TEST) {                                                                \
              int64_t rem = i;                                                       \
              for (int d = ndim - 1; d >= 0; d--) { o[d] = rem % shape[d]; rem /= shape[d]; } \
              o += ndim;                                                             \
          }                                                                          \
      } }

static int write_range(int dt, const void *x, int ndim, const int64_t *shape, int64_t s, int64_t e, int64_t *o) {
    NZ_SWITCH(NZ_WRITE)
    return TPF_OK;
}

/* out [count, ndim] (count from tpf_count_nonzero), in row-major order of x. */
int tpf_where_indices(int dt, const void *x, int ndim, const int64_t *shape, int64_t n, void *out) {
    if (n < 0 || ndim < 0) return TPF_EBADSIZE;
    if (!tpf_dtype_size(dt)) return TPF_EBADDTYPE;
    int nt = TPF_NTHREADS(n);
    int64_t *O = (int64_t *)out;
    if (nt <= 1) return write_range(dt, x, ndim, shape, 0, n, O);
    int64_t counts[256];
    if (nt > 256) nt = 256;
    #pragma omp parallel num_threads(nt)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), T = omp_get_num_threads();
#else
        int t = 0, T = 1;
#endif
        int64_t s = n * t / T, e = n * (t + 1) / T;
        count_range(dt, x, s, e, &counts[t]);
        #pragma omp barrier
        int64_t before = 0;
        for (int u = 0; u < t; u++) before += counts[u];
        write_range(dt, x, ndim, shape, s, e, O + before * ndim);
    }
    return TPF_OK;
}

/* ---- select: out = cond ? a : b, every operand broadcast through strides ---- */
int tpf_select(int64_t elsize, int ndim, const int64_t *shape, const void *cond, const int64_t *cstr,
               const void *a, const int64_t *astr, const void *b, const int64_t *bstr, void *out) {
    if (ndim < 1 || ndim > TPF_MAXDIMS) return TPF_EBADSIZE;
    if (!(elsize == 1 || elsize == 2 || elsize == 4 || elsize == 8 || elsize == 16)) return TPF_EBADARG;
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) { if (shape[d] < 0) return TPF_EBADSIZE; total *= shape[d]; }
    if (total == 0) return TPF_OK;
    int64_t n = shape[ndim - 1], rows = total / n;
    int64_t cs = cstr[ndim - 1], as = astr[ndim - 1], bs = bstr[ndim - 1];
    const uint8_t *C = (const uint8_t *)cond;
    int nt = TPF_NTHREADS(total);
#define SEL(T) { const T *A = (const T *)a + ao, *B = (const T *)b + bo; T *O = (T *)out + r * n; \
                 if (cs == 1 && as == 1 && bs == 1) for (int64_t i = lo; i < hi; i++) O[i] = c[i] ? A[i] : B[i]; \
                 else for (int64_t i = lo; i < hi; i++) O[i] = c[i * cs] ? A[i * as] : B[i * bs]; }
    /* one long row (a flat same-shape select): split it into column blocks so every thread works */
    int64_t nch = (rows < nt && n >= 4096) ? 4 * nt : 1;
    PFOR(task, rows * nch,
        int64_t r = task / nch, ch = task % nch;
        int64_t lo = n * ch / nch, hi = n * (ch + 1) / nch;
        int64_t co = 0, ao = 0, bo = 0, rem = r;
        for (int d = ndim - 2; d >= 0; d--) {
            int64_t i = rem % shape[d]; rem /= shape[d];
            co += i * cstr[d]; ao += i * astr[d]; bo += i * bstr[d];
        }
        const uint8_t *c = C + co;
        switch (elsize) {
        case 1: SEL(uint8_t) break;
        case 2: SEL(uint16_t) break;
        case 4: SEL(uint32_t) break;
        case 8: SEL(uint64_t) break;
        default: SEL(tpf_el16) break;   /* complex128 */
        }
    );
#undef SEL
    return TPF_OK;
}
