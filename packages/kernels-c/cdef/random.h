int tpf_philox4x32_10(const uint32_t *ctr, const uint32_t *key, uint32_t *out, int64_t nblocks);
int tpf_random_uniform(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double lo, double hi);
int tpf_random_uniform_int(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, int64_t lo, int64_t hi);
int tpf_random_normal(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double mean, double stddev);
int tpf_random_truncated_normal(int dt, void *out, int64_t n, uint64_t key, uint64_t stream,
                                double mean, double stddev);
int tpf_random_dropout_mask(int dt, void *out, int64_t n, uint64_t key, uint64_t stream, double rate);
int tpf_random_categorical(int dt, const void *logits, int64_t batch, int64_t classes, int64_t num_samples,
                           int out_dt, void *out, uint64_t key, uint64_t stream, int64_t *bad_row);
int tpf_random_shuffle(int64_t rowbytes, int64_t n, const void *src, void *dst, void *perm_buf,
                       uint64_t key, uint64_t stream);
