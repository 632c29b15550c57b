/* Kernel declarations (src/arith/declares.c): names, lists, refusal of
 * unknown names, the text form. */
#include <CUnit/Basic.h>
#include <string.h>

#include "declares.h"
#include "error.h"
#include "unit_helpers.h"

static void test_lists(void)
{
    uint32_t m = 99;
    char bad[32];
    CU_ASSERT_EQUAL(kcs_decls_parse(NULL, &m, bad, sizeof bad), 0);
    CU_ASSERT_EQUAL(m, 0u);
    CU_ASSERT_EQUAL(kcs_decls_parse("", &m, bad, sizeof bad), 0);
    CU_ASSERT_EQUAL(m, 0u);
    const char *same[] = {"batch_invariant", " batch_invariant ", "batch_invariant,",
                          "batch_invariant; batch_invariant", "\tbatch_invariant\n"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        m = 0;
        CU_ASSERT_EQUAL(kcs_decls_parse(same[i], &m, bad, sizeof bad), 0);
        CU_ASSERT_EQUAL(m, KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT));
    }
    /* an unknown name anywhere refuses the list and is named */
    m = 7;
    CU_ASSERT_EQUAL(kcs_decls_parse("batch_invariant, deterministic", &m, bad, sizeof bad),
                    KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(bad, "deterministic");
    CU_ASSERT_EQUAL(m, 7u); /* untouched */
    CU_ASSERT_EQUAL(kcs_decls_parse("Batch_Invariant", &m, bad, sizeof bad), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_decls_parse("batch_invariantx", &m, bad, sizeof bad), KCS_E_INVAL);
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CU_ASSERT_EQUAL(kcs_decls_parse(longname, &m, bad, sizeof bad), KCS_E_INVAL);
}

static void test_names(void)
{
    kcs_decl d;
    CU_ASSERT_EQUAL(kcs_decl_parse("batch_invariant", &d), 0);
    CU_ASSERT_EQUAL(d, KCS_DECL_BATCH_INVARIANT);
    CU_ASSERT_STRING_EQUAL(kcs_decl_name(KCS_DECL_BATCH_INVARIANT), "batch_invariant");
    CU_ASSERT_STRING_EQUAL(kcs_decl_name(KCS_DECL_COUNT), "?");
    char buf[64];
    CU_ASSERT_STRING_EQUAL(kcs_decls_str(0, buf, sizeof buf), "");
    CU_ASSERT_STRING_EQUAL(kcs_decls_str(KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT), buf, sizeof buf),
                           "batch_invariant");
    /* the text form reads back */
    uint32_t m = 0;
    CU_ASSERT_EQUAL(kcs_decls_parse(buf, &m, NULL, 0), 0);
    CU_ASSERT_EQUAL(m, KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT));
    CU_ASSERT_EQUAL(kcs_decl_parse("nan_mask", &d), 0);
    CU_ASSERT_EQUAL(d, KCS_DECL_NAN_MASK);
    CU_ASSERT_EQUAL(kcs_decls_parse("nan_mask, batch_invariant", &m, NULL, 0), 0);
    CU_ASSERT_EQUAL(m, KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT) | KCS_DECL_BIT(KCS_DECL_NAN_MASK));
    CU_ASSERT_STRING_EQUAL(kcs_decls_str(m, buf, sizeof buf), "batch_invariant,nan_mask");
    CU_ASSERT_EQUAL(kcs_decl_parse("round_to_nearest", &d), 0);
    CU_ASSERT_EQUAL(d, KCS_DECL_ROUND_NEAREST);
    CU_ASSERT_EQUAL(kcs_decls_parse("round_to_nearest;nan_mask", &m, NULL, 0), 0);
    CU_ASSERT_STRING_EQUAL(kcs_decls_str(m, buf, sizeof buf), "nan_mask,round_to_nearest");
    /* every name is listed in the known-names text */
    for (int i = 0; i < KCS_DECL_COUNT; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(kcs_decls_known(), kcs_decl_name((kcs_decl)i)));
}

static const ut_test tests[] = {
    {"lists", test_lists},
    {"names and text form", test_names},
};

UT_MAIN("declares", tests)
