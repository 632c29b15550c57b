/* Plan expansion (src/plan/plan.c): how many cases a study expands to and
 * in which order (case entries in file order; per entry shapes, then input
 * distributions; a contract's held-out shapes after its own), what each
 * case inherits (op, formats, the contract's accumulator and trials), the
 * per-case seeds, and the plan hash: the same for the same study, loaded
 * again or rebuilt, and different when any field that changes what the
 * ranks run changes. The expected cases are enumerated here from the
 * study and contracts written here. */
#include <stdio.h>
#include <string.h>

#include "study.h"
#include "unit_helpers.h"

static char dir[512];
static char study_path[1024];

/* Contract A: 3 shapes + 1 held-out, 2 inputs, 2 trials. */
static const kcs_shape a_shapes[] = {{4, 4, 64, 0}, {8, 8, 128, 0}, {16, 16, 256, 0}};
static const kcs_shape a_held[] = {{5, 7, 9, 0}};
static const kcs_dist a_dists[] = {KCS_DIST_NORMAL, KCS_DIST_UNIFORM_PM1};
/* Case entry 1 (contract B): its own shapes and inputs, 5 trials. */
static const kcs_shape e1_shapes[] = {{2, 1, 64, 0}, {3, 1, 128, 2}};
static const kcs_dist e1_dists[] = {KCS_DIST_NORMAL, KCS_DIST_POSITIVE, KCS_DIST_OFFSET};

static const char *const study_yaml =
    "name: plan\n"
    "seed: 5\n"
    "samples: 4\n"
    "contracts: [a.yaml, b.yaml]\n"
    "placement: [cpu, { backend: cpu, variant: own }]\n"
    "cases:\n"
    "  - { contract: C-PRC-90, op: gemm }\n"
    "  - { contract: C-ORD-91, op: reduce_sum, shapes: [[2, 1, 64], [3, 1, 128, 2]],\n"
    "      inputs: [normal, positive, offset], trials: 5 }\n"
    "  - { contract: C-PRC-90, op: batched_gemm, dtype_in: bf16, inputs: [uniform_pm1] }\n";

static int setup(void)
{
    ut_tmpdir(dir, sizeof dir, "plan");
    if (!dir[0])
        return 1;
    ut_contract a = {.ops = "gemm, batched_gemm", .dtype_in = "[fp32, bf16]",
                     .shapes = "[[4, 4, 64], [8, 8, 128], [16, 16, 256]]",
                     .held_out = "[[5, 7, 9]]", .inputs = "[normal, uniform_pm1]", .trials = 2};
    ut_contract b = {.id = "C-ORD-91", .ops = "reduce_sum", .shapes = "[[1, 1, 32]]",
                     .trials = 1, .extra = "  seed: 3\n"};
    char *ta = ut_contract_text(&a), *tb = ut_contract_text(&b), p[1024];
    int rc = !ta || !tb || ut_write(dir, "a.yaml", ta, p, sizeof p) ||
             ut_write(dir, "b.yaml", tb, p, sizeof p) ||
             ut_write(dir, "study.yaml", study_yaml, study_path, sizeof study_path);
    free(ta);
    free(tb);
    return rc;
}

static kcs_study *load(void)
{
    kcs_study *s = NULL;
    kcs_error err = {0};
    if (kcs_study_load(study_path, &s, &err)) {
        fprintf(stderr, "\n  %s\n", err.msg);
        return NULL;
    }
    return s;
}

static int build(const kcs_study *s, kcs_plan *p)
{
    kcs_error err = {0};
    int rc = kcs_plan_build(s, p, &err);
    if (rc)
        fprintf(stderr, "\n  plan: %s\n", err.msg);
    return rc;
}

static int same_shape(kcs_shape a, kcs_shape b)
{
    return a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch;
}

/* The cases, enumerated from the study above. */
static void test_expansion(void)
{
    kcs_study *s = load();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    kcs_plan p;
    CU_ASSERT_EQUAL_FATAL(build(s, &p), 0);
    kcs_case want[64];
    int n = 0;
    for (int e = 0; e < 3; e++) {
        int ns = e == 1 ? 2 : 4, nd = e == 0 ? 2 : e == 1 ? 3 : 1;
        for (int a = 0; a < ns; a++)
            for (int b = 0; b < nd; b++) {
                kcs_case *c = &want[n];
                memset(c, 0, sizeof *c);
                c->id = n++;
                c->contract = e == 1 ? 1 : 0;
                c->op = e == 0 ? KCS_OP_GEMM : e == 1 ? KCS_OP_REDUCE_SUM : KCS_OP_BATCHED_GEMM;
                c->dtype_in = e == 2 ? KCS_FMT_BF16 : KCS_FMT_FP32;
                c->shape = e == 1 ? e1_shapes[a] : a < 3 ? a_shapes[a] : a_held[0];
                c->held_out = e != 1 && a == 3;
                c->dist = e == 0 ? a_dists[b] : e == 1 ? e1_dists[b] : KCS_DIST_UNIFORM_PM1;
                c->trials = e == 1 ? 5 : 2;
            }
    }
    CU_ASSERT_EQUAL_FATAL(p.n_cases, n);
    CU_ASSERT_EQUAL(n, 4 * 2 + 2 * 3 + 4 * 1);
    CU_ASSERT_EQUAL(p.max_trials, 5);
    for (int i = 0; i < n; i++) {
        const kcs_case *g = &p.cases[i], *w = &want[i];
        int ok = g->id == w->id && g->contract == w->contract && g->op == w->op &&
                 g->dtype_in == w->dtype_in && g->dtype_out == KCS_FMT_FP32 &&
                 g->acc.fmt == KCS_FMT_FP32 && g->acc.bits == 0 && same_shape(g->shape, w->shape) &&
                 g->held_out == w->held_out && g->dist == w->dist && g->trials == w->trials;
        if (!ok)
            fprintf(stderr, "\n  case %d differs from the expansion", i);
        CU_ASSERT(ok);
        for (int j = 0; j < i; j++)
            CU_ASSERT(p.cases[j].seed != g->seed); /* every case its own stream */
    }
    kcs_plan_free(&p);
    kcs_study_free(s);
}

/* Same study: same plan, cases and hash; rebuilt or loaded again. */
static void test_hash_stable(void)
{
    kcs_study *s1 = load(), *s2 = load();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
    kcs_plan a, b, c;
    CU_ASSERT_EQUAL_FATAL(build(s1, &a), 0);
    CU_ASSERT_EQUAL_FATAL(build(s1, &b), 0);
    CU_ASSERT_EQUAL_FATAL(build(s2, &c), 0);
    CU_ASSERT_EQUAL(a.hash, b.hash);
    CU_ASSERT_EQUAL(a.hash, c.hash);
    CU_ASSERT_EQUAL_FATAL(a.n_cases, c.n_cases);
    CU_ASSERT(memcmp(a.cases, c.cases, (size_t)a.n_cases * sizeof *a.cases) == 0);
    kcs_plan_free(&a);
    kcs_plan_free(&b);
    kcs_plan_free(&c);
    kcs_study_free(s1);
    kcs_study_free(s2);
}

/* One field changed at a time: the hash must change. */
typedef void (*mutator)(kcs_study *s);
static void m_seed(kcs_study *s) { s->seed++; }
static void m_samples(kcs_study *s) { s->n_samples++; }
static void m_trials(kcs_study *s) { s->sweeps[1].trials = 6; }
static void m_dtype_in(kcs_study *s) { s->sweeps[0].dtype_in = KCS_FMT_BF16; }
static void m_dtype_out(kcs_study *s) { s->sweeps[0].dtype_out = KCS_FMT_BF16; }
static void m_shape(kcs_study *s) { s->sweeps[1].shapes[1].k = 129; }
static void m_batch(kcs_study *s) { s->sweeps[1].shapes[1].batch = 3; }
static void m_dist(kcs_study *s) { s->sweeps[1].dists[2] = KCS_DIST_LARGE; }
static void m_op(kcs_study *s) { s->sweeps[2].op = KCS_OP_GEMM; }
static void m_variant(kcs_study *s) { snprintf(s->placement[1].variant, sizeof s->placement[1].variant, "native"); }
static void m_acc(kcs_study *s)
{
    s->placement[1].acc.fmt = KCS_FMT_BF16;
    s->placement[1].acc_set = 1;
}
static void m_order(kcs_study *s)
{
    kcs_sweep t = s->sweeps[0];
    s->sweeps[0] = s->sweeps[2];
    s->sweeps[2] = t;
}
static void m_contract_text(kcs_study *s)
{
    char *t = s->contracts[1]->text;
    char *at = strstr(t, "trials: 1");
    if (at)
        at[strlen("trials: ")] = '2'; /* the text the ranks judge by */
}
static void m_contract_seed(kcs_study *s) { s->contracts[1]->seed++; }

static void test_hash_changes(void)
{
    static const struct {
        const char *what;
        mutator fn;
    } muts[] = {
        {"study seed", m_seed},         {"samples", m_samples},
        {"trials of a case entry", m_trials}, {"dtype_in", m_dtype_in},
        {"dtype_out", m_dtype_out},     {"a shape's k", m_shape},
        {"a shape's batch", m_batch},   {"an input distribution", m_dist},
        {"op", m_op},                   {"placement variant", m_variant},
        {"placement accumulator", m_acc}, {"case entry order", m_order},
        {"contract text", m_contract_text}, {"contract seed", m_contract_seed},
    };
    kcs_study *s = load();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    kcs_plan base;
    CU_ASSERT_EQUAL_FATAL(build(s, &base), 0);
    kcs_study_free(s);
    uint64_t seen[32];
    int n_seen = 0;
    seen[n_seen++] = base.hash;
    for (size_t i = 0; i < sizeof muts / sizeof muts[0]; i++) {
        s = load();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        muts[i].fn(s);
        kcs_plan p;
        CU_ASSERT_EQUAL_FATAL(build(s, &p), 0);
        int dup = 0;
        for (int j = 0; j < n_seen; j++)
            dup |= seen[j] == p.hash;
        if (dup)
            fprintf(stderr, "\n  changing the %s leaves the plan hash as it was", muts[i].what);
        CU_ASSERT(!dup);
        seen[n_seen++] = p.hash;
        kcs_plan_free(&p);
        kcs_study_free(s);
    }
    kcs_plan_free(&base);
}

/* Case seeds follow the study seed and their own contract's seed only. */
static void test_seeds(void)
{
    kcs_study *s = load();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    kcs_plan a, b, c;
    CU_ASSERT_EQUAL_FATAL(build(s, &a), 0);
    s->contracts[1]->seed++; /* contract B: case entry 1 */
    CU_ASSERT_EQUAL_FATAL(build(s, &b), 0);
    s->seed++;
    CU_ASSERT_EQUAL_FATAL(build(s, &c), 0);
    for (int64_t i = 0; i < a.n_cases; i++) {
        int of_b = a.cases[i].contract == 1;
        CU_ASSERT_EQUAL(a.cases[i].seed != b.cases[i].seed, of_b);
        CU_ASSERT(b.cases[i].seed != c.cases[i].seed);
    }
    kcs_plan_free(&a);
    kcs_plan_free(&b);
    kcs_plan_free(&c);
    kcs_study_free(s);
}

/* Refusals: nothing to run, a case beyond the memory cap. */
static void test_refusals(void)
{
    kcs_study *s = load();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    kcs_plan p;
    kcs_error err = {0};
    /* gemm 1024^3: A and B alone are 2 * 2^20 doubles = 16 MiB */
    s->max_memory_mib = 8;
    s->sweeps[0].n_shapes = 1;
    s->sweeps[0].shapes[0] = (kcs_shape){1024, 1024, 1024, 0};
    CU_ASSERT_EQUAL(kcs_plan_build(s, &p, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "cases[0]") != NULL);
    CU_ASSERT(strstr(err.msg, "max_memory_mib") != NULL);
    s->max_memory_mib = 64; /* 16 MiB + output and reference: fits */
    memset(&err, 0, sizeof err);
    int rc = kcs_plan_build(s, &p, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0)
        kcs_plan_free(&p);
    s->n_sweeps = 0;
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(kcs_plan_build(s, &p, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "no cases") != NULL);
    s->n_sweeps = 3;
    kcs_study_free(s);
}

static const ut_test tests[] = {
    {"expansion: counts, order, inherited fields", test_expansion},
    {"hash stable for the same study", test_hash_stable},
    {"hash changes with each field", test_hash_changes},
    {"case seeds", test_seeds},
    {"refusals", test_refusals},
};

static int teardown(void)
{
    ut_rmdir(dir);
    return 0;
}

UT_MAIN_FIXTURE("plan", setup, teardown, tests)
