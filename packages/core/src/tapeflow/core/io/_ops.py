"""``tf.io``'s tensor ops: whole files, serialized tensors, CSV records, images.

Host computations (file and byte-string work, as TensorFlow's own run on the CPU): the inputs'
strings are read on the host and the results are placed where the op runs.  ``read_file``,
``write_file``, ``decode_csv``, ``serialize_tensor``, ``parse_tensor``, ``decode_png``/``decode_jpeg``/
``decode_image`` and ``encode_png``/``encode_jpeg`` are runner primitives, so they trace inside ``tf.function``
(a graph node that runs them when the graph runs).  Two results have a rank that only the bytes tell, and
tapeflow's graphs need ranks: inside ``tf.function``, ``parse_tensor`` takes the rank from the tensor that
``serialize_tensor`` wrote in the same graph or from a value known when tracing (otherwise a typed error says
so), and ``decode_image`` gives ``[height, width, channels]`` (a GIF with ``expand_animations``, rank 4, is a
typed error there: ``expand_animations=False`` takes its first frame).
"""
from __future__ import annotations

import io as _pyio
import os

import numpy as np

from .. import dtypes as _dt
from ..dispatch import to_tensor
from ..errors import InvalidArgumentError, NotFoundError
from ..dispatch import register
from ..runner import PRIMITIVES, current_graph, primitive, run_tensors
from ..tensor import Tensor, constant, from_numpy
from . import _proto

_NONDIFF = "file and byte-string op (no gradient)"
_S = (_dt.string,)


def _scalar_string_tensor(x, op, what) -> Tensor:
    if isinstance(x, (str, bytes, os.PathLike)):
        x = os.fsencode(x) if isinstance(x, os.PathLike) else x
    t = to_tensor(x, op)
    if not t.dtype.is_string or t.shape.rank != 0:
        raise InvalidArgumentError(f"{what} must be a scalar string, got shape {tuple(t.shape)} dtype "
                                   f"{t.dtype.name}", op)
    return t


def _host_bytes(t: Tensor) -> bytes:
    return t._host()[()]


def _bytes_out(data: bytes, dev) -> Tensor:
    arr = np.empty((), object)
    arr[()] = data
    return from_numpy(arr, _dt.string, dev)


@primitive("read_file", "ReadFile", infer=lambda f: ((), _dt.string), dtypes=_S, stateful=True)  # the file may change
def _read_file(dev, f):
    path = _host_bytes(f).decode()
    try:
        with open(path, "rb") as fh:
            return _bytes_out(fh.read(), dev)
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory", "ReadFile") from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{path} is a directory, not a file", "ReadFile") from None


@register("read_file", "ReadFile", nondiff=_NONDIFF)
def read_file(filename, name=None) -> Tensor:
    """The whole contents of file ``filename`` as a scalar string tensor.

    >>> import tapeflow as tf, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> tf.io.write_file(p, b"\\x00ab")
    >>> tf.io.read_file(p).numpy()
    b'\\x00ab'
    """
    return run_tensors(PRIMITIVES["read_file"], (_scalar_string_tensor(filename, "ReadFile", "filename"),))


@primitive("write_file", "WriteFile", infer=lambda f, c: [], dtypes=_S, same_dtype=True, stateful=True)
def _write_file(dev, f, c):
    path, data = _host_bytes(f).decode(), _host_bytes(c)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}-{id(data):x}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return ()


@register("write_file", "WriteFile", nondiff=_NONDIFF)
def write_file(filename, contents, name=None) -> None:
    """Write scalar string ``contents`` to ``filename`` atomically (a temporary file, then a rename),
    creating missing parent directories as TensorFlow does; inside ``tf.function`` it writes on every call.

    >>> import tapeflow as tf, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "sub", "y.txt")
    >>> tf.io.write_file(p, "hi")
    >>> open(p, "rb").read()
    b'hi'
    """
    op = "WriteFile"
    run_tensors(PRIMITIVES["write_file"], (_scalar_string_tensor(filename, op, "filename"),
                                           _scalar_string_tensor(contents, op, "contents")))


# ---- serialize_tensor / parse_tensor ------------------------------------------------------------

@primitive("serialize_tensor", "SerializeTensor", infer=lambda x: ((), _dt.string))
def _serialize_tensor(dev, x):
    arr = np.asarray(x._host(), dtype=object) if x.dtype.is_string else np.asarray(x.numpy())
    return _bytes_out(_proto.encode_tensor_proto(x.dtype.name, list(x.shape), arr), dev)


@register("serialize_tensor", "SerializeTensor", nondiff=_NONDIFF)
def serialize_tensor(tensor, name=None) -> Tensor:
    """A tensor as a serialized ``TensorProto`` (TensorFlow's wire format: ``tf.io.parse_tensor`` of
    TensorFlow reads it back, and ours reads TensorFlow's).

    >>> import tapeflow as tf
    >>> s = tf.io.serialize_tensor(tf.constant([1.0, 2.0]))
    >>> tf.io.parse_tensor(s, tf.float32).numpy().tolist()
    [1.0, 2.0]
    """
    t = to_tensor(tensor, "SerializeTensor")
    if t.dtype.name not in _proto.DT_CODES:
        raise InvalidArgumentError(f"dtype {t.dtype.name} has no TensorProto code; allowed: "
                                   f"{sorted(_proto.DT_CODES)}", "SerializeTensor")
    return run_tensors(PRIMITIVES["serialize_tensor"], (t,))


def _parse_tensor_infer(s, *, out_type, rank):
    return (None,) * rank, out_type


@primitive("parse_tensor", "ParseTensor", infer=_parse_tensor_infer, dtypes=_S)
def _parse_tensor(dev, s, *, out_type, rank):
    op = "ParseTensor"
    dname, _, arr = _proto.decode_tensor_proto(_host_bytes(s))
    if dname != out_type.name:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({dname}) and dtype ({out_type.name})", op)
    if rank is not None and arr.ndim != rank:
        raise InvalidArgumentError(f"the serialized tensor has rank {arr.ndim} (shape {list(arr.shape)}); this "
                                   f"tf.function was traced with parse_tensor giving rank {rank}", op)
    if out_type.is_string:
        return from_numpy(np.asarray(arr, dtype=object), out_type, dev)
    return from_numpy(np.array(arr, out_type.np, order="C"), out_type, dev)


def _traced_rank(t: Tensor, graph, op) -> int:
    """The rank of ``parse_tensor(t)`` while tracing: from ``t``'s value when it has one, else from the tensor
    ``serialize_tensor`` wrote it from in this graph."""
    if t._h is not None or t._arr is not None:
        return _proto.decode_tensor_proto(_host_bytes(t))[2].ndim
    for node in reversed(getattr(graph, "nodes", ())):
        outs = node.outputs if isinstance(node.outputs, (tuple, list)) else (node.outputs,)
        if node.prim.name == "serialize_tensor" and any(o is t for o in outs):
            return len(node.inputs[0]._shape)
    raise InvalidArgumentError(
        "inside tf.function the rank of parse_tensor's result must be known when the function is traced (tapeflow's "
        "graphs have no tensors of unknown rank), and `serialized` is a symbolic tensor that serialize_tensor did not "
        "write in this function; allowed: a value known when tracing, serialize_tensor's output, or parse it outside "
        "the function (eagerly or in a tf.data map) and pass the tensor in", op)


@register("parse_tensor", "ParseTensor", nondiff=_NONDIFF)
def parse_tensor(serialized, out_type, name=None) -> Tensor:
    """The tensor of a serialized ``TensorProto``; its dtype must be ``out_type``.

    Inside ``tf.function`` the result's rank is taken when tracing from ``serialized``'s value or from the
    ``serialize_tensor`` that wrote it in the same function (tapeflow's graphs need ranks; TensorFlow's result
    there has an unknown shape); any other symbolic input is a typed error.

    >>> import tapeflow as tf
    >>> tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([[7]])), tf.int32).numpy().tolist()
    [[7]]
    >>> f = tf.function(lambda x: tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float32) * 2)
    >>> f(tf.constant([1.0, 2.0])).numpy().tolist()
    [2.0, 4.0]
    """
    op = "ParseTensor"
    from ..dispatch import dtype_arg

    want = dtype_arg(out_type, op, "out_type")
    if want.name not in _proto.DT_CODES:
        raise InvalidArgumentError(f"out_type {want.name} has no TensorProto code; allowed: {sorted(_proto.DT_CODES)}",
                                   op)
    t = _scalar_string_tensor(serialized, op, "serialized")
    graph = current_graph()
    rank = None if graph is None else _traced_rank(t, graph, op)
    return run_tensors(PRIMITIVES["parse_tensor"], (t,), {"out_type": want, "rank": rank})


# ---- decode_csv ----------------------------------------------------------------------------------

_CSV_TYPES = ("float32", "float64", "int32", "int64", "string")


def csv_defaults(record_defaults, op):
    """``[(dtype, default or None)]`` from TensorFlow's record_defaults (a value, a 1-element or empty list
    or tensor per column; a dtype alone means a required column of that dtype)."""
    if not isinstance(record_defaults, (list, tuple)):
        raise TypeError(f"record_defaults must be a list, got {type(record_defaults).__name__} [Op:{op}]")
    out = []
    for i, d in enumerate(record_defaults):
        if isinstance(d, _dt.DType):
            t = constant(np.zeros(0, d.np) if not d.is_string else np.zeros(0, object), d)
        else:
            t = to_tensor(d, op)
        if t.dtype.name not in _CSV_TYPES:
            raise InvalidArgumentError(f"record_defaults[{i}] has dtype {t.dtype.name}; allowed: "
                                       f"{', '.join(_CSV_TYPES)}", op)
        n = t.shape.num_elements()
        if t.shape.rank > 1 or n > 1:
            raise InvalidArgumentError(f"record_defaults[{i}] must have at most one element, got shape "
                                       f"{tuple(t.shape)}", op)
        default = None if n == 0 else np.asarray(t.numpy()).reshape(-1)[0]
        out.append((t.dtype, default))
    return out


def split_csv(rec: bytes, delim: bytes, quote: bool, ridx: int, op) -> list:
    """The fields of one CSV record (RFC 4180 quoting when ``quote``: ``"a,b"`` and ``""`` for a quote)."""
    if not quote:
        return rec.split(delim)
    fields, i, n = [], 0, len(rec)
    while True:
        if i < n and rec[i:i + 1] == b'"':
            i += 1
            buf = bytearray()
            while True:
                j = rec.find(b'"', i)
                if j < 0:
                    raise InvalidArgumentError(f"Quoted field has to end with quote followed by delim or end in "
                                               f"record {ridx}", op)
                buf += rec[i:j]
                if rec[j + 1:j + 2] == b'"':
                    buf += b'"'
                    i = j + 2
                    continue
                i = j + 1
                break
            if i < n and rec[i:i + 1] != delim:
                raise InvalidArgumentError(f"Quote inside a string has to be escaped by another quote in "
                                           f"record {ridx}", op)
            fields.append(bytes(buf))
        else:
            j = rec.find(delim, i)
            j = n if j < 0 else j
            fields.append(rec[i:j])
            i = j
        if i >= n:
            return fields
        i += len(delim)
        if i >= n:
            fields.append(b"")
            return fields


def convert_field(s: bytes, dtype, default, na: bytes, fidx: int, ridx: int, op):
    if s == b"" or s == na:
        if default is None:
            raise InvalidArgumentError(f"Field {fidx} is required but missing in record {ridx}!", op)
        return default
    if dtype.is_string:
        return s
    try:
        text = s.decode("ascii")
        if dtype.is_integer:
            v = int(text, 10)
            if not dtype.min <= v <= dtype.max:
                raise ValueError
            return v
        return float(text)
    except (ValueError, UnicodeDecodeError):
        raise InvalidArgumentError(f"Field {fidx} in record {ridx} is not a valid {dtype.name}: "
                                   f"{s.decode('utf-8', 'replace')}", op) from None


def csv_row(rec: bytes, cols, delim, quote, na, select, ridx, op) -> list:
    fields = split_csv(rec, delim, quote, ridx, op)
    if select is not None:
        if select[-1] >= len(fields):
            raise InvalidArgumentError(f"Expect {select[-1] + 1} fields but have {len(fields)} in record {ridx}",
                                       op)
        fields = [fields[c] for c in select]
    elif len(fields) != len(cols):
        raise InvalidArgumentError(f"Expect {len(cols)} fields but have {len(fields)} in record {ridx}", op)
    return [convert_field(f, dt, d, na, i, ridx, op) for i, (f, (dt, d)) in enumerate(zip(fields, cols))]


def csv_options(field_delim, use_quote_delim, na_value, select_cols, ncols, op):
    if not isinstance(field_delim, (str, bytes)) or len(field_delim) != 1:
        raise InvalidArgumentError(f"field_delim = {field_delim!r}; allowed: a single character", op)
    if not isinstance(use_quote_delim, bool):
        raise TypeError(f"use_quote_delim must be a bool, got {type(use_quote_delim).__name__} [Op:{op}]")
    if not isinstance(na_value, (str, bytes)):
        raise TypeError(f"na_value must be a str, got {type(na_value).__name__} [Op:{op}]")
    delim = field_delim.encode() if isinstance(field_delim, str) else field_delim
    na = na_value.encode() if isinstance(na_value, str) else na_value
    select = None
    if select_cols is not None:
        select = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(select, select[1:])) or (select and select[0] < 0):
            raise InvalidArgumentError(f"select_cols = {list(select_cols)}; allowed: non-negative indices in "
                                       "strictly increasing order", op)
        if len(select) != ncols:
            raise InvalidArgumentError(f"select_cols has {len(select)} entries and record_defaults {ncols}; "
                                       "they must match", op)
    return delim, use_quote_delim, na, select


def _csv_infer(records, *, cols, delim, quote, na, select):
    return [(records._shape, dt) for dt, _ in cols]


@primitive("decode_csv", "DecodeCSV", infer=_csv_infer, dtypes=_S)
def _decode_csv(dev, records, *, cols, delim, quote, na, select):
    op = "DecodeCSV"
    recs = np.asarray(records._host(), dtype=object)
    flat = recs.reshape(-1)
    outs = [np.empty(flat.size, object if dt.is_string else dt.np) for dt, _ in cols]
    for r, rec in enumerate(flat):
        for c, v in enumerate(csv_row(rec, cols, delim, quote, na, select, r, op)):
            outs[c][r] = v
    return tuple(from_numpy(o.reshape(recs.shape), dt, dev) for o, (dt, _) in zip(outs, cols))


@register("decode_csv", "DecodeCSV", nondiff=_NONDIFF)
def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None) -> list:
    """Parse CSV ``records`` (a string tensor of any shape) into one tensor per column, each of the
    records' shape and of its ``record_defaults`` entry's dtype (float32, float64, int32, int64, string);
    an empty default (``[]`` or a dtype) makes the column required.

    >>> import tapeflow as tf
    >>> a, b = tf.io.decode_csv(["1,x", "2,"], [[0], ["none"]])
    >>> a.numpy().tolist(), b.numpy().tolist()
    ([1, 2], [b'x', b'none'])
    """
    op = "DecodeCSV"
    cols = csv_defaults(record_defaults, op)
    if not cols:
        raise InvalidArgumentError("record_defaults is empty; allowed: one entry per column", op)
    delim, quote, na, select = csv_options(field_delim, use_quote_delim, na_value, select_cols, len(cols), op)
    t = to_tensor(records, op)
    if not t.dtype.is_string:
        raise InvalidArgumentError(f"records has dtype {t.dtype.name}; allowed: string", op)
    cols = tuple((dt, d.item() if isinstance(d, np.generic) else d) for dt, d in cols)
    out = run_tensors(PRIMITIVES["decode_csv"], (t,), {"cols": cols, "delim": delim, "quote": quote, "na": na,
                                                       "select": None if select is None else tuple(select)})
    return list(out) if isinstance(out, tuple) else [out]


# ---- images (Pillow) -----------------------------------------------------------------------------

def _pil(op):
    try:
        from PIL import Image
    except ModuleNotFoundError:
        raise ImportError(f"{op} needs Pillow: pip install 'tapeflow-core[images]'") from None
    return Image


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _channels_arg(channels, op, allowed=(0, 1, 2, 3, 4)):
    if isinstance(channels, bool) or not isinstance(channels, (int, np.integer)) or channels not in allowed:
        raise InvalidArgumentError(f"channels = {channels!r}; allowed: {', '.join(map(str, allowed))}", op)
    return int(channels)


def _decode_array(data: bytes, channels: int, op, fmt=None) -> np.ndarray:
    """``[h, w, c]`` uint8 pixels of an image file's bytes (``channels`` 0: the file's own)."""
    Image = _pil(op)
    try:
        img = Image.open(_pyio.BytesIO(data))
        img.load()
    except Exception as e:  # noqa: BLE001 - Pillow raises several kinds for bad data
        raise InvalidArgumentError(f"could not decode the image: {e}", op) from None
    if fmt is not None and img.format not in fmt:
        raise InvalidArgumentError(f"the data is {img.format}; allowed: {', '.join(fmt)}", op)
    if img.mode in ("I;16", "I;16B", "I") and img.format == "PNG":
        arr = (np.asarray(img, np.uint16)[..., None] >> 8).astype(np.uint8)  # 16-bit samples scaled to 8
        return np.ascontiguousarray(arr)
    if channels == 0:
        mode = {"L": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA", "P": "RGBA" if "transparency" in img.info
                else "RGB", "1": "L"}.get(img.mode, "RGB")
    else:
        mode = _MODES[channels]
    arr = np.asarray(img.convert(mode), np.uint8)
    return np.ascontiguousarray(arr[..., None] if arr.ndim == 2 else arr)


def _image_infer(contents, *, channels, **attrs):
    return (None, None, channels or None), _dt.uint8


@primitive("decode_png", "DecodePng", infer=_image_infer, dtypes=_S)
def _decode_png(dev, contents, *, channels):
    return from_numpy(_decode_array(_host_bytes(contents), channels, "DecodePng", ("PNG",)), _dt.uint8, dev)


def _dtype_of(dtype, allowed, op):
    from ..dispatch import dtype_arg

    dt = dtype_arg(dtype, op, "dtype")
    if dt.name not in allowed:
        raise InvalidArgumentError(f"dtype = {dt.name}; allowed: {', '.join(allowed)}", op)
    return dt


@register("decode_png", "DecodePng", nondiff=_NONDIFF)
def decode_png(contents, channels=0, dtype=_dt.uint8, name=None) -> Tensor:
    """A PNG image as a ``[height, width, channels]`` uint8 tensor (16-bit samples are scaled to 8 bits, as
    TensorFlow does for ``dtype=tf.uint8``; tapeflow has no uint16 dtype); ``channels`` 0 keeps the file's.

    >>> import tapeflow as tf
    >>> img = tf.constant([[[255, 0, 0]]], tf.uint8)
    >>> tf.io.decode_png(tf.io.encode_png(img)).numpy().tolist()
    [[[255, 0, 0]]]
    """
    op = "DecodePng"
    _dtype_of(dtype, ("uint8",), op)
    ch = _channels_arg(channels, op)
    return run_tensors(PRIMITIVES["decode_png"], (_scalar_string_tensor(contents, op, "contents"),),
                       {"channels": ch})


def _shrink(arr: np.ndarray, ratio: int, op) -> np.ndarray:
    if ratio == 1:
        return arr
    Image = _pil(op)
    h, w = -(-arr.shape[0] // ratio), -(-arr.shape[1] // ratio)
    img = Image.fromarray(arr[..., 0] if arr.shape[2] == 1 else arr, _MODES[arr.shape[2]]).resize((w, h), Image.BOX)
    return np.ascontiguousarray(np.asarray(img, np.uint8).reshape(h, w, arr.shape[2]))


@primitive("decode_jpeg", "DecodeJpeg", infer=_image_infer, dtypes=_S)
def _decode_jpeg(dev, contents, *, channels, ratio):
    arr = _decode_array(_host_bytes(contents), channels, "DecodeJpeg", ("JPEG",))
    return from_numpy(_shrink(arr, ratio, "DecodeJpeg"), _dt.uint8, dev)


@register("decode_jpeg", "DecodeJpeg", nondiff=_NONDIFF)
def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None) -> Tensor:
    """A JPEG image as a ``[height, width, channels]`` uint8 tensor (``ratio`` 1, 2, 4 or 8 downscales).

    >>> import tapeflow as tf
    >>> img = tf.fill([4, 4, 3], tf.constant(128, tf.uint8))
    >>> tf.io.decode_jpeg(tf.io.encode_jpeg(img, quality=100)).shape
    TensorShape([4, 4, 3])
    """
    op = "DecodeJpeg"
    if isinstance(ratio, bool) or ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"ratio = {ratio!r}; allowed: 1, 2, 4, 8", op)
    if try_recover_truncated or acceptable_fraction != 1:
        raise InvalidArgumentError("try_recover_truncated/acceptable_fraction: tapeflow decodes whole JPEG files "
                                   "only; allowed: False and 1", op)
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise InvalidArgumentError(f"dct_method = {dct_method!r}; allowed: '', 'INTEGER_FAST', 'INTEGER_ACCURATE'",
                                   op)
    if fancy_upscaling is not True:
        raise InvalidArgumentError("fancy_upscaling = False: Pillow's decoder always upsamples chroma smoothly; "
                                   "allowed: True", op)
    ch = _channels_arg(channels, op, (0, 1, 3))
    return run_tensors(PRIMITIVES["decode_jpeg"], (_scalar_string_tensor(contents, op, "contents"),),
                       {"channels": ch, "ratio": int(ratio)})


def _decode_image_infer(contents, *, channels, expand_animations, traced):
    return (None, None, channels or None), _dt.uint8


@primitive("decode_image", "DecodeImage", infer=_decode_image_infer, dtypes=_S)
def _decode_image(dev, contents, *, channels, expand_animations, traced):
    op = "DecodeImage"
    Image = _pil(op)
    data, ch = _host_bytes(contents), channels
    try:
        img = Image.open(_pyio.BytesIO(data))
        fmt = img.format
    except Exception as e:  # noqa: BLE001 - Pillow raises several kinds for bad data
        raise InvalidArgumentError(f"Unknown image file format. One of JPEG, PNG, GIF, BMP required. ({e})", op) \
            from None
    if fmt == "GIF":
        if expand_animations and traced:
            raise InvalidArgumentError("the image is a GIF, which decodes to [frames, height, width, 3] (rank 4) with "
                                       "expand_animations=True, but this tf.function was traced with decode_image "
                                       "giving [height, width, channels] (tapeflow's graphs need ranks); allowed "
                                       "inside tf.function: expand_animations=False (the first frame)", op)
        frames = []
        for i in range(getattr(img, "n_frames", 1)):
            img.seek(i)
            frames.append(np.asarray(img.convert("RGB"), np.uint8))
        arr = np.stack(frames) if expand_animations else frames[0]
    elif fmt in ("BMP", "JPEG", "PNG"):
        arr = _decode_array(data, ch, op)
    else:
        raise InvalidArgumentError(f"Unknown image file format {fmt}. One of JPEG, PNG, GIF, BMP required.", op)
    return from_numpy(np.ascontiguousarray(arr), _dt.uint8, dev)


@register("decode_image", "DecodeImage", nondiff=_NONDIFF)
def decode_image(contents, channels=None, dtype=_dt.uint8, name=None, expand_animations=True) -> Tensor:
    """A PNG, JPEG, GIF or BMP image as ``[height, width, channels]`` (GIF: ``[frames, h, w, 3]`` when
    ``expand_animations``); a float ``dtype`` scales to [0, 1].  Inside ``tf.function`` the result is
    ``[height, width, channels]`` (tapeflow's graphs need ranks): a GIF there needs ``expand_animations=False``.

    >>> import tapeflow as tf
    >>> png = tf.io.encode_png(tf.zeros([2, 3, 1], tf.uint8))
    >>> tf.io.decode_image(png).shape
    TensorShape([2, 3, 1])
    >>> tf.function(lambda s: tf.io.decode_image(s, channels=3, dtype=tf.float32))(png).shape
    TensorShape([2, 3, 3])
    """
    op = "DecodeImage"
    dt = _dtype_of(dtype, ("uint8", "float16", "float32", "float64"), op)
    ch = _channels_arg(0 if channels is None else channels, op)
    if not isinstance(expand_animations, bool):
        raise TypeError(f"expand_animations must be a bool, got {type(expand_animations).__name__} [Op:{op}]")
    out = run_tensors(PRIMITIVES["decode_image"], (_scalar_string_tensor(contents, op, "contents"),),
                      {"channels": ch, "expand_animations": expand_animations,
                       "traced": current_graph() is not None})
    if dt.is_floating:
        from ..ops import cast, multiply

        return multiply(cast(out, dt), constant(1.0 / 255.0, dt))
    return out


def _image_arg(image, op) -> Tensor:
    t = to_tensor(image, op)
    if t.dtype.name != "uint8":
        raise InvalidArgumentError(f"image has dtype {t.dtype.name}; allowed: uint8", op)
    if t.shape.rank != 3 or t.shape[2] not in (1, 2, 3, 4, None):
        raise InvalidArgumentError(f"image must be [height, width, channels] with 1-4 channels, got shape "
                                   f"{tuple(t.shape)}", op)
    return t


@primitive("encode_png", "EncodePng", infer=lambda x, *, compression: ((), _dt.string), dtypes=(_dt.uint8,))
def _encode_png(dev, x, *, compression):
    Image = _pil("EncodePng")
    arr = np.asarray(x.numpy())
    img = Image.fromarray(arr[..., 0] if arr.shape[2] == 1 else arr, _MODES[arr.shape[2]])
    buf = _pyio.BytesIO()
    img.save(buf, "PNG", compress_level=6 if compression == -1 else compression)
    return _bytes_out(buf.getvalue(), dev)


@register("encode_png", "EncodePng", nondiff=_NONDIFF)
def encode_png(image, compression=-1, name=None) -> Tensor:
    """A ``[height, width, channels]`` uint8 image (1-4 channels) as PNG bytes; ``compression`` -1..9.

    >>> import tapeflow as tf
    >>> tf.io.encode_png(tf.zeros([1, 1, 3], tf.uint8)).numpy()[:4]
    b'\\x89PNG'
    """
    op = "EncodePng"
    if isinstance(compression, bool) or not isinstance(compression, int) or not -1 <= compression <= 9:
        raise InvalidArgumentError(f"compression = {compression!r}; allowed: an int in [-1, 9]", op)
    return run_tensors(PRIMITIVES["encode_png"], (_image_arg(image, op),), {"compression": compression})


@primitive("encode_jpeg", "EncodeJpeg", infer=lambda x, **a: ((), _dt.string), dtypes=(_dt.uint8,))
def _encode_jpeg(dev, x, *, mode, quality, progressive, optimize, subsampling, dpi, xmp):
    Image = _pil("EncodeJpeg")
    arr = np.asarray(x.numpy())
    if arr.shape[2] not in (1, 3):
        raise InvalidArgumentError(f"image has {arr.shape[2]} channels; allowed: 1 or 3", "EncodeJpeg")
    img = Image.fromarray(arr[..., 0] if arr.shape[2] == 1 else arr, _MODES[arr.shape[2]])
    img = img.convert(mode or img.mode)
    buf = _pyio.BytesIO()
    kw = {"quality": quality, "progressive": progressive, "optimize": optimize, "dpi": dpi,
          "subsampling": subsampling}
    if xmp:
        kw["xmp"] = xmp
    img.save(buf, "JPEG", **kw)
    return _bytes_out(buf.getvalue(), dev)


@register("encode_jpeg", "EncodeJpeg", nondiff=_NONDIFF)
def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False, chroma_downsampling=True,
                density_unit="in", x_density=300, y_density=300, xmp_metadata="", name=None) -> Tensor:
    """A ``[height, width, 1 or 3]`` uint8 image as JPEG bytes (``quality`` 0-100).

    >>> import tapeflow as tf
    >>> tf.io.encode_jpeg(tf.zeros([2, 2, 3], tf.uint8)).numpy()[:2]
    b'\\xff\\xd8'
    """
    op = "EncodeJpeg"
    t = _image_arg(image, op)
    if format not in ("", "grayscale", "rgb"):
        raise InvalidArgumentError(f"format = {format!r}; allowed: '', 'grayscale', 'rgb'", op)
    if isinstance(quality, bool) or not isinstance(quality, int) or not 0 <= quality <= 100:
        raise InvalidArgumentError(f"quality = {quality!r}; allowed: an int in [0, 100]", op)
    if density_unit not in ("in", "cm"):
        raise InvalidArgumentError(f"density_unit = {density_unit!r}; allowed: 'in', 'cm'", op)
    if t.shape[2] not in (1, 3, None):
        raise InvalidArgumentError(f"image has {t.shape[2]} channels; allowed: 1 or 3", op)
    for n, v in (("progressive", progressive), ("optimize_size", optimize_size),
                 ("chroma_downsampling", chroma_downsampling)):
        if not isinstance(v, bool):
            raise TypeError(f"{n} must be a bool, got {type(v).__name__} [Op:{op}]")
    mode = {"": None, "grayscale": "L", "rgb": "RGB"}[format]  # None: the image's own
    dpi = (x_density, y_density) if density_unit == "in" else (x_density * 2.54, y_density * 2.54)
    xmp = xmp_metadata.encode() if isinstance(xmp_metadata, str) else bytes(xmp_metadata)
    return run_tensors(PRIMITIVES["encode_jpeg"], (t,), {
        "mode": mode, "quality": quality, "progressive": progressive, "optimize": optimize_size,
        "subsampling": 2 if chroma_downsampling else 0, "dpi": dpi, "xmp": xmp})
