"""The seeds' eager examples that need only core, with the outputs the seeds print."""
import numpy as np
import pytest

import tapeflow as tf


def test_matmul_prints_like_the_seed(capsys):
    x = [[2.]]
    m = tf.matmul(x, x)
    print(m)
    assert capsys.readouterr().out == "Tensor([[4.]], shape=(1, 1), dtype=float32)\n"
    assert repr(m) == "<Tensor: shape=(1, 1), dtype=float32, numpy=array([[4.]], dtype=float32)>"


def test_collatz_in_python_control_flow(capsys):
    a = tf.constant(6)
    while a != 1:
        if a % 2 == 0:
            a = a // 2
        else:
            a = 3 * a + 1
        print(a)
    out = capsys.readouterr().out.splitlines()
    assert out == [f"Tensor({v}, shape=(), dtype=int32)" for v in (3, 10, 5, 16, 8, 4, 2, 1)]


def test_collatz_from_12_with_tf_equal():
    a = tf.constant(12)
    counter = 0
    while not tf.equal(a, 1):
        if tf.equal(a % 2, 0):
            a = a // 2
        else:
            a = 3 * a + 1
        counter += 1
    assert int(a) == 1 and counter == 9


def test_numpy_interop_from_the_guide(capsys):
    a = tf.constant([[1, 2], [3, 4]])
    print(a)
    b = tf.add(a, 1)
    print(b)
    print(a * b)
    c = np.multiply(a, b)
    print(c)
    print(a.numpy())
    assert capsys.readouterr().out == (
        "Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)\n"
        "Tensor(\n[[2 3]\n [4 5]], shape=(2, 2), dtype=int32)\n"
        "Tensor(\n[[ 2  6]\n [12 20]], shape=(2, 2), dtype=int32)\n"
        "[[ 2  6]\n [12 20]]\n"
        "[[1 2]\n [3 4]]\n")
    assert isinstance(c, np.ndarray)


def test_iterating_a_tensor():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    values = [float(x[i, j]) for i in range(x.shape[0]) for j in range(x.shape[1])]
    assert values == [1.0, 2.0, 3.0, 4.0]
    rows = [r.numpy().tolist() for r in x]
    assert rows == [[1.0, 2.0], [3.0, 4.0]]


def test_gather_error_text():
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.gather([0, 1, 2], 7)
    assert str(e.value) == "indices = 7 is not in [0, 3) [Op:Gather]"
    assert isinstance(e.value, ValueError)


def test_format_and_scalars():
    loss = tf.constant(68.371234)
    assert "Initial loss: {:.3f}".format(loss) == "Initial loss: 68.371"
    assert float(loss) == pytest.approx(68.371234, rel=1e-6)
    assert int(tf.constant(7)) == 7 and [0, 1, 2][tf.constant(1)] == 1


def test_truth_value_of_a_multi_element_tensor():
    with pytest.raises(tf.errors.InvalidArgumentError, match="truth value of a tensor with 2 elements"):
        bool(tf.constant([1, 2]))


def test_tensor_is_unhashable_variable_is_hashable():
    with pytest.raises(TypeError):
        hash(tf.constant(1.0))
    v = tf.Variable(1.0)
    assert {v: 1}[v] == 1


def test_blank_image_batch_shape(capsys):
    batch = tf.zeros([1, 1, 784])
    print(batch.shape)
    assert capsys.readouterr().out == "(1, 1, 784)\n"
