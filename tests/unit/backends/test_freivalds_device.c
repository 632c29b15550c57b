/* The device Freivalds verifiers (backends/freivalds_device.h) on any
 * machine: the lookup names a verifier exactly for the GPU backends
 * compiled in (KCS_HAVE_CUDA / KCS_HAVE_HIP), bad arguments are refused
 * with the CPU verifier's messages before any device call, a machine or
 * index without a device answers KCS_E_NODEV ("<backend>: no device ...")
 * and no output is written on failure. Where a device exists, the verdict
 * is compared with kcs_freivalds_verify's on a conforming and a corrupted
 * product (that part needs a GPU and runs only where there is one). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "freivalds.h"
#include "freivalds_device.h"
#include "unit_helpers.h"

#define M 7
#define KK 33
#define N 19
#define FAR_DEVICE (1 << 20) /* no machine has this many devices */

typedef struct gpu_case {
    const char *name;
    int built;          /* KCS_HAVE_<X> */
    kcs_fv_device_fn fn; /* the module's freivalds slot (set in main), NULL if none */
} gpu_case;

static gpu_case gpus[] = {
#ifdef KCS_HAVE_CUDA
    {"cuda", 1, NULL},
#else
    {"cuda", 0, NULL},
#endif
#ifdef KCS_HAVE_HIP
    {"hip", 1, NULL},
#else
    {"hip", 0, NULL},
#endif
};
#define N_GPUS (sizeof gpus / sizeof gpus[0])

static float A[M * KK], B[KK * N], C[M * N];

/* Small exact values (multiples of 1/8 in [-1, 1]) and C = A B by recursive
 * fp32 summation: a conforming fp32 GEMM. */
static void fill_product(float *a, float *b, float *c, long m, long kk, long n)
{
    for (long i = 0; i < m * kk; i++)
        a[i] = (float)((i * 37) % 17 - 8) / 8.0f;
    for (long i = 0; i < kk * n; i++)
        b[i] = (float)((i * 11) % 13 - 6) / 8.0f;
    for (long i = 0; i < m; i++)
        for (long l = 0; l < n; l++) {
            float acc = 0;
            for (long p = 0; p < kk; p++)
                acc = acc + a[i * kk + p] * b[p * n + l];
            c[i * n + l] = acc;
        }
}

static void fill(void)
{
    fill_product(A, B, C, M, KK, N);
}

static void sentinel(kcs_fv_result *r)
{
    memset(r, 0xA5, sizeof *r);
}

static int untouched(const kcs_fv_result *r)
{
    kcs_fv_result s;
    sentinel(&s);
    return memcmp(r, &s, sizeof s) == 0;
}

static int nodev_message(const char *name, const char *msg)
{
    size_t nl = strlen(name);
    return strncmp(msg, name, nl) == 0 && msg[nl] == ':' && strstr(msg, "no device") != NULL;
}

static void test_lookup(void)
{
    for (size_t g = 0; g < N_GPUS; g++) {
        /* a GPU backend built has a verifier, reached through its module */
        CU_ASSERT_EQUAL(gpus[g].fn != NULL, gpus[g].built);
        const kcs_backend_ops *o = kcs_backend_find(gpus[g].name);
        CU_ASSERT(kcs_freivalds_device(gpus[g].name) == (o ? o->freivalds : NULL));
    }
    CU_ASSERT_PTR_NULL(kcs_freivalds_device("cpu"));
    CU_ASSERT_PTR_NULL(kcs_freivalds_device("opencl"));
    CU_ASSERT_PTR_NULL(kcs_freivalds_device("level_zero"));
    CU_ASSERT_PTR_NULL(kcs_freivalds_device("CUDA")); /* exact names only */
    CU_ASSERT_PTR_NULL(kcs_freivalds_device("cuda "));
    CU_ASSERT_PTR_NULL(kcs_freivalds_device(""));
    CU_ASSERT_PTR_NULL(kcs_freivalds_device(NULL));
}

/* One bad-argument case: the shared check and every compiled verifier
 * answer KCS_E_INVAL with kcs_freivalds_verify's message, on a device index
 * that does not exist (so a device call made first would answer NODEV),
 * and leave the result alone. */
static void bad_case(const float *a, const float *b, const float *c, long m, long kk, long n,
                     const kcs_fv_params *p, int null_res)
{
    kcs_error ecpu = {0};
    kcs_fv_result rcpu;
    sentinel(&rcpu);
    CU_ASSERT_EQUAL(kcs_freivalds_verify(a, b, c, m, kk, n, p, NULL, null_res ? NULL : &rcpu,
                                         &ecpu),
                    KCS_E_INVAL);
    CU_ASSERT(untouched(&rcpu));

    kcs_error eh = {0};
    size_t na = 1234, nb = 1234, nc = 1234;
    kcs_fv_result rh;
    sentinel(&rh);
    CU_ASSERT_EQUAL(kcs_fv_device_args(a, b, c, m, kk, n, p, null_res ? NULL : &rh, &na, &nb,
                                       &nc, &eh),
                    KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(eh.msg, ecpu.msg);
    CU_ASSERT(na == 1234 && nb == 1234 && nc == 1234);

    for (size_t g = 0; g < N_GPUS; g++) {
        if (!gpus[g].fn)
            continue;
        kcs_error e = {0};
        kcs_fv_result r;
        sentinel(&r);
        int rc = gpus[g].fn(FAR_DEVICE, a, b, c, m, kk, n, p, NULL, null_res ? NULL : &r, &e);
        CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
        CU_ASSERT_EQUAL(e.code, KCS_E_INVAL);
        CU_ASSERT_STRING_EQUAL(e.msg, ecpu.msg);
        CU_ASSERT(untouched(&r));
    }
}

static void test_bad_args(void)
{
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    bad_case(NULL, B, C, M, KK, N, &p, 0);
    bad_case(A, NULL, C, M, KK, N, &p, 0);
    bad_case(A, B, NULL, M, KK, N, &p, 0);
    bad_case(A, B, C, M, KK, N, NULL, 0);
    bad_case(A, B, C, M, KK, N, &p, 1);
    bad_case(A, B, C, 0, KK, N, &p, 0);
    bad_case(A, B, C, M, 0, N, &p, 0);
    bad_case(A, B, C, M, KK, -3, &p, 0);
    p.probes = 0;
    bad_case(A, B, C, M, KK, N, &p, 0);
    p.probes = KCS_FV_MAX_PROBES + 1;
    bad_case(A, B, C, M, KK, N, &p, 0);
    kcs_fv_params_default(&p);
    p.u_acc = 1;
    bad_case(A, B, C, M, KK, N, &p, 0);
    kcs_fv_params_default(&p);
    p.fail_prob = -0.5;
    bad_case(A, B, C, M, KK, N, &p, 0);
    kcs_fv_params_default(&p);
    p.mode = (kcs_fv_mode)7;
    bad_case(A, B, C, M, KK, N, &p, 0);
}

/* The element counts, and shapes whose buffers would overflow. */
static void test_sizes(void)
{
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    kcs_fv_result r;
    kcs_error e = {0};
    size_t na = 0, nb = 0, nc = 0;
    CU_ASSERT_EQUAL(kcs_fv_device_args(A, B, C, M, KK, N, &p, &r, &na, &nb, &nc, &e), 0);
    CU_ASSERT_EQUAL(na, (size_t)M * KK);
    CU_ASSERT_EQUAL(nb, (size_t)KK * N);
    CU_ASSERT_EQUAL(nc, (size_t)M * N);

    /* 2^32 x 2^32: 2^64 elements of A, far past any size_t or int64 */
    long big = 1L << 32;
    const long shapes[][3] = {{big, big, 1}, {1, big, big}, {big, 1, big}};
    for (int s = 0; s < 3; s++) {
        kcs_error eb = {0};
        na = nb = nc = 1234;
        CU_ASSERT_EQUAL(kcs_fv_device_args(A, B, C, shapes[s][0], shapes[s][1], shapes[s][2], &p,
                                           &r, &na, &nb, &nc, &eb),
                        KCS_E_INVAL);
        CU_ASSERT(strstr(eb.msg, "too large") != NULL);
        CU_ASSERT(na == 1234 && nb == 1234 && nc == 1234);
        for (size_t g = 0; g < N_GPUS; g++) {
            if (!gpus[g].fn)
                continue;
            kcs_error e2 = {0};
            kcs_fv_result r2;
            sentinel(&r2);
            CU_ASSERT_EQUAL(gpus[g].fn(0, A, B, C, shapes[s][0], shapes[s][1], shapes[s][2], &p,
                                       NULL, &r2, &e2),
                            KCS_E_INVAL);
            CU_ASSERT(untouched(&r2));
        }
    }
    /* m k past the limit with a modest m: the probes count too */
    long m_edge = (long)(KCS_FV_DEV_MAX_ELEMS / KCS_FV_MAX_PROBES) + 1;
    p.probes = KCS_FV_MAX_PROBES;
    kcs_error ee = {0};
    CU_ASSERT_EQUAL(kcs_fv_device_args(A, B, C, m_edge, 1, 1, &p, &r, &na, &nb, &nc, &ee),
                    KCS_E_INVAL);
    p.probes = 1;
    CU_ASSERT_EQUAL(kcs_fv_device_args(A, B, C, m_edge, 1, 1, &p, &r, &na, &nb, &nc, &ee), 0);
    CU_ASSERT_EQUAL(na, (size_t)m_edge);
}

/* Device compared with the CPU on the same data (only where a device is). */
static void compare_cpu(const gpu_case *g, const float *c, const kcs_fv_params *p,
                        const kcs_fv_result *rd)
{
    kcs_fv_result rc;
    kcs_error e = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, c, M, KK, N, p, NULL, &rc, &e), 0);
    CU_ASSERT_EQUAL(rd->pass, rc.pass);
    CU_ASSERT(rd->seconds >= 0);
    CU_ASSERT_EQUAL(rd->lambda, rc.lambda);
    if (!rc.pass) {
        CU_ASSERT_EQUAL(rd->worst_row, rc.worst_row);
        CU_ASSERT(fabs(rd->tau - rc.tau) <= 1e-9 * rc.tau);
    } else {
        /* other summation order: residuals differ by the check's own
         * error, < 2^-28 of the thresholds here */
        CU_ASSERT(fabs(rd->tau - rc.tau) <= 1e-6);
    }
    printf("\n  %s: device pass=%d tau=%.6g (cpu pass=%d tau=%.6g) %.3g s", g->name,
           (int)rd->pass, rd->tau, (int)rc.pass, rc.tau, rd->seconds);
}

static void test_nodev(void)
{
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    int built = 0;
    for (size_t g = 0; g < N_GPUS; g++) {
        if (!gpus[g].fn)
            continue;
        built++;
        /* an index past any machine's devices: NODEV everywhere */
        kcs_error e = {0};
        kcs_fv_result r;
        sentinel(&r);
        CU_ASSERT_EQUAL(gpus[g].fn(FAR_DEVICE, A, B, C, M, KK, N, &p, NULL, &r, &e), KCS_E_NODEV);
        CU_ASSERT_EQUAL(e.code, KCS_E_NODEV);
        CU_ASSERT(nodev_message(gpus[g].name, e.msg));
        CU_ASSERT(untouched(&r));
        kcs_error en = {0};
        CU_ASSERT_EQUAL(gpus[g].fn(-1, A, B, C, M, KK, N, &p, NULL, &r, &en), KCS_E_NODEV);
        CU_ASSERT(nodev_message(gpus[g].name, en.msg));
        CU_ASSERT(untouched(&r));

        /* device 0: NODEV on a machine without one, else the CPU's verdict */
        kcs_error e0 = {0};
        int rc0 = gpus[g].fn(0, A, B, C, M, KK, N, &p, NULL, &r, &e0);
        CU_ASSERT(rc0 == 0 || rc0 == KCS_E_NODEV);
        if (rc0 == KCS_E_NODEV) {
            CU_ASSERT(nodev_message(gpus[g].name, e0.msg));
            CU_ASSERT(untouched(&r));
            printf("\n  %s: %s", gpus[g].name, e0.msg);
            continue;
        }
        if (rc0 != 0)
            continue;
        CU_ASSERT(r.pass);
        compare_cpu(&gpus[g], C, &p, &r);

        /* one corrupted element: both fail, on its row */
        float Cbad[M * N];
        memcpy(Cbad, C, sizeof Cbad);
        Cbad[4 * N + 5] += 0.5f;
        p.mode = KCS_FV_PROBABILISTIC;
        p.probes = 13;
        kcs_error eb = {0};
        CU_ASSERT_EQUAL(gpus[g].fn(0, A, B, Cbad, M, KK, N, &p, NULL, &r, &eb), 0);
        CU_ASSERT(!r.pass);
        CU_ASSERT_EQUAL(r.worst_row, 4);
        compare_cpu(&gpus[g], Cbad, &p, &r);
        kcs_fv_params_default(&p);
    }
    if (!built)
        printf("\n  (no GPU backend compiled in)");
}

/* Larger shapes on a device (where there is one): rows longer than a
 * block's threads, k = 40 over several of the terms kernel's sweeps of 8
 * probes, both modes; a conforming product passes, one corrupted element
 * fails on its row, as on the CPU, tau equal within the check's own
 * rounding (the CPU's verdicts on these data, checked apart: tau 0 when
 * conforming, 6.7 to 253 with the corruption). */
static void test_device_shapes(void)
{
    const long shapes[][3] = {{130, 300, 517}, {9, 1000, 33}};
    const int probes[] = {10, 40};
    for (size_t g = 0; g < N_GPUS; g++) {
        if (!gpus[g].fn)
            continue;
        for (size_t si = 0; si < 2; si++) {
            long m = shapes[si][0], kk = shapes[si][1], n = shapes[si][2];
            float *a = malloc((size_t)(m * kk) * sizeof *a), *b = malloc((size_t)(kk * n) * sizeof *b);
            float *c = malloc((size_t)(m * n) * sizeof *c);
            CU_ASSERT_FATAL(a && b && c);
            fill_product(a, b, c, m, kk, n);
            for (int pi = 0; pi < 2; pi++)
                for (int bad = 0; bad < 2; bad++) {
                    kcs_fv_params p;
                    kcs_fv_params_default(&p);
                    p.probes = probes[pi];
                    p.mode = pi ? KCS_FV_PROBABILISTIC : KCS_FV_RIGOROUS;
                    long row = m - 1;
                    if (bad)
                        c[row * n + n / 2] += 4.0f; /* rigorous mode misses 0.5 at 130x300x517 */
                    kcs_fv_result rd, rc;
                    kcs_error ed = {0}, ec = {0};
                    int rcd = gpus[g].fn(0, a, b, c, m, kk, n, &p, NULL, &rd, &ed);
                    CU_ASSERT(rcd == 0 || rcd == KCS_E_NODEV);
                    if (rcd == KCS_E_NODEV) {
                        free(a), free(b), free(c);
                        return;
                    }
                    CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(a, b, c, m, kk, n, &p, NULL, &rc, &ec), 0);
                    CU_ASSERT_EQUAL(rd.pass, !bad);
                    CU_ASSERT_EQUAL(rd.pass, rc.pass);
                    if (bad) {
                        CU_ASSERT_EQUAL(rd.worst_row, row);
                        CU_ASSERT_EQUAL(rc.worst_row, row);
                        CU_ASSERT(fabs(rd.tau - rc.tau) <= 1e-9 * rc.tau);
                    } else {
                        CU_ASSERT(fabs(rd.tau - rc.tau) <= 1e-6);
                    }
                    printf("\n  %s %ldx%ldx%ld k=%d %s: device pass=%d tau=%.6g (cpu pass=%d tau=%.6g)",
                           gpus[g].name, m, kk, n, p.probes, bad ? "corrupted" : "conforming",
                           (int)rd.pass, rd.tau, (int)rc.pass, rc.tau);
                    if (bad)
                        c[row * n + n / 2] -= 4.0f;
                }
            free(a);
            free(b);
            free(c);
        }
    }
}

static const ut_test tests[] = {
    {"lookup", test_lookup},
    {"bad_args", test_bad_args},
    {"sizes", test_sizes},
    {"nodev", test_nodev},
    {"device_shapes", test_device_shapes},
};

int main(void)
{
    fill();
    for (size_t g = 0; g < N_GPUS; g++)
        gpus[g].fn = kcs_freivalds_device(gpus[g].name);
    return ut_run("freivalds_device", tests);
}
