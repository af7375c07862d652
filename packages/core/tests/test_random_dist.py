"""tf.random.gamma / poisson / stateless_binomial & co.: TensorFlow's shapes, edge values and seed rules, the
distributions' moments, the implicit gradient, graphs, and Generator's remaining methods.  (The values
themselves are checked element by element against a re-implementation in tests/specs/random_dist.py.)"""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError


def _np(t):
    return np.asarray(t.numpy(), np.float64)


# ---- shapes and edge values, as TensorFlow ----------------------------------------------------------------

def test_gamma_shapes_follow_tensorflow():
    assert tf.random.gamma([2, 3], [[1.0], [2.0]], beta=[1.0, 2.0, 3.0], seed=1).shape == (2, 3, 2, 3)
    assert tf.random.gamma([4], 2.0, seed=1).shape == (4,)
    assert tf.random.stateless_gamma([4, 3], seed=[1, 2], alpha=[1.0, 2.0, 3.0]).shape == (4, 3)
    with pytest.raises(InvalidArgumentError, match="StatelessRandomGammaV3"):
        tf.random.stateless_gamma([4, 3], seed=[1, 2], alpha=[1.0, 2.0])


def test_gamma_edge_values_follow_tensorflow():
    # TensorFlow 2.21: alpha = 0 gives the smallest normal float32, alpha < 0 and NaN give NaN
    x = _np(tf.random.gamma([2], [0.0, -1.0, float("nan"), 0.5], seed=1))
    assert (x[:, 0] == np.finfo(np.float32).tiny).all()
    assert np.isnan(x[:, 1:3]).all() and (x[:, 3] > 0).all()
    assert (_np(tf.random.gamma([50], [1e-3], dtype=tf.float64, seed=2)) >= np.finfo(np.float64).tiny).all()


def test_poisson_and_binomial_edge_values_follow_tensorflow():
    x = _np(tf.random.poisson([3], [0.0, -1.0, 2.5], seed=1))
    assert (x[:, :2] == 0).all()
    b = tf.random.stateless_binomial([2], seed=[1, 2], counts=[10.0, -1.0], probs=[1.5, 0.1])
    assert b.dtype == tf.int32 and b.numpy().tolist() == [10, 0]   # TensorFlow 2.21 gives [10, 0]
    assert tf.random.poisson([3], [2.5], dtype=tf.int64, seed=1).shape == (3, 1)
    assert tf.random.stateless_poisson([3, 2], seed=[1, 2], lam=[1.0, 100.0]).dtype == tf.int32


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32, tf.int64])
def test_count_dtypes(dtype):
    x = tf.random.stateless_poisson([5], seed=[3, 4], lam=4.0, dtype=dtype)
    y = tf.random.stateless_binomial([5], seed=[3, 4], counts=8.0, probs=0.5, output_dtype=dtype)
    assert x.dtype == dtype and y.dtype == dtype
    assert (_np(x) >= 0).all() and (_np(y) <= 8).all()


# ---- the distributions (seeded: deterministic) ------------------------------------------------------------

@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0, 50.0])
def test_gamma_moments(alpha):
    x = _np(tf.random.stateless_gamma([200_000], seed=[3, 4], alpha=alpha, beta=2.0, dtype=tf.float64))
    assert abs(x.mean() - alpha / 2) < 0.01 * alpha / 2 + 0.002
    assert abs(x.var() - alpha / 4) < 0.03 * alpha / 4


@pytest.mark.parametrize("lam", [0.5, 5.0, 30.0, 1000.0])
def test_poisson_moments(lam):
    x = _np(tf.random.stateless_poisson([200_000], seed=[3, 4], lam=lam, dtype=tf.float64))
    assert abs(x.mean() - lam) < 0.01 * lam and abs(x.var() - lam) < 0.03 * lam
    assert (x == np.floor(x)).all()


@pytest.mark.parametrize("n,p", [(10, 0.3), (100, 0.5), (1000, 0.9), (5, 0.99), (20000, 0.001)])
def test_binomial_moments(n, p):
    x = _np(tf.random.stateless_binomial([200_000], seed=[3, 4], counts=float(n), probs=p,
                                         output_dtype=tf.float64))
    assert abs(x.mean() - n * p) < 0.01 * n * p and abs(x.var() - n * p * (1 - p)) < 0.03 * n * p * (1 - p)
    assert x.min() >= 0 and x.max() <= n


def test_poisson_pmf_small_rate():
    x = tf.random.stateless_poisson([100_000], seed=[9, 9], lam=2.0).numpy()
    freq = np.bincount(x, minlength=6)[:6] / x.size
    pmf = np.exp(-2.0) * 2.0 ** np.arange(6) / np.array([1, 1, 2, 6, 24, 120])
    assert np.abs(freq - pmf).max() < 0.005


# ---- seeds ------------------------------------------------------------------------------------------------

def test_stateless_draws_depend_only_on_the_seed():
    a = tf.random.stateless_gamma([3, 2], seed=[5, 6], alpha=[1.0, 3.0])
    b = tf.random.stateless_gamma([3, 2], seed=[5, 6], alpha=[1.0, 3.0])
    c = tf.random.stateless_gamma([3, 2], seed=[5, 7], alpha=[1.0, 3.0])
    assert np.array_equal(_np(a), _np(b)) and not np.array_equal(_np(a), _np(c))


def test_stateful_draws_follow_the_global_seed():
    tf.random.set_seed(11)
    a = [_np(tf.random.gamma([4], 2.0)), _np(tf.random.poisson([4], 3.0))]
    tf.random.set_seed(11)
    b = [_np(tf.random.gamma([4], 2.0)), _np(tf.random.poisson([4], 3.0))]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(_np(tf.random.gamma([4], 2.0, seed=1)), _np(tf.random.gamma([4], 2.0, seed=1)))


def test_compiled_draws_equal_eager_and_are_fresh_per_call():
    @tf.function
    def draw():
        return tf.random.gamma([3], 2.0, seed=4), tf.random.poisson([3], 5.0, seed=4)

    tf.random.set_seed(3)
    eager = [(_np(tf.random.gamma([3], 2.0, seed=4)), _np(tf.random.poisson([3], 5.0, seed=4))) for _ in range(2)]
    tf.random.set_seed(3)
    compiled = [tuple(_np(t) for t in draw()) for _ in range(2)]
    for (eg, ep), (cg, cp) in zip(eager, compiled):
        assert np.array_equal(eg, cg) and np.array_equal(ep, cp)
    assert not np.array_equal(compiled[0][0], compiled[1][0])


# ---- the implicit gradient --------------------------------------------------------------------------------

def test_gamma_grad_equals_tensorflows():
    # tf.raw_ops.RandomGammaGrad(alpha=[0.5, 2, 10], sample=[0.3, 1.5, 12]) in TensorFlow 2.21
    g = tf.random.experimental.random_gamma_grad(tf.constant([0.5, 2.0, 10.0]), tf.constant([0.3, 1.5, 12.0]))
    np.testing.assert_allclose(_np(g), [1.0098021, 0.93663883, 1.1123295], rtol=2e-6)


# ---- Generator ------------------------------------------------------------------------------------------

def test_generator_binomial_state_and_skip():
    g = tf.random.Generator.from_seed(7)
    h = tf.random.Generator.from_state(g.state)
    x = g.binomial([4, 2], counts=[5.0, 50.0], probs=0.4)
    assert x.dtype == tf.int32 and x.shape == (4, 2)
    assert np.array_equal(x.numpy(), h.binomial([4, 2], counts=[5.0, 50.0], probs=0.4).numpy())
    k = tf.random.Generator.from_seed(7)
    k.skip(1)
    assert np.array_equal(g.normal([3]).numpy(), k.normal([3]).numpy())
    k.reset_from_seed(7)
    assert k.state.numpy().tolist() == tf.random.Generator.from_seed(7).state.numpy().tolist()
    k.reset_from_key_counter(5, 9)
    assert k.state.numpy().tolist() == [9, 0, 5]
    k.reset([1, 0, 2])
    assert (k.key, k.counter) == (2, 1)


# ---- bad input ----------------------------------------------------------------------------------------------

def test_bad_input_names_the_op():
    with pytest.raises(InvalidArgumentError, match=r"allowed: float16, bfloat16, float32, float64.*RandomGamma"):
        tf.random.gamma([2], 1.0, dtype=tf.int32)
    with pytest.raises(InvalidArgumentError, match="RandomPoissonV2"):
        tf.random.poisson([2], 1.0, dtype=tf.bool)
    with pytest.raises(InvalidArgumentError, match="StatelessRandomBinomial"):
        tf.random.stateless_binomial([3], seed=[1, 2], counts=[1.0, 2.0], probs=0.5)
    with pytest.raises(InvalidArgumentError, match="StatelessRandomPoisson"):
        tf.random.stateless_poisson([2], seed=[1], lam=1.0)
    with pytest.raises(InvalidArgumentError, match="Generator.from_state"):
        tf.random.Generator.from_state([1, 2])
