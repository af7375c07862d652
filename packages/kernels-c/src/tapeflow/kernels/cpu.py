"""The CPU backend: NumPy arrays hold the memory, C kernels (cffi) do the work."""
from __future__ import annotations

import os

import numpy as np

from . import BackendUnavailable, register_backend
from .backend import Backend


def _preload_openblas():
    """Load scipy-openblas32's library globally before our extension, which links to it.

    The extension's rpath points at the folder it was built against, which an
    isolated build deletes; a library already loaded under the same soname is
    found regardless.
    """
    import ctypes
    import os

    import scipy_openblas32

    path = os.path.join(scipy_openblas32.get_lib_dir(), f"lib{scipy_openblas32.get_library()}.so")
    if os.path.exists(path):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


class CPUBackend(Backend):
    name = "cpu"

    def __init__(self):
        # Idle OpenMP threads sleep instead of spinning: on a machine with few, busy cores,
        # spinning workers steal the time of the thread that has work (measured: parallel
        # kernels 10-100x slower under load).  Read by libgomp when it loads; a user's own
        # setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        _preload_openblas()
        from . import _cpu  # the compiled library (built at install time)

        self.ffi, self.lib = ffi, lib = _cpu.ffi, _cpu.lib
        from_buffer = ffi.from_buffer
        empty = np.empty

        def alloc(shape, np_dtype):
            host = empty(shape, np_dtype)
            return from_buffer(host), host

        def from_numpy(array):
            host = np.array(array, order="C", copy=True)
            return from_buffer(host), host

        self.alloc = alloc
        self.from_numpy = from_numpy
        self.new_int64 = lambda values: ffi.new("int64_t[]", list(values))
        self.host_ptr = from_buffer  # small host-side parameter arrays (fill values, ...)
        # the kernel table: C entry points called directly (they take handles)
        prefix = "tpf_"
        self.KERNELS = tuple(n[len(prefix):] for n in dir(lib) if n.startswith(prefix))
        for kname in self.KERNELS:
            setattr(self, kname, getattr(lib, prefix + kname))
        raw_info = lib.tpf_build_info
        # the compile flags of this library (a str, as on the other backends)
        self.build_info = lambda: ffi.string(raw_info()).decode()

    def to_numpy(self, handle, host, shape, np_dtype):
        return host

    def threads(self) -> int:
        return self.lib.tpf_get_num_threads()


def _cpu_backend(index: int = 0) -> CPUBackend:
    if index != 0:
        raise BackendUnavailable(f"cpu:{index} does not exist; the CPU is cpu:0")
    return CPUBackend()


register_backend("cpu", _cpu_backend, is_gpu=False, type_name="CPU")
