"""String ops (``tf.strings``): a documented host computation over byte strings.

String tensors (``tf.string``) hold NumPy object arrays of ``bytes`` in host memory on every
device, as TensorFlow's do: a string op on a tensor placed on an OpenCL or CUDA device runs on
the host (no string buffer is ever copied to an accelerator), and its numeric outputs (lengths,
numbers, hash buckets) are placed where the op runs.  Each op is a runner primitive, so it
traces inside ``tf.function`` like any other (a symbolic string tensor has a shape and no value);
none has a gradient.  Python over ``bytes`` does the work: the rule that NumPy is never the math
of an op concerns numeric ops.

The generic ops also take strings: ``tf.constant``, ``convert_to_tensor``, ``reshape``,
``identity``, ``gather``, ``concat``, ``stack``, ``unstack``, ``transpose``, ``tile``,
``equal``/``not_equal``, ``add`` (``+``: concatenation, as TensorFlow's), ``where`` (select), ``boolean_mask``,
``size``/``shape``/``rank``.

>>> import tapeflow as tf
>>> tf.strings.upper(tf.constant(["ab", "c"])).numpy().tolist()
[b'AB', b'C']
>>> tf.strings.split("a b  c").numpy().tolist()
[b'a', b'b', b'c']
"""
from __future__ import annotations

import re

import numpy as np

from .. import dtypes as _dt
from ..dispatch import int_arg, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import PRIMITIVES, primitive, run_tensors
from ..tensor import Tensor, from_numpy

_S = (_dt.string,)
_NONDIFF = "string op (no gradient)"


# ---- helpers ---------------------------------------------------------------------------------

def _str_input(x, op: str, what: str = "input") -> Tensor:
    t = to_tensor(x, op)
    if not t._dtype.is_string:
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: string", op)
    return t


def _text_arg(v, op: str, what: str) -> bytes:
    """A Python str/bytes attribute (separator, pattern, ...) as bytes; a TypeError for anything else."""
    if isinstance(v, Tensor) and v._dtype.is_string and not v._shape and v._arr is not None:
        v = v._arr[()]
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, bytes):
        return v
    raise TypeError(f"{what} must be a str or bytes, got {type(v).__name__} {v!r:.40}; allowed: a Python string "
                    f"[Op:{op}]")


def _strings(t: Tensor) -> np.ndarray:
    return t._host()


def _out_strings(arr, dev) -> Tensor:
    arr = np.asarray(arr, dtype=object)
    return from_numpy(arr, _dt.string, dev)


def _map(fn, arr: np.ndarray, otype=object) -> np.ndarray:
    out = np.empty(arr.shape, dtype=otype)
    flat, oflat = arr.reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat):
        oflat[i] = fn(v)
    return out


def _same(x, **attrs):
    return x._shape, x._dtype


def _string_primitive(name, tf_name, infer, **kw):
    return primitive(name, tf_name, infer=infer, dtypes=_S, **kw)


def _unit_arg(unit, op):
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise InvalidArgumentError(f"unit = {unit!r}; allowed: 'BYTE', 'UTF8_CHAR'", op)
    return unit


# ---- RaggedTensor: the result of split/bytes_split/unicode_decode on a vector ---------------------

# one class for tf.RaggedTensor and these ops' results: core/ragged.py
from ..ragged import RaggedTensor  # noqa: E402


def _ragged(values: Tensor, splits: Tensor):
    """A RaggedTensor of ``values`` cut by ``splits``; while tracing (symbolic tensors: nothing to validate on the
    host, the op made them consistent) its fields are set as they are, so split & co. trace in tf.function."""
    if values._h is None or splits._h is None:
        r = object.__new__(RaggedTensor)
        r._values, r._row_splits = values, splits
        return r
    return RaggedTensor(values, splits)


def _ragged_or_flat(rank: int, values: Tensor, splits: Tensor):
    return values if rank == 0 else _ragged(values, splits)


def _ragged_to_dense_infer(values, splits, *, default_value, width):
    n = splits._shape[0]
    return (None if n is None else n - 1, width) + tuple(values._shape[1:]), values._dtype


@primitive("ragged_to_dense", "RaggedTensorToTensor", infer=_ragged_to_dense_infer,
           internal="the rows of a ragged string/token result as a padded dense tensor, traced (TextVectorization)")
def _RAGGED_TO_DENSE(dev, values, splits, *, default_value, width):
    v = values._host()
    s = np.asarray(splits._host(), np.int64)
    n = len(s) - 1
    if width is None:
        width = int(max((s[i + 1] - s[i] for i in range(n)), default=0))
    dt = values._dtype
    out = np.empty((n, width) + v.shape[1:], dtype=object if dt.is_string else dt.np)
    out[...] = default_value
    for i in range(n):
        row = v[s[i]:s[i + 1]][:width]
        out[i, :len(row)] = row
    return from_numpy(out, dt, dev)


def ragged_to_dense(values, row_splits, default_value, width=None) -> Tensor:
    """Rows ``values[row_splits[i]:row_splits[i + 1]]`` padded with ``default_value`` to ``width`` (None: the
    longest row) or cut to it: what ``RaggedTensor.to_tensor`` gives, as one primitive that traces.

    >>> from tapeflow.core.ops.string_ops import ragged_to_dense
    >>> ragged_to_dense(["a", "b", "c"], [0, 2, 3], b"").numpy().tolist()
    [[b'a', b'b'], [b'c', b'']]
    """
    op = "RaggedTensorToTensor"
    v, sp = to_tensor(values, op), to_tensor(row_splits, op)
    if isinstance(default_value, str):
        default_value = default_value.encode("utf-8")
    w = None if width is None else int_arg(width, op, "width")
    return run_tensors(_RAGGED_TO_DENSE, (v, sp), {"default_value": default_value, "width": w})


def _ragged_infer(x, **attrs):
    n = x._shape[0] if x._shape else 0
    return [((None,), _dt.string), ((None if n is None else n + 1,), _dt.int64)]


def _ragged_out(pieces, dev, dtype=_dt.string):
    """(flat values, row splits) from a list of per-element lists."""
    splits = np.zeros(len(pieces) + 1, np.int64)
    flat = []
    for i, p in enumerate(pieces):
        flat.extend(p)
        splits[i + 1] = len(flat)
    vals = np.empty(len(flat), dtype=object) if dtype.is_string else np.asarray(flat, dtype.np).reshape(-1)
    if dtype.is_string:
        vals[:] = flat
    return from_numpy(vals, dtype, dev), from_numpy(splits, _dt.int64, dev)


def _check_rank01(t, op):
    if len(t._shape) > 1:
        raise InvalidArgumentError(f"input has rank {len(t._shape)} (shape {tuple(t._shape)}); allowed: a scalar or a "
                                   "vector", op)


# ---- split -------------------------------------------------------------------------------------

def _split_one(s: bytes, sep, maxsplit):
    if sep is None:
        return s.split(None, maxsplit) if maxsplit >= 0 else s.split()
    if not s:
        return []
    return s.split(sep, maxsplit)


@_string_primitive("string_split", "StringSplitV2", _ragged_infer)
def _string_split(dev, x, *, sep, maxsplit):
    arr = _strings(x).reshape(-1)
    return _ragged_out([_split_one(s, sep, maxsplit) for s in arr], dev)


@register("string_split", "StringSplitV2", nondiff=_NONDIFF)
def split(input, sep=None, maxsplit=-1, name=None):
    """Split each string at ``sep`` (None: runs of whitespace, empty pieces dropped), at most ``maxsplit`` times.

    A scalar gives a 1-D string tensor, a vector a :class:`RaggedTensor` (as TensorFlow).

    >>> import tapeflow as tf
    >>> tf.strings.split("a,b,,c", ",").numpy().tolist()
    [b'a', b'b', b'', b'c']
    >>> tf.strings.split(["a b", "c d e"]).to_list()
    [[b'a', b'b'], [b'c', b'd', b'e']]
    """
    x = _str_input(input, "StringSplitV2")
    _check_rank01(x, "StringSplitV2")
    sep_b = None if sep is None or sep in ("", b"") else _text_arg(sep, "StringSplitV2", "sep")
    m = int_arg(maxsplit, "StringSplitV2", "maxsplit")
    vals, splits = run_tensors(PRIMITIVES["string_split"], (x,), {"sep": sep_b, "maxsplit": m})
    return _ragged_or_flat(len(x._shape), vals, splits)


# ---- bytes_split, unicode_decode/encode -------------------------------------------------------------

@_string_primitive("string_bytes_split", "StringBytesSplit", _ragged_infer)
def _bytes_split(dev, x):
    return _ragged_out([[s[i:i + 1] for i in range(len(s))] for s in _strings(x).reshape(-1)], dev)


@register("string_bytes_split", "StringBytesSplit", nondiff=_NONDIFF)
def bytes_split(input, name=None):
    """Split each string into its bytes (a scalar gives a vector, a vector a :class:`RaggedTensor`).

    >>> import tapeflow as tf
    >>> tf.strings.bytes_split("abc").numpy().tolist()
    [b'a', b'b', b'c']
    """
    x = _str_input(input, "StringBytesSplit")
    _check_rank01(x, "StringBytesSplit")
    vals, splits = run_tensors(PRIMITIVES["string_bytes_split"], (x,))
    return _ragged_or_flat(len(x._shape), vals, splits)


_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _decode_infer(x, **attrs):
    n = x._shape[0] if x._shape else 0
    return [((None,), _dt.int32), ((None if n is None else n + 1,), _dt.int64)]


@_string_primitive("unicode_decode", "UnicodeDecode", _decode_infer)
def _unicode_decode(dev, x, *, input_encoding, errors, replacement_char):
    codec = _ENCODINGS[input_encoding]
    rows = []
    for s in _strings(x).reshape(-1):
        if errors == "strict":
            try:
                text = s.decode(codec)
            except UnicodeDecodeError as e:
                raise InvalidArgumentError(f"invalid {input_encoding} string {s!r:.60}: {e.reason}; allowed: valid "
                                           "text, or errors='replace'/'ignore'", "UnicodeDecode") from None
            rows.append([ord(c) for c in text])
        else:
            text = s.decode(codec, errors="replace" if errors == "replace" else "ignore")
            rows.append([replacement_char if c == "\ufffd" and errors == "replace" else ord(c) for c in text])
    return _ragged_out(rows, dev, _dt.int32)


@register("unicode_decode", "UnicodeDecode", nondiff=_NONDIFF)
def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533, replace_control_characters=False,
                   name=None):
    """The Unicode code points (int32) of each string, decoded from ``input_encoding``.

    A scalar gives a vector, a vector a :class:`RaggedTensor`; ``errors`` is 'strict', 'replace' or 'ignore'.

    >>> import tapeflow as tf
    >>> tf.strings.unicode_decode("hé", "UTF-8").numpy().tolist()
    [104, 233]
    """
    op = "UnicodeDecode"
    x = _str_input(input, op)
    _check_rank01(x, op)
    if input_encoding not in _ENCODINGS:
        raise InvalidArgumentError(f"input_encoding = {input_encoding!r}; allowed: {', '.join(_ENCODINGS)}", op)
    if errors not in ("strict", "replace", "ignore"):
        raise InvalidArgumentError(f"errors = {errors!r}; allowed: 'strict', 'replace', 'ignore'", op)
    rc = int_arg(replacement_char, op, "replacement_char")
    if replace_control_characters:
        raise InvalidArgumentError("replace_control_characters=True is not supported; allowed: False", op)
    vals, splits = run_tensors(PRIMITIVES["unicode_decode"], (x,), {"input_encoding": input_encoding,
                                                                    "errors": errors, "replacement_char": rc})
    return _ragged_or_flat(len(x._shape), vals, splits)


def _encode_infer(x, **attrs):
    return x._shape[:-1], _dt.string


@primitive("unicode_encode", "UnicodeEncode", infer=_encode_infer, dtypes=(_dt.int32, _dt.int64))
def _unicode_encode(dev, x, *, output_encoding):
    codec = _ENCODINGS[output_encoding]
    cps = np.asarray(x._host(), np.int64)
    rows = cps.reshape(int(np.prod(cps.shape[:-1], dtype=np.int64)), cps.shape[-1])
    out = np.empty(rows.shape[0], dtype=object)
    for i, row in enumerate(rows):
        try:
            out[i] = "".join(chr(int(c)) for c in row).encode(codec, errors="strict")
        except (ValueError, UnicodeEncodeError):
            raise InvalidArgumentError(f"code points {row.tolist()!r:.60} hold an invalid code point; allowed: "
                                       "0..0x10FFFF (no surrogates)", "UnicodeEncode") from None
    return _out_strings(out.reshape(cps.shape[:-1]), dev)


@register("unicode_encode", "UnicodeEncode", nondiff=_NONDIFF)
def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):
    """Encode the code points along the last axis (or each row of a :class:`RaggedTensor`) as strings.

    >>> import tapeflow as tf
    >>> tf.strings.unicode_encode([104, 233], "UTF-8").numpy()
    b'h\\xc3\\xa9'
    """
    op = "UnicodeEncode"
    if output_encoding not in _ENCODINGS:
        raise InvalidArgumentError(f"output_encoding = {output_encoding!r}; allowed: {', '.join(_ENCODINGS)}", op)
    if isinstance(input, RaggedTensor):
        rows = [unicode_encode(r, output_encoding) for r in input]
        out = np.empty(len(rows), dtype=object)
        out[:] = [r._host()[()] for r in rows]
        return from_numpy(out, _dt.string, input.flat_values._dev)
    x = to_tensor(input, op)
    if x._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"input has dtype {x._dtype.name}; allowed: int32, int64 code points", op)
    if not x._shape:
        raise InvalidArgumentError("input is a scalar; allowed: code points along a last axis (rank >= 1)", op)
    return run_tensors(PRIMITIVES["unicode_encode"], (x,), {"output_encoding": output_encoding})


# ---- element-wise ------------------------------------------------------------------------------------

@primitive("string_join", "StringJoin", infer=lambda *xs, separator: (_bshape(xs), _dt.string), dtypes=_S,
           same_dtype=True)
def _string_join(dev, *xs, separator):
    arrs = np.broadcast_arrays(*[_strings(x) for x in xs])
    out = np.empty(arrs[0].shape, dtype=object)
    flats = [a.reshape(-1) for a in arrs]
    of = out.reshape(-1)
    for i in range(of.size):
        of[i] = separator.join(f[i] for f in flats)
    return _out_strings(out, dev)


def _bshape(xs):
    from ._ew import broadcast_shape

    s = ()
    for x in xs:
        s = broadcast_shape(s, x._shape, "StringJoin")
    return s


@register("string_join", "StringJoin", nondiff=_NONDIFF)
def join(inputs, separator="", name=None):
    """Join the strings of ``inputs`` (a list of tensors of one shape, or scalars) element-wise with ``separator``.

    >>> import tapeflow as tf
    >>> tf.strings.join(["a", ["x", "y"]], separator="-").numpy().tolist()
    [b'a-x', b'a-y']
    """
    if isinstance(inputs, (Tensor, str, bytes)) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"inputs must be a non-empty list of string tensors, got {type(inputs).__name__} "
                        "[Op:StringJoin]")
    xs = tuple(_str_input(v, "StringJoin", f"inputs[{i}]") for i, v in enumerate(inputs))
    shapes = [x._shape for x in xs if x._shape]
    for sh in shapes[1:]:
        if len(sh) != len(shapes[0]) or any(a is not None and b is not None and a != b for a, b in zip(sh, shapes[0])):
            raise InvalidArgumentError(f"Input shapes do not match: {list(shapes[0])} vs. {list(sh)}; allowed: one "
                                       "shape for every input that is not a scalar", "StringJoin")
    return run_tensors(PRIMITIVES["string_join"], xs, {"separator": _text_arg(separator, "StringJoin", "separator")})


def _utf8_len(s: bytes) -> int:
    return sum(1 for b in s if b & 0xC0 != 0x80)


@_string_primitive("string_length", "StringLength", lambda x, *, unit: (x._shape, _dt.int32))
def _string_length(dev, x, *, unit):
    f = len if unit == "BYTE" else _utf8_len
    return from_numpy(_map(f, _strings(x), np.int32), _dt.int32, dev)


@register("string_length", "StringLength", nondiff=_NONDIFF)
def length(input, unit="BYTE", name=None):
    """The length of each string in bytes (``unit='BYTE'``) or in UTF-8 characters (``'UTF8_CHAR'``), int32.

    >>> import tapeflow as tf
    >>> tf.strings.length(["hé", ""]).numpy().tolist(), int(tf.strings.length("hé", unit="UTF8_CHAR"))
    ([3, 0], 2)
    """
    x = _str_input(input, "StringLength")
    return run_tensors(PRIMITIVES["string_length"], (x,), {"unit": _unit_arg(unit, "StringLength")})


def _substr_infer(x, pos, ln, *, unit):
    from ._ew import broadcast_shape

    return broadcast_shape(x._shape, broadcast_shape(pos._shape, ln._shape, "Substr"), "Substr"), _dt.string


@_string_primitive("substr", "Substr", _substr_infer)
def _substr(dev, x, pos, ln, *, unit):
    s, p, n = np.broadcast_arrays(_strings(x), np.asarray(pos._host(), np.int64), np.asarray(ln._host(), np.int64))
    out = np.empty(s.shape, dtype=object)
    sf, pf, nf, of = s.reshape(-1), p.reshape(-1), n.reshape(-1), out.reshape(-1)
    for i in range(of.size):
        v = sf[i] if unit == "BYTE" else sf[i].decode("utf-8", errors="replace")
        k, m = int(pf[i]), int(nf[i])
        if m < 0:
            raise InvalidArgumentError(f"len {m} is negative at index {i}; allowed: len >= 0", "Substr")
        if not -len(v) <= k <= len(v):
            raise InvalidArgumentError(f"pos {k} out of range for string {sf[i]!r:.60} at index {i}", "Substr")
        if k < 0:
            k += len(v)
        r = v[k:k + m]
        of[i] = r if unit == "BYTE" else r.encode("utf-8")
    return _out_strings(out, dev)


@register("substr", "Substr", nondiff=_NONDIFF)
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 (TensorFlow's argument name)
    """``len`` bytes (or UTF-8 characters) of each string from ``pos`` (negative: from the end).

    >>> import tapeflow as tf
    >>> tf.strings.substr(["hello", "hi"], 1, 3).numpy().tolist()
    [b'ell', b'i']
    """
    op = "Substr"
    x = _str_input(input, op)
    p, n = to_tensor(pos, op), to_tensor(len, op)
    for what, t in (("pos", p), ("len", n)):
        if t._dtype not in (_dt.int32, _dt.int64):
            raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: int32, int64", op)
    if p._dtype is not n._dtype:
        raise InvalidArgumentError(f"pos is {p._dtype.name} but len is {n._dtype.name}; allowed: one integer dtype", op)
    _substr_infer(x, p, n, unit=None)
    return run_tensors(PRIMITIVES["substr"], (x, p, n), {"unit": _unit_arg(unit, op)})


def _unary_string_op(name, tf_name, fn):
    """A primitive mapping ``fn(bytes, **attrs) -> bytes`` over a string tensor."""
    def impl(dev, x, **attrs):
        return _out_strings(_map(lambda s: fn(s, **attrs), _strings(x)), dev)

    impl.__name__ = impl.__qualname__ = f"_{name}"
    return _string_primitive(name, tf_name, _same)(impl)


def _lower(s, encoding=""):
    return s.decode("utf-8").lower().encode("utf-8") if encoding else s.lower()


def _upper(s, encoding=""):
    return s.decode("utf-8").upper().encode("utf-8") if encoding else s.upper()


def _encoding_arg(encoding, op):
    if encoding not in ("", "utf-8"):
        raise InvalidArgumentError(f"encoding = {encoding!r}; allowed: '' (ASCII letters only), 'utf-8'", op)
    return {"encoding": encoding} if encoding else {}


_LOWER = _unary_string_op("string_lower", "StringLower", _lower)
_UPPER = _unary_string_op("string_upper", "StringUpper", _upper)
_STRIP = _unary_string_op("string_strip", "StringStrip", lambda s: s.strip(b" \t\n\r\x0b\x0c"))


def lower(input, encoding="", name=None):
    """Lower-case each string (ASCII letters; ``encoding='utf-8'``: every Unicode letter).

    >>> import tapeflow as tf
    >>> tf.strings.lower("HeLLo").numpy()
    b'hello'
    """
    return run_tensors(_LOWER, (_str_input(input, "StringLower"),), _encoding_arg(encoding, "StringLower") or None)


def upper(input, encoding="", name=None):
    """Upper-case each string (ASCII letters; ``encoding='utf-8'``: every Unicode letter).

    >>> import tapeflow as tf
    >>> tf.strings.upper("HeLLo").numpy()
    b'HELLO'
    """
    return run_tensors(_UPPER, (_str_input(input, "StringUpper"),), _encoding_arg(encoding, "StringUpper") or None)


def strip(input, name=None):
    """Remove leading and trailing ASCII whitespace from each string.

    >>> import tapeflow as tf
    >>> tf.strings.strip(["  a b \\n"]).numpy().tolist()
    [b'a b']
    """
    return run_tensors(_STRIP, (_str_input(input, "StringStrip"),))


register("string_lower", "StringLower", nondiff=_NONDIFF)(lower)
register("string_upper", "StringUpper", nondiff=_NONDIFF)(upper)
register("string_strip", "StringStrip", nondiff=_NONDIFF)(strip)


# ---- regular expressions (RE2 syntax, the common subset Python's re shares) ------------------------------

def _regex(pattern, op):
    p = _text_arg(pattern, op, "pattern")
    try:
        return re.compile(p, re.DOTALL if False else 0)
    except re.error as e:
        raise InvalidArgumentError(f"invalid pattern {pattern!r}: {e}", op) from None


def _rewrite(rewrite: bytes) -> bytes:
    """RE2's rewrite (\\0 .. \\9, \\\\) as Python's replacement template."""
    return re.sub(rb"\\(\d)", lambda m: b"\\g<" + m.group(1) + b">", rewrite)


@_string_primitive("regex_replace", "StaticRegexReplace", _same)
def _regex_replace(dev, x, *, pattern, rewrite, replace_global):
    rx = re.compile(pattern)
    count = 0 if replace_global else 1
    return _out_strings(_map(lambda s: rx.sub(rewrite, s, count=count), _strings(x)), dev)


@register("regex_replace", "StaticRegexReplace", nondiff=_NONDIFF)
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replace the matches of ``pattern`` in each string by ``rewrite`` (``\\1`` a group, ``\\0`` the match).

    >>> import tapeflow as tf
    >>> tf.strings.regex_replace(["a1b22"], r"\\d+", "#").numpy().tolist()
    [b'a#b#']
    """
    op = "StaticRegexReplace"
    x = _str_input(input, op)
    rx = _regex(pattern, op)
    rw = _rewrite(_text_arg(rewrite, op, "rewrite"))
    try:
        rx.sub(rw, b"")
    except (re.error, IndexError) as e:
        raise InvalidArgumentError(f"invalid rewrite {rewrite!r}: {e}", op) from None
    return run_tensors(PRIMITIVES["regex_replace"], (x,), {"pattern": rx.pattern, "rewrite": rw,
                                                          "replace_global": bool(replace_global)})


@_string_primitive("regex_full_match", "StaticRegexFullMatch", lambda x, *, pattern: (x._shape, _dt.bool_))
def _regex_full_match(dev, x, *, pattern):
    rx = re.compile(pattern)
    return from_numpy(_map(lambda s: rx.fullmatch(s) is not None, _strings(x), np.bool_), _dt.bool_, dev)


@register("regex_full_match", "StaticRegexFullMatch", nondiff=_NONDIFF)
def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches ``pattern`` (bool).

    >>> import tapeflow as tf
    >>> tf.strings.regex_full_match(["ab1", "ab"], r"[a-z]+\\d").numpy().tolist()
    [True, False]
    """
    op = "StaticRegexFullMatch"
    x = _str_input(input, op)
    return run_tensors(PRIMITIVES["regex_full_match"], (x,), {"pattern": _regex(pattern, op).pattern})


# ---- numbers <-> strings ---------------------------------------------------------------------------

_NUMBER_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.int64)


def _parse(s: bytes, dtype):
    try:
        text = s.decode("ascii").strip()
        if dtype.is_integer:
            v = int(text, 10)
            if not dtype.min <= v <= dtype.max:
                raise ValueError
            return v
        if text.lower().replace("+", "").replace("-", "") in ("inf", "infinity", "nan") or \
                re.fullmatch(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)", text):
            return float(text)
        raise ValueError
    except (ValueError, UnicodeDecodeError):
        text = s.decode("utf-8", "replace")
        raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {text}",
                                   "StringToNumber") from None


@_string_primitive("string_to_number", "StringToNumber", lambda x, *, out_type: (x._shape, out_type))
def _to_number(dev, x, *, out_type):
    return from_numpy(_map(lambda s: _parse(s, out_type), _strings(x), out_type.np), out_type, dev)


@register("string_to_number", "StringToNumber", nondiff=_NONDIFF)
def to_number(input, out_type=_dt.float32, name=None):
    """Parse each string as a number of ``out_type`` (float32, float64, int32, int64).

    >>> import tapeflow as tf
    >>> tf.strings.to_number(["1.5", "-2"]).numpy().tolist()
    [1.5, -2.0]
    """
    from ..dispatch import dtype_arg

    op = "StringToNumber"
    x = _str_input(input, op)
    dt = dtype_arg(out_type, op, "out_type")
    if dt not in _NUMBER_TYPES:
        raise InvalidArgumentError(f"out_type = {dt.name}; allowed: float32, float64, int32, int64", op)
    return run_tensors(PRIMITIVES["string_to_number"], (x,), {"out_type": dt})


def _as_string_one(v, fmt, is_bool, is_float):
    if is_bool:
        return b"true" if v else b"false"
    if is_float:
        f = float(v)
        if np.isnan(f):
            return b"nan"
        if np.isinf(f):
            return b"inf" if f > 0 else b"-inf"
        return (fmt % f).encode("ascii")
    return (fmt % int(v)).encode("ascii")


@primitive("as_string", "AsString", infer=lambda x, **a: (x._shape, _dt.string),
           dtypes=_dt.NUMERIC + (_dt.bool_, _dt.string))
def _as_string(dev, x, *, fmt):
    dt = x._dtype
    if dt.is_string:
        return _out_strings(_strings(x), dev)
    arr = np.asarray(x._host())
    if dt.is_half:
        arr = arr.astype(np.float32)
    return _out_strings(_map(lambda v: _as_string_one(v, fmt, dt.is_bool, dt.is_floating), arr), dev)


@register("as_string", "AsString", nondiff=_NONDIFF)
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Each number as a string: floats as ``%f`` (``precision`` digits, ``scientific`` %e, ``shortest`` %g),
    integers as ``%d``, bools as true/false, padded to ``width`` with ``fill``.

    >>> import tapeflow as tf
    >>> tf.strings.as_string([1.5, 2.0]).numpy().tolist(), tf.strings.as_string(7, width=3, fill="0").numpy()
    ([b'1.500000', b'2.000000'], b'007')
    """
    op = "AsString"
    x = to_tensor(input, op)
    p, w = int_arg(precision, op, "precision"), int_arg(width, op, "width")
    if scientific and shortest:
        raise InvalidArgumentError("scientific and shortest are both set; allowed: at most one", op)
    if not isinstance(fill, str) or len(fill) > 1 or (fill and fill not in " 0"):
        raise InvalidArgumentError(f"fill = {fill!r}; allowed: '', ' ' or '0'", op)
    if x._dtype.is_integer and p > -1:
        raise InvalidArgumentError("precision is set for an integer input; allowed: precision for floats only", op)
    if x._dtype.is_integer and (scientific or shortest):
        raise InvalidArgumentError("scientific/shortest are set for an integer input; allowed: for floats only", op)
    fmt = "%" + ("0" if fill == "0" else "") + (str(w) if w > -1 else "")
    if x._dtype.is_floating:
        fmt += ("." + str(p) if p > -1 else "") + ("e" if scientific else "g" if shortest else "f")
    else:
        fmt += "d"
    return run_tensors(PRIMITIVES["as_string"], (x,), {"fmt": fmt})


# ---- format, reduce_join, ngrams, hashing ------------------------------------------------------------

def _format_value(arr: np.ndarray, summarize: int) -> str:
    def one(v):
        if isinstance(v, bytes):
            return '"' + v.decode("utf-8", "replace") + '"'
        if isinstance(v, (bool, np.bool_)):
            return "1" if v else "0"
        if isinstance(v, (float, np.floating)):
            return f"{float(v):g}"
        return str(v)

    def rec(a, depth):
        if a.ndim == 0:
            return one(a[()])
        n = a.shape[0]
        idx = list(range(n)) if summarize < 0 or n <= 2 * summarize else \
            list(range(summarize)) + [None] + list(range(n - summarize, n))
        parts = ["..." if i is None else rec(a[i, ...], depth + 1) for i in idx]
        sep = " " if a.ndim == 1 else "\n" + " " * (depth + 1)
        return "[" + sep.join(parts) + "]"

    return rec(arr, 0)


@primitive("string_format", "StringFormat", infer=lambda *xs, **a: ((), _dt.string))
def _string_format(dev, *xs, template, placeholder, summarize):
    pieces = template.split(placeholder)
    out = pieces[0]
    for x, rest in zip(xs, pieces[1:]):
        out += _format_value(np.asarray(x._host()), summarize) + rest
    return _out_strings(np.asarray(out.encode("utf-8"), dtype=object), dev)


@register("string_format", "StringFormat", nondiff=_NONDIFF)
def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001 (TensorFlow's name)
    """A scalar string: ``template`` with each ``placeholder`` replaced by a tensor printed as TensorFlow
    prints it (strings quoted, at most ``summarize`` entries from each end of an axis).

    >>> import tapeflow as tf
    >>> tf.strings.format("x={} y={}", (tf.constant("a"), tf.constant([1, 2]))).numpy()
    b'x="a" y=[1 2]'
    """
    op = "StringFormat"
    if not isinstance(template, str) or not isinstance(placeholder, str) or not placeholder:
        raise TypeError(f"template and placeholder must be str (placeholder non-empty) [Op:{op}]")
    xs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    xs = tuple(to_tensor(v, op) for v in xs)
    n = template.count(placeholder)
    if n != len(xs):
        raise InvalidArgumentError(f"the template has {n} placeholders but {len(xs)} inputs were given; allowed: "
                                   "one input per placeholder", op)
    return run_tensors(PRIMITIVES["string_format"], xs, {"template": template, "placeholder": placeholder,
                                                         "summarize": int_arg(summarize, op, "summarize")})


def _reduce_join_infer(x, *, axis, keepdims, separator):
    return tuple(1 if i in axis else d for i, d in enumerate(x._shape) if keepdims or i not in axis), _dt.string


@_string_primitive("reduce_join", "ReduceJoin", _reduce_join_infer)
def _reduce_join(dev, x, *, axis, keepdims, separator):
    arr = _strings(x)
    keep = [i for i in range(arr.ndim) if i not in axis]
    moved = np.transpose(arr, keep + list(axis))
    lead = moved.shape[:len(keep)]
    flat = moved.reshape((int(np.prod(lead, dtype=np.int64)), -1))
    out = np.empty(flat.shape[0], dtype=object)
    for i in range(flat.shape[0]):
        out[i] = separator.join(flat[i])
    out = out.reshape(lead)
    if keepdims:
        out = out.reshape(tuple(1 if i in axis else d for i, d in enumerate(arr.shape)))
    return _out_strings(out, dev)


@register("reduce_join", "ReduceJoin", nondiff=_NONDIFF)
def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Join the strings along ``axis`` (None: all of them) with ``separator``.

    >>> import tapeflow as tf
    >>> tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-").numpy().tolist()
    [b'a-b', b'c-d']
    """
    from ..dispatch import normalize_axes

    op = "ReduceJoin"
    x = _str_input(inputs, op)
    axes = normalize_axes(axis, len(x._shape), op)
    return run_tensors(PRIMITIVES["reduce_join"], (x,), {"axis": tuple(axes), "keepdims": bool(keepdims),
                                                         "separator": _text_arg(separator, op, "separator")})


def _ngrams_of(row, widths, sep, left, right, pad_width, preserve_short):
    out = []
    row = list(row)
    for w in widths:
        pw = (w - 1 if pad_width is None or pad_width < 0 else min(pad_width, w - 1)) if left is not None else 0
        seq = [left] * pw + row + [right] * pw if left is not None else row
        grams = [sep.join(seq[i:i + w]) for i in range(len(seq) - w + 1)]
        out.extend(grams)
    if preserve_short and not out and row:
        out.append(sep.join(row))
    return out


def _ngram_count(n, widths, padded, pad_width, preserve_short):
    total = 0
    for w in widths:
        pw = (w - 1 if pad_width is None or pad_width < 0 else min(pad_width, w - 1)) if padded else 0
        total += max(n + 2 * pw - w + 1, 0)
    return total if total or not preserve_short or not n else 1


def _ngrams_infer(x, *, widths, sep, left, right, pad_width, preserve_short):
    n = x._shape[-1]
    m = None if n is None else _ngram_count(n, widths, left is not None, pad_width, preserve_short)
    return x._shape[:-1] + (m,), _dt.string


@_string_primitive("string_ngrams", "StringNGrams", _ngrams_infer)
def _string_ngrams(dev, x, *, widths, sep, left, right, pad_width, preserve_short):
    arr = _strings(x)
    rows = arr.reshape(-1, arr.shape[-1])
    m = _ngram_count(arr.shape[-1], widths, left is not None, pad_width, preserve_short)
    out = np.empty((rows.shape[0], m), dtype=object)
    for i, r in enumerate(rows):
        out[i, :] = _ngrams_of(r, widths, sep, left, right, pad_width, preserve_short)
    return _out_strings(out.reshape(arr.shape[:-1] + (m,)), dev)


@register("string_ngrams", "StringNGrams", nondiff=_NONDIFF)
def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None, preserve_short_sequences=False,
           name=None):
    """The n-grams of width ``ngram_width`` (an int or several) along the last axis, joined by ``separator``.

    ``pad_values`` (a string or a (left, right) pair) pads each sequence with ``padding_width`` (default
    width - 1) values on both sides.  A :class:`RaggedTensor` gives a :class:`RaggedTensor`.

    >>> import tapeflow as tf
    >>> tf.strings.ngrams(["a", "b", "c"], 2).numpy().tolist()
    [b'a b', b'b c']
    """
    op = "StringNGrams"
    widths = (ngram_width,) if not isinstance(ngram_width, (list, tuple)) else tuple(ngram_width)
    widths = tuple(int_arg(w, op, "ngram_width") for w in widths)
    if not widths or any(w < 1 for w in widths):
        raise InvalidArgumentError(f"ngram_width = {ngram_width}; allowed: integers >= 1", op)
    if pad_values is None:
        left = right = None
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2:
            raise InvalidArgumentError(f"pad_values = {pad_values!r}; allowed: a string or a (left, right) pair", op)
        left, right = (_text_arg(v, op, "pad_values") for v in pad_values)
    else:
        left = right = _text_arg(pad_values, op, "pad_values")
    pw = None if padding_width is None else int_arg(padding_width, op, "padding_width")
    if pw is not None and pw == 0:
        raise InvalidArgumentError("padding_width = 0; allowed: > 0 or -1 (width - 1)", op)
    attrs = {"widths": widths, "sep": _text_arg(separator, op, "separator"), "left": left, "right": right,
             "pad_width": pw, "preserve_short": bool(preserve_short_sequences)}
    if isinstance(data, RaggedTensor):
        rows = [_ngrams_of(r.numpy().tolist(), widths, attrs["sep"], left, right, pw, attrs["preserve_short"])
                for r in data]
        vals, splits = _ragged_out(rows, data.flat_values._dev)
        return RaggedTensor(vals, splits)
    x = _str_input(data, op, "data")
    if not x._shape:
        raise InvalidArgumentError("data is a scalar; allowed: a tensor of rank >= 1 (n-grams along its last axis)", op)
    return run_tensors(PRIMITIVES["string_ngrams"], (x,), attrs)


_M64 = (1 << 64) - 1
_K0, _K1, _K2 = 0xc3a5c85c97cb3127, 0xb492b66fbe98f273, 0x9ae16a3b2f90404f


def _rot(v, s):
    return ((v >> s) | (v << (64 - s))) & _M64 if s else v


def _f64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _f32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _smix(v):
    return v ^ (v >> 47)


def _h16(u, v, mul):
    a = ((u ^ v) * mul) & _M64
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M64
    b ^= b >> 47
    return (b * mul) & _M64


def _h0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_f64(s, 0) + _K2) & _M64
        b = _f64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M64
        d = ((_rot(a, 25) + b) * mul) & _M64
        return _h16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _h16((n + (_f32(s, 0) << 3)) & _M64, _f32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_smix(((y * _K2) ^ (z * _K0)) & _M64) * _K2) & _M64
    return _K2


def _h17to32(s, n):
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K1) & _M64
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M64
    d = (_f64(s, n - 16) * _K2) & _M64
    return _h16((_rot((a + b) & _M64, 43) + _rot(c, 30) + d) & _M64, (a + _rot((b + _K2) & _M64, 18) + c) & _M64, mul)


def _h33to64(s, n):
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K2) & _M64
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M64
    d = (_f64(s, n - 16) * _K2) & _M64
    y = (_rot((a + b) & _M64, 43) + _rot(c, 30) + d) & _M64
    z = _h16(y, (a + _rot((b + _K2) & _M64, 18) + c) & _M64, mul)
    e = (_f64(s, 16) * mul) & _M64
    f = _f64(s, 24)
    g = ((y + _f64(s, n - 32)) * mul) & _M64
    h = ((z + _f64(s, n - 24)) * mul) & _M64
    return _h16((_rot((e + f) & _M64, 43) + _rot(g, 30) + h) & _M64, (e + _rot((f + a) & _M64, 18) + g) & _M64, mul)


def _weak32(s, i, a, b):
    w, x, y, z = _f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24)
    a = (a + w) & _M64
    b = _rot((b + a + z) & _M64, 21)
    c = a
    a = (a + x + y) & _M64
    b = (b + _rot(a, 44)) & _M64
    return (a + z) & _M64, (b + c) & _M64


def fingerprint64(s: bytes) -> int:
    """FarmHash's Fingerprint64 of ``s`` (farmhashna::Hash64), the hash TensorFlow buckets strings with.

    >>> from tapeflow.core.ops.string_ops import fingerprint64
    >>> fingerprint64(b"") == 0x9ae16a3b2f90404f
    True
    """
    n = len(s)
    if n <= 16:
        return _h0to16(s, n)
    if n <= 32:
        return _h17to32(s, n)
    if n <= 64:
        return _h33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M64
    z = (_smix((y * _K2 + 113) & _M64) * _K2) & _M64
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _f64(s, 0)) & _M64
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M64, 37) * _K1) & _M64
        y = (_rot((y + v1 + _f64(s, i + 48)) & _M64, 42) * _K1) & _M64
        x ^= w1
        y = (y + v0 + _f64(s, i + 40)) & _M64
        z = (_rot((z + w0) & _M64, 33) * _K1) & _M64
        v0, v1 = _weak32(s, i, (v1 * _K1) & _M64, (x + w0) & _M64)
        w0, w1 = _weak32(s, i + 32, (z + w1) & _M64, (y + _f64(s, i + 16)) & _M64)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xff) << 1)
    i = last64
    w0 = (w0 + ((n - 1) & 63)) & _M64
    v0 = (v0 + w0) & _M64
    w0 = (w0 + v0) & _M64
    x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M64, 37) * mul) & _M64
    y = (_rot((y + v1 + _f64(s, i + 48)) & _M64, 42) * mul) & _M64
    x ^= (w1 * 9) & _M64
    y = (y + v0 * 9 + _f64(s, i + 40)) & _M64
    z = (_rot((z + w0) & _M64, 33) * mul) & _M64
    v0, v1 = _weak32(s, i, (v1 * mul) & _M64, (x + w0) & _M64)
    w0, w1 = _weak32(s, i + 32, (z + w1) & _M64, (y + _f64(s, i + 16)) & _M64)
    z, x = x, z
    return _h16((_h16(v0, w0, mul) + _smix(y) * _K0 + z) & _M64, (_h16(v1, w1, mul) + x) & _M64, mul)


@_string_primitive("string_to_hash_bucket_fast", "StringToHashBucketFast",
                   lambda x, *, num_buckets: (x._shape, _dt.int64))
def _hash_bucket(dev, x, *, num_buckets):
    return from_numpy(_map(lambda s: fingerprint64(s) % num_buckets, _strings(x), np.int64), _dt.int64, dev)


@register("string_to_hash_bucket_fast", "StringToHashBucketFast", nondiff=_NONDIFF)
def to_hash_bucket_fast(input, num_buckets, name=None):
    """Each string's bucket in [0, num_buckets): FarmHash Fingerprint64 modulo ``num_buckets`` (int64), the
    values TensorFlow gives.

    >>> import tapeflow as tf
    >>> tf.strings.to_hash_bucket_fast(["hello world"], 1000000007).numpy().tolist()
    [253301321]
    """
    op = "StringToHashBucketFast"
    x = _str_input(input, op)
    nb = int_arg(num_buckets, op, "num_buckets")
    if nb < 1:
        raise InvalidArgumentError(f"num_buckets = {nb}; allowed: >= 1", op)
    return run_tensors(PRIMITIVES["string_to_hash_bucket_fast"], (x,), {"num_buckets": nb})


# ---- vocabulary lookups (Keras' StringLookup, IntegerLookup, TextVectorization) ------------------------------

class LookupTable:
    """A vocabulary as a hash table: ``keys[i]`` maps to ``i + offset``; a key not in it maps to an OOV index
    (one of ``num_oov`` from ``oov_start``: FarmHash buckets for strings, ``key mod num_oov`` for integers),
    ``mask_key`` to ``mask_value``.  With ``invert``, indices map back to keys (unknown ones to ``oov_key``).

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.string_ops import LookupTable, lookup
    >>> table = LookupTable([b"a", b"b"], offset=1, num_oov=1, oov_start=0)
    >>> lookup(table, tf.constant(["b", "z", "a"])).numpy().tolist()
    [2, 0, 1]
    """

    __slots__ = ("keys", "index", "offset", "num_oov", "oov_start", "mask_key", "mask_value", "invert", "oov_key",
                 "__weakref__")

    def __init__(self, keys, offset=0, num_oov=1, oov_start=0, mask_key=None, mask_value=0, invert=False,
                 oov_key=None) -> None:
        self.keys = list(keys)
        self.index = {k: i + offset for i, k in enumerate(self.keys)}
        self.offset, self.num_oov, self.oov_start = offset, num_oov, oov_start
        self.mask_key, self.mask_value, self.invert, self.oov_key = mask_key, mask_value, invert, oov_key


def _lookup_out_dtype(table, x):
    if table.invert:
        return _dt.string if (table.keys and isinstance(table.keys[0], bytes)) or isinstance(table.oov_key, bytes) \
            else _dt.int64
    return _dt.int64


@primitive("lookup_table_find", "LookupTableFindV2", infer=lambda x, *, table: (x._shape, _lookup_out_dtype(table, x)),
           internal="the vocabulary lookup of Keras' StringLookup/IntegerLookup/TextVectorization (a hash table)")
def _lookup_find(dev, x, *, table):
    arr = x._host()
    out_dt = _lookup_out_dtype(table, x)
    if table.invert:
        keys, off, n = table.keys, table.offset, len(table.keys)

        def inv(i):
            i = int(i)
            if table.mask_key is not None and i == table.mask_value:
                return table.mask_key
            return keys[i - off] if off <= i < off + n else table.oov_key

        out = _map(inv, arr, object if out_dt.is_string else np.int64)
        return from_numpy(out, out_dt, dev)
    index, is_str = table.index, x._dtype.is_string

    def find(k):
        if not is_str:
            k = int(k)
        if table.mask_key is not None and k == table.mask_key:
            return table.mask_value
        i = index.get(k)
        if i is not None:
            return i
        if table.num_oov == 0:
            raise InvalidArgumentError(f"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV "
                                       f"value {k!r:.60}; consider setting `num_oov_indices=1`", "LookupTableFindV2")
        if table.num_oov == 1:
            return table.oov_start
        return table.oov_start + ((fingerprint64(k) if is_str else k) % table.num_oov)

    return from_numpy(_map(find, arr, np.int64), _dt.int64, dev)


def lookup(table: LookupTable, keys) -> Tensor:
    """``table``'s values for ``keys`` (a string or integer tensor; indices when the table is inverted), int64
    (or the keys' dtype when inverted).  A host computation, traced like any primitive.

    >>> import tapeflow as tf
    >>> from tapeflow.core.ops.string_ops import LookupTable, lookup
    >>> lookup(LookupTable([10, 20], offset=1), tf.constant([20, 5], tf.int64)).numpy().tolist()
    [2, 0]
    """
    x = to_tensor(keys, "LookupTableFindV2")
    if not table.invert and not (x._dtype.is_string or x._dtype.is_integer):
        raise InvalidArgumentError(f"keys have dtype {x._dtype.name}; allowed: string or integer keys",
                                   "LookupTableFindV2")
    if table.invert and not x._dtype.is_integer:
        raise InvalidArgumentError(f"indices have dtype {x._dtype.name}; allowed: integers (an inverted lookup)",
                                   "LookupTableFindV2")
    return run_tensors(PRIMITIVES["lookup_table_find"], (x,), {"table": table})


# ---- the generic ops over strings: host implementations next to their kernels ---------------------------

def _host_impl(name, pos, host):
    """Give primitive ``name`` a host implementation for string inputs (input ``pos`` decides)."""
    prim = PRIMITIVES[name]
    kernel_impl = prim.impl

    def impl(dev, *ins, **attrs):
        if ins[pos]._dtype.is_string:
            return host(dev, *ins, **attrs)
        return kernel_impl(dev, *ins, **attrs)

    impl.__name__, impl.__doc__ = getattr(kernel_impl, "__name__", name), kernel_impl.__doc__
    prim.impl = impl
    if prim.mask:
        prim.mask |= 1 << _dt.STRING_CODE


def _gather_host(dev, p, idx, *, axis, batch_dims):
    arr, ix = _strings(p), np.asarray(idx._host(), np.int64)
    n = arr.shape[axis]
    bad = (ix < 0) | (ix >= n)
    if bad.any():
        k = tuple(int(v) for v in np.argwhere(bad)[0])
        raise InvalidArgumentError(f"indices{list(k)} = {int(ix[k])} is not in [0, {n})", "GatherV2")
    if batch_dims == 0:
        out = np.take(arr, ix, axis=axis)
    else:
        bshape = arr.shape[:batch_dims]
        out = np.empty(arr.shape[:axis] + ix.shape[batch_dims:] + arr.shape[axis + 1:], dtype=object)
        for b in np.ndindex(*bshape):
            out[b] = np.take(arr[b], ix[b], axis=axis - batch_dims)
    return _out_strings(out, dev)


def _concat_host(dev, *ts, axis):
    return _out_strings(np.concatenate([_strings(t) for t in ts], axis=axis), dev)


def _stack_host(dev, *ts, axis):
    return _out_strings(np.stack([_strings(t) for t in ts], axis=axis), dev)


def _unstack_host(dev, x, *, num, axis):
    if x._shape[axis] != num:
        raise InvalidArgumentError(f"num = {num} does not match dimension {axis} of size {x._shape[axis]}", "Unpack")
    arr = _strings(x)
    return tuple(_out_strings(np.take(arr, i, axis=axis), dev) for i in range(num))


def _split_host(dev, x, *, num_or_size_splits, axis):
    arr = _strings(x)
    cuts = np.cumsum(num_or_size_splits)[:-1]
    return tuple(_out_strings(a, dev) for a in np.split(arr, cuts, axis=axis))


def _select_host(dev, c, x, y):
    return _out_strings(np.where(np.asarray(c._host(), bool), _strings(x), _strings(y)), dev)


def _compare_host(negate):
    def host(dev, x, y):
        if not y._dtype.is_string:
            raise InvalidArgumentError(f"cannot compare string with {y._dtype.name}; allowed: string with string",
                                       "NotEqual" if negate else "Equal")
        a, b = np.broadcast_arrays(_strings(x), _strings(y))
        eq = np.fromiter((u == v for u, v in zip(a.reshape(-1), b.reshape(-1))), bool, a.size).reshape(a.shape)
        return from_numpy(~eq if negate else eq, _dt.bool_, dev)

    return host


def _add_host(dev, x, y):
    """``x + y`` of two string tensors: each pair concatenated, with broadcasting (TensorFlow's AddV2 on strings)."""
    if not y._dtype.is_string:
        raise InvalidArgumentError(f"cannot add string and {y._dtype.name}; allowed: string + string", "AddV2")
    a, b = np.broadcast_arrays(_strings(x), _strings(y))
    out = np.empty(a.shape, dtype=object)
    oflat = out.reshape(-1)
    for i, (u, v) in enumerate(zip(a.reshape(-1), b.reshape(-1))):
        oflat[i] = u + v
    return _out_strings(out, dev)


def _scatter_update_host(dev, x, idx, u):
    """``tensor_scatter_nd_update`` of a string tensor: a copy of ``x`` with ``u``'s rows at ``idx``."""
    out = np.array(_strings(x), dtype=object)
    ix = np.asarray(idx._host(), np.int64)
    k = ix.shape[-1]
    ix, upd = ix.reshape(-1, k), _strings(u).reshape((-1,) + out.shape[k:])
    for j, row in enumerate(ix):
        if not all(0 <= v < n for v, n in zip(row, out.shape)):
            raise InvalidArgumentError(f"indices[{j}] = {row.tolist()} does not index into shape {list(out.shape)}",
                                       "TensorScatterUpdate")
        out[tuple(row)] = upd[j]
    return _out_strings(out, dev)


def _strided_pick(x, shape, off, strides) -> np.ndarray:
    """The entries of ``x`` (row-major) at ``off + sum(i_k * strides_k)`` over ``shape``: a strided view's copy."""
    flat = _strings(x).reshape(-1)
    idx = np.full(tuple(shape), off, np.int64)
    for k, (n, st) in enumerate(zip(shape, strides)):
        idx = idx + (np.arange(n, dtype=np.int64) * st).reshape((-1,) + (1,) * (len(shape) - k - 1))
    return flat[idx.reshape(-1)].reshape(idx.shape) if idx.size else np.empty(tuple(shape), dtype=object)


def _slice_host(dev, x, *, begin, size):
    from ._shape import _contig_strides
    from .slice_ops import _slice_sizes

    size = _slice_sizes(begin, size, x._shape)
    strides = _contig_strides(x._shape)
    off = sum(b * st for b, st in zip(begin, strides))
    return _out_strings(_strided_pick(x, size, off, strides), dev)


def _strided_slice_host(dev, x, **attrs):
    from .slice_ops import _slice_plan

    off, vshape, vstr, result = _slice_plan(x._shape, attrs)
    return _out_strings(_strided_pick(x, vshape, off, vstr).reshape(result), dev)


def _argsort_rows(arr, axis, descending):
    """Stable argsort of a string array along ``axis`` (bytes order; ties keep their order either way)."""
    moved = np.moveaxis(arr, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else np.empty((0, moved.shape[-1]), object)
    out = np.empty(rows.shape, np.int32)
    for i, row in enumerate(rows):
        out[i] = sorted(range(len(row)), key=row.__getitem__, reverse=descending)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def _argsort_host(dev, x, *, axis, direction):
    idx = _argsort_rows(_strings(x), axis, direction == "DESCENDING")
    return from_numpy(np.ascontiguousarray(idx), _dt.int32, dev)


def _sort_host(dev, x, *, axis, direction):
    arr = _strings(x)
    idx = _argsort_rows(arr, axis, direction == "DESCENDING")
    return _out_strings(np.take_along_axis(arr, idx, axis), dev)


_host_impl("gather", 0, _gather_host)
_host_impl("argsort", 0, _argsort_host)
_host_impl("sort", 0, _sort_host)
_host_impl("slice", 0, _slice_host)
_host_impl("strided_slice", 0, _strided_slice_host)
_host_impl("concat", 0, _concat_host)
_host_impl("stack", 0, _stack_host)
_host_impl("unstack", 0, _unstack_host)
_host_impl("split", 0, _split_host)
_host_impl("select", 1, _select_host)
_host_impl("equal", 0, _compare_host(False))
_host_impl("not_equal", 0, _compare_host(True))
_host_impl("add", 0, _add_host)
_host_impl("tensor_scatter_nd_update", 0, _scatter_update_host)
_host_impl("transpose", 0, lambda dev, x, *, perm: _out_strings(np.transpose(_strings(x), perm), dev))
_host_impl("tile", 0, lambda dev, x, *, multiples: _out_strings(np.tile(_strings(x), multiples), dev))

def _ragged_elementwise(fn):
    """``fn`` that also takes a RaggedTensor as its first argument: applied to the flat values, the row partition
    kept (TensorFlow dispatches its element-wise string ops so: ``tf.strings.to_number(tf.strings.split(s, ","))``)."""
    import functools

    @functools.wraps(fn)
    def op(input, *args, **kwargs):  # noqa: A002 (TensorFlow's argument name)
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)

    return op


length, lower, upper, strip = (_ragged_elementwise(f) for f in (length, lower, upper, strip))
regex_replace, regex_full_match = _ragged_elementwise(regex_replace), _ragged_elementwise(regex_full_match)
to_number, as_string = _ragged_elementwise(to_number), _ragged_elementwise(as_string)
to_hash_bucket_fast, substr = _ragged_elementwise(to_hash_bucket_fast), _ragged_elementwise(substr)

#: the public names of tf.strings
STRINGS_API = {
    "split": split, "bytes_split": bytes_split, "join": join, "length": length, "substr": substr, "lower": lower,
    "upper": upper, "strip": strip, "regex_replace": regex_replace, "regex_full_match": regex_full_match,
    "to_number": to_number, "as_string": as_string, "format": format, "reduce_join": reduce_join,
    "unicode_decode": unicode_decode, "unicode_encode": unicode_encode, "ngrams": ngrams,
    "to_hash_bucket_fast": to_hash_bucket_fast, "RaggedTensor": RaggedTensor,
}
__all__: list = []  # tf.strings exposes these (tapeflow.core.api), not the top-level namespace
