int tpf_fused_eval(const int32_t *program, const double *params, int n_instr, int n_regs, const int32_t *reg_dtype,
                   const void *const *inputs, const uint8_t *input_is_scalar, int n_inputs,
                   void *const *outputs, const int32_t *out_regs, int n_outputs, int64_t n);
int tpf_fused_eval_reduce(const int32_t *program, const double *params, int n_instr, int n_regs,
                          const int32_t *reg_dtype, const void *const *inputs, const int64_t *input_period,
                          int n_inputs, void *const *outputs, const int32_t *out_regs, int n_outputs,
                          const int32_t *red_ops, const int32_t *red_regs, void *const *red_out, int n_red,
                          int64_t n);
int tpfgen_register(const int32_t *program, int n_instr, int n_regs, const int32_t *reg_dtype,
                    const int64_t *input_period, int n_inputs, const int32_t *out_regs, int n_outputs,
                    const int32_t *red_regs, int n_red, void *fn);
int tpfgen_enable(int on);
int64_t tpfgen_calls(void);
