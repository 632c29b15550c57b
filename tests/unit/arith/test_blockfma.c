#define _POSIX_C_SOURCE 200809L /* setenv */
/* Unit tests for the block-FMA model (src/arith/blockfma.c, profile.c).
 * Every expected value below is derived by hand from shared/PROFILES.md; the
 * derivation is in the comment next to it. */
#include "error.h"
#include "format.h"
#include "blockfma_impl.h"
#include "profile.h"
#include "unit_helpers.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define P2(e) ldexp(1.0, (e))

static const kcs_profile_params *prof(const char *name, kcs_format f)
{
    const kcs_profile_params *p = NULL;
    kcs_error err;
    if (kcs_profile_lookup(name, f, &p, &err) != 0)
        return NULL;
    return p;
}

static double step(const char *name, kcs_format f, double c, const double *a, const double *b,
                   int n)
{
    const kcs_profile_params *p = prof(name, f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return kcs_blockfma_step(p, c, a, b, n);
}

static int same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The table, typed from PROFILES.md. */
static void test_table(void)
{
    static const struct {
        const char *name;
        kcs_format f;
        int F, neab;
        kcs_step_kind step;
        kcs_rounding r;
        bool flush;
    } want[] = {
        {"nvidia-v100", KCS_FMT_FP16, 4, 0, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-a100", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-a100", KCS_FMT_BF16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-a100", KCS_FMT_TF32, 4, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100", KCS_FMT_BF16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100", KCS_FMT_TF32, 8, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100", KCS_FMT_FP8_E4M3, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100", KCS_FMT_FP8_E5M2, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-b200", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-b200", KCS_FMT_BF16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-b200", KCS_FMT_TF32, 8, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-b200", KCS_FMT_FP8_E4M3, 32, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-b200", KCS_FMT_FP8_E5M2, 32, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"amd-mi100", KCS_FMT_FP16, 4, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RNE, false},
        {"amd-mi100", KCS_FMT_BF16, 2, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RNE, false},
        {"amd-mi250", KCS_FMT_FP16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true},
        {"amd-mi250", KCS_FMT_BF16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true},
        {"amd-mi300", KCS_FMT_FP16, 8, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        {"amd-mi300", KCS_FMT_BF16, 8, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        {"amd-mi300", KCS_FMT_TF32, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        {"amd-mi300", KCS_FMT_FP8_E4M3FNUZ, 16, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        {"amd-mi300", KCS_FMT_FP8_E5M2FNUZ, 16, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        /* added with the MMA-Sim comparison (docs/profiles.md) */
        {"nvidia-ada", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada", KCS_FMT_BF16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada", KCS_FMT_TF32, 4, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada", KCS_FMT_FP8_E4M3, 16, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada", KCS_FMT_FP8_E5M2, 16, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"amd-mi100-pairwise", KCS_FMT_FP16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, false},
        {"amd-mi100-pairwise", KCS_FMT_BF16, 2, 0, KCS_STEP_PAIRWISE, KCS_RNE, false},
        {"amd-mi250-pairs", KCS_FMT_BF16, 2, 0, KCS_STEP_PAIRWISE, KCS_RNE, true},
        {"amd-mi300-k4", KCS_FMT_FP16, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        {"amd-mi300-k4", KCS_FMT_BF16, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false},
        {"nvidia-v100-f16acc", KCS_FMT_FP16, 4, 0, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-a100-f16acc", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada-f16acc", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada-f16acc", KCS_FMT_FP8_E4M3, 16, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-ada-f16acc", KCS_FMT_FP8_E5M2, 16, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100-f16acc", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100-f16acc", KCS_FMT_FP8_E4M3, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-h100-f16acc", KCS_FMT_FP8_E5M2, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false},
        {"nvidia-b200-f16acc", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false},
    };
    int nw = (int)(sizeof want / sizeof want[0]);
    const kcs_profile_params *rows;
    int nr;
    CU_ASSERT_EQUAL(kcs_profile_table(&rows, &nr), 0);
    CU_ASSERT_EQUAL(nr, nw);
    for (int i = 0; i < nw; i++) {
        const kcs_profile_params *p = prof(want[i].name, want[i].f);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->F, want[i].F);
        CU_ASSERT_EQUAL(p->neab, want[i].neab);
        CU_ASSERT_EQUAL(p->step, want[i].step);
        CU_ASSERT_EQUAL(p->rounding, want[i].r);
        CU_ASSERT_EQUAL(p->flush, want[i].flush);
        CU_ASSERT(p->source && strlen(p->source) > 10);
    }
    const char *const *names;
    int nn;
    CU_ASSERT_EQUAL(kcs_profile_names(&names, &nn), 0);
    CU_ASSERT_EQUAL(nn, 16);
    kcs_error err = {0};
    const kcs_profile_params *p = NULL;
    CU_ASSERT_EQUAL(kcs_profile_lookup("nvidia-x1", KCS_FMT_FP16, &p, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "amd-mi300"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nvidia-v100"));
    CU_ASSERT_EQUAL(kcs_profile_lookup("nvidia-v100", KCS_FMT_BF16, &p, &err),
                    KCS_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fp16"));
    CU_ASSERT_EQUAL(kcs_profile_out_bits(prof("nvidia-h100", KCS_FMT_FP8_E4M3)), 14);
    CU_ASSERT_EQUAL(kcs_profile_out_bits(prof("amd-mi100", KCS_FMT_FP16)), 24);
}

/* c = 1 (E = 0), four products 2^-12 * 2^-12 = 2^-24. V100: q = 2^-23, each
 * product truncates to 0 -> 1. A100 (neab 1): q = 2^-24, all kept,
 * S = 1 + 2^-22 (fp32) -> 1 + 2^-22. Products 2^-25: dropped by A100
 * (q = 2^-24), kept by H100 (q = 2^-25): S = 1 + 2^-23. */
static void test_alignment(void)
{
    double a[4] = {P2(-12), P2(-12), P2(-12), P2(-12)};
    double b[4] = {P2(-12), P2(-12), P2(-12), P2(-12)};
    double b25[4] = {P2(-13), P2(-13), P2(-13), P2(-13)};
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, 1.0, a, b, 4), 1.0);
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_FP16, 1.0, a, b, 4), 1 + P2(-22));
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_FP16, 1.0, a, b, 4), 1 + P2(-22));
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_FP16, 1.0, a, b25, 4), 1.0);
    CU_ASSERT_EQUAL(step("nvidia-h100", KCS_FMT_FP16, 1.0, a, b25, 4), 1 + P2(-23));
    /* without c the same products set E = -24 and are all exact */
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, 0.0, a, b, 4), P2(-22));
    /* c itself is truncated when a product dominates: c = 1 + 2^-23 with
     * product 2 * 2 = 4 (E = 2): V100 q = 2^-21 -> c -> 1, d = 5 */
    double a2[1] = {2.0}, b2[1] = {2.0};
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, 1 + P2(-23), a2, b2, 1), 5.0);
    /* exponent clamp: fp16 subnormals 2^-20 have e = -14, so the product
     * 2^-40 has exponent -28 and q = 2^-51 with c = 0: kept exactly */
    double s1[1] = {P2(-20)};
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, 0.0, s1, s1, 1), P2(-40));
    /* the clamp sets E: 2^-24 (subnormal, e = -14) * 1 has exponent -14 though
     * its value is 2^-24, so V100 q = 2^-37 drops 2^-24 * 2^-14 = 2^-38;
     * A100 (q = 2^-38) keeps it. Unclamped, E would be -24 and both keep it. */
    double a3[2] = {P2(-24), P2(-24)}, b3[2] = {1.0, P2(-14)};
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, 0.0, a3, b3, 2), P2(-24));
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_FP16, 0.0, a3, b3, 2), P2(-24) + P2(-38));
}

/* c = 1, one product 2^-12 * 3*2^-13 = 3*2^-25. H100: q = 2^-25 keeps it,
 * S = 1 + 2^-24 + 2^-25: RZ -> 1; RNE (0.75 ulp above 1) -> 1 + 2^-23. */
static void test_final_rounding(void)
{
    double a[1] = {P2(-12)}, b[1] = {3 * P2(-13)};
    const kcs_profile_params *h = prof("nvidia-h100", KCS_FMT_FP16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    kcs_profile_params rne = *h;
    rne.rounding = KCS_RNE;
    CU_ASSERT_EQUAL(kcs_blockfma_step(h, 1.0, a, b, 1), 1.0);
    CU_ASSERT_EQUAL(kcs_blockfma_step(&rne, 1.0, a, b, 1), 1 + P2(-23));
    /* |S| = 1 - 1.5*2^-24 (ulp 2^-24 below 1): RZ -> 1 - 2^-23 */
    CU_ASSERT_EQUAL(kcs_blockfma_step(h, -1.0, a, b, 1), -1 + P2(-23));
    double bn[1] = {-3 * P2(-13)};
    CU_ASSERT_EQUAL(kcs_blockfma_step(h, -1.0, a, bn, 1), -1.0);      /* RZ toward 0 */
    CU_ASSERT_EQUAL(kcs_blockfma_step(&rne, -1.0, a, bn, 1), -1 - P2(-23));
    /* overflow: bf16 2^127 * 2 + c = FLT_MAX: beyond fp32 -> +Inf even in RZ */
    double ab[1] = {P2(127)}, bb[1] = {2.0};
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_BF16, 0.0, ab, bb, 1), INFINITY);
    double bbn[1] = {-2.0};
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_BF16, 0.0, ab, bbn, 1), -INFINITY);
}

/* A product whose significand carries into [2, 4) keeps its exponent
 * e(a)+e(b): 1.5*1.5 = 2.25 has exponent 0, so with V100 q = 2^-23 and
 * c = 2^-23 and a product 2^-12*2^-11 = 2^-23 both survive:
 * S = 2.25 + 2^-22, exact in fp32. (Normalising the product to exponent 1
 * would give q = 2^-22 and drop both: 2.25.) */
static void test_carry(void)
{
    double a[2] = {1.5, P2(-12)}, b[2] = {1.5, P2(-11)};
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, P2(-23), a, b, 2), 2.25 + P2(-22));
    /* (2 - 2^-10)^2 = 4 - 2^-8 + 2^-20, kept in full by the window */
    double m = 2 - P2(-10);
    double am[1] = {m}, bm[1] = {m};
    CU_ASSERT_EQUAL(step("nvidia-v100", KCS_FMT_FP16, 0.0, am, bm, 1), 4 - P2(-8) + P2(-20));
}

/* MI300 late c addition (neab 1, q_p = 2^(E_p - 24)). */
static void test_late_c(void)
{
    /* E_p > e_c: product 1 (E_p = 0); c = -2^-30 is rounded toward -inf to a
     * multiple of 2^-24: -2^-24. S = 1 - 2^-24, exact in fp32. (Global
     * alignment: 1 - 2^-30 -> 1.) c = +2^-30 rounds down to 0: d = 1. */
    double one[1] = {1.0};
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_FP16, -P2(-30), one, one, 1), 1 - P2(-24));
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_FP16, P2(-30), one, one, 1), 1.0);
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_FP16, -P2(-30), one, one, 1), 1.0);
    /* E_p < e_c: c = 1 + 2^-23 (e_c 0), products -2^-12*2^-12 = -2^-24 (E -24)
     * and 2^-20*2^-20 = 2^-40 (E -28), q_p = 2^-48: P = -2^-24 + 2^-40.
     * RD(P, 2^-31) = -2^-24, S = 1 + 2^-24: a tie, to even -> 1.
     * Exact (MI100): 1 + 2^-24 + 2^-40 -> 1 + 2^-23. */
    double a[2] = {-P2(-12), P2(-20)}, b[2] = {P2(-12), P2(-20)};
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_FP16, 1 + P2(-23), a, b, 2), 1.0);
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_FP16, 1 + P2(-23), a, b, 2), 1 + P2(-23));
    /* E_p < e_c with c = 0 (e_c = -126): bf16 products 2^-70 * 2^-70
     * (E_p = -140): RD(2^-140, 2^-157) = 2^-140 (fp32 subnormal, exact);
     * negative: -(2^-140 + 2^-160) -> RD to 2^-157 -> -(2^-140 + 2^-157). */
    double t[1] = {P2(-70)}, tn[1] = {-P2(-70)};
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_BF16, 0.0, t, t, 1), P2(-140));
    /* RD of P can create a tie: products -2^-140, -2^-149, -2^-150, +2^-160
     * (E_p = -140, q_p = 2^-164: all exact), c = 0. RD to 2^-157:
     * -(2^-140 + 2^-149 + 2^-150), midway between 513 and 514 fp32 subnormal
     * quanta (2^-149) -> even: -(2^-140 + 2^-148). The exact sum lies above
     * the midpoint: -(2^-140 + 2^-149) (MI100, nterms 4). */
    double u[4] = {-P2(-70), -P2(-75), -P2(-75), P2(-80)};
    double v[4] = {P2(-70), P2(-74), P2(-75), P2(-80)};
    (void)tn;
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_BF16, 0.0, u, v, 4), -(P2(-140) + P2(-148)));
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, 0.0, u, v, 4), -(P2(-140) + P2(-149)));
    /* equal exponents: products {1.5, 2^-24}, c = 1.25: S = P + c =
     * 2.75 + 2^-24 -> RNE (quarter ulp) -> 2.75 */
    double ae[2] = {1.5, P2(-12)}, be[2] = {1.0, P2(-12)};
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_FP16, 1.25, ae, be, 2), 2.75);
    /* no products: c passes through */
    double z[1] = {0.0};
    CU_ASSERT_EQUAL(step("amd-mi300", KCS_FMT_FP16, 1 + P2(-23), z, z, 1), 1 + P2(-23));
}

/* MI250: fp32 products, (p1+p2)+(p3+p4) in fp32 RNE, flushes. */
static void test_pairwise(void)
{
    /* subnormal fp16 input 2^-15 flushed: 2^-15 * 2^10 = 2^-5 disappears */
    double a[4] = {P2(-15), 0, 0, 0}, b[4] = {P2(10), 0, 0, 0};
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_FP16, 1.0, a, b, 4), 1.0);
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_FP16, 1.0, a, b, 4), 1 + P2(-5));
    /* subnormal product (bf16 2^-70 * 2^-70 = 2^-140) flushed */
    double p[4] = {P2(-70), 0, 0, 0};
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_BF16, 0.0, p, p, 4), 0.0);
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, 0.0, p, p, 2), P2(-140));
    /* subnormal partial sum: 1.5*2^-126 - 2^-126 = 2^-127 flushed */
    double sa[4] = {1.5 * P2(-63), -P2(-63), 0, 0}, sb[4] = {P2(-63), P2(-63), 0, 0};
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_BF16, 0.0, sa, sb, 4), 0.0);
    /* subnormal c flushed; subnormal d flushed */
    double zz[4] = {0, 0, 0, 0};
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_BF16, P2(-130), zz, zz, 4), 0.0);
    double da[4] = {-P2(-63), 0, 0, 0}, db[4] = {P2(-63), 0, 0, 0};
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_BF16, 1.5 * P2(-126), da, db, 4), 0.0);
    /* the tree's roundings: products {2^24, 1, 1, 1}: 2^24 + 1 -> 2^24 (tie,
     * even), 1 + 1 = 2, sum 2^24 + 2. Exact (MI100): 2^24 + 3 -> 2^24 + 4. */
    double ta[4] = {4096, 1, 1, 1};
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_FP16, 0.0, ta, ta, 4), P2(24) + 2);
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_FP16, 0.0, ta, ta, 4), P2(24) + 4);
    /* order: {1, 1, 2^24, 1}: (1+1) + (2^24+1 -> 2^24) = 2^24 + 2 as well;
     * {1, 2^24, 1, 1}: (2^24) + 2 -> 2^24 + 2. c added last: c = 1 with
     * tree 2^24 + 2: 2^24 + 3 -> tie -> 2^24 + 4. */
    CU_ASSERT_EQUAL(step("amd-mi250", KCS_FMT_FP16, 1.0, ta, ta, 4), P2(24) + 4);
}

/* H100 fp8 (neab -10): q = 2^(E-13), d kept to 14 bits (RZ). */
static void test_fp8_h100(void)
{
    /* c = 1, 32 products 2^-7*2^-7 = 2^-14 (2^-7 is an e4m3 subnormal):
     * H100 q = 2^-13 drops them -> 1; B200 (neab 2) keeps all: 1 + 2^-9 */
    double a[32], b[32];
    for (int i = 0; i < 32; i++)
        a[i] = b[i] = P2(-7);
    CU_ASSERT_EQUAL(step("nvidia-h100", KCS_FMT_FP8_E4M3, 1.0, a, b, 32), 1.0);
    CU_ASSERT_EQUAL(step("nvidia-b200", KCS_FMT_FP8_E4M3, 1.0, a, b, 32), 1 + P2(-9));
    /* c alone is narrowed to 14 bits: 1 + 2^-20 -> 1 */
    double z[1] = {0.0};
    CU_ASSERT_EQUAL(step("nvidia-h100", KCS_FMT_FP8_E4M3, 1 + P2(-20), z, z, 1), 1.0);
    CU_ASSERT_EQUAL(step("nvidia-b200", KCS_FMT_FP8_E4M3, 1 + P2(-20), z, z, 1), 1 + P2(-20));
    /* 1.75^2 = 3.0625 (exponent 0, carry), plus 2^-6*2^-6 = 2^-12 and
     * 2^-6*2^-7 = 2^-13: q = 2^-13 keeps all, S = 3.0625 + 3*2^-13; 14 bits
     * at exponent 1 (ulp 2^-12), RZ -> 3.0625 + 2^-12. B200: exact. */
    double a3[3] = {1.75, P2(-6), P2(-6)}, b3[3] = {1.75, P2(-6), P2(-7)};
    CU_ASSERT_EQUAL(step("nvidia-h100", KCS_FMT_FP8_E4M3, 0.0, a3, b3, 3), 3.0625 + P2(-12));
    CU_ASSERT_EQUAL(step("nvidia-b200", KCS_FMT_FP8_E4M3, 0.0, a3, b3, 3),
                    3.0625 + 3 * P2(-13));
    /* e5m2: 1.5 * 1.5 = 2.25 plus 2^-14*2^-2 = 2^-16 (e = -16 < -13: dropped) */
    double a5[2] = {1.5, P2(-14)}, b5[2] = {1.5, 0.25};
    CU_ASSERT_EQUAL(step("nvidia-h100", KCS_FMT_FP8_E5M2, 0.0, a5, b5, 2), 2.25);
    CU_ASSERT_EQUAL(step("nvidia-b200", KCS_FMT_FP8_E5M2, 0.0, a5, b5, 2), 2.25 + P2(-16));
}

/* MI100: exact block (neab inf), one RNE rounding. */
static void test_exact_block(void)
{
    /* c = 1 + 2^-23, products -2^-24 and 2^-40: exact 1 + 2^-24 + 2^-40 is
     * above the midpoint -> 1 + 2^-23. A100 (q = 2^-24) drops 2^-40 and
     * truncates (RZ): 1 + 2^-24 -> 1. */
    double a[2] = {-P2(-12), P2(-20)}, b[2] = {P2(-12), P2(-20)};
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_FP16, 1 + P2(-23), a, b, 2), 1 + P2(-23));
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_FP16, 1 + P2(-23), a, b, 2), 1.0);
    /* bf16 F = 2, terms 2^221 apart (MPFR path): c = 2^100, products
     * -2^50*2^50 and 2^-60*2^-60: exact sum 2^-120 */
    double ab[2] = {-P2(50), P2(-60)}, bb[2] = {P2(50), P2(-60)};
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, P2(100), ab, bb, 2), P2(-120));
    /* a tie decided 2^-176 below it: c = 1 + 2^-23, products -2^-24 and
     * +-2^-200: 1 + 2^-24 +- 2^-200 -> 1 + 2^-23 / 1 */
    double at[2] = {-P2(-12), P2(-100)}, bt[2] = {P2(-12), P2(-100)};
    double btn[2] = {P2(-12), -P2(-100)};
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, 1 + P2(-23), at, bt, 2), 1 + P2(-23));
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, 1 + P2(-23), at, btn, 2), 1.0);
    /* the same through the GEMM (1x2 times 2x1; its fast path must notice
     * that these terms span more than a double holds) */
    double cg = 1 + P2(-23), dg = 0;
    const kcs_profile_params *mi = prof("amd-mi100", KCS_FMT_BF16);
    CU_ASSERT_EQUAL(kcs_emulated_gemm(mi, 1, 1, 2, at, bt, &cg, &dg), 0);
    CU_ASSERT_EQUAL(dg, 1 + P2(-23));
    CU_ASSERT_EQUAL(kcs_emulated_gemm(mi, 1, 1, 2, at, btn, &cg, &dg), 0);
    CU_ASSERT_EQUAL(dg, 1.0);
    /* the same within 128 bits (int128 path): +-2^-60 */
    double am[2] = {-P2(-12), P2(-30)}, bm[2] = {P2(-12), P2(-30)}, bmn[2] = {P2(-12), -P2(-30)};
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, 1 + P2(-23), am, bm, 2), 1 + P2(-23));
    CU_ASSERT_EQUAL(step("amd-mi100", KCS_FMT_BF16, 1 + P2(-23), am, bmn, 2), 1.0);
    /* products whose double sum is exact but whose sum with c is not, the
     * double nearest to it a tie of fp32: c = 2^20 (fp32 ulp 2^-3), products
     * 2^-4 (the midpoint) and +-2^-40 -> 2^20 + 2^-3 / 2^20. Both MI100
     * exact-block formats, through the GEMM's fast path. */
    double ah[2] = {P2(-2), P2(-20)}, bh[2] = {P2(-2), P2(-20)}, bhn[2] = {P2(-2), -P2(-20)};
    const kcs_format fmts[2] = {KCS_FMT_FP16, KCS_FMT_BF16};
    for (int f = 0; f < 2; f++) {
        const kcs_profile_params *pf = prof("amd-mi100", fmts[f]);
        for (int sg = -1; sg <= 1; sg += 2) {
            double ch = sg * P2(20), as[2] = {sg * ah[0], sg * ah[1]}, dh = 0;
            CU_ASSERT_EQUAL(kcs_emulated_gemm(pf, 1, 1, 2, as, bh, &ch, &dh), 0);
            CU_ASSERT_EQUAL(dh, sg * (P2(20) + P2(-3)));
            CU_ASSERT_EQUAL(kcs_emulated_gemm(pf, 1, 1, 2, as, bhn, &ch, &dh), 0);
            CU_ASSERT_EQUAL(dh, sg * P2(20));
        }
    }
    /* exact cancellation gives +0 */
    double ac[2] = {1.0, -1.0}, bc[2] = {1.0, 1.0};
    double r = step("amd-mi100", KCS_FMT_BF16, 0.0, ac, bc, 2);
    CU_ASSERT(r == 0.0 && !signbit(r));
}

static void test_nonfinite(void)
{
    double a[1] = {INFINITY}, b[1] = {2.0}, z[1] = {0.0};
    CU_ASSERT_EQUAL(step("nvidia-a100", KCS_FMT_FP16, 1.0, a, b, 1), INFINITY);
    CU_ASSERT(isnan(step("nvidia-a100", KCS_FMT_FP16, 1.0, a, z, 1)));
    CU_ASSERT(isnan(step("amd-mi300", KCS_FMT_FP16, NAN, b, b, 1)));
}

/* D = C + A*B, row-major; reference: the step along k in blocks of F with
 * zero padding. */
static void ref_gemm(const kcs_profile_params *p, int m, int n, int k, const double *A,
                     const double *B, const double *C, double *D)
{
    int F = p->F;
    double *a = calloc((size_t)F, sizeof *a), *b = calloc((size_t)F, sizeof *b);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double c = C ? C[i * n + j] : 0.0;
            if (p->acc_f16) /* C in the accumulator's format */
                c = kcs_format_round(KCS_FMT_FP16, c, KCS_ROUND_DEFAULT);
            if (p->flush && fabs(c) < 0x1p-126)
                c = p->flush_sign == KCS_FSIGN_POSITIVE ? 0.0 : copysign(0.0, c);
            for (int k0 = 0; k0 < k; k0 += F) {
                for (int t = 0; t < F; t++) {
                    a[t] = k0 + t < k ? A[i * k + k0 + t] : 0.0;
                    b[t] = k0 + t < k ? B[(k0 + t) * n + j] : 0.0;
                }
                c = kcs_blockfma_step(p, c, a, b, F);
            }
            D[i * n + j] = c;
        }
    free(a);
    free(b);
}

/* A partial final block is padded with zero products, and blocks start at
 * k = 0. V100 (F = 4), k = 5:
 * products {2^-24 x4, 1}: block 1 sums the small ones exactly (E = -24):
 * 2^-22; block 2: c = 2^-22, product 1, q = 2^-23: 1 + 2^-22.
 * products {1, 2^-24 x4}: block 1: 1 (three 2^-24 dropped); block 2: c = 1,
 * product 2^-24 dropped: 1. */
static void test_padding(void)
{
    const kcs_profile_params *v = prof("nvidia-v100", KCS_FMT_FP16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    double s = P2(-12);
    double A1[5] = {s, s, s, s, 1}, B1[5] = {s, s, s, s, 1};
    double A2[5] = {1, s, s, s, s}, B2[5] = {1, s, s, s, s};
    double D = -1;
    CU_ASSERT_EQUAL(kcs_emulated_gemm(v, 1, 1, 5, A1, B1, NULL, &D), 0);
    CU_ASSERT_EQUAL(D, 1 + P2(-22));
    CU_ASSERT_EQUAL(kcs_emulated_gemm(v, 1, 1, 5, A2, B2, NULL, &D), 0);
    CU_ASSERT_EQUAL(D, 1.0);
    /* k = 0: D = C */
    double C = 0.75;
    CU_ASSERT_EQUAL(kcs_emulated_gemm(v, 1, 1, 0, A1, B1, &C, &D), 0);
    CU_ASSERT_EQUAL(D, 0.75);
}

/* FTTN-style: one GEMM whose diagonal probes five features; each profile
 * answers differently (H100 and B200 share fp16 parameters). Derivations:
 * P0 c=1, 4 x 2^-24: V100 drops (q 2^-23) -> 1; others 1 + 2^-22.
 * P1 c=1, 3*2^-25: NVIDIA truncate/RZ -> 1; AMD RNE of 1+3*2^-25 -> 1+2^-23.
 * P2 c=-2^-30, product 1: only MI300 (RD of c to 2^-24) -> 1 - 2^-24.
 * P3 c=0, {2^24,1,1,1}: V100 (q 2) 2^24; A100/H100 2^24+3 RZ -> 2^24+2;
 *    MI100/MI300 RNE -> 2^24+4; MI250 tree -> 2^24+2.
 * P4 c=1, 4 x 2^-25: V100, A100 drop -> 1; others 1 + 2^-23. */
static void test_fttn(void)
{
    enum { K = 4, N = 5 };
    const double s12 = P2(-12), s13 = P2(-13);
    const double pa[N][K] = {{s12, s12, s12, s12}, {s12, 0, 0, 0}, {1, 0, 0, 0},
                             {4096, 1, 1, 1},       {s12, s12, s12, s12}};
    const double pb[N][K] = {{s12, s12, s12, s12}, {3 * s13, 0, 0, 0}, {1, 0, 0, 0},
                             {4096, 1, 1, 1},       {s13, s13, s13, s13}};
    const double pc[N] = {1, 1, -P2(-30), 0, 1};
    double A[N * K], B[K * N], C[N * N], D[N * N];
    for (int i = 0; i < N; i++)
        for (int t = 0; t < K; t++) {
            A[i * K + t] = pa[i][t];
            B[t * N + i] = pb[i][t];
        }
    for (int i = 0; i < N * N; i++)
        C[i] = 0;
    for (int i = 0; i < N; i++)
        C[i * N + i] = pc[i];
    const double o = 1.0, e22 = 1 + P2(-22), e23 = 1 + P2(-23);
    const struct {
        const char *name;
        double d[N];
    } want[] = {
        {"nvidia-v100", {o, o, o, P2(24), o}},
        {"nvidia-a100", {e22, o, o, P2(24) + 2, o}},
        {"nvidia-h100", {e22, o, o, P2(24) + 2, e23}},
        {"nvidia-b200", {e22, o, o, P2(24) + 2, e23}},
        {"amd-mi100", {e22, e23, o, P2(24) + 4, e23}},
        {"amd-mi250", {e22, e23, o, P2(24) + 2, e23}},
        {"amd-mi300", {e22, e23, 1 - P2(-24), P2(24) + 4, e23}},
    };
    int nw = (int)(sizeof want / sizeof want[0]);
    for (int w = 0; w < nw; w++) {
        const kcs_profile_params *p = prof(want[w].name, KCS_FMT_FP16);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(kcs_emulated_gemm(p, N, N, K, A, B, C, D), 0);
        for (int i = 0; i < N; i++) {
            CU_ASSERT_EQUAL(D[i * N + i], want[w].d[i]);
            if (D[i * N + i] != want[w].d[i])
                fprintf(stderr, "%s probe %d: got %a want %a\n", want[w].name, i,
                        D[i * N + i], want[w].d[i]);
        }
    }
    /* the distinct answers: all pairs differ except h100 / b200 */
    for (int x = 0; x < nw; x++)
        for (int y = x + 1; y < nw; y++) {
            bool differ = memcmp(want[x].d, want[y].d, sizeof want[x].d) != 0;
            CU_ASSERT_EQUAL(differ, !(x == 2 && y == 3));
        }
}

static uint64_t rs = 0x243F6A8885A308D3ull;
static uint64_t rnd64(void)
{
    return ut_splitmix64(&rs);
}
static double urand(void) /* [0, 1) */
{
    return (double)(rnd64() >> 11) * 0x1p-53;
}

/* values of format f: mostly ~1, some tiny/subnormal, some zero */
static double rnd_in(kcs_format f, int wide)
{
    double x = (urand() * 2 - 1);
    uint64_t r = rnd64();
    if (wide && r % 8 == 0)
        x *= ldexp(1.0, -(int)((r >> 8) % 40));
    if (wide && r % 16 == 1)
        x = 0.0;
    if (wide == 3) { /* the format's whole range, subnormals included */
        const kcs_format_info *fi = kcs_format_get(f);
        int span = fi->emax - fi->emin + fi->p;
        x = (urand() * 2 - 1) * ldexp(1.0, fi->emin - fi->p + 1 + (int)(rnd64() % (uint64_t)span));
    }
    return kcs_format_round(f, x, KCS_ROUND_DEFAULT);
}

/* The fast GEMM agrees bit for bit with the reference step, every row of
 * the table, odd k, random C, wide exponent ranges, NaN/Inf rows. */
static void gemm_vs_step(const char *isa)
{
    const kcs_profile_params *rows;
    int nr;
    kcs_profile_table(&rows, &nr);
    if (isa)
        setenv("KCS_BLOCKFMA_ISA", isa, 1);
    else
        unsetenv("KCS_BLOCKFMA_ISA");
    for (int r = 0; r < 2 * nr; r++) {
        /* every row as in the table, then with its corner features flipped
         * (the kernels must follow the reference for every feature) */
        kcs_profile_params flipped = rows[r % nr];
        if (r >= nr) {
            flipped.zero_exp = !flipped.zero_exp;
            flipped.zero_sign = !flipped.zero_sign;
            flipped.prod_ovf = !flipped.prod_ovf;
            flipped.inf_path = !flipped.inf_path;
            flipped.flush_sign = !flipped.flush_sign;
        }
        const kcs_profile_params *p = &flipped;
        int m = 7, n = 9, k = 3 * p->F + 5;
        double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
        double *C = malloc(sizeof(double) * m * n), *D = malloc(sizeof(double) * m * n);
        double *R = malloc(sizeof(double) * m * n);
        for (int rep = 0; rep < 12; rep++) {
            int wide = rep % 4;
            for (int i = 0; i < m * k; i++)
                A[i] = rnd_in(p->in, wide);
            for (int i = 0; i < k * n; i++)
                B[i] = rnd_in(p->in, wide);
            for (int i = 0; i < m * n; i++)
                C[i] = (float)((urand() * 2 - 1) *
                               (wide == 3   ? ldexp(1.0, (int)(rnd64() % 250) - 140)
                                : wide != 0 ? ldexp(1.0, (int)(rnd64() % 60) - 30)
                                            : 4));
            if (wide == 1) { /* signed zeros: row 0 of A is -0, C is -0 there */
                for (int i = 0; i < k; i++)
                    A[i] = -0.0;
                for (int j = 0; j < n; j++)
                    C[j] = -0.0;
            }
            if (wide == 2) {
                A[3] = INFINITY;
                B[2 * n + 4] = NAN;
                C[5] = INFINITY;
            }
            CU_ASSERT_EQUAL(kcs_emulated_gemm(p, m, n, k, A, B, wide ? C : NULL, D), 0);
            ref_gemm(p, m, n, k, A, B, wide ? C : NULL, R);
            long bad = 0;
            for (int i = 0; i < m * n; i++)
                bad += !same(D[i], R[i]);
            CU_ASSERT_EQUAL(bad, 0);
            if (bad)
                fprintf(stderr, "%s/%s wide=%d isa=%s: %ld mismatches\n", p->profile,
                        kcs_format_name(p->in), wide, isa ? isa : "auto", bad);
            for (int i = 0; i < m * n; i++) /* d is an fp32 value */
                CU_ASSERT(kcs_format_exact(KCS_FMT_FP32, D[i]));
        }
        free(A);
        free(B);
        free(C);
        free(D);
        free(R);
    }
}

static void test_gemm_vs_step(void)
{
    gemm_vs_step("ref");  /* the driver's reference path */
    gemm_vs_step("sse2"); /* baseline vector kernels */
    gemm_vs_step("v1");   /* the double-lane kernels as before the decoded ones */
    gemm_vs_step("avx2"); /* the double-lane kernels (new pairwise ones included) */
    gemm_vs_step(NULL);   /* what the CPU offers (the decoded AVX2 kernels where present) */
}

/* Error vs fp64: within 2*k*u32*(|A||B|)_ij for the fp32-accumulating
 * profiles, inputs ~1 of either sign or non-negative (where RZ's bias
 * accumulates); the H100 fp8 profile (14-bit accumulator) is visibly worse:
 * on the same non-negative e4m3 inputs at k = 4096 its error exceeds 10x
 * that of A100 fp16. (With signed e4m3 inputs an fp32 accumulator is often
 * exact, so the comparison uses the non-negative ones.) */
static void test_error_bound(void)
{
    const int m = 6, n = 6;
    const int ks[] = {16, 256, 4096};
    const kcs_profile_params *rows;
    int nr;
    kcs_profile_table(&rows, &nr);
    double err_h100_fp8 = 0, err_a100_fp16 = 0;
    for (int nonneg = 0; nonneg < 2; nonneg++) {
        for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
            int k = ks[t];
            double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
            double *D = malloc(sizeof(double) * m * n), *D2 = malloc(sizeof(double) * m * n);
            for (int r = 0; r < nr; r++) {
                const kcs_profile_params *p = &rows[r];
                for (int i = 0; i < m * k; i++)
                    A[i] = kcs_format_round(p->in, nonneg ? urand() : urand() * 2 - 1,
                                            KCS_ROUND_DEFAULT);
                for (int i = 0; i < k * n; i++)
                    B[i] = kcs_format_round(p->in, nonneg ? urand() : urand() * 2 - 1,
                                            KCS_ROUND_DEFAULT);
                CU_ASSERT_EQUAL(kcs_emulated_gemm(p, m, n, k, A, B, NULL, D), 0);
                bool cmp = nonneg && k == 4096 && p->in == KCS_FMT_FP8_E4M3 &&
                           strcmp(p->profile, "nvidia-h100") == 0;
                if (cmp) /* the same e4m3 inputs through A100 fp16 */
                    CU_ASSERT_EQUAL(kcs_emulated_gemm(prof("nvidia-a100", KCS_FMT_FP16), m, n,
                                                      k, A, B, NULL, D2),
                                    0);
                long bad = 0;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        double ex = 0, ab = 0;
                        for (int l = 0; l < k; l++) {
                            ex += A[i * k + l] * B[l * n + j];
                            ab += fabs(A[i * k + l] * B[l * n + j]);
                        }
                        double e = fabs(D[i * n + j] - ex);
                        if (kcs_profile_out_bits(p) == 24 && !(e <= 2.0 * k * 0x1p-24 * ab))
                            bad++;
                        if (cmp) {
                            err_h100_fp8 += e;
                            err_a100_fp16 += fabs(D2[i * n + j] - ex);
                        }
                    }
                CU_ASSERT_EQUAL(bad, 0);
                if (bad)
                    fprintf(stderr, "%s/%s k=%d: %ld entries beyond the bound\n", p->profile,
                            kcs_format_name(p->in), k, bad);
            }
            free(A);
            free(B);
            free(D);
            free(D2);
        }
    }
    CU_ASSERT(err_a100_fp16 > 0);
    CU_ASSERT(err_h100_fp8 > 10 * err_a100_fp16);
}

/* The decoded integer kernels (blockfma_kern.h, default where AVX2 is
 * present) and the double-lane kernels against the reference step, bit for
 * bit: every row of the table, each with its corner features flipped, and
 * the mixed fp8 rows; m = 9 (two blocks of 4 rows and one alone), long k
 * (c grows over many blocks), random and corner inputs: normal, wide with
 * zeros and tiny values, the format's whole range (overflow to Inf in c
 * midway, subnormals), all-positive maximal values, NaN/Inf and signed-zero
 * C. Where the CPU has AVX2 the decoded kernel must be the one picked for
 * every non-pairwise row with a finite neab. */
static void check_paths(const kcs_profile_params *p, long *cnt)
{
    int m = 9, n = 11, k = 20 * p->F + 3;
    kcs_format fb = kcs_profile_in_b(p);
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C = malloc(sizeof(double) * m * n), *D = malloc(sizeof(double) * m * n);
    double *R = malloc(sizeof(double) * m * n);
    for (int mode = 0; mode < 6; mode++) {
        for (int i = 0; i < m * k; i++)
            A[i] = mode == 4 ? kcs_format_get(p->in)->max_finite * (1 - urand() / 8)
                             : rnd_in(p->in, mode < 4 ? mode : 1);
        for (int i = 0; i < k * n; i++)
            B[i] = mode == 4 ? kcs_format_get(fb)->max_finite * (1 - urand() / 8)
                             : rnd_in(fb, mode < 4 ? mode : 1);
        for (int i = 0; i < m * k && mode == 4; i++)
            A[i] = kcs_format_round(p->in, A[i], KCS_ROUND_DEFAULT);
        for (int i = 0; i < k * n && mode == 4; i++)
            B[i] = kcs_format_round(fb, B[i], KCS_ROUND_DEFAULT);
        for (int i = 0; i < m * n; i++)
            C[i] = (float)((urand() * 2 - 1) * ldexp(1.0, (int)(rnd64() % 200) - 130));
        if (mode == 5) {
            C[0] = INFINITY;
            C[13] = NAN;
            C[20] = -0.0;
            C[21] = 0.0;
            C[30] = -INFINITY;
        }
        unsetenv("KCS_BLOCKFMA_ISA");
        CU_ASSERT_EQUAL(kcs_emulated_gemm(p, m, n, k, A, B, mode ? C : NULL, D), 0);
        ref_gemm(p, m, n, k, A, B, mode ? C : NULL, R);
        long bad = 0;
        for (int i = 0; i < m * n; i++)
            bad += !same(D[i], R[i]);
        setenv("KCS_BLOCKFMA_ISA", "avx2", 1);
        CU_ASSERT_EQUAL(kcs_emulated_gemm(p, m, n, k, A, B, mode ? C : NULL, D), 0);
        unsetenv("KCS_BLOCKFMA_ISA");
        for (int i = 0; i < m * n; i++)
            bad += !same(D[i], R[i]);
        CU_ASSERT_EQUAL(bad, 0);
        if (bad)
            fprintf(stderr, "%s/%s x %s mode=%d: %ld mismatches\n", p->profile,
                    kcs_format_name(p->in), kcs_format_name(fb), mode, bad);
        *cnt += m * n;
    }
    free(A);
    free(B);
    free(C);
    free(D);
    free(R);
}

static void test_decoded_kernels(void)
{
    const kcs_profile_params *rows;
    int nr;
    kcs_profile_table(&rows, &nr);
    long cnt = 0;
    int picked = 0, want = 0;
    bool avx2 = false;
#if defined(__GNUC__) && defined(__x86_64__)
    avx2 = __builtin_cpu_supports("avx2");
#endif
    for (int r = 0; r < 2 * nr; r++) {
        kcs_profile_params p = rows[r % nr];
        if (r >= nr) {
            p.zero_exp = !p.zero_exp;
            p.zero_sign = !p.zero_sign;
            p.prod_ovf = !p.prod_ovf;
            p.inf_path = !p.inf_path;
            p.flush_sign = !p.flush_sign;
        }
        kcs_bfma_igroup_fn one, four;
        bool dec = kcs_bfma_pick_int(&p, &one, &four);
        bool expect = avx2 && p.step != KCS_STEP_PAIRWISE && p.neab != KCS_NEAB_INF;
        picked += dec;
        want += expect;
        CU_ASSERT_EQUAL(dec, expect);
        check_paths(&p, &cnt);
    }
    static const struct {
        const char *name;
        kcs_format a, b;
    } mixed[] = {{"nvidia-h100", KCS_FMT_FP8_E4M3, KCS_FMT_FP8_E5M2},
                 {"nvidia-ada", KCS_FMT_FP8_E5M2, KCS_FMT_FP8_E4M3},
                 {"nvidia-b200", KCS_FMT_FP8_E4M3, KCS_FMT_FP8_E5M2},
                 {"amd-mi300", KCS_FMT_FP8_E4M3FNUZ, KCS_FMT_FP8_E5M2FNUZ}};
    for (size_t i = 0; i < sizeof mixed / sizeof mixed[0]; i++) {
        kcs_profile_params p;
        kcs_error err;
        CU_ASSERT_EQUAL_FATAL(kcs_profile_lookup_mixed(mixed[i].name, mixed[i].a, mixed[i].b,
                                                       &p, &err),
                              0);
        check_paths(&p, &cnt);
    }
    printf("decoded kernels: %d of %d rows (with flipped features) picked, %ld outputs "
           "compared\n",
           picked, 2 * nr, cnt);
    CU_ASSERT_EQUAL(picked, want);
}

static const ut_test tests[] = {
    {"profile table", test_table},
    {"alignment truncation", test_alignment},
    {"final rounding rz/rne", test_final_rounding},
    {"product carry", test_carry},
    {"late c addition", test_late_c},
    {"pairwise and flush", test_pairwise},
    {"h100 fp8 14-bit accumulator", test_fp8_h100},
    {"exact block", test_exact_block},
    {"non-finite", test_nonfinite},
    {"padding", test_padding},
    {"fttn cross-profile", test_fttn},
    {"gemm vs step", test_gemm_vs_step},
    {"error bound", test_error_bound},
    {"decoded kernels vs reference", test_decoded_kernels},
};

UT_MAIN("blockfma", tests)
