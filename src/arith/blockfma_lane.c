/* One output lane of a block-FMA group through the reference step: the
 * fallback that the SSE2/AVX2 group kernels (blockfma_sse2.c,
 * blockfma_avx2.c) and the dispatcher (blockfma_gemm.c) share. */
#include "blockfma_impl.h"

#define NJ KCS_BFMA_NJ

double kcs_bfma_lane_ref(const kcs_bfma_ctx *g, double c, const double *a, const double *b,
                         int F)
{
    double bl[64];
    for (int kk = 0; kk < F; kk++)
        bl[kk] = b[kk * NJ];
    return kcs_blockfma_step(g->p, c, a, bl, F);
}
