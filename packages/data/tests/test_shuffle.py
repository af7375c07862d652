"""shuffle: each element once per epoch, seeds, reshuffling, the buffer's reach, both code paths agree."""
import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import Dataset, TensorSpec


def order(ds):
    return [int(x) for x in ds]


def gen_range(n):
    return Dataset.from_generator(lambda: iter(range(n)), output_signature=TensorSpec([], tf.int64))


@pytest.mark.parametrize("n,size", [(100, 1), (100, 7), (100, 100), (100, 1000), (5000, 64), (0, 3)])
def test_each_element_exactly_once_per_epoch(n, size):
    ds = Dataset.range(n).shuffle(size)
    for _ in range(2):
        out = order(ds)
        assert sorted(out) == list(range(n))


def test_buffer_size_one_keeps_order():
    assert order(Dataset.range(20).shuffle(1)) == list(range(20))


@pytest.mark.parametrize("size", [1, 5, 50])
def test_an_element_moves_at_most_buffer_size_earlier(size):
    out = order(Dataset.range(400).shuffle(size, seed=11))
    pos = {v: i for i, v in enumerate(out)}
    assert all(pos[v] >= v - size for v in range(400))


def test_full_buffer_is_a_uniform_permutation():
    # position of element 0 over many seeds: uniform over 0..4 (chi-square, loose bound)
    counts = np.zeros(5)
    for seed in range(2000):
        counts[order(Dataset.range(5).shuffle(5, seed=seed)).index(0)] += 1
    chi2 = ((counts - 400) ** 2 / 400).sum()
    assert chi2 < 25  # 4 degrees of freedom: p < 1e-4 at 23.5


def test_seed_gives_the_same_sequence_of_epochs():
    a = Dataset.range(50).shuffle(10, seed=42)
    b = Dataset.range(50).shuffle(10, seed=42)
    a1, a2 = order(a), order(a)
    assert a1 != a2  # reshuffled each iteration
    assert (order(b), order(b)) == (a1, a2)
    assert order(Dataset.range(50).shuffle(10, seed=43)) != a1


def test_reshuffle_each_iteration_false_repeats_the_order():
    ds = Dataset.range(50).shuffle(50, seed=3, reshuffle_each_iteration=False)
    first = order(ds)
    assert order(ds) == first and first != list(range(50))
    unseeded = Dataset.range(50).shuffle(50, reshuffle_each_iteration=False)
    assert order(unseeded) == order(unseeded)


def test_repeat_after_shuffle_reshuffles_each_epoch():
    out = order(Dataset.range(30).shuffle(30, seed=5).repeat(2))
    first, second = out[:30], out[30:]
    assert sorted(first) == sorted(second) == list(range(30)) and first != second
    kept = order(Dataset.range(30).shuffle(30, seed=5, reshuffle_each_iteration=False).repeat(2))
    assert kept[:30] == kept[30:]


def test_global_seed_makes_unseeded_shuffles_repeat():
    tf.random.set_seed(123)
    try:
        a, b = Dataset.range(40).shuffle(40), Dataset.range(40).shuffle(40)
        oa, ob = order(a), order(b)
        tf.random.set_seed(123)
        a2, b2 = Dataset.range(40).shuffle(40), Dataset.range(40).shuffle(40)
        assert (order(a2), order(b2)) == (oa, ob)
        assert oa != ob  # two shuffles made after set_seed differ from each other
    finally:
        tf.random.set_seed(None)


def test_unseeded_shuffles_differ():
    assert order(Dataset.range(60).shuffle(60)) != order(Dataset.range(60).shuffle(60))


@pytest.mark.parametrize("n,size", [(300, 1), (300, 3), (300, 64), (300, 1000), (20000, 64), (9000, 4096)])
def test_slices_and_generator_paths_give_the_same_order(n, size):
    # the random-access (vectorized index) path and the element path draw the same order from the
    # same seed, across chunks of input and blocks of random draws
    fast = order(Dataset.range(n).shuffle(size, seed=9))
    slow = order(gen_range(n).shuffle(size, seed=9))
    assert fast == slow
    assert order(Dataset.range(n).repeat(2).shuffle(size, seed=9)) == order(gen_range(n).repeat(2).shuffle(size, seed=9))
    fast_b = [b.numpy().tolist() for b in Dataset.range(n).shuffle(size, seed=9).batch(32)]
    assert [v for b in fast_b for v in b] == fast


def test_shuffle_of_structures_keeps_components_together():
    x = np.arange(200)
    ds = Dataset.from_tensor_slices({"x": x, "y": (x * 2, x.astype(np.float32).reshape(200, 1))}).shuffle(17, seed=1)
    seen = []
    for e in ds:
        v = int(e["x"])
        assert int(e["y"][0]) == 2 * v and e["y"][1].numpy().tolist() == [float(v)]
        seen.append(v)
    assert sorted(seen) == list(range(200))
    batches = list(ds.batch(64))
    xs = np.concatenate([b["x"].numpy() for b in batches])
    assert sorted(xs.tolist()) == list(range(200))
    assert all((b["y"][0].numpy() == 2 * b["x"].numpy()).all() for b in batches)


def test_buffer_size_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"buffer_size = 0 is not allowed.*\[Op:ShuffleDataset\]"):
        Dataset.range(3).shuffle(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size must be an integer"):
        Dataset.range(3).shuffle(2.5)
