/* Exact-sum inputs in narrow input formats (src/plan/inputs_exact.c,
 * input generator 5): with bf16, fp16 and fp8 inputs the sums of a
 * reduction must need as many bits as with fp32 inputs. Before, the narrow
 * entries were odd pin-bit integers shifted left by a uniform amount and
 * the wide entry had pin bits only, so the sums of m >= 32 bf16 or fp16
 * contributions stayed below 2^21 and a 21- or 22-bit accumulator returned
 * them exactly (C-ORD-04's bits:22 pairwise kernel: 0 of 200 sweep trials
 * at every m >= 32; a 22-bit gemm accumulator with bf16 inputs passed
 * C-PRC-01 at k <= 64). Checked here, for reduce_sum rows, allreduce
 * elements, gemm and dot outputs at several k and m:
 *  (a) every entry is exact in the input format and every subset sum is
 *      exact in fp32 (|terms| sum below 2^24 units of the finest entry's
 *      grid; sequential, pairwise, atomic and round-toward-zero fp32 sums
 *      all return the exact sum);
 *  (b) every sum is odd in those units, most need 23 or more significant
 *      bits (odd and >= 2^22; all of them for reduce_sum and allreduce),
 *      and 22-bit pairwise and 21-bit sequential accumulators miss them.
 * fp8 gemm (no contract admits it): (a) and odd sums only. Each test
 * fails on input generator 4. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "acc.h"
#include "exact_case.h"
#include "inputs_exact.h"
#include "unit_helpers.h"

/* Significant bits of a finite nonzero double (its odd significand's width). */
static int need_bits(double x)
{
    int e;
    double f = frexp(fabs(x), &e), b = 0;
    while (f != floor(f)) {
        f *= 2.0;
        b++;
    }
    return (int)b;
}

/* Exponent of the lowest set bit of a finite nonzero double. */
static int low_bit(double x)
{
    int e;
    frexp(x, &e);
    return e - need_bits(x);
}

typedef struct {
    int n;            /* reductions checked */
    int not_exact_in; /* entries not exact in the input format */
    int too_wide;     /* reductions whose |terms| sum reaches 2^24 grid units */
    int fp32_wrong;   /* conforming fp32 orders that missed the exact sum */
    int need23;       /* sums of >= 23 significant bits */
    int need24;       /* sums of >= 24 significant bits */
    int miss22, miss21;
    int odd; /* sums odd in units of the finest entry's grid */
} tally;

/* One reduction of n terms t[0..n-1] in the input format fin. */
static void check_terms(tally *ty, const double *t, int64_t n, kcs_format fin, double *scratch,
                        uint64_t seed)
{
    double sum = 0.0, abs_sum = 0.0;
    int g = 4096;
    for (int64_t r = 0; r < n; r++) {
        ty->not_exact_in += !kcs_format_exact(fin, t[r]) || t[r] == 0.0;
        if (t[r] != 0.0 && low_bit(t[r]) < g)
            g = low_bit(t[r]);
        sum += t[r]; /* fp64: exact, every term is a multiple of 2^g below 2^(g+24) */
        abs_sum += fabs(t[r]);
    }
    ty->too_wide += ldexp(abs_sum, -g) >= 0x1p24;
    kcs_acc a32 = {KCS_FMT_FP32, 0, 0}, rz = {KCS_FMT_FP32, 0, 1};
    kcs_acc b22 = {KCS_FMT_FP32, 22, 0}, b21 = {KCS_FMT_FP32, 21, 0};
    kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0}, pw = {KCS_SCHED_PAIRWISE, 0};
    kcs_schedule at = {KCS_SCHED_ATOMIC, 0};
    ty->fp32_wrong += kcs_cpu_sum(t, n, &seq, &a32, 0, scratch) != sum;
    ty->fp32_wrong += kcs_cpu_sum(t, n, &pw, &a32, 0, scratch) != sum;
    ty->fp32_wrong += kcs_cpu_sum(t, n, &at, &a32, seed, scratch) != sum;
    ty->fp32_wrong += kcs_cpu_sum(t, n, &pw, &rz, 0, scratch) != sum;
    int b = need_bits(sum);
    ty->need23 += b >= 23;
    ty->need24 += b >= 24;
    ty->odd += sum != 0.0 && low_bit(sum) == g;
    ty->miss22 += kcs_cpu_sum(t, n, &pw, &b22, 0, scratch) != sum;
    ty->miss21 += kcs_cpu_sum(t, n, &seq, &b21, 0, scratch) != sum;
    ty->n++;
}

/* min_share: the share of sums that must need 23 bits */
static void report(const char *what, kcs_format fin, int64_t k, const tally *ty, double min_share)
{
    printf("\n    %s %s k=%lld: need>=23 %d/%d need>=24 %d/%d miss22pw %d miss21seq %d", what,
           kcs_format_get(fin)->name, (long long)k, ty->need23, ty->n, ty->need24, ty->n,
           ty->miss22, ty->miss21);
    CU_ASSERT_EQUAL(ty->not_exact_in, 0);
    CU_ASSERT_EQUAL(ty->too_wide, 0);
    CU_ASSERT_EQUAL(ty->fp32_wrong, 0);
    /* narrow input formats: every sum is made odd */
    if (fin != KCS_FMT_FP32)
        CU_ASSERT_EQUAL(ty->odd, ty->n);
    /* sums of 23 bits or more: 22-bit and 21-bit accumulators miss them */
    CU_ASSERT(ty->need23 >= min_share * ty->n);
    CU_ASSERT(ty->miss22 >= ty->need23);
    CU_ASSERT(ty->miss21 >= ty->need23);
}

static const kcs_format narrow_fmts[] = {KCS_FMT_BF16, KCS_FMT_FP16};

static void test_allreduce_narrow(void)
{
    static const int64_t ms[] = {2, 3, 8, 32, 128, 512, 2048, 32768};
    for (size_t f = 0; f < sizeof narrow_fmts / sizeof narrow_fmts[0]; f++)
        for (size_t s = 0; s < sizeof ms / sizeof ms[0]; s++) {
            int64_t P = ms[s], k = P >= 4096 ? 8 : 64;
            kcs_case cs = exact_case(KCS_OP_ALLREDUCE, narrow_fmts[f], P, 1, k);
            kcs_error err = {0};
            double *x = malloc((size_t)(P * k) * sizeof *x), *t = malloc((size_t)P * 8);
            double *scratch = malloc((size_t)P * 8);
            CU_ASSERT_FATAL(x && t && scratch);
            CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)(P * k), 11, 5, 3, &err), 0);
            tally ty = {0};
            for (int64_t i = 0; i < k; i++) {
                for (int64_t r = 0; r < P; r++)
                    t[r] = x[r * k + i];
                check_terms(&ty, t, P, narrow_fmts[f], scratch, (uint64_t)i);
            }
            /* every sum is odd and at least 2^22 units: all need 23 bits */
            report("allreduce", narrow_fmts[f], P, &ty, 1.0);
            free(x);
            free(t);
            free(scratch);
        }
}

static void test_reduce_narrow(void)
{
    static const int64_t ks[] = {2, 5, 16, 64, 1024, 8192, 65536};
    static const kcs_format fmts[] = {KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP8_E5M2,
                                      KCS_FMT_FP8_E4M3};
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
        for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
            int64_t k = ks[s], m = k >= 8192 ? 4 : 32;
            /* fp8_e5m2 (range 2^16, 3 bits): sums of 23 bits only from k = 128 */
            kcs_case cs = exact_case(KCS_OP_REDUCE_SUM, fmts[f], m, 1, k);
            kcs_error err = {0};
            double *x = malloc((size_t)(m * k) * sizeof *x), *scratch = malloc((size_t)k * 8);
            CU_ASSERT_FATAL(x && scratch);
            CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)(m * k), 11, 5, 3, &err), 0);
            tally ty = {0};
            for (int64_t i = 0; i < m; i++)
                check_terms(&ty, x + i * k, k, fmts[f], scratch, (uint64_t)i);
            /* fp8_e4m3 spans 2^18 units (2^-9 to 448): sums of 23 bits
             * need k >= 32 of its largest values; the draw reaches them
             * from k = 8192 (k = 64: 2 of 32). */
            report("reduce_sum", fmts[f], k, &ty,
                   fmts[f] == KCS_FMT_FP8_E4M3 && k < 8192 ? 0.0 : 1.0);
            free(x);
            free(scratch);
        }
}

static void test_gemm_narrow(void)
{
    static const int64_t ks[] = {2, 3, 8, 16, 64, 256, 1024, 4096, 65536};
    static const kcs_format fmts[] = {KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP32, KCS_FMT_FP8_E4M3,
                                      KCS_FMT_FP8_E5M2};
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
        for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
            int64_t k = ks[s], m = k >= 4096 ? 4 : 16, n = m;
            kcs_case cs = exact_case(KCS_OP_GEMM, fmts[f], m, n, k);
            kcs_error err = {0};
            double *A = malloc((size_t)(m * k) * sizeof *A), *B = malloc((size_t)(k * n) * 8);
            double *t = malloc((size_t)k * 8), *scratch = malloc((size_t)k * 8);
            CU_ASSERT_FATAL(A && B && t && scratch);
            CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, A, (size_t)(m * k), 11, 5, 3, &err), 0);
            /* B's stream: tensor 1 of the same trial (inputs.c stream()) */
            CU_ASSERT_EQUAL(
                kcs_exact_fill(&cs, 1, B, (size_t)(k * n), 11, 5, (1ull << 32) | 3, &err), 0);
            tally ty = {0};
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    for (int64_t p = 0; p < k; p++)
                        t[p] = A[i * k + p] * B[p * n + j];
                    check_terms(&ty, t, k, KCS_FMT_FP32, scratch, (uint64_t)(i * n + j));
                }
            /* fp32: reported for comparison (about 1/2 to 3/4); bf16, fp16:
             * every sum odd (one odd product per output), at least 2^21
             * (the wide product is in [2^21, 2^23)): at k >= 16 the narrow
             * products add 2^21 or more, at k = 2 about half reach 2^22 */
            report("gemm", fmts[f], k, &ty,
                   fmts[f] == KCS_FMT_FP32 || kcs_format_get(fmts[f])->bits == 8 ? 0.0
                   : k >= 16                                                      ? 0.9
                                                                                  : 0.3);
            free(A);
            free(B);
            free(t);
            free(scratch);
        }
}

/* dot: one output per trial; x and y are tensors 0 and 1 of the trial */
static void test_dot_narrow(void)
{
    static const int64_t ks[] = {2, 8, 64, 4096};
    for (size_t f = 0; f < sizeof narrow_fmts / sizeof narrow_fmts[0]; f++)
        for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
            int64_t k = ks[s];
            kcs_case cs = exact_case(KCS_OP_DOT, narrow_fmts[f], 1, 1, k);
            kcs_error err = {0};
            double *x = malloc((size_t)k * 8), *y = malloc((size_t)k * 8);
            double *t = malloc((size_t)k * 8), *scratch = malloc((size_t)k * 8);
            CU_ASSERT_FATAL(x && y && t && scratch);
            tally ty = {0};
            for (uint64_t trial = 0; trial < 64; trial++) {
                CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)k, 11, 5, trial, &err), 0);
                CU_ASSERT_EQUAL(
                    kcs_exact_fill(&cs, 1, y, (size_t)k, 11, 5, (1ull << 32) | trial, &err), 0);
                for (int64_t p = 0; p < k; p++)
                    t[p] = x[p] * y[p];
                check_terms(&ty, t, k, KCS_FMT_FP32, scratch, trial);
            }
            /* as gemm: odd, at least 2^21 */
            report("dot", narrow_fmts[f], k, &ty, k >= 16 ? 0.9 : 0.3);
            free(x);
            free(y);
            free(t);
            free(scratch);
        }
}

static const ut_test tests[] = {
    {"allreduce, bf16/fp16: exact in fp32, sums need 23 bits", test_allreduce_narrow},
    {"reduce_sum, bf16/fp16/fp8: exact in fp32, sums need 23 bits", test_reduce_narrow},
    {"gemm, bf16/fp16: exact in fp32, sums need 23 bits", test_gemm_narrow},
    {"dot, bf16/fp16: exact in fp32, sums need 23 bits", test_dot_narrow},
};

UT_MAIN("exact-sum inputs, narrow input formats", tests)
