"""Gradients through tf.TensorArray (eager and inside tf.function loops), tf.RaggedTensor values and
tf.sparse.sparse_dense_matmul, as TensorFlow 2.21 gives them."""
from __future__ import annotations

import numpy as np
import tapeflow as tf


def test_tensor_array_gradient_write_read_stack_eager():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        ta = tf.TensorArray(tf.float32, size=2)
        ta = ta.write(0, x * x).write(1, x * 3.0)
        y = tf.reduce_sum(ta.stack()) + tf.reduce_sum(ta.read(0))
    assert t.gradient(y, x).numpy().tolist() == [7.0, 11.0]  # TensorFlow 2.21: [7, 11]


def test_tensor_array_gradient_in_graph_loop():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            ta = tf.TensorArray(tf.float32, size=3)
            for i in tf.range(3):
                ta = ta.write(i, x * tf.cast(i + 1, tf.float32))
            y = tf.reduce_sum(ta.stack() ** 2)
        return t.gradient(y, x)

    # y = sum_i (i+1)^2 x^2 over x's entries: dy/dx = 2 x (1 + 4 + 9)
    np.testing.assert_allclose(f(tf.constant([1.0, -2.0])).numpy(), [28.0, -56.0])


def test_ragged_gradient_through_values():
    v = tf.constant([1.0, 2.0, 3.0, 4.0])
    with tf.GradientTape() as t:
        t.watch(v)
        rt = tf.RaggedTensor.from_row_lengths(v, [3, 0, 1])
        y = tf.reduce_sum(tf.reduce_max(rt, axis=1) * tf.constant([1.0, 0.0, 5.0])) + \
            tf.reduce_sum(rt.to_tensor() * 2.0) + tf.reduce_sum(tf.reduce_mean(rt * rt, axis=1)[:1])
    # max picks 3 (x1) and 4 (x5); to_tensor gives 2 each; the first row's mean of squares gives 2 v / 3
    np.testing.assert_allclose(t.gradient(y, v).numpy(), [2 + 2 / 3, 2 + 4 / 3, 3 + 2.0, 7.0], rtol=1e-6)


def test_sparse_dense_matmul_gradient_dense_and_values():
    x = tf.Variable(tf.ones([4, 2]))
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        s = tf.SparseTensor([[0, 0], [1, 2]], v * 1.0, [3, 4])
        y = tf.reduce_sum(tf.sparse.sparse_dense_matmul(s, x) ** 2)
    gx, gv = t.gradient(y, [x, v])
    # TensorFlow 2.21's values
    assert gx.numpy().tolist() == [[2.0, 2.0], [0.0, 0.0], [8.0, 8.0], [0.0, 0.0]]
    assert gv.numpy().tolist() == [4.0, 8.0]
