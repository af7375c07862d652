int tpf_binary_flat(int op, int dt, const void *a, int a_scalar, const void *b, int b_scalar,
                    void *out, int64_t n);
int tpf_binary_strided(int op, int dt, int ndim, const int64_t *shape,
                       const void *a, const int64_t *astr, const void *b, const int64_t *bstr,
                       void *out);
int tpf_unary(int op, int dt, const void *x, void *out, int64_t n, double param);
