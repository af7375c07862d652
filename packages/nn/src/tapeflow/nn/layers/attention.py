"""Attention layers: dot-product ``Attention`` (Luong) and ``MultiHeadAttention`` (Vaswani et al.)."""
from __future__ import annotations

import math

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError

from .. import _args as A
from .. import initializers as _init
from .._masks import get_mask as _get_mask
from .base import Layer
from .convolutional import _activity, _reg_config

_NEG = -1e9


def _masked_softmax(scores, mask, zero_masked=True):
    """Softmax over the last axis; positions where ``mask`` is False get 0 (Keras 3's Softmax with a mask).

    ``zero_masked=False`` is Keras 3's ``dot_product_attention`` instead, which its MultiHeadAttention
    takes when it returns no scores and has no dropout: the same except that a row with no position
    kept (a masked query) comes out uniform rather than zero.
    """
    if mask is None:
        return K.softmax(scores, axis=-1)
    mask = K.broadcast_to(mask, scores.shape)
    probs = K.softmax(K.where(mask, scores, K.fill(scores.shape, _NEG if scores.dtype is not K.float16
                                                    else -65504.0)), axis=-1)
    return K.where(mask, probs, K.zeros_like(probs)) if zero_masked else probs


def _causal(tq, tv):
    rows = K.expand_dims(K.range(tq), 1)
    cols = K.expand_dims(K.range(tv), 0)
    return K.greater_equal(rows, cols)


def _as_tensor(x, dtype):
    t = x if isinstance(x, K.Tensor) else K.convert_to_tensor(x)
    if t.dtype is not dtype and (t.dtype.is_floating or t.dtype.is_integer):
        t = K.cast(t, dtype)
    return t


class _Seeded:
    def _dropout(self, x, rate, training):
        if not training or rate == 0.0:
            return x
        seed = None
        if self.seed is not None:
            self.__dict__["_calls"] += 1
            seed = self.seed * 1000003 + self._calls
        return K.dropout(x, rate=rate, seed=seed)


class Attention(_Seeded, Layer):
    """Dot-product attention: ``softmax(query @ key^T) @ value`` over inputs ``[query, value]`` or
    ``[query, value, key]`` (key defaults to value), with ``mask=[query_mask, value_mask]``.

    ``use_scale`` learns a scalar ``scale`` on the scores; ``score_mode="concat"`` scores
    ``concat_score_weight * sum(tanh(scale * (q + k)))`` instead.

    >>> import tapeflow as tf
    >>> q = tf.constant([[[1.0, 0.0]]])
    >>> v = tf.constant([[[1.0, 0.0], [0.0, 1.0]]])
    >>> tf.keras.layers.Attention()([q, v], mask=[None, tf.constant([[True, False]])]).numpy().tolist()
    [[[1.0, 0.0]]]
    """

    supports_masking = True

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.use_scale = A.boolean(use_scale, "use_scale", self)
        self.score_mode = A.choice(score_mode, "score_mode", self, ("dot", "concat"))
        self.dropout = A.number(dropout, "dropout", self, lo=0.0, hi=1.0)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0

    def _validate(self, inputs, mask):
        if not isinstance(inputs, (list, tuple)) or not 2 <= len(inputs) <= 3:
            raise InvalidArgumentError(f'layer "{self.name}" must be called on a list [query, value] or [query, '
                                       f"value, key], got {type(inputs).__name__}", type(self).__name__)
        if mask is not None and (not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3):
            raise InvalidArgumentError(f'the mask of layer "{self.name}" must be a list [query_mask, value_mask]',
                                       type(self).__name__)

    def build(self, input_shape):
        self.scale = self.add_weight("scale", (), initializer="ones") if self.use_scale else None
        self.concat_score_weight = self.add_weight("concat_score_weight", (), initializer="ones") \
            if self.score_mode == "concat" else None

    def call(self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        self._validate(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        if self.score_mode == "dot":
            scores = K.matmul(q, k, transpose_b=True)
            if self.scale is not None:
                scores = K.multiply(scores, self.scale.read_value())
        else:
            s = K.add(K.expand_dims(q, -2), K.expand_dims(k, -3))
            if self.scale is not None:
                s = K.multiply(s, self.scale.read_value())
            scores = K.multiply(self.concat_score_weight.read_value(), K.reduce_sum(K.tanh(s), axis=-1))
        smask = None
        if v_mask is not None:
            smask = K.expand_dims(K.cast(v_mask, K.bool_), -2)
        if use_causal_mask:
            c = K.expand_dims(_causal(scores.shape[-2], scores.shape[-1]), 0)
            smask = c if smask is None else K.logical_and(smask, c)
        if smask is not None:
            scores = K.where(smask, scores, K.subtract(scores, K.cast(
                65504.0 if scores.dtype is K.float16 else 1e9, scores.dtype)))
        weights = K.softmax(scores, axis=-1)
        out = K.matmul(self._dropout(weights, self.dropout, training), v)
        if q_mask is not None:
            out = K.where(K.expand_dims(K.cast(q_mask, K.bool_), -1), out, K.zeros_like(out))
        return (out, weights) if return_attention_scores else out

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


def _known(shape) -> tuple:
    """``shape`` for a reshape: its one unknown dimension (a batch traced as None) as -1."""
    return tuple(-1 if d is None else d for d in shape)


class MultiHeadAttention(_Seeded, Layer):
    """Multi-head attention: ``num_heads`` scaled dot-product attentions of learned projections of
    query, key and value, concatenated and projected back.

    Called as ``mha(query, value, key=None, attention_mask=None, ...)``; inputs are
    (batch, ..., dim) with attention over ``attention_axes`` (default: every axis between the
    batch and the features).  Weights, in order: query/kernel ``(dim_q, heads, key_dim)``,
    query/bias, key/kernel, key/bias, value/kernel ``(dim_v, heads, value_dim)``, value/bias,
    attention_output/kernel ``(heads, value_dim, out_dim)``, attention_output/bias.  The masks
    carried by query, value and key are applied (as Keras's ``query_mask``/``value_mask``/``key_mask``).

    >>> import tapeflow as tf
    >>> mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    >>> out, scores = mha(tf.ones([3, 5, 8]), tf.ones([3, 7, 8]), return_attention_scores=True)
    >>> out.shape, scores.shape, len(mha.weights)
    (TensorShape([3, 5, 8]), TensorShape([3, 2, 5, 7]), 8)
    """

    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.num_heads = A.integer(num_heads, "num_heads", self, lo=1)
        self.key_dim = A.integer(key_dim, "key_dim", self, lo=1)
        self.value_dim = A.integer(value_dim, "value_dim", self, lo=1, none_ok=True)
        self.dropout = A.number(dropout, "dropout", self, lo=0.0, hi=1.0)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        if output_shape is not None:
            shp = (output_shape,) if A._is_int(output_shape) else output_shape
            if not isinstance(shp, (list, tuple)) or not shp or not all(A._is_int(d) and d > 0 for d in shp):
                raise A._type_error(self, "output_shape", output_shape, "None, a positive int or a tuple of them")
            output_shape = tuple(int(d) for d in shp)
        self.output_shape_arg = output_shape
        if attention_axes is not None:
            axes = (attention_axes,) if A._is_int(attention_axes) else attention_axes
            if not isinstance(axes, (list, tuple)) or not all(A._is_int(a) for a in axes):
                raise A._type_error(self, "attention_axes", attention_axes, "None, an int or a tuple of ints")
            attention_axes = tuple(int(a) for a in axes)
        self.attention_axes = attention_axes
        A.lookups(self, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                  bias_constraint=bias_constraint)
        from .. import regularizers as _reg

        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer, self._activity_arg = _reg.get(activity_regularizer), activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self._calls = 0
        self._made = False

    def _w(self, name, shape, bias=False):
        kind = "bias" if bias else "kernel"
        return self.add_weight(name, shape, initializer=getattr(self, f"{kind}_initializer"),
                               regularizer=getattr(self, f"{kind}_regularizer"),
                               constraint=getattr(self, f"{kind}_constraint"))

    def build(self, query_shape, value_shape=None, key_shape=None):
        """Create the weights (on the first call, or here when ``value_shape`` is given, as Keras's build)."""
        if value_shape is None:
            return  # the first call sees value and key too
        key_shape = value_shape if key_shape is None else key_shape
        n, kd = self.num_heads, self.key_dim
        vd = self.value_dim or kd
        self.query_kernel = self._w("query/kernel", (int(query_shape[-1]), n, kd))
        self.query_bias = self._w("query/bias", (n, kd), True) if self.use_bias else None
        self.key_kernel = self._w("key/kernel", (int(key_shape[-1]), n, kd))
        self.key_bias = self._w("key/bias", (n, kd), True) if self.use_bias else None
        self.value_kernel = self._w("value/kernel", (int(value_shape[-1]), n, vd))
        self.value_bias = self._w("value/bias", (n, vd), True) if self.use_bias else None
        out = self.output_shape_arg or (int(query_shape[-1]),)
        self.output_kernel = self._w("attention_output/kernel", (n, vd) + out)
        self.output_bias = self._w("attention_output/bias", out, True) if self.use_bias else None
        self._made = True

    def _axes(self, rank):
        middle = tuple(range(1, rank - 1))
        if self.attention_axes is None:
            return middle
        axes = tuple(sorted(a % rank for a in self.attention_axes))
        if not axes or any(a not in middle for a in axes):
            raise InvalidArgumentError(f"attention_axes {self.attention_axes} must be axes between the batch and the "
                                       f"features of rank-{rank} inputs, i.e. within {middle}", "MultiHeadAttention")
        return axes

    def _flat(self, x, axes):
        """(batch-like, attended, features): the non-attended middle axes join the batch."""
        r = len(x.shape)
        others = [0] + [a for a in range(1, r - 1) if a not in axes]
        perm = others + list(axes) + [r - 1]
        xt = K.transpose(x, perm) if perm != list(range(r)) else x
        lead = tuple(x.shape[a] for a in others)
        n = -1 if None in lead else math.prod(lead)  # (a batch traced as unknown: a saved model's signature)
        return K.reshape(xt, (n, math.prod(x.shape[a] for a in axes), x.shape[-1])), lead, perm

    def _project(self, x, kernel, bias):
        d, n, h = kernel.shape
        y = K.reshape(K.matmul(x, K.reshape(kernel.read_value(), (d, n * h))), _known(x.shape[:2]) + (n, h))
        if bias is not None:
            y = K.add(y, bias.read_value())
        return K.transpose(y, (0, 2, 1, 3))  # (batch, heads, steps, dim)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False, mask=None):
        dt = self.dtype
        if mask is not None:
            query_mask = mask
        if value_mask is None:
            value_mask = _get_mask(value)
        if key is not None and key_mask is None:
            key_mask = _get_mask(key)
        value = _as_tensor(value, dt)
        key = value if key is None else _as_tensor(key, dt)
        if not self._made:
            self.build(query.shape, value.shape, key.shape)
        rank = len(query.shape)
        if len(value.shape) != rank or len(key.shape) != rank or rank < 3:
            raise InvalidArgumentError(f'layer "{self.name}" needs query, value and key of one rank >= 3, got shapes '
                                       f"{tuple(query.shape)}, {tuple(value.shape)}, {tuple(key.shape)}",
                                       "MultiHeadAttention")
        axes = self._axes(rank)
        auto = None
        if query_mask is not None:
            auto = K.expand_dims(K.cast(query_mask, K.bool_), -1)
        for m in (value_mask, key_mask):
            if m is not None:
                m = K.expand_dims(K.cast(m, K.bool_), -2)
                auto = m if auto is None else K.logical_and(auto, m)
        q, lead, perm = self._flat(query, axes)
        v, _, _ = self._flat(value, axes)
        k, _, _ = self._flat(key, axes)
        tq, tv = q.shape[1], v.shape[1]
        if use_causal_mask:
            c = K.reshape(_causal(tq, tv), (1, tq, tv))
            auto = c if auto is None else K.logical_and(auto, c)
        am = None
        if attention_mask is not None:
            am = K.cast(_as_tensor(attention_mask, K.bool_) if not isinstance(attention_mask, K.Tensor)
                        else attention_mask, K.bool_)
        if auto is not None:
            am = auto if am is None else K.logical_and(am, auto)
        if am is not None:
            if len(axes) != rank - 2 and len(axes) > 0 and rank > 3:
                raise InvalidArgumentError("masks are supported when attention runs over every axis between the "
                                           "batch and the features (attention_axes=None)", "MultiHeadAttention")
            am = K.reshape(K.broadcast_to(am, (query.shape[0],) + tuple(query.shape[1:-1]) +
                                          tuple(value.shape[1:-1])), (q.shape[0], 1, tq, tv))
        qh = K.multiply(self._project(q, self.query_kernel, self.query_bias), 1.0 / math.sqrt(float(self.key_dim)))
        kh = self._project(k, self.key_kernel, self.key_bias)
        vh = self._project(v, self.value_kernel, self.value_bias)
        keras_fused = not (self.dropout > 0.0 or return_attention_scores or rank != 3)  # Keras 3's choice of path
        scores = _masked_softmax(K.matmul(qh, kh, transpose_b=True), am, zero_masked=not keras_fused)
        out = K.matmul(self._dropout(scores, self.dropout, training), vh)  # (b, heads, tq, vd)
        n, vd = self.output_kernel.shape[:2]
        out_shape = tuple(self.output_kernel.shape[2:])
        y = K.matmul(K.reshape(K.transpose(out, (0, 2, 1, 3)), (-1, n * vd)),
                     K.reshape(self.output_kernel.read_value(), (n * vd, math.prod(out_shape))))
        if self.output_bias is not None:
            y = K.add(y, K.reshape(self.output_bias.read_value(), (-1,)))
        # back to the query's layout: (lead..., attended..., out)
        mid = tuple(query.shape[a] for a in axes)
        y = K.reshape(y, _known(lead) + mid + out_shape)
        if perm != list(range(rank)) and len(out_shape) == 1:
            inv = [perm.index(i) for i in range(rank)]
            y = K.transpose(y, inv)
        elif perm != list(range(rank)):
            nd = len(out_shape)
            inv = [perm.index(i) for i in range(rank - 1)] + [rank - 1 + j for j in range(nd)]
            y = K.transpose(y, inv)
        y = _activity(self, y)
        if return_attention_scores:
            s = K.reshape(scores, _known(lead) + (self.num_heads,) + mid + tuple(value.shape[a] for a in axes))
            return y, s
        return y

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        out = self.output_shape_arg or (query_shape[-1],)
        return tuple(query_shape[:-1]) + tuple(out)

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout, "use_bias": self.use_bias,
                "output_shape": self.output_shape_arg, "attention_axes": self.attention_axes,
                "kernel_initializer": _init.serialize(_init.get(self.kernel_initializer)),
                "bias_initializer": _init.serialize(_init.get(self.bias_initializer)),
                "kernel_regularizer": _reg_config(self.kernel_regularizer),
                "bias_regularizer": _reg_config(self.bias_regularizer),
                "activity_regularizer": _reg_config(self._activity_arg), "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint, "seed": self.seed}
