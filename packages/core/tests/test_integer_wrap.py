"""Integer scans, segment sums and scatter-adds wrap modulo 2**bits, as NumPy's do (issue 10, item 13).

The kernels add and multiply integers in unsigned arithmetic: signed overflow is undefined
behaviour in C (the sanitizer session, ``nox -s sanitize``, reports it), and an optimizing
compiler may do anything with it.  NumPy is the reference; the tests run on the default
device (cpu:0 and opencl:0 in CI).
"""
import numpy as np
import pytest
import tapeflow as tf

INTS = [np.int8, np.uint8, np.int16, np.int32, np.int64]


def _near_max(dtype, n=7):
    info = np.iinfo(dtype)
    vals = np.array([info.max, info.max - 1, 3, info.max // 2 + 2, info.min, info.max, 2], dtype=np.int64)[:n]
    return vals.astype(dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_cumsum_and_cumprod_wrap_like_numpy(dtype):
    x = _near_max(dtype)
    for reverse in (False, True):
        for exclusive in (False, True):
            ref_in = x[::-1] if reverse else x
            s = np.cumsum(ref_in, dtype=dtype)
            p = np.cumprod(ref_in, dtype=dtype)
            if exclusive:
                s = np.concatenate([[0], s[:-1]]).astype(dtype)
                p = np.concatenate([[1], p[:-1]]).astype(dtype)
            if reverse:
                s, p = s[::-1], p[::-1]
            got_s = tf.math.cumsum(x, exclusive=exclusive, reverse=reverse).numpy()
            got_p = tf.math.cumprod(x, exclusive=exclusive, reverse=reverse).numpy()
            np.testing.assert_array_equal(got_s, s, err_msg=f"cumsum reverse={reverse} exclusive={exclusive}")
            np.testing.assert_array_equal(got_p, p, err_msg=f"cumprod reverse={reverse} exclusive={exclusive}")


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_cumsum_along_an_inner_axis_wraps(dtype):
    # the column-wise path (inner > 1) of the scan kernel
    x = np.stack([_near_max(dtype)] * 3, axis=1)
    np.testing.assert_array_equal(tf.math.cumsum(x, axis=0).numpy(), np.cumsum(x, axis=0, dtype=dtype))
    np.testing.assert_array_equal(tf.math.cumprod(x, axis=0).numpy(), np.cumprod(x, axis=0, dtype=dtype))


@pytest.mark.parametrize("dtype", INTS)
def test_segment_sums_wrap_like_numpy(dtype):
    x = _near_max(dtype)
    seg = np.array([0, 0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(tf.math.segment_sum(x, seg).numpy(), _scatter_ref(x, seg, 3, dtype))
    useg = seg[::-1].copy()
    np.testing.assert_array_equal(tf.math.unsorted_segment_sum(x, useg, 3).numpy(), _scatter_ref(x, useg, 3, dtype))


def _scatter_ref(x, idx, n, dtype):
    out = np.zeros(n, dtype)
    np.add.at(out, idx, x)
    return out


@pytest.mark.parametrize("dtype", INTS)
def test_scatter_nd_adds_duplicates_with_wrap_around(dtype):
    x = _near_max(dtype)
    idx = np.array([[0], [0], [1], [0], [1], [2], [0]])
    np.testing.assert_array_equal(tf.scatter_nd(idx, x, [3]).numpy(), _scatter_ref(x, idx[:, 0], 3, dtype))
