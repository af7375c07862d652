"""Preprocessing layers: Normalization (with ``adapt``), Rescaling, CategoryEncoding, and the image
augmentations RandomFlip, RandomRotation, RandomZoom, RandomCrop (random only with ``training=True``).

Rotation and zoom resample images through an affine map of the output pixel grid, with
TensorFlow's ``ImageProjectiveTransformV3`` rules (fill modes reflect, wrap, constant, nearest;
bilinear or nearest interpolation), so a fixed factor reproduces Keras's output.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math

import numpy as np

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
from .base import Layer
from .reshaping import _lerp_axis

if TYPE_CHECKING:
    from tapeflow.core.tensor import Tensor


class Normalization(Layer):
    """Shifts and scales inputs to zero mean and unit variance per index of ``axis``:
    ``(x - mean) / max(sqrt(variance), 1e-7)`` (``invert=True`` undoes it).

    ``mean`` and ``variance`` come from the constructor or from ``adapt(data)`` (a NumPy array, a
    tensor, or an iterable of batches such as a ``tf.data.Dataset``).

    >>> import tapeflow as tf
    >>> norm = tf.keras.layers.Normalization()
    >>> norm.adapt([[1.0], [3.0], [5.0]])
    >>> [round(v, 4) for v in norm(tf.constant([[1.0], [5.0]])).numpy().ravel().tolist()]
    [-1.2247, 1.2247]
    """

    supports_masking = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs) -> None:
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif A._is_int(axis):
            axis = (int(axis),)
        elif isinstance(axis, (list, tuple)) and all(A._is_int(a) for a in axis):
            axis = tuple(int(a) for a in axis)
        else:
            raise A._type_error(self, "axis", axis, "None, an int or a tuple of ints")
        self.axis = axis
        self.invert = A.boolean(invert, "invert", self)
        if (mean is None) != (variance is None):
            raise InvalidArgumentError(f"mean and variance must be given together, got mean={mean!r} and "
                                       f"variance={variance!r}", "Normalization")
        if mean is not None and np.shape(mean) != np.shape(variance):
            raise InvalidArgumentError(f"mean and variance must have one shape, got {np.shape(mean)} and "
                                       f"{np.shape(variance)}", "Normalization")
        if mean is not None and len(np.shape(mean)) > len(self.axis):
            raise InvalidArgumentError(f"the rank of mean ({len(np.shape(mean))}) must be <= the number of axes "
                                       f"({len(self.axis)})", "Normalization")
        self.input_mean, self.input_variance = mean, variance
        self.mean = self.variance = None

    def build(self, input_shape):
        nd = len(input_shape)
        if any(a < -nd or a >= nd for a in self.axis):
            raise InvalidArgumentError(f"axis {self.axis} must be in [-{nd}, {nd}) for inputs of shape "
                                       f"{tuple(input_shape)}", "Normalization")
        keep = tuple(sorted(a % nd for a in self.axis))
        for d in keep:
            if input_shape[d] is None:
                raise InvalidArgumentError(f"axis {d} is kept but has unknown size in inputs of shape "
                                           f"{tuple(input_shape)}", "Normalization")
        self._build_shape = tuple(input_shape)
        self._keep = keep
        self._reduce = tuple(d for d in range(nd) if d not in keep)
        self._bshape = tuple(int(input_shape[d]) if d in keep else 1 for d in range(nd))
        mv_shape = tuple(int(input_shape[d]) for d in keep)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", mv_shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight("variance", mv_shape, initializer="ones", trainable=False)
            self.count = self.add_weight("count", (), dtype="int32", initializer="zeros", trainable=False)
        else:
            exp = [1] * nd
            m = np.asarray(self.input_mean, dtype=np.float32)
            for i in range(1, m.ndim + 1):
                exp[keep[-i]] = m.shape[-i]
            self.mean = K.broadcast_to(K.reshape(K.constant(m, dtype=self.dtype), exp), self._bshape)
            self.variance = K.broadcast_to(K.reshape(K.constant(np.asarray(self.input_variance, np.float32),
                                                                dtype=self.dtype), exp), self._bshape)
        self._finalize()

    def _finalize(self):
        if self.input_mean is None and self.built:
            self.mean = K.reshape(self.adapt_mean.read_value(), self._bshape)
            self.variance = K.reshape(self.adapt_variance.read_value(), self._bshape)

    def adapt(self, data):
        """Compute ``mean`` and ``variance`` from ``data`` (an array, a tensor or an iterable of batches)."""
        if self.input_mean is not None:
            raise InvalidArgumentError(f'layer "{self.name}" was given mean and variance; adapt() would replace them',
                                       "Normalization")
        if isinstance(data, (np.ndarray, K.Tensor, list)) and not (isinstance(data, list) and data and
                                                                   isinstance(data[0], (np.ndarray, K.Tensor))):
            batches = [data]
        elif hasattr(data, "__iter__"):
            batches = data
        else:
            raise TypeError(f"Normalization.adapt: data must be an array, a tensor or an iterable of batches, got "
                            f"{type(data).__name__}")
        total_mean = total_var = None
        count = 0
        for batch in batches:
            if isinstance(batch, tuple):
                batch = batch[0]
            x = K.cast(K.convert_to_tensor(batch), self.dtype) if not isinstance(batch, K.Tensor) or \
                batch.dtype is not self.dtype else batch
            if not self.built:
                self.build(x.shape)
                self.__dict__["built"] = True
            for d in self._keep:
                if x.shape[d] != self._build_shape[d]:
                    raise InvalidArgumentError(f"the layer was built for inputs of shape {self._build_shape}; adapt() "
                                               f"got a batch of shape {tuple(x.shape)}", "Normalization")
            bm = K.reduce_mean(x, axis=self._reduce) if self._reduce else x
            bv = K.reduce_variance(x, axis=self._reduce) if self._reduce else K.zeros_like(x)
            n = math.prod(x.shape[d] for d in self._reduce) if self._reduce else 1
            count += n
            if total_mean is None:
                total_mean, total_var = bm, bv
                continue
            w = n / count
            new_mean = K.add(K.multiply(total_mean, 1.0 - w), K.multiply(bm, w))
            total_var = K.add(K.multiply(K.add(total_var, K.square(K.subtract(total_mean, new_mean))), 1.0 - w),
                              K.multiply(K.add(bv, K.square(K.subtract(bm, new_mean))), w))
            total_mean = new_mean
        if total_mean is None:
            raise InvalidArgumentError("adapt() got no data (an empty iterable)", "Normalization")
        self.adapt_mean.assign(total_mean)
        self.adapt_variance.assign(total_var)
        self.count.assign(count)
        self._finalize()

    def call(self, inputs) -> Tensor:
        if self.mean is None:
            raise InvalidArgumentError(f'layer "{self.name}" has no mean and variance yet; call adapt(data) or pass '
                                       "mean= and variance=", "Normalization")
        if self.input_mean is None:
            self._finalize()
        sd = K.maximum(K.sqrt(self.variance), K.cast(1e-7, self.dtype))
        if self.invert:
            return K.add(self.mean, K.multiply(inputs, sd))
        return K.truediv(K.subtract(inputs, self.mean), sd)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": None if self.input_mean is None else np.asarray(self.input_mean).tolist(),
                "variance": None if self.input_variance is None else np.asarray(self.input_variance).tolist()}


class Rescaling(Layer):
    """``inputs * scale + offset`` (e.g. ``Rescaling(1 / 255)`` for images).

    >>> import tapeflow as tf
    >>> tf.keras.layers.Rescaling(0.5, offset=-1.0)(tf.constant([4, 6])).numpy().tolist()
    [1.0, 2.0]
    """

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale = A.number(scale, "scale", self)
        self.offset = A.number(offset, "offset", self)

    def call(self, inputs) -> Tensor:
        return K.add(K.multiply(inputs, K.cast(self.scale, inputs.dtype)), K.cast(self.offset, inputs.dtype))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class CategoryEncoding(Layer):
    """Integer category ids to vectors of ``num_tokens``: "one_hot" (one id per sample), "multi_hot"
    (1 where an id occurs) or "count" (how often, weighted by ``count_weights`` when given).

    >>> import tapeflow as tf
    >>> tf.keras.layers.CategoryEncoding(4, output_mode="count")(tf.constant([[0, 1, 1], [3, 3, 2]])).numpy().tolist()
    [[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 2.0]]
    """

    _casts_ints = False  # ids stay integers

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs) -> None:
        super().__init__(**kwargs)
        if num_tokens is None:
            raise InvalidArgumentError("num_tokens must be given (a positive int)", "CategoryEncoding")
        self.num_tokens = A.integer(num_tokens, "num_tokens", self, lo=1)
        self.output_mode = A.choice(output_mode, "output_mode", self, ("one_hot", "multi_hot", "count"))
        if A.boolean(sparse, "sparse", self):
            raise InvalidArgumentError("sparse=True is not available: tapeflow has no sparse tensors; allowed: "
                                       "sparse=False", "CategoryEncoding")
        self.sparse = False

    def call(self, inputs, count_weights=None):
        x = inputs
        if x.dtype.is_floating:
            x = K.cast(x, K.int32)
        if self.output_mode == "one_hot" and len(x.shape) > 0 and x.shape[-1] != 1 and len(x.shape) > 1:
            pass
        elif self.output_mode == "one_hot" and len(x.shape) > 1:
            x = K.squeeze(x, -1)
        if len(x.shape) == 0 or (self.output_mode == "one_hot" and len(x.shape) == 1) or (
                self.output_mode != "one_hot" and len(x.shape) == 1):
            x = K.expand_dims(x, -1)
        if x.shape[0] and x.shape[-1]:
            lo, hi = int(K.reduce_min(x)), int(K.reduce_max(x))
            if lo < 0 or hi >= self.num_tokens:
                raise InvalidArgumentError(f"input values must be in [0, {self.num_tokens}) (num_tokens), got values "
                                           f"in [{lo}, {hi}]", "CategoryEncoding")
        hot = K.one_hot(x, self.num_tokens, dtype=self.dtype)  # (batch, ids, tokens)
        if self.output_mode == "one_hot":
            return hot[..., 0, :] if len(inputs.shape) <= 1 or inputs.shape[-1] == 1 else hot
        if count_weights is not None:
            if self.output_mode != "count":
                raise InvalidArgumentError("count_weights is only used with output_mode='count'", "CategoryEncoding")
            cw = K.cast(K.convert_to_tensor(count_weights), self.dtype)
            hot = K.multiply(hot, K.expand_dims(K.reshape(cw, x.shape), -1))
        y = K.reduce_sum(hot, axis=-2)
        if self.output_mode == "multi_hot":
            y = K.minimum(y, K.cast(1.0, y.dtype))
        return y

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if not shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and shape[-1] != 1:
            return shape + (self.num_tokens,)
        if len(shape) == 1:
            return shape + (self.num_tokens,)
        return shape[:-1] + (self.num_tokens,)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode,
                "sparse": self.sparse}


class _Random(Layer):
    """A layer drawing fresh random numbers per call, reproducible from ``seed``."""

    def _seed(self):
        if self.seed is None:
            return None
        self.__dict__["_calls"] += 1
        return self.seed * 1000003 + self._calls

    def _uniform(self, shape, lo, hi):
        if lo == hi:  # a fixed factor, e.g. RandomRotation((0.25, 0.25))
            return K.fill(shape, float(lo)) if shape else K.constant(float(lo))
        return K.random.uniform(shape, minval=lo, maxval=hi, seed=self._seed())

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


def _images(layer, x):
    if len(x.shape) not in (3, 4):
        raise InvalidArgumentError(f'layer "{layer.name}" takes images (height, width, channels) or a batch of them, '
                                   f"got shape {tuple(x.shape)}", type(layer).__name__)
    return (K.expand_dims(x, 0), True) if len(x.shape) == 3 else (x, False)


class RandomFlip(_Random):
    """Flips images left-right ("horizontal"), up-down ("vertical") or both, each image with
    probability 1/2, while training; passes them through otherwise.

    >>> import tapeflow as tf
    >>> flip = tf.keras.layers.RandomFlip("horizontal", seed=0)
    >>> x = tf.reshape(tf.range(4.0), [1, 1, 4, 1])
    >>> flip(x).numpy().ravel().tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> sorted({tuple(flip(x, training=True).numpy().ravel().tolist()) for _ in range(20)})
    [(0.0, 1.0, 2.0, 3.0), (3.0, 2.0, 1.0, 0.0)]
    """

    def __init__(self, mode="horizontal_and_vertical", seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode = A.choice(mode, "mode", self, ("horizontal", "vertical", "horizontal_and_vertical"))
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0

    def call(self, inputs, training=None):
        if not training:
            return inputs
        x, single = _images(self, inputs)
        b = x.shape[0]
        for axis, on in ((2, self.mode != "vertical"), (1, self.mode != "horizontal")):
            if on:
                flip = K.reshape(K.less(self._uniform((b,), 0.0, 1.0), 0.5), (b, 1, 1, 1))
                x = K.where(K.broadcast_to(flip, x.shape), K.reverse(x, axis=[axis]), x)
        return x[0] if single else x

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "seed": self.seed}


def _factor_pair(value, name, owner, lo=None):
    if A._is_number(value):
        pair = (-abs(float(value)), abs(float(value)))
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(A._is_number(v) for v in value):
        pair = (float(value[0]), float(value[1]))
    else:
        raise A._type_error(owner, name, value, "a number or a tuple of 2 numbers")
    if pair[0] > pair[1]:
        raise InvalidArgumentError(f"{name} {value!r} must have lower <= upper", A._owner(owner))
    if lo is not None and pair[0] < lo:
        raise InvalidArgumentError(f"{name} {value!r} must be >= {lo}", A._owner(owner))
    return pair


def _map_coords(c, n, mode):
    """TensorFlow's ImageProjectiveTransform coordinate mapping for ``fill_mode``."""
    nf = float(n)
    if mode == "reflect":
        if n <= 1:
            return K.zeros_like(c)
        t = K.floormod(c, 2.0 * nf)
        c = K.where(K.less(t, nf), t, K.subtract(2.0 * nf - 1.0, t))
    elif mode == "wrap":
        if n <= 1:
            return K.zeros_like(c)
        sz = nf - 1.0
        neg = K.add(c, K.multiply(K.add(K.floor(K.truediv(K.negative(c), sz)), 1.0), nf))
        pos = K.subtract(c, K.multiply(K.floor(K.truediv(c, sz)), nf))
        c = K.where(K.less(c, 0.0), neg, K.where(K.greater(c, sz), pos, c))
    elif mode == "constant":
        return c
    return K.clip_by_value(c, 0.0, nf - 1.0)


def _affine(images, transforms, interpolation, fill_mode, fill_value):
    """Resample ``images`` (b, h, w, c) where output pixel (y, x) reads input (a1 y + a0 x + a2, ...):
    ``transforms`` is (b, 6) = [a0, a1, a2, b0, b1, b2] with x_in = a0 x + a1 y + a2, y_in = b0 x + b1 y + b2."""
    b, h, w, c = images.shape
    dt = images.dtype
    ys = K.reshape(K.cast(K.range(h), dt), (1, h, 1))
    xs = K.reshape(K.cast(K.range(w), dt), (1, 1, w))
    t = [K.reshape(v, (b, 1, 1)) for v in K.unstack(transforms, axis=1)]
    x_in = K.add(K.add(K.multiply(t[0], xs), K.multiply(t[1], ys)), t[2])
    y_in = K.add(K.add(K.multiply(t[3], xs), K.multiply(t[4], ys)), t[5])
    x_in, y_in = _map_coords(x_in, w, fill_mode), _map_coords(y_in, h, fill_mode)
    bidx = K.broadcast_to(K.reshape(K.range(b), (b, 1, 1)), (b, h, w))
    fill = K.cast(fill_value, dt)

    def read(yy, xx):
        yi, xi = K.cast(yy, K.int32), K.cast(xx, K.int32)
        ok = K.logical_and(K.logical_and(K.greater_equal(yy, 0.0), K.less_equal(yy, h - 1.0)),
                           K.logical_and(K.greater_equal(xx, 0.0), K.less_equal(xx, w - 1.0)))
        yi = K.clip_by_value(yi, 0, h - 1)
        xi = K.clip_by_value(xi, 0, w - 1)
        v = K.gather_nd(images, K.stack([bidx, yi, xi], axis=-1))
        return K.where(K.broadcast_to(K.expand_dims(ok, -1), v.shape), v, K.fill(v.shape, fill))

    if interpolation == "nearest":
        # std::round: halves away from zero
        def rnd(v):
            return K.multiply(K.sign(v), K.floor(K.add(K.abs(v), 0.5)))

        return read(rnd(y_in), rnd(x_in))
    y0, x0 = K.floor(y_in), K.floor(x_in)
    y1, x1 = K.add(y0, 1.0), K.add(x0, 1.0)
    wy1, wx1 = K.expand_dims(K.subtract(y_in, y0), -1), K.expand_dims(K.subtract(x_in, x0), -1)
    wy0, wx0 = K.expand_dims(K.subtract(y1, y_in), -1), K.expand_dims(K.subtract(x1, x_in), -1)
    top = K.add(K.multiply(wx0, read(y0, x0)), K.multiply(wx1, read(y0, x1)))
    bottom = K.add(K.multiply(wx0, read(y1, x0)), K.multiply(wx1, read(y1, x1)))
    return K.add(K.multiply(wy0, top), K.multiply(wy1, bottom))


class _Affine(_Random):
    def _fill_args(self, fill_mode, interpolation, fill_value):
        self.fill_mode = A.choice(fill_mode, "fill_mode", self, ("reflect", "wrap", "constant", "nearest"))
        self.interpolation = A.choice(interpolation, "interpolation", self, ("bilinear", "nearest"))
        self.fill_value = A.number(fill_value, "fill_value", self)

    def call(self, inputs, training=None):
        if not training:
            return inputs
        x, single = _images(self, inputs)
        y = _affine(x, self._transforms(x.shape[0], x.shape[1], x.shape[2], x.dtype), self.interpolation,
                    self.fill_mode, self.fill_value)
        return y[0] if single else y


class RandomRotation(_Affine):
    """Rotates images by a random angle in ``factor * 2 pi`` (a number f: [-f, f]; or (lower, upper))
    while training, filling as ``fill_mode``; passes them through otherwise.

    >>> import tapeflow as tf
    >>> rot = tf.keras.layers.RandomRotation((0.25, 0.25), fill_mode="constant")
    >>> x = tf.reshape(tf.constant([1.0, 2.0, 3.0, 4.0]), [1, 2, 2, 1])
    >>> [round(v) for v in rot(x, training=True).numpy().ravel().tolist()]
    [2, 4, 1, 3]
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 value_range=(0, 255), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.factor = _factor_pair(factor, "factor", self)
        self._fill_args(fill_mode, interpolation, fill_value)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0
        self.value_range = _value_range(value_range, self)
        self.data_format = _channels_last(data_format, self)

    def _transforms(self, b, h, w, dt):
        angle = K.multiply(self._uniform((b,), self.factor[0], self.factor[1]), 2.0 * math.pi)
        cos, sin = K.cos(angle), K.sin(angle)
        x_off = K.truediv(K.subtract((w - 1.0), K.subtract(K.multiply(cos, w - 1.0), K.multiply(sin, h - 1.0))), 2.0)
        y_off = K.truediv(K.subtract((h - 1.0), K.add(K.multiply(sin, w - 1.0), K.multiply(cos, h - 1.0))), 2.0)
        return K.cast(K.stack([cos, K.negative(sin), x_off, sin, cos, y_off], axis=1), dt)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "seed": self.seed, "fill_value": self.fill_value,
                "value_range": self.value_range, "data_format": self.data_format}


class RandomZoom(_Affine):
    """Zooms images by a random factor while training: ``height_factor`` f in (lower, upper) gives a
    height zoom of ``1 + f`` (positive zooms out, negative in); ``width_factor`` likewise (None: the
    height's zoom, keeping the aspect ratio).

    >>> import tapeflow as tf
    >>> zoom = tf.keras.layers.RandomZoom((-0.5, -0.5))
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> zoom(x).shape, zoom(x, training=True)[0, :, :, 0].numpy().tolist()[1]
    (TensorShape([1, 4, 4, 1]), [5.75, 6.25, 6.75, 7.25])
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, value_range=(0, 255), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.height_factor = _factor_pair(height_factor, "height_factor", self, lo=-1.0)
        self.width_factor = None if width_factor is None else _factor_pair(width_factor, "width_factor", self, lo=-1.0)
        self._fill_args(fill_mode, interpolation, fill_value)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0
        self.value_range = _value_range(value_range, self)
        self.data_format = _channels_last(data_format, self)

    def _transforms(self, b, h, w, dt):
        hz = K.add(self._uniform((b,), self.height_factor[0], self.height_factor[1]), 1.0)
        wz = hz if self.width_factor is None else K.add(self._uniform((b,), *self.width_factor), 1.0)
        x_off = K.multiply(K.subtract(1.0, wz), (w - 1.0) / 2.0)
        y_off = K.multiply(K.subtract(1.0, hz), (h - 1.0) / 2.0)
        zero = K.zeros_like(hz)
        return K.cast(K.stack([wz, zero, x_off, zero, hz, y_off], axis=1), dt)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "value_range": self.value_range, "data_format": self.data_format}


def _value_range(v, owner):
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(A._is_number(e) for e in v) or v[0] > v[1]:
        raise A._type_error(owner, "value_range", v, "a (low, high) pair of numbers")
    return tuple(v)


def _channels_last(f, owner):
    if f is not None:
        A.choice(f, "data_format", owner, ("channels_last",), lower=False)
    return "channels_last"


class RandomCrop(_Random):
    """Crops a random ``height`` x ``width`` window (one offset per batch, as Keras 3) while training;
    for an image not larger than the window, the window sits at the centre of the image's box of the
    target's aspect ratio and what it holds is resized bilinearly (Keras 3's rule).  Without
    ``training=True`` images pass through unchanged (as Keras 3).

    >>> import tapeflow as tf
    >>> crop = tf.keras.layers.RandomCrop(2, 2, seed=1)
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> crop(x).shape, crop(x, training=True).shape
    (TensorShape([1, 4, 4, 1]), TensorShape([1, 2, 2, 1]))
    >>> wide = tf.keras.layers.RandomCrop(2, 8)(x, training=True)[0, :, :, 0].numpy().tolist()
    >>> wide[0]
    [4.0, 4.25, 4.75, 5.25, 5.75, 6.25, 6.75, 7.0]
    >>> wide[1]
    [8.0, 8.25, 8.75, 9.25, 9.75, 10.25, 10.75, 11.0]
    """

    def __init__(self, height, width, seed=None, data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.height = A.integer(height, "height", self, lo=1)
        self.width = A.integer(width, "width", self, lo=1)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0
        self.data_format = _channels_last(data_format, self)

    def call(self, inputs, training=None):
        if not training:
            return inputs
        x, single = _images(self, inputs)
        h, w = x.shape[1], x.shape[2]
        if h > self.height and w > self.width:
            hs = int(K.floor(self._uniform((), 0.0, float(h - self.height + 1))))
            ws = int(K.floor(self._uniform((), 0.0, float(w - self.width + 1))))
        else:
            # Keras 3 places the window at the centre of the target's aspect-ratio box, keeps the
            # window's size (cut at the image's edges) and resizes what it holds
            ch = max(min(h, int(float(w * self.height) / self.width)), 1)
            cw = max(min(w, int(float(h * self.width) / self.height)), 1)
            hs, ws = int(float(h - ch) / 2), int(float(w - cw) / 2)
        y = x[:, hs:hs + self.height, ws:ws + self.width, :]
        if y.shape[1] != self.height:
            y = _lerp_axis(y, 1, self.height)
        if y.shape[2] != self.width:
            y = _lerp_axis(y, 2, self.width)
        return y[0] if single else y

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        return shape[:-3] + (self.height, self.width, shape[-1])

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width, "seed": self.seed,
                "data_format": self.data_format}
