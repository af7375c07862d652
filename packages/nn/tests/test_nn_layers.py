"""Layer semantics, output shapes and parameter counts (against Keras), and bad input."""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

L = tf.keras.layers


def _ids(vs):
    return [id(v) for v in vs]


def _has(vs, v):
    return any(x is v for x in vs)


# ---- semantics ---------------------------------------------------------------------------------

def test_lazy_build_from_first_input():
    d = L.Dense(3)
    assert not d.built and d.weights == []
    y = d(tf.ones([2, 5]))
    assert d.built and y.shape == (2, 3)
    assert d.kernel.shape == (5, 3) and d.bias.shape == (3,)
    assert [v.name for v in d.trainable_variables] == ["dense/kernel:0", "dense/bias:0"]


def test_add_weight_both_argument_orders_and_trainable_flag():
    layer = L.Layer(name="w")
    a = layer.add_weight((2, 3), "ones")                       # Keras 3: shape, initializer
    b = layer.add_weight("b", (4,), initializer="zeros")       # TF-Keras: name, shape
    c = layer.add_weight(shape=(), initializer="zeros", trainable=False, name="count")
    assert a.shape == (2, 3) and float(tf.reduce_sum(a)) == 6.0
    assert b.name == "w/b:0" and c.name == "w/count:0"
    assert _ids(layer.trainable_variables) == _ids([a, b])
    assert _ids(layer.non_trainable_variables) == _ids([c])
    assert _ids(layer.variables) == _ids([a, b, c])


class Block(L.Layer):
    def __init__(self):
        super().__init__()
        self.dense = L.Dense(4)
        self.stack = [L.Dense(4), L.Dense(4)]
        self.heads = {"a": L.Dense(2), "b": L.Dense(1)}
        self.scale = tf.Variable(2.0, name="scale")
        self.frozen = tf.Variable(1.0, trainable=False, name="frozen")

    def call(self, x, training=None):
        x = self.dense(x)
        for layer in self.stack:
            x = layer(x)
        return self.heads["a"](x) * self.scale, self.heads["b"](x) * self.frozen


def test_nested_layers_lists_dicts_and_attribute_variables_are_tracked():
    b = Block()
    b(tf.ones([1, 3]))
    # own variables first (attribute order), then each sublayer's
    names = [v.name for v in b.variables]
    assert names[:2] == ["scale:0", "frozen:0"]
    assert len(b.variables) == 2 + 2 * 5
    assert len(b.trainable_variables) == 1 + 2 * 5 and _ids(b.non_trainable_variables) == _ids([b.frozen])
    assert b.count_params() == 2 + (3 * 4 + 4) + 2 * (4 * 4 + 4) + (4 * 2 + 2) + (4 * 1 + 1)
    assert len(b.submodules) == 5


def test_lists_changed_after_assignment_are_seen():
    b = Block()
    b(tf.ones([1, 3]))
    n = len(b.trainable_variables)
    extra = L.Dense(2)
    extra(tf.ones([1, 4]))
    b.stack.append(extra)
    assert len(b.trainable_variables) == n + 2
    b.stack.pop()
    assert len(b.trainable_variables) == n
    del b.heads["b"]
    assert len(b.trainable_variables) == n - 2


def test_trainable_false_moves_variables_and_propagates():
    b = Block()
    b(tf.ones([1, 3]))
    total = len(b.variables)
    b.stack[0].trainable = False
    assert not _has(b.trainable_variables, b.stack[0].kernel)
    assert _has(b.non_trainable_variables, b.stack[0].kernel)
    b.trainable = False
    assert b.trainable_variables == [] and len(b.non_trainable_variables) == total
    assert all(not s.trainable for s in b.submodules)


def test_reusing_a_layer_shares_its_variables():
    d = L.Dense(4)
    a = d(tf.ones([2, 4]))
    c = d(a)
    assert len(d.variables) == 2 and c.shape == (2, 4)

    class Twice(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = L.Dense(4)

        def call(self, x):
            return self.d(self.d(x))

    m = Twice()
    m(tf.ones([1, 4]))
    assert len(m.variables) == 2


class Probe(L.Layer):
    def call(self, x, training=None):
        self.seen = training
        return x


def test_training_flag_passes_to_nested_layers():
    class Outer(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.p = Probe()

        def call(self, x):
            return self.p(x)

    m = Outer()
    m(tf.ones([1]), training=True)
    assert m.p.seen is True
    m(tf.ones([1]), training=False)
    assert m.p.seen is False
    m(tf.ones([1]))
    assert m.p.seen is None
    m.p(tf.ones([1]), training=True)
    assert m.p.seen is True


def test_dropout_only_while_training():
    d = L.Dropout(0.5, seed=3)
    x = tf.ones([4000])
    assert np.array_equal(d(x).numpy(), x.numpy())
    y = d(x, training=True).numpy()
    assert set(np.unique(y)) == {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6


def test_inputs_are_converted_and_float64_cast_to_the_layer_dtype():
    d = L.Dense(2)
    y = d(np.ones((3, 4)))  # float64 NumPy
    assert y.dtype == tf.float32
    d64 = L.Dense(2, dtype="float64")
    assert d64(np.ones((3, 4), np.float32)).dtype == tf.float64


def test_batchnorm_training_and_inference_and_moving_stats(rng):
    x = rng.normal(3.0, 2.0, size=(64, 5)).astype(np.float32)
    bn = L.BatchNormalization(momentum=0.9)
    y = bn(x, training=True).numpy()
    np.testing.assert_allclose(y.mean(0), 0.0, atol=1e-5)
    np.testing.assert_allclose(y.std(0), np.sqrt(x.var(0) / (x.var(0) + 1e-3)), rtol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * x.var(0), rtol=1e-5)
    # inference uses the moving statistics
    inf = bn(x, training=False).numpy()
    ref = (x - bn.moving_mean.numpy()) / np.sqrt(bn.moving_variance.numpy() + 1e-3)
    np.testing.assert_allclose(inf, ref, rtol=1e-4, atol=1e-5)
    assert len(bn.trainable_variables) == 2 and len(bn.non_trainable_variables) == 2
    # a frozen BatchNormalization runs in inference mode and keeps its statistics
    bn.trainable = False
    before = bn.moving_mean.numpy().copy()
    bn(x, training=True)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), before)


def test_layer_normalization_matches_numpy(rng):
    x = rng.normal(size=(4, 6)).astype(np.float32)
    y = L.LayerNormalization()(x).numpy()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)


def test_embedding_lstm_gru_shapes():
    e = L.Embedding(50, 8)
    assert e(tf.constant([[1, 2, 3], [4, 5, 6]])).shape == (2, 3, 8)
    x = tf.random.normal([2, 5, 8], seed=1)
    assert L.LSTM(6)(x).shape == (2, 6)
    out, h, c = L.LSTM(6, return_sequences=True, return_state=True)(x)
    assert out.shape == (2, 5, 6) and h.shape == (2, 6) and c.shape == (2, 6)
    np.testing.assert_allclose(out[:, -1].numpy(), h.numpy())
    out, h = L.GRU(7, return_sequences=True, return_state=True)(x)
    assert out.shape == (2, 5, 7) and h.shape == (2, 7)


def test_lstm_matches_a_numpy_reference(rng):
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    lstm = L.LSTM(6, return_sequences=True)
    out = lstm(x).numpy()
    W, U, b = (v.numpy() for v in lstm.weights)
    h = c = np.zeros((3, 6), np.float32)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    for t in range(4):
        z = x[:, t] @ W + h @ U + b
        i, f, g, o = np.split(z, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        np.testing.assert_allclose(out[:, t], h, rtol=1e-4, atol=1e-5)
    # the forget-gate bias starts at one, the rest at zero
    np.testing.assert_array_equal(b, np.r_[np.zeros(6), np.ones(6), np.zeros(12)])
    # the recurrent kernel is orthogonal
    np.testing.assert_allclose(U @ U.T, np.eye(6), atol=1e-5)


def test_gru_matches_a_numpy_reference(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    gru = L.GRU(5, bias_initializer="random_normal")
    out = gru(x).numpy()
    W, U, b = (v.numpy() for v in gru.weights)
    h = np.zeros((2, 5), np.float32)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    for t in range(3):
        xz, xr, xh = np.split(x[:, t] @ W + b[0], 3, axis=1)
        hz, hr, hh = np.split(h @ U + b[1], 3, axis=1)
        z, r = sig(xz + hz), sig(xr + hr)
        h = z * h + (1 - z) * np.tanh(xh + r * hh)
    np.testing.assert_allclose(out, h, rtol=1e-4, atol=1e-5)


def test_conv_and_pooling_match_numpy(rng):
    x = rng.normal(size=(2, 6, 6, 3)).astype(np.float32)
    conv = L.Conv2D(4, 3, padding="same", activation="relu")
    y = conv(x).numpy()
    k, b = conv.kernel.numpy(), conv.bias.numpy()
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    ref = np.zeros((2, 6, 6, 4), np.float32)
    for i in range(6):
        for j in range(6):
            ref[:, i, j] = np.einsum("nhwc,hwcf->nf", xp[:, i:i + 3, j:j + 3], k)
    np.testing.assert_allclose(y, np.maximum(ref + b, 0), rtol=1e-4, atol=1e-5)
    mp = L.MaxPooling2D()(x).numpy()
    np.testing.assert_allclose(mp, x.reshape(2, 3, 2, 3, 2, 3).max(axis=(2, 4)))
    ap = L.AveragePooling2D()(x).numpy()
    np.testing.assert_allclose(ap, x.reshape(2, 3, 2, 3, 2, 3).mean(axis=(2, 4)), rtol=1e-6)
    np.testing.assert_allclose(L.GlobalAveragePooling2D()(x).numpy(), x.mean(axis=(1, 2)), rtol=1e-5)



@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16])
def test_global_average_pooling_2d_value_and_gradient(dtype):
    # float32/float64 with a static image size run one average-pooling window; other inputs reduce_mean
    x = np.random.default_rng(3).standard_normal((3, 5, 7, 4))
    xt = tf.constant(x, dtype=dtype)
    tol = 1e-3 if dtype == tf.float16 else 1e-6
    for keepdims in (False, True):
        layer = L.GlobalAveragePooling2D(keepdims=keepdims, dtype=dtype)
        with tf.GradientTape() as tape:
            tape.watch(xt)
            y = layer(xt)
            loss = tf.reduce_sum(y * tf.cast(tf.range(4), dtype))
        assert y.dtype == dtype and y.shape == ((3, 1, 1, 4) if keepdims else (3, 4))
        np.testing.assert_allclose(y.numpy().reshape(3, 4), x.mean(axis=(1, 2)), rtol=tol, atol=tol)
        g = tape.gradient(loss, xt).numpy()
        np.testing.assert_allclose(g, np.broadcast_to(np.arange(4) / 35, x.shape), rtol=tol, atol=tol)
    traced = tf.function(lambda v: L.GlobalAveragePooling2D(dtype=dtype)(v),
                         input_signature=[tf.TensorSpec([None, None, None, 4], dtype)])
    np.testing.assert_allclose(traced(xt).numpy(), x.mean(axis=(1, 2)), rtol=tol, atol=tol)

def test_flatten_reshape_activation():
    x = tf.reshape(tf.range(24, dtype=tf.float32), [2, 3, 4])
    assert L.Flatten()(x).shape == (2, 12)
    assert L.Reshape((4, -1))(x).shape == (2, 4, 3)
    np.testing.assert_array_equal(L.Activation("relu")(x - 10.0).numpy(), np.maximum(x.numpy() - 10, 0))


# ---- output shapes and parameter counts, against Keras -----------------------------------------

CONFIGS = [
    ("Dense", {"units": 10}, (None, 784)),
    ("Dense", {"units": 7, "use_bias": False}, (None, 3, 5)),
    ("Conv2D", {"filters": 16, "kernel_size": 3}, (None, 28, 28, 1)),
    ("Conv2D", {"filters": 8, "kernel_size": (3, 5), "strides": 2, "padding": "same"}, (None, 15, 17, 3)),
    ("Conv2D", {"filters": 4, "kernel_size": 3, "dilation_rate": 2}, (None, 12, 12, 2)),
    ("MaxPooling2D", {}, (None, 26, 26, 16)),
    ("MaxPooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}, (None, 9, 9, 4)),
    ("AveragePooling2D", {"pool_size": (2, 3)}, (None, 8, 9, 2)),
    ("GlobalAveragePooling2D", {}, (None, 24, 24, 16)),
    ("GlobalAveragePooling1D", {}, (None, 7, 5)),
    ("Flatten", {}, (None, 7, 7, 32)),
    ("Reshape", {"target_shape": (7, -1)}, (None, 28, 2)),
    ("Dropout", {"rate": 0.3}, (None, 12)),
    ("BatchNormalization", {}, (None, 10, 10, 8)),
    ("LayerNormalization", {}, (None, 5, 12)),
    ("Embedding", {"input_dim": 1000, "output_dim": 64}, (None, 20)),
    ("LSTM", {"units": 256}, (None, 10, 128)),
    ("LSTM", {"units": 16, "return_sequences": True}, (None, 7, 4)),
    ("GRU", {"units": 32}, (None, 10, 8)),
    ("GRU", {"units": 8, "return_sequences": True}, (None, 6, 3)),
    ("Activation", {"activation": "tanh"}, (None, 4)),
]


def _expected_params(name, cfg, shape):
    """Parameter counts by the layers' formulas (what Keras reports)."""
    if name == "Dense":
        return shape[-1] * cfg["units"] + (cfg["units"] if cfg.get("use_bias", True) else 0)
    if name == "Conv2D":
        k = cfg["kernel_size"]
        kh, kw = (k, k) if isinstance(k, int) else k
        return kh * kw * shape[-1] * cfg["filters"] + cfg["filters"]
    if name == "BatchNormalization":
        return 4 * shape[-1]
    if name == "LayerNormalization":
        return 2 * shape[-1]
    if name == "Embedding":
        return cfg["input_dim"] * cfg["output_dim"]
    if name == "LSTM":
        u = cfg["units"]
        return 4 * (shape[-1] * u + u * u + u)
    if name == "GRU":
        u = cfg["units"]
        return 3 * (shape[-1] * u + u * u + 2 * u)
    return 0


@pytest.mark.parametrize("name,cfg,shape", CONFIGS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)])
def test_output_shape_and_params_equal_keras(name, cfg, shape):
    model = tf.keras.Sequential([tf.keras.Input(shape=shape[1:]), getattr(L, name)(**cfg)])
    layer = model.layers[0]
    ours_shape = tuple(layer.compute_output_shape(shape))
    ours_params = layer.count_params()
    assert ours_params == _expected_params(name, cfg, shape)
    # a real batch gives the shape the layer promised
    batch = (2,) + shape[1:]
    x = tf.random.uniform(batch, 0, 10, dtype=tf.int32) if name == "Embedding" else tf.random.normal(batch, seed=0)
    assert tuple(model(x).shape) == (2,) + ours_shape[1:]
    tensorflow = tf_or_none()
    if tensorflow is not None:
        keras = tensorflow.keras
        km = keras.Sequential([keras.Input(shape=shape[1:]), getattr(keras.layers, name)(**cfg)])
        assert ours_params == km.count_params()
        assert ours_shape == tuple(km.output_shape)


def test_summary_matches_keras_counts_for_the_seeds_cnn():
    model = tf.keras.Sequential([
        L.Conv2D(16, 3, activation="relu", input_shape=(28, 28, 1)),
        L.Conv2D(16, 3, activation="relu"),
        L.GlobalAveragePooling2D(),
        L.Dense(10),
    ])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "conv2d (Conv2D)" in text and "(None, 26, 26, 16)" in text and "(None, 24, 24, 16)" in text
    assert "(None, 16)" in text and "(None, 10)" in text
    assert "Total params: 2,650" in text and "Trainable params: 2,650" in text
    tensorflow = tf_or_none()
    if tensorflow is not None:
        k = tensorflow.keras
        km = k.Sequential([k.Input((28, 28, 1)), k.layers.Conv2D(16, 3, activation="relu"),
                           k.layers.Conv2D(16, 3, activation="relu"), k.layers.GlobalAveragePooling2D(),
                           k.layers.Dense(10)])
        assert km.count_params() == model.count_params() == 2650
        assert [tuple(layer.output.shape) for layer in km.layers] == \
               [(None, 26, 26, 16), (None, 24, 24, 16), (None, 16), (None, 10)]


def test_summary_of_batchnorm_counts_non_trainable():
    model = tf.keras.Sequential([L.Dense(8, input_shape=(4,)), L.BatchNormalization()])
    lines = []
    model.summary(print_fn=lines.append)
    assert "Total params: 72" in lines[-4] and "Trainable params: 56" in lines[-3]
    assert "Non-trainable params: 16" in lines[-2]


def test_summary_of_unbuilt_model_raises():
    with pytest.raises(ValueError, match="not yet been built"):
        tf.keras.Sequential([L.Dense(2)]).summary()


# ---- bad input ---------------------------------------------------------------------------------

def test_built_dense_rejects_a_wrong_last_dimension():
    d = L.Dense(10)
    d(tf.zeros([1, 784]))
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        d(tf.zeros([1, 100]))
    msg = str(e.value)
    assert 'layer "dense"' in msg and "axis -1" in msg and "784" in msg and "(1, 100)" in msg
    assert msg.endswith("[Op:Dense]")


def test_rank_errors_and_bad_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected ndim=4, found ndim=3"):
        L.Conv2D(2, 3)(tf.zeros([1, 5, 5]))
    with pytest.raises(ValueError, match="units must be a positive"):
        L.Dense(0)
    with pytest.raises(ValueError, match="padding must be"):
        L.Conv2D(2, 3, padding="full")
    with pytest.raises(TypeError, match="unexpected keyword"):
        L.Dense(3, unitz=4)
    with pytest.raises(ValueError, match="unknown activation 'relux'"):
        L.Dense(3, activation="relux")
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot reshape"):
        L.Reshape((5,))(tf.zeros([2, 6]))


def test_set_weights_checks_before_changing_anything():
    d = L.Dense(2)
    d(tf.ones([1, 3]))
    before = d.get_weights()
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        d.set_weights([np.zeros((3, 2)), np.zeros((5,))])
    for a, b in zip(before, d.get_weights()):
        np.testing.assert_array_equal(a, b)
    d.set_weights([np.ones((3, 2)), np.ones(2)])
    np.testing.assert_array_equal(d(tf.ones([1, 3])).numpy(), [[4.0, 4.0]])


def test_get_config_round_trip():
    d = L.Dense(5, activation="relu", use_bias=False, name="proj")
    d2 = L.Dense.from_config(d.get_config())
    assert (d2.units, d2.use_bias, d2.activation.__name__, d2.name) == (5, False, "relu", "proj")


# ---- initializers ------------------------------------------------------------------------------

def test_initializers_statistics_and_seeds():
    I = tf.initializers  # noqa: E741
    w = I.GlorotUniform(seed=1)((200, 300)).numpy()
    lim = np.sqrt(6 / 500)
    assert np.abs(w).max() <= lim and abs(w.std() - lim / np.sqrt(3)) < 0.01 * lim
    np.testing.assert_array_equal(w, I.GlorotUniform(seed=1)((200, 300)).numpy())
    assert not np.array_equal(w, I.GlorotUniform(seed=2)((200, 300)).numpy())
    h = I.HeNormal(seed=0)((400, 300)).numpy()
    assert abs(h.std() - np.sqrt(2 / 400)) < 0.05 * np.sqrt(2 / 400)
    assert np.abs(h).max() <= 2 * np.sqrt(2 / 400) / 0.87962566103423978 + 1e-6
    hu = I.HeUniform(seed=0)((3, 3, 8, 16)).numpy()
    assert np.abs(hu).max() <= np.sqrt(6 / (3 * 3 * 8))
    n = I.RandomNormal(1.0, 2.0, seed=5)((20000,)).numpy()
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    u = I.RandomUniform(-3.0, -1.0, seed=5)((20000,)).numpy()
    assert u.min() >= -3.0 and u.max() < -1.0
    assert I.get("zeros")((2,)).numpy().tolist() == [0.0, 0.0]
    assert I.get("ones")((2,)).numpy().tolist() == [1.0, 1.0]
    q = I.Orthogonal(seed=3)((16, 16)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(16), atol=1e-5)
    # unseeded initializers draw fresh values
    assert not np.array_equal(I.GlorotUniform()((4, 4)).numpy(), I.GlorotUniform()((4, 4)).numpy())


def test_facade_names():
    from tapeflow.core.ops import conv_ops, nn_ops

    for name in list(nn_ops.__all__) + list(conv_ops.__all__):
        assert getattr(tf.nn, name) is getattr(tf, name, getattr(tf.nn, name)), name
    assert tf.nn.relu is tf.relu and tf.nn.conv2d is tf.conv2d
    assert tf.keras.layers.Dense is tf.nn.Dense and tf.keras.Model is tf.nn.Model
    assert tf.keras.Sequential is tf.nn.Sequential
    # tf.keras.* are the tapeflow.keras modules, re-exporting the same objects
    assert tf.optimizers.Adam is tf.keras.optimizers.Adam and tf.losses.Huber is tf.keras.losses.Huber
    assert tf.metrics.Mean is tf.keras.metrics.Mean
    assert tf.initializers.GlorotUniform and tf.train.Checkpoint and tf.summary.scalar
    assert issubclass(tf.train.GradientDescentOptimizer, tf.optimizers.SGD)


def test_forgetting_super_init_is_explained():
    class Bad(tf.keras.Model):
        def __init__(self):
            self.d = L.Dense(2)

        def call(self, x):
            return self.d(x)

    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\)"):
        Bad()(tf.ones([1, 2]))
