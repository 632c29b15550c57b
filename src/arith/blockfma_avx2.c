/* The block-FMA GEMM kernels at 4 doubles per vector, compiled for AVX2
 * (whatever the build's -march); blockfma_gemm.c calls them only when the
 * CPU reports AVX2. Other compilers/targets: no kernel (NULL). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("avx2")
#define VW 4
#define KERN_PICK kcs_bfma_pick_avx2
#include "blockfma_kern.h"
#else
#include "blockfma_impl.h"

#include <stddef.h>

kcs_bfma_group_fn kcs_bfma_pick_avx2(const kcs_profile_params *p)
{
    (void)p;
    return NULL;
}

bool kcs_bfma_pick_int(const kcs_profile_params *p, kcs_bfma_igroup_fn *one,
                       kcs_bfma_igroup_fn *four)
{
    (void)p;
    (void)one;
    (void)four;
    return false;
}
#endif
