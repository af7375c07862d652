"""``tf.data.experimental``: the names TensorFlow kept there (AUTOTUNE and the cardinality constants).

>>> import tapeflow as tf
>>> tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE
True
"""
from __future__ import annotations

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def __getattr__(name):
    if name in ("CsvDataset", "make_csv_dataset"):  # tf.data.experimental's CSV readers
        from . import _readers_more

        return getattr(_readers_more, name)
    raise AttributeError(f"module 'tapeflow.data.experimental' has no attribute {name!r}")


def cardinality(dataset):
    """``dataset.cardinality()``: the number of elements, -1 if infinite, -2 if unknown.

    >>> import tapeflow as tf
    >>> int(tf.data.experimental.cardinality(tf.data.Dataset.range(4).batch(3)))
    2
    """
    return dataset.cardinality()


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """``Dataset.group_by_window`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf
    >>> ds = tf.data.Dataset.range(6).apply(
    ...     tf.data.experimental.group_by_window(lambda x: x % 2, lambda k, w: w.batch(3), window_size=3))
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2, 4], [1, 3, 5]]
    """
    return lambda ds: ds.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """``Dataset.bucket_by_sequence_length`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf
    >>> ds = tf.data.Dataset.range(1, 5).map(lambda n: tf.fill([n], n))
    >>> fn = tf.data.experimental.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3], [2, 2])
    >>> [b.numpy().tolist() for b in ds.apply(fn)]
    [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    """
    return lambda ds: ds.bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                                                   padded_shapes, padding_values, pad_to_bucket_boundary,
                                                   no_padding, drop_remainder)


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """``Dataset.rejection_resample`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf
    >>> fn = tf.data.experimental.rejection_resample(lambda x: tf.cast(x % 2, tf.int32), [1.0, 0.0], [0.5, 0.5], 1)
    >>> [int(x) for _, x in tf.data.Dataset.range(6).apply(fn)]
    [0, 2, 4]
    """
    return lambda ds: ds.rejection_resample(class_func, target_dist, initial_dist, seed)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """``tf.data.Dataset.sample_from_datasets``.

    >>> import tapeflow as tf
    >>> ds = tf.data.experimental.sample_from_datasets([tf.data.Dataset.range(2), tf.data.Dataset.range(5, 6)],
    ...                                               seed=0)
    >>> sorted(int(x) for x in ds)
    [0, 1, 5]
    """
    from .dataset import Dataset

    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """``tf.data.Dataset.choose_from_datasets``.

    >>> import tapeflow as tf
    >>> c = tf.data.Dataset.range(2).repeat(2)
    >>> ds = tf.data.experimental.choose_from_datasets([tf.data.Dataset.range(5), tf.data.Dataset.range(7, 9)], c)
    >>> [int(x) for x in ds]
    [0, 7, 1, 8]
    """
    from .dataset import Dataset

    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def scan(initial_state, scan_func):
    """``Dataset.scan`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf
    >>> fn = tf.data.experimental.scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s))
    >>> [int(x) for x in tf.data.Dataset.range(4).apply(fn)]
    [0, 0, 1, 3]
    """
    return lambda ds: ds.scan(initial_state, scan_func)


def unique():
    """``Dataset.unique`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf
    >>> [int(x) for x in tf.data.Dataset.from_tensor_slices([2, 2, 1]).apply(tf.data.experimental.unique())]
    [2, 1]
    """
    return lambda ds: ds.unique()


def ignore_errors(log_warning=False):
    """``Dataset.ignore_errors`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf
    >>> ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0]).map(lambda x: tf.debugging.check_numerics(1 / x, "x"))
    >>> [float(x) for x in ds.apply(tf.data.experimental.ignore_errors())]
    [1.0]
    """
    return lambda ds: ds.ignore_errors(log_warning)


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """``dataset.save(path, ...)`` (TensorFlow's older spelling).

    >>> import tapeflow as tf, tempfile
    >>> d = tempfile.mkdtemp()
    >>> tf.data.experimental.save(tf.data.Dataset.range(3), d)
    >>> [int(x) for x in tf.data.experimental.load(d)]
    [0, 1, 2]
    """
    return dataset.save(path, compression, shard_func, checkpoint_args)


def load(path, element_spec=None, compression=None, reader_func=None):
    """``tf.data.Dataset.load`` (TensorFlow's older spelling).

    >>> import tapeflow as tf, tempfile
    >>> d = tempfile.mkdtemp()
    >>> tf.data.Dataset.range(2).save(d)
    >>> int(tf.data.experimental.load(d).cardinality())
    2
    """
    from .dataset import Dataset

    return Dataset.load(path, element_spec, compression, reader_func)


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """``Dataset.snapshot`` as a function for ``Dataset.apply``.

    >>> import tapeflow as tf, tempfile
    >>> ds = tf.data.Dataset.range(3).apply(tf.data.experimental.snapshot(tempfile.mkdtemp()))
    >>> [int(x) for x in ds], [int(x) for x in ds]
    ([0, 1, 2], [0, 1, 2])
    """
    return lambda ds: ds.snapshot(path, compression, reader_func, shard_func)
