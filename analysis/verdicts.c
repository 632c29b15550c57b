/* Per (case, rank) summaries over trials, and cross-rank divergence. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reduce.h"

static const kcs_field verdict_fields[] = {
    KCS_FIELD(kcs_verdict_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_verdict_row, contract, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, op, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, dtype_in, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, m, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, n, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, input_dist, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, implementation, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, verdict, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, signature, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, max_tau, KCS_FIELD_F64),
    KCS_FIELD(kcs_verdict_row, max_backward_err, KCS_FIELD_F64),
    KCS_FIELD(kcs_verdict_row, max_ulp, KCS_FIELD_F64),
    KCS_FIELD(kcs_verdict_row, n_trials, KCS_FIELD_I32),
    KCS_FIELD(kcs_verdict_row, n_within, KCS_FIELD_I32),
    KCS_FIELD(kcs_verdict_row, distinct_digests, KCS_FIELD_I32),
};

static const kcs_field divergence_fields[] = {
    KCS_FIELD(kcs_divergence_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_divergence_row, rank_a, KCS_FIELD_I32),
    KCS_FIELD(kcs_divergence_row, rank_b, KCS_FIELD_I32),
    KCS_FIELD(kcs_divergence_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_divergence_row, max_abs_diff, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, max_rel_diff, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, identical, KCS_FIELD_I32),
};

const kcs_field *kcs_verdict_row_fields(int *n_p)
{
    *n_p = (int)(sizeof verdict_fields / sizeof verdict_fields[0]);
    return verdict_fields;
}

const kcs_field *kcs_divergence_row_fields(int *n_p)
{
    *n_p = (int)(sizeof divergence_fields / sizeof divergence_fields[0]);
    return divergence_fields;
}

/* Severity order: the worst verdict over trials is the (case, rank)'s. */
static int severity(const char *v)
{
    static const char *const order[] = {"", "within_tolerance", "under_specified", "violation",
                                        "unavailable", "error"};
    for (int i = (int)(sizeof order / sizeof order[0]) - 1; i > 0; i--)
        if (strcmp(v, order[i]) == 0)
            return i;
    return 0;
}

void kcs_reduce_verdicts(const kcs_case_rec *cs, const kcs_result_rec *res,
                         const kcs_rank_rec *ranks, int n_ranks, int max_trials,
                         kcs_verdict_row *rows)
{
    for (int r = 0; r < n_ranks; r++) {
        kcs_verdict_row *row = &rows[r];
        memset(row, 0, sizeof *row);
        row->case_id = cs->case_id;
        row->rank = r;
        snprintf(row->contract, sizeof row->contract, "%s", cs->contract);
        snprintf(row->op, sizeof row->op, "%s", cs->op);
        snprintf(row->dtype_in, sizeof row->dtype_in, "%s", cs->dtype_in);
        row->m = cs->m;
        row->n = cs->n;
        row->k = cs->k;
        snprintf(row->input_dist, sizeof row->input_dist, "%s", cs->input_dist);
        snprintf(row->implementation, sizeof row->implementation, "%s", ranks[r].variant);
        row->max_tau = row->max_backward_err = row->max_ulp = NAN;
        uint64_t digests[64];
        int nd = 0;
        for (int t = 0; t < max_trials; t++) {
            const kcs_result_rec *x = &res[r * max_trials + t];
            if (strcmp(x->status, "skipped") == 0)
                continue;
            row->n_trials++;
            if (severity(x->verdict) > severity(row->verdict)) {
                snprintf(row->verdict, sizeof row->verdict, "%s", x->verdict);
                snprintf(row->signature, sizeof row->signature, "%s", x->signature);
            }
            if (strcmp(x->verdict, "within_tolerance") == 0)
                row->n_within++;
            if (!isnan(x->tau) && !(x->tau <= row->max_tau))
                row->max_tau = x->tau;
            if (!isnan(x->backward_err) && !(x->backward_err <= row->max_backward_err))
                row->max_backward_err = x->backward_err;
            if (!isnan(x->max_ulp) && !(x->max_ulp <= row->max_ulp))
                row->max_ulp = x->max_ulp;
            if (strcmp(x->status, "ok") == 0) {
                int seen = 0;
                for (int i = 0; i < nd; i++)
                    seen |= digests[i] == x->output_digest;
                if (!seen && nd < 64)
                    digests[nd++] = x->output_digest;
            }
        }
        row->distinct_digests = nd;
    }
}

void kcs_reduce_divergence(const kcs_case_rec *cs, const kcs_result_rec *res,
                           const double *samples, int n_ranks, int max_trials, int n_samples,
                           kcs_divergence_row *rows)
{
    int idx = 0;
    for (int a = 0; a < n_ranks; a++) {
        for (int b = a + 1; b < n_ranks; b++, idx++) {
            kcs_divergence_row *row = &rows[idx];
            memset(row, 0, sizeof *row);
            row->case_id = cs->case_id;
            row->rank_a = a;
            row->rank_b = b;
            row->k = cs->k;
            double dmax = 0.0, smax = 0.0;
            int any = 0;
            for (int i = 0; samples && i < n_samples; i++) {
                double x = samples[a * n_samples + i], y = samples[b * n_samples + i];
                if (isnan(x) || isnan(y))
                    continue;
                any = 1;
                dmax = fmax(dmax, fabs(x - y));
                smax = fmax(smax, fmax(fabs(x), fabs(y)));
            }
            row->max_abs_diff = any ? dmax : NAN;
            row->max_rel_diff = any && smax > 0.0 ? dmax / smax : (any ? 0.0 : NAN);
            int same = 1, compared = 0;
            for (int t = 0; t < max_trials; t++) {
                const kcs_result_rec *x = &res[a * max_trials + t], *y = &res[b * max_trials + t];
                if (strcmp(x->status, "ok") || strcmp(y->status, "ok"))
                    continue;
                compared = 1;
                same &= x->output_digest == y->output_digest;
            }
            row->identical = compared && same;
        }
    }
}
