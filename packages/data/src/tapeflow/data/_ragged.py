"""Ragged tensors in tf.data: ``from_tensor_slices`` of a ``tf.RaggedTensor``, ``ragged_batch``, and ``batch`` of
a dataset whose elements are ragged, as TensorFlow 2's.

The rows of a RaggedTensor with ``ragged_rank`` 1 are dense tensors of different lengths (their spec is a
:class:`RaggedTensorSpec` with ``ragged_rank=0``, as TensorFlow's); deeper ones are RaggedTensors.  Batching
them gives RaggedTensors again; ``padded_batch`` refuses them (TensorFlow's TypeError).

>>> import tapeflow as tf
>>> ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [3], []]))
>>> [e.numpy().tolist() for e in ds]
[[1, 2], [3], []]
>>> [b.to_list() for b in ds.batch(2)]
[[[1, 2], [3]], [[]]]
"""
from __future__ import annotations

from itertools import islice

from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.ragged import RaggedTensor
from tapeflow.core.tensor import Tensor

from . import _batching as B
from . import _structure as S
from ._common import _close, _count
from ._structure import TensorSpec
from .dataset import Dataset


class RaggedTensorSpec(TensorSpec):
    """The spec of a ragged component: its shape (None for ragged dimensions), dtype and ``ragged_rank``.

    >>> import tapeflow as tf
    >>> tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [3]])).element_spec
    RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)
    """

    __slots__ = ("ragged_rank", "row_splits_dtype")

    def __init__(self, shape=None, dtype=_dt.float32, ragged_rank=None, row_splits_dtype=_dt.int64, name=None) -> None:
        super().__init__(shape, dtype, name)
        rank = len(self.shape) if self.shape is not None else None
        self.ragged_rank = (rank - 1 if rank else 0) if ragged_rank is None else int(ragged_rank)
        self.row_splits_dtype = _dt.as_dtype(row_splits_dtype)
        if rank is not None and not 0 <= self.ragged_rank < max(rank, 1):
            raise InvalidArgumentError(f"ragged_rank = {self.ragged_rank} for a shape of rank {rank}; allowed: 0 to "
                                       f"{max(rank - 1, 0)}", "RaggedTensorSpec")

    @classmethod
    def from_value(cls, value) -> TensorSpec:
        if isinstance(value, RaggedTensor):
            return cls(value.shape, value.dtype, value.ragged_rank)
        return TensorSpec.from_value(value)

    def is_compatible_with(self, other) -> bool:
        if isinstance(other, RaggedTensor):
            other = RaggedTensorSpec.from_value(other)
        return super().is_compatible_with(other) and getattr(other, "ragged_rank", 0) == self.ragged_rank

    def most_specific_compatible(self, other) -> RaggedTensorSpec:
        return RaggedTensorSpec(S.merge_shapes(self.shape, other.shape), self.dtype, self.ragged_rank,
                                self.row_splits_dtype, self.name)

    def __eq__(self, other):
        return (isinstance(other, RaggedTensorSpec) and super().__eq__(other) and self.ragged_rank ==
                other.ragged_rank)

    def __hash__(self):
        return hash((self.shape, self.dtype.name, self.ragged_rank))

    def __repr__(self):
        return f"RaggedTensorSpec({self.shape!r}, {self.dtype!r}, {self.ragged_rank}, {self.row_splits_dtype!r})"


def has_ragged(value) -> bool:
    """Whether a source structure holds a RaggedTensor."""
    return any(isinstance(v, RaggedTensor) for v in S.flatten(value))


def upstream_ragged(ds) -> bool:
    """Whether ``ds`` reads (through any chain of transformations) a ragged source or a ragged batch: then its
    element spec is worth looking at for RaggedTensorSpecs."""
    stack = [ds]
    while stack:
        d = stack.pop()
        if isinstance(d, (RaggedSliceDataset, RaggedBatchDataset)):
            return True
        stack.extend(d._inputs)
    return False


def spec_has_ragged(spec) -> bool:
    return any(isinstance(s, RaggedTensorSpec) for s in S.flatten(spec))


def _components(value, op):
    if isinstance(value, tuple):
        vals = [_components(v, op) for v in value]
        return type(value)(*vals) if hasattr(type(value), "_fields") else tuple(vals)
    if isinstance(value, dict):
        return type(value)((k, _components(v, op)) for k, v in value.items())
    if isinstance(value, (RaggedTensor, S.SparseTensor)):
        return value
    return S.to_components(value, op)


class RaggedSliceDataset(Dataset):
    """``Dataset.from_tensor_slices`` of a structure holding RaggedTensors or SparseTensors: one element per row."""

    def __init__(self, tensors) -> None:
        op = "TensorSliceDataset"
        self._structure = _components(tensors, op)
        self._flat = S.flatten(self._structure)
        dims = []
        for i, c in enumerate(self._flat):
            n = c.nrows_int() if isinstance(c, RaggedTensor) else (c.shape[0] if getattr(c, "shape", ()) else None)
            if n is None:
                raise InvalidArgumentError(f"component {i} is a scalar (shape ()); slicing needs rank >= 1", op)
            dims.append(int(n))
        if len(set(dims)) > 1:
            raise InvalidArgumentError(f"all components must have the same size in their first dimension; got "
                                       f"{dims}", op)
        self._n = dims[0]

    def _iterator(self, ctx):
        for i in range(self._n):
            yield S.pack(self._structure, [B.sparse_row(c, i) if isinstance(c, S.SparseTensor) else c[i]
                                           for c in self._flat])

    def _compute_spec(self):
        def spec(c):
            if isinstance(c, RaggedTensor):
                return RaggedTensorSpec(tuple(c.shape)[1:], c.dtype, c.ragged_rank - 1)
            if isinstance(c, S.SparseTensor):
                return S.SparseTensorSpec(tuple(c.shape)[1:], c.dtype)
            return TensorSpec.from_value(c[0]) if self._n else TensorSpec(tuple(c.shape)[1:], c.dtype)
        return S.pack(self._structure, [spec(c) for c in self._flat])

    def _card(self):
        return self._n


def _stack_ragged(rows, op) -> RaggedTensor:
    """Rows (dense tensors of rank >= 1, or RaggedTensors) as one RaggedTensor with a ragged first row axis."""
    from tapeflow.core import ops

    if all(isinstance(r, RaggedTensor) for r in rows):
        values = _concat_ragged(rows, op)
        return RaggedTensor.from_row_lengths(values, [r.nrows_int() for r in rows])
    if any(isinstance(r, RaggedTensor) or not isinstance(r, Tensor) or not r.shape for r in rows):
        raise InvalidArgumentError("a ragged component's rows must all be tensors of rank >= 1 or all "
                                   "RaggedTensors", op)
    inner = {tuple(r.shape[1:]) for r in rows}
    if len(inner) > 1:
        raise InvalidArgumentError(f"rows with different inner shapes {sorted(inner)}; allowed: rows that differ in "
                                   "their first dimension only", op)
    return RaggedTensor.from_row_lengths(ops.concat(list(rows), 0), [int(r.shape[0]) for r in rows])


def _concat_ragged(rows, op) -> RaggedTensor:
    """RaggedTensors joined along their first (row) axis."""
    from tapeflow.core import ops

    if all(isinstance(r.values, RaggedTensor) for r in rows):
        values = _concat_ragged([r.values for r in rows], op)
    elif not any(isinstance(r.values, RaggedTensor) for r in rows):
        values = ops.concat([r.values for r in rows], 0)
    else:
        raise InvalidArgumentError("RaggedTensors of different ragged_rank in one component", op)
    return RaggedTensor.from_row_lengths(values, ops.concat([r.row_lengths() for r in rows], 0))


class RaggedBatchDataset(Dataset):
    """What ``Dataset.ragged_batch`` returns (and ``batch`` over ragged elements): components whose spec is
    ragged or has unknown dimensions become RaggedTensors; the others are stacked."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False, all_unknown=True) -> None:
        op = "RaggedBatchDataset" if all_unknown else "BatchDataset"
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._bs = _count(batch_size, "batch_size", op, 1)
        self._drop = bool(drop_remainder)
        self._all, self._op = all_unknown, op

    def _ragged(self, s) -> bool:
        if isinstance(s, RaggedTensorSpec):
            return True
        return self._all and (s.shape is None or None in tuple(s.shape))

    def _iterator(self, ctx):
        from tapeflow.core import ops

        spec = self._input.element_spec
        flags = [self._ragged(s) for s in S.flatten(spec)]
        pk = S.packer(spec)
        it = self._input._iterator(ctx)
        try:
            while True:
                elems = list(islice(it, self._bs))
                if not elems or (self._drop and len(elems) < self._bs):
                    return
                cols = zip(*[S.flatten(e) for e in elems])
                yield pk([_stack_ragged(list(c), self._op) if f else ops.stack(list(c), 0)
                          for c, f in zip(cols, flags)])
        finally:
            _close(it)

    def _compute_spec(self):
        first = self._bs if self._drop else None

        def one(s):
            shape = None if s.shape is None else (first,) + tuple(s.shape)
            if self._ragged(s):
                rank = getattr(s, "ragged_rank", 0) + 1
                return RaggedTensorSpec(shape, s.dtype, rank)
            return TensorSpec(shape, s.dtype)
        return S.map_structure(one, self._input.element_spec)

    def _card(self):
        n = self._input._card()
        if n < 0:
            return n
        return n // self._bs if self._drop else -(-n // self._bs)
