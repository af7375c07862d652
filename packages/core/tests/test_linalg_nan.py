"""Linear algebra of matrices holding NaN: NaN in, NaN out, on every backend (issue 10, item 14).

TensorFlow's CPU kernels return NaN for these (tf.linalg.inv of [[1, nan], [0, 1]] and
tf.linalg.cholesky of a NaN diagonal); tapeflow does so on every backend instead of
raising a bad-argument error on one and returning NaN on another.  (TensorFlow's inv
raises "not invertible" when the NaN lands on a pivot; tapeflow's answer is NaN
whatever the NaN's place.)  The tests run on the default device (the CI runs them with
TAPEFLOW_DEVICE=cpu:0 and opencl:0).
"""
import numpy as np
import pytest
import tapeflow as tf

NAN_MATRICES = [
    [[1.0, np.nan], [0.0, 1.0]],
    [[1.0, 0.0], [np.nan, 1.0]],
    [[np.nan, 0.0], [0.0, np.nan]],
    [[4.0, 1.0, 0.0], [1.0, np.nan, 1.0], [0.0, 1.0, 4.0]],
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m", NAN_MATRICES)
def test_inv_and_det_of_a_matrix_with_nan_are_nan(m, dtype):
    a = np.array(m, dtype)
    inv = tf.linalg.inv(a).numpy()
    assert inv.shape == a.shape and inv.dtype == dtype and np.isnan(inv).all()
    assert np.isnan(tf.linalg.det(a).numpy())


def test_inv_of_a_batch_marks_only_the_matrices_with_nan():
    a = np.stack([np.eye(3), np.full((3, 3), np.nan), 2 * np.eye(3)])
    inv = tf.linalg.inv(a).numpy()
    np.testing.assert_array_equal(inv[0], np.eye(3))
    assert np.isnan(inv[1]).all()
    np.testing.assert_array_equal(inv[2], 0.5 * np.eye(3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_of_a_matrix_with_nan_in_its_lower_triangle_is_nan_below_and_zero_above(dtype):
    for m in ([[np.nan, 0.0], [0.0, np.nan]], [[1.0, 0.0], [np.nan, 1.0]],
              [[4.0, 0.0, 0.0], [1.0, 4.0, 0.0], [0.0, 1.0, np.nan]]):
        a = np.array(m, dtype)
        c = tf.linalg.cholesky(a).numpy()
        n = a.shape[0]
        assert np.isnan(c[np.tril_indices(n)]).all()
        assert (c[np.triu_indices(n, 1)] == 0).all()


def test_cholesky_reads_only_the_lower_triangle_as_tensorflow_does():
    c = tf.linalg.cholesky(np.array([[1.0, np.nan], [0.0, 1.0]])).numpy()
    np.testing.assert_array_equal(c, np.eye(2))


def test_solve_propagates_nan_column_by_column():
    x = tf.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([[2.0, np.nan], [4.0, 8.0]])).numpy()
    np.testing.assert_array_equal(x[:, 0], [1.0, 1.0])
    assert np.isnan(x[:, 1]).all()
    assert np.isnan(tf.linalg.solve(np.array([[np.nan, 0.0], [0.0, 1.0]]), np.ones((2, 1))).numpy()).all()


def test_matrices_without_nan_keep_their_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not positive definite"):
        tf.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:MatrixInverse\]"):
        tf.linalg.inv(np.zeros((2, 2)))


def test_diag_records_its_padding_value_and_traces_without_kernels():
    """The recorded attrs say everything the primitive computed from (padding_value included)."""
    from tapeflow.core.dispatch import hooks
    from tapeflow.core.runner import tracing

    seen = []
    sub = hooks.subscribe(lambda op, inputs, out, attrs: seen.append((op, attrs)))
    try:
        out = tf.linalg.diag(tf.constant([1.0, 2.0]), k=1, padding_value=9.0)
    finally:
        sub.remove()
    assert out.numpy().tolist() == [[9.0, 1.0, 9.0], [9.0, 9.0, 2.0], [9.0, 9.0, 9.0]]
    assert seen == [("diag", {"k": 1, "num_rows": 3, "num_cols": 3, "padding_value": 9.0})]
    a, b = tf.ones([4, 3, 3]), tf.ones([2, 3, 5])  # made before tracing: tf.ones traces as fill
    with tracing() as g:
        s, logabs = tf.linalg.slogdet(a)
        d = tf.linalg.diag_part(b, k=-1)
    assert (s._h, logabs._h, d._h) == (None, None, None)
    assert tuple(s.shape) == tuple(logabs.shape) == (4,) and tuple(d.shape) == (2, 2)
    assert [n.prim.name for n in g.nodes] == ["slogdet", "diag_part"]
