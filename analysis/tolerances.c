/* Recommended tolerances: collection, fits, cross-validation, torch pairs,
 * tolerances.json, CSV and the report section (tolerances.h). The points
 * (one per trial, ~64 bytes) are kept in memory: O(trials), a few MiB for
 * the largest datasets the reducer has been measured on. */
#include "tolerances.h"
#include "grow.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "build_info.h"
#include "format.h"
#include "json.h"
#include "op.h"
#include "reduce.h"
#include "report.h"
#include "stats.h"
#include "view.h"

typedef struct tpt {
    double n, scaled, abs, outputs;
    double torch_stat;  /* trial 0: max_i |y - y_ref| - rtol |y_ref| (assert_close rules) */
    double absmax;      /* trial 0: max_i (|A||B|)_i over the sampled outputs (NaN: none) */
    double absmed;      /* trial 0: median of (|A||B|)_i over them */
    double relmed;      /* trial 0: median of |y_ref,i| / (|A||B|)_i */
    int64_t case_id;
    int32_t rank, trial, torch_ns;
} tpt;

typedef struct cvcount {
    int64_t trials, flagged, not_judged;
} cvcount;

/* held out in N: the fit sees N <= KCS_TOL_NSPLIT outputs, the judged
 * output counts above it (at most KCS_TOL_MAX_HN distinct ones) */
#define KCS_TOL_NSPLIT 4096.0
#define KCS_TOL_MAX_HN 16
#define KCS_TOL_BOOT_SEED 0x6b63732d746f6cull

typedef struct tkey {
    char op[KCS_STR_SHORT], dtype_in[16], dtype_out[16], acc[16];
    char inputs[128];
    double u;
    tpt *pts;
    size_t n, cap;
    int64_t *ran, *nonconf;
    /* settled */
    int *conf;
    int metric; /* 0 abs, 1 scaled */
    kcs_tolfit fit;
    int n_conf_ranks;
    int64_t conf_trials;
    cvcount insample, heldout, loio, bad;
    int loio_folds;
    double rtol_def;
    double *torch_atol;          /* per fit.env_n */
    double *torch_loose;         /* per fit.env_n: the pair's bound / eta's at a median output */
    int torch_ok;
    cvcount torch_heldout;
    int64_t bad0_trials, bad0_eta, bad0_torch; /* non-conforming ranks, trial 0 */
    double boot_lo, boot_hi; /* eta0's bootstrap interval, as factors of the point fit */
    int boot_used;
    /* out of sample in N: fit on N <= KCS_TOL_NSPLIT, judged per larger N */
    int n_hn;
    double hn_N[KCS_TOL_MAX_HN];
    cvcount hn[KCS_TOL_MAX_HN];
    int hn_form; /* the form of that fit (NONE: too little data at small N) */
} tkey;

struct kcs_tolset {
    int nr;
    const kcs_rank_rec *ranks;
    int *impl; /* rank -> implementation index */
    double p;
    tkey *k;
    int nk, cap;
};

static const char *const metric_name[2] = {"abs", "scaled"};

double kcs_case_outputs(const kcs_case_rec *cs)
{
    kcs_call c;
    memset(&c, 0, sizeof c);
    if (kcs_op_parse(cs->op, &c.op) != 0)
        return 0.0;
    c.m = cs->m;
    c.n = cs->n;
    c.k = cs->k;
    c.batch = cs->batch;
    return (double)kcs_op_out_len(&c);
}

int kcs_tolset_new(const kcs_rank_rec *ranks, int n_ranks, double p, kcs_tolset **ts_p,
                   kcs_error *err)
{
    kcs_tolset *ts = calloc(1, sizeof *ts);
    if (!ts || !(ts->impl = calloc((size_t)(n_ranks ? n_ranks : 1), sizeof *ts->impl))) {
        free(ts);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    ts->nr = n_ranks;
    ts->ranks = ranks;
    ts->p = p > 0.0 && p < 1.0 ? p : KCS_TOL_P;
    /* ranks running the same implementation (merged datasets) are one cluster */
    for (int r = 0; r < n_ranks; r++) {
        ts->impl[r] = r;
        for (int q = 0; q < r; q++)
            if (!strcmp(ranks[q].variant, ranks[r].variant) &&
                !strcmp(ranks[q].backend, ranks[r].backend) &&
                !strcmp(ranks[q].model, ranks[r].model) &&
                !strcmp(ranks[q].profile, ranks[r].profile)) {
                ts->impl[r] = ts->impl[q];
                break;
            }
    }
    *ts_p = ts;
    return 0;
}

void kcs_tolset_free(kcs_tolset *ts)
{
    if (!ts)
        return;
    for (int i = 0; i < ts->nk; i++) {
        tkey *k = &ts->k[i];
        KCS_FREE(k->pts, k->ran, k->nonconf, k->conf, k->torch_atol, k->torch_loose);
        kcs_tolfit_free(&k->fit);
    }
    free(ts->k);
    free(ts->impl);
    free(ts);
}

static tkey *find_key(kcs_tolset *ts, const kcs_case_rec *cs)
{
    for (int i = 0; i < ts->nk; i++) {
        tkey *k = &ts->k[i];
        if (!strcmp(k->op, cs->op) && !strcmp(k->dtype_in, cs->dtype_in) &&
            !strcmp(k->dtype_out, cs->dtype_out) && !strcmp(k->acc, cs->dtype_acc))
            return k;
    }
    if (kcs_grow(&ts->k, ts->nk, &ts->cap, sizeof *ts->k, 8))
        return NULL;
    tkey *k = &ts->k[ts->nk];
    memset(k, 0, sizeof *k);
    k->boot_lo = k->boot_hi = NAN;
    k->ran = calloc((size_t)ts->nr + 1, sizeof *k->ran);
    k->nonconf = calloc((size_t)ts->nr + 1, sizeof *k->nonconf);
    k->conf = calloc((size_t)ts->nr + 1, sizeof *k->conf);
    if (!k->ran || !k->nonconf || !k->conf) {
        free(k->ran), free(k->nonconf), free(k->conf);
        return NULL;
    }
    ts->nk++;
    snprintf(k->op, sizeof k->op, "%s", cs->op);
    snprintf(k->dtype_in, sizeof k->dtype_in, "%s", cs->dtype_in);
    snprintf(k->dtype_out, sizeof k->dtype_out, "%s", cs->dtype_out);
    snprintf(k->acc, sizeof k->acc, "%s", cs->dtype_acc);
    k->u = kcs_acc_unit_roundoff(cs->dtype_acc);
    double atol;
    kcs_torch_tol(cs->dtype_out, &k->rtol_def, &atol);
    return k;
}

/* torch.testing.assert_close's element rule (equal_nan=False): equal values
 * (same-signed infinities included) pass, a NaN on either side fails,
 * otherwise |y - e| <= atol + rtol |e|. Returns the smallest atol that
 * passes the element at this rtol (-inf: passes at any atol, +inf: never). */
static double torch_need(double y, double e, double rtol)
{
    if (y == e)
        return -INFINITY;
    if (isnan(y) || isnan(e) || isinf(y) || isinf(e))
        return INFINITY;
    return fabs(y - e) - rtol * fabs(e);
}

int kcs_tolset_case(kcs_tolset *ts, const kcs_case_rec *cs, const kcs_result_rec *res, int T,
                    const double *samples, const double *ref, const double *absref, int ns,
                    kcs_error *err)
{
    tkey *k = find_key(ts, cs);
    if (!k)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory (tolerances)");
    if (!strstr(k->inputs, cs->input_dist)) {
        size_t len = strlen(k->inputs);
        snprintf(k->inputs + len, sizeof k->inputs - len, "%s%s", len ? "," : "",
                 cs->input_dist);
    }
    kcs_format fout = KCS_FMT_FP64;
    int fout_ok = kcs_format_parse(cs->dtype_out, &fout) == 0;
    double outputs = kcs_case_outputs(cs);
    double absmed = NAN, relmed = NAN;
    if (absref && ref && ns > 0) {
        double *a = malloc((size_t)ns * sizeof *a), *q = malloc((size_t)ns * sizeof *q);
        size_t na = 0;
        for (int j = 0; a && q && j < ns; j++)
            if (absref[j] > 0.0 && isfinite(absref[j]) && isfinite(ref[j])) {
                a[na] = absref[j];
                q[na++] = fabs(ref[j]) / absref[j];
            }
        if (na > 0) {
            absmed = kcs_quantile(a, na, 0.5);
            relmed = kcs_quantile(q, na, 0.5);
        }
        free(a);
        free(q);
    }
    for (int r = 0; r < ts->nr; r++)
        for (int t = 0; t < T; t++) {
            const kcs_result_rec *x = &res[r * T + t];
            if (!kcs_view_row_ran(x))
                continue;
            k->ran[r]++;
            k->nonconf[r] += strcmp(x->verdict, "within_tolerance") != 0;
            if (strcmp(x->status, "ok"))
                continue;
            if (kcs_grow_z(&k->pts, k->n, &k->cap, sizeof *k->pts, 256))
                return kcs_fail(err, KCS_E_NOMEM, "out of memory (tolerance points)");
            tpt *p = &k->pts[k->n++];
            p->n = (double)cs->k;
            p->scaled = x->max_scaled;
            p->abs = x->max_abs;
            p->outputs = outputs;
            p->case_id = cs->case_id;
            p->rank = r;
            p->trial = t;
            p->torch_stat = NAN;
            p->absmax = NAN;
            p->absmed = absmed;
            p->relmed = relmed;
            p->torch_ns = 0;
            if (t == 0 && samples && ref && fout_ok) {
                double worst = -INFINITY;
                int n = 0;
                for (int j = 0; j < ns; j++) {
                    double e = ref[j];
                    double er = kcs_format_round(fout, e, KCS_ROUND_DEFAULT);
                    worst = fmax(worst, torch_need(samples[r * ns + j], er, k->rtol_def));
                    if (absref && absref[j] > 0.0 && !(absref[j] <= p->absmax))
                        p->absmax = absref[j];
                    n++;
                }
                p->torch_stat = worst;
                p->torch_ns = n;
            }
        }
    return 0;
}

static double metric_of(const tkey *k, const tpt *p)
{
    return k->metric ? p->scaled : p->abs;
}

/* -1: not judged (n outside the validity range), 0: within, 1: flagged */
static int judge(const kcs_tolfit *f, double n, double outputs, double d)
{
    double eta = kcs_tolfit_eta(f, n, outputs);
    if (isnan(eta))
        return -1;
    return kcs_tol_flags(d, eta);
}

/* The whole procedure: the fit, eta0's bootstrap, the recommendation at
 * the bootstrap's upper bound (never below the point fit). */
static int fit_recommend(const kcs_tolpt *tp, size_t m, const unsigned char *use, double u,
                         double p, int strict, kcs_tolfit *f, double *lo, double *hi, int *used)
{
    double l, h;
    int nb;
    if (kcs_tolfit_make(tp, m, use, u, p, strict, f) < 0)
        return -1;
    if (f->form == KCS_TOLFORM_NONE) {
        if (lo)
            *lo = *hi = NAN, *used = 0;
        return 0;
    }
    if (kcs_tolfit_bootstrap(tp, m, use, f, KCS_TOL_BOOT_B, KCS_TOL_BOOT_SEED, KCS_TOL_BOOT_CONF,
                             &l, &h, &nb) < 0) {
        kcs_tolfit_free(f);
        return -1;
    }
    if (isfinite(h) && h > 1.0)
        kcs_tolfit_scale(f, h);
    if (lo)
        *lo = l, *hi = h, *used = nb;
    return 0;
}

static void count(cvcount *c, int v)
{
    if (v < 0)
        c->not_judged++;
    else
        c->trials++, c->flagged += v;
}

static int env_index(const kcs_tolfit *f, double n)
{
    for (int j = 0; j < f->n_env; j++)
        if (fabs(f->env_n[j] - n) <= 1e-9 * n)
            return j;
    return -1;
}

/* atol per fit.env_n: eta0(n_j) in the metric's units, times the largest
 * (|A||B|)_i of the conforming trial-0 samples at n_j for the scaled metric.
 * An output within eta is then within atol (rtol adds slack), so the pair
 * inherits eta's false-alarm rate on the outputs it covers. */
static void torch_atols(const tkey *k, const kcs_tolpt *tp, const size_t *idx, size_t m,
                        const unsigned char *use, const kcs_tolfit *f, double *atol)
{
    for (int j = 0; j < f->n_env; j++)
        atol[j] = k->metric ? NAN : f->env_eta[j];
    if (!k->metric)
        return;
    for (size_t i = 0; i < m; i++) {
        const tpt *q = &k->pts[idx[i]];
        if ((use && !use[i]) || q->trial != 0 || q->torch_ns <= 0 || isnan(q->absmax))
            continue;
        int j = env_index(f, tp[i].n);
        if (j >= 0 && !(q->absmax * f->env_eta[j] <= atol[j]))
            atol[j] = q->absmax * f->env_eta[j];
    }
}

/* the trial's own divergence (tp[i].d is brought to N0 outputs) */
#define RAW(i) metric_of(k, &k->pts[idx[i]])

static int settle_key(kcs_tolset *ts, tkey *k)
{
    int nr = ts->nr;
    k->n_conf_ranks = 0;
    for (int r = 0; r < nr; r++) {
        k->conf[r] = k->ran[r] > 0 && k->nonconf[r] == 0;
        k->n_conf_ranks += k->conf[r];
    }
    /* metric: scaled where the conforming trials have it, else abs */
    int64_t have = 0, all = 0;
    for (size_t i = 0; i < k->n; i++)
        if (k->conf[k->pts[i].rank]) {
            all++;
            have += !isnan(k->pts[i].scaled);
        }
    k->metric = all > 0 && have * 10 >= all * 9;
    /* the conforming points */
    size_t m = 0;
    for (size_t i = 0; i < k->n; i++)
        m += k->conf[k->pts[i].rank] != 0;
    kcs_tolpt *tp = malloc((m ? m : 1) * sizeof *tp);
    size_t *idx = malloc((m ? m : 1) * sizeof *idx);
    unsigned char *use = malloc(m ? m : 1);
    k->torch_atol = NULL;
    if (!tp || !idx || !use) {
        free(tp), free(idx), free(use);
        return -1;
    }
    /* each trial's own divergence and output count: the model fits the
     * growth in N (tolmodel.h, step 6) and brings every point to N0 */
    m = 0;
    for (size_t i = 0; i < k->n; i++) {
        const tpt *q = &k->pts[i];
        if (!k->conf[q->rank])
            continue;
        tp[m] = (kcs_tolpt){q->n, metric_of(k, q), q->outputs, ts->impl[q->rank],
                            (int32_t)((q->case_id + q->trial) % KCS_TOL_FOLDS)};
        idx[m++] = i;
    }
    k->conf_trials = (int64_t)m;
    int rc = 0;
    if (fit_recommend(tp, m, NULL, k->u, ts->p, 1, &k->fit, &k->boot_lo, &k->boot_hi,
                      &k->boot_used) < 0) {
        rc = -1;
        goto out;
    }
    if (k->fit.form == KCS_TOLFORM_NONE)
        goto out;
    /* out of sample in N: fit on the trials with N <= KCS_TOL_NSPLIT, judge
     * every trial with more outputs (other cases: other inputs) */
    {
        int small = 0, large = 0;
        for (size_t i = 0; i < m; i++) {
            use[i] = tp[i].outputs <= KCS_TOL_NSPLIT;
            small |= use[i];
            large |= !use[i];
        }
        k->n_hn = 0;
        k->hn_form = KCS_TOLFORM_NONE;
        if (small && large) {
            kcs_tolfit hf;
            if (fit_recommend(tp, m, use, k->u, ts->p, 1, &hf, NULL, NULL, NULL) < 0) {
                rc = -1;
                goto out;
            }
            k->hn_form = hf.form;
            for (size_t i = 0; i < m; i++) {
                if (use[i])
                    continue;
                int j = 0;
                while (j < k->n_hn && k->hn_N[j] != tp[i].outputs)
                    j++;
                if (j == k->n_hn) {
                    if (k->n_hn == KCS_TOL_MAX_HN)
                        continue;
                    k->hn_N[k->n_hn] = tp[i].outputs;
                    memset(&k->hn[k->n_hn++], 0, sizeof k->hn[0]);
                }
                count(&k->hn[j], hf.form == KCS_TOLFORM_NONE
                                     ? -1
                                     : judge(&hf, tp[i].n, tp[i].outputs, RAW(i)));
            }
            kcs_tolfit_free(&hf);
            /* increasing N */
            for (int a = 1; a < k->n_hn; a++)
                for (int b = a; b > 0 && k->hn_N[b] < k->hn_N[b - 1]; b--) {
                    double t = k->hn_N[b];
                    k->hn_N[b] = k->hn_N[b - 1], k->hn_N[b - 1] = t;
                    cvcount c = k->hn[b];
                    k->hn[b] = k->hn[b - 1], k->hn[b - 1] = c;
                }
        }
    }
    for (size_t i = 0; i < m; i++)
        count(&k->insample, judge(&k->fit, tp[i].n, tp[i].outputs, RAW(i)));
    /* trial-split cross-validation */
    int has_torch = 0;
    for (size_t i = 0; i < m; i++)
        has_torch |= k->pts[idx[i]].torch_ns > 0;
    double *atol_f = has_torch ? malloc((size_t)k->fit.n_env * sizeof *atol_f) : NULL;
    for (int f = 0; f < KCS_TOL_FOLDS && rc == 0; f++) {
        for (size_t i = 0; i < m; i++)
            use[i] = tp[i].fold != f;
        kcs_tolfit cv;
        if (fit_recommend(tp, m, use, k->u, ts->p, 0, &cv, NULL, NULL, NULL) < 0) {
            rc = -1;
            break;
        }
        if (atol_f && cv.form != KCS_TOLFORM_NONE) {
            /* eta0 from the training folds; the input scale (|A||B|) from every
             * trial-0 sample at n: a pair is stated for the inputs' scale */
            torch_atols(k, tp, idx, m, NULL, &cv, atol_f);
        }
        for (size_t i = 0; i < m; i++) {
            if (use[i])
                continue;
            count(&k->heldout, cv.form == KCS_TOLFORM_NONE
                                   ? -1
                                   : judge(&cv, tp[i].n, tp[i].outputs, RAW(i)));
            const tpt *q = &k->pts[idx[i]];
            if (atol_f && q->trial == 0 && q->torch_ns > 0 && cv.form != KCS_TOLFORM_NONE) {
                int j = env_index(&cv, q->n);
                if (j < 0 || isnan(atol_f[j]))
                    k->torch_heldout.not_judged++;
                else {
                    double a = atol_f[j] * kcs_tol_outputs_factor_g(q->outputs, cv.outputs0,
                                                                    ts->p, cv.gamma);
                    count(&k->torch_heldout, !(q->torch_stat <= a));
                }
            }
        }
        kcs_tolfit_free(&cv);
    }
    free(atol_f);
    /* leave one implementation out */
    int impls[256], ni = 0;
    for (size_t i = 0; i < m; i++) {
        int seen = 0;
        for (int j = 0; j < ni; j++)
            seen |= impls[j] == tp[i].impl;
        if (!seen && ni < 256)
            impls[ni++] = tp[i].impl;
    }
    k->loio_folds = ni >= 3 ? ni : 0;
    for (int g = 0; g < ni && ni >= 3 && rc == 0; g++) {
        for (size_t i = 0; i < m; i++)
            use[i] = tp[i].impl != impls[g];
        kcs_tolfit cv;
        if (fit_recommend(tp, m, use, k->u, ts->p, 0, &cv, NULL, NULL, NULL) < 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < m; i++)
            if (!use[i])
                count(&k->loio, cv.form == KCS_TOLFORM_NONE
                                    ? -1
                                    : judge(&cv, tp[i].n, tp[i].outputs, RAW(i)));
        kcs_tolfit_free(&cv);
    }
    /* torch pairs from every conforming trial 0 */
    if (has_torch && rc == 0) {
        k->torch_atol = malloc((size_t)k->fit.n_env * sizeof *k->torch_atol);
        if (!k->torch_atol) {
            rc = -1;
            goto out;
        }
        torch_atols(k, tp, idx, m, NULL, &k->fit, k->torch_atol);
        k->torch_ok = 1;
        /* what the pair gives up: at a median output (median (|A||B|)_i and
         * |y_ref,i| / (|A||B|)_i of the conforming trial-0 samples at n_j),
         * (atol + rtol |y_ref|) / (eta0 (|A||B|)_i) */
        k->torch_loose = malloc((size_t)k->fit.n_env * sizeof *k->torch_loose);
        if (!k->torch_loose) {
            rc = -1;
            goto out;
        }
        for (int j = 0; j < k->fit.n_env; j++) {
            double am = 0.0, rm = 0.0;
            int64_t c = 0;
            for (size_t i = 0; i < m; i++) {
                const tpt *q = &k->pts[idx[i]];
                if (q->trial != 0 || isnan(q->absmed) || env_index(&k->fit, q->n) != j)
                    continue;
                am += log(q->absmed);
                rm += q->relmed;
                c++;
            }
            double e0 = k->fit.env_eta[j];
            k->torch_loose[j] =
                c && k->metric ? (k->torch_atol[j] + k->rtol_def * (rm / c) * exp(am / c)) /
                                     (e0 * exp(am / c))
                               : NAN;
        }
    }
    /* the other ranks under the full fit */
    for (size_t i = 0; i < k->n; i++) {
        const tpt *q = &k->pts[i];
        if (k->conf[q->rank])
            continue;
        int v = judge(&k->fit, q->n, q->outputs, metric_of(k, q));
        count(&k->bad, v);
        if (q->trial == 0 && v >= 0 && k->torch_ok && q->torch_ns > 0) {
            int j = env_index(&k->fit, q->n);
            if (j >= 0 && !isnan(k->torch_atol[j])) {
                double a = k->torch_atol[j] * kcs_tol_outputs_factor_g(q->outputs, k->fit.outputs0,
                                                                       ts->p, k->fit.gamma);
                k->bad0_trials++;
                k->bad0_eta += v;
                k->bad0_torch += !(q->torch_stat <= a);
            }
        }
    }
out:
    free(tp), free(idx), free(use);
    return rc;
}

int kcs_tolset_settle(kcs_tolset *ts, kcs_error *err)
{
    for (int i = 0; i < ts->nk; i++)
        if (settle_key(ts, &ts->k[i]) < 0)
            return kcs_fail(err, KCS_E_NOMEM, "out of memory (tolerance fits)");
    return 0;
}

/* ---- output ---- */

static void jnum(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fprintf(f, "null");
}

/* text (no format), then the number v */
static void jkv(FILE *f, const char *text, double v)
{
    fputs(text, f);
    jnum(f, v);
}

/* text, then [[a0, b0], [a1, b1], ...] */
static void jpairs(FILE *f, const char *text, const double *a, const double *b, int n)
{
    fputs(text, f);
    for (int j = 0; j < n; j++) {
        jkv(f, j ? ", [" : "[", a[j]);
        jkv(f, ", ", b[j]);
        fputs("]", f);
    }
}

static void jcount(FILE *f, const cvcount *c)
{
    double lo, hi;
    kcs_clopper_pearson(c->flagged, c->trials, 0.95, &lo, &hi);
    fprintf(f, "{\"trials\": %lld, \"flagged\": %lld, \"rate\": ", (long long)c->trials,
            (long long)c->flagged);
    jnum(f, c->trials ? (double)c->flagged / (double)c->trials : NAN);
    jkv(f, ", \"ci95\": [", lo);
    jkv(f, ", ", hi);
    fprintf(f, "], \"not_judged\": %lld}", (long long)c->not_judged);
}

static int count_impls(const kcs_tolset *ts, const tkey *k)
{
    int n = 0;
    for (int r = 0; r < ts->nr; r++) {
        if (!k->conf[r])
            continue;
        int first = 1;
        for (int q = 0; q < r; q++)
            first &= !(k->conf[q] && ts->impl[q] == ts->impl[r]);
        n += first;
    }
    return n;
}

/* What a reader of a recommendation should know before using it (JSON
 * "warnings", the report). Returns the number of lines written. */
static int key_warnings(const kcs_tolset *ts, const tkey *k, char w[][256], int max)
{
    const kcs_tolfit *x = &k->fit;
    int n = 0;
    if (!x->gamma_fitted && n < max)
        snprintf(w[n++], 256, "growth in N not fitted (one output count, N = %g): exponent %g "
                 "assumed; validated for N = %g only", x->outputs0, x->gamma, x->outputs0);
    if (k->n_hn == 0 && n < max)
        snprintf(w[n++], 256, "not validated out of sample in N (no trials with more than %g "
                 "outputs beside trials with fewer)", KCS_TOL_NSPLIT);
    for (int j = 0; j < k->n_hn && n < max; j++) {
        const cvcount *c = &k->hn[j];
        if (c->trials > 0 && (double)c->flagged > ts->p * (double)c->trials)
            snprintf(w[n++], 256, "held out at N = %.0f: %lld of %lld trials flagged, above the "
                     "target %g", k->hn_N[j], (long long)c->flagged, (long long)c->trials, ts->p);
    }
    if (k->boot_used > 0 && k->boot_used < KCS_TOL_BOOT_B / 2 && n < max)
        snprintf(w[n++], 256, "only %d of %d bootstrap replicates could be fitted", k->boot_used,
                 KCS_TOL_BOOT_B);
    return n;
}

static const char *form_name(int form)
{
    return form == KCS_TOLFORM_POWER ? "power" : form == KCS_TOLFORM_ENVELOPE ? "envelope" : "none";
}

/* Opens one entry of a list: `{"op": ..., "dtype_in": ..., "dtype_out": ..., "acc": ...`. */
static void json_key_open(FILE *f, const tkey *k, int first)
{
    fprintf(f, "%s\n  {\"op\": ", first ? "" : ",");
    kcs_json_str(f, k->op);
    fprintf(f, ", \"dtype_in\": ");
    kcs_json_str(f, k->dtype_in);
    fprintf(f, ", \"dtype_out\": ");
    kcs_json_str(f, k->dtype_out);
    fprintf(f, ", \"acc\": ");
    kcs_json_str(f, k->acc);
}

int kcs_tolset_write_json(const kcs_tolset *ts, const char *path, const char *const *datasets,
                          int n_datasets, kcs_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create", path);
    fprintf(f, "{\n \"format\": \"kcs-tolerances\", \"version\": 1,\n \"generated_by\": ");
    char gen[160];
    snprintf(gen, sizeof gen, "kcs %s (%s)", KCS_VERSION, KCS_GIT_HASH);
    kcs_json_str(f, gen);
    fprintf(f, ",\n \"datasets\": [");
    for (int i = 0; i < n_datasets; i++) {
        fprintf(f, "%s", i ? ", " : "");
        kcs_json_str(f, datasets[i]);
    }
    jkv(f, "],\n \"false_alarm_target\": ", ts->p);
    fprintf(f, ",\n \"minimum_data\": {\"implementations\": %d, \"n_values\": %d, "
               "\"trials\": %d},\n"
               " \"recommendations\": [",
            KCS_TOL_MIN_IMPLS, KCS_TOL_MIN_NVALUES, KCS_TOL_MIN_TRIALS);
    int first = 1;
    for (int i = 0; i < ts->nk; i++) {
        const tkey *k = &ts->k[i];
        const kcs_tolfit *x = &k->fit;
        if (x->form == KCS_TOLFORM_NONE)
            continue;
        json_key_open(f, k, first);
        first = 0;
        fprintf(f, ", \"inputs\": ");
        kcs_json_str(f, k->inputs);
        fprintf(f, ",\n   \"metric\": \"%s\", \"form\": \"%s\", \"u\": ", metric_name[k->metric],
                form_name(x->form));
        jnum(f, x->u);
        jkv(f, ", \"c\": ", x->c);
        int pw = x->form == KCS_TOLFORM_POWER;
        jkv(f, ", \"alpha\": ", pw ? x->power_alpha : x->alpha);
        jkv(f, ", \"alpha_ci\": [", pw ? x->power_lo : x->alpha_lo);
        jkv(f, ", ", pw ? x->power_hi : x->alpha_hi);
        fprintf(f, "], \"alpha_basis\": \"%s\",\n   \"alpha_pooled\": ",
                pw && x->basis == KCS_TOLBASIS_ENVELOPE ? "envelope" : "pooled");
        jnum(f, x->alpha);
        jkv(f, ", \"alpha_pooled_ci\": [", x->alpha_lo);
        jkv(f, ", ", x->alpha_hi);
        jkv(f, "], \"alpha_pooled_se\": ", x->alpha_se);
        jkv(f, ", \"alpha_envelope\": ", x->alpha_env);
        jkv(f, ", \"alpha_envelope_ci\": [", x->alpha_env_lo);
        jkv(f, ", ", x->alpha_env_hi);
        jkv(f, "],\n   \"power_spread\": ", x->spread);
        jkv(f, ", \"power_spread_envelope\": ", x->spread_env);
        jkv(f, ", \"tail_margin\": ", x->margin);
        jkv(f, ", \"extrapolation\": ", x->extrapolate);
        jpairs(f, ",\n   \"envelope\": [", x->env_n, x->env_eta, x->n_env);
        jpairs(f, "],\n   \"observed_max\": [", x->env_n, x->env_u, x->n_env);
        jkv(f, "],\n   \"valid\": {\"n_min\": ", x->n_min);
        jkv(f, ", \"n_max\": ", x->n_max);
        jkv(f, ", \"outputs_fitted\": ", x->outputs0);
        jkv(f, ", \"k_min\": ", x->n_min);
        jkv(f, ", \"k_max\": ", x->n_max);
        jkv(f, ", \"outputs_min\": ", x->outputs0);
        jkv(f, ", \"outputs_max\": ", x->outputs_max);
        fprintf(f, ", \"ranks\": %d, \"implementations\": %d, \"trials\": %lld, "
                   "\"trials_zero\": %lld},\n   \"outputs_rule\": \"log_power\"",
                k->n_conf_ranks, count_impls(ts, k), (long long)k->conf_trials,
                (long long)x->n_zero);
        jkv(f, ", \"outputs_exponent\": ", x->gamma);
        fprintf(f, ", \"outputs_exponent_basis\": \"%s\"",
                x->gamma_fitted ? "fitted" : "assumed (one output count)");
        jkv(f, ", \"outputs_exponent_fit\": ", x->gamma_hat);
        jkv(f, ", \"outputs_exponent_ci\": [", x->gamma_lo);
        jkv(f, ", ", x->gamma_hi);
        jkv(f, "],\n   \"c_fit\": ", x->c_fit);
        jkv(f, ", \"eta0_boot_lo\": ", k->boot_lo);
        jkv(f, ", \"eta0_boot_hi\": ", k->boot_hi);
        fprintf(f, ", \"eta0_boot_level\": %g, \"eta0_boot_replicates\": %d, "
                   "\"eta0_boot_units\": \"factor of the point fit's eta0 (worst fitted n)\"",
                KCS_TOL_BOOT_CONF, k->boot_used);
        jkv(f, ", \"eta0_scale\": ", x->scale);
        fprintf(f, ",\n   \"recommended_basis\": \"upper %g%% bootstrap bound\",\n",
                100.0 * KCS_TOL_BOOT_CONF);
        fprintf(f, "   \"heldout_outputs_fit_max\": %g, \"heldout_outputs\": [",
                KCS_TOL_NSPLIT);
        for (int j = 0; j < k->n_hn; j++) {
            double lo, hi;
            const cvcount *c = &k->hn[j];
            kcs_clopper_pearson(c->flagged, c->trials, 0.95, &lo, &hi);
            fprintf(f, "%s{\"N\": %.17g, \"trials\": %lld, \"flagged\": %lld, \"rate\": ",
                    j ? ", " : "", k->hn_N[j], (long long)c->trials, (long long)c->flagged);
            jnum(f, c->trials ? (double)c->flagged / (double)c->trials : NAN);
            jkv(f, ", \"ci\": [", lo);
            jkv(f, ", ", hi);
            fprintf(f, "], \"not_judged\": %lld}", (long long)c->not_judged);
        }
        fprintf(f, "],\n   \"warnings\": [");
        {
            char w[8][256];
            int nw = key_warnings(ts, k, w, 8);
            for (int j = 0; j < nw; j++) {
                fprintf(f, "%s", j ? ", " : "");
                kcs_json_str(f, w[j]);
            }
        }
        fprintf(f, "],\n");
        if (k->torch_ok) {
            fprintf(f, "   \"torch\": {\"points\": [");
            int w = 0;
            for (int j = 0; j < x->n_env; j++) {
                if (isnan(k->torch_atol[j]))
                    continue;
                fprintf(f, "%s[", w++ ? ", " : "");
                jnum(f, x->env_n[j]);
                jkv(f, ", ", k->rtol_def);
                jkv(f, ", ", k->torch_atol[j]);
                fprintf(f, "]");
            }
            jkv(f, "], \"outputs\": ", x->outputs0);
            fprintf(f, ", \"looseness_median\": [");
            w = 0;
            for (int j = 0; j < x->n_env; j++) {
                if (isnan(k->torch_atol[j]))
                    continue;
                fprintf(f, "%s", w++ ? ", " : "");
                jnum(f, k->torch_loose[j]);
            }
            fprintf(f, "], \"heldout\": ");
            jcount(f, &k->torch_heldout);
            fprintf(f, ",\n     \"other_ranks_trial0\": {\"trials\": %lld, \"flagged_torch\": "
                       "%lld, \"flagged_eta\": %lld}},\n",
                    (long long)k->bad0_trials, (long long)k->bad0_torch, (long long)k->bad0_eta);
        }
        fprintf(f, "   \"heldout\": ");
        jcount(f, &k->heldout);
        fprintf(f, ",\n   \"heldout_implementations\": ");
        if (k->loio_folds)
            jcount(f, &k->loio);
        else
            fprintf(f, "null");
        fprintf(f, ",\n   \"insample\": ");
        jcount(f, &k->insample);
        fprintf(f, ",\n   \"other_ranks\": ");
        jcount(f, &k->bad);
        fprintf(f, "}");
    }
    fprintf(f, "\n ],\n \"withheld\": [");
    first = 1;
    for (int i = 0; i < ts->nk; i++) {
        const tkey *k = &ts->k[i];
        if (k->fit.form != KCS_TOLFORM_NONE)
            continue;
        json_key_open(f, k, first);
        first = 0;
        fprintf(f, ", \"missing\": ");
        kcs_json_str(f, k->fit.missing);
        fprintf(f, "}");
    }
    fprintf(f, "\n ]\n}\n");
    if (fclose(f) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", path);
    return 0;
}

static void cv_text(char *buf, size_t len, const cvcount *c)
{
    if (c->trials <= 0) {
        snprintf(buf, len, "–");
        return;
    }
    double lo, hi;
    kcs_clopper_pearson(c->flagged, c->trials, 0.95, &lo, &hi);
    snprintf(buf, len, "%lld/%lld = %.2f %% [%.2f, %.2f]", (long long)c->flagged,
             (long long)c->trials, 100.0 * (double)c->flagged / (double)c->trials, 100.0 * lo,
             100.0 * hi);
}

int kcs_tolset_write_csv(const kcs_tolset *ts, const char *path, kcs_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create", path);
    fprintf(f, "op,dtype_in,dtype_out,acc,metric,form,u,c,alpha,alpha_lo,alpha_hi,alpha_envelope,"
               "n_min,n_max,outputs_fitted,ranks,trials,heldout_trials,heldout_flagged,"
               "loio_trials,loio_flagged,insample_trials,insample_flagged,other_trials,"
               "other_flagged,missing,outputs_max,outputs_exponent,c_fit,eta0_boot_lo,eta0_boot_hi\n");
    for (int i = 0; i < ts->nk; i++) {
        const tkey *k = &ts->k[i];
        const kcs_tolfit *x = &k->fit;
        fprintf(f, "%s,%s,%s,%s,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%lld,%lld,"
                   "%lld,%lld,%lld,%lld,%lld,%lld,%lld,\"%s\",%.6g,%.6g,%.6g,%.6g,%.6g\n",
                k->op, k->dtype_in, k->dtype_out, k->acc, metric_name[k->metric],
                form_name(x->form), x->u, x->c,
                x->form == KCS_TOLFORM_POWER ? x->power_alpha : x->alpha,
                x->form == KCS_TOLFORM_POWER ? x->power_lo : x->alpha_lo,
                x->form == KCS_TOLFORM_POWER ? x->power_hi : x->alpha_hi, x->alpha_env,
                x->n_min, x->n_max, x->outputs0, k->n_conf_ranks, (long long)k->conf_trials,
                (long long)k->heldout.trials, (long long)k->heldout.flagged,
                (long long)k->loio.trials, (long long)k->loio.flagged,
                (long long)k->insample.trials, (long long)k->insample.flagged,
                (long long)k->bad.trials, (long long)k->bad.flagged, x->missing,
                x->outputs_max, x->gamma, x->c_fit, k->boot_lo, k->boot_hi);
    }
    if (fclose(f) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", path);
    return 0;
}

void kcs_tolset_report(FILE *f, const kcs_tolset *ts, const char *out_dir)
{
    fprintf(f, "## Recommended tolerances, judged out of sample\n\n"
               "Per (op, dtypes, declared accumulator): a tolerance η(n, N) for a trial's "
               "largest divergence over its N outputs, fitted on the conforming ranks so that a "
               "conforming trial is flagged with probability about p = %g "
               "(`tolerances.json`, method in the reducer README, analysis/README.md). **Held out** (the headline): "
               "%d-fold cross-validation over trials (fit on 3/4 of every implementation's "
               "trials, judge the rest) and leave-one-implementation-out (fit without an "
               "implementation, judge all of its trials: what a *new* implementation meets). "
               "Counts of flagged conforming trials with 95 %% Clopper–Pearson intervals; "
               "in-sample counts are secondary. Minimum data for a recommendation: %d "
               "conforming implementations, %d distinct n, %d trials with a nonzero "
               "divergence.\n\n",
            ts->p, KCS_TOL_FOLDS, KCS_TOL_MIN_IMPLS, KCS_TOL_MIN_NVALUES, KCS_TOL_MIN_TRIALS);
    int n_rec = 0;
    for (int i = 0; i < ts->nk; i++)
        n_rec += ts->k[i].fit.form != KCS_TOLFORM_NONE;
    if (n_rec == 0)
        fprintf(f, "No recommendation from this dataset.\n");
    else
        fprintf(f, "| op | in → out | acc | metric | held-out false alarms (trial split) | "
               "held-out (leave one implementation out) | in sample | other ranks flagged | "
               "held out in N (fit on N ≤ %g, judged at the largest N) | "
               "form | pooled α [95 %% CI, implementations as units] | valid n | validated N (outputs) |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---:|\n",
               KCS_TOL_NSPLIT);
    char a[96], b[96], c[96], d[96];
    for (int i = 0; i < ts->nk; i++) {
        const tkey *k = &ts->k[i];
        const kcs_tolfit *x = &k->fit;
        if (x->form == KCS_TOLFORM_NONE)
            continue;
        cv_text(a, sizeof a, &k->heldout);
        if (k->loio_folds)
            cv_text(b, sizeof b, &k->loio);
        else
            snprintf(b, sizeof b, "– (needs 3 implementations)");
        cv_text(c, sizeof c, &k->insample);
        cv_text(d, sizeof d, &k->bad);
        char hn[128];
        if (k->n_hn > 0) {
            char t[96];
            cv_text(t, sizeof t, &k->hn[k->n_hn - 1]);
            snprintf(hn, sizeof hn, "N = %.0f: %s", k->hn_N[k->n_hn - 1], t);
        } else {
            snprintf(hn, sizeof hn, "– (no N above %g beside N at most %g)", KCS_TOL_NSPLIT,
                     KCS_TOL_NSPLIT);
        }
        char form[128];
        if (x->form == KCS_TOLFORM_POWER)
            snprintf(form, sizeof form, "power: n^%.3f [%.3f, %.3f] (%s)", x->power_alpha,
                     x->power_lo, x->power_hi,
                     x->basis == KCS_TOLBASIS_POOLED ? "pooled fit" : "slope of the per-n maxima");
        else
            snprintf(form, sizeof form, "envelope");
        fprintf(f, "| %s | %s → %s | %s | %s | %s | %s | %s | %s | %s | %s | %.3f [%.3f, %.3f] | "
                   "%g–%g | %.0f–%.0f |\n",
                k->op, k->dtype_in, k->dtype_out, k->acc, metric_name[k->metric], a, b, c, d, hn,
                form, x->alpha, x->alpha_lo, x->alpha_hi, x->n_min, x->n_max, x->outputs0,
                x->outputs_max);
    }
    int withheld = 0;
    for (int i = 0; i < ts->nk; i++)
        withheld += ts->k[i].fit.form == KCS_TOLFORM_NONE;
    if (withheld) {
        fprintf(f, "\n**No recommendation** (too little data):\n\n");
        for (int i = 0; i < ts->nk; i++) {
            const tkey *k = &ts->k[i];
            if (k->fit.form == KCS_TOLFORM_NONE)
                fprintf(f, "- %s %s → %s, acc %s: %s.\n", k->op, k->dtype_in, k->dtype_out,
                        k->acc, k->fit.missing);
        }
    }
    fprintf(f, "\n");
    int rec = 0; /* the index of the recommendation in tolerances.json */
    for (int i = 0; i < ts->nk; i++) {
        const tkey *k = &ts->k[i];
        const kcs_tolfit *x = &k->fit;
        if (x->form == KCS_TOLFORM_NONE)
            continue;
        fprintf(f, "### %s %s → %s, accumulator %s (%s inputs)\n\n", k->op, k->dtype_in,
                k->dtype_out, k->acc, k->inputs);
        if (x->form == KCS_TOLFORM_POWER && x->basis == KCS_TOLBASIS_POOLED)
            fprintf(f, "Form: **power**, η0(n) = c·n^α·u = %.4g · n^%.3f · %.4g for N0 = %g "
                       "outputs, α the pooled fit (the power law is at most %.2f× looser than the "
                       "observed maxima at any fitted n; the envelope's own slope %.3f lies in "
                       "α's interval). Extrapolated up to %g× beyond the fitted n.\n\n",
                    x->c, x->power_alpha, x->u, x->outputs0, x->spread, x->alpha_env,
                    x->extrapolate);
        else if (x->form == KCS_TOLFORM_POWER)
            fprintf(f, "Form: **power**, η0(n) = c·n^α·u = %.4g · n^%.3f · %.4g for N0 = %g "
                       "outputs, α the slope of the largest divergences per n [%.3f, %.3f] "
                       "(n values as units): the pooled α = %.3f [%.3f, %.3f] (implementations "
                       "as units) describes the typical implementation, not the upper envelope "
                       "a tolerance must bound (it would be %.2f× looser at some n; this power "
                       "law at most %.2f×). Extrapolated up to %g× beyond the fitted n.\n\n",
                    x->c, x->power_alpha, x->u, x->outputs0, x->power_lo, x->power_hi, x->alpha,
                    x->alpha_lo, x->alpha_hi, x->spread, x->spread_env, x->extrapolate);
        else
            fprintf(f, "Form: **envelope** (no power law fits: with the pooled α = %.3f "
                       "[%.3f, %.3f] one constant would be up to %.2f× looser than the observed "
                       "maxima at some n, with the envelope's slope %.3f up to %.2f×): "
                       "η0(n_j) = %.3f × the largest conforming divergence at n_j, log-log "
                       "interpolation between them, no extrapolation.\n\n",
                    x->alpha, x->alpha_lo, x->alpha_hi, x->spread, x->alpha_env, x->spread_env,
                    x->margin);
        fprintf(f, "Fitted on %d ranks (%d implementations), %lld conforming trials (%lld with "
                   "zero divergence), k from %g to %g, N from %.0f to %.0f outputs. For N outputs: "
                   "η(n, N) = η0(n)·max(1, (ln(2N/p) / ln(2·N0/p))^γ), γ = %.3f (%s",
                k->n_conf_ranks, count_impls(ts, k), (long long)k->conf_trials,
                (long long)x->n_zero, x->n_min, x->n_max, x->outputs0, x->outputs_max, x->gamma,
                x->gamma_fitted ? "fitted: " : "assumed: one output count, so not fitted");
        if (x->gamma_fitted)
            fprintf(f, "slope of ln d on ln ln 2N within implementation and n, %.3f [%.3f, "
                       "%.3f], clamped to [%g, %g]",
                    x->gamma_hat, x->gamma_lo, x->gamma_hi, KCS_TOL_GAMMA_MIN, KCS_TOL_GAMMA_MAX);
        fprintf(f, "). Tail margin over the observed maxima: %.3f.\n\n", x->margin);
        if (k->boot_used > 0)
            fprintf(f, "η0's uncertainty (cluster bootstrap over implementations and trials, %d "
                       "replicates): the replicate's η0 is %.3f× to %.3f× the point fit's at its "
                       "worst fitted n (95 %%). **Recommended at the upper bound**: η0 = %.3f× "
                       "the point fit (c = %.4g; point fit c = %.4g).\n\n",
                    k->boot_used, k->boot_lo, k->boot_hi, x->scale, x->c, x->c_fit);
        if (k->n_hn > 0) {
            fprintf(f, "**Held out in N** (the whole procedure refitted on the trials with N ≤ "
                       "%g outputs, judged on every trial with more: other cases, other inputs):"
                       "\n\n| N | trials | flagged | rate [95 %% CI] |\n|---:|---:|---:|---|\n",
                    KCS_TOL_NSPLIT);
            for (int j = 0; j < k->n_hn; j++) {
                char h[96];
                cv_text(h, sizeof h, &k->hn[j]);
                fprintf(f, "| %.0f | %lld | %lld | %s |\n", k->hn_N[j], (long long)k->hn[j].trials,
                        (long long)k->hn[j].flagged, h);
            }
            fprintf(f, "\n");
        }
        {
            char w[8][256];
            int nw = key_warnings(ts, k, w, 8);
            for (int j = 0; j < nw; j++)
                fprintf(f, "%s%s%s", j ? "; " : "**Warnings**: ", w[j], j == nw - 1 ? ".\n\n" : "");
        }
        char fig[96];
        snprintf(fig, sizeof fig, "fig_tolerance_%d.png", rec);
        if (kcs_report_has_figure(out_dir, fig))
            fprintf(f, "![tolerance model %d](%s)\n\n", rec, fig);
        rec++;
        fprintf(f, "| n | largest conforming %s divergence | η0(n) | ratio |",
                metric_name[k->metric]);
        if (k->torch_ok)
            fprintf(f, " assert_close rtol | atol | its bound / η's at a median output |");
        fprintf(f, "\n|---:|---:|---:|---:|%s\n", k->torch_ok ? "---:|---:|---:|" : "");
        for (int j = 0; j < x->n_env; j++) {
            fprintf(f, "| %g | %.3g | %.3g | %.2f |", x->env_n[j], x->env_u[j], x->env_eta[j],
                    x->env_eta[j] / x->env_u[j]);
            if (k->torch_ok)
                fprintf(f, " %.3g | %.3g | %.2f× |", k->rtol_def, k->torch_atol[j],
                        k->torch_loose[j]);
            fprintf(f, "\n");
        }
        if (k->torch_ok) {
            char h[96];
            cv_text(h, sizeof h, &k->torch_heldout);
            fprintf(f, "\n**torch.testing.assert_close** pairs (rtol = torch's default for %s, "
                       "atol = η0(n) × the largest (|A||B|)_ij of the conforming trial-0 "
                       "samples at n for the scaled metric, η0(n) for abs: an output within η "
                       "passes the pair, so it keeps η's false-alarm target; equal_nan=False, "
                       "equal values pass). The last column is what the pair gives up: at an "
                       "output of median (|A||B|)_ij it admits that many times the error η admits. "
                       "Held out (trial split, trial 0): %s false alarms. What the pair gives up "
                       "against η: of the other ranks' trial-0 outputs, the pair flags %lld/%lld, "
                       "η flags %lld/%lld.\n",
                    k->dtype_out, h, (long long)k->bad0_torch, (long long)k->bad0_trials,
                    (long long)k->bad0_eta, (long long)k->bad0_trials);
        }
        fprintf(f, "\n");
    }
}
