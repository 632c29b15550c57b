/* The own gemm's bf16 and fp16 accumulators in float lanes (AVX-512), for
 * inputs that are fp32 values (every input format but fp64): 16 outputs
 * per vector instead of 8, and the rounding in 2-5 instructions.
 *
 * Each of the model's steps (kcs_acc_add: the exact x + a*b, or a + b, or
 * the exact product a*b for a pairwise leaf, correctly rounded to the
 * accumulator) is done as: the exact result rounded to odd in fp32 (the
 * operation rounded downward and upward with embedded rounding, and the
 * one of the two whose last bit is odd; both are the same where the result
 * is exact), then rounded to nearest even in the accumulator's format.
 * fp32 has 24 bits, at least p + 2 for bf16 (p = 8) and fp16 (p = 11), and
 * finer quanta than either down to their subnormals, so that double
 * rounding is the correct rounding of the exact result (Boldo & Melquiond,
 * "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd", IEEE Trans. Computers 57(4), 2008). Beyond fp32's
 * range: a result above FLT_MAX rounds to odd as FLT_MAX (downward) and
 * +Inf (upward), FLT_MAX is odd, and it rounds to Inf in bf16 and fp16 as
 * the exact result does; a nonzero result below the least subnormal
 * rounds to odd as that subnormal (or 0 when exact), which rounds to a
 * signed zero in both formats as the exact result does. Signed zeros: an
 * exact zero sum is -0 downward and +0 upward, +0 (even) is taken, as
 * round-to-nearest gives.
 *
 * Rounding to the accumulator: fp16 by the conversion instructions
 * (vcvtps2ph with round-to-nearest-even in the instruction, and back:
 * subnormals, overflow to Inf); bf16 on the bits (add 0x7fff plus the
 * kept part's last bit, clear the low 16 bits: bf16 is fp32's top half,
 * subnormals and overflow to Inf included). NaN: the driver passes no NaN
 * input, so every NaN here is the default NaN of an invalid operation
 * (Inf - Inf, 0 * Inf), which the bf16 rounding keeps a NaN.
 *
 * test_gemm_fast checks this copy against the exact model bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,fma")
#include <immintrin.h>

#include "gemm_fast_impl.h"

#define N32_INLINE static inline __attribute__((always_inline))

enum {
    N32_RD = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC,
    N32_RU = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC
};

N32_INLINE __m512 n32_odd(__m512 lo, __m512 hi)
{
    __mmask16 odd = _mm512_test_epi32_mask(_mm512_castps_si512(lo), _mm512_set1_epi32(1));
    return _mm512_mask_mov_ps(hi, odd, lo);
}

/* s rounded to nearest even in bf16 (fp16 = 0) or fp16 (fp16 = 1) */
N32_INLINE __m512 n32_round(__m512 s, const int fp16)
{
    if (fp16)
        return _mm512_cvtph_ps(_mm512_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m512i u = _mm512_castps_si512(s);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    u = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    return _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32((int)0xffff0000u)));
}

/* round(x + a*b), round(a*b), round(x + y): the exact result rounded to
 * odd, then to the accumulator */
N32_INLINE __m512 n32_fma(__m512 a, __m512 b, __m512 x, const int fp16)
{
    return n32_round(n32_odd(_mm512_fmadd_round_ps(a, b, x, N32_RD),
                             _mm512_fmadd_round_ps(a, b, x, N32_RU)), fp16);
}

N32_INLINE __m512 n32_mul(__m512 a, __m512 b, const int fp16)
{
    return n32_round(n32_odd(_mm512_mul_round_ps(a, b, N32_RD), _mm512_mul_round_ps(a, b, N32_RU)),
                     fp16);
}

N32_INLINE __m512 n32_add(__m512 x, __m512 y, const int fp16)
{
    return n32_round(n32_odd(_mm512_add_round_ps(x, y, N32_RD), _mm512_add_round_ps(x, y, N32_RU)),
                     fp16);
}

/* acc[r] = the sequential sum of terms p0 .. p0+len-1 (in order[] where
 * the schedule draws one), from 0 */
N32_INLINE void n32_seq(const f32_job *J, size_t i0, size_t j0, size_t p0, size_t len,
                        const uint32_t *order, const int fp16, __m512 acc[R])
{
    for (int r = 0; r < R; r++)
        acc[r] = _mm512_setzero_ps();
    const float *__restrict A = J->A + i0 * J->k;
    for (size_t p = p0; p < p0 + len; p++) {
        size_t q = order ? (size_t)order[p] : p;
        __m512 b = _mm512_loadu_ps(J->B + q * J->ldb + j0);
        for (int r = 0; r < R; r++)
            acc[r] = n32_fma(_mm512_set1_ps(A[(size_t)r * J->k + q]), b, acc[r], fp16);
    }
}

N32_INLINE __m512 n32_leaf(const f32_job *J, size_t i0, size_t j0, size_t p, int r, const int fp16)
{
    return n32_mul(_mm512_set1_ps(J->A[(i0 + (size_t)r) * J->k + p]),
                   _mm512_loadu_ps(J->B + p * J->ldb + j0), fp16);
}

/* The model's pairwise order: sum(p0, h) + sum(p0 + h, len - h), h = len / 2 */
#define N32_PAIRWISE(name, fp16)                                                            \
    static void name(const f32_job *J, size_t i0, size_t j0, size_t p0, size_t len,        \
                     __m512 out[R])                                                        \
    {                                                                                      \
        if (len <= 4) { /* the last levels here, in the model's order */                   \
            for (int r = 0; r < R; r++) {                                                  \
                __m512 l0 = n32_leaf(J, i0, j0, p0, r, fp16);                              \
                if (len == 1)                                                              \
                    out[r] = l0;                                                           \
                else if (len == 2)                                                         \
                    out[r] = n32_add(l0, n32_leaf(J, i0, j0, p0 + 1, r, fp16), fp16);      \
                else if (len == 3) /* h = 1: l0 + (l1 + l2) */                             \
                    out[r] = n32_add(l0,                                                   \
                                     n32_add(n32_leaf(J, i0, j0, p0 + 1, r, fp16),         \
                                             n32_leaf(J, i0, j0, p0 + 2, r, fp16), fp16),  \
                                     fp16);                                                \
                else /* (l0 + l1) + (l2 + l3) */                                           \
                    out[r] = n32_add(                                                      \
                        n32_add(l0, n32_leaf(J, i0, j0, p0 + 1, r, fp16), fp16),           \
                        n32_add(n32_leaf(J, i0, j0, p0 + 2, r, fp16),                      \
                                n32_leaf(J, i0, j0, p0 + 3, r, fp16), fp16),               \
                        fp16);                                                             \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        size_t h = len / 2;                                                                \
        __m512 rt[R];                                                                      \
        name(J, i0, j0, p0, h, out);                                                       \
        name(J, i0, j0, p0 + h, len - h, rt);                                              \
        for (int r = 0; r < R; r++)                                                        \
            out[r] = n32_add(out[r], rt[r], fp16);                                         \
    }
N32_PAIRWISE(n32_pairwise_bf16, 0)
N32_PAIRWISE(n32_pairwise_fp16, 1)

N32_INLINE void n32_block(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                          double out[R][W], const int fp16)
{
    __m512 o[R];
    if (pl->kind == 1) {
        if (fp16)
            n32_pairwise_fp16(J, i0, j0, 0, J->k, o);
        else
            n32_pairwise_bf16(J, i0, j0, 0, J->k, o);
    } else if (pl->kind == 0) {
        if (J->order)
            n32_seq(J, i0, j0, 0, J->k, J->order, fp16, o);
        else
            n32_seq(J, i0, j0, 0, J->k, NULL, fp16, o);
    } else {
        /* as the model: total = 0, then total + each chunk's sum */
        __m512 part[R];
        for (int r = 0; r < R; r++)
            o[r] = _mm512_setzero_ps();
        for (size_t s = 0; s < J->k; s += pl->chunk) {
            size_t len = J->k - s < pl->chunk ? J->k - s : pl->chunk;
            n32_seq(J, i0, j0, s, len, NULL, fp16, part);
            for (int r = 0; r < R; r++)
                o[r] = n32_add(o[r], part[r], fp16);
        }
    }
    for (int r = 0; r < R; r++) {
        _mm512_storeu_pd(out[r], _mm512_cvtps_pd(_mm512_castps512_ps256(o[r])));
        _mm512_storeu_pd(out[r] + 8,
                         _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(o[r]), 1))));
    }
}

static void n32_block_bf16(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                           double out[R][W])
{
    n32_block(J, pl, i0, j0, out, 0);
}

static void n32_block_fp16(const f32_job *J, const plan *pl, size_t i0, size_t j0,
                           double out[R][W])
{
    n32_block(J, pl, i0, j0, out, 1);
}

n32_block_fn kcs_gf_n32_block_avx512(int fp16)
{
    return fp16 ? n32_block_fp16 : n32_block_bf16;
}
#else
#include "gemm_fast_impl.h"

n32_block_fn kcs_gf_n32_block_avx512(int fp16)
{
    (void)fp16;
    return NULL;
}
#endif
