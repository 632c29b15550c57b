/* The accumulator model and the summation schedules (used by the CPU backend, allreduce and calibration). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"
#include "format_fast.h"
#include "rng.h"

/* The model's steps inline (the sum loops below call them per term): F is
 * kcs_fmt_fast_get(acc->fmt), looked up once per kcs_cpu_sum. */
#define ACC_INLINE static inline __attribute__((always_inline))

ACC_INLINE double acc_round(const kcs_acc *acc, const kcs_fmt_fast *F, double x)
{
    if (acc->rz) { /* truncating accumulator: fp32 range for bits:N */
        if (acc->bits > 0)
            return kcs_round_bits(x, acc->bits, KCS_RZ);
        if (acc->fmt == KCS_FMT_FP64)
            return x;
        kcs_round_mode md = KCS_ROUND_DEFAULT;
        md.rounding = KCS_RZ;
        return kcs_format_round(acc->fmt, x, md);
    }
    if (acc->bits > 0)
        return kcs_round_bits(x, acc->bits, KCS_RNE);
    switch (acc->fmt) {
    case KCS_FMT_FP64: return x;
    case KCS_FMT_FP32: return (double)(float)x; /* C cast: round to nearest even */
    default: /* bf16, fp16, ...: the bit-level path */
        return F ? kcs_ff_round(F, x) : kcs_format_round(acc->fmt, x, KCS_ROUND_DEFAULT);
    }
}

ACC_INLINE double acc_add(const kcs_acc *acc, const kcs_fmt_fast *F, double x, double t)
{
    if (acc->bits == 0 && !acc->rz && acc->fmt == KCS_FMT_FP32) {
        /* Both operands fp32 values: one fp32 addition is the correctly
         * rounded sum (what the path below computes), overflow to Inf
         * and the sign of a zero sum included. */
        float fx = (float)x, ft = (float)t;
        if ((double)fx == x && (double)ft == t)
            return (double)(fx + ft);
    }
    double s = x + t;
    if (acc->bits == 0 && acc->fmt == KCS_FMT_FP64)
        return s;
    if (!isfinite(s))
        return acc_round(acc, F, s);
    /* TwoSum: s + e == x + t exactly. Where e != 0, the sum rounded to odd
     * (s itself when its last bit is odd, else s moved one double ulp
     * toward e) lies strictly between the same two even fp64 neighbours as
     * the exact sum, so on the same side of every value and every midpoint
     * of a <= 51-bit format: one rounding of it, to nearest or toward zero,
     * is the correctly rounded exact sum (Boldo & Melquiond 2008). An odd s
     * must not move: one ulp on it may be such a value or midpoint. */
    double bp = s - x;
    double e = (x - (s - bp)) + (t - bp);
    uint64_t u;
    memcpy(&u, &s, sizeof u);
    if (e != 0.0 && !(u & 1)) { /* toward e: s != 0 here (x + t == 0 is exact) */
        u += ((e > 0.0) == (s > 0.0)) ? 1 : (uint64_t)-1;
        memcpy(&s, &u, sizeof s);
    }
    return acc_round(acc, F, s);
}

double kcs_acc_round(const kcs_acc *acc, double x)
{
    return acc_round(acc, kcs_fmt_fast_get(acc->fmt), x);
}

double kcs_acc_add(const kcs_acc *acc, double x, double t)
{
    return acc_add(acc, kcs_fmt_fast_get(acc->fmt), x, t);
}

/* The schedules; F = kcs_fmt_fast_get(acc->fmt), looked up once by
 * kcs_cpu_sum. */
static double sum_seq(const double *t, int64_t n, const kcs_acc *acc, const kcs_fmt_fast *F)
{
    double a = 0.0;
    for (int64_t i = 0; i < n; i++)
        a = acc_add(acc, F, a, t[i]);
    return a;
}

static double sum_pairwise(const double *t, int64_t n, const kcs_acc *acc,
                           const kcs_fmt_fast *F)
{
    if (n == 0)
        return 0.0;
    if (n == 1)
        return acc_round(acc, F, t[0]);
    int64_t h = n / 2;
    return acc_add(acc, F, sum_pairwise(t, h, acc, F), sum_pairwise(t + h, n - h, acc, F));
}

static double sum_chunks(const double *t, int64_t n, int64_t chunk, const kcs_acc *acc,
                         const kcs_fmt_fast *F)
{
    double total = 0.0;
    for (int64_t s = 0; s < n; s += chunk) {
        int64_t len = n - s < chunk ? n - s : chunk;
        total = acc_add(acc, F, total, sum_seq(t + s, len, acc, F));
    }
    return total;
}

void kcs_atomic_order(uint64_t seed, int64_t n, uint32_t *idx)
{
    for (int64_t i = 0; i < n; i++)
        idx[i] = (uint32_t)i;
    kcs_rng r; /* the draws of kcs_cpu_sum's shuffle, swap for swap */
    kcs_rng_init(&r, seed, 0xA70A1Cull, (uint64_t)n);
    enum { CHUNK = 512 };
    uint32_t w[2 * CHUNK]; /* kcs_rng_uniform's two words per draw, drawn in bulk */
    for (int64_t i = n - 1; i > 0;) {
        int64_t cnt = i < CHUNK ? i : CHUNK;
        kcs_rng_u32_n(&r, w, 2 * (size_t)cnt);
        for (int64_t t = 0; t < cnt; t++, i--) {
            uint64_t u = ((uint64_t)w[2 * t] << 32) | w[2 * t + 1];
            double v = (double)(u >> 11) * 0x1.0p-53; /* kcs_rng_uniform */
            int64_t j = (int64_t)(v * (double)(i + 1));
            uint32_t tmp = idx[i];
            idx[i] = idx[j];
            idx[j] = tmp;
        }
    }
}

double kcs_cpu_sum(const double *terms, int64_t n, const kcs_schedule *s, const kcs_acc *acc,
                   uint64_t seed, double *scratch)
{
    const kcs_fmt_fast *F = kcs_fmt_fast_get(acc->fmt);
    switch (s->kind) {
    case KCS_SCHED_PAIRWISE:
        return sum_pairwise(terms, n, acc, F);
    case KCS_SCHED_BLOCKED:
        return sum_chunks(terms, n, s->param, acc, F);
    case KCS_SCHED_SPLITK: {
        int64_t chunk = (n + s->param - 1) / s->param;
        return sum_chunks(terms, n, chunk > 0 ? chunk : 1, acc, F);
    }
    case KCS_SCHED_ATOMIC: {
        /* Atomics commit partial results in an order the programmer does
         * not control: model it as a seeded random permutation (Fisher-
         * Yates on Philox draws) of the terms, summed sequentially. */
        memcpy(scratch, terms, (size_t)n * sizeof *scratch);
        kcs_rng r;
        kcs_rng_init(&r, seed, 0xA70A1Cull, (uint64_t)n);
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(kcs_rng_uniform(&r) * (double)(i + 1));
            double tmp = scratch[i];
            scratch[i] = scratch[j];
            scratch[j] = tmp;
        }
        return sum_seq(scratch, n, acc, F);
    }
    case KCS_SCHED_SEQUENTIAL:
    default:
        return sum_seq(terms, n, acc, F);
    }
}

void kcs_acc_moments(const double *x, int64_t k, const kcs_acc *acc, float eps, float *mu_p,
                     float *sd_p)
{
    float kk = (float)k;
    double s = 0.0, q = 0.0;
    for (int64_t t = 0; t < k; t++)
        s = kcs_acc_add(acc, s, (float)x[t]);
    float mu = (float)s / kk;
    for (int64_t t = 0; t < k; t++) {
        float d = (float)x[t] - mu;
        q = kcs_acc_add(acc, q, (double)d * (double)d);
    }
    *mu_p = mu;
    *sd_p = sqrtf((float)q / kk + eps);
}
