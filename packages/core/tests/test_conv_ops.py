"""Convolution and pooling: TensorFlow's semantics, the gradient ops' algebra, errors.

The differential specs (tests/specs/conv.py) compare every op with a NumPy
reference over random geometries; here are the behaviours worth naming one by one.
"""
import numpy as np
import pytest
import tapeflow as tf

InvalidArgumentError = tf.errors.InvalidArgumentError


def _arange(shape, dtype=np.float32):
    return tf.constant(np.arange(np.prod(shape), dtype=dtype).reshape(shape))


def _rand(rng, shape, dtype=np.float32):
    return tf.constant(rng.standard_normal(shape).astype(dtype))


def _dot(a, b):
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


# ---- TensorFlow's semantics -------------------------------------------------------------

def test_same_padding_puts_the_odd_pixel_after():
    # 4x4 input, 2x2 kernel, stride 1: one row/column of padding in total, all of it after
    x = _arange((1, 4, 4, 1))
    y = tf.conv2d(x, tf.ones([2, 2, 1, 1]), 1, "SAME").numpy()[0, :, :, 0]
    xs = np.arange(16.0).reshape(4, 4)
    assert y.shape == (4, 4)
    assert y[0, 0] == xs[0:2, 0:2].sum()
    assert y[3, 3] == xs[3, 3]            # only the pixel itself is inside
    assert y[3, 0] == xs[3, 0:2].sum()
    same = tf.conv2d(x, tf.ones([2, 2, 1, 1]), 1, "SAME")
    after = tf.conv2d(x, tf.ones([2, 2, 1, 1]), 1, [[0, 0], [0, 1], [0, 1], [0, 0]])
    np.testing.assert_array_equal(same.numpy(), after.numpy())


def test_same_padding_with_stride_splits_total_from_the_output_size():
    # 5 wide, kernel 3, stride 2: out = ceil(5/2) = 3, total = (3-1)*2 + 3 - 5 = 2 -> 1 before, 1 after
    x = _arange((1, 5, 5, 1))
    w = tf.ones([3, 3, 1, 1])
    got = tf.conv2d(x, w, 2, "SAME")
    want = tf.conv2d(x, w, 2, [[1, 1], [1, 1]])
    assert got.shape == (1, 3, 3, 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # 6 wide, kernel 3, stride 2: total = (3-1)*2 + 3 - 6 = 1 -> 0 before, 1 after
    x6 = _arange((1, 6, 6, 1))
    np.testing.assert_array_equal(tf.conv2d(x6, w, 2, "SAME").numpy(),
                                  tf.conv2d(x6, w, 2, [[0, 1], [0, 1]]).numpy())


def test_strides_and_dilations_accept_every_tensorflow_spelling():
    rng = np.random.default_rng(0)
    x, w = _rand(rng, (2, 9, 9, 3)), _rand(rng, (3, 3, 3, 4))
    base = tf.conv2d(x, w, strides=2, padding="VALID", dilations=2).numpy()
    for strides in ([2], [2, 2], [1, 2, 2, 1], (2, 2), np.int64(2)):
        for dil in (2, [2, 2], [1, 2, 2, 1]):
            np.testing.assert_array_equal(tf.conv2d(x, w, strides, "VALID", dilations=dil).numpy(), base)
    assert tf.conv2d(x, w, [1, 2], "SAME").shape == (2, 9, 5, 4)
    assert tf.conv2d(x, w, 1, "same").shape == (2, 9, 9, 4)


def test_avg_pool_same_does_not_count_padding():
    # the windows that hang over the edge average only what is inside (TensorFlow: [2, 3.5, 6.5, 8])
    y = tf.avg_pool2d(_arange((1, 3, 3, 1)), 2, 2, "SAME")
    assert y.numpy().ravel().tolist() == [2.0, 3.5, 6.5, 8.0]


def test_max_pool_ties_go_to_the_first_maximum():
    x = tf.constant(np.array([1.0, 2.0, 2.0, 1.0], np.float32).reshape(1, 2, 2, 1))
    y = tf.max_pool2d(x, 2, 1, "VALID")
    dx = tf.max_pool_grad(x, y, tf.ones(y.shape), 2, 1, "VALID")
    assert dx.numpy().ravel().tolist() == [0.0, 1.0, 0.0, 0.0]


def test_max_pool_grad_adds_up_over_overlapping_windows():
    # 3x3 windows, stride 1 on 4x4 ascending: every window's maximum is its bottom-right corner
    x = _arange((1, 4, 4, 1))
    y = tf.max_pool2d(x, 3, 1, "VALID")
    dx = tf.max_pool_grad(x, y, tf.ones(y.shape), 3, 1, "VALID").numpy()[0, :, :, 0]
    assert dx.sum() == 4
    assert dx[2:, 2:].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    # SAME with stride 1 on a constant image: every window's first position receives its gradient
    c = tf.ones([1, 3, 3, 1])
    yc = tf.max_pool2d(c, 2, 1, "SAME")
    dc = tf.max_pool_grad(c, yc, tf.ones(yc.shape), 2, 1, "SAME").numpy()[0, :, :, 0]
    assert dc.sum() == 9 and dc.tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


def test_max_pool_ignores_nan_like_tensorflow():
    x = tf.constant(np.array([1.0, np.nan, 3.0, 2.0], np.float32).reshape(1, 2, 2, 1))
    assert tf.max_pool2d(x, 2, 2, "VALID").numpy().ravel().tolist() == [3.0]


def test_max_pool_explicit_padding_never_wins():
    x = -tf.ones([1, 2, 2, 1])
    y = tf.max_pool2d(x, 2, 1, [[0, 0], [1, 1], [1, 1], [0, 0]])
    assert y.shape == (1, 3, 3, 1)
    assert np.all(y.numpy() == -1.0)


# ---- gradient ops: algebra --------------------------------------------------------------

@pytest.mark.parametrize("geometry", [
    ((2, 7, 6, 3), (3, 3, 3, 4), 1, "SAME", 1),
    ((2, 7, 6, 5), (3, 2, 5, 4), 1, "VALID", [2, 1]),
    ((2, 9, 8, 3), (3, 3, 3, 2), [2, 3], "SAME", 1),
    ((1, 6, 7, 6), (2, 3, 6, 3), 2, [[1, 2], [0, 3]], 1),
    ((3, 5, 5, 8), (1, 1, 8, 4), 1, "VALID", 1),
    ((32, 28, 28, 16), (3, 3, 16, 16), 1, "VALID", 1),   # the CNN's second layer (threaded blocks)
    ((2, 12, 12, 64), (3, 3, 64, 48), 1, "SAME", 1),      # big gemms (OpenBLAS threads)
])
def test_backprops_are_the_adjoints_of_conv2d(geometry, rng):
    xs, ws, strides, padding, dilations = geometry
    x, w = _rand(rng, xs, np.float64), _rand(rng, ws, np.float64)
    y = tf.conv2d(x, w, strides, padding, dilations=dilations)
    dy = _rand(rng, y.shape, np.float64)
    dx = tf.conv2d_backprop_input(xs, w, dy, strides, padding, dilations=dilations)
    dw = tf.conv2d_backprop_filter(x, ws, dy, strides, padding, dilations=dilations)
    assert dx.shape == xs and dw.shape == ws
    # <conv(x, w), dy> = <x, dx> = <w, dw>
    lhs = _dot(y, dy)
    assert np.isclose(_dot(x, dx), lhs, rtol=1e-10)
    assert np.isclose(_dot(w, dw), lhs, rtol=1e-10)


def test_depthwise_backprops_are_adjoints(rng):
    x, w = _rand(rng, (2, 8, 7, 3), np.float64), _rand(rng, (3, 3, 3, 2), np.float64)
    y = tf.depthwise_conv2d(x, w, [1, 2, 1, 1], "SAME")
    assert y.shape == (2, 4, 7, 6)
    dy = _rand(rng, y.shape, np.float64)
    dx = tf.depthwise_conv2d_backprop_input(x.shape, w, dy, [1, 2, 1, 1], "SAME")
    dw = tf.depthwise_conv2d_backprop_filter(x, w.shape, dy, [1, 2, 1, 1], "SAME")
    assert np.isclose(_dot(x, dx), _dot(y, dy), rtol=1e-10)
    assert np.isclose(_dot(w, dw), _dot(y, dy), rtol=1e-10)


def test_depthwise_with_multiplier_one_is_a_diagonal_conv2d(rng):
    x, w = _rand(rng, (2, 6, 6, 3)), _rand(rng, (3, 3, 3, 1))
    full = np.zeros((3, 3, 3, 3), np.float32)
    for c in range(3):
        full[:, :, c, c] = w.numpy()[:, :, c, 0]
    np.testing.assert_allclose(tf.depthwise_conv2d(x, w, 1, "SAME").numpy(),
                               tf.conv2d(x, tf.constant(full), 1, "SAME").numpy(), rtol=1e-5, atol=1e-5)


def test_pool_grads_are_adjoints(rng):
    x = tf.constant(rng.permutation(2 * 7 * 6 * 3).reshape(2, 7, 6, 3).astype(np.float64))
    for ksize, strides, padding in ((2, 2, "VALID"), (3, 2, "SAME"), ([2, 3], 1, "SAME")):
        y = tf.max_pool2d(x, ksize, strides, padding)
        g = _rand(rng, y.shape, np.float64)
        gx = _rand(rng, x.shape, np.float64)
        # max_pool_grad and max_pool_grad_grad are each other's transposes (maxima fixed by x)
        a = _dot(tf.max_pool_grad(x, y, g, ksize, strides, padding), gx)
        b = _dot(g, tf.max_pool_grad_grad(x, y, gx, ksize, strides, padding))
        assert np.isclose(a, b, rtol=1e-10)
        ya = tf.avg_pool2d(x, ksize, strides, padding)
        assert np.isclose(_dot(ya, g), _dot(x, tf.avg_pool_grad(x.shape, g, ksize, strides, padding)), rtol=1e-10)


def test_conv2d_transpose_is_backprop_input(rng):
    w = _rand(rng, (3, 3, 2, 4))
    dy = _rand(rng, (1, 4, 4, 4))
    y = tf.conv2d_transpose(dy, w, [1, 8, 8, 2], 2, "SAME")
    assert y.shape == (1, 8, 8, 2)
    np.testing.assert_array_equal(y.numpy(), tf.conv2d_backprop_input([1, 8, 8, 2], w, dy, 2, "SAME").numpy())


def test_conv2d_transpose_with_a_free_batch(rng):
    """output_shape's batch None (or -1) is the input's: a graph traced with a free batch runs at any batch."""
    w = _rand(rng, (3, 3, 2, 4))

    @tf.function(input_signature=[tf.TensorSpec([None, 4, 4, 4])])
    def up(x):
        return tf.conv2d_transpose(x, w, [None, 8, 8, 2], 2, "SAME")

    assert up.get_concrete_function().outputs[0].shape == (None, 8, 8, 2)
    for b in (1, 3):
        dy = _rand(rng, (b, 4, 4, 4))
        want = tf.conv2d_backprop_input([b, 8, 8, 2], w, dy, 2, "SAME").numpy()
        np.testing.assert_array_equal(up(dy).numpy(), want)
        np.testing.assert_array_equal(tf.conv2d_transpose(dy, w, [-1, 8, 8, 2], 2, "SAME").numpy(), want)


def test_conv1d_is_conv2d_over_height_one(rng):
    x, w = _rand(rng, (2, 10, 3)), _rand(rng, (3, 3, 5))
    y = tf.conv1d(x, w, stride=2, padding="SAME")
    want = tf.conv2d(tf.reshape(x, [2, 1, 10, 3]), tf.reshape(w, [1, 3, 3, 5]), [1, 2], "SAME")
    assert y.shape == (2, 5, 5)
    np.testing.assert_array_equal(y.numpy(), want.numpy().reshape(2, 5, 5))


def test_threaded_kernels_are_deterministic(rng):
    x, w = _rand(rng, (32, 28, 28, 16)), _rand(rng, (3, 3, 16, 16))
    dy = _rand(rng, (32, 26, 26, 16))
    first = tf.conv2d_backprop_filter(x, w.shape, dy, 1, "VALID").numpy().copy()
    for _ in range(3):
        np.testing.assert_array_equal(tf.conv2d_backprop_filter(x, w.shape, dy, 1, "VALID").numpy(), first)


def _np_conv_parts(x, ws, strides, padding, dilations):
    """x padded as TensorFlow pads it, and for each filter tap (i, j) the input pixels it meets."""
    n, h, w, c = x.shape
    kh, kw = ws[:2]
    s, d = strides, dilations
    eh, ew = (kh - 1) * d + 1, (kw - 1) * d + 1
    if padding == "SAME":
        oh, ow = -(-h // s), -(-w // s)
        ph, pw = max((oh - 1) * s + eh - h, 0), max((ow - 1) * s + ew - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - eh) // s + 1, (w - ew) // s + 1
    return {(i, j): x[:, i * d: i * d + (oh - 1) * s + 1: s, j * d: j * d + (ow - 1) * s + 1: s, :]
            for i in range(kh) for j in range(kw)}


@pytest.mark.parametrize("geometry", [
    ((32, 28, 28, 1), (3, 3, 1, 16), 1, "VALID", 1),     # the seeds' CNN, first layer
    ((4, 26, 26, 16), (3, 3, 16, 16), 1, "VALID", 1),    # its second layer
    ((2, 9, 11, 2), (3, 3, 2, 16), 1, "SAME", 1),
    ((2, 10, 9, 3), (5, 5, 3, 24), 2, "SAME", 1),
    ((1, 8, 8, 1), (4, 4, 1, 8), 1, "SAME", 2),
    ((2, 7, 9, 2), (2, 2, 2, 32), 1, "VALID", 1),
    ((1, 6, 6, 3), (7, 7, 3, 16), 1, "SAME", 1),         # windows wider than the input
    ((1, 30, 31, 17), (3, 3, 17, 40), 3, "SAME", 1),
    ((2, 5, 9, 5), (3, 3, 5, 64), 2, "SAME", 3),
])
def test_float32_thin_filters_match_a_float64_reference(geometry, rng):
    # float32 with output channels a multiple of 8 runs the direct loops (csrc/conv.c): padding
    # clips their taps per output row and border pixel, few input channels group the taps
    xs, ws, strides, padding, dilations = geometry
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    parts = _np_conv_parts(x.astype(np.float64), ws, strides, padding, dilations)
    ref = sum(parts[i, j] @ w[i, j].astype(np.float64) for (i, j) in parts)
    dy = rng.standard_normal(ref.shape).astype(np.float32)
    ref_dw = np.stack([np.stack([np.einsum("nhwc,nhwo->co", parts[i, j], dy.astype(np.float64))
                                 for j in range(ws[1])]) for i in range(ws[0])])
    kw = dict(dilations=dilations)
    y = tf.conv2d(x, w, strides, padding, **kw).numpy()
    dw = tf.conv2d_backprop_filter(x, ws, dy, strides, padding, **kw).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-5, atol=1e-5 * np.abs(ref_dw).max())
    # the input gradient (with unit strides a direct convolution of dy too) is the adjoint
    dx = tf.conv2d_backprop_input(xs, w, dy, strides, padding, **kw).numpy()
    assert np.isclose(_dot(x, dx), _dot(ref, dy), rtol=1e-5)


def test_direct_conv_writes_zeros_where_whole_rows_of_windows_miss_the_input(rng):
    # padding 2 above and below a 1x1 filter: output rows 0, 1, 8, 9 see only padding; every pixel of
    # them is written (a reused buffer full of 7s must not show through)
    x, w = _rand(rng, (4, 6, 16, 4)), _rand(rng, (1, 1, 4, 64))
    pad = [[0, 0], [2, 2], [0, 0], [0, 0]]
    ref = np.zeros((4, 10, 16, 64), np.float32)
    ref[:, 2:8] = np.einsum("nhwc,co->nhwo", x.numpy(), w.numpy()[0, 0])
    for _ in range(3):
        junk = tf.fill([4, 10, 16, 64], 7.0)   # a freed buffer of the output's size, reused by the next op
        del junk
        y = tf.conv2d(x, w, 1, pad).numpy()
        assert not np.any(y[:, [0, 1, 8, 9]])
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_direct_conv_results_do_not_depend_on_the_thread_count(threads, rng):
    x, w = _rand(rng, (8, 20, 20, 3)), _rand(rng, (3, 3, 3, 16))
    dy = _rand(rng, (8, 20, 20, 16))

    def run():
        return [tf.conv2d(x, w, 1, "SAME").numpy(), tf.conv2d_backprop_filter(x, w.shape, dy, 1, "SAME").numpy(),
                tf.conv2d_backprop_input(x.shape, w, dy, 1, "SAME").numpy()]
    try:
        tf.config.set_num_threads(1)
        one = run()
        tf.config.set_num_threads(threads)
        for a, b in zip(run(), one):
            np.testing.assert_array_equal(a, b)
    finally:
        tf.config.set_num_threads(0)


# ---- dtypes, devices, variables ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64])
def test_float_dtypes_keep_their_dtype(dtype, rng):
    x = tf.cast(_rand(rng, (1, 5, 5, 2)), dtype)
    w = tf.cast(_rand(rng, (3, 3, 2, 3)), dtype)
    for y in (tf.conv2d(x, w, 1, "SAME"), tf.max_pool2d(x, 2, 2, "SAME"), tf.avg_pool2d(x, 2, 2, "SAME"),
              tf.depthwise_conv2d(x, w, 1, "SAME"),
              tf.conv2d_backprop_filter(x, w.shape, tf.conv2d(x, w, 1, "SAME"), 1, "SAME")):
        assert y.dtype == dtype
    ref = tf.conv2d(tf.cast(x, tf.float32), tf.cast(w, tf.float32), 1, "SAME").numpy()
    np.testing.assert_allclose(tf.cast(tf.conv2d(x, w, 1, "SAME"), tf.float32).numpy(), ref, rtol=2e-2, atol=5e-2)


def test_variables_nn_namespace_and_device_scope(rng):
    w = tf.Variable(rng.standard_normal((3, 3, 1, 2)).astype(np.float32))
    x = _rand(rng, (2, 6, 6, 1))
    with tf.device("/cpu:0"):
        y = tf.nn.conv2d(x, w, 1, "VALID")
    assert y.shape == (2, 4, 4, 2) and y.device == "cpu:0"
    np.testing.assert_array_equal(y.numpy(), tf.conv2d(x, tf.constant(w.numpy()), 1, "VALID").numpy())
    assert tf.nn.max_pool2d(y, 2, 2, "VALID").shape == (2, 2, 2, 2)


def test_empty_batches_and_channels():
    assert tf.conv2d(tf.zeros([0, 5, 5, 2]), tf.ones([3, 3, 2, 4]), 1, "SAME").shape == (0, 5, 5, 4)
    y = tf.conv2d(tf.zeros([1, 5, 5, 0]), tf.ones([3, 3, 0, 4]), 1, "SAME")
    assert y.shape == (1, 5, 5, 4) and not np.any(y.numpy())
    assert tf.max_pool2d(tf.zeros([0, 4, 4, 3]), 2, 2, "VALID").shape == (0, 2, 2, 3)


# ---- errors ------------------------------------------------------------------------------

def _raises(fn, *fragments):
    with pytest.raises(InvalidArgumentError) as e:
        fn()
    msg = str(e.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


def test_conv2d_errors_say_what_arrived_and_what_is_allowed():
    x, w = tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3, 4])
    _raises(lambda: tf.conv2d(tf.ones([5, 5, 3]), w, 1, "SAME"), "input must be 4-dimensional", "(5, 5, 3)",
            "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, tf.ones([3, 3, 4]), 1, "SAME"), "filters must be 4-dimensional", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, tf.ones([3, 3, 2, 4]), 1, "SAME"), "input has 3 channels but the filter expects 2",
            "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 0, "SAME"), "strides must be positive, got 0", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, [1, -1], "SAME"), "strides must be positive", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, [2, 1, 1, 1], "SAME"), "batch or channel axis", "[1, h, w, 1]", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, [1, 1, 1], "SAME"), "list of 1, 2 or 4 ints", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, "SAME", dilations=0), "dilations must be positive", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, tf.ones([7, 3, 3, 4]), 1, "VALID"),
            "filter height 7 is larger than the input height 5", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, "VALID", dilations=3), "filter height 3 (dilated to 7)", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, "FULL"), "padding 'FULL' is not allowed", "'SAME', 'VALID'", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, [[1, 1], [0, 0], [0, 0], [0, 0]]), "pads the batch or channel axis",
            "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, [[0, 0], [-1, 0], [0, 0], [0, 0]]), "negative", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, tf.ones([3, 3, 3, 4], tf.float64), 1, "SAME"),
            "filters has dtype float64 but input has dtype float32", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(tf.ones([1, 5, 5, 3], tf.int32), tf.ones([3, 3, 3, 4], tf.int32), 1, "SAME"),
            "input has dtype int32; allowed: float32", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, "SAME", data_format="NCHW"), "data_format 'NCHW'", "'NHWC'", "[Op:Conv2D]")


def test_backprop_errors_name_their_op():
    w, dy = tf.ones([3, 3, 3, 4]), tf.ones([1, 3, 3, 4])
    _raises(lambda: tf.conv2d_backprop_input([1, 5, 5, 3], w, tf.ones([1, 4, 4, 4]), 1, "VALID"),
            "out_backprop has shape (1, 4, 4, 4)", "gives (1, 3, 3, 4)", "[Op:Conv2DBackpropInput]")
    _raises(lambda: tf.conv2d_backprop_input([1, 5, 5], w, dy, 1, "VALID"), "input_sizes must be 4",
            "[Op:Conv2DBackpropInput]")
    _raises(lambda: tf.conv2d_backprop_filter(tf.ones([1, 5, 5, 3]), [3, 3, 3, 5], dy, 1, "VALID"),
            "out_backprop has shape", "[Op:Conv2DBackpropFilter]")
    _raises(lambda: tf.conv2d_transpose(tf.ones([1, 4, 4, 4]), w, [1, 5, 5, 3], 1, "VALID"),
            "input has shape (1, 4, 4, 4)", "[Op:Conv2DTranspose]")
    _raises(lambda: tf.conv1d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 4]), 1, "SAME"), "3-dimensional (NWC)",
            "[Op:Conv1D]")
    _raises(lambda: tf.depthwise_conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 2, 1]), 1, "SAME"),
            "input has 3 channels but the filter expects 2", "multiplier", "[Op:DepthwiseConv2dNative]")


def test_pool_errors():
    x = tf.ones([1, 4, 4, 2])
    _raises(lambda: tf.max_pool2d(tf.ones([4, 4, 2]), 2, 2, "VALID"), "4-dimensional", "[Op:MaxPool]")
    _raises(lambda: tf.max_pool2d(x, 5, 1, "VALID"), "window height 5 is larger than the input height 4",
            "[Op:MaxPool]")
    _raises(lambda: tf.max_pool2d(x, 0, 1, "VALID"), "ksize must be positive", "[Op:MaxPool]")
    _raises(lambda: tf.max_pool2d(x, 2, 1, [[0, 0], [2, 0], [0, 0], [0, 0]]),
            "padding 2 along the height is not smaller than the window height 2", "[Op:MaxPool]")
    _raises(lambda: tf.avg_pool2d(x, 2, 1, [[0, 0], [1, 0], [0, 0], [0, 0]]), "explicit padding is not supported",
            "[Op:AvgPool]")
    _raises(lambda: tf.avg_pool2d(tf.ones([1, 4, 4, 2], tf.int32), 2, 2, "VALID"), "dtype int32", "[Op:AvgPool]")
    y = tf.max_pool2d(x, 2, 2, "VALID")
    _raises(lambda: tf.max_pool_grad(x, y, tf.ones([1, 3, 3, 2]), 2, 2, "VALID"), "grad has shape (1, 3, 3, 2)",
            "(1, 2, 2, 2)", "[Op:MaxPoolGrad]")
    _raises(lambda: tf.max_pool_grad(x, tf.ones([1, 3, 3, 2]), tf.ones([1, 2, 2, 2]), 2, 2, "VALID"),
            "orig_output has shape (1, 3, 3, 2)", "[Op:MaxPoolGrad]")
    _raises(lambda: tf.avg_pool_grad([1, 4, 4, 2], tf.ones([1, 3, 3, 2]), 2, 2, "VALID"),
            "grad has shape (1, 3, 3, 2)", "[Op:AvgPoolGrad]")


def test_kernels_reject_bad_geometry_with_a_status():
    from tapeflow import kernels

    be = kernels.get_backend("cpu")
    x = np.ones((1, 3, 3, 1), np.float32)
    out = np.empty((1, 1, 1, 1), np.float32)
    ptr = be.host_ptr
    bad_size = be.new_int64([1, 3, 3, 1, 3, 3, 1, -1, 1, 1, 1, 1, 1, 0, 0])
    bad_stride = be.new_int64([1, 3, 3, 1, 3, 3, 1, 1, 1, 0, 1, 1, 1, 0, 0])
    good = be.new_int64([1, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0])
    assert be.conv2d(tf.float32.code, bad_size, ptr(x), ptr(x), ptr(out)) == kernels.EBADSIZE
    assert be.max_pool2d(tf.float32.code, bad_stride, ptr(x), ptr(out)) == kernels.EBADARG
    assert be.conv2d(tf.int32.code, good, ptr(x), ptr(x), ptr(out)) == kernels.EBADDTYPE
    assert be.conv2d(tf.float32.code, good, ptr(x), ptr(x), ptr(out)) == kernels.OK and out.item() == 9.0


# ---- absurd attributes and windows larger than the input (issue 10, items 13 and 14) --------------------

@pytest.mark.parametrize("big", [2**31, 2**40, 2**62, 2**63 - 1])
def test_absurd_strides_ksize_dilations_are_rejected_naming_the_op(big):
    x, w = tf.ones([1, 5, 5, 2]), tf.ones([3, 3, 2, 2])
    limit = "allowed: 1 <= {} <= 2147483647"
    _raises(lambda: tf.conv2d(x, w, big, "SAME"), f"strides = {big} is out of range", limit.format("strides"),
            "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, [1, big], "VALID"), "out of range", "[Op:Conv2D]")
    _raises(lambda: tf.conv2d(x, w, 1, "SAME", dilations=[1, 1, big, 1]), "dilations = [1, 1, ", "out of range",
            limit.format("dilations"), "[Op:Conv2D]")
    _raises(lambda: tf.nn.depthwise_conv2d(x, tf.ones([3, 3, 2, 1]), [1, big, 1, 1], "SAME"), "out of range",
            "[Op:DepthwiseConv2dNative]")
    _raises(lambda: tf.conv2d_backprop_input([1, 5, 5, 2], w, tf.ones([1, 5, 5, 2]), 1, "SAME", dilations=big),
            "dilations", "out of range", "[Op:Conv2DBackpropInput]")
    _raises(lambda: tf.max_pool2d(x, big, 1, "SAME"), f"ksize = {big} is out of range", limit.format("ksize"),
            "[Op:MaxPool]")
    _raises(lambda: tf.avg_pool2d(x, 2, [1, big, 1, 1], "SAME"), "strides", "out of range", "[Op:AvgPool]")
    _raises(lambda: tf.max_pool2d(x, 2, 1, [[0, 0], [big, 0], [0, 0], [0, 0]]), "out of range", "[Op:MaxPool]")


@pytest.mark.parametrize("k", [4, 2**20, 2**31 - 1])
def test_pool_windows_larger_than_the_input_work_under_same(k):
    # TensorFlow pools a SAME window of any int32 size: each window holds the whole (small) input
    x = np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2)
    mx = tf.max_pool2d(x, k, 1, "SAME").numpy()
    av = tf.avg_pool2d(x, [1, k, k, 1], 1, "SAME").numpy()
    assert mx.shape == av.shape == x.shape
    if k >= 5:   # every window covers every pixel
        np.testing.assert_array_equal(mx, np.broadcast_to(x.max(axis=(1, 2), keepdims=True), x.shape))
        np.testing.assert_allclose(av, np.broadcast_to(x.mean(axis=(1, 2), keepdims=True), x.shape), rtol=1e-6)
    s = tf.max_pool2d(x, k, 2, "SAME").numpy()
    assert s.shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(s[:, 1, 1], x[:, 2, 2] if k == 4 else x.max(axis=(1, 2)))


def test_kernels_reject_geometry_whose_products_overflow_with_a_status():
    # sizes that multiply past int64 (2**62 strides, windows, dilations) are a status, never a wrap
    from tapeflow import kernels

    be = kernels.get_backend("cpu")
    x = np.ones((1, 3, 3, 1), np.float32)
    out = np.empty((1, 3, 3, 1), np.float32)
    ptr = be.host_ptr
    huge = 2**62
    for geom in ([1, 3, 3, 1, 1, 1, 1, 3, 3, huge, 1, 1, 1, 0, 0],        # (oh - 1) * stride
                 [1, 3, 3, 1, 3, 3, 1, 3, 3, 1, 1, huge, 1, 1, 1],        # (kh - 1) * dilation
                 [1, 3, 3, 1, huge, huge, 1, 3, 3, 1, 1, 1, 1, 1, 1],     # kh * kw
                 [huge, huge, 3, 1, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1],     # n * h
                 [1, 3, 3, 1, 3, 3, 1, 3, 3, 1, 1, 1, 1, huge, 1]):       # padding
        g = be.new_int64(geom)
        assert be.conv2d(tf.float32.code, g, ptr(x), ptr(x), ptr(out)) == kernels.EBADSIZE, geom
        assert be.depthwise_conv2d(tf.float32.code, g, ptr(x), ptr(x), ptr(out)) == kernels.EBADSIZE, geom
        if geom[4] < huge:   # a pool's window is clipped to the input: only its other products matter
            assert be.max_pool2d(tf.float32.code, g, ptr(x), ptr(out)) == kernels.EBADSIZE, geom
            assert be.avg_pool2d_grad(tf.float32.code, g, ptr(out), ptr(x)) == kernels.EBADSIZE, geom
    # a window far larger than the input is fine for a pool: clipped, it is the input
    g = be.new_int64([1, 3, 3, 1, 2**31 - 1, 2**31 - 1, 1, 3, 3, 1, 1, 1, 1, 2**30 - 1, 2**30 - 1])
    assert be.max_pool2d(tf.float32.code, g, ptr(np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)),
                         ptr(out)) == kernels.OK
    assert (out == 8).all()


def test_float_or_str_attributes_are_type_errors_even_after_an_equal_int_ran():
    """1.0 == 1 and True == 1 hash alike: a float must not reuse the geometry cached for an int."""
    x, w = tf.ones([1, 5, 5, 2]), tf.ones([3, 3, 2, 2])
    tf.conv2d(x, w, 1, "SAME", dilations=[1, 1])
    tf.max_pool2d(x, 2, [1, 1], "VALID")
    for call in (lambda: tf.conv2d(x, w, 1.0, "SAME", dilations=[1, 1]),
                 lambda: tf.conv2d(x, w, 1, "SAME", dilations=[1.0, 1.0]),
                 lambda: tf.max_pool2d(x, 2.0, [1, 1], "VALID"),
                 lambda: tf.max_pool2d(x, 2, ["1", "1"], "VALID"),
                 lambda: tf.conv1d(tf.ones([1, 5, 2]), tf.ones([3, 2, 2]), 1.0, "SAME")):
        with pytest.raises(TypeError, match=r"must be (an integer|a list of integers).*\[Op:(Conv2D|MaxPool|Conv1D)\]"):
            call()


def test_tracing_infers_conv_shapes_and_needs_static_sizes():
    from tapeflow.core.runner import tracing

    x, w, ones = tf.ones([2, 5, 5, 3]), tf.ones([3, 3, 3, 4]), tf.ones([4, 4])  # tf.ones traces as fill
    with tracing() as g:
        y = tf.conv2d(x, w, 2, "SAME")
        dx = tf.conv2d_backprop_input([2, 5, 5, 3], w, y, 2, "SAME")
        sizes = tf.reduce_sum(ones, axis=0)  # symbolic: no value while tracing
        with pytest.raises(TypeError, match=r"input_sizes needs a static value while tracing.*"
                                            r"\[Op:Conv2DBackpropInput\]"):
            tf.conv2d_backprop_input(sizes, w, y, 2, "SAME")
    assert y._h is None and tuple(y.shape) == (2, 3, 3, 4) and tuple(dx.shape) == (2, 5, 5, 3)
    assert [n.prim.name for n in g.nodes] == ["conv2d", "conv2d_backprop_input", "reduce_sum"]
