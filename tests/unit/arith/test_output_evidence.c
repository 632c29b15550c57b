/* Output-fault evidence (src/arith/output_evidence.h), on values worked
 * out here: an output rounded once to bf16 or 11 bits (to nearest or
 * toward zero) is recognised as such and a sum kept narrow is not; a
 * constant output; the offset share of a constant shift and of errors
 * that average out. */
#include <CUnit/Basic.h>
#include <math.h>

#include "output_evidence.h"
#include "unit_helpers.h"

#define N 64

static void refs(double *r)
{
    for (int i = 0; i < N; i++) /* distinct values of both signs, 20+ significant bits */
        r[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + i / 7.0 + 1e-6 * i * i);
}

static void test_round_bits(void)
{
    /* 1 + 2^-8 + 2^-10: bf16 keeps 8 bits (1 + 7 fraction bits) */
    double x = 1.0 + ldexp(1.0, -8) + ldexp(1.0, -10);
    CU_ASSERT_EQUAL(kcs_evidence_round(x, 8, 1), 1.0);                  /* truncated */
    CU_ASSERT_EQUAL(kcs_evidence_round(x, 8, 0), 1.0 + ldexp(1.0, -7)); /* above half an ulp */
    CU_ASSERT_EQUAL(kcs_evidence_round(-x, 8, 1), -1.0);
    CU_ASSERT_EQUAL(kcs_evidence_round(x, 11, 0), x); /* 11 bits hold it */
    /* 1 + 2^-8 + 2^-11 at 11 bits: halfway between 1 + 2^-8 (even) and
     * 1 + 2^-8 + 2^-10 (odd): ties to even */
    double t = 1.0 + ldexp(1.0, -8) + ldexp(1.0, -11);
    CU_ASSERT_EQUAL(kcs_evidence_round(t, 11, 0), 1.0 + ldexp(1.0, -8));
}

static void test_output_rounded(void)
{
    double r[N], y[N];
    refs(r);
    int rz = -1;
    for (int w = 8; w <= 11; w += 3)
        for (int mode = 0; mode < 2; mode++) {
            for (int i = 0; i < N; i++)
                y[i] = kcs_evidence_round(r[i], w, mode);
            CU_ASSERT_EQUAL(kcs_output_rounded_bits(y, r, N, &rz), w);
            CU_ASSERT_EQUAL(rz, mode);
        }
    /* a bf16-exact output that is not one rounding of r: each value
     * moved one bf16 ulp off the rounded one (a sum rounded many times) */
    for (int i = 0; i < N; i++) {
        double q = kcs_evidence_round(r[i], 8, 0);
        y[i] = q + (i % 3 - 1) * ldexp(fabs(q), -7);
    }
    CU_ASSERT_EQUAL(kcs_output_rounded_bits(y, r, N, &rz), 0);
    /* the exact result: nothing to explain */
    CU_ASSERT_EQUAL(kcs_output_rounded_bits(r, r, N, &rz), 0);
}

static void test_constant_and_offset(void)
{
    double r[N], y[N];
    refs(r);
    for (int i = 0; i < N; i++)
        y[i] = 3.5;
    CU_ASSERT_EQUAL(kcs_constant_output(y, r, N), 1);
    CU_ASSERT_EQUAL(kcs_constant_output(r, r, N), 0);
    for (int i = 0; i < N; i++)
        y[i] = r[i] + 0.25;
    CU_ASSERT_DOUBLE_EQUAL(kcs_offset_share(y, r, N), 1.0, 1e-12);
    /* errors +e, -e alternating: mean 0 */
    for (int i = 0; i < N; i++)
        y[i] = r[i] + (i % 2 ? 1e-3 : -1e-3);
    CU_ASSERT_DOUBLE_EQUAL(kcs_offset_share(y, r, N), 0.0, 1e-12);
    /* three quarters +e, one quarter -e: mean e/2, mean square e^2: 1/4 */
    for (int i = 0; i < N; i++)
        y[i] = r[i] + (i % 4 == 0 ? -1e-3 : 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(kcs_offset_share(y, r, N), 0.25, 1e-9);
}

static const ut_test tests[] = {
    {"rounding to w bits", test_round_bits},
    {"output rounded once, to nearest or toward zero", test_output_rounded},
    {"constant output, offset share", test_constant_and_offset},
};

UT_MAIN("output_evidence", tests)
