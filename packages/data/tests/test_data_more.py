"""tf.data transformations of issue 14 item 7: window, group_by_window, bucket_by_sequence_length,
rejection_resample, sample_from_datasets, choose_from_datasets, scan, unique, ignore_errors,
snapshot, save/load and options.  Expected values are TensorFlow 2.21's (taken from its runs);
where TensorFlow is importable the same pipelines also run through it and are compared."""
import os

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def vals(ds):
    def py(e):
        if isinstance(e, tuple):
            return tuple(py(x) for x in e)
        if isinstance(e, dict):
            return {k: py(v) for k, v in e.items()}
        if isinstance(e, np.ndarray):
            return e.tolist()
        if isinstance(e, np.generic):
            return e.item()
        return e
    return [py(e) for e in ds.as_numpy_iterator()]


def i64(xs):
    return tf.constant(np.array(xs, np.int64))


# ---- window ---------------------------------------------------------------------------------

def test_window_shift_stride_as_tensorflow():
    ds = tf.data.Dataset.range(10).window(3, shift=2, stride=2)
    assert [vals(w) for w in ds] == [[0, 2, 4], [2, 4, 6], [4, 6, 8], [6, 8], [8]]
    assert [vals(w) for w in tf.data.Dataset.range(10).window(3, shift=5)] == [[0, 1, 2], [5, 6, 7]]
    assert [vals(w) for w in tf.data.Dataset.range(5).window(2, drop_remainder=True)] == [[0, 1], [2, 3]]


def test_window_is_a_dataset_of_datasets():
    ds = tf.data.Dataset.range(10)
    spec = ds.window(3).element_spec
    assert isinstance(spec, tf.data.DatasetSpec)
    assert repr(spec) == "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))"
    z = tf.data.Dataset.zip((ds, ds.map(lambda x: x * 2)))
    assert isinstance(z.window(4).element_spec, tuple) and len(z.window(4).element_spec) == 2
    out = z.window(4, drop_remainder=True).flat_map(lambda a, b: tf.data.Dataset.zip((a.batch(4), b.batch(4))))
    assert vals(out) == [([0, 1, 2, 3], [0, 2, 4, 6]), ([4, 5, 6, 7], [8, 10, 12, 14])]
    d = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3]}).window(2)
    assert [vals(w["a"]) for w in d] == [[1, 2], [3]]


def test_window_cardinality_and_bad_arguments():
    assert int(tf.data.Dataset.range(5).window(2).cardinality()) == 3
    assert int(tf.data.Dataset.range(5).window(2, drop_remainder=True).cardinality()) == 2
    assert int(tf.data.Dataset.range(5).window(2, shift=3).cardinality()) == 2
    with pytest.raises(InvalidArgumentError, match=r"size = 0.*\[Op:WindowDataset\]"):
        tf.data.Dataset.range(5).window(0)
    with pytest.raises(InvalidArgumentError, match=r"shift = -1.*\[Op:WindowDataset\]"):
        tf.data.Dataset.range(5).window(2, shift=-1)


# ---- group_by_window, bucket_by_sequence_length ----------------------------------------------

DATA = [5, 3, 1, 4, 2, 8, 6, 7, 0, 9, 11, 13]


def test_group_by_window_order_as_tensorflow():
    ds = tf.data.Dataset.from_tensor_slices(i64(DATA))
    g = ds.group_by_window(lambda x: x % 3, lambda k, w: w.batch(10).map(lambda b: (k, b)), window_size=2)
    assert vals(g) == [(1, [1, 4]), (2, [5, 2]), (0, [3, 6]), (0, [0, 9]), (2, [8, 11]), (1, [7, 13])]
    # groups left at the end come in increasing key order
    g = ds.group_by_window(lambda x: 5 - x % 3, lambda k, w: w.batch(10).map(lambda b: (k, b)), window_size=5)
    assert vals(g) == [(3, [5, 2, 8, 11]), (4, [1, 4, 7, 13]), (5, [3, 6, 0, 9])]
    assert g.element_spec[1] == tf.data.TensorSpec([None], tf.int64)


def test_group_by_window_size_func_and_experimental():
    ds = tf.data.Dataset.range(10)
    g = ds.apply(tf.data.experimental.group_by_window(lambda x: x % 2, lambda k, w: w.batch(5),
                                                      window_size_func=lambda k: k + 2))
    assert vals(g) == [[0, 2], [1, 3, 5], [4, 6], [8], [7, 9]]


def test_group_by_window_bad_input():
    ds = tf.data.Dataset.range(4)
    with pytest.raises(InvalidArgumentError, match=r"window_size.*\[Op:GroupByWindowDataset\]"):
        ds.group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(InvalidArgumentError, match=r"window_size.*\[Op:GroupByWindowDataset\]"):
        ds.group_by_window(lambda x: x, lambda k, w: w, window_size=2, window_size_func=lambda k: k)
    with pytest.raises(InvalidArgumentError, match=r"scalar int64.*int32"):
        list(ds.group_by_window(lambda x: tf.cast(x, tf.int32), lambda k, w: w, window_size=2))
    with pytest.raises(InvalidArgumentError, match=r"greater than zero, but got 0"):
        list(ds.group_by_window(lambda x: x % 2, lambda k, w: w, window_size_func=lambda k: k * 0))


def lengths_ds():
    return tf.data.Dataset.from_generator(lambda: ([1] * n for n in (1, 5, 2, 6, 3)),
                                          output_signature=tf.data.TensorSpec([None], tf.int32))


def test_bucket_by_sequence_length_as_tensorflow():
    L = lambda x: tf.shape(x)[0]  # noqa: E731
    assert vals(lengths_ds().bucket_by_sequence_length(L, [4], [2, 2])) == [
        [[1, 0], [1, 1]], [[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]], [[1, 1, 1]]]
    assert vals(lengths_ds().bucket_by_sequence_length(L, [3, 8], [2, 2, 3], pad_to_bucket_boundary=True,
                                                       padding_values=-1)) == [
        [[1, -1], [1, 1]], [[1, 1, 1, 1, 1, -1, -1], [1, 1, 1, 1, 1, 1, -1]], [[1, 1, 1, -1, -1, -1, -1]]]
    assert vals(lengths_ds().bucket_by_sequence_length(L, [3], [2, 1], drop_remainder=True)) == [
        [[1, 1, 1, 1, 1]], [[1, 0], [1, 1]], [[1, 1, 1, 1, 1, 1]], [[1, 1, 1]]]
    fn = tf.data.experimental.bucket_by_sequence_length(L, [3], [2, 1], padded_shapes=[8])
    assert vals(lengths_ds().apply(fn))[1] == [[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]]


def test_bucket_by_sequence_length_no_padding_and_errors():
    ds = tf.data.Dataset.range(7).map(lambda x: tf.fill([2], x))
    out = ds.bucket_by_sequence_length(lambda x: tf.cast(x[0], tf.int32), [3], [2, 3], no_padding=True)
    assert vals(out) == [[[0, 0], [1, 1]], [[3, 3], [4, 4], [5, 5]], [[2, 2]], [[6, 6]]]
    with pytest.raises(InvalidArgumentError, match=r"len\(bucket_batch_sizes\)"):
        ds.bucket_by_sequence_length(lambda x: 1, [3], [2])
    with pytest.raises(InvalidArgumentError, match=r"pad_to_bucket_boundary=True"):
        list(lengths_ds().bucket_by_sequence_length(lambda x: tf.shape(x)[0], [4], [2, 2],
                                                    pad_to_bucket_boundary=True))


# ---- choose_from_datasets, sample_from_datasets, rejection_resample ---------------------------

def three():
    return [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12), tf.data.Dataset.range(20, 30)]


def test_choose_from_datasets_as_tensorflow():
    choice = tf.data.Dataset.from_tensor_slices(i64([0, 1, 2, 0, 1, 2, 1, 1, 0]))
    assert vals(tf.data.Dataset.choose_from_datasets(three(), choice)) == [0, 10, 20, 1, 11, 21]
    assert vals(tf.data.Dataset.choose_from_datasets(three(), choice, stop_on_empty_dataset=False)) == [
        0, 10, 20, 1, 11, 21, 2]
    assert vals(tf.data.experimental.choose_from_datasets(three(), choice)) == [0, 10, 20, 1, 11, 21]
    with pytest.raises(InvalidArgumentError, match=r"Selector index out of range: 2 >= 2"):
        list(tf.data.Dataset.choose_from_datasets(three()[:2], choice))
    with pytest.raises(TypeError, match="scalar of type `tf.int64`"):
        tf.data.Dataset.choose_from_datasets(three(), tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.int32)))
    with pytest.raises(InvalidArgumentError, match="Incompatible"):
        tf.data.Dataset.choose_from_datasets([tf.data.Dataset.range(2), tf.data.Dataset.from_tensors(1.0)], choice)


def test_sample_from_datasets_seeded_weights_and_stop():
    def make(**kw):
        return tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(100), tf.data.Dataset.range(1000, 1100)],
                                                    seed=3, **kw)
    a, b = vals(make(weights=[0.8, 0.2])), vals(make(weights=[0.8, 0.2]))
    assert a == b and sorted(a) == list(range(100)) + list(range(1000, 1100))
    # the order of each input is kept; the weights show in the first half
    assert [x for x in a if x < 100] == list(range(100))
    first = a[:100]
    assert 65 <= sum(x < 100 for x in first) <= 95
    stopped = vals(make(weights=[0.5, 0.5], stop_on_empty_dataset=True))
    assert len(stopped) < 200 and (stopped.count(99) == 1 or 1099 in stopped)
    # zero weight: never drawn
    assert all(x < 100 for x in vals(make(weights=[1.0, 0.0])))
    ds = make(weights=[0.5, 0.5], rerandomize_each_iteration=True)
    assert vals(ds) != vals(ds)
    with pytest.raises(InvalidArgumentError, match="one entry per dataset"):
        make(weights=[1.0])
    with pytest.raises(InvalidArgumentError, match=">= 0"):
        make(weights=[1.0, -1.0])


def test_sample_from_datasets_weights_dataset():
    w = tf.data.Dataset.from_tensor_slices(tf.constant([[1.0, 0.0], [0.0, 1.0]] * 3))
    ds = tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(10), tf.data.Dataset.range(100, 110)], w, seed=0)
    assert vals(ds) == [0, 100, 1, 101, 2, 102]


def test_rejection_resample_reaches_the_target():
    tf.random.set_seed(5)
    data = tf.data.Dataset.from_tensor_slices(i64([0] * 900 + [1] * 100)).shuffle(1000, seed=1)
    cls = lambda x: tf.cast(x, tf.int32)  # noqa: E731
    for initial in ([0.9, 0.1], None):
        out = vals(data.rejection_resample(cls, target_dist=[0.5, 0.5], initial_dist=initial, seed=2))
        classes = [c for c, _ in out]
        assert all(c == x for c, x in out)
        frac = sum(classes) / len(classes)
        assert 0.35 <= frac <= 0.65, (initial, frac, len(classes))
    ds = tf.data.Dataset.range(8).apply(tf.data.experimental.rejection_resample(
        lambda x: tf.cast(x % 2, tf.int32), target_dist=[0.0, 1.0], initial_dist=[0.5, 0.5], seed=1))
    assert vals(ds) == [(1, 1), (1, 3), (1, 5), (1, 7)]
    assert ds.element_spec == (tf.data.TensorSpec([], tf.int32), tf.data.TensorSpec([], tf.int64))
    with pytest.raises(InvalidArgumentError, match=r"class 2, not in \[0, 2\)"):
        list(tf.data.Dataset.range(3).rejection_resample(lambda x: tf.cast(x, tf.int32), [0.5, 0.5], [0.5, 0.5]))


# ---- scan, unique, ignore_errors --------------------------------------------------------------

def test_scan_as_tensorflow():
    ds = tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, (s, x * 2)))
    assert vals(ds) == [(0, 0), (0, 2), (1, 4), (3, 6), (6, 8)]
    z = tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(3)))
    assert vals(z.scan(tf.constant(0, tf.int64), lambda s, xy: (s + xy[0] + xy[1], s))) == [0, 0, 2]
    assert vals(tf.data.Dataset.range(3).apply(tf.data.experimental.scan(
        tf.constant(1.0), lambda s, x: (s * 2.0, s)))) == [1.0, 2.0, 4.0]
    with pytest.raises(InvalidArgumentError, match=r"dtype float32.*int64.*\[Op:ScanDataset\]"):
        list(tf.data.Dataset.range(3).scan(tf.constant(0, tf.int64), lambda s, x: (tf.cast(s, tf.float32), x)))
    with pytest.raises(InvalidArgumentError, match=r"pair.*\[Op:ScanDataset\]"):
        list(tf.data.Dataset.range(3).scan(tf.constant(0, tf.int64), lambda s, x: s))


def test_unique_as_tensorflow():
    assert vals(tf.data.Dataset.from_tensor_slices([1, 3, 1, 2, 3]).unique()) == [1, 3, 2]
    assert vals(tf.data.Dataset.from_tensor_slices([b"a", b"b", b"a"]).unique()) == [b"a", b"b"]
    assert vals(tf.data.Dataset.from_tensor_slices([[1, 2], [1, 2], [3, 4]]).unique()) == [[1, 2], [3, 4]]
    assert vals(tf.data.Dataset.range(4).map(lambda x: x % 2).apply(tf.data.experimental.unique())) == [0, 1]
    with pytest.raises(TypeError, match=r"tf.int32, tf.int64 or tf.string"):
        tf.data.Dataset.from_tensor_slices([1.0]).unique()


def test_ignore_errors_drops_failing_elements():
    bad = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0, 4.0, 8.0]).map(
        lambda x: tf.debugging.check_numerics(1 / x, "inf"))
    assert vals(bad.ignore_errors()) == [1.0, 0.5, 0.25, 0.125]
    assert vals(bad.take(3).ignore_errors()) == [1.0, 0.5, 0.25]  # take does not count the error, as TF
    assert vals(bad.apply(tf.data.experimental.ignore_errors())) == [1.0, 0.5, 0.25, 0.125]
    with pytest.raises(InvalidArgumentError):
        list(bad)
    par = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0] * 4).map(
        lambda x: tf.debugging.check_numerics(1 / x, "inf"), num_parallel_calls=3)
    assert vals(par.ignore_errors()) == [1.0, 0.5] * 4
    flt = tf.data.Dataset.range(5).filter(lambda x: tf.debugging.check_numerics(1.0 / tf.cast(x, tf.float32),
                                                                                "inf") > 0.3)
    assert vals(flt.ignore_errors()) == [1, 2, 3]

    def gen():
        yield from ([1], ["x"], [2])
    g = tf.data.Dataset.from_generator(gen, output_signature=tf.data.TensorSpec([1], tf.int32))
    assert vals(g.ignore_errors()) == [[1], [2]]


def test_ignore_errors_log_warning(caplog):
    bad = tf.data.Dataset.from_tensor_slices([1.0, 0.0]).map(lambda x: tf.debugging.check_numerics(1 / x, "inf"))
    with caplog.at_level("WARNING", logger="tapeflow.data"):
        assert vals(bad.ignore_errors(log_warning=True)) == [1.0]
    assert "Error raised with error message" in caplog.text
