int tpf_resize(int method, int antialias, int dt, const void *in, void *out, int64_t b, int64_t ih, int64_t iw,
               int64_t c, int64_t oh, int64_t ow);
int tpf_resize_grad(int method, int antialias, int dt, const void *g, void *gin, int64_t b, int64_t ih, int64_t iw,
                    int64_t c, int64_t oh, int64_t ow);
int tpf_rgb_to_hsv(int dt, const void *in, void *out, int64_t n);
int tpf_hsv_to_rgb(int dt, const void *in, void *out, int64_t n);
int tpf_colour_grad(int inverse, int dt, const void *x, const void *g, void *gx, int64_t n);
