"""Gradient rules of the everyday ops of issue 14 (core's segment_ops, ...), as TensorFlow's.

Segment max/min (and tensor_scatter_nd_max/min): the incoming gradient goes to the entries equal to
their segment's result, split evenly among ties; segment prod: the product of the other entries,
with zeros handled as TensorFlow does (one zero in a segment takes the product of the rest, two or
more give 0).  Every rule is
written with tapeflow ops, so it differentiates again.
"""
from __future__ import annotations

from tapeflow.core.ops import (
    cast,
    div_no_nan,
    equal,
    gather,
    gather_nd,
    greater,
    greater_equal,
    logical_and,
    maximum,
    multiply,
    ones_like,
    real_div,
    reshape,
    scatter_nd,
    unsorted_segment_prod,
    unsorted_segment_sum,
    where,
    zeros_like,
)

from tapeflow.core.runner import PRIMITIVES, run

from ..registry import defgrad


def _gather_drop_negatives(x, ids):
    """x gathered at the segment ids (at 0 for negative ids) and the mask of the ids that are kept,
    shaped to broadcast against the gathered rows."""
    got = gather(x, maximum(ids, 0))
    keep = greater_equal(ids, 0)
    return got, reshape(keep, keep._shape + (1,) * (len(got._shape) - len(keep._shape)))


def _min_or_max_grad(g, ans, data, ids, num_segments):
    got, keep = _gather_drop_negatives(ans, ids)
    selected = logical_and(equal(data, got), keep)
    count = unsorted_segment_sum(cast(selected, g._dtype), ids, num_segments)
    share, _ = _gather_drop_negatives(div_no_nan(g, count), ids)
    return (where(selected, share, zeros_like(share)), None)


defgrad("unsorted_segment_max", _min_or_max_grad)
defgrad("unsorted_segment_min", _min_or_max_grad)


@defgrad("unsorted_segment_prod")
def _segment_prod_grad(g, ans, data, ids, num_segments):
    is_zero = equal(data, zeros_like(data))
    zeros_in = unsorted_segment_sum(cast(is_zero, g._dtype), ids, num_segments)
    g = where(greater(zeros_in, ones_like(zeros_in)), zeros_like(g), g)  # two zeros or more: no gradient
    nonzero = where(is_zero, ones_like(data), data)
    nonzero_prod = unsorted_segment_prod(nonzero, ids, num_segments)
    prod_at, keep = _gather_drop_negatives(ans, ids)
    nonzero_prod_at, _ = _gather_drop_negatives(nonzero_prod, ids)
    partial = where(is_zero, nonzero_prod_at, real_div(prod_at, nonzero))
    g_at, _ = _gather_drop_negatives(g, ids)
    return (where(keep, g_at * partial, zeros_like(partial)), None)


def _tensor_scatter_min_or_max_grad(g, ans, x, indices, updates):
    """TensorFlow's: the gradient goes to whichever of x and the updates gave the result, split among ties."""
    x_won = cast(equal(x, ans), g._dtype)
    u_won = cast(equal(updates, gather_nd(ans, indices)), g._dtype)
    winners = x_won + scatter_nd(indices, u_won, x._shape)
    share = div_no_nan(g, winners)
    return (share * x_won, None, u_won * gather_nd(share, indices))


defgrad("tensor_scatter_nd_max", _tensor_scatter_min_or_max_grad)
defgrad("tensor_scatter_nd_min", _tensor_scatter_min_or_max_grad)


@defgrad("ctc_loss")
def _ctc_loss_grad(g, ans, labels, logits, label_len, logit_len, blank):
    """d loss / d logits from the kernel's forward-backward pass, scaled by each sequence's incoming gradient."""
    grad = run(PRIMITIVES["ctc_loss_grad"], (labels, logits, label_len, logit_len), {"blank": blank})
    return (None, multiply(reshape(g, (1, -1, 1)), grad), None, None)
