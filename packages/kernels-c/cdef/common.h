int tpf_set_num_threads(int n);
int tpf_get_num_threads(void);
int tpf_set_ftz(int on);
int tpf_get_ftz(void);
const char *tpf_build_info(void);
