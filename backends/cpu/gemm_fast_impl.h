/* Shared declarations of gemm_fast.c and its per-ISA kernels. */
#ifndef KCS_GEMM_FAST_IMPL_H
#define KCS_GEMM_FAST_IMPL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format_fast.h"

enum { W = 16, R = 4 };

/* The model's order for one output: how the k terms are grouped. */
typedef struct plan {
    int kind;     /* 0 sequential, 1 pairwise, 2 chunks */
    size_t chunk; /* chunks: length */
} plan;

typedef struct f32_job {
    const float *A; /* m x k, rows padded to a multiple of R */
    const float *B; /* k x ldb: columns padded to a multiple of W, or ldb = n < W
                     * (a row's W lanes run into the next rows'; W more after the last) */
    size_t k, ldb;
    const uint32_t *order; /* NULL, or the order of the k terms (sequential only) */
} f32_job;

typedef struct nar_job {
    const double *A;
    const double *B;
    size_t k, ldb;
    const uint32_t *order; /* NULL, or the order of the k terms (sequential only) */
    uint64_t e_lo;       /* exponent field of 2^emin */
    uint64_t m_off;      /* (53 - p) << 52 */
    double maxf;         /* max finite */
    int sums_exact;      /* p <= 24: a sum of two narrow values needs no
                          * rounding to odd (gemm_fast_kern.h, nar_add_nn) */
} nar_job;

typedef void (*f32_block_fn)(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                             float out[R][W]);
typedef void (*nar_block_fn)(const nar_job *J, const plan *pl, size_t i0, size_t j0,
                             double out[R][W]);

void kcs_gf_f32_block_base(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                           float out[R][W]);
void kcs_gf_nar_block_base(const nar_job *J, const plan *pl, size_t i0, size_t j0,
                           double out[R][W]);
/* NULL where the compiler or target has no AVX2 copy */
f32_block_fn kcs_gf_f32_block_avx2(void);
nar_block_fn kcs_gf_nar_block_avx2(void);
f32_block_fn kcs_gf_f32_block_avx512(void);
nar_block_fn kcs_gf_nar_block_avx512(void);
/* bf16 (fp16 = 0) or fp16 accumulators in float lanes, inputs that are
 * fp32 values and not NaN (gemm_fast_n32_avx512.c); NULL without AVX-512 */
typedef void (*n32_block_fn)(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                             double out[R][W]);
n32_block_fn kcs_gf_n32_block_avx512(int fp16);

#endif
