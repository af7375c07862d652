"""Keras's utilities (``tf.keras.utils``): ``to_categorical``, ``normalize``, ``pad_sequences``,
``set_random_seed``, ``split_dataset``, ``image_dataset_from_directory``,
``text_dataset_from_directory``, ``get_file`` and ``PyDataset``/``Sequence`` (batches by index for
``fit``), with Keras 3's arguments and results.

The dataset functions return ``tapeflow.data`` Datasets (tapeflow-data must be installed); the
image loader reads files with Pillow (the ``images`` extra of tapeflow-nn).

>>> import tapeflow as tf
>>> tf.keras.utils.to_categorical([0, 2], num_classes=3).tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""
from __future__ import annotations

import hashlib
import os
import random
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile

import numpy as np

import tapeflow.core as K
from tapeflow.core.tensor import Tensor
from tapeflow.nn.callbacks import _message

__all__ = ["PyDataset", "Sequence", "get_file", "image_dataset_from_directory", "normalize", "pad_sequences",
           "set_random_seed", "split_dataset", "text_dataset_from_directory", "to_categorical"]

#: fetches a URL into a file (``urllib.request.urlretrieve``'s signature); tests replace it to stay offline
urlretrieve = urllib.request.urlretrieve


# -- arrays --------------------------------------------------------------------------------------------

def to_categorical(x, num_classes=None):
    """One-hot rows for integer class vectors (float32), as ``keras.utils.to_categorical``.

    A trailing axis of size 1 is dropped first (``(n, 1)`` labels give ``(n, num_classes)``);
    ``num_classes`` defaults to ``max(x) + 1``.  A tensor gives a tensor, anything else a NumPy array.

    >>> import tapeflow as tf
    >>> tf.keras.utils.to_categorical([[1], [0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    was_tensor = isinstance(x, Tensor)
    t = K.convert_to_tensor(x) if was_tensor else K.constant(np.asarray(x))
    if not t.dtype.is_integer:
        if t.dtype.is_floating:
            t = K.cast(t, K.int64)  # Keras casts class vectors with int64
        else:
            raise TypeError(f"to_categorical takes integer class indices; got {t.dtype.name}")
    shape = tuple(t.shape)
    if len(shape) > 1 and shape[-1] == 1:
        t = K.squeeze(t, -1)
    if num_classes is None:
        if int(K.size(t)) == 0:
            raise ValueError("to_categorical of an empty array needs num_classes")
        num_classes = int(K.reduce_max(t)) + 1
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(f"num_classes={num_classes!r}; allowed: a positive int")
    if int(K.size(t)) and (int(K.reduce_min(t)) < 0 or int(K.reduce_max(t)) >= num_classes):
        raise ValueError(f"to_categorical: class indices must be in [0, {num_classes}); got values in "
                         f"[{int(K.reduce_min(t))}, {int(K.reduce_max(t))}]")
    out = K.one_hot(t, int(num_classes), dtype=K.float32)
    return out if was_tensor else out.numpy()


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (zero vectors stay zero), as ``keras.utils.normalize``.

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> tf.keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"normalize: order={order!r}; allowed: a positive int (1 or 2, ...)")
    was_tensor = isinstance(x, Tensor)
    t = K.convert_to_tensor(x) if was_tensor else K.constant(np.asarray(x))
    if not t.dtype.is_floating:
        t = K.cast(t, K.float32)
    ax = -1 if axis is None else axis
    if order == 1:
        norm = K.reduce_sum(K.abs(t), axis=ax, keepdims=True)
    elif order == 2:
        norm = K.sqrt(K.reduce_sum(K.square(t), axis=ax, keepdims=True))
    else:
        p = K.cast(order, t.dtype)
        norm = K.pow(K.reduce_sum(K.pow(K.abs(t), p), axis=ax, keepdims=True), 1.0 / p)
    norm = K.where(K.equal(norm, 0), K.ones_like(norm), norm)
    out = K.divide(t, norm)
    return out if was_tensor else out.numpy()


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Lists of sequences padded (or cut) to one length: a 2-D array of shape ``(len(sequences), maxlen)``.

    As ``keras.utils.pad_sequences``: ``padding``/``truncating`` "pre" (the default) pads or cuts at
    the start, "post" at the end; ``maxlen`` defaults to the longest sequence.

    >>> import tapeflow as tf
    >>> tf.keras.utils.pad_sequences([[1, 2, 3], [4]], maxlen=2).tolist()
    [[2, 3], [0, 4]]
    >>> tf.keras.utils.pad_sequences([[1], [2, 3]], padding="post", value=9).tolist()
    [[1, 9], [2, 3]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("pad_sequences: `sequences` must be iterable.")
    for arg, v in (("padding", padding), ("truncating", truncating)):
        if v not in ("pre", "post"):
            raise ValueError(f'{arg} type "{v}" not understood; allowed: "pre" or "post"')
    lengths, sample_shape, flag = [], (), True
    for x in sequences:
        try:
            lengths.append(len(x))
            if flag and len(x):
                sample_shape = np.asarray(x).shape[1:]
                flag = False
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {x!r}") from e
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    np_dtype = np.dtype(dtype)
    is_text = np.issubdtype(np_dtype, np.str_) or np_dtype.kind == "O"
    if isinstance(value, str) and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}; "
                         "use dtype=object for strings")
    x = np.full((len(sequences), maxlen) + sample_shape, value, dtype=np_dtype)
    for i, s in enumerate(sequences):
        if not len(s) or not maxlen:
            continue
        trunc = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        trunc = np.asarray(trunc, dtype=np_dtype)
        if trunc.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {trunc.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            x[i, :len(trunc)] = trunc
        else:
            x[i, -len(trunc):] = trunc
    return x


def set_random_seed(seed) -> None:
    """Seed Python's ``random``, NumPy's global generator and tapeflow's (``tf.random.set_seed``) at once,
    as ``keras.utils.set_random_seed`` does, so a program repeats exactly.

    >>> import tapeflow as tf
    >>> tf.keras.utils.set_random_seed(3); a = tf.random.uniform([2]).numpy()
    >>> tf.keras.utils.set_random_seed(3); b = tf.random.uniform([2]).numpy()
    >>> bool((a == b).all())
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(int(seed))
    np.random.seed(int(seed) % (2 ** 32))
    K.random.set_seed(int(seed))


# -- Sequence ------------------------------------------------------------------------------------------

class PyDataset:
    """Batches by index for ``fit``/``evaluate``/``predict`` (Keras 3's ``PyDataset``, also ``Sequence``):
    subclass it with ``__len__`` (the number of batches) and ``__getitem__(i)`` (batch ``i``: ``x``,
    ``(x, y)`` or ``(x, y, sample_weight)``); ``on_epoch_end`` runs after each epoch.  ``fit``
    shuffles the batch order with ``shuffle=True``.  Batches load in the training thread:
    ``workers`` must be 1 and ``use_multiprocessing`` False (``max_queue_size`` matters only with
    several workers, as in Keras).

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> class Squares(tf.keras.utils.PyDataset):
    ...     def __len__(self):
    ...         return 2
    ...     def __getitem__(self, i):
    ...         x = np.arange(4 * i, 4 * i + 4, dtype=np.float32)[:, None]
    ...         return x, x ** 2
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    >>> model.compile("sgd", "mse")
    >>> len(model.fit(Squares(), epochs=2, verbose=0).history["loss"])
    2
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10) -> None:
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers != 1:
            raise ValueError(f"PyDataset(workers={workers!r}): tapeflow loads batches in the training thread; "
                             "allowed: workers=1")
        if use_multiprocessing:
            raise ValueError("PyDataset(use_multiprocessing=True): tapeflow loads batches in the training thread; "
                             "allowed: use_multiprocessing=False")
        if isinstance(max_queue_size, bool) or not isinstance(max_queue_size, (int, np.integer)) or \
                max_queue_size < 1:
            raise ValueError(f"PyDataset(max_queue_size={max_queue_size!r}); allowed: a positive int")
        self._workers, self._use_multiprocessing, self._max_queue_size = 1, False, int(max_queue_size)

    @property
    def workers(self):
        return self.__dict__.get("_workers", 1)

    @property
    def use_multiprocessing(self):
        return self.__dict__.get("_use_multiprocessing", False)

    @property
    def max_queue_size(self):
        return self.__dict__.get("_max_queue_size", 10)

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index) to return batch `index`")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__() (the number of batches)")

    @property
    def num_batches(self):
        return len(self)

    def on_epoch_begin(self):
        """Called before each epoch (override)."""

    def on_epoch_end(self):
        """Called after each epoch (override, e.g. to reshuffle)."""


Sequence = PyDataset


# -- datasets ------------------------------------------------------------------------------------------

def _data():
    try:
        from tapeflow import data
    except ImportError:
        raise ImportError("this utility returns a tapeflow Dataset: pip install tapeflow-data") from None
    return data


def _size(v, n, name):
    if v is None:
        return None
    if isinstance(v, float) and 0.0 < v < 1.0:
        return round(n * v)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 < v <= n:
        return int(v)
    raise ValueError(f"{name}={v!r} with {n} samples; allowed: a float in (0, 1), an int in [1, {n}], or None")


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Split arrays (a tuple of arrays: one per part of an example) or a finite Dataset into two Datasets
    of ``left_size`` and ``right_size`` examples (a float is a fraction, an int a count; one may be
    None: the rest; both None: half and half), shuffled first with ``shuffle=True`` (by ``seed``).

    >>> import numpy as np
    >>> import tapeflow as tf
    >>> left, right = tf.keras.utils.split_dataset(np.arange(10), left_size=0.8)
    >>> int(left.cardinality()), int(right.cardinality())
    (8, 2)
    """
    data = _data()
    if isinstance(dataset, data.Dataset):
        n = int(dataset.cardinality())
        if n < 0:
            raise ValueError("split_dataset needs a dataset of known, finite size (its cardinality is "
                             f"{'infinite' if n == -1 else 'unknown'})")
        elements = list(dataset.as_numpy_iterator())
        if elements and isinstance(elements[0], tuple):
            arrays = tuple(np.stack([e[i] for e in elements]) for i in range(len(elements[0])))
        elif elements and isinstance(elements[0], dict):
            arrays = {k: np.stack([e[k] for e in elements]) for k in elements[0]}
        else:
            arrays = np.stack(elements) if elements else np.zeros((0,))
    elif isinstance(dataset, (list, tuple)) and dataset and all(hasattr(a, "__len__") for a in dataset) and \
            not isinstance(dataset[0], (int, float)):
        arrays = tuple(np.asarray(a) for a in dataset)
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise ValueError(f"split_dataset: the arrays differ in length: {[len(a) for a in arrays]}")
    else:
        arrays = np.asarray(dataset)
        if arrays.ndim == 0:
            raise TypeError(f"split_dataset takes arrays, a tuple of arrays or a Dataset; got "
                            f"{type(dataset).__name__}")
        n = len(arrays)
    left, right = _size(left_size, n, "left_size"), _size(right_size, n, "right_size")
    if left is None and right is None:
        left = round(n * 0.5)
    if left is None:
        left = n - right
    if right is None:
        right = n - left
    if left + right > n:
        raise ValueError(f"left_size + right_size = {left + right} is more than the {n} samples")
    if left == 0 or right == 0:
        raise ValueError(f"split_dataset: one side is empty (left {left}, right {right} of {n})")
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)

    def take(idx):
        if isinstance(arrays, tuple):
            return data.Dataset.from_tensor_slices(tuple(a[idx] for a in arrays))
        if isinstance(arrays, dict):
            return data.Dataset.from_tensor_slices({k: a[idx] for k, a in arrays.items()})
        return data.Dataset.from_tensor_slices(arrays[idx])

    return take(order[:left]), take(order[left:left + right])


_IMAGE_EXT = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def _index_directory(directory, labels, formats, class_names, shuffle, seed, follow_links, what):
    if not os.path.isdir(directory):
        raise ValueError(f"{what}: directory {directory!r} does not exist")
    if labels == "inferred":
        subdirs = sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None:
            if sorted(class_names) != sorted(subdirs) and set(class_names) != set(subdirs):
                raise ValueError(f"{what}: class_names {list(class_names)} do not match the subdirectories of "
                                 f"{directory!r}: {subdirs}")
            subdirs = list(class_names)
        class_names = subdirs
        dirs = [(os.path.join(directory, d), i) for i, d in enumerate(subdirs)]
    else:
        dirs = [(directory, None)]
    paths, idx = [], []
    for d, label in dirs:
        found = []
        for root, _, files in os.walk(d, followlinks=follow_links):
            for f in files:
                if f.lower().endswith(formats):
                    found.append(os.path.join(root, f))
        found.sort()
        paths += found
        idx += [label] * len(found)
    if labels not in ("inferred", None):
        labels = list(labels)
        if len(labels) != len(paths):
            raise ValueError(f"{what}: {len(labels)} labels were given for the {len(paths)} files found in "
                             f"{directory!r} (sorted by path); allowed: one label per file")
        idx = labels
    if shuffle:
        if seed is None:
            seed = np.random.randint(1_000_000)
        order = np.random.RandomState(seed).permutation(len(paths))
        paths = [paths[i] for i in order]
        idx = [idx[i] for i in order]
    return paths, idx, class_names, seed


def _subset(paths, labels, validation_split, subset, seed, shuffle, what):
    if validation_split is None:
        if subset is not None:
            raise ValueError(f"{what}: subset={subset!r} needs validation_split")
        return [(paths, labels)]
    if not 0 < validation_split < 1:
        raise ValueError(f"{what}: validation_split={validation_split}; allowed: a float in (0, 1)")
    if subset not in ("training", "validation", "both"):
        raise ValueError(f'{what}: with validation_split, subset must be "training", "validation" or "both"; '
                         f"got {subset!r}")
    if shuffle and seed is None:
        raise ValueError(f"{what}: using validation_split with shuffle needs a seed (the same in both calls)")
    nval = int(validation_split * len(paths))
    train = (paths[:len(paths) - nval], labels[:len(paths) - nval])
    val = (paths[len(paths) - nval:], labels[len(paths) - nval:])
    return {"training": [train], "validation": [val], "both": [train, val]}[subset]


def _label_array(labels, label_mode, num_classes, what):
    if label_mode == "int":
        return np.asarray(labels, np.int32)
    if label_mode == "categorical":
        return to_categorical(np.asarray(labels, np.int64), num_classes) if labels else \
            np.zeros((0, num_classes), np.float32)
    if label_mode == "binary":
        if num_classes != 2:
            raise ValueError(f'{what}: label_mode="binary" needs exactly 2 classes; found {num_classes}')
        return np.asarray(labels, np.float32).reshape(-1, 1)
    raise ValueError(f'{what}: label_mode={label_mode!r}; allowed: "int", "categorical", "binary" or None')


def _resize(img, size, interpolation):
    """``img`` (H, W, C float32 tensor) resized to ``size`` as TensorFlow's ``tf.image.resize`` (half-pixel
    centers, no antialiasing)."""
    h, w = int(img.shape[0]), int(img.shape[1])
    th, tw = size
    if (h, w) == (th, tw):
        return img

    def coords(n_in, n_out):
        scale = n_in / n_out
        pos = K.range(n_out, dtype=K.float32)
        if interpolation == "nearest":
            i = K.cast(K.floor((pos + 0.5) * scale), K.int32)
            return K.minimum(i, n_in - 1), None, None
        src = (pos + 0.5) * scale - 0.5
        low = K.floor(src)
        frac = src - low
        lo = K.maximum(K.cast(low, K.int32), 0)
        hi = K.minimum(K.cast(K.ceil(src), K.int32), n_in - 1)
        return lo, hi, frac

    ylo, yhi, yf = coords(h, th)
    xlo, xhi, xf = coords(w, tw)
    if interpolation == "nearest":
        return K.gather(K.gather(img, ylo, axis=0), xlo, axis=1)
    top = K.gather(img, ylo, axis=0)
    bot = K.gather(img, yhi, axis=0)
    yf = K.reshape(yf, [-1, 1, 1])
    xf = K.reshape(xf, [1, -1, 1])

    def lerp_x(rows):
        left, right = K.gather(rows, xlo, axis=1), K.gather(rows, xhi, axis=1)
        return left + (right - left) * xf

    t, b = lerp_x(top), lerp_x(bot)
    return t + (b - t) * yf


def _load_image(path, channels, size, interpolation, crop, pad):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("image_dataset_from_directory reads images with Pillow: pip install "
                          "'tapeflow-nn[images]'") from None
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[channels]
    with Image.open(path) as im:
        arr = np.asarray(im.convert(mode), dtype=np.uint8)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    img = K.cast(K.constant(arr), K.float32)
    h, w = arr.shape[:2]
    th, tw = size
    if crop:
        ch = max(min(h, int(w * th / tw)), 1)
        cw = max(min(w, int(h * tw / th)), 1)
        hs, ws = int((h - ch) / 2), int((w - cw) / 2)
        img = img[hs:hs + ch, ws:ws + cw, :]
    elif pad:
        ph, pw = max(h, int(w * th / tw)), max(w, int(h * tw / th))
        hs, ws = int((ph - h) / 2), int((pw - w) / 2)
        img = K.pad(img, [[hs, ph - h - hs], [ws, pw - w - ws], [0, 0]])
    return _resize(img, size, interpolation)


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, data_format=None,
                                 verbose=True):
    """A Dataset of ``(images, labels)`` batches from image files in class subfolders
    (``directory/<class>/*.png``), as ``keras.utils.image_dataset_from_directory``.

    Images are float32 ``(batch, height, width, channels)`` in [0, 255] (``color_mode``
    "grayscale"/"rgb"/"rgba"), resized to ``image_size`` as ``tf.image.resize`` (``interpolation``
    "bilinear" or "nearest"; ``crop_to_aspect_ratio``/``pad_to_aspect_ratio`` first); labels per
    ``label_mode`` ("int", "categorical", "binary", None: images only), classes in alphanumeric
    order of the subfolders (or ``class_names``).  ``shuffle`` shuffles the file list by ``seed``;
    ``validation_split`` with ``subset`` ("training", "validation", "both") splits it.  The
    dataset has ``class_names`` and ``file_paths`` attributes.

    >>> import os, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> import tapeflow as tf
    >>> root = tempfile.mkdtemp()
    >>> for cls in ("cat", "dog"):
    ...     os.makedirs(os.path.join(root, cls))
    ...     Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(os.path.join(root, cls, "a.png"))
    >>> ds = tf.keras.utils.image_dataset_from_directory(root, image_size=(4, 4), batch_size=2, verbose=False)
    >>> ds.class_names, [tuple(t.shape) for t in next(iter(ds))]
    (['cat', 'dog'], [(2, 4, 4, 3), (2,)])
    """
    what = "image_dataset_from_directory"
    channels = {"grayscale": 1, "rgb": 3, "rgba": 4}.get(color_mode)
    if channels is None:
        raise ValueError(f'{what}: color_mode={color_mode!r}; allowed: "grayscale", "rgb" or "rgba"')
    if interpolation not in ("bilinear", "nearest"):
        raise ValueError(f'{what}: interpolation={interpolation!r}; allowed: "bilinear" or "nearest"')
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(f"{what}: crop_to_aspect_ratio and pad_to_aspect_ratio cannot both be True")
    if data_format not in (None, "channels_last"):
        raise ValueError(f'{what}: data_format={data_format!r}; allowed: None or "channels_last" (tapeflow images '
                         "are channels-last)")
    size = tuple(int(s) for s in image_size)
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f"{what}: image_size={image_size!r}; allowed: (height, width), positive")
    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, verbose, _IMAGE_EXT, what,
                           lambda p: _load_image(p, channels, size, interpolation, crop_to_aspect_ratio,
                                                 pad_to_aspect_ratio))


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, verbose=True):
    """A Dataset of ``(texts, labels)`` batches from ``.txt`` files in class subfolders
    (``directory/<class>/*.txt``), as ``keras.utils.text_dataset_from_directory``: texts are
    string tensors (bytes in NumPy), cut to ``max_length`` characters when given; labels, shuffling
    and splitting as ``image_dataset_from_directory``.

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> root = tempfile.mkdtemp()
    >>> for cls, text in (("neg", "bad"), ("pos", "good")):
    ...     os.makedirs(os.path.join(root, cls))
    ...     _ = open(os.path.join(root, cls, "1.txt"), "w").write(text)
    >>> ds = tf.keras.utils.text_dataset_from_directory(root, shuffle=False, verbose=False)
    >>> texts, labels = next(iter(ds))
    >>> texts.numpy().tolist(), labels.numpy().tolist()
    ([b'bad', b'good'], [0, 1])
    """
    what = "text_dataset_from_directory"
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer))
                                   or max_length < 1):
        raise ValueError(f"{what}: max_length={max_length!r}; allowed: a positive int or None")

    def load(p):
        with open(p, "rb") as f:
            text = f.read()
        if max_length is not None:
            text = text.decode("utf-8", errors="replace")[:max_length].encode("utf-8")
        return np.array(text, dtype=object)

    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, verbose, (".txt",), what, load)


def _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split, subset,
                    follow_links, verbose, formats, what, load):
    data = _data()
    if not (labels in ("inferred", None) or isinstance(labels, (list, tuple))):
        raise ValueError(f'{what}: labels={labels!r}; allowed: "inferred", None or a list of labels, one per file')
    if labels is None:
        label_mode = None
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f'{what}: label_mode={label_mode!r}; allowed: "int", "categorical", "binary" or None')
    if class_names is not None and labels != "inferred":
        raise ValueError(f'{what}: class_names needs labels="inferred"')
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 1):
        raise ValueError(f"{what}: batch_size={batch_size!r}; allowed: a positive int or None")
    given_seed = seed
    paths, idx, class_names, seed = _index_directory(directory, labels, formats, class_names, shuffle, seed,
                                                     follow_links, what)
    if not paths:
        raise ValueError(f"{what}: no files found in directory {directory!r}; allowed formats: {formats}")
    num_classes = len(class_names) if class_names is not None else (len(set(idx)) if label_mode else 0)
    if label_mode in ("categorical", "binary") and labels not in ("inferred", None):
        num_classes = int(max(idx)) + 1
    if verbose:
        _message(f"Found {len(paths)} files" + (f" belonging to {num_classes} classes." if label_mode else "."))
    out = []
    for part_paths, part_labels in _subset(paths, idx, validation_split, subset, given_seed, shuffle, what):
        lab = None if label_mode is None else _label_array(part_labels, label_mode, num_classes, what)

        def load_one(i, part_paths=part_paths, lab=lab):
            i = int(i)
            x = load(part_paths[i])
            return x if lab is None else (x, lab[i])

        # an index per file, each loaded when the dataset reaches it (a known number of elements)
        ds = data.Dataset.from_tensor_slices(np.arange(len(part_paths), dtype=np.int64)).map(load_one)
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds.class_names = class_names
        ds.file_paths = list(part_paths)
        out.append(ds)
    return out if subset == "both" else out[0]


# -- files ---------------------------------------------------------------------------------------------

def _keras_home():
    if "KERAS_HOME" in os.environ:
        return os.environ["KERAS_HOME"]
    base = os.path.expanduser("~")
    if not os.access(base, os.W_OK):
        base = "/tmp"
    return os.path.join(base, ".keras")


def _hash(path, algorithm, chunk=65535):
    h = hashlib.md5(usedforsecurity=False) if algorithm == "md5" else hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _algorithm(algorithm, file_hash):
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None and len(file_hash) == 64):
        return "sha256"
    if algorithm in ("md5", "auto"):
        return "md5"
    raise ValueError(f"hash_algorithm={algorithm!r}; allowed: 'md5', 'sha256' or 'auto'")


def _extract(archive, dest, archive_format):
    formats = ["tar", "zip"] if archive_format in ("auto", None) else \
        [archive_format] if isinstance(archive_format, str) else list(archive_format)
    for fmt in formats:
        if fmt == "tar" and tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                t.extractall(dest, filter="data")
            return True
        if fmt == "zip" and zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                z.extractall(dest)
            return True
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """The local path of a file from ``origin``, downloaded once into Keras's cache,
    ``cache_dir/cache_subdir/fname`` (``cache_dir`` defaults to ``$KERAS_HOME``, else ``~/.keras``),
    checked against ``file_hash`` (SHA-256 or MD5) when given, as ``keras.utils.get_file``.

    A file already there (with the right hash) is used without the network.  ``extract``/``untar``
    unpack an archive (tar or zip) into ``cache_subdir/<fname without extension>`` (``..._extracted``
    when ``fname`` has an extension) and return that folder.  When the download fails (offline,
    blocked), the error names the file and the exact path to put it at.

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> home = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(home, "datasets"))
    >>> _ = open(os.path.join(home, "datasets", "notes.txt"), "w").write("hi")
    >>> p = tf.keras.utils.get_file("notes.txt", origin="https://example.invalid/notes.txt", cache_dir=home)
    >>> p == os.path.join(home, "datasets", "notes.txt")
    True
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    algorithm = _algorithm(hash_algorithm, file_hash)
    base = os.path.expanduser(cache_dir if cache_dir is not None else _keras_home())
    if not os.access(base, os.W_OK) and not os.path.exists(os.path.join(base, cache_subdir)):
        try:
            os.makedirs(base, exist_ok=True)
        except OSError:
            base = os.path.join("/tmp", ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided = fname is not None
    fname = os.fspath(fname) if fname is not None else \
        os.path.basename(urllib.parse.urlsplit(origin).path)
    if not fname:
        raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'. Please specify the "
                         "`fname` argument.")
    if os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    extraction_dir = None
    if extract or untar:
        if provided and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, fname[:fname.find(".")] + "_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
        if not force_download and os.path.isdir(extraction_dir) and os.listdir(extraction_dir) and \
                not os.path.exists(target):
            return extraction_dir  # extracted earlier (or placed there by hand)
    else:
        target = os.path.join(datadir, fname)
    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and _hash(target, algorithm) != file_hash:
        _message(f"A local file was found, but it seems to be incomplete or outdated because the {algorithm} file "
                 f"hash does not match the original value of {file_hash} so we will re-download the data.")
        download = True
    if download:
        _message(f"Downloading data from {origin}")
        part = f"{target}.part-{os.getpid()}"
        try:
            urlretrieve(origin, part)
        except (urllib.error.URLError, OSError, ValueError) as e:
            if os.path.exists(part):
                os.remove(part)
            where = target if extraction_dir is None else \
                f"{target} (or its contents extracted into {extraction_dir})"
            raise OSError(f"could not download {os.path.basename(urllib.parse.urlsplit(origin).path) or fname} "
                          f"from {origin} ({e}); without network access, download it elsewhere and put it at "
                          f"{where}") from None
        if file_hash is not None and _hash(part, algorithm) != file_hash:
            os.remove(part)
            raise ValueError(f"Incomplete or corrupted file detected. The {algorithm} file hash does not match the "
                             f"provided value of {file_hash}.")
        os.replace(part, target)
    if extraction_dir is not None:
        if not _extract(target, extraction_dir, "tar" if untar else archive_format):
            raise ValueError(f"could not extract {target}: not a {archive_format} archive")
        return extraction_dir
    return target
