"""The OpenCL backend: the system's OpenCL driver runs tapeflow's kernels.

The host side goes through ``libOpenCL.so.1`` opened with cffi at run time
(:mod:`tapeflow.kernels._clbind`), so tapeflow installs and imports where there
is no OpenCL; asking for this backend there raises
:class:`~tapeflow.kernels.BackendUnavailable` saying why.  Kernels are the
OpenCL C sources in ``gpu/`` (shared with the CUDA backend), built for the device
on first use of a family and cached: in memory, and on disk as program binaries
keyed by a hash of the source, the build options and the device
(``$TAPEFLOW_CACHE_DIR``, default ``~/.cache/tapeflow``) -- except on pocl, which
keeps such a cache itself (``~/.cache/pocl/kcache``) and would compile every
kernel of a program up front if asked for its binary.

One in-order command queue per device: ops enqueue and return; the host waits
when it reads a value.  This module is the driver only (memory, programs, launches,
errors); the allocator, the launcher and the kernel table are shared with the CUDA
backend (:mod:`tapeflow.kernels.gpu_common`, :mod:`tapeflow.kernels.gpu_entries`),
kernel arguments marshalled by the signature language of
:mod:`tapeflow.kernels.gpu_contract`.  The backend registers itself as kind
``opencl`` (:func:`tapeflow.kernels.register_backend`); a device is a GPU when its
OpenCL type is (pocl's CPU device is not).

Device ``opencl:i`` is the i-th device over all platforms (``device_count()``).
Set ``TAPEFLOW_OPENCL_LIB`` to use another OpenCL loader.

Tiny ops on the host mirror.  An enqueue costs 10-15 µs on pocl (and a blocking
read of a result 20-60 µs), against about 1 µs for our C kernel on the host, so
a tiny buffer (at most ``TAPEFLOW_OPENCL_HOST_OPS`` bytes, default 1024; 0 turns
this off; :meth:`OpenCLBackend.set_host_ops`) keeps a host copy, its *mirror*,
when the host has its value anyway: made from host data (``from_numpy``), read
back (``to_numpy``), or computed on the host.  An element-wise op whose inputs
are all mirrored and whose output is tiny runs the CPU backend's C kernel on the
mirrors, when its result is the same to the bit as the device kernel's: the
correctly rounded IEEE operations (add, sub, mul; div in float64, and in float32
on CPU-type devices whose ``/`` is IEEE), comparisons, logical and bitwise ops,
neg, abs, sign, square, relu, floor, ceil, isnan/isfinite and the relu
gradient, in float32, float64, the integer types and bool, with the device's
denormal setting equal to the CPU's.  Anything else runs on the device.  The
result's device copy is then stale: it is written to the device (one
asynchronous write, in queue order) before a device command touches the buffer,
and reads of a mirrored buffer are served from the mirror without waiting.  A
device command that may write a buffer (a kernel taking it through a parameter
not declared ``const``, a copy or write into it) drops its mirror.  Tensors
still report the OpenCL device: only where the arithmetic runs changes.

>>> from tapeflow.kernels import opencl
>>> isinstance(opencl.device_count(), int)   # 0 where there is no OpenCL
True
"""
from __future__ import annotations

import atexit
import collections
import hashlib
import os
import pathlib
import threading

import numpy as np

from . import BINARY_OPS, UNARY_OPS, BackendUnavailable, get_backend, register_backend
from . import _clbind as B
from .gpu_common import OK, DeviceBuffer, out_of_memory, source
from .gpu_contract import BOOL, F32, F64, I8, I16, I32, I64, MAXDIMS, SIZE, U8, ctype
from .gpu_entries import GPUBackend

_API = None
_LOCK = threading.RLock()   # the first calls may come from several threads at once


def _api():
    """``(ffi, lib)``, loaded once; raises BackendUnavailable without an OpenCL loader."""
    global _API
    with _LOCK:
        if _API is None:
            try:
                _API = B.load()
            except OSError as e:
                raise BackendUnavailable(f"opencl backend unavailable: {e}") from None
        return _API


def _devices():
    """Every OpenCL device of every platform, as (platform, device) cdata pairs."""
    ffi, cl = _api()
    n = ffi.new("cl_uint *")
    st = cl.clGetPlatformIDs(0, ffi.NULL, n)
    if st != 0 or n[0] == 0:
        return []
    plats = ffi.new("cl_platform_id[]", n[0])
    cl.clGetPlatformIDs(n[0], plats, ffi.NULL)
    out = []
    for p in plats:
        if cl.clGetDeviceIDs(p, B.CL_DEVICE_TYPE_ALL, 0, ffi.NULL, n) != 0 or n[0] == 0:
            continue
        devs = ffi.new("cl_device_id[]", n[0])
        cl.clGetDeviceIDs(p, B.CL_DEVICE_TYPE_ALL, n[0], devs, ffi.NULL)
        out += [(p, d) for d in devs]
    return out


_TYPES = {B.CL_DEVICE_TYPE_GPU: "gpu", B.CL_DEVICE_TYPE_CPU: "cpu", B.CL_DEVICE_TYPE_ACCELERATOR: "accelerator"}
_found: list = []


def _probe() -> list:
    """(platform, device, type) of every OpenCL device, probed once per process."""
    with _LOCK:
        if not _found:
            _, cl = _api()
            _found.extend((p, d, _TYPES.get(_info_int(cl.clGetDeviceInfo, d, B.CL_DEVICE_TYPE) & 0xE, "other"))
                          for p, d in _devices())
        return _found


def device_count() -> int:
    """How many OpenCL devices this machine has (0 without a driver).

    >>> from tapeflow.kernels import opencl
    >>> opencl.device_count() == len(opencl.device_types())
    True
    """
    try:
        return len(_probe())
    except BackendUnavailable:
        return 0


def device_types() -> list:
    """The kind of every OpenCL device (``"gpu"``, ``"cpu"``, ``"accelerator"``, ``"other"``), in index order.

    pocl's device is ``"cpu"``: an accelerator backend, but not a GPU.

    >>> from tapeflow.kernels import opencl
    >>> set(opencl.device_types()) <= {"gpu", "cpu", "accelerator", "other"}
    True
    """
    try:
        return [t for _, _, t in _probe()]
    except BackendUnavailable:
        return []


def _info_str(fn, obj, param) -> str:
    ffi, _ = _api()
    size = ffi.new("size_t *")
    if fn(obj, param, 0, ffi.NULL, size) != 0:
        return ""
    buf = ffi.new("char[]", size[0])
    fn(obj, param, size[0], buf, ffi.NULL)
    return ffi.string(buf).decode(errors="replace").strip()


def _info_int(fn, obj, param, ctype="cl_ulong") -> int:
    ffi, _ = _api()
    val = ffi.new(ctype + " *")
    fn(obj, param, ffi.sizeof(ctype), val, ffi.NULL)
    return int(val[0])


_UNSET = object()

#: element-wise ops whose result is exact (correctly rounded, or no rounding): the host's C kernel and the
#: device's agree to the bit, so a tiny op may run on the host mirror (see the module docstring)
_HOST_BINARY = frozenset(BINARY_OPS.index(n) for n in (
    "add", "sub", "mul", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "relu_grad"))
_HOST_UNARY = frozenset(UNARY_OPS.index(n) for n in (
    "neg", "abs", "sign", "square", "relu", "floor", "ceil", "logical_not", "bitwise_not", "isnan", "isfinite"))
# not maximum/minimum: with denormals flushed the device flushes a denormal it selects, the CPU's strided
# loop returns it as is; not isinf: the CPU kernel stores glibc's isinf() (-1 for -inf) into a bool, a byte
# 255 where the device writes 1
_DIV = BINARY_OPS.index("div")
#: ops whose output is bool whatever the input dtype
_BOOL_OUT = frozenset([BINARY_OPS.index(n) for n in ("equal", "not_equal", "less", "less_equal", "greater",
                                                     "greater_equal")]
                      + [len(BINARY_OPS) + UNARY_OPS.index(n) for n in ("isnan", "isinf", "isfinite")])
_HOST_DTYPES = frozenset((F32, F64, I8, U8, I16, I32, I64, BOOL))
_B_INDEX: dict = {}   # signature -> positions of its buffer arguments


def _buffer_positions(sig: str) -> tuple:
    pos = _B_INDEX.get(sig)
    if pos is None:
        pos = _B_INDEX[sig] = tuple(i for i, c in enumerate(sig) if c == "B")
    return pos


def _host_ops_default() -> int:
    raw = os.environ.get("TAPEFLOW_OPENCL_HOST_OPS", "1024")
    try:
        return max(0, int(raw))
    except ValueError:
        raise ValueError(f"TAPEFLOW_OPENCL_HOST_OPS must be a number of bytes (0 turns host ops off), got "
                         f"{raw!r}") from None


class OpenCLError(RuntimeError):
    """An OpenCL call failed; the message names the call, the status and the device."""


class OpenCLBackend(GPUBackend):
    """Backend ``opencl``: tapeflow's kernel table on OpenCL device ``index`` (see :func:`device_count`).

    Raises :class:`~tapeflow.kernels.BackendUnavailable` without a driver or device.

    >>> import numpy as np
    >>> from tapeflow.kernels import opencl
    >>> be = opencl.OpenCLBackend() if opencl.device_count() else None
    >>> be is None or be.to_numpy(be.from_numpy(np.arange(3.0))[0], None, (3,), np.float64).tolist() == [0.0, 1.0, 2.0]
    True
    """

    name = "opencl"

    def __init__(self, index: int = 0) -> None:
        ffi, cl = _api()
        devs = _probe()
        if not devs:
            raise BackendUnavailable("opencl backend unavailable: no OpenCL platform or device found "
                                     "(install a driver, e.g. Debian's pocl-opencl-icd)")
        if not 0 <= index < len(devs):
            raise BackendUnavailable(f"opencl:{index} does not exist; this machine has {len(devs)} OpenCL "
                                     f"device(s)")
        super().__init__()
        self.ffi, self.cl = ffi, cl
        self.index = index
        self.device_name = f"opencl:{index}"
        self._platform, self._device, self.device_type = devs[index]
        gi = cl.clGetDeviceInfo
        self.hardware = _info_str(gi, self._device, B.CL_DEVICE_NAME)
        self.extensions = _info_str(gi, self._device, B.CL_DEVICE_EXTENSIONS).split()
        self.fp64 = "cl_khr_fp64" in self.extensions
        self._units = _info_int(gi, self._device, B.CL_DEVICE_MAX_COMPUTE_UNITS, "cl_uint")
        self._max_alloc = _info_int(gi, self._device, B.CL_DEVICE_MAX_MEM_ALLOC_SIZE)
        self.global_mem = _info_int(gi, self._device, B.CL_DEVICE_GLOBAL_MEM_SIZE)
        self._pool_limit = min(self.global_mem // 4, 1 << 30)
        self.platform = _info_str(cl.clGetPlatformInfo, self._platform, B.CL_PLATFORM_NAME)
        # pocl keeps its own on-disk kernel cache (keyed by source, options and device), and asking it
        # for a program binary makes it compile every kernel of the program up front: skip ours there
        self._binary_cache = "Portable Computing Language" not in self.platform
        self._version = "|".join([_info_str(cl.clGetPlatformInfo, self._platform, B.CL_PLATFORM_VERSION),
                                  _info_str(gi, self._device, B.CL_DEVICE_VERSION),
                                  _info_str(gi, self._device, B.CL_DRIVER_VERSION), self.hardware])
        err = ffi.new("cl_int *")
        dev_arr = ffi.new("cl_device_id[1]", [self._device])
        self._dev_arr = dev_arr
        self._ctx = cl.clCreateContext(ffi.NULL, 1, dev_arr, ffi.NULL, ffi.NULL, err)
        self._check(err[0], "clCreateContext")
        self._queue = cl.clCreateCommandQueue(self._ctx, self._device, 0, err)
        self._check(err[0], "clCreateCommandQueue")
        self._programs: dict = {}
        self._pending = collections.deque()   # (event, host array) of asynchronous writes
        self._err = err
        self._gs = ffi.new("size_t[3]")
        self._ls = ffi.new("size_t[3]")
        # one value slot per argument position and code (a kernel reads its arguments when enqueued)
        self._slots = {code: [ffi.new(ct if "[" in ct else ct + " *") for _ in range(32)]
                       for code, (ct, _) in ((c, ctype(c, self.fp64)) for c in "liILdfpDG")}
        self._last_args: dict = {}
        self._null_mem = None
        self._null_mem = self._buffer(256)
        # -cl-kernel-arg-info: which buffer parameters are const (a kernel leaves those buffers' host mirrors valid)
        self._options = "-cl-std=CL1.2 -cl-kernel-arg-info" + (" -DTPF_FP64=1" if self.fp64 else "")
        self._matmul_vec = self.device_type == "cpu"
        # tiny buffers' host mirrors: mem -> [uint8 array of the buffer's bytes, device copy stale?, its pointer]
        self._host: dict = {}
        self._writes: dict = {}   # kernel -> positions of the buffer arguments it may write (not const)
        self._host_max = _host_ops_default()
        # (op, dtype) -> bytes per output element, of the ops that may run on the host; float32 division only
        # where the device's `/` is IEEE (CPU-type devices: pocl's is LLVM's fdiv; OpenCL lets GPUs be 2.5 ulp)
        self._host_bin = {(op, dt): 1 if op in _BOOL_OUT else SIZE[dt] for dt in _HOST_DTYPES for op in
                          (*_HOST_BINARY, *((_DIV,) if dt == F64 or dt == F32 and self.device_type == "cpu" else ()))}
        self._host_un = {(op, dt): 1 if len(BINARY_OPS) + op in _BOOL_OUT else SIZE[dt] for dt in _HOST_DTYPES
                         for op in _HOST_UNARY}
        self._cpu = get_backend("cpu")
        self._cpu_buf = self._cpu.ffi.from_buffer
        self.stats["host_ops"] = 0
        atexit.register(self._at_exit)

    def _at_exit(self):
        """Let queued work finish before the interpreter (and the driver) go away."""
        try:
            self.cl.clFinish(self._queue)
        except Exception:  # noqa: BLE001, S110 - at exit the driver may be partly torn down
            pass
        self._closed = True

    def __repr__(self):
        return f"<OpenCLBackend {self.device_name}: {self.hardware} ({self.device_type})>"

    # ------------------------------------------------------------ driver calls
    def _check(self, status, what):
        if status != 0:
            if status in B.OUT_OF_MEMORY:
                raise out_of_memory(self.device_name, 0, f"{what}: {B.error_name(status)}")
            raise OpenCLError(f"{what} failed on {self.device_name} ({self.hardware}): {B.error_name(status)}")

    def compute_units(self) -> int:
        return self._units

    def device_count(self) -> int:
        """OpenCL devices on this machine (``opencl:0`` .. ``opencl:N-1``)."""
        return device_count()

    def device_types(self) -> list:
        """The kind of each of them (see :func:`device_types`)."""
        return device_types()

    def _dev_alloc(self, nbytes):
        mem = self.cl.clCreateBuffer(self._ctx, B.CL_MEM_READ_WRITE, nbytes, self.ffi.NULL, self._err)
        st = self._err[0]
        if st != 0:
            if st in B.OUT_OF_MEMORY:
                raise out_of_memory(self.device_name, nbytes, B.error_name(st))
            self._check(st, "clCreateBuffer")
        return mem

    def _dev_free(self, mem):
        self.cl.clReleaseMemObject(mem)

    def _arg_of(self, mem):
        return self.ffi.new("cl_mem *", mem)

    def _write(self, mem, array):
        if self._host:
            self._drop_mirror(mem)
        self._write_async(mem, array)

    def _write_async(self, mem, array):
        ev = self.ffi.new("cl_event *")
        with self._lock:
            st = self.cl.clEnqueueWriteBuffer(self._queue, mem, 0, 0, array.nbytes, self.ffi.from_buffer(array),
                                              0, self.ffi.NULL, ev)
            self._check(st, "clEnqueueWriteBuffer")
            # the queue reads `array` later: keep it alive until the write has run
            self._pending.append((ev[0], array))
            if len(self._pending) > 64:
                self._retire(len(self._pending) - 32)

    def _retire(self, count=None):
        """Drop host arrays of writes that have completed (all of them after a wait)."""
        pend = self._pending
        if count is None:
            while pend:
                ev, _ = pend.popleft()
                self.cl.clReleaseEvent(ev)
            return
        status = self.ffi.new("cl_int *")
        while pend and count > 0:
            ev, _ = pend[0]
            self.cl.clGetEventInfo(ev, B.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, status, self.ffi.NULL)
            if status[0] > 0:      # queued, submitted or running: later writes are not done either
                self.cl.clFlush(self._queue)
                self.cl.clWaitForEvents(1, self.ffi.new("cl_event[1]", [ev]))
            pend.popleft()
            self.cl.clReleaseEvent(ev)
            count -= 1

    def _read(self, mem, array, offset=0):
        e = self._host.get(mem) if self._host else None
        if e is not None:   # the mirror holds the buffer's value: no wait
            n = array.nbytes
            if n:
                self.ffi.memmove(array, e[0][offset:offset + n], n)
            return
        with self._lock:
            st = self.cl.clEnqueueReadBuffer(self._queue, mem, 1, offset, array.nbytes, self.ffi.from_buffer(array),
                                             0, self.ffi.NULL, self.ffi.NULL)
            self.stats["syncs"] += 1
            self._check(st, "clEnqueueReadBuffer")
            self._retire()

    def _copy(self, src, dst, nbytes, src_off=0, dst_off=0):
        if nbytes:
            if self._host:
                with self._lock:
                    self._device_copy(src)
                    self._drop_mirror(dst)
            st = self.cl.clEnqueueCopyBuffer(self._queue, src, dst, src_off, dst_off, nbytes, 0, self.ffi.NULL,
                                             self.ffi.NULL)
            self._check(st, "clEnqueueCopyBuffer")

    def synchronize(self) -> None:
        """Wait until every queued command has run."""
        with self._lock:
            self._check(self.cl.clFinish(self._queue), "clFinish")
            self.stats["syncs"] += 1
            self._retire()

    # ---------------------------------------------------------------- programs
    def _program(self, family):
        key = (family, self._ftz)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = self._build(family)
        return prog

    def build_options(self) -> str:
        """The OpenCL C compiler options of the current settings (denormals flushed when ftz is on)."""
        return self._options + (" -cl-denorms-are-zero" if self._ftz else "")

    def _cache_path(self, src: str) -> pathlib.Path:
        key = hashlib.sha256(f"{src}\x00{self.build_options()}\x00{self._version}".encode()).hexdigest()[:32]
        root = os.environ.get("TAPEFLOW_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tapeflow")
        return pathlib.Path(root) / "opencl" / f"{key}.bin"

    def _build(self, family):
        ffi, cl = self.ffi, self.cl
        src = source(family)
        path = self._cache_path(src) if self._binary_cache else None
        opts = self.build_options().encode()
        if path is not None and path.exists():   # a binary built before for this source, options and device
            try:
                blob = path.read_bytes()
                sizes = ffi.new("size_t[1]", [len(blob)])
                data = ffi.new("unsigned char[]", blob)
                ptrs = ffi.new("const unsigned char *[1]", [data])
                bst = ffi.new("cl_int[1]")
                prog = cl.clCreateProgramWithBinary(self._ctx, 1, self._dev_arr, sizes, ptrs, bst, self._err)
                if self._err[0] == 0 and bst[0] == 0:
                    if cl.clBuildProgram(prog, 1, self._dev_arr, opts, ffi.NULL, ffi.NULL) == 0:
                        return prog
                    cl.clReleaseProgram(prog)
            except OSError:
                pass
        csrc = ffi.new("char[]", src.encode())
        prog = cl.clCreateProgramWithSource(self._ctx, 1, ffi.new("const char *[1]", [csrc]), ffi.NULL, self._err)
        self._check(self._err[0], "clCreateProgramWithSource")
        st = cl.clBuildProgram(prog, 1, self._dev_arr, opts, ffi.NULL, ffi.NULL)
        if st != 0:
            log = self._build_log(prog)
            raise OpenCLError(f"building the {family} kernels failed on {self.device_name} ({self.hardware}): "
                              f"{B.error_name(st)}\n{log}")
        if path is not None:
            self._save_binary(prog, path)
        return prog

    def _build_log(self, prog) -> str:
        ffi = self.ffi
        size = ffi.new("size_t *")
        self.cl.clGetProgramBuildInfo(prog, self._device, B.CL_PROGRAM_BUILD_LOG, 0, ffi.NULL, size)
        buf = ffi.new("char[]", size[0] + 1)
        self.cl.clGetProgramBuildInfo(prog, self._device, B.CL_PROGRAM_BUILD_LOG, size[0], buf, ffi.NULL)
        return ffi.string(buf).decode(errors="replace")

    def _save_binary(self, prog, path):
        ffi, cl = self.ffi, self.cl
        try:
            sizes = ffi.new("size_t[1]")
            if cl.clGetProgramInfo(prog, B.CL_PROGRAM_BINARY_SIZES, ffi.sizeof(sizes), sizes, ffi.NULL) != 0:
                return
            if not sizes[0]:
                return
            data = ffi.new("unsigned char[]", sizes[0])
            ptrs = ffi.new("unsigned char *[1]", [data])
            if cl.clGetProgramInfo(prog, B.CL_PROGRAM_BINARIES, ffi.sizeof(ptrs), ptrs, ffi.NULL) != 0:
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(bytes(ffi.buffer(data, sizes[0])))
            os.replace(tmp, path)
        except OSError:
            pass   # a read-only home: build from source next time

    def _kernel(self, family, name):
        prog = self._program(family)
        k = self.cl.clCreateKernel(prog, name.encode(), self._err)
        if self._err[0] == -46:   # CL_INVALID_KERNEL_NAME: no such kernel (e.g. float64 without fp64)
            return None
        self._check(self._err[0], f"clCreateKernel({name})")
        return k

    # --------------------------------------------------------------- launching
    def _launch(self, k, gsize, lsize, sig, args):
        ffi, cl = self.ffi, self.cl
        set_arg = cl.clSetKernelArg
        if len(sig) != len(args):  # pragma: no cover - a wrapper bug
            raise TypeError(f"kernel signature {sig!r} does not match {len(args)} arguments")
        with self._lock:
            if self._host:   # the buffers the kernel takes: current on the device; those it may write lose mirrors
                host = self._host
                writes = self._writes.get(k)
                if writes is None:
                    writes = self._writes[k] = self._written_args(k, sig)
                for i in _buffer_positions(sig):
                    v = args[i]
                    if type(v) is DeviceBuffer and v.mem in host:
                        if i in writes:
                            self._drop_mirror(v.mem)
                        else:
                            self._device_copy(v.mem)
            # a kernel keeps its arguments between launches: set only those that changed
            last = self._last_args.get(k)
            if last is None:
                last = self._last_args[k] = [_UNSET] * len(sig)
            for i, code in enumerate(sig):
                v = args[i]
                if code == "B":
                    a = v.arg if v is not None and type(v) is DeviceBuffer else self._null_mem.arg
                    if last[i] is a:
                        continue
                    last[i] = a
                    st = set_arg(k, i, 8, a)
                else:
                    key = tuple(v) if code in "DG" else v
                    if last[i] == key and type(last[i]) is type(key):
                        continue
                    last[i] = key
                    st = self._set_value(k, i, code, v)
                if st != 0:
                    last[i] = _UNSET
                    self._check(st, f"clSetKernelArg({i})")
            nd = len(gsize)
            gs, ls = self._gs, self._ls
            for j in range(nd):
                gs[j] = gsize[j]
                ls[j] = lsize[j]
            st = cl.clEnqueueNDRangeKernel(self._queue, k, nd, ffi.NULL, gs, ls, 0, ffi.NULL, ffi.NULL)
            self.stats["launches"] += 1
            if st != 0:
                self._check(st, "clEnqueueNDRangeKernel")

    def _written_args(self, k, sig) -> frozenset:
        """Positions of the buffer arguments kernel ``k`` may write: those not declared ``const`` (all of them
        where the driver cannot tell)."""
        qual = self.ffi.new("cl_bitfield *")
        out = []
        for i in _buffer_positions(sig):
            qual[0] = 0
            st = self.cl.clGetKernelArgInfo(k, i, B.CL_KERNEL_ARG_TYPE_QUALIFIER, 8, qual, self.ffi.NULL)
            if st != 0 or not qual[0] & B.CL_KERNEL_ARG_TYPE_CONST:
                out.append(i)
        return frozenset(out)

    def _set_value(self, k, i, code, v):
        slot = self._slots[code][i]
        if code in "DG":
            for j, x in enumerate(v):
                slot[j] = x
        else:
            slot[0] = v
        return self.cl.clSetKernelArg(k, i, ctype(code, self.fp64)[1], slot)


    # ------------------------------------------------- tiny ops on the host mirror
    def set_host_ops(self, nbytes: int) -> int:
        """Run exact element-wise ops on buffers of at most ``nbytes`` on the host mirror (0: never); returns
        the previous limit.  See the module docstring for the rule.  Mirrors already made stay (they are kept
        coherent either way); only new ones and host ops follow the limit.

        >>> from tapeflow.kernels import opencl
        >>> be = opencl.OpenCLBackend() if opencl.device_count() else None
        >>> if be is not None:
        ...     before = be.set_host_ops(0)
        ...     assert be.set_host_ops(before) == 0
        """
        if type(nbytes) is not int:
            raise TypeError(f"set_host_ops takes an int number of bytes, got {type(nbytes).__name__} {nbytes!r}")
        if nbytes < 0:
            raise ValueError(f"set_host_ops takes a number of bytes >= 0 (0 turns host ops off), got {nbytes!r}")
        with self._lock:
            prev, self._host_max = self._host_max, nbytes
        return prev

    def mirrored(self, buf) -> bool:
        """Whether device buffer ``buf`` has a host mirror (tiny ops on it may run on the host).

        >>> import numpy as np
        >>> from tapeflow.kernels import opencl
        >>> be = opencl.OpenCLBackend() if opencl.device_count() else None
        >>> be is None or be.mirrored(be.from_numpy(np.ones(4, np.float32))[0])   # 16 bytes from the host
        True
        """
        return type(buf) is DeviceBuffer and buf.mem in self._host

    def _device_copy(self, mem):
        """Make the device copy of ``mem`` current: write a stale mirror's bytes to the device (queued)."""
        e = self._host.get(mem)
        if e is not None and e[1]:
            self._write_async(mem, e[0])   # the mirror array is never written in place: it stays valid
            e[1] = False

    def _drop_mirror(self, mem):
        """The device is about to write ``mem``: make its device copy current and forget the mirror."""
        with self._lock:
            e = self._host.pop(mem, None)
            if e is not None and e[1]:
                self._write_async(mem, e[0])

    def _release(self, mem, arg, cap):
        if self._host:
            self._host.pop(mem, None)   # the value dies with the buffer: no write
        super()._release(mem, arg, cap)

    def from_numpy(self, array):
        host = np.array(array, order="C", copy=True)
        buf = self._buffer(host.nbytes)
        if host.nbytes:
            self._write_async(buf.mem, host)
            if host.nbytes <= self._host_max and not host.dtype.hasobject:
                with self._lock:
                    raw = host.reshape(-1).view(np.uint8)
                    self._host[buf.mem] = [raw, False, self._cpu_buf(raw)]
        return buf, None

    def to_numpy(self, handle, host, shape, np_dtype):
        out = np.empty(shape, np_dtype)
        if out.nbytes:
            with self._lock:
                self._read(handle.mem, out)
                if out.nbytes == handle.nbytes <= self._host_max and handle.mem not in self._host \
                        and not out.dtype.hasobject:
                    raw = out.reshape(-1).view(np.uint8).copy()
                    self._host[handle.mem] = [raw, False, self._cpu_buf(raw)]
        return out

    def _host_result(self, out, res, ptr):
        """``res`` is ``out``'s new value (a failing host kernel falls back to the device, for its status)."""
        self._host[out.mem] = [res, True, ptr]   # the device copy is written when a device command needs it
        self.stats["host_ops"] += 1

    def binary_flat(self, op, dt, a, a_scalar, b, b_scalar, out, n):
        host = self._host
        if host:
            osz = self._host_bin.get((op, dt))   # bytes per output element; None: not a host op
            if osz is not None and type(a) is DeviceBuffer and type(b) is DeviceBuffer and type(out) is DeviceBuffer:
                ha, hb = host.get(a.mem), host.get(b.mem)
                el = SIZE[dt]
                if ha is not None and hb is not None and 0 < n * osz == out.nbytes <= self._host_max \
                        and a.nbytes >= (1 if a_scalar else n) * el and b.nbytes >= (1 if b_scalar else n) * el \
                        and self._ftz == self._cpu.get_ftz():
                    with self._lock:
                        res = np.empty(out.nbytes, np.uint8)
                        ptr = self._cpu_buf(res)
                        if self._cpu.binary_flat(op, dt, ha[2], a_scalar, hb[2], b_scalar, ptr, n) == OK:
                            self._host_result(out, res, ptr)
                            return OK
        return super().binary_flat(op, dt, a, a_scalar, b, b_scalar, out, n)

    def binary_strided(self, op, dt, ndim, shape, a, astr, b, bstr, out):
        host = self._host
        if host and (op, dt) in self._host_bin and type(a) is DeviceBuffer and type(b) is DeviceBuffer \
                and type(out) is DeviceBuffer and 1 <= ndim <= MAXDIMS:
            ha, hb = host.get(a.mem), host.get(b.mem)
            if ha is not None and hb is not None:
                dims = [int(d) for d in shape[:ndim]]
                sa = [int(s) for s in astr[:ndim]]
                sb = [int(s) for s in bstr[:ndim]]
                n = 1
                for d in dims:
                    n *= d
                el = SIZE[dt]
                # the strides must stay inside both mirrors (the C kernel trusts them)
                if 0 < n * self._host_bin[op, dt] == out.nbytes <= self._host_max and min(sa) >= 0 \
                        and min(sb) >= 0 and self._ftz == self._cpu.get_ftz() \
                        and (sum((d - 1) * s for d, s in zip(dims, sa)) + 1) * el <= a.nbytes \
                        and (sum((d - 1) * s for d, s in zip(dims, sb)) + 1) * el <= b.nbytes:
                    with self._lock:
                        res = np.empty(out.nbytes, np.uint8)
                        ptr = self._cpu_buf(res)
                        i64 = self._cpu.new_int64
                        if self._cpu.binary_strided(op, dt, ndim, i64(dims), ha[2], i64(sa), hb[2], i64(sb),
                                                    ptr) == OK:
                            self._host_result(out, res, ptr)
                            return OK
        return super().binary_strided(op, dt, ndim, shape, a, astr, b, bstr, out)

    def elementwise_call(self, kind: int, op: int, dt: int, n: int, out_nbytes: int, a_scalar: int = 0,
                         b_scalar: int = 0, param: float = 0.0):
        """For a compiled graph's step: a function that allocates an output buffer of ``out_nbytes`` and runs
        element-wise op ``op`` (``kind`` 1: ``binary_flat`` with these scalar flags, taking ``(a, b)``; 0:
        ``unary`` with ``param``, taking ``(x,)``) over ``n`` elements, and returns ``(status, out)``.  The same
        work and bits as ``alloc`` then ``binary_flat``/``unary`` (tiny ops on the host mirror by the module
        docstring's rule), with what does not change between calls decided once.

        >>> import numpy as np
        >>> from tapeflow import kernels as K
        >>> from tapeflow.kernels import opencl
        >>> be = opencl.OpenCLBackend() if opencl.device_count() else None
        >>> if be is not None:
        ...     x = be.from_numpy(np.array([1.5, 2.0], np.float32))[0]
        ...     add = be.elementwise_call(1, K.BINARY_CODES["add"], K.DTYPE_CODES["float32"], 2, 8)
        ...     st, out = add(x, x)
        ...     assert st == 0 and be.to_numpy(out, None, (2,), np.float32).tolist() == [3.0, 4.0]
        """
        if kind and param:
            raise ValueError(f"elementwise_call: a binary op takes no param (got {param!r})")
        buffer, host, lock, host_result = self._buffer, self._host, self._lock, self._host_result
        new_bytes, from_buffer, get_ftz = np.empty, self._cpu_buf, self._cpu.get_ftz
        el = SIZE[dt] if 0 <= dt < len(SIZE) else 0
        need_a, need_b = (1 if a_scalar else n) * el, (1 if b_scalar else n) * el
        osz = (self._host_bin if kind else self._host_un).get((op, dt))
        on_host = osz is not None and 0 < n * osz == out_nbytes
        device_binary, device_unary = GPUBackend.binary_flat, GPUBackend.unary
        if kind:
            cpu_binary = self._cpu.binary_flat

            def call(a, b):
                out = buffer(out_nbytes)
                if on_host and host and out_nbytes <= self._host_max:
                    ha, hb = host.get(a.mem), host.get(b.mem)
                    if ha is not None and hb is not None and a.nbytes >= need_a and b.nbytes >= need_b \
                            and self._ftz == get_ftz():
                        with lock:
                            res = new_bytes(out_nbytes, np.uint8)
                            ptr = from_buffer(res)
                            if cpu_binary(op, dt, ha[2], a_scalar, hb[2], b_scalar, ptr, n) == OK:
                                host_result(out, res, ptr)
                                return OK, out
                return device_binary(self, op, dt, a, a_scalar, b, b_scalar, out, n), out
            return call
        cpu_unary = self._cpu.unary

        def call1(x):
            out = buffer(out_nbytes)
            if on_host and host and out_nbytes <= self._host_max:
                hx = host.get(x.mem)
                if hx is not None and x.nbytes >= need_a and self._ftz == get_ftz():
                    with lock:
                        res = new_bytes(out_nbytes, np.uint8)
                        ptr = from_buffer(res)
                        if cpu_unary(op, dt, hx[2], ptr, n, param) == OK:
                            host_result(out, res, ptr)
                            return OK, out
            return device_unary(self, op, dt, x, out, n, param), out
        return call1

    def matmul_call(self, dt: int, ta: int, tb: int, batch: int, m: int, n: int, k: int, a_bstride: int,
                    b_bstride: int):
        """For a compiled graph's step: a function ``f(a, b, out)`` that is ``matmul`` with these arguments and
        returns its status, the kernel and its grid found once (a small matmul's enqueue is most of its cost,
        and finding them was a sixth of the rest).

        >>> import numpy as np
        >>> from tapeflow import kernels as K
        >>> from tapeflow.kernels import opencl
        >>> be = opencl.OpenCLBackend() if opencl.device_count() else None
        >>> if be is not None:
        ...     a = be.from_numpy(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))[0]
        ...     out = be.alloc((2, 2), np.float32)[0]
        ...     mm = be.matmul_call(K.DTYPE_CODES["float32"], 0, 0, 1, 2, 2, 2, 4, 4)
        ...     assert mm(a, a, out) == 0 and be.to_numpy(out, None, (2, 2), np.float32).tolist() == [[7, 10], [15, 22]]
        """
        general = self.matmul
        if not (dt in (F32, F64) and self._matmul_vec and not tb and 0 < batch <= 65535 and m > 0 and n > 0
                and k > 0 and m <= 0x7FFFFFFF and n <= 0x7FFFFFFF and k <= 0x7FFFFFFF):
            return lambda a, b, out: general(dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out)
        kern, spec = self._entry(f"matmul_vec_{'f32' if dt == F32 else 'f64'}")
        if kern is None or spec.launch != "grid" or len(spec.signature) != 10:
            return lambda a, b, out: general(dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out)
        w = 16 if dt == F32 else 8   # as GPUBackend._matmul launches the vector kernel
        gsize, lsize, sig, launch, ftz = (-(-n // w), -(-m // 8), batch), (1, 1, 1), spec.signature, self._launch, \
            self._ftz
        ta = 1 if ta else 0

        def call(a, b, out):
            if self._ftz != ftz:   # the denormal mode changed: another build of the kernel
                return general(dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out)
            launch(kern, gsize, lsize, sig, (ta, m, n, k, a, a_bstride, b, b_bstride, out, 0))
            return OK
        return call

    def unary(self, op, dt, x, out, n, param):
        host = self._host
        if host:
            osz = self._host_un.get((op, dt))
            if osz is not None and type(x) is DeviceBuffer and type(out) is DeviceBuffer:
                hx = host.get(x.mem)
                if hx is not None and 0 < n * osz == out.nbytes <= self._host_max and x.nbytes >= n * SIZE[dt] \
                        and self._ftz == self._cpu.get_ftz():
                    with self._lock:
                        res = np.empty(out.nbytes, np.uint8)
                        ptr = self._cpu_buf(res)
                        if self._cpu.unary(op, dt, hx[2], ptr, n, param) == OK:
                            self._host_result(out, res, ptr)
                            return OK
        return super().unary(op, dt, x, out, n, param)


def _is_gpu(index: int) -> bool:
    types = device_types()
    return 0 <= index < len(types) and types[index] == "gpu"


register_backend("opencl", OpenCLBackend, is_gpu=_is_gpu, count=device_count, type_name="OpenCL")
