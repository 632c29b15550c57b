/* Metrics against hand-computed values, and digests. */
#include <CUnit/Basic.h>
#include <math.h>

#include <mpfr.h>
#include <stdlib.h>

#include "metrics.h"
#include "norm_fro.h"
#include "tensor.h"
#include "unit_helpers.h"

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

/* The chunked norm: any split of its chunks (as ranks make) gives the bits
 * of kcs_norm_fro, which is within its stated rounding of the exact norm. */
static void test_norm_fro_chunks(void)
{
    size_t lens[] = {0, 1, 3, 4, 5, 4095, 4096, 4097, 3 * 4096 + 7, 50000};
    double *x = malloc(50000 * sizeof *x), *part = malloc(64 * sizeof *part);
    CU_ASSERT_FATAL(x && part);
    uint64_t st = 88172645463325252ull;
    for (size_t i = 0; i < 50000; i++) { /* xorshift: magnitudes over 2^-20 .. 2^20 */
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        x[i] = ldexp((double)(st >> 11) * 0x1p-53 - 0.5, (int)(st % 41) - 20);
    }
    mpfr_t acc, t;
    mpfr_inits2(400, acc, t, (mpfr_ptr)0);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li], nc = kcs_norm_nchunks(n);
        CU_ASSERT_EQUAL(nc, (n + KCS_NORM_CHUNK - 1) / KCS_NORM_CHUNK);
        double whole = kcs_norm_fro(x, n);
        for (size_t cut1 = 0; cut1 <= nc; cut1++) /* three pieces, every first cut */
            for (size_t cut2 = cut1; cut2 <= nc; cut2 += 1 + nc / 3) {
                kcs_norm_chunks(x, n, 0, cut1, part);
                kcs_norm_chunks(x, n, cut1, cut2, part + cut1);
                kcs_norm_chunks(x, n, cut2, nc, part + cut2);
                CU_ASSERT_EQUAL(kcs_norm_from_chunks(part, nc), whole);
            }
        mpfr_set_zero(acc, 1);
        for (size_t i = 0; i < n; i++) {
            mpfr_set_d(t, x[i], MPFR_RNDN);
            mpfr_sqr(t, t, MPFR_RNDN);
            mpfr_add(acc, acc, t, MPFR_RNDN);
        }
        mpfr_sqrt(acc, acc, MPFR_RNDN);
        double exact = mpfr_get_d(acc, MPFR_RNDN);
        double bound = ((double)KCS_NORM_CHUNK / 4 + 4 + (double)nc) * 0x1p-53 * exact;
        CU_ASSERT(fabs(whole - exact) <= bound);
    }
    /* chunks are by position: chunk 1 of 4097 elements is the last one */
    kcs_norm_chunks(x, 4097, 1, 2, part);
    CU_ASSERT_EQUAL(part[0], x[4096] * x[4096]);
    mpfr_clears(acc, t, (mpfr_ptr)0);
    free(x);
    free(part);
}

static const ut_test tests[] = {
    {"hand-computed errors", test_hand_values},
    {"non-finite and sentinel counts", test_nonfinite_and_sentinel},
    {"guard regions", test_guards},
    {"digests see one ulp", test_digests},
    {"chunked Frobenius norm: splits and accuracy", test_norm_fro_chunks},
};

UT_MAIN("metrics", tests)
