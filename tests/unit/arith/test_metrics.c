/* Metrics against hand-computed values, and digests. */
#include <CUnit/Basic.h>
#include <math.h>

#include "metrics.h"
#include "tensor.h"

static void test_hand_values(void)
{
    /* y vs ref: differences 0, 2^-20, -2^-22 at values 1, 2, 0.5 (fp32). */
    double ref[3] = {1.0, 2.0, 0.5};
    double y[3] = {1.0, 2.0 + 0x1p-20, 0.5 - 0x1p-22};
    double absref[3] = {4.0, 4.0, 1.0};
    kcs_metrics m;
    kcs_metrics_compute(y, ref, absref, 3, KCS_FMT_FP32, 2.0, 16, -1e30, &m);
    CU_ASSERT_EQUAL(m.max_abs, 0x1p-20);
    CU_ASSERT_EQUAL(m.max_rel, 0x1p-21);
    /* ULPs: at 2 the fp32 spacing is 2^-22 -> 4 ulp; at 0.5 (below) the
     * spacing is 2^-25 -> 8 ulp */
    CU_ASSERT_EQUAL(m.max_ulp, 8.0);
    CU_ASSERT_DOUBLE_EQUAL(m.mean_ulp, 4.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.backward_err, sqrt(0x1p-40 + 0x1p-44) / 2.0, 1e-20);
    CU_ASSERT_EQUAL(m.max_scaled, 0x1p-22); /* 2^-22/1 vs 2^-20/4 */
    CU_ASSERT_EQUAL(m.nan_count, 0);
    CU_ASSERT_EQUAL(m.sentinel_count, 0);
}

static void test_nonfinite_and_sentinel(void)
{
    double s = kcs_sentinel(KCS_FMT_FP32);
    CU_ASSERT(isfinite(s) && s < 0);
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP32, s));
    double ref[4] = {NAN, 1.0, INFINITY, 3.0};
    double y[4] = {NAN, NAN, INFINITY, s};
    kcs_metrics m;
    kcs_metrics_compute(y, ref, NULL, 4, KCS_FMT_FP32, 1.0, 4, s, &m);
    CU_ASSERT_EQUAL(m.nan_count, 2);
    CU_ASSERT_EQUAL(m.inf_count, 1);
    CU_ASSERT_EQUAL(m.mismatch_nonfinite, 1); /* NaN where 1.0 was due */
    CU_ASSERT_EQUAL(m.sentinel_count, 1);
    CU_ASSERT(isinf(m.backward_err));
}

static void test_guards(void)
{
    kcs_tensor t;
    kcs_error e = {0};
    CU_ASSERT_FATAL(kcs_tensor_alloc(&t, 10, KCS_FMT_FP16, &e) == 0);
    CU_ASSERT(kcs_tensor_guards_ok(&t));
    CU_ASSERT_EQUAL(kcs_tensor_count_sentinel(&t), 10);
    t.data[9] = 1.0;
    CU_ASSERT(kcs_tensor_guards_ok(&t));
    t.data[10] = 1.0; /* one past the end */
    CU_ASSERT(!kcs_tensor_guards_ok(&t));
    kcs_tensor_poison(&t);
    t.data[-1] = NAN; /* one before the start */
    CU_ASSERT(!kcs_tensor_guards_ok(&t));
    kcs_tensor_free(&t);
}

static void test_digests(void)
{
    double a[100], b[100];
    for (int i = 0; i < 100; i++)
        a[i] = b[i] = i * 0.25;
    CU_ASSERT_EQUAL(kcs_digest_values(a, 100, KCS_FMT_FP32), kcs_digest_values(b, 100, KCS_FMT_FP32));
    b[57] = nextafterf((float)b[57], 100.0f); /* one fp32 ulp */
    CU_ASSERT_NOT_EQUAL(kcs_digest_values(a, 100, KCS_FMT_FP32),
                        kcs_digest_values(b, 100, KCS_FMT_FP32));
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("metrics", NULL, NULL);
    CU_add_test(s, "hand-computed errors", test_hand_values);
    CU_add_test(s, "non-finite and sentinel counts", test_nonfinite_and_sentinel);
    CU_add_test(s, "guard regions", test_guards);
    CU_add_test(s, "digests see one ulp", test_digests);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f != 0;
}
