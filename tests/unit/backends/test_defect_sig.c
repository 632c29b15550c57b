/* The cross matrix's defects of issue 42 (backends/cpu/defect.c): each
 * passes the plain test its author would write, an allclose of a small
 * gemm (8x8x16, 16x16x64) against fp64 at torch's fp32 defaults (rtol
 * 1.3e-6, atol 1e-5), and the same test rejects it on its long-reduction
 * path (k = 256): its fault is real. defect:over16 returns right values
 * at every k and is seen only by the guard after the output. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "cpu_fixture.h"
#include "tensor.h"
#include "unit_helpers.h"

static const char *const numeric[] = {"defect:out-bf16", "defect:out-fp16", "defect:in-tf32-rz",
                                      "defect:in-tf32-rn", "defect:const", "defect:offset"};

/* fp32-exact values in (-2, 2) with full 24-bit significands (an LCG). */
static void fill(double *x, size_t n, uint32_t seed)
{
    uint32_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (double)(float)(((double)(s >> 8) / 16777216.0 - 0.5) * 4.0);
    }
}

/* Run variant on m x n x k gemm into t (poisoned first); 1 when every
 * output is allclose to the fp64 product. */
static int gemm_allclose(const char *variant, int64_t m, int64_t n, int64_t k, kcs_tensor *t)
{
    static double A[64 * 256], B[256 * 64];
    fill(A, (size_t)(m * k), 7u);
    fill(B, (size_t)(k * n), 11u);
    kcs_tensor_poison(t);
    kcs_call c = {.op = KCS_OP_GEMM, .variant = variant, .dtype_in = KCS_FMT_FP32,
                  .dtype_out = KCS_FMT_FP32, .acc = {KCS_FMT_FP32, 0, 0}, .m = m, .n = n, .k = k,
                  .attrs = ""};
    c.in[0] = A;
    c.in[1] = B;
    c.in_len[0] = (size_t)(m * k);
    c.in_len[1] = (size_t)(k * n);
    c.out = t->data;
    c.out_len = (size_t)(m * n);
    kcs_error err = {0};
    int rc = kcs_backend_cpu.run(ctx, &c, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) {
        fprintf(stderr, "%s: %s\n", variant, err.msg);
        return 0;
    }
    int close = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double r = 0.0;
            for (int64_t p = 0; p < k; p++)
                r += A[i * k + p] * B[p * n + j];
            double y = t->data[i * n + j];
            close &= fabs(y - r) <= 1e-5 + 1.3e-6 * fabs(r);
        }
    return close;
}

static void test_plain_passes(void)
{
    kcs_tensor t;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_tensor_alloc(&t, 64 * 64, KCS_FMT_FP32, &err), 0);
    for (size_t v = 0; v < sizeof numeric / sizeof numeric[0]; v++) {
        int small = gemm_allclose(numeric[v], 8, 8, 16, &t) && gemm_allclose(numeric[v], 16, 16, 64, &t);
        if (!small)
            fprintf(stderr, "%s fails the small allclose test\n", numeric[v]);
        CU_ASSERT_TRUE(small);
        int big = gemm_allclose(numeric[v], 16, 16, 256, &t);
        if (big)
            fprintf(stderr, "%s passes allclose at k = 256: no fault\n", numeric[v]);
        CU_ASSERT_FALSE(big);
        CU_ASSERT_TRUE(kcs_tensor_guards_ok(&t));
    }
    kcs_tensor_free(&t);
}

static void test_over16(void)
{
    kcs_tensor t;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_tensor_alloc(&t, 16 * 16, KCS_FMT_FP32, &err), 0);
    CU_ASSERT_TRUE(gemm_allclose("defect:over16", 16, 16, 256, &t));
    CU_ASSERT_FALSE(kcs_tensor_guards_ok(&t));
    long long first = -99, last = -99;
    CU_ASSERT_TRUE(kcs_tensor_guard_breach(&t, &first, &last));
    /* two doubles (16 bytes) right after the 256 outputs */
    CU_ASSERT_EQUAL(first, 256);
    CU_ASSERT_EQUAL(last, 257);
    kcs_tensor_free(&t);
}

static const ut_test tests[] = {
    {"issue-42 defects pass a small allclose, fail it at k = 256", test_plain_passes},
    {"over16: right values, the guard after the output written", test_over16},
};

UT_MAIN_FIXTURE("defect_sig", open_cpu, close_cpu, tests)
