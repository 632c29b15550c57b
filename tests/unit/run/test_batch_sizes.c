/* The batch sizes of protocol batch_invariance (src/run/batch_sizes.c),
 * against their definition in batch_sizes.h and C-ORD-03's derivation:
 * every b <= 64, P - 1 and P for each power of two above 64, m - 1, and 8
 * sizes drawn log-uniformly in (64, m - 1) from the trial's seed. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "batch_sizes.h"
#include "unit_helpers.h"

static int has(const int64_t *bs, int n, int64_t b)
{
    for (int i = 0; i < n; i++)
        if (bs[i] == b)
            return 1;
    return 0;
}

static int in_range_no_repeats(const int64_t *bs, int n, int64_t m)
{
    for (int i = 0; i < n; i++) {
        if (bs[i] < 1 || bs[i] >= m)
            return 0;
        for (int j = 0; j < i; j++)
            if (bs[i] == bs[j])
                return 0;
    }
    return 1;
}

/* Up to m = 65 the drawn range is empty: every b < m, nothing else. */
static void test_small_m(void)
{
    int64_t bs[KCS_BATCH_SIZES_MAX];
    for (int64_t m = 1; m <= 65; m++) {
        int n = kcs_batch_sizes(m, 42, bs, KCS_BATCH_SIZES_MAX);
        CU_ASSERT_EQUAL(n, m - 1);
        CU_ASSERT(in_range_no_repeats(bs, n, m));
        for (int64_t b = 1; b < m; b++)
            CU_ASSERT(has(bs, n, b));
    }
}

static void test_large_m(void)
{
    int64_t bs[KCS_BATCH_SIZES_MAX];
    const int64_t ms[] = {66, 67, 100, 128, 129, 4096, 4097, 1048576, (int64_t)1 << 62};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        int64_t m = ms[i];
        int n = kcs_batch_sizes(m, 7 + i, bs, KCS_BATCH_SIZES_MAX);
        CU_ASSERT(n <= KCS_BATCH_SIZES_MAX);
        CU_ASSERT(in_range_no_repeats(bs, n, m));
        for (int64_t b = 1; b <= 64; b++)
            CU_ASSERT(has(bs, n, b));
        for (int64_t p = 128; p < m && p > 0; p *= 2)
            CU_ASSERT(has(bs, n, p - 1) && has(bs, n, p));
        CU_ASSERT(has(bs, n, m - 1));
        int above = 0; /* sizes in (64, m - 1) that are not P - 1 or P */
        for (int j = 0; j < n; j++) {
            int64_t b = bs[j];
            int pow2 = (b & (b - 1)) == 0 || ((b + 1) & b) == 0;
            above += b > 64 && b < m - 1 && !pow2;
        }
        CU_ASSERT(above <= KCS_BATCH_SIZES_DRAWN);
        if (m >= 4096)
            CU_ASSERT(above >= KCS_BATCH_SIZES_DRAWN - 2); /* repeats are rare there */
    }
}

/* The same seed gives the same sizes (the sweep's probe recomputes them);
 * another seed other drawn sizes. */
static void test_seeded(void)
{
    int64_t a[KCS_BATCH_SIZES_MAX], b[KCS_BATCH_SIZES_MAX], c[KCS_BATCH_SIZES_MAX];
    int na = kcs_batch_sizes(1 << 20, 99, a, KCS_BATCH_SIZES_MAX);
    int nb = kcs_batch_sizes(1 << 20, 99, b, KCS_BATCH_SIZES_MAX);
    int nc = kcs_batch_sizes(1 << 20, 100, c, KCS_BATCH_SIZES_MAX);
    CU_ASSERT_EQUAL(na, nb);
    for (int i = 0; i < na && i < nb; i++)
        CU_ASSERT_EQUAL(a[i], b[i]);
    int differ = 0;
    for (int i = 0; i < na; i++)
        differ += !has(c, nc, a[i]);
    CU_ASSERT(differ > 0);
}

/* Rows computed through a last partial tile of 8 by some prefix: at
 * m = 4096 (a multiple of 8: the full call has no partial tile) at least
 * the 56 of the sizes up to 64 and 7 per P - 1 (127 ... 4095). */
static void test_partial_tile_rows(void)
{
    int64_t bs[KCS_BATCH_SIZES_MAX];
    const int64_t m = 4096;
    unsigned char *row = calloc((size_t)m, 1);
    CU_ASSERT_FATAL(row != NULL);
    int n = kcs_batch_sizes(m, 5, bs, KCS_BATCH_SIZES_MAX), rows = 0;
    for (int i = 0; i < n; i++)
        for (int64_t r = bs[i] / 8 * 8; r < bs[i]; r++)
            rows += !row[r], row[r] = 1;
    CU_ASSERT(rows >= 56 + 6 * 7);
    free(row);
}

/* Log-uniform in (64, m - 1): the median drawn size is near
 * sqrt(65 (m - 2)), about 8 255 at m = 2^20 (a uniform draw: 524 000). */
static int cmp64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static void test_log_uniform(void)
{
    enum { SEEDS = 1000 };
    const int64_t m = 1 << 20;
    int64_t *d = malloc(SEEDS * KCS_BATCH_SIZES_DRAWN * sizeof *d), bs[KCS_BATCH_SIZES_MAX];
    CU_ASSERT_FATAL(d != NULL);
    int nd = 0;
    for (int s = 0; s < SEEDS; s++) {
        int n = kcs_batch_sizes(m, (uint64_t)s, bs, KCS_BATCH_SIZES_MAX);
        for (int i = 0; i < n; i++) {
            int64_t b = bs[i];
            int pow2 = (b & (b - 1)) == 0 || ((b + 1) & b) == 0;
            if (b > 64 && b < m - 1 && !pow2 && nd < SEEDS * KCS_BATCH_SIZES_DRAWN)
                d[nd++] = b;
        }
    }
    CU_ASSERT(nd > SEEDS * KCS_BATCH_SIZES_DRAWN * 9 / 10);
    qsort(d, (size_t)nd, sizeof *d, cmp64);
    double med = (double)d[nd / 2], want = sqrt(65.0 * (double)(m - 2));
    CU_ASSERT(med > want / 1.2 && med < want * 1.2);
    free(d);
}

static const ut_test tests[] = {
    {"m <= 65: every b < m", test_small_m},
    {"m > 65: sizes up to 64, powers of two, m - 1, drawn", test_large_m},
    {"drawn from the seed", test_seeded},
    {"rows through a partial tile of 8", test_partial_tile_rows},
    {"drawn log-uniformly", test_log_uniform},
};

UT_MAIN("batch_sizes", tests)
