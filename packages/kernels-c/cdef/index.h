int tpf_gather(int64_t elsize, int idx_dt, const void *params, const void *idx, void *out,
               int64_t batch, int64_t outer, int64_t axis_n, int64_t nidx, int64_t inner, int64_t *bad);
int tpf_scatter_add_axis(int dt, int idx_dt, const void *upd, const void *idx, void *out,
                         int64_t batch, int64_t outer, int64_t axis_n, int64_t nidx, int64_t inner,
                         int flags, int64_t *bad);
int tpf_gather_nd(int64_t elsize, int idx_dt, const void *params, const void *idx, void *out,
                  int64_t batch, int64_t nrest, int k, const int64_t *dims, int64_t inner, int64_t *bad);
int tpf_scatter_nd(int op, int dt, int idx_dt, const void *idx, const void *upd, void *out,
                   int64_t n, int k, const int64_t *dims, int64_t inner, int64_t *bad);
int tpf_one_hot(int64_t elsize, int idx_dt, const void *idx, const void *on, const void *off, void *out,
                int64_t outer, int64_t depth, int64_t inner);
int tpf_count_nonzero(int dt, const void *x, int64_t n, int64_t *count);
int tpf_where_indices(int dt, const void *x, int ndim, const int64_t *shape, int64_t n, void *out);
int tpf_select(int64_t elsize, int ndim, const int64_t *shape, const void *cond, const int64_t *cstr,
               const void *a, const int64_t *astr, const void *b, const int64_t *bstr, void *out);
