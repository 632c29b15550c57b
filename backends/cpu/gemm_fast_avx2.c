/* gemm_fast.c's kernels compiled for AVX2 + FMA (whatever the build's
 * -march); gemm_fast.c calls them only when the CPU reports both. Other
 * compilers/targets: no copy (NULL). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("avx2,fma")
#define KERN(name) kcs_gf_##name##_avx2_impl
#include "gemm_fast_kern.h"

f32_block_fn kcs_gf_f32_block_avx2(void)
{
    return kcs_gf_f32_block_avx2_impl;
}

nar_block_fn kcs_gf_nar_block_avx2(void)
{
    return kcs_gf_nar_block_avx2_impl;
}
#else
#include "gemm_fast_impl.h"

f32_block_fn kcs_gf_f32_block_avx2(void)
{
    return NULL;
}

nar_block_fn kcs_gf_nar_block_avx2(void)
{
    return NULL;
}
#endif
