"""Specs of the string ops (``tapeflow.core.ops.string_ops``, ``tf.strings``) against Python over bytes.

String ops are host computations over byte strings; the reference here is plain Python (TensorFlow's
own values are compared in packages/core/tests/test_strings.py when TensorFlow is installed).  Inputs are
NumPy object arrays of ``bytes`` (the dtype "string"), over scalars, vectors, matrices and size-0 shapes.
"""
from __future__ import annotations

import re

import numpy as np
from opspec import Spec

S = ("string",)
SHAPES = [(), (5,), (3, 4), (0,), (2, 0)]
_WORDS = [b"", b"a", b"Hello", b"tf", b" x y ", b"na\xc3\xafve", b"12", b"-3.5", b"UPPER lower", b"a,b,,c"]


def _strs(rng, shape, pool=_WORDS):
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = pool[int(rng.integers(len(pool)))]
    return out


def _map(fn, arr, otype=object):
    arr = np.asarray(arr, dtype=object)
    out = np.empty(arr.shape, dtype=otype)
    for idx in np.ndindex(*arr.shape):
        out[idx] = fn(arr[idx])
    return out


def _unary_cases(rng, dtype, pool=_WORDS):
    return [((_strs(rng, s, pool),), {}) for s in SHAPES]


def _strings(tf):
    return tf.strings


def _spec(op, api, ref, sample=_unary_cases, dtypes=S, name=""):
    return Spec(op, ref, sample, dtypes=dtypes, fn=lambda tf, *a, **k: getattr(tf.strings, api)(*a, **k),
                exact=True, grad=False, name=name)


# ---- element-wise ----------------------------------------------------------------------------------

def _join_sample(rng, dtype):
    """The inputs as separate arguments (the walks see each array); the spec's fn passes them as one list."""
    return [((_strs(rng, (3, 4)), _strs(rng, (3, 4))), {"separator": "-"}),
            ((_strs(rng, ()), _strs(rng, (5,)), _strs(rng, (5,))), {}),
            ((_strs(rng, (0,)), _strs(rng, ())), {"separator": ", "}), ((_strs(rng, (2, 3)),), {})]


def _join_ref(inputs, separator=""):
    arrs = np.broadcast_arrays(*[np.asarray(a, dtype=object) for a in inputs])
    sep = separator.encode()
    out = np.empty(arrs[0].shape, dtype=object)
    for idx in np.ndindex(*out.shape):
        out[idx] = sep.join(a[idx] for a in arrs)
    return out


def _join_run(tf, *inputs, **k):
    return tf.strings.join(list(inputs), **k)


def _length_sample(rng, dtype):
    return [((_strs(rng, s),), {"unit": u}) for s in SHAPES for u in ("BYTE", "UTF8_CHAR")][:8]


def _length_ref(x, unit="BYTE"):
    f = len if unit == "BYTE" else (lambda s: len(s.decode("utf-8")))
    return _map(f, x, np.int32)


def _substr_sample(rng, dtype):
    pool = [b"hello", b"tensorflow", b"abc", b"xyz12"]
    return [((_strs(rng, s, pool), int(rng.integers(-3, 3)), int(rng.integers(0, 4))), {}) for s in SHAPES] + [
        ((_strs(rng, (4,), pool), np.array([0, 1, 2, -1], np.int32), np.array([2, 2, 1, 5], np.int32)), {})]


def _substr_ref(x, pos, ln):
    x, p, n = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(pos), np.asarray(ln))
    out = np.empty(x.shape, dtype=object)
    for idx in np.ndindex(*x.shape):
        s, k = x[idx], int(p[idx])
        k = k + len(s) if k < 0 else k
        out[idx] = s[k:k + int(n[idx])]
    return out


def _regex_replace_sample(rng, dtype):
    return [((_strs(rng, s), r"[aeiou]+", "<\\0>"), {}) for s in SHAPES[:3]] + [
        ((_strs(rng, (5,)), r"(\w)(\w)", r"\2\1"), {"replace_global": False}), ((_strs(rng, (0,)), "a", "b"), {})]


def _regex_replace_ref(x, pattern, rewrite, replace_global=True):
    rx = re.compile(pattern.encode())
    rw = re.sub(rb"\\(\d)", lambda m: b"\\g<" + m.group(1) + b">", rewrite.encode())
    return _map(lambda s: rx.sub(rw, s, count=0 if replace_global else 1), x)


def _full_match_sample(rng, dtype):
    return [((_strs(rng, s), r"[A-Za-z ]*"), {}) for s in SHAPES]


def _full_match_ref(x, pattern):
    rx = re.compile(pattern.encode())
    return _map(lambda s: rx.fullmatch(s) is not None, x, np.bool_)


_NUMS = [b"0", b"12", b"-3", b"4.25", b"1e3", b" 7 ", b"-0.5"]


def _to_number_sample(rng, dtype):
    ints = [b"0", b"12", b"-3", b" 7 ", b"2147483647"]
    return [((_strs(rng, s, _NUMS),), {}) for s in SHAPES] + [
        ((_strs(rng, (4,), ints),), {"out_type": "int32"}), ((_strs(rng, (3, 2), ints),), {"out_type": "int64"}),
        ((_strs(rng, (3,), _NUMS),), {"out_type": "float64"})]


def _to_number_ref(x, out_type="float32"):
    dt = np.dtype(out_type)
    return _map(lambda s: (int if dt.kind == "i" else float)(s.decode().strip()), x, dt)


def _as_string_sample(rng, dtype):
    if dtype == "bool":
        return [((rng.random(s) < 0.5,), {}) for s in SHAPES]
    if dtype == "int32":
        return [((rng.integers(-100, 100, s).astype(np.int32),), {}) for s in SHAPES] + [
            ((np.array([3, -4, 120], np.int32),), {"width": 4, "fill": "0"})]
    vals = lambda s: (rng.uniform(-50, 50, s)).astype(dtype)  # noqa: E731
    return [((vals(s),), {}) for s in SHAPES] + [
        ((vals((3,)),), {"precision": 2}), ((vals((2,)),), {"scientific": True}),
        ((vals((2,)),), {"shortest": True, "width": 12})]


def _as_string_ref(x, precision=-1, scientific=False, shortest=False, width=-1, fill=""):
    x = np.asarray(x)
    if x.dtype == bool:
        return _map(lambda v: b"true" if v else b"false", x.astype(object))
    fmt = "%" + ("0" if fill == "0" else "") + (str(width) if width > -1 else "")
    if x.dtype.kind == "f":
        fmt += ("." + str(precision) if precision > -1 else "") + ("e" if scientific else "g" if shortest else "f")
        return _map(lambda v: (fmt % float(v)).encode(), x.astype(object))
    return _map(lambda v: ((fmt + "d") % int(v)).encode(), x.astype(object))


def _reduce_join_sample(rng, dtype):
    return [((_strs(rng, (3, 4)),), {"axis": 1, "separator": "|"}), ((_strs(rng, (3, 4)),), {}),
            ((_strs(rng, (2, 3, 2)),), {"axis": [0, 2], "keepdims": True}), ((_strs(rng, (5,)),), {"axis": 0}),
            ((_strs(rng, (2, 0)),), {"axis": -1})]


def _reduce_join_ref(x, axis=None, keepdims=False, separator=""):
    x = np.asarray(x, dtype=object)
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in np.atleast_1d(axis))
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, keep + list(axes))
    lead = moved.shape[:len(keep)]
    flat = moved.reshape((int(np.prod(lead, dtype=np.int64)), -1))
    out = np.empty(flat.shape[0], dtype=object)
    for i in range(flat.shape[0]):
        out[i] = separator.encode().join(flat[i])
    out = out.reshape(lead)
    return out.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape))) if keepdims else out


def _ngrams_sample(rng, dtype):
    return [((_strs(rng, (5,)), 2), {}), ((_strs(rng, (3, 4)), 3), {"separator": "_"}),
            ((_strs(rng, (4,)), [1, 2]), {"pad_values": ("<s>", "</s>")}), ((_strs(rng, (1,)), 2), {})]


def _ngrams_ref(data, ngram_width, separator=" ", pad_values=None):
    data = np.asarray(data, dtype=object)
    widths = ngram_width if isinstance(ngram_width, list) else [ngram_width]
    sep = separator.encode()
    rows = []
    for row in data.reshape(-1, data.shape[-1]):
        out = []
        for w in widths:
            seq = list(row)
            if pad_values is not None:
                seq = [pad_values[0].encode()] * (w - 1) + seq + [pad_values[1].encode()] * (w - 1)
            out += [sep.join(seq[i:i + w]) for i in range(len(seq) - w + 1)]
        rows.append(out)
    res = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, r in enumerate(rows):
        res[i, :] = r
    return res.reshape(data.shape[:-1] + (res.shape[1],))


def _hash_sample(rng, dtype):
    return [((_strs(rng, s), 1000), {}) for s in SHAPES]


#: TensorFlow 2.21's tf.strings.to_hash_bucket_fast(word, 1000) for each word of _WORDS (FarmHash Fingerprint64
#: mod 1000; test_strings.py compares many more strings with TensorFlow itself when it is installed)
_TF_BUCKETS_1000 = {b"": 263, b"a": 939, b"Hello": 151, b"tf": 248, b" x y ": 557, b"na\xc3\xafve": 233, b"12": 888,
                    b"-3.5": 391, b"UPPER lower": 686, b"a,b,,c": 324}


def _hash_ref(x, num_buckets):
    assert num_buckets == 1000
    return _map(_TF_BUCKETS_1000.__getitem__, x, np.int64)


def _format_sample(rng, dtype):
    return [(("x={} y={}", _strs(rng, ()), np.arange(4, dtype=np.int32)), {}),
            (("{}", np.arange(10, dtype=np.int32)), {"summarize": 2}), (("no placeholder",), {})]


def _format_ref(template, *inputs, summarize=3):
    def fmt(a):
        a = np.asarray(a)
        if a.ndim == 0:
            v = a[()]
            return '"' + v.decode() + '"' if isinstance(v, bytes) else str(v)
        idx = list(range(a.shape[0]))
        if len(idx) > 2 * summarize:
            return "[" + " ".join([str(v) for v in a[:summarize]] + ["..."] + [str(v) for v in a[-summarize:]]) + "]"
        return "[" + " ".join(str(v) for v in a) + "]"

    pieces = template.split("{}")
    out = pieces[0]
    for a, rest in zip(inputs, pieces[1:]):
        out += fmt(a) + rest
    return np.array(out.encode(), dtype=object)


def _format_run(tf, template, *inputs, **k):
    return tf.strings.format(template, list(inputs), **k)


# ---- splitting and unicode (scalar inputs: a 1-D result; vectors give a RaggedTensor, see test_strings.py) ---

def _split_sample(rng, dtype):
    return [((np.array(b"a b  c ", dtype=object),), {}), ((np.array(b"a,b,,c", dtype=object), ","), {}),
            ((np.array(b"", dtype=object),), {}), ((np.array(b"x y z", dtype=object), " ", 1), {})]


def _split_ref(x, sep=None, maxsplit=-1):
    s = np.asarray(x, dtype=object)[()]
    parts = (s.split(None, maxsplit) if maxsplit >= 0 else s.split()) if sep is None else \
        (s.split(sep.encode(), maxsplit) if s else [])
    out = np.empty(len(parts), dtype=object)
    out[:] = parts
    return out


def _bytes_split_sample(rng, dtype):
    return [((np.array(w, dtype=object),), {}) for w in (b"abc", b"", b"na\xc3\xafve")]


def _bytes_split_ref(x):
    s = np.asarray(x, dtype=object)[()]
    out = np.empty(len(s), dtype=object)
    out[:] = [s[i:i + 1] for i in range(len(s))]
    return out


def _decode_sample(rng, dtype):
    return [((np.array(w, dtype=object), "UTF-8"), {}) for w in (b"abc", b"", b"na\xc3\xafve \xe2\x82\xac")]


def _decode_ref(x, enc):
    return np.array([ord(c) for c in np.asarray(x, dtype=object)[()].decode("utf-8")], np.int32)


def _encode_sample(rng, dtype):
    return [((np.array([104, 233, 8364], np.int32), "UTF-8"), {}),
            ((rng.integers(32, 1000, (3, 4)).astype(np.int32), "UTF-8"), {}),
            ((np.zeros((2, 0), np.int32), "UTF-8"), {})]


def _encode_ref(x, enc):
    x = np.asarray(x)
    out = np.empty(x.shape[:-1], dtype=object)
    for idx in np.ndindex(*out.shape):
        out[idx] = "".join(chr(int(c)) for c in x[idx]).encode("utf-8")
    return out


SPECS = [
    Spec("string_join", lambda *xs, separator="": _join_ref(xs, separator), _join_sample, dtypes=S, fn=_join_run,
         exact=True, grad=False),
    _spec("string_length", "length", _length_ref, _length_sample),
    _spec("substr", "substr", _substr_ref, _substr_sample),
    _spec("string_lower", "lower", lambda x: _map(bytes.lower, x)),
    _spec("string_upper", "upper", lambda x: _map(bytes.upper, x)),
    _spec("string_strip", "strip", lambda x: _map(bytes.strip, x)),
    _spec("regex_replace", "regex_replace", _regex_replace_ref, _regex_replace_sample),
    _spec("regex_full_match", "regex_full_match", _full_match_ref, _full_match_sample),
    _spec("string_to_number", "to_number", _to_number_ref, _to_number_sample),
    _spec("as_string", "as_string", _as_string_ref, _as_string_sample, dtypes=("float32", "float64", "int32", "bool")),
    _spec("reduce_join", "reduce_join", _reduce_join_ref, _reduce_join_sample),
    _spec("string_ngrams", "ngrams", _ngrams_ref, _ngrams_sample),
    _spec("string_to_hash_bucket_fast", "to_hash_bucket_fast", _hash_ref, _hash_sample),
    Spec("string_format", _format_ref, _format_sample, dtypes=S, fn=_format_run, exact=True, grad=False),
    _spec("string_split", "split", _split_ref, _split_sample),
    _spec("string_bytes_split", "bytes_split", _bytes_split_ref, _bytes_split_sample),
    _spec("unicode_decode", "unicode_decode", _decode_ref, _decode_sample),
    _spec("unicode_encode", "unicode_encode", _encode_ref, _encode_sample, dtypes=("int32",)),
]
