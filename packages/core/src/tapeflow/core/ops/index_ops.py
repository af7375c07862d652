"""Index ops: gather and scatter (gather, gather_nd, scatter_nd, tensor_scatter_nd_*), segment sums,
one_hot, the coordinates of true entries (where's 1-argument form) and boolean_mask.

Each op is a runner primitive.  Kernels validate indices before writing and stop at the first bad
one; the primitive's ``detail`` hook names it, as in ``indices = 7 is not in [0, 3) [Op:Gather]``.
The segment sums and scatters compute float16/bfloat16 in float32 (cast inside the primitive)."""
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
    static_value,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..runner import KernelStatus, check, primitive, run
from ..tensor import Tensor
from ._shape import (
    _ERANGE,
    _HALF,
    _INDEX,
    _NUMERIC,
    _dim_eq,
    _dim_prod,
    _index_tensor,
    _int_arg,
    _names,
    _place,
    _pos,
    _prod,
    _shape_arg,
    _shape_eq,
    _value_bytes,
    strided_copy,
)
from .array_ops import _view, reshape
from .math_ops import _cast_raw


def _f32(x):
    """float16/bfloat16 as float32, where the kernels compute them (not recorded); other dtypes as they are."""
    return _cast_raw(x, _dt.float32) if x._dtype in _HALF else x


def _back(out, dtype):
    return out if out._dtype is dtype else _cast_raw(out, dtype)


# ---- the first bad index, for the message (the kernels stop there) ---------------------

def _first(bad):
    """The flat position of the first True of the NumPy bool array ``bad``, or None."""
    pos = np.flatnonzero(bad)
    return int(pos[0]) if pos.size else None


def _range_message(what, ids, n, negative_ok=False):
    """``segment_ids[1] = 5 is not in [0, 3)`` for the first of ``ids`` outside [0, n) (negatives skipped
    when ``negative_ok``)."""
    h = ids._host().reshape(-1)
    i = _first(h >= n if negative_ok else (h < 0) | (h >= n))
    return None if i is None else f"{what}{_pos(i, ids._shape)} = {int(h[i])} is not in [0, {n})"


def _tuple_message(idx, dims, into):
    """``indices[0] = [5] does not index into shape [4]`` for the first index tuple outside ``dims``."""
    k = idx._shape[-1]
    if not k:
        return None
    h = idx._host().reshape(-1, k)
    i = _first(((h < 0) | (h >= np.asarray(dims, np.int64))).any(axis=1))
    return None if i is None else f"indices{_pos(i, idx._shape[:-1]) or '[0]'} = {h[i].tolist()} does not index " \
                                  f"into {into}"


# ---- gather -------------------------------------------------------------------------

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
        if not _dim_eq(params._shape[i], indices._shape[i]):
            raise InvalidArgumentError(f"params.shape[{i}] = {params._shape[i]} != indices.shape[{i}] = "
                                       f"{indices._shape[i]}; allowed: equal batch dimensions", op)
    return ax, bd


def _gather_infer(p, idx, *, axis, batch_dims):
    ps = p._shape
    return ps[:axis] + idx._shape[batch_dims:] + ps[axis + 1:], p._dtype


def _gather_detail(status, ins, attrs):
    if status == _ERANGE:
        return _range_message("indices", ins[1], ins[0]._shape[attrs["axis"]])


@primitive("gather", "Gather", infer=_gather_infer, detail=_gather_detail)
def _gather(dev, p, idx, *, axis, batch_dims):
    ps, is_, bd = p._shape, idx._shape, batch_dims
    out = alloc(ps[:axis] + is_[bd:] + ps[axis + 1:], p._dtype, dev)
    be = dev.backend
    check(be.gather(p._dtype.size, idx._dtype.code, p._h, idx._h, out._h, _prod(ps[:bd]), _prod(ps[bd:axis]),
                    ps[axis], _prod(is_[bd:]), _prod(ps[axis + 1:]), be.new_int64([0])), "gather")
    return out


_AXIS0 = {"axis": 0, "batch_dims": 0}


@register("gather", "Gather")
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Entries of ``params`` along ``axis`` at ``indices`` (batched over the first ``batch_dims`` axes).

    Output shape: params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:].
    ``validate_indices`` is TensorFlow's deprecated no-op: indices are always validated.

    >>> import tapeflow as tf
    >>> tf.gather(tf.constant([[1, 2], [3, 4], [5, 6]]), [2, 0]).numpy().tolist()
    [[5, 6], [1, 2]]
    """
    p = params if type(params) is Tensor else to_tensor(params, "Gather")
    idx = indices if type(indices) is Tensor and indices._dtype in _INDEX else _index_tensor(indices, "Gather")
    if axis is None and batch_dims == 0 and p._shape:
        attrs = _AXIS0
    else:
        ax, bd = _gather_dims(p, idx, axis, batch_dims, "Gather")
        attrs = {"axis": ax, "batch_dims": bd}
    return run(_gather, (p, idx), attrs)


# ---- segment sums (the scatter-add along an axis: gather's adjoint) ------------------------

def _segment_dims(data, ids, op):
    ds, is_ = data._shape, ids._shape
    if not _shape_eq(ds[:len(is_)], is_):
        raise InvalidArgumentError(f"data.shape = {list(ds)} does not start with segment_ids.shape = {list(is_)}; "
                                   "allowed: segment_ids whose shape is a prefix of data's", op)


def _segment_infer(data, ids, *, num_segments, axis=0, batch_dims=0, drop_negative=True):
    ds = data._shape
    return ds[:axis] + (num_segments,) + ds[axis + len(ids._shape) - batch_dims:], data._dtype


def _segment_detail(status, ins, attrs):
    if status == _ERANGE:
        return _range_message("segment_ids", ins[1], attrs["num_segments"], attrs.get("drop_negative", True))


@primitive("unsorted_segment_sum", "UnsortedSegmentSum", infer=_segment_infer, dtypes=_NUMERIC,
           detail=_segment_detail)
def _unsorted_segment_sum(dev, data, ids, *, num_segments, axis=0, batch_dims=0, drop_negative=True):
    """out[..., ids[j], ...] += data[..., j, ...] along ``axis``; negative ids are skipped when ``drop_negative``."""
    src = _f32(data)
    ds, bd = src._shape, batch_dims
    out_shape = _segment_infer(src, ids, num_segments=num_segments, axis=axis, batch_dims=bd)[0]
    out = alloc(out_shape, src._dtype, dev)
    be = dev.backend
    check(be.scatter_add_axis(src._dtype.code, ids._dtype.code, src._h, ids._h, out._h, _prod(ds[:bd]),
                              _prod(ds[bd:axis]), num_segments, _prod(ids._shape[bd:]), _prod(out_shape[axis + 1:]),
                              1 if drop_negative else 0, be.new_int64([0])), "scatter_add_axis")
    return _back(out, data._dtype)


def _check_data(data, op):
    if data._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"data has dtype {data._dtype.name}; allowed: {_names(_NUMERIC)}", op)


def _scatter_add_axis(data, ids, num, axis, batch_dims, op, drop_negative=False):
    """out[..., ids[j], ...] += data[..., j, ...] along ``axis``: the adjoint of gather(axis, batch_dims), for the
    gradient rules (recorded as unsorted_segment_sum with all its attrs)."""
    _check_data(data, op)
    return run(_unsorted_segment_sum, (data, ids), {"num_segments": num, "axis": axis, "batch_dims": batch_dims,
                                                    "drop_negative": drop_negative})


@register("unsorted_segment_sum", "UnsortedSegmentSum")
def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums of the slices of ``data`` that share a segment id: out[s] = sum of data[i] where segment_ids[i] == s.

    Ids may come in any order; negative ids are dropped.  The output has
    ``num_segments`` rows (empty segments are 0).

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_sum(tf.constant([1, 2, 3, 4]), [0, 2, 0, 1], 3).numpy().tolist()
    [4, 4, 2]
    """
    op = "UnsortedSegmentSum"
    x = data if type(data) is Tensor else to_tensor(data, op)
    ids = _index_tensor(segment_ids, op, "segment_ids")
    n = _int_arg(num_segments, op, "num_segments")
    if n < 0:
        raise InvalidArgumentError(f"num_segments = {n}; allowed: num_segments >= 0", op)
    _segment_dims(x, ids, op)
    _check_data(x, op)
    return run(_unsorted_segment_sum, (x, ids), {"num_segments": n})


@register("segment_sum", "SegmentSum", kind="composite")
def segment_sum(data, segment_ids, name=None):
    """Sums over runs of equal, sorted segment ids: out[s] = sum of data[i] where segment_ids[i] == s.

    ``segment_ids`` is 1-D, sorted, non-negative; the output has segment_ids[-1] + 1 rows (so the ids'
    values are needed when the op is called: not while tracing).

    >>> import tapeflow as tf
    >>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 0, 2]).numpy().tolist()
    [3.0, 0.0, 3.0]
    """
    op = "SegmentSum"
    x = data if type(data) is Tensor else to_tensor(data, op)
    ids = _index_tensor(segment_ids, op, "segment_ids")
    if len(ids._shape) != 1 or not x._shape or not _dim_eq(x._shape[0], ids._shape[0]):
        raise InvalidArgumentError(f"segment_ids has shape {list(ids._shape)} for data of shape {list(x._shape)}; "
                                   "allowed: a vector as long as data's first axis", op)
    _check_data(x, op)
    h = static_value(ids, op, "segment_ids")
    n = int(h[-1]) + 1 if h.size else 0  # sorted: the last id is the largest
    down = _first(h[1:] < h[:-1])
    if down is not None:
        i = down + 1
        raise InvalidArgumentError(f"segment_ids are not sorted: segment_ids[{i}] = {int(h[i])} < segment_ids[{i - 1}] "
                                   f"= {int(h[i - 1])}; allowed: non-decreasing ids (or use unsorted_segment_sum)", op)
    if h.size and h[0] < 0:
        raise InvalidArgumentError(f"segment_ids[0] = {int(h[0])} is not in [0, {n})", op)
    return run(_unsorted_segment_sum, (x, ids), {"num_segments": n})


# ---- gather_nd, scatter_nd, tensor_scatter_nd_* -----------------------------------------

def _nd_indices(indices, op):
    idx = _index_tensor(indices, op)
    if not idx._shape:
        raise InvalidArgumentError("indices is a scalar; allowed: rank >= 1 (the last axis holds index tuples)", op)
    return idx


def _gather_nd_infer(p, idx, *, batch_dims):
    return idx._shape[:-1] + p._shape[batch_dims + idx._shape[-1]:], p._dtype


def _gather_nd_detail(status, ins, attrs):
    if status == _ERANGE:
        p, idx = ins
        bd = attrs["batch_dims"]
        return _tuple_message(idx, p._shape[bd:bd + idx._shape[-1]], f"param shape {list(p._shape)}")


@primitive("gather_nd", "GatherNd", infer=_gather_nd_infer, detail=_gather_nd_detail)
def _gather_nd(dev, p, idx, *, batch_dims):
    ps, is_, bd = p._shape, idx._shape, batch_dims
    k = is_[-1]
    out = alloc(is_[:-1] + ps[bd + k:], p._dtype, dev)
    be = dev.backend
    check(be.gather_nd(p._dtype.size, idx._dtype.code, p._h, idx._h, out._h, _prod(ps[:bd]), _prod(is_[bd:-1]), k,
                       list(ps[bd:bd + k]), _prod(ps[bd + k:]), be.new_int64([0])), "gather_nd")
    return out


@register("gather_nd", "GatherNd")
def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of ``params`` at the index tuples in the last axis of ``indices``.

    Output shape: indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:].

    >>> import tapeflow as tf
    >>> tf.gather_nd(tf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).numpy().tolist()
    [3, 2]
    """
    p = params if type(params) is Tensor else to_tensor(params, "GatherNd")
    idx = _nd_indices(indices, "GatherNd")
    bd = _int_arg(batch_dims, "GatherNd", "batch_dims")
    ps, is_ = p._shape, idx._shape
    k = is_[-1]
    if k is None:
        raise InvalidArgumentError(f"indices has shape {tuple(is_)}: the length of its index tuples (the last axis) "
                                   "decides the rank of the result; allowed: a known last axis while tracing",
                                   "GatherNd")
    if not 0 <= bd < len(is_) or bd > len(ps):
        raise InvalidArgumentError(f"batch_dims = {bd}; allowed: [0, {min(len(is_) - 1, len(ps))}]", "GatherNd")
    if not _shape_eq(ps[:bd], is_[:bd]):
        raise InvalidArgumentError(f"params.shape[:{bd}] = {list(ps[:bd])} != indices.shape[:{bd}] = "
                                   f"{list(is_[:bd])}; allowed: equal batch dimensions", "GatherNd")
    if k > len(ps) - bd:
        raise InvalidArgumentError(f"index tuples of length {k} for params of shape {list(ps)} (batch_dims {bd}); "
                                   f"allowed: at most {len(ps) - bd}", "GatherNd")
    return run(_gather_nd, (p, idx), {"batch_dims": bd})


def _check_scatter(idx, upd, shape, op):
    """The shapes of a scatter into ``shape``: index tuples no longer than its rank, updates of
    indices.shape[:-1] + shape[k:]."""
    is_, us = idx._shape, upd._shape
    k = is_[-1]
    if k is None:  # traced, the index tuples' length unknown: checked when the graph runs
        return
    if k > len(shape):
        raise InvalidArgumentError(f"index tuples of length {k} for shape {list(shape)}; allowed: at most "
                                   f"{len(shape)}", op)
    want = is_[:-1] + tuple(shape[k:])
    if us != want and not _shape_eq(us, want):
        raise InvalidArgumentError(f"updates has shape {list(us)}; allowed: indices.shape[:-1] + shape[{k}:] = "
                                   f"{list(want)}", op)


def _scatter_into(be, out, idx, upd, op_code):
    """Scatter ``upd`` at ``idx`` into ``out`` (holding the starting values): op_code 0 sets, 1 adds."""
    shape, k = out._shape, idx._shape[-1]
    check(be.scatter_nd(op_code, out._dtype.code, idx._dtype.code, idx._h, upd._h, out._h, _prod(idx._shape[:-1]), k,
                        list(shape[:k]), _prod(shape[k:]), be.new_int64([0])), "scatter_nd")
    return out


def _copy(x):
    out = alloc(x._shape, x._dtype, x._dev)
    if x._size:
        strided_copy(x, (x._size,), 0, (1,), out=out)
    return out


def _scatter_nd_infer(idx, upd, *, shape):
    return shape, upd._dtype


def _scatter_nd_detail(status, ins, attrs):
    if status == _ERANGE:
        shape = attrs["shape"]
        return _tuple_message(ins[0], shape[:ins[0]._shape[-1]], f"shape {list(shape)}")


@primitive("scatter_nd", "ScatterNd", infer=_scatter_nd_infer, dtypes=_INDEX, detail=_scatter_nd_detail)
def _scatter_nd(dev, idx, upd, *, shape):
    src = _f32(upd)
    sdt = src._dtype
    out = alloc(shape, sdt, dev)
    be = dev.backend
    if out._size:
        check(be.fill(sdt.size, be.host_ptr(bytes(sdt.size)), out._h, out._size), "fill")
    return _back(_scatter_into(be, out, idx, src, 1), upd._dtype)


@register("scatter_nd", "ScatterNd")
def scatter_nd(indices, updates, shape, name=None):
    """A tensor of ``shape``, zero except at ``indices``, where ``updates`` are summed in.

    >>> import tapeflow as tf
    >>> tf.scatter_nd([[1], [3], [1]], tf.constant([1.0, 2.0, 3.0]), [4]).numpy().tolist()
    [0.0, 4.0, 0.0, 2.0]
    """
    u = updates if type(updates) is Tensor else to_tensor(updates, "ScatterNd")
    idx = _nd_indices(indices, "ScatterNd")
    shp = _shape_arg(shape, "ScatterNd")
    if any(d < 0 for d in shp):
        raise InvalidArgumentError(f"shape = {list(shp)}; allowed: non-negative sizes", "ScatterNd")
    if u._dtype not in _NUMERIC:
        raise InvalidArgumentError(f"updates has dtype {u._dtype.name}; allowed: {_names(_NUMERIC)}", "ScatterNd")
    _check_scatter(idx, u, shp, "ScatterNd")
    return run(_scatter_nd, (idx, u), {"shape": shp})


def _tensor_scatter_args(tensor, indices, updates, op, allowed):
    x = tensor if type(tensor) is Tensor else to_tensor(tensor, op)
    u = updates if isinstance(updates, Tensor) else to_tensor(updates, op, x._dtype)
    idx = _nd_indices(indices, op)
    if u._dtype is not x._dtype:
        raise InvalidArgumentError(f"updates has dtype {u._dtype.name} but tensor has {x._dtype.name}; allowed: "
                                   "the same dtype", op)
    if x._dtype not in allowed:
        raise InvalidArgumentError(f"tensor has dtype {x._dtype.name}; allowed: {_names(allowed)}", op)
    _check_scatter(idx, u, x._shape, op)
    return x, idx, u


def _tensor_scatter_infer(x, idx, u):
    return x._shape, x._dtype


def _tensor_scatter_detail(status, ins, attrs):
    if status == _ERANGE:
        x, idx = ins[0], ins[1]
        return _tuple_message(idx, x._shape[:idx._shape[-1]], f"shape {list(x._shape)}")


def _tensor_scatter_run(dev, x, idx, u, op_code):
    """A copy of ``x`` (float32 for the half types) with ``u`` scattered in at ``idx``."""
    if x._dtype in _HALF:
        out, src = _f32(x), _f32(u)  # the cast is the copy
    else:
        out, src = _copy(x), u
    return _back(_scatter_into(dev.backend, out, idx, src, op_code), x._dtype)


def _tensor_scatter_primitive(name, tf_name, op_code, allowed):
    @primitive(name, tf_name, infer=_tensor_scatter_infer, dtypes=allowed, detail=_tensor_scatter_detail)
    def impl(dev, x, idx, u):
        return _tensor_scatter_run(dev, x, idx, u, op_code)
    return impl


_TENSOR_SCATTER_UPDATE = _tensor_scatter_primitive("tensor_scatter_nd_update", "TensorScatterUpdate", 0, None)
_TENSOR_SCATTER_ADD = _tensor_scatter_primitive("tensor_scatter_nd_add", "TensorScatterAdd", 1, _NUMERIC)


def _tensor_scatter(tensor, indices, updates, op_code, op, allowed):
    """A variable's sparse update: the tensor_scatter_nd_* computation on ``tensor``'s device, not recorded
    (state, like assign), its errors naming ``op``.  Returns (tensor, indices, updates, result)."""
    x, idx, u = _tensor_scatter_args(tensor, indices, updates, op, allowed)
    dev = x._dev
    idx, u = on_device(idx, dev), on_device(u, dev)
    try:
        out = _tensor_scatter_run(dev, x, idx, u, op_code)
    except KernelStatus as e:
        kernel_failed(e.status, e.kernel, op, _tensor_scatter_detail(e.status, (x, idx, u), None) or "")
    return x, idx, u, out


@register("tensor_scatter_nd_update", "TensorScatterUpdate")
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with the entries at ``indices`` replaced by ``updates``.

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_update(tf.constant([1, 2, 3]), [[0], [2]], [9, 7]).numpy().tolist()
    [9, 2, 7]
    """
    return run(_TENSOR_SCATTER_UPDATE,  # strings too: string_ops' host implementation
               _tensor_scatter_args(tensor, indices, updates, "TensorScatterUpdate", tuple(_dt.ALL) + (_dt.string,)))


@register("tensor_scatter_nd_add", "TensorScatterAdd")
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (repeated indices add up).

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_add(tf.constant([1, 2, 3]), [[0], [0]], [5, 5]).numpy().tolist()
    [11, 2, 3]
    """
    return run(_TENSOR_SCATTER_ADD, _tensor_scatter_args(tensor, indices, updates, "TensorScatterAdd", _NUMERIC))


# ---- one_hot, where, boolean_mask -------------------------------------------------------

def _one_hot_infer(idx, *, depth, on_value, off_value, axis, dtype):
    s = idx._shape
    return s[:axis] + (depth,) + s[axis:], dtype


@primitive("one_hot", "OneHot", infer=_one_hot_infer, dtypes=_INDEX)
def _one_hot(dev, idx, *, depth, on_value, off_value, axis, dtype):
    s = idx._shape
    out = alloc(s[:axis] + (depth,) + s[axis:], dtype, dev)
    be = dev.backend
    on, off = on_value.tobytes(), off_value.tobytes()
    check(be.one_hot(dtype.size, idx._dtype.code, idx._h, be.host_ptr(on), be.host_ptr(off), out._h,
                     _prod(s[:axis]), depth, _prod(s[axis:])), "one_hot")
    return out


_HOT_DEFAULTS: dict = {}


def _hot_value(value, default, dtype, what):
    """``value`` (``default`` for None) as a NumPy scalar of ``dtype``: the op needs it on the host."""
    if value is None:
        key = (default, dtype)
        v = _HOT_DEFAULTS.get(key)
        if v is None:
            v = _HOT_DEFAULTS[key] = np.frombuffer(_value_bytes(default, dtype, "OneHot", what), dtype.np)[0]
        return v
    if isinstance(value, Tensor):
        static_value(value, "OneHot", what)  # a symbolic tensor has none: a TypeError naming the op
    return np.frombuffer(_value_bytes(value, dtype, "OneHot", what), dtype.np)[0]


@register("one_hot", "OneHot", nondiff="integer indices in; on/off values are constants")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``on_value`` where the new axis equals the index, ``off_value`` elsewhere (out-of-range indices: all off).

    >>> import tapeflow as tf
    >>> tf.one_hot([0, 2], 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    idx = _index_tensor(indices, "OneHot")
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
    on = _hot_value(on_value, 1, dtype, "on_value")
    off = _hot_value(off_value, 0, dtype, "off_value")
    nd = len(idx._shape)
    a = -1 if axis is None else _int_arg(axis, "OneHot", "axis")
    if not -1 <= a <= nd:
        raise InvalidArgumentError(f"axis = {a} for indices of rank {nd}; allowed: [-1, {nd}]", "OneHot")
    return run(_one_hot, (idx,), {"depth": d, "on_value": on, "off_value": off, "axis": nd if a == -1 else a,
                                  "dtype": dtype})


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
    if not _shape_eq(x._shape[a:a + k], m._shape):
        raise InvalidArgumentError(f"mask has shape {list(m._shape)} but the tensor's axes {a}..{a + k - 1} have "
                                   f"{list(x._shape[a:a + k])}; allowed: equal shapes", "BooleanMask")
    if m._h is None:  # traced: the output's length is the mask's count of trues, known when the graph runs
        from .array_ops import where

        merged = x._shape[:a] + (_dim_prod(m._shape),) + x._shape[a + k:]
        if k > 1 and merged.count(None) > 1:
            raise InvalidArgumentError(f"a mask of rank {k} over a tensor of shape {tuple(x._shape)} with several "
                                       "unknown dimensions; allowed: a 1-D mask, or known dimensions but one, "
                                       "while tracing", "BooleanMask")
        with _device.device(x._dev):
            flat = x if k == 1 else reshape(x, [-1 if d is None else d for d in merged])
            return gather(flat, reshape(where(reshape(m, [-1])), [-1]), axis=a)
    with _device.device(x._dev):
        flat = reshape(x, x._shape[:a] + (m._size,) + x._shape[a + k:])
        idx = reshape(_nonzero(_view(m, (m._size,))), [-1])
        return gather(flat, idx, axis=a)



__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_") and n not in ("strided_copy", "getitem", "TopKV2")]
