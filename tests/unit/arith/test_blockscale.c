/* Block-scaled matrix units (src/arith/blockscale.c): every code of the
 * narrow element and scale formats, the scheme table, and the step on
 * cases worked out by hand (the MMA-Sim vectors are in test_mmasim). */
#include "blockscale.h"
#include "unit_helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fp4 e2m1, all 16 codes: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives
 * (OCP MX spec: bias 1, exponent field 0 subnormal with quantum 0.5). */
static void test_e2m1(void)
{
    static const double pos[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
    for (unsigned c = 0; c < 16; c++) {
        double v = kcs_bs_decode(KCS_BS_FP4_E2M1, c);
        double want = (c & 8) ? -pos[c & 7] : pos[c & 7];
        CU_ASSERT(v == want && signbit(v) == signbit(want));
        unsigned back = 99;
        CU_ASSERT(kcs_bs_encode(KCS_BS_FP4_E2M1, v, &back));
        CU_ASSERT_EQUAL(back, c);
    }
    unsigned code;
    CU_ASSERT(!kcs_bs_encode(KCS_BS_FP4_E2M1, 5.0, &code)); /* between 4 and 6 */
    CU_ASSERT(!kcs_bs_encode(KCS_BS_FP4_E2M1, 0.25, &code));
}

/* ue8m0, all 256 codes: 2^(code - 127), 255 NaN. */
static void test_ue8m0(void)
{
    for (unsigned c = 0; c < 256; c++) {
        double v = kcs_bs_decode(KCS_BS_UE8M0, c);
        if (c == 255) {
            CU_ASSERT(isnan(v));
            continue;
        }
        CU_ASSERT_EQUAL(v, ldexp(1.0, (int)c - 127));
        unsigned back = 999;
        CU_ASSERT(kcs_bs_encode(KCS_BS_UE8M0, v, &back));
        CU_ASSERT_EQUAL(back, c);
    }
    unsigned code;
    CU_ASSERT(!kcs_bs_encode(KCS_BS_UE8M0, 3.0, &code));
    CU_ASSERT(!kcs_bs_encode(KCS_BS_UE8M0, -1.0, &code));
}

/* ue4m3, all 128 codes: the non-negative e4m3 values (max 448, smallest
 * 2^-9), 0x7F NaN; a set sign bit is ignored. */
static void test_ue4m3(void)
{
    int finite = 0;
    double prev = -1.0;
    for (unsigned c = 0; c < 128; c++) {
        double v = kcs_bs_decode(KCS_BS_UE4M3, c);
        CU_ASSERT(kcs_bs_decode(KCS_BS_UE4M3, c | 0x80) == v || (isnan(v)));
        if (c == 0x7F) {
            CU_ASSERT(isnan(v));
            continue;
        }
        finite++;
        CU_ASSERT(v > prev); /* codes are ordered */
        prev = v;
        unsigned back = 999;
        CU_ASSERT(kcs_bs_encode(KCS_BS_UE4M3, v, &back));
        CU_ASSERT_EQUAL(back, c);
    }
    CU_ASSERT_EQUAL(finite, 127);
    CU_ASSERT_EQUAL(kcs_bs_decode(KCS_BS_UE4M3, 0x7E), 448.0);
    CU_ASSERT_EQUAL(kcs_bs_decode(KCS_BS_UE4M3, 0x01), 0x1p-9);
    CU_ASSERT_EQUAL(kcs_bs_decode(KCS_BS_UE4M3, 0x08), 0x1p-6);
}

static void test_schemes(void)
{
    const kcs_bs_scheme *s = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_bs_scheme_lookup("nvidia-b200", "nvfp4", &s, &err), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(s->fp4 && s->scale == KCS_BS_UE4M3 && s->block == 16 && s->kinst == 64);
    CU_ASSERT_EQUAL(kcs_bs_scheme_lookup("nvidia-b200", "mxfp8_e5m2", &s, &err), 0);
    CU_ASSERT(!s->fp4 && s->elem == KCS_FMT_FP8_E5M2 && s->block == 32 && s->kinst == 32);
    CU_ASSERT_EQUAL(kcs_bs_scheme_lookup("nvidia-b200", "mxfp6", &s, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mxfp4"));
    CU_ASSERT_EQUAL(kcs_bs_scheme_lookup("nvidia-h100", "mxfp4", &s, &err), KCS_E_UNSUPPORTED);
    const kcs_bs_scheme *rows;
    int n = 0;
    kcs_bs_scheme_table(&rows, &n);
    CU_ASSERT_EQUAL(n, 5);
}

/* mxfp8 e4m3 (k = 32, scales 1): c = 2^20 sets E = 20, q = 2^(20-25) =
 * 2^-5. Products: 1*1 = 1 (kept) and 30 x 2^-6 * 2^-1 = 2^-7 each (each
 * truncated to 0): d = 2^20 + 1. Without the truncation the exact sum
 * 2^20 + 1 + 30*2^-7 would round toward zero (ulp 2^-3) to 2^20 + 1.125.
 * A k that is not a multiple of 32 is refused. */
static void test_mxfp8_step(void)
{
    const kcs_bs_scheme *s;
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_bs_scheme_lookup("nvidia-b200", "mxfp8_e4m3", &s, &err) == 0);
    double a[32] = {1.0}, b[32] = {1.0}, sa = 1.0, sb = 1.0, c = 0x1p20, d = 0.0;
    for (int i = 1; i < 31; i++) {
        a[i] = 0x1p-6;
        b[i] = 0x1p-1;
    }
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 32, a, &sa, b, &sb, &c, &d), 0);
    CU_ASSERT_EQUAL(d, 0x1p20 + 1.0);
    /* scales move the products, not c: sa = 2^20, sb = 1 -> the product 1
     * becomes 2^20 and the small ones 2^13 each: 2^20 + 2^20 + 30 * 2^13 */
    sa = 0x1p20;
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 32, a, &sa, b, &sb, &c, &d), 0);
    CU_ASSERT_EQUAL(d, 0x1p21 + 30 * 0x1p13);
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 31, a, &sa, b, &sb, &c, &d), KCS_E_INVAL);
}

/* mxfp4 (k = 64, ue8m0 per 32): one product 0.5 * 0.5 in the first run with
 * scales 2^-20 and 2^-20: the run's term is 2^-42 with alignment exponent
 * -40 (the scales' alone); c = -1 sets E = 0, q = 2^-35: the term
 * truncates to 0 and d = -1 (exact: -1 + 2^-42 rounds toward zero to
 * -(1 - 2^-24)). With scales 2^-10: term 2^-22, exponent -20, kept:
 * d = -1 + 2^-22. A NaN scale (code 255) gives NaN. */
static void test_mxfp4_step(void)
{
    const kcs_bs_scheme *s;
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_bs_scheme_lookup("nvidia-b200", "mxfp4", &s, &err) == 0);
    double a[64] = {0.5}, b[64] = {0.5}, sa[2] = {0x1p-20, 1.0}, sb[2] = {0x1p-20, 1.0};
    double c = -1.0, d = 0.0;
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 64, a, sa, b, sb, &c, &d), 0);
    CU_ASSERT_EQUAL(d, -1.0);
    sa[0] = sb[0] = 0x1p-10;
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 64, a, sa, b, sb, &c, &d), 0);
    CU_ASSERT_EQUAL(d, -1.0 + 0x1p-22);
    /* The run's alignment exponent is its scales' (0), not its sum's:
     * 16 x 6 * 6 = 576 with scales 1 beside c = -2^-30 gives E = 0,
     * q = 2^-35, c kept: 576 - 2^-30 rounds toward zero to 576 - 2^-14.
     * (Were the run's exponent 9, q = 2^-26 would drop c: d = 576.) */
    double a2[64] = {0}, b2[64] = {0}, one[2] = {1.0, 1.0}, c2 = -0x1p-30;
    for (int i = 0; i < 16; i++)
        a2[i] = b2[i] = 6.0;
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 64, a2, one, b2, one, &c2, &d), 0);
    CU_ASSERT_EQUAL(d, 576.0 - 0x1p-14);
    sb[1] = kcs_bs_decode(KCS_BS_UE8M0, 255);
    CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, 1, 1, 64, a, sa, b, sb, &c, &d), 0);
    CU_ASSERT(isnan(d));
}

/* The fast kcs_blockscaled_gemm against kcs_blockscaled_gemm_ref bit for
 * bit, every scheme: random codes for elements (every fp4 code, fp8 codes
 * of the whole range with subnormals and zeros) and scales (every ue8m0 /
 * ue4m3 code, NaN included), C random over fp32's range with NaN, +-Inf and
 * signed zeros, long k (c carried over many instructions), plus huge scales
 * that push sums toward fp32 overflow. */
static uint64_t bs_state = 0x9E3779B97F4A7C15ull;
static uint64_t bs_rnd(void)
{
    return ut_splitmix64(&bs_state);
}

static void test_fast_vs_ref(void)
{
    const kcs_bs_scheme *rows;
    int nr = 0;
    kcs_bs_scheme_table(&rows, &nr);
    long compared = 0;
    for (int r = 0; r < nr; r++) {
        const kcs_bs_scheme *s = &rows[r];
        const int64_t m = 5, n = 7, k = 8 * s->kinst, ns = k / s->block;
        double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
        double *SA = malloc(sizeof(double) * m * ns), *SB = malloc(sizeof(double) * ns * n);
        double *C = malloc(sizeof(double) * m * n), *D = malloc(sizeof(double) * m * n),
               *R = malloc(sizeof(double) * m * n);
        CU_ASSERT_FATAL(A && B && SA && SB && C && D && R);
        for (int mode = 0; mode < 4; mode++) {
            for (int64_t i = 0; i < m * k; i++)
                A[i] = s->fp4 ? kcs_bs_decode(KCS_BS_FP4_E2M1, (unsigned)bs_rnd())
                              : kcs_format_decode(s->elem, (unsigned)(bs_rnd() & 0xFF));
            for (int64_t i = 0; i < k * n; i++)
                B[i] = s->fp4 ? kcs_bs_decode(KCS_BS_FP4_E2M1, (unsigned)bs_rnd())
                              : kcs_format_decode(s->elem, (unsigned)(bs_rnd() & 0xFF));
            if (!s->fp4) /* the fast path takes finite elements; NaN/Inf codes: 1 */
                for (int64_t i = 0; i < m * k; i++)
                    A[i] = isfinite(A[i]) ? A[i] : 1.0;
            if (!s->fp4)
                for (int64_t i = 0; i < k * n; i++)
                    B[i] = isfinite(B[i]) ? B[i] : -1.0;
            /* scales: mode 0 near 1, 1 every code, 2 huge (2^100 ... 2^127), 3 tiny */
            for (int64_t i = 0; i < m * ns + ns * n; i++) {
                double *x = i < m * ns ? &SA[i] : &SB[i - m * ns];
                unsigned code = (unsigned)bs_rnd();
                if (s->scale == KCS_BS_UE8M0)
                    code = mode == 0   ? 124 + code % 7
                           : mode == 1 ? code & 0xFF
                           : mode == 2 ? 227 + code % 28
                                       : code % 20;
                else
                    code = mode == 0 ? 48 + code % 24 : mode == 2 ? 100 + code % 27 : code & 0x7F;
                *x = kcs_bs_decode(s->scale, code);
            }
            for (int64_t i = 0; i < m * n; i++)
                C[i] = (float)((bs_rnd() % 2 ? -1 : 1) * ldexp((double)(bs_rnd() % 1000) + 1,
                                                            (int)(bs_rnd() % 250) - 140));
            C[0] = INFINITY;
            C[1] = -INFINITY;
            C[2] = NAN;
            C[3] = -0.0;
            C[4] = 0.0;
            CU_ASSERT_EQUAL(kcs_blockscaled_gemm(s, m, n, k, A, SA, B, SB, C, D), 0);
            CU_ASSERT_EQUAL(kcs_blockscaled_gemm_ref(s, m, n, k, A, SA, B, SB, C, R), 0);
            long bad = 0;
            for (int64_t i = 0; i < m * n; i++)
                bad += !(isnan(D[i]) && isnan(R[i])) && memcmp(&D[i], &R[i], sizeof D[i]) != 0;
            CU_ASSERT_EQUAL(bad, 0);
            if (bad)
                fprintf(stderr, "%s mode %d: %ld outputs differ\n", s->name, mode, bad);
            compared += m * n;
        }
        free(A);
        free(B);
        free(SA);
        free(SB);
        free(C);
        free(D);
        free(R);
    }
    CU_ASSERT(compared > 0);
}

static const ut_test tests[] = {
    {"fp4 e2m1 codes", test_e2m1},
    {"ue8m0 codes", test_ue8m0},
    {"ue4m3 codes", test_ue4m3},
    {"scheme table", test_schemes},
    {"mxfp8 step", test_mxfp8_step},
    {"mxfp4 step", test_mxfp4_step},
    {"fast vs reference", test_fast_vs_ref},
};

UT_MAIN("blockscale", tests)
