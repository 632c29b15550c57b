#include "rng.h"
#include "philox.h"
#include "philox_avx2.h"


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

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

/* nb Philox blocks (philox.h's rounds, 8 lanes at a time; test_rng_normal checks
 * them against the scalar path) at counters (ctr[0] + i mod 2^32, ctr[1..3]), 4 words
 * each, into out: the same words kcs_rng_u32 returns, 8 blocks per step
 * so that the compiler vectorises across blocks. */
CLONES static void philox_blocks(const uint32_t ctr[4], const uint32_t key[2], size_t nb,
                                 uint32_t *out)
{
    for (size_t b0 = 0; b0 < nb; b0 += 8) {
        uint32_t c0[8], c1[8], c2[8], c3[8];
        for (int l = 0; l < 8; l++) {
            c0[l] = ctr[0] + (uint32_t)(b0 + (size_t)l);
            c1[l] = ctr[1];
            c2[l] = ctr[2];
            c3[l] = ctr[3];
        }
        uint32_t k0 = key[0], k1 = key[1];
        for (int r = 0; r < 10; r++) {
            if (r > 0) {
                k0 += KCS_PHILOX_W0;
                k1 += KCS_PHILOX_W1;
            }
            for (int l = 0; l < 8; l++) {
                uint64_t p0 = (uint64_t)KCS_PHILOX_M0 * c0[l], p1 = (uint64_t)KCS_PHILOX_M1 * c2[l];
                uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[l] ^ k0, n1 = (uint32_t)p1;
                uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[l] ^ k1, n3 = (uint32_t)p0;
                c0[l] = n0;
                c1[l] = n1;
                c2[l] = n2;
                c3[l] = n3;
            }
        }
        size_t lanes = nb - b0 < 8 ? nb - b0 : 8;
        for (size_t l = 0; l < lanes; l++) {
            out[4 * (b0 + l)] = c0[l];
            out[4 * (b0 + l) + 1] = c1[l];
            out[4 * (b0 + l) + 2] = c2[l];
            out[4 * (b0 + l) + 3] = c3[l];
        }
    }
}

void kcs_rng_u32_n(kcs_rng *r, uint32_t *out, size_t n)
{
    size_t i = 0;
    while (i < n && r->avail > 0)
        out[i++] = kcs_rng_u32(r);
    size_t nb = (n - i) / 4, done = 0;
#if KCS_HAVE_PHILOX_AVX2
    if (nb >= 16 && __builtin_cpu_supports("avx2"))
        done = kcs_philox_blocks_avx2(r->ctr, r->key, nb, out + i);
#endif
    uint32_t c[4] = {r->ctr[0] + (uint32_t)done, r->ctr[1], r->ctr[2], r->ctr[3]};
    philox_blocks(c, r->key, nb - done, out + i + 4 * done);
    r->ctr[0] += (uint32_t)nb;
    i += 4 * nb;
    while (i < n)
        out[i++] = kcs_rng_u32(r);
}
