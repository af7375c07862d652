int tpf_svd(int dt, int64_t batch, int64_t m, int64_t n, void *a, void *s, void *u, void *v, int full_matrices,
            int compute_uv, void *info);
int tpf_eigh(int dt, int64_t batch, int64_t n, void *a, void *w, int compute_v, void *info);
int tpf_qr(int dt, int64_t batch, int64_t m, int64_t n, void *a, void *q, void *r, int full_matrices);
int tpf_lu_perm(int64_t batch, int64_t n, const void *piv, void *perm, int perm_dt);
int tpf_expm(int dt, int64_t batch, int64_t n, const void *a, void *out);
