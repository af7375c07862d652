"""NumPy arrays as operands of a tensor's operators convert to the tensor's dtype, as in TensorFlow 2.

The expected dtypes and values were checked against TensorFlow 2.21 (``tf.constant([1., 2.]) + np.ones(2)``
is float32 there too, and so is the reflected ``np.ones(2) + t``).
"""
import numpy as np
import pytest

import tapeflow as tf
InvalidArgumentError = tf.errors.InvalidArgumentError


def _check(r, dtype, values):
    assert isinstance(r, tf.Tensor)
    assert r.dtype == dtype
    np.testing.assert_array_equal(r.numpy(), np.asarray(values, dtype=dtype.as_numpy_dtype))


@pytest.mark.parametrize("fn, dtype, values", [
    (lambda t: t + np.ones(2), tf.float32, [2., 3.]),                     # float64 array -> float32
    (lambda t: np.ones(2) + t, tf.float32, [2., 3.]),                     # reflected: still a tapeflow tensor
    (lambda t: np.ones(2) - t, tf.float32, [0., -1.]),
    (lambda t: t * np.array([1.5, 2.5]), tf.float32, [1.5, 5.]),
    (lambda t: t + np.ones(2, np.int64), tf.float32, [2., 3.]),           # int array -> float32
    (lambda t: t * np.array([True, False]), tf.float32, [1., 0.]),        # bool array -> float32
    (lambda t: t + np.array(1.5), tf.float32, [2.5, 3.5]),                # 0-d array
    (lambda t: np.full(2, 2.) ** t, tf.float32, [2., 4.]),
    (lambda t: t == np.ones(2), tf.bool, [True, False]),
    (lambda t: np.ones(2) < t, tf.bool, [False, True]),
    (lambda t: tf.add(t, np.ones(2)), tf.float32, [2., 3.]),
    (lambda t: t + np.ones((2, 1)), tf.float32, [[2., 3.], [2., 3.]]),   # broadcasts as before
])
def test_float32_tensor_with_numpy_operand(fn, dtype, values):
    _check(fn(tf.constant([1., 2.])), dtype, values)


def test_matmul_with_numpy_operands_both_ways():
    _check(tf.constant([[1., 2.]]) @ np.ones((2, 1)), tf.float32, [[3.]])
    _check(np.ones((1, 2)) @ tf.constant([[1.], [2.]]), tf.float32, [[3.]])


def test_other_tensor_dtypes_keep_theirs():
    _check(tf.constant([1, 2]) + np.array([1, 2]), tf.int32, [2, 4])           # int64 array -> int32
    _check(np.array([1, 2]) + tf.constant([1, 2]), tf.int32, [2, 4])
    _check(tf.constant([1, 2]) + np.array([1., 2.]), tf.int32, [2, 4])         # integral floats
    _check(tf.constant([1., 2.], tf.float16) + np.ones(2), tf.float16, [2., 3.])
    _check(np.ones(2, np.float32) + tf.constant([1., 2.], tf.float64), tf.float64, [2., 3.])


def test_lossy_conversions_raise_instead_of_truncating():
    # TensorFlow truncates 1.5 to 1 and wraps 300 to 44 silently; tapeflow says so, as for Python scalars
    with pytest.raises(InvalidArgumentError, match=r"fractional or non-finite.*int32.*\[Op:AddV2\]"):
        tf.constant([1, 2]) + np.array([1.5, 2.5])
    with pytest.raises(InvalidArgumentError, match=r"fractional or non-finite"):
        np.array([np.nan, 1.]) + tf.constant([1, 2])
    with pytest.raises(InvalidArgumentError, match=r"out of range for uint8 \[0, 255\].*\[Op:AddV2\]"):
        tf.constant([1, 2], tf.uint8) + np.array([300, 1])


def test_strings_and_bools_still_do_not_mix():
    with pytest.raises(InvalidArgumentError, match=r"float32 tensor but is a string tensor"):
        tf.constant([1., 2.]) + np.array(["a", "b"])
    with pytest.raises(InvalidArgumentError, match=r"bool"):
        tf.logical_and(tf.constant([True, False]), np.array([1, 0]))


def test_numpy_operand_converts_on_the_tensors_device():
    t = tf.constant([1., 2.])
    assert (t + np.ones(2)).device == t.device

