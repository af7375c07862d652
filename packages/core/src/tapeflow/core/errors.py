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

    def __init__(self, message: str, op: str | None = None):
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


__all__ = [n for n in dir() if n.endswith("Error")]
