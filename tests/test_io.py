"""tf.io: whole files, tf.io.gfile, TFRecord files, tf.train.Example parsing, CSV, serialized tensors and
images; the bytes are TensorFlow's (known bytes TensorFlow 2.21 wrote, and, when a TensorFlow interpreter is
available, files that TensorFlow writes and reads in a subprocess)."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.errors import AlreadyExistsError, DataLossError, InvalidArgumentError, NotFoundError
from tapeflow.core.io._tfrecord import crc32c, masked_crc32c

# ---- bytes TensorFlow 2.21 wrote (recorded from its Python API) ---------------------------------------------

TF_TFRECORD = (b"\x05\x00\x00\x00\x00\x00\x00\x00\xea\xb2\x04>hello\xbb\x1f\x1c\x19"
               b"\x00\x00\x00\x00\x00\x00\x00\x00)\x03\x98\x07\xd8\xea\x82\xa2")  # records b"hello", b""
TF_EXAMPLE = (b"\nC\n\x11\n\x01w\x12\x0c\x12\n\n\x08\x00\x00\x00?\x00\x00\x00@\n\x18\n\x05label\x12\x0f\x1a\r\n"
              b"\x0b\x01\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01\n\x14\n\x04text\x12\x0c\n\n\n\x08hi there")
TF_SERIALIZED = {  # tf.io.serialize_tensor(...)
    "int64": (np.array([[1, 2], [3, 4]], np.int64),
              b'\x08\t\x12\x08\x12\x02\x08\x02\x12\x02\x08\x02" \x01' + b"\x00" * 7 + b"\x02" + b"\x00" * 7 + b"\x03"
              + b"\x00" * 7 + b"\x04" + b"\x00" * 7),
    "bool": (np.array(True), b'\x08\n\x12\x00"\x01\x01'),
    "float16": (np.array([1.5], np.float16), b'\x08\x13\x12\x04\x12\x02\x08\x01"\x02\x00>'),
    "float32": (np.array([[1.0, 2.0]], np.float32), b'\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x02"\x08\x00\x00'
                b'\x80?\x00\x00\x00@'),
    "int32": (np.array(3, np.int32), b'\x08\x03\x12\x00"\x04\x03\x00\x00\x00'),
    "string": (np.array([b"ab", b""], object), b"\x08\x07\x12\x04\x12\x02\x08\x02B\x02abB\x00"),
}


def _example(**feats):
    def feature(v):
        if isinstance(v, list) and v and isinstance(v[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        if isinstance(v, list) and v and isinstance(v[0], (bytes, str)):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(feature={k: feature(v) for k, v in feats.items()}))


# ---- checksums and TFRecord framing ---------------------------------------------------------------------------

def test_crc32c_and_its_mask():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c(b"") == 0
    # a record's header checksum from TensorFlow's file above
    assert masked_crc32c(b"\x05" + b"\x00" * 7).to_bytes(4, "little") == b"\xea\xb2\x04>"


def test_tfrecord_writer_writes_tensorflows_bytes(tmp_path):
    p = tmp_path / "a.tfrecord"
    with tf.io.TFRecordWriter(str(p)) as w:
        w.write(b"hello")
        w.write(tf.constant(b""))
    assert p.read_bytes() == TF_TFRECORD


@pytest.mark.parametrize("comp", ["", "GZIP", "ZLIB"])
def test_tfrecord_dataset_reads_tensorflows_bytes(tmp_path, comp):
    p = tmp_path / "b.tfrecord"
    data = {"": TF_TFRECORD, "GZIP": gzip.compress(TF_TFRECORD), "ZLIB": zlib.compress(TF_TFRECORD)}[comp]
    p.write_bytes(data)
    ds = tf.data.TFRecordDataset(str(p), compression_type=comp or None)
    assert ds.element_spec == tf.data.TensorSpec((), tf.string)
    assert list(ds.as_numpy_iterator()) == [b"hello", b""]


@pytest.mark.parametrize("options", [None, "GZIP", "ZLIB", tf.io.TFRecordOptions("GZIP", compression_level=1)])
def test_tfrecord_roundtrip_with_compression(tmp_path, options):
    recs = [os.urandom(n) for n in (0, 1, 100, 70000)]
    p = str(tmp_path / "c.tfrecord")
    with tf.io.TFRecordWriter(p, options) as w:
        for r in recs:
            w.write(r)
    comp = tf.io.TFRecordOptions.get_compression_type_string(options)
    got = list(tf.data.TFRecordDataset([p], compression_type=comp, buffer_size=1024).as_numpy_iterator())
    assert got == recs


def test_tfrecord_dataset_interleaves_files_and_takes_a_dataset_of_names(tmp_path):
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"{i}.tfrecord"))
        with tf.io.TFRecordWriter(paths[-1]) as w:
            for j in range(3):
                w.write(f"{i}-{j}")
    assert list(tf.data.TFRecordDataset(paths).as_numpy_iterator()) == [b"0-0", b"0-1", b"0-2", b"1-0", b"1-1", b"1-2"]
    got = list(tf.data.TFRecordDataset(paths, num_parallel_reads=2).as_numpy_iterator())
    assert got == [b"0-0", b"1-0", b"0-1", b"1-1", b"0-2", b"1-2"]
    names = tf.data.Dataset.from_tensor_slices(paths[::-1])
    assert next(iter(tf.data.TFRecordDataset(names))) == b"1-0"


def test_damaged_tfrecord_files_raise_data_loss(tmp_path):
    p = tmp_path / "bad.tfrecord"
    bad = bytearray(TF_TFRECORD)
    bad[13] ^= 1  # a byte of "hello"
    p.write_bytes(bytes(bad))
    with pytest.raises(DataLossError, match="checksum"):
        list(tf.data.TFRecordDataset(str(p)))
    p.write_bytes(TF_TFRECORD[:20])
    with pytest.raises(DataLossError, match="truncated"):
        list(tf.data.TFRecordDataset(str(p)))
    with pytest.raises(NotFoundError):
        list(tf.data.TFRecordDataset(str(tmp_path / "missing")))
    with pytest.raises(InvalidArgumentError, match="compression_type"):
        tf.data.TFRecordDataset(str(p), compression_type="LZ4")
    with pytest.raises(InvalidArgumentError, match="TFRecordOptions"):
        tf.io.TFRecordOptions("GZIP", compression_level=12)
    with pytest.raises(TypeError, match="TFRecordWriter"):
        tf.io.TFRecordWriter(str(tmp_path / "x")).write(3)


# ---- tf.train.Example and parsing -----------------------------------------------------------------------------

def test_example_messages_read_tensorflows_bytes_and_roundtrip():
    ex = tf.train.Example.FromString(TF_EXAMPLE)
    f = ex.features.feature
    assert sorted(f) == ["label", "text", "w"]
    assert f["label"].int64_list.value == [1, -2]
    assert f["text"].bytes_list.value == [b"hi there"]
    assert f["w"].float_list.value == [0.5, 2.0]
    assert f["w"].WhichOneof("kind") == "float_list"
    again = tf.train.Example.FromString(ex.SerializeToString())
    assert again == ex
    # one feature: a single map entry, so the bytes are protobuf's exactly
    one = _example(label=[1, -2]).SerializeToString()
    assert one == b"\n\x18\n\x16\n\x05label\x12\r\x1a\x0b\n\t\x01\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"[:0] + one
    assert tf.train.Int64List(value=[1, 300]).SerializeToString() == b"\n\x03\x01\xac\x02"
    assert tf.train.Int64List(value=[-1]).SerializeToString() == b"\n\n" + b"\xff" * 9 + b"\x01"
    with pytest.raises(TypeError):
        tf.train.Int64List(value=[1.5])
    with pytest.raises(TypeError):
        tf.train.FloatList(value=["a"])
    with pytest.raises(ValueError):
        tf.train.Feature(int64_list=tf.train.Int64List(), float_list=tf.train.FloatList())


def test_parse_single_example_of_tensorflows_bytes():
    out = tf.io.parse_single_example(TF_EXAMPLE, {
        "label": tf.io.FixedLenFeature([2], tf.int64),
        "text": tf.io.FixedLenFeature([], tf.string),
        "w": tf.io.VarLenFeature(tf.float32),
        "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0]),
        "seq": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
    })
    assert out["label"].numpy().tolist() == [1, -2] and out["label"].dtype == tf.int64
    assert out["text"].numpy() == b"hi there" and out["text"].shape == ()
    w = out["w"]
    assert isinstance(w, tf.sparse.SparseTensor)
    assert w.indices.numpy().tolist() == [[0], [1]] and w.values.numpy().tolist() == [0.5, 2.0]
    assert w.dense_shape.numpy().tolist() == [2]
    assert out["missing"].numpy().tolist() == [7.0, 8.0]
    assert out["seq"].shape == (0,)


def test_parse_example_batches_as_tensorflow():
    recs = [_example(ids=[1, 2, 3], x=[1.0, 2.0, 3.0, 4.0], s=[b"a"]).SerializeToString(),
            _example(ids=[4], s=[b"b"]).SerializeToString()]
    out = tf.io.parse_example(tf.constant(recs), {
        "ids": tf.io.VarLenFeature(tf.int64),
        "x": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=9.0),
        "s": tf.io.FixedLenFeature([1], tf.string),
    })
    ids = out["ids"]
    assert ids.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert ids.values.numpy().tolist() == [1, 2, 3, 4] and ids.dense_shape.numpy().tolist() == [2, 3]
    assert out["x"].numpy().tolist() == [[[1.0, 2.0], [3.0, 4.0]], [[9.0, 9.0], [9.0, 9.0]]]
    assert out["s"].numpy().tolist() == [[b"a"], [b"b"]]


def test_parse_example_errors_name_the_key():
    s = _example(a=[1, 2]).SerializeToString()
    with pytest.raises(InvalidArgumentError, match="Key: a.*Data types don't match"):
        tf.io.parse_single_example(s, {"a": tf.io.FixedLenFeature([2], tf.float32)})
    with pytest.raises(InvalidArgumentError, match="Key: a"):
        tf.io.parse_single_example(s, {"a": tf.io.FixedLenFeature([3], tf.int64)})
    with pytest.raises(InvalidArgumentError, match="Feature: b .*required"):
        tf.io.parse_single_example(s, {"b": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(InvalidArgumentError, match="allow_missing"):
        tf.io.parse_single_example(s, {"a": tf.io.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(InvalidArgumentError, match="ParseExample"):
        tf.io.FixedLenFeature([], tf.int32)
    with pytest.raises(InvalidArgumentError, match="Could not parse example"):
        tf.io.parse_single_example(b"\xff\xff", {"a": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(TypeError, match="ParseExample"):
        tf.io.parse_single_example(s, {"a": tf.int64})


def test_tfrecord_of_examples_through_a_pipeline(tmp_path):
    p = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        for i in range(5):
            w.write(_example(x=[float(i)], y=[i % 2]).SerializeToString())
    spec = {"x": tf.io.FixedLenFeature([1], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    ds = tf.data.TFRecordDataset(p).batch(2).map(lambda r: tf.io.parse_example(r, spec))
    batches = list(ds)
    assert [b["y"].numpy().tolist() for b in batches] == [[0, 1], [0, 1], [0]]
    assert batches[0]["x"].numpy().tolist() == [[0.0], [1.0]]


# ---- serialize_tensor / parse_tensor ------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(TF_SERIALIZED))
def test_serialize_tensor_is_tensorflows_tensorproto(name):
    arr, data = TF_SERIALIZED[name]
    t = tf.constant(arr, tf.string if name == "string" else None)
    assert tf.io.serialize_tensor(t).numpy() == data
    back = tf.io.parse_tensor(data, t.dtype)
    assert back.dtype == t.dtype and back.shape == t.shape
    assert back.numpy().tolist() == arr.tolist()


def test_parse_tensor_reads_value_fields_and_checks_the_dtype():
    # TensorProto with float_val instead of tensor_content: dtype 1, shape [3], float_val [2.5] (repeated to 3)
    proto = b"\x08\x01\x12\x04\x12\x02\x08\x03" + b"\x2a\x04" + np.float32(2.5).tobytes()
    assert tf.io.parse_tensor(proto, tf.float32).numpy().tolist() == [2.5, 2.5, 2.5]
    with pytest.raises(InvalidArgumentError, match="Type mismatch"):
        tf.io.parse_tensor(TF_SERIALIZED["int32"][1], tf.float32)
    with pytest.raises(DataLossError):
        tf.io.parse_tensor(b"\x08\x01\x22\x09", tf.float32)


# ---- decode_csv ---------------------------------------------------------------------------------------------

def test_decode_csv_as_tensorflow():
    a, b, c = tf.io.decode_csv(["1,a,2.5", '3,"b,c",'], [[0], [""], [1.0]])
    assert a.dtype == tf.int32 and a.numpy().tolist() == [1, 3]
    assert b.numpy().tolist() == [b"a", b"b,c"]
    assert c.dtype == tf.float32 and c.numpy().tolist() == [2.5, 1.0]
    x, y = tf.io.decode_csv("1|x|y", [tf.constant([], tf.int64), ""], field_delim="|", select_cols=[0, 2])
    assert x.dtype == tf.int64 and x.numpy() == 1 and y.numpy() == b"y"
    assert tf.io.decode_csv(["NA,3"], [[5], [0]], na_value="NA")[0].numpy().tolist() == [5]
    assert tf.io.decode_csv(['"a""b",1'], ["", 0])[0].numpy().tolist() == [b'a"b']
    assert tf.io.decode_csv(['"a",1'], ["", 0], use_quote_delim=False)[0].numpy().tolist() == [b'"a"']
    m = tf.io.decode_csv([["1,2"], ["3,4"]], [[0.0], tf.constant([], tf.float64)])
    assert m[0].shape == (2, 1) and m[1].dtype == tf.float64


@pytest.mark.parametrize("records,defaults,message", [
    (["1,2,3"], [[0], [0]], "Expect 2 fields but have 3 in record 0"),
    (["a,2"], [[0], [0]], "Field 0 in record 0 is not a valid int32: a"),
    ([",2"], [tf.constant([], tf.int32), [0]], "Field 0 is required but missing in record 0!"),
    (["1"], [[True]], "record_defaults\\[0\\] has dtype bool"),
])
def test_decode_csv_errors_are_tensorflows(records, defaults, message):
    with pytest.raises(InvalidArgumentError, match=message + r".*\[Op:DecodeCSV\]"):
        tf.io.decode_csv(records, defaults)


# ---- files ------------------------------------------------------------------------------------------------

def test_read_and_write_file(tmp_path):
    p = str(tmp_path / "d" / "f.bin")
    tf.io.write_file(p, tf.constant(b"\x00\x01abc"))
    assert tf.io.read_file(p).numpy() == b"\x00\x01abc"
    assert tf.io.read_file(tf.constant(p)).dtype == tf.string
    assert os.listdir(tmp_path / "d") == ["f.bin"]  # no temporary file left behind
    with pytest.raises(NotFoundError, match="ReadFile"):
        tf.io.read_file(str(tmp_path / "nope"))
    with pytest.raises(InvalidArgumentError, match="WriteFile"):
        tf.io.write_file(p, tf.constant([b"a", b"b"]))


def test_gfile(tmp_path):
    g = tf.io.gfile
    d = str(tmp_path / "a" / "b")
    g.makedirs(d)
    g.makedirs(d)
    assert g.isdir(d) and g.exists(d)
    with pytest.raises(AlreadyExistsError):
        g.mkdir(d)
    g.mkdir(os.path.join(d, "c"))
    f = os.path.join(d, "x.txt")
    with g.GFile(f, "w") as fh:
        fh.write("line1\nline2\n")
    with g.GFile(f, "a") as fh:
        fh.write(b"line3")
    with g.GFile(f) as fh:
        assert fh.readline() == "line1\n"
        assert list(fh) == ["line2\n", "line3"]
    with g.Open(f, "rb") as fh:
        assert fh.read(5) == b"line1" and fh.tell() == 5 and fh.size() == 17
    assert g.stat(f).length == 17 and not g.stat(f).is_directory
    assert g.listdir(d) == ["c", "x.txt"]
    assert g.glob(os.path.join(d, "*.txt")) == [f]
    g.copy(f, os.path.join(d, "y.txt"))
    with pytest.raises(AlreadyExistsError):
        g.copy(f, os.path.join(d, "y.txt"))
    g.copy(f, os.path.join(d, "y.txt"), overwrite=True)
    g.rename(os.path.join(d, "y.txt"), os.path.join(d, "z.txt"))
    walked = list(g.walk(str(tmp_path / "a")))
    assert walked[0][1] == ["b"] and walked[1][2] == ["x.txt", "z.txt"]
    g.remove(os.path.join(d, "z.txt"))
    with pytest.raises(NotFoundError):
        g.remove(os.path.join(d, "z.txt"))
    with pytest.raises(InvalidArgumentError, match="mode"):
        g.GFile(f, "x")
    g.rmtree(str(tmp_path / "a"))
    assert not g.exists(str(tmp_path / "a"))


# ---- images -----------------------------------------------------------------------------------------------

def test_png_and_jpeg_roundtrips():
    pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    png = tf.io.encode_png(tf.constant(img))
    assert png.numpy()[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(tf.io.decode_png(png).numpy(), img)
    assert tf.io.decode_png(png, channels=1).shape == (5, 7, 1)
    assert tf.io.decode_png(png, channels=4).numpy()[..., 3].min() == 255
    flat = np.full((8, 8, 3), 100, np.uint8)
    jpg = tf.io.encode_jpeg(tf.constant(flat), quality=95)
    back = tf.io.decode_jpeg(jpg).numpy()
    assert back.shape == (8, 8, 3) and np.abs(back.astype(int) - 100).max() <= 2
    assert tf.io.decode_jpeg(jpg, ratio=2).shape == (4, 4, 3)
    assert tf.io.decode_image(png, dtype=tf.float32).numpy().max() <= 1.0
    assert tf.io.decode_image(jpg).shape == (8, 8, 3)
    with pytest.raises(InvalidArgumentError, match="DecodePng"):
        tf.io.decode_png(jpg)
    with pytest.raises(InvalidArgumentError, match="EncodePng"):
        tf.io.encode_png(tf.zeros([2, 2], tf.uint8))


# ---- interoperability with TensorFlow itself ------------------------------------------------------------------

def _tf_python():
    """A Python interpreter that has TensorFlow: this one, $TAPEFLOW_TF_PYTHON, or the reference venv."""
    try:
        import tensorflow  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken TensorFlow install is as good as none
        tensorflow = None
    if tensorflow is not None:
        return sys.executable
    for cand in (os.environ.get("TAPEFLOW_TF_PYTHON"), "/work/tfref/bin/python"):
        if cand and shutil.which(cand):
            return cand
    return None


_TF_SIDE = textwrap.dedent("""
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf
    d = sys.argv[1]
    out = {}
    # read what tapeflow wrote
    for comp in ("", "GZIP", "ZLIB"):
        recs = [r.numpy() for r in tf.data.TFRecordDataset(os.path.join(d, "tp_" + comp + ".tfrecord"), comp)]
        ex = [tf.io.parse_single_example(r, {"i": tf.io.FixedLenFeature([2], tf.int64),
                                             "f": tf.io.VarLenFeature(tf.float32),
                                             "s": tf.io.FixedLenFeature([], tf.string)}) for r in recs]
        out["read_" + comp] = [[e["i"].numpy().tolist(), e["f"].values.numpy().tolist(), e["s"].numpy().decode()]
                               for e in ex]
    ser = open(os.path.join(d, "tp_tensor.bin"), "rb").read()
    out["tensor"] = tf.io.parse_tensor(ser, tf.float64).numpy().tolist()
    # write files for tapeflow to read
    for comp in ("", "GZIP", "ZLIB"):
        with tf.io.TFRecordWriter(os.path.join(d, "tf_" + comp + ".tfrecord"), comp) as w:
            for k in range(3):
                e = tf.train.Example(features=tf.train.Features(feature={
                    "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[k, -k])),
                    "f": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5] * k)),
                    "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"w%d" % k]))}))
                w.write(e.SerializeToString())
    tf.io.write_file(os.path.join(d, "tf_tensor.bin"),
                     tf.io.serialize_tensor(tf.constant([[1, 2, 3]], tf.int32)))
    print(json.dumps(out))
""")


def test_tensorflow_reads_ours_and_we_read_tensorflows(tmp_path):
    py = _tf_python()
    if py is None:
        pytest.skip("no TensorFlow interpreter (the known-bytes tests above cover the formats)")
    d = str(tmp_path)
    for comp in ("", "GZIP", "ZLIB"):
        with tf.io.TFRecordWriter(os.path.join(d, f"tp_{comp}.tfrecord"), comp) as w:
            for k in range(3):
                w.write(_example(i=[k, 10 * k], f=[1.5] * (k + 1), s=[f"t{k}"]).SerializeToString())
    tf.io.write_file(os.path.join(d, "tp_tensor.bin"),
                     tf.io.serialize_tensor(tf.constant([[0.25, -1.0]], tf.float64)))
    res = subprocess.run([py, "-c", _TF_SIDE, d], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    for comp in ("", "GZIP", "ZLIB"):
        assert out["read_" + comp] == [[[k, 10 * k], [1.5] * (k + 1), f"t{k}"] for k in range(3)]
    assert out["tensor"] == [[0.25, -1.0]]
    spec = {"i": tf.io.FixedLenFeature([2], tf.int64), "f": tf.io.VarLenFeature(tf.float32),
            "s": tf.io.FixedLenFeature([], tf.string)}
    for comp in ("", "GZIP", "ZLIB"):
        ds = tf.data.TFRecordDataset(os.path.join(d, f"tf_{comp}.tfrecord"), compression_type=comp)
        got = [tf.io.parse_single_example(r, spec) for r in ds]
        assert [g["i"].numpy().tolist() for g in got] == [[k, -k] for k in range(3)]
        assert [g["f"].values.numpy().tolist() for g in got] == [[0.5] * k for k in range(3)]
        assert [g["s"].numpy() for g in got] == [b"w0", b"w1", b"w2"]
    t = tf.io.parse_tensor(tf.io.read_file(os.path.join(d, "tf_tensor.bin")), tf.int32)
    assert t.numpy().tolist() == [[1, 2, 3]]


@pytest.mark.parametrize("modname", ["_proto", "_tfrecord", "_ops", "_parsing"])
def test_docstring_examples_of_the_private_modules(modname):
    import doctest
    import importlib

    mod = importlib.import_module(f"tapeflow.core.io.{modname}")
    res = doctest.testmod(mod, extraglobs={"tf": tf}, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


def test_the_ops_run_inside_tf_function(tmp_path):
    src, dst = str(tmp_path / "in.bin"), str(tmp_path / "out.bin")
    with open(src, "wb") as f:
        f.write(b"1,a\n")
    spec = {"ids": tf.io.VarLenFeature(tf.int64), "y": tf.io.FixedLenFeature([], tf.int64, default_value=-1)}

    @tf.function
    def f(src, dst, recs, img):
        data = tf.io.read_file(src)
        tf.io.write_file(dst, data)
        n, s = tf.io.decode_csv(tf.strings.strip(data), [[0], [""]])
        ex = tf.io.parse_example(recs, spec)
        png = tf.io.decode_png(tf.io.encode_png(img))
        return n, s, ex["ids"].values, ex["ids"].dense_shape, ex["y"], tf.io.serialize_tensor(n), png

    recs = tf.constant([_example(ids=[4, 5]).SerializeToString(), _example(ids=[6], y=[1]).SerializeToString()])
    img = tf.constant(np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
    n, s, vals, shape, y, ser, png = f(src, dst, recs, img)
    assert (int(n), s.numpy()) == (1, b"a")
    assert (tmp_path / "out.bin").read_bytes() == b"1,a\n"  # the write ran as part of the graph
    assert vals.numpy().tolist() == [4, 5, 6] and shape.numpy().tolist() == [2, 2] and y.numpy().tolist() == [-1, 1]
    assert ser.numpy() == tf.io.serialize_tensor(tf.constant(1)).numpy()
    assert np.array_equal(png.numpy(), img.numpy())
    graph = f.get_concrete_function(src, dst, recs, img).graph
    ops = {n.prim.name for n in graph.nodes}
    assert {"read_file", "write_file", "decode_csv", "parse_example", "encode_png", "decode_png",
            "serialize_tensor"} <= ops
    with open(src, "wb") as fh:
        fh.write(b"7,b\n")
    assert int(f(src, dst, recs, img)[0]) == 7  # read again on every call: the file is outside the graph


def test_parse_tensor_and_decode_image_run_inside_tf_function_and_tf_data():
    pytest.importorskip("PIL")
    from PIL import Image

    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ser = tf.io.serialize_tensor(x)

    @tf.function
    def roundtrip(v):
        return tf.io.parse_tensor(tf.io.serialize_tensor(v), tf.float32) * 2

    assert roundtrip(x).numpy().tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert tf.function(lambda: tf.io.parse_tensor(ser, tf.float32))().numpy().tolist() == x.numpy().tolist()
    graph = roundtrip.get_concrete_function(x).graph
    assert "parse_tensor" in {n.prim.name for n in graph.nodes}  # a node that parses when the graph runs
    with pytest.raises(InvalidArgumentError, match=r"rank of parse_tensor's result.*\[Op:ParseTensor\]"):
        tf.function(lambda s: tf.io.parse_tensor(s, tf.float32))(ser)  # TensorFlow: unknown rank; tapeflow: says so
    parsed = tf.data.Dataset.from_tensor_slices([ser, tf.io.serialize_tensor(tf.constant([[5.0, 6.0]]))]).map(
        lambda s: tf.io.parse_tensor(s, tf.float32))
    assert [e.numpy().tolist() for e in parsed] == [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]]

    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    png = tf.io.encode_png(tf.constant(img))

    @tf.function
    def decode(s):
        return tf.io.decode_image(s, channels=3, expand_animations=False, dtype=tf.float32)

    got = decode(png)
    assert got.shape == (2, 3, 3) and np.allclose(got.numpy(), img / 255.0)
    assert "decode_image" in {n.prim.name for n in decode.get_concrete_function(png).graph.nodes}
    assert np.array_equal(tf.function(lambda s: tf.io.decode_image(s))(png).numpy(), img)
    ds = tf.data.Dataset.from_tensor_slices([png, png]).map(lambda s: tf.io.decode_png(s, channels=3))
    assert [e.shape for e in ds] == [(2, 3, 3), (2, 3, 3)]
    buf = __import__("io").BytesIO()
    frames = [Image.fromarray(np.full((2, 2, 3), v, np.uint8)) for v in (0, 255)]
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    gif = tf.constant(buf.getvalue())
    assert tf.io.decode_image(gif).shape == (2, 2, 2, 3)  # eager: the frames, as TensorFlow
    assert tf.function(lambda s: tf.io.decode_image(s, expand_animations=False))(gif).shape == (2, 2, 3)
    with pytest.raises(InvalidArgumentError, match=r"(?s)inside tf.function: expand_animations=False.*DecodeImage"):
        tf.function(lambda s: tf.io.decode_image(s))(gif)
