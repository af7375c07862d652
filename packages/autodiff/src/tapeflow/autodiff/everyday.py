"""The everyday top-level ``tf.*`` autodiff names: ``tf.recompute_grad``, ``tf.grad_pass_through`` and
TensorFlow 1's ``tf.gradients``/``tf.hessians``, which TensorFlow 2 refuses eagerly (and tapeflow, which has no
symbolic graph gradients, everywhere: use ``tf.GradientTape``).

>>> import tapeflow as tf
>>> x = tf.constant(3.0)
>>> with tf.GradientTape() as tape:
...     tape.watch(x)
...     y = tf.recompute_grad(lambda t: t * t)(x)
>>> float(tape.gradient(y, x))
6.0
"""
from __future__ import annotations

import functools

from tapeflow.core.tensor import Tensor

from .custom import custom_gradient
from .tape import GradientTape

__all__ = ["recompute_grad", "grad_pass_through", "gradients", "hessians"]


def recompute_grad(f):
    """``f`` whose gradient recomputes ``f``'s forward pass under a tape instead of keeping its intermediate
    values (trading compute for memory), as ``tf.recompute_grad``.  Gradients equal ``f``'s own, also for
    the trainable variables ``f`` reads.

    >>> import tapeflow as tf
    >>> w = tf.Variable(2.0)
    >>> layer = tf.recompute_grad(lambda x: tf.tanh(w * x))
    >>> with tf.GradientTape() as tape:
    ...     y = layer(tf.constant(0.5))
    >>> round(float(tape.gradient(y, w)), 6)
    0.209987
    """
    if not callable(f):
        raise TypeError(f"tf.recompute_grad: f must be callable, got {type(f).__name__}")

    @functools.wraps(f)
    def inner(*args, **kwargs):
        @custom_gradient
        def run(*xs):
            y = f(*xs, **kwargs)

            def grad(*dy, variables=None):
                watched = [x for x in xs if isinstance(x, Tensor)]
                with GradientTape() as tape:
                    tape.watch(watched)
                    y2 = f(*xs, **kwargs)
                srcs = watched + list(variables or [])
                gs = tape.gradient(y2, srcs, output_gradients=list(dy) if len(dy) > 1 else dy[0])
                it = iter(gs[:len(watched)])
                gx = [next(it) if isinstance(x, Tensor) else None for x in xs]
                if variables is None:
                    return gx
                return gx, list(gs[len(watched):])

            return y, grad

        return run(*args)

    return inner


def grad_pass_through(f):
    """``f`` whose gradient is the identity: the upstream gradient flows to ``f``'s input as if ``f`` were
    ``tf.identity`` (a straight-through estimator; ``f`` may also assign a variable), as ``tf.grad_pass_through``.

    >>> import tapeflow as tf
    >>> x = tf.constant(2.7)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = tf.grad_pass_through(tf.round)(x)
    >>> float(y), float(tape.gradient(y, x))
    (3.0, 1.0)
    """
    if not callable(f):
        raise TypeError(f"tf.grad_pass_through: f must be callable, got {type(f).__name__}")

    @custom_gradient
    def inner(x):
        y = f(x)
        if hasattr(y, "assign") and hasattr(y, "read_value"):  # ``v.assign`` returns the variable: its value
            y = y.read_value()

        def grad(dy, variables=None):
            if variables is None:
                return dy
            return dy, [None] * len(variables)

        return y, grad

    return functools.wraps(f)(inner) if hasattr(f, "__name__") else inner


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False, aggregation_method=None,
              stop_gradients=None, unconnected_gradients=None):
    """TensorFlow 1's symbolic ``tf.gradients``: TensorFlow 2 refuses it eagerly, and tapeflow's graph functions
    have no symbolic gradient pass, so it always raises ``RuntimeError``: use ``tf.GradientTape``.

    >>> import tapeflow as tf
    >>> try:
    ...     tf.gradients(tf.constant(1.0), tf.constant(1.0))
    ... except RuntimeError as e:
    ...     print(e)
    tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.
    """
    raise RuntimeError(_refusal("tf.gradients"))


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """TensorFlow 1's symbolic ``tf.hessians``: refused as ``tf.gradients`` is (use nested
    ``tf.GradientTape``\\ s, or ``tape.jacobian`` of a gradient).

    >>> import tapeflow as tf
    >>> try:
    ...     tf.hessians(tf.constant(1.0), tf.constant(1.0))
    ... except RuntimeError as e:
    ...     print(e)
    tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.
    """
    raise RuntimeError(_refusal("tf.gradients"))


def _refusal(what):
    from tapeflow.core.runner import current_graph

    if current_graph() is None:
        return f"{what} is not supported when eager execution is enabled. Use tf.GradientTape instead."
    return (f"{what} is not supported inside tf.function in tapeflow (its graphs have no symbolic gradient pass). "
            f"Use tf.GradientTape instead.")
