"""Core's nn ops: values against NumPy, numerical edge cases, gradients through the tape, bad input."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.testing import np_log_softmax, np_softmax
from tapeflow.core.testing import raises_invalid_argument as _raises


# ---- softmax / log_softmax ------------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_log_softmax_match_numpy(rng, axis, dtype):
    x = rng.normal(size=(3, 4, 5)).astype(dtype) * 4
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tf.nn.softmax(x, axis=axis).numpy(), np_softmax(x.astype(np.float64), axis), **tol)
    np.testing.assert_allclose(tf.nn.log_softmax(x, axis=axis).numpy(), np_log_softmax(x.astype(np.float64), axis),
                               **tol)


def test_softmax_rows_sum_to_one_on_the_threaded_path(rng):
    x = rng.normal(size=(512, 1000)).astype(np.float32) * 10  # > the parallel threshold
    y = tf.nn.softmax(x).numpy()
    np.testing.assert_allclose(y.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(y, np_softmax(x.astype(np.float64)), rtol=2e-5, atol=1e-7)


def test_softmax_is_stable_for_huge_logits_and_masks_minus_inf():
    y = tf.nn.softmax(tf.constant([[1000.0, 1000.0], [-1000.0, 0.0]])).numpy()
    np.testing.assert_allclose(y, [[0.5, 0.5], [0.0, 1.0]])
    m = tf.nn.softmax(tf.constant([0.0, -np.inf, 0.0])).numpy()
    np.testing.assert_array_equal(m, [0.5, 0.0, 0.5])
    ls = tf.nn.log_softmax(tf.constant([1e4, 0.0])).numpy()
    assert ls[0] == 0.0 and ls[1] == -1e4


def test_softmax_nan_rows_are_nan_and_other_rows_are_not():
    y = tf.nn.softmax(tf.constant([[np.nan, 1.0], [1.0, 2.0], [np.inf, 1.0]])).numpy()
    assert np.isnan(y[0]).all() and np.isnan(y[2]).all()
    assert np.isfinite(y[1]).all()


def test_softmax_half_precision_and_size_zero():
    y = tf.nn.softmax(tf.constant([1.0, 2.0, 3.0], dtype=tf.float16))
    assert y.dtype == tf.float16
    np.testing.assert_allclose(y.numpy().astype(np.float64), np_softmax(np.array([1.0, 2.0, 3.0])), rtol=1e-3)
    assert tf.nn.softmax(tf.zeros([0, 3])).shape == (0, 3)
    assert tf.nn.log_softmax(tf.zeros([3, 0])).shape == (3, 0)


def test_softmax_bad_input():
    _raises(r"logits has dtype int32; allowed: .*float32.* \[Op:Softmax\]", tf.nn.softmax, [1, 2])
    _raises(r"axis 2 is out of range for a tensor of rank 2; allowed: \[-2, 2\) \[Op:Softmax\]",
            tf.nn.softmax, tf.zeros([2, 3]), axis=2)
    _raises(r"logits must have rank >= 1, got a scalar \(shape \(\)\) \[Op:LogSoftmax\]", tf.nn.log_softmax, 1.0)


# ---- softmax cross-entropy --------------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_xent_matches_numpy(rng, axis):
    logits = rng.normal(size=(6, 5)) * 3
    labels = np_softmax(rng.normal(size=(6, 5)), axis)
    got = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=axis)
    want = -(labels * np_log_softmax(logits, axis)).sum(axis)
    assert got.shape == want.shape and got.dtype == tf.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_softmax_xent_the_seed_loss_function(rng):
    # seed 000: loss_function(model, x, y) = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=y_)
    y_ = tf.constant(rng.normal(size=(1, 1, 10)).astype(np.float32))
    y = tf.one_hot([[3]], 10) if hasattr(tf, "one_hot") else tf.constant(np.eye(10, dtype=np.float32)[[[3]]])
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=y_)
    assert loss.shape == (1, 1)
    np.testing.assert_allclose(loss.numpy()[0, 0], -np_log_softmax(y_.numpy()[0, 0].astype(np.float64))[3],
                               rtol=1e-5)


def test_softmax_xent_zero_label_with_minus_inf_logit_is_finite():
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=[[1.0, 0.0]], logits=[[0.0, -np.inf]])
    assert loss.numpy().tolist() == [0.0]


def test_softmax_xent_bad_input():
    op = r"\[Op:SoftmaxCrossEntropyWithLogits\]"
    _raises(r"labels and logits must have the same shape, got labels \(2, 3\) and logits \(2, 4\) " + op,
            tf.nn.softmax_cross_entropy_with_logits, tf.zeros([2, 3]), tf.zeros([2, 4]))
    _raises(r"labels has dtype float64 but logits has dtype float32; they must match \(use tf.cast\) " + op,
            tf.nn.softmax_cross_entropy_with_logits, tf.zeros([2], tf.float64), tf.zeros([2]))
    _raises(r"logits has dtype int32; allowed", tf.nn.softmax_cross_entropy_with_logits, [[1, 0]], [[1, 2]])
    _raises(r"axis -3 is out of range for a tensor of rank 2", tf.nn.softmax_cross_entropy_with_logits,
            tf.zeros([2, 3]), tf.zeros([2, 3]), axis=-3)
    _raises(r"logits must have rank >= 1", tf.nn.softmax_cross_entropy_with_logits, 1.0, 1.0)


# ---- sparse softmax cross-entropy ----------------------------------------------------------

@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_matches_numpy(rng, label_dtype):
    logits = rng.normal(size=(2, 3, 5)).astype(np.float32) * 3
    labels = rng.integers(0, 5, size=(2, 3)).astype(label_dtype)
    got = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    want = -np.take_along_axis(np_log_softmax(logits.astype(np.float64)), labels[..., None].astype(np.int64), -1)[
        ..., 0]
    assert got.shape == (2, 3) and got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_sparse_xent_bad_input():
    op = r"\[Op:SparseSoftmaxCrossEntropyWithLogits\]"
    _raises(r"labels has dtype float32; allowed: int32, int64 " + op,
            tf.nn.sparse_softmax_cross_entropy_with_logits, [1.0], tf.zeros([1, 3]))
    _raises(r"labels must have the shape of logits without its last dimension: labels \(3,\), logits \(2, 5\) "
            r"\(expected labels \(2,\)\) " + op, tf.nn.sparse_softmax_cross_entropy_with_logits, [0, 1, 2],
            tf.zeros([2, 5]))
    _raises(r"logits has dtype int64; allowed", tf.nn.sparse_softmax_cross_entropy_with_logits, [0],
            tf.constant([[1, 2]], tf.int64))
    _raises(r"logits must have rank >= 1", tf.nn.sparse_softmax_cross_entropy_with_logits, 0, 1.0)


# ---- sigmoid cross-entropy -------------------------------------------------------------------

def test_sigmoid_xent_matches_numpy_and_is_stable(rng):
    x = np.concatenate([rng.normal(size=20) * 5, [-200.0, 200.0, 0.0]])
    z = rng.uniform(size=x.shape)
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x).numpy()
    want = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sigmoid_xent_bad_input():
    op = r"\[Op:SigmoidCrossEntropyWithLogits\]"
    _raises(r"labels and logits must have the same shape, got labels \(2,\) and logits \(3,\) " + op,
            tf.nn.sigmoid_cross_entropy_with_logits, labels=[0.0, 1.0], logits=[0.0, 0.0, 0.0])
    _raises(r"both labels and logits must be given", tf.nn.sigmoid_cross_entropy_with_logits, logits=[0.0])
    _raises(r"labels has dtype float64 but logits has dtype float32", tf.nn.sigmoid_cross_entropy_with_logits,
            labels=tf.zeros([1], tf.float64), logits=tf.zeros([1]))


# ---- bias_add ------------------------------------------------------------------------------------

def test_bias_add_formats(rng):
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    b5, b3 = rng.normal(size=5).astype(np.float32), rng.normal(size=3).astype(np.float32)
    np.testing.assert_allclose(tf.nn.bias_add(x, b5).numpy(), x + b5)
    np.testing.assert_allclose(tf.nn.bias_add(x, b3, data_format="NCHW").numpy(), x + b3[:, None, None])
    np.testing.assert_allclose(tf.nn.bias_add(x, b5, data_format="N...C").numpy(), x + b5)


def test_bias_add_bad_input():
    op = r"\[Op:BiasAdd\]"
    _raises(r"bias has 4 values but value has 3 channels on axis 1 \(shape \(2, 3\), data_format 'NHWC'\) " + op,
            tf.nn.bias_add, tf.zeros([2, 3]), tf.zeros([4]))
    _raises(r"bias must be 1-D, got shape \(1, 3\) " + op, tf.nn.bias_add, tf.zeros([2, 3]), tf.zeros([1, 3]))
    _raises(r"value must have rank >= 2, got shape \(3,\) " + op, tf.nn.bias_add, tf.zeros([3]), tf.zeros([3]))
    _raises(r"data_format must put C last .* got 'HWCN' " + op, tf.nn.bias_add, tf.zeros([2, 3]), tf.zeros([3]),
            data_format="HWCN")
    _raises(r"bias has dtype float64 but value has dtype float32", tf.nn.bias_add, tf.zeros([2, 3]),
            tf.zeros([3], tf.float64))


# ---- dropout ---------------------------------------------------------------------------------------

def test_dropout_keeps_and_scales():
    y = tf.nn.dropout(tf.ones([100_000]), rate=0.3, seed=5).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], np.float32(1 / 0.7))
    assert abs(y.mean() - 1) < 0.02  # expectation preserved


def test_dropout_rate_zero_returns_x_itself():
    x = tf.constant([1.0, 2.0])
    assert tf.nn.dropout(x, 0.0) is x


def test_dropout_noise_shape_shares_decisions():
    y = tf.nn.dropout(tf.ones([50, 8]), rate=0.5, noise_shape=[1, 8], seed=2).numpy()
    assert (y == y[0]).all()  # one decision per column, the same in every row
    assert set(np.unique(y).tolist()) <= {0.0, 2.0}


def test_dropout_is_reproducible_under_a_seed_and_fresh_without():
    tf.random.set_seed(3)
    a = tf.nn.dropout(tf.ones([64]), 0.5, seed=1).numpy()
    tf.random.set_seed(3)
    b = tf.nn.dropout(tf.ones([64]), 0.5, seed=1).numpy()
    tf.random.set_seed(None)
    np.testing.assert_array_equal(a, b)
    c, d = tf.nn.dropout(tf.ones([64]), 0.5).numpy(), tf.nn.dropout(tf.ones([64]), 0.5).numpy()
    assert not np.array_equal(c, d)


def test_dropout_half_precision():
    y = tf.nn.dropout(tf.ones([1000], tf.float16), 0.5, seed=1)
    assert y.dtype == tf.float16 and set(np.unique(y.numpy()).tolist()) == {0.0, 2.0}


def test_dropout_bad_input():
    op = r"\[Op:Dropout\]"
    for rate in (1.0, -0.1, 1.5):
        _raises(rf"rate must be in \[0, 1\), got {rate} " + op, tf.nn.dropout, tf.ones([2]), rate)
    _raises(r"rate must be a number in \[0, 1\), got 'a'", tf.nn.dropout, tf.ones([2]), "a")
    _raises(r"x has dtype int32; allowed", tf.nn.dropout, [1, 2], 0.5)
    _raises(r"noise_shape \[3\] does not broadcast to x's shape \(2,\)|incompatible shapes", tf.nn.dropout,
            tf.ones([2]), 0.5, noise_shape=[3])
    _raises(r"noise_shape \[2, 2\] does not broadcast to x's shape \(2,\)", tf.nn.dropout, tf.ones([2]), 0.5,
            noise_shape=[2, 2])


# ---- normalisation ----------------------------------------------------------------------------------

def test_l2_normalize(rng):
    x = rng.normal(size=(3, 4))
    y = tf.nn.l2_normalize(x, axis=1).numpy()
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1)
    np.testing.assert_allclose(tf.math.l2_normalize(x).numpy(), x / np.linalg.norm(x))
    assert tf.nn.l2_normalize(tf.zeros([2, 2]), axis=0).numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert np.isfinite(tf.nn.l2_normalize(tf.zeros([2], tf.float16)).numpy()).all()
    _raises(r"axis 2 is out of range .* \[Op:L2Normalize\]", tf.nn.l2_normalize, tf.zeros([2, 2]), axis=2)


def test_moments(rng):
    x = rng.normal(size=(4, 3, 2))
    m, v = tf.nn.moments(x, axes=[0, 1])
    np.testing.assert_allclose(m.numpy(), x.mean((0, 1)))
    np.testing.assert_allclose(v.numpy(), x.var((0, 1)))
    mk, vk = tf.nn.moments(x, axes=[1], keepdims=True)
    assert mk.shape == (4, 1, 2) and vk.shape == (4, 1, 2)
    _raises(r"axis 3 is out of range .* \[Op:Moments\]", tf.nn.moments, x, axes=[3])
    _raises(r"x has dtype int32; allowed", tf.nn.moments, [1, 2], axes=[0])


def test_batch_normalization(rng):
    x = rng.normal(size=(5, 3))
    mean, var = x.mean(0), x.var(0)
    off, sc = rng.normal(size=3), rng.normal(size=3)
    got = tf.nn.batch_normalization(x, mean, var, off, sc, 1e-3).numpy()
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3) * sc + off, rtol=1e-12)
    _raises(r"scale has dtype float32 but x has dtype float64; they must match \[Op:BatchNormalization\]",
            tf.nn.batch_normalization, x, mean, var, off, tf.ones([3]), 1e-3)
    _raises(r"incompatible shapes: \(5, 3\) vs. \(4,\)", tf.nn.batch_normalization, x, np.zeros(4), var, None, None,
            1e-3)


def test_nn_names_on_the_facade():
    for name in ("softmax", "log_softmax", "softmax_cross_entropy_with_logits",
                 "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits", "bias_add",
                 "dropout", "l2_normalize", "moments", "batch_normalization", "relu", "sigmoid"):
        assert callable(getattr(tf.nn, name)), name
    assert tf.math.softmax is tf.nn.softmax


# ---- gelu, sigmoid and silu in ulps against float64 references (issue 10, item 11) ------------------------

def _ulps(got, want, dtype):
    """|got - want| in units of the last place of want in dtype (want computed in float64 or better)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    spacing = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    return np.abs(got - want) / spacing


def _gelu_decimal(v):
    """v / 2 * erfc(-v / sqrt 2) from erf's Taylor series in 100-digit decimals (independent of libm)."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 100
        d = decimal.Decimal(v)
        z = -d / decimal.Decimal(2).sqrt()
        term, total, n = z, z, 0
        while abs(term) > decimal.Decimal(10) ** -90 * (1 + abs(total)):
            n += 1
            term = -term * z * z / n
            total += term / (2 * n + 1)
        pi = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")
        return float(d / 2 * (1 - 2 / pi.sqrt() * total))


def test_gelu_exact_form_is_accurate_in_the_tails_float64():
    x = np.array([-10.0, -9.0, -8.0, -6.5, -5.0, -4.0, -2.7, -1.5, -0.3, -1e-5, 1e-5, 0.7, 2.0, 4.5, 8.0])
    want = np.array([_gelu_decimal(v) for v in x])
    got = tf.nn.gelu(x).numpy()
    assert got[0] == pytest.approx(-7.619853024160527e-23, rel=1e-15)   # not -0.0 (1 + erf cancels)
    assert _ulps(got, want, np.float64).max() <= 4, (x, _ulps(got, want, np.float64))


def test_gelu_exact_form_float32_is_correctly_rounded_or_next():
    x = np.linspace(-12, 6, 181).astype(np.float32)
    want = np.array([_gelu_decimal(float(v)) for v in x])
    got = tf.nn.gelu(x).numpy()
    normal = np.abs(want) >= np.finfo(np.float32).tiny
    assert _ulps(got[normal], want[normal], np.float32).max() <= 1
    assert (got[~normal] == 0).all()   # subnormal results flush to zero (the default, as in TensorFlow)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_approximate_is_tensorflows_tanh_form(dtype):
    x = np.linspace(-8, 8, 161).astype(dtype)
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * (1 + np.tanh(0.7978845608028654 * (x64 + 0.044715 * x64 ** 3)))
    got = tf.nn.gelu(x, approximate=True).numpy()
    assert got.dtype == dtype
    # 1 + tanh(u) cancels for x << 0 in any evaluation of this form: errors are relative to |x|
    eps = np.finfo(dtype).eps
    assert (np.abs(got - want) <= 4 * eps * (np.abs(want) + np.abs(x64))).all()
    exact = tf.nn.gelu(x, approximate=False).numpy()
    assert np.abs(exact - got).max() > 1e-4   # the two forms differ: the keyword is honoured
    with pytest.raises(TypeError, match=r"approximate must be a bool.*\[Op:Gelu\]"):
        tf.nn.gelu(x, approximate="yes")


def test_sigmoid_and_silu_float32_in_the_far_negative_tail():
    # [-104, -88.7]: e**-x overflows float32, so 1 / (1 + e**-x) gave 0; silu's normal results
    # (down to x = -92) were lost with it.  Subnormal results flush to 0 (the default), as in TensorFlow.
    x = np.concatenate([np.linspace(-104, -80, 2401), np.linspace(-20, 20, 401)]).astype(np.float32)
    x64 = x.astype(np.float64)
    sig_ref = np.exp(x64) / (1 + np.exp(x64)) * (x64 < 0) + (x64 >= 0) / (1 + np.exp(-x64 * (x64 >= 0)))
    silu_ref = x64 * sig_ref
    tiny = np.finfo(np.float32).tiny
    for got, want, name in ((tf.sigmoid(x).numpy(), sig_ref, "sigmoid"), (tf.nn.silu(x).numpy(), silu_ref, "silu")):
        normal = np.abs(want) >= tiny * 1.0000005   # comfortably normal
        sub = np.abs(want) < tiny
        ulps = _ulps(got[normal], want[normal], np.float32)
        assert ulps.max() <= 4, (name, x[normal][ulps.argmax()], ulps.max())
        assert (got[sub] == 0).all(), name
    assert tf.nn.silu(np.float32(-90.0)).numpy() == pytest.approx(-90.0 * np.exp(-90.0), rel=1e-6)
    assert np.isnan(tf.nn.silu(np.float32(-np.inf)).numpy())   # -inf * sigmoid(-inf), as x * sigmoid(x) gives
    assert tf.sigmoid(np.float32(-np.inf)).numpy() == 0 and tf.sigmoid(np.float32(np.inf)).numpy() == 1


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_cross_entropies_record_once_with_their_backprop_in_the_logits_dtype(dtype):
    from tapeflow.core.dispatch import hooks

    logits = tf.constant([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]], dtype)
    seen = []
    sub = hooks.subscribe(lambda op, inputs, out, attrs: seen.append((op, attrs)))
    try:
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[2, 0], logits=logits)
        dense = tf.nn.softmax_cross_entropy_with_logits(labels=tf.one_hot([2, 0], 3, dtype=dtype), logits=logits)
    finally:
        sub.remove()
    seen = [(op, attrs) for op, attrs in seen if op != "one_hot"]
    assert [op for op, _ in seen] == ["sparse_softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits"]
    want = np.exp([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
    want = want / want.sum(1, keepdims=True) - np.eye(3)[[2, 0]]
    for (_, attrs), out in zip(seen, (loss, dense)):
        assert out.dtype.name == dtype and attrs["backprop"].dtype.name == dtype
        np.testing.assert_allclose(attrs["backprop"].numpy().astype(np.float64), want, atol=2e-3)
