/* The kernels of gemm_fast.c, compiled once per instruction set: included
 * by gemm_fast.c (the build's baseline), gemm_fast_avx2.c (AVX2 + FMA) and
 * gemm_fast_avx512.c (chosen at run time) with KERN(name) naming each copy. Everything but the
 * pairwise recursion is inlined into the block functions so that it is
 * compiled for their instruction set. */
#include "gemm_fast_vec.h"

/* ---- fp32 accumulator: float lanes ------------------------------------ */

/* acc[r][w] = sequential fmaf sum of terms p0 .. p0+len-1;
 * order: NULL, or the terms' order (the atomic schedule's); the callers
 * pass a constant NULL where there is none, so that copy has no lookup. */
INLINE void f32_seq(const f32_job *J, size_t i0, size_t j0, size_t p0, size_t len,
                    const uint32_t *order, float out[R][W])
{
    float acc[R][W] = {{0}};
    const float *__restrict A = J->A + i0 * J->k;
    for (size_t p = p0; p < p0 + len; p++) {
        size_t q = order ? (size_t)order[p] : p;
        const float *__restrict b = J->B + q * J->ldb + j0;
        for (int r = 0; r < R; r++) {
            float a = A[(size_t)r * J->k + q];
            for (int w = 0; w < W; w++)
                acc[r][w] = fmaf(a, b[w], acc[r][w]);
        }
    }
    memcpy(out, acc, sizeof acc);
}

static void f32_pairwise(const f32_job *J, size_t i0, size_t j0, size_t p0, size_t len,
                         float out[R][W])
{
    if (len == 1) {
        const float *b = J->B + p0 * J->ldb + j0;
        for (int r = 0; r < R; r++) {
            float a = J->A[(i0 + (size_t)r) * J->k + p0];
            for (int w = 0; w < W; w++)
                out[r][w] = a * b[w];
        }
        return;
    }
    if (len == 2) { /* both leaves here: half the calls */
        const float *b0 = J->B + p0 * J->ldb + j0, *b1 = b0 + J->ldb;
        for (int r = 0; r < R; r++) {
            float a0 = J->A[(i0 + (size_t)r) * J->k + p0];
            float a1 = J->A[(i0 + (size_t)r) * J->k + p0 + 1];
            for (int w = 0; w < W; w++)
                out[r][w] = a0 * b0[w] + a1 * b1[w];
        }
        return;
    }
    size_t h = len / 2;
    float rt[R][W];
    f32_pairwise(J, i0, j0, p0, h, out);
    f32_pairwise(J, i0, j0, p0 + h, len - h, rt);
    for (int r = 0; r < R; r++)
        for (int w = 0; w < W; w++)
            out[r][w] = out[r][w] + rt[r][w];
}

void KERN(f32_block)(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                             float out[R][W])
{
    if (pl->kind == 1) {
        f32_pairwise(J, i0, j0, 0, J->k, out);
        return;
    }
    if (pl->kind == 0) {
        if (J->order)
            f32_seq(J, i0, j0, 0, J->k, J->order, out);
        else
            f32_seq(J, i0, j0, 0, J->k, NULL, out);
        return;
    }
    size_t chunk = pl->chunk;
    /* as the model: total = 0, then total + each chunk's sum (so that a
     * -0 chunk sum becomes +0, as 0 + -0 does) */
    float part[R][W];
    for (int r = 0; r < R; r++)
        for (int w = 0; w < W; w++)
            out[r][w] = 0.0f;
    for (size_t s = 0; s < J->k; s += chunk) {
        size_t len = J->k - s < chunk ? J->k - s : chunk;
        f32_seq(J, i0, j0, s, len, NULL, part);
        for (int r = 0; r < R; r++)
            for (int w = 0; w < W; w++)
                out[r][w] = out[r][w] + part[r][w];
    }
}

/* ---- bf16 / fp16 accumulators: the model in double lanes -------------- */

/* The model's operations on lanes gf_vd (gemm_fast_vec.h): plain doubles
 * in loops the compiler vectorises (the baseline and AVX2 copies), or, in a
 * copy that sets GF_VBYTES (AVX-512), GCC vector extensions with the
 * block's R x WV accumulators held in registers and its independent chains
 * written next to each other (the vectorised loop kept them in memory, one
 * chain at a time: half the speed there). Same operations, same order per
 * output: bit for bit the scalar model (test_gemm_fast checks every copy
 * against the exact model).
 *
 * Per-copy hooks (a vector copy defines them with its own instructions
 * before including this; these are the plain-double forms):
 *   GF_MAXU(o, a, b)       max of exponent fields;
 *   GF_INF_ABOVE(r, maxf)  r, with +Inf where r > maxf (NaN stays);
 *   GF_SUM_ODD(o, x, t)    x + t rounded to odd, whose rounding to a
 *                          narrow format (p <= 51 bits) is the correct
 *                          rounding of the exact x + t: here TwoSum, then s
 *                          nudged one fp64 ulp toward the error e where e
 *                          is not 0 and s's last bit is even (an odd s
 *                          stays: one ulp on it may be a narrow midpoint).
 *                          When s is not finite e is NaN (Inf - Inf on the
 *                          way), which is neither > 0 nor < 0: no nudge, as
 *                          in the model; the nudge moves |s| up when e and
 *                          s have the same sign, down otherwise. */
#ifndef GF_VBYTES
INLINE void gf_maxu(gf_vu *o, const gf_vu *a, const gf_vu *b)
{
    *o = *a < *b ? *b : *a;
}
INLINE void gf_inf_above(gf_vd *r, const gf_vd *maxf)
{
    *r = *r > *maxf ? (double)INFINITY : *r;
}
INLINE void gf_sum_nudged(gf_vd *o, const gf_vd *x, const gf_vd *t)
{
    gf_vd s = *x + *t;
    gf_vd bp = s - *x;
    gf_vd e = (*x - (s - bp)) + (*t - bp);
    gf_vu sb = kcs_ff_bits(s);
    gf_vu nudge = ((uint64_t)(e > 0.0) | (e < 0.0)) & ~sb;
    gf_vu away = ((kcs_ff_bits(e) ^ sb) >> 63) ^ 1;
    /* |s| +- 1 ulp: the bits of s move the same way whatever its sign */
    *o = kcs_ff_double(sb + (((away << 1) - 1) & ((uint64_t)0 - nudge)));
}
#define GF_MAXU gf_maxu
#define GF_INF_ABOVE gf_inf_above
#define GF_SUM_ODD gf_sum_nudged
#elif !defined(GF_MAXU) || !defined(GF_INF_ABOVE) || !defined(GF_SUM_ODD)
#error "a copy with GF_VBYTES defines the GF_ hooks"
#endif

typedef struct nar_vc {
    gf_vu e_lo, m_off;
    gf_vd maxf;
} nar_vc;

INLINE void nar_consts(const nar_job *J, nar_vc *c)
{
    c->e_lo = (gf_vu){0} + J->e_lo;
    c->m_off = (gf_vu){0} + J->m_off;
    c->maxf = (gf_vd){0} + J->maxf;
}

/* Round |value| bits a to the narrow accumulator (bf16/fp16: RNE, Inf on
 * overflow, subnormals kept) and put the sign bits sg back. One magic-number
 * add does it: with E = the exponent field of a raised to at least emin,
 * M = 2^(E + 53 - p) has ulp 2^(E+1-p), the format's quantum, so
 * (|x| + M) - M is |x| rounded to nearest even. Above emax no clamp is
 * needed: |x| >= 2^(emax+1) rounds to a value at least that large, above
 * max finite, which becomes Inf. M stays finite because the driver takes
 * only inputs up to 2^200 (sums below 2^464); Inf's exponent field wraps
 * M to a small negative number, and Inf + M - M is Inf. NaN stays a NaN
 * (its bits are not canonical: they only feed later adds and the output
 * rounding). */
INLINE void nar_round(const nar_vc *c, const gf_vu *a, const gf_vu *sg, gf_vd *out)
{
    gf_vu eb = *a & 0x7ff0000000000000ull;
    GF_MAXU(&eb, &eb, &c->e_lo);
    gf_vd M = GF_AS_D(eb + c->m_off);
    gf_vd r = (GF_AS_D(*a) + M) - M;
    GF_INF_ABOVE(&r, &c->maxf);
    *out = GF_AS_D(GF_AS_U(r) | *sg);
}

/* kcs_acc_add for a narrow format: x + t to a double s whose rounding to
 * the format is the correct rounding of the exact sum (GF_SUM_ODD), then
 * that rounding. */
INLINE void nar_add(const nar_vc *c, const gf_vd *x, const gf_vd *t, gf_vd *out)
{
    gf_vd s;
    GF_SUM_ODD(&s, x, t);
    gf_vu sb = GF_AS_U(s);
    gf_vu sg = sb & KCS_FF_SIGN, a = sb ^ sg;
    nar_round(c, &a, &sg, out);
}

/* A pairwise leaf: the model rounds the exact product into the accumulator. */
INLINE void nar_leaf(const nar_vc *c, const gf_vd *t, gf_vd *out)
{
    gf_vu v = GF_AS_U(*t), a = v & ~KCS_FF_SIGN, sg = v & KCS_FF_SIGN;
    nar_round(c, &a, &sg, out);
}

INLINE void nar_load_row(const double *b, gf_vd v[WV])
{
    memcpy(v, b, sizeof(gf_vd) * WV);
}

INLINE void nar_seq(const nar_job *J, const nar_vc *c, size_t i0, size_t j0, size_t p0,
                    size_t len, const uint32_t *order, gf_vd out[R][WV])
{
    gf_vd acc[R][WV];
    memset(acc, 0, sizeof acc);
    const double *__restrict A = J->A + i0 * J->k;
    for (size_t p = p0; p < p0 + len; p++) {
        size_t q = order ? (size_t)order[p] : p;
        gf_vd b[WV];
        nar_load_row(J->B + q * J->ldb + j0, b);
        GF_UNROLL for (int r = 0; r < R; r++) {
            double a = A[(size_t)r * J->k + q];
            GF_UNROLL for (int h = 0; h < WV; h++) {
                gf_vd t = a * b[h];
                nar_add(c, &acc[r][h], &t, &acc[r][h]);
            }
        }
    }
    memcpy(out, acc, sizeof acc);
}

/* Leaf p's rounded products into l (row r). */
INLINE void nar_leaves(const nar_job *J, const nar_vc *c, size_t i0, size_t j0, size_t p,
                       int r, gf_vd l[WV])
{
    gf_vd b[WV];
    nar_load_row(J->B + p * J->ldb + j0, b);
    double a = J->A[(i0 + (size_t)r) * J->k + p];
    GF_UNROLL for (int h = 0; h < WV; h++) {
        gf_vd t = a * b[h];
        nar_leaf(c, &t, &l[h]);
    }
}

INLINE void nar_add_row(const nar_vc *c, const gf_vd x[WV], const gf_vd y[WV], gf_vd o[WV])
{
    GF_UNROLL for (int h = 0; h < WV; h++)
        nar_add(c, &x[h], &y[h], &o[h]);
}

/* x + y where both are narrow values (p <= 24 bits, the job's
 * sums_exact): the fp64 sum is either exact, or y is below x by more than
 * 2^(52-p) binades, so |y| < 2^(p-52)|x|, far below half a narrow ulp of x
 * (at least 2^(-p-1)|x|): the fp64 sum then rounds to x in the narrow
 * format, as the exact sum does. Either way the rounding to odd changes
 * nothing, and a plain add is the model's step. Signed zeros and Inf/NaN
 * as the rounded-to-odd sum (an exact sum: both roundings agree). */
INLINE void nar_add_nn(const nar_vc *c, const gf_vd *x, const gf_vd *y, gf_vd *out)
{
    gf_vd s = *x + *y;
    gf_vu sb = GF_AS_U(s);
    gf_vu sg = sb & KCS_FF_SIGN, a = sb ^ sg;
    nar_round(c, &a, &sg, out);
}

INLINE void nar_add_row_nn(const nar_vc *c, const gf_vd x[WV], const gf_vd y[WV], gf_vd o[WV])
{
    GF_UNROLL for (int h = 0; h < WV; h++)
        nar_add_nn(c, &x[h], &y[h], &o[h]);
}

/* The pairwise recursion, once with every sum rounded to odd
 * (nar_add_row) and once for sums_exact jobs (nar_add_row_nn): every
 * operand of a pairwise sum is a narrow value (a rounded leaf or sum). */
#define NAR_PW nar_pairwise
#define NAR_PW_ADD nar_add_row
#include "gemm_fast_pairwise.h"
#define NAR_PW nar_pairwise_nn
#define NAR_PW_ADD nar_add_row_nn
#include "gemm_fast_pairwise.h"

void KERN(nar_block)(const nar_job *J, const plan *pl, size_t i0, size_t j0,
                             double out[R][W])
{
    nar_vc c;
    nar_consts(J, &c);
    gf_vd o[R][WV];
    if (pl->kind == 1) {
        if (J->sums_exact)
            nar_pairwise_nn(J, &c, i0, j0, 0, J->k, o);
        else
            nar_pairwise(J, &c, i0, j0, 0, J->k, o);
    } else if (pl->kind == 0) {
        if (J->order)
            nar_seq(J, &c, i0, j0, 0, J->k, J->order, o);
        else
            nar_seq(J, &c, i0, j0, 0, J->k, NULL, o);
    } else {
        /* as the model: total = 0, then total + each chunk's sum */
        size_t chunk = pl->chunk;
        gf_vd part[R][WV];
        memset(o, 0, sizeof o);
        for (size_t s = 0; s < J->k; s += chunk) {
            size_t len = J->k - s < chunk ? J->k - s : chunk;
            nar_seq(J, &c, i0, j0, s, len, NULL, part);
            GF_UNROLL for (int r = 0; r < R; r++) {
                if (J->sums_exact) /* the total and the chunk's sum are narrow */
                    nar_add_row_nn(&c, o[r], part[r], o[r]);
                else
                    nar_add_row(&c, o[r], part[r], o[r]);
            }
        }
    }
    memcpy(out, o, sizeof o);
}
