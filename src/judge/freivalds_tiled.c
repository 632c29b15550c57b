/* The C reference of the tiled device Freivalds kernels: see
 * freivalds_tiled.h, and src/base/fv_tiled.h for the blocking. Each block's
 * threads are run in turn, each summing its columns into its own
 * accumulators exactly as the kernel's thread does (fma with +-1, |x|
 * added, x^2 and products fused; columns in the thread's order), then the
 * block's halving tree is applied to every accumulator. Compiled with
 * -ffp-contract=off (src/CMakeLists.txt): every fused operation is an
 * explicit fma(), as in the kernels (nvcc -fmad=false). */
#include "freivalds_tiled.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fv_tiled.h"

#define T KCS_FV2_THREADS
#define RB KCS_FV2_RB
#define FV_V1_THREADS 256 /* fv_norm_b's block (the v1 kernels') */

void kcs_freivalds_pack_probes(uint64_t seed, uint64_t stream, long n, int k, uint32_t *P)
{
    int nc = (k + 31) / 32;
    for (int c = 0; c < nc; c++)
        for (long l = 0; l < n; l++)
            P[(long)c * n + l] = kcs_fv2_probe_word(seed, stream, n, k, c, l);
}

/* The block's halving tree over part[t * stride + v], t < T, for v < nv;
 * the sums land in part[v]. */
static void fv2_tree(double *part, int nv, long stride, int threads)
{
    for (int s = threads / 2; s > 0; s >>= 1)
        for (int t = 0; t < s; t++)
            for (int v = 0; v < nv; v++)
                part[t * stride + v] += part[(t + s) * stride + v];
}

/* Sign pass over X (rows x L): y[r ys_r + j ys_j], xabs[r], xsq[r].
 * part: T * RB * (k + 2) doubles. */
static void fv2_sign_ref(const float *X, long rows, long L, const uint32_t *P, int k, double *y,
                         long ys_r, long ys_j, double *xabs, double *xsq, double *part)
{
    int na = k + 2, nv = RB * na;
    long G = (L + 3) / 4;
    for (long r0 = 0; r0 < rows; r0 += RB) {
        int rb = rows - r0 < RB ? (int)(rows - r0) : RB;
        memset(part, 0, sizeof(double) * (size_t)T * (size_t)nv);
        for (int t = 0; t < T; t++) {
            double *acc = part + (long)t * nv;
            for (long g = t; g < G; g += T)
                for (int c = 0; c < 4; c++) {
                    long l = 4 * g + c;
                    if (l >= L)
                        break;
                    for (int j = 0; j < k; j++) {
                        uint32_t w = P[(long)(j / 32) * L + l];
                        double s = (w >> (j % 32)) & 1u ? -1.0 : 1.0;
                        for (int r = 0; r < rb; r++)
                            acc[r * na + j] = fma((double)X[(r0 + r) * L + l], s, acc[r * na + j]);
                    }
                    for (int r = 0; r < rb; r++) {
                        double x = X[(r0 + r) * L + l];
                        acc[r * na + k] = acc[r * na + k] + fabs(x);
                        acc[r * na + k + 1] = fma(x, x, acc[r * na + k + 1]);
                    }
                }
        }
        fv2_tree(part, nv, nv, T);
        for (int r = 0; r < rb; r++) {
            for (int j = 0; j < k; j++)
                y[(r0 + r) * ys_r + (long)j * ys_j] = part[r * na + j];
            xabs[r0 + r] = part[r * na + k];
            xsq[r0 + r] = part[r * na + k + 1];
        }
    }
}

/* Value pass over A (m x K) with V[j K + p]: ya[i k + j], sab[i], na2[i]. */
static void fv2_value_ref(const float *A, long m, long K, const double *V, const double *beta,
                          int k, double *ya, double *sab, double *na2, double *part)
{
    int na = k + 2, nv = RB * na;
    long G = (K + 3) / 4;
    for (long r0 = 0; r0 < m; r0 += RB) {
        int rb = m - r0 < RB ? (int)(m - r0) : RB;
        memset(part, 0, sizeof(double) * (size_t)T * (size_t)nv);
        for (int t = 0; t < T; t++) {
            double *acc = part + (long)t * nv;
            for (long g = t; g < G; g += T)
                for (int c = 0; c < 4; c++) {
                    long p = 4 * g + c;
                    if (p >= K)
                        break;
                    for (int r = 0; r < rb; r++) {
                        double x = A[(r0 + r) * K + p];
                        for (int j = 0; j < k; j++)
                            acc[r * na + j] = fma(x, V[(long)j * K + p], acc[r * na + j]);
                        acc[r * na + k] = fma(fabs(x), beta[p], acc[r * na + k]);
                        acc[r * na + k + 1] = fma(x, x, acc[r * na + k + 1]);
                    }
                }
        }
        fv2_tree(part, nv, nv, T);
        for (int r = 0; r < rb; r++) {
            for (int j = 0; j < k; j++)
                ya[(r0 + r) * k + j] = part[r * na + j];
            sab[r0 + r] = part[r * na + k];
            na2[r0 + r] = part[r * na + k + 1];
        }
    }
}

int kcs_freivalds_tiled_terms(const float *A, const float *B, const float *C, long m, long kk,
                              long n, int k, uint64_t seed, uint64_t stream, double *terms,
                              kcs_error *err)
{
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    p.probes = k;
    int rc = kcs_freivalds_check_args(A, B, C, m, kk, n, &p, terms, err);
    if (rc)
        return rc;
    int nc = (k + 31) / 32;
    size_t part_n = (size_t)(T > FV_V1_THREADS ? T : FV_V1_THREADS) * RB * (size_t)(k + 2);
    uint32_t *P = malloc(sizeof(uint32_t) * (size_t)nc * (size_t)n);
    double *BRt = malloc(sizeof(double) * ((size_t)k * (size_t)kk + 2 * (size_t)kk));
    double *part = malloc(sizeof(double) * part_n);
    if (!P || !BRt || !part) {
        free(P), free(BRt), free(part);
        return kcs_fail(err, KCS_E_NOMEM, "freivalds (tiled reference): out of memory");
    }
    double *beta = BRt + (long)k * kk, *sqB = beta + kk;
    double *ya = terms, *yc = terms + m * k, *sab = terms + 2 * m * k;
    double *na2 = sab + m, *sc = na2 + m, *nc2 = sc + m;
    kcs_freivalds_pack_probes(seed, stream, n, k, P);
    fv2_sign_ref(B, kk, n, P, k, BRt, 1, kk, beta, sqB, part);
    fv2_sign_ref(C, m, n, P, k, yc, k, 1, sc, nc2, part);
    fv2_value_ref(A, m, kk, BRt, beta, k, ya, sab, na2, part);
    /* |B|_F^2: fv_norm_b's one block of 256 threads, strided, then its tree */
    for (int t = 0; t < FV_V1_THREADS; t++) {
        double s = 0;
        for (long q = t; q < kk; q += FV_V1_THREADS)
            s += sqB[q];
        part[t] = s;
    }
    fv2_tree(part, 1, 1, FV_V1_THREADS);
    terms[2 * m * k + 4 * m] = part[0];
    free(P), free(BRt), free(part);
    return 0;
}

int kcs_freivalds_verify_tiled(const float *A, const float *B, const float *C, long m, long kk,
                               long n, const kcs_fv_params *p, const kcs_fv_detail *detail,
                               kcs_fv_result *res_p, kcs_error *err)
{
    int rc = kcs_freivalds_check_args(A, B, C, m, kk, n, p, res_p, err);
    if (rc)
        return rc;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int k = p->probes;
    size_t nt = 2 * (size_t)m * (size_t)k + 4 * (size_t)m + 1;
    double *terms = malloc(sizeof(double) * nt);
    if (!terms)
        return kcs_fail(err, KCS_E_NOMEM, "freivalds (tiled reference): out of memory");
    rc = kcs_freivalds_tiled_terms(A, B, C, m, kk, n, k, p->seed, p->stream, terms, err);
    kcs_fv_result res;
    if (!rc) {
        const double *ya = terms, *yc = ya + (size_t)m * k, *sab = yc + (size_t)m * k;
        const double *na2 = sab + m, *sc = na2 + m, *nc2 = sc + m;
        rc = kcs_freivalds_finish(ya, yc, sab, na2, sc, nc2, nc2[m], m, kk, n, p, detail, &res,
                                  err);
    }
    free(terms);
    if (rc)
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    *res_p = res;
    return 0;
}
