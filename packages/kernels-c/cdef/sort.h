int tpf_sort(int dt, const void *x, void *vals, void *idx, int idx_dt, int64_t outer, int64_t n, int descending,
             int want);
int tpf_top_k(int dt, const void *x, void *vals, void *idx, int idx_dt, int64_t outer, int64_t n, int64_t k);
int tpf_cumulative(int op, int dt, const void *x, void *out, int64_t outer, int64_t n, int64_t inner,
                   int exclusive, int reverse);
