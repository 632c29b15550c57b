/* Philox4x32-10 known-answer vectors (Random123's kat_vectors) and the
 * stream properties kcs relies on. */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

#include "rng.h"
#include "tensor.h"
#include "unit_helpers.h"

static void check_kat(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                      uint32_t k1, uint32_t e0, uint32_t e1, uint32_t e2, uint32_t e3)
{
    uint32_t ctr[4] = {c0, c1, c2, c3}, key[2] = {k0, k1}, out[4];
    kcs_philox4x32_10(ctr, key, out);
    CU_ASSERT_EQUAL(out[0], e0);
    CU_ASSERT_EQUAL(out[1], e1);
    CU_ASSERT_EQUAL(out[2], e2);
    CU_ASSERT_EQUAL(out[3], e3);
}

static void test_kat(void)
{
    check_kat(0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
    check_kat(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
              0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
    check_kat(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u,
              0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

static void test_streams(void)
{
    kcs_rng a, b, c;
    kcs_rng_init(&a, 42, 7, 1);
    kcs_rng_init(&b, 42, 7, 1);
    kcs_rng_init(&c, 42, 7, 2);
    int diff = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = kcs_rng_u32(&a), y = kcs_rng_u32(&b), z = kcs_rng_u32(&c);
        CU_ASSERT_EQUAL_FATAL(x, y);
        diff += x != z;
    }
    CU_ASSERT(diff > 990); /* another stream is unrelated */
}

static void test_distributions(void)
{
    kcs_rng r;
    kcs_rng_init(&r, 1, 2, 3);
    double s = 0, s2 = 0, umin = 1, umax = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double z = kcs_rng_normal(&r);
        s += z;
        s2 += z * z;
        double u = kcs_rng_uniform(&r);
        umin = fmin(umin, u);
        umax = fmax(umax, u);
    }
    /* mean within 5 standard errors of 0, variance within 2% of 1 */
    CU_ASSERT(fabs(s / n) < 5.0 / sqrt(n));
    CU_ASSERT(fabs(s2 / n - 1.0) < 0.02);
    CU_ASSERT(umin >= 0.0 && umax < 1.0);
}

static void test_fill_exact_and_keyed(void)
{
    double x[512], y[512];
    kcs_fill(x, 512, KCS_DIST_NORMAL, KCS_FMT_BF16, 9, 3, 4);
    kcs_fill(y, 512, KCS_DIST_NORMAL, KCS_FMT_BF16, 9, 3, 4);
    CU_ASSERT(memcmp(x, y, sizeof x) == 0);
    for (int i = 0; i < 512; i++)
        CU_ASSERT(kcs_format_exact(KCS_FMT_BF16, x[i]));
    kcs_fill(y, 512, KCS_DIST_NORMAL, KCS_FMT_BF16, 9, 3, 5); /* another trial */
    CU_ASSERT(memcmp(x, y, sizeof x) != 0);
    kcs_fill(x, 512, KCS_DIST_WIDE_RANGE, KCS_FMT_FP16, 9, 3, 4);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < 512; i++) {
        CU_ASSERT(isfinite(x[i]) && x[i] != 0.0);
        lo = fmin(lo, fabs(x[i]));
        hi = fmax(hi, fabs(x[i]));
    }
    CU_ASSERT(hi / lo > 1e3); /* spans orders of magnitude */
}

static const ut_test tests[] = {
    {"philox known answers", test_kat},
    {"streams keyed and reproducible", test_streams},
    {"normal and uniform moments", test_distributions},
    {"fill: exact in format, keyed by trial", test_fill_exact_and_keyed},
};

UT_MAIN("rng", tests)
