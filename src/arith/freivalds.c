/* Batched Freivalds verification of a claimed GEMM  C ~= A B.
 *
 * Freivalds (1977, "Probabilistic machines can use less running time",
 * IFIP Congress) checks A(Br) = Cr for random r in O(n^2); here R is n x k
 * (k probes at once) and equality is replaced by a per-row threshold T_i
 * derived from the GEMM's declared accumulator precision.
 *
 * Notation: A m x K, B K x n, C (claimed) m x n, K the reduction length,
 * u = u_acc (accumulation unit roundoff), v = u_out (rounding of the
 * accumulator into the stored output, 0 if none), gamma_N(u) = Nu/(1-Nu)
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 2002,
 * Lemma 3.1 and eq. (3.5): any summation order, products rounded or fused),
 * beta_p = sum_l |B_pl|, S_il = (|A||B|)_il, r_ij = (A(BR))_ij - (CR)_ij.
 *
 * Probes: R is Rademacher (+-1, Philox4x32-10). Then |R| = 1 and R o R = 1,
 * so every bound term is a matrix-vector product independent of j (one T_i
 * per row), B*R and C*R are computed with exact products, and a corruption
 * d of one element C_il moves every r_ij by exactly |d|: it is caught with
 * certainty once |d| > T_i + max_j |r_ij|, at most 2 T_i when the rest of
 * the row conforms (uniform(-1,1) probes, as in the paper author's torch
 * harness, scale it by |R_lj|, so detection near the threshold is a coin
 * toss). A nonzero error vector e passes one
 * Rademacher probe with probability <= 1/2, all k with <= 2^-k.
 *
 * Rigorous (no conforming GEMM can fail, for any R). With |R| = 1:
 *   |r_ij| <= sum_l |C_il - (AB)_il|
 *          <= gamma_K(u) (|A| beta)_i + v/(1-v) (|C| 1)_i + (2K eta_a + eta_o) n
 * (accumulation error <= gamma_K(u) S_il; output rounding
 * |C_il - Cacc_il| <= v |Cacc_il| <= v/(1-v) |C_il|; eta_a, eta_o bound the
 * absolute error one rounding can make through underflow, Higham eq. (2.8),
 * for the <= 2K accumulation roundings and the output rounding).
 *
 * Probabilistic. Model of Higham & Mary, "A new approach to probabilistic
 * rounding error analysis", SIAM J. Sci. Comput. 41(5) A2815-A2835 (2019):
 * the relative rounding errors delta_t of the GEMM are mean independent,
 * mean zero, |delta_t| <= u. Every rounding in an inner product of length K
 * (K products if not fused, K-1 additions, any tree) contributes exactly
 * delta_t w_t to the result, w_t the exact result of that operation on
 * computed operands, |w_t| <= (1+gamma_K(u)) S_il for partial sums and
 * |w_t| = |a_p b_p| for products (sum_p (a_p b_p)^2 <= S_il^2). So the
 * accumulation part of r_ij, E1 = sum_l R_lj sum_t delta_t w_t, is a
 * martingale with increments bounded by constants c whose squares add to
 * <= K u^2 (1+gamma_K)^2 sum_l S_il^2 <= K u^2 (1+gamma_K)^2 |a_i|^2 |B|_F^2
 * (Cauchy-Schwarz on S_il); the Azuma-Hoeffding inequality (the tool of
 * Higham-Mary's analysis) gives P(|E1| > lambda sqrt(that)) <= 2 exp(-lambda^2/2). The output part
 * E2 = sum_l R_lj eps_il, |eps_il| <= v/(1-v)|C_il|, needs no model: R is
 * drawn independently of the GEMM, so Hoeffding over R gives
 * P(|E2| > lambda v/(1-v) |c_i|_2) <= 2 exp(-lambda^2/2). Hence
 *   T_i = lambda [ sqrt(K) u (1+gamma_K(u)) |a_i|_2 |B|_F + v/(1-v) |c_i|_2 ]
 *         + (2K eta_a + eta_o) n   (underflow terms kept worst case),
 * and by a union bound over the m k pairs (i,j) a conforming GEMM fails a
 * call with probability <= 4 m k exp(-lambda^2/2) =: p, i.e.
 *   lambda = sqrt(2 ln(4 m k / p)),   p = 1e-9 by default
 * (m = 4096, k = 10: lambda = 8.09). No assumption on the data is made
 * (all-positive inputs included); the model itself fails when rounding
 * errors are correlated, e.g. stagnation (addends below half an ulp of the
 * running sum; a case is in tests/unit/arith/test_freivalds.c), where only the
 * rigorous mode holds. The variance form K u^2 (A o A)((B o B)(R o R)) suggested in
 * the issue assumes random mean-zero data as well (Higham & Mary, "Sharper
 * probabilistic backward error analysis for basic linear algebra kernels
 * with random data", SISC 42(5) 2020) and is up to sqrt(K) smaller; it
 * does not hold for all-positive inputs (recursive fp32 summation, n = 1024:
 * residual / that threshold = 2.5), so it is not used.
 *
 * Check arithmetic: fp64 throughout, from fp32 data (exact in fp64).
 * |fl(BR) - BR| <= gamma_n(2^-53) beta (exact +-1 products), so the
 * computed A(BR) is within gamma_{K+n}(2^-53)(|A| beta)_i of the exact one,
 * CR within gamma_n(2^-53)(|C| 1)_i, and the final subtraction adds a
 * factor (1 + 2^-53). All bound terms are sums of non-negative fp64 terms
 * (relative error < (K+n+64) 2^-53, absorbed by the factor F below). So
 *   T_i = (1+2^-53) F (G_i + gamma_{K+n}(2^-53)(|A|beta)_i + gamma_n(2^-53)(|C|1)_i)
 * with G_i the rigorous or probabilistic GEMM bound above and
 * F = 1 + 4 (K+n+64) 2^-53 (in the check terms K is the inner dimension kk
 * of the arrays, whatever reduction_len says about the GEMM).
 *
 * Passes: B is read once (B R, beta, |B|_F^2 from the same loads), then A
 * and C once, 4 (or 2) rows at a time (A(BR), (|A| beta), |a_i|^2; C R,
 * (|C|1), |c_i|^2), threads over rows; only R (k x n) and BR (k x kk) are
 * re-read, from cache. The kernels keep their accumulators in GCC/Clang
 * vector-extension registers (plain C loops kept the accumulator arrays in
 * memory at -O2, 2x slower); the summation order is fixed by the C source
 * (8 interleaved lanes, a fixed tree) and every product-and-add is fused
 * (__builtin_fma: an FMA instruction on x86-64-v3/v4, libm's fma() in the
 * baseline variant; one rounding per term, so the bounds above hold as
 * they are), so every ISA variant and thread count returns bitwise the
 * same result. The binary runs on any x86-64: variants for x86-64-v3/v4
 * are picked at run time. */
#include "freivalds.h"
#include "grow.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && \
    !defined(KCS_FV_NO_CLONES)
#include <immintrin.h>
#endif

#define FV_U64 0x1.0p-53
#define FV_RNG_TAG 0x46524549u /* "FREI": the probe stream's second key */

/* x86-64 with GCC: the 32-byte-lane kernels are compiled for baseline
 * x86-64 and x86-64-v3 (runtime dispatch by target_clones), the 64-byte-lane
 * kernels for x86-64-v4 and called only where the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && \
    !defined(KCS_FV_NO_CLONES)
#define FV_X86V4 1
#define FV_CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
#define FV_CLONES3 __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#define FV_V4 __attribute__((target("arch=x86-64-v4")))
#else
#define FV_X86V4 0
#define FV_CLONES
#define FV_CLONES3
#define FV_V4
#endif
/* The probe loops must be unrolled for the accumulators to stay in registers. */
#if defined(__GNUC__) && !defined(__clang__)
#define FV_UNROLL _Pragma("GCC unroll 8")
#elif defined(__clang__)
#define FV_UNROLL _Pragma("unroll")
#else
#define FV_UNROLL
#endif

void kcs_fv_params_default(kcs_fv_params *p)
{
    memset(p, 0, sizeof *p);
    p->mode = KCS_FV_RIGOROUS;
    p->probes = 10;
    p->seed = 0x5eed;
    p->u_acc = 0x1.0p-24;
    p->u_out = 0;
    p->eta_acc = 0x1.0p-150;
    p->eta_out = 0;
}

int kcs_fv_mode_parse(const char *s, kcs_fv_mode *mode_p)
{
    if (!strcmp(s, "rigorous") || !strcmp(s, "rig")) {
        *mode_p = KCS_FV_RIGOROUS;
        return 0;
    }
    if (!strcmp(s, "probabilistic") || !strcmp(s, "prob")) {
        *mode_p = KCS_FV_PROBABILISTIC;
        return 0;
    }
    return KCS_E_INVAL;
}

int kcs_fv_oracle_parse(const char *s, kcs_fv_params *p, kcs_error *err)
{
    int k = 10;
    kcs_fv_mode mode = KCS_FV_RIGOROUS;
    if (strncmp(s, "freivalds", 9) != 0 || (s[9] && s[9] != ':'))
        return kcs_fail(err, KCS_E_INVAL, "oracle '%s': expected freivalds[:k[:mode]]", s);
    const char *q = s + 9;
    if (*q == ':') {
        char *end;
        long v = strtol(q + 1, &end, 10);
        if (end == q + 1 || v < 1 || v > KCS_FV_MAX_PROBES || (*end && *end != ':'))
            return kcs_fail(err, KCS_E_INVAL, "oracle '%s': k must be 1..%d", s,
                            KCS_FV_MAX_PROBES);
        k = (int)v;
        if (*end == ':' && kcs_fv_mode_parse(end + 1, &mode) != 0)
            return kcs_fail(err, KCS_E_INVAL,
                            "oracle '%s': mode must be rigorous or probabilistic", s);
    }
    p->probes = k;
    p->mode = mode;
    return 0;
}

const char *kcs_fv_mode_name(kcs_fv_mode mode)
{
    return mode == KCS_FV_PROBABILISTIC ? "probabilistic" : "rigorous";
}

static double gamma_n(double nn, double u)
{
    double nu = nn * u;
    return nu < 1 ? nu / (1 - nu) : INFINITY;
}

double kcs_freivalds_lambda(long m, int k, double fail_prob)
{
    if (!(fail_prob > 0))
        fail_prob = 1e-9;
    double r = 4.0 * (double)m * k / fail_prob;
    return r > 1 ? sqrt(2 * log(r)) : 0;
}

void kcs_freivalds_probes(uint64_t seed, uint64_t stream, long n, int k, double *Rt)
{
    kcs_rng r;
    kcs_rng_init(&r, seed, stream, FV_RNG_TAG);
    long total = n * k;
    for (long i = 0; i < total; i += 32) {
        uint32_t bits = kcs_rng_u32(&r);
        for (long b = 0; b < 32 && i + b < total; b++)
            Rt[i + b] = (bits >> b) & 1 ? -1.0 : 1.0;
    }
}

/* ---- kernels ----------------------------------------------------------- */

/* Every dot product is summed in 8 interleaved lanes (lane v takes the
 * terms l = v mod 8, in order; the L mod 8 tail goes to lane 0) and the
 * lanes are then added in one fixed tree. The x86-64-v4 kernels hold the 8
 * lanes in one 64-byte vector and do 4 rows x <= 5 probes per sweep (25 of
 * 32 registers); the others hold them in two 32-byte halves and do 2 rows
 * x <= 3 probes (16 registers). Same operations in the same order, so both
 * return bitwise the same sums. Rows x[r] (fp32, converted exactly), probe
 * vectors V[j L + l] (fp64), y[r k + j]. */
#define FV_W8_RB 4
#define FV_W8_JB 5
#define FV_W4_RB 2
#define FV_W4_JB 3
#define FV_CHUNK 32 /* rows a thread takes at a time (a multiple of 4) */

static inline double fv_tree8(const double *a)
{
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/* GCC/Clang vector extensions (the project needs a GNU C compiler anyway). */
typedef double fv_v8d __attribute__((vector_size(64)));
typedef float fv_v8f __attribute__((vector_size(32)));
typedef double fv_v4d __attribute__((vector_size(32)));
typedef float fv_v4f __attribute__((vector_size(16)));
typedef long long fv_v8l __attribute__((vector_size(64)));

/* Helpers take pointers: 64-byte vectors by value trip -Wpsabi. */
static inline void fv_ld8(fv_v8d *d, const float *x)
{
    fv_v8f f;
    memcpy(&f, x, sizeof f);
    *d = __builtin_convertvector(f, fv_v8d);
}

#if FV_X86V4
/* fv_ld8 in one conversion instruction (GCC splits the generic form into
 * two 4-lane conversions and an insert, which cost the x86-64-v4 kernels
 * as much as their multiply-adds). */
FV_V4 static inline __attribute__((always_inline)) void fv_ld8_v4(fv_v8d *d, const float *x)
{
    *d = (fv_v8d)_mm512_cvtps_pd(_mm256_loadu_ps(x));
}
#else
#define fv_ld8_v4 fv_ld8
#endif

/* |d| by clearing the sign bits (exact). */
static inline void fv_abs8(fv_v8d *d, const fv_v8d *x)
{
    fv_v8l b;
    memcpy(&b, x, sizeof b);
    b &= 0x7fffffffffffffffll;
    memcpy(d, &b, sizeof b);
}

static inline void fv_ld4(fv_v4d *d, const float *x)
{
    fv_v4f f;
    memcpy(&f, x, sizeof f);
    *d = __builtin_convertvector(f, fv_v4d);
}

/* a += u w per lane, fused (one rounding): every copy (the x86-64-v3/v4
 * ones with FMA instructions, the baseline one through fma()) returns the
 * same bits. */
static inline void fv_fma8(fv_v8d *a, const fv_v8d *u, const fv_v8d *w)
{
    for (int i = 0; i < 8; i++)
        (*a)[i] = __builtin_fma((*u)[i], (*w)[i], (*a)[i]);
}

static inline void fv_fma4(fv_v4d *a, const fv_v4d *u, const fv_v4d *w)
{
    for (int i = 0; i < 4; i++)
        (*a)[i] = __builtin_fma((*u)[i], (*w)[i], (*a)[i]);
}

/* Kernels work on [l0, l1) of L and carry their lane sums in memory (acc:
 * 8 doubles per row and probe, row r probe j at acc + r ars + 8 j), so a
 * dot product may be split into cache-sized pieces of L without changing
 * one rounding: each lane still adds its terms in order. l0 is a multiple
 * of 8; only the last piece has the L mod 8 tail (to lane 0). */
#define FV_DOT_W8(JB)                                                                        \
    FV_V4 static void fv_w8_##JB(const float *const *x, long l0, long l1, const double *V,   \
                                 long ldv, double *acc, long ars)                            \
    {                                                                                        \
        fv_v8d a[FV_W8_RB][JB];                                                              \
        FV_UNROLL for (int r = 0; r < FV_W8_RB; r++)                                         \
            FV_UNROLL for (int j = 0; j < JB; j++)                                           \
                memcpy(&a[r][j], acc + r * ars + 8 * j, sizeof a[r][j]);                     \
        long l = l0;                                                                         \
        for (; l + 8 <= l1; l += 8) {                                                        \
            fv_v8d u[FV_W8_RB];                                                              \
            FV_UNROLL for (int r = 0; r < FV_W8_RB; r++) fv_ld8_v4(&u[r], x[r] + l);         \
            FV_UNROLL for (int j = 0; j < JB; j++) {                                         \
                fv_v8d w;                                                                    \
                memcpy(&w, V + j * ldv + l, sizeof w);                                       \
                FV_UNROLL for (int r = 0; r < FV_W8_RB; r++) fv_fma8(&a[r][j], &u[r], &w);   \
            }                                                                                \
        }                                                                                    \
        for (; l < l1; l++)                                                                  \
            for (int r = 0; r < FV_W8_RB; r++)                                               \
                for (int j = 0; j < JB; j++)                                                 \
                    a[r][j][0] = __builtin_fma((double)x[r][l], V[j * ldv + l], a[r][j][0]); \
        for (int r = 0; r < FV_W8_RB; r++)                                                   \
            for (int j = 0; j < JB; j++)                                                     \
                memcpy(acc + r * ars + 8 * j, &a[r][j], sizeof a[r][j]);                     \
    }

#define FV_DOT_W4(JB)                                                                        \
    FV_CLONES static void fv_w4_##JB(const float *const *x, long l0, long l1,                \
                                     const double *V, long ldv, double *acc, long ars)       \
    {                                                                                        \
        fv_v4d a[FV_W4_RB][JB][2];                                                           \
        FV_UNROLL for (int r = 0; r < FV_W4_RB; r++)                                         \
            FV_UNROLL for (int j = 0; j < JB; j++)                                           \
                memcpy(&a[r][j], acc + r * ars + 8 * j, sizeof a[r][j]);                     \
        long l = l0;                                                                         \
        for (; l + 8 <= l1; l += 8) {                                                        \
            FV_UNROLL for (int h = 0; h < 2; h++) {                                          \
                fv_v4d u[FV_W4_RB];                                                          \
                FV_UNROLL for (int r = 0; r < FV_W4_RB; r++) fv_ld4(&u[r], x[r] + l + 4 * h); \
                FV_UNROLL for (int j = 0; j < JB; j++) {                                     \
                    fv_v4d w;                                                                \
                    memcpy(&w, V + j * ldv + l + 4 * h, sizeof w);                           \
                    FV_UNROLL for (int r = 0; r < FV_W4_RB; r++) fv_fma4(&a[r][j][h], &u[r], &w); \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        for (; l < l1; l++)                                                                  \
            for (int r = 0; r < FV_W4_RB; r++)                                               \
                for (int j = 0; j < JB; j++)                                                 \
                    a[r][j][0][0] = __builtin_fma((double)x[r][l], V[j * ldv + l], a[r][j][0][0]); \
        for (int r = 0; r < FV_W4_RB; r++)                                                   \
            for (int j = 0; j < JB; j++)                                                     \
                memcpy(acc + r * ars + 8 * j, &a[r][j], sizeof a[r][j]);                     \
    }

/* Lane state st[32] (16 lanes of sum |x_l| w_l, 16 of sum x_l^2) over
 * [l0, l1): l0 a multiple of 16, the tail (to lane 0) only at the end.
 * Fused multiply-adds (fv_fma8), so both copies below (and every clone)
 * return the same bits; without weights w_l = 1 (a fused |x_l| * 1 + s is
 * the plain sum). */
#define FV_AUX_BODY(LD)                                                                      \
    {                                                                                        \
        fv_v8d s0, s1, q0, q1, w0 = {1, 1, 1, 1, 1, 1, 1, 1}, w1 = w0;                       \
        memcpy(&s0, st, sizeof s0);                                                          \
        memcpy(&s1, st + 8, sizeof s1);                                                      \
        memcpy(&q0, st + 16, sizeof q0);                                                     \
        memcpy(&q1, st + 24, sizeof q1);                                                     \
        long l = l0;                                                                         \
        for (; l + 16 <= l1; l += 16) {                                                      \
            fv_v8d u0, u1, b0, b1;                                                           \
            LD(&u0, x + l);                                                                  \
            LD(&u1, x + l + 8);                                                              \
            fv_abs8(&b0, &u0);                                                               \
            fv_abs8(&b1, &u1);                                                               \
            if (w) {                                                                         \
                memcpy(&w0, w + l, sizeof w0);                                               \
                memcpy(&w1, w + l + 8, sizeof w1);                                           \
            }                                                                                \
            fv_fma8(&s0, &b0, &w0);                                                          \
            fv_fma8(&s1, &b1, &w1);                                                          \
            fv_fma8(&q0, &u0, &u0);                                                          \
            fv_fma8(&q1, &u1, &u1);                                                          \
        }                                                                                    \
        for (; l < l1; l++) {                                                                \
            double u = x[l];                                                                 \
            s0[0] = __builtin_fma(fabs(u), w ? w[l] : 1.0, s0[0]);                           \
            q0[0] = __builtin_fma(u, u, q0[0]);                                              \
        }                                                                                    \
        memcpy(st, &s0, sizeof s0);                                                          \
        memcpy(st + 8, &s1, sizeof s1);                                                      \
        memcpy(st + 16, &q0, sizeof q0);                                                     \
        memcpy(st + 24, &q1, sizeof q1);                                                     \
    }

FV_CLONES static void fv_aux(const float *x, long l0, long l1, const double *w, double *st)
FV_AUX_BODY(fv_ld8)

/* the x86-64-v4 copy: each 8-float load converted by one instruction */
FV_V4 static void fv_aux_v4(const float *x, long l0, long l1, const double *w, double *st)
FV_AUX_BODY(fv_ld8_v4)

static void fv_aux_final(const double *st, double *wabs, double *sq)
{
    double t[8];
    for (int v = 0; v < 8; v++)
        t[v] = st[v] + st[8 + v];
    *wabs = fv_tree8(t);
    for (int v = 0; v < 8; v++)
        t[v] = st[16 + v] + st[24 + v];
    *sq = fv_tree8(t);
}

FV_DOT_W8(1)
FV_DOT_W8(2)
FV_DOT_W8(3)
FV_DOT_W8(4)
FV_DOT_W8(5)
FV_DOT_W4(1)
FV_DOT_W4(2)
FV_DOT_W4(3)

/* [l0, l1) of all k probes for one group of rows (FV_W8_RB or FV_W4_RB),
 * in blocks of at most FV_W8_JB / FV_W4_JB probes with balanced sizes. */
static void fv_dot_piece(const float *const *x, bool w8, long l0, long l1, const double *V,
                         long L, int k, double *acc, long ars)
{
    int jmax = w8 ? FV_W8_JB : FV_W4_JB;
    int nblk = (k + jmax - 1) / jmax, j0 = 0;
    for (int b = 0; b < nblk; b++) {
        int jb = (k - j0) / (nblk - b);
        const double *Vb = V + (long)j0 * L;
        double *ab = acc + 8 * j0;
        if (w8) {
            switch (jb) {
            case 1: fv_w8_1(x, l0, l1, Vb, L, ab, ars); break;
            case 2: fv_w8_2(x, l0, l1, Vb, L, ab, ars); break;
            case 3: fv_w8_3(x, l0, l1, Vb, L, ab, ars); break;
            case 4: fv_w8_4(x, l0, l1, Vb, L, ab, ars); break;
            default: fv_w8_5(x, l0, l1, Vb, L, ab, ars); break;
            }
        } else {
            switch (jb) {
            case 1: fv_w4_1(x, l0, l1, Vb, L, ab, ars); break;
            case 2: fv_w4_2(x, l0, l1, Vb, L, ab, ars); break;
            default: fv_w4_3(x, l0, l1, Vb, L, ab, ars); break;
            }
        }
        j0 += jb;
    }
}

static bool fv_have_v4(void)
{
#if FV_X86V4
    __builtin_cpu_init();
    return __builtin_cpu_supports("x86-64-v4");
#else
    return false;
#endif
}

/* ---- passes ------------------------------------------------------------ */

typedef struct fv_ctx {
    const float *A, *B, *C;
    long m, kk, n;
    int k;
    const double *Rt; /* k x n */
    double *BRt;      /* k x kk: (BR)^T */
    double *beta;     /* kk: row abs sums of B */
    double *sqB;      /* kk: row square sums of B */
    /* threshold constants */
    kcs_fv_mode mode;
    double c_rig, c_prob, c_out, c_eta, c_chkA, c_chkC, c_fin, lambda, normB;
    /* per-row outputs */
    double *ratio, *thresh, *thr_rig, *thr_prob, *rmax, *resid, *cr;
    int *wprobe;
    atomic_long next;
    atomic_bool failed; /* a worker could not get its workspace */
    int pass;           /* 0: B, 1: A and C */
    bool w8;  /* use the x86-64-v4 kernels */
} fv_ctx;

/* Rows [r0, r1) (at most FV_CHUNK) of X, row length L: y[(r-r0) k + j] =
 * sum_l X_rl V_jl and the fv_aux sums (weights w) in wabs[], sq[]. L is
 * cut in pieces sized so that the probes' piece and the rows' piece stay
 * in L2 while every row group uses them; the lane sums live in ws (see the
 * kernels), so the pieces do not change the result. */
static void fv_block(const fv_ctx *c, const float *X, long r0, long r1, long L,
                     const double *V, const double *w, double *ws, double *y, double *wabs,
                     double *sq)
{
    int k = c->k, rb = c->w8 ? FV_W8_RB : FV_W4_RB;
    long ars = 8L * k, nrow = r1 - r0;
    double *acc = ws, *aux = ws + (FV_CHUNK + FV_W8_RB) * ars;
    memset(acc, 0, sizeof(double) * (size_t)((nrow + rb) * ars));
    memset(aux, 0, sizeof(double) * (size_t)(32 * nrow));
    long lc = (384L << 10) / (8L * k + 4L * FV_CHUNK);
    lc = lc < 256 ? 256 : lc / 16 * 16;
    for (long l0 = 0; l0 < L; l0 += lc) {
        long l1 = l0 + lc < L ? l0 + lc : L;
        for (long g = r0; g < r1; g += rb) {
            const float *x[FV_W8_RB];
            int valid = r1 - g < rb ? (int)(r1 - g) : rb;
            for (int r = 0; r < rb; r++)
                x[r] = X + (g + (r < valid ? r : valid - 1)) * L;
            fv_dot_piece(x, c->w8, l0, l1, V, L, k, acc + (g - r0) * ars, ars);
            for (int r = 0; r < valid; r++)
                (c->w8 ? fv_aux_v4 : fv_aux)(x[r], l0, l1, w, aux + 32 * (g - r0 + r));
        }
    }
    for (long r = 0; r < nrow; r++) {
        for (int j = 0; j < k; j++)
            y[r * k + j] = fv_tree8(acc + r * ars + 8 * j);
        fv_aux_final(aux + 32 * r, &wabs[r], &sq[r]);
    }
}

static void fv_rows_B(fv_ctx *c, long p0, long p1, double *ws, double *y)
{
    fv_block(c, c->B, p0, p1, c->n, c->Rt, NULL, ws, y, c->beta + p0, c->sqB + p0);
    for (long p = p0; p < p1; p++)
        for (int j = 0; j < c->k; j++)
            c->BRt[(long)j * c->kk + p] = y[(p - p0) * c->k + j];
}

/* c x with 0 * inf = 0: an all-zero row has no rounding error to bound. */
static double mulz(double c, double x)
{
    return x == 0 ? 0 : c * x;
}

static void fv_finish_row(fv_ctx *c, long i, const double *ya, const double *yc, double sAb,
                          double nA2, double sC, double nC2)
{
    double rm = 0;
    int nan = 0, jw = 0;
    for (int j = 0; j < c->k; j++) {
        double r = ya[j] - yc[j];
        if (c->resid)
            c->resid[i * c->k + j] = r;
        if (c->cr)
            c->cr[i * c->k + j] = yc[j];
        if (isnan(r)) {
            if (!nan)
                jw = j;
            nan = 1;
        } else if (fabs(r) > rm) {
            rm = fabs(r);
            if (!nan)
                jw = j;
        }
    }
    c->wprobe[i] = jw;
    double g_rig = mulz(c->c_rig, sAb) + mulz(c->c_out, sC);
    double g_prob = c->lambda * (mulz(c->c_prob, sqrt(nA2) * c->normB) + mulz(c->c_out, sqrt(nC2)));
    double chk = c->c_eta + c->c_chkA * sAb + c->c_chkC * sC;
    double t_rig = c->c_fin * (g_rig + chk), t_prob = c->c_fin * (g_prob + chk);
    double t = c->mode == KCS_FV_RIGOROUS ? t_rig : t_prob;
    if (c->thr_rig)
        c->thr_rig[i] = t_rig;
    if (c->thr_prob)
        c->thr_prob[i] = t_prob;
    double ratio;
    if (nan || isnan(t))
        ratio = NAN;
    else if (rm == 0)
        ratio = 0;
    else
        ratio = t > 0 ? rm / t : INFINITY;
    if (isinf(rm) && isinf(t))
        ratio = NAN;
    if (rm > t && ratio <= 1) /* keep ratio > 1 exactly when the row fails */
        ratio = nextafter(1.0, 2.0);
    c->ratio[i] = ratio;
    if (c->thresh)
        c->thresh[i] = t;
    if (c->rmax)
        c->rmax[i] = nan ? NAN : rm;
}

static void fv_rows_AC(fv_ctx *c, long i0, long i1, double *ws, double *y)
{
    double sab[FV_CHUNK], na2[FV_CHUNK], sc[FV_CHUNK], nc2[FV_CHUNK];
    double *ya = y, *yc = y + (long)FV_CHUNK * c->k;
    fv_block(c, c->A, i0, i1, c->kk, c->BRt, c->beta, ws, ya, sab, na2);
    fv_block(c, c->C, i0, i1, c->n, c->Rt, NULL, ws, yc, sc, nc2);
    for (long i = i0; i < i1; i++) {
        long r = i - i0;
        fv_finish_row(c, i, ya + r * c->k, yc + r * c->k, sab[r], na2[r], sc[r], nc2[r]);
    }
}

static void *fv_worker(void *arg)
{
    fv_ctx *c = arg;
    long rows = c->pass == 0 ? c->kk : c->m;
    /* lane sums of FV_CHUNK (+ padding) rows, aux lanes, two k-vectors per row */
    size_t nws = (size_t)(FV_CHUNK + FV_W8_RB) * 8 * c->k + 32 * FV_CHUNK;
    double *ws = malloc(sizeof(double) * nws);
    double *y = malloc(sizeof(double) * 2 * FV_CHUNK * (size_t)c->k);
    if (!ws || !y) {
        atomic_store(&c->failed, true);
        free(ws);
        free(y);
        return NULL;
    }
    for (;;) {
        long r0 = atomic_fetch_add(&c->next, FV_CHUNK);
        if (r0 >= rows)
            break;
        long r1 = r0 + FV_CHUNK < rows ? r0 + FV_CHUNK : rows;
        if (c->pass == 0)
            fv_rows_B(c, r0, r1, ws, y);
        else
            fv_rows_AC(c, r0, r1, ws, y);
    }
    free(ws);
    free(y);
    return NULL;
}

/* Run one pass on nthr threads (the caller is one of them). */
static int fv_run_pass(fv_ctx *c, int pass, int nthr)
{
    c->pass = pass;
    atomic_store(&c->next, 0);
    pthread_t th[64];
    int started = 0;
    for (int t = 1; t < nthr && t < 64; t++) {
        if (pthread_create(&th[started], NULL, fv_worker, c) != 0)
            break; /* fewer threads is still correct */
        started++;
    }
    fv_worker(c);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    return 0;
}

static double fv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *fv_alloc(size_t count, size_t size)
{
    size_t bytes = (count * size + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

int kcs_freivalds_check_args(const void *A, const void *B, const void *C, long m, long kk,
                             long n, const kcs_fv_params *p, const void *res_p, kcs_error *err)
{
    if (!A || !B || !C || !p || !res_p)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: NULL argument");
    if (m < 1 || kk < 1 || n < 1)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: bad shape %ldx%ld * %ldx%ld", m, kk, kk,
                        n);
    if (p->probes < 1 || p->probes > KCS_FV_MAX_PROBES)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: probes must be in 1..%d (got %d)",
                        KCS_FV_MAX_PROBES, p->probes);
    if (!(p->u_acc >= 0 && p->u_acc < 1) || !(p->u_out >= 0 && p->u_out < 1) ||
        !(p->eta_acc >= 0) || !(p->eta_out >= 0) || p->reduction_len < 0 ||
        p->fail_prob < 0 || p->fail_prob >= 1)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: bad precision parameters");
    if (p->mode != KCS_FV_RIGOROUS && p->mode != KCS_FV_PROBABILISTIC)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: unknown mode %d", (int)p->mode);
    if (p->device_kernel != 0 && p->device_kernel != 1)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: unknown device kernel %d (0: tiled, 1: v1)",
                        p->device_kernel);
    return 0;
}

/* Threshold constants (see the comment at the top) and per-row outputs. */
static int fv_setup(fv_ctx *c, const kcs_fv_params *p, const kcs_fv_detail *detail,
                    double **ratio_own)
{
    long m = c->m, kk = c->kk, n = c->n;
    double K = (double)(p->reduction_len ? p->reduction_len : kk);
    double gK = gamma_n(K, p->u_acc);
    c->mode = p->mode;
    c->c_out = p->u_out / (1 - p->u_out);
    c->c_eta = (2 * K * p->eta_acc + p->eta_out) * (double)n;
    c->c_chkA = gamma_n((double)(kk + n), FV_U64);
    c->c_chkC = gamma_n((double)n, FV_U64);
    c->c_fin = (1 + FV_U64) * (1 + 4 * ((double)kk + (double)n + 64) * FV_U64);
    c->c_rig = gK;
    c->c_prob = sqrt(K) * p->u_acc * (1 + gK);
    c->lambda = kcs_freivalds_lambda(m, c->k, p->fail_prob);
    c->wprobe = fv_alloc((size_t)m, sizeof *c->wprobe);
    *ratio_own = NULL;
    c->ratio = detail && detail->row_ratio ? detail->row_ratio
                                           : (*ratio_own = fv_alloc((size_t)m, sizeof(double)));
    if (detail) {
        c->thresh = detail->row_thresh;
        c->thr_rig = detail->row_thresh_rig;
        c->thr_prob = detail->row_thresh_prob;
        c->rmax = detail->row_resid;
        c->resid = detail->resid;
        c->cr = detail->cr;
    }
    return c->wprobe && c->ratio ? 0 : KCS_E_NOMEM;
}

static void fv_result(const fv_ctx *c, kcs_fv_result *res)
{
    *res = (kcs_fv_result){.pass = true,
                           .worst_row = 0,
                           .lambda = c->mode == KCS_FV_PROBABILISTIC ? c->lambda : 0};
    for (long i = 0; i < c->m; i++) {
        double r = c->ratio[i];
        if (isnan(r)) {
            if (!isnan(res->tau))
                res->worst_row = i;
            res->tau = NAN;
            res->pass = false;
        } else if (!isnan(res->tau) && r > res->tau) {
            res->tau = r;
            res->worst_row = i;
        }
    }
    if (res->tau > 1)
        res->pass = false;
    res->worst_probe = c->wprobe[res->worst_row];
}

int kcs_freivalds_verify(const float *A, const float *B, const float *C, long m, long kk,
                         long n, const kcs_fv_params *p, const kcs_fv_detail *detail,
                         kcs_fv_result *res_p, kcs_error *err)
{
    double t0 = fv_now();
    int rc = kcs_freivalds_check_args(A, B, C, m, kk, n, p, res_p, err);
    if (rc)
        return rc;
    int k = p->probes;
    fv_ctx c = {.A = A, .B = B, .C = C, .m = m, .kk = kk, .n = n, .k = k};
    atomic_init(&c.next, 0);
    atomic_init(&c.failed, false);
    c.w8 = !p->portable_kernels && fv_have_v4();
    double *ratio_own = NULL, *Rt = fv_alloc((size_t)n * k, sizeof *Rt);
    c.BRt = fv_alloc((size_t)kk * k, sizeof *c.BRt);
    c.beta = fv_alloc((size_t)kk, sizeof *c.beta);
    c.sqB = fv_alloc((size_t)kk, sizeof *c.sqB);
    if (fv_setup(&c, p, detail, &ratio_own) || !Rt || !c.BRt || !c.beta || !c.sqB) {
        rc = kcs_fail(err, KCS_E_NOMEM, "freivalds: out of memory (n=%ld, k=%d)", n, k);
        goto out;
    }
    kcs_freivalds_probes(p->seed, p->stream, n, k, Rt);
    c.Rt = Rt;
    int nthr = p->threads > 0 ? p->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    nthr = nthr < 1 ? 1 : nthr > 64 ? 64 : nthr;
    fv_run_pass(&c, 0, nthr);
    double nB2 = 0;
    for (long q = 0; q < kk; q++)
        nB2 += c.sqB[q];
    c.normB = sqrt(nB2);
    fv_run_pass(&c, 1, nthr);
    if (atomic_load(&c.failed)) {
        rc = kcs_fail(err, KCS_E_NOMEM, "freivalds: out of memory (thread workspace)");
        goto out;
    }
    kcs_fv_result res;
    fv_result(&c, &res);
    res.seconds = fv_now() - t0;
    *res_p = res;
out:
    KCS_FREE(Rt, c.BRt, c.beta, c.sqB, c.wprobe, ratio_own);
    return rc;
}

int kcs_freivalds_finish(const double *ya, const double *yc, const double *sab,
                         const double *na2, const double *sc, const double *nc2, double nb2,
                         long m, long kk, long n, const kcs_fv_params *p,
                         const kcs_fv_detail *detail, kcs_fv_result *res_p, kcs_error *err)
{
    double t0 = fv_now();
    if (!sab || !na2 || !sc || !nc2)
        return kcs_fail(err, KCS_E_INVAL, "freivalds: NULL argument");
    int rc = kcs_freivalds_check_args(ya, yc, sab, m, kk, n, p, res_p, err);
    if (rc)
        return rc;
    fv_ctx c = {.m = m, .kk = kk, .n = n, .k = p->probes, .normB = sqrt(nb2)};
    double *ratio_own = NULL;
    if (fv_setup(&c, p, detail, &ratio_own)) {
        rc = kcs_fail(err, KCS_E_NOMEM, "freivalds: out of memory (m=%ld)", m);
        goto out;
    }
    for (long i = 0; i < m; i++)
        fv_finish_row(&c, i, ya + i * c.k, yc + i * c.k, sab[i], na2[i], sc[i], nc2[i]);
    kcs_fv_result res;
    fv_result(&c, &res);
    res.seconds = fv_now() - t0;
    *res_p = res;
out:
    free(c.wprobe);
    free(ratio_own);
    return rc;
}

void kcs_freivalds_fixed(const double *resid, const double *cr, long m, int k, double atol,
                         double rtol, bool *pass_p, double *ratio_p)
{
    double worst = 0;
    bool pass = true;
    for (int j = 0; j < k; j++) {
        double rmax = 0, cmax = 0;
        bool nan = false;
        for (long i = 0; i < m; i++) {
            double r = fabs(resid[i * k + j]), q = fabs(cr[i * k + j]);
            if (isnan(r) || isnan(q))
                nan = true;
            if (r > rmax)
                rmax = r;
            if (q > cmax)
                cmax = q;
        }
        double t = atol + rtol * cmax;
        double ratio = nan ? NAN : (rmax == 0 ? 0 : rmax / t);
        if (isnan(ratio) || !(rmax <= t))
            pass = false;
        if (isnan(ratio) || ratio > worst)
            worst = isnan(ratio) ? NAN : ratio;
        if (isnan(worst))
            break;
    }
    *pass_p = pass;
    *ratio_p = worst;
}
