"""tf.debugging: assertions pass silently, fail with typed errors naming the values; check_numerics."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.core

IAE = tf.errors.InvalidArgumentError


def test_asserts_that_hold_return_none():
    x = tf.constant([1, 2, 3])
    assert tf.debugging.assert_equal(x, [1, 2, 3]) is None
    assert tf.debugging.assert_equal(tf.zeros([32, 10]).shape, (32, 10)) is None   # the R guide's example
    assert tf.debugging.assert_none_equal(x, 0) is None
    assert tf.debugging.assert_less(x, 4) is None
    assert tf.debugging.assert_less_equal(x, 3) is None
    assert tf.debugging.assert_greater(x, 0) is None
    assert tf.debugging.assert_greater_equal(x, 1) is None
    assert tf.debugging.assert_positive(x) is None
    assert tf.debugging.assert_negative(-x) is None
    assert tf.debugging.assert_non_negative(x - 1) is None
    assert tf.debugging.assert_non_positive(1 - x) is None
    assert tf.debugging.assert_near(tf.constant([1.0, 2.0]), [1.0, 2.0000001]) is None
    assert tf.debugging.assert_rank(x, 1) is None
    assert tf.debugging.assert_rank_at_least(x, 1) is None
    assert tf.debugging.assert_rank_in(x, [0, 1]) is None
    assert tf.debugging.assert_scalar(tf.constant(1.0)) is None
    assert tf.debugging.assert_type(x, tf.int32) is None
    # empty tensors satisfy every element-wise condition
    assert tf.debugging.assert_less(tf.zeros([0]), tf.zeros([0])) is None


def test_assert_equal_names_the_failing_entries():
    with pytest.raises(IAE) as e:
        tf.debugging.assert_equal(tf.constant([[1, 2], [3, 4]]), [[1, 0], [3, 5]], message="weights drifted")
    msg = str(e.value)
    assert msg.startswith("weights drifted\nCondition x == y did not hold element-wise.")
    assert "Indices of first 2 of 2 failing values: [[0, 1], [1, 1]]" in msg
    assert "Corresponding x values: [2 4]" in msg and "Corresponding y values: [0 5]" in msg
    assert "x (shape=(2, 2), dtype=int32) = [1 2 3]" in msg
    assert msg.endswith("[Op:AssertEqual]")


def test_summarize_limits_what_is_printed():
    with pytest.raises(IAE) as e:
        tf.debugging.assert_positive(-tf.ones([10]), summarize=2)
    msg = str(e.value)
    assert "Indices of first 2 of 10 failing values: [[0], [1]]" in msg
    assert "... (10 values)" in msg and msg.endswith("[Op:AssertPositive]")


@pytest.mark.parametrize("fn, args, sym, op", [
    (tf.debugging.assert_less, ([1, 5], 3), "x < y", "AssertLess"),
    (tf.debugging.assert_less_equal, ([1, 5], 3), "x <= y", "AssertLessEqual"),
    (tf.debugging.assert_greater, ([1, 5], 3), "x > y", "AssertGreater"),
    (tf.debugging.assert_greater_equal, ([1, 5], 3), "x >= y", "AssertGreaterEqual"),
    (tf.debugging.assert_none_equal, ([1, 5], 5), "x != y", "AssertNoneEqual"),
    (tf.debugging.assert_positive, ([1, 0],), "x > 0", "AssertPositive"),
    (tf.debugging.assert_negative, ([-1, 0],), "x < 0", "AssertNegative"),
    (tf.debugging.assert_non_negative, ([1, -1],), "x >= 0", "AssertNonNegative"),
    (tf.debugging.assert_non_positive, ([-1, 1],), "x <= 0", "AssertNonPositive"),
])
def test_comparison_asserts_fail_with_the_condition(fn, args, sym, op):
    args = (tf.constant(args[0]),) + args[1:]
    with pytest.raises(IAE, match=rf"(?s)^Condition {sym} did not hold.*\[Op:{op}\]$") as e:
        fn(*args)
    assert isinstance(e.value, ValueError)   # InvalidArgumentError is also a ValueError


def test_bad_assert_inputs():
    with pytest.raises(IAE, match=r"x has dtype float32 but y has dtype int32.*\[Op:AssertEqual\]"):
        tf.debugging.assert_equal(tf.constant([1.0]), tf.constant([1]))
    with pytest.raises(IAE, match=r"incompatible shapes: \(2,\) vs\. \(3,\).*\[Op:AssertLess\]"):
        tf.debugging.assert_less(tf.zeros([2]), tf.ones([3]))
    with pytest.raises(IAE, match=r"dtype bool; allowed: .*\[Op:AssertLess\]"):
        tf.debugging.assert_less(tf.constant([True]), tf.constant([False]))
    with pytest.raises(IAE, match=r"cannot convert 1.5 to int32.*\[Op:AssertEqual\]"):
        tf.debugging.assert_equal(tf.constant([1]), 1.5)
    with pytest.raises(IAE, match=r"dtype int32; allowed: float32.*\[Op:AssertNear\]"):
        tf.debugging.assert_near(tf.constant([1]), [1])


def test_assert_near_tolerances():
    x = tf.constant([1.0, 2.0], tf.float64)
    tf.debugging.assert_near(x, [1.0 + 1e-15, 2.0])
    with pytest.raises(IAE, match=r"(?s)\|x - y\| <= atol \+ rtol \* \|y\|.*\[\[1\]\].*\[Op:AssertNear\]"):
        tf.debugging.assert_near(x, [1.0, 2.1])
    tf.debugging.assert_near(x, [1.0, 2.1], atol=0.2)
    tf.debugging.assert_near(x, [1.0, 2.1], rtol=0.1)
    with pytest.raises(IAE):
        tf.debugging.assert_near(tf.constant([np.nan]), [np.nan])   # NaN never passes


def test_rank_asserts():
    with pytest.raises(IAE, match=r"x must have rank 2; received rank 1 \(shape \(3,\)\) \[Op:AssertRank\]"):
        tf.debugging.assert_rank(tf.zeros([3]), 2)
    with pytest.raises(IAE, match=r"rank at least 3; received rank 2.*\[Op:AssertRankAtLeast\]"):
        tf.debugging.assert_rank_at_least(tf.zeros([3, 1]), 3)
    with pytest.raises(IAE, match=r"rank in \[0, 2\]; received rank 1.*\[Op:AssertRankIn\]"):
        tf.debugging.assert_rank_in(tf.zeros([3]), [0, 2])
    with pytest.raises(IAE, match=r"expected a scalar; received shape \(1,\).*\[Op:AssertScalar\]"):
        tf.debugging.assert_scalar(tf.zeros([1]))
    with pytest.raises(IAE, match=r"rank = 1.5; allowed: an integer"):
        tf.debugging.assert_rank(tf.zeros([3]), 1.5)
    tf.debugging.assert_rank(tf.zeros([2, 2]), tf.constant(2))


def test_assert_type_is_a_type_error_too():
    with pytest.raises(TypeError, match=r"tensor has dtype float32; allowed: int64 \[Op:AssertType\]"):
        tf.debugging.assert_type(tf.zeros([2]), tf.int64)
    with pytest.raises(IAE):
        tf.debugging.assert_type(tf.zeros([2]), "float64")


def test_assert_shapes():
    x, y, z = tf.zeros([4, 3]), tf.zeros([4]), tf.zeros([7, 5, 4, 2])
    tf.debugging.assert_shapes([(x, ("N", 3)), (y, ("N",)), (z, ("...", "N", None)), (tf.constant(1.0), ())])
    tf.debugging.assert_shapes([(x, ["N", "."]), (z, ("*", 2))])
    with pytest.raises(IAE, match=r"tensor #1 dimension 0 \(symbol 'N'\) must have size 4, as set by tensor #0 "
                                  r"dimension 0; received size 5, shape \(5,\) \[Op:AssertShapes\]"):
        tf.debugging.assert_shapes([(x, ("N", 3)), (tf.zeros([5]), ("N",))])
    with pytest.raises(IAE, match=r"tensor #0 dimension 1 must have size 2; received size 3"):
        tf.debugging.assert_shapes([(x, ("N", 2))])
    with pytest.raises(IAE, match=r"tensor #0 has shape \(4, 3\).*rank 2, allowed rank 3"):
        tf.debugging.assert_shapes([(x, ("A", "B", "C"))])
    with pytest.raises(IAE, match=r"allowed rank >= 3"):
        tf.debugging.assert_shapes([(x, ("...", "A", "B", "C"))])
    with pytest.raises(IAE, match=r"entry 2.5; allowed"):
        tf.debugging.assert_shapes([(x, (2.5, 3))])
    with pytest.raises(IAE, match=r"shapes entry #0.*\(tensor, shape spec\) pairs"):
        tf.debugging.assert_shapes([x])


def test_check_numerics_and_assert_all_finite():
    x = tf.constant([1.0, 2.0])
    assert tf.debugging.check_numerics(x, "ok").numpy().tolist() == [1.0, 2.0]
    assert tf.debugging.assert_all_finite(x, "ok").numpy().tolist() == [1.0, 2.0]
    with pytest.raises(IAE, match=r"^logits : Tensor had NaN values \[Op:CheckNumerics\]$"):
        tf.debugging.check_numerics(tf.constant([0.0, np.nan]), "logits")
    with pytest.raises(IAE, match=r"^w : Tensor had Inf values \[Op:CheckNumerics\]$"):
        tf.debugging.assert_all_finite(tf.constant([-np.inf], tf.float16), "w")
    with pytest.raises(IAE, match=r"Tensor had Inf and NaN values"):
        tf.debugging.check_numerics(tf.constant([np.inf, np.nan], tf.float64), "both")
    with pytest.raises(IAE, match=r"dtype int32; allowed: float.*\[Op:CheckNumerics\]"):
        tf.debugging.check_numerics(tf.constant([1]), "ints")
    assert "check_numerics" in tapeflow.core.REGISTRY


def test_asserts_check_each_time_a_compiled_function_runs():
    """Inside tf.function the condition is symbolic: the check is a graph node that raises when the graph runs
    (TensorFlow's assert ops), on the values of that call."""

    @tf.function
    def f(x, y):
        tf.debugging.assert_equal(x, y, message="mismatch")
        tf.debugging.assert_positive(x)
        tf.debugging.assert_near(x, y)
        return x + 1.0

    assert f(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 3.0]
    with pytest.raises(IAE, match=r"mismatch\nCondition x == y did not hold"):
        f(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]))
    with pytest.raises(IAE, match=r"Condition x > 0 did not hold"):
        f(tf.constant([-1.0, 2.0]), tf.constant([-1.0, 2.0]))
