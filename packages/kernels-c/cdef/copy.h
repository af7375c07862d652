int tpf_strided_copy(int64_t elsize, int ndim, const int64_t *shape,
                     const void *src, int64_t src_off, const int64_t *src_str,
                     void *dst, int64_t dst_off, const int64_t *dst_str);
int tpf_fill(int64_t elsize, const void *value, void *dst, int64_t n);
