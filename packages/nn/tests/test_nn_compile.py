"""compile() arguments that change the numbers."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf


def _loss(loss_weights):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse", loss_weights=loss_weights)
    return model.evaluate(np.ones((4, 2)), np.zeros((4, 1)), verbose=0)


def test_loss_weights_scale_a_single_outputs_loss_as_keras():
    base = _loss(None)
    assert _loss(0.5) == pytest.approx(base * 0.5)
    assert _loss([2.0]) == pytest.approx(base * 2.0)
    assert _loss({"dense": 3.0}) == pytest.approx(base * 3.0)
    with pytest.raises(ValueError, match="one output"):
        _loss([1.0, 2.0])
    with pytest.raises(TypeError, match="loss_weights"):
        _loss("heavy")
