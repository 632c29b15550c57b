/* Unit tests of the expression language (src/lang/expr.c). Expected values are
 * worked out by hand from the grammar in expr.h and IEEE arithmetic; unit
 * roundoffs from the formats' precisions (fp32 p=24, bf16 p=8, fp16 p=11). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "unit_helpers.h"

enum { S_M, S_K, S_TAU, S_X, S_DTYPE_IN, S_DTYPE_ACC, S_FP32, S_BF16, S_FP16, S_N };

static const kcs_expr_sym syms[S_N] = {
    [S_M] = {"m", KCS_EXPR_NUMBER},
    [S_K] = {"k", KCS_EXPR_NUMBER},
    [S_TAU] = {"tau", KCS_EXPR_NUMBER},
    [S_X] = {"x", KCS_EXPR_NUMBER},
    [S_DTYPE_IN] = {"dtype_in", KCS_EXPR_FORMAT},
    [S_DTYPE_ACC] = {"dtype_acc", KCS_EXPR_FORMAT},
    [S_FP32] = {"fp32", KCS_EXPR_FORMAT},
    [S_BF16] = {"bf16", KCS_EXPR_FORMAT},
    [S_FP16] = {"fp16", KCS_EXPR_FORMAT},
};
static const kcs_expr_symtab tab = {syms, S_N};
static double vals[S_N];

static void reset_vals(void)
{
    vals[S_M] = 64;
    vals[S_K] = 4096;
    vals[S_TAU] = 0.5;
    vals[S_X] = 3;
    vals[S_DTYPE_IN] = KCS_FMT_BF16;
    vals[S_DTYPE_ACC] = KCS_FMT_FP32;
    vals[S_FP32] = KCS_FMT_FP32;
    vals[S_BF16] = KCS_FMT_BF16;
    vals[S_FP16] = KCS_FMT_FP16;
}

/* Parse (must succeed) and evaluate. */
static double ev(const char *text)
{
    kcs_expr *e = NULL;
    kcs_error err = {0};
    int rc = kcs_expr_parse(text, &tab, &e, NULL, &err);
    if (rc) {
        fprintf(stderr, "\nparse of '%s' failed: %s\n", text, err.msg);
        CU_FAIL("parse failed");
        return NAN;
    }
    double v = kcs_expr_eval(e, vals);
    kcs_expr_free(e);
    return v;
}

#define EV(text, want) CU_ASSERT_EQUAL(ev(text), (want))

/* Parse must fail at column col with msg containing needle. */
static void fails(const char *text, int col, const char *needle)
{
    kcs_expr *e = (kcs_expr *)&e; /* must stay untouched */
    kcs_expr *orig = e;
    kcs_error err = {0};
    int c = -1;
    int rc = kcs_expr_parse(text, &tab, &e, &c, &err);
    CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
    CU_ASSERT_PTR_EQUAL(e, orig);
    if (rc == 0) {
        fprintf(stderr, "\n'%s' parsed, expected failure\n", text);
        kcs_expr_free(e);
        return;
    }
    char want[32];
    snprintf(want, sizeof want, "col %d: ", col);
    if (c != col || strncmp(err.msg, want, strlen(want)) || !strstr(err.msg, needle)) {
        fprintf(stderr, "\n'%s': got col %d '%s', want col %d '%s'\n", text, c, err.msg, col,
                needle);
        CU_FAIL("diagnostic");
    }
}

static void test_precedence(void)
{
    reset_vals();
    EV("1 + 2 * 3", 7);
    EV("(1 + 2) * 3", 9);
    EV("10 - 4 - 3", 3);     /* left associative */
    EV("8 / 4 / 2", 1);
    EV("2 ^ 3 ^ 2", 512);    /* right associative: 2^9 */
    EV("-2 ^ 2", -4);        /* unary minus binds looser than ^ */
    EV("2 ^ -1", 0.5);
    EV("2*-3", -6);
    EV("- - 5", 5);
    EV("!0 + 1", 2);         /* ! binds tighter than + */
    EV("!1 == 0", 1);
    EV("1 + 2 < 4", 1);
    EV("1 + 2 <= 2", 0);
    EV("1 || 0 && 0", 1);    /* && binds tighter than || */
    EV("(1 || 0) && 0", 0);
    EV("3 >= 3 && 2 != 2", 0);
}

static void test_numbers_and_functions(void)
{
    reset_vals();
    EV("1e-3", 1e-3);
    EV(".5", 0.5);
    EV("1.", 1.0);
    EV("2.5E+2", 250);
    EV("sqrt(16)", 4);
    EV("log2(1024)", 10);
    EV("abs(-3)", 3);
    EV("min(3, 1, 2)", 1);
    EV("max(1, 5, 2)", 5);
    EV("max(min(4, 9), 2) * 2", 8);
    CU_ASSERT(isinf(ev("1 / 0")));
    CU_ASSERT(isnan(ev("log2(-1)")));
    EV(" 1\t+\n2 ", 3); /* whitespace incl. newlines from folded YAML */
}

static void test_formats_and_symbols(void)
{
    reset_vals();
    EV("2 * k * u(dtype_acc)", 2.0 * 4096 * ldexp(1.0, -24));
    EV("bits(dtype_acc)", 24);
    EV("bits(fp16)", 11);
    EV("eps(bf16)", ldexp(1.0, -7));
    EV("u(dtype_in)", ldexp(1.0, -8));
    EV("dtype_acc == fp32", 1);
    EV("dtype_acc != bf16", 1);
    EV("dtype_in == fp16", 0);
    EV("tau > 1 && x < bits(dtype_acc) - 4", 0);
    vals[S_TAU] = 2;
    EV("tau > 1 && x < bits(dtype_acc) - 4", 1);
    /* bits:N accumulators travel as -N */
    vals[S_DTYPE_ACC] = -14;
    EV("bits(dtype_acc)", 14);
    EV("u(dtype_acc)", ldexp(1.0, -14));
    EV("eps(dtype_acc)", ldexp(1.0, -13));
    vals[S_DTYPE_ACC] = 1e9; /* not a format */
    CU_ASSERT(isnan(ev("u(dtype_acc)")));
    /* truthiness: NaN is false */
    vals[S_X] = NAN;
    EV("x && 1", 0);
    EV("x || 0", 0);
    EV("!x", 1);
    reset_vals();

    kcs_expr *e = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_expr_parse("2 * k * u(dtype_acc)", &tab, &e, NULL, &err), 0);
    CU_ASSERT_EQUAL(kcs_expr_result_type(e), KCS_EXPR_NUMBER);
    CU_ASSERT(kcs_expr_uses(e, S_K));
    CU_ASSERT(kcs_expr_uses(e, S_DTYPE_ACC));
    CU_ASSERT_FALSE(kcs_expr_uses(e, S_M));
    CU_ASSERT_FALSE(kcs_expr_uses(e, S_TAU));
    kcs_expr_free(e);
    CU_ASSERT_EQUAL_FATAL(kcs_expr_parse("dtype_acc", &tab, &e, NULL, &err), 0);
    CU_ASSERT_EQUAL(kcs_expr_result_type(e), KCS_EXPR_FORMAT);
    CU_ASSERT_EQUAL(kcs_expr_eval(e, vals), (double)KCS_FMT_FP32);
    kcs_expr_free(e);
    CU_ASSERT_EQUAL_FATAL(kcs_expr_parse("(dtype_acc == fp32)", &tab, &e, NULL, &err), 0);
    CU_ASSERT_EQUAL(kcs_expr_result_type(e), KCS_EXPR_NUMBER);
    kcs_expr_free(e);
}

static void test_errors(void)
{
    reset_vals();
    fails("2 * kk", 5, "unknown name 'kk'");
    fails("u(k)", 3, "u() needs a format, got a number");
    fails("bits(2)", 6, "bits() needs a format");
    fails("sqrt(fp32)", 6, "sqrt() needs a number, got a format");
    fails("k + dtype_acc", 5, "'+' needs a number, got a format");
    fails("dtype_acc + 1", 1, "'+' needs a number, got a format");
    fails("2 * fp32", 5, "'*' needs a number");
    fails("-dtype_in", 2, "'-' needs a number");
    fails("fp32 < fp16", 1, "'<' needs a number");
    fails("dtype_acc == 1", 14, "'==' compares a format with a number");
    fails("dtype_acc && 1", 1, "'&&' needs a number");
    fails("1 +", 4, "expected a number, a name or '(', got end of expression");
    fails("(1 + 2", 7, "expected ')' to close '(' at column 1");
    fails("1 2", 3, "unexpected '2'");
    fails("foo(1)", 1, "unknown function 'foo'");
    fails("min(1)", 6, "min() takes at least 2 arguments, got 1");
    fails("sqrt(1, 2)", 9, "sqrt() takes 1 argument");
    fails("max(1 2)", 7, "expected ',' or ')' in call of max()");
    fails("u", 1, "function 'u' needs arguments");
    fails("1 < 2 < 3", 7, "comparisons cannot be chained");
    fails("2 > 1 == 1", 7, "comparisons cannot be chained");
    fails("k = 1", 3, "use '=='");
    fails("k & 1", 3, "use '&&'");
    fails("k | 1", 3, "use '||'");
    fails("1e", 1, "malformed number");
    fails("2k", 1, "malformed number");
    fails("1.2.3", 1, "malformed number");
    fails("1e999", 1, "number out of range");
    fails("", 1, "empty expression");
    fails("   ", 4, "empty expression");
    fails("k # 1", 3, "unexpected character '#'");
    fails("k \x01", 3, "unexpected byte 0x01");
    fails(")", 1, "got ')'");
    fails("sqrt(1))", 8, "unexpected ')'");
    fails("1 +* 2", 4, "got '*'");
}

static char *repeat(const char *pre, int n, const char *mid, const char *post, int m)
{
    size_t len = strlen(pre) * (size_t)n + strlen(mid) + strlen(post) * (size_t)m + 1;
    char *s = malloc(len);
    s[0] = '\0';
    for (int i = 0; i < n; i++)
        strcat(s, pre);
    strcat(s, mid);
    for (int i = 0; i < m; i++)
        strcat(s, post);
    return s;
}

static void test_limits(void)
{
    reset_vals();
    /* 90 nested parentheses: fine */
    char *s = repeat("(", 90, "k", ")", 90);
    EV(s, 4096);
    free(s);
    /* 150: refused with a message, not a stack overflow */
    s = repeat("(", 150, "1", ")", 150);
    /* each "(" costs two levels (or + unary): level 201 is entered for the
     * contents of the 100th "(", whose first token is the "(" at column 101 */
    fails(s, 101, "nested deeper than 200 levels");
    free(s);
    /* 2000 nested parentheses (no length problem): still only an error */
    s = repeat("(", 2000, "1", ")", 2000);
    kcs_expr *e = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_expr_parse(s, &tab, &e, NULL, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "nested deeper") != NULL);
    free(s);
    s = repeat("-", 1000, "1", "", 0);
    CU_ASSERT_EQUAL(kcs_expr_parse(s, &tab, &e, NULL, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "nested deeper") != NULL);
    free(s);
    /* a long flat sum stays within every limit: 2000 terms */
    s = repeat("1+", 1999, "1", "", 0);
    EV(s, 2000);
    free(s);
    /* right-nested sum deeper than the evaluator's local stack (64) */
    s = repeat("1+(", 80, "1", ")", 80);
    EV(s, 81);
    free(s);
    /* over the length limit */
    s = repeat("1+", 2100, "1", "", 0);
    CU_ASSERT_EQUAL(kcs_expr_parse(s, &tab, &e, NULL, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "longer than 4096 characters") != NULL);
    free(s);
    /* min/max argument count limit (32) */
    char buf[256] = "min(";
    for (int i = 32; i >= 1; i--) {
        char t[8];
        snprintf(t, sizeof t, "%d%s", i, i > 1 ? "," : ")");
        strcat(buf, t);
    }
    EV(buf, 1);
    char buf2[300] = "max(0,";
    strcat(buf2, buf + 4); /* 33 arguments */
    /* the 33rd argument is the final "1" */
    fails(buf2, (int)(strrchr(buf2, '1') - buf2) + 1, "max() takes at most 32 arguments");
}

static const ut_test tests[] = {
    {"precedence", test_precedence},
    {"numbers and functions", test_numbers_and_functions},
    {"formats and symbols", test_formats_and_symbols},
    {"errors", test_errors},
    {"limits", test_limits},
};

UT_MAIN("expr", tests)
