#include "rng.h"
#include "philox.h"

#include <math.h>

void kcs_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4])
{
    kcs_philox4x32_10_rounds(ctr_in, key_in, out);
}

void kcs_rng_init(kcs_rng *r, uint64_t seed, uint64_t stream_a, uint64_t stream_b)
{
    r->key[0] = (uint32_t)seed;
    r->key[1] = (uint32_t)(seed >> 32);
    r->ctr[0] = 0;
    r->ctr[1] = (uint32_t)stream_b;
    r->ctr[2] = (uint32_t)stream_a;
    r->ctr[3] = (uint32_t)(stream_a >> 32) ^ (uint32_t)((stream_b >> 32) * 0x9E3779B1u);
    r->avail = 0;
}

uint32_t kcs_rng_u32(kcs_rng *r)
{
    if (r->avail == 0) {
        kcs_philox4x32_10(r->ctr, r->key, r->buf);
        r->ctr[0]++;
        r->avail = 4;
    }
    return r->buf[4 - r->avail--];
}

uint64_t kcs_rng_u64(kcs_rng *r)
{
    uint64_t hi = kcs_rng_u32(r);
    return (hi << 32) | kcs_rng_u32(r);
}

double kcs_rng_uniform(kcs_rng *r)
{
    return (double)(kcs_rng_u64(r) >> 11) * 0x1.0p-53;
}

double kcs_rng_normal(kcs_rng *r)
{
    /* Box-Muller; u1 in (0, 1] so the log is finite. */
    double u1 = 1.0 - kcs_rng_uniform(r);
    double u2 = kcs_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}
