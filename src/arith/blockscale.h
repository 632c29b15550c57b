/* Block-scaled matrix units (NVIDIA Blackwell tcgen05.mma.block_scale):
 * D = C + sum_l (A[i][l] * SA[i][l/s]) * (B[l][j] * SB[l/s][j]) with narrow
 * elements (fp8 e4m3/e5m2, fp4 e2m1) and power-of-two (ue8m0) or e4m3
 * (ue4m3) block scales, s = 32 or 16 along k. docs/profiles.md gives the
 * model and its source (MMA-Sim); the element and scale codes here are
 * kept apart from format.h's kcs_format (they are not dtypes of a study). */
#ifndef KCS_BLOCKSCALE_H
#define KCS_BLOCKSCALE_H

#include "error.h"
#include "format.h"

#include <stdbool.h>
#include <stdint.h>

/* The narrow codes: one value per byte (fp4 in the low 4 bits). */
typedef enum kcs_bs_code {
    KCS_BS_FP4_E2M1 = 0, /* sign, 2 exponent bits (bias 1), 1 fraction bit; all finite */
    KCS_BS_UE8M0,        /* scale 2^(code - 127); code 255 is NaN */
    KCS_BS_UE4M3,        /* scale: an e4m3 (OCP FN) code with sign 0; 0x7F is NaN */
    KCS_BS_CODE_COUNT
} kcs_bs_code;

/* The value of a code (NaN where the code is NaN). */
double kcs_bs_decode(kcs_bs_code f, unsigned code);
/* The code of x, which must be a value of f (scales: non-negative); returns
 * false when x has no code. */
bool kcs_bs_encode(kcs_bs_code f, double x, unsigned *code);
const char *kcs_bs_code_name(kcs_bs_code f);

/* A block-scaled input scheme, named as dtype_in would name it. */
typedef struct kcs_bs_scheme {
    const char *name;   /* "mxfp8_e4m3", "mxfp4", "nvfp4", ... */
    bool fp4;           /* elements are fp4 e2m1 (else fp8 `elem`) */
    kcs_format elem;    /* fp8 element format (when !fp4) */
    kcs_bs_code scale;  /* KCS_BS_UE8M0 or KCS_BS_UE4M3 */
    int block;          /* s: elements per scale along k */
    int kinst;          /* the instruction's k: 32 (fp8), 64 (fp4) */
    const char *source;
} kcs_bs_scheme;

/* The scheme of a name; KCS_E_INVAL naming the known ones. */
int kcs_bs_scheme_lookup(const char *profile, const char *name, const kcs_bs_scheme **s_p,
                         kcs_error *err);
int kcs_bs_scheme_table(const kcs_bs_scheme **rows_p, int *n_p);

/* D = C + A*B through the block-scaled model: A m x k, SA m x k/s, B k x n,
 * SB k/s x n, C (fp32 values or NULL) and D m x n, row-major doubles holding
 * values (elements and scales decoded). k must be a multiple of the
 * scheme's kinst (KCS_E_INVAL otherwise). D holds fp32 values. */
int kcs_blockscaled_gemm(const kcs_bs_scheme *s, int64_t m, int64_t n, int64_t k,
                         const double *A, const double *SA, const double *B, const double *SB,
                         const double *C, double *D);
/* The same, the model written out term by term (the reference the fast
 * kcs_blockscaled_gemm is tested against, bit for bit). */
int kcs_blockscaled_gemm_ref(const kcs_bs_scheme *s, int64_t m, int64_t n, int64_t k,
                             const double *A, const double *SA, const double *B,
                             const double *SB, const double *C, double *D);

#endif
