import copy
import pickle

import numpy as np
import pytest

import tapeflow as tf


def test_python_values_take_default_dtypes():
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(3).dtype == tf.int32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant([[1, 2], [3, 4]]).dtype == tf.int32
    assert tf.constant(2 ** 40).dtype == tf.int64
    assert tf.constant(np.zeros(2)).dtype == tf.float64  # NumPy keeps its dtype
    assert tf.constant(np.zeros(2, np.int16)).dtype == tf.int16
    assert tf.constant([1, 2], dtype=tf.float64).dtype == tf.float64
    assert tf.constant(1.0, dtype="bfloat16").dtype == tf.bfloat16


def test_bad_conversions():
    with pytest.raises(tf.errors.InvalidArgumentError, match="ragged"):
        tf.constant([[1, 2], [3]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="strings"):  # (tf.constant(["a"]) is a tf.string)
        tf.constant(["a"], dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="losing precision"):
        tf.constant([1.5], dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        tf.constant([300], dtype=tf.int8)
    with pytest.raises(TypeError, match="unknown dtype"):
        tf.constant(1, dtype="float128")


def test_printing():
    assert str(tf.constant(3)) == "Tensor(3, shape=(), dtype=int32)"
    assert str(tf.constant(True)) == "Tensor(True, shape=(), dtype=bool)"
    assert str(tf.constant([1.5, 2.0])) == "Tensor([1.5 2. ], shape=(2,), dtype=float32)"
    assert repr(tf.constant([1, 2])) == "<Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>"
    assert str(tf.zeros([2, 0])) == "Tensor([], shape=(2, 0), dtype=float32)"


def test_numpy_interop_is_read_only_and_zero_copy():
    t = tf.constant([1.0, 2.0])
    a = t.numpy()
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 5
    assert np.asarray(t).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert isinstance(tf.constant(2.0).numpy(), np.float32)
    src = np.array([1.0, 2.0], np.float32)
    t2 = tf.constant(src)
    src[0] = 9  # tensors are immutable: the constant copied its input
    assert t2.numpy()[0] == 1.0


def test_operators_and_reflected_forms():
    x = tf.constant([1.0, 2.0])
    assert (1 + x).numpy().tolist() == [2.0, 3.0]
    assert (2 - x).numpy().tolist() == [1.0, 0.0]
    assert (2 * x).numpy().tolist() == [2.0, 4.0]
    assert (2 / x).numpy().tolist() == [2.0, 1.0]
    assert (x ** 2).numpy().tolist() == [1.0, 4.0]
    assert (2 ** x).numpy().tolist() == [2.0, 4.0]
    assert (-x).numpy().tolist() == [-1.0, -2.0]
    assert abs(tf.constant([-1, 2])).numpy().tolist() == [1, 2]
    assert (tf.constant([7, -7]) // 2).numpy().tolist() == [3, -4]
    assert (tf.constant([7, -7]) % 3).numpy().tolist() == [1, 2]
    assert (tf.constant([1, 2]) / 2).dtype == tf.float64  # TensorFlow's truediv on int32
    assert (x == 1.0).numpy().tolist() == [True, False]
    assert (x != 1.0).numpy().tolist() == [False, True]
    assert (x < 2).numpy().tolist() == [True, False]
    assert (tf.constant([True, False]) & tf.constant([True, True])).numpy().tolist() == [True, False]
    assert (~tf.constant([True, False])).numpy().tolist() == [False, True]
    assert (tf.constant([12]) | 3).numpy().tolist() == [15]
    assert (np.array([1.0, 2.0], np.float32) + x).numpy().tolist() == [2.0, 4.0]  # Tensor.__radd__ wins
    m = tf.constant([[1.0, 2.0]])
    assert (m @ tf.transpose(m)).numpy().tolist() == [[5.0]]
    assert (x == None) is False  # noqa: E711


def test_python_scalar_protocol():
    assert bool(tf.constant(1)) and not bool(tf.constant(0.0))
    assert float(tf.constant([2.5])) == 2.5
    assert int(tf.constant(7)) == 7
    assert "{:.2f}".format(tf.constant(1 / 3)) == "0.33"
    assert list(range(10))[tf.constant(3)] == 3
    with pytest.raises(TypeError):
        list(range(10))[tf.constant(3.0)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="ambiguous"):
        bool(tf.constant([True, False]))
    with pytest.raises(TypeError, match="scalar"):
        len(tf.constant(1))
    with pytest.raises(TypeError, match="scalar"):
        iter(tf.constant(1))
    assert len(tf.zeros([3, 2])) == 3


def test_shape_properties():
    t = tf.zeros([2, 3])
    assert t.shape == (2, 3) and t.shape.as_list() == [2, 3] and t.shape.rank == 2
    assert t.ndim == 2 and t.size == 6 and t.device == tf.constant(0).device
    assert repr(t.shape) == "TensorShape([2, 3])"


def test_pickle_and_copy():
    t = tf.constant([[1, 2]])
    t2 = pickle.loads(pickle.dumps(t))
    assert t2.numpy().tolist() == [[1, 2]] and t2.dtype == tf.int32
    assert copy.copy(t) is t and copy.deepcopy(t) is t


def test_dtypes_compare_with_names_and_numpy():
    assert tf.float32 == "float32" and tf.float32 == np.float32 and tf.float32 != tf.float64
    assert tf.as_dtype(np.dtype("int64")) is tf.int64
    assert tf.int8.min == -128 and tf.uint8.max == 255 and tf.bfloat16.is_floating


def test_variable_basics():
    v = tf.Variable([1.0, 2.0], name="w")
    assert v.name == "w:0" and v.trainable and v.shape == (2,)
    before = v.read_value()
    v.assign([5.0, 6.0])
    assert before.numpy().tolist() == [1.0, 2.0]  # values read before an assignment keep their value
    v.assign_sub([1.0, 1.0])
    assert v.numpy().tolist() == [4.0, 5.0]
    assert tf.reduce_sum(v).numpy() == 9.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        v.assign([1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        v.assign(tf.constant([1, 2]))
    assert "numpy=" in repr(v)
    s = tf.Variable(3.0)
    assert "{:.1f}".format(s) == "3.0" and float(s * s) == 9.0
