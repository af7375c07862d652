"""Math ops on bad input (typed errors naming the op and what was allowed) and on edge values.

The differential suite (tests/specs/math.py) compares every math op with NumPy on random
shapes and dtypes; this file pins down errors and the semantics NumPy and TensorFlow
leave to the implementation (integer wrap-around, division signs, empty reductions).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import tapeflow as tf

IAE = tf.errors.InvalidArgumentError


def raises(op, *fragments):
    """pytest.raises for an InvalidArgumentError ending with [Op:op] and containing each fragment."""
    pattern = "".join(f"(?=.*{re.escape(f)})" for f in fragments) + rf"(?s:.*)\[Op:{op}\]$"
    return pytest.raises(IAE, match=re.compile(pattern, re.DOTALL))


# ---- dtypes -----------------------------------------------------------------------------------------

def test_mixed_dtypes_are_rejected_naming_both():
    with raises("AddV2", "float32", "int32", "tf.cast"):
        tf.add(tf.constant([1.0]), tf.constant([1]))
    with raises("MatMul", "float64", "float32"):
        tf.matmul(tf.constant([[1.0]], tf.float64), tf.constant([[1.0]]))
    with raises("Maximum", "int64", "int32"):
        tf.maximum(tf.constant([1], tf.int64), tf.constant([1]))


def test_python_scalars_take_the_tensor_dtype_or_fail_precisely():
    assert tf.add(tf.constant([1], tf.int8), 2).dtype == tf.int8
    assert tf.multiply(2.5, tf.constant([1.0], tf.float16)).dtype == tf.float16
    with raises("AddV2", "1.5", "int32"):
        tf.add(tf.constant([1]), 1.5)
    with raises("AddV2", "300", "int8"):
        tf.add(tf.constant([1], tf.int8), 300)


@pytest.mark.parametrize("fn, arg, op", [
    (tf.sqrt, [4], "Sqrt"), (tf.exp, [1], "Exp"), (tf.math.real_div, ([1], [2]), "RealDiv"),
    (tf.logical_and, ([1], [0]), "LogicalAnd"), (tf.bitwise_and, ([1.0], [2.0]), "BitwiseAnd"),
    (tf.left_shift, ([1.0], [1.0]), "LeftShift"), (tf.add, ([True], [False]), "AddV2"),
    (tf.reduce_any, [1.0], "Any"), (tf.reduce_sum, [True], "Sum"), (tf.matmul, ([[True]], [[True]]), "MatMul"),
    (tf.math.reduce_variance, [1, 2], "ReduceVariance"), (tf.reduce_logsumexp, [1], "ReduceLogSumExp"),
    (tf.math.polygamma, (1, [1]), "Polygamma"), (tf.norm, [3, 4], "Norm"), (tf.clip_by_value, ([True], 0, 1),
                                                                           "ClipByValue"),
])
def test_unsupported_dtypes_list_the_allowed_ones(fn, arg, op):
    args = arg if isinstance(arg, tuple) else (arg,)
    with raises(op, "allowed"):
        fn(*args)


# ---- shapes and axes ----------------------------------------------------------------------------------

def test_incompatible_broadcast_names_both_shapes():
    with raises("AddV2", "(2, 3)", "(4,)", "equal or 1"):
        tf.add(tf.zeros([2, 3]), tf.zeros([4]))
    with raises("Less", "(3,)", "(2,)"):
        tf.less(tf.zeros([3]), tf.zeros([2]))
    with raises("FloorMod", "(2, 2)", "(3,)"):
        tf.zeros([2, 2]) % tf.ones([3])


@pytest.mark.parametrize("fn, op", [(tf.reduce_sum, "Sum"), (tf.reduce_max, "Max"), (tf.reduce_mean, "Mean"),
                                    (tf.reduce_logsumexp, "ReduceLogSumExp"),
                                    (tf.math.reduce_std, "ReduceStd"), (tf.math.count_nonzero, "CountNonzero")])
def test_axis_out_of_range(fn, op):
    x = tf.zeros([2, 3])
    with raises(op, "axis 2", "rank 2", "[-2, 2)"):
        fn(x, axis=2)
    with raises(op, "axis -3"):
        fn(x, axis=[0, -3])
    with raises(op, "repeats"):
        fn(x, axis=[1, -1])


def test_arg_reductions_reject_bad_axes_and_empty_axes():
    with raises("ArgMax", "axis 3", "allowed"):
        tf.argmax(tf.zeros([2, 3]), axis=3)
    with raises("ArgMin", "empty", "(2, 0)", "allowed"):
        tf.argmin(tf.zeros([2, 0]), axis=1)
    with raises("ArgMax", "scalar", "allowed: rank >= 1"):
        tf.argmax(tf.constant(1.0))
    with raises("ArgMax", "output_type = float32", "allowed"):
        tf.argmax(tf.zeros([3]), output_type=tf.float32)
    assert tf.argmax(tf.constant([[1, 5], [7, 2]]), axis=1, output_type=tf.int32).dtype == tf.int32


def test_matmul_shape_errors():
    with raises("MatMul", "inner dimensions differ", "(2, 3)", "(4, 5)"):
        tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5]))
    with raises("MatMul", "inner dimensions differ", "(3 vs 4)"):
        tf.matmul(tf.zeros([3, 2]), tf.zeros([4, 5]), transpose_a=True)
    with raises("MatMul", "rank >= 2", "(3,)"):
        tf.matmul(tf.zeros([3]), tf.zeros([3, 2]))
    with raises("MatMul", "(2,)", "(3,)"):
        tf.matmul(tf.zeros([2, 1, 4]), tf.zeros([3, 4, 1]))
    with raises("MatMul", "inner dimensions differ"):
        tf.zeros([2, 3]) @ tf.zeros([2, 3])


def test_linalg_shape_errors():
    with raises("MatrixDiagPartV3", "rank >= 2"):
        tf.linalg.diag_part(tf.zeros([3]))
    with raises("MatrixDiagPartV3", "k = 5", "allowed: [-2, 3]"):
        tf.linalg.diag_part(tf.zeros([3, 4]), k=5)
    with raises("MatrixDiagV3", "length 3", "2x2"):
        tf.linalg.diag(tf.zeros([3]), num_rows=2, num_cols=2)
    with raises("Trace", "rank >= 2"):
        tf.linalg.trace(tf.zeros([4]))
    with raises("Tensordot", "dimension 1 of a (size 3)", "dimension 0 of b (size 4)"):
        tf.tensordot(tf.zeros([2, 3]), tf.zeros([4, 5]), axes=[[1], [0]])
    with raises("Tensordot", "axes = 3", "allowed"):
        tf.tensordot(tf.zeros([2, 3]), tf.zeros([3, 5]), axes=3)
    with raises("Cross", "last axis of size 3"):
        tf.linalg.cross(tf.zeros([2]), tf.zeros([2]))


def test_einsum_errors():
    a = tf.zeros([2, 3])
    with raises("Einsum", "names 2 operands but 1"):
        tf.einsum("ij,jk->ik", a)
    with raises("Einsum", "label 'j'", "3", "4"):
        tf.einsum("ij,jk->ik", a, tf.zeros([4, 2]))
    with raises("Einsum", "rank 2"):
        tf.einsum("ijk->i", a)
    with raises("Einsum", "'z'", "no input"):
        tf.einsum("ij->z", a)
    with raises("Einsum", "allowed: letters"):
        tf.einsum("i1->i", a)
    with raises("Einsum", "dtype int32", "float32"):
        tf.einsum("ij,jk->ik", a, tf.zeros([3, 2], tf.int32))


def test_norm_errors():
    m = tf.ones([2, 3])
    with raises("Norm", "ord = 3", "matrix", "allowed: 'fro', 'euclidean', 1, 2, np.inf"):
        tf.norm(m, ord=3, axis=[0, 1])   # (ord=2 is the spectral norm: tests/test_linalg_lapack.py)
    with raises("Norm", "ord = -1", "allowed"):
        tf.norm(m, ord=-1)
    with raises("Norm", "'fro' is a matrix norm"):
        tf.norm(m, ord="fro", axis=1)
    with raises("Norm", "names one axis twice"):
        tf.norm(m, axis=[1, -1])


def test_clip_errors():
    with raises("ClipByValue", "clip_value_min = 2", "clip_value_max = 1", "allowed"):
        tf.clip_by_value(tf.zeros([3]), 2, 1)
    with raises("ClipByValue", "shape (4,)", "(3,)"):
        tf.clip_by_value(tf.zeros([3]), tf.zeros([4]), 1.0)
    with raises("ClipByNorm", "clip_norm = -1", "positive"):
        tf.clip_by_norm(tf.zeros([3]), -1.0)
    with raises("ClipByNorm", "clip_norm has shape (2,)", "scalar"):
        tf.clip_by_norm(tf.zeros([3]), tf.ones([2]))
    with raises("ClipByGlobalNorm", "a list or tuple"):
        tf.clip_by_global_norm(tf.zeros([3]), 1.0)


def test_polygamma_order_must_be_a_small_integer():
    with raises("Polygamma", "a = 1.5", "integer order"):
        tf.math.polygamma(1.5, tf.constant([1.0]))
    with raises("Polygamma", "a = -1"):
        tf.math.polygamma(-1, tf.constant([1.0]))
    with raises("Polygamma", "shape (2,)", "scalar"):
        tf.math.polygamma(tf.constant([1.0, 2.0]), tf.constant([1.0]))


# ---- values the kernels reject ------------------------------------------------------------------------

@pytest.mark.parametrize("fn, op", [(tf.floordiv, "FloorDiv"), (tf.math.floormod, "FloorMod"),
                                    (tf.math.truncatediv, "TruncateDiv"), (tf.math.truncatemod, "TruncateMod")])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_division_by_zero(fn, op, dtype):
    x = tf.constant([[7, 8, 9], [1, 2, 3]], dtype)
    for y in (tf.constant([1, 0, 2], dtype),        # broadcast (strided kernel)
              tf.constant([[1, 1, 1], [1, 0, 1]], dtype),  # same shape
              tf.constant(0, dtype)):                # scalar
        with raises(op, "integer division by zero", "allowed: non-zero"):
            fn(x, y)


def test_division_operators_by_zero():
    with raises("FloorDiv", "division by zero"):
        tf.constant([3]) // 0
    with raises("FloorMod", "division by zero"):
        tf.constant([3]) % tf.constant([0])
    # floats divide by zero to inf / nan, as IEEE says
    out = (tf.constant([1.0, -1.0, 0.0]) / 0.0).numpy()
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


def test_integer_negative_powers():
    with raises("Pow", "negative integer powers", "allowed: y >= 0"):
        tf.pow(tf.constant([2, 3]), tf.constant([1, -1]))
    with raises("Pow", "negative integer powers"):
        tf.constant([[2], [3]]) ** tf.constant([-2, 1])   # broadcast path
    # the defined cases: bases 1 and -1
    assert tf.pow(tf.constant([1, -1, -1]), tf.constant([-3, -1, -2])).numpy().tolist() == [1, -1, 1]
    assert tf.pow(tf.constant([2.0]), -1.0).numpy().tolist() == [0.5]


def test_truth_value_of_a_multi_element_tensor():
    with pytest.raises(IAE, match="truth value of a tensor with 2 elements"):
        bool(tf.constant([1, 2]) > 0)
    with pytest.raises(IAE, match="reduce_any"):
        if tf.equal(tf.constant([1, 2]), 1):
            pass
    assert bool(tf.constant([3]) > 2) is True


# ---- semantics at the edges -------------------------------------------------------------------------------

def test_integer_arithmetic_wraps_like_the_dtype():
    i8 = tf.constant([127, -128], tf.int8)
    assert (i8 + tf.constant(1, tf.int8)).numpy().tolist() == [-128, -127]
    assert (-i8).numpy().tolist() == [-127, -128]
    assert tf.abs(i8).numpy().tolist() == [127, -128]
    i64 = tf.constant([2 ** 62], tf.int64)
    assert (i64 * 4).numpy().tolist() == [0]
    assert tf.reduce_sum(tf.constant([100, 100], tf.int8)).numpy() == -56
    assert tf.reduce_mean(tf.constant([100, 100], tf.int8)).numpy() == 100   # the mean itself does not overflow
    mn = tf.constant([-2 ** 63], tf.int64)
    assert (mn // -1).numpy().tolist() == [-2 ** 63] and (mn % -1).numpy().tolist() == [0]


def test_floor_division_and_mod_follow_python():
    x, y = [7, -7, 7, -7], [2, 2, -2, -2]
    assert (tf.constant(x) // tf.constant(y)).numpy().tolist() == [a // b for a, b in zip(x, y)]
    assert (tf.constant(x) % tf.constant(y)).numpy().tolist() == [a % b for a, b in zip(x, y)]
    xf, yf = tf.constant([7.5, -7.5, 7.5, -7.5]), tf.constant([2.0, 2.0, -2.0, -2.0])
    assert (xf // yf).numpy().tolist() == [a // b for a, b in zip([7.5, -7.5, 7.5, -7.5], [2.0, 2.0, -2.0, -2.0])]
    assert (xf % yf).numpy().tolist() == [a % b for a, b in zip([7.5, -7.5, 7.5, -7.5], [2.0, 2.0, -2.0, -2.0])]
    assert tf.math.truncatemod(tf.constant([7, -7]), 2).numpy().tolist() == [1, -1]
    # a zero remainder takes the divisor's sign, and x mod inf keeps x when the signs agree
    r = tf.math.floormod(tf.constant([4.0, -1.5]), tf.constant([-2.0, np.inf])).numpy()
    assert r[0] == 0 and np.signbit(r[0]) and r[1] == np.inf


def test_nan_inf_and_signed_zeros():
    nan, inf = float("nan"), float("inf")
    assert np.isnan(tf.maximum(tf.constant([nan, 1.0]), tf.constant([1.0, nan])).numpy()).all()
    assert np.isnan(tf.reduce_max(tf.constant([1.0, nan, 3.0])).numpy())
    assert np.isnan(tf.reduce_min(tf.constant([nan, 1.0])).numpy())
    assert tf.argmax(tf.constant([1.0, nan, 5.0, nan])).numpy() == 1         # the first NaN, as NumPy
    assert tf.sign(tf.constant([-inf, inf, -0.0])).numpy().tolist() == [-1.0, 1.0, 0.0]
    assert tf.exp(tf.constant([-inf, inf, 100.0])).numpy().tolist() == [0.0, inf, inf]
    assert tf.log(tf.constant([0.0, -0.0, inf])).numpy().tolist() == [-inf, -inf, inf]
    assert np.isnan(tf.log(tf.constant([-1.0])).numpy()).all()
    assert tf.tanh(tf.constant([-inf, 20.0, -0.0])).numpy().tolist() == [-1.0, 1.0, 0.0]
    assert np.signbit(tf.tanh(tf.constant([-0.0])).numpy()[0])
    assert tf.relu(tf.constant([-0.0, -2.0])).numpy().tolist() == [0.0, 0.0]


def test_empty_reductions():
    e = tf.zeros([0, 3])
    assert tf.reduce_sum(e, axis=0).numpy().tolist() == [0.0] * 3
    assert tf.reduce_prod(e, axis=0).numpy().tolist() == [1.0] * 3
    assert np.isnan(tf.reduce_mean(e, axis=0).numpy()).all()
    assert tf.reduce_max(e, axis=0).numpy().tolist() == [-np.inf] * 3
    assert tf.reduce_min(tf.zeros([0], tf.int32)).numpy() == 2 ** 31 - 1
    assert tf.reduce_mean(tf.zeros([0], tf.int32)).numpy() == 0
    assert tf.reduce_logsumexp(e, axis=0).numpy().tolist() == [-np.inf] * 3
    assert tf.reduce_all(tf.zeros([0], tf.bool)).numpy() and not tf.reduce_any(tf.zeros([0], tf.bool)).numpy()


def test_large_reductions_use_every_path():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 50000)).astype(np.float32)
    for axis in (None, 0, 1, [0, 1]):
        np.testing.assert_allclose(tf.reduce_sum(x, axis=axis).numpy(), x.astype(np.float64).sum(axis=None if axis
                                   is None else tuple(np.atleast_1d(axis))), rtol=1e-5, atol=1e-3)
    big = np.arange(100001, dtype=np.float32)
    assert tf.reduce_max(big).numpy() == 100000 and tf.argmax(big).numpy() == 100000


def test_casts_saturate_and_round_half_types_once():
    f = tf.constant([np.nan, 1e20, -1e20, 2.7, -2.7])
    assert tf.cast(f, tf.int32).numpy().tolist() == [0, 2 ** 31 - 1, -2 ** 31, 2, -2]
    assert tf.cast(tf.constant([-1.5, 300.0]), tf.uint8).numpy().tolist() == [0, 255]
    assert tf.cast(tf.constant([-1, 256]), tf.uint8).numpy().tolist() == [255, 0]
    # 1 + 2**-11 + 2**-40 is just above a float16 tie: one rounding goes up, two would go to even
    v = tf.constant(np.array([1.0 + 2 ** -11 + 2 ** -40]))
    assert tf.cast(v, tf.float16).numpy().tolist() == [1.0009765625]
    w = tf.constant(np.array([1.0 + 2 ** -8 + 2 ** -40]))
    assert tf.cast(w, tf.bfloat16).numpy().astype(float).tolist() == [1.0078125]


def test_polygamma_and_digamma_values():
    assert abs(float(tf.math.polygamma(1, tf.constant(1.0, tf.float64))) - np.pi ** 2 / 6) < 1e-12
    assert abs(float(tf.math.digamma(tf.constant(1.0, tf.float64))) + 0.5772156649015329) < 1e-12
    assert abs(float(tf.math.polygamma(2, tf.constant(0.5, tf.float64))) + 16.828796644234319) < 1e-9


def test_composites_match_their_definitions():
    x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
    assert tf.clip_by_norm(x, 1.0, axes=[1]).numpy().tolist() == [[0.6000000238418579, 0.800000011920929],
                                                                  [0.0, 0.0]]
    clipped, norm = tf.clip_by_global_norm([x, None], 2.5)
    assert float(norm) == 5.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0].numpy(), x.numpy() / 2)
    nan_clipped, _ = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(nan_clipped[0].numpy()).all()
    assert tf.linalg.trace(tf.reshape(tf.range(9.0), [3, 3])).numpy() == 12.0
    assert tf.einsum("ij,ij->", x, x).numpy() == 25.0
    assert tf.tensordot(tf.constant([1, 2]), tf.constant([3, 4]), axes=1).numpy() == 11
    assert tf.math.count_nonzero(tf.constant([0.0, 1.0, -2.0])).numpy() == 2
    assert tf.truediv(tf.constant([1], tf.int16), tf.constant([2], tf.int16)).dtype == tf.float32
    assert tf.truediv(tf.constant([1]), tf.constant([2])).dtype == tf.float64


def test_variables_are_accepted_everywhere():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert tf.reduce_sum(v).numpy() == 10.0
    assert tf.matmul(v, v).numpy().tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert tf.norm(v, ord=1, axis=[0, 1]).numpy() == 6.0
    assert tf.clip_by_value(v, 2.0, 3.0).numpy().tolist() == [[2.0, 2.0], [3.0, 3.0]]


def test_factorisation_errors():
    with raises("MatrixInverse", "(2, 3)", "allowed: square matrices"):
        tf.linalg.inv(tf.zeros([2, 3]))
    with raises("MatrixInverse", "dtype int32", "allowed: float32"):
        tf.linalg.inv(tf.constant([[1, 0], [0, 1]]))
    with raises("MatrixInverse", "matrix #1 of the batch", "singular", "allowed: invertible"):
        tf.linalg.inv(tf.constant([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))
    with raises("MatrixSolve", "singular"):
        tf.linalg.solve(tf.zeros([2, 2]), tf.ones([2, 1]))
    with raises("MatrixSolve", "rhs needs 2 rows", "[..., 2, K]"):
        tf.linalg.solve(tf.eye(2), tf.ones([3, 1]))
    with raises("MatrixSolve", "float64", "float32"):
        tf.linalg.solve(tf.eye(2), tf.ones([2, 1], tf.float64))
    with raises("Cholesky", "not positive definite", "allowed: symmetric positive-definite"):
        tf.linalg.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]]))
    with raises("MatrixTriangularSolve", "rank >= 2"):
        tf.linalg.triangular_solve(tf.eye(2), tf.ones([2]))
    with raises("MatrixBandPart", "num_lower = -2", "allowed"):
        tf.linalg.band_part(tf.ones([2, 2]), -2, 0)
    # a singular matrix has determinant 0 and log|det| = -inf, not an error
    assert tf.linalg.det(tf.constant([[1.0, 2.0], [2.0, 4.0]])).numpy() == 0.0
    sign, logabs = tf.linalg.slogdet(tf.constant([[1.0, 2.0], [2.0, 4.0]]))
    assert sign.numpy() == 0.0 and logabs.numpy() == -np.inf


def test_add_n_needs_one_shape():
    with raises("AddN", "inputs is empty", "allowed"):
        tf.add_n([])
    with raises("AddN", "inputs #1 has shape (2,)", "(3,)", "one shape"):
        tf.add_n([tf.zeros([3]), tf.zeros([2])])
    with raises("AddN", "int32"):
        tf.add_n([tf.zeros([3]), tf.zeros([3], tf.int32)])
    assert tf.add_n([tf.ones([2]), [1.0, 2.0]]).numpy().tolist() == [2.0, 3.0]


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_float_predicates_store_booleans_as_zero_or_one(dtype):
    # a bool tensor's bytes are 0 or 1 (gcc's isinf gives -1 for -inf: that byte was 255, and a cast of
    # the bool to float32 summed to 256 over [-inf, inf])
    x = tf.constant([-np.inf, np.inf, np.nan, -0.0, 1.0], dtype)
    for fn in (tf.math.is_inf, tf.math.is_nan, tf.math.is_finite):
        assert fn(x).numpy().view(np.uint8).max() <= 1, fn.__name__
    assert tf.reduce_sum(tf.cast(tf.math.is_inf(x), tf.float32)).numpy() == 2.0
