"""Datasets on disk: ``Dataset.save`` / ``Dataset.load`` and ``Dataset.snapshot``.

A saved dataset is a directory::

    tapeflow_dataset.json        the metadata, written last (its presence means the save is complete)
    <run>_shard_<k>.tpfsave      one file per shard, in the format of ``Dataset.cache`` files
                                 (:mod:`tapeflow.data._cachefile`: header with the element structure,
                                 CRC-32, footer with the element count), gzip-compressed as a whole
                                 when ``compression="GZIP"``

The metadata (JSON) holds ``{"format": "tapeflow.data.save", "version": 1, "compression": null|"GZIP",
"element_spec": <spec>, "num_elements": n, "shards": [file names in shard order]}``; a spec is
``{"tensor": [dtype, shape|null]}``, ``{"tuple": [specs]}``, ``{"namedtuple": [type name, fields,
specs]}`` or ``{"dict": [[key, spec], ...]}`` (keys are strings).  Every file is written under a
unique temporary name and renamed into place; the metadata is renamed last, then shard files of
earlier saves are removed, so a reader sees either the old or the new dataset, never a mix.  An
element goes to shard ``shard_func(element)`` (an int64 >= 0; shard 0 without one).  ``load``
reads the shards through ``reader_func(dataset_of_shard_datasets)``, by default
``interleave(lambda x: x, cycle_length=<CPUs>, num_parallel_calls=AUTOTUNE)`` as TensorFlow
(one shard: the saved order).

``snapshot(path)`` keeps such a directory at ``path/<fingerprint>``, the fingerprint a SHA-256 of
the input pipeline (its datasets' kinds and arguments, the bytecode and constants of its
functions, its in-memory data): the first complete iteration writes it while passing elements
through, later iterations (in any process) read it back; an iteration stopped early leaves
nothing behind.
"""
from __future__ import annotations

import contextlib
import glob
import gzip
import hashlib
import json
import os
import secrets
import struct
import threading
import types
import zlib

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError, NotFoundError
from tapeflow.core.tensor import Tensor

from . import _cachefile as C
from . import _structure as S
from ._common import AUTOTUNE, _close
from ._structure import TensorSpec
from .dataset import Dataset

META = "tapeflow_dataset.json"
FORMAT = "tapeflow.data.save"
SUFFIX = ".tpfsave"
_COMPRESSIONS = (None, "", "GZIP")


def _compression(value, op, allow_auto=False):
    if allow_auto and value == "AUTO":
        return None
    if value not in _COMPRESSIONS:
        allowed = "None, 'GZIP'" + (", 'AUTO' (no compression)" if allow_auto else "")
        raise InvalidArgumentError(f"compression = {value!r} is not supported; allowed: {allowed}", op)
    return value or None


# ---- element specs as JSON ------------------------------------------------------------------

def spec_to_json(spec, op):
    if isinstance(spec, TensorSpec):
        return {"tensor": [spec.dtype.name, None if spec.shape is None else list(spec.shape)]}
    if isinstance(spec, tuple):
        items = [spec_to_json(s, op) for s in spec]
        if hasattr(type(spec), "_fields"):
            return {"namedtuple": [type(spec).__name__, list(type(spec)._fields), items]}
        return {"tuple": items}
    if isinstance(spec, dict):
        for k in spec:
            if not isinstance(k, str):
                raise InvalidArgumentError(f"only str dict keys can be saved, got {k!r}", op)
        return {"dict": [[k, spec_to_json(spec[k], op)] for k in spec]}
    raise InvalidArgumentError(f"an element component of spec {spec!r:.60} cannot be saved (tensors only)", op)


def spec_from_json(j):
    if "tensor" in j:
        dtype, shape = j["tensor"]
        return TensorSpec(shape, S.as_dtype(dtype))
    if "tuple" in j:
        return tuple(spec_from_json(x) for x in j["tuple"])
    if "namedtuple" in j:
        import collections

        name, fields, items = j["namedtuple"]
        return collections.namedtuple(name, fields)(*[spec_from_json(x) for x in items])
    if "dict" in j:
        return {k: spec_from_json(v) for k, v in j["dict"]}
    raise ValueError(f"unknown spec entry {j!r:.60}")


# ---- writing ----------------------------------------------------------------------------------

class _ShardWriter:
    """One shard file in the cache-file format, under a temporary name until :meth:`finish`."""

    def __init__(self, directory, name, spec, compression, op) -> None:
        self.final = os.path.join(directory, name)
        self.tmp = f"{self.final}.tmp-{os.getpid()}-{secrets.token_hex(6)}"
        self.flat_spec, self.op = S.flatten(spec), op
        raw = open(self.tmp, "xb")  # noqa: SIM115 - closed in finish/abort
        self.f = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if compression == "GZIP" else raw
        self.raw = raw
        head = json.dumps(C._header(spec), separators=(",", ":")).encode()
        prelude = C._PRELUDE.pack(C.MAGIC, b"%d\n" % C.VERSION, len(head)) + head
        self.f.write(prelude)
        self.crc, self.count, self.body = zlib.crc32(prelude), 0, 0

    def write(self, e):
        chunk = C._encode(e, self.flat_spec, self.count, self.op)
        self.f.write(chunk)
        self.crc = zlib.crc32(chunk, self.crc)
        self.body += len(chunk)
        self.count += 1

    def finish(self):
        tail = C._FOOTER.pack(C._FOOTER_MAGIC, self.count, self.body, 0)[:-4]
        self.f.write(tail + struct.pack("<I", zlib.crc32(tail, self.crc)))
        self.f.close()
        if self.f is not self.raw:
            self.raw.close()
        os.replace(self.tmp, self.final)

    def abort(self):
        with contextlib.suppress(OSError):
            self.f.close()
            if self.f is not self.raw:
                self.raw.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def _shard_index(shard_func, e, op):
    e = S.for_user(e)
    k = shard_func(*e) if type(e) is tuple else shard_func(e)
    if isinstance(k, Tensor):
        if k.shape or not k.dtype.is_integer:
            raise InvalidArgumentError(f"shard_func must return a scalar int64, got shape {tuple(k.shape)} and dtype "
                                       f"{k.dtype.name}", op)
        k = int(k)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InvalidArgumentError(f"shard_func must return an integer >= 0, got {k!r:.40}", op)
    return int(k)


def _write_through(elements, directory, spec, compression, shard_func, op):
    """Write ``elements`` (yielding each on) as a saved dataset in ``directory``; complete only at the end."""
    os.makedirs(directory, exist_ok=True)
    run = secrets.token_hex(4)
    spec_json = spec_to_json(spec, op)
    writers, done = {}, False
    try:
        for e in elements:
            k = 0 if shard_func is None else _shard_index(shard_func, e, op)
            w = writers.get(k)
            if w is None:
                w = writers[k] = _ShardWriter(directory, f"{run}_shard_{k:05d}{SUFFIX}", spec, compression, op)
            w.write(e)
            yield e
        if not writers:
            writers[0] = _ShardWriter(directory, f"{run}_shard_00000{SUFFIX}", spec, compression, op)
        names = []
        for k in sorted(writers):
            writers[k].finish()
            names.append(os.path.basename(writers[k].final))
        meta = {"format": FORMAT, "version": 1, "compression": compression, "element_spec": spec_json,
                "num_elements": sum(w.count for w in writers.values()), "shards": names}
        final = os.path.join(directory, META)
        tmp = f"{final}.tmp-{os.getpid()}-{secrets.token_hex(6)}"
        with open(tmp, "x") as f:
            json.dump(meta, f)
        os.replace(tmp, final)
        done = True
        for old in glob.glob(os.path.join(glob.escape(directory), f"*{SUFFIX}")):
            if os.path.basename(old) not in names:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(old)
    finally:
        if not done:
            for w in writers.values():
                w.abort()
            for name in (os.path.basename(w.final) for w in writers.values()):
                p = os.path.join(directory, name)
                if name.startswith(run) and os.path.exists(p):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(p)


def save(ds, path, compression=None, shard_func=None, checkpoint_args=None):
    op = "SaveDataset"
    if checkpoint_args is not None:
        raise InvalidArgumentError("checkpoint_args is not supported: a save runs to completion in one call (an "
                                   "interrupted save leaves the previous one in place); allowed: None", op)
    path = _path(path, op)
    compression = _compression(compression, op)
    if shard_func is not None and not callable(shard_func):
        raise InvalidArgumentError(f"shard_func must be callable, got {type(shard_func).__name__}", op)
    from ._common import INFINITE_CARDINALITY

    if ds._card() == INFINITE_CARDINALITY:
        raise InvalidArgumentError("cannot save an infinite dataset", op)
    it = ds._iterator(_ctx_of(ds))
    try:
        for _ in _write_through(it, path, ds.element_spec, compression, shard_func, op):
            pass
    finally:
        _close(it)


def _ctx_of(ds):
    from .dataset import _Ctx

    return _Ctx(ds.options())


def _path(path, op):
    try:
        return os.fspath(path)
    except TypeError:
        raise InvalidArgumentError(f"path must be a str or os.PathLike, got {type(path).__name__}", op) from None


# ---- reading ----------------------------------------------------------------------------------

def _read_meta(directory, op):
    meta_path = os.path.join(directory, META)
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except FileNotFoundError:
        raise NotFoundError(f"{directory} holds no saved dataset ({META} is missing)", op) from None
    except (OSError, ValueError) as e:
        from tapeflow.core.errors import DataLossError

        raise DataLossError(f"{meta_path}: damaged metadata ({e})", op) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != 1:
        from tapeflow.core.errors import DataLossError

        raise DataLossError(f"{meta_path}: not a tapeflow saved dataset of version 1", op)
    return meta


class _ShardDataset(Dataset):
    """One shard file, read lazily."""

    def __init__(self, path, spec, compression, op) -> None:
        self._path, self._spec_cache, self._compression, self._op = path, spec, compression, op

    def _iterator(self, ctx):
        return C._read(self._path, self._spec_cache, self._op, self._compression)

    def _compute_spec(self):  # pragma: no cover - set at construction
        return self._spec_cache


def _default_reader(datasets):
    return datasets.interleave(lambda x: x, cycle_length=os.cpu_count() or 1, num_parallel_calls=AUTOTUNE)


def _reader_dataset(directory, meta, spec, compression, reader_func, op):
    from ._windows import DatasetSpec, _ListDataset

    shards = [_ShardDataset(os.path.join(directory, n), spec, compression, op) for n in meta["shards"]]
    out = (reader_func or _default_reader)(_ListDataset(shards, DatasetSpec(spec)))
    if not isinstance(out, Dataset):
        raise InvalidArgumentError(f"reader_func must return a Dataset, got {type(out).__name__}", op)
    return out


class LoadDataset(Dataset):
    """What ``Dataset.load`` returns."""

    _op = "LoadDataset"

    def __init__(self, path, element_spec=None, compression=None, reader_func=None, wait=False) -> None:
        op = self._op
        if wait:
            raise InvalidArgumentError("wait=True (reading a snapshot a distributed tf.data service is still writing) "
                                       "is not supported; allowed: False", op)
        self._dir = _path(path, op)
        meta = _read_meta(self._dir, op)
        stored = meta.get("compression")
        if compression is not None and _compression(compression, op) != stored:
            raise InvalidArgumentError(f"compression = {compression!r}, but {self._dir} was saved with "
                                       f"compression = {stored!r}", op)
        try:
            saved = spec_from_json(meta["element_spec"])
        except (KeyError, TypeError, ValueError) as e:
            from tapeflow.core.errors import DataLossError

            raise DataLossError(f"{self._dir}: damaged element_spec in {META} ({e})", op) from None
        if element_spec is not None:
            ok = S.same_structure(_plain(saved), _plain(element_spec)) and all(
                isinstance(b, TensorSpec) and a.dtype == b.dtype and S.shapes_compatible(a.shape, b.shape)
                for a, b in zip(S.flatten(saved), S.flatten(element_spec)))
            if not ok:
                raise InvalidArgumentError(f"element_spec {S.format_structure(element_spec, repr)} does not match the "
                                           f"saved {S.format_structure(saved, repr)}", op)
            saved = element_spec
        if reader_func is not None and not callable(reader_func):
            raise InvalidArgumentError(f"reader_func must be callable, got {type(reader_func).__name__}", op)
        self._meta, self._spec_cache, self._compression, self._reader = meta, saved, stored, reader_func

    def _iterator(self, ctx):
        ds = _reader_dataset(self._dir, self._meta, self._spec_cache, self._compression, self._reader, self._op)
        return ds._iterator(ctx)

    def _compute_spec(self):  # pragma: no cover - set at construction
        return self._spec_cache

    def _card(self):
        return int(self._meta.get("num_elements", -2)) if self._reader is None else -2


def _plain(s):
    if isinstance(s, tuple):
        return tuple(_plain(x) for x in s)
    if isinstance(s, dict):
        return {k: _plain(v) for k, v in s.items()}
    return s


# ---- snapshot ---------------------------------------------------------------------------------

def fingerprint(ds) -> str:
    """A SHA-256 of a pipeline: datasets' kinds and arguments, functions' code and constants, in-memory data."""
    h = hashlib.sha256()
    _feed(h, ds, set(), 0)
    return h.hexdigest()[:32]


def _feed(h, x, seen, depth):
    if depth > 40:
        h.update(b"<deep>")
        return
    if x is None or isinstance(x, (bool, int, float, str, bytes, np.generic)):
        h.update(repr(x).encode())
        return
    if isinstance(x, Tensor):
        h.update(f"T{x.dtype.name}{tuple(x.shape)}".encode())
        h.update(np.ascontiguousarray(x.numpy()).tobytes())
        return
    if isinstance(x, np.ndarray):
        h.update(f"A{x.dtype}{x.shape}".encode())
        h.update(x.tobytes() if x.dtype != object else repr(x.tolist()).encode())
        return
    if isinstance(x, (_dt.DType, TensorSpec)):
        h.update(repr(x).encode())
        return
    if id(x) in seen:
        h.update(b"<seen>")
        return
    if isinstance(x, (list, tuple)):
        seen.add(id(x))
        h.update(f"{type(x).__name__}[".encode())
        for v in x:
            _feed(h, v, seen, depth + 1)
        h.update(b"]")
        return
    if isinstance(x, dict):
        seen.add(id(x))
        h.update(b"{")
        for k in sorted(x, key=repr):
            h.update(repr(k).encode())
            _feed(h, x[k], seen, depth + 1)
        h.update(b"}")
        return
    if isinstance(x, types.CodeType):
        h.update(x.co_code)
        h.update(repr(x.co_names).encode())
        for c in x.co_consts:
            _feed(h, c, seen, depth + 1)
        return
    if isinstance(x, (types.FunctionType, types.MethodType)):
        seen.add(id(x))
        f = x.__func__ if isinstance(x, types.MethodType) else x
        h.update(f"F{f.__qualname__}".encode())
        _feed(h, f.__code__, seen, depth + 1)
        for cell in f.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            # captured values that define the computation; a captured container is state (a list the
            # function appends to), not part of the pipeline, as in TensorFlow's graph fingerprints
            if isinstance(v, (list, dict, set)):
                h.update(f"<{type(v).__name__}>".encode())
            else:
                _feed(h, v, seen, depth + 1)
        return
    if isinstance(x, Dataset):
        seen.add(id(x))
        h.update(f"D{type(x).__name__}(".encode())
        for k in sorted(vars(x)):
            if k in ("_spec_cache", "_epochs", "_lock", "_memory", "_vec"):
                continue
            h.update(k.encode())
            _feed(h, vars(x)[k], seen, depth + 1)
        h.update(b")")
        return
    h.update(f"<{type(x).__module__}.{type(x).__qualname__}>".encode())


class SnapshotDataset(Dataset):
    """What ``Dataset.snapshot`` returns."""

    _op = "SnapshotDataset"

    def __init__(self, input_dataset, path, compression="AUTO", reader_func=None, shard_func=None) -> None:
        op = self._op
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._root = _path(path, op)
        self._compression = _compression(compression, op, allow_auto=True)
        for what, fn in (("reader_func", reader_func), ("shard_func", shard_func)):
            if fn is not None and not callable(fn):
                raise InvalidArgumentError(f"{what} must be callable, got {type(fn).__name__}", op)
        self._reader, self._shard = reader_func, shard_func
        self._lock = threading.Lock()

    @property
    def _dir(self):
        return os.path.join(self._root, fingerprint(self._input))

    def _iterator(self, ctx):
        directory = self._dir
        if os.path.exists(os.path.join(directory, META)):
            meta = _read_meta(directory, self._op)
            ds = _reader_dataset(directory, meta, self.element_spec, meta.get("compression"), self._reader, self._op)
            return ds._iterator(ctx)
        return self._writing(directory, ctx)

    def _writing(self, directory, ctx):
        it = self._input._iterator(ctx)
        try:
            yield from _write_through(it, directory, self.element_spec, self._compression, self._shard, self._op)
        finally:
            _close(it)

    def _compute_spec(self):
        return self._input.element_spec

    def _card(self):
        return self._input._card()
