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

enum { K_GLOBAL, K_LATE, K_EXACT, K_PAIR, K_PAIRNF };

HOT vf vftz(vf x)
{
    vf a = (vf)((vi)x & 0x7FFFFFFF);
    vi m = a < FLT_MIN;
    return (vf)(((vi)x & ~m) | ((vi)x & (int32_t)0x80000000 & m)); /* signed 0 */
}

/* The late-c adder: S = the truncated product sum (a multiple of rsc = q =
 * 2^(E_p - 23 - neab)), m = 2^-E_p, sc = 1/q, none: lanes without products. */
HOT vd late_finish(const kcs_bfma_ctx *g, vd cin, vd m, vd sc, vd rsc, vd S, vl none)
{
    /* late c: ic = 2^-e_c (e_c = -126 for c = 0); m = 2^-E_p */
    vd ic = vinv_scale_c(cin, 0x1p126);
    vd cq = vfloor(cin * sc) * rsc;
    if (g->p->halves == 2) /* the fp8 adder drops a c more than 25 binades below */
        cq = vsel(ic > m * 0x1p25, (vd){}, cq);
    vd d1 = S + cq;                            /* E_p > e_c: RD(c, q_p) */
    vd us = ic * g->sck * 0x1p7;               /* 2^-(e_c-23-neab-7) */
    vd d2 = vfloor(S * us) * vrecip2(us) + cin; /* E_p < e_c: RD(P, u) */
    vd d3 = S + cin;                           /* equal */
    vd d = vsel(m < ic, d1, vsel(m > ic, d2, d3));
    d = __builtin_convertvector(__builtin_convertvector(d, vf), vd);
    return vsel(none, cin, d); /* no products: c passes through */
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
    if (kind == K_PAIR || kind == K_PAIRNF) {
        /* the reference's pair_tree for F = 2 and 4: fp32 products, fp32
         * additions, each flushed when the profile flushes (K_PAIR) */
        const bool fl = kind == K_PAIR;
        vf p[4];
        for (int kk = 0; kk < F; kk++) {
            p[kk] = __builtin_convertvector(a[kk] * vload(b + kk * NJ), vf);
            p[kk] = fl ? vftz(p[kk]) : p[kk];
        }
        vf t = p[0] + p[1];
        t = fl ? vftz(t) : t;
        if (F == 4) {
            vf t2 = p[2] + p[3];
            t2 = fl ? vftz(t2) : t2;
            t = t + t2;
            t = fl ? vftz(t) : t;
        }
        vf dd = __builtin_convertvector(cin, vf) + t;
        d = __builtin_convertvector(fl ? vftz(dd) : dd, vd);
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
            d = late_finish(g, cin, m, sc, rsc, S, none);
        }
    }
    if (kind != K_PAIR && kind != K_PAIRNF && g->p->zero_sign == KCS_ZSIGN_POSITIVE)
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
GROUP_FN(K_PAIR, 2)
GROUP_FN(K_PAIR, 4)
GROUP_FN(K_PAIRNF, 2)
GROUP_FN(K_PAIRNF, 4)

#if VW == 4
/* ---- decoded kernels (AVX2): 8 int32 lanes, R rows at a time ------------- *
 * The block exponent E and the terms t/q are integers: E = max(e_a + e_b)
 * (and e(c) for the global step), t/q = sign(P) * (|P| >> (E - e_a - e_b))
 * with P = m_a * m_b' (blockfma_impl.h), which is the reference's
 * trunc(p / q) for q = 2^(E - 23 - neab): |P| < 2^31 is checked when the
 * kernel is picked, and so is the sum of each of the two accumulators (even
 * and odd k) of at most ceil(F/2) terms. c enters as trunc(c * 2^(23 + neab
 * - E)) in double (< 2^29), the three integers are summed exactly in double,
 * and d is rounded by the same code as the double kernels (vfinal,
 * late_finish). */
HOT __m256i ipack(vl lo, vl hi) /* the low dwords of two int64 vectors */
{
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i x = _mm256_permutevar8x32_epi32((__m256i)lo, idx);
    __m256i y = _mm256_permutevar8x32_epi32((__m256i)hi, idx);
    return _mm256_blend_epi32(x, y, 0xF0);
}
HOT __m128i ihalf(__m256i x, int h)
{
    return h ? _mm256_extracti128_si256(x, 1) : _mm256_castsi256_si128(x);
}
HOT vl iwiden(__m256i x, int h)
{
    return (vl)_mm256_cvtepi32_epi64(ihalf(x, h));
}
HOT vd icvt(__m256i x, int h)
{
    return (vd)_mm256_cvtepi32_pd(ihalf(x, h));
}
HOT vd ipow2(vl e) /* 2^e, |e| <= 1022 */
{
    return (vd)((e + 1023) << 52);
}

HOT void iblock(const kcs_bfma_ctx *g, const int kind, const int F, const int R, vd *cv,
                const int32_t *am, const int32_t *ae, const double *a, int64_t as,
                const int32_t *bm, const int32_t *be, const double *b, const int32_t *amx,
                const int32_t *bmx)
{
    const int sh = 23 + g->p->neab;
    __m256i E[4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        if (kind == K_GLOBAL) { /* e(c), clamped; c = 0: czexp */
            vl f0 = ((vl)cv[2 * r] >> 52) & 0x7FF, f1 = ((vl)cv[2 * r + 1] >> 52) & 0x7FF;
            __m256i f = ipack(f0, f1);
            __m256i e = _mm256_max_epi32(_mm256_sub_epi32(f, _mm256_set1_epi32(1023)),
                                         _mm256_set1_epi32(g->cemin));
            E[r] = _mm256_blendv_epi8(e, _mm256_set1_epi32(g->czexp),
                                      _mm256_cmpeq_epi32(f, _mm256_setzero_si256()));
        } else {
            E[r] = _mm256_set1_epi32(-(1 << 30));
        }
    }
    /* halves (CDNA3 fp8): E[r] the even products' exponent, E2[r] the odd */
    const bool hv = kind == K_LATE && g->p->halves == 2;
    __m256i E2[4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        E2[r] = E[r];
    /* global step: where e(c) >= the block's largest e_a + largest e_b in
     * every lane of every row, E = e(c) and the exponent pass is skipped */
    bool skip = kind == K_GLOBAL;
    __m256i bx = _mm256_loadu_si256((const __m256i *)bmx);
#pragma GCC unroll 4
    for (int r = 0; r < R && skip; r++)
        skip = _mm256_movemask_epi8(_mm256_cmpgt_epi32(
                   _mm256_add_epi32(_mm256_set1_epi32(amx[r * g->nb]), bx), E[r])) == 0;
#pragma GCC unroll 32
    for (int kk = 0; kk < F && !skip; kk++) {
        __m256i eb = _mm256_loadu_si256((const __m256i *)(be + kk * NJ));
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
            __m256i e = _mm256_add_epi32(_mm256_set1_epi32(ae[r * as + kk]), eb);
            if (hv && (kk & 1))
                E2[r] = _mm256_max_epi32(E2[r], e);
            else
                E[r] = _mm256_max_epi32(E[r], e);
        }
    }
    __m256i none[4], Ep[4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) { /* no block exponent: E = 0, every term 0 */
        Ep[r] = hv ? _mm256_max_epi32(E[r], E2[r]) : E[r];
        none[r] = _mm256_cmpgt_epi32(_mm256_set1_epi32(-(1 << 19)), Ep[r]);
        Ep[r] = _mm256_andnot_si256(none[r], Ep[r]);
        if (!hv)
            E[r] = Ep[r];
    }
    __m256i acc0[4], acc1[4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        acc0[r] = acc1[r] = _mm256_setzero_si256();
#pragma GCC unroll 32
    for (int kk = 0; kk < F; kk++) {
        __m256i mb = _mm256_loadu_si256((const __m256i *)(bm + kk * NJ));
        __m256i eb = _mm256_loadu_si256((const __m256i *)(be + kk * NJ));
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
            __m256i P = _mm256_mullo_epi32(_mm256_set1_epi32(am[r * as + kk]), mb);
            __m256i Ek = hv && (kk & 1) ? E2[r] : E[r];
            __m256i d = _mm256_sub_epi32(_mm256_sub_epi32(Ek, _mm256_set1_epi32(ae[r * as + kk])),
                                         eb);
            __m256i t = _mm256_sign_epi32(_mm256_srlv_epi32(_mm256_abs_epi32(P), d), P);
            if (kk & 1)
                acc1[r] = _mm256_add_epi32(acc1[r], t);
            else
                acc0[r] = _mm256_add_epi32(acc0[r], t);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        if (hv) { /* each half's sum rounded down to the grid of the larger E */
            __m256i s0 = _mm256_sub_epi32(Ep[r], E[r]), s1 = _mm256_sub_epi32(Ep[r], E2[r]);
            s0 = _mm256_min_epu32(s0, _mm256_set1_epi32(31));
            s1 = _mm256_min_epu32(s1, _mm256_set1_epi32(31));
            acc0[r] = _mm256_srav_epi32(acc0[r], s0);
            acc1[r] = _mm256_srav_epi32(acc1[r], s1);
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            vd c = cv[2 * r + h];
            vl fin = vabs(c) <= DBL_MAX;
            vd cin = vsel(fin, c, (vd){});
            vl Eh = iwiden(Ep[r], h);
            vd sc = ipow2(sh - Eh), q = ipow2(Eh - sh);
            vd s = icvt(acc0[r], h) + icvt(acc1[r], h);
            vd d;
            if (kind == K_GLOBAL) {
                vd S = (s + vtrunc32(cin * sc)) * q;
                if (g->p->acc_f16) {
                    /* fp16 nearest-even: (S + M) - M with M = 1.5 * 2^(e + 42)
                     * rounds S (|S| < 2^(e+1), e = max(floor(log2|S|), -14)) to
                     * the grid 2^(e - 10) in one double rounding; above 65504:
                     * +-Inf; a non-zero S that rounds to 0 keeps its sign */
                    vl e = (((vl)S >> 52) & 0x7FF) - 1023;
                    vl lo = e < -14;
                    e = (lo & -14) | (~lo & e);
                    vd M = (vd)(((e + 42 + 1023) << 52) | ((vl){} + (1LL << 51)));
                    vd r = (S + M) - M;
                    r = vsel(vabs(r) > 65504.0, (vd){} + INFINITY, vabs(r));
                    d = (vd)((vl)r | ((vl)S & (int64_t)0x8000000000000000));
                } else {
                    d = vfinal(g, S);
                }
            } else {
                vl nh = iwiden(none[r], h);
                vd m = vsel(nh, (vd){} + INFINITY, ipow2(-Eh));
                d = late_finish(g, cin, m, sc, q, s * q, nh);
            }
            if (g->p->zero_sign == KCS_ZSIGN_POSITIVE)
                d = vsel(d == 0.0, (vd){}, d);
            if (vany(~fin)) /* NaN/Inf c: the reference (IEEE) step */
                for (int j = 0; j < VW; j++)
                    if (!fin[j])
                        d[j] = kcs_bfma_lane_ref(g, c[j], a + r * as, b + h * VW + j, F);
            cv[2 * r + h] = d;
        }
    }
}

#define IGROUP_FN(KIND, F, R)                                                                  \
    static void igroup_##KIND##_##F##_##R(const kcs_bfma_ctx *g, double *c, const int32_t *am, \
                                          const int32_t *ae, const double *a, int64_t as,      \
                                          const int32_t *bm, const int32_t *be,                \
                                          const double *b, const int32_t *amx,                 \
                                          const int32_t *bmx)                                  \
    {                                                                                          \
        vd v[2 * R];                                                                           \
        memcpy(v, c, sizeof v);                                                                \
        for (int64_t blk = 0; blk < g->nb; blk++) {                                           \
            int64_t o = blk * F;                                                               \
            iblock(g, KIND, F, R, v, am + o, ae + o, a + o, as, bm + o * NJ, be + o * NJ,      \
                   b + o * NJ, amx + blk, bmx + blk * NJ);                                     \
        }                                                                                      \
        memcpy(c, v, sizeof v);                                                                \
    }
#define IGROUP_FNS(KIND, F) IGROUP_FN(KIND, F, 1) IGROUP_FN(KIND, F, 4)
IGROUP_FNS(K_GLOBAL, 2)
IGROUP_FNS(K_GLOBAL, 4)
IGROUP_FNS(K_GLOBAL, 8)
IGROUP_FNS(K_GLOBAL, 16)
IGROUP_FNS(K_GLOBAL, 32)
IGROUP_FNS(K_LATE, 2)
IGROUP_FNS(K_LATE, 4)
IGROUP_FNS(K_LATE, 8)
IGROUP_FNS(K_LATE, 16)
IGROUP_FNS(K_LATE, 32)

bool kcs_bfma_pick_int(const kcs_profile_params *p, kcs_bfma_igroup_fn *one,
                       kcs_bfma_igroup_fn *four)
{
#define IPAIR(KIND, F) {igroup_##KIND##_##F##_1, igroup_##KIND##_##F##_4}
    static const kcs_bfma_igroup_fn by[2][5][2] = {
        {IPAIR(K_GLOBAL, 2), IPAIR(K_GLOBAL, 4), IPAIR(K_GLOBAL, 8), IPAIR(K_GLOBAL, 16),
         IPAIR(K_GLOBAL, 32)},
        {IPAIR(K_LATE, 2), IPAIR(K_LATE, 4), IPAIR(K_LATE, 8), IPAIR(K_LATE, 16),
         IPAIR(K_LATE, 32)},
    };
#undef IPAIR
    int fi;
    switch (p->F) {
    case 2: fi = 0; break;
    case 4: fi = 1; break;
    case 8: fi = 2; break;
    case 16: fi = 3; break;
    case 32: fi = 4; break;
    default: return false;
    }
    if (p->step == KCS_STEP_PAIRWISE || p->neab == KCS_NEAB_INF || p->flush ||
        (p->halves == 2 && p->step != KCS_STEP_LATE_C) || p->neab > 5 || p->neab < -20 || (p->acc_f16 && p->step != KCS_STEP_GLOBAL))
        return false;
    if (!__builtin_cpu_supports("avx2"))
        return false;
    /* the integers must fit: |P| and each accumulator's ceil(F/2) terms */
    int fa = kcs_format_get(p->in)->p - 1, fb = kcs_format_get(kcs_profile_in_b(p))->p - 1;
    int s0 = 23 + p->neab - fa - fb;
    if (s0 < 0 || fa > 23 || fb > 23)
        return false;
    double maxp = (ldexp(1.0, fa + 1) - 1) * (ldexp(1.0, fb + 1) - 1) * ldexp(1.0, s0);
    if (maxp * ((p->F + 1) / 2) >= 0x1p31)
        return false;
    *one = by[p->step == KCS_STEP_LATE_C][fi][0];
    *four = by[p->step == KCS_STEP_LATE_C][fi][1];
    return true;
}
#endif

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
    if (p->step == KCS_STEP_PAIRWISE) {
        if (p->F != 2 && p->F != 4)
            return NULL;
        if (p->flush)
            return p->F == 4 ? group_K_PAIR_4 : group_K_PAIR_2;
        return p->F == 4 ? group_K_PAIRNF_4 : group_K_PAIRNF_2;
    }
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
