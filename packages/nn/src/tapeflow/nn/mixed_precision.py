"""Mixed precision (``tf.keras.mixed_precision``): dtype policies and loss scaling, as Keras 3.

A layer made under the policy ``"mixed_float16"`` (or ``"mixed_bfloat16"``) keeps its variables in
float32 and computes in float16: its inputs are cast to float16 and, inside its ``call``, its
float32 variables are read as float16 (the gradient flows back to the float32 variable through
the cast).  ``set_global_policy`` sets the policy of layers made afterwards (``dtype=`` on a layer
overrides it); ``compile`` wraps the optimizer in a :class:`LossScaleOptimizer` under
``"mixed_float16"`` (as Keras 3 does), so small float16 gradients do not flush to zero.

>>> import tapeflow as tf
>>> tf.keras.mixed_precision.set_global_policy("mixed_float16")
>>> layer = tf.keras.layers.Dense(2)
>>> y = layer(tf.ones([1, 3]))
>>> layer.compute_dtype, layer.variable_dtype, y.dtype.name, layer.kernel.dtype.name
('float16', 'float32', 'float16', 'float32')
>>> tf.keras.mixed_precision.set_global_policy("float32")
"""
from __future__ import annotations

import numpy as np

import tapeflow.core as K
from tapeflow.core import dtypes as _dt
from tapeflow.core.dispatch import hooks
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.variables import Variable

from .layers import base as _base
from .optimizers import Optimizer, get as _get_optimizer

__all__ = ["DTypePolicy", "LossScaleOptimizer", "Policy", "dtype_policy", "global_policy", "set_dtype_policy",
           "set_global_policy"]

_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


class DTypePolicy:
    """A layer's dtypes: ``compute_dtype`` (what it computes in) and ``variable_dtype`` (what its weights
    are stored in).  ``"mixed_float16"``/``"mixed_bfloat16"`` compute in 16 bits with float32 variables;
    any dtype name (``"float32"``, ``"float16"``, ``"int32"``...) uses that dtype for both.

    >>> import tapeflow as tf
    >>> p = tf.keras.mixed_precision.Policy("mixed_bfloat16")
    >>> p.name, p.compute_dtype, p.variable_dtype
    ('mixed_bfloat16', 'bfloat16', 'float32')
    """

    def __init__(self, name=None) -> None:
        if name is None:
            name = global_policy().name
        if isinstance(name, DTypePolicy):
            name = name.name
        if not isinstance(name, str):
            try:
                name = _dt.as_dtype(name).name
            except (TypeError, ValueError, InvalidArgumentError):
                raise ValueError(f"Policy name must be a string such as 'mixed_float16' or 'float32'; got "
                                 f"{name!r}") from None
        if name in _MIXED:
            self._compute, self._variable = _dt.as_dtype(_MIXED[name]), _dt.float32
        else:
            try:
                d = _dt.as_dtype(name)
            except (TypeError, ValueError, InvalidArgumentError):
                raise ValueError(f"Cannot convert '{name}' to a mixed precision Policy; allowed: 'mixed_float16', "
                                 "'mixed_bfloat16' or a dtype name such as 'float32'") from None
            self._compute = self._variable = d
            name = d.name
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return self._compute.name

    @property
    def variable_dtype(self) -> str:
        return self._variable.name

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy


_STATE = _base._AUTOCAST  # .dtype: what float variables are read as now (inside a mixed layer's call)
_GLOBAL = [DTypePolicy("float32")]


def set_global_policy(policy):
    """Set the dtype policy of the layers made from now on (``None`` resets it to ``"float32"``).

    >>> import tapeflow as tf
    >>> tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    >>> tf.keras.mixed_precision.global_policy().name
    'mixed_bfloat16'
    >>> tf.keras.mixed_precision.set_global_policy(None)
    """
    if policy is None:
        _GLOBAL[0] = DTypePolicy("float32")
        _base._GLOBAL_FLOAT32[0] = True
        return
    p = policy if isinstance(policy, DTypePolicy) else DTypePolicy(policy)
    if not p._variable.is_floating:
        raise ValueError(f"set_global_policy takes a floating policy; got {p.name!r} (give dtype= to the layers "
                         "that take integers instead)")
    _GLOBAL[0] = p
    _base._GLOBAL_FLOAT32[0] = p.name == "float32"


def global_policy() -> DTypePolicy:
    """The policy layers get when made without ``dtype=`` (``"float32"`` unless set).

    >>> import tapeflow as tf
    >>> tf.keras.mixed_precision.global_policy().name
    'float32'
    """
    return _GLOBAL[0]


set_dtype_policy = set_global_policy
dtype_policy = global_policy


def _resolve(dtype):
    """(policy, compute dtype, variable dtype or None when it is the compute dtype) for a layer's ``dtype=``."""
    if dtype is None:
        p = _GLOBAL[0]
    elif isinstance(dtype, DTypePolicy):
        p = dtype
    elif isinstance(dtype, str) and dtype in _MIXED:
        p = DTypePolicy(dtype)
    else:
        d = _dt.as_dtype(dtype)
        return None, d, None
    return p, p._compute, (None if p._variable is p._compute else p._variable)


class AutoCastVariable(Variable):
    """A float32 variable of a mixed-precision layer: read in the layer's compute dtype inside its ``call``
    (a cast the tape sees), in float32 everywhere else (optimizers, checkpoints, ``numpy()``)."""

    def _as_tensor(self):
        t = super()._as_tensor()
        dt = _STATE.dtype
        if dt is None or t._dtype is dt or not t._dtype.is_floating:
            return t
        if hooks.variable_read is not None:
            hooks.variable_read(self)
        return K.cast(t, dt)

    def read_value(self):
        t = super().read_value()  # (the tape sees the read)
        dt = _STATE.dtype
        if dt is None or t._dtype is dt or not t._dtype.is_floating:
            return t
        return K.cast(t, dt)

    def _cast_in(self, value):
        t = value.read_value() if isinstance(value, Variable) else value
        if hasattr(t, "_dtype") and t._dtype is not self._value._dtype and t._dtype.is_floating:
            t = K.cast(t, self._value._dtype)  # computed in the compute dtype, stored in float32
        return t

    def assign(self, value, *args, **kwargs):
        return super().assign(self._cast_in(value), *args, **kwargs)

    def assign_add(self, value, *args, **kwargs):
        return super().assign_add(self._cast_in(value), *args, **kwargs)

    def assign_sub(self, value, *args, **kwargs):
        return super().assign_sub(self._cast_in(value), *args, **kwargs)


def _make_variable(value, trainable, name, mixed):
    cls = AutoCastVariable if mixed and value.dtype.is_floating else Variable
    return cls(value, trainable=trainable, name=name)


# -- loss scaling ---------------------------------------------------------------------------------------

class LossScaleOptimizer(Optimizer):
    """An optimizer that scales the loss up (``scale_loss``) and the gradients back down, skipping a step
    whose gradients are not finite, with Keras 3's dynamic scale: it starts at ``initial_scale``,
    halves after a step with inf/NaN gradients, and doubles after ``dynamic_growth_steps`` finite
    steps.  ``fit`` uses it by itself: ``compile`` wraps the optimizer under ``"mixed_float16"``.

    >>> import tapeflow as tf
    >>> opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=8.0)
    >>> v = tf.Variable([1.0])
    >>> with tf.GradientTape() as tape:
    ...     loss = opt.scale_loss(tf.reduce_sum(v * 2.0))
    >>> _ = opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    >>> v.numpy().tolist(), float(opt.dynamic_scale.numpy())
    ([-1.0], 8.0)
    """

    _needs_eager_step = True  # the skip on non-finite gradients is a Python branch

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None,
                 **kwargs) -> None:
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`; set the scale on the "
                             "inner optimizer instead")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: {', '.join(sorted(kwargs))}; set "
                             "them on the inner optimizer")
        inner = _get_optimizer(inner_optimizer)
        if isinstance(inner, LossScaleOptimizer):
            raise ValueError("LossScaleOptimizer cannot wrap another LossScaleOptimizer")
        if isinstance(initial_scale, bool) or not isinstance(initial_scale, (int, float)) or \
                not initial_scale > 0:
            raise ValueError(f"LossScaleOptimizer: initial_scale={initial_scale!r}; allowed: a positive number")
        if isinstance(dynamic_growth_steps, bool) or not isinstance(dynamic_growth_steps, (int, np.integer)) \
                or dynamic_growth_steps < 1:
            raise ValueError(f"LossScaleOptimizer: dynamic_growth_steps={dynamic_growth_steps!r}; allowed: a "
                             "positive int")
        super().__init__(learning_rate=0.0, name=name or "loss_scale_optimizer")
        self.inner_optimizer = inner
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.step_counter = Variable(np.int64(0), trainable=False, name=f"{self.name}/step_counter")
        self.dynamic_scale = Variable(np.float32(initial_scale), trainable=False,
                                      name=f"{self.name}/dynamic_scale")
        self._distribute_strategy = inner._distribute_strategy

    @property
    def learning_rate(self):
        inner = self.__dict__.get("inner_optimizer")
        return 0.0 if inner is None else inner.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        inner = self.__dict__.get("inner_optimizer")
        if inner is not None:
            inner.learning_rate = value

    lr = learning_rate

    @property
    def iterations(self):
        inner = self.__dict__.get("inner_optimizer")
        return self.__dict__.get("_own_iterations") if inner is None else inner.iterations

    @iterations.setter
    def iterations(self, value):
        self.__dict__["_own_iterations"] = value

    @property
    def variables(self) -> list:
        return [self.step_counter, self.dynamic_scale] + list(self.inner_optimizer.variables)

    def scale_loss(self, loss):
        """``loss`` times the current scale (in the loss's dtype)."""
        return K.multiply(loss, K.cast(self.dynamic_scale.read_value(), loss.dtype))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None, **kwargs):
        """Unscale the gradients and apply them with the inner optimizer if all are finite, else skip the
        step and halve the scale; returns the inner optimizer's ``iterations``."""
        pairs = [(g, v) for g, v in grads_and_vars]
        present = [g for g, _ in pairs if g is not None]
        finite = all(bool(K.reduce_all(K.is_finite(g))) for g in present)
        if not finite:
            self.step_counter.assign(np.int64(0))
            self.dynamic_scale.assign(self.dynamic_scale.read_value() * 0.5)
            return self.iterations
        scale = self.dynamic_scale.read_value()
        unscaled = [(None if g is None else K.divide(g, K.cast(scale, g.dtype)), v) for g, v in pairs]
        self.inner_optimizer.apply_gradients(unscaled, global_step=global_step, **kwargs)
        if int(self.step_counter.numpy()) == self.dynamic_growth_steps - 1:
            self.step_counter.assign(np.int64(0))
            self.dynamic_scale.assign(self.dynamic_scale.read_value() * 2.0)
        else:
            self.step_counter.assign_add(np.int64(1))
        return self.iterations

    def get_config(self) -> dict:
        from .saving import serialize_keras_object

        return {"name": self.name, "inner_optimizer": serialize_keras_object(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .saving import deserialize_keras_object

        config = dict(config)
        inner = config.pop("inner_optimizer")
        if isinstance(inner, dict):
            inner = deserialize_keras_object(inner, custom_objects=custom_objects)
        return cls(inner, **config)
