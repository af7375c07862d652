"""``Dataset.cache(filename)``: the first complete iteration is written to ``filename + ".tpfcache"``;
later iterations, in this process or another, read it back.

The file appears only complete: it is written under a unique temporary name next to it and renamed
into place after the last element and the footer (an iteration stopped early removes its temporary
file, as tf.data discards a partial cache).  Reading checks everything before the first element:
the magic and version, the footer, one CRC-32 over all the bytes before it, the header's element
structure against the dataset's ``element_spec``; then each component against the header while
reading, and the element count at the end.  Any damage is a ``DataLossError`` naming the file; a
whole file written for elements of another structure, dtype or shape is an ``InvalidArgumentError``,
as TensorFlow reports it.

Format (no pickle, little-endian)::

    b"TPFCACHE" b"2\\n" | header length (uint32) | header (JSON: structure, dtype and shape per component)
    per element: b"E", then per component
        b"T" dtype code (uint8), rank (uint8), shape (int64 each), raw values     a tensor
        b"B" length (uint64), bytes                                               a text scalar
        b"A" rank (uint8), shape (int64 each), per string: length (uint64), bytes   a text array
    footer: b"TPFCEND\\n", element count (uint64), body length (uint64), CRC-32 of all bytes before it (uint32)
"""
from __future__ import annotations

import gzip
import json
import os
import secrets
import struct
import sys
import zlib

import numpy as np
from tapeflow.core.errors import DataLossError, InvalidArgumentError
from tapeflow.core.tensor import Tensor, constant

from . import _structure as S
from ._common import _close

MAGIC = b"TPFCACHE"
VERSION = 2
SUFFIX = ".tpfcache"
_OP = "CacheDataset"
_PRELUDE = struct.Struct("<8s2sI")  # magic, version ("2\n"), header length
_FOOTER = struct.Struct("<8sQQI")  # footer magic, element count, body length, CRC-32
_FOOTER_MAGIC = b"TPFCEND\n"
_LITTLE = sys.byteorder == "little"
_SHAPES = [struct.Struct(f"<{n}q") for n in range(256)]
_CODE_RANK = struct.Struct("<BB")
_U64 = struct.Struct("<Q")


def path_for(filename: str) -> str:
    return filename + SUFFIX


def iterate(ds, ctx):
    path = path_for(ds._filename)
    if os.path.exists(path):
        return _read(path, ds.element_spec)
    return _write_through(ds, ctx, path)


# ---- the header: the element structure ------------------------------------------------------

def _fingerprint(s) -> str:
    """The nesting of a structure, dict keys sorted (the order components are stored in)."""
    if isinstance(s, tuple):
        inner = ", ".join(_fingerprint(v) for v in s)
        return f"({inner}{',' if len(s) == 1 else ''})"
    if isinstance(s, dict):
        return "{" + ", ".join(f"{k!r}: {_fingerprint(s[k])}" for k in sorted(s)) + "}"
    return "."


def _header(spec) -> dict:
    comps = [[s.dtype.name, None if s.shape is None else list(s.shape)] for s in S.flatten(spec)]
    return {"structure": _fingerprint(spec), "components": comps}


def _describe(header) -> str:
    comps = ", ".join(f"{d} {'<unknown>' if sh is None else tuple(sh)}" for d, sh in header["components"])
    return f"{header['structure']} of [{comps}]"


def _check_header(path, header, spec, op=_OP):
    """The header's components as (kind, dtype, shape) per component, after checking it matches ``spec``."""
    try:
        structure, comps = header["structure"], header["components"]
        parsed = []
        for name, shape in comps:
            dt = S.as_dtype(name)
            if shape is not None:
                shape = tuple(None if d is None else int(d) for d in shape)
                if len(shape) > 255 or any(d is not None and d < 0 for d in shape):
                    raise ValueError(f"shape {shape}")
            parsed.append((dt, shape))
        if not isinstance(structure, str):
            raise TypeError("structure")
    except (KeyError, TypeError, ValueError) as e:
        raise DataLossError(f"{path}: damaged cache file header ({e})", op) from None
    mine = _header(spec)
    flat = S.flatten(spec)
    ok = structure == mine["structure"] and len(parsed) == len(flat)
    ok = ok and all(dt is s.dtype and S.shapes_compatible(shape, s.shape) for (dt, shape), s in zip(parsed, flat))
    if not ok:
        raise InvalidArgumentError(
            f"{path} holds elements {_describe(header)}, this dataset's elements are {_describe(mine)}; delete "
            "the file (or cache to another filename) to rebuild the cache", op)
    return parsed


# ---- writing --------------------------------------------------------------------------------

def _write_through(ds, ctx, path):
    spec = ds.element_spec
    flat_spec = S.flatten(spec)
    head = json.dumps(_header(spec), separators=(",", ":")).encode()
    # a unique name per writer: two iterations writing at once each finish their own file
    tmp = f"{path}.tmp-{os.getpid()}-{secrets.token_hex(6)}"
    complete = False
    it = ds._input._iterator(ctx)
    try:
        with open(tmp, "xb") as f:
            prelude = _PRELUDE.pack(MAGIC, b"%d\n" % VERSION, len(head)) + head
            f.write(prelude)
            crc, count, body = zlib.crc32(prelude), 0, 0
            for e in it:
                chunk = _encode(e, flat_spec, count)
                f.write(chunk)
                crc = zlib.crc32(chunk, crc)
                body += len(chunk)
                count += 1
                yield e
            tail = _FOOTER.pack(_FOOTER_MAGIC, count, body, 0)[:-4]
            f.write(tail + struct.pack("<I", zlib.crc32(tail, crc)))
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


def _encode(e, flat_spec, index, op=_OP) -> bytes:
    leaves = S.flatten(e)
    if len(leaves) != len(flat_spec):
        raise InvalidArgumentError(f"element {index} has {len(leaves)} components, the dataset's element_spec has "
                                   f"{len(flat_spec)}", op)
    parts = [b"E"]
    for j, (v, s) in enumerate(zip(leaves, flat_spec)):
        if isinstance(v, Tensor):
            shape = v._shape
            if v._dtype is not s.dtype or (shape != s.shape and not S.shapes_compatible(shape, s.shape)):
                _mismatch(index, j, v.dtype.name, shape, s, op)
            arr = np.asarray(v.numpy())
            if not _LITTLE:
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            parts += [b"T", _CODE_RANK.pack(v._dtype.code, arr.ndim), _SHAPES[arr.ndim].pack(*arr.shape),
                      arr.tobytes()]
            continue
        shape = np.shape(v)
        if s.dtype is not S.string or not S.shapes_compatible(shape, s.shape):
            _mismatch(index, j, "string", shape, s, op)
        if isinstance(v, bytes):
            parts += [b"B", _U64.pack(len(v)), v]
        else:
            arr = np.asarray(v, object)
            parts += [b"A", bytes((arr.ndim,)), _SHAPES[arr.ndim].pack(*arr.shape)]
            for x in arr.reshape(-1):
                x = bytes(x)
                parts += [_U64.pack(len(x)), x]
    return b"".join(parts)


def _mismatch(index, j, dtype, shape, s, op=_OP):
    raise InvalidArgumentError(f"element {index}, component {j} has dtype {dtype} and shape {tuple(shape)}; the "
                               f"dataset's element_spec says {s.dtype.name} {_shape_text(s.shape)}", op)


def _shape_text(shape):
    return "<unknown>" if shape is None else str(tuple(shape))


# ---- reading --------------------------------------------------------------------------------

def _open(path, spec, op=_OP, compression=None):
    """The file's bytes, body bounds, element count and components, all checked."""
    with open(path, "rb") as fh:
        data = fh.read()
    if compression == "GZIP":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise DataLossError(f"{path}: damaged GZIP-compressed file ({e})", op) from None
    size = len(data)
    if data[:len(MAGIC)] != MAGIC[:size]:
        raise DataLossError(f"{path}: not a tapeflow cache file (bad magic)", op)
    if size < _PRELUDE.size + _FOOTER.size:
        raise DataLossError(f"{path}: truncated cache file ({size} bytes, shorter than a header and footer)", op)
    _, version, hlen = _PRELUDE.unpack_from(data)
    if version != b"%d\n" % VERSION:
        raise DataLossError(f"{path}: cache file format {version!r} is not supported (this tapeflow writes and "
                            f"reads {VERSION}); delete the file to rebuild the cache", op)
    fmagic, count, body_len, stored = _FOOTER.unpack_from(data, size - _FOOTER.size)
    if fmagic != _FOOTER_MAGIC:
        raise DataLossError(f"{path}: truncated or incomplete cache file (no footer at its end)", op)
    crc = zlib.crc32(memoryview(data)[:size - 4])
    if crc != stored:
        raise DataLossError(f"{path}: checksum mismatch (stored {stored:08x}, computed {crc:08x}): the cache file "
                            "is damaged", op)
    start = _PRELUDE.size + hlen
    end = size - _FOOTER.size
    if start > end or end - start != body_len:
        raise DataLossError(f"{path}: damaged cache file (header of {hlen} bytes and body of {body_len} bytes do "
                            f"not fill its {size} bytes)", op)
    try:
        header = json.loads(data[_PRELUDE.size:start])
    except (UnicodeDecodeError, ValueError) as e:
        raise DataLossError(f"{path}: damaged cache file header ({e})", op) from None
    if not isinstance(header, dict):
        raise DataLossError(f"{path}: damaged cache file header (not an object)", op)
    return data, start, end, count, _check_header(path, header, spec, op)


def _read(path, spec, op=_OP, compression=None):
    data, pos, end, count, comps = _open(path, spec, op, compression)
    pack = S.packer(spec)
    # per component: the kind bytes allowed (b"T"; b"B" or b"A" for text, either when its rank is
    # unknown), the dtype, its NumPy reading type and code, the full shape when the header knows it
    plan = []
    for dt, shape in comps:
        fixed = shape if shape is not None and None not in shape else None
        if dt is S.string:
            kinds = (66, 65) if shape is None else (66,) if shape == () else (65,)
            plan.append((kinds, dt, None, None, fixed))
        else:
            npd = dt.np if _LITTLE or dt.size == 1 else dt.np.newbyteorder("<")
            plan.append(((84,), dt, npd, dt.code, fixed))
    n = 0
    code_rank, shapes, u64 = _CODE_RANK.unpack_from, _SHAPES, _U64.unpack_from
    try:
        while pos < end:
            if data[pos] != 69:  # b"E"
                raise _Damage(f"no element marker at byte {pos}")
            pos += 1
            leaves = []
            for j, (kinds, dt, npd, code, fixed) in enumerate(plan):
                kind = data[pos]
                if kind not in kinds:
                    raise _Damage(f"element {n}, component {j}: component kind {bytes((kind,))!r}, the header "
                                  f"allows {bytes(kinds)!r}")
                if kind == 84:
                    c, rank = code_rank(data, pos + 1)
                    if c != code:
                        raise _Damage(f"element {n}, component {j}: dtype code {c}, the header says {dt.name}")
                    shape = shapes[rank].unpack_from(data, pos + 3)
                    pos += 3 + 8 * rank
                    if shape != fixed:
                        _check_shape(shape, comps[j][1], n, j)
                    size = 1
                    for d in shape:
                        size *= d
                    nbytes = size * dt.size
                    if pos + nbytes > end:
                        raise _Damage(f"element {n}, component {j} runs past the body")
                    arr = np.frombuffer(data, npd, size, pos).reshape(shape)
                    pos += nbytes
                    leaves.append(constant(arr if _LITTLE else arr.astype(dt.np), dtype=dt))
                elif kind == 66:
                    (m,) = u64(data, pos + 1)
                    pos += 9
                    if pos + m > end:
                        raise _Damage(f"element {n}, component {j} runs past the body")
                    leaves.append(data[pos:pos + m])
                    pos += m
                else:
                    rank = data[pos + 1]
                    shape = shapes[rank].unpack_from(data, pos + 2)
                    pos += 2 + 8 * rank
                    _check_shape(shape, comps[j][1], n, j)
                    out = np.empty(shape, object)
                    flat = out.reshape(-1)
                    for i in range(flat.size):
                        (m,) = u64(data, pos)
                        pos += 8
                        if pos + m > end:
                            raise _Damage(f"element {n}, component {j} runs past the body")
                        flat[i] = data[pos:pos + m]
                        pos += m
                    leaves.append(out)
            n += 1
            yield pack(leaves)
    except _Damage as e:
        raise DataLossError(f"{path}: damaged cache file ({e})", op) from None
    except (struct.error, IndexError, ValueError) as e:
        raise DataLossError(f"{path}: damaged cache file at element {n} ({e})", op) from None
    if pos != end or n != count:
        raise DataLossError(f"{path}: damaged cache file (read {n} elements ending at byte {pos}; the footer says "
                            f"{count} elements ending at byte {end})", op)


class _Damage(Exception):
    pass


def _check_shape(shape, want, n, j):
    if any(d < 0 for d in shape) or not S.shapes_compatible(shape, want):
        raise _Damage(f"element {n}, component {j}: shape {shape}, the header says "
                      f"{'<unknown>' if want is None else tuple(want)}")
