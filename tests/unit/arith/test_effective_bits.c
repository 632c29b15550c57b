/* effective_acc_bits (src/effective_bits.c) on known accumulators: fp32
 * reads 24 +- 1 and bf16 8 +- 1 for sequential sums at k = 64 .. 65536 on
 * normal inputs (and on positive inputs where bf16 does not stagnate), with
 * no trend in k. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "acc.h"
#include "effective_bits.h"
#include "rng.h"

static double estimate(const kcs_acc *acc, int64_t k, int positive, int rows)
{
    double *x = malloc((size_t)(rows * k) * sizeof *x), *y = malloc((size_t)rows * sizeof *y),
           *ref = malloc((size_t)rows * sizeof *ref);
    kcs_rng r;
    kcs_rng_init(&r, 42, (uint64_t)k, (uint64_t)positive);
    for (int64_t i = 0; i < rows * k; i++) {
        double v = (double)(float)kcs_rng_normal(&r);
        x[i] = positive ? fabs(v) : v;
    }
    kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0};
    for (int i = 0; i < rows; i++) {
        y[i] = kcs_cpu_sum(x + (size_t)i * k, k, &seq, acc, 0, NULL);
        double s = 0.0, c = 0.0; /* compensated reference */
        for (int64_t j = 0; j < k; j++) {
            double t = s + x[(size_t)i * k + j];
            c += fabs(s) >= fabs(x[(size_t)i * k + j]) ? (s - t) + x[(size_t)i * k + j]
                                                       : (x[(size_t)i * k + j] - t) + s;
            s = t;
        }
        ref[i] = s + c;
    }
    kcs_call c = {0};
    c.op = KCS_OP_REDUCE_SUM;
    c.m = rows;
    c.k = k;
    c.in[0] = x;
    double b = kcs_effective_acc_bits(&c, y, ref, (size_t)rows, NAN);
    free(x);
    free(y);
    free(ref);
    return b;
}

static void test_known_accumulators(void)
{
    kcs_acc f32 = {KCS_FMT_FP32, 0, 0}, bf = {KCS_FMT_BF16, 0, 0};
    for (int64_t k = 64; k <= 65536; k *= 4) {
        int rows = k >= 16384 ? 16 : 64;
        double a = estimate(&f32, k, 0, rows), b = estimate(&bf, k, 0, rows);
        double ap = estimate(&f32, k, 1, rows);
        printf("\n  k=%6lld normal fp32 %.2f bf16 %.2f | positive fp32 %.2f", (long long)k, a, b,
               ap);
        CU_ASSERT(fabs(a - 24) <= 1.0);
        CU_ASSERT(fabs(b - 8) <= 1.0);
        CU_ASSERT(fabs(ap - 24) <= 1.0);
        if (k <= 256) { /* bf16 on positive data stagnates beyond ~2^8 terms */
            double bp = estimate(&bf, k, 1, rows);
            printf(" bf16 %.2f", bp);
            CU_ASSERT(fabs(bp - 8) <= 1.0);
        }
    }
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("effective_acc_bits", NULL, NULL);
    CU_add_test(s, "fp32 24 +- 1, bf16 8 +- 1, k = 64..65536", test_known_accumulators);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f != 0;
}
