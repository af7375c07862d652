"""Layers' gradients (to inputs and to every weight) checked against central differences in float64."""
import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
D = "float64"


def _loss(layer, x, proj, training):
    y = layer(x, training=training)
    if isinstance(y, (list, tuple)):
        y = y[0]
    return tf.reduce_sum(y * proj)


def check_layer(layer, x, rng, training=None, wrt_input=True, eps=1e-6, rtol=1e-5, atol=1e-8, probes=12):
    x = tf.constant(x)
    y = layer(x, training=training)
    y = y[0] if isinstance(y, (list, tuple)) else y
    proj = tf.constant(rng.normal(size=tuple(y.shape)))
    variables = layer.trainable_variables
    assert variables or wrt_input
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = _loss(layer, x, proj, training)
    sources = ([x] if wrt_input else []) + variables
    grads = tape.gradient(loss, sources)

    def numeric(get, put, size):
        base = get()
        idx = rng.choice(size, size=min(probes, size), replace=False)
        out = []
        for i in idx:
            a = base.copy().reshape(-1)
            a[i] += eps
            put(a.reshape(base.shape))
            up = float(_loss(layer, xs[0], proj, training))
            a[i] -= 2 * eps
            put(a.reshape(base.shape))
            down = float(_loss(layer, xs[0], proj, training))
            out.append((up - down) / (2 * eps))
        put(base)
        return idx, np.array(out)

    xs = [x]
    checks = []
    if wrt_input:
        def put_x(a):
            xs[0] = tf.constant(a)
        checks.append((grads[0], lambda: x.numpy().copy(), put_x, x.shape.num_elements(), "input"))
    for v, g in zip(variables, grads[1 if wrt_input else 0:]):
        checks.append((g, lambda v=v: v.numpy().copy(), lambda a, v=v: v.assign(a), v.shape.num_elements(), v.name))
    for g, get, put, size, name in checks:
        assert g is not None, f"no gradient for {name}"
        idx, num = numeric(get, put, size)
        got = np.asarray(g.numpy()).reshape(-1)[idx]
        np.testing.assert_allclose(got, num, rtol=rtol, atol=atol, err_msg=f"gradient of {name}")


CASES = [
    ("dense", lambda: L.Dense(4, activation="tanh", dtype=D), (3, 5)),
    ("dense-rank3", lambda: L.Dense(3, dtype=D), (2, 3, 4)),
    ("conv-valid", lambda: L.Conv2D(3, 3, dtype=D), (2, 6, 6, 2)),
    ("conv-same-strided", lambda: L.Conv2D(2, (3, 2), strides=2, padding="same", dtype=D), (1, 7, 6, 3)),
    ("conv-dilated", lambda: L.Conv2D(2, 2, dilation_rate=2, activation="sigmoid", dtype=D), (1, 6, 6, 2)),
    ("maxpool", lambda: L.MaxPooling2D(dtype=D), (2, 4, 4, 3)),
    ("avgpool-same", lambda: L.AveragePooling2D(3, strides=2, padding="same", dtype=D), (1, 5, 5, 2)),
    ("global-avg", lambda: L.GlobalAveragePooling2D(dtype=D), (2, 3, 3, 4)),
    ("batchnorm-train", lambda: L.BatchNormalization(dtype=D), (6, 4)),
    ("batchnorm-conv", lambda: L.BatchNormalization(dtype=D), (2, 3, 3, 2)),
    ("layernorm", lambda: L.LayerNormalization(dtype=D), (3, 5)),
    ("lstm", lambda: L.LSTM(3, dtype=D), (2, 4, 3)),
    ("lstm-seq", lambda: L.LSTM(2, return_sequences=True, dtype=D), (2, 3, 2)),
    ("gru", lambda: L.GRU(3, dtype=D, bias_initializer="random_normal"), (2, 4, 3)),
    ("gru-v1", lambda: L.GRU(2, reset_after=False, dtype=D, bias_initializer="random_normal"), (2, 3, 2)),
    ("flatten-reshape", lambda: tf.keras.Sequential([L.Flatten(dtype=D), L.Dense(6, dtype=D),
                                                     L.Reshape((2, 3), dtype=D)]), (2, 2, 2)),
    ("activation", lambda: L.Activation("softmax", dtype=D), (3, 4)),
]


@pytest.mark.parametrize("name,make,shape", CASES, ids=[c[0] for c in CASES])
def test_layer_gradients_match_central_differences(name, make, shape, rng):
    x = rng.normal(size=shape)
    if name == "maxpool":
        x = rng.permutation(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape) / 10.0  # no ties
    check_layer(make(), x, rng, training=True if "batchnorm" in name else None)


def test_embedding_gradient(rng):
    e = L.Embedding(10, 3, dtype=D)
    check_layer(e, np.array([[1, 2, 2], [9, 0, 1]]), rng, wrt_input=False)
