int tpf_reduce(int op, int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner);
int tpf_argreduce(int op, int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner);
