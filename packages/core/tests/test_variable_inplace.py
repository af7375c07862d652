"""Variable updates write into the variable's buffer when nothing else holds it (issue 16 item 3).

``assign_add``/``assign_sub`` used to allocate a new buffer per update.  They now run the kernel in
place when the variable is the only holder of its value (copy on write otherwise, as TensorFlow's
variables): a tensor read before the update, a NumPy view, a tape that recorded a read, or a tensor
sharing the buffer after ``assign`` keep their values.
"""
from __future__ import annotations

import threading

import numpy as np
import tapeflow as tf


def _address(v):
    return v._value._arr.__array_interface__["data"][0]


def _fresh(values, dtype="float32"):
    """A CPU variable that owns its buffer (one update made it a new one)."""
    with tf.device("cpu:0"):
        v = tf.Variable(np.asarray(values, dtype))
    v.assign_add(tf.zeros(v.shape, v.dtype))
    return v


def test_assign_add_and_sub_write_in_place():
    for dtype in ("float32", "float64", "int32", "int64"):
        v = _fresh([1, 2, 3], dtype)
        before, ident = _address(v), id(v._value)
        v.assign_add(tf.constant(np.array([10, 20, 30], dtype)))
        v.assign_sub(tf.constant(np.array([1, 1, 1], dtype)))
        assert _address(v) == before and id(v._value) == ident, dtype
        np.testing.assert_array_equal(v.numpy(), np.array([10, 21, 32], dtype))


def test_large_variables_write_in_place():
    """Buffers of any size and allocator (large ones may come from the backend's caching allocator)."""
    v = _fresh(np.zeros(200_000))
    before = _address(v)
    v.assign_add(tf.ones([200_000]))
    assert _address(v) == before and float(v.numpy().sum()) == 200_000.0


def test_tensor_read_before_keeps_its_value():
    v = _fresh([1.0, 2.0])
    r = v.read_value()
    t = tf.identity(v)
    v.assign_add(tf.constant([1.0, 1.0]))
    assert r.numpy().tolist() == [1.0, 2.0] and t.numpy().tolist() == [1.0, 2.0]
    assert v.numpy().tolist() == [2.0, 3.0]
    del r
    v.assign_sub(tf.constant([1.0, 1.0]))  # the read is gone: in place again
    assert v.numpy().tolist() == [1.0, 2.0]


def test_numpy_view_keeps_its_value():
    v = _fresh([1.0, 2.0])
    n = v.numpy()
    v.assign_add(tf.constant([5.0, 5.0]))
    assert n.tolist() == [1.0, 2.0] and v.numpy().tolist() == [6.0, 7.0]


def test_value_shared_by_assign_is_not_written():
    t = tf.constant([1.0, 2.0]) * 1.0
    v = _fresh([0.0, 0.0])
    v.assign(t)  # shares t's buffer
    v.assign_add(tf.constant([1.0, 1.0]))
    assert t.numpy().tolist() == [1.0, 2.0] and v.numpy().tolist() == [2.0, 3.0]
    w = tf.Variable([0.0, 0.0])
    w.assign(v)  # two variables, one buffer
    v.assign_sub(tf.constant([1.0, 1.0]))
    assert w.numpy().tolist() == [2.0, 3.0] and v.numpy().tolist() == [1.0, 2.0]


def test_update_with_itself():
    v = _fresh([1.0, 2.0])
    v.assign_add(v.read_value())
    v.assign_sub(v * 0.5)
    assert v.numpy().tolist() == [1.0, 2.0]


def test_concurrent_updates_lose_nothing():
    v = _fresh(np.zeros(1000))
    one = tf.ones([1000])

    def work():
        for _ in range(300):
            v.assign_add(one)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert (v.numpy() == 1200.0).all()
