"""The slice of the OpenCL host API tapeflow uses, opened with cffi in ABI mode.

Nothing here is compiled: :func:`load` ``dlopen``\\ s the system's OpenCL loader
(``libOpenCL.so.1``, or ``$TAPEFLOW_OPENCL_LIB``) at run time, so tapeflow
installs and imports on machines without OpenCL and says so only when the
backend is asked for.

>>> from tapeflow.kernels import _clbind
>>> _clbind.error_name(-5)
'CL_OUT_OF_RESOURCES'
"""
from __future__ import annotations

import os

CDEF = """
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef uint64_t cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef intptr_t cl_context_properties;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

cl_int clGetPlatformIDs(cl_uint, cl_platform_id *, cl_uint *);
cl_int clGetPlatformInfo(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
cl_int clGetDeviceIDs(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
cl_int clGetDeviceInfo(cl_device_id, cl_device_info, size_t, void *, size_t *);
cl_context clCreateContext(const cl_context_properties *, cl_uint, const cl_device_id *,
                           void *, void *, cl_int *);
cl_int clReleaseContext(cl_context);
cl_command_queue clCreateCommandQueue(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
cl_int clReleaseCommandQueue(cl_command_queue);
cl_mem clCreateBuffer(cl_context, cl_mem_flags, size_t, void *, cl_int *);
cl_int clReleaseMemObject(cl_mem);
cl_program clCreateProgramWithSource(cl_context, cl_uint, const char **, const size_t *, cl_int *);
cl_program clCreateProgramWithBinary(cl_context, cl_uint, const cl_device_id *, const size_t *,
                                     const unsigned char **, cl_int *, cl_int *);
cl_int clBuildProgram(cl_program, cl_uint, const cl_device_id *, const char *, void *, void *);
cl_int clGetProgramInfo(cl_program, cl_program_info, size_t, void *, size_t *);
cl_int clGetProgramBuildInfo(cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *);
cl_int clReleaseProgram(cl_program);
cl_kernel clCreateKernel(cl_program, const char *, cl_int *);
cl_int clReleaseKernel(cl_kernel);
cl_int clSetKernelArg(cl_kernel, cl_uint, size_t, const void *);
cl_int clGetKernelArgInfo(cl_kernel, cl_uint, cl_uint, size_t, void *, size_t *);
cl_int clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                              const size_t *, cl_uint, const cl_event *, cl_event *);
cl_int clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint,
                           const cl_event *, cl_event *);
cl_int clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint,
                            const cl_event *, cl_event *);
cl_int clEnqueueCopyBuffer(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                           const cl_event *, cl_event *);
cl_int clGetEventInfo(cl_event, cl_uint, size_t, void *, size_t *);
cl_int clWaitForEvents(cl_uint, const cl_event *);
cl_int clReleaseEvent(cl_event);
cl_int clFlush(cl_command_queue);
cl_int clFinish(cl_command_queue);
"""

# constants (CL/cl.h)
CL_SUCCESS = 0
CL_DEVICE_TYPE_CPU = 1 << 1
CL_DEVICE_TYPE_GPU = 1 << 2
CL_DEVICE_TYPE_ACCELERATOR = 1 << 3
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_PLATFORM_NAME = 0x0902
CL_PLATFORM_VERSION = 0x0901
CL_DEVICE_TYPE = 0x1000
CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002
CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004
CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010
CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F
CL_DEVICE_LOCAL_MEM_SIZE = 0x1023
CL_DEVICE_NAME = 0x102B
CL_DEVICE_VENDOR = 0x102C
CL_DRIVER_VERSION = 0x102D
CL_DEVICE_VERSION = 0x102F
CL_DEVICE_EXTENSIONS = 0x1030
CL_DEVICE_DOUBLE_FP_CONFIG = 0x1032
CL_MEM_READ_WRITE = 1 << 0
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_PROGRAM_BUILD_LOG = 0x1183
CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3
CL_KERNEL_ARG_TYPE_QUALIFIER = 0x1199   # needs programs built with -cl-kernel-arg-info
CL_KERNEL_ARG_TYPE_CONST = 1 << 0

ERRORS = {
    0: "CL_SUCCESS", -1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE",
    -3: "CL_COMPILER_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE", -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY", -7: "CL_PROFILING_INFO_NOT_AVAILABLE", -8: "CL_MEM_COPY_OVERLAP",
    -9: "CL_IMAGE_FORMAT_MISMATCH", -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED", -11: "CL_BUILD_PROGRAM_FAILURE",
    -12: "CL_MAP_FAILURE", -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
    -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", -15: "CL_COMPILE_PROGRAM_FAILURE",
    -16: "CL_LINKER_NOT_AVAILABLE", -17: "CL_LINK_PROGRAM_FAILURE", -30: "CL_INVALID_VALUE",
    -31: "CL_INVALID_DEVICE_TYPE", -32: "CL_INVALID_PLATFORM", -33: "CL_INVALID_DEVICE",
    -34: "CL_INVALID_CONTEXT", -35: "CL_INVALID_QUEUE_PROPERTIES", -36: "CL_INVALID_COMMAND_QUEUE",
    -37: "CL_INVALID_HOST_PTR", -38: "CL_INVALID_MEM_OBJECT", -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS", -44: "CL_INVALID_PROGRAM", -45: "CL_INVALID_PROGRAM_EXECUTABLE",
    -46: "CL_INVALID_KERNEL_NAME", -47: "CL_INVALID_KERNEL_DEFINITION", -48: "CL_INVALID_KERNEL",
    -49: "CL_INVALID_ARG_INDEX", -50: "CL_INVALID_ARG_VALUE", -51: "CL_INVALID_ARG_SIZE",
    -52: "CL_INVALID_KERNEL_ARGS", -53: "CL_INVALID_WORK_DIMENSION", -54: "CL_INVALID_WORK_GROUP_SIZE",
    -55: "CL_INVALID_WORK_ITEM_SIZE", -56: "CL_INVALID_GLOBAL_OFFSET", -59: "CL_INVALID_OPERATION",
    -61: "CL_INVALID_BUFFER_SIZE", -63: "CL_INVALID_GLOBAL_WORK_SIZE", -1001: "CL_PLATFORM_NOT_FOUND_KHR",
}

#: driver statuses that mean "the device ran out of memory"
OUT_OF_MEMORY = (-4, -5, -6, -61)


def error_name(code: int) -> str:
    """The symbolic name of an OpenCL status code."""
    return ERRORS.get(code, f"OpenCL error {code}")


_deep = []   # vendor drivers loaded with RTLD_DEEPBIND (kept alive)


def _vendor_libraries() -> list:
    """The driver libraries the ICD loader will open (``/etc/OpenCL/vendors/*.icd`` or $OCL_ICD_VENDORS)."""
    import glob

    where = os.environ.get("OCL_ICD_VENDORS") or "/etc/OpenCL/vendors"
    files = [where] if where.endswith(".icd") else sorted(glob.glob(os.path.join(where, "*.icd")))
    libs = []
    for f in files:
        try:
            with open(f) as fh:
                name = fh.read().strip()
        except OSError:
            continue
        if name:
            libs.append(name)
    return libs


def preload_drivers_deepbind() -> list:
    """Load the OpenCL drivers with RTLD_DEEPBIND before the ICD loader does (Linux).

    LLVM-based drivers such as pocl otherwise bind their LLVM calls to whatever
    copy of LLVM the process exported first: after ``import tensorflow`` (which
    carries its own LLVM) pocl crashes in clGetPlatformIDs.  Deep binding makes a
    driver use its own libraries.  ``TAPEFLOW_OPENCL_DEEPBIND=0`` turns this off.
    """
    flag = getattr(os, "RTLD_DEEPBIND", None)
    if flag is None or os.environ.get("TAPEFLOW_OPENCL_DEEPBIND", "1") == "0" or _deep:
        return _deep
    import ctypes

    for name in _vendor_libraries():
        try:
            _deep.append(ctypes.CDLL(name, mode=os.RTLD_LOCAL | flag))
        except OSError:
            pass
    return _deep


def load():
    """``(ffi, lib)`` for the system's OpenCL loader; raises OSError when there is none."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    names = [os.environ["TAPEFLOW_OPENCL_LIB"]] if os.environ.get("TAPEFLOW_OPENCL_LIB") else \
        ["libOpenCL.so.1", "libOpenCL.so", "OpenCL", "/System/Library/Frameworks/OpenCL.framework/OpenCL"]
    last = None
    for name in names:
        try:
            lib = ffi.dlopen(name)
        except OSError as e:
            last = e
            continue
        preload_drivers_deepbind()   # before the first OpenCL call opens a driver
        return ffi, lib
    raise OSError(f"libOpenCL not found ({last}); install an OpenCL driver (e.g. Debian's pocl-opencl-icd) "
                  "or set TAPEFLOW_OPENCL_LIB")
