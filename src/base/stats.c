/* Fits, t quantiles and log histograms (stats.h). */
#include "stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kcs_fit_add(kcs_fit_acc *a, double x, double y)
{
    double n = a->n + 1.0;
    double dx = x - a->mx, dy = y - a->my;
    a->mx += dx / n;
    a->my += dy / n;
    /* (x - new mean) * (old deviation): the Welford update */
    a->cxx += dx * (x - a->mx);
    a->cxy += dx * (y - a->my);
    a->cyy += dy * (y - a->my);
    a->n = n;
}

void kcs_fit_merge(kcs_fit_acc *a, const kcs_fit_acc *b)
{
    if (b->n == 0.0)
        return;
    if (a->n == 0.0) {
        *a = *b;
        return;
    }
    double n = a->n + b->n;
    double dx = b->mx - a->mx, dy = b->my - a->my;
    double w = a->n * b->n / n;
    a->cxx += b->cxx + dx * dx * w;
    a->cxy += b->cxy + dx * dy * w;
    a->cyy += b->cyy + dy * dy * w;
    a->mx += dx * b->n / n;
    a->my += dy * b->n / n;
    a->n = n;
}

int kcs_fit_solve(const kcs_fit_acc *a, double conf, kcs_fit *f)
{
    memset(f, 0, sizeof *f);
    f->n = (int64_t)a->n;
    f->slope = f->intercept = f->se = f->t = f->lo = f->hi = f->r2 = NAN;
    if (a->n < 2.0 || !(a->cxx > 0.0))
        return -1;
    f->slope = a->cxy / a->cxx;
    f->intercept = a->my - f->slope * a->mx;
    double rss = a->cyy - f->slope * a->cxy;
    if (rss < 0.0)
        rss = 0.0; /* rounding of an exact fit */
    f->r2 = a->cyy > 0.0 ? 1.0 - rss / a->cyy : 1.0;
    if (a->n >= 3.0) {
        double df = a->n - 2.0;
        f->se = sqrt(rss / df / a->cxx);
        f->t = kcs_t_quantile(0.5 + 0.5 * conf, df);
        f->lo = f->slope - f->t * f->se;
        f->hi = f->slope + f->t * f->se;
    }
    return 0;
}

#define LENTZ_TINY 1e-300

/* One modified-Lentz step with the coefficient aa: updates c and d and
 * returns the factor d * c of the convergent. */
static double lentz_step(double aa, double *c, double *d)
{
    *d = 1.0 + aa * *d;
    if (fabs(*d) < LENTZ_TINY)
        *d = LENTZ_TINY;
    *c = 1.0 + aa / *c;
    if (fabs(*c) < LENTZ_TINY)
        *c = LENTZ_TINY;
    *d = 1.0 / *d;
    return *d * *c;
}

/* Continued fraction of the incomplete beta (modified Lentz). */
static double betacf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0, d = 1.0 - qab * x / qap;
    if (fabs(d) < LENTZ_TINY)
        d = LENTZ_TINY;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 500; m++) {
        int m2 = 2 * m;
        h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
        double del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
        h *= del;
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}

double kcs_betainc(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    double bt = exp(lbt);
    if (x < (a + 1.0) / (a + b + 2.0))
        return bt * betacf(a, b, x) / a;
    return 1.0 - bt * betacf(b, a, 1.0 - x) / b;
}

double kcs_t_cdf(double t, double df)
{
    if (isnan(t) || !(df > 0.0))
        return NAN;
    double x = df / (df + t * t);
    double tail = 0.5 * kcs_betainc(0.5 * df, 0.5, x); /* P(T > |t|) */
    return t >= 0.0 ? 1.0 - tail : tail;
}

double kcs_t_quantile(double p, double df)
{
    if (!(p > 0.0 && p < 1.0) || !(df > 0.0))
        return NAN;
    if (p == 0.5)
        return 0.0;
    if (p < 0.5)
        return -kcs_t_quantile(1.0 - p, df);
    /* bracket, then bisect: the CDF is monotone */
    double lo = 0.0, hi = 1.0;
    while (kcs_t_cdf(hi, df) < p && hi < 1e12)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (kcs_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

void kcs_loghist_init(kcs_loghist *h)
{
    memset(h, 0, sizeof *h);
    h->max = -INFINITY;
}

void kcs_loghist_add(kcs_loghist *h, double v)
{
    if (isnan(v))
        return;
    h->n++;
    if (v > h->max)
        h->max = v;
    if (!(v > 0.0)) {
        h->under++;
        return;
    }
    double b = floor(log2(v) * KCS_LOGHIST_PER_OCTAVE) -
               (double)KCS_LOGHIST_MIN_EXP * KCS_LOGHIST_PER_OCTAVE;
    if (b < 0.0)
        h->under++;
    else if (b >= (double)KCS_LOGHIST_BINS)
        h->over++;
    else
        h->bin[(int)b]++;
}

void kcs_loghist_merge(kcs_loghist *h, const kcs_loghist *o)
{
    h->n += o->n;
    h->under += o->under;
    h->over += o->over;
    if (o->max > h->max)
        h->max = o->max;
    for (int i = 0; i < KCS_LOGHIST_BINS; i++)
        h->bin[i] += o->bin[i];
}

double kcs_loghist_quantile(const kcs_loghist *h, double q)
{
    if (h->n == 0 || !(q > 0.0 && q <= 1.0))
        return NAN;
    if (q >= 1.0)
        return h->max;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n); /* 1-based */
    if (rank < 1)
        rank = 1;
    uint64_t seen = h->under;
    if (seen >= rank)
        return exp2((double)KCS_LOGHIST_MIN_EXP) < h->max ? exp2((double)KCS_LOGHIST_MIN_EXP)
                                                           : h->max;
    for (int i = 0; i < KCS_LOGHIST_BINS; i++) {
        seen += h->bin[i];
        if (seen >= rank) {
            double edge = exp2((double)KCS_LOGHIST_MIN_EXP + (double)(i + 1) / KCS_LOGHIST_PER_OCTAVE);
            return edge < h->max ? edge : h->max;
        }
    }
    return h->max;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kcs_quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n)
        return v[n - 1];
    double f = pos - (double)i;
    return v[i] + f * (v[i + 1] - v[i]);
}

static double beta_quantile(double q, double a, double b)
{
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = 0.5 * (lo + hi);
        if (kcs_betainc(a, b, mid) < q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

void kcs_clopper_pearson(int64_t k, int64_t n, double conf, double *lo_p, double *hi_p)
{
    if (n <= 0 || k < 0 || k > n) {
        *lo_p = *hi_p = NAN;
        return;
    }
    double a = 1.0 - conf;
    *lo_p = k == 0 ? 0.0 : beta_quantile(0.5 * a, (double)k, (double)(n - k + 1));
    *hi_p = k == n ? 1.0 : beta_quantile(1.0 - 0.5 * a, (double)(k + 1), (double)(n - k));
}
