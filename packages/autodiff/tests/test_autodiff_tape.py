"""GradientTape mechanics: watching, sources and targets, persistence, nesting, threads, errors."""
import threading

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.dispatch import hooks


def f32(x):
    return np.asarray(x, np.float32)


# ---- watching -------------------------------------------------------------------------

def test_watched_tensor_gets_its_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x)
    assert isinstance(g, tf.Tensor) and g.dtype == tf.float32 and g.shape == ()
    assert float(g) == 6.0


def test_unwatched_tensor_gives_none_or_zero():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    z = tape.gradient(y, x, unconnected_gradients="zero")
    assert z.numpy().tolist() == [0.0, 0.0] and z.dtype == tf.float32
    z = tape.gradient(y, x, unconnected_gradients=tf.autodiff.UnconnectedGradients.ZERO)
    assert z.numpy().tolist() == [0.0, 0.0]


def test_trainable_variables_are_watched_when_read():
    w = tf.Variable([[1.0]])
    with tf.GradientTape() as tape:
        loss = w * w
    grad = tape.gradient(loss, [w])
    assert isinstance(grad, list) and len(grad) == 1
    assert grad[0].numpy().tolist() == [[2.0]]
    assert repr(grad) == "[<Tensor: shape=(1, 1), dtype=float32, numpy=array([[2.]], dtype=float32)>]"


def test_non_trainable_and_unaccessed_variables():
    a = tf.Variable(2.0, name="a")
    b = tf.Variable(3.0, name="b", trainable=False)
    with tf.GradientTape(persistent=True) as tape:
        y = a * b
    assert [v.name for v in tape.watched_variables()] == ["a:0"]
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 3.0 and gb is None
    with tf.GradientTape() as tape:
        tape.watch(b)
        y = a * b
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 3.0 and float(gb) == 2.0


def test_watch_accessed_variables_false():
    a, b = tf.Variable(2.0, name="a"), tf.Variable(5.0, name="b")
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    assert [v.name for v in tape.watched_variables()] == ["a:0"]
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 5.0 and gb is None


def test_watch_nested_structures_and_gradient_keeps_structure():
    x, y, z = tf.constant(1.0), tf.constant(2.0), tf.constant(3.0)
    v = tf.Variable(4.0)
    with tf.GradientTape() as tape:
        tape.watch({"x": x, "pair": [y, (z,)]})
        out = x * y * z * v
    g = tape.gradient(out, {"a": x, "b": [y, (z, v)]})
    assert set(g) == {"a", "b"} and isinstance(g["b"], list) and isinstance(g["b"][1], tuple)
    assert float(g["a"]) == 24.0 and float(g["b"][0]) == 12.0
    assert float(g["b"][1][0]) == 8.0 and float(g["b"][1][1]) == 6.0


def test_variable_read_twice_across_an_assign_sums_both_reads():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        a = v * 2.0        # reads the value 3
        v.assign(5.0)
        b = v * v          # reads the value 5
        y = a + b
    assert float(tape.gradient(y, v)) == 2.0 + 10.0


# ---- targets and seeds --------------------------------------------------------------------

def test_several_targets_add_and_output_gradients_weight_them():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = x * x
        b = x * 3.0
    assert tape.gradient([a, b], x).numpy().tolist() == [5.0, 7.0]
    g = tape.gradient(a, x, output_gradients=tf.constant([10.0, 100.0]))
    assert g.numpy().tolist() == [20.0, 400.0]
    g = tape.gradient([a, b], x, output_gradients=[tf.constant([1.0, 0.0]), tf.constant([0.0, 1.0])])
    assert g.numpy().tolist() == [2.0, 3.0]


def test_target_is_the_source():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
    assert tape.gradient(x, x).numpy().tolist() == [1.0, 1.0]


def test_broadcast_gradients_are_summed_back_to_input_shapes():
    x = tf.constant(f32(np.arange(3).reshape(3, 1)))
    y = tf.constant(f32([1.0, 2.0, 3.0, 4.0]))
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = x * y        # (3, 4)
    gx, gy = tape.gradient(z, [x, y])
    assert gx.shape == (3, 1) and gx.numpy().ravel().tolist() == [10.0, 10.0, 10.0]
    assert gy.shape == (4,) and gy.numpy().tolist() == [3.0, 3.0, 3.0, 3.0]


# ---- persistence, reset, stop_recording ------------------------------------------------------

def test_non_persistent_tape_gives_one_gradient_then_runtime_error():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 4.0
    with pytest.raises(RuntimeError, match="non-persistent.*persistent=True"):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)
    assert tape._ops == [] and tape._tracked == {}  # the recording was let go


def test_persistent_tape_gives_many_gradients():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    assert float(tape.gradient(y, x)) == 4.0
    assert float(tape.gradient(z, x)) == 12.0
    assert float(tape.gradient(z, y)) == 2.0


def test_stop_recording_pauses_only_this_tape():
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
            z = x * 3.0
    assert tf.autodiff.GradientTape  # the name is public
    assert float(outer.gradient(y, x)) == 4.0
    with pytest.raises(RuntimeError, match="inside the tape's `with` block"):
        inner.stop_recording()
    assert float(inner.gradient(z, x)) == 3.0


def test_reset_forgets_the_recording():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        z = x * 5.0
        tape.watch(x)
        w = x * 7.0
    assert tape.gradient(y, x) is None
    assert tape.gradient(z, x) is None   # x was not watched again yet
    assert float(tape.gradient(w, x)) == 7.0


def test_hooks_are_installed_only_while_a_tape_is_active():
    assert hooks.recorder is None and hooks.variable_read is None
    with tf.GradientTape():
        assert hooks.recorder is not None
        with tf.GradientTape():
            pass
        assert hooks.recorder is not None
    assert hooks.recorder is None and hooks.variable_read is None
    with pytest.raises(ZeroDivisionError), tf.GradientTape():
        _ = 1 / 0
    assert hooks.recorder is None


def test_ops_unrelated_to_watched_tensors_are_not_recorded():
    x, c = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        for _ in range(5):
            c = c * 2.0
        y = x * c
    assert [e[0] for e in tape._ops] == ["multiply"]
    assert float(tape.gradient(y, x)) == 64.0


# ---- higher order ----------------------------------------------------------------------------

def test_nested_tapes_give_second_and_third_derivatives():
    x = tf.constant(3.0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x * x * x
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (float(d1), float(d2), float(d3)) == (27.0, 18.0, 6.0)


def test_third_derivative_of_square_is_none():
    x = tf.constant(3.0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x * x
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    assert float(d2) == 2.0
    assert t3.gradient(d2, x) is None


def test_persistent_tape_records_its_own_gradient_inside_its_block():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy = tape.gradient(y, x)
    assert float(dy) == 12.0
    assert float(tape.gradient(dy, x)) == 12.0


# ---- dtypes and blocking ------------------------------------------------------------------------

def test_integer_sources_and_integer_paths_give_none():
    i = tf.constant([1, 2])
    x = tf.constant([1.5, 2.5])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([i, x])
        y = tf.cast(i, tf.float32) * x
        z = tf.cast(tf.cast(x, tf.int32), tf.float32) * 2.0
    assert tape.gradient(y, i) is None
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 2.0]
    assert tape.gradient(z, x) is None


def test_stop_gradient_blocks_its_path_only():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * tf.stop_gradient(x)
    assert float(tape.gradient(y, x)) == 3.0
    assert tf.autodiff.stop_gradient is tf.stop_gradient


def test_missing_rule_is_a_clear_error():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.identity(x)
        tf.autodiff.record("test_op_without_rule", [x], y)
    with pytest.raises(LookupError, match="test_op_without_rule.*register_gradient"):
        tape.gradient(y, x)


# ---- jacobians -----------------------------------------------------------------------------------

def test_jacobian_of_vector_function():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        s = tf.reduce_sum(y)
    j = tape.jacobian(y, x)
    assert j.shape == (3, 3)
    np.testing.assert_array_equal(j.numpy(), np.diag([2.0, 4.0, 6.0]))
    assert tape.jacobian(s, x).numpy().tolist() == [2.0, 4.0, 6.0]
    c = tf.constant([1.0])
    assert tape.jacobian(y, c) is None
    assert tape.jacobian(y, c, unconnected_gradients="zero").shape == (3, 1)


def test_jacobian_of_matrix_function_has_target_then_source_shape():
    w = tf.constant(f32(np.arange(6).reshape(2, 3)))
    x = tf.constant(f32([[1.0, 2.0]]))
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = tf.matmul(x, w)     # (1, 3)
    j = tape.jacobian(y, w)
    assert j.shape == (1, 3, 2, 3)
    want = np.zeros((1, 3, 2, 3), np.float32)
    for k in range(3):
        want[0, k, :, k] = [1.0, 2.0]
    np.testing.assert_array_equal(j.numpy(), want)


def test_batch_jacobian():
    x = tf.constant(f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * 0.5
    j = tape.batch_jacobian(y, x)
    assert j.shape == (3, 2, 2)
    np.testing.assert_array_equal(j.numpy(), np.stack([np.diag(r) for r in x.numpy()]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="same first"):
        tape.batch_jacobian(y, tf.constant([1.0]))


# ---- threads --------------------------------------------------------------------------------------

def test_threads_train_independently_and_concurrently():
    results, errors = {}, []

    def train(k):
        try:
            w = tf.Variable(0.0)
            target = float(k)
            for _ in range(200):
                with tf.GradientTape() as tape:
                    loss = (w - target) * (w - target)
                w.assign_sub(tape.gradient(loss, w) * 0.1)
            results[k] = float(w)
        except Exception as e:  # noqa: BLE001  (any failure in a thread is reported below)
            errors.append(e)

    threads = [threading.Thread(target=train, args=(k,)) for k in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in (1, 2, 3, 4):
        assert abs(results[k] - k) < 1e-4, results


def test_other_threads_ops_are_not_recorded():
    x = tf.constant(2.0)
    box = {}
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        th = threading.Thread(target=lambda: box.setdefault("y", x * x))
        th.start()
        th.join()
        z = x * 3.0
    assert [e[0] for e in tape._ops] == ["multiply"]
    assert tape.gradient(box["y"], x) is None
    assert float(tape.gradient(z, x)) == 3.0


# ---- bad use -------------------------------------------------------------------------------------

def test_bad_sources_targets_and_arguments():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="sources must be tensors or variables.*str 'x'"):
        tape.gradient(y, "x")
    with pytest.raises(TypeError, match="sources must be tensors or variables.*position 1"):
        tape.gradient(y, [x, 3.0])
    with pytest.raises(TypeError, match="target of GradientTape.gradient must be a tensor.*float 4.0"):
        tape.gradient(4.0, x)
    with pytest.raises(TypeError, match="target.*None"):
        tape.gradient(None, x)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"output_gradients\[0\] has shape \(2,\) but "
                                                            r"target\[0\] has shape \(\)"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="unconnected_gradients must be 'none' or 'zero'"):
        tape.gradient(y, x, unconnected_gradients="zeros")
    with pytest.raises(TypeError, match="watch takes tensors and variables.*got object.*position 1"):
        tape.watch([[x], object()])


def test_pause_all_pauses_outer_tapes_but_not_tapes_entered_inside():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.autodiff.pause_all():
            assert not tf.autodiff.recording()
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = x * x
            z = x * 3.0
        w = x * 5.0
    assert float(inner.gradient(y, x)) == 4.0
    assert outer.gradient(y, x) is None and outer.gradient(z, x) is None
    assert float(outer.gradient(w, x)) == 5.0
