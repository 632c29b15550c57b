/* kcs bench freivalds --backend B: the device Freivalds check (the backend's
 * ops-table freivalds slot: terms kernels on the GPU, thresholds and verdict
 * on the host) against the backend's native fp32 GEMM on device data (its
 * sgemm_seconds slot: cuBLAS for cuda), side by side at each n.
 *
 * A is filled with normal values; B is a signed permutation, so C = A B is
 * exact and is built on the host in O(n^2) (a host sgemm at n = 32768 would
 * take minutes): the check's kernels are dense, so their time does not
 * depend on B's values, and a conforming C must pass.
 *
 * Both device kernels are timed side by side: v1 (the per-row kernels of
 * the first device run) and the tiled v2 (backends/cuda/freivalds_tiled.cuh).
 * Before timing, v2's outputs are compared bit for bit with its C reference
 * (src/arith/freivalds_tiled.c) at shapes that take every path (odd sizes:
 * the scalar loads and a partial row block; multiples of 4: the vector
 * loads; k = 20: two probe sweeps): the device run confirms what the host
 * tests of the reference established. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bench_util.h"
#include "freivalds.h"
#include "freivalds_tiled.h"
#include "rng.h"

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Fill a small conforming product: A, B with few-bit values, C = A B exactly. */
static void conf_fill(float *A, float *B, float *C, long m, long kk, long n, uint64_t seed)
{
    kcs_rng rng;
    kcs_rng_init(&rng, seed, 47, 0);
    for (long i = 0; i < m * kk; i++)
        A[i] = (float)((int)(kcs_rng_u32(&rng) % 33) - 16) / 16.0f;
    for (long i = 0; i < kk * n; i++)
        B[i] = (float)((int)(kcs_rng_u32(&rng) % 33) - 16) / 16.0f;
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++) {
            double acc = 0; /* |terms| <= 1, multiples of 2^-8: exact in fp64 */
            for (long p = 0; p < kk; p++)
                acc += (double)A[i * kk + p] * (double)B[p * n + j];
            C[i * n + j] = (float)acc;
        }
}

/* Device v2 against the C reference: every detail array bit for bit.
 * Returns the number of shapes that differ (printed), or -1 on an error. */
static int confirm_v2(const kcs_backend_ops *ops, int device)
{
    static const long shapes[][4] = {{37, 1001, 999, 10}, {64, 1024, 1024, 10},
                                     {130, 515, 258, 20}, {9, 33, 19, 1}};
    int bad = 0;
    printf("\n== tiled kernels (v2) on the device vs their C reference, bit for bit ==\n");
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        long m = shapes[si][0], kk = shapes[si][1], n = shapes[si][2];
        int k = (int)shapes[si][3];
        float *A = malloc(sizeof(float) * (size_t)(m * kk)), *B = malloc(sizeof(float) * (size_t)(kk * n));
        float *C = malloc(sizeof(float) * (size_t)(m * n));
        size_t nd = 4 * (size_t)m + 2 * (size_t)(m * k);
        double *d[2] = {calloc(nd, sizeof(double)), calloc(nd, sizeof(double))};
        if (!A || !B || !C || !d[0] || !d[1]) {
            free(A), free(B), free(C), free(d[0]), free(d[1]);
            fprintf(stderr, "kcs bench freivalds: out of memory\n");
            return -1;
        }
        conf_fill(A, B, C, m, kk, n, (uint64_t)si);
        C[(m / 2) * n + n / 3] += 0.5f; /* one corrupted element: a non-trivial residual */
        kcs_fv_params p;
        kcs_fv_params_default(&p);
        p.probes = k;
        p.stream = (uint64_t)si;
        kcs_fv_result res[2];
        kcs_error err = {0};
        int rc = 0;
        for (int w = 0; w < 2 && !rc; w++) {
            double *b = d[w];
            kcs_fv_detail det = {.row_ratio = b, .row_thresh_rig = b + m,
                                 .row_thresh_prob = b + 2 * m, .row_resid = b + 3 * m,
                                 .resid = b + 4 * m, .cr = b + 4 * m + m * k};
            rc = w ? kcs_freivalds_verify_tiled(A, B, C, m, kk, n, &p, &det, &res[w], &err)
                   : ops->freivalds(device, A, B, C, m, kk, n, &p, &det, &res[w], &err);
        }
        if (rc) {
            fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
            free(A), free(B), free(C), free(d[0]), free(d[1]);
            return -1;
        }
        size_t diff = 0;
        for (size_t i = 0; i < nd; i++)
            diff += memcmp(&d[0][i], &d[1][i], sizeof(double)) != 0;
        printf("%5ld x %5ld x %5ld  k = %3d: %s (%zu of %zu values differ; verdict device %s, "
               "reference %s)\n", m, kk, n, k, diff ? "DIFFERENT" : "identical", diff, nd,
               res[0].pass ? "pass" : "fail", res[1].pass ? "pass" : "fail");
        bad += diff != 0 || res[0].pass != res[1].pass;
        free(A), free(B), free(C), free(d[0]), free(d[1]);
    }
    fflush(stdout);
    return bad;
}

int kcs_bench_freivalds_device(const char *backend, int device, const long *sizes, int ns,
                               const long *ks, int nk, long reps, int nt)
{
    const kcs_backend_ops *ops = kcs_backend_find(backend);
    if (!ops) {
        fprintf(stderr, "kcs bench freivalds: backend %s is %s\n", backend,
                kcs_backend_why(backend));
        return 2;
    }
    if (!ops->freivalds || !ops->sgemm_seconds) {
        fprintf(stderr, "kcs bench freivalds: backend %s has no device Freivalds check%s\n",
                backend, ops->freivalds ? " timing (no sgemm_seconds)" : "");
        return 2;
    }
    kcs_device_info info[KCS_MAX_DEVICES];
    int count = 0;
    kcs_error derr = {0};
    if (ops->discover(info, KCS_MAX_DEVICES, &count, &derr) != 0 || device < 0 ||
        device >= count) {
        fprintf(stderr, "kcs bench freivalds: %s\n",
                derr.msg[0] ? derr.msg : "no such device index");
        return 1;
    }
    printf("device: %s | %s | arch %s | driver %s | runtime %s\n", info[device].vendor,
           info[device].model, info[device].arch, info[device].driver, info[device].runtime);
    int bad = confirm_v2(ops, device);
    if (bad < 0)
        return 1;
    printf("\n== device cost on %s:%d: native sgemm vs the device Freivalds check "
           "(terms kernels + host finish; uploads not counted), medians of %ld; "
           "v1: per-row kernels, v2: tiled ==\n",
           backend, device, reps);
    printf("(B is a signed permutation: C = A B is exact; the kernels are dense, so the "
           "timing does not depend on B's values)\n");
    printf("%6s %4s %11s %9s %9s %9s %8s %8s %5s\n", "n", "k", "sgemm_ms", "v1_rig", "v2_rig",
           "v2_prob", "v1%", "v2%", "pass");
    for (int si = 0; si < ns; si++) {
        long n = sizes[si];
        size_t nn = (size_t)n * (size_t)n;
        float *A = malloc(sizeof(float) * nn), *B = calloc(nn, sizeof(float));
        float *C = malloc(sizeof(float) * nn);
        double *tr = calloc((size_t)reps, sizeof(double)), *tp = calloc((size_t)reps, sizeof(double));
        double *t1 = calloc((size_t)reps, sizeof(double));
        if (!A || !B || !C || !tr || !tp || !t1) {
            fprintf(stderr, "kcs bench freivalds: out of memory at n=%ld\n", n);
            free(A), free(B), free(C), free(tr), free(tp), free(t1);
            return 1;
        }
        kcs_rng rng;
        kcs_rng_init(&rng, 20261201, (uint64_t)n, 0);
        for (size_t i = 0; i < nn; i++)
            A[i] = (float)kcs_rng_normal(&rng);
        long mult = 40503;
        while (gcd(mult, n) != 1)
            mult += 2;
        for (long j = 0; j < n; j++) { /* B[pi(j)][j] = s_j */
            long pj = (long)(((int64_t)j * mult + 7) % n);
            float sj = (j % 3 == 0) ? -1.0f : 1.0f;
            B[(size_t)pj * (size_t)n + (size_t)j] = sj;
            for (long r = 0; r < n; r++)
                C[(size_t)r * (size_t)n + (size_t)j] = sj * A[(size_t)r * (size_t)n + (size_t)pj];
        }
        kcs_error err = {0};
        double tg = 0;
        if (ops->sgemm_seconds(device, n, n, n, 5, &tg, &err)) {
            fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
            free(A), free(B), free(C), free(tr), free(tp), free(t1);
            return 1;
        }
        for (int ki = 0; ki < nk; ki++) {
            int pass = 1;
            for (long r = 0; r < reps; r++)
                for (int run = 0; run < 3; run++) { /* v1 rigorous, v2 rigorous, v2 prob */
                    kcs_fv_params p;
                    kcs_fv_params_default(&p);
                    p.probes = (int)ks[ki];
                    p.threads = nt;
                    p.stream = (uint64_t)r;
                    p.mode = run == 2 ? KCS_FV_PROBABILISTIC : KCS_FV_RIGOROUS;
                    p.device_kernel = run == 0 ? 1 : 0;
                    kcs_fv_result res;
                    if (ops->freivalds(device, A, B, C, n, n, n, &p, NULL, &res, &err)) {
                        fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
                        free(A), free(B), free(C), free(tr), free(tp), free(t1);
                        return 1;
                    }
                    (run == 0 ? t1 : run == 1 ? tr : tp)[r] = res.seconds;
                    pass = pass && res.pass;
                }
            double m1 = kcs_bench_median(t1, (int)reps, NULL);
            double mr = kcs_bench_median(tr, (int)reps, NULL);
            double mp = kcs_bench_median(tp, (int)reps, NULL);
            printf("%6ld %4ld %11.2f %9.3f %9.3f %9.3f %8.3f %8.3f %5s\n", n, ks[ki], tg * 1e3,
                   m1 * 1e3, mr * 1e3, mp * 1e3, 100 * m1 / tg, 100 * fmax(mr, mp) / tg,
                   pass ? "yes" : "NO");
            fflush(stdout);
        }
        free(A), free(B), free(C), free(tr), free(tp), free(t1);
    }
    if (bad)
        fprintf(stderr, "kcs bench freivalds: the tiled kernels' terms differ from their C "
                        "reference at %d shape(s) (above)\n", bad);
    return bad ? 1 : 0;
}
