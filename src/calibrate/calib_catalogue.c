/* The calibration catalogue (calibrate.h): for every contract, the
 * baseline, bad and good implementations that three-state calibration
 * runs, as variants of the CPU backend or host wrappers (calib_wrap.c). */
#include "calibrate.h"

#include <string.h>

#define OPBIT(o) (1u << (o))
#define GEMMS (OPBIT(KCS_OP_GEMM) | OPBIT(KCS_OP_BATCHED_GEMM))

static const kcs_calib_entry catalogue[] = {
    {"C-PRC-01", GEMMS, KCS_FMT_FP32, "accumulator-narrower-than-declared",
     "k > 64: the running sum is rounded to bf16 after every add (fp32 declared)",
     "k > 64: the backend's gemm on k-slices of 16, slice results accumulated in bf16"},
    {"C-PRC-02", OPBIT(KCS_OP_SOFTMAX) | OPBIT(KCS_OP_LAYERNORM), KCS_FMT_FP32,
     "overflow-not-stabilised,variance-cancellation",
     "softmax exponentiates without max-subtraction; layernorm variance as E[x^2] - E[x]^2",
     "softmax: the backend's softmax, rows whose unshifted expf overflows (x > 88.72) set to "
     "Inf/Inf = NaN and e/Inf = 0 on the host; layernorm: moments by the backend's reduce_sum, "
     "E[x^2] - E[x]^2 and the normalisation on the host in fp32"},
    {"C-PRC-03", GEMMS, KCS_FMT_FP32, "input-rounded-to-11-bits",
     "A and B rounded to tf32 (11-bit significand) before an fp32 gemm",
     "A and B rounded to tf32 on the host, then the backend's gemm"},
    {"C-PRC-04", OPBIT(KCS_OP_REDUCE_SUM), KCS_FMT_FP32, "subnormals-flushed",
     "subnormal inputs read as zero (DAZ), subnormal partial sums flushed (FTZ)",
     "subnormal inputs zeroed on the host, the backend's reduce_sum, subnormal sums flushed"},
    {"C-ORD-01", OPBIT(KCS_OP_REDUCE_SUM), KCS_FMT_FP32, "narrow-partial-sums",
     "k > 256: fp32 sums of 64-element blocks stored in a bf16 workspace, added in fp32",
     "k > 256: the backend's reduce_sum of 64-element blocks, partials rounded to bf16, added "
     "in fp32 on the host"},
    {"C-ORD-02", GEMMS, KCS_FMT_FP32, "run-to-run-reordering",
     "each output's k products summed in a random order drawn from the call's seed",
     "the backend's gemm on 8 k-slices, slice results added in fp32 in a random order drawn "
     "from the call's seed"},
    {"C-ORD-03", GEMMS, KCS_FMT_FP32, "batch-dependent-schedule",
     "declares batch_invariant; only at m == 3 (one batch size of all) split-K into 2 fp32 "
     "partials, sequential otherwise",
     "declares batch_invariant; m == 3: the backend's gemm on 2 k-slices added in fp32 on the "
     "host; else the backend's gemm once per row (good: once per row at every m)"},
    {"C-ORD-04", OPBIT(KCS_OP_ALLREDUCE), KCS_FMT_FP32, "arrival-order-reduction",
     "the ranks' contributions summed in fp32 in rank order, except that the last two are "
     "taken in the order they arrived (drawn from the call's seed: one swap, about half the "
     "runs)",
     "the backend's reduce_sum over the transposed contributions (k rows of m), the last two "
     "rows swapped in about half the runs (good: never swapped)"},
    {"C-CMP-01", OPBIT(KCS_OP_ATTENTION), KCS_FMT_BF16, "intermediate-narrowed-to-16-bits",
     "fused attention rounds the unnormalised probabilities P to bf16 for the PV product",
     "the backend's gemm (QK^T), softmax, P rounded to bf16 on the host, gemm (PV)"},
    {"C-CMP-02", GEMMS, KCS_FMT_FP32, "remainder-edge-error",
     "m*n >= 4096: 32x32 tiles whose remainder tiles load A and B as bf16",
     "m*n >= 4096: outputs in the remainder rows/columns of 32x32 tiles recomputed by the "
     "backend's gemm from bf16-rounded inputs"},
    {"C-CMP-03", GEMMS, KCS_FMT_FP32, "held-out-shape-error,stale-result-replay",
     "shapes outside the 64-multiple class: the first result per shape is memoised and "
     "replayed",
     "shapes outside the 64-multiple class: the backend's first result per shape is "
     "memoised and replayed"},
    {"C-EXC-01", GEMMS, KCS_FMT_FP32, "nan-suppressed", "the epilogue replaces NaN outputs by 0",
     "the backend's gemm, NaN outputs replaced by 0 on the host"},
    {"C-EXC-02", OPBIT(KCS_OP_GATHER), KCS_FMT_FP32, "oob-silently-answered",
     "out-of-range indices answered with table[idx mod m] under oob=raise",
     "indices wrapped into [0, m) on the host, then the backend's gather"},
    {"C-PRC-05", OPBIT(KCS_OP_ELEMENTWISE), KCS_FMT_FP32, "approximate-function",
     "exp as 2^(x log2 e) with the product rounded to fp32 (the argument path of CUDA's "
     "__expf)",
     "the backend's exp of RN(RN(x log2 e) ln 2) (the argument rounded through base 2 in "
     "fp32)"},
    {"C-PRC-06", OPBIT(KCS_OP_SOFTMAX) | OPBIT(KCS_OP_LAYERNORM), KCS_FMT_FP32,
     "sum-narrower-than-declared",
     "declares round_to_nearest; the softmax denominator and layernorm's mean and variance "
     "summed in a 16-bit round-to-nearest accumulator, every other step fp32",
     "softmax: the backend's softmax, each row scaled by S32/S16 (its fp32 and 16-bit sums of "
     "exp(x - max), on the host); layernorm: the backend's layernorm moved to the host's "
     "16-bit mean and variance, y' = b + r (y - b) + r g (mu - mu16)/sd, r = sd/sd16"},
    {"C-PRC-07", OPBIT(KCS_OP_ATTENTION), KCS_FMT_FP32, "attention-narrower-than-declared",
     "declares round_to_nearest; the unfused composition with the scores, the softmax "
     "denominator and the PV sums in a 16-bit round-to-nearest accumulator",
     "declares round_to_nearest; the backend's gemm (QK^T) and softmax, the PV sums on the host "
     "in a 16-bit round-to-nearest accumulator"},
};

const kcs_calib_entry *kcs_calib_catalogue(int *n_p)
{
    *n_p = (int)(sizeof catalogue / sizeof catalogue[0]);
    return catalogue;
}

const kcs_calib_entry *kcs_calib_find(const char *id)
{
    for (size_t i = 0; i < sizeof catalogue / sizeof catalogue[0]; i++)
        if (strcmp(catalogue[i].id, id) == 0)
            return &catalogue[i];
    return NULL;
}
