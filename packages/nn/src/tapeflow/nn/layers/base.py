"""Layer: state in ``build``, math in ``call``, built lazily from the first input's shape.

A layer tracks what its attributes hold: variables, other layers, and lists,
tuples and dicts of them, so ``variables``, ``trainable_variables`` and
checkpoints see nested models without registration.  Calling one layer object
twice reuses its variables.

>>> import tapeflow as tf
>>> class Scale(tf.keras.layers.Layer):
...     def build(self, input_shape):
...         self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")
...     def call(self, x):
...         return self.w * x
>>> s = Scale()
>>> s(tf.constant([[1.0, 2.0]])).numpy().tolist(), [v.name for v in s.trainable_variables]
([[1.0, 2.0]], ['scale/w:0'])
"""
from __future__ import annotations

import functools
import inspect
import re
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from tapeflow.core import dtypes as _dt
from tapeflow.core import runner as _runner
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, TensorShape, constant, convert_to_tensor
from tapeflow.core.variables import Variable

from .. import _args as _A
import tapeflow.core as K
from .. import initializers as _init
from .._masks import _MASKS, get_mask as _get_mask, set_mask as _set_mask
from .. import regularizers as _reg

if TYPE_CHECKING:
    from typing import Protocol, TypeVar

    _Out = TypeVar("_Out", covariant=True)
    _O = TypeVar("_O")

    class _Calls(Protocol[_Out]):
        """A layer as type checkers see it: calling it gives what its ``call`` returns."""

        def call(self, *args: Any, **kwargs: Any) -> _Out: ...

# Bumped whenever what any layer tracks changes (an attribute holding variables or layers is set,
# a weight is added, a tracked list changes, ``trainable`` flips): the cached variable lists of
# every layer are then rebuilt on next use, so reading ``model.trainable_variables`` in a
# training loop costs a comparison.
_VERSION = [0]


class _Training(threading.local):
    """The ``training`` flag of this thread's innermost layer call, inherited by nested layers
    called without one (per thread, as tapes are: two threads running one model apart do not
    see each other's flag)."""

    flag = None


_TRAINING = _Training()


class _Autocast(threading.local):
    """The dtype float variables of mixed-precision layers are read in now (inside such a layer's call;
    None elsewhere): nn/mixed_precision.py's AutoCastVariable reads it."""

    def __init__(self) -> None:
        self.dtype = None


_AUTOCAST = _Autocast()
_GLOBAL_FLOAT32 = [True]  # whether the global dtype policy is float32 (layers then skip the policy lookup)


class _Symbolic(threading.local):
    depth = 0  # > 0 while a layer's call runs on symbolic inputs (see tapeflow.nn.functional)


_SYMBOLIC = _Symbolic()
# id(symbolic tensor) -> (weak reference, (layer, node index, tensor index)): Keras's _keras_history
_KERAS_HISTORY: dict = {}


# leaves tracing for a block (and pauses the tapes): how weights get values when a call is traced
_leave_tracing = _runner.init_scope


def _has_keras_tensor(args, kwargs) -> bool:
    if _SYMBOLIC.depth:
        return False
    for a in list(args) + list(kwargs.values()):
        if type(a) is Tensor:
            e = _KERAS_HISTORY.get(id(a))
            if e is not None and e[0]() is a:
                return True
        elif isinstance(a, (list, tuple, dict)) and a:
            if _has_keras_tensor(a.values() if isinstance(a, dict) else a, {}):
                return True
    return False


_NAME_COUNTS: dict = {}
# checkpoint restores waiting for variables that do not exist yet (see tapeflow.nn.checkpoint)
_PENDING_RESTORES: list = []


def _bump():
    _VERSION[0] += 1


def unique_name(base: str) -> str:
    """``base``, then ``base_1``, ``base_2``... (per process, as Keras names layers)."""
    n = _NAME_COUNTS.get(base, 0)
    _NAME_COUNTS[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def clear_session() -> None:
    """Reset layer name counters (``dense``, ``dense_1``...), as ``tf.keras.backend.clear_session``.

    >>> import tapeflow as tf
    >>> tf.keras.backend.clear_session()
    >>> tf.keras.layers.Dense(1).name
    'dense'
    """
    _NAME_COUNTS.clear()


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)  # Keras's rule: Conv2D -> conv2d
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


class _TrackedList(list):
    """A list attribute of a layer: changing it tells the layers to re-read what they track."""

    def _mut(name):
        base = getattr(list, name)

        def f(self, *a, **k):
            _bump()
            return base(self, *a, **k)

        f.__name__ = name
        return f

    for _n in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__",
               "__delitem__", "__iadd__", "__imul__"):
        locals()[_n] = _mut(_n)
    del _n, _mut


class _TrackedDict(dict):
    """A dict attribute of a layer: changing it tells the layers to re-read what they track."""

    def _mut(name):
        base = getattr(dict, name)

        def f(self, *a, **k):
            _bump()
            return base(self, *a, **k)

        f.__name__ = name
        return f

    for _n in ("__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault"):
        locals()[_n] = _mut(_n)
    del _n, _mut


_CONTAINERS = (list, tuple, dict)


class InputSpec:
    """What a layer accepts: rank (``ndim``, ``min_ndim``, ``max_ndim``) and fixed axis sizes (``axes``).

    >>> import tapeflow as tf
    >>> spec = tf.keras.layers.InputSpec(min_ndim=2, axes={-1: 4})
    >>> spec
    InputSpec(min_ndim=2, axes={-1: 4})
    """

    __slots__ = ("ndim", "min_ndim", "max_ndim", "axes", "dtype", "shape", "_fast")

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None) -> None:
        self.dtype, self.shape = dtype, shape
        self.ndim = len(shape) if shape is not None else ndim
        self.min_ndim, self.max_ndim, self.axes = min_ndim, max_ndim, dict(axes or {})
        # a precomputed check for specs of only a minimum rank and fixed axes (Dense's)
        simple = self.ndim is None and self.max_ndim is None and self.shape is None
        self._fast = (self.min_ndim or 0, tuple((a, v) for a, v in self.axes.items() if v is not None)) \
            if simple else None

    def check(self, x, layer, index=0):
        if type(x) is not Tensor:
            return
        shape = x._shape
        r = len(shape)
        fast = self._fast
        if fast is not None and r >= fast[0]:  # the common case: a minimum rank and fixed axes that match
            for a, v in fast[1]:
                if a < -r or shape[a] != v:
                    break
            else:
                return
        if self.ndim is not None and r != self.ndim:
            self._fail(layer, index, f"expected ndim={self.ndim}, found ndim={r}", shape)
        if self.min_ndim is not None and r < self.min_ndim:
            self._fail(layer, index, f"expected min_ndim={self.min_ndim}, found ndim={r}", shape)
        if self.max_ndim is not None and r > self.max_ndim:
            self._fail(layer, index, f"expected max_ndim={self.max_ndim}, found ndim={r}", shape)
        for a, v in self.axes.items():
            if v is not None and (a >= r or a < -r or shape[a] != v):
                self._fail(layer, index, f"expected axis {a} of input shape to have value {v}", shape)
        if self.shape is not None:
            for want, got in zip(self.shape, shape):
                if want is not None and want != got:
                    self._fail(layer, index, f"expected shape={tuple(self.shape)}", shape)

    @staticmethod
    def _fail(layer, index, what, shape):
        raise InvalidArgumentError(
            f'input {index} of layer "{layer.name}" is incompatible with the layer: {what}, but received '
            f"input with shape {tuple(shape)}", type(layer).__name__)

    def __repr__(self):
        parts = [f"{k}={getattr(self, k)!r}" for k in ("dtype", "shape", "ndim", "max_ndim", "min_ndim")
                 if getattr(self, k) is not None and not (k == "ndim" and self.shape is not None)]
        if self.axes:
            parts.append(f"axes={self.axes!r}")
        return f"InputSpec({', '.join(parts)})"


def _call_takes(cls, arg) -> bool:
    try:
        return arg in inspect.signature(cls.call).parameters
    except (TypeError, ValueError):
        return False


# attributes of Layer itself, never walked for variables or layers
_INTERNAL = frozenset({"_weights", "_weight_names", "_cache", "_out_shape", "_losses", "_regularized", "_name",
                       "_dtype", "_trainable", "built", "input_spec", "_batch_input_shape", "_autocast",
                       "_in_shape", "_deferred", "optimizer", "compiled_loss", "compiled_metrics", "history",
                       "stop_training", "_compiled", "_train_counter", "_metrics_list", "_loss_tracker",
                       "_inbound_nodes", "_compile_args", "_frozen_vars"})


class Layer:
    """Base class of layers: override ``build(input_shape)`` to create weights and ``call(inputs)`` to compute.

    ``layer(x)`` converts ``x`` to a tensor (floating inputs are cast to the layer's dtype),
    builds the layer on its first input, checks ``input_spec``, and passes ``training``
    on to ``call`` when ``call`` takes it (nested layers inherit it from the outer call).

    >>> import tapeflow as tf
    >>> d = tf.keras.layers.Dense(3)
    >>> d.built, d(tf.ones([2, 4])).shape, d.built, d.count_params()
    (False, TensorShape([2, 3]), True, 15)
    """

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None, batch_input_shape=None,
                 input_dim=None, batch_size=None, autocast=True, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword argument(s): "
                            f"{', '.join(sorted(kwargs))}")
        d = self.__dict__
        d["_trainable"] = _A.boolean(trainable, "trainable", self)
        if name is not None and not isinstance(name, str):
            raise _A._type_error(self, "name", name, "a str or None")
        d["_name"] = name if name is not None else unique_name(_snake(type(self).__name__))
        if dtype is None and _GLOBAL_FLOAT32[0]:
            d["_dtype"], d["_vdtype"], d["_policy"] = _dt.float32, None, None
        else:  # a dtype policy (nn/mixed_precision.py): "mixed_float16" computes in float16, stores float32
            from .. import mixed_precision as _mp

            d["_policy"], d["_dtype"], d["_vdtype"] = _mp._resolve(dtype)
        d["_autocast"] = _A.boolean(autocast, "autocast", self)
        d["built"] = False
        d["_weights"] = []
        d["_weight_names"] = {}
        d["_regularized"] = []
        d["_losses"] = []
        d["_cache"] = None
        d["_out_shape"] = None
        d["_in_shape"] = None
        d.setdefault("input_spec", None)
        _A.integer(batch_size, "batch_size", self, lo=0, none_ok=True)
        for arg, shape in (("input_shape", input_shape), ("batch_input_shape", batch_input_shape)):
            if shape is not None and (not isinstance(shape, (list, tuple)) or
                                      not all(v is None or _A._is_int(v) for v in shape)):
                raise _A._type_error(self, arg, shape, "a tuple of ints (None for unknown sizes)")
        if batch_input_shape is not None:
            bis = tuple(batch_input_shape)
        elif input_shape is not None:
            bis = (batch_size,) + tuple(input_shape)
        elif input_dim is not None:
            bis = (batch_size, _A.integer(input_dim, "input_dim", self, lo=1))
        else:
            bis = None
        d["_batch_input_shape"] = bis
        _bump()

    _takes_training = False  # whether call() takes ``training`` (set per subclass)
    _takes_mask = False  # whether call() takes ``mask`` (set per subclass)
    _makes_masks = False  # whether the class overrides compute_mask (it may make a mask from none)
    _mask_transparent = False  # models: their layers read and attach masks themselves
    #: Whether the layer can take a masked input (Keras's ``supports_masking``); one that cannot
    #: raises a TypeError when it receives a mask instead of dropping it.
    supports_masking = False

    #: Whether integer and bool inputs are cast to the layer's float dtype in ``__call__`` (as Keras 3's
    #: ops promote them: ``Dense(2)(int_ids)`` is float32).  True for tapeflow's float layers and their
    #: subclasses; False for ``Layer`` itself, users' layers and the layers that take ids or move
    #: values (Embedding, CategoryEncoding, Lambda, Flatten, Reshape, ...), which keep integers as Keras does.
    _casts_ints = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "_casts_ints" not in cls.__dict__:
            cls._casts_ints = cls.__module__.startswith("tapeflow.nn.layers.") or \
                any(getattr(b, "_casts_ints", False) for b in cls.__bases__)
        cls._takes_training = _call_takes(cls, "training")
        cls._takes_mask = _call_takes(cls, "mask")
        cls._makes_masks = cls.compute_mask is not Layer.compute_mask
        b = cls.__dict__.get("build")
        if b is not None and not getattr(b, "_tf_wrapped", False):
            # ``built`` becomes True however build is reached (first call or a direct build())
            @functools.wraps(b)
            def build(self, *args, **kw):
                out = b(self, *args, **kw)
                d = self.__dict__
                d["built"] = True
                if d.get("_in_shape") is None:
                    shape = args[0] if args else kw.get("input_shape")
                    d["_in_shape"] = None if shape is None else _as_shape(shape)
                return out

            build._tf_wrapped = True
            cls.build = build

    # -- attribute tracking -------------------------------------------------------------
    def __setattr__(self, name, value):
        tv = type(value)
        if tv is list and name not in _INTERNAL:
            value = _TrackedList(value)
        elif tv is dict and name not in _INTERNAL:
            value = _TrackedDict(value)
        if isinstance(value, (Layer, Variable) + _CONTAINERS) or \
                isinstance(self.__dict__.get(name), (Layer, Variable) + _CONTAINERS):
            _bump()
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # reached only when normal lookup fails: a subclass that skipped super().__init__()
        d = self.__dict__
        if "_weights" not in d and (name == "built" or (name.startswith("_") and not name.startswith("__"))):
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() before the layer "
                               "is used (the base class sets up weight tracking)")
        if name in ("input", "output", "inputs", "outputs") and "_weights" in d:  # the properties found none
            if "_layer_list" in d:
                raise AttributeError(f"Sequential model {self.name!r} has no defined {name} yet: its input shape is "
                                     "unknown; allowed: a tf.keras.Input first, or input_shape= on its first layer")
            raise AttributeError(f"the layer {self.name} has never been called on a symbolic input "
                                 f"(tf.keras.Input) and thus has no defined {name}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name):
        _bump()
        object.__delattr__(self, name)

    def _tracked_children(self):
        """(own variables, direct sublayers), in the order they were created or assigned."""
        own = list(self.__dict__.get("_weights", ()))
        seen = {id(v) for v in own}
        subs, seen_l = [], {id(self)}
        for k, v in self.__dict__.items():
            if k in _INTERNAL or isinstance(v, (str, bytes, int, float, np.ndarray)):
                continue
            _collect(v, own, subs, seen, seen_l)
        return own, subs

    def _lists(self):
        c = self.__dict__.get("_cache")
        if c is not None and c[0] == _VERSION[0]:
            return c
        own, subs = self._tracked_children()
        variables, trainable, non_trainable = [], [], []
        vseen, tseen, nseen = set(), set(), set()
        me_trainable = self._trainable
        frozen = self.__dict__.get("_frozen_vars", ())  # trainable variables that freezing turned off
        own_sorted = [v for v in own if v.trainable or id(v) in frozen] + \
            [v for v in own if not (v.trainable or id(v) in frozen)]
        for v in own_sorted:
            _add(variables, vseen, v)
            if me_trainable and v.trainable:
                _add(trainable, tseen, v)
            else:
                _add(non_trainable, nseen, v)
        for sub in subs:
            _, svars, strain, snon, _ = sub._lists()
            for v in svars:
                _add(variables, vseen, v)
            if me_trainable:
                for v in strain:
                    _add(trainable, tseen, v)
                for v in snon:
                    _add(non_trainable, nseen, v)
            else:
                for v in svars:
                    _add(non_trainable, nseen, v)
        c = (_VERSION[0], variables, trainable, non_trainable, subs)
        self.__dict__["_cache"] = c
        return c

    # -- public properties ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        """The dtype of the layer's variables (Keras's ``layer.dtype``; the compute dtype differs under a
        mixed policy)."""
        return self.__dict__.get("_vdtype") or self._dtype

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in (its inputs are cast to it)."""
        return self._dtype.name

    @property
    def variable_dtype(self) -> str:
        """The dtype of the layer's variables."""
        return self.dtype.name

    @property
    def dtype_policy(self):
        """The layer's ``tf.keras.mixed_precision.Policy``."""
        from .. import mixed_precision as _mp

        return self.__dict__.get("_policy") or _mp.DTypePolicy(self._dtype.name)

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        # as Keras 3: the layer's trainable variables follow (a tape then no longer watches frozen ones);
        # unfreezing turns back on only those that freezing turned off
        value = bool(value)
        d = self.__dict__
        frozen = d.setdefault("_frozen_vars", set())
        for v in self._tracked_children()[0]:
            if not value and v.trainable:
                v.trainable = False
                frozen.add(id(v))
            elif value and id(v) in frozen:
                v.trainable = True
        if value:
            frozen.clear()
        d["_trainable"] = value
        for sub in self._lists()[4]:
            sub.trainable = value
        _bump()

    @property
    def variables(self) -> list[Variable]:
        """Every variable of this layer and its sublayers (trainable ones first within each layer)."""
        return list(self._lists()[1])

    @property
    def trainable_variables(self) -> list[Variable]:
        """The variables an optimizer should update (none if ``trainable`` is False)."""
        return list(self._lists()[2])

    @property
    def non_trainable_variables(self) -> list:
        """The other variables (moving statistics, frozen layers)."""
        return list(self._lists()[3])

    @property
    def weights(self) -> list:
        """Trainable then non-trainable variables (Keras's order for ``get_weights``)."""
        c = self._lists()
        return list(c[2]) + list(c[3])

    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables

    @property
    def layers(self) -> list:
        """The direct sublayers."""
        return list(self._lists()[4])

    @property
    def submodules(self) -> list:
        """Every nested layer, depth first."""
        out, seen = [], set()

        def walk(layer):
            for s in layer._lists()[4]:
                if id(s) not in seen:
                    seen.add(id(s))
                    out.append(s)
                    walk(s)

        walk(self)
        return out

    @property
    def losses(self) -> list:
        """Losses added by ``add_loss`` in the last call, and the penalties of regularized weights."""
        out = list(self.__dict__.get("_losses", ()))
        for var, reg in self.__dict__.get("_regularized", ()):
            out.append(reg(var))
        for sub in self._lists()[4]:
            out.extend(sub.losses)
        return out

    def add_loss(self, loss):
        """Add a scalar to ``losses`` (e.g. an activity penalty computed in ``call``)."""
        self._losses.append(loss)

    # -- the functional API ------------------------------------------------------------------
    @property
    def output(self):
        """The symbolic output(s) of the layer's first call on symbolic inputs (``tf.keras.Input``), as Keras's
        ``layer.output``: with ``model.input`` it makes a model of part of another.

        >>> import tapeflow as tf
        >>> x = tf.keras.Input(shape=(3,))
        >>> hidden = tf.keras.layers.Dense(4, name="hidden")
        >>> model = tf.keras.Model(x, tf.keras.layers.Dense(1)(hidden(x)))
        >>> features = tf.keras.Model(model.input, model.get_layer("hidden").output)
        >>> features(tf.ones([2, 3])).shape
        TensorShape([2, 4])
        """
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise AttributeError("output")  # (__getattr__ says why)
        return nodes[0].out_struct

    @property
    def input(self):
        """The symbolic input(s) of the layer's first call on symbolic inputs (see ``output``)."""
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise AttributeError("input")
        node = nodes[0]
        return node.args[0] if node.args else node.out_struct  # an InputLayer's input is its output

    # -- weights --------------------------------------------------------------------------
    def add_weight(self, *args: Any, shape: Any = None, initializer: Any = None, dtype: Any = None,
                   trainable: bool = True, regularizer: Any = None, constraint: Any = None, name: str | None = None,
                   init: Any = None, **kwargs: Any) -> Variable:
        """Create a variable owned by this layer.

        Takes Keras 3's order ``add_weight(shape, initializer, ...)`` or TF-Keras's
        ``add_weight(name, shape, ...)``; the initializer defaults to Glorot uniform for
        floats and zeros otherwise.

        >>> import tapeflow as tf
        >>> layer = tf.keras.layers.Layer(name="demo")
        >>> w = layer.add_weight("w", (2, 3), initializer="zeros")
        >>> w.name, w.shape, len(layer.trainable_variables)
        ('demo/w:0', TensorShape([2, 3]), 1)
        """
        for k in ("aggregation", "synchronization", "autocast", "use_resource", "overwrite_with_gradient",
                  "experimental_autocast", "partitioner", "caching_device"):
            kwargs.pop(k, None)
        if kwargs:
            raise TypeError(f"add_weight() got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
        args = list(args)
        if args and isinstance(args[0], str):
            name = args.pop(0)
            order = ["shape", "dtype", "initializer"]
        else:
            order = ["shape", "initializer", "dtype"]
        given = {"shape": shape, "initializer": initializer, "dtype": dtype}
        for key, val in zip(order, args):
            given[key] = val
        shape, initializer, dtype = given["shape"], given["initializer"], given["dtype"]
        if initializer is None:
            initializer = init
        shape = () if shape is None else tuple(int(d) for d in shape)
        dt = (self.__dict__.get("_vdtype") or self._dtype) if dtype is None else _dt.as_dtype(dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dt.is_floating else "zeros"
        init_fn = _init.get(initializer)
        base = name or "variable"
        wname, i = base, 0
        while wname in self._weight_names.values():
            i += 1
            wname = f"{base}_{i}"
        if _runner._trace.graph is not None:  # a weight created while a call is traced still gets its value
            with _leave_tracing():
                value = init_fn(shape, dtype=dt)
        else:
            value = init_fn(shape, dtype=dt)
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value, dt)
        if self.__dict__.get("_vdtype") is None:
            var = Variable(value, trainable=trainable, name=f"{self._name}/{wname}")
        else:  # mixed precision: a float32 variable read in the compute dtype inside call
            from .. import mixed_precision as _mp

            var = _mp._make_variable(value, trainable, f"{self._name}/{wname}", True)
        if constraint is not None:
            var.constraint = constraint
        self._weights.append(var)
        self._weight_names[id(var)] = wname
        if regularizer is not None:
            self._regularized.append((var, _reg.get(regularizer)))
        _bump()
        if _PENDING_RESTORES:
            from .. import checkpoint

            checkpoint._run_deferred()
        return var

    def count_params(self) -> int:
        """The number of scalars in the layer's weights (the layer must be built).

        >>> import tapeflow as tf
        >>> d = tf.keras.layers.Dense(10)
        >>> d.build((None, 784))
        >>> d.count_params()
        7850
        """
        if not self.built and not self.weights:
            raise ValueError(f"you tried to call count_params on layer '{self.name}', but the layer isn't built; "
                             "call it on data or build(input_shape) first")
        return int(sum(_size(v.shape) for v in self.weights))

    def _keras_weights(self) -> list:
        """Keras 3's order of weights: layer by layer (each layer's own trainable, then its own
        non-trainable weights, then its sublayers'), so weights copy to and from Keras models."""
        out, seen = [], set()

        def walk(layer):
            own, _ = layer._tracked_children()
            for v in [v for v in own if v.trainable] + [v for v in own if not v.trainable]:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            for sub in layer._lists()[4]:
                walk(sub)

        walk(self)
        return out

    def get_weights(self) -> list:
        """The weights' values as NumPy arrays, layer by layer as Keras 3 orders them.

        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2),
        ...                              tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
        >>> [w.shape for w in model.get_weights()]
        [(3, 2), (2,), (2,), (2,), (2,), (2,), (2, 1), (1,)]
        """
        return [np.array(v.numpy()) for v in self._keras_weights()]

    def set_weights(self, weights):
        """Set every weight from a list of arrays in ``get_weights`` order (checked first: a mismatch
        changes nothing)."""
        params = self._keras_weights()
        weights = list(weights)
        if len(weights) != len(params):
            raise InvalidArgumentError(f'layer "{self.name}" has {len(params)} weights but {len(weights)} values '
                                       "were given", "SetWeights")
        vals = []
        for p, w in zip(params, weights):
            t = constant(np.asarray(w), dtype=p.dtype)
            if tuple(t.shape) != tuple(p.shape):
                raise InvalidArgumentError(f"weight {p.name} has shape {tuple(p.shape)} but the value has shape "
                                           f"{tuple(t.shape)}", "SetWeights")
            vals.append(t)
        for p, t in zip(params, vals):
            p.assign(t)

    # -- calling ----------------------------------------------------------------------------
    def build(self, input_shape) -> None:
        """Create the layer's weights for inputs of ``input_shape`` (override; the default creates none)."""
        self.__dict__["built"] = True

    def call(self, inputs, *args, **kwargs):
        """The layer's computation (override); the base layer passes its input through."""
        return inputs

    def _convert(self, x):
        if type(x) is Tensor:
            if x._dtype is not self._dtype and x._dtype.is_floating and self._dtype.is_floating and self._autocast:
                return K.cast(x, self._dtype)
            if self._casts_ints and (x._dtype.is_integer or x._dtype.is_bool) and self._dtype.is_floating:
                return K.cast(x, self._dtype)
            return x
        if isinstance(x, Variable):
            return self._convert(x.read_value())
        if isinstance(x, (list, tuple)) and x and any(isinstance(e, (Tensor, Variable, np.ndarray)) for e in x) \
                and not all(isinstance(e, np.ndarray) and e.ndim == 0 for e in x):
            return type(x)(self._convert(e) for e in x)
        if isinstance(x, dict):
            return {k: self._convert(v) for k, v in x.items()}
        if x is None:
            return x
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and self._dtype.is_floating and self._autocast:
            return constant(x, dtype=self._dtype)
        if isinstance(x, Layer) or not isinstance(x, (list, tuple, np.ndarray, np.generic, int, float, bool, complex,
                                                      str, bytes)):
            what = f'{type(x).__name__} ("{x.name}")' if isinstance(x, Layer) else type(x).__name__
            raise TypeError(f'layer "{self.name}" ({type(self).__name__}) was called on an object of type {what}; '
                            "allowed: a tensor, a NumPy array or Python numbers, or a symbolic tensor from "
                            "tf.keras.Input (or a list or dict of them)"
                            + (": call the layer on the output of the Input, not on a layer"
                               if isinstance(x, Layer) else ""))
        return self._convert(convert_to_tensor(x))

    def _maybe_build(self, x):
        shape = _shape_of(x)
        self.__dict__["_in_shape"] = shape
        if _runner._trace.graph is not None:  # called on symbolic inputs: the weights are built eagerly
            with _leave_tracing():
                self.build(shape)
        else:
            self.build(shape)
        self.__dict__["built"] = True

    def __call__(self: _Calls[_O], *args: Any, **kwargs: Any) -> _O:
        if _KERAS_HISTORY and _has_keras_tensor(args, kwargs):  # a functional-API call on symbolic tensors
            from ..functional import symbolic_call

            return symbolic_call(self, args, kwargs)
        if args:
            x, rest = args[0], args[1:]
        else:
            x, rest = kwargs.pop("inputs"), ()
        # the mask: given as ``mask=``, else the one attached to the input (Keras's _keras_mask)
        explicit = False
        if kwargs and "mask" in kwargs:
            mask = kwargs.pop("mask")
            if mask is not None and type(mask) is not Tensor:
                mask = _as_mask(mask)
            explicit = mask is not None
        else:
            mask = _get_mask(x) if _MASKS else None
        if type(x) is not Tensor or x._dtype is not self._dtype:
            x = self._convert(x)
        if not self.built:
            self._maybe_build(x)
        spec = self.input_spec
        if spec is not None:
            if isinstance(spec, (list, tuple)):
                for i, (s, xi) in enumerate(zip(spec, x)):
                    if s is not None:
                        s.check(xi, self, i)
            else:
                spec.check(x, self)
        masks = mask is not None or self._makes_masks
        if masks:
            if self._takes_mask:
                kwargs["mask"] = mask
            elif mask is not None and not self.supports_masking and (explicit or not self._mask_transparent):
                # (a model whose call takes no mask still passes on the one its input carries: its layers read it)
                raise TypeError(f'layer "{self.name}" ({type(self).__name__}) does not support masking, but was '
                                f"passed an input mask; allowed: an unmasked input, or a layer that supports "
                                "masking (Dense, Activation, Dropout, BatchNormalization, LayerNormalization, LSTM, "
                                "GRU, GlobalAveragePooling1D, ...)")
        outer = _TRAINING.flag
        training = kwargs.pop("training", None) if kwargs else None
        if training is None:
            training = outer
        if self._takes_training:
            kwargs["training"] = training
        if self._losses:
            self._losses.clear()
        ac_prev = _AUTOCAST.dtype
        ac = self._dtype if self.__dict__.get("_vdtype") is not None else None
        if ac is not ac_prev:
            _AUTOCAST.dtype = ac  # a mixed layer reads its float variables in its compute dtype
        try:
            if training is outer:  # nothing to pass down that nested layers do not already see
                out = self.call(x, *rest, **kwargs)
            else:
                _TRAINING.flag = training
                try:
                    out = self.call(x, *rest, **kwargs)
                finally:
                    _TRAINING.flag = outer
        except InvalidArgumentError as e:
            _int_input_error(self, x, e)
            raise
        finally:
            if ac is not ac_prev:
                _AUTOCAST.dtype = ac_prev
        if masks and not self._mask_transparent:
            _attach(out, self.compute_mask(x, mask))
        if type(out) is Tensor:
            self.__dict__["_out_shape"] = out._shape
        return out

    def compute_mask(self, inputs, mask=None):
        """The mask of the output for ``inputs`` with ``mask`` (None: no mask).

        The default passes the input's mask on unchanged when the layer ``supports_masking``,
        gives None when ``call`` took the mask itself, and raises a TypeError for a mask the
        layer cannot use; layers that make or change masks
        (Embedding, Masking, LSTM, GRU) override it.

        >>> import tapeflow as tf
        >>> emb = tf.keras.layers.Embedding(10, 2, mask_zero=True)
        >>> ids = tf.constant([[3, 1, 0]])
        >>> emb.compute_mask(ids).numpy().tolist()
        [[True, True, False]]
        """
        if mask is None:
            return None
        if not self.supports_masking:
            if self._takes_mask:  # call used the mask; its output carries none unless the layer says so
                return None
            raise TypeError(f'layer "{self.name}" ({type(self).__name__}) does not support masking, but was passed '
                            "an input mask")
        return mask

    def compute_output_shape(self, input_shape):
        """The output shape for ``input_shape`` (``None`` for unknown sizes).

        Layers here compute it from shapes alone; a custom layer without an override is run
        once on zeros of that shape (unknown sizes taken as 1) to find out.
        """
        concrete = tuple(1 if d is None else int(d) for d in input_shape)
        out = self(K.zeros(concrete, self._dtype))
        shape = tuple(out.shape)
        return tuple(None if (i < len(input_shape) and input_shape[i] is None) else d for i, d in enumerate(shape))

    # -- config -----------------------------------------------------------------------------
    def get_config(self) -> dict:
        """The constructor arguments (``from_config`` builds an equal, unbuilt layer)."""
        pol = self.__dict__.get("_policy")
        cfg = {"name": self.name, "trainable": self.trainable,
               "dtype": pol.name if pol is not None and self.__dict__.get("_vdtype") is not None else self.dtype.name}
        if self._batch_input_shape is not None:
            cfg["batch_input_shape"] = self._batch_input_shape
        return cfg

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _int_input_error(layer, x, e):
    """An integer input that met float weights inside a layer that keeps integers: say which layer and the fix."""
    if type(x) is Tensor and (x._dtype.is_integer or x._dtype.is_bool) and "does not mix dtypes" in str(e):
        raise InvalidArgumentError(
            f'layer "{layer.name}" ({type(layer).__name__}) received {x._dtype.name} inputs, which it keeps as they '
            f"are, and its computation mixed them with floats ({e.message}); cast the inputs first "
            f"(tf.cast(x, \"float32\")), or set _casts_ints = True on the layer class to cast them in __call__",
            e.op or type(layer).__name__) from None


def _as_mask(m):
    if isinstance(m, (list, tuple)) and any(e is None or isinstance(e, (Tensor, Variable)) for e in m):
        return type(m)(None if e is None else _as_mask(e) for e in m)  # one mask per input
    if isinstance(m, Variable):
        return m.read_value()
    return m if type(m) is Tensor else convert_to_tensor(m)


def _attach(out, mask):
    """Attach ``mask`` to the output(s) of a layer call (a list of masks for a list of outputs)."""
    if mask is None:
        return
    if isinstance(out, (list, tuple)):
        masks = mask if isinstance(mask, (list, tuple)) else [mask] * len(out)
        for o, m in zip(out, masks):
            if isinstance(o, Tensor) and m is not None:
                _set_mask(o, m)
    elif isinstance(out, Tensor):
        _set_mask(out, mask[0] if isinstance(mask, (list, tuple)) else mask)


def _collect(v, own, subs, seen, seen_l):
    if isinstance(v, Variable):
        if id(v) not in seen:
            seen.add(id(v))
            own.append(v)
    elif isinstance(v, Layer):
        if id(v) not in seen_l:
            seen_l.add(id(v))
            subs.append(v)
    elif isinstance(v, (list, tuple)):
        for e in v:
            if not isinstance(e, (str, int, float)):
                _collect(e, own, subs, seen, seen_l)
    elif isinstance(v, dict):
        for e in v.values():
            _collect(e, own, subs, seen, seen_l)


def _add(lst, seen, v):
    if id(v) not in seen:
        seen.add(id(v))
        lst.append(v)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _as_shape(shape):
    if isinstance(shape, (list, tuple)) and all(d is None or isinstance(d, (int, np.integer)) for d in shape):
        return TensorShape(None if d is None else int(d) for d in shape)
    return shape


def _shape_of(x):
    if isinstance(x, (Tensor, Variable)):
        return TensorShape(x.shape)
    if isinstance(x, (list, tuple)):
        return type(x)(_shape_of(e) for e in x)
    if isinstance(x, dict):
        return {k: _shape_of(v) for k, v in x.items()}
    return None


class InputLayer(Layer):
    """The input of a Sequential model: declares the input shape and passes data through.

    >>> import tapeflow as tf
    >>> model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2)])
    >>> model.built, model.count_params()
    (True, 10)
    """

    def __init__(self, input_shape=None, batch_size=None, dtype=None, name=None, shape=None, batch_shape=None,
                 **kwargs) -> None:
        if shape is not None and input_shape is None:
            input_shape = shape
        for arg, v in (("input_shape", input_shape), ("batch_shape", batch_shape)):
            if v is not None and (not isinstance(v, (list, tuple)) or not all(d is None or _A._is_int(d) for d in v)):
                raise _A._type_error("InputLayer", arg, v, "a tuple of ints (None for unknown sizes)")
        if batch_shape is not None:
            kwargs["batch_input_shape"] = tuple(batch_shape)
        elif input_shape is not None:
            kwargs["batch_input_shape"] = (batch_size,) + tuple(input_shape)
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.built = True

    supports_masking = True
    _casts_ints = False  # passes data through as it is

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {"batch_shape": self._batch_input_shape, "dtype": self.dtype.name, "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None,
          optional=False, ragged=None) -> Any:
    """A symbolic input (no value, a shape and a dtype) for the functional API, or to declare a
    ``Sequential`` model's input shape: see ``tapeflow.nn.functional.Input``.

    >>> import tapeflow as tf
    >>> tf.keras.Input(shape=(28, 28, 1)).shape
    TensorShape([None, 28, 28, 1])
    """
    from ..functional import Input as _input

    return _input(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, batch_shape=batch_shape, name=name,
                  tensor=tensor, optional=optional, ragged=ragged)
