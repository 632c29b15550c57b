/* C-ORD-02's calibration bad kernel (calib_gemm.c, G_RANDOM: each output's
 * products in an order drawn from the call's seed, summed in fp32) against
 * kcs_cpu_sum's atomic schedule on the same products, bit for bit: fp32,
 * bf16 and fp16 inputs take the bulk-drawn order and fmaf, fp64 inputs
 * (not fp32 values) the model itself; batched calls draw per batch. And
 * the order-only defects of the protocol sweep (defect_proto.c), whose
 * fast path runs the own GEMM's kernels, against their model path. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"
#include "calib.h"
#include "cpu.h"
#include "rng.h"
#include "unit_helpers.h"

/* A with wide magnitudes (sums cancel), B normal, both in format f. */
static void operands(double *A, size_t la, double *B, size_t lb, kcs_format f, kcs_rng *r)
{
    for (size_t i = 0; i < la; i++)
        A[i] = kcs_format_round(f, kcs_rng_normal(r) * ldexp(1.0, (int)(kcs_rng_u32(r) % 16) - 8),
                                KCS_ROUND_DEFAULT);
    for (size_t i = 0; i < lb; i++)
        B[i] = kcs_format_round(f, kcs_rng_normal(r), KCS_ROUND_DEFAULT);
}

/* A (batched when sh[3] > 1) gemm call of shape sh = {m, n, k, batches}. */
static kcs_call gemm_call(const char *variant, kcs_format in, kcs_format out, const int64_t sh[4],
                          const double *A, const double *B)
{
    kcs_call c = {0};
    c.op = sh[3] > 1 ? KCS_OP_BATCHED_GEMM : KCS_OP_GEMM;
    c.variant = variant;
    c.dtype_in = in;
    c.dtype_out = out;
    c.m = sh[0];
    c.n = sh[1];
    c.k = sh[2];
    c.batch = sh[3] > 1 ? sh[3] : 0;
    c.in[0] = A;
    c.in[1] = B;
    return c;
}

static void random_order_equals_model(void)
{
    kcs_format ins[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP64};
    int64_t shapes[][4] = {{1, 1, 1, 1}, {3, 5, 77, 1}, {2, 2, 1000, 1}, {4, 3, 64, 3}};
    kcs_rng r;
    kcs_rng_init(&r, 9, 2, 3);
    long long outs = 0, bad = 0;
    for (int fi = 0; fi < 4; fi++)
        for (int hi = 0; hi < 4; hi++)
            for (int withc = 0; withc < 2; withc++) {
                int64_t m = shapes[hi][0], n = shapes[hi][1], k = shapes[hi][2];
                int64_t nb = shapes[hi][3];
                size_t la = (size_t)(nb * m * k), lb = (size_t)(nb * k * n), ld = (size_t)(nb * m * n);
                double *A = malloc(la * sizeof *A), *B = malloc(lb * sizeof *B);
                double *C = malloc(ld * sizeof *C), *D = malloc(ld * sizeof *D);
                double *terms = malloc((size_t)k * sizeof *terms);
                double *scratch = malloc((size_t)k * sizeof *scratch);
                CU_ASSERT_FATAL(A && B && C && D && terms && scratch);
                operands(A, la, B, lb, ins[fi], &r);
                for (size_t i = 0; i < ld; i++)
                    C[i] = kcs_format_round(ins[fi], kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
                kcs_call c = gemm_call("calib:C-ORD-02:bad", ins[fi],
                                       withc ? KCS_FMT_FP32 : KCS_FMT_FP64, shapes[hi], A, B);
                c.in[2] = withc ? C : NULL;
                c.out = D;
                c.seed = kcs_rng_u64(&r);
                kcs_error err = {0};
                CU_ASSERT_EQUAL_FATAL(kcs_cpu_calib_gemm(&c, "C-ORD-02", KCS_CALIB_BAD, &err), 0);
                const kcs_schedule atomic = {KCS_SCHED_ATOMIC, 0};
                const kcs_acc fp32 = {KCS_FMT_FP32, 0, 0};
                for (int64_t bi = 0; bi < nb; bi++)
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = 0; j < n; j++) {
                            for (int64_t p = 0; p < k; p++)
                                terms[p] = A[(bi * m + i) * k + p] * B[(bi * k + p) * n + j];
                            uint64_t seed = c.seed ^ ((uint64_t)i << 32) ^ (uint64_t)j ^ ((uint64_t)bi << 48);
                            double s = kcs_cpu_sum(terms, k, &atomic, &fp32, seed, scratch);
                            if (withc)
                                s = (double)(float)(s + C[(bi * m + i) * n + j]);
                            s = kcs_format_round(c.dtype_out, s, KCS_ROUND_DEFAULT);
                            double d = D[(bi * m + i) * n + j];
                            outs++;
                            if (memcmp(&s, &d, sizeof s) && bad++ < 5)
                                fprintf(stderr, "  %s %lldx%lldx%lld: %a, model %a\n",
                                        kcs_format_name(ins[fi]), (long long)m, (long long)n,
                                        (long long)k, d, s);
                        }
                free(A);
                free(B);
                free(C);
                free(D);
                free(terms);
                free(scratch);
            }
    printf("\n  %lld outputs, %lld differ from the atomic model\n", outs, bad);
    CU_ASSERT(outs > 100);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The order-only defects of the protocol sweep (defect_proto.c:
 * rare-reorder, batch-gemv, batch-splitk, batch-tile) take the own GEMM's
 * fast kernels per run of rows; the model path must give the same bits. */
static void order_defects_fast_equals_model(void)
{
    const char *ds[] = {"defect:rare-reorder", "defect:batch-gemv", "defect:batch-splitk",
                        "defect:batch-tile", "defect:nansum"};
    kcs_format ins[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP64};
    int64_t shapes[][4] = {{1, 2, 16, 1}, {3, 2, 100, 1}, {9, 17, 33, 1},  {63, 2, 16, 1},
                           {64, 3, 20, 1}, {70, 2, 16, 1}, {13, 5, 40, 3}};
    kcs_rng r;
    kcs_rng_init(&r, 19, 4, 5);
    long long outs = 0, bad = 0;
    for (int di = 0; di < 5; di++)
        for (int fi = 0; fi < 3; fi++)
            for (int hi = 0; hi < 7; hi++)
                for (int rep = 0; rep < 8; rep++) { /* seeds: rare-reorder's one run in 8 */
                    int64_t m = shapes[hi][0], n = shapes[hi][1], k = shapes[hi][2];
                    int64_t nb = shapes[hi][3];
                    size_t la = (size_t)(nb * m * k), lb = (size_t)(nb * k * n), ld = (size_t)(nb * m * n);
                    double *A = malloc(la * sizeof *A), *B = malloc(lb * sizeof *B);
                    double *D1 = malloc(ld * sizeof *D1), *D2 = malloc(ld * sizeof *D2);
                    CU_ASSERT_FATAL(A && B && D1 && D2);
                    operands(A, la, B, lb, ins[fi], &r);
                    kcs_call c = gemm_call(ds[di], ins[fi], rep & 1 ? KCS_FMT_FP64 : KCS_FMT_BF16,
                                           shapes[hi], A, B);
                    c.out_len = ld;
                    c.seed = kcs_rng_u64(&r);
                    kcs_error err = {0};
                    c.out = D1;
                    CU_ASSERT_EQUAL_FATAL(kcs_cpu_defect_proto(&c, &err), 0);
                    c.out = D2;
                    CU_ASSERT_EQUAL_FATAL(kcs_cpu_defect_proto_model(&c, &err), 0);
                    for (size_t i = 0; i < ld; i++, outs++)
                        if (memcmp(&D1[i], &D2[i], sizeof D1[i]) && bad++ < 5)
                            fprintf(stderr, "  %s %s %lldx%lldx%lld [%zu]: %a, model %a\n", ds[di],
                                    kcs_format_name(ins[fi]), (long long)m, (long long)n,
                                    (long long)k, i, D1[i], D2[i]);
                    free(A);
                    free(B);
                    free(D1);
                    free(D2);
                }
    printf("\n  %lld outputs, %lld differ from the model\n", outs, bad);
    CU_ASSERT(outs > 10000);
    CU_ASSERT_EQUAL(bad, 0);
}

static const ut_test tests[] = {
    {"C-ORD-02 bad: the drawn order equals the atomic model", random_order_equals_model},
    {"order-only defects: fast kernels equal the model", order_defects_fast_equals_model},
};

UT_MAIN("cpu calibration gemm kernels", tests)
