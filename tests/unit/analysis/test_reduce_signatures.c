/* Where outputs differ (kcs_pattern_classify), rank-pair divergence
 * (kcs_reduce_divergence) and the ordering-signature classes
 * (kcs_signatures_case) on hand-built cases whose answers are known by
 * construction. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recompute.h"
#include "reduce.h"
#include "signatures.h"
#include "unit_helpers.h"

static const char *classify(int rows, int cols, int (*differs)(int r, int c))
{
    static char buf[32];
    int n = rows * cols;
    size_t *pos = malloc((size_t)n * sizeof *pos);
    unsigned char *d = malloc((size_t)n);
    for (int i = 0; i < n; i++) {
        pos[i] = (size_t)i;
        d[i] = (unsigned char)differs(i / cols, i % cols);
    }
    kcs_pattern_classify(pos, d, n, rows, cols, buf, sizeof buf);
    free(pos);
    free(d);
    return buf;
}

static int none(int r, int c) { (void)r, (void)c; return 0; }
static int all(int r, int c) { (void)r, (void)c; return 1; }
static int rows_2_5(int r, int c) { (void)c; return r == 2 || r == 5; }
static int col_3(int r, int c) { (void)r; return c == 3; }
static int tile_8(int r, int c) { return r / 8 == 1 && c / 8 == 2; }
static int tile_4(int r, int c) { return (r / 4 + c / 4) % 2 == 0; }
static int diagonal(int r, int c) { return r == c; }

static void test_patterns(void)
{
    CU_ASSERT_STRING_EQUAL(classify(8, 8, none), "none");
    CU_ASSERT_STRING_EQUAL(classify(8, 8, all), "everywhere");
    CU_ASSERT_STRING_EQUAL(classify(8, 8, rows_2_5), "rows");
    CU_ASSERT_STRING_EQUAL(classify(8, 8, col_3), "cols");
    /* one 8x8 tile of a 32x32 output; a 4x4 checkerboard */
    CU_ASSERT_STRING_EQUAL(classify(32, 32, tile_8), "tiles:8");
    CU_ASSERT_STRING_EQUAL(classify(32, 32, tile_4), "tiles:4");
    CU_ASSERT_STRING_EQUAL(classify(16, 16, diagonal), "scattered");
    /* nothing compared */
    char buf[16];
    CU_ASSERT_STRING_EQUAL(kcs_pattern_classify(NULL, NULL, 0, 4, 4, buf, sizeof buf), "-");
}

static void test_sample_index(void)
{
    /* src/run/protocol.c: sample j of n at floor(j * len / n) */
    CU_ASSERT_EQUAL(kcs_sample_index(0, 256, 16), 0);
    CU_ASSERT_EQUAL(kcs_sample_index(5, 256, 16), 80);
    CU_ASSERT_EQUAL(kcs_sample_index(15, 100, 16), 93);
    CU_ASSERT_EQUAL(kcs_sample_index(3, 0, 16), 0);
}

static void mkcase(kcs_case_rec *cs, int64_t m, int64_t n, int64_t k)
{
    memset(cs, 0, sizeof *cs);
    snprintf(cs->contract, sizeof cs->contract, "C-TEST");
    snprintf(cs->op, sizeof cs->op, "gemm");
    snprintf(cs->dtype_in, sizeof cs->dtype_in, "fp32");
    snprintf(cs->dtype_acc, sizeof cs->dtype_acc, "fp32");
    snprintf(cs->dtype_out, sizeof cs->dtype_out, "fp32");
    cs->m = m, cs->n = n, cs->k = k;
}

static void row(kcs_result_rec *x, int rank, int trial, uint64_t digest, const char *verdict)
{
    memset(x, 0, sizeof *x);
    x->rank = rank;
    x->trial = trial;
    snprintf(x->status, sizeof x->status, "ok");
    snprintf(x->verdict, sizeof x->verdict, "%s", verdict);
    x->output_digest = digest;
}

static void test_divergence(void)
{
    kcs_case_rec cs;
    mkcase(&cs, 4, 4, 64);
    enum { NS = 16, NR = 3, T = 2 };
    double s[NR * NS], absref[NS];
    for (int j = 0; j < NS; j++) {
        s[j] = 1.0 + j;                       /* rank 0 */
        s[NS + j] = 1.0 + j;                  /* rank 1: equal */
        s[2 * NS + j] = 1.0 + j + (j / 4 == 2 ? 0x1p-20 : 0.0); /* rank 2: row 2 differs */
        absref[j] = 2.0;
    }
    kcs_result_rec res[NR * T];
    for (int r = 0; r < NR; r++)
        for (int t = 0; t < T; t++)
            row(&res[r * T + t], r, t, r == 2 ? 99 + t : 7 + t, "within_tolerance");
    kcs_divergence_row d[3];
    kcs_reduce_divergence(&cs, res, s, absref, NR, T, NS, d);
    /* pairs in order (0,1), (0,2), (1,2) */
    CU_ASSERT_EQUAL(d[0].rank_a, 0);
    CU_ASSERT_EQUAL(d[0].rank_b, 1);
    CU_ASSERT_TRUE(d[0].identical);
    CU_ASSERT_DOUBLE_EQUAL(d[0].max_abs_diff, 0.0, 0.0);
    CU_ASSERT_STRING_EQUAL(d[0].pattern, "none");
    CU_ASSERT_FALSE(d[1].identical);
    CU_ASSERT_DOUBLE_EQUAL(d[1].max_abs_diff, 0x1p-20, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d[1].max_scaled_diff, 0x1p-21, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d[1].frac_differ, 4.0 / 16.0, 1e-15);
    CU_ASSERT_STRING_EQUAL(d[1].pattern, "rows");
    CU_ASSERT_EQUAL(d[1].n_compared, 16);
    /* the differing values 9..12 lie in [8, 16), where an fp32 ulp is 2^-20 */
    CU_ASSERT_DOUBLE_EQUAL(d[1].max_ulp_diff, 1.0, 0.0);
    /* no absref: no scaled divergence */
    kcs_reduce_divergence(&cs, res, s, NULL, NR, T, NS, d);
    CU_ASSERT_TRUE(isnan(d[1].max_scaled_diff));
}

static void test_signatures(void)
{
    kcs_case_rec cs;
    mkcase(&cs, 4, 4, 64);
    enum { NR = 3, T = 2, NS = 16 };
    kcs_rank_rec ranks[NR];
    memset(ranks, 0, sizeof ranks);
    for (int r = 0; r < NR; r++)
        snprintf(ranks[r].variant, sizeof ranks[r].variant, "impl%d", r);
    double s[NR * NS];
    for (int i = 0; i < NR * NS; i++)
        s[i] = 1.0 + i % NS + (i >= 2 * NS ? 0.5 : 0.0);
    kcs_result_rec res[NR * T];
    /* ranks 0 and 1 agree bitwise on every trial; rank 2 differs */
    for (int r = 0; r < NR; r++)
        for (int t = 0; t < T; t++)
            row(&res[r * T + t], r, t, r == 2 ? 50 + t : 10 + t, "within_tolerance");
    kcs_divergence_row d[3];
    kcs_reduce_divergence(&cs, res, s, NULL, NR, T, NS, d);
    kcs_sig_summary sum;
    CU_ASSERT_EQUAL_FATAL(kcs_sig_summary_init(&sum, NR), 0);
    kcs_signature_row sig[NR];
    /* oracle protocol: everyone differs from someone -> schedule-variant,
     * determinism unmeasured; ranks 0, 1 share a class */
    kcs_signatures_case(&cs, 1, KCS_PROTO_ORACLE, res, T, d, ranks, NR, sig, &sum);
    for (int r = 0; r < NR; r++) {
        CU_ASSERT_STRING_EQUAL(sig[r].klass, "schedule-variant");
        CU_ASSERT_STRING_EQUAL(sig[r].determinism, "unmeasured");
        CU_ASSERT_EQUAL(sig[r].n_classes, 2);
    }
    CU_ASSERT_EQUAL(sig[1].bitwise_class, 0);
    CU_ASSERT_EQUAL(sig[2].bitwise_class, 2);
    CU_ASSERT_EQUAL(sig[2].reference_rank, 0); /* the modal output, shared by 0 and 1 */
    CU_ASSERT_DOUBLE_EQUAL(sig[2].frac_differ, 1.0, 0.0);
    CU_ASSERT_STRING_EQUAL(sig[2].pattern, "everywhere");
    CU_ASSERT_DOUBLE_EQUAL(sig[0].frac_differ, 0.0, 0.0);
    /* repeat protocol, rank 2 failed it: rank 2 is nondeterministic; 0 and
     * 1 only differ from an unstable rank -> bitwise-deterministic */
    row(&res[2 * T + 1], 2, 1, 51, "violation");
    kcs_signatures_case(&cs, 1, KCS_PROTO_REPEAT, res, T, d, ranks, NR, sig, &sum);
    CU_ASSERT_STRING_EQUAL(sig[2].klass, "run-to-run-nondeterministic");
    CU_ASSERT_STRING_EQUAL(sig[2].determinism, "nondeterministic");
    CU_ASSERT_STRING_EQUAL(sig[0].klass, "bitwise-deterministic");
    CU_ASSERT_STRING_EQUAL(sig[1].determinism, "deterministic");
    /* batch invariance failed by rank 1 */
    row(&res[2 * T + 1], 2, 1, 51, "within_tolerance");
    row(&res[1 * T + 0], 1, 0, 10, "violation");
    kcs_signatures_case(&cs, 1, KCS_PROTO_BATCH_INVARIANCE, res, T, d, ranks, NR, sig, &sum);
    CU_ASSERT_STRING_EQUAL(sig[1].klass, "batch-variant");
    CU_ASSERT_STRING_EQUAL(sig[0].klass, "schedule-variant");
    /* the summary counted per rank and class */
    CU_ASSERT_EQUAL(sum.count[2 * KCS_SIG_N + KCS_SIG_NONDET], 1);
    CU_ASSERT_EQUAL(sum.count[0 * KCS_SIG_N + KCS_SIG_SCHEDULE], 2);
    CU_ASSERT_EQUAL(sum.repeat_cases[2], 1);
    CU_ASSERT_EQUAL(sum.repeat_fail[2], 1);
    CU_ASSERT_EQUAL(sum.batch_fail[1], 1);
    /* a rank that ran nothing */
    for (int t = 0; t < T; t++) {
        memset(&res[1 * T + t], 0, sizeof res[0]);
        snprintf(res[1 * T + t].status, sizeof res[0].status, "skipped");
    }
    kcs_signatures_case(&cs, 1, KCS_PROTO_ORACLE, res, T, d, ranks, NR, sig, &sum);
    CU_ASSERT_STRING_EQUAL(sig[1].klass, "not-run");
    CU_ASSERT_EQUAL(sig[0].n_classes, 2);
    kcs_sig_summary_free(&sum);
}

static const ut_test tests[] = {
    {"difference patterns", test_patterns},
    {"sample positions", test_sample_index},
    {"rank-pair divergence", test_divergence},
    {"ordering-signature classes", test_signatures},
};

UT_MAIN("reduce_signatures", tests)
