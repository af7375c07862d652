"""``tf.io``'s tensor ops: whole files, serialized tensors, CSV records, images.

Host computations (file and byte-string work, as TensorFlow's own run on the CPU): the inputs'
strings are read on the host and the results are tensors on the default device.
"""
from __future__ import annotations

import io as _pyio
import os

import numpy as np

from .. import dtypes as _dt
from ..dispatch import to_tensor
from ..errors import InvalidArgumentError, NotFoundError
from ..tensor import Tensor, constant
from . import _proto


def _scalar_string(x, op, what) -> bytes:
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, bytes):
        return x
    if isinstance(x, os.PathLike):
        return os.fsencode(x)
    t = to_tensor(x, op)
    if not t.dtype.is_string or t.shape.rank != 0:
        raise InvalidArgumentError(f"{what} must be a scalar string, got shape {tuple(t.shape)} dtype "
                                   f"{t.dtype.name}", op)
    return t.numpy()


def _strings(x, op, what="input") -> np.ndarray:
    t = to_tensor(x, op)
    if not t.dtype.is_string:
        raise InvalidArgumentError(f"{what} has dtype {t.dtype.name}; allowed: string", op)
    return np.asarray(t.numpy(), dtype=object)


def _string_tensor(arr) -> Tensor:
    arr = np.asarray(arr, dtype=object)
    return constant(arr, _dt.string)


def read_file(filename, name=None) -> Tensor:
    """The whole contents of file ``filename`` as a scalar string tensor.

    >>> import tapeflow as tf, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> tf.io.write_file(p, b"\\x00ab")
    >>> tf.io.read_file(p).numpy()
    b'\\x00ab'
    """
    op = "ReadFile"
    path = _scalar_string(filename, op, "filename").decode()
    try:
        with open(path, "rb") as f:
            return _string_tensor(f.read())
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory", op) from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{path} is a directory, not a file", op) from None


def write_file(filename, contents, name=None) -> None:
    """Write scalar string ``contents`` to ``filename`` atomically (a temporary file, then a rename),
    creating missing parent directories as TensorFlow does.

    >>> import tapeflow as tf, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "sub", "y.txt")
    >>> tf.io.write_file(p, "hi")
    >>> open(p, "rb").read()
    b'hi'
    """
    op = "WriteFile"
    path = _scalar_string(filename, op, "filename").decode()
    data = _scalar_string(contents, op, "contents")
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}-{id(data):x}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# ---- serialize_tensor / parse_tensor ------------------------------------------------------------

def serialize_tensor(tensor, name=None) -> Tensor:
    """A tensor as a serialized ``TensorProto`` (TensorFlow's wire format: ``tf.io.parse_tensor`` of
    TensorFlow reads it back, and ours reads TensorFlow's).

    >>> import tapeflow as tf
    >>> s = tf.io.serialize_tensor(tf.constant([1.0, 2.0]))
    >>> tf.io.parse_tensor(s, tf.float32).numpy().tolist()
    [1.0, 2.0]
    """
    t = to_tensor(tensor, "SerializeTensor")
    name_ = t.dtype.name
    if name_ not in _proto.DT_CODES:
        raise InvalidArgumentError(f"dtype {name_} has no TensorProto code; allowed: {sorted(_proto.DT_CODES)}",
                                   "SerializeTensor")
    arr = np.asarray(t.numpy(), dtype=object) if t.dtype.is_string else np.asarray(t.numpy())
    return _string_tensor(_proto.encode_tensor_proto(name_, t.shape.as_list(), arr))


def parse_tensor(serialized, out_type, name=None) -> Tensor:
    """The tensor of a serialized ``TensorProto``; its dtype must be ``out_type``.

    >>> import tapeflow as tf
    >>> tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([[7]])), tf.int32).numpy().tolist()
    [[7]]
    """
    op = "ParseTensor"
    from ..dispatch import dtype_arg

    want = dtype_arg(out_type, op, "out_type")
    data = _scalar_string(serialized, op, "serialized")
    dname, _, arr = _proto.decode_tensor_proto(data)
    if dname != want.name:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({dname}) and dtype ({want.name})", op)
    return constant(arr, want)


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
    recs = _strings(records, op, "records")
    flat = recs.reshape(-1)
    outs = [np.empty(flat.size, object if dt.is_string else dt.np) for dt, _ in cols]
    for r, rec in enumerate(flat):
        for c, v in enumerate(csv_row(rec, cols, delim, quote, na, select, r, op)):
            outs[c][r] = v
    return [constant(o.reshape(recs.shape), dt) for o, (dt, _) in zip(outs, cols)]


# ---- images (Pillow) -----------------------------------------------------------------------------

def _pil(op):
    try:
        from PIL import Image
    except ModuleNotFoundError:
        raise ImportError(f"{op} needs Pillow: pip install 'tapeflow-core[images]'") from None
    return Image


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _decode(contents, channels, dtype, op, fmt=None):
    Image = _pil(op)
    data = _scalar_string(contents, op, "contents")
    if channels not in (0, 1, 2, 3, 4) or isinstance(channels, bool):
        raise InvalidArgumentError(f"channels = {channels!r}; allowed: 0, 1, 3, 4 (and 2 for PNG)", op)
    try:
        img = Image.open(_pyio.BytesIO(data))
        img.load()
    except Exception as e:  # noqa: BLE001 - Pillow raises several kinds for bad data
        raise InvalidArgumentError(f"could not decode the image: {e}", op) from None
    if fmt is not None and img.format not in fmt:
        raise InvalidArgumentError(f"the data is {img.format}; allowed: {', '.join(fmt)}", op)
    if img.mode in ("I;16", "I;16B", "I") and img.format == "PNG":
        arr = (np.asarray(img, np.uint16)[..., None] >> 8).astype(np.uint8)  # 16-bit samples scaled to 8
        return constant(np.ascontiguousarray(arr), dtype)
    if channels == 0:
        mode = {"L": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA", "P": "RGBA" if "transparency" in img.info
                else "RGB", "1": "L"}.get(img.mode, "RGB")
    else:
        mode = _MODES[channels]
    arr = np.asarray(img.convert(mode), np.uint8)
    if arr.ndim == 2:
        arr = arr[..., None]
    return constant(np.ascontiguousarray(arr), dtype)


def _dtype_of(dtype, allowed, op):
    from ..dispatch import dtype_arg

    dt = dtype_arg(dtype, op, "dtype")
    if dt.name not in allowed:
        raise InvalidArgumentError(f"dtype = {dt.name}; allowed: {', '.join(allowed)}", op)
    return dt


def decode_png(contents, channels=0, dtype=_dt.uint8, name=None) -> Tensor:
    """A PNG image as a ``[height, width, channels]`` uint8 tensor (16-bit samples are scaled to 8 bits, as
    TensorFlow does for ``dtype=tf.uint8``; tapeflow has no uint16 dtype); ``channels`` 0 keeps the file's.

    >>> import tapeflow as tf
    >>> img = tf.constant([[[255, 0, 0]]], tf.uint8)
    >>> tf.io.decode_png(tf.io.encode_png(img)).numpy().tolist()
    [[[255, 0, 0]]]
    """
    return _decode(contents, channels, _dtype_of(dtype, ("uint8",), "DecodePng"), "DecodePng", ("PNG",))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None) -> Tensor:
    """A JPEG image as a ``[height, width, channels]`` uint8 tensor (``ratio`` 1, 2, 4 or 8 downscales).

    >>> import tapeflow as tf
    >>> img = tf.fill([4, 4, 3], tf.constant(128, tf.uint8))
    >>> tf.io.decode_jpeg(tf.io.encode_jpeg(img, quality=100)).shape
    TensorShape([4, 4, 3])
    """
    op = "DecodeJpeg"
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"ratio = {ratio!r}; allowed: 1, 2, 4, 8", op)
    if try_recover_truncated or acceptable_fraction != 1:
        raise InvalidArgumentError("try_recover_truncated/acceptable_fraction: tapeflow decodes whole JPEG files "
                                   "only; allowed: False and 1", op)
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise InvalidArgumentError(f"dct_method = {dct_method!r}; allowed: '', 'INTEGER_FAST', 'INTEGER_ACCURATE'",
                                   op)
    if not isinstance(fancy_upscaling, bool):
        raise TypeError(f"fancy_upscaling must be a bool [Op:{op}]")
    if channels == 2:
        raise InvalidArgumentError("channels = 2; allowed: 0, 1, 3 for JPEG", op)
    out = _decode(contents, channels, _dt.uint8, op, ("JPEG",))
    if ratio != 1:
        arr = out.numpy()
        h, w = -(-arr.shape[0] // ratio), -(-arr.shape[1] // ratio)
        Image = _pil(op)
        mode = _MODES[arr.shape[2]]
        img = Image.fromarray(arr[..., 0] if arr.shape[2] == 1 else arr, mode).resize((w, h), Image.BOX)
        small = np.asarray(img, np.uint8)
        out = constant(small.reshape(h, w, arr.shape[2]), _dt.uint8)
    return out


def decode_image(contents, channels=None, dtype=_dt.uint8, name=None, expand_animations=True) -> Tensor:
    """A PNG, JPEG, GIF or BMP image as ``[height, width, channels]`` (GIF: ``[frames, h, w, 3]`` when
    ``expand_animations``); a float ``dtype`` scales to [0, 1].

    >>> import tapeflow as tf
    >>> png = tf.io.encode_png(tf.zeros([2, 3, 1], tf.uint8))
    >>> tf.io.decode_image(png).shape
    TensorShape([2, 3, 1])
    """
    op = "DecodeImage"
    dt = _dtype_of(dtype, ("uint8", "float16", "float32", "float64"), op)
    Image = _pil(op)
    data = _scalar_string(contents, op, "contents")
    try:
        img = Image.open(_pyio.BytesIO(data))
        fmt = img.format
    except Exception as e:  # noqa: BLE001 - Pillow raises several kinds for bad data
        raise InvalidArgumentError(f"Unknown image file format. One of JPEG, PNG, GIF, BMP required. ({e})", op) \
            from None
    ch = 0 if channels is None else channels
    if fmt == "GIF":
        frames = []
        for i in range(getattr(img, "n_frames", 1)):
            img.seek(i)
            frames.append(np.asarray(img.convert("RGB"), np.uint8))
        arr = np.stack(frames) if expand_animations else frames[0]
        out = constant(arr, _dt.uint8)
    elif fmt == "BMP":
        out = _decode(data, ch, _dt.uint8, op)
    elif fmt == "JPEG":
        out = decode_jpeg(data, ch)
    elif fmt == "PNG":
        out = _decode(data, ch, _dt.uint8, op)
    else:
        raise InvalidArgumentError(f"Unknown image file format {fmt}. One of JPEG, PNG, GIF, BMP required.", op)
    if dt.is_floating:
        from ..ops import cast, multiply

        return multiply(cast(out, dt), constant(1.0 / 255.0, dt))
    return out


def _image_array(image, op, allowed=("uint8",)):
    t = to_tensor(image, op)
    if t.dtype.name not in allowed:
        raise InvalidArgumentError(f"image has dtype {t.dtype.name}; allowed: {', '.join(allowed)}", op)
    if t.shape.rank != 3 or t.shape[2] not in (1, 2, 3, 4):
        raise InvalidArgumentError(f"image must be [height, width, channels] with 1-4 channels, got shape "
                                   f"{tuple(t.shape)}", op)
    return np.asarray(t.numpy())


def encode_png(image, compression=-1, name=None) -> Tensor:
    """A ``[height, width, channels]`` uint8 image (1-4 channels) as PNG bytes; ``compression`` -1..9.

    >>> import tapeflow as tf
    >>> tf.io.encode_png(tf.zeros([1, 1, 3], tf.uint8)).numpy()[:4]
    b'\\x89PNG'
    """
    op = "EncodePng"
    if isinstance(compression, bool) or not isinstance(compression, int) or not -1 <= compression <= 9:
        raise InvalidArgumentError(f"compression = {compression!r}; allowed: an int in [-1, 9]", op)
    Image = _pil(op)
    arr = _image_array(image, op)
    img = Image.fromarray(arr[..., 0] if arr.shape[2] == 1 else arr, _MODES[arr.shape[2]])
    buf = _pyio.BytesIO()
    img.save(buf, "PNG", compress_level=6 if compression == -1 else compression)
    return _string_tensor(buf.getvalue())


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False, chroma_downsampling=True,
                density_unit="in", x_density=300, y_density=300, xmp_metadata="", name=None) -> Tensor:
    """A ``[height, width, 1 or 3]`` uint8 image as JPEG bytes (``quality`` 0-100).

    >>> import tapeflow as tf
    >>> tf.io.encode_jpeg(tf.zeros([2, 2, 3], tf.uint8)).numpy()[:2]
    b'\\xff\\xd8'
    """
    op = "EncodeJpeg"
    Image = _pil(op)
    arr = _image_array(image, op)
    if format not in ("", "grayscale", "rgb"):
        raise InvalidArgumentError(f"format = {format!r}; allowed: '', 'grayscale', 'rgb'", op)
    if isinstance(quality, bool) or not isinstance(quality, int) or not 0 <= quality <= 100:
        raise InvalidArgumentError(f"quality = {quality!r}; allowed: an int in [0, 100]", op)
    if density_unit not in ("in", "cm"):
        raise InvalidArgumentError(f"density_unit = {density_unit!r}; allowed: 'in', 'cm'", op)
    if arr.shape[2] not in (1, 3):
        raise InvalidArgumentError(f"image has {arr.shape[2]} channels; allowed: 1 or 3", op)
    mode = {"": _MODES[arr.shape[2]], "grayscale": "L", "rgb": "RGB"}[format]
    img = Image.fromarray(arr[..., 0] if arr.shape[2] == 1 else arr, _MODES[arr.shape[2]]).convert(mode)
    buf = _pyio.BytesIO()
    dpi = (x_density, y_density) if density_unit == "in" else (x_density * 2.54, y_density * 2.54)
    kw = {"quality": quality, "progressive": progressive, "optimize": optimize_size, "dpi": dpi,
          "subsampling": 2 if chroma_downsampling else 0}
    if xmp_metadata:
        kw["xmp"] = xmp_metadata.encode() if isinstance(xmp_metadata, str) else xmp_metadata
    img.save(buf, "JPEG", **kw)
    return _string_tensor(buf.getvalue())

