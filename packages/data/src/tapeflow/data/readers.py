"""Readers: text lines (``TextLineDataset``), file lists, and IDX files (MNIST's format).

IDX: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
0x0E float64), the number of dimensions, each dimension as a big-endian uint32, then the values
big-endian in row-major order.  Files ending in ``.gz`` (or starting with gzip's magic) are
decompressed on the fly.
"""
from __future__ import annotations

import glob
import gzip
import os
import struct
import zlib

import numpy as np
from tapeflow.core.errors import DataLossError, InvalidArgumentError, NotFoundError

from . import _structure as S
from ._common import AUTOTUNE, UNKNOWN_CARDINALITY, _count, _interleave
from ._sources import TensorSliceDataset
from ._structure import TensorSpec
from .dataset import Dataset

# ---- text lines -----------------------------------------------------------------------

_COMPRESSION = {None: "", "": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def _as_path(f, op) -> str:
    if isinstance(f, (bytes, np.bytes_)):
        return bytes(f).decode()
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    if hasattr(f, "numpy") or isinstance(f, np.ndarray):
        v = np.asarray(f)
        if v.ndim == 0:
            return _as_path(v.item(), op)
    raise InvalidArgumentError(f"a file name must be a str, bytes or path, got {type(f).__name__} {f!r:.60}", op)


def _paths(filenames, op) -> list:
    if hasattr(filenames, "numpy") and getattr(filenames, "dtype", None) is S.string:  # a tf.string tensor
        filenames = filenames.numpy()
    if isinstance(filenames, (str, bytes, os.PathLike, np.bytes_)):
        return [_as_path(filenames, op)]
    if isinstance(filenames, np.ndarray):
        return [_as_path(f, op) for f in filenames.reshape(-1)]
    try:
        return [_as_path(f, op) for f in filenames]
    except TypeError:
        raise InvalidArgumentError(f"filenames must be a file name, a list of them or a Dataset of them, got "
                                   f"{type(filenames).__name__}", op) from None


def _open(path, compression, op):
    try:
        raw = open(path, "rb")  # noqa: SIM115 - returned to _lines, which closes it
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory", op) from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{path} is a directory, not a file", op) from None
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "ZLIB":
        return _ZlibReader(raw)
    return raw


class _ZlibReader:
    """Lines of a zlib stream, decompressed chunk by chunk."""

    def __init__(self, raw) -> None:
        self._raw, self._z = raw, zlib.decompressobj()

    def __iter__(self):
        rest = b""
        while True:
            chunk = self._raw.read(1 << 16)
            data = self._z.decompress(chunk) if chunk else self._z.flush()
            rest += data
            *lines, rest = rest.split(b"\n")
            for line in lines:
                yield line + b"\n"
            if not chunk:
                break
        if rest:
            yield rest

    def close(self):
        self._raw.close()


def _lines(path, compression, op):
    f = _open(path, compression, op)
    try:
        try:
            for line in f:
                if line.endswith(b"\n"):
                    line = line[:-1]
                if line.endswith(b"\r"):
                    line = line[:-1]
                yield line
        except (OSError, EOFError, zlib.error) as e:
            raise DataLossError(f"{path}: {e}", op) from None
    finally:
        f.close()


class TextLineDataset(Dataset):
    """The lines of one or more text files, as ``bytes`` without their line endings.

    ``filenames`` is a file name, a list of them, or a Dataset of them; ``compression_type`` is
    None, ``"GZIP"`` or ``"ZLIB"``; ``num_parallel_reads`` interleaves that many files line by line.

    >>> import tapeflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "w").write("first\\nsecond\\r\\n")
    >>> list(tf.data.TextLineDataset(path).as_numpy_iterator())
    [b'first', b'second']
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None) -> None:
        op = "TextLineDataset"
        if isinstance(filenames, Dataset):
            self._files_ds, self._files = filenames, None
            self._inputs = (filenames,)
        else:
            self._files_ds, self._files = None, _paths(filenames, op)
        if compression_type not in _COMPRESSION:
            raise InvalidArgumentError(f"compression_type = {compression_type!r} is not supported; allowed: None, "
                                       "'', 'GZIP', 'ZLIB'", op)
        self._compression = _COMPRESSION[compression_type]
        npr = 1 if num_parallel_reads is None else _count(num_parallel_reads, "num_parallel_reads", op, 1,
                                                          allow_autotune=True)
        self._parallel = (os.cpu_count() or 1) if npr == AUTOTUNE else npr

    def _file_iter(self, ctx):
        if self._files is not None:
            return iter(self._files)
        return (_as_path(f, "TextLineDataset") for f in self._files_ds._iterator(ctx))

    def _iterator(self, ctx):
        comp, op = self._compression, "TextLineDataset"
        files = self._file_iter(ctx)
        if self._parallel > 1:
            return _interleave(files, lambda p: _lines(p, comp, op), self._parallel, 1)
        return self._sequential(files, comp, op)

    @staticmethod
    def _sequential(files, comp, op):
        for p in files:
            yield from _lines(p, comp, op)

    def _compute_spec(self):
        return TensorSpec((), S.string)

    def _card(self):
        return UNKNOWN_CARDINALITY


def _list_files(file_pattern, shuffle=None, seed=None):
    """The files matching glob patterns as a dataset of ``bytes`` names (see :meth:`Dataset.list_files`)."""
    op = "ListFiles"
    patterns = _paths(file_pattern, op)
    files = []
    for p in patterns:
        files.extend(sorted(glob.glob(p)))
    if not files:
        raise InvalidArgumentError(f"No files matched pattern: {', '.join(patterns)}", op)
    names = np.empty(len(files), object)
    for i, f in enumerate(files):
        names[i] = os.fsencode(f)
    ds = TensorSliceDataset(names)
    if shuffle is None or shuffle:
        ds = ds.shuffle(len(files), seed=seed)
    return ds


# ---- IDX ------------------------------------------------------------------------------

IDX_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
             0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_IDX_CODES = {v.newbyteorder("="): k for k, v in IDX_TYPES.items()}
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bytes(path, op) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory", op) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise DataLossError(f"{path}: damaged gzip data ({e})", op) from None
    return data


def read_idx(path) -> np.ndarray:
    """The array stored in an IDX file (optionally gzipped), in native byte order.

    >>> import tapeflow as tf, tempfile, os, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "t10k-labels-idx1-ubyte")
    >>> tf.data.write_idx(path, np.array([7, 2, 1], np.uint8))
    >>> tf.data.read_idx(path).tolist()
    [7, 2, 1]
    """
    op = "ReadIDX"
    path = os.fspath(path)
    data = _read_bytes(path, op)
    if len(data) < 4:
        raise DataLossError(f"{path}: truncated IDX header: {len(data)} bytes, an IDX file starts with 4 bytes "
                            "(0x00 0x00, type code, rank)", op)
    code, ndim = data[2], data[3]
    if data[:2] != b"\0\0" or code not in IDX_TYPES:
        magic = int.from_bytes(data[:4], "big")
        raise DataLossError(
            f"{path}: not an IDX file: bad magic number 0x{magic:08x}; allowed: 0x0000 followed by a type code in "
            f"{{{', '.join(f'0x{c:02x}' for c in IDX_TYPES)}}} and the rank", op)
    head = 4 + 4 * ndim
    if len(data) < head:
        raise DataLossError(f"{path}: truncated IDX header: rank {ndim} needs {head} bytes, the file has "
                            f"{len(data)}", op)
    dims = struct.unpack(f">{ndim}I", data[4:head])
    dtype = IDX_TYPES[code]
    count = 1
    for d in dims:
        count *= d
    need, have = count * dtype.itemsize, len(data) - head
    if have != need:
        what = "truncated IDX data" if have < need else "unexpected bytes after the IDX data"
        raise DataLossError(f"{path}: {what}: the header declares shape {tuple(dims)} of {dtype.name} "
                            f"({need} bytes), the file holds {have}", op)
    arr = np.frombuffer(data, dtype, count, head).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))


def write_idx(path, array) -> None:
    """Write an array (uint8, int8, int16, int32, float32 or float64) as an IDX file, atomically.

    >>> import tapeflow as tf, tempfile, os, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "x.idx")
    >>> tf.data.write_idx(path, np.zeros((2, 3), np.float32))
    >>> tf.data.read_idx(path).shape
    (2, 3)
    """
    arr = np.asarray(array)
    code = _IDX_CODES.get(arr.dtype.newbyteorder("="))
    if code is None:
        raise InvalidArgumentError(f"IDX cannot hold dtype {arr.dtype}; allowed: uint8, int8, int16, int32, float32, "
                                   "float64", "WriteIDX")
    if arr.ndim > 255:
        raise InvalidArgumentError(f"IDX holds at most 255 dimensions, got {arr.ndim}", "WriteIDX")
    path = os.fspath(path)
    body = struct.pack(f">BBBB{arr.ndim}I", 0, 0, code, arr.ndim, *arr.shape)
    body += np.ascontiguousarray(arr, IDX_TYPES[code]).tobytes()
    if path.endswith(".gz"):
        body = gzip.compress(body)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(body)
    os.replace(tmp, path)


class IDXDataset(TensorSliceDataset):
    """The rows of an IDX file (e.g. MNIST images or labels) as a dataset.

    >>> import tapeflow as tf, tempfile, os, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.idx")
    >>> tf.data.write_idx(path, np.array([3, 1, 4], np.uint8))
    >>> [int(x) for x in tf.data.IDXDataset(path)]
    [3, 1, 4]
    """

    def __init__(self, filename) -> None:
        super().__init__(read_idx(filename))
