"""Gradients of core's nn ops (``tapeflow.core.ops.nn_ops``), in the same order.

The two softmax cross-entropies hand their gradient, softmax(logits) - labels,
to the tape as the ``backprop`` attribute (computed by the forward kernel), so
their backward pass is one multiply.  When a tape records the backward pass
itself (a higher-order gradient), the rules rebuild that term from
differentiable ops instead, so it differentiates again.
"""
from __future__ import annotations

from tapeflow.core.ops import (add, exp, log_softmax, multiply, negative, one_hot, reduce_sum, reshape, sigmoid,
                               softmax, subtract)

from ..registry import defgrad
from ..tape import pause_all, recording


def _expand(g, axis, like):
    """``g`` (``like``'s shape without ``axis``) with that axis back as size 1."""
    shape = list(like._shape)
    shape[axis] = 1
    return reshape(g, shape)


@defgrad("softmax")
def _softmax_grad(g, ans, x, axis):
    # d softmax: y * (g - sum(g * y))
    return (multiply(subtract(g, reduce_sum(multiply(g, ans), axis, keepdims=True)), ans),)


@defgrad("log_softmax")
def _log_softmax_grad(g, ans, x, axis):
    # d log_softmax: g - softmax * sum(g)
    return (subtract(g, multiply(exp(ans), reduce_sum(g, axis, keepdims=True))),)


def _xent_labels(g, ans, labels, logits, axis, backprop=None):
    return multiply(_expand(g, axis, logits), negative(log_softmax(logits, axis)))


def _xent_logits(g, ans, labels, logits, axis, backprop=None):
    if backprop is None or recording():
        backprop = subtract(softmax(logits, axis), labels)
    return multiply(_expand(g, axis, logits), backprop)


defgrad("softmax_cross_entropy_with_logits", _xent_labels, _xent_logits)


def _sparse_labels(g, ans, labels, logits, backprop=None):
    return None  # integer labels


def _sparse_logits(g, ans, labels, logits, backprop=None):
    if backprop is None:  # traced (a graph function): no buffer; softmax(logits) - one_hot(labels)
        backprop = subtract(softmax(logits), one_hot(labels, logits._shape[-1], dtype=logits._dtype))
    elif recording():
        # softmax(logits) - one_hot(labels) with the one-hot part a constant
        sm = softmax(logits)
        with pause_all():
            minus_one_hot = subtract(backprop, sm)
        backprop = add(sm, minus_one_hot)
    return multiply(_expand(g, len(logits._shape) - 1, logits), backprop)


defgrad("sparse_softmax_cross_entropy_with_logits", _sparse_labels, _sparse_logits)

defgrad("sigmoid_cross_entropy_with_logits",
        lambda g, ans, labels, logits: multiply(g, negative(logits)),
        lambda g, ans, labels, logits: multiply(g, subtract(sigmoid(logits), labels)))
