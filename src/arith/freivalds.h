/* Batched Freivalds verification of a claimed GEMM C ~= A*B with k random
 * probe vectors at once and a per-row threshold derived from the declared
 * accumulator precision (not measured off the candidate). Derivation,
 * citations and the failure-probability formula: the comment block at the
 * top of freivalds.c. */
#ifndef KCS_FREIVALDS_H
#define KCS_FREIVALDS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef enum kcs_fv_mode {
    KCS_FV_RIGOROUS = 0,  /* componentwise worst case: no conforming GEMM fails */
    KCS_FV_PROBABILISTIC, /* Higham-Mary rounding model + Rademacher probes */
} kcs_fv_mode;

#define KCS_FV_MAX_PROBES 256

typedef struct kcs_fv_params {
    kcs_fv_mode mode;
    int probes;          /* k: columns of R, 1..KCS_FV_MAX_PROBES */
    uint64_t seed;       /* R: Philox4x32-10 keyed by (seed, stream, "FREI") */
    uint64_t stream;     /* e.g. the case id, so each check draws fresh probes */
    double u_acc;        /* unit roundoff of the GEMM's accumulation (fp32: 2^-24) */
    double u_out;        /* rounding of the accumulator into the stored output
                          * (0 when the output format is the accumulator's) */
    double eta_acc;      /* absolute error an accumulation rounding can make by
                          * underflow: half the accumulator's smallest subnormal
                          * (fp32: 2^-150), its smallest normal if it flushes */
    double eta_out;      /* the same for the output rounding (fp16: 2^-25) */
    long reduction_len;  /* length of the reduction; 0 means kk */
    double fail_prob;    /* probabilistic: bound on the probability that a
                          * conforming GEMM fails one call; 0 means 1e-9 */
    int threads;         /* 0: all online CPUs */
    bool portable_kernels; /* skip the x86-64-v4 kernels (same results; for tests) */
    int device_kernel;   /* the device verifiers' terms kernels: 0 the tiled ones (v2,
                          * backends/cuda/freivalds_tiled.cuh), 1 the per-row ones of
                          * the first device run (v1, kept for side-by-side timing);
                          * the same terms up to summation order either way */
} kcs_fv_params;

/* Defaults for an fp32-accumulating, fp32-output GEMM, rigorous, k = 10. */
void kcs_fv_params_default(kcs_fv_params *p);
/* "rigorous" / "probabilistic" (also "rig" / "prob"). */
int kcs_fv_mode_parse(const char *s, kcs_fv_mode *mode_p);
/* A contract's oracle string "freivalds[:k[:mode]]" (defaults k = 10,
 * rigorous): sets p->probes and p->mode; 0 or KCS_E_INVAL. */
int kcs_fv_oracle_parse(const char *s, kcs_fv_params *p, kcs_error *err);
const char *kcs_fv_mode_name(kcs_fv_mode mode);

typedef struct kcs_fv_result {
    bool pass;         /* every row: max_j |r_ij| <= T_i (NaN residual fails) */
    double tau;        /* max over rows of max_j |r_ij| / T_i (0/0 = 0) */
    long worst_row;
    int worst_probe;
    double lambda;     /* probabilistic multiplier; 0 in rigorous mode */
    double seconds;    /* wall time of the call */
} kcs_fv_result;

/* Optional per-row/per-probe outputs; any pointer may be NULL. */
typedef struct kcs_fv_detail {
    double *row_ratio;  /* m: max_j |r_ij| / T_i */
    double *row_thresh; /* m: T_i of p->mode (the same for every probe: |R| = 1) */
    double *row_thresh_rig;  /* m: T_i of rigorous mode, whatever p->mode is */
    double *row_thresh_prob; /* m: T_i of probabilistic mode (same data, same pass) */
    double *row_resid;  /* m: max_j |r_ij| */
    double *resid;      /* m*k row-major: r_ij = (A(BR))_ij - (CR)_ij */
    double *cr;         /* m*k row-major: (CR)_ij, for fixed-threshold checks */
} kcs_fv_detail;

/* Verify C (m x n) against A (m x kk) times B (kk x n); all row-major,
 * contiguous fp32 (bf16/fp16 data as their exact fp32 values). Streams B
 * once, then A and C once (threads over rows), all arithmetic in fp64. */
int kcs_freivalds_verify(const float *A, const float *B, const float *C, long m, long kk,
                         long n, const kcs_fv_params *p, const kcs_fv_detail *detail,
                         kcs_fv_result *res_p, kcs_error *err);

/* The argument checks of kcs_freivalds_verify (also used by the device
 * verifiers, backends/freivalds_device.h): 0 or KCS_E_INVAL. */
int kcs_freivalds_check_args(const void *A, const void *B, const void *C, long m, long kk,
                             long n, const kcs_fv_params *p, const void *res_p, kcs_error *err);

/* Thresholds and verdict from per-row terms computed elsewhere (the CUDA /
 * HIP kernels in backends/{cuda,hip}/freivalds.*), all fp64, row-major:
 * ya[i*k+j] = (A(BR))_ij, yc[i*k+j] = (CR)_ij, sab[i] = (|A| beta)_i with
 * beta_p = sum_l |B_pl|, na2[i] = |a_i|_2^2, sc[i] = sum_l |C_il|,
 * nc2[i] = |c_i|_2^2, nb2 = |B|_F^2, with R = kcs_freivalds_probes(p->seed,
 * p->stream, n, p->probes). Any summation order is allowed: the check-error
 * terms hold for all of them. */
int kcs_freivalds_finish(const double *ya, const double *yc, const double *sab,
                         const double *na2, const double *sc, const double *nc2, double nb2,
                         long m, long kk, long n, const kcs_fv_params *p,
                         const kcs_fv_detail *detail, kcs_fv_result *res_p, kcs_error *err);

/* The probes both use: Rt[j*n + l] = R_lj in {-1, +1}. */
void kcs_freivalds_probes(uint64_t seed, uint64_t stream, long n, int k, double *Rt);

/* lambda for probabilistic mode: sqrt(2 ln(4 m k / fail_prob)). */
double kcs_freivalds_lambda(long m, int k, double fail_prob);

/* The fixed-threshold criterion of the paper author's harness on the same
 * residuals: column j passes when max_i |r_ij| <= atol + rtol * max_i |(CR)_ij|.
 * *ratio_p = max_j of max_i|r_ij| / (atol + rtol max_i|(CR)_ij|). */
void kcs_freivalds_fixed(const double *resid, const double *cr, long m, int k, double atol,
                         double rtol, bool *pass_p, double *ratio_p);

/* `kcs bench freivalds` (src/cli/bench_freivalds.c). */
int kcs_bench_freivalds(int argc, char **argv);

#endif
