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
/* n draws of kcs_rng_u32, in order (blocks generated in bulk). */
void kcs_rng_u32_n(kcs_rng *r, uint32_t *out, size_t n);

/* Standard normal: 256-layer ziggurat (rng_normal.c) on kcs_rng_u64 draws,
 * with fixed tables and fixed-definition exp/log (detmath.h): the same bits
 * on every libm, CPU and compiler flag set. */
double kcs_rng_normal(kcs_rng *r);
/* n draws of kcs_rng_normal, in order (candidates computed in bulk). */
void kcs_rng_normal_n(kcs_rng *r, double *x, size_t n);

/* Version of the input generator (the normal transform, the distributions
 * of tensor.c): part of the plan hash, so that datasets and journals from
 * another generator are not mixed. 1: Box-Muller through libm cos/log;
 * 2: ziggurat with fixed tables and detmath.h; 3: exact-sum reductions of
 * fp16 inputs scaled into its range rather than capped by it; 4: narrow
 * exact-sum entries of either parity (even-length blocks no longer sum to
 * even integers), and subnormal reduce_sum rows of one sign on even rows
 * (inputs.c); 5: exact-sum inputs in narrow formats (bf16, fp16, fp8) as
 * wide as fp32's: top-aligned entries and odd sums, so their sums need 23
 * bits (inputs_exact.c), and `offset` rows in formats narrower than fp32
 * of the two adjacent values 4096 and 4096 + ulp, in antithetic pairs
 * (tensor.c). */
#define KCS_INPUTS_VERSION 5

#endif
