/* Op attributes "key=value;key=value" (src/arith/attrs.c). */
#include <CUnit/Basic.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "unit_helpers.h"

static void test_get(void)
{
    char v[16];
    CU_ASSERT_EQUAL(kcs_attrs_get("oob=raise;nan=propagate", "oob", v, sizeof v), 1);
    CU_ASSERT_STRING_EQUAL(v, "raise");
    CU_ASSERT_EQUAL(kcs_attrs_get("oob=raise;nan=propagate", "nan", v, sizeof v), 1);
    CU_ASSERT_STRING_EQUAL(v, "propagate");
    /* spaces around keys and values, empty segments, a trailing ';' */
    CU_ASSERT_EQUAL(kcs_attrs_get(" oob = clamp ;; block=16;", "block", v, sizeof v), 1);
    CU_ASSERT_STRING_EQUAL(v, "16");
    CU_ASSERT_EQUAL(kcs_attrs_get(" oob = clamp ;; block=16;", "oob", v, sizeof v), 1);
    CU_ASSERT_STRING_EQUAL(v, "clamp");
    /* absent: 0, buf untouched; a key is matched whole, not as a prefix */
    strcpy(v, "x");
    CU_ASSERT_EQUAL(kcs_attrs_get("oobx=raise", "oob", v, sizeof v), 0);
    CU_ASSERT_EQUAL(kcs_attrs_get("noob=raise", "oob", v, sizeof v), 0);
    CU_ASSERT_EQUAL(kcs_attrs_get("", "oob", v, sizeof v), 0);
    CU_ASSERT_EQUAL(kcs_attrs_get(NULL, "oob", v, sizeof v), 0);
    CU_ASSERT_STRING_EQUAL(v, "x");
    /* the value must fit: "raise" needs 6 bytes */
    CU_ASSERT_EQUAL(kcs_attrs_get("oob=raise", "oob", v, 5), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_attrs_get("oob=raise", "oob", v, 6), 1);
}

static void test_strict(void)
{
    const char *bad[] = {"oob",        "=raise",  "oob=",         "oob=a=b", "OOB=raise",
                         "o-b=raise",  "oob=raise;nan", "oob=raise;oob=clamp",
                         " oob =raise; oob=zero"};
    char v[16];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(kcs_attrs_check(bad[i]), KCS_E_INVAL);
        /* malformed anywhere is an error even when the key looked up is fine */
        CU_ASSERT_EQUAL(kcs_attrs_get(bad[i], "nan", v, sizeof v), KCS_E_INVAL);
    }
    const char *good[] = {NULL, "", ";", "a=1", "a_b2=x y", "a=1;b=2;c=3;"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CU_ASSERT_EQUAL(kcs_attrs_check(good[i]), 0);
}

static const ut_test tests[] = {
    {"lookup", test_get},
    {"strict syntax", test_strict},
};

UT_MAIN("attrs", tests)
