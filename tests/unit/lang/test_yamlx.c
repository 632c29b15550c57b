/* Unit tests of the strict YAML layer (src/lang/yamlx.c). Positions are 1-based
 * and counted by hand from the literal texts below. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yamlx.h"
#include "yamlx_limits.h"
#include "unit_helpers.h"

#define HAS(hay, needle) (strstr((hay), (needle)) != NULL)

static const char *DOC = "a: 1\n"                   /* line 1 */
                         "b: \"x y\"\n"             /* line 2: value at col 5 */
                         "c: { d: [10, 20], e: {} }\n" /* line 3 */
                         "tol:\n"                   /* line 4 */
                         "  eta: 2.5e-3\n"          /* line 5 */
                         "  etaa: 7\n"              /* line 6 */
                         "empty:\n"                 /* line 7 */
                         "flag: true\n";            /* line 8 */

static void test_open_and_positions(void)
{
    kcs_yctx y;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_yaml_open_string(&y, "doc.yaml", DOC, &err), 0);
    struct fy_node *root = kcs_yaml_root(&y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_STRING_EQUAL(y.text, DOC);
    CU_ASSERT_STRING_EQUAL(y.path, "doc.yaml");
    int line, col;

    struct fy_node *b = kcs_yaml_get(&y, root, "b", true, "");
    kcs_yaml_pos(b, &line, &col);
    CU_ASSERT_EQUAL(line, 2);
    CU_ASSERT_EQUAL(col, 5); /* content of the quoted scalar */

    struct fy_node *c = kcs_yaml_get(&y, root, "c", true, "");
    struct fy_node *d = kcs_yaml_get(&y, c, "d", true, "c");
    kcs_yaml_pos(d, &line, &col); /* a sequence: its first item "10" */
    CU_ASSERT_EQUAL(line, 3);
    CU_ASSERT_EQUAL(col, 10);
    kcs_yaml_pos(c, &line, &col); /* a mapping: its first key "d" */
    CU_ASSERT_EQUAL(line, 3);
    CU_ASSERT_EQUAL(col, 6);
    struct fy_node *e = kcs_yaml_get(&y, c, "e", true, "c");
    kcs_yaml_pos(e, &line, &col); /* empty "{}": the key "e" */
    CU_ASSERT_EQUAL(line, 3);
    CU_ASSERT_EQUAL(col, 19);

    struct fy_node *empty = kcs_yaml_get(&y, root, "empty", true, "");
    CU_ASSERT_PTR_NOT_NULL(empty);
    kcs_yaml_pos(empty, &line, &col); /* "empty:" without value: the key */
    CU_ASSERT_EQUAL(line, 7);
    CU_ASSERT_EQUAL(col, 1);
    CU_ASSERT_EQUAL(y.n_errors, 0);
    CU_ASSERT_EQUAL(kcs_yaml_finish(&y, &err), 0);
    kcs_yaml_close(&y);
    CU_ASSERT_PTR_NULL(y.doc);
    CU_ASSERT_PTR_NULL(y.text);
    kcs_yaml_close(&y); /* twice is harmless */
}

static void test_keys_and_missing(void)
{
    kcs_yctx y;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_yaml_open_string(&y, "doc.yaml", DOC, &err), 0);
    struct fy_node *root = kcs_yaml_root(&y);
    struct fy_node *tol = kcs_yaml_get(&y, root, "tol", true, "");
    static const char *const allowed[] = {"eta", "derivation", NULL};
    kcs_yaml_check_keys(&y, tol, "tol", allowed);
    CU_ASSERT_EQUAL(y.n_errors, 1);
    CU_ASSERT(HAS(y.errors[0], "doc.yaml:6:3: tol.etaa: unknown key"));
    CU_ASSERT(HAS(y.errors[0], "eta, derivation"));

    CU_ASSERT_PTR_NULL(kcs_yaml_get(&y, tol, "derivation", true, "tol"));
    CU_ASSERT_EQUAL(y.n_errors, 2);
    /* a mapping's position is its first key, "eta" at 5:3 */
    CU_ASSERT(HAS(y.errors[1], "doc.yaml:5:3: tol.derivation: missing required key"));
    CU_ASSERT_PTR_NULL(kcs_yaml_get(&y, tol, "optional", false, "tol"));
    CU_ASSERT_EQUAL(y.n_errors, 2);

    /* get on a non-mapping */
    struct fy_node *a = kcs_yaml_get(&y, root, "a", true, "");
    CU_ASSERT_PTR_NULL(kcs_yaml_get(&y, a, "x", true, "a"));
    CU_ASSERT_EQUAL(y.n_errors, 3);
    CU_ASSERT(HAS(y.errors[2], "doc.yaml:1:4: a: expected a mapping"));

    CU_ASSERT_EQUAL(kcs_yaml_finish(&y, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(err.code, KCS_E_INVAL);
    CU_ASSERT(HAS(err.msg, "tol.etaa: unknown key"));
    CU_ASSERT(HAS(err.msg, "\ndoc.yaml:5:3: tol.derivation"));
    /* finish puts the messages in document order */
    CU_ASSERT_EQUAL(strncmp(err.msg, "doc.yaml:1:4: a:", 16), 0);
    CU_ASSERT(strstr(err.msg, "doc.yaml:5:3:") < strstr(err.msg, "doc.yaml:6:3:"));
    kcs_yaml_close(&y);
}

static void test_scalars(void)
{
    const char *text = "i: 42\n"             /* 1 */
                       "neg: -7\n"           /* 2 */
                       "big: 99999999999999999999\n" /* 3 */
                       "q: \"5\"\n"          /* 4 */
                       "f: 2.5e-3\n"         /* 5 */
                       "inf: -.inf\n"        /* 6 */
                       "hex: 0x10\n"         /* 7 */
                       "t: true\n"           /* 8 */
                       "yes: yes\n"          /* 9 */
                       "s: hello world\n"    /* 10 */
                       "seq: [1, 2]\n"       /* 11 */
                       "nul: ~\n"            /* 12 */
                       "dot: 1.\n";          /* 13 */
    kcs_yctx y;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_yaml_open_string(&y, "s.yaml", text, &err), 0);
    struct fy_node *r = kcs_yaml_root(&y);
    int64_t iv = 0;
    double dv = 0;
    bool bv = false;
    char buf[8];

    CU_ASSERT(kcs_yaml_int(&y, kcs_yaml_get(&y, r, "i", true, ""), "i", 0, 100, &iv));
    CU_ASSERT_EQUAL(iv, 42);
    CU_ASSERT(kcs_yaml_int(&y, kcs_yaml_get(&y, r, "neg", true, ""), "neg", -10, 10, &iv));
    CU_ASSERT_EQUAL(iv, -7);
    CU_ASSERT_EQUAL(y.n_errors, 0);

    iv = 123;
    CU_ASSERT_FALSE(kcs_yaml_int(&y, kcs_yaml_get(&y, r, "i", true, ""), "i", 0, 41, &iv));
    CU_ASSERT_EQUAL(iv, 123); /* untouched on failure */
    CU_ASSERT(HAS(y.errors[0], "s.yaml:1:4: i: 42 is out of range [0, 41]"));
    CU_ASSERT_FALSE(kcs_yaml_int(&y, kcs_yaml_get(&y, r, "big", true, ""), "big", INT64_MIN,
                                 INT64_MAX, &iv));
    CU_ASSERT(HAS(y.errors[1], "s.yaml:3:6: big:"));
    CU_ASSERT(HAS(y.errors[1], "out of range"));
    CU_ASSERT_FALSE(kcs_yaml_int(&y, kcs_yaml_get(&y, r, "q", true, ""), "q", 0, 10, &iv));
    CU_ASSERT(HAS(y.errors[2], "s.yaml:4:5: q: expected an integer, got a quoted string"));
    CU_ASSERT_FALSE(kcs_yaml_int(&y, kcs_yaml_get(&y, r, "f", true, ""), "f", 0, 10, &iv));
    CU_ASSERT(HAS(y.errors[3], "f: expected an integer, got '2.5e-3'"));
    CU_ASSERT_EQUAL(y.n_errors, 4);

    CU_ASSERT(kcs_yaml_num(&y, kcs_yaml_get(&y, r, "f", true, ""), "f", &dv));
    CU_ASSERT_EQUAL(dv, 2.5e-3);
    CU_ASSERT(kcs_yaml_num(&y, kcs_yaml_get(&y, r, "inf", true, ""), "inf", &dv));
    CU_ASSERT(isinf(dv) && dv < 0);
    CU_ASSERT(kcs_yaml_num(&y, kcs_yaml_get(&y, r, "i", true, ""), "i", &dv));
    CU_ASSERT_EQUAL(dv, 42.0);
    CU_ASSERT(kcs_yaml_num(&y, kcs_yaml_get(&y, r, "dot", true, ""), "dot", &dv));
    CU_ASSERT_EQUAL(dv, 1.0);
    CU_ASSERT_EQUAL(y.n_errors, 4);
    CU_ASSERT_FALSE(kcs_yaml_num(&y, kcs_yaml_get(&y, r, "hex", true, ""), "hex", &dv));
    CU_ASSERT(HAS(y.errors[4], "s.yaml:7:6: hex: expected a number, got '0x10'"));

    CU_ASSERT(kcs_yaml_bool(&y, kcs_yaml_get(&y, r, "t", true, ""), "t", &bv));
    CU_ASSERT(bv);
    CU_ASSERT_FALSE(kcs_yaml_bool(&y, kcs_yaml_get(&y, r, "yes", true, ""), "yes", &bv));
    CU_ASSERT(HAS(y.errors[5], "s.yaml:9:6: yes: expected a boolean"));

    CU_ASSERT(kcs_yaml_str(&y, kcs_yaml_get(&y, r, "q", true, ""), "q", buf, sizeof buf));
    CU_ASSERT_STRING_EQUAL(buf, "5");
    CU_ASSERT_FALSE(kcs_yaml_str(&y, kcs_yaml_get(&y, r, "s", true, ""), "s", buf, sizeof buf));
    CU_ASSERT(HAS(y.errors[6], "s: string longer than 7 characters"));
    char *dup = kcs_yaml_strdup(&y, kcs_yaml_get(&y, r, "s", true, ""), "s");
    CU_ASSERT_STRING_EQUAL(dup, "hello world");
    free(dup);
    CU_ASSERT_PTR_NULL(kcs_yaml_strdup(&y, kcs_yaml_get(&y, r, "seq", true, ""), "seq"));
    CU_ASSERT(HAS(y.errors[7], "s.yaml:11:7: seq: expected a string, got a sequence"));
    CU_ASSERT_FALSE(kcs_yaml_str(&y, kcs_yaml_get(&y, r, "nul", true, ""), "nul", buf, sizeof buf));
    CU_ASSERT(HAS(y.errors[8], "s.yaml:12:6: nul: expected a string, got an empty value"));
    /* NULL node (absent optional key): false, no diagnostic */
    CU_ASSERT_FALSE(kcs_yaml_int(&y, NULL, "x", 0, 1, &iv));
    CU_ASSERT_EQUAL(y.n_errors, 9);
    kcs_yaml_close(&y);
}

static void expect_open_fails(const char *text, const char *needle)
{
    kcs_yctx y;
    kcs_error err = {0};
    int rc = kcs_yaml_open_string(&y, "bad.yaml", text, &err);
    CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
    CU_ASSERT_EQUAL(err.code, KCS_E_INVAL);
    if (!HAS(err.msg, needle)) {
        fprintf(stderr, "\nwanted '%s' in '%s'\n", needle, err.msg);
        CU_FAIL("diagnostic");
    }
    CU_ASSERT_PTR_NULL(y.doc); /* released on failure */
    kcs_yaml_close(&y);
}

static void test_open_errors(void)
{
    expect_open_fails("a: [1, 2\nb: 3\n", "bad.yaml:3:1: YAML syntax error:");
    expect_open_fails("a: 1\na: 2\n", "bad.yaml:2:1: YAML syntax error: duplicate key");
    expect_open_fails("", "bad.yaml:1:1: empty document");
    expect_open_fails("# only a comment\n", "bad.yaml:1:1: empty document");
    expect_open_fails("- 1\n- 2\n", "bad.yaml:1:3: the document root must be a mapping");
    expect_open_fails("a: 1\n---\nb: 2\n", "bad.yaml:2:1: only one YAML document");
    expect_open_fails("a: &x 1\nb: *x\n", "bad.yaml:2:5: anchors and aliases are not supported");
    expect_open_fails("a:\n\tb: 1\n", "bad.yaml:2:1: YAML syntax error:");
    /* malformed UTF-8 is refused before libfyaml sees it (0.7.12 hangs on
     * "%\xff" in a directive) */
    expect_open_fails("%\xff\n", "bad.yaml:1:2: invalid UTF-8 (byte 0xff)");
    expect_open_fails("a: \xc3\xa9\xc3\n", "bad.yaml:1:5: invalid UTF-8 (byte 0xc3)");
    expect_open_fails("a: 1\nb: \xed\xa0\x80\n", "bad.yaml:2:4: invalid UTF-8 (byte 0xed)");
    expect_open_fails("a: \xc0\xaf\n", "bad.yaml:1:4: invalid UTF-8 (byte 0xc0)");
    expect_open_fails("a: \xf4\x90\x80\x80\n", "bad.yaml:1:4: invalid UTF-8 (byte 0xf4)");
    /* escapes can make a scalar invalid: "\0" and a lone surrogate */
    expect_open_fails("a: 1\nb: \"x\\0y\"\n", "bad.yaml:2:5: a scalar contains a NUL character");
    expect_open_fails("a: \"\\ud800\"\n", "bad.yaml:1:5:");
    {
        kcs_yctx y;
        kcs_error err = {0};
        /* well-formed multi-byte text is fine: e, euro sign, U+10FFFF */
        CU_ASSERT_EQUAL(
            kcs_yaml_open_string(&y, "u.yaml", "a: \xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf\n", &err),
            0);
        kcs_yaml_close(&y);
    }

    kcs_yctx y;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_yaml_open(&y, "/nonexistent/kcs/x.yaml", &err), KCS_E_INVAL); /* a missing input is bad input */
    CU_ASSERT(HAS(err.msg, "/nonexistent/kcs/x.yaml: cannot open"));
}

static void test_open_file(void)
{
    char path[] = "/tmp/kcs_yamlx_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("x:\n  y: [1, 2, 3]\n  z: oops: no\n", f);
    fclose(f);
    kcs_yctx y;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_yaml_open(&y, path, &err), KCS_E_INVAL);
    char want[64];
    snprintf(want, sizeof want, "%s:3:10:", path); /* the second ':' of "z: oops: no" */
    CU_ASSERT(HAS(err.msg, want));

    f = fopen(path, "w");
    fputs("x:\n  y: [1, 2, 3]\n", f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(kcs_yaml_open(&y, path, &err), 0);
    CU_ASSERT_STRING_EQUAL(y.text, "x:\n  y: [1, 2, 3]\n");
    struct fy_node *x = kcs_yaml_get(&y, kcs_yaml_root(&y), "x", true, "");
    struct fy_node *yy = kcs_yaml_get(&y, x, "y", true, "x");
    CU_ASSERT_EQUAL(fy_node_sequence_item_count(yy), 3);
    kcs_yaml_error(&y, NULL, "x", "root level");
    CU_ASSERT(HAS(y.errors[0], ":1:1: x: root level"));
    kcs_yaml_close(&y);
    unlink(path);
}

static void test_error_cap(void)
{
    kcs_yctx y;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_yaml_open_string(&y, "c.yaml", "a: 1\n", &err), 0);
    for (int i = 0; i < KCS_YAML_MAX_ERRORS + 5; i++)
        kcs_yaml_error(&y, NULL, "f", "error number %d", i);
    CU_ASSERT_EQUAL(y.n_errors, KCS_YAML_MAX_ERRORS);
    CU_ASSERT(HAS(y.errors[0], "c.yaml:1:1: f: error number 0"));
    CU_ASSERT(HAS(y.errors[KCS_YAML_MAX_ERRORS - 1], "further errors omitted"));
    CU_ASSERT_EQUAL(kcs_yaml_finish(&y, &err), KCS_E_INVAL);
    CU_ASSERT(strlen(err.msg) < KCS_ERRMSG_MAX);
    CU_ASSERT(HAS(err.msg, "error number 0\n"));
    kcs_yaml_close(&y);
}

/* A mapping of n keys "k0: 0" ... after "a: 1", or a flow list of n items. */
static char *big_mapping(long n)
{
    char *t = malloc((size_t)n * 24 + 16), *p = t;
    p += sprintf(p, "a: 1\n");
    for (long i = 0; i < n; i++)
        p += sprintf(p, "k%ld: %ld\n", i, i);
    return t;
}

static char *big_list(long n)
{
    char *t = malloc((size_t)n * 2 + 32), *p = t;
    p += sprintf(p, "a: 1\nl: [");
    for (long i = 0; i < n; i++)
        p += sprintf(p, "%s1", i ? "," : "");
    sprintf(p, "]\n");
    return t;
}

static void test_limits(void)
{
    kcs_yctx y;
    kcs_error err = {0};
    /* At the limits: parsed (1024 keys = "a" + 1023 more; 65536 items). */
    char *t = big_mapping(KCS_YAML_MAX_KEYS - 1);
    CU_ASSERT_EQUAL(kcs_yaml_open_string(&y, "m.yaml", t, &err), 0);
    kcs_yaml_close(&y);
    free(t);
    t = big_list(KCS_YAML_MAX_ITEMS);
    CU_ASSERT_EQUAL(kcs_yaml_open_string(&y, "l.yaml", t, &err), 0);
    kcs_yaml_close(&y);
    free(t);
    /* One past: refused, at the position of the key or item that went over
     * (key 1025 is on line 1025: "a" is line 1, k0 line 2). */
    t = big_mapping(KCS_YAML_MAX_KEYS);
    expect_open_fails(t, "bad.yaml:1025:1: a mapping with more than 1024 keys");
    free(t);
    t = big_list(KCS_YAML_MAX_ITEMS + 1);
    expect_open_fails(t, "a list with more than 65536 items");
    free(t);
    /* The file-wide bound: nine mappings of 1000 keys each pass the
     * per-mapping limit, but not the bound on the builder's total work
     * (9 x 1000^2/2 > KCS_YAML_MAX_KEY_WORK). */
    char *m = malloc(9 * 1000 * 20 + 64), *p = m;
    p += sprintf(p, "a: 1\n");
    for (int j = 0; j < 9; j++) {
        p += sprintf(p, "m%d:\n", j);
        for (int i = 0; i < 1000; i++)
            p += sprintf(p, "  k%d: %d\n", i, i);
    }
    expect_open_fails(m, "sum of keys^2/2 over mappings exceeds");
    free(m);
}

static const ut_test tests[] = {
    {"open and positions", test_open_and_positions},
    {"keys and missing", test_keys_and_missing},
    {"scalars", test_scalars},
    {"open errors", test_open_errors},
    {"open file", test_open_file},
    {"error cap", test_error_cap},
    {"size limits", test_limits},
};

UT_MAIN("yamlx", tests)
