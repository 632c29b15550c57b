/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC'11): the one definition of kcs's counter-based generator, in the
 * subset of C that C17, CUDA and HIP share. src/base/rng.c includes it
 * for the CPU; the device Freivalds kernels (backends/cuda/freivalds.cu,
 * built by nvcc and hipcc) include it with KCS_PHILOX_QUAL defined as
 * `static __device__ inline`, so a probe drawn on a GPU is the CPU's bit
 * for bit. test_rng checks the known-answer vectors of Random123. */
#ifndef KCS_PHILOX_H
#define KCS_PHILOX_H

#include <stdint.h>

#ifndef KCS_PHILOX_QUAL
#define KCS_PHILOX_QUAL static inline
#endif

#define KCS_PHILOX_M0 0xD2511F53u
#define KCS_PHILOX_M1 0xCD9E8D57u
#define KCS_PHILOX_W0 0x9E3779B9u
#define KCS_PHILOX_W1 0xBB67AE85u

KCS_PHILOX_QUAL void kcs_philox_mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

KCS_PHILOX_QUAL void kcs_philox4x32_10_rounds(const uint32_t ctr_in[4], const uint32_t key_in[2],
                                               uint32_t out[4])
{
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += KCS_PHILOX_W0;
            k1 += KCS_PHILOX_W1;
        }
        uint32_t hi0, lo0, hi1, lo1;
        kcs_philox_mulhilo(KCS_PHILOX_M0, c0, &hi0, &lo0);
        kcs_philox_mulhilo(KCS_PHILOX_M1, c2, &hi1, &lo1);
        uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

#endif
