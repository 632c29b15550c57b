/* Philox4x32-10 blocks with AVX2 intrinsics: the same words as philox.h's
 * rounds (test_rng_normal compares kcs_rng_u32_n with the scalar
 * generator), 16 blocks per step as two independent groups of 8 lanes.
 * The compiler's own vectorisation of the portable loop (rng.c) split the
 * 32x32->64 multiplies into permutes and ran at 3.7 ns per word; here each
 * multiply is two vpmuludq (even and odd lanes) and two blends. */
#include "philox_avx2.h"

#include "philox.h"

#if KCS_HAVE_PHILOX_AVX2
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

/* hi and lo words of m * a in each 32-bit lane */
TARGET static inline void mulhilo8(__m256i a, __m256i m, __m256i *hi, __m256i *lo)
{
    __m256i even = _mm256_mul_epu32(a, m);
    __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

TARGET static inline void round8(__m256i c[4], __m256i k0, __m256i k1, __m256i m0, __m256i m1)
{
    __m256i hi0, lo0, hi1, lo1;
    mulhilo8(c[0], m0, &hi0, &lo0);
    mulhilo8(c[2], m1, &hi1, &lo1);
    __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), k0);
    __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), k1);
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

/* 8 blocks' words (lane l of c[j] is word j of block l) to out in block
 * order: a 4x8 transpose by unpacks and 128-bit permutes. */
TARGET static inline void store8(const __m256i c[4], uint32_t *out)
{
    __m256i t0 = _mm256_unpacklo_epi32(c[0], c[1]), t1 = _mm256_unpacklo_epi32(c[2], c[3]);
    __m256i t2 = _mm256_unpackhi_epi32(c[0], c[1]), t3 = _mm256_unpackhi_epi32(c[2], c[3]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t1); /* blocks 0 and 4 */
    __m256i u1 = _mm256_unpackhi_epi64(t0, t1); /* 1 and 5 */
    __m256i u2 = _mm256_unpacklo_epi64(t2, t3); /* 2 and 6 */
    __m256i u3 = _mm256_unpackhi_epi64(t2, t3); /* 3 and 7 */
    _mm256_storeu_si256((__m256i *)out, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 8), _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 16), _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256((__m256i *)(out + 24), _mm256_permute2x128_si256(u2, u3, 0x31));
}

TARGET size_t kcs_philox_blocks_avx2(const uint32_t ctr[4], const uint32_t key[2], size_t nb,
                                     uint32_t *out)
{
    const __m256i m0 = _mm256_set1_epi32((int)KCS_PHILOX_M0);
    const __m256i m1 = _mm256_set1_epi32((int)KCS_PHILOX_M1);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t b0 = 0;
    for (; b0 + 16 <= nb; b0 += 16) {
        __m256i a[4], b[4];
        __m256i base = _mm256_set1_epi32((int)(ctr[0] + (uint32_t)b0));
        a[0] = _mm256_add_epi32(base, lane);
        b[0] = _mm256_add_epi32(a[0], _mm256_set1_epi32(8));
        for (int j = 1; j < 4; j++)
            a[j] = b[j] = _mm256_set1_epi32((int)ctr[j]);
        uint32_t k0 = key[0], k1 = key[1];
        for (int r = 0; r < 10; r++) {
            if (r > 0) {
                k0 += KCS_PHILOX_W0;
                k1 += KCS_PHILOX_W1;
            }
            __m256i vk0 = _mm256_set1_epi32((int)k0), vk1 = _mm256_set1_epi32((int)k1);
            round8(a, vk0, vk1, m0, m1);
            round8(b, vk0, vk1, m0, m1);
        }
        store8(a, out + 4 * b0);
        store8(b, out + 4 * (b0 + 8));
    }
    return b0;
}
#endif
