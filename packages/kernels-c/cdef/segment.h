int tpf_segment_reduce(int op, int dt, int lim_dt, int idx_dt, const void *data, const void *idx, void *out,
                       int64_t nidx, int64_t nseg, int64_t inner, int64_t *bad);
int tpf_scatter_nd_reduce(int op, int dt, int idx_dt, const void *idx, const void *upd, void *out,
                          int64_t n, int k, const int64_t *dims, int64_t inner, int64_t *bad);
