"""check_gradients: passes correct gradients, catches wrong ones, reports readably."""
import numpy as np
import pytest
import tapeflow as tf
from tapeflow.autodiff import check_gradients, record, register_gradient


def _wrong_square(x):
    y = x * x
    out = tf.identity(y)
    record("test_wrong_square", [x], out)
    return out


@register_gradient("test_wrong_square")
def _wrong_square_grad(g, ans, x):
    return (g * 2.1 * x,)   # deliberately 5% off


def test_correct_gradients_pass_first_and_second_order():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.uniform(0.5, 2.0, (3, 4)))
    y = tf.constant(rng.uniform(0.5, 2.0, (4,)))
    r = check_gradients(lambda a, b: a * a * b, [x, y])
    assert r.ok and bool(r) and r.max_abs_error < 1e-7
    assert len(r.rows) == 2 and r.rows[0]["checked"] == "12/12"
    r2 = check_gradients(lambda a, b: a * a * b, [x, y], order=2)
    assert r2.ok, str(r2)
    assert "ok (order 2, float64" in str(r2)


def test_wrong_gradient_fails_with_a_readable_report():
    x = tf.constant(np.array([0.5, 1.0, 2.0]))
    r = check_gradients(_wrong_square, [x])
    assert not r.ok
    text = str(r)
    assert "check_gradients(_wrong_square): FAILED" in text
    assert "arg 0 at (2,): tape" in text and "numeric" in text
    with pytest.raises(AssertionError, match="FAILED"):
        check_gradients(_wrong_square, [x], raise_on_failure=True)


def test_large_arguments_use_random_directions_and_float32_loose_tolerances():
    x = tf.constant(np.linspace(-1, 1, 100).astype(np.float32))
    r = check_gradients(lambda a: a * a * a, [x], max_elements=10)
    assert r.ok, str(r)
    assert r.rows[0]["checked"] == "8 dirs" and r.dtype == "float32"


def test_wrt_and_bad_arguments():
    x, n = tf.constant(np.array([1.0, 2.0])), tf.constant([1, 2])
    r = check_gradients(lambda a, k: a * tf.cast(k, tf.float64), [x, n])
    assert [row["arg"] for row in r.rows] == [0]
    with pytest.raises(ValueError, match="no floating-point argument"):
        check_gradients(lambda k: k * 2, [n])
    with pytest.raises(ValueError, match="order must be >= 1"):
        check_gradients(lambda a: a, [x], order=0)


def _nan_grad_square(x):
    out = tf.identity(x * x)
    record("test_nan_grad_square", [x], out)
    return out


@register_gradient("test_nan_grad_square")
def _nan_grad(g, ans, x):
    return (g * 2.0 * x / (x - x),)   # inf/nan where the function is smooth


def test_non_finite_values():
    # exp(800) overflows: the numeric differences are NaN and nothing is compared
    r = check_gradients(lambda a: tf.exp(a), [tf.constant(np.array([800.0, 1.0]))])
    assert r.ok and "(2 not comparable: the function overflows)" in str(r), str(r)
    # a tape gradient that is not finite where the function is smooth is a failure
    r = check_gradients(_nan_grad_square, [tf.constant(np.array([1.0, 2.0]))])
    text = str(r)
    assert not r.ok and ("tape nan vs numeric" in text or "tape inf vs numeric" in text), text
