/* The tolerance model (tolmodel.h). */
#include "tolmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int kcs_ols_cluster(const double *x, const double *y, const int32_t *g, size_t n, int G,
                    double conf, double *slope_p, double *se_p, double *lo_p, double *hi_p)
{
    *slope_p = *se_p = *lo_p = *hi_p = NAN;
    if (n < 2)
        return -1;
    double mx = 0.0, my = 0.0;
    for (size_t i = 0; i < n; i++)
        mx += x[i], my += y[i];
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0.0, sxy = 0.0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0.0))
        return -1;
    double b = sxy / sxx;
    *slope_p = b;
    if (G < 2 || n < 3)
        return 0;
    double *score = calloc((size_t)G, sizeof *score);
    if (!score)
        return 0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - my - b * (x[i] - mx);
        if (g[i] >= 0 && g[i] < G)
            score[g[i]] += (x[i] - mx) * e;
    }
    double meat = 0.0;
    for (int j = 0; j < G; j++)
        meat += score[j] * score[j];
    free(score);
    double v = meat / (sxx * sxx) * ((double)G / (G - 1)) * ((double)(n - 1) / (double)(n - 2));
    double se = sqrt(v);
    double t = kcs_t_quantile(0.5 + 0.5 * conf, (double)(G - 1));
    *se_p = se;
    *lo_p = b - t * se;
    *hi_p = b + t * se;
    return 0;
}

double kcs_tol_outputs_factor(double outputs, double outputs0, double p)
{
    if (!(outputs > outputs0))
        return 1.0;
    return sqrt(log(2.0 * outputs / p) / log(2.0 * outputs0 / p));
}

double kcs_tol_outputs_factor_g(double outputs, double outputs0, double p, double gamma)
{
    if (!(outputs > outputs0))
        return 1.0;
    return pow(log(2.0 * outputs / p) / log(2.0 * outputs0 / p), gamma);
}

double kcs_tolfit_eta(const kcs_tolfit *f, double n, double outputs)
{
    double e0 = kcs_tolfit_eta0(f, n);
    if (isnan(e0))
        return NAN;
    return e0 * kcs_tol_outputs_factor_g(outputs, f->outputs0, f->p, f->gamma);
}

double kcs_tol_loglog(const double *xs, const double *ys, int n, double x)
{
    if (n < 1 || isnan(x))
        return NAN;
    const double rel = 1e-9;
    if (x < xs[0] * (1 - rel) || x > xs[n - 1] * (1 + rel))
        return NAN;
    if (n == 1 || x <= xs[0])
        return ys[0];
    for (int j = 1; j < n; j++) {
        if (x <= xs[j]) {
            if (x >= xs[j] * (1 - rel))
                return ys[j];
            double t = log(x / xs[j - 1]) / log(xs[j] / xs[j - 1]);
            return exp(log(ys[j - 1]) + t * (log(ys[j]) - log(ys[j - 1])));
        }
    }
    return ys[n - 1];
}

double kcs_tolfit_eta0(const kcs_tolfit *f, double n)
{
    if (f->form == KCS_TOLFORM_NONE || isnan(n))
        return NAN;
    if (f->form == KCS_TOLFORM_ENVELOPE)
        return kcs_tol_loglog(f->env_n, f->env_eta, f->n_env, n);
    double x = f->extrapolate >= 1.0 ? f->extrapolate : 1.0, rel = 1e-9;
    if (n < f->n_min / x * (1 - rel) || n > f->n_max * x * (1 + rel))
        return NAN;
    return f->c * pow(n, f->power_alpha) * f->u;
}

void kcs_tolfit_free(kcs_tolfit *f)
{
    free(f->env_n);
    free(f->env_u);
    free(f->env_eta);
    f->env_n = f->env_u = f->env_eta = NULL;
    f->n_env = 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int nearest(const double *v, int n, double x)
{
    int j = 0;
    double best = INFINITY;
    for (int k = 0; k < n; k++)
        if (fabs(v[k] - x) < best)
            best = fabs(v[k] - x), j = k;
    return j;
}

/* gamma (tolmodel.h, step 6): within cells (implementation g, n_j), OLS of
 * y = ln d on z = ln ln(2N); cluster-robust by implementation. */
static int fit_gamma(const double *x, const double *y, const double *os, const int32_t *g,
                     size_t m, int G, const double *nj, int J, kcs_tolfit *f)
{
    f->gamma = KCS_TOL_GAMMA_DEFAULT;
    f->gamma_fitted = 0;
    size_t nc = (size_t)G * (size_t)J;
    double *sz = calloc(nc ? nc : 1, sizeof *sz), *sy = calloc(nc ? nc : 1, sizeof *sy);
    double *cnt = calloc(nc ? nc : 1, sizeof *cnt), *score = calloc((size_t)G + 1, sizeof *score);
    int *cell = malloc((m ? m : 1) * sizeof *cell);
    if (!sz || !sy || !cnt || !score || !cell) {
        free(sz), free(sy), free(cnt), free(score), free(cell);
        return -1;
    }
    for (size_t i = 0; i < m; i++) {
        int c = g[i] * J + nearest(nj, J, exp(x[i]));
        cell[i] = c;
        sz[c] += log(log(2.0 * os[i]));
        sy[c] += y[i];
        cnt[c] += 1.0;
    }
    double szz = 0.0, szy = 0.0, zmin = INFINITY, zmax = -INFINITY;
    for (size_t i = 0; i < m; i++) {
        int c = cell[i];
        double z = log(log(2.0 * os[i])) - sz[c] / cnt[c];
        szz += z * z;
        szy += z * (y[i] - sy[c] / cnt[c]);
        zmin = fmin(zmin, log(log(2.0 * os[i])));
        zmax = fmax(zmax, log(log(2.0 * os[i])));
    }
    if (szz > 1e-9 * (double)m && zmax - zmin > 1e-6) {
        double b = szy / szz;
        for (size_t i = 0; i < m; i++) {
            int c = cell[i];
            double z = log(log(2.0 * os[i])) - sz[c] / cnt[c];
            score[g[i]] += z * ((y[i] - sy[c] / cnt[c]) - b * z);
        }
        double meat = 0.0;
        for (int k = 0; k < G; k++)
            meat += score[k] * score[k];
        f->gamma_hat = b;
        if (G >= 2) {
            double se = sqrt(meat / (szz * szz) * ((double)G / (G - 1)));
            double t = kcs_t_quantile(0.975, (double)(G - 1));
            f->gamma_lo = b - t * se;
            f->gamma_hi = b + t * se;
        }
        f->gamma = fmin(KCS_TOL_GAMMA_MAX, fmax(KCS_TOL_GAMMA_MIN, b));
        f->gamma_fitted = 1;
    }
    free(sz), free(sy), free(cnt), free(score), free(cell);
    return 0;
}

int kcs_tolfit_make(const kcs_tolpt *pts, size_t n, const unsigned char *use, double u, double p,
                    int strict, kcs_tolfit *f)
{
    memset(f, 0, sizeof *f);
    f->u = u;
    f->p = p;
    f->alpha = f->alpha_se = f->alpha_lo = f->alpha_hi = f->c = NAN;
    f->alpha_env = f->alpha_env_lo = f->alpha_env_hi = NAN;
    f->power_alpha = f->power_lo = f->power_hi = NAN;
    f->margin = f->spread = f->spread_env = f->n_min = f->n_max = f->outputs0 = NAN;
    f->extrapolate = 1.0;
    f->gamma = KCS_TOL_GAMMA_DEFAULT;
    f->gamma_hat = f->gamma_lo = f->gamma_hi = f->outputs_max = NAN;
    f->scale = 1.0;
    int max_impl = -1;
    for (size_t i = 0; i < n; i++)
        if ((!use || use[i]) && pts[i].impl > max_impl)
            max_impl = pts[i].impl;
    double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
    double *ns = malloc((n ? n : 1) * sizeof *ns), *os = malloc((n ? n : 1) * sizeof *os);
    int32_t *g = malloc((n ? n : 1) * sizeof *g);
    int32_t *dense = malloc((size_t)(max_impl + 2) * sizeof *dense);
    if (!x || !y || !ns || !os || !g || !dense) {
        free(x), free(y), free(ns), free(os), free(g), free(dense);
        return -1;
    }
    for (int i = 0; i <= max_impl; i++)
        dense[i] = -1;
    size_t m = 0;
    int G = 0;
    double out0 = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const kcs_tolpt *q = &pts[i];
        if (use && !use[i])
            continue;
        if (q->d == 0.0) {
            f->n_zero++;
            continue;
        }
        if (!(q->d > 0.0) || isinf(q->d) || !(q->n > 0.0))
            continue;
        if (dense[q->impl] < 0)
            dense[q->impl] = G++;
        x[m] = log(q->n);
        y[m] = log(q->d);
        g[m] = dense[q->impl];
        ns[m] = q->n;
        os[m] = q->outputs >= 1.0 ? q->outputs : 1.0;
        if (os[m] < out0)
            out0 = os[m];
        if (!(os[m] <= f->outputs_max))
            f->outputs_max = os[m];
        m++;
    }
    f->n_points = (int64_t)m;
    f->n_impls = G;
    qsort(ns, m, sizeof *ns, cmp_dbl);
    int J = 0;
    for (size_t i = 0; i < m; i++)
        if (J == 0 || ns[i] != ns[J - 1])
            ns[J++] = ns[i];
    if (!(u > 0.0) || !isfinite(u)) {
        snprintf(f->missing, sizeof f->missing, "no unit roundoff for the accumulator");
        goto done;
    }
    int min_impl = strict ? KCS_TOL_MIN_IMPLS : 1, min_nv = strict ? KCS_TOL_MIN_NVALUES : 2;
    int64_t min_pts = strict ? KCS_TOL_MIN_TRIALS : 8;
    if (G < min_impl || J < min_nv || (int64_t)m < min_pts) {
        size_t w = 0;
        if (G < min_impl)
            w += (size_t)snprintf(f->missing + w, sizeof f->missing - w,
                                  "%d conforming implementation%s (need %d)", G,
                                  G == 1 ? "" : "s", min_impl);
        if (J < min_nv && w < sizeof f->missing)
            w += (size_t)snprintf(f->missing + w, sizeof f->missing - w,
                                  "%s%d distinct n (need %d)", w ? "; " : "", J, min_nv);
        if ((int64_t)m < min_pts && w < sizeof f->missing)
            snprintf(f->missing + w, sizeof f->missing - w,
                     "%s%lld trials with a nonzero divergence (need %lld)", w ? "; " : "",
                     (long long)m, (long long)min_pts);
        goto done;
    }
    f->outputs0 = out0;
    if (fit_gamma(x, y, os, g, m, G, ns, J, f) < 0) {
        free(x), free(y), free(ns), free(os), free(g), free(dense);
        return -1;
    }
    /* every point brought to N0 outputs by the fitted rule */
    for (size_t i = 0; i < m; i++)
        y[i] -= log(kcs_tol_outputs_factor_g(os[i], out0, p, f->gamma));
    kcs_ols_cluster(x, y, g, m, G, 0.95, &f->alpha, &f->alpha_se, &f->alpha_lo, &f->alpha_hi);
    f->n_env = J;
    f->env_n = malloc((size_t)J * sizeof *f->env_n);
    f->env_u = malloc((size_t)J * sizeof *f->env_u);
    f->env_eta = malloc((size_t)J * sizeof *f->env_eta);
    if (!f->env_n || !f->env_u || !f->env_eta) {
        kcs_tolfit_free(f);
        free(x), free(y), free(ns), free(os), free(g), free(dense);
        return -1;
    }
    for (int j = 0; j < J; j++) {
        f->env_n[j] = ns[j];
        f->env_u[j] = 0.0;
    }
    for (size_t i = 0; i < m; i++) {
        /* nearest n_j (exp(log(n)) may differ in the last bit) */
        int j = nearest(f->env_n, J, exp(x[i]));
        double d = exp(y[i]);
        if (d > f->env_u[j])
            f->env_u[j] = d;
    }
    f->n_min = f->env_n[0];
    f->n_max = f->env_n[J - 1];
    /* typical maximum of N0 -> the level exceeded with probability p, for
     * errors with an exponential tail (the scaled errors of a sum are a
     * Gaussian scale mixture: heavier-tailed than a Gaussian), or the
     * fitted tail where it is heavier still */
    f->margin = out0 >= 1.0 ? pow(log(2.0 * out0 / p) / log(2.0 * out0), fmax(1.0, f->gamma))
                            : 1.0;
    {
        double lx[J], ly[J];
        int32_t gz[J];
        for (int j = 0; j < J; j++)
            lx[j] = log(f->env_n[j]), ly[j] = log(f->env_u[j]), gz[j] = j;
        /* the per-n maxima: each n_j its own unit (independent cases) */
        double se;
        if (J >= 3) {
            double b, lo, hi, mx = 0, sxx = 0, my = 0, rss = 0;
            kcs_ols_cluster(lx, ly, gz, (size_t)J, 1, 0.95, &b, &se, &lo, &hi);
            for (int j = 0; j < J; j++)
                mx += lx[j] / J, my += ly[j] / J;
            for (int j = 0; j < J; j++) {
                double e = ly[j] - my - b * (lx[j] - mx);
                sxx += (lx[j] - mx) * (lx[j] - mx);
                rss += e * e;
            }
            double t = kcs_t_quantile(0.975, (double)(J - 2));
            f->alpha_env = b;
            f->alpha_env_lo = b - t * sqrt(rss / (J - 2) / sxx);
            f->alpha_env_hi = b + t * sqrt(rss / (J - 2) / sxx);
        } else {
            double lo, hi;
            kcs_ols_cluster(lx, ly, gz, (size_t)J, 1, 0.95, &f->alpha_env, &se, &lo, &hi);
        }
        double a_p = -INFINITY, a_e = -INFINITY, l_p = 0.0, l_e = 0.0;
        for (int j = 0; j < J; j++) {
            a_p = fmax(a_p, ly[j] - f->alpha * lx[j]);
            a_e = fmax(a_e, ly[j] - f->alpha_env * lx[j]);
        }
        for (int j = 0; j < J; j++) {
            l_p = fmax(l_p, a_p + f->alpha * lx[j] - ly[j]);
            l_e = fmax(l_e, a_e + f->alpha_env * lx[j] - ly[j]);
        }
        f->spread = exp(l_p);
        f->spread_env = exp(l_e);
        int in_ci = isnan(f->alpha_lo) ||
                    (f->alpha_env >= f->alpha_lo && f->alpha_env <= f->alpha_hi);
        if (isfinite(f->alpha) && f->spread <= KCS_TOL_SHAPE_SPREAD && in_ci) {
            f->form = KCS_TOLFORM_POWER;
            f->basis = KCS_TOLBASIS_POOLED;
            f->power_alpha = f->alpha, f->power_lo = f->alpha_lo, f->power_hi = f->alpha_hi;
            f->c = f->margin * exp(a_p) / u;
        } else if (isfinite(f->alpha_env) && f->spread_env <= KCS_TOL_SHAPE_SPREAD) {
            f->form = KCS_TOLFORM_POWER;
            f->basis = KCS_TOLBASIS_ENVELOPE;
            f->power_alpha = f->alpha_env, f->power_lo = f->alpha_env_lo;
            f->power_hi = f->alpha_env_hi;
            f->c = f->margin * exp(a_e) / u;
        } else {
            f->form = KCS_TOLFORM_ENVELOPE;
            f->c = f->margin * exp(a_p) / u; /* informational: the pooled power law */
        }
    }
    f->extrapolate = f->form == KCS_TOLFORM_POWER ? KCS_TOL_EXTRAPOLATE : 1.0;
    for (int j = 0; j < J; j++)
        f->env_eta[j] = f->form == KCS_TOLFORM_POWER
                            ? f->c * pow(f->env_n[j], f->power_alpha) * u
                            : f->margin * f->env_u[j];
    f->c_fit = f->c;
done:
    free(x), free(y), free(ns), free(os), free(g), free(dense);
    return 0;
}

void kcs_tolfit_scale(kcs_tolfit *f, double s)
{
    if (f->form == KCS_TOLFORM_NONE || !(s > 0.0) || !isfinite(s))
        return;
    f->c *= s;
    for (int j = 0; j < f->n_env; j++)
        f->env_eta[j] *= s;
    f->scale *= s;
}

/* splitmix64: the bootstrap's deterministic generator */
static uint64_t sm64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t draw(uint64_t *s, size_t n)
{
    return (size_t)((sm64(s) >> 11) * 0x1.0p-53 * (double)n) % (n ? n : 1);
}

typedef struct bcell {
    int32_t impl;
    double n, outputs;
    size_t i;
} bcell;

static int cmp_bcell(const void *a, const void *b)
{
    const bcell *x = a, *y = b;
    if (x->impl != y->impl)
        return x->impl < y->impl ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    if (x->outputs != y->outputs)
        return x->outputs < y->outputs ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

int kcs_tolfit_bootstrap(const kcs_tolpt *pts, size_t n, const unsigned char *use,
                         const kcs_tolfit *f, int B, uint64_t seed, double conf, double *lo,
                         double *hi, int *used)
{
    *lo = *hi = NAN;
    *used = 0;
    if (f->form == KCS_TOLFORM_NONE || B < 1)
        return 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += !use || use[i];
    bcell *c = malloc((m ? m : 1) * sizeof *c);
    size_t *start = malloc((m + 1) * sizeof *start), *cof = malloc((m ? m : 1) * sizeof *cof);
    kcs_tolpt *rep = malloc((m ? m : 1) * sizeof *rep);
    double *ratio = malloc((size_t)B * sizeof *ratio);
    int32_t *impls = malloc((m ? m : 1) * sizeof *impls);
    size_t *istart = malloc((m + 1) * sizeof *istart);
    if (!c || !start || !cof || !rep || !ratio || !impls || !istart) {
        free(c), free(start), free(cof), free(rep), free(ratio), free(impls), free(istart);
        return -1;
    }
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (!use || use[i])
            c[m] = (bcell){pts[i].impl, pts[i].n, pts[i].outputs, i}, m++;
    qsort(c, m, sizeof *c, cmp_bcell);
    /* cells (impl, n, N): start[k] .. start[k+1]; cof[i]: the cell of sorted point i;
     * implementations: istart[g] .. istart[g+1] in the sorted order */
    size_t nc = 0, ng = 0;
    for (size_t i = 0; i < m; i++) {
        if (i == 0 || cmp_bcell(&(bcell){c[i].impl, c[i].n, c[i].outputs, 0},
                                &(bcell){c[i - 1].impl, c[i - 1].n, c[i - 1].outputs, 0}))
            start[nc++] = i;
        cof[i] = nc - 1;
        if (i == 0 || c[i].impl != c[i - 1].impl)
            istart[ng] = i, impls[ng++] = c[i].impl;
    }
    start[nc] = m;
    istart[ng] = m;
    /* a replicate draws ng implementations: up to ng times the largest */
    size_t big = 0;
    for (size_t k = 0; k < ng; k++)
        if (istart[k + 1] - istart[k] > big)
            big = istart[k + 1] - istart[k];
    free(rep);
    rep = malloc((ng * big > 0 ? ng * big : 1) * sizeof *rep);
    if (!rep) {
        free(c), free(start), free(cof), free(ratio), free(impls), free(istart);
        return -1;
    }
    uint64_t s = seed;
    int nb = 0;
    for (int b = 0; b < B; b++) {
        size_t w = 0;
        for (size_t k = 0; k < ng; k++) {
            size_t gi = draw(&s, ng);
            for (size_t i = istart[gi]; i < istart[gi + 1]; i++) {
                size_t cc = cof[i];
                size_t pick = start[cc] + draw(&s, start[cc + 1] - start[cc]);
                rep[w] = pts[c[pick].i];
                rep[w].impl = (int32_t)k; /* a drawn implementation is its own cluster */
                w++;
            }
        }
        kcs_tolfit fb;
        if (kcs_tolfit_make(rep, w, NULL, f->u, f->p, 0, &fb) < 0) {
            free(c), free(start), free(cof), free(rep), free(ratio), free(impls), free(istart);
            return -1;
        }
        if (fb.form != KCS_TOLFORM_NONE) {
            double r = -INFINITY;
            for (int j = 0; j < f->n_env; j++) {
                double e = kcs_tolfit_eta0(&fb, f->env_n[j]);
                if (isfinite(e) && f->env_eta[j] > 0.0)
                    r = fmax(r, e / (f->env_eta[j] / f->scale));
            }
            if (isfinite(r))
                ratio[nb++] = r;
        }
        kcs_tolfit_free(&fb);
    }
    *used = nb;
    if (nb > 0) {
        *lo = kcs_quantile(ratio, (size_t)nb, 0.5 - 0.5 * conf);
        *hi = kcs_quantile(ratio, (size_t)nb, 0.5 + 0.5 * conf);
    }
    free(c), free(start), free(cof), free(rep), free(ratio), free(impls), free(istart);
    return 0;
}
