/* effective_acc_bits (src/arith/effective_bits.c) on known accumulators:
 * the CPU backend's accumulator model (src/arith/acc.c, kcs_cpu_sum) sums
 * the inputs; the estimate must read the accumulator's significand width
 * (fp32 24, bf16 8, fp16 11, bits:14 14) within +- 1 at every k of a
 * log-spaced grid 64 .. 65536, for normal and for uniform(0,1) inputs (on
 * which a bf16 running sum stagnates beyond k ~ 256), with no trend in k,
 * in index order (the estimator's own model: exact) and in a random order
 * (the atomic schedule: the same arithmetic with roundings of its own).
 * Other orders (pairwise, blocked) keep at least the sequential sum's
 * precision, so they must not read fewer bits; a gemm reads as its
 * reduce_sum does (the term indexing). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "acc.h"
#include "effective_bits.h"
#include "rng.h"
#include "unit_helpers.h"

/* Exact sum of doubles whose sum fits: Neumaier compensation is exact
 * enough here (the reference of a <= 24-bit accumulation). */
static double ref_sum(const double *x, int64_t k)
{
    double s = 0.0, c = 0.0;
    for (int64_t j = 0; j < k; j++) {
        double t = s + x[j];
        c += fabs(s) >= fabs(x[j]) ? (s - t) + x[j] : (x[j] - t) + s;
        s = t;
    }
    return s + c;
}

static void fill(double *x, size_t n, int positive, kcs_rng *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = positive ? (double)(float)kcs_rng_uniform(r) : (double)(float)kcs_rng_normal(r);
}

/* reduce_sum of `rows` rows of k inputs under acc and schedule sched. */
static double estimate(const kcs_acc *acc, const char *sched, int64_t k, int positive, int rows)
{
    double *x = malloc((size_t)(rows * k) * sizeof *x), *y = malloc((size_t)rows * sizeof *y),
           *ref = malloc((size_t)rows * sizeof *ref), *scratch = malloc((size_t)k * sizeof *x);
    kcs_rng r;
    kcs_rng_init(&r, 42, (uint64_t)k, (uint64_t)positive);
    fill(x, (size_t)(rows * k), positive, &r);
    kcs_schedule s;
    CU_ASSERT_FATAL(kcs_schedule_parse(sched, &s) == 0);
    for (int i = 0; i < rows; i++) {
        y[i] = kcs_cpu_sum(x + (size_t)i * k, k, &s, acc, 0, scratch);
        ref[i] = ref_sum(x + (size_t)i * k, k);
    }
    kcs_call c = {0};
    c.op = KCS_OP_REDUCE_SUM;
    c.m = rows;
    c.n = 1;
    c.k = k;
    c.in[0] = x;
    double b = kcs_effective_acc_bits(&c, y, ref, (size_t)rows, NAN);
    free(x);
    free(y);
    free(ref);
    free(scratch);
    return b;
}

static void test_known_accumulators(void)
{
    static const struct {
        const char *acc;
        double bits;
    } accs[] = {{"fp32", 24}, {"bf16", 8}, {"fp16", 11}, {"bits:14", 14}};
    static const char *const orders[] = {"sequential", "atomic"};
    for (int oi = 0; oi < 2; oi++)
        for (int positive = 0; positive <= 1; positive++)
            for (size_t a = 0; a < sizeof accs / sizeof accs[0]; a++) {
                kcs_acc acc;
                CU_ASSERT_FATAL(kcs_acc_parse(accs[a].acc, &acc) == 0);
                printf("\n  %-10s %-8s %-8s", orders[oi], accs[a].acc,
                       positive ? "uniform" : "normal");
                /* the sequential order is the model itself (exact at every
                 * k but for the line fit): 32 rows, every doubling of k; the
                 * random order has roundings of its own: 64 rows, k *= 4 */
                int rows = oi == 0 ? 32 : 64, step = oi == 0 ? 2 : 4;
                double sx = 0, sy = 0, sxx = 0, sxy = 0, np = 0;
                for (int64_t k = 64; k <= 65536; k *= step) {
                    double b = estimate(&acc, orders[oi], k, positive, rows);
                    printf(" %5.2f", b);
                    CU_ASSERT(fabs(b - accs[a].bits) <= 1.0);
                    double x = log2((double)k);
                    sx += x;
                    sy += b;
                    sxx += x * x;
                    sxy += x * b;
                    np++;
                }
                /* no trend in k: the least-squares slope against log2(k) is
                 * below 0.1 bit per doubling (the first estimator's bias
                 * grew by 0.5 per doubling) */
                double slope = (np * sxy - sx * sy) / (np * sxx - sx * sx);
                printf("  slope %+.3f", slope);
                CU_ASSERT(fabs(slope) < 0.1);
            }
}

/* Orders that are at least as accurate as the sequential sum do not read
 * fewer bits than the accumulator has. */
static void test_other_orders(void)
{
    static const char *const scheds[] = {"pairwise", "blocked:64", "splitk:4"};
    kcs_acc f32 = {KCS_FMT_FP32, 0, 0}, bf = {KCS_FMT_BF16, 0, 0};
    for (size_t i = 0; i < sizeof scheds / sizeof scheds[0]; i++)
        for (int positive = 0; positive <= 1; positive++)
            for (int64_t k = 256; k <= 65536; k *= 16) {
                double a = estimate(&f32, scheds[i], k, positive, 16);
                double b = estimate(&bf, scheds[i], k, positive, 16);
                printf("\n  %-10s %-7s k=%6lld fp32 %.2f bf16 %.2f", scheds[i],
                       positive ? "uniform" : "normal", (long long)k, a, b);
                CU_ASSERT(a >= 23.0);
                CU_ASSERT(b >= 7.0);
            }
}

/* A gemm's outputs read as their reduce_sums: terms A[i,j] B[j,l]. */
static void test_gemm_indexing(void)
{
    const int64_t m = 4, n = 8, k = 4096, nb = 2;
    double *A = malloc((size_t)(nb * m * k) * sizeof *A);
    double *B = malloc((size_t)(nb * k * n) * sizeof *B);
    double *y = malloc((size_t)(nb * m * n) * sizeof *y);
    double *ref = malloc((size_t)(nb * m * n) * sizeof *ref);
    double *t = malloc((size_t)k * sizeof *t);
    kcs_rng r;
    kcs_rng_init(&r, 7, 1, 2);
    fill(A, (size_t)(nb * m * k), 1, &r);
    fill(B, (size_t)(nb * k * n), 0, &r);
    kcs_acc bf = {KCS_FMT_BF16, 0, 0};
    kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0};
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t l = 0; l < n; l++) {
                for (int64_t j = 0; j < k; j++)
                    t[j] = A[b * m * k + i * k + j] * B[b * k * n + j * n + l];
                size_t o = (size_t)(b * m * n + i * n + l);
                y[o] = kcs_cpu_sum(t, k, &seq, &bf, 0, NULL);
                ref[o] = ref_sum(t, k);
            }
    kcs_call c = {0};
    c.op = KCS_OP_BATCHED_GEMM;
    c.m = m;
    c.n = n;
    c.k = k;
    c.batch = nb;
    c.in[0] = A;
    c.in[1] = B;
    double e = kcs_effective_acc_bits(&c, y, ref, (size_t)(nb * m * n), NAN);
    printf("\n  batched gemm bf16 k=%lld: %.2f", (long long)k, e);
    CU_ASSERT(fabs(e - 8.0) <= 1.0);
    /* exact outputs read 64; an op that is not a sum of products the fallback */
    CU_ASSERT(kcs_effective_acc_bits(&c, ref, ref, (size_t)(nb * m * n), NAN) == 64.0);
    c.op = KCS_OP_SOFTMAX;
    CU_ASSERT(kcs_effective_acc_bits(&c, y, ref, (size_t)(nb * m * n), -3.0) == -3.0);
    free(A);
    free(B);
    free(y);
    free(ref);
    free(t);
}

static const ut_test tests[] = {
    {"fp32 24, bf16 8, fp16 11, bits:14 14 (+- 1), k = 64..65536, normal and " "uniform(0,1)", test_known_accumulators},
    {"pairwise, blocked and split-K read no fewer bits", test_other_orders},
    {"gemm term indexing", test_gemm_indexing},
};

UT_MAIN("effective_acc_bits", tests)
