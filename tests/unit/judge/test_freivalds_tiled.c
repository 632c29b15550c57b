/* The C reference of the tiled device Freivalds kernels
 * (src/arith/freivalds_tiled.c, the algorithm of src/base/fv_tiled.h)
 * against the CPU verifier kcs_freivalds_verify (src/arith/freivalds.c):
 * - the packed sign words hold exactly the CPU's probes;
 * - on data whose every partial sum is exact in fp64 the two give bitwise
 *   the same residuals, CR and thresholds (any summation order gives the
 *   exact sums there, so a dropped, doubled or mis-signed element, a wrong
 *   probe column or a wrong row shows up), at shapes that take every path
 *   of the blocking: rows not a multiple of the row block, row lengths not
 *   a multiple of 4, more column groups than threads, more than 32 probes;
 * - on normal data the two differ by at most the check-error bound of
 *   freivalds.c (gamma_{K+n}(2^-53)), with the same verdicts;
 * - a corruption the CPU catches, the reference catches, at the same row. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "freivalds.h"
#include "freivalds_tiled.h"
#include "rng.h"
#include "unit_helpers.h"

/* A, B: multiples of 2^-4 in [-1, 1]; C = A B exactly (|sums| < 2^24 ulps). */
static void fill_exact(float *A, float *B, float *C, long m, long kk, long n, uint64_t seed)
{
    kcs_rng r;
    kcs_rng_init(&r, seed, 1, 2);
    for (long i = 0; i < m * kk; i++)
        A[i] = (float)((int)(kcs_rng_u32(&r) % 33) - 16) / 16.0f;
    for (long i = 0; i < kk * n; i++)
        B[i] = (float)((int)(kcs_rng_u32(&r) % 33) - 16) / 16.0f;
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++) {
            double acc = 0;
            for (long p = 0; p < kk; p++)
                acc += (double)A[i * kk + p] * (double)B[p * n + j];
            C[i * n + j] = (float)acc;
        }
}

typedef struct both {
    double *ratio, *rig, *prob, *rres, *resid, *cr;
} both;

static void detail_alloc(both *b, long m, int k, kcs_fv_detail *d)
{
    b->ratio = calloc((size_t)m, sizeof(double));
    b->rig = calloc((size_t)m, sizeof(double));
    b->prob = calloc((size_t)m, sizeof(double));
    b->rres = calloc((size_t)m, sizeof(double));
    b->resid = calloc((size_t)(m * k), sizeof(double));
    b->cr = calloc((size_t)(m * k), sizeof(double));
    *d = (kcs_fv_detail){.row_ratio = b->ratio, .row_thresh_rig = b->rig,
                         .row_thresh_prob = b->prob, .row_resid = b->rres,
                         .resid = b->resid, .cr = b->cr};
}

static void detail_free(both *b)
{
    free(b->ratio), free(b->rig), free(b->prob), free(b->rres), free(b->resid), free(b->cr);
}

static void test_probe_packing(void)
{
    static const long nk[][2] = {{1, 1}, {31, 3}, {33, 32}, {100, 33}, {257, 256}, {64, 10}};
    for (size_t t = 0; t < sizeof nk / sizeof nk[0]; t++) {
        long n = nk[t][0];
        int k = (int)nk[t][1], nc = (k + 31) / 32;
        double *Rt = malloc(sizeof(double) * (size_t)(n * k));
        uint32_t *P = malloc(sizeof(uint32_t) * (size_t)(nc * n));
        kcs_freivalds_probes(0x5eed + t, 7 * t, n, k, Rt);
        kcs_freivalds_pack_probes(0x5eed + t, 7 * t, n, k, P);
        long bad = 0, minus = 0;
        for (int j = 0; j < k; j++)
            for (long l = 0; l < n; l++) {
                int bit = (P[(long)(j / 32) * n + l] >> (j % 32)) & 1;
                bad += bit != (Rt[(long)j * n + l] < 0);
                minus += bit;
            }
        /* bits of probes past k stay 0 */
        for (long l = 0; l < n && k % 32; l++)
            bad += (P[(long)(nc - 1) * n + l] >> (k % 32)) != 0;
        CU_ASSERT_EQUAL(bad, 0);
        if (n * k >= 64) /* both signs occur */
            CU_ASSERT(minus > 0 && minus < n * k);
        free(Rt), free(P);
    }
}

/* shapes (m, kk, n, k) covering the blocking's paths */
static const long shapes[][4] = {
    {1, 1, 1, 1},        /* one element */
    {5, 7, 9, 3},        /* partial row block, lengths not multiples of 4 */
    {8, 16, 12, 10},     /* whole row blocks, 16-byte groups */
    {13, 1030, 514, 17}, /* more column groups than threads; two probe sweeps */
    {6, 3, 600, 33},     /* two probe words */
};

static void test_exact_data_bitwise(void)
{
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        long m = shapes[s][0], kk = shapes[s][1], n = shapes[s][2];
        int k = (int)shapes[s][3];
        float *A = malloc(sizeof(float) * (size_t)(m * kk));
        float *B = malloc(sizeof(float) * (size_t)(kk * n));
        float *C = malloc(sizeof(float) * (size_t)(m * n));
        fill_exact(A, B, C, m, kk, n, 100 + s);
        C[(m - 1) * n + n / 2] += 4096.0f; /* a residual in the last row, above every T_i */
        for (int mode = 0; mode < 2; mode++) {
            kcs_fv_params p;
            kcs_fv_params_default(&p);
            p.probes = k;
            p.stream = s;
            p.mode = (kcs_fv_mode)mode;
            p.threads = 1;
            both b0, b1;
            kcs_fv_detail d0, d1;
            detail_alloc(&b0, m, k, &d0);
            detail_alloc(&b1, m, k, &d1);
            kcs_fv_result r0, r1;
            kcs_error err = {0};
            CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &d0, &r0, &err), 0);
            CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, &d1, &r1, &err),
                                  0);
            CU_ASSERT(memcmp(b0.resid, b1.resid, sizeof(double) * (size_t)(m * k)) == 0);
            CU_ASSERT(memcmp(b0.cr, b1.cr, sizeof(double) * (size_t)(m * k)) == 0);
            CU_ASSERT(memcmp(b0.rig, b1.rig, sizeof(double) * (size_t)m) == 0);
            CU_ASSERT(memcmp(b0.prob, b1.prob, sizeof(double) * (size_t)m) == 0);
            CU_ASSERT_EQUAL(r0.pass, r1.pass);
            CU_ASSERT(!r1.pass);
            CU_ASSERT_EQUAL(r0.worst_row, r1.worst_row);
            CU_ASSERT_EQUAL(r1.worst_row, m - 1);
            CU_ASSERT_EQUAL(r0.tau, r1.tau);
            detail_free(&b0), detail_free(&b1);
        }
        /* nb2, the last term, is |B|_F^2 (exact here) */
        size_t nt = 2 * (size_t)(m * k) + 4 * (size_t)m + 1;
        double *terms = malloc(sizeof(double) * nt), nb2 = 0;
        kcs_error err = {0};
        CU_ASSERT_EQUAL(kcs_freivalds_tiled_terms(A, B, C, m, kk, n, k, 1, 2, terms, &err), 0);
        for (long i = 0; i < kk * n; i++)
            nb2 += (double)B[i] * B[i];
        CU_ASSERT_EQUAL(terms[nt - 1], nb2);
        free(terms), free(A), free(B), free(C);
    }
}

static double gam(double nn)
{
    double nu = nn * 0x1.0p-53;
    return nu / (1 - nu);
}

static void test_normal_data_within_bound(void)
{
    for (size_t s = 1; s < sizeof shapes / sizeof shapes[0]; s++) {
        long m = shapes[s][0], kk = shapes[s][1], n = shapes[s][2];
        int k = (int)shapes[s][3];
        float *A = malloc(sizeof(float) * (size_t)(m * kk));
        float *B = malloc(sizeof(float) * (size_t)(kk * n));
        float *C = malloc(sizeof(float) * (size_t)(m * n));
        kcs_rng r;
        kcs_rng_init(&r, 9, s, 0);
        for (long i = 0; i < m * kk; i++)
            A[i] = (float)kcs_rng_normal(&r);
        for (long i = 0; i < kk * n; i++)
            B[i] = (float)kcs_rng_normal(&r);
        for (long i = 0; i < m; i++) /* C = A B by recursive fp32 sums: conforming */
            for (long j = 0; j < n; j++) {
                float acc = 0;
                for (long p = 0; p < kk; p++)
                    acc = acc + A[i * kk + p] * B[p * n + j];
                C[i * n + j] = acc;
            }
        kcs_fv_params p;
        kcs_fv_params_default(&p);
        p.probes = k;
        p.threads = 1;
        both b0, b1;
        kcs_fv_detail d0, d1;
        detail_alloc(&b0, m, k, &d0);
        detail_alloc(&b1, m, k, &d1);
        kcs_fv_result r0, r1;
        kcs_error err = {0};
        CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &d0, &r0, &err), 0);
        CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, &d1, &r1, &err), 0);
        CU_ASSERT(r0.pass && r1.pass);
        long over = 0;
        for (long i = 0; i < m; i++) {
            double sab = 0, sc = 0; /* (|A| beta)_i and (|C| 1)_i, to 1e-12 */
            for (long q = 0; q < kk; q++) {
                double beta = 0;
                for (long l = 0; l < n; l++)
                    beta += fabs(B[q * n + l]);
                sab += fabs(A[i * kk + q]) * beta;
            }
            for (long l = 0; l < n; l++)
                sc += fabs(C[i * n + l]);
            double bc = 1.01 * 2 * gam((double)n) * sc;
            double br = 1.01 * 2 * (gam((double)(kk + n)) * sab + gam((double)n) * sc);
            for (int j = 0; j < k; j++) {
                long q = i * k + j;
                over += fabs(b0.cr[q] - b1.cr[q]) > bc;
                over += fabs(b0.resid[q] - b1.resid[q]) >
                        br + 0x1.0p-52 * (fabs(b0.resid[q]) + fabs(b1.resid[q]));
            }
            over += fabs(b0.rig[i] - b1.rig[i]) > 1e-12 * b0.rig[i];
        }
        CU_ASSERT_EQUAL(over, 0);
        detail_free(&b0), detail_free(&b1);
        free(A), free(B), free(C);
    }
}

static void test_corruption_caught(void)
{
    long m = 11, kk = 300, n = 77;
    float *A = malloc(sizeof(float) * (size_t)(m * kk));
    float *B = malloc(sizeof(float) * (size_t)(kk * n));
    float *C = malloc(sizeof(float) * (size_t)(m * n));
    fill_exact(A, B, C, m, kk, n, 5);
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    double thr[11];
    kcs_fv_detail d = {.row_thresh_rig = thr};
    kcs_fv_result r0, r1;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, &d, &r1, &err), 0);
    CU_ASSERT(r1.pass);
    C[7 * n + 40] += (float)(10 * thr[7]); /* 10 thresholds: caught with certainty */
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &r0, &err), 0);
    CU_ASSERT_EQUAL(kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, NULL, &r1, &err), 0);
    CU_ASSERT(!r0.pass && !r1.pass);
    CU_ASSERT_EQUAL(r1.worst_row, 7);
    CU_ASSERT_EQUAL(r0.worst_row, r1.worst_row);
    /* bad arguments: the CPU verifier's messages, nothing written */
    kcs_fv_result keep = r1;
    p.probes = 0;
    CU_ASSERT_EQUAL(kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, NULL, &r1, &err),
                    KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "probes") != NULL);
    CU_ASSERT(memcmp(&keep, &r1, sizeof keep) == 0);
    p.probes = 10;
    p.device_kernel = 2;
    CU_ASSERT_EQUAL(kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, NULL, &r1, &err),
                    KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "device kernel") != NULL);
    free(A), free(B), free(C);
}

static const ut_test tests[] = {
    {"packed sign words hold the CPU's probes", test_probe_packing},
    {"exact data: bitwise the CPU verifier's outputs", test_exact_data_bitwise},
    {"normal data: within the check-error bound", test_normal_data_within_bound},
    {"corruption caught at the same row; bad arguments", test_corruption_caught},
};

UT_MAIN("freivalds_tiled", tests)
