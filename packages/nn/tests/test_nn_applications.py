"""keras.applications: the architectures' shapes and parameter counts (Keras's published numbers), their
arguments, and Keras's weight files (a Keras 3 .weights.h5, the legacy HDF5 layout, 'imagenet' offline)."""
import urllib.error

import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

A = tf.keras.applications


@pytest.mark.parametrize("name,params,layers", [("ResNet50", 25_636_712, 320), ("MobileNetV2", 3_538_984, 262),
                                                ("VGG16", 138_357_544, 32), ("EfficientNetB0", 5_330_571, 314)])
def test_parameter_counts_equal_keras(name, params, layers):
    # Keras's published numbers (keras.io/api/applications) and its number of weight arrays
    m = getattr(A, name)(weights=None)
    assert m.count_params() == params and len(m.weights) == layers
    assert m.output_shape == (None, 1000) and tuple(m.input_shape) == (None, 224, 224, 3)


def test_small_variants_run_and_take_keras_arguments(rng):
    x = rng.uniform(0, 255, size=(2, 32, 32, 3)).astype(np.float32)
    m = A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), weights=None, classes=4)
    out = m.predict(x, verbose=0)
    assert out.shape == (2, 4) and np.allclose(out.sum(1), 1.0, atol=1e-5)  # softmax
    assert m.name == "mobilenetv2_0.35_32"
    raw = A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), weights=None, classes=4, classifier_activation=None)
    assert not np.allclose(raw.predict(x, verbose=0).sum(1), 1.0)
    feats = A.ResNet50(include_top=False, weights=None, input_shape=(32, 32, 3), pooling="max")
    assert feats.predict(x, verbose=0).shape == (2, 2048)
    assert A.EfficientNetB0(include_top=False, weights=None, input_shape=(32, 32, 3)).output_shape == \
        (None, 1, 1, 1280)
    assert A.VGG16(include_top=False, weights=None, input_shape=(32, 32, 3), pooling="avg").output_shape == (None, 512)
    inp = tf.keras.Input((32, 32, 3))
    assert A.VGG16(include_top=False, weights=None, input_tensor=inp).output_shape == (None, 1, 1, 512)
    with pytest.raises(ValueError, match="pooling"):
        A.VGG16(weights=None, include_top=False, pooling="sum")
    with pytest.raises(ValueError, match="classes must be 1000"):
        A.ResNet50(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="does not exist"):
        A.VGG16(weights="/nonexistent/w.weights.h5")
    with pytest.raises(ValueError, match="at least 32x32"):
        A.ResNet50(weights=None, include_top=False, input_shape=(16, 16, 3))


def test_applications_train_and_freeze(rng):
    base = A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), weights=None, include_top=False, pooling="avg")
    base.trainable = False
    model = tf.keras.Sequential([base, tf.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = base.get_weights()
    x = rng.uniform(0, 255, size=(8, 32, 32, 3)).astype(np.float32)
    model.fit(x, rng.integers(0, 2, 8), epochs=1, verbose=0)
    assert len(model.trainable_weights) == 2
    for u, v in zip(before, base.get_weights()):  # the frozen base (BatchNormalization too) is unchanged
        np.testing.assert_array_equal(u, v)


def _legacy_h5(path, model):
    """A weights file in Keras's legacy HDF5 layout (the one of the published imagenet files)."""
    import h5py

    with h5py.File(path, "w") as f:
        names = [layer.name for layer in model.layers]
        f.attrs["layer_names"] = [n.encode() for n in names]
        for layer in model.layers:
            g = f.create_group(layer.name)
            wn = [f"{layer.name}/w{i}:0".encode() for i in range(len(layer.weights))]
            g.attrs["weight_names"] = wn
            for n, v in zip(wn, layer.weights):
                g.create_dataset(n.decode(), data=v.numpy())


def test_weights_from_a_legacy_h5_file(tmp_path, rng):
    pytest.importorskip("h5py", reason="reading .h5 weight files needs h5py (the h5 extra of tapeflow-nn)")
    src = A.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
    path = tmp_path / "vgg16_notop.h5"
    _legacy_h5(path, src)
    dst = A.VGG16(weights=str(path), include_top=False, input_shape=(32, 32, 3))
    for u, v in zip(src.get_weights(), dst.get_weights()):
        np.testing.assert_array_equal(u, v)
    # a file that lacks a layer of the model: the error names the file and the layer
    small = tmp_path / "mobile.h5"
    _legacy_h5(small, A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), weights=None, include_top=False))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"mobile\.h5.*block1_conv1"):
        A.VGG16(weights=str(small), include_top=False, input_shape=(32, 32, 3))


def test_imagenet_offline_says_where_to_put_the_file(tmp_path, monkeypatch):
    import tapeflow.nn.utils as nu

    monkeypatch.setenv("KERAS_HOME", str(tmp_path))

    def offline(url, path, *a):
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(nu, "urlretrieve", offline)
    where = tmp_path / "models" / "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"
    with pytest.raises(OSError, match=str(where)):
        A.VGG16(weights="imagenet", include_top=False)


def test_weights_round_trip_through_a_keras3_weights_h5(tmp_path, rng):
    tensorflow = tf_or_none()
    if tensorflow is None:
        pytest.skip("writing a .weights.h5 with Keras 3 needs TensorFlow (the legacy-file test runs without it)")
    keras = tensorflow.keras
    x = rng.uniform(0, 255, size=(2, 32, 32, 3)).astype(np.float32)
    for name, kw in (("MobileNetV2", dict(alpha=0.35, input_shape=(32, 32, 3), classes=7)),
                     ("EfficientNetB0", dict(input_shape=(32, 32, 3), classes=5))):
        km = getattr(keras.applications, name)(weights=None, **kw)
        for layer in km.layers:  # statistics of their own, so inference uses what the file carries
            if isinstance(layer, keras.layers.BatchNormalization):
                layer.moving_mean.assign(rng.normal(size=layer.moving_mean.shape).astype("float32") * 0.1)
                layer.moving_variance.assign(rng.uniform(0.5, 1.5, size=layer.moving_variance.shape).astype("float32"))
        path = str(tmp_path / f"{name}.weights.h5")
        km.save_weights(path)
        ours = getattr(A, name)(weights=path, **kw)
        np.testing.assert_allclose(ours.predict(x, verbose=0), km.predict(x, verbose=0), rtol=1e-4, atol=1e-6)
        assert ours.count_params() == km.count_params()
