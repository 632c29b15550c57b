/* The Markdown report of kcs reduce. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reduce.h"

static const char *short_verdict(const char *v)
{
    if (strcmp(v, "within_tolerance") == 0)
        return "PASS";
    if (strcmp(v, "violation") == 0)
        return "VIOLATION";
    if (strcmp(v, "under_specified") == 0)
        return "UNDER-SPECIFIED";
    if (strcmp(v, "unavailable") == 0)
        return "unavailable";
    return v[0] ? v : "-";
}

static void ranks_table(FILE *f, const kcs_report_data *d)
{
    fprintf(f, "## Ranks\n\n| rank | host | implementation | device | status |\n"
               "|---:|---|---|---|---|\n");
    for (int r = 0; r < d->info->n_ranks; r++) {
        const kcs_rank_rec *x = &d->ranks[r];
        fprintf(f, "| %d | %s | %s | %s | %s |\n", x->rank, x->host, x->variant, x->model,
                x->status);
    }
    fprintf(f, "\n");
}

static void verdict_table(FILE *f, const kcs_report_data *d)
{
    int nr = d->info->n_ranks;
    fprintf(f, "## Verdicts\n\nWorst verdict over trials, with τ = measured / η (τ ≤ 1 "
               "conforms).\n\n| case | contract | op | dtype | m×n×k | inputs |");
    for (int r = 0; r < nr; r++)
        fprintf(f, " rank %d |", r);
    fprintf(f, "\n|---:|---|---|---|---|---|");
    for (int r = 0; r < nr; r++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (int64_t i = 0; i + nr <= d->n_verdicts; i += nr) {
        const kcs_verdict_row *v = &d->verdicts[i];
        fprintf(f, "| %lld | %s | %s | %s | %lld×%lld×%lld | %s |", (long long)v->case_id,
                v->contract, v->op, v->dtype_in, (long long)v->m, (long long)v->n,
                (long long)v->k, v->input_dist);
        for (int r = 0; r < nr; r++)
            fprintf(f, " %s τ=%.3g |", short_verdict(v[r].verdict), v[r].max_tau);
        fprintf(f, "\n");
    }
    fprintf(f, "\n### Violations and their signatures\n\n");
    int any = 0;
    for (int64_t i = 0; i < d->n_verdicts; i++) {
        const kcs_verdict_row *v = &d->verdicts[i];
        if (strcmp(v->verdict, "within_tolerance") == 0)
            continue;
        any = 1;
        fprintf(f, "- case %lld (%s, k=%lld, %s), rank %d [%s]: **%s**%s%s (τ = %.3g, %d/%d "
                   "trials within)\n",
                (long long)v->case_id, v->contract, (long long)v->k, v->input_dist, v->rank,
                v->implementation, v->verdict, v->signature[0] ? ": " : "", v->signature,
                v->max_tau, v->n_within, v->n_trials);
    }
    if (!any)
        fprintf(f, "None: every rank conforms on every case.\n");
    fprintf(f, "\n");
}

static void divergence_table(FILE *f, const kcs_report_data *d)
{
    fprintf(f, "## Cross-rank divergence\n\nMax |y_a − y_b| over the sampled outputs (trial 0), "
               "relative to the largest sampled |y|; `=` marks bitwise-identical outputs on every "
               "trial.\n\n| case | k | ranks | max abs | max rel | identical |\n"
               "|---:|---:|---|---:|---:|:-:|\n");
    for (int64_t i = 0; i < d->n_div; i++) {
        const kcs_divergence_row *x = &d->div[i];
        fprintf(f, "| %lld | %lld | %d–%d | %.3g | %.3g | %s |\n", (long long)x->case_id,
                (long long)x->k, x->rank_a, x->rank_b, x->max_abs_diff, x->max_rel_diff,
                x->identical ? "=" : "");
    }
    fprintf(f, "\n");
}

int kcs_report_write(const char *path, const kcs_report_data *d, kcs_error *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create the report", tmp);
    const kcs_store_info *in = d->info;
    fprintf(f, "# kcs report: %s\n\n", in->study_name);
    fprintf(f, "- dataset: `%s` (schema %d, plan %s)\n- written by kcs %s (git %s) on %s\n"
               "- command: `%s`\n- %d ranks, %lld cases, up to %d trials each\n\n",
            d->dataset, in->schema_version, in->plan_hash, in->software_version, in->git_hash,
            in->created, in->command_line ? in->command_line : "", in->n_ranks,
            (long long)in->n_cases, in->max_trials);
    ranks_table(f, d);
    verdict_table(f, d);
    divergence_table(f, d);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return kcs_fail(err, KCS_E_IO, "%s: cannot write the report", path);
    }
    return 0;
}
