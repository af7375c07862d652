"""Linear algebra beyond matmul: diagonals, trace, norms, tensordot, einsum.

``diag_part`` and ``diag`` are primitives (one strided copy each, adjoint to one
another); the rest are composites of them, reductions, transposes, reshapes and
matmul, so that tapes record the primitives and every gradient comes for free.
"""
from __future__ import annotations

import math as _math
import numbers

import numpy as np

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    int_arg,
    normalize_axes,
    normalize_axis,
    register,
    static_value,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from . import _ew
from .array_ops import (
    broadcast_to,
    expand_dims,
    eye,
    fill,
    ones_like,
    reshape,
    squeeze,
    stack,
    strided_copy,
    transpose,
    unstack,
)
from .reduce_ops import _safe_sqrt, reduce_max, reduce_sum
from .sort_ops import cumsum
from .math_ops import (
    _cast_raw,
    _strided,
    abs,
    add,
    cast,
    matmul,
    multiply,
    pow,
    square,
    subtract,
)


def _prod(xs):
    p = 1
    for v in xs:
        if v is None:  # traced, a dimension unknown
            return None
        p *= v
    return p


def _shape_eq(sa, sb):
    return len(sa) == len(sb) and all(a is None or b is None or a == b for a, b in zip(sa, sb))


def _matrix(x, op, what="input"):
    x = x if type(x) is Tensor else to_tensor(x, op)
    if len(x._shape) < 2:
        raise InvalidArgumentError(f"{what} has shape {tuple(x._shape)}; allowed: rank >= 2 (a matrix or a batch "
                                   "of matrices)", op)
    return x


def _diag_len(m, n, k):
    if m is None or n is None:  # traced, a side unknown
        return None
    return max(0, min(m, n - k) if k >= 0 else min(m + k, n))


def _check_k(k, m, n, op):
    k = int_arg(k, op, "k")
    if k != 0 and ((m is not None and k <= -m) or (n is not None and k >= n)):
        raise InvalidArgumentError(f"diagonal offset k = {k} is out of range for {m}x{n} matrices; allowed: "
                                   f"[{min(-m + 1, 0)}, {max(n - 1, 0)}]", op)
    return k


@register("diag_part", "MatrixDiagPartV3")
def diag_part(input, k=0, name=None):
    """The k-th diagonal x[..., i, i + k] of each matrix in the last two axes.

    >>> import tapeflow as tf
    >>> tf.linalg.diag_part(tf.constant([[1, 2], [3, 4]])).numpy().tolist()
    [1, 4]
    """
    x = _matrix(input, "MatrixDiagPartV3")
    return run(_DIAG_PART, (x,), {"k": _check_k(k, x._shape[-2], x._shape[-1], "MatrixDiagPartV3")})


def _diag_part_infer(x, *, k):
    *batch, m, n = x._shape
    return tuple(batch) + (_diag_len(m, n, k),), x._dtype


@primitive("diag_part", "MatrixDiagPartV3", infer=_diag_part_infer)
def _DIAG_PART(dev, x, *, k):
    *batch, m, n = x._shape
    L = _diag_len(m, n, k)
    nb = _prod(batch)
    out_shape = tuple(batch) + (L,)
    if nb * L:
        return _view(strided_copy(x, (nb, L), k if k >= 0 else -k * n, (m * n, n + 1), op="MatrixDiagPartV3"),
                     out_shape)
    return alloc(out_shape, x._dtype, dev)


def _view(t, shape):
    """``t`` seen with another shape (no copy, not recorded: for freshly made outputs)."""
    from ..tensor import make

    host = t._arr.reshape(shape) if t._arr is not None else None
    return make(t._h, host, tuple(shape), t._dtype, t._dev, t._size)


@register("diag", "MatrixDiagV3")
def diag(diagonal, k=0, num_rows=-1, num_cols=-1, padding_value=0, name=None):
    """Matrices with ``diagonal`` on their k-th diagonal and ``padding_value`` elsewhere (batched).

    By default the matrices are square, of side len(diagonal) + |k|; with only one of
    ``num_rows``/``num_cols`` given, the other is the smallest that fits.

    >>> import tapeflow as tf
    >>> tf.linalg.diag(tf.constant([1, 2])).numpy().tolist()
    [[1, 0], [0, 2]]
    """
    d = diagonal if type(diagonal) is Tensor else to_tensor(diagonal, "MatrixDiagV3")
    if not d._shape:
        raise InvalidArgumentError("diagonal has shape (); allowed: rank >= 1", "MatrixDiagV3")
    k = int_arg(k, "MatrixDiagV3", "k")
    num_rows = int_arg(num_rows, "MatrixDiagV3", "num_rows")
    num_cols = int_arg(num_cols, "MatrixDiagV3", "num_cols")
    L = d._shape[-1]
    if L is None:  # traced, the diagonal's length unknown: the sides are worked out when the graph runs
        if num_rows < -1 or num_cols < -1:
            raise InvalidArgumentError(f"num_rows = {num_rows}, num_cols = {num_cols}; allowed: -1 or sizes >= 0",
                                       "MatrixDiagV3")
        rows, cols = num_rows, num_cols
    else:
        rows, cols = _diag_sides(L, k, num_rows, num_cols)
    if L is not None and (rows < 0 or cols < 0 or _diag_len(rows, cols, k) != L or (L and not -rows < k < cols)):
        raise InvalidArgumentError(
            f"a diagonal of length {L} at offset k = {k} does not fit {rows}x{cols} matrices; allowed: "
            f"num_rows/num_cols whose k-th diagonal has length {L}", "MatrixDiagV3")
    if not _ew._is_py_scalar(padding_value):
        pv = to_tensor(padding_value, "MatrixDiagV3")
        if pv._size != 1:
            raise InvalidArgumentError(f"padding_value has shape {tuple(pv._shape)}; allowed: a scalar",
                                       "MatrixDiagV3")
        padding_value = static_value(pv, "MatrixDiagV3", "padding_value").reshape(()).item()
    return run(_DIAG, (d,), {"k": k, "num_rows": rows, "num_cols": cols, "padding_value": padding_value})


def _diag_sides(L, k, num_rows, num_cols):
    """The matrices' sides for a diagonal of length ``L`` at offset ``k`` (-1: the smallest that fits)."""
    if num_rows == -1 and num_cols == -1:
        return L + (k if k >= 0 else -k), L + (k if k >= 0 else -k)
    return (L + max(-k, 0) if num_rows == -1 else num_rows), (L + max(k, 0) if num_cols == -1 else num_cols)


def _diag_infer(d, *, k, num_rows, num_cols, padding_value):
    L = d._shape[-1]
    if L is None:
        num_rows, num_cols = (None if v == -1 else v for v in (num_rows, num_cols))
    elif num_rows == -1 or num_cols == -1:
        num_rows, num_cols = _diag_sides(L, k, num_rows, num_cols)
    return tuple(d._shape[:-1]) + (num_rows, num_cols), d._dtype


@primitive("diag", "MatrixDiagV3", infer=_diag_infer)
def _DIAG(dev, d, *, k, num_rows, num_cols, padding_value):
    *batch, L = d._shape
    rows, cols = num_rows, num_cols
    if rows == -1 or cols == -1:  # traced with an unknown length: the sides (and their check) are known now
        rows, cols = _diag_sides(L, k, rows, cols)
        if rows < 0 or cols < 0 or _diag_len(rows, cols, k) != L or (L and not -rows < k < cols):
            raise InvalidArgumentError(f"a diagonal of length {L} at offset k = {k} does not fit {rows}x{cols} "
                                       "matrices", "MatrixDiagV3")
    out = alloc(tuple(batch) + (rows, cols), d._dtype, dev)
    if out._size:
        be = dev.backend
        raw = np.asarray(padding_value).astype(d._dtype.np).tobytes()
        check(be.fill(d._dtype.size, be.host_ptr(raw), out._h, out._size), "fill")
    nb = _prod(batch)
    if nb * L:
        strided_copy(d, (nb, L), 0, (L, 1), out=out, dst_off=k if k >= 0 else -k * cols,
                     dst_strides=(rows * cols, cols + 1), op="MatrixDiagV3")
    return out


@register("trace", "Trace", kind="composite")
def trace(x, name=None):
    """The sum of the main diagonal of each matrix in the last two axes.

    >>> import tapeflow as tf
    >>> tf.linalg.trace(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    np.float32(5.0)
    """
    return reduce_sum(diag_part(_matrix(x, "Trace")), axis=-1)


@register("matrix_transpose", "MatrixTranspose", kind="composite")
def matrix_transpose(a, conjugate=False, name=None):
    """Swap the last two axes (tensors are real, so ``conjugate`` changes nothing).

    >>> import tapeflow as tf
    >>> tf.linalg.matrix_transpose(tf.constant([[1, 2, 3]])).numpy().tolist()
    [[1], [2], [3]]
    """
    x = _matrix(a, "MatrixTranspose", "a")
    nd = len(x._shape)
    return transpose(x, list(range(nd - 2)) + [nd - 1, nd - 2])


adjoint = matrix_transpose


@register("matvec", "MatVec", kind="composite")
def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """Matrix-vector product a @ b over the last axes (batched; b's leading axes broadcast).

    >>> import tapeflow as tf
    >>> tf.linalg.matvec(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    a = _matrix(a, "MatVec", "a")
    b = b if type(b) is Tensor else to_tensor(b, "MatVec", a._dtype if _ew._is_py_scalar(b) else None)
    if not b._shape:
        raise InvalidArgumentError("b has shape (); allowed: rank >= 1 (a vector or a batch of vectors)", "MatVec")
    return squeeze(matmul(a, expand_dims(b, -1), transpose_a=transpose_a or adjoint_a), -1)


@register("cross", "Cross", kind="composite")
def cross(a, b, name=None):
    """The cross product of 3-vectors along the last axis (batched).

    >>> import tapeflow as tf
    >>> tf.linalg.cross(tf.constant([1.0, 0.0, 0.0]), tf.constant([0.0, 1.0, 0.0])).numpy().tolist()
    [0.0, 0.0, 1.0]
    """
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _ew.coerce_pair(a, b, "Cross")
    for what, t in (("a", a), ("b", b)):
        if not t._shape or t._shape[-1] not in (3, None):
            raise InvalidArgumentError(f"{what} has shape {tuple(t._shape)}; allowed: a last axis of size 3",
                                       "Cross")
    if a._shape != b._shape and not _shape_eq(a._shape, b._shape):
        raise InvalidArgumentError(f"a and b have shapes {tuple(a._shape)} and {tuple(b._shape)}; allowed: equal "
                                   "shapes", "Cross")
    a0, a1, a2 = unstack(a, num=3, axis=-1)
    b0, b1, b2 = unstack(b, num=3, axis=-1)
    return stack([subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
                  subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)


# ---- factorisations and solves (LAPACK) ---------------------------------------------

def _square(x, op, what="input"):
    x = _matrix(x, op, what)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"{what} has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.FLOATS)}", op)
    if x._shape[-1] != x._shape[-2] and None not in x._shape[-2:]:
        raise InvalidArgumentError(f"{what} has shape {tuple(x._shape)}; allowed: square matrices [..., M, M]", op)
    return x


def _work_copy(x):
    """A dense float32/float64 copy of ``x`` for a kernel to overwrite (not recorded)."""
    return _cast_raw(x, _dt.float32 if x._dtype in _ew._HALF else x._dtype)


def _lu(x):
    """LU factors (a new tensor), int32 pivots and the int32 per-matrix LAPACK info."""
    *batch, n, _ = x._shape
    nb = _prod(batch)
    lu = _work_copy(x)
    piv = alloc(tuple(batch) + (n,), _dt.int32, x._dev)
    info = alloc(tuple(batch), _dt.int32, x._dev)
    check(x._dev.backend.lu(lu._dtype.code, nb, n, lu._h, piv._h, info._h), "lu")
    return lu, piv, info


def _singular(info, op, what):
    bad = info.numpy().reshape(-1) if info._size else ()
    for i, v in enumerate(bad):
        if v > 0:
            where = f" (matrix #{i} of the batch)" if info._shape else ""
            raise InvalidArgumentError(f"{what}{where} is singular: U[{v - 1}, {v - 1}] of its LU factorisation is "
                                       "0; allowed: invertible matrices", op)


def _back(out, dtype):
    return out if out._dtype is dtype else _cast_raw(out, dtype)


@register("inv", "MatrixInverse")
def inv(input, adjoint=False, name=None):
    """The inverse of each square matrix in the last two axes (LU with partial pivoting).

    >>> import tapeflow as tf
    >>> tf.linalg.inv(tf.constant([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist() == [[0.5, 0.0], [0.0, 0.25]]
    True
    """
    op = "MatrixInverse"
    x = _square(input, op)
    if adjoint:
        return inv(matrix_transpose(x))
    return run(_INV, (x,))


def _same_infer(x, **_):
    return x._shape, x._dtype


def _batch_infer(x):
    return tuple(x._shape[:-2]), x._dtype


@primitive("inv", "MatrixInverse", infer=_same_infer, dtypes=_dt.FLOATS)
def _INV(dev, x):
    lu, piv, info = _lu(x)
    _singular(info, "MatrixInverse", "input")
    check(dev.backend.lu_inverse(lu._dtype.code, _prod(x._shape[:-2]), x._shape[-1], lu._h, piv._h), "lu_inverse")
    return _back(lu, x._dtype)


def _det_parts(x):
    lu, piv, _ = _lu(x)
    batch = tuple(x._shape[:-2])
    det, sign, logabs = (alloc(batch, lu._dtype, x._dev) for _ in range(3))
    check(x._dev.backend.lu_det(lu._dtype.code, _prod(batch), x._shape[-1], lu._h, piv._h, det._h, sign._h,
                                logabs._h), "lu_det")
    return det, sign, logabs


@primitive("det", "MatrixDeterminant", infer=_batch_infer, dtypes=_dt.FLOATS)
def _DET(dev, x):
    return _back(_det_parts(x)[0], x._dtype)


@primitive("slogdet", "LogMatrixDeterminant", infer=lambda x: [_batch_infer(x)] * 2, dtypes=_dt.FLOATS)
def _SLOGDET(dev, x):
    _, sign, logabs = _det_parts(x)
    return _back(sign, x._dtype), _back(logabs, x._dtype)


@register("det", "MatrixDeterminant")
def det(input, name=None):
    """The determinant of each square matrix in the last two axes (0 for a singular one).

    >>> import tapeflow as tf
    >>> tf.linalg.det(tf.constant([[2.0, 1.0], [1.0, 3.0]])).numpy()
    np.float32(5.0)
    """
    return run(_DET, (_square(input, "MatrixDeterminant"),))


@register("slogdet", "LogMatrixDeterminant")
def slogdet(input, name=None):
    """(sign, log|det|) of each square matrix: the determinant without overflow (sign 0 when singular).

    >>> import tapeflow as tf
    >>> sign, logabs = tf.linalg.slogdet(tf.constant([[-1e30, 0.0], [0.0, 1e30]], tf.float64))
    >>> float(sign), round(float(logabs), 4)
    (-1.0, 138.1551)
    """
    return run(_SLOGDET, (_square(input, "LogMatrixDeterminant"),))


@register("solve", "MatrixSolve")
def solve(matrix, rhs, adjoint=False, name=None):
    """X with matrix @ X = rhs (or matrix^T @ X = rhs when ``adjoint``), batched over leading axes.

    >>> import tapeflow as tf
    >>> tf.linalg.solve(tf.constant([[2.0, 0.0], [0.0, 4.0]]), tf.constant([[1.0], [2.0]])).numpy().tolist()
    [[0.5], [0.5]]
    """
    op = "MatrixSolve"
    a = _square(matrix, op, "matrix")
    b = _matrix(rhs, op, "rhs")
    if b._dtype is not a._dtype:
        _ew.dtype_mismatch(a, b, op)
    if b._shape[-2] != a._shape[-1] and None not in (b._shape[-2], a._shape[-1]):
        raise InvalidArgumentError(f"matrix has shape {tuple(a._shape)} and rhs {tuple(b._shape)}: rhs needs "
                                   f"{a._shape[-1]} rows; allowed: rhs of shape [..., {a._shape[-1]}, K]", op)
    _ew.broadcast_shape(tuple(a._shape[:-2]), tuple(b._shape[:-2]), op)
    return run(_SOLVE, (a, b), {"adjoint": bool(adjoint)})


def _solve_infer(a, b, **_):
    return _ew.broadcast_shape(tuple(a._shape[:-2]), tuple(b._shape[:-2])) + tuple(b._shape[-2:]), a._dtype


@primitive("solve", "MatrixSolve", infer=_solve_infer, dtypes=_dt.FLOATS, same_dtype=True)
def _SOLVE(dev, a, b, *, adjoint):
    op = "MatrixSolve"
    a2, b2, batch = _batch_pair(a, b, op)
    lu, piv, info = _lu(a2)
    _singular(info, op, "matrix")
    x = _work_copy(b2)
    check(dev.backend.lu_solve(lu._dtype.code, 1 if adjoint else 0, _prod(batch), a._shape[-1], b._shape[-1],
                               lu._h, piv._h, x._h), "lu_solve")
    return _back(x, a._dtype)


def _batch_pair(a, b, op):
    """Both operands with one (broadcast) batch shape, as dense copies only where needed."""
    ba, bb = tuple(a._shape[:-2]), tuple(b._shape[:-2])
    if ba == bb:
        return a, b, ba
    batch = _ew.broadcast_shape(ba, bb, op)
    out = []
    for t, bt in ((a, ba), (b, bb)):
        if bt != batch:
            full = batch + tuple(t._shape[-2:])
            t = _strided(t, full, _ew._strides_for(t._shape, full), op) if _prod(full) else alloc(full, t._dtype,
                                                                                                  t._dev)
        out.append(t)
    return out[0], out[1], batch


@register("cholesky", "Cholesky")
def cholesky(input, name=None):
    """The lower-triangular L with L @ L^T = input, for symmetric positive-definite matrices (only the lower
    triangle of the input is read).

    >>> import tapeflow as tf
    >>> tf.linalg.cholesky(tf.constant([[4.0, 2.0], [2.0, 5.0]])).numpy().tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return run(_CHOLESKY, (_square(input, "Cholesky"),))


@primitive("cholesky", "Cholesky", infer=_same_infer, dtypes=_dt.FLOATS)
def _CHOLESKY(dev, x):
    op = "Cholesky"
    *batch, n, _ = x._shape
    out = _work_copy(x)
    info = alloc(tuple(batch), _dt.int32, dev)
    check(dev.backend.cholesky(out._dtype.code, _prod(batch), n, out._h, info._h), "cholesky")
    bad = info.numpy().reshape(-1) if info._size else ()
    for i, v in enumerate(bad):
        if v > 0:
            where = f" (matrix #{i} of the batch)" if batch else ""
            raise InvalidArgumentError(f"the Cholesky decomposition failed: the input{where} is not positive "
                                       f"definite (leading minor {v} is not positive); allowed: symmetric "
                                       "positive-definite matrices", op)
    return _back(out, x._dtype)


@register("triangular_solve", "MatrixTriangularSolve")
def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with matrix @ X = rhs for a triangular matrix (only its lower or upper triangle is read).

    >>> import tapeflow as tf
    >>> tf.linalg.triangular_solve(tf.constant([[2.0, 0.0], [1.0, 1.0]]), tf.constant([[2.0], [3.0]])).numpy().tolist()
    [[1.0], [2.0]]
    """
    op = "MatrixTriangularSolve"
    a = _square(matrix, op, "matrix")
    b = _matrix(rhs, op, "rhs")
    if b._dtype is not a._dtype:
        _ew.dtype_mismatch(a, b, op)
    if b._shape[-2] != a._shape[-1] and None not in (b._shape[-2], a._shape[-1]):
        raise InvalidArgumentError(f"matrix has shape {tuple(a._shape)} and rhs {tuple(b._shape)}: rhs needs "
                                   f"{a._shape[-1]} rows; allowed: rhs of shape [..., {a._shape[-1]}, K]", op)
    _ew.broadcast_shape(tuple(a._shape[:-2]), tuple(b._shape[:-2]), op)
    return run(_TRIANGULAR_SOLVE, (a, b), {"lower": bool(lower), "adjoint": bool(adjoint)})


@primitive("triangular_solve", "MatrixTriangularSolve", infer=_solve_infer, dtypes=_dt.FLOATS, same_dtype=True)
def _TRIANGULAR_SOLVE(dev, a, b, *, lower, adjoint):
    a2, b2, batch = _batch_pair(a, b, "MatrixTriangularSolve")
    src = _cast_raw(a2, _dt.float32) if a2._dtype in _ew._HALF else a2
    x = _work_copy(b2)
    n = a._shape[-1]
    check(dev.backend.triangular_solve(src._dtype.code, 1 if lower else 0, 1 if adjoint else 0, _prod(batch), n,
                                       b._shape[-1], src._h, n * n, x._h), "triangular_solve")
    return _back(x, a._dtype)


@register("band_part", "MatrixBandPart", kind="composite")
def band_part(input, num_lower, num_upper, name=None):
    """Keep the band of each matrix with ``num_lower`` sub- and ``num_upper`` super-diagonals (-1: all); zero
    the rest.

    >>> import tapeflow as tf
    >>> tf.linalg.band_part(tf.ones([3, 3]), 0, -1).numpy().tolist()  # the upper triangle
    [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    from .array_ops import range_, where
    from .math_ops import greater_equal, less_equal, logical_and

    op = "MatrixBandPart"
    x = _matrix(input, op)
    num_lower, num_upper = int_arg(num_lower, op, "num_lower"), int_arg(num_upper, op, "num_upper")
    for what, v in (("num_lower", num_lower), ("num_upper", num_upper)):
        if v < -1:
            raise InvalidArgumentError(f"{what} = {v!r}; allowed: an integer >= -1 (-1 keeps everything)", op)
    m, n = x._shape[-2:]
    with _device.device(x._dev):
        if m is None or n is None:  # traced, a side unknown: column and row numbers from running counts
            one = ones_like(x, _dt.int32)
            d = subtract(cumsum(one, axis=-1), cumsum(one, axis=-2))   # column - row
            keep = ones_like(x, _dt.bool_)
        else:
            d = subtract(reshape(range_(n), (1, n)), reshape(range_(m), (m, 1)))   # column - row
            keep = fill((m, n), True, _dt.bool_)
        if num_lower >= 0:
            keep = logical_and(keep, greater_equal(d, -int(num_lower)))
        if num_upper >= 0:
            keep = logical_and(keep, less_equal(d, int(num_upper)))
    return where(keep, x, _ew.scalar_like(0, x, op) if x._dtype is not _dt.bool_ else False)


@register("logdet", "LogDet", kind="composite")
def logdet(matrix, name=None):
    """log(det(matrix)) of symmetric positive-definite matrices, as 2 * sum(log(diag(cholesky(matrix)))).

    >>> import tapeflow as tf
    >>> round(float(tf.linalg.logdet(tf.constant([[4.0, 2.0], [2.0, 5.0]]))), 5)
    2.77259
    """
    from .math_ops import log

    return multiply(reduce_sum(log(diag_part(cholesky(matrix))), axis=-1), 2.0)


# ---- norms --------------------------------------------------------------------

def _is_inf_ord(o):
    return isinstance(o, numbers.Real) and not isinstance(o, bool) and o == _math.inf


def _vector_norm(x, ord, axes, keepdims):
    if ord in ("euclidean", "fro", 2, 2.0):
        return _safe_sqrt(reduce_sum(square(x), axes, keepdims))
    if _is_inf_ord(ord):
        return reduce_max(abs(x), axes, keepdims)
    if ord in (1, 1.0):
        return reduce_sum(abs(x), axes, keepdims)
    return pow(reduce_sum(pow(abs(x), float(ord)), axes, keepdims), 1.0 / float(ord))


@register("norm", "Norm", kind="composite")
def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector or matrix norm.

    ``axis=None`` or an int: the vector p-norm (sum |x|**p)**(1/p) for ``ord`` 'euclidean' (2), 1,
    np.inf or any p > 0 (``axis=None`` flattens).  A pair of axes: the matrix norm 'fro'/'euclidean'
    (Frobenius), 1 (largest column sum of |x|), np.inf (largest row sum), 2 (the largest singular value)
    or 'nuc' (NumPy's nuclear norm, the sum of the singular values; TensorFlow has no 'nuc').  The gradient of a
    Euclidean norm at 0 is 0.

    >>> import tapeflow as tf
    >>> tf.norm(tf.constant([3.0, 4.0])).numpy(), tf.norm(tf.constant([[1.0, -2.0], [3.0, 4.0]]), ord=1, axis=[0, 1]).numpy()
    (np.float32(5.0), np.float32(6.0))
    """
    op = "Norm"
    x = tensor if type(tensor) is Tensor else to_tensor(tensor, op)
    if not x._dtype.is_floating:
        raise InvalidArgumentError(f"tensor has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _dt.FLOATS)}", op)
    keepdims = bool(keepdims)
    nd = len(x._shape)
    matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and len(axis) not in (1, 2):
        raise InvalidArgumentError(f"axis = {list(axis)}; allowed: None, an int, or a pair of ints", op)
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if matrix:
        a0, a1 = normalize_axis(axis[0], nd, op), normalize_axis(axis[1], nd, op)
        if a0 == a1:
            raise InvalidArgumentError(f"axis = {list(axis)} names one axis twice; allowed: two distinct axes", op)
        if ord in ("fro", "euclidean"):
            return _safe_sqrt(reduce_sum(square(x), [a0, a1], keepdims))
        if ord in (1, 1.0) or _is_inf_ord(ord):
            # 1: sum over rows (axis a0) then the largest column; inf: sum over columns, largest row
            inner, outer = (a0, a1) if ord in (1, 1.0) else (a1, a0)
            s = reduce_sum(abs(x), inner, keepdims=True)
            out = reduce_max(s, outer, keepdims=True)
            return out if keepdims else squeeze(out, [a0, a1])
        if ord in (2, 2.0, "nuc"):
            return _spectral_norm(x, ord, a0, a1, keepdims)
        raise InvalidArgumentError(f"ord = {ord!r} for a matrix norm; allowed: 'fro', 'euclidean', 1, 2, np.inf, "
                                   "'nuc'", op)
    valid = ord in ("euclidean", "fro") or (isinstance(ord, numbers.Real) and not isinstance(ord, bool) and ord > 0)
    if not valid:
        raise InvalidArgumentError(f"ord = {ord!r} for a vector norm; allowed: 'euclidean', 1, 2, np.inf or any "
                                   "real p > 0", op)
    if ord == "fro" and axis is not None:
        raise InvalidArgumentError("ord = 'fro' is a matrix norm; allowed with axis=None or a pair of axes", op)
    axes = normalize_axes(axis, nd, op)
    return _vector_norm(x, ord, axes, keepdims)


def _spectral_norm(x, ord, a0, a1, keepdims):
    """ord 2: the largest singular value over axes (a0, a1), as TensorFlow; 'nuc' (NumPy's): their sum."""
    nd = len(x._shape)
    rest = [i for i in range(nd) if i not in (a0, a1)]
    s = linalg_lapack_ops.svd(transpose(x, rest + [a0, a1]), compute_uv=False)
    out = reduce_max(s, -1) if ord != "nuc" else reduce_sum(s, -1)
    if keepdims:
        for a in sorted((a0, a1)):
            out = expand_dims(out, a)
    return out


@register("global_norm", "GlobalNorm", kind="composite")
def global_norm(t_list, name=None):
    """sqrt(sum of squares of every entry of every tensor in ``t_list``); ``None`` entries are skipped.

    >>> import tapeflow as tf
    >>> tf.linalg.global_norm([tf.constant([3.0]), None, tf.constant([[4.0]])]).numpy()
    np.float32(5.0)
    """
    op = "GlobalNorm"
    if isinstance(t_list, Tensor) or not hasattr(t_list, "__iter__"):
        raise InvalidArgumentError(f"t_list is a {type(t_list).__name__}; allowed: a list or tuple of tensors", op)
    total, dtype = None, None
    for t in t_list:
        if t is None:
            continue
        t = t if type(t) is Tensor else to_tensor(t, op)
        if not t._dtype.is_floating:
            raise InvalidArgumentError(f"t_list holds a {t._dtype.name} tensor; allowed: float tensors", op)
        if dtype is None:
            dtype = t._dtype
        s = reduce_sum(square(t))
        s = s if s._dtype is dtype else cast(s, dtype)
        total = s if total is None else add(total, s)
    if total is None:
        return fill((), 0.0, _dt.float32)
    return _safe_sqrt(total)


# ---- tensordot and einsum ---------------------------------------------------------

def _axes_list(v, rank, op, what):
    v = v.numpy().tolist() if isinstance(v, Tensor) else v
    v = [v] if isinstance(v, numbers.Integral) else list(v)
    return [normalize_axis(a, rank, op) if rank else _bad_axis(a, what, op) for a in v]


def _bad_axis(a, what, op):
    raise InvalidArgumentError(f"{what} axis {a} for a scalar; allowed: none", op)


@register("tensordot", "Tensordot", kind="composite")
def tensordot(a, b, axes, name=None):
    """Sum of a * b over pairs of axes: ``axes`` is N (a's last N with b's first N) or [a_axes, b_axes].

    >>> import tapeflow as tf
    >>> a, b = tf.ones([2, 3, 4]), tf.ones([4, 3, 5])
    >>> tf.tensordot(a, b, axes=[[1, 2], [1, 0]]).shape
    TensorShape([2, 5])
    """
    op = "Tensordot"
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _ew.coerce_pair(a, b, op)
    if a._dtype is not b._dtype:
        _ew.dtype_mismatch(a, b, op)
    ra, rb = len(a._shape), len(b._shape)
    if isinstance(axes, Tensor):
        axes = axes.numpy().tolist()
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        n = int(axes)
        if not 0 <= n <= min(ra, rb):
            raise InvalidArgumentError(f"axes = {n} with ranks {ra} and {rb}; allowed: 0 <= axes <= "
                                       f"{min(ra, rb)}", op)
        a_axes, b_axes = list(range(ra - n, ra)), list(range(n))
    else:
        try:
            first, second = axes
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"axes = {axes!r}; allowed: an int or a pair [a_axes, b_axes]", op) from None
        a_axes, b_axes = _axes_list(first, ra, op, "a"), _axes_list(second, rb, op, "b")
        if len(a_axes) != len(b_axes):
            raise InvalidArgumentError(f"axes pairs {len(a_axes)} axes of a with {len(b_axes)} of b; allowed: "
                                       "equal counts", op)
        if len(set(a_axes)) != len(a_axes) or len(set(b_axes)) != len(b_axes):
            raise InvalidArgumentError(f"axes = {axes!r} repeats an axis", op)
    for i, j in zip(a_axes, b_axes):
        if a._shape[i] != b._shape[j] and None not in (a._shape[i], b._shape[j]):
            raise InvalidArgumentError(f"dimension {i} of a (size {a._shape[i]}) and dimension {j} of b (size "
                                       f"{b._shape[j]}) are contracted but differ; shapes {tuple(a._shape)} and "
                                       f"{tuple(b._shape)}", op)
    free_a = [i for i in range(ra) if i not in a_axes]
    free_b = [j for j in range(rb) if j not in b_axes]
    k = _prod(a._shape[i] for i in a_axes)
    at = reshape(transpose(a, free_a + a_axes), (_prod(a._shape[i] for i in free_a), k))
    bt = reshape(transpose(b, b_axes + free_b), (k, _prod(b._shape[j] for j in free_b)))
    return reshape(matmul(at, bt), [a._shape[i] for i in free_a] + [b._shape[j] for j in free_b])


_ELL = "0123456789"   # stand-in labels for the axes under '...' (digits are not valid einsum labels)


def _einsum_parse(equation, ranks, op):
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise InvalidArgumentError(f"equation {equation!r} has more than one '->'", op)
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise InvalidArgumentError(f"equation {equation!r} names {len(terms)} operands but {len(ranks)} were "
                                   "given", op)
    n_ell = 0
    for t, r in zip(terms, ranks):
        body = t.replace("...", "")
        if t.count("...") > 1 or not all(c.isalpha() for c in body):
            raise InvalidArgumentError(f"subscripts {t!r} in {equation!r}; allowed: letters and at most one "
                                       "'...'", op)
        if "..." in t:
            if r < len(body):
                raise InvalidArgumentError(f"subscripts {t!r} need rank >= {len(body)}, got an operand of rank "
                                           f"{r}", op)
            n_ell = max(n_ell, r - len(body))
        elif len(t) != r:
            raise InvalidArgumentError(f"subscripts {t!r} name {len(t)} axes but the operand has rank {r}", op)
    if n_ell > len(_ELL):
        raise InvalidArgumentError(f"'...' covers {n_ell} axes; allowed: at most {len(_ELL)}", op)

    def expand(t, r):
        if "..." not in t:
            return t
        k = r - (len(t) - 3)
        return t.replace("...", _ELL[n_ell - k:n_ell])

    terms = [expand(t, r) for t, r in zip(terms, ranks)]
    if arrow:
        if out.count("...") > 1 or not all(c.isalpha() for c in out.replace("...", "")):
            raise InvalidArgumentError(f"output subscripts {out!r}; allowed: letters and at most one '...'", op)
        out = out.replace("...", _ELL[:n_ell])
        if len(set(out)) != len(out):
            raise InvalidArgumentError(f"output subscripts {out!r} repeat a label", op)
        missing = [c for c in out if not any(c in t for t in terms)]
        if missing:
            raise InvalidArgumentError(f"output label {missing[0]!r} appears in no input of {equation!r}", op)
    else:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = _ELL[:n_ell] + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in _ELL))
    return terms, out


def _einsum_diagonals(x, term):
    """Fold repeated labels of one operand onto their diagonal: 'ii' -> 'i'."""
    while len(set(term)) != len(term):
        c = next(ch for ch in term if term.count(ch) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        rest = [p for p in range(len(term)) if p not in (i, j)]
        x = diag_part(transpose(x, rest + [i, j]))
        term = "".join(term[p] for p in rest) + c
    return x, term


def _einsum_sum(x, term, keep):
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return reduce_sum(x, axes), "".join(c for c in term if c in keep)


def _einsum_pair(a, ta, b, tb, keep, op):
    batch = [c for c in ta if c in tb and c in keep]
    contract = [c for c in ta if c in tb and c not in keep]
    a_only = [c for c in ta if c not in tb]
    b_only = [c for c in tb if c not in ta]
    size = {}
    for t, x in ((ta, a), (tb, b)):
        for c, d in zip(t, x._shape):
            size.setdefault(c, []).append(d)
    for c in contract:
        if size[c][0] != size[c][1] and None not in size[c]:
            raise InvalidArgumentError(f"label {c!r} has size {size[c][0]} in one operand and {size[c][1]} in "
                                       "the other", op)
    bsizes = []
    for c in batch:
        s0, s1 = size[c]
        if s0 != s1 and 1 not in (s0, s1) and None not in (s0, s1):
            raise InvalidArgumentError(f"label {c!r} has sizes {s0} and {s1}, which do not broadcast", op)
        bsizes.append(_ew.broadcast_shape((s0,), (s1,), op)[0])
    at = transpose(a, [ta.index(c) for c in batch + a_only + contract])
    bt = transpose(b, [tb.index(c) for c in batch + contract + b_only])
    if None not in bsizes:  # (traced with an unknown batch size: the operands' batch axes must agree)
        if list(at._shape[:len(batch)]) != bsizes:
            at = broadcast_to(at, tuple(bsizes) + tuple(at._shape[len(batch):]))
        if list(bt._shape[:len(batch)]) != bsizes:
            bt = broadcast_to(bt, tuple(bsizes) + tuple(bt._shape[len(batch):]))
    asz = [size[c][0] for c in a_only]
    bsz = [size[c][-1] for c in b_only]
    k = _prod(size[c][0] for c in contract)
    nb = _prod(bsizes)
    out = matmul(reshape(at, (nb, _prod(asz), k)), reshape(bt, (nb, k, _prod(bsz))))
    return reshape(out, bsizes + asz + bsz), "".join(batch + a_only + b_only)


@register("einsum", "Einsum", kind="composite")
def einsum(equation, *inputs, **kwargs):
    """Einstein summation: products of the operands summed over the labels missing from the output.

    Letters label axes, '...' stands for broadcast leading axes, '->' names the output (by default the
    labels used once, sorted).  Repeated labels in one operand take its diagonal.  Computed pairwise,
    left to right, with transposes, reshapes and matmul.

    >>> import tapeflow as tf
    >>> a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.einsum("ij,jk->ik", a, a).numpy().tolist(), tf.einsum("ii", a).numpy()
    ([[7.0, 10.0], [15.0, 22.0]], np.float32(5.0))
    """
    op = "Einsum"
    unknown = set(kwargs) - {"name", "optimize"}
    if unknown:
        raise InvalidArgumentError(f"unexpected keyword arguments {sorted(unknown)}; allowed: name, optimize", op)
    if not isinstance(equation, str):
        raise InvalidArgumentError(f"equation is a {type(equation).__name__}; allowed: a string", op)
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    if not inputs:
        raise InvalidArgumentError("einsum needs at least one operand", op)
    xs = [x if type(x) is Tensor else to_tensor(x, op) for x in inputs]
    for i, x in enumerate(xs[1:], 1):
        if x._dtype is not xs[0]._dtype:
            raise InvalidArgumentError(f"operand #{i} has dtype {x._dtype.name} but operand #0 has "
                                       f"{xs[0]._dtype.name}; allowed: one dtype (use tf.cast)", op)
    terms, out = _einsum_parse(equation, [len(x._shape) for x in xs], op)
    sizes = {}
    for t, x in zip(terms, xs):
        for c, d in zip(t, x._shape):
            if c in sizes and sizes[c] != d and c not in _ELL and None not in (sizes[c], d):
                raise InvalidArgumentError(f"label {c!r} has size {sizes[c]} in one operand and {d} in another "
                                           f"(equation {equation!r})", op)
            if sizes.get(c) is None:
                sizes[c] = d
    ops = [_einsum_diagonals(x, t) for x, t in zip(xs, terms)]
    cur, tc = ops[0]
    for i in range(1, len(ops)):
        nxt, tn = ops[i]
        later = set(out).union(*[set(t) for _, t in ops[i + 1:]])
        cur, tc = _einsum_sum(cur, tc, later | set(tn))
        nxt, tn = _einsum_sum(nxt, tn, later | set(tc))
        cur, tc = _einsum_pair(cur, tc, nxt, tn, later, op)
    cur, tc = _einsum_sum(cur, tc, set(out))
    if tc != out:
        cur = transpose(cur, [tc.index(c) for c in out])
    return cur


__all__ = ["adjoint", "band_part", "cholesky", "cross", "det", "diag", "diag_part", "einsum", "eye", "global_norm",
           "inv", "logdet", "matrix_transpose", "matvec", "norm", "slogdet", "solve", "tensordot", "trace",
           "triangular_solve"]


# the LAPACK decompositions and their compositions (svd, eigh, qr, lu, expm, lstsq, pinv, ...)
from . import linalg_lapack_ops  # noqa: E402
from .linalg_lapack_ops import *  # noqa: E402,F401,F403

__all__ = sorted(__all__ + linalg_lapack_ops.__all__)
