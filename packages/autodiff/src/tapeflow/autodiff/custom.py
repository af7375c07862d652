"""custom_gradient, register_gradient and record: gradients users define themselves.

Two ways to give something a gradient of your own:

* ``@custom_gradient`` on a Python function ``f(*args) -> (y, grad_fn)``: tapeflow
  records ``f`` as one op whose gradient is ``grad_fn`` (seeds: ``log1pexp``,
  ``clip_gradient_by_norm``).
* Your own primitive: compute the output any way you like (e.g. a NumPy or C
  routine), then report it with :func:`record`; give its gradient with
  ``@register_gradient("my_op")``.  Recording costs nothing when no tape is active.
"""
from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable

from tapeflow.core import dispatch as _dispatch
from tapeflow.core.runner import current_graph, primitive, run_tensors
from tapeflow.core.tensor import Tensor, convert_to_tensor, make
from tapeflow.core.variables import Variable

from . import _nest
from .registry import defgrad
from .tape import _state

if TYPE_CHECKING:
    from typing import TypeVar
    _F = TypeVar("_F", bound=Callable[..., Any])   # a gradient rule, returned as it is

_hooks = _dispatch.hooks


def record(op: str, inputs, outputs, attrs: dict | None = None) -> None:
    """Report a user op to the active tapes: ``outputs`` were computed from ``inputs``.

    ``inputs`` and ``outputs`` are tensors or sequences of tensors; variables among
    the inputs count as reads of their current value.  Give the op's gradient with
    :func:`register_gradient`; ``attrs`` reach the gradient function as keywords.
    Does nothing (and costs nothing) when no tape is active.

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> from tapeflow.autodiff import record, register_gradient
    >>> def cube(x):
    ...     x = tf.convert_to_tensor(x)
    ...     y = tf.constant(np.asarray(x) ** 3)  # any computation; the tape only needs the report
    ...     record("doc_cube", [x], y)
    ...     return y
    >>> @register_gradient("doc_cube")
    ... def _cube_grad(g, ans, x):
    ...     return (g * 3.0 * x * x,)
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = cube(x)
    >>> tape.gradient(y, x).numpy()
    np.float32(12.0)
    """
    rec = _hooks.recorder
    if rec is None:
        return
    ins = []
    for t in (inputs if isinstance(inputs, (list, tuple)) else (inputs,)):
        if isinstance(t, Variable):
            if _hooks.variable_read is not None:
                _hooks.variable_read(t)
            t = t._value
        elif not isinstance(t, Tensor):
            raise TypeError(f"record({op!r}): inputs must be tensors or variables; got {type(t).__name__}")
        ins.append(t)
    if isinstance(outputs, Tensor):
        outs = outputs
    else:
        outs = tuple(outputs)
        if not all(isinstance(o, Tensor) for o in outs):
            raise TypeError(f"record({op!r}): outputs must be tensors")
    rec(op, tuple(ins), outs, attrs)


def register_gradient(op_type: str) -> Callable[[_F], _F]:
    """Register the gradient of a user op (a decorator): ``fn(g, ans, *inputs, **attrs)``.

    ``g`` is the upstream gradient (a tuple for several outputs), ``ans`` the
    output; return one gradient per input, ``None`` where there is none.  Use
    tapeflow ops so the gradient differentiates again.  Registering a user op
    again replaces its gradient (re-running a notebook cell works); core's ops
    already have theirs, so their names are refused (override a computation's
    gradient with :func:`custom_gradient` instead).  See :func:`record` for a
    complete example.

    >>> from tapeflow.autodiff import register_gradient
    >>> @register_gradient("doc_double")
    ... def _double_grad(g, ans, x):
    ...     return (2.0 * g,)
    """
    if not isinstance(op_type, str) or not op_type:
        raise TypeError(f"register_gradient takes an op name (str); got {op_type!r}")
    reg = _dispatch.REGISTRY
    if op_type in reg or op_type == "custom_gradient" or any(d.tf_name == op_type for d in reg.values()):
        raise KeyError(f"{op_type!r} is one of tapeflow's own ops, whose gradient is already defined; give your op "
                       f"another name (or use tf.custom_gradient to override a computation's gradient)")

    def deco(fn: _F) -> _F:
        if not callable(fn):
            raise TypeError(f"register_gradient({op_type!r}) decorates a function; got {type(fn).__name__}")
        defgrad(op_type, fn)
        return fn

    return deco


# ---- custom_gradient -------------------------------------------------------------------------

def _alias(t: Tensor) -> Tensor:
    """A new tensor object on the same buffer (a fresh id the tape can attribute to the custom op)."""
    return make(t._h, t._arr, t._shape, t._dtype, t._dev, t._size)


def custom_gradient(f: Any = None) -> Callable[..., Any]:  # (declared: the wrapper returns y, not (y, grad_fn))
    """Decorate ``f(*args) -> (y, grad_fn)`` so that tapes use ``grad_fn`` for its gradient.

    ``grad_fn(*dy)`` gets the upstream gradient of each output and returns one
    gradient per positional argument of ``f`` (``None`` for arguments with no
    gradient, e.g. a Python number).  If ``f`` reads trainable variables,
    ``grad_fn`` must accept ``variables=`` and return ``(input_grads,
    variable_grads)``.  The ops inside ``f`` and ``grad_fn`` are recorded by
    enclosing tapes, so custom gradients work inside higher-order gradients.

    >>> import tapeflow as tf
    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(dy):
    ...         return dy * (1 - 1 / (1 + e))
    ...     return tf.log(1 + e), grad
    >>> tf.gradients_function(log1pexp)(100.0)
    [<Tensor: shape=(), dtype=float32, numpy=1.0>]
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        st = _state
        if not st.rec and current_graph() is None:
            y, _grad_fn = f(*args, **kwargs)
            return y
        seen: dict = {}
        st.watchers.append(seen)
        try:
            y, grad_fn = f(*args, **kwargs)
        finally:
            st.watchers.remove(seen)
        if not callable(grad_fn):
            raise TypeError(f"custom_gradient: {f.__name__} must return (outputs, grad_fn); the second item is "
                            f"{type(grad_fn).__name__}, not a function")
        positions, inputs = [], []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                positions.append(i)
                inputs.append(a)
            elif isinstance(a, Variable):
                positions.append(i)
                seen.pop(a, None)  # an argument, not a captured variable
                inputs.append(a._value)
        variables = [v for v in seen if v.trainable]
        if variables and not _takes_variables(grad_fn):
            names = ", ".join(v.name for v in variables)
            raise TypeError(f"custom_gradient: {f.__name__} reads the trainable variables [{names}] but its "
                            f"grad_fn does not accept `variables=`; define grad_fn(*dy, variables=None) and return "
                            f"(input_grads, variable_grads)")
        inputs += [v._tape_value() for v in variables]
        flat = _nest.flatten(y)
        for o in flat:
            if not isinstance(o, Tensor):
                raise TypeError(f"custom_gradient: {f.__name__} must return tensors; got {type(o).__name__}")
        attrs = {"grad_fn": grad_fn, "n_args": len(args), "positions": tuple(positions),
                 "n_vars": len(variables), "variables": variables, "name": f.__name__}
        if current_graph() is not None:
            # in a graph function: one node, recorded (by tapes now, or when the graph runs) as this op
            outs = run_tensors(_CUSTOM, tuple(inputs) + tuple(flat), {**attrs, "n_in": len(inputs)})
            outs = [outs] if isinstance(outs, Tensor) else list(outs)
            return _nest.pack_as(y, outs) if _nest.is_nested(y) else outs[0]
        outs = [_alias(o) for o in flat]
        rec = _hooks.recorder
        if rec is not None and inputs:
            rec("custom_gradient", tuple(inputs), outs[0] if len(outs) == 1 and not _nest.is_nested(y)
                else tuple(outs), attrs)
        return _nest.pack_as(y, outs) if _nest.is_nested(y) else outs[0]

    return wrapper


def _takes_variables(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _custom_infer(*tensors, n_in, **_):
    outs = tensors[n_in:]
    if len(outs) == 1:
        return outs[0]._shape, outs[0]._dtype
    return [(o._shape, o._dtype) for o in outs]


@primitive("custom_gradient", "IdentityN", infer=_custom_infer,
           internal="a tf.custom_gradient call in a graph")
def _CUSTOM(dev, *tensors, n_in, **_):
    """A custom_gradient inside a graph function: its outputs are the function's (new tensor objects)."""
    outs = tuple(_alias(t) for t in tensors[n_in:])
    return outs[0] if len(outs) == 1 else outs


def _in_graph(grad_fn, env):
    """``grad_fn`` for a graph that ran: its closure's symbolic tensors take the values they had in that run."""
    def call(*dys, **kw):
        from tapeflow.core.function import run_with_env

        return run_with_env(lambda *d: grad_fn(*d, **kw), dys, env)
    return call


@defgrad("custom_gradient")
def _custom_gradient_rule(g, ans, *inputs, grad_fn, n_args, positions, n_vars, variables, name, n_in=None,
                          _env=None):
    dys = g if isinstance(g, tuple) else (g,)
    if _env is not None and current_graph() is None:
        grad_fn = _in_graph(grad_fn, _env)
    if n_vars:
        res = grad_fn(*dys, variables=variables)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise ValueError(f"custom_gradient: the grad_fn of {name} reads variables, so it must return "
                             f"(input_grads, variable_grads)")
        in_grads, var_grads = res
        var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        if len(var_grads) != n_vars:
            raise ValueError(f"custom_gradient: the grad_fn of {name} returned {len(var_grads)} variable "
                             f"gradients for {n_vars} variables")
    else:
        in_grads, var_grads = grad_fn(*dys), []
    if isinstance(in_grads, (list, tuple)):
        in_grads = list(in_grads)
    else:
        in_grads = [in_grads]
    if len(in_grads) != n_args:
        raise ValueError(f"custom_gradient: the grad_fn of {name} returned {len(in_grads)} gradients for its "
                         f"{n_args} arguments (return None for an argument without a gradient)")
    out = []
    for p, t in zip(positions, inputs):
        gi = in_grads[p]
        out.append(None if gi is None else gi if isinstance(gi, Tensor) else convert_to_tensor(gi, t._dtype))
    for gi, t in zip(var_grads, inputs[len(positions):]):
        out.append(None if gi is None else gi if isinstance(gi, Tensor) else convert_to_tensor(gi, t._dtype))
    if n_in is not None:  # the graph node's other inputs are the function's outputs: no gradient there
        out += [None] * (len(inputs) - n_in)
    return tuple(out)
