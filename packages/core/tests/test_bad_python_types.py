"""Wrong Python types are typed errors naming the op and what is allowed (issue 10 item 12).

TensorFlow raises TypeError for a float or str where it wants an integer or a dtype;
so does tapeflow, from its central conversion helpers (shape and int-list conversion,
axis normalisation, dtype conversion, device names, constants).  Values of the right type
but out of range are InvalidArgumentError.  What TensorFlow accepts stays accepted:
NumPy integers, 0-d integer tensors, bools as ints.  (The registry walk over every op
is tests/test_bad_input_registry.py.)
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf

X = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def _type_error(match, fn, *args, **kwargs):
    with pytest.raises(TypeError, match=match):
        fn(*args, **kwargs)


def test_the_issue_cases_raise_type_errors_naming_the_op():
    _type_error(r"dtype None is not a dtype; allowed: a tf.DType.*\[Op:Cast\]", tf.cast, X, None)
    _type_error(r"dims\[0\] must be an integer, got float 2.5; allowed: a list or tuple of ints.*\[Op:Fill\]",
                tf.zeros, [2.5])
    _type_error(r"dims must be a list of integers, got str '3'.*\[Op:Fill\]", tf.zeros, "3")
    _type_error(r"shape\[0\] must be an integer, got str '2'.*\[Op:Reshape\]", tf.reshape, X, ["2", "3"])
    _type_error(r"axis must be an integer, got float 1.5; allowed: an int, a NumPy integer or a 0-d integer "
                r"tensor \[Op:Sum\]", tf.reduce_sum, X, axis=1.5)
    _type_error(r"axis must be an integer, got str '0'.*\[Op:Sum\]", tf.reduce_sum, X, axis="0")
    _type_error(r"axis\[0\] must be an integer, got float 0.0.*\[Op:Max\]", tf.reduce_max, X, axis=[0.0])


def test_more_ops_through_the_same_helpers():
    _type_error(r"\[Op:Transpose\]", tf.transpose, X, [1.0, 0.0])
    _type_error(r"\[Op:Tile\]", tf.tile, X, ["1", "2"])
    _type_error(r"depth must be an integer.*\[Op:OneHot\]", tf.one_hot, [0, 1], 3.0)
    _type_error(r"k must be an integer.*\[Op:TopKV2\]", tf.math.top_k, X, "2")
    _type_error(r"num_or_size_splits\[0\] must be an integer.*\[Op:SplitV\]", tf.split, X, [1.0, 2.0], axis=1)
    _type_error(r"axis must be an integer.*\[Op:ConcatV2\]", tf.concat, [X, X], None)
    _type_error(r"axis must be an integer.*\[Op:Softmax\]", tf.nn.softmax, X, 0.5)
    _type_error(r"axis must be an integer.*\[Op:ArgMax\]", tf.argmax, X, 0.5)
    _type_error(r"shape\[0\] must be an integer.*\[Op:RandomUniform\]", tf.random.uniform, [2.0])
    _type_error(r"\[Op:Zeros\]", tf.zeros, [2], dtype=None)
    _type_error(r"unknown dtype 'foo'.*\[Op:Ones\]", tf.ones, [2], dtype="foo")
    _type_error(r"out_type.*\[Op:Shape\]", tf.shape, X, out_type=1.5)
    _type_error(r"axis must be an integer.*\[Op:LinSpace\]", tf.linspace, 0.0, 1.0, 3, axis="0")
    _type_error(r"begin_mask must be an integer.*\[Op:StridedSlice\]", tf.strided_slice, X, [0], [1], [1],
                begin_mask=1.5)
    _type_error(r"dtype None is not a dtype", tf.as_dtype, None)


def test_out_of_range_integers_are_invalid_argument_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"dims\[0\] = 18446744073709551616 is out of the int64 "
                                                             r"range.*\[Op:Fill\]"):
        tf.zeros([2 ** 64])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"depth = 18446744073709551616 is out of the int64 "
                                                             r"range.*\[Op:OneHot\]"):
        tf.one_hot([0], 2 ** 64)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"axis .* is out of range.*\[Op:Sum\]"):
        tf.reduce_sum(X, axis=2 ** 64)


@pytest.mark.parametrize("value", [2 ** 64, 2 ** 63, -(2 ** 63) - 1, [1, 2 ** 64], [[2 ** 63]]])
def test_a_constant_beyond_int64_is_an_invalid_argument_error(value):
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"integer out of range of int64; allowed: integers in "
                                                             r"\[-2\*\*63, 2\*\*63\).*\[Op:Const\]"):
        tf.constant(value)


def test_a_constant_beyond_int64_converts_to_a_float_dtype_as_in_tensorflow():
    assert float(tf.constant(2 ** 64, tf.float32)) == float(2 ** 64)
    assert tf.constant([2 ** 63, 1], tf.float64).numpy().tolist() == [float(2 ** 63), 1.0]
    assert tf.constant(2 ** 63 - 1).dtype == tf.int64


def test_a_device_name_must_be_a_str():
    with pytest.raises(TypeError, match=r"a device name must be a str, got int 5; allowed: a name such as 'cpu:0', "
                                        r"'gpu:0'"):
        tf.device(5)
    with tf.device(None):   # None: no placement (TensorFlow's meaning)
        assert tf.constant(1.0).device


def test_what_tensorflow_accepts_stays_accepted():
    assert tf.zeros([np.int64(2), np.int32(3)]).shape == (2, 3)
    assert tf.zeros(np.int64(3)).shape == (3,)
    assert tf.zeros(tf.constant([2, 1])).shape == (2, 1)
    assert tf.zeros(tf.constant(3)).shape == (3,)
    assert tf.zeros(tf.TensorShape([2, 2])).shape == (2, 2)
    assert tf.reshape(X, np.array([3, 2])).shape == (3, 2)
    assert tf.reduce_sum(X, axis=np.int64(1)).shape == (2,)
    assert tf.reduce_sum(X, axis=tf.constant(1)).shape == (2,)
    assert tf.reduce_sum(X, axis=tf.constant([0, 1])).shape == ()
    assert tf.reduce_sum(X, axis=tf.Variable(1)).shape == (2,)
    assert tf.reduce_sum(X, axis=True).shape == (2,)           # bool is an int, as in TensorFlow
    assert tf.zeros([True]).shape == (1,)
    assert tf.cast(X, "float64").dtype == tf.float64 and tf.cast(X, np.int32).dtype == tf.int32
    assert tf.cast(X, float).dtype == tf.float32


def test_integer_tensors_of_the_wrong_dtype_or_rank_are_invalid_argument_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape is a float32 tensor.*\[Op:Reshape\]"):
        tf.reshape(X, tf.constant([6.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"axis is a float32 tensor.*\[Op:Sum\]"):
        tf.reduce_sum(X, axis=tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape must be 1-D.*\[Op:Reshape\]"):
        tf.reshape(X, [[6]])


def test_fill_takes_a_scalar_value_only():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"value must be a scalar, got shape \[2\].*\[Op:Fill\]"):
        tf.fill([2], [1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:Fill\]"):
        tf.fill([2], tf.constant([1.0, 2.0]))
    assert tf.fill([2], tf.constant(3.0)).numpy().tolist() == [3.0, 3.0]


def test_strided_slice_refuses_var_rather_than_ignoring_it():
    v = tf.Variable([1.0, 2.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"var=.*\[Op:StridedSlice\]"):
        tf.strided_slice(v, [0], [2], var=v)
