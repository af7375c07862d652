"""The device runtime the OpenCL and CUDA backends share: buffers, the caching allocator, the launcher.

A device backend is a *driver* (:mod:`tapeflow.kernels.opencl`,
:mod:`tapeflow.kernels.cuda`: a few hundred lines of device specifics) under
:class:`GPURuntime` (this module: memory and launching) and the entries of the CPU
kernel table (:mod:`tapeflow.kernels.gpu_entries`).  A driver provides:

- ``_dev_alloc(nbytes) -> mem`` / ``_dev_free(mem)`` / ``_arg_of(mem)``: raw device
  memory and the kernel argument that passes it;
- ``_write(mem, array)``: an asynchronous host-to-device copy (the array is kept
  alive until the copy has run); ``_read(mem, array, offset)``: a blocking
  device-to-host copy (it waits for the work queued before it); ``_copy(src, dst,
  nbytes, src_off, dst_off)``: device to device;
- ``_kernel(family, name)``: the compiled kernel (building the family's program on
  first use), ``None`` when there is no kernel of that name (e.g. float64 without
  fp64);
- ``_launch(kernel, gsize, lsize, signature, args)``: enqueue it, each argument
  marshalled by its code of the signature language
  (:mod:`tapeflow.kernels.gpu_contract`);
- ``synchronize()``, ``compute_units()``, ``build_options()``.

Kernels are launched by name (:meth:`GPURuntime.launch`): the family, the
signature and the work layout come from :data:`~tapeflow.kernels.gpu_contract.TABLE`.
Kernel sources live in ``gpu/*.cl`` (one file per family, OpenCL C and CUDA C at
once through ``gpu/tpf_gpu.h``) and are compiled on first use of a family.

Work is queued in order and the host waits only when it reads values
(``to_numpy``) or when a kernel's status depends on the data (an index out of
range, an integer division by zero): then a flag is read back.

Buffers come from a caching allocator: sizes are rounded to buckets, and a
buffer whose handle is garbage-collected goes back to a free list of its bucket
(the in-order queue makes reuse safe: later work runs after earlier readers).

>>> from tapeflow.kernels.gpu_common import bucket_size
>>> bucket_size(1), bucket_size(1000), bucket_size(3 << 20)
(256, 4096, 3145728)
"""
from __future__ import annotations

import pathlib
import threading

import numpy as np

from . import gpu_contract
from .backend import Backend
from .gpu_contract import FAMILIES, GROUP, LOCAL

OK, EBADSIZE, EBADDTYPE, EBADOP, ERANGE, EDIVZERO, ENOMEM, EBADARG = range(8)
SOURCE_DIR = pathlib.Path(__file__).with_name("gpu")
__all__ = ["FAMILIES", "DeviceBuffer", "GPURuntime", "OutOfDeviceMemory", "bucket_size", "out_of_memory",
           "register_memory_error", "source"]

class OutOfDeviceMemory(MemoryError):
    """A device ran out of memory; the message names the device and the request."""

    def __init__(self, device: str, nbytes: int, detail: str = "") -> None:
        self.device, self.nbytes = device, nbytes
        super().__init__(f"{device} is out of memory: cannot allocate {_human(nbytes)}"
                         + (f" ({detail})" if detail else ""))


_MEMORY_ERROR = [OutOfDeviceMemory, None]   # the class raised, the class registered


def register_memory_error(cls):
    """Make device out-of-memory errors instances of ``cls`` too (core registers its ResourceExhaustedError);
    returns the class registered before (None for none), so a caller can put it back.

    The kernels layer cannot import the layers above it; this lets ``except
    tf.errors.ResourceExhaustedError`` catch a device running out of memory, with no
    cost on the hot path.

    >>> from tapeflow.kernels import gpu_common
    >>> class Exhausted(MemoryError):
    ...     pass
    >>> before = gpu_common.register_memory_error(Exhausted)
    >>> isinstance(gpu_common.out_of_memory("opencl:0", 1 << 40), Exhausted)
    True
    >>> gpu_common.register_memory_error(before) is Exhausted   # as it was
    True
    """
    prev = _MEMORY_ERROR[1]
    if cls is None or issubclass(OutOfDeviceMemory, cls):
        _MEMORY_ERROR[:] = [OutOfDeviceMemory, None]
    else:
        _MEMORY_ERROR[:] = [type("OutOfDeviceMemory", (OutOfDeviceMemory, cls), {"__module__": __name__}), cls]
    return prev


def out_of_memory(device: str, nbytes: int, detail: str = "") -> OutOfDeviceMemory:
    """The error for ``device`` failing to allocate ``nbytes`` (of the registered class, see above)."""
    return _MEMORY_ERROR[0](device, nbytes, detail)


def _human(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def bucket_size(nbytes: int) -> int:
    """The capacity the allocator hands out for a request of ``nbytes``.

    256-byte minimum, 4 KiB steps up to 1 MiB, then eighths of the next power of two
    (so at most 12.5% is wasted and freed buffers fit many later requests).

    >>> bucket_size(100), bucket_size(5000), bucket_size(3 << 20 | 1)
    (256, 8192, 3670016)
    """
    if nbytes <= 256:
        return 256
    if nbytes <= 1 << 20:
        return (nbytes + 4095) & ~4095
    step = (1 << (nbytes - 1).bit_length()) >> 3
    return (nbytes + step - 1) // step * step


def source(family: str) -> str:
    """The full kernel source of a family: the prelude, then the family's file.

    >>> from tapeflow.kernels.gpu_common import source
    >>> "KERNEL binary_##NAME" in source("elementwise") or "binary_" in source("elementwise")
    True
    """
    from .kernel_sources import gpu_source   # include/ headers (scalar math, Philox, op list) expanded

    return gpu_source(family)


class DeviceBuffer:
    """A handle to device memory.  Dropping the last reference returns it to the pool."""

    __slots__ = ("__weakref__", "_owner", "arg", "cap", "mem", "nbytes")

    def __init__(self, mem, arg, nbytes, cap, owner) -> None:
        self.mem, self.arg, self.nbytes, self.cap, self._owner = mem, arg, nbytes, cap, owner

    def __del__(self):
        owner = self._owner
        if owner is not None:
            try:
                owner._release(self.mem, self.arg, self.cap)
            except Exception:  # noqa: BLE001, S110 - interpreter shutdown: the driver may already be gone
                pass

    def __repr__(self):
        return f"<DeviceBuffer {self.nbytes} bytes on {getattr(self._owner, 'device_name', '?')}>"


def _ints(seq) -> list:
    return [int(v) for v in seq]


def _prod(seq) -> int:
    p = 1
    for v in seq:
        p *= int(v)
    return p


def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


def _value_bits(value, elsize: int) -> int:
    """A host value (bytes from ``host_ptr``, a NumPy scalar/array, cffi memory) as the integer of its bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)[:elsize]
    elif isinstance(value, np.ndarray):
        raw = value.tobytes()[:elsize]
    else:
        import cffi

        raw = bytes(cffi.FFI().buffer(value, elsize))
    return int.from_bytes(raw.ljust(8, b"\0"), "little")


class GPURuntime(Backend):
    """Memory and launching of a device backend over a driver's primitives (see the module docstring)."""

    name = "gpu"
    device_name = "gpu:0"
    device_type = "gpu"
    fp64 = True
    #: entries of the CPU backend's table, filled in by __init__ (the contract to meet)
    KERNELS: tuple = ()

    def __init__(self) -> None:
        from . import get_backend

        cpu = get_backend("cpu")
        self.KERNELS = cpu.KERNELS   # the CPU ABI: gpu_entries implements each entry
        self._pool: dict = {}
        self._pooled = 0
        self._pool_limit = 1 << 30
        self._max_alloc = 1 << 62
        self._lock = threading.RLock()
        self._kernels: dict = {}
        self._num_threads = 0
        self._ftz = cpu.get_ftz()   # denormals as the CPU backend currently treats them
        self._flag = None
        self._closed = False
        self.stats = {"allocs": 0, "reuses": 0, "frees": 0, "launches": 0, "syncs": 0}
        self._in_use = self._peak = 0   # bytes of live buffers (their bucket capacity), and the most so far
        self._growth = True             # tf.config.experimental.set_memory_growth (see set_memory_growth)
        self._growth_limit = None

    # ------------------------------------------------------------------ memory
    def _taken(self, cap: int) -> None:
        self._in_use += cap
        if self._in_use > self._peak:
            self._peak = self._in_use

    def memory_info(self) -> dict:
        """``{"current": bytes in live buffers, "peak": the most since the last reset}`` (bucket capacities)."""
        with self._lock:
            return {"current": self._in_use, "peak": self._peak}

    def reset_peak_memory(self) -> None:
        """Start the peak over from the bytes in use now."""
        with self._lock:
            self._peak = self._in_use

    def set_memory_growth(self, enable: bool) -> None:
        """With growth (the default) device memory is taken as buffers are needed and freed buffers beyond the
        cache limit go back to the driver; without it the allocator keeps every freed buffer for reuse (up to
        the device's memory), as TensorFlow's arena holds on to what it took."""
        with self._lock:
            if enable == self._growth:
                return
            if enable:
                self._pool_limit, self._growth_limit = self._growth_limit, None
            else:
                self._growth_limit = self._pool_limit
                self._pool_limit = max(self._pool_limit, getattr(self, "global_mem", 0))
            self._growth = bool(enable)

    def memory_growth(self) -> bool:
        return self._growth

    def _buffer(self, nbytes: int) -> DeviceBuffer:
        cap = bucket_size(nbytes)
        with self._lock:
            free = self._pool.get(cap)
            if free:
                mem, arg = free.pop()
                self._pooled -= cap
                self.stats["reuses"] += 1
                self._taken(cap)
                return DeviceBuffer(mem, arg, nbytes, cap, self)
        if cap > self._max_alloc:
            raise out_of_memory(self.device_name, nbytes,
                                f"the largest buffer this device allows is {_human(self._max_alloc)}")
        try:
            mem = self._dev_alloc(cap)
        except OutOfDeviceMemory:
            self.empty_cache()   # give the pooled buffers back and try once more
            mem = self._dev_alloc(cap)
        self.stats["allocs"] += 1
        with self._lock:
            self._taken(cap)
        return DeviceBuffer(mem, self._arg_of(mem), nbytes, cap, self)

    def _release(self, mem, arg, cap) -> None:
        if self._closed:   # at exit: the driver frees everything
            return
        with self._lock:
            self._in_use -= cap
            if self._pooled + cap <= self._pool_limit:
                self._pool.setdefault(cap, []).append((mem, arg))
                self._pooled += cap
                return
        self.stats["frees"] += 1
        self._dev_free(mem)

    def empty_cache(self) -> None:
        """Give every pooled (unused) buffer back to the driver."""
        self.synchronize()
        with self._lock:
            pool, self._pool, self._pooled = self._pool, {}, 0
        for free in pool.values():
            for mem, _ in free:
                self.stats["frees"] += 1
                self._dev_free(mem)

    def pooled_bytes(self) -> int:
        """Bytes held in the allocator's free lists."""
        return self._pooled

    def _arg_of(self, mem):  # pragma: no cover - interface
        raise NotImplementedError

    # ------------------------------------------------------------ backend API
    def alloc(self, shape, np_dtype):
        nbytes = _prod(shape) * np.dtype(np_dtype).itemsize
        return self._buffer(nbytes), None

    def from_numpy(self, array):
        host = np.array(array, order="C", copy=True)
        buf = self._buffer(host.nbytes)
        if host.nbytes:
            self._write(buf.mem, host)
        return buf, None

    def to_numpy(self, handle, host, shape, np_dtype):
        out = np.empty(shape, np_dtype)
        if out.nbytes:
            self._read(handle.mem, out)
        return out

    def new_int64(self, values):
        """A small host-side int64 array (shapes, strides, results such as a bad index)."""
        return np.array(list(values), dtype=np.int64)

    def host_ptr(self, data):
        """Small host-side bytes passed to a kernel by value (fill values, pad values, ...)."""
        return bytes(data)

    # -------------------------------------------------------------- launching
    def _entry(self, name: str):
        """(compiled kernel or None, its declaration), cached per denormal mode (a build option)."""
        key = (name, self._ftz)
        e = self._kernels.get(key)
        if e is None:
            s = gpu_contract.spec(name)
            with self._lock:
                e = self._kernels[key] = (self._kernel(s.family, name), s)
        return e

    def has_kernel(self, name: str) -> bool:
        """Whether kernel ``name`` (declared in the contract's table) exists on this device."""
        return self._entry(name)[0] is not None

    def launch(self, name: str, n: int, *args) -> int:
        """Launch kernel ``name`` over ``n`` units (work-items, or work-groups for ``groups`` kernels).

        ``args`` follow the kernel's declared signature; returns EBADDTYPE when the
        device has no such kernel (that dtype), else OK (nothing runs for ``n <= 0``).
        """
        k, s = self._entry(name)
        if k is None:
            return EBADDTYPE
        sig = s.signature
        if len(args) != len(sig):
            raise TypeError(f"GPU kernel {name} takes {len(sig)} arguments ({sig}), got {len(args)}")
        if n > 0:
            if s.launch == "items":
                self._launch(k, ((n + LOCAL - 1) // LOCAL * LOCAL,), (LOCAL,), sig, args)
            elif s.launch == "groups":
                self._launch(k, (n * GROUP,), (GROUP,), sig, args)
            else:
                raise TypeError(f"GPU kernel {name} is launched on a grid: use launch_grid")
        return OK

    def launch_grid(self, name: str, gsize, lsize, *args) -> int:
        """Launch kernel ``name`` (a ``grid`` kernel) over global size ``gsize`` in work-groups of ``lsize``
        (each global size is rounded up to a multiple of the group's)."""
        k, s = self._entry(name)
        if k is None:
            return EBADDTYPE
        if len(args) != len(s.signature) or s.launch != "grid":
            raise TypeError(f"GPU kernel {name} ({s.launch}, {s.signature}) cannot take a grid and {len(args)} "
                            "arguments")
        if all(g > 0 for g in gsize):
            self._launch(k, tuple(_round_up(g, l) for g, l in zip(gsize, lsize)), tuple(lsize), s.signature, args)
        return OK

    def _flag_buffer(self):
        if self._flag is None:
            self._flag = self._buffer(64)
        return self._flag

    def _reset_flag(self, words: int = 1, value: int = 0):
        buf = self._flag_buffer()
        self.launch("fill_8", words, buf, words, value & 0xFFFFFFFFFFFFFFFF)
        return buf

    def _read_words(self, buf, words: int, dtype=np.int64) -> np.ndarray:
        out = np.empty(words, dtype)
        self._read(buf.mem, out)
        return out

    # ------------------------------------------------------- misc entries
    def set_num_threads(self, n):
        if n < 0:
            return EBADARG
        self._num_threads = int(n)
        return OK

    def get_num_threads(self):
        return self._num_threads or self.compute_units()

    def compute_units(self) -> int:
        return 1

    def blas_set_num_threads(self, n):
        return OK

    def set_ftz(self, on):
        """Flush float denormals to zero (on by default, as on the CPU); kernels are built per setting."""
        self._ftz = 1 if on else 0
        return OK

    def get_ftz(self):
        return self._ftz

    def build_info(self) -> str:
        """How this backend's kernels are compiled: the device compiler's options."""
        opts = self.build_options()
        return opts if isinstance(opts, str) else " ".join(opts)


def _is_null(h) -> bool:
    """A kernel's optional output left out: None or a NULL pointer (``backend.ffi.NULL``)."""
    if h is None:
        return True
    if isinstance(h, DeviceBuffer):
        return False
    ffi = _NULL_FFI or _null_ffi()
    return isinstance(h, ffi.CData) and h == ffi.NULL


_NULL_FFI = None


def _null_ffi():
    global _NULL_FFI
    import cffi

    _NULL_FFI = cffi.FFI()
    return _NULL_FFI
