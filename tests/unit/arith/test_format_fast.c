/* The bit-level fast paths (src/format_fast.c) against the generic path of
 * src/format.c (kcs_format_round_ref / encode_ref / exact_ref), bit for bit:
 * every value of every 8- and 16-bit format and of tf32, each neighbour
 * one fp64 ulp away, every midpoint between consecutive values and its
 * neighbours, run through every format; dense random doubles (all bit
 * patterns, and values near the formats' ranges and rounding boundaries);
 * a strided sample of fp32 inputs (every fp32 bit pattern with
 * KCS_TEST_EXHAUSTIVE=1, minutes). Scalar entry points (kcs_format_round,
 * encode, exact) and the array loops (round_n, encode_n, digest_words, the
 * AVX2 clone where the CPU has it) are both checked. */
#include "format.h"
#include "format_fast.h"

#include <CUnit/Basic.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_helpers.h"

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint64_t rnd64(void)
{
    return ut_splitmix64(&rng_state);
}

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double dbl(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint64_t ref_word(kcs_format f, double x)
{
    return kcs_format_exact_ref(f, x) ? kcs_format_encode_ref(f, x)
                                      : bits_of(x) ^ 0xA5A5A5A5A5A5A5A5ull;
}

/* A batch of inputs checked against every format, scalar and array. */
enum { BATCH = 4096 };
static double in_buf[BATCH];
static size_t in_fill;
static long long n_checked, n_bad;

static void report(const char *what, kcs_format f, double x, uint64_t got, uint64_t want)
{
    if (n_bad++ < 12)
        fprintf(stderr, "  %s %s x=%a (0x%016llx): fast 0x%llx, generic 0x%llx\n", what,
                kcs_format_name(f), x, (unsigned long long)bits_of(x), (unsigned long long)got,
                (unsigned long long)want);
}

static void flush(void)
{
    static double y[BATCH];
    static uint64_t e[BATCH], w[BATCH];
    size_t n = in_fill;
    for (int fi = 0; fi < KCS_FMT_COUNT; fi++) {
        kcs_format f = (kcs_format)fi;
        kcs_format_round_n(f, in_buf, y, n);
        kcs_format_encode_n(f, in_buf, e, n);
        kcs_format_digest_words(f, in_buf, w, n);
        for (size_t i = 0; i < n; i++) {
            double x = in_buf[i];
            uint64_t r_ref = bits_of(kcs_format_round_ref(f, x, KCS_ROUND_DEFAULT));
            uint64_t e_ref = kcs_format_encode_ref(f, x);
            uint64_t w_ref = ref_word(f, x);
            uint64_t r_fast = bits_of(kcs_format_round(f, x, KCS_ROUND_DEFAULT));
            if (r_fast != r_ref)
                report("round", f, x, r_fast, r_ref);
            if (bits_of(y[i]) != r_ref)
                report("round_n", f, x, bits_of(y[i]), r_ref);
            if (f == KCS_FMT_FP32 && bits_of(kcs_ff_round_fp32(x)) != r_ref)
                report("round_fp32", f, x, bits_of(kcs_ff_round_fp32(x)), r_ref);
            if (kcs_format_encode(f, x) != e_ref)
                report("encode", f, x, kcs_format_encode(f, x), e_ref);
            if (e[i] != e_ref)
                report("encode_n", f, x, e[i], e_ref);
            if (kcs_format_exact(f, x) != kcs_format_exact_ref(f, x))
                report("exact", f, x, kcs_format_exact(f, x), kcs_format_exact_ref(f, x));
            if (w[i] != w_ref)
                report("digest_words", f, x, w[i], w_ref);
            n_checked++;
        }
    }
    in_fill = 0;
}

static void add(double x)
{
    in_buf[in_fill++] = x;
    if (in_fill == BATCH)
        flush();
}

static void add_signed(double x)
{
    add(x);
    add(-x);
}

/* Every value of format g, its fp64 neighbours, and each midpoint to the
 * next larger value with its neighbours. */
static void every_value_of(kcs_format g)
{
    const kcs_format_info *gi = kcs_format_get(g);
    int shift = g == KCS_FMT_TF32 ? 13 : 0;
    int bits = g == KCS_FMT_TF32 ? 19 : gi->bits;
    uint64_t half = (uint64_t)1 << (bits - 1); /* positive patterns */
    for (uint64_t p = 0; p < half; p++) {
        double v = kcs_format_decode(g, p << shift);
        double w = kcs_format_decode(g, (p + 1) << shift);
        if (isnan(v))
            continue;
        add_signed(v);
        add_signed(nextafter(v, INFINITY));
        add_signed(nextafter(v, 0.0));
        if (isnan(w) || isinf(w) || isinf(v) || w <= v)
            continue;
        double mid = v + (w - v) / 2; /* exact: few significant bits */
        add_signed(mid);
        add_signed(nextafter(mid, INFINITY));
        add_signed(nextafter(mid, 0.0));
    }
}

static void test_every_small_format_value(void)
{
    n_checked = n_bad = 0;
    kcs_format gs[] = {KCS_FMT_FP8_E4M3,     KCS_FMT_FP8_E5M2, KCS_FMT_FP8_E4M3FNUZ,
                       KCS_FMT_FP8_E5M2FNUZ, KCS_FMT_BF16,     KCS_FMT_FP16,
                       KCS_FMT_TF32};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++)
        every_value_of(gs[i]);
    flush();
    printf("\n  %lld (input, format) pairs from every 8/16-bit and tf32 value, %lld mismatches\n",
           n_checked, n_bad);
    CU_ASSERT(n_checked > 7 * 2 * 65536);
    CU_ASSERT_EQUAL(n_bad, 0);
}

static void test_specials_and_random(void)
{
    n_checked = n_bad = 0;
    double sp[] = {0.0, INFINITY, NAN, DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 0x1p-1074 * 3,
                   0x1.fffffep127, 0x1.ffffffp127, 0x1.fffffe8p127, 65504.0, 65520.0, 65519.99,
                   448.0, 464.0, 464.0001, 480.0, 240.0, 248.0, 57344.0, 61440.0, 0x1p-149,
                   0x1p-150, 0x1.8p-150, 0x1p-151, 0x1p-24, 0x1p-25, 0x1.0000000000001p-25,
                   0x1p-9, 0x1p-10, 0x1p-17, 0x1p-18, 0x1p-133, 0x1p-134};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        add_signed(sp[i]);
        add_signed(nextafter(sp[i], 0.0));
        add_signed(nextafter(sp[i], INFINITY));
    }
    add(dbl(0x7ff0000000000001ull)); /* signalling NaN payloads, both signs */
    add(dbl(0xfff8000000000123ull));
    add(dbl(0x7ffc00000000beefull));
    for (int i = 0; i < 400000; i++) /* every bit pattern equally likely */
        add(dbl(rnd64()));
    for (int i = 0; i < 800000; i++) { /* exponents around the formats' ranges */
        uint64_t r = rnd64();
        int e = (int)(r % 300) - 160;
        uint64_t mant = rnd64() & 0xfffffffffffffull;
        if (r & (1u << 20)) /* near a rounding boundary of some format */
            mant = (mant & ~0x3fffffffull) | ((r >> 24) & 1 ? 0x20000000ull : 0x1fffffffull);
        if (r & (1u << 21))
            mant &= ~(((uint64_t)1 << (r >> 40) % 52) - 1);
        add((r >> 63 ? -1.0 : 1.0) * dbl(((uint64_t)(e + 1023) << 52) | mant));
    }
    flush();
    printf("\n  %lld (input, format) pairs of specials and random doubles, %lld mismatches\n",
           n_checked, n_bad);
    CU_ASSERT(n_checked > 1000000);
    CU_ASSERT_EQUAL(n_bad, 0);
}

/* fp32 inputs: a strided sample of all 2^32 patterns (every pattern with
 * KCS_TEST_EXHAUSTIVE=1). */
static void test_fp32_inputs(void)
{
    n_checked = n_bad = 0;
    const char *ex = getenv("KCS_TEST_EXHAUSTIVE");
    uint64_t stride = ex && ex[0] == '1' ? 1 : 4099;
    for (uint64_t p = 0; p < ((uint64_t)1 << 32); p += stride) {
        uint32_t u = (uint32_t)p;
        float fv;
        memcpy(&fv, &u, sizeof fv);
        add((double)fv);
    }
    flush();
    printf("\n  %lld (input, format) pairs of fp32 inputs (stride %llu), %lld mismatches\n",
           n_checked, (unsigned long long)stride, n_bad);
    CU_ASSERT(n_checked > 1000000);
    CU_ASSERT_EQUAL(n_bad, 0);
}

/* kcs_ff_ulp_distance against the definition on the generic path: both
 * values rounded, ordered through the sign-magnitude encoding. */
static double ref_ulp(kcs_format f, double a, double b)
{
    a = kcs_format_round_ref(f, a, KCS_ROUND_DEFAULT);
    b = kcs_format_round_ref(f, b, KCS_ROUND_DEFAULT);
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0.0 : INFINITY;
    const kcs_format_info *fi = kcs_format_get(f);
    int shift = f == KCS_FMT_TF32 ? 13 : 0;
    int sp = f == KCS_FMT_TF32 ? 18 : fi->bits - 1;
    uint64_t ea = kcs_format_encode_ref(f, a) >> shift, eb = kcs_format_encode_ref(f, b) >> shift;
    uint64_t s = (uint64_t)1 << sp, ma = ea & (s - 1), mb = eb & (s - 1);
    if ((ea & s) == (eb & s))
        return (double)(ma > mb ? ma - mb : mb - ma);
    return (double)(ma + mb);
}

static void test_ulp_distance(void)
{
    long long bad = 0, n = 0;
    for (int fi = 1; fi < KCS_FMT_COUNT; fi++) {
        kcs_format f = (kcs_format)fi;
        const kcs_fmt_fast *F = kcs_fmt_fast_get(f);
        double scale = kcs_format_get(f)->max_finite;
        for (int i = 0; i < 200000; i++) {
            double a, b;
            if (i % 3 == 0) { /* any doubles */
                a = dbl(rnd64());
                b = dbl(rnd64());
            } else { /* near each other, within the format's range */
                a = scale * ldexp((double)(rnd64() >> 11) * 0x1p-53, -(int)(rnd64() % 40));
                b = a * (1.0 + ldexp((double)(int64_t)(rnd64() >> 40), -40 - (int)(rnd64() % 16)));
                if (i & 1)
                    b = -b;
                if (i % 7 == 0)
                    b = a;
            }
            double got = kcs_ff_ulp_distance(F, a, b), want = ref_ulp(f, a, b);
            double lib = kcs_format_ulp_distance(f, a, b);
            if (!(got == want && lib == want) && bad++ < 8)
                fprintf(stderr, "  ulp %s a=%a b=%a: fast %g generic %g format.c %g\n",
                        kcs_format_name(f), a, b, got, want, lib);
            n++;
        }
    }
    CU_ASSERT(n > 1000000);
    CU_ASSERT_EQUAL(bad, 0);
}

/* kcs_format_ulp_distance's fp32 path (the hardware conversion) against
 * the generic definition on edge pairs (ties, subnormals, the overflow
 * boundary, +-0, NaN, Inf) and on random doubles across fp32's range and
 * beyond it; other formats take the table-driven path. */
static void test_ulp_distance_fp32(void)
{
    const double edge[] = {0.0, -0.0, 1.0, -1.0, 0x1.000001p0, 0x1.0000008p0, 0x1.0000018p0,
                           0x1p-126, 0x1p-149, 0x1p-150, 0x1.8p-150, -0x1p-149, 0x1.fffffep127,
                           0x1.ffffffp127, 0x1p128, -0x1p128, INFINITY, -INFINITY, NAN, -NAN,
                           3.4e38, 1e-45, 0x1.fffffefffffffp127, 65504.0};
    size_t ne = sizeof edge / sizeof edge[0];
    int bad = 0;
    for (size_t i = 0; i < ne; i++)
        for (size_t j = 0; j < ne; j++) {
            double u = kcs_format_ulp_distance(KCS_FMT_FP32, edge[i], edge[j]);
            double v = ref_ulp(KCS_FMT_FP32, edge[i], edge[j]);
            bad += !(u == v || (isnan(u) && isnan(v)));
        }
    for (int t = 0; t < 200000; t++) {
        double a = ldexp((double)(rnd64() >> 11) * 0x1p-53 - 0.5, (int)(rnd64() % 300) - 160);
        double b = t % 3 ? a * (1.0 + ldexp((double)(rnd64() >> 11) * 0x1p-53 - 0.5,
                                            -(int)(rnd64() % 30)))
                         : -a;
        bad += kcs_format_ulp_distance(KCS_FMT_FP32, a, b) != ref_ulp(KCS_FMT_FP32, a, b);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(kcs_format_ulp_distance(KCS_FMT_FP16, 1.0, 2.0), 1024.0);
}

/* Non-default modes are not the fast path's: they still answer as the
 * generic path does. */
static void test_other_modes_generic(void)
{
    kcs_round_mode modes[] = {{KCS_RZ, KCS_OVF_INF, KCS_SUB_KEEP},
                              {KCS_RNE, KCS_OVF_SATURATE, KCS_SUB_KEEP},
                              {KCS_RNE, KCS_OVF_INF, KCS_SUB_FLUSH}};
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        double x = dbl(rnd64());
        for (int fi = 0; fi < KCS_FMT_COUNT; fi++)
            for (int m = 0; m < 3; m++)
                bad += bits_of(kcs_format_round((kcs_format)fi, x, modes[m])) !=
                       bits_of(kcs_format_round_ref((kcs_format)fi, x, modes[m]));
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* kcs_round_bits (bits:N accumulators, narrowed matrix units) and RZ in
 * fp32's exponent range by integer operations against the scaling path:
 * doubles around fp32's exponent range with random significands, the ties
 * of every precision p and their neighbours, binade edges and overflow. */
static double near_fp32_range(int p)
{
    int e = (int)(rnd64() % 262) - 131; /* 2^-131 .. 2^130 */
    uint64_t mant = rnd64() & (((uint64_t)1 << 52) - 1);
    switch (rnd64() % 4) {
    case 0: /* a tie at p bits: the first dropped bit set, the rest clear */
        if (p < 53)
            mant = (mant & ~(((uint64_t)1 << (53 - p)) - 1)) | ((uint64_t)1 << (52 - p));
        break;
    case 1: /* a neighbour of a tie */
        if (p < 53)
            mant = ((mant & ~(((uint64_t)1 << (53 - p)) - 1)) | ((uint64_t)1 << (52 - p))) +
                   (rnd64() & 1 ? 1 : (uint64_t)-1);
        mant &= ((uint64_t)1 << 52) - 1;
        break;
    case 2: /* all kept bits set: rounding up carries into the exponent */
        mant |= ~(((uint64_t)1 << (53 - p)) - 1) & (((uint64_t)1 << 52) - 1);
        break;
    default:
        break;
    }
    double x = ldexp(1.0 + ldexp((double)mant, -52), e);
    return rnd64() & 1 ? -x : x;
}

static void test_round_bits_fast(void)
{
    const kcs_rounding modes[] = {KCS_RNE, KCS_RZ, KCS_RD, KCS_RU};
    const kcs_format rz_fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_TF32};
    const kcs_round_mode rz = {KCS_RZ, KCS_OVF_INF, KCS_SUB_KEEP};
    long long n = 0, bad = 0;
    for (int p = 1; p <= 53; p++)
        for (int i = 0; i < 4000; i++) {
            double x = near_fp32_range(p);
            for (int m = 0; m < 4; m++, n++)
                bad += bits_of(kcs_round_bits(x, p, modes[m])) !=
                       bits_of(kcs_round_bits_ref(x, p, modes[m]));
            for (int f = 0; f < 3; f++, n++)
                bad += bits_of(kcs_format_round(rz_fmts[f], x, rz)) !=
                       bits_of(kcs_format_round_ref(rz_fmts[f], x, rz));
        }
    const double edges[] = {0x1p-126, -0x1p-126, 0x1.fffffffffffffp-127, 0x1.fffffep127,
                            0x1.ffffffp127, 0x1.fffffffffffffp127, 0x1p128, 0.0, -0.0,
                            INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (int p = 1; p <= 53; p++)
            for (int m = 0; m < 4; m++, n++)
                bad += bits_of(kcs_round_bits(edges[i], p, modes[m])) !=
                       bits_of(kcs_round_bits_ref(edges[i], p, modes[m]));
    printf("\n  %lld roundings, %lld mismatches\n", n, bad);
    CU_ASSERT(n > 1000000);
    CU_ASSERT_EQUAL(bad, 0);
}

static const ut_test tests[] = {
    {"every value, neighbour and midpoint of 8/16-bit and tf32", test_every_small_format_value},
    {"specials and dense random doubles", test_specials_and_random},
    {"fp32 inputs (strided; KCS_TEST_EXHAUSTIVE=1: all)", test_fp32_inputs},
    {"ulp distance", test_ulp_distance},
    {"fp32 ulp distance: edges and hardware path", test_ulp_distance_fp32},
    {"non-default modes use the generic path", test_other_modes_generic},
    {"bits:N and RZ by integer operations", test_round_bits_fast},
};

UT_MAIN("format_fast", tests)
