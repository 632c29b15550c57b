/* Exact-sum inputs (dist exact, src/inputs_exact.c): every subset sum of an
 * output's terms is an integer below 2^P (so every order of every
 * conforming accumulator is exact), every reduction holds one entry wide
 * enough that 11-bit coercion changes it, and narrow accumulators do not
 * get the exact result. Also the ":rz" accumulators, --shape parsing and
 * the precondition checks used by kcs grade --shape. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "acc.h"
#include "exact_case.h"
#include "inputs_exact.h"
#include "precondition.h"
#include "unit_helpers.h"

/* Significant bits of a positive integer-valued double. */
static int sig_bits(double x)
{
    x = fabs(x);
    while (x > 0 && fmod(x, 2.0) == 0.0)
        x /= 2.0;
    int b = 0;
    while (x >= 1.0) {
        x = floor(x / 2.0);
        b++;
    }
    return b;
}

static void check_gemm(kcs_format in, int64_t m, int64_t n, int64_t k)
{
    kcs_case cs = exact_case(KCS_OP_GEMM, in, m, n, k);
    kcs_error err = {0};
    double *A = malloc((size_t)(m * k) * sizeof *A), *B = malloc((size_t)(k * n) * sizeof *B);
    double *t = malloc((size_t)k * sizeof *t);
    CU_ASSERT_FATAL(A && B && t);
    CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, A, (size_t)(m * k), 1, 2, 3, &err), 0);
    CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 1, B, (size_t)(k * n), 1, 2, 4, &err), 0);
    int exact_in = 1, wide_rows = 0;
    for (int64_t i = 0; i < m * k; i++)
        exact_in &= kcs_format_exact(in, A[i]) && A[i] == floor(A[i]) && A[i] != 0.0;
    for (int64_t i = 0; i < k * n; i++)
        exact_in &= kcs_format_exact(in, B[i]) && B[i] == floor(B[i]) && B[i] != 0.0;
    CU_ASSERT(exact_in);
    for (int64_t i = 0; i < m; i++) {
        int wide = 0;
        for (int64_t p = 0; p < k; p++)
            wide |= sig_bits(A[i * k + p]) >= 12;
        wide_rows += wide;
    }
    /* fp32 inputs: every row has an entry that 11-bit coercion changes */
    if (in == KCS_FMT_FP32)
        CU_ASSERT_EQUAL(wide_rows, m);
    kcs_acc a32 = {KCS_FMT_FP32, 0, 0}, rz = {KCS_FMT_FP32, 0, 1}, b14 = {KCS_FMT_FP32, 14, 0};
    kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0}, pw = {KCS_SCHED_PAIRWISE, 0};
    double *scratch = malloc((size_t)k * sizeof *scratch);
    int inexact14 = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double abs_sum = 0.0, sum = 0.0;
            for (int64_t p = 0; p < k; p++) {
                t[p] = A[i * k + p] * B[p * n + j];
                abs_sum += fabs(t[p]);
                sum += t[p];
            }
            /* every subset sum of the terms is an integer below 2^24 */
            CU_ASSERT(abs_sum < 0x1p24);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, k, &seq, &a32, 0, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, k, &pw, &a32, 0, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, k, &seq, &rz, 0, scratch), sum);
            inexact14 += kcs_cpu_sum(t, k, &seq, &b14, 0, scratch) != sum;
        }
    /* a 14-bit accumulator misses the exact result on most outputs */
    CU_ASSERT(inexact14 * 2 > m * n);
    free(A);
    free(B);
    free(t);
    free(scratch);
}

static void test_gemm_exact(void)
{
    static const int64_t ks[] = {1, 3, 16, 1000, 65536, 262144};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        check_gemm(KCS_FMT_FP32, 4, 3, ks[i]);
        check_gemm(KCS_FMT_BF16, 2, 3, ks[i]);
        check_gemm(KCS_FMT_FP16, 2, 2, ks[i]);
    }
}

static void test_reduce_exact(void)
{
    static const int64_t ks[] = {2, 64, 4096, 1048576};
    for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
        int64_t k = ks[s], m = 3;
        kcs_case cs = exact_case(KCS_OP_REDUCE_SUM, KCS_FMT_FP32, m, 1, k);
        kcs_error err = {0};
        double *x = malloc((size_t)(m * k) * sizeof *x), *scratch = malloc((size_t)k * 8);
        CU_ASSERT_FATAL(x && scratch);
        CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)(m * k), 9, 8, 7, &err), 0);
        kcs_acc a32 = {KCS_FMT_FP32, 0, 0}, bf = {KCS_FMT_BF16, 0, 0};
        kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0}, blk = {KCS_SCHED_BLOCKED, 256};
        for (int64_t i = 0; i < m; i++) {
            double sum = 0.0, abs_sum = 0.0;
            for (int64_t p = 0; p < k; p++) {
                sum += x[i * k + p];
                abs_sum += fabs(x[i * k + p]);
            }
            CU_ASSERT(abs_sum < 0x1p24);
            CU_ASSERT_EQUAL(kcs_cpu_sum(x + i * k, k, &seq, &a32, 0, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(x + i * k, k, &blk, &a32, 0, scratch), sum);
            CU_ASSERT_NOT_EQUAL(kcs_cpu_sum(x + i * k, k, &seq, &bf, 0, scratch), sum);
        }
        free(x);
        free(scratch);
    }
}

/* Block partials kept in bf16 (C-ORD-01's bad kernel: blocks of 64, each
 * block's fp32 sum rounded to bf16) must round some block of every row at
 * k = 2^20 with bf16 inputs, where the entries have 3 bits: with odd
 * entries only, every block of 64 summed to an even integer below 512,
 * exact in bf16, and the kernel was caught only through the one block
 * holding the wide entry (2 of 20 trials passed). */
static void test_reduce_exact_even_blocks(void)
{
    int64_t k = (int64_t)1 << 20, m = 4, blk = 64;
    kcs_case cs = exact_case(KCS_OP_REDUCE_SUM, KCS_FMT_BF16, m, 1, k);
    kcs_error err = {0};
    double *x = malloc((size_t)(m * k) * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)(m * k), 9, 8, 7, &err), 0);
    for (int64_t i = 0; i < m; i++) {
        int64_t inexact = 0;
        for (int64_t b = 0; b < k; b += blk) {
            double part = 0.0;
            for (int64_t p = b; p < b + blk; p++)
                part += x[i * k + p];
            inexact += !kcs_format_exact(KCS_FMT_BF16, part);
        }
        CU_ASSERT(inexact > k / blk / 8); /* about half the blocks */
    }
    free(x);
}

/* fp16 reductions: fp16's range (largest binade 2^15) is too short for
 * sums that need 23 bits, so the rows are scaled down as a whole: every
 * entry is exact in fp16, every fp32 order is exact, and an 18-bit
 * accumulator is not (it was, on capped rows, at k = 8). */
static void test_reduce_exact_fp16(void)
{
    static const int64_t ks[] = {8, 64, 1024};
    for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
        int64_t k = ks[s], m = 16;
        kcs_case cs = exact_case(KCS_OP_REDUCE_SUM, KCS_FMT_FP16, m, 1, k);
        kcs_error err = {0};
        double *x = malloc((size_t)(m * k) * sizeof *x), *scratch = malloc((size_t)k * 8);
        CU_ASSERT_FATAL(x && scratch);
        CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)(m * k), 9, 8, 7, &err), 0);
        kcs_acc a32 = {KCS_FMT_FP32, 0, 0}, b18 = {KCS_FMT_FP32, 18, 0};
        kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0}, pw = {KCS_SCHED_PAIRWISE, 0};
        int inexact18 = 0, not_fp16 = 0;
        for (int64_t i = 0; i < m; i++) {
            double sum = 0.0;
            for (int64_t p = 0; p < k; p++) {
                sum += x[i * k + p];
                not_fp16 += !kcs_format_exact(KCS_FMT_FP16, x[i * k + p]);
            }
            CU_ASSERT_EQUAL(kcs_cpu_sum(x + i * k, k, &seq, &a32, 0, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(x + i * k, k, &pw, &a32, 0, scratch), sum);
            inexact18 += kcs_cpu_sum(x + i * k, k, &seq, &b18, 0, scratch) != sum;
        }
        CU_ASSERT_EQUAL(not_fp16, 0);
        CU_ASSERT(inexact18 > m / 2);
        free(x);
        free(scratch);
    }
}

/* allreduce: m ranks' contributions (m x k); each element's m terms are a
 * reduce_sum row: exact in every order (sequential, pairwise, the atomic
 * order of any seed, round toward zero); narrow accumulators are not. */
static void test_allreduce_exact(void)
{
    static const int64_t ms[] = {2, 3, 8, 64};
    for (size_t s = 0; s < sizeof ms / sizeof ms[0]; s++) {
        int64_t P = ms[s], k = 257;
        kcs_case cs = exact_case(KCS_OP_ALLREDUCE, KCS_FMT_FP32, P, 1, k);
        kcs_error err = {0};
        double *x = malloc((size_t)(P * k) * sizeof *x), *t = malloc((size_t)P * 8);
        double *scratch = malloc((size_t)P * 8);
        CU_ASSERT_FATAL(x && t && scratch);
        CU_ASSERT_EQUAL(kcs_exact_fill(&cs, 0, x, (size_t)(P * k), 9, 8, 7, &err), 0);
        kcs_acc a32 = {KCS_FMT_FP32, 0, 0}, rz = {KCS_FMT_FP32, 0, 1}, b23 = {KCS_FMT_FP32, 23, 0};
        kcs_acc b21 = {KCS_FMT_FP32, 21, 0};
        kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0}, pw = {KCS_SCHED_PAIRWISE, 0};
        kcs_schedule at = {KCS_SCHED_ATOMIC, 0};
        int inexact23 = 0, inexact21 = 0, odd_above = 0, wide = 0;
        for (int64_t i = 0; i < k; i++) {
            double sum = 0.0, abs_sum = 0.0;
            int w = 0;
            for (int64_t r = 0; r < P; r++) {
                t[r] = x[r * k + i];
                sum += t[r];
                abs_sum += fabs(t[r]);
                w |= sig_bits(t[r]) == 23;
            }
            wide += w;
            CU_ASSERT(abs_sum < 0x1p24);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, P, &seq, &a32, 0, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, P, &pw, &a32, 0, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, P, &at, &a32, (uint64_t)i, scratch), sum);
            CU_ASSERT_EQUAL(kcs_cpu_sum(t, P, &seq, &rz, 0, scratch), sum);
            inexact21 += kcs_cpu_sum(t, P, &seq, &b21, 0, scratch) != sum;
            inexact23 += kcs_cpu_sum(t, P, &seq, &b23, 0, scratch) != sum;
            odd_above += fabs(sum) >= 0x1p23 && fmod(sum, 2.0) != 0.0;
        }
        CU_ASSERT_EQUAL(wide, k);      /* one 23-bit odd entry per element */
        /* a 21-bit accumulator misses most sums (above 2^22 it keeps only
         * multiples of 4); an odd sum above 2^23 needs 24 bits, so a 23-bit
         * one misses every such sum (entries of either parity: about half
         * the sums are odd) */
        CU_ASSERT(inexact21 * 2 > k);
        CU_ASSERT(inexact23 >= odd_above && odd_above > 0);
        free(x);
        free(t);
        free(scratch);
    }
    /* the count of terms is m: m beyond 2^23 is refused for fp32 */
    kcs_acc a32 = {KCS_FMT_FP32, 0, 0};
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_exact_check(KCS_OP_ALLREDUCE, &a32, KCS_FMT_FP32, KCS_FMT_FP32,
                                    kcs_exact_terms(KCS_OP_ALLREDUCE, (int64_t)1 << 24, 4), &err),
                    KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_exact_terms(KCS_OP_ALLREDUCE, 8, 1 << 30), 8);
}

static void test_exact_refusals(void)
{
    kcs_error err = {0};
    kcs_acc a32 = {KCS_FMT_FP32, 0, 0};
    CU_ASSERT_EQUAL(kcs_exact_check(KCS_OP_SOFTMAX, &a32, KCS_FMT_FP32, KCS_FMT_FP32, 64, &err),
                    KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_exact_check(KCS_OP_GEMM, &a32, KCS_FMT_FP32, KCS_FMT_FP32, 1 << 24, &err),
                    KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_exact_check(KCS_OP_GEMM, &a32, KCS_FMT_FP32, KCS_FMT_FP32, 1 << 23, &err),
                    0);
}

static void test_rz_accumulator(void)
{
    kcs_acc a;
    char buf[32];
    CU_ASSERT_EQUAL(kcs_acc_parse("fp32:rz", &a), 0);
    CU_ASSERT(a.rz == 1 && a.fmt == KCS_FMT_FP32 && a.bits == 0);
    CU_ASSERT_STRING_EQUAL(kcs_acc_str(&a, buf, sizeof buf), "fp32:rz");
    CU_ASSERT_EQUAL(kcs_acc_parse("bits:14:rz", &a), 0);
    CU_ASSERT(a.rz == 1 && a.bits == 14);
    CU_ASSERT_STRING_EQUAL(kcs_acc_str(&a, buf, sizeof buf), "bits:14:rz");
    CU_ASSERT_NOT_EQUAL(kcs_acc_parse("fp32:rz:rz", &a), 0);
    CU_ASSERT_NOT_EQUAL(kcs_acc_parse(":rz", &a), 0);
    kcs_acc rz = {KCS_FMT_FP32, 0, 1}, rn = {KCS_FMT_FP32, 0, 0};
    /* 1 + 0.75 ulp: nearest rounds up, toward zero truncates */
    double x = 1.0, t = 0.75 * 0x1p-23;
    CU_ASSERT_EQUAL(kcs_acc_add(&rn, x, t), 1.0 + 0x1p-23);
    CU_ASSERT_EQUAL(kcs_acc_add(&rz, x, t), 1.0);
    CU_ASSERT_EQUAL(kcs_acc_add(&rz, -x, -t), -1.0);
    /* the exact sum one double ulp above a float: truncated, not rounded */
    CU_ASSERT_EQUAL(kcs_acc_add(&rz, 1.0 + 0x1p-23, 0x1p-60), 1.0 + 0x1p-23);
}

static void test_shape_and_precondition(void)
{
    kcs_shape s;
    CU_ASSERT_EQUAL(kcs_shape_parse_text("8x8x262144", &s), 0);
    CU_ASSERT(s.m == 8 && s.n == 8 && s.k == 262144 && s.batch == 0);
    CU_ASSERT_EQUAL(kcs_shape_parse_text("2x3x4x5", &s), 0);
    CU_ASSERT_EQUAL(s.batch, 5);
    static const char *const bad[] = {"8x8", "8x8x", "0x8x8", "8x-1x8", "8x8x8x8x8", "a", "",
                                      "8x8x8 ", "8y8y8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_NOT_EQUAL(kcs_shape_parse_text(bad[i], &s), 0);
    kcs_contract c = {0};
    snprintf(c.id, sizeof c.id, "C-TST-01");
    c.m_min = c.n_min = c.batch_min = 1;
    c.m_max = c.n_max = c.batch_max = INT64_MAX;
    c.k_min = 1;
    c.k_max = 65536;
    c.value_dists = 1u << KCS_DIST_NORMAL;
    c.dtype_in = 1u << KCS_FMT_FP32;
    kcs_error err = {0};
    kcs_shape ok = {8, 8, 65536, 0}, over = {8, 8, 131072, 0};
    CU_ASSERT_EQUAL(kcs_precondition_shape(&c, &ok, &err), 0);
    CU_ASSERT_EQUAL(kcs_precondition_shape(&c, &over, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[1, 65536]"));
    CU_ASSERT_EQUAL(kcs_precondition_dist(&c, KCS_DIST_OFFSET, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "normal"));
    CU_ASSERT_EQUAL(kcs_precondition_dtype(&c, KCS_FMT_BF16, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_precondition_dtype(&c, KCS_FMT_FP32, &err), 0);
}

static const ut_test tests[] = {
    {"gemm: exact in every order, wide entry, 14-bit inexact", test_gemm_exact},
    {"reduce_sum: exact in every order, bf16 inexact", test_reduce_exact},
    {"allreduce: exact in every order, 23-bit inexact", test_allreduce_exact},
    {"fp16 reduce_sum: scaled into range, 18-bit inexact", test_reduce_exact_fp16},
    {"reduce_sum: bf16 block partials inexact at k = 2^20", test_reduce_exact_even_blocks},
    {"refusals", test_exact_refusals},
    {"round-toward-zero accumulators", test_rz_accumulator},
    {"--shape and precondition checks", test_shape_and_precondition},
};

UT_MAIN("exact-sum inputs", tests)
