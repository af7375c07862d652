"""The functional API (keras.Input, layers on symbolic tensors, Model(inputs, outputs)), the tapeflow.keras
module tree and the merge layers (against NumPy, and against Keras 3 where TensorFlow is installed)."""
import numpy as np
import pytest
from nn_testutil import tf_or_none

import tapeflow as tf
from tapeflow.nn.functional import keras_history

L = tf.keras.layers


# ---- module tree ------------------------------------------------------------------------------------------

def test_keras_module_tree_imports_like_tensorflow_keras():
    from tapeflow.keras import Input, Model, Sequential  # noqa: F401
    from tapeflow.keras.layers import Concatenate, Dense
    from tapeflow.keras.models import load_model
    from tapeflow.keras.optimizers import Adam
    from tapeflow.keras.saving import register_keras_serializable  # noqa: F401
    import tapeflow.nn as nn

    assert Dense is nn.layers.Dense and Concatenate is nn.layers.Concatenate and Adam is nn.optimizers.Adam
    assert tf.keras.models.load_model is load_model
    for sub in ("layers", "models", "optimizers", "losses", "metrics", "callbacks", "initializers", "regularizers",
                "activations", "utils", "datasets", "mixed_precision", "saving", "backend"):
        assert getattr(tf.keras, sub).__name__ == f"tapeflow.keras.{sub}"


def test_keras_layers_reexports_every_name_of_nn_layers():
    import tapeflow.keras.layers as kl
    import tapeflow.nn.layers as nl

    missing = [n for n in nl.__all__ if getattr(kl, n, None) is not getattr(nl, n)]
    assert not missing, f"tapeflow.keras.layers lacks {missing} (it re-exports tapeflow.nn.layers.__all__)"


def test_keras_modules_pick_up_names_added_later():
    import tapeflow.keras.losses as kl
    import tapeflow.nn.losses as nl

    def late_loss(y_true, y_pred):
        return y_pred

    nl.late_loss = late_loss
    try:
        assert kl.late_loss is late_loss
    finally:
        del nl.late_loss
    with pytest.raises(AttributeError, match="tapeflow.nn.losses"):
        kl.no_such_loss


# ---- Input and symbolic calls ---------------------------------------------------------------------------------

def test_input_is_a_symbolic_tensor_with_unknown_batch():
    x = tf.keras.Input(shape=(28, 28, 1), name="img", dtype="float32")
    assert isinstance(x, tf.Tensor) and tuple(x.shape) == (None, 28, 28, 1) and x.dtype == tf.float32
    layer, ni, ti = keras_history(x)
    assert layer.name == "img" and (ni, ti) == (0, 0)
    assert tuple(tf.keras.Input(batch_shape=(4, 3)).shape) == (4, 3)
    assert tuple(tf.keras.Input(shape=(3,), batch_size=2).shape) == (2, 3)


def test_input_refuses_what_it_cannot_give():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"sparse=True.*allowed.*\[Op:Input\]"):
        tf.keras.Input(shape=(3,), sparse=True)
    with pytest.raises(ValueError, match="shape="):
        tf.keras.Input()


def test_layer_on_symbolic_input_gives_symbolic_output_and_builds():
    x = tf.keras.Input(shape=(4,))
    d = L.Dense(16, activation="relu")
    y = d(x)
    assert tuple(y.shape) == (None, 16) and d.built and tuple(d.kernel.shape) == (4, 16)
    assert keras_history(y)[0] is d
    # the weights have values (built eagerly, not traced)
    assert np.isfinite(d.kernel.numpy()).all()


def test_unknown_batch_stays_unknown_through_layers():
    x = tf.keras.Input(shape=(4, 4, 3))
    flat = L.Flatten()(x)
    seq = tf.keras.Input(shape=(5, 3))
    rnn = L.LSTM(2, return_sequences=True)(seq)

    class LazyScale(L.Layer):  # makes its weight inside call (as attention layers do), not in build
        def call(self, x):
            if not hasattr(self, "w"):
                self.w = self.add_weight("w", (x.shape[-1],), initializer="ones")
            return x * self.w

    att = LazyScale()(seq)
    assert tuple(flat.shape) == (None, 48) and tuple(rnn.shape) == (None, 5, 2) and tuple(att.shape) == (None, 5, 3)
    model = tf.keras.Model([x, seq], [L.Dense(1)(flat), rnn, att])
    out = model([np.ones((2, 4, 4, 3), np.float32), np.ones((2, 5, 3), np.float32)])
    assert [tuple(o.shape) for o in out] == [(2, 1), (2, 5, 2), (2, 5, 3)]


def test_layer_called_on_a_layer_says_what_it_expected():
    with pytest.raises(TypeError, match=r'layer "dense" \(Dense\) was called on an object of type InputLayer.*'
                                        r"allowed: a tensor.*tf.keras.Input"):
        L.Dense(16)(L.InputLayer(input_shape=(3,)))


def test_symbolic_shape_errors_name_the_layer():
    x = tf.keras.Input(shape=(4,))
    d = L.Dense(2)
    d(x)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r'layer "dense".*axis -1.*value 4'):
        d(tf.keras.Input(shape=(5,)))


# ---- Model(inputs, outputs) ----------------------------------------------------------------------------

def _mlp():
    x = tf.keras.Input(shape=(3,), name="x")
    h = L.Dense(4, activation="tanh", name="h")(x)
    return x, L.Dense(2, name="out")(h)


def test_functional_model_runs_the_layers_on_data():
    x, y = _mlp()
    model = tf.keras.Model(x, y)
    assert type(model).__name__ == "Functional"
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    h, o = model.get_layer("h"), model.get_layer("out")
    want = np.tanh(data @ h.kernel.numpy() + h.bias.numpy()) @ o.kernel.numpy() + o.bias.numpy()
    np.testing.assert_allclose(model(data).numpy(), want, rtol=1e-5, atol=1e-6)
    assert [layer.name for layer in model.layers] == ["x", "h", "out"]
    assert model.inputs[0] is x and model.outputs[0] is y
    assert model.get_layer(index=1) is h
    with pytest.raises(ValueError, match="no layer named 'nope'.*'h'"):
        model.get_layer("nope")


def test_multiple_inputs_and_outputs_lists_and_dicts():
    a = tf.keras.Input(shape=(2,), name="a")
    b = tf.keras.Input(shape=(3,), name="b")
    merged = L.Concatenate()([a, b])
    s = L.Dense(1, name="s")(merged)
    t = L.Dense(2, name="t")(b)
    model = tf.keras.Model(inputs={"a": a, "b": b}, outputs={"s": s, "t": t})
    xa, xb = np.ones((5, 2), np.float32), np.full((5, 3), 2.0, np.float32)
    out = model({"a": xa, "b": xb})
    assert set(out) == {"s", "t"} and tuple(out["s"].shape) == (5, 1) and tuple(out["t"].shape) == (5, 2)
    sl = model.get_layer("s")
    np.testing.assert_allclose(out["s"].numpy(), np.concatenate([xa, xb], 1) @ sl.kernel.numpy() + sl.bias.numpy(),
                               rtol=1e-5)
    listed = tf.keras.Model([a, b], [s, t])
    o1, o2 = listed([xa, xb])
    np.testing.assert_allclose(o1.numpy(), out["s"].numpy())
    # a list-input model also takes a dict keyed by the inputs' names (as Keras)
    np.testing.assert_allclose(listed({"a": xa, "b": xb})[1].numpy(), out["t"].numpy())
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"without input\(s\) \['b'\]"):
        model({"a": xa})


def test_shared_layers_and_nested_models():
    shared = L.Dense(3, name="shared")
    inner_in = tf.keras.Input(shape=(3,))
    inner = tf.keras.Model(inner_in, L.Dense(2, name="head")(inner_in), name="inner")
    a, b = tf.keras.Input(shape=(4,)), tf.keras.Input(shape=(4,))
    out = L.Subtract()([inner(shared(a)), inner(shared(b))])
    model = tf.keras.Model([a, b], out)
    assert len(model.trainable_variables) == 4  # shared (kernel, bias) and the inner head, once each
    xa = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)
    xb = np.random.default_rng(1).normal(size=(2, 4)).astype(np.float32)
    want = inner(shared(xa)).numpy() - inner(shared(xb)).numpy()
    np.testing.assert_allclose(model([xa, xb]).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model([xa, xa]).numpy(), 0.0, atol=1e-6)


def test_subclass_calling_super_init_with_inputs_outputs():
    class Net(tf.keras.Model):
        def __init__(self):
            x = tf.keras.Input(shape=(2,))
            super().__init__(x, L.Dense(1, kernel_initializer="ones")(x))

    net = Net()
    assert isinstance(net, Net) and net(np.ones((3, 2), np.float32)).numpy().ravel().tolist() == [2.0, 2.0, 2.0]


def test_training_flag_reaches_layers():
    x = tf.keras.Input(shape=(100,))
    model = tf.keras.Model(x, L.Dropout(0.5, seed=1)(x))
    data = np.ones((4, 100), np.float32)
    assert (model(data, training=False).numpy() == 1).all()
    dropped = model(data, training=True).numpy()
    assert (dropped == 0).any() and set(np.unique(dropped)) <= {0.0, 2.0}


def test_masks_flow_through_the_graph():
    ids = tf.keras.Input(shape=(4,), dtype="int32")
    emb = L.Embedding(10, 3, mask_zero=True)
    seq = emb(ids)
    pooled = L.GlobalAveragePooling1D()(seq)
    model = tf.keras.Model(ids, pooled)
    data = np.array([[1, 2, 0, 0]], np.int32)
    table = emb.embeddings.numpy()
    np.testing.assert_allclose(model(data).numpy(), table[[1, 2]].mean(0, keepdims=True), rtol=1e-5)


def test_functional_model_fits_evaluates_predicts():
    tf.random.set_seed(3)
    x = tf.keras.Input(shape=(2,))
    model = tf.keras.Model(x, L.Dense(1)(L.Dense(8, activation="relu")(x)))
    model.compile(optimizer=tf.optimizers.Adam(0.05), loss="mse")
    data = np.random.default_rng(0).uniform(-1, 1, size=(64, 2)).astype(np.float32)
    target = data.sum(1, keepdims=True)
    first = model.evaluate(data, target, verbose=0)
    model.fit(data, target, epochs=40, batch_size=16, verbose=0, shuffle=False)
    assert model.evaluate(data, target, verbose=0) < first / 10
    assert model.predict(data, verbose=0).shape == (64, 1)


def _two_heads(lib):
    a = lib.keras.Input(shape=(3,), name="a")
    h = lib.keras.layers.Dense(4, activation="tanh", name="h")(a)
    return lib.keras.Model(a, {"y1": lib.keras.layers.Dense(1, name="y1")(h),
                               "y2": lib.keras.layers.Dense(2, name="y2")(h)})


def test_several_outputs_train_with_a_loss_and_metrics_per_output():
    model = _two_heads(tf)
    model.compile(optimizer=tf.optimizers.SGD(0.1), loss={"y1": "mse", "y2": "mae"},
                  loss_weights={"y1": 1.0, "y2": 0.5}, metrics={"y1": ["mae"], "y2": ["mse"]})
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = {"y1": x[:, :1] * 2, "y2": np.tanh(x[:, 1:])}
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "y1_loss", "y1_mae", "y2_loss", "y2_mse"]  # Keras 3's names and order
    pred = {k: v.numpy() for k, v in model(x).items()}
    assert set(model.predict_on_batch(x)) == {"y1", "y2"}
    np.testing.assert_allclose(logs["y1_loss"], np.mean((pred["y1"] - y["y1"]) ** 2), rtol=1e-5)
    np.testing.assert_allclose(logs["y2_loss"], np.mean(np.abs(pred["y2"] - y["y2"])), rtol=1e-5)
    np.testing.assert_allclose(logs["y2_mse"], np.mean((pred["y2"] - y["y2"]) ** 2), rtol=1e-5)
    np.testing.assert_allclose(logs["loss"], logs["y1_loss"] + 0.5 * logs["y2_loss"], rtol=1e-5)
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0, shuffle=False).history
    assert history["y1_loss"][-1] < history["y1_loss"][0] / 2 and history["loss"][-1] < history["loss"][0]
    # lists: by position; one loss for every output; a flat metric list is ambiguous (as Keras 3)
    listed = tf.keras.Model(model.inputs, [model.get_layer("y1").output, model.get_layer("y2").output])
    listed.compile(optimizer="sgd", loss="mse", metrics=[["mae"], []])
    assert list(listed.evaluate(x, [y["y1"], y["y2"]], verbose=0, return_dict=True)) == \
        ["loss", "y1_loss", "y1_mae", "y2_loss"]
    with pytest.raises(ValueError, match="one list of metrics per output"):
        listed.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    with pytest.raises(ValueError, match=r"names output\(s\) \['nope'\]"):
        model.compile(optimizer="sgd", loss={"nope": "mse"})


def test_several_outputs_match_keras():
    ktf = tf_or_none()
    if ktf is None:
        return  # the NumPy references of the test above cover the formulas
    x = np.random.default_rng(1).normal(size=(8, 3)).astype(np.float32)
    y = {"y1": x[:, :1], "y2": x[:, 1:]}
    km, tm = _two_heads(ktf), _two_heads(tf)
    tm.set_weights(km.get_weights())
    args = dict(loss={"y1": "mse", "y2": "mae"}, loss_weights={"y1": 0.3, "y2": 2.0}, metrics={"y1": ["mae"]})
    km.compile(optimizer=ktf.keras.optimizers.SGD(0.05), **args)
    tm.compile(optimizer=tf.optimizers.SGD(0.05), **args)
    kh = km.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False).history
    th = tm.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False).history
    assert list(th) == list(kh)
    for k in kh:
        np.testing.assert_allclose(th[k], kh[k], rtol=1e-4, atol=1e-6)


def test_summary_has_connected_to_column():
    a = tf.keras.Input(shape=(3,), name="a")
    b = tf.keras.Input(shape=(3,), name="b")
    model = tf.keras.Model([a, b], L.Add(name="sum")([L.Dense(2, name="d1")(a), L.Dense(2, name="d2")(b)]))
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "Connected to" in lines[2] and "Param #" in lines[2]
    row = next(line for line in lines if line.startswith(" sum (Add)"))
    assert "d1[0][0]" in row and "(None, 2)" in row
    assert any(line.strip() == "d2[0][0]" for line in lines)
    assert "Total params: 16" in text


def test_summary_wraps_long_names_inside_their_column():
    x = tf.keras.Input(shape=(3,), name="x")
    long = "a_dense_layer_with_a_name_longer_than_its_column"
    model = tf.keras.Model(x, L.Dense(2, name=long)(x))
    lines = []
    model.summary(print_fn=lines.append)
    body = lines[4:lines.index("=" * 92, 4)]
    assert all(len(line) < 30 or line[29] == " " for line in body)  # the name column (30 wide) keeps its gap
    name_part = "".join(line[1:29].rstrip() for line in body[1:])
    assert long in name_part and "(Dense)" in name_part


def test_layer_output_makes_a_feature_model():
    x = tf.keras.Input(shape=(3,))
    hidden = L.Dense(4, activation="relu", name="hidden")
    model = tf.keras.Model(x, L.Dense(1)(hidden(x)))
    features = tf.keras.Model(model.input, model.get_layer("hidden").output)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(features(data).numpy(), hidden(data).numpy())
    assert hidden.input is x
    with pytest.raises(AttributeError, match="never been called on a symbolic input"):
        L.Dense(2).output


def test_sequential_has_symbolic_inputs_and_outputs():
    seq = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(3, name="h"), L.Dense(1)])
    assert tuple(seq.inputs[0].shape) == (None, 4) and tuple(seq.outputs[0].shape) == (None, 1)
    trunk = tf.keras.Model(seq.inputs, seq.get_layer("h").output)
    assert tuple(trunk(np.ones((2, 4), np.float32)).shape) == (2, 3)
    seq.add(L.Dense(5))
    assert tuple(seq.output.shape) == (None, 5)
    assert tuple(tf.keras.Sequential([L.Dense(2, input_shape=(6,))]).input.shape) == (None, 6)
    with pytest.raises(AttributeError, match="no defined inputs yet"):
        tf.keras.Sequential([L.Dense(2)]).inputs


def test_sequential_takes_keras_input_first():
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(2)])
    assert model.built and model.count_params() == 10


def test_model_inputs_must_be_symbolic():
    with pytest.raises(TypeError, match="symbolic tensors from tf.keras.Input"):
        tf.keras.Model(tf.ones([1, 2]), tf.ones([1, 2]))
    x = tf.keras.Input(shape=(2,))
    other = tf.keras.Input(shape=(2,), name="other")
    with pytest.raises(ValueError, match="'other'.*not among the model's inputs"):
        tf.keras.Model(x, L.Add()([x, other]))


def test_get_weights_in_keras_layer_by_layer_order():
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(2), L.BatchNormalization(), L.Dense(1)])
    shapes = [w.shape for w in model.get_weights()]
    assert shapes == [(3, 2), (2,), (2,), (2,), (2,), (2,), (2, 1), (1,)]
    new = [np.full(s, i, np.float32) for i, s in enumerate(shapes)]
    model.set_weights(new)
    bn = model.layers[1]
    assert float(bn.moving_mean.numpy()[0]) == 4.0 and float(model.layers[2].kernel.numpy()[0, 0]) == 6.0


# ---- merge layers ------------------------------------------------------------------------------------------------

def _pair(rng, s1=(3, 4), s2=(3, 4)):
    return rng.normal(size=s1).astype(np.float32), rng.normal(size=s2).astype(np.float32)


MERGES = {
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "Average": lambda a, b: (a + b) / 2,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
}


@pytest.mark.parametrize("name", sorted(MERGES))
def test_elementwise_merges_match_numpy_and_keras(name, rng):
    a, b = _pair(rng)
    got = getattr(L, name)()([a, b]).numpy()
    np.testing.assert_allclose(got, MERGES[name](a, b), rtol=1e-6)
    fn = getattr(L, name.lower())
    np.testing.assert_allclose(fn([a, b]).numpy(), got)
    ktf = tf_or_none()
    if ktf is not None:
        np.testing.assert_allclose(got, getattr(ktf.keras.layers, name)()([a, b]).numpy(), rtol=1e-6)


def test_elementwise_merge_broadcasts_and_aligns_ranks(rng):
    a, b = _pair(rng, (2, 3, 4), (2, 4))
    got = L.Add()([a, b]).numpy()
    np.testing.assert_allclose(got, a + b[:, None, :], rtol=1e-6)
    ktf = tf_or_none()
    if ktf is not None:
        np.testing.assert_allclose(got, ktf.keras.layers.Add()([a, b]).numpy(), rtol=1e-6)
    x = tf.keras.Input(shape=(3, 4))
    assert tuple(L.Add()([x, tf.keras.Input(shape=(1, 4))]).shape) == (None, 3, 4)


def test_merge_shape_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible shapes.*\\(3,\\).*\\(4,\\)"):
        L.Add()([tf.keras.Input(shape=(3,)), tf.keras.Input(shape=(4,))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="exactly 2 inputs"):
        L.Subtract()([tf.ones([1, 2])] * 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="list of inputs"):
        L.Add()(tf.ones([2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="different batch sizes"):
        L.Add()([tf.ones([2, 2]), tf.ones([3, 2])])
    with pytest.raises(tf.errors.InvalidArgumentError, match="matching shapes except for the concatenation axis"):
        L.Concatenate(axis=1)([tf.keras.Input(shape=(2, 3)), tf.keras.Input(shape=(4, 5))])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"axis values 3 \(at axis 1\) != 4 \(at axis 1\)"):
        L.Dot(axes=1)([tf.ones([2, 3]), tf.ones([2, 4])])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not the batch axis"):
        L.Dot(axes=0)([tf.ones([2, 3]), tf.ones([2, 3])])


@pytest.mark.parametrize("axis", [-1, 1, 2])
def test_concatenate_matches_numpy_and_keras(axis, rng):
    a = rng.normal(size=(2, 3, 4)).astype(np.float32)
    b = rng.normal(size=(2, 3, 4)).astype(np.float32)
    got = L.Concatenate(axis=axis)([a, b]).numpy()
    np.testing.assert_allclose(got, np.concatenate([a, b], axis))
    ktf = tf_or_none()
    if ktf is not None:
        np.testing.assert_allclose(got, ktf.keras.layers.Concatenate(axis=axis)([a, b]).numpy())
    x = tf.keras.Input(shape=(3, 4))
    assert tuple(L.concatenate([x, x], axis=axis).shape) == ((None, 6, 4) if axis == 1 else (None, 3, 8))


def _np_batch_dot(x, y, ax, ay):
    out = np.stack([np.tensordot(x[i], y[i], axes=([ax - 1], [ay - 1])) for i in range(x.shape[0])])
    return out[:, None] if out.ndim == 1 else out


@pytest.mark.parametrize("shapes,axes,normalize", [
    (((3, 4), (3, 4)), 1, False),
    (((3, 4), (3, 4)), -1, True),
    (((2, 5, 3), (2, 4, 3)), 2, False),
    (((2, 5, 3), (2, 3, 4)), (2, 1), False),
    (((2, 5, 3), (2, 4, 5)), (1, 2), True),
])
def test_dot_matches_numpy_and_keras(shapes, axes, normalize, rng):
    a = rng.normal(size=shapes[0]).astype(np.float32)
    b = rng.normal(size=shapes[1]).astype(np.float32)
    got = L.Dot(axes=axes, normalize=normalize)([a, b]).numpy()
    ax = axes if isinstance(axes, tuple) else (axes % a.ndim, axes % b.ndim)
    x, y = a, b
    if normalize:
        x = a / np.linalg.norm(a, axis=ax[0], keepdims=True)
        y = b / np.linalg.norm(b, axis=ax[1], keepdims=True)
    np.testing.assert_allclose(got, _np_batch_dot(x, y, *ax), rtol=1e-4, atol=1e-5)
    ktf = tf_or_none()
    if ktf is not None:
        np.testing.assert_allclose(got, ktf.keras.layers.Dot(axes=axes, normalize=normalize)([a, b]).numpy(),
                                   rtol=1e-4, atol=1e-5)
    sa = tf.keras.Input(shape=shapes[0][1:])
    sb = tf.keras.Input(shape=shapes[1][1:])
    assert tuple(L.Dot(axes=axes)([sa, sb]).shape) == (None,) + got.shape[1:]


def test_merge_masks_or_together():
    ids = tf.keras.Input(shape=(3,), dtype="int32")
    emb = L.Embedding(5, 2, mask_zero=True)
    e = emb(ids)
    model = tf.keras.Model(ids, L.Add()([e, e]))
    out = model(np.array([[1, 0, 2]], np.int32))
    from tapeflow.nn._masks import get_mask

    assert get_mask(out).numpy().tolist() == [[True, False, True]]
    both = tf.keras.Model(ids, L.Concatenate()([e, e]))
    assert get_mask(both(np.array([[1, 0, 2]], np.int32))).numpy().tolist() == [[True, False, True]]
