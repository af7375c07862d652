/* Fused element-wise programs: one pass over memory for a chain of element-wise ops.
 *
 * A program is a register bytecode (numexpr's idea): registers 0..n_inputs-1 hold the
 * inputs (a dense array of n elements, or one element repeated: input_is_scalar), the
 * others temporaries; each instruction is 7 int32s
 *
 *     kind, op, dt, dst, a, b, c        (and params[i], the op's scalar parameter)
 *
 *   kind 0  unary:  dst = UNARY[op](a)            (dt: a's dtype; elementwise.def's op codes)
 *   kind 1  binary: dst = BINARY[op](a, b)
 *   kind 2  cast:   dst = (reg_dtype[dst]) a      (float32 <-> float64, dt: a's dtype)
 *   kind 3  select: dst = a ? b : c               (a bool, dt: b's and c's dtype)
 *
 * The n elements are cut into tiles of TILE (each register's tile fits in L1 with the
 * others in L2); a thread evaluates a whole tile, instruction after instruction, each
 * instruction one tight loop over the tile.  Registers that are outputs are the output
 * buffers themselves (no copy); inputs are read in place.
 *
 * The loops are the rows of elementwise.def expanded with the same macros, scalar
 * expressions (scalar_math.h), attributes (the FV loops' target clones) and floating-point
 * contraction as csrc/elementwise.c's, so a fused program gives the same bits as the ops
 * run one by one.
 */
#pragma GCC optimize("fp-contract=fast")
#include "tpf.h"
#include "elementwise.h"
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>         /* before scalar_math.h: exp of a float is expf */
#include "scalar_math.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define TPF_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef TPF_CLONES
#define TPF_CLONES
#endif

#define TILE 1024
#define NFIELDS 7

typedef void (*fbinfn)(const void *, const void *, void *, int64_t);
typedef void (*funfn)(const void *, void *, int64_t, double);

/* ---- the loops: elementwise.def's float and bool rows (the same kinds as elementwise.c) ---- */

#define FB_LOOP(NAME, SUF, T, TO, W, EXPR, ATTR)                                             \
ATTR static void fb_##NAME##_##SUF(const void *av, const void *bv, void *ov, int64_t n) {   \
    typedef W Wt; (void)sizeof(Wt);                                                          \
    const T *A = (const T *)av; const T *B = (const T *)bv; TO *O = (TO *)ov;                \
    for (int64_t i = 0; i < n; i++) { T x = A[i], y = B[i]; O[i] = (TO)(EXPR); }            \
}
#define FB_T(NAME, SUF, T, TO, W, E, ATTR) FB_LOOP(NAME, SUF, T, TO, W, E(x, y, Wt), ATTR)
#define FB_F_NO(NAME, E)
#define FB_F_F(NAME, E) FB_T(NAME, f32, float, float, uint32_t, E, ) FB_T(NAME, f64, double, double, uint64_t, E, )
#define FB_F_FV(NAME, E) FB_T(NAME, f32, float, float, uint32_t, E, TPF_CLONES) \
                         FB_T(NAME, f64, double, double, uint64_t, E, TPF_CLONES)
#define FB_F_FS(NAME, E) FB_T(NAME, f32, float, float, uint32_t, E##_f32, ) \
                         FB_T(NAME, f64, double, double, uint64_t, E##_f64, )
#define FB_F_FB(NAME, E) FB_T(NAME, f32, float, uint8_t, uint32_t, E, ) FB_T(NAME, f64, double, uint8_t, uint64_t, E, )
#define FB_B_NO(NAME, E)
#define FB_B_B(NAME, E) FB_T(NAME, b, uint8_t, uint8_t, uint32_t, E, )
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) FB_F_##FK(name, FE) FB_B_##BK(name, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"

#define FU_LOOP(NAME, SUF, T, TO, W, EXPR, ATTR)                                             \
ATTR static void fu_##NAME##_##SUF(const void *xv, void *ov, int64_t n, double p) {         \
    typedef W Wt; (void)sizeof(Wt);                                                          \
    const T *X = (const T *)xv; TO *O = (TO *)ov; (void)p;                                   \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; O[i] = (TO)(EXPR); }                      \
}
#define FU_T(NAME, SUF, T, TO, W, E, ATTR) FU_LOOP(NAME, SUF, T, TO, W, E(x, p, Wt), ATTR)
#define FU_F_NO(NAME, E)
#define FU_F_F(NAME, E) FU_T(NAME, f32, float, float, uint32_t, E, ) FU_T(NAME, f64, double, double, uint64_t, E, )
#define FU_F_FV(NAME, E) FU_T(NAME, f32, float, float, uint32_t, E, TPF_CLONES) \
                         FU_T(NAME, f64, double, double, uint64_t, E, TPF_CLONES)
#define FU_F_FS(NAME, E) FU_T(NAME, f32, float, float, uint32_t, E##_f32, TPF_CLONES) \
                         FU_T(NAME, f64, double, double, uint64_t, E##_f64, )
#define FU_F_FB(NAME, E) FU_T(NAME, f32, float, uint8_t, uint32_t, E, ) FU_T(NAME, f64, double, uint8_t, uint64_t, E, )
#define FU_B_NO(NAME, E)
#define FU_B_B(NAME, E) FU_T(NAME, b, uint8_t, uint8_t, uint32_t, E, )
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) FU_F_##FK(name, FE) FU_B_##BK(name, BE)
#include "elementwise.def"

/* dispatch tables: [op][0 = float32, 1 = float64, 2 = bool] */
#define FROW_F_NO(P, NAME)
#define FROW_F_F(P, NAME) [0] = P##_##NAME##_f32, [1] = P##_##NAME##_f64,
#define FROW_F_FV FROW_F_F
#define FROW_F_FS FROW_F_F
#define FROW_F_FB FROW_F_F
#define FROW_B_NO(P, NAME)
#define FROW_B_B(P, NAME) [2] = P##_##NAME##_b,

static const fbinfn fbin_table[TPF_BIN_NOPS][3] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_BIN_##NAME] = {FROW_F_##FK(fb, name) FROW_B_##BK(fb, name)},
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"
};
static const funfn fun_table[TPF_UN_NOPS][3] = {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) [TPF_UN_##NAME] = {FROW_F_##FK(fu, name) FROW_B_##BK(fu, name)},
#include "elementwise.def"
};

static int col_of(int dt) { return dt == TPF_F32 ? 0 : dt == TPF_F64 ? 1 : dt == TPF_BOOL ? 2 : -1; }

/* ---- casts and selects ---------------------------------------------------------------------- */

static void cast_f32_f64(const void *x, void *o, int64_t n) {
    const float *X = (const float *)x; double *O = (double *)o;
    for (int64_t i = 0; i < n; i++) O[i] = (double)X[i];
}
static void cast_f64_f32(const void *x, void *o, int64_t n) {
    const double *X = (const double *)x; float *O = (float *)o;
    for (int64_t i = 0; i < n; i++) O[i] = (float)X[i];
}
#define SELECT_LOOP(SUF, T)                                                                   \
static void select_##SUF(const void *cv, const void *av, const void *bv, void *ov, int64_t n) { \
    const uint8_t *C = (const uint8_t *)cv; const T *A = (const T *)av, *B = (const T *)bv;   \
    T *O = (T *)ov;                                                                           \
    for (int64_t i = 0; i < n; i++) O[i] = C[i] ? A[i] : B[i];                                \
}
SELECT_LOOP(f32, float)
SELECT_LOOP(f64, double)
SELECT_LOOP(b, uint8_t)

/* ---- the interpreter ------------------------------------------------------------------------ */

static int check_program(const int32_t *pg, const double *params, int n_instr, int n_regs, const int32_t *rdt,
                         int n_inputs, const int32_t *out_regs, int n_outputs) {
    if (n_instr < 0 || n_regs < n_inputs || n_inputs < 0 || n_outputs < 0 || n_regs > 4096) return TPF_EBADARG;
    for (int r = 0; r < n_regs; r++)
        if (col_of(rdt[r]) < 0) return TPF_EBADDTYPE;
    for (int k = 0; k < n_outputs; k++)
        if (out_regs[k] < n_inputs || out_regs[k] >= n_regs) return TPF_EBADARG;
    for (int i = 0; i < n_instr; i++) {
        const int32_t *p = pg + (int64_t)i * NFIELDS;
        int kind = p[0], op = p[1], dt = p[2], d = p[3], a = p[4], b = p[5], c = p[6];
        int col = col_of(dt);
        if (d < n_inputs || d >= n_regs || a < 0 || a >= n_regs || col < 0 || rdt[a] != (kind == 3 ? TPF_BOOL : dt))
            return TPF_EBADARG;
        switch (kind) {
        case 0:
            if (op < 0 || op >= TPF_UN_NOPS) return TPF_EBADOP;
            if (!fun_table[op][col]) return TPF_EBADDTYPE;
            if (op == TPF_UN_POLYGAMMA && !(params[i] >= 0 && params[i] <= 64 && params[i] == floor(params[i])))
                return TPF_EBADARG;
            break;
        case 1:
            if (op < 0 || op >= TPF_BIN_NOPS) return TPF_EBADOP;
            if (!fbin_table[op][col]) return TPF_EBADDTYPE;
            if (b < 0 || b >= n_regs || rdt[b] != dt) return TPF_EBADARG;
            break;
        case 2:
            if (!((dt == TPF_F32 && rdt[d] == TPF_F64) || (dt == TPF_F64 && rdt[d] == TPF_F32))) return TPF_EBADDTYPE;
            break;
        case 3:
            if (b < 0 || b >= n_regs || c < 0 || c >= n_regs || rdt[b] != dt || rdt[c] != dt || rdt[d] != dt)
                return TPF_EBADARG;
            break;
        default:
            return TPF_EBADOP;
        }
    }
    return TPF_OK;
}

/* one tile [lo, lo + m): ptr[r] points at register r's elements of this tile */
static void run_tile(const int32_t *pg, const double *params, int n_instr, const int32_t *rdt, void **ptr, int64_t m) {
    for (int i = 0; i < n_instr; i++) {
        const int32_t *p = pg + (int64_t)i * NFIELDS;
        int col = col_of(p[2]);
        void *d = ptr[p[3]];
        switch (p[0]) {
        case 0: fun_table[p[1]][col](ptr[p[4]], d, m, params[i]); break;
        case 1: fbin_table[p[1]][col](ptr[p[4]], ptr[p[5]], d, m); break;
        case 2: if (p[2] == TPF_F32) cast_f32_f64(ptr[p[4]], d, m); else cast_f64_f32(ptr[p[4]], d, m); break;
        default:
            if (col == 0) select_f32(ptr[p[4]], ptr[p[5]], ptr[p[6]], d, m);
            else if (col == 1) select_f64(ptr[p[4]], ptr[p[5]], ptr[p[6]], d, m);
            else select_b(ptr[p[4]], ptr[p[5]], ptr[p[6]], d, m);
        }
    }
    (void)rdt;
}

int tpf_fused_eval(const int32_t *program, const double *params, int n_instr, int n_regs, const int32_t *reg_dtype,
                   const void *const *inputs, const uint8_t *input_is_scalar, int n_inputs,
                   void *const *outputs, const int32_t *out_regs, int n_outputs, int64_t n) {
    int st = check_program(program, params, n_instr, n_regs, reg_dtype, n_inputs, out_regs, n_outputs);
    if (st) return st;
    if (n < 0) return TPF_EBADSIZE;
    if (n == 0) return TPF_OK;
    /* output register -> output index (-1: a temporary) */
    int *outof = malloc(sizeof(int) * (size_t)n_regs);
    if (!outof) return TPF_ENOMEM;
    for (int r = 0; r < n_regs; r++) outof[r] = -1;
    for (int k = 0; k < n_outputs; k++) outof[out_regs[k]] = k;
    int64_t ntiles = (n + TILE - 1) / TILE;
    int nt = TPF_NTHREADS(n);
    if (nt > ntiles) nt = (int)ntiles;
    int64_t per = (ntiles + nt - 1) / nt;   /* tiles a thread: one contiguous block each */
    int fail = 0;
    #pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        /* this thread's tiles of the temporaries and of the scalar inputs (repeated) */
        char *buf = malloc((size_t)n_regs * TILE * 8);
        void **ptr = malloc(sizeof(void *) * (size_t)n_regs);
        if (!buf || !ptr) {
            free(buf); free(ptr);
            #pragma omp atomic write
            fail = 1;
        } else {
            for (int r = 0; r < n_inputs; r++) {
                if (!input_is_scalar[r]) continue;
                size_t es = tpf_dtype_size(reg_dtype[r]);
                char *b = buf + (size_t)r * TILE * 8;
                for (int64_t i = 0; i < TILE; i++) memcpy(b + i * es, inputs[r], es);
            }
            int64_t t0 = t * per, t1 = t0 + per < ntiles ? t0 + per : ntiles;
            for (int64_t tile = t0; tile < t1; tile++) {
                int64_t lo = tile * TILE, m = lo + TILE <= n ? TILE : n - lo;
                for (int r = 0; r < n_regs; r++) {
                    size_t es = tpf_dtype_size(reg_dtype[r]);
                    if (r < n_inputs)
                        ptr[r] = input_is_scalar[r] ? (void *)(buf + (size_t)r * TILE * 8)
                                                    : (void *)((const char *)inputs[r] + lo * es);
                    else if (outof[r] >= 0)
                        ptr[r] = (char *)outputs[outof[r]] + lo * es;
                    else
                        ptr[r] = buf + (size_t)r * TILE * 8;
                }
                run_tile(program, params, n_instr, reg_dtype, ptr, m);
            }
            free(buf); free(ptr);
        }
    }
    free(outof);
    return fail ? TPF_ENOMEM : TPF_OK;
}
