"""Dataset loaders: ``mnist.load_data()``, ``fashion_mnist.load_data()`` (downloaded once and cached;
see :func:`data_home`) and ``digits()`` (scikit-learn's bundled 8x8 digits, no download).

>>> from tapeflow.data import datasets
>>> datasets.data_home("/tmp/x").name
'x'
"""
from __future__ import annotations

import numpy as np

from . import fashion_mnist, mnist
from ._download import data_home

__all__ = ["data_home", "digits", "fashion_mnist", "mnist"]


def digits(test_fraction: float = 0.2, seed: int = 0):
    """scikit-learn's 1,797 handwritten digits as ``(x_train, y_train), (x_test, y_test)``.

    Images are uint8 arrays of shape (n, 8, 8) with values 0-16, labels uint8 0-9; the split is a
    permutation seeded by ``seed``, ``test_fraction`` of the samples going to the test set.  Needs
    scikit-learn (``pip install 'tapeflow-data[digits]'``); nothing is downloaded.

    >>> from tapeflow.data.datasets import digits
    >>> (x_train, y_train), (x_test, y_test) = digits()
    >>> x_train.shape, x_test.shape, int(y_train.max())
    ((1438, 8, 8), (359, 8, 8), 9)
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError("tapeflow.data.datasets.digits needs scikit-learn, which is not installed: "
                          "pip install 'tapeflow-data[digits]'") from None
    if not 0.0 <= test_fraction < 1.0:
        from tapeflow.core.errors import InvalidArgumentError

        raise InvalidArgumentError(f"test_fraction = {test_fraction} is not in [0, 1)", "Digits")
    d = load_digits()
    x = d.images.astype(np.uint8)
    y = d.target.astype(np.uint8)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = round(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (x[train], y[train]), (x[test], y[test])


digits.load_data = digits
