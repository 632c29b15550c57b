/* kcs_emulated_gemm: D = C + A*B through a block-FMA profile, fast.
 *
 * NJ = 8 output columns advance together, one SIMD lane each: B is packed
 * per group of 8 columns as [k][lane], so every step is a handful of vector
 * operations, and each lane keeps its own sequential order of additions.
 * Exponents travel as inverse scales 2^-e(x) (+Inf for zeros), so the block
 * exponent E is a min of products of powers of two (exact).
 *
 * Exactness of the fast global / late-c step: with q = 2^(E-23-neab) every
 * term t has |t| < 2^(E+2) (a product's significand is below 4 relative to
 * 2^(e(a)+e(b)), c's below 2 relative to 2^e(c) <= 2^E), so t/q is exact
 * (power-of-two scaling) and |t/q| < 2^(25+neab) <= 2^30 for neab <= 5: its
 * truncation fits an int32. The F+1 <= 33 truncated integers sum to less
 * than 2^36 in a double (exact), and S = sum*q is exact; d = round(S) is one
 * rounding of a double. The exact block (neab = inf) sums in double with
 * TwoSum error terms and rounds once; a lane whose sum was inexact where it
 * matters takes the reference step (128-bit / MPFR); the argument is at the
 * kernel (blockfma_kern.h).
 *
 * Where the CPU has AVX2, the global and late-c steps (fp16 accumulators
 * and CDNA3's fp8 halves included) run on decoded panels instead: every
 * input decoded once per GEMM into an integer significand and exponent,
 * 8 output columns in the int32 lanes of one vector and 4 rows of A at a
 * time (the B loads shared); the block exponent is an integer max and each
 * term an integer shift (blockfma_impl.h, blockfma_kern.h). Every fast path
 * is checked bit for bit against kcs_blockfma_step by
 * tests/unit/arith/test_blockfma.c. */
#include "blockfma_impl.h"
#include "grow.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NJ KCS_BFMA_NJ

/* Any profile, any F, and groups with NaN/Inf inputs: the reference step. */
static void group_ref(const kcs_bfma_ctx *g, double *c, const double *a, const double *ia,
                      const double *b, const double *ib)
{
    (void)ia;
    (void)ib;
    for (int j = 0; j < NJ; j++)
        for (int64_t blk = 0; blk < g->nb; blk++)
            c[j] = kcs_bfma_lane_ref(g, c[j], a + blk * g->F, b + blk * g->F * NJ + j, g->F);
}

/* Which kernels: KCS_BLOCKFMA_ISA in the environment forces one (the unit
 * tests compare them all, `kcs bench arith` times the old and the new):
 *   (unset)  the decoded integer kernels where the profile and CPU allow
 *            (AVX2), else the double-lane kernels below;
 *   v1       the double-lane kernels as they were before the decoded ones
 *            (AVX2 or SSE2; the pairwise ones only for F = 4 with flush);
 *   avx2     the double-lane kernels (AVX2 or SSE2), no decoded ones;
 *   sse2     the double-lane kernels at SSE2 width;
 *   ref      the reference step for every lane. */
typedef enum { ISA_AUTO, ISA_V1, ISA_AVX2, ISA_SSE2, ISA_REF } isa_choice;

static isa_choice isa_env(void)
{
    const char *isa = getenv("KCS_BLOCKFMA_ISA");
    if (!isa || !*isa)
        return ISA_AUTO;
    if (strcmp(isa, "ref") == 0)
        return ISA_REF;
    if (strcmp(isa, "sse2") == 0)
        return ISA_SSE2;
    if (strcmp(isa, "v1") == 0)
        return ISA_V1;
    return strcmp(isa, "avx2") == 0 ? ISA_AVX2 : ISA_AUTO;
}

/* AVX2 kernels where the CPU has them, else the SSE2 (baseline) ones, else
 * the reference. */
static kcs_bfma_group_fn pick_group(const kcs_profile_params *p, isa_choice isa)
{
    kcs_bfma_group_fn f = NULL;
    if (isa == ISA_REF)
        return group_ref;
    if (isa == ISA_V1 && p->step == KCS_STEP_PAIRWISE && !(p->F == 4 && p->flush))
        return group_ref; /* no pairwise kernel but this one before */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    if (isa != ISA_SSE2 && __builtin_cpu_supports("avx2"))
        f = kcs_bfma_pick_avx2(p);
#endif
    if (!f)
        f = kcs_bfma_pick_sse2(p);
    return f ? f : group_ref;
}

/* Decode x (a finite value, flushed as the profile says) into m, e
 * (blockfma_impl.h); false when x is not a value of the format (more
 * significant bits than it holds). */
static inline bool decode1(double x, int emin, int frac, int shift, int32_t zexp, int32_t *m,
                           int32_t *e)
{
    if (x == 0.0) {
        *m = 0;
        *e = zexp;
        return true;
    }
    int ex = kcs_bfma_exp_clamped(x, emin);
    double v = x * kcs_bfma_pow2i(frac - ex); /* exact: a power of two in range */
    if (!(fabs(v) < kcs_bfma_pow2i(frac + 1)) || v != (double)(int32_t)v)
        return false;
    *m = (int32_t)v * (1 << shift);
    *e = ex;
    return true;
}

/* Prepared operand element: value (flushed if the profile flushes, to +0
 * under flush_sign = positive) and 2^-e(x) (zinv for 0: +Inf, or 2^126
 * under zero_exp = min). Returns false for NaN/Inf. */
static inline bool prep1(const kcs_profile_params *p, double x, int emin, double tiny,
                         double zinv, double *v, double *is)
{
    if (p->flush && fabs(x) < tiny)
        x = p->flush_sign == KCS_FSIGN_POSITIVE ? 0.0 : copysign(0.0, x);
    *v = x;
    if (x == 0.0 || !isfinite(x)) {
        *is = isfinite(x) ? zinv : INFINITY;
        return isfinite(x) != 0;
    }
    *is = kcs_bfma_pow2i(-kcs_bfma_exp_clamped(x, emin));
    return true;
}

/* Row i of C for the NJ columns of group gi, as the accumulator holds it. */
static void load_c(const kcs_profile_params *p, const double *C, int64_t i, int64_t gi,
                   int64_t n, double *c)
{
    for (int j = 0; j < NJ; j++) {
        int64_t col = gi * NJ + j;
        double cv = (C && col < n) ? (double)(float)C[i * n + col] : 0.0;
        if (p->acc_f16)
            cv = kcs_format_round(KCS_FMT_FP16, cv, KCS_ROUND_DEFAULT);
        if (p->flush && fabs(cv) < FLT_MIN)
            cv = p->flush_sign == KCS_FSIGN_POSITIVE ? 0.0 : copysign(0.0, cv);
        c[j] = cv;
    }
}

int kcs_emulated_gemm(const kcs_profile_params *p, int64_t m, int64_t n, int64_t k,
                      const double *A, const double *B, const double *C, double *D)
{
    if (m <= 0 || n <= 0)
        return 0;
    int F = p->F;
    if (F < 1 || F > 64)
        return KCS_E_INVAL;
    int64_t nb = k > 0 ? (k + F - 1) / F : 0, kp = nb * F, ng = (n + NJ - 1) / NJ;
    size_t ka = (size_t)(kp ? kp : 1), asz = (size_t)m * ka, bsz = (size_t)ng * NJ * ka;
    double *av = malloc(sizeof(double) * 2 * asz);
    double *bv = malloc(sizeof(double) * 2 * bsz);
    char *abad = malloc((size_t)m), *gbad = malloc((size_t)ng);
    /* largest |a| per row, |b| per group: under prod_ovf = inf a row and
     * group whose product can reach 2^128 take the reference step */
    double *amax = malloc(sizeof(double) * (size_t)m), *bmax = malloc(sizeof(double) * (size_t)ng);
    int32_t *im = NULL, *ibm = NULL; /* decoded panels: m then e */
    int32_t *iamx = NULL, *ibmx = NULL; /* their blocks' largest exponents */
    char *iaok = NULL, *igok = NULL;
    int rc = KCS_E_NOMEM;
    if (!av || !bv || !abad || !gbad || !amax || !bmax)
        goto out;
    int emin = kcs_format_get(p->in)->emin, emin_b = kcs_format_get(kcs_profile_in_b(p))->emin;
    double tiny = ldexp(1.0, emin), tiny_b = ldexp(1.0, emin_b);
    double zinv = p->zero_exp == KCS_ZEXP_MIN ? 0x1p126 : INFINITY;
    double *ia = av + asz;
    for (int64_t i = 0; i < m; i++) {
        bool ok = true;
        amax[i] = 0.0;
        for (int64_t kk = 0; kk < kp; kk++) {
            int64_t o = i * kp + kk;
            ok &= prep1(p, kk < k ? A[i * k + kk] : 0.0, emin, tiny, zinv, &av[o], &ia[o]);
            amax[i] = fmax(amax[i], fabs(av[o]));
        }
        abad[i] = !ok;
    }
    /* B packed per group of NJ columns: [group][k][lane], zero lanes past n */
    double *ib = bv + bsz;
    for (int64_t gi = 0; gi < ng; gi++) {
        bool ok = true;
        bmax[gi] = 0.0;
        for (int64_t kk = 0; kk < kp; kk++)
            for (int j = 0; j < NJ; j++) {
                int64_t col = gi * NJ + j, o = (gi * kp + kk) * NJ + j;
                double x = (kk < k && col < n) ? B[kk * n + col] : 0.0;
                ok &= prep1(p, x, emin_b, tiny_b, zinv, &bv[o], &ib[o]);
                bmax[gi] = fmax(bmax[gi], fabs(bv[o]));
            }
        gbad[gi] = !ok;
    }

    kcs_bfma_ctx g = {.p = p, .F = F, .ob = kcs_profile_out_bits(p), .nb = nb, .kp = kp};
    g.maxp = ldexp(2.0 - ldexp(1.0, 1 - g.ob), 127);
    g.sck = p->neab == KCS_NEAB_INF ? 1.0 : ldexp(1.0, 23 + p->neab);
    g.gridmask = (int64_t)((((uint64_t)1) << (52 - g.ob)) - 1);
    g.czero = zinv;
    g.cemin = p->acc_f16 ? kcs_format_get(KCS_FMT_FP16)->emin : -126;
    g.czexp = p->zero_exp == KCS_ZEXP_MIN ? -126 : KCS_BFMA_ZSENT;
    isa_choice isa = isa_env();
    kcs_bfma_group_fn fast = pick_group(p, isa);
    kcs_bfma_igroup_fn ione = NULL, ifour = NULL;
    bool dec = isa == ISA_AUTO && kcs_bfma_pick_int(p, &ione, &ifour);
    if (dec) { /* the decoded panels; a row or group that does not decode: !iok */
        im = malloc(sizeof(int32_t) * 2 * asz);
        ibm = malloc(sizeof(int32_t) * 2 * bsz);
        iaok = malloc((size_t)m);
        igok = malloc((size_t)ng);
        iamx = malloc(sizeof(int32_t) * (size_t)(m * (nb ? nb : 1)));
        ibmx = malloc(sizeof(int32_t) * (size_t)(ng * (nb ? nb : 1) * NJ));
        if (!im || !ibm || !iaok || !igok || !iamx || !ibmx) {
            rc = KCS_E_NOMEM;
            goto out;
        }
        int fa = kcs_format_get(p->in)->p - 1, fb = kcs_format_get(kcs_profile_in_b(p))->p - 1;
        int s0 = 23 + p->neab - fa - fb;
        int32_t *ie = im + asz, *ibe = ibm + bsz;
        for (int64_t i = 0; i < m; i++) {
            bool ok = !abad[i];
            for (int64_t o = i * kp; o < (i + 1) * kp && ok; o++)
                ok = decode1(av[o], emin, fa, 0, g.czexp, &im[o], &ie[o]);
            iaok[i] = ok;
        }
        for (int64_t gi = 0; gi < ng; gi++) {
            bool ok = !gbad[gi];
            for (int64_t o = gi * kp * NJ; o < (gi + 1) * kp * NJ && ok; o++)
                ok = decode1(bv[o], emin_b, fb, s0, g.czexp, &ibm[o], &ibe[o]);
            igok[gi] = ok;
        }
        /* each block's largest exponents: of A per row, of B per lane */
        for (int64_t i = 0; i < m; i++)
            for (int64_t blk = 0; blk < nb; blk++) {
                int32_t x = INT32_MIN;
                for (int kk = 0; kk < F; kk++)
                    x = ie[i * kp + blk * F + kk] > x ? ie[i * kp + blk * F + kk] : x;
                iamx[i * nb + blk] = x;
            }
        for (int64_t gi = 0; gi < ng; gi++)
            for (int64_t blk = 0; blk < nb; blk++)
                for (int j = 0; j < NJ; j++) {
                    int32_t x = INT32_MIN / 2;
                    for (int kk = 0; kk < F; kk++) {
                        int32_t e = ibe[(gi * kp + blk * F + kk) * NJ + j];
                        x = e > x ? e : x;
                    }
                    ibmx[(gi * nb + blk) * NJ + j] = x;
                }
    }
    const int64_t IT = 64; /* a tile of A rows is reused across the B groups */
    for (int64_t i0 = 0; i0 < m; i0 += IT) {
        int64_t i1 = i0 + IT < m ? i0 + IT : m;
        for (int64_t gi = 0; gi < ng; gi++) {
            size_t go = (size_t)(gi * kp * NJ);
            for (int64_t i = i0; i < i1;) {
                double c[4 * NJ];
                /* rows [i, i + R) that take the decoded kernel together */
                int R = 1;
                bool ovf = p->prod_ovf == KCS_POVF_INF && amax[i] * bmax[gi] >= 0x1p128;
                bool idec = dec && igok[gi] && iaok[i] && !ovf;
                if (idec && i + 4 <= i1) {
                    R = 4;
                    for (int r = 1; r < 4; r++)
                        R = iaok[i + r] && !(p->prod_ovf == KCS_POVF_INF &&
                                             amax[i + r] * bmax[gi] >= 0x1p128)
                                ? R
                                : 1;
                }
                for (int r = 0; r < R; r++)
                    load_c(p, C, i + r, gi, n, c + r * NJ);
                if (idec)
                    (R == 4 ? ifour : ione)(&g, c, im + i * kp, im + asz + i * kp, av + i * kp,
                                            kp, ibm + go, ibm + bsz + go, bv + go,
                                            iamx + i * nb, ibmx + gi * nb * NJ);
                else
                    (abad[i] || gbad[gi] || ovf ? group_ref : fast)(
                        &g, c, av + i * kp, ia + i * kp, bv + go, ib + go);
                for (int r = 0; r < R; r++)
                    for (int j = 0; j < NJ && gi * NJ + j < n; j++)
                        D[(i + r) * n + gi * NJ + j] = c[r * NJ + j];
                i += R;
            }
        }
    }
    rc = 0;
out:
    KCS_FREE(av, bv, abad, gbad, amax, bmax, im, ibm, iaok, igok, iamx, ibmx);
    return rc;
}

/* The unit on columns [k0, k1) of A (rows of B), from c = 0, into P. */
static int unit_slice(const kcs_profile_params *p, int64_t m, int64_t n, int64_t k,
                      const double *A, const double *B, int64_t k0, int64_t k1, double *As,
                      double *P)
{
    int64_t kc = k1 - k0;
    for (int64_t i = 0; i < m; i++)
        memcpy(As + i * kc, A + i * k + k0, sizeof(double) * (size_t)kc);
    return kcs_emulated_gemm(p, m, n, kc, As, B + k0 * n, NULL, P);
}

int kcs_emulated_gemm_lib(const kcs_profile_params *p, const kcs_libpath *lp, int64_t m,
                          int64_t n, int64_t k, const double *A, const double *B,
                          const double *C, double *D)
{
    bool split = lp && lp->splitk > 1, prom = lp && lp->promote > 0;
    bool clast = lp && lp->c_last, sunit = split && lp->split_unit;
    if (!split && !prom && !clast)
        return kcs_emulated_gemm(p, m, n, k, A, B, C, D);
    if (m <= 0 || n <= 0)
        return 0;
    if (p->F < 1 || p->F > 64)
        return KCS_E_INVAL;
    size_t mn = (size_t)m * (size_t)n;
    int64_t F = p->F, part = k;
    if (split) {
        part = (k + lp->splitk - 1) / lp->splitk;
        part = part < 1 ? F : (part + F - 1) / F * F;
    }
    int64_t chunk = prom && lp->promote < part ? lp->promote : part;
    double *As = malloc(sizeof(double) * (size_t)m * (size_t)(chunk > 0 ? chunk : 1));
    double *P = malloc(sizeof(double) * mn), *R = malloc(sizeof(double) * mn);
    int rc = KCS_E_NOMEM;
    if (!As || !P || !R)
        goto out;
    /* D: C in fp32 (an fp32 register's starting value), or 0 when C comes last;
     * summed in the unit, C is the accumulator's first value (in its format) */
    for (size_t i = 0; i < mn; i++) {
        D[i] = (C && !clast) ? (double)(float)C[i] : 0.0;
        if (sunit && p->acc_f16)
            D[i] = kcs_format_round(KCS_FMT_FP16, D[i], KCS_ROUND_DEFAULT);
    }
    rc = 0;
    for (int64_t p0 = 0; p0 < k && !rc; p0 += part) {
        int64_t p1 = p0 + part < k ? p0 + part : k;
        /* R: this part's register; without a split it is D itself */
        double *reg = split ? R : D;
        if (split)
            memset(R, 0, sizeof(double) * mn);
        for (int64_t c0 = p0; c0 < p1 && !rc; c0 += chunk) {
            int64_t c1 = c0 + chunk < p1 ? c0 + chunk : p1;
            rc = unit_slice(p, m, n, k, A, B, c0, c1, As, P);
            for (size_t i = 0; i < mn && !rc; i++)
                reg[i] = (double)((float)reg[i] + (float)P[i]);
        }
        for (size_t i = 0; split && i < mn && !rc; i++)
            D[i] = sunit ? kcs_blockfma_acc_add(p, D[i], R[i])
                         : (double)((float)D[i] + (float)R[i]);
    }
    for (size_t i = 0; clast && C && i < mn && !rc; i++)
        D[i] = (double)((float)D[i] + (float)C[i]);
out:
    KCS_FREE(As, P, R);
    return rc;
}
