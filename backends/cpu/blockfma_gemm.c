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
 * rounding of a double. The exact block (neab = inf) scales by the finest
 * quantum 2^qmin of its terms instead; when 2^(E+2-qmin) * (F+1) <= 2^53 the
 * scaled terms are integers whose double sum is exact, otherwise that lane
 * takes the reference step (128-bit / MPFR). Every fast path is checked bit
 * for bit against kcs_blockfma_step by tests/unit/test_blockfma.c. */
#include "profile.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#define NJ 8 /* lanes per group of columns */

static inline double pow2i(int e) /* 2^e for -1022 <= e <= 1023 */
{
    uint64_t b = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* e(x) = max(floor(log2|x|), emin), x finite and non-zero. */
static inline int exp_clamped(double x, int emin)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7FF);
    e = e ? e - 1023 : ilogb(x);
    return e < emin ? emin : e;
}

typedef struct gemm_ctx {
    const kcs_profile_params *p;
    int F, ob;
    double sck;  /* 2^(23 + neab): 1/q = 2^-E * sck */
    double pqs;  /* 2^(2(p_in - 1)): a product's quantum below e(a)+e(b) */
    double lim;  /* exact path: 2^(E - qmin) must stay <= lim */
    double maxp; /* largest finite d: (2 - 2^(1-ob)) * 2^127 */
    int64_t nb, kp;
} gemm_ctx;

/* One lane through the reference step; b points at the lane in a packed
 * [k][NJ] block. */
static double lane_ref(const gemm_ctx *g, double c, const double *a, const double *b, int F)
{
    double bl[64];
    for (int kk = 0; kk < F; kk++)
        bl[kk] = b[kk * NJ];
    return kcs_blockfma_step(g->p, c, a, bl, F);
}

#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
/* vectors never cross a call boundary (all helpers are always_inline) */
#pragma GCC diagnostic ignored "-Wpsabi"

/* native vector width: wider generic vectors are lowered badly */
#if defined(__AVX__)
#define VW 4
#else
#define VW 2
#endif
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
HOT bool vany(vl m)
{
    int64_t o = 0;
    for (int j = 0; j < VW; j++)
        o |= m[j];
    return o != 0;
}
/* 2^-e(c), e(c) = max(floor(log2|c|), -126); +Inf for c = 0 */
HOT vd vinv_scale_c(vd c)
{
    typedef uint64_t vu __attribute__((vector_size(VW * 8)));
    vu ef = ((vu)c >> 52) & 0x7FF; /* logical shift: native on SSE2 */
    vd inv = (vd)((2046 - ef) << 52);  /* 2^-floor(log2|c|) for normal c */
    inv = vmin(inv, (vd){} + 0x1p126); /* e clamped to -126 */
    return vsel(c == 0.0, (vd){} + INFINITY, inv);
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
    double sc = pow2i(p - 1 + 126); /* subnormal quantum 2^(-126-p+1) */
    return copysign((double)(int64_t)(s * sc) / sc, s); /* -0 stays -0 */
}

/* d = round(S) in every lane: RZ by masking (fix-up for subnormal and
 * overflowing lanes), fp32 RNE by the hardware conversion (tested equal). */
HOT vd vfinal(const gemm_ctx *g, vd S)
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

/* One block of F products for the NJ lanes: a, ia (A row block), b, ib, ib0
 * (packed B block, [kk][lane]); c in/out. */
HOT vd block_step(const gemm_ctx *g, const int kind, vd c, const double *a, const double *ia,
                  const double *ia0, const double *b, const double *ib, const double *ib0,
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
        vd m = vinv_scale_c(cin);
        vd qs = vsel(cin != 0.0, m * 0x1p23, (vd){}); /* 2^-qmin */
        for (int kk = 0; kk < F; kk++) {
            m = vmin(m, ia[kk] * vload(ib + kk * NJ));
            vd t = ia0[kk] * vload(ib0 + kk * NJ) * g->pqs;
            qs = vsel(t > qs, t, qs);
        }
        qs = vsel(qs == 0.0, (vd){} + 1.0, qs); /* no terms: all zero */
        vd s = cin * qs;                        /* integers: exact sums */
        for (int kk = 0; kk < F; kk++)
            s += a[kk] * vload(b + kk * NJ) * qs;
        d = vfinal(g, s / qs);
        vl wide = (m != INFINITY) & ~(qs <= m * g->lim);
        if (vany(wide))
            for (int j = 0; j < VW; j++)
                if (wide[j])
                    d[j] = lane_ref(g, cin[j], a, b + j, F);
    } else {
        vd m = kind == K_LATE ? (vd){} + INFINITY : vinv_scale_c(cin);
        for (int kk = 0; kk < F; kk++)
            m = vmin(m, ia[kk] * vload(ib + kk * NJ));
        vl none = m == INFINITY; /* no products (and, if global, c = 0) */
        vd sc = vsel(none, (vd){} + 1.0, m) * g->sck;
        vd s = kind == K_LATE ? (vd){} : vtrunc32(cin * sc);
        for (int kk = 0; kk < F; kk++)
            s += vtrunc32(a[kk] * vload(b + kk * NJ) * sc);
        vd S = s / sc;
        if (kind == K_GLOBAL) {
            d = vfinal(g, S);
        } else {
            /* late c: ic = 2^-e_c (e_c = -126 for c = 0); m = 2^-E_p */
            vd ic = vsel(cin == 0.0, (vd){} + 0x1p126, vinv_scale_c(cin));
            vd d1 = S + vfloor(cin * sc) / sc;        /* E_p > e_c: RD(c, q_p) */
            vd us = ic * g->sck * 0x1p7;               /* 2^-(e_c-23-neab-7) */
            vd d2 = vfloor(S * us) / us + cin;         /* E_p < e_c: RD(P, u) */
            vd d3 = S + cin;                           /* equal */
            d = vsel(m < ic, d1, vsel(m > ic, d2, d3));
            d = __builtin_convertvector(__builtin_convertvector(d, vf), vd);
            d = vsel(none, cin, d); /* no products: c passes through */
        }
    }
    if (vany(~fin)) /* NaN/Inf c: the reference (IEEE) step */
        for (int j = 0; j < VW; j++)
            if (!fin[j])
                d[j] = lane_ref(g, c[j], a, b + j, F);
    return d;
}

#define GROUP_FN(KIND, F)                                                                   \
    static void group_##KIND##_##F(const gemm_ctx *g, double *c, const double *a,          \
                                   const double *ia, const double *ia0, const double *b,   \
                                   const double *ib, const double *ib0)                    \
    {                                                                                       \
        vd v[NU];                                                                           \
        memcpy(v, c, sizeof v);                                                             \
        for (int64_t blk = 0; blk < g->nb; blk++) {                                        \
            int64_t o = blk * F;                                                            \
            for (int u = 0; u < NU; u++)                                                    \
                v[u] = block_step(g, KIND, v[u], a + o, ia + o, ia0 + o,                   \
                                  b + o * NJ + u * VW, ib + o * NJ + u * VW,               \
                                  ib0 + o * NJ + u * VW, F);                                \
        }                                                                                   \
        memcpy(c, v, sizeof v);                                                             \
    }
#else
#define GROUP_FN(KIND, F)
#endif

typedef void (*group_fn)(const gemm_ctx *g, double *c, const double *a, const double *ia,
                         const double *ia0, const double *b, const double *ib,
                         const double *ib0);

/* Any profile, any F, and groups with NaN/Inf inputs: the reference step. */
static void group_ref(const gemm_ctx *g, double *c, const double *a, const double *ia,
                      const double *ia0, const double *b, const double *ib, const double *ib0)
{
    (void)ia;
    (void)ia0;
    (void)ib;
    (void)ib0;
    for (int j = 0; j < NJ; j++)
        for (int64_t blk = 0; blk < g->nb; blk++)
            c[j] = lane_ref(g, c[j], a + blk * g->F, b + blk * g->F * NJ + j, g->F);
}

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

static group_fn pick_group(const kcs_profile_params *p)
{
    static const group_fn by_kind[3][5] = {
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
    default: return group_ref;
    }
    if (p->step == KCS_STEP_PAIRWISE)
        return p->F == 4 && p->flush ? group_K_PAIR_4 : group_ref;
    if (p->neab == KCS_NEAB_INF)
        return p->step == KCS_STEP_GLOBAL && !p->flush ? by_kind[2][fi] : group_ref;
    if (p->neab > 5 || p->neab < -20 || p->flush)
        return group_ref;
    return by_kind[p->step == KCS_STEP_LATE_C ? 1 : 0][fi];
}
#else
static group_fn pick_group(const kcs_profile_params *p)
{
    (void)p;
    return group_ref;
}
#endif

/* Prepared operand element: value (flushed if the profile flushes), 2^-e(x)
 * (+Inf for 0) and 2^-e(x) (0 for 0). Returns false for NaN/Inf. */
static inline bool prep1(double x, int emin, double tiny, bool flush, double *v, double *is,
                         double *is0)
{
    if (flush && fabs(x) < tiny)
        x = copysign(0.0, x);
    *v = x;
    if (x == 0.0 || !isfinite(x)) {
        *is = INFINITY;
        *is0 = 0.0;
        return isfinite(x) != 0;
    }
    *is = *is0 = pow2i(-exp_clamped(x, emin));
    return true;
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
    double *av = malloc(sizeof(double) * 3 * asz);
    double *bv = malloc(sizeof(double) * 3 * bsz);
    char *abad = malloc((size_t)m), *gbad = malloc((size_t)ng);
    int rc = KCS_E_NOMEM;
    if (!av || !bv || !abad || !gbad)
        goto out;
    int emin = kcs_format_get(p->in)->emin;
    double tiny = ldexp(1.0, emin);
    double *ia = av + asz, *ia0 = ia + asz;
    for (int64_t i = 0; i < m; i++) {
        bool ok = true;
        for (int64_t kk = 0; kk < kp; kk++) {
            int64_t o = i * kp + kk;
            ok &= prep1(kk < k ? A[i * k + kk] : 0.0, emin, tiny, p->flush, &av[o], &ia[o],
                        &ia0[o]);
        }
        abad[i] = !ok;
    }
    /* B packed per group of NJ columns: [group][k][lane], zero lanes past n */
    double *ib = bv + bsz, *ib0 = ib + bsz;
    for (int64_t gi = 0; gi < ng; gi++) {
        bool ok = true;
        for (int64_t kk = 0; kk < kp; kk++)
            for (int j = 0; j < NJ; j++) {
                int64_t col = gi * NJ + j, o = (gi * kp + kk) * NJ + j;
                double x = (kk < k && col < n) ? B[kk * n + col] : 0.0;
                ok &= prep1(x, emin, tiny, p->flush, &bv[o], &ib[o], &ib0[o]);
            }
        gbad[gi] = !ok;
    }

    gemm_ctx g = {.p = p, .F = F, .ob = kcs_profile_out_bits(p), .nb = nb, .kp = kp};
    g.maxp = ldexp(2.0 - ldexp(1.0, 1 - g.ob), 127);
    g.sck = p->neab == KCS_NEAB_INF ? 1.0 : ldexp(1.0, 23 + p->neab);
    g.pqs = ldexp(1.0, 2 * (kcs_format_get(p->in)->p - 1));
    int lgt = 0;
    while ((1 << lgt) < F + 1)
        lgt++;
    g.lim = ldexp(1.0, 51 - lgt); /* terms < 2^(E+2-qmin), F+1 of them: < 2^53 */
    group_fn fast = pick_group(p);
    const int64_t IT = 64; /* a tile of A rows is reused across the B groups */
    for (int64_t i0 = 0; i0 < m; i0 += IT) {
        int64_t i1 = i0 + IT < m ? i0 + IT : m;
        for (int64_t gi = 0; gi < ng; gi++) {
            size_t go = (size_t)(gi * kp * NJ);
            for (int64_t i = i0; i < i1; i++) {
                double c[NJ];
                for (int j = 0; j < NJ; j++) {
                    int64_t col = gi * NJ + j;
                    double cv = (C && col < n) ? (double)(float)C[i * n + col] : 0.0;
                    c[j] = (p->flush && fabs(cv) < FLT_MIN) ? copysign(0.0, cv) : cv;
                }
                (abad[i] || gbad[gi] ? group_ref : fast)(&g, c, av + i * kp, ia + i * kp,
                                                          ia0 + i * kp, bv + go, ib + go,
                                                          ib0 + go);
                for (int j = 0; j < NJ && gi * NJ + j < n; j++)
                    D[i * n + gi * NJ + j] = c[j];
            }
        }
    }
    rc = 0;
out:
    free(av);
    free(bv);
    free(abad);
    free(gbad);
    return rc;
}
