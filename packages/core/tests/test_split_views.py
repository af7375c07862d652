"""split/unstack with nothing before the split axis hand back views of the input's buffer on the CPU (issue 16
item 3: PyTorch's chunk/unbind are views; ours were a copy per call, 3-7x PyTorch's time).  The pieces are
immutable like every tensor; they keep the input's memory alive, and a variable whose value was split copies
before an update in place (copy on write), so the pieces keep their values."""
from __future__ import annotations

import gc

import numpy as np
import pytest
import tapeflow as tf


@pytest.fixture(autouse=True)
def _on_the_cpu():
    """Views are the CPU backend's (on other devices the pieces are copies made by the split kernel)."""
    with tf.device("cpu:0"):
        yield


def _shares(piece, x):
    return np.shares_memory(piece._arr, x._arr)


# small ones come from NumPy, large ones (>= 128 KiB) from the backend's caching allocator
@pytest.mark.parametrize("shape", [(6, 4), (28, 32, 128)])
@pytest.mark.parametrize("dtype", ["int8", "bool", "float16", "float32", "int64", "complex128"])
def test_leading_axis_pieces_are_views_with_numpy_values(shape, dtype):
    a = (np.arange(np.prod(shape)) % 7).reshape(shape).astype(dtype)
    x = tf.constant(a)
    n = shape[0]
    for parts, want in ((tf.split(x, 2), np.split(a, 2)),
                        (tf.split(x, [1, 0, n - 1]), np.split(a, [1, 1])),   # an empty piece, uneven ones
                        (tf.unstack(x), list(a))):
        assert len(parts) == len(want)
        for p, w in zip(parts, want):
            assert p.shape == w.shape and p.dtype.name == np.dtype(dtype).name
            np.testing.assert_array_equal(p.numpy(), w)
            if w.size:
                assert _shares(p, x)
    # axis 1 of a tensor whose leading axis has size 1: still one run of the buffer each
    row = tf.constant(a[:1])
    for p, w in zip(tf.split(row, [1, shape[1] - 1], axis=1), np.split(a[:1], [1], axis=1)):
        np.testing.assert_array_equal(p.numpy(), w)
        assert _shares(p, row)


def test_other_splits_still_copy():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = tf.constant(a)
    for p, w in zip(tf.split(x, 3, axis=1), np.split(a, 3, axis=1)):
        np.testing.assert_array_equal(p.numpy(), w)
        assert not _shares(p, x)
    for p, w in zip(tf.unstack(x, axis=1), list(a.T)):
        np.testing.assert_array_equal(p.numpy(), w)
    # bfloat16: NumPy exports no buffer of it, so its pieces are copies, with the right values
    b = tf.constant(a, dtype=tf.bfloat16)
    for p, w in zip(tf.split(b, 2), np.split(a, 2)):
        np.testing.assert_array_equal(p.numpy().astype(np.float32), w)


def test_unstack_of_a_vector_gives_scalars():
    parts = tf.unstack(tf.constant([3, 1, 2]))
    assert [p.shape for p in parts] == [(), (), ()]
    assert [int(p) for p in parts] == [3, 1, 2]
    assert [p.numpy().tolist() for p in tf.split(tf.constant([1.0, 2.0]), 2)] == [[1.0], [2.0]]


def test_pieces_outlive_the_input_and_its_reused_buffers():
    a = np.random.default_rng(0).standard_normal((8, 64, 128)).astype(np.float32)   # 256 KiB: cached
    x = tf.constant(a)
    parts = tf.unstack(x)
    del x
    gc.collect()
    junk = [tf.fill([8, 64, 128], 9.0) for _ in range(4)]   # would reuse a freed buffer of that size
    for p, w in zip(parts, a):
        np.testing.assert_array_equal(p.numpy(), w)
    del junk


def _fresh(values):
    """A CPU variable that owns its buffer (updates then write in place)."""
    with tf.device("cpu:0"):
        v = tf.Variable(np.asarray(values, np.float32))
    v.assign_add(tf.zeros(v.shape, v.dtype))
    return v


@pytest.mark.parametrize("cols", [2, 16384])   # 32 bytes from NumPy; 256 KiB from the caching allocator
def test_a_variable_updated_in_place_after_a_split_leaves_the_pieces_alone(cols):
    for cut in (lambda t: tf.split(t, 2), lambda t: tf.unstack(t), lambda t: tf.split(t, [1, 3])):
        v = _fresh(np.arange(4 * cols).reshape(4, cols) % 251)
        before = v.numpy().copy()
        parts = cut(v.read_value())
        kept = [p.numpy().copy() for p in parts]
        v.assign_add(tf.ones([4, cols]))
        v.assign_sub(tf.fill([4, cols], 3.0))
        np.testing.assert_array_equal(v.numpy(), before - 2)
        for p, k in zip(parts, kept):
            np.testing.assert_array_equal(p.numpy(), k)
        parts = cut(v)   # the variable itself
        kept = [p.numpy().copy() for p in parts]
        v.assign_add(tf.ones([4, cols]))
        for p, k in zip(parts, kept):
            np.testing.assert_array_equal(p.numpy(), k)
