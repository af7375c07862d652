"""TFRecord files: ``tf.io.TFRecordWriter``, ``tf.io.TFRecordOptions`` and the record reader that
``tf.data.TFRecordDataset`` uses.

A TFRecord file is a sequence of records, each::

    uint64 length (little-endian)
    uint32 masked_crc32c(length bytes)
    bytes  data[length]
    uint32 masked_crc32c(data)

where ``masked_crc32c(x) = ((crc >> 15) | (crc << 17)) + 0xa282ead8`` (mod 2**32) of the CRC-32C
(Castagnoli) checksum, as TensorFlow writes them.  A file may be compressed as a whole with GZIP
or ZLIB (``compression_type``).  Checksums are computed on the host (Python over a 256-entry table).

>>> import tapeflow as tf, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
>>> with tf.io.TFRecordWriter(path) as w:
...     w.write(b"hello")
>>> list(tf.data.TFRecordDataset(path).as_numpy_iterator())
[b'hello']
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib

from ..errors import DataLossError, InvalidArgumentError, NotFoundError

_POLY = 0x82F63B78
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)
del _i, _c


def crc32c(data: bytes) -> int:
    """The CRC-32C (Castagnoli) checksum of ``data``.

    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C: the checksum rotated right by 15 bits plus 0xa282ead8."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


_COMPRESSIONS = {None: "", "": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def compression_arg(value, op):
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if value not in _COMPRESSIONS:
        raise InvalidArgumentError(f"compression_type = {value!r} is not supported; allowed: None, '', 'GZIP', "
                                   "'ZLIB'", op)
    return _COMPRESSIONS[value]


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: the compression of a TFRecord file (``""``, ``"GZIP"`` or ``"ZLIB"``)
    and its level (0-9, or None for zlib's default).

    >>> import tapeflow as tf
    >>> tf.io.TFRecordOptions("GZIP").compression_type
    'GZIP'
    """

    compression_type_map = {"ZLIB": "ZLIB", "GZIP": "GZIP", "": ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None) -> None:
        op = "TFRecordOptions"
        self.compression_type = compression_arg(compression_type, op)
        if compression_level is not None and (isinstance(compression_level, bool) or
                                              not isinstance(compression_level, int) or
                                              not -1 <= compression_level <= 9):
            raise InvalidArgumentError(f"compression_level = {compression_level!r}; allowed: None or an int in "
                                       "[-1, 9]", op)
        self.compression_level = compression_level
        # zlib tuning knobs that change only speed and size, never the bytes read back
        for n, v in (("flush_mode", flush_mode), ("input_buffer_size", input_buffer_size),
                     ("output_buffer_size", output_buffer_size), ("window_bits", window_bits),
                     ("compression_method", compression_method), ("mem_level", mem_level),
                     ("compression_strategy", compression_strategy)):
            if v is not None:
                raise InvalidArgumentError(f"{n} = {v!r}: tapeflow's TFRecord writer takes compression_type and "
                                           "compression_level only; allowed: None", op)

    @classmethod
    def get_compression_type_string(cls, options):
        """The compression string of ``options`` (a TFRecordOptions, a string or None)."""
        if options is None:
            return ""
        return compression_arg(options, "TFRecordOptions")


def frame(data: bytes) -> bytes:
    """One record's bytes as TFRecord stores them (length, its CRC, data, the data's CRC)."""
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))


class TFRecordWriter:
    """``tf.io.TFRecordWriter(path, options=None)``: writes records (bytes) to a TFRecord file.

    ``options`` is a :class:`TFRecordOptions` or a compression string (``""``, ``"GZIP"``, ``"ZLIB"``).
    Use it as a context manager, or call ``close()``; ``flush()`` pushes the bytes written so far.

    >>> import tapeflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "z.tfrecord")
    >>> with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions("ZLIB")) as w:
    ...     w.write(b"a"); w.write(b"bc")
    >>> list(tf.data.TFRecordDataset(path, compression_type="ZLIB").as_numpy_iterator())
    [b'a', b'bc']
    """

    def __init__(self, path, options=None) -> None:
        op = "TFRecordWriter"
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path must be a str, bytes or path, got {type(path).__name__} [Op:{op}]")
        self._path = os.fsdecode(path)
        if isinstance(options, TFRecordOptions):
            self._comp, level = options.compression_type, options.compression_level
        else:
            self._comp, level = compression_arg(options, op), None
        level = -1 if level is None else level
        try:
            self._raw = open(self._path, "wb")  # noqa: SIM115 - closed by close()
        except FileNotFoundError:
            raise NotFoundError(f"{self._path}; No such file or directory", op) from None
        if self._comp == "GZIP":
            self._f = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=9 if level == -1 else level,
                                    mtime=0)
        else:
            self._f = self._raw
        self._z = zlib.compressobj(level) if self._comp == "ZLIB" else None
        self._closed = False

    def write(self, record):
        """Append one record (bytes, str or a scalar string tensor)."""
        if self._closed:
            raise InvalidArgumentError("write on a closed TFRecordWriter", "TFRecordWriter")
        data = _record_bytes(record)
        body = frame(data)
        self._f.write(self._z.compress(body) if self._z else body)

    def flush(self):
        """Push what was written to the file (a ZLIB stream is flushed at a full-flush point)."""
        if self._z is not None:
            self._f.write(self._z.flush(zlib.Z_FULL_FLUSH))
        self._f.flush()

    def close(self):
        """Finish the file (idempotent)."""
        if self._closed:
            return
        if self._z is not None:
            self._f.write(self._z.flush())
        if self._f is not self._raw:
            self._f.close()
        self._raw.close()
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _record_bytes(record) -> bytes:
    if isinstance(record, str):
        return record.encode("utf-8")
    if isinstance(record, (bytes, bytearray)):
        return bytes(record)
    if hasattr(record, "numpy"):
        v = record.numpy()
        if isinstance(v, bytes):
            return v
    raise TypeError(f"a record must be bytes, str or a scalar string tensor, got {type(record).__name__} "
                    "[Op:TFRecordWriter]")


class _ZlibStream:
    def __init__(self, raw) -> None:
        self._raw, self._z, self._buf, self._started = raw, zlib.decompressobj(), b"", False

    def read(self, n):
        while len(self._buf) < n:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                self._buf += self._z.flush()
                if not self._z.eof and (self._buf or self._started):
                    raise EOFError("the ZLIB stream ends before its end marker (truncated)")
                break
            self._started = True
            self._buf += self._z.decompress(chunk)
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def close(self):
        self._raw.close()


def read_records(path: str, compression: str, op: str = "TFRecordDataset", buffer_size=None):
    """Yield the records (bytes) of one TFRecord file, checking both checksums of each."""
    try:
        raw = open(path, "rb", buffering=buffer_size or -1)  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory", op) from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{path} is a directory, not a file", op) from None
    f = gzip.GzipFile(fileobj=raw, mode="rb") if compression == "GZIP" else \
        _ZlibStream(raw) if compression == "ZLIB" else raw
    try:
        offset = 0
        while True:
            try:
                head = f.read(12)
            except (OSError, EOFError, zlib.error) as e:
                raise DataLossError(f"{path}: damaged {compression} data at record offset {offset} ({e})", op) \
                    from None
            if not head:
                return
            if len(head) < 12:
                raise DataLossError(f"{path}: truncated record at offset {offset}: {len(head)} header bytes of 12",
                                    op)
            length, hcrc = struct.unpack("<QI", head)
            if masked_crc32c(head[:8]) != hcrc:
                raise DataLossError(f"corrupted record at {offset} in {path}: the length's checksum does not match",
                                    op)
            try:
                body = f.read(length + 4)
            except (OSError, EOFError, zlib.error) as e:
                raise DataLossError(f"{path}: damaged {compression} data at record offset {offset} ({e})", op) \
                    from None
            if len(body) < length + 4:
                raise DataLossError(f"{path}: truncated record at offset {offset}: {len(body)} bytes of "
                                    f"{length + 4}", op)
            data = body[:length]
            if masked_crc32c(data) != struct.unpack("<I", body[length:])[0]:
                raise DataLossError(f"corrupted record at {offset} in {path}: the data's checksum does not match",
                                    op)
            offset += 12 + length + 4
            yield data
    finally:
        f.close()
        if f is not raw:
            raw.close()
