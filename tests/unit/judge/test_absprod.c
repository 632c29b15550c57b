/* kcs_absprod_gemm (src/judge/oracle_absprod.c): |A||B| + |C| is never
 * below the exact value (computed here with MPFR, 200 bits) and above it by
 * at most the stated 3 gamma_k + 2^-51 relative (+ k 2^-147), on the fp32
 * path (fp32-exact inputs, k <= 4096) with normal, wide-range and
 * subnormal-product inputs; and the fp64 path (inputs that are not fp32
 * numbers, longer k; in place or a dgemm) stays within fp64 rounding. */
#include <CUnit/Basic.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>

#include "oracle_absprod.h"
#include "rng.h"
#include "unit_helpers.h"

/* The exact sum_p |a_ip| |b_pj| + |c_ij| rounded up to a double. */
static double exact_abs(const double *A, const double *B, const double *C, size_t n, size_t k,
                        size_t i, size_t j)
{
    mpfr_t s, t;
    mpfr_init2(s, 4096);
    mpfr_init2(t, 128);
    mpfr_set_d(s, C ? fabs(C[i * n + j]) : 0.0, MPFR_RNDN);
    for (size_t p = 0; p < k; p++) {
        mpfr_set_d(t, fabs(A[i * k + p]), MPFR_RNDN);
        mpfr_mul_d(t, t, fabs(B[p * n + j]), MPFR_RNDN); /* exact: 106 bits fit in 128 */
        mpfr_add(s, s, t, MPFR_RNDN);                   /* exact: 4096 bits */
    }
    double d = mpfr_get_d(s, MPFR_RNDU);
    mpfr_clear(s);
    mpfr_clear(t);
    return d;
}

typedef enum { NORMAL, WIDE, TINY, FP64 } kind;

static void fill(double *x, size_t len, kind kd, uint64_t seed)
{
    kcs_rng r;
    kcs_rng_init(&r, seed, 0xAB5, len);
    for (size_t i = 0; i < len; i++) {
        double v = kcs_rng_normal(&r);
        if (kd == WIDE)
            v = ldexp(v, (int)(kcs_rng_u32(&r) % 40) - 20);
        if (kd == TINY) /* products in fp32's subnormal range */
            v = ldexp(v, -70);
        x[i] = kd == FP64 ? v : (double)(float)v;
    }
}

static double stated(size_t k)
{
    double ku = (double)k * 0x1p-24;
    return 3.0 * ku / (1.0 - ku) + 0x1p-51;
}

/* max over outputs of (AR - exact) / exact; *below: some AR < exact;
 * *over: some AR above exact (1 + stated(k)) + k 2^-147 (fp32 path). */
static double check(size_t m, size_t n, size_t k, kind kd, int with_c, int *below, int *over)
{
    double *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B);
    double *C = with_c ? malloc(m * n * sizeof *C) : NULL, *AR = malloc(m * n * sizeof *AR);
    CU_ASSERT_FATAL(A && B && AR && (!with_c || C));
    fill(A, m * k, kd, 1 + k);
    fill(B, k * n, kd, 2 + k);
    if (C)
        fill(C, m * n, kd, 3 + k);
    CU_ASSERT_EQUAL(kcs_absprod_gemm(m, n, k, A, B, C, AR), 0);
    double worst = -INFINITY;
    *below = *over = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double e = exact_abs(A, B, C, n, k, i, j), a = AR[i * n + j];
            *below |= a < e;
            *over |= a > e * (1.0 + stated(k)) + (double)k * 0x1p-147;
            if (e > 0.0)
                worst = fmax(worst, (a - e) / e);
        }
    free(A);
    free(B);
    free(C);
    free(AR);
    return worst;
}

static void test_fp32_path_bounds(void)
{
    const size_t ks[] = {1, 7, 64, 1000, 4096};
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
        for (int kd = NORMAL; kd <= WIDE; kd++) {
            int below, over;
            double w = check(9, 11, ks[q], (kind)kd, ks[q] % 2, &below, &over);
            CU_ASSERT_FALSE(below);
            CU_ASSERT_FALSE(over);
            CU_ASSERT(w >= 0.0 && w <= stated(ks[q]));
        }
    }
}

static void test_fp32_path_subnormal_products(void)
{
    int below, over;
    double w = check(5, 6, 512, TINY, 0, &below, &over);
    CU_ASSERT_FALSE(below); /* the k 2^-148 term covers underflow */
    CU_ASSERT_FALSE(over);
    CU_ASSERT(isfinite(w));
}

/* Inputs that are not fp32 numbers, and k above the fp32 path's limit:
 * fp64 sums of |A| and |B| (in place for at most 256 outputs, 4 x 5 here;
 * a dgemm of copies for more, 17 x 17), within k 2^-53 relative of the
 * exact value. */
static void test_dgemm_path(void)
{
    const size_t ks[] = {100, KCS_ABSPROD_SGEMM_KMAX + 1};
    const kind kinds[] = {FP64, NORMAL};
    const size_t mn[] = {4, 5, 17, 17};
    for (size_t q = 0; q < 2; q++)
        for (size_t s = 0; s < 2; s++) {
            int below, over;
            double w = check(mn[2 * s], mn[2 * s + 1], ks[q], kinds[q], 1, &below, &over);
            CU_ASSERT(fabs(w) <= (double)ks[q] * 0x1p-52);
        }
}

static const ut_test tests[] = {
    {"fp32 path: an upper bound within 3 gamma_k", test_fp32_path_bounds},
    {"fp32 path: subnormal products", test_fp32_path_subnormal_products},
    {"dgemm path: fp64 inputs, long k", test_dgemm_path},
};

UT_MAIN("absprod", tests)
