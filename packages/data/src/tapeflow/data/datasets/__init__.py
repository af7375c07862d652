"""Dataset loaders: ``mnist.load_data()``, ``fashion_mnist.load_data()`` (downloaded once and cached;
see :func:`data_home`) and ``digits()`` (the 8x8 handwritten digits, shipped in the package).

>>> from tapeflow.data import datasets
>>> datasets.data_home("/tmp/x").name
'x'
"""
from __future__ import annotations

import numpy as np

from . import fashion_mnist, mnist
from ._download import data_home

__all__ = ["data_home", "digits", "fashion_mnist", "mnist"]


# The UCI optical-recognition digits as scikit-learn bundles them (sklearn.datasets.load_digits, BSD-3-Clause:
# see the package's NOTICE), stored as uint8 ``images`` (1797, 8, 8) and ``labels`` (1797,) in their order there.
_DIGITS_FILE = "digits.npz"


def digits(test_fraction: float = 0.2, seed: int = 0):
    """The 1,797 8x8 handwritten digits as ``(x_train, y_train), (x_test, y_test)``.

    Images are uint8 arrays of shape (n, 8, 8) with values 0-16, labels uint8 0-9; the split is a
    permutation seeded by ``seed``, ``test_fraction`` of the samples going to the test set.  The data
    (scikit-learn's copy of the UCI optical-recognition digits, 45 kB) ship inside tapeflow-data:
    nothing is downloaded and nothing else is needed.

    >>> from tapeflow.data.datasets import digits
    >>> (x_train, y_train), (x_test, y_test) = digits()
    >>> x_train.shape, x_test.shape, int(y_train.max())
    ((1438, 8, 8), (359, 8, 8), 9)
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)):
        raise TypeError(f"test_fraction must be a float in [0, 1), not {type(test_fraction).__name__}")
    if not 0.0 <= test_fraction < 1.0:
        from tapeflow.core.errors import InvalidArgumentError

        raise InvalidArgumentError(f"test_fraction = {test_fraction} is not in [0, 1)", "Digits")
    x, y = _digits_arrays()
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = round(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (x[train], y[train]), (x[test], y[test])


def _digits_arrays():
    from importlib.resources import files

    with files(__name__).joinpath(_DIGITS_FILE).open("rb") as f, np.load(f, allow_pickle=False) as z:
        return z["images"], z["labels"]


digits.load_data = digits
