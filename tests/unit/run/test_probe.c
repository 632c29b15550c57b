/* kcs probe (src/run/probe.c): round trip against every row of the emulated
 * profile table (cpu backend opened with that profile), against models with
 * parameters the table does not hold, against hand-written fp32 fma chains,
 * against black boxes that follow no model (the probe must say
 * "inconsistent", not guess), and against the native OpenBLAS path; the
 * OpenCL backend is probed when it is compiled in and has a device.
 * Expected values come from the table rows and from the definitions in
 * shared/PROFILES.md, never from the probe's own output. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "probe.h"
#include "unit_helpers.h"

static kcs_probe_step step_of(kcs_step_kind k)
{
    return k == KCS_STEP_LATE_C ? KCS_PROBE_STEP_LATE_C
           : k == KCS_STEP_PAIRWISE ? KCS_PROBE_STEP_PAIRWISE : KCS_PROBE_STEP_GLOBAL;
}

static void show(const char *who, const kcs_probe_result *r)
{
    char a[48], f[48], n[48], wa[48], wc[48];
    printf("  %-22s %-9s acc %-3s F %-5s neab %-5s widths %s/%s %-8s %-4s flush %-3s -> %s/%s "
           "(%d diff%s%s)\n",
           who, kcs_format_name(r->in), kcs_probe_value_str(&r->acc_bits, a, sizeof a),
           kcs_probe_value_str(&r->F, f, sizeof f), kcs_probe_value_str(&r->neab, n, sizeof n),
           kcs_probe_value_str(&r->align_bits, wa, sizeof wa),
           kcs_probe_value_str(&r->c_bits, wc, sizeof wc),
           kcs_probe_step_name(r->step), kcs_probe_rounding_str(r),
           r->flush_st == KCS_PROBE_EXACT ? (r->flush ? "yes" : "no")
                                          : kcs_probe_status_name(r->flush_st),
           r->nearest ? r->nearest->profile : "-",
           r->nearest ? kcs_format_name(r->nearest->in) : "-", r->nearest_diffs,
           r->nearest_diffs ? ": " : "", r->nearest_diff);
    if (r->notes[0])
        printf("  %-22s notes: %s\n", "", r->notes);
}

/* The parameters of row p, as the probe must recover them. */
static void assert_recovers(const kcs_probe_result *r, const kcs_profile_params *p)
{
    CU_ASSERT_EQUAL(r->F.st, KCS_PROBE_EXACT);
    CU_ASSERT_EQUAL(r->F.lo, p->F);
    CU_ASSERT_EQUAL(r->F.hi, p->F);
    CU_ASSERT_EQUAL(r->step_st, KCS_PROBE_EXACT);
    CU_ASSERT_EQUAL(r->step, step_of(p->step));
    if (p->step == KCS_STEP_PAIRWISE) {
        CU_ASSERT_EQUAL(r->neab.st, KCS_PROBE_NA); /* PROFILES.md: "—" */
        CU_ASSERT_EQUAL(r->align_bits.st, KCS_PROBE_NA);
        CU_ASSERT_EQUAL(r->c_bits.st, KCS_PROBE_NA);
    } else {
        CU_ASSERT_EQUAL(r->neab.st, KCS_PROBE_EXACT);
        CU_ASSERT_EQUAL(r->neab.lo, p->neab); /* KCS_NEAB_INF == KCS_PROBE_INF */
        CU_ASSERT_EQUAL(r->neab.hi, p->neab);
        /* widths, measured apart: a product and c each keep 23 + neab
         * fraction bits below the step's largest exponent in the model */
        int w = p->neab == KCS_NEAB_INF ? KCS_PROBE_INF : 23 + p->neab;
        CU_ASSERT_EQUAL(r->align_bits.st, KCS_PROBE_EXACT);
        CU_ASSERT_EQUAL(r->align_bits.lo, w);
        CU_ASSERT_EQUAL(r->align_bits.hi, w);
        CU_ASSERT_EQUAL(r->c_bits.st, KCS_PROBE_EXACT);
        CU_ASSERT_EQUAL(r->c_bits.lo, w);
        CU_ASSERT_EQUAL(r->c_bits.hi, w);
    }
    /* d keeps 24 + min(neab, 0) bits; pairwise adds in fp32 */
    int bits = p->step == KCS_STEP_PAIRWISE ? 24 : kcs_profile_out_bits(p);
    CU_ASSERT_EQUAL(r->acc_bits.st, KCS_PROBE_EXACT);
    CU_ASSERT_EQUAL(r->acc_bits.lo, bits);
    CU_ASSERT_EQUAL(r->rounding_st, KCS_PROBE_EXACT);
    CU_ASSERT_EQUAL(r->rounding, p->rounding);
    CU_ASSERT_EQUAL(r->flush_st, KCS_PROBE_EXACT);
    CU_ASSERT_EQUAL(r->flush, p->flush);
    if (p->flush) /* pairwise flushes subnormal inputs and c in every format */
        CU_ASSERT(r->sub_inputs == KCS_PROBE_SUB_FLUSHED && r->sub_c == KCS_PROBE_SUB_FLUSHED);
    /* late c keeps 7 more product bits when c dominates; global none */
    if (p->step == KCS_STEP_LATE_C) {
        CU_ASSERT_EQUAL(r->late_extra_bits, 7);
        /* the product sum under a larger c: 23 + neab + 7 (CDNA3: 31) */
        kcs_probe_value u = kcs_probe_sum_under_c_bits(r);
        CU_ASSERT(u.st == KCS_PROBE_EXACT && u.lo == 30 + p->neab);
    }
    if (p->step == KCS_STEP_GLOBAL && r->late_extra_bits >= 0)
        CU_ASSERT_EQUAL(r->late_extra_bits, 0);
}

static bool same_params(const kcs_profile_params *x, const kcs_profile_params *y)
{
    return x->in == y->in && x->F == y->F && x->step == y->step &&
           x->rounding == y->rounding && x->flush == y->flush &&
           (x->step == KCS_STEP_PAIRWISE || x->neab == y->neab);
}

static void test_profiles_round_trip(void)
{
    const kcs_profile_params *rows;
    int n = 0;
    kcs_profile_table(&rows, &n);
    CU_ASSERT_FATAL(n > 0);
    const kcs_backend_ops *ops = kcs_backend_find("cpu");
    CU_ASSERT_FATAL(ops != NULL);
    printf("\n");
    for (int i = 0; i < n; i++) {
        kcs_backend_config cfg = {.profile = rows[i].profile};
        kcs_backend_ctx *ctx = NULL;
        kcs_error err = {0};
        kcs_probe_result r;
        CU_ASSERT_FATAL(ops->open(0, &cfg, &ctx, &err) == 0);
        int rc = kcs_probe_run(ops, ctx, rows[i].in, &r, &err);
        ops->close(ctx);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc) {
            printf("  %s %s: %s\n", rows[i].profile, kcs_format_name(rows[i].in), err.msg);
            continue;
        }
        show(rows[i].profile, &r);
        if (rows[i].step == KCS_STEP_PAIRWISE && rows[i].F == 2) {
            /* A pair (amd-mi100-pairwise bf16, amd-mi250-pairs) is one fp32
             * addition of two exact products before c: the probe's vectors
             * cannot tell it from a global step, and it must say so (neab
             * inconsistent) rather than name a structure. Recovering pairs
             * is left to the probe (docs/profiles.md). */
            CU_ASSERT_EQUAL(r.F.st, KCS_PROBE_EXACT);
            CU_ASSERT_EQUAL(r.F.lo, 2);
            CU_ASSERT_EQUAL(r.neab.st, KCS_PROBE_INCONSISTENT);
            CU_ASSERT(r.nearest_diffs > 0);
            continue;
        }
        if (rows[i].acc_f16) {
            /* The probe's vectors measure fp32 accumulators; an fp16 one
             * must not pass for any row (recovering it is left to the probe) */
            CU_ASSERT(r.nearest_diffs > 0);
            continue;
        }
        if (rows[i].halves == 2) {
            /* CDNA3 fp8 aligns even and odd products apart: no block size
             * explains the probe's c series, and it must say so */
            CU_ASSERT_EQUAL(r.F.st, KCS_PROBE_INCONSISTENT);
            CU_ASSERT_EQUAL(r.step, KCS_PROBE_STEP_UNKNOWN);
            CU_ASSERT_EQUAL(r.rounding, rows[i].rounding);
            continue;
        }
        assert_recovers(&r, &rows[i]);
        /* nearest: this row, or a row with identical parameters */
        CU_ASSERT_FATAL(r.nearest != NULL);
        CU_ASSERT_EQUAL(r.nearest_diffs, 0);
        CU_ASSERT(same_params(r.nearest, &rows[i]));
        CU_ASSERT(!r.nearest_cross_format);
    }
}

/* The vectors embedded in a tile (kcs_probe_run_tile): an emulated profile
 * computes every output alone, so an 8×8 tile must give every row's
 * verdict of the 1×1 probe; tiles outside 1..KCS_PROBE_TILE_MAX are
 * refused. */
static void test_tiles(void)
{
    const kcs_profile_params *rows;
    int n = 0;
    kcs_profile_table(&rows, &n);
    const kcs_backend_ops *ops = kcs_backend_find("cpu");
    CU_ASSERT_FATAL(ops != NULL && n > 0);
    for (int i = 0; i < n; i++) {
        kcs_backend_config cfg = {.profile = rows[i].profile};
        kcs_backend_ctx *ctx = NULL;
        kcs_error err = {0};
        kcs_probe_result r1, r8;
        CU_ASSERT_FATAL(ops->open(0, &cfg, &ctx, &err) == 0);
        int rc1 = kcs_probe_run(ops, ctx, rows[i].in, &r1, &err);
        int rc8 = kcs_probe_run_tile(ops, ctx, rows[i].in, 8, &r8, &err);
        ops->close(ctx);
        CU_ASSERT(rc1 == 0 && rc8 == 0);
        if (rc1 || rc8)
            continue;
        CU_ASSERT_EQUAL(r1.tile, 1);
        CU_ASSERT_EQUAL(r8.tile, 8);
        CU_ASSERT(memcmp(&r1.acc_bits, &r8.acc_bits, sizeof r1.acc_bits) == 0);
        CU_ASSERT(memcmp(&r1.F, &r8.F, sizeof r1.F) == 0);
        CU_ASSERT(memcmp(&r1.neab, &r8.neab, sizeof r1.neab) == 0);
        CU_ASSERT(r1.step == r8.step && r1.step_st == r8.step_st);
        CU_ASSERT(r1.rounding_st == r8.rounding_st && r1.round_modes == r8.round_modes);
        CU_ASSERT(r1.sub_inputs == r8.sub_inputs && r1.sub_products == r8.sub_products &&
                  r1.sub_c == r8.sub_c && r1.sub_results == r8.sub_results);
        CU_ASSERT(r1.flush == r8.flush && r1.nearest == r8.nearest);
        CU_ASSERT_EQUAL(r1.calls, r8.calls);
    }
    kcs_backend_config cfg = {0};
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    kcs_probe_result r;
    CU_ASSERT_FATAL(ops->open(0, &cfg, &ctx, &err) == 0);
    CU_ASSERT_EQUAL(kcs_probe_run_tile(ops, ctx, KCS_FMT_FP32, 0, &r, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_probe_run_tile(ops, ctx, KCS_FMT_FP32, KCS_PROBE_TILE_MAX + 1, &r, &err),
                    KCS_E_INVAL);
    ops->close(ctx);
}

/* ---- black boxes of our own ------------------------------------------------ */

enum { BOX_MODEL, BOX_FMA_FROM_C, BOX_FMA_C_LAST, BOX_SIGN_ROUNDING, BOX_SIGN_F };

typedef struct box {
    int kind;
    kcs_profile_params p, q; /* q: the second model of the sign-dependent boxes */
} box;

static int box_run(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    const box *bx = (const box *)(const void *)ctx;
    if (c->op != KCS_OP_GEMM || c->m != 1 || c->n != 1)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "box: 1x1 gemm only");
    const double *A = c->in[0], *B = c->in[1], *C = c->in[2];
    double d1 = 0, d2 = 0;
    float acc;
    switch (bx->kind) {
    case BOX_FMA_FROM_C: /* one fp32 fma per product, starting from c */
        acc = C ? (float)C[0] : 0.0f;
        for (int64_t i = 0; i < c->k; i++)
            acc = fmaf((float)A[i], (float)B[i], acc);
        c->out[0] = acc;
        return 0;
    case BOX_FMA_C_LAST: /* fma chain from 0, c added once at the end */
        acc = 0.0f;
        for (int64_t i = 0; i < c->k; i++)
            acc = fmaf((float)A[i], (float)B[i], acc);
        c->out[0] = (double)(acc + (C ? (float)C[0] : 0.0f));
        return 0;
    default:
        break;
    }
    const kcs_profile_params *p = &bx->p;
    if (bx->kind == BOX_SIGN_F && A[0] < 0)
        p = &bx->q;
    if (kcs_emulated_gemm(p, 1, 1, c->k, A, B, C, &d1) ||
        kcs_emulated_gemm(&bx->q, 1, 1, c->k, A, B, C, &d2))
        return kcs_fail(err, KCS_E_NOMEM, "box: out of memory");
    /* sign rounding: p (rz) for positive results, q (rne) for negative ones */
    c->out[0] = bx->kind == BOX_SIGN_ROUNDING && d2 < 0 ? d2 : d1;
    return 0;
}

static int box_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    (void)out, (void)max, (void)err;
    *count_p = 1;
    return 0;
}

static int box_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)ctx, (void)err;
    memset(info, 0, sizeof *info);
    return 0;
}

static void box_close(kcs_backend_ctx *ctx) { (void)ctx; }

static const kcs_backend_ops box_ops = {
    .abi = KCS_BACKEND_ABI, .name = "box", .discover = box_discover, .open = NULL,
    .run = box_run, .describe = box_describe, .close = box_close,
};

static int probe_box(const box *bx, kcs_format in, kcs_probe_result *r, const char *who)
{
    kcs_error err = {0};
    int rc = kcs_probe_run(&box_ops, (kcs_backend_ctx *)(void *)bx, in, r, &err);
    if (rc)
        printf("  %s: %s\n", who, err.msg);
    else
        show(who, r);
    return rc;
}

#define PARAMS(fmt, f, nb, st, rnd, fl) \
    {.profile = "synthetic", .in = fmt, .F = f, .neab = nb, .step = st, .rounding = rnd, \
     .flush = fl, .source = "test"}

/* Parameters no profile has: the probe reads the model, not the table. */
static void test_off_table_models(void)
{
    static const kcs_profile_params ps[] = {
        PARAMS(KCS_FMT_FP16, 6, 3, KCS_STEP_GLOBAL, KCS_RNE, false),
        PARAMS(KCS_FMT_BF16, 3, -4, KCS_STEP_GLOBAL, KCS_RZ, false),
        PARAMS(KCS_FMT_FP8_E5M2, 5, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RZ, false),
        PARAMS(KCS_FMT_FP16, 16, 2, KCS_STEP_LATE_C, KCS_RNE, false),
        PARAMS(KCS_FMT_TF32, 2, 0, KCS_STEP_LATE_C, KCS_RNE, false),
        PARAMS(KCS_FMT_BF16, 8, 0, KCS_STEP_PAIRWISE, KCS_RNE, true),
        PARAMS(KCS_FMT_FP16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true),
    };
    printf("\n");
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        box bx = {.kind = BOX_MODEL, .p = ps[i], .q = ps[i]};
        kcs_probe_result r;
        char who[32];
        snprintf(who, sizeof who, "model %zu", i);
        CU_ASSERT_EQUAL_FATAL(probe_box(&bx, ps[i].in, &r, who), 0);
        assert_recovers(&r, &ps[i]);
        /* the last one is amd-mi250 fp16; the others are in no row */
        CU_ASSERT_EQUAL(r.nearest_diffs == 0, i + 1 == sizeof ps / sizeof ps[0]);
    }
}

/* fp32 fma chains. From c: global alignment with F = 1 and no truncation
 * (the 48-bit product enters each fma exactly); c last: c is added after
 * the chain, so no F explains the c series. */
static void test_fma_chains(void)
{
    box from_c = {.kind = BOX_FMA_FROM_C}, last = {.kind = BOX_FMA_C_LAST};
    kcs_probe_result r;
    printf("\n");
    CU_ASSERT_EQUAL_FATAL(probe_box(&from_c, KCS_FMT_FP32, &r, "fma chain from c"), 0);
    CU_ASSERT(r.F.st == KCS_PROBE_EXACT && r.F.lo == 1);
    CU_ASSERT(r.step == KCS_PROBE_STEP_GLOBAL && r.step_st == KCS_PROBE_EXACT);
    CU_ASSERT(r.neab.lo == 2 * 24 - 2 - 23 && r.neab.hi == KCS_PROBE_INF);
    CU_ASSERT(r.rounding_st == KCS_PROBE_EXACT && r.rounding == KCS_RNE);
    CU_ASSERT(r.acc_bits.lo == 24 && r.flush_st == KCS_PROBE_EXACT && !r.flush);
    /* the whole 48-bit product survives: at least 46 fraction bits; c is the
     * chain's running value, no block addend */
    CU_ASSERT(r.align_bits.st == KCS_PROBE_RANGE && r.align_bits.lo == 2 * 24 - 2 &&
              r.align_bits.hi == KCS_PROBE_INF);
    CU_ASSERT_EQUAL(r.c_bits.st, KCS_PROBE_NA);
    CU_ASSERT(r.nearest_cross_format); /* no profile takes fp32 inputs */
    CU_ASSERT_EQUAL_FATAL(probe_box(&last, KCS_FMT_FP32, &r, "fma chain, c last"), 0);
    CU_ASSERT(r.F.st == KCS_PROBE_EXACT && r.F.lo == 1);
    CU_ASSERT(r.step == KCS_PROBE_STEP_C_LAST && r.step_st == KCS_PROBE_EXACT);
    CU_ASSERT(r.neab.lo == 2 * 24 - 2 - 23 && r.neab.hi == KCS_PROBE_INF);
    CU_ASSERT(r.rounding_st == KCS_PROBE_EXACT && r.rounding == KCS_RNE);
}

/* Boxes that follow no model must be reported inconsistent, not guessed. */
static void test_inconsistent_boxes(void)
{
    const kcs_profile_params *v100, *a100;
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_profile_lookup("nvidia-v100", KCS_FMT_FP16, &v100, &err) == 0);
    CU_ASSERT_FATAL(kcs_profile_lookup("nvidia-a100", KCS_FMT_FP16, &a100, &err) == 0);
    kcs_probe_result r;
    printf("\n");
    /* rz for positive results, rne for negative ones (same F and neab) */
    box sr = {.kind = BOX_SIGN_ROUNDING, .p = *v100, .q = *v100};
    sr.q.rounding = KCS_RNE;
    CU_ASSERT_EQUAL_FATAL(probe_box(&sr, KCS_FMT_FP16, &r, "sign-dependent rounding"), 0);
    CU_ASSERT_EQUAL(r.rounding_st, KCS_PROBE_INCONSISTENT);
    CU_ASSERT(r.nearest_diffs >= 1);
    /* F = 4 when the first product is positive, 8 when negative */
    box sf = {.kind = BOX_SIGN_F, .p = *v100, .q = *a100};
    sf.q.neab = v100->neab;
    CU_ASSERT_EQUAL_FATAL(probe_box(&sf, KCS_FMT_FP16, &r, "sign-dependent F"), 0);
    CU_ASSERT_EQUAL(r.F.st, KCS_PROBE_INCONSISTENT);
    CU_ASSERT(r.nearest_diffs >= 1);
}

/* Native OpenBLAS sgemm: fp32 with round to nearest even, no truncation of
 * any term, subnormals kept (no FTZ/DAZ on the host). How the products are
 * grouped is what the probe sees; it must at least be consistent. */
static void test_native_cpu(void)
{
    const kcs_backend_ops *ops = kcs_backend_find("cpu");
    CU_ASSERT_FATAL(ops != NULL);
    kcs_backend_config cfg = {0};
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    kcs_probe_result r;
    CU_ASSERT_FATAL(ops->open(0, &cfg, &ctx, &err) == 0);
    int rc = kcs_probe_run(ops, ctx, KCS_FMT_FP32, &r, &err);
    ops->close(ctx);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    printf("\n");
    show("cpu native (OpenBLAS)", &r);
    CU_ASSERT(r.acc_bits.st == KCS_PROBE_EXACT && r.acc_bits.lo == 24);
    CU_ASSERT(r.rounding_st == KCS_PROBE_EXACT && r.rounding == KCS_RNE);
    CU_ASSERT(r.neab.st != KCS_PROBE_INCONSISTENT && r.neab.hi == KCS_PROBE_INF);
    CU_ASSERT(r.flush_st == KCS_PROBE_EXACT && !r.flush);
    CU_ASSERT(r.sub_inputs == KCS_PROBE_SUB_KEPT && r.sub_products == KCS_PROBE_SUB_KEPT);
    CU_ASSERT(r.F.st != KCS_PROBE_INCONSISTENT && r.step_st != KCS_PROBE_INCONSISTENT);
    CU_ASSERT(r.nearest != NULL && r.nearest_cross_format);
}

static void test_opencl(void)
{
    const kcs_backend_ops *ops = kcs_backend_find("opencl");
    kcs_backend_config cfg = {0};
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    if (!ops || ops->open(0, &cfg, &ctx, &err) != 0) {
        printf("\n  opencl: not probed (%s)\n", ops ? err.msg : "not compiled in");
        return;
    }
    kcs_probe_result r;
    int rc = kcs_probe_run(ops, ctx, KCS_FMT_FP32, &r, &err);
    ops->close(ctx);
    printf("\n");
    if (rc)
        printf("  opencl fp32: %s\n", err.msg);
    else
        show("opencl device 0", &r);
    CU_ASSERT_EQUAL(rc, 0);
}

/* kcs_probe_compare on results built by hand from the table's rows. */
static void test_compare(void)
{
    const kcs_profile_params *v100, *mi100, *mi250;
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_profile_lookup("nvidia-v100", KCS_FMT_FP16, &v100, &err) == 0);
    CU_ASSERT_FATAL(kcs_profile_lookup("amd-mi100", KCS_FMT_FP16, &mi100, &err) == 0);
    CU_ASSERT_FATAL(kcs_profile_lookup("amd-mi250", KCS_FMT_FP16, &mi250, &err) == 0);
    kcs_probe_result r;
    memset(&r, 0, sizeof r);
    r.in = KCS_FMT_FP16;
    r.F = (kcs_probe_value){KCS_PROBE_EXACT, 4, 4};
    r.neab = (kcs_probe_value){KCS_PROBE_EXACT, 0, 0};
    r.step = KCS_PROBE_STEP_GLOBAL;
    r.rounding = KCS_RZ;
    r.flush_st = KCS_PROBE_EXACT;
    char diff[96];
    CU_ASSERT_EQUAL(kcs_probe_compare(&r, v100, diff, sizeof diff), 0);
    kcs_probe_nearest(&r);
    CU_ASSERT(r.nearest == v100 && r.nearest_diffs == 0);
    /* v100 vs mi100 (fp16): neab 0 vs inf, rz vs rne */
    CU_ASSERT_EQUAL(kcs_probe_compare(&r, mi100, diff, sizeof diff), 2);
    CU_ASSERT_STRING_EQUAL(diff, "neab,rounding");
    /* an unbounded neab range contains inf */
    r.neab = (kcs_probe_value){KCS_PROBE_RANGE, 23, KCS_PROBE_INF};
    r.rounding = KCS_RNE;
    CU_ASSERT_EQUAL(kcs_probe_compare(&r, mi100, diff, sizeof diff), 0);
    CU_ASSERT_EQUAL(kcs_probe_compare(&r, v100, diff, sizeof diff), 2);
    /* pairwise vs pairwise: neab is not compared; flush is */
    r.step = KCS_PROBE_STEP_PAIRWISE;
    r.neab.st = KCS_PROBE_NA;
    CU_ASSERT_EQUAL(kcs_probe_compare(&r, mi250, diff, sizeof diff), 1);
    CU_ASSERT_STRING_EQUAL(diff, "flush");
    r.rounding_st = KCS_PROBE_INCONSISTENT;
    CU_ASSERT_EQUAL(kcs_probe_compare(&r, mi250, diff, sizeof diff), 2);
}

/* Library paths probed end to end (docs/profiles.md, "Widths"), on
 * nvidia-h100 fp8 e4m3 (F = 32, 13 fraction bits, 14-bit RZ output): what
 * the model of each path implies, derived from its definition:
 *  - promote=64: every 64 products leave the unit (its 13-bit alignment
 *    inside) and enter an fp32 register by a round-to-nearest add, C its
 *    starting value: blocks of 64, products aligned to 13 bits, c never
 *    truncated, d of 24 bits rounded to nearest;
 *  - splitk=2:unit: each part is the unit itself from 0, and the parts meet
 *    in the unit's accumulator: 13-bit alignment, 14-bit RZ output;
 *  - c=last: the unit from 0, then C in fp32: c added after the product sum
 *    has been rounded, d rounded to nearest with 24 bits. */
static void test_library_paths(void)
{
    const kcs_backend_ops *ops = kcs_backend_find("cpu");
    CU_ASSERT_FATAL(ops != NULL);
    static const char *const specs[] = {"nvidia-h100,promote=64", "nvidia-h100,splitk=2:unit",
                                        "nvidia-h100,c=last"};
    for (int i = 0; i < 3; i++) {
        kcs_backend_config cfg = {.profile = specs[i]};
        kcs_backend_ctx *ctx = NULL;
        kcs_error err = {0};
        kcs_probe_result r;
        CU_ASSERT_FATAL(ops->open(0, &cfg, &ctx, &err) == 0);
        int rc = kcs_probe_run(ops, ctx, KCS_FMT_FP8_E4M3, &r, &err);
        ops->close(ctx);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        show(specs[i], &r);
        if (i == 0) {
            CU_ASSERT(r.F.st == KCS_PROBE_EXACT && r.F.lo == 64);
            CU_ASSERT(r.align_bits.st == KCS_PROBE_EXACT && r.align_bits.lo == 13);
            CU_ASSERT(r.c_bits.st == KCS_PROBE_EXACT && r.c_bits.lo == KCS_PROBE_INF);
        } else if (i == 1) {
            CU_ASSERT(r.F.st == KCS_PROBE_EXACT && r.F.lo == 32);
            CU_ASSERT(r.align_bits.st == KCS_PROBE_EXACT && r.align_bits.lo == 13);
        } else {
            CU_ASSERT(r.F.st == KCS_PROBE_EXACT && r.F.lo == 32);
            CU_ASSERT_EQUAL(r.step, KCS_PROBE_STEP_C_LAST);
        }
        int bits = i == 1 ? 14 : 24;
        CU_ASSERT(r.acc_bits.st == KCS_PROBE_EXACT && r.acc_bits.lo == bits);
        CU_ASSERT(r.rounding_st == KCS_PROBE_EXACT &&
                  r.rounding == (i == 1 ? KCS_RZ : KCS_RNE));
    }
}

static const ut_test tests[] = {
    {"compare", test_compare},
    {"profiles round trip", test_profiles_round_trip},
    {"tiles", test_tiles},
    {"library paths (h100 fp8)", test_library_paths},
    {"off-table models", test_off_table_models},
    {"fma chains", test_fma_chains},
    {"inconsistent boxes", test_inconsistent_boxes},
    {"native cpu", test_native_cpu},
    {"opencl", test_opencl},
};

UT_MAIN("probe", tests)
