/* The CPU backend's accumulator model and reduction schedules. */
#include <CUnit/Basic.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>

#include "acc.h"
#include "rng.h"
#include "unit_helpers.h"

static const kcs_acc ACC32 = {KCS_FMT_FP32, 0, 0}, ACC64 = {KCS_FMT_FP64, 0, 0},
                     ACC16 = {KCS_FMT_FP16, 0, 0}, ACCBF = {KCS_FMT_BF16, 0, 0};

/* Sequential fp32 accumulation of exact products == a C loop of fmaf. */
static void test_seq_fp32_is_fmaf(void)
{
    kcs_rng r;
    kcs_rng_init(&r, 5, 6, 7);
    enum { K = 3000 };
    static double a[K], b[K], t[K];
    for (int trial = 0; trial < 20; trial++) {
        float ref = 0.0f;
        for (int i = 0; i < K; i++) {
            a[i] = (double)(float)kcs_rng_normal(&r);
            b[i] = (double)(float)kcs_rng_normal(&r);
            t[i] = a[i] * b[i];
            ref = fmaf((float)a[i], (float)b[i], ref);
        }
        kcs_schedule s = {KCS_SCHED_SEQUENTIAL, 0};
        double got = kcs_cpu_sum(t, K, &s, &ACC32, 0, NULL);
        CU_ASSERT_EQUAL(got, (double)ref);
    }
}

/* kcs_acc_add is one correct rounding of the exact sum (MPFR reference). */
static void test_acc_add_correctly_rounded(void)
{
    kcs_rng r;
    kcs_rng_init(&r, 11, 12, 13);
    mpfr_t x, y;
    mpfr_inits2(400, x, y, (mpfr_ptr)0);
    int bad = 0;
    const kcs_acc *accs[] = {&ACC32, &ACC16, &ACCBF};
    const int prec[] = {24, 11, 8};
    for (int i = 0; i < 200000; i++) {
        int which = i % 3;
        /* operands with different exponents and full 53-bit significands */
        double u = kcs_rng_normal(&r) * ldexp(1.0, (int)(kcs_rng_u32(&r) % 20) - 10);
        double v = kcs_rng_normal(&r) * ldexp(1.0, (int)(kcs_rng_u32(&r) % 20) - 10);
        u = kcs_acc_round(accs[which], u); /* the running sum is in the accumulator */
        double got = kcs_acc_add(accs[which], u, v);
        mpfr_set_d(x, u, MPFR_RNDN);
        mpfr_add_d(x, x, v, MPFR_RNDN); /* exact at 400 bits */
        mpfr_set_prec(y, prec[which]);
        mpfr_set(y, x, MPFR_RNDN);
        double want = mpfr_get_d(y, MPFR_RNDN);
        /* MPFR at precision p has no subnormals: compare fp16 only where the
         * sum is normal (the subnormal grid is checked by hand below). */
        if (which == 1 && fabs(want) < 0x1p-14)
            continue;
        bad += got != want;
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
    CU_ASSERT_EQUAL(bad, 0);
}

/* Hand-derived: fp16 spacing at 2048 is 2, so 2048 + 1 is a tie that rounds
 * to even (2048). Order decides what survives. */
static void test_schedules_fp16_hand_derived(void)
{
    double t[5] = {2048, 1, 1, 1, 1};
    kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0}, pw = {KCS_SCHED_PAIRWISE, 0},
                 bl = {KCS_SCHED_BLOCKED, 2}, sk = {KCS_SCHED_SPLITK, 2};
    double scratch[5];
    /* sequential: every +1 is a tie back to 2048 */
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, 5, &seq, &ACC16, 0, scratch), 2048.0);
    /* pairwise: (2048+1) + (1+(1+1)) = 2048 + 3 = 2051 -> tie -> 2052 (even) */
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, 5, &pw, &ACC16, 0, scratch), 2052.0);
    /* blocked:2: [2048,1]=2048, [1,1]=2, [1]=1 -> 2048+2=2050, 2050+1=2051 -> 2052 */
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, 5, &bl, &ACC16, 0, scratch), 2052.0);
    /* splitk:2: chunks of 3: [2048,1,1]=2048, [1,1]=2 -> 2050 */
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, 5, &sk, &ACC16, 0, scratch), 2050.0);
    /* fp64 accumulator: exact */
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, 5, &seq, &ACC64, 0, scratch), 2052.0);
}

static void test_atomic_seeded(void)
{
    enum { K = 64 };
    double t[K], scratch[K];
    for (int i = 0; i < K; i++)
        t[i] = (i % 2 ? 1.0 : 1024.0) * (1.0 + i / 128.0);
    kcs_schedule at = {KCS_SCHED_ATOMIC, 0};
    double first = kcs_cpu_sum(t, K, &at, &ACC16, 99, scratch);
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, K, &at, &ACC16, 99, scratch), first);
    int differs = 0;
    for (uint64_t seed = 0; seed < 32; seed++)
        differs += kcs_cpu_sum(t, K, &at, &ACC16, seed, scratch) != first;
    CU_ASSERT(differs > 0);
    /* with an exact accumulator the order cannot matter */
    double a = kcs_cpu_sum(t, K, &at, &ACC64, 1, scratch);
    CU_ASSERT_EQUAL(kcs_cpu_sum(t, K, &at, &ACC64, 2, scratch), a);
}

/* Exact sums within 1.5 fp64 ulps of a rounding boundary of the
 * accumulator (a midpoint for round to nearest, a value for truncation):
 * where fp64's nearest sum s lies one ulp from the boundary on the far
 * side, a nudge of s toward the exact sum would land on the boundary and
 * tie (or truncate) the wrong way; s must move only when its last bit is
 * even (the sum rounded to odd). MPFR rounds the exact sum directly. */
static void test_acc_add_near_boundaries(void)
{
    const kcs_acc accs[] = {ACC32, ACC16, ACCBF, {KCS_FMT_FP32, 14, 0},
                            {KCS_FMT_FP32, 0, 1}, {KCS_FMT_FP32, 14, 1}};
    const int prec[] = {24, 11, 8, 14, 24, 14};
    const double offs[] = {-1.5, -1.25, -1, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1, 1.25, 1.5};
    kcs_rng r;
    kcs_rng_init(&r, 17, 18, 19);
    mpfr_t x, y;
    mpfr_inits2(400, x, y, (mpfr_ptr)0);
    int bad = 0, cases = 0;
    for (int a = 0; a < 6; a++)
        for (int i = 0; i < 4000; i++) {
            int p = prec[a], rz = accs[a].rz;
            /* x: an accumulator value in [1, 2) or [-2, -1); the boundary
             * b j half-quanta (RNE: odd j, midpoints) or quanta (RZ) away */
            double q = ldexp(1.0, 1 - p);
            double xv = 1.0 + q * (double)(kcs_rng_u32(&r) % (1u << (p - 1)));
            int j = (int)(kcs_rng_u32(&r) % 5) - 2;
            double b = rz ? xv + q * (j == 0 ? 1 : j) : xv + q * (0.5 + j);
            double t = (b - xv) + offs[i % 12] * ldexp(1.0, -52);
            if (kcs_rng_u32(&r) & 1) {
                xv = -xv;
                t = -t;
            }
            double got = kcs_acc_add(&accs[a], xv, t);
            mpfr_set_d(x, xv, MPFR_RNDN);
            mpfr_add_d(x, x, t, MPFR_RNDN); /* exact at 400 bits */
            mpfr_set_prec(y, p);
            mpfr_set(y, x, rz ? MPFR_RNDZ : MPFR_RNDN);
            double want = mpfr_get_d(y, MPFR_RNDN);
            if (got != want && bad++ < 5)
                printf("\n  acc %d: %a + %a = %a, want %a", a, xv, t, got, want);
            cases++;
        }
    mpfr_clears(x, y, (mpfr_ptr)0);
    printf("\n  %d sums near boundaries, %d wrong\n", cases, bad);
    CU_ASSERT_EQUAL(bad, 0);
}

/* fp32 operands into an fp32 accumulator (the one-fp32-addition path of
 * acc_add) against MPFR with fp32's exponent range (emin -148, emax 128,
 * subnormalized): exponents from below FLT_TRUE_MIN's to beyond FLT_MAX's,
 * so subnormal, overflowing, exactly cancelling (+0) and -0 + -0 sums
 * occur; Inf operands; and the same sums with one operand off fp32 (the
 * general path). */
static void test_acc_add_fp32_operands(void)
{
    kcs_rng r;
    kcs_rng_init(&r, 23, 24, 25);
    mpfr_t x, y;
    mpfr_inits2(400, x, y, (mpfr_ptr)0);
    mpfr_set_prec(y, 24);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    int bad = 0, cases = 0, sub = 0, ovf = 0, zero = 0;
    for (int i = 0; i < 300000; i++) {
        int eu = (int)(kcs_rng_u32(&r) % 290) - 155, ev = eu + (int)(kcs_rng_u32(&r) % 60) - 30;
        double u = (double)(float)ldexp(kcs_rng_normal(&r), eu);
        double v = (double)(float)ldexp(kcs_rng_normal(&r), ev);
        if (i % 17 == 0)
            v = -u;
        if (i % 101 == 0)
            u = v = -0.0;
        if (i % 23 == 0) { /* both near FLT_MAX, one sign: sums at the overflow boundary */
            double sg = kcs_rng_u32(&r) & 1 ? -1.0 : 1.0;
            u = sg * (double)(float)ldexp(1.0 + kcs_rng_uniform(&r), 127);
            v = sg * (double)(float)ldexp(kcs_rng_uniform(&r), 127);
        }
        if (i % 3 == 1) /* v off fp32: the TwoSum path */
            v = v * (1.0 + 0x1p-40);
        double got = kcs_acc_add(&ACC32, u, v);
        mpfr_set_d(x, u, MPFR_RNDN);
        mpfr_add_d(x, x, v, MPFR_RNDN); /* exact at 400 bits */
        mpfr_set_emin(-148);
        mpfr_set_emax(128);
        int t = mpfr_set(y, x, MPFR_RNDN);
        t = mpfr_check_range(y, t, MPFR_RNDN);
        mpfr_subnormalize(y, t, MPFR_RNDN);
        double want = mpfr_get_d(y, MPFR_RNDN);
        mpfr_set_emin(emin);
        mpfr_set_emax(emax);
        if (mpfr_zero_p(x)) /* IEEE: an exact zero sum is +0 unless both are -0 */
            want = signbit(u) && signbit(v) ? -0.0 : 0.0;
        sub += want != 0.0 && fabs(want) < 0x1p-126;
        ovf += isinf(want) && isfinite(u) && isfinite(v); /* finite sums that overflow */
        zero += want == 0.0;
        int same = isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want);
        if (!same && bad++ < 5)
            printf("\n  %a + %a = %a, want %a", u, v, got, want);
        cases++;
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
    CU_ASSERT_EQUAL(kcs_acc_add(&ACC32, INFINITY, 1.0), INFINITY);
    CU_ASSERT(isnan(kcs_acc_add(&ACC32, INFINITY, -INFINITY)));
    printf("\n  %d fp32 sums (%d subnormal, %d overflowing, %d zero), %d wrong\n", cases, sub,
           ovf, zero, bad);
    CU_ASSERT(sub > 100 && ovf > 100 && zero > 100);
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_bits_accumulator(void)
{
    kcs_acc b8 = {KCS_FMT_FP32, 8, 0};
    /* 8 bits: spacing at 256 is 2; 256 + 1 ties to 256 (even) */
    CU_ASSERT_EQUAL(kcs_acc_add(&b8, 256.0, 1.0), 256.0);
    CU_ASSERT_EQUAL(kcs_acc_add(&b8, 256.0, 1.5), 258.0);
    CU_ASSERT_EQUAL(kcs_acc_add(&ACCBF, 256.0, 1.5), 258.0);
    /* fp16 subnormals have a fixed quantum 2^-24: 2^-14 - 1.25*2^-24 is
     * 2^-14 - 2^-24 after one rounding (not a 11-bit rounding of it) */
    CU_ASSERT_EQUAL(kcs_acc_add(&ACC16, 0x1p-14, -1.25 * 0x1p-24), 0x1p-14 - 0x1p-24);
    CU_ASSERT_EQUAL(kcs_acc_add(&ACC16, 0x1p-24, 0.4 * 0x1p-24), 0x1p-24);
}

static const ut_test tests[] = {
    {"sequential fp32 == fmaf loop", test_seq_fp32_is_fmaf},
    {"acc_add correctly rounded (MPFR)", test_acc_add_correctly_rounded},
    {"acc_add near rounding boundaries (MPFR)", test_acc_add_near_boundaries},
    {"schedules in fp16, hand-derived", test_schedules_fp16_hand_derived},
    {"atomic: seeded order", test_atomic_seeded},
    {"bits:N accumulator", test_bits_accumulator},
    {"fp32 operands into fp32 (MPFR, fp32 range)", test_acc_add_fp32_operands},
};

UT_MAIN("cpu accumulation", tests)
