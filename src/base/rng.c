#include "rng.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

void kcs_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4])
{
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(PHILOX_M0, c0, &hi0, &lo0);
        mulhilo(PHILOX_M1, c2, &hi1, &lo1);
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
