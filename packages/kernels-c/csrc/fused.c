/* Fused element-wise programs: one pass over memory for a chain of element-wise ops.
 *
 * A program is a register bytecode (numexpr's idea): registers 0..n_inputs-1 hold the
 * inputs (a dense array of n elements, or input_period[r] elements repeated: 1 for a scalar, the
 * last dimensions' size for a bias broadcast over the leading ones), the
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
 * buffers themselves (no copy); inputs are read in place.  Without reductions the threads take
 * chunks of CHUNK elements (32 tiles) as they become free, so a thread slowed by other work on
 * the machine takes fewer (the results do not depend on who computes a chunk); a generated
 * kernel (below) runs over a whole chunk in one call when no input is a broadcast row.  With
 * reductions each thread has tpf_reduce's fixed slice (the results' bits depend on it).
 *
 * The loops are the rows of elementwise.def expanded with the same macros, scalar
 * expressions (scalar_math.h), attributes (the FV loops' target clones) and floating-point
 * contraction as csrc/elementwise.c's, so a fused program gives the same bits as the ops
 * run one by one.
 */
#pragma GCC optimize("fp-contract=fast")
#include "tpf.h"
#include "elementwise.h"
#include "reduce.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>         /* before scalar_math.h: exp of a float is expf */
#include "scalar_math.h"


#define TILE 1024
#define CHUNK ((int64_t)32 * TILE)   /* the unit of work of a thread without reductions */
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

/* ---- reductions at the end of the chain ------------------------------------------------------
 *
 * A reduced register (sum, prod, mean, max or min over all n elements) is accumulated tile by
 * tile as it is computed, never written out.  The accumulation is tpf_reduce's over an
 * (1, n, 1) view, step for step, so the fused result has the unfused reduction's bits: the
 * same threads' slices of [0, n) (ceil(n / nt) rounded up to 8), in each slice LANES
 * independent accumulators over whole blocks of LANES (when the slice has at least 2 * LANES
 * elements), folded in lane order, then the slice's tail in order, then the slices' partial
 * results folded in thread order and finished (a mean divides by n).  The accumulator types,
 * initial values and steps are include/reduce.def's.  Tiles start at the slice's start and are
 * a multiple of LANES long, so each element meets the accumulator tpf_reduce gives it.
 */
#define LANES 64
#define RA_DEF(NAME, SUF, T, ACC, INIT, STEP, FIN)                                              \
TPF_CLONES static void ra_lanes_##NAME##_##SUF(const void *xv, int64_t m, void *lv) {           \
    const T *x = (const T *)xv; ACC *a = (ACC *)lv;                                             \
    for (int64_t i = 0; i + LANES <= m; i += LANES)                                              \
        for (int k = 0; k < LANES; k++) { ACC acc = a[k]; T v = x[i + k]; STEP; a[k] = acc; }  \
}                                                                                               \
static void ra_seq_##NAME##_##SUF(const void *xv, int64_t m, void *av) {                        \
    const T *x = (const T *)xv; ACC acc = *(ACC *)av;                                           \
    for (int64_t i = 0; i < m; i++) { T v = x[i]; STEP; }                                       \
    *(ACC *)av = acc;                                                                           \
}                                                                                               \
static void ra_init_##NAME##_##SUF(void *lv, void *av) {                                        \
    ACC *a = (ACC *)lv;                                                                         \
    for (int k = 0; k < LANES; k++) a[k] = INIT;                                                \
    *(ACC *)av = INIT;                                                                          \
}                                                                                               \
static void ra_fold_##NAME##_##SUF(const void *lv, void *av) {                                  \
    const ACC *a = (const ACC *)lv; ACC acc = a[0];                                             \
    for (int k = 1; k < LANES; k++) { ACC v = a[k]; STEP; }                                     \
    *(ACC *)av = acc;                                                                           \
}                                                                                               \
static void ra_fin_##NAME##_##SUF(const void *pv, int nparts, void *ov, int64_t r) {            \
    const ACC *P = (const ACC *)pv; ACC acc = P[0];                                             \
    for (int t = 1; t < nparts; t++) { ACC v = P[t]; STEP; }                                    \
    *(T *)ov = (T)(FIN);                                                                        \
}
#define S_ADD acc += v
#define S_MUL acc *= v
#define S_FMAX acc = ((v > acc) | (v != v)) ? v : acc
#define S_FMIN acc = ((v < acc) | (v != v)) ? v : acc
RA_DEF(sum, f32, float, double, 0, S_ADD, acc)
RA_DEF(prod, f32, float, double, 1, S_MUL, acc)
RA_DEF(mean, f32, float, double, 0, S_ADD, acc / (double)r)
RA_DEF(max, f32, float, float, -INFINITY, S_FMAX, acc)
RA_DEF(min, f32, float, float, INFINITY, S_FMIN, acc)
RA_DEF(sum, f64, double, double, 0, S_ADD, acc)
RA_DEF(prod, f64, double, double, 1, S_MUL, acc)
RA_DEF(mean, f64, double, double, 0, S_ADD, acc / (double)r)
RA_DEF(max, f64, double, double, -INFINITY, S_FMAX, acc)
RA_DEF(min, f64, double, double, INFINITY, S_FMIN, acc)

typedef struct {
    void (*lanes)(const void *, int64_t, void *);
    void (*seq)(const void *, int64_t, void *);
    void (*init)(void *, void *);
    void (*fold)(const void *, void *);
    void (*fin)(const void *, int, void *, int64_t);
} rakind;
#define RAK(NAME, SUF) {ra_lanes_##NAME##_##SUF, ra_seq_##NAME##_##SUF, ra_init_##NAME##_##SUF, \
                        ra_fold_##NAME##_##SUF, ra_fin_##NAME##_##SUF}
#define RAROW(NAME) {RAK(NAME, f32), RAK(NAME, f64)}
static const rakind ra_table[TPF_RED_MIN + 1][2] = {
    [TPF_RED_SUM] = RAROW(sum), [TPF_RED_PROD] = RAROW(prod), [TPF_RED_MEAN] = RAROW(mean),
    [TPF_RED_MAX] = RAROW(max), [TPF_RED_MIN] = RAROW(min),
};

/* A thread's scratch memory, kept for its next call (grown as needed; at most SCRATCH_KEEP bytes are kept,
 * a larger block is freed by the next call that needs less). */
#define SCRATCH_KEEP ((size_t)8 << 20)
static _Thread_local char *scratch_buf;
static _Thread_local size_t scratch_cap;

static char *scratch(size_t need) {
    if (need <= scratch_cap && (scratch_cap <= SCRATCH_KEEP || need > SCRATCH_KEEP / 2)) return scratch_buf;
    free(scratch_buf);
    scratch_cap = need < 65536 ? 65536 : need;
    scratch_buf = malloc(scratch_cap);
    if (!scratch_buf) scratch_cap = 0;
    return scratch_buf;
}


/* ---- generated kernels ---------------------------------------------------------------------
 *
 * tapeflow.kernels.codegen turns a program into one C function that computes the whole chain per
 * element in one loop (compiled by the system compiler at first use, cached on disk) and registers it
 * here under the program's signature: the instructions, the registers' dtypes, which inputs are scalars,
 * the output and reduced registers.  tpf_fused_eval_reduce looks the signature up on each call (whoever
 * calls it: core's fused op or the executor) and, when a function is registered and generated kernels
 * are on (tpfgen_enable), calls it for each tile instead of run_tile: the tiling, the threads, the
 * broadcast inputs and the reductions stay the ones above.  A generated function is
 *     void f(void *const *ptr, const double *params, int64_t m, uint32_t zero)
 * (ptr: the registers' tiles as run_tile has them; zero is 0, a value the compiler cannot see, used
 * to keep each instruction's result rounded on its own: see codegen.py).  Entries are never removed
 * (the libraries stay loaded); the table holds GEN_SLOTS signatures, later ones are interpreted.
 */
typedef void (*tpf_gen_fn)(void *const *, const double *, int64_t, uint32_t);
#define GEN_SLOTS 4096
typedef struct { uint64_t h; int nkey; tpf_gen_fn fn; int32_t key[]; } gen_entry;
static gen_entry *gen_table[GEN_SLOTS];
static int gen_on = 1;
static int64_t gen_ncalls;
static int gen_count;   /* signatures registered */

/* the signature as int32s into key (NULL: only its length) */
static int gen_key(int32_t *key, const int32_t *program, int n_instr, int n_regs, const int32_t *rdt,
                   const int64_t *period, int n_inputs, const int32_t *out_regs, int n_outputs,
                   const int32_t *red_regs, int n_red) {
    int len = 5 + n_instr * NFIELDS + n_regs + n_inputs + n_outputs + n_red;
    if (!key) return len;
    int k = 0;
    key[k++] = n_instr; key[k++] = n_regs; key[k++] = n_inputs; key[k++] = n_outputs; key[k++] = n_red;
    for (int i = 0; i < n_instr * NFIELDS; i++) key[k++] = program[i];
    for (int r = 0; r < n_regs; r++) key[k++] = rdt[r];
    for (int r = 0; r < n_inputs; r++) key[k++] = period[r] == 1;
    for (int q = 0; q < n_outputs; q++) key[k++] = out_regs[q];
    for (int q = 0; q < n_red; q++) key[k++] = red_regs[q];
    return len;
}

static uint64_t gen_hash(const int32_t *key, int len) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < len; i++) { h ^= (uint32_t)key[i]; h *= 1099511628211ULL; }
    return h;
}

/* the slot of signature key (its entry, or the first empty slot: *found tells), -1 when the table is full */
static int gen_find(const int32_t *key, int len, uint64_t h, int *found) {
    for (int j = 0; j < GEN_SLOTS; j++) {
        int s = (int)((h + (uint64_t)j) % GEN_SLOTS);
        gen_entry *e = __atomic_load_n(&gen_table[s], __ATOMIC_ACQUIRE);
        if (!e) { *found = 0; return s; }
        if (e->h == h && e->nkey == len && !memcmp(e->key, key, sizeof(int32_t) * (size_t)len)) { *found = 1; return s; }
    }
    *found = 0;
    return -1;
}

static tpf_gen_fn gen_lookup(const int32_t *program, int n_instr, int n_regs, const int32_t *rdt,
                             const int64_t *period, int n_inputs, const int32_t *out_regs, int n_outputs,
                             const int32_t *red_regs, int n_red) {
    if (!__atomic_load_n(&gen_on, __ATOMIC_RELAXED) || !__atomic_load_n(&gen_count, __ATOMIC_ACQUIRE)) return NULL;
    int len = gen_key(NULL, program, n_instr, n_regs, rdt, period, n_inputs, out_regs, n_outputs, red_regs, n_red);
    int32_t stack[512];
    int32_t *key = len <= 512 ? stack : malloc(sizeof(int32_t) * (size_t)len);
    if (!key) return NULL;
    gen_key(key, program, n_instr, n_regs, rdt, period, n_inputs, out_regs, n_outputs, red_regs, n_red);
    int found;
    int s = gen_find(key, len, gen_hash(key, len), &found);
    if (key != stack) free(key);
    return s >= 0 && found ? __atomic_load_n(&gen_table[s], __ATOMIC_ACQUIRE)->fn : NULL;
}

static int gen_lock;

int tpfgen_register(const int32_t *program, int n_instr, int n_regs, const int32_t *reg_dtype,
                    const int64_t *input_period, int n_inputs, const int32_t *out_regs, int n_outputs,
                    const int32_t *red_regs, int n_red, void *fn) {
    if (!fn || n_instr < 0 || n_regs < 0 || n_inputs < 0 || n_outputs < 0 || n_red < 0 || n_regs > 4096)
        return TPF_EBADARG;
    int len = gen_key(NULL, program, n_instr, n_regs, reg_dtype, input_period, n_inputs, out_regs, n_outputs,
                      red_regs, n_red);
    gen_entry *e = malloc(sizeof(gen_entry) + sizeof(int32_t) * (size_t)len);
    if (!e) return TPF_ENOMEM;
    gen_key(e->key, program, n_instr, n_regs, reg_dtype, input_period, n_inputs, out_regs, n_outputs, red_regs, n_red);
    e->nkey = len;
    e->h = gen_hash(e->key, len);
    e->fn = (tpf_gen_fn)fn;
    while (__atomic_exchange_n(&gen_lock, 1, __ATOMIC_ACQUIRE)) {}
    int found, st = TPF_OK;
    int s = gen_find(e->key, len, e->h, &found);
    if (s < 0) st = TPF_ENOMEM;
    else if (found) free(e);   /* registered already (the same signature computes the same values) */
    else { __atomic_store_n(&gen_table[s], e, __ATOMIC_RELEASE); __atomic_fetch_add(&gen_count, 1, __ATOMIC_RELEASE); }
    __atomic_store_n(&gen_lock, 0, __ATOMIC_RELEASE);
    if (st != TPF_OK) free(e);
    return st;
}

/* generated kernels on (1) or off (0); returns the previous setting */
int tpfgen_enable(int on) { return __atomic_exchange_n(&gen_on, on ? 1 : 0, __ATOMIC_RELAXED); }

/* how many fused evaluations ran a generated kernel so far */
int64_t tpfgen_calls(void) { return __atomic_load_n(&gen_ncalls, __ATOMIC_RELAXED); }

/* ---- the entry points ----------------------------------------------------------------------- */

int tpf_fused_eval_reduce(const int32_t *program, const double *params, int n_instr, int n_regs,
                          const int32_t *reg_dtype, const void *const *inputs, const int64_t *input_period,
                          int n_inputs, void *const *outputs, const int32_t *out_regs, int n_outputs,
                          const int32_t *red_ops, const int32_t *red_regs, void *const *red_out, int n_red,
                          int64_t n) {
    int st = check_program(program, params, n_instr, n_regs, reg_dtype, n_inputs, out_regs, n_outputs);
    if (st) return st;
    if (n < 0 || n_red < 0) return TPF_EBADSIZE;
    for (int r = 0; r < n_inputs; r++)
        if (input_period[r] < 0 || (input_period[r] > 1 && n % input_period[r])) return TPF_EBADSIZE;
    for (int q = 0; q < n_red; q++) {
        if (red_ops[q] < TPF_RED_SUM || red_ops[q] > TPF_RED_MIN) return TPF_EBADOP;
        if (red_regs[q] < 0 || red_regs[q] >= n_regs) return TPF_EBADARG;
        int dt = reg_dtype[red_regs[q]];
        if (dt != TPF_F32 && dt != TPF_F64) return TPF_EBADDTYPE;
    }
    /* output register -> output index (-1: a temporary) */
    tpf_gen_fn gen = gen_lookup(program, n_instr, n_regs, reg_dtype, input_period, n_inputs, out_regs, n_outputs,
                                red_regs, n_red);
    if (gen) __atomic_fetch_add(&gen_ncalls, 1, __ATOMIC_RELAXED);
    int *outof = malloc(sizeof(int) * (size_t)(n_regs + 1));
    if (!outof) return TPF_ENOMEM;
    for (int r = 0; r < n_regs; r++) outof[r] = -1;
    for (int k = 0; k < n_outputs; k++) outof[out_regs[k]] = k;
    int nt;
    int64_t chunk = 0, nchunks = 0, next_chunk = 0;
    if (n_red) {                   /* tpf_reduce's slices of [0, n), one a thread */
        nt = TPF_NTHREADS(n);
        if (nt < 1) nt = 1;
        chunk = nt > 1 ? (((n + nt - 1) / nt + 7) & ~(int64_t)7) : n;
    } else {                       /* chunks of CHUNK tiles, taken by whichever thread is free */
        nchunks = (n + CHUNK - 1) / CHUNK;
        nt = TPF_NTHREADS(n);
        if (nt > nchunks) nt = (int)nchunks;
        if (nt < 1) nt = 1;
    }
    /* a generated kernel without broadcast rows runs over a whole chunk in one call (it reads its inputs
     * and writes its outputs in place: no tile buffers to fill) */
    int whole = gen && !n_red;
    for (int r = 0; r < n_inputs; r++)
        if (input_period[r] > 1) whole = 0;
    /* each thread's partial result of each reduction (an accumulator is at most 8 bytes) */
    double *part = n_red ? malloc(sizeof(double) * (size_t)nt * (size_t)n_red) : NULL;
    if (n_red && !part) { free(outof); return TPF_ENOMEM; }
    int fail = 0;
    #pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        tpf_fp_enter();
        int64_t lo = 0, hi = n_red ? 0 : (n < CHUNK ? n : CHUNK);   /* without reductions: the first chunk's size */
        if (n_red) {
            lo = t * chunk < n ? t * chunk : n;
            hi = lo + chunk < n ? lo + chunk : n;
        }
        /* this thread's tiles of the temporaries and of the scalar inputs (repeated), its lanes, the
         * registers' pointers and element sizes: kept from call to call (no allocation, no page faults) */
        int64_t tl = hi - lo < TILE ? (hi - lo + LANES - 1) / LANES * LANES : TILE;  /* a tile's length */
        if (tl < LANES) tl = LANES;
        size_t stride = (size_t)tl * 8;
        size_t need = (size_t)n_regs * stride + (size_t)n_red * LANES * 8 + (size_t)n_regs * (sizeof(void *) + 8);
        char *buf = scratch(need);
        if (!buf) {
            #pragma omp atomic write
            fail = 1;
        } else {
            char *lanes = buf + (size_t)n_regs * stride;
            void **ptr = (void **)(lanes + (size_t)n_red * LANES * 8);
            size_t *es = (size_t *)(ptr + n_regs);
            for (int r = 0; r < n_regs; r++) es[r] = tpf_dtype_size(reg_dtype[r]);
            double *acc = part ? part + (size_t)t * n_red : NULL;
            int64_t len = hi - lo, full = len >= 2 * LANES ? lo + len / LANES * LANES : lo;
            for (int q = 0; q < n_red; q++)
                ra_table[red_ops[q]][reg_dtype[red_regs[q]] == TPF_F64].init(lanes + (size_t)q * LANES * 8, acc + q);
            for (int r = 0; r < n_regs; r++) {
                if (r < n_inputs && input_period[r] == 1) {
                    char *b = buf + (size_t)r * stride;
                    ptr[r] = b;
                    if (es[r] == 4) { float v; memcpy(&v, inputs[r], 4); for (int64_t i = 0; i < tl; i++) ((float *)b)[i] = v; }
                    else if (es[r] == 8) { double v; memcpy(&v, inputs[r], 8); for (int64_t i = 0; i < tl; i++) ((double *)b)[i] = v; }
                    else memset(b, *(const uint8_t *)inputs[r], (size_t)tl);
                } else if (r >= n_inputs && outof[r] < 0) {
                    ptr[r] = buf + (size_t)r * stride;
                }
            }
            for (int64_t c = 0;; c++) {
                if (!n_red) {              /* the next chunk free */
                    int64_t k = __atomic_fetch_add(&next_chunk, 1, __ATOMIC_RELAXED);
                    if (k >= nchunks) break;
                    lo = k * CHUNK;
                    hi = lo + CHUNK < n ? lo + CHUNK : n;
                } else if (c) {
                    break;
                }
                int64_t step = whole ? hi - lo : TILE;
                for (int64_t a = lo; a < hi; a += step) {
                    int64_t m = a + step <= hi ? step : hi - a;
                    for (int r = 0; r < n_regs; r++) {
                        if (r < n_inputs) {
                            int64_t per = input_period[r];
                            if (!per) {
                                ptr[r] = (void *)((const char *)inputs[r] + a * es[r]);
                            } else if (per > 1) {   /* a row repeated: this tile's elements of it */
                                char *b = buf + (size_t)r * stride;
                                ptr[r] = b;
                                int64_t off = a % per;
                                for (int64_t i = 0; i < m;) {
                                    int64_t take = per - off < m - i ? per - off : m - i;
                                    memcpy(b + i * es[r], (const char *)inputs[r] + off * es[r], (size_t)take * es[r]);
                                    i += take;
                                    off = 0;
                                }
                            }
                        } else if (outof[r] >= 0) {
                            ptr[r] = (char *)outputs[outof[r]] + a * es[r];
                        }
                    }
                    if (gen) gen(ptr, params, m, 0u);
                    else run_tile(program, params, n_instr, reg_dtype, ptr, m);
                    for (int q = 0; q < n_red; q++) {
                        int reg = red_regs[q], f64 = reg_dtype[reg] == TPF_F64;
                        const rakind *K = &ra_table[red_ops[q]][f64];
                        const char *x = (const char *)ptr[reg];
                        int64_t in_lanes = (full > a ? (full < a + m ? full : a + m) - a : 0);
                        if (in_lanes) K->lanes(x, in_lanes, lanes + (size_t)q * LANES * 8);
                        if (a + m == hi) {       /* the slice's last tile: fold the lanes, then the tail */
                            if (full > lo) K->fold(lanes + (size_t)q * LANES * 8, acc + q);
                            K->seq(x + (size_t)in_lanes * es[reg], m - in_lanes, acc + q);
                        }
                    }
                }
            }
        }
    }
    if (!fail)
        for (int q = 0; q < n_red; q++) {
            int f64 = reg_dtype[red_regs[q]] == TPF_F64;
            /* the partial results of reduction q, thread after thread */
            double tmp[64];
            double *pq = nt <= 64 ? tmp : malloc(sizeof(double) * (size_t)nt);
            if (!pq) { fail = 1; break; }
            for (int t = 0; t < nt; t++) pq[t] = part[(size_t)t * n_red + q];
            if (!f64 && (red_ops[q] == TPF_RED_MAX || red_ops[q] == TPF_RED_MIN)) {
                float fp[64], *fq = nt <= 64 ? fp : malloc(sizeof(float) * (size_t)nt);
                if (!fq) { if (pq != tmp) free(pq); fail = 1; break; }
                for (int t = 0; t < nt; t++) memcpy(&fq[t], &pq[t], sizeof(float));
                ra_table[red_ops[q]][0].fin(fq, nt, red_out[q], n);
                if (fq != fp) free(fq);
            } else {
                ra_table[red_ops[q]][f64].fin(pq, nt, red_out[q], n);
            }
            if (pq != tmp) free(pq);
        }
    free(part);
    free(outof);
    return fail ? TPF_ENOMEM : TPF_OK;
}

int tpf_fused_eval(const int32_t *program, const double *params, int n_instr, int n_regs, const int32_t *reg_dtype,
                   const void *const *inputs, const uint8_t *input_is_scalar, int n_inputs,
                   void *const *outputs, const int32_t *out_regs, int n_outputs, int64_t n) {
    if (n_inputs < 0 || n_inputs > 4096) return TPF_EBADARG;
    int64_t period[4096];
    for (int r = 0; r < n_inputs; r++) period[r] = input_is_scalar[r] ? 1 : 0;
    return tpf_fused_eval_reduce(program, params, n_instr, n_regs, reg_dtype, inputs, period, n_inputs,
                                 outputs, out_regs, n_outputs, NULL, NULL, NULL, 0, n);
}
