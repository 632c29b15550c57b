/* oracle.magnitude random_walk (src/judge/oracle_random_walk.c): the tree
 * bound Q against hand-derived and exact values, and the magnitude against
 * the CPU backend's attention kernels: every conforming fp32 composition
 * (sequential, pairwise, fused online softmax) stays within C-PRC-07's
 * lambda u M, a 16-bit one does not. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "oracle.h"
#include "oracle_rw.h"
#include "rng.h"
#include "tensor.h"
#include "unit_helpers.h"

extern const kcs_backend_ops kcs_backend_cpu;

/* Equal terms: T_s = s a, so Q = a^2 (sum_{s=1..n} s^2 - 1). The sorted
 * form is exact; the bucketed one (n > 512) rounds 1.0 up to 17/16. */
static void test_tree_q_equal(void)
{
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? 1000 : 300;
        double *a = malloc(n * sizeof *a);
        for (size_t j = 0; j < n; j++)
            a[j] = 1.0;
        double want = (double)n * (n + 1) * (2 * n + 1) / 6.0 - 1.0;
        double got = kcs_rw_tree_q(a, n);
        if (n <= 512) {
            CU_ASSERT_EQUAL(got, want);
        } else {
            CU_ASSERT_DOUBLE_EQUAL(got, (17.0 / 16) * (17.0 / 16) * want, want * 1e-12);
        }
        free(a);
    }
    double one = 3.0;
    CU_ASSERT_EQUAL(kcs_rw_tree_q(&one, 1), 0.0); /* a single key: no node */
}

/* Bucketed against sorted on spread, skewed and zero-holding terms: never
 * below, at most (1 + 1/16)^2 above. */
static void test_tree_q_bucketed(void)
{
    kcs_rng r;
    kcs_rng_init(&r, 77, 1, 0);
    for (int kind = 0; kind < 3; kind++) {
        size_t n = 4096;
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (size_t j = 0; j < n; j++) {
            double u = kcs_rng_uniform(&r);
            a[j] = kind == 0 ? u : kind == 1 ? exp(30.0 * u) * 1e-9 : (j % 7 ? u * u : 0.0);
            b[j] = a[j];
        }
        double exact = kcs_rw_tree_q_sorted(a, n), got = kcs_rw_tree_q(b, n);
        CU_ASSERT(got >= exact);
        CU_ASSERT(got <= exact * (17.0 / 16) * (17.0 / 16));
        free(a);
        free(b);
    }
}

/* max over outputs of |y - ref| / (eta M), eta = C-PRC-07's clause */
static double tau_of(const char *variant, const char *acc, const char *sched, int m, int n,
                     int k, int positive, uint64_t seed)
{
    size_t nq = (size_t)m * k, nk = (size_t)n * k;
    double *Q = malloc(nq * sizeof *Q), *K = malloc(nk * sizeof *K), *V = malloc(nk * sizeof *V);
    double *ref = malloc(nq * sizeof *ref), *mag = malloc(nq * sizeof *mag), scale;
    kcs_dist d = positive ? KCS_DIST_POSITIVE : KCS_DIST_NORMAL;
    kcs_fill(Q, nq, d, KCS_FMT_FP32, seed, 1, 0);
    kcs_fill(K, nk, d, KCS_FMT_FP32, seed, 2, 0);
    kcs_fill(V, nk, d, KCS_FMT_FP32, seed, 3, 0);
    kcs_call c = {0};
    c.op = KCS_OP_ATTENTION;
    c.variant = variant;
    c.dtype_in = c.dtype_out = KCS_FMT_FP32;
    CU_ASSERT_FATAL(kcs_acc_parse(acc, &c.acc) == 0);
    CU_ASSERT_FATAL(kcs_schedule_parse(sched, &c.schedule) == 0);
    c.m = m, c.n = n, c.k = k;
    c.in[0] = Q, c.in[1] = K, c.in[2] = V;
    c.attrs = "";
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_oracle_run(KCS_ORACLE_FP64, NULL, &c, ref, mag, &scale, &err) == 0);
    CU_ASSERT_FATAL(kcs_oracle_magnitude(KCS_MAG_RANDOM_WALK, &c, ref, mag, &err) == 0);
    kcs_backend_config cfg = {0};
    kcs_backend_ctx *ctx;
    CU_ASSERT_FATAL(kcs_backend_cpu.open(0, &cfg, &ctx, &err) == 0);
    kcs_tensor t;
    c.out_len = nq;
    CU_ASSERT_FATAL(kcs_tensor_alloc(&t, nq, KCS_FMT_FP32, &err) == 0);
    c.out = t.data;
    CU_ASSERT_FATAL(kcs_backend_cpu.run(ctx, &c, &err) == 0);
    const double *y = t.data;
    double lam = sqrt(2.0 * log(2.0 * (double)nq * 1073741824.0)), u = ldexp(1.0, -24);
    double eta = 1.001 * lam * u + u / 2, tau = 0.0;
    for (size_t i = 0; i < nq; i++) {
        CU_ASSERT(mag[i] >= 2.0 * fabs(ref[i])); /* R >= 2 |O| covers the output rounding */
        tau = fmax(tau, fabs(y[i] - ref[i]) / (eta * mag[i]));
    }
    kcs_backend_cpu.close(ctx);
    kcs_tensor_free(&t);
    free(Q), free(K), free(V), free(ref), free(mag);
    return tau;
}

static void test_rw_attention(void)
{
    /* n = 64 and 600 (bucketed Q), normal and positive inputs */
    const int ns[2] = {64, 600};
    for (int in = 0; in < 2; in++)
        for (int pos = 0; pos < 2; pos++) {
            uint64_t seed = 100 + 10 * in + pos;
            double own = tau_of("own", "fp32", "sequential", 4, ns[in], 16, pos, seed);
            double pw = tau_of("own", "fp32", "pairwise", 4, ns[in], 16, pos, seed);
            double fu = tau_of("fused", "fp32", "sequential", 4, ns[in], 16, pos, seed);
            double f64 = tau_of("own", "fp64", "sequential", 4, ns[in], 16, pos, seed);
            CU_ASSERT(own < 1.0 && pw < 1.0 && fu < 1.0 && f64 < 1.0);
            CU_ASSERT(own > 0.0); /* the fp32 kernel does round */
            if (pos) { /* positive sums carry the power (C-PRC-07's inputs) */
                CU_ASSERT(tau_of("own", "bits:16", "sequential", 4, ns[in], 16, 1, seed) > 1.0);
                CU_ASSERT(tau_of("own", "bits:18", "sequential", 4, ns[in], 16, 1, seed) > 1.0);
            }
        }
}

/* first_order leaves absref alone; random_walk is attention's only */
static void test_rw_scope(void)
{
    double A[4] = {1, 2, 3, 4}, ref[4] = {0}, absref[4] = {5, 6, 7, 8};
    kcs_call c = {0};
    c.op = KCS_OP_GEMM;
    c.m = c.n = c.k = 2;
    c.in[0] = c.in[1] = A;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_oracle_magnitude(KCS_MAG_FIRST_ORDER, &c, ref, absref, &err), 0);
    CU_ASSERT(absref[0] == 5 && absref[3] == 8);
    CU_ASSERT_EQUAL(kcs_oracle_magnitude(KCS_MAG_RANDOM_WALK, &c, ref, absref, &err),
                    KCS_E_UNSUPPORTED);
    CU_ASSERT(strstr(err.msg, "defined for attention") != NULL);
}

static const ut_test tests[] = {
    {"tree bound: equal terms", test_tree_q_equal},
    {"tree bound: bucketed vs sorted", test_tree_q_bucketed},
    {"random_walk: conforming within, 16/18-bit beyond", test_rw_attention},
    {"magnitude scope", test_rw_scope},
};

UT_MAIN("oracle_rw", tests)
