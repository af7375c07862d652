/* The caching allocator behind the CPU backend's large tensor buffers.
 *
 * A fresh buffer of a megabyte comes from mmap and page-faults on first touch (about 250
 * faults, 0.1-0.2 ms, inside the kernel that first writes it); a training step allocates
 * the same sizes every step.  Freed buffers are kept in free lists by size class (four
 * classes per power of two: at most 25% slack) and handed out again, up to a cap on the
 * bytes kept; past the cap a freed buffer goes back to the system.  Buffers are 64-byte
 * aligned; a 64-byte header in front of each records its class.
 *
 * Not kernels (the tpfmem_ prefix keeps them out of the backends' kernel table): the
 * CPU backend calls them for buffers of at least TPFMEM_MIN bytes (cpu.py).  Thread-safe
 * (a buffer may be freed by the garbage collector of any thread).
 */
#include "tpf.h"
#include <pthread.h>
#include <stdlib.h>

#define HDR 64
#define NCLASS 256
#define MAGIC 0x7466616c6c6f6321ULL

typedef struct { uint64_t magic; int64_t cls; void *next; } hdr_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *free_list[NCLASS];
static int64_t cached_bytes = 0, in_use = 0, peak = 0, hits = 0, misses = 0;
static int64_t cache_limit = (int64_t)256 << 20;

/* class of n bytes: 4 classes per power of two; class size >= n */
static int size_class(int64_t n) {
    if (n <= 64) return 0;
    int e = 63 - __builtin_clzll((unsigned long long)(n - 1));   /* 2**e < n <= 2**(e+1) */
    int64_t step = ((int64_t)1 << e) >> 2;
    int64_t k = (n - ((int64_t)1 << e) + step - 1) / step;       /* 1..4 */
    return e * 4 + (int)k - 1;
}

static int64_t class_bytes(int c) {
    if (c == 0) return 64;
    int e = (c + 1) / 4, k = (c + 1) % 4;
    if (k == 0) { e -= 1; k = 4; }
    return ((int64_t)1 << e) + (int64_t)k * (((int64_t)1 << e) >> 2);
}

void *tpfmem_alloc(int64_t nbytes) {
    if (nbytes < 0) return NULL;
    int c = size_class(nbytes > 0 ? nbytes : 1);
    if (c >= NCLASS) return NULL;
    int64_t sz = class_bytes(c);
    hdr_t *h = NULL;
    pthread_mutex_lock(&lock);
    if (free_list[c]) {
        h = (hdr_t *)free_list[c];
        free_list[c] = h->next;
        cached_bytes -= sz;
        hits++;
    } else {
        misses++;
    }
    in_use += sz;
    if (in_use > peak) peak = in_use;
    pthread_mutex_unlock(&lock);
    if (!h) {
        void *p = NULL;
        if (posix_memalign(&p, 64, (size_t)(sz + HDR)) != 0) {
            pthread_mutex_lock(&lock);
            in_use -= sz;
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        h = (hdr_t *)p;
        h->magic = MAGIC;
        h->cls = c;
    }
    h->next = NULL;
    return (char *)h + HDR;
}

void tpfmem_free(void *p) {
    if (!p) return;
    hdr_t *h = (hdr_t *)((char *)p - HDR);
    if (h->magic != MAGIC) abort();   /* not ours: freeing it would corrupt the heap */
    int64_t sz = class_bytes((int)h->cls);
    int keep;
    pthread_mutex_lock(&lock);
    in_use -= sz;
    keep = cached_bytes + sz <= cache_limit;
    if (keep) {
        h->next = free_list[h->cls];
        free_list[h->cls] = h;
        cached_bytes += sz;
    }
    pthread_mutex_unlock(&lock);
    if (!keep) free(h);
}

/* Return every cached buffer to the system. */
void tpfmem_trim(void) {
    void *lists[NCLASS];
    pthread_mutex_lock(&lock);
    memcpy(lists, free_list, sizeof lists);
    memset(free_list, 0, sizeof free_list);
    cached_bytes = 0;
    pthread_mutex_unlock(&lock);
    for (int c = 0; c < NCLASS; c++)
        for (hdr_t *h = lists[c]; h;) { hdr_t *nx = h->next; free(h); h = nx; }
}

/* The most bytes kept cached (0: none); returns the previous limit, -1 for a negative one. */
int64_t tpfmem_set_cache_limit(int64_t nbytes) {
    if (nbytes < 0) return -1;
    pthread_mutex_lock(&lock);
    int64_t old = cache_limit;
    cache_limit = nbytes;
    pthread_mutex_unlock(&lock);
    if (cached_bytes > nbytes) tpfmem_trim();
    return old;
}

/* stats[0..4]: bytes in use, peak bytes in use, bytes cached, allocations served from the
 * cache, allocations from the system.  reset_peak: the peak restarts from the bytes in use. */
void tpfmem_stats(int64_t *stats, int reset_peak) {
    pthread_mutex_lock(&lock);
    stats[0] = in_use; stats[1] = peak; stats[2] = cached_bytes; stats[3] = hits; stats[4] = misses;
    if (reset_peak) peak = in_use;
    pthread_mutex_unlock(&lock);
}
