"""The backend interface every tapeflow backend implements.

Buffers are opaque *handles*; core never looks inside one.  A backend offers:

- ``alloc(shape, np_dtype) -> (handle, host)``: a new dense buffer; ``host`` is a
  NumPy array sharing the memory when the device is the host (CPU), else ``None``;
- ``from_numpy(array) -> (handle, host)``: a copy of a host array on the device;
- ``to_numpy(handle, host, shape, np_dtype) -> ndarray``: the values on the host
  (no copy on the CPU);
- the kernel table: callables with the signatures of the C entry points declared
  in ``cdef/*.h`` (``unary``, ``binary_flat``, ``binary_strided``, ``reduce``,
  ``argreduce``, ``matmul``, ...), taking handles where C takes pointers and
  returning a status code (0 = success);
- ``synchronize()``: wait for queued work (a no-op on the CPU).
"""
from __future__ import annotations


class Backend:
    name = "?"
    #: the names of the kernel-table entries; a backend must provide each
    KERNELS: tuple = ()

    def alloc(self, shape, np_dtype):  # pragma: no cover - interface
        raise NotImplementedError

    def from_numpy(self, array):  # pragma: no cover - interface
        raise NotImplementedError

    def to_numpy(self, handle, host, shape, np_dtype):  # pragma: no cover - interface
        raise NotImplementedError

    def synchronize(self) -> None:
        return None

    def missing_kernels(self) -> list:
        """Names in the kernel table this backend does not implement."""
        return [k for k in self.KERNELS if not callable(getattr(self, k, None))]
