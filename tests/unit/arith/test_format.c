/* Unit tests for src/arith/format.c: every 8- and 16-bit (and tf32) encoding,
 * every rounding boundary class, and independent references: the C cast
 * (float)x (also under fesetround for the directed modes) and gcc's _Float16.
 * Expected values are derived from the format definitions in
 * shared/PROFILES.md, not from the code under test. */
#include "error.h"
#include "format.h"
#include "unit_helpers.h"

#include <CUnit/Basic.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const kcs_round_mode RNE = {KCS_RNE, KCS_OVF_INF, KCS_SUB_KEEP};
static const kcs_round_mode RZ = {KCS_RZ, KCS_OVF_INF, KCS_SUB_KEEP};
static const kcs_round_mode RD = {KCS_RD, KCS_OVF_INF, KCS_SUB_KEEP};
static const kcs_round_mode RU = {KCS_RU, KCS_OVF_INF, KCS_SUB_KEEP};
static const kcs_round_mode SAT = {KCS_RNE, KCS_OVF_SATURATE, KCS_SUB_KEEP};
static const kcs_round_mode FTZ = {KCS_RNE, KCS_OVF_INF, KCS_SUB_FLUSH};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd64(void)
{
    return ut_splitmix64(&rng_state);
}

/* bitwise equality of doubles, NaN == NaN */
static int same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static const kcs_format small_fmts[] = {KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP8_E4M3,
                                        KCS_FMT_FP8_E5M2, KCS_FMT_FP8_E4M3FNUZ,
                                        KCS_FMT_FP8_E5M2FNUZ, KCS_FMT_TF32};
#define N_SMALL (sizeof small_fmts / sizeof small_fmts[0])

/* encoding space: tf32 is a 19-bit code shifted into an fp32 word */
static int code_bits(kcs_format f)
{
    return f == KCS_FMT_TF32 ? 19 : kcs_format_get(f)->bits;
}
static int code_shift(kcs_format f)
{
    return f == KCS_FMT_TF32 ? 13 : 0;
}

static void test_info(void)
{
    for (int i = 0; i < KCS_FMT_COUNT; i++) {
        kcs_format f;
        CU_ASSERT_EQUAL(kcs_format_parse(kcs_format_name((kcs_format)i), &f), 0);
        CU_ASSERT_EQUAL(f, (kcs_format)i);
        const kcs_format_info *fi = kcs_format_get((kcs_format)i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fi);
        CU_ASSERT_EQUAL(kcs_format_u((kcs_format)i), ldexp(1.0, -fi->p));
        CU_ASSERT_EQUAL(kcs_format_eps((kcs_format)i), ldexp(1.0, 1 - fi->p));
    }
    kcs_format f = KCS_FMT_FP64;
    CU_ASSERT_EQUAL(kcs_format_parse("fp12", &f), KCS_E_INVAL);
    CU_ASSERT_EQUAL(f, KCS_FMT_FP64); /* untouched on failure */
    CU_ASSERT_EQUAL(kcs_format_parse("bfloat16", &f), 0);
    CU_ASSERT_EQUAL(f, KCS_FMT_BF16);
    CU_ASSERT_PTR_NULL(kcs_format_get(KCS_FMT_COUNT));
    /* PROFILES.md table */
    CU_ASSERT_EQUAL(kcs_format_get(KCS_FMT_FP16)->p, 11);
    CU_ASSERT_EQUAL(kcs_format_get(KCS_FMT_BF16)->p, 8);
    CU_ASSERT_EQUAL(kcs_format_get(KCS_FMT_TF32)->p, 11);
    CU_ASSERT_EQUAL(kcs_format_get(KCS_FMT_FP8_E4M3FNUZ)->emin, -7);
    CU_ASSERT_EQUAL(kcs_format_get(KCS_FMT_FP8_E5M2FNUZ)->emin, -15);
    /* max finite = largest non-special encoding, from the bit layouts */
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP16, 0x7BFF), 65504.0);
    CU_ASSERT_EQUAL(kcs_format_get(KCS_FMT_FP16)->max_finite, 65504.0);
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E4M3, 0x7E), 448.0);    /* 1.110b * 2^8 */
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E5M2, 0x7B), 57344.0);  /* 1.11b * 2^15 */
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E4M3FNUZ, 0x7F), 240.0); /* 1.111b*2^7 */
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E5M2FNUZ, 0x7F), 57344.0);
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_BF16, 0x7F7F), 0x1.fep127);
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_TF32, 0x7F7FE000), 0x1.ffcp127);
    /* smallest subnormals: 2^(emin - p + 1) */
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP16, 1), ldexp(1, -24));
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_BF16, 1), ldexp(1, -133));
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E4M3, 1), ldexp(1, -9));
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E5M2, 1), ldexp(1, -16));
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E4M3FNUZ, 1), ldexp(1, -10));
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E5M2FNUZ, 1), ldexp(1, -17));
    /* known patterns */
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP16, 1.0), 0x3C00);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_BF16, -2.0), 0xC000);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_TF32, 1.0), 0x3F800000);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E4M3, 1.0), 0x38);     /* bias 7 */
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E5M2, 1.0), 0x3C);     /* bias 15 */
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E4M3FNUZ, 1.0), 0x40); /* bias 8 */
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E5M2FNUZ, 1.0), 0x40); /* bias 16 */
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E4M3FNUZ, -0.0), 0x00);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E4M3FNUZ, NAN), 0x80);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E4M3, NAN) & 0x7F, 0x7F);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP8_E5M2, INFINITY), 0x7C);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP32, 1.0), 0x3F800000);
    CU_ASSERT_EQUAL(kcs_format_encode(KCS_FMT_FP64, 1.0), 0x3FF0000000000000ull);
    CU_ASSERT(isnan(kcs_format_decode(KCS_FMT_FP8_E4M3, 0xFF)));
    CU_ASSERT(isnan(kcs_format_decode(KCS_FMT_FP8_E4M3, 0x7F)));
    CU_ASSERT_EQUAL(kcs_format_decode(KCS_FMT_FP8_E4M3, 0x78), 256.0); /* E=15 is normal */
}

/* Every encoding: round trip, exactness, classification, monotone order. */
static void test_exhaustive(void)
{
    for (size_t k = 0; k < N_SMALL; k++) {
        kcs_format f = small_fmts[k];
        const kcs_format_info *fi = kcs_format_get(f);
        int nb = code_bits(f), sh = code_shift(f);
        uint64_t n = (uint64_t)1 << nb, half = n / 2;
        int mbits = fi->p - 1, ebits = nb - 1 - mbits;
        long nans = 0, infs = 0, bad_rt = 0, bad_exact = 0, bad_order = 0, bad_sym = 0;
        double prev = -1.0;
        for (uint64_t c = 0; c < n; c++) {
            uint64_t b = c << sh;
            double v = kcs_format_decode(f, b);
            if (isnan(v)) {
                nans++;
                if (!isnan(kcs_format_decode(f, kcs_format_encode(f, v))))
                    bad_rt++;
                continue;
            }
            if (isinf(v))
                infs++;
            if (kcs_format_encode(f, v) != b)
                bad_rt++;
            if (!kcs_format_exact(f, v))
                bad_exact++;
            kcs_round_mode modes[] = {RNE, RZ, RD, RU, SAT};
            for (int m = 0; m < 5; m++) {
                double r = kcs_format_round(f, v, modes[m]);
                if (!same(r, v) && !(m == 4 && isinf(v)))
                    bad_exact++;
            }
            if (c < half) {
                if (!(v > prev) && !(c == 0 && v == 0.0))
                    bad_order++;
                prev = v;
                double vn = kcs_format_decode(f, (c | half) << sh);
                if (!isnan(vn) && !same(vn, -v))
                    bad_sym++;
            }
        }
        /* expected specials from the format definitions */
        long mant = 1L << mbits, exp_nans, exp_infs;
        if (fi->has_inf) { /* IEEE-like: all-ones exponent */
            exp_infs = 2;
            exp_nans = 2 * (mant - 1);
        } else if (fi->has_neg_zero) { /* FN: S.1111.111 */
            exp_infs = 0;
            exp_nans = 2;
        } else { /* FNUZ: 0x80 */
            exp_infs = 0;
            exp_nans = 1;
        }
        (void)ebits;
        CU_ASSERT_EQUAL(nans, exp_nans);
        CU_ASSERT_EQUAL(infs, exp_infs);
        CU_ASSERT_EQUAL(bad_rt, 0);
        CU_ASSERT_EQUAL(bad_exact, 0);
        CU_ASSERT_EQUAL(bad_order, 0);
        CU_ASSERT_EQUAL(bad_sym, 0);
        /* the largest finite decoded value is max_finite */
        double mx = 0;
        for (uint64_t c = 0; c < half; c++) {
            double v = kcs_format_decode(f, c << sh);
            if (isfinite(v) && v > mx)
                mx = v;
        }
        CU_ASSERT_EQUAL(mx, fi->max_finite);
    }
}

/* One pair of consecutive representable positives lo < hi: check every
 * rounding mode at and around the midpoint and next to both ends. */
static long check_pair(kcs_format f, double lo, double hi, int hi_even)
{
    long bad = 0;
    /* negating 0 gives +0 in formats without -0 */
    double mlo = (lo == 0.0 && !kcs_format_get(f)->has_neg_zero) ? 0.0 : -lo;
    double mid = lo + (hi - lo) / 2; /* exact in double */
    double near = hi_even ? hi : lo;
    double below = nextafter(mid, 0), above = nextafter(mid, INFINITY);
    double lo_up = nextafter(lo, INFINITY), hi_dn = nextafter(hi, 0);
    bad += !same(kcs_format_round(f, mid, RNE), near);
    bad += !same(kcs_format_round(f, below, RNE), lo);
    bad += !same(kcs_format_round(f, above, RNE), hi);
    bad += !same(kcs_format_round(f, -mid, RNE), near == lo ? mlo : -near);
    bad += !same(kcs_format_round(f, -below, RNE), mlo);
    bad += !same(kcs_format_round(f, -above, RNE), -hi);
    bad += !same(kcs_format_round(f, mid, RZ), lo);
    bad += !same(kcs_format_round(f, hi_dn, RZ), lo);
    bad += !same(kcs_format_round(f, -hi_dn, RZ), mlo);
    bad += !same(kcs_format_round(f, lo_up, RU), hi);
    bad += !same(kcs_format_round(f, hi_dn, RD), lo);
    bad += !same(kcs_format_round(f, -lo_up, RD), -hi);
    bad += !same(kcs_format_round(f, -hi_dn, RU), mlo);
    return bad;
}

static void test_midpoints_small(void)
{
    for (size_t k = 0; k < N_SMALL; k++) {
        kcs_format f = small_fmts[k];
        const kcs_format_info *fi = kcs_format_get(f);
        int sh = code_shift(f);
        uint64_t half = (uint64_t)1 << (code_bits(f) - 1);
        long bad = 0, pairs = 0;
        for (uint64_t c = 0; c + 1 < half; c++) {
            double lo = kcs_format_decode(f, c << sh), hi = kcs_format_decode(f, (c + 1) << sh);
            if (!isfinite(hi) || !isfinite(lo) || hi > fi->max_finite)
                break;
            bad += check_pair(f, lo, hi, ((c + 1) & 1) == 0);
            pairs++;
        }
        CU_ASSERT_EQUAL(bad, 0);
        /* all positive finite non-NaN codes minus one */
        CU_ASSERT_EQUAL(pairs, (long)kcs_format_encode(f, fi->max_finite) >> sh);
    }
}

/* fp32: every exponent (subnormal included), random significands. */
static void test_midpoints_fp32(void)
{
    long bad = 0;
    for (int e = -149; e <= 127; e++) {
        for (int s = 0; s < 400; s++) {
            float lo = ldexpf(1.0f, e);
            if (e >= -126) /* random normal in [2^e, 2^(e+1)) */
                lo = ldexpf(1.0f + (float)(rnd64() >> 41) * 0x1p-23f, e);
            else { /* random subnormal with its top bit at 2^e */
                uint32_t top = 1u << (e + 149);
                lo = ldexpf((float)(top | ((uint32_t)rnd64() & (top - 1))), -149);
            }
            float hi = nextafterf(lo, INFINITY);
            if (isinf(hi))
                continue;
            uint32_t hb;
            memcpy(&hb, &hi, 4);
            bad += check_pair(KCS_FMT_FP32, lo, hi, (hb & 1) == 0);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_overflow(void)
{
    kcs_format h = KCS_FMT_FP16;
    /* fp16: max 65504 = 1.1111111111b*2^15 (odd); tie 65520 goes to 2^16 */
    CU_ASSERT_EQUAL(kcs_format_round(h, 65519.0, RNE), 65504.0);
    CU_ASSERT(isinf(kcs_format_round(h, 65520.0, RNE)));
    CU_ASSERT_EQUAL(kcs_format_round(h, 1e10, RZ), 65504.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, -1e10, RZ), -65504.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, 65504.5, RU), INFINITY);
    CU_ASSERT_EQUAL(kcs_format_round(h, 65504.5, RD), 65504.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, -65504.5, RD), -INFINITY);
    CU_ASSERT_EQUAL(kcs_format_round(h, -65504.5, RU), -65504.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, 1e10, SAT), 65504.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, -INFINITY, SAT), -65504.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, INFINITY, RZ), INFINITY);
    /* e4m3 (FN): 448 = 1.110b*2^8 is even, 480 = 1.111b*2^8 is NaN. */
    kcs_format e4 = KCS_FMT_FP8_E4M3;
    CU_ASSERT_EQUAL(kcs_format_round(e4, 464.0, RNE), 448.0);
    CU_ASSERT(isnan(kcs_format_round(e4, 464.5, RNE)));
    CU_ASSERT(isnan(kcs_format_round(e4, INFINITY, RNE)));
    CU_ASSERT(isnan(kcs_format_round(e4, -1e6, RNE)));
    CU_ASSERT_EQUAL(kcs_format_round(e4, 464.5, SAT), 448.0);
    CU_ASSERT_EQUAL(kcs_format_round(e4, -1e6, SAT), -448.0);
    CU_ASSERT_EQUAL(kcs_format_round(e4, INFINITY, SAT), 448.0);
    CU_ASSERT_EQUAL(kcs_format_round(e4, 479.0, RZ), 448.0);
    CU_ASSERT_EQUAL(kcs_format_round(e4, 1000.0, RZ), 448.0);
    CU_ASSERT_EQUAL(kcs_format_round(e4, -1000.0, RZ), -448.0);
    CU_ASSERT(isnan(kcs_format_round(e4, 449.0, RU)));
    /* e5m2: 57344 = 1.11b*2^15 odd; tie 61440 -> 2^16 -> Inf */
    kcs_format e5 = KCS_FMT_FP8_E5M2;
    CU_ASSERT_EQUAL(kcs_format_round(e5, 61439.0, RNE), 57344.0);
    CU_ASSERT_EQUAL(kcs_format_round(e5, 61440.0, RNE), INFINITY);
    CU_ASSERT_EQUAL(kcs_format_round(e5, -61440.0, SAT), -57344.0);
    /* fnuz: e4m3fnuz 240 = 1.111b*2^7 odd; tie 248 -> 256 -> NaN */
    kcs_format u4 = KCS_FMT_FP8_E4M3FNUZ, u5 = KCS_FMT_FP8_E5M2FNUZ;
    CU_ASSERT_EQUAL(kcs_format_round(u4, 247.0, RNE), 240.0);
    CU_ASSERT(isnan(kcs_format_round(u4, 248.0, RNE)));
    CU_ASSERT_EQUAL(kcs_format_round(u4, 248.0, SAT), 240.0);
    CU_ASSERT(isnan(kcs_format_round(u5, 61440.0, RNE)));
    CU_ASSERT_EQUAL(kcs_format_round(u5, 1e9, RZ), 57344.0);
    /* fp32 / bf16 / tf32 at 2^128 */
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP32, 0x1.fffffefffffffp127, RNE), FLT_MAX);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP32, 0x1.ffffffp127, RNE), INFINITY);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_BF16, 0x1.ffp127, RNE), INFINITY);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_BF16, 0x1.fefffp127, RNE), 0x1.fep127);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_TF32, 0x1.ffep127, RNE), INFINITY);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_TF32, 1e300, RZ), 0x1.ffcp127);
}

static void test_subnormal(void)
{
    kcs_format h = KCS_FMT_FP16;
    double s = ldexp(1, -24); /* fp16 min subnormal */
    CU_ASSERT_EQUAL(kcs_format_round(h, s / 2, RNE), 0.0);   /* tie to even 0 */
    CU_ASSERT(signbit(kcs_format_round(h, -s / 2, RNE)));     /* -0 kept */
    CU_ASSERT_EQUAL(kcs_format_round(h, nextafter(s / 2, 1), RNE), s);
    CU_ASSERT_EQUAL(kcs_format_round(h, 1.5 * s, RNE), 2 * s); /* tie to even 2s */
    CU_ASSERT_EQUAL(kcs_format_round(h, 1e-30, RU), s);
    CU_ASSERT_EQUAL(kcs_format_round(h, -1e-30, RD), -s);
    CU_ASSERT_EQUAL(kcs_format_round(h, 1e-30, RZ), 0.0);
    CU_ASSERT_EQUAL(kcs_format_round(h, ldexp(1, -15), RNE), ldexp(1, -15));
    CU_ASSERT_EQUAL(kcs_format_round(h, ldexp(1, -15), FTZ), 0.0);
    CU_ASSERT(signbit(kcs_format_round(h, -ldexp(1, -15), FTZ)));
    CU_ASSERT_EQUAL(kcs_format_round(h, ldexp(1, -14), FTZ), ldexp(1, -14));
    /* rounds up to the smallest normal, which is kept */
    CU_ASSERT_EQUAL(kcs_format_round(h, ldexp(1, -14) - s / 4, FTZ), ldexp(1, -14));
    CU_ASSERT_EQUAL(kcs_format_round(h, ldexp(1, -14) - s, FTZ), 0.0);
    /* fnuz: no -0 */
    double r = kcs_format_round(KCS_FMT_FP8_E4M3FNUZ, -1e-9, RNE);
    CU_ASSERT(r == 0.0 && !signbit(r));
    r = kcs_format_round(KCS_FMT_FP8_E4M3FNUZ, -0.0, RNE);
    CU_ASSERT(r == 0.0 && !signbit(r));
    /* e4m3: quantum 2^-9 below 2^-6; e4m3fnuz: 2^-10 below 2^-7 */
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E4M3, 3 * ldexp(1, -11), RNE), ldexp(1, -9));
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E4M3FNUZ, 3 * ldexp(1, -12), RNE),
                    ldexp(1, -10)); /* 0.75 q -> q */
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E4M3FNUZ, 3 * ldexp(1, -11), RNE),
                    ldexp(1, -9)); /* 1.5 q: tie -> 2q (even) */
    /* bf16 keeps fp32's subnormal range with 7 fraction bits */
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_BF16, ldexp(1, -134), RNE), 0.0);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_BF16, ldexp(3, -135), RNE), ldexp(1, -133));
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP32, ldexp(1, -140), FTZ), 0.0);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP32, ldexp(1, -126), FTZ), ldexp(1, -126));
}

static void test_direct_rounding(void)
{
    /* no double rounding through fp32: 1 + 2^-8 + 2^-30 is above the bf16
     * midpoint (1 + 2^-8); via fp32 it would become the tie and go to 1. */
    double x = 1 + ldexp(1, -8) + ldexp(1, -30);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_BF16, x, RNE), 1 + ldexp(1, -7));
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_BF16, (float)x, RNE), 1.0);
    x = 1 + ldexp(1, -11) + ldexp(1, -40);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_TF32, x, RNE), 1 + ldexp(1, -10));
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E4M3, 1.0625, RNE), 1.0);    /* tie, even */
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E4M3, 1.1875, RNE), 1.25);   /* tie, even */
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E5M2, 1.125, RNE), 1.0);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP8_E5M2, 1.375, RNE), 1.5);
    CU_ASSERT(isnan(kcs_format_round(KCS_FMT_FP16, NAN, RNE)));
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP64, 0.1, RZ), 0.1);
    CU_ASSERT_EQUAL(kcs_format_round(KCS_FMT_FP64, ldexp(1, -1074), FTZ), 0.0);
}

/* random doubles spread over the fp32 range and beyond, plus near-midpoints */
static double rnd_double_fp32ish(void)
{
    uint64_t r = rnd64();
    switch (r & 3) {
    case 0: { /* random bits, exponent in [-160, 130] */
        int e = (int)((r >> 2) % 291) - 160;
        double m = 1.0 + (double)(rnd64() >> 12) * 0x1p-52;
        return ((r >> 20) & 1 ? -1 : 1) * ldexp(m, e);
    }
    case 1: { /* fp32 midpoints and their neighbours */
        float f;
        uint32_t u = (uint32_t)(rnd64() >> 33) % 0x7F800000u;
        memcpy(&f, &u, 4);
        double mid = (double)f + ((double)nextafterf(f, INFINITY) - f) / 2;
        int d = (int)((r >> 2) % 5) - 2;
        while (d < 0) { mid = nextafter(mid, 0); d++; }
        while (d > 0) { mid = nextafter(mid, INFINITY); d--; }
        return (r >> 10) & 1 ? -mid : mid;
    }
    case 2: { /* any finite double */
        double d;
        uint64_t u = rnd64();
        memcpy(&d, &u, 8);
        return isfinite(d) ? d : 1.0;
    }
    default: { /* near fp32 max or min normal */
        double base = (r >> 2) & 1 ? 0x1.fffffep127 : 0x1p-126;
        double m = 1.0 + ((double)(rnd64() >> 11) * 0x1p-53 - 0.5) * 0x1p-20;
        return base * m;
    }
    }
}

static void test_fp32_vs_cast(void)
{
    long bad = 0;
    for (long i = 0; i < 3000000; i++) {
        volatile double x = rnd_double_fp32ish();
        volatile float f = (float)x;
        bad += !same(kcs_format_round(KCS_FMT_FP32, x, KCS_ROUND_DEFAULT), (double)f);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* directed modes: the hardware conversion follows the rounding mode */
    const int fe[] = {FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    const kcs_round_mode km[] = {RZ, RD, RU};
    for (int m = 0; m < 3; m++) {
        long badm = 0;
        for (long i = 0; i < 300000; i++) {
            volatile double x = rnd_double_fp32ish();
            fesetround(fe[m]);
            volatile float f = (float)x;
            fesetround(FE_TONEAREST);
            badm += !same(kcs_format_round(KCS_FMT_FP32, x, km[m]), (double)f);
        }
        CU_ASSERT_EQUAL(badm, 0);
    }
}

static void test_fp16_vs_float16(void)
{
#ifdef __FLT16_MAX__
    long bad = 0;
    for (long i = 0; i < 3000000; i++) {
        uint64_t r = rnd64();
        int e = (int)(r % 50) - 30; /* 2^-30 .. 2^19: subnormal to overflow */
        double m = 1.0 + (double)(rnd64() >> 12) * 0x1p-52;
        if ((r >> 8) % 4 == 0) /* exact fp16 midpoints */
            m = 1.0 + (double)((rnd64() >> 53) | 1) * 0x1p-11;
        volatile double x = ((r >> 7) & 1 ? -1 : 1) * ldexp(m, e);
        volatile _Float16 h = (_Float16)x;
        bad += !same(kcs_format_round(KCS_FMT_FP16, x, KCS_ROUND_DEFAULT), (double)h);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* every fp16 value converts back exactly */
    for (uint32_t c = 0; c < 65536; c++) {
        uint16_t u = (uint16_t)c;
        _Float16 h;
        memcpy(&h, &u, 2);
        double v = kcs_format_decode(KCS_FMT_FP16, c);
        CU_ASSERT(same(v, (double)h));
        if (!same(v, (double)h))
            break;
    }
#else
    CU_PASS("_Float16 not supported by this compiler");
#endif
}

static void test_round_bits(void)
{
    long bad = 0;
    const kcs_rounding rr[] = {KCS_RNE, KCS_RZ, KCS_RD, KCS_RU};
    for (long i = 0; i < 400000; i++) {
        double x = rnd_double_fp32ish();
        kcs_rounding r = rr[i & 3];
        kcs_round_mode md = {r, KCS_OVF_INF, KCS_SUB_KEEP};
        double f32 = kcs_format_round(KCS_FMT_FP32, x, md);
        double b24 = kcs_round_bits(x, 24, r);
        if (isinf(f32) || fabs(f32) == FLT_MAX) {
            /* same below 2^128; at/after it round_bits gives Inf in all modes */
            if (!(isinf(b24) || same(b24, f32)))
                bad++;
        } else {
            bad += !same(b24, f32);
        }
        double t = kcs_format_round(KCS_FMT_TF32, x, md);
        if (isfinite(t) && fabs(t) < 0x1.ffcp127)
            bad += !same(kcs_round_bits(x, 11, r), t);
        double b = kcs_format_round(KCS_FMT_BF16, x, md);
        if (isfinite(b) && fabs(b) < 0x1.fep127)
            bad += !same(kcs_round_bits(x, 8, r), b);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* 14 bits: ulp of 1 is 2^-13 */
    CU_ASSERT_EQUAL(kcs_round_bits(1 + ldexp(1, -14), 14, KCS_RNE), 1.0);
    CU_ASSERT_EQUAL(kcs_round_bits(1 + ldexp(3, -14), 14, KCS_RNE), 1 + ldexp(1, -12));
    CU_ASSERT_EQUAL(kcs_round_bits(1 + ldexp(3, -14), 14, KCS_RZ), 1 + ldexp(1, -13));
    CU_ASSERT_EQUAL(kcs_round_bits(-(1 + ldexp(1, -20)), 14, KCS_RD), -(1 + ldexp(1, -13)));
    /* subnormal quantum 2^(-126-13) */
    CU_ASSERT_EQUAL(kcs_round_bits(ldexp(1, -140), 14, KCS_RNE), 0.0);
    CU_ASSERT_EQUAL(kcs_round_bits(ldexp(3, -141), 14, KCS_RNE), ldexp(1, -139));
    /* overflow: beyond (2 - 2^-13) * 2^127 -> Inf, in RZ too */
    double max14 = ldexp(2 - ldexp(1, -13), 127);
    CU_ASSERT_EQUAL(kcs_round_bits(max14 * (1 + ldexp(1, -16)), 14, KCS_RZ), max14);
    CU_ASSERT_EQUAL(kcs_round_bits(ldexp(1, 128), 14, KCS_RZ), INFINITY);
    CU_ASSERT_EQUAL(kcs_round_bits(-ldexp(1, 128), 24, KCS_RZ), -INFINITY);
    CU_ASSERT_EQUAL(kcs_round_bits(max14 + ldexp(1, 113), 14, KCS_RNE), INFINITY); /* tie */
    CU_ASSERT_EQUAL(kcs_round_bits(max14 + ldexp(1, 112), 14, KCS_RNE), max14);
    CU_ASSERT(isnan(kcs_round_bits(NAN, 14, KCS_RNE)));
}

static void test_exact(void)
{
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP32, 0.1));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP32, (float)0.1));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP16, 1 + ldexp(1, -10)));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_BF16, 1 + ldexp(1, -10)));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_TF32, 1 + ldexp(1, -23)));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP8_E4M3, 448));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP8_E4M3, 480));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP8_E4M3, INFINITY));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP8_E5M2, -INFINITY));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP8_E4M3, ldexp(1, -9)));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP8_E4M3, ldexp(1, -10)));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP8_E4M3FNUZ, ldexp(1, -10)));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP8_E4M3FNUZ, 256));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP16, 65536));
    CU_ASSERT(!kcs_format_exact(KCS_FMT_FP16, 1e-9));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP16, NAN));
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP64, 0.1));
}

static void test_ulp_distance(void)
{
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP32, 1.0, nextafterf(1.0f, 2.0f)), 1.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP32, 1.0, 2.0), 8388608.0); /* 2^23 */
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP16, 1.0, 2.0), 1024.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP16, -ldexp(1, -24), ldexp(1, -24)), 2.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP16, -0.0, 0.0), 0.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP64, -0.0, 0.0), 0.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP64, 1.0, nextafter(1.0, 2.0)), 1.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP64, -ldexp(1, -1074), ldexp(1, -1073)), 3.0);
    /* +-DBL_MAX: 2 * (0x7FEFFFFFFFFFFFFF) apart */
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP64, -DBL_MAX, DBL_MAX),
                    2.0 * (double)0x7FEFFFFFFFFFFFFFull);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP8_E4M3, 0.0, 448.0), 126.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP8_E4M3FNUZ, -240.0, 240.0), 254.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_BF16, 1.0, 1.0 + ldexp(1, -7)), 1.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_TF32, 1.0, 2.0), 1024.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP16, 65504.0, INFINITY), 1.0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP32, NAN, 1.0), INFINITY);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP32, NAN, NAN), 0.0);
}

static const ut_test tests[] = {
    {"info", test_info},
    {"exhaustive encodings", test_exhaustive},
    {"midpoints 8/16-bit and tf32", test_midpoints_small},
    {"midpoints fp32", test_midpoints_fp32},
    {"overflow", test_overflow},
    {"subnormal and flush", test_subnormal},
    {"direct rounding", test_direct_rounding},
    {"fp32 vs C cast", test_fp32_vs_cast},
    {"fp16 vs _Float16", test_fp16_vs_float16},
    {"round_bits", test_round_bits},
    {"exact", test_exact},
    {"ulp distance", test_ulp_distance},
};

UT_MAIN("format", tests)
