"""MNIST handwritten digits: 60,000 training and 10,000 test images, 28x28 uint8, labels 0-9.

Downloaded once (about 11 MB) from the first mirror that answers, checked against the
published sizes and MD5 sums, into ``data_home()/mnist``.
"""
from __future__ import annotations

from ._idx_loader import load as _load

MIRRORS = [
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
]
FILES = {
    "train_images": ("train-images-idx3-ubyte.gz", 9912422, "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
    "train_labels": ("train-labels-idx1-ubyte.gz", 28881, "d53e105ee54ea40749a09fcbcd1e9432"),
    "test_images": ("t10k-images-idx3-ubyte.gz", 1648877, "9fb629c4189551a2d022fa330f9573f3"),
    "test_labels": ("t10k-labels-idx1-ubyte.gz", 4542, "ec29112dd5afa0611ce80d1b7f02629c"),
}


def load_data(cache_dir=None):
    """``(x_train, y_train), (x_test, y_test)``: uint8 arrays of shape (60000, 28, 28), (60000,),
    (10000, 28, 28), (10000,), downloading the IDX files on first use.

    >>> from tapeflow.data.datasets import mnist
    >>> sorted(mnist.FILES)
    ['test_images', 'test_labels', 'train_images', 'train_labels']
    """
    return _load("mnist", FILES, MIRRORS, cache_dir)
