/* Study loading (src/lang/study.c): a valid study reads back the values
 * written in it (placements, cases, defaults taken from the contract,
 * contract paths relative to the study file); each bad placement or case
 * entry fails with "file:line:col: field: message" pointing at the entry,
 * the line and column located in the text written here; several errors
 * come together, in document order. */
#include <stdio.h>
#include <string.h>

#include "study.h"
#include "unit_helpers.h"

static char dir[512];
static char study_path[1024];

/* A valid study, one entry per line so that each can be replaced. */
static const char *const base_lines[] = {
    "name: unit-study",                                                 /* 1 */
    "seed: 11",                                                         /* 2 */
    "samples: 8",                                                       /* 3 */
    "contracts:",                                                       /* 4 */
    "  - c.yaml",                                                       /* 5 */
    "placement:",                                                       /* 6 */
    "  - cpu",                                                          /* 7 */
    "  - { backend: cpu, variant: own, schedule: pairwise, acc: bf16 }", /* 8 */
    "  - cpu:0",                                                        /* 9 */
    "cases:",                                                           /* 10 */
    "  - { contract: C-PRC-90, op: gemm, dtype_in: bf16 }",             /* 11 */
    "  - contract: C-PRC-90",                                           /* 12 */
    "    op: reduce_sum",                                               /* 13 */
    "    shapes: [[2, 1, 100], [3, 1, 200, 2]]",                        /* 14 */
    "    inputs: [uniform_pm1, positive]",                              /* 15 */
    "    trials: 3",                                                    /* 16 */
};
#define N_LINES ((int)(sizeof base_lines / sizeof base_lines[0]))

/* The study with line `line` (1-based) replaced by repl (0: none). */
static void study_text(char *buf, size_t len, int line, const char *repl, int line2,
                       const char *repl2)
{
    buf[0] = 0;
    for (int i = 1; i <= N_LINES; i++) {
        const char *l = i == line ? repl : i == line2 ? repl2 : base_lines[i - 1];
        strncat(buf, l, len - strlen(buf) - 2);
        strcat(buf, "\n");
    }
}

static int setup(void)
{
    ut_tmpdir(dir, sizeof dir, "study");
    if (!dir[0])
        return 1;
    ut_contract s = {.ops = "gemm, reduce_sum", .dtype_in = "[fp32, bf16]",
                     .shapes = "[[4, 4, 64], [8, 8, 128]]", .inputs = "[normal]", .trials = 2};
    char *text = ut_contract_text(&s), path[1024];
    int rc = text ? ut_write(dir, "c.yaml", text, path, sizeof path) : 1;
    free(text);
    snprintf(study_path, sizeof study_path, "%s/study.yaml", dir);
    return rc;
}

static int teardown(void)
{
    ut_rmdir(dir);
    return 0;
}

static int load(const char *text, kcs_study **s, kcs_error *err)
{
    char p[1024];
    if (ut_write(dir, "study.yaml", text, p, sizeof p))
        return -1;
    memset(err, 0, sizeof *err);
    return kcs_study_load(study_path, s, err);
}

static void test_valid(void)
{
    char text[4096];
    study_text(text, sizeof text, 0, NULL, 0, NULL);
    kcs_study *s = NULL;
    kcs_error err;
    /* run from elsewhere: the contract path is relative to the study */
    char cwd[4096];
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    CU_ASSERT_EQUAL_FATAL(chdir("/"), 0);
    int rc = load(text, &s, &err);
    CU_ASSERT_EQUAL(chdir(cwd), 0);
    if (rc)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(s->name, "unit-study");
    CU_ASSERT_EQUAL(s->seed, 11);
    CU_ASSERT_EQUAL(s->n_samples, 8);
    CU_ASSERT_EQUAL_FATAL(s->n_contracts, 1);
    CU_ASSERT_STRING_EQUAL(s->contracts[0]->id, "C-PRC-90");
    CU_ASSERT_EQUAL_FATAL(s->n_placement, 3);
    CU_ASSERT_STRING_EQUAL(s->placement[0].backend, "cpu");
    CU_ASSERT_STRING_EQUAL(s->placement[0].variant, "native");
    CU_ASSERT_EQUAL(s->placement[0].acc_set, 0);
    CU_ASSERT_STRING_EQUAL(s->placement[1].variant, "own");
    CU_ASSERT_EQUAL(s->placement[1].schedule.kind, KCS_SCHED_PAIRWISE);
    CU_ASSERT_EQUAL(s->placement[1].acc_set, 1);
    CU_ASSERT_EQUAL(s->placement[1].acc.fmt, KCS_FMT_BF16);
    CU_ASSERT_EQUAL(s->placement[2].device, 0);
    /* placement is cyclic over ranks */
    CU_ASSERT_PTR_EQUAL(kcs_study_placement(s, 4), &s->placement[1]);
    CU_ASSERT_PTR_EQUAL(kcs_study_placement(s, 6), &s->placement[0]);
    CU_ASSERT_EQUAL_FATAL(s->n_sweeps, 2);
    const kcs_sweep *a = &s->sweeps[0], *b = &s->sweeps[1];
    CU_ASSERT_EQUAL(a->contract, 0);
    CU_ASSERT_EQUAL(a->op, KCS_OP_GEMM);
    CU_ASSERT_EQUAL(a->dtype_in, KCS_FMT_BF16);
    CU_ASSERT_EQUAL(a->dtype_out, KCS_FMT_FP32); /* the contract's */
    CU_ASSERT_EQUAL(a->n_shapes, 0);             /* the contract's shapes, inputs, trials */
    CU_ASSERT_EQUAL(a->n_dists, 0);
    CU_ASSERT_EQUAL(a->trials, 0);
    CU_ASSERT_EQUAL(b->op, KCS_OP_REDUCE_SUM);
    CU_ASSERT_EQUAL(b->dtype_in, KCS_FMT_FP32); /* default */
    CU_ASSERT_EQUAL_FATAL(b->n_shapes, 2);
    CU_ASSERT(b->shapes[0].m == 2 && b->shapes[0].n == 1 && b->shapes[0].k == 100 &&
              b->shapes[0].batch == 0);
    CU_ASSERT(b->shapes[1].m == 3 && b->shapes[1].k == 200 && b->shapes[1].batch == 2);
    CU_ASSERT_EQUAL_FATAL(b->n_dists, 2);
    CU_ASSERT_EQUAL(b->dists[0], KCS_DIST_UNIFORM_PM1);
    CU_ASSERT_EQUAL(b->dists[1], KCS_DIST_POSITIVE);
    CU_ASSERT_EQUAL(b->trials, 3);
    kcs_study_free(s);
}

/* line:col of the first occurrence of token on line `line` of text. */
static int locate(const char *text, int line, const char *token, int *col_p)
{
    const char *p = text;
    for (int l = 1; l < line && p; l++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return -1;
    const char *eol = strchr(p, '\n');
    const char *t = strstr(p, token);
    if (!t || (eol && t > eol))
        return -1;
    *col_p = (int)(t - p) + 1;
    return 0;
}

typedef struct bad_entry {
    int line;          /* replaced line */
    const char *repl;
    const char *token; /* where the error points on that line (a mapping or a
                        * list: at its first item, where libfyaml starts it) */
    const char *field;
    const char *msg;   /* substring of the message */
} bad_entry;

static void expect_error(const bad_entry *b, int line2, const char *repl2)
{
    char text[4096];
    study_text(text, sizeof text, b->line, b->repl, line2, repl2);
    kcs_study *s = NULL;
    kcs_error err;
    int rc = load(text, &s, &err);
    CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
    if (rc == 0) {
        fprintf(stderr, "\n  accepted: %s\n", b->repl);
        kcs_study_free(s);
        return;
    }
    int col = 0;
    CU_ASSERT_EQUAL_FATAL(locate(text, b->line, b->token, &col), 0);
    char want[1400];
    snprintf(want, sizeof want, "%s:%d:%d: %s: ", study_path, b->line, col, b->field);
    const char *at = strstr(err.msg, want);
    if (!at || !strstr(at + strlen(want), b->msg))
        fprintf(stderr, "\n  for '%s' wanted '%s...%s', got:\n%s\n", b->repl, want, b->msg,
                err.msg);
    CU_ASSERT_PTR_NOT_NULL(at);
    if (at) {
        const char *eol = strchr(at, '\n');
        const char *m = strstr(at + strlen(want), b->msg);
        CU_ASSERT(m != NULL && (!eol || m < eol));
    }
}

static const bad_entry bad_placements[] = {
    {8, "  - { backend: gpu0 }", "backend", "placement[1]", "unknown backend 'gpu0'"},
    {8, "  - { backend: cpu, device: 99 }", "99", "placement[1].device", "out of range"},
    {8, "  - { backend: cpu, schedule: zigzag }", "zigzag", "placement[1].schedule",
     "unknown schedule 'zigzag'"},
    {8, "  - { backend: cpu, acc: fp7 }", "fp7", "placement[1].acc", "unknown accumulator 'fp7'"},
    {8, "  - { backend: cpu, colour: red }", "colour", "placement[1].colour", "unknown key"},
    {8, "  - { backend: plugin }", "backend", "placement[1]", "needs `plugin: PATH`"},
    {8, "  - { variant: own }", "variant", "placement[1].backend", "missing required key"},
    {9, "  - cpu:x", "cpu:x", "placement[2]", "device 'x' is not an index"},
    {9, "  - [cpu]", "cpu", "placement[2]", "expected a mapping"},
};

static const bad_entry bad_cases[] = {
    {11, "  - { contract: C-NOPE-01, op: gemm }", "C-NOPE-01", "cases[0].contract",
     "'C-NOPE-01' is not in the study's contracts list"},
    {11, "  - { contract: C-PRC-90, op: softmax }", "softmax", "cases[0].op",
     "outside the scope of C-PRC-90"},
    {11, "  - { contract: C-PRC-90, op: frobnicate }", "frobnicate", "cases[0].op",
     "unknown op 'frobnicate'"},
    {11, "  - { contract: C-PRC-90, op: gemm, dtype_in: fp16 }", "fp16", "cases[0].dtype_in",
     "violates the precondition of C-PRC-90"},
    {11, "  - { contract: C-PRC-90, op: gemm, dtype_out: fp99 }", "fp99", "cases[0].dtype_out",
     "unknown format 'fp99'"},
    {11, "  - { contract: C-PRC-90, op: gemm, dtype_out: bf16 }", "bf16", "cases[0].dtype_out",
     "dtype_out bf16 is not admitted by C-PRC-90's precondition (dtype_out: fp32)"},
    {11, "  - { contract: C-PRC-90, op: gemm, inputs: [normal, gaussian] }", "gaussian",
     "cases[0].inputs", "unknown input distribution 'gaussian'"},
    {11, "  - { contract: C-PRC-90, op: gemm, trials: 0 }", "0 }", "cases[0].trials",
     "out of range"},
    {11, "  - { contract: C-PRC-90, op: gemm, shapes: [[1, 2]] }", "1, 2",
     "cases[0].shapes[0]", "expected [m, n, k] or [m, n, k, batch]"},
    {11, "  - { contract: C-PRC-90, op: gemm, size: 3 }", "size", "cases[0].size", "unknown key"},
    {11, "  - { op: gemm }", "op", "cases[0].contract", "missing required key"},
    {11, "  - gemm", "gemm", "cases[0]", "expected a mapping"},
    {14, "    shapes: [[2, 1, 0]]", "0]", "cases[1].shapes[0]", "out of range"},
    {16, "    trials: many", "many", "cases[1].trials", "expected an integer"},
    {13, "    op: attention", "attention", "cases[1].op", "outside the scope of C-PRC-90"},
};

static void test_bad_placements(void)
{
    for (size_t i = 0; i < sizeof bad_placements / sizeof bad_placements[0]; i++)
        expect_error(&bad_placements[i], 0, NULL);
}

static void test_bad_cases(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        expect_error(&bad_cases[i], 0, NULL);
}

/* Two bad entries: both reported, the earlier line first. */
static void test_errors_in_document_order(void)
{
    const bad_entry *late = &bad_cases[1], *early = &bad_placements[0];
    char text[4096];
    study_text(text, sizeof text, late->line, late->repl, early->line, early->repl);
    kcs_study *s = NULL;
    kcs_error err;
    CU_ASSERT_EQUAL_FATAL(load(text, &s, &err), KCS_E_INVAL);
    expect_error(late, early->line, early->repl);
    expect_error(early, late->line, late->repl);
    const char *a = strstr(err.msg, early->msg), *b = strstr(err.msg, late->msg);
    CU_ASSERT(a != NULL && b != NULL && a < b);
}

/* A contract file that does not load is an error at its entry. */
static void test_bad_contract_path(void)
{
    bad_entry b = {5, "  - missing.yaml", "missing.yaml", "contracts[0]", "missing.yaml"};
    expect_error(&b, 0, NULL);
    bad_entry t = {3, "samples: 0", "0", "samples", "out of range"};
    expect_error(&t, 0, NULL);
}

static const ut_test tests[] = {
    {"a valid study reads back", test_valid},
    {"bad placement entries: file:line:col: field", test_bad_placements},
    {"bad case entries: file:line:col: field", test_bad_cases},
    {"several errors, in document order", test_errors_in_document_order},
    {"bad contract path, bad top-level value", test_bad_contract_path},
};

UT_MAIN_FIXTURE("study", setup, teardown, tests)
