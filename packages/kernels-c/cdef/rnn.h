int tpf_lstm_cell(int dt, int64_t batch, int64_t units, const void *z, const void *c, void *h_out, void *c_out);
int tpf_lstm_cell_grad(int dt, int64_t batch, int64_t units, const void *z, const void *c, const void *c_new, const void *gh, const void *gc, void *dz, void *dc);
int tpf_gru_cell(int dt, int64_t batch, int64_t units, int reset_after, const void *xw, const void *hu, const void *h, void *h_out);
int tpf_gru_cell_grad(int dt, int64_t batch, int64_t units, int reset_after, const void *xw, const void *hu, const void *h, const void *gout, void *dxw, void *dhu, void *dh);
