/* Operators, reduction schedules and the one-call description that every
 * backend executes (kcs_call). Shapes, row-major:
 *   gemm          A m×k, B k×n, optional C m×n  -> D = C + A·B, m×n
 *   batched_gemm  batch × (gemm)                 -> batch×m×n
 *   reduce_sum    x m×k (m rows of length k)     -> m sums
 *   dot           x, y of length k               -> 1 value
 *   softmax       x m×k, row-wise                -> m×k
 *   layernorm     x m×k, gamma k, beta k         -> m×k
 *   rmsnorm       x m×k, gamma k                 -> m×k
 *   attention     Q batch×m×k, K batch×n×k, V batch×n×k -> batch×m×k
 *   gather        table m×k, idx n (integers)    -> n×k
 *   allreduce     x of length k per rank         -> k (sum over ranks)
 *   elementwise   x m×k, y_i = f(x_i), f from attrs fn= (elementwise.h) -> m×k
 *   norm          x m×k (m rows of length k)     -> m 2-norms ||x_i||_2
 * The reduction length of every op is k. */
#ifndef KCS_OP_H
#define KCS_OP_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef enum kcs_op {
    KCS_OP_GEMM = 0,
    KCS_OP_BATCHED_GEMM,
    KCS_OP_REDUCE_SUM,
    KCS_OP_DOT,
    KCS_OP_SOFTMAX,
    KCS_OP_LAYERNORM,
    KCS_OP_RMSNORM,
    KCS_OP_ATTENTION,
    KCS_OP_GATHER,
    KCS_OP_ALLREDUCE,
    KCS_OP_ELEMENTWISE,
    KCS_OP_NORM, /* append-only: stored enums of the ops above stay */
    KCS_OP_COUNT
} kcs_op;

const char *kcs_op_name(kcs_op op);
int kcs_op_parse(const char *name, kcs_op *op_p);

typedef enum kcs_schedule_kind {
    KCS_SCHED_SEQUENTIAL = 0,
    KCS_SCHED_PAIRWISE,
    KCS_SCHED_BLOCKED, /* param = block length B */
    KCS_SCHED_SPLITK,  /* param = number of splits S */
    KCS_SCHED_ATOMIC,  /* random order from the call's seed */
} kcs_schedule_kind;

typedef struct kcs_schedule {
    kcs_schedule_kind kind;
    int64_t param;
} kcs_schedule;

/* "sequential", "pairwise", "blocked:64", "splitk:4", "atomic". */
int kcs_schedule_parse(const char *text, kcs_schedule *s_p);
/* Writes the canonical text form into buf. */
const char *kcs_schedule_str(const kcs_schedule *s, char *buf, size_t len);

/* Accumulator: a format, or "bits:N" (N-bit significand, fp32 range);
 * a ":rz" suffix ("fp32:rz", "bits:14:rz") rounds every accumulation
 * toward zero (truncating matrix units) instead of to nearest even. */
typedef struct kcs_acc {
    kcs_format fmt;
    int bits; /* > 0: bits:N, fmt ignored */
    int rz;   /* 1: round toward zero */
} kcs_acc;

int kcs_acc_parse(const char *text, kcs_acc *acc_p);
const char *kcs_acc_str(const kcs_acc *a, char *buf, size_t len);

#define KCS_MAX_INPUTS 4
/* Devices one backend may list (a placement names device 0 .. this - 1). */
#define KCS_MAX_DEVICES 16

/* One op call: host-visible inputs and output, all values as doubles that
 * are exact in their declared formats. out is pre-filled by the caller with
 * a finite sentinel and surrounded by guard regions the callee must not
 * touch. */
typedef struct kcs_call {
    kcs_op op;
    const char *variant;   /* "native", "own", or a calibration variant */
    kcs_schedule schedule; /* for "own" */
    kcs_format dtype_in, dtype_out;
    kcs_acc acc;           /* declared accumulator */
    const char *profile;   /* emulated silicon profile (cpu), or NULL */
    int64_t m, n, k, batch;
    const double *in[KCS_MAX_INPUTS];
    size_t in_len[KCS_MAX_INPUTS];
    double *out;
    size_t out_len;
    const char *attrs;     /* "oob=raise;nan=propagate" */
    uint64_t seed;         /* for atomic schedules and random variants */
    char *msg;             /* why a kernel raised (KCS_E_RAISED) */
    size_t msg_len;
    double time_limit_s;   /* set by kcs_callguard_run for an isolated backend, which
                              enforces it itself (0: none) */
} kcs_call;

/* Number of output elements the op produces for the call's shape. */
size_t kcs_op_out_len(const kcs_call *c);
/* Number of elements of input i (0 when unused). */
size_t kcs_op_in_len(const kcs_call *c, int i);
/* Number of inputs the op reads. */
int kcs_op_n_inputs(kcs_op op);

#endif
