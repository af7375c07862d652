"""Spec of tf.random.stateless_categorical: the categorical draws of the Philox key seed[0], stream seed[1]
(the reference generator of tests/specs/random.py)."""
from __future__ import annotations

from opspec import FLOATS, HALF, Spec
from specs.random import _categorical_sample, ref_categorical

SEED = [11, 3]


def _sample(rng, dtype):
    return [((x, n, SEED), kw) for (x, n), kw in _categorical_sample(rng, dtype)]


def _run(tf, logits, n, seed):
    return tf.random.stateless_categorical(tf.constant(logits), n, seed=seed)


SPECS = [
    Spec("stateless_categorical", lambda x, n, seed: ref_categorical(x, n, seed[0], seed[1]), _sample,
         dtypes=FLOATS + HALF, fn=_run, exact=True, grad=False),
]
