"""Gradients through core's shape ops: indexing, gather, top_k, sort, split, unstack
(moved from packages/core/tests/test_array_ops.py: they need tapeflow-autodiff)."""
import numpy as np
import tapeflow as tf


def test_gradients_through_indexing_and_gather():
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    with tf.GradientTape() as tape:
        rows = tf.gather(w, [1, 1, 3])       # repeated rows: their gradients add up
        picked = w[w > 8.0]                  # boolean mask
        head = w[:2, ::2]                    # basic slice
    g = tape.gradient([rows, picked, head], w)
    want = np.zeros((4, 3), np.float32)
    want[1] += 2
    want[3] += 1
    want[w.numpy() > 8.0] += 1
    want[:2, ::2] += 1
    np.testing.assert_array_equal(g.numpy(), want)


def test_gradient_of_top_k_and_sort_route_to_the_chosen_entries():
    x = tf.Variable([3.0, 1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        v, _ = tf.math.top_k(x, 2)
        s = tf.sort(x)
    assert tape.gradient(v, x).numpy().tolist() == [1.0, 0.0, 1.0]
    g = tape.gradient(s, x, output_gradients=tf.constant([10.0, 20.0, 30.0]))
    assert g.numpy().tolist() == [30.0, 10.0, 20.0]


def test_split_and_unstack_gradients_fill_unused_outputs_with_zeros():
    x = tf.Variable(np.ones((2, 4), np.float32))
    with tf.GradientTape(persistent=True) as tape:
        _, b = tf.split(x, 2, axis=1)
        rows = tf.unstack(x)
    assert tape.gradient(b, x).numpy().tolist() == [[0, 0, 1, 1], [0, 0, 1, 1]]
    assert tape.gradient(rows[1], x).numpy().tolist() == [[0, 0, 0, 0], [1, 1, 1, 1]]
