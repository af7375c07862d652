"""tf.saved_model.save's ONNX models run in ONNX Runtime and give tapeflow's outputs (float32 tolerance) for
several batch sizes: a CNN with BatchNormalization and Softmax, an LSTM text classifier with masking, a
Transformer block (MultiHeadAttention + LayerNormalization) and a tf.Module with a custom function."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX export tests need onnx: pip install 'tapeflow-core[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="the ONNX export tests need onnxruntime (noxfile TEST_DEPS)")

import tapeflow as tf  # noqa: E402
from tapeflow.core import errors  # noqa: E402
from tapeflow.core.saved_model import export  # noqa: E402

BATCHES = (1, 3, 8)


def _session(d, signature="serving_default"):
    return ort.InferenceSession(os.path.join(d, f"{signature}.onnx"), providers=["CPUExecutionProvider"])


def _manifest(d):
    with open(os.path.join(d, export.MANIFEST)) as f:
        return json.load(f)


def _check_model(model, make_input, tmp_path, rtol=1e-4, atol=1e-5):
    d = str(tmp_path / "saved")
    tf.saved_model.save(model, d)
    info = _manifest(d)
    assert info["format"] == export.FORMAT and info["opset"] >= 17
    sig = info["signatures"]["serving_default"]
    assert sig["inputs"][0]["shape"][0] is None, "the batch dimension must stay free"
    m = onnx.load(os.path.join(d, sig["file"]))
    onnx.checker.check_model(m, full_check=True)
    assert m.graph.initializer, "the weights are initializers"
    sess = _session(d)
    for b in BATCHES:
        x = make_input(b)
        want = model(tf.constant(x), training=False).numpy()
        (got,) = sess.run(None, {sig["inputs"][0]["name"]: x})
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"batch {b}")
    return sess


def test_cnn_with_batchnorm_and_softmax(tmp_path):
    tf.keras.utils.set_random_seed(1)
    L = tf.keras.layers
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(12, 12, 3)),
        L.Conv2D(8, 3, padding="same"), L.BatchNormalization(), L.ReLU(),
        L.DepthwiseConv2D(3, padding="valid"), L.MaxPooling2D(2),
        L.Conv2D(6, 3, strides=2, padding="same", activation="relu"), L.AveragePooling2D(2, padding="same"),
        L.Flatten(), L.Dropout(0.3), L.Dense(10), L.Softmax()])
    x = np.random.default_rng(0).normal(size=(16, 12, 12, 3)).astype("float32")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, np.arange(16) % 10, epochs=1, verbose=0)  # moving statistics that are not 0 and 1
    _check_model(model, lambda b: np.random.default_rng(b).normal(size=(b, 12, 12, 3)).astype("float32"), tmp_path)


def test_lstm_text_classifier_with_masking(tmp_path):
    tf.keras.utils.set_random_seed(2)
    L = tf.keras.layers
    model = tf.keras.Sequential([tf.keras.Input(shape=(7,), dtype="int32"),
                                 L.Embedding(20, 8, mask_zero=True), L.LSTM(6), L.Dense(3, activation="softmax")])

    def tokens(b):
        t = np.random.default_rng(b).integers(1, 20, size=(b, 7)).astype("int32")
        for i in range(b):
            t[i, 7 - (i % 4):] = 0  # padded ends of different lengths
        return t

    _check_model(model, tokens, tmp_path)


def test_transformer_block(tmp_path):
    tf.keras.utils.set_random_seed(3)
    L = tf.keras.layers
    inp = tf.keras.Input(shape=(5, 16), name="tokens")
    att = L.MultiHeadAttention(num_heads=2, key_dim=8)(inp, inp)
    h = L.LayerNormalization()(L.Add()([inp, att]))
    ff = L.Dense(16)(L.Dense(32, activation="gelu")(h))
    out = L.LayerNormalization()(L.Add()([h, ff]))
    model = tf.keras.Model(inp, out)
    sess = _check_model(model, lambda b: np.random.default_rng(b).normal(size=(b, 5, 16)).astype("float32"),
                        tmp_path)
    assert [i.name for i in sess.get_inputs()] == ["tokens"]


class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(4)
        self.w = tf.Variable(rng.normal(size=(4, 3)).astype("float32"), name="w")
        self.b = tf.Variable(rng.normal(size=(3,)).astype("float32"), name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.matmul(x, self.w) + self.b
        # a custom function: data-dependent control flow and a loop
        h = tf.cond(tf.reduce_max(h) > 0.0, lambda: tf.nn.relu(h), lambda: h * 0.5)
        _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 0.9 + tf.tanh(h)),
                               (tf.constant(0), tf.zeros_like(h)))
        return {"scores": tf.nn.log_softmax(acc), "top": tf.argmax(acc, axis=1, output_type=tf.int32)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="v")])
    def norm(self, v):
        return tf.sqrt(tf.reduce_sum(v * v))


def test_module_with_custom_function(tmp_path):
    m = Scorer()
    d = str(tmp_path / "module")
    tf.saved_model.save(m, d)
    info = _manifest(d)
    assert sorted(info["signatures"]) == ["norm", "serving_default"]
    assert info["default_signature"] == "serving_default"
    sig = info["signatures"]["serving_default"]
    assert [o["name"] for o in sig["outputs"]] == ["scores", "top"]
    assert sig["outputs"][1]["dtype"] == "int32" and sig["output_structure"] == {"scores": "scores", "top": "top"}
    sess = _session(d)
    for b in BATCHES:
        for sign in (1.0, -1.0):
            x = (sign * np.abs(np.random.default_rng(b).normal(size=(b, 4)))).astype("float32")
            want = m(tf.constant(x))
            scores, top = sess.run(None, {"x": x})
            np.testing.assert_allclose(scores, want["scores"].numpy(), rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(top, want["top"].numpy())
    v = np.arange(5, dtype="float32")
    (n,) = _session(d, "norm").run(None, {"v": v})
    np.testing.assert_allclose(n, m.norm(tf.constant(v)).numpy(), rtol=1e-6)


def test_unsupported_op_names_op_line_and_signature(tmp_path):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def noisy(x):
        return x + tf.random.uniform([3])

    d = str(tmp_path / "noisy")
    with pytest.raises(errors.UnimplementedError, match=r"(RandomUniform|random).*signature 'serving_default'.*"
                                                        r"created at .*test_saved_model_onnx.py:\d+"):
        tf.saved_model.save(noisy, d)
    assert not os.path.exists(d), "a failed save leaves nothing behind"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".noisy")], "nor its temporary directory"


def test_save_replaces_atomically_and_checks_arguments(tmp_path):
    f = tf.function(lambda x: x * 2.0, input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    d = str(tmp_path / "twice")
    os.makedirs(d)
    with open(os.path.join(d, "stale.txt"), "w") as fh:
        fh.write("old")
    tf.saved_model.save(f, d)
    assert sorted(os.listdir(d)) == ["serving_default.onnx", export.MANIFEST]
    with pytest.raises(ValueError, match="input_signature"):
        tf.saved_model.save(tf.function(lambda x: x), str(tmp_path / "nosig"))
    with pytest.raises(ValueError, match="no tf.function with an input_signature"):
        tf.saved_model.save(tf.Module(), str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="signature name"):
        tf.saved_model.save(f, str(tmp_path / "bad"), signatures={"a/b": f})


def test_large_weights_go_to_external_data(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "EXTERNAL_DATA_BYTES", 1000)
    w = tf.Variable(np.ones((40, 40), "float32"), name="big")
    f = tf.function(lambda x: tf.matmul(x, w), input_signature=[tf.TensorSpec([None, 40], tf.float32, name="x")])
    d = str(tmp_path / "ext")
    tf.saved_model.save(f, d)
    assert "serving_default.onnx.data" in os.listdir(d)
    (y,) = _session(d).run(None, {"x": np.ones((2, 40), "float32")})
    np.testing.assert_allclose(y, np.full((2, 40), 40.0))


def test_export_example_prints_the_same_accuracy(tmp_path, capsys):
    """examples/export_onnx.py: the digits CNN trained (seeded), exported, run by ONNX Runtime: same accuracy."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "export_onnx.py"
    spec = importlib.util.spec_from_file_location("export_onnx", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    acc_tf, acc_onnx = ex.main(str(tmp_path / "digits"), epochs=3, seed=0)
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == f"test accuracy, tapeflow:     {acc_tf:.4f}"
    assert out[-1] == f"test accuracy, ONNX Runtime: {acc_onnx:.4f}"
    assert acc_onnx == acc_tf and acc_tf > 0.5  # chance is 0.1


def test_narrow_integers_export_computed_in_int32(tmp_path):
    """int8 arithmetic, cumsum and a reduction (ONNX's CumSum takes no int8) run in int32 and wrap as tapeflow's."""
    f = tf.function(lambda x: {"c": tf.cumsum(x * x, 0), "s": tf.reduce_sum(x + 100, axis=0)},
                    input_signature=[tf.TensorSpec([None, 3], tf.int8, name="x")])
    d = str(tmp_path / "int8")
    tf.saved_model.save(f, d)
    x = np.array([[100, -7, 3], [50, 12, -128], [1, 2, 3]], np.int8)
    want = f(tf.constant(x))
    c, s = _session(d).run(None, {"x": x})
    assert c.dtype == np.int8 and s.dtype == np.int8
    np.testing.assert_array_equal(c, want["c"].numpy())
    np.testing.assert_array_equal(s, want["s"].numpy())


def test_dtype_onnx_does_not_take_fails_the_export_naming_the_op():
    """ONNX's TopK takes no bool (tapeflow sorts bools): the export type-checks the model and names the tapeflow op
    and its line."""
    f = tf.function(lambda x: tf.sort(x), input_signature=[tf.TensorSpec([None], tf.bool)])
    with pytest.raises(errors.UnimplementedError, match=r"Sort \(sort\) created at .*test_saved_model_onnx.py"
                                                        r":\d+ does not type-check .*TopK.*bool"):
        export.export_concrete(f.get_concrete_function())


def test_missing_onnx_names_the_pip_command(tmp_path, monkeypatch):
    """Without onnx, saving says how to install it (tapeflow itself imports and trains without it)."""
    import sys

    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    f = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([None], tf.float32)])
    with pytest.raises(ImportError, match=r"pip install 'tapeflow-core\[onnx\]'"):
        tf.saved_model.save(f, str(tmp_path / "m"))
    assert not os.path.exists(tmp_path / "m")


def test_tapeflow_does_not_import_onnx_until_it_saves():
    import subprocess
    import sys

    code = ("import sys, tapeflow as tf; tf.saved_model; tf.keras.layers.Dense(2)(tf.ones([1, 3]));"
            "print('onnx' in sys.modules, 'onnxruntime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
