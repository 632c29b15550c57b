/* C-PRC-05's sweep kernels (backends/cpu/defect_exp.c):
 *  - every bad one passes the plain test its author would write: torch.exp
 *    against torch.testing.assert_close on torch.randn(8, 64) (fp32
 *    defaults rtol 1.3e-6, atol 1e-5; exp-bf16 and exp-fp16 at their
 *    dtype's defaults: bf16 rtol 1.6e-2, fp16 rtol 1e-3, atol 1e-5), over
 *    100 draws, and the same test rejects a 1e-5 relative error (teeth);
 *  - every bad one is more than eta = 7 fp32 values from the correctly
 *    rounded exp, or non-finite where it is finite (or the reverse),
 *    somewhere on fp32's arguments (a scan of [-110, 100]);
 *  - the conforming exp:cr, exp:cephes, exp:ulp3 are within 7 everywhere
 *    on the scan, and within their stated error of e^x in ulps of e^x
 *    (exp:ulp3: within 2.9, and above 1.9 for nearly every argument: it
 *    sits at OpenCL's bound, as meant). */
#include <CUnit/Basic.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu_fixture.h"
#include "format.h"
#include "tensor.h"
#include "unit_helpers.h"



static int run_exp(const char *variant, const double *x, double *y, size_t n)
{
    kcs_call c = {.op = KCS_OP_ELEMENTWISE, .variant = variant, .dtype_in = KCS_FMT_FP32,
                  .dtype_out = KCS_FMT_FP32, .m = 1, .k = (int64_t)n,
                  .attrs = "fn=exp;subnormal=preserve"};
    c.in[0] = x;
    c.in_len[0] = n;
    c.out = y;
    c.out_len = n;
    kcs_error err = {0};
    int rc = kcs_backend_cpu.run(ctx, &c, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", variant, err.msg);
    return rc;
}

/* fp32 values between y and RN(e^x) (order of the bit patterns); 1e30
 * where one is NaN or exactly one is infinite */
static double count(double y, double x)
{
    float rn = (float)exp(x), fy = (float)y;
    if (isnan(fy) || isnan(rn) || (isinf(fy) != isinf(rn)))
        return 1e30;
    if (fy == rn)
        return 0.0;
    int32_t a, b;
    memcpy(&a, &fy, sizeof a);
    memcpy(&b, &rn, sizeof b);
    if (a < 0 || b < 0) /* a negative exp */
        return 1e30;
    return fabs((double)a - (double)b);
}

static const char *const bad[] = {
    "calib:C-PRC-05:bad", "defect:exp-fast",   "defect:exp-poly4",  "defect:exp-bf16",
    "defect:exp-fp16",    "defect:exp-ftz",    "defect:exp-satmax", "defect:exp-ovfnan",
    "defect:exp-log2e32",
};
#define N_BAD (sizeof bad / sizeof bad[0])

static void test_plain(void)
{
    enum { N = 8 * 64, DRAWS = 100 };
    static double x[N], y[N];
    for (size_t b = 0; b < N_BAD; b++) {
        double rtol = 1.3e-6;
        if (!strcmp(bad[b], "defect:exp-bf16"))
            rtol = 1.6e-2;
        else if (!strcmp(bad[b], "defect:exp-fp16"))
            rtol = 1e-3;
        size_t fails = 0, teeth = 0;
        for (int d = 0; d < DRAWS; d++) {
            kcs_fill(x, N, KCS_DIST_NORMAL, KCS_FMT_FP32, 2026, 79, (uint64_t)d);
            CU_ASSERT_EQUAL_FATAL(run_exp(bad[b], x, y, N), 0);
            size_t nc = 0, nt = 0;
            for (size_t i = 0; i < N; i++) {
                double ref = exp(x[i]);
                nc += !(fabs(y[i] - ref) <= 1e-5 + rtol * fabs(ref));
                double wrong = ref * (1.0 + 1e-5 + rtol); /* the test can fail */
                nt += !(fabs(wrong - ref) <= 1e-5 + rtol * fabs(ref));
            }
            fails += nc != 0;
            teeth += nt != 0;
        }
        printf("\n  %-20s plain test (rtol %.2g): %zu of %d draws fail", bad[b], rtol, fails,
               DRAWS);
        CU_ASSERT_EQUAL(fails, 0);
        CU_ASSERT_EQUAL(teeth, DRAWS);
    }
}

/* worst count of variant over the scan, and (conforming) the worst error
 * in ulps of e^x and the fraction of arguments above 1.9 of them */
static double scan(const char *variant, double *worst_ulp, double *frac_above)
{
    enum { N = 1 << 20 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    CU_ASSERT_FATAL(x && y);
    double worst = 0.0, wu = 0.0;
    size_t above = 0, finite = 0;
    for (int part = 0; part < 4; part++) {
        /* [-110, 100] evenly, plus the ends of the range densely */
        for (size_t i = 0; i < N; i++) {
            double lo = part == 0 ? -110.0 : part == 1 ? -104.5 : part == 2 ? 88.0 : -5.0;
            double hi = part == 0 ? 100.0 : part == 1 ? -86.0 : part == 2 ? 89.5 : 5.0;
            x[i] = (double)(float)(lo + (hi - lo) * ((double)i + 0.5) / N);
        }
        CU_ASSERT_EQUAL_FATAL(run_exp(variant, x, y, N), 0);
        for (size_t i = 0; i < N; i++) {
            worst = fmax(worst, count(y[i], x[i]));
            double f = exp(x[i]);
            if (f >= 0x1p-149 && f <= FLT_MAX && isfinite(y[i])) {
                double u = f < FLT_MIN ? 0x1p-149 : ldexp(1.0, ilogb(f) - 23);
                double e = fabs(y[i] - f) / u;
                wu = fmax(wu, e);
                above += e > 1.9;
                finite++;
            }
        }
    }
    free(x);
    free(y);
    if (worst_ulp)
        *worst_ulp = wu;
    if (frac_above)
        *frac_above = finite ? (double)above / (double)finite : 0.0;
    return worst;
}

static void test_bad_wrong(void)
{
    for (size_t b = 0; b < N_BAD; b++) {
        double w = scan(bad[b], NULL, NULL);
        printf("\n  %-20s worst %.3g fp32 values from RN(e^x)", bad[b], w);
        CU_ASSERT(w > 7.0);
    }
}

static void test_conforming(void)
{
    const char *conf[] = {"exp:cr", "exp:cephes", "exp:ulp3", "native"};
    const double stated[] = {0.51, 2.0, 2.9, 1.0};
    for (size_t i = 0; i < sizeof conf / sizeof conf[0]; i++) {
        double wu, frac;
        double w = scan(conf[i], &wu, &frac);
        printf("\n  %-10s worst %.0f fp32 values from RN(e^x), %.3f ulp of e^x; %.2f above "
               "1.9 ulp", conf[i], w, wu, frac);
        CU_ASSERT(w <= 7.0);
        CU_ASSERT(wu <= stated[i]);
        if (!strcmp(conf[i], "exp:ulp3"))
            CU_ASSERT(frac > 0.99);
    }
}

static void test_refusals(void)
{
    double x = 1.0, y = 0.0;
    kcs_call c = {.op = KCS_OP_ELEMENTWISE, .variant = "defect:exp-ftz",
                  .dtype_in = KCS_FMT_FP32, .dtype_out = KCS_FMT_FP32, .m = 1, .k = 1,
                  .attrs = "fn=tanh"};
    c.in[0] = &x;
    c.in_len[0] = 1;
    c.out = &y;
    c.out_len = 1;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_backend_cpu.run(ctx, &c, &err), KCS_E_UNSUPPORTED);
    c.attrs = "fn=exp";
    c.op = KCS_OP_REDUCE_SUM;
    CU_ASSERT_EQUAL(kcs_backend_cpu.run(ctx, &c, &err), KCS_E_UNSUPPORTED);
}

static const ut_test tests[] = {
    {"bad exps pass a plain randn test", test_plain},
    {"bad exps are off by more than eta", test_bad_wrong},
    {"conforming exps within their bound", test_conforming},
    {"fn and op refused", test_refusals},
};

UT_MAIN_FIXTURE("defect_exp", open_cpu, close_cpu, tests)
