/* nan=mask (src/arith/nan_mask.c) in the fp64 and exact references
 * (src/judge/oracle.c) and in the CPU backend's own kernels
 * (backends/cpu/nan_policy.c), on hand-derived cases: a NaN input element
 * is absent (0 in sums and products, probability 0 in softmax; an all-NaN
 * softmax row is NaN); without the attribute NaN propagates; the caller's
 * inputs are left as they were; ops that do not define it are refused. */
#include <math.h>
#include <string.h>

#include "backend.h"
#include "nan_mask.h"
#include "oracle.h"
#include "tensor.h"
#include "unit_calls.h"
#include "unit_helpers.h"

extern const kcs_backend_ops kcs_backend_cpu;

static kcs_call mk(kcs_op op, int64_t m, int64_t n, int64_t k, const char *attrs)
{
    kcs_call c = ut_fp32_call(op, m, n, k, KCS_FMT_FP32);
    c.variant = "own";
    c.attrs = attrs;
    return c;
}

static int run_oracle(const kcs_call *c, kcs_oracle_kind kind, double *ref, double *absref)
{
    double scale = 0.0;
    kcs_error err = {0};
    int rc = kcs_oracle_run(kind, NULL, c, ref, absref, &scale, &err);
    if (rc && rc != KCS_E_UNSUPPORTED)
        fprintf(stderr, "\n  oracle: %s\n", err.msg);
    return rc;
}

static void test_attrs(void)
{
    CU_ASSERT(kcs_nan_mask_declared("nan=mask"));
    CU_ASSERT(kcs_nan_mask_declared("oob=raise; nan = mask"));
    CU_ASSERT_FALSE(kcs_nan_mask_declared("nan=propagate"));
    CU_ASSERT_FALSE(kcs_nan_mask_declared(""));
    CU_ASSERT_FALSE(kcs_nan_mask_declared(NULL));
    CU_ASSERT_FALSE(kcs_nan_mask_declared("nan=mask;nan=mask")); /* malformed */
    CU_ASSERT(kcs_nan_mask_defined(KCS_OP_GEMM) && kcs_nan_mask_defined(KCS_OP_SOFTMAX));
    CU_ASSERT_FALSE(kcs_nan_mask_defined(KCS_OP_LAYERNORM));
    CU_ASSERT_FALSE(kcs_nan_mask_defined(KCS_OP_GATHER));
}

/* reduce_sum: rows [1, NaN, 2.5, NaN] -> 3.5 and [NaN, NaN, NaN, NaN] -> 0;
 * |x| sums likewise; exact oracle too. */
static void test_reduce_sum(void)
{
    double X[8] = {1, NAN, 2.5, NAN, NAN, NAN, NAN, NAN}, ref[2], absref[2];
    kcs_call c = mk(KCS_OP_REDUCE_SUM, 2, 1, 4, "nan=mask");
    c.in[0] = X;
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT(ref[0] == 3.5 && ref[1] == 0.0);
    CU_ASSERT(absref[0] == 3.5 && absref[1] == 0.0);
    CU_ASSERT(isnan(X[1]) && isnan(X[4])); /* the inputs are not touched */
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_EXACT, ref, absref), 0);
    CU_ASSERT(ref[0] == 3.5 && ref[1] == 0.0);
    c.attrs = "nan=propagate";
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT(isnan(ref[0]) && isnan(ref[1]));
}

/* dot: x = [1, 2, NaN], y = [3, NaN, 5]: only 1*3 has no NaN factor. */
static void test_dot(void)
{
    double x[3] = {1, 2, NAN}, y[3] = {3, NAN, 5}, ref[1], absref[1];
    kcs_call c = mk(KCS_OP_DOT, 1, 1, 3, "nan=mask");
    c.in[0] = x;
    c.in[1] = y;
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT_EQUAL(ref[0], 3.0);
    CU_ASSERT_EQUAL(absref[0], 3.0);
}

/* gemm: A = [[1, NaN], [2, 3]], B = [[4, 5], [6, 7]]: D = [[4, 5], [26, 31]]
 * (the NaN drops its term); propagate: row 0 NaN, row 1 the same. A masked
 * element times an infinity is 0 * Inf = NaN (nan_mask.h). */
static void test_gemm(void)
{
    double A[4] = {1, NAN, 2, 3}, B[4] = {4, 5, 6, 7}, ref[4], absref[4];
    kcs_call c = mk(KCS_OP_GEMM, 2, 2, 2, "nan=mask");
    c.in[0] = A;
    c.in[1] = B;
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT(ref[0] == 4 && ref[1] == 5 && ref[2] == 26 && ref[3] == 31);
    CU_ASSERT(absref[0] >= 4 && absref[0] < 4.01 && absref[3] >= 31 && absref[3] < 31.1);
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_EXACT, ref, absref), 0);
    CU_ASSERT(ref[0] == 4 && ref[1] == 5 && ref[2] == 26 && ref[3] == 31);
    c.attrs = "";
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT(isnan(ref[0]) && isnan(ref[1]) && ref[2] == 26 && ref[3] == 31);
    double Binf[4] = {4, 5, INFINITY, 7};
    c.attrs = "nan=mask";
    c.in[1] = Binf;
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT(isnan(ref[0]) && ref[1] == 5);
}

/* softmax: [0, NaN, ln 3] -> [1/4, 0, 3/4]; an all-NaN row is NaN. */
static void test_softmax(void)
{
    double X[6] = {0, NAN, log(3.0), NAN, NAN, NAN}, ref[6], absref[6];
    kcs_call c = mk(KCS_OP_SOFTMAX, 2, 1, 3, "nan=mask");
    c.in[0] = X;
    CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
    CU_ASSERT(fabs(ref[0] - 0.25) < 1e-15 && ref[1] == 0.0 && fabs(ref[2] - 0.75) < 1e-15);
    CU_ASSERT(isnan(ref[3]) && isnan(ref[4]) && isnan(ref[5]));
}

static void test_undefined_ops(void)
{
    double X[4] = {1, NAN, 2, 3}, G[2] = {1, 1}, Bt[2] = {0, 0}, ref[4], absref[4];
    kcs_call c = mk(KCS_OP_LAYERNORM, 2, 1, 2, "nan=mask");
    c.in[0] = X;
    c.in[1] = G;
    c.in[2] = Bt;
    CU_ASSERT_EQUAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), KCS_E_UNSUPPORTED);
}

/* The CPU backend: own kernels mask under nan=mask and agree with the
 * reference; native (OpenBLAS) ignores the attribute and propagates. */
static void test_cpu_own(void)
{
    kcs_error err = {0};
    kcs_backend_ctx *ctx;
    CU_ASSERT_FATAL(kcs_backend_cpu.open(0, NULL, &ctx, &err) == 0);
    double A[4] = {1, NAN, 2, 3}, B[4] = {4, 5, 6, 7}, S[6] = {0, NAN, log(3.0), NAN, NAN, NAN};
    struct {
        kcs_op op;
        int64_t m, n, k;
        const double *in0, *in1;
        size_t out_len;
    } cases[] = {
        {KCS_OP_GEMM, 2, 2, 2, A, B, 4},
        {KCS_OP_REDUCE_SUM, 2, 1, 2, A, NULL, 2},
        {KCS_OP_DOT, 1, 1, 4, A, B, 1},
        {KCS_OP_SOFTMAX, 2, 1, 3, S, NULL, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int native = 0; native < 2; native++) {
            kcs_call c = mk(cases[i].op, cases[i].m, cases[i].n, cases[i].k, "nan=mask");
            c.variant = native ? "native" : "own";
            c.in[0] = cases[i].in0;
            c.in[1] = cases[i].in1;
            double ref[8], absref[8], out[8];
            c.out = out;
            c.out_len = cases[i].out_len;
            CU_ASSERT_EQUAL_FATAL(run_oracle(&c, KCS_ORACLE_FP64, ref, absref), 0);
            CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.run(ctx, &c, &err), 0);
            int nan_out = 0, nan_ref = 0, close = 1;
            for (size_t j = 0; j < cases[i].out_len; j++) {
                nan_out += isnan(out[j]);
                nan_ref += isnan(ref[j]);
                if (!isnan(ref[j]))
                    close = close && fabs(out[j] - ref[j]) <= 1e-6 * (1 + fabs(ref[j]));
            }
            if (native) {
                CU_ASSERT(nan_out > nan_ref); /* propagated */
            } else {
                CU_ASSERT_EQUAL(nan_out, nan_ref); /* softmax's all-NaN row only */
                CU_ASSERT(close);
            }
        }
    }
    kcs_backend_cpu.close(ctx);
}

static const ut_test tests[] = {
    {"attrs", test_attrs},
    {"reduce_sum", test_reduce_sum},
    {"dot", test_dot},
    {"gemm", test_gemm},
    {"softmax", test_softmax},
    {"ops without nan=mask", test_undefined_ops},
    {"cpu own kernels mask, native propagates", test_cpu_own},
};

UT_MAIN("nan_mask", tests)
