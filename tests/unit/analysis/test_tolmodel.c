/* The tolerance model (analysis/tolmodel.c): Clopper-Pearson against
 * binomial tails summed here, the cluster-robust slope against the matrix
 * sandwich computed here, the choice of form on synthetic populations, the
 * validity range, the outputs rule and the minimum data. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tolmodel.h"
#include "unit_helpers.h"

/* P(X >= k) and P(X <= k) for X ~ Binomial(n, p), summed term by term */
static double binom_ge(int k, int n, double p)
{
    double s = 0.0;
    for (int i = k; i <= n; i++)
        s += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) + i * log(p) +
                 (n - i) * log1p(-p));
    return s;
}

static void test_clopper_pearson(void)
{
    double lo, hi;
    for (int n = 1; n <= 400; n = n * 3 + 1) {
        kcs_clopper_pearson(0, n, 0.95, &lo, &hi);
        CU_ASSERT_EQUAL(lo, 0.0);
        CU_ASSERT_DOUBLE_EQUAL(hi, 1.0 - pow(0.025, 1.0 / n), 1e-9);
        kcs_clopper_pearson(n, n, 0.95, &lo, &hi);
        CU_ASSERT_DOUBLE_EQUAL(lo, pow(0.025, 1.0 / n), 1e-9);
        CU_ASSERT_EQUAL(hi, 1.0);
    }
    /* the defining tails: P(X >= k | lo) = 0.025 = P(X <= k | hi) */
    int cases[][2] = {{1, 10}, {3, 40}, {7, 432}, {50, 100}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int k = cases[i][0], n = cases[i][1];
        kcs_clopper_pearson(k, n, 0.95, &lo, &hi);
        CU_ASSERT_TRUE(lo < (double)k / n && (double)k / n < hi);
        CU_ASSERT_DOUBLE_EQUAL(binom_ge(k, n, lo), 0.025, 1e-7);
        CU_ASSERT_DOUBLE_EQUAL(1.0 - binom_ge(k + 1, n, hi), 0.025, 1e-7);
    }
    kcs_clopper_pearson(0, 0, 0.95, &lo, &hi);
    CU_ASSERT_TRUE(isnan(lo) && isnan(hi));
}

/* deterministic noise in [-1, 1) */
static double noise(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (double)(*s >> 8) / (double)(1u << 23) - 1.0;
}

static void test_cluster_slope(void)
{
    enum { N = 60, G = 4 };
    double x[N], y[N];
    int32_t g[N];
    unsigned s = 7;
    for (int i = 0; i < N; i++) {
        g[i] = i % G;
        x[i] = (double)(i / G);
        y[i] = 0.3 * x[i] + 0.5 * g[i] + 0.2 * noise(&s) + 0.05 * g[i] * x[i];
    }
    double b, se, lo, hi;
    CU_ASSERT_EQUAL(kcs_ols_cluster(x, y, g, N, G, 0.95, &b, &se, &lo, &hi), 0);
    /* the sandwich (X'X)^-1 (sum_g X_g' e_g e_g' X_g) (X'X)^-1 with an
     * intercept column, CR1 factor G/(G-1) (N-1)/(N-2) */
    double sxx = 0, sx = 0, sxy = 0, sy = 0;
    for (int i = 0; i < N; i++)
        sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
    double det = N * sxx - sx * sx;
    double slope = (N * sxy - sx * sy) / det, icpt = (sy - slope * sx) / N;
    double inv[2][2] = {{sxx / det, -sx / det}, {-sx / det, N / det}};
    double meat[2][2] = {{0, 0}, {0, 0}};
    for (int c = 0; c < G; c++) {
        double u0 = 0, u1 = 0;
        for (int i = 0; i < N; i++)
            if (g[i] == c) {
                double e = y[i] - icpt - slope * x[i];
                u0 += e, u1 += x[i] * e;
            }
        meat[0][0] += u0 * u0, meat[0][1] += u0 * u1, meat[1][0] += u1 * u0, meat[1][1] += u1 * u1;
    }
    double t[2][2] = {{0, 0}, {0, 0}}, v11 = 0;
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < 2; k++)
                t[a][c] += inv[a][k] * meat[k][c];
    for (int k = 0; k < 2; k++)
        v11 += t[1][k] * inv[k][1];
    v11 *= (double)G / (G - 1) * (double)(N - 1) / (N - 2);
    CU_ASSERT_DOUBLE_EQUAL(b, slope, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(se, sqrt(v11), 1e-9 * sqrt(v11));
    CU_ASSERT_TRUE(lo < b && b < hi);
    /* one cluster: no interval */
    int32_t one[N] = {0};
    kcs_ols_cluster(x, y, one, N, 1, 0.95, &b, &se, &lo, &hi);
    CU_ASSERT_TRUE(isnan(se) && isnan(lo));
}

/* a population of implementations with divergence c_g n^alpha_g (1 + noise) */
static size_t population(kcs_tolpt *p, int G, const double *alpha, const double *c, int trials,
                         unsigned seed)
{
    size_t m = 0;
    unsigned s = seed;
    for (int g = 0; g < G; g++)
        for (double n = 64; n <= 16384; n *= 2)
            for (int t = 0; t < trials; t++, m++)
                p[m] = (kcs_tolpt){n, c[g] * pow(n, alpha[g]) * 1e-7 * (1.0 + 0.15 * noise(&s)),
                                   1024, g, t % KCS_TOL_FOLDS};
    return m;
}

static void test_forms(void)
{
    kcs_tolpt *p = malloc(4 * 9 * 8 * sizeof *p);
    double u = ldexp(1.0, -24);
    /* same slope everywhere: a power law */
    double a1[] = {0.5, 0.5, 0.5}, c1[] = {1.0, 2.0, 0.5};
    size_t m = population(p, 3, a1, c1, 8, 3);
    kcs_tolfit f;
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, NULL, u, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.form, KCS_TOLFORM_POWER);
    CU_ASSERT_EQUAL(f.basis, KCS_TOLBASIS_POOLED);
    CU_ASSERT_EQUAL(f.power_alpha, f.alpha);
    CU_ASSERT_DOUBLE_EQUAL(f.alpha, 0.5, 0.05);
    CU_ASSERT_TRUE(f.alpha_lo < f.alpha && f.alpha < f.alpha_hi);
    CU_ASSERT_EQUAL(f.n_impls, 3);
    CU_ASSERT_EQUAL(f.n_env, 9);
    CU_ASSERT_DOUBLE_EQUAL(f.n_min, 64, 0);
    CU_ASSERT_DOUBLE_EQUAL(f.n_max, 16384, 0);
    CU_ASSERT_DOUBLE_EQUAL(f.margin, log(2048 / 0.01) / log(2048), 1e-12);
    for (size_t i = 0; i < m; i++) /* in sample: nothing flagged */
        CU_ASSERT_FALSE(kcs_tol_flags(p[i].d, kcs_tolfit_eta0(&f, p[i].n)));
    for (int j = 0; j < f.n_env; j++) {
        CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta0(&f, f.env_n[j]),
                               f.c * pow(f.env_n[j], f.power_alpha) * u, 1e-12 * f.env_eta[j]);
        CU_ASSERT_TRUE(f.env_eta[j] >= f.margin * f.env_u[j] * (1 - 1e-12));
    }
    /* between fitted n the power law holds; it extrapolates a factor 4 */
    CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta0(&f, 3000), f.c * pow(3000, f.alpha) * u, 1e-20);
    CU_ASSERT_DOUBLE_EQUAL(f.extrapolate, KCS_TOL_EXTRAPOLATE, 0);
    CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta0(&f, 16), f.c * pow(16, f.alpha) * u, 1e-20);
    CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta0(&f, 65536), f.c * pow(65536, f.alpha) * u, 1e-20);
    CU_ASSERT_TRUE(isnan(kcs_tolfit_eta0(&f, 15)));
    CU_ASSERT_TRUE(isnan(kcs_tolfit_eta0(&f, 65537)));
    kcs_tolfit_free(&f);

    /* slopes 0 and -0.5 (sequential vs blocked summation): the pooled
     * exponent describes neither; the upper envelope is the flat one */
    double a2[] = {0.0, -0.5, -0.5}, c2[] = {2.0, 16.0, 8.0};
    m = population(p, 3, a2, c2, 8, 5);
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, NULL, u, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.form, KCS_TOLFORM_POWER);
    CU_ASSERT_EQUAL(f.basis, KCS_TOLBASIS_ENVELOPE);
    CU_ASSERT_TRUE(f.spread > KCS_TOL_SHAPE_SPREAD);
    CU_ASSERT_TRUE(f.spread_env <= KCS_TOL_SHAPE_SPREAD);
    CU_ASSERT_DOUBLE_EQUAL(f.power_alpha, 0.0, 0.1);
    CU_ASSERT_TRUE(f.power_lo < f.power_alpha && f.power_alpha < f.power_hi);
    CU_ASSERT_TRUE(f.alpha < -0.1);
    for (size_t i = 0; i < m; i++)
        CU_ASSERT_FALSE(kcs_tol_flags(p[i].d, kcs_tolfit_eta0(&f, p[i].n)));
    kcs_tolfit_free(&f);

    /* slopes +1 and -1 crossing at n = 1024: a V-shaped envelope, no power law */
    double a3[] = {1.0, -1.0}, c3[] = {1.0, 1048576.0};
    m = population(p, 2, a3, c3, 8, 5);
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, NULL, u, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.form, KCS_TOLFORM_ENVELOPE);
    CU_ASSERT_TRUE(f.spread_env > KCS_TOL_SHAPE_SPREAD);
    CU_ASSERT_TRUE(isnan(kcs_tolfit_eta0(&f, 63)));
    CU_ASSERT_TRUE(isnan(kcs_tolfit_eta0(&f, 16385)));
    for (int j = 0; j < f.n_env; j++)
        CU_ASSERT_DOUBLE_EQUAL(f.env_eta[j], f.margin * f.env_u[j], 1e-15);
    /* log-log interpolation: the geometric mean half way */
    double mid = sqrt(f.env_n[2] * f.env_n[3]);
    CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta0(&f, mid), sqrt(f.env_eta[2] * f.env_eta[3]),
                           1e-9 * f.env_eta[2]);
    kcs_tolfit_free(&f);

    /* one implementation: no recommendation, and it says why */
    m = population(p, 1, a1, c1, 8, 9);
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, NULL, u, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.form, KCS_TOLFORM_NONE);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.missing, "1 conforming implementation (need 2)"));
    CU_ASSERT_TRUE(isnan(kcs_tolfit_eta0(&f, 1024)));
    kcs_tolfit_free(&f);
    /* too few trials: 2 implementations x 9 n x 1 trial = 18 < 30 */
    m = population(p, 2, a1, c1, 1, 11);
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, NULL, u, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.form, KCS_TOLFORM_NONE);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.missing, "18 trials with a nonzero divergence (need 30)"));
    CU_ASSERT_PTR_NULL(strstr(f.missing, "implementation"));
    kcs_tolfit_free(&f);
    /* an accumulator without a unit roundoff: nothing to scale by */
    m = population(p, 3, a1, c1, 8, 13);
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, NULL, NAN, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.form, KCS_TOLFORM_NONE);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.missing, "unit roundoff"));
    kcs_tolfit_free(&f);
    /* zeros are counted, not fitted; a mask selects points */
    m = population(p, 3, a1, c1, 8, 13);
    p[0].d = 0.0;
    unsigned char *use = malloc(m);
    for (size_t i = 0; i < m; i++)
        use[i] = p[i].impl != 2;
    CU_ASSERT_EQUAL(kcs_tolfit_make(p, m, use, u, 0.01, 1, &f), 0);
    CU_ASSERT_EQUAL(f.n_zero, 1);
    CU_ASSERT_EQUAL(f.n_points, 2 * 9 * 8 - 1);
    CU_ASSERT_EQUAL(f.n_impls, 2);
    kcs_tolfit_free(&f);
    free(use);
    free(p);
}

static void test_outputs_rule(void)
{
    double p = 0.01;
    CU_ASSERT_EQUAL(kcs_tol_outputs_factor(512, 1024, p), 1.0);
    CU_ASSERT_EQUAL(kcs_tol_outputs_factor(1024, 1024, p), 1.0);
    CU_ASSERT_DOUBLE_EQUAL(kcs_tol_outputs_factor(4096, 1024, p),
                           sqrt(log(2 * 4096 / p) / log(2 * 1024 / p)), 1e-15);
    double prev = 1.0;
    for (double n = 2048; n < 1e12; n *= 16) {
        double f = kcs_tol_outputs_factor(n, 1024, p);
        CU_ASSERT_TRUE(f > prev);
        prev = f;
    }
    /* the union bound it rests on: a sub-Gaussian tail at t = eta(N) over
     * N outputs has 2N exp(-t^2/2) = p for sigma = 1 */
    double t0 = sqrt(2 * log(2 * 1024 / p)), N = 1 << 24;
    double t = t0 * kcs_tol_outputs_factor(N, 1024, p);
    CU_ASSERT_DOUBLE_EQUAL(2 * N * exp(-t * t / 2), p, 1e-12);
}

static const ut_test tests[] = {
    {"Clopper-Pearson intervals", test_clopper_pearson},
    {"cluster-robust slope", test_cluster_slope},
    {"power law, envelope, minimum data", test_forms},
    {"outputs rule", test_outputs_rule},
};

UT_MAIN("tolmodel", tests)
