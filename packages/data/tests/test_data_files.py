"""File readers of tf.data: TFRecordDataset, tf.data.experimental.CsvDataset and make_csv_dataset, with
TensorFlow 2.21's semantics (values recorded from TensorFlow where noted)."""
from __future__ import annotations

import doctest
import gzip
import os

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.errors import DataLossError, InvalidArgumentError

CSV = "id,score,name,flag\n1,0.5,alpha,7\n2,,\"b, c\",8\n3,2.25,gamma,9\n4,1.0,,10\n"


@pytest.fixture
def csv_path(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(CSV)
    return str(p)


def test_csv_dataset_columns_defaults_and_quotes(csv_path):
    ds = tf.data.experimental.CsvDataset(csv_path, [tf.int32, [-1.0], ["?"], tf.int64], header=True)
    spec = ds.element_spec
    assert [s.dtype for s in spec] == [tf.int32, tf.float32, tf.string, tf.int64]
    rows = [(int(a), float(b), c, int(d)) for a, b, c, d in ds]
    assert rows == [(1, 0.5, b"alpha", 7), (2, -1.0, b"b, c", 8), (3, 2.25, b"gamma", 9), (4, 1.0, b"?", 10)]


def test_csv_dataset_select_exclude_na_and_gzip(tmp_path, csv_path):
    sel = tf.data.experimental.CsvDataset(csv_path, [tf.int32, tf.int64], header=True, select_cols=[0, 3])
    assert [(int(a), int(b)) for a, b in sel] == [(1, 7), (2, 8), (3, 9), (4, 10)]
    exc = tf.data.experimental.CsvDataset(csv_path, [tf.int32, ["x"]], header=True, exclude_cols=[1, 3])
    assert [c for _, c in exc] == [b"alpha", b"b, c", b"gamma", b"x"]
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(b"1;NA\n2;3\n"))
    ds = tf.data.experimental.CsvDataset(str(gz), [[0], [5]], compression_type="GZIP", field_delim=";",
                                         na_value="NA")
    assert [(int(a), int(b)) for a, b in ds] == [(1, 5), (2, 3)]


def test_csv_dataset_errors(csv_path):
    with pytest.raises(InvalidArgumentError, match="Field 1 is required but missing in record 2"):
        list(tf.data.experimental.CsvDataset(csv_path, [tf.int32, tf.float32, tf.string, tf.int64], header=True))
    with pytest.raises(InvalidArgumentError, match="Expect 3 fields but have 4"):
        list(tf.data.experimental.CsvDataset(csv_path, [tf.int32, [0.0], [""]], header=True))
    with pytest.raises(InvalidArgumentError, match="not a valid int32: id"):
        list(tf.data.experimental.CsvDataset(csv_path, [tf.int32, [0.0], [""], [0]]))
    with pytest.raises(InvalidArgumentError, match="select_cols and exclude_cols"):
        tf.data.experimental.CsvDataset(csv_path, [tf.int32], select_cols=[0], exclude_cols=[1])
    with pytest.raises(InvalidArgumentError, match="field_delim"):
        tf.data.experimental.CsvDataset(csv_path, [tf.int32], field_delim=",,")


def test_make_csv_dataset_infers_types_and_splits_the_label(csv_path):
    ds = tf.data.experimental.make_csv_dataset(csv_path, batch_size=3, label_name="flag", num_epochs=1,
                                               shuffle=False)
    batches = list(ds)
    assert len(batches) == 2  # num_epochs=1 keeps the short last batch
    feats, label = batches[0]
    assert list(feats) == ["id", "score", "name"]  # header order, the label taken out
    # TensorFlow 2.21 infers int32, float32, string here (and int32 for the label)
    assert feats["id"].dtype == tf.int32 and feats["score"].dtype == tf.float32
    assert feats["name"].numpy().tolist() == [b"alpha", b"b, c", b"gamma"]
    assert feats["score"].numpy().tolist() == [0.5, 0.0, 2.25]  # the inferred default fills the empty field
    assert label.dtype == tf.int32 and label.numpy().tolist() == [7, 8, 9]


def test_make_csv_dataset_options(tmp_path, csv_path):
    ds = tf.data.experimental.make_csv_dataset(csv_path, batch_size=2, num_epochs=3, shuffle=True,
                                               shuffle_seed=7, select_columns=["id", "flag"],
                                               column_defaults=[tf.int64, tf.int64])
    ids = [v for b in ds for v in b["id"].numpy().tolist()]
    assert sorted(ids) == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    again = [v for b in tf.data.experimental.make_csv_dataset(
        csv_path, batch_size=2, num_epochs=3, shuffle=True, shuffle_seed=7, select_columns=["id", "flag"],
        column_defaults=[tf.int64, tf.int64]) for v in b["id"].numpy().tolist()]
    assert ids == again  # seeded: the same order
    assert ids != sorted(ids)
    forever = tf.data.experimental.make_csv_dataset(csv_path, batch_size=3, shuffle=False)  # num_epochs=None
    first = [b["id"].numpy().tolist() for b in forever.take(4)]
    assert first == [[1, 2, 3], [4, 1, 2], [3, 4, 1], [2, 3, 4]]
    p = tmp_path / "nohead.csv"
    p.write_text("1,x\n2,y\n")
    named = tf.data.experimental.make_csv_dataset(str(p), 2, column_names=["n", "s"], header=False,
                                                  num_epochs=1, shuffle=False)
    b = next(iter(named))
    assert b["n"].numpy().tolist() == [1, 2] and b["s"].numpy().tolist() == [b"x", b"y"]
    with pytest.raises(InvalidArgumentError, match="label_name"):
        tf.data.experimental.make_csv_dataset(csv_path, 2, label_name="nope")
    with pytest.raises(InvalidArgumentError, match="No files match"):
        tf.data.experimental.make_csv_dataset(str(tmp_path / "*.missing"), 2)


def test_tfrecord_dataset_in_a_pipeline(tmp_path):
    p = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(p, "ZLIB") as w:
        for i in range(6):
            w.write(f"rec{i}")
    ds = tf.data.TFRecordDataset(p, "ZLIB").map(tf.strings.upper).batch(4)
    assert [b.tolist() if isinstance(b, np.ndarray) else b.numpy().tolist() for b in ds] == \
        [[b"REC0", b"REC1", b"REC2", b"REC3"], [b"REC4", b"REC5"]]
    files = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    assert len(list(tf.data.TFRecordDataset(files, compression_type="ZLIB"))) == 6
    with open(p, "r+b") as f:
        f.truncate(os.path.getsize(p) - 3)
    with pytest.raises(DataLossError):
        list(tf.data.TFRecordDataset(p, "ZLIB"))


def test_docstring_examples_of_the_readers():
    from tapeflow.data import _readers_more

    res = doctest.testmod(_readers_more, extraglobs={"tf": tf}, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
