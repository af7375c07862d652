"""tf.saved_model.save -> tf.saved_model.load round trips: the loaded model, in a fresh process that imports
only tapeflow (never the code that built the model, nor tapeflow.nn), equals the original; a loaded function
works inside tf.function and under GradientTape (TensorFlow's loaded concrete functions are differentiable)."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
BATCHES = (1, 3, 8)

_FRESH = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tapeflow as tf
    jobs = json.load(open(sys.argv[1]))
    out = {}
    for key, job in jobs.items():
        loaded = tf.saved_model.load(job["dir"])
        for i, x in enumerate(job["inputs"]):
            arr = np.load(x)
            y = loaded(tf.constant(arr))
            flat = tf.nest.flatten(y)
            for k, t in enumerate(flat):
                out[f"{key}/{i}/{k}"] = t.numpy()
            sig = loaded.signatures["serving_default"]
            name = sig.input_specs[0].name
            for oname, t in sig(**{name: tf.constant(arr)}).items():
                out[f"{key}/{i}/sig/{oname}"] = t.numpy()
    np.savez(sys.argv[2], **out)
    print(json.dumps(sorted(m for m in sys.modules if m.startswith("tapeflow."))))
""")


def _fresh_process(tmp_path, jobs):
    """Load each export in a new Python process and run it on its inputs: {key/i/k: output array}."""
    spec = {}
    for key, (d, xs) in jobs.items():
        paths = []
        for i, x in enumerate(xs):
            p = str(tmp_path / f"{key}_in{i}.npy")
            np.save(p, np.asarray(x))
            paths.append(p)
        spec[key] = {"dir": str(d), "inputs": paths}
    (tmp_path / "jobs.json").write_text(json.dumps(spec))
    out = tmp_path / "out.npz"
    r = subprocess.run([sys.executable, "-c", _FRESH, str(tmp_path / "jobs.json"), str(out)], capture_output=True,
                       text=True, timeout=600, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    modules = json.loads(r.stdout.strip().splitlines()[-1])
    assert not [m for m in modules if m.startswith(("tapeflow.nn", "tapeflow.autodiff", "tapeflow.data"))], modules
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def _cnn():
    """The CNN of test_saved_model_onnx.py: BatchNormalization (moving statistics trained away from 0 and 1),
    depthwise and strided convolutions, both poolings, Dropout (inactive at inference) and Softmax."""
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(12, 12, 3)),
        L.Conv2D(8, 3, padding="same"), L.BatchNormalization(), L.ReLU(),
        L.DepthwiseConv2D(3, padding="valid"), L.MaxPooling2D(2),
        L.Conv2D(6, 3, strides=2, padding="same", activation="relu"), L.AveragePooling2D(2, padding="same"),
        L.Flatten(), L.Dropout(0.3), L.Dense(10), L.Softmax()])
    x = np.random.default_rng(0).normal(size=(16, 12, 12, 3)).astype("float32")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, np.arange(16) % 10, epochs=1, verbose=0)
    return model


def _lstm():
    tf.keras.utils.set_random_seed(2)
    return tf.keras.Sequential([tf.keras.Input(shape=(7,), dtype="int32"), L.Embedding(20, 8, mask_zero=True),
                                L.LSTM(6), L.Dense(3, activation="softmax")])


def _transformer():
    tf.keras.utils.set_random_seed(3)
    inp = tf.keras.Input(shape=(5, 16), name="tokens")
    att = L.MultiHeadAttention(num_heads=2, key_dim=8)(inp, inp)
    h = L.LayerNormalization()(L.Add()([inp, att]))
    ff = L.Dense(16)(L.Dense(32, activation="gelu")(h))
    return tf.keras.Model(inp, L.LayerNormalization()(L.Add()([h, ff])))


class Custom(tf.Module):
    """A tf.Module with a custom function: variables, a tf.cond and a tf.while_loop, two outputs in a tuple."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
    def __call__(self, x):
        y = tf.matmul(x, self.w)
        y = tf.cond(tf.reduce_sum(y) > 0.0, lambda: tf.nn.relu(y), lambda: tf.tanh(y) - 1.0)
        _, z = tf.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * 0.5 + tf.sin(z)), (tf.constant(0), y))
        return z, tf.reduce_max(z, axis=1)


def _tokens(b):
    t = np.random.default_rng(b).integers(1, 20, size=(b, 7)).astype("int32")
    for i in range(b):
        t[i, 7 - (i % 4):] = 0  # padded ends of different lengths, which the mask hides
    return t


def _call(model, x):
    return model(tf.constant(x)) if isinstance(model, Custom) else model(tf.constant(x), training=False)


def test_models_round_trip_in_a_fresh_process(tmp_path):
    rng = np.random.default_rng(0)
    exports = {  # every signature's batch is free: one export serves batch sizes 1, 3 and 8
        "cnn": (_cnn(), [rng.normal(size=[n, 12, 12, 3]).astype(np.float32) for n in BATCHES]),
        "lstm": (_lstm(), [_tokens(n) for n in BATCHES]),
        "transformer": (_transformer(), [rng.normal(size=[n, 5, 16]).astype(np.float32) for n in BATCHES]),
        "custom": (Custom(), [rng.normal(size=[n, 2]).astype(np.float32) for n in BATCHES]
                   + [np.full([2, 2], -1.0, np.float32)]),  # both branches of the cond
    }
    jobs = {}
    for key, (model, xs) in exports.items():
        d = tmp_path / key
        tf.saved_model.save(model, str(d))
        jobs[key] = (d, xs)
    got = _fresh_process(tmp_path, jobs)
    for key, (model, xs) in exports.items():
        for i, x in enumerate(xs):
            flat = tf.nest.flatten(_call(model, x))
            for k, w in enumerate(flat):
                np.testing.assert_allclose(got[f"{key}/{i}/{k}"], w.numpy(), rtol=1e-5, atol=1e-6,
                                           err_msg=f"{key} input {i} output {k}")
            assert len([k for k in got if k.startswith(f"{key}/{i}/sig/")]) == len(flat)


def test_loaded_module_keeps_the_output_structure_and_signature_names(tmp_path):
    custom = Custom()
    tf.saved_model.save(custom, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    x = tf.constant([[1.0, 2.0], [-3.0, 0.5]])
    z, zmax = loaded(x)
    wz, wmax = custom(x)
    np.testing.assert_allclose(z.numpy(), wz.numpy(), rtol=1e-6)
    np.testing.assert_allclose(zmax.numpy(), wmax.numpy(), rtol=1e-6)
    out = loaded.signatures["serving_default"](x=x)
    assert sorted(out) == ["output_0", "output_1"]
    np.testing.assert_allclose(out["output_1"].numpy(), wmax.numpy(), rtol=1e-6)
    with pytest.raises(TypeError):
        loaded(tf.constant([[1.0, 2.0, 3.0]]))  # the signature takes [None, 2]


def test_loaded_function_inside_tf_function(tmp_path):
    cnn = _cnn()
    tf.saved_model.save(cnn, str(tmp_path / "cnn"))
    loaded = tf.saved_model.load(str(tmp_path / "cnn"))

    @tf.function
    def top(x):
        return tf.argmax(loaded(x), axis=1)

    x = tf.random.normal([4, 12, 12, 3], seed=7)
    np.testing.assert_array_equal(top(x).numpy(), tf.argmax(cnn(x, training=False), axis=1).numpy())


def test_loaded_function_is_differentiable(tmp_path):
    """As TensorFlow's loaded concrete functions: the gradient of the loaded model with respect to its input
    equals the original's."""
    custom = Custom()
    tf.saved_model.save(custom, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    cnn = _cnn()
    tf.saved_model.save(cnn, str(tmp_path / "cnn"))
    loaded_cnn = tf.saved_model.load(str(tmp_path / "cnn"))
    for fn, ref, x in ((loaded, custom, tf.constant([[1.0, 2.0], [0.3, -0.4]])),
                       (loaded_cnn, lambda x: cnn(x, training=False), tf.random.normal([2, 12, 12, 3], seed=9))):
        grads = []
        for f in (fn, ref):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.nest.flatten(f(x))[0]
                loss = tf.reduce_sum(y * y)
            grads.append(tape.gradient(loss, x).numpy())
        assert np.abs(grads[1]).max() > 0
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6)


def test_loaded_function_under_tape_inside_tf_function(tmp_path):
    """The loaded signature (a ConcreteFunction) called inside a tf.function under a GradientTape: its graph
    joins the caller's, and the gradient equals the original model's."""
    custom = Custom()
    tf.saved_model.save(custom, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))

    def grad_of(f):
        def g(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(tf.nest.flatten(f(x))[1] ** 2)
            return tape.gradient(loss, x)
        return g

    x = tf.constant([[1.0, 2.0], [0.3, -0.4], [0.5, 0.5]])
    got = tf.function(grad_of(loaded))(x).numpy()
    want = grad_of(custom)(x).numpy()
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def _walk_dtype(spec):
    for d in ("float32", "int32", "int64", "bool"):
        if d in spec.dtypes:
            return d
    return spec.dtypes[0]


def test_every_exported_op_spec_loads_back():
    """Each op spec (tests/specs) that exports (test_onnx_registry.py walks the export side) loads back with the
    importer and gives what tapeflow gave: the importer maps back every ONNX form the exporter writes."""
    import zlib

    from opspec import load_specs
    from tapeflow.core import errors
    from tapeflow.core.saved_model import export
    from tapeflow.core.saved_model.load import load_model
    from test_function_registry import _call_with, _cases, _flat, _tensor_positions

    loaded = 0
    for spec in load_specs():
        dtype = _walk_dtype(spec)
        rng = np.random.default_rng(zlib.crc32(f"onnx-load-{spec}-{dtype}".encode()))
        for args, kwargs in _cases(spec, dtype, rng):
            where = f"{spec} dtype={dtype} shapes={[np.shape(a) for a in args]} kwargs={kwargs}"
            pos = _tensor_positions(spec, args)
            fn = tf.function(_call_with(spec, args, kwargs, pos))
            tensors = [tf.constant(args[i]) for i in pos]
            want = fn(*tensors)
            try:
                model, entry = export.export_concrete(fn.get_concrete_function(*tensors), "walk")
            except errors.UnimplementedError:  # not exportable (the export walk checks why)
                continue
            sig = load_model(model, "walk")
            got = list(sig(**{i["name"]: t for i, t in zip(entry["inputs"], tensors)}).values())
            want = [w for w in _flat(want) if isinstance(w, tf.Tensor)]
            assert len(got) == len(want), where
            for k, (g, w) in enumerate(zip(got, want)):
                g, w = g.numpy(), np.asarray(w.numpy())
                assert g.shape == w.shape and g.dtype == w.dtype, f"{where}: output {k} {g.dtype}{g.shape} != " \
                                                                  f"{w.dtype}{w.shape}"
                if w.dtype.kind in "biuSO":
                    np.testing.assert_array_equal(g, w, err_msg=f"{where}: output {k}")
                else:
                    rtol, atol = spec.tolerances(w.dtype.name)
                    np.testing.assert_allclose(g, w, rtol=max(rtol, 2e-5), atol=max(atol, 2e-5), equal_nan=True,
                                               err_msg=f"{where}: output {k}")
            loaded += 1
    assert loaded > 400


class Scorer(tf.Module):
    """Two signatures; the default one returns a dict with an int32 output."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(4)
        self.w = tf.Variable(rng.normal(size=(4, 3)).astype("float32"), name="w")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.matmul(x, self.w)
        return {"scores": tf.nn.log_softmax(h), "top": tf.argmax(h, axis=1, output_type=tf.int32)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="v")])
    def norm(self, v):
        return tf.sqrt(tf.reduce_sum(v * v))


def test_dict_outputs_and_several_signatures(tmp_path):
    m = Scorer()
    tf.saved_model.save(m, str(tmp_path / "s"))
    loaded = tf.saved_model.load(str(tmp_path / "s"))
    assert sorted(loaded.signatures) == ["norm", "serving_default"]
    x = tf.constant(np.random.default_rng(5).normal(size=(3, 4)).astype("float32"))
    got, want = loaded(x), m(x)
    assert sorted(got) == ["scores", "top"] and got["top"].dtype == tf.int32
    np.testing.assert_allclose(got["scores"].numpy(), want["scores"].numpy(), rtol=1e-6)
    np.testing.assert_array_equal(got["top"].numpy(), want["top"].numpy())
    v = tf.constant([3.0, 4.0])
    assert float(loaded.signatures["norm"](v=v)["output_0"]) == float(m.norm(v)) == 5.0
    assert float(loaded.norm(v)) == 5.0  # a module's other functions as methods, as TensorFlow restores them
    with pytest.raises(AttributeError):
        loaded.nothing


def _small_bn_model():
    tf.keras.utils.set_random_seed(6)
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(5, name="hidden"), L.BatchNormalization(),
                                 L.ReLU(), L.Dense(2, name="out")])
    x = np.random.default_rng(6).normal(size=(16, 4)).astype("float32")
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.ones([16, 2], "float32"), epochs=1, verbose=0)  # moving statistics away from 0 and 1
    return model


def test_loaded_model_has_the_variables_of_the_original(tmp_path):
    """As TensorFlow's loaded models: ``variables`` and ``trainable_variables`` (names and values of the
    original's; BatchNormalization's moving statistics are variables, not trainable)."""
    model = _small_bn_model()
    tf.saved_model.save(model, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert len(loaded.trainable_variables) == len(model.trainable_variables) == 6
    assert len(loaded.variables) == len(model.variables) == 8
    want = {v.name.split(":")[0]: v for v in model.variables}
    for v in loaded.variables:
        assert isinstance(v, tf.Variable)
        w = want[v.name.split(":")[0]]
        assert v.trainable == w.trainable, v.name
        np.testing.assert_array_equal(v.numpy(), w.numpy())
    assert {v.name for v in loaded.variables} == {v.name for v in model.variables}


def test_fine_tune_a_loaded_model_and_export_it_again(tmp_path):
    model = _small_bn_model()
    tf.saved_model.save(model, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    x = tf.constant(np.random.default_rng(7).normal(size=(8, 4)).astype("float32"))
    y = tf.zeros([8, 2])
    before = [v.numpy().copy() for v in loaded.trainable_variables]
    out0 = loaded(x).numpy()
    opt = tf.keras.optimizers.SGD(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((loaded(x) - y) ** 2)
    grads = tape.gradient(loss, loaded.trainable_variables)
    assert all(g is not None for g in grads)
    opt.apply_gradients(zip(grads, loaded.trainable_variables))
    for b, v in zip(before, loaded.trainable_variables):
        assert not np.allclose(b, v.numpy()), v.name
    out1 = loaded(x).numpy()
    assert float(np.mean(out1 ** 2)) < float(np.mean(out0 ** 2))  # the step lowered the loss
    tf.saved_model.save(loaded, str(tmp_path / "tuned"))
    again = tf.saved_model.load(str(tmp_path / "tuned"))
    np.testing.assert_allclose(again(x).numpy(), out1, rtol=1e-6, atol=1e-6)
    assert len(again.trainable_variables) == 6 and len(again.variables) == 8
    for a, b in zip(again.variables, loaded.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_signatures_share_the_variables(tmp_path):
    m = Scorer()
    tf.saved_model.save(m, str(tmp_path / "s"))
    loaded = tf.saved_model.load(str(tmp_path / "s"))
    assert [v.name for v in loaded.variables] == ["w:0"]
    loaded.variables[0].assign(tf.zeros([4, 3]))
    got = loaded(tf.ones([2, 4]))
    np.testing.assert_allclose(got["scores"].numpy(), np.full([2, 3], -np.log(3.0)), rtol=1e-6)


Pair = __import__("collections").namedtuple("Pair", ["low", "high"])


def test_loaded_outputs_keep_tuples_lists_dicts_and_namedtuples(tmp_path):
    """The exported structure exactly, as TensorFlow's nest records it: a tuple comes back a tuple (not a list),
    a list a list, a namedtuple a namedtuple of the same name and fields."""
    spec = [tf.TensorSpec([None], tf.float32, name="x")]
    fns = {
        "tuple": lambda x: (x + 1.0, x * 2.0),
        "list": lambda x: [x + 1.0, x * 2.0],
        "nested": lambda x: {"b": (x, [x * 3.0]), "a": Pair(x - 1.0, x + 1.0)},
        "single_tuple": lambda x: (x,),
    }
    x = tf.constant([1.0, 2.0])
    for key, fn in fns.items():
        f = tf.function(fn, input_signature=spec)
        tf.saved_model.save(f, str(tmp_path / key))
        got = tf.saved_model.load(str(tmp_path / key))(x)
        want = f(x)
        # (the loaded Pair is a namedtuple class of the same name and fields, made by the loader)
        tf.nest.assert_same_structure(got, want, check_types=key != "nested")
        for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    got = tf.saved_model.load(str(tmp_path / "tuple"))(x)
    assert type(got) is tuple
    assert type(tf.saved_model.load(str(tmp_path / "list"))(x)) is list
    nested = tf.saved_model.load(str(tmp_path / "nested"))(x)
    assert type(nested) is dict and type(nested["b"]) is tuple and type(nested["b"][1]) is list
    pair = nested["a"]
    assert type(pair).__name__ == "Pair" and pair._fields == ("low", "high")
    np.testing.assert_array_equal(pair.high.numpy(), [2.0, 3.0])


def test_conv2d_transpose_model_exports_with_a_free_batch(tmp_path):
    """A Keras model with Conv2DTranspose exports with batch None and serves batches 1 and 3."""
    tf.keras.utils.set_random_seed(8)
    model = tf.keras.Sequential([tf.keras.Input(shape=(4, 4, 2)),
                                 L.Conv2DTranspose(3, 3, strides=2, padding="same", activation="relu"),
                                 L.Conv2DTranspose(2, 2, strides=1, padding="valid")])
    tf.saved_model.save(model, str(tmp_path / "up"))
    loaded = tf.saved_model.load(str(tmp_path / "up"))
    assert list(loaded.signatures["serving_default"].input_specs[0].shape) == [None, 4, 4, 2]
    for b in (1, 3):
        x = tf.random.normal([b, 4, 4, 2], seed=b)
        got = loaded(x)
        assert got.shape == (b, 9, 9, 2)
        np.testing.assert_allclose(got.numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
