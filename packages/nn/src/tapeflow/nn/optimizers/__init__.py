"""Optimizers (``tf.optimizers``, ``tf.keras.optimizers``): SGD, Adam, AdamW, RMSprop, Adagrad.

Every update step is Keras 3's (and so TensorFlow's) rule, computed with tapeflow ops;
an optimizer's state (``iterations`` and one or more slots per variable) lives in
variables, so checkpoints hold it.

>>> import tapeflow as tf
>>> w = tf.Variable(2.0)
>>> opt = tf.optimizers.SGD(learning_rate=0.1)
>>> _ = opt.apply_gradients([(tf.constant(1.0), w)])
>>> round(float(w), 6), int(opt.iterations)
(1.9, 1)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tapeflow.core import devices as _devices
from tapeflow.core.dispatch import kernel_failed
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.runner import current_graph, primitive, run_tensors
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

from .. import _args as A
from .. import _distribute
import tapeflow.core as K
from tapeflow.autodiff import pause_all
from ..layers import base as _base
from . import schedules  # noqa: F401
from .schedules import LearningRateSchedule

if TYPE_CHECKING:  # what learning_rate accepts (the setter checks it at run time)
    from typing import Any, Callable, Union
    LearningRateLike = Union[float, Tensor, Variable, LearningRateSchedule, Callable[..., Any]]

_f32 = np.float32


@primitive("learning_rate_schedule", "LearningRateSchedule", infer=lambda step, *, schedule: ((), K.float32),
           internal="a learning-rate schedule, evaluated in Python at the step a compiled train step runs")
def _SCHEDULE(dev, step, *, schedule):
    return K.constant(_f32(schedule(int(step.numpy()))))


def _r32(x):
    """A rate as float32: a Python number as NumPy's, a tensor (a schedule inside a compiled step) as it is."""
    return x if isinstance(x, Tensor) else _f32(x)


def _as_grad(g, v):
    if type(g) is not Tensor:
        g = g.read_value() if isinstance(g, Variable) else K.convert_to_tensor(g)
    if g.dtype is not v.dtype:
        g = K.cast(g, v.dtype)
    if g._shape != v._value._shape:
        raise InvalidArgumentError(f"gradient of shape {tuple(g.shape)} for variable {v.name!r} of shape "
                                   f"{tuple(v.shape)}; allowed: a gradient of the variable's shape",
                                   "ApplyGradients")
    return g


_FUSED_DTYPES = (K.float32, K.float64)
# tpf_optim_update's kinds (csrc/optim.c)
_SGD, _ADAM, _RMSPROP, _ADAGRAD = range(4)


def _fused_step(opt, kind, flags, g, var, slots, h0, h1=0.0, h2=0.0, h3=0.0, h4=0.0) -> bool:
    """Run ``var``'s step as one fused kernel (``csrc/optim.c``) writing the variable and its ``slots`` in place,
    when it can: a float32/float64 variable on the CPU, its gradient and slots there too.  Returns False (nothing
    done) otherwise, and the caller runs the update op by op (other devices, half types); both give the
    same bits.  A variable whose buffer something else holds (a tensor read before, a NumPy view) gets a
    private copy first, so values read before the step keep theirs.  While tracing a graph function, the step
    is one stateful ``optimizer_update`` node that runs the kernel when the graph runs (a rate that is a tensor
    there, Adam's step-dependent one, is a float32 scalar input of the node; float32 variables only then)."""
    x = var._value
    be = var._be
    if not opt._fused or x._dtype not in _FUSED_DTYPES or g._dev is not x._dev or be.name != "cpu":
        return False
    for s in slots:  # the slots too (made on the default device, which may not be the variable's)
        if s is not None and s._value._dev is not x._dev:
            return False
    hyper = (h0, h1, h2, h3, h4)
    if any(isinstance(h, Tensor) and (h._dtype is not K.float32 or h._shape != () or x._dtype is not K.float32)
           for h in hyper):
        return False
    del x
    graph = current_graph()
    if graph is not None:
        tensors = tuple(h for h in hyper if isinstance(h, Tensor))
        consts = tuple(None if isinstance(h, Tensor) else float(h) for h in hyper)
        for v in (var, *slots):  # later reads in the graph read the updated values
            if v is not None:
                graph.reads.pop(v, None)
        run_tensors(_OPTIM_UPDATE, (g,) + tensors, {"var": var, "slots": tuple(slots), "kind": kind, "flags": flags,
                                                    "consts": consts})
        return True
    _optim_kernel(kind, flags, g, var, slots, tuple(float(h.numpy()) if isinstance(h, Tensor) else h for h in hyper))
    return True


def _optim_kernel(kind, flags, g, var, slots, hyper):
    be = var._be
    null = be.ffi.NULL
    written = [s for s in (var, *slots) if s is not None]
    for s in written:  # a read of one of them on another thread waits for the kernel (Variable._read)
        s._lock.acquire()
    try:
        hs = [null if s is None else s._own_buffer() for s in slots] + [null] * (3 - len(slots))
        w = var._own_buffer()
        st = be.optim_update(kind, g._dtype.code, flags, w, hs[0], hs[1], hs[2], g._h, g._size,
                             *(float(h) for h in hyper))
    finally:
        for s in written:
            s._writing = False
            s._lock.release()
    if st:
        kernel_failed(st, "optim_update", "ApplyGradients")


def _optim_infer(g, *rates, var, slots, kind, flags, consts):
    return var._value._shape, var._value._dtype


@primitive("optimizer_update", "ApplyGradients", infer=_optim_infer, stateful=True,
           internal="one variable's optimizer step in a graph function: csrc/optim.c's fused kernel, in place")
def _OPTIM_UPDATE(dev, g, *rates, var, slots, kind, flags, consts):
    it = iter(rates)  # the rates computed in the graph (float32 scalars), in the places consts leaves open
    hyper = tuple(float(next(it).numpy()) if c is None else c for c in consts)
    _optim_kernel(kind, flags, g, var, slots, hyper)
    return var._value


class Optimizer:
    """Base class: ``apply_gradients(zip(grads, variables))`` runs one update step.

    Subclasses name their slots (``_slot_names``) and define ``_update(grad, var, slots, lr)``;
    ``clipnorm`` (per gradient), ``global_clipnorm`` (all gradients together) and
    ``clipvalue`` clip gradients first, and ``weight_decay`` shrinks each variable by
    ``var * weight_decay * lr`` before the update, as Keras does.
    """

    _slot_names: tuple = ()
    #: whether eager CPU steps of float32/float64 variables run as one fused kernel per variable (the op-by-op
    #: update otherwise: tests compare the two)
    _fused = True

    def __init__(self, learning_rate: LearningRateLike = 0.001,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name=None, **kwargs) -> None:
        kwargs.pop("use_locking", None)
        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword argument(s): "
                            f"{', '.join(sorted(kwargs))}")
        if sum(x is not None for x in (clipnorm, global_clipnorm)) > 1:
            raise ValueError("only one of clipnorm and global_clipnorm can be set")
        if name is not None and not isinstance(name, str):
            raise A._type_error(self, "name", name, "a str or None")
        self.name = name or _base._snake(type(self).__name__)
        self.learning_rate = learning_rate
        self.weight_decay = A.number(weight_decay, "weight_decay", self, lo=0.0, none_ok=True)
        self.clipnorm = A.number(clipnorm, "clipnorm", self, lo=0.0, none_ok=True)
        self.clipvalue = A.number(clipvalue, "clipvalue", self, lo=0.0, none_ok=True)
        self.global_clipnorm = A.number(global_clipnorm, "global_clipnorm", self, lo=0.0, none_ok=True)
        self.iterations = Variable(np.int64(0), trainable=False, name=f"{self.name}/iterations")
        self._slots = {}  # variable -> {slot name: variable}
        self._order = []  # variables in the order their slots were made
        self._exclude_wd = set()
        self._distribute_strategy = _distribute.current_strategy()  # fit trains under it

    # -- learning rate ---------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The rate for the next step (a schedule is evaluated at ``iterations``); assignable."""
        lr = self._lr
        if isinstance(lr, LearningRateSchedule) or (callable(lr) and not isinstance(lr, Variable)):
            if current_graph() is not None:  # a compiled step: the schedule at the step the graph runs
                return run_tensors(_SCHEDULE, (self.iterations.read_value(),), {"schedule": lr})
            return float(lr(int(self.iterations)))
        return float(lr)

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, (Tensor, Variable)):
            if value.dtype.is_floating and not value.shape:
                value = float(value)
            else:
                raise A._type_error(self, "learning_rate", value, "a float, a float scalar tensor, a "
                                    "LearningRateSchedule or a callable")
        elif not isinstance(value, LearningRateSchedule) and not callable(value):
            value = A.number(value, "learning_rate", self, allowed="a float, a float scalar tensor, a "
                             "LearningRateSchedule or a callable")
        self._lr = value

    lr = learning_rate

    # -- slots -------------------------------------------------------------------------------
    def _slot_init(self, name, var):
        return K.zeros(tuple(var.shape), var.dtype)

    def _get_slots(self, var):
        slots = self._slots.get(var)
        if slots is None:
            slots = {}
            for n in self._slot_names:
                base = var.name.removesuffix(":0")
                with _devices.device(var._value._dev):  # colocated with their variable, as TensorFlow's
                    slots[n] = Variable(self._slot_init(n, var), trainable=False, name=f"{self.name}/{base}_{n}")
            self._slots[var] = slots
            self._order.append(var)
            if _base._PENDING_RESTORES:
                from .. import checkpoint

                checkpoint._run_deferred()
        return slots

    def get_slot(self, var, name):
        """The slot variable ``name`` (e.g. ``"momentum"``) of ``var``."""
        return self._get_slots(var)[name]

    def get_slot_names(self):
        return list(self._slot_names)

    def build(self, var_list):
        """Create the slots of every variable now (they are otherwise made on the first update)."""
        for v in var_list:
            self._get_slots(v)

    @property
    def variables(self) -> list:
        """``iterations`` and every slot variable."""
        out = [self.iterations]
        for v in self._order:
            out.extend(self._slots[v].values())
        return out

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Variables (or names containing one of ``var_names``) that weight decay leaves alone."""
        for v in var_list or ():
            self._exclude_wd.add(id(v))
        self._exclude_names = tuple(var_names or ())

    # -- clipping --------------------------------------------------------------------------------
    def _clip(self, grads):
        if self.clipnorm is not None and self.clipnorm > 0:
            c = float(self.clipnorm)
            return [K.truediv(K.multiply(g, c), K.maximum(K.sqrt(K.reduce_sum(K.square(g))), c)) for g in grads]
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            c = float(self.global_clipnorm)
            norm = K.sqrt(K.add_n([K.reduce_sum(K.square(K.cast(g, K.float32) if g.dtype != K.float32 else g))
                                   for g in grads]))
            scale = c * K.minimum(1.0 / norm, 1.0 / c)
            scale = scale + (norm - norm)  # NaN when the norm is not finite, as Keras
            return [g * (scale if g.dtype == K.float32 else K.cast(scale, g.dtype)) for g in grads]
        if self.clipvalue is not None and self.clipvalue > 0:
            c = float(self.clipvalue)
            return [K.clip_by_value(g, -c, c) for g in grads]
        return grads

    # -- updates ---------------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name=None, **kwargs) -> Variable:
        """Apply one update to each variable from its gradient; pairs with a ``None`` gradient are skipped.

        Returns ``iterations`` (incremented by one; ``global_step``, if given, too).
        """
        pairs = [(g, v) for g, v in grads_and_vars]
        if pairs and all(g is None for g, _ in pairs):
            raise InvalidArgumentError(f"no gradients provided for any variable: "
                                       f"{[v.name for _, v in pairs][:10]}; allowed: at least one gradient "
                                       "(is the loss connected to the variables?)", "ApplyGradients")
        pairs = [(g, v) for g, v in pairs if g is not None]
        for _, v in pairs:
            if not isinstance(v, Variable):
                raise InvalidArgumentError(f"can only update Variables, got {type(v).__name__}", "ApplyGradients")
        ctx = _distribute.update_context()
        if ctx is not None:  # under a tf.distribute strategy: the replicas' gradients are summed first
            return ctx._apply_gradients(self, pairs, global_step, self._apply_pairs)
        return self._apply_pairs(pairs, global_step)

    def _apply_pairs(self, pairs, global_step):
        with pause_all():
            if pairs:
                grads = [_as_grad(g, v) for g, v in pairs]
                variables = [v for _, v in pairs]
                grads = self._clip(grads)
                lr = self.learning_rate
                self._prepare(lr)
                if self.weight_decay:
                    self._decay(variables, lr)
                for g, v in zip(grads, variables):
                    with v._lock:  # one variable's step (slots, update, constraint) is atomic under threads
                        self._update(g, v, self._get_slots(v), lr)
                        c = getattr(v, "constraint", None)
                        if c is not None:
                            v.assign(c(v.read_value()))
            self.iterations.assign_add(np.int64(1))
            if global_step is not None:
                global_step.assign_add(np.asarray(1, dtype=global_step.dtype.np))
        return self.iterations

    def apply(self, grads, trainable_variables):
        """Keras 3's spelling: ``apply(grads, variables)``."""
        return self.apply_gradients(zip(grads, trainable_variables))

    def _decay(self, variables, lr):
        wd = float(self.weight_decay)
        names = getattr(self, "_exclude_names", ())
        for v in variables:
            if id(v) in self._exclude_wd or any(n in v.name for n in names):
                continue
            with v._lock:
                v.assign_sub(v.read_value() * _f32(wd) * _r32(lr))

    def _prepare(self, lr):
        """Per-step constants shared by every variable (e.g. Adam's bias correction)."""

    def _update(self, grad, var, slots, lr):
        raise TypeError(f"{type(self).__name__} must define _update(grad, var, slots, lr)")

    def minimize(self, loss, var_list=None, tape=None, global_step=None, grad_loss=None, name=None) -> Tensor:
        """Differentiate ``loss`` (a function of no arguments, or a tensor recorded on ``tape``) and apply.

        Without ``var_list`` it updates every trainable variable the loss read.  Returns the loss.

        >>> import tapeflow as tf
        >>> x = tf.Variable(3.0)
        >>> opt = tf.optimizers.SGD(0.1)
        >>> for _ in range(50):
        ...     _ = opt.minimize(lambda: (x - 1.0) ** 2)
        >>> round(float(x), 3)
        1.0
        """
        from tapeflow.autodiff import GradientTape

        if callable(loss):
            with GradientTape() as t:
                value = loss()
            tape = t
        else:
            if tape is None:
                raise ValueError("minimize() with a loss tensor needs the tape that recorded it: "
                                 "minimize(loss, var_list, tape=tape), or pass a function")
            value = loss
        if callable(var_list):
            var_list = var_list()
        if var_list is None:
            var_list = [v for v in tape.watched_variables() if getattr(v, "trainable", False)]
        var_list = list(var_list)
        grads = tape.gradient(value, var_list, output_gradients=grad_loss)
        self.apply_gradients(zip(grads, var_list), global_step=global_step)
        return value

    def get_config(self) -> dict:
        lr = self._lr
        if isinstance(lr, LearningRateSchedule):
            from ..saving import serialize_keras_object

            lr = serialize_keras_object(lr)
        return {"name": self.name, "learning_rate": lr,
                "weight_decay": self.weight_decay, "clipnorm": self.clipnorm, "clipvalue": self.clipvalue,
                "global_clipnorm": self.global_clipnorm}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """An optimizer like the one ``get_config`` described (a schedule's config becomes the schedule).

        >>> import tapeflow as tf
        >>> opt = tf.optimizers.Adam(learning_rate=0.01)
        >>> type(tf.optimizers.Adam.from_config(opt.get_config())).__name__
        'Adam'
        """
        config = dict(config)
        lr = config.get("learning_rate")
        if isinstance(lr, dict) and "class_name" in lr:
            from ..saving import deserialize_keras_object

            config["learning_rate"] = deserialize_keras_object(lr, custom_objects=custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name} learning_rate={self._lr!r}>"


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum.

    Without momentum: ``var -= lr * g``.  With momentum ``mu``:
    ``m = mu * m - lr * g``, then ``var += m`` (or ``var += mu * m - lr * g`` with ``nesterov``).

    >>> import tapeflow as tf
    >>> w = tf.Variable(1.0)
    >>> opt = tf.optimizers.SGD(0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     _ = opt.apply_gradients([(tf.constant(1.0), w)])
    >>> round(float(w), 6)
    0.71
    """

    def __init__(self, learning_rate: LearningRateLike = 0.01,
                 momentum=0.0, nesterov=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="SGD", **kwargs) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)
        self.momentum = A.number(momentum, "momentum", self, lo=0.0, hi=1.0)
        self.nesterov = A.boolean(nesterov, "nesterov", self)
        self._slot_names = ("momentum",) if self.momentum else ()

    def _update(self, g, var, slots, lr):
        if self.momentum:
            flags = 3 if self.nesterov else 1
            if _fused_step(self, _SGD, flags, g, var, (slots["momentum"],), _r32(lr), _f32(self.momentum)):
                return
        elif _fused_step(self, _SGD, 0, g, var, (), _r32(lr)):
            return
        if not self.momentum:
            var.assign_sub(K.multiply(g, _r32(lr)))
            return
        m = slots["momentum"]
        mu = _f32(self.momentum)
        step = K.multiply(g, _r32(lr))
        m.assign(K.subtract(K.multiply(m.read_value(), mu), step))
        if self.nesterov:
            var.assign_add(K.subtract(K.multiply(m.read_value(), mu), step))
        else:
            var.assign_add(m.read_value())

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam: ``m += (g - m) * (1 - beta_1)``, ``v += (g**2 - v) * (1 - beta_2)``,
    ``var -= m * alpha / (sqrt(v) + epsilon)`` with
    ``alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)`` at step t (``amsgrad`` keeps the running max of v).

    >>> import tapeflow as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.optimizers.Adam(0.1).apply_gradients([(tf.constant(2.0), w)])
    >>> round(float(w), 4)
    0.9
    """

    def __init__(self, learning_rate: LearningRateLike = 0.001,
                 beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, name="adam", **kwargs) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)
        self.beta_1 = A.number(beta_1, "beta_1", self, lo=0.0, hi=1.0, hi_open=True)
        self.beta_2 = A.number(beta_2, "beta_2", self, lo=0.0, hi=1.0, hi_open=True)
        self.epsilon = A.number(epsilon, "epsilon", self, lo=0.0)
        self.amsgrad = A.boolean(amsgrad, "amsgrad", self)
        self._slot_names = ("momentum", "velocity", "velocity_hat") if self.amsgrad else ("momentum", "velocity")

    def _prepare(self, lr):
        # in float32, as TensorFlow computes them
        if current_graph() is not None:  # a compiled step: the step count is read when the graph runs
            t = K.cast(K.add(self.iterations.read_value(), np.int64(1)), "float32")
            b1p, b2p = K.pow(_f32(self.beta_1), t), K.pow(_f32(self.beta_2), t)
            self._alpha = K.truediv(K.multiply(K.sqrt(K.subtract(_f32(1), b2p)), lr), K.subtract(_f32(1), b1p))
            self._c1, self._c2 = _f32(1 - self.beta_1), _f32(1 - self.beta_2)
            return
        t = _f32(int(self.iterations) + 1)
        b1p, b2p = _f32(self.beta_1) ** t, _f32(self.beta_2) ** t
        self._alpha = _r32(lr) * np.sqrt(_f32(1) - b2p) / (_f32(1) - b1p)
        self._c1, self._c2 = _f32(1 - self.beta_1), _f32(1 - self.beta_2)  # as Keras: Python floats, then float32

    def _update(self, g, var, slots, lr):
        m, v = slots["momentum"], slots["velocity"]
        if _fused_step(
                self, _ADAM, 1 if self.amsgrad else 0, g, var,
                (m, v, slots["velocity_hat"]) if self.amsgrad else (m, v),
                self._alpha, self._c1, self._c2, _f32(self.epsilon)):
            return
        m.assign_add(K.multiply(K.subtract(g, m.read_value()), self._c1))
        v.assign_add(K.multiply(K.subtract(K.square(g), v.read_value()), self._c2))
        vv = v.read_value()
        if self.amsgrad:
            vh = slots["velocity_hat"]
            vh.assign(K.maximum(vh.read_value(), vv))
            vv = vh.read_value()
        var.assign_sub(K.truediv(K.multiply(m.read_value(), self._alpha), K.add(K.sqrt(vv), _f32(self.epsilon))))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay: ``var -= var * weight_decay * lr`` before each Adam step.

    >>> import tapeflow as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.optimizers.AdamW(0.1, weight_decay=0.5).apply_gradients([(tf.constant(0.0), w)])
    >>> round(float(w), 4)
    0.95
    """

    def __init__(self, learning_rate: LearningRateLike = 0.001,
                 weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, clipnorm=None, clipvalue=None, global_clipnorm=None, name="adamw", **kwargs) -> None:
        if not A.number(weight_decay, "weight_decay", self, lo=0.0):
            raise ValueError("AdamW needs a weight_decay > 0 (use Adam otherwise)")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay, clipnorm, clipvalue,
                         global_clipnorm, name, **kwargs)


class RMSprop(Optimizer):
    """RMSprop: ``v = rho * v + (1 - rho) * g**2``; ``var -= lr * g / sqrt(v + epsilon)``
    (``centered`` subtracts the squared mean gradient from v; ``momentum`` accumulates the steps).

    >>> import tapeflow as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.optimizers.RMSprop(0.01).apply_gradients([(tf.constant(1.0), w)])
    >>> round(float(w), 4)
    0.9684
    """

    def __init__(self, learning_rate: LearningRateLike = 0.001,
                 rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="rmsprop", **kwargs) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)
        self.rho = A.number(rho, "rho", self, lo=0.0, hi=1.0)
        self.momentum = A.number(momentum, "momentum", self, lo=0.0)
        self.epsilon = A.number(epsilon, "epsilon", self, lo=0.0)
        self.centered = A.boolean(centered, "centered", self)
        names = ["velocity"]
        if self.momentum > 0:
            names.append("momentum")
        if self.centered:
            names.append("average_gradient")
        self._slot_names = tuple(names)

    def _update(self, g, var, slots, lr):
        rho = _f32(self.rho)
        v = slots["velocity"]
        mom = self.momentum > 0
        if not isinstance(lr, Tensor) and _fused_step(
                self, _RMSPROP, (1 if mom else 0) | (2 if self.centered else 0), g, var,
                (v, slots["average_gradient"] if self.centered else None, slots["momentum"] if mom else None),
                _r32(lr), rho, _f32(1 - self.rho), _f32(self.momentum), _f32(self.epsilon)):
            return
        v.assign(K.add(K.multiply(v.read_value(), rho), K.multiply(K.square(g), _f32(1 - self.rho))))
        if self.centered:
            a = slots["average_gradient"]
            a.assign(K.add(K.multiply(a.read_value(), rho), K.multiply(g, _f32(1 - self.rho))))
            denom = K.add(K.subtract(v.read_value(), K.square(a.read_value())), _f32(self.epsilon))
        else:
            denom = K.add(v.read_value(), _f32(self.epsilon))
        inc = K.truediv(K.multiply(g, _r32(lr)), K.sqrt(denom))
        if self.momentum > 0:
            m = slots["momentum"]
            m.assign(K.add(K.multiply(m.read_value(), _f32(self.momentum)), inc))
            var.assign_sub(m.read_value())
        else:
            var.assign_sub(inc)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}


class Adagrad(Optimizer):
    """Adagrad: ``acc += g**2``; ``var -= lr * g / sqrt(acc + epsilon)`` (acc starts at
    ``initial_accumulator_value``).

    >>> import tapeflow as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.optimizers.Adagrad(0.1).apply_gradients([(tf.constant(1.0), w)])
    >>> round(float(w), 4)
    0.9047
    """

    _slot_names = ("accumulator",)

    def __init__(self, learning_rate: LearningRateLike = 0.001,
                 initial_accumulator_value=0.1, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="adagrad", **kwargs) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm, name, **kwargs)
        self.initial_accumulator_value = A.number(initial_accumulator_value, "initial_accumulator_value", self,
                                                  lo=0.0)
        self.epsilon = A.number(epsilon, "epsilon", self, lo=0.0)

    def _slot_init(self, name, var):
        return K.fill(tuple(var.shape), self.initial_accumulator_value, var.dtype)

    def _update(self, g, var, slots, lr):
        acc = slots["accumulator"]
        if not isinstance(lr, Tensor) and _fused_step(self, _ADAGRAD, 0, g, var, (acc,), _r32(lr),
                                                      _f32(self.epsilon)):
            return
        acc.assign_add(K.square(g))
        var.assign_sub(K.truediv(K.multiply(g, _r32(lr)), K.sqrt(K.add(acc.read_value(), _f32(self.epsilon)))))

    def get_config(self):
        return {**super().get_config(), "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}


_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad}


def get(identifier):
    """An optimizer from a name (``"adam"``, ``"sgd"``...) or an optimizer.

    >>> import tapeflow as tf
    >>> type(tf.optimizers.get("adam")).__name__
    'Adam'
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier.lower()]()
        except KeyError:
            raise ValueError(f"unknown optimizer {identifier!r}; allowed: {', '.join(sorted(_BY_NAME))}") from None
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    raise TypeError(f"an optimizer must be a name or an Optimizer, not {type(identifier).__name__}")


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "schedules", "get"]
