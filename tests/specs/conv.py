"""Specs of convolution and pooling (NHWC) against a plain NumPy reference.

The reference is written the long way: pad, then one einsum per filter tap over a
strided view (convolutions), or one window at a time (pooling), in float64.  The
SAME padding split is TensorFlow's: ``out = ceil(in / stride)``, ``total = max((out - 1)
* stride + dilated_kernel - in, 0)``, ``total // 2`` before and the rest after.
"""
from __future__ import annotations

import numpy as np
from opspec import HALF, Spec, uniform

F64 = np.float64


# ---- geometry ------------------------------------------------------------------

def _hw(v):
    """strides/dilations/ksize as (h, w): an int, [v], [h, w] or [1, h, w, 1]."""
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = list(v)
    if len(v) == 4:
        return v[1], v[2]
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


def _axis_pads(padding):
    """Per spatial axis: 'SAME', 'VALID' or (before, after)."""
    if isinstance(padding, str):
        return padding, padding
    pairs = [tuple(p) for p in padding]
    if len(pairs) == 4:
        pairs = pairs[1:3]
    return pairs[0], pairs[1]


def _out_dim(size, k, s, d, pad):
    """(output size, pad before, pad after) along one axis."""
    ek = (k - 1) * d + 1
    if pad == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + ek - size, 0)
        return out, total // 2, total - total // 2
    before, after = (0, 0) if pad == "VALID" else pad
    return (size + before + after - ek) // s + 1, before, after


def _geometry(xs, ks, strides, padding, dilations=1):
    (sh, sw), (dh, dw) = _hw(strides), _hw(dilations)
    ph, pw = _axis_pads(padding)
    oh, pt, pb = _out_dim(xs[1], ks[0], sh, dh, ph)
    ow, pl, pr = _out_dim(xs[2], ks[1], sw, dw, pw)
    return {"sh": sh, "sw": sw, "dh": dh, "dw": dw, "oh": oh, "ow": ow,
            "pads": ((0, 0), (pt, pb), (pl, pr), (0, 0))}


def _taps(g, kh, kw):
    """(i, j, slice_h, slice_w): the strided view of the padded input each filter tap reads."""
    for i in range(kh):
        for j in range(kw):
            yield (i, j, slice(i * g["dh"], i * g["dh"] + (g["oh"] - 1) * g["sh"] + 1, g["sh"]),
                   slice(j * g["dw"], j * g["dw"] + (g["ow"] - 1) * g["sw"] + 1, g["sw"]))


def _crop(xp, pads, xs):
    (_, _), (pt, _), (pl, _), (_, _) = pads
    return xp[:, pt:pt + xs[1], pl:pl + xs[2], :]


# ---- NumPy references ---------------------------------------------------------------

def np_conv2d(x, w, strides, padding, dilations=1, depthwise=False):
    """Cross-correlation, NHWC input, HWIO filter (depthwise: [kh, kw, c, multiplier])."""
    g = _geometry(x.shape, w.shape, strides, padding, dilations)
    n, c = x.shape[0], x.shape[3]
    oc = c * w.shape[3] if depthwise else w.shape[3]
    out = np.zeros((n, g["oh"], g["ow"], oc), F64)
    if out.size == 0:
        return out.astype(x.dtype)
    xp = np.pad(x.astype(F64), g["pads"])
    for i, j, sh, sw in _taps(g, w.shape[0], w.shape[1]):
        patch, tap = xp[:, sh, sw, :], w[i, j].astype(F64)
        if depthwise:
            out += np.einsum("nhwc,cm->nhwcm", patch, tap).reshape(out.shape)
        else:
            out += np.einsum("nhwc,co->nhwo", patch, tap)
    return out.astype(x.dtype)


def np_conv2d_backprop_input(input_sizes, w, dy, strides, padding, dilations=1, depthwise=False):
    xs = tuple(input_sizes)
    g = _geometry(xs, w.shape, strides, padding, dilations)
    pads = g["pads"]
    dxp = np.zeros((xs[0], xs[1] + sum(pads[1]), xs[2] + sum(pads[2]), xs[3]), F64)
    if dy.size:
        dy64 = dy.astype(F64)
        if depthwise:
            dy64 = dy64.reshape(dy.shape[:3] + (xs[3], w.shape[3]))
        for i, j, sh, sw in _taps(g, w.shape[0], w.shape[1]):
            tap = w[i, j].astype(F64)
            if depthwise:
                dxp[:, sh, sw, :] += np.einsum("nhwcm,cm->nhwc", dy64, tap)
            else:
                dxp[:, sh, sw, :] += np.einsum("nhwo,co->nhwc", dy64, tap)
    return _crop(dxp, pads, xs).astype(dy.dtype)


def np_conv2d_backprop_filter(x, filter_sizes, dy, strides, padding, dilations=1, depthwise=False):
    ws = tuple(filter_sizes)
    g = _geometry(x.shape, ws, strides, padding, dilations)
    dw = np.zeros(ws, F64)
    if dy.size:
        xp = np.pad(x.astype(F64), g["pads"])
        dy64 = dy.astype(F64)
        if depthwise:
            dy64 = dy64.reshape(dy.shape[:3] + (x.shape[3], ws[3]))
        for i, j, sh, sw in _taps(g, ws[0], ws[1]):
            patch = xp[:, sh, sw, :]
            dw[i, j] = np.einsum("nhwc,nhwcm->cm" if depthwise else "nhwc,nhwo->co", patch, dy64)
    return dw.astype(x.dtype)


def _windows(xs, ksize, strides, padding):
    """For each output position (n-independent): (i, j, rows, cols) of the window clipped to the input."""
    kh, kw = _hw(ksize)
    g = _geometry(xs, (kh, kw), strides, padding)
    pt, pl = g["pads"][1][0], g["pads"][2][0]
    for i in range(g["oh"]):
        for j in range(g["ow"]):
            h0, w0 = i * g["sh"] - pt, j * g["sw"] - pl
            yield i, j, slice(max(h0, 0), min(h0 + kh, xs[1])), slice(max(w0, 0), min(w0 + kw, xs[2]))


def _pooled_shape(xs, ksize, strides, padding):
    g = _geometry(xs, _hw(ksize), strides, padding)
    return (xs[0], g["oh"], g["ow"], xs[3])


def np_max_pool(x, ksize, strides, padding):
    out = np.zeros(_pooled_shape(x.shape, ksize, strides, padding), F64)
    for i, j, rows, cols in _windows(x.shape, ksize, strides, padding):
        out[:, i, j, :] = x[:, rows, cols, :].astype(F64).max(axis=(1, 2))
    return out.astype(x.dtype)


def _argmax_positions(x, ksize, strides, padding):
    """(n, i, j, c) -> flat index into x of the window's first maximum (row-major order)."""
    n, c = x.shape[0], x.shape[3]
    if x.size == 0:
        return
    for i, j, rows, cols in _windows(x.shape, ksize, strides, padding):
        win = x[:, rows, cols, :].astype(F64)
        flat = win.reshape(n, -1, c)
        best = flat.argmax(axis=1)                       # first maximum
        hh, ww = np.divmod(best, win.shape[2])
        for b in range(n):
            for ch in range(c):
                yield b, i, j, ch, (b, rows.start + hh[b, ch], cols.start + ww[b, ch], ch)


def np_max_pool_grad(x, y, g, ksize, strides, padding):
    dx = np.zeros(x.shape, F64)
    for b, i, j, ch, at in _argmax_positions(x, ksize, strides, padding):
        dx[at] += g[b, i, j, ch]
    return dx.astype(x.dtype)


def np_max_pool_grad_grad(x, y, gg, ksize, strides, padding):
    out = np.zeros(y.shape, F64)
    for b, i, j, ch, at in _argmax_positions(x, ksize, strides, padding):
        out[b, i, j, ch] = gg[at]
    return out.astype(x.dtype)


def np_avg_pool(x, ksize, strides, padding):
    out = np.zeros(_pooled_shape(x.shape, ksize, strides, padding), F64)
    for i, j, rows, cols in _windows(x.shape, ksize, strides, padding):
        out[:, i, j, :] = x[:, rows, cols, :].astype(F64).mean(axis=(1, 2))
    return out.astype(x.dtype)


def np_avg_pool_grad(xs, g, ksize, strides, padding):
    dx = np.zeros(tuple(xs), F64)
    for i, j, rows, cols in _windows(tuple(xs), ksize, strides, padding):
        count = (rows.stop - rows.start) * (cols.stop - cols.start)
        dx[:, rows, cols, :] += g[:, i:i + 1, j:j + 1, :].astype(F64) / count
    return dx.astype(g.dtype)


# ---- samplers --------------------------------------------------------------------

# (input shape, filter shape, strides, padding, dilations): the named corners, then random draws
_CONV_FIXED = [
    ((2, 5, 5, 3), (3, 3, 3, 4), 1, "VALID", 1),
    ((2, 5, 5, 3), (3, 3, 3, 4), 1, "SAME", 1),
    ((1, 7, 6, 2), (3, 2, 2, 3), (2, 3), "SAME", 1),              # odd totals: more padding after
    ((1, 8, 8, 2), (2, 2, 2, 2), [1, 2, 2, 1], "SAME", 1),        # even input, stride 2: no padding
    ((1, 6, 6, 1), (4, 4, 1, 2), 1, "SAME", 1),                   # even kernel: total 3 -> 1 before, 2 after
    ((2, 9, 7, 2), (3, 3, 2, 2), 1, "SAME", 2),                   # dilations
    ((1, 9, 9, 1), (3, 3, 1, 2), 2, "VALID", [2, 1]),             # dilations with strides
    ((1, 5, 6, 2), (2, 3, 2, 3), 1, [[0, 0], [1, 2], [0, 1], [0, 0]], 1),  # explicit padding
    ((1, 4, 5, 2), (3, 3, 2, 1), 2, [[2, 0], [1, 1]], 1),         # explicit, short form
    ((2, 7, 8, 5), (3, 2, 5, 3), 1, [[0, 0], [2, 0], [1, 3], [0, 0]], [2, 3]),  # transposed-conv gradient path
    ((1, 4, 4, 4), (2, 2, 4, 2), 1, [[0, 0], [3, 1], [0, 4], [0, 0]], 1),       # padding beyond the kernel
    ((3, 4, 4, 5), (1, 1, 5, 3), 1, "VALID", 1),                  # pointwise (no im2col)
    ((1, 3, 3, 1), (3, 3, 1, 1), 1, "VALID", 1),                  # kernel == input
    ((0, 5, 5, 2), (3, 3, 2, 3), 1, "SAME", 1),                   # empty batch
    ((2, 4, 4, 0), (3, 3, 0, 2), 1, "SAME", 1),                   # no input channels: zeros
    ((1, 3, 3, 2), (3, 3, 2, 0), 1, "VALID", 1),                  # no output channels
    ((4, 12, 12, 8), (3, 3, 8, 16), 1, "SAME", 1),                # big enough for the threaded blocks
    ((1, 6, 6, 64), (3, 3, 64, 40), 1, "SAME", 1),                # big gemm: BLAS-threaded path
]


def _random_geometry(rng):
    kh, kw = rng.integers(1, 5, size=2)
    dh, dw = rng.integers(1, 3, size=2)
    padding = ["SAME", "VALID", "explicit"][rng.integers(0, 3)]
    if padding == "explicit":
        padding = [[0, 0], [int(rng.integers(0, 3)), int(rng.integers(0, 3))],
                   [int(rng.integers(0, 3)), int(rng.integers(0, 3))], [0, 0]]
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    h, w = int(ekh + rng.integers(0, 5)), int(ekw + rng.integers(0, 5))
    strides = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    xs = (int(rng.integers(1, 4)), h, w, int(rng.integers(1, 5)))
    ws = (int(kh), int(kw), xs[3], int(rng.integers(1, 5)))
    return xs, ws, strides, padding, [int(dh), int(dw)]


def _conv_geometries(rng, n_random=8):
    return _CONV_FIXED + [_random_geometry(rng) for _ in range(n_random)]


def _kw(strides, padding, dilations):
    return {"strides": strides, "padding": padding, "dilations": dilations}


def _conv_sample(rng, dtype):
    return [((uniform(rng, xs, dtype), uniform(rng, ws, dtype)), _kw(s, p, d))
            for xs, ws, s, p, d in _conv_geometries(rng)]


def _dy_shape(xs, ws, s, p, d, depthwise=False):
    g = _geometry(xs, ws, s, p, d)
    return (xs[0], g["oh"], g["ow"], xs[3] * ws[3] if depthwise else ws[3])


def _backprop_input_sample(rng, dtype, depthwise=False):
    return [((list(xs), uniform(rng, ws, dtype), uniform(rng, _dy_shape(xs, ws, s, p, d, depthwise), dtype)),
             _kw(s, p, d)) for xs, ws, s, p, d in _conv_geometries(rng)]


def _backprop_filter_sample(rng, dtype, depthwise=False):
    return [((uniform(rng, xs, dtype), list(ws), uniform(rng, _dy_shape(xs, ws, s, p, d, depthwise), dtype)),
             _kw(s, p, d)) for xs, ws, s, p, d in _conv_geometries(rng)]


def _depthwise_geometries(rng):
    fixed = [
        ((2, 5, 5, 3), (3, 3, 3, 1), [1, 1, 1, 1], "SAME", 1),
        ((1, 6, 7, 2), (3, 2, 2, 3), [1, 2, 2, 1], "VALID", 1),
        ((1, 8, 8, 4), (3, 3, 4, 2), 1, "SAME", [2, 2]),
        ((2, 5, 4, 2), (2, 2, 2, 1), 1, [[0, 0], [1, 0], [0, 2], [0, 0]], 1),
        ((0, 4, 4, 2), (3, 3, 2, 2), 1, "SAME", 1),
        ((4, 16, 16, 8), (3, 3, 8, 2), 1, "SAME", 1),             # threaded
    ]
    rand = []
    for _ in range(6):
        xs, ws, s, p, d = _random_geometry(rng)
        rand.append((xs, (ws[0], ws[1], xs[3], int(rng.integers(1, 3))), s, p, d))
    return fixed + rand


def _depthwise_sample(rng, dtype):
    return [((uniform(rng, xs, dtype), uniform(rng, ws, dtype)), _kw(s, p, d))
            for xs, ws, s, p, d in _depthwise_geometries(rng)]


def _depthwise_input_sample(rng, dtype):
    return [((list(xs), uniform(rng, ws, dtype), uniform(rng, _dy_shape(xs, ws, s, p, d, True), dtype)),
             _kw(s, p, d)) for xs, ws, s, p, d in _depthwise_geometries(rng)]


def _depthwise_filter_sample(rng, dtype):
    return [((uniform(rng, xs, dtype), list(ws), uniform(rng, _dy_shape(xs, ws, s, p, d, True), dtype)),
             _kw(s, p, d)) for xs, ws, s, p, d in _depthwise_geometries(rng)]


def _conv1d_sample(rng, dtype):
    cases = [((2, 9, 3), (3, 3, 4), 1, "VALID", 1), ((1, 10, 2), (4, 2, 3), 2, "SAME", 1),
             ((2, 11, 2), (3, 2, 2), [1], "SAME", 2), ((1, 7, 1), (2, 1, 2), 1, [[0, 0], [2, 1], [0, 0]], 1),
             ((0, 5, 2), (3, 2, 2), 1, "SAME", 1)]
    return [((uniform(rng, xs, dtype), uniform(rng, ws, dtype)), {"stride": s, "padding": p, "dilations": d})
            for xs, ws, s, p, d in cases]


def _conv2d_transpose_sample(rng, dtype):
    cases = []
    for xs, ws, s, p, d in _conv_geometries(rng, 4):
        dy = uniform(rng, _dy_shape(xs, ws, s, p, d), dtype)
        cases.append(((dy, uniform(rng, ws, dtype), list(xs)), _kw(s, p, d)))
    return cases


# (input shape, ksize, strides, padding)
_POOL_FIXED = [
    ((2, 4, 4, 3), 2, 2, "VALID"),
    ((2, 5, 5, 3), 2, 2, "SAME"),                  # the last window hangs over: padding not counted
    ((1, 7, 6, 2), [3, 2], [2, 1], "SAME"),
    ((1, 6, 6, 1), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    ((2, 5, 4, 2), 3, 1, "VALID"),
    ((1, 3, 3, 2), 3, 3, "SAME"),
    ((1, 4, 5, 2), [2], [3], "SAME"),
    ((0, 4, 4, 2), 2, 2, "VALID"),
    ((2, 3, 3, 0), 2, 1, "SAME"),
    ((4, 16, 16, 16), 3, 2, "SAME"),               # threaded
]


def _random_pool(rng):
    kh, kw = (int(v) for v in rng.integers(1, 4, size=2))
    xs = (int(rng.integers(1, 3)), kh + int(rng.integers(0, 5)), kw + int(rng.integers(0, 5)), int(rng.integers(1, 4)))
    return xs, [kh, kw], [int(rng.integers(1, 4)), int(rng.integers(1, 4))], ["SAME", "VALID"][rng.integers(0, 2)]


def _pool_geometries(rng, explicit=False):
    cases = _POOL_FIXED + [_random_pool(rng) for _ in range(6)]
    if explicit:
        cases = cases + [((1, 5, 5, 2), 3, 2, [[0, 0], [1, 2], [2, 0], [0, 0]]), ((2, 4, 6, 1), [2, 3], 1, [[1, 0], [0, 2]])]
    return cases


def _distinct(rng, shape, dtype):
    """Values at least 0.25 apart (no ties, so finite differences see one maximum)."""
    size = int(np.prod(shape))
    v = (rng.permutation(size).astype(F64) - size / 2) * 0.25
    return v.reshape(shape).astype(uniform(rng, (0,), dtype).dtype)


def _max_pool_sample(rng, dtype):
    return [((_distinct(rng, xs, dtype),), {"ksize": k, "strides": s, "padding": p})
            for xs, k, s, p in _pool_geometries(rng, explicit=True)]


def _tied(rng, shape, dtype):
    """Small integers: many ties inside a window (TensorFlow's first-maximum rule)."""
    return rng.integers(0, 3, size=shape).astype(uniform(rng, (0,), dtype).dtype)


def _max_pool_grad_sample(rng, dtype, grad_grad=False):
    cases = []
    for values in (_distinct, _tied):
        for xs, k, s, p in _pool_geometries(rng, explicit=True):
            x = values(rng, xs, dtype)
            y = np_max_pool(x, k, s, p)
            g = uniform(rng, xs if grad_grad else y.shape, dtype)
            cases.append(((x, y, g), {"ksize": k, "strides": s, "padding": p}))
    return cases


def _avg_pool_sample(rng, dtype):
    return [((uniform(rng, xs, dtype),), {"ksize": k, "strides": s, "padding": p})
            for xs, k, s, p in _pool_geometries(rng)]


def _avg_pool_grad_sample(rng, dtype):
    return [((list(xs), uniform(rng, _pooled_shape(xs, k, s, p), dtype)), {"ksize": k, "strides": s, "padding": p})
            for xs, k, s, p in _pool_geometries(rng)]


# ---- specs ---------------------------------------------------------------------------

def _ref_conv1d(x, w, stride, padding, dilations=1):
    s = stride[0] if isinstance(stride, list) else stride
    d = dilations[0] if isinstance(dilations, list) else dilations
    pad = padding if isinstance(padding, str) else [[0, 0], list(padding[1])]
    y = np_conv2d(x[:, None], w[None], (1, s), pad, (1, d))
    return y[:, 0]


def _ref_transpose(dy, w, output_shape, strides, padding, dilations=1):
    return np_conv2d_backprop_input(output_shape, w, dy, strides, padding, dilations)


_CONV_TOL = {"rtol": 1e-4, "atol": 1e-4}


def _half(spec: Spec) -> Spec:
    """The same spec on float16/bfloat16 (computed in float32) with the default half tolerances."""
    return Spec(spec.op, spec.ref, spec.sample, dtypes=HALF, grad=spec.grad, grad_args=spec.grad_args, name="half")


SPECS = [
    Spec("conv2d", np_conv2d, _conv_sample, second_order=True, **_CONV_TOL),
    Spec("conv2d_backprop_input", np_conv2d_backprop_input, _backprop_input_sample, grad_args=(1, 2),
         second_order=True, **_CONV_TOL),
    Spec("conv2d_backprop_filter", np_conv2d_backprop_filter, _backprop_filter_sample, grad_args=(0, 2),
         second_order=True, **_CONV_TOL),
    Spec("conv2d_transpose", _ref_transpose, _conv2d_transpose_sample, grad_args=(0, 1), **_CONV_TOL),
    Spec("conv1d", _ref_conv1d, _conv1d_sample, **_CONV_TOL),
    Spec("depthwise_conv2d", lambda x, w, **kw: np_conv2d(x, w, depthwise=True, **kw), _depthwise_sample,
         second_order=True, **_CONV_TOL),
    Spec("depthwise_conv2d_backprop_input",
         lambda xs, w, dy, **kw: np_conv2d_backprop_input(xs, w, dy, depthwise=True, **kw), _depthwise_input_sample,
         grad_args=(1, 2), **_CONV_TOL),
    Spec("depthwise_conv2d_backprop_filter",
         lambda x, ws, dy, **kw: np_conv2d_backprop_filter(x, ws, dy, depthwise=True, **kw), _depthwise_filter_sample,
         grad_args=(0, 2), **_CONV_TOL),
    Spec("max_pool2d", np_max_pool, _max_pool_sample, second_order=True),
    Spec("max_pool_grad", np_max_pool_grad, _max_pool_grad_sample, grad_args=(2,), second_order=True),
    Spec("max_pool_grad_grad", np_max_pool_grad_grad, lambda rng, dt: _max_pool_grad_sample(rng, dt, True),
         grad_args=(2,)),
    Spec("avg_pool2d", np_avg_pool, _avg_pool_sample, second_order=True),
    Spec("avg_pool_grad", np_avg_pool_grad, _avg_pool_grad_sample, grad_args=(1,)),
]
SPECS += [_half(s) for s in SPECS if s.op in ("conv2d", "conv2d_backprop_input", "conv2d_backprop_filter",
                                               "depthwise_conv2d", "max_pool2d", "avg_pool2d")]
