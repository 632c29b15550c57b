/* gemm_fast.c's kernels compiled for AVX-512 (F, DQ, VL, BW) + FMA at
 * 512-bit vectors; gemm_fast.c calls them only when the CPU reports them.
 * Other compilers/targets: no copy (NULL). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,fma,prefer-vector-width=512")
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
