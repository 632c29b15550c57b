/* Per (case, rank) summaries over trials. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reduce.h"
#include "view.h"

/* Severity order: the worst verdict over trials is the (case, rank)'s. */
static int severity(const char *v)
{
    static const char *const order[] = {"", "within_tolerance", "not_claimed", "under_specified",
                                        "violation", "unavailable", "error"};
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
            if (!kcs_view_row_ran(x))
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
            if (kcs_status_of(x->status) == KCS_ST_OK)
                kcs_digest_seen(digests, &nd, 64, x->output_digest);
        }
        row->distinct_digests = nd;
    }
}
