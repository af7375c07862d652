"""Element structures: nesting (tuples, namedtuples, dicts), TensorSpec, conversion of values.

An element of a dataset is a leaf or a nest of tuples, namedtuples and dicts whose leaves are
tensors (text, of dtype ``tf.string``, is held inside a pipeline as ``bytes`` scalars and NumPy object arrays of
``bytes`` when batched; string tensors convert to that form on the way in, and :func:`for_user` turns it back into
``tf.string`` tensors on the way out: iteration and the user's functions see string tensors, as in TensorFlow).
Dicts flatten in sorted key order and keep their own key order when packed again, as ``tf.nest`` does.
"""
from __future__ import annotations

import numbers

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.sparse import SparseTensor
from tapeflow.core.tensor import Tensor, TensorShape, constant, convert_to_tensor


#: the dtype of text components: core's ``tf.string``.  Inside a pipeline a text component is held as
#: ``bytes`` (a scalar) or a NumPy object array of ``bytes``, as before; string tensors entering it (sources,
#: a function's results) are taken in as such, so every stage (batching, caching, padding) sees one form.
string = _dt.string


def as_dtype(dtype):
    """A tapeflow DType (``"string"``, ``bytes`` and ``str`` give :data:`string`, core's ``tf.string``)."""
    return _dt.as_dtype(dtype)


def _shape(shape):
    if shape is None:
        return None
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return TensorShape(None if d is None or int(d) < 0 else int(d) for d in shape)


class TensorSpec:
    """The shape (``None`` for unknown dimensions) and dtype of one component of an element.

    >>> import tapeflow as tf
    >>> from tapeflow.data import TensorSpec
    >>> TensorSpec([None, 784], tf.float32)
    TensorSpec(shape=(None, 784), dtype=tf.float32, name=None)
    >>> TensorSpec([None, 3], tf.int32).is_compatible_with(tf.zeros([2, 3], tf.int32))
    True
    """

    __slots__ = ("dtype", "name", "shape")

    def __init__(self, shape, dtype=_dt.float32, name=None) -> None:
        self.shape = _shape(shape)
        self.dtype = as_dtype(dtype)
        self.name = name

    @classmethod
    def from_value(cls, value) -> TensorSpec:
        """The spec of a tensor, ``bytes`` or NumPy array of strings (or a SparseTensor: a SparseTensorSpec)."""
        if isinstance(value, Tensor):
            return cls(value.shape, value.dtype)
        if isinstance(value, SparseTensor):
            return SparseTensorSpec(value.shape, value.dtype)
        if isinstance(value, (bytes, str)):
            return cls((), string)
        if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
            return cls(value.shape, string)
        t = convert_to_tensor(value)
        return cls(t.shape, t.dtype)

    def is_compatible_with(self, other) -> bool:
        """Whether ``other`` (a spec or a value) fits: same dtype, same rank, equal known dimensions."""
        if not isinstance(other, TensorSpec):
            try:
                other = TensorSpec.from_value(other)
            except (InvalidArgumentError, TypeError, ValueError):
                return False
        return self.dtype == other.dtype and shapes_compatible(self.shape, other.shape)

    def most_specific_compatible(self, other: TensorSpec) -> TensorSpec:
        """A spec both fit: dimensions that differ become None."""
        return TensorSpec(merge_shapes(self.shape, other.shape), self.dtype, self.name)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.dtype == other.dtype and self.shape == other.shape
                and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype.name))

    def __repr__(self):
        shape = "None" if self.shape is None else str(self.shape)
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"


class SparseTensorSpec(TensorSpec):
    """The spec of a ``tf.sparse.SparseTensor`` component (its dense shape, ``None`` where elements differ, and
    dtype), as TensorFlow's: a ``map`` may return SparseTensors (``parse_single_example``'s ``VarLenFeature``), and
    ``batch`` stacks them into one SparseTensor with a leading batch dimension.

    >>> import tapeflow as tf
    >>> st = tf.sparse.SparseTensor([[0]], [1.0], [3])
    >>> tf.data.Dataset.from_tensors(st).batch(2).element_spec
    SparseTensorSpec(TensorShape([None, 3]), tf.float32)
    """

    __slots__ = ()

    def is_compatible_with(self, other) -> bool:
        if isinstance(other, SparseTensor):
            other = SparseTensorSpec(other.shape, other.dtype)
        return isinstance(other, SparseTensorSpec) and super().is_compatible_with(other)

    def most_specific_compatible(self, other) -> SparseTensorSpec:
        return SparseTensorSpec(merge_shapes(self.shape, other.shape), self.dtype, self.name)

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and super().__eq__(other)

    def __hash__(self):
        return hash(("sparse", self.shape, self.dtype.name))

    def __repr__(self):
        return f"SparseTensorSpec({self.shape!r}, {self.dtype!r})"


def shapes_compatible(a, b) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def merge_shapes(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return TensorShape(x if x == y else None for x, y in zip(a, b))


# ---- nesting ----------------------------------------------------------------

def is_nest(x) -> bool:
    return isinstance(x, (tuple, dict))


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(s) -> list:
    """The leaves of a structure, depth first, dicts in sorted key order."""
    out = []
    _flatten(s, out)
    return out


def _flatten(s, out):
    if isinstance(s, tuple):
        for v in s:
            _flatten(v, out)
    elif isinstance(s, dict):
        for k in _sorted(s):
            _flatten(s[k], out)
    else:
        out.append(s)


def _sorted(d):
    try:
        return sorted(d)
    except TypeError:
        raise InvalidArgumentError(f"dict keys of an element must be sortable, got {list(d)!r}") from None


def pack(s, leaves):
    """The structure ``s`` with its leaves replaced by ``leaves`` (in :func:`flatten` order)."""
    it = iter(leaves)
    out = _pack(s, it)
    return out


def _pack(s, it):
    if isinstance(s, tuple):
        vals = [_pack(v, it) for v in s]
        return type(s)(*vals) if _is_namedtuple(s) else tuple(vals)
    if isinstance(s, dict):
        packed = {k: _pack(s[k], it) for k in _sorted(s)}
        return type(s)((k, packed[k]) for k in s)
    return next(it)


def packer(s):
    """A fast function from a list of leaves to the structure ``s``."""
    if not isinstance(s, (tuple, dict)):
        return _first
    if type(s) is tuple and not any(isinstance(v, (tuple, dict)) for v in s):
        return tuple
    return lambda leaves: pack(s, leaves)


def _first(leaves):
    return leaves[0]


def map_structure(fn, *structs):
    """``fn`` applied leaf by leaf over structures of the same shape."""
    first = structs[0]
    for s in structs[1:]:
        assert_same_structure(first, s)
    flats = [flatten(s) for s in structs]
    return pack(first, [fn(*xs) for xs in zip(*flats)])


def same_structure(a, b) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
            return False
        if _is_namedtuple(a) != _is_namedtuple(b) or (_is_namedtuple(a) and type(a)._fields != type(b)._fields):
            return False
        return all(same_structure(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
            return False
        return all(same_structure(a[k], b[k]) for k in a)
    return True


def assert_same_structure(a, b, what="", op=None):
    if not same_structure(a, b):
        raise InvalidArgumentError(f"{what or 'the two structures'} do not have the same nesting: "
                                   f"{describe(a)} vs. {describe(b)}", op)


def describe(s) -> str:
    """The nesting of a structure with leaves as ``.`` (for error messages)."""
    if isinstance(s, tuple):
        inner = ", ".join(describe(v) for v in s)
        return f"({inner}{',' if len(s) == 1 else ''})"
    if isinstance(s, dict):
        return "{" + ", ".join(f"{k!r}: {describe(s[k])}" for k in s) + "}"
    return "."


def format_structure(s, leaf) -> str:
    """TF1-style text of a structure: tuples as ``(a, b)``, dicts as ``{k: a}``."""
    if isinstance(s, tuple):
        inner = ", ".join(format_structure(v, leaf) for v in s)
        return f"({inner}{',' if len(s) == 1 else ''})"
    if isinstance(s, dict):
        return "{" + ", ".join(f"{k}: {format_structure(s[k], leaf)}" for k in s) + "}"
    return leaf(s)


# ---- values -----------------------------------------------------------------

def _is_text(v) -> bool:
    return isinstance(v, (bytes, str, np.bytes_, np.str_)) or (isinstance(v, np.ndarray) and v.dtype.kind in "OSU") \
        or (isinstance(v, Tensor) and v.dtype.is_string)


def _text_list(v) -> bool:
    """A (nested) list of str/bytes."""
    while isinstance(v, list) and v:
        v = v[0]
    return isinstance(v, (bytes, str))


def to_text(v):
    """``bytes`` for a scalar string, an object array of ``bytes`` otherwise (string tensors included)."""
    if isinstance(v, Tensor):
        v = v.numpy()
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v)
    arr = np.asarray(v)
    if arr.ndim == 0:
        return to_text(arr.item())
    out = np.empty(arr.shape, object)
    flat = out.reshape(-1)
    for i, x in enumerate(arr.reshape(-1)):
        flat[i] = x.encode() if isinstance(x, str) else bytes(x)
    return out


def _text_tensor(v) -> Tensor:
    return constant(v if isinstance(v, (bytes, np.ndarray)) else to_text(v), string)


def for_user(e):
    """An element as the user sees it (iteration, the functions of map, filter, scan, ...): text leaves held
    as ``bytes``/object arrays become ``tf.string`` tensors, as TensorFlow yields them; others stay as they are."""
    t = type(e)
    if t is Tensor:
        return e
    if t is bytes or (t is np.ndarray and e.dtype == object):
        return _text_tensor(e)
    if isinstance(e, tuple):
        vals = [for_user(v) for v in e]
        return t(*vals) if _is_namedtuple(e) else tuple(vals)
    if isinstance(e, dict):
        return t((k, for_user(v)) for k, v in e.items())
    if _is_text(e):
        return _text_tensor(e)
    return e


def to_component(v, op: str):
    """A source value as a tensor (or text); lists are values, as in TensorFlow, not structures."""
    if type(v) is Tensor:
        return to_text(v) if v._dtype.is_string else v
    if isinstance(v, SparseTensor):
        return v
    if _is_text(v) or (isinstance(v, list) and _text_list(v)):
        return to_text(v)
    try:
        t = convert_to_tensor(v)  # (a list of string tensors too)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(e.message, op) from None
    except TypeError as e:
        raise InvalidArgumentError(str(e), op) from None
    return to_text(t) if t._dtype.is_string else t


def to_components(value, op: str):
    """A source structure (tuples, namedtuples, dicts of values) with each leaf converted."""
    if isinstance(value, tuple):
        vals = [to_components(v, op) for v in value]
        return type(value)(*vals) if _is_namedtuple(value) else tuple(vals)
    if isinstance(value, dict):
        return type(value)((k, to_components(v, op)) for k, v in value.items())
    if value is None:
        raise InvalidArgumentError("None is not a valid component of an element; use a tensor or a structure "
                                   "of tensors", op)
    return to_component(value, op)


def normalize(out, op: str = "MapDataset"):
    """A function's result as an element: lists become tuples, leaves become tensors (or text)."""
    t = type(out)
    if t is Tensor:
        # (a symbolic string tensor, from a map run while tf.function traces a loop over the dataset, stays one)
        return to_text(out) if out._dtype.is_string and (out._h is not None or out._arr is not None) else out
    if t is tuple or t is list:
        return tuple([normalize(v, op) for v in out])
    if isinstance(out, tuple):
        return t(*[normalize(v, op) for v in out])
    if isinstance(out, dict):
        return t((k, normalize(v, op)) for k, v in out.items())
    if isinstance(out, SparseTensor):
        return out
    if out is None:
        raise InvalidArgumentError("the function returned None; it must return a tensor or a (nested) "
                                   "tuple or dict of tensors", op)
    if _is_text(out):
        return to_text(out)
    if isinstance(out, (numbers.Number, np.generic, np.ndarray)) or hasattr(out, "_as_tensor"):
        return convert_to_tensor(out)
    try:
        return convert_to_tensor(out)
    except (InvalidArgumentError, TypeError, ValueError):
        raise InvalidArgumentError(f"the function returned {type(out).__name__} {out!r:.60}, which is not a "
                                   "tensor, a value convertible to one, or a tuple or dict of those", op) from None


def spec_of(element):
    """The structure of TensorSpecs of an element."""
    return map_structure(TensorSpec.from_value, element)


def dummy(spec, unknown: int = 1, value: int = 1):
    """An element matching a spec, ``value`` everywhere (``b"a" * (value - 1)`` for text), ``unknown``
    for None dimensions."""
    def one(s):
        shape = tuple(unknown if d is None else d for d in (s.shape if s.shape is not None else ()))
        if s.dtype is string:
            text = b"a" * (value - 1)
            if not shape:
                return text
            arr = np.empty(shape, object)
            arr.fill(text)
            return arr
        return constant(np.full(shape, value, s.dtype.np))
    return map_structure(one, spec)


def leaf_nbytes(v) -> int:
    return v.size * v.dtype.size if isinstance(v, Tensor) else 0
