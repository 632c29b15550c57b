/* kcs bench freivalds --backend B: the device Freivalds check (the backend's
 * ops-table freivalds slot: terms kernels on the GPU, thresholds and verdict
 * on the host) against the backend's native fp32 GEMM on device data (its
 * sgemm_seconds slot: cuBLAS for cuda), side by side at each n.
 *
 * A is filled with normal values; B is a signed permutation, so C = A B is
 * exact and is built on the host in O(n^2) (a host sgemm at n = 32768 would
 * take minutes): the check's kernels are dense, so their time does not
 * depend on B's values, and a conforming C must pass. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bench_util.h"
#include "freivalds.h"
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
    printf("\n== device cost on %s:%d: native sgemm vs the device Freivalds check "
           "(terms kernels + host finish; uploads not counted), medians of %ld ==\n",
           backend, device, reps);
    printf("(B is a signed permutation: C = A B is exact; the kernels are dense, so the "
           "timing does not depend on B's values)\n");
    printf("%6s %4s %11s %11s %11s %8s %5s\n", "n", "k", "sgemm_ms", "verify_rig", "verify_prob",
           "ratio%", "pass");
    for (int si = 0; si < ns; si++) {
        long n = sizes[si];
        size_t nn = (size_t)n * (size_t)n;
        float *A = malloc(sizeof(float) * nn), *B = calloc(nn, sizeof(float));
        float *C = malloc(sizeof(float) * nn);
        double *tr = calloc((size_t)reps, sizeof(double)), *tp = calloc((size_t)reps, sizeof(double));
        if (!A || !B || !C || !tr || !tp) {
            fprintf(stderr, "kcs bench freivalds: out of memory at n=%ld\n", n);
            free(A), free(B), free(C), free(tr), free(tp);
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
            free(A), free(B), free(C), free(tr), free(tp);
            return 1;
        }
        for (int ki = 0; ki < nk; ki++) {
            int pass = 1;
            for (long r = 0; r < reps; r++)
                for (int mode = 0; mode < 2; mode++) {
                    kcs_fv_params p;
                    kcs_fv_params_default(&p);
                    p.probes = (int)ks[ki];
                    p.threads = nt;
                    p.stream = (uint64_t)r;
                    p.mode = (kcs_fv_mode)mode;
                    kcs_fv_result res;
                    if (ops->freivalds(device, A, B, C, n, n, n, &p, NULL, &res, &err)) {
                        fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
                        free(A), free(B), free(C), free(tr), free(tp);
                        return 1;
                    }
                    (mode ? tp : tr)[r] = res.seconds;
                    pass = pass && res.pass;
                }
            double mr = kcs_bench_median(tr, (int)reps, NULL);
            double mp = kcs_bench_median(tp, (int)reps, NULL);
            printf("%6ld %4ld %11.2f %11.2f %11.2f %8.3f %5s\n", n, ks[ki], tg * 1e3, mr * 1e3,
                   mp * 1e3, 100 * fmax(mr, mp) / tg, pass ? "yes" : "NO");
            fflush(stdout);
        }
        free(A), free(B), free(C), free(tr), free(tp);
    }
    return 0;
}
