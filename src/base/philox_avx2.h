/* Bulk Philox4x32-10 with AVX2 (philox_avx2.c), for kcs_rng_u32_n. */
#ifndef KCS_PHILOX_AVX2_H
#define KCS_PHILOX_AVX2_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define KCS_HAVE_PHILOX_AVX2 1
/* Blocks at counters (ctr[0] + i mod 2^32, ctr[1..3]) for i < the returned
 * count (nb rounded down to 16), 4 words each into out. Call only where
 * the CPU has AVX2. */
size_t kcs_philox_blocks_avx2(const uint32_t ctr[4], const uint32_t key[2], size_t nb,
                              uint32_t *out);
#else
#define KCS_HAVE_PHILOX_AVX2 0
#endif

#endif
