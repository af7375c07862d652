"""tf.random: the Philox kernel, seed semantics, distributions (fixed seeds, generous bounds), errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.ops import random_ops
from tapeflow.core.testing import raises_invalid_argument as _raises


@pytest.fixture(autouse=True)
def _no_global_seed():
    tf.random.set_seed(None)
    yield
    tf.random.set_seed(None)


def _philox(ctr, key, nblocks=1):
    from tapeflow.kernels import get_backend

    be = get_backend("cpu")
    c, k = be.ffi.new("uint32_t[4]", ctr), be.ffi.new("uint32_t[2]", key)
    out = be.ffi.new("uint32_t[]", 4 * nblocks)
    assert be.philox4x32_10(c, k, out, nblocks) == 0
    return [int(v) for v in out]


# ---- the generator itself -------------------------------------------------------

# Random123 v1.14.0, tests/kat_vectors, the "philox4x32 10" lines: counter, key, output
KAT = [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
]


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_philox_known_answers(ctr, key, want):
    assert _philox(ctr, key) == want


def test_philox_blocks_step_the_counter_with_carry():
    ctr, key = [0xFFFFFFFE, 0xFFFFFFFF, 7, 0], [1, 2]
    blocks = _philox(ctr, key, 3)
    assert blocks[4:8] == _philox([0xFFFFFFFF, 0xFFFFFFFF, 7, 0], key)
    assert blocks[8:12] == _philox([0, 0, 8, 0], key)


def test_uniform_is_the_documented_function_of_philox_words():
    # element i of a float32 uniform is (w[i] >> 8) * 2^-24, w the words of stream (key, stream)
    key, stream = 0x0123456789ABCDEF, 5
    words = _philox([0, 0, stream, 0], [key & 0xFFFFFFFF, key >> 32], 2)
    got = tf.random.stateless_uniform([7], seed=[key, stream]).numpy()
    want = np.array([(w >> 8) * 2.0 ** -24 for w in words[:7]], np.float32)
    np.testing.assert_array_equal(got, want)


def test_splitmix64_reference_values():
    # Vigna's splitmix64.c from state 0: the first outputs
    x, outs = 0, []
    for _ in range(3):
        outs.append(random_ops.splitmix64(x))
        x = (x + 0x9E3779B97F4A7C15) % (1 << 64)
    assert outs == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


# ---- distributions ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_normal_moments(dtype):
    x = tf.random.normal([100_000], dtype=dtype, seed=11).numpy().astype(np.float64)
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1) < 0.02
    assert abs(np.mean(x ** 3)) < 0.05            # symmetric
    assert abs(np.mean(x ** 4) - 3) < 0.15        # normal kurtosis
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 0.02  # neighbours independent


def test_normal_mean_and_stddev_parameters():
    x = tf.random.normal([100_000], mean=5.0, stddev=3.0, seed=2).numpy()
    assert abs(x.mean() - 5) < 0.05 and abs(x.std() - 3) < 0.05
    # tensor parameters broadcast against the sample
    y = tf.random.normal([50_000, 2], mean=tf.constant([0.0, 10.0]), stddev=tf.constant([1.0, 0.1]), seed=3).numpy()
    assert abs(y[:, 1].mean() - 10) < 0.01 and abs(y[:, 1].std() - 0.1) < 0.01


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_truncated_normal_stays_within_two_stddev(dtype):
    x = tf.random.truncated_normal([100_000], mean=1.0, stddev=2.0, dtype=dtype, seed=5).numpy()
    assert x.min() >= 1 - 4 and x.max() <= 1 + 4
    assert abs(x.mean() - 1) < 0.03
    # the standard normal truncated to [-2, 2] has stddev 0.8796
    assert abs(x.std() / 2 - 0.8796) < 0.01


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16])
def test_uniform_range_and_flatness(dtype):
    x = tf.random.uniform([100_000], dtype=dtype, seed=9)
    assert x.dtype == dtype
    v = x.numpy().astype(np.float64)
    assert v.min() >= 0 and v.max() < 1
    if dtype in (tf.float32, tf.float64):
        counts = np.histogram(v, bins=10, range=(0, 1))[0]
        chi2 = ((counts - 10_000) ** 2 / 10_000).sum()
        assert chi2 < 40  # 9 degrees of freedom: p < 1e-5 above 40


def test_uniform_bounds():
    v = tf.random.uniform([100_000], -3.0, 2.0, seed=1).numpy()
    assert v.min() >= -3 and v.max() < 2 and abs(v.mean() + 0.5) < 0.03
    # a range so narrow that lo + u * width rounds up to hi: still strictly below hi
    lo = np.float32(1.0)
    hi = np.nextafter(lo, np.float32(2))
    w = tf.random.uniform([10_000], float(lo), float(hi), seed=2).numpy()
    assert (w == lo).all()


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_integer_uniform_covers_the_range(dtype):
    x = tf.random.uniform([20_000], -3, 7, dtype=dtype, seed=4)
    assert x.dtype == dtype
    v = x.numpy()
    assert set(v.tolist()) == set(range(-3, 7))
    counts = np.bincount(v + 3)
    assert counts.min() > 1700 and counts.max() < 2300


def test_integer_uniform_extreme_ranges():
    v = tf.random.uniform([10_000], -(2 ** 31), 2 ** 31 - 1, dtype=tf.int32, seed=1).numpy()
    assert v.min() < -(2 ** 30) and v.max() > 2 ** 30
    w = tf.random.uniform([10_000], -(2 ** 62), 2 ** 62, dtype=tf.int64, seed=1).numpy()
    assert w.min() < -(2 ** 61) and w.max() > 2 ** 61
    assert (tf.random.uniform([100], 5, 6, dtype=tf.int32, seed=1).numpy() == 5).all()


def test_categorical_frequencies():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    s = tf.random.categorical(tf.math.log(tf.constant([probs], tf.float32)), 100_000, seed=6)
    assert s.shape == (1, 100_000) and s.dtype == tf.int64
    freq = np.bincount(s.numpy()[0], minlength=4) / 100_000
    np.testing.assert_allclose(freq, probs, atol=0.01)


def test_categorical_never_draws_a_minus_inf_class():
    logits = tf.constant([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, 3.0]])
    s = tf.random.categorical(logits, 1000, dtype=tf.int32, seed=1).numpy()
    assert s.dtype == np.int32
    assert 1 not in s[0] and set(s[0].tolist()) == {0, 2}
    assert (s[1] == 2).all()


def test_shuffle_permutes_rows():
    x = tf.reshape(tf.range(20), [10, 2])
    y = tf.random.shuffle(x, seed=3).numpy()
    assert sorted(map(tuple, y.tolist())) == sorted(map(tuple, x.numpy().tolist()))
    assert (y[:, 1] - y[:, 0] == 1).all()  # rows move whole
    seen = {tuple(tf.random.shuffle(tf.constant([0, 1, 2])).numpy().tolist()) for _ in range(200)}
    assert len(seen) == 6  # every permutation of three appears


# ---- seed semantics (TensorFlow's rules) -------------------------------------------------

def test_set_seed_makes_the_sequence_reproducible():
    tf.random.set_seed(5)
    a, b = tf.random.uniform([4]).numpy(), tf.random.normal([4]).numpy()
    tf.random.set_seed(5)
    a2, b2 = tf.random.uniform([4]).numpy(), tf.random.normal([4]).numpy()
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    tf.random.set_seed(6)
    assert not np.array_equal(tf.random.uniform([4]).numpy(), a)


def test_op_seed_gives_a_reproducible_stream_whose_calls_differ():
    tf.random.set_seed(1)
    first, second = tf.random.uniform([3], seed=7).numpy(), tf.random.uniform([3], seed=7).numpy()
    assert not np.array_equal(first, second)
    tf.random.set_seed(1)
    np.testing.assert_array_equal(tf.random.uniform([3], seed=7).numpy(), first)
    np.testing.assert_array_equal(tf.random.uniform([3], seed=7).numpy(), second)
    tf.random.set_seed(1)
    assert not np.array_equal(tf.random.uniform([3], seed=8).numpy(), first)


def test_op_seed_is_independent_of_other_ops_in_between():
    tf.random.set_seed(1)
    a = tf.random.uniform([3], seed=7).numpy()
    tf.random.set_seed(1)
    tf.random.normal([5])  # an unseeded op in between
    np.testing.assert_array_equal(tf.random.uniform([3], seed=7).numpy(), a)


def test_no_seed_gives_fresh_numbers():
    a, b = tf.random.uniform([8]).numpy(), tf.random.uniform([8]).numpy()
    assert not np.array_equal(a, b)


_SNIPPET = "import tapeflow as tf; print(tf.random.uniform([3]{}).numpy().tolist())"


def _in_subprocess(code):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=env).stdout


def test_op_seed_alone_is_reproducible_across_runs_and_no_seed_is_not():
    seeded = _SNIPPET.format(", seed=3")
    assert _in_subprocess(seeded) == _in_subprocess(seeded)
    fresh = _SNIPPET.format("")
    assert _in_subprocess(fresh) != _in_subprocess(fresh)


def test_get_seed():
    assert tf.random.get_seed(None) == (None, None)
    assert tf.random.get_seed(4) == (random_ops.DEFAULT_GLOBAL_SEED, 4)
    tf.random.set_seed(3)
    assert tf.random.get_seed(4) == (3, 4)


def test_stateless_depends_only_on_the_seed():
    a = tf.random.stateless_normal([5], seed=[1, 2]).numpy()
    tf.random.set_seed(99)
    tf.random.uniform([3])
    np.testing.assert_array_equal(tf.random.stateless_normal([5], seed=tf.constant([1, 2])).numpy(), a)
    assert not np.array_equal(tf.random.stateless_normal([5], seed=[2, 1]).numpy(), a)
    u = tf.random.stateless_uniform([4], seed=[3, 4], minval=0, maxval=100, dtype=tf.int64).numpy()
    assert u.dtype == np.int64 and ((u >= 0) & (u < 100)).all()


def test_generator():
    g1, g2 = tf.random.Generator.from_seed(4), tf.random.Generator.from_seed(4)
    a = g1.normal([3]).numpy()
    np.testing.assert_array_equal(g2.normal([3]).numpy(), a)
    assert not np.array_equal(g1.normal([3]).numpy(), a)  # the next draw differs
    assert g1.counter == 2
    tf.random.set_seed(8)  # the global seed does not touch a generator
    np.testing.assert_array_equal(g2.normal([3]).numpy(), _second_draw(4))
    s1, s2 = tf.random.Generator.from_seed(4).split(2)
    assert not np.array_equal(s1.uniform([3]).numpy(), s2.uniform([3]).numpy())
    t = tf.random.Generator.from_seed(1).truncated_normal([1000]).numpy()
    assert np.abs(t).max() <= 2
    r = tf.random.Generator.from_non_deterministic_state().uniform([4])
    assert r.shape == (4,)


def _second_draw(seed):
    g = tf.random.Generator.from_seed(seed)
    g.normal([3])
    return g.normal([3]).numpy()


def test_large_draws_do_not_depend_on_the_thread_count():
    n = tf.config.get_num_threads()
    try:
        tf.config.set_num_threads(1)
        one = [tf.random.stateless_normal([300_001], seed=[5, 6]).numpy(),
               tf.random.stateless_truncated_normal([100_003], seed=[5, 6]).numpy(),
               tf.random.stateless_uniform([200_001], seed=[5, 6], maxval=9, dtype=tf.int32).numpy()]
        tf.config.set_num_threads(2)
        two = [tf.random.stateless_normal([300_001], seed=[5, 6]).numpy(),
               tf.random.stateless_truncated_normal([100_003], seed=[5, 6]).numpy(),
               tf.random.stateless_uniform([200_001], seed=[5, 6], maxval=9, dtype=tf.int32).numpy()]
    finally:
        tf.config.set_num_threads(n)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_a_prefix_of_a_draw_is_a_smaller_draw():
    # element i depends only on (key, stream, i)
    big = tf.random.stateless_normal([1001], seed=[1, 1]).numpy()
    np.testing.assert_array_equal(tf.random.stateless_normal([7], seed=[1, 1]).numpy(), big[:7])
    big = tf.random.stateless_truncated_normal([1001], seed=[1, 1], dtype=tf.float64).numpy()
    np.testing.assert_array_equal(tf.random.stateless_truncated_normal([9], seed=[1, 1], dtype=tf.float64).numpy(),
                                  big[:9])


# ---- facade and seeds' spellings ------------------------------------------------------------

def test_tf1_spellings_and_the_seeds_example():
    x = tf.random_uniform([2, 2])
    assert x.shape == (2, 2) and x.dtype == tf.float32
    vals = [float(x[i, j]) for i in range(x.shape[0]) for j in range(x.shape[1])]
    assert all(0 <= v < 1 for v in vals)
    n = tf.random_normal([1000])
    assert n.shape == (1000,)
    training_outputs = n * 3 + 2 + tf.random_normal([1000])
    assert training_outputs.shape == (1000,)


def test_empty_and_scalar_shapes():
    assert tf.random.normal([]).shape == ()
    assert tf.random.uniform([0, 3]).shape == (0, 3)
    assert tf.random.uniform(tf.constant([2, 3])).shape == (2, 3)
    assert tf.random.shuffle(tf.constant(5.0)).numpy() == 5.0


# ---- bad input ---------------------------------------------------------------------

def test_bad_shapes_and_dtypes():
    _raises(r"shape must be a list of non-negative ints, got \[2, -1\] \[Op:RandomUniform\]",
            tf.random.uniform, [2, -1])
    with pytest.raises(TypeError, match=r"shape\[0\] must be an integer, got float 2.5.* \[Op:RandomStandardNormal\]"):
        tf.random.normal([2.5, "a"])
    floats = ", ".join(d.name for d in tf.dtypes.FLOATS)
    _raises(rf"dtype bool is not supported; allowed: {floats}, int32, int64 \[Op:RandomUniform\]",
            tf.random.uniform, [2], dtype=tf.bool)
    _raises(rf"dtype int32 is not supported; allowed: {floats} \[Op:RandomStandardNormal\]",
            tf.random.normal, [2], dtype=tf.int32)
    _raises(r"shape is a float32 tensor; allowed: a list or tuple of ints, a 1-D integer tensor", tf.random.normal,
            tf.constant([2.0]))


def test_bad_ranges():
    _raises(r"need minval < maxval, got minval = 3.0, maxval = 1.0 \[Op:RandomUniform\]",
            tf.random.uniform, [2], 3.0, 1.0)
    _raises(r"maxval must be given for integer dtype int32 \[Op:RandomUniformInt\]",
            tf.random.uniform, [2], dtype=tf.int32)
    _raises(r"need minval < maxval, got minval = 5, maxval = 5", tf.random.uniform, [2], 5, 5, dtype=tf.int64)
    _raises(r"\[0, 4294967296\) does not fit int32", tf.random.uniform, [2], 0, 2 ** 32, dtype=tf.int32)
    _raises(r"stddev must be >= 0, got -1.0", tf.random.normal, [2], 0.0, -1.0)
    _raises(r"minval must be finite", tf.random.uniform, [2], float("-inf"), 1.0)
    _raises(r"maxval must be a scalar int, got a tensor of shape \(2,\) \[Op:RandomUniformInt\]",
            tf.random.uniform, [2], 0, tf.constant([3, 4]), dtype=tf.int32)


def test_bad_seeds():
    _raises(r"seed must be an int, got 1.5 \[Op:RandomStandardNormal\]", tf.random.normal, [2], seed=1.5)
    _raises(r"seed must be a pair of ints \(shape \[2\]\), got \[1, 2, 3\]", tf.random.stateless_normal, [2],
            seed=[1, 2, 3])
    _raises(r"seed must be an int32/int64 tensor of shape \[2\], got float32 of shape \(2,\)",
            tf.random.stateless_uniform, [2], seed=tf.constant([1.0, 2.0]))
    _raises(r"seed must be an int", tf.random.set_seed, "x")


def test_bad_categorical_and_shuffle():
    _raises(r"logits must be 2-D \[batch, classes\], got shape \(3,\) \[Op:Multinomial\]",
            tf.random.categorical, [0.0, 1.0, 2.0], 2)
    _raises(r"logits has dtype int32; allowed", tf.random.categorical, [[1, 2]], 2)
    _raises(r"num_samples must be >= 0, got -1", tf.random.categorical, [[0.0, 1.0]], -1)
    _raises(r"dtype float32 is not supported; allowed: int32, int64", tf.random.categorical, [[0.0]], 1,
            dtype=tf.float32)
    _raises(r"logits row 1 has no finite maximum \(NaN, \+inf, or every value -inf\) \[Op:Multinomial\]",
            tf.random.categorical, [[0.0, 1.0], [-np.inf, -np.inf]], 3)
    _raises(r"logits row 0 has no finite maximum", tf.random.categorical, [[np.nan, 1.0]], 3)
    _raises(r"logits has 0 classes", tf.random.categorical, tf.zeros([2, 0]), 3)


def test_tracing_a_random_op_draws_nothing_and_its_node_draws_a_fresh_stream_per_run():
    from tapeflow.core.runner import tracing

    logits = tf.zeros([2, 3])
    tf.random.set_seed(5)
    with tracing() as g:
        a = tf.random.uniform([2, 3], seed=7)
        b = tf.random.stateless_normal([4], seed=[1, 2], dtype=tf.float16)
        c = tf.random.categorical(logits, 4, seed=7)
    assert (a._h, b._h, c._h) == (None, None, None)
    assert (tuple(a.shape), tuple(b.shape), b.dtype, tuple(c.shape), c.dtype) == ((2, 3), (4,), tf.float16, (2, 4),
                                                                                   tf.int64)
    uni, norm, cat = g.nodes
    assert (uni.prim.name, norm.prim.name, cat.prim.name) == ("random_uniform", "stateless_random_normal",
                                                              "categorical")
    assert (norm.attrs["key"], norm.attrs["stream"]) == (1, 2)  # stateless: the seed is the stream
    # stateful: the node keeps its op seed and draws the next (key, stream) each time the graph runs
    late = uni.attrs["key"]
    assert late is uni.attrs["stream"] and late.seed == 7 and cat.attrs["key"].seed == 7
    tf.random.set_seed(5)
    eager = [tf.random.uniform([2, 3], seed=7).numpy().tolist() for _ in range(2)]
    tf.random.set_seed(5)
    runs = [late.late_attrs() for _ in range(2)]
    again = [tf.random.stateless_uniform([2, 3], seed=[r["key"], r["stream"]]).numpy().tolist() for r in runs]
    assert eager == again


def test_a_symbolic_seed_needs_a_static_value_naming_the_op():
    from tapeflow.core.runner import tracing

    with tracing():
        seed = tf.reduce_sum(tf.constant([1, 2]))  # symbolic while tracing
        pair = tf.reduce_sum(tf.constant([[1, 2], [3, 4]]), axis=0)
        with pytest.raises(TypeError, match=r"seed needs a static value while tracing.*\[Op:RandomUniform\]"):
            tf.random.uniform([2], seed=seed)
        with pytest.raises(TypeError, match=r"seed needs a static value.*\[Op:StatelessRandomNormalV2\]"):
            tf.random.stateless_normal([2], seed=pair)
