"""Typed errors, as TensorFlow names them.

Messages say what was wrong and what was allowed, and end with the op::

    indices = 7 is not in [0, 3) [Op:Gather]

>>> import tapeflow as tf
>>> try:
...     tf.gather([0, 1, 2], 7)
... except tf.errors.InvalidArgumentError as e:
...     print(e)
indices = 7 is not in [0, 3) [Op:Gather]
"""
from __future__ import annotations


class OpError(Exception):
    """Base of the errors an op raises.  ``op`` names the op (e.g. ``"Gather"``)."""

    def __init__(self, message: str, op: str | None = None) -> None:
        self.message, self.op = message, op
        super().__init__(f"{message} [Op:{op}]" if op else message)


class InvalidArgumentError(OpError, ValueError):
    """An argument has the wrong shape, dtype or value."""


class NotFoundError(OpError, LookupError):
    """A file, device or name that does not exist."""


class AlreadyExistsError(OpError):
    pass


class ResourceExhaustedError(OpError, MemoryError):
    """Out of memory on a device."""


class UnimplementedError(OpError, NotImplementedError):
    """The operation exists but not for these arguments (dtype, device)."""


class FailedPreconditionError(OpError, RuntimeError):
    """The system is not in a state to run the operation (e.g. an uninitialized value)."""


class OutOfRangeError(OpError, IndexError):
    """Iteration went past the end."""


class InternalError(OpError, RuntimeError):
    pass


class UnavailableError(OpError, RuntimeError):
    """A device or service is not reachable."""


class DataLossError(OpError, IOError):
    """Unrecoverable data corruption (e.g. a damaged checkpoint)."""


class CancelledError(OpError):
    pass


class UnknownError(OpError):
    pass


# ---- warnings --------------------------------------------------------------------------------------
# TensorFlow warns through ``logging``; tapeflow warns through ``warnings`` with these categories, so a
# program can silence, log or escalate one kind alone (``warnings.filterwarnings("ignore", category=...)``).

class TapeflowWarning(UserWarning):
    """Base of the warnings tapeflow issues: ``warnings.filterwarnings("error", category=TapeflowWarning)``
    turns every one of them into an exception.

    >>> import warnings
    >>> import tapeflow as tf
    >>> issubclass(tf.errors.PerformanceWarning, tf.errors.TapeflowWarning)
    True
    """


class PerformanceWarning(TapeflowWarning):
    """Code runs correctly but slower than it could (e.g. ``tf.vectorized_map`` falling back to a loop).

    >>> import warnings
    >>> import tapeflow as tf
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always", tf.errors.PerformanceWarning)
    ...     y = tf.vectorized_map(lambda x: tf.py_function(lambda v: v, [x], tf.float32), tf.ones([2]))
    >>> [c.category.__name__ for c in w]
    ['PerformanceWarning']
    """


class CheckpointWarning(TapeflowWarning):
    """A checkpoint or saved model was restored only in part (values that match nothing, skipped mismatches,
    paths outside the checkpoint directory).

    >>> import tapeflow as tf
    >>> issubclass(tf.errors.CheckpointWarning, UserWarning)
    True
    """


class DevicePlacementWarning(TapeflowWarning, RuntimeWarning):
    """An op asked for a device that is not there and runs on another (soft device placement).

    >>> import tapeflow as tf
    >>> issubclass(tf.errors.DevicePlacementWarning, RuntimeWarning)
    True
    """


class TrainingWarning(TapeflowWarning):
    """``Model.fit`` or a callback cannot do what was asked and goes on (the input ran out of batches, a
    monitored metric is missing from the logs).

    >>> import tapeflow as tf
    >>> issubclass(tf.errors.TrainingWarning, tf.errors.TapeflowWarning)
    True
    """


__all__ = [n for n in dir() if n.endswith(("Error", "Warning"))]
