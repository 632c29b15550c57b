/* The sweep's points and catalogues of softmax, layernorm, attention and
 * C-PRC-04's reduce_sum (src/calibrate/calib_sweep_ops.c), read from the
 * shipped contracts, and the CPU backend's defect:daz / defect:ftz row
 * sums (backends/cpu/defect.c) that the C-PRC-04 catalogue uses. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "calib_sweep_ops.h"
#include "calibrate.h"
#include "shipped_contracts.h"
#include "precondition.h"
#include "unit_calls.h"
#include "unit_helpers.h"

enum { MAXP = 256 };

/* Points of one op in one axis: they start at the axis' minimum, end at
 * its maximum (or cap), grow by a factor in (1, 4], and lie inside the
 * precondition. */
static void check_axis(const kcs_contract *c, const int64_t *v, int n, int64_t lo, int64_t hi)
{
    CU_ASSERT_FATAL(n >= 2);
    CU_ASSERT_EQUAL(v[0], lo);
    CU_ASSERT_EQUAL(v[n - 1], hi);
    for (int i = 1; i < n; i++) {
        CU_ASSERT(v[i] > v[i - 1]);
        CU_ASSERT(v[i] <= 4 * v[i - 1]);
    }
    (void)c;
}

static void test_points_rows(void)
{
    const kcs_contract *c = find("C-PRC-02");
    kcs_sweep_opts o = {1, 0, 4, 0, 0};
    kcs_sweep_point p[MAXP];
    int n = kcs_sweep_ops_points(c, &o, p, MAXP);
    CU_ASSERT_FATAL(n > 0);
    /* softmax's k points over the contract's range, then layernorm's over
     * its own (precondition.per_op.layernorm: k <= 512), the same grid */
    const kcs_op_narrowing *ln = &c->per_op[KCS_OP_LAYERNORM];
    CU_ASSERT_FATAL(ln->set);
    int64_t ks[MAXP] = {0}, kl[MAXP] = {0};
    int ns = 0, nl = 0;
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(p[i].sh.n, 1);
        CU_ASSERT(kcs_precondition_shape_ok(c, &p[i].sh));
        if (p[i].op == KCS_OP_SOFTMAX) {
            CU_ASSERT_EQUAL(nl, 0); /* softmax first */
            ks[ns++] = p[i].sh.k;
        } else {
            CU_ASSERT_EQUAL(p[i].op, KCS_OP_LAYERNORM);
            kcs_error e = {0};
            CU_ASSERT_EQUAL(kcs_precondition_op_shape(c, KCS_OP_LAYERNORM, &p[i].sh, &e), 0);
            kl[nl++] = p[i].sh.k;
        }
    }
    check_axis(c, ks, ns, c->k_min, c->k_max);
    check_axis(c, kl, nl, ln->range[2][0], ln->range[2][1]);
    for (int i = 0; i < nl; i++)
        CU_ASSERT_EQUAL(kl[i], ks[i]);
    /* --max-k caps the axis; --min-k drops the points below it */
    o.max_k = 64;
    o.min_k = 8;
    n = kcs_sweep_ops_points(c, &o, p, MAXP);
    CU_ASSERT_FATAL(n >= 4 && n % 2 == 0);
    CU_ASSERT_EQUAL(p[0].sh.k, 8);
    CU_ASSERT_EQUAL(p[n / 2 - 1].sh.k, 64);
    CU_ASSERT_EQUAL(p[n - 1].op, KCS_OP_LAYERNORM);
    CU_ASSERT_EQUAL(p[n - 1].sh.k, 64);
}

static void test_points_attention(void)
{
    const kcs_contract *c = find("C-CMP-01");
    kcs_sweep_opts o = {1, 0, 4, 0, 0};
    kcs_sweep_point p[MAXP];
    int n = kcs_sweep_ops_points(c, &o, p, MAXP);
    CU_ASSERT_FATAL(n > 0);
    /* the n x k grid: every n with every k, n outer */
    int64_t ns[MAXP], ks[MAXP];
    int nn = 0, nk = 0;
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(p[i].op, KCS_OP_ATTENTION);
        CU_ASSERT(kcs_precondition_shape_ok(c, &p[i].sh));
        if (i == 0 || p[i].sh.n != p[i - 1].sh.n)
            ns[nn++] = p[i].sh.n;
        if (p[i].sh.n == p[0].sh.n)
            ks[nk++] = p[i].sh.k;
    }
    CU_ASSERT_EQUAL(n, nn * nk);
    check_axis(c, ns, nn, c->n_min, c->n_max);
    check_axis(c, ks, nk, c->k_min, c->k_max);
}

static void test_points_which(void)
{
    kcs_sweep_opts o = {1, 0, 4, 0, 0};
    kcs_sweep_point p[MAXP];
    /* C-PRC-04: reduce_sum under subnormal=preserve, its whole k range */
    const kcs_contract *c = find("C-PRC-04");
    int n = kcs_sweep_ops_points(c, &o, p, MAXP);
    CU_ASSERT_FATAL(n >= 2);
    CU_ASSERT_EQUAL(p[0].op, KCS_OP_REDUCE_SUM);
    CU_ASSERT_EQUAL(p[0].sh.k, c->k_min);
    CU_ASSERT_EQUAL(p[n - 1].sh.k, c->k_max);
    /* not served here: gemm contracts (C-PRC-01 also binds attention: it is
     * swept on gemm), repeat protocols, gathers with oob semantics */
    CU_ASSERT_EQUAL(kcs_sweep_ops_points(find("C-PRC-01"), &o, p, MAXP), 0);
    CU_ASSERT_EQUAL(kcs_sweep_ops_points(find("C-ORD-02"), &o, p, MAXP), 0);
    CU_ASSERT_EQUAL(kcs_sweep_ops_points(find("C-EXC-02"), &o, p, MAXP), 0);
    CU_ASSERT_EQUAL(kcs_sweep_ops_points(find("C-EXC-01"), &o, p, MAXP), 0);
}

static const kcs_sweep_kdef *kernel(kcs_op op, const char *variant, const char *acc, int bad)
{
    size_t n;
    const kcs_sweep_kdef *t = kcs_sweep_ops_kernels(op, &n);
    for (size_t i = 0; t && i < n; i++)
        if (!strcmp(t[i].variant, variant) && t[i].bad == bad &&
            (acc ? t[i].acc && !strcmp(t[i].acc, acc) : !t[i].acc))
            return &t[i];
    CU_FAIL_FATAL("kernel not in the catalogue");
    return NULL;
}

static void test_catalogues(void)
{
    const kcs_contract *prc02 = find("C-PRC-02"), *prc04 = find("C-PRC-04"),
                       *cmp01 = find("C-CMP-01"), *ord01 = find("C-ORD-01");
    const kcs_op ops[] = {KCS_OP_SOFTMAX, KCS_OP_LAYERNORM, KCS_OP_ATTENTION, KCS_OP_REDUCE_SUM};
    for (size_t j = 0; j < 4; j++) {
        size_t n;
        const kcs_sweep_kdef *t = kcs_sweep_ops_kernels(ops[j], &n);
        int conf = 0, bad = 0, good = 0, own = 0;
        for (size_t i = 0; i < n; i++) {
            conf += t[i].bad == 0;
            bad += t[i].bad != 0;
            good += t[i].bad == 0 && !strcmp(t[i].variant, "calib");
            own += t[i].bad == 2;
            /* conforming kernels are never counted as bad */
            if (t[i].bad == 0)
                CU_ASSERT(!t[i].targets);
        }
        CU_ASSERT(conf >= 8);
        CU_ASSERT(bad >= 3);
        CU_ASSERT_EQUAL(good, 1);
        CU_ASSERT_EQUAL(own, 1);
    }
    CU_ASSERT_PTR_NULL(kcs_sweep_ops_kernels(KCS_OP_GEMM, &(size_t){0}));
    /* the contract's own calibration bad: counted everywhere */
    CU_ASSERT(kcs_sweep_ops_counted(prc02, kernel(KCS_OP_SOFTMAX, "calib", NULL, 2)));
    /* narrow sums: C-PRC-02's on softmax, C-CMP-01's on attention */
    CU_ASSERT(kcs_sweep_ops_counted(prc02, kernel(KCS_OP_LAYERNORM, "own", "bf16", 1)));
    CU_ASSERT(kcs_sweep_ops_counted(cmp01, kernel(KCS_OP_ATTENTION, "fused", "bf16", 1)));
    /* 16- and 18-bit sums and the bf16 pairwise sum sit inside C-PRC-02's
     * worst-case bound: C-PRC-06's, not C-PRC-02's */
    const kcs_contract *prc06 = find("C-PRC-06");
    size_t nsm;
    const kcs_sweep_kdef *sm = kcs_sweep_ops_kernels(KCS_OP_SOFTMAX, &nsm), *pw = NULL;
    for (size_t i = 0; i < nsm; i++)
        if (sm[i].acc && sm[i].schedule && !strcmp(sm[i].acc, "bf16") &&
            !strcmp(sm[i].schedule, "pairwise"))
            pw = &sm[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(pw);
    const kcs_sweep_kdef *fine[] = {kernel(KCS_OP_SOFTMAX, "own", "bits:16", 1),
                                    kernel(KCS_OP_LAYERNORM, "own", "bits:18", 1), pw};
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT(kcs_sweep_ops_counted(prc06, fine[i]));
        CU_ASSERT(!kcs_sweep_ops_counted(prc02, fine[i]));
    }
    CU_ASSERT(kcs_sweep_ops_counted(prc02, kernel(KCS_OP_SOFTMAX, "own", "bits:14", 1)));
    /* C-PRC-07 (its random_walk magnitude) targets every narrowed attention
     * kernel, the 18-bit sums and P in bf16 (C-CMP-01's calibration kernel,
     * under C-CMP-01 its own "calib" entry) included */
    const kcs_contract *prc07 = find("C-PRC-07");
    const kcs_sweep_kdef *pbf16 = kernel(KCS_OP_ATTENTION, "calib:C-CMP-01:bad", NULL, 1);
    CU_ASSERT(kcs_sweep_ops_counted(prc07, pbf16));
    CU_ASSERT(!kcs_sweep_ops_counted(cmp01, pbf16));
    CU_ASSERT(kcs_sweep_ops_counted(prc07, kernel(KCS_OP_ATTENTION, "own", "bits:18", 1)));
    CU_ASSERT(kcs_sweep_ops_counted(prc07, kernel(KCS_OP_ATTENTION, "fused", "bits:16", 1)));
    /* ... and those finer than 16-bit formats are not C-CMP-01's */
    CU_ASSERT(!kcs_sweep_ops_counted(cmp01, kernel(KCS_OP_ATTENTION, "own", "bits:14", 1)));
    CU_ASSERT(!kcs_sweep_ops_counted(cmp01, kernel(KCS_OP_ATTENTION, "fused", "bits:16", 1)));
    CU_ASSERT(kcs_sweep_ops_counted(cmp01, kernel(KCS_OP_ATTENTION, "own", "fp16", 1)));
    /* reduce_sum: DAZ and the fp16 running sum are C-PRC-04's; bf16 keeps
     * fp32's range, so it is C-ORD-01's, not C-PRC-04's */
    CU_ASSERT(kcs_sweep_ops_counted(prc04, kernel(KCS_OP_REDUCE_SUM, "defect:daz", NULL, 1)));
    CU_ASSERT(kcs_sweep_ops_counted(prc04, kernel(KCS_OP_REDUCE_SUM, "own", "fp16", 1)));
    CU_ASSERT(!kcs_sweep_ops_counted(prc04, kernel(KCS_OP_REDUCE_SUM, "own", "bf16", 1)));
    CU_ASSERT(kcs_sweep_ops_counted(ord01, kernel(KCS_OP_REDUCE_SUM, "own", "bf16", 1)));
    /* ids match whole: C-PRC-0 is no C-PRC-02 */
    kcs_contract fake = *prc02;
    snprintf(fake.id, sizeof fake.id, "C-PRC-0");
    CU_ASSERT(!kcs_sweep_ops_counted(&fake, kernel(KCS_OP_SOFTMAX, "own", "bf16", 1)));
}

/* defect:daz / defect:ftz on reduce_sum rows: DAZ drops subnormal operands,
 * FTZ subnormal partial sums; both keep normal sums. */
static double row_sum(const kcs_backend_ops *cpu, kcs_backend_ctx *ctx, const char *variant,
                      const double *x, int64_t k)
{
    kcs_call c = ut_fp32_call(KCS_OP_REDUCE_SUM, 1, 1, k, KCS_FMT_FP32);
    c.variant = variant;
    c.in[0] = x;
    c.in_len[0] = (size_t)k;
    double y = NAN;
    c.out = &y;
    c.out_len = 1;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(cpu->run(ctx, &c, &err), 0);
    return y;
}

static void test_daz_ftz(void)
{
    const kcs_backend_ops *cpu = kcs_backend_find("cpu");
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    CU_ASSERT_FATAL(cpu && cpu->open(0, NULL, &ctx, &err) == 0);
    double tiny = ldexp(1.0, -127), tinier = ldexp(1.0, -128), mn = FLT_MIN;
    const double sub[] = {tiny, tinier};    /* every operand and partial sum subnormal */
    const double mixed[] = {mn, tiny};      /* a normal operand, a normal sum */
    const double normal[] = {1.5, -0.25, 3.0};
    CU_ASSERT_EQUAL(row_sum(cpu, ctx, "own", sub, 2), tiny + tinier);
    CU_ASSERT_EQUAL(row_sum(cpu, ctx, "defect:daz", sub, 2), 0.0);
    CU_ASSERT_EQUAL(row_sum(cpu, ctx, "defect:ftz", sub, 2), 0.0);
    CU_ASSERT_EQUAL(row_sum(cpu, ctx, "defect:daz", mixed, 2), mn);      /* tiny read as 0 */
    CU_ASSERT_EQUAL(row_sum(cpu, ctx, "defect:ftz", mixed, 2), mn + tiny); /* kept: sum normal */
    for (int d = 0; d < 2; d++)
        CU_ASSERT_EQUAL(row_sum(cpu, ctx, d ? "defect:ftz" : "defect:daz", normal, 3), 4.25);
    cpu->close(ctx);
}

static const ut_test tests[] = {
    {"softmax and layernorm points span k", test_points_rows},
    {"attention points: the n x k grid", test_points_attention},
    {"which contracts the ops sweep serves", test_points_which},
    {"catalogues and their targets", test_catalogues},
    {"defect:daz and defect:ftz row sums", test_daz_ftz},
};

UT_MAIN_FIXTURE("sweep_ops", shipped_contracts_load, shipped_contracts_free, tests)
