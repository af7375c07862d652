"""check_numerics under the tape (moved from packages/core/tests/test_debugging.py: it needs tapeflow-autodiff)."""
import pytest
import tapeflow as tf

IAE = tf.errors.InvalidArgumentError


def test_check_numerics_sits_in_a_model_with_an_identity_gradient():
    from tapeflow.autodiff import GradientTape

    w = tf.Variable([1.0, -2.0])
    with GradientTape() as tape:
        y = tf.reduce_sum(tf.debugging.check_numerics(w * w, "activations"))
    assert tape.gradient(y, w).numpy().tolist() == [2.0, -4.0]
    # the gradient is checked in turn
    x = tf.constant([0.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = tf.sqrt(tf.debugging.check_numerics(x, "input"))
    with pytest.raises(IAE, match=r"detected in gradient\. input : Tensor had Inf values"):
        tape.gradient(y, x)
