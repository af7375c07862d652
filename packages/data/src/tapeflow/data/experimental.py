"""``tf.data.experimental``: the names TensorFlow kept there (AUTOTUNE and the cardinality constants).

>>> import tapeflow as tf
>>> tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE
True
"""
from __future__ import annotations

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def cardinality(dataset):
    """``dataset.cardinality()``: the number of elements, -1 if infinite, -2 if unknown.

    >>> import tapeflow as tf
    >>> int(tf.data.experimental.cardinality(tf.data.Dataset.range(4).batch(3)))
    2
    """
    return dataset.cardinality()
