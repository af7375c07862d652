int tpf_segment_reduce(int op, int dt, int lim_dt, int idx_dt, const void *data, const void *idx, void *out,
                       int64_t nidx, int64_t nseg, int64_t inner, int64_t *bad);
