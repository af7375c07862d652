/* Batched matrix multiply: float32/float64 through OpenBLAS's cblas,
 * integer dtypes through a plain loop.  out[b] = op(a[b]) @ op(b[b]) with
 * op = transpose when ta/tb is set; a batch stride of 0 broadcasts an operand. */
#include "tpf.h"
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>

/* ---- OpenBLAS's parallel jobs run on our OpenMP threads -------------------------------
 * OpenBLAS (the pthreads build scipy-openblas32 ships) hands each multi-threaded call's
 * jobs to a registered callback instead of its own thread pool.  Running them here:
 * - sets flush-to-zero in every thread that computes a GEMM block (tpf_fp_enter, so
 *   tf.config's switch reaches BLAS, and turning it off restores IEEE denormals: OpenBLAS's
 *   own workers kept whatever mode they started with);
 * - keeps one pool of threads (OpenMP's) instead of two pools oversubscribing the cores.
 * The jobs of one call wait for each other (level-3 GEMM synchronises its blocks), so all
 * of them must run at once: when OpenMP gives fewer threads than jobs (a call from inside
 * a parallel region, OMP_THREAD_LIMIT, dynamic adjustment), the rest run on threads
 * started for the call. */
typedef void (*tpf_dojob_fn)(int thread_num, void *jobdata, int dojob_data);
typedef void (*tpf_threads_fn)(int sync, tpf_dojob_fn dojob, int numjobs, size_t elsize,
                               void *jobdata, int dojob_data);
void scipy_openblas_set_threads_callback_function(tpf_threads_fn callback);

typedef struct { tpf_dojob_fn dojob; int i; void *job; int data; } tpf_blas_job;

static void *blas_job_thread(void *p) {
    tpf_blas_job *j = (tpf_blas_job *)p;
    tpf_fp_enter();
    j->dojob(j->i, j->job, j->data);
    return NULL;
}

static void blas_threads(int sync, tpf_dojob_fn dojob, int numjobs, size_t elsize,
                         void *jobdata, int dojob_data) {
    (void)sync;   /* every job is run before returning */
    if (numjobs <= 1) {
        tpf_fp_enter();
        for (int i = 0; i < numjobs; i++) dojob(i, jobdata, dojob_data);
        return;
    }
#ifdef _OPENMP
    #pragma omp parallel num_threads(numjobs)
    {
        tpf_fp_enter();
        int got = omp_get_num_threads(), me = omp_get_thread_num();
        tpf_blas_job *extra = NULL;
        pthread_t *tids = NULL;
        int started = 0;
        if (me == 0 && got < numjobs) {     /* the jobs OpenMP has no thread for */
            extra = malloc(sizeof(tpf_blas_job) * (size_t)numjobs);
            tids = malloc(sizeof(pthread_t) * (size_t)numjobs);
            for (int i = got; i < numjobs && extra && tids; i++) {
                extra[i] = (tpf_blas_job){dojob, i, (char *)jobdata + (size_t)i * elsize, dojob_data};
                if (pthread_create(&tids[i], NULL, blas_job_thread, &extra[i]) == 0) started = i - got + 1;
                else abort();   /* the other jobs would wait for this one forever */
            }
            if (!extra || !tids) abort();
        }
        dojob(me, (char *)jobdata + (size_t)me * elsize, dojob_data);
        for (int i = got; i < got + started; i++) pthread_join(tids[i], NULL);
        free(extra);
        free(tids);
    }
#else
    tpf_blas_job *extra = malloc(sizeof(tpf_blas_job) * (size_t)numjobs);
    pthread_t *tids = malloc(sizeof(pthread_t) * (size_t)numjobs);
    if (!extra || !tids) abort();
    tpf_fp_enter();
    for (int i = 1; i < numjobs; i++) {
        extra[i] = (tpf_blas_job){dojob, i, (char *)jobdata + (size_t)i * elsize, dojob_data};
        if (pthread_create(&tids[i], NULL, blas_job_thread, &extra[i]) != 0) abort();
    }
    dojob(0, jobdata, dojob_data);
    for (int i = 1; i < numjobs; i++) pthread_join(tids[i], NULL);
    free(extra);
    free(tids);
#endif
}

__attribute__((constructor)) static void tpf_blas_install(void) {
    scipy_openblas_set_threads_callback_function(blas_threads);
}

/* Integer matmul wraps modulo 2**bits like the element-wise integer ops: products
 * and sums run in unsigned arithmetic (W), which C defines to wrap.  The j loop is
 * innermost so that rows of B (and C) stream contiguously when B is not transposed. */
#define IMM(T, W)                                                                     \
static void imm_##T(int ta, int tb, int64_t m, int64_t n, int64_t k,                  \
                    const T *A, const T *B, T *C) {                                   \
    int64_t sai = ta ? 1 : k, sap = ta ? m : 1, sbp = tb ? 1 : n, sbj = tb ? k : 1;   \
    int nt = TPF_NTHREADS(m * n * k);                                                 \
    _Pragma("omp parallel for num_threads(nt) schedule(static)")                     \
    for (int64_t i = 0; i < m; i++) {                                                 \
        W row[256];                                                                   \
        for (int64_t j0 = 0; j0 < n; j0 += 256) {                                     \
            int64_t nb = n - j0 < 256 ? n - j0 : 256;                                 \
            for (int64_t j = 0; j < nb; j++) row[j] = 0;                              \
            for (int64_t p = 0; p < k; p++) {                                         \
                W a = (W)A[i * sai + p * sap];                                        \
                const T *b = B + p * sbp + j0 * sbj;                                  \
                for (int64_t j = 0; j < nb; j++) row[j] += a * (W)b[j * sbj];         \
            }                                                                         \
            for (int64_t j = 0; j < nb; j++) C[i * n + j0 + j] = (T)row[j];           \
        }                                                                             \
    }                                                                                 \
}
IMM(int8_t, uint32_t) IMM(uint8_t, uint32_t) IMM(int16_t, uint32_t) IMM(int32_t, uint32_t) IMM(int64_t, uint64_t)

int tpf_matmul(int dt, int ta, int tb, int64_t batch, int64_t m, int64_t n, int64_t k,
               const void *a, int64_t a_bstride, const void *b, int64_t b_bstride, void *out) {
    if (batch < 0 || m < 0 || n < 0 || k < 0) return TPF_EBADSIZE;
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return TPF_EBADSIZE;
    size_t es = tpf_dtype_size(dt);
    if (!es || dt == TPF_F16 || dt == TPF_BF16 || dt == TPF_BOOL) return TPF_EBADDTYPE;
    if (m * n == 0 || batch == 0) return TPF_OK;
    if (k == 0) { memset(out, 0, (size_t)(batch * m * n) * es); return TPF_OK; }
    tpf_fp_enter();
    for (int64_t i = 0; i < batch; i++) {
        const char *A = (const char *)a + i * a_bstride * es;
        const char *B = (const char *)b + i * b_bstride * es;
        char *C = (char *)out + i * m * n * es;
        int lda = ta ? (int)m : (int)k, ldb = tb ? (int)k : (int)n;
        enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
        switch (dt) {
        case TPF_F32:
            scipy_cblas_sgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)k, 1.0f,
                              (const float *)A, lda, (const float *)B, ldb, 0.0f, (float *)C, (int)n);
            break;
        case TPF_F64:
            scipy_cblas_dgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)k, 1.0,
                              (const double *)A, lda, (const double *)B, ldb, 0.0, (double *)C, (int)n);
            break;
        case TPF_I8: imm_int8_t(ta, tb, m, n, k, (const void *)A, (const void *)B, (void *)C); break;
        case TPF_U8: imm_uint8_t(ta, tb, m, n, k, (const void *)A, (const void *)B, (void *)C); break;
        case TPF_I16: imm_int16_t(ta, tb, m, n, k, (const void *)A, (const void *)B, (void *)C); break;
        case TPF_I32: imm_int32_t(ta, tb, m, n, k, (const void *)A, (const void *)B, (void *)C); break;
        case TPF_I64: imm_int64_t(ta, tb, m, n, k, (const void *)A, (const void *)B, (void *)C); break;
        default: return TPF_EBADDTYPE;
        }
    }
    return TPF_OK;
}

int tpf_blas_set_num_threads(int n) { scipy_openblas_set_num_threads(n); return TPF_OK; }
