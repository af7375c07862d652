"""split/unstack/concat copy with one thread below 2 MiB (csrc/join.c: waking a second thread costs more than
such a copy) and over threads above it: both paths give NumPy's parts, for every element size and for uneven
widths (a speed change; its figures are in benchmarks/bench_rnn.py)."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf

# rows x columns of float32: 128 KiB (one thread), 2 MiB exactly and 4.1 MiB (threads)
SHAPES = [(32, 1024), (512, 1024), (1050, 1024)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64", "complex128"])
def test_split_and_concat_on_both_sides_of_the_thread_threshold(shape, dtype):
    a = (np.arange(np.prod(shape)) % 251).reshape(shape).astype(dtype)
    x = tf.constant(a)
    for axis, sizes in ((1, [1, 300, 3, shape[1] - 304]), (0, [7, shape[0] - 7])):
        parts = tf.split(x, sizes, axis=axis)
        want = np.split(a, np.cumsum(sizes)[:-1], axis=axis)
        for got, w in zip(parts, want):
            np.testing.assert_array_equal(got.numpy(), w)
        np.testing.assert_array_equal(tf.concat(parts, axis=axis).numpy(), a)
    rows = tf.unstack(x[:40], axis=0)
    np.testing.assert_array_equal(np.stack([r.numpy() for r in rows]), a[:40])
    cols = tf.unstack(x[:, :33], axis=1)
    np.testing.assert_array_equal(np.stack([c.numpy() for c in cols], axis=1), a[:, :33])
