/* kcs probe --order round trip (src/run/probe_order.h) on the CPU backend:
 * the tree recovered from every own schedule (sequential, pairwise,
 * blocked:B, splitk:S, atomic) and from every emulated profile row equals
 * the tree the schedule or the block-FMA model prescribes
 * (src/arith/order_expect.h, written from acc.c and PROFILES.md, not from
 * the probe), at k = 8, 64 and 4096 (profiles at 4096: nvidia-v100 here,
 * every row with --slow); gemm outputs in different atomic tiles
 * get their own trees; exact blocks (amd-mi100) are refused, never guessed.
 * With the argument --slow: every profile row at k = 4096 too (ctest
 * slow.order_profiles_4096; ~1 min). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "order_expect.h"
#include "probe_order.h"
#include "unit_helpers.h"

extern const kcs_backend_ops kcs_backend_cpu; /* backends/cpu (no header) */
static int slow;

/* The CPU backend's atomic gemm draws one order per tile of 4 x 16 outputs
 * from this seed: the definition of kcs_cpu_gemm_tile_seed
 * (backends/cpu/cpu.h, which this stage's tests may not include). */
enum { KCS_GEMM_TILE_M = 4, KCS_GEMM_TILE_N = 16 };
static uint64_t kcs_cpu_gemm_tile_seed(uint64_t seed, size_t i, size_t j)
{
    return seed ^ ((uint64_t)(i / KCS_GEMM_TILE_M) << 32) ^ (uint64_t)(j / KCS_GEMM_TILE_N);
}

static char *expected_schedule(const kcs_schedule *s, int k, uint64_t seed)
{
    kcs_otree t;
    kcs_error err = {0};
    if (kcs_order_expect_schedule(s, k, seed, &t, &err))
        return NULL;
    char *x = kcs_otree_str(&t);
    kcs_otree_free(&t);
    return x;
}

static int probe(kcs_backend_ctx *ctx, kcs_op op, const char *variant, kcs_schedule s,
                 kcs_format in, int k, int m, int n, kcs_order_result *r, kcs_error *err)
{
    kcs_order_opts o = {.op = op, .k = k, .m = m, .n = n, .variant = variant, .schedule = s,
                        .in = in, .seed = 12345, .verify = 8};
    return kcs_order_probe(&kcs_backend_cpu, ctx, &o, r, err);
}

static void test_schedules(void)
{
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, NULL, &ctx, &err), 0);
    int ks[] = {8, 64, 4096};
    kcs_schedule sch[] = {{KCS_SCHED_SEQUENTIAL, 0}, {KCS_SCHED_PAIRWISE, 0},
                          {KCS_SCHED_BLOCKED, 3},    {KCS_SCHED_BLOCKED, 64},
                          {KCS_SCHED_SPLITK, 3},     {KCS_SCHED_SPLITK, 4},
                          {KCS_SCHED_ATOMIC, 0}};
    for (int a = 0; a < 3; a++)
        for (size_t b = 0; b < sizeof sch / sizeof *sch; b++) {
            kcs_order_result r;
            char name[32];
            /* k = 4096: one parameter of blocked and splitk (both at 8 and 64) */
            if (ks[a] == 4096 && sch[b].param == 3)
                continue;
            int rc = probe(ctx, KCS_OP_GEMM, "own", sch[b], KCS_FMT_FP32, ks[a], 1, 1, &r, &err);
            CU_ASSERT_EQUAL(rc, 0);
            if (rc) {
                printf("  %s k %d: %s\n", kcs_schedule_str(&sch[b], name, sizeof name), ks[a],
                       err.msg);
                continue;
            }
            char *want = expected_schedule(&sch[b], ks[a], kcs_cpu_gemm_tile_seed(12345, 0, 0));
            CU_ASSERT_EQUAL(r.ntrees, 1);
            CU_ASSERT_PTR_NOT_NULL_FATAL(want);
            CU_ASSERT_STRING_EQUAL(r.trees[0].tree, want);
            CU_ASSERT_EQUAL(r.trees[0].max_fanin, 2);
            printf("  gemm own %-10s k %4d: %6ld calls, %.2f s\n",
                   kcs_schedule_str(&sch[b], name, sizeof name), ks[a], r.calls, r.seconds);
            free(want);
            kcs_order_result_free(&r);
            /* reduce_sum and fp64 gemm sum the same way (atomic: per call seed) */
            if (ks[a] == 64 && sch[b].kind != KCS_SCHED_ATOMIC) {
                want = expected_schedule(&sch[b], 64, 0);
                CU_ASSERT_EQUAL(probe(ctx, KCS_OP_REDUCE_SUM, "own", sch[b], KCS_FMT_FP32, 64, 3,
                                      1, &r, &err), 0);
                CU_ASSERT(r.ntrees == 1 && r.trees[0].nout == 3 &&
                          strcmp(r.trees[0].tree, want) == 0);
                kcs_order_result_free(&r);
                CU_ASSERT_EQUAL(probe(ctx, KCS_OP_GEMM, "own", sch[b], KCS_FMT_FP64, 64, 1, 1, &r,
                                      &err), 0);
                CU_ASSERT(r.ntrees == 1 && strcmp(r.trees[0].tree, want) == 0);
                kcs_order_result_free(&r);
                free(want);
            }
        }
    kcs_backend_cpu.close(ctx);
}

/* Atomic gemm: one random order per tile of KCS_GEMM_TILE_M x _N outputs;
 * 5 x 17 outputs span four tiles, so four trees, each output on its own. */
static void test_atomic_tiles(void)
{
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, NULL, &ctx, &err), 0);
    kcs_order_result r;
    kcs_schedule s = {KCS_SCHED_ATOMIC, 0};
    int m = KCS_GEMM_TILE_M + 1, n = KCS_GEMM_TILE_N + 1;
    CU_ASSERT_EQUAL_FATAL(probe(ctx, KCS_OP_GEMM, "own", s, KCS_FMT_FP32, 64, m, n, &r, &err), 0);
    CU_ASSERT_EQUAL(r.ntrees, 4);
    CU_ASSERT_EQUAL(r.noutputs, m * n);
    int seen = 0;
    for (int t = 0; t < r.ntrees; t++)
        for (int a = 0; a < r.trees[t].nout; a++) {
            int o = r.trees[t].outputs[a];
            char *want = expected_schedule(&s, 64, kcs_cpu_gemm_tile_seed(12345, (size_t)(o / n),
                                                                          (size_t)(o % n)));
            CU_ASSERT_STRING_EQUAL(r.trees[t].tree, want);
            free(want);
            seen++;
        }
    CU_ASSERT_EQUAL(seen, m * n);
    kcs_order_result_free(&r);
    kcs_backend_cpu.close(ctx);
}

/* Whether the input format's range cannot separate +-big from k units in
 * the row's accumulator (24 + neab bits): products span at most
 * 2 (emax - smallest subnormal exponent) bits, and swamping every partial
 * sum of up to k units needs about (24 + neab) + log2 k + 2. There the
 * probe must refuse (no tree fits), never answer a wrong tree. */
static int range_too_narrow(const kcs_profile_params *p, int k)
{
    const kcs_format_info *fi = kcs_format_get(p->in);
    int span = 2 * (fi->emax - (fi->emin - (fi->p - 1)));
    int lg = 0;
    while ((1 << lg) < k)
        lg++;
    int acc = p->neab == KCS_NEAB_INF ? 1000 : 24 + p->neab;
    return span < acc + lg + 2;
}

static void profiles(int k_only)
{
    const kcs_profile_params *rows;
    int nr = 0;
    kcs_profile_table(&rows, &nr);
    int ks[] = {8, 64, 4096};
    for (int i = 0; i < nr; i++) {
        kcs_backend_ctx *ctx = NULL;
        kcs_error err = {0};
        kcs_backend_config cfg = {.profile = rows[i].profile};
        CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, &cfg, &ctx, &err), 0);
        for (int a = 0; a < 3; a++) {
            /* k = 4096: in the quick run, nvidia-v100 (F = 4, global
             * alignment); every row with --slow */
            if (k_only ? ks[a] != k_only
                       : (ks[a] == 4096 && strcmp(rows[i].profile, "nvidia-v100") != 0))
                continue;
            kcs_order_result r;
            kcs_schedule none = {KCS_SCHED_SEQUENTIAL, 0};
            int rc = probe(ctx, KCS_OP_GEMM, "native", none, rows[i].in, ks[a], 1, 1, &r, &err);
            if (rows[i].neab == KCS_NEAB_INF) { /* an exact block swamps nothing */
                CU_ASSERT_EQUAL(rc, KCS_E_DEVICE);
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no tree fits"));
                printf("  %-12s %-9s k %4d: refused (%s)\n", rows[i].profile,
                       kcs_format_name(rows[i].in), ks[a], err.msg);
                continue;
            }
            if (rc && range_too_narrow(&rows[i], ks[a])) {
                CU_ASSERT_EQUAL(rc, KCS_E_DEVICE);
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no tree fits"));
                printf("  %-12s %-9s k %4d: refused, the format's range is too narrow (%s)\n",
                       rows[i].profile, kcs_format_name(rows[i].in), ks[a], err.msg);
                continue;
            }
            if (rc && rows[i].acc_f16) {
                /* an fp16 accumulator cannot hold +-big and k units apart
                 * (its range spans 40 binades): the probe must refuse,
                 * saying why, never return a tree; where it answers
                 * (fp8 inputs at k = 8) the tree is checked below */
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "probe --order"));
                printf("  %-12s %-9s k %4d: refused, fp16 accumulator (%s)\n", rows[i].profile,
                       kcs_format_name(rows[i].in), ks[a], err.msg);
                continue;
            }
            CU_ASSERT_EQUAL(rc, 0);
            if (rc) {
                printf("  %s %s k %d: %s\n", rows[i].profile, kcs_format_name(rows[i].in), ks[a],
                       err.msg);
                continue;
            }
            kcs_otree t;
            CU_ASSERT_EQUAL_FATAL(kcs_order_expect_profile(&rows[i], ks[a], &t, &err), 0);
            char *want = kcs_otree_str(&t);
            CU_ASSERT_EQUAL(r.ntrees, 1);
            CU_ASSERT_STRING_EQUAL(r.trees[0].tree, want);
            CU_ASSERT_EQUAL(r.trees[0].max_fanin, kcs_otree_max_fanin(&t));
            printf("  %-12s %-9s k %4d: fan-in %2d, %6ld calls, %.2f s\n", rows[i].profile,
                   kcs_format_name(rows[i].in), ks[a], r.trees[0].max_fanin, r.calls, r.seconds);
            free(want);
            kcs_otree_free(&t);
            kcs_order_result_free(&r);
        }
        kcs_backend_cpu.close(ctx);
    }
}

static void test_profiles(void)
{
    profiles(0);
}

static void test_profiles_4096(void)
{
    profiles(4096);
}

/* Prediction from a profile's recovered trees: kcs_order_predict_gemm with
 * the block-FMA leaf reproduces the emulated gemm's bits on random inputs
 * (block FMA rows: global alignment, late c). */
static void test_predict_profile(void)
{
    const char *names[][2] = {{"nvidia-h100", "bf16"}, {"nvidia-v100", "fp16"},
                              {"amd-mi300", "fp16"},  {"amd-mi250", "fp16"}};
    for (int c = 0; c < 4; c++) {
        kcs_format in;
        const kcs_profile_params *p;
        kcs_error err = {0};
        CU_ASSERT_EQUAL_FATAL(kcs_format_parse(names[c][1], &in), 0);
        CU_ASSERT_EQUAL_FATAL(kcs_profile_lookup(names[c][0], in, &p, &err), 0);
        kcs_backend_ctx *ctx = NULL;
        kcs_backend_config cfg = {.profile = names[c][0]};
        CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, &cfg, &ctx, &err), 0);
        int m = 3, n = 2, k = 100;
        kcs_order_file f = {.op = KCS_OP_GEMM, .k = k, .m = m, .n = n};
        kcs_schedule none = {KCS_SCHED_SEQUENTIAL, 0};
        CU_ASSERT_EQUAL_FATAL(probe(ctx, KCS_OP_GEMM, "native", none, in, k, m, n, &f.r, &err), 0);
        double A[300], B[200], D[6], P[6];
        uint64_t x = 99 + (uint64_t)c;
        for (int i = 0; i < m * k + k * n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            double v = ((double)(x >> 11) * 0x1.0p-53 - 0.5) * 8.0;
            v = kcs_format_round(in, v, KCS_ROUND_DEFAULT);
            if (i < m * k)
                A[i] = v;
            else
                B[i - m * k] = v;
        }
        CU_ASSERT_EQUAL(kcs_emulated_gemm(p, m, n, k, A, B, NULL, D), 0);
        CU_ASSERT_EQUAL(kcs_order_predict_gemm(&f, KCS_ORDER_LEAF_PROFILE, p, A, B, P, &err), 0);
        int same = 0;
        for (int i = 0; i < m * n; i++)
            same += memcmp(&D[i], &P[i], sizeof D[i]) == 0;
        printf("  %s %s: %d/%d outputs predicted bit for bit from %d tree(s)\n", names[c][0],
               names[c][1], same, m * n, f.r.ntrees);
        CU_ASSERT_EQUAL(same, m * n);
        /* the same tree with fp32 fma leaves is another arithmetic: it must
         * miss (but for amd-mi250, whose leaf arithmetic is fp32 additions
         * of exact fp16 products: the two agree but for flushing, which
         * these normal inputs do not reach) */
        CU_ASSERT_EQUAL(kcs_order_predict_gemm(&f, KCS_ORDER_LEAF_FMA32, NULL, A, B, P, &err), 0);
        int same32 = 0;
        for (int i = 0; i < m * n; i++)
            same32 += memcmp(&D[i], &P[i], sizeof D[i]) == 0;
        if (p->step != KCS_STEP_PAIRWISE)
            CU_ASSERT(same32 < m * n);
        /* a pairwise profile: the order matters; a sequential tree over the
         * same products must miss */
        if (p->step == KCS_STEP_PAIRWISE) {
            kcs_schedule sq = {KCS_SCHED_SEQUENTIAL, 0};
            kcs_order_file g = {.op = KCS_OP_GEMM, .k = k, .m = m, .n = n};
            g.r.ntrees = 1;
            g.r.noutputs = m * n;
            g.r.trees = calloc(1, sizeof *g.r.trees);
            g.r.trees[0].tree = expected_schedule(&sq, k, 0);
            g.r.trees[0].nout = m * n;
            g.r.trees[0].outputs = malloc((size_t)(m * n) * sizeof(int));
            for (int i = 0; i < m * n; i++)
                g.r.trees[0].outputs[i] = i;
            CU_ASSERT_EQUAL(kcs_order_predict_gemm(&g, KCS_ORDER_LEAF_PROFILE, p, A, B, P, &err), 0);
            int sameseq = 0;
            for (int i = 0; i < m * n; i++)
                sameseq += memcmp(&D[i], &P[i], sizeof D[i]) == 0;
            CU_ASSERT(sameseq < m * n);
            kcs_order_file_free(&g);
        }
        kcs_order_file_free(&f);
        kcs_backend_cpu.close(ctx);
    }
}

/* An op with nothing to cancel is refused with the reason. */
static void test_refused(void)
{
    kcs_backend_ctx *ctx = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, NULL, &ctx, &err), 0);
    kcs_order_result r;
    kcs_schedule none = {KCS_SCHED_SEQUENTIAL, 0};
    CU_ASSERT_EQUAL(probe(ctx, KCS_OP_SOFTMAX, "native", none, KCS_FMT_FP32, 8, 1, 1, &r, &err),
                    KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "positive"));
    CU_ASSERT_EQUAL(probe(ctx, KCS_OP_GEMM, "native", none, KCS_FMT_FP32, 1, 1, 1, &r, &err),
                    KCS_E_INVAL);
    kcs_backend_cpu.close(ctx);
}

static const ut_test tests[] = {
    {"own schedules", test_schedules},
    {"atomic tiles", test_atomic_tiles},
    {"profiles", test_profiles},
    {"predict profiles", test_predict_profile},
    {"refused ops", test_refused},
};

static const ut_test slow_tests[] = {
    {"profiles at k = 4096", test_profiles_4096},
};

int main(int argc, char **argv)
{
    slow = argc > 1 && strcmp(argv[1], "--slow") == 0;
    return slow ? ut_run("order_roundtrip_slow", slow_tests) : ut_run("order_roundtrip", tests);
}
