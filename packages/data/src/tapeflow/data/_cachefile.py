"""``Dataset.cache(filename)``: the first complete iteration is written to ``filename + ".tpfcache"``
(atomically: a temporary file renamed at the end, removed if the iteration stops early); later
iterations, in this process or another, read it back.

Format (no pickle): ``TPFCACHE1\\n``, then per element ``E`` + leaf count (uint32), and per leaf
``T`` dtype code, rank, shape (int64 each) and the raw little-endian values; or ``B`` + length +
bytes for a text scalar; or ``A`` rank, shape, then length + bytes per string for a text array.
"""
from __future__ import annotations

import os
import struct
import threading

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import DataLossError
from tapeflow.core.tensor import Tensor, constant

from . import _structure as S

MAGIC = b"TPFCACHE1\n"
SUFFIX = ".tpfcache"
_OP = "CacheDataset"


def path_for(filename: str) -> str:
    return filename + SUFFIX


def iterate(ds, ctx):
    path = path_for(ds._filename)
    if os.path.exists(path):
        return _read(path, ds.element_spec)
    return _write_through(ds, ctx, path)


def _write_through(ds, ctx, path):
    from .dataset import _close

    tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
    complete = False
    it = ds._input._iterator(ctx)
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC)
            for e in it:
                _write_element(f, e)
                yield e
        complete = True
    finally:
        _close(it)
        if complete:
            os.replace(tmp, path)
        else:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def _write_element(f, e):
    leaves = S.flatten(e)
    parts = [b"E", struct.pack("<I", len(leaves))]
    for v in leaves:
        if isinstance(v, Tensor):
            arr = np.ascontiguousarray(v.numpy())
            parts += [b"T", struct.pack(f"<BB{arr.ndim}q", v.dtype.code, arr.ndim, *arr.shape),
                      arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()]
        elif isinstance(v, bytes):
            parts += [b"B", struct.pack("<Q", len(v)), v]
        else:
            arr = np.asarray(v, object)
            parts += [b"A", struct.pack(f"<B{arr.ndim}q", arr.ndim, *arr.shape)]
            for s in arr.reshape(-1):
                parts += [struct.pack("<Q", len(s)), bytes(s)]
    f.write(b"".join(parts))


class _Reader:
    def __init__(self, data, path):
        self.data, self.pos, self.path = data, 0, path

    def take(self, n):
        end = self.pos + n
        if end > len(self.data):
            raise DataLossError(f"{self.path}: truncated cache file (needs {end} bytes, has {len(self.data)})", _OP)
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def unpack(self, fmt):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))


def _read(path, spec):
    with open(path, "rb") as fh:
        data = fh.read()
    r = _Reader(memoryview(data), path)
    if bytes(r.take(len(MAGIC))) != MAGIC:
        raise DataLossError(f"{path}: not a tapeflow cache file (bad magic)", _OP)
    flat_spec = S.flatten(spec)
    while r.pos < len(data):
        if bytes(r.take(1)) != b"E":
            raise DataLossError(f"{path}: damaged cache file at byte {r.pos - 1}", _OP)
        (n,) = r.unpack("<I")
        if n != len(flat_spec):
            raise DataLossError(f"{path}: cached elements have {n} components, this dataset's have "
                                f"{len(flat_spec)}; delete the file to rebuild the cache", _OP)
        leaves = [_read_leaf(r, path) for _ in range(n)]
        yield S.pack(spec, leaves)


def _read_leaf(r, path):
    kind = bytes(r.take(1))
    if kind == b"T":
        code, ndim = r.unpack("<BB")
        shape = r.unpack(f"<{ndim}q")
        try:
            dt = _dt.from_code(code)
        except KeyError:
            raise DataLossError(f"{path}: damaged cache file (dtype code {code})", _OP) from None
        count = 1
        for d in shape:
            count *= d
        raw = r.take(count * dt.size)
        arr = np.frombuffer(raw, dt.np.newbyteorder("<") if dt.size > 1 else dt.np, count).reshape(shape)
        return constant(arr.astype(dt.np), dtype=dt)
    if kind == b"B":
        (n,) = r.unpack("<Q")
        return bytes(r.take(n))
    if kind == b"A":
        (ndim,) = r.unpack("<B")
        shape = r.unpack(f"<{ndim}q")
        out = np.empty(shape, object)
        flat = out.reshape(-1)
        for i in range(flat.size):
            (n,) = r.unpack("<Q")
            flat[i] = bytes(r.take(n))
        return out
    raise DataLossError(f"{path}: damaged cache file (leaf kind {kind!r})", _OP)
