"""A small protobuf wire-format codec and the messages ``tf.io`` needs: ``tf.train.Example`` and its
``Features``/``Feature``/``BytesList``/``FloatList``/``Int64List``, and ``TensorProto`` (for
``tf.io.serialize_tensor``/``parse_tensor``).

Wire format (protobuf's encoding): each field is a key ``(number << 3) | wire_type`` as a varint,
then a varint (type 0), 8 bytes (type 1), a length-prefixed payload (type 2) or 4 bytes (type 5).
Repeated numbers may be packed (one length-prefixed run) or one key per value; a decoder accepts
both, as protobuf's does.  The messages here are TensorFlow's (``example.proto``, ``feature.proto``,
``tensor.proto``), so TensorFlow parses what we write and we parse what it writes.

>>> from tapeflow.core.io._proto import Int64List
>>> Int64List(value=[1, 300]).SerializeToString()
b'\\n\\x03\\x01\\xac\\x02'
"""
from __future__ import annotations

import numpy as np

from ..errors import DataLossError


# ---- wire primitives ------------------------------------------------------------------------------

def _varint(v: int) -> bytes:
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint((number << 3) | wire)


def _len_field(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def _read_varint(buf, pos: int, what: str):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise DataLossError(f"truncated varint while parsing {what}", "ParseProto")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DataLossError(f"varint longer than 10 bytes while parsing {what}", "ParseProto")


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def fields(buf, what: str):
    """Yield ``(number, wire_type, value)`` of a serialized message: ints for types 0, 1 (raw 8 bytes as
    int) and 5, a memoryview for type 2."""
    buf = memoryview(buf)
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = _read_varint(buf, pos, what)
        number, wire = key >> 3, key & 7
        if wire == 0:
            v, pos = _read_varint(buf, pos, what)
        elif wire == 1:
            if pos + 8 > n:
                raise DataLossError(f"truncated 64-bit field {number} while parsing {what}", "ParseProto")
            v, pos = bytes(buf[pos:pos + 8]), pos + 8
        elif wire == 2:
            ln, pos = _read_varint(buf, pos, what)
            if pos + ln > n:
                raise DataLossError(f"truncated length-delimited field {number} ({ln} bytes, {n - pos} left) "
                                    f"while parsing {what}", "ParseProto")
            v, pos = buf[pos:pos + ln], pos + ln
        elif wire == 5:
            if pos + 4 > n:
                raise DataLossError(f"truncated 32-bit field {number} while parsing {what}", "ParseProto")
            v, pos = bytes(buf[pos:pos + 4]), pos + 4
        else:
            raise DataLossError(f"wire type {wire} of field {number} while parsing {what}; allowed: 0, 1, 2, 5",
                                "ParseProto")
        yield number, wire, v


def _packed_varints(view) -> list:
    out, pos = [], 0
    while pos < len(view):
        v, pos = _read_varint(view, pos, "packed varints")
        out.append(v)
    return out


# ---- tf.train messages -----------------------------------------------------------------------------

class _Message:
    """Common protobuf-style methods: SerializeToString, FromString, ParseFromString, ==, repr."""

    __slots__ = ()

    @classmethod
    def FromString(cls, data):  # noqa: N802 (protobuf's name)
        m = cls()
        m.ParseFromString(data)
        return m

    def ParseFromString(self, data):  # noqa: N802 (protobuf's name)
        if isinstance(data, str):
            raise TypeError(f"{type(self).__name__}.ParseFromString takes bytes, got str")
        self.__init__()
        self._merge(memoryview(bytes(data)))
        return len(data)

    def __eq__(self, other):
        return type(self) is type(other) and self.SerializeToString() == other.SerializeToString()

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def ByteSize(self):  # noqa: N802 (protobuf's name)
        return len(self.SerializeToString())


class _ListMessage(_Message):
    __slots__ = ("value",)

    def __init__(self, value=()) -> None:
        self.value = []
        self.value.extend(self._check(v) for v in value)

    def __repr__(self):
        return "".join(f"value: {self._fmt(v)}\n" for v in self.value)

    @staticmethod
    def _fmt(v):
        return repr(v)


class BytesList(_ListMessage):
    """``tf.train.BytesList``: a list of byte strings (str values are encoded as UTF-8).

    >>> import tapeflow as tf
    >>> tf.train.BytesList(value=[b"cat", "dog"]).value
    [b'cat', b'dog']
    """

    __slots__ = ()

    @staticmethod
    def _check(v):
        if isinstance(v, str):
            return v.encode("utf-8")
        if isinstance(v, (bytes, np.bytes_, bytearray)):
            return bytes(v)
        raise TypeError(f"BytesList values must be bytes or str, got {type(v).__name__} {v!r:.40}")

    @staticmethod
    def _fmt(v):
        return '"' + v.decode("latin-1").encode("unicode_escape").decode().replace('"', '\\"') + '"'

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return b"".join(_len_field(1, v) for v in self.value)

    def _merge(self, buf):
        for number, wire, v in fields(buf, "BytesList"):
            if number == 1 and wire == 2:
                self.value.append(bytes(v))


class FloatList(_ListMessage):
    """``tf.train.FloatList``: a list of float32 values (packed on the wire).

    >>> import tapeflow as tf
    >>> tf.train.FloatList(value=[0.5, 2]).value
    [0.5, 2.0]
    """

    __slots__ = ()

    @staticmethod
    def _check(v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"FloatList values must be numbers, got {type(v).__name__} {v!r:.40}")
        return float(np.float32(v))

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        if not self.value:
            return b""
        return _len_field(1, np.asarray(self.value, "<f4").tobytes())

    def _merge(self, buf):
        for number, wire, v in fields(buf, "FloatList"):
            if number == 1 and wire == 2:
                if len(v) % 4:
                    raise DataLossError(f"packed FloatList of {len(v)} bytes (not a multiple of 4)", "ParseProto")
                self.value.extend(float(x) for x in np.frombuffer(bytes(v), "<f4"))
            elif number == 1 and wire == 5:
                self.value.append(float(np.frombuffer(v, "<f4")[0]))


class Int64List(_ListMessage):
    """``tf.train.Int64List``: a list of int64 values (packed varints on the wire).

    >>> import tapeflow as tf
    >>> tf.train.Int64List(value=[-1, 7]).value
    [-1, 7]
    """

    __slots__ = ()

    @staticmethod
    def _check(v):
        if isinstance(v, (float, np.floating)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"Int64List values must be integers, got {type(v).__name__} {v!r:.40}")
        v = int(v)
        if not -(1 << 63) <= v < 1 << 63:
            raise ValueError(f"Value out of range: {v}")
        return v

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        if not self.value:
            return b""
        return _len_field(1, b"".join(_varint(v) for v in self.value))

    def _merge(self, buf):
        for number, wire, v in fields(buf, "Int64List"):
            if number == 1 and wire == 2:
                self.value.extend(_signed64(x) for x in _packed_varints(v))
            elif number == 1 and wire == 0:
                self.value.append(_signed64(v))


_KINDS = {"bytes_list": (1, BytesList), "float_list": (2, FloatList), "int64_list": (3, Int64List)}


class Feature(_Message):
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list`` or ``int64_list``.

    >>> import tapeflow as tf
    >>> f = tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))
    >>> f.WhichOneof("kind"), f.int64_list.value
    ('int64_list', [3])
    """

    __slots__ = ("_kind", "_list")

    def __init__(self, bytes_list=None, float_list=None, int64_list=None) -> None:
        given = {k: v for k, v in (("bytes_list", bytes_list), ("float_list", float_list),
                                   ("int64_list", int64_list)) if v is not None}
        if len(given) > 1:
            raise ValueError(f"Feature takes one of bytes_list, float_list, int64_list; got {sorted(given)}")
        self._kind, self._list = None, None
        for k, v in given.items():
            cls = _KINDS[k][1]
            if not isinstance(v, cls):
                raise TypeError(f"Feature.{k} must be a tf.train.{cls.__name__}, got {type(v).__name__}")
            self._kind, self._list = k, v

    def _get(self, kind):
        if self._kind == kind:
            return self._list
        return _KINDS[kind][1]()

    bytes_list = property(lambda self: self._get("bytes_list"))
    float_list = property(lambda self: self._get("float_list"))
    int64_list = property(lambda self: self._get("int64_list"))

    def WhichOneof(self, group):  # noqa: N802 (protobuf's name)
        if group != "kind":
            raise ValueError(f'Protocol message has no oneof "{group}" field; allowed: "kind"')
        return self._kind

    def HasField(self, name):  # noqa: N802 (protobuf's name)
        if name not in _KINDS:
            raise ValueError(f'Protocol message Feature has no field {name}')
        return self._kind == name

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        if self._kind is None:
            return b""
        return _len_field(_KINDS[self._kind][0], self._list.SerializeToString())

    def _merge(self, buf):
        for number, wire, v in fields(buf, "Feature"):
            for kind, (num, cls) in _KINDS.items():
                if number == num and wire == 2:
                    if self._kind != kind:
                        self._kind, self._list = kind, cls()
                    self._list._merge(v)

    def __repr__(self):
        if self._kind is None:
            return ""
        inner = "".join("  " + line + "\n" for line in repr(self._list).splitlines())
        return f"{self._kind} {{\n{inner}}}\n"


class Features(_Message):
    """``tf.train.Features``: a map from feature names to :class:`Feature`.

    >>> import tapeflow as tf
    >>> fs = tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))})
    >>> list(fs.feature), fs.feature["x"].float_list.value
    (['x'], [1.0])
    """

    __slots__ = ("feature",)

    def __init__(self, feature=None) -> None:
        self.feature = {}
        for k, v in (feature or {}).items():
            if not isinstance(k, str):
                raise TypeError(f"Features keys must be str, got {type(k).__name__} {k!r:.40}")
            if not isinstance(v, Feature):
                raise TypeError(f"Features values must be tf.train.Feature, got {type(v).__name__}")
            self.feature[k] = v

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        out = []
        for k in sorted(self.feature):  # protobuf's deterministic serialization orders map keys
            entry = _len_field(1, k.encode("utf-8")) + _len_field(2, self.feature[k].SerializeToString())
            out.append(_len_field(1, entry))
        return b"".join(out)

    def _merge(self, buf):
        for number, wire, v in fields(buf, "Features"):
            if number == 1 and wire == 2:
                key, feat = "", Feature()
                for n2, w2, v2 in fields(v, "Features.feature entry"):
                    if n2 == 1 and w2 == 2:
                        key = bytes(v2).decode("utf-8")
                    elif n2 == 2 and w2 == 2:
                        feat._merge(v2)
                self.feature[key] = feat

    def __repr__(self):
        out = []
        for k, f in self.feature.items():
            inner = "".join("    " + line + "\n" for line in repr(f).splitlines())
            out.append(f'feature {{\n  key: "{k}"\n  value {{\n{inner}  }}\n}}\n')
        return "".join(out)


class Example(_Message):
    """``tf.train.Example``: a :class:`Features` message, the record of TFRecord files.

    >>> import tapeflow as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}))
    >>> data = ex.SerializeToString()
    >>> tf.train.Example.FromString(data).features.feature["label"].int64_list.value
    [1]
    """

    __slots__ = ("_features",)

    def __init__(self, features=None) -> None:
        if features is not None and not isinstance(features, Features):
            raise TypeError(f"Example.features must be a tf.train.Features, got {type(features).__name__}")
        self._features = features if features is not None else Features()

    @property
    def features(self):
        return self._features

    def SerializeToString(self) -> bytes:  # noqa: N802 (protobuf's name)
        inner = self._features.SerializeToString()
        return _len_field(1, inner) if self._features.feature else b""

    def _merge(self, buf):
        for number, wire, v in fields(buf, "Example"):
            if number == 1 and wire == 2:
                self._features._merge(v)

    def __repr__(self):
        inner = "".join("  " + line + "\n" for line in repr(self._features).splitlines())
        return f"features {{\n{inner}}}\n"


# ---- TensorProto ---------------------------------------------------------------------------------

# TensorFlow's DataType enum (types.proto) for the dtypes tapeflow has
DT_CODES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7,
            "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18,
            "float16": 19, "uint32": 22, "uint64": 23}
DT_NAMES = {v: k for k, v in DT_CODES.items()}


def encode_tensor_proto(dtype_name: str, shape, arr) -> bytes:
    """TensorProto bytes: dtype, shape, and the values as ``tensor_content`` (strings as ``string_val``)."""
    dims = b"".join(_len_field(2, _key(1, 0) + _varint(int(d)) if d else b"") for d in shape)
    out = _key(1, 0) + _varint(DT_CODES[dtype_name]) + _len_field(2, dims)
    if dtype_name == "string":
        out += b"".join(_len_field(8, bytes(v)) for v in arr.reshape(-1))
    elif arr.size:
        le = arr.dtype.newbyteorder("<") if arr.dtype.byteorder not in ("|",) else arr.dtype
        out += _len_field(4, np.ascontiguousarray(arr, le).tobytes())
    return out


def _vals_from(v, wire, fmt, size):
    if wire == 2:
        return list(np.frombuffer(bytes(v), fmt)) if size else [int(x) for x in _packed_varints(v)]
    if wire in (1, 5):
        return list(np.frombuffer(v, fmt))
    return [v]


def decode_tensor_proto(data: bytes):
    """``(dtype name, shape, NumPy array)`` of a serialized TensorProto."""
    dtype_code, shape, content, vals, strings = 0, [], None, [], []
    for number, wire, v in fields(data, "TensorProto"):
        if number == 1 and wire == 0:
            dtype_code = v
        elif number == 2 and wire == 2:
            for n2, w2, v2 in fields(v, "TensorShapeProto"):
                if n2 == 2 and w2 == 2:
                    size = 0
                    for n3, w3, v3 in fields(v2, "TensorShapeProto.Dim"):
                        if n3 == 1 and w3 == 0:
                            size = _signed64(v3)
                    shape.append(size)
                elif n2 == 3 and w2 == 0 and v2:
                    raise DataLossError("TensorProto of unknown rank cannot be parsed into a tensor", "ParseTensor")
        elif number == 4 and wire == 2:
            content = bytes(v)
        elif number == 8 and wire == 2:
            strings.append(bytes(v))
        elif number == 5:
            vals.extend(float(x) for x in _vals_from(v, wire, "<f4", 4))
        elif number == 6:
            vals.extend(float(x) for x in _vals_from(v, wire, "<f8", 8))
        elif number in (7, 13, 11):  # int_val, half_val (bits), bool_val
            vals.extend(_signed64(int(x)) for x in _vals_from(v, wire, None, 0))
        elif number in (10,):
            vals.extend(_signed64(int(x)) for x in _vals_from(v, wire, None, 0))
        elif number in (16, 17):  # uint32_val, uint64_val
            vals.extend(int(x) for x in _vals_from(v, wire, None, 0))
    name = DT_NAMES.get(dtype_code)
    if name is None:
        raise DataLossError(f"TensorProto dtype code {dtype_code} is not one tapeflow has; allowed: "
                            f"{sorted(DT_CODES.values())}", "ParseTensor")
    count = int(np.prod(shape)) if shape else 1
    if name == "string":
        arr = np.empty(count, object)
        src = strings or [b""]
        for i in range(count):
            arr[i] = src[min(i, len(src) - 1)] if strings else b""
        return name, tuple(shape), arr.reshape(shape)
    np_dt = _np_dtype(name)
    if content is not None:
        le = np_dt.newbyteorder("<") if np_dt.itemsize > 1 else np_dt
        if len(content) != count * np_dt.itemsize:
            raise DataLossError(f"TensorProto of shape {tuple(shape)} and dtype {name} holds {len(content)} bytes of "
                                f"content; expected {count * np_dt.itemsize}", "ParseTensor")
        arr = np.frombuffer(content, le).astype(np_dt).reshape(shape)
        return name, tuple(shape), arr
    if name in ("float16", "bfloat16"):
        bits = np.asarray(vals or [0], np.uint16)
        arr = bits.view(np_dt)
    else:
        arr = np.asarray(vals or [0], np_dt)
    if arr.size < count:  # TensorFlow repeats the last value
        arr = np.concatenate([arr, np.repeat(arr[-1:], count - arr.size)])
    return name, tuple(shape), arr[:count].reshape(shape)


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)

