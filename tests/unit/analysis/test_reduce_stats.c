/* The reducer's statistics (analysis/stats.c): Student t against closed
 * forms, the incomplete beta against its special cases, least-squares fits
 * against a two-pass computation done here, mergeable accumulators, log
 * histograms and quantiles. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>

#include "stats.h"
#include "unit_helpers.h"

#define PI 3.14159265358979323846

static void test_t_closed_forms(void)
{
    /* df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/pi,
     * Q(p) = tan(pi (p - 1/2)) */
    for (double t = -5.0; t <= 5.0; t += 0.5)
        CU_ASSERT_DOUBLE_EQUAL(kcs_t_cdf(t, 1.0), 0.5 + atan(t) / PI, 1e-12);
    for (double p = 0.55; p < 0.999; p += 0.05)
        CU_ASSERT_DOUBLE_EQUAL(kcs_t_quantile(p, 1.0), tan(PI * (p - 0.5)),
                               1e-9 * fabs(tan(PI * (p - 0.5))) + 1e-9);
    /* df = 2: Q(p) = (2p - 1) / sqrt(2 p (1 - p)) */
    for (double p = 0.6; p < 0.999; p += 0.05)
        CU_ASSERT_DOUBLE_EQUAL(kcs_t_quantile(p, 2.0), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-9);
    /* df = 4: F(t) = 1/2 + t (t^2 + 6) / (2 (t^2 + 4)^(3/2)) */
    for (double t = 0.0; t <= 6.0; t += 0.75)
        CU_ASSERT_DOUBLE_EQUAL(kcs_t_cdf(t, 4.0),
                               0.5 + t * (t * t + 6.0) / (2.0 * pow(t * t + 4.0, 1.5)), 1e-12);
    /* symmetry and the normal limit: Q(0.975) -> 1.959963984540054 */
    CU_ASSERT_DOUBLE_EQUAL(kcs_t_quantile(0.025, 7.0), -kcs_t_quantile(0.975, 7.0), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(kcs_t_quantile(0.975, 1e7), 1.959963984540054, 1e-5);
    CU_ASSERT_TRUE(isnan(kcs_t_quantile(1.0, 3.0)));
}

static void test_betainc(void)
{
    for (double x = 0.0; x <= 1.0; x += 0.125) {
        CU_ASSERT_DOUBLE_EQUAL(kcs_betainc(1.0, 1.0, x), x, 1e-13);
        CU_ASSERT_DOUBLE_EQUAL(kcs_betainc(3.0, 1.0, x), x * x * x, 1e-13);
        CU_ASSERT_DOUBLE_EQUAL(kcs_betainc(1.0, 2.5, x), 1.0 - pow(1.0 - x, 2.5), 1e-13);
        /* I_x(a, b) = 1 - I_{1-x}(b, a) */
        CU_ASSERT_DOUBLE_EQUAL(kcs_betainc(2.5, 4.0, x), 1.0 - kcs_betainc(4.0, 2.5, 1.0 - x),
                               1e-13);
    }
}

/* A small deterministic generator for noisy points. */
static double lcg(unsigned long long *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0 - 0.5;
}

static void test_fit(void)
{
    /* exact line */
    kcs_fit_acc a = {0};
    for (int i = 0; i < 9; i++)
        kcs_fit_add(&a, log(64.0 * (1 << i)), 2.0 + 0.5 * log(64.0 * (1 << i)));
    kcs_fit f;
    CU_ASSERT_EQUAL(kcs_fit_solve(&a, 0.95, &f), 0);
    CU_ASSERT_DOUBLE_EQUAL(f.slope, 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f.intercept, 2.0, 1e-10);
    CU_ASSERT_DOUBLE_EQUAL(f.se, 0.0, 1e-7);
    /* noisy points against the textbook two-pass formulas */
    unsigned long long s = 7;
    double x[60], y[60];
    kcs_fit_acc b = {0}, b1 = {0}, b2 = {0};
    for (int i = 0; i < 60; i++) {
        x[i] = log(64.0) + 0.1 * i;
        y[i] = -12.0 + 1.1 * x[i] + 0.3 * lcg(&s);
        kcs_fit_add(&b, x[i], y[i]);
        kcs_fit_add(i < 23 ? &b1 : &b2, x[i], y[i]);
    }
    double mx = 0, my = 0;
    for (int i = 0; i < 60; i++)
        mx += x[i] / 60, my += y[i] / 60;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < 60; i++)
        sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
    double slope = sxy / sxx, icpt = my - slope * mx, rss = 0;
    for (int i = 0; i < 60; i++)
        rss += pow(y[i] - icpt - slope * x[i], 2);
    double se = sqrt(rss / 58 / sxx);
    CU_ASSERT_EQUAL(kcs_fit_solve(&b, 0.95, &f), 0);
    CU_ASSERT_DOUBLE_EQUAL(f.slope, slope, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f.se, se, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f.hi - f.slope, kcs_t_quantile(0.975, 58) * se, 1e-12);
    CU_ASSERT_TRUE(f.lo < 1.1 && 1.1 < f.hi); /* the truth inside the interval here */
    /* merging two halves equals one pass */
    kcs_fit_merge(&b1, &b2);
    kcs_fit f2;
    kcs_fit_solve(&b1, 0.95, &f2);
    CU_ASSERT_DOUBLE_EQUAL(f2.slope, f.slope, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f2.se, f.se, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(b1.n, 60.0, 0.0);
    /* degenerate: one x value */
    kcs_fit_acc c = {0};
    kcs_fit_add(&c, 1.0, 1.0);
    kcs_fit_add(&c, 1.0, 2.0);
    CU_ASSERT_EQUAL(kcs_fit_solve(&c, 0.95, &f), -1);
    CU_ASSERT_TRUE(isnan(f.slope));
}

static void test_loghist(void)
{
    kcs_loghist *h = malloc(sizeof *h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    kcs_loghist_init(h);
    double *v = malloc(1000 * sizeof *v);
    for (int i = 0; i < 1000; i++) {
        v[i] = 1e-3 * (i + 1);
        kcs_loghist_add(h, v[i]);
    }
    kcs_loghist_add(h, NAN); /* ignored */
    CU_ASSERT_EQUAL(h->n, 1000);
    CU_ASSERT_DOUBLE_EQUAL(kcs_loghist_quantile(h, 1.0), 1.0, 0.0);
    /* the 990th smallest value is 0.99: the bound is at or above it, at
     * most one bin (2^(1/16)) higher */
    double q = kcs_loghist_quantile(h, 0.99);
    CU_ASSERT_TRUE(q >= 0.99 && q <= 0.99 * exp2(1.0 / 16));
    q = kcs_loghist_quantile(h, 0.5);
    CU_ASSERT_TRUE(q >= 0.5 && q <= 0.5 * exp2(1.0 / 16));
    kcs_loghist *g = malloc(sizeof *g);
    kcs_loghist_init(g);
    kcs_loghist_add(g, 0.0);
    kcs_loghist_add(g, 5.0);
    kcs_loghist_merge(h, g);
    CU_ASSERT_EQUAL(h->n, 1002);
    CU_ASSERT_DOUBLE_EQUAL(kcs_loghist_quantile(h, 1.0), 5.0, 0.0);
    /* numpy-style interpolated quantile of 1..1000 * 1e-3 */
    CU_ASSERT_DOUBLE_EQUAL(kcs_quantile(v, 1000, 0.5), 0.5005, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(kcs_quantile(v, 1000, 1.0), 1.0, 0.0);
    free(v);
    free(g);
    free(h);
}

static const ut_test tests[] = {
    {"t distribution closed forms", test_t_closed_forms},
    {"incomplete beta special cases", test_betainc},
    {"least squares and merging", test_fit},
    {"log histogram quantiles", test_loghist},
};

UT_MAIN("reduce_stats", tests)
