int tpf_concat(int64_t elsize, int n, void **srcs, const int64_t *widths, int64_t outer, void *dst);
int tpf_split(int64_t elsize, int n, const void *src, const int64_t *widths, int64_t outer, void **dsts);
int tpf_pad(int64_t elsize, int mode, int ndim, const int64_t *in_shape, const int64_t *before,
            const int64_t *out_shape, const void *src, void *dst, const void *value);
int tpf_iota(int dt, double start, double delta, int64_t istart, int64_t idelta, void *out, int64_t n);
int tpf_linspace(int dt, double start, double stop, void *out, int64_t n);
