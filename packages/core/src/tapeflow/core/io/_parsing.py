"""``tf.io.parse_single_example``/``parse_example`` and their feature specs (``FixedLenFeature``,
``VarLenFeature``, ``FixedLenSequenceFeature``), over serialized ``tf.train.Example`` messages.

Host computations: the protobuf bytes are decoded in Python (``_proto``), the results are tensors
(``VarLenFeature`` gives a ``tf.sparse.SparseTensor``, as TensorFlow's).  Both functions are one runner
primitive (``parse_example``), so they trace inside ``tf.function``: a feature's batch dimension is the
input's, a ``VarLenFeature``'s number of values and a ``FixedLenSequenceFeature``'s length are None.
"""
from __future__ import annotations

import collections

import numpy as np

from .. import dtypes as _dt
from ..dispatch import register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import PRIMITIVES, primitive, run_tensors
from ..tensor import from_numpy
from . import _proto

_NONDIFF = "Example parsing (no gradient)"
_FEATURE_DTYPES = ("float32", "int64", "string")
_KIND_OF = {"float32": "float_list", "int64": "int64_list", "string": "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _dtype(dtype, what):
    from ..dispatch import dtype_arg

    dt = dtype_arg(dtype, "ParseExample", "dtype")
    if dt.name not in _FEATURE_DTYPES:
        raise InvalidArgumentError(f"{what} dtype {dt.name}; allowed: float32, int64, string", "ParseExample")
    return dt


def _shape(shape):
    if shape is None:
        raise InvalidArgumentError("a FixedLenFeature needs a shape; allowed: a list of ints", "ParseExample")
    dims = list(shape.as_list() if hasattr(shape, "as_list") else shape)
    if any(d is None or isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0 for d in dims):
        raise InvalidArgumentError(f"shape = {dims}; allowed: a list of non-negative ints", "ParseExample")
    return [int(d) for d in dims]


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of fixed ``shape`` and ``dtype`` (float32, int64, string); ``default_value`` fills an
    Example without it (else the feature is required).

    >>> import tapeflow as tf
    >>> tf.io.FixedLenFeature([2], tf.int64, default_value=[0, 0]).shape
    [2]
    """

    def __new__(cls, shape, dtype, default_value=None) -> FixedLenFeature:
        return super().__new__(cls, _shape(shape), _dtype(dtype, "FixedLenFeature"), default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length, parsed into a ``tf.sparse.SparseTensor``.

    >>> import tapeflow as tf
    >>> tf.io.VarLenFeature(tf.string).dtype
    tf.string
    """

    def __new__(cls, dtype):
        return super().__new__(cls, _dtype(dtype, "VarLenFeature"))


class FixedLenSequenceFeature(collections.namedtuple("FixedLenSequenceFeature",
                                                     ["shape", "dtype", "allow_missing", "default_value"])):
    """A sequence of values each of ``shape``; ``parse_example`` pads the batch's sequences to the longest
    with ``default_value`` (0 or b""). ``allow_missing`` must be True for ``tf.train.Example``.

    >>> import tapeflow as tf
    >>> tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True).allow_missing
    True
    """

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, _shape(shape), _dtype(dtype, "FixedLenSequenceFeature"), allow_missing,
                               default_value)


def _values(feature, dt, key):
    """The feature's list as a NumPy array of ``dt``, checking its type."""
    kind = feature.WhichOneof("kind")
    want = _KIND_OF[dt.name]
    if kind is not None and kind != want:
        raise InvalidArgumentError(f"Key: {key}.  Data types don't match. Data type: {_TYPE_NAME[kind]} but "
                                   f"expected type: {_TYPE_NAME[want]}", "ParseExample")
    vals = feature.bytes_list.value if want == "bytes_list" else \
        feature.float_list.value if want == "float_list" else feature.int64_list.value
    if dt.is_string:
        arr = np.empty(len(vals), object)
        arr[:] = vals
        return arr
    return np.asarray(vals, dt.np)


def _default_array(spec, key):
    n = int(np.prod(spec.shape)) if spec.shape else 1
    d = spec.default_value
    if hasattr(d, "numpy"):
        d = d.numpy()
    arr = np.asarray(d, dtype=object if spec.dtype.is_string else spec.dtype.np)
    if spec.dtype.is_string:
        arr = np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(arr) if arr.size \
            else arr
    if arr.size == 1 and n != 1:
        arr = np.repeat(arr.reshape(1), n)
    if arr.size != n:
        raise InvalidArgumentError(f"Key: {key}.  default_value has {arr.size} values; shape {spec.shape} needs {n}",
                                   "ParseExample")
    return arr.reshape(spec.shape)


def _check_features(features):
    if not isinstance(features, dict) or not features:
        raise InvalidArgumentError("features must be a non-empty dict of feature specs", "ParseExample")
    for k, v in features.items():
        if not isinstance(v, (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature)):
            raise TypeError(f"features[{k!r}] is a {type(v).__name__}; allowed: tf.io.FixedLenFeature, "
                            "VarLenFeature, FixedLenSequenceFeature [Op:ParseExample]")
        if isinstance(v, FixedLenSequenceFeature) and not v.allow_missing:
            raise InvalidArgumentError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.",
                                       "ParseExample")


def _serialized_tensor(serialized, op):
    t = to_tensor(serialized, op)
    if not t.dtype.is_string:
        raise InvalidArgumentError(f"serialized has dtype {t.dtype.name}; allowed: string", op)
    return t


def _frozen(features) -> tuple:
    """The feature specs as a hashable primitive attribute: (key, kind, dtype, shape, default array or None)."""
    out = []
    for key, spec in features.items():
        if isinstance(spec, FixedLenFeature):
            default = None if spec.default_value is None else _default_array(spec, key)
            out.append((key, "fixed", spec.dtype, tuple(spec.shape), None if default is None else
                        tuple(default.reshape(-1).tolist())))
        elif isinstance(spec, VarLenFeature):
            out.append((key, "var", spec.dtype, (), None))
        else:
            d = spec.default_value
            d = None if d is None else np.asarray(d.numpy() if hasattr(d, "numpy") else d).reshape(-1).tolist()
            out.append((key, "seq", spec.dtype, tuple(spec.shape), None if d is None else tuple(d)))
    return tuple(out)


def _parse_infer(serialized, *, features, single):
    lead = () if single else (serialized._shape[0],)
    out = []
    for _, kind, dt, shape, _ in features:
        if kind == "fixed":
            out.append((lead + shape, dt))
        elif kind == "var":
            out += [((None, len(lead) + 1), _dt.int64), ((None,), dt), ((len(lead) + 1,), _dt.int64)]
        else:
            out.append((lead + (None,) + shape, dt))
    return out


def _host_array(values, dt):
    if dt.is_string:
        arr = np.empty(len(values), object)
        arr[:] = [v.encode() if isinstance(v, str) else v for v in values]
        return arr
    return np.asarray(values, dt.np)


@primitive("parse_example", "ParseExampleV2", infer=_parse_infer, dtypes=(_dt.string,))
def _parse_example(dev, serialized, *, features, single):
    op = "ParseExampleV2"
    recs = np.asarray(serialized._host(), dtype=object).reshape(-1)
    examples = []
    for r in recs:
        try:
            examples.append(_proto.Example.FromString(r).features.feature)
        except Exception as e:  # noqa: BLE001 - the decoder's DataLossError, or bad UTF-8 keys
            raise InvalidArgumentError(f"Could not parse example input, value: {r!r:.60} ({e})", op) from None
    b = len(examples)
    outs = []

    def put(arr, dt):
        outs.append(from_numpy(np.ascontiguousarray(arr) if not dt.is_string else arr, dt, dev))

    for key, kind, dt, shape, default in features:
        empty = (lambda n: np.empty(n, object)) if dt.is_string else (lambda n: np.zeros(n, dt.np))
        if kind == "fixed":
            n = int(np.prod(shape)) if shape else 1
            rows = []
            for feats in examples:
                if key in feats:
                    v = _values(feats[key], dt, key)
                    if v.size != n:
                        raise InvalidArgumentError(f"Key: {key}.  Can't parse serialized Example: {v.size} values; "
                                                   f"shape {list(shape)} needs {n}", op)
                    rows.append(v.reshape(shape))
                elif default is None:
                    raise InvalidArgumentError(f"Feature: {key} (data type: {dt.name}) is required but could not "
                                               "be found.", op)
                else:
                    rows.append(_host_array(default, dt).reshape(shape))
            arr = np.stack(rows) if rows else empty(0).reshape((0,) + shape)
            put(arr[0] if single else arr, dt)
        elif kind == "var":
            idx, vals, width = [], [], 0
            for i, feats in enumerate(examples):
                v = _values(feats[key], dt, key) if key in feats else empty(0)
                idx.extend((i, j) for j in range(v.size))
                vals.append(v)
                width = max(width, v.size)
            values = np.concatenate(vals) if vals else empty(0)
            indices = np.asarray(idx, np.int64).reshape(-1, 2)
            dense = np.asarray([b, width], np.int64)
            if single:
                indices, dense = indices[:, 1:], dense[1:]
            put(indices, _dt.int64)
            put(values, dt)
            put(dense, _dt.int64)
        else:
            inner = int(np.prod(shape)) if shape else 1
            seqs = []
            for feats in examples:
                v = _values(feats[key], dt, key) if key in feats else empty(0)
                if inner == 0 or v.size % inner:
                    raise InvalidArgumentError(f"Key: {key}.  Number of values {v.size} is not a multiple of "
                                               f"the shape {list(shape)}'s size {inner}", op)
                seqs.append(v.reshape((-1,) + shape))
            longest = max((q.shape[0] for q in seqs), default=0)
            arr = np.empty((b, longest) + shape, object if dt.is_string else dt.np)
            if default is not None:
                arr[...] = _host_array(default, dt).reshape(-1)[0] if len(default) == 1 else \
                    _host_array(default, dt).reshape(shape)
            else:
                arr[...] = b"" if dt.is_string else 0
            for i, q in enumerate(seqs):
                arr[i, :q.shape[0]] = q
            put(arr[0] if single else arr, dt)
    return tuple(outs)


def _assemble(features, flat):
    from ..sparse import SparseTensor

    flat = list(flat) if isinstance(flat, (tuple, list)) else [flat]
    out, i = {}, 0
    for key, kind, *_ in features:
        if kind == "var":
            out[key] = SparseTensor(flat[i], flat[i + 1], flat[i + 2])
            i += 3
        else:
            out[key] = flat[i]
            i += 1
    return out


@register("parse_example", "ParseExampleV2", nondiff=_NONDIFF)
def parse_example(serialized, features, example_names=None, name=None) -> dict:
    """Parse a vector of serialized ``tf.train.Example`` into ``{key: tensor}``: a ``FixedLenFeature``
    gives ``[batch] + shape``, a ``VarLenFeature`` a ``tf.sparse.SparseTensor`` of dense shape
    ``[batch, longest]``, a ``FixedLenSequenceFeature`` ``[batch, longest] + shape`` padded.

    >>> import tapeflow as tf
    >>> ex = lambda v: tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(int64_list=tf.train.Int64List(value=v))})).SerializeToString()
    >>> out = tf.io.parse_example([ex([1]), ex([2])], {"x": tf.io.FixedLenFeature([], tf.int64)})
    >>> out["x"].numpy().tolist()
    [1, 2]
    """
    op = "ParseExampleV2"
    _check_features(features)
    t = _serialized_tensor(serialized, op)
    if t.shape.rank != 1:
        raise InvalidArgumentError(f"serialized must be a vector, got shape {tuple(t.shape)}", op)
    frozen = _frozen(features)
    return _assemble(frozen, run_tensors(PRIMITIVES["parse_example"], (t,), {"features": frozen, "single": False}))


def parse_single_example(serialized, features, example_names=None, name=None) -> dict:
    """Parse one serialized ``tf.train.Example`` (a scalar string) into ``{key: tensor}``; a
    ``VarLenFeature`` gives a ``tf.sparse.SparseTensor`` of rank 1.

    >>> import tapeflow as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "w": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"a", b"b"]))}))
    >>> out = tf.io.parse_single_example(ex.SerializeToString(), {"w": tf.io.VarLenFeature(tf.string)})
    >>> out["w"].values.numpy().tolist()
    [b'a', b'b']
    """
    op = "ParseExampleV2"
    _check_features(features)
    t = _serialized_tensor(serialized, op)
    if t.shape.rank != 0:
        raise InvalidArgumentError(f"serialized must be a scalar, got shape {tuple(t.shape)}", op)
    frozen = _frozen(features)
    return _assemble(frozen, run_tensors(PRIMITIVES["parse_example"], (t,), {"features": frozen, "single": True}))
