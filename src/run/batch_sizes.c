/* Batch sizes of protocol batch_invariance: see batch_sizes.h.
 *
 * Why these. A kernel that is not batch invariant picks its reduction
 * schedule from the batch size m (split-K under a row threshold, GEMV for
 * one row, a remainder path for the rows of a last partial tile). Such a
 * defect shows in row i of op(x[:b]) when row i is computed on one side
 * of the kernel's rule for b and on the other for the full m, and then
 * only if the two orders round that row differently, which with short
 * terms (bf16 inputs, k = 16) happens on a few percent of rows. So the
 * sizes must (1) fall on both sides of every threshold a kernel is likely
 * to use (every size up to 64, P - 1 and P for each power of two above),
 * (2) leave every remainder mod a small tile (every b <= 64 leaves every
 * remainder mod 2..64), and (3) put many distinct rows through a
 * b-dependent path: every b <= 64 puts 56 rows through the partial tile
 * of 8 and each P - 1 seven more; the drawn sizes reach rows of every
 * scale, log-uniformly so that they cost about m / ln(m / 64) rows each
 * rather than m / 2. */
#include "batch_sizes.h"

#include <math.h>

#include "rng.h"

static int add(int64_t *bs, int n, int cap, int64_t b)
{
    for (int i = 0; i < n; i++)
        if (bs[i] == b)
            return n;
    if (n < cap)
        bs[n++] = b;
    return n;
}

int kcs_batch_sizes(int64_t m, uint64_t seed, int64_t *bs, int cap)
{
    int n = 0;
    for (int64_t b = 1; b < m && b <= 64; b++)
        n = add(bs, n, cap, b);
    for (int64_t p = 128; p < m && p > 0; p *= 2) {
        n = add(bs, n, cap, p - 1);
        n = add(bs, n, cap, p);
    }
    if (m - 1 > 64)
        n = add(bs, n, cap, m - 1);
    if (m - 1 > 65) {
        kcs_rng r;
        kcs_rng_init(&r, seed, 0xba7c5, (uint64_t)m);
        double lo = log(65.0), span = log((double)(m - 1)) - lo;
        for (int i = 0; i < KCS_BATCH_SIZES_DRAWN; i++) {
            int64_t b = (int64_t)exp(lo + kcs_rng_uniform(&r) * span);
            if (b < 65)
                b = 65;
            if (b > m - 2)
                b = m - 2;
            n = add(bs, n, cap, b);
        }
    }
    return n;
}
