/* Held-out shapes drawn over a contract's precondition
 * (src/plan/held_out_draw.c): within the precondition and the caps, a
 * Latin hypercube (every log stratum of m used once, so some drawn shape
 * has m above 256 at every seed when m may reach 4096), deterministic in
 * the seed, and part of a plan built from C-CMP-03. */
#include <CUnit/Basic.h>
#include <string.h>

#include "contract.h"
#include "held_out_draw.h"
#include "study.h"
#include "unit_helpers.h"

static kcs_contract *load_cmp03(void)
{
    kcs_contract *c = NULL;
    kcs_error err = {0};
    int rc = kcs_contract_load(KCS_TEST_SOURCE_DIR "/contracts/C-CMP-03.yaml", &c, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return c;
}

static void test_draw_bounds_and_reach(void)
{
    kcs_contract *c = load_cmp03();
    CU_ASSERT_EQUAL(c->held_out_draw, 4);
    int reach_m = 0, reach_k = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        kcs_shape s[4], s2[4];
        CU_ASSERT_EQUAL(kcs_held_out_draw(c, KCS_OP_GEMM, seed, 4, s), 4);
        kcs_held_out_draw(c, KCS_OP_GEMM, seed, 4, s2);
        CU_ASSERT_EQUAL(memcmp(s, s2, sizeof s), 0); /* the seed decides */
        int64_t max_m = 0;
        for (int i = 0; i < 4; i++) {
            CU_ASSERT(s[i].m >= 1 && s[i].m <= KCS_DRAW_MAX_DIM);
            CU_ASSERT(s[i].n >= 1 && s[i].n <= KCS_DRAW_MAX_DIM);
            CU_ASSERT(s[i].k >= c->k_min && s[i].k <= c->k_max);
            CU_ASSERT((double)s[i].m * (double)s[i].n * (double)s[i].k <= KCS_DRAW_MAX_WORK);
            CU_ASSERT_EQUAL(s[i].batch, 0);
            max_m = s[i].m > max_m ? s[i].m : max_m;
            reach_k |= s[i].k >= 65536;
        }
        CU_ASSERT(max_m > 256); /* the top log stratum of [1, 4096] starts at 512 */
        reach_m |= max_m >= 2048;
    }
    CU_ASSERT(reach_m && reach_k);
    /* batched_gemm draws a batch too; other ops are not drawn */
    kcs_shape b[4];
    CU_ASSERT_EQUAL(kcs_held_out_draw(c, KCS_OP_BATCHED_GEMM, 7, 4, b), 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT(b[i].batch >= 1 && b[i].batch <= KCS_DRAW_MAX_BATCH);
    CU_ASSERT_EQUAL(kcs_held_out_draw(c, KCS_OP_REDUCE_SUM, 7, 4, b), 0);
    kcs_contract_free(c);
}

/* A plan of C-CMP-03 holds the drawn shapes as held-out cases, after the
 * listed ones; another study seed draws other shapes. */
static void test_plan_holds_draws(void)
{
    kcs_contract *c = load_cmp03();
    int64_t n_cases[2] = {0, 0}, big_m[2] = {0, 0};
    kcs_shape last[2];
    for (int v = 0; v < 2; v++) {
        kcs_sweep sw = {.contract = 0, .op = KCS_OP_GEMM, .dtype_in = KCS_FMT_FP32,
                        .dtype_out = KCS_FMT_FP32};
        kcs_study s = {0};
        s.path = "test";
        s.seed = 11 + (uint64_t)v;
        s.max_memory_mib = 8192;
        s.contracts[0] = c;
        s.n_contracts = 1;
        s.sweeps = &sw;
        s.n_sweeps = 1;
        kcs_plan p;
        kcs_error err = {0};
        CU_ASSERT_EQUAL_FATAL(kcs_plan_build(&s, &p, &err), 0);
        n_cases[v] = p.n_cases;
        int held = 0;
        for (int64_t i = 0; i < p.n_cases; i++) {
            held += p.cases[i].held_out;
            big_m[v] |= p.cases[i].held_out && p.cases[i].shape.m > 256;
        }
        CU_ASSERT_EQUAL(held, (c->n_held_out + c->held_out_draw) * c->n_dists);
        last[v] = p.cases[p.n_cases - 1].shape;
        kcs_plan_free(&p);
    }
    CU_ASSERT_EQUAL(n_cases[0], (c->n_shapes + c->n_held_out + c->held_out_draw) * c->n_dists);
    CU_ASSERT_EQUAL(n_cases[0], n_cases[1]);
    CU_ASSERT(big_m[0] && big_m[1]);
    CU_ASSERT(memcmp(&last[0], &last[1], sizeof last[0]) != 0);
    kcs_contract_free(c);
}

static const ut_test tests[] = {
    {"bounds, strata, seed", test_draw_bounds_and_reach},
    {"plans hold the drawn shapes", test_plan_holds_draws},
};

UT_MAIN("held_out_draw", tests)
