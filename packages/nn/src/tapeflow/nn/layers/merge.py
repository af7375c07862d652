"""Merge layers (Keras 3's): ``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum``, ``Minimum``,
``Concatenate``, ``Dot`` and their functional forms (``add``, ``concatenate``, ...).

Each takes a list of tensors.  The element-wise ones broadcast as Keras does (equal sizes, or
1, right-aligned; inputs of lower rank get size-1 axes after the batch axis) and OR their
inputs' masks; ``Concatenate`` joins along ``axis`` (the other sizes must match);
``Dot(axes, normalize=False)`` takes the per-sample dot product of two tensors along ``axes``
(with ``normalize=True``: of the L2-normalized samples, the cosine similarity).

>>> import tapeflow as tf
>>> a = tf.constant([[1.0, 2.0]])
>>> b = tf.constant([[3.0, 4.0]])
>>> tf.keras.layers.Add()([a, b]).numpy().tolist(), tf.keras.layers.Dot(axes=1)([a, b]).numpy().tolist()
([[4.0, 6.0]], [[11.0]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError

from .. import _args as _A
from .base import Layer

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor

__all__ = ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract", "add", "average",
           "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]


def _fail(layer, what):
    raise InvalidArgumentError(f'layer "{layer.name}" ({type(layer).__name__}): {what}', type(layer).__name__)


def _shapes(layer, input_shape, at_least=1):
    if not isinstance(input_shape, (list, tuple)) or not input_shape or \
            not all(isinstance(s, (list, tuple)) for s in input_shape):
        _fail(layer, f"a merge layer should be called on a list of inputs; allowed: a list of at least {at_least} "
                     f"tensors; received input_shape={input_shape}")
    if len(input_shape) < at_least:
        _fail(layer, f"a merge layer should be called on a list of at least {at_least} inputs; received "
                     f"{len(input_shape)}")
    return [tuple(s) for s in input_shape]


def _elemwise_shape(layer, shape1, shape2):
    if len(shape1) < len(shape2):
        return _elemwise_shape(layer, shape2, shape1)
    if not shape2:
        return tuple(shape1)
    out = list(shape1[:-len(shape2)])
    for i, j in zip(shape1[-len(shape2):], shape2):
        if i is None or j is None:
            out.append(None)
        elif i == 1:
            out.append(j)
        elif j == 1 or i == j:
            out.append(i)
        else:
            _fail(layer, f"inputs have incompatible shapes; received shapes {tuple(shape1)} and {tuple(shape2)} "
                         "(allowed: equal sizes, or 1, per axis)")
    return tuple(out)


class _Merge(Layer):
    """Base of the element-wise merge layers (shape checks, rank alignment, the OR of the masks)."""

    supports_masking = True
    _min_inputs = 1
    _casts_ints = False  # as Keras 3: merging integer tensors gives integers

    def __init_subclass__(cls, **kwargs):
        explicit = "_casts_ints" in cls.__dict__
        super().__init_subclass__(**kwargs)
        if not explicit:
            cls._casts_ints = False

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)

    def build(self, input_shape):
        shapes = _shapes(self, input_shape, self._min_inputs)
        batch = {s[0] for s in shapes if s} - {None}
        if len(batch) > 1:
            _fail(self, f"cannot merge tensors with different batch sizes; received tensors with shapes {shapes}")
        out = shapes[0][1:]
        for s in shapes[1:]:
            out = _elemwise_shape(self, out, s[1:])

    def call(self, inputs, mask=None) -> Tensor:
        if not isinstance(inputs, (list, tuple)):
            _fail(self, f"a merge layer should be called on a list of inputs; received {type(inputs).__name__}")
        inputs = list(inputs)
        ranks = [len(x.shape) for x in inputs]
        top = max(ranks)
        for i, x in enumerate(inputs):
            for _ in range(top - ranks[i]):
                x = K.expand_dims(x, 1)
            inputs[i] = x
        masks = list(mask) if isinstance(mask, (list, tuple)) else [None] * len(inputs)
        return self._merge(inputs, masks)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        if not isinstance(mask, (list, tuple)) or len(mask) != len(inputs):
            _fail(self, f"the masks should be a list as long as the inputs ({len(inputs)})")
        if any(m is None for m in mask):
            return None
        out = mask[0]
        for m in mask[1:]:
            out = K.logical_or(out, m)
        return out

    def compute_output_shape(self, input_shape):
        shapes = _shapes(self, input_shape, self._min_inputs)
        out = shapes[0][1:]
        for s in shapes[1:]:
            out = _elemwise_shape(self, out, s[1:])
        batch = {s[0] for s in shapes if s} - {None}
        return ((batch.pop() if len(batch) == 1 else None),) + tuple(out)


def _or_mask_merge(op, inputs, masks):
    """Keras's merge for Maximum/Minimum: masked-out entries take the other inputs' values."""
    output, out_mask = None, None
    for x, m in zip(inputs, masks):
        if m is not None:
            m = K.broadcast_to(K.expand_dims(m, -1), K.shape(x))
        if output is None:
            output, out_mask = x, m
            continue
        if m is not None:
            x = K.where(m, x, output)
        if out_mask is not None:
            output = K.where(out_mask, output, x)
        out_mask = K.logical_or(out_mask, m) if (m is not None and out_mask is not None) else None
        output = op(output, x)
    return output


class Add(_Merge):
    """Adds a list of tensors element-wise (broadcasting as Keras).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Add()([tf.ones([2, 3]), tf.ones([2, 3])]).numpy().tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """

    def _merge(self, inputs, masks):
        out = inputs[0]
        for x in inputs[1:]:
            out = K.add(out, x)
        return out


class Subtract(_Merge):
    """Subtracts two tensors: ``inputs[0] - inputs[1]`` (exactly two inputs).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Subtract()([tf.constant([[5.0]]), tf.constant([[2.0]])]).numpy().tolist()
    [[3.0]]
    """

    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            _fail(self, f"a Subtract layer should be called on exactly 2 inputs; received {len(input_shape)}")

    def _merge(self, inputs, masks):
        if len(inputs) != 2:
            _fail(self, f"a Subtract layer should be called on exactly 2 inputs; received {len(inputs)}")
        return K.subtract(inputs[0], inputs[1])


class Multiply(_Merge):
    """Multiplies a list of tensors element-wise (masked entries count as 1, as Keras 3).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Multiply()([tf.constant([[2.0, 3.0]]), tf.constant([[4.0, 5.0]])]).numpy().tolist()
    [[8.0, 15.0]]
    """

    def _merge(self, inputs, masks):
        full = all(m is not None for m in masks)
        out, out_mask = None, None
        for x, m in zip(inputs, masks):
            if m is not None:
                m = K.broadcast_to(K.expand_dims(m, -1), K.shape(x))
                x = K.where(m, x, K.ones_like(x))
                if full:
                    out_mask = m if out_mask is None else K.logical_or(out_mask, m)
            out = x if out is None else K.multiply(out, x)
        if full:
            out = K.where(out_mask, out, K.zeros_like(out))
        return out


class Average(_Merge):
    """The element-wise mean of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.Average()([tf.constant([[1.0]]), tf.constant([[4.0]])]).numpy().tolist()
    [[2.5]]
    """

    def _merge(self, inputs, masks):
        out = inputs[0]
        for x in inputs[1:]:
            out = K.add(out, x)
        return K.divide(out, K.cast(len(inputs), out.dtype))


class Maximum(_Merge):
    """The element-wise maximum of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.Maximum()([tf.constant([[1.0, 5.0]]), tf.constant([[3.0, 2.0]])]).numpy().tolist()
    [[3.0, 5.0]]
    """

    def _merge(self, inputs, masks):
        return _or_mask_merge(K.maximum, inputs, masks)


class Minimum(_Merge):
    """The element-wise minimum of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.Minimum()([tf.constant([[1.0, 5.0]]), tf.constant([[3.0, 2.0]])]).numpy().tolist()
    [[1.0, 2.0]]
    """

    def _merge(self, inputs, masks):
        return _or_mask_merge(K.minimum, inputs, masks)


class Concatenate(_Merge):
    """Concatenates a list of tensors along ``axis`` (their other sizes must match).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Concatenate(axis=-1)([tf.ones([2, 3]), tf.zeros([2, 1])]).shape
    TensorShape([2, 4])
    """

    def __init__(self, axis=-1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = _A.integer(axis, "axis", self)

    def build(self, input_shape):
        shapes = _shapes(self, input_shape)
        ranks = {len(s) for s in shapes}
        if len(ranks) != 1:
            _fail(self, f"a Concatenate layer requires inputs with matching shapes except for the concatenation "
                        f"axis; received input_shape={shapes} (ranks differ)")
        rank = ranks.pop()
        if not -rank <= self.axis < rank:
            _fail(self, f"axis={self.axis} is out of range for inputs of rank {rank}; allowed: [{-rank}, {rank})")
        ax = self.axis % rank
        for d in range(rank):
            if d == ax:
                continue
            sizes = {s[d] for s in shapes} - {None}
            if len(sizes) > 1:
                _fail(self, f"a Concatenate layer requires inputs with matching shapes except for the "
                            f"concatenation axis; received input_shape={shapes}")

    def call(self, inputs, mask=None) -> Tensor:
        if not isinstance(inputs, (list, tuple)):
            _fail(self, f"a Concatenate layer should be called on a list of inputs; received "
                        f"{type(inputs).__name__}")
        return K.concat(list(inputs), axis=self.axis)

    def compute_output_shape(self, input_shape):
        shapes = _shapes(self, input_shape)
        out = list(shapes[0])
        for s in shapes[1:]:
            if out[self.axis] is None or s[self.axis] is None:
                out[self.axis] = None
                break
            out[self.axis] += s[self.axis]
        return tuple(out)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        if not isinstance(mask, (list, tuple)) or len(mask) != len(inputs):
            _fail(self, f"the masks should be a list as long as the inputs ({len(inputs)})")
        if all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                masks.append(K.ones_like(x, dtype=K.bool))
            elif len(m.shape) < len(x.shape):
                masks.append(K.logical_or(K.expand_dims(m, -1), K.zeros_like(x, dtype=K.bool)))
            else:
                masks.append(m)
        return K.reduce_any(K.concat(masks, axis=self.axis), axis=-1)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _l2_normalize(x, axis):
    sq = K.reduce_sum(K.multiply(x, x), axis=axis, keepdims=True)
    return K.multiply(x, K.rsqrt(K.maximum(sq, K.cast(1e-12, x.dtype))))


def _batch_dot(x, y, axes):
    """Keras's ``batch_dot``: the dot product of each sample of ``x`` with the same sample of ``y`` over
    ``x``'s axis ``axes[0]`` and ``y``'s axis ``axes[1]``."""
    rx, ry = len(x.shape), len(y.shape)
    ax, ay = axes
    px = [0] + [d for d in range(1, rx) if d != ax] + [ax]
    py = [0, ay] + [d for d in range(1, ry) if d != ay]
    xt, yt = K.transpose(x, px), K.transpose(y, py)
    sx, sy = list(xt.shape), list(yt.shape)
    rest_x, rest_y = sx[1:-1], sy[2:]
    k = sx[-1]
    nx, ny = 1, 1
    for d in rest_x:
        nx *= d
    for d in rest_y:
        ny *= d
    out = K.matmul(K.reshape(xt, [-1, nx, k]), K.reshape(yt, [-1, k, ny]))
    out = K.reshape(out, [-1] + rest_x + rest_y)
    if len(out.shape) == 1:
        out = K.expand_dims(out, 1)
    return out


class Dot(_Merge):
    """The per-sample dot product of two tensors along ``axes`` (an int, or one axis per input);
    ``normalize=True`` L2-normalizes each sample first (cosine similarity).  The batch axis cannot
    be an axis of the product.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(10, dtype=tf.float32), (1, 5, 2))
    >>> y = tf.reshape(tf.range(10, 20, dtype=tf.float32), (1, 2, 5))
    >>> tf.keras.layers.Dot(axes=(1, 2))([x, y]).numpy().tolist()
    [[[260.0, 360.0], [320.0, 445.0]]]
    """

    _min_inputs = 2

    def __init__(self, axes, normalize=False, **kwargs) -> None:
        super().__init__(**kwargs)
        if isinstance(axes, bool) or not isinstance(axes, (int, list, tuple)):
            raise _A._type_error(self, "axes", axes, "an int or a list of two ints")
        if isinstance(axes, (list, tuple)):
            if len(axes) != 2 or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
                raise InvalidArgumentError(f"Dot(axes={axes!r}): allowed: an int or two ints (one axis per input)",
                                           "Dot")
            axes = tuple(axes)
        self.axes = axes
        self.normalize = _A.boolean(normalize, "normalize", self)

    def _axes(self, r1, r2):
        a = self.axes
        if isinstance(a, int):
            out = [a % r1, a % r2] if a < 0 else [a, a]
        else:
            out = [a[0] % r1 if a[0] < 0 else a[0], a[1] % r2 if a[1] < 0 else a[1]]
        for ax, r in zip(out, (r1, r2)):
            if ax == 0 or ax >= r:
                _fail(self, f"axes={self.axes!r} names axis {ax} of an input of rank {r}; allowed: axes in "
                            f"[1, rank) (not the batch axis)")
        return out

    def build(self, input_shape):
        shapes = _shapes(self, input_shape, 2)
        if len(shapes) != 2:
            _fail(self, f"a Dot layer should be called on a list of 2 inputs; received {len(shapes)}")
        s1, s2 = shapes
        a = self._axes(len(s1), len(s2))
        if s1[a[0]] is not None and s2[a[1]] is not None and s1[a[0]] != s2[a[1]]:
            _fail(self, f"incompatible input shapes: axis values {s1[a[0]]} (at axis {a[0]}) != {s2[a[1]]} "
                        f"(at axis {a[1]}); full input shapes: {s1}, {s2}")

    def _merge(self, inputs, masks):
        if len(inputs) != 2:
            _fail(self, f"a Dot layer should be called on exactly 2 inputs; received {len(inputs)}")
        x1, x2 = inputs
        a = self._axes(len(x1.shape), len(x2.shape))
        if self.normalize:
            x1, x2 = _l2_normalize(x1, a[0]), _l2_normalize(x2, a[1])
        return _batch_dot(x1, x2, a)

    def call(self, inputs, mask=None) -> Tensor:
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            _fail(self, "a Dot layer should be called on a list of exactly 2 inputs")
        return self._merge(list(inputs), [None, None])

    def compute_output_shape(self, input_shape):
        s1, s2 = [list(s) for s in _shapes(self, input_shape, 2)]
        a = self._axes(len(s1), len(s2))
        s1.pop(a[0])
        s2.pop(a[1])
        s2.pop(0)
        out = s1 + s2
        return tuple(out + [1] if len(out) == 1 else out)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        axes = list(self.axes) if isinstance(self.axes, tuple) else self.axes
        return {**super().get_config(), "axes": axes, "normalize": self.normalize}


def _functional(cls, inputs, **kwargs):
    return cls(**kwargs)(inputs)


def add(inputs, **kwargs):
    """``Add()(inputs)``: the element-wise sum of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.add([tf.constant([1.0]), tf.constant([2.0])]).numpy().tolist()
    [3.0]
    """
    return _functional(Add, inputs, **kwargs)


def subtract(inputs, **kwargs):
    """``Subtract()(inputs)``: ``inputs[0] - inputs[1]``.

    >>> import tapeflow as tf
    >>> tf.keras.layers.subtract([tf.constant([3.0]), tf.constant([1.0])]).numpy().tolist()
    [2.0]
    """
    return _functional(Subtract, inputs, **kwargs)


def multiply(inputs, **kwargs):
    """``Multiply()(inputs)``: the element-wise product of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.multiply([tf.constant([3.0]), tf.constant([2.0])]).numpy().tolist()
    [6.0]
    """
    return _functional(Multiply, inputs, **kwargs)


def average(inputs, **kwargs):
    """``Average()(inputs)``: the element-wise mean of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.average([tf.constant([3.0]), tf.constant([1.0])]).numpy().tolist()
    [2.0]
    """
    return _functional(Average, inputs, **kwargs)


def maximum(inputs, **kwargs):
    """``Maximum()(inputs)``: the element-wise maximum of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.maximum([tf.constant([3.0]), tf.constant([1.0])]).numpy().tolist()
    [3.0]
    """
    return _functional(Maximum, inputs, **kwargs)


def minimum(inputs, **kwargs):
    """``Minimum()(inputs)``: the element-wise minimum of a list of tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.minimum([tf.constant([3.0]), tf.constant([1.0])]).numpy().tolist()
    [1.0]
    """
    return _functional(Minimum, inputs, **kwargs)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis)(inputs)``: a list of tensors joined along ``axis``.

    >>> import tapeflow as tf
    >>> tf.keras.layers.concatenate([tf.ones([1, 2]), tf.zeros([1, 1])]).numpy().tolist()
    [[1.0, 1.0, 0.0]]
    """
    return _functional(Concatenate, inputs, axis=axis, **kwargs)


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """``Dot(axes, normalize)(inputs)``: the per-sample dot product of two tensors.

    >>> import tapeflow as tf
    >>> tf.keras.layers.dot([tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])], axes=1).numpy().tolist()
    [[11.0]]
    """
    return _functional(Dot, inputs, axes=axes, normalize=normalize, **kwargs)
