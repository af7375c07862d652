"""tf.image: resizing, crops and pads, flips and rotations, colour conversions and adjustments, random
augmentations, quality metrics, with TensorFlow 2's semantics.  Images are NHWC: 3-D ``[height, width,
channels]`` or 4-D ``[batch, height, width, channels]``.

Primitives over ``csrc/image.c`` (GPU backends run it on the host, tapeflow.kernels.gpu_entries_image):
``resize`` (every method, TensorFlow's sampling arithmetic; float methods compute in float32 and return
float32, nearest keeps the dtype), its transpose ``resize_grad`` (the gradient), ``rgb_to_hsv`` and
``hsv_to_rgb`` and their vector-Jacobian products.  The rest are composites over tapeflow ops, as
TensorFlow writes them in image_ops_impl.py (their gradients come from the ops they are made of).
"""
from __future__ import annotations

import math as _math

from .. import dtypes as _dt
from ..dispatch import alloc, dtype_arg, int_arg, int_list, register, static_value, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from ._shape import _HALF, _prod
from .array_ops import (concat, expand_dims, identity, ones_like, pad, reshape, tile, transpose as _transpose,
                        zeros, zeros_like)
from .math_ops import _cast_raw
from .math_ops import (abs as _abs, add, cast, clip_by_value, floor, floordiv, floormod, log, maximum,
                       minimum, multiply, real_div, rsqrt, square, squared_difference, subtract)
from .reduce_ops import reduce_mean, reduce_std, reduce_sum

__all__: list = []  # tf.image's names live in IMAGE_API, not at the top level

METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
# the TensorFlow op each method runs (errors name it)
_TF_OP = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor", "bicubic": "ResizeBicubic",
          "area": "ResizeArea"}
_FLOAT_IN = (_dt.float32, _dt.float64)


def _op_of(method, antialias=False):
    if method in ("bilinear", "bicubic") and antialias or method not in _TF_OP:
        return "ScaleAndTranslate"
    return _TF_OP[method]


def _tensor(x, op, what="images"):
    if isinstance(x, Tensor):
        return x
    return to_tensor(x, op)  # a Variable: its value, read where the tape sees it (so its gradient is not None)


def _image(x, op, what="image", ranks=(3, 4)):
    """``x`` as a tensor of rank 3 or 4 (as ``ranks`` allow), and whether it is batched."""
    x = _tensor(x, op, what)
    nd = len(x._shape)
    if nd not in ranks:
        allowed = " or ".join(f"{r}-D" for r in ranks)
        raise InvalidArgumentError(f"{what} has shape {list(x._shape)} (rank {nd}); allowed: {allowed} "
                                   "([batch,] height, width, channels)", op)
    return x, nd == 4


def _const(v, dtype):
    """A constant of exactly ``dtype`` from a Python number (or a tensor cast to it): no float32 detour."""
    if isinstance(v, Tensor):
        return cast(v, dtype)
    import numpy as np  # the host container of a constant

    return to_tensor(np.asarray(v, dtype=dtype.np), "Const")


def _batched(x):
    return x if len(x._shape) == 4 else expand_dims(x, 0)


def _unbatch(x, batched):
    return x if batched else reshape(x, tuple(x._shape[1:]))


def _float_image(x):
    """float16/float32 stay; other dtypes through convert_image_dtype to float32 (as TensorFlow's adjust_*)."""
    return x if x._dtype in (_dt.float16, _dt.float32) else convert_image_dtype(x, _dt.float32)


# ---- resize: primitives -----------------------------------------------------------------------------

def _resize_infer(x, *, size, method, antialias):
    # float64 stays float64 here (resize_grad's own gradient needs it); the public resize casts it to float32
    out = x._dtype if method == "nearest" or x._dtype is _dt.float64 else _dt.float32
    return (x._shape[0], size[0], size[1], x._shape[3]), out


@primitive("resize", "ResizeBilinear", infer=_resize_infer, dtypes=_dt.NUMERIC + _HALF)
def _resize(dev, x, *, size, method, antialias):
    b, ih, iw, c = x._shape
    code = METHODS.index(method)
    if method != "nearest" and x._dtype not in _FLOAT_IN:
        x = _cast_raw(x, _dt.float32)
    out = alloc((b, size[0], size[1], c), x._dtype, dev)
    if out.size:
        check(dev.backend.resize(code, int(antialias), x._dtype.code, x._h, out._h, b, ih, iw, c, size[0], size[1]),
              "resize")
    return out


def _resize_grad_infer(g, *, image_size, method, antialias):
    return (g._shape[0], image_size[0], image_size[1], g._shape[3]), g._dtype


@primitive("resize_grad", "ResizeBilinearGrad", infer=_resize_grad_infer, dtypes=_FLOAT_IN)
def _resize_grad(dev, g, *, image_size, method, antialias):
    b, oh, ow, c = g._shape
    out = alloc((b, image_size[0], image_size[1], c), g._dtype, dev)
    if out.size:
        check(dev.backend.resize_grad(METHODS.index(method), int(antialias), g._dtype.code, g._h, out._h, b,
                                      image_size[0], image_size[1], c, oh, ow), "resize_grad")
    return out


def _method_arg(method, op):
    m = getattr(method, "value", method)
    if not isinstance(m, str) or m not in METHODS:
        raise InvalidArgumentError(f"method = {method!r}; allowed: {', '.join(METHODS)}", op)
    return m


def _size_arg(size, op):
    size = static_value(size, op, "size") if isinstance(size, Tensor) else size
    s = int_list(size, op, "size", scalar_ok=False)
    if len(s) != 2:
        raise InvalidArgumentError(f"size = {list(s)}; allowed: 2 elements, [new_height, new_width]", op)
    if s[0] <= 0 or s[1] <= 0:
        raise InvalidArgumentError(f"size = {list(s)}; allowed: positive new_height and new_width", op)
    if max(s) >= 2 ** 31:
        raise InvalidArgumentError(f"size = {list(s)}; allowed: values below 2**31 (int32)", op)
    return s


@register("resize", "ResizeBilinear")
def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """Resize images to ``size`` = [new_height, new_width] (TensorFlow 2's tf.image.resize).

    Pixel centres sit at half-integers: output pixel o samples input position (o + 0.5) * in / out - 0.5.
    ``method``: bilinear, nearest, bicubic (Keys, a = -0.5), area, lanczos3, lanczos5, gaussian,
    mitchellcubic; ``antialias`` widens the kernel by the downscale factor (bilinear, bicubic and the
    lanczos/gaussian/mitchell kernels).  Returns float32, except ``nearest``, which keeps the dtype.

    >>> import tapeflow as tf
    >>> tf.image.resize(tf.constant([[[0.0], [4.0]]]), [1, 4])[0, :, 0].numpy().tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    m = _method_arg(method, "ResizeBilinear")
    op = _op_of(m, antialias is True)
    x, batched = _image(images, op, "images")
    s = _size_arg(size, op)
    if not isinstance(preserve_aspect_ratio, bool) or not isinstance(antialias, bool):
        raise TypeError(f"preserve_aspect_ratio and antialias must be bools, got {preserve_aspect_ratio!r}, "
                        f"{antialias!r} [Op:{op}]")
    if x._dtype not in _dt.NUMERIC + _HALF:
        raise InvalidArgumentError(f"images have dtype {x._dtype.name}; allowed: a real numeric dtype", op)
    h, w = x._shape[-3], x._shape[-2]
    if preserve_aspect_ratio and (h is None or w is None):
        raise TypeError(f"preserve_aspect_ratio needs the images' height and width while tracing (got "
                        f"{list(x._shape)}) [Op:{op}]")
    if preserve_aspect_ratio and h and w:
        factor = min(_f32(_f32(s[0]) / _f32(h)), _f32(_f32(s[1]) / _f32(w)))
        s = (int(round(_f32(factor * _f32(h)))), int(round(_f32(factor * _f32(w)))))
    if (h == 0 or w == 0) and _prod(x._shape) is not None:
        raise InvalidArgumentError(f"images have shape {list(x._shape)}; allowed: a non-zero height and width", op)
    if m != "nearest" and x._dtype is _dt.float64:
        x = cast(x, _dt.float32)  # TensorFlow's resize kernels return float32 for every input dtype
    return _unbatch(run(_RESIZE, (_batched(x),), {"size": tuple(s), "method": m, "antialias": antialias}), batched)


def _f32(v):
    import struct

    return struct.unpack("f", struct.pack("f", v))[0]


_RESIZE = _resize


@register("resize_grad", "ResizeBilinearGrad")
def resize_grad(grads, image_size, method="bilinear", antialias=False):
    """The gradient of ``resize`` with respect to its images: the transposed resampling of ``grads``
    [batch, new_height, new_width, channels] back to ``image_size`` = [height, width].

    d images[b, i, j, c] = sum over (y, x) of Wy[y, i] Wx[x, j] grads[b, y, x, c], with the weights of
    ``method`` (so resize_grad is resize's adjoint).

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.image_ops import resize_grad
    >>> resize_grad(tf.ones([1, 1, 4, 1]), [1, 2])[0, :, :, 0].numpy().tolist()
    [[2.0, 2.0]]
    """
    m = _method_arg(method, "ResizeBilinearGrad")
    g = _tensor(grads, "ResizeBilinearGrad", "grads")
    if len(g._shape) != 4:
        raise InvalidArgumentError(f"grads has shape {list(g._shape)}; allowed: 4-D", "ResizeBilinearGrad")
    s = _size_arg(image_size, "ResizeBilinearGrad")
    return run(_resize_grad, (g,), {"image_size": tuple(s), "method": m, "antialias": bool(antialias)})


# ---- colour: primitives -----------------------------------------------------------------------------

def _colour_infer(x):
    return x._shape, x._dtype


def _colour_primitive(name, tf_name, kernel):
    @primitive(name, tf_name, infer=_colour_infer, dtypes=_FLOAT_IN + _HALF)
    def impl(dev, x):
        src = _cast_raw(x, _dt.float32) if x._dtype in _HALF else x
        out = alloc(src._shape, src._dtype, dev)
        check(getattr(dev.backend, kernel)(src._dtype.code, src._h, out._h, _prod(src._shape) // 3), kernel)
        return out if out._dtype is x._dtype else _cast_raw(out, x._dtype)
    return impl


_RGB_TO_HSV = _colour_primitive("rgb_to_hsv", "RGBToHSV", "rgb_to_hsv")
_HSV_TO_RGB = _colour_primitive("hsv_to_rgb", "HSVToRGB", "hsv_to_rgb")


def _colour_grad_infer(x, g, *, inverse):
    return x._shape, x._dtype


@primitive("colour_grad", "RGBToHSVGrad", infer=_colour_grad_infer, dtypes=_FLOAT_IN + _HALF, same_dtype=True)
def _colour_grad(dev, x, g, *, inverse):
    xs, gs = (_cast_raw(x, _dt.float32), _cast_raw(g, _dt.float32)) if x._dtype in _HALF else (x, g)
    out = alloc(xs._shape, xs._dtype, dev)
    check(dev.backend.colour_grad(int(inverse), xs._dtype.code, xs._h, gs._h, out._h, _prod(xs._shape) // 3),
          "colour_grad")
    return out if out._dtype is x._dtype else _cast_raw(out, x._dtype)


def _rgb_arg(images, op):
    x = _tensor(images, op)
    if not x._shape or x._shape[-1] not in (3, None):
        raise InvalidArgumentError(f"images have shape {list(x._shape)}; allowed: a last dimension of 3", op)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"images have dtype {x._dtype.name}; allowed: float16, bfloat16, float32, "
                                   "float64", op)
    return x


@register("rgb_to_hsv", "RGBToHSV")
def rgb_to_hsv(images, name=None):
    """RGB to HSV, per pixel (the last axis, of size 3), with values in [0, 1].

    v = max(r, g, b), s = (v - min) / v (0 where v = 0), h = the hexagon position / 6 in [0, 1).

    >>> import tapeflow as tf
    >>> tf.image.rgb_to_hsv(tf.constant([[0.0, 0.5, 1.0]])).numpy().tolist()
    [[0.5833333134651184, 1.0, 1.0]]
    """
    return run(_RGB_TO_HSV, (_rgb_arg(images, "RGBToHSV"),))


@register("hsv_to_rgb", "HSVToRGB")
def hsv_to_rgb(images, name=None):
    """HSV to RGB, per pixel (the last axis, of size 3): the inverse of ``rgb_to_hsv``.

    c = s * v, m = v - c; the hue's sixth of the hexagon places c and c * (1 - |(6h mod 2) - 1|); + m.

    >>> import tapeflow as tf
    >>> tf.image.hsv_to_rgb(tf.constant([[0.5, 1.0, 1.0]])).numpy().tolist()
    [[0.0, 1.0, 1.0]]
    """
    return run(_HSV_TO_RGB, (_rgb_arg(images, "HSVToRGB"),))


@register("colour_grad", "RGBToHSVGrad", nondiff="the second derivative of a piecewise colour conversion "
                                                   "(TensorFlow has none)")
def colour_grad(images, grads, inverse=False):
    """The vector-Jacobian product of ``rgb_to_hsv`` (``inverse=False``) or ``hsv_to_rgb`` at ``images``:
    d images = grads @ J(images), per pixel.

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.image_ops import colour_grad
    >>> colour_grad(tf.constant([[0.2, 0.4, 0.8]]), tf.constant([[0.0, 0.0, 1.0]])).numpy().tolist()
    [[0.0, 0.0, 1.0]]
    """
    x, g = _rgb_arg(images, "RGBToHSVGrad"), _rgb_arg(grads, "RGBToHSVGrad")
    if tuple(x._shape) != tuple(g._shape) or x._dtype is not g._dtype:
        raise InvalidArgumentError(f"images {x._dtype.name}{list(x._shape)} and grads {g._dtype.name}"
                                   f"{list(g._shape)}; allowed: the same shape and dtype", "RGBToHSVGrad")
    return run(_colour_grad, (x, g), {"inverse": bool(inverse)})


# ---- dtype conversion -------------------------------------------------------------------------------

def _max_of(dt):
    if dt.is_floating:
        return 1.0
    return {"int8": 127, "uint8": 255, "int16": 32767, "int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1}[dt.name]


def _min_of(dt):
    return {"int8": -128, "uint8": 0, "int16": -32768, "int32": -2 ** 31, "int64": -2 ** 63}[dt.name]


def _saturate_cast(x, dtype):
    """Cast clamping to the target's range first (tf.dtypes.saturate_cast)."""
    if dtype.is_integer and x._dtype is not dtype:
        lo, hi = _min_of(dtype), _max_of(dtype)
        if x._dtype.is_floating:
            # the largest float of x's dtype not above hi (hi itself may round up beyond the range)
            import numpy as np

            hi_f = float(np.nextafter(np.asarray(hi, x._dtype.np), np.asarray(0, x._dtype.np))) \
                if float(np.asarray(hi, x._dtype.np)) > hi else hi
            x = clip_by_value(x, float(lo), hi_f)
        else:
            src_lo, src_hi = _min_of(x._dtype), _max_of(x._dtype)
            if src_lo < lo or src_hi > hi:
                x = clip_by_value(x, cast(max(lo, src_lo), x._dtype), cast(min(hi, src_hi), x._dtype))
    return cast(x, dtype)


@register("convert_image_dtype", "ConvertImageDtype", kind="composite")
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Convert an image's dtype, rescaling values: floats span [0, 1), integers [0, dtype max].

    int -> float: x / in_max; float -> int: x * (out_max + 0.5) (clamped when ``saturate``); int -> int:
    scaled by the ratio of the ranges; float -> float: a cast.

    >>> import tapeflow as tf
    >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy().tolist()
    [0.0, 1.0]
    """
    op = "ConvertImageDtype"
    x = _tensor(image, op, "image")
    dt = dtype_arg(dtype, op)
    if not (dt.is_floating or dt.is_integer):
        raise InvalidArgumentError(f"dtype = {dt.name}; allowed: a floating-point or integer dtype", op)
    if not (x._dtype.is_floating or x._dtype.is_integer):
        raise InvalidArgumentError(f"image has dtype {x._dtype.name}; allowed: a floating-point or integer dtype", op)
    if dt is x._dtype:
        return identity(x)
    if x._dtype.is_integer and dt.is_integer:
        s_in, s_out = _max_of(x._dtype), _max_of(dt)
        if s_in > s_out:
            scaled = floordiv(x, _const((s_in + 1) // (s_out + 1), x._dtype))
            return _saturate_cast(scaled, dt) if saturate else cast(scaled, dt)
        c = _saturate_cast(x, dt) if saturate else cast(x, dt)
        return multiply(c, _const((s_out + 1) // (s_in + 1), dt))
    if x._dtype.is_floating and dt.is_floating:
        return cast(x, dt)
    if x._dtype.is_integer:
        return multiply(cast(x, dt), _const(1.0 / _max_of(x._dtype), dt))
    scaled = multiply(x, _const(_max_of(dt) + 0.5, x._dtype))
    return _saturate_cast(scaled, dt) if saturate else cast(scaled, dt)


# ---- crops, pads, flips, rotations ------------------------------------------------------------------

def _hw(x, op):
    h, w = x._shape[-3], x._shape[-2]
    if h is None or w is None:
        raise TypeError(f"the image's height and width must be known while tracing (got {list(x._shape)}) "
                        f"[Op:{op}]")
    return h, w


def _known(x, op, axes, what):
    if any(x._shape[a] is None for a in axes):
        raise TypeError(f"the image's {what} must be known while tracing (got {list(x._shape)}) [Op:{op}]")


def _nonneg(v, op, what):
    v = int_arg(static_value(v, op, what) if isinstance(v, Tensor) else v, op, what)
    if v < 0:
        raise InvalidArgumentError(f"{what} = {v}; allowed: {what} >= 0", op)
    return v


def _window(x, top, left, height, width):
    """x[..., top:top+height, left:left+width, :] for a 4-D x (a slice; differentiable)."""
    return x[:, top:top + height, left:left + width, :]


@register("crop_to_bounding_box", "CropToBoundingBox", kind="composite")
def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The window of ``image`` at (offset_height, offset_width) of size target_height x target_width.

    out[..., i, j, :] = image[..., offset_height + i, offset_width + j, :].

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(9.0), [3, 3, 1])
    >>> tf.image.crop_to_bounding_box(x, 1, 1, 2, 2)[..., 0].numpy().tolist()
    [[4.0, 5.0], [7.0, 8.0]]
    """
    op = "CropToBoundingBox"
    x, batched = _image(image, op)
    oh, ow = _nonneg(offset_height, op, "offset_height"), _nonneg(offset_width, op, "offset_width")
    th, tw = _nonneg(target_height, op, "target_height"), _nonneg(target_width, op, "target_width")
    if th == 0 or tw == 0:
        raise InvalidArgumentError(f"target size {th}x{tw}; allowed: target_height > 0 and target_width > 0", op)
    h, w = x._shape[-3], x._shape[-2]
    if h is not None and w is not None and (oh + th > h or ow + tw > w):
        raise InvalidArgumentError(f"the box [{oh}:{oh + th}, {ow}:{ow + tw}] leaves the {h}x{w} image; allowed: "
                                   "offset + target <= the image's size", op)
    return _unbatch(_window(_batched(x), oh, ow, th, tw), batched)


@register("pad_to_bounding_box", "PadToBoundingBox", kind="composite")
def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zero-pad ``image`` to target_height x target_width, with its top-left corner at the offsets.

    >>> import tapeflow as tf
    >>> tf.image.pad_to_bounding_box(tf.ones([1, 1, 1]), 1, 0, 2, 2)[..., 0].numpy().tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    """
    op = "PadToBoundingBox"
    x, batched = _image(image, op)
    oh, ow = _nonneg(offset_height, op, "offset_height"), _nonneg(offset_width, op, "offset_width")
    th, tw = _nonneg(target_height, op, "target_height"), _nonneg(target_width, op, "target_width")
    h, w = _hw(x, op)
    if th - oh - h < 0 or tw - ow - w < 0:
        raise InvalidArgumentError(f"the {h}x{w} image at offset ({oh}, {ow}) does not fit {th}x{tw}; allowed: "
                                   "offset + the image's size <= target", op)
    out = pad(_batched(x), [[0, 0], [oh, th - oh - h], [ow, tw - ow - w], [0, 0]])
    return _unbatch(out, batched)


@register("central_crop", "CentralCrop", kind="composite")
def central_crop(image, central_fraction):
    """The central ``central_fraction`` (in (0, 1]) of the image along height and width.

    start = int((size - size * fraction) / 2) per axis, size - 2 * start kept.

    >>> import tapeflow as tf
    >>> tf.image.central_crop(tf.reshape(tf.range(16.0), [4, 4, 1]), 0.5)[..., 0].numpy().tolist()
    [[5.0, 6.0], [9.0, 10.0]]
    """
    op = "CentralCrop"
    x, batched = _image(image, op)
    f = central_fraction
    if isinstance(f, Tensor):
        f = float(static_value(f, op, "central_fraction"))
    if isinstance(f, bool) or not isinstance(f, (int, float)):
        raise TypeError(f"central_fraction must be a number, got {type(f).__name__} {f!r} [Op:{op}]")
    if not 0.0 < f <= 1.0:
        raise InvalidArgumentError(f"central_fraction = {f}; allowed: within (0, 1]", op)
    if f == 1.0:
        return x
    h, w = _hw(x, op)
    top, left = int((h - h * f) / 2), int((w - w * f) / 2)
    return _unbatch(_window(_batched(x), top, left, h - 2 * top, w - 2 * left), batched)


@register("resize_with_crop_or_pad", "ResizeWithCropOrPad", kind="composite")
def resize_with_crop_or_pad(image, target_height, target_width):
    """Crop (centrally) or zero-pad (evenly) an image to target_height x target_width.

    >>> import tapeflow as tf
    >>> tf.image.resize_with_crop_or_pad(tf.ones([1, 3, 1]), 2, 1)[..., 0].numpy().tolist()
    [[1.0], [0.0]]
    """
    op = "ResizeWithCropOrPad"
    x, batched = _image(image, op)
    th, tw = _nonneg(target_height, op, "target_height"), _nonneg(target_width, op, "target_width")
    if th == 0 or tw == 0:
        raise InvalidArgumentError(f"target size {th}x{tw}; allowed: target_height > 0 and target_width > 0", op)
    h, w = _hw(x, op)
    x4 = _batched(x)
    wd, hd = tw - w, th - h
    cropped = _window(x4, max(-hd // 2, 0), max(-wd // 2, 0), min(th, h), min(tw, w))
    out = pad_to_bounding_box(cropped, max(hd // 2, 0), max(wd // 2, 0), th, tw)
    return _unbatch(out, batched)


@register("resize_with_pad", "ResizeWithPad", kind="composite")
def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """Resize keeping the aspect ratio, then zero-pad (centred) to target_height x target_width.

    ratio = max(w / target_width, h / target_height); the resized size is floor(size / ratio).

    >>> import tapeflow as tf
    >>> tf.image.resize_with_pad(tf.ones([2, 2, 1]), 2, 4)[..., 0].numpy().tolist()
    [[0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0]]
    """
    op = "ResizeWithPad"
    x, batched = _image(image, op)
    th, tw = _nonneg(target_height, op, "target_height"), _nonneg(target_width, op, "target_width")
    if th == 0 or tw == 0:
        raise InvalidArgumentError(f"target size {th}x{tw}; allowed: target_height > 0 and target_width > 0", op)
    h, w = _hw(x, op)
    ratio = max(_f32(_f32(w) / _f32(tw)), _f32(_f32(h) / _f32(th)))
    rh, rw = _f32(h / ratio), _f32(w / ratio)
    ph, pw = max(0, int(_math.floor(_f32((th - rh) / 2)))), max(0, int(_math.floor(_f32((tw - rw) / 2))))
    resized = resize(_batched(x), [int(_math.floor(rh)), int(_math.floor(rw))], method=method, antialias=antialias)
    return _unbatch(pad_to_bounding_box(resized, ph, pw, th, tw), batched)


def _flip(x, axis):
    idx = [slice(None)] * 4
    idx[axis] = slice(None, None, -1)
    return x[tuple(idx)]


@register("flip_left_right", "FlipLeftRight", kind="composite")
def flip_left_right(image):
    """Mirror images along the width: out[..., i, j, :] = image[..., i, width - 1 - j, :].

    >>> import tapeflow as tf
    >>> tf.image.flip_left_right(tf.constant([[[1.0], [2.0]]]))[..., 0].numpy().tolist()
    [[2.0, 1.0]]
    """
    x, batched = _image(image, "FlipLeftRight")
    return _unbatch(_flip(_batched(x), 2), batched)


@register("flip_up_down", "FlipUpDown", kind="composite")
def flip_up_down(image):
    """Mirror images along the height: out[..., i, j, :] = image[..., height - 1 - i, j, :].

    >>> import tapeflow as tf
    >>> tf.image.flip_up_down(tf.constant([[[1.0]], [[2.0]]]))[..., 0].numpy().tolist()
    [[2.0], [1.0]]
    """
    x, batched = _image(image, "FlipUpDown")
    return _unbatch(_flip(_batched(x), 1), batched)


@register("rot90", "Rot90", kind="composite")
def rot90(image, k=1, name=None):
    """Rotate images by k * 90 degrees counter-clockwise (k may be negative).

    >>> import tapeflow as tf
    >>> tf.image.rot90(tf.reshape(tf.range(4.0), [2, 2, 1]))[..., 0].numpy().tolist()
    [[1.0, 3.0], [0.0, 2.0]]
    """
    op = "Rot90"
    x, batched = _image(image, op)
    k = int_arg(static_value(k, op, "k") if isinstance(k, Tensor) else k, op, "k") % 4
    x4 = _batched(x)
    if k == 1:
        x4 = _flip(_transpose(x4, [0, 2, 1, 3]), 1)
    elif k == 2:
        x4 = _flip(_flip(x4, 1), 2)
    elif k == 3:
        x4 = _transpose(_flip(x4, 1), [0, 2, 1, 3])
    else:
        x4 = identity(x4)
    return _unbatch(x4, batched)


@register("image_transpose", "ImageTranspose", kind="composite")
def transpose(image, name=None):
    """Swap height and width: out[..., i, j, :] = image[..., j, i, :] (tf.image.transpose).

    >>> import tapeflow as tf
    >>> tf.image.transpose(tf.reshape(tf.range(2.0), [1, 2, 1])).shape
    TensorShape([2, 1, 1])
    """
    x, batched = _image(image, "ImageTranspose")
    return _transpose(x, [0, 2, 1, 3] if batched else [1, 0, 2])


# ---- colour ----------------------------------------------------------------------------------------

@register("rgb_to_grayscale", "RGBToGrayscale", kind="composite")
def rgb_to_grayscale(images, name=None):
    """Luma of RGB images: 0.2989 r + 0.587 g + 0.114 b, keeping a last axis of size 1 and the dtype.

    >>> import tapeflow as tf
    >>> [round(v, 4) for v in tf.image.rgb_to_grayscale(tf.constant([[1.0, 1.0, 0.0]])).numpy()[0].tolist()]
    [0.8859]
    """
    op = "RGBToGrayscale"
    x = _tensor(images, op)
    if not x._shape or x._shape[-1] not in (3, None):
        raise InvalidArgumentError(f"images have shape {list(x._shape)}; allowed: a last dimension of 3", op)
    f = convert_image_dtype(x, _dt.float32)
    gray = reduce_sum(multiply(f, cast([0.2989, 0.587, 0.114], _dt.float32)), axis=-1, keepdims=True)
    return convert_image_dtype(gray, x._dtype)


@register("grayscale_to_rgb", "GrayscaleToRGB", kind="composite")
def grayscale_to_rgb(images, name=None):
    """Repeat the single channel of grayscale images three times.

    >>> import tapeflow as tf
    >>> tf.image.grayscale_to_rgb(tf.constant([[0.5]])).numpy().tolist()
    [[0.5, 0.5, 0.5]]
    """
    op = "GrayscaleToRGB"
    x = _tensor(images, op)
    if len(x._shape) < 2 or x._shape[-1] not in (1, None):
        raise InvalidArgumentError(f"images have shape {list(x._shape)}; allowed: rank >= 2 with a last "
                                   "dimension of 1", op)
    return tile(x, [1] * (len(x._shape) - 1) + [3])


def _number(v, op, what):
    if isinstance(v, Tensor):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{what} must be a number or a tensor, got {type(v).__name__} {v!r} [Op:{op}]")
    return v


@register("adjust_brightness", "AdjustBrightness", kind="composite")
def adjust_brightness(image, delta):
    """image + delta, in float (integer images convert to [0, 1] floats and back, saturating).

    >>> import tapeflow as tf
    >>> tf.image.adjust_brightness(tf.constant([[[0.25]]]), 0.5).numpy().ravel().tolist()
    [0.75]
    """
    op = "AdjustBrightness"
    x = _tensor(image, op, "image")
    f = _float_image(x)
    out = add(f, _const(_number(delta, op, "delta"), f._dtype))
    return convert_image_dtype(out, x._dtype, saturate=True)


@register("adjust_contrast", "AdjustContrastv2", kind="composite")
def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, the mean per image and channel over height and width.

    >>> import tapeflow as tf
    >>> tf.image.adjust_contrast(tf.constant([[[0.0]], [[1.0]]]), 2.0).numpy().ravel().tolist()
    [-0.5, 1.5]
    """
    op = "AdjustContrastv2"
    x, _ = _image(images, op, "images", ranks=(3, 4, 5, 6))
    f = _float_image(x)
    f32 = cast(f, _dt.float32)  # float16 computes in float32, as TensorFlow's AdjustContrastv2 kernel
    mean = reduce_mean(f32, axis=[-3, -2], keepdims=True)
    out = add(multiply(subtract(f32, mean), _const(_number(contrast_factor, op, "contrast_factor"), _dt.float32)),
              mean)
    return convert_image_dtype(cast(out, f._dtype), x._dtype, saturate=True)


@register("adjust_gamma", "AdjustGamma", kind="composite")
def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma (integer images through [0, 1] floats, saturating back).

    >>> import tapeflow as tf
    >>> tf.image.adjust_gamma(tf.constant([[[0.5]]]), 2.0).numpy().ravel().tolist()
    [0.25]
    """
    op = "AdjustGamma"
    x = _tensor(image, op, "image")
    g = _number(gamma, op, "gamma")
    if not isinstance(g, Tensor) and g < 0:
        raise InvalidArgumentError(f"gamma = {g}; allowed: a non-negative real number", op)
    f = _float_image(x)
    out = multiply(_const(_number(gain, op, "gain"), f._dtype), f ** _const(g, f._dtype))
    return convert_image_dtype(out, x._dtype, saturate=True)


def _hsv_adjust(image, op, fn):
    x = _tensor(image, op, "image")
    if not x._shape or x._shape[-1] not in (3, None):
        raise InvalidArgumentError(f"image has shape {list(x._shape)}; allowed: a last dimension of 3", op)
    f = _float_image(x)
    hsv = rgb_to_hsv(f)
    h, s, v = hsv[..., 0:1], hsv[..., 1:2], hsv[..., 2:3]
    h, s = fn(h, s)
    return convert_image_dtype(hsv_to_rgb(concat([h, s, v], -1)), x._dtype)


@register("adjust_saturation", "AdjustSaturation", kind="composite")
def adjust_saturation(image, saturation_factor, name=None):
    """Scale the saturation: RGB -> HSV, s = clip(s * saturation_factor, 0, 1), -> RGB.

    >>> import tapeflow as tf
    >>> tf.image.adjust_saturation(tf.constant([[1.0, 0.5, 0.5]]), 0.0).numpy().tolist()
    [[1.0, 1.0, 1.0]]
    """
    op = "AdjustSaturation"
    k = _number(saturation_factor, op, "saturation_factor")
    return _hsv_adjust(image, op, lambda h, s: (h, clip_by_value(multiply(s, _const(k, s._dtype)), 0.0, 1.0)))


@register("adjust_hue", "AdjustHue", kind="composite")
def adjust_hue(image, delta, name=None):
    """Rotate the hue by ``delta`` (in [-1, 1], a fraction of the colour wheel): h = (h + delta) mod 1.

    >>> import tapeflow as tf
    >>> tf.image.adjust_hue(tf.constant([[1.0, 0.0, 0.0]]), 1 / 3).numpy().round(4).tolist()
    [[0.0, 1.0, 0.0]]
    """
    op = "AdjustHue"
    d = _number(delta, op, "delta")
    if not isinstance(d, Tensor) and not -1 <= d <= 1:
        raise InvalidArgumentError(f"delta = {d}; allowed: the interval [-1, 1]", op)
    return _hsv_adjust(image, op, lambda h, s: (floormod(add(h, _const(d, h._dtype)), _const(1.0, h._dtype)), s))


@register("per_image_standardization", "PerImageStandardization", kind="composite")
def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(N)) per image, N its number of elements; float32 out.

    >>> import tapeflow as tf
    >>> tf.image.per_image_standardization(tf.constant([[[1.0], [3.0]]])).numpy().ravel().tolist()
    [-1.0, 1.0]
    """
    op = "PerImageStandardization"
    x, _ = _image(image, op, ranks=(3, 4, 5, 6))
    f = cast(x, _dt.float32)
    # the element count per image as a tensor, so unknown dimensions trace (an empty image counts 1)
    n = maximum(reduce_sum(ones_like(f), axis=[-1, -2, -3], keepdims=True), 1.0)
    mean = reduce_mean(f, axis=[-1, -2, -3], keepdims=True)
    std = reduce_std(f, axis=[-1, -2, -3], keepdims=True)
    adjusted = maximum(std, rsqrt(n))
    return real_div(subtract(f, mean), adjusted)


# ---- metrics and filters ----------------------------------------------------------------------------

def _same_images(a, b, op):
    x, y = _tensor(a, op, "a"), _tensor(b, op, "b")
    if len(x._shape) < 3 or tuple(x._shape[-3:]) != tuple(y._shape[-3:]) or x._dtype is not y._dtype:
        raise InvalidArgumentError(f"images {x._dtype.name}{list(x._shape)} and {y._dtype.name}{list(y._shape)}; "
                                   "allowed: rank >= 3, the same height, width, channels and dtype", op)
    return x, y


@register("total_variation", "TotalVariation", kind="composite")
def total_variation(images, name=None):
    """Sum of the absolute differences of neighbouring pixels (per image for a batch).

    >>> import tapeflow as tf
    >>> tf.image.total_variation(tf.constant([[[0.0], [1.0]], [[3.0], [3.0]]])).numpy().tolist()
    6.0
    """
    op = "TotalVariation"
    x, batched = _image(images, op, "images")
    x4 = _batched(x)
    d1 = subtract(x4[:, 1:, :, :], x4[:, :-1, :, :])
    d2 = subtract(x4[:, :, 1:, :], x4[:, :, :-1, :])
    tv = add(reduce_sum(_abs(d1), axis=[1, 2, 3]), reduce_sum(_abs(d2), axis=[1, 2, 3]))
    return tv if batched else reshape(tv, ())


def _max_val(max_val, dtype, op):
    if not isinstance(max_val, Tensor):
        _number(max_val, op, "max_val")
    return convert_image_dtype(_const(max_val, dtype), _dt.float32)


@register("psnr", "PSNR", kind="composite")
def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio: 20 log10(max_val) - 10 log10(mean((a - b)**2)) per image.

    >>> import tapeflow as tf
    >>> float(tf.image.psnr(tf.zeros([2, 2, 1]), tf.fill([2, 2, 1], 0.1), 1.0))
    20.0
    """
    op = "PSNR"
    x, y = _same_images(a, b, op)
    mv = _max_val(max_val, x._dtype, op)
    x, y = convert_image_dtype(x, _dt.float32), convert_image_dtype(y, _dt.float32)
    mse = reduce_mean(squared_difference(x, y), axis=[-3, -2, -1])
    return subtract(real_div(multiply(log(mv), 20.0), log(cast(10.0, _dt.float32))),
                    multiply(log(mse), float(_f32(10 / _math.log(10)))))


def _gauss(size, sigma):
    import numpy as np  # the filter is a constant of the call, built on the host as TensorFlow's _fspecial_gauss

    c = np.arange(size, dtype=np.float32) - np.float32((size - 1) / 2.0)
    g = np.square(c) * np.float32(-0.5 / (sigma * sigma))
    g = (g.reshape(1, -1) + g.reshape(-1, 1)).reshape(-1)
    e = np.exp(g - g.max())
    return (e / e.sum()).astype(np.float32).reshape(size, size, 1, 1)


@register("ssim", "SSIM", kind="composite")
def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity with a Gaussian window (TensorFlow's tf.image.ssim), averaged over the channels.

    luminance = (2 mu_x mu_y + c1) / (mu_x**2 + mu_y**2 + c1), cs = (2 s_xy + c2) / (s_x**2 + s_y**2 + c2),
    c1 = (k1 max_val)**2, c2 = (k2 max_val)**2; ssim = mean over the window positions of luminance * cs.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(144.0) / 144.0, [12, 12, 1])
    >>> round(float(tf.image.ssim(x, x, 1.0)), 5)
    1.0
    """
    op = "SSIM"
    x, y = _same_images(img1, img2, op)
    fs = int_arg(filter_size, op, "filter_size")
    if fs <= 0:
        raise InvalidArgumentError(f"filter_size = {fs}; allowed: filter_size > 0", op)
    h, w = x._shape[-3], x._shape[-2]
    if h is not None and w is not None and (h < fs or w < fs):
        raise InvalidArgumentError(f"images of {h}x{w} are smaller than filter_size = {fs}; allowed: height and "
                                   "width >= filter_size", op)
    _known(x, op, (-1,), "channels (one window per channel)")
    mv = _max_val(max_val, x._dtype, op)
    x, y = convert_image_dtype(x, _dt.float32), convert_image_dtype(y, _dt.float32)
    c = x._shape[-1]
    kernel = tile(cast(_gauss(fs, float(_f32(filter_sigma))), _dt.float32), [1, 1, c, 1])
    lead = tuple(x._shape[:-3])

    def reducer(t):
        t4 = reshape(t, (-1,) + tuple(t._shape[-3:]))
        r = _depthwise(t4, kernel)
        return reshape(r, lead + tuple(r._shape[1:]))

    c1, c2 = square(multiply(mv, k1)), square(multiply(mv, k2))
    m0, m1 = reducer(x), reducer(y)
    num0 = multiply(multiply(m0, m1), 2.0)
    den0 = add(square(m0), square(m1))
    lum = real_div(add(num0, c1), add(den0, c1))
    num1 = multiply(reducer(multiply(x, y)), 2.0)
    den1 = reducer(add(square(x), square(y)))
    cs = real_div(add(subtract(num1, num0), c2), add(subtract(den1, den0), c2))
    val = multiply(lum, cs)
    if not return_index_map:
        val = reduce_mean(val, axis=[-3, -2])
    return reduce_mean(val, axis=[-1])


def _depthwise(x4, kernel):
    from .conv_ops import depthwise_conv2d

    return depthwise_conv2d(x4, kernel, [1, 1, 1, 1], "VALID")


@register("image_gradients", "ImageGradients", kind="composite")
def image_gradients(image):
    """(dy, dx): forward differences along height and width of 4-D images, 0 in the last row/column.

    >>> import tapeflow as tf
    >>> dy, dx = tf.image.image_gradients(tf.reshape(tf.range(4.0), [1, 2, 2, 1]))
    >>> dy[0, :, :, 0].numpy().tolist(), dx[0, :, :, 0].numpy().tolist()
    ([[2.0, 2.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]])
    """
    op = "ImageGradients"
    x, _ = _image(image, op, ranks=(4,))
    b, h, w, c = x._shape
    dy = concat([subtract(x[:, 1:, :, :], x[:, :-1, :, :]), zeros_like(x[:, :1, :, :])], 1)
    dx = concat([subtract(x[:, :, 1:, :], x[:, :, :-1, :]), zeros_like(x[:, :, :1, :])], 2)
    return dy, dx


@register("sobel_edges", "SobelEdges", kind="composite")
def sobel_edges(image):
    """Sobel filter responses of 4-D images (reflect-padded): [..., channels, 2] holding (dy, dx).

    >>> import tapeflow as tf
    >>> tf.image.sobel_edges(tf.reshape(tf.range(9.0), [1, 3, 3, 1]))[0, 1, 1, 0].numpy().tolist()
    [24.0, 8.0]
    """
    import numpy as np  # the two 3x3 filters are constants, as in TensorFlow

    op = "SobelEdges"
    x, _ = _image(image, op, ranks=(4,))
    _known(x, op, (3,), "channels (one filter pair per channel)")
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"image has dtype {x._dtype.name}; allowed: a floating-point dtype", op)
    k = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]], np.float64)
    k = np.expand_dims(np.transpose(k, (1, 2, 0)), -2)
    kern = tile(_const(k, x._dtype), [1, 1, x._shape[-1], 1])
    padded = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = _depthwise(padded, kern)
    return reshape(out, tuple(x._shape) + (2,))


def _size_list(v, op, what, n):
    s = int_list(v, op, what, scalar_ok=False)
    if len(s) != n or any(d <= 0 for d in s):
        raise InvalidArgumentError(f"{what} = {list(s)}; allowed: {n} positive ints", op)
    return s


@register("extract_patches", "ExtractImagePatches", kind="composite")
def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Patches of 4-D images, flattened into the depth: out[b, i, j, (di * kw + dj) * c + ch] =
    images[b, i * sh + di * rh - pad_top, j * sw + dj * rw - pad_left, ch] (0 outside with SAME).

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.image.extract_patches(x, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")[0, 0, 0].numpy().tolist()
    [0.0, 1.0, 4.0, 5.0]
    """
    op = "ExtractImagePatches"
    x, _ = _image(images, op, "images", ranks=(4,))
    sz, st, rt = (_size_list(v, op, w, 4) for v, w in ((sizes, "sizes"), (strides, "strides"), (rates, "rates")))
    for name_, v in (("sizes", sz), ("strides", st), ("rates", rt)):
        if v[0] != 1 or v[3] != 1:
            raise InvalidArgumentError(f"{name_} = {list(v)}; allowed: 1 in the batch and depth positions", op)
    if padding not in ("VALID", "SAME"):
        raise InvalidArgumentError(f"padding = {padding!r}; allowed: 'VALID', 'SAME'", op)
    _known(x, op, (1, 2), "height and width (they decide the patch grid)")
    b, h, w, c = x._shape
    kh, kw = (sz[1] - 1) * rt[1] + 1, (sz[2] - 1) * rt[2] + 1
    if padding == "VALID":
        oh, ow = max(0, (h - kh) // st[1] + 1), max(0, (w - kw) // st[2] + 1)
        pt = pl = 0
        xp = x
    else:
        oh, ow = -(-h // st[1]), -(-w // st[2])
        ph, pw = max(0, (oh - 1) * st[1] + kh - h), max(0, (ow - 1) * st[2] + kw - w)
        pt, pl = ph // 2, pw // 2
        xp = pad(x, [[0, 0], [pt, ph - pt], [pl, pw - pl], [0, 0]])
    if oh == 0 or ow == 0:
        return zeros((b, oh, ow, sz[1] * sz[2] * c), x._dtype)
    parts = []
    for di in range(sz[1]):
        for dj in range(sz[2]):
            r0, c0 = di * rt[1], dj * rt[2]
            parts.append(xp[:, r0:r0 + (oh - 1) * st[1] + 1:st[1], c0:c0 + (ow - 1) * st[2] + 1:st[2], :])
    return concat(parts, -1)


# ---- random augmentations (seeded) ------------------------------------------------------------------

def _seed_pair(seed, op):
    s = int_list(static_value(seed, op, "seed") if isinstance(seed, Tensor) else seed, op, "seed",
                 scalar_ok=False)
    if len(s) != 2:
        raise InvalidArgumentError(f"seed = {list(s)}; allowed: a pair of ints (shape [2])", op)
    return list(s)


def _uniform(shape, lo, hi, seed, stateless, op):
    from .. import random as _random

    if stateless:
        return _random.stateless_uniform(shape, _seed_pair(seed, op), minval=lo, maxval=hi)
    if seed is not None:
        seed = int_arg(seed, op, "seed")
    return _random.uniform(shape, minval=lo, maxval=hi, seed=seed)


def _flip_random(image, axis, seed, stateless, op):
    x, batched = _image(image, op)
    x4 = _batched(x)
    n = x4._shape[0]
    u = _uniform((n,), 0.0, 1.0, seed, stateless, op)
    from .array_ops import where
    from .math_ops import less

    keep = reshape(less(u, 0.5), (n, 1, 1, 1))
    from .array_ops import broadcast_to

    out = where(broadcast_to(keep, x4._shape), _flip(x4, axis), x4)
    return _unbatch(out, batched)


def random_flip_left_right(image, seed=None):
    """Flip each image left-right with probability 1/2 (a draw per image of a batch).

    >>> import tapeflow as tf
    >>> tf.image.random_flip_left_right(tf.ones([2, 2, 1]), seed=1).shape
    TensorShape([2, 2, 1])
    """
    return _flip_random(image, 2, seed, False, "RandomFlipLeftRight")


def random_flip_up_down(image, seed=None):
    """Flip each image up-down with probability 1/2 (a draw per image of a batch).

    >>> import tapeflow as tf
    >>> tf.image.random_flip_up_down(tf.ones([2, 2, 1]), seed=1).shape
    TensorShape([2, 2, 1])
    """
    return _flip_random(image, 1, seed, False, "RandomFlipUpDown")


def stateless_random_flip_left_right(image, seed):
    """``random_flip_left_right`` drawn from the (key, counter) ``seed`` pair: the same seed, the same flips.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
    >>> bool(tf.reduce_all(tf.image.stateless_random_flip_left_right(x, [1, 2]) ==
    ...                    tf.image.stateless_random_flip_left_right(x, [1, 2])))
    True
    """
    return _flip_random(image, 2, seed, True, "StatelessRandomFlipLeftRight")


def stateless_random_flip_up_down(image, seed):
    """``random_flip_up_down`` drawn from the ``seed`` pair.

    >>> import tapeflow as tf
    >>> tf.image.stateless_random_flip_up_down(tf.ones([2, 2, 1]), [3, 4]).shape
    TensorShape([2, 2, 1])
    """
    return _flip_random(image, 1, seed, True, "StatelessRandomFlipUpDown")


def _range_args(lower, upper, op, lo_min=None):
    for v, w in ((lower, "lower"), (upper, "upper")):
        _number(v, op, w)
    if upper <= lower:
        raise InvalidArgumentError(f"lower = {lower}, upper = {upper}; allowed: upper > lower", op)
    if lo_min is not None and lower < lo_min:
        raise InvalidArgumentError(f"lower = {lower}; allowed: lower >= {lo_min}", op)


def _delta_arg(max_delta, op, limit=None):
    _number(max_delta, op, "max_delta")
    if max_delta < 0 or (limit is not None and max_delta > limit):
        allowed = f"[0, {limit}]" if limit is not None else ">= 0"
        raise InvalidArgumentError(f"max_delta = {max_delta}; allowed: {allowed}", op)


def _draw(lo, hi, seed, stateless, op):
    return _uniform((), float(lo), float(hi), seed, stateless, op)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta).

    >>> import tapeflow as tf
    >>> tf.image.random_brightness(tf.zeros([1, 1, 1]), 0.5, seed=3).shape
    TensorShape([1, 1, 1])
    """
    op = "RandomBrightness"
    _delta_arg(max_delta, op)
    return adjust_brightness(image, _draw(-max_delta, max_delta, seed, False, op))


def stateless_random_brightness(image, max_delta, seed):
    """``random_brightness`` drawn from the ``seed`` pair.

    >>> import tapeflow as tf
    >>> tf.image.stateless_random_brightness(tf.zeros([1, 1, 1]), 0.5, [1, 2]).shape
    TensorShape([1, 1, 1])
    """
    op = "StatelessRandomBrightness"
    _delta_arg(max_delta, op)
    return adjust_brightness(image, _draw(-max_delta, max_delta, seed, True, op))


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper).

    >>> import tapeflow as tf
    >>> tf.image.random_contrast(tf.ones([2, 2, 1]), 0.5, 1.5, seed=3).shape
    TensorShape([2, 2, 1])
    """
    op = "RandomContrast"
    _range_args(lower, upper, op, 0)
    return adjust_contrast(image, _draw(lower, upper, seed, False, op))


def stateless_random_contrast(image, lower, upper, seed):
    """``random_contrast`` drawn from the ``seed`` pair.

    >>> import tapeflow as tf
    >>> tf.image.stateless_random_contrast(tf.ones([2, 2, 1]), 0.5, 1.5, [1, 2]).shape
    TensorShape([2, 2, 1])
    """
    op = "StatelessRandomContrast"
    _range_args(lower, upper, op, 0)
    return adjust_contrast(image, _draw(lower, upper, seed, True, op))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper).

    >>> import tapeflow as tf
    >>> tf.image.random_saturation(tf.ones([1, 1, 3]), 0.5, 1.5, seed=3).shape
    TensorShape([1, 1, 3])
    """
    op = "RandomSaturation"
    _range_args(lower, upper, op, 0)
    return adjust_saturation(image, _draw(lower, upper, seed, False, op))


def stateless_random_saturation(image, lower, upper, seed=None):
    """``random_saturation`` drawn from the ``seed`` pair.

    >>> import tapeflow as tf
    >>> tf.image.stateless_random_saturation(tf.ones([1, 1, 3]), 0.5, 1.5, [1, 2]).shape
    TensorShape([1, 1, 3])
    """
    op = "StatelessRandomSaturation"
    _range_args(lower, upper, op, 0)
    return adjust_saturation(image, _draw(lower, upper, seed, True, op))


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta), max_delta in [0, 0.5].

    >>> import tapeflow as tf
    >>> tf.image.random_hue(tf.ones([1, 1, 3]), 0.2, seed=3).shape
    TensorShape([1, 1, 3])
    """
    op = "RandomHue"
    _delta_arg(max_delta, op, 0.5)
    return adjust_hue(image, _draw(-max_delta, max_delta, seed, False, op))


def stateless_random_hue(image, max_delta, seed):
    """``random_hue`` drawn from the ``seed`` pair.

    >>> import tapeflow as tf
    >>> tf.image.stateless_random_hue(tf.ones([1, 1, 3]), 0.2, [1, 2]).shape
    TensorShape([1, 1, 3])
    """
    op = "StatelessRandomHue"
    _delta_arg(max_delta, op, 0.5)
    return adjust_hue(image, _draw(-max_delta, max_delta, seed, True, op))


def _crop_random(value, size, seed, stateless, op):
    x = _tensor(value, op, "value")
    sz = int_list(size, op, "size", scalar_ok=False)
    if len(sz) != len(x._shape):
        raise InvalidArgumentError(f"size = {list(sz)} for a value of shape {list(x._shape)}; allowed: one size "
                                   "per dimension", op)
    if None in tuple(x._shape):
        raise TypeError(f"the value's shape must be known while tracing (got {list(x._shape)}) [Op:{op}]")
    if any(s < 0 or s > d for s, d in zip(sz, x._shape)):
        raise InvalidArgumentError(f"size = {list(sz)} for a value of shape {list(x._shape)}; allowed: "
                                   "0 <= size <= the value's shape", op)
    limits = [d - s + 1 for s, d in zip(sz, x._shape)]
    u = _uniform((len(sz),), 0.0, 1.0, seed, stateless, op)
    from .math_ops import cast as _cast

    offs = _cast(floor(multiply(u, cast(limits, _dt.float32))), _dt.int32)
    offs = minimum(offs, cast([lim - 1 for lim in limits], _dt.int32))
    from .array_ops import range_
    from .index_ops import gather

    # a gather of offset + range(size) per cropped axis: the offsets are drawn values, so this also runs inside
    # tf.function, where a slice would need them on the host
    out = x
    for a, (s_, d) in enumerate(zip(sz, x._shape)):
        if s_ != d:
            out = gather(out, add(offs[a], range_(s_, dtype=_dt.int32)), axis=a)
    return out


def random_crop(value, size, seed=None, name=None):
    """A window of shape ``size`` at a uniformly drawn offset of ``value`` (any rank).

    >>> import tapeflow as tf
    >>> tf.image.random_crop(tf.ones([4, 4, 3]), [2, 2, 3], seed=1).shape
    TensorShape([2, 2, 3])
    """
    return _crop_random(value, size, seed, False, "RandomCrop")


def stateless_random_crop(value, size, seed, name=None):
    """``random_crop`` drawn from the ``seed`` pair.

    >>> import tapeflow as tf
    >>> tf.image.stateless_random_crop(tf.ones([4, 4, 3]), [2, 2, 3], [1, 2]).shape
    TensorShape([2, 2, 3])
    """
    return _crop_random(value, size, seed, True, "StatelessRandomCrop")


class ResizeMethod:
    """tf.image.ResizeMethod: the names of resize's methods.

    >>> import tapeflow as tf
    >>> tf.image.ResizeMethod.BILINEAR
    'bilinear'
    """

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


# tf.image: public name -> function
IMAGE_API = {f.__name__: f for f in (
    resize, resize_with_pad, resize_with_crop_or_pad, crop_to_bounding_box, pad_to_bounding_box, central_crop,
    flip_left_right, flip_up_down, rot90, rgb_to_grayscale, grayscale_to_rgb, rgb_to_hsv, hsv_to_rgb,
    adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue, adjust_gamma, random_flip_left_right,
    random_flip_up_down, random_brightness, random_contrast, random_saturation, random_hue, random_crop,
    stateless_random_flip_left_right, stateless_random_flip_up_down, stateless_random_brightness,
    stateless_random_contrast, stateless_random_saturation, stateless_random_hue, stateless_random_crop,
    per_image_standardization, convert_image_dtype, ssim, psnr, image_gradients, sobel_edges, total_variation,
    extract_patches)}
IMAGE_API["transpose"] = transpose
IMAGE_API["ResizeMethod"] = ResizeMethod
