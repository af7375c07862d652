"""tape.explain(target, source): why a gradient is None, one test per cause."""
import pytest
import tapeflow as tf


def test_never_watched_tensor():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    msg = tape.explain(y, x)
    assert msg.startswith("no gradient:") and "never watched" in msg and "tape.watch(x)" in msg


def test_non_trainable_variable_and_watch_accessed_false():
    v = tf.Variable(2.0, trainable=False, name="frozen")
    with tf.GradientTape(persistent=True) as tape:
        y = v * v
    assert "not trainable" in tape.explain(y, v) and "tape.watch(frozen)" in tape.explain(y, v)
    w = tf.Variable(2.0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        y = w * w
    assert "watch_accessed_variables=False" in tape.explain(y, w)


def test_used_only_before_the_tape_started():
    x = tf.constant(3.0)
    w = tf.Variable(2.0, name="w")
    early = x * x
    early_w = w * 2.0
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = early * 2.0
        z = early_w * 3.0 + y
    assert tape.gradient(y, x) is None
    assert "before the tape started" in tape.explain(y, x)
    assert tape.gradient(z, w) is None
    msg = tape.explain(z, w)
    assert "'w:0'" in msg and "never read while the tape was recording" in msg and "before the tape started" in msg


def test_target_computed_outside_the_recording():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    z = y * 5.0   # after the tape stopped
    assert tape.gradient(z, x) is None
    assert "target was not produced by an op this tape recorded" in tape.explain(z, x)


def test_path_through_a_numpy_copy():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
        z = tf.constant(y.numpy()) * x   # the y branch is cut; z still depends on x through the multiply
        w = tf.constant(y.numpy()) * 1.0
    assert float(tape.gradient(z, x)) == 6.0
    assert "the gradient is not None" in tape.explain(z, x)
    assert tape.gradient(w, x) is None
    assert "was not produced by an op this tape recorded" in tape.explain(w, x)


def test_path_through_a_non_differentiable_op_is_named():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        mask = tf.greater(x, 1.5)
        y = tf.cast(mask, tf.float32) * 3.0
    assert tape.gradient(y, x) is None
    msg = tape.explain(y, x)
    assert "every path" in msg and "greater (Greater), which has no gradient: boolean output" in msg


def test_integer_dtypes():
    i = tf.constant([1, 2])
    x = tf.constant([1.5, 2.5])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([i, x])
        y = tf.cast(i, tf.float32) * x
        z = tf.cast(tf.cast(x, tf.int32), tf.float32) * 2.0
    assert "has dtype int32" in tape.explain(y, i) and "floating-point" in tape.explain(y, i)
    assert tape.gradient(z, x) is None
    msg = tape.explain(z, x)
    assert "cast, whose output is int32" in msg and "floating-point tensors" in msg
    assert "integer" not in tape.explain(y, x) and "not None" in tape.explain(y, x)


def test_stop_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.stop_gradient(x * x) * 2.0
    assert tape.gradient(y, x) is None
    assert "stop_gradient (it blocks gradients by definition)" in tape.explain(y, x)


def test_explain_after_a_non_persistent_gradient_that_was_none():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.stop_gradient(x) * 2.0
    assert tape.gradient(y, x) is None
    assert "stop_gradient" in tape.explain(y, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    assert float(tape.gradient(y, x)) == 2.0
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.explain(y, x)


def test_explain_rejects_non_tensors():
    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 1.0
    with pytest.raises(TypeError, match="source tensor or variable"):
        tape.explain(y, "x")
