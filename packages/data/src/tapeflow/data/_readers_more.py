"""Record and CSV readers: ``tf.data.TFRecordDataset``, ``tf.data.experimental.CsvDataset`` and
``tf.data.experimental.make_csv_dataset``, over core's ``tf.io`` formats (TFRecord framing with
its masked CRC-32C checks, TensorFlow's CSV field rules).
"""
from __future__ import annotations

import collections
import os

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.io import _ops as _csv
from tapeflow.core.io._tfrecord import compression_arg, read_records
from tapeflow.core.tensor import constant

from . import _structure as S
from ._common import AUTOTUNE, UNKNOWN_CARDINALITY, _count, _interleave
from ._structure import TensorSpec
from .dataset import Dataset
from .readers import _COMPRESSION, _as_path, _lines, _paths


class _FileReader(Dataset):
    """A dataset over the files of ``filenames`` (a name, a list, or a Dataset of names)."""

    _op = "FileReader"

    def _init_files(self, filenames, num_parallel_reads):
        op = self._op
        if isinstance(filenames, Dataset):
            self._files_ds, self._files = filenames, None
            self._inputs = (filenames,)
        else:
            self._files_ds, self._files = None, _paths(filenames, op)
        npr = 1 if num_parallel_reads is None else _count(num_parallel_reads, "num_parallel_reads", op, 1,
                                                          allow_autotune=True)
        self._parallel = (os.cpu_count() or 1) if npr == AUTOTUNE else npr

    def _file_iter(self, ctx):
        if self._files is not None:
            return iter(self._files)
        return (_as_path(f, self._op) for f in self._files_ds._iterator(ctx))

    def _iterator(self, ctx):
        files = self._file_iter(ctx)
        if self._parallel > 1:
            return _interleave(files, self._read, self._parallel, 1)
        return (e for p in files for e in self._read(p))

    def _card(self):
        return UNKNOWN_CARDINALITY


class TFRecordDataset(_FileReader):
    """The records of one or more TFRecord files, as scalar ``tf.string`` elements.

    ``compression_type`` is None/``""``, ``"GZIP"`` or ``"ZLIB"``; ``buffer_size`` is the read buffer in
    bytes; ``num_parallel_reads`` interleaves that many files record by record.  Each record's two
    masked CRC-32C checksums are checked (a damaged file raises ``DataLossError``).

    >>> import tapeflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "d.tfrecord")
    >>> with tf.io.TFRecordWriter(path, "GZIP") as w:
    ...     for r in (b"a", b"bb"):
    ...         w.write(r)
    >>> list(tf.data.TFRecordDataset([path], compression_type="GZIP").as_numpy_iterator())
    [b'a', b'bb']
    """

    _op = "TFRecordDataset"

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None) -> None:
        op = self._op
        self._init_files(filenames, num_parallel_reads)
        self._compression = compression_arg(compression_type, op)
        if buffer_size is not None and (isinstance(buffer_size, bool) or not isinstance(buffer_size, int)
                                        or buffer_size < 0):
            raise InvalidArgumentError(f"buffer_size = {buffer_size!r}; allowed: None or an int >= 0", op)
        self._buffer = buffer_size or None

    def _read(self, path):
        return read_records(path, self._compression, self._op, self._buffer)

    def _compute_spec(self):
        return TensorSpec((), S.string)


def _header_names(path, compression, delim, quote, op):
    for line in _lines(path, compression, op):
        return [f.decode("utf-8") for f in _csv.split_csv(line, delim, quote, 0, op)]
    raise InvalidArgumentError(f"{path} is empty: no header line", op)


class CsvDataset(_FileReader):
    """The records of CSV files as tuples of scalars, one per column (``tf.data.experimental.CsvDataset``).

    ``record_defaults`` gives each column's dtype and default (as :func:`tf.io.decode_csv`); ``header``
    skips each file's first line; ``select_cols`` / ``exclude_cols`` pick columns; ``na_value`` marks a
    missing field.

    >>> import tapeflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("x,name\\n1,a\\n2,\\n")
    >>> ds = tf.data.experimental.CsvDataset(path, [tf.int32, ["?"]], header=True)
    >>> [(int(x), s.numpy()) for x, s in ds]
    [(1, b'a'), (2, b'?')]
    """

    _op = "CSVDataset"

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                 name=None) -> None:
        op = self._op
        self._init_files(filenames, None)
        if compression_type not in _COMPRESSION:
            raise InvalidArgumentError(f"compression_type = {compression_type!r} is not supported; allowed: None, "
                                       "'', 'GZIP', 'ZLIB'", op)
        self._compression = _COMPRESSION[compression_type]
        if buffer_size is not None and (isinstance(buffer_size, bool) or not isinstance(buffer_size, int)
                                        or buffer_size <= 0):
            raise InvalidArgumentError(f"buffer_size = {buffer_size!r}; allowed: None or an int > 0", op)
        if not isinstance(header, bool):
            raise TypeError(f"header must be a bool, got {type(header).__name__} [Op:{op}]")
        self._cols = _csv.csv_defaults(record_defaults, op)
        if select_cols is not None and exclude_cols is not None:
            raise InvalidArgumentError("select_cols and exclude_cols cannot both be given", op)
        self._exclude = None
        if exclude_cols is not None:
            ex = [int(c) for c in exclude_cols]
            if any(b <= a for a, b in zip(ex, ex[1:])) or (ex and ex[0] < 0):
                raise InvalidArgumentError(f"exclude_cols = {ex}; allowed: non-negative indices in strictly "
                                           "increasing order", op)
            self._exclude = set(ex)
        self._delim, self._quote, self._na, self._select = _csv.csv_options(
            field_delim, use_quote_delim, na_value, select_cols, len(self._cols), op)
        self._header = header

    def _read(self, path):
        op = self._op
        select = self._select
        for r, line in enumerate(_lines(path, self._compression, op)):
            if r == 0 and self._header:
                continue
            if self._exclude is not None:
                n = len(_csv.split_csv(line, self._delim, self._quote, r, op))
                select = [c for c in range(n) if c not in self._exclude]
                if len(select) != len(self._cols):
                    raise InvalidArgumentError(f"Expect {len(self._cols)} fields but have {len(select)} in record "
                                               f"{r} after exclude_cols", op)
            row = _csv.csv_row(line, self._cols, self._delim, self._quote, self._na, select, r, op)
            yield tuple(v if dt.is_string else constant(np.asarray(v, dt.np), dt)
                        for v, (dt, _) in zip(row, self._cols))

    def _compute_spec(self):
        return tuple(TensorSpec((), S.string if dt.is_string else dt) for dt, _ in self._cols)


def _infer_type(values, na):
    """TensorFlow's make_csv_dataset inference: int32, then int64, float32, then string."""
    best = 0  # 0 int32, 1 int64, 2 float32, 3 string
    for v in values:
        if v == b"" or v == na:
            continue
        try:
            i = int(v.decode("ascii"), 10)
            best = max(best, 0 if -(1 << 31) <= i < 1 << 31 else 1)
            continue
        except (ValueError, UnicodeDecodeError):
            pass
        try:
            float(v.decode("ascii"))
            best = max(best, 2)
        except (ValueError, UnicodeDecodeError):
            return _dt.string
    return (_dt.int32, _dt.int64, _dt.float32)[best]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """Batches of CSV rows as ``(features, label)`` (or ``features``), each an ordered dict of column
    name -> a batch tensor (``tf.data.experimental.make_csv_dataset``).

    Column names come from the header (or ``column_names``); dtypes from ``column_defaults`` or inferred
    from the first ``num_rows_for_inference`` rows (int32, int64, float32, string); ``num_epochs`` None
    repeats forever; ``shuffle`` uses ``shuffle_buffer_size`` and ``shuffle_seed``.

    >>> import tapeflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("x,y\\n1,0.5\\n2,1.5\\n")
    >>> ds = tf.data.experimental.make_csv_dataset(path, 2, label_name="y", num_epochs=1, shuffle=False)
    >>> feats, label = next(iter(ds))
    >>> feats["x"].numpy().tolist(), label.numpy().tolist()
    ([1, 2], [0.5, 1.5])
    """
    op = "MakeCsvDataset"
    if encoding != "utf-8":
        raise InvalidArgumentError(f"encoding = {encoding!r}; allowed: 'utf-8'", op)
    if sloppy not in (False, True):
        raise TypeError(f"sloppy must be a bool [Op:{op}]")
    files = []
    import glob as _glob

    for p in _paths(file_pattern, op):
        files.extend(sorted(_glob.glob(p)))
    if not files:
        raise InvalidArgumentError(f"No files match `file_pattern` {file_pattern}.", op)
    comp = _COMPRESSION.get(compression_type, None)
    if compression_type not in _COMPRESSION:
        raise InvalidArgumentError(f"compression_type = {compression_type!r}; allowed: None, '', 'GZIP', 'ZLIB'", op)
    delim = field_delim.encode() if isinstance(field_delim, str) else field_delim
    na = na_value.encode() if isinstance(na_value, str) else na_value
    if column_names is None:
        if not header:
            raise InvalidArgumentError("Cannot infer column names without a header line (header=False); pass "
                                       "column_names", op)
        column_names = _header_names(files[0], comp, delim, use_quote_delim, op)
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise InvalidArgumentError(f"column_names has duplicates: {column_names}", op)
    if label_name is not None and label_name not in column_names:
        raise InvalidArgumentError(f"label_name {label_name!r} is not one of the columns {column_names}", op)
    sel = None
    if select_columns is not None:
        sel = sorted(column_names.index(c) if isinstance(c, str) else int(c) for c in select_columns)
        if label_name is not None and column_names.index(label_name) not in sel:
            raise InvalidArgumentError(f"label_name {label_name!r} is not among select_columns", op)
    names = [column_names[i] for i in sel] if sel is not None else column_names
    if column_defaults is None:
        sample = []
        for r, line in enumerate(_lines(files[0], comp, op)):
            if r == 0 and header:
                continue
            if len(sample) >= num_rows_for_inference:
                break
            fs = _csv.split_csv(line, delim, use_quote_delim, r, op)
            sample.append([fs[i] for i in sel] if sel is not None else fs)
        defaults = []
        for c in range(len(names)):
            dt = _infer_type([row[c] for row in sample if c < len(row)], na)
            defaults.append(np.asarray([b"" if dt.is_string else 0], object if dt.is_string else dt.np))
        column_defaults = [_as_default(d) for d in defaults]
    elif len(column_defaults) != len(names):
        raise InvalidArgumentError(f"column_defaults has {len(column_defaults)} entries for {len(names)} columns", op)
    files_ds = Dataset.from_tensor_slices(files)
    if shuffle:
        files_ds = files_ds.shuffle(len(files), seed=shuffle_seed)
    ds = CsvDataset(files_ds, column_defaults, compression_type=compression_type, header=header,
                    field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value, select_cols=sel)
    if num_parallel_reads not in (None, 1):
        ds = files_ds.interleave(
            lambda f: CsvDataset(f, column_defaults, compression_type=compression_type, header=header,
                                 field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                                 select_cols=sel), cycle_length=num_parallel_reads, block_length=1)
    if ignore_errors:
        ds = ds.ignore_errors()
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)

    def to_dict(*cols):
        feats = collections.OrderedDict(zip(names, cols))
        if label_name is None:
            return feats
        label = feats.pop(label_name)
        return feats, label

    ds = ds.batch(batch_size, drop_remainder=num_epochs is None).map(to_dict)
    return ds.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


def _as_default(arr):
    return constant(arr, _dt.string if arr.dtype == object else None)
