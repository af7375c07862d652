"""Keras masks: Embedding(mask_zero) and Masking make them, LSTM/GRU skip masked steps, layers that
cannot use a mask raise, and losses in fit average over the kept steps only."""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

L = tf.keras.layers
RNNS = ["LSTM", "GRU"]


def _mask_of(t):
    from tapeflow.nn._masks import get_mask

    return get_mask(t)


def _rnn(name, **kw):
    # a random bias too, so a skipped step is not accidentally close to a zero-input step
    return getattr(L, name)(5, bias_initializer="random_normal", **kw)


@pytest.mark.parametrize("name", RNNS)
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_masked_padding_equals_the_truncated_sequence(name, go_backwards, return_sequences, rng):
    tf.random.set_seed(1)
    x = rng.normal(size=(3, 6, 4)).astype(np.float32)
    lengths = [6, 4, 1]
    mask = np.arange(6)[None, :] < np.array(lengths)[:, None]
    layer = _rnn(name, return_sequences=return_sequences, go_backwards=go_backwards)
    out = layer(x, mask=tf.constant(mask)).numpy()
    for i, n in enumerate(lengths):
        alone = layer(x[i:i + 1, :n]).numpy()[0]
        if not return_sequences:
            np.testing.assert_allclose(out[i], alone, rtol=1e-5, atol=1e-6)
        elif not go_backwards:
            np.testing.assert_allclose(out[i, :n], alone, rtol=1e-5, atol=1e-6)
            # masked steps repeat the last output
            np.testing.assert_array_equal(out[i, n:], np.repeat(out[i, n - 1:n], 6 - n, axis=0))
        else:
            # backwards, the padding comes first: its outputs are zeros, then the truncated run
            np.testing.assert_array_equal(out[i, :6 - n], np.zeros((6 - n, 5), np.float32))
            np.testing.assert_allclose(out[i, 6 - n:], alone, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", RNNS)
def test_masked_steps_inside_the_sequence_are_skipped_and_states_carried(name, rng):
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 0, 1, 1, 0], [0, 1, 1, 0, 1]], bool)
    layer = _rnn(name, return_state=True)
    out, *states = layer(x, mask=mask)
    for i in range(2):
        alone, *alone_states = layer(x[i:i + 1, mask[i]])
        np.testing.assert_allclose(out.numpy()[i], alone.numpy()[0], rtol=1e-5, atol=1e-6)
        for s, a in zip(states, alone_states):
            np.testing.assert_allclose(s.numpy()[i], a.numpy()[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", RNNS)
def test_embedding_mask_zero_feeds_the_rnn(name):
    tf.random.set_seed(2)
    ids = np.array([[3, 1, 4, 0, 0], [5, 9, 2, 6, 5]])
    emb = L.Embedding(10, 4, mask_zero=True)
    layer = _rnn(name)
    out = layer(emb(ids)).numpy()
    np.testing.assert_allclose(out[0], layer(emb(ids[:1, :3])).numpy()[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], layer(emb(ids[1:])).numpy()[0], rtol=1e-5, atol=1e-6)
    # the same layers without the mask run over the padding and differ
    plain = L.Embedding(10, 4)
    plain.build((None, 5))
    plain.set_weights(emb.get_weights())
    assert not np.allclose(layer(plain(ids)).numpy()[0], out[0], atol=1e-4)


def test_gradients_through_masked_steps_equal_the_truncated_ones(rng):
    x = rng.normal(size=(1, 6, 3)).astype(np.float32)
    layer = _rnn("LSTM")
    mask = tf.constant([[True, True, True, True, False, False]])
    with tf.GradientTape(persistent=True) as tape:
        masked = tf.reduce_sum(layer(x, mask=mask))
        truncated = tf.reduce_sum(layer(x[:, :4]))
    for a, b in zip(tape.gradient(masked, layer.trainable_variables),
                    tape.gradient(truncated, layer.trainable_variables)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_masking_layer_makes_a_mask_and_zeroes_masked_steps():
    x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0], [0.0, 0.0]]], np.float32)
    masking = L.Masking(mask_value=0.0)
    y = masking(x)
    np.testing.assert_array_equal(_mask_of(y).numpy(), [[True, False, True, False]])
    np.testing.assert_array_equal(y.numpy(), x)
    x2 = x + 5.0
    y2 = L.Masking(mask_value=5.0)(x2)
    np.testing.assert_array_equal(_mask_of(y2).numpy(), [[True, False, True, False]])
    np.testing.assert_array_equal(y2.numpy()[0, 1], [0.0, 0.0])  # masked steps are zeroed, as Keras
    gru = _rnn("GRU")
    np.testing.assert_allclose(gru(masking(x)).numpy(), gru(x[:, [0, 2]]).numpy(), rtol=1e-5, atol=1e-6)


def test_masks_pass_through_layers_that_support_them_and_stop_where_keras_stops():
    ids = tf.constant([[1, 2, 0]])
    h = L.Embedding(5, 4, mask_zero=True)(ids)
    want = [[True, True, False]]
    for layer in (L.Dense(4), L.Dropout(0.5), L.Activation("relu"), L.LayerNormalization()):
        h = layer(h, training=True)
        np.testing.assert_array_equal(_mask_of(h).numpy(), want, err_msg=type(layer).__name__)
    seq = L.LSTM(3, return_sequences=True)(h)
    np.testing.assert_array_equal(_mask_of(seq).numpy(), want)
    assert _mask_of(L.GRU(3)(h)) is None  # the last output is not a sequence: no mask
    out, hs, cs = L.LSTM(3, return_sequences=True, return_state=True)(h)
    assert _mask_of(out) is not None and _mask_of(hs) is None and _mask_of(cs) is None
    # a Sequential passes masks between its layers
    model = tf.keras.Sequential([L.Embedding(5, 4, mask_zero=True), L.LSTM(3, return_sequences=True), L.Dense(2)])
    np.testing.assert_array_equal(_mask_of(model(ids)).numpy(), want)


class _Custom(L.Layer):
    def call(self, x):
        return x * 2.0


class _TakesMask(L.Layer):
    def call(self, x, mask=None):
        self.seen = mask
        return x * 1.0


@pytest.mark.parametrize("make", [L.Flatten, lambda: L.Reshape((12,)), lambda: L.Lambda(lambda t: t), _Custom],
                         ids=["Flatten", "Reshape", "Lambda", "custom"])
def test_a_layer_that_cannot_use_a_mask_raises(make):
    h = L.Embedding(5, 4, mask_zero=True)(tf.constant([[1, 2, 0]]))
    layer = make()
    with pytest.raises(TypeError, match=f'layer "{layer.name}" .*does not support masking'):
        layer(h)
    # without a mask the same layer runs
    layer(L.Embedding(5, 4)(tf.constant([[1, 2, 0]])))


def test_a_layer_whose_call_takes_mask_receives_it():
    h = L.Embedding(5, 4, mask_zero=True)(tf.constant([[1, 2, 0]]))
    layer = _TakesMask()
    out = layer(h)
    np.testing.assert_array_equal(layer.seen.numpy(), [[True, True, False]])
    assert _mask_of(out) is None  # it used the mask; it does not pass one on unless it says so
    explicit = tf.constant([[True, False, False]])
    layer(h, mask=explicit)
    np.testing.assert_array_equal(layer.seen.numpy(), [[True, False, False]])


def test_bad_mask_shape_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"mask .* has shape \(2, 3\).*\(2, 4\)"):
        L.LSTM(2)(tf.zeros([2, 4, 3]), mask=tf.ones([2, 3], tf.bool))


def _tagger():
    return tf.keras.Sequential([L.Embedding(8, 4, mask_zero=True), L.LSTM(6, return_sequences=True), L.Dense(3)])


def test_the_loss_of_a_masked_output_averages_over_kept_steps_in_fit_and_evaluate(rng):
    tf.random.set_seed(3)
    ids = np.array([[1, 2, 3, 0, 0], [4, 5, 6, 7, 0], [2, 0, 0, 0, 0]])
    y = rng.integers(0, 3, size=ids.shape)
    model = _tagger()
    model.compile(optimizer=tf.optimizers.SGD(0.1),
                  loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True))
    logits = model.predict(ids, verbose=0)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    per_step = -np.take_along_axis(logp, y[..., None], -1)[..., 0]
    keep = ids != 0
    want = (per_step * keep).sum() / keep.sum()
    assert model.evaluate(ids, y, verbose=0) == pytest.approx(want, rel=1e-5)
    # with sample weights, each kept step weighs its example's weight (Keras's rule)
    sw = np.array([1.0, 0.5, 2.0], np.float32)
    got = model.evaluate(ids, y, sample_weight=sw, verbose=0)
    assert got == pytest.approx((per_step * keep * sw[:, None]).sum() / keep.sum(), rel=1e-5)
    # labels at padded steps do not change training
    y2 = np.where(keep, y, (y + 1) % 3)
    a, b = _tagger(), _tagger()
    b.build((None, 5))
    a.build((None, 5))
    b.set_weights(a.get_weights())
    for m, labels in ((a, y), (b, y2)):
        m.compile(optimizer=tf.optimizers.SGD(0.1), loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True))
        m.fit(ids, labels, epochs=3, batch_size=3, shuffle=False, verbose=0)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", RNNS)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_masked_rnns_equal_keras_from_the_same_weights(name, go_backwards):
    tensorflow = tf_or_none()
    if tensorflow is None:
        pytest.skip("the comparison with Keras needs TensorFlow (the TF-free checks above cover the semantics)")
    keras = tensorflow.keras
    tf.random.set_seed(4)
    ids = np.array([[3, 1, 4, 1, 0, 0], [5, 0, 2, 6, 5, 0], [0, 0, 7, 7, 7, 7]])
    for return_sequences in (False, True):
        ours = [L.Embedding(10, 4, mask_zero=True), _rnn(name, return_sequences=return_sequences,
                                                           go_backwards=go_backwards)]
        out = ours[1](ours[0](ids)).numpy()
        theirs = [keras.layers.Embedding(10, 4, mask_zero=True),
                  getattr(keras.layers, name)(5, return_sequences=return_sequences, go_backwards=go_backwards)]
        ref = theirs[1](theirs[0](ids))
        theirs[0].set_weights(ours[0].get_weights())
        theirs[1].set_weights(ours[1].get_weights())
        ref = np.asarray(theirs[1](theirs[0](ids)))
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_models_pass_masks_through_and_take_a_mask_argument():
    h = L.Embedding(5, 4, mask_zero=True)(tf.constant([[1, 2, 0]]))
    seq = tf.keras.Sequential([L.LSTM(3, return_sequences=True)])
    np.testing.assert_array_equal(_mask_of(seq(h)).numpy(), [[True, True, False]])  # the input's mask
    given = tf.constant([[True, False, False]])
    x = tf.random.normal([1, 3, 4], seed=5)
    np.testing.assert_array_equal(_mask_of(seq(x, mask=given)).numpy(), given.numpy())  # to its first layer
    with pytest.raises(TypeError, match='layer "flatten"'):
        tf.keras.Sequential([L.Flatten()])(x, mask=given)

    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.rnn = L.GRU(2, return_sequences=True)

        def call(self, inputs):
            return self.rnn(inputs)

    sub = Sub()
    np.testing.assert_array_equal(_mask_of(sub(h)).numpy(), [[True, True, False]])  # its layers read the mask
    with pytest.raises(TypeError, match=r'layer "sub" \(Sub\) does not support masking'):
        sub(x, mask=given)  # a mask given to a model whose call cannot take one is not dropped


def test_global_average_pooling_1d_averages_the_kept_steps(rng):
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 1, 0, 0, 0], [1, 0, 1, 1, 1]], bool)
    pool = L.GlobalAveragePooling1D()
    np.testing.assert_allclose(pool(x).numpy(), x.mean(1), rtol=1e-5)
    got = pool(x, mask=mask).numpy()
    np.testing.assert_allclose(got, [x[i, mask[i]].mean(0) for i in range(2)], rtol=1e-5, atol=1e-6)
    assert L.GlobalAveragePooling1D(keepdims=True)(x, mask=mask).shape == (2, 1, 3)
    # the text-classifier pattern: Embedding(mask_zero) -> pooling ignores the padding
    tf.random.set_seed(6)
    emb = L.Embedding(10, 4, mask_zero=True)
    ids = np.array([[3, 5, 0, 0]])
    np.testing.assert_allclose(pool(emb(ids)).numpy(), pool(emb(ids[:, :2])).numpy(), rtol=1e-6)
    assert _mask_of(pool(emb(ids))) is None
    tensorflow = tf_or_none()
    if tensorflow is not None:
        ref = tensorflow.keras.layers.GlobalAveragePooling1D()(x, mask=mask)
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-5, atol=1e-6)


def test_batch_normalization_takes_its_training_statistics_over_kept_steps(rng):
    x = rng.normal(2.0, 3.0, size=(2, 4, 3)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0], [1, 0, 0, 0]], bool)
    x[~mask] = 1000.0  # padding that would dominate unmasked statistics
    bn = L.BatchNormalization(momentum=0.0)
    y = bn(x, mask=mask, training=True).numpy()
    kept = x[mask]
    mean, var = kept.mean(0), kept.var(0)
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), var, rtol=1e-4)
    np.testing.assert_allclose(y[mask], (kept - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        kb = tensorflow.keras.layers.BatchNormalization(momentum=0.0)
        ref = np.asarray(kb(x, mask=mask, training=True))
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(bn.moving_variance.numpy(), kb.moving_variance.numpy(), rtol=1e-4)
    h = L.Embedding(5, 3, mask_zero=True)(tf.constant([[1, 2, 0]]))
    np.testing.assert_array_equal(_mask_of(bn(h, training=True)).numpy(), [[True, True, False]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one axis less"):
        bn(x, mask=tf.ones([2], tf.bool))
