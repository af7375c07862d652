"""What the OpenCL and CUDA backends share: buffers, the caching allocator and the kernel table.

A device backend (:class:`GPUBackend`) implements the CPU backend's kernel table
(every ``tpf_X`` of ``cdef/*.h`` as ``backend.X``, with device buffer handles where
C takes pointers) on top of a handful of driver primitives a subclass provides:

- ``_dev_alloc(nbytes) -> mem`` / ``_dev_free(mem)``: raw device memory;
- ``_write(mem, array)``: an asynchronous host-to-device copy (the array is kept
  alive until the copy has run); ``_read(mem, array)``: a blocking device-to-host
  copy (it waits for the work queued before it); ``_copy(src, dst, nbytes, ...)``;
- ``_kernel(family, name)``: a compiled kernel (``None`` when the family has no
  kernel of that name, e.g. float64 on a device without it) and ``_launch(kernel,
  gsize, lsize, sig, args)``: enqueue it;
- ``synchronize()``: wait for everything queued.

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
from typing import ClassVar

import numpy as np

from . import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from .backend import Backend

OK, EBADSIZE, EBADDTYPE, EBADOP, ERANGE, EDIVZERO, ENOMEM, EBADARG = range(8)
GEOM_MAX = 1 << 60   # csrc/conv.c: the largest size or product of sizes of a conv/pool geometry
F16, BF16, F32, F64, I8, U8, I16, I32, I64, BOOL = range(10)
SUF = ("f16", "bf16", "f32", "f64", "i8", "u8", "i16", "i32", "i64", "b")
SIZE = (2, 2, 4, 8, 1, 1, 2, 4, 8, 1)
INTS = (I8, U8, I16, I32, I64)
MAXDIMS = 12
INT32_MAX = 2 ** 31 - 1
LOCAL = 256                      # work-items per work-group of 1-D launches

SOURCE_DIR = pathlib.Path(__file__).with_name("gpu")
FAMILIES = ("elementwise", "reduce", "matmul", "cast", "copy", "index", "join", "sort", "nn", "random", "conv",
            "linalg")

_INT_CHECKED = {BINARY_OPS.index(n) for n in ("floordiv", "mod", "truncatediv", "truncatemod", "pow")}
_POLYGAMMA = UNARY_OPS.index("polygamma")


class OutOfDeviceMemory(MemoryError):
    """A device ran out of memory; the message names the device and the request."""

    def __init__(self, device: str, nbytes: int, detail: str = ""):
        self.device, self.nbytes = device, nbytes
        super().__init__(f"{device} is out of memory: cannot allocate {_human(nbytes)}"
                         + (f" ({detail})" if detail else ""))


_MEMORY_ERROR = [OutOfDeviceMemory]


def register_memory_error(cls) -> None:
    """Make device out-of-memory errors instances of ``cls`` too (core registers its ResourceExhaustedError).

    The kernels layer cannot import the layers above it; this lets ``except
    tf.errors.ResourceExhaustedError`` catch a device running out of memory, with no
    cost on the hot path.

    >>> from tapeflow.kernels import gpu_common
    >>> class Exhausted(MemoryError):
    ...     pass
    >>> gpu_common.register_memory_error(Exhausted)
    >>> isinstance(gpu_common.out_of_memory("opencl:0", 1 << 40), Exhausted)
    True
    >>> gpu_common.register_memory_error(None)   # back to plain OutOfDeviceMemory
    """
    if cls is None or issubclass(OutOfDeviceMemory, cls):
        _MEMORY_ERROR[0] = OutOfDeviceMemory
    else:
        _MEMORY_ERROR[0] = type("OutOfDeviceMemory", (OutOfDeviceMemory, cls), {"__module__": __name__})


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

    def __init__(self, mem, arg, nbytes, cap, owner):
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


class GPUBackend(Backend):
    """The kernel table of a device backend over a subclass's driver primitives."""

    name = "gpu"
    device_name = "gpu:0"
    device_type = "gpu"
    fp64 = True
    #: entries of the CPU backend's table, filled in by __init__ (the contract to meet)
    KERNELS: tuple = ()

    def __init__(self):
        from . import get_backend

        cpu = get_backend("cpu")
        self.KERNELS = cpu.KERNELS
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

    # ------------------------------------------------------------------ memory
    def _buffer(self, nbytes: int) -> DeviceBuffer:
        cap = bucket_size(nbytes)
        with self._lock:
            free = self._pool.get(cap)
            if free:
                mem, arg = free.pop()
                self._pooled -= cap
                self.stats["reuses"] += 1
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
        return DeviceBuffer(mem, self._arg_of(mem), nbytes, cap, self)

    def _release(self, mem, arg, cap) -> None:
        if self._closed:   # at exit: the driver frees everything
            return
        with self._lock:
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
    def _k(self, family: str, name: str):
        key = (family, name, self._ftz)   # denormal flushing is a build option: kernels per mode
        k = self._kernels.get(key, False)
        if k is False:
            with self._lock:
                k = self._kernels[key] = self._kernel(family, name)
        return k

    def _run(self, family, name, n, sig, *args) -> int:
        """Launch a 1-D kernel over n work-items; EBADDTYPE when the kernel does not exist."""
        k = self._k(family, name)
        if k is None:
            return EBADDTYPE
        if n > 0:
            self._launch(k, (_round_up(n, LOCAL),), (LOCAL,), sig, args)
        return OK

    def _run_nd(self, family, name, gsize, lsize, sig, *args) -> int:
        k = self._k(family, name)
        if k is None:
            return EBADDTYPE
        if all(g > 0 for g in gsize):
            self._launch(k, tuple(_round_up(g, l) for g, l in zip(gsize, lsize)), tuple(lsize), sig, args)
        return OK

    def _flag_buffer(self):
        if self._flag is None:
            self._flag = self._buffer(64)
        return self._flag

    def _reset_flag(self, words: int = 1, value: int = 0):
        buf = self._flag_buffer()
        self._run("copy", "fill_8", words, "BlL", buf, words, value & 0xFFFFFFFFFFFFFFFF)
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

    # --------------------------------------------------------- elementwise
    def unary(self, op, dt, x, out, n, param):
        if op < 0 or op >= len(UNARY_OPS):
            return EBADOP
        if not 0 <= dt < 10:
            return EBADDTYPE
        k = self._k("elementwise", f"unary_{UNARY_OPS[op]}_{SUF[dt]}")
        if k is None:
            return EBADDTYPE
        if n < 0:
            return EBADSIZE
        if op == _POLYGAMMA and not (0 <= param <= 64 and param == int(param)):
            return EBADARG
        if n:
            self._launch(k, (_round_up(n, LOCAL),), (LOCAL,), "BBlp", (x, out, n, float(param)))
        return OK

    def _bin_kernel(self, op, dt):
        if op < 0 or op >= len(BINARY_OPS):
            return EBADOP, None
        k = self._k("elementwise", f"binary_{BINARY_OPS[op]}_{SUF[dt]}") if 0 <= dt < 10 else None
        return (OK, k) if k is not None else (EBADDTYPE, None)

    def _binary(self, k, op, dt, n, nd, shape, astr, bstr, a, b, out):
        if n == 0:
            return OK
        if not (op in _INT_CHECKED and dt in INTS):
            self._launch(k, (_round_up(n, LOCAL),), (LOCAL,), "BBBliDDDB", (a, b, out, n, nd, shape, astr, bstr, None))
            return OK
        with self._lock:   # integer division and powers: the kernel flags bad operands, the host reads the flag
            flag = self._reset_flag()
            self._launch(k, (_round_up(n, LOCAL),), (LOCAL,), "BBBliDDDB", (a, b, out, n, nd, shape, astr, bstr, flag))
            f = int(self._read_words(flag, 1)[0])
        return OK if not f else EDIVZERO if f == 1 else EBADARG

    def binary_flat(self, op, dt, a, a_scalar, b, b_scalar, out, n):
        st, k = self._bin_kernel(op, dt)
        if st:
            return st
        if n < 0:
            return EBADSIZE
        return self._binary(k, op, dt, n, 1, [n], [0 if a_scalar else 1], [0 if b_scalar else 1], a, b, out)

    def binary_strided(self, op, dt, ndim, shape, a, astr, b, bstr, out):
        st, k = self._bin_kernel(op, dt)
        if st:
            return st
        if ndim < 1 or ndim > MAXDIMS:
            return EBADSIZE
        shape = _ints(shape[:ndim])
        if any(d < 0 for d in shape):
            return EBADSIZE
        return self._binary(k, op, dt, _prod(shape), ndim, shape, _ints(astr[:ndim]), _ints(bstr[:ndim]), a, b, out)

    # ----------------------------------------------------------- reductions
    def _split(self, count: int, r: int):
        """(nparts, chunk): split the reduced axis when there are few outputs."""
        if count >= 1024 or r < 4096:
            return 1, r
        nparts = min(-(-r // 2048), max(1, 8192 // count))
        chunk = -(-r // nparts)
        return -(-r // chunk), chunk

    def reduce(self, op, dt, x, out, outer, r, inner):
        if op < 0 or op >= len(REDUCE_OPS):
            return EBADOP
        if not 0 <= dt < 10:
            return EBADDTYPE
        name = f"{REDUCE_OPS[op]}_{SUF[dt]}"
        k = self._k("reduce", "reduce_" + name)
        if k is None:
            return EBADDTYPE
        if outer < 0 or r < 0 or inner < 0:
            return EBADSIZE
        count = outer * inner
        if count == 0:
            return OK
        nparts, chunk = self._split(count, r)
        if nparts == 1:
            return self._run("reduce", "reduce_" + name, count, "BBBllllli", x, out, out, outer, r, inner, 1,
                             max(r, 1), 0)
        if dt == BOOL or REDUCE_OPS[op] in ("max", "min"):
            acc = SIZE[dt]
        else:
            acc = 8
        part = self._buffer(nparts * count * acc)
        il = 1 if inner == 1 and self.device_type != "cpu" else 0
        self._run("reduce", "reduce_" + name, nparts * count, "BBBllllli", x, out, part, outer, r, inner, nparts,
                  chunk, il)
        return self._run("reduce", "reducec_" + name, count, "BBlll", part, out, count, nparts, r)

    def argreduce(self, op, dt, x, out, outer, r, inner):
        if op < 0 or op > 1:
            return EBADOP
        if not 0 <= dt < 10:
            return EBADDTYPE
        name = f"{('max', 'min')[op]}_{SUF[dt]}"
        if self._k("reduce", "argreduce_" + name) is None:
            return EBADDTYPE
        if outer < 0 or r < 1 or inner < 0:
            return EBADSIZE
        count = outer * inner
        if count == 0:
            return OK
        nparts, chunk = self._split(count, r)
        if nparts == 1:
            return self._run("reduce", "argreduce_" + name, count, "BBBlllll", x, out, out, outer, r, inner, 1, r)
        part = self._buffer(nparts * count * 8)
        self._run("reduce", "argreduce_" + name, nparts * count, "BBBlllll", x, out, part, outer, r, inner,
                  nparts, chunk)
        return self._run("reduce", "argreducec_" + name, count, "BBBllll", x, part, out, count, nparts, r, inner)

    # ---------------------------------------------------------------- matmul
    def matmul(self, dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out):
        if batch < 0 or m < 0 or n < 0 or k < 0:
            return EBADSIZE
        if m > INT32_MAX or n > INT32_MAX or k > INT32_MAX:
            return EBADSIZE
        if not 0 <= dt < 10 or dt in (F16, BF16, BOOL):
            return EBADDTYPE
        kern = self._k("matmul", f"matmul_{SUF[dt]}")
        if kern is None:
            return EBADDTYPE
        if m * n == 0 or batch == 0:
            return OK
        if k == 0:
            return self._fill_bits(out, SIZE[dt], batch * m * n, 0)
        return self._matmul(kern, dt, 1 if ta else 0, 1 if tb else 0, batch, m, n, k, a, a_bstride, b, b_bstride, out)

    #: CPU-type devices run float matmuls through explicit vectors (matmul_vec_*) rather than tiles
    _matmul_vec = False

    def _matmul(self, kern, dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out):
        if dt in (F32, F64) and self._matmul_vec:
            vec = self._k("matmul", f"matmul_vec_{SUF[dt]}")
            if vec is not None:
                if tb:   # the vector kernel streams rows of B: transpose it first (O(k n) against O(m n k))
                    nb = batch if b_bstride else 1
                    bt = self._buffer(nb * k * n * SIZE[dt])
                    self.strided_copy(SIZE[dt], 3, [nb, k, n], b, 0, [b_bstride, 1, k], bt, 0, [k * n, n, 1])
                    b, b_bstride = bt, (k * n if b_bstride else 0)
                w = 16 if dt == F32 else 8
                for b0 in range(0, batch, 65535):
                    nb = min(65535, batch - b0)
                    self._launch(vec, (-(-n // w), -(-m // 8), nb), (1, 1, 1), "illlBlBlBl",
                                 (ta, m, n, k, a, a_bstride, b, b_bstride, out, b0))
                return OK
        if dt in (F32, F64):
            gsize = [-(-n // 64) * 16, -(-m // 64) * 16]
        else:
            gsize = [_round_up(n, 16), _round_up(m, 16)]
        for b0 in range(0, batch, 65535):
            nb = min(65535, batch - b0)
            self._launch(kern, (gsize[0], gsize[1], nb), (16, 16, 1), "iilllBlBlBl",
                         (ta, tb, m, n, k, a, a_bstride, b, b_bstride, out, b0))
        return OK

    # ------------------------------------------------------------ cast, copy
    def cast(self, src, x, dst, o, n):
        if not (0 <= src < 10 and 0 <= dst < 10):
            return EBADDTYPE
        if n < 0:
            return EBADSIZE
        if src == dst:
            if n:
                self._copy(x.mem, o.mem, n * SIZE[src])
            return OK
        return self._run("cast", f"cast_{SUF[src]}_{SUF[dst]}", n, "BBl", x, o, n)

    def _to_device(self, value, nbytes):
        """Host bytes (e.g. from host_ptr) as a temporary device buffer; device handles pass through."""
        if isinstance(value, DeviceBuffer):
            return value
        raw = np.frombuffer(bytes(value)[:nbytes].ljust(nbytes, b"\0"), np.uint8).copy()
        buf = self._buffer(nbytes)
        self._write(buf.mem, raw)
        return buf

    def strided_copy(self, elsize, ndim, shape, src, src_off, src_str, dst, dst_off, dst_str):
        if ndim < 0 or ndim > MAXDIMS:
            return EBADSIZE
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        shape = _ints(shape[:ndim])
        if any(d < 0 for d in shape):
            return EBADSIZE
        total = _prod(shape)
        if total == 0:
            return OK
        sstr, dstr = _ints(src_str[:ndim]), _ints(dst_str[:ndim])
        if not isinstance(src, DeviceBuffer):   # a host value (e.g. the 1 of tf.eye), read with stride 0
            span = src_off + sum((d - 1) * s for d, s in zip(shape, sstr) if s > 0) + 1
            src = self._to_device(src, span * elsize)
        if ndim == 1 and sstr[0] == 1 and dstr[0] == 1:
            self._copy(src.mem, dst.mem, total * elsize, src_off * elsize, dst_off * elsize)
            return OK
        return self._run("copy", f"strided_copy_{elsize}", total, "BlBliDDDl", src, src_off, dst, dst_off, ndim,
                         shape, sstr, dstr, total)

    def _fill_bits(self, dst, elsize, n, bits):
        return self._run("copy", f"fill_{elsize}", n, "BlL", dst, n, bits)

    def fill(self, elsize, value, dst, n):
        if n < 0:
            return EBADSIZE
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        return self._fill_bits(dst, elsize, n, _value_bits(value, elsize))

    # ------------------------------------------------------------- validation
    def _first_bad(self, kname, n, sig, *args):
        """Run a validate_* kernel over n items (in slices of 2**30); the first bad position or -1."""
        flag = self._flag_buffer()
        for base in range(0, n, 1 << 30):
            m = min(1 << 30, n - base)
            with self._lock:
                self._reset_flag(1, 0x7FFFFFFF7FFFFFFF)
                st = self._run("index", kname, m, sig, *args[:1], base, m, *args[1:], flag)
                if st:
                    return -2
                bad = int(self._read_words(flag, 1, np.int32)[0])
            if bad != 0x7FFFFFFF:
                return base + bad
        return -1

    def _read_int(self, buf, index, idx_dt):
        """Element ``index`` of an int32/int64 device array, read back (error paths only)."""
        dtype = np.int64 if idx_dt == I64 else np.int32
        out = np.empty(1, dtype)
        self._read(buf.mem, out, index * out.itemsize)
        return int(out[0])

    @staticmethod
    def _idx_suffix(idx_dt):
        return {I32: "i32", I64: "i64"}.get(idx_dt)

    # ------------------------------------------------------------------ index
    def gather(self, elsize, idx_dt, params, idx, out, batch, outer, axis_n, nidx, inner, bad):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if min(batch, outer, axis_n, nidx, inner) < 0:
            return EBADSIZE
        first = self._first_bad(f"validate_idx_{isuf}", batch * nidx, "BllilB", idx, 0, axis_n)
        if first >= 0:
            bad[0] = first
            return ERANGE
        total = batch * outer * nidx * inner
        return self._run("index", f"gather_{elsize}_{isuf}", total, "BBBlllll", params, idx, out, outer, axis_n,
                         nidx, inner, total)

    def scatter_add_axis(self, dt, idx_dt, upd, idx, out, batch, outer, axis_n, nidx, inner, flags, bad):
        """flags: 1 drops negative indices (else an error), 2 requires them sorted within each batch row."""
        if not 0 <= dt < 10:
            return EBADDTYPE
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        k = self._k("index", f"scatter_add_axis_{SUF[dt]}_{isuf}")
        if k is None:
            return EBADDTYPE
        if min(batch, outer, axis_n, nidx, inner) < 0:
            return EBADSIZE
        if flags & 2 and nidx:
            first = self._first_bad(f"validate_sorted_{isuf}", batch * nidx, "BlllB", idx, nidx)
            if first >= 0:
                bad[0] = first
                return EBADARG
        first = self._first_bad(f"validate_idx_{isuf}", batch * nidx, "BllilB", idx, 1 if flags & 1 else 0, axis_n)
        if first >= 0:
            bad[0] = first
            return ERANGE
        bo_n = batch * outer
        self._fill_bits(out, SIZE[dt], bo_n * axis_n * inner, 0)
        if bo_n == 0 or inner == 0 or nidx == 0:
            return OK
        return self._run("index", f"scatter_add_axis_{SUF[dt]}_{isuf}", bo_n * inner, "BBBlllll", upd, idx, out,
                         bo_n, outer, axis_n, nidx, inner)

    def gather_nd(self, elsize, idx_dt, params, idx, out, batch, nrest, k, dims, inner, bad):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if batch < 0 or nrest < 0 or k < 0 or inner < 0:
            return EBADSIZE
        if k > MAXDIMS:
            return EBADSIZE
        dims = _ints(dims[:k])
        first = self._first_bad(f"validate_nd_{isuf}", batch * nrest, "BlliDB", idx, k, dims)
        if first >= 0:
            bad[0] = first
            return ERANGE
        total = batch * nrest * inner
        return self._run("index", f"gather_nd_{elsize}_{isuf}", total, "BBBliDlll", params, idx, out, nrest, k,
                         dims, _prod(dims), inner, total)

    def scatter_nd(self, op, dt, idx_dt, idx, upd, out, n, k, dims, inner, bad):
        if not 0 <= dt < 10:
            return EBADDTYPE
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if op not in (0, 1):
            return EBADOP
        if n < 0 or k < 0 or inner < 0 or k > MAXDIMS:
            return EBADSIZE
        name = f"scatter_nd_set_{SIZE[dt]}_{isuf}" if op == 0 else f"scatter_nd_add_{SUF[dt]}_{isuf}"
        if self._k("index", name) is None:
            return EBADDTYPE
        dims = _ints(dims[:k])
        first = self._first_bad(f"validate_nd_{isuf}", n, "BlliDB", idx, k, dims)
        if first >= 0:
            bad[0] = first
            return ERANGE
        if n == 0 or inner == 0:
            return OK
        return self._run("index", name, inner, "BBBliDl", idx, upd, out, n, k, dims, inner)

    def one_hot(self, elsize, idx_dt, idx, on, off, out, outer, depth, inner):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if outer < 0 or depth < 0 or inner < 0:
            return EBADSIZE
        total = outer * depth * inner
        return self._run("index", f"one_hot_{elsize}_{isuf}", total, "BBllLLl", idx, out, depth, inner,
                         _value_bits(on, elsize), _value_bits(off, elsize), total)

    _NZ: ClassVar[dict] = {F16: "h16", BF16: "h16", F32: "f32", F64: "f64", I8: "i8", U8: "u8", I16: "i16", I32: "i32",
           I64: "i64", BOOL: "u8"}
    _NZ_CHUNK = 1024

    def _nz_counts(self, dt, x, n):
        """Per-chunk non-zero counts, scanned to offsets; returns (offsets, total buffer, nchunks)."""
        nchunks = -(-n // self._NZ_CHUNK)
        counts = self._buffer(max(nchunks, 1) * 8)
        total = self._buffer(8)
        self._run("index", f"nz_count_{self._NZ[dt]}", nchunks, "BllB", x, n, self._NZ_CHUNK, counts)
        self._run("index", "nz_scan", 1, "BlB", counts, nchunks, total)
        return counts, total, nchunks

    def count_nonzero(self, dt, x, n, count):
        if n < 0:
            return EBADSIZE
        if not 0 <= dt < 10:
            return EBADDTYPE
        if n == 0:
            count[0] = 0
            return OK
        _, total, _ = self._nz_counts(dt, x, n)
        count[0] = int(self._read_words(total, 1)[0])
        return OK

    def where_indices(self, dt, x, ndim, shape, n, out):
        if n < 0 or ndim < 0 or ndim > MAXDIMS:
            return EBADSIZE
        if not 0 <= dt < 10:
            return EBADDTYPE
        if n == 0:
            return OK
        counts, _, nchunks = self._nz_counts(dt, x, n)
        return self._run("index", f"nz_write_{self._NZ[dt]}", nchunks, "BllBiDB", x, n, self._NZ_CHUNK, counts,
                         ndim, _ints(shape[:ndim]) or [1], out)

    def select(self, elsize, ndim, shape, cond, cstr, a, astr, b, bstr, out):
        if ndim < 1 or ndim > MAXDIMS:
            return EBADSIZE
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        shape = _ints(shape[:ndim])
        if any(d < 0 for d in shape):
            return EBADSIZE
        total = _prod(shape)
        return self._run("index", f"select_{elsize}", total, "BBBBiDDDDl", cond, a, b, out, ndim, shape,
                         _ints(cstr[:ndim]), _ints(astr[:ndim]), _ints(bstr[:ndim]), total)

    # ------------------------------------------------------------------- join
    def concat(self, elsize, n, srcs, widths, outer, dst):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        if n < 0 or outer < 0:
            return EBADSIZE
        widths = _ints(widths[:n])
        if any(w < 0 for w in widths):
            return EBADSIZE
        total = sum(widths)
        if total == 0 or outer == 0:
            return OK
        off = 0
        for src, w in zip(list(srcs)[:n], widths):
            if w:
                self._run("copy", f"rows_copy_{elsize}", outer * w, "BllBllll", src, w, 0, dst, total, off, w, outer)
            off += w
        return OK

    def split(self, elsize, n, src, widths, outer, dsts):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        if n < 0 or outer < 0:
            return EBADSIZE
        widths = _ints(widths[:n])
        if any(w < 0 for w in widths):
            return EBADSIZE
        total = sum(widths)
        if total == 0 or outer == 0:
            return OK
        off = 0
        for dst, w in zip(list(dsts)[:n], widths):
            if w:
                self._run("copy", f"rows_copy_{elsize}", outer * w, "BllBllll", src, total, off, dst, w, 0, w, outer)
            off += w
        return OK

    def pad(self, elsize, mode, ndim, in_shape, before, out_shape, src, dst, value):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        if mode < 0 or mode > 2:
            return EBADOP
        if ndim < 0 or ndim > MAXDIMS:
            return EBADSIZE
        ins, bef, outs = _ints(in_shape[:ndim]), _ints(before[:ndim]), _ints(out_shape[:ndim])
        if any(d < 0 for d in ins + outs):
            return EBADSIZE
        total = _prod(outs)
        return self._run("join", f"pad_{elsize}", total, "BBiDDDiLl", src, dst, ndim, ins or [1], bef or [0],
                         outs or [1], mode, _value_bits(value, elsize), total)

    def iota(self, dt, start, delta, istart, idelta, out, n):
        if n < 0:
            return EBADSIZE
        if not 0 <= dt < 10 or dt == BOOL:
            return EBADDTYPE
        return self._run("join", f"iota_{SUF[dt]}", n, "Blppll", out, n, float(start), float(delta), int(istart),
                         int(idelta))

    def linspace(self, dt, start, stop, out, n):
        if n < 0:
            return EBADSIZE
        if dt not in (F16, BF16, F32, F64):
            return EBADDTYPE
        step = (stop - start) / float(n - 1) if n > 1 else 0.0
        return self._run("join", f"linspace_{SUF[dt]}", n, "Blppp", out, n, float(start), float(stop), step)

    # ------------------------------------------------------------------- sort
    _KEY: ClassVar[dict] = {F16: ("f", 4), BF16: ("f", 4), F32: ("f", 4), F64: ("d", 8), I8: ("l", 8), U8: ("l", 8),
            I16: ("l", 8), I32: ("l", 8), I64: ("l", 8), BOOL: ("l", 8)}

    def _sort(self, dt, x, vals, idx, idx_dt, outer, n, descending, k):
        if dt not in self._KEY:
            return EBADDTYPE
        want_idx = not _is_null(idx)
        want_vals = not _is_null(vals)
        isuf = self._idx_suffix(idx_dt) if want_idx else "i64"
        if isuf is None:
            return EBADDTYPE
        if outer < 0 or n < 0 or k > n:
            return EBADSIZE
        if outer == 0 or n == 0 or k == 0:
            return OK
        kind, ks = self._KEY[dt]
        if self._k("sort", f"sort_load_{SUF[dt]}") is None:
            return EBADDTYPE
        total = outer * n
        keys = [self._buffer(total * ks), self._buffer(total * ks)]
        ids = [self._buffer(total * 8), self._buffer(total * 8)]
        self._run("sort", f"sort_load_{SUF[dt]}", total, "BBBll", x, keys[0], ids[0], n, total)
        merge = f"sort_merge_{kind}_{'desc' if descending else 'asc'}"
        cur, w = 0, 1
        while w < n:
            self._run("sort", merge, total, "BBBBlll", keys[cur], ids[cur], keys[1 - cur], ids[1 - cur], n, w, total)
            cur, w = 1 - cur, w * 2
        m = n if k < 0 else k
        return self._run("sort", f"sort_emit_{SIZE[dt]}_{isuf}", outer * m, "BBBBlliil", x, ids[cur], vals, idx, n,
                         m, 1 if want_vals else 0, 1 if want_idx else 0, outer * m)

    def sort(self, dt, x, vals, idx, idx_dt, outer, n, descending, want):
        if not want & 3:
            return EBADARG
        return self._sort(dt, x, vals if want & 1 else None, idx if want & 2 else None, idx_dt, outer, n,
                          1 if descending else 0, -1)

    def top_k(self, dt, x, vals, idx, idx_dt, outer, n, k):
        if k < 0:
            return EBADSIZE
        return self._sort(dt, x, vals, idx, idx_dt, outer, n, 1, k)

    def cumulative(self, op, dt, x, out, outer, n, inner, exclusive, reverse):
        if op not in (0, 1):
            return EBADOP
        if outer < 0 or n < 0 or inner < 0:
            return EBADSIZE
        if outer == 0 or n == 0 or inner == 0:
            return OK
        if not 0 <= dt < 10:
            return EBADDTYPE
        return self._run("sort", f"cumulative_{SUF[dt]}", outer * inner, "BBilllii", x, out, op, outer, n, inner,
                         1 if exclusive else 0, 1 if reverse else 0)

    # --------------------------------------------------------------------- nn
    def softmax(self, dt, log_, x, out, outer, r, inner):
        if outer < 0 or r < 0 or inner < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        if outer * r * inner == 0:
            return OK
        return self._run("nn", f"softmax_{SUF[dt]}", outer * inner, "BBilll", x, out, 1 if log_ else 0, outer, r,
                         inner)

    def softmax_xent(self, dt, labels, logits, loss, backprop, outer, r, inner):
        if outer < 0 or r < 0 or inner < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        if outer * inner == 0:
            return OK
        want = not _is_null(backprop)
        return self._run("nn", f"softmax_xent_{SUF[dt]}", outer * inner, "BBBBilll", labels, logits, loss,
                         backprop if want else None, 1 if want else 0, outer, r, inner)

    def sparse_softmax_xent(self, dt, label_dt, labels, logits, loss, backprop, rows, r, bad):
        if rows < 0 or r < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        lsuf = self._idx_suffix(label_dt)
        if lsuf is None:
            return EBADDTYPE
        first = self._first_bad(f"validate_idx_{lsuf}", rows, "BllilB", labels, 0, r)
        if first >= 0:
            bad[0] = first
            bad[1] = self._read_int(labels, first, label_dt)
            return ERANGE
        if rows == 0:
            return OK
        want = not _is_null(backprop)
        return self._run("nn", f"sparse_softmax_xent_{SUF[dt]}_{lsuf}", rows, "BBBBill", labels, logits, loss,
                         backprop if want else None, 1 if want else 0, rows, r)

    # ----------------------------------------------------------------- random
    def philox4x32_10(self, ctr, key, out, nblocks):
        """Raw Philox blocks; ``ctr`` (4 words) and ``key`` (2 words) are host values, ``out`` a device buffer."""
        if nblocks < 0:
            return EBADSIZE
        c = [int(ctr[i]) & 0xFFFFFFFF for i in range(4)]
        kk = [int(key[i]) & 0xFFFFFFFF for i in range(2)]
        return self._run("random", "philox_raw", nblocks, "IIIIIIBl", *c, *kk, out, nblocks)

    def random_uniform(self, dt, out, n, key, stream, lo, hi):
        if n < 0:
            return EBADSIZE
        if not lo < hi:
            return EBADARG
        if dt not in (F32, F64, F16, BF16):
            return EBADDTYPE
        per = 2 if dt == F64 else 4
        return self._run("random", f"random_uniform_{SUF[dt]}", -(-n // per), "BlLLpp", out, n, key, stream,
                         float(lo), float(hi))

    def random_uniform_int(self, dt, out, n, key, stream, lo, hi):
        if n < 0:
            return EBADSIZE
        if not lo < hi:
            return EBADARG
        if dt == I32:
            if lo < -2 ** 31 or hi > 2 ** 31:
                return EBADARG
            per = 4
        elif dt == I64:
            per = 2
        else:
            return EBADDTYPE
        return self._run("random", f"random_uniform_int_{SUF[dt]}", -(-n // per), "BlLLll", out, n, key, stream,
                         int(lo), int(hi))

    def random_normal(self, dt, out, n, key, stream, mean, stddev):
        if n < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        per = 2 if dt == F64 else 4
        return self._run("random", f"random_normal_{SUF[dt]}", -(-n // per), "BlLLdd", out, n, key, stream,
                         float(mean), float(stddev))

    def random_truncated_normal(self, dt, out, n, key, stream, mean, stddev):
        if n < 0 or n > 1 << 56:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        return self._run("random", f"random_truncated_normal_{SUF[dt]}", n, "BlLLdd", out, n, key, stream,
                         float(mean), float(stddev))

    def random_dropout_mask(self, dt, out, n, key, stream, rate):
        if n < 0:
            return EBADSIZE
        if not 0.0 <= rate < 1.0:
            return EBADARG
        if dt not in (F32, F64):
            return EBADDTYPE
        keep = 1.0 / (1.0 - rate)
        if dt == F32:
            keep = float(np.float32(keep))
        return self._run("random", f"random_dropout_mask_{SUF[dt]}", -(-n // 4), "BlLLp" + ("f" if dt == F32 else "d"),
                         out, n, key, stream, float(rate), keep)

    def random_categorical(self, dt, logits, batch, classes, num_samples, out_dt, out, key, stream, bad_row):
        if batch < 0 or classes < 0 or num_samples < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        osuf = self._idx_suffix(out_dt)
        if osuf is None:
            return EBADDTYPE
        if batch == 0 or num_samples == 0:
            return OK
        if classes == 0:
            bad_row[0] = 0
            return EBADARG
        name = f"random_categorical_{SUF[dt]}_{osuf}"
        if self._k("random", name) is None:
            return EBADDTYPE
        cdf = self._buffer(batch * classes * 8)
        flag = self._flag_buffer()
        with self._lock:
            self._reset_flag(1, 0x7FFFFFFF7FFFFFFF)
            self._run("random", name, batch, "BlllBLLBB", logits, batch, classes, num_samples, out, key, stream,
                      cdf, flag)
            first = int(self._read_words(flag, 1, np.int32)[0])
        if first != 0x7FFFFFFF:
            bad_row[0] = first
            return EBADARG
        return OK

    def random_shuffle(self, rowbytes, n, src, dst, perm_buf, key, stream):
        if rowbytes < 0 or n < 0:
            return EBADSIZE
        if n == 0:
            return OK
        self._run("random", "shuffle_perm", 1, "BlLL", perm_buf, n, key, stream)
        if rowbytes == 0:
            return OK
        e = 8 if rowbytes % 8 == 0 else 4 if rowbytes % 4 == 0 else 2 if rowbytes % 2 == 0 else 1
        roww = rowbytes // e
        return self._run("random", f"shuffle_rows_{e}", n * roww, "BBBll", src, dst, perm_buf, n, roww)

    # ------------------------------------------------------------------- conv
    @staticmethod
    def _geom(geom, depthwise=False, pool=False):
        """csrc/conv.c's load_geom / conv_geom: every size, stride, dilation, padding and every
        product the kernels form from them up to 2**60 (int64 indices never overflow)."""
        g = _ints(geom[:15])
        if len(g) < 15:
            return EBADARG, None
        n, h, w, c, kh, kw, oc, oh, ow, sh, sw, dh, dw, pt, pl = g
        if min(n, h, w, c, kh, kw, oc, oh, ow) < 0:
            return EBADSIZE, None
        if min(sh, sw, dh, dw) < 1:
            return EBADARG, None
        products = [*g, -pt, -pl, max(kh - 1, 0) * dh, max(kw - 1, 0) * dw, max(oh - 1, 0) * sh, max(ow - 1, 0) * sw,
                    n * h * w * c, n * oh * ow * oc]
        if not pool:
            products += [kh * kw * c, kh * kw * oc, kh * kw * c * oc]
        if max(products) > GEOM_MAX:
            return EBADSIZE, None
        if pool and min(kh, h) * min(kw, w) > INT32_MAX:
            return EBADSIZE, None
        if not pool and (kh * kw * c > INT32_MAX or oc > INT32_MAX or c > INT32_MAX):
            return EBADSIZE, None
        if depthwise and (oc != 0 if c == 0 else oc % c):
            return EBADSIZE, None
        return OK, g + [0]

    def _conv(self, name, dt, geom, depthwise, count_of, *bufs, zero_out=False):
        st, g = self._geom(geom, depthwise, pool="pool" in name)
        if st:
            return st
        if dt not in (F32, F64):
            return EBADDTYPE
        n = count_of(g)
        return self._run("conv", f"{name}_{SUF[dt]}", n, "B" * len(bufs) + "G", *bufs, g)

    @staticmethod
    def _outs(g):
        return g[0] * g[7] * g[8] * g[6]

    @staticmethod
    def _ins(g):
        return g[0] * g[1] * g[2] * g[3]

    @staticmethod
    def _pool_outs(g):
        return g[0] * g[7] * g[8] * g[3]

    #: convolutions as im2col + matmul (fast where matmul is); else the direct kernels
    _conv_gemm = True
    #: the largest column matrix built at once (whole images per block)
    COL_BYTES = 128 << 20

    def _gemm_plan(self, dt, geom):
        """(status, geometry, images per block) for the im2col route, or a status to stop on."""
        st, g = self._geom(geom)
        if st:
            return st, None, 0
        if dt not in (F32, F64):
            return EBADDTYPE, None, 0
        n, oh, ow, k = g[0], g[7], g[8], g[4] * g[5] * g[3]
        per_image = max(1, oh * ow * k * SIZE[dt])
        return OK, g, max(1, min(n, self.COL_BYTES // per_image))

    def _matmul_into(self, dt, ta, tb, m, n, k, a, b, out):
        kern = self._k("matmul", f"matmul_{SUF[dt]}")
        if kern is None:
            return EBADDTYPE
        if m * n == 0:
            return OK
        if k == 0:
            return self._fill_bits(out, SIZE[dt], m * n, 0)
        return self._matmul(kern, dt, ta, tb, 1, m, n, k, a, 0, b, 0, out)

    def conv2d(self, dt, geom, x, w, y):
        if not self._conv_gemm:
            return self._conv("conv2d", dt, geom, False, self._outs, x, w, y)
        st, g, per = self._gemm_plan(dt, geom)
        if st:
            return st
        n, oc, plane, k, es = g[0], g[6], g[7] * g[8], g[4] * g[5] * g[3], SIZE[dt]
        if n * plane * oc == 0:
            return OK
        for n0 in range(0, n, per):
            nb = min(per, n - n0)
            rows = nb * plane
            col = self._buffer(rows * k * es)
            self._run("conv", f"im2col_{SUF[dt]}", rows, "BBGll", x, col, g, n0, rows)
            dst = y if nb == n else self._buffer(rows * oc * es)
            self._matmul_into(dt, 0, 0, rows, oc, k, col, w, dst)
            if dst is not y:
                self._copy(dst.mem, y.mem, rows * oc * es, 0, n0 * plane * oc * es)
        return OK

    def conv2d_backprop_input(self, dt, geom, dy, w, dx):
        if not self._conv_gemm:
            return self._conv("conv2d_backprop_input", dt, geom, False, self._ins, dy, w, dx)
        st, g, per = self._gemm_plan(dt, geom)
        if st:
            return st
        n, h, wd, c, oc, plane, k, es = g[0], g[1], g[2], g[3], g[6], g[7] * g[8], g[4] * g[5] * g[3], SIZE[dt]
        if n * h * wd * c == 0:
            return OK
        for n0 in range(0, n, per):
            nb = min(per, n - n0)
            rows = nb * plane
            dcol = self._buffer(rows * k * es)
            # dcol [rows, k] = dy [rows, oc] @ w^T (w is [k, oc])
            dy_b = dy if nb == n else self._slice(dy, n0 * plane * oc * es, rows * oc * es)
            self._matmul_into(dt, 0, 1, rows, k, oc, dy_b, w, dcol)
            self._run("conv", f"col2im_{SUF[dt]}", nb * h * wd, "BBGll", dcol, dx, g, n0, nb)
        return OK

    def conv2d_backprop_filter(self, dt, geom, x, dy, dw):
        if not self._conv_gemm:
            return self._conv("conv2d_backprop_filter", dt, geom, False, lambda g: g[4] * g[5] * g[3] * g[6], x, dy,
                              dw)
        st, g, per = self._gemm_plan(dt, geom)
        if st:
            return st
        n, oc, plane, k, es = g[0], g[6], g[7] * g[8], g[4] * g[5] * g[3], SIZE[dt]
        if k * oc == 0:
            return OK
        if n * plane == 0:
            return self._fill_bits(dw, es, k * oc, 0)
        part = None
        for n0 in range(0, n, per):
            nb = min(per, n - n0)
            rows = nb * plane
            col = self._buffer(rows * k * es)
            self._run("conv", f"im2col_{SUF[dt]}", rows, "BBGll", x, col, g, n0, rows)
            dy_b = dy if nb == n else self._slice(dy, n0 * plane * oc * es, rows * oc * es)
            # dw [k, oc] (+)= col^T [k, rows] @ dy [rows, oc]
            if n0 == 0:
                self._matmul_into(dt, 1, 0, k, oc, rows, col, dy_b, dw)
            else:
                part = part or self._buffer(k * oc * es)
                self._matmul_into(dt, 1, 0, k, oc, rows, col, dy_b, part)
                self.binary_flat(BINARY_OPS.index("add"), dt, dw, 0, part, 0, dw, k * oc)
        return OK

    def _slice(self, buf, offset, nbytes):
        """A copy of bytes [offset, offset + nbytes) of a buffer (a block of rows)."""
        out = self._buffer(nbytes)
        self._copy(buf.mem, out.mem, nbytes, offset, 0)
        return out

    def depthwise_conv2d(self, dt, geom, x, w, y):
        return self._conv("depthwise_conv2d", dt, geom, True, self._outs, x, w, y)

    def depthwise_conv2d_backprop_input(self, dt, geom, dy, w, dx):
        return self._conv("depthwise_conv2d_backprop_input", dt, geom, True, self._ins, dy, w, dx)

    def depthwise_conv2d_backprop_filter(self, dt, geom, x, dy, dw):
        return self._conv("depthwise_conv2d_backprop_filter", dt, geom, True, lambda g: g[4] * g[5] * g[6], x, dy,
                          dw)

    def max_pool2d(self, dt, geom, x, y):
        return self._conv("max_pool2d", dt, geom, False, self._pool_outs, x, y)

    def max_pool2d_grad(self, dt, geom, x, dy, dx):
        return self._conv("max_pool2d_grad", dt, geom, False, self._ins, x, dy, dx)

    def max_pool2d_grad_grad(self, dt, geom, x, ggx, ggy):
        return self._conv("max_pool2d_grad_grad", dt, geom, False, self._pool_outs, x, ggx, ggy)

    def avg_pool2d(self, dt, geom, x, y):
        return self._conv("avg_pool2d", dt, geom, False, self._pool_outs, x, y)

    def avg_pool2d_grad(self, dt, geom, dy, dx):
        return self._conv("avg_pool2d_grad", dt, geom, False, self._ins, dy, dx)


    # ----------------------------------------------------------------- linalg
    @staticmethod
    def _la_check(dt, batch, n, k=0):
        if dt not in (F32, F64):
            return EBADDTYPE
        if batch < 0 or n < 0 or k < 0 or n > INT32_MAX or k > INT32_MAX:
            return EBADSIZE
        return OK

    def _groups(self, name, groups, sig, *args):
        """One work-group of LA_LOCAL work-items per matrix."""
        k = self._k("linalg", name)
        if k is None:
            return EBADDTYPE
        if groups:
            self._launch(k, (groups * 64,), (64,), sig, args)
        return OK

    def lu(self, dt, batch, n, a, piv, info):
        st = self._la_check(dt, batch, n)
        return st or self._groups(f"lu_{SUF[dt]}", batch, "BBBl", a, piv, info, n)

    def lu_solve(self, dt, trans, batch, n, nrhs, lu, piv, b):
        st = self._la_check(dt, batch, n, nrhs)
        if st or n == 0 or nrhs == 0:
            return st
        return self._run("linalg", f"lu_solve_{SUF[dt]}", batch * nrhs, "BBBilll", lu, piv, b, 1 if trans else 0,
                         batch, n, nrhs)

    def lu_inverse(self, dt, batch, n, lu, piv):
        st = self._la_check(dt, batch, n)
        if st or n == 0 or batch == 0:
            return st
        flag = self._flag_buffer()
        with self._lock:
            self._reset_flag(1, 0x7FFFFFFF7FFFFFFF)
            self._run("linalg", f"lu_singular_{SUF[dt]}", batch * n, "BllB", lu, batch, n, flag)
            singular = int(self._read_words(flag, 1, np.int32)[0]) != 0x7FFFFFFF
        if singular:
            return ERANGE
        x = self._buffer(batch * n * n * SIZE[dt])
        self._run("linalg", f"eye_{SUF[dt]}", batch * n * n, "Bll", x, batch, n)
        self._run("linalg", f"lu_solve_{SUF[dt]}", batch * n, "BBBilll", lu, piv, x, 0, batch, n, n)
        self._copy(x.mem, lu.mem, batch * n * n * SIZE[dt])
        return OK

    def lu_det(self, dt, batch, n, lu, piv, det, sign, logabs):
        st = self._la_check(dt, batch, n)
        return st or self._run("linalg", f"lu_det_{SUF[dt]}", batch, "BBBBBll", lu, piv, det, sign, logabs, batch, n)

    def cholesky(self, dt, batch, n, a, info):
        st = self._la_check(dt, batch, n)
        return st or self._groups(f"cholesky_{SUF[dt]}", batch, "BBl", a, info, n)

    def triangular_solve(self, dt, lower, trans, batch, n, nrhs, a, a_bstride, b):
        st = self._la_check(dt, batch, n, nrhs)
        if st or n == 0 or nrhs == 0:
            return st
        return self._run("linalg", f"triangular_solve_{SUF[dt]}", batch * nrhs, "BlBiilll", a, a_bstride, b,
                         1 if lower else 0, 1 if trans else 0, batch, n, nrhs)


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
