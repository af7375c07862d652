/* Convolution and pooling over NHWC tensors, float32 and float64 (csrc/conv.c on the
 * device).  The geometry travels by value:
 *
 *   geom = {n, h, w, c, kh, kw, oc, oh, ow, sh, sw, dh, dw, pt, pl}
 *
 * Direct kernels, one work-item per output element, each a gather (no atomics, no
 * scratch): conv2d sums its receptive field; the input gradient sums, for each input
 * pixel, the output pixels whose windows cover it; the filter gradient sums over all
 * output pixels.  Pool gradients add dy in the CPU's window order, so they (and the
 * pools) agree with the CPU bit for bit.
 */

#define GEOM                                                                                        \
    const i64 N = geom.g[0], H = geom.g[1], W = geom.g[2], C = geom.g[3], KH = geom.g[4],           \
              KW = geom.g[5], OC = geom.g[6], OH = geom.g[7], OW = geom.g[8], SH = geom.g[9],       \
              SW = geom.g[10], DH = geom.g[11], DW = geom.g[12], PT = geom.g[13], PL = geom.g[14];  \
    (void)N; (void)H; (void)W; (void)C; (void)KH; (void)KW; (void)OC; (void)OH; (void)OW;           \
    (void)SH; (void)SW; (void)DH; (void)DW; (void)PT; (void)PL;

/* the output positions o (count no) whose tap i (stride s, dilation d, padding p) reads input
 * position x: o * s - p + i * d == x  ->  o = (x + p - i * d) / s when divisible */
DEV int tap_source(i64 x, i64 i, i64 s, i64 d, i64 p, i64 no, i64 *o) {
    i64 t = x + p - i * d;
    if (t < 0 || t % s) return 0;
    *o = t / s;
    return *o < no;
}

#define CONV(DS, T)                                                                                 \
KERNEL conv2d_##DS(const G T *X, const G T *Wt, G T *Y, geom_t geom) {                              \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * OH * OW * OC) return;                                                              \
    i64 o = e % OC, r = e / OC, ow = r % OW, oh = (r / OW) % OH, n = r / (OW * OH);                 \
    T acc = 0;                                                                                      \
    for (i64 i = 0; i < KH; i++) {                                                                  \
        i64 ih = oh * SH - PT + i * DH;                                                             \
        if (ih < 0 || ih >= H) continue;                                                            \
        for (i64 j = 0; j < KW; j++) {                                                              \
            i64 iw = ow * SW - PL + j * DW;                                                         \
            if (iw < 0 || iw >= W) continue;                                                        \
            const G T *xp = X + ((n * H + ih) * W + iw) * C;                                        \
            const G T *wp = Wt + (i * KW + j) * C * OC + o;                                         \
            for (i64 q = 0; q < C; q++) acc += xp[q] * wp[q * OC];                                  \
        }                                                                                           \
    }                                                                                               \
    Y[e] = acc;                                                                                     \
}                                                                                                   \
KERNEL conv2d_backprop_input_##DS(const G T *DY, const G T *Wt, G T *DX, geom_t geom) {             \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * H * W * C) return;                                                                 \
    i64 q = e % C, r = e / C, iw = r % W, ih = (r / W) % H, n = r / (W * H);                        \
    T acc = 0;                                                                                      \
    for (i64 i = 0; i < KH; i++) {                                                                  \
        i64 oh;                                                                                     \
        if (!tap_source(ih, i, SH, DH, PT, OH, &oh)) continue;                                      \
        for (i64 j = 0; j < KW; j++) {                                                              \
            i64 ow;                                                                                 \
            if (!tap_source(iw, j, SW, DW, PL, OW, &ow)) continue;                                  \
            const G T *g = DY + ((n * OH + oh) * OW + ow) * OC;                                     \
            const G T *wp = Wt + ((i * KW + j) * C + q) * OC;                                       \
            for (i64 o = 0; o < OC; o++) acc += g[o] * wp[o];                                       \
        }                                                                                           \
    }                                                                                               \
    DX[e] = acc;                                                                                    \
}                                                                                                   \
KERNEL conv2d_backprop_filter_##DS(const G T *X, const G T *DY, G T *DWt, geom_t geom) {            \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= KH * KW * C * OC) return;                                                              \
    i64 o = e % OC, q = (e / OC) % C, j = (e / (OC * C)) % KW, i = e / (OC * C * KW);               \
    T acc = 0;                                                                                      \
    for (i64 n = 0; n < N; n++)                                                                     \
        for (i64 oh = 0; oh < OH; oh++) {                                                           \
            i64 ih = oh * SH - PT + i * DH;                                                         \
            if (ih < 0 || ih >= H) continue;                                                        \
            for (i64 ow = 0; ow < OW; ow++) {                                                       \
                i64 iw = ow * SW - PL + j * DW;                                                     \
                if (iw < 0 || iw >= W) continue;                                                    \
                acc += X[((n * H + ih) * W + iw) * C + q] * DY[((n * OH + oh) * OW + ow) * OC + o]; \
            }                                                                                       \
        }                                                                                           \
    DWt[e] = acc;                                                                                   \
}                                                                                                   \
/* depthwise: filter [kh, kw, c, m], out channel c * m + jm reads input channel c */               \
KERNEL depthwise_conv2d_##DS(const G T *X, const G T *Wt, G T *Y, geom_t geom) {                    \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * OH * OW * OC) return;                                                              \
    const i64 M = OC / C;                                                                           \
    i64 o = e % OC, r = e / OC, ow = r % OW, oh = (r / OW) % OH, n = r / (OW * OH), q = o / M;      \
    T acc = 0;                                                                                      \
    for (i64 i = 0; i < KH; i++) {                                                                  \
        i64 ih = oh * SH - PT + i * DH;                                                             \
        if (ih < 0 || ih >= H) continue;                                                            \
        for (i64 j = 0; j < KW; j++) {                                                              \
            i64 iw = ow * SW - PL + j * DW;                                                         \
            if (iw < 0 || iw >= W) continue;                                                        \
            acc += X[((n * H + ih) * W + iw) * C + q] * Wt[(i * KW + j) * OC + o];                  \
        }                                                                                           \
    }                                                                                               \
    Y[e] = acc;                                                                                     \
}                                                                                                   \
KERNEL depthwise_conv2d_backprop_input_##DS(const G T *DY, const G T *Wt, G T *DX, geom_t geom) {   \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * H * W * C) return;                                                                 \
    const i64 M = OC / C;                                                                           \
    i64 q = e % C, r = e / C, iw = r % W, ih = (r / W) % H, n = r / (W * H);                        \
    T acc = 0;                                                                                      \
    for (i64 i = 0; i < KH; i++) {                                                                  \
        i64 oh;                                                                                     \
        if (!tap_source(ih, i, SH, DH, PT, OH, &oh)) continue;                                      \
        for (i64 j = 0; j < KW; j++) {                                                              \
            i64 ow;                                                                                 \
            if (!tap_source(iw, j, SW, DW, PL, OW, &ow)) continue;                                  \
            const G T *g = DY + ((n * OH + oh) * OW + ow) * OC + q * M;                             \
            const G T *wp = Wt + (i * KW + j) * OC + q * M;                                         \
            for (i64 jm = 0; jm < M; jm++) acc += g[jm] * wp[jm];                                   \
        }                                                                                           \
    }                                                                                               \
    DX[e] = acc;                                                                                    \
}                                                                                                   \
KERNEL depthwise_conv2d_backprop_filter_##DS(const G T *X, const G T *DY, G T *DWt, geom_t geom) {  \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= KH * KW * OC) return;                                                                  \
    const i64 M = OC / C;                                                                           \
    i64 o = e % OC, j = (e / OC) % KW, i = e / (OC * KW), q = o / M;                                \
    T acc = 0;                                                                                      \
    for (i64 n = 0; n < N; n++)                                                                     \
        for (i64 oh = 0; oh < OH; oh++) {                                                           \
            i64 ih = oh * SH - PT + i * DH;                                                         \
            if (ih < 0 || ih >= H) continue;                                                        \
            for (i64 ow = 0; ow < OW; ow++) {                                                       \
                i64 iw = ow * SW - PL + j * DW;                                                     \
                if (iw < 0 || iw >= W) continue;                                                    \
                acc += X[((n * H + ih) * W + iw) * C + q] * DY[((n * OH + oh) * OW + ow) * OC + o]; \
            }                                                                                       \
        }                                                                                           \
    DWt[e] = acc;                                                                                   \
}

/* ---- pooling: windows clipped to the input ------------------------------------------- */

/* the window of output (oh, ow): rows [h0, h1), columns [w0, w1) */
#define WINDOW(oh, ow)                                                                              \
    i64 hs = (oh) * SH - PT, ws = (ow) * SW - PL;                                                   \
    i64 h0 = hs < 0 ? 0 : hs, h1 = hs + KH < H ? hs + KH : H;                                       \
    i64 w0 = ws < 0 ? 0 : ws, w1 = ws + KW < W ? ws + KW : W;

#define POOLS(DS, T)                                                                                \
/* the winner of channel q in the window of output (n, oh, ow): the first largest value in      */ \
/* row-major order (NaN never wins), the window's first element when nothing beats -inf;        */ \
/* -1 for an empty window                                                                       */ \
DEV i64 winner_##DS(const G T *X, geom_t geom, i64 n, i64 oh, i64 ow, i64 q) {                      \
    GEOM                                                                                            \
    WINDOW(oh, ow)                                                                                  \
    if (!(h0 < h1 && w0 < w1)) return -1;                                                           \
    i64 at = ((n * H + h0) * W + w0) * C + q;                                                       \
    T best = -TPF_INF;                                                                              \
    for (i64 ih = h0; ih < h1; ih++)                                                                \
        for (i64 iw = w0; iw < w1; iw++) {                                                          \
            i64 p = ((n * H + ih) * W + iw) * C + q;                                                \
            if (X[p] > best) { best = X[p]; at = p; }                                               \
        }                                                                                           \
    return at;                                                                                      \
}                                                                                                   \
KERNEL max_pool2d_##DS(const G T *X, G T *Y, geom_t geom) {                                         \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * OH * OW * C) return;                                                               \
    i64 q = e % C, r = e / C, ow = r % OW, oh = (r / OW) % OH, n = r / (OW * OH);                   \
    WINDOW(oh, ow)                                                                                  \
    T best = -TPF_INF;                                                                              \
    for (i64 ih = h0; ih < h1; ih++)                                                                \
        for (i64 iw = w0; iw < w1; iw++) {                                                          \
            T v = X[((n * H + ih) * W + iw) * C + q];                                               \
            best = v > best ? v : best;                                                             \
        }                                                                                           \
    Y[e] = best;                                                                                    \
}                                                                                                   \
/* dx at input (n, ih, iw, q): dy of every window covering it whose winner it is, in window order */ \
KERNEL max_pool2d_grad_##DS(const G T *X, const G T *DY, G T *DX, geom_t geom) {                    \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * H * W * C) return;                                                                 \
    i64 q = e % C, r = e / C, iw = r % W, ih = (r / W) % H, n = r / (W * H);                        \
    i64 oh0 = ih + PT - KH + 1, ow0 = iw + PL - KW + 1;                                             \
    oh0 = oh0 <= 0 ? 0 : (oh0 + SH - 1) / SH;                                                       \
    ow0 = ow0 <= 0 ? 0 : (ow0 + SW - 1) / SW;                                                       \
    i64 oh1 = (ih + PT) / SH, ow1 = (iw + PL) / SW;                                                 \
    T acc = 0;                                                                                      \
    for (i64 oh = oh0; oh <= oh1 && oh < OH; oh++)                                                  \
        for (i64 ow = ow0; ow <= ow1 && ow < OW; ow++)                                              \
            if (winner_##DS(X, geom, n, oh, ow, q) == e) acc += DY[((n * OH + oh) * OW + ow) * C + q]; \
    DX[e] = acc;                                                                                    \
}                                                                                                   \
KERNEL max_pool2d_grad_grad_##DS(const G T *X, const G T *GGX, G T *GGY, geom_t geom) {             \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * OH * OW * C) return;                                                               \
    i64 q = e % C, r = e / C, ow = r % OW, oh = (r / OW) % OH, n = r / (OW * OH);                   \
    i64 at = winner_##DS(X, geom, n, oh, ow, q);                                                    \
    GGY[e] = at >= 0 ? GGX[at] : (T)0;                                                              \
}                                                                                                   \
KERNEL avg_pool2d_##DS(const G T *X, G T *Y, geom_t geom) {                                         \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * OH * OW * C) return;                                                               \
    i64 q = e % C, r = e / C, ow = r % OW, oh = (r / OW) % OH, n = r / (OW * OH);                   \
    WINDOW(oh, ow)                                                                                  \
    T acc = 0;                                                                                      \
    for (i64 ih = h0; ih < h1; ih++)                                                                \
        for (i64 iw = w0; iw < w1; iw++) acc += X[((n * H + ih) * W + iw) * C + q];                 \
    i64 cnt = (h1 - h0) * (w1 - w0);                                                                \
    T inv = cnt > 0 ? (T)1 / (T)cnt : (T)0;                                                         \
    Y[e] = acc * inv;                                                                               \
}                                                                                                   \
KERNEL avg_pool2d_grad_##DS(const G T *DY, G T *DX, geom_t geom) {                                  \
    GEOM                                                                                            \
    i64 e = GID0();                                                                                 \
    if (e >= N * H * W * C) return;                                                                 \
    i64 q = e % C, r = e / C, iw = r % W, ih = (r / W) % H, n = r / (W * H);                        \
    i64 oh0 = ih + PT - KH + 1, ow0 = iw + PL - KW + 1;                                             \
    oh0 = oh0 <= 0 ? 0 : (oh0 + SH - 1) / SH;                                                       \
    ow0 = ow0 <= 0 ? 0 : (ow0 + SW - 1) / SW;                                                       \
    i64 oh1 = (ih + PT) / SH, ow1 = (iw + PL) / SW;                                                 \
    T acc = 0;                                                                                      \
    for (i64 oh = oh0; oh <= oh1 && oh < OH; oh++)                                                  \
        for (i64 ow = ow0; ow <= ow1 && ow < OW; ow++) {                                            \
            WINDOW(oh, ow)                                                                          \
            i64 cnt = (h1 - h0) * (w1 - w0);                                                        \
            if (cnt <= 0) continue;                                                                 \
            T inv = (T)1 / (T)cnt;                                                                  \
            acc += DY[((n * OH + oh) * OW + ow) * C + q] * inv;                                     \
        }                                                                                           \
    DX[e] = acc;                                                                                    \
}

CONV(f32, float)
POOLS(f32, float)
#ifdef TPF_FP64
CONV(f64, double)
POOLS(f64, double)
#endif

/* ---- im2col / col2im: conv2d and its gradients as matrix products -------------------------------
 * col [rows, kh * kw * c] for the output pixels of images [n0, n0 + rows / (oh * ow)): row r holds
 * the receptive field of pixel r (zeros outside the input); col2im sums a column matrix back into
 * the input pixels it came from (a gather: each input element adds up its taps). */
#define IM2COL(DS, T)                                                                               \
/* one work-item per output pixel: its kh * kw runs of c channels, copied or zeroed             */ \
KERNEL im2col_##DS(const G T *X, G T *COL, geom_t geom, i64 n0, i64 rows) {                         \
    GEOM                                                                                            \
    const i64 K = KH * KW * C;                                                                      \
    i64 r = GID0();                                                                                 \
    if (r >= rows) return;                                                                          \
    i64 rr = r + n0 * OH * OW, n = rr / (OW * OH), rem = rr - n * OW * OH, oh = rem / OW, ow = rem - oh * OW; \
    G T *dst = COL + r * K;                                                                         \
    const G T *xn = X + n * H * W * C;                                                              \
    for (i64 i = 0; i < KH; i++) {                                                                  \
        i64 ih = oh * SH - PT + i * DH;                                                             \
        for (i64 j = 0; j < KW; j++, dst += C) {                                                    \
            i64 iw = ow * SW - PL + j * DW;                                                         \
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) {                                           \
                const G T *src = xn + (ih * W + iw) * C;                                            \
                for (i64 q = 0; q < C; q++) dst[q] = src[q];                                        \
            } else {                                                                                \
                for (i64 q = 0; q < C; q++) dst[q] = 0;                                             \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
}                                                                                                   \
/* one work-item per input pixel of images [n0, n0 + nimg): every channel's taps summed */         \
KERNEL col2im_##DS(const G T *DCOL, G T *DX, geom_t geom, i64 n0, i64 nimg) {                       \
    GEOM                                                                                            \
    const i64 K = KH * KW * C;                                                                      \
    i64 e = GID0();                                                                                 \
    if (e >= nimg * H * W) return;                                                                  \
    i64 nl = e / (H * W), rem = e - nl * H * W, ih = rem / W, iw = rem - ih * W;                    \
    G T *dx = DX + (n0 * H * W + e) * C;                                                            \
    for (i64 q = 0; q < C; q++) dx[q] = 0;                                                          \
    for (i64 i = 0; i < KH; i++) {                                                                  \
        i64 oh;                                                                                     \
        if (!tap_source(ih, i, SH, DH, PT, OH, &oh)) continue;                                      \
        for (i64 j = 0; j < KW; j++) {                                                              \
            i64 ow;                                                                                 \
            if (!tap_source(iw, j, SW, DW, PL, OW, &ow)) continue;                                  \
            const G T *src = DCOL + ((nl * OH + oh) * OW + ow) * K + (i * KW + j) * C;              \
            for (i64 q = 0; q < C; q++) dx[q] += src[q];                                            \
        }                                                                                           \
    }                                                                                               \
}
IM2COL(f32, float)
#ifdef TPF_FP64
IM2COL(f64, double)
#endif
