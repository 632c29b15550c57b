/* The kernel launchers shared by the CUDA and HIP backends (vendor-neutral
 * C prototypes). The device code is gpu_kernels.cuh, compiled once by nvcc
 * (cuda_kernels.cu) and once by hipcc (hip/hip_kernels.hip); the includer
 * defines KCS_GPU_FN(name) (kcs_cuda_##name or kcs_hip_##name) so that both
 * backends can live in one binary. Every launcher is asynchronous on the
 * given stream and returns the vendor's launch status (0: launched).
 *
 * Arithmetic (the same as backends/kernels/common.cl and cpu/acc.c, so the
 * same schedule agrees bit for bit across cpu, opencl, cuda and hip):
 *   step  s <- RN_acc(s + a*b), one rounding
 *   leaf  RN_acc(a*b);  add RN_acc(x + y)
 *   sequential, pairwise (recursive halving, left half n/2), blocked:B,
 *   splitk:S (= blocked with B = ceil(n/S)); all start from 0 and gemm adds
 *   C last with one rounding. Narrow accumulators (fp16, bf16, tf32, fp8,
 *   bits:N) run in a double carrier: every operation is the correctly
 *   rounded exact result (TwoSum + sticky nudge, then RNE to the format),
 *   as cpu/acc.c does (the opencl backend offers fp32 and fp64 only).
 *   Row ops and attention: elementwise steps in the working format (double
 *   for fp64 inputs, float otherwise), each rounded once (cpu/work.h,
 *   rows.cl, attention.cl).
 * GPU-only schedules:
 *   KCS_GPU_SCHED_TREE   the "native" row ops: 64 threads per row, thread t
 *                        sums terms t, t+64, ... in order, then a shared-
 *                        memory halving tree (common.cl kcs_wg_sum).
 *   KCS_GPU_SCHED_ATOMIC gemm / reduce_sum / dot: chunks of
 *                        KCS_GPU_ATOMIC_CHUNK terms summed sequentially,
 *                        committed with hardware atomicAdd in whatever
 *                        order the device runs them (real nondeterminism,
 *                        not a seeded model). */
#ifndef KCS_GPU_LAUNCH_H
#define KCS_GPU_LAUNCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Input storage (numbering matches common.cl's KCS_TIN). */
enum { KCS_GPU_IN_F32 = 0, KCS_GPU_IN_F64 = 1, KCS_GPU_IN_F16 = 2, KCS_GPU_IN_BF16 = 3 };
/* Accumulator: float, double, or a narrow format in a double carrier.
 * Device buffers of accumulator values are float for F32, double else. */
enum { KCS_GPU_ACC_F32 = 0, KCS_GPU_ACC_F64 = 1, KCS_GPU_ACC_NARROW = 2 };

/* Schedule kinds: the values of kcs_schedule_kind (src/arith/op.h; the host
 * checks the correspondence at compile time). */
enum {
    KCS_GPU_SCHED_SEQUENTIAL = 0,
    KCS_GPU_SCHED_PAIRWISE = 1,
    KCS_GPU_SCHED_BLOCKED = 2,
    KCS_GPU_SCHED_SPLITK = 3,
    KCS_GPU_SCHED_ATOMIC = 4,
};
#define KCS_GPU_SCHED_TREE 100
#define KCS_GPU_ATOMIC_CHUNK 32
#define KCS_GPU_TREE_THREADS 64 /* common.cl KCS_RWG / KCS_AWG */

typedef struct kcs_gpu_red {
    int tin;       /* KCS_GPU_IN_* */
    int tacc;      /* KCS_GPU_ACC_* */
    int sched;     /* KCS_GPU_SCHED_* */
    int64_t param; /* B of blocked:B, S of splitk:S */
    /* narrow accumulator format (tacc == NARROW) */
    int p, emin, has_inf, has_neg_zero;
    double maxf;
} kcs_gpu_red;

/* gather out-of-bounds modes */
enum { KCS_GPU_OOB_RAISE = 0, KCS_GPU_OOB_CLAMP, KCS_GPU_OOB_ZERO };

#ifdef KCS_GPU_FN
/* D[b] = C[b] + A[b]·B[b] (row-major; c may be NULL), own schedules incl.
 * atomic. d: accumulator buffer of batch*m*n. */
int KCS_GPU_FN(gemm)(void *stream, const kcs_gpu_red *r, int64_t batch, int64_t m, int64_t n,
                     int64_t k, const void *a, const void *b, const double *c, void *d);
/* 16x16 shared-memory tiled gemm (fp32 or fp64 accumulator, sequential k
 * order per output, C added last): the HIP backend's native gemm. */
int KCS_GPU_FN(gemm_tiled)(void *stream, const kcs_gpu_red *r, int64_t batch, int64_t m,
                           int64_t n, int64_t k, const void *a, const void *b, const double *c,
                           void *d);
/* out[i] = sum_j x[i,j] (reduce_sum; dot runs as a 1×k·k×1 gemm). */
int KCS_GPU_FN(reduce_rows)(void *stream, const kcs_gpu_red *r, int64_t m, int64_t k,
                            const void *x, void *out);
/* Row ops (rows.cl definitions): outputs are "wide" (double when the input
 * or the accumulator is double or narrow, float otherwise). softmax of the
 * rows of x (m×k). */
int KCS_GPU_FN(softmax)(void *stream, const kcs_gpu_red *r, int64_t m, int64_t k, const void *x,
                        void *out);
/* elementwise: out[i] = f(x[i]) for n values, f = kcs_ew_fn fn (rows.cl
 * definitions; own: the stable forms), out wide. */
int KCS_GPU_FN(elementwise)(void *stream, const kcs_gpu_red *r, int64_t n, int fn, int own,
                            const void *x, void *out);
/* layernorm (rms == 0) or rmsnorm (rms == 1, beta ignored) of the rows of
 * x; gamma / beta may be NULL (left out). */
int KCS_GPU_FN(norm)(void *stream, const kcs_gpu_red *r, int rms, int64_t m, int64_t k,
                     const void *x, const double *gamma, const double *beta, double eps,
                     void *out);
/* attention (attention.cl definitions), out wide. block == 0: unfused,
 * scores into scratch (batch*m*n values of the working format: double for
 * fp64 inputs, float otherwise), softmax, P·V; block > 0: the streaming
 * fused kernel over key blocks of that size (its score dots follow
 * r->sched; needs (k + block) working-format values of shared memory). */
int KCS_GPU_FN(attention)(void *stream, const kcs_gpu_red *r, int64_t block, int64_t batch,
                          int64_t m, int64_t n, int64_t k, double scale, const void *q,
                          const void *kk, const void *v, void *scratch, void *out);
/* out[r,:] = table[idx[r],:] (doubles); *bad (init ~0) gets the smallest
 * position of an out-of-range index under RAISE (also when k == 0). */
int KCS_GPU_FN(gather)(void *stream, int mode, int64_t m, int64_t k, int64_t n,
                       const double *table, const int64_t *idx, double *out,
                       unsigned long long *bad);
#endif

#ifdef __cplusplus
}
#endif

#endif
