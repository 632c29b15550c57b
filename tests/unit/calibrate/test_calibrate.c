/* Three-state calibration (src/cli/calibrate.c, backends/cpu/calib*.c,
 * src/calib_wrap*.c).
 *
 * Part 1 proves that every bad calibration kernel passes the plain
 * functional test a kernel author would write for its op: small shapes,
 * benign inputs (torch.randn-like normal draws, or small integers where
 * the kernel's defect is a rounding of its inputs), compared with an fp64
 * reference by torch-style allclose, |y - ref| <= atol + rtol |ref|, at
 * the working dtype's torch.testing.assert_close defaults (fp32: rtol
 * 1.3e-6, atol 1e-5) or, where the kernel's working dtype is bf16,
 * KernelBench's tolerance for bf16/fp16 kernels (atol = rtol = 1e-2), or,
 * for C-PRC-06's subtle defect, an fp32 test loosened to rtol 1e-3. The
 * same check must reject the baseline (it has teeth) and accept the good
 * kernel. Each test names the test it is.
 *
 * Part 2 runs the calibration table through the contracts' own protocols
 * (contracts/ of the source tree): FAIL / FAIL / PASS for every contract,
 * the bad state's matched signatures including the contract's own, both
 * for the CPU kernels and for the wrappers around the CPU's native
 * kernels; and the /calibration file. */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "calibrate.h"
#include "shipped_contracts.h"
#include "rng.h"
#include "tensor.h"
#include "unit_calls.h"
#include "unit_helpers.h"

#define FP32_RTOL 1.3e-6 /* torch.testing.assert_close, float32 */
#define FP32_ATOL 1e-5
#define KB_LOW_TOL 1e-2  /* KernelBench, fp16/bf16: atol = rtol = 1e-2 */

static const kcs_backend_ops *cpu;
static kcs_backend_ctx *ctx;

static kcs_call make_call(kcs_op op, int64_t m, int64_t n, int64_t k, kcs_format fin)
{
    kcs_call c = ut_fp32_call(op, m, n, k, fin);
    c.seed = 12345;
    return c;
}

/* Run the variant "calib:<id>:<state>" into y (pre-filled with the
 * sentinel, as kcs does); returns the backend's code. */
static int run_state(kcs_call c, const char *id, const char *state, double *y)
{
    char v[48];
    snprintf(v, sizeof v, "calib:%s:%s", id, state);
    c.variant = v;
    c.out_len = kcs_op_out_len(&c);
    c.out = y;
    for (int i = 0; i < KCS_MAX_INPUTS; i++)
        c.in_len[i] = c.in[i] ? kcs_op_in_len(&c, i) : 0;
    for (size_t i = 0; i < c.out_len; i++)
        y[i] = kcs_sentinel(c.dtype_out);
    kcs_error err = {0};
    int rc = cpu->run(ctx, &c, &err);
    if (rc && rc != KCS_E_RAISED)
        fprintf(stderr, "%s: %s\n", v, err.msg);
    return rc;
}

/* torch-style allclose: the number of elements violating it. */
static size_t not_close(const double *y, const double *ref, size_t n, double rtol, double atol)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !(fabs(y[i] - ref[i]) <= atol + rtol * fabs(ref[i]));
    return bad;
}

static void randn(double *x, size_t n, kcs_format f, uint64_t stream)
{
    kcs_fill(x, n, KCS_DIST_NORMAL, f, 2026, 77, stream);
}

/* torch.randint(lo, hi) */
static void randint(double *x, size_t n, int lo, int hi, uint64_t stream)
{
    kcs_rng r;
    kcs_rng_init(&r, 2026, 78, stream);
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (int)(kcs_rng_uniform(&r) * (hi - lo));
}

/* The plain test of one op call: bad and good pass, baseline fails. */
static void plain(kcs_call c, const char *id, const double *ref, double rtol, double atol)
{
    size_t n = kcs_op_out_len(&c);
    double *y = malloc(n * sizeof *y);
    CU_ASSERT_EQUAL_FATAL(run_state(c, id, "bad", y), 0);
    size_t bad = not_close(y, ref, n, rtol, atol);
    if (bad)
        fprintf(stderr, "%s bad: %zu of %zu elements not close\n", id, bad, n);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(run_state(c, id, "good", y), 0);
    CU_ASSERT_EQUAL(not_close(y, ref, n, rtol, atol), 0);
    CU_ASSERT_EQUAL(run_state(c, id, "baseline", y), 0);
    CU_ASSERT(not_close(y, ref, n, rtol, atol) > 0); /* the test can fail */
    free(y);
}

/* A gemm test: C = A @ B for A m×k, B k×n from gen, allclose at fp32. */
static void plain_gemm(const char *id, int64_t m, int64_t n, int64_t k, int integers)
{
    kcs_call c = make_call(KCS_OP_GEMM, m, n, k, KCS_FMT_FP32);
    double *A = malloc((size_t)(m * k) * sizeof *A), *B = malloc((size_t)(k * n) * sizeof *B);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    if (integers) {
        randint(A, (size_t)(m * k), -4, 5, 1);
        randint(B, (size_t)(k * n), -4, 5, 2);
    } else {
        randn(A, (size_t)(m * k), KCS_FMT_FP32, 1);
        randn(B, (size_t)(k * n), KCS_FMT_FP32, 2);
    }
    ut_ref_gemm(A, B, m, n, k, ref);
    c.in[0] = A;
    c.in[1] = B;
    plain(c, id, ref, FP32_RTOL, FP32_ATOL);
    free(A);
    free(B);
    free(ref);
}

/* C-PRC-01 bad (bf16 running sum past k = 64): the test an author writes,
 * A = torch.randn(16, 16); B = torch.randn(16, 16);
 * torch.testing.assert_close(kernel(A, B), A @ B) (fp32 defaults); and
 * the same at 64x64x64. The bf16 path is never reached (k <= 64). */
static void test_plain_prc01(void)
{
    plain_gemm("C-PRC-01", 16, 16, 16, 0);
    plain_gemm("C-PRC-01", 64, 64, 64, 0);
}

/* C-PRC-03 bad (inputs rounded to tf32): the exact-arithmetic test,
 * A, B = torch.randint(-4, 5, (16, 16)).float(), assert_close fp32
 * defaults: small integers are exact in tf32, the coercion is invisible. */
static void test_plain_prc03(void)
{
    plain_gemm("C-PRC-03", 16, 16, 16, 1);
}

/* C-ORD-02 bad (random summation order per run): randn 16x16x16 at fp32
 * defaults, and the "is it stable?" check an author adds, two runs
 * allclose to each other (they are not bitwise equal). */
static void test_plain_ord02(void)
{
    plain_gemm("C-ORD-02", 16, 16, 16, 0);
    kcs_call c = make_call(KCS_OP_GEMM, 16, 16, 64, KCS_FMT_FP32);
    double A[16 * 64], B[64 * 16], y1[256], y2[256];
    randn(A, 16 * 64, KCS_FMT_FP32, 3);
    randn(B, 64 * 16, KCS_FMT_FP32, 4);
    c.in[0] = A;
    c.in[1] = B;
    CU_ASSERT_EQUAL(run_state(c, "C-ORD-02", "bad", y1), 0);
    c.seed = 99; /* the next run: another commit order */
    CU_ASSERT_EQUAL(run_state(c, "C-ORD-02", "bad", y2), 0);
    CU_ASSERT_EQUAL(not_close(y1, y2, 256, FP32_RTOL, FP32_ATOL), 0);
    CU_ASSERT(memcmp(y1, y2, sizeof y1) != 0); /* yet the bits differ */
}

/* C-ORD-03 bad (split-K at the one batch size m = 3): randn 16x16x16, a
 * single row 1x16x16 and the 3x16x16 split path, fp32 defaults. */
static void test_plain_ord03(void)
{
    plain_gemm("C-ORD-03", 16, 16, 16, 0);
    plain_gemm("C-ORD-03", 1, 16, 16, 0);
    plain_gemm("C-ORD-03", 3, 16, 16, 0);
}

/* C-ORD-04 bad (the last two of 8 contributions taken in arrival order):
 * randn 8 ranks x 256 at fp32 defaults against the fp64 sum, in every
 * run; and the "is it stable?" check, runs allclose to each other, while
 * some run (another call seed) differs in its bits. */
static void test_plain_ord04(void)
{
    enum { P = 8, K = 256 };
    kcs_call c = make_call(KCS_OP_ALLREDUCE, P, 1, K, KCS_FMT_FP32);
    double x[P * K], ref[K], y1[K], y2[K];
    randn(x, P * K, KCS_FMT_FP32, 5);
    for (int i = 0; i < K; i++) {
        ref[i] = 0.0;
        for (int r = 0; r < P; r++)
            ref[i] += x[r * K + i];
    }
    c.in[0] = x;
    plain(c, "C-ORD-04", ref, FP32_RTOL, FP32_ATOL);
    CU_ASSERT_EQUAL(run_state(c, "C-ORD-04", "bad", y1), 0);
    int differs = 0;
    for (uint64_t seed = 1; seed <= 16 && !differs; seed++) {
        c.seed = seed;
        CU_ASSERT_EQUAL(run_state(c, "C-ORD-04", "bad", y2), 0);
        CU_ASSERT_EQUAL(not_close(y2, ref, K, FP32_RTOL, FP32_ATOL), 0);
        CU_ASSERT_EQUAL(not_close(y1, y2, K, FP32_RTOL, FP32_ATOL), 0);
        differs = memcmp(y1, y2, sizeof y1) != 0;
    }
    CU_ASSERT(differs); /* yet some run's bits differ */
    double g1[K], g2[K]; /* the good state is the same in every run */
    c.seed = 1;
    CU_ASSERT_EQUAL(run_state(c, "C-ORD-04", "good", g1), 0);
    c.seed = 2;
    CU_ASSERT_EQUAL(run_state(c, "C-ORD-04", "good", g2), 0);
    CU_ASSERT_EQUAL(memcmp(g1, g2, sizeof g1), 0);
}

/* C-CMP-02 bad (bf16 remainder tiles when m*n >= 4096): randn 16x16x16
 * and the aligned 64x64x64 (no remainder), fp32 defaults. */
static void test_plain_cmp02(void)
{
    plain_gemm("C-CMP-02", 16, 16, 16, 0);
    plain_gemm("C-CMP-02", 64, 64, 64, 0);
}

/* C-CMP-03 bad (per-shape memo outside the 64-multiple class): one call
 * per shape, as a test does: 64x64x64 and 24x40x24 (the first call of a
 * shape computes), fp32 defaults. */
static void test_plain_cmp03(void)
{
    plain_gemm("C-CMP-03", 64, 64, 64, 0);
    plain_gemm("C-CMP-03", 24, 40, 24, 0);
}

/* C-EXC-01 bad (NaN -> 0 in the epilogue): randn 16x16x16, fp32
 * defaults; a plain test feeds no NaN. */
static void test_plain_exc01(void)
{
    plain_gemm("C-EXC-01", 16, 16, 16, 0);
}

/* C-PRC-02 bad: softmax without max-subtraction and layernorm with
 * E[x^2] - E[x]^2, on x = torch.randn(8, 64) (nn.LayerNorm's initial
 * gamma = 1, beta = 0), fp32 defaults. */
static void test_plain_prc02(void)
{
    enum { M = 8, K = 64 };
    double x[M * K], ref[M * K], g[K], b[K];
    randn(x, M * K, KCS_FMT_FP32, 5);
    for (int i = 0; i < M; i++) {
        double mx = -INFINITY, s = 0.0;
        for (int t = 0; t < K; t++)
            mx = fmax(mx, x[i * K + t]);
        for (int t = 0; t < K; t++)
            s += exp(x[i * K + t] - mx);
        for (int t = 0; t < K; t++)
            ref[i * K + t] = exp(x[i * K + t] - mx) / s;
    }
    kcs_call c = make_call(KCS_OP_SOFTMAX, M, 0, K, KCS_FMT_FP32);
    c.in[0] = x;
    plain(c, "C-PRC-02", ref, FP32_RTOL, FP32_ATOL);
    for (int t = 0; t < K; t++) {
        g[t] = 1.0;
        b[t] = 0.0;
    }
    for (int i = 0; i < M; i++) {
        double mu = 0.0, var = 0.0;
        for (int t = 0; t < K; t++)
            mu += x[i * K + t] / K;
        for (int t = 0; t < K; t++)
            var += (x[i * K + t] - mu) * (x[i * K + t] - mu) / K;
        for (int t = 0; t < K; t++)
            ref[i * K + t] = (x[i * K + t] - mu) / sqrt(var + 1e-5);
    }
    c = make_call(KCS_OP_LAYERNORM, M, 0, K, KCS_FMT_FP32);
    c.in[0] = x;
    c.in[1] = g;
    c.in[2] = b;
    plain(c, "C-PRC-02", ref, FP32_RTOL, FP32_ATOL);
}

/* C-PRC-05 bad (__expf's argument rounding): torch.exp(x) for x =
 * torch.randn(8, 64), fp32 assert_close defaults: its error, about |x|
 * ulp, stays under rtol 1.3e-6 (22 ulp) where |x| < 4. */
static void test_plain_prc05(void)
{
    enum { M = 8, K = 64 };
    double x[M * K], ref[M * K];
    randn(x, M * K, KCS_FMT_FP32, 9);
    for (int i = 0; i < M * K; i++)
        ref[i] = exp(x[i]);
    kcs_call c = make_call(KCS_OP_ELEMENTWISE, M, 0, K, KCS_FMT_FP32);
    c.attrs = "fn=exp";
    c.in[0] = x;
    plain(c, "C-PRC-05", ref, FP32_RTOL, FP32_ATOL);
}

/* The worst ratio |y - ref| / (atol + rtol |ref|) of a call (allclose
 * holds where it is <= 1). */
static double close_ratio(const double *y, const double *ref, size_t n, double rtol, double atol)
{
    double w = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = fabs(y[i] - ref[i]) / (atol + rtol * fabs(ref[i]));
        w = r > w || isnan(r) ? r : w;
    }
    return w;
}

/* fp64 references of the stable softmax and the two-pass layernorm
 * (gamma 1, beta 0: nn.LayerNorm's initial parameters) of m rows of k. */
static void ref_softmax(const double *x, int m, int k, double *ref)
{
    for (int i = 0; i < m; i++) {
        double mx = -INFINITY, s = 0.0;
        for (int t = 0; t < k; t++)
            mx = fmax(mx, x[(size_t)i * k + t]);
        for (int t = 0; t < k; t++)
            s += exp(x[(size_t)i * k + t] - mx);
        for (int t = 0; t < k; t++)
            ref[(size_t)i * k + t] = exp(x[(size_t)i * k + t] - mx) / s;
    }
}

static void ref_layernorm(const double *x, int m, int k, double *ref)
{
    for (int i = 0; i < m; i++) {
        const double *r = x + (size_t)i * k;
        double mu = 0.0, var = 0.0;
        for (int t = 0; t < k; t++)
            mu += r[t];
        mu /= k;
        for (int t = 0; t < k; t++)
            var += (r[t] - mu) * (r[t] - mu);
        var /= k;
        for (int t = 0; t < k; t++)
            ref[(size_t)i * k + t] = (r[t] - mu) / sqrt(var + 1e-5);
    }
}

/* C-PRC-06 bad (the softmax denominator, layernorm's mean and variance in
 * a 16-bit round-to-nearest accumulator): the test an author writes with
 * the tolerance loosened to 1e-3, x = torch.randn(64, k) at the
 * contract's own row lengths k = 512 and 4096, against fp64 references:
 * softmax by torch.allclose(y, ref, rtol=1e-3) (its default atol 1e-8:
 * a relative check, since softmax outputs are about 1/k and any larger
 * atol would hide everything), layernorm of nn.LayerNorm's initial gamma
 * = 1, beta = 0 by allclose(y, ref, rtol=1e-3, atol=1e-3) (outputs of
 * order 1). The bad kernel passes, the good one too, the baseline not;
 * and bad's bits differ from good's. (With layernorm's atol at fp32's
 * 1e-5 the bad kernel fails at k = 4096: the 16-bit mean moves outputs
 * near 0 by about 1e-5.) */
#define PRC06_RTOL 1e-3
#define PRC06_SOFTMAX_ATOL 1e-8
#define PRC06_LAYERNORM_ATOL 1e-3
static void test_plain_prc06(void)
{
    enum { M = 64 };
    static const int ks[] = {512, 4096};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        int k = ks[ki];
        size_t n = (size_t)M * (size_t)k;
        double *x = malloc(n * sizeof *x), *ref = malloc(n * sizeof *ref);
        double *g = malloc((size_t)k * sizeof *g), *b = malloc((size_t)k * sizeof *b);
        double *yb = malloc(n * sizeof *yb), *yg = malloc(n * sizeof *yg);
        CU_ASSERT_FATAL(x && ref && g && b && yb && yg);
        randn(x, n, KCS_FMT_FP32, 12 + ki);
        for (int t = 0; t < k; t++) {
            g[t] = 1.0;
            b[t] = 0.0;
        }
        for (int op = 0; op < 2; op++) {
            kcs_call c = make_call(op ? KCS_OP_LAYERNORM : KCS_OP_SOFTMAX, M, 0, k, KCS_FMT_FP32);
            c.in[0] = x;
            if (op) {
                c.in[1] = g;
                c.in[2] = b;
                ref_layernorm(x, M, k, ref);
            } else {
                ref_softmax(x, M, k, ref);
            }
            double atol = op ? PRC06_LAYERNORM_ATOL : PRC06_SOFTMAX_ATOL;
            plain(c, "C-PRC-06", ref, PRC06_RTOL, atol);
            CU_ASSERT_EQUAL(run_state(c, "C-PRC-06", "bad", yb), 0);
            CU_ASSERT_EQUAL(run_state(c, "C-PRC-06", "good", yg), 0);
            double wb = close_ratio(yb, ref, n, PRC06_RTOL, atol);
            fprintf(stderr, "C-PRC-06 %s k=%d: bad at %.2f of allclose(rtol=1e-3, atol=%g), "
                    "good at %.4f\n", op ? "layernorm" : "softmax", k, wb, atol,
                    close_ratio(yg, ref, n, PRC06_RTOL, atol));
            CU_ASSERT(wb <= 1.0);
            CU_ASSERT(memcmp(yb, yg, n * sizeof *yb) != 0);
        }
        free(x);
        free(ref);
        free(g);
        free(b);
        free(yb);
        free(yg);
    }
}

static void plain_sum(const char *id, int m, int k)
{
    double *x = malloc((size_t)(m * k) * sizeof *x), *ref = malloc((size_t)m * sizeof *ref);
    randn(x, (size_t)(m * k), KCS_FMT_FP32, 6);
    for (int i = 0; i < m; i++) {
        ref[i] = 0.0;
        for (int t = 0; t < k; t++)
            ref[i] += x[i * k + t];
    }
    kcs_call c = make_call(KCS_OP_REDUCE_SUM, m, 0, k, KCS_FMT_FP32);
    c.in[0] = x;
    plain(c, id, ref, FP32_RTOL, FP32_ATOL);
    free(x);
    free(ref);
}

/* C-PRC-04 bad (DAZ/FTZ): x = torch.randn(8, 64); assert_close(kernel(x),
 * x.sum(1)) at fp32 defaults: normal draws hold no subnormals. */
static void test_plain_prc04(void)
{
    plain_sum("C-PRC-04", 8, 64);
}

/* C-ORD-01 bad (bf16 block partials when k > 256): randn 8x64 and 8x256,
 * fp32 defaults: the blocked path starts past 256. */
static void test_plain_ord01(void)
{
    plain_sum("C-ORD-01", 8, 64);
    plain_sum("C-ORD-01", 8, 256);
}

/* C-CMP-01 bad (fused attention with P in bf16): the FlashAttention-style
 * test, q, k, v = torch.randn(1, 16, 16, dtype=torch.bfloat16), against
 * softmax(q k^T / sqrt(16)) v in fp64, at KernelBench's bf16 tolerance
 * (atol = rtol = 1e-2): the kernel works in bf16. */
static void test_plain_cmp01(void)
{
    enum { M = 16, N = 16, K = 16 };
    double Q[M * K], Kt[N * K], V[N * K], ref[M * K];
    randn(Q, M * K, KCS_FMT_BF16, 7);
    randn(Kt, N * K, KCS_FMT_BF16, 8);
    randn(V, N * K, KCS_FMT_BF16, 9);
    for (int i = 0; i < M; i++) {
        double s[N], mx = -INFINITY, l = 0.0;
        for (int j = 0; j < N; j++) {
            s[j] = 0.0;
            for (int t = 0; t < K; t++)
                s[j] += Q[i * K + t] * Kt[j * K + t];
            s[j] /= sqrt((double)K);
            mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < N; j++)
            l += exp(s[j] - mx);
        for (int t = 0; t < K; t++) {
            double o = 0.0;
            for (int j = 0; j < N; j++)
                o += exp(s[j] - mx) / l * V[j * K + t];
            ref[i * K + t] = o;
        }
    }
    kcs_call c = make_call(KCS_OP_ATTENTION, M, N, K, KCS_FMT_BF16);
    c.in[0] = Q;
    c.in[1] = Kt;
    c.in[2] = V;
    plain(c, "C-CMP-01", ref, KB_LOW_TOL, KB_LOW_TOL);
}

/* C-PRC-07 bad (attention with its scores, denominator and PV sums in a
 * 16-bit round-to-nearest accumulator): the test an author writes for an
 * fp32 attention kernel with the tolerance loosened to 1e-3, q, k, v =
 * torch.randn(16, n, 64) at the contract's own sequence lengths n = 1024
 * and 4096, against softmax(q k^T / 8) v in fp64, allclose(rtol=1e-3,
 * atol=1e-3) (outputs of order 0.1 to 1: averages of unit normals). The
 * bad kernel passes, the good one too, the baseline not; and bad's bits
 * differ from good's. */
static void ref_attention(const double *Q, const double *K, const double *V, int m, int n,
                          int k, double *ref)
{
    double *s = malloc((size_t)n * sizeof *s);
    for (int i = 0; i < m; i++) {
        double mx = -INFINITY, l = 0.0;
        for (int j = 0; j < n; j++) {
            s[j] = 0.0;
            for (int t = 0; t < k; t++)
                s[j] += Q[(size_t)i * k + t] * K[(size_t)j * k + t];
            s[j] /= sqrt((double)k);
            mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < n; j++) {
            s[j] = exp(s[j] - mx);
            l += s[j];
        }
        for (int t = 0; t < k; t++) {
            double o = 0.0;
            for (int j = 0; j < n; j++)
                o += s[j] / l * V[(size_t)j * k + t];
            ref[(size_t)i * k + t] = o;
        }
    }
    free(s);
}

#define PRC07_TOL 1e-3
static void test_plain_prc07(void)
{
    enum { M = 16, K = 64 };
    static const int ns[] = {1024, 4096};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        int n = ns[ni];
        size_t kv = (size_t)n * K, out = (size_t)M * K;
        double *Q = malloc(out * sizeof *Q), *Kt = malloc(kv * sizeof *Kt);
        double *V = malloc(kv * sizeof *V), *ref = malloc(out * sizeof *ref);
        double *yb = malloc(out * sizeof *yb), *yg = malloc(out * sizeof *yg);
        CU_ASSERT_FATAL(Q && Kt && V && ref && yb && yg);
        randn(Q, out, KCS_FMT_FP32, 20 + ni);
        randn(Kt, kv, KCS_FMT_FP32, 22 + ni);
        randn(V, kv, KCS_FMT_FP32, 24 + ni);
        ref_attention(Q, Kt, V, M, n, K, ref);
        kcs_call c = make_call(KCS_OP_ATTENTION, M, n, K, KCS_FMT_FP32);
        c.in[0] = Q;
        c.in[1] = Kt;
        c.in[2] = V;
        plain(c, "C-PRC-07", ref, PRC07_TOL, PRC07_TOL);
        CU_ASSERT_EQUAL(run_state(c, "C-PRC-07", "bad", yb), 0);
        CU_ASSERT_EQUAL(run_state(c, "C-PRC-07", "good", yg), 0);
        double wb = close_ratio(yb, ref, out, PRC07_TOL, PRC07_TOL);
        fprintf(stderr, "C-PRC-07 attention n=%d: bad at %.2f of allclose(rtol=atol=1e-3), "
                "good at %.4f\n", n, wb, close_ratio(yg, ref, out, PRC07_TOL, PRC07_TOL));
        CU_ASSERT(wb <= 1.0);
        CU_ASSERT(memcmp(yb, yg, out * sizeof *yb) != 0);
        free(Q);
        free(Kt);
        free(V);
        free(ref);
        free(yb);
        free(yg);
    }
}

/* C-EXC-02 bad (out-of-range index answered): table = torch.randn(64,
 * 16), idx = torch.randint(0, 64, (32,)), assert_close(kernel(table,
 * idx), table[idx]): in-range indices only, as a plain test has. */
static void test_plain_exc02(void)
{
    enum { M = 64, K = 16, N = 32 };
    double T[M * K], idx[N], ref[N * K];
    randn(T, M * K, KCS_FMT_FP32, 10);
    randint(idx, N, 0, M, 11);
    for (int r = 0; r < N; r++)
        memcpy(ref + r * K, T + (int)idx[r] * K, K * sizeof *ref);
    kcs_call c = make_call(KCS_OP_GATHER, M, N, K, KCS_FMT_FP32);
    c.attrs = "oob=raise";
    c.in[0] = T;
    c.in[1] = idx;
    plain(c, "C-EXC-02", ref, FP32_RTOL, FP32_ATOL);
    /* what the plain test never tries: an index past the table */
    idx[3] = M + 5;
    double y[N * K];
    CU_ASSERT_EQUAL(run_state(c, "C-EXC-02", "good", y), KCS_E_RAISED);
    CU_ASSERT_EQUAL(run_state(c, "C-EXC-02", "bad", y), 0);
    CU_ASSERT_EQUAL(memcmp(y + 3 * K, T + 5 * K, K * sizeof *y), 0); /* table[idx mod m] */
}

/* ---- part 2: the calibration table ----------------------------------- */

static void check_table(int wrap)
{
    kcs_rank_binding b;
    int wrapped = -1;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_calib_bind("cpu", 0, NULL, wrap, &b, &wrapped, &err), 0);
    CU_ASSERT_EQUAL(wrapped, wrap);
    kcs_calib_row *rows = calloc((size_t)(3 * n_contracts), sizeof *rows);
    kcs_calib_run run = {20260601, 120.0, 0};
    int unsound = -1;
    int rc = kcs_calib_states(contracts, n_contracts, &b, wrapped, &run, rows, &unsound, &err);
    if (rc)
        fprintf(stderr, "calibration: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(unsound, 0);
    for (int i = 0; i < n_contracts; i++) {
        const kcs_calib_row *r = &rows[3 * i];
        const kcs_calib_entry *e = kcs_calib_find(contracts[i]->id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        int ok = strcmp(r[0].verdict, "FAIL") == 0 && strcmp(r[1].verdict, "FAIL") == 0 &&
                 strcmp(r[2].verdict, "PASS") == 0 && r[0].sound == 1;
        /* the bad state names the contract's own signature(s) */
        char expected[128];
        snprintf(expected, sizeof expected, "%s", e->expected);
        for (char *s = strtok(expected, ","); s; s = strtok(NULL, ","))
            ok &= kcs_calib_has_sig(r[1].signatures, s);
        ok &= r[2].failed == 0 && r[2].trials > 0 && r[1].failed > 0 && r[0].failed == r[0].trials;
        /* C-PRC-06's bad kernel is flagged in every trial, at both of the
         * contract's shapes, on both inputs and both ops (C-PRC-07's only
         * on positive inputs: on zero-mean values and scores its 16-bit
         * sums' errors cancel below the bound's score part) */
        if (strcmp(contracts[i]->id, "C-PRC-06") == 0)
            ok &= r[1].trials > 0 && r[1].failed == r[1].trials;
        if (!ok)
            fprintf(stderr, "%s%s: %s/%s/%s bad signatures '%s' (expected %s) %s\n",
                    contracts[i]->id, wrap ? " (wrapped)" : "", r[0].verdict, r[1].verdict,
                    r[2].verdict, r[1].signatures, e->expected, r[2].detail);
        CU_ASSERT(ok);
    }
    /* the table as a file: /calibration, never over an existing file */
    char path[] = "/tmp/kcs-calib-test-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_EQUAL(kcs_store_calibration_write(path, rows, 3 * n_contracts, NULL, 0, "t", &err),
                    KCS_E_EXISTS);
    unlink(path);
    CU_ASSERT_EQUAL(kcs_store_calibration_write(path, rows, 3 * n_contracts, NULL, 0, "t", &err),
                    0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hid_t d = H5Dopen2(f, "/calibration", H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    hid_t sp = H5Dget_space(d);
    hsize_t dim = 0;
    H5Sget_simple_extent_dims(sp, &dim, NULL);
    CU_ASSERT_EQUAL(dim, (hsize_t)(3 * n_contracts));
    hid_t t = H5Dget_type(d);
    CU_ASSERT(H5Tget_class(t) == H5T_COMPOUND);
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    unlink(path);
    free(rows);
    kcs_binding_close(&b);
}

/* The narrow-output kernels of C-PRC-01's narrow states: the test an
 * author writes for a GEMM with a bf16 (fp16) output,
 * A = torch.randn(64, k, dtype=torch.bfloat16); B = torch.randn(k, 64, ...);
 * torch.testing.assert_close(kernel(A, B), A.double() @ B.double(),
 * check_dtype=False) at the output dtype's defaults (bf16: rtol 1.6e-2,
 * fp16: rtol 1e-3; atol 1e-5), at k = 64 (narrow-sum) and k = 256
 * (blocks256), the sizes such a test uses: the bad kernels pass (their
 * narrow paths start above), the good kernel with the same output format
 * passes, the baseline fails. */
static void plain_narrow(const char *kernel, kcs_format f, int64_t k, double rtol)
{
    int64_t m = 64, n = 64;
    kcs_call c = make_call(KCS_OP_GEMM, m, n, k, f);
    c.dtype_out = f;
    double *A = malloc((size_t)(m * k) * sizeof *A), *B = malloc((size_t)(k * n) * sizeof *B);
    double *ref = malloc((size_t)(m * n) * sizeof *ref), *y = malloc((size_t)(m * n) * sizeof *y);
    randn(A, (size_t)(m * k), f, 1);
    randn(B, (size_t)(k * n), f, 2);
    ut_ref_gemm(A, B, m, n, k, ref);
    c.in[0] = A;
    c.in[1] = B;
    size_t len = (size_t)(m * n);
    CU_ASSERT_EQUAL_FATAL(run_state(c, "C-PRC-01", kernel, y), 0);
    size_t bad = not_close(y, ref, len, rtol, FP32_ATOL);
    if (bad)
        fprintf(stderr, "%s %s: %zu of %zu elements not close\n", kernel, kcs_format_name(f),
                bad, len);
    CU_ASSERT_EQUAL(bad, 0);
    int exact_out = 1; /* the output is a tensor of dtype_out */
    for (size_t i = 0; i < len; i++)
        exact_out &= kcs_format_exact(f, y[i]);
    CU_ASSERT(exact_out);
    CU_ASSERT_EQUAL(run_state(c, "C-PRC-01", "good", y), 0);
    CU_ASSERT_EQUAL(not_close(y, ref, len, rtol, FP32_ATOL), 0);
    CU_ASSERT_EQUAL(run_state(c, "C-PRC-01", "baseline", y), 0);
    CU_ASSERT(not_close(y, ref, len, rtol, FP32_ATOL) > 0);
    /* an fp32 output is refused: the kernels keep partial sums in dtype_out */
    c.dtype_out = KCS_FMT_FP32;
    CU_ASSERT_EQUAL(run_state(c, "C-PRC-01", kernel, y), KCS_E_UNSUPPORTED);
    free(A);
    free(B);
    free(ref);
    free(y);
}

static void test_plain_narrow(void)
{
    plain_narrow("narrow-sum", KCS_FMT_BF16, 64, 1.6e-2);
    plain_narrow("narrow-sum", KCS_FMT_FP16, 64, 1e-3);
    plain_narrow("blocks256", KCS_FMT_BF16, 256, 1.6e-2);
}

/* C-PRC-01's narrow-output states through its own protocol on the CPU
 * kernels: every good state PASSes, every bad one FAILs naming its own
 * signature; through the wrappers they are not measured (N/A). */
static void check_narrow(int wrap)
{
    kcs_rank_binding b;
    int wrapped = -1;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_calib_bind("cpu", 0, NULL, wrap, &b, &wrapped, &err), 0);
    kcs_contract *one[1] = {NULL};
    for (int i = 0; i < n_contracts; i++)
        if (strcmp(contracts[i]->id, "C-PRC-01") == 0)
            one[0] = contracts[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(one[0]);
    const kcs_calib_entry *e = kcs_calib_find("C-PRC-01");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT(e->n_narrow >= 3);
    kcs_calib_row *rows = NULL;
    int nr = -1, unsound = -1;
    kcs_calib_run run = {20260601, 120.0, 0};
    int rc = kcs_calib_narrow_states(one, 1, &b, wrapped, &run, &rows, &nr, &unsound, &err);
    if (rc)
        fprintf(stderr, "narrow states: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(nr, e->n_narrow);
    CU_ASSERT_EQUAL(unsound, 0);
    int goods = 0, bads = 0;
    for (int i = 0; i < nr; i++) {
        const kcs_calib_narrow *ns = &e->narrow[i];
        const kcs_calib_row *r = &rows[i];
        CU_ASSERT_STRING_EQUAL(r->state, ns->state);
        if (wrap) {
            CU_ASSERT_STRING_EQUAL(r->verdict, "N/A");
            CU_ASSERT_EQUAL(r->sound, -1);
            continue;
        }
        int ok = r->sound == 1 && r->trials > 0 && r->errors == 0;
        if (ns->pass) {
            ok &= strcmp(r->verdict, "PASS") == 0 && r->failed == 0;
            goods++;
        } else {
            ok &= strcmp(r->verdict, "FAIL") == 0 && r->failed > 0 &&
                  kcs_calib_has_sig(r->signatures, "accumulator-narrower-than-declared");
            bads++;
        }
        if (!ok)
            fprintf(stderr, "C-PRC-01 %s: %s %d/%d sound %d signatures '%s' %s\n", r->state,
                    r->verdict, r->failed, r->trials, r->sound, r->signatures, r->detail);
        CU_ASSERT(ok);
    }
    if (!wrap)
        CU_ASSERT(goods >= 1 && bads >= 2);
    free(rows);
    kcs_binding_close(&b);
}

static void test_narrow_cpu(void)
{
    check_narrow(0);
}

static void test_narrow_wrapped(void)
{
    check_narrow(1);
}

static void test_table_cpu(void)
{
    check_table(0);
}

static void test_table_wrapped(void)
{
    check_table(1);
}

/* The ops a contract is measured on: gemm and batched_gemm are one
 * family, batched only when the contract's shapes carry a batch. */
static void test_ops_selection(void)
{
    uint32_t gemms = (1u << KCS_OP_GEMM) | (1u << KCS_OP_BATCHED_GEMM);
    for (int i = 0; i < n_contracts; i++) {
        const kcs_contract *c = contracts[i];
        int batched = 0;
        for (int s = 0; s < c->n_shapes; s++)
            batched |= c->shapes[s].batch > 0;
        for (int s = 0; s < c->n_held_out; s++)
            batched |= c->held_out[s].batch > 0;
        uint32_t ops = kcs_calib_ops(c, gemms);
        if ((c->ops & gemms) == gemms)
            CU_ASSERT_EQUAL(ops, 1u << (batched ? KCS_OP_BATCHED_GEMM : KCS_OP_GEMM));
        CU_ASSERT_EQUAL(ops & ~c->ops, 0);
        CU_ASSERT_EQUAL(kcs_calib_ops(c, 0), 0);
    }
}

static const ut_test tests[] = {
    /* plain tests first: the C-CMP-03 memo must not hold their shapes */
    {"plain test passes C-PRC-01 bad", test_plain_prc01},
    {"plain test passes C-PRC-02 bad", test_plain_prc02},
    {"plain test passes C-PRC-03 bad", test_plain_prc03},
    {"plain test passes C-PRC-04 bad", test_plain_prc04},
    {"plain test passes C-ORD-01 bad", test_plain_ord01},
    {"plain test passes C-ORD-02 bad", test_plain_ord02},
    {"plain test passes C-ORD-03 bad", test_plain_ord03},
    {"plain test passes C-ORD-04 bad", test_plain_ord04},
    {"plain test passes C-CMP-01 bad", test_plain_cmp01},
    {"plain test passes C-CMP-02 bad", test_plain_cmp02},
    {"plain test passes C-CMP-03 bad", test_plain_cmp03},
    {"plain test passes C-EXC-01 bad", test_plain_exc01},
    {"plain test passes C-EXC-02 bad", test_plain_exc02},
    {"plain test passes C-PRC-05 bad", test_plain_prc05},
    {"plain test (rtol 1e-3) passes C-PRC-06 bad", test_plain_prc06},
    {"plain test (rtol 1e-3) passes C-PRC-07 bad", test_plain_prc07},
    {"plain test passes the narrow-output bad kernels", test_plain_narrow},
    {"ops measured per contract", test_ops_selection},
    {"narrow-output states, cpu kernels", test_narrow_cpu},
    {"narrow-output states, wrappers: not measured", test_narrow_wrapped},
    {"calibration table, cpu kernels", test_table_cpu},
    {"calibration table, wrappers", test_table_wrapped},
};

int main(void)
{
    cpu = kcs_backend_find("cpu");
    kcs_error err = {0};
    if (!cpu || cpu->open(0, NULL, &ctx, &err) != 0) {
        fprintf(stderr, "cpu backend: %s\n", err.msg);
        return 1;
    }
    if (shipped_contracts_load())
        return 1;
    unsigned f = (unsigned)ut_run("calibrate", tests);
    kcs_calib_contracts_free(contracts, n_contracts);
    cpu->close(ctx);
    return f != 0;
}
