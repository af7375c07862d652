int tpf_ctc_loss(int dt, const void *logits, const void *labels_, const void *label_len_,
                 const void *logit_len_, int64_t T, int64_t B, int64_t C, int64_t L, int64_t blank,
                 void *loss, void *grad, int64_t *bad);
