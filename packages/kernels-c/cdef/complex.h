int tpf_cbinary(int op, int dt, int nd, const int64_t *shape, const void *a, const int64_t *astr,
                const void *b, const int64_t *bstr, void *out);
int tpf_cunary(int op, int dt, const void *x, void *out, int64_t n);
int tpf_cpart(int op, int dt, const void *x, void *out, int64_t n);
int tpf_cmake(int dt, const void *re, const void *im, void *out, int64_t n);
int tpf_creduce_sum(int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner);
int tpf_cmatmul(int dt, int ta, int tb, int64_t batch, int64_t m, int64_t n, int64_t k,
                const void *a, int64_t a_bstride, const void *b, int64_t b_bstride, void *out);
