/* Helpers shared by the unit suites of the decision core (test_verdict.c,
 * test_protocol.c, test_plan.c, test_study.c, test_inputs.c,
 * test_journal.c): a contract written from a few fields, scratch
 * directories and files, and the CUnit main of every suite. Header-only
 * (static inline):
 * every tests/unit/test_*.c is its own program. */
#ifndef KCS_UNIT_HELPERS_H
#define KCS_UNIT_HELPERS_H

#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract.h"

#ifndef KCS_TEST_SOURCE_DIR
#define KCS_TEST_SOURCE_DIR "."
#endif
#ifndef KCS_TEST_BINARY_DIR
#define KCS_TEST_BINARY_DIR "."
#endif

/* The fields of a test contract that vary; NULL takes the default. */
typedef struct ut_contract {
    const char *id;          /* "C-PRC-90" */
    const char *ops;         /* "gemm" */
    const char *dtype_in;    /* "[fp32, bf16, fp16]" */
    const char *finite;      /* "true" */
    const char *tolerance;   /* YAML lines under `tolerance:` (without derivation) */
    const char *shapes;      /* "[[4, 4, 64]]" */
    const char *held_out;    /* NULL: none */
    const char *inputs;      /* "[normal]" */
    int trials;              /* 0: 1 */
    const char *extra;       /* more YAML lines under `measurement:` */
    const char *signatures;  /* YAML list items under `signature:` */
} ut_contract;

/* The YAML text of a contract; caller frees. */
static inline char *ut_contract_text(const ut_contract *s)
{
    const char *tol = s->tolerance ? s->tolerance
                                   : "  structure: backward_error\n"
                                     "  eta: \"2 * k * u(dtype_acc)\"\n";
    const char *sig = s->signatures ? s->signatures
                                    : "  - { name: any-failure, when: \"tau > 1\", explain: e }\n";
    char held[256] = "";
    if (s->held_out)
        snprintf(held, sizeof held, "  held_out: %s\n", s->held_out);
    size_t len = 4096 + strlen(tol) + strlen(sig) + (s->extra ? strlen(s->extra) : 0);
    char *t = malloc(len);
    if (!t)
        return NULL;
    snprintf(t, len,
             "id: %s\n"
             "title: a contract of the unit tests\n"
             "family: %.3s\n"
             "primitive: path_dependence\n"
             "scope: { ops: [%s] }\n"
             "precondition:\n"
             "  dtype_in: %s\n"
             "  dtype_acc: fp32\n"
             "  dtype_out: fp32\n"
             "  values: { dist: any, finite: %s }\n"
             "postcondition: \"the unit test's promise\"\n"
             "tolerance:\n"
             "%s"
             "  derivation: >-\n"
             "    A bound chosen by hand for a unit test of the judge, after Higham,\n"
             "    Accuracy and Stability of Numerical Algorithms, Thm 3.5.\n"
             "oracle: { kind: fp64 }\n"
             "measurement:\n"
             "  shapes: %s\n"
             "%s"
             "  inputs: %s\n"
             "  trials: %d\n"
             "  guards: { poison: sentinel, fresh_inputs: true, revalidate: true }\n"
             "%s"
             "signature:\n"
             "%s",
             s->id ? s->id : "C-PRC-90", s->id ? s->id + 2 : "PRC", s->ops ? s->ops : "gemm",
             s->dtype_in ? s->dtype_in : "[fp32, bf16, fp16]", s->finite ? s->finite : "true",
             tol, s->shapes ? s->shapes : "[[4, 4, 64]]", held,
             s->inputs ? s->inputs : "[normal]", s->trials > 0 ? s->trials : 1,
             s->extra ? s->extra : "", sig);
    return t;
}

/* Load the test contract s with `lines` (YAML lines under precondition:,
 * after dtype_out) as file `path`; NULL with *err set when it does not
 * load (the loader's diagnostics are what such tests check). */
static inline kcs_contract *ut_contract_load_pre(const ut_contract *s, const char *lines,
                                                 const char *path, kcs_error *err)
{
    static const char anchor[] = "  dtype_out: fp32\n";
    char *t = ut_contract_text(s);
    const char *at = t ? strstr(t, anchor) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    size_t head = (size_t)(at - t) + strlen(anchor);
    char *text = calloc(1, strlen(t) + strlen(lines) + 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    memcpy(text, t, head);
    strcat(text, lines);
    strcat(text, "\n");
    strcat(text, t + head);
    kcs_contract *c = NULL;
    if (kcs_contract_load_string(path, text, &c, err))
        c = NULL;
    free(t);
    free(text);
    return c;
}

/* Load a test contract; a load failure fails the test (message printed). */
static inline kcs_contract *ut_contract_load(const ut_contract *s)
{
    char *text = ut_contract_text(s);
    kcs_contract *c = NULL;
    kcs_error err = {0};
    if (!text || kcs_contract_load_string("unit.yaml", text, &c, &err) != 0) {
        fprintf(stderr, "\n  test contract does not load: %s\n", err.msg);
        c = NULL;
    }
    free(text);
    return c;
}

/* A contract of the repository by id (contracts/ID.yaml); NULL (message
 * printed) when it does not load. */
static inline kcs_contract *ut_contract_load_id(const char *id)
{
    char path[512];
    snprintf(path, sizeof path, "%s/contracts/%s.yaml", KCS_TEST_SOURCE_DIR, id);
    kcs_contract *c = NULL;
    kcs_error err = {0};
    if (kcs_contract_load(path, &c, &err)) {
        fprintf(stderr, "\n%s\n", err.msg);
        return NULL;
    }
    return c;
}

/* The normal form of c, YAML or JSON (kcs_contract_print); caller frees. */
static inline char *ut_contract_print(const kcs_contract *c, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(kcs_contract_print(c, f, json), 0);
    fclose(f);
    return buf;
}

/* c's normal form reads back (as file `path`, into *back) and prints the
 * same again. Returns that YAML text; the caller frees it and *back. */
static inline char *ut_contract_reprint(const kcs_contract *c, const char *path,
                                        kcs_contract **back)
{
    char *p1 = ut_contract_print(c, false);
    kcs_error err = {0};
    int rc = kcs_contract_load_string(path, p1, back, &err);
    if (rc)
        fprintf(stderr, "\n%s\n---\n%s\n", err.msg, p1);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char *p2 = ut_contract_print(*back, false);
    CU_ASSERT_STRING_EQUAL(p1, p2);
    free(p2);
    return p1;
}

/* Case i of a table of malformed contracts: c (freed here) did not load,
 * and the diagnostic names want (and also, unless NULL). */
static inline void ut_expect_refused(size_t i, kcs_contract *c, const kcs_error *err,
                                     const char *want, const char *also)
{
    CU_ASSERT_PTR_NULL(c);
    if (c || !strstr(err->msg, want) || (also && !strstr(err->msg, also))) {
        fprintf(stderr, "\ncase %zu: wanted '%s'\n  got '%s'\n", i, want,
                c ? "(loaded)" : err->msg);
        CU_FAIL("diagnostic");
    }
    kcs_contract_free(c);
}

/* The next value of the splitmix64 sequence of *state (Steele, Lea and
 * Flood 2014): the suites' own reproducible random bits. */
static inline uint64_t ut_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A fresh scratch directory under TMPDIR (or /tmp); "" on failure. */
static inline void ut_tmpdir(char *buf, size_t len, const char *tag)
{
    const char *base = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    snprintf(buf, len, "%s/kcs-unit-%s.XXXXXX", base, tag);
    if (!mkdtemp(buf))
        buf[0] = 0;
}

/* Write text to dir/name; the full path into path. Returns 0 or -1. */
static inline int ut_write(const char *dir, const char *name, const char *text, char *path,
                           size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* dir/name in one of 8 rotating buffers (a call may hold up to 8). */
static inline const char *ut_path(const char *dir, const char *name)
{
    static char buf[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

/* Remove a scratch directory and everything in it. */
static inline void ut_rmdir(const char *dir)
{
    if (!dir[0])
        return;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "\n  could not remove %s\n", dir);
}

typedef struct ut_test {
    const char *name;
    void (*fn)(void);
} ut_test;

/* The number of entries of an array. */
#define UT_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Register one suite of n tests with its fixture (init and clean may be
 * NULL) and run it; non-zero when any assertion or test failed, the
 * fixture failed, or no test ran. */
static inline int ut_run_suite(const char *suite, CU_InitializeFunc init, CU_CleanupFunc clean,
                               const ut_test *tests, size_t n)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite(suite, init, clean);
    if (!s) {
        CU_cleanup_registry();
        return 1;
    }
    for (size_t i = 0; i < n && tests[i].name; i++) /* a {NULL, NULL} entry ends it too */
        if (!CU_add_test(s, tests[i].name, tests[i].fn)) {
            CU_cleanup_registry();
            return 1;
        }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures() + CU_get_number_of_tests_failed() +
                 CU_get_number_of_suites_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    return f != 0 || run == 0;
}

/* Register the suite of the array `tests` and run it; non-zero when
 * anything failed. */
#define ut_run(suite, tests) ut_run_suite(suite, NULL, NULL, tests, UT_COUNT(tests))

/* The main of a suite: run the array `tests` between init and clean (the
 * suite's fixture: int (*)(void), 0 when done; NULL for none). */
#define UT_MAIN_FIXTURE(suite, init, clean, tests)                                                 \
    int main(void)                                                                                 \
    {                                                                                              \
        return ut_run_suite(suite, init, clean, tests, UT_COUNT(tests));                           \
    }

/* The main of a suite that needs no set-up. */
#define UT_MAIN(suite, tests) UT_MAIN_FIXTURE(suite, NULL, NULL, tests)

#endif
