/* Internal to the CPU backend's block-FMA GEMM (not a public header):
 * shared by blockfma.c (the reference step), blockfma_gemm.c (the driver)
 * and the vector kernels
 * blockfma_sse2.c / blockfma_avx2.c, both instantiated from
 * blockfma_kern.h. */
#ifndef KCS_CPU_BLOCKFMA_IMPL_H
#define KCS_CPU_BLOCKFMA_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "profile.h"

#define KCS_BFMA_NJ 8 /* output columns (lanes) per group */

/* 2^e for -1022 <= e <= 1023. */
static inline double kcs_bfma_pow2i(int e)
{
    uint64_t b = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* e(x) = max(floor(log2|x|), emin), x finite and non-zero. */
static inline int kcs_bfma_exp_clamped(double x, int emin)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7FF);
    e = e ? e - 1023 : ilogb(x);
    return e < emin ? emin : e;
}

typedef struct kcs_bfma_ctx {
    const kcs_profile_params *p;
    int F, ob;
    double sck;  /* 2^(23 + neab): 1/q = 2^-E * sck */
    int64_t gridmask; /* exact path: the low 52 - ob significand bits */
    double maxp; /* largest finite d: (2 - 2^(1-ob)) * 2^127 */
    double czero; /* 2^-e(c) for c = 0: +Inf (no part in E) or 2^126 (zero_exp = min) */
    int64_t nb, kp; /* blocks along k; padded k */
} kcs_bfma_ctx;

/* Advance NJ accumulators c over all blocks: a, ia are the A row
 * (values, 2^-e or +Inf for 0), b, ib the packed B
 * group ([k][lane]). */
typedef void (*kcs_bfma_group_fn)(const kcs_bfma_ctx *g, double *c, const double *a,
                                  const double *ia, const double *b, const double *ib);

/* One lane through kcs_blockfma_step; b points at the lane in a packed block. */
double kcs_bfma_lane_ref(const kcs_bfma_ctx *g, double c, const double *a, const double *b,
                         int F);

/* The kernel for a profile, or NULL (no fast kernel, compiler or CPU). */
kcs_bfma_group_fn kcs_bfma_pick_sse2(const kcs_profile_params *p);
kcs_bfma_group_fn kcs_bfma_pick_avx2(const kcs_profile_params *p);

#endif
