/* kcs probe's corner features (src/run/probe_features.c), by round trip:
 * every profile row, and every row with one feature flipped, is probed
 * through its own emulation; each feature the probe measures must be the
 * row's, none may come out inconsistent, and each value of each feature
 * must be recovered somewhere (so no feature is only ever "n/a"). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "probe.h"
#include "probe_features.h"
#include "unit_helpers.h"

/* A backend whose gemm is kcs_emulated_gemm with a row given here (rows
 * that the table does not hold: a feature flipped). */
static kcs_profile_params fake_row;

static int fake_run(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    if (c->op != KCS_OP_GEMM || c->dtype_in != fake_row.in)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "fake: gemm in %s only",
                        kcs_format_name(fake_row.in));
    if (kcs_emulated_gemm(&fake_row, c->m, c->n, c->k, c->in[0], c->in[1], c->in[2], c->out))
        return kcs_fail(err, KCS_E_NOMEM, "fake: out of memory");
    return 0;
}

static const kcs_backend_ops fake_ops = {.abi = KCS_BACKEND_ABI, .name = "fake", .run = fake_run};

/* [feature][value]: recovered at least once */
static bool seen[KCS_PF_COUNT][2];
static long measured, rows_probed;

static void check_row(const kcs_profile_params *row, const char *what)
{
    fake_row = *row;
    kcs_error err = {0};
    kcs_probe_result r;
    kcs_probe_features f;
    kcs_backend_ctx *ctx = (kcs_backend_ctx *)&fake_row; /* never dereferenced */
    int rc = kcs_probe_run(&fake_ops, ctx, row->in, &r, &err);
    if (rc == 0)
        rc = kcs_probe_features_run(&fake_ops, ctx, &r, &f, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc) {
        printf("  %s %s (%s): %s\n", row->profile, kcs_format_name(row->in), what, err.msg);
        return;
    }
    rows_probed++;
    char line[256];
    size_t len = 0;
    for (int i = 0; i < KCS_PF_COUNT; i++) {
        len += (size_t)snprintf(line + len, sizeof line - len, " %s=%s",
                                kcs_probe_feature_name((kcs_probe_feature)i),
                                kcs_probe_feature_value_str(&f, (kcs_probe_feature)i));
        CU_ASSERT(f.st[i] != KCS_PROBE_INCONSISTENT);
        if (f.st[i] != KCS_PROBE_EXACT)
            continue;
        int want = kcs_probe_feature_of_row(row, (kcs_probe_feature)i);
        measured++;
        if (f.value[i] != want) {
            printf("  %s %s (%s): %s measured %s\n", row->profile, kcs_format_name(row->in), what,
                   kcs_probe_feature_name((kcs_probe_feature)i),
                   kcs_probe_feature_value_str(&f, (kcs_probe_feature)i));
            CU_FAIL("feature not recovered");
        } else if (want >= 0 && want < 2) {
            seen[i][want] = true;
        }
    }
    printf("  %-20s %-13s %-22s%s\n", row->profile, kcs_format_name(row->in), what, line);
}

static void test_round_trip(void)
{
    const kcs_profile_params *rows;
    int n = 0;
    kcs_profile_table(&rows, &n);
    CU_ASSERT_FATAL(n > 0);
    printf("\n");
    for (int i = 0; i < n; i++) {
        check_row(&rows[i], "as in the table");
        kcs_profile_params v = rows[i];
        v.zero_exp = v.zero_exp == KCS_ZEXP_MIN ? KCS_ZEXP_IGNORE : KCS_ZEXP_MIN;
        check_row(&v, "zero_exp flipped");
        v = rows[i];
        v.zero_sign = v.zero_sign == KCS_ZSIGN_SUM ? KCS_ZSIGN_POSITIVE : KCS_ZSIGN_SUM;
        check_row(&v, "zero_sign flipped");
        v = rows[i];
        v.prod_ovf = v.prod_ovf == KCS_POVF_INF ? KCS_POVF_EXACT : KCS_POVF_INF;
        check_row(&v, "prod_ovf flipped");
        if (rows[i].step == KCS_STEP_PAIRWISE) {
            v = rows[i];
            v.inf_path = v.inf_path == KCS_INF_STEP ? KCS_INF_DOUBLE : KCS_INF_STEP;
            check_row(&v, "inf_path flipped");
            v = rows[i];
            v.flush_sign = v.flush_sign == KCS_FSIGN_KEEP ? KCS_FSIGN_POSITIVE : KCS_FSIGN_KEEP;
            check_row(&v, "flush_sign flipped");
        }
    }
    printf("  %ld rows probed, %ld features measured\n", rows_probed, measured);
    for (int i = 0; i < KCS_PF_COUNT; i++)
        for (int v = 0; v < 2; v++)
            if (!seen[i][v]) {
                printf("  %s value %d never recovered\n",
                       kcs_probe_feature_name((kcs_probe_feature)i), v);
                CU_FAIL("a feature value is never recovered");
            }
}

/* The cpu backend serves the table's rows by name: the same verdicts (the
 * first inside an 8×8 tile). */
static void test_cpu_backend(void)
{
    const kcs_backend_ops *ops = kcs_backend_find("cpu");
    CU_ASSERT_FATAL(ops != NULL);
    const struct {
        const char *profile;
        kcs_format in;
    } cases[] = {{"nvidia-h100", KCS_FMT_BF16}, {"amd-mi250", KCS_FMT_BF16},
                 {"amd-mi300", KCS_FMT_BF16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kcs_profile_params *row;
        kcs_error err = {0};
        CU_ASSERT_FATAL(kcs_profile_lookup(cases[i].profile, cases[i].in, &row, &err) == 0);
        kcs_backend_config cfg = {.profile = cases[i].profile};
        kcs_backend_ctx *ctx = NULL;
        CU_ASSERT_FATAL(ops->open(0, &cfg, &ctx, &err) == 0);
        kcs_probe_result r;
        kcs_probe_features f;
        int rc = kcs_probe_run_tile(ops, ctx, cases[i].in, i == 0 ? 8 : 1, &r, &err);
        if (rc == 0)
            rc = kcs_probe_features_run(ops, ctx, &r, &f, &err);
        ops->close(ctx);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        int exact = 0;
        for (int k = 0; k < KCS_PF_COUNT; k++)
            if (f.st[k] == KCS_PROBE_EXACT) {
                exact++;
                CU_ASSERT_EQUAL(f.value[k], kcs_probe_feature_of_row(row, (kcs_probe_feature)k));
            }
        CU_ASSERT(exact >= 2);
    }
}

static const ut_test tests[] = {
    {"features round trip", test_round_trip},
    {"cpu backend", test_cpu_backend},
};

UT_MAIN("probe_features", tests)
