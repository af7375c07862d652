int tpf_lstm_cell(int dt, int64_t batch, int64_t units, const void *z, const void *c, void *h_out, void *c_out);
