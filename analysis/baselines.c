/* Divergence baselines: fits, recommended tolerances, torch comparison
 * (baselines.h). */
#include "baselines.h"
#include "grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "op.h"
#include "view.h"

enum { M_ABS = 0, M_SCALED, M_BACKWARD, N_METRICS };
static const char *const metric_names[N_METRICS] = {"abs", "scaled", "backward"};

typedef struct kstat {
    int64_t k;
    int64_t *torch_n, *torch_flag, *elems, *elems_flag, *contract0; /* per rank, trial 0 */
    int64_t *kcs_n0, *kcs_flag0, *kcs_held0;                         /* pass 2 */
} kstat;

typedef struct group {
    kcs_group_row info;
    int64_t *ran, *nonconf;                 /* per rank: trials that ran; not within */
    kcs_fit_acc *fo[2];                     /* vs oracle, per rank: abs, scaled */
    double *fo_cmax[2];
    int64_t *fo_zero[2];
    kcs_fit_acc *fp[2];                     /* per pair */
    double *fp_cmax[2];
    int64_t *fp_zero[2];
    kcs_loghist *hist[N_METRICS], *hist_odd[N_METRICS]; /* per rank, c values */
    int *conf;                              /* settled */
    double c_max[N_METRICS], c_q99[N_METRICS], c_odd[N_METRICS];
    int64_t *ntr;                           /* pass 2: ok trials per rank */
    int64_t *flag_max[N_METRICS], *flag_q99[N_METRICS];
    int64_t heldout_n[N_METRICS], heldout_flag[N_METRICS];
    kstat *ks;
    int nk, ks_cap;
} group;

struct kcs_baselines {
    int nr, npairs;
    const kcs_rank_rec *ranks;
    group *g;
    int ng, g_cap;
};

double kcs_acc_unit_roundoff(const char *acc)
{
    kcs_acc a;
    if (kcs_acc_parse(acc, &a) != 0)
        return NAN;
    return a.bits > 0 ? exp2(-(double)a.bits) : kcs_format_u(a.fmt);
}

void kcs_torch_tol(const char *dtype, double *rtol_p, double *atol_p)
{
    /* torch.testing.assert_close defaults (rtol, atol) */
    double r = 0.0, a = 0.0; /* fp8 and integers: exact */
    if (!strcmp(dtype, "fp64"))
        r = 1e-7, a = 1e-7;
    else if (!strcmp(dtype, "fp32") || !strcmp(dtype, "tf32"))
        r = 1.3e-6, a = 1e-5;
    else if (!strcmp(dtype, "fp16"))
        r = 1e-3, a = 1e-5;
    else if (!strcmp(dtype, "bf16"))
        r = 1.6e-2, a = 1e-5;
    *rtol_p = r;
    *atol_p = a;
}

int kcs_baselines_new(int n_ranks, const kcs_rank_rec *ranks, kcs_baselines **b_p, kcs_error *err)
{
    kcs_baselines *b = calloc(1, sizeof *b);
    if (!b)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    b->nr = n_ranks;
    b->npairs = n_ranks * (n_ranks - 1) / 2;
    b->ranks = ranks;
    *b_p = b;
    return 0;
}

static void free_kstat(kstat *k)
{
    KCS_FREE(k->torch_n, k->torch_flag, k->elems, k->elems_flag, k->contract0, k->kcs_n0,
             k->kcs_flag0, k->kcs_held0);
}

static void free_group(group *g)
{
    free(g->ran);
    free(g->nonconf);
    for (int m = 0; m < 2; m++) {
        KCS_FREE(g->fo[m], g->fo_cmax[m], g->fo_zero[m], g->fp[m], g->fp_cmax[m], g->fp_zero[m]);
    }
    for (int m = 0; m < N_METRICS; m++) {
        KCS_FREE(g->hist[m], g->hist_odd[m], g->flag_max[m], g->flag_q99[m]);
    }
    free(g->conf);
    free(g->ntr);
    for (int i = 0; i < g->nk; i++)
        free_kstat(&g->ks[i]);
    free(g->ks);
}

void kcs_baselines_free(kcs_baselines *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->ng; i++)
        free_group(&b->g[i]);
    free(b->g);
    free(b);
}

#define ALLOC(p, n) (((p) = calloc((size_t)(n) ? (size_t)(n) : 1, sizeof *(p))) != NULL)

static int init_group(group *g, int nr, int np)
{
    int ok = ALLOC(g->ran, nr) && ALLOC(g->nonconf, nr) && ALLOC(g->conf, nr) && ALLOC(g->ntr, nr);
    for (int m = 0; ok && m < 2; m++)
        ok = ALLOC(g->fo[m], nr) && ALLOC(g->fo_cmax[m], nr) && ALLOC(g->fo_zero[m], nr) &&
             ALLOC(g->fp[m], np) && ALLOC(g->fp_cmax[m], np) && ALLOC(g->fp_zero[m], np);
    for (int m = 0; ok && m < N_METRICS; m++) {
        ok = ALLOC(g->hist[m], nr) && ALLOC(g->hist_odd[m], nr) && ALLOC(g->flag_max[m], nr) &&
             ALLOC(g->flag_q99[m], nr);
        for (int r = 0; ok && r < nr; r++) {
            kcs_loghist_init(&g->hist[m][r]);
            kcs_loghist_init(&g->hist_odd[m][r]);
        }
    }
    return ok ? 0 : -1;
}

static int same_key(const kcs_group_row *x, const kcs_case_rec *c)
{
    return !strcmp(x->op, c->op) && !strcmp(x->dtype_in, c->dtype_in) &&
           !strcmp(x->dtype_acc, c->dtype_acc) && !strcmp(x->dtype_out, c->dtype_out) &&
           !strcmp(x->input_dist, c->input_dist);
}

static group *find_group(kcs_baselines *b, const kcs_case_rec *c, int create)
{
    for (int i = 0; i < b->ng; i++)
        if (same_key(&b->g[i].info, c))
            return &b->g[i];
    if (!create)
        return NULL;
    if (kcs_grow(&b->g, b->ng, &b->g_cap, sizeof *b->g, 8))
        return NULL;
    group *g = &b->g[b->ng];
    memset(g, 0, sizeof *g);
    if (init_group(g, b->nr, b->npairs) < 0) {
        free_group(g);
        return NULL;
    }
    kcs_group_row *x = &g->info;
    x->group = b->ng++;
    snprintf(x->op, sizeof x->op, "%s", c->op);
    snprintf(x->dtype_in, sizeof x->dtype_in, "%s", c->dtype_in);
    snprintf(x->dtype_acc, sizeof x->dtype_acc, "%s", c->dtype_acc);
    snprintf(x->dtype_out, sizeof x->dtype_out, "%s", c->dtype_out);
    snprintf(x->input_dist, sizeof x->input_dist, "%s", c->input_dist);
    x->u = kcs_acc_unit_roundoff(c->dtype_acc);
    x->k_min = INT64_MAX;
    return g;
}

static kstat *find_k(group *g, int64_t k, int nr, int create)
{
    for (int i = 0; i < g->nk; i++)
        if (g->ks[i].k == k)
            return &g->ks[i];
    if (!create)
        return NULL;
    if (kcs_grow(&g->ks, g->nk, &g->ks_cap, sizeof *g->ks, 16))
        return NULL;
    kstat *s = &g->ks[g->nk];
    memset(s, 0, sizeof *s);
    s->k = k;
    if (!(ALLOC(s->torch_n, nr) && ALLOC(s->torch_flag, nr) && ALLOC(s->elems, nr) &&
          ALLOC(s->elems_flag, nr) && ALLOC(s->contract0, nr) && ALLOC(s->kcs_n0, nr) &&
          ALLOC(s->kcs_flag0, nr) && ALLOC(s->kcs_held0, nr))) {
        free_kstat(s);
        return NULL;
    }
    g->nk++;
    return s;
}

static void fit_point(kcs_fit_acc *a, double *cmax, int64_t *zero, double k, double d, double u)
{
    if (isnan(d) || d < 0.0 || isinf(d))
        return;
    if (d == 0.0) {
        (*zero)++;
        return;
    }
    kcs_fit_add(a, log(k), log(d));
    double c = d / (k * u);
    if (!(c <= *cmax))
        *cmax = c;
}

static int row_ok(const kcs_result_rec *x)
{
    return kcs_status_of(x->status) == KCS_ST_OK;
}

static double metric_of(const kcs_result_rec *x, int m)
{
    return m == M_ABS ? x->max_abs : m == M_SCALED ? x->max_scaled : x->backward_err;
}

int kcs_baselines_case(kcs_baselines *b, const kcs_case_rec *cs, const kcs_result_rec *res,
                       int T, const kcs_divergence_row *pairs, const double *samples,
                       const double *ref, int ns, kcs_spool *pts, kcs_error *err)
{
    group *g = find_group(b, cs, 1);
    kstat *ks = g ? find_k(g, cs->k, b->nr, 1) : NULL;
    if (!g || !ks)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory (baselines)");
    kcs_group_row *gi = &g->info;
    gi->n_cases++;
    if (cs->k < gi->k_min)
        gi->k_min = cs->k;
    if (cs->k > gi->k_max)
        gi->k_max = cs->k;
    double u = gi->u, k = (double)cs->k;
    double rtol, atol;
    kcs_torch_tol(cs->dtype_out, &rtol, &atol);
    kcs_format fout = KCS_FMT_FP64;
    int fout_ok = kcs_format_parse(cs->dtype_out, &fout) == 0;
    int rc = 0;
    for (int r = 0; r < b->nr && !rc; r++) {
        for (int t = 0; t < T && !rc; t++) {
            const kcs_result_rec *x = &res[r * T + t];
            if (!kcs_view_row_ran(x))
                continue;
            g->ran[r]++;
            g->nonconf[r] += strcmp(x->verdict, "within_tolerance") != 0;
            if (!row_ok(x))
                continue;
            fit_point(&g->fo[0][r], &g->fo_cmax[0][r], &g->fo_zero[0][r], k, x->max_abs, u);
            fit_point(&g->fo[1][r], &g->fo_cmax[1][r], &g->fo_zero[1][r], k, x->max_scaled, u);
            for (int m = 0; m < N_METRICS; m++) {
                double c = metric_of(x, m) / (k * u);
                kcs_loghist_add(&g->hist[m][r], c);
                if (t % 2)
                    kcs_loghist_add(&g->hist_odd[m][r], c);
            }
            kcs_point_row p = {cs->case_id, gi->group, r, -1, t, cs->k, x->max_abs, x->max_scaled};
            rc = kcs_spool_put(pts, &p, 1, err);
        }
        /* torch's assert_close on trial 0's sampled outputs */
        const kcs_result_rec *x0 = &res[r * T];
        if (T > 0 && ref && samples && fout_ok && row_ok(x0)) {
            int64_t n = 0, bad = 0;
            for (int j = 0; j < ns; j++) {
                /* assert_close with equal_nan=False: equal values (same-signed
                 * infinities too) pass, a NaN on either side fails */
                double y = samples[r * ns + j], e = ref[j];
                double er = kcs_format_round(fout, e, KCS_ROUND_DEFAULT);
                n++;
                bad += !(y == er || (isfinite(y) && isfinite(er) &&
                                     fabs(y - er) <= atol + rtol * fabs(er)));
            }
            if (n > 0) {
                ks->torch_n[r]++;
                ks->torch_flag[r] += bad > 0;
                ks->elems[r] += n;
                ks->elems_flag[r] += bad;
                ks->contract0[r] += strcmp(x0->verdict, "within_tolerance") != 0;
            }
        }
    }
    for (int p = 0; p < b->npairs && !rc; p++) {
        const kcs_divergence_row *d = &pairs[p];
        fit_point(&g->fp[0][p], &g->fp_cmax[0][p], &g->fp_zero[0][p], k, d->max_abs_diff, u);
        fit_point(&g->fp[1][p], &g->fp_cmax[1][p], &g->fp_zero[1][p], k, d->max_scaled_diff, u);
        if (isnan(d->max_abs_diff))
            continue;
        kcs_point_row pt = {cs->case_id, gi->group, d->rank_a, d->rank_b, 0, cs->k,
                            d->max_abs_diff, d->max_scaled_diff};
        rc = kcs_spool_put(pts, &pt, 1, err);
    }
    return rc;
}

void kcs_baselines_settle(kcs_baselines *b)
{
    for (int i = 0; i < b->ng; i++) {
        group *g = &b->g[i];
        int n = 0, used = 0;
        for (int r = 0; r < b->nr; r++) {
            g->conf[r] = g->ran[r] > 0 && g->nonconf[r] == 0;
            if (!g->conf[r])
                continue;
            n++;
            int w = snprintf(g->info.conforming + used, sizeof g->info.conforming - used, "%s%d",
                             used ? "," : "", r);
            if (w > 0 && (size_t)w < sizeof g->info.conforming - used)
                used += w;
        }
        g->info.n_conforming = n;
        g->info.n_k = g->nk;
        for (int m = 0; m < N_METRICS; m++) {
            kcs_loghist all, odd;
            kcs_loghist_init(&all);
            kcs_loghist_init(&odd);
            for (int r = 0; r < b->nr; r++)
                if (g->conf[r]) {
                    kcs_loghist_merge(&all, &g->hist[m][r]);
                    kcs_loghist_merge(&odd, &g->hist_odd[m][r]);
                }
            g->c_max[m] = kcs_loghist_quantile(&all, 1.0);
            g->c_q99[m] = kcs_loghist_quantile(&all, 0.99);
            g->c_odd[m] = kcs_loghist_quantile(&odd, 1.0);
        }
    }
}

void kcs_baselines_count(kcs_baselines *b, const kcs_case_rec *cs, const kcs_result_rec *res,
                         int T)
{
    group *g = find_group(b, cs, 0);
    kstat *ks = g ? find_k(g, cs->k, b->nr, 0) : NULL;
    if (!g || !ks)
        return;
    double k = (double)cs->k, u = g->info.u;
    for (int r = 0; r < b->nr; r++) {
        for (int t = 0; t < T; t++) {
            const kcs_result_rec *x = &res[r * T + t];
            if (!kcs_view_row_ran(x) || !row_ok(x))
                continue;
            g->ntr[r]++;
            for (int m = 0; m < N_METRICS; m++) {
                double c = metric_of(x, m) / (k * u);
                /* NaN divergence (nothing comparable) counts as flagged */
                g->flag_max[m][r] += !(c <= g->c_max[m]);
                g->flag_q99[m][r] += !(c <= g->c_q99[m]);
                if (g->conf[r] && t % 2 == 0 && !isnan(g->c_odd[m])) {
                    g->heldout_n[m]++;
                    g->heldout_flag[m] += !(c <= g->c_odd[m]);
                }
            }
            if (t == 0) {
                double c = x->max_scaled / (k * u);
                ks->kcs_n0[r]++;
                ks->kcs_flag0[r] += !(c <= g->c_max[M_SCALED]);
                ks->kcs_held0[r] += !isnan(g->c_odd[M_SCALED]) && !(c <= g->c_odd[M_SCALED]);
            }
        }
    }
}

static void impl_name(const kcs_baselines *b, int r, char *buf, size_t len)
{
    if (r == -1)
        snprintf(buf, len, "oracle");
    else if (r == -2)
        snprintf(buf, len, "conforming population");
    else
        snprintf(buf, len, "%s", b->ranks[r].variant);
}

static void fill_fit(const kcs_baselines *b, const group *g, int ra, int rb, int m,
                     const kcs_fit_acc *a, double cmax, int64_t zero, kcs_fit_row *row)
{
    memset(row, 0, sizeof *row);
    row->group = g->info.group;
    row->rank_a = ra;
    row->rank_b = rb;
    impl_name(b, ra, row->impl_a, sizeof row->impl_a);
    impl_name(b, rb, row->impl_b, sizeof row->impl_b);
    snprintf(row->metric, sizeof row->metric, "%s", metric_names[m]);
    kcs_fit f;
    kcs_fit_solve(a, 0.95, &f);
    row->n_points = (int64_t)a->n;
    row->n_zero = zero;
    row->n_k = g->nk;
    row->k_min = g->info.k_min;
    row->k_max = g->info.k_max;
    row->alpha = f.slope;
    row->alpha_se = f.se;
    row->alpha_lo = f.lo;
    row->alpha_hi = f.hi;
    row->r2 = f.r2;
    row->c_geomean = a->n > 0 ? exp(a->my - a->mx - log(g->info.u)) : NAN;
    row->c_max = a->n > 0 ? cmax : NAN;
    row->conforming_a = ra >= 0 ? g->conf[ra] : ra == -2;
    row->conforming_b = rb >= 0 ? g->conf[rb] : 1;
}

int kcs_baselines_tables(kcs_baselines *b, kcs_baseline_tables *t, kcs_error *err)
{
    memset(t, 0, sizeof *t);
    int64_t nf = 0, nk = 0;
    for (int i = 0; i < b->ng; i++)
        nk += b->g[i].nk;
    nf = (int64_t)b->ng * 2 * (b->nr + 1 + b->npairs);
    t->groups = calloc((size_t)b->ng + 1, sizeof *t->groups);
    t->fits = calloc((size_t)nf + 1, sizeof *t->fits);
    t->tols = calloc((size_t)b->ng * 2 * N_METRICS + 1, sizeof *t->tols);
    t->flags = calloc((size_t)b->ng * (size_t)b->nr + 1, sizeof *t->flags);
    t->torch = calloc((size_t)nk + 1, sizeof *t->torch);
    if (!t->groups || !t->fits || !t->tols || !t->flags || !t->torch) {
        kcs_baseline_tables_free(t);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory (baseline tables)");
    }
    for (int i = 0; i < b->ng; i++) {
        group *g = &b->g[i];
        t->groups[t->n_groups++] = g->info;
        for (int m = 0; m < 2; m++) {
            kcs_fit_acc pop = {0};
            double pmax = 0.0;
            int64_t pzero = 0;
            for (int r = 0; r < b->nr; r++) {
                fill_fit(b, g, r, -1, m, &g->fo[m][r], g->fo_cmax[m][r], g->fo_zero[m][r],
                         &t->fits[t->n_fits++]);
                if (g->conf[r]) {
                    kcs_fit_merge(&pop, &g->fo[m][r]);
                    pmax = fmax(pmax, g->fo_cmax[m][r]);
                    pzero += g->fo_zero[m][r];
                }
            }
            fill_fit(b, g, -2, -1, m, &pop, pmax, pzero, &t->fits[t->n_fits++]);
            int p = 0;
            for (int a = 0; a < b->nr; a++)
                for (int c = a + 1; c < b->nr; c++, p++)
                    fill_fit(b, g, a, c, m, &g->fp[m][p], g->fp_cmax[m][p], g->fp_zero[m][p],
                             &t->fits[t->n_fits++]);
        }
        for (int m = 0; m < N_METRICS; m++) {
            for (int qi = 0; qi < 2; qi++) {
                kcs_tol_row *x = &t->tols[t->n_tols++];
                memset(x, 0, sizeof *x);
                x->group = g->info.group;
                snprintf(x->metric, sizeof x->metric, "%s", metric_names[m]);
                x->q = qi ? 1.0 : 0.99;
                x->c_q = qi ? g->c_max[m] : g->c_q99[m];
                x->u = g->info.u;
                x->eta_kmin = x->c_q * (double)g->info.k_min * x->u;
                x->eta_kmax = x->c_q * (double)g->info.k_max * x->u;
                x->c_heldout = qi ? g->c_odd[m] : NAN;
                x->heldout_trials = qi ? g->heldout_n[m] : 0;
                x->heldout_flagged = qi ? g->heldout_flag[m] : 0;
                int64_t *fl = qi ? g->flag_max[m] : g->flag_q99[m];
                for (int r = 0; r < b->nr; r++) {
                    if (g->ran[r] == 0)
                        continue;
                    if (g->conf[r]) {
                        x->n_ref_ranks++;
                        x->ref_trials += g->ntr[r];
                        x->ref_flagged += fl[r];
                    } else {
                        x->n_bad_ranks++;
                        x->bad_trials += g->ntr[r];
                        x->bad_flagged += fl[r];
                    }
                }
            }
        }
        for (int r = 0; r < b->nr; r++) {
            kcs_flag_row *x = &t->flags[t->n_flags++];
            memset(x, 0, sizeof *x);
            x->group = g->info.group;
            x->rank = r;
            impl_name(b, r, x->impl, sizeof x->impl);
            x->conforming = g->conf[r];
            x->n_trials = g->ntr[r];
            x->flagged_scaled = g->flag_max[M_SCALED][r];
            x->flagged_abs = g->flag_max[M_ABS][r];
            x->flagged_backward = g->flag_max[M_BACKWARD][r];
            x->flagged_contract = g->nonconf[r];
            for (int j = 0; j < g->nk; j++) {
                x->torch_trials += g->ks[j].torch_n[r];
                x->torch_flagged += g->ks[j].torch_flag[r];
            }
        }
        /* torch table rows in increasing k */
        int64_t first = t->n_torch;
        for (int j = 0; j < g->nk; j++) {
            kstat *s = &g->ks[j];
            kcs_torch_row *x = &t->torch[t->n_torch++];
            memset(x, 0, sizeof *x);
            x->group = g->info.group;
            x->k = s->k;
            kcs_torch_tol(g->info.dtype_out, &x->rtol, &x->atol);
            int64_t kn = 0;
            for (int r = 0; r < b->nr; r++) {
                if (!g->conf[r])
                    continue;
                x->n_trials += s->torch_n[r];
                x->torch_flagged += s->torch_flag[r];
                x->elements += s->elems[r];
                x->elements_flagged += s->elems_flag[r];
                x->contract_flagged += s->contract0[r];
                kn += s->kcs_n0[r];
                x->kcs_flagged += s->kcs_flag0[r];
                x->kcs_heldout_flagged += s->kcs_held0[r];
            }
            x->torch_frac = x->n_trials ? (double)x->torch_flagged / (double)x->n_trials : NAN;
            x->contract_frac =
                x->n_trials ? (double)x->contract_flagged / (double)x->n_trials : NAN;
            x->kcs_frac = kn ? (double)x->kcs_flagged / (double)kn : NAN;
            x->kcs_heldout_frac = kn ? (double)x->kcs_heldout_flagged / (double)kn : NAN;
        }
        for (int64_t a = first + 1; a < t->n_torch; a++) /* insertion sort by k */
            for (int64_t c = a; c > first && t->torch[c].k < t->torch[c - 1].k; c--) {
                kcs_torch_row tmp = t->torch[c];
                t->torch[c] = t->torch[c - 1];
                t->torch[c - 1] = tmp;
            }
    }
    return 0;
}

void kcs_baseline_tables_free(kcs_baseline_tables *t)
{
    KCS_FREE(t->groups, t->fits, t->tols, t->flags, t->torch);
    memset(t, 0, sizeof *t);
}
