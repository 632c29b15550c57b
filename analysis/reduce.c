/* kcs reduce: stream one dataset (or the merged view of several) case by
 * case into /analysis tables, CSV files, figures and report.md.
 * Pass 1 reads each case's results and samples once: verdicts, pairs,
 * signatures, baseline accumulators (and, when merging, the merged
 * dataset). Pass 2 re-reads only /results to count what the settled
 * tolerances flag. Nothing is ever loaded whole: the rows of the /analysis
 * tables wait in temporary files (spool.h). */
#define _GNU_SOURCE
#include "reduce.h"
#include "grow.h"

#include <unistd.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "baselines.h"
#include "detect_data.h"
#include "h5out.h"
#include "merge.h"
#include "outdir.h"
#include "recompute.h"
#include "report.h"
#include "signatures.h"
#include "spool.h"
#include "tolerances.h"
#include "view.h"

static int ensure_dir(const char *dir, kcs_error *err)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    return kcs_fail(err, KCS_E_IO, "%s: cannot create the report directory", dir);
}

enum { SP_VERDICTS = 0, SP_DIVERGENCE, SP_POINTS, SP_SIGNATURES, SP_N };

typedef struct reduce_state {
    const kcs_reduce_opts *o;
    kcs_view *v;
    kcs_spool sp[SP_N];
    int sp_open;
    kcs_baselines *bl;
    kcs_tolset *ts;
    kcs_toljudge *tj;
    kcs_baseline_tables tables;
    kcs_sig_summary sig;
    kcs_recompute *rc;
    kcs_merge_out *merge;
    int64_t n_recomputed, n_not_recomputed;
    kcs_twin *twins;
    int n_twins;
    char recompute_why[160];
    kcs_result_rec *res;
    double *samples, *ref, *absref;
    kcs_verdict_row *vrows;
    kcs_divergence_row *drows;
    kcs_signature_row *srows;
} reduce_state;

static int open_spools(reduce_state *s, kcs_error *err)
{
    static const struct {
        const char *name;
        const kcs_field *(*fields)(int *n_p);
        size_t rec_size;
    } spools[SP_N] = {
        [SP_VERDICTS] = {"verdicts", kcs_verdict_row_fields, sizeof(kcs_verdict_row)},
        [SP_DIVERGENCE] = {"divergence", kcs_divergence_row_fields, sizeof(kcs_divergence_row)},
        [SP_POINTS] = {"divergence_points", kcs_point_row_fields, sizeof(kcs_point_row)},
        [SP_SIGNATURES] = {"signatures", kcs_signature_row_fields, sizeof(kcs_signature_row)},
    };
    for (int i = 0; i < SP_N; i++) {
        int nf;
        const kcs_field *f = spools[i].fields(&nf);
        int rc = kcs_spool_open(&s->sp[i], spools[i].name, f, nf, spools[i].rec_size, err);
        if (rc)
            return rc;
        s->sp_open = i + 1;
    }
    return 0;
}

static int alloc_case_buffers(reduce_state *s, kcs_error *err)
{
    kcs_view *v = s->v;
    size_t nr = (size_t)v->n_ranks, T = (size_t)(v->max_trials ? v->max_trials : 1);
    size_t ns = (size_t)(v->n_samples ? v->n_samples : 1);
    size_t np = nr * (nr - 1) / 2;
    s->res = calloc(nr * T, sizeof *s->res);
    s->samples = calloc(nr * ns, sizeof *s->samples);
    s->ref = calloc(ns, sizeof *s->ref);
    s->absref = calloc(ns, sizeof *s->absref);
    s->vrows = calloc(nr, sizeof *s->vrows);
    s->drows = calloc(np ? np : 1, sizeof *s->drows);
    s->srows = calloc(nr, sizeof *s->srows);
    if (!s->res || !s->samples || !s->ref || !s->absref || !s->vrows || !s->drows || !s->srows)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for one case of %zu ranks", nr);
    return 0;
}

/* Ranks of different datasets running the same implementation. */
static int find_twins(reduce_state *s, kcs_error *err)
{
    kcs_view *v = s->v;
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int a = 0; a < v->n_ranks; a++)
            for (int b = a + 1; b < v->n_ranks; b++) {
                const kcs_rank_rec *x = &v->ranks[a], *y = &v->ranks[b];
                if (v->rank_src[a] == v->rank_src[b] || strcmp(x->backend, y->backend) ||
                    strcmp(x->model, y->model) || strcmp(x->profile, y->profile) ||
                    strcmp(x->variant, y->variant))
                    continue;
                if (pass)
                    s->twins[n] = (kcs_twin){a, b, 0, 0};
                n++;
            }
        if (pass == 0 && n > 0 && !(s->twins = calloc((size_t)n, sizeof *s->twins)))
            return kcs_fail(err, KCS_E_NOMEM, "out of memory");
        s->n_twins = pass ? n : 0;
    }
    return 0;
}

static int pass1_case(reduce_state *s, int64_t c, kcs_error *err)
{
    kcs_view *v = s->v;
    int nr = v->n_ranks, T = v->max_trials, ns = v->n_samples;
    int have = 0, rc;
    if ((rc = kcs_view_read_case(v, c, s->res, s->samples, &have, err)))
        return rc;
    const kcs_case_rec *cs = &v->cases[c].rec;
    kcs_recomputed rec = {0};
    if (have && !s->o->no_recompute) {
        if ((rc = kcs_recompute_case(s->rc, v, c, s->ref, s->absref, &rec, err)))
            return rc;
        if (rec.ok) {
            s->n_recomputed++;
        } else {
            s->n_not_recomputed++;
            snprintf(s->recompute_why, sizeof s->recompute_why, "case %" PRId64 ": %s", c,
                     rec.why);
        }
    }
    kcs_reduce_verdicts(cs, s->res, v->ranks, nr, T, s->vrows);
    kcs_reduce_divergence(cs, s->res, have ? s->samples : NULL, rec.ok ? s->absref : NULL, nr, T,
                          ns, s->drows);
    int64_t np = (int64_t)nr * (nr - 1) / 2;
    kcs_error e = {0};
    const kcs_contract *k = kcs_recompute_contract(s->rc, v, c, &e);
    kcs_signatures_case(cs, k != NULL, k ? k->protocol : KCS_PROTO_ORACLE, s->res, T, s->drows,
                        v->ranks, nr, s->srows, &s->sig);
    if ((rc = kcs_spool_put(&s->sp[SP_VERDICTS], s->vrows, nr, err)) ||
        (rc = kcs_spool_put(&s->sp[SP_DIVERGENCE], s->drows, np, err)) ||
        (rc = kcs_spool_put(&s->sp[SP_SIGNATURES], s->srows, nr, err)) ||
        (rc = kcs_baselines_case(s->bl, cs, s->res, T, s->drows, have ? s->samples : NULL,
                                 rec.ok ? s->ref : NULL, ns, &s->sp[SP_POINTS], err)) ||
        (rc = kcs_tolset_case(s->ts, cs, s->res, T, have ? s->samples : NULL,
                              rec.ok ? s->ref : NULL, rec.ok ? s->absref : NULL, ns, err)))
        return rc;
    if (s->tj)
        kcs_toljudge_case(s->tj, cs, s->res, T);
    for (int i = 0; i < s->n_twins; i++) {
        kcs_twin *tw = &s->twins[i];
        int a = tw->a, b = tw->b, ran = 0;
        for (int t = 0; t < T; t++)
            ran |= (kcs_status_of(s->res[a * T + t].status) == KCS_ST_OK) && (kcs_status_of(s->res[b * T + t].status) == KCS_ST_OK);
        if (!ran)
            continue;
        tw->shared++;
        tw->identical += s->drows[a * nr - a * (a + 1) / 2 + (b - a - 1)].identical;
    }
    if (s->merge)
        rc = kcs_merge_out_case(s->merge, v, c, s->res, s->samples, have, err);
    return rc;
}

/* The merged dataset must not be written over one of its inputs. */
static int not_an_input(const kcs_view *v, const char *path, kcs_error *err)
{
    struct stat a, b;
    if (stat(path, &a) != 0)
        return 0;
    for (int i = 0; i < v->n_src; i++)
        if (stat(v->src[i].path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: the merged dataset would overwrite input %s; choose another "
                            "--merged",
                            path, v->src[i].path);
    return 0;
}

/* The root of analysis.h5: kcs's identity, and per input its path and the
 * content digests it was verified against (or that it had none). */
static int analysis_identity(reduce_state *s, kcs_h5out *o, const char *cmd, const char *merged,
                             const char *merged_shown, kcs_error *err)
{
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int rc = kcs_h5out_identity(o, created, "analysis", cmd, err);
    if (!rc)
        rc = kcs_h5out_attr_i64(o, "/", "n_sources", s->v->n_src, err);
    if (!rc && merged)
        rc = kcs_h5out_attr_str(o, "/", "merged", merged_shown, err);
    for (int i = 0; i <= s->v->n_src && !rc; i++) {
        const char *path = i < s->v->n_src ? s->v->src[i].path : merged;
        if (!path)
            break;
        char list[1024] = "", key[64];
        size_t used = 0;
        const char *names[] = {"root", "results", "samples", "cases", "provenance", "study",
                               "contracts"};
        for (size_t k = 0; k < sizeof names / sizeof *names && !rc; k++) {
            char *val = NULL, an[32];
            snprintf(an, sizeof an, "digest_%s", names[k]);
            if ((rc = kcs_h5in_root_str(path, an, &val, err)))
                break;
            if (val)
                used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0,
                                         "%s%s=%s", used ? "," : "", names[k], val);
            free(val);
        }
        if (rc)
            break;
        if (i < s->v->n_src) {
            snprintf(key, sizeof key, "source%d_path", i);
            rc = kcs_h5out_attr_str(o, "/", key, path, err);
            snprintf(key, sizeof key, "source%d_digests", i);
        } else {
            snprintf(key, sizeof key, "merged_digests");
        }
        if (!rc)
            rc = kcs_h5out_attr_str(o, "/", key, list[0] ? list : "none (unverified)", err);
    }
    return rc;
}

static int write_analysis(reduce_state *s, kcs_h5out *o, const char *dir, kcs_error *err)
{
    int rc = 0, nf;
    for (int i = 0; i < SP_N && !rc; i++)
        rc = kcs_spool_flush(&s->sp[i], o, dir, err);
    const kcs_baseline_tables *t = &s->tables;
    const struct {
        const char *name;
        const kcs_field *(*fields)(int *n_p);
        size_t rec_size;
        const void *rows;
        int64_t n;
    } tables[] = {
        {"baseline_groups", kcs_group_row_fields, sizeof *t->groups, t->groups, t->n_groups},
        {"baseline_fits", kcs_fit_row_fields, sizeof *t->fits, t->fits, t->n_fits},
        {"tolerances", kcs_tol_row_fields, sizeof *t->tols, t->tols, t->n_tols},
        {"tolerance_flags", kcs_flag_row_fields, sizeof *t->flags, t->flags, t->n_flags},
        {"torch_compare", kcs_torch_row_fields, sizeof *t->torch, t->torch, t->n_torch},
    };
    const kcs_field *f;
    for (size_t i = 0; i < sizeof tables / sizeof *tables && !rc; i++) {
        f = tables[i].fields(&nf);
        rc = kcs_table_write(o, dir, tables[i].name, f, nf, tables[i].rec_size, tables[i].rows,
                             tables[i].n, err);
    }
    if (!rc) {
        kcs_source_row *src = calloc((size_t)s->v->n_src, sizeof *src);
        if (!src)
            return kcs_fail(err, KCS_E_NOMEM, "out of memory");
        for (int i = 0; i < s->v->n_src; i++) {
            const kcs_view_source *x = &s->v->src[i];
            src[i].index = i;
            snprintf(src[i].path, sizeof src[i].path, "%s", x->path);
            snprintf(src[i].study_name, sizeof src[i].study_name, "%s", x->info.study_name);
            snprintf(src[i].plan_hash, sizeof src[i].plan_hash, "%s", x->info.plan_hash);
            snprintf(src[i].created, sizeof src[i].created, "%s", x->info.created);
            snprintf(src[i].software_version, sizeof src[i].software_version, "%s",
                     x->info.software_version);
            snprintf(src[i].git_hash, sizeof src[i].git_hash, "%s", x->info.git_hash);
            src[i].n_ranks = x->info.n_ranks;
            src[i].first_rank = x->first_rank;
            src[i].n_cases = x->info.n_cases;
            src[i].n_matched = x->n_matched;
        }
        f = kcs_source_row_fields(&nf);
        rc = kcs_table_write(o, dir, "sources", f, nf, sizeof *src, src, s->v->n_src, err);
        free(src);
    }
    if (!rc && o)
        rc = kcs_h5out_attr_i64(o, "/analysis", "recomputed_cases", s->n_recomputed, err);
    if (!rc && o)
        rc = kcs_h5out_attr_i64(o, "/analysis", "not_recomputed_cases", s->n_not_recomputed, err);
    if (!rc && o)
        rc = kcs_h5out_attr_str(o, "/analysis", "method",
                                "kcs reduce: baselines, signatures, verdicts (see report.md)",
                                err);
    return rc;
}

static void free_state(reduce_state *s)
{
    for (int i = 0; i < s->sp_open; i++)
        kcs_spool_close(&s->sp[i]);
    kcs_baselines_free(s->bl);
    kcs_tolset_free(s->ts);
    kcs_toljudge_free(s->tj);
    kcs_baseline_tables_free(&s->tables);
    kcs_sig_summary_free(&s->sig);
    kcs_recompute_free(s->rc);
    kcs_merge_out_abort(s->merge);
    kcs_view_close(s->v);
    KCS_FREE(s->res, s->samples, s->ref, s->absref, s->vrows, s->drows, s->srows, s->twins);
}

static char *join_command(const kcs_reduce_opts *o)
{
    size_t n = 64;
    for (int i = 0; i < o->n_inputs; i++)
        n += strlen(o->inputs[i]) + 1;
    const char *dir = o->final_dir ? o->final_dir : o->out_dir;
    n += strlen(dir) + 8;
    char *s = malloc(n);
    if (!s)
        return NULL;
    snprintf(s, n, "kcs reduce");
    for (int i = 0; i < o->n_inputs; i++) {
        strcat(s, " ");
        strcat(s, o->inputs[i]);
    }
    strcat(s, " -o ");
    strcat(s, dir);
    return s;
}

static int reduce_datasets(const kcs_reduce_opts *o, kcs_error *err)
{
    reduce_state s = {0};
    s.o = o;
    int rc = kcs_view_open(o->inputs, o->n_inputs, &s.v, err);
    if (rc)
        return rc;
    kcs_view *v = s.v;
    kcs_h5out *out = NULL;
    char merged[4096] = "", merged_shown[4096] = "", report[4096];
    const char *shown_dir = o->final_dir ? o->final_dir : o->out_dir;
    char *cmd = join_command(o);
    for (int i = 0; i < v->n_src; i++)
        if (!v->src[i].info.sealed)
            fprintf(stderr,
                    "kcs reduce: warning: %s carries no content digests (written by a kcs "
                    "before they existed): its raw data is unverified; rerun the study for a "
                    "verifiable dataset\n",
                    v->src[i].path);
    if ((rc = ensure_dir(o->out_dir, err)) || (rc = open_spools(&s, err)) ||
        (rc = alloc_case_buffers(&s, err)) ||
        (rc = kcs_baselines_new(v->n_ranks, v->ranks, &s.bl, err)) ||
        (rc = kcs_tolset_new(v->ranks, v->n_ranks, o->false_alarm, &s.ts, err)) ||
        (o->tolerances &&
         (rc = kcs_toljudge_open(o->tolerances, v->ranks, v->n_ranks, &s.tj, err))) ||
        (rc = kcs_sig_summary_init(&s.sig, v->n_ranks) ? kcs_fail(err, KCS_E_NOMEM, "out of memory") : 0) ||
        (rc = kcs_recompute_new(o->recompute_max > 0 ? o->recompute_max : 4e10, &s.rc, err)))
        goto out;
    if (v->n_src > 1 && (rc = find_twins(&s, err)))
        goto out;
    if (v->n_src > 1) {
        if (o->merged_path) {
            snprintf(merged, sizeof merged, "%s", o->merged_path);
            snprintf(merged_shown, sizeof merged_shown, "%s", o->merged_path);
        } else {
            snprintf(merged, sizeof merged, "%s/merged.h5", o->out_dir);
            snprintf(merged_shown, sizeof merged_shown, "%s/merged.h5", shown_dir);
        }
        if ((rc = not_an_input(v, merged, err)) ||
            (rc = kcs_merge_out_open(merged, v, cmd, &s.merge, err)))
            goto out;
    }
    for (int64_t c = 0; c < v->n_cases && !rc; c++)
        rc = pass1_case(&s, c, err);
    if (rc)
        goto out;
    kcs_baselines_settle(s.bl);
    for (int64_t c = 0; c < v->n_cases && !rc; c++) {
        int have = 0;
        if (!(rc = kcs_view_read_case(v, c, s.res, NULL, &have, err)))
            kcs_baselines_count(s.bl, &v->cases[c].rec, s.res, v->max_trials);
    }
    if (rc || (rc = kcs_baselines_tables(s.bl, &s.tables, err)) ||
        (rc = kcs_tolset_settle(s.ts, err)))
        goto out;
    if (s.merge) {
        rc = kcs_merge_out_finish(s.merge, v, err);
        s.merge = NULL;
        if (rc)
            goto out;
    }
    snprintf(report, sizeof report, "%s/report.md", o->out_dir);
    kcs_report_data d = {
        .view = v,
        .merged_path = merged[0] ? merged_shown : NULL,
        .spools = s.sp,
        .tables = &s.tables,
        .sig = &s.sig,
        .n_recomputed = s.n_recomputed,
        .n_not_recomputed = s.n_not_recomputed,
        .recompute_why = s.recompute_why,
        .out_dir = o->out_dir,
        .twins = s.twins,
        .n_twins = s.n_twins,
        .tolset = s.ts,
        .judge = s.tj,
    };
    /* The raw dataset is only ever read: the analysis is a file of its own
     * (ARCHITECTURE.md), recording what it was computed from. */
    char apath[4096];
    snprintf(apath, sizeof apath, "%s/analysis.h5", o->out_dir);
    if ((rc = kcs_h5out_create(apath, &out, err)) ||
        (rc = analysis_identity(&s, out, cmd, merged[0] ? merged : NULL,
                                merged[0] ? merged_shown : NULL, err)) ||
        (rc = kcs_h5out_group(out, "/analysis", err)) ||
        (rc = write_analysis(&s, out, o->out_dir, err)))
        goto out;
    rc = kcs_h5out_close(out, err);
    out = NULL;
    if (rc)
        goto out;
    {
        char path[4096];
        snprintf(path, sizeof path, "%s/tolerances.json", o->out_dir);
        if ((rc = kcs_tolset_write_json(s.ts, path, o->inputs, o->n_inputs, err)))
            goto out;
        snprintf(path, sizeof path, "%s/tolerance_model.csv", o->out_dir);
        if ((rc = kcs_tolset_write_csv(s.ts, path, err)))
            goto out;
        if (s.tj && (rc = kcs_toljudge_write_csv(s.tj, o->out_dir, err)))
            goto out;
        if (s.tj)
            kcs_toljudge_warn(stderr, s.tj);
    }
    kcs_plots_run(o, report, apath, merged[0] ? merged : v->src[0].path);
    if ((rc = kcs_report_write(report, &d, err)))
        goto out;
    if (o->judged_json && s.tj)
        *o->judged_json = kcs_toljudge_json_members(s.tj);
    if (!o->quiet && !o->json)
        printf("kcs reduce: %s%s: %" PRId64 " cases x %d ranks -> %s/analysis.h5 (%s), "
               "%s/report.md\n",
               v->n_src > 1 ? "merged -> " : "", merged[0] ? merged_shown : v->src[0].path,
               v->n_cases, v->n_ranks, shown_dir,
               "verdicts, divergence, divergence_points, signatures, baseline_groups, "
               "baseline_fits, tolerances, tolerance_flags, torch_compare, sources",
               shown_dir);
out:
    if (out)
        kcs_h5out_abort(out);
    free(cmd);
    free_state(&s);
    return rc;
}

static int reduce_into(const kcs_reduce_opts *o, kcs_error *err)
{
    if (o->n_inputs == 1) {
        char *content = NULL;
        int rc = kcs_h5in_root_str(o->inputs[0], "content", &content, err);
        if (rc)
            return rc;
        int det = content && !strcmp(content, "detection");
        free(content);
        if (det && o->tolerances)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: a kcs detect dataset has no trials to judge with --tolerances",
                            o->inputs[0]);
        if (det) {
            if ((rc = ensure_dir(o->out_dir, err)))
                return rc;
            if ((rc = kcs_detect_report(o, err)))
                return rc;
            /* every report directory has a tolerances.json: a detection
             * dataset holds no conforming trials, so it recommends nothing */
            kcs_tolset *ts = NULL;
            char path[4096];
            snprintf(path, sizeof path, "%s/tolerances.json", o->out_dir);
            if (!(rc = kcs_tolset_new(NULL, 0, o->false_alarm, &ts, err)))
                rc = kcs_tolset_write_json(ts, path, o->inputs, o->n_inputs, err);
            kcs_tolset_free(ts);
            return rc;
        }
    }
    for (int i = 0; i < o->n_inputs; i++) {
        char *content = NULL;
        if (kcs_h5in_root_str(o->inputs[i], "content", &content, err) == 0 && content &&
            !strcmp(content, "detection")) {
            free(content);
            return kcs_fail(err, KCS_E_INVAL, "%s: a kcs detect dataset cannot be merged",
                            o->inputs[i]);
        }
        free(content);
    }
    return reduce_datasets(o, err);
}

int kcs_reduce_run(const kcs_reduce_opts *o, kcs_error *err)
{
    if (o->n_inputs < 1)
        return kcs_fail(err, KCS_E_INVAL, "no dataset to reduce");
    char dir[4096], tmp[4200];
    size_t n = (size_t)snprintf(dir, sizeof dir, "%s", o->out_dir);
    while (n > 1 && dir[n - 1] == '/')
        dir[--n] = '\0';
    for (int i = 0; i < o->n_inputs; i++) {
        struct stat a, b;
        if (stat(o->inputs[i], &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            return kcs_fail(err, KCS_E_INVAL, "%s: the report directory is an input", dir);
    }
    static const char *const ours[] = {"report.md", "tolerances.json", NULL};
    int rc = kcs_outdir_begin(dir, ours, "kcs report directory (no report.md)", "kcs reduce",
                              tmp, sizeof tmp, err);
    if (rc)
        return rc;
    kcs_reduce_opts in = *o;
    in.out_dir = tmp;
    in.final_dir = dir;
    if ((rc = reduce_into(&in, err))) {
        kcs_outdir_remove(tmp);
        return rc;
    }
    return kcs_outdir_publish(tmp, dir, err);
}
