#ifndef TPF_ELEMENTWISE_H
#define TPF_ELEMENTWISE_H
/* op codes: the rows of elementwise.def in order (tapeflow.kernels.BINARY_OPS / UNARY_OPS
 * read the same file) */
enum {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE) TPF_BIN_##NAME,
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE)
#include "elementwise.def"
    TPF_BIN_NOPS
};
enum {
#define TPF_BINARY(name, NAME, FK, FE, IK, IE, BK, BE)
#define TPF_UNARY(name, NAME, FK, FE, IK, IE, BK, BE) TPF_UN_##NAME,
#include "elementwise.def"
    TPF_UN_NOPS
};
#endif
