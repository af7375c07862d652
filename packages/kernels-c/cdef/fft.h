int tpf_fft(int dt, int inverse, int64_t outer, int64_t n, int64_t inner, const void *x, void *out);
int tpf_rfft(int dt, int64_t outer, int64_t n, int64_t inner, const void *x, void *out);
int tpf_irfft(int dt, int64_t outer, int64_t n, int64_t inner, const void *x, void *out);
