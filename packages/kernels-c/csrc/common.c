#include "tpf.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#include <pmmintrin.h>
#endif

int tpf_num_threads = 0;
int tpf_max_threads = 1;
int tpf_ftz = 1;

__attribute__((constructor)) static void tpf_threads_init(void) {
#ifdef _OPENMP
    tpf_max_threads = omp_get_max_threads();
#endif
}

unsigned tpf_fp_set(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned int csr = _mm_getcsr();
    unsigned int want = tpf_ftz ? (csr | 0x8040) : (csr & ~0x8040u);
    if (want != csr) _mm_setcsr(want);
    return csr;
#else
    return 0;
#endif
}

void tpf_fp_restore(unsigned *saved) {
#if defined(__x86_64__) || defined(__i386__)
    if (_mm_getcsr() != *saved) _mm_setcsr(*saved);
#else
    (void)saved;
#endif
}

int tpf_set_num_threads(int n) {
    if (n < 0) return TPF_EBADARG;
    tpf_num_threads = n;
    return TPF_OK;
}

int tpf_get_num_threads(void) {
#ifdef _OPENMP
    return tpf_num_threads > 0 ? tpf_num_threads : tpf_max_threads;
#else
    return 1;
#endif
}

int tpf_set_ftz(int on) { tpf_ftz = on ? 1 : 0; return TPF_OK; }
int tpf_get_ftz(void) { return tpf_ftz; }
