"""Keras's data sets (``tf.keras.datasets``): ``mnist``, ``fashion_mnist``, ``cifar10``, ``cifar100``,
``imdb`` and ``boston_housing``, each with ``load_data()`` returning Keras's arrays.

Files live in Keras's cache, ``$KERAS_HOME/datasets/`` (default ``~/.keras/datasets/``), under
Keras's names, so a cache TensorFlow filled serves tapeflow too; a missing file is downloaded from
Keras's URL.  Offline, the error names the file and the exact path to put it at.

>>> import tapeflow as tf
>>> tf.keras.datasets.mnist.FILE
'mnist.npz'
"""
from __future__ import annotations

import gzip
import json
import os
import pickle
import sys
import types

import numpy as np

from . import utils as _utils

__all__ = ["boston_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist"]

_BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def _module(name, doc, **attrs):
    m = types.ModuleType(f"{__name__}.{name}", doc)
    m.__dict__.update(attrs)
    sys.modules[m.__name__] = m  # import tapeflow.nn.datasets.mnist works too
    for v in attrs.values():
        if callable(v) and hasattr(v, "__qualname__"):
            v.__module__ = m.__name__
    return m


# -- MNIST, Boston housing, IMDB: one .npz each ---------------------------------------------------------

def _mnist_load_data(path="mnist.npz"):
    """``(x_train, y_train), (x_test, y_test)``: uint8 arrays (60000, 28, 28), (60000,), (10000, 28, 28),
    (10000,), from ``$KERAS_HOME/datasets/mnist.npz`` (downloaded once from Keras's URL).

    >>> import tapeflow as tf
    >>> tf.keras.datasets.mnist.ORIGIN
    'https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz'
    """
    p = _utils.get_file(fname=path, origin=mnist.ORIGIN, file_hash=mnist.FILE_HASH)
    with np.load(p, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


mnist = _module("mnist", "MNIST digits (Keras's mnist.npz).", load_data=_mnist_load_data, FILE="mnist.npz",
                ORIGIN=_BASE + "mnist.npz",
                FILE_HASH="731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1")


def _boston_load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)`` of the Boston housing prices (13 features), shuffled by
    ``seed`` and split with ``test_split`` as Keras does.

    >>> import tapeflow as tf
    >>> tf.keras.datasets.boston_housing.FILE
    'boston_housing.npz'
    """
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")
    p = _utils.get_file(path, origin=boston_housing.ORIGIN, file_hash=boston_housing.FILE_HASH)
    with np.load(p, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    idx = np.arange(len(x))
    np.random.RandomState(seed).shuffle(idx)
    x, y = x[idx], y[idx]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))


boston_housing = _module("boston_housing", "Boston housing prices (Keras's boston_housing.npz).",
                         load_data=_boston_load_data, FILE="boston_housing.npz", ORIGIN=_BASE + "boston_housing.npz",
                         FILE_HASH="f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5")


def _remove_long_seq(maxlen, seq, label):
    keep = [i for i, s in enumerate(seq) if len(s) < maxlen]
    return [seq[i] for i in keep], [label[i] for i in keep]


def _imdb_load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
                    index_from=3, **kwargs):
    """IMDB reviews as word-index lists (object arrays) and 0/1 labels, with Keras's ``num_words``,
    ``skip_top``, ``maxlen``, ``seed``, ``start_char``, ``oov_char`` and ``index_from``.

    >>> import tapeflow as tf
    >>> tf.keras.datasets.imdb.FILE
    'imdb.npz'
    """
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
    p = _utils.get_file(fname=path, origin=imdb.ORIGIN, file_hash=imdb.FILE_HASH)
    with np.load(p, allow_pickle=True) as f:
        x_train, labels_train = f["x_train"], f["y_train"]
        x_test, labels_test = f["x_test"], f["y_test"]
    rng = np.random.RandomState(seed)
    idx = np.arange(len(x_train))
    rng.shuffle(idx)
    x_train, labels_train = x_train[idx], labels_train[idx]
    idx = np.arange(len(x_test))
    rng.shuffle(idx)
    x_test, labels_test = x_test[idx], labels_test[idx]
    if start_char is not None:
        x_train = [[start_char] + [w + index_from for w in x] for x in x_train]
        x_test = [[start_char] + [w + index_from for w in x] for x in x_test]
    elif index_from:
        x_train = [[w + index_from for w in x] for x in x_train]
        x_test = [[w + index_from for w in x] for x in x_test]
    else:
        x_train = [list(x) for x in x_train]
        x_test = [list(x) for x in x_test]
    if maxlen:
        x_train, labels_train = _remove_long_seq(maxlen, x_train, labels_train)
        x_test, labels_test = _remove_long_seq(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                             "Increase maxlen.")
    xs = x_train + x_test
    labels = np.concatenate([labels_train, labels_test])
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    else:
        xs = [[w for w in x if skip_top <= w < num_words] for x in xs]
    n = len(x_train)
    return (np.array(xs[:n], dtype="object"), labels[:n]), (np.array(xs[n:], dtype="object"), labels[n:])


def _imdb_word_index(path="imdb_word_index.json"):
    """The word -> index dict of the IMDB data (``imdb_word_index.json``)."""
    p = _utils.get_file(fname=path, origin=_BASE + "imdb_word_index.json",
                        file_hash="bfafd718b763782e994055a2d397834f")
    with open(p) as f:
        return json.load(f)


imdb = _module("imdb", "IMDB movie reviews (Keras's imdb.npz).", load_data=_imdb_load_data,
               get_word_index=_imdb_word_index, FILE="imdb.npz", ORIGIN=_BASE + "imdb.npz",
               FILE_HASH="69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f")


# -- Fashion-MNIST: four IDX files ----------------------------------------------------------------------

def _fashion_load_data():
    """``(x_train, y_train), (x_test, y_test)`` of Fashion-MNIST: uint8 (60000, 28, 28) images and labels,
    from ``$KERAS_HOME/datasets/fashion-mnist/`` (four gzipped IDX files, Keras's names).

    >>> import tapeflow as tf
    >>> tf.keras.datasets.fashion_mnist.FILES[0]
    'train-labels-idx1-ubyte.gz'
    """
    paths = [_utils.get_file(f, origin=_BASE + f, cache_subdir=os.path.join("datasets", "fashion-mnist"))
             for f in fashion_mnist.FILES]
    with gzip.open(paths[0], "rb") as f:
        y_train = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[1], "rb") as f:
        x_train = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_train), 28, 28)
    with gzip.open(paths[2], "rb") as f:
        y_test = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[3], "rb") as f:
        x_test = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)


fashion_mnist = _module("fashion_mnist", "Fashion-MNIST (Keras's four IDX files).", load_data=_fashion_load_data,
                        FILES=["train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
                               "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"])


# -- CIFAR: a tar.gz of pickled batches -------------------------------------------------------------------

class _Unpickler(pickle.Unpickler):
    """Only what the CIFAR batches hold: NumPy arrays (no other class may be built from the file)."""

    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"),
                ("numpy._core.multiarray", "scalar")}

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a CIFAR batch file may hold only NumPy arrays; found {module}.{name}")


def _load_batch(fpath, label_key="labels"):
    with open(fpath, "rb") as f:
        d = _Unpickler(f, encoding="bytes").load()
    d = {(k.decode("utf8") if isinstance(k, bytes) else k): v for k, v in d.items()}
    data = np.asarray(d["data"], np.uint8)
    return data.reshape(data.shape[0], 3, 32, 32), np.asarray(d[label_key])


def _cifar10_load_data():
    """``(x_train, y_train), (x_test, y_test)`` of CIFAR-10: uint8 (50000, 32, 32, 3) images, labels of
    shape (n, 1), from ``$KERAS_HOME/datasets/cifar-10-batches-py-target/`` (Keras's layout).

    >>> import tapeflow as tf
    >>> tf.keras.datasets.cifar10.ORIGIN
    'https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz'
    """
    path = _utils.get_file(fname="cifar-10-batches-py-target", origin=cifar10.ORIGIN, extract=True,
                           file_hash=cifar10.FILE_HASH)
    path = os.path.join(path, "cifar-10-batches-py")
    xs, ys = [], []
    for i in range(1, 6):
        x, y = _load_batch(os.path.join(path, f"data_batch_{i}"))
        xs.append(x)
        ys.append(np.asarray(y, np.uint8))
    x_test, y_test = _load_batch(os.path.join(path, "test_batch"))
    x_train = np.concatenate(xs).transpose(0, 2, 3, 1)
    y_train = np.concatenate(ys).reshape(-1, 1)
    return (x_train, y_train), (x_test.transpose(0, 2, 3, 1), np.asarray(y_test, np.uint8).reshape(-1, 1))


cifar10 = _module("cifar10", "CIFAR-10 (Keras's cifar-10-python.tar.gz).", load_data=_cifar10_load_data,
                  ORIGIN="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
                  FILE_HASH="6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce")


def _cifar100_load_data(label_mode="fine"):
    """``(x_train, y_train), (x_test, y_test)`` of CIFAR-100 with ``label_mode`` "fine" (100 classes) or
    "coarse" (20), from ``$KERAS_HOME/datasets/cifar-100-python-target/``.

    >>> import tapeflow as tf
    >>> tf.keras.datasets.cifar100.ORIGIN
    'https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz'
    """
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    path = _utils.get_file(fname="cifar-100-python-target", origin=cifar100.ORIGIN, extract=True,
                           file_hash=cifar100.FILE_HASH)
    path = os.path.join(path, "cifar-100-python")
    x_train, y_train = _load_batch(os.path.join(path, "train"), label_key=f"{label_mode}_labels")
    x_test, y_test = _load_batch(os.path.join(path, "test"), label_key=f"{label_mode}_labels")
    return (x_train.transpose(0, 2, 3, 1), np.reshape(y_train, (-1, 1))), \
        (x_test.transpose(0, 2, 3, 1), np.reshape(y_test, (-1, 1)))


cifar100 = _module("cifar100", "CIFAR-100 (Keras's cifar-100-python.tar.gz).", load_data=_cifar100_load_data,
                   ORIGIN="https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
                   FILE_HASH="85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7")
