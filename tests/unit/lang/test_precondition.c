/* Preconditions' shape ranges and shape classes (src/lang/precondition.c,
 * contract_shape_class.c): precondition.shape.multiple_of loads, prints
 * and reads back; a shape outside the class is refused with a message
 * naming the range and the class; the loader refuses empty classes, bad
 * steps and measured shapes outside the class (file:line:field);
 * kcs_precondition_fit moves a value into the class. Contracts without a
 * class keep their old messages. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "precondition.h"
#include "unit_helpers.h"

/* A test contract whose precondition has `shape_line` (YAML under
 * precondition:) and measured shapes `shapes`; NULL with *err set on
 * failure. */
static kcs_contract *load_shape(const char *shape_line, const char *shapes, kcs_error *err)
{
    ut_contract s = {.shapes = shapes};
    return ut_contract_load_pre(&s, shape_line, "pre.yaml", err);
}

static void test_class_check(void)
{
    kcs_error err = {0};
    kcs_contract *c = load_shape("  shape: { k: [16, 4096], batch: [1, 64], "
                                 "multiple_of: { k: 16, batch: 4 } }",
                                 "[[4, 4, 64, 8], [4, 4, 4096, 4]]", &err);
    if (!c)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->shape_mult[2], 16);
    CU_ASSERT_EQUAL(c->shape_mult[3], 4);
    CU_ASSERT(c->shape_mult[0] == 0 && c->shape_mult[1] == 0);
    const int64_t ks[] = {16, 32, 48, 4096, 17, 40, 4095, 8, 4112};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        kcs_shape sh = {7, 3, ks[i], 4};
        int want = ks[i] >= 16 && ks[i] <= 4096 && ks[i] % 16 == 0;
        err = (kcs_error){0};
        int rc = kcs_precondition_shape(c, &sh, &err);
        CU_ASSERT_EQUAL(rc == 0, want);
        CU_ASSERT_EQUAL(kcs_precondition_shape_ok(c, &sh), want);
        if (want)
            continue;
        char msg[256];
        if (ks[i] >= 16 && ks[i] <= 4096)
            snprintf(msg, sizeof msg, "dimension k = %lld is not a multiple of 16: the "
                     "precondition of C-PRC-90 admits k in [16, 4096], multiples of 16 "
                     "(precondition.shape.multiple_of.k)", (long long)ks[i]);
        else
            snprintf(msg, sizeof msg, "dimension k = %lld is outside the precondition's range "
                     "[16, 4096], multiples of 16 of C-PRC-90", (long long)ks[i]);
        CU_ASSERT_STRING_EQUAL(err.msg, msg);
    }
    /* batch: its class too; batch 0 counts as 1, which is not a multiple of 4 */
    kcs_shape b6 = {4, 4, 64, 6}, b0 = {4, 4, 64, 0}, b8 = {4, 4, 64, 8};
    CU_ASSERT_FALSE(kcs_precondition_shape_ok(c, &b6));
    CU_ASSERT_FALSE(kcs_precondition_shape_ok(c, &b0));
    CU_ASSERT(kcs_precondition_shape_ok(c, &b8));
    int64_t v, mult;
    CU_ASSERT_STRING_EQUAL(kcs_contract_shape_class_miss(c, &b6, &v, &mult), "batch");
    CU_ASSERT(v == 6 && mult == 4);
    CU_ASSERT_PTR_NULL(kcs_contract_shape_class_miss(c, &b8, &v, &mult));

    /* fit: into the range, then up to the class, down at the top edge */
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 1), 16);
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 17), 32);
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 64), 64);
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 1 << 20), 4096);
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 0, 5), 5); /* m: no class */
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 3, 63), 64);
    kcs_contract_free(c);

    /* top edge not a multiple: fit goes down */
    c = load_shape("  shape: { k: [16, 1000], multiple_of: { k: 16 } }", "[[4, 4, 992]]", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 999), 992);
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 5000), 992);
    kcs_contract_free(c);
}

/* Without a class: old messages, every value of the range admitted. */
static void test_no_class(void)
{
    kcs_error err = {0};
    kcs_contract *c = load_shape("  shape: { k: [1, 4096] }", "[[4, 4, 64]]", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    for (int d = 0; d < 4; d++)
        CU_ASSERT_EQUAL(c->shape_mult[d], 0);
    kcs_shape ok = {3, 5, 4095, 0}, out = {3, 5, 4097, 0};
    CU_ASSERT(kcs_precondition_shape_ok(c, &ok));
    CU_ASSERT_EQUAL(kcs_precondition_shape(c, &out, &err), KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "dimension k = 4097 is outside the precondition's range "
                                    "[1, 4096] of C-PRC-90");
    CU_ASSERT_EQUAL(kcs_precondition_fit(c, 2, 4095), 4095);
    kcs_contract_free(c);
}

/* The normal form keeps the class and reads back to itself. */
static void test_print(void)
{
    kcs_error err = {0};
    kcs_contract *c = load_shape("  shape: { m: [1, 256], k: [32, 65536], "
                                 "multiple_of: { m: 8, k: 32 } }",
                                 "[[8, 4, 64]]", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_contract *c2 = NULL;
    char *p1 = ut_contract_reprint(c, "p.yaml", &c2);
    CU_ASSERT(strstr(p1, "  shape: {m: [1, 256], k: [32, 65536], multiple_of: {m: 8, k: 32}}\n")
              != NULL);
    CU_ASSERT(c2->shape_mult[0] == 8 && c2->shape_mult[2] == 32);
    char *js = ut_contract_print(c, true);
    CU_ASSERT(strstr(js, "\"multiple_of\": {\"m\": 8, \"k\": 32}") != NULL);
    free(p1), free(js);
    kcs_contract_free(c);
    kcs_contract_free(c2);
}

/* Malformed classes: file:line:col: field: message. */
static void test_bad_classes(void)
{
    static const struct {
        const char *shape, *shapes, *want;
    } bad[] = {
        {"  shape: { k: [17, 31], multiple_of: { k: 16 } }", "[[4, 4, 20]]",
         "pre.yaml:10:43: precondition.shape.multiple_of.k: no multiple of 16 lies in "
         "precondition.shape.k [17, 31]"},
        {"  shape: { k: [1, 4096], multiple_of: { k: 0 } }", "[[4, 4, 64]]",
         "pre.yaml:10:44: precondition.shape.multiple_of.k: 0 is out of range"},
        {"  shape: { k: [1, 4096], multiple_of: { q: 2 } }", "[[4, 4, 64]]",
         "pre.yaml:10:41: precondition.shape.multiple_of.q: unknown key (allowed: m, n, k, batch)"},
        {"  shape: { k: [1, 4096], multiple_of: 16 }", "[[4, 4, 64]]",
         "pre.yaml:10:39: precondition.shape.multiple_of: expected a mapping"},
        {"  shape: { k: [1, 4096], multiple_of: { k: 48 } }", "[[4, 4, 96], [4, 4, 64]]",
         ": measurement.shapes[1]: k = 64 is not a multiple of 48 "
         "(precondition.shape.multiple_of.k)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kcs_error err = {0};
        kcs_contract *c = load_shape(bad[i].shape, bad[i].shapes, &err);
        ut_expect_refused(i, c, &err, bad[i].want, NULL);
    }
}

static const ut_test tests[] = {
    {"shape classes: check and fit", test_class_check},
    {"no class: old behaviour", test_no_class},
    {"normal form", test_print},
    {"malformed classes", test_bad_classes},
};

UT_MAIN("precondition", tests)
