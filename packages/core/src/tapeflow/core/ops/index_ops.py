"""Index ops: gather and scatter (gather, gather_nd, scatter_nd, tensor_scatter_nd_*), segment sums,
one_hot, the coordinates of true entries (where's 1-argument form) and boolean_mask.

Kernels validate indices before writing and report the first bad one, which becomes a message such
as ``indices = 7 is not in [0, 3) [Op:Gather]``; the segment sums and scatter-adds compute
float16/bfloat16 in float32."""
from __future__ import annotations

import numpy as np

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    dtype_arg,
    kernel_failed,
    on_device,
    register,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..tensor import Tensor
from ._shape import (
    _EBADARG,
    _ERANGE,
    _INDEX,
    _NUMERIC,
    _back_to,
    _bad_index,
    _creation_device,
    _half_to_f32,
    _index_tensor,
    _int_arg,
    _names,
    _place,
    _pos,
    _prod,
    _record,
    _shape_arg,
    _value_bytes,
    _zeros,
    strided_copy,
)
from .array_ops import reshape

# ---- gather and scatter -------------------------------------------------------------

def _gather_dims(params, indices, axis, batch_dims, op):
    pnd, ind = len(params._shape), len(indices._shape)
    bd = _int_arg(batch_dims, op, "batch_dims")
    if bd < 0:
        bd += ind
    if not 0 <= bd <= ind:
        raise InvalidArgumentError(f"batch_dims = {batch_dims} for indices of rank {ind}; allowed: "
                                   f"[{-ind}, {ind}]", op)
    if pnd == 0:
        raise InvalidArgumentError("params is a scalar (shape ()); allowed: tensors of rank >= 1", op)
    ax = bd if axis is None else _int_arg(axis, op, "axis")
    if not -pnd <= ax < pnd:
        raise InvalidArgumentError(f"axis {ax} is out of range for params of rank {pnd}; allowed: [{-pnd}, {pnd})",
                                   op)
    ax %= pnd
    if bd > ax:
        raise InvalidArgumentError(f"batch_dims = {bd} > axis = {ax}; allowed: batch_dims <= axis", op)
    for i in range(bd):
        if params._shape[i] != indices._shape[i]:
            raise InvalidArgumentError(f"params.shape[{i}] = {params._shape[i]} != indices.shape[{i}] = "
                                       f"{indices._shape[i]}; allowed: equal batch dimensions", op)
    return ax, bd


@register("gather", "Gather")
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Entries of ``params`` along ``axis`` at ``indices`` (batched over the first ``batch_dims`` axes).

    Output shape: params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:].

    >>> import tapeflow as tf
    >>> tf.gather(tf.constant([[1, 2], [3, 4], [5, 6]]), [2, 0]).numpy().tolist()
    [[5, 6], [1, 2]]
    """
    p = params if type(params) is Tensor else to_tensor(params, "Gather")
    dev, p = _place(p)
    idx = indices if type(indices) is Tensor and indices._dtype in _INDEX and indices._dev is dev else \
        _index_tensor(indices, "Gather", dev=dev)
    if axis is None and batch_dims == 0 and p._shape:
        ax = bd = 0
    else:
        ax, bd = _gather_dims(p, idx, axis, batch_dims, "Gather")
    ps = p._shape
    out_shape = ps[:ax] + idx._shape[bd:] + ps[ax + 1:]
    out = alloc(out_shape, p._dtype, dev)
    be = dev.backend
    bad = be.new_int64([0])
    st = be.gather(p._dtype.size, idx._dtype.code, p._h, idx._h, out._h, _prod(ps[:bd]), _prod(ps[bd:ax]), ps[ax],
                   _prod(idx._shape[bd:]), _prod(ps[ax + 1:]), bad)
    if st:
        if st == _ERANGE:
            raise InvalidArgumentError(f"indices{_pos(bad[0], idx._shape)} = {_bad_index(idx, bad[0])} is not in "
                                       f"[0, {ps[ax]})", "Gather")
        kernel_failed(st, "gather", "Gather")
    _record("gather", (p, idx), out, {"axis": ax, "batch_dims": bd})
    return out


def _segment_dims(data, ids, op):
    ds, is_ = data._shape, ids._shape
    if ds[:len(is_)] != is_:
        raise InvalidArgumentError(f"data.shape = {list(ds)} does not start with segment_ids.shape = {list(is_)}; "
                                   "allowed: segment_ids whose shape is a prefix of data's", op)


def _scatter_add_axis(data, ids, num, axis, batch_dims, op, drop_negative=False, sorted_ids=False,
                      record_attrs=None):
    """out[..., ids[j], ...] += data[..., j, ...] along ``axis``: the adjoint of gather(axis, batch_dims)."""
    dt = data._dtype
    if dt not in _NUMERIC:
        raise InvalidArgumentError(f"data has dtype {dt.name}; allowed: {_names(_NUMERIC)}", op)
    src = _half_to_f32(data)
    dev = data._dev
    bd = batch_dims
    nidx = _prod(ids._shape[bd:])
    ds = src._shape
    out_shape = ds[:axis] + (num,) + ds[axis + len(ids._shape) - bd:]
    out = alloc(out_shape, src._dtype, dev)
    be = dev.backend
    bad = be.new_int64([0])
    flags = (1 if drop_negative else 0) | (2 if sorted_ids else 0)
    st = be.scatter_add_axis(src._dtype.code, ids._dtype.code, src._h, ids._h, out._h, _prod(ds[:bd]),
                             _prod(ds[bd:axis]), num, nidx, _prod(out_shape[axis + 1:]), flags, bad)
    if st:
        if st == _ERANGE:
            v = _bad_index(ids, bad[0])
            what = "segment_ids" if op != "Gather" else "indices"
            raise InvalidArgumentError(f"{what}{_pos(bad[0], ids._shape)} = {v} is not in [0, {num})", op)
        if st == _EBADARG and sorted_ids:
            raise InvalidArgumentError(f"segment_ids are not sorted: segment_ids{_pos(bad[0], ids._shape)} = "
                                       f"{_bad_index(ids, bad[0])} < segment_ids{_pos(bad[0] - 1, ids._shape)} = "
                                       f"{_bad_index(ids, bad[0] - 1)}; allowed: non-decreasing ids (or use "
                                       "unsorted_segment_sum)", op)
        kernel_failed(st, "scatter_add_axis", op)
    out = _back_to(out, dt)
    _record("unsorted_segment_sum", (data, ids), out,
            record_attrs if record_attrs is not None else {"num_segments": num, "axis": axis,
                                                           "batch_dims": batch_dims, "drop_negative": drop_negative})
    return out


@register("unsorted_segment_sum", "UnsortedSegmentSum")
def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums of the slices of ``data`` that share a segment id: out[s] = sum of data[i] where segment_ids[i] == s.

    Ids may come in any order; negative ids are dropped.  The output has
    ``num_segments`` rows (empty segments are 0).

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_sum(tf.constant([1, 2, 3, 4]), [0, 2, 0, 1], 3).numpy().tolist()
    [4, 4, 2]
    """
    x = to_tensor(data, "UnsortedSegmentSum")
    dev, x = _place(x)
    ids = _index_tensor(segment_ids, "UnsortedSegmentSum", "segment_ids", dev)
    n = _int_arg(num_segments, "UnsortedSegmentSum", "num_segments")
    if n < 0:
        raise InvalidArgumentError(f"num_segments = {n}; allowed: num_segments >= 0", "UnsortedSegmentSum")
    _segment_dims(x, ids, "UnsortedSegmentSum")
    return _scatter_add_axis(x, ids, n, 0, 0, "UnsortedSegmentSum", drop_negative=True,
                             record_attrs={"num_segments": n})


@register("segment_sum", "SegmentSum", kind="composite")
def segment_sum(data, segment_ids, name=None):
    """Sums over runs of equal, sorted segment ids: out[s] = sum of data[i] where segment_ids[i] == s.

    ``segment_ids`` is 1-D, sorted, non-negative; the output has segment_ids[-1] + 1 rows.

    >>> import tapeflow as tf
    >>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 0, 2]).numpy().tolist()
    [3.0, 0.0, 3.0]
    """
    x = to_tensor(data, "SegmentSum")
    ids = _index_tensor(segment_ids, "SegmentSum", "segment_ids", x._dev)
    if len(ids._shape) != 1 or not x._shape or x._shape[0] != ids._shape[0]:
        raise InvalidArgumentError(f"segment_ids has shape {list(ids._shape)} for data of shape {list(x._shape)}; "
                                   "allowed: a vector as long as data's first axis", "SegmentSum")
    n = _bad_index(ids, ids._size - 1) + 1 if ids._size else 0  # sorted: the last id is the largest
    return _scatter_add_axis(x, ids, n, 0, 0, "SegmentSum", sorted_ids=True, record_attrs={"num_segments": n})


def _nd_indices(indices, op, dev):
    idx = _index_tensor(indices, op, dev=dev)
    if not idx._shape:
        raise InvalidArgumentError("indices is a scalar; allowed: rank >= 1 (the last axis holds index tuples)", op)
    return idx


@register("gather_nd", "GatherNd")
def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of ``params`` at the index tuples in the last axis of ``indices``.

    Output shape: indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:].

    >>> import tapeflow as tf
    >>> tf.gather_nd(tf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).numpy().tolist()
    [3, 2]
    """
    p = to_tensor(params, "GatherNd")
    dev, p = _place(p)
    idx = _nd_indices(indices, "GatherNd", dev)
    bd = _int_arg(batch_dims, "GatherNd", "batch_dims")
    ps, is_ = p._shape, idx._shape
    k = is_[-1]
    if not 0 <= bd < len(is_) or bd > len(ps):
        raise InvalidArgumentError(f"batch_dims = {bd}; allowed: [0, {min(len(is_) - 1, len(ps))}]", "GatherNd")
    if ps[:bd] != is_[:bd]:
        raise InvalidArgumentError(f"params.shape[:{bd}] = {list(ps[:bd])} != indices.shape[:{bd}] = "
                                   f"{list(is_[:bd])}; allowed: equal batch dimensions", "GatherNd")
    if k > len(ps) - bd:
        raise InvalidArgumentError(f"index tuples of length {k} for params of shape {list(ps)} (batch_dims {bd}); "
                                   f"allowed: at most {len(ps) - bd}", "GatherNd")
    dims = list(ps[bd:bd + k])
    out_shape = is_[:-1] + ps[bd + k:]
    out = alloc(out_shape, p._dtype, dev)
    be = dev.backend
    bad = be.new_int64([0])
    st = be.gather_nd(p._dtype.size, idx._dtype.code, p._h, idx._h, out._h, _prod(ps[:bd]), _prod(is_[bd:-1]), k,
                      dims, _prod(ps[bd + k:]), bad)
    if st:
        if st == _ERANGE:
            tup = idx._host().reshape(-1, k)[bad[0]].tolist() if k else []
            raise InvalidArgumentError(f"indices{_pos(bad[0], is_[:-1]) or '[0]'} = {tup} does not index into param "
                                       f"shape {list(ps)}", "GatherNd")
        kernel_failed(st, "gather_nd", "GatherNd")
    _record("gather_nd", (p, idx), out, {"batch_dims": bd})
    return out


def _scatter_nd_run(out, idx, upd, op_code, op, shape):
    """Validate shapes and run the scatter kernel into ``out`` (already holding the starting values)."""
    is_, us = idx._shape, upd._shape
    k = is_[-1]
    if k > len(shape):
        raise InvalidArgumentError(f"index tuples of length {k} for shape {list(shape)}; allowed: at most "
                                   f"{len(shape)}", op)
    want = is_[:-1] + tuple(shape[k:])
    if us != want:
        raise InvalidArgumentError(f"updates has shape {list(us)}; allowed: indices.shape[:-1] + shape[{k}:] = "
                                   f"{list(want)}", op)
    be = out._dev.backend
    bad = be.new_int64([0])
    st = be.scatter_nd(op_code, out._dtype.code, idx._dtype.code, idx._h, upd._h, out._h, _prod(is_[:-1]), k,
                       list(shape[:k]), _prod(shape[k:]), bad)
    if st:
        if st == _ERANGE:
            tup = idx._host().reshape(-1, k)[bad[0]].tolist()
            raise InvalidArgumentError(f"indices{_pos(bad[0], is_[:-1]) or '[0]'} = {tup} does not index into shape "
                                       f"{list(shape)}", op)
        kernel_failed(st, "scatter_nd", op)
    return out


def _copy(x):
    out = alloc(x._shape, x._dtype, x._dev)
    if x._size:
        strided_copy(x, (x._size,), 0, (1,), out=out)
    return out


@register("scatter_nd", "ScatterNd")
def scatter_nd(indices, updates, shape, name=None):
    """A tensor of ``shape``, zero except at ``indices``, where ``updates`` are summed in.

    >>> import tapeflow as tf
    >>> tf.scatter_nd([[1], [3], [1]], tf.constant([1.0, 2.0, 3.0]), [4]).numpy().tolist()
    [0.0, 4.0, 0.0, 2.0]
    """
    u = to_tensor(updates, "ScatterNd")
    dev, u = _place(u)
    idx = _nd_indices(indices, "ScatterNd", dev)
    shp = _shape_arg(shape, "ScatterNd")
    if any(d < 0 for d in shp):
        raise InvalidArgumentError(f"shape = {list(shp)}; allowed: non-negative sizes", "ScatterNd")
    dt = u._dtype
    if dt not in _NUMERIC:
        raise InvalidArgumentError(f"updates has dtype {dt.name}; allowed: {_names(_NUMERIC)}", "ScatterNd")
    src = _half_to_f32(u)
    out = _scatter_nd_run(_zeros(shp, src._dtype, dev), idx, src, 1, "ScatterNd", shp)
    out = _back_to(out, dt)
    _record("scatter_nd", (idx, u), out, {"shape": shp})
    return out


def _tensor_scatter(tensor, indices, updates, op_code, op, allowed):
    x = to_tensor(tensor, op)
    dev, x = _place(x)
    u = to_tensor(updates, op, x._dtype) if not isinstance(updates, Tensor) else updates
    u = on_device(u, dev)
    idx = _nd_indices(indices, op, dev)
    if u._dtype is not x._dtype:
        raise InvalidArgumentError(f"updates has dtype {u._dtype.name} but tensor has {x._dtype.name}; allowed: "
                                   "the same dtype", op)
    if x._dtype not in allowed:
        raise InvalidArgumentError(f"tensor has dtype {x._dtype.name}; allowed: {_names(allowed)}", op)
    src, us = _half_to_f32(x), _half_to_f32(u)
    out = _scatter_nd_run(_copy(src), idx, us, op_code, op, x._shape)
    return x, idx, u, _back_to(out, x._dtype)


@register("tensor_scatter_nd_update", "TensorScatterUpdate")
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with the entries at ``indices`` replaced by ``updates``.

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_update(tf.constant([1, 2, 3]), [[0], [2]], [9, 7]).numpy().tolist()
    [9, 2, 7]
    """
    x, idx, u, out = _tensor_scatter(tensor, indices, updates, 0, "TensorScatterUpdate", _dt.ALL)
    _record("tensor_scatter_nd_update", (x, idx, u), out, None)
    return out


@register("tensor_scatter_nd_add", "TensorScatterAdd")
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (repeated indices add up).

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_add(tf.constant([1, 2, 3]), [[0], [0]], [5, 5]).numpy().tolist()
    [11, 2, 3]
    """
    x, idx, u, out = _tensor_scatter(tensor, indices, updates, 1, "TensorScatterAdd", _NUMERIC)
    _record("tensor_scatter_nd_add", (x, idx, u), out, None)
    return out


# ---- one_hot, where, boolean_mask -------------------------------------------------------

@register("one_hot", "OneHot", nondiff="integer indices in; on/off values are constants")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``on_value`` where the new axis equals the index, ``off_value`` elsewhere (out-of-range indices: all off).

    >>> import tapeflow as tf
    >>> tf.one_hot([0, 2], 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    dev = _device.current() or (indices._dev if isinstance(indices, Tensor) else _creation_device())
    idx = _index_tensor(indices, "OneHot", dev=dev)
    d = _int_arg(depth, "OneHot", "depth")
    if d < 0:
        raise InvalidArgumentError(f"depth = {d}; allowed: depth >= 0", "OneHot")
    if dtype is None:
        ref = next((v for v in (on_value, off_value) if v is not None), None)
        if isinstance(ref, Tensor):
            dtype = ref._dtype
        elif isinstance(ref, (bool, np.bool_)):
            dtype = _dt.bool_
        elif isinstance(ref, (int, np.integer)):
            dtype = _dt.int32
        else:
            dtype = _dt.float32
    dtype = dtype_arg(dtype, "OneHot")
    on = _value_bytes(1 if on_value is None else on_value, dtype, "OneHot", "on_value")
    off = _value_bytes(0 if off_value is None else off_value, dtype, "OneHot", "off_value")
    nd = len(idx._shape)
    a = -1 if axis is None else _int_arg(axis, "OneHot", "axis")
    if not -1 <= a <= nd:
        raise InvalidArgumentError(f"axis = {a} for indices of rank {nd}; allowed: [-1, {nd}]", "OneHot")
    if a == -1:
        a = nd
    out_shape = idx._shape[:a] + (d,) + idx._shape[a:]
    out = alloc(out_shape, dtype, dev)
    be = dev.backend
    st = be.one_hot(dtype.size, idx._dtype.code, idx._h, be.host_ptr(on), be.host_ptr(off), out._h,
                    _prod(idx._shape[:a]), d, _prod(idx._shape[a:]))
    if st:
        kernel_failed(st, "one_hot", "OneHot")
    return out

def _nonzero(x: Tensor):
    dev, x = _place(x)
    be = dev.backend
    cnt = be.new_int64([0])
    st = be.count_nonzero(x._dtype.code, x._h, x._size, cnt)
    if st:
        kernel_failed(st, "count_nonzero", "Where")
    out = alloc((int(cnt[0]), len(x._shape)), _dt.int64, dev)
    if out._size:
        st = be.where_indices(x._dtype.code, x._h, len(x._shape), list(x._shape), x._size, out._h)
        if st:
            kernel_failed(st, "where_indices", "Where")
    return out



@register("boolean_mask", "BooleanMask", kind="composite")
def boolean_mask(tensor, mask, axis=None, name=None):
    """The entries of ``tensor`` where ``mask`` (covering axes axis..axis+mask.rank) is true, flattened there.

    >>> import tapeflow as tf
    >>> tf.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True]).numpy().tolist()
    [[1, 2], [5, 6]]
    """
    x = to_tensor(tensor, "BooleanMask")
    m = to_tensor(mask, "BooleanMask")
    if m._dtype is not _dt.bool_:
        raise InvalidArgumentError(f"mask has dtype {m._dtype.name}; allowed: bool", "BooleanMask")
    k = len(m._shape)
    if k == 0:
        raise InvalidArgumentError("mask is a scalar; allowed: a mask of rank >= 1", "BooleanMask")
    a = 0 if axis is None else _int_arg(axis, "BooleanMask", "axis")
    nd = len(x._shape)
    if a < 0:
        a += nd
    if not 0 <= a <= nd - k:
        raise InvalidArgumentError(f"axis = {axis} with a mask of rank {k} for a tensor of rank {nd}; allowed: "
                                   f"[0, {nd - k}]", "BooleanMask")
    if x._shape[a:a + k] != m._shape:
        raise InvalidArgumentError(f"mask has shape {list(m._shape)} but the tensor's axes {a}..{a + k - 1} have "
                                   f"{list(x._shape[a:a + k])}; allowed: equal shapes", "BooleanMask")
    with _device.device(x._dev):
        flat = reshape(x, x._shape[:a] + (m._size,) + x._shape[a + k:])
        idx = reshape(_nonzero(reshape(m, [-1])), [-1])
        return gather(flat, idx, axis=a)



__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem", "TopKV2")]
