/* The graph executor's C loop: a run of fused element-wise kernels of a compiled function's plan,
 * one call from Python for all of them.
 *
 * A compiled function's plan (core/function.py's Plan) turns each run of consecutive steps that are
 * plain kernels (fused element-wise programs, and lone element-wise ops as one-instruction programs)
 * into one call of tpf_exec_fused: the steps' programs, prepared once per signature, read and write
 * buffers through a table of slots (void pointers) that the caller fills for this run: the inputs
 * coming from outside the run, the outputs leaving it (allocated per run: the caller keeps them), and
 * the buffers that live only inside the run (allocated once per signature and reused: the memory plan).
 *
 * Step k is described by
 *     programs[k], params[k], reg_dtypes[k], periods[k]   tpf_fused_eval_reduce's program arrays
 *     sizes[k]                                            its element count n
 *     ints[k] = {n_instr, n_regs, n_inputs, n_outputs, n_red,
 *                in_slot[n_inputs], out_slot[n_outputs], out_reg[n_outputs],
 *                red_op[n_red], red_reg[n_red], red_slot[n_red]}
 * The steps run in order; the first failing step's status is returned and its index stored in *failed.
 */
#include "tpf.h"
#include <stdlib.h>

int tpf_fused_eval_reduce(const int32_t *program, const double *params, int n_instr, int n_regs,
                          const int32_t *reg_dtype, const void *const *inputs, const int64_t *input_period,
                          int n_inputs, void *const *outputs, const int32_t *out_regs, int n_outputs,
                          const int32_t *red_ops, const int32_t *red_regs, void *const *red_out, int n_red,
                          int64_t n);

#define EXEC_STACK 64

int tpf_exec_fused(int n_steps, const int32_t *const *programs, const double *const *params,
                   const int32_t *const *reg_dtypes, const int64_t *const *periods, const int64_t *sizes,
                   const int32_t *const *ints, void *const *slots, int n_slots, int32_t *failed) {
    if (n_steps < 0 || n_slots < 0) return TPF_EBADARG;
    for (int k = 0; k < n_steps; k++) {
        const int32_t *h = ints[k];
        int n_instr = h[0], n_regs = h[1], n_in = h[2], n_out = h[3], n_red = h[4];
        if (n_in < 0 || n_out < 0 || n_red < 0) { *failed = k; return TPF_EBADARG; }
        const int32_t *in_slot = h + 5, *out_slot = in_slot + n_in, *out_reg = out_slot + n_out;
        const int32_t *red_op = out_reg + n_out, *red_reg = red_op + n_red, *red_slot = red_reg + n_red;
        int total = n_in + n_out + n_red;
        void *stack[EXEC_STACK];
        void **p = total <= EXEC_STACK ? stack : malloc(sizeof(void *) * (size_t)total);
        if (!p) { *failed = k; return TPF_ENOMEM; }
        int st = TPF_OK;
        for (int i = 0; i < total && st == TPF_OK; i++) {
            int s = i < n_in ? in_slot[i] : i < n_in + n_out ? out_slot[i - n_in] : red_slot[i - n_in - n_out];
            if (s < 0 || s >= n_slots || !slots[s]) st = TPF_EBADARG;
            else p[i] = slots[s];
        }
        if (st == TPF_OK)
            st = tpf_fused_eval_reduce(programs[k], params[k], n_instr, n_regs, reg_dtypes[k], (const void *const *)p,
                                       periods[k], n_in, p + n_in, out_reg, n_out, red_op, red_reg, p + n_in + n_out,
                                       n_red, sizes[k]);
        if (p != stack) free(p);
        if (st != TPF_OK) { *failed = k; return st; }
    }
    return TPF_OK;
}
