"""Reductions (sum, prod, mean, max, min, any, all), their composites (logsumexp, variance, std,
euclidean norm, count_nonzero) and the arg-reductions: the ``reduce`` kernel family."""
from __future__ import annotations


from tapeflow import kernels

from .. import dtypes as _dt
from ..dispatch import alloc, dtype_arg, normalize_axes, normalize_axis, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor, make
from . import _ew
from ._shape import _contig_strides as _contig
from ._shape import _prod
from .math_ops import (B, F, N, _HALF_CODE, _cast_raw, _strided, add, cast, exp, greater, log, maximum, minimum,
                       multiply, not_equal, sqrt, square, squared_difference, subtract)

# ---- reductions -------------------------------------------------------------

def _reduce_plan(shape, axes):
    """(outer, r, inner, perm): the kernel's view of reducing ``axes``; perm is a
    transpose needed first (None when the reduced axes are already adjacent)."""
    groups = []  # [size, reduced]
    for i, d in enumerate(shape):
        if d == 1:
            continue
        red = i in axes
        if groups and groups[-1][1] == red:
            groups[-1][0] *= d
        else:
            groups.append([d, red])
    flags = [g[1] for g in groups]
    sizes = [g[0] for g in groups]
    if flags.count(True) <= 1:
        if True not in flags:
            return 1, 1, _prod(sizes), None
        k = flags.index(True)
        return _prod(sizes[:k]), sizes[k], _prod(sizes[k + 1:]), None
    kept = [i for i in range(len(shape)) if i not in axes]
    perm = kept + list(axes)
    return _prod([shape[i] for i in kept]), _prod([shape[i] for i in axes]), 1, perm


_red_plans: dict = {}


def _red_plan(shape, axis, keepdims, tf_name):
    """(axes, out_shape, outer, r, inner, perm, perm_shape, perm_strides) for a reduction, cached per call shape."""
    # cached only for int axes: 0.0 == 0 as a dict key, and a float axis must still meet the type check
    key = (shape, axis if axis is None or type(axis) is int else
           (tuple(axis) if type(axis) in (list, tuple) and all(type(a) is int for a in axis) else None), keepdims)
    plan = _red_plans.get(key) if key[1] is not None or axis is None else None
    if plan is None:
        axes = normalize_axes(axis, len(shape), tf_name)
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims else \
            tuple(d for i, d in enumerate(shape) if i not in axes)
        # traced with unknown dimensions: the kernel's view waits until the graph runs
        outer, r, inner, perm = _reduce_plan(shape, axes) if None not in shape else (None, None, None, None)
        pshape = pstrides = None
        if perm is not None:
            strides = _contig(shape)
            pshape, pstrides = [shape[p] for p in perm], [strides[p] for p in perm]
        plan = (axes, out_shape, outer, r, inner, perm, pshape, pstrides, {"axis": axes, "keepdims": bool(keepdims)})
        if key[1] is not None or axis is None:
            if len(_red_plans) > 4096:
                _red_plans.clear()
            _red_plans[key] = plan
    return plan


def _reduce_infer(x, *, axis, keepdims):
    shape = x._shape
    out = tuple(1 if i in axis else d for i, d in enumerate(shape)) if keepdims else \
        tuple(d for i, d in enumerate(shape) if i not in axis)
    return out, x._dtype


def _reduction(name, tf_name, code, allowed):
    """The primitive of one reduction kernel: ``attrs`` are the normalised ``axis`` tuple and ``keepdims``."""
    @primitive(name, tf_name, infer=_reduce_infer, dtypes=allowed)
    def impl(dev, x, *, axis, keepdims):
        dt = x._dtype
        _, out_shape, outer, r, inner, perm, pshape, pstrides, _ = _red_plan(x._shape, axis, keepdims, tf_name)
        src = _cast_raw(x, _dt.float32) if dt.code <= _HALF_CODE else x
        if perm is not None and x._size:
            src = _strided(src, pshape, pstrides, tf_name)
        be = dev.backend
        sdt = src._dtype
        h, host = be.alloc(out_shape, sdt.np)
        check(be.reduce(code, sdt.code, src._h, h, outer, r, inner), "reduce")
        size = 1
        for d in out_shape:
            size *= d
        out = make(h, host, out_shape, sdt, dev, size)
        return out if sdt is dt else _cast_raw(out, dt)
    return impl


def _reduce(prim, x, axis, keepdims):
    """Validation (the axes against ``x``'s rank) and one call of the reduction primitive."""
    if type(x) is not Tensor:
        if hasattr(x, "nested_row_splits"):  # a RaggedTensor: tf.ragged's reduction (core/ragged.py)
            from .. import ragged

            return getattr(ragged, prim.name)(x, axis, keepdims)
        x = to_tensor(x, prim.tf_name)
    return run(prim, (x,), _red_plan(x._shape, axis, keepdims, prim.tf_name)[8])


_RED = kernels.REDUCE_CODES
_REDUCE_SUM = _reduction("reduce_sum", "Sum", _RED["sum"], N)
_REDUCE_PROD = _reduction("reduce_prod", "Prod", _RED["prod"], N)
_REDUCE_MEAN = _reduction("reduce_mean", "Mean", _RED["mean"], N)
_REDUCE_MAX = _reduction("reduce_max", "Max", _RED["max"], N + B)
_REDUCE_MIN = _reduction("reduce_min", "Min", _RED["min"], N + B)
_REDUCE_ANY = _reduction("reduce_any", "Any", _RED["any"], B)
_REDUCE_ALL = _reduction("reduce_all", "All", _RED["all"], B)


@register("reduce_sum", "Sum")
def reduce_sum(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Sum over ``axis`` (an int, a list, or None for all); integer sums wrap like the dtype.

    >>> import tapeflow as tf
    >>> x = tf.constant([[1, 2], [3, 4]])
    >>> tf.reduce_sum(x).numpy(), tf.reduce_sum(x, axis=0).numpy().tolist()
    (np.int32(10), [4, 6])
    """
    return _reduce(_REDUCE_SUM, input_tensor, axis, keepdims)


@register("reduce_prod", "Prod")
def reduce_prod(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Product over ``axis``.

    >>> import tapeflow as tf
    >>> tf.reduce_prod(tf.constant([1.0, 2.0, 3.0])).numpy()
    np.float32(6.0)
    """
    return _reduce(_REDUCE_PROD, input_tensor, axis, keepdims)


@register("reduce_mean", "Mean")
def reduce_mean(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Mean over ``axis`` (integer means truncate toward zero; an empty float mean is NaN).

    >>> import tapeflow as tf
    >>> tf.reduce_mean(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=1).numpy().tolist()
    [1.5, 3.5]
    """
    return _reduce(_REDUCE_MEAN, input_tensor, axis, keepdims)


@register("reduce_max", "Max")
def reduce_max(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Maximum over ``axis`` (NaN propagates; an empty reduction gives the dtype's lowest value).

    >>> import tapeflow as tf
    >>> tf.reduce_max(tf.constant([[1, 5], [3, 2]]), axis=1).numpy().tolist()
    [5, 3]
    """
    return _reduce(_REDUCE_MAX, input_tensor, axis, keepdims)


@register("reduce_min", "Min")
def reduce_min(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Minimum over ``axis`` (NaN propagates; an empty reduction gives the dtype's highest value).

    >>> import tapeflow as tf
    >>> tf.reduce_min(tf.constant([[1, 5], [3, 2]]), axis=0).numpy().tolist()
    [1, 2]
    """
    return _reduce(_REDUCE_MIN, input_tensor, axis, keepdims)


@register("reduce_any", "Any", nondiff="boolean output")
def reduce_any(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical or over ``axis`` (bool input).

    >>> import tapeflow as tf
    >>> tf.reduce_any(tf.constant([False, True])).numpy()
    np.True_
    """
    return _reduce(_REDUCE_ANY, input_tensor, axis, keepdims)


@register("reduce_all", "All", nondiff="boolean output")
def reduce_all(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical and over ``axis`` (bool input).

    >>> import tapeflow as tf
    >>> tf.reduce_all(tf.constant([False, True])).numpy()
    np.False_
    """
    return _reduce(_REDUCE_ALL, input_tensor, axis, keepdims)


def _float_reduce_input(x, tf_name):
    """A float input of a composite reduction, float16/bfloat16 widened to float32."""
    x = x if type(x) is Tensor else to_tensor(x, tf_name)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"{tf_name} does not support {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in F)}", tf_name)
    return x, (cast(x, _dt.float32) if x._dtype in _ew._HALF else x)


def _safe_sqrt(v):
    """sqrt(v) whose gradient at v = 0 is 0 rather than NaN (a norm's subgradient at 0); NaN stays NaN."""
    from .array_ops import where

    pos = greater(v, _ew.scalar_like(0, v, "Sqrt"))
    return where(pos, sqrt(where(pos, v, _ew.scalar_like(1, v, "Sqrt"))), multiply(v, _ew.scalar_like(0, v, "Sqrt")))


def _kept_shape(shape, axes, keepdims):
    return tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims else \
        tuple(d for i, d in enumerate(shape) if i not in axes)


@register("reduce_logsumexp", "ReduceLogSumExp", kind="composite")
def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over ``axis``, computed stably as m + log(sum(exp(x - m))) with m = max(x).

    >>> import tapeflow as tf
    >>> tf.reduce_logsumexp(tf.constant([[1000.0, 1000.0], [0.0, 0.0]]), axis=1).numpy().tolist()
    [1000.6931762695312, 0.6931471824645996]
    """
    from .array_ops import reshape
    from .grad_ops import stop_gradient

    x0, x = _float_reduce_input(input_tensor, "ReduceLogSumExp")
    axes = normalize_axes(axis, len(x._shape), "ReduceLogSumExp")
    big = _dt.float32.max if x._dtype is _dt.float32 else _dt.float64.max
    # +-inf maxima are clamped so that x - m stays defined: the result is still +-inf
    m = stop_gradient(minimum(maximum(reduce_max(x, axes, keepdims=True), -big), big))
    out = add(log(reduce_sum(exp(subtract(x, m)), axes, keepdims=True)), m)
    out = reshape(out, _kept_shape(x._shape, axes, keepdims))
    return out if out._dtype is x0._dtype else cast(out, x0._dtype)


@register("reduce_variance", "ReduceVariance", kind="composite")
def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance mean((x - mean(x))**2) over ``axis`` (floats).

    >>> import tapeflow as tf
    >>> tf.math.reduce_variance(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    np.float32(1.25)
    """
    x0, x = _float_reduce_input(input_tensor, "ReduceVariance")
    axes = normalize_axes(axis, len(x._shape), "ReduceVariance")
    out = reduce_mean(squared_difference(x, reduce_mean(x, axes, keepdims=True)), axes, keepdims)
    return out if out._dtype is x0._dtype else cast(out, x0._dtype)


@register("reduce_std", "ReduceStd", kind="composite")
def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Population standard deviation sqrt(reduce_variance(x)) over ``axis`` (floats); its gradient is 0 where
    the variance is 0.

    >>> import tapeflow as tf
    >>> tf.math.reduce_std(tf.constant([1.0, 3.0])).numpy()
    np.float32(1.0)
    """
    x0, x = _float_reduce_input(input_tensor, "ReduceStd")
    out = _safe_sqrt(reduce_variance(x, normalize_axes(axis, len(x._shape), "ReduceStd"), keepdims))
    return out if out._dtype is x0._dtype else cast(out, x0._dtype)


@register("reduce_euclidean_norm", "EuclideanNorm", kind="composite")
def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x**2)) over ``axis``; integer inputs give the integer part (the gradient at 0 is 0).

    >>> import tapeflow as tf
    >>> tf.math.reduce_euclidean_norm(tf.constant([[3.0, 4.0], [5.0, 12.0]]), axis=1).numpy().tolist()
    [5.0, 13.0]
    """
    x = input_tensor if type(input_tensor) is Tensor else to_tensor(input_tensor, "EuclideanNorm")
    if x._dtype not in N:
        raise InvalidArgumentError(f"EuclideanNorm does not support {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in N)}", "EuclideanNorm")
    axes = normalize_axes(axis, len(x._shape), "EuclideanNorm")
    src = x
    if not x._dtype.is_floating or x._dtype in _ew._HALF:
        src = cast(x, _dt.float64 if x._dtype.is_integer else _dt.float32)
    out = _safe_sqrt(reduce_sum(square(src), axes, keepdims))
    return out if out._dtype is x._dtype else cast(out, x._dtype)


@register("count_nonzero", "CountNonzero", kind="composite")
def count_nonzero(input, axis=None, keepdims=False, dtype=_dt.int64, name=None):
    """The number of non-zero (or true) entries over ``axis``, as ``dtype`` (default int64).

    >>> import tapeflow as tf
    >>> tf.math.count_nonzero(tf.constant([[0, 1, 2], [0, 0, 3]]), axis=1).numpy().tolist()
    [2, 1]
    """
    x = input if type(input) is Tensor else to_tensor(input, "CountNonzero")
    dtype = dtype_arg(dtype, "CountNonzero")
    if not (dtype.is_integer or dtype.is_floating):
        raise InvalidArgumentError(f"dtype = {dtype.name}; allowed: an integer or float dtype", "CountNonzero")
    axes = normalize_axes(axis, len(x._shape), "CountNonzero")
    nz = x if x._dtype is _dt.bool_ else not_equal(x, _ew.scalar_like(0, x, "CountNonzero"))
    out = reduce_sum(cast(nz, _dt.int64), axes, keepdims)
    return out if dtype is _dt.int64 else cast(out, dtype)


def _argreduce(prim, x, axis, output_type):
    """Validation (the axis against ``x``'s shape, the output type) and one call of the arg-reduction primitive."""
    tf_name = prim.tf_name
    if type(x) is not Tensor:
        x = to_tensor(x, tf_name)
    output_type = dtype_arg(output_type, tf_name, "output_type")
    if output_type not in (_dt.int32, _dt.int64, _dt.int16, _dt.uint8, _dt.int8):
        raise InvalidArgumentError(f"output_type = {output_type.name}; allowed: int32, int64", tf_name)
    shape = x._shape
    if axis is None:
        axis = 0
    if not shape:
        raise InvalidArgumentError("input is a scalar (shape ()); allowed: rank >= 1", tf_name)
    ax = normalize_axis(axis, len(shape), tf_name)
    if shape[ax] == 0:
        raise InvalidArgumentError(f"reduction axis {ax} is empty in shape {tuple(shape)}; allowed: an axis of "
                                   "size >= 1", tf_name)
    return run(prim, (x,), {"axis": ax, "output_type": output_type})


def _argreduce_infer(x, *, axis, output_type):
    return x._shape[:axis] + x._shape[axis + 1:], output_type


def _argreduction(name, tf_name, which):
    """The primitive of one arg-reduction kernel: ``attrs`` are the normalised ``axis`` and ``output_type``."""
    @primitive(name, tf_name, infer=_argreduce_infer)
    def impl(dev, x, *, axis, output_type):
        shape = x._shape
        src = _cast_raw(x, _dt.float32) if x._dtype.code <= _HALF_CODE else x
        out = alloc(shape[:axis] + shape[axis + 1:], _dt.int64, dev)
        check(dev.backend.argreduce(which, src._dtype.code, src._h, out._h, _prod(shape[:axis]), shape[axis],
                                    _prod(shape[axis + 1:])), "argreduce")
        return out if output_type is _dt.int64 else _cast_raw(out, output_type)
    return impl


_ARGMAX = _argreduction("argmax", "ArgMax", 0)
_ARGMIN = _argreduction("argmin", "ArgMin", 1)


@register("argmax", "ArgMax", nondiff="integer output")
def argmax(input, axis=None, output_type=_dt.int64, name=None) -> Tensor:
    """Index of the largest value along ``axis`` (default 0); the first one on ties.

    >>> import tapeflow as tf
    >>> tf.argmax(tf.constant([[1, 5], [3, 2]]), axis=1).numpy().tolist()
    [1, 0]
    """
    return _argreduce(_ARGMAX, input, axis, output_type)


@register("argmin", "ArgMin", nondiff="integer output")
def argmin(input, axis=None, output_type=_dt.int64, name=None) -> Tensor:
    """Index of the smallest value along ``axis`` (default 0).

    >>> import tapeflow as tf
    >>> tf.argmin(tf.constant([[1, 5], [3, 2]]), axis=0).numpy().tolist()
    [0, 1]
    """
    return _argreduce(_ARGMIN, input, axis, output_type)




__all__ = [n for n, v in list(globals().items()) if callable(v) and getattr(v, "__module__", None) == __name__
           and not n.startswith("_")]
