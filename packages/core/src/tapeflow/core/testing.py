"""Helpers shared by the tests of every tapeflow package: the per-test ``rng`` fixture and small NumPy references.

How tests get them: each package's ``tests/conftest.py`` (and the cross-package ``tests/conftest.py``)
imports the fixture, ``from tapeflow.core.testing import rng``; a fixture imported into a conftest is
registered like one defined there.  Why not the other ways:

- a ``pytest11`` entry point would load this module into every pytest run of every environment where
  tapeflow-core is installed (users' own projects too), and an editable install only learns a new entry
  point when it is reinstalled;
- ``pytest_plugins = [...]`` in a conftest is refused by pytest unless that conftest is loaded at start-up
  (a plain ``pytest`` from the repository root finds the packages' conftests later, during collection);
- a helper file beside the tests needs ``sys.path`` edits and is not importable from another package's tests.

tapeflow-core is installed wherever a package's tests run (kernels-c's tests excepted: they need nothing
from here), so every package can import this module without installing anything extra.  It imports pytest:
tests import it, tapeflow itself never does.

>>> from tapeflow.core.testing import seeded_rng
>>> seeded_rng("tests/test_x.py::test_a").integers(0, 1000, 3).tolist() == \\
...     seeded_rng("tests/test_x.py::test_a").integers(0, 1000, 3).tolist()
True
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from .errors import InvalidArgumentError

__all__ = ["np_log_softmax", "np_softmax", "ops_run", "raises_invalid_argument", "rng", "seeded_rng"]


def seeded_rng(key: str) -> np.random.Generator:
    """A NumPy generator seeded by the CRC-32 of ``key``: the same stream for the same key in every run.

    The ``rng`` fixture passes the test's node id, so each test draws its own data and a failure
    reproduces by running that test alone.

    >>> a, b = seeded_rng("t::one"), seeded_rng("t::one")
    >>> float(a.standard_normal()) == float(b.standard_normal())
    True
    >>> float(seeded_rng("t::one").standard_normal()) == float(seeded_rng("t::two").standard_normal())
    False
    """
    if not isinstance(key, str):
        raise TypeError(f"seeded_rng: key must be a str (a test's node id), got {type(key).__name__}")
    return np.random.default_rng(zlib.crc32(key.encode()))


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A NumPy generator seeded from the test's node id (see :func:`seeded_rng`): stable across runs.

    Used by asking for it, ``def test_x(rng): x = rng.normal(size=3)``; the call it makes:

    >>> seeded_rng("packages/core/tests/test_nn_ops.py::test_x").normal(size=3).shape
    (3,)
    """
    return seeded_rng(request.node.nodeid)


def raises_invalid_argument(match: str, fn, *args, **kwargs) -> InvalidArgumentError:
    """Call ``fn(*args, **kwargs)``, assert it raises InvalidArgumentError whose message matches
    the regular expression ``match`` (``re.search``), and return the error.

    >>> import tapeflow as tf
    >>> e = raises_invalid_argument(r"\\[Op:Reshape\\]$", tf.reshape, [1.0, 2.0], [3])
    >>> type(e).__name__
    'InvalidArgumentError'
    """
    with pytest.raises(InvalidArgumentError, match=match) as info:
        fn(*args, **kwargs)
    return info.value


def np_softmax(x, axis=-1):
    """The reference softmax in NumPy: ``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    >>> np_softmax(np.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    """The reference log-softmax in NumPy: ``x - max - log(sum(exp(x - max)))`` along ``axis``.

    >>> np.round(np_log_softmax(np.array([0.0, 0.0])), 6).tolist()
    [-0.693147, -0.693147]
    """
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def ops_run(fn):
    """``(fn(), names)``: what ``fn`` returns and the names of the ops it dispatched, in order.

    >>> import tapeflow as tf
    >>> from tapeflow.core.testing import ops_run
    >>> out, names = ops_run(lambda: tf.exp(tf.constant(0.0)) + 1.0)
    >>> float(out), names
    (2.0, ['exp', 'add'])
    """
    from .dispatch import hooks

    seen = []
    sub = hooks.subscribe(lambda op, inputs, out, attrs: seen.append(op))
    try:
        out = fn()
    finally:
        sub.remove()
    return out, seen
