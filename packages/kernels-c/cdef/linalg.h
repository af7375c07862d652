int tpf_lu(int dt, int64_t batch, int64_t n, void *a, void *piv, void *info);
int tpf_lu_solve(int dt, int trans, int64_t batch, int64_t n, int64_t nrhs, const void *lu, const void *piv,
                 void *b);
int tpf_lu_inverse(int dt, int64_t batch, int64_t n, void *lu, const void *piv);
int tpf_lu_det(int dt, int64_t batch, int64_t n, const void *lu, const void *piv, void *det, void *sign,
               void *logabs);
int tpf_cholesky(int dt, int64_t batch, int64_t n, void *a, void *info);
int tpf_triangular_solve(int dt, int lower, int trans, int64_t batch, int64_t n, int64_t nrhs, const void *a,
                         int64_t a_bstride, void *b);
