"""Segment reductions beyond the sum (issue 14): max, min, prod as primitives over the C kernel
``tpf_segment_reduce`` (csrc/segment.c; GPU backends run it on the host, see
tapeflow.kernels.gpu_entries_host), and mean / sqrt_n and the sorted ``segment_*`` forms as
composites over them and ``unsorted_segment_sum``.

TensorFlow's conventions: negative ids are dropped by the unsorted forms; an empty segment holds
the lowest value (max), the highest (min), 1 (prod), 0 (mean, sqrt_n, and every sorted form but
prod).  float16/bfloat16 compute in float32."""
from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import alloc, register, static_value, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from ._shape import _NUMERIC, _dim_eq, _index_tensor, _int_arg, _prod
from .array_ops import ones_like, reshape, where, zeros_like
from .index_ops import _back, _check_data, _f32, _first, _segment_detail, _segment_dims, unsorted_segment_sum
from .math_ops import cast, greater, maximum, real_div, sqrt, truediv, truncatediv

__all__ = ["unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_mean",
           "unsorted_segment_sqrt_n", "segment_max", "segment_min", "segment_prod", "segment_mean"]


def _reduce_infer(data, ids, *, num_segments):
    return (num_segments,) + tuple(data._shape[len(ids._shape):]), data._dtype


def _reduce_primitive(name, tf_name, code):
    @primitive(name, tf_name, infer=_reduce_infer, dtypes=_NUMERIC, detail=_segment_detail)
    def impl(dev, data, ids, *, num_segments):
        src = _f32(data)
        k = len(ids._shape)
        inner_shape = tuple(data._shape[k:])
        out = alloc((num_segments,) + inner_shape, src._dtype, dev)
        be = dev.backend
        check(be.segment_reduce(code, src._dtype.code, data._dtype.code, ids._dtype.code, src._h, ids._h, out._h,
                                _prod(ids._shape), num_segments, _prod(inner_shape), be.new_int64([0])),
              "segment_reduce")
        return _back(out, data._dtype)
    return impl


_MAX = _reduce_primitive("unsorted_segment_max", "UnsortedSegmentMax", 0)
_MIN = _reduce_primitive("unsorted_segment_min", "UnsortedSegmentMin", 1)
_PROD = _reduce_primitive("unsorted_segment_prod", "UnsortedSegmentProd", 2)


def _unsorted_args(data, segment_ids, num_segments, op):
    x = data if type(data) is Tensor else to_tensor(data, op)
    ids = _index_tensor(segment_ids, op, "segment_ids")
    n = _int_arg(num_segments, op, "num_segments")
    if n < 0:
        raise InvalidArgumentError(f"num_segments = {n}; allowed: num_segments >= 0", op)
    _segment_dims(x, ids, op)
    _check_data(x, op)
    return x, ids, n


@register("unsorted_segment_max", "UnsortedSegmentMax")
def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The largest slice of ``data`` per segment id: out[s] = max of data[i] where segment_ids[i] == s.

    Ids may come in any order; negative ids are dropped; an empty segment holds the dtype's lowest value.

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_max(tf.constant([1, 5, 3, 4]), [0, 0, 2, 2], 3).numpy().tolist()
    [5, -2147483648, 4]
    """
    return _run_unsorted(_MAX, data, segment_ids, num_segments, "UnsortedSegmentMax")


def _run_unsorted(prim, data, segment_ids, num_segments, op):
    x, ids, n = _unsorted_args(data, segment_ids, num_segments, op)
    return run(prim, (x, ids), {"num_segments": n})


@register("unsorted_segment_min", "UnsortedSegmentMin")
def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The smallest slice of ``data`` per segment id: out[s] = min of data[i] where segment_ids[i] == s.

    Ids may come in any order; negative ids are dropped; an empty segment holds the dtype's highest value.

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_min(tf.constant([1.0, 5.0, 3.0]), [1, 1, 0], 2).numpy().tolist()
    [3.0, 1.0]
    """
    return _run_unsorted(_MIN, data, segment_ids, num_segments, "UnsortedSegmentMin")


@register("unsorted_segment_prod", "UnsortedSegmentProd")
def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the slices of ``data`` per segment id: out[s] = prod of data[i] where segment_ids[i] == s.

    Ids may come in any order; negative ids are dropped; an empty segment holds 1.

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_prod(tf.constant([2, 3, 4]), [0, 0, 2], 3).numpy().tolist()
    [6, 1, 4]
    """
    return _run_unsorted(_PROD, data, segment_ids, num_segments, "UnsortedSegmentProd")


def _counts(x, ids, n, op):
    """How many ids fall in each segment (negatives dropped), shaped to broadcast against a [n, ...] result."""
    ones = cast(ones_like(ids), x._dtype if x._dtype in _NUMERIC else _dt.float32)
    count = unsorted_segment_sum(ones, ids, n)
    return reshape(count, (n,) + (1,) * (len(x._shape) - len(ids._shape)))


@register("unsorted_segment_mean", "UnsortedSegmentMean", kind="composite")
def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the slices of ``data`` per segment id: sum / max(count, 1) (0 for an empty segment).

    Integer data divide as ``tf.truediv`` does (int8/int16 to float32, int32/int64 to float64), as in TensorFlow.

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_mean(tf.constant([1.0, 2.0, 4.0]), [0, 0, 2], 3).numpy().tolist()
    [1.5, 0.0, 4.0]
    """
    op = "UnsortedSegmentMean"
    x, ids, n = _unsorted_args(data, segment_ids, num_segments, op)
    total = unsorted_segment_sum(x, ids, n)
    count = maximum(_counts(x, ids, n, op), cast(1, x._dtype))
    return truediv(total, count) if x._dtype.is_integer else real_div(total, count)


@register("unsorted_segment_sqrt_n", "UnsortedSegmentSqrtN", kind="composite")
def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None) -> Tensor:
    """The sum of the slices of ``data`` per segment id over the square root of their count (0 if empty).

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_sqrt_n(tf.constant([3.0, 1.0, 4.0]), [0, 0, 0], 1).numpy().tolist()
    [4.618802070617676]
    """
    op = "UnsortedSegmentSqrtN"
    x, ids, n = _unsorted_args(data, segment_ids, num_segments, op)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"data has dtype {x._dtype.name}; allowed: float16, bfloat16, float32, float64", op)
    count = maximum(_counts(x, ids, n, op), cast(1, x._dtype))
    return real_div(unsorted_segment_sum(x, ids, n), sqrt(count))


# ---- the sorted forms: ids are a sorted vector, the output has ids[-1] + 1 rows ------------------------

def _sorted_args(data, segment_ids, op):
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
                                   f"= {int(h[i - 1])}; allowed: non-decreasing ids", op)
    if h.size and h[0] < 0:
        raise InvalidArgumentError(f"segment_ids[0] = {int(h[0])} is not in [0, {n})", op)
    return x, ids, n


def _zero_empty(out, x, ids, n, op):
    """``out`` with the rows of empty segments set to 0 (the sorted forms' convention)."""
    filled = greater(_counts(x, ids, n, op), cast(0, x._dtype))
    return where(filled, out, zeros_like(out))


@register("segment_max", "SegmentMax", kind="composite")
def segment_max(data, segment_ids, name=None):
    """The largest slice of ``data`` per run of equal, sorted ids (0 for an id that does not occur).

    >>> import tapeflow as tf
    >>> tf.math.segment_max(tf.constant([1.0, 5.0, 3.0]), [0, 0, 2]).numpy().tolist()
    [5.0, 0.0, 3.0]
    """
    x, ids, n = _sorted_args(data, segment_ids, "SegmentMax")
    return _zero_empty(run(_MAX, (x, ids), {"num_segments": n}), x, ids, n, "SegmentMax")


@register("segment_min", "SegmentMin", kind="composite")
def segment_min(data, segment_ids, name=None):
    """The smallest slice of ``data`` per run of equal, sorted ids (0 for an id that does not occur).

    >>> import tapeflow as tf
    >>> tf.math.segment_min(tf.constant([1.0, 5.0, 3.0]), [0, 0, 2]).numpy().tolist()
    [1.0, 0.0, 3.0]
    """
    x, ids, n = _sorted_args(data, segment_ids, "SegmentMin")
    return _zero_empty(run(_MIN, (x, ids), {"num_segments": n}), x, ids, n, "SegmentMin")


@register("segment_prod", "SegmentProd", kind="composite")
def segment_prod(data, segment_ids, name=None):
    """The product of the slices of ``data`` per run of equal, sorted ids (1 for an id that does not occur).

    >>> import tapeflow as tf
    >>> tf.math.segment_prod(tf.constant([2, 3, 4]), [0, 0, 2]).numpy().tolist()
    [6, 1, 4]
    """
    x, ids, n = _sorted_args(data, segment_ids, "SegmentProd")
    return run(_PROD, (x, ids), {"num_segments": n})


@register("segment_mean", "SegmentMean", kind="composite")
def segment_mean(data, segment_ids, name=None):
    """The mean of the slices of ``data`` per run of equal, sorted ids (0 for an id that does not occur).

    Integer data keep their dtype and divide toward zero, as TensorFlow's kernel does.

    >>> import tapeflow as tf
    >>> tf.math.segment_mean(tf.constant([1, 2, 4]), [0, 0, 2]).numpy().tolist()
    [1, 0, 4]
    """
    op = "SegmentMean"
    x, ids, n = _sorted_args(data, segment_ids, op)
    total = unsorted_segment_sum(x, ids, n)
    count = maximum(_counts(x, ids, n, op), cast(1, x._dtype))
    return truncatediv(total, count) if x._dtype.is_integer else real_div(total, count)
