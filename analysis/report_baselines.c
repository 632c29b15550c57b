/* Report sections: divergence baselines and ordering signatures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "order_book.h"

static void ci(FILE *f, const kcs_fit_row *x)
{
    if (isnan(x->alpha))
        fprintf(f, "–");
    else if (isnan(x->alpha_lo))
        fprintf(f, "%.3f", x->alpha);
    else
        fprintf(f, "%.3f [%.3f, %.3f]", x->alpha, x->alpha_lo, x->alpha_hi);
}

static int fit_is(const kcs_fit_row *x, int g, int a, int b, const char *metric)
{
    return x->group == g && x->rank_a == a && x->rank_b == b && !strcmp(x->metric, metric);
}

/* The fit of (group, pair, metric). baselines.c writes, per group and per
 * metric, the nr ranks, the population (-2) and the nr(nr-1)/2 pairs in
 * order, so the row's place is computed and checked; a scan is the
 * fallback. (A merged atlas of 55 ranks spent minutes here when every
 * lookup scanned every fit.) */
static const kcs_fit_row *find_fit(const kcs_baseline_tables *t, int g, int a, int b,
                                   const char *metric)
{
    if (t->n_groups > 0 && t->n_fits % t->n_groups == 0 && (t->n_fits / t->n_groups) % 2 == 0) {
        int64_t per = t->n_fits / t->n_groups, half = per / 2;
        int64_t nr = (int64_t)((sqrt(8.0 * (double)half - 7.0) - 1.0) / 2.0 + 0.5);
        int64_t off = -1;
        if (nr + 1 + nr * (nr - 1) / 2 == half) {
            if (b == -1 && a >= 0 && a < nr)
                off = a;
            else if (b == -1 && a == -2)
                off = nr;
            else if (a >= 0 && a < b && b < nr)
                off = nr + 1 + a * nr - a * (a + 1) / 2 + (b - a - 1);
        }
        for (int64_t gi = 0; off >= 0 && gi < t->n_groups; gi++) {
            if (t->groups[gi].group != g)
                continue;
            for (int m = 0; m < 2; m++) {
                const kcs_fit_row *x = &t->fits[gi * per + m * half + off];
                if (fit_is(x, g, a, b, metric))
                    return x;
            }
            break;
        }
    }
    for (int64_t i = 0; i < t->n_fits; i++)
        if (fit_is(&t->fits[i], g, a, b, metric))
            return &t->fits[i];
    return NULL;
}

static void pct(FILE *f, int64_t n, int64_t of)
{
    if (of <= 0)
        fprintf(f, "–");
    else
        fprintf(f, "%lld/%lld (%.1f %%)", (long long)n, (long long)of, 100.0 * (double)n / (double)of);
}

static void group_section(FILE *f, const kcs_report_data *d, const kcs_group_row *g)
{
    const kcs_baseline_tables *t = d->tables;
    int nr = d->view->n_ranks;
    fprintf(f, "### Group %d: %s, %s inputs → %s, accumulator %s, %s inputs\n\n", g->group, g->op,
            g->dtype_in, g->dtype_out, g->dtype_acc, g->input_dist);
    fprintf(f, "u = %.4g, n = k from %lld to %lld (%d values, %lld cases); reference population "
               "(within tolerance on every trial): ranks %s (%d).\n\n",
            g->u, (long long)g->k_min, (long long)g->k_max, g->n_k, (long long)g->n_cases,
            g->n_conforming ? g->conforming : "none", g->n_conforming);
    char fig[64];
    snprintf(fig, sizeof fig, "fig_divergence_g%d.png", g->group);
    if (kcs_report_has_figure(d->out_dir, fig))
        fprintf(f, "![divergence vs n, group %d](%s)\n\n", g->group, fig);
    fprintf(f, "**Against the oracle** (max over all outputs, every trial; c = divergence / "
               "(n·u)):\n\n| rank | implementation | conforming | α abs [95 %% CI] | "
               "α scaled [95 %% CI] | c abs geo-mean / max | c scaled geo-mean / max | points "
               "|\n|---:|---|:-:|---|---|---|---|---:|\n");
    for (int r = -2; r < nr; r++) {
        if (r == -1)
            continue;
        const kcs_fit_row *a = find_fit(t, g->group, r, -1, "abs");
        const kcs_fit_row *s = find_fit(t, g->group, r, -1, "scaled");
        if (!a || !s || a->n_points == 0)
            continue;
        if (r == -2)
            fprintf(f, "| all | %s | yes | ", a->impl_a);
        else
            fprintf(f, "| %d | %s | %s | ", r, a->impl_a, a->conforming_a ? "yes" : "no");
        ci(f, a);
        fprintf(f, " | ");
        ci(f, s);
        fprintf(f, " | %.3g / %.3g | %.3g / %.3g | %lld |\n", a->c_geomean, a->c_max,
                s->c_geomean, s->c_max, (long long)a->n_points);
    }
    fprintf(f, "\n**Rank pairs** (trial 0's sampled outputs; scaled by (|A||B|)_ij of the "
               "regenerated inputs):\n\n| ranks | implementations | α abs [95 %% CI] | α scaled "
               "[95 %% CI] | c abs geo-mean | bitwise-equal cases |\n|---|---|---|---|---:|---:|\n");
    int shown = 0;
    for (int a = 0; a < nr; a++)
        for (int b = a + 1; b < nr; b++) {
            const kcs_fit_row *x = find_fit(t, g->group, a, b, "abs");
            const kcs_fit_row *s = find_fit(t, g->group, a, b, "scaled");
            if (!x || !s || (x->n_points == 0 && x->n_zero == 0) || shown >= 60)
                continue;
            shown++;
            fprintf(f, "| %d–%d | %s / %s | ", a, b, x->impl_a, x->impl_b);
            ci(f, x);
            fprintf(f, " | ");
            ci(f, s);
            fprintf(f, " | %.3g | %lld |\n", x->c_geomean, (long long)x->n_zero);
        }
    fprintf(f, "\n**Per rank** (trials flagged by the contract's own η; by "
               "torch.testing.assert_close's defaults on trial 0's sampled outputs; the "
               "recommended tolerances are the model at the top of this report):\n\n"
               "| rank | implementation | conforming | trials | contract | torch (trial 0) "
               "|\n|---:|---|:-:|---:|---|---|\n");
    for (int64_t i = 0; i < t->n_flags; i++) {
        const kcs_flag_row *x = &t->flags[i];
        if (x->group != g->group || x->n_trials == 0)
            continue;
        fprintf(f, "| %d | %s | %s | %lld | ", x->rank, x->impl, x->conforming ? "yes" : "no",
                (long long)x->n_trials);
        pct(f, x->flagged_contract, x->n_trials);
        fprintf(f, " | ");
        pct(f, x->torch_flagged, x->torch_trials);
        fprintf(f, " |\n");
    }
    int any = 0;
    for (int64_t i = 0; i < t->n_torch; i++)
        any |= t->torch[i].group == g->group && t->torch[i].n_trials > 0;
    if (any) {
        const kcs_torch_row *x0 = NULL;
        for (int64_t i = 0; i < t->n_torch && !x0; i++)
            if (t->torch[i].group == g->group)
                x0 = &t->torch[i];
        fprintf(f, "\n**torch's default tolerance vs the contract's** on the conforming "
                   "implementations (trial 0; torch: |y − y_ref| ≤ atol + rtol·|y_ref| with rtol = "
                   "%g, atol = %g on every sampled output, y_ref the fp64 reference rounded to %s; "
                   "torch's defaults are not fitted to these data):\n\n| k | conforming trials | "
                   "torch flagged | elements torch-flagged | contract η flagged "
                   "|\n|---:|---:|---:|---:|---:|\n",
                x0->rtol, x0->atol, g->dtype_out);
        for (int64_t i = 0; i < t->n_torch; i++) {
            const kcs_torch_row *x = &t->torch[i];
            if (x->group != g->group)
                continue;
            fprintf(f, "| %lld | %lld | %.3f | %lld/%lld | %.3f |\n", (long long)x->k,
                    (long long)x->n_trials, x->torch_frac, (long long)x->elements_flagged,
                    (long long)x->elements, x->contract_frac);
        }
        snprintf(fig, sizeof fig, "fig_torch_g%d.png", g->group);
        if (kcs_report_has_figure(d->out_dir, fig))
            fprintf(f, "\n![torch vs kcs, group %d](%s)\n", g->group, fig);
    }
    fprintf(f, "\n");
}

void kcs_report_baselines(FILE *f, const kcs_report_data *d)
{
    const kcs_baseline_tables *t = d->tables;
    fprintf(f, "## Divergence baselines\n\nPer group of cases (op, dtypes, accumulator, input "
               "distribution), divergence as a function of the reduction length n = k: fitted "
               "exponent α of divergence ∝ n^α (least squares on log-log over every point, 95 %% "
               "interval from the slope's standard error and the t quantile with n − 2 degrees "
               "of freedom; zero divergences cannot enter a log fit and are counted apart), the "
               "normalized constant c = divergence / (n·u) (a description of the data, not a "
               "tolerance: the recommended tolerances are the model at the top of this report). "
               "*abs* is max |y − y'| over outputs; *scaled* divides each output's "
               "difference by (|A||B|)_ij first; *backward* is the normwise backward error. "
               "Rank-vs-oracle points come from /results (every output, every trial); "
               "rank-pair points from trial 0's sampled outputs in /samples.\n\n");
    if (d->n_recomputed || d->n_not_recomputed)
        fprintf(f, "|A||B| at the sampled positions comes from inputs regenerated from the "
                   "stored seeds and checked against /cases.input_digest: %lld cases "
                   "recomputed, %lld not%s%s.\n\n",
                (long long)d->n_recomputed, (long long)d->n_not_recomputed,
                d->n_not_recomputed ? " (last reason: " : "",
                d->n_not_recomputed ? d->recompute_why : "");
    if (d->n_not_recomputed)
        fprintf(f, ")\n\n");
    for (int64_t i = 0; i < t->n_groups; i++)
        group_section(f, d, &t->groups[i]);
}

void kcs_report_signatures(FILE *f, const kcs_report_data *d)
{
    const kcs_sig_summary *s = d->sig;
    const kcs_view *v = d->view;
    fprintf(f, "## Ordering signatures\n\nPer (case, rank): bitwise classes of the ranks on "
               "identical inputs (output digests of every trial), ULP spread against the other "
               "ranks and where outputs differ from the modal output (trial 0's samples). "
               "Classes: *run-to-run-nondeterministic* (a `repeat` case failed), "
               "*batch-variant* (a `batch_invariance` case failed), *schedule-variant* (bits "
               "differ from another rank's on the same inputs), *bitwise-deterministic* (repeat "
               "passed, bits equal to every other rank's), *schedule-invariant* (bits equal to "
               "every other rank's, determinism not measured by that case).\n\n");
    if (kcs_report_has_figure(d->out_dir, "fig_signatures.png"))
        fprintf(f, "![signature heatmap](fig_signatures.png)\n\n");
    fprintf(f, "| rank | implementation | determinism | ");
    for (int k = 0; k < KCS_SIG_NONE; k++)
        fprintf(f, "%s | ", kcs_sig_class_names[k]);
    fprintf(f, "max ULP vs reference | differ: rows/cols · tiles · everywhere · scattered |\n|---:|---|---|");
    for (int k = 0; k < KCS_SIG_NONE; k++)
        fprintf(f, "---:|");
    fprintf(f, "---:|---|\n");
    for (int r = 0; r < v->n_ranks; r++) {
        const char *det = s->repeat_cases[r] == 0 ? "unmeasured"
                          : s->repeat_fail[r]     ? "nondeterministic"
                                                  : "deterministic";
        fprintf(f, "| %d | %s | %s", r, v->ranks[r].variant, det);
        if (s->repeat_cases[r])
            fprintf(f, " (%lld/%lld repeat cases failed)", (long long)s->repeat_fail[r],
                    (long long)s->repeat_cases[r]);
        fprintf(f, " | ");
        for (int k = 0; k < KCS_SIG_NONE; k++)
            fprintf(f, "%lld | ", (long long)s->count[r * KCS_SIG_N + k]);
        fprintf(f, "%.3g | %lld · %lld · %lld · %lld |\n", s->max_ulp[r],
                (long long)s->pattern_rows[r], (long long)s->pattern_tiles[r],
                (long long)s->pattern_everywhere[r], (long long)s->pattern_scattered[r]);
    }
    /* the orders of the ranks that a signature says summed otherwise */
    int said = 0;
    for (int r = 0; r < v->n_ranks; r++) {
        int64_t nd = s->count[r * KCS_SIG_N + KCS_SIG_NONDET],
                bv = s->count[r * KCS_SIG_N + KCS_SIG_BATCH],
                sv = s->count[r * KCS_SIG_N + KCS_SIG_SCHEDULE];
        if (!nd && !bv && !sv)
            continue;
        if (!said++)
            fprintf(f, "\nThe summation orders of the ranks with a nondeterministic, batch- or "
                       "schedule-variant signature (`record_order: true`; their trees in the "
                       "order section):\n\n");
        char *o = kcs_order_book_rank(d->orders, r);
        fprintf(f, "- rank %d (%s):", r, v->ranks[r].variant);
        if (nd)
            fprintf(f, " %s in %lld cases;", kcs_sig_class_names[KCS_SIG_NONDET], (long long)nd);
        if (bv)
            fprintf(f, " %s in %lld cases;", kcs_sig_class_names[KCS_SIG_BATCH], (long long)bv);
        if (sv)
            fprintf(f, " %s in %lld cases;", kcs_sig_class_names[KCS_SIG_SCHEDULE],
                    (long long)sv);
        if (o)
            fprintf(f, " summed %s\n", o);
        else if (d->orders && d->orders->sources_with)
            fprintf(f, " its orders not recorded (record_order probes gemm, dot, reduce_sum, "
                       "layernorm and allreduce with k <= 4096)\n");
        else
            fprintf(f, " order not recorded; run with record_order: true\n");
        free(o);
    }
    fprintf(f, "\nEvery (case, rank) row is in `signatures.csv`.\n\n");
}
