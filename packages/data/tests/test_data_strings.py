"""Text in tf.data pipelines: components of core's tf.string dtype (held as bytes / object arrays of bytes
inside a pipeline), string tensors as sources and map results, tf.strings ops in map, batching; compared with
TensorFlow when it is installed."""
from __future__ import annotations

import os

import numpy as np
import tapeflow as tf


def _tf_or_none():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow
    except Exception:  # noqa: BLE001 (a broken TensorFlow install is as good as none)
        return None
    return tensorflow


TF = _tf_or_none()


def _values(ds):
    return [tuple(np.asarray(v).tolist() for v in e) if isinstance(e, tuple) else np.asarray(e).tolist()
            for e in ds.as_numpy_iterator()]


def both(build):
    """build(module) with tapeflow and, when installed, TensorFlow: equal elements."""
    got = _values(build(tf))
    if TF is not None:
        assert got == _values(build(TF))
    return got


def test_text_components_have_cores_string_dtype():
    ds = tf.data.Dataset.from_tensor_slices([b"a", b"b"])
    assert ds.element_spec.dtype is tf.string and ds.element_spec.shape == ()
    assert tf.data.TensorSpec([None], tf.string).is_compatible_with(np.array([b"x"], dtype=object))
    assert tf.data.TensorSpec([], "string").dtype is tf.string


def test_slices_of_string_tensors_and_lists():
    assert both(lambda m: m.data.Dataset.from_tensor_slices([b"a", b"b"])) == [b"a", b"b"]
    assert both(lambda m: m.data.Dataset.from_tensor_slices(m.constant(["x", "y z"]))) == [b"x", b"y z"]
    assert both(lambda m: m.data.Dataset.from_tensor_slices((m.constant(["p", "q"]), [1, 2]))) == \
        [(b"p", 1), (b"q", 2)]


def test_map_over_strings_with_tf_strings_ops():
    def build(m):
        ds = m.data.Dataset.from_tensor_slices(["Hello world", "tf data", "a"])
        return ds.map(lambda s: (m.strings.upper(s), m.strings.length(s), m.strings.split(s)[0]))

    assert both(build) == [(b"HELLO WORLD", 11, b"Hello"), (b"TF DATA", 7, b"tf"), (b"A", 1, b"a")]
    ds = build(tf)
    assert [s.dtype for s in ds.element_spec] == [tf.string, tf.int32, tf.string]


def test_batch_and_unbatch_of_strings():
    def build(m):
        return m.data.Dataset.from_tensor_slices(["a", "b", "c"]).map(lambda s: m.strings.join([s, "!"])).batch(2)

    assert both(build) == [[b"a!", b"b!"], [b"c!"]]
    spec = build(tf).element_spec
    assert spec.dtype is tf.string and tuple(spec.shape) == (None,)
    assert both(lambda m: build(m).unbatch()) == [b"a!", b"b!", b"c!"]
    # a batch of strings goes through a batched string op and back
    assert both(lambda m: build(m).map(lambda b: m.strings.reduce_join(b, separator="+"))) == [b"a!+b!", b"c!"]


def test_generator_with_a_string_signature():
    def gen():
        yield "x", 1
        yield b"yy", 2

    def build(m):
        spec = m.data.TensorSpec if m is tf else m.TensorSpec  # (tapeflow's from_generator takes tf.data.TensorSpec)
        sig = (spec([], m.string), spec([], m.int32))
        return m.data.Dataset.from_generator(gen, output_signature=sig)

    assert both(build) == [(b"x", 1), (b"yy", 2)]


def _is_string_tensor(v, shape):
    return isinstance(v, tf.Tensor) and v.dtype is tf.string and tuple(v.shape) == shape


def test_iteration_yields_string_tensors_as_tensorflow():
    # TensorFlow: next(iter(from_tensor_slices(["a", "b"]))) is <tf.Tensor: shape=(), dtype=string, numpy=b'a'>
    ds = tf.data.Dataset.from_tensor_slices(["a", "b"])
    e = next(iter(ds))
    assert _is_string_tensor(e, ()) and e.numpy() == b"a"
    assert _is_string_tensor(iter(ds).get_next(), ())
    assert list(ds.as_numpy_iterator()) == [b"a", b"b"]  # bytes there, as in TensorFlow
    for d, shape in ((ds.batch(2), (2,)), (ds.cache(), ()), (ds.shuffle(2, seed=1), ()),
                     (ds.map(tf.strings.upper), ()), (tf.data.Dataset.from_tensors("x"), ()),
                     (tf.data.Dataset.from_tensor_slices([["a", "b"], ["c", "d"]]).padded_batch(2), (2, 2))):
        for v in d:
            assert _is_string_tensor(v, shape)
    e = next(iter(tf.data.Dataset.from_tensor_slices({"t": ["a"], "y": [1]})))
    assert _is_string_tensor(e["t"], ()) and e["y"].dtype is tf.int32


def test_functions_receive_string_tensors():
    seen = []

    def f(s, y):
        seen.append(type(s))
        return tf.strings.length(s) + tf.cast(tf.size(tf.reshape(s, [-1])), tf.int32) * 0 + y, s.shape.rank

    ds = tf.data.Dataset.from_tensor_slices((["ab", "c"], [1, 2])).map(f)
    assert [tuple(np.asarray(v).tolist() for v in e) for e in ds.as_numpy_iterator()] == [(3, 0), (3, 0)]
    assert set(seen) == {tf.Tensor}
    kept = tf.data.Dataset.from_tensor_slices(["ab", "c"]).filter(lambda s: s.shape == () and
                                                                    tf.strings.length(s) > 1)
    assert list(kept.as_numpy_iterator()) == [b"ab"]
    out = tf.data.Dataset.from_tensor_slices(["a", "b"]).scan(
        tf.constant(""), lambda st, s: (tf.strings.join([st, s]), tf.strings.join([st, s])))
    assert list(out.as_numpy_iterator()) == [b"a", b"ab"]
    total = tf.data.Dataset.from_tensor_slices(["a", "bc"]).reduce(
        tf.constant(0), lambda n, s: n + tf.strings.length(s))
    assert int(total) == 3


def test_sparse_elements_from_parse_single_example_as_tensorflow(tmp_path):
    # the TFRecord idiom: map(parse_single_example) with a VarLenFeature yields SparseTensors; batch stacks them
    from tapeflow.core.io import _proto as pb

    p = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        for vals in ([b"hi"], [b"a", b"b", b"c"], []):
            ex = pb.Example(features=pb.Features(feature={   # tf.train's messages (tf.train is tapeflow-nn's)
                "s": pb.Feature(bytes_list=pb.BytesList(value=vals))}))
            w.write(ex.SerializeToString())
    spec = {"s": tf.io.VarLenFeature(tf.string)}
    ds = tf.data.TFRecordDataset(p).map(lambda r: tf.io.parse_single_example(r, spec)["s"])
    assert type(ds.element_spec).__name__ == "SparseTensorSpec" and ds.element_spec.dtype is tf.string
    got = [(type(e).__name__, tf.sparse.to_dense(e).numpy().tolist()) for e in ds]
    assert got == [("SparseTensor", [b"hi"]), ("SparseTensor", [b"a", b"b", b"c"]), ("SparseTensor", [])]
    batches = list(ds.batch(2))
    assert batches[0].indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1], [1, 2]]  # TensorFlow 2.21's batch
    assert batches[0].values.numpy().tolist() == [b"hi", b"a", b"b", b"c"]
    assert batches[0].dense_shape.numpy().tolist() == [2, 3] and batches[1].dense_shape.numpy().tolist() == [1, 0]
    assert tf.sparse.to_dense(batches[0]).numpy().tolist() == [[b"hi", b"", b""], [b"a", b"b", b"c"]]
    assert len(ds.batch(2).element_spec.shape) == 2
    rows = [tf.sparse.to_dense(e).numpy().tolist() for e in ds.batch(2).unbatch()]
    assert rows == [[b"hi", b"", b""], [b"a", b"b", b"c"], []]  # unbatch keeps each batch's dense width


def test_from_tensor_slices_of_a_sparse_tensor_as_tensorflow():
    st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2], [2, 1], [2, 3]], values=[1.0, 2.0, 3.0, 4.0],
                                dense_shape=[3, 4])
    ds = tf.data.Dataset.from_tensor_slices((st, [10, 20, 30]))
    assert type(ds.element_spec[0]).__name__ == "SparseTensorSpec" and ds.element_spec[0].shape == (4,)
    got = [(s.indices.numpy().tolist(), s.values.numpy().tolist(), s.dense_shape.numpy().tolist(), int(y))
           for s, y in ds]  # TensorFlow 2.21's elements
    assert got == [([[0]], [1.0], [4], 10), ([[2]], [2.0], [4], 20), ([[1], [3]], [3.0, 4.0], [4], 30)]
    back = next(iter(ds.batch(3)))[0]
    assert back.indices.numpy().tolist() == [[0, 0], [1, 2], [2, 1], [2, 3]] and back.dense_shape.numpy().tolist() \
        == [3, 4]


def test_a_tf_function_loop_over_a_text_pipeline(tmp_path):
    # TensorFlow: a for loop over a dataset inside tf.function; the map's string results are symbolic while tracing
    p = tmp_path / "data.csv"
    p.write_text("x,name\n1,a\n3,bb\n")

    def parse(line):
        x, n = tf.io.decode_csv(line, [[0], [""]])
        return x, tf.strings.upper(n)

    ds = tf.data.TextLineDataset(str(p)).skip(1).map(parse).batch(2)

    @tf.function
    def total(ds):
        s = tf.constant(0)
        for x, n in ds:
            s += tf.reduce_sum(x) + tf.reduce_sum(tf.strings.length(n))
        return s

    assert int(total(ds)) == 7
    assert [n.numpy().tolist() for _, n in ds] == [[b"A", b"BB"]]
