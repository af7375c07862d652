/* Batched matrix multiply (csrc/matmul.c on the device): out[b] = op(A[b]) @ op(B[b]),
 * op = transpose when ta/tb is set, a batch stride of 0 broadcasting an operand.
 *
 * Floats: a tiled kernel.  A work-group of 16 x 16 work-items computes a 64 x 64
 * block of C, each work-item a 4 x 4 micro-tile, over 16-deep slices of A and B
 * staged in local memory.  Every output is one sequential sum over k.
 * Integers: one work-item per output, wrapping modulo 2**bits as on the CPU.
 * The launch grid is (ceil(n / 64) * 16, ceil(m / 64) * 16, batches), from batch b0 on.
 */

#define MM_TM 64
#define MM_TN 64
#define MM_TK 16
#define MM_W 4          /* outputs per work-item along m and along n */
#define MM_L 16         /* work-items per work-group along each axis */

/* accumulators (MM_ACC_<T>) take fused multiply-adds: one rounding per step, as BLAS */
#define MM_ACC_float float
#define MM_ACC_double double
#define MM_TILED(SUF, T)                                                                          \
KERNEL matmul_##SUF(int ta, int tb, i64 m, i64 n, i64 k, const G T *A, i64 a_bstride,             \
                    const G T *B, i64 b_bstride, G T *C, i64 b0) {                                \
    LOCAL T As[MM_TK][MM_TM];                                                                     \
    LOCAL T Bs[MM_TK][MM_TN];                                                                     \
    const int tx = LID0(), ty = LID1(), tid = ty * MM_L + tx;                                     \
    const i64 bn = GRP0() * MM_TN, bm = GRP1() * MM_TM, b = GRP2() + b0;                               \
    A += b * a_bstride;                                                                           \
    B += b * b_bstride;                                                                           \
    C += b * m * n;                                                                               \
    const i64 sai = ta ? 1 : k, sap = ta ? m : 1, sbp = tb ? 1 : n, sbj = tb ? k : 1;             \
    MM_ACC_##T acc[MM_W][MM_W];                                                                   \
    for (int u = 0; u < MM_W; u++)                                                                \
        for (int v = 0; v < MM_W; v++) acc[u][v] = 0;                                             \
    for (i64 p0 = 0; p0 < k; p0 += MM_TK) {                                                       \
        for (int l = 0; l < (MM_TK * MM_TM) / (MM_L * MM_L); l++) {                               \
            int e = tid + l * MM_L * MM_L;                                                        \
            int pp, ii;                                                                           \
            if (ta) { ii = e % MM_TM; pp = e / MM_TM; } else { pp = e % MM_TK; ii = e / MM_TK; }  \
            i64 gi = bm + ii, gp = p0 + pp;                                                       \
            As[pp][ii] = (gi < m && gp < k) ? A[gi * sai + gp * sap] : (T)0;                      \
            int jj;                                                                               \
            if (tb) { pp = e % MM_TK; jj = e / MM_TK; } else { jj = e % MM_TN; pp = e / MM_TN; }  \
            i64 gj = bn + jj;                                                                     \
            gp = p0 + pp;                                                                         \
            Bs[pp][jj] = (gj < n && gp < k) ? B[gp * sbp + gj * sbj] : (T)0;                      \
        }                                                                                         \
        BARRIER();                                                                                \
        for (int pp = 0; pp < MM_TK; pp++) {                                                      \
            T a[MM_W], bv[MM_W];                                                                  \
            for (int u = 0; u < MM_W; u++) a[u] = As[pp][ty + u * MM_L];                          \
            for (int v = 0; v < MM_W; v++) bv[v] = Bs[pp][tx + v * MM_L];                         \
            for (int u = 0; u < MM_W; u++)                                                        \
                for (int v = 0; v < MM_W; v++)                                                    \
                    acc[u][v] = fma((MM_ACC_##T)a[u], (MM_ACC_##T)bv[v], acc[u][v]);              \
        }                                                                                         \
        BARRIER();                                                                                \
    }                                                                                             \
    for (int u = 0; u < MM_W; u++) {                                                              \
        i64 gi = bm + ty + u * MM_L;                                                              \
        if (gi >= m) continue;                                                                    \
        for (int v = 0; v < MM_W; v++) {                                                          \
            i64 gj = bn + tx + v * MM_L;                                                          \
            if (gj < n) C[gi * n + gj] = (T)acc[u][v];                                            \
        }                                                                                         \
    }                                                                                             \
}
MM_TILED(f32, float)
#ifdef TPF_FP64
MM_TILED(f64, double)
#endif

/* integers: grid (n, m, batch), one output each */
#define MM_INT(SUF, T, W)                                                                         \
KERNEL matmul_##SUF(int ta, int tb, i64 m, i64 n, i64 k, const G T *A, i64 a_bstride,             \
                    const G T *B, i64 b_bstride, G T *C, i64 b0) {                                \
    i64 j = GID0(), i = GID1(), b = GID2() + b0;                                                       \
    if (i >= m || j >= n) return;                                                                 \
    A += b * a_bstride;                                                                           \
    B += b * b_bstride;                                                                           \
    const i64 sai = ta ? 1 : k, sap = ta ? m : 1, sbp = tb ? 1 : n, sbj = tb ? k : 1;             \
    W acc = 0;                                                                                    \
    for (i64 p = 0; p < k; p++) acc += (W)A[i * sai + p * sap] * (W)B[p * sbp + j * sbj];         \
    C[b * m * n + i * n + j] = (T)acc;                                                            \
}
MM_INT(i8, i8, u32)
MM_INT(u8, u8, u32)
MM_INT(i16, i16, u32)
MM_INT(i32, i32, u32)
MM_INT(i64, i64, u64)

/* CPU-type OpenCL devices (pocl): explicit vectors instead of local-memory tiles, which a
 * CPU driver runs as plain loops around barriers.  A work-item computes an 8 x W block of C
 * (W = 16 floats or 8 doubles: one AVX-512 register per row), streaming rows of B and
 * broadcasting elements of A; B arrives untransposed (the host transposes it first when
 * tb).  Edge blocks take a scalar path with the same sums in the same order. */
#ifdef __OPENCL_VERSION__
#define MM_VEC(SUF, T, VT, W, VLOAD, VSTORE)                                                      \
KERNEL matmul_vec_##SUF(int ta, i64 m, i64 n, i64 k, const G T *A, i64 a_bstride, const G T *B,   \
                        i64 b_bstride, G T *C, i64 b0) {                                          \
    const i64 j0 = GID0() * W, i0 = GID1() * 8, b = GID2() + b0;                                  \
    if (j0 >= n || i0 >= m) return;                                                               \
    A += b * a_bstride;                                                                           \
    B += b * b_bstride;                                                                           \
    C += b * m * n;                                                                               \
    const i64 sai = ta ? 1 : k, sap = ta ? m : 1;                                                 \
    if (j0 + W <= n && i0 + 8 <= m) {                                                             \
        VT c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;                         \
        const G T *a = A + i0 * sai;                                                              \
        for (i64 p = 0; p < k; p++) {                                                             \
            const VT bv = VLOAD(0, B + p * n + j0);                                               \
            const G T *ap = a + p * sap;                                                          \
            c0 = fma((VT)(ap[0]), bv, c0);                                                        \
            c1 = fma((VT)(ap[sai]), bv, c1);                                                      \
            c2 = fma((VT)(ap[2 * sai]), bv, c2);                                                  \
            c3 = fma((VT)(ap[3 * sai]), bv, c3);                                                  \
            c4 = fma((VT)(ap[4 * sai]), bv, c4);                                                  \
            c5 = fma((VT)(ap[5 * sai]), bv, c5);                                                  \
            c6 = fma((VT)(ap[6 * sai]), bv, c6);                                                  \
            c7 = fma((VT)(ap[7 * sai]), bv, c7);                                                  \
        }                                                                                         \
        G T *c = C + i0 * n + j0;                                                                 \
        VSTORE(c0, 0, c); VSTORE(c1, 0, c + n); VSTORE(c2, 0, c + 2 * n); VSTORE(c3, 0, c + 3 * n); \
        VSTORE(c4, 0, c + 4 * n); VSTORE(c5, 0, c + 5 * n); VSTORE(c6, 0, c + 6 * n);              \
        VSTORE(c7, 0, c + 7 * n);                                                                 \
    } else {                                                                                      \
        for (i64 u = 0; u < 8 && i0 + u < m; u++)                                                 \
            for (i64 v = 0; v < W && j0 + v < n; v++) {                                          \
                T acc = 0;                                                                        \
                for (i64 p = 0; p < k; p++) acc = fma(A[(i0 + u) * sai + p * sap], B[p * n + j0 + v], acc); \
                C[(i0 + u) * n + j0 + v] = acc;                                                   \
            }                                                                                     \
    }                                                                                             \
}
MM_VEC(f32, float, float16, 16, vload16, vstore16)
#ifdef TPF_FP64
MM_VEC(f64, double, double8, 8, vload8, vstore8)
#endif
#endif
