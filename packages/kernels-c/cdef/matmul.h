int tpf_matmul(int dt, int ta, int tb, int64_t batch, int64_t m, int64_t n, int64_t k,
               const void *a, int64_t a_bstride, const void *b, int64_t b_bstride, void *out);
int tpf_blas_set_num_threads(int n);
