"""Variable: a mutable, named tensor-like that ops read as a tensor."""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, Iterator
from sys import getrefcount as _refs
from weakref import getweakrefcount as _weakrefs

from . import devices as _device
from . import dtypes as _dt
from .dispatch import hooks, kernel_failed
from .errors import InvalidArgumentError
from .ops import _ew
from .runner import _trace, primitive, run_tensors
from .tensor import Tensor, TensorShape, _Operators, convert_to_tensor, make, numpy_repr
from .everyday import _prefix as _scope_prefix

_uid = itertools.count()
_ADD, _SUB = _ew.BIN["add"], _ew.BIN["sub"]


class Variable(_Operators):  # (type checkers see the operators _bind_variable_operators binds)
    """A mutable tensor: ``assign``, ``assign_add``, ``assign_sub``, ``scatter_*``, ``read_value``.

    Usable wherever a tensor is: ops read its current value.  Trainable
    variables read inside a ``GradientTape`` are watched automatically.
    Every update is atomic per variable: each variable holds a (reentrant)
    lock that its read-modify-write updates take, so concurrent
    ``assign_add`` calls from several threads lose no increment.

    >>> import tapeflow as tf
    >>> v = tf.Variable([1.0, 2.0], name="v")
    >>> _ = v.assign_add([1.0, 1.0])
    >>> v.numpy().tolist(), (v * 2).numpy().tolist()
    ([2.0, 3.0], [4.0, 6.0])
    """

    __array_priority__ = 100
    __hash__ = object.__hash__  # variables are hashable (by identity), unlike tensors
    #: True while an update writes into the value's buffer in place (the kernel runs without the GIL): a read
    #: that took the value meanwhile waits for the update to finish (``_read``)
    _writing = False
    #: the value tensor the variable made itself (updates may write into it) and its buffer's reference counts
    _mine = None
    _mine_refs = (0, 0)

    def __init__(self, initial_value: Any, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 shape: Any = None) -> None:
        graph = _trace.graph if hooks.tracing else None
        if graph is not None:
            if not getattr(graph, "allow_variables", True):
                raise ValueError(f"tf.function '{graph.name}' creates a tf.Variable on a call after its first "
                                 f"trace; tf.function only supports singleton tf.Variables created on the first "
                                 f"call. Make sure the tf.Variable is only created once or created outside "
                                 f"tf.function")
            from .function import init_scope, lift

            if callable(initial_value):
                with init_scope():
                    initial_value = initial_value()
            if isinstance(initial_value, Tensor) and initial_value._h is None:
                initial_value = lift(initial_value, graph)
            with init_scope():
                self.__init__(initial_value, trainable, name, dtype, shape)
            graph.variables.append(self)
            return
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value) if dtype is None or isinstance(initial_value, Tensor) \
            else convert_to_tensor(initial_value, dtype)
        if dtype is not None and value._dtype is not _dt.as_dtype(dtype):
            from .ops import cast

            value = cast(value, dtype)
        from .dispatch import on_device, run_device

        value = on_device(value, run_device(value))
        self._value = value
        #: taken by every update; reentrant so that a compound update (an optimizer step) can hold it
        self._lock = threading.RLock()
        self._be = value._dev.backend  # the value stays on this device (assignments move values here)
        self.trainable = bool(trainable)
        self._id = next(_uid)
        self._name = name or "Variable"
        self._handle_name = f"{_scope_prefix()}{self._name}:0"  # tf.name_scope prefixes v.name

    # -- tensor protocol ----------------------------------------------------
    def _as_tensor(self) -> Tensor:
        if hooks.tracing and _trace.graph is not None:
            return _traced_read(self, _trace.graph)
        t = self._value
        if self._writing:  # an update in place is running on another thread: its result, complete
            with self._lock:
                pass
        return t

    def _read(self) -> Tensor:
        """The current value, eagerly (after an update in place that another thread is running)."""
        t = self._value
        if self._writing:
            with self._lock:
                pass
        return t

    def _tape_value(self) -> Tensor:
        """The tensor a tape watches for this variable now (while tracing: the graph's latest read)."""
        if hooks.tracing and _trace.graph is not None:
            return _traced_read(self, _trace.graph)
        return self._read()

    @property
    def name(self) -> str:
        return self._handle_name

    @property
    def shape(self) -> TensorShape:
        return self._value.shape

    @property
    def dtype(self) -> _dt.DType:
        return self._value._dtype

    @property
    def device(self) -> str:
        return self._value.device

    @property
    def ndim(self) -> int:
        return len(self._value._shape)

    def numpy(self) -> Any:
        return self._read().numpy()

    def __array__(self, dtype=None, copy=None):
        return self._read().__array__(dtype, copy)

    def value(self) -> Tensor:
        return self.read_value()

    def read_value(self) -> Tensor:
        """The current value as a tensor (a read the tape can see)."""
        if hooks.tracing and _trace.graph is not None:
            t = _traced_read(self, _trace.graph)
            if hooks.variable_read is not None:
                hooks.variable_read(self)
            return t
        if hooks.variable_read is not None:
            hooks.variable_read(self)
        return self._read()

    # -- mutation -------------------------------------------------------------
    def _coerce(self, value, op):
        t = value if type(value) is Tensor else convert_to_tensor(value, self._value._dtype) \
            if not isinstance(value, Variable) else value._value
        if t._dtype is not self._value._dtype:
            raise InvalidArgumentError(f"cannot assign a {t._dtype.name} value to a {self._value._dtype.name} "
                                       f"variable {self._name!r}", op)
        if t._shape != self._value._shape:
            raise InvalidArgumentError(f"cannot assign a value of shape {tuple(t._shape)} to variable "
                                       f"{self._name!r} of shape {tuple(self._value._shape)}", op)
        if t._dev is not self._value._dev:
            t = t.to(self._value._dev)
        return t

    # Assignments are not differentiable: the new value is a fresh tensor no tape
    # has seen, so gradients never flow through an assignment (as in TensorFlow).

    # ``use_locking`` is TensorFlow's hint; here every update takes the variable's lock
    # whatever it says (an unlocked read-modify-write can lose concurrent updates, and an
    # uncontended lock costs ~0.1 us), so ``use_locking=True`` is honoured and ``False`` is safe.

    def assign(self, value: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True) -> Any:
        """Set the value (same shape and dtype), atomically.  Returns the variable.

        >>> import tapeflow as tf
        >>> v = tf.Variable([1, 2])
        >>> v.assign([3, 4], use_locking=True).numpy().tolist()
        [3, 4]
        """
        if hooks.tracing and _trace.graph is not None:
            return _traced_update(self, "assign", (value,), {}, read_value)
        x = self._value
        t = value if type(value) is Tensor and value._dtype is x._dtype and value._shape == x._shape and \
            value._dev is x._dev else self._coerce(value, "AssignVariableOp")
        with self._lock:
            # a new Tensor object sharing the (immutable) buffer: tensors read before keep their values
            self._value = make(t._h, t._arr, t._shape, t._dtype, t._dev, t._size)
        return self if read_value else None

    def assign_add(self, delta: Any, use_locking: Any = None, name: str | None = None,
                   read_value: bool = True) -> Any:
        """``self = self + delta``, atomically (no concurrent update is lost).  Returns the variable."""
        if hooks.tracing and _trace.graph is not None:
            return _traced_update(self, "assign_add", (delta,), {}, read_value)
        x = self._value
        t = delta if type(delta) is Tensor and delta._dtype is x._dtype and delta._shape == x._shape and \
            delta._dev is x._dev else self._coerce(delta, "AssignAddVariableOp")
        del x  # (a reference held here would keep the update from writing in place)
        with self._lock:
            self._update_flat(_ADD, t, "AssignAddVariableOp")
        return self if read_value else None

    def assign_sub(self, delta: Any, use_locking: Any = None, name: str | None = None,
                   read_value: bool = True) -> Any:
        """``self = self - delta``, atomically.  Returns the variable."""
        if hooks.tracing and _trace.graph is not None:
            return _traced_update(self, "assign_sub", (delta,), {}, read_value)
        x = self._value
        t = delta if type(delta) is Tensor and delta._dtype is x._dtype and delta._shape == x._shape and \
            delta._dev is x._dev else self._coerce(delta, "AssignSubVariableOp")
        del x  # (a reference held here would keep the update from writing in place)
        with self._lock:
            self._update_flat(_SUB, t, "AssignSubVariableOp")
        return self if read_value else None

    def _owns_value(self) -> bool:
        """Whether an update may write into the value's buffer: the value is a buffer the variable made
        itself (an earlier update's: ``_mark_own``), on the CPU, and nothing but the variable holds that
        tensor or its memory (no tensor read before and kept, no NumPy view, no tape, no other variable or
        tensor sharing the buffer): the reference counts are those the variable saw when it made it.
        Otherwise an update makes a new buffer, so every tensor read before keeps its value (copy on write,
        as TensorFlow's variables).  Called under the lock."""
        # the attribute, ``_mine`` and getrefcount's argument
        if self._mine is None or self._value is not self._mine or _refs(self._value) != 3:
            return False
        t = self._value
        return (_refs(t._h), _refs(t._arr)) == self._mine_refs and not _weakrefs(t)

    def _mark_own(self):
        """The value is a buffer this variable just made and nothing else holds: note it and its reference
        counts (``_owns_value`` compares them)."""
        self._mine = None
        if self._be.name == "cpu":
            self._mine = t = self._value
            self._mine_refs = (_refs(t._h), _refs(t._arr))

    def _own_buffer(self):
        """The handle of the value's buffer for an update written in place (a fused optimizer step): the
        variable's own, after a private copy when anything else holds the value (copy on write).  CPU
        variables only; called under the lock, and sets ``_writing``: the caller clears it once the kernel
        has run."""
        self._writing = True
        if not self._owns_value():
            x = self._value
            h, host = self._be.from_numpy(x._arr)
            self._value = make(h, host, x._shape, x._dtype, x._dev, x._size)
            del h, host, x
            self._mark_own()
        return self._value._h

    def _update_flat(self, code, t, op):
        """``self = self <code> t`` (same shape, dtype and device), in place when the variable owns its buffer."""
        x = self._value
        dt = x._dtype
        if dt.is_half:
            self._value = _ew.raw_binary(code, x, t, op)
            return
        be = self._be
        del x
        self._writing = True  # before the ownership check: a read from now on waits for the kernel
        try:
            if self._owns_value():
                x = self._value
                st = be.binary_flat(code, dt.code, x._h, 0, t._h, 0, x._h, x._size)
                if st:
                    kernel_failed(st, "binary", op)
                return
        finally:
            self._writing = False
        x = self._value
        h, host = be.alloc(x._shape, dt.np)
        st = be.binary_flat(code, dt.code, x._h, 0, t._h, 0, h, x._size)
        if st:
            kernel_failed(st, "binary", op)
        self._value = make(h, host, x._shape, dt, x._dev, x._size)
        del h, host, x
        self._mark_own()

    # -- sparse updates (atomic like the dense ones) ------------------------------------------
    def _scatter_nd(self, indices, updates, mode, op):
        from .dispatch import to_tensor

        if hooks.tracing and _trace.graph is not None:
            return _traced_update(self, "_scatter_nd", (indices, updates), {"mode": mode, "op": op}, True)
        from .ops import array_ops

        u = updates if type(updates) is Tensor else to_tensor(updates, op, self._value._dtype)
        allowed = _dt.ALL if mode == "update" else _dt.NUMERIC
        if self._value._dtype not in allowed:
            raise InvalidArgumentError(f"tensor has dtype {self._value._dtype.name}; allowed: "
                                       f"{', '.join(d.name for d in allowed)}", op)
        if u._dtype is not self._value._dtype:
            raise InvalidArgumentError(f"updates has dtype {u._dtype.name} but the variable has "
                                       f"{self._value._dtype.name}; allowed: the same dtype", op)
        with self._lock:
            x = self._value
            if u._dev is not x._dev:
                u = u.to(x._dev)
            if mode == "sub":  # x - u at the indices: add -u (the update is unrecorded, like assign_sub)
                u = _ew.raw_binary(_SUB, array_ops._zeros(u._shape, u._dtype, u._dev), u, op)
            with _device.device(x._dev):
                out = array_ops._tensor_scatter(x, indices, u, 0 if mode == "update" else 1, op, allowed)[3]
            self._value = out
        return self

    def scatter_nd_update(self, indices, updates, name=None):
        """Replace the entries at the index tuples ``indices`` (last axis) by ``updates``, atomically.

        >>> import tapeflow as tf
        >>> v = tf.Variable([1, 2, 3])
        >>> v.scatter_nd_update([[0], [2]], [9, 7]).numpy().tolist()
        [9, 2, 7]
        """
        return self._scatter_nd(indices, updates, "update", "ResourceScatterNdUpdate")

    def scatter_nd_add(self, indices, updates, name=None):
        """Add ``updates`` at the index tuples ``indices`` (repeated indices add up), atomically.

        >>> import tapeflow as tf
        >>> v = tf.Variable([1.0, 2.0, 3.0])
        >>> v.scatter_nd_add([[0], [0]], [5.0, 5.0]).numpy().tolist()
        [11.0, 2.0, 3.0]
        """
        return self._scatter_nd(indices, updates, "add", "ResourceScatterNdAdd")

    def scatter_nd_sub(self, indices, updates, name=None):
        """Subtract ``updates`` at the index tuples ``indices``, atomically.

        >>> import tapeflow as tf
        >>> v = tf.Variable([1.0, 2.0, 3.0])
        >>> v.scatter_nd_sub([[2]], [1.0]).numpy().tolist()
        [1.0, 2.0, 2.0]
        """
        return self._scatter_nd(indices, updates, "sub", "ResourceScatterNdSub")

    def _scatter_slices(self, sparse_delta, mode, op):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta must be a tf.IndexedSlices(values, indices), got "
                            f"{type(sparse_delta).__name__} [Op:{op}]")
        from .ops import array_ops

        idx = array_ops.expand_dims(sparse_delta.indices, -1)
        return self._scatter_nd(idx, sparse_delta.values, mode, op)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Replace the rows ``sparse_delta.indices`` (axis 0) by ``sparse_delta.values``, atomically.

        >>> import tapeflow as tf
        >>> v = tf.Variable([[1, 1], [2, 2], [3, 3]])
        >>> v.scatter_update(tf.IndexedSlices(tf.constant([[9, 9]]), tf.constant([1]))).numpy().tolist()
        [[1, 1], [9, 9], [3, 3]]
        """
        return self._scatter_slices(sparse_delta, "update", "ResourceScatterUpdate")

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Add ``sparse_delta.values`` to the rows ``sparse_delta.indices`` (axis 0), atomically.

        >>> import tapeflow as tf
        >>> v = tf.Variable([1.0, 2.0, 3.0])
        >>> v.scatter_add(tf.IndexedSlices(tf.constant([5.0, 5.0]), tf.constant([0, 0]))).numpy().tolist()
        [11.0, 2.0, 3.0]
        """
        return self._scatter_slices(sparse_delta, "add", "ResourceScatterAdd")

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        """Subtract ``sparse_delta.values`` from the rows ``sparse_delta.indices`` (axis 0), atomically.

        >>> import tapeflow as tf
        >>> v = tf.Variable([1.0, 2.0, 3.0])
        >>> v.scatter_sub(tf.IndexedSlices(tf.constant([1.0]), tf.constant([2]))).numpy().tolist()
        [1.0, 2.0, 2.0]
        """
        return self._scatter_slices(sparse_delta, "sub", "ResourceScatterSub")

    # -- Python protocol -----------------------------------------------------
    def __repr__(self):
        return (f"<tf.Variable '{self._handle_name}' shape={tuple(self._value._shape)} "
                f"dtype={self._value._dtype.name}, numpy={numpy_repr(self._value._host())}>")

    def __str__(self):
        return self.__repr__()

    def __bool__(self) -> bool:
        return bool(self.read_value())

    def __float__(self) -> float:
        return float(self.read_value())

    def __int__(self) -> int:
        return int(self.read_value())

    def __index__(self) -> int:
        return self.read_value().__index__()

    def __format__(self, spec: str) -> str:
        return format(self.read_value(), spec)

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self.read_value())

    def __getitem__(self, key: Any) -> Tensor:
        """The slice ``self[key]`` as a tensor (read now, as every read) that can also be assigned:
        ``v[0].assign(x)``, ``v[:, 1].assign_add(d)``, ``v[1:3].assign_sub(d)`` update that slice of the
        variable atomically (the variable's lock), also inside ``tf.function``; ``x`` broadcasts to the slice.

        >>> import tapeflow as tf
        >>> v = tf.Variable([[1, 2, 3], [4, 5, 6]])
        >>> _ = v[:, 1].assign([0, 0])
        >>> _ = v[1, ::2].assign_add(10)
        >>> v.numpy().tolist(), v[0].numpy().tolist()
        ([[1, 0, 3], [14, 0, 16]], [1, 0, 3])
        """
        x = self.read_value()
        t = x[key]   # recorded as any slice of a read: ops on it differentiate to the variable
        if t is x:   # an identity key gives the read itself: the slice gets a tensor of its own
            from .ops import identity

            t = identity(x)
        _SLICES[id(t)] = (weakref.ref(t, lambda _, i=id(t): _SLICES.pop(i, None)), self, key)
        return t

    def _assign_slice(self, value, *key_tensors, key, mode):
        """``self[key] = value`` (mode "assign"), ``+= value`` ("add") or ``-= value`` ("sub"), atomically.
        ``key_tensors`` fill the tensor places of ``key`` (a graph's update passes them as inputs)."""
        op = "ResourceStridedSliceAssign"
        if hooks.tracing and _trace.graph is not None:
            template, tensors = _key_template(key)
            return _traced_update(self, "_assign_slice", (value, *tensors), {"key": template, "mode": mode}, True)
        key = _key_fill(key, key_tensors)
        from .dispatch import to_tensor
        from .ops import broadcast_to, cast, index_ops, manip_ops, range_, reshape, slice_ops

        with self._lock, hooks.paused(), _device.device(self._value._dev):
            x = self._value
            # the flat positions of the slice's entries, as the slice of a range
            sel = slice_ops.getitem(reshape(range_(x._size, dtype=_dt.int64), x._shape), key)
            u = value if isinstance(value, Tensor) else to_tensor(value, op, x._dtype)
            if u._dtype is not x._dtype:
                if isinstance(value, Tensor):
                    raise InvalidArgumentError(f"cannot assign a {u._dtype.name} value to a slice of the "
                                               f"{x._dtype.name} variable {self._name!r}", op)
                u = cast(u, x._dtype)
            us, ss = tuple(u._shape), tuple(sel._shape)
            if len(us) > len(ss) or any(a != 1 and a != b for a, b in zip(us[::-1], ss[::-1])):
                raise InvalidArgumentError(f"Cannot broadcast input shape {list(us)} into final shape {list(ss)} "
                                           f"(the slice {key!r} of variable {self._name!r})", op)
            flat, idx = reshape(x, [-1]), reshape(sel, [-1, 1])
            upd = reshape(broadcast_to(u, ss), [-1])
            if mode == "assign":
                new = index_ops.tensor_scatter_nd_update(flat, idx, upd)
            elif mode == "add":
                new = index_ops.tensor_scatter_nd_add(flat, idx, upd)
            else:
                new = manip_ops.tensor_scatter_nd_sub(flat, idx, upd)
            self._value = reshape(new, x._shape)
        return self

    def __deepcopy__(self, memo):
        return Variable(self._value, trainable=self.trainable, name=self._name)


# ---- variables in graph functions ------------------------------------------------------------------

@primitive("read_variable", "ReadVariableOp", infer=lambda *, var: (var._value._shape, var._value._dtype),
           internal="a variable read in a graph (gradients go to the variable)")
def _READ(dev, *, var):
    if hooks.variable_read is not None:
        hooks.variable_read(var)
    return var._value


def _update_infer(*values, var, method, kwargs):
    return var._value._shape, var._value._dtype


@primitive("variable_update", "AssignVariableOp", infer=_update_infer, stateful=True,
           internal="a variable update in a graph (Variable.assign* traced)")
def _UPDATE(dev, *values, var, method, kwargs):
    getattr(var, method)(*values, **kwargs)
    return var._value


def _traced_read(var, graph) -> Tensor:
    t = graph.reads.get(var)
    if t is None:
        # the read is where the variable lives (TensorFlow colocates ReadVariableOp with the resource), not on
        # the default device: its value is there, and its users then run there too, as in eager mode
        stack = _device._scope.stack
        stack.append(var._value._dev)
        try:
            t = graph.reads[var] = run_tensors(_READ, (), {"var": var})
        finally:
            stack.pop()
    return t


def _traced_update(var, method, args, kwargs, read_value):
    """A variable update inside a graph function: a node that updates the variable each time the graph
    runs, in program order (later reads in the graph see it)."""
    from .dispatch import to_tensor

    graph = _trace.graph
    vals = []
    for a in args:
        if isinstance(a, IndexedSlices):
            raise TypeError(f"{method} of a tf.IndexedSlices inside a tf.function is not supported: pass "
                            f"tf.scatter_nd_* the indices and values as tensors")
        t = a if type(a) is Tensor else to_tensor(a, "AssignVariableOp", var._value._dtype
                                                  if not (isinstance(a, Tensor) or hasattr(a, "_as_tensor")) else None)
        vals.append(t)
    if method.startswith("assign"):
        t = vals[0]
        if t._dtype is not var._value._dtype:
            raise InvalidArgumentError(f"cannot assign a {t._dtype.name} value to a {var._value._dtype.name} "
                                       f"variable {var._name!r}", "AssignVariableOp")
        if len(t._shape) != len(var._value._shape) or any(
                a is not None and a != b for a, b in zip(t._shape, var._value._shape)):
            raise InvalidArgumentError(f"cannot assign a value of shape {tuple(t._shape)} to variable "
                                       f"{var._name!r} of shape {tuple(var._value._shape)}", "AssignVariableOp")
    graph.reads.pop(var, None)
    run_tensors(_UPDATE, tuple(vals), {"var": var, "method": method, "kwargs": kwargs})
    return var if read_value else None


# ---- slices of variables: v[key] is a tensor that remembers (variable, key) and can be assigned -------------

_SLICES: dict = {}   # id(the tensor v[key] gave) -> (weak reference to it, variable, key)


_SLICE_METHODS = {"assign": "assign", "assign_add": "add", "assign_sub": "sub"}


def _slice_getattr(self, name):
    """``Tensor.__getattr__`` (reached only for names a tensor does not have): a tensor made by ``v[key]``
    for a Variable ``v`` has ``assign``/``assign_add``/``assign_sub``, which update that slice of ``v``
    atomically (``value`` broadcast to the slice) and return ``v``, as TensorFlow's sliced assignment;
    ``read_value`` gives the tensor itself.  Other tensors have none of these.

    >>> import tapeflow as tf
    >>> v = tf.Variable([1.0, 2.0, 3.0])
    >>> v[1:].assign_sub([1.0, 1.0]).numpy().tolist()
    [1.0, 1.0, 2.0]
    >>> hasattr(tf.constant([1.0]), "assign")
    False
    """
    if name in _SLICE_METHODS or name == "read_value":
        entry = _SLICES.get(id(self))
        if entry is not None and entry[0]() is self:
            if name == "read_value":
                return lambda: self
            var, key, mode = entry[1], entry[2], _SLICE_METHODS[name]

            def update(value, use_locking=None, name=None, read_value=True):
                out = var._assign_slice(value, key=key, mode=mode)
                return out if read_value else None

            update.__name__ = name
            return update
    raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")


Tensor.__getattr__ = _slice_getattr


class _KeyTensor:
    """A placeholder for the i-th tensor of a slice key in a graph's update (the tensor is an input)."""

    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i

    def __repr__(self):
        return f"<key tensor {self.i}>"


def _key_template(key):
    """(key with its tensors replaced by placeholders, the tensors)."""
    tensors = []

    def sub(k):
        if isinstance(k, Tensor) or hasattr(k, "_as_tensor"):
            tensors.append(k)
            return _KeyTensor(len(tensors) - 1)
        return k

    return (tuple(sub(k) for k in key) if isinstance(key, tuple) else sub(key)), tuple(tensors)


def _key_fill(key, tensors):
    def fill(k):
        return tensors[k.i] if isinstance(k, _KeyTensor) else k

    return tuple(fill(k) for k in key) if isinstance(key, tuple) else fill(key)


class IndexedSlices:
    """Rows of a dense tensor: ``values[i]`` is row ``indices[i]`` (axis 0) of a tensor of ``dense_shape``.

    What ``Variable.scatter_add``/``scatter_sub``/``scatter_update`` take, as in TensorFlow.

    >>> import tapeflow as tf
    >>> s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([3]), dense_shape=[4, 2])
    >>> s.indices.numpy().tolist(), s.values.shape, s.dense_shape
    ([3], TensorShape([1, 2]), (4, 2))
    """

    __slots__ = ("dense_shape", "indices", "values")

    def __init__(self, values, indices, dense_shape=None):
        from .dispatch import shape_arg, to_tensor

        self.values = to_tensor(values, "IndexedSlices")
        self.indices = to_tensor(indices, "IndexedSlices")
        if self.indices._dtype not in (_dt.int32, _dt.int64) or len(self.indices._shape) != 1:
            raise InvalidArgumentError(f"indices has dtype {self.indices._dtype.name} and shape "
                                       f"{tuple(self.indices._shape)}; allowed: a 1-D int32 or int64 tensor",
                                       "IndexedSlices")
        if not self.values._shape or self.values._shape[0] != self.indices._shape[0]:
            raise InvalidArgumentError(f"values has shape {tuple(self.values._shape)} for "
                                       f"{self.indices._shape[0]} indices; allowed: one row per index",
                                       "IndexedSlices")
        self.dense_shape = None if dense_shape is None else shape_arg(dense_shape, "IndexedSlices", "dense_shape")

    @property
    def dtype(self):
        return self.values._dtype

    def __repr__(self):
        return (f"IndexedSlices(indices={self.indices.numpy().tolist()}, values shape "
                f"{tuple(self.values._shape)}, dense_shape={self.dense_shape})")


def _bind_variable_operators():
    names = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
             "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
             "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__",
             "__and__", "__or__", "__xor__", "__invert__", "__eq__", "__ne__"]
    for n in names:
        def method(self, *args, _n=n):
            if _n in ("__eq__", "__ne__") and isinstance(args[0], Variable) is False and args[0] is None:
                return _n == "__ne__"
            return getattr(self.read_value(), _n)(*args)

        method.__name__ = n
        setattr(Variable, n, method)


_bind_variable_operators()
