"""Specs of core's image_ops (tf.image): the resize and colour primitives, their gradient ops, and the
composites (crops, pads, flips, colour adjustments, metrics, filters).

The resize reference builds each axis's resampling matrix as TensorFlow's kernels do (half-pixel
centres, float32 positions; ScaleAndTranslate for the antialiased and lanczos/gaussian/mitchell
kernels) and applies it with einsum; tests/../packages/core/tests/test_image.py compares with
TensorFlow itself where it is installed.  Colour samples keep the channels distinct and away from
0 and 1, so the piecewise conversions are differentiable there."""
from __future__ import annotations

import numpy as np
from opspec import FLOATS, HALF, Spec

F32 = np.float32


def _img(rng, shape, dtype):
    if dtype in ("uint8",):
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dtype in ("int32", "int16", "int8", "int64"):
        return rng.integers(0, 100, size=shape).astype(dtype)
    import ml_dtypes  # noqa: F401

    return rng.uniform(0.05, 0.95, size=shape).astype(dtype if dtype != "bfloat16" else ml_dtypes.bfloat16)


def _image_tf(tf):
    return tf.image


# ---- resize ---------------------------------------------------------------------------------------

def _kernel(m, x):
    x = np.abs(F32(x))
    if m in ("lanczos3", "lanczos5"):
        r = F32(3 if m == "lanczos3" else 5)
        if x > r:
            return F32(0)
        if x <= F32(1e-3):
            return F32(1)
        return F32(r * np.sin(np.pi * x) * np.sin(np.pi * x / r) / (np.pi ** 2 * x * x))
    if m == "gaussian":
        return F32(0) if x >= 1.5 else F32(np.exp(-x * x / F32(0.5)))
    if m == "mitchellcubic":
        if x >= 2:
            return F32(0)
        if x >= 1:
            return F32((((-7 / 18) * x + 2) * x - 10 / 3) * x + 16 / 9)
        return F32((((7 / 6) * x - 2) * x) * x + 8 / 9)
    if m == "triangle":
        return F32(max(0.0, 1 - x))
    if x >= 2:  # keys cubic
        return F32(0)
    return F32(((-0.5 * x + 2.5) * x - 4) * x + 2) if x >= 1 else F32(((1.5 * x - 2.5) * x) * x + 1)


_RADIUS = {"lanczos3": 3, "lanczos5": 5, "gaussian": 1.5, "mitchellcubic": 2, "triangle": 1, "keyscubic": 2}


def _axis_matrix(m, aa, n_in, n_out):
    """W [n_out, n_in]: out = W @ in along one axis, as TensorFlow samples it."""
    W = np.zeros((n_out, n_in))
    s = F32(F32(n_in) / F32(n_out))
    clamp = lambda i: min(max(int(i), 0), n_in - 1)  # noqa: E731
    if aa and m in ("bilinear", "bicubic"):
        m = "triangle" if m == "bilinear" else "keyscubic"
    for o in range(n_out):
        if m == "nearest":
            W[o, clamp(np.floor((F32(o) + F32(0.5)) * s))] = 1
        elif m == "bilinear":
            f = (F32(o) + F32(0.5)) * s - F32(0.5)
            lo, hi, t = clamp(np.floor(f)), min(int(np.ceil(f)), n_in - 1), float(f - np.floor(f))
            W[o, lo] += 1 - t
            W[o, hi] += t
        elif m == "bicubic":
            f = (F32(o) + F32(0.5)) * s - F32(0.5)
            base = int(np.floor(f))
            t = float(np.rint((f - np.floor(f)) * 1024)) / 1024
            ws = [_kernel("keyscubic", 1 + t), _kernel("keyscubic", t), _kernel("keyscubic", 1 - t),
                  _kernel("keyscubic", 2 - t)]
            ws = [w if 0 <= base - 1 + k < n_in else 0.0 for k, w in enumerate(ws)]
            for k, w in enumerate(ws):
                if 0 <= base - 1 + k < n_in:
                    W[o, base - 1 + k] += w / sum(ws)
        elif m == "area":
            i0, i1 = F32(o) * s, F32(o + 1) * s
            for i in range(int(np.floor(i0)), int(np.ceil(i1))):
                part = (s if i + 1 > i1 else i + 1 - i0) if i < i0 else (i1 - i if i + 1 > i1 else 1.0)
                W[o, clamp(i)] += float(part) / float(s)
        else:
            scale = F32(F32(n_out) / F32(n_in))
            ks = F32(1) / scale if aa and scale < 1 else F32(1)
            r = F32(_RADIUS[m]) * ks
            sample = (F32(o) + F32(0.5)) * (F32(1) / scale)
            if sample < 0 or sample > n_in:
                continue
            st = clamp(np.ceil(sample - r - F32(0.5)))
            en = clamp(np.floor(sample + r - F32(0.5))) + 1
            ws = [_kernel(m, (F32(i) + F32(0.5) - sample) * (F32(1) / ks)) for i in range(st, en)]
            tot = sum(ws)
            for i, w in zip(range(st, en), ws):
                W[o, i] = w / tot
    return W


def _resize_ref(images, size, method="bilinear", antialias=False):
    x = images if images.ndim == 4 else images[None]
    Wy = _axis_matrix(method, antialias, x.shape[1], size[0])
    Wx = _axis_matrix(method, antialias, x.shape[2], size[1])
    if method == "nearest":
        out = x[:, Wy.argmax(1)][:, :, Wx.argmax(1)]
    else:
        out = np.einsum("yi,xj,bijc->byxc", Wy, Wx, x.astype(np.float64)).astype(np.float32)
    return out if images.ndim == 4 else out[0]


def _resize_grad_ref(grads, image_size, method="bilinear", antialias=False):
    Wy = _axis_matrix(method, antialias, image_size[0], grads.shape[1])
    Wx = _axis_matrix(method, antialias, image_size[1], grads.shape[2])
    return np.einsum("yi,xj,byxc->bijc", Wy, Wx, grads.astype(np.float64)).astype(grads.dtype)


METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _resize_sample(rng, dtype):
    cases = []
    for i, m in enumerate(METHODS):
        for aa in (False, True):
            shape = [(2, 5, 7, 3), (6, 4, 2), (1, 9, 8, 1), (0, 3, 3, 2)][(i + aa) % 4]
            size = [[3, 4], [9, 13], [4, 2], [2, 5]][(2 * i + aa) % 4]
            cases.append(((_img(rng, shape, dtype), size), {"method": m, "antialias": aa}))
    return cases


def _resize_grad_sample(rng, dtype):
    return [((_img(rng, (2, 3, 4, 2), dtype), [5, 7]), {"method": m, "antialias": aa})
            for m in METHODS if m != "nearest" for aa in (False, True)] + \
        [((_img(rng, (1, 6, 2, 1), dtype), [3, 3]), {"method": "nearest"})]


def _resize_fn(tf, images, size, **kw):
    return tf.image.resize(tf.constant(images) if isinstance(images, np.ndarray) else images, size, **kw)


def _resize_grad_fn(tf, grads, image_size, **kw):
    from tapeflow.core.ops.image_ops import resize_grad

    return resize_grad(tf.constant(grads) if isinstance(grads, np.ndarray) else grads, image_size, **kw)


# ---- colour ---------------------------------------------------------------------------------------

def _hsv_ref(x):
    x64 = x.astype(np.float64)
    r, g, b = x64[..., 0], x64[..., 1], x64[..., 2]
    v = x64.max(-1)
    rng_ = v - x64.min(-1)
    s = np.where(v > 0, rng_ / np.where(v > 0, v, 1), 0)
    n = 1 / (6 * np.where(rng_ > 0, rng_, 1))
    h = np.where(r == v, n * (g - b), np.where(g == v, n * (b - r) + 2 / 6, n * (r - g) + 4 / 6))
    h = np.where(rng_ > 0, h, 0)
    h = np.where(h < 0, h + 1, h)
    return np.stack([h, s, v], -1).astype(x.dtype)


def _rgb_ref(x):
    x64 = x.astype(np.float64)
    h, s, v = x64[..., 0], x64[..., 1], x64[..., 2]
    c = s * v
    m = v - c
    dh = h * 6
    f = np.mod(dh, 2)
    xx = c * (1 - np.abs(f - 1))
    cat = np.floor(dh).astype(int)
    z = np.zeros_like(c)
    table = {0: (c, xx, z), 1: (xx, c, z), 2: (z, c, xx), 3: (z, xx, c), 4: (xx, z, c), 5: (c, z, xx)}
    out = np.zeros(x64.shape)
    for k, (a, bb, cc) in table.items():
        sel = (cat == k)[..., None]
        out = np.where(sel, np.stack([a, bb, cc], -1), out)
    return (out + m[..., None]).astype(x.dtype)


def _colour_sample(rng, dtype):
    return [((_img(rng, shape, dtype),), {}) for shape in [(4, 5, 3), (2, 3, 2, 3), (3,), (0, 3)]]


def _colour_grad_ref(images, grads, inverse=False):
    f = _rgb_ref if inverse else _hsv_ref
    x = images.astype(np.float64)
    out = np.zeros_like(x)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1e-6
        out[..., k] = ((f(x + e) - f(x - e)) * grads).sum(-1) / 2e-6
    return out.astype(images.dtype)


def _colour_grad_sample(rng, dtype):
    return [((_img(rng, (4, 5, 3), dtype), rng.standard_normal((4, 5, 3)).astype(dtype)), {"inverse": inv})
            for inv in (False, True)]


def _colour_grad_fn(tf, images, grads, **kw):
    from tapeflow.core.ops.image_ops import colour_grad

    return colour_grad(tf.constant(images), tf.constant(grads), **kw)


def _api(name):
    def fn(tf, *args, **kw):
        args = [tf.constant(a) if isinstance(a, np.ndarray) else a for a in args]
        return getattr(tf.image, name)(*args, **kw)
    return fn


# ---- references of the composites -----------------------------------------------------------------

def _max(dt):
    dt = np.dtype(dt)
    return 1.0 if dt.kind == "f" else np.iinfo(dt).max


def _convert_ref(image, dtype, saturate=False):
    src, dst = image.dtype, np.dtype(dtype)
    if src == dst:
        return image
    if src.kind == "f" and dst.kind == "f":
        return image.astype(dst)
    if src.kind in "iu" and dst.kind in "iu":
        si, so = int(_max(src)), int(_max(dst))
        if si > so:
            return (image.astype(np.int64) // ((si + 1) // (so + 1))).astype(dst)
        return image.astype(dst) * dst.type((so + 1) // (si + 1))
    if src.kind in "iu":
        return (image.astype(dst) * dst.type(1.0 / _max(src))).astype(dst)
    scaled = image * src.type(_max(dst) + 0.5)
    if saturate:
        scaled = np.clip(scaled, np.iinfo(dst).min, np.iinfo(dst).max)
    return scaled.astype(dst)


def _convert_sample(rng, dtype):
    return [((_img(rng, (2, 3, 1), dtype), "float32"), {}), ((_img(rng, (3, 3), dtype), "float64"), {}),
            ((_img(rng, (4,), dtype), "uint8"), {"saturate": True}), ((_img(rng, (4,), dtype), "int16"), {})]


def _convert_fn(tf, image, dtype, **kw):
    return tf.image.convert_image_dtype(tf.constant(image), getattr(tf, dtype), **kw)


def _b(x):
    return x if x.ndim == 4 else x[None]


def _u(x, like):
    return x if like.ndim == 4 else x[0]


def _crop_ref(image, oh, ow, th, tw):
    return _u(_b(image)[:, oh:oh + th, ow:ow + tw], image)


def _pad_ref(image, oh, ow, th, tw):
    x = _b(image)
    return _u(np.pad(x, [(0, 0), (oh, th - oh - x.shape[1]), (ow, tw - ow - x.shape[2]), (0, 0)]), image)


def _box_sample(rng, dtype, pad=False):
    if pad:
        return [((_img(rng, (3, 4, 2), dtype), 1, 2, 5, 7), {}), ((_img(rng, (2, 2, 3, 1), dtype), 0, 0, 2, 3), {})]
    return [((_img(rng, (5, 6, 2), dtype), 1, 2, 3, 3), {}), ((_img(rng, (2, 4, 4, 1), dtype), 0, 1, 4, 2), {})]


def _central_ref(image, f):
    x = _b(image)
    h, w = x.shape[1:3]
    if f == 1.0:
        return image
    t, left = int((h - h * f) / 2), int((w - w * f) / 2)
    return _u(x[:, t:h - t, left:w - left], image)


def _crop_or_pad_ref(image, th, tw):
    x = _b(image)
    h, w = x.shape[1:3]
    hd, wd = th - h, tw - w
    c = x[:, max(-hd // 2, 0):max(-hd // 2, 0) + min(th, h), max(-wd // 2, 0):max(-wd // 2, 0) + min(tw, w)]
    return _pad_ref(c if image.ndim == 4 else c[0], max(hd // 2, 0), max(wd // 2, 0), th, tw)


def _with_pad_ref(image, th, tw, method="bilinear"):
    x = _b(image)
    h, w = x.shape[1:3]
    ratio = max(F32(F32(w) / F32(tw)), F32(F32(h) / F32(th)))
    rh, rw = F32(h) / ratio, F32(w) / ratio
    ph, pw = max(0, int(np.floor((th - rh) / 2))), max(0, int(np.floor((tw - rw) / 2)))
    r = _resize_ref(x, [int(np.floor(rh)), int(np.floor(rw))], method)
    return _u(_pad_ref(r, ph, pw, th, tw), image)


def _rot_ref(image, k=1):
    return np.rot90(image, k, axes=(-3, -2)).copy()


def _img_sample(rng, dtype, shapes=((4, 5, 2), (2, 3, 4, 1), (0, 2, 2, 3))):
    return [((_img(rng, s, dtype),), {}) for s in shapes]


def _gray_ref(images):
    f = _convert_ref(images, np.float32)
    g = (f * np.array([0.2989, 0.587, 0.114], np.float32)).sum(-1, keepdims=True, dtype=np.float32)
    return _convert_ref(g, images.dtype)


def _float_in(x):
    return x if x.dtype in (np.float16, np.float32) else _convert_ref(x, np.float32)


def _sat_back(out, dtype):
    return _convert_ref(out, dtype, saturate=True)


def _brightness_ref(image, delta):
    f = _float_in(image)
    return _sat_back(f + f.dtype.type(delta), image.dtype)


def _contrast_ref(images, factor):
    f = _float_in(images)
    f32 = f.astype(np.float32)
    m = f32.mean(axis=(-3, -2), keepdims=True, dtype=np.float64).astype(np.float32)
    return _sat_back(((f32 - m) * np.float32(factor) + m).astype(f.dtype), images.dtype)


def _gamma_ref(image, gamma=1, gain=1):
    f = _float_in(image)
    return _sat_back((gain * f.astype(np.float64) ** gamma).astype(f.dtype), image.dtype)


def _saturation_ref(image, k):
    f = _float_in(image)
    hsv = _hsv_ref(f.astype(np.float64))
    hsv[..., 1] = np.clip(hsv[..., 1] * k, 0, 1)
    return _convert_ref(_rgb_ref(hsv).astype(f.dtype), image.dtype)


def _hue_ref(image, delta):
    f = _float_in(image)
    hsv = _hsv_ref(f.astype(np.float64))
    hsv[..., 0] = np.mod(hsv[..., 0] + delta, 1.0)
    return _convert_ref(_rgb_ref(hsv).astype(f.dtype), image.dtype)


def _rgb_sample(rng, dtype):
    return [((_img(rng, (3, 4, 3), dtype), 0.7), {}), ((_img(rng, (2, 2, 2, 3), dtype), 1.6), {})]


def _std_ref(image):
    f = image.astype(np.float64)
    ax = (-1, -2, -3)
    n = np.prod(image.shape[-3:])
    out = (f - f.mean(ax, keepdims=True)) / np.maximum(f.std(ax, keepdims=True), 1 / np.sqrt(max(n, 1)))
    return out.astype(np.float32)


def _tv_ref(images):
    x = _b(images).astype(np.float64)
    tv = np.abs(np.diff(x, axis=1)).sum((1, 2, 3)) + np.abs(np.diff(x, axis=2)).sum((1, 2, 3))
    return (tv if images.ndim == 4 else tv[0]).astype(images.dtype)


def _psnr_ref(a, b, max_val):
    mse = ((a.astype(np.float64) - b) ** 2).mean((-3, -2, -1))
    return (20 * np.log10(max_val) - 10 * np.log10(mse)).astype(np.float32)


def _pair_sample(rng, dtype):
    return [((_img(rng, (2, 12, 13, 3), dtype), _img(rng, (2, 12, 13, 3), dtype), 1.0), {}),
            ((_img(rng, (11, 11, 1), dtype), _img(rng, (11, 11, 1), dtype), 1.0), {})]


def _ssim_ref(x, y, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    c = np.arange(filter_size) - (filter_size - 1) / 2.0
    g = np.exp(-0.5 * c ** 2 / filter_sigma ** 2)
    win = np.outer(g, g) / np.outer(g, g).sum()

    def red(t):
        t = t.astype(np.float64)
        H, W = t.shape[-3] - filter_size + 1, t.shape[-2] - filter_size + 1
        out = np.zeros(t.shape[:-3] + (H, W, t.shape[-1]))
        for i in range(filter_size):
            for j in range(filter_size):
                out += win[i, j] * t[..., i:i + H, j:j + W, :]
        return out

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = red(x), red(y)
    lum = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * red(x * y.astype(np.float64)) - 2 * mx * my + c2) / (red(x ** 2.0 + y ** 2.0) - mx ** 2 - my ** 2 + c2)
    return (lum * cs).mean((-3, -2)).mean(-1).astype(np.float32)


def _grad_ref(image):
    dy = np.zeros_like(image)
    dx = np.zeros_like(image)
    dy[:, :-1] = np.diff(image, axis=1)
    dx[:, :, :-1] = np.diff(image, axis=2)
    return dy, dx


def _sobel_ref(image):
    p = np.pad(image.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    H, W = image.shape[1:3]
    out = np.zeros(image.shape + (2,))
    for i in range(3):
        for j in range(3):
            win = p[:, i:i + H, j:j + W, :]
            out[..., 0] += ky[i, j] * win
            out[..., 1] += ky.T[i, j] * win
    return out.astype(image.dtype)


def _patches_ref(images, sizes, strides, rates, padding):
    b, h, w, c = images.shape
    kh, kw = (sizes[1] - 1) * rates[1] + 1, (sizes[2] - 1) * rates[2] + 1
    if padding == "VALID":
        oh, ow, pt, pl = (h - kh) // strides[1] + 1, (w - kw) // strides[2] + 1, 0, 0
    else:
        oh, ow = -(-h // strides[1]), -(-w // strides[2])
        pt = max(0, (oh - 1) * strides[1] + kh - h) // 2
        pl = max(0, (ow - 1) * strides[2] + kw - w) // 2
    out = np.zeros((b, max(oh, 0), max(ow, 0), sizes[1] * sizes[2] * c), images.dtype)
    for i in range(max(oh, 0)):
        for j in range(max(ow, 0)):
            for di in range(sizes[1]):
                for dj in range(sizes[2]):
                    y, x = i * strides[1] + di * rates[1] - pt, j * strides[2] + dj * rates[2] - pl
                    if 0 <= y < h and 0 <= x < w:
                        k = (di * sizes[2] + dj) * c
                        out[:, i, j, k:k + c] = images[:, y, x]
    return out


def _patches_sample(rng, dtype):
    return [((_img(rng, (2, 5, 7, 3), dtype), [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 2, 1], "SAME"), {}),
            ((_img(rng, (1, 6, 5, 2), dtype), [1, 2, 2, 1], [1, 1, 2, 1], [1, 2, 1, 1], "VALID"), {})]


N_H = FLOATS + HALF + ("uint8", "int32")
SPECS = [
    Spec("resize", _resize_ref, _resize_sample, dtypes=("float32", "float16"), fn=_resize_fn, rtol=1e-5, atol=2e-5),
    Spec("resize", _resize_ref, lambda r, d: [c for c in _resize_sample(r, d) if c[1]["method"] == "nearest"],
         dtypes=("uint8", "int32", "float64"), fn=_resize_fn, exact=True, name="nearest"),
    Spec("resize_grad", _resize_grad_ref, _resize_grad_sample, dtypes=FLOATS, fn=_resize_grad_fn, rtol=1e-5,
         atol=1e-5, second_order=True, f64_tol=(1e-6, 1e-8)),
    Spec("rgb_to_hsv", _hsv_ref, _colour_sample, dtypes=FLOATS + HALF, fn=_api("rgb_to_hsv")),
    Spec("hsv_to_rgb", _rgb_ref, _colour_sample, dtypes=FLOATS + HALF, fn=_api("hsv_to_rgb")),
    Spec("colour_grad", _colour_grad_ref, _colour_grad_sample, dtypes=FLOATS, fn=_colour_grad_fn, grad=False,
         rtol=1e-4, atol=1e-5, f64_tol=(1e-6, 1e-7)),
    Spec("convert_image_dtype", _convert_ref, _convert_sample, dtypes=("float32", "uint8", "int32"),
         fn=_convert_fn, grad_args=(0,)),
    Spec("crop_to_bounding_box", _crop_ref, _box_sample, dtypes=N_H, fn=_api("crop_to_bounding_box"), exact=True),
    Spec("pad_to_bounding_box", _pad_ref, lambda r, d: _box_sample(r, d, pad=True), dtypes=N_H,
         fn=_api("pad_to_bounding_box"), exact=True),
    Spec("central_crop", _central_ref, lambda r, d: [((_img(r, (5, 6, 2), d), 0.5), {}),
                                                     ((_img(r, (2, 4, 7, 1), d), 0.7), {}),
                                                     ((_img(r, (3, 3, 1), d), 1.0), {})],
         dtypes=N_H, fn=_api("central_crop"), exact=True),
    Spec("resize_with_crop_or_pad", _crop_or_pad_ref,
         lambda r, d: [((_img(r, (5, 6, 2), d), 3, 9), {}), ((_img(r, (2, 4, 3, 1), d), 7, 2), {})],
         dtypes=N_H, fn=_api("resize_with_crop_or_pad"), exact=True),
    Spec("resize_with_pad", _with_pad_ref,
         lambda r, d: [((_img(r, (5, 6, 2), d), 8, 5), {}), ((_img(r, (2, 4, 3, 1), d), 3, 9), {"method": "area"})],
         dtypes=("float32",), fn=_api("resize_with_pad"), rtol=1e-5, atol=2e-5),
    Spec("flip_left_right", lambda x: np.flip(x, -2).copy(), _img_sample, dtypes=N_H, fn=_api("flip_left_right"),
         exact=True),
    Spec("flip_up_down", lambda x: np.flip(x, -3).copy(), _img_sample, dtypes=N_H, fn=_api("flip_up_down"),
         exact=True),
    Spec("rot90", _rot_ref, lambda r, d: [((_img(r, (4, 5, 2), d),), {"k": k}) for k in (1, 2, 3, -1, 4)] +
         [((_img(r, (2, 3, 4, 1), d),), {"k": 1})], dtypes=N_H, fn=_api("rot90"), exact=True),
    Spec("image_transpose", lambda x: np.swapaxes(x, -3, -2).copy(), _img_sample, dtypes=N_H, fn=_api("transpose"),
         exact=True),
    Spec("rgb_to_grayscale", _gray_ref, lambda r, d: [((_img(r, (4, 5, 3), d),), {}),
                                                      ((_img(r, (2, 2, 3, 3), d),), {})],
         dtypes=("float32", "uint8"), fn=_api("rgb_to_grayscale"), rtol=1e-5, atol=1e-6),
    Spec("grayscale_to_rgb", lambda x: np.repeat(x, 3, -1), lambda r, d: [((_img(r, (4, 5, 1), d),), {})],
         dtypes=N_H, fn=_api("grayscale_to_rgb"), exact=True),
    Spec("adjust_brightness", _brightness_ref, lambda r, d: [((_img(r, (3, 4, 2), d), 0.2), {}),
                                                             ((_img(r, (2, 2, 2, 3), d), -0.3), {})],
         dtypes=("float32", "float16", "uint8"), fn=_api("adjust_brightness"), rtol=1e-5, atol=1e-6),
    Spec("adjust_contrast", _contrast_ref, lambda r, d: [((_img(r, (3, 4, 2), d), 1.7), {}),
                                                         ((_img(r, (2, 2, 2, 3), d), 0.4), {})],
         dtypes=("float32", "float16", "uint8"), fn=_api("adjust_contrast"), rtol=1e-5, atol=1e-5),
    Spec("adjust_gamma", _gamma_ref, lambda r, d: [((_img(r, (3, 4, 2), d), 2.2), {"gain": 0.9}),
                                                   ((_img(r, (2, 2, 2, 3), d), 0.5), {})],
         dtypes=("float32", "uint8"), fn=_api("adjust_gamma"), rtol=1e-5, atol=1e-5),
    Spec("adjust_saturation", _saturation_ref, _rgb_sample, dtypes=("float32", "uint8"),
         fn=_api("adjust_saturation"), rtol=1e-5, atol=1e-5),
    Spec("adjust_hue", _hue_ref,
         lambda r, d: [((_img(r, (3, 4, 3), d), 0.3), {}), ((_img(r, (2, 2, 2, 3), d), -0.6), {})],
         dtypes=("float32", "uint8"), fn=_api("adjust_hue"), rtol=1e-5, atol=1e-5),
    Spec("per_image_standardization", _std_ref, _img_sample, dtypes=("float32",),
         fn=_api("per_image_standardization"), rtol=1e-5, atol=1e-5),
    Spec("total_variation", _tv_ref, _img_sample, dtypes=FLOATS, fn=_api("total_variation"), rtol=1e-5, atol=1e-5),
    Spec("psnr", _psnr_ref, _pair_sample, dtypes=("float32",), fn=_api("psnr"), rtol=1e-5, atol=1e-4),
    Spec("ssim", _ssim_ref, _pair_sample, dtypes=("float32",), fn=_api("ssim"), rtol=1e-4, atol=1e-5),
    Spec("image_gradients", _grad_ref, lambda r, d: _img_sample(r, d, ((2, 3, 4, 1), (1, 5, 2, 3))), dtypes=FLOATS,
         fn=_api("image_gradients")),
    Spec("sobel_edges", _sobel_ref, lambda r, d: _img_sample(r, d, ((2, 3, 4, 1), (1, 5, 2, 3))), dtypes=FLOATS,
         fn=_api("sobel_edges")),
    Spec("extract_patches", _patches_ref, _patches_sample, dtypes=N_H, fn=_api("extract_patches"), exact=True),
]
