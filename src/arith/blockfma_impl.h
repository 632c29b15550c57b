/* Internal to the CPU backend's block-FMA GEMM (not a public header):
 * shared by blockfma.c (the reference step), blockfma_gemm.c (the driver)
 * and the vector kernels
 * blockfma_sse2.c / blockfma_avx2.c, both instantiated from
 * blockfma_kern.h. */
#ifndef KCS_CPU_BLOCKFMA_IMPL_H
#define KCS_CPU_BLOCKFMA_IMPL_H

#include <math.h>
#include <stdbool.h>
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
    int cemin;   /* decoded kernels: e(c) clamp (-126; -14 for an fp16 accumulator) */
    int czexp;   /* decoded kernels: e(c) for c = 0 (-126, or KCS_BFMA_ZSENT) */
} kcs_bfma_ctx;

/* Decoded panels (the integer kernels): an input x of format f is
 * m * 2^(e - (p_f - 1)) with m a signed integer, |m| < 2^p_f, and
 * e = max(floor(log2|x|), emin_f); a zero has m = 0 and e = -126 under
 * zero_exp = min, else KCS_BFMA_ZSENT (far below any product exponent, so
 * a product with a zero operand never sets the block exponent). B's m is
 * stored shifted left by s0 = 23 + neab - (p_a - 1) - (p_b - 1) >= 0, so a
 * product m_a * m_b' is the term t/q at the block exponent E = e_a + e_b
 * and t/q = trunc(m_a * m_b' / 2^(E - e_a - e_b)) in general. */
#define KCS_BFMA_ZSENT (-(1 << 20))

/* Advance NJ accumulators of each of R rows (c: R x NJ) over all blocks
 * with the decoded panels: am, ae (row r at + r * as), bm, be ([k][lane]);
 * a, b: the same panels as doubles (the reference step for lanes whose c is
 * NaN/Inf); amx: each block's largest e_a (row r at + r * nb), bmx: each
 * block's largest e_b per lane ([block][lane]). */
typedef void (*kcs_bfma_igroup_fn)(const kcs_bfma_ctx *g, double *c, const int32_t *am,
                                   const int32_t *ae, const double *a, int64_t as,
                                   const int32_t *bm, const int32_t *be, const double *b,
                                   const int32_t *amx, const int32_t *bmx);

/* The decoded kernels of a profile for 1 and 4 rows (AVX2 only), or false. */
bool kcs_bfma_pick_int(const kcs_profile_params *p, kcs_bfma_igroup_fn *one,
                       kcs_bfma_igroup_fn *four);

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
