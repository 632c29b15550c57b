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
    int max_impl = -1;
    for (size_t i = 0; i < n; i++)
        if ((!use || use[i]) && pts[i].impl > max_impl)
            max_impl = pts[i].impl;
    double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
    double *ns = malloc((n ? n : 1) * sizeof *ns);
    int32_t *g = malloc((n ? n : 1) * sizeof *g);
    int32_t *dense = malloc((size_t)(max_impl + 2) * sizeof *dense);
    if (!x || !y || !ns || !g || !dense) {
        free(x), free(y), free(ns), free(g), free(dense);
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
        if (q->outputs < out0)
            out0 = q->outputs;
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
    kcs_ols_cluster(x, y, g, m, G, 0.95, &f->alpha, &f->alpha_se, &f->alpha_lo, &f->alpha_hi);
    f->n_env = J;
    f->env_n = malloc((size_t)J * sizeof *f->env_n);
    f->env_u = malloc((size_t)J * sizeof *f->env_u);
    f->env_eta = malloc((size_t)J * sizeof *f->env_eta);
    if (!f->env_n || !f->env_u || !f->env_eta) {
        kcs_tolfit_free(f);
        free(x), free(y), free(ns), free(g), free(dense);
        return -1;
    }
    for (int j = 0; j < J; j++) {
        f->env_n[j] = ns[j];
        f->env_u[j] = 0.0;
    }
    for (size_t i = 0; i < m; i++) {
        double nn = exp(x[i]);
        int j = 0;
        double best = INFINITY;
        for (int k = 0; k < J; k++) /* nearest n_j (exp(log(n)) may differ in the last bit) */
            if (fabs(f->env_n[k] - nn) < best)
                best = fabs(f->env_n[k] - nn), j = k;
        double d = exp(y[i]);
        if (d > f->env_u[j])
            f->env_u[j] = d;
    }
    f->n_min = f->env_n[0];
    f->n_max = f->env_n[J - 1];
    f->outputs0 = out0;
    /* typical maximum of N0 -> the level exceeded with probability p, for
     * errors with an exponential tail (the scaled errors of a sum are a
     * Gaussian scale mixture: heavier-tailed than a Gaussian) */
    f->margin = out0 >= 1.0 ? log(2.0 * out0 / p) / log(2.0 * out0) : 1.0;
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
done:
    free(x), free(y), free(ns), free(g), free(dense);
    return 0;
}
