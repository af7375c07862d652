void *tpfmem_alloc(int64_t nbytes);
void tpfmem_free(void *p);
void tpfmem_trim(void);
int64_t tpfmem_set_cache_limit(int64_t nbytes);
void tpfmem_stats(int64_t *stats, int reset_peak);
