"""Readers: TextLineDataset, IDX files written byte by byte here, the file cache."""
import gzip
import struct
import zlib

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import Dataset, IDXDataset, TextLineDataset, read_idx, write_idx

# ---- text lines ------------------------------------------------------------------------

def test_lines_without_endings(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"one\ntwo\r\n\nlast\r")
    assert list(TextLineDataset(str(p)).as_numpy_iterator()) == [b"one", b"two", b"", b"last"]
    p.write_bytes(b"x\n")
    assert list(TextLineDataset(p).as_numpy_iterator()) == [b"x"]
    p.write_bytes(b"")
    assert list(TextLineDataset(p).as_numpy_iterator()) == []
    assert repr(TextLineDataset(p).element_spec) == "TensorSpec(shape=(), dtype=tf.string, name=None)"


def test_several_files_compression_and_parallel_reads(tmp_path):
    a, b = tmp_path / "a.txt.gz", tmp_path / "b.txt.gz"
    a.write_bytes(gzip.compress(b"a1\na2\na3\n"))
    b.write_bytes(gzip.compress(b"b1\nb2\n"))
    files = [str(a), str(b)]
    assert list(TextLineDataset(files, "GZIP").as_numpy_iterator()) == [b"a1", b"a2", b"a3", b"b1", b"b2"]
    inter = TextLineDataset(files, "GZIP", num_parallel_reads=2)
    assert list(inter.as_numpy_iterator()) == [b"a1", b"b1", b"a2", b"b2", b"a3"]
    z = tmp_path / "c.z"
    z.write_bytes(zlib.compress(b"\n".join(b"line%d" % i for i in range(5000))))
    out = list(TextLineDataset(str(z), compression_type="ZLIB").as_numpy_iterator())
    assert out[0] == b"line0" and out[-1] == b"line4999" and len(out) == 5000


def test_file_names_from_a_dataset(tmp_path):
    for name, text in (("1.txt", "a\nb\n"), ("2.txt", "c\n")):
        (tmp_path / name).write_text(text)
    files = Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert list(TextLineDataset(files).as_numpy_iterator()) == [b"a", b"b", b"c"]
    lines = files.interleave(TextLineDataset, cycle_length=2)
    assert list(lines.as_numpy_iterator()) == [b"a", b"c", b"b"]
    numbers = TextLineDataset(files).map(tf.strings.length)
    assert [int(n) for n in numbers] == [1, 1, 1]


def test_text_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match=r"missing.txt; No such file or directory \[Op:TextLineDataset\]"):
        list(TextLineDataset(str(tmp_path / "missing.txt")))
    with pytest.raises(tf.errors.InvalidArgumentError, match="compression_type = 'BZ2' is not supported"):
        TextLineDataset("x", compression_type="BZ2")
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(b"a\nb\n")[:-6])
    with pytest.raises(tf.errors.DataLossError):
        list(TextLineDataset(str(bad), "GZIP"))


# ---- IDX ---------------------------------------------------------------------------------

def idx_bytes(code, dims, payload):
    return struct.pack(">BBBB", 0, 0, code, len(dims)) + struct.pack(f">{len(dims)}I", *dims) + payload


@pytest.mark.parametrize("code,fmt,np_dtype", [(0x08, "B", np.uint8), (0x09, "b", np.int8), (0x0B, "h", np.int16),
                                               (0x0C, "i", np.int32), (0x0D, "f", np.float32),
                                               (0x0E, "d", np.float64)])
def test_read_idx_every_type(tmp_path, code, fmt, np_dtype):
    vals = [1, 2, 3, 4, 5, 6] if fmt in "Bbhi" else [0.5, -1.25, 3.0, 4.0, 1e3, -2.0]
    if fmt in "bhi":
        vals[1] = -vals[1]
    p = tmp_path / "x.idx"
    p.write_bytes(idx_bytes(code, [2, 3], struct.pack(f">6{fmt}", *vals)))
    arr = read_idx(p)
    assert arr.dtype == np_dtype and arr.dtype.isnative and arr.shape == (2, 3)
    assert arr.reshape(-1).tolist() == vals


def test_read_idx_gzip_and_mnist_shapes(tmp_path):
    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    p = tmp_path / "train-images-idx3-ubyte.gz"
    p.write_bytes(gzip.compress(idx_bytes(0x08, [3, 28, 28], images.tobytes())))
    assert (read_idx(p) == images).all()
    labels = tmp_path / "train-labels-idx1-ubyte"
    labels.write_bytes(idx_bytes(0x08, [3], bytes([5, 0, 4])))
    ds = Dataset.zip(IDXDataset(str(p)), IDXDataset(str(labels)))
    out = [(x.numpy(), int(y)) for x, y in ds]
    assert [y for _, y in out] == [5, 0, 4] and (out[2][0] == images[2]).all()
    assert ds.element_spec[0].shape == (28, 28) and ds.element_spec[0].dtype == tf.uint8


def test_write_idx_round_trip(tmp_path):
    for arr in (np.arange(24, dtype=np.int16).reshape(2, 3, 4) - 7, np.linspace(0, 1, 5), np.zeros((0, 3), np.uint8)):
        for name in ("a.idx", "a.idx.gz"):
            write_idx(tmp_path / name, arr)
            back = read_idx(tmp_path / name)
            assert back.dtype == arr.dtype and back.shape == arr.shape and (back == arr).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="IDX cannot hold dtype int64"):
        write_idx(tmp_path / "b.idx", np.arange(3))


def test_idx_bad_magic(tmp_path):
    p = tmp_path / "bad.idx"
    p.write_bytes(b"\x12\x34\x08\x01" + b"\x00" * 8)
    with pytest.raises(tf.errors.DataLossError,
                       match=r"not an IDX file: bad magic number 0x12340801; allowed: 0x0000 followed by a type "
                             r"code in \{0x08, .*\[Op:ReadIDX\]"):
        read_idx(p)
    p.write_bytes(idx_bytes(0x07, [1], b"\x00"))
    with pytest.raises(tf.errors.DataLossError, match="bad magic number 0x00000701"):
        read_idx(p)


def test_idx_truncated(tmp_path):
    p = tmp_path / "short.idx"
    p.write_bytes(b"\x00\x00")
    with pytest.raises(tf.errors.DataLossError, match="truncated IDX header: 2 bytes"):
        read_idx(p)
    p.write_bytes(b"\x00\x00\x08\x03" + struct.pack(">I", 60000))
    with pytest.raises(tf.errors.DataLossError, match="rank 3 needs 16 bytes, the file has 8"):
        read_idx(p)
    p.write_bytes(idx_bytes(0x08, [60000, 28, 28], b"\x00" * 1000))
    with pytest.raises(tf.errors.DataLossError,
                       match=r"truncated IDX data: the header declares shape \(60000, 28, 28\) of uint8 "
                             r"\(47040000 bytes\), the file holds 1000 \[Op:ReadIDX\]"):
        read_idx(p)
    p.write_bytes(idx_bytes(0x0C, [2], b"\x00" * 9))
    with pytest.raises(tf.errors.DataLossError, match="unexpected bytes after the IDX data"):
        read_idx(p)
    p.write_bytes(gzip.compress(idx_bytes(0x08, [4], b"\x01\x02\x03\x04"))[:-5])
    with pytest.raises(tf.errors.DataLossError, match="damaged gzip data"):
        read_idx(p)
    with pytest.raises(tf.errors.NotFoundError):
        read_idx(tmp_path / "nope.idx")


# ---- cache to a file -------------------------------------------------------------------------

def test_file_cache_is_written_once_and_read_by_another_dataset(tmp_path):
    calls = []

    def f(x):
        calls.append(int(x))
        return {"v": tf.fill([2], x), "s": tf.constant(1.5), "t": x}

    prefix = str(tmp_path / "cache")
    ds = Dataset.range(4).map(f).cache(prefix)
    first = [int(e["t"]) for e in ds]
    # the file's header records the element_spec: f also ran on the two placeholder elements that
    # give it (as TensorFlow traces a map function once)
    assert first == [0, 1, 2, 3] and calls[-4:] == [0, 1, 2, 3] and len(calls) <= 6
    assert (tmp_path / "cache.tpfcache").exists()
    n = len(calls)
    again = Dataset.range(4).map(f).cache(prefix)
    out = list(again.as_numpy_iterator())
    # read back, not recomputed: f ran only on the placeholders of the new dataset's element_spec
    assert len(calls) <= n + 2
    assert [e["v"].tolist() for e in out] == [[0, 0], [1, 1], [2, 2], [3, 3]] and out[0]["v"].dtype == np.int64


def test_file_cache_of_text(tmp_path):
    prefix = str(tmp_path / "t")
    ds = Dataset.from_tensor_slices((["x", "yy", ""], [[1.0], [2.0], [3.0]])).batch(2).cache(prefix)
    want = list(ds.as_numpy_iterator())
    got = list(Dataset.from_tensor_slices((["x", "yy", ""], [[1.0], [2.0], [3.0]])).batch(2).cache(prefix)
               .as_numpy_iterator())
    assert [a[0].tolist() for a in got] == [a[0].tolist() for a in want] == [[b"x", b"yy"], [b""]]
    assert [a[1].tolist() for a in got] == [[[1.0], [2.0]], [[3.0]]]


def test_partial_iteration_writes_no_cache(tmp_path):
    prefix = str(tmp_path / "p")
    ds = Dataset.range(100).cache(prefix)
    for i, _ in enumerate(ds):
        if i == 3:
            break
    assert list(tmp_path.iterdir()) == []
    mem_calls = []
    mem = Dataset.range(5).map(lambda x: mem_calls.append(1) or x).cache()
    it = iter(mem)
    next(it)
    it.close()
    assert [int(x) for x in mem] == [0, 1, 2, 3, 4] and len(mem_calls) == 6
    assert [int(x) for x in mem] == [0, 1, 2, 3, 4] and len(mem_calls) == 6


def test_damaged_cache_file_is_reported(tmp_path):
    prefix = str(tmp_path / "d")
    list(Dataset.range(3).cache(prefix))
    path = tmp_path / "d.tpfcache"
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(tf.errors.DataLossError, match=r"truncated or incomplete cache file.*\[Op:CacheDataset\]"):
        list(Dataset.range(3).cache(prefix))
    list(Dataset.zip(Dataset.range(2), Dataset.range(2)).cache(str(tmp_path / "e")))
    # a whole file of other elements is not damage: InvalidArgumentError, as TensorFlow reports it
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"holds elements \(\., \.\) .* are \. of"):
        list(Dataset.range(2).cache(str(tmp_path / "e")))
