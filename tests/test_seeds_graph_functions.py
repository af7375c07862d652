"""The seeds' graph-function examples: the LSTM cell under tf.function (the seeds' tf.nn.graph_callable),
mixed with eager code and differentiated, and the Collatz loop compiled."""
from __future__ import annotations

import io

import numpy as np
import pytest
import tapeflow as tf


def lstm_cell(x, w, h, c):
    xhw = tf.matmul(tf.concat([x, h], axis=1), w)
    y = tf.split(xhw, 4, axis=1)
    in_value = tf.tanh(y[0])
    in_gate, forget_gate, out_gate = [tf.sigmoid(x) for x in y[1:]]
    c = (forget_gate * c) + (in_gate * in_value)
    h = out_gate * tf.tanh(c)
    return h, c


@pytest.mark.parametrize("decorator", [tf.function, tf.nn.graph_callable], ids=["tf.function", "graph_callable"])
def test_lstm_cell_compiled_mixes_with_eager_code_and_differentiates(decorator):
    compiled = decorator(lstm_cell)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 3)), tf.float32)
    w = tf.Variable(rng.standard_normal((3 + 4, 16)) * 0.3, dtype=tf.float32)
    h0 = c0 = tf.zeros([2, 4])

    def unroll(cell):
        with tf.GradientTape() as tape:
            h, c = h0, c0
            for step in range(3):
                h, c = cell(x * float(step + 1), w, h, c)
                h = h * 0.5 + 0.1  # eager code between the compiled calls
            loss = tf.reduce_sum(h * h)
        return h, c, tape.gradient(loss, w)

    h_e, c_e, g_e = unroll(lstm_cell)
    h_g, c_g, g_g = unroll(compiled)
    np.testing.assert_allclose(h_g.numpy(), h_e.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(c_g.numpy(), c_e.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g_g.numpy(), g_e.numpy(), rtol=1e-5, atol=1e-7)
    assert compiled.experimental_get_tracing_count() == 1
    h, c = compiled(x, w, h0, c0)
    assert str(h) == str(lstm_cell(x, w, h0, c0)[0])  # print(h), as the seed does: the eager cell's text


def test_collatz_compiled_prints_and_counts_as_eagerly():
    out = io.StringIO()

    @tf.function
    def collatz(a):
        counter = 0
        while a != 1:
            if a % 2 == 0:
                a = a // 2
            else:
                a = 3 * a + 1
            tf.print(a, output_stream=out)
            counter += 1
        return a, counter

    a, n = collatz(tf.constant(6))
    assert out.getvalue().split() == ["3", "10", "5", "16", "8", "4", "2", "1"]
    assert int(a) == 1 and int(n) == 8
    a, n = collatz(tf.constant(27))
    assert int(n) == 111 and collatz.experimental_get_tracing_count() == 1
