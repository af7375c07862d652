"""``tf.ragged`` and ``tf.RaggedTensor``: tensors whose rows have different lengths.

A RaggedTensor is ``values`` (a tensor, or another RaggedTensor for more ragged dimensions) cut into rows
by ``row_splits`` (int64: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``), as TensorFlow's.  Every
computation on one (row lengths, row ids, padding to a dense tensor, indexing, reductions over the ragged
axis, element-wise arithmetic) is tapeflow ops over ``values`` and ``row_splits``, so a tape differentiates
through them; only ``constant``/``to_list``/``numpy`` read or build Python lists on the host.

>>> import tapeflow as tf
>>> rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
>>> print(rt)
<tf.RaggedTensor [[1, 2], [3], [], [4, 5, 6]]>
>>> rt.shape, rt.row_lengths().numpy().tolist()
(TensorShape([4, None]), [2, 1, 0, 3])
>>> tf.reduce_sum(rt, axis=1).numpy().tolist()
[3, 3, 0, 15]
>>> (rt * 2 + 1).to_list()
[[3, 5], [7], [], [9, 11, 13]]
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .dispatch import dtype_arg, static_value, to_tensor
from .errors import InvalidArgumentError
from .tensor import Tensor, TensorShape, convert_to_tensor

__all__ = ["RaggedTensor", "constant", "map_flat_values", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
           "reduce_prod", "is_ragged"]


def _ops():
    from . import ops

    return ops


def is_ragged(x) -> bool:
    """Whether ``x`` is a RaggedTensor.

    >>> import tapeflow as tf
    >>> tf.ragged.is_ragged(tf.ragged.constant([[1], []])), tf.ragged.is_ragged(tf.constant([1]))
    (True, False)
    """
    return isinstance(x, RaggedTensor)


def _int64(x, op, what) -> Tensor:
    t = to_tensor(x, op)
    if t._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: int32, int64", op)
    if len(t._shape) != 1:
        raise InvalidArgumentError(f"{what} has shape {tuple(t._shape)}; allowed: a vector", op)
    return t if t._dtype is _dt.int64 else _ops().cast(t, _dt.int64)


def _host_ints(t: Tensor) -> list:
    return [int(v) for v in np.asarray(t._host()).reshape(-1)]


def _as_values(values, op):
    return values if isinstance(values, RaggedTensor) else to_tensor(values, op)


def _nvals(values) -> int:
    return values.nrows_int() if isinstance(values, RaggedTensor) else int(values._shape[0])


class RaggedTensor:
    """Rows of different lengths: ``values`` cut by ``row_splits``, as TensorFlow's ``tf.RaggedTensor``.

    Build one with ``tf.ragged.constant`` or the ``from_*`` factories; ``RaggedTensor(values, row_splits)``
    takes the parts as they are (checked).

    >>> import tapeflow as tf
    >>> rt = tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 0, 1])
    >>> rt.to_list(), rt.row_splits.numpy().tolist(), rt[0].numpy().tolist()
    ([[1, 2], [], [3]], [0, 2, 2, 3], [1, 2])
    >>> rt.to_tensor(default_value=-1).numpy().tolist()
    [[1, 2], [-1, -1], [3, -1]]
    """

    def __init__(self, values, row_splits) -> None:
        op = "RaggedTensor"
        values = _as_values(values, op)
        splits = _int64(row_splits, op, "row_splits")
        if not isinstance(values, RaggedTensor) and not values._shape:
            raise InvalidArgumentError("values is a scalar; allowed: a tensor of rank >= 1", op)
        s = _host_ints(splits)
        if not s or s[0] != 0 or any(b < a for a, b in zip(s, s[1:])) or s[-1] != _nvals(values):
            raise InvalidArgumentError(f"row_splits {s} do not cut {_nvals(values)} values; allowed: starting at 0, "
                                       "non-decreasing, ending at the number of values", op)
        self._values, self._row_splits = values, splits

    # ---- factories ------------------------------------------------------------------------------------

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None):
        """Row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``.

        >>> import tapeflow as tf
        >>> tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 3]).to_list()
        [[1], [2, 3]]
        """
        return cls(values, row_splits)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None):
        """Row ``i`` holds the next ``row_lengths[i]`` values.

        >>> import tapeflow as tf
        >>> tf.RaggedTensor.from_row_lengths(["a", "b", "c"], [1, 2]).to_list()
        [[b'a'], [b'b', b'c']]
        """
        op = "RaggedTensorFromRowLengths"
        lengths = _int64(row_lengths, op, "row_lengths")
        values = _as_values(values, op)
        n = _host_ints(lengths)
        if any(v < 0 for v in n) or sum(n) != _nvals(values):
            raise InvalidArgumentError(f"row_lengths {n} do not cut {_nvals(values)} values; allowed: non-negative "
                                       "lengths summing to the number of values", op)
        o = _ops()
        splits = o.concat([o.zeros([1], _dt.int64), o.cumsum(lengths)], 0)
        return cls(values, splits)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None):
        """Value ``k`` goes to row ``value_rowids[k]`` (sorted); ``nrows`` adds empty rows at the end.

        >>> import tapeflow as tf
        >>> tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=4).to_list()
        [[1, 2], [], [3], []]
        """
        op = "RaggedTensorFromValueRowIds"
        ids = _int64(value_rowids, op, "value_rowids")
        values = _as_values(values, op)
        v = _host_ints(ids)
        if len(v) != _nvals(values) or any(b < a for a, b in zip(v, v[1:])) or (v and v[0] < 0):
            raise InvalidArgumentError(f"value_rowids {v} for {_nvals(values)} values; allowed: one non-negative, "
                                       "non-decreasing row id per value", op)
        n = (v[-1] + 1 if v else 0) if nrows is None else int(static_value(nrows, op, "nrows"))
        if v and n <= v[-1]:
            raise InvalidArgumentError(f"nrows = {n} but value_rowids reach row {v[-1]}; allowed: nrows > the "
                                       "largest row id", op)
        o = _ops()
        lengths = o.unsorted_segment_sum(o.ones_like(ids), ids, n) if v else o.zeros([n], _dt.int64)
        return cls.from_row_lengths(values, lengths)

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None):
        """The rows of a dense ``tensor``, cut to ``lengths``, or with trailing ``padding`` values removed.

        >>> import tapeflow as tf
        >>> tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], padding=0).to_list()
        [[1], [2, 3]]
        >>> tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], lengths=[1, 3]).to_list()
        [[1], [2, 3, 0]]
        """
        op = "RaggedTensorFromTensor"
        t = to_tensor(tensor, op)
        if ragged_rank != 1:
            raise InvalidArgumentError(f"ragged_rank = {ragged_rank!r}; allowed: 1", op)
        if len(t._shape) < 2:
            raise InvalidArgumentError(f"tensor has shape {tuple(t._shape)}; allowed: rank >= 2", op)
        if lengths is not None and padding is not None:
            raise InvalidArgumentError("lengths and padding are both given; allowed: at most one", op)
        o = _ops()
        nrows, ncols = t._shape[0], t._shape[1]
        cols = o.range_(ncols, dtype=_dt.int64)
        if lengths is not None:
            lens = _int64(lengths, op, "lengths")
            if lens._shape[0] != nrows or any(v < 0 or v > ncols for v in _host_ints(lens)):
                raise InvalidArgumentError(f"lengths {_host_ints(lens)} for {nrows} rows of {ncols}; allowed: one "
                                           f"length in [0, {ncols}] per row", op)
        elif padding is not None:
            pad = to_tensor(padding, op, t._dtype)
            keep = o.logical_not(o.equal(t, pad))
            if len(t._shape) > 2:
                keep = o.reduce_any(keep, axis=list(range(2, len(t._shape))))
            # a row's length: one past its last value that is not padding
            lens = o.reduce_max(o.where(keep, o.expand_dims(cols + 1, 0), o.zeros_like(o.expand_dims(cols, 0))), 1)
            lens = lens if nrows else o.zeros([0], _dt.int64)
        else:
            lens = o.fill([nrows], ncols) if nrows else o.zeros([0], _dt.int64)
            lens = o.cast(lens, _dt.int64)
        mask = o.less(o.expand_dims(cols, 0), o.expand_dims(lens, 1))
        return cls.from_row_lengths(o.boolean_mask(t, mask), lens)

    # ---- parts -----------------------------------------------------------------------------------------

    @property
    def values(self):
        """The values the rows cut (a tensor, or a RaggedTensor for more ragged dimensions).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).values.numpy().tolist()
        [1, 2, 3]
        """
        return self._values

    @property
    def flat_values(self) -> Tensor:
        """The innermost values, a tensor.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[[1, 2], [3]], [[4]]]).flat_values.numpy().tolist()
        [1, 2, 3, 4]
        """
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def row_splits(self) -> Tensor:
        """Where each row starts in ``values`` and, last, where the last row ends (int64).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).row_splits.numpy().tolist()
        [0, 2, 2, 3]
        """
        return self._row_splits

    @property
    def nested_row_splits(self) -> tuple:
        """The row splits of each ragged dimension, outermost first.

        >>> import tapeflow as tf
        >>> [s.numpy().tolist() for s in tf.ragged.constant([[[1], [2, 3]], [[4]]]).nested_row_splits]
        [[0, 2, 3], [0, 1, 3, 4]]
        """
        out, v = [self._row_splits], self._values
        while isinstance(v, RaggedTensor):
            out.append(v._row_splits)
            v = v._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[[1], [2, 3]], [[4]]]).ragged_rank
        2
        """
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        """The values' dtype.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).dtype.name
        'int32'
        """
        return self.flat_values._dtype

    @property
    def shape(self) -> TensorShape:
        """The static shape: None for the ragged dimensions.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).shape
        TensorShape([2, None, 2])
        """
        inner = tuple(self._values.shape[1:]) if isinstance(self._values, RaggedTensor) else \
            tuple(self._values._shape[1:])
        return TensorShape((self.nrows_int(), None) + inner)

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).ndim
        2
        """
        return len(self.shape)

    def nrows_int(self) -> int:
        """The number of rows as a Python int.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).nrows_int()
        3
        """
        return int(self._row_splits._shape[0]) - 1

    def nrows(self, out_type=_dt.int64, name=None) -> Tensor:
        """The number of rows, a scalar (int64).

        >>> import tapeflow as tf
        >>> int(tf.ragged.constant([[1, 2], [], [3]]).nrows())
        3
        """
        return convert_to_tensor(self.nrows_int(), dtype_arg(out_type, "RaggedNRows"))

    def row_lengths(self, axis=1, name=None) -> Tensor:
        """The length of each row (int64).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).row_lengths().numpy().tolist()
        [2, 0, 1]
        """
        if axis != 1:
            if isinstance(self._values, RaggedTensor) and isinstance(axis, int) and axis > 1:
                return self.with_values(self._values.row_lengths(axis - 1))
            raise InvalidArgumentError(f"axis = {axis!r}; allowed: a ragged axis >= 1", "RaggedRowLengths")
        s = self._row_splits
        return s[1:] - s[:-1]

    def row_starts(self, name=None) -> Tensor:
        """Where each row starts in ``values`` (int64).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).row_starts().numpy().tolist()
        [0, 2, 2]
        """
        return self._row_splits[:-1]

    def row_limits(self, name=None) -> Tensor:
        """Where each row ends in ``values`` (int64).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).row_limits().numpy().tolist()
        [2, 2, 3]
        """
        return self._row_splits[1:]

    def value_rowids(self, name=None) -> Tensor:
        """The row of each value (int64).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).value_rowids().numpy().tolist()
        [0, 0, 2]
        """
        o = _ops()
        n = _nvals(self._values)
        return o.cast(o.searchsorted(self._row_splits[1:], o.range_(n, dtype=_dt.int64), side="right"), _dt.int64)

    def _positions(self) -> Tensor:
        """Each value's position in its row (int64)."""
        o = _ops()
        return o.range_(_nvals(self._values), dtype=_dt.int64) - o.gather(self._row_splits, self.value_rowids())

    def with_values(self, new_values) -> RaggedTensor:
        """The same rows over ``new_values`` (as many as ``values``).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [], [3]]).with_values([7, 8, 9]).to_list()
        [[7, 8], [], [9]]
        """
        sp = self._row_splits
        if sp._h is None and sp._arr is None:  # traced (tf.function): nothing to check on the host, keep the rows
            r = object.__new__(RaggedTensor)
            r._values, r._row_splits = _as_values(new_values, "RaggedTensor"), sp
            return r
        return RaggedTensor(new_values, self._row_splits)

    def with_flat_values(self, new_values) -> RaggedTensor:
        """The same ragged structure over ``new_values`` (as many as ``flat_values``).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [3]]).with_flat_values([7, 8, 9]).to_list()
        [[7, 8], [9]]
        """
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    # ---- conversion ------------------------------------------------------------------------------------

    def to_list(self) -> list:
        """The rows as nested Python lists.

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1.5], []]).to_list()
        [[1.5], []]
        """
        s = _host_ints(self._row_splits)
        v = self._values.to_list() if isinstance(self._values, RaggedTensor) else self._values._host().tolist()
        return [v[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def numpy(self) -> np.ndarray:
        """A NumPy object array of the rows (each a NumPy array, or nested lists for deeper raggedness).

        >>> import tapeflow as tf
        >>> [r.tolist() for r in tf.ragged.constant([[1, 2], [], [3]]).numpy()]
        [[1, 2], [], [3]]
        """
        s = _host_ints(self._row_splits)
        out = np.empty(len(s) - 1, dtype=object)
        for i in range(len(s) - 1):
            out[i] = self[i].numpy() if not isinstance(self._values, RaggedTensor) else self[i].to_list()
        return out

    def to_tensor(self, default_value=None, name=None, shape=None) -> Tensor:
        """A dense tensor: rows padded with ``default_value`` (0, or b'' for strings) to the longest row, or
        cut/padded to ``shape`` (None entries keep the natural size).

        >>> import tapeflow as tf
        >>> tf.ragged.constant([[1, 2], [3], []]).to_tensor(default_value=-1, shape=[2, 3]).numpy().tolist()
        [[1, 2, -1], [3, -1, -1]]
        """
        op = "RaggedTensorToTensor"
        sp = self._row_splits
        if sp._h is None and sp._arr is None and not isinstance(self._values, RaggedTensor) and (
                shape is None or (len(shape) == 2 and shape[0] is None)):
            # tracing tf.function (split's result in a graph): one traced primitive pads the rows when it runs
            from .ops.string_ops import ragged_to_dense

            dv = default_value
            if dv is None:
                dv = b"" if self._values._dtype.is_string else 0
            return ragged_to_dense(self._values, sp, dv, None if shape is None else shape[1])
        o = _ops()
        vals = self._values.to_tensor(default_value) if isinstance(self._values, RaggedTensor) else self._values
        dt = vals._dtype
        lens = self.row_lengths()
        n = self.nrows_int()
        width = max(_host_ints(lens), default=0)
        n_out = n
        if shape is not None:
            shape = list(shape.as_list() if hasattr(shape, "as_list") else shape)
            if len(shape) != 1 + len(vals._shape):
                raise InvalidArgumentError(f"shape {shape} has rank {len(shape)}; allowed: rank {1 + len(vals._shape)}",
                                           op)
            n_out = n if shape[0] is None else int(shape[0])
            width = width if shape[1] is None else int(shape[1])
            inner = [int(d) if d is not None else vals._shape[1 + k] for k, d in enumerate(shape[2:])]
            if tuple(inner) != tuple(vals._shape[1:]):
                pad_to = [[0, 0]] + [[0, max(0, a - b)] for a, b in zip(inner, vals._shape[1:])]
                if any(a < b for a, b in zip(inner, vals._shape[1:])):
                    vals = vals[(slice(None),) + tuple(slice(0, a) for a in inner)]
                if any(p[1] for p in pad_to):
                    vals = o.pad(vals, pad_to, constant_values=0 if default_value is None else default_value)
        if default_value is None:
            default_value = b"" if dt.is_string else 0
        if isinstance(default_value, str):
            default_value = default_value.encode("utf-8")
        fill = np.empty((1,) + tuple(vals._shape[1:]), dtype=object if dt.is_string else dt.np)
        fill[...] = default_value
        table = o.concat([vals, convert_to_tensor(fill, dt)], 0)  # the last row is the padding
        nv = _nvals(self._values)
        rows = o.range_(n_out, dtype=_dt.int64)
        rows_in = o.minimum(rows, max(n - 1, 0))
        starts = o.gather(self._row_splits, rows_in) if n else o.zeros([n_out], _dt.int64)
        rlens = o.where(rows < n, o.gather(lens, rows_in), o.zeros_like(rows)) if n else o.zeros([n_out], _dt.int64)
        cols = o.range_(width, dtype=_dt.int64)
        inside = o.less(o.expand_dims(cols, 0), o.expand_dims(rlens, 1))
        index = o.where(inside, o.expand_dims(starts, 1) + o.expand_dims(cols, 0),
                        o.zeros([n_out, width], _dt.int64) + nv)
        return o.gather(table, index)

    # ---- indexing, iteration, printing -----------------------------------------------------------------

    def _gather_rows(self, rows: Tensor) -> RaggedTensor:
        o = _ops()
        lens = o.gather(self.row_lengths(), rows)
        starts = o.gather(self._row_splits, rows)
        splits = o.concat([o.zeros([1], _dt.int64), o.cumsum(lens)], 0)
        total = _host_ints(splits)[-1]
        ids = o.cast(o.searchsorted(splits[1:], o.range_(total, dtype=_dt.int64), side="right"), _dt.int64)
        take = o.range_(total, dtype=_dt.int64) - o.gather(splits, ids) + o.gather(starts, ids)
        v = self._values._gather_rows(take) if isinstance(self._values, RaggedTensor) else o.gather(self._values, take)
        return RaggedTensor(v, splits)

    def __getitem__(self, key):
        op = "RaggedGetItem"
        n = self.nrows_int()
        if isinstance(key, tuple):
            if not key:
                return self
            first, rest = key[0], key[1:]
            row = self[first]
            if not rest:
                return row
            if isinstance(first, slice):
                raise InvalidArgumentError(f"index {key!r}: after a slice of rows only a row index is allowed; "
                                           "allowed: rt[i, ...], rt[a:b]", op)
            return row[rest if len(rest) > 1 else rest[0]]
        if isinstance(key, slice):
            rows = range(n)[key]
            return self._gather_rows(_ops().cast(convert_to_tensor(list(rows) or np.zeros(0, np.int64), _dt.int64),
                                                 _dt.int64))
        try:
            i = int(static_value(key, op, "index"))
        except (TypeError, ValueError):
            raise TypeError(f"a RaggedTensor index must be an int, a slice or a tuple of them, got "
                            f"{type(key).__name__} [Op:{op}]") from None
        if not -n <= i < n:
            raise InvalidArgumentError(f"row {i} is out of range for {n} rows; allowed: [-{n}, {n})", op)
        i %= n
        s = self._row_splits
        start, stop = _host_ints(s[i:i + 2])
        if isinstance(self._values, RaggedTensor):
            return self._values[start:stop]
        return self._values[start:stop]

    def __iter__(self):
        for i in range(self.nrows_int()):
            yield self[i]

    def __len__(self):
        return self.nrows_int()

    def __repr__(self):
        return f"<tf.RaggedTensor {self.to_list()}>"

    __str__ = __repr__

    def __bool__(self):
        raise TypeError("the truth value of a RaggedTensor is ambiguous; compare its values instead")

    # ---- element-wise arithmetic -----------------------------------------------------------------------

    def _binary(self, other, fn, name, reflected=False):
        o = _ops()
        if isinstance(other, RaggedTensor):
            mine, theirs = self.nested_row_splits, other.nested_row_splits
            if len(mine) != len(theirs) or any(
                    a._shape != b._shape or not bool(o.reduce_all(o.equal(a, b))) for a, b in zip(mine, theirs)):
                raise InvalidArgumentError(f"the two RaggedTensors have different row splits ({self.shape} and "
                                           f"{other.shape}); allowed: the same row splits, or a scalar", name)
            ov = other.flat_values
        else:
            ov = to_tensor(other, name, self.dtype if not isinstance(other, Tensor) else None)
            if ov._shape:
                raise InvalidArgumentError(f"the other operand has shape {tuple(ov._shape)}; allowed: a RaggedTensor "
                                           "with the same row splits, or a scalar", name)
        a, b = (ov, self.flat_values) if reflected else (self.flat_values, ov)
        return self.with_flat_values(fn(a, b))

    def __neg__(self):
        return self.with_flat_values(-self.flat_values)

    def __abs__(self):
        return self.with_flat_values(_ops().abs(self.flat_values))

    def __invert__(self):
        return self.with_flat_values(_ops().logical_not(self.flat_values))


def _install_binary():
    import operator

    table = {"add": (operator.add, "AddV2"), "sub": (operator.sub, "Sub"), "mul": (operator.mul, "Mul"),
             "truediv": (operator.truediv, "RealDiv"), "floordiv": (operator.floordiv, "FloorDiv"),
             "mod": (operator.mod, "FloorMod"), "pow": (operator.pow, "Pow")}
    for name, (fn, tf_name) in table.items():
        def fwd(self, other, fn=fn, tf_name=tf_name):
            return self._binary(other, fn, tf_name)

        def rev(self, other, fn=fn, tf_name=tf_name):
            return self._binary(other, fn, tf_name, reflected=True)

        fwd.__doc__ = f"``self {name} other`` on the flat values (same row splits, or a scalar other)."
        rev.__doc__ = f"``other {name} self`` on the flat values (a scalar other)."

        setattr(RaggedTensor, f"__{name}__", fwd)
        setattr(RaggedTensor, f"__r{name}__", rev)
    for name, tf_name in (("lt", "Less"), ("le", "LessEqual"), ("gt", "Greater"), ("ge", "GreaterEqual"),
                          ("and", "LogicalAnd"), ("or", "LogicalOr")):
        fn = getattr(operator, name + "_" if name in ("and", "or") else name)
        setattr(RaggedTensor, f"__{name}__", lambda self, other, fn=fn, tf_name=tf_name:
                self._binary(other, fn, tf_name))


_install_binary()


# ---- tf.ragged functions ------------------------------------------------------------------------------

def _scalar_depth(x):
    """How many list levels lead to the first scalar, or None when there is none (only empty lists)."""
    if not isinstance(x, (list, tuple)):
        return 0
    for c in x:
        d = _scalar_depth(c)
        if d is not None:
            return d + 1
    return None


def _list_depth(x) -> int:
    return 1 + max((_list_depth(c) for c in x), default=0) if isinstance(x, (list, tuple)) else 0


def _depth(x) -> int:
    d = _scalar_depth(x)
    return _list_depth(x) if d is None else d


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None):
    """A RaggedTensor from nested Python lists (rows of any length); ``ragged_rank`` below the nesting depth
    keeps the innermost levels dense.

    >>> import tapeflow as tf
    >>> tf.ragged.constant([[1, 2], [3]]).dtype.name
    'int32'
    >>> tf.ragged.constant([[[1, 2], [3]], [[4]]]).shape
    TensorShape([2, None, None])
    >>> tf.ragged.constant([["a", "b"], ["c"]])
    <tf.RaggedTensor [[b'a', b'b'], [b'c']]>
    """
    op = "RaggedConstant"
    if not isinstance(pylist, (list, tuple)):
        t = convert_to_tensor(pylist, dtype_arg(dtype, op) if dtype is not None else None)
        if t._shape:
            pylist = t._host().tolist()
        else:
            return t
    if inner_shape is not None:
        raise InvalidArgumentError(f"inner_shape = {inner_shape!r}; allowed: None (the values' shape comes from "
                                   "pylist)", op)
    depth = _depth(pylist)
    rank = depth - 1 if ragged_rank is None else int(ragged_rank)
    if not 0 < rank < max(depth, 2):
        raise InvalidArgumentError(f"ragged_rank = {ragged_rank!r} for a nesting depth of {depth}; allowed: 1 to "
                                   f"{max(depth - 1, 1)}", op)
    levels = []
    items = list(pylist)
    for level in range(rank):
        splits = [0]
        flat = []
        for row in items:
            if not isinstance(row, (list, tuple)):
                raise InvalidArgumentError(f"a value {row!r} sits at nesting level {level + 1}; allowed: all scalars "
                                           f"at one depth ({depth})", op)
            flat.extend(row)
            splits.append(len(flat))
        levels.append(splits)
        items = flat
    try:
        arr = np.asarray(items, dtype=object)
    except ValueError:
        arr = None
    if arr is None or arr.ndim != depth - rank or any(isinstance(v, (list, tuple)) for v in arr.reshape(-1)):
        raise InvalidArgumentError(f"the values below ragged_rank {rank} are not uniform lists; allowed: a larger "
                                   "ragged_rank", op)
    dt = dtype_arg(dtype, op) if dtype is not None else None
    if items:
        values = convert_to_tensor(items, dt)  # Python's ints become int32 and floats float32, as TensorFlow's
    else:
        values = convert_to_tensor(np.zeros(arr.shape, (dt or _dt.float32).np if not (dt and dt.is_string)
                                            else object), dt or _dt.float32)
    for splits in reversed(levels):
        values = RaggedTensor(values, convert_to_tensor(np.asarray(splits, np.int64)))
    return values


def map_flat_values(op, *args, **kwargs):
    """``op`` applied to the ``flat_values`` of the RaggedTensors among the arguments (which must share their row
    splits); the result has their ragged structure.

    >>> import tapeflow as tf
    >>> tf.ragged.map_flat_values(tf.square, tf.ragged.constant([[1, 2], [3]])).to_list()
    [[1, 4], [9]]
    """
    ragged = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        raise InvalidArgumentError("map_flat_values needs at least one RaggedTensor argument", "RaggedMapFlatValues")
    first = ragged[0]
    o = _ops()
    for r in ragged[1:]:
        a, b = first.nested_row_splits, r.nested_row_splits
        if len(a) != len(b) or any(x._shape != y._shape or not bool(o.reduce_all(o.equal(x, y)))
                                   for x, y in zip(a, b)):
            raise InvalidArgumentError("the RaggedTensor arguments have different row splits; allowed: the same",
                                       "RaggedMapFlatValues")
    args = [a.flat_values if isinstance(a, RaggedTensor) else a for a in args]
    kwargs = {k: v.flat_values if isinstance(v, RaggedTensor) else v for k, v in kwargs.items()}
    return first.with_flat_values(op(*args, **kwargs))


def _concat(values, axis, name=None) -> RaggedTensor:
    """``tf.concat`` of RaggedTensors (and dense tensors, as ragged rows) of ``ragged_rank`` 1: ``axis`` 0 joins
    the rows, ``axis`` 1 (or -1 for rank 2) joins each row's values, as TensorFlow's ragged dispatch.

    >>> import tapeflow as tf
    >>> a, b = tf.ragged.constant([[1, 2], [3]]), tf.ragged.constant([[4], []])
    >>> tf.concat([a, b], axis=0).to_list(), tf.concat([a, b], axis=1).to_list()
    ([[1, 2], [3], [4], []], [[1, 2, 4], [3]])
    """
    op = "RaggedConcat"
    o = _ops()
    rts = [v if isinstance(v, RaggedTensor) else RaggedTensor.from_tensor(v) for v in values]
    if not rts:
        raise InvalidArgumentError("values is empty; allowed: at least one tensor", op)
    if any(isinstance(r._values, RaggedTensor) for r in rts):
        raise InvalidArgumentError("RaggedTensors of ragged_rank > 1; allowed: ragged_rank 1", op)
    rank = len(rts[0].shape)
    ax = static_value(axis, op, "axis")
    ax = int(ax) + rank if int(ax) < 0 else int(ax)
    if any(len(r.shape) != rank for r in rts) or ax not in (0, 1):
        raise InvalidArgumentError(f"axis = {axis} for ragged tensors of ranks {[len(r.shape) for r in rts]}; allowed: "
                                   "0 or 1 over tensors of one rank", op)
    if ax == 0:
        return RaggedTensor.from_row_lengths(o.concat([r._values for r in rts], 0),
                                             o.concat([r.row_lengths() for r in rts], 0))
    n = rts[0].nrows_int()
    if any(r.nrows_int() != n for r in rts):
        raise InvalidArgumentError(f"the inputs have {[r.nrows_int() for r in rts]} rows; allowed: the same number "
                                   "to join along axis 1", op)
    splits = [_host_ints(r._row_splits) for r in rts]
    base = np.cumsum([0] + [s[-1] for s in splits[:-1]])
    order, lens = [], []  # each output row: input k's row i, at input k's offset in the concatenated values
    for i in range(n):
        for k, s in enumerate(splits):
            order.extend(range(base[k] + s[i], base[k] + s[i + 1]))
        lens.append(sum(s[i + 1] - s[i] for s in splits))
    vals = o.gather(o.concat([r._values for r in rts], 0), convert_to_tensor(np.asarray(order, np.int64)))
    return RaggedTensor.from_row_lengths(vals, convert_to_tensor(np.asarray(lens, np.int64)))


_SEGMENT = {"sum": "unsorted_segment_sum", "max": "unsorted_segment_max", "min": "unsorted_segment_min",
            "prod": "unsorted_segment_prod"}


def _reduce(kind, rt, axis, keepdims, tf_name):
    o = _ops()
    dense = {"sum": o.reduce_sum, "max": o.reduce_max, "min": o.reduce_min, "prod": o.reduce_prod,
             "mean": o.reduce_mean}[kind]
    if keepdims:
        raise InvalidArgumentError("keepdims=True on a RaggedTensor; allowed: keepdims=False", tf_name)
    if axis is None:
        return dense(rt.flat_values)
    ndim = len(rt.shape)
    ax = static_value(axis, tf_name, "axis")
    if isinstance(ax, (list, tuple)) or (hasattr(ax, "ndim") and ax.ndim):
        axes = sorted({int(a) % ndim for a in np.asarray(ax).reshape(-1)}, reverse=True)
        for a in axes:  # innermost first keeps the outer axes' numbers
            rt = _reduce(kind, rt, a, False, tf_name)
        return rt
    a = int(ax)
    if not -ndim <= a < ndim:
        raise InvalidArgumentError(f"axis = {a} for a RaggedTensor of rank {ndim}; allowed: [-{ndim}, {ndim})", tf_name)
    a %= ndim
    if a >= 2:
        sub = rt.values
        inner = _reduce(kind, sub, a - 1, False, tf_name) if isinstance(sub, RaggedTensor) else dense(sub, axis=a - 1)
        return rt.with_values(inner)
    if isinstance(rt.values, RaggedTensor):
        raise InvalidArgumentError(f"axis = {a} of a RaggedTensor with ragged_rank {rt.ragged_rank}; allowed: an axis "
                                   f">= 2, or None (reduce the ragged dimensions of a ragged_rank-1 tensor)", tf_name)
    vals = rt.values
    if a == 1:
        ids, n = rt.value_rowids(), rt.nrows_int()
    else:
        ids, n = rt._positions(), max(_host_ints(rt.row_lengths()), default=0)
    if kind == "mean":
        total = o.unsorted_segment_sum(vals, ids, n)
        count = o.unsorted_segment_sum(o.ones_like(ids), ids, n)
        count = o.reshape(o.cast(count, vals._dtype), [n] + [1] * (len(vals._shape) - 1))
        return total / count
    return getattr(o, _SEGMENT[kind])(vals, ids, n)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum of a RaggedTensor over ``axis`` (None: every value; 1: each row; 0: each column).

    >>> import tapeflow as tf
    >>> rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    >>> tf.reduce_sum(rt, axis=1).numpy().tolist(), tf.reduce_sum(rt, axis=0).numpy().tolist(), int(tf.reduce_sum(rt))
    ([3, 3, 0, 15], [8, 7, 6], 21)
    """
    return _reduce("sum", input_tensor, axis, keepdims, "RaggedReduceSum")


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean of a RaggedTensor over ``axis`` (an empty row's float mean is NaN, as TensorFlow's).

    >>> import tapeflow as tf
    >>> tf.reduce_mean(tf.ragged.constant([[1.0, 2.0], [3.0]]), axis=1).numpy().tolist()
    [1.5, 3.0]
    """
    return _reduce("mean", input_tensor, axis, keepdims, "RaggedReduceMean")


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """Maximum of a RaggedTensor over ``axis`` (an empty row gives the dtype's lowest value, as TensorFlow's).

    >>> import tapeflow as tf
    >>> tf.reduce_max(tf.ragged.constant([[1, 5], [3]]), axis=1).numpy().tolist()
    [5, 3]
    """
    return _reduce("max", input_tensor, axis, keepdims, "RaggedReduceMax")


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """Minimum of a RaggedTensor over ``axis`` (an empty row gives the dtype's highest value).

    >>> import tapeflow as tf
    >>> tf.reduce_min(tf.ragged.constant([[1, 5], [3]]), axis=1).numpy().tolist()
    [1, 3]
    """
    return _reduce("min", input_tensor, axis, keepdims, "RaggedReduceMin")


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product of a RaggedTensor over ``axis`` (an empty row gives 1).

    >>> import tapeflow as tf
    >>> tf.reduce_prod(tf.ragged.constant([[2, 5], [3], []]), axis=1).numpy().tolist()
    [10, 3, 1]
    """
    return _reduce("prod", input_tensor, axis, keepdims, "RaggedReduceProd")
