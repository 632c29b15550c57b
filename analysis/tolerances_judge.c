/* Judging a dataset with a given tolerances.json (tolerances.h): every
 * trial of every rank against the recommendation of its (op, dtype_in,
 * dtype_out, accumulator), eta(n, N) = eta0(n) * outputs rule. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "grow.h"
#include "reduce.h"
#include "tolerances.h"
#include "view.h"
#include "yamlx.h"

typedef struct jrec {
    char op[KCS_STR_SHORT], dtype_in[16], dtype_out[16], acc[16], metric[16];
    char inputs[KCS_STR_SHORT]; /* the input distribution fitted on ("" when not given) */
    kcs_tolfit fit; /* form, u, c, alpha, env_n/env_eta, n_min/n_max, outputs0, p */
    /* trials judged outside the recommendation's scope (kcs_toljudge_warn) */
    int64_t w_extrap, w_range, w_scale, w_k_lo, w_k_hi;
    int64_t w_outputs;          /* judged trials with N above valid.outputs_max */
    double w_n_lo, w_n_hi;
    char w_dist[KCS_STR_SHORT]; /* one input distribution of the w_scale trials */
} jrec;

typedef struct jcase {
    int64_t case_id, k;
    double outputs, eta;
    int32_t rank, trials, flagged, not_judged;
    double max_d;
} jcase;

struct kcs_toljudge {
    char *path;
    double p;
    jrec *rec;
    int n_rec;
    int nr;
    const kcs_rank_rec *ranks;
    int64_t *trials, *flagged, *no_rec, *out_of_range, *not_run, *extrapolated;
    jcase *cases;
    size_t n_cases, cap_cases;
};

static int rec_warning(const kcs_toljudge *j, const jrec *r, char *buf, size_t len);

void kcs_toljudge_free(kcs_toljudge *j)
{
    if (!j)
        return;
    for (int i = 0; i < j->n_rec; i++)
        kcs_tolfit_free(&j->rec[i].fit);
    KCS_FREE(j->rec, j->path, j->trials, j->flagged, j->no_rec, j->out_of_range, j->not_run,
             j->extrapolated, j->cases, j);
}

static int is_null(struct fy_node *n)
{
    if (!n || fy_node_get_type(n) != FYNT_SCALAR)
        return 0;
    size_t len = 0;
    const char *s = fy_node_get_scalar(n, &len);
    return s && len == 4 && !memcmp(s, "null", 4);
}

static void num(kcs_yctx *y, struct fy_node *map, const char *key, const char *field, double *v)
{
    char f[128];
    snprintf(f, sizeof f, "%s.%s", field, key);
    struct fy_node *n = kcs_yaml_get(y, map, key, true, f);
    *v = NAN;
    if (n && !is_null(n))
        kcs_yaml_num(y, n, f, v);
}

static void str(kcs_yctx *y, struct fy_node *map, const char *key, const char *field, char *buf,
                size_t len)
{
    char f[128];
    snprintf(f, sizeof f, "%s.%s", field, key);
    buf[0] = 0;
    kcs_yaml_str(y, kcs_yaml_get(y, map, key, true, f), f, buf, len);
}

static void parse_rec(kcs_yctx *y, struct fy_node *m, int i, double p, jrec *r)
{
    char field[64];
    snprintf(field, sizeof field, "recommendations[%d]", i);
    if (fy_node_get_type(m) != FYNT_MAPPING) {
        kcs_yaml_error(y, m, field, "must be a mapping");
        return;
    }
    kcs_tolfit *f = &r->fit;
    memset(f, 0, sizeof *f);
    f->p = p;
    str(y, m, "op", field, r->op, sizeof r->op);
    str(y, m, "dtype_in", field, r->dtype_in, sizeof r->dtype_in);
    str(y, m, "dtype_out", field, r->dtype_out, sizeof r->dtype_out);
    str(y, m, "acc", field, r->acc, sizeof r->acc);
    str(y, m, "metric", field, r->metric, sizeof r->metric);
    r->inputs[0] = 0;
    {
        char f[128];
        snprintf(f, sizeof f, "%s.inputs", field);
        struct fy_node *in = kcs_yaml_get(y, m, "inputs", false, f);
        if (in && !is_null(in))
            kcs_yaml_str(y, in, f, r->inputs, sizeof r->inputs);
    }
    char form[16] = "", rule[16] = "";
    str(y, m, "form", field, form, sizeof form);
    str(y, m, "outputs_rule", field, rule, sizeof rule);
    char fld[128];
    if (strcmp(r->metric, "scaled") && strcmp(r->metric, "abs") && strcmp(r->metric, "backward")) {
        snprintf(fld, sizeof fld, "%s.metric", field);
        kcs_yaml_error(y, kcs_yaml_get(y, m, "metric", false, fld), fld,
                       "'%s' is not a metric kcs judges (scaled, abs, backward)", r->metric);
    }
    f->gamma = 0.5; /* sqrt_log, the rule of version 1 files without an exponent */
    if (!strcmp(rule, "log_power")) {
        num(y, m, "outputs_exponent", field, &f->gamma);
        if (!(f->gamma > 0.0 && f->gamma <= 10.0)) {
            snprintf(fld, sizeof fld, "%s.outputs_exponent", field);
            kcs_yaml_error(y, kcs_yaml_get(y, m, "outputs_exponent", false, fld), fld,
                           "must be a number in (0, 10]");
        }
    } else if (rule[0] && strcmp(rule, "sqrt_log")) {
        snprintf(fld, sizeof fld, "%s.outputs_rule", field);
        kcs_yaml_error(y, kcs_yaml_get(y, m, "outputs_rule", false, fld), fld,
                       "'%s' is not known (log_power, sqrt_log)", rule);
    }
    f->form = !strcmp(form, "power") ? KCS_TOLFORM_POWER
              : !strcmp(form, "envelope") ? KCS_TOLFORM_ENVELOPE : KCS_TOLFORM_NONE;
    if (form[0] && f->form == KCS_TOLFORM_NONE) {
        snprintf(fld, sizeof fld, "%s.form", field);
        kcs_yaml_error(y, kcs_yaml_get(y, m, "form", false, fld), fld,
                       "'%s' is not a form (power, envelope)", form);
    }
    num(y, m, "u", field, &f->u);
    num(y, m, "c", field, &f->c);
    num(y, m, "alpha", field, &f->alpha);
    f->power_alpha = f->alpha;
    f->extrapolate = 1.0;
    snprintf(fld, sizeof fld, "%s.extrapolation", field);
    struct fy_node *xn = kcs_yaml_get(y, m, "extrapolation", false, fld);
    if (xn && !is_null(xn) && kcs_yaml_num(y, xn, fld, &f->extrapolate) &&
        !(f->extrapolate >= 1.0 && isfinite(f->extrapolate)))
        kcs_yaml_error(y, xn, fld, "must be a finite number >= 1");
    snprintf(fld, sizeof fld, "%s.valid", field);
    struct fy_node *v = kcs_yaml_get(y, m, "valid", true, fld);
    if (v && fy_node_get_type(v) == FYNT_MAPPING) {
        num(y, v, "n_min", fld, &f->n_min);
        num(y, v, "n_max", fld, &f->n_max);
        num(y, v, "outputs_fitted", fld, &f->outputs0);
        /* the largest validated output count (files before it: N0 only) */
        char of[160];
        snprintf(of, sizeof of, "%s.outputs_max", fld);
        struct fy_node *om = kcs_yaml_get(y, v, "outputs_max", false, of);
        f->outputs_max = f->outputs0;
        if (om && !is_null(om) && kcs_yaml_num(y, om, of, &f->outputs_max) &&
            !(f->outputs_max >= f->outputs0))
            kcs_yaml_error(y, om, of, "must be >= outputs_fitted");
    } else if (v) {
        kcs_yaml_error(y, v, fld, "must be a mapping");
    }
    snprintf(fld, sizeof fld, "%s.envelope", field);
    struct fy_node *e = kcs_yaml_get(y, m, "envelope", f->form == KCS_TOLFORM_ENVELOPE, fld);
    if (e && fy_node_get_type(e) == FYNT_SEQUENCE) {
        int n = fy_node_sequence_item_count(e);
        f->env_n = calloc((size_t)(n ? n : 1), sizeof *f->env_n);
        f->env_eta = calloc((size_t)(n ? n : 1), sizeof *f->env_eta);
        if (!f->env_n || !f->env_eta) {
            kcs_yaml_error(y, e, fld, "out of memory");
            return;
        }
        void *it = NULL;
        struct fy_node *pt;
        int j = 0;
        while ((pt = fy_node_sequence_iterate(e, &it))) {
            char pf[160];
            snprintf(pf, sizeof pf, "%s[%d]", fld, j);
            if (fy_node_get_type(pt) != FYNT_SEQUENCE || fy_node_sequence_item_count(pt) != 2) {
                kcs_yaml_error(y, pt, pf, "must be [n, eta0]");
            } else if (kcs_yaml_num(y, fy_node_sequence_get_by_index(pt, 0), pf, &f->env_n[j]) &&
                       kcs_yaml_num(y, fy_node_sequence_get_by_index(pt, 1), pf, &f->env_eta[j])) {
                if (!(f->env_eta[j] > 0.0) || !(f->env_n[j] > 0.0) ||
                    (j > 0 && !(f->env_n[j] > f->env_n[j - 1])))
                    kcs_yaml_error(y, pt, pf, "needs n > 0 increasing and eta0 > 0");
            }
            j++;
        }
        f->n_env = j;
    } else if (e) {
        kcs_yaml_error(y, e, fld, "must be a list of [n, eta0]");
    }
    if (f->form == KCS_TOLFORM_POWER) {
        if (!(f->c > 0.0) || !isfinite(f->alpha) || !(f->u > 0.0))
            kcs_yaml_error(y, m, field, "a power form needs c > 0, a finite alpha and u > 0");
        /* the validity range as a two-point envelope for range checks */
        if (!f->env_n || f->n_env < 1) {
            free(f->env_n);
            free(f->env_eta);
            f->env_n = malloc(2 * sizeof *f->env_n);
            f->env_eta = malloc(2 * sizeof *f->env_eta);
            if (f->env_n && f->env_eta) {
                f->env_n[0] = f->n_min, f->env_n[1] = f->n_max;
                f->env_eta[0] = f->env_eta[1] = 1.0;
                f->n_env = f->n_max > f->n_min ? 2 : 1;
            }
        }
    }
    if (f->form == KCS_TOLFORM_ENVELOPE && f->n_env < 1)
        kcs_yaml_error(y, m, field, "an envelope form needs at least one point");
    if (!(f->n_min > 0.0) || !(f->n_max >= f->n_min))
        kcs_yaml_error(y, m, field, "valid.n_min and valid.n_max must be positive, n_min <= n_max");
    if (!(f->outputs0 >= 1.0))
        kcs_yaml_error(y, m, field, "valid.outputs_fitted must be >= 1");
}

int kcs_toljudge_open(const char *path, const kcs_rank_rec *ranks, int n_ranks,
                      kcs_toljudge **j_p, kcs_error *err)
{
    kcs_yctx y;
    int rc = kcs_yaml_open(&y, path, err);
    if (rc)
        return rc;
    kcs_toljudge *j = calloc(1, sizeof *j);
    if (!j) {
        kcs_yaml_close(&y);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    j->path = strdup(path);
    j->nr = n_ranks;
    j->ranks = ranks;
    size_t nr = (size_t)(n_ranks ? n_ranks : 1);
    j->trials = calloc(nr, sizeof *j->trials);
    j->flagged = calloc(nr, sizeof *j->flagged);
    j->no_rec = calloc(nr, sizeof *j->no_rec);
    j->out_of_range = calloc(nr, sizeof *j->out_of_range);
    j->not_run = calloc(nr, sizeof *j->not_run);
    j->extrapolated = calloc(nr, sizeof *j->extrapolated);
    if (!j->path || !j->trials || !j->flagged || !j->no_rec || !j->out_of_range || !j->not_run ||
        !j->extrapolated) {
        kcs_yaml_close(&y);
        kcs_toljudge_free(j);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    struct fy_node *root = kcs_yaml_root(&y);
    char fmt[32] = "";
    str(&y, root, "format", "", fmt, sizeof fmt);
    if (fmt[0] && strcmp(fmt, "kcs-tolerances"))
        kcs_yaml_error(&y, kcs_yaml_get(&y, root, "format", false, "format"), "format",
                       "'%s' is not kcs-tolerances", fmt);
    double version = NAN;
    num(&y, root, "version", "", &version);
    if (!isnan(version) && version != 1.0)
        kcs_yaml_error(&y, kcs_yaml_get(&y, root, "version", false, "version"), "version",
                       "version %g is not supported (1)", version);
    num(&y, root, "false_alarm_target", "", &j->p);
    if (!(j->p > 0.0 && j->p < 1.0))
        kcs_yaml_error(&y, kcs_yaml_get(&y, root, "false_alarm_target", false, "x"),
                       "false_alarm_target", "must be in (0, 1)");
    struct fy_node *recs = kcs_yaml_get(&y, root, "recommendations", true, "recommendations");
    if (recs && fy_node_get_type(recs) == FYNT_SEQUENCE) {
        int n = fy_node_sequence_item_count(recs);
        j->rec = calloc((size_t)(n ? n : 1), sizeof *j->rec);
        if (!j->rec) {
            kcs_yaml_close(&y);
            kcs_toljudge_free(j);
            return kcs_fail(err, KCS_E_NOMEM, "out of memory");
        }
        void *it = NULL;
        struct fy_node *m;
        while ((m = fy_node_sequence_iterate(recs, &it)))
            parse_rec(&y, m, j->n_rec, j->p, &j->rec[j->n_rec]), j->n_rec++;
    } else if (recs) {
        kcs_yaml_error(&y, recs, "recommendations", "must be a list");
    }
    rc = kcs_yaml_finish(&y, err);
    kcs_yaml_close(&y);
    if (rc) {
        kcs_toljudge_free(j);
        return rc;
    }
    *j_p = j;
    return 0;
}

static jrec *find_rec(const kcs_toljudge *j, const kcs_case_rec *cs)
{
    for (int i = 0; i < j->n_rec; i++) {
        jrec *r = &j->rec[i];
        if (!strcmp(r->op, cs->op) && !strcmp(r->dtype_in, cs->dtype_in) &&
            !strcmp(r->dtype_out, cs->dtype_out) &&
            (!strcmp(r->acc, cs->dtype_acc) || !strcmp(r->acc, "any")))
            return r;
    }
    return NULL;
}

static double value(const jrec *r, const kcs_result_rec *x)
{
    return !strcmp(r->metric, "scaled") ? x->max_scaled
           : !strcmp(r->metric, "abs")  ? x->max_abs
                                        : x->backward_err;
}

void kcs_toljudge_case(kcs_toljudge *j, const kcs_case_rec *cs, const kcs_result_rec *res, int T)
{
    jrec *r = find_rec(j, cs);
    double outputs = kcs_case_outputs(cs);
    double eta = NAN;
    int extrap = r && ((double)cs->k < r->fit.n_min || (double)cs->k > r->fit.n_max);
    /* an absolute metric holds at the input scale it was fitted on */
    int other_scale = r && strcmp(r->metric, "scaled") && r->inputs[0] &&
                      strcmp(r->inputs, cs->input_dist);
    if (r)
        eta = kcs_tolfit_eta(&r->fit, (double)cs->k, outputs);
    int out_n = r && outputs > r->fit.outputs_max;
    for (int k = 0; k < j->nr; k++) {
        jcase c = {cs->case_id, cs->k, outputs, eta, k, 0, 0, 0, NAN};
        int any = 0;
        for (int t = 0; t < T; t++) {
            const kcs_result_rec *x = &res[k * T + t];
            if (!kcs_view_row_ran(x))
                continue;
            any = 1;
            if (strcmp(x->status, "ok")) {
                j->not_run[k]++;
                continue;
            }
            if (!r) {
                j->no_rec[k]++;
                c.not_judged++;
                continue;
            }
            if (extrap || isnan(eta)) {
                if (r->w_extrap + r->w_range == 0 || cs->k < r->w_k_lo)
                    r->w_k_lo = cs->k;
                if (r->w_extrap + r->w_range == 0 || cs->k > r->w_k_hi)
                    r->w_k_hi = cs->k;
            }
            if (isnan(eta)) {
                j->out_of_range[k]++;
                r->w_range++;
                c.not_judged++;
                continue;
            }
            r->w_extrap += extrap;
            if (out_n) {
                if (!r->w_outputs || outputs < r->w_n_lo)
                    r->w_n_lo = outputs;
                if (!r->w_outputs || outputs > r->w_n_hi)
                    r->w_n_hi = outputs;
                r->w_outputs++;
            }
            if (other_scale) {
                if (!r->w_scale)
                    snprintf(r->w_dist, sizeof r->w_dist, "%s", cs->input_dist);
                r->w_scale++;
            }
            double d = value(r, x);
            int fl = kcs_tol_flags(d, eta);
            j->trials[k]++;
            j->flagged[k] += fl;
            j->extrapolated[k] += extrap;
            c.trials++;
            c.flagged += fl;
            if (!(d <= c.max_d))
                c.max_d = d;
        }
        if (!any)
            continue;
        if (kcs_grow_z(&j->cases, j->n_cases, &j->cap_cases, sizeof *j->cases, 256))
            continue; /* the per-case CSV loses rows; the totals stay */
        j->cases[j->n_cases++] = c;
    }
}

int kcs_toljudge_write_csv(const kcs_toljudge *j, const char *dir, kcs_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/judged.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create", path);
    fprintf(f, "rank,implementation,trials,flagged,extrapolated,no_recommendation,out_of_range,"
               "not_run\n");
    for (int r = 0; r < j->nr; r++)
        fprintf(f, "%d,\"%s\",%lld,%lld,%lld,%lld,%lld,%lld\n", r, j->ranks[r].variant,
                (long long)j->trials[r], (long long)j->flagged[r], (long long)j->extrapolated[r],
                (long long)j->no_rec[r], (long long)j->out_of_range[r], (long long)j->not_run[r]);
    if (fclose(f) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", path);
    snprintf(path, sizeof path, "%s/judged_cases.csv", dir);
    if (!(f = fopen(path, "w")))
        return kcs_fail(err, KCS_E_IO, "%s: cannot create", path);
    fprintf(f, "case_id,rank,k,outputs,eta,max_divergence,trials,flagged,not_judged\n");
    for (size_t i = 0; i < j->n_cases; i++) {
        const jcase *c = &j->cases[i];
        fprintf(f, "%lld,%d,%lld,%.0f,%.6g,%.6g,%d,%d,%d\n", (long long)c->case_id, c->rank,
                (long long)c->k, c->outputs, c->eta, c->max_d, c->trials, c->flagged,
                c->not_judged);
    }
    if (fclose(f) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", path);
    return 0;
}

void kcs_toljudge_report(FILE *f, const kcs_toljudge *j)
{
    fprintf(f, "## Judged with given tolerances\n\nEvery trial against `%s` (false-alarm "
               "target p = %g per trial; η(n, N) = η0(n)·max(1, (ln(2N/p) / ln(2·N0/p))^γ) for "
               "a case of N outputs, γ the file's outputs_exponent (1/2 for the older sqrt_log rule); a trial is flagged when its divergence exceeds η or is "
               "NaN/Inf). Trials are not judged when no recommendation matches their (op, "
               "dtypes, accumulator) or their n lies outside its validity range (a power form "
               "extrapolates up to the factor its `extrapolation` states; those trials are "
               "counted apart). Per case: `judged_cases.csv`.\n\n| rank | implementation | "
               "trials judged | flagged | of them extrapolated | no recommendation | n out of "
               "range | did not run |\n|---:|---|---:|---:|---:|---:|---:|---:|\n",
            j->path, j->p);
    for (int r = 0; r < j->nr; r++)
        fprintf(f, "| %d | %s | %lld | %lld | %lld | %lld | %lld | %lld |\n", r,
                j->ranks[r].variant, (long long)j->trials[r], (long long)j->flagged[r],
                (long long)j->extrapolated[r], (long long)j->no_rec[r],
                (long long)j->out_of_range[r], (long long)j->not_run[r]);
    fprintf(f, "\n");
}

char *kcs_toljudge_json_members(const kcs_toljudge *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    kcs_toljudge_json(f, j);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    /* the object without its braces and newline */
    if (len >= 3 && buf[0] == '{') {
        memmove(buf, buf + 1, len - 1);
        len -= 1;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '}'))
            buf[--len] = 0;
        return buf;
    }
    free(buf);
    return NULL;
}

void kcs_toljudge_json(FILE *f, const kcs_toljudge *j)
{
    fprintf(f, "{\"tolerances\": ");
    kcs_json_str(f, j->path);
    fprintf(f, ", \"false_alarm_target\": %.10g, \"judged\": [", j->p);
    for (int r = 0; r < j->nr; r++) {
        fprintf(f, "%s{\"rank\": %d, \"implementation\": ", r ? ", " : "", r);
        kcs_json_str(f, j->ranks[r].variant);
        fprintf(f, ", \"trials\": %lld, \"flagged\": %lld, \"extrapolated\": %lld, "
                   "\"not_judged\": %lld, \"did_not_run\": %lld}",
                (long long)j->trials[r], (long long)j->flagged[r], (long long)j->extrapolated[r],
                (long long)(j->no_rec[r] + j->out_of_range[r]), (long long)j->not_run[r]);
    }
    fprintf(f, "], \"warnings\": [");
    char buf[2048];
    int w = 0;
    for (int i = 0; i < j->n_rec; i++)
        if (rec_warning(j, &j->rec[i], buf, sizeof buf)) {
            fprintf(f, "%s", w++ ? ", " : "");
            kcs_json_str(f, buf);
        }
    fprintf(f, "]}\n");
}

/* The warning about one recommendation's out-of-scope trials (0: none). */
static int rec_warning(const kcs_toljudge *j, const jrec *r, char *buf, size_t len)
{
    if (!r->w_extrap && !r->w_range && !r->w_scale && !r->w_outputs)
        return 0;
    char scale[KCS_STR_SHORT + 64];
    if (!strcmp(r->metric, "scaled"))
        snprintf(scale, sizeof scale, "relative to |A||B|, any input scale");
    else if (r->inputs[0])
        snprintf(scale, sizeof scale, "absolute, at the scale of its inputs: %s", r->inputs);
    else
        snprintf(scale, sizeof scale, "absolute, input scale not recorded");
    size_t w = 0;
#define ADD(...)                                                                              \
    do {                                                                                      \
        if (w < len)                                                                          \
            w += (size_t)snprintf(buf + w, len - w, __VA_ARGS__);                             \
    } while (0)
    ADD("%s: the tolerance for op %s, dtype_in %s, dtype_out %s, acc %s (metric %s; valid for "
        "k in [%.0f, %.0f] and N in [%.0f, %.0f] outputs, %s):",
        j->path, r->op, r->dtype_in, r->dtype_out, r->acc, r->metric, r->fit.n_min, r->fit.n_max,
        r->fit.outputs0, r->fit.outputs_max, scale);
    if (r->w_extrap)
        ADD(" %lld trials with k outside its validity range (k from %lld to %lld) were judged by "
            "extrapolating its power law;",
            (long long)r->w_extrap, (long long)r->w_k_lo, (long long)r->w_k_hi);
    if (r->w_range)
        ADD(" %lld trials with k outside its envelope were not judged;", (long long)r->w_range);
    if (r->w_outputs)
        ADD(" %lld trials with N beyond its validated output counts (N from %.0f to %.0f) were "
            "judged by extrapolating its outputs rule;",
            (long long)r->w_outputs, r->w_n_lo, r->w_n_hi);
    if (r->w_scale)
        ADD(" %lld trials on other inputs (%s%s) were judged with an absolute tolerance fitted at "
            "another input scale;",
            (long long)r->w_scale, r->w_dist, r->w_scale > 1 ? ", ..." : "");
    ADD(" trust those verdicts less");
#undef ADD
    return 1;
}

void kcs_toljudge_warn(FILE *f, const kcs_toljudge *j)
{
    char buf[2048];
    for (int i = 0; i < j->n_rec; i++)
        if (rec_warning(j, &j->rec[i], buf, sizeof buf))
            fprintf(f, "kcs reduce: warning: %s\n", buf);
}

/* One "key=value" item of a query: 1 when key matches (value copied). */
static int query_item(const char *item, const char *key, char *val, size_t len)
{
    size_t kl = strlen(key);
    if (strncmp(item, key, kl) || item[kl] != '=')
        return 0;
    snprintf(val, len, "%s", item + kl + 1);
    return 1;
}

int kcs_toljudge_query(const kcs_toljudge *j, const char *query, FILE *out, FILE *warn,
                       kcs_error *err)
{
    char op[KCS_STR_SHORT] = "", din[16] = "", dout[16] = "", acc[16] = "", inputs[64] = "";
    char ks[64] = "", ns[64] = "", buf[512];
    snprintf(buf, sizeof buf, "%s", query);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (!(query_item(it, "op", op, sizeof op) || query_item(it, "dtype_in", din, sizeof din) ||
              query_item(it, "dtype_out", dout, sizeof dout) ||
              query_item(it, "acc", acc, sizeof acc) ||
              query_item(it, "inputs", inputs, sizeof inputs) ||
              query_item(it, "k", ks, sizeof ks) || query_item(it, "outputs", ns, sizeof ns)))
            return kcs_fail(err, KCS_E_INVAL, "--query: '%s' is not one of op=, dtype_in=, "
                            "dtype_out=, acc=, inputs=, k=, outputs=", it);
    }
    if (!op[0] || !din[0] || !ks[0] || !ns[0])
        return kcs_fail(err, KCS_E_INVAL, "--query '%s': op=, dtype_in=, k= and outputs= are "
                        "required", query);
    char *end = NULL;
    double k = strtod(ks, &end);
    if (!end || *end || !(k >= 1.0) || !isfinite(k))
        return kcs_fail(err, KCS_E_INVAL, "--query: k=%s is not a number >= 1", ks);
    double n = strtod(ns, &end);
    if (!end || *end || !(n >= 1.0) || !isfinite(n))
        return kcs_fail(err, KCS_E_INVAL, "--query: outputs=%s is not a number >= 1", ns);
    const jrec *hit = NULL;
    int hits = 0;
    for (int i = 0; i < j->n_rec; i++) {
        const jrec *r = &j->rec[i];
        if (strcmp(r->op, op) || strcmp(r->dtype_in, din) || (dout[0] && strcmp(r->dtype_out, dout)) ||
            (acc[0] && strcmp(r->acc, acc) && strcmp(r->acc, "any")))
            continue;
        hit = r;
        hits++;
    }
    if (hits != 1)
        return kcs_fail(err, KCS_E_INVAL, "%s: %s recommendation for op=%s dtype_in=%s%s%s%s%s%s",
                        j->path, hits ? "more than one" : "no", op, din,
                        dout[0] ? " dtype_out=" : "", dout, acc[0] ? " acc=" : "", acc,
                        hits ? " (choose with dtype_out= or acc=)" : "");
    const kcs_tolfit *f = &hit->fit;
    double eta = kcs_tolfit_eta(f, k, n);
    int scaled = !strcmp(hit->metric, "scaled");
    int out_k = k < f->n_min || k > f->n_max;
    int out_n = n > f->outputs_max;
    int out_scale = !scaled && inputs[0] && hit->inputs[0] && strcmp(inputs, hit->inputs);
    char scale[KCS_STR_SHORT + 64];
    if (scaled)
        snprintf(scale, sizeof scale, "relative to |A||B|, any input scale");
    else if (hit->inputs[0])
        snprintf(scale, sizeof scale, "absolute, at the scale of its inputs: %s", hit->inputs);
    else
        snprintf(scale, sizeof scale, "absolute, input scale not recorded");
    char wbuf[1024] = "";
    if (out_k || out_n || out_scale) {
        size_t w = 0;
        w += (size_t)snprintf(wbuf + w, sizeof wbuf - w,
                              "%s: the tolerance for op %s, dtype_in %s, dtype_out %s, acc %s "
                              "(metric %s; valid for k in [%.0f, %.0f] and N in [%.0f, %.0f] "
                              "outputs, %s) asked outside its scope:",
                              j->path, hit->op, hit->dtype_in, hit->dtype_out, hit->acc,
                              hit->metric, f->n_min, f->n_max, f->outputs0, f->outputs_max, scale);
        if (out_k && w < sizeof wbuf)
            w += (size_t)snprintf(wbuf + w, sizeof wbuf - w,
                                  " k = %.0f is outside its validity range (%s);", k,
                                  isnan(eta) ? "no value there" : "the power law is extrapolated");
        if (out_n && w < sizeof wbuf)
            w += (size_t)snprintf(wbuf + w, sizeof wbuf - w,
                                  " N = %.0f outputs is beyond its validated output counts (the outputs "
                                  "rule is extrapolated);", n);
        if (out_scale && w < sizeof wbuf)
            w += (size_t)snprintf(wbuf + w, sizeof wbuf - w,
                                  " inputs %s are not those its absolute metric was fitted on;",
                                  inputs);
        if (w < sizeof wbuf)
            snprintf(wbuf + w, sizeof wbuf - w, " trust it less");
        fprintf(warn, "kcs reduce: warning: %s\n", wbuf);
    }
    fprintf(out, "{\"eta\": ");
    if (isfinite(eta))
        fprintf(out, "%.10g", eta);
    else
        fprintf(out, "null");
    fprintf(out, ", \"scale_free\": ");
    if (scaled && isfinite(eta))
        fprintf(out, "%.10g", eta);
    else
        fprintf(out, "null");
    fprintf(out, ", \"valid\": %s, \"warnings\": [", out_k || out_n || out_scale ? "false" : "true");
    if (wbuf[0])
        kcs_json_str(out, wbuf);
    fprintf(out, "],\n \"scope\": {\"op\": ");
    kcs_json_str(out, hit->op);
    fprintf(out, ", \"dtype_in\": ");
    kcs_json_str(out, hit->dtype_in);
    fprintf(out, ", \"dtype_out\": ");
    kcs_json_str(out, hit->dtype_out);
    fprintf(out, ", \"acc\": ");
    kcs_json_str(out, hit->acc);
    fprintf(out, ", \"metric\": ");
    kcs_json_str(out, hit->metric);
    fprintf(out, ", \"inputs\": ");
    if (hit->inputs[0])
        kcs_json_str(out, hit->inputs);
    else
        fprintf(out, "null");
    fprintf(out, ", \"k\": %.17g, \"k_range\": [%.17g, %.17g], \"outputs\": %.17g, "
                 "\"outputs_fitted\": %.17g, \"outputs_range\": [%.17g, %.17g], "
                 "\"outputs_exponent\": %.17g, \"input_scale\": ",
            k, f->n_min, f->n_max, n, f->outputs0, f->outputs0, f->outputs_max, f->gamma);
    kcs_json_str(out, scale);
    fprintf(out, "}}\n");
    return 0;
}
