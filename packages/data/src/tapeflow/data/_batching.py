"""Moving rows between tensors in whole batches: gather, stack, split into rows, pad.

Each helper makes one kernel call per component and batch (``tf.gather``, ``tf.stack``,
``tf.pad``), never one per element, except :func:`rows`, which makes zero-copy row views on
the CPU.  Text components (``bytes``) live in NumPy object arrays, as text is not a tensor.
"""
from __future__ import annotations

import numpy as np
from tapeflow.core.devices import device as _on
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.ops import concat as _concat
from tapeflow.core.ops import gather as _gather
from tapeflow.core.ops import pad as _pad
from tapeflow.core.ops import stack as _stack
from tapeflow.core.ops import unstack as _unstack
from tapeflow.core.sparse import SparseTensor
from tapeflow.core.tensor import Tensor, TensorShape, constant, make

from . import _structure as S


def gather(t, idx: np.ndarray):
    """Rows ``idx`` of ``t`` (a tensor or a text array) in one kernel call."""
    if isinstance(t, np.ndarray):
        return t[idx]
    with _on(t._dev):  # the pipeline's data stays where it lives, whatever the caller's tf.device scope
        return _gather(t, constant(idx))


def stack(values: list, op: str = "BatchDataset", what: str = "component 0"):
    """Stack same-shaped leaves on a new first axis (one kernel call)."""
    first = values[0]
    if isinstance(first, Tensor):
        shape, dt = first._shape, first._dtype
        for i, v in enumerate(values):
            if not isinstance(v, Tensor) or v._shape != shape or v._dtype is not dt:
                _mismatch(first, v, i, op, what)
        with _on(first._dev):
            return _stack(values, 0)
    if isinstance(first, (bytes, np.ndarray)):
        shp = np.shape(first)
        for i, v in enumerate(values):
            if not S._is_text(v) or np.shape(v) != shp:
                _mismatch(first, v, i, op, what)
        out = np.empty((len(values),) + shp, object)
        for i, v in enumerate(values):
            out[i] = v
        return out
    if isinstance(first, SparseTensor):
        return _stack_sparse(values, op, what)
    raise InvalidArgumentError(f"cannot batch a {type(first).__name__} in {what}", op)


def _stack_sparse(values: list, op: str, what: str) -> SparseTensor:
    """SparseTensors of one rank and dtype as one SparseTensor with a leading batch dimension (TensorFlow's batch
    of sparse elements: each dense dimension the largest of the elements')."""
    first = values[0]
    rank, dt = first.shape.rank, first.dtype
    for i, v in enumerate(values):
        if not isinstance(v, SparseTensor) or v.shape.rank != rank or v.dtype is not dt:
            desc = (f"a SparseTensor of rank {v.shape.rank} and dtype {v.dtype.name}" if isinstance(v, SparseTensor)
                    else type(v).__name__)
            raise InvalidArgumentError(f"Cannot batch SparseTensors in {what}: the first has rank {rank} and dtype "
                                       f"{dt.name}, element {i} is {desc}", op)
    dims = np.max(np.stack([np.asarray(v.dense_shape.numpy(), np.int64) for v in values]), axis=0) \
        if rank else np.zeros(0, np.int64)
    idx = [np.asarray(v.indices.numpy(), np.int64).reshape(-1, rank) for v in values]
    rows = np.concatenate([np.full((len(ix), 1), i, np.int64) for i, ix in enumerate(idx)] or
                          [np.zeros((0, 1), np.int64)])
    indices = np.concatenate([rows, np.concatenate(idx) if idx else np.zeros((0, rank), np.int64)], axis=1)
    with _on(first.values._dev):
        vals = _concat([v.values for v in values], 0)
    return SparseTensor(constant(indices), vals, [len(values)] + [int(d) for d in dims])


def sparse_row(st, i: int):
    """Row ``i`` of a SparseTensor: its entries whose first index is ``i``, one dimension fewer (TensorFlow's slice
    of a SparseTensor in ``from_tensor_slices``)."""
    idx = np.asarray(st.indices.numpy(), np.int64).reshape(-1, st.shape.rank)
    pos = np.flatnonzero(idx[:, 0] == i)
    values = _gather(st.values, constant(pos, np.int64))
    return SparseTensor(constant(idx[pos, 1:].reshape(len(pos), st.shape.rank - 1), np.int64), values,
                          [int(d) for d in np.asarray(st.dense_shape.numpy()).reshape(-1)[1:]])


def _mismatch(first, v, i, op, what):
    def desc(x):
        if isinstance(x, Tensor):
            return f"shape {list(x.shape)} and dtype {x.dtype.name}"
        return f"shape {list(np.shape(x))} and dtype string"
    raise InvalidArgumentError(f"Cannot batch tensors with different shapes in {what}. First element had "
                               f"{desc(first)} and element {i} had {desc(v)}", op)


def rows(t) -> list:
    """The rows of ``t`` along the first axis: zero-copy views on the CPU, ``tf.unstack`` elsewhere."""
    if isinstance(t, np.ndarray):
        return list(t) if t.ndim > 1 else [bytes(x) for x in t]
    if isinstance(t, SparseTensor):
        if not t.shape.rank:
            raise InvalidArgumentError("cannot split a scalar SparseTensor into rows; the batch dimension is missing",
                                       "UnbatchDataset")
        return [sparse_row(t, i) for i in range(int(np.asarray(t.dense_shape.numpy()).reshape(-1)[0]))]
    shape = t._shape
    if not shape:
        raise InvalidArgumentError("cannot split a scalar (shape ()) into rows; the batch dimension is missing",
                                   "UnbatchDataset")
    dev = t._dev
    fb = getattr(dev.backend, "host_ptr", None)
    if dev.kind != "cpu" or fb is None:
        return _unstack(t) if shape[0] else []
    arr = t._host()
    rest = shape[1:]
    size = 1
    for d in rest:
        size *= d
    dt = t._dtype
    if not rest:
        arr = arr.reshape(-1, 1)
        return [make(fb(r), r.reshape(()), (), dt, dev, 1) for r in arr]
    if size == 0:
        return [make(*dev.backend.alloc(rest, dt.np), rest, dt, dev, 0) for _ in range(shape[0])]
    return [make(fb(r), r, rest, dt, dev, size) for r in arr]


def rows_at(t, idx: np.ndarray) -> list:
    """Rows ``idx`` of ``t`` as separate values: zero-copy views on the CPU."""
    if isinstance(t, np.ndarray):
        return [t[i] if t.ndim > 1 else bytes(t[i]) for i in idx.tolist()]
    dev = t._dev
    fb = getattr(dev.backend, "host_ptr", None)
    if dev.kind != "cpu" or fb is None:
        return rows(gather(t, idx))
    arr = t._host()
    rest = t._shape[1:]
    dt = t._dtype
    if not rest:
        a2 = arr.reshape(-1, 1)
        out = []
        for i in idx.tolist():
            v = a2[i].reshape(())
            out.append(make(fb(v), v, (), dt, dev, 1))
        return out
    size = 1
    for d in rest:
        size *= d
    if size == 0:
        return rows(gather(t, idx))
    get = arr.__getitem__
    return [make(fb(v), v, rest, dt, dev, size) for v in map(get, idx.tolist())]


def pad_stack(values: list, target: tuple, pad_value, op: str = "PaddedBatchDataset", what="component 0"):
    """Pad each leaf to ``target`` (after its own values) and stack them: one ``tf.pad`` per element."""
    first = values[0]
    if not isinstance(first, Tensor):
        return _pad_text(values, target, pad_value, op, what)
    dt = first._dtype
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, Tensor) or v._dtype is not dt or len(v._shape) != len(target):
            _mismatch(first, v, i, op, what)
        if any(d > t for d, t in zip(v._shape, target)):
            raise InvalidArgumentError(f"Attempted to pad to a smaller size than the input element: element {i} "
                                       f"of {what} has shape {list(v._shape)}, padded shape {list(target)}", op)
        if v._shape == target:
            out.append(v)
        else:
            with _on(v._dev):
                out.append(_pad(v, [[0, t - d] for d, t in zip(v._shape, target)], constant_values=pad_value))
    with _on(first._dev):
        return _stack(out, 0)


def _pad_text(values, target, pad_value, op, what):
    fill = S.to_text(pad_value) if pad_value is not None else b""
    out = np.empty((len(values),) + tuple(target), object)
    out.fill(fill)
    for i, v in enumerate(values):
        arr = np.asarray(v, object) if isinstance(v, np.ndarray) else np.asarray(v, object).reshape(())
        if arr.ndim != len(target) or any(d > t for d, t in zip(arr.shape, target)):
            raise InvalidArgumentError(f"Attempted to pad to a smaller size than the input element: element {i} "
                                       f"of {what} has shape {list(arr.shape)}, padded shape {list(target)}", op)
        out[(i,) + tuple(slice(0, d) for d in arr.shape)] = arr
    return out


def first_dim(v):
    return v._shape[0] if isinstance(v, Tensor) else np.shape(v)[0]


def leaf_shape(v) -> TensorShape:
    return v.shape if isinstance(v, Tensor) else TensorShape(np.shape(v))
