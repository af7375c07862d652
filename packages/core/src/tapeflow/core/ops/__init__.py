"""Every op of tapeflow core, and the Tensor operators bound to them."""
from __future__ import annotations

from ..tensor import Tensor
from .math_ops import *  # noqa: F401,F403
from .math_ops import (abs, add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, equal, floordiv,
                       floormod, greater, greater_equal, less, less_equal, logical_and, logical_not,
                       logical_or, logical_xor, matmul, multiply, negative, not_equal, pow, subtract,
                       truediv, cast)
from .array_ops import *  # noqa: F401,F403
from . import math_ops, array_ops  # noqa: F401
from . import index_ops, reduce_ops, slice_ops, sort_ops  # noqa: F401,E402
from .reduce_ops import *  # noqa: F401,F403,E402
from .index_ops import *  # noqa: F401,F403,E402
from .slice_ops import *  # noqa: F401,F403,E402
from .sort_ops import *  # noqa: F401,F403,E402

# each family module lists its public ops in __all__
from . import nn_ops, random_ops, linalg_ops, conv_ops, grad_ops  # noqa: F401,E402
from . import string_ops  # noqa: F401,E402  (tf.strings; its names stay out of the top level)
from .grad_ops import *  # noqa: F401,F403,E402
from .nn_ops import *  # noqa: F401,F403,E402
from .random_ops import *  # noqa: F401,F403,E402
from .linalg_ops import *  # noqa: F401,F403,E402
from .conv_ops import *  # noqa: F401,F403,E402
from . import segment_ops  # noqa: F401,E402
from .segment_ops import *  # noqa: F401,F403,E402
from . import set_ops  # noqa: F401,E402
from .set_ops import *  # noqa: F401,F403,E402
from . import manip_ops  # noqa: F401,E402
from . import random_dist_ops  # noqa: F401,E402  (tf.random.gamma & co.; their names stay in tf.random)
from .manip_ops import *  # noqa: F401,F403,E402
from . import rnn_ops  # noqa: F401,E402  (the fused LSTM cell of the Keras layers; no tf.* name)
from . import complex_ops, fft_ops  # noqa: F401,E402  (tf.math.real & co. stay in tf.math, tf.signal's in tf.signal)
from .complex_ops import angle, complex, conj, imag, real  # noqa: F401,E402

# the public ops: what each family lists (the facade exports exactly these)
__all__ = sorted({name for family in (math_ops, reduce_ops, array_ops, index_ops, slice_ops, sort_ops, nn_ops,
                                      random_ops, linalg_ops, conv_ops, grad_ops, segment_ops, set_ops, manip_ops)
           for name in family.__all__} | {"complex"})


def _bool_or(x, y):
    return logical_or(x, y) if _is_bool(x, y) else bitwise_or(x, y)


def _bool_and(x, y):
    return logical_and(x, y) if _is_bool(x, y) else bitwise_and(x, y)


def _bool_xor(x, y):
    return logical_xor(x, y) if _is_bool(x, y) else bitwise_xor(x, y)


def _is_bool(x, y):
    t = x if isinstance(x, Tensor) else y
    return t.dtype.is_bool


def _invert(x):
    return logical_not(x) if x.dtype.is_bool else bitwise_not(x)


def _bind_operators():
    T = Tensor

    def rev(f):
        return lambda self, other: f(other, self)

    T.__add__, T.__radd__ = add, rev(add)
    T.__sub__, T.__rsub__ = subtract, rev(subtract)
    T.__mul__, T.__rmul__ = multiply, rev(multiply)
    T.__truediv__, T.__rtruediv__ = truediv, rev(truediv)
    T.__floordiv__, T.__rfloordiv__ = floordiv, rev(floordiv)
    T.__mod__, T.__rmod__ = floormod, rev(floormod)
    T.__pow__, T.__rpow__ = pow, rev(pow)
    T.__matmul__, T.__rmatmul__ = matmul, rev(matmul)
    T.__and__, T.__rand__ = _bool_and, rev(_bool_and)
    T.__or__, T.__ror__ = _bool_or, rev(_bool_or)
    T.__xor__, T.__rxor__ = _bool_xor, rev(_bool_xor)
    T.__lshift__, T.__rlshift__ = math_ops.left_shift, rev(math_ops.left_shift)
    T.__rshift__, T.__rrshift__ = math_ops.right_shift, rev(math_ops.right_shift)
    T.__neg__ = negative
    T.__pos__ = lambda self: self
    T.__abs__ = abs
    T.__invert__ = _invert
    T.__eq__ = lambda self, other: equal(self, other) if _comparable(other, self) else NotImplemented
    T.__ne__ = lambda self, other: not_equal(self, other) if _comparable(other, self) else NotImplemented
    T.__lt__, T.__le__, T.__gt__, T.__ge__ = less, less_equal, greater, greater_equal
    T.__getitem__ = slice_ops.getitem
    # TensorFlow-style methods
    T.astype = cast


def _comparable(other, t=None):
    if isinstance(other, str):  # a Python str compares with a string tensor only
        return t is not None and t._dtype.is_string
    return other is not None and not isinstance(other, type)


_bind_operators()
