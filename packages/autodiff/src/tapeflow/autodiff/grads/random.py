"""Gradients of core's random draws that have one: the gamma sample in its shape ``alpha``.

TensorFlow's implicit reparameterization gradient: a sample ``x`` of Gamma(alpha, 1) moves with
``alpha`` as ``dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha)`` (``random_gamma_grad``), so the
gradient is unbiased for any loss of the samples.  ``random_gamma``'s output is ``shape + alpha.shape``:
the leading ``shape`` axes are summed back onto ``alpha``.  ``beta`` enters through a division
(``tf.random.gamma`` divides the Gamma(alpha, 1) sample by it), which the tape differentiates.  The JVP
is the same derivative times the tangent of ``alpha``.
"""
from __future__ import annotations

from tapeflow.core.ops import multiply, reduce_sum
from tapeflow.core.ops.random_dist_ops import random_gamma_grad

from ..forward_rules import defjvp
from ..registry import defgrad


def _gamma_grad(g, ans, alpha, *, shape, dtype, key, stream):
    d = multiply(g, random_gamma_grad(alpha, ans))
    return (reduce_sum(d, axis=list(range(len(shape)))) if shape else d,)


def _gamma_jvp(ts, ans, alpha, *, shape, dtype, key, stream):
    return None if ts[0] is None else multiply(random_gamma_grad(alpha, ans), ts[0])


for _op in ("random_gamma", "stateless_random_gamma"):
    defgrad(_op, _gamma_grad)
    defjvp(_op, _gamma_jvp)
