/* The narrow-accumulator kernels' lanes. A copy that sets GF_VBYTES
 * before including this (gemm_fast_avx512.c: 64) gets GCC vector
 * extensions that wide, with bit casts and forced unrolling; the others
 * plain doubles, which their compiler vectorises as loops (on AVX2 that was
 * faster than 32-byte vector extensions, which spill there). Included once
 * per translation unit, before the copy's hooks and gemm_fast_kern.h. */
#ifndef KCS_GEMM_FAST_VEC_H
#define KCS_GEMM_FAST_VEC_H

#include "gemm_fast_impl.h"

#define INLINE static inline __attribute__((always_inline))

#ifdef GF_VBYTES
typedef double gf_vd __attribute__((vector_size(GF_VBYTES)));
typedef unsigned long long gf_vu __attribute__((vector_size(GF_VBYTES)));
enum { WV = W / (GF_VBYTES / 8) }; /* lanes per row of a block */
#define GF_AS_U(x) ((gf_vu)(x))
#define GF_AS_D(x) ((gf_vd)(x))
#define GF_UNROLL _Pragma("GCC unroll 16")
#else
typedef double gf_vd;
typedef uint64_t gf_vu;
enum { WV = W };
#define GF_AS_U(x) kcs_ff_bits(x)
#define GF_AS_D(x) kcs_ff_double(x)
#define GF_UNROLL
#endif

#endif
