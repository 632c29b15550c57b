/* Working precision of the elementwise steps of the CPU row ops (softmax,
 * layernorm, rmsnorm, attention): fp64 for fp64 inputs, fp32 for fp32 and
 * every narrower input format. Each elementwise step (subtract, exp,
 * divide, sqrt, scale by gamma, add beta) is one operation rounded once
 * into the working format: computed in double and rounded to fp32, which
 * for fp32 operands is exactly the fp32 operation (double carries more than
 * 2p + 2 bits, so the double rounding is innocuous for + - * / sqrt). exp
 * is expf for fp32 and exp for fp64. Reductions (sums) are not elementwise:
 * they run under the call's schedule and accumulator (cpu/acc.c). */
#ifndef KCS_CPU_WORK_H
#define KCS_CPU_WORK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "format_fast.h"

static inline kcs_format kcs_cpu_work_fmt(kcs_format in)
{
    return in == KCS_FMT_FP64 ? KCS_FMT_FP64 : KCS_FMT_FP32;
}

static inline double kcs_cpu_wround(kcs_format w, double x)
{
    return w == KCS_FMT_FP64 ? x : (double)(float)x;
}

static inline double kcs_cpu_wexp(kcs_format w, double x)
{
    return w == KCS_FMT_FP64 ? exp(x) : (double)expf((float)x);
}

static inline double kcs_cpu_wsqrt(kcs_format w, double x)
{
    return w == KCS_FMT_FP64 ? sqrt(x) : (double)sqrtf((float)x);
}

/* The variant of a call: 0 native, 1 own, 2 fused (when allowed); else
 * KCS_E_UNSUPPORTED with a message naming the op. */
static inline int kcs_cpu_variant(const kcs_call *c, int allow_fused, kcs_error *err)
{
    const char *v = c->variant ? c->variant : "native";
    if (strcmp(v, "native") == 0)
        return 0;
    if (strcmp(v, "own") == 0)
        return 1;
    if (allow_fused && strcmp(v, "fused") == 0)
        return 2;
    return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no variant '%s' (native, own%s)",
                    kcs_op_name(c->op), v, allow_fused ? ", fused" : "");
}

/* Two arrays of n + 1 doubles (a kcs_cpu_sum's terms and its scratch):
 * 0, or -1 with neither allocated. */
static inline int kcs_cpu_alloc2(size_t n, double **a_p, double **b_p)
{
    *a_p = malloc((n + 1) * sizeof **a_p);
    *b_p = malloc((n + 1) * sizeof **b_p);
    if (*a_p && *b_p)
        return 0;
    free(*a_p);
    free(*b_p);
    *a_p = *b_p = NULL;
    return -1;
}

/* An op's kernel for one variant. */
typedef int (*kcs_cpu_variant_fn)(const kcs_call *c, kcs_error *err);

/* Run c by its variant: native or own (fused is not offered). */
static inline int kcs_cpu_by_variant(const kcs_call *c, kcs_cpu_variant_fn native,
                                     kcs_cpu_variant_fn own, kcs_error *err)
{
    int v = kcs_cpu_variant(c, 0, err);
    if (v < 0)
        return v;
    return v == 0 ? native(c, err) : own(c, err);
}

static inline double kcs_cpu_out(const kcs_call *c, double x)
{
    if (c->dtype_out == KCS_FMT_FP32) /* the common case, inline */
        return kcs_ff_round_fp32(x);
    return kcs_format_round(c->dtype_out, x, KCS_ROUND_DEFAULT);
}

/* Per-row seed of the atomic schedule (the same mixing as cpu/gemm.c). */
static inline uint64_t kcs_cpu_row_seed(const kcs_call *c, uint64_t i, uint64_t j)
{
    return c->seed ^ (i << 32) ^ j;
}

#endif
