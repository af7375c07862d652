"""tf.debugging: assertions on values, shapes and dtypes, and check_numerics.

Assertions run at once (tapeflow is eager): they return ``None`` when the condition
holds and raise :class:`~tapeflow.errors.InvalidArgumentError` naming the failing
values when it does not.  The comparison itself runs as tapeflow ops; NumPy only
formats the message.  ``check_numerics`` is an op with an identity gradient (that
checks the gradient in turn), so it can sit inside a model.

>>> import tapeflow as tf
>>> tf.debugging.assert_equal(tf.zeros([32, 10]).shape, (32, 10))
>>> try:
...     tf.debugging.assert_less(tf.constant([1, 5]), 3)
... except tf.errors.InvalidArgumentError as e:
...     print(str(e).splitlines()[0])
Condition x < y did not hold element-wise.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes as _dt
from .dispatch import hooks, register, to_tensor
from .errors import InvalidArgumentError
from .runner import current_graph, primitive, run, run_tensors
from .tensor import Tensor, make

__all__ = [
    "assert_all_finite",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_scalar",
    "assert_shapes",
    "assert_type",
    "check_numerics",
]


class AssertTypeError(InvalidArgumentError, TypeError):
    """A tensor of the wrong dtype (both an InvalidArgumentError and, as in TensorFlow, a TypeError)."""


def _ops():
    from . import ops

    return ops


def _as(v, op, like=None):
    """``v`` as a tensor; a Python or list value next to a tensor ``like`` takes its dtype."""
    if isinstance(v, Tensor):
        return v
    if like is not None and not hasattr(v, "_as_tensor") and not isinstance(v, (np.ndarray, np.generic)):
        return to_tensor(v, op, like._dtype)
    return to_tensor(v, op)


def _pair(x, y, op):
    """x and y as tensors of one dtype (Python values take the other side's dtype)."""
    x_is = isinstance(x, Tensor) or hasattr(x, "_as_tensor")
    y_is = isinstance(y, Tensor) or hasattr(y, "_as_tensor")
    if x_is or not y_is:
        x = _as(x, op)
        y = _as(y, op, x)
    else:
        y = _as(y, op)
        x = _as(x, op, y)
    if x._dtype is not y._dtype:
        raise InvalidArgumentError(f"x has dtype {x._dtype.name} but y has dtype {y._dtype.name}; allowed: one "
                                   "dtype (use tf.cast)", op)
    return x, y


def _show(t: Tensor, summarize: int) -> str:
    arr = np.asarray(t.numpy())
    flat = arr.reshape(-1)
    body = np.array2string(flat[:summarize], separator=" ")
    more = f" ... ({flat.size} values)" if flat.size > summarize else ""
    return f"(shape={tuple(t._shape)}, dtype={t._dtype.name}) = {body}{more}" if arr.ndim else \
        f"(shape=(), dtype={t._dtype.name}) = {arr.item()!r}"


def _fail(cond: Tensor, x: Tensor, y, sym: str, message, summarize, op):
    """Raise the assertion error: which entries failed, and the values around them."""
    summarize = 3 if summarize is None else max(int(summarize), 1)
    bad = np.argwhere(~np.asarray(cond.numpy(), bool))
    lines = [] if not message else [str(message)]
    lines.append(f"Condition {sym} did not hold element-wise.")
    if cond._shape:
        idx = bad[:summarize].tolist()
        lines.append(f"Indices of first {len(idx)} of {len(bad)} failing values: {idx}")
        ops = _ops()
        for name, t in (("x", x), ("y", y)):
            if t is None:
                continue
            full = ops.broadcast_to(t, cond._shape) if t._shape != cond._shape else t
            vals = np.asarray(full.numpy())[tuple(np.asarray(idx).T)] if idx else []
            lines.append(f"Corresponding {name} values: {np.array2string(np.asarray(vals), separator=' ')}")
    lines.append(f"x {_show(x, summarize)}")
    if y is not None:
        lines.append(f"y {_show(y, summarize)}")
    raise InvalidArgumentError("\n".join(lines), op)


def _holds(cond: Tensor) -> bool:
    return cond._size == 0 or bool(_ops().reduce_all(cond))


def _check(cond: Tensor, x: Tensor, y, sym: str, message, summarize, op) -> None:
    """Raise unless ``cond`` holds everywhere: now, or (a condition computed in a graph being traced) each time the
    graph runs, through a check node (TensorFlow's assert ops in a tf.function)."""
    if current_graph() is not None and any(t._h is None and t._arr is None for t in (cond, x, y) if t is not None):
        run_tensors(_ASSERT_HOLDS, (cond, x) + (() if y is None else (y,)),
                    {"sym": sym, "message": message, "summarize": summarize, "op": op})
        return
    if not _holds(cond):
        _fail(cond, x, y, sym, message, summarize, op)


@primitive("assert_holds", "Assert", infer=lambda *ins, **attrs: [], stateful=True,
           internal="tf.debugging.assert_* in a graph: an output-less check that raises when the graph runs")
def _ASSERT_HOLDS(dev, cond, x, *y, sym, message, summarize, op):
    if not _holds(cond):
        _fail(cond, x, y[0] if y else None, sym, message, summarize, op)
    return ()


def _binary_assert(x, y, fn, sym, message, summarize, op, numeric=True):
    x, y = _pair(x, y, op)
    if numeric and x._dtype not in _dt.NUMERIC:
        raise InvalidArgumentError(f"x and y have dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.NUMERIC)}", op)
    from .ops._ew import broadcast_shape

    broadcast_shape(x._shape, y._shape, op)
    _check(fn(x, y), x, y, sym, message, summarize, op)


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x == y element-wise (shapes broadcast).

    >>> import tapeflow as tf
    >>> tf.debugging.assert_equal(tf.constant([1, 2]), [1, 2])
    """
    _binary_assert(x, y, _ops().equal, "x == y", message, summarize, "AssertEqual", numeric=False)


def assert_none_equal(x, y, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x != y everywhere.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_none_equal(tf.constant([1, 2]), 3)
    """
    _binary_assert(x, y, _ops().not_equal, "x != y", message, summarize, "AssertNoneEqual", numeric=False)


def assert_less(x, y, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x < y element-wise.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_less(tf.constant([1.0, 2.0]), 3.0)
    """
    _binary_assert(x, y, _ops().less, "x < y", message, summarize, "AssertLess")


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x <= y element-wise.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_less_equal(tf.constant([1, 3]), 3)
    """
    _binary_assert(x, y, _ops().less_equal, "x <= y", message, summarize, "AssertLessEqual")


def assert_greater(x, y, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x > y element-wise.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_greater(tf.constant([4, 5]), 3)
    """
    _binary_assert(x, y, _ops().greater, "x > y", message, summarize, "AssertGreater")


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x >= y element-wise.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_greater_equal(tf.constant([3, 5]), 3)
    """
    _binary_assert(x, y, _ops().greater_equal, "x >= y", message, summarize, "AssertGreaterEqual")


def _sign_assert(x, fn, sym, message, summarize, op):
    x = _as(x, op)
    if x._dtype not in _dt.NUMERIC:
        raise InvalidArgumentError(f"x has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.NUMERIC)}", op)
    from .ops._ew import scalar_like

    _check(fn(x, scalar_like(0, x, op)), x, None, sym, message, summarize, op)


def assert_positive(x, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x > 0 everywhere.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_positive(tf.constant([1.0, 2.0]))
    """
    _sign_assert(x, _ops().greater, "x > 0", message, summarize, "AssertPositive")


def assert_negative(x, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x < 0 everywhere.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_negative(tf.constant([-1, -2]))
    """
    _sign_assert(x, _ops().less, "x < 0", message, summarize, "AssertNegative")


def assert_non_negative(x, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x >= 0 everywhere.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_non_negative(tf.constant([0, 2]))
    """
    _sign_assert(x, _ops().greater_equal, "x >= 0", message, summarize, "AssertNonNegative")


def assert_non_positive(x, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless x <= 0 everywhere.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_non_positive(tf.constant([0, -2]))
    """
    _sign_assert(x, _ops().less_equal, "x <= 0", message, summarize, "AssertNonPositive")


_EPS = {"float16": 9.765625e-04, "bfloat16": 7.8125e-03, "float32": 1.1920929e-07, "float64": 2.220446049250313e-16}


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless |x - y| <= atol + rtol * |y| element-wise (floats).

    ``rtol`` and ``atol`` default to 10 * the dtype's machine epsilon; NaN never passes.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_near(tf.constant([1.0, 2.0]), [1.0, 2.0000001])
    """
    op = "AssertNear"
    x, y = _pair(x, y, op)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"x and y have dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.FLOATS)}", op)
    eps = 10 * _EPS[x._dtype.name]
    rtol = eps if rtol is None else rtol
    atol = eps if atol is None else atol
    ops = _ops()
    from .ops._ew import broadcast_shape

    broadcast_shape(x._shape, y._shape, op)
    tol = ops.add(ops.multiply(ops.abs(y), rtol), atol)
    cond = ops.less_equal(ops.abs(ops.subtract(x, y)), tol)
    _check(cond, x, y, f"|x - y| <= atol + rtol * |y| (atol={atol}, rtol={rtol})", message, summarize, op)


def _rank_of(x, op):
    t = x if isinstance(x, Tensor) else to_tensor(x, op)
    return len(t._shape), tuple(t._shape)


def _int_value(v, op, what):
    if isinstance(v, Tensor):
        if v._size != 1 or not v._dtype.is_integer:
            raise InvalidArgumentError(f"{what} is a {v._dtype.name} tensor of shape {tuple(v._shape)}; allowed: "
                                       "a scalar integer", op)
        return int(v.numpy().reshape(()).item())
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise InvalidArgumentError(f"{what} = {v!r}; allowed: an integer", op)
    return int(v)


def _prefix(message):
    return f"{message}\n" if message else ""


def assert_rank(x, rank, message=None, name=None):
    """Raise InvalidArgumentError unless ``x`` has rank ``rank``.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_rank(tf.zeros([2, 3]), 2)
    """
    op = "AssertRank"
    r, shape = _rank_of(x, op)
    want = _int_value(rank, op, "rank")
    if r != want:
        raise InvalidArgumentError(f"{_prefix(message)}x must have rank {want}; received rank {r} (shape {shape})",
                                   op)


def assert_rank_at_least(x, rank, message=None, name=None):
    """Raise InvalidArgumentError unless ``x`` has rank >= ``rank``.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_rank_at_least(tf.zeros([2, 3]), 1)
    """
    op = "AssertRankAtLeast"
    r, shape = _rank_of(x, op)
    want = _int_value(rank, op, "rank")
    if r < want:
        raise InvalidArgumentError(f"{_prefix(message)}x must have rank at least {want}; received rank {r} "
                                   f"(shape {shape})", op)


def assert_rank_in(x, ranks, message=None, name=None):
    """Raise InvalidArgumentError unless the rank of ``x`` is one of ``ranks``.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_rank_in(tf.zeros([2]), [1, 2])
    """
    op = "AssertRankIn"
    r, shape = _rank_of(x, op)
    wants = [_int_value(v, op, "ranks entry") for v in ranks]
    if r not in wants:
        raise InvalidArgumentError(f"{_prefix(message)}x must have rank in {wants}; received rank {r} "
                                   f"(shape {shape})", op)


def assert_scalar(tensor, message=None, name=None):
    """Raise InvalidArgumentError unless ``tensor`` is a scalar (rank 0).

    >>> import tapeflow as tf
    >>> tf.debugging.assert_scalar(tf.constant(1.0))
    """
    op = "AssertScalar"
    r, shape = _rank_of(tensor, op)
    if r != 0:
        raise InvalidArgumentError(f"{_prefix(message)}expected a scalar; received shape {shape}", op)


def assert_type(tensor, tf_type, message=None, name=None):
    """Raise an error (an InvalidArgumentError that is also a TypeError) unless ``tensor`` has dtype ``tf_type``.

    >>> import tapeflow as tf
    >>> tf.debugging.assert_type(tf.constant([1.0]), tf.float32)
    """
    op = "AssertType"
    want = _dt.as_dtype(tf_type)
    got = to_tensor(tensor, op)._dtype if not isinstance(tensor, Tensor) else tensor._dtype
    if got is not want:
        raise AssertTypeError(f"{_prefix(message)}tensor has dtype {got.name}; allowed: {want.name}", op)


def _spec_dims(spec, i, op):
    if isinstance(spec, str):
        spec = tuple(spec) if spec not in ("", "...", "*") else ((spec,) if spec else ())
    try:
        dims = list(spec)
    except TypeError:
        raise InvalidArgumentError(f"shape spec #{i} is {spec!r}; allowed: a list of ints, symbols (str), None, "
                                   "with an optional leading '...' or '*'", op) from None
    lead = bool(dims) and dims[0] in ("...", "*")
    if lead:
        dims = dims[1:]
    for d in dims:
        if not (d is None or d == "." or isinstance(d, str) or (isinstance(d, numbers.Integral) and
                                                                 not isinstance(d, bool))):
            raise InvalidArgumentError(f"shape spec #{i} has the entry {d!r}; allowed: ints, symbols (str), "
                                       "None or '.'", op)
    return lead, dims


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Raise InvalidArgumentError unless each tensor matches its shape spec, symbols agreeing across tensors.

    ``shapes`` is a list of ``(tensor, spec)`` pairs; a spec lists dimensions as ints (exact sizes),
    strings (symbols: equal wherever they appear), ``None`` or ``'.'`` (any size), with an optional
    leading ``'...'`` or ``'*'`` for any number of leading axes.

    >>> import tapeflow as tf
    >>> x, y = tf.zeros([4, 3]), tf.zeros([4])
    >>> tf.debugging.assert_shapes([(x, ("N", 3)), (y, ("N",))])
    """
    op = "AssertShapes"
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    seen = {}
    for i, item in enumerate(items):
        if isinstance(item, Tensor) or not isinstance(item, (tuple, list)) or len(item) != 2:
            what = f"a tensor of shape {tuple(item._shape)}" if isinstance(item, Tensor) else repr(item)
            raise InvalidArgumentError(f"shapes entry #{i} is {what}; allowed: (tensor, shape spec) pairs", op)
        t, spec = item
        shape = tuple(t._shape) if isinstance(t, Tensor) else tuple(to_tensor(t, op)._shape)
        lead, dims = _spec_dims(spec, i, op)
        if (len(shape) < len(dims)) if lead else (len(shape) != len(dims)):
            raise InvalidArgumentError(
                f"{_prefix(message)}tensor #{i} has shape {shape}, which does not match the spec "
                f"{tuple(spec) if not isinstance(spec, str) else spec}: rank {len(shape)}, allowed rank "
                f"{'>= ' if lead else ''}{len(dims)}", op)
        offset = len(shape) - len(dims)
        for j, d in enumerate(dims):
            axis, size = offset + j, shape[offset + j]
            if d is None or d == ".":
                continue
            if isinstance(d, str):
                if d in seen:
                    want, where = seen[d]
                    if size != want:
                        raise InvalidArgumentError(
                            f"{_prefix(message)}tensor #{i} dimension {axis} (symbol {d!r}) must have size {want}, "
                            f"as set by {where}; received size {size}, shape {shape}", op)
                else:
                    seen[d] = (size, f"tensor #{i} dimension {axis}")
            elif size != int(d):
                raise InvalidArgumentError(f"{_prefix(message)}tensor #{i} dimension {axis} must have size {int(d)}; "
                                           f"received size {size}, shape {shape}", op)


def _check_finite(x: Tensor, message: str, op: str):
    ops = _ops()
    if _holds(ops.is_finite(x)):
        return
    nan, inf = bool(ops.reduce_any(ops.is_nan(x))), bool(ops.reduce_any(ops.is_inf(x)))
    what = "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")
    raise InvalidArgumentError(f"{message} : Tensor had {what} values", op)


@register("check_numerics", "CheckNumerics")
def check_numerics(tensor, message, name=None):
    """``tensor`` itself, after raising InvalidArgumentError if it holds NaN or Inf (floats).

    Its gradient is the incoming gradient, checked the same way.

    >>> import tapeflow as tf
    >>> tf.debugging.check_numerics(tf.constant([1.0]), "logits").numpy().tolist()
    [1.0]
    >>> try:
    ...     tf.debugging.check_numerics(tf.constant([0.0]) / 0.0, "ratio")
    ... except tf.errors.InvalidArgumentError as e:
    ...     print(e)
    ratio : Tensor had NaN values [Op:CheckNumerics]
    """
    x = tensor if type(tensor) is Tensor else to_tensor(tensor, "CheckNumerics")
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"tensor has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.FLOATS)}", "CheckNumerics")
    return run(_CHECK_NUMERICS, (x,), {"message": message})


@primitive("check_numerics", "CheckNumerics", infer=lambda x, *, message: (x._shape, x._dtype), dtypes=_dt.FLOATS)
def _CHECK_NUMERICS(dev, x, *, message):
    if hooks.recorder is None:
        _check_finite(x, message, "CheckNumerics")
    else:
        with hooks.paused():  # the check's own ops are part of this primitive (a replay of it runs them again)
            _check_finite(x, message, "CheckNumerics")
    return make(x._h, x._arr, x._shape, x._dtype, x._dev, x._size)


def assert_all_finite(t, message, name=None, x=None):
    """``t`` itself, after raising InvalidArgumentError if it holds NaN or Inf (same as check_numerics).

    >>> import tapeflow as tf
    >>> tf.debugging.assert_all_finite(tf.constant([1.0, 2.0]), "weights").numpy().tolist()
    [1.0, 2.0]
    """
    return check_numerics(t if x is None else x, message)
