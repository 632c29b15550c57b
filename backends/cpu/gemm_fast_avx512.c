/* gemm_fast.c's kernels compiled for AVX-512 (F, DQ, VL, BW) + FMA at
 * 512-bit vectors; gemm_fast.c calls them only when the CPU reports them.
 * Other compilers/targets: no copy (NULL). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,fma,prefer-vector-width=512")
#include <immintrin.h>
#include <math.h>

#define GF_VBYTES 64
#include "gemm_fast_vec.h"

/* The kernels' hooks (gemm_fast_kern.h) in AVX-512 instructions. The sum
 * is rounded to odd: where it is inexact its neighbours below and above
 * (the sums rounded downward and upward) differ and it is the one whose
 * last bit is odd. That makes its rounding to any format of at most 51
 * bits the correct rounding of the exact sum (Boldo & Melquiond,
 * "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd", IEEE Trans. Computers 57(4), 2008): the value the
 * portable TwoSum-and-nudge form gives, in 4 instructions instead of 12.
 * Exact, Inf and NaN sums: both roundings agree. */
INLINE void gf_sum_odd512(gf_vd *o, const gf_vd *x, const gf_vd *t)
{
    __m512d rd = _mm512_add_round_pd((__m512d)*x, (__m512d)*t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512d ru = _mm512_add_round_pd((__m512d)*x, (__m512d)*t, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    __mmask8 rd_odd = _mm512_test_epi64_mask((__m512i)rd, _mm512_set1_epi64(1));
    *o = (gf_vd)_mm512_mask_mov_pd(ru, rd_odd, rd);
}
INLINE void gf_maxu512(gf_vu *o, const gf_vu *a, const gf_vu *b)
{
    *o = (gf_vu)_mm512_max_epu64((__m512i)*a, (__m512i)*b);
}
INLINE void gf_inf_above512(gf_vd *r, const gf_vd *maxf)
{
    __mmask8 big = _mm512_cmp_pd_mask((__m512d)*r, (__m512d)*maxf, _CMP_GT_OQ);
    *r = (gf_vd)_mm512_mask_mov_pd((__m512d)*r, big, _mm512_set1_pd(INFINITY));
}
#define GF_SUM_ODD gf_sum_odd512
#define GF_MAXU gf_maxu512
#define GF_INF_ABOVE gf_inf_above512

#define KERN(name) kcs_gf_##name##_avx512_impl
#include "gemm_fast_kern.h"

f32_block_fn kcs_gf_f32_block_avx512(void)
{
    return kcs_gf_f32_block_avx512_impl;
}

nar_block_fn kcs_gf_nar_block_avx512(void)
{
    return kcs_gf_nar_block_avx512_impl;
}
#else
#include "gemm_fast_impl.h"

f32_block_fn kcs_gf_f32_block_avx512(void)
{
    return NULL;
}

nar_block_fn kcs_gf_nar_block_avx512(void)
{
    return NULL;
}
#endif
