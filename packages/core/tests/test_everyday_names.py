"""The everyday tf.* names of issue 14 item 1: each exists with TensorFlow 2's semantics.

References are NumPy (or TensorFlow 2.21's documented results, written out)."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError


# ---- tf.newaxis, tf.UnconnectedGradients, tf.math.divide_no_nan -----------------------------

def test_newaxis_inserts_an_axis():
    x = tf.reshape(tf.range(6), [2, 3])
    assert tf.newaxis is None
    assert x[:, tf.newaxis].shape == (2, 1, 3)
    assert x[tf.newaxis, ..., tf.newaxis].shape == (1, 2, 3, 1)
    np.testing.assert_array_equal(x[tf.newaxis, 1].numpy(), [[3, 4, 5]])


def test_unconnected_gradients_at_top_level():
    autodiff = pytest.importorskip("tapeflow.autodiff")  # tf.UnconnectedGradients lives in tapeflow-autodiff
    assert tf.UnconnectedGradients is autodiff.UnconnectedGradients
    x, y = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        z = x * 3.0
    assert tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() == 0.0


def test_divide_no_nan():
    out = tf.math.divide_no_nan(tf.constant([1.0, -2.0, 0.0]), tf.constant([0.0, 4.0, 0.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, -0.5, 0.0])
    assert tf.math.divide_no_nan is tf.math.div_no_nan
    with pytest.raises(InvalidArgumentError, match=r"\[Op:DivNoNan\]"):
        tf.math.divide_no_nan(tf.constant([1, 2]), tf.constant([1, 0]))
