"""Transformations: order, remainders, structures, specs, cardinality and errors, as in TensorFlow."""
import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import Dataset, TensorSpec
from test_sources import values

INF, UNKNOWN = tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY


def gen_range(n):
    """A non-random-access dataset with the same elements as Dataset.range(n)."""
    return Dataset.from_generator(lambda: iter(range(n)), output_signature=TensorSpec([], tf.int64))


SOURCES = {"range": Dataset.range, "generator": gen_range}


# ---- map ------------------------------------------------------------------------------

def test_map_unpacks_tuples_and_passes_dicts():
    ds = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert values(ds.map(lambda a, b: a * 10 + b)) == [13, 24]
    d = Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]})
    assert values(d.map(lambda e: {"s": e["a"] + e["b"]})) == [{"s": 4}, {"s": 6}]


def test_map_converts_results():
    ds = Dataset.range(2).map(lambda x: [x, 1.5, np.int32(7)])  # a list becomes a tuple of tensors
    out = list(ds)
    assert isinstance(out[0], tuple) and all(isinstance(t, tf.Tensor) for t in out[0])
    assert out[1][1].dtype == tf.float32 and values(ds) == [(0, 1.5, 7), (1, 1.5, 7)]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"returned None.*\[Op:MapDataset\]"):
        list(Dataset.range(2).map(lambda x: None))


def test_map_element_spec_is_inferred():
    ds = Dataset.from_tensor_slices(np.zeros((4, 28, 28), np.uint8)).batch(2)
    m = ds.map(lambda x: (tf.cast(x, tf.float32) / 255.0, tf.reduce_sum(tf.cast(x, tf.int32))))
    assert m.element_spec == (TensorSpec([None, 28, 28], tf.float32), TensorSpec([], tf.int32))


@pytest.mark.parametrize("par", [None, 1, 3, tf.data.AUTOTUNE])
def test_map_parallel_keeps_order(par):
    ds = Dataset.range(50).map(lambda x: x * x, num_parallel_calls=par)
    assert values(ds) == [i * i for i in range(50)]
    assert repr(ds).startswith("<ParallelMapDataset" if par is not None else "<MapDataset")


def test_map_nondeterministic_gives_every_result():
    ds = Dataset.range(40).map(lambda x: x + 1, num_parallel_calls=4, deterministic=False)
    assert sorted(values(ds)) == list(range(1, 41))
    opts = tf.data.Options()
    opts.deterministic = False
    ds = Dataset.range(40).map(lambda x: x + 1, num_parallel_calls=4).with_options(opts)
    assert sorted(values(ds)) == list(range(1, 41))


def test_map_bad_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected a function"):
        Dataset.range(2).map(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"num_parallel_calls = 0 is not allowed"):
        Dataset.range(2).map(lambda x: x, num_parallel_calls=0)


# ---- filter -----------------------------------------------------------------------------

def test_filter_with_tensor_and_python_predicates():
    assert values(Dataset.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert values(Dataset.range(5).filter(lambda x: int(x) > 2)) == [3, 4]
    ds = Dataset.from_tensor_slices(([1, 2, 3], [True, False, True])).filter(lambda x, keep: keep)
    assert values(ds) == [(1, True), (3, True)]
    assert int(ds.cardinality()) == UNKNOWN


def test_filter_predicate_must_be_a_scalar_bool():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"scalar bool.*shape \(2,\).*\[Op:FilterDataset\]"):
        list(Dataset.from_tensor_slices([[1, 2]]).filter(lambda x: x > 0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype int64"):
        list(Dataset.range(3).filter(lambda x: x))


# ---- batch, padded_batch, unbatch --------------------------------------------------------

@pytest.mark.parametrize("src", SOURCES)
@pytest.mark.parametrize("n,size,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False),
                                         (2, 5, True), (0, 4, False)])
def test_batch_remainders(src, n, size, drop):
    ds = SOURCES[src](n).batch(size, drop_remainder=drop)
    want = [list(range(i, min(i + size, n))) for i in range(0, n, size)]
    if drop:
        want = [b for b in want if len(b) == size]
    assert values(ds) == want
    if src == "range":
        assert len(ds) == len(want)
    assert ds.element_spec == TensorSpec([size if drop else None], tf.int64)


def test_batch_nested_structures():
    ds = Dataset.from_tensor_slices({"img": np.arange(12).reshape(6, 2), "lab": ([1, 2, 3, 4, 5, 6], list("abcdef"))})
    out = values(ds.batch(4))
    assert out[0] == {"img": [[0, 1], [2, 3], [4, 5], [6, 7]], "lab": ([1, 2, 3, 4], [b"a", b"b", b"c", b"d"])}
    assert out[1]["lab"][0] == [5, 6]
    spec = ds.batch(4).element_spec
    assert spec["img"] == TensorSpec([None, 2], tf.int64) and repr(spec["lab"][1].dtype) == "tf.string"


def test_batch_of_different_shapes_is_an_error():
    ds = Dataset.range(1, 4).map(lambda n: tf.zeros([n]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot batch tensors with different shapes in component 0. First element had shape "
                             r"\[1\] and dtype float32 and element 1 had shape \[2\].*\[Op:BatchDataset\]"):
        list(ds.batch(3))


def test_batch_of_different_structures_is_an_error():
    ds = Dataset.range(4).map(lambda x: (x, x) if int(x) % 2 else (x,))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"two elements of a batch do not have the same nesting: \(\.,\) vs\. \(\., \.\)"):
        list(ds.batch(2))


def test_batch_size_must_be_positive():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"batch_size = 0 is not allowed; allowed: >= 1"):
        Dataset.range(3).batch(0)


def test_batch_of_batches_and_unbatch_round_trip():
    ds = Dataset.range(9).batch(3).batch(2)
    assert values(ds) == [[[0, 1, 2], [3, 4, 5]], [[6, 7, 8]]]
    assert values(Dataset.range(10).batch(3).unbatch()) == list(range(10))
    pairs = Dataset.from_tensor_slices((np.arange(6).reshape(3, 2), np.arange(3))).batch(2).unbatch()
    assert values(pairs) == [([0, 1], 0), ([2, 3], 1), ([4, 5], 2)]
    assert pairs.element_spec[0] == TensorSpec([2], tf.int64)


def test_unbatch_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="differ in their first dimension"):
        list(Dataset.from_tensors(([1, 2], [1, 2, 3])).unbatch())
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 1"):
        _ = Dataset.range(3).unbatch().element_spec


def test_padded_batch_pads_to_the_batch_maximum():
    ds = Dataset.range(1, 5).map(lambda n: tf.fill([n], n))
    assert values(ds.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert ds.padded_batch(2).element_spec == TensorSpec([None, None], tf.int64)


def test_padded_batch_shapes_values_and_structures():
    ds = Dataset.range(1, 4).map(lambda n: (tf.fill([n, 2], n), tf.cast(n, tf.float32)))
    pb = ds.padded_batch(2, padded_shapes=([4, None], []), padding_values=(tf.constant(-1, tf.int64), 0.0),
                         drop_remainder=True)
    assert values(pb) == [([[[1, 1], [-1, -1], [-1, -1], [-1, -1]], [[2, 2], [2, 2], [-1, -1], [-1, -1]]],
                           [1.0, 2.0])]
    assert pb.element_spec == (TensorSpec([2, 4, None], tf.int64), TensorSpec([2], tf.float32))
    text = Dataset.from_tensor_slices([["a", "b"], ["c", "d"]]).map(lambda s: s[: 1 + tf.cast(s[0] == b"c", tf.int32)])
    assert values(text.padded_batch(2, padding_values="?")) == [[[b"a", b"?"], [b"c", b"d"]]]


def test_padded_batch_errors():
    ds = Dataset.range(1, 4).map(lambda n: tf.fill([n], n))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"smaller size than the input element.*\[3\]"):
        list(ds.padded_batch(3, padded_shapes=[2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="ranks differ"):
        ds.padded_batch(2, padded_shapes=[2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the element's nesting"):
        Dataset.zip(ds, ds).padded_batch(2, padded_shapes=[None])


# ---- repeat, take, skip, shard, enumerate -----------------------------------------------

@pytest.mark.parametrize("src", SOURCES)
def test_repeat_take_skip(src):
    mk = SOURCES[src]
    assert values(mk(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(mk(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(mk(3).repeat(0)) == []
    assert values(mk(0).repeat()) == []  # an empty input ends an infinite repeat
    assert values(mk(5).take(2)) == [0, 1]
    assert values(mk(5).take(-1)) == [0, 1, 2, 3, 4]
    assert values(mk(5).take(0)) == []
    assert values(mk(5).skip(3)) == [3, 4]
    assert values(mk(5).skip(9)) == []
    assert values(mk(5).skip(-1)) == []
    assert values(mk(10).skip(2).take(3).repeat(2)) == [2, 3, 4, 2, 3, 4]


@pytest.mark.parametrize("src", SOURCES)
def test_shard_order(src):
    mk = SOURCES[src]
    assert values(mk(10).shard(3, 0)) == [0, 3, 6, 9]
    assert values(mk(10).shard(3, 2)) == [2, 5, 8]
    assert values(mk(2).shard(4, 3)) == []
    assert values(mk(7).repeat(2).shard(5, 1)) == [1, 6, 4]


def test_shard_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"index = 3 is not in \[0, 3\).*\[Op:ShardDataset\]"):
        Dataset.range(5).shard(3, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_shards = 0 is not allowed"):
        Dataset.range(5).shard(0, 0)


def test_enumerate():
    ds = Dataset.from_tensor_slices(["a", "b"]).enumerate(start=5)
    assert values(ds) == [(5, b"a"), (6, b"b")]
    assert ds.element_spec[0] == TensorSpec([], tf.int64)
    assert values(gen_range(2).enumerate()) == [(0, 0), (1, 1)]


# ---- interleave, flat_map ------------------------------------------------------------

def test_interleave_order_matches_tensorflow_docs():
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2,
                                        block_length=4)
    assert values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]
    assert int(ds.cardinality()) == UNKNOWN


def test_interleave_uneven_lengths_and_flat_map():
    ds = Dataset.range(4).interleave(lambda x: Dataset.range(x), cycle_length=3)
    assert values(ds) == [0, 0, 0, 1, 1, 2]
    assert values(Dataset.range(4).flat_map(lambda x: Dataset.range(x))) == [0, 0, 1, 0, 1, 2]
    assert values(Dataset.range(3).interleave(lambda x: Dataset.range(x), num_parallel_calls=2)) == [0, 0, 1]
    assert Dataset.range(3).interleave(lambda x: Dataset.range(x)).element_spec == TensorSpec([], tf.int64)


def test_interleave_must_return_datasets():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must return a `Dataset` object, got Tensor"):
        list(Dataset.range(2).interleave(lambda x: x))


# ---- reduce, apply, iteration ------------------------------------------------------------

def test_reduce():
    assert int(Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10
    count, total = Dataset.from_tensor_slices([1.0, 2.0, 3.0]).reduce(
        (np.int64(0), 0.0), lambda s, x: (s[0] + 1, s[1] + x))
    assert (int(count), float(total)) == (3, 6.0)
    pairs = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert int(pairs.reduce(0, lambda s, e: s + e[0] * e[1])) == 11


def test_reduce_state_must_keep_its_structure_and_dtype():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"nested as \(\., \.\).*\[Op:ReduceDataset\]"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: (s, x))
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype float32 where the initial state has int64"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: tf.cast(s + x, tf.float32))


def test_apply():
    assert values(Dataset.range(6).apply(lambda d: d.skip(4))) == [4, 5]
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned int, not a Dataset"):
        Dataset.range(2).apply(lambda d: 3)


def test_for_loop_iterates_epochs_and_get_next_ends_with_out_of_range():
    ds = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert [(int(x), int(y)) for x, y in ds] == [(1, 3), (2, 4)]
    assert [(int(x), int(y)) for x, y in ds] == [(1, 3), (2, 4)]
    it = iter(ds)
    it.get_next()
    it.get_next()
    with pytest.raises(tf.errors.OutOfRangeError, match=r"End of sequence \[Op:IteratorGetNext\]"):
        it.get_next()
    assert it.element_spec == ds.element_spec


def test_as_numpy_iterator_types():
    out = list(Dataset.from_tensor_slices(({"a": [1.5, 2.5]}, ["x", "y"])).as_numpy_iterator())
    assert isinstance(out[0][0]["a"], np.float32) and out[0][1] == b"x"
    batch = next(Dataset.from_tensor_slices(np.ones((3, 2), np.float32)).batch(3).as_numpy_iterator())
    assert isinstance(batch, np.ndarray) and batch.shape == (3, 2)


# ---- cardinality, len, repr, options ---------------------------------------------------

@pytest.mark.parametrize("make,want", [
    (lambda: Dataset.range(10), 10),
    (lambda: Dataset.range(10).batch(3), 4),
    (lambda: Dataset.range(10).batch(3, drop_remainder=True), 3),
    (lambda: Dataset.range(10).repeat(), INF),
    (lambda: Dataset.range(10).repeat(3), 30),
    (lambda: Dataset.range(0).repeat(), 0),
    (lambda: Dataset.range(10).repeat().take(4), 4),
    (lambda: Dataset.range(10).repeat().skip(4), INF),
    (lambda: Dataset.range(10).repeat().batch(4), INF),
    (lambda: Dataset.range(10).filter(lambda x: x > 2), UNKNOWN),
    (lambda: Dataset.range(10).filter(lambda x: x > 2).take(3), UNKNOWN),
    (lambda: Dataset.range(10).filter(lambda x: x > 2).repeat(), INF),
    (lambda: Dataset.range(10).filter(lambda x: x > 2).repeat(0), 0),
    (lambda: Dataset.range(10).skip(4), 6),
    (lambda: Dataset.range(10).skip(40), 0),
    (lambda: Dataset.range(10).take(40), 10),
    (lambda: Dataset.range(10).shard(3, 0), 4),
    (lambda: Dataset.range(10).shard(3, 1), 3),
    (lambda: Dataset.range(10).map(lambda x: x).shuffle(4).prefetch(2).cache(), 10),
    (lambda: Dataset.zip(Dataset.range(3), Dataset.range(5)), 3),
    (lambda: Dataset.zip(Dataset.range(3), Dataset.range(5).repeat()), 3),
    (lambda: Dataset.zip(Dataset.range(3), Dataset.range(5).filter(lambda x: True)), UNKNOWN),
    (lambda: Dataset.range(3).concatenate(Dataset.range(4)), 7),
    (lambda: Dataset.range(3).concatenate(Dataset.range(4).repeat()), INF),
    (lambda: Dataset.range(3).unbatch() if False else Dataset.range(6).batch(2).unbatch(), UNKNOWN),
    (lambda: Dataset.from_tensors(1), 1),
    (lambda: Dataset.range(7).padded_batch(2), 4),
])
def test_cardinality(make, want):
    ds = make()
    c = ds.cardinality()
    assert c.dtype == tf.int64 and int(c) == want
    assert int(tf.data.experimental.cardinality(ds)) == want
    if want >= 0:
        assert len(ds) == want
    else:
        with pytest.raises(TypeError, match="infinite" if want == INF else "unknown"):
            len(ds)


def test_repr_matches_the_seed():
    images = np.zeros((6, 28, 28), np.uint8)
    labels = np.arange(6, dtype=np.int32)

    def prep(d):
        x = tf.cast(d["x"], tf.float32) / 255
        return tf.expand_dims(x, axis=-1), d["y"]

    ds = Dataset.from_tensor_slices({"x": images, "y": labels}).map(prep).shuffle(1000).batch(32)
    assert repr(ds) == "<BatchDataset shapes: ((None, 28, 28, 1), (None,)), types: (tf.float32, tf.int32)>"
    assert repr(Dataset.from_tensor_slices({"a": [1.0]})) == "<TensorSliceDataset shapes: {a: ()}, types: {a: tf.float32}>"


def test_options_merge_down_the_pipeline():
    a = tf.data.Options()
    a.deterministic = False
    b = tf.data.Options()
    b.experimental_optimization.map_vectorization = False
    ds = Dataset.range(3).with_options(a).map(lambda x: x).with_options(b)
    opts = ds.options()
    assert opts.deterministic is False and opts.experimental_optimization.map_vectorization is False
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a tf.data.Options"):
        Dataset.range(3).with_options({"deterministic": False})


# ---- nested structures through every transformation -------------------------------------

def test_nested_structure_survives_every_transformation(tmp_path):
    base = Dataset.from_tensor_slices({"a": np.arange(8), "b": (np.arange(8) * 2.0, np.arange(16).reshape(8, 2))})
    pipe = (base.map(lambda e: {"a": e["a"] + 1, "b": e["b"]})
            .filter(lambda e: e["a"] % 2 == 0)
            .shuffle(3, seed=2)
            .repeat(2)
            .skip(1)
            .take(7)
            .shard(1, 0)
            .cache()
            .cache(str(tmp_path / "c"))
            .prefetch(2)
            .batch(3)
            .unbatch()
            .padded_batch(2)
            .unbatch())
    out = list(pipe.as_numpy_iterator())
    assert len(out) == 7
    for e in out:
        assert set(e) == {"a", "b"} and isinstance(e["b"], tuple)
        assert e["a"] % 2 == 0 and e["b"][0] == (e["a"] - 1) * 2.0 and e["b"][1].tolist() == [2 * e["a"] - 2,
                                                                                               2 * e["a"] - 1]
    spec = pipe.element_spec
    assert spec["b"][1] == TensorSpec([2], tf.int64)


def test_take_while_and_get_single_element_as_tensorflow():
    assert [int(x) for x in Dataset.range(10).take_while(lambda x: x < 3)] == [0, 1, 2]
    assert [int(x) for x in Dataset.range(5).take_while(lambda x: x % 2 == 0)] == [0]
    assert int(Dataset.range(10).take_while(lambda x: x < 3).cardinality()) == -2  # unknown, as TensorFlow's
    x, s = Dataset.from_tensors((tf.constant([1, 2]), "z")).get_single_element()
    assert x.numpy().tolist() == [1, 2] and s.dtype is tf.string and s.numpy() == b"z"
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Dataset was empty\. \[Op:DatasetToSingleElement\]"):
        Dataset.range(0).get_single_element()
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
        Dataset.range(2).get_single_element()
