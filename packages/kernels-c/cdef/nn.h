int tpf_softmax(int dt, int log_, const void *x, void *out, int64_t outer, int64_t r, int64_t inner);
int tpf_softmax_xent(int dt, const void *labels, const void *logits, void *loss, void *backprop,
                     int64_t outer, int64_t r, int64_t inner);
int tpf_sparse_softmax_xent(int dt, int label_dt, const void *labels, const void *logits, void *loss,
                            void *backprop, int64_t rows, int64_t r, int64_t *bad);
