"""Complex numbers: ``tf.complex``, ``tf.math.real``/``imag``/``conj``/``angle``, and the complex64/complex128
cases of add, subtract, multiply, divide, negative, exp, abs, reduce_sum and matmul (``csrc/complex.c``).

The element-wise, reduction and matmul primitives keep their names (a complex ``tf.multiply`` is the
``multiply`` primitive); their complex inputs run the kernels here (``_ew.extend_complex``).  ``tf.abs`` of a
complex tensor is its modulus, a real tensor (TensorFlow's ComplexAbs).
"""
from __future__ import annotations

import math as _math

from tapeflow import kernels  # noqa: F401  (the backend tables name these kernels)

from .. import dtypes as _dt
from ..dispatch import register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import PRIMITIVES, check, primitive, run
from ..tensor import Tensor, make
from . import _ew
from .math_ops import _strided

C = _dt.COMPLEX
_REAL_OF = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}
_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}

# kernel op codes of csrc/complex.c
_BIN = {"add": 0, "subtract": 1, "multiply": 2, "real_div": 3}
_UN = {"negative": 0, "conj": 1, "exp": 2}
_PART = {"real": 0, "imag": 1, "abs": 2, "angle": 3}


def _tensor(x, op):
    return x if type(x) is Tensor else to_tensor(x, op)


# ---- kernels (complex inputs, same device) --------------------------------------------

def _cbinary(op_code, dev, x, y, tf_name):
    be = dev.backend
    shape, size, nd, cshape, astr, bstr = _ew.broadcast_plan(x._shape, y._shape, be, tf_name)
    h, host = be.alloc(shape, x._dtype.np)
    if size:
        check(be.cbinary(op_code, x._dtype.code, nd, cshape, x._h, astr, y._h, bstr, h), "cbinary")
    return make(h, host, shape, x._dtype, dev, size)


def _cunary(op_code, dev, x):
    be = dev.backend
    h, host = be.alloc(x._shape, x._dtype.np)
    check(be.cunary(op_code, x._dtype.code, x._h, h, x._size), "cunary")
    return make(h, host, x._shape, x._dtype, dev, x._size)


def _cpart(op_code, dev, x):
    be = dev.backend
    rdt = _REAL_OF[x._dtype]
    h, host = be.alloc(x._shape, rdt.np)
    check(be.cpart(op_code, x._dtype.code, x._h, h, x._size), "cpart")
    return make(h, host, x._shape, rdt, dev, x._size)


for _name, _code in _BIN.items():
    _ew.extend_complex(PRIMITIVES[_name], (lambda c, tf_name: lambda dev, x, y: _cbinary(c, dev, x, y, tf_name))(
        _code, PRIMITIVES[_name].tf_name))
for _name in ("negative", "exp"):
    _ew.extend_complex(PRIMITIVES[_name], (lambda c: lambda dev, x: _cunary(c, dev, x))(_UN[_name]))
_ew.extend_complex(PRIMITIVES["abs"], lambda dev, x: _cpart(_PART["abs"], dev, x), out_dtype=lambda d: d.real_dtype)


def _creduce_sum(dev, x, *, axis, keepdims):
    from .reduce_ops import _red_plan

    _, out_shape, outer, r, inner, perm, pshape, pstrides, _ = _red_plan(x._shape, axis, keepdims, "Sum")
    src = _strided(x, pshape, pstrides, "Sum") if perm is not None and x._size else x
    be = dev.backend
    h, host = be.alloc(out_shape, x._dtype.np)
    check(be.creduce_sum(x._dtype.code, src._h, h, outer, r, inner), "creduce_sum")
    size = 1
    for d in out_shape:
        size *= d
    return make(h, host, out_shape, x._dtype, dev, size)


_ew.extend_complex(PRIMITIVES["reduce_sum"], _creduce_sum)


def _cmatmul(dev, a, b, *, transpose_a, transpose_b):
    from .math_ops import _mm_plan, _mm_plans

    plan = _mm_plans.get((a._shape, b._shape, transpose_a, transpose_b))
    if plan is None:
        plan = _mm_plan(a._shape, b._shape, transpose_a, transpose_b)
    m, n, k, batch, bstr_a, bstr_b, out_shape, bcast, size, _ = plan
    if bcast is not None and size:
        a = _strided(a, bcast[0], bcast[1], "MatMul")
        b = _strided(b, bcast[2], bcast[3], "MatMul")
    be = dev.backend
    h, host = be.alloc(out_shape, a._dtype.np)
    check(be.cmatmul(a._dtype.code, int(transpose_a), int(transpose_b), batch, m, n, k, a._h, bstr_a, b._h, bstr_b,
                     h), "cmatmul")
    return make(h, host, out_shape, a._dtype, dev, size)


_ew.extend_complex(PRIMITIVES["matmul"], _cmatmul)


def complex_matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b):
    """tf.matmul of complex tensors (matmul sends them here): an adjoint is the conjugate, transposed."""
    if adjoint_a:
        a = conj(a)
    if adjoint_b:
        b = conj(b)
    attrs = {"transpose_a": bool(transpose_a or adjoint_a), "transpose_b": bool(transpose_b or adjoint_b)}
    return run(PRIMITIVES["matmul"], (a, b), attrs)


# ---- complex, real, imag, conj, angle ------------------------------------------------

def _complex_infer(re, im):
    return re._shape, _COMPLEX_OF.get(re._dtype, _dt.complex64)


@primitive("complex", "Complex", infer=_complex_infer, dtypes=(_dt.float32, _dt.float64), same_dtype=True)
def _COMPLEX(dev, re, im):
    if re._shape != im._shape:
        raise InvalidArgumentError(f"real and imag must have one shape, got {tuple(re._shape)} and "
                                   f"{tuple(im._shape)}", "Complex")
    cdt = _COMPLEX_OF[re._dtype]
    be = dev.backend
    h, host = be.alloc(re._shape, cdt.np)
    check(be.cmake(cdt.code, re._h, im._h, h, re._size), "cmake")
    return make(h, host, re._shape, cdt, dev, re._size)


@register("complex", "Complex")
def complex(real, imag, name=None):
    """real + i * imag, element-wise (broadcasting): float32 parts give complex64, float64 complex128.

    >>> import tapeflow as tf
    >>> tf.complex(tf.constant([1.0, 2.0]), tf.constant([3.0, -1.0])).numpy().tolist()
    [(1+3j), (2-1j)]
    """
    from .array_ops import broadcast_to

    real, imag = _ew.coerce_pair(real, imag, "Complex")
    for t in (real, imag):
        if t._dtype not in _COMPLEX_OF:
            raise InvalidArgumentError(f"the parts of a complex number must be float32 or float64, got "
                                       f"{t._dtype.name}; allowed: float32, float64", "Complex")
    if real._dtype is not imag._dtype:
        _ew.dtype_mismatch(real, imag, "Complex")
    if real._shape != imag._shape and None not in real._shape and None not in imag._shape:
        shape = _ew.broadcast_shape(real._shape, imag._shape, "Complex")
        real, imag = broadcast_to(real, shape), broadcast_to(imag, shape)
    return run(_COMPLEX, (real, imag))


def _part_infer(x):
    return x._shape, _REAL_OF[x._dtype]


def _part_primitive(name, tf_name):
    code = _PART[name]

    @primitive(name, tf_name, infer=_part_infer, dtypes=C)
    def impl(dev, x):
        return _cpart(code, dev, x)
    return impl


_REAL = _part_primitive("real", "Real")
_IMAG = _part_primitive("imag", "Imag")
_ANGLE = _part_primitive("angle", "Angle")


@primitive("conj", "Conj", infer=lambda x: (x._shape, x._dtype), dtypes=C)
def _CONJ(dev, x):
    return _cunary(_UN["conj"], dev, x)


def _real_input(x, op):
    if x._dtype.is_string:
        raise InvalidArgumentError(f"{op} does not support string; allowed: numeric dtypes and complex64, "
                                   "complex128", op)


@register("real", "Real")
def real(input, name=None):
    """The real part of a complex tensor (float32 for complex64, float64 for complex128); a real tensor as is.

    >>> import tapeflow as tf
    >>> tf.math.real(tf.constant([1 + 2j, -3j])).numpy().tolist()
    [1.0, -0.0]
    """
    x = _tensor(input, "Real")
    if not x._dtype.is_complex:
        _real_input(x, "Real")
        return x
    return run(_REAL, (x,))


@register("imag", "Imag")
def imag(input, name=None):
    """The imaginary part of a complex tensor; zeros for a real tensor.

    >>> import tapeflow as tf
    >>> tf.math.imag(tf.constant([1 + 2j, -3j])).numpy().tolist()
    [2.0, -3.0]
    """
    x = _tensor(input, "Imag")
    if not x._dtype.is_complex:
        from .array_ops import zeros_like

        _real_input(x, "Imag")
        return zeros_like(x)
    return run(_IMAG, (x,))


@register("conj", "Conj")
def conj(x, name=None):
    """The complex conjugate real - i * imag; a real tensor as is.

    >>> import tapeflow as tf
    >>> tf.math.conj(tf.constant([1 + 2j])).numpy().tolist()
    [(1-2j)]
    """
    x = _tensor(x, "Conj")
    if not x._dtype.is_complex:
        _real_input(x, "Conj")
        return x
    return run(_CONJ, (x,))


@register("angle", "Angle")
def angle(input, name=None):
    """The argument atan2(imag, real) of a complex tensor; pi where a real tensor is negative, else 0.

    >>> import tapeflow as tf
    >>> tf.math.angle(tf.constant([1j, -1 + 0j])).numpy().round(6).tolist()
    [1.570796, 3.141593]
    """
    x = _tensor(input, "Angle")
    if not x._dtype.is_complex:
        from .array_ops import where
        from .math_ops import less

        if not x._dtype.is_floating:
            raise InvalidArgumentError(f"Angle does not support {x._dtype.name}; allowed: float16, bfloat16, "
                                       "float32, float64, complex64, complex128", "Angle")
        return where(less(x, 0.0), _math.pi, 0.0 * x)
    return run(_ANGLE, (x,))


__all__ = ["complex", "real", "imag", "conj", "angle"]
