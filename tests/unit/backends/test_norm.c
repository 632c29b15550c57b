/* The norm op (y_i = ||x_i||_2 per row): its table entries, the fp64
 * oracle, the CPU kernels (native: OpenBLAS snrm2; own: the sum of squares
 * under the declared accumulator and schedule) on exact cases and against
 * the oracle within C-PRC-08's bound, and C-PRC-08's calibration kernels
 * (bad passes the plain allclose test at small k and breaks the bound at
 * the contract's k; good keeps it).
 *
 * The bound (contracts/C-PRC-08/C-PRC-08.yaml): every rounding |delta| <
 * 2u, u = 2^-24; k squares summed in any order, then one sqrt:
 * |y^/y - 1| <= (k + 2) u / (1 - 3 k u) (Higham, Accuracy and Stability,
 * 2nd ed., Lemma 3.1, 3.3 and §3.1 for the sum of squares). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "calib_wrap.h"
#include "calibrate.h"
#include "oracle.h"
#include "tensor.h"

extern const kcs_backend_ops kcs_backend_cpu;
static kcs_backend_ctx *ctx;

static const double U32 = 0x1p-24;

static double eta(int64_t k)
{
    return (double)(k + 2) * U32 / (1.0 - 3.0 * (double)k * U32);
}

static kcs_call mk(const char *variant, const char *acc, const char *sched, int64_t m, int64_t k,
                   const double *x)
{
    kcs_call c = {0};
    c.op = KCS_OP_NORM;
    c.variant = variant;
    c.dtype_in = c.dtype_out = KCS_FMT_FP32;
    CU_ASSERT_FATAL(kcs_acc_parse(acc ? acc : "fp32", &c.acc) == 0);
    CU_ASSERT_FATAL(kcs_schedule_parse(sched ? sched : "sequential", &c.schedule) == 0);
    c.m = m;
    c.k = k;
    c.attrs = "";
    c.seed = 7;
    c.in[0] = x;
    c.in_len[0] = (size_t)(m * k);
    return c;
}

/* Run c on backend ops/ctx into y (sentinel-filled, guarded); returns rc. */
static int run_on(const kcs_backend_ops *ops, kcs_backend_ctx *bctx, kcs_call *c, double *y)
{
    kcs_error err = {0};
    kcs_tensor t;
    c->out_len = kcs_op_out_len(c);
    CU_ASSERT_FATAL(kcs_tensor_alloc(&t, c->out_len, c->dtype_out, &err) == 0);
    c->out = t.data;
    int rc = ops->run(bctx, c, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", c->variant, err.msg);
    CU_ASSERT(kcs_tensor_guards_ok(&t));
    memcpy(y, t.data, c->out_len * sizeof *y);
    kcs_tensor_free(&t);
    return rc;
}

static int run(kcs_call *c, double *y)
{
    return run_on(&kcs_backend_cpu, ctx, c, y);
}

/* max_i |y_i - ref_i| / ref_i over rows with ref_i > 0 (zero rows: y must be 0) */
static double max_rel(const double *y, const double *ref, size_t m)
{
    double r = 0.0;
    for (size_t i = 0; i < m; i++)
        r = fmax(r, ref[i] > 0.0 ? fabs(y[i] - ref[i]) / ref[i] : (y[i] == 0.0 ? 0.0 : INFINITY));
    return r;
}

static void oracle(const kcs_call *c, double *ref, double *absref)
{
    kcs_error err = {0};
    double scale = 0.0;
    CU_ASSERT_EQUAL_FATAL(kcs_oracle_run(KCS_ORACLE_FP64, NULL, c, ref, absref, &scale, &err), 0);
    CU_ASSERT(scale >= 0.0);
}

static void test_table(void)
{
    kcs_op op;
    CU_ASSERT_EQUAL(kcs_op_parse("norm", &op), 0);
    CU_ASSERT_EQUAL(op, KCS_OP_NORM);
    CU_ASSERT_STRING_EQUAL(kcs_op_name(KCS_OP_NORM), "norm");
    CU_ASSERT_EQUAL(KCS_OP_NORM, KCS_OP_ELEMENTWISE + 1); /* appended: stored enums stay */
    CU_ASSERT_EQUAL(kcs_op_n_inputs(KCS_OP_NORM), 1);
    kcs_call c = {0};
    c.op = KCS_OP_NORM;
    c.m = 5;
    c.k = 7;
    CU_ASSERT_EQUAL(kcs_op_in_len(&c, 0), 35);
    CU_ASSERT_EQUAL(kcs_op_in_len(&c, 1), 0);
    CU_ASSERT_EQUAL(kcs_op_out_len(&c), 5);
}

/* [3, 4] -> 5, [0, 0] -> 0, [-5, 12] -> 13; k = 1: |x|. Exact in every
 * kernel: the squares and their sums are small integers, the roots exact. */
static void test_exact(void)
{
    const double x2[] = {3, 4, 0, 0, -5, 12}, x1[] = {-2.5, 7, 0};
    const double r2[] = {5, 0, 13}, r1[] = {2.5, 7, 0};
    const char *const variants[] = {"native", "own"};
    const char *const scheds[] = {"sequential", "pairwise", "atomic"};
    double y[3], ref[3], absref[3];
    kcs_call c = mk("native", NULL, NULL, 3, 2, x2);
    oracle(&c, ref, absref);
    CU_ASSERT_EQUAL(memcmp(ref, r2, sizeof r2), 0);
    CU_ASSERT_EQUAL(memcmp(absref, r2, sizeof r2), 0);
    for (int v = 0; v < 2; v++)
        for (int s = 0; s < 3; s++) {
            if (v == 0 && s > 0)
                continue;
            c = mk(variants[v], NULL, scheds[s], 3, 2, x2);
            CU_ASSERT_EQUAL(run(&c, y), 0);
            CU_ASSERT_EQUAL(memcmp(y, r2, sizeof r2), 0);
            c = mk(variants[v], NULL, scheds[s], 3, 1, x1);
            CU_ASSERT_EQUAL(run(&c, y), 0);
            CU_ASSERT_EQUAL(memcmp(y, r1, sizeof r1), 0);
        }
    /* m = 0 and k = 0: nothing to do / the empty norm 0 */
    c = mk("own", NULL, NULL, 2, 0, x2);
    CU_ASSERT_EQUAL(run(&c, y), 0);
    CU_ASSERT(y[0] == 0.0 && y[1] == 0.0);
    c = mk("native", NULL, NULL, 2, 0, x2);
    CU_ASSERT_EQUAL(run(&c, y), 0);
    CU_ASSERT(y[0] == 0.0 && y[1] == 0.0);
}

/* Random rows (N(0,1) in fp32): native and own with fp32 accumulators in
 * every schedule within the bound; own with a bf16 accumulator beyond it
 * at k = 4096 (the kernel honours the declared accumulator). */
static void test_random(void)
{
    enum { M = 8 };
    const int64_t ks[] = {1, 7, 64, 1000, 4096};
    const char *const scheds[] = {"sequential", "pairwise", "blocked:16", "splitk:4", "atomic"};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        int64_t k = ks[ki];
        double *x = malloc((size_t)(M * k) * sizeof *x), y[M], ref[M], absref[M];
        kcs_fill(x, (size_t)(M * k), KCS_DIST_NORMAL, KCS_FMT_FP32, 2026, 8, (uint64_t)k);
        kcs_call c = mk("native", NULL, NULL, M, k, x);
        oracle(&c, ref, absref);
        CU_ASSERT_EQUAL(run(&c, y), 0);
        double rn = max_rel(y, ref, M);
        CU_ASSERT(rn <= eta(k));
        double worst = 0.0;
        for (size_t s = 0; s < sizeof scheds / sizeof scheds[0]; s++) {
            c = mk("own", "fp32", scheds[s], M, k, x);
            CU_ASSERT_EQUAL(run(&c, y), 0);
            worst = fmax(worst, max_rel(y, ref, M));
        }
        CU_ASSERT(worst <= eta(k));
        c = mk("own", "fp64", NULL, M, k, x);
        CU_ASSERT_EQUAL(run(&c, y), 0);
        /* the fp64 sum rounded to fp32 (u, halved by the root), then sqrtf (u) */
        CU_ASSERT(max_rel(y, ref, M) <= 1.5 * U32 * (1.0 + 1e-6));
        c = mk("own", "bf16", NULL, M, k, x);
        CU_ASSERT_EQUAL(run(&c, y), 0);
        double rb = max_rel(y, ref, M);
        if (k >= 1000)
            CU_ASSERT(rb > 10.0 * eta(k));
        printf("\n  k=%-5lld eta %.3g: native %.3g, own fp32 %.3g, own bf16 %.3g",
               (long long)k, eta(k), rn, worst, rb);
        free(x);
    }
}

/* C-PRC-08's calibration kernels, the plain test a kernel author writes:
 * x = torch.randn(8, 64), assert_close(kernel(x), x.norm(dim=1)) at fp32
 * defaults (rtol 1.3e-6, atol 1e-5): bad and good pass, baseline (which
 * writes nothing) fails. At the contract's k = 256 and 4096, bad breaks
 * the bound on every row set, good keeps it. */
static void check_calib(const kcs_backend_ops *ops, kcs_backend_ctx *bctx, const char *who)
{
    enum { M = 8 };
    const int64_t ks[] = {64, 256, 4096};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        int64_t k = ks[ki];
        double *x = malloc((size_t)(M * k) * sizeof *x), y[M], ref[M], absref[M];
        kcs_fill(x, (size_t)(M * k), KCS_DIST_NORMAL, KCS_FMT_FP32, 2026, 9, (uint64_t)k);
        kcs_call c = mk("calib:C-PRC-08:good", NULL, NULL, M, k, x);
        oracle(&c, ref, absref);
        CU_ASSERT_EQUAL(run_on(ops, bctx, &c, y), 0);
        double rg = max_rel(y, ref, M);
        CU_ASSERT(rg <= eta(k));
        c.variant = "calib:C-PRC-08:bad";
        CU_ASSERT_EQUAL(run_on(ops, bctx, &c, y), 0);
        double rb = max_rel(y, ref, M);
        size_t not_close = 0;
        for (int i = 0; i < M; i++)
            not_close += !(fabs(y[i] - ref[i]) <= 1e-5 + 1.3e-6 * fabs(ref[i]));
        if (k == 64) {
            CU_ASSERT_EQUAL(not_close, 0); /* the plain test passes */
        } else {
            CU_ASSERT(rb > eta(k)); /* the contract does not */
        }
        c.variant = "calib:C-PRC-08:baseline";
        CU_ASSERT_EQUAL(run_on(ops, bctx, &c, y), 0);
        CU_ASSERT(max_rel(y, ref, M) > 1e-3); /* the plain test has teeth */
        printf("\n  %s k=%-5lld eta %.3g: good %.3g, bad %.3g (%zu of %d not allclose)", who,
               (long long)k, eta(k), rg, rb, not_close, M);
        free(x);
    }
}

static void test_calib_cpu(void)
{
    check_calib(&kcs_backend_cpu, ctx, "cpu");
}

/* The wrapper around the CPU's native kernels (calib_wrap_norm.c); it
 * finds C-PRC-08 through the calibration catalogue. */
static void test_calib_wrapped(void)
{
    if (!kcs_calib_find("C-PRC-08")) {
        printf("\n  C-PRC-08 is not in the calibration catalogue: wrapper not checked");
        return;
    }
    kcs_backend_ctx *w = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_calib_wrap_open(&kcs_backend_cpu, 0, NULL, &w, &err), 0);
    check_calib(&kcs_calib_wrap_ops, w, "wrapped");
    kcs_calib_wrap_ops.close(w);
}

int main(void)
{
    kcs_error err = {0};
    if (kcs_backend_cpu.open(0, NULL, &ctx, &err) != 0) {
        fprintf(stderr, "cpu backend: %s\n", err.msg);
        return 1;
    }
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("norm", NULL, NULL);
    CU_add_test(s, "op table", test_table);
    CU_add_test(s, "exact cases, zeros, k = 1", test_exact);
    CU_add_test(s, "random rows within C-PRC-08's bound", test_random);
    CU_add_test(s, "C-PRC-08 calibration kernels (cpu)", test_calib_cpu);
    CU_add_test(s, "C-PRC-08 calibration kernels (wrapped)", test_calib_wrapped);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    kcs_backend_cpu.close(ctx);
    return f != 0;
}
