"""Specs of the tf.io ops (``tapeflow.core.io``): files, CSV records, serialized tensors, images, Examples.

Host computations over bytes; the references here are plain Python (TensorFlow's own bytes and files are
compared in packages/core/tests/test_io.py).  Inputs are NumPy object arrays of ``bytes``: file names (in a
fresh temporary directory), CSV records over scalars, vectors, matrices and size-0 shapes, serialized
``tf.train.Example`` records; images are uint8 arrays.
"""
from __future__ import annotations

import os
import struct
import tempfile

import numpy as np
from opspec import Spec

S = ("string",)
_DIR = tempfile.mkdtemp(prefix="tapeflow-io-spec-")


def _obj(v, shape=()):
    out = np.empty(shape, dtype=object)
    if shape == ():
        out[()] = v
    else:
        out.reshape(-1)[:] = v
    return out


def _file_sample(rng, dtype):
    cases = []
    for n in (0, 1, 300):
        path = os.path.join(_DIR, f"f{n}-{int(rng.integers(1 << 30))}.bin")
        with open(path, "wb") as f:
            f.write(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        cases.append(((_obj(path.encode()),), {}))
    return cases


def _read_ref(path):
    with open(path[()].decode(), "rb") as f:
        return _obj(f.read())


def _write_sample(rng, dtype):
    return [((_obj(os.path.join(_DIR, f"w-{int(rng.integers(1 << 30))}", "out.bin").encode()),
              _obj(bytes(rng.integers(0, 256, n, dtype=np.uint8)))), {}) for n in (0, 5, 1000)]


def _write_run(tf, path, data):
    tf.io.write_file(path, data)
    return tf.io.read_file(path)


# ---- CSV -------------------------------------------------------------------------------------------------

def _csv_sample(rng, dtype):
    def rec():
        a = int(rng.integers(-50, 50))
        b = ["x", "hello", "", "a b"][int(rng.integers(4))]
        c = ["", "1.5", "-2", "3e2"][int(rng.integers(4))]
        return f"{a},{b},{c}".encode()

    return [((_obj([rec() for _ in range(int(np.prod(s)))], s) if s != () else _obj(rec()),), {})
            for s in [(), (5,), (3, 4), (0,), (2, 0)]]


def _csv_ref(records):
    recs = np.asarray(records, dtype=object)
    a = np.zeros(recs.shape, np.int32)
    b = np.empty(recs.shape, object)
    c = np.zeros(recs.shape, np.float32)
    for idx in np.ndindex(*recs.shape):
        x, y, z = recs[idx].split(b",")
        a[idx], b[idx], c[idx] = int(x), y or b"?", float(z) if z else 0.25
    return [a, b, c]


def _csv_run(tf, records):
    return tf.io.decode_csv(records, [[0], ["?"], [0.25]])


# ---- serialize_tensor -------------------------------------------------------------------------------------

_CODES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int8": 6, "int64": 9, "bool": 10}


def _varint(v):
    out = b""
    while v > 0x7F:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def _field(n, payload):
    return _varint(n << 3 | 2) + _varint(len(payload)) + payload


def _serialize_ref(x):
    """TensorProto: dtype (field 1), shape (field 2 of Dims, each size in field 1), tensor_content (field 4)."""
    x = np.asarray(x)
    dims = b"".join(_field(2, (b"\x08" + _varint(d)) if d else b"") for d in x.shape)
    body = b"\x08" + _varint(_CODES[x.dtype.name]) + _field(2, dims)
    if x.size:
        body += _field(4, np.ascontiguousarray(x, x.dtype.newbyteorder("<")).tobytes())
    return _obj(body)


def _serialize_sample(rng, dtype):
    return [((rng.uniform(-3, 3, s).astype(dtype) if dtype.startswith("float") else
              rng.integers(0, 2 if dtype == "bool" else 100, s).astype(dtype),), {})
            for s in [(), (5,), (3, 4), (0,), (2, 0, 3)]]


# ---- images ------------------------------------------------------------------------------------------------

def _image_sample(rng, dtype):
    return [((rng.integers(0, 256, s, dtype=np.uint8),), {}) for s in [(4, 5, 3), (1, 1, 1), (3, 2, 4), (2, 6, 2)]]


def _png_run(tf, img):
    return tf.io.decode_png(tf.io.encode_png(img, compression=3), channels=0)


def _image_run(tf, img):
    return tf.io.decode_image(tf.io.encode_png(img, compression=3))


def _jpeg_sample(rng, dtype):
    # flat colours: JPEG is lossy, a constant block comes back within 2 levels
    return [((np.full(s, int(rng.integers(0, 256)), np.uint8),), {}) for s in [(8, 8, 3), (16, 8, 1), (1, 1, 3)]]


def _jpeg_run(tf, img):
    return tf.io.decode_jpeg(tf.io.encode_jpeg(img, quality=100), channels=0)


# ---- parse_example --------------------------------------------------------------------------------------------

def _example_bytes(ids, x, s):
    """A tf.train.Example with int64 "ids", float "x" and bytes "s" (protobuf wire format by hand)."""
    def feature(kind, payload):
        return _field(kind, _field(1, payload) if payload is not None else b"")

    feats = []
    if ids is not None:
        feats.append(("ids", feature(3, b"".join(_varint(v) for v in ids) if ids else None)))
    feats.append(("x", feature(2, struct.pack(f"<{len(x)}f", *x))))
    feats.append(("s", _field(1, _field(1, s))))
    entries = b"".join(_field(1, _field(1, k.encode()) + _field(2, v)) for k, v in feats)
    return _field(1, entries)


def _example_sample(rng, dtype):
    cases = []
    for b in (3, 1, 0):
        recs = []
        for _ in range(b):
            n = int(rng.integers(0, 4))
            ids = [int(v) for v in rng.integers(0, 1000, n)] if rng.random() < 0.8 else None
            recs.append(_example_bytes(ids, [float(v) for v in rng.uniform(-1, 1, 2).astype(np.float32)],
                                       [b"a", b"bc", b""][int(rng.integers(3))]))
        cases.append(((_obj(recs, (b,)),), {}))
    return cases


def _example_ref(serialized):
    ind, vals, xs, ss, width = [], [], [], [], 0
    for i, rec in enumerate(serialized):
        body = rec
        # decode the three features back with the same helpers' layout (ids is absent when its key is)
        feats = _decode_example(body)
        ids = feats.get("ids", [])
        ind += [[i, j] for j in range(len(ids))]
        vals += ids
        width = max(width, len(ids))
        xs.append(feats["x"])
        ss.append(feats["s"])
    sv = np.empty(len(ss), object)
    sv[:] = ss
    return [np.asarray(ind, np.int64).reshape(-1, 2), np.asarray(vals, np.int64),
            np.asarray([len(serialized), width], np.int64), np.asarray(xs, np.float32).reshape(-1, 2), sv]


def _read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7


def _fields(b):
    i = 0
    while i < len(b):
        key, i = _read_varint(b, i)
        n, i = _read_varint(b, i)  # every field here is length-delimited
        yield key >> 3, b[i:i + n]
        i += n


def _decode_example(rec):
    out = {}
    for _, features in _fields(rec):
        for _, entry in _fields(features):
            parts = dict(_fields(entry))
            key, feat = parts[1].decode(), dict(_fields(parts[2]))
            if 3 in feat:
                lst = dict(_fields(feat[3])).get(1, b"")
                vs, i = [], 0
                while i < len(lst):
                    v, i = _read_varint(lst, i)
                    vs.append(v)
                out[key] = vs
            elif 2 in feat:
                lst = dict(_fields(feat[2]))[1]
                out[key] = list(struct.unpack(f"<{len(lst) // 4}f", lst))
            elif 1 in feat:
                out[key] = dict(_fields(feat[1]))[1]
            else:
                out[key] = []
    return out


def _example_run(tf, serialized):
    out = tf.io.parse_example(serialized, {"ids": tf.io.VarLenFeature(tf.int64),
                                           "x": tf.io.FixedLenFeature([2], tf.float32),
                                           "s": tf.io.FixedLenFeature([], tf.string)})
    return [out["ids"].indices, out["ids"].values, out["ids"].dense_shape, out["x"], out["s"]]


def _marked(ref):
    """The differential harness compares a scalar string through NumPy's fixed-width bytes, which drop
    trailing NUL bytes: the byte-valued specs append b"#" to the op's result (a tf.strings.join) and the
    reference, so a trailing NUL of the op's own bytes is compared too."""
    def marked(*a, **k):
        return _obj(ref(*a, **k)[()] + b"#")
    return marked


def _mark_run(run):
    def marked(tf, *a, **k):
        return tf.strings.join([run(tf, *a, **k), "#"])
    return marked


def _spec(op, ref, sample, fn, dtypes=S, name=""):
    return Spec(op, ref, sample, dtypes=dtypes, fn=fn, exact=True, grad=False, name=name)


SPECS = [
    _spec("read_file", _marked(_read_ref), _file_sample, _mark_run(lambda tf, p: tf.io.read_file(p))),
    _spec("write_file", _marked(lambda p, d: d), _write_sample, _mark_run(_write_run)),
    _spec("decode_csv", _csv_ref, _csv_sample, _csv_run),
    _spec("serialize_tensor", _marked(_serialize_ref), _serialize_sample,
          _mark_run(lambda tf, x: tf.io.serialize_tensor(x)),
          dtypes=("float32", "float64", "int32", "int64", "uint8", "int8", "bool")),
    _spec("parse_tensor", lambda x: x, _serialize_sample, lambda tf, x: tf.io.parse_tensor(tf.io.serialize_tensor(x),
                                                                                         x.dtype),
          dtypes=("float32", "float64", "int32", "int64", "uint8", "int8", "bool")),
    _spec("encode_png", lambda img: img, _image_sample, _png_run, dtypes=("uint8",)),
    _spec("decode_png", lambda img: img, _image_sample, _png_run, dtypes=("uint8",)),
    _spec("decode_image", lambda img: img, _image_sample, _image_run, dtypes=("uint8",)),
    Spec("encode_jpeg", lambda img: img, _jpeg_sample, dtypes=("uint8",), fn=_jpeg_run, atol=2, rtol=0,
         grad=False),
    Spec("decode_jpeg", lambda img: img, _jpeg_sample, dtypes=("uint8",), fn=_jpeg_run, atol=2, rtol=0,
         grad=False),
    _spec("parse_example", _example_ref, _example_sample, _example_run),
]
