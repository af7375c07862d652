"""``tf.sparse`` and ``tf.SparseTensor``: a tensor stored as the coordinates and values of its non-zero entries.

A SparseTensor is ``indices`` (int64, ``[N, rank]``, row-major order), ``values`` (``[N]``) and ``dense_shape``
(int64, ``[rank]``), as TensorFlow's.  The operations are tapeflow ops over those parts (``scatter_nd``,
``gather``, ``unsorted_segment_sum``, ``unique``, ``argsort``), so a tape differentiates
``sparse_dense_matmul`` with respect to the dense operand and the values; the indices are only read on the
host to check them.

>>> import tapeflow as tf
>>> st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
>>> tf.sparse.to_dense(st).numpy().tolist()
[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
>>> tf.sparse.sparse_dense_matmul(st, tf.ones([4, 2])).numpy().tolist()
[[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .dispatch import static_value, to_tensor
from .errors import InvalidArgumentError
from .tensor import Tensor, TensorShape, convert_to_tensor

__all__ = ["SparseTensor", "from_dense", "to_dense", "sparse_dense_matmul", "matmul", "reduce_sum", "add", "reorder",
           "transpose", "retain"]


def _ops():
    from . import ops

    return ops


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t._host())


def _sparse_arg(x, op) -> SparseTensor:
    if not isinstance(x, SparseTensor):
        raise TypeError(f"expected a SparseTensor, got {type(x).__name__}; allowed: tf.sparse.SparseTensor [Op:{op}]")
    return x


class SparseTensor:
    """A sparse tensor: ``values[k]`` sits at ``indices[k]`` of a tensor of shape ``dense_shape``, zeros elsewhere.

    >>> import tapeflow as tf
    >>> st = tf.SparseTensor(indices=[[0, 1]], values=[7], dense_shape=[2, 2])
    >>> st.shape, st.dtype.name, st.indices.dtype.name
    (TensorShape([2, 2]), 'int32', 'int64')
    """

    def __init__(self, indices, values, dense_shape) -> None:
        op = "SparseTensor"
        ind = to_tensor(indices, op, _dt.int64 if not isinstance(indices, Tensor) else None)
        if ind._dtype not in (_dt.int32, _dt.int64):
            raise InvalidArgumentError(f"indices has dtype {ind._dtype.name}; allowed: int64", op)
        shp = to_tensor(dense_shape, op, _dt.int64 if not isinstance(dense_shape, Tensor) else None)
        if shp._dtype not in (_dt.int32, _dt.int64):
            raise InvalidArgumentError(f"dense_shape has dtype {shp._dtype.name}; allowed: int64", op)
        o = _ops()
        ind = ind if ind._dtype is _dt.int64 else o.cast(ind, _dt.int64)
        shp = shp if shp._dtype is _dt.int64 else o.cast(shp, _dt.int64)
        vals = to_tensor(values, op)
        if len(shp._shape) != 1:
            raise InvalidArgumentError(f"dense_shape has shape {tuple(shp._shape)}; allowed: a vector", op)
        if len(vals._shape) != 1:
            raise InvalidArgumentError(f"values has shape {tuple(vals._shape)}; allowed: a vector", op)
        rank = shp._shape[0]
        if ind._shape == (0,):
            ind = o.zeros([0, rank], _dt.int64)
        if len(ind._shape) != 2 or ind._shape[1] != rank or ind._shape[0] != vals._shape[0]:
            raise InvalidArgumentError(f"indices of shape {tuple(ind._shape)} for {vals._shape[0]} values of a rank-"
                                       f"{rank} tensor; allowed: shape ({vals._shape[0]}, {rank})", op)
        self._indices, self._values, self._dense_shape = ind, vals, shp

    @property
    def indices(self) -> Tensor:
        """The coordinates of the stored values (int64, ``[N, rank]``).

        >>> import tapeflow as tf
        >>> tf.SparseTensor([[0, 1]], [7], [2, 3]).indices.numpy().tolist()
        [[0, 1]]
        """
        return self._indices

    @property
    def values(self) -> Tensor:
        """The stored values (``[N]``).

        >>> import tapeflow as tf
        >>> tf.SparseTensor([[0, 1]], [7], [2, 3]).values.numpy().tolist()
        [7]
        """
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        """The shape of the dense tensor (int64, ``[rank]``).

        >>> import tapeflow as tf
        >>> tf.SparseTensor([[0, 1]], [7], [2, 3]).dense_shape.numpy().tolist()
        [2, 3]
        """
        return self._dense_shape

    @property
    def dtype(self):
        """The values' dtype.

        >>> import tapeflow as tf
        >>> tf.SparseTensor([[0, 1]], [7], [2, 3]).dtype.name
        'int32'
        """
        return self._values._dtype

    @property
    def shape(self) -> TensorShape:
        """The dense shape as a TensorShape.

        >>> import tapeflow as tf
        >>> tf.SparseTensor([[0, 1]], [7], [2, 3]).shape
        TensorShape([2, 3])
        """
        return TensorShape(tuple(int(d) for d in _host(self._dense_shape)))

    def with_values(self, new_values) -> SparseTensor:
        """The same indices and shape with ``new_values``.

        >>> import tapeflow as tf
        >>> tf.SparseTensor([[1]], [2.0], [3]).with_values([5.0]).values.numpy().tolist()
        [5.0]
        """
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __repr__(self):
        return f"SparseTensor(indices={self._indices}, values={self._values}, dense_shape={self._dense_shape})"

    __str__ = __repr__

    def _keys(self, shape=None) -> Tensor:
        """Each entry's row-major linear position (int64)."""
        o = _ops()
        dims = [int(d) for d in _host(self._dense_shape)] if shape is None else shape
        strides = [1] * len(dims)
        for k in range(len(dims) - 2, -1, -1):
            strides[k] = strides[k + 1] * dims[k + 1]
        return o.reduce_sum(self._indices * convert_to_tensor(np.asarray(strides, np.int64)), axis=1)

    def _check(self, op, ordered=True):
        idx, dims = _host(self._indices), _host(self._dense_shape)
        for k, row in enumerate(idx):
            if (row < 0).any() or (row >= dims).any():
                raise InvalidArgumentError(f"indices[{k}] = {row.tolist()} is out of bounds: need 0 <= index < "
                                           f"{dims.tolist()}", op)
        if ordered and len(idx) > 1:
            for k in range(1, len(idx)):
                a, b = tuple(int(v) for v in idx[k - 1]), tuple(int(v) for v in idx[k])
                if b < a:
                    raise InvalidArgumentError(f"indices[{k}] = {list(b)} is out of order. Many sparse ops require "
                                               "sorted indices. Use `tf.sparse.reorder` to create a correctly "
                                               "ordered copy.", op)
                if b == a:
                    raise InvalidArgumentError(f"indices[{k}] = {list(b)} is repeated", op)


def from_dense(tensor, name=None) -> SparseTensor:
    """The non-zero entries of a dense tensor.

    >>> import tapeflow as tf
    >>> st = tf.sparse.from_dense([[0, 3, 0], [4, 0, 5]])
    >>> st.indices.numpy().tolist(), st.values.numpy().tolist()
    ([[0, 1], [1, 0], [1, 2]], [3, 4, 5])
    """
    o = _ops()
    t = to_tensor(tensor, "SparseFromDense")
    zero = b"" if t._dtype.is_string else (False if t._dtype is _dt.bool_ else 0)
    idx = o.where(o.not_equal(t, zero))
    return SparseTensor(idx, o.gather_nd(t, idx), o.shape(t, out_type=_dt.int64))


def to_dense(sp_input, default_value=None, validate_indices=True, name=None) -> Tensor:
    """The dense tensor: the values at their indices, ``default_value`` (0) elsewhere.  With
    ``validate_indices`` the indices must be in bounds, sorted and distinct (as TensorFlow).

    >>> import tapeflow as tf
    >>> tf.sparse.to_dense(tf.SparseTensor([[1]], [2], [3]), default_value=-1).numpy().tolist()
    [-1, 2, -1]
    """
    op = "SparseToDense"
    sp = _sparse_arg(sp_input, op)
    sp._check(op, ordered=bool(validate_indices))
    o = _ops()
    dims = [int(d) for d in _host(sp._dense_shape)]
    if default_value is None:
        return o.scatter_nd(sp._indices, sp._values, dims) if not validate_indices and not sp.dtype.is_string else \
            o.tensor_scatter_nd_update(o.zeros(dims, sp.dtype), sp._indices, sp._values)
    base = o.fill(dims, convert_to_tensor(default_value, sp.dtype)) if dims else convert_to_tensor(default_value,
                                                                                                     sp.dtype)
    return o.tensor_scatter_nd_update(base, sp._indices, sp._values)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None) -> Tensor:
    """``sp_a @ b`` for a rank-2 SparseTensor and a dense matrix (either operand may be the sparse one), with
    ``adjoint_a``/``adjoint_b`` transposing an operand first; differentiable in the dense operand and the values.

    ``out[i] = sum_k values[k] * b[col_k]`` over the entries ``k`` of row ``i``.

    >>> import tapeflow as tf
    >>> st = tf.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
    >>> tf.sparse.sparse_dense_matmul(st, [[1.0], [10.0]]).numpy().tolist()
    [[20.0], [3.0]]
    """
    op = "SparseTensorDenseMatMul"
    o = _ops()
    if not isinstance(sp_a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise TypeError(f"neither operand is a SparseTensor; allowed: one SparseTensor and one dense matrix "
                            f"[Op:{op}]")
        # a @ sp = (sp^T @ a^T)^T
        return o.transpose(sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a))
    dense = to_tensor(b, op)
    if len(sp_a._dense_shape._shape) != 1 or sp_a._dense_shape._shape[0] != 2 or len(dense._shape) != 2:
        raise InvalidArgumentError(f"operands of rank {sp_a._dense_shape._shape[0]} and {len(dense._shape)}; "
                                   "allowed: a rank-2 SparseTensor and a matrix", op)
    if dense._dtype is not sp_a.dtype:
        raise InvalidArgumentError(f"values are {sp_a.dtype.name} and the dense operand {dense._dtype.name}; allowed: "
                                   "one dtype", op)
    sp_a._check(op, ordered=False)
    m, k = (int(d) for d in _host(sp_a._dense_shape))
    rows, cols = sp_a._indices[:, 0], sp_a._indices[:, 1]
    if adjoint_a:
        m, k, rows, cols = k, m, cols, rows
    if adjoint_b:
        dense = o.transpose(dense)
    if dense._shape[0] != k:
        raise InvalidArgumentError(f"inner dimensions differ: ({m}, {k}) @ {tuple(dense._shape)}", op)
    contrib = o.expand_dims(sp_a._values, 1) * o.gather(dense, cols)
    return o.unsorted_segment_sum(contrib, rows, m)


matmul = sparse_dense_matmul


def _merge(indices, values, shape, op) -> SparseTensor:
    """Entries with the same index summed, in row-major order."""
    o = _ops()
    tmp = SparseTensor(indices, values, shape)
    keys = tmp._keys()
    uniq, pos = o.unique(keys)
    n = uniq._shape[0]
    sums = o.unsorted_segment_sum(values, pos, n)
    first = o.unsorted_segment_min(o.range_(keys._shape[0]), pos, n)
    order = o.argsort(uniq)
    return SparseTensor(o.gather(o.gather(indices, first), order), o.gather(sums, order), shape)


def reduce_sum(sp_input, axis=None, keepdims=False, output_is_sparse=False, name=None):
    """Sum of the entries over ``axis`` (None: all); a dense tensor, or a SparseTensor with ``output_is_sparse``.

    >>> import tapeflow as tf
    >>> st = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
    >>> float(tf.sparse.reduce_sum(st)), tf.sparse.reduce_sum(st, axis=1).numpy().tolist()
    (3.0, [1.0, 2.0, 0.0])
    """
    op = "SparseReduceSum"
    sp = _sparse_arg(sp_input, op)
    sp._check(op, ordered=False)
    o = _ops()
    dims = [int(d) for d in _host(sp._dense_shape)]
    rank = len(dims)
    if axis is None:
        axes = list(range(rank))
    else:
        ax = static_value(axis, op, "axis")
        axes = [int(a) for a in np.asarray(ax).reshape(-1)]
        for a in axes:
            if not -rank <= a < rank:
                raise InvalidArgumentError(f"axis = {a} for a SparseTensor of rank {rank}; allowed: [-{rank}, {rank})",
                                           op)
        axes = sorted({a % rank for a in axes})
    keep = [d for d in range(rank) if d not in axes]
    out_dims = [1 if d in axes else dims[d] for d in range(rank)] if keepdims else [dims[d] for d in keep]
    if keepdims:
        idx = sp._indices * convert_to_tensor(np.asarray([0 if d in axes else 1 for d in range(rank)], np.int64))
    else:
        idx = o.gather(sp._indices, keep, axis=1) if keep else o.zeros([sp._values._shape[0], 0], _dt.int64)
    if not out_dims:
        total = o.reduce_sum(sp._values)
        if output_is_sparse:
            return SparseTensor(o.zeros([1, 0], _dt.int64), o.reshape(total, [1]), o.zeros([0], _dt.int64))
        return total
    if not output_is_sparse:  # scatter_nd sums entries that land on one index: no merge (which needs the count of
        return o.scatter_nd(idx, sp._values, out_dims)  # distinct indices, unknown while tracing tf.function)
    return _merge(idx, sp._values, convert_to_tensor(np.asarray(out_dims, np.int64)), op)


def reorder(sp_input, name=None) -> SparseTensor:
    """The entries in row-major order of their indices.

    >>> import tapeflow as tf
    >>> tf.sparse.reorder(tf.SparseTensor([[1, 2], [0, 0]], [2.0, 1.0], [3, 4])).indices.numpy().tolist()
    [[0, 0], [1, 2]]
    """
    op = "SparseReorder"
    sp = _sparse_arg(sp_input, op)
    sp._check(op, ordered=False)
    o = _ops()
    order = o.argsort(sp._keys())
    return SparseTensor(o.gather(sp._indices, order), o.gather(sp._values, order), sp._dense_shape)


def add(a, b, threshold=0, name=None):
    """``a + b``: two SparseTensors of one shape give a SparseTensor (entries at the same index summed; sums of
    magnitude below ``threshold`` dropped), a SparseTensor and a dense tensor give a dense tensor.

    >>> import tapeflow as tf
    >>> a = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    >>> s = tf.sparse.add(a, tf.SparseTensor([[1, 1], [0, 0]], [5.0, 2.0], [2, 2]))
    >>> s.indices.numpy().tolist(), s.values.numpy().tolist()
    ([[0, 0], [1, 1]], [3.0, 5.0])
    """
    op = "SparseAdd"
    o = _ops()
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise TypeError(f"neither operand is a SparseTensor; allowed: at least one SparseTensor [Op:{op}]")
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sp, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
        dense = to_tensor(dense, op)
        if tuple(dense._shape) != tuple(sp.shape):
            raise InvalidArgumentError(f"shapes differ: {tuple(sp.shape)} and {tuple(dense._shape)}", op)
        return to_dense(sp, validate_indices=False) + dense
    if a.shape != b.shape:
        raise InvalidArgumentError(f"shapes differ: {tuple(a.shape)} and {tuple(b.shape)}; allowed: one shape", op)
    if a.dtype is not b.dtype:
        raise InvalidArgumentError(f"dtypes differ: {a.dtype.name} and {b.dtype.name}", op)
    a._check(op, ordered=False)
    b._check(op, ordered=False)
    merged = _merge(o.concat([a._indices, b._indices], 0), o.concat([a._values, b._values], 0), a._dense_shape, op)
    thr = float(static_value(threshold, op, "threshold"))
    if thr > 0:
        keep = o.greater_equal(o.abs(merged._values), o.cast(thr, merged.dtype))
        return retain(merged, keep)
    return merged


def transpose(sp_input, perm=None, name=None) -> SparseTensor:
    """The SparseTensor with its dimensions permuted by ``perm`` (reversed by default), reordered.

    >>> import tapeflow as tf
    >>> t = tf.sparse.transpose(tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4]))
    >>> t.indices.numpy().tolist(), t.dense_shape.numpy().tolist()
    ([[0, 0], [2, 1]], [4, 3])
    """
    op = "SparseTranspose"
    sp = _sparse_arg(sp_input, op)
    rank = sp._dense_shape._shape[0]
    p = list(range(rank))[::-1] if perm is None else [int(v) for v in np.asarray(static_value(perm, op, "perm"))]
    if sorted(p) != list(range(rank)):
        raise InvalidArgumentError(f"perm = {p}; allowed: a permutation of {list(range(rank))}", op)
    o = _ops()
    if rank == 0:
        return sp
    out = SparseTensor(o.gather(sp._indices, p, axis=1), sp._values, o.gather(sp._dense_shape, p))
    return reorder(out)


def retain(sp_input, to_retain) -> SparseTensor:
    """The entries where the boolean vector ``to_retain`` is True.

    >>> import tapeflow as tf
    >>> tf.sparse.retain(tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4]), [False, True]).values.numpy().tolist()
    [2.0]
    """
    op = "SparseRetain"
    sp = _sparse_arg(sp_input, op)
    keep = to_tensor(to_retain, op)
    if keep._dtype is not _dt.bool_ or tuple(keep._shape) != (sp._values._shape[0],):
        raise InvalidArgumentError(f"to_retain is a {keep._dtype.name} tensor of shape {tuple(keep._shape)}; allowed: "
                                   f"a bool vector of length {sp._values._shape[0]}", op)
    o = _ops()
    return SparseTensor(o.boolean_mask(sp._indices, keep), o.boolean_mask(sp._values, keep), sp._dense_shape)
