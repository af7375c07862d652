"""Sources: from_tensor_slices, from_tensors, range, from_generator, zip, concatenate, list_files."""
import collections

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import Dataset, TensorSpec


def values(ds):
    return [_py(e) for e in ds.as_numpy_iterator()]


def _py(e):
    if isinstance(e, tuple):
        return tuple(_py(x) for x in e)
    if isinstance(e, dict):
        return {k: _py(v) for k, v in e.items()}
    if isinstance(e, np.ndarray):
        return e.tolist()
    if isinstance(e, np.generic):
        return e.item()
    return e


# ---- from_tensor_slices ------------------------------------------------------------

def test_slices_of_tensor_array_and_list():
    assert values(Dataset.from_tensor_slices(tf.constant([[1, 2], [3, 4]]))) == [[1, 2], [3, 4]]
    arr = np.arange(6, dtype=np.float64).reshape(3, 2)
    ds = Dataset.from_tensor_slices(arr)
    assert values(ds) == arr.tolist()
    assert ds.element_spec == TensorSpec([2], tf.float64)
    # a list is a value (stacked), not a structure, as in TensorFlow
    ds = Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert ds.element_spec == TensorSpec([2], tf.float32)
    assert len(ds) == 3


def test_slices_of_nested_tuples_dicts_namedtuples():
    Point = collections.namedtuple("Point", "x y")
    ds = Dataset.from_tensor_slices({"b": ([1, 2], [[1.0], [2.0]]), "a": Point([10, 20], [True, False])})
    out = list(ds)
    assert isinstance(out[0], dict) and list(out[0]) == ["b", "a"]  # the user's key order
    assert isinstance(out[0]["a"], Point)
    assert values(ds) == [{"b": (1, [1.0]), "a": Point(10, True)}, {"b": (2, [2.0]), "a": Point(20, False)}]
    spec = ds.element_spec
    assert spec["a"].x == TensorSpec([], tf.int32) and spec["b"][1] == TensorSpec([1], tf.float32)


def test_slices_of_text():
    ds = Dataset.from_tensor_slices(["ab", "c"])
    assert values(ds) == [b"ab", b"c"]
    assert repr(ds.element_spec) == "TensorSpec(shape=(), dtype=tf.string, name=None)"
    assert values(ds.batch(2)) == [[b"ab", b"c"]]


def test_slices_mismatched_first_dimension_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        Dataset.from_tensor_slices(([1, 2, 3], [1, 2]))
    msg = str(e.value)
    assert "3 (component 0, shape (3,))" in msg and "2 (component 1, shape (2,))" in msg
    assert msg.endswith("[Op:TensorSliceDataset]")


def test_slices_of_a_scalar_or_nothing_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"component 1 is a scalar.*\[Op:TensorSliceDataset\]"):
        Dataset.from_tensor_slices(([1, 2], 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty structure"):
        Dataset.from_tensor_slices(())
    with pytest.raises(tf.errors.InvalidArgumentError, match="ragged"):
        Dataset.from_tensor_slices([[1, 2], [3]])


def test_slices_of_empty_rows():
    ds = Dataset.from_tensor_slices(np.zeros((3, 0), np.float32))
    out = list(ds)
    assert len(out) == 3 and all(t.shape == (0,) for t in out)
    assert list(Dataset.from_tensor_slices(np.zeros((0, 4)))) == []


def test_slices_copy_their_input():
    arr = np.array([1, 2, 3])
    ds = Dataset.from_tensor_slices(arr)
    arr[0] = 100
    v = tf.Variable([1.0, 2.0])
    dv = Dataset.from_tensor_slices(v)
    v.assign([5.0, 6.0])
    assert values(ds) == [1, 2, 3] and values(dv) == [1.0, 2.0]


# ---- from_tensors, range ------------------------------------------------------------

def test_from_tensors_is_one_element():
    ds = Dataset.from_tensors(([1, 2, 3], {"k": 4.0}))
    assert values(ds) == [([1, 2, 3], {"k": 4.0})]
    assert len(ds) == 1
    assert ds.element_spec[0] == TensorSpec([3], tf.int32)


@pytest.mark.parametrize("args", [(5,), (2, 7), (10, 0, -3), (0,), (5, 1), (-4, 4, 3)])
def test_range_like_python(args):
    ds = Dataset.range(*args)
    assert values(ds) == list(range(*args))
    assert len(ds) == len(range(*args))
    assert ds.element_spec == TensorSpec([], tf.int64)


def test_range_dtype_and_errors():
    assert Dataset.range(3, dtype=tf.int32).element_spec.dtype == tf.int32
    assert Dataset.range(3, output_type=tf.int16).element_spec.dtype == tf.int16
    assert list(Dataset.range(3, dtype=tf.float32).as_numpy_iterator())[2].dtype == np.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"step must be a non-zero integer.*\[Op:RangeDataset\]"):
        Dataset.range(0, 5, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be an integer"):
        Dataset.range(2.5)


# ---- from_generator -------------------------------------------------------------------

def test_generator_with_signature_and_reiteration():
    calls = []

    def gen(n):
        calls.append(n)
        for i in range(n):
            yield {"i": i, "v": np.full([i], i, np.float32)}

    sig = {"i": TensorSpec([], tf.int64), "v": TensorSpec([None], tf.float32)}
    ds = Dataset.from_generator(gen, output_signature=sig, args=(3,))
    assert values(ds) == [{"i": 0, "v": []}, {"i": 1, "v": [1.0]}, {"i": 2, "v": [2.0, 2.0]}]
    assert next(iter(ds))["i"].dtype == tf.int64
    assert len(values(ds)) == 3 and calls == [3, 3, 3]
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert ds.element_spec == sig


def test_generator_legacy_types_and_shapes():
    ds = Dataset.from_generator(lambda: iter([(1, [1.0, 2.0])]), output_types=(tf.int32, tf.float32),
                                output_shapes=((), (2,)))
    assert values(ds) == [(1, [1.0, 2.0])]
    ds = Dataset.from_generator(lambda: iter([[1, 2]]), output_types=tf.int64)
    assert ds.element_spec.shape is None and values(ds) == [[1, 2]]


def test_generator_errors_name_what_arrived():
    sig = (TensorSpec([], tf.int32), TensorSpec([3], tf.float32))
    bad_structure = Dataset.from_generator(lambda: iter([5]), output_signature=sig)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"did not match the expected structure.*\(\., \.\)"):
        list(bad_structure)
    bad_shape = Dataset.from_generator(lambda: iter([(1, [1.0, 2.0])]), output_signature=sig)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"shape \(2,\) where an element of shape \(3,\) was expected \[Op:FromGenerator\]"):
        list(bad_shape)
    bad_dtype = Dataset.from_generator(lambda: iter([(1.5, [1.0, 2.0, 3.0])]), output_signature=sig)
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not be converted to the expected type int32"):
        list(bad_dtype)
    with pytest.raises(tf.errors.InvalidArgumentError, match="needs output_signature"):
        Dataset.from_generator(lambda: iter([]))


def test_generator_exception_keeps_its_type_and_traceback():
    def broken_generator():
        yield 1
        raise KeyError("boom")

    ds = Dataset.from_generator(broken_generator, output_signature=TensorSpec([], tf.int32))
    it = iter(ds)
    assert int(next(it)) == 1
    with pytest.raises(KeyError) as e:
        next(it)
    assert "broken_generator" in [f.name for f in e.traceback]


# ---- zip, concatenate -------------------------------------------------------------------

def test_zip_structures_and_shortest():
    a, b, c = Dataset.range(3), Dataset.range(10, 15), Dataset.from_tensor_slices([[1.0], [2.0]])
    assert values(Dataset.zip(a, b)) == [(0, 10), (1, 11), (2, 12)]
    assert values(Dataset.zip((a, (b, c)))) == [(0, (10, [1.0])), (1, (11, [2.0]))]
    assert values(Dataset.zip({"x": a, "y": b})) == [{"x": 0, "y": 10}, {"x": 1, "y": 11}, {"x": 2, "y": 12}]
    assert values(Dataset.zip(datasets=(a, b)).take(1)) == [(0, 10)]
    assert len(Dataset.zip(a, b)) == 3
    gen = Dataset.from_generator(lambda: iter(range(2)), output_signature=TensorSpec([], tf.int64))
    assert values(Dataset.zip(gen, b)) == [(0, 10), (1, 11)]


def test_zip_of_non_datasets_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"structure of `Dataset` objects.*\[Op:ZipDataset\]"):
        Dataset.zip(Dataset.range(2), [1, 2])


def test_concatenate_order_spec_and_errors():
    a = Dataset.from_tensor_slices([[1, 2], [3, 4]])
    b = Dataset.from_tensor_slices([[5, 6, 7]])
    ab = a.concatenate(b)
    assert values(ab) == [[1, 2], [3, 4], [5, 6, 7]]
    assert ab.element_spec == TensorSpec([None], tf.int32)
    assert len(ab) == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype int32 vs. float32"):
        a.concatenate(Dataset.from_tensor_slices([[1.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"nested as \. vs\. \(\., \.\)"):
        a.concatenate(Dataset.zip(a, a))


def test_list_files(tmp_path):
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text(name)
    ds = Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert [f.numpy().decode() for f in ds] == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    both = Dataset.list_files([str(tmp_path / "*.csv"), str(tmp_path / "a*")], shuffle=False)
    assert [f.numpy().rsplit(b"/", 1)[1] for f in both] == [b"c.csv", b"a.txt"]
    shuffled = Dataset.list_files(str(tmp_path / "*"), seed=3)
    assert sorted(shuffled.as_numpy_iterator()) == sorted(f.encode() for f in map(str, tmp_path.iterdir()))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"No files matched pattern: .*nothing\*.*ListFiles"):
        Dataset.list_files(str(tmp_path / "nothing*"))
