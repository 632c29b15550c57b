/* Batched Freivalds verification: conforming GEMMs pass in both modes, a
 * single corrupted element is caught, the rigorous bound holds (and is
 * sharp) on adversarial inputs, the probabilistic bound is smaller than the
 * rigorous one on random inputs and fails, as its model says it may, on a
 * stagnating summation; the check's own arithmetic stays inside its stated
 * error; results do not depend on the thread count. */
#include <CUnit/Basic.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "freivalds.h"
#include "rng.h"
#include "unit_helpers.h"

/* ---- helpers --------------------------------------------------------- */

static float *fill_normal(long len, uint64_t seed, kcs_format f)
{
    float *x = malloc(sizeof *x * (size_t)len);
    kcs_rng r;
    kcs_rng_init(&r, seed, 11, 0);
    for (long i = 0; i < len; i++)
        x[i] = (float)kcs_format_round(f, kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
    return x;
}

static float *fill_positive(long len, uint64_t seed)
{
    float *x = malloc(sizeof *x * (size_t)len);
    kcs_rng r;
    kcs_rng_init(&r, seed, 12, 0);
    for (long i = 0; i < len; i++)
        x[i] = (float)kcs_rng_uniform(&r);
    return x;
}

/* Recursive fp32 summation, products rounded: a conforming fp32 GEMM. */
static float *gemm_naive(const float *A, const float *B, long m, long kk, long n)
{
    float *C = malloc(sizeof *C * (size_t)(m * n));
    for (long i = 0; i < m; i++)
        for (long l = 0; l < n; l++) {
            float acc = 0;
            for (long p = 0; p < kk; p++) {
                float prod = A[i * kk + p] * B[p * n + l];
                acc = acc + prod;
            }
            C[i * n + l] = acc;
        }
    return C;
}

static float *gemm_blas(const float *A, const float *B, long m, long kk, long n)
{
    float *C = malloc(sizeof *C * (size_t)(m * n));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)kk, 1.0f, A,
                (int)kk, B, (int)n, 0.0f, C, (int)n);
    return C;
}

static void round_output(float *C, long len, kcs_format f)
{
    for (long i = 0; i < len; i++)
        C[i] = (float)kcs_format_round(f, C[i], KCS_ROUND_DEFAULT);
}

/* Parameters for an fp32-accumulating GEMM whose output is stored in f. */
static kcs_fv_params params_for(kcs_format f, kcs_fv_mode mode)
{
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    p.mode = mode;
    p.threads = 2;
    if (f != KCS_FMT_FP32) {
        const kcs_format_info *fi = kcs_format_get(f);
        p.u_out = kcs_format_u(f);
        p.eta_out = ldexp(1.0, fi->emin - fi->p); /* half the smallest subnormal */
    }
    return p;
}

typedef struct rowdata {
    double *ratio, *thresh, *resid_max, *resid, *cr;
    kcs_fv_detail d;
} rowdata;

static void rows_alloc(rowdata *r, long m, int k)
{
    r->ratio = calloc((size_t)m, sizeof(double));
    r->thresh = calloc((size_t)m, sizeof(double));
    r->resid_max = calloc((size_t)m, sizeof(double));
    r->resid = calloc((size_t)(m * k), sizeof(double));
    r->cr = calloc((size_t)(m * k), sizeof(double));
    r->d = (kcs_fv_detail){.row_ratio = r->ratio, .row_thresh = r->thresh,
                           .row_resid = r->resid_max, .resid = r->resid, .cr = r->cr};
}

static void rows_free(rowdata *r)
{
    free(r->ratio);
    free(r->thresh);
    free(r->resid_max);
    free(r->resid);
    free(r->cr);
}

/* ---- tests ------------------------------------------------------------ */

static void test_conforming_pass(void)
{
    static const long shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 200, 33}, {150, 1000, 97},
                                     {33, 4096, 17}};
    static const kcs_format fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t f = 0; f < 3; f++)
            for (int g = 0; g < 2; g++) {
                long m = shapes[s][0], kk = shapes[s][1], n = shapes[s][2];
                float *A = fill_normal(m * kk, 100 + s, fmts[f]);
                float *B = fill_normal(kk * n, 200 + s, fmts[f]);
                float *C = g ? gemm_blas(A, B, m, kk, n) : gemm_naive(A, B, m, kk, n);
                if (fmts[f] != KCS_FMT_FP32)
                    round_output(C, m * n, fmts[f]);
                for (int mode = 0; mode < 2; mode++) {
                    kcs_fv_params p = params_for(fmts[f], (kcs_fv_mode)mode);
                    p.stream = s * 10 + f;
                    kcs_fv_result res;
                    kcs_error err;
                    CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL,
                                                               &res, &err), 0);
                    CU_ASSERT(res.pass);
                    CU_ASSERT(res.tau <= 1.0);
                    if (!res.pass)
                        fprintf(stderr, "\nfalse alarm: shape %ldx%ldx%ld fmt %s gemm %d "
                                "mode %d tau %g\n", m, kk, n, kcs_format_name(fmts[f]), g,
                                mode, res.tau);
                }
                free(A);
                free(B);
                free(C);
            }
}

/* One element C_il += 10 T_i: every probe's residual moves by exactly
 * 10 T_i (|R| = 1), so |r'| >= 10 T_i - |r| >= 9 T_i and the call fails
 * with row i the worst; other rows are untouched bit for bit. */
static void test_single_corruption(void)
{
    const long m = 96, kk = 300, n = 80;
    const int k = 10;
    static const kcs_format fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16};
    for (int f = 0; f < 2; f++)
        for (int mode = 0; mode < 2; mode++) {
            float *A = fill_normal(m * kk, 5, fmts[f]), *B = fill_normal(kk * n, 6, fmts[f]);
            float *C = gemm_blas(A, B, m, kk, n);
            if (fmts[f] != KCS_FMT_FP32)
                round_output(C, m * n, fmts[f]);
            kcs_fv_params p = params_for(fmts[f], (kcs_fv_mode)mode);
            rowdata r0, r1;
            rows_alloc(&r0, m, k);
            rows_alloc(&r1, m, k);
            kcs_fv_result res;
            kcs_error err;
            CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &r0.d, &res,
                                                       &err), 0);
            CU_ASSERT_FATAL(res.pass);
            static const long rows[] = {0, 37, 95}, cols[] = {79, 0, 41};
            for (int t = 0; t < 3; t++) {
                long i = rows[t], l = cols[t];
                float saved = C[i * n + l];
                double d = 10 * r0.thresh[i];
                float bad = (float)(saved + d);
                while ((double)bad - saved < d) /* store at least 10 T_i */
                    bad = nextafterf(bad, INFINITY);
                C[i * n + l] = bad;
                double dd = (double)bad - saved;
                CU_ASSERT(dd >= d);
                CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &r1.d, &res,
                                                     &err), 0);
                CU_ASSERT(!res.pass);
                CU_ASSERT_EQUAL(res.worst_row, i);
                CU_ASSERT(r1.resid_max[i] >= dd - r0.resid_max[i]);
                CU_ASSERT(r1.resid_max[i] > r1.thresh[i]);
                for (long q = 0; q < m; q++)
                    if (q != i)
                        CU_ASSERT_EQUAL(r1.resid_max[q], r0.resid_max[q]);
                C[i * n + l] = saved;
            }
            rows_free(&r0);
            rows_free(&r1);
            free(A);
            free(B);
            free(C);
        }
}

/* All-positive inputs maximise error growth. (a) A real conforming GEMM
 * with a 12-bit round-toward-zero accumulator (u = eps = 2^-11): passes,
 * and its elementwise error reaches a sizeable part of gamma_K S, so the
 * test is not vacuous. (b) The worst output rigorous mode must accept:
 * C = AB + 0.99 gamma_K S (sign of R_l0) -> pass; 1.01 gamma_K S -> fail. */
static void test_rigorous_adversarial(void)
{
    const long m = 24, kk = 512, n = 40;
    float *A = fill_positive(m * kk, 31), *B = fill_positive(kk * n, 32);
    double *exact = malloc(sizeof(double) * (size_t)(m * n));
    double *S = malloc(sizeof(double) * (size_t)(m * n));
    for (long i = 0; i < m; i++)
        for (long l = 0; l < n; l++) {
            double s = 0;
            for (long p = 0; p < kk; p++)
                s += (double)A[i * kk + p] * B[p * n + l]; /* exact products, 48 bits */
            exact[i * n + l] = S[i * n + l] = s;           /* all positive: S = AB */
        }
    /* (a) 12-bit RZ accumulator: every product and partial sum truncated */
    float *C = malloc(sizeof(float) * (size_t)(m * n));
    double u12 = 0x1.0p-11, g = kk * u12 / (1 - kk * u12), worst = 0;
    for (long i = 0; i < m; i++)
        for (long l = 0; l < n; l++) {
            double acc = 0;
            for (long p = 0; p < kk; p++)
                acc = kcs_round_bits(acc + kcs_round_bits((double)A[i * kk + p] * B[p * n + l],
                                                          12, KCS_RZ), 12, KCS_RZ);
            C[i * n + l] = (float)acc; /* 12 bits: exact in fp32 */
            double e = fabs(acc - exact[i * n + l]) / (g * S[i * n + l]);
            worst = fmax(worst, e);
        }
    CU_ASSERT(worst <= 1.0);
    CU_ASSERT(worst > 0.1); /* truncation loses ~u per addition: roughly (1-Ku)/2 */
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    p.u_acc = u12;
    kcs_fv_result res;
    kcs_error err;
    CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res, &err), 0);
    CU_ASSERT(res.pass);

    /* (b) errors aligned with probe 0 at 0.99x and 1.01x the elementwise bound */
    double *Rt = malloc(sizeof(double) * (size_t)(n * p.probes));
    kcs_freivalds_probes(p.seed, p.stream, n, p.probes, Rt);
    p.u_acc = 0x1.0p-14;
    const long K = kk;
    double gk = K * p.u_acc / (1 - K * p.u_acc);
    static const double fac[] = {0.99, 1.01};
    for (int t = 0; t < 2; t++) {
        for (long i = 0; i < m; i++)
            for (long l = 0; l < n; l++)
                C[i * n + l] = (float)(exact[i * n + l] + fac[t] * gk * S[i * n + l] * Rt[l]);
        CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res, &err), 0);
        /* fp32 storage moves each error by <= 2^-24 |C| << 0.01 gk S */
        CU_ASSERT_EQUAL(res.pass, t == 0);
        CU_ASSERT(t == 0 ? res.tau > 0.98 && res.tau <= 1 : res.tau > 1 && res.tau < 1.02);
        if (t == 1)
            CU_ASSERT_EQUAL(res.worst_probe, 0);
    }
    free(Rt);
    free(A);
    free(B);
    free(C);
    free(exact);
    free(S);
}

/* On random data T_prob / T_rig ~ lambda / ((2/pi) sqrt(K n)) (see
 * freivalds.c): below 1 for every row once K n >= 4 lambda^2. */
static void test_prob_smaller(void)
{
    static const long shapes[][3] = {{50, 64, 64}, {40, 512, 30}, {20, 2000, 300}};
    const int k = 10;
    for (int s = 0; s < 3; s++) {
        long m = shapes[s][0], kk = shapes[s][1], n = shapes[s][2];
        float *A = fill_normal(m * kk, 40 + s, KCS_FMT_FP32);
        float *B = fill_normal(kk * n, 50 + s, KCS_FMT_FP32);
        float *C = gemm_blas(A, B, m, kk, n);
        rowdata rr, rp;
        rows_alloc(&rr, m, k);
        rows_alloc(&rp, m, k);
        kcs_fv_params p = params_for(KCS_FMT_FP32, KCS_FV_RIGOROUS);
        kcs_fv_result res;
        kcs_error err;
        double *both_rig = malloc(sizeof(double) * (size_t)m);
        double *both_prob = malloc(sizeof(double) * (size_t)m);
        rr.d.row_thresh_rig = both_rig;
        rr.d.row_thresh_prob = both_prob;
        CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &rr.d, &res, &err), 0);
        p.mode = KCS_FV_PROBABILISTIC;
        CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &rp.d, &res, &err), 0);
        double lam = kcs_freivalds_lambda(m, k, 1e-9);
        CU_ASSERT(fabs(res.lambda - lam) < 1e-12);
        double expect = lam / (0.6366 * sqrt((double)kk * n)), worst = 0;
        for (long i = 0; i < m; i++) {
            CU_ASSERT(rp.thresh[i] < rr.thresh[i]);
            worst = fmax(worst, rp.thresh[i] / rr.thresh[i]);
            /* same residuals in both modes; both thresholds from one call */
            CU_ASSERT_EQUAL(rp.resid_max[i], rr.resid_max[i]);
            CU_ASSERT_EQUAL(both_rig[i], rr.thresh[i]);
            CU_ASSERT_EQUAL(both_prob[i], rp.thresh[i]);
        }
        free(both_rig);
        free(both_prob);
        CU_ASSERT(worst < 2 * expect); /* the sqrt(K n) gain is there */
        rows_free(&rr);
        rows_free(&rp);
        free(A);
        free(B);
        free(C);
    }
}

/* Rows [1, 2^-12, ...] times columns [1, 1.5 2^-13, ...]: every later
 * product is 0.75 u, which recursive fp32 summation drops (1 + 0.75u
 * rounds to 1), so C = 1 exactly with error e = (K-1) 0.75 u in every
 * element, all of one sign: the rounding errors are not mean zero, the
 * Higham-Mary model fails, and so does the probabilistic threshold
 * (predicted ratio ~ 0.75 sqrt(K) |sum_l R_lj| / (lambda sqrt(n))). The
 * GEMM conforms to gamma_K, so rigorous mode passes. */
static void test_prob_model_limit(void)
{
    const long m = 8, kk = 4096, n = 64;
    float *A = malloc(sizeof(float) * (size_t)(m * kk));
    float *B = malloc(sizeof(float) * (size_t)(kk * n));
    for (long i = 0; i < m; i++)
        for (long p = 0; p < kk; p++)
            A[i * kk + p] = p == 0 ? 1.0f : 0x1.0p-12f;
    for (long p = 0; p < kk; p++)
        for (long l = 0; l < n; l++)
            B[p * n + l] = p == 0 ? 1.0f : 0x1.8p-13f;
    float *C = gemm_naive(A, B, m, kk, n);
    CU_ASSERT_EQUAL(C[0], 1.0f);
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    double *Rt = malloc(sizeof(double) * (size_t)(n * p.probes));
    kcs_freivalds_probes(p.seed, p.stream, n, p.probes, Rt);
    double zmax = 0;
    for (int j = 0; j < p.probes; j++) {
        double z = 0;
        for (long l = 0; l < n; l++)
            z += Rt[j * n + l];
        zmax = fmax(zmax, fabs(z));
    }
    double u = 0x1.0p-24, e = (kk - 1) * 0.75 * u;
    double lam = kcs_freivalds_lambda(m, p.probes, 1e-9);
    double na = sqrt(1 + (kk - 1) * 0x1.0p-24), nb = sqrt(n * (1 + (kk - 1) * 0x1.2p-25));
    double predicted = e * zmax / (lam * sqrt((double)kk) * u * na * nb);
    CU_ASSERT_FATAL(predicted > 1.5); /* the data above make the model fail */
    kcs_fv_result res;
    kcs_error err;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res, &err), 0);
    CU_ASSERT(res.pass);
    /* rigorous: e zmax against gamma_K n S, S = 1 + (K-1) 0.75 u */
    double gk = kk * u / (1 - kk * u), rig = e * zmax / (gk * n * (1 + (kk - 1) * 0.75 * u));
    CU_ASSERT(res.tau > 0.99 * rig && res.tau < 1.01 * rig);
    p.mode = KCS_FV_PROBABILISTIC;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res, &err), 0);
    CU_ASSERT(!res.pass);
    CU_ASSERT(res.tau > 0.9 * predicted && res.tau < 1.1 * predicted);
    free(Rt);
    free(A);
    free(B);
    free(C);
}

/* The computed residuals agree with a long-double evaluation on the same
 * probes within the check-error terms the threshold includes. k = 150
 * makes the kernels cut the rows of A into several cached pieces. */
static void test_check_arithmetic(void)
{
    const long m = 30, kk = 700, n = 50;
    const int k = 150;
    float *A = fill_normal(m * kk, 61, KCS_FMT_FP32), *B = fill_normal(kk * n, 62, KCS_FMT_FP32);
    float *C = gemm_blas(A, B, m, kk, n);
    kcs_fv_params p = params_for(KCS_FMT_FP32, KCS_FV_RIGOROUS);
    p.probes = k;
    p.stream = 99;
    rowdata r;
    rows_alloc(&r, m, k);
    kcs_fv_result res;
    kcs_error err;
    CU_ASSERT_EQUAL_FATAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &r.d, &res, &err), 0);
    double *Rt = malloc(sizeof(double) * (size_t)(n * k));
    kcs_freivalds_probes(p.seed, p.stream, n, k, Rt);
    long double *br = malloc(sizeof(long double) * (size_t)(kk * k));
    long double *beta = malloc(sizeof(long double) * (size_t)kk);
    for (long pp = 0; pp < kk; pp++) {
        beta[pp] = 0;
        for (int j = 0; j < k; j++)
            br[pp * k + j] = 0;
        for (long l = 0; l < n; l++) {
            beta[pp] += fabsl((long double)B[pp * n + l]);
            for (int j = 0; j < k; j++)
                br[pp * k + j] += (long double)B[pp * n + l] * Rt[j * n + l];
        }
    }
    double u64 = 0x1.0p-53, gkn = (kk + n) * u64 / (1 - (kk + n) * u64);
    for (long i = 0; i < m; i++) {
        long double absab = 0, absc = 0;
        for (long pp = 0; pp < kk; pp++)
            absab += fabsl((long double)A[i * kk + pp]) * beta[pp];
        for (long l = 0; l < n; l++)
            absc += fabsl((long double)C[i * n + l]);
        for (int j = 0; j < k; j++) {
            long double ab = 0, c = 0;
            for (long pp = 0; pp < kk; pp++)
                ab += (long double)A[i * kk + pp] * br[pp * k + j];
            for (long l = 0; l < n; l++)
                c += (long double)C[i * n + l] * Rt[j * n + l];
            double ref = (double)(ab - c);
            double bound = gkn * (double)(absab + absc) * 1.01 + 4 * u64 * fabs(ref);
            CU_ASSERT(fabs(r.resid[i * k + j] - ref) <= bound);
            CU_ASSERT(fabs(r.cr[i * k + j] - (double)c) <= gkn * (double)absc * 1.01);
        }
    }
    free(br);
    free(beta);
    free(Rt);
    rows_free(&r);
    free(A);
    free(B);
    free(C);
}

static void test_threads_deterministic(void)
{
    const long m = 77, kk = 333, n = 129;
    const int k = 13;
    float *A = fill_normal(m * kk, 71, KCS_FMT_FP32), *B = fill_normal(kk * n, 72, KCS_FMT_FP32);
    float *C = gemm_blas(A, B, m, kk, n);
    rowdata r[3];
    static const int thr[] = {1, 2, 5};
    for (int t = 0; t < 3; t++) {
        rows_alloc(&r[t], m, k);
        kcs_fv_params p = params_for(KCS_FMT_FP32, KCS_FV_PROBABILISTIC);
        p.probes = k;
        p.threads = thr[t];
        kcs_fv_result res;
        kcs_error err;
        CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &r[t].d, &res, &err), 0);
    }
    for (int t = 1; t < 3; t++) {
        CU_ASSERT(memcmp(r[t].resid, r[0].resid, sizeof(double) * (size_t)(m * k)) == 0);
        CU_ASSERT(memcmp(r[t].thresh, r[0].thresh, sizeof(double) * (size_t)m) == 0);
    }
    for (int t = 0; t < 3; t++)
        rows_free(&r[t]);
    free(A);
    free(B);
    free(C);
}

/* The x86-64-v4 and the portable kernels sum in the same order; the
 * device path's finishing step gives the verdict of the host path. */
static void test_kernels_and_finish(void)
{
    const long m = 45, kk = 301, n = 67; /* odd sizes: padded rows, lane tails */
    const int k = 11;
    float *A = fill_normal(m * kk, 91, KCS_FMT_BF16), *B = fill_normal(kk * n, 92, KCS_FMT_BF16);
    float *C = gemm_blas(A, B, m, kk, n);
    round_output(C, m * n, KCS_FMT_BF16);
    rowdata r[2];
    kcs_fv_params p = params_for(KCS_FMT_BF16, KCS_FV_PROBABILISTIC);
    p.probes = k;
    kcs_fv_result res[2];
    kcs_error err;
    for (int t = 0; t < 2; t++) {
        rows_alloc(&r[t], m, k);
        p.portable_kernels = t;
        CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &r[t].d, &res[t], &err), 0);
    }
    CU_ASSERT(memcmp(r[0].resid, r[1].resid, sizeof(double) * (size_t)(m * k)) == 0);
    CU_ASSERT(memcmp(r[0].thresh, r[1].thresh, sizeof(double) * (size_t)m) == 0);

    /* per-row terms by plain loops (another summation order) */
    double *Rt = malloc(sizeof(double) * (size_t)(n * k));
    kcs_freivalds_probes(p.seed, p.stream, n, k, Rt);
    size_t D = sizeof(double);
    double *ya = calloc((size_t)(m * k), D), *yc = calloc((size_t)(m * k), D);
    double *sab = calloc((size_t)m, D), *na2 = calloc((size_t)m, D);
    double *sc = calloc((size_t)m, D), *nc2 = calloc((size_t)m, D), nb2 = 0;
    double *br = calloc((size_t)(kk * k), D), *beta = calloc((size_t)kk, D);
    for (long q = 0; q < kk; q++)
        for (long l = 0; l < n; l++) {
            double b = B[q * n + l];
            for (int j = 0; j < k; j++)
                br[q * k + j] += b * Rt[j * n + l];
            beta[q] += fabs(b);
            nb2 += b * b;
        }
    for (long i = 0; i < m; i++) {
        for (long q = 0; q < kk; q++) {
            double a = A[i * kk + q];
            for (int j = 0; j < k; j++)
                ya[i * k + j] += a * br[q * k + j];
            sab[i] += fabs(a) * beta[q];
            na2[i] += a * a;
        }
        for (long l = 0; l < n; l++) {
            double c = C[i * n + l];
            for (int j = 0; j < k; j++)
                yc[i * k + j] += c * Rt[j * n + l];
            sc[i] += fabs(c);
            nc2[i] += c * c;
        }
    }
    kcs_fv_result fres;
    double *fthr = malloc(sizeof(double) * (size_t)m);
    kcs_fv_detail fd = {.row_thresh = fthr};
    p.portable_kernels = false;
    CU_ASSERT_EQUAL(kcs_freivalds_finish(ya, yc, sab, na2, sc, nc2, nb2, m, kk, n, &p, &fd,
                                         &fres, &err), 0);
    CU_ASSERT_EQUAL(fres.pass, res[0].pass);
    CU_ASSERT(fabs(fres.tau - res[0].tau) <= 1e-6 * res[0].tau + 1e-12);
    for (long i = 0; i < m; i++) /* sums in another order: relative 1e-12 */
        CU_ASSERT(fabs(fthr[i] - r[0].thresh[i]) <= 1e-12 * r[0].thresh[i]);
    free(fthr);
    free(Rt);
    free(ya);
    free(yc);
    free(sab);
    free(na2);
    free(sc);
    free(nc2);
    free(br);
    free(beta);
    rows_free(&r[0]);
    rows_free(&r[1]);
    free(A);
    free(B);
    free(C);
}

static void test_nonfinite_and_args(void)
{
    const long m = 6, kk = 9, n = 5;
    float *A = fill_normal(m * kk, 81, KCS_FMT_FP32), *B = fill_normal(kk * n, 82, KCS_FMT_FP32);
    float *C = gemm_naive(A, B, m, kk, n);
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    kcs_fv_result res = {.tau = -7}, res2;
    kcs_error err;
    /* K u >= 1: gamma is infinite; a zero row of A and C still has T = 0
     * (with the underflow term off) */
    p.u_acc = 0.25;
    p.eta_acc = 0;
    memset(A, 0, sizeof(float) * (size_t)kk);
    memset(C, 0, sizeof(float) * (size_t)n);
    double thr[6];
    kcs_fv_detail d = {.row_thresh = thr};
    for (int mode = 0; mode < 2; mode++) {
        p.mode = (kcs_fv_mode)mode;
        CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, &d, &res2, &err), 0);
        CU_ASSERT(res2.pass);
        CU_ASSERT_EQUAL(thr[0], 0);
        CU_ASSERT(isinf(thr[1]));
    }
    p.mode = KCS_FV_RIGOROUS;
    p.u_acc = 0x1.0p-24;
    p.eta_acc = 0x1.0p-150;
    C[3 * n + 2] = NAN;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res2, &err), 0);
    CU_ASSERT(!res2.pass);
    CU_ASSERT(isnan(res2.tau));
    CU_ASSERT_EQUAL(res2.worst_row, 3);
    C[3 * n + 2] = INFINITY;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res2, &err), 0);
    CU_ASSERT(!res2.pass);
    p.probes = 0;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(res.tau, -7); /* outputs untouched on error */
    p.probes = 10;
    p.u_acc = 1.5;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, m, kk, n, &p, NULL, &res, &err), KCS_E_INVAL);
    p.u_acc = 0x1.0p-24;
    CU_ASSERT_EQUAL(kcs_freivalds_verify(A, B, C, 0, kk, n, &p, NULL, &res, &err), KCS_E_INVAL);
    kcs_fv_mode mode;
    CU_ASSERT_EQUAL(kcs_fv_mode_parse("prob", &mode), 0);
    CU_ASSERT_EQUAL(mode, KCS_FV_PROBABILISTIC);
    CU_ASSERT_EQUAL(kcs_fv_mode_parse("exact", &mode), KCS_E_INVAL);
    kcs_fv_params q;
    kcs_fv_params_default(&q);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("freivalds:16:probabilistic", &q, &err), 0);
    CU_ASSERT(q.probes == 16 && q.mode == KCS_FV_PROBABILISTIC);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("freivalds", &q, &err), 0);
    CU_ASSERT(q.probes == 10 && q.mode == KCS_FV_RIGOROUS);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("freivalds:3", &q, &err), 0);
    CU_ASSERT(q.probes == 3 && q.mode == KCS_FV_RIGOROUS);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("freivalds:0:rig", &q, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("freivalds:4:fast", &q, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("freivaldsx", &q, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_fv_oracle_parse("fp64", &q, &err), KCS_E_INVAL);
    CU_ASSERT(q.probes == 3); /* untouched on error */
    free(A);
    free(B);
    free(C);
}

static void test_probes_and_lambda(void)
{
    const long n = 5000;
    double *a = malloc(sizeof(double) * (size_t)n * 4), *b = malloc(sizeof(double) * (size_t)n * 4);
    kcs_freivalds_probes(3, 4, n, 4, a);
    kcs_freivalds_probes(3, 5, n, 4, b);
    long plus = 0, same = 0;
    for (long i = 0; i < 4 * n; i++) {
        CU_ASSERT(a[i] == 1.0 || a[i] == -1.0);
        plus += a[i] > 0;
        same += a[i] == b[i];
    }
    /* fair coins: within 5 standard deviations (sqrt(4n)/2 = 70.7) */
    CU_ASSERT(labs(plus - 2 * n) < 354);
    CU_ASSERT(labs(same - 2 * n) < 354); /* another stream is independent */
    double lam = kcs_freivalds_lambda(4096, 10, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(4.0 * 4096 * 10 * exp(-lam * lam / 2), 1e-9, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(kcs_freivalds_lambda(4096, 10, 0), lam, 0);
    free(a);
    free(b);
}

static void test_fixed_threshold(void)
{
    /* 3 rows x 2 probes; column 0: max|r| 0.5, max|cr| 100 -> t = 0.1 + 0.01*100 = 1.1
     * ratio 0.4545; column 1: max|r| 2, max|cr| 50 -> t = 0.6, ratio 3.33 */
    const double resid[] = {0.5, -2, 0.1, 0.3, -0.2, 1};
    const double cr[] = {-100, 10, 3, 50, 7, -20};
    bool pass;
    double ratio;
    kcs_freivalds_fixed(resid, cr, 3, 2, 0.1, 0.01, &pass, &ratio);
    CU_ASSERT(!pass);
    CU_ASSERT_DOUBLE_EQUAL(ratio, 2 / 0.6, 1e-12);
    kcs_freivalds_fixed(resid, cr, 3, 1 /* only the first probe: stride breaks */, 0.1, 0.01,
                        &pass, &ratio);
    /* with k = 1 the rows are 0.5, -2, 0.1 / cr -100, 10, 3: t = 1.1, max 2 */
    CU_ASSERT(!pass);
    CU_ASSERT_DOUBLE_EQUAL(ratio, 2 / 1.1, 1e-12);
    const double ok[] = {0.5, 0.5, 0.1, 0.3, -0.2, 0.55};
    kcs_freivalds_fixed(ok, cr, 3, 2, 0.1, 0.01, &pass, &ratio);
    CU_ASSERT(pass);
    CU_ASSERT_DOUBLE_EQUAL(ratio, 0.55 / 0.6, 1e-12);
}

static const ut_test tests[] = {
    {"conforming GEMMs pass (shapes x dtypes x modes)", test_conforming_pass},
    {"single corruption at 10x threshold caught", test_single_corruption},
    {"rigorous bound holds and is sharp on all-positive", test_rigorous_adversarial},
    {"probabilistic thresholds below rigorous", test_prob_smaller},
    {"probabilistic model limit (stagnation)", test_prob_model_limit},
    {"check arithmetic within its bound", test_check_arithmetic},
    {"thread count does not change results", test_threads_deterministic},
    {"v4 and portable kernels agree; finish from terms", test_kernels_and_finish},
    {"NaN/Inf and argument checks", test_nonfinite_and_args},
    {"Rademacher probes and lambda", test_probes_and_lambda},
    {"fixed threshold criterion", test_fixed_threshold},
};

UT_MAIN("freivalds", tests)
