"""Array manipulation names of issue 14: roll, identity_n, and the rest of the tensor_scatter_nd_* family
(sub, max, min; update and add are index_ops').

roll is a gather along each rolled axis at (i - shift) mod n (so a shift may be a tensor, and the
gradient is gather's); tensor_scatter_nd_max/min are primitives over ``tpf_scatter_nd_reduce``
(csrc/segment.c; GPU backends run it on the host, tapeflow.kernels.gpu_entries_host)."""
from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import int_list, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from ._shape import _NUMERIC, _prod
from .array_ops import identity, ones_like
from .index_ops import (_back, _copy, _f32, _tensor_scatter_args, _tensor_scatter_detail, gather,
                        tensor_scatter_nd_add)
from .math_ops import cast, floormod, negative, subtract
from .reduce_ops import reduce_sum
from .sort_ops import cumsum

__all__ = ["roll", "identity_n", "tensor_scatter_nd_sub", "tensor_scatter_nd_max", "tensor_scatter_nd_min"]


def _axis_length(x, axis):
    """x.shape[axis] as an int32 scalar tensor (also when unknown while tracing)."""
    line = x[(0,) * axis + (slice(None),) + (0,) * (len(x._shape) - axis - 1)]
    return reduce_sum(ones_like(line, dtype=_dt.int32))


@register("roll", "Roll", kind="composite")
def roll(input, shift, axis, name=None):
    """Elements shifted ``shift`` places along ``axis`` (several axes when both are lists), wrapping around:
    out[..., (i + shift) mod n, ...] = input[..., i, ...].  A negative shift rolls the other way.

    >>> import tapeflow as tf
    >>> tf.roll(tf.constant([0, 1, 2, 3, 4]), shift=2, axis=0).numpy().tolist()
    [3, 4, 0, 1, 2]
    >>> tf.roll(tf.constant([[0, 1, 2], [3, 4, 5]]), shift=[1, -1], axis=[0, 1]).numpy().tolist()
    [[4, 5, 3], [1, 2, 0]]
    """
    op = "Roll"
    x = input if isinstance(input, Tensor) else to_tensor(input, op)
    axes = int_list(axis, op, "axis")
    sh = shift if isinstance(shift, Tensor) else to_tensor(shift, op, _dt.int64 if isinstance(shift, int) and
                                                           abs(shift) >= 2 ** 31 else None)
    if not sh._dtype.is_integer or sh._dtype not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"shift has dtype {sh._dtype.name}; allowed: int32, int64", op)
    if len(sh._shape) > 1 or (len(sh._shape) == 1 and sh._shape[0] is not None and sh._shape[0] != len(axes)) or \
            (not sh._shape and len(axes) != 1):
        raise InvalidArgumentError(f"shift has shape {list(sh._shape)} for {len(axes)} axes; allowed: one shift per "
                                   "axis", op)
    r = len(x._shape)
    for a in axes:
        if not -r <= a < r:
            raise InvalidArgumentError(f"axis = {a} is not in [{-r}, {r})", op)
    out = x
    for j, a in enumerate(axes):
        a = a % r
        n = x._shape[a]
        if n == 0:
            continue
        s = cast(sh if not sh._shape else sh[j], _dt.int32)
        pos = cumsum(ones_like(x[(0,) * a + (slice(None),) + (0,) * (r - a - 1)], dtype=_dt.int32)) - 1
        length = _axis_length(x, a) if n is None else cast(n, _dt.int32)
        out = gather(out, floormod(subtract(pos, s), length), axis=a)
    return out if out is not x else identity(x)


@register("identity_n", "IdentityN", kind="composite")
def identity_n(input, name=None):
    """A list of tensors with the values of ``input``'s (a list or tuple of tensors), one identity each.

    >>> import tapeflow as tf
    >>> a, b = tf.identity_n([tf.constant(1.0), tf.constant([2, 3])])
    >>> a.numpy().tolist(), b.numpy().tolist()
    (1.0, [2, 3])
    """
    if isinstance(input, Tensor) or not isinstance(input, (list, tuple)):
        raise TypeError(f"input must be a list or tuple of tensors, got {type(input).__name__} [Op:IdentityN]")
    return [identity(t if isinstance(t, Tensor) else to_tensor(t, "IdentityN")) for t in input]


@register("tensor_scatter_nd_sub", "TensorScatterSub", kind="composite")
def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices`` (repeated indices subtract each time).

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_sub(tf.constant([1, 2, 3]), [[0], [2], [0]], [5, 1, 1]).numpy().tolist()
    [-5, 2, 2]
    """
    x, idx, u = _tensor_scatter_args(tensor, indices, updates, "TensorScatterSub", _NUMERIC)
    return tensor_scatter_nd_add(x, idx, negative(u))


def _scatter_reduce_infer(x, idx, u):
    return x._shape, x._dtype


def _scatter_reduce_run(dev, x, idx, u, code):
    out, src = (_f32(x), _f32(u)) if x._dtype in (_dt.float16, _dt.bfloat16) else (_copy(x), u)
    shape, k = out._shape, idx._shape[-1]
    be = dev.backend
    check(be.scatter_nd_reduce(code, out._dtype.code, idx._dtype.code, idx._h, src._h, out._h,
                               _prod(idx._shape[:-1]), k, list(shape[:k]), _prod(shape[k:]), be.new_int64([0])),
          "scatter_nd_reduce")
    return _back(out, x._dtype)


def _scatter_reduce_primitive(name, tf_name, code):
    @primitive(name, tf_name, infer=_scatter_reduce_infer, dtypes=_NUMERIC, detail=_tensor_scatter_detail)
    def impl(dev, x, idx, u):
        return _scatter_reduce_run(dev, x, idx, u, code)
    return impl


_SCATTER_MAX = _scatter_reduce_primitive("tensor_scatter_nd_max", "TensorScatterMax", 0)
_SCATTER_MIN = _scatter_reduce_primitive("tensor_scatter_nd_min", "TensorScatterMin", 1)


@register("tensor_scatter_nd_max", "TensorScatterMax")
def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of ``tensor`` where each entry at ``indices`` is the largest of itself and its updates.

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_max(tf.constant([1, 5, 3]), [[0], [1], [0]], [4, 2, 7]).numpy().tolist()
    [7, 5, 3]
    """
    return run(_SCATTER_MAX, _tensor_scatter_args(tensor, indices, updates, "TensorScatterMax", _NUMERIC))


@register("tensor_scatter_nd_min", "TensorScatterMin")
def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of ``tensor`` where each entry at ``indices`` is the smallest of itself and its updates.

    >>> import tapeflow as tf
    >>> tf.tensor_scatter_nd_min(tf.constant([1, 5, 3]), [[0], [1], [0]], [4, 2, 7]).numpy().tolist()
    [1, 2, 3]
    """
    return run(_SCATTER_MIN, _tensor_scatter_args(tensor, indices, updates, "TensorScatterMin", _NUMERIC))

