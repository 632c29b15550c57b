/* Vector kernels of the block-FMA GEMM, a template: the includer defines
 * VW (doubles per native vector: 2 for SSE2, 4 for AVX2) and KERN_PICK (the
 * name of the picker it exports). See blockfma_gemm.c for the layout and
 * the exactness argument; every kernel is checked bit for bit against
 * kcs_blockfma_step by tests/unit/arith/test_blockfma.c. */
#include "blockfma_impl.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#define NJ KCS_BFMA_NJ

#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
/* vectors never cross a call boundary (all helpers are always_inline) */
#pragma GCC diagnostic ignored "-Wpsabi"

#define NU (NJ / VW) /* independent vector chains per group */
typedef double vd __attribute__((vector_size(VW * 8)));
typedef int64_t vl __attribute__((vector_size(VW * 8)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));
typedef float vf __attribute__((vector_size(VW * 4)));

HOT vd vload(const double *p)
{
    vd v;
    memcpy(&v, p, sizeof v);
    return v;
}
HOT vd vsel(vl m, vd a, vd b) /* m ? a : b, per lane */
{
    return (vd)((m & (vl)a) | (~m & (vl)b));
}
HOT vd vmin(vd a, vd b) /* operands are never NaN */
{
#if VW == 4
    return (vd)_mm256_min_pd((__m256d)a, (__m256d)b);
#elif defined(__SSE2__)
    return (vd)_mm_min_pd((__m128d)a, (__m128d)b);
#else
    return vsel(a < b, a, b);
#endif
}
HOT vd vabs(vd a)
{
    return (vd)((vl)a & 0x7FFFFFFFFFFFFFFF);
}
HOT vd vtrunc32(vd x) /* |x| < 2^31 */
{
    return __builtin_convertvector(__builtin_convertvector(x, vi), vd);
}
HOT vd vfloor(vd x) /* |x| < 2^51 */
{
    vd r = (x + 0x1.8p52) - 0x1.8p52; /* round to nearest integer */
    return r - vsel(r > x, (vd){} + 1.0, (vd){});
}
HOT vd vrecip2(vd x) /* 1/x for x = 2^e, |e| <= 1022: exact, by exponent bits */
{
    return (vd)(((vl){} + 0x7FE0000000000000) - (vl)x);
}
HOT bool vany(vl m)
{
    int64_t o = 0;
    for (int j = 0; j < VW; j++)
        o |= m[j];
    return o != 0;
}
/* 2^-e(c), e(c) = max(floor(log2|c|), -126); `zero` for c = 0 */
HOT vd vinv_scale_c(vd c, double zero)
{
    typedef uint64_t vu __attribute__((vector_size(VW * 8)));
    vu ef = ((vu)c >> 52) & 0x7FF; /* logical shift: native on SSE2 */
    vd inv = (vd)((2046 - ef) << 52);  /* 2^-floor(log2|c|) for normal c */
    inv = vmin(inv, (vd){} + 0x1p126); /* e clamped to -126 */
    return vsel(c == 0.0, (vd){} + zero, inv);
}

static double rz_bits1(double s, int p, double maxp)
{
    if (fabs(s) >= FLT_MIN) {
        uint64_t b;
        memcpy(&b, &s, sizeof b);
        b &= ~((((uint64_t)1) << (53 - p)) - 1);
        memcpy(&s, &b, sizeof s);
        return fabs(s) > maxp ? copysign(INFINITY, s) : s;
    }
    double sc = kcs_bfma_pow2i(p - 1 + 126); /* subnormal quantum 2^(-126-p+1) */
    return copysign((double)(int64_t)(s * sc) / sc, s); /* -0 stays -0 */
}

/* d = round(S) in every lane: RZ by masking (fix-up for subnormal and
 * overflowing lanes), fp32 RNE by the hardware conversion (tested equal). */
HOT vd vfinal(const kcs_bfma_ctx *g, vd S)
{
    if (g->p->rounding == KCS_RZ) {
        vl mask = (vl){} + (int64_t)~((((uint64_t)1) << (53 - g->ob)) - 1);
        vd r = (vd)((vl)S & mask);
        vl fix = ((vabs(S) < FLT_MIN) & (S != 0.0)) | (vabs(r) > g->maxp);
        if (vany(fix))
            for (int j = 0; j < VW; j++)
                if (fix[j])
                    r[j] = rz_bits1(S[j], g->ob, g->maxp);
        return r;
    }
    if (g->ob == 24)
        return __builtin_convertvector(__builtin_convertvector(S, vf), vd);
    vd r;
    for (int j = 0; j < VW; j++)
        r[j] = kcs_round_bits(S[j], g->ob, g->p->rounding);
    return r;
}

enum { K_GLOBAL, K_LATE, K_EXACT, K_PAIR };

HOT vf vftz(vf x)
{
    vf a = (vf)((vi)x & 0x7FFFFFFF);
    vi m = a < FLT_MIN;
    return (vf)(((vi)x & ~m) | ((vi)x & (int32_t)0x80000000 & m)); /* signed 0 */
}

/* One block of F products for the NJ lanes: a, ia (A row block), b, ib
 * (packed B block, [kk][lane]); c in/out. */
HOT vd block_step(const kcs_bfma_ctx *g, const int kind, vd c, const double *a, const double *ia,
                  const double *b, const double *ib,
                  const int F)
{
    vl fin = vabs(c) <= DBL_MAX;
    vd cin = vsel(fin, c, (vd){});
    vd d;
    if (kind == K_PAIR) {
        vf p[4];
        for (int kk = 0; kk < 4; kk++)
            p[kk] = vftz(__builtin_convertvector(a[kk] * vload(b + kk * NJ), vf));
        vf t = vftz(vftz(p[0] + p[1]) + vftz(p[2] + p[3]));
        d = __builtin_convertvector(vftz(__builtin_convertvector(cin, vf) + t), vd);
    } else if (kind == K_EXACT) {
        /* No truncation: d = round(c + sum p_i), one rounding of the exact
         * sum. t = sum p_i in double with TwoSum's error (products are exact
         * doubles); S = RN(c + t), e2 its TwoSum error, so c + t = S + e2.
         * round(S + e2) = round(S) unless S is itself a rounding boundary of
         * the ob-bit grid (a representable value or a midpoint: at most
         * ob + 1 significant bits, or the fp32 subnormal range) -- S is the
         * double nearest to the exact sum, so no other boundary lies between
         * them. Lanes with an inexact t, or e2 != 0 at a boundary, take the
         * reference step. An exact zero sum is +0 (the model's). */
        vd t = a[0] * vload(b), eacc = (vd){};
        for (int kk = 1; kk < F; kk++) {
            vd pk = a[kk] * vload(b + kk * NJ);
            vd s = t + pk, bb = s - t;
            eacc += vabs((t - (s - bb)) + (pk - bb));
            t = s;
        }
        vd S = cin + t, bb = S - cin;
        vd e2 = (cin - (S - bb)) + (t - bb);
        d = vfinal(g, S);
        d = vsel(S == 0.0, (vd){}, d);
        vl grid = ((vl)S & g->gridmask) == 0;
        vl bad = (eacc != 0.0) | ((e2 != 0.0) & (grid | (vabs(S) < FLT_MIN)));
        if (vany(bad))
            for (int j = 0; j < VW; j++)
                if (bad[j])
                    d[j] = kcs_bfma_lane_ref(g, cin[j], a, b + j, F);
    } else {
        vd m = kind == K_LATE ? (vd){} + INFINITY : vinv_scale_c(cin, g->czero);
        for (int kk = 0; kk < F; kk++)
            m = vmin(m, ia[kk] * vload(ib + kk * NJ));
        vl none = m == INFINITY; /* no products (and, if global, c = 0) */
        vd sc = vsel(none, (vd){} + 1.0, m) * g->sck;
        vd s = kind == K_LATE ? (vd){} : vtrunc32(cin * sc);
        for (int kk = 0; kk < F; kk++)
            s += vtrunc32(a[kk] * vload(b + kk * NJ) * sc);
        vd rsc = vrecip2(sc); /* q */
        vd S = s * rsc;
        if (kind == K_GLOBAL) {
            d = vfinal(g, S);
        } else {
            /* late c: ic = 2^-e_c (e_c = -126 for c = 0); m = 2^-E_p */
            vd ic = vinv_scale_c(cin, 0x1p126);
            vd d1 = S + vfloor(cin * sc) * rsc;       /* E_p > e_c: RD(c, q_p) */
            vd us = ic * g->sck * 0x1p7;               /* 2^-(e_c-23-neab-7) */
            vd d2 = vfloor(S * us) * vrecip2(us) + cin; /* E_p < e_c: RD(P, u) */
            vd d3 = S + cin;                           /* equal */
            d = vsel(m < ic, d1, vsel(m > ic, d2, d3));
            d = __builtin_convertvector(__builtin_convertvector(d, vf), vd);
            d = vsel(none, cin, d); /* no products: c passes through */
        }
    }
    if (kind != K_PAIR && g->p->zero_sign == KCS_ZSIGN_POSITIVE)
        d = vsel(d == 0.0, (vd){}, d);
    if (vany(~fin)) /* NaN/Inf c: the reference (IEEE) step */
        for (int j = 0; j < VW; j++)
            if (!fin[j])
                d[j] = kcs_bfma_lane_ref(g, c[j], a, b + j, F);
    return d;
}

#define GROUP_FN(KIND, F)                                                                   \
    static void group_##KIND##_##F(const kcs_bfma_ctx *g, double *c, const double *a,          \
                                   const double *ia, const double *b, const double *ib)    \
    {                                                                                       \
        vd v[NU];                                                                           \
        memcpy(v, c, sizeof v);                                                             \
        for (int64_t blk = 0; blk < g->nb; blk++) {                                        \
            int64_t o = blk * F;                                                            \
            for (int u = 0; u < NU; u++)                                                    \
                v[u] = block_step(g, KIND, v[u], a + o, ia + o, b + o * NJ + u * VW,      \
                                  ib + o * NJ + u * VW, F);                                 \
        }                                                                                   \
        memcpy(c, v, sizeof v);                                                             \
    }
#else
#define GROUP_FN(KIND, F)
#endif


#if defined(__GNUC__)
GROUP_FN(K_GLOBAL, 2)
GROUP_FN(K_GLOBAL, 4)
GROUP_FN(K_GLOBAL, 8)
GROUP_FN(K_GLOBAL, 16)
GROUP_FN(K_GLOBAL, 32)
GROUP_FN(K_LATE, 2)
GROUP_FN(K_LATE, 4)
GROUP_FN(K_LATE, 8)
GROUP_FN(K_LATE, 16)
GROUP_FN(K_LATE, 32)
GROUP_FN(K_EXACT, 2)
GROUP_FN(K_EXACT, 4)
GROUP_FN(K_EXACT, 8)
GROUP_FN(K_EXACT, 16)
GROUP_FN(K_EXACT, 32)
GROUP_FN(K_PAIR, 4)

kcs_bfma_group_fn KERN_PICK(const kcs_profile_params *p)
{
    static const kcs_bfma_group_fn by_kind[3][5] = {
        {group_K_GLOBAL_2, group_K_GLOBAL_4, group_K_GLOBAL_8, group_K_GLOBAL_16,
         group_K_GLOBAL_32},
        {group_K_LATE_2, group_K_LATE_4, group_K_LATE_8, group_K_LATE_16, group_K_LATE_32},
        {group_K_EXACT_2, group_K_EXACT_4, group_K_EXACT_8, group_K_EXACT_16,
         group_K_EXACT_32},
    };
    int fi;
    switch (p->F) {
    case 2: fi = 0; break;
    case 4: fi = 1; break;
    case 8: fi = 2; break;
    case 16: fi = 3; break;
    case 32: fi = 4; break;
    default: return NULL;
    }
    if (p->step == KCS_STEP_PAIRWISE)
        return p->F == 4 && p->flush ? group_K_PAIR_4 : NULL;
    if (p->neab == KCS_NEAB_INF)
        return p->step == KCS_STEP_GLOBAL && !p->flush ? by_kind[2][fi] : NULL;
    if (p->neab > 5 || p->neab < -20 || p->flush || p->halves == 2 || p->acc_f16)
        return NULL;
    return by_kind[p->step == KCS_STEP_LATE_C ? 1 : 0][fi];
}
#else
kcs_bfma_group_fn KERN_PICK(const kcs_profile_params *p)
{
    (void)p;
    return NULL;
}
#endif
