"""The fast paths: whole-batch gathers over in-memory slices and map vectorization give exactly what
the element-by-element path gives, and take it only when that is provably the same."""
import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.dispatch import hooks
from tapeflow.data import Dataset, TensorSpec, _batching

NO_VEC = tf.data.Options()
NO_VEC.experimental_optimization.map_vectorization = False


def as_lists(ds):
    out = []
    for e in ds.as_numpy_iterator():
        out.append(tuple(x.tolist() for x in e) if isinstance(e, tuple) else e.tolist())
    return out


def generator_of(arrays):
    """The same elements as from_tensor_slices(arrays), through the generic element path."""
    n = len(arrays[0])
    sig = tuple(TensorSpec(a.shape[1:], tf.as_dtype(a.dtype)) for a in arrays)
    return Dataset.from_generator(lambda: ((tuple(a[i] for a in arrays)) for i in range(n)), output_signature=sig)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((257, 6)).astype(np.float32), rng.integers(0, 10, 257).astype(np.int32)


def count_calls(monkeypatch, name):
    calls = []
    real = getattr(_batching, name)

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_batching, name, counting)
    return calls


def test_shuffle_batch_gathers_once_per_component_and_batch(data, monkeypatch):
    x, y = data
    gathers = count_calls(monkeypatch, "_gather")
    stacks = count_calls(monkeypatch, "_stack")
    ds = Dataset.from_tensor_slices((x, y)).shuffle(100, seed=1).batch(32)
    batches = list(ds)
    assert len(batches) == 9 and len(gathers) == 2 * 9 and stacks == []
    rows = np.concatenate([b[0].numpy() for b in batches])
    labels = np.concatenate([b[1].numpy() for b in batches])
    order = [int(np.flatnonzero((x == r).all(1))[0]) for r in rows]
    assert sorted(order) == list(range(257)) and (labels == y[order]).all()
    # the same order as the element path with the same seed
    slow = generator_of((x, y)).shuffle(100, seed=1).batch(32)
    assert as_lists(ds) != [] and as_lists(Dataset.from_tensor_slices((x, y)).shuffle(100, seed=1).batch(32)) \
        == as_lists(slow)


@pytest.mark.parametrize("pipe", [
    lambda d: d.batch(10),
    lambda d: d.batch(10, drop_remainder=True),
    lambda d: d.skip(5).take(100).batch(7),
    lambda d: d.shard(4, 1).batch(16),
    lambda d: d.repeat(3).batch(100),
    lambda d: d.take(50).repeat().take(120).batch(64),
    lambda d: d.shuffle(30, seed=4).repeat(2).batch(50),
    lambda d: d.repeat(2).shuffle(300, seed=5).shard(2, 0).batch(33),
])
def test_index_paths_equal_the_element_path(data, pipe):
    x, y = data
    assert as_lists(pipe(Dataset.from_tensor_slices((x, y)))) == as_lists(pipe(generator_of((x, y))))


def test_zip_and_enumerate_of_slices_gather(data, monkeypatch):
    x, y = data
    gathers = count_calls(monkeypatch, "_gather")
    ds = Dataset.zip(Dataset.from_tensor_slices(x), Dataset.from_tensor_slices(y)).batch(100)
    assert as_lists(ds) == [(x[i:i + 100].tolist(), y[i:i + 100].tolist()) for i in range(0, 257, 100)]
    assert len(gathers) == 6
    en = as_lists(Dataset.from_tensor_slices(y).enumerate(3).batch(200))
    assert en[0] == (list(range(3, 203)), y[:200].tolist())


def normalize(x, y):
    return (x - 0.5) / 0.25, y


def test_elementwise_map_is_vectorized_and_equal(data, monkeypatch):
    x, y = data
    ds = Dataset.from_tensor_slices((x, y)).shuffle(64, seed=2).map(normalize).batch(32)
    slow = ds.with_options(NO_VEC)
    per_element, per_element_2 = as_lists(slow), as_lists(slow)  # two epochs (two orders)
    calls = []
    ds2 = Dataset.from_tensor_slices((x, y)).shuffle(64, seed=2).map(
        lambda a, b: calls.append(a.shape) or normalize(a, b)).batch(32)
    assert as_lists(ds2) == per_element
    m = ds2._input
    assert m._vec is True
    # first batch: 32 element calls + 1 batch trial; then one call per batch
    assert len(calls) == 32 + 1 + 8 and calls[-1] == (1, 6)
    assert as_lists(ds2) == per_element_2  # later epochs stay vectorized and equal


@pytest.mark.parametrize("fn,why", [
    (lambda x, y: (tf.reshape(x, [2, 3]), y), "reshape is not element-wise"),
    (lambda x, y: (x - tf.reduce_mean(x), y), "a reduction over the element"),
    (lambda x, y: (x + tf.random.uniform([6]), y), "fresh random numbers per call"),
    (lambda x, y: (x * tf.ones([4, 6]), y), "the element broadcasts against a higher-rank operand"),
    (lambda x, y: (x, 1), "an output that does not come from the element"),
    (lambda x, y: (x * float(np.asarray(x)[0] > 0), y), "Python branching on a value"),
])
def test_maps_that_are_not_elementwise_stay_per_element(data, fn, why):
    x, y = data
    ds = Dataset.from_tensor_slices((x, y)).map(fn).batch(16)
    if "random" in why:
        out = list(ds)
        assert all(b[0].shape == (16, 6) or b[0].shape == (1, 6) for b in out)
    else:
        want = as_lists(ds.with_options(NO_VEC))
        assert as_lists(ds) == want, why
    assert ds._input._vec is False, why


def test_stateful_python_in_map_stays_per_element(data):
    x, y = data
    state = {"n": 0}

    def counter(a, b):
        state["n"] += 1
        return a * float(state["n"]), b

    out = np.concatenate([b[0].numpy() for b in Dataset.from_tensor_slices((x, y)).map(counter).batch(50)])
    assert np.allclose(out, x * np.arange(1, 258, dtype=np.float32)[:, None])


def test_chained_maps_and_mixed_decisions(data):
    x, y = data
    ds = (Dataset.from_tensor_slices((x, y)).map(normalize).map(lambda a, b: (tf.reshape(a, [3, 2]), b))
          .map(lambda a, b: (a * 2.0, tf.cast(b, tf.float32))).batch(40))
    want = as_lists(ds.with_options(NO_VEC))
    assert as_lists(ds) == want and as_lists(ds) == want
    m3 = ds._input
    m2 = m3._input
    m1 = m2._input
    assert (m1._vec, m2._vec, m3._vec) == (True, False, True)


def test_tracing_keeps_other_subscribers_working(data):
    x, y = data
    seen = []
    sub = hooks.subscribe(lambda name, inputs, out, attrs: seen.append(name))
    try:
        list(Dataset.from_tensor_slices((x, y)).map(normalize).batch(64))
        assert "real_div" in seen and "subtract" in seen
        assert hooks.recorder is not None and hooks.recorder.__name__ == "<lambda>"
    finally:
        sub.remove()
    assert hooks.recorder is None


def test_map_errors_on_the_fast_path_keep_their_traceback(data):
    x, y = data

    def fails_on_batch_two(a, b):
        if a.shape[0] != 6:
            raise ArithmeticError("vectorized call failed")
        return a, b

    ds = Dataset.from_tensor_slices((x, y)).map(fails_on_batch_two).batch(8)
    assert len(list(ds)) == 33  # the trial call fails: stays per element, same results
    assert ds._input._vec is False

    def always_fails(a, b):
        raise LookupError("user bug")

    with pytest.raises(LookupError, match="user bug") as e:
        list(Dataset.from_tensor_slices((x, y)).map(always_fails).batch(8))
    assert e.traceback[-1].name == "always_fails"


def test_map_on_text_and_batch_size_one(data):
    ds = Dataset.from_tensor_slices(["a", "bb"]).map(lambda s: s + b"!").batch(2)
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[b"a!", b"bb!"]]
    x, y = data
    one = Dataset.from_tensor_slices((x, y)).map(normalize).batch(1)
    assert as_lists(one)[:3] == as_lists(one.with_options(NO_VEC))[:3]


def test_concurrent_traces_leave_no_recorder_behind(data):
    import threading

    x, y = data
    assert hooks.recorder is None
    errors = []

    def run():
        try:
            for _ in range(3):
                list(Dataset.from_tensor_slices((x, y)).map(normalize).batch(16))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and hooks.recorder is None


def test_batches_stay_on_the_data_device_inside_a_device_scope(data):
    x, y = data
    import warnings

    ds = Dataset.from_tensor_slices((x, y))  # the slices live on the default device
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with tf.device("/cpu:0"):  # ops in a scope run on its device, the batching gathers included
            out = list(ds.shuffle(50, seed=0).map(normalize).batch(100))
    assert [b[0].device for b in out] == ["cpu:0"] * 3
