int tpf_optim_update(int kind, int dt, int flags, void *var, void *s0, void *s1, void *s2, const void *grad,
                     int64_t n, double h0, double h1, double h2, double h3, double h4);
