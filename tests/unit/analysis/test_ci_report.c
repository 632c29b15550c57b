/* Unit tests of the CI outputs (src/ci_report.c): --fail-on parsing, the
 * exit status precedence, and JUnit XML that stays well-formed whatever a
 * kernel's message holds. Dataset reading is covered end to end by
 * tests/integration/test_isolation.sh. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci_report.h"
#include "unit_helpers.h"

#define HAS(hay, needle) (strstr((hay), (needle)) != NULL)

static void test_fail_on(void)
{
    unsigned m = 0;
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("violation", &m), 0);
    CU_ASSERT_EQUAL(m, KCS_FAIL_ON_VIOLATION);
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("error", &m), 0);
    CU_ASSERT_EQUAL(m, KCS_FAIL_ON_ERROR);
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("error,violation", &m), 0);
    CU_ASSERT_EQUAL(m, KCS_FAIL_ON_ERROR | KCS_FAIL_ON_VIOLATION);
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("", &m), -1);
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("violations", &m), -1);
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("error,", &m), 0); /* empty items are skipped */
    CU_ASSERT_EQUAL(kcs_ci_parse_fail_on("error,x", &m), -1);
}

static kcs_ci two_rows(void)
{
    kcs_ci ci = {0};
    ci.rows = calloc(2, sizeof *ci.rows);
    ci.n = ci.cap = 2;
    ci.n_datasets = 1;
    snprintf(ci.datasets[0], sizeof ci.datasets[0], "d.h5");
    kcs_ci_row *a = &ci.rows[0], *b = &ci.rows[1];
    snprintf(a->contract, sizeof a->contract, "C-PRC-01");
    snprintf(a->implementation, sizeof a->implementation, "plugin:0 native (\"x\" <y>)");
    a->trials = 4;
    a->within = 3;
    a->violations = 1;
    snprintf(a->signatures, sizeof a->signatures, "accumulator-narrower-than-declared");
    snprintf(b->contract, sizeof b->contract, "C-EXC-02");
    b->rank = 1;
    b->trials = 2;
    b->within = 1;
    b->errors = 1;
    b->max_tau = NAN; /* no trial ran to a tau */
    a->max_tau = 2.5;
    snprintf(b->message, sizeof b->message, "crashed: a < b && c > d; 'q' \"r\"\x01 end");
    return ci;
}

static void test_status(void)
{
    kcs_ci ci = two_rows();
    CU_ASSERT_EQUAL(kcs_ci_status(&ci, 0), 0);
    CU_ASSERT_EQUAL(kcs_ci_status(&ci, KCS_FAIL_ON_ERROR), KCS_EXIT_KERNEL_ERROR);
    CU_ASSERT_EQUAL(kcs_ci_status(&ci, KCS_FAIL_ON_VIOLATION), KCS_EXIT_VIOLATION);
    /* violation before error */
    CU_ASSERT_EQUAL(kcs_ci_status(&ci, KCS_FAIL_ON_VIOLATION | KCS_FAIL_ON_ERROR),
                    KCS_EXIT_VIOLATION);
    ci.rows[0].violations = 0;
    ci.rows[0].under = 1; /* under-specified counts as a violation */
    CU_ASSERT_EQUAL(kcs_ci_status(&ci, KCS_FAIL_ON_VIOLATION), KCS_EXIT_VIOLATION);
    ci.rows[0].under = 0;
    CU_ASSERT_EQUAL(kcs_ci_status(&ci, KCS_FAIL_ON_VIOLATION), 0);
    kcs_ci_free(&ci);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_junit(void)
{
    kcs_ci ci = two_rows();
    char path[] = "/tmp/kcs-junit-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_ci_junit(&ci, path, "suite <&>", &err), 0);
    const char *x = slurp(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT(HAS(x, "<testsuite name=\"suite &lt;&amp;&gt;\" tests=\"2\" failures=\"1\" errors=\"1\">"));
    CU_ASSERT(HAS(x, "classname=\"C-PRC-01\" name=\"rank 0: plugin:0 native (&quot;x&quot; &lt;y&gt;)\""));
    CU_ASSERT(HAS(x, "<failure type=\"violation\" message=\"1 of 4 trials violate C-PRC-01"));
    CU_ASSERT(HAS(x, ">accumulator-narrower-than-declared</failure>"));
    CU_ASSERT(HAS(x, "<error type=\"error\" message=\"1 of 2 trials errored, 0 unavailable\">"));
    CU_ASSERT(HAS(x, "crashed: a &lt; b &amp;&amp; c &gt; d; &apos;q&apos; &quot;r&quot;? end</error>"));
    CU_ASSERT(!HAS(x, "\x01"));
    /* a rank of -1 (kcs grade) is not named */
    ci.rows[0].rank = -1;
    CU_ASSERT_EQUAL(kcs_ci_junit(&ci, path, "g", &err), 0);
    x = slurp(path);
    CU_ASSERT(HAS(x, "name=\"plugin:0 native"));
    CU_ASSERT(!HAS(x, "rank -1"));
    unlink(path);
    CU_ASSERT_NOT_EQUAL(kcs_ci_junit(&ci, "/nonexistent/dir/j.xml", "g", &err), 0);
    CU_ASSERT(HAS(err.msg, "/nonexistent/dir/j.xml"));
    kcs_ci_free(&ci);
}

static void test_json(void)
{
    kcs_ci ci = two_rows();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    kcs_ci_json(&ci, f, "kcs run \"x\"", NULL);
    fclose(f);
    CU_ASSERT(HAS(buf, "\"command\": \"kcs run \\\"x\\\"\""));
    CU_ASSERT(HAS(buf, "\"totals\": {\"trials\": 6, \"within_tolerance\": 4, \"violation\": 1, "
                       "\"under_specified\": 0, \"error\": 1, \"unavailable\": 0, "
                       "\"not_claimed\": 0}"));
    CU_ASSERT(HAS(buf, "\"verdict\": \"FAIL\""));
    CU_ASSERT(HAS(buf, "\"verdict\": \"ERROR\""));
    CU_ASSERT(HAS(buf, "\"max_tau\": null")); /* NaN is not JSON */
    free(buf);
    kcs_ci_free(&ci);
}

static const ut_test tests[] = {
    {"fail-on", test_fail_on},
    {"status", test_status},
    {"junit", test_junit},
    {"json", test_json},
};

UT_MAIN("ci_report", tests)
