/* The kernels of gemm_fast.c, compiled once per instruction set: included
 * by gemm_fast.c (the build's baseline) and gemm_fast_avx2.c (AVX2 + FMA,
 * chosen at run time) with KERN(name) naming each copy. Everything but the
 * pairwise recursion is inlined into the block functions so that it is
 * compiled for their instruction set. */
#include "gemm_fast_impl.h"

/* ---- fp32 accumulator: float lanes ------------------------------------ */

/* acc[r][w] = sequential fmaf sum of terms p0 .. p0+len-1 */
#define INLINE static inline __attribute__((always_inline))

INLINE void f32_seq(const f32_job *J, size_t i0, size_t j0, size_t p0, size_t len,
                    float out[R][W])
{
    float acc[R][W] = {{0}};
    const float *__restrict A = J->A + i0 * J->k;
    for (size_t p = p0; p < p0 + len; p++) {
        const float *__restrict b = J->B + p * J->ldb + j0;
        for (int r = 0; r < R; r++) {
            float a = A[(size_t)r * J->k + p];
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
        f32_seq(J, i0, j0, 0, J->k, out);
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
        f32_seq(J, i0, j0, s, len, part);
        for (int r = 0; r < R; r++)
            for (int w = 0; w < W; w++)
                out[r][w] = out[r][w] + part[r][w];
    }
}

/* ---- bf16 / fp16 accumulators: the model in double lanes -------------- */

/* Round |value| bits a to the narrow accumulator (bf16/fp16: RNE, Inf on
 * overflow, subnormals kept) and put the sign bits sg back. One magic-number
 * add does it: with E = the exponent field of a clamped to [emin, emax],
 * M = 2^(E + 53 - p) has ulp 2^(E+1-p), the format's quantum, so
 * (|x| + M) - M is |x| rounded to nearest even (for |x| beyond the format,
 * to something > max finite, which becomes Inf). NaN stays a NaN (its bits
 * are not canonical: they only feed later adds and the output rounding). */
INLINE double nar_round(const nar_job *J, uint64_t a, uint64_t sg)
{
    uint64_t eb = a & 0x7ff0000000000000ull;
    eb = eb < J->e_lo ? J->e_lo : eb;
    eb = eb > J->e_hi ? J->e_hi : eb;
    double M = kcs_ff_double(eb + J->m_off);
    double r = (kcs_ff_double(a) + M) - M;
    r = r > J->maxf ? (double)INFINITY : r;
    return kcs_ff_double(kcs_ff_bits(r) | sg);
}

/* kcs_acc_add for a narrow format: TwoSum, nudge s one fp64 ulp toward the
 * error, round. When s is not finite the error is NaN (Inf - Inf on the
 * way), which is neither > 0 nor < 0: no nudge, as in the model. The nudge
 * moves |s| up when e and s have the same sign, down otherwise. */
INLINE double nar_add(const nar_job *J, double x, double t)
{
    double s = x + t;
    double bp = s - x;
    double e = (x - (s - bp)) + (t - bp);
    uint64_t sb = kcs_ff_bits(s);
    uint64_t sg = sb & KCS_FF_SIGN, a = sb ^ sg;
    uint64_t nudge = (uint64_t)(e > 0.0) | (e < 0.0);
    uint64_t away = ((kcs_ff_bits(e) ^ sb) >> 63) ^ 1;
    a += ((away << 1) - 1) & ((uint64_t)0 - nudge);
    return nar_round(J, a, sg);
}

/* A pairwise leaf: the model rounds the exact product into the accumulator. */
INLINE double nar_leaf(const nar_job *J, double t)
{
    uint64_t v = kcs_ff_bits(t);
    return nar_round(J, v & ~KCS_FF_SIGN, v & KCS_FF_SIGN);
}

INLINE void nar_seq(const nar_job *J, size_t i0, size_t j0, size_t p0, size_t len,
                    double out[R][W])
{
    double acc[R][W] = {{0}};
    const nar_job Jl = *J;
    const double *__restrict A = J->A + i0 * J->k;
    for (size_t p = p0; p < p0 + len; p++) {
        const double *__restrict b = J->B + p * J->ldb + j0;
        for (int r = 0; r < R; r++) {
            double a = A[(size_t)r * J->k + p];
            for (int w = 0; w < W; w++)
                acc[r][w] = nar_add(&Jl, acc[r][w], a * b[w]);
        }
    }
    memcpy(out, acc, sizeof acc);
}

static void nar_pairwise(const nar_job *J, size_t i0, size_t j0, size_t p0, size_t len,
                         double out[R][W])
{
    if (len == 1) {
        const double *b = J->B + p0 * J->ldb + j0;
        for (int r = 0; r < R; r++) {
            double a = J->A[(i0 + (size_t)r) * J->k + p0];
            for (int w = 0; w < W; w++)
                {
                double v = a * b[w];
                uint64_t vb = kcs_ff_bits(v);
                out[r][w] = nar_round(J, vb & ~KCS_FF_SIGN, vb & KCS_FF_SIGN);
            }
        }
        return;
    }
    if (len <= 4) { /* the last levels here, in the model's order: fewer calls */
        const size_t ld = J->ldb;
        const double *b0 = J->B + p0 * ld + j0, *b1 = b0 + ld, *b2 = b1 + ld, *b3 = b2 + ld;
        for (int r = 0; r < R; r++) {
            const double *a = J->A + (i0 + (size_t)r) * J->k + p0;
            if (len == 2) /* l0 + l1 */
                for (int w = 0; w < W; w++)
                    out[r][w] = nar_add(J, nar_leaf(J, a[0] * b0[w]), nar_leaf(J, a[1] * b1[w]));
            else if (len == 3) /* h = 1: l0 + (l1 + l2) */
                for (int w = 0; w < W; w++)
                    out[r][w] = nar_add(J, nar_leaf(J, a[0] * b0[w]),
                                        nar_add(J, nar_leaf(J, a[1] * b1[w]),
                                                nar_leaf(J, a[2] * b2[w])));
            else /* (l0 + l1) + (l2 + l3) */
                for (int w = 0; w < W; w++)
                    out[r][w] =
                        nar_add(J, nar_add(J, nar_leaf(J, a[0] * b0[w]), nar_leaf(J, a[1] * b1[w])),
                                nar_add(J, nar_leaf(J, a[2] * b2[w]), nar_leaf(J, a[3] * b3[w])));
        }
        return;
    }
    size_t h = len / 2;
    double rt[R][W];
    nar_pairwise(J, i0, j0, p0, h, out);
    nar_pairwise(J, i0, j0, p0 + h, len - h, rt);
    for (int r = 0; r < R; r++)
        for (int w = 0; w < W; w++)
            out[r][w] = nar_add(J, out[r][w], rt[r][w]);
}

void KERN(nar_block)(const nar_job *J, const plan *pl, size_t i0, size_t j0,
                             double out[R][W])
{
    if (pl->kind == 1) {
        nar_pairwise(J, i0, j0, 0, J->k, out);
        return;
    }
    if (pl->kind == 0) {
        nar_seq(J, i0, j0, 0, J->k, out);
        return;
    }
    size_t chunk = pl->chunk;
    double part[R][W];
    for (int r = 0; r < R; r++)
        for (int w = 0; w < W; w++)
            out[r][w] = 0.0;
    for (size_t s = 0; s < J->k; s += chunk) {
        size_t len = J->k - s < chunk ? J->k - s : chunk;
        nar_seq(J, i0, j0, s, len, part);
        for (int r = 0; r < R; r++)
            for (int w = 0; w < W; w++)
                out[r][w] = nar_add(J, out[r][w], part[r][w]);
    }
}

