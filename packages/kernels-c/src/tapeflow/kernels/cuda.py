"""The CUDA backend: the same kernel sources as OpenCL, compiled by NVRTC, run by the driver API.

Host side: ``libcuda.so.1`` (driver API), ``libnvrtc`` (run-time compiler) and, when
present, ``libcublas`` (matmul) are opened with cffi at run time, so tapeflow
installs and imports without CUDA; asking for this backend there raises
:class:`~tapeflow.kernels.BackendUnavailable` saying what is missing.

Kernels are the files of ``gpu/`` (OpenCL C and CUDA C++ at once through
``gpu/tpf_gpu.h``), compiled per family on first use for the device's compute
capability, with contraction off (``--fmad=false``) so results follow the CPU
kernels; the PTX is cached on disk keyed by a hash of source, options and
architecture (``$TAPEFLOW_CACHE_DIR``, default ``~/.cache/tapeflow``).  One stream
per device: ops enqueue and return; the host waits when it reads a value.
``tools/compile_cuda.py`` compiles every family with nvcc (the ``cuda_compile`` nox
session), so the sources are checked where there is no GPU.

This module is the driver only (memory, modules, launches, errors, cuBLAS); the
allocator, the launcher and the kernel table are shared with the OpenCL backend
(:mod:`tapeflow.kernels.gpu_common`, :mod:`tapeflow.kernels.gpu_entries`), kernel
arguments marshalled by the signature language of
:mod:`tapeflow.kernels.gpu_contract`.  The backend registers itself as kind
``cuda``, every device a GPU (:func:`tapeflow.kernels.register_backend`).

>>> from tapeflow.kernels import cuda
>>> isinstance(cuda.device_count(), int)   # 0 where there is no CUDA driver
True
"""
from __future__ import annotations

import ctypes.util
import hashlib
import os
import pathlib
import threading
from . import BackendUnavailable, register_backend
from .gpu_common import DeviceBuffer, out_of_memory, source
from .gpu_contract import ctype
from .gpu_entries import GPUBackend

_CDEF = """
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
CUresult cuInit(unsigned int);
CUresult cuDeviceGetCount(int *);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDeviceGetName(char *, int, CUdevice);
CUresult cuDeviceTotalMem_v2(size_t *, CUdevice);
CUresult cuDeviceGetAttribute(int *, int, CUdevice);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamSynchronize(CUstream);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                        unsigned int, unsigned int, CUstream, void **, void **);
CUresult cuGetErrorName(CUresult, const char **);

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
nvrtcResult nvrtcCreateProgram(nvrtcProgram *, const char *, const char *, int, const char **, const char **);
nvrtcResult nvrtcCompileProgram(nvrtcProgram, int, const char **);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram, size_t *);
nvrtcResult nvrtcGetPTX(nvrtcProgram, char *);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram, size_t *);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram, char *);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *);

typedef struct cublasContext *cublasHandle_t;
int cublasCreate_v2(cublasHandle_t *);
int cublasSetStream_v2(cublasHandle_t, CUstream);
int cublasSgemmStridedBatched(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
                              long long, const float *, int, long long, const float *, float *, int, long long, int);
int cublasDgemmStridedBatched(cublasHandle_t, int, int, int, int, int, const double *, const double *, int,
                              long long, const double *, int, long long, const double *, double *, int, long long,
                              int);
"""

CUDA_ERROR_OUT_OF_MEMORY = 2
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1

_API: dict = {}
_LOCK = threading.Lock()


def _open(ffi, names, what):
    first = None
    for name in names:
        if not name:
            continue
        try:
            return ffi.dlopen(name)
        except OSError as e:
            first = first or e
    raise BackendUnavailable(f"cuda backend unavailable: {what} not found ({first})")


def _libs():
    """``(ffi, cuda, nvrtc, cublas_or_None)``, loaded once."""
    with _LOCK:
        return _load_libs()


def _load_libs():
    if not _API:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        cu = _open(ffi, [os.environ["TAPEFLOW_CUDA_LIB"]] if os.environ.get("TAPEFLOW_CUDA_LIB") else
                   ["libcuda.so.1", "libcuda.so"], "the CUDA driver (libcuda.so.1; or set TAPEFLOW_CUDA_LIB)")
        nvrtc_names = [os.environ["TAPEFLOW_NVRTC_LIB"]] if os.environ.get("TAPEFLOW_NVRTC_LIB") else \
            [f"libnvrtc.so.{v}" for v in (13, 12, 11)] + ["libnvrtc.so", ctypes.util.find_library("nvrtc")]
        nvrtc = _open(ffi, nvrtc_names, "NVRTC (libnvrtc.so; or set TAPEFLOW_NVRTC_LIB)")
        try:
            cublas = _open(ffi, [f"libcublas.so.{v}" for v in (13, 12, 11)] + ["libcublas.so"], "cuBLAS")
        except BackendUnavailable:
            cublas = None
        _API.update(ffi=ffi, cu=cu, nvrtc=nvrtc, cublas=cublas)
    return _API["ffi"], _API["cu"], _API["nvrtc"], _API["cublas"]


def device_types() -> list:
    """The kind of every CUDA device: all ``"gpu"``.

    >>> from tapeflow.kernels import cuda
    >>> cuda.device_types() == ["gpu"] * cuda.device_count()
    True
    """
    return ["gpu"] * device_count()


def device_count() -> int:
    """How many CUDA devices this machine has (0 without a driver).

    >>> from tapeflow.kernels import cuda
    >>> cuda.device_count() >= 0
    True
    """
    try:
        ffi, cu, _, _ = _libs()
    except BackendUnavailable:
        return 0
    if cu.cuInit(0) != 0:
        return 0
    n = ffi.new("int *")
    return n[0] if cu.cuDeviceGetCount(n) == 0 else 0


class CUDAError(RuntimeError):
    """A CUDA driver, NVRTC or cuBLAS call failed; the message names the call and the device."""


class CUDABackend(GPUBackend):
    """Backend ``cuda``: tapeflow's kernel table on CUDA device ``index`` (see :func:`device_count`).

    Raises :class:`~tapeflow.kernels.BackendUnavailable` without a driver, NVRTC or a device.

    >>> import numpy as np
    >>> from tapeflow.kernels import cuda
    >>> be = cuda.CUDABackend() if cuda.device_count() else None
    >>> be is None or be.to_numpy(be.from_numpy(np.arange(3.0))[0], None, (3,), np.float64).tolist() == [0.0, 1.0, 2.0]
    True
    """

    name = "cuda"

    def __init__(self, index: int = 0) -> None:
        ffi, cu, nvrtc, cublas = _libs()
        if cu.cuInit(0) != 0:
            raise BackendUnavailable("cuda backend unavailable: cuInit failed (no usable NVIDIA driver or GPU)")
        count = device_count()
        if not 0 <= index < count:
            raise BackendUnavailable(f"cuda:{index} does not exist; this machine has {count} CUDA device(s)")
        super().__init__()
        self.ffi, self.cu, self.nvrtc, self.cublas = ffi, cu, nvrtc, cublas
        self.index = index
        self.device_name = f"cuda:{index}"
        self.device_type = "gpu"
        dev = ffi.new("CUdevice *")
        self._check(cu.cuDeviceGet(dev, index), "cuDeviceGet")
        self._dev = dev[0]
        name = ffi.new("char[256]")
        cu.cuDeviceGetName(name, 256, self._dev)
        self.hardware = ffi.string(name).decode(errors="replace")
        self.cc = (self._attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                   self._attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        self._units = self._attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        mem = ffi.new("size_t *")
        cu.cuDeviceTotalMem_v2(mem, self._dev)
        self.global_mem = int(mem[0])
        self._pool_limit = self.global_mem // 2
        self._max_alloc = self.global_mem
        ctx = ffi.new("CUcontext *")
        self._check(cu.cuDevicePrimaryCtxRetain(ctx, self._dev), "cuDevicePrimaryCtxRetain")
        self._ctx = ctx[0]
        self._check(cu.cuCtxSetCurrent(self._ctx), "cuCtxSetCurrent")
        stream = ffi.new("CUstream *")
        self._check(cu.cuStreamCreate(stream, 0), "cuStreamCreate")
        self._stream = stream[0]
        self._modules: dict = {}
        self._options = ["--std=c++17", f"--gpu-architecture=compute_{self.cc[0]}{self.cc[1]}", "--fmad=false",
                         "-DTPF_FP64=1"]
        self._blas = None
        if cublas is not None:
            h = ffi.new("cublasHandle_t *")
            if cublas.cublasCreate_v2(h) == 0 and cublas.cublasSetStream_v2(h[0], self._stream) == 0:
                self._blas = h[0]
        self._null_mem = None
        self._null_mem = self._buffer(256)

    def __repr__(self):
        return f"<CUDABackend {self.device_name}: {self.hardware} (sm_{self.cc[0]}{self.cc[1]})>"

    def _attr(self, which) -> int:
        v = self.ffi.new("int *")
        self.cu.cuDeviceGetAttribute(v, which, self._dev)
        return int(v[0])

    def _check(self, status, what):
        if status != 0:
            name = self.ffi.new("const char **")
            self.cu.cuGetErrorName(status, name)
            label = self.ffi.string(name[0]).decode() if name[0] != self.ffi.NULL else f"CUDA error {status}"
            if status == CUDA_ERROR_OUT_OF_MEMORY:
                raise out_of_memory(getattr(self, "device_name", "cuda"), 0, f"{what}: {label}")
            raise CUDAError(f"{what} failed on {getattr(self, 'device_name', 'cuda')}: {label}")

    def compute_units(self) -> int:
        return self._units

    def device_count(self) -> int:
        return device_count()

    def device_types(self) -> list:
        return device_types()

    # ------------------------------------------------------------------ memory
    def _dev_alloc(self, nbytes):
        p = self.ffi.new("CUdeviceptr *")
        st = self.cu.cuMemAlloc_v2(p, nbytes)
        if st == CUDA_ERROR_OUT_OF_MEMORY:
            raise out_of_memory(self.device_name, nbytes, "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY")
        self._check(st, "cuMemAlloc")
        return int(p[0])

    def _dev_free(self, mem):
        self.cu.cuMemFree_v2(mem)

    def _arg_of(self, mem):
        return self.ffi.new("CUdeviceptr *", mem)

    def _write(self, mem, array):
        # from pageable memory the driver stages the bytes before returning: `array` may go
        self._check(self.cu.cuMemcpyHtoDAsync_v2(mem, self.ffi.from_buffer(array), array.nbytes, self._stream),
                    "cuMemcpyHtoDAsync")

    def _read(self, mem, array, offset=0):
        with self._lock:
            self._check(self.cu.cuMemcpyDtoHAsync_v2(self.ffi.from_buffer(array), mem + offset, array.nbytes,
                                                     self._stream), "cuMemcpyDtoHAsync")
            self._check(self.cu.cuStreamSynchronize(self._stream), "cuStreamSynchronize")
            self.stats["syncs"] += 1

    def _copy(self, src, dst, nbytes, src_off=0, dst_off=0):
        if nbytes:
            self._check(self.cu.cuMemcpyDtoDAsync_v2(dst + dst_off, src + src_off, nbytes, self._stream),
                        "cuMemcpyDtoDAsync")

    def synchronize(self) -> None:
        """Wait until everything queued on the device's stream has run."""
        with self._lock:
            self._check(self.cu.cuStreamSynchronize(self._stream), "cuStreamSynchronize")
            self.stats["syncs"] += 1

    # ----------------------------------------------------------------- modules
    def build_options(self) -> list:
        """The NVRTC options of the current settings (float32 denormals flushed when ftz is on)."""
        return self._options + ["--ftz=true" if self._ftz else "--ftz=false"]

    def _cache_path(self, src: str) -> pathlib.Path:
        key = hashlib.sha256("\0".join([src, " ".join(self.build_options())]).encode()).hexdigest()[:32]
        root = os.environ.get("TAPEFLOW_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tapeflow")
        return pathlib.Path(root) / "cuda" / f"{key}.ptx"

    def _ptx(self, family) -> bytes:
        ffi, nv = self.ffi, self.nvrtc
        src = source(family)
        path = self._cache_path(src)
        try:
            return path.read_bytes()
        except OSError:
            pass
        prog = ffi.new("nvrtcProgram *")
        if nv.nvrtcCreateProgram(prog, src.encode(), f"{family}.cu".encode(), 0, ffi.NULL, ffi.NULL) != 0:
            raise CUDAError(f"nvrtcCreateProgram failed for the {family} kernels")
        try:
            opts = [ffi.new("char[]", o.encode()) for o in self.build_options()]
            st = nv.nvrtcCompileProgram(prog[0], len(opts), ffi.new("const char *[]", opts))
            if st != 0:
                size = ffi.new("size_t *")
                nv.nvrtcGetProgramLogSize(prog[0], size)
                log = ffi.new("char[]", size[0] + 1)
                nv.nvrtcGetProgramLog(prog[0], log)
                raise CUDAError(f"compiling the {family} kernels failed for {self.device_name} "
                                f"(sm_{self.cc[0]}{self.cc[1]}):\n{ffi.string(log).decode(errors='replace')}")
            size = ffi.new("size_t *")
            nv.nvrtcGetPTXSize(prog[0], size)
            ptx = ffi.new("char[]", size[0])
            nv.nvrtcGetPTX(prog[0], ptx)
            data = bytes(ffi.buffer(ptx, size[0]))
        finally:
            nv.nvrtcDestroyProgram(prog)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError:
            pass
        return data

    def _module(self, family):
        key = (family, self._ftz)
        mod = self._modules.get(key)
        if mod is None:
            m = self.ffi.new("CUmodule *")
            image = self.ffi.new("char[]", self._ptx(family))
            self._check(self.cu.cuModuleLoadData(m, image), f"cuModuleLoadData({family})")
            mod = self._modules[key] = m[0]
        return mod

    def _kernel(self, family, name):
        f = self.ffi.new("CUfunction *")
        st = self.cu.cuModuleGetFunction(f, self._module(family), name.encode())
        if st != 0:
            return None   # CUDA_ERROR_NOT_FOUND: no such kernel (e.g. that dtype)
        return f[0]

    # --------------------------------------------------------------- launching
    def _launch(self, k, gsize, lsize, sig, args):
        ffi = self.ffi
        if len(sig) != len(args):  # pragma: no cover - a wrapper bug
            raise TypeError(f"kernel signature {sig!r} does not match {len(args)} arguments")
        keep = []
        for code, v in zip(sig, args):
            if code == "B":
                keep.append(v.arg if v is not None and type(v) is DeviceBuffer else self._null_mem.arg)
            elif code in "DG":
                keep.append(ffi.new(ctype(code)[0], list(v)))
            else:
                keep.append(ffi.new(ctype(code)[0] + " *", v))
        params = ffi.new("void *[]", [ffi.cast("void *", p) for p in keep])
        g = list(gsize) + [1] * (3 - len(gsize))
        b = list(lsize) + [1] * (3 - len(lsize))
        with self._lock:
            st = self.cu.cuLaunchKernel(k, g[0] // b[0], g[1] // b[1], g[2] // b[2], b[0], b[1], b[2], 0,
                                        self._stream, params, ffi.NULL)
            self.stats["launches"] += 1
        self._check(st, "cuLaunchKernel")

    # ------------------------------------------------------------------ matmul
    def _matmul(self, dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out):
        """float32/float64 through cuBLAS when present (row-major C = op(A) op(B) as C^T = op(B)^T op(A)^T)."""
        if self._blas is None or dt not in (2, 3):
            return super()._matmul(dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out)
        ffi = self.ffi
        ctype = "float" if dt == 2 else "double"
        fn = self.cublas.cublasSgemmStridedBatched if dt == 2 else self.cublas.cublasDgemmStridedBatched
        one, zero = ffi.new(f"{ctype} *", 1.0), ffi.new(f"{ctype} *", 0.0)
        lda = m if ta else k
        ldb = k if tb else n
        with self._lock:
            st = fn(self._blas, CUBLAS_OP_T if tb else CUBLAS_OP_N, CUBLAS_OP_T if ta else CUBLAS_OP_N, n, m, k, one,
                    ffi.cast(f"{ctype} *", b.mem), ldb, b_bstride, ffi.cast(f"{ctype} *", a.mem), lda, a_bstride,
                    zero, ffi.cast(f"{ctype} *", out.mem), n, m * n, batch)
        if st != 0:
            raise CUDAError(f"cuBLAS gemm failed on {self.device_name} (status {st})")
        return 0



register_backend("cuda", CUDABackend, is_gpu=True, count=device_count, type_name="CUDA")
