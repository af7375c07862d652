/* Parallel loops of the index kernels (index*.c).
 *
 * PFOR runs `for (int64_t VAR = 0; VAR < N; VAR++) BODY` on `nt` threads (a
 * variable of that name must be in scope), and as a plain loop when nt <= 1:
 * entering OpenMP costs about a microsecond even for one thread, which would
 * dominate the small tensors that most shape ops see.
 */
#ifndef TPF_INDEX_PAR_H
#define TPF_INDEX_PAR_H
#include "tpf.h"

#define PFOR(VAR, N, ...)                                                            \
    do {                                                                             \
        if (nt > 1) {                                                                \
            _Pragma("omp parallel for num_threads(nt) schedule(static)")             \
            for (int64_t VAR = 0; VAR < (N); VAR++) { __VA_ARGS__ }                  \
        } else {                                                                     \
            for (int64_t VAR = 0; VAR < (N); VAR++) { __VA_ARGS__ }                  \
        }                                                                            \
    } while (0)

#endif
