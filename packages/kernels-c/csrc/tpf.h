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

#define TPF_MAXDIMS 12

/* Work below this many elements runs on the calling thread. */
#define TPF_PAR_MIN 32768

extern int tpf_num_threads;   /* 0 = all cores */
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
#define TPF_NTHREADS(n) ((n) >= TPF_PAR_MIN ? (tpf_num_threads > 0 ? tpf_num_threads : omp_get_max_threads()) : 1)
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
    static const size_t sz[TPF_NDTYPES] = {2, 2, 4, 8, 1, 1, 2, 4, 8, 1};
    return (dt >= 0 && dt < TPF_NDTYPES) ? sz[dt] : 0;
}

/* half and bfloat16 conversions (software, round to nearest even) */
static inline float tpf_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else {  /* subnormal half: normalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 0x1f) bits = sign | 0x7f800000 | (man << 13);
    else bits = sign | ((exp + 112) << 23) | (man << 13);
    float f; memcpy(&f, &bits, 4); return f;
}
static inline uint16_t tpf_float_to_half(float f) {
    uint32_t x; memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)h;
}
static inline float tpf_bf16_to_float(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16; float f; memcpy(&f, &bits, 4); return f;
}
static inline uint16_t tpf_float_to_bf16(float f) {
    uint32_t x; memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);  /* quiet NaN */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

#endif
