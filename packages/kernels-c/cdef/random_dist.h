int tpf_random_gamma(int dt, const void *alpha, int64_t nalpha, int64_t nsamples, void *out,
                     uint64_t key, uint64_t stream);
int tpf_random_gamma_grad(int dt, const void *alpha, int64_t nalpha, const void *x, int64_t n, void *out);
int tpf_random_poisson(int dt, const void *rate, int64_t nrate, int64_t nsamples, int out_dt, void *out,
                       uint64_t key, uint64_t stream);
int tpf_random_binomial(int dt, const void *counts, const void *probs, int64_t n, int out_dt, void *out,
                        uint64_t key, uint64_t stream);
