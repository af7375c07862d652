"""Whole-model saving (.keras zip), get_config/from_config round trips of every public class, Keras-named
weights files, and weights copied between tapeflow and Keras 3 (where TensorFlow is installed)."""
import inspect
import json
import os
import zipfile

import numpy as np
import pytest
from nn_testutil import tf_or_none
from test_nn_args import NEEDS

import tapeflow as tf
from tapeflow.nn import saving

L = tf.keras.layers


def _same_weights(a, b):
    wa, wb = a.get_weights(), b.get_weights()
    assert len(wa) == len(wb)
    for x, y in zip(wa, wb):
        np.testing.assert_array_equal(x, y)


def _data(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# ---- .keras files ---------------------------------------------------------------------------------------------

def test_sequential_save_load_round_trip(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(3, activation="relu"), L.BatchNormalization(),
                                 L.Dense(1)])
    model.compile(optimizer=tf.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    x = _data((8, 4))
    model.fit(x, x.sum(1, keepdims=True), epochs=2, verbose=0, shuffle=False)
    path = tmp_path / "seq.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.safetensors",
                                        "optimizer.safetensors"]
        cfg = json.loads(z.read("config.json"))
    assert cfg["class_name"] == "Sequential" and [e["class_name"] for e in cfg["config"]["layers"]] == \
        ["InputLayer", "Dense", "BatchNormalization", "Dense"]
    assert cfg["compile_config"]["loss"] == "mse"
    again = tf.keras.models.load_model(path)
    _same_weights(model, again)
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert type(again.optimizer).__name__ == "Adam" and again.optimizer.learning_rate == pytest.approx(0.01)
    assert again.evaluate(x, x.sum(1, keepdims=True), verbose=0) == \
        pytest.approx(model.evaluate(x, x.sum(1, keepdims=True), verbose=0), rel=1e-5)
    assert tf.keras.models.load_model(path, compile=False).optimizer is None


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_training_resumes_after_load_with_the_optimizer_state(tmp_path, run_eagerly):
    x = _data((16, 3))
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    tf.random.set_seed(5)
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(4, activation="tanh"), L.Dense(1)])
    model.compile(optimizer=tf.optimizers.Adam(0.05), loss="mse", run_eagerly=run_eagerly)
    model.fit(x, y, epochs=3, batch_size=8, verbose=0, shuffle=False)
    path = tmp_path / "resume.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        assert "optimizer.safetensors" in z.namelist()
    again = tf.keras.models.load_model(path)
    assert int(again.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy()) == 6
    assert again.__dict__["_compile_args"]["run_eagerly"] is run_eagerly  # compiled as it was
    for m in (model, again):
        m.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), again.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_functional_save_load_round_trip(tmp_path):
    a = tf.keras.Input(shape=(3,), name="a")
    b = tf.keras.Input(shape=(2,), name="b")
    shared = L.Dense(4, name="shared")
    merged = L.Concatenate()([shared(a), L.Dense(4)(b)])
    out = {"sum": L.Dense(1, name="sum")(merged), "again": shared(a)}
    model = tf.keras.Model({"a": a, "b": b}, out, name="two_in")
    path = str(tmp_path / "f.keras")
    model.save(path)
    again = tf.keras.models.load_model(path)
    assert type(again).__name__ == "Functional" and again.name == "two_in"
    assert [x.name for x in again.layers] == [x.name for x in model.layers]
    _same_weights(model, again)
    data = {"a": _data((5, 3)), "b": _data((5, 2), 1)}
    want, got = model(data), again(data)
    for k in ("sum", "again"):
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-6)


def test_nested_model_save_load(tmp_path):
    inner_in = tf.keras.Input(shape=(3,))
    inner = tf.keras.Model(inner_in, L.Dense(2)(inner_in), name="inner")
    x = tf.keras.Input(shape=(3,))
    model = tf.keras.Model(x, L.Dense(1)(inner(x)))
    model.save(tmp_path / "n.keras")
    again = tf.keras.models.load_model(tmp_path / "n.keras")
    _same_weights(model, again)
    np.testing.assert_allclose(again(_data((2, 3))).numpy(), model(_data((2, 3))).numpy(), rtol=1e-6)


@tf.keras.saving.register_keras_serializable(package="Tests")
class Scaled(tf.keras.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1],), initializer="random_normal")

    def call(self, x):
        return self.w * x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class Unregistered(Scaled):
    pass


@tf.keras.saving.register_keras_serializable(package="Tests")
class Net(tf.keras.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = L.Dense(units)
        self.scale = Scaled(0.5)

    def call(self, x):
        return self.scale(self.dense(x))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_custom_layers_registered_or_given(tmp_path):
    x = tf.keras.Input(shape=(3,))
    model = tf.keras.Model(x, Unregistered(3.0)(Scaled(2.0)(x)))
    path = tmp_path / "c.keras"
    model.save(path)
    with pytest.raises(TypeError, match="custom_objects"):
        tf.keras.models.load_model(path)
    again = tf.keras.models.load_model(path, custom_objects={"Unregistered": Unregistered})
    assert again.layers[1].factor == 2.0 and again.layers[2].factor == 3.0
    _same_weights(model, again)
    # safe_mode=False trusts the file: the class is imported from the module it names (this test module)
    trusted = tf.keras.models.load_model(path, safe_mode=False)
    assert type(trusted.layers[2]).__name__ == "Unregistered"
    _same_weights(model, trusted)


def test_subclassed_model_round_trip(tmp_path):
    net = Net(units=4)
    net.build((None, 3))
    path = tmp_path / "net.keras"
    net.save(path)
    again = tf.keras.models.load_model(path)
    assert isinstance(again, Net) and again.units == 4
    _same_weights(net, again)
    np.testing.assert_allclose(again(_data((2, 3))).numpy(), net(_data((2, 3))).numpy(), rtol=1e-6)


def test_save_needs_keras_suffix_and_load_reports_bad_files(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), L.Dense(1)])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'\.keras'.*\[Op:SaveModel\]"):
        model.save(tmp_path / "m.h5")
    with pytest.raises(tf.errors.NotFoundError, match="no model file"):
        tf.keras.models.load_model(tmp_path / "missing.keras")
    bad = tmp_path / "bad.keras"
    bad.write_bytes(b"not a zip")
    with pytest.raises(tf.errors.DataLossError, match="not a .keras archive"):
        tf.keras.models.load_model(bad)
    model.save(tmp_path / "ok.keras")
    with pytest.raises(FileExistsError):
        model.save(tmp_path / "ok.keras", overwrite=False)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_save_weights_keeps_keras_h5_name(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(2)])
    path = tmp_path / "x.weights.h5"
    model.save_weights(str(path))
    assert os.listdir(tmp_path) == ["x.weights.h5"]
    raw = path.read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    assert header["__metadata__"]["format"] == "tapeflow-checkpoint"  # safetensors inside
    other = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(2)])
    other.load_weights(str(path))
    _same_weights(model, other)


# ---- get_config / from_config of every public class ------------------------------------------------------------

# constructor arguments for classes that cannot be made without any: test_nn_args.py's table (add a new class there)
LAYER_ARGS = {name: base for name, (base, _) in NEEDS.items()}


def _classes(module, base):
    names = getattr(module, "__all__", None) or dir(module)
    out = {}
    for n in names:
        c = getattr(module, n, None)
        if isinstance(c, type) and issubclass(c, base) and not c.__name__.startswith("_"):
            out[c.__name__] = c
    return out


def _make(cls, args):
    try:
        return cls(**args.get(cls.__name__, {}))
    except TypeError as e:
        pytest.fail(f"{cls.__name__}() needs arguments ({e}): add them to NEEDS in test_nn_args.py")


def _round_trip(obj):
    cfg = obj.get_config()
    rebuilt = saving.deserialize_keras_object(json.loads(json.dumps(saving.serialize_keras_object(obj))))
    where = inspect.getsourcefile(type(obj))
    assert type(rebuilt) is type(obj), f"{type(obj).__name__}: from_config gave {type(rebuilt).__name__} ({where})"
    again = rebuilt.get_config()
    assert json.dumps(saving.serialize_keras_object(again), sort_keys=True) == \
        json.dumps(saving.serialize_keras_object(cfg), sort_keys=True), \
        f"{type(obj).__name__}.get_config()/from_config do not round-trip: edit {where}"
    return rebuilt


def _layer_classes():
    import tapeflow.nn.layers as nl

    skip = {"Lambda"}  # holds a Python function: saved only by name, see test_lambda_is_refused
    return sorted((n, c) for n, c in _classes(nl, L.Layer).items() if n not in skip)


@pytest.mark.parametrize("name,cls", _layer_classes(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_layer_config_round_trips(name, cls):
    _round_trip(_make(cls, LAYER_ARGS))


# constructor arguments a config may leave out: the base Layer's shape aliases (a config has batch_input_shape or
# batch_shape), and per class: InputLayer's shape (batch_shape holds it), initial weights (not config, as Keras 3)
_BASE_ALIASES = {"self", "input_shape", "batch_input_shape", "input_dim", "batch_size", "autocast"}
_NOT_CONFIG = {"InputLayer": {"shape"}, "Bidirectional": {"weights"}}


@pytest.mark.parametrize("name,cls", _layer_classes(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_layer_config_holds_every_constructor_argument(name, cls):
    layer = _make(cls, LAYER_ARGS)
    cfg = layer.get_config()
    params = [p for p, prm in inspect.signature(cls.__init__).parameters.items()
              if prm.kind not in (prm.VAR_KEYWORD, prm.VAR_POSITIONAL) and p not in _BASE_ALIASES]
    missing = [p for p in params if p not in cfg and p not in _NOT_CONFIG.get(name, ())]
    assert not missing, (f"{name}.get_config() lacks constructor argument(s) {missing} (a saved model would lose "
                         f"them): edit {inspect.getsourcefile(cls)}")


def test_layer_arguments_survive_a_save(tmp_path):
    reg = tf.keras.regularizers.L2(0.25)
    x = tf.keras.Input(shape=(4, 3))
    y = L.LSTM(2, recurrent_dropout=0.1, kernel_initializer="he_normal", kernel_regularizer=reg)(x)
    y = L.BatchNormalization(moving_variance_initializer="zeros", gamma_regularizer="l2")(y)
    y = L.Dense(2, bias_regularizer=reg)(y)
    model = tf.keras.Model(x, y)
    model.save(tmp_path / "args.keras")
    again = tf.keras.models.load_model(tmp_path / "args.keras")
    lstm, bn, dense = again.layers[1:]
    assert lstm.cell.recurrent_dropout == 0.1 and lstm.get_config()["kernel_initializer"]["class_name"] == "HeNormal"
    assert lstm.get_config()["kernel_regularizer"] == {"class_name": "L2", "config": {"l2": 0.25}}
    assert bn.get_config()["moving_variance_initializer"]["class_name"] == "Zeros"
    assert bn.get_config()["gamma_regularizer"] == "l2"
    assert dense.get_config()["bias_regularizer"] == {"class_name": "L2", "config": {"l2": 0.25}}
    # the regularizers act: the reloaded model has the same extra losses
    np.testing.assert_allclose(sorted(float(v) for v in again.losses), sorted(float(v) for v in model.losses),
                               rtol=1e-6)


# constructor arguments of optimizers, schedules, losses, metrics, initializers and regularizers that cannot be made
# without any (add an entry here for a new such class)
OTHER_ARGS = {
    "LossFunctionWrapper": {"fn": tf.keras.losses.mean_squared_error},
    "MeanMetricWrapper": {"fn": tf.keras.losses.mean_absolute_error},
    "IoU": {"num_classes": 3, "target_class_ids": [0, 2]}, "MeanIoU": {"num_classes": 3},
    "OneHotIoU": {"num_classes": 3, "target_class_ids": [1]}, "OneHotMeanIoU": {"num_classes": 3},
    "SensitivityAtSpecificity": {"specificity": 0.5}, "SpecificityAtSensitivity": {"sensitivity": 0.5},
    "PrecisionAtRecall": {"recall": 0.5}, "RecallAtPrecision": {"precision": 0.5},
    "CosineDecay": {"initial_learning_rate": 0.1, "decay_steps": 10},
    "ExponentialDecay": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.9},
    "InverseTimeDecay": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.9},
    "PiecewiseConstantDecay": {"boundaries": [10], "values": [0.1, 0.01]},
    "PolynomialDecay": {"initial_learning_rate": 0.1, "decay_steps": 10},
}
_BASES = {"optimizers": "Optimizer", "optimizers.schedules": "LearningRateSchedule", "losses": "Loss",
          "metrics": "Metric", "initializers": "Initializer", "regularizers": "Regularizer"}


def _other_classes():
    import importlib

    out = []
    for module, base_name in _BASES.items():
        mod = importlib.import_module(f"tapeflow.nn.{module}")
        base = getattr(mod, base_name)
        for name, cls in sorted(_classes(mod, base).items()):
            if cls is not base and not inspect.isabstract(cls) and cls.__module__ == mod.__name__ and \
                    name not in ("Reduce",):  # Reduce: the base of Sum and Mean (its reduction is theirs)
                out.append((f"{module}.{name}", cls))
    return out


@pytest.mark.parametrize("name,cls", _other_classes(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_optimizer_schedule_loss_metric_initializer_regularizer_round_trips(name, cls):
    try:
        obj = cls(**OTHER_ARGS.get(cls.__name__, {}))
    except TypeError as e:
        pytest.fail(f"{cls.__name__}() needs arguments ({e}): add them to OTHER_ARGS in {__file__}")
    _round_trip(obj)


def test_config_round_trip_keeps_non_default_arguments():
    d = _round_trip(L.Dense(7, activation="tanh", use_bias=False, name="custom"))
    assert (d.units, d.name, d.use_bias) == (7, "custom", False)
    c = _round_trip(L.Concatenate(axis=1))
    assert c.axis == 1
    dot = _round_trip(L.Dot(axes=(1, 2), normalize=True))
    assert dot.axes == (1, 2) and dot.normalize is True
    opt = _round_trip(tf.optimizers.SGD(learning_rate=0.2, momentum=0.5))
    assert opt.get_config()["momentum"] == 0.5


def test_lambda_is_refused():
    with pytest.raises(ValueError, match="lambda has no name"):
        saving.serialize_keras_object(lambda x: x)


# ---- weights between tapeflow and Keras 3 -------------------------------------------------------------------

def _keras_pair(ktf):
    km = ktf.keras.Sequential([ktf.keras.Input(shape=(4,)), ktf.keras.layers.Dense(3, activation="relu"),
                               ktf.keras.layers.BatchNormalization(), ktf.keras.layers.Dense(2)])
    tm = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(3, activation="relu"), L.BatchNormalization(),
                              L.Dense(2)])
    return km, tm


def _keras_functional(lib):
    a = lib.keras.Input(shape=(4,))
    b = lib.keras.Input(shape=(3,))
    h = lib.keras.layers.Concatenate()([lib.keras.layers.Dense(5)(a), b])
    h = lib.keras.layers.BatchNormalization()(h)
    return lib.keras.Model([a, b], lib.keras.layers.Add()([lib.keras.layers.Dense(2)(h),
                                                         lib.keras.layers.Dense(2)(b)]))


def test_weights_copy_between_keras_and_tapeflow():
    ktf = tf_or_none()
    x = _data((6, 4))
    if ktf is None:
        # without TensorFlow: the order is Keras 3's per layer (kernel, bias, gamma, beta, mean, variance, ...)
        tm = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(3), L.BatchNormalization(), L.Dense(2)])
        assert [w.shape for w in tm.get_weights()] == [(4, 3), (3,), (3,), (3,), (3,), (3,), (3, 2), (2,)]
        return
    km, tm = _keras_pair(ktf)
    rng = np.random.default_rng(0)
    km.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in km.get_weights()])
    tm.set_weights(km.get_weights())
    np.testing.assert_allclose(tm(x).numpy(), km(x).numpy(), rtol=1e-5, atol=1e-5)
    tm.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in tm.get_weights()])
    km.set_weights(tm.get_weights())
    np.testing.assert_allclose(km(x).numpy(), tm(x).numpy(), rtol=1e-5, atol=1e-5)
    kf, tfm = _keras_functional(ktf), _keras_functional(tf)
    kf.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in kf.get_weights()])
    tfm.set_weights(kf.get_weights())
    xb = _data((6, 3), 1)
    np.testing.assert_allclose(tfm([x, xb]).numpy(), kf([x, xb]).numpy(), rtol=1e-5, atol=1e-5)
    kf.set_weights(tfm.get_weights())
    np.testing.assert_allclose(kf([x, xb]).numpy(), tfm([x, xb]).numpy(), rtol=1e-5, atol=1e-5)
