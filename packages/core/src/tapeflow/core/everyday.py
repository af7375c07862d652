"""The everyday top-level ``tf.*`` utilities: higher-order functions, scopes, host calls and small helpers.

``tf.map_fn``/``tf.scan``/``tf.foldl``/``tf.foldr`` are a ``tf.while_loop`` over ``tf.TensorArray``\\ s: eagerly
a Python loop (a tape records each iteration's ops), inside ``tf.function`` one loop node.  Their
``parallel_iterations`` and ``swap_memory`` arguments are scheduling hints of TensorFlow's graph runtime that
never change a result; tapeflow runs iterations in order and keeps every value in memory, so it checks and then
needs no hint (as TensorFlow's own eager mode ignores them).

``tf.py_function``/``tf.numpy_function`` call Python: eagerly at once; inside ``tf.function`` they make a
stateful host node that calls the function each time the graph runs.  Graphs run their stateful ops (variable
updates, prints, host calls, asserts) in program order, which is TensorFlow 2's automatic control
dependencies: ``tf.control_dependencies``, ``tf.group`` and ``tf.no_op`` exist for programs written for
TensorFlow and order nothing that is not already ordered.

>>> import tapeflow as tf
>>> tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3])).numpy().tolist()
[1, 4, 9]
>>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3])).numpy().tolist()
[1, 3, 6]
"""
from __future__ import annotations

import logging
import sys
import threading

import numpy as np

from . import dtypes as _dt
from . import nest
from .dispatch import hooks
from .errors import InvalidArgumentError
from .runner import current_graph, primitive, run_tensors
from .tensor import Tensor, TensorShape, convert_to_tensor

__all__ = ["map_fn", "scan", "foldl", "foldr", "name_scope", "get_current_name_scope", "executing_eagerly",
           "inside_function", "is_tensor", "get_static_value", "py_function", "numpy_function", "no_op", "group",
           "control_dependencies", "Assert", "get_logger"]


def _ops():
    from . import ops

    return ops


def _is_variable(x) -> bool:
    return hasattr(x, "_as_tensor") and hasattr(x, "assign")


# ---- execution state --------------------------------------------------------------------------

def executing_eagerly() -> bool:
    """False while a ``tf.function`` is being traced (outside ``tf.init_scope``), True otherwise.

    >>> import tapeflow as tf
    >>> tf.executing_eagerly()
    True
    >>> @tf.function
    ... def f():
    ...     return tf.constant(tf.executing_eagerly())
    >>> bool(f())
    False
    """
    return current_graph() is None


def inside_function() -> bool:
    """True while a ``tf.function`` is being traced (outside ``tf.init_scope``), as TensorFlow's.

    >>> import tapeflow as tf
    >>> tf.inside_function()
    False
    """
    return current_graph() is not None


def is_tensor(x) -> bool:
    """Whether ``x`` is a tensor-like tapeflow value: a Tensor, a Variable, a RaggedTensor or a SparseTensor
    (not a NumPy array or a Python number), as ``tf.is_tensor``.

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> tf.is_tensor(tf.constant(1.0)), tf.is_tensor(tf.Variable(1.0)), tf.is_tensor(np.ones(2))
    (True, True, False)
    """
    if isinstance(x, Tensor) or _is_variable(x):
        return True
    for mod, cls in (("tapeflow.core.ragged", "RaggedTensor"), ("tapeflow.core.sparse", "SparseTensor")):
        m = sys.modules.get(mod)
        if m is not None and isinstance(x, getattr(m, cls)):
            return True
    return False


def _concrete(t: Tensor) -> bool:
    return t._h is not None or t._arr is not None


def get_static_value(tensor, partial=False):
    """The value of ``tensor`` known without running a graph: a NumPy array for a concrete tensor, None for a
    symbolic one (or a variable, whose value can change), and a non-tensor unchanged, as TensorFlow's.
    ``partial=True`` changes nothing: tapeflow does not fold partly known values of symbolic tensors.

    >>> import tapeflow as tf
    >>> tf.get_static_value(tf.constant([1, 2])).tolist(), tf.get_static_value(3)
    ([1, 2], 3)
    """
    if not isinstance(partial, bool):
        raise TypeError(f"tf.get_static_value: partial must be a bool, got {partial!r}")
    if isinstance(tensor, Tensor):
        return tensor.numpy() if _concrete(tensor) else None
    if is_tensor(tensor):
        return None
    return tensor


# ---- name scopes ------------------------------------------------------------------------------

class _Scopes(threading.local):
    stack: tuple = ()


_SCOPES = _Scopes()


def get_current_name_scope() -> str:
    """The current ``tf.name_scope`` path (``""`` at the top), as TensorFlow's.

    >>> import tapeflow as tf
    >>> with tf.name_scope("outer"):
    ...     with tf.name_scope("inner"):
    ...         tf.get_current_name_scope()
    'outer/inner'
    """
    return "/".join(_SCOPES.stack)


def _prefix() -> str:
    """What ``tf.Variable`` puts before a name: ``"outer/inner/"`` inside scopes, ``""`` outside."""
    return "".join(s + "/" for s in _SCOPES.stack)


class name_scope:  # noqa: N801  (TensorFlow's name)
    """A context that prefixes the names of the variables created inside with ``name/`` (``with`` gives the
    full scope, ending in ``/``).  A name ending in ``/`` is an absolute scope, ``""`` the top.  Op names are
    informational in tapeflow; variable names (``v.name``) carry the scope, as TensorFlow's.

    >>> import tapeflow as tf
    >>> with tf.name_scope("layer") as scope:
    ...     v = tf.Variable(1.0, name="w")
    >>> scope, v.name
    ('layer/', 'layer/w:0')
    """

    def __init__(self, name):
        if not isinstance(name, str):
            raise ValueError(f"name for name_scope must be a string, got {type(name).__name__} {name!r:.60}")
        parts = name.rstrip("/")
        for p in parts.split("/") if parts else ():
            if not p or not (p[0].isalnum() or p[0] in "._") or not all(c.isalnum() or c in "._-" for c in p):
                raise ValueError(f"tf.name_scope: {name!r} is not a valid scope name: letters, digits, '_', '.', "
                                 f"'-' and '/' separators, starting with a letter, digit, '.' or '_'")
        self._name = name
        self._saved = None

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        self._saved = _SCOPES.stack
        name = self._name
        if name == "" or name.endswith("/"):
            new = tuple(p for p in name.rstrip("/").split("/") if p)
        else:
            new = self._saved + tuple(name.split("/"))
        _SCOPES.stack = new
        return "".join(s + "/" for s in new)

    def __exit__(self, *exc):
        _SCOPES.stack = self._saved
        return False


# ---- map_fn / scan / foldl / foldr ------------------------------------------------------------

def _check_hints(what, parallel_iterations, swap_memory, back_prop):
    if parallel_iterations is not None and (isinstance(parallel_iterations, bool)
                                            or not isinstance(parallel_iterations, int) or parallel_iterations < 1):
        raise ValueError(f"{what}: parallel_iterations must be a positive int or None, got {parallel_iterations!r}")
    for n, v in (("swap_memory", swap_memory), ("back_prop", back_prop)):
        if not isinstance(v, bool):
            raise TypeError(f"{what}: {n} must be a bool, got {v!r}")


def _elems(what, elems):
    """Flat tensors of ``elems`` and their common first dimension (an int, or a scalar tensor in a graph)."""
    if elems is None:
        raise ValueError(f"{what}: elems must be a tensor or a (nested) structure of tensors, got None")
    flat = [x.read_value() if _is_variable(x) else x if isinstance(x, Tensor) else convert_to_tensor(x)
            for x in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one tensor")
    for x in flat:
        if not x._shape:
            raise ValueError(f"{what}: elements in elems must be 1+ dimensional; got a scalar {x._dtype.name} tensor")
    dims = {x._shape[0] for x in flat} - {None}
    if len(dims) > 1:
        raise ValueError(f"{what}: all tensors in elems must have the same first dimension, got "
                         f"{[tuple(x._shape) for x in flat]}")
    n = dims.pop() if dims else None
    if n is None:
        n = _ops().shape(flat[0])[0]
    return flat, n


def _row(flat, structure, i):
    o = _ops()
    return nest.pack_sequence_as(structure, [o.gather(x, i) for x in flat])


def _signature(what, sig, default_structure, default_dtypes):
    """(structure, [(dtype, shape or None)]) of the outputs from fn_output_signature/dtype."""
    if sig is None:
        return default_structure, [(d, None) for d in default_dtypes]
    from .tensor_spec import TensorSpec

    leaves = nest.flatten(sig)
    out = []
    for s in leaves:
        if isinstance(s, TensorSpec):
            out.append((s.dtype, tuple(s.shape)))
        else:
            try:
                out.append((_dt.as_dtype(s), None))
            except (TypeError, ValueError):
                raise TypeError(f"{what}: fn_output_signature must be a DType, a tf.TensorSpec or a structure of "
                                f"them, got {s!r:.80}") from None
    return sig, out


def _check_out(what, structure, specs, out):
    try:
        nest.assert_same_structure(structure, out, check_types=False)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what}: the structure of fn's output does not match fn_output_signature (or elems, "
                         f"when no signature is given); {e}") from None
    flat = []
    for x, (dt, shape) in zip(nest.flatten(out), specs):
        t = x.read_value() if _is_variable(x) else x if isinstance(x, Tensor) else convert_to_tensor(x, dt)
        if t._dtype is not dt:
            raise InvalidArgumentError(f"TensorArray dtype is {dt.name} but Op is trying to write dtype "
                                       f"{t._dtype.name}; give fn_output_signature when fn changes the dtype",
                                       "TensorArrayWriteV3")
        if shape is not None and not TensorShape(shape).is_compatible_with(TensorShape(t._shape)):
            raise InvalidArgumentError(f"fn returned shape {tuple(t._shape)}, not compatible with the signature's "
                                       f"{shape}", "TensorArrayWriteV3")
        flat.append(t)
    return flat


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """``fn`` applied to each slice ``elems[i]`` along the first axis, the results stacked, as ``tf.map_fn``.

    ``elems`` may be a structure of tensors (``fn`` gets the same structure of slices).  Outputs have the
    structure and dtypes of ``elems`` unless ``fn_output_signature`` (or the older ``dtype``) gives them: a
    DType, a ``tf.TensorSpec`` or a structure of them.  ``back_prop=False`` stops gradients at the result.
    ``parallel_iterations``/``swap_memory`` are scheduling hints that change no result (see the module).

    >>> import tapeflow as tf
    >>> tf.map_fn(lambda p: p[0] * p[1], (tf.constant([1, 2]), tf.constant([3, 4])),
    ...           fn_output_signature=tf.int32).numpy().tolist()
    [3, 8]
    """
    what = "tf.map_fn"
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, got {type(fn).__name__}")
    if dtype is not None and fn_output_signature is not None:
        raise ValueError(f"{what}: give fn_output_signature or dtype (deprecated), not both")
    if not isinstance(infer_shape, bool):
        raise TypeError(f"{what}: infer_shape must be a bool, got {infer_shape!r}")
    _check_hints(what, parallel_iterations, swap_memory, back_prop)
    flat, n = _elems(what, elems)
    structure, specs = _signature(what, fn_output_signature if dtype is None else dtype, elems,
                                  [x._dtype for x in flat])
    from .control_flow import while_loop
    from .tensor_array import TensorArray

    tas = [TensorArray(d, size=n, element_shape=s, infer_shape=infer_shape) for d, s in specs]

    def body(i, *tas):
        out = _check_out(what, structure, specs, fn(_row(flat, elems, i)))
        return (i + 1,) + tuple(ta.write(i, y) for ta, y in zip(tas, out))

    res = while_loop(lambda i, *_: i < n, body, (convert_to_tensor(0),) + tuple(tas),
                     parallel_iterations=parallel_iterations or 10)
    o = _ops()
    outs = []
    for ta, (d, s) in zip(res[1:], specs):
        if isinstance(n, int) and n == 0:
            outs.append(o.zeros((0,) + (tuple(0 if v is None else v for v in s) if s else ()), d))
        else:
            outs.append(ta.stack())
    if not back_prop:
        outs = [o.stop_gradient(t) for t in outs]
    return nest.pack_sequence_as(structure, outs)


def _fold_setup(what, fn, elems, initializer, parallel_iterations, swap_memory, back_prop):
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, got {type(fn).__name__}")
    _check_hints(what, parallel_iterations, swap_memory, back_prop)
    flat, n = _elems(what, elems)
    return flat, n


def _acc_flat(what, structure, dtypes, a):
    try:
        nest.assert_same_structure(structure, a, check_types=False)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what}: fn must return the accumulator's structure; {e}") from None
    out = []
    for x, d in zip(nest.flatten(a), dtypes):
        t = x.read_value() if _is_variable(x) else x if isinstance(x, Tensor) else convert_to_tensor(x, d)
        if t._dtype is not d:
            raise TypeError(f"{what}: the accumulator enters as {d.name} but fn returns {t._dtype.name}; keep its "
                            f"dtype (use tf.cast)")
        out.append(t)
    return out


def _scan_loop(what, fn, elems, initializer, reverse, collect, parallel_iterations, back_prop):
    """The accumulator after every step (``collect``: stacked per step, else only the last)."""
    flat, n = _elems(what, elems)
    o = _ops()
    from .control_flow import while_loop
    from .tensor_array import TensorArray

    if initializer is None:
        first = o.subtract(n, 1) if reverse else 0
        acc0 = nest.pack_sequence_as(elems, [o.gather(x, first) for x in flat])
        start = 1
    else:
        acc0 = initializer
        start = 0
    structure = acc0
    acc_flat = [x.read_value() if _is_variable(x) else x if isinstance(x, Tensor) else convert_to_tensor(x)
                for x in nest.flatten(acc0)]
    dtypes = [t._dtype for t in acc_flat]
    tas = [TensorArray(d, size=n, element_shape=tuple(t._shape)) for d, t in zip(dtypes, acc_flat)] if collect \
        else []
    if collect and start == 1:
        pos0 = o.subtract(n, 1) if reverse else 0
        tas = [ta.write(pos0, t) for ta, t in zip(tas, acc_flat)]
    k = len(acc_flat)

    def body(i, *state):
        accs, tas_ = list(state[:k]), list(state[k:])
        idx = o.subtract(o.subtract(n, 1), i) if reverse else i
        a = fn(nest.pack_sequence_as(structure, accs), _row(flat, elems, idx))
        new = _acc_flat(what, structure, dtypes, a)
        tas_ = [ta.write(idx, t) for ta, t in zip(tas_, new)]
        return (i + 1,) + tuple(new) + tuple(tas_)

    res = while_loop(lambda i, *_: i < n, body, (convert_to_tensor(start),) + tuple(acc_flat) + tuple(tas),
                     parallel_iterations=parallel_iterations or 10)
    if collect:
        outs = [o.zeros((0,) + tuple(t._shape), t._dtype) if isinstance(n, int) and n == 0 else ta.stack()
                for ta, t in zip(res[1 + k:], acc_flat)]
    else:
        outs = list(res[1:1 + k])
    if not back_prop:
        outs = [o.stop_gradient(t) for t in outs]
    return nest.pack_sequence_as(structure, outs)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """The accumulator ``a = fn(a, elems[i])`` after each element, stacked, as ``tf.scan``.

    Without ``initializer`` the first element starts the accumulator (and is the first result).  ``reverse``
    scans from the last element; result ``i`` still belongs to element ``i``.  ``elems`` and the accumulator may
    be structures of tensors.

    >>> import tapeflow as tf
    >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]), initializer=10, reverse=True).numpy().tolist()
    [16, 15, 13]
    """
    what = "tf.scan"
    _fold_setup(what, fn, elems, initializer, parallel_iterations, swap_memory, back_prop)
    if not isinstance(reverse, bool) or not isinstance(infer_shape, bool):
        raise TypeError(f"{what}: reverse and infer_shape must be bools, got {reverse!r}, {infer_shape!r}")
    return _scan_loop(what, fn, elems, initializer, reverse, True, parallel_iterations, back_prop)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])``, as ``tf.foldl``.

    Without ``initializer`` the first element starts the accumulator.

    >>> import tapeflow as tf
    >>> int(tf.foldl(lambda a, x: a - x, tf.constant([1, 2, 3])))
    -4
    """
    what = "tf.foldl"
    _fold_setup(what, fn, elems, initializer, parallel_iterations, swap_memory, back_prop)
    return _scan_loop(what, fn, elems, initializer, False, False, parallel_iterations, back_prop)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``fn(...fn(fn(initializer, elems[n-1]), elems[n-2])..., elems[0])``, as ``tf.foldr``.

    Without ``initializer`` the last element starts the accumulator.

    >>> import tapeflow as tf
    >>> int(tf.foldr(lambda a, x: a - x, tf.constant([1, 2, 3])))
    0
    """
    what = "tf.foldr"
    _fold_setup(what, fn, elems, initializer, parallel_iterations, swap_memory, back_prop)
    return _scan_loop(what, fn, elems, initializer, True, False, parallel_iterations, back_prop)


# ---- py_function / numpy_function -------------------------------------------------------------

def _tout(what, Tout):
    """(single?, [(dtype, shape or None)]) from Tout: a DType/TensorSpec or a list/tuple of them."""
    from .tensor_spec import TensorSpec

    if Tout is None:
        raise TypeError(f"{what}: Tout must be a DType, a tf.TensorSpec or a list of them, got None")
    single = not isinstance(Tout, (list, tuple))
    out = []
    for s in [Tout] if single else Tout:
        if isinstance(s, TensorSpec):
            out.append((s.dtype, tuple(s.shape)))
            continue
        try:
            out.append((_dt.as_dtype(s), None))
        except (TypeError, ValueError):
            raise TypeError(f"{what}: Tout must be a DType, a tf.TensorSpec or a list of them, got {s!r:.60}") \
                from None
    return single, out


def _results(what, op, res, specs, single):
    if single:
        res = [res]
    elif not isinstance(res, (list, tuple)):
        res = [res]
    if len(res) != len(specs):
        raise InvalidArgumentError(f"{what}: the function returned {len(res)} value(s) but Tout lists "
                                   f"{len(specs)}", op)
    out = []
    for k, (r, (d, shape)) in enumerate(zip(res, specs)):
        if _is_variable(r):
            r = r.read_value()
        t = r if isinstance(r, Tensor) else convert_to_tensor(r, d if not isinstance(r, np.ndarray) else None)
        if t._dtype is not d:
            raise InvalidArgumentError(f"{what}: result {k} has dtype {t._dtype.name} but Tout says {d.name}", op)
        if shape is not None and not TensorShape(shape).is_compatible_with(TensorShape(t._shape)):
            raise InvalidArgumentError(f"{what}: result {k} has shape {tuple(t._shape)}, not compatible with "
                                       f"Tout's {shape}", op)
        out.append(t)
    return out


def _host_infer(*inputs, func, specs, single, numpy):
    rank = len(inputs[0]._shape) if inputs else 0
    return [(s if s is not None else (None,) * rank, d) for d, s in specs]


def _host_call(func, inputs, specs, single, numpy):
    what, op = ("tf.numpy_function", "PyFunc") if numpy else ("tf.py_function", "EagerPyFunc")
    args = [x.numpy() for x in inputs] if numpy else list(inputs)
    return _results(what, op, func(*args), specs, single)


@primitive("py_function", "EagerPyFunc", infer=_host_infer, stateful=True,
           internal="tf.py_function in a graph: a host node that calls the Python function each time the graph runs")
def _PY_FUNCTION(dev, *inputs, func, specs, single, numpy):
    with hooks.paused():  # the node is what tapes record (its rule reruns func under a tape), not func's ops
        return tuple(_host_call(func, inputs, specs, single, numpy))


@primitive("numpy_function", "PyFunc", infer=_host_infer, stateful=True,
           internal="tf.numpy_function in a graph: a host node that calls the Python function on NumPy arrays "
                    "each time the graph runs")
def _NUMPY_FUNCTION(dev, *inputs, func, specs, single, numpy):
    with hooks.paused():  # the node is what tapes record (its rule reruns func under a tape), not func's ops
        return tuple(_host_call(func, inputs, specs, single, numpy))


def _host(what, func, inp, Tout, numpy, stateful):
    if not callable(func):
        raise TypeError(f"{what}: func must be callable, got {type(func).__name__}")
    if not isinstance(stateful, bool):
        raise TypeError(f"{what}: stateful must be a bool, got {stateful!r}")
    if inp is None:
        inp = []
    if not isinstance(inp, (list, tuple)):
        inp = [inp]
    ins = [x.read_value() if _is_variable(x) else x if isinstance(x, Tensor) else convert_to_tensor(x)
           for x in inp]
    single, specs = _tout(what, Tout)
    if current_graph() is None:
        out = _host_call(func, ins, specs, single, numpy)
    else:
        out = run_tensors(_NUMPY_FUNCTION if numpy else _PY_FUNCTION, tuple(ins),
                          {"func": func, "specs": tuple(specs), "single": single, "numpy": numpy})
        out = list(out) if isinstance(out, (tuple, list)) else [out]
    return out[0] if single else out


def py_function(func, inp, Tout, name=None):
    """``func(*inp)`` on eager tensors, as ``tf.py_function``; ``Tout`` gives the result dtypes (a DType for one
    result, a list for several; a ``tf.TensorSpec`` also states a shape).

    Eagerly ``func`` runs at once and a tape records its ops.  Inside ``tf.function`` it is a stateful host node
    that calls ``func`` with eager tensors each time the graph runs; its gradient (and JVP) runs ``func`` again
    under a tape on the node's inputs, as TensorFlow's.  tapeflow's tracer needs a rank for each result: a
    ``tf.TensorSpec`` in ``Tout`` gives it, otherwise results are traced with the first input's rank and
    unknown dimensions (use ``tf.ensure_shape`` to state a different one).

    >>> import tapeflow as tf
    >>> float(tf.py_function(lambda x: x * 2, [tf.constant(2.0)], Tout=tf.float32))
    4.0
    """
    return _host("tf.py_function", func, inp, Tout, False, True)


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """``func(*arrays)`` on NumPy arrays, as ``tf.numpy_function``: results (arrays or numbers) become tensors of
    the dtypes in ``Tout``.  Inside ``tf.function`` a host node calls ``func`` each time the graph runs (tapeflow
    never drops or merges it, whatever ``stateful`` says).  No gradient flows through it, as TensorFlow's.

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> tf.numpy_function(lambda x: np.sort(x), [tf.constant([3, 1, 2])], Tout=tf.int32).numpy().tolist()
    [1, 2, 3]
    """
    return _host("tf.numpy_function", func, inp, Tout, True, stateful)


# ---- grouping, control dependencies, assertions, logging ---------------------------------------

def no_op(name=None):
    """Does nothing and returns None (eagerly and in graphs), as ``tf.no_op``.

    >>> import tapeflow as tf
    >>> tf.no_op() is None
    True
    """
    return None


def group(*inputs, **kwargs):
    """Waits for ``inputs`` (tensors or operations) and returns None, as ``tf.group`` in TensorFlow 2.

    tapeflow runs ops eagerly or, in a graph, stateful ops in program order, so there is nothing to wait for.

    >>> import tapeflow as tf
    >>> tf.group(tf.constant(1.0), tf.constant(2.0)) is None
    True
    """
    extra = set(kwargs) - {"name"}
    if extra:
        raise TypeError(f"tf.group: unknown keyword argument(s) {sorted(extra)}; allowed: name")
    for x in nest.flatten(list(inputs)):
        if x is not None and not is_tensor(x) and not hasattr(x, "stack"):
            raise TypeError(f"tf.group: inputs must be tensors or operations, got {type(x).__name__} {x!r:.60}")
    return None


class control_dependencies:  # noqa: N801  (TensorFlow's name)
    """``with tf.control_dependencies([...]):`` as TensorFlow 2's: eagerly nothing to order, and inside
    ``tf.function`` tapeflow's graphs already run stateful ops (variable updates, prints, asserts, host calls)
    in program order (TensorFlow 2's automatic control dependencies), so the block is ordered after the inputs.
    A callable among ``control_inputs`` is called at once, as TensorFlow 2 does.

    >>> import tapeflow as tf
    >>> v = tf.Variable(1.0)
    >>> with tf.control_dependencies([v.assign(2.0)]):
    ...     y = v + 1.0
    >>> float(y)
    3.0
    """

    def __init__(self, control_inputs):
        if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
            raise TypeError(f"tf.control_dependencies: control_inputs must be a list of tensors or operations "
                            f"(or None), got {type(control_inputs).__name__}")
        for x in control_inputs or ():
            if x is not None and not callable(x) and not is_tensor(x) and not hasattr(x, "stack"):
                raise TypeError(f"tf.control_dependencies: {type(x).__name__} {x!r:.60} is not a tensor, an "
                                f"operation or a callable")
        for x in control_inputs or ():
            if callable(x) and not is_tensor(x):
                x()  # a pending callable runs now, as TensorFlow 2's eager control_dependencies runs it
        self.control_inputs = list(control_inputs or ())

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _assert_text(data, summarize, graph):
    from .printing import format_tensor

    parts = []
    for x in data:
        if isinstance(x, Tensor):
            flat = np.asarray(x.numpy()).reshape(-1)
            if graph:
                parts.append("[" + format_tensor(x.numpy(), summarize)[1:-1].strip() + "]"
                             if x._shape else f"[{format_tensor(x.numpy(), summarize)}]")
            else:
                parts.append(", ".join(str(v) for v in flat[:summarize].tolist()))
        else:
            parts.append(f"[{x}]" if graph else str(x))
    return (" " if graph else "\n").join(parts)


def _assert_check(cond, data, summarize, graph):
    if bool(cond.numpy()):
        return
    text = _assert_text(data, summarize, graph)
    msg = f"assertion failed: {text}" if graph else \
        f"Expected '{cond}' to be true. Summarized data: {text}"
    raise InvalidArgumentError(msg, "Assert")


@primitive("assert", "Assert", infer=lambda cond, *data, template, summarize: [], stateful=True,
           internal="tf.Assert in a graph: an output-less check that raises when the graph runs")
def _ASSERT(dev, cond, *data, template, summarize):
    it = iter(data)
    values = [next(it) if x is None else x for x in template]
    _assert_check(cond, values, summarize, True)
    return ()


def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TensorFlow's name)
    """Raises ``InvalidArgumentError`` showing ``data`` (tensors and Python values, the first ``summarize``
    entries of each tensor, default 3) when the scalar bool ``condition`` is False, as ``tf.Assert``; returns
    None.  Inside ``tf.function`` the check runs each time the graph runs.

    >>> import tapeflow as tf
    >>> tf.Assert(tf.constant(True), ["never shown"]) is None
    True
    >>> try:
    ...     tf.Assert(tf.constant(1) > 2, ["x is", tf.constant(1)])
    ... except tf.errors.InvalidArgumentError as e:
    ...     print(str(e).splitlines()[0])
    Expected 'Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: x is
    """
    op = "Assert"
    if summarize is None:
        summarize = 3
    if isinstance(summarize, bool) or not isinstance(summarize, int):
        raise TypeError(f"summarize must be an int, got {summarize!r} [Op:{op}]")
    cond = condition.read_value() if _is_variable(condition) else condition if isinstance(condition, Tensor) \
        else convert_to_tensor(condition)
    if cond._dtype is not _dt.bool_ or cond._shape:
        raise InvalidArgumentError(f"condition is a {cond._dtype.name} tensor of shape {tuple(cond._shape)}; "
                                   f"allowed: a scalar bool", op)
    if not isinstance(data, (list, tuple)):
        data = [data]
    data = [x.read_value() if _is_variable(x) else x for x in data]
    if current_graph() is None or all(not isinstance(x, Tensor) or _concrete(x) for x in [cond] + data):
        _assert_check(cond, data, summarize, current_graph() is not None)
        return None
    template = [None if isinstance(x, Tensor) else x for x in data]
    run_tensors(_ASSERT, (cond,) + tuple(x for x in data if isinstance(x, Tensor)),
                {"template": template, "summarize": summarize})
    return None


def get_logger() -> logging.Logger:
    """tapeflow's logger, ``logging.getLogger("tapeflow")`` (``tf.get_logger``).

    >>> import tapeflow as tf
    >>> tf.get_logger().name
    'tapeflow'
    """
    return logging.getLogger("tapeflow")
