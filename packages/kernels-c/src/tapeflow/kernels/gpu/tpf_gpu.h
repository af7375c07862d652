/* tapeflow GPU kernels: one source, two languages.
 *
 * Every file in this folder is OpenCL C 1.2 and CUDA C++ at once: this prelude
 * maps the few things that differ (kernel and address-space qualifiers, thread
 * indices, bit casts, fixed-width types, barriers) onto macros, and the kernel
 * families are written against the macros only.  The host prepends this file to
 * a family's source before handing it to the OpenCL driver or to NVRTC/nvcc.
 *
 * The kernels reproduce the CPU kernels (csrc/) element for element: the same
 * formulas, the same integer wrapping, the same NaN rules, floating-point
 * contraction off (no fused multiply-add unless a formula asks for one), so a
 * result differs from the CPU's only where a math library function (exp, log,
 * sin, ...) or a summation order differs.  Sizes and strides are 64-bit.
 */
#ifndef TPF_GPU_H
#define TPF_GPU_H
#define TPF_GPU 1   /* include/scalar_math.h and philox.h: the GPU side of their guards */

#define TPF_MAXDIMS 12

#if defined(__OPENCL_VERSION__)
/* ---------------------------------------------------------------- OpenCL C */
#pragma OPENCL FP_CONTRACT OFF
#ifdef TPF_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define KERNEL __kernel void
#define G __global
#define LOCAL __local
#define DEV static inline
typedef char i8;
typedef uchar u8;
typedef short i16;
typedef ushort u16;
typedef int i32;
typedef uint u32;
typedef long i64;
typedef ulong u64;
#define GID0() ((i64)get_global_id(0))
#define GID1() ((i64)get_global_id(1))
#define GID2() ((i64)get_global_id(2))
#define LID0() ((int)get_local_id(0))
#define LID1() ((int)get_local_id(1))
#define GRP0() ((i64)get_group_id(0))
#define GRP1() ((i64)get_group_id(1))
#define GRP2() ((i64)get_group_id(2))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define AS_F32(u) as_float((u32)(u))
#define AS_U32(f) as_uint(f)
#define AS_F64(u) as_double((u64)(u))
#define AS_U64(d) as_ulong(d)
#define MULHI_U64(a, b) mul_hi((u64)(a), (u64)(b))
#define MULHI_U32(a, b) mul_hi((u32)(a), (u32)(b))
#define ATOMIC_MIN_I32(p, v) atomic_min((volatile G int *)(p), (int)(v))

#else
/* ------------------------------------------------------------- CUDA C++ */
#ifndef TPF_FP64
#define TPF_FP64 1
#endif
#define KERNEL extern "C" __global__ void
#define G
#define LOCAL __shared__
#define DEV static __device__ __forceinline__
typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
#define GID0() ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define GID1() ((i64)blockIdx.y * blockDim.y + threadIdx.y)
#define GID2() ((i64)blockIdx.z * blockDim.z + threadIdx.z)
#define LID0() ((int)threadIdx.x)
#define LID1() ((int)threadIdx.y)
#define GRP0() ((i64)blockIdx.x)
#define GRP1() ((i64)blockIdx.y)
#define GRP2() ((i64)blockIdx.z)
#define BARRIER() __syncthreads()
#define AS_F32(u) __uint_as_float((u32)(u))
#define AS_U32(f) __float_as_uint(f)
#define AS_F64(u) __longlong_as_double((long long)(u64)(u))
#define AS_U64(d) ((u64)__double_as_longlong(d))
#define MULHI_U64(a, b) __umul64hi((u64)(a), (u64)(b))
#define MULHI_U32(a, b) __umulhi((u32)(a), (u32)(b))
#define ATOMIC_MIN_I32(p, v) atomicMin((int *)(p), (int)(v))
#endif

/* --------------------------------------------------------- shared pieces */

/* shapes and strides travel by value (no buffer, no copy); so does a convolution's geometry */
typedef struct { i64 d[TPF_MAXDIMS]; } dims_t;
typedef struct { i64 g[16]; } geom_t;

/* Kernels that validate data (indices, labels) record the position of the first
 * bad element with ATOMIC_MIN_I32 on a flag the host set to INT32_MAX; the host
 * validates at most 2**30 elements per launch, so a position fits. */
#define NO_BAD 2147483647

#define TPF_INF AS_F32(0x7f800000u)
#define TPF_NAN AS_F32(0x7fc00000u)
#define ISNAN(x) ((x) != (x))
#define ISINF(x) (fabs(x) == TPF_INF)
#define ISFINITE(x) (!ISNAN(x) && !ISINF(x))

#ifdef TPF_FP64
typedef double wf;     /* the wide float of a formula (double where the device has it) */
#else
typedef float wf;
#endif

/* offset of flat element i of `shape` read through `str` */
DEV i64 strided_offset(i64 i, int nd, const dims_t *shape, const dims_t *str) {
    i64 off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        i64 n = shape->d[d], k = i % n;
        i /= n;
        off += k * str->d[d];
    }
    return off;
}

/* half and bfloat16 conversions (tpf_half_to_float, ...) and the scalar math shared with the
 * CPU kernels; the host replaces the line with the header's text */
#include "scalar_math.h"

#endif
