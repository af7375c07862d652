"""Gradients of core's shape ops (``tapeflow.core.ops.array_ops``), in the same order.

Most rules are the op's adjoint: a slice pads, a pad slices, a gather
scatter-adds (``unsorted_segment_sum`` along an axis), a scatter gathers, a
concat splits, a sort scatters back through its permutation.  Every rule is
written with tapeflow ops, so it differentiates again.  Ops that create
constants or return integers (fill, eye, range, one_hot, shape, size, rank,
where with one argument, argsort) are declared ``nondiff`` in core; composites
(zeros, stack, squeeze, expand_dims, boolean_mask, segment_sum, linspace,
meshgrid, ...) are recorded as the primitives they call.
"""
from __future__ import annotations

from tapeflow.core.ops import (
    argsort,
    concat,
    cumsum,
    gather,
    gather_nd,
    greater_equal,
    maximum,
    multiply,
    pad,
    range_,
    real_div,
    reduce_sum,
    reshape,
    reverse,
    scatter_nd,
    slice,
    split,
    stack,
    strided_slice,
    strided_slice_grad,
    tensor_scatter_nd_update,
    transpose,
    unstack,
    where,
    zeros_like,
)
from tapeflow.core.ops.array_ops import _scatter_add_axis, broadcast_to

from ..registry import defgrad


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


# ---- views, transpose, broadcast, tile, reverse -----------------------------------

@defgrad("reshape")
def _reshape_grad(g, ans, x, shape):
    return (reshape(g, x._shape),)


@defgrad("identity")
def _identity_grad(g, ans, x):
    return (g,)


@defgrad("transpose")
def _transpose_grad(g, ans, x, perm):
    return (transpose(g, _inverse(perm)),)


@defgrad("broadcast_to")
def _broadcast_to_grad(g, ans, x, shape):
    lead = len(shape) - len(x._shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(x._shape) if d == 1 and shape[lead + i] != 1)
    if axes:
        g = reduce_sum(g, axis=axes)
    return (reshape(g, x._shape),)


@defgrad("tile")
def _tile_grad(g, ans, x, multiples):
    # the output seen as [m0, d0, m1, d1, ...]: sum over the repeats
    split_shape = [v for m, d in zip(multiples, x._shape) for v in (m, d)]
    g = reshape(g, split_shape)
    return (reshape(reduce_sum(g, axis=tuple(range(0, len(split_shape), 2))), x._shape),)


@defgrad("reverse")
def _reverse_grad(g, ans, x, axis):
    return (reverse(g, axis),)


# ---- joining and splitting ------------------------------------------------------------

@defgrad("concat")
def _concat_grad(g, ans, *xs, axis):
    if len(xs) == 1:
        return (g,)
    return tuple(split(g, [x._shape[axis] for x in xs], axis))


@defgrad("stack")
def _stack_grad(g, ans, *xs, axis):
    return tuple(unstack(g, num=len(xs), axis=axis))


@defgrad("split")
def _split_grad(g, ans, x, num_or_size_splits, axis):
    return (concat(list(g), axis),)


@defgrad("unstack")
def _unstack_grad(g, ans, x, num, axis):
    if not num:
        return (zeros_like(x),)
    return (stack(list(g), axis),)


# ---- padding and slicing -------------------------------------------------------------------

def _axis_slice(t, axis, start, size):
    begin = [0] * len(t._shape)
    sizes = [-1] * len(t._shape)
    begin[axis], sizes[axis] = start, size
    return slice(t, begin, sizes)


def _mirror_pad_grad(g, shape, paddings, mode):
    """Fold the mirrored borders back onto the entries they copied, one axis at a time."""
    off = 1 if mode == "REFLECT" else 0  # REFLECT skips the edge entry
    rank = len(shape)
    for ax, (a, b) in enumerate(paddings):
        if not a and not b:
            continue
        n = shape[ax]
        core = _axis_slice(g, ax, a, n)
        pads = [[0, 0] for _ in range(rank)]
        if a:
            pads[ax] = [off, n - off - a]
            core = core + pad(reverse(_axis_slice(g, ax, 0, a), [ax]), pads)
        if b:
            pads[ax] = [n - b - off, off]
            core = core + pad(reverse(_axis_slice(g, ax, a + n, b), [ax]), pads)
        g = core
    return g


@defgrad("pad")
def _pad_grad(g, ans, x, paddings, mode, constant_values):
    if mode == "CONSTANT":
        return (slice(g, [a for a, _ in paddings], x._shape),)
    return (_mirror_pad_grad(g, x._shape, paddings, mode),)


@defgrad("slice")
def _slice_grad(g, ans, x, begin, size):
    return (pad(g, [[b, d - b - s] for b, s, d in zip(begin, size, x._shape)]),)


@defgrad("strided_slice")
def _strided_slice_grad(g, ans, x, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                        shrink_axis_mask):
    return (strided_slice_grad(x._shape, begin, end, strides, g, begin_mask=begin_mask, end_mask=end_mask,
                               ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                               shrink_axis_mask=shrink_axis_mask),)


@defgrad("strided_slice_grad")
def _strided_slice_grad_grad(g, ans, dy, shape, begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                             new_axis_mask, shrink_axis_mask):
    return (strided_slice(g, begin, end, strides, begin_mask=begin_mask, end_mask=end_mask,
                          ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                          shrink_axis_mask=shrink_axis_mask),)


# ---- gather and scatter -------------------------------------------------------------------

@defgrad("gather")
def _gather_grad(g, ans, params, indices, axis, batch_dims):
    return (_scatter_add_axis(g, indices, params._shape[axis], axis, batch_dims, "Gather"), None)


@defgrad("unsorted_segment_sum")
def _segment_sum_grad(g, ans, data, segment_ids, num_segments, axis=0, batch_dims=0, drop_negative=True):
    if not drop_negative:
        return (gather(g, segment_ids, axis=axis, batch_dims=batch_dims), None)
    # dropped (negative) ids get no gradient: gather at max(id, 0), then zero those rows
    got = gather(g, maximum(segment_ids, 0), axis=axis, batch_dims=batch_dims)
    keep = greater_equal(segment_ids, 0)
    keep = reshape(keep, keep._shape + (1,) * (len(got._shape) - len(keep._shape)))
    return (where(keep, got, zeros_like(got)), None)


@defgrad("gather_nd")
def _gather_nd_grad(g, ans, params, indices, batch_dims):
    ps = params._shape
    if not batch_dims:
        return (scatter_nd(indices, g, ps), None)
    # fold the batch axes into the index tuples: [b, i0, i1, ...] over params reshaped [B, ...]
    is_ = indices._shape
    k, bd = is_[-1], batch_dims
    nb, n = 1, 1
    for d in ps[:bd]:
        nb *= d
    for d in is_[bd:-1]:
        n *= d
    idx = reshape(indices, [nb, n, k])
    bidx = broadcast_to(reshape(range_(nb, dtype=indices._dtype), [nb, 1, 1]), [nb, n, 1])
    full = reshape(concat([bidx, idx], -1), [nb * n, k + 1])
    flat_g = reshape(g, (nb * n,) + tuple(ps[bd + k:]))
    return (reshape(scatter_nd(full, flat_g, (nb,) + tuple(ps[bd:])), ps), None)


@defgrad("scatter_nd")
def _scatter_nd_grad(g, ans, indices, updates, shape):
    return (None, gather_nd(g, indices))


@defgrad("tensor_scatter_nd_update")
def _tensor_scatter_update_grad(g, ans, tensor, indices, updates):
    return (tensor_scatter_nd_update(g, indices, zeros_like(updates)), None, gather_nd(g, indices))


@defgrad("tensor_scatter_nd_add")
def _tensor_scatter_add_grad(g, ans, tensor, indices, updates):
    return (g, None, gather_nd(g, indices))


# ---- select -----------------------------------------------------------------------------

@defgrad("select")
def _select_grad(g, ans, condition, x, y):
    zero = zeros_like(g)
    return (None, where(condition, g, zero), where(condition, zero, g))


# ---- scans ----------------------------------------------------------------------------

@defgrad("cumsum")
def _cumsum_grad(g, ans, x, axis, exclusive, reverse):
    return (cumsum(g, axis, exclusive=exclusive, reverse=not reverse),)


@defgrad("cumprod")
def _cumprod_grad(g, ans, x, axis, exclusive, reverse):
    # TensorFlow's rule: exact for non-zero x
    return (real_div(cumsum(multiply(g, ans), axis, exclusive=exclusive, reverse=not reverse), x),)


# ---- sorting ----------------------------------------------------------------------------

def _scatter_last(g, idx, n, op):
    """out[..., idx[..., j]] += g[..., j] along the last axis."""
    last = len(g._shape) - 1
    return _scatter_add_axis(g, idx, n, last, last, op)


@defgrad("sort")
def _sort_grad(g, ans, x, axis, direction):
    idx = argsort(x, axis, direction)  # the same stable permutation the sort used
    last = len(x._shape) - 1
    if axis == last:
        return (_scatter_last(g, idx, x._shape[axis], "Sort"),)
    perm = [i for i in range(len(x._shape)) if i != axis] + [axis]
    out = _scatter_last(transpose(g, perm), transpose(idx, perm), x._shape[axis], "Sort")
    return (transpose(out, _inverse(perm)),)


@defgrad("top_k")
def _top_k_grad(g, ans, x, k, sorted):
    return (_scatter_last(g[0], ans[1], x._shape[-1], "TopKV2"),)
