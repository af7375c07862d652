/* Element-wise unary and binary math (csrc/elementwise.c on the device).
 *
 * One kernel per (op, dtype): binary_<op>_<dt>, unary_<op>_<dt>, from the rows of
 * include/elementwise.def, computing include/scalar_math.h's expressions: the op
 * list and every formula are the CPU kernels' own.  A binary kernel reads its
 * operands through strides (nd = 1 with strides 0/1 is the flat and the scalar fast
 * path; nd > 1 a general broadcast), so one kernel serves tpf_binary_flat and
 * tpf_binary_strided.  Integer division by zero and integer powers with a negative
 * exponent set *flag (1 and 2) for the host to turn into the CPU kernels' statuses.
 */
#include "scalar_math.h"

/* ---- binary ----------------------------------------------------------- */

#define BIN_KERNEL(NAME, SUF, T, TO, W, CHECK, E)                                                 \
KERNEL NAME##_##SUF(const G T *A, const G T *B, G TO *O, i64 n, int nd, dims_t shape,    \
                             dims_t as, dims_t bs, G int *flag) {                                 \
    i64 i = GID0();                                                                               \
    if (i >= n) return;                                                                           \
    i64 oa, ob;                                                                                   \
    if (nd == 1) { oa = i * as.d[0]; ob = i * bs.d[0]; }                                          \
    else { oa = strided_offset(i, nd, &shape, &as); ob = strided_offset(i, nd, &shape, &bs); }    \
    T x = A[oa], y = B[ob];                                                                       \
    CHECK                                                                                         \
    O[i] = (TO)(E(x, y, W));                                                                      \
}

#define NOCHECK
#define DIVCHECK if (y == 0) flag[0] = 1;
#define POWCHECK if (y < 0 && x != 1 && x != -1) flag[0] = 2;

/* BIN_<class>_<kind>(name, expr): the kinds of elementwise.def */
#ifdef TPF_FP64
#define BIN_FLOATS(NAME, E32, E64, TO32, TO64) BIN_KERNEL(NAME, f32, float, TO32, u32, NOCHECK, E32) \
                                               BIN_KERNEL(NAME, f64, double, TO64, u64, NOCHECK, E64)
#else
#define BIN_FLOATS(NAME, E32, E64, TO32, TO64) BIN_KERNEL(NAME, f32, float, TO32, u32, NOCHECK, E32)
#endif
#define BIN_F_NO(NAME, E)
#define BIN_F_F(NAME, E) BIN_FLOATS(NAME, E, E, float, double)
#define BIN_F_FV BIN_F_F
#define BIN_F_FS(NAME, E) BIN_FLOATS(NAME, E##_f32, E##_f64, float, double)
#define BIN_F_FB(NAME, E) BIN_FLOATS(NAME, E, E, u8, u8)
#define BIN_INTS(NAME, E, C8, CU8, TO8, TOU8, TO16, TO32, TO64)                                                    \
    BIN_KERNEL(NAME, i8, i8, TO8, u32, C8, E) BIN_KERNEL(NAME, u8, u8, TOU8, u32, CU8, E)                          \
    BIN_KERNEL(NAME, i16, i16, TO16, u32, C8, E) BIN_KERNEL(NAME, i32, i32, TO32, u32, C8, E)                      \
    BIN_KERNEL(NAME, i64, i64, TO64, u64, C8, E)
#define BIN_I_NO(NAME, E)
#define BIN_I_I(NAME, E) BIN_INTS(NAME, E, NOCHECK, NOCHECK, i8, u8, i16, i32, i64)
#define BIN_I_ID(NAME, E) BIN_INTS(NAME, E, DIVCHECK, DIVCHECK, i8, u8, i16, i32, i64)
#define BIN_I_IP(NAME, E) BIN_INTS(NAME, E, POWCHECK, NOCHECK, i8, u8, i16, i32, i64)
#define BIN_I_IB(NAME, E) BIN_INTS(NAME, E, NOCHECK, NOCHECK, u8, u8, u8, u8, u8)
#define BIN_B_NO(NAME, E)
#define BIN_B_B(NAME, E) BIN_KERNEL(NAME, b, u8, u8, u32, NOCHECK, E)

/* the kernel's name is pasted at once: a math function's name (sqrt, pow) may be a macro in a
 * device compiler's headers, and an op name passed on unpasted would be expanded */
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) \
    BIN_F_##FK(binary_##name, FE) BIN_I_##IK(binary_##name, IE) BIN_B_##BK(binary_##name, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"

/* ---- unary ------------------------------------------------------------ */

#ifdef TPF_FP64
typedef double param_t;
#else
typedef float param_t;
#endif

#define UN_KERNEL(NAME, SUF, T, TO, W, E)                                                   \
KERNEL NAME##_##SUF(const G T *X, G TO *O, i64 n, param_t p) {                      \
    i64 i = GID0();                                                                         \
    if (i >= n) return;                                                                     \
    T x = X[i];                                                                             \
    O[i] = (TO)(E(x, p, W));                                                                \
}
#ifdef TPF_FP64
#define UN_FLOATS(NAME, E32, E64, TO32, TO64) UN_KERNEL(NAME, f32, float, TO32, u32, E32) \
                                              UN_KERNEL(NAME, f64, double, TO64, u64, E64)
#else
#define UN_FLOATS(NAME, E32, E64, TO32, TO64) UN_KERNEL(NAME, f32, float, TO32, u32, E32)
#endif
#define UN_F_NO(NAME, E)
#define UN_F_F(NAME, E) UN_FLOATS(NAME, E, E, float, double)
#define UN_F_FV UN_F_F
#define UN_F_FS(NAME, E) UN_FLOATS(NAME, E##_f32, E##_f64, float, double)
#define UN_F_FB(NAME, E) UN_FLOATS(NAME, E, E, u8, u8)
#define UN_I_NO(NAME, E)
#define UN_I_I(NAME, E)                                                                            \
    UN_KERNEL(NAME, i8, i8, i8, u32, E) UN_KERNEL(NAME, u8, u8, u8, u32, E)                        \
    UN_KERNEL(NAME, i16, i16, i16, u32, E) UN_KERNEL(NAME, i32, i32, i32, u32, E)                  \
    UN_KERNEL(NAME, i64, i64, i64, u64, E)
#define UN_B_NO(NAME, E)
#define UN_B_B(NAME, E) UN_KERNEL(NAME, b, u8, u8, u32, E)

#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) \
    UN_F_##FK(unary_##name, FE) UN_I_##IK(unary_##name, IE) UN_B_##BK(unary_##name, BE)
#include "elementwise.def"
