/* CPU backend internals: reference kernels and op entry points (the
 * accumulator model and the summation schedules are src/arith/acc.h). */
#ifndef KCS_CPU_H
#define KCS_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "acc.h"
#include "backend.h"
#include "elementwise.h"

struct kcs_backend_ctx {
    char profile[32];
    int verbose;
};

typedef int (*kcs_cpu_op_fn)(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);

int kcs_cpu_gemm(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
/* nan=mask in the own kernels (nan_policy.c): whether it applies to the
 * call, and fn run on the call's inputs with NaN substituted. */
int kcs_cpu_nan_mask_applies(const kcs_backend_ctx *ctx, const kcs_call *call);
int kcs_cpu_nan_masked(kcs_backend_ctx *ctx, kcs_cpu_op_fn fn, const kcs_call *call,
                       kcs_error *err);
/* "defect:<name>" gemm variants (defect.c) */
int kcs_cpu_defect(const kcs_call *call, kcs_error *err);
/* the protocol and exceptional-value defects (defect_proto.c) */
int kcs_cpu_defect_proto_known(const char *name);
int kcs_cpu_defect_proto(const kcs_call *call, kcs_error *err);
/* The same with every sum on the accumulator model (the oracle of the fast
 * path the order-only gemm defects take: test_calib_gemm). */
int kcs_cpu_defect_proto_model(const kcs_call *call, kcs_error *err);
/* C-PRC-05's sweep: conforming "exp:<name>" and bad "defect:exp-<name>"
 * elementwise exps (defect_exp.c) */
int kcs_cpu_exp_variant_known(const char *variant);
int kcs_cpu_exp_variant(const kcs_call *call, kcs_error *err);
/* The own gemm of one batch entry: the accumulator model term by term
 * (gemm.c), and its vectorised fast paths (gemm_fast.c: fp32/bf16/fp16
 * accumulators, every schedule), bit-identical to the model; the fast one
 * returns 0 when it does not apply (the caller then runs the model). */
/* The atomic schedule's order is drawn per output tile of 4 rows x 16
 * columns (on a GPU the slices of a split-K reduction commit per tile, in
 * an order nobody controls): output (i, j) sums its k terms in the order
 * kcs_atomic_order(kcs_cpu_gemm_tile_seed(seed, i, j), k). */
enum { KCS_GEMM_TILE_M = 4, KCS_GEMM_TILE_N = 16 };
static inline uint64_t kcs_cpu_gemm_tile_seed(uint64_t seed, size_t i, size_t j)
{
    return seed ^ ((uint64_t)(i / KCS_GEMM_TILE_M) << 32) ^ (uint64_t)(j / KCS_GEMM_TILE_N);
}

/* Scratch buffers kept between calls (scratch.c): a fresh malloc of tens of
 * MB per call costs more in page faults than the arithmetic at narrow
 * shapes (m = n = 2, k = 2^20 packs B to 16 columns: 64 MB). take() hands
 * out the slot's buffer if it holds `bytes` (contents undefined), else a
 * new one (p NULL when out of memory); give() returns it (freed when the
 * slot is taken or above 256 MB). */
enum {
    KCS_SCRATCH_PACK_A, /* the own GEMM's packed A */
    KCS_SCRATCH_PACK_B, /* ... and B */
    KCS_SCRATCH_ORDER,  /* an atomic schedule's drawn order (own and calibration GEMM) */
    KCS_SCRATCH_BT,     /* the calibration GEMM's B, transposed */
    KCS_SCRATCH_PAIRS,  /* the calibration GEMM's (a_p, b_p) pairs as floats */
    KCS_SCRATCH_SLOTS
};
typedef struct kcs_cpu_scratch {
    void *p;
    size_t cap;
} kcs_cpu_scratch;
kcs_cpu_scratch kcs_cpu_scratch_take(int which, size_t bytes);
void kcs_cpu_scratch_give(int which, kcs_cpu_scratch s);

int kcs_cpu_gemm_own_model(const kcs_call *c, const double *A, const double *B, const double *C,
                           double *D, kcs_error *err);
int kcs_cpu_gemm_own_fast(const kcs_call *c, const double *A, const double *B, const double *C,
                          double *D);

/* Row ops, reductions and gather (one file each: reduce.c, softmax.c,
 * norm.c, attention.c, gather.c); variants native / own (+ fused for
 * attention). */
int kcs_cpu_reduce_sum(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_dot(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_allreduce(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_softmax(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_layernorm(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_rmsnorm(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_attention(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
int kcs_cpu_gather(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
/* reduce.c: the 2-norm of each row */
int kcs_cpu_norm(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
/* elementwise.c; one element: f (elementwise.h) in working format w, own = the stable forms */
int kcs_cpu_elementwise(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
double kcs_cpu_elementwise_one(kcs_ew_fn fn, int own, kcs_format w, double x);

/* One softmax row y = softmax(x) of length k in working format w
 * (cpu/work.h): own = the denominator under s/acc (e, scratch: k doubles);
 * native = OpenBLAS asum denominator (fe: k floats, unused for fp64). */
void kcs_cpu_softmax_row(const double *x, int64_t k, kcs_format w, const kcs_schedule *s,
                         const kcs_acc *acc, uint64_t seed, double *e, double *scratch, double *y);
void kcs_cpu_softmax_row_native(const double *x, int64_t k, kcs_format w, double *e, float *fe,
                                double *y);

#endif
