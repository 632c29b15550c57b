/* The points of C-PRC-05's sweep (src/calibrate/calib_sweep_elem.c), read
 * from the shipped contracts: the element count from the precondition's
 * minimum to its maximum by factors of 4, bounded by --min-k/--max-k, one
 * row (m = n = 1; below 64 elements, rows enough for 64 values), inside the precondition; no other shipped contract is
 * swept there. */
#include <stdint.h>
#include <string.h>

#include "calib_sweep_elem.h"
#include "calibrate.h"
#include "shipped_contracts.h"
#include "precondition.h"
#include "unit_helpers.h"

static void test_points(void)
{
    const kcs_contract *c = find("C-PRC-05");
    kcs_shape p[64];
    kcs_sweep_opts o = {1, 0, 4, 0, 0};
    int n = kcs_sweep_elem_points(c, &o, p, 64);
    CU_ASSERT_FATAL(n >= 2);
    CU_ASSERT_EQUAL(p[0].k, c->k_min > 1 ? c->k_min : 1);
    CU_ASSERT_EQUAL(p[n - 1].k, c->k_max);
    for (int i = 0; i < n; i++) {
        /* rows enough for 64 values per call below 64 elements */
        CU_ASSERT_EQUAL(p[i].m, p[i].k >= 64 ? 1 : (64 + p[i].k - 1) / p[i].k);
        CU_ASSERT_EQUAL(p[i].n, 1);
        CU_ASSERT(kcs_precondition_shape_ok(c, &p[i]));
        if (i > 0) {
            CU_ASSERT(p[i].k > p[i - 1].k);
            CU_ASSERT(p[i].k <= 4 * p[i - 1].k);
        }
    }
    /* --min-k / --max-k bound the axis; the cap itself is a point */
    o.min_k = 16;
    o.max_k = 1000;
    int m = kcs_sweep_elem_points(c, &o, p, 64);
    CU_ASSERT_FATAL(m >= 2);
    CU_ASSERT(p[0].k >= 16);
    CU_ASSERT_EQUAL(p[m - 1].k, 1000);
    /* room for fewer points than the axis holds */
    o.min_k = 0;
    o.max_k = 0;
    CU_ASSERT_EQUAL(kcs_sweep_elem_points(c, &o, p, 3), 3);
}

static void test_which(void)
{
    kcs_sweep_opts o = {1, 0, 4, 0, 0};
    kcs_shape p[64];
    int swept = 0;
    for (int i = 0; i < n_contracts; i++) {
        int n = kcs_sweep_elem_points(contracts[i], &o, p, 64);
        if (n > 0) {
            CU_ASSERT_STRING_EQUAL(contracts[i]->id, "C-PRC-05");
            swept++;
        }
    }
    CU_ASSERT_EQUAL(swept, 1);
}

static const ut_test tests[] = {
    {"C-PRC-05's points span the element count", test_points},
    {"only the elementwise exp contract is swept here", test_which},
};

UT_MAIN_FIXTURE("sweep_elem", shipped_contracts_load, shipped_contracts_free, tests)
