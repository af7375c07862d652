"""The CPU backend: NumPy arrays hold the memory, C kernels (cffi) do the work."""
from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def _environment_while_loading(**defaults):
    """Set the variables of ``defaults`` the environment lacks, and remove them again on exit."""
    added = [k for k in defaults if k not in os.environ]
    os.environ.update({k: defaults[k] for k in added})
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


class CPUBackend(Backend):
    name = "cpu"
    #: buffers of at least this many bytes come from the caching allocator
    CACHED_MIN = 128 * 1024

    def __init__(self) -> None:
        # Settings libgomp and OpenBLAS read when they load, set for our load of them only (other
        # runtimes loaded later, PyTorch's libgomp or SciPy's OpenBLAS, keep their defaults); a
        # user's own setting wins.
        # - Idle OpenMP threads spin briefly, then sleep.  Sleeping at once (OMP_WAIT_POLICY=PASSIVE)
        #   costs every parallel region a futex wake-up (measured on 2 cores: a 300k-element add
        #   49 us on 2 threads vs 28 on 1); spinning long (libgomp's default, 300000 rounds, or
        #   ACTIVE) steals the time of the thread that has work on a busy machine.  30000 rounds
        #   cover the gap between the kernels of eager ops.
        # - OpenBLAS starts its worker threads when it loads, and each busy-waits for work for
        #   2**28 cycles before sleeping.  Ours never get any (csrc/matmul.c runs OpenBLAS's jobs
        #   on our threads), yet their spinning took a core from our GEMMs: the seeds' 1000x1000
        #   matmul ran at 18-33 ms a step instead of 10 for the first 0.1-1 s of a process.  The
        #   shortest timeout (2**4 cycles) puts them to sleep at once.
        spin = {} if "OMP_WAIT_POLICY" in os.environ else {"GOMP_SPINCOUNT": "30000"}
        with _environment_while_loading(OPENBLAS_THREAD_TIMEOUT="4", **spin):
            _preload_openblas()
            from . import _cpu  # the compiled library (built at install time)

        self.ffi, self.lib = ffi, lib = _cpu.ffi, _cpu.lib
        from_buffer = ffi.from_buffer
        empty = np.empty

        # Buffers of CACHED_MIN bytes and more come from the caching allocator (csrc/alloc.c):
        # freed ones are reused by size class instead of page-faulting fresh memory in every
        # training step.  Smaller ones come from NumPy (malloc reuses those already; a cached
        # buffer costs ~1 us of Python here, more than a small op's whole kernel).
        cached_min = self.CACHED_MIN
        mem_alloc, mem_free, buffer, gc = lib.tpfmem_alloc, lib.tpfmem_free, ffi.buffer, ffi.gc
        frombuffer, dtype_of = np.frombuffer, np.dtype

        def alloc(shape, np_dtype):
            dt = dtype_of(np_dtype)
            n = dt.itemsize
            for d in shape:
                n *= d
            if n < cached_min:
                host = empty(shape, dt)
                return from_buffer(host), host
            p = mem_alloc(n)
            if p == ffi.NULL:
                raise MemoryError(f"cannot allocate {n} bytes for a tensor of shape {tuple(shape)}")
            host = frombuffer(buffer(gc(p, mem_free, n), n), dt).reshape(shape)
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

    def memory_stats(self, reset_peak: bool = False) -> dict:
        """The caching allocator's counters (buffers of ``CACHED_MIN`` bytes and more):
        bytes in use, their peak, bytes kept cached for reuse, allocations served from the
        cache and from the system.  ``reset_peak`` restarts the peak from the bytes in use.

        >>> import tapeflow.kernels as K
        >>> sorted(K.get_backend("cpu").memory_stats())
        ['cached', 'from_cache', 'from_system', 'in_use', 'peak']
        """
        st = self.ffi.new("int64_t[5]")
        self.lib.tpfmem_stats(st, 1 if reset_peak else 0)
        return dict(zip(("in_use", "peak", "cached", "from_cache", "from_system"), st))

    def set_cache_limit(self, nbytes: int) -> int:
        """Keep at most ``nbytes`` of freed buffers for reuse (0: none; the rest is returned
        to the system now); returns the previous limit.

        >>> import tapeflow.kernels as K
        >>> cpu = K.get_backend("cpu")
        >>> old = cpu.set_cache_limit(0); cpu.memory_stats()["cached"]
        0
        >>> _ = cpu.set_cache_limit(old)
        """
        if not isinstance(nbytes, int) or isinstance(nbytes, bool):
            raise TypeError(f"set_cache_limit takes an int number of bytes, got {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"set_cache_limit: nbytes = {nbytes} is negative; allowed: 0 or more")
        return self.lib.tpfmem_set_cache_limit(nbytes)

    def threads(self) -> int:
        return self.lib.tpf_get_num_threads()


def _cpu_backend(index: int = 0) -> CPUBackend:
    if index != 0:
        raise BackendUnavailable(f"cpu:{index} does not exist; the CPU is cpu:0")
    return CPUBackend()


register_backend("cpu", _cpu_backend, is_gpu=False, type_name="CPU")
