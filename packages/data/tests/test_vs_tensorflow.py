"""The same pipelines through TensorFlow's tf.data and tapeflow.data give the same elements, specs and
cardinalities.  TensorFlow is the reference here (installed in the dev environment); the expected
behaviour is also asserted without it in the other test files."""
import os

import numpy as np
import pytest
import tapeflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tensorflow = pytest.importorskip("tensorflow")

LIBS = {"tapeflow": tapeflow, "tensorflow": tensorflow}


def py(e):
    if isinstance(e, tuple):
        return tuple(py(x) for x in e)
    if isinstance(e, dict):
        return {k: py(v) for k, v in e.items()}
    if isinstance(e, np.ndarray):
        return (e.dtype.name if e.dtype != object else "bytes", e.tolist())
    if isinstance(e, np.generic):
        return (e.dtype.name, e.item())
    if isinstance(e, bytes):
        return ("bytes", e)
    return e


def run(make, lib):
    return [py(e) for e in make(lib).as_numpy_iterator()]


ARR = np.arange(12, dtype=np.int64).reshape(6, 2)
TEXT = np.array([b"a", b"bb", b"c", b"dd", b"e", b"ff"])

PIPELINES = {
    "batch": lambda tf: tf.data.Dataset.range(10).batch(3),
    "batch_drop": lambda tf: tf.data.Dataset.range(10).batch(3, drop_remainder=True),
    "slices_nested": lambda tf: tf.data.Dataset.from_tensor_slices({"x": ARR, "t": (TEXT, ARR[:, 0] * 1.5)}).batch(4),
    "map_tuple": lambda tf: tf.data.Dataset.from_tensor_slices((ARR, ARR[:, 1])).map(lambda a, b: (a * b, b + 1)),
    "filter": lambda tf: tf.data.Dataset.range(20).filter(lambda x: x % 3 == 1),
    "interleave_docs": lambda tf: tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4),
    "interleave_uneven": lambda tf: tf.data.Dataset.range(7).interleave(
        lambda x: tf.data.Dataset.range(x), cycle_length=3, block_length=2),
    "interleave_empty_first": lambda tf: tf.data.Dataset.range(4).interleave(
        lambda x: tf.data.Dataset.range(x), cycle_length=3),
    "flat_map": lambda tf: tf.data.Dataset.range(4).flat_map(lambda x: tf.data.Dataset.range(x)),
    "padded_batch": lambda tf: tf.data.Dataset.range(1, 6).map(lambda n: tf.fill([n], n)).padded_batch(2),
    "padded_batch_shapes": lambda tf: tf.data.Dataset.range(1, 4).map(
        lambda n: (tf.fill([n, 2], n), tf.cast(n, tf.float32))).padded_batch(
        2, padded_shapes=([4, None], []), padding_values=(tf.constant(-1, tf.int64), 0.5)),
    "unbatch": lambda tf: tf.data.Dataset.from_tensor_slices((ARR, TEXT)).batch(4).unbatch(),
    "shard": lambda tf: tf.data.Dataset.range(17).shard(4, 3),
    "repeat_take_skip": lambda tf: tf.data.Dataset.range(5).repeat(3).skip(2).take(9),
    "zip_dict": lambda tf: tf.data.Dataset.zip({"a": tf.data.Dataset.range(3), "b": tf.data.Dataset.range(5, 9)}),
    "enumerate": lambda tf: tf.data.Dataset.from_tensor_slices(TEXT).enumerate(3),
    "concatenate": lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(7, 9)),
    "range_step": lambda tf: tf.data.Dataset.range(10, 0, -3),
    "from_tensors": lambda tf: tf.data.Dataset.from_tensors((ARR, {"k": 1.5})),
    "batch_of_batches": lambda tf: tf.data.Dataset.range(12).batch(3).batch(2),
    "cache_take": lambda tf: tf.data.Dataset.range(6).cache().take(4).repeat(2),
}


@pytest.mark.parametrize("name", list(PIPELINES))
def test_same_elements(name):
    assert run(PIPELINES[name], tapeflow) == run(PIPELINES[name], tensorflow)


@pytest.mark.parametrize("name", list(PIPELINES))
def test_same_element_spec(name):
    def specs(lib):
        spec = PIPELINES[name](lib).element_spec
        flat = tensorflow.nest.flatten(spec) if lib is tensorflow else tapeflow.data._structure.flatten(spec)
        return [(None if s.shape.rank is None else [d for d in s.shape.as_list()], s.dtype.name) for s in flat]
    assert specs(tapeflow) == specs(tensorflow)


CARDINALITY = {
    "range": lambda tf: tf.data.Dataset.range(10),
    "batch": lambda tf: tf.data.Dataset.range(10).batch(3),
    "batch_drop": lambda tf: tf.data.Dataset.range(10).batch(3, drop_remainder=True),
    "repeat_inf": lambda tf: tf.data.Dataset.range(10).repeat(),
    "repeat_empty": lambda tf: tf.data.Dataset.range(0).repeat(),
    "repeat_take": lambda tf: tf.data.Dataset.range(10).repeat().take(4),
    "repeat_skip": lambda tf: tf.data.Dataset.range(10).repeat().skip(4),
    "filter": lambda tf: tf.data.Dataset.range(10).filter(lambda x: x > 2),
    "filter_take": lambda tf: tf.data.Dataset.range(10).filter(lambda x: x > 2).take(3),
    "filter_take0": lambda tf: tf.data.Dataset.range(10).filter(lambda x: x > 2).take(0),
    "filter_repeat": lambda tf: tf.data.Dataset.range(10).filter(lambda x: x > 2).repeat(),
    "filter_repeat0": lambda tf: tf.data.Dataset.range(10).filter(lambda x: x > 2).repeat(0),
    "filter_skip": lambda tf: tf.data.Dataset.range(10).filter(lambda x: x > 2).skip(2),
    "skip_past": lambda tf: tf.data.Dataset.range(10).skip(40),
    "shard": lambda tf: tf.data.Dataset.range(10).shard(3, 1),
    "shard_last": lambda tf: tf.data.Dataset.range(10).shard(3, 2),
    "zip_known": lambda tf: tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(5))),
    "zip_inf": lambda tf: tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(5).repeat())),
    "zip_unknown": lambda tf: tf.data.Dataset.zip((tf.data.Dataset.range(3),
                                                   tf.data.Dataset.range(5).filter(lambda x: True))),
    "concat_inf": lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(4).repeat()),
    "concat_unknown": lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(4).filter(lambda x: True)),
    "unbatch": lambda tf: tf.data.Dataset.range(6).batch(2).unbatch(),
    "interleave": lambda tf: tf.data.Dataset.range(3).interleave(lambda x: tf.data.Dataset.range(x)),
    "padded_batch": lambda tf: tf.data.Dataset.range(7).padded_batch(2),
    "map_shuffle_prefetch_cache": lambda tf: tf.data.Dataset.range(10).map(lambda x: x).shuffle(4).prefetch(2).cache(),
    "enumerate": lambda tf: tf.data.Dataset.range(10).enumerate(),
    "repeat_batch_inf": lambda tf: tf.data.Dataset.range(10).repeat().batch(4),
}


@pytest.mark.parametrize("name", list(CARDINALITY))
def test_same_cardinality(name):
    make = CARDINALITY[name]
    assert int(make(tapeflow).cardinality()) == int(make(tensorflow).cardinality().numpy())


def test_text_lines_and_parallel_reads(tmp_path):
    contents = [b"a1\r\na2\na3", b"b1\n\nb3\n", b"c1\r"]
    files = []
    for i, c in enumerate(contents):
        p = tmp_path / f"{i}.txt"
        p.write_bytes(c)
        files.append(str(p))
    for kwargs in ({}, {"num_parallel_reads": 2}, {"num_parallel_reads": 3}):
        def make(tf, kwargs=kwargs):
            return tf.data.TextLineDataset(files, **kwargs)
        assert run(make, tapeflow) == run(make, tensorflow), kwargs


def test_shuffle_properties_match():
    # orders differ (different generators); both cover every element once and move none more than
    # buffer_size places earlier
    for lib in (tapeflow, tensorflow):
        out = [int(x) for x in lib.data.Dataset.range(100).shuffle(10, seed=1)]
        assert sorted(out) == list(range(100))
        pos = {v: i for i, v in enumerate(out)}
        assert all(pos[v] >= v - 10 for v in range(100))


def test_reduce_matches():
    for lib in (tapeflow, tensorflow):
        total = lib.data.Dataset.range(10).reduce(np.int64(0), lambda s, x: s + x * x)
        assert int(total) == 285
