/* Defect variants for the protocol and exceptional-value contracts
 * (C-ORD-02, C-ORD-03, C-ORD-04, C-EXC-01, C-EXC-02), run by
 * `kcs calibrate --sweep` (src/calibrate/calib_sweep_proto.c). Sums
 * (gemm, batched_gemm, reduce_sum, dot, allreduce) are fp32 sums of the
 * exact terms (kcs_cpu_sum, fp32 accumulator), sequential unless the
 * defect picks another order; each variant has one defect:
 *   defect:always-raise   raises on every call, whatever the inputs
 *   defect:rare-reorder   a split reduction whose partial arrives late in
 *                         one run out of 8 (drawn from the call's seed):
 *                         pairwise order then, sequential otherwise
 *   defect:batch-gemv     m == 1 takes a GEMV path (pairwise order), more
 *                         rows the GEMM path (sequential)
 *   defect:batch-splitk   fewer than 64 rows: split-K over 4 partials (to
 *                         fill the machine), 64 or more: sequential
 *   defect:batch-tile     rows in full tiles of 8 sequential, the rows of
 *                         the last partial tile through a pairwise tail
 *   defect:nan-raise      raises when an input holds a NaN (although the
 *                         contract declares nan=propagate); else the fp32
 *                         sum, or the fp32 softmax
 *   defect:nansum         NaN terms skipped (a masked accumulate)
 *   defect:nan-inf        NaN results stored as +Inf
 *   defect:nan-spread     one NaN result poisons every output (a shared
 *                         accumulator or a block-wide reduction)
 *   defect:softmax-nanmask  softmax that treats a NaN input as masked
 *                         (-Inf: weight 0), so a poisoned row comes out
 *                         finite (the nan=mask policy, not propagate)
 *   defect:softmax-nanzero  softmax whose NaN outputs are stored as 0
 *   defect:gather-clamp   out-of-range indices answered with the clamped
 *                         row (never raises)
 *   defect:gather-zero    out-of-range indices answered with zeros
 *   defect:gather-offby1  bound check `x > m` instead of `x >= m`: index m
 *                         answered with row m - 1, others raise
 *   defect:gather-negwrap Python-style negative indices: -m <= x < 0 is
 *                         row m + x, the others raise
 * The batch-* and always-raise variants declare batch invariance (the
 * claim C-ORD-03 binds): cpu_backend.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"
#include "cpu.h"
#include "work.h"

static const char *const names[] = {
    "always-raise", "rare-reorder", "batch-gemv",   "batch-splitk",   "batch-tile",
    "nan-raise",    "nansum",       "nan-inf",      "nan-spread",     "gather-clamp",
    "gather-zero",  "gather-offby1", "gather-negwrap", "softmax-nanmask", "softmax-nanzero",
};

int kcs_cpu_defect_proto_known(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static uint64_t mix(uint64_t h)
{
    h += 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

static int raise_err(const kcs_call *c, kcs_error *err, const char *why)
{
    if (c->msg && c->msg_len)
        snprintf(c->msg, c->msg_len, "%s", why);
    return kcs_fail(err, KCS_E_RAISED, "cpu %s: %s", c->variant, why);
}

static int gather_defect(const kcs_call *c, const char *d, kcs_error *err)
{
    if (c->m < 1)
        return kcs_fail(err, KCS_E_INVAL, "cpu %s: empty table", c->variant);
    size_t k = (size_t)c->k;
    for (int64_t r = 0; r < c->n; r++) {
        double x = c->in[1][r];
        if (!(x == floor(x)) || isinf(x))
            return kcs_fail(err, KCS_E_INVAL, "cpu %s: index %g is not an integer", c->variant, x);
        int in = x >= 0 && x < (double)c->m;
        if (in || !strcmp(d, "gather-clamp") || !strcmp(d, "gather-zero"))
            continue;
        if (!strcmp(d, "gather-offby1") && x == (double)c->m)
            continue;
        if (!strcmp(d, "gather-negwrap") && x < 0 && x >= -(double)c->m)
            continue;
        return raise_err(c, err, "index out of range");
    }
    for (int64_t r = 0; r < c->n; r++) {
        double x = c->in[1][r];
        double *out = c->out + (size_t)r * k;
        int64_t row = (int64_t)x;
        if (!(x >= 0 && x < (double)c->m) && !strcmp(d, "gather-zero")) {
            for (size_t t = 0; t < k; t++)
                out[t] = 0.0;
            continue;
        }
        if (row < 0)
            row = !strcmp(d, "gather-negwrap") ? c->m + row : 0;
        if (row >= c->m)
            row = c->m - 1;
        for (size_t t = 0; t < k; t++)
            out[t] = kcs_cpu_out(c, c->in[0][(size_t)row * k + t]);
    }
    return 0;
}

/* fp32 softmax rows (stable: max first), with the defect's NaN policy. */
static int softmax_defect(const kcs_call *c, const char *d, kcs_error *err)
{
    size_t k = (size_t)c->k;
    float *e = malloc((k + 1) * sizeof *e);
    if (!e)
        return kcs_fail(err, KCS_E_NOMEM, "cpu %s: out of memory", c->variant);
    int mask = !strcmp(d, "softmax-nanmask"), zero = !strcmp(d, "softmax-nanzero");
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        float mx = -INFINITY, s = 0.0f;
        for (size_t t = 0; t < k; t++) {
            float v = mask && isnan(x[t]) ? -INFINITY : (float)x[t];
            mx = isnan(v) || isnan(mx) ? NAN : fmaxf(mx, v);
        }
        for (size_t t = 0; t < k; t++) {
            float v = mask && isnan(x[t]) ? -INFINITY : (float)x[t];
            e[t] = expf(v - mx);
            s += e[t];
        }
        for (size_t t = 0; t < k; t++) {
            float y = e[t] / s;
            if (zero && isnan(y))
                y = 0.0f;
            c->out[(size_t)i * k + t] = kcs_cpu_out(c, y);
        }
    }
    free(e);
    return 0;
}

/* The order the defect picks for output row i of a call with m rows. */
static kcs_schedule order(const kcs_call *c, const char *d, int64_t i)
{
    kcs_schedule s = {KCS_SCHED_SEQUENTIAL, 0};
    if (!strcmp(d, "rare-reorder") && mix(c->seed) % 8 == 0)
        s.kind = KCS_SCHED_PAIRWISE;
    else if (!strcmp(d, "batch-gemv") && c->m == 1)
        s.kind = KCS_SCHED_PAIRWISE;
    else if (!strcmp(d, "batch-splitk") && c->m < 64)
        s = (kcs_schedule){KCS_SCHED_SPLITK, 4};
    else if (!strcmp(d, "batch-tile") && i >= c->m / 8 * 8)
        s.kind = KCS_SCHED_PAIRWISE;
    return s;
}

/* The order-only gemm defects (rare-reorder, batch-*) on the own GEMM's
 * fast kernels: each run of rows that shares an order is one call with an
 * fp32 accumulator and that schedule, bit-identical to the model below
 * (kcs_cpu_sum of the exact products: gemm.c's model, test_gemm_fast).
 * 1 when done; 0: the model computes the call (inputs that are not fp32
 * values, other defects and ops). */
static int order_defect_fast(const kcs_call *c, const char *d)
{
    if ((c->op != KCS_OP_GEMM && c->op != KCS_OP_BATCHED_GEMM) ||
        (strcmp(d, "rare-reorder") && strncmp(d, "batch-", 6)))
        return 0;
    int64_t m = c->m, n = c->n, k = c->k;
    int64_t nb = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    /* order() depends on the row only in batch-tile: rows of full tiles of
     * 8, then the rest */
    int64_t split = !strcmp(d, "batch-tile") ? m / 8 * 8 : 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i0 = 0; i0 < m;) {
            kcs_schedule s = order(c, d, i0);
            int64_t i1 = i0 < split ? split : m;
            kcs_call g = *c;
            g.op = KCS_OP_GEMM;
            g.batch = 0;
            g.m = i1 - i0;
            g.acc = (kcs_acc){KCS_FMT_FP32, 0, 0};
            g.schedule = s;
            if (!kcs_cpu_gemm_own_fast(&g, c->in[0] + (b * m + i0) * k, c->in[1] + b * k * n,
                                       NULL, c->out + (b * m + i0) * n))
                return 0;
            i0 = i1;
        }
    return 1;
}

static int sum_defect(const kcs_call *c, const char *d, int fast, kcs_error *err)
{
    int gemm = c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM;
    int ar = c->op == KCS_OP_ALLREDUCE, dot = c->op == KCS_OP_DOT;
    if (!gemm && !ar && !dot && c->op != KCS_OP_REDUCE_SUM)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s implements gemm, reduce_sum, dot and "
                        "allreduce only", c->variant);
    /* terms per output: k (gemm, reduce_sum, dot) or m ranks (allreduce) */
    int64_t m = ar || dot ? 1 : c->m, n = gemm ? c->n : ar ? c->k : 1;
    int64_t len = ar ? (c->m > 1 ? c->m : 1) : c->k;
    int64_t nb = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    if (fast && order_defect_fast(c, d))
        return 0;
    double *terms, *scratch;
    if (kcs_cpu_alloc2((size_t)len, &terms, &scratch))
        return kcs_fail(err, KCS_E_NOMEM, "cpu %s: out of memory", c->variant);
    const kcs_acc fp32 = {KCS_FMT_FP32, 0, 0};
    /* the variant's name is compared once per call, not per term */
    int nansum = !strcmp(d, "nansum"), naninf = !strcmp(d, "nan-inf");
    int any_nan = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m; i++) {
            kcs_schedule s = order(c, d, i);
            for (int64_t j = 0; j < n; j++) {
                int64_t nt = 0;
                for (int64_t p = 0; p < len; p++) {
                    double t = gemm  ? c->in[0][(b * m + i) * len + p] *
                                          c->in[1][(b * len + p) * n + j]
                               : ar  ? c->in[0][p * n + j]
                               : dot ? c->in[0][p] * c->in[1][p]
                                     : c->in[0][i * len + p];
                    if (nansum && isnan(t))
                        continue;
                    terms[nt++] = t;
                }
                double y = kcs_cpu_sum(terms, nt, &s, &fp32, 0, scratch);
                if (naninf && isnan(y))
                    y = INFINITY;
                any_nan |= isnan(y);
                c->out[(b * m + i) * n + j] = kcs_cpu_out(c, y);
            }
        }
    if (!strcmp(d, "nan-spread") && any_nan)
        for (size_t t = 0; t < c->out_len; t++)
            c->out[t] = NAN;
    free(terms);
    free(scratch);
    return 0;
}

static int defect_proto(const kcs_call *c, int fast, kcs_error *err);

int kcs_cpu_defect_proto(const kcs_call *c, kcs_error *err)
{
    return defect_proto(c, 1, err);
}

int kcs_cpu_defect_proto_model(const kcs_call *c, kcs_error *err)
{
    return defect_proto(c, 0, err);
}

static int defect_proto(const kcs_call *c, int fast, kcs_error *err)
{
    const char *d = c->variant + strlen("defect:");
    if (!strcmp(d, "always-raise"))
        return raise_err(c, err, "raises on every call");
    if (!strncmp(d, "gather-", 7)) {
        if (c->op != KCS_OP_GATHER)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s implements gather only", c->variant);
        return gather_defect(c, d, err);
    }
    if (!strcmp(d, "nan-raise"))
        for (int j = 0; j < KCS_MAX_INPUTS; j++)
            for (size_t t = 0; c->in[j] && t < c->in_len[j]; t++)
                if (isnan(c->in[j][t]))
                    return raise_err(c, err, "NaN input");
    if (!strncmp(d, "softmax-", 8) || (c->op == KCS_OP_SOFTMAX && !strcmp(d, "nan-raise"))) {
        if (c->op != KCS_OP_SOFTMAX)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s implements softmax only", c->variant);
        return softmax_defect(c, d, err);
    }
    return sum_defect(c, d, fast, err);
}
