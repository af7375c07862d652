"""The seeds' function-style gradient API: gradients_function and friends."""
from __future__ import annotations

import functools
from typing import Any, Callable

from tapeflow.core.tensor import Tensor, convert_to_tensor
from tapeflow.core.variables import Variable

from .tape import GradientTape


def _params(f, params, n):
    if params is None:
        return list(range(n))
    names = None
    out = []
    for p in params:
        if isinstance(p, str):
            if names is None:
                import inspect

                names = list(inspect.signature(f).parameters)
            if p not in names:
                raise ValueError(f"params names {p!r}, which is not a parameter of {f.__name__}{tuple(names)}")
            p = names.index(p)
        if not isinstance(p, int) or not 0 <= p < n:
            raise ValueError(f"params entry {p!r} is not a position of the {n} arguments given")
        out.append(p)
    return out


def _value_and_grads(f, params, args, kwargs, dy):
    args = list(args)
    which = _params(f, params, len(args))
    for i in which:
        if not isinstance(args[i], (Tensor, Variable)):
            args[i] = convert_to_tensor(args[i])
    with GradientTape() as tape:
        for i in which:
            tape.watch(args[i])
        value = f(*args, **kwargs)
    if not isinstance(value, (Tensor, Variable)):
        raise TypeError(f"{getattr(f, '__name__', 'f')} must return a tensor to be differentiated; it returned "
                        f"{type(value).__name__}")
    grads = tape.gradient(value, [args[i] for i in which], output_gradients=dy)
    return value, grads


def gradients_function(f, params=None) -> Callable[..., list[Any]]:
    """A function returning the gradients of ``f`` with respect to its arguments (a list).

    ``params`` picks the arguments (positions or names); a non-scalar result is
    summed (or weighted by ``dy=``).  Gradients of gradients work.

    >>> import tapeflow as tf
    >>> grad = tf.gradients_function(lambda x: x * x)
    >>> grad(3.0)
    [<Tensor: shape=(), dtype=float32, numpy=6.0>]
    >>> gradgrad = tf.gradients_function(lambda x: grad(x)[0])
    >>> gradgrad(3.0)[0].numpy()
    np.float32(2.0)
    """
    @functools.wraps(f)
    def grad_fn(*args, dy=None, **kwargs):
        return _value_and_grads(f, params, args, kwargs, dy)[1]

    return grad_fn


def value_and_gradients_function(f: Callable[..., Any],
                                 params: list[int] | None = None) -> Callable[..., tuple[Any, list[Any]]]:
    """Like :func:`gradients_function`, returning ``(value, gradients)``.

    >>> import tapeflow as tf
    >>> value, grads = tf.value_and_gradients_function(lambda x, y: x * y)(3.0, 4.0)
    >>> float(value), [float(g) for g in grads]
    (12.0, [4.0, 3.0])
    """
    @functools.wraps(f)
    def val_grad_fn(*args, dy=None, **kwargs):
        return _value_and_grads(f, params, args, kwargs, dy)

    return val_grad_fn


def _implicit(f, args, kwargs):
    with GradientTape() as tape:
        value = f(*args, **kwargs)
    variables = [v for v in tape.watched_variables() if v.trainable]
    if not variables:
        raise ValueError(f"no trainable variables were read while computing {getattr(f, '__name__', 'f')}; "
                         f"implicit gradients are taken with respect to the variables the function reads")
    if not isinstance(value, (Tensor, Variable)):
        raise TypeError(f"{getattr(f, '__name__', 'f')} must return a tensor to be differentiated; it returned "
                        f"{type(value).__name__}")
    grads = tape.gradient(value, variables)
    return value, list(zip(grads, variables))


def implicit_gradients(f: Callable[..., Any]) -> Callable[..., list[tuple[Any, Any]]]:
    """A function returning ``[(gradient, variable), ...]`` for every trainable variable ``f`` reads.

    >>> import tapeflow as tf
    >>> x = tf.Variable(2.0)
    >>> grad = tf.implicit_gradients(lambda y: (y - x ** 2) ** 2)
    >>> [(float(g), v.name) for g, v in grad(7.0)]
    [(-24.0, 'Variable:0')]
    """
    @functools.wraps(f)
    def grad_fn(*args, **kwargs):
        return _implicit(f, args, kwargs)[1]

    return grad_fn


def implicit_value_and_gradients(f: Callable[..., Any]) -> Callable[..., tuple[Any, list[tuple[Any, Any]]]]:
    """Like :func:`implicit_gradients`, returning ``(value, [(gradient, variable), ...])``.

    >>> import tapeflow as tf
    >>> x = tf.Variable(2.0)
    >>> value, gv = tf.implicit_value_and_gradients(lambda y: (y - x ** 2) ** 2)(7.0)
    >>> float(value), float(gv[0][0])
    (9.0, -24.0)
    """
    @functools.wraps(f)
    def val_grad_fn(*args, **kwargs):
        return _implicit(f, args, kwargs)

    return val_grad_fn
