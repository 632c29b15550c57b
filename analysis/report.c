/* The Markdown report of kcs reduce: header, sources, ranks, verdicts,
 * violations, cross-rank divergence (the baseline and signature sections
 * are in report_baselines.c). */
#include "report.h"
#include "order_book.h"
#include "tolerances.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *short_verdict(const char *v)
{
    if (strcmp(v, "within_tolerance") == 0)
        return "PASS";
    if (strcmp(v, "violation") == 0)
        return "VIOLATION";
    if (strcmp(v, "under_specified") == 0)
        return "UNDER-SPECIFIED";
    if (strcmp(v, "not_claimed") == 0)
        return "NOT CLAIMED";
    if (strcmp(v, "unavailable") == 0)
        return "unavailable";
    return v[0] ? v : "-";
}

static void sources_table(FILE *f, const kcs_report_data *d)
{
    const kcs_view *v = d->view;
    fprintf(f, "## Sources\n\nThe merged dataset `%s` combines %d datasets; ranks of dataset i "
               "are renumbered from its first rank, cases are matched by (contract, op, dtypes, "
               "shape, input distribution, seed) and their input digests agree.\n\n"
               "| # | dataset | study | plan | created | kcs | ranks | cases | shared |\n"
               "|---:|---|---|---|---|---|---|---:|---:|\n",
            d->merged_path, v->n_src);
    for (int s = 0; s < v->n_src; s++) {
        const kcs_view_source *x = &v->src[s];
        fprintf(f, "| %d | `%s` | %s | %s | %s | %s (%s) | %d–%d | %lld | %lld |\n", s, x->path,
                x->info.study_name, x->info.plan_hash, x->info.created, x->info.software_version,
                x->info.git_hash, x->first_rank, x->first_rank + x->info.n_ranks - 1,
                (long long)x->info.n_cases, (long long)x->n_matched);
    }
    fprintf(f, "\n");
}

static void ranks_table(FILE *f, const kcs_report_data *d)
{
    const kcs_view *v = d->view;
    fprintf(f, "## Ranks\n\n| rank | %shost | implementation | device | status |\n"
               "|---:|%s---|---|---|---|\n",
            v->n_src > 1 ? "source | " : "", v->n_src > 1 ? "---:|" : "");
    for (int r = 0; r < v->n_ranks; r++) {
        const kcs_rank_rec *x = &v->ranks[r];
        fprintf(f, "| %d | ", x->rank);
        if (v->n_src > 1)
            fprintf(f, "%d | ", v->rank_src[r]);
        fprintf(f, "%s | %s | %s | %s |\n", x->host, x->variant, x->model, x->status);
    }
    fprintf(f, "\n");
}

static void verdict_table(FILE *f, const kcs_report_data *d)
{
    kcs_spool *sp = &d->spools[0];
    int nr = d->view->n_ranks;
    kcs_verdict_row *v = malloc((size_t)nr * sizeof *v);
    if (!v)
        return;
    kcs_error e = {0};
    fprintf(f, "## Verdicts\n\nWorst verdict over trials, with τ = measured / η (τ ≤ 1 "
               "conforms).\n\n| case | contract | op | dtype | m×n×k | inputs |");
    for (int r = 0; r < nr; r++)
        fprintf(f, " rank %d |", r);
    fprintf(f, "\n|---:|---|---|---|---|---|");
    for (int r = 0; r < nr; r++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    int64_t n_cases = sp->n / (nr ? nr : 1);
    for (int64_t c = 0; c < n_cases && c < KCS_REPORT_MAX_ROWS; c++) {
        if (kcs_spool_get(sp, c * nr, nr, v, &e))
            break;
        fprintf(f, "| %lld | %s | %s | %s | %lld×%lld×%lld | %s |", (long long)v->case_id,
                v->contract, v->op, v->dtype_in, (long long)v->m, (long long)v->n,
                (long long)v->k, v->input_dist);
        for (int r = 0; r < nr; r++)
            fprintf(f, " %s τ=%.3g |", short_verdict(v[r].verdict), v[r].max_tau);
        fprintf(f, "\n");
    }
    if (n_cases > KCS_REPORT_MAX_ROWS)
        fprintf(f, "\n(%lld more cases in `verdicts.csv`.)\n", (long long)(n_cases - KCS_REPORT_MAX_ROWS));
    fprintf(f, "\n### Violations and their signatures\n\n");
    int64_t shown = 0, total = 0;
    enum { CH = 256 };
    kcs_verdict_row *buf = malloc(CH * sizeof *buf);
    for (int64_t first = 0; buf && first < sp->n; first += CH) {
        int64_t n = sp->n - first < CH ? sp->n - first : CH;
        if (kcs_spool_get(sp, first, n, buf, &e))
            break;
        for (int64_t i = 0; i < n; i++) {
            const kcs_verdict_row *x = &buf[i];
            if (strcmp(x->verdict, "within_tolerance") == 0 || !x->verdict[0] ||
                strcmp(x->verdict, "not_claimed") == 0)
                continue;
            total++;
            if (shown >= KCS_REPORT_MAX_ROWS)
                continue;
            shown++;
            fprintf(f,
                    "- case %lld (%s, k=%lld, %s), rank %d [%s]: **%s**%s%s (τ = %.3g, %d/%d "
                    "trials within)\n",
                    (long long)x->case_id, x->contract, (long long)x->k, x->input_dist, x->rank,
                    x->implementation, x->verdict, x->signature[0] ? ": " : "", x->signature,
                    x->max_tau, x->n_within, x->n_trials);
            /* an ordering contract's violation: the orders the ranks used */
            if (!strncmp(x->contract, "C-ORD-", 6)) {
                char *nm = kcs_order_book_name(d->orders, x->rank, x->op, x->dtype_in,
                                               !strcmp(x->op, "allreduce") ? (long)x->m
                                                                           : (long)x->k);
                if (nm)
                    fprintf(f, "  - summation order: %s\n", nm);
                free(nm);
            }
        }
    }
    if (!total)
        fprintf(f, "None: every rank conforms on every case.\n");
    else if (total > shown)
        fprintf(f, "\n(%lld more in `verdicts.csv`.)\n", (long long)(total - shown));
    fprintf(f, "\n");
    free(buf);
    free(v);
}

static void divergence_table(FILE *f, const kcs_report_data *d)
{
    kcs_spool *sp = &d->spools[1];
    fprintf(f, "## Cross-rank divergence\n\nTrial 0's sampled outputs: max |y_a − y_b|, the same "
               "relative to the largest sampled |y| and scaled by (|A||B|)_ij, the largest ULP "
               "distance, the fraction of sampled outputs that differ bitwise and where they "
               "differ; `=` marks bitwise-identical outputs on every trial.\n\n"
               "| case | k | ranks | max abs | max rel | max scaled | max ULP | differ | "
               "pattern | identical |\n|---:|---:|---|---:|---:|---:|---:|---:|---|:-:|\n");
    kcs_divergence_row x;
    kcs_error e = {0};
    for (int64_t i = 0; i < sp->n && i < KCS_REPORT_MAX_ROWS; i++) {
        if (kcs_spool_get(sp, i, 1, &x, &e))
            break;
        fprintf(f, "| %lld | %lld | %d–%d | %.3g | %.3g | %.3g | %.3g | %.2f | %s | %s |\n",
                (long long)x.case_id, (long long)x.k, x.rank_a, x.rank_b, x.max_abs_diff,
                x.max_rel_diff, x.max_scaled_diff, x.max_ulp_diff, x.frac_differ, x.pattern,
                x.identical ? "=" : "");
    }
    if (sp->n > KCS_REPORT_MAX_ROWS)
        fprintf(f, "\n(%lld more rows in `divergence.csv`.)\n",
                (long long)(sp->n - KCS_REPORT_MAX_ROWS));
    fprintf(f, "\n");
}

static int report_write(const char *path, const kcs_report_data *d, kcs_error *err);

int kcs_report_write(const char *path, const kcs_report_data *d0, kcs_error *err)
{
    kcs_order_book book;
    int rc = kcs_order_book_load(d0->view, &book, err);
    if (rc)
        return rc;
    kcs_report_data d = *d0;
    d.orders = &book;
    rc = report_write(path, &d, err);
    kcs_order_book_free(&book);
    return rc;
}

static int report_write(const char *path, const kcs_report_data *d, kcs_error *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create the report", tmp);
    const kcs_view *v = d->view;
    const kcs_store_info *in = &v->src[0].info;
    if (v->n_src == 1) {
        fprintf(f, "# kcs report: %s\n\n", in->study_name);
        fprintf(f,
                "- dataset: `%s` (schema %d, plan %s)\n- written by kcs %s (git %s) on %s\n"
                "- command: `%s`\n- %d ranks, %lld cases, up to %d trials each\n\n",
                v->src[0].path, in->schema_version, in->plan_hash, in->software_version,
                in->git_hash, in->created, in->command_line ? in->command_line : "", in->n_ranks,
                (long long)in->n_cases, in->max_trials);
    } else {
        fprintf(f, "# kcs report: merge of %d datasets\n\n- merged dataset: `%s`\n- %d ranks, "
                   "%lld cases, up to %d trials each\n\n",
                v->n_src, d->merged_path, v->n_ranks, (long long)v->n_cases, v->max_trials);
        sources_table(f, d);
    }
    for (int i = 0; i < v->n_src; i++)
        if (!v->src[i].info.sealed)
            fprintf(f, "> **Unverified raw data:** `%s` carries no content digests (written by a "
                       "kcs before they existed), so damage to it cannot be detected. Rerun "
                       "the study to get a verifiable dataset.\n\n",
                    v->src[i].path);
    if (d->judge)
        kcs_toljudge_report(f, d->judge);
    if (d->tolset)
        kcs_tolset_report(f, d->tolset, d->out_dir);
    ranks_table(f, d);
    if (d->n_twins) {
        fprintf(f, "### The same implementation in different datasets\n\nRanks of different "
                   "datasets that name the same backend, device model, profile and "
                   "implementation ran the same inputs: bitwise-identical outputs are "
                   "run-to-run (and site-to-site) reproducibility, differences are not.\n\n"
                   "| ranks | implementation | device | shared cases | bitwise identical |\n"
                   "|---|---|---|---:|---:|\n");
        for (int i = 0; i < d->n_twins; i++) {
            const kcs_twin *t = &d->twins[i];
            fprintf(f, "| %d, %d | %s | %s | %lld | %lld |\n", t->a, t->b, v->ranks[t->a].variant,
                    v->ranks[t->a].model, (long long)t->shared, (long long)t->identical);
        }
        fprintf(f, "\n");
    }
    verdict_table(f, d);
    kcs_report_baselines(f, d);
    kcs_report_signatures(f, d);
    kcs_report_orders(f, d);
    divergence_table(f, d);
    fprintf(f, "## Files\n\nEvery table of this report is in `analysis.h5` under `/analysis` "
               "(with the path and content digests of each dataset it was computed from) and "
               "as CSV here: verdicts, divergence, divergence_points, signatures, "
               "baseline_groups, baseline_fits, tolerance_flags, torch_compare, "
               "sources.\n");
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return kcs_fail(err, KCS_E_IO, "%s: cannot write the report", path);
    }
    return 0;
}
