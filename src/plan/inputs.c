#include "inputs.h"
#include "inputs_exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "rng.h"
#include "tensor.h"

/* Stream ids: tensor i of trial t draws from stream (case, i << 32 | t);
 * injections use a separate stream per tensor. */
static uint64_t stream(int tensor, int trial, int purpose)
{
    return ((uint64_t)(tensor + 16 * purpose) << 32) | (uint32_t)trial;
}

/* Each element of x independently: NaN with probability special.nan, an
 * infinity of either sign (inf), +Inf (pinf), -Inf (ninf), a subnormal of
 * fmt, an infinity whose sign cycles with the trial (infs: +Inf on trials 0
 * mod 3, -Inf on 1 mod 3, either sign on 2 mod 3), else left as drawn. The
 * thresholds follow that order, so a contract without pinf, ninf or infs
 * draws exactly what it drew before they existed. */
static void inject(double *x, size_t len, const kcs_contract *c, kcs_format fmt, uint64_t seed,
                   uint64_t case_id, int tensor, int trial)
{
    if (c->special_nan <= 0 && c->special_inf <= 0 && c->special_pinf <= 0 &&
        c->special_ninf <= 0 && c->special_subnormal <= 0 && c->special_infs <= 0)
        return;
    kcs_rng r;
    kcs_rng_init(&r, seed, case_id, stream(tensor, trial, 1));
    double sub = ldexp(1.0, kcs_format_get(fmt)->emin - 1); /* a subnormal of fmt */
    const double t_nan = c->special_nan, t_inf = t_nan + c->special_inf,
                 t_pinf = t_inf + c->special_pinf, t_ninf = t_pinf + c->special_ninf,
                 t_sub = t_ninf + c->special_subnormal, t_infs = t_sub + c->special_infs;
    for (size_t i = 0; i < len; i++) {
        double u = kcs_rng_uniform(&r);
        if (u < t_nan)
            x[i] = NAN;
        else if (u < t_inf)
            x[i] = (kcs_rng_u32(&r) & 1) ? -INFINITY : INFINITY;
        else if (u < t_pinf)
            x[i] = INFINITY;
        else if (u < t_ninf)
            x[i] = -INFINITY;
        else if (u < t_sub)
            x[i] = kcs_format_round(fmt, sub * (0.25 + kcs_rng_uniform(&r)), KCS_ROUND_DEFAULT);
        else if (u < t_infs)
            x[i] = trial % 3 == 0   ? INFINITY
                   : trial % 3 == 1 ? -INFINITY
                   : (kcs_rng_u32(&r) & 1) ? -INFINITY : INFINITY;
    }
}

/* Subnormal reduce_sum rows: every even row of one sign (the sign of its
 * first term), odd rows left with random signs. A row of random signs sums
 * to about sqrt(k) of its terms, so a kernel that reads them as zero errs by
 * about 1/sqrt(k) of sum|x|, which falls below 2 k u near k = 4 10^4; on
 * rows of one sign it errs by all of sum|x| at every k. The odd rows keep
 * sums that cancel into the subnormal range. */
static void one_sign_rows(double *x, size_t len, int64_t k)
{
    if (k < 1)
        return;
    for (size_t r = 0; (r + 1) * (size_t)k <= len; r += 2) {
        double *row = x + r * (size_t)k;
        int neg = signbit(row[0]);
        for (int64_t t = 0; t < k; t++)
            row[t] = neg ? -fabs(row[t]) : fabs(row[t]);
    }
}

int kcs_inputs_make(const kcs_contract *c, const kcs_case *cs, int trial, uint64_t study_seed,
                    kcs_call *call, kcs_inputs *in, kcs_error *err)
{
    memset(in, 0, sizeof *in);
    int n_in = kcs_op_n_inputs(cs->op);
    for (int i = 0; i < n_in; i++) {
        size_t len = kcs_op_in_len(call, i);
        int is_gemm = cs->op == KCS_OP_GEMM || cs->op == KCS_OP_BATCHED_GEMM;
        if (is_gemm && i == 2)
            continue; /* D = A·B: no C operand */
        double *x = malloc((len ? len : 1) * sizeof *x);
        if (!x) {
            kcs_inputs_free(in);
            return kcs_fail(err, KCS_E_NOMEM, "out of memory for input %d of case %lld", i,
                            (long long)cs->id);
        }
        in->t[i] = x;
        in->len[i] = len;
        uint64_t sa = (uint64_t)cs->id, sb = stream(i, trial, 0);
        int is_param = (cs->op == KCS_OP_LAYERNORM || cs->op == KCS_OP_RMSNORM) && i > 0;
        if (cs->op == KCS_OP_GATHER && i == 1) {
            /* indices: uniform in [0, m), a fraction out of range on
             * either side */
            kcs_rng r;
            kcs_rng_init(&r, study_seed, sa, sb);
            /* Trials 2 mod 4 hold exactly one out-of-range index, at a
             * boundary (m on trials 2 mod 8, -1 on 6 mod 8): with many out-of-range indices a kernel
             * whose bound check is off by one (x > m, or no x < 0 test)
             * raises anyway for the others, and its defect never shows. */
            int lone = trial % 4 == 2 && c->special_oob > 0 && len > 0;
            double p_oob = trial % 2 || lone ? 0.0 : c->special_oob;
            for (size_t j = 0; j < len; j++) {
                int64_t idx = (int64_t)(kcs_rng_uniform(&r) * (double)cs->shape.m);
                /* Odd trials hold no out-of-range index, so that both
                 * directions of raise-iff-out-of-range are exercised in
                 * every run of two or more trials. */
                if (kcs_rng_uniform(&r) < p_oob) {
                    idx = (kcs_rng_u32(&r) & 1) ? cs->shape.m + (int64_t)(kcs_rng_u32(&r) % 64)
                                                : -1 - (int64_t)(kcs_rng_u32(&r) % 64);
                    in->oob_count++;
                }
                x[j] = (double)idx;
            }
            if (lone) {
                kcs_rng rb;
                kcs_rng_init(&rb, study_seed, sa, stream(i, trial, 2));
                size_t at = (size_t)(kcs_rng_uniform(&rb) * (double)len);
                x[at < len ? at : len - 1] = trial % 8 == 2 ? (double)cs->shape.m : -1.0;
                in->oob_count = 1;
            }
            in->digest ^= kcs_digest_values(x, len, KCS_FMT_FP64) + 0x9E37ull * (uint64_t)(i + 1);
        } else if (is_param) {
            /* gamma ~ 1 + N/4, beta ~ N/4: benign scale and shift */
            kcs_fill(x, len, KCS_DIST_NORMAL, cs->dtype_in, study_seed, sa, sb);
            for (size_t j = 0; j < len; j++)
                x[j] = kcs_format_round(cs->dtype_in, (i == 1 ? 1.0 : 0.0) + 0.25 * x[j],
                                        KCS_ROUND_DEFAULT);
        } else if (cs->dist == KCS_DIST_EXACT) {
            int rc = kcs_exact_fill(cs, i, x, len, study_seed, sa, sb, err);
            if (rc) {
                kcs_inputs_free(in);
                return rc;
            }
        } else {
            kcs_fill(x, len, cs->dist, cs->dtype_in, study_seed, sa, sb);
            if (cs->dist == KCS_DIST_SUBNORMAL && cs->op == KCS_OP_REDUCE_SUM)
                one_sign_rows(x, len, cs->shape.k);
            if (i == 0)
                inject(x, len, c, cs->dtype_in, study_seed, sa, i, trial);
        }
        if (!(cs->op == KCS_OP_GATHER && i == 1))
            in->digest ^= kcs_digest_values(x, len, cs->dtype_in) +
                          KCS_GOLDEN64 * (uint64_t)(i + 1);
        call->in[i] = x;
        call->in_len[i] = len;
    }
    /* distinguish trials in the digest even when a tensor repeats */
    in->digest = kcs_digest_bytes(&in->digest, sizeof in->digest, (uint64_t)trial);
    return 0;
}

void kcs_inputs_free(kcs_inputs *in)
{
    for (int i = 0; i < KCS_MAX_INPUTS; i++)
        free(in->t[i]);
    memset(in, 0, sizeof *in);
}

int kcs_inputs_copy(const kcs_inputs *src, kcs_call *call, kcs_inputs *dst, kcs_error *err)
{
    *dst = *src;
    for (int i = 0; i < KCS_MAX_INPUTS; i++)
        dst->t[i] = NULL;
    for (int i = 0; i < KCS_MAX_INPUTS; i++) {
        if (!src->t[i])
            continue;
        size_t len = src->len[i];
        dst->t[i] = malloc((len ? len : 1) * sizeof *dst->t[i]);
        if (!dst->t[i]) {
            kcs_inputs_free(dst);
            return kcs_fail(err, KCS_E_NOMEM, "out of memory for a copy of input %d", i);
        }
        memcpy(dst->t[i], src->t[i], len * sizeof *dst->t[i]);
        call->in[i] = dst->t[i];
        call->in_len[i] = len;
    }
    return 0;
}

void kcs_trial_call(const kcs_contract *c, const kcs_case *cs, int trial, kcs_call *call)
{
    *call = (kcs_call){0};
    call->op = cs->op;
    call->dtype_in = cs->dtype_in;
    call->dtype_out = cs->dtype_out;
    call->acc = cs->acc;
    call->m = cs->shape.m;
    call->n = cs->shape.n;
    call->k = cs->shape.k;
    call->batch = cs->shape.batch;
    call->attrs = c->attrs;
    call->seed = cs->seed ^ (uint64_t)trial;
}

uint64_t kcs_input_digest_fold(uint64_t case_digest, uint64_t trial_digest, int trial)
{
    return case_digest ^ (trial_digest + KCS_GOLDEN64 * (uint64_t)(trial + 1));
}
