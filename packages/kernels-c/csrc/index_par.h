/* Parallel loops of the index kernels (index*.c): TPF_PFOR from tpf.h. */
#ifndef TPF_INDEX_PAR_H
#define TPF_INDEX_PAR_H
#include "tpf.h"

#define PFOR TPF_PFOR

#endif
