"""The Keras layers of issue 13 item 3 (activations, convolutions, pooling, reshaping, recurrent
wrappers, attention, preprocessing, noise) and item 8 (integer inputs to float layers).

Each layer is compared with Keras 3 from identical weights where TensorFlow is installed, and
checked without it against NumPy references or known values, shapes, configs and gradients.
"""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

L = tf.keras.layers


def _x(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# (class name, constructor arguments, input shape); Keras's layer of that name takes the same
CASES = [
    ("ReLU", {"max_value": 1.5, "negative_slope": 0.1, "threshold": 0.2}, (3, 4)),
    ("LeakyReLU", {"negative_slope": 0.2}, (3, 4)),
    ("PReLU", {"alpha_initializer": "random_normal", "shared_axes": [1]}, (2, 3, 4)),
    ("ELU", {"alpha": 0.5}, (3, 4)),
    ("Softmax", {"axis": [1, 2]}, (2, 3, 4)),
    ("Conv1D", {"filters": 4, "kernel_size": 3, "padding": "causal", "dilation_rate": 2, "bias_initializer": "ones"},
     (2, 9, 3)),
    ("Conv1D", {"filters": 4, "kernel_size": 2, "strides": 2, "groups": 2}, (2, 9, 6)),
    ("Conv2D", {"filters": 6, "kernel_size": 3, "padding": "same", "groups": 3, "strides": 2}, (2, 7, 7, 6)),
    ("Conv3D", {"filters": 2, "kernel_size": (2, 3, 2), "strides": (2, 1, 1), "padding": "same"}, (2, 5, 4, 4, 3)),
    ("Conv3D", {"filters": 4, "kernel_size": 2, "dilation_rate": 2, "groups": 2}, (1, 5, 5, 5, 2)),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"}, (2, 4, 5, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": (3, 2), "strides": (2, 3), "output_padding": (1, 2)},
     (1, 3, 4, 3)),
    ("DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2, "padding": "same", "bias_initializer": "ones"},
     (2, 5, 5, 3)),
    ("SeparableConv2D", {"filters": 4, "kernel_size": 2, "strides": 2, "depth_multiplier": 2}, (2, 6, 6, 3)),
    ("MaxPooling1D", {"pool_size": 3, "strides": 2, "padding": "same"}, (2, 8, 3)),
    ("AveragePooling1D", {"pool_size": 2, "padding": "same"}, (2, 7, 3)),
    ("GlobalMaxPooling1D", {"keepdims": True}, (2, 5, 3)),
    ("GlobalAveragePooling1D", {}, (2, 5, 3)),
    ("GlobalMaxPooling2D", {}, (2, 4, 5, 3)),
    ("UpSampling2D", {"size": (2, 3)}, (2, 3, 4, 2)),
    ("UpSampling2D", {"size": 2, "interpolation": "bilinear"}, (2, 3, 4, 2)),
    ("ZeroPadding2D", {"padding": ((1, 2), (0, 3))}, (2, 3, 4, 2)),
    ("Cropping2D", {"cropping": ((1, 0), (2, 1))}, (2, 4, 5, 2)),
    ("RepeatVector", {"n": 3}, (2, 4)),
    ("Permute", {"dims": (2, 3, 1)}, (2, 3, 4, 5)),
    ("SimpleRNN", {"units": 5, "return_sequences": True, "bias_initializer": "random_normal"}, (2, 6, 3)),
    ("SimpleRNN", {"units": 4, "go_backwards": True, "return_state": True}, (2, 5, 3)),
    ("Rescaling", {"scale": 0.5, "offset": -1.0}, (2, 3)),
    ("Normalization", {"mean": [1.0, 2.0, 3.0], "variance": [4.0, 1.0, 0.25]}, (2, 3)),
    ("SpatialDropout2D", {"rate": 0.5}, (2, 3, 3, 4)),
    ("GaussianNoise", {"stddev": 0.3}, (2, 3)),
    ("RandomFlip", {}, (2, 4, 4, 3)),
    ("RandomRotation", {"factor": 0.2}, (2, 4, 4, 3)),
    ("RandomZoom", {"height_factor": 0.2}, (2, 4, 4, 3)),
]


def _build(rng, name, cfg, shape):
    layer = getattr(L, name)(**cfg)
    x = _x(rng, shape)
    y = layer(x)
    return layer, x, y


def _first(y):
    return y[0] if isinstance(y, (list, tuple)) else y


@pytest.mark.parametrize("name,cfg,shape", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_layer_shapes_config_and_none_batch(rng, name, cfg, shape):
    layer, x, y = _build(rng, name, cfg, shape)
    want = layer.compute_output_shape(shape)
    got = [tuple(t.shape) for t in y] if isinstance(y, (list, tuple)) else tuple(y.shape)
    assert got == (list(map(tuple, want)) if isinstance(y, (list, tuple)) else tuple(want))
    none = layer.compute_output_shape((None,) + tuple(shape[1:]))
    first = none[0] if isinstance(none, list) else none
    assert first[0] is None and tuple(first[1:]) == tuple(_first(y).shape[1:])
    clone = type(layer).from_config(layer.get_config())
    clone(x)
    assert [w.shape for w in clone.weights] == [w.shape for w in layer.weights]
    if clone.weights:
        clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(_first(clone(x)).numpy(), _first(layer(x)).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,cfg,shape", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_layer_equals_keras_from_identical_weights(rng, name, cfg, shape):
    tensorflow = tf_or_none()
    layer, x, y = _build(rng, name, cfg, shape)
    if tensorflow is None:
        assert _first(y).dtype == tf.float32  # without TensorFlow the references below check the values
        return
    k = getattr(tensorflow.keras.layers, name)(**cfg)
    k(x)
    assert [w.name.split("/")[-1].split(":")[0] for w in k.weights] == \
        [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
    k.set_weights(layer.get_weights())
    # Keras 3's image augmentations default to training=True when called directly; here (as the brief
    # for tapeflow says, and as inside Keras's predict) they act only with training=True
    ky = k(x, training=False) if name.startswith("Random") else k(x)
    for a, b in zip(y if isinstance(y, (list, tuple)) else [y], ky if isinstance(ky, (list, tuple)) else [ky]):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-5, atol=1e-5)


# -- NumPy references (run without TensorFlow) -------------------------------------------

def _conv_ref(x, w, strides, padding, dilation, groups=1):
    """Direct N-d convolution (channels last), TensorFlow's padding."""
    rank = x.ndim - 2
    k = w.shape[:rank]
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
    if padding == "same":
        out = [-(-n // s) for n, s in zip(x.shape[1:-1], strides)]
        pads = [max((o - 1) * s + e - n, 0) for o, s, e, n in zip(out, strides, eff, x.shape[1:-1])]
        x = np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in pads] + [(0, 0)])
    out = [(n - e) // s + 1 for n, e, s in zip(x.shape[1:-1], eff, strides)]
    cin, f = x.shape[-1] // groups, w.shape[-1]
    y = np.zeros([x.shape[0]] + out + [f])
    fg = f // groups
    for idx in np.ndindex(*out):
        for kidx in np.ndindex(*k):
            pos = tuple(o * s + ki * d for o, s, ki, d in zip(idx, strides, kidx, dilation))
            patch = x[(slice(None),) + pos]
            for g in range(groups):
                y[(slice(None),) + idx + (slice(g * fg, (g + 1) * fg),)] += \
                    patch[:, g * cin:(g + 1) * cin] @ w[kidx][:, g * fg:(g + 1) * fg]
    return y


@pytest.mark.parametrize("name,cfg,shape", [c for c in CASES if c[0] in ("Conv1D", "Conv2D", "Conv3D")])
def test_convolutions_equal_a_direct_reference(rng, name, cfg, shape):
    layer, x, y = _build(rng, name, cfg, shape)
    rank = len(shape) - 2
    w = layer.kernel.numpy()
    xx = x
    padding = cfg.get("padding", "valid")
    dil = layer.dilation_rate
    if padding == "causal":
        xx = np.pad(x, [(0, 0), (dil[0] * (w.shape[0] - 1), 0), (0, 0)])
        padding = "valid"
    ref = _conv_ref(xx, w, layer.strides, padding, dil, layer.groups) + layer.bias.numpy()
    assert rank == len(layer.strides)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_is_the_adjoint_of_conv2d(rng):
    # <conv_transpose(x), z> == <x, conv(z)> with the same kernel: the defining property
    up = L.Conv2DTranspose(3, 3, strides=2, padding="same", use_bias=False)
    x = _x(rng, (1, 4, 5, 2))
    y = up(x).numpy()
    z = _x(rng, y.shape)
    w = up.kernel.numpy()  # (kh, kw, out=3, in=2)
    conv = tf.conv2d(z, w, strides=2, padding="SAME").numpy()
    np.testing.assert_allclose((y * z).sum(), (x * conv).sum(), rtol=1e-4)


def test_depthwise_and_separable_equal_grouped_convolutions(rng):
    x = _x(rng, (2, 5, 5, 3))
    dw = L.DepthwiseConv2D(3, depth_multiplier=2, use_bias=False)
    y = dw(x).numpy()
    k = dw.kernel.numpy()  # (3, 3, 3, 2): channel c makes outputs c*2, c*2+1
    ref = _conv_ref(x, k.reshape(3, 3, 1, 6), (1, 1), "valid", (1, 1), groups=3)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    sep = L.SeparableConv2D(4, 3, use_bias=False)
    y2 = sep(x).numpy()
    d = _conv_ref(x, sep.depthwise_kernel.numpy().reshape(3, 3, 1, 3), (1, 1), "valid", (1, 1), groups=3)
    np.testing.assert_allclose(y2, d @ sep.pointwise_kernel.numpy()[0, 0], rtol=1e-4, atol=1e-4)


def test_activation_layers_known_values():
    x = tf.constant([-2.0, -0.5, 0.5, 3.0])
    assert L.ReLU(max_value=2.0, negative_slope=0.5, threshold=1.0)(x).numpy().tolist() == [-1.5, -0.75, -0.25, 2.0]
    assert L.LeakyReLU()(x).numpy().tolist() == pytest.approx([-0.6, -0.15, 0.5, 3.0])
    assert L.LeakyReLU(alpha=0.1).negative_slope == 0.1
    np.testing.assert_allclose(L.ELU(alpha=0.5)(x).numpy(), [0.5 * np.expm1(-2), 0.5 * np.expm1(-0.5), 0.5, 3.0],
                               rtol=1e-6)
    sm = L.Softmax(axis=[0, 1])(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    e = np.exp([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(sm, e / e.sum(), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="ReLU"):
        L.ReLU(max_value=-1.0)


def test_softmax_mask_zeroes_masked_positions_and_passes_the_mask_on():
    x = tf.constant([[1.0, 2.0, 3.0]])
    m = tf.constant([[True, False, True]])
    y = L.Softmax()(x, mask=m).numpy()
    e = np.exp([1.0, 3.0])
    np.testing.assert_allclose(y, [[e[0] / e.sum(), 0.0, e[1] / e.sum()]], rtol=1e-6)


def test_prelu_learns_its_slope_per_channel():
    layer = L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25), shared_axes=[1, 2])
    x = tf.constant(np.full((1, 2, 2, 3), -2.0, np.float32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    (g,) = tape.gradient(y, layer.trainable_variables)
    assert layer.alpha.shape == (1, 1, 3)
    np.testing.assert_allclose(g.numpy(), np.full((1, 1, 3), -8.0))  # d/d alpha of -alpha * relu(2), 4 pixels


def test_pooling_1d_known_values():
    x = tf.reshape(tf.constant([1.0, 5.0, 2.0, 3.0, 4.0]), [1, 5, 1])
    assert L.MaxPooling1D(2)(x).numpy().ravel().tolist() == [5.0, 3.0]
    assert L.MaxPooling1D(2, strides=1, padding="same")(x).numpy().ravel().tolist() == [5.0, 5.0, 3.0, 4.0, 4.0]
    assert L.AveragePooling1D(3, strides=2)(x).numpy().ravel().tolist() == pytest.approx([8 / 3, 3.0])
    assert L.GlobalMaxPooling1D()(x).numpy().tolist() == [[5.0]]
    assert L.MaxPooling1D(2, data_format="channels_first")(tf.reshape(x, [1, 1, 5])).numpy().ravel().tolist() == \
        [5.0, 3.0]


def test_reshaping_layers_known_values(rng):
    x = _x(rng, (2, 3, 4, 2))
    np.testing.assert_array_equal(L.UpSampling2D((2, 3))(x).numpy(), x.repeat(2, axis=1).repeat(3, axis=2))
    np.testing.assert_array_equal(L.ZeroPadding2D(((1, 2), (0, 3)))(x).numpy(),
                                  np.pad(x, [(0, 0), (1, 2), (0, 3), (0, 0)]))
    np.testing.assert_array_equal(L.Cropping2D(((1, 0), (2, 1)))(x).numpy(), x[:, 1:, 2:3])
    np.testing.assert_array_equal(L.Permute((3, 1, 2))(x).numpy(), x.transpose(0, 3, 1, 2))
    v = _x(rng, (2, 4))
    np.testing.assert_array_equal(L.RepeatVector(3)(v).numpy(), np.repeat(v[:, None], 3, axis=1))
    row = tf.reshape(tf.constant([0.0, 4.0]), [1, 1, 2, 1])
    assert L.UpSampling2D((1, 2), interpolation="bilinear")(row).numpy().ravel().tolist() == [0.0, 1.0, 3.0, 4.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cropping2D"):
        L.Cropping2D(((2, 2), (0, 0)))(x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Permute"):
        L.Permute((1, 1))


def _simple_rnn_ref(x, k, r, b, mask=None):
    h = np.zeros((x.shape[0], k.shape[1]), np.float32)
    outs = []
    for t in range(x.shape[1]):
        h2 = np.tanh(x[:, t] @ k + h @ r + b)
        h = h2 if mask is None else np.where(mask[:, t:t + 1], h2, h)
        outs.append(h)
    return np.stack(outs, 1), h


def test_simple_rnn_equals_its_recurrence_and_skips_masked_steps(rng):
    x = _x(rng, (2, 5, 3))
    rnn = L.SimpleRNN(4, return_sequences=True)
    y = rnn(x).numpy()
    k, r, b = (w.numpy() for w in rnn.weights)
    ref, _ = _simple_rnn_ref(x, k, r, b)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    mask = np.array([[True] * 5, [True, True, True, False, False]])
    last = L.SimpleRNN(4)
    last.build((None, 5, 3))
    last.set_weights([k, r, b])
    _, h = _simple_rnn_ref(x, k, r, b, mask)
    np.testing.assert_allclose(last(x, mask=tf.constant(mask)).numpy(), h, rtol=1e-5, atol=1e-6)


def test_bidirectional_runs_a_reversed_copy_and_merges(rng):
    x = _x(rng, (2, 5, 3))
    bi = L.Bidirectional(L.SimpleRNN(4, return_sequences=True), merge_mode="concat")
    y = bi(x).numpy()
    assert [w.name for w in bi.weights][0].startswith("forward_simple_rnn") and len(bi.weights) == 6
    fk, fr, fb, bk, br, bb = (w.numpy() for w in bi.weights)
    fwd, _ = _simple_rnn_ref(x, fk, fr, fb)
    bwd, _ = _simple_rnn_ref(x[:, ::-1], bk, br, bb)
    np.testing.assert_allclose(y, np.concatenate([fwd, bwd[:, ::-1]], -1), rtol=1e-5, atol=1e-6)
    for mode, f in (("sum", np.add), ("mul", np.multiply), ("ave", lambda a, b: (a + b) / 2)):
        other = L.Bidirectional(L.SimpleRNN(4, return_sequences=True), merge_mode=mode)
        other(x)
        other.set_weights(bi.get_weights())
        np.testing.assert_allclose(other(x).numpy(), f(fwd, bwd[:, ::-1]), rtol=1e-5, atol=1e-6)
    states = L.Bidirectional(L.LSTM(3, return_state=True), merge_mode=None)(x)
    assert len(states) == 6 and [tuple(s.shape) for s in states] == [(2, 3)] * 6


def test_bidirectional_and_time_distributed_propagate_masks(rng):
    ids = tf.constant([[3, 1, 0, 0], [2, 2, 2, 0]])
    emb = L.Embedding(5, 3, mask_zero=True)
    e = emb(ids)
    bi = L.Bidirectional(L.LSTM(2, return_sequences=True))
    y = bi(e)
    from tapeflow.nn._masks import get_mask
    assert get_mask(y).numpy().tolist() == (ids.numpy() != 0).tolist()
    td = L.TimeDistributed(L.Dense(2))
    assert get_mask(td(e)).numpy().tolist() == (ids.numpy() != 0).tolist()
    # the backward direction skips the padding at the end: equal to running on the unpadded sequence
    short = bi(emb(tf.constant([[3, 1]])))
    np.testing.assert_allclose(y.numpy()[0, :2], short.numpy()[0], rtol=1e-5, atol=1e-6)
    # masked steps are zero in both directions (Keras's zero_output_for_mask, which Bidirectional forces)
    assert (y.numpy()[0, 2:] == 0).all() and (y.numpy()[1, 3:] == 0).all()
    tensorflow = tf_or_none()
    if tensorflow is not None:
        k = tensorflow.keras.layers
        for merge in ("concat", "ave", None):
            mine = L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode=merge)
            out = mine(e)
            kemb, kbi = k.Embedding(5, 3, mask_zero=True), k.Bidirectional(k.LSTM(2, return_sequences=True),
                                                                           merge_mode=merge)
            kbi(kemb(ids.numpy()))
            kemb.set_weights(emb.get_weights())
            kbi.set_weights(mine.get_weights())
            want = kbi(kemb(ids.numpy()))
            for a, b in zip(out if merge is None else [out], want if merge is None else [want]):
                np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_time_distributed_applies_the_layer_per_step(rng):
    x = _x(rng, (2, 4, 3, 3, 1))
    td = L.TimeDistributed(L.Conv2D(2, 2))
    y = td(x)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        k = tensorflow.keras.layers.TimeDistributed(tensorflow.keras.layers.Conv2D(2, 2))
        k(x)
        k.set_weights(td.get_weights())
        np.testing.assert_allclose(y.numpy(), np.asarray(k(x)), rtol=1e-5, atol=1e-6)
    assert tuple(y.shape) == (2, 4, 2, 2, 2) == td.compute_output_shape((2, 4, 3, 3, 1))
    step = td.layer(x[:, 2]).numpy()
    np.testing.assert_allclose(y.numpy()[:, 2], step, rtol=1e-6)
    assert td.compute_output_shape((None, 4, 3, 3, 1))[0] is None


def _mha_ref(layer, q, v, mask=None, uniform_empty_rows=False):
    w = [t.numpy() for t in layer.weights]
    qk, qb, kk, kb, vk, vb, ok, ob = w
    Q = np.einsum("btd,dnh->bnth", q, qk) + qb.transpose(0, 1)[None, :, None, :]
    Kt = np.einsum("btd,dnh->bnth", v, kk) + kb[None, :, None, :]
    V = np.einsum("btd,dnh->bnth", v, vk) + vb[None, :, None, :]
    s = np.einsum("bnqh,bnkh->bnqk", Q / np.sqrt(qk.shape[-1]), Kt)
    if mask is not None:
        s = np.where(mask[:, None], s, -1e9)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    if mask is not None and not uniform_empty_rows:
        p = np.where(mask[:, None], p, 0.0)
    o = np.einsum("bnqk,bnkh->bqnh", p, V)
    return np.einsum("bqnh,nho->bqo", o, ok) + ob, p


def test_multi_head_attention_equals_the_reference_and_masks(rng):
    q, v = _x(rng, (2, 3, 6)), _x(rng, (2, 4, 5))
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3, bias_initializer="random_normal")
    y, scores = mha(q, v, return_attention_scores=True)
    ref, p = _mha_ref(mha, q, v)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), p, rtol=1e-4, atol=1e-6)
    am = np.tril(np.ones((3, 4), bool))[None].repeat(2, 0)
    ref_m, _ = _mha_ref(mha, q, v, am)
    np.testing.assert_allclose(mha(q, v, attention_mask=tf.constant(am)).numpy(), ref_m, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mha(q, v, use_causal_mask=True).numpy(), ref_m, rtol=1e-4, atol=1e-5)
    assert [w.name.split("/", 1)[1] for w in mha.weights] == [
        "query/kernel:0", "query/bias:0", "key/kernel:0", "key/bias:0", "value/kernel:0", "value/bias:0",
        "attention_output/kernel:0", "attention_output/bias:0"]
    tensorflow = tf_or_none()
    if tensorflow is not None:
        k = tensorflow.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
        k(q, v)
        k.set_weights(mha.get_weights())
        np.testing.assert_allclose(np.asarray(k(q, v, use_causal_mask=True)), ref_m, rtol=1e-4, atol=1e-5)


def test_multi_head_attention_reads_the_masks_of_its_inputs_as_keras3(rng):
    emb = L.Embedding(6, 4, mask_zero=True)
    qi, vi = np.array([[1, 2, 0], [3, 0, 0]]), np.array([[1, 2, 3, 0], [4, 5, 0, 0]])
    q, v = emb(tf.constant(qi)), emb(tf.constant(vi))
    mha = L.MultiHeadAttention(2, 3, bias_initializer="random_normal")
    y = mha(q, v)
    mask = (qi != 0)[:, :, None] & (vi != 0)[:, None, :]
    # Keras 3 runs dot_product_attention here: a masked query row (no key kept) attends uniformly
    ref, _ = _mha_ref(mha, q.numpy(), v.numpy(), mask, uniform_empty_rows=True)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5)
    from tapeflow.nn._masks import get_mask
    assert get_mask(y).numpy().tolist() == (qi != 0).tolist()
    # with the scores returned (Keras's own softmax) the masked rows' weights are 0
    y2, scores = mha(q, v, return_attention_scores=True)
    ref2, p2 = _mha_ref(mha, q.numpy(), v.numpy(), mask)
    np.testing.assert_allclose(y2.numpy(), ref2, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), p2, rtol=1e-4, atol=1e-6)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        k = tensorflow.keras.layers
        kemb, kmha = k.Embedding(6, 4, mask_zero=True), k.MultiHeadAttention(2, 3)
        kmha(kemb(qi), kemb(vi))
        kemb.set_weights(emb.get_weights())
        kmha.set_weights(mha.get_weights())
        np.testing.assert_allclose(np.asarray(kmha(kemb(qi), kemb(vi))), y.numpy(), rtol=1e-5, atol=1e-5)
        axes = L.MultiHeadAttention(2, 3, attention_axes=(2,), output_shape=(4, 2))
        q4, v4 = _x(rng, (2, 3, 4, 5)), _x(rng, (2, 3, 6, 5))
        out, s = axes(q4, v4, return_attention_scores=True)
        kaxes = k.MultiHeadAttention(2, 3, attention_axes=(2,), output_shape=(4, 2))
        kaxes(q4, v4)
        kaxes.set_weights(axes.get_weights())
        kout, ks = kaxes(q4, v4, return_attention_scores=True)
        np.testing.assert_allclose(out.numpy(), np.asarray(kout), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(s.numpy(), np.asarray(ks), rtol=1e-5, atol=1e-6)


def test_attention_layer_dot_and_concat_scores(rng):
    q, v, key = _x(rng, (2, 3, 4)), _x(rng, (2, 5, 4)), _x(rng, (2, 5, 4))
    vm = np.array([[True] * 5, [True, True, False, False, False]])
    att = L.Attention(use_scale=True)
    y = att([q, v, key], mask=[None, tf.constant(vm)]).numpy()
    s = np.where(vm[:, None], q @ key.transpose(0, 2, 1), -1e9)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(y, p @ v, rtol=1e-5, atol=1e-6)
    cat = L.Attention(score_mode="concat")
    yc = cat([q, v]).numpy()
    sc = np.tanh(q[:, :, None, :] + v[:, None, :, :]).sum(-1)
    pc = np.exp(sc - sc.max(-1, keepdims=True))
    pc /= pc.sum(-1, keepdims=True)
    np.testing.assert_allclose(yc, pc @ v, rtol=1e-5, atol=1e-6)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        for mine, kw in ((att, {"use_scale": True}), (cat, {"score_mode": "concat"})):
            k = tensorflow.keras.layers.Attention(**kw)
            k([q, v, key])
            k.set_weights(mine.get_weights())
            np.testing.assert_allclose(np.asarray(k([q, v, key], mask=[None, vm])),
                                       mine([q, v, key], mask=[None, tf.constant(vm)]).numpy(), rtol=1e-5, atol=1e-5)


def test_normalization_adapt_matches_numpy_and_batches(rng):
    pytest.importorskip("tapeflow.data", reason="adapts from a tf.data pipeline (tapeflow-data)")
    data = _x(rng, (50, 3)) * 3 + 2
    norm = L.Normalization()
    norm.adapt(data)
    np.testing.assert_allclose(norm.get_weights()[0], data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(norm.get_weights()[1], data.var(0), rtol=1e-4)
    np.testing.assert_allclose(norm(data).numpy(), (data - data.mean(0)) / data.std(0), rtol=1e-4, atol=1e-4)
    batched = L.Normalization(axis=None)
    batched.adapt(tf.data.Dataset.from_tensor_slices(data).batch(16))
    np.testing.assert_allclose(batched.get_weights()[0], data.mean(), rtol=1e-5)
    np.testing.assert_allclose(batched.get_weights()[1], data.var(), rtol=1e-4)
    inv = L.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 1.0, 0.25], invert=True)
    np.testing.assert_allclose(inv(tf.ones([1, 3])).numpy(), [[3.0, 3.0, 3.5]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="adapt"):
        L.Normalization()(tf.ones([1, 3]).numpy()) if False else L.Normalization().call(tf.ones([1, 3]))
    tensorflow = tf_or_none()
    if tensorflow is not None:
        k = tensorflow.keras.layers.Normalization()
        k.adapt(data)
        np.testing.assert_allclose(np.asarray(k(data)), norm(data).numpy(), rtol=1e-4, atol=1e-4)


def test_category_encoding_modes():
    x = tf.constant([[0, 1, 1], [3, 3, 2]])
    assert L.CategoryEncoding(4)(x).numpy().tolist() == [[1, 1, 0, 0], [0, 0, 1, 1]]
    assert L.CategoryEncoding(4, "count")(x, count_weights=[[1.0, 2.0, 3.0], [1.0, 1.0, 0.5]]).numpy().tolist() == \
        [[1.0, 5.0, 0.0, 0.0], [0.0, 0.0, 0.5, 2.0]]
    assert L.CategoryEncoding(4, "one_hot")(tf.constant([2, 0])).numpy().tolist() == [[0, 0, 1, 0], [1, 0, 0, 0]]
    assert L.CategoryEncoding(3, "one_hot").compute_output_shape((None, 1)) == (None, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="CategoryEncoding"):
        L.CategoryEncoding(3)(tf.constant([[0, 3]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sparse"):
        L.CategoryEncoding(3, sparse=True)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        for mode in ("multi_hot", "count"):
            np.testing.assert_array_equal(np.asarray(tensorflow.keras.layers.CategoryEncoding(4, mode)(x.numpy())),
                                          L.CategoryEncoding(4, mode)(x).numpy())


def test_random_layers_act_only_while_training(rng):
    tf.random.set_seed(7)
    x = _x(rng, (2, 6, 6, 3))
    for layer in (L.RandomFlip(seed=1), L.RandomRotation(0.3, seed=1), L.RandomZoom(0.3, seed=1),
                  L.GaussianNoise(0.5, seed=1), L.SpatialDropout2D(0.5, seed=1)):
        np.testing.assert_array_equal(layer(x).numpy(), x)
        # (a flip leaves both images as they are with probability 1/16: several calls)
        assert any(not np.array_equal(layer(x, training=True).numpy(), x) for _ in range(8))
    img = x[0]
    flips = {img.tobytes(), img[::-1].tobytes(), img[:, ::-1].tobytes(), img[::-1, ::-1].tobytes()}
    flip = L.RandomFlip()
    assert all(flip(x, training=True).numpy()[0].tobytes() in flips for _ in range(8))
    crop = L.RandomCrop(4, 4, seed=1)
    np.testing.assert_array_equal(crop(x).numpy(), x)  # inference passes images through, as Keras 3
    cropped = crop(x, training=True).numpy()
    assert cropped.shape == (2, 4, 4, 3)
    assert any(np.array_equal(cropped, x[:, i:i + 4, j:j + 4]) for i in range(3) for j in range(3))
    # an image not larger than the window: its central window of the target's aspect ratio, resized
    np.testing.assert_allclose(L.RandomCrop(6, 3)(x, training=True).numpy(), x[:, :, 1:4], rtol=1e-6)
    src = (np.arange(8) + 0.5) * 6 / 8 - 0.5
    rows = np.stack([np.interp(src, np.arange(6), x[0, :, j, 0]) for j in range(6)], 1)
    ref = np.stack([np.interp(src, np.arange(6), rows[i]) for i in range(8)])
    np.testing.assert_allclose(L.RandomCrop(8, 8)(x, training=True).numpy()[0, :, :, 0], ref, rtol=1e-5, atol=1e-6)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        for h, w in ((6, 3), (8, 8), (2, 9)):
            want = np.asarray(tensorflow.keras.layers.RandomCrop(h, w)(x, training=True))
            np.testing.assert_allclose(L.RandomCrop(h, w)(x, training=True).numpy(), want, rtol=1e-5, atol=1e-5)
    spatial = L.SpatialDropout2D(0.5, seed=2)(tf.ones([4, 3, 3, 8]), training=True).numpy()
    assert set(np.unique(spatial)) <= {0.0, 2.0} and (spatial == spatial[:, :1, :1]).all()


def test_fixed_rotation_and_zoom_resample_like_tensorflow():
    x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    quarter = L.RandomRotation((0.25, 0.25), fill_mode="constant")(x, training=True).numpy()[0, :, :, 0]
    np.testing.assert_allclose(quarter, np.rot90(np.arange(16.0).reshape(4, 4)), atol=1e-4)
    zoom = L.RandomZoom((-0.5, -0.5), fill_mode="constant")(x, training=True).numpy()[0, :, :, 0]
    # zooming in 2x around the centre: output (y, x) reads input (0.75 + y / 2, 0.75 + x / 2), bilinearly
    ys = 0.75 + np.arange(4) / 2
    np.testing.assert_allclose(zoom, 4 * ys[:, None] + ys[None, :], atol=1e-4)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        img = np.random.default_rng(0).random((2, 5, 7, 2)).astype(np.float32)
        for mode in ("reflect", "wrap", "constant", "nearest"):
            for interp in ("bilinear", "nearest"):
                for name, kw in (("RandomRotation", {"factor": (0.1, 0.1)}),
                                 ("RandomZoom", {"height_factor": (0.3, 0.3), "width_factor": (-0.2, -0.2)})):
                    kw = {**kw, "fill_mode": mode, "interpolation": interp}
                    want = np.asarray(getattr(tensorflow.keras.layers, name)(**kw)(img, training=True))
                    got = getattr(L, name)(**kw)(img, training=True).numpy()
                    np.testing.assert_allclose(got, want, atol=1e-4, err_msg=f"{name} {kw}")


@pytest.mark.parametrize("make,shape", [
    (lambda: L.PReLU(alpha_initializer="ones"), (2, 3)),
    (lambda: L.Conv1D(2, 2, groups=1), (2, 5, 2)),
    (lambda: L.Conv2D(4, 2, groups=2), (1, 4, 4, 2)),
    (lambda: L.Conv3D(2, 2), (1, 3, 3, 3, 1)),
    (lambda: L.Conv2DTranspose(2, 2, strides=2), (1, 3, 3, 2)),
    (lambda: L.DepthwiseConv2D(2), (1, 3, 3, 2)),
    (lambda: L.SeparableConv2D(2, 2), (1, 3, 3, 2)),
    (lambda: L.SimpleRNN(3), (2, 4, 2)),
    (lambda: L.Bidirectional(L.GRU(2)), (2, 4, 2)),
    (lambda: L.TimeDistributed(L.Dense(2)), (2, 3, 2)),
    (lambda: L.MultiHeadAttention(2, 2), (2, 3, 4)),
    (lambda: L.Attention(use_scale=True, score_mode="concat"), (2, 3, 4)),
])
def test_gradients_reach_every_trainable_weight(rng, make, shape):
    layer = make()
    x = tf.constant(_x(rng, shape))
    call = (lambda: layer(x, x)) if isinstance(layer, L.MultiHeadAttention) else \
        (lambda: layer([x, x])) if isinstance(layer, L.Attention) else (lambda: layer(x))
    call()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(call()))
    grads = tape.gradient(loss, layer.trainable_variables)
    assert layer.trainable_variables and all(g is not None for g in grads)
    assert all(float(tf.reduce_sum(tf.abs(g))) > 0 for g in grads)


def test_bad_arguments_raise_typed_errors_naming_the_layer():
    with pytest.raises(tf.errors.InvalidArgumentError, match="groups"):
        L.Conv2D(5, 3, groups=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="groups"):
        L.Conv1D(4, 3, groups=4)(tf.ones([1, 5, 6]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="padding"):
        L.Conv2D(4, 3, padding="causal")
    with pytest.raises(TypeError, match="Bidirectional"):
        L.Bidirectional("lstm")
    with pytest.raises(tf.errors.InvalidArgumentError, match="merge_mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Attention"):
        L.Attention()(tf.ones([1, 2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="interpolation"):
        L.UpSampling2D(interpolation="bicubic")


def test_lambda_and_masking_meet_keras3():
    lam = L.Lambda(lambda x, k: x * k, output_shape=(3,), arguments={"k": 3.0}, mask=lambda x, m: m)
    assert lam(tf.ones([2, 3])).numpy().tolist() == [[3.0] * 3] * 2
    assert lam.compute_output_shape((None, 5)) == (None, 3)
    assert L.Lambda(lambda x: x, output_shape=lambda s: s[:1]).compute_output_shape((None, 4)) == (None,)
    with pytest.raises(TypeError, match="does not support masking"):  # no mask=: a masked input is refused
        L.Lambda(lambda x: x)(tf.ones([2, 3]), mask=tf.constant([True, False]))
    fixed = L.Lambda(lambda x: x, mask=tf.constant([True, False]))
    from tapeflow.nn._masks import get_mask
    assert get_mask(fixed(tf.ones([2, 3]))).numpy().tolist() == [True, False]
    cfg = lam.get_config()
    assert cfg["output_shape"] == (3,) and cfg["arguments"] == {"k": 3.0}
    m = L.Masking(mask_value=1.0)
    x = tf.constant([[[1.0, 1.0], [2.0, 1.0]]])
    assert m(x).numpy().tolist() == [[[0.0, 0.0], [2.0, 1.0]]]
    assert get_mask(m(x)).numpy().tolist() == [[False, True]]


# -- item 8: integer inputs to float layers -------------------------------------------------

def test_integer_inputs_to_float_layers_are_cast_as_keras3():
    d = L.Dense(2, kernel_initializer="ones")
    y = d(tf.constant([[1, 2]]))
    assert y.dtype == tf.float32 and y.numpy().tolist() == [[3.0, 3.0]]
    assert L.Conv1D(1, 1, kernel_initializer="ones")(np.ones((1, 2, 1), np.uint8)).dtype == tf.float32
    assert L.Rescaling(1 / 255)(tf.constant([255], tf.uint8)).numpy().tolist() == [1.0]
    model = tf.keras.Sequential([L.Dense(1, kernel_initializer="ones", use_bias=False)])
    assert model(np.array([[1, 2, 3]], np.int64)).numpy().tolist() == [[6.0]]
    # layers that take ids or move values keep integers, as in Keras
    assert L.Embedding(5, 2)(tf.constant([[1, 4]])).shape == (1, 2, 2)
    assert L.Flatten()(tf.constant([[[1, 2]]])).dtype == tf.int32
    assert L.Lambda(lambda x: tf.one_hot(x, 3))(tf.constant([2])).numpy().tolist() == [[0.0, 0.0, 1.0]]


def test_an_integer_error_in_a_custom_layer_names_the_layer_and_the_fix():
    class Scale(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")

        def call(self, x):
            return x * self.w

    with pytest.raises(tf.errors.InvalidArgumentError, match=r'layer "scale".*int32.*tf\.cast'):
        Scale()(tf.constant([[1, 2]]))
