/* tapeflow kernels: shared definitions.
 *
 * Every entry point returns a status (TPF_OK on success); the Python side turns
 * a non-zero status into a typed error that names the kernel.  Tensors reaching
 * a kernel are dense and row-major; broadcasting is expressed through strides
 * (a stride of 0 repeats an element).  Strides are counted in elements.
 */
#ifndef TPF_H
#define TPF_H
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

enum {
    TPF_OK = 0,
    TPF_EBADSIZE = 1,     /* a negative or inconsistent size */
    TPF_EBADDTYPE = 2,    /* the kernel has no loop for this dtype */
    TPF_EBADOP = 3,       /* unknown op code */
    TPF_ERANGE = 4,       /* an index out of range; the bad value is reported */
    TPF_EDIVZERO = 5,     /* integer division by zero */
    TPF_ENOMEM = 6,       /* allocation failed */
    TPF_EBADARG = 7,      /* any other invalid argument */
};

/* dtype codes, shared with tapeflow.kernels.DTYPE_CODES */
enum {
    TPF_F16 = 0, TPF_BF16 = 1, TPF_F32 = 2, TPF_F64 = 3,
    TPF_I8 = 4, TPF_U8 = 5, TPF_I16 = 6, TPF_I32 = 7, TPF_I64 = 8, TPF_BOOL = 9,
    TPF_NDTYPES = 10
};
/* complex64/complex128: past TPF_NDTYPES, so only the kernels that know them (complex.c, fft.c, cast.c,
 * and the data movement that goes by tpf_dtype_size) take them */
enum { TPF_C64 = 10, TPF_C128 = 11 };

#define TPF_MAXDIMS 12

/* Work below this many elements runs on the calling thread. */
#define TPF_PAR_MIN 32768

extern int tpf_num_threads;   /* 0 = all cores */
/* OpenMP's thread count when the library loaded (OMP_NUM_THREADS or the cores): read once,
 * since another library sharing the OpenMP runtime (PyTorch loads the same libgomp) may
 * change omp_get_max_threads() for the whole process (torch.set_num_threads). */
extern int tpf_max_threads;
extern int tpf_ftz;           /* flush denormals to zero in float kernels */

/* Float kernels run with flush-to-zero / denormals-are-zero when configured.
 * `tpf_fp_enter();` is a scoped guard: it sets the mode on this thread and
 * restores the caller's mode when the enclosing block ends, so NumPy or user
 * code running on the same thread afterwards keeps IEEE denormals. */
unsigned tpf_fp_set(void);
void tpf_fp_restore(unsigned *saved);
#define TPF_CAT2(a, b) a##b
#define TPF_CAT(a, b) TPF_CAT2(a, b)
#define tpf_fp_enter() \
    unsigned TPF_CAT(tpf_fp_saved_, __LINE__) __attribute__((cleanup(tpf_fp_restore), unused)) = tpf_fp_set()

#ifdef _OPENMP
#include <omp.h>
#define TPF_NTHREADS(n) ((n) >= TPF_PAR_MIN ? (tpf_num_threads > 0 ? tpf_num_threads : tpf_max_threads) : 1)
#else
#define TPF_NTHREADS(n) 1
#endif

/* TPF_PFOR(VAR, N, body...) runs `for (int64_t VAR = 0; VAR < N; VAR++) body` on `nt`
 * threads (a variable of that name must be in scope), and as a plain loop when nt <= 1:
 * entering OpenMP costs about a microsecond even for one thread, which would dominate
 * the small tensors most ops see. */
#define TPF_PFOR(VAR, N, ...)                                                        \
    do {                                                                             \
        if (nt > 1) {                                                                \
            _Pragma("omp parallel for num_threads(nt) schedule(static)")             \
            for (int64_t VAR = 0; VAR < (N); VAR++) { __VA_ARGS__ }                  \
        } else {                                                                     \
            for (int64_t VAR = 0; VAR < (N); VAR++) { __VA_ARGS__ }                  \
        }                                                                            \
    } while (0)

static inline size_t tpf_dtype_size(int dt) {
    static const size_t sz[TPF_C128 + 1] = {2, 2, 4, 8, 1, 1, 2, 4, 8, 1, 8, 16};
    return (dt >= 0 && dt <= TPF_C128) ? sz[dt] : 0;
}

/* half and bfloat16 conversions (tpf_half_to_float, tpf_float_to_half, tpf_bf16_to_float,
 * tpf_float_to_bf16) and the rest of the scalar math shared with the GPU kernels */
#include "scalar_math.h"

/* TPF_CLONES: a hot loop compiled for AVX-512, AVX2 and baseline x86-64, the one for this CPU picked at
 * load time (target_clones), since a wheel cannot be built with one machine's -march=native */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define TPF_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef TPF_CLONES
#define TPF_CLONES
#endif

#endif
