/* The normal generator (src/rng_normal.c), bulk Philox (kcs_rng_u32_n) and
 * the fixed-definition elementary functions (src/detmath.c): bulk and
 * scalar forms draw the same bits and leave the stream in the same place;
 * the normals follow N(0,1) (Kolmogorov-Smirnov against the CDF, the tail
 * beyond the ziggurat's base r = 3.654 at its expected rate, moments);
 * detmath is within a few ulps of libm (libm is only the yardstick here). */
#include "detmath.h"
#include "rng.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_helpers.h"

static void test_u32_n_matches_scalar(void)
{
    size_t ns[] = {0, 1, 3, 4, 5, 31, 32, 33, 1000, 4099};
    int bad = 0;
    for (int pre = 0; pre < 4; pre++) {
        for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
            kcs_rng a, b;
            kcs_rng_init(&a, 99, 7, (uint64_t)t);
            kcs_rng_init(&b, 99, 7, (uint64_t)t);
            for (int i = 0; i < pre; i++) { /* leave 4 - pre words buffered */
                kcs_rng_u32(&a);
                kcs_rng_u32(&b);
            }
            uint32_t *w = malloc((ns[t] + 1) * sizeof *w);
            kcs_rng_u32_n(&a, w, ns[t]);
            for (size_t i = 0; i < ns[t]; i++)
                bad += w[i] != kcs_rng_u32(&b);
            bad += kcs_rng_u32(&a) != kcs_rng_u32(&b); /* same place afterwards */
            free(w);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_normal_n_matches_scalar(void)
{
    size_t ns[] = {1, 2, 7, 511, 512, 513, 1500, 100000};
    int bad = 0;
    for (int pre = 0; pre < 3; pre++) {
        for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
            kcs_rng a, b;
            kcs_rng_init(&a, 2026, 11, (uint64_t)(t * 3 + (size_t)pre));
            kcs_rng_init(&b, 2026, 11, (uint64_t)(t * 3 + (size_t)pre));
            for (int i = 0; i < pre; i++) {
                kcs_rng_u32(&a);
                kcs_rng_u32(&b);
            }
            double *x = malloc(ns[t] * sizeof *x);
            kcs_rng_normal_n(&a, x, ns[t]);
            for (size_t i = 0; i < ns[t]; i++) {
                double z = kcs_rng_normal(&b);
                bad += memcmp(&z, &x[i], sizeof z) != 0;
            }
            bad += kcs_rng_u32(&a) != kcs_rng_u32(&b);
            free(x);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_normal_distribution(void)
{
    const size_t n = 4000000;
    double *x = malloc(n * sizeof *x);
    kcs_rng r;
    kcs_rng_init(&r, 5, 6, 7);
    kcs_rng_normal_n(&r, x, n);
    double s = 0, s2 = 0, s4 = 0;
    size_t tail = 0, neg = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
        s4 += x[i] * x[i] * x[i] * x[i];
        tail += fabs(x[i]) > 3.6541528853610088;
        neg += x[i] < 0;
    }
    double mean = s / (double)n, var = s2 / (double)n, kurt = s4 / (double)n;
    /* P(|z| > r) = erfc(r / sqrt 2) */
    double p_tail = erfc(3.6541528853610088 / sqrt(2.0));
    double e_tail = p_tail * (double)n, sd_tail = sqrt(e_tail);
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0; /* Kolmogorov-Smirnov statistic */
    for (size_t i = 0; i < n; i++) {
        double F = 0.5 * erfc(-x[i] / sqrt(2.0));
        double lo = F - (double)i / (double)n, hi = (double)(i + 1) / (double)n - F;
        d = fmax(d, fmax(lo, hi));
    }
    printf("\n  n=%zu mean %.2e var %.5f E[z^4] %.4f tail %zu (expected %.0f) KS D*sqrt(n) %.3f\n",
           n, mean, var, kurt, tail, e_tail, d * sqrt((double)n));
    CU_ASSERT(fabs(mean) < 5.0 / sqrt((double)n));
    CU_ASSERT(fabs(var - 1.0) < 5.0 * sqrt(2.0 / (double)n));
    CU_ASSERT(fabs(kurt - 3.0) < 5.0 * sqrt(96.0 / (double)n));
    CU_ASSERT(fabs((double)tail - e_tail) < 5.0 * sd_tail);
    CU_ASSERT(fabs((double)neg - 0.5 * (double)n) < 5.0 * 0.5 * sqrt((double)n));
    CU_ASSERT(d * sqrt((double)n) < 1.95); /* alpha = 0.001 */
    free(x);
}

static void test_detmath_accuracy(void)
{
    double worst_exp = 0, worst_log = 0, worst_exp2 = 0;
    for (int i = 0; i <= 200000; i++) {
        double t = -20.0 + 30.0 * i / 200000.0;
        worst_exp = fmax(worst_exp, fabs(kcs_det_exp(t) / exp(t) - 1.0));
        double e = -60.0 + 120.0 * i / 200000.0;
        worst_exp2 = fmax(worst_exp2, fabs(kcs_det_exp2(e) / exp2(e) - 1.0));
        double u = ldexp(1.0 + i / 200000.0, (i % 200) - 150);
        double l = log(u);
        worst_log = fmax(worst_log, fabs(kcs_det_log(u) - l) / fmax(fabs(l), 1e-300));
    }
    double sub = 0x1p-1070;
    worst_log = fmax(worst_log, fabs(kcs_det_log(sub) / log(sub) - 1.0));
    printf("\n  max relative difference from libm: exp %.2e exp2 %.2e log %.2e\n", worst_exp,
           worst_exp2, worst_log);
    CU_ASSERT(worst_exp < 1e-15);
    CU_ASSERT(worst_exp2 < 1e-15);
    CU_ASSERT(worst_log < 1e-15);
    CU_ASSERT(kcs_det_log(1.0) == 0.0);
    CU_ASSERT(kcs_det_exp(0.0) == 1.0);
    CU_ASSERT(kcs_det_exp2(-3.0) == 0.125);
}

static const ut_test tests[] = {
    {"kcs_rng_u32_n = scalar draws", test_u32_n_matches_scalar},
    {"kcs_rng_normal_n = scalar normals", test_normal_n_matches_scalar},
    {"normals follow N(0,1)", test_normal_distribution},
    {"detmath within a few ulps of libm", test_detmath_accuracy},
};

UT_MAIN("rng_normal", tests)
