/* The block-FMA GEMM kernels at the baseline vector width (2 doubles: SSE2
 * on x86-64, generic vectors elsewhere). */
#define VW 2
#define KERN_PICK kcs_bfma_pick_sse2
#include "blockfma_kern.h"
