"""tf.image: TensorFlow 2's dtypes and sizes, the random augmentations' seeds, gradients of the composites,
and bad input.  Values against NumPy are the specs' (tests/specs/image.py); against TensorFlow itself in the
last test, where TensorFlow is installed."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

E = tf.errors.InvalidArgumentError


def _x(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(0.05, 0.95, size=shape).astype(dtype)


# ---- resize ------------------------------------------------------------------------------------------

def test_resize_dtypes_follow_tensorflow():
    u8 = (_x((5, 6, 2)) * 255).astype(np.uint8)
    assert tf.image.resize(u8, [3, 3]).dtype == tf.float32
    assert tf.image.resize(u8, [3, 3], method="nearest").dtype == tf.uint8
    assert tf.image.resize(_x((5, 6, 2), dtype=np.float64), [3, 3]).dtype == tf.float32
    assert tf.image.resize(_x((5, 6, 2), dtype=np.float16), [3, 3], method="area").dtype == tf.float32


def test_resize_nearest_copies_integers_exactly():
    x = np.arange(2 * 3 * 4 * 1, dtype=np.int64).reshape(2, 3, 4, 1) * (2 ** 40)
    got = tf.image.resize(x, [6, 2], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR).numpy()
    # half-pixel nearest: output o reads input floor((o + 0.5) * in / out)
    rows, cols = np.floor((np.arange(6) + 0.5) * 3 / 6).astype(int), np.floor((np.arange(2) + 0.5) * 4 / 2).astype(int)
    np.testing.assert_array_equal(got, x[:, rows][:, :, cols])


def test_resize_area_averages_blocks_and_bilinear_keeps_constants():
    x = _x((1, 4, 6, 2))
    got = tf.image.resize(x, [2, 3], method="area").numpy()
    np.testing.assert_allclose(got, x.reshape(1, 2, 2, 3, 2, 2).mean((2, 4)), rtol=1e-6)
    for m in ("bilinear", "bicubic", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
        for aa in (False, True):
            out = tf.image.resize(np.full((3, 5, 1), 0.25, np.float32), [7, 2], method=m, antialias=aa).numpy()
            np.testing.assert_allclose(out, 0.25, rtol=1e-6, err_msg=f"{m} antialias={aa}")


def test_resize_preserve_aspect_ratio():
    # 5x7 into 10x10: the factor is min(10/5, 10/7), so 7x10 (rounded as TensorFlow rounds)
    assert tf.image.resize(_x((5, 7, 1)), [10, 10], preserve_aspect_ratio=True).shape == (7, 10, 1)
    assert tf.image.resize(_x((2, 5, 7, 3)), [3, 30], preserve_aspect_ratio=True).shape == (2, 3, 4, 3)


def test_resize_gradient_is_the_transposed_resampling():
    x = tf.constant(_x((2, 5, 4, 3)))
    w = tf.constant(_x((2, 3, 7, 3), seed=1))
    for m in ("bilinear", "nearest", "bicubic", "area", "lanczos3"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.image.resize(x, [3, 7], method=m) * w)
        g = tape.gradient(y, x).numpy()
        # <resize(x), w> = <x, resize^T(w)>: check against a second, independent input
        x2 = _x((2, 5, 4, 3), seed=2)
        lhs = float(tf.reduce_sum(tf.image.resize(x2, [3, 7], method=m) * w))
        np.testing.assert_allclose(lhs, float((x2 * g).sum()), rtol=1e-4, err_msg=m)


def test_large_batches_split_over_threads_like_single_images():
    # a batch of 64 crosses the kernels' threading threshold, one image does not: both paths agree
    x = _x((64, 24, 20, 3), seed=4)
    for m, aa in (("bilinear", False), ("bicubic", True), ("area", False), ("nearest", False)):
        whole = tf.image.resize(x, [17, 31], method=m, antialias=aa).numpy()
        one = np.stack([tf.image.resize(x[i], [17, 31], method=m, antialias=aa).numpy() for i in (0, 37, 63)])
        np.testing.assert_array_equal(whole[[0, 37, 63]], one, err_msg=m)
        with tf.GradientTape() as tape:
            t = tf.constant(x)
            tape.watch(t)
            y = tf.image.resize(t, [17, 31], method=m, antialias=aa)
        g = tape.gradient(y, t).numpy()
        t0 = tf.constant(x[37])
        with tf.GradientTape() as tape:
            tape.watch(t0)
            y0 = tf.image.resize(t0, [17, 31], method=m, antialias=aa)
        np.testing.assert_allclose(g[37], tape.gradient(y0, t0).numpy(), rtol=1e-6, err_msg=m)
    big = _x((96, 96, 3), seed=5)
    for f in (tf.image.rgb_to_hsv, tf.image.hsv_to_rgb):
        rows = np.stack([f(big[i]).numpy() for i in (0, 50, 95)])
        np.testing.assert_array_equal(f(big).numpy()[[0, 50, 95]], rows)


def test_preserve_aspect_ratio_needs_known_sizes_while_tracing():
    from tapeflow.core import devices
    from tapeflow.core.runner import symbolic, tracing

    x = symbolic((None, None, 3), tf.float32, devices.default_device())
    with tracing():
        assert tuple(tf.image.resize(x, [4, 5]).shape) == (4, 5, 3)
        with pytest.raises(TypeError, match=r"preserve_aspect_ratio.*\[Op:ResizeBilinear\]"):
            tf.image.resize(x, [4, 5], preserve_aspect_ratio=True)


# ---- crops, flips, colour ------------------------------------------------------------------------------

def test_composites_differentiate():
    from tapeflow.autodiff.check import check_gradients

    x = tf.constant(_x((2, 4, 5, 3), dtype=np.float64))
    fns = {"saturation": lambda t: tf.image.adjust_saturation(tf.cast(t, tf.float32), 0.6),
           "crop_or_pad": lambda t: tf.image.resize_with_crop_or_pad(t, 3, 7),
           "rot90": lambda t: tf.image.rot90(t, 3),
           "ssim": lambda t: tf.image.ssim(t[:, :, :, :1], t[:, :, :, 1:2] * 0.5, 1.0, filter_size=3)}
    for name, f in fns.items():
        # the adjust_* compute in float32 (as TensorFlow's): a wider step keeps rounding out of the quotient
        report = check_gradients(f, [x], eps=1e-3, rtol=1e-2, atol=1e-3, seed=3)
        assert report.ok, f"{name}: {report}"


def _hue_chain(t, delta):
    """adjust_hue's composition, in the input's dtype (adjust_hue itself computes in float32, as TensorFlow)."""
    hsv = tf.image.rgb_to_hsv(t)
    h = tf.math.floormod(hsv[..., 0:1] + tf.constant(delta, t.dtype), tf.constant(1.0, t.dtype))
    return tf.image.hsv_to_rgb(tf.concat([h, hsv[..., 1:]], -1))


def test_adjust_hue_gradient():
    from tapeflow.autodiff.check import check_gradients

    # the hue's curvature is 1 / (6 range)**2: float64 and a small step for the difference quotient
    x = tf.constant(_x((2, 4, 5, 3), dtype=np.float64))
    report = check_gradients(lambda t: _hue_chain(t, 0.2), [x], seed=3)
    assert report.ok, str(report)
    w = tf.constant(_x((2, 4, 5, 3), seed=1))
    grads = []
    for f, t in ((lambda t: tf.image.adjust_hue(t, 0.2), tf.cast(x, tf.float32)), (lambda t: _hue_chain(t, 0.2), x)):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = tf.reduce_sum(f(t) * tf.cast(w, t.dtype))
        grads.append(tape.gradient(y, t).numpy().astype(np.float64))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-5)


def test_rgb_hsv_round_trip():
    x = _x((3, 4, 3))
    np.testing.assert_allclose(tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x)).numpy(), x, atol=1e-6)


def test_convert_image_dtype_scales_and_saturates():
    f = tf.constant([-0.5, 0.0, 0.5, 1.0, 2.0])
    assert tf.image.convert_image_dtype(f, tf.uint8, saturate=True).numpy().tolist() == [0, 0, 127, 255, 255]
    big = tf.constant([0, 2 ** 24, 2 ** 31 - 1], tf.int32)
    assert tf.image.convert_image_dtype(big, tf.uint8).numpy().tolist() == [0, 2, 255]  # // 2**23
    assert tf.image.convert_image_dtype(tf.constant([255], tf.uint8), tf.int64).numpy().tolist() == [2 ** 63 - 2 ** 55]


# ---- random augmentations ------------------------------------------------------------------------------

def test_stateless_random_ops_depend_only_on_the_seed():
    x = tf.constant(_x((8, 4, 5, 3)))
    ops = [lambda s: tf.image.stateless_random_flip_left_right(x, s),
           lambda s: tf.image.stateless_random_flip_up_down(x, s),
           lambda s: tf.image.stateless_random_brightness(x, 0.3, s),
           lambda s: tf.image.stateless_random_contrast(x, 0.2, 1.8, s),
           lambda s: tf.image.stateless_random_saturation(x, 0.2, 1.8, s),
           lambda s: tf.image.stateless_random_hue(x, 0.4, s),
           lambda s: tf.image.stateless_random_crop(x, [8, 2, 3, 3], s)]
    for i, op in enumerate(ops):
        a, b, c = op([1, 2]).numpy(), op([1, 2]).numpy(), op([5, 9]).numpy()
        np.testing.assert_array_equal(a, b, err_msg=f"op {i}")
        assert not np.array_equal(a, c), f"op {i}: another seed gave the same result"


def test_random_ops_follow_the_global_and_op_seeds():
    x = tf.constant(_x((16, 3, 3, 3)))

    def draw():
        tf.random.set_seed(7)
        return [tf.image.random_flip_left_right(x, seed=1).numpy(), tf.image.random_flip_up_down(x, seed=2).numpy(),
                tf.image.random_brightness(x, 0.2, seed=3).numpy(),
                tf.image.random_contrast(x, 0.5, 1.5, seed=4).numpy(),
                tf.image.random_saturation(x, 0.5, 1.5, seed=5).numpy(), tf.image.random_hue(x, 0.1, seed=6).numpy(),
                tf.image.random_crop(x, [4, 2, 2, 3], seed=7).numpy()]

    for a, b in zip(draw(), draw()):
        np.testing.assert_array_equal(a, b)


def test_random_ops_run_inside_tf_function():
    x = tf.constant(_x((4, 6, 5, 3)))

    def aug(t):
        t = tf.image.stateless_random_flip_left_right(t, [1, 2])
        t = tf.image.stateless_random_crop(t, [4, 3, 3, 3], [3, 4])
        return tf.image.stateless_random_hue(t, 0.2, [5, 6])

    np.testing.assert_allclose(tf.function(aug)(x).numpy(), aug(x).numpy(), rtol=1e-6, atol=1e-7)
    t = tf.constant(_x((5, 4, 3)))
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = tf.image.stateless_random_crop(t, [2, 4, 3], [7, 7])
    g = tape.gradient(y, t).numpy()
    assert g.sum() == 24 and set(np.unique(g)) == {0.0, 1.0}


def test_random_results_are_what_they_claim():
    x = tf.constant(_x((32, 2, 3, 1)))
    flipped = tf.image.stateless_random_flip_left_right(x, [3, 4]).numpy()
    same = [np.array_equal(f, o) for f, o in zip(flipped, x.numpy())]
    mirrored = [np.array_equal(f, o[:, ::-1]) for f, o in zip(flipped, x.numpy())]
    assert all(s or m for s, m in zip(same, mirrored)) and 0 < sum(mirrored) < 32
    delta = tf.image.stateless_random_brightness(x, 0.25, [1, 1]).numpy() - x.numpy()
    assert np.ptp(delta) < 1e-6 and abs(delta.flat[0]) <= 0.25
    big = np.arange(60, dtype=np.float32).reshape(5, 4, 3)
    crop = tf.image.random_crop(big, [2, 3, 3], seed=5).numpy()
    starts = [(i, j) for i in range(4) for j in range(2) if np.array_equal(big[i:i + 2, j:j + 3], crop)]
    assert len(starts) == 1


# ---- bad input -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,match", [
    (lambda: tf.image.resize(np.ones((4, 4), np.float32), [2, 2]), r"rank 2.*\[Op:ResizeBilinear\]"),
    (lambda: tf.image.resize(np.ones((4, 4, 1), np.float32), [2, 2], method="cubic"),
     r"method.*\[Op:ResizeBilinear\]"),
    (lambda: tf.image.resize(np.ones((4, 4, 1), np.float32), [0, 2]), r"positive.*\[Op:ResizeBilinear\]"),
    (lambda: tf.image.resize(np.ones((4, 4, 1), np.float32), [2, 2, 2]), r"2 elements.*\[Op:ResizeBilinear\]"),
    (lambda: tf.image.resize(np.ones((0, 4, 1), np.float32), [2, 2], method="area"), r"non-zero.*\[Op:ResizeArea\]"),
    (lambda: tf.image.resize(np.ones((4, 4, 1)), [2, -2], method="lanczos3"), r"positive.*\[Op:ScaleAndTranslate\]"),
    (lambda: tf.image.crop_to_bounding_box(np.ones((4, 4, 1)), 2, 0, 3, 2), r"leaves.*\[Op:CropToBoundingBox\]"),
    (lambda: tf.image.crop_to_bounding_box(np.ones((4, 4, 1)), -1, 0, 2, 2),
     r"offset_height.*\[Op:CropToBoundingBox\]"),
    (lambda: tf.image.pad_to_bounding_box(np.ones((4, 4, 1)), 1, 0, 4, 4), r"does not fit.*\[Op:PadToBoundingBox\]"),
    (lambda: tf.image.central_crop(np.ones((4, 4, 1)), 0.0), r"\(0, 1\].*\[Op:CentralCrop\]"),
    (lambda: tf.image.resize_with_crop_or_pad(np.ones((4, 4, 1)), 0, 2), r"\[Op:ResizeWithCropOrPad\]"),
    (lambda: tf.image.rgb_to_hsv(np.ones((2, 4), np.float32)), r"last dimension of 3.*\[Op:RGBToHSV\]"),
    (lambda: tf.image.hsv_to_rgb(np.ones((2, 3), np.int32)), r"dtype int32.*\[Op:HSVToRGB\]"),
    (lambda: tf.image.rgb_to_grayscale(np.ones((2, 2), np.float32)), r"\[Op:RGBToGrayscale\]"),
    (lambda: tf.image.grayscale_to_rgb(np.ones((2, 3), np.float32)), r"\[Op:GrayscaleToRGB\]"),
    (lambda: tf.image.adjust_hue(np.ones((2, 3), np.float32), 1.5), r"\[-1, 1\].*\[Op:AdjustHue\]"),
    (lambda: tf.image.adjust_gamma(np.ones((2, 3), np.float32), -1.0), r"non-negative.*\[Op:AdjustGamma\]"),
    (lambda: tf.image.random_hue(np.ones((2, 2, 3), np.float32), 0.7), r"\[0, 0.5\].*\[Op:RandomHue\]"),
    (lambda: tf.image.random_contrast(np.ones((2, 2, 3), np.float32), 1.0, 0.5),
     r"upper > lower.*\[Op:RandomContrast\]"),
    (lambda: tf.image.random_crop(np.ones((2, 2, 3), np.float32), [3, 2, 3]), r"\[Op:RandomCrop\]"),
    (lambda: tf.image.stateless_random_brightness(np.ones((2, 2, 3)), 0.1, [1, 2, 3]),
     r"pair.*\[Op:StatelessRandomBrightness\]"),
    (lambda: tf.image.psnr(np.ones((4, 4, 1), np.float32), np.ones((4, 5, 1), np.float32), 1.0), r"\[Op:PSNR\]"),
    (lambda: tf.image.ssim(np.ones((4, 4, 1), np.float32), np.ones((4, 4, 1), np.float32), 1.0),
     r"filter_size.*\[Op:SSIM\]"),
    (lambda: tf.image.extract_patches(np.ones((1, 4, 4, 1)), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL"),
     r"padding.*\[Op:ExtractImagePatches\]"),
    (lambda: tf.image.extract_patches(np.ones((1, 4, 4, 1)), [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
     r"sizes.*\[Op:ExtractImagePatches\]"),
    (lambda: tf.image.image_gradients(np.ones((4, 4, 1))), r"4-D.*\[Op:ImageGradients\]"),
    (lambda: tf.image.convert_image_dtype(np.ones(2, bool), tf.float32), r"\[Op:ConvertImageDtype\]"),
])
def test_bad_input_raises_a_typed_error_naming_the_op(call, match):
    with pytest.raises(E, match=match):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda: tf.image.resize(np.ones((4, 4, 1)), [2.5, 2]), r"\[Op:ResizeBilinear\]"),
    (lambda: tf.image.rot90(np.ones((4, 4, 1)), "1"), r"\[Op:Rot90\]"),
    (lambda: tf.image.central_crop(np.ones((4, 4, 1)), "half"), r"\[Op:CentralCrop\]"),
    (lambda: tf.image.adjust_brightness(np.ones((4, 4, 1)), "0.1"), r"\[Op:AdjustBrightness\]"),
    (lambda: tf.image.resize(np.ones((4, 4, 1)), [2, 2], antialias="yes"), r"\[Op:ResizeBilinear\]"),
])
def test_wrong_python_types_raise_type_errors_naming_the_op(call, match):
    with pytest.raises(TypeError, match=match):
        call()


# ---- TensorFlow itself ---------------------------------------------------------------------------------

def test_resize_and_colour_match_tensorflow():
    tf_ref = pytest.importorskip("tensorflow")
    x = _x((2, 5, 7, 3))
    for m in ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
        for aa in (False, True):
            for size in ([3, 4], [9, 13]):
                want = tf_ref.image.resize(x, size, method=m, antialias=aa).numpy()
                np.testing.assert_allclose(tf.image.resize(x, size, method=m, antialias=aa).numpy(), want,
                                           rtol=1e-5, atol=2e-5, err_msg=f"{m} antialias={aa} {size}")
    np.testing.assert_allclose(tf.image.rgb_to_hsv(x).numpy(), tf_ref.image.rgb_to_hsv(x).numpy(), atol=1e-6)
    np.testing.assert_allclose(tf.image.adjust_hue(x, 0.3).numpy(), tf_ref.image.adjust_hue(x, 0.3).numpy(), atol=1e-5)
    y = _x((2, 5, 7, 3), seed=1)
    u8 = (y * 255).astype(np.uint8)
    pairs = [
        (lambda m: m.image.hsv_to_rgb(x), 1e-6), (lambda m: m.image.adjust_saturation(x, 1.7), 1e-5),
        (lambda m: m.image.adjust_saturation(u8, 0.4), 0), (lambda m: m.image.adjust_hue(u8, -0.6), 0),
        (lambda m: m.image.adjust_contrast(x, 1.7), 1e-5), (lambda m: m.image.adjust_brightness(u8, 0.2), 0),
        (lambda m: m.image.adjust_gamma(x, 2.2, 0.9), 1e-6), (lambda m: m.image.rgb_to_grayscale(u8), 0),
        (lambda m: m.image.per_image_standardization(x), 1e-5), (lambda m: m.image.psnr(x, y, 1.0), 1e-4),
        (lambda m: m.image.ssim(x, y, 1.0, filter_size=3), 1e-5),
        (lambda m: m.image.total_variation(m.constant(x)), 1e-4),
        (lambda m: m.image.sobel_edges(m.constant(x)), 1e-5), (lambda m: m.image.image_gradients(m.constant(x))[1], 0),
        (lambda m: m.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 2, 1], "SAME"), 0),
        (lambda m: m.image.resize_with_pad(x, 8, 5), 1e-5), (lambda m: m.image.resize_with_crop_or_pad(x, 4, 10), 0),
        (lambda m: m.image.central_crop(x, 0.6), 0), (lambda m: m.image.rot90(x, 3), 0),
        (lambda m: m.image.convert_image_dtype(u8, m.int16), 0),
        (lambda m: m.image.convert_image_dtype(x * 1.5 - 0.2, m.uint8, saturate=True), 0),
        (lambda m: m.image.resize(x, [10, 10], preserve_aspect_ratio=True), 1e-5),
    ]
    for i, (f, tol) in enumerate(pairs):
        want, got = np.asarray(f(tf_ref)), np.asarray(f(tf))
        assert got.dtype == want.dtype, f"case {i}: {got.dtype} != {want.dtype}"
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol,
                                   err_msg=f"case {i}")


@pytest.mark.parametrize("op", [lambda x: tf.image.resize(x, [3, 5]), tf.image.rgb_to_grayscale,
                                tf.image.flip_left_right, tf.image.per_image_standardization,
                                lambda x: tf.image.psnr(x, tf.zeros_like(x) + 0.5, 1.0)])
def test_variables_get_gradients_through_image_ops(op):
    # a tf.Variable passed straight in is read where the tape sees it, as in TensorFlow (the gradient was None)
    img = np.random.default_rng(0).uniform(size=(2, 6, 8, 3)).astype(np.float32)
    v, c = tf.Variable(img), tf.constant(img)
    with tf.GradientTape() as tv:
        yv = tf.reduce_sum(op(v) ** 3)
    with tf.GradientTape() as tc:
        tc.watch(c)
        yc = tf.reduce_sum(op(c) ** 3)
    gv, gc = tv.gradient(yv, v), tc.gradient(yc, c)
    assert gv is not None and np.allclose(gv.numpy(), gc.numpy(), atol=1e-6)
