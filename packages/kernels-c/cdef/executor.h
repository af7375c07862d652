int tpf_exec_fused(int n_steps, const int32_t *const *programs, const double *const *params,
                   const int32_t *const *reg_dtypes, const int64_t *const *periods, const int64_t *sizes,
                   const int32_t *const *ints, void *const *slots, int n_slots, int32_t *failed);
