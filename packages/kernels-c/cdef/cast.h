int tpf_cast(int src, const void *x, int dst, void *o, int64_t n);
