/* Counter-based Philox4x32-10 (Salmon et al., SC'11). A stream is keyed by
 * (study seed, case id, tensor index, trial): every rank draws the same bits
 * with no communication. */
#ifndef KCS_RNG_H
#define KCS_RNG_H

#include <stddef.h>
#include <stdint.h>

/* 2^64 / golden ratio: the Weyl increment of SplitMix64, and the odd
 * multiplier kcs uses wherever it spreads a small integer over 64 bits. */
#define KCS_GOLDEN64 0x9E3779B97F4A7C15ull

typedef struct kcs_rng {
    uint32_t key[2];
    uint32_t ctr[4];
    uint32_t buf[4];
    int avail;
} kcs_rng;

/* One Philox4x32-10 block: out = philox(ctr, key). */
void kcs_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

void kcs_rng_init(kcs_rng *r, uint64_t seed, uint64_t stream_a, uint64_t stream_b);
uint32_t kcs_rng_u32(kcs_rng *r);
uint64_t kcs_rng_u64(kcs_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double kcs_rng_uniform(kcs_rng *r);
/* Standard normal (Box-Muller on two uniforms). */
double kcs_rng_normal(kcs_rng *r);

#endif
