/* The tables of kcs detect and their rendering by kcs reduce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_data.h"
#include "grow.h"
#include "h5out.h"
#include "report.h"
#include "spool.h"
#include "tolmodel.h"

static const kcs_field det_fields[] = {
    KCS_FIELD(kcs_det_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_row, contract, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_row, op, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_row, dtype_in, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_row, m, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_row, n, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_row, structure, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_row, eta, KCS_FIELD_F64),
    KCS_FIELD(kcs_det_row, detector, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_row, kind, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_row, magnitude, KCS_FIELD_F64),
    KCS_FIELD(kcs_det_row, trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_row, detected, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_row, p_detect, KCS_FIELD_F64),
    KCS_FIELD(kcs_det_row, magnitude_data, KCS_FIELD_F64),
};

static const kcs_field fa_fields[] = {
    KCS_FIELD(kcs_fa_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_fa_row, rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_fa_row, impl, KCS_FIELD_STR),
    KCS_FIELD(kcs_fa_row, conforming, KCS_FIELD_I32),
    KCS_FIELD(kcs_fa_row, detector, KCS_FIELD_STR),
    KCS_FIELD(kcs_fa_row, outputs, KCS_FIELD_I64),
    KCS_FIELD(kcs_fa_row, flagged, KCS_FIELD_I64),
};

static const kcs_field sum_fields[] = {
    KCS_FIELD(kcs_det_summary_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_summary_row, detector, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_summary_row, kind, KCS_FIELD_STR),
    KCS_FIELD(kcs_det_summary_row, fa_outputs, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_summary_row, fa_flagged, KCS_FIELD_I64),
    KCS_FIELD(kcs_det_summary_row, min_magnitude_99, KCS_FIELD_F64),
    KCS_FIELD(kcs_det_summary_row, usable, KCS_FIELD_I32),
};

#define NF(a) ((int)(sizeof a / sizeof a[0]))

const char *const kcs_detector_names[KCS_DETECTORS] = {
    "oracle", "digest", "torch", "freivalds-rig", "freivalds-prob", "freivalds-fixed"};

KCS_FIELD_TABLE(kcs_det_row_fields, det_fields)

KCS_FIELD_TABLE(kcs_fa_row_fields, fa_fields)

KCS_FIELD_TABLE(kcs_det_summary_row_fields, sum_fields)

static void curves(FILE *f, const kcs_det_row *rows, int64_t n, int64_t case_id, const char *kind)
{
    /* magnitudes in order of appearance, one column per detector */
    fprintf(f, "\n*%s-element corruption* — detection probability per magnitude (× η, and "
               "in units of the data: max |Δy| / the corrupted row's max |y|):\n\n"
               "| magnitude (× η) | relative to the row |",
            kind);
    for (int k = 0; k < KCS_DETECTORS; k++)
        fprintf(f, " %s |", kcs_detector_names[k]);
    fprintf(f, "\n|---:|---:|");
    for (int k = 0; k < KCS_DETECTORS; k++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int64_t i = 0; i < n; i++) {
        const kcs_det_row *x = &rows[i];
        if (x->case_id != case_id || strcmp(x->kind, kind) || strcmp(x->detector, "oracle"))
            continue;
        fprintf(f, "| %.3g | %.3g |", x->magnitude, x->magnitude_data);
        for (int k = 0; k < KCS_DETECTORS; k++) {
            double p = NAN;
            for (int64_t j = 0; j < n; j++) {
                const kcs_det_row *y = &rows[j];
                if (y->case_id == case_id && !strcmp(y->kind, kind) &&
                    !strcmp(y->detector, kcs_detector_names[k]) && y->magnitude == x->magnitude)
                    p = y->p_detect;
            }
            fprintf(f, " %.3f |", p);
        }
        fprintf(f, "\n");
    }
}

static int render(FILE *f, const kcs_reduce_opts *o, const kcs_det_row *rows, int64_t n,
                  const kcs_fa_row *fa, int64_t nfa, const kcs_det_summary_row *sm, int64_t nsm,
                  const char *study_name)
{
    fprintf(f, "# kcs detection report: %s\n\n- dataset: `%s` (kcs detect)\n\n", study_name,
            o->inputs[0]);
    fprintf(f, "Errors injected into a conforming output at magnitudes m·η (η the contract's "
               "tolerance; per element scaled by (|A||B|)_ij for componentwise contracts, as a "
               "Frobenius norm m·η·‖A‖‖B‖ for backward-error contracts), then judged by each "
               "detector. Magnitude 0 is every placement's own output: false alarms are counted "
               "on the placements the oracle judges conforming. A detector is *usable* when it "
               "reaches ≥ 99 %% detection at some magnitude with zero false alarms. Every detector "
               "judges the same injected outputs, so each magnitude is also stated in units of "
               "the data (the largest change relative to its row's largest |y|): one axis for "
               "every detector, on which the contract's own curve is no step at 1 by "
               "construction. The false-alarm intervals need many conforming outputs: "
               "`kcs detect --inputs 250` on 4 conforming placements judges 1000.\n\n");
    int64_t last = -1;
    for (int64_t i = 0; i < n; i++) {
        const kcs_det_row *x = &rows[i];
        if (x->case_id == last)
            continue;
        last = x->case_id;
        fprintf(f, "## Case %lld: %s %s %lld×%lld×%lld (%s, η = %.3g)\n\n", (long long)x->case_id,
                x->contract, x->dtype_in, (long long)x->m, (long long)x->n, (long long)x->k,
                x->structure, x->eta);
        char fig[64];
        snprintf(fig, sizeof fig, "fig_detection_c%lld.png", (long long)x->case_id);
        if (kcs_report_has_figure(o->out_dir, fig))
            fprintf(f, "![detection curves, case %lld](%s)\n\n", (long long)x->case_id, fig);
        fprintf(f, "| detector | injection | false alarms (conforming outputs) [95 %% "
                   "Clopper–Pearson] | smallest "
                   "magnitude at ≥ 99 %% | usable |\n|---|---|---|---:|:-:|\n");
        for (int64_t j = 0; j < nsm; j++) {
            const kcs_det_summary_row *s = &sm[j];
            if (s->case_id != x->case_id)
                continue;
            double lo, hi;
            kcs_clopper_pearson(s->fa_flagged, s->fa_outputs, 0.95, &lo, &hi);
            fprintf(f, "| %s | %s | %lld/%lld [%.3g, %.3g] | ", s->detector, s->kind,
                    (long long)s->fa_flagged, (long long)s->fa_outputs, lo, hi);
            if (isnan(s->min_magnitude_99))
                fprintf(f, "not reached | ");
            else
                fprintf(f, "%.3g | ", s->min_magnitude_99);
            fprintf(f, "%s |\n", s->usable ? "yes" : "no");
        }
        curves(f, rows, n, x->case_id, "single");
        curves(f, rows, n, x->case_id, "dense");
        curves(f, rows, n, x->case_id, "row");
        /* mechanisms: rows with no injected magnitude */
        int any = 0;
        for (int64_t j = 0; j < n; j++)
            any |= rows[j].case_id == x->case_id && isnan(rows[j].magnitude);
        if (any) {
            fprintf(f, "\n*Mechanisms* — detection probability of outputs corrupted by a "
                       "mechanism rather than an injection (coerce-bf16: the first placement "
                       "on inputs rounded to bf16; stale-row: one row of the previous input "
                       "set's output), with their measured size relative to the row:\n\n"
                       "| mechanism | trials | relative to the row |");
            for (int k = 0; k < KCS_DETECTORS; k++)
                fprintf(f, " %s |", kcs_detector_names[k]);
            fprintf(f, "\n|---|---:|---:|");
            for (int k = 0; k < KCS_DETECTORS; k++)
                fprintf(f, "---:|");
            fprintf(f, "\n");
            for (int64_t j = 0; j < n; j++) {
                const kcs_det_row *y = &rows[j];
                if (y->case_id != x->case_id || !isnan(y->magnitude) ||
                    strcmp(y->detector, "oracle"))
                    continue;
                fprintf(f, "| %s | %lld | %.3g |", y->kind, (long long)y->trials,
                        y->magnitude_data);
                for (int k = 0; k < KCS_DETECTORS; k++)
                    for (int64_t q = 0; q < n; q++)
                        if (rows[q].case_id == x->case_id && !strcmp(rows[q].kind, y->kind) &&
                            !strcmp(rows[q].detector, kcs_detector_names[k]))
                            fprintf(f, " %.3f |", rows[q].p_detect);
                fprintf(f, "\n");
            }
        }
        fprintf(f, "\n**False alarms per placement** (its own outputs, no injection):\n\n"
                   "| placement | implementation | conforming |");
        for (int k = 0; k < KCS_DETECTORS; k++)
            fprintf(f, " %s |", kcs_detector_names[k]);
        fprintf(f, "\n|---:|---|:-:|");
        for (int k = 0; k < KCS_DETECTORS; k++)
            fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int64_t j = 0; j < nfa; j++) {
            const kcs_fa_row *a = &fa[j];
            if (a->case_id != x->case_id || strcmp(a->detector, "oracle"))
                continue;
            fprintf(f, "| %d | %s | %s |", a->rank, a->impl, a->conforming ? "yes" : "no");
            for (int k = 0; k < KCS_DETECTORS; k++)
                for (int64_t q = 0; q < nfa; q++)
                    if (fa[q].case_id == a->case_id && fa[q].rank == a->rank &&
                        !strcmp(fa[q].detector, kcs_detector_names[k]))
                        fprintf(f, " %lld/%lld |", (long long)fa[q].flagged,
                                (long long)fa[q].outputs);
            fprintf(f, "\n");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "Tables: `detection.csv`, `detection_false_alarms.csv`, `detection_summary.csv` "
               "(and /analysis in the dataset).\n");
    return ferror(f) ? -1 : 0;
}

int kcs_detect_report(const kcs_reduce_opts *o, kcs_error *err)
{
    const char *path = o->inputs[0];
    kcs_det_row *rows = NULL;
    kcs_fa_row *fa = NULL;
    kcs_det_summary_row *sm = NULL;
    int64_t n = 0, nfa = 0, nsm = 0;
    char *name = NULL;
    int rc;
    if ((rc = kcs_h5in_table(path, "/analysis/detection", det_fields, NF(det_fields), sizeof *rows,
                             0, (void **)&rows, &n, err)) ||
        (rc = kcs_h5in_table(path, "/analysis/detection_false_alarms", fa_fields, NF(fa_fields),
                             sizeof *fa, 0, (void **)&fa, &nfa, err)) ||
        (rc = kcs_h5in_table(path, "/analysis/detection_summary", sum_fields, NF(sum_fields),
                             sizeof *sm, 0, (void **)&sm, &nsm, err)) ||
        (rc = kcs_h5in_root_str(path, "study_name", &name, err)))
        goto out;
    if ((rc = kcs_table_write(NULL, o->out_dir, "detection", det_fields, NF(det_fields),
                              sizeof *rows, rows, n, err)) ||
        (rc = kcs_table_write(NULL, o->out_dir, "detection_false_alarms", fa_fields,
                              NF(fa_fields), sizeof *fa, fa, nfa, err)) ||
        (rc = kcs_table_write(NULL, o->out_dir, "detection_summary", sum_fields, NF(sum_fields),
                              sizeof *sm, sm, nsm, err)))
        goto out;
    char report[4096], tmp[4200];
    snprintf(report, sizeof report, "%s/report.md", o->out_dir);
    kcs_plots_run(o, report, path, NULL);
    snprintf(tmp, sizeof tmp, "%s.partial", report);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rc = kcs_fail(err, KCS_E_IO, "%s: cannot create", tmp);
        goto out;
    }
    int w = render(f, o, rows, n, fa, nfa, sm, nsm, name ? name : "?");
    if (fclose(f) != 0 || w != 0 || rename(tmp, report) != 0) {
        remove(tmp);
        rc = kcs_fail(err, KCS_E_IO, "%s: cannot write the report", report);
        goto out;
    }
    if (!o->quiet)
        printf("kcs reduce: %s: detection curves of %lld rows -> %s\n", path, (long long)n,
               report);
out:
    KCS_FREE(rows, fa, sm, name);
    return rc;
}
