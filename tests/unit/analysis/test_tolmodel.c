/* The tolerance model (analysis/tolmodel.c): Clopper-Pearson against
 * binomial tails summed here, the cluster-robust slope against the matrix
 * sandwich computed here, the choice of form on synthetic populations, the
 * validity range, the outputs rule and the minimum data. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
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

/* uniform in (0, 1) from a 64-bit LCG (the top 53 bits) */
static double unif(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(*s >> 11) + 0.5) * 0x1.0p-53;
}

/* The largest of N errors with P(|e| > t) = exp(-(t/b)^(1/gamma)), drawn
 * exactly: |e| = b E^gamma with E ~ Exp(1), and the largest of N
 * exponentials is -ln(1 - U^(1/N)). */
static double tail_max(uint64_t *s, double b, double gamma, double N)
{
    double u = unif(s);
    double e = -log(-expm1(log(u) / N));
    return b * pow(e, gamma);
}

/* Synthetic trials: G implementations (scale b_g n^0.25), n = 64 .. 1024,
 * output counts Ns, `trials` trials per (g, n, N), tail exponent gamma. */
static size_t tail_population(kcs_tolpt *p, int G, const double *Ns, int nN, int trials,
                              double gamma, uint64_t seed)
{
    size_t m = 0;
    uint64_t s = seed;
    for (int g = 0; g < G; g++)
        for (double n = 64; n <= 1024; n *= 4)
            for (int j = 0; j < nN; j++)
                for (int t = 0; t < trials; t++, m++) {
                    double b = (1.0 + 0.5 * g) * pow(n, 0.25) * 1e-8;
                    p[m] = (kcs_tolpt){n, tail_max(&s, b, gamma, Ns[j]), Ns[j], g,
                                       (int32_t)(m % KCS_TOL_FOLDS)};
                }
    return m;
}

/* the exact level a conforming trial of the mixture exceeds with
 * probability p: mean_g P(max_g > t) = p, by bisection in t */
static double true_level(int G, double n, double N, double gamma, double p)
{
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 200; it++) {
        double t = 0.5 * (lo + hi), q = 0.0;
        for (int g = 0; g < G; g++) {
            double b = (1.0 + 0.5 * g) * pow(n, 0.25) * 1e-8;
            /* P(max > t) = 1 - (1 - exp(-(t/b)^(1/gamma)))^N */
            q += -expm1(N * log1p(-exp(-pow(t / b, 1.0 / gamma)))) / G;
        }
        if (q > p)
            lo = t;
        else
            hi = t;
    }
    return 0.5 * (lo + hi);
}

static void test_outputs_growth(void)
{
    enum { G = 4, T = 40 };
    double u = ldexp(1.0, -24), p = 0.01;
    double fitN[] = {1024, 2048, 4096};
    kcs_tolpt *pts = malloc((size_t)G * 3 * 3 * T * sizeof *pts);
    double gammas[] = {1.0, 0.5, 1.5};
    for (int gi = 0; gi < 3; gi++) {
        double gamma = gammas[gi];
        size_t m = tail_population(pts, G, fitN, 3, T, gamma, 99 + (uint64_t)gi);
        kcs_tolfit f;
        CU_ASSERT_EQUAL_FATAL(kcs_tolfit_make(pts, m, NULL, u, p, 1, &f), 0);
        CU_ASSERT_EQUAL_FATAL(f.form, KCS_TOLFORM_POWER);
        /* the fitted exponent's interval covers the generating one */
        CU_ASSERT_TRUE(f.gamma_fitted);
        CU_ASSERT_TRUE(f.gamma_lo <= gamma && gamma <= f.gamma_hi);
        CU_ASSERT_TRUE(fabs(f.gamma_hat - gamma) < 0.35 * gamma);
        CU_ASSERT_DOUBLE_EQUAL(f.outputs0, 1024, 0);
        CU_ASSERT_DOUBLE_EQUAL(f.outputs_max, 4096, 0);
        /* eta(n, N) far beyond the fitted N lies above the exact level of
         * the mixture, and not wildly so */
        for (double N = 65536; N <= 1048576; N *= 16) {
            double eta = kcs_tolfit_eta(&f, 256, N), t = true_level(G, 256, N, gamma, p);
            if (getenv("KCS_TEST_VERBOSE"))
                fprintf(stderr, "gamma %g: fit %.3f [%.3f, %.3f], N %g: eta / exact level %.3f\n",
                        gamma, f.gamma_hat, f.gamma_lo, f.gamma_hi, N, eta / t);
            CU_ASSERT_TRUE(eta >= t);
            CU_ASSERT_TRUE(eta <= 4.0 * t);
        }
        /* fresh trials at N = 2^16 and 2^20 (other seeds): false alarms not
         * significantly above the target (the Clopper-Pearson lower bound) */
        double bigN[] = {65536, 1048576};
        kcs_tolpt *fresh = malloc((size_t)G * 3 * 2 * 250 * sizeof *fresh);
        size_t mf = tail_population(fresh, G, bigN, 2, 250, gamma, 1234 + (uint64_t)gi);
        int64_t flagged = 0;
        for (size_t i = 0; i < mf; i++)
            flagged += kcs_tol_flags(fresh[i].d, kcs_tolfit_eta(&f, fresh[i].n, fresh[i].outputs));
        double lo, hi;
        kcs_clopper_pearson(flagged, (int64_t)mf, 0.95, &lo, &hi);
        if (getenv("KCS_TEST_VERBOSE"))
            fprintf(stderr, "gamma %g: fresh trials at 2^16, 2^20: %lld/%zu flagged\n", gamma,
                    (long long)flagged, mf);
        CU_ASSERT_TRUE(lo <= p);
        free(fresh);
        kcs_tolfit_free(&f);
    }
    /* one output count: not fitted, the exponential tail assumed */
    double one[] = {1024};
    size_t m = tail_population(pts, G, one, 1, T, 1.0, 5);
    kcs_tolfit f;
    CU_ASSERT_EQUAL(kcs_tolfit_make(pts, m, NULL, u, p, 1, &f), 0);
    CU_ASSERT_FALSE(f.gamma_fitted);
    CU_ASSERT_EQUAL(f.gamma, KCS_TOL_GAMMA_DEFAULT);
    CU_ASSERT_TRUE(isnan(f.gamma_hat));
    CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta(&f, 256, 4096),
                           kcs_tolfit_eta0(&f, 256) * log(2 * 4096 / p) / log(2 * 1024 / p),
                           1e-12 * kcs_tolfit_eta0(&f, 256));
    kcs_tolfit_free(&f);
    free(pts);
    CU_ASSERT_DOUBLE_EQUAL(kcs_tol_outputs_factor_g(4096, 1024, p, 0.5),
                           kcs_tol_outputs_factor(4096, 1024, p), 1e-15);
    CU_ASSERT_EQUAL(kcs_tol_outputs_factor_g(512, 1024, p, 2.0), 1.0);
}

static void test_bootstrap(void)
{
    enum { G = 4, T = 30 };
    double u = ldexp(1.0, -24), p = 0.01, Ns[] = {1024, 4096};
    kcs_tolpt *pts = malloc((size_t)G * 3 * 2 * T * sizeof *pts);
    size_t m = tail_population(pts, G, Ns, 2, T, 1.0, 7);
    kcs_tolfit f;
    CU_ASSERT_EQUAL_FATAL(kcs_tolfit_make(pts, m, NULL, u, p, 1, &f), 0);
    double lo, hi, lo2, hi2;
    int used, used2;
    CU_ASSERT_EQUAL(kcs_tolfit_bootstrap(pts, m, NULL, &f, 100, 42, 0.95, &lo, &hi, &used), 0);
    CU_ASSERT_TRUE(used > 90 && used <= 100);
    CU_ASSERT_TRUE(lo > 0.0 && lo <= hi);
    /* a replicate sees a subset of the points: its eta0 straddles the fit's */
    if (getenv("KCS_TEST_VERBOSE"))
        fprintf(stderr, "bootstrap: [%.3f, %.3f], %d replicates\n", lo, hi, used);
    CU_ASSERT_TRUE(lo < 1.0 && hi > 1.0 && hi < 3.0);
    /* deterministic for a seed */
    CU_ASSERT_EQUAL(kcs_tolfit_bootstrap(pts, m, NULL, &f, 100, 42, 0.95, &lo2, &hi2, &used2), 0);
    CU_ASSERT_EQUAL(lo, lo2);
    CU_ASSERT_EQUAL(hi, hi2);
    /* implementations of unequal sizes (a mask keeps a fifth of implementation
     * 0): a replicate that draws the large ones more often holds more points
     * than the sample (ASan checks the buffers) */
    {
        unsigned char *use = malloc(m);
        for (size_t i = 0; i < m; i++)
            use[i] = pts[i].impl != 0 || i % 5 == 0;
        kcs_tolfit fu;
        CU_ASSERT_EQUAL_FATAL(kcs_tolfit_make(pts, m, use, u, p, 1, &fu), 0);
        CU_ASSERT_EQUAL(kcs_tolfit_bootstrap(pts, m, use, &fu, 100, 3, 0.95, &lo2, &hi2, &used2), 0);
        CU_ASSERT_TRUE(used2 > 90 && lo2 <= hi2);
        kcs_tolfit_free(&fu);
        free(use);
    }
    /* scaling: c and the envelope by the factor; eta0 with them */
    double c = f.c, e = kcs_tolfit_eta0(&f, 256);
    kcs_tolfit_scale(&f, hi);
    CU_ASSERT_DOUBLE_EQUAL(f.c, c * hi, 1e-12 * c);
    CU_ASSERT_DOUBLE_EQUAL(f.c_fit, c, 0);
    CU_ASSERT_DOUBLE_EQUAL(kcs_tolfit_eta0(&f, 256), e * hi, 1e-12 * e);
    CU_ASSERT_DOUBLE_EQUAL(f.scale, hi, 0);
    /* the bootstrap of the scaled fit still reports factors of the point fit */
    CU_ASSERT_EQUAL(kcs_tolfit_bootstrap(pts, m, NULL, &f, 100, 42, 0.95, &lo2, &hi2, &used2), 0);
    CU_ASSERT_DOUBLE_EQUAL(hi2, hi, 1e-12);
    kcs_tolfit_free(&f);
    free(pts);
}

static const ut_test tests[] = {
    {"Clopper-Pearson intervals", test_clopper_pearson},
    {"cluster-robust slope", test_cluster_slope},
    {"power law, envelope, minimum data", test_forms},
    {"outputs rule", test_outputs_rule},
    {"growth in N: fitted exponent, held-out false alarms", test_outputs_growth},
    {"bootstrap of eta0", test_bootstrap},
};

UT_MAIN("tolmodel", tests)
