/* Every CPU op × variant against its fp64 oracle within bounds derived from
 * the standard model of floating-point arithmetic (Higham, Accuracy and
 * Stability, §2.2, §3.1, §4.2: gamma_n = n u / (1 - n u)), plus hand-derived
 * cases where schedules, oracles and policies must differ. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu_fixture.h"
#include "acc.h"
#include "oracle.h"
#include "rng.h"
#include "tensor.h"
#include "unit_calls.h"
#include "unit_helpers.h"


static const char *const SCHEDS[] = {"sequential", "pairwise", "blocked:16", "splitk:4", "atomic"};
static const char *const ACCS[] = {"fp32", "bf16", "fp16", "fp64", "bits:12"};
#define NS (int)(sizeof SCHEDS / sizeof SCHEDS[0])
#define NA (int)(sizeof ACCS / sizeof ACCS[0])

static const double U32 = 0x1p-24, U64 = 0x1p-53;

static double gam(double n, double u)
{
    return n * u < 1.0 ? n * u / (1.0 - n * u) : INFINITY;
}

static double acc_u(const kcs_acc *a)
{
    return a->bits > 0 ? ldexp(1.0, -a->bits) : kcs_format_u(a->fmt);
}

static void fill(double *x, size_t n, kcs_format f, double mean, double sd, uint64_t seed)
{
    kcs_rng r;
    kcs_rng_init(&r, seed, 0x7e57, n);
    for (size_t i = 0; i < n; i++)
        x[i] = kcs_format_round(f, mean + sd * kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
}

static kcs_call mk(kcs_op op, const char *variant, const char *sched, const char *acc, int64_t m,
                   int64_t n, int64_t k)
{
    kcs_call c = {0};
    c.op = op;
    c.variant = variant;
    c.dtype_in = c.dtype_out = KCS_FMT_FP32;
    CU_ASSERT_FATAL(kcs_schedule_parse(sched ? sched : "sequential", &c.schedule) == 0);
    CU_ASSERT_FATAL(kcs_acc_parse(acc ? acc : "fp32", &c.acc) == 0);
    c.m = m;
    c.n = n;
    c.k = k;
    c.attrs = "";
    c.seed = 42;
    return c;
}

/* Run c into a guarded tensor; returns the backend's code. */
static int run(kcs_call *c, kcs_tensor *t)
{
    kcs_error err = {0};
    c->out_len = kcs_op_out_len(c);
    CU_ASSERT_FATAL(kcs_tensor_alloc(t, c->out_len, c->dtype_out, &err) == 0);
    c->out = t->data;
    int rc = kcs_backend_cpu.run(ctx, c, &err);
    CU_ASSERT(kcs_tensor_guards_ok(t));
    return rc;
}

/* Count elements with |y - ref| > bound_factor * absref (per element
 * factors when f is non-NULL). */
static int count_over(const double *y, const double *ref, const double *absref, size_t n,
                      double factor, const double *f)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double b = (f ? f[i] : factor) * absref[i];
        if (!(fabs(y[i] - ref[i]) <= b)) {
            if (bad < 3)
                fprintf(stderr, "  [%zu] y=%.17g ref=%.17g |err|=%.3g bound=%.3g\n", i, y[i],
                        ref[i], fabs(y[i] - ref[i]), b);
            bad++;
        }
    }
    return bad;
}

/* ---- reduce_sum, dot ------------------------------------------------------ */

/* A sum of k terms under any schedule (every term passes through at most k
 * roundings into acc, the first one rounding the term itself) has
 * |s^ - s| <= gamma_k(u_acc) sum|x|; the output rounding adds u_out |s^|;
 * the fp64 oracle is off by at most gamma_k(2^-53) sum|x|. */
static void test_sums_vs_oracle(void)
{
    enum { M = 6, K = 300 };
    static double x[M * K], y[K], ref[M], absref[M];
    fill(x, M * K, KCS_FMT_FP32, 0.25, 1.0, 1);
    fill(y, K, KCS_FMT_FP32, 0.0, 1.0, 2);
    for (int op = 0; op < 2; op++) {
        for (int s = -1; s < NS; s++) {
            for (int a = 0; a < NA; a++) {
                if (s < 0 && a > 0)
                    continue; /* native: one run */
                kcs_call c = mk(op ? KCS_OP_DOT : KCS_OP_REDUCE_SUM, s < 0 ? "native" : "own",
                                s < 0 ? NULL : SCHEDS[s], ACCS[a], op ? 1 : M, 0, K);
                c.in[0] = x;
                c.in[1] = op ? y : NULL;
                double scale;
                oracle(&c, KCS_ORACLE_FP64, ref, absref, &scale);
                kcs_tensor t;
                CU_ASSERT_EQUAL(run(&c, &t), 0);
                double ua = s < 0 ? U32 : acc_u(&c.acc);
                double f = gam(K, ua) * (1.0 + U32) + U32 + gam(K, U64);
                int bad = count_over(t.data, ref, absref, c.out_len, f, NULL);
                if (bad)
                    fprintf(stderr, "  %s %s %s\n", kcs_op_name(c.op), s < 0 ? "native" : SCHEDS[s],
                            ACCS[a]);
                CU_ASSERT_EQUAL(bad, 0);
                CU_ASSERT(scale > 0.0);
                kcs_tensor_free(&t);
            }
        }
    }
}

/* fp16 spacing at 2048 is 2: 2048 + 1 is a tie to even (2048), and
 * 2048 + 3 = 2051 is a tie to 2052. x = [1, 1, 1, 1, 2048], y = 1:
 *   sequential   ((((1+1)+1)+1)+2048) = 2052 exact
 *   pairwise     [1,1] | [1 | [1,2048]]: 2 + (1 + 2048) -> 2 + 2048 = 2050
 *   blocked:2    [1,1]=2, [1,1]=2, [2048]: 0+2+2+2048 = 2052
 *   splitk:2     [1,1,1]=3, [1,2048]=2048: 3 + 2048 = 2051 -> 2052
 * native (fp32) is exact: 2052. */
static void test_sums_hand_derived(void)
{
    double x[5] = {1, 1, 1, 1, 2048}, y[5] = {1, 1, 1, 1, 1};
    const char *sched[] = {"sequential", "pairwise", "blocked:2", "splitk:2"};
    const double want[] = {2052, 2050, 2052, 2052};
    for (int op = 0; op < 2; op++)
        for (int i = 0; i < 4; i++) {
            kcs_call c = mk(op ? KCS_OP_DOT : KCS_OP_REDUCE_SUM, "own", sched[i], "fp16", 1, 0, 5);
            c.in[0] = x;
            c.in[1] = op ? y : NULL;
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            CU_ASSERT_EQUAL(t.data[0], want[i]);
            kcs_tensor_free(&t);
        }
    kcs_call c = mk(KCS_OP_DOT, "native", NULL, NULL, 1, 0, 5);
    c.in[0] = x;
    c.in[1] = y;
    kcs_tensor t;
    CU_ASSERT_EQUAL(run(&c, &t), 0);
    CU_ASSERT_EQUAL(t.data[0], 2052.0);
    kcs_tensor_free(&t);
}

/* ---- softmax --------------------------------------------------------------- */

/* With e^_j the computed exps and s^ = sum e^ (1 + theta),
 * |theta| <= gamma_k(u_acc) (positive terms), y^_j = e^_j / s^ (1 + d_j)
 * (1 + o_j) with |d_j| <= u_w, |o_j| <= u_out, so
 *   |sum_j y^_j - 1| <= (1 + u_w)(1 + u_out) / (1 - gamma_k(u_acc)) - 1,
 * plus gamma_k(2^-53) for the test's own double sum.
 * Against the oracle: d^_j = RN(x_j - max) has relative error u_w, so
 * exp(d^_j) is off by |d_j| u_w relatively, expf by at most one ulp
 * (2 u_w): each y^_j has relative error
 *   <= (|d_j| + D + 4) u_w + gamma_k(u_acc) + u_w + u_out,  D = max|d|,
 * to first order (factor 1.01 for the second-order terms). */
static void test_softmax(void)
{
    enum { M = 5, K = 128 };
    static double x[M * K], ref[M * K], absref[M * K], f[M * K];
    fill(x, M * K, KCS_FMT_FP32, 0.0, 2.0, 5);
    for (int s = -1; s < NS; s++) {
        for (int a = 0; a < NA; a++) {
            if (s < 0 && a > 0)
                continue;
            kcs_call c = mk(KCS_OP_SOFTMAX, s < 0 ? "native" : "own", s < 0 ? NULL : SCHEDS[s],
                            ACCS[a], M, 0, K);
            c.in[0] = x;
            double scale;
            oracle(&c, KCS_ORACLE_FP64, ref, absref, &scale);
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            double ua = s < 0 ? U32 : acc_u(&c.acc), g = gam(K, ua);
            double rowb = (1.0 + U32) * (1.0 + U32) / (1.0 - g) - 1.0 + gam(K, U64);
            for (int i = 0; i < M; i++) {
                double sum = 0.0, mx = -INFINITY, D = 0.0;
                for (int j = 0; j < K; j++) {
                    sum += t.data[i * K + j];
                    mx = fmax(mx, x[i * K + j]);
                }
                CU_ASSERT(fabs(sum - 1.0) <= rowb);
                for (int j = 0; j < K; j++)
                    D = fmax(D, mx - x[i * K + j]);
                for (int j = 0; j < K; j++)
                    f[i * K + j] = 1.01 * ((mx - x[i * K + j] + D + 5.0) * U32 + g + U32);
            }
            CU_ASSERT_EQUAL(count_over(t.data, ref, absref, M * K, 0, f), 0);
            kcs_tensor_free(&t);
        }
    }
}

/* Hand-derived: a constant row has d = 0, e = 1, sum = k (exact for
 * k = 128 in every accumulator here: integers <= 256 are bf16 values), so
 * y = 1/128 exactly. Max-subtraction: [100, 100] gives 0.5, 0.5 although
 * expf(100) overflows fp32 (the largest fp32 is about e^88.7). */
static void test_softmax_hand_derived(void)
{
    double x[128], big[2] = {100, 100};
    for (int i = 0; i < 128; i++)
        x[i] = 3.25;
    for (int s = -1; s < NS; s++)
        for (int a = 0; a < NA; a++) {
            if (s < 0 && a > 0)
                continue;
            kcs_call c = mk(KCS_OP_SOFTMAX, s < 0 ? "native" : "own", s < 0 ? NULL : SCHEDS[s],
                            ACCS[a], 1, 0, 128);
            c.in[0] = x;
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            int bad = 0;
            for (int j = 0; j < 128; j++)
                bad += t.data[j] != 1.0 / 128;
            CU_ASSERT_EQUAL(bad, 0);
            kcs_tensor_free(&t);
            c.k = 2;
            c.in[0] = big;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            CU_ASSERT(t.data[0] == 0.5 && t.data[1] == 0.5);
            kcs_tensor_free(&t);
        }
    CU_ASSERT(isinf(expf(100.0f)));
}

/* ---- layernorm, rmsnorm ---------------------------------------------------- */

/* First-order error of the two-pass kernels (oracle_ops.c derives absref):
 * mu is off by (gamma_k(u_acc) + u_w) mean|x|, d_j = RN(x_j - mu) by that
 * plus u_w |d_j|, the variance relatively by gamma_k(u_acc) + 3 u_w, sigma
 * by half that plus 2 u_w, then one u_w each for /sigma, *gamma, +beta and
 * u_out for the output. Collecting the coefficients of absref's terms
 * (mean|x|/sigma, |x_j|/sigma, |xh_j| rms/sigma, |beta_j|) every one is at
 * most gamma_k(u_acc) + 8 u_w + u_out; 1.01 covers second-order terms. */
static void check_norm(kcs_op op, double mean, int with_gb, uint64_t seed)
{
    enum { M = 4, K = 200 };
    static double x[M * K], g[K], b[K], ref[M * K], absref[M * K];
    fill(x, M * K, KCS_FMT_FP32, mean, 1.0, seed);
    fill(g, K, KCS_FMT_FP32, 1.0, 0.5, seed + 1);
    fill(b, K, KCS_FMT_FP32, 0.0, 0.5, seed + 2);
    for (int s = -1; s < NS; s++) {
        for (int a = 0; a < NA; a++) {
            if (s < 0 && a > 0)
                continue;
            kcs_call c = mk(op, s < 0 ? "native" : "own", s < 0 ? NULL : SCHEDS[s], ACCS[a], M, 0,
                            K);
            c.in[0] = x;
            c.in[1] = with_gb ? g : NULL;
            c.in[2] = with_gb && op == KCS_OP_LAYERNORM ? b : NULL;
            double scale;
            oracle(&c, KCS_ORACLE_FP64, ref, absref, &scale);
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            double ua = s < 0 ? U32 : acc_u(&c.acc);
            double f = 1.01 * (gam(K + 1, ua) + 8 * U32 + U32);
            int bad = count_over(t.data, ref, absref, M * K, f, NULL);
            if (bad)
                fprintf(stderr, "  %s mean=%g %s %s\n", kcs_op_name(op), mean,
                        s < 0 ? "native" : SCHEDS[s], ACCS[a]);
            CU_ASSERT_EQUAL(bad, 0);
            kcs_tensor_free(&t);
        }
    }
}

static void test_norms(void)
{
    check_norm(KCS_OP_LAYERNORM, 0.0, 1, 10);
    check_norm(KCS_OP_LAYERNORM, 0.0, 0, 11);
    /* large offset (mean/sigma = 300): the two-pass variance stays in bound */
    check_norm(KCS_OP_LAYERNORM, 300.0, 1, 12);
    check_norm(KCS_OP_RMSNORM, 0.0, 1, 13);
    check_norm(KCS_OP_RMSNORM, 2.0, 0, 14);
}

/* Hand-derived: a constant row has d = 0 exactly, so layernorm gives beta
 * (0 / sigma * gamma + beta); rmsnorm of zeros is 0. */
static void test_norms_hand_derived(void)
{
    double x[8], g[8], b[8];
    for (int i = 0; i < 8; i++) {
        x[i] = 7.5;
        g[i] = 2.0 + i;
        b[i] = -0.25 * i;
    }
    for (int v = 0; v < 2; v++) {
        kcs_call c = mk(KCS_OP_LAYERNORM, v ? "own" : "native", "pairwise", "bf16", 1, 0, 8);
        c.in[0] = x;
        c.in[1] = g;
        c.in[2] = b;
        kcs_tensor t;
        CU_ASSERT_EQUAL(run(&c, &t), 0);
        for (int i = 0; i < 8; i++)
            CU_ASSERT_EQUAL(t.data[i], b[i]);
        kcs_tensor_free(&t);
        double z[8] = {0};
        c.op = KCS_OP_RMSNORM;
        c.in[0] = z;
        CU_ASSERT_EQUAL(run(&c, &t), 0);
        for (int i = 0; i < 8; i++)
            CU_ASSERT_EQUAL(t.data[i], 0.0);
        kcs_tensor_free(&t);
    }
}

/* ---- attention ------------------------------------------------------------- */

enum { AB = 2, AM = 3, AN = 50, AK = 16 };
static double Q[AB * AM * AK], KK[AB * AN * AK], V[AB * AN * AK];

/* E = max |s_ij| (exact scores) over the batch: the scale of the softmax
 * arguments. */
static double max_score(void)
{
    double E = 0.0;
    for (int b = 0; b < AB; b++)
        for (int i = 0; i < AM; i++)
            for (int j = 0; j < AN; j++) {
                double s = 0.0;
                for (int t = 0; t < AK; t++)
                    s += Q[(b * AM + i) * AK + t] * KK[(b * AN + j) * AK + t];
                E = fmax(E, fabs(s) / sqrt((double)AK));
            }
    return E;
}

/* Bounds, as factors of absref (oracle_attention.c):
 * unfused: eps_S = gamma_{k+1}(u_acc) + 2 u_w (sum, then * RN(1/sqrt k));
 *   the softmax of the scores (length n, D <= 2E(1 + eps_S)) adds
 *   (2D + 5) u_w + gamma_{n}(u_acc) relatively to P; PV adds
 *   gamma_{n+1}(u_acc) and u_out.
 * fused: each term's weight p_j passes through exp(RN(s_j - m_b))
 *   ((2E + 2) u_w), the corrections of the later blocks (sum of |dm| <= 2E,
 *   plus 2 u_w per block) and at most n + 2 nb roundings into acc:
 *   rho = gamma_{n+2nb}(u_acc) + (4E + 2 + 2nb) u_w for both o and l, so
 *   o / l is off by 2 rho + u_w relatively to sum P|V| >= |O|.
 * Factor 1.05 for the second-order terms. */
static double bound_unfused(double ua, double uw, double uo, double E)
{
    double eS = gam(AK + 1, ua) + 2 * uw, D = 2 * E * (1 + eS);
    return 1.05 * (eS + (2 * D + 5) * uw + gam(AN, ua) + gam(AN + 1, ua) + uo);
}

static double bound_fused(double ua, double uw, double uo, double E, int block)
{
    int nb = (AN + block - 1) / block;
    double eS = gam(AK + 1, ua) + 2 * uw;
    double rho = gam(AN + 2 * nb, ua) + (4 * E + 2 + 2 * nb) * uw;
    return 1.05 * (eS + 2 * rho + uw + uo);
}

/* An attention call on Q, KK, V, with its fp64 reference in ref and
 * absref. */
static kcs_call attention(const char *variant, const char *sched, const char *acc, double *ref,
                          double *absref)
{
    kcs_call c = mk(KCS_OP_ATTENTION, variant, sched, acc, AM, AN, AK);
    c.batch = AB;
    c.in[0] = Q;
    c.in[1] = KK;
    c.in[2] = V;
    double scale;
    oracle(&c, KCS_ORACLE_FP64, ref, absref, &scale);
    return c;
}

static void test_attention(void)
{
    static double ref[AB * AM * AK], absref[AB * AM * AK], un[AB * AM * AK];
    fill(Q, sizeof Q / sizeof Q[0], KCS_FMT_FP32, 0.0, 1.0, 20);
    fill(KK, sizeof KK / sizeof KK[0], KCS_FMT_FP32, 0.0, 1.0, 21);
    fill(V, sizeof V / sizeof V[0], KCS_FMT_FP32, 0.0, 1.0, 22);
    double E = max_score();
    const char *accs[] = {"fp32", "bf16", "fp64"};
    const char *scheds[] = {"sequential", "pairwise", "atomic"};
    const char *blocks[] = {"block=1", "block=16", "", "block=64"};
    const int bval[] = {1, 16, 64, 64};
    size_t n = AB * AM * AK;
    for (int a = 0; a < 3; a++)
        for (int s = 0; s < 3; s++) {
            kcs_call c = attention("own", scheds[s], accs[a], ref, absref);
            double ua = acc_u(&c.acc), bu = bound_unfused(ua, U32, U32, E);
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            CU_ASSERT_EQUAL(count_over(t.data, ref, absref, n, bu, NULL), 0);
            memcpy(un, t.data, sizeof un);
            kcs_tensor_free(&t);
            for (int bl = 0; bl < 4; bl++) {
                c.variant = "fused";
                c.attrs = blocks[bl];
                double bf = bound_fused(ua, U32, U32, E, bval[bl]);
                CU_ASSERT_EQUAL(run(&c, &t), 0);
                CU_ASSERT_EQUAL(count_over(t.data, ref, absref, n, bf, NULL), 0);
                /* fused vs unfused: within the sum of both bounds */
                CU_ASSERT_EQUAL(count_over(t.data, un, absref, n, bf + bu, NULL), 0);
                kcs_tensor_free(&t);
            }
        }
    kcs_call c = attention("native", NULL, NULL, ref, absref);
    kcs_tensor t;
    CU_ASSERT_EQUAL(run(&c, &t), 0);
    CU_ASSERT_EQUAL(count_over(t.data, ref, absref, n, bound_unfused(U32, U32, U32, E), NULL), 0);
    kcs_tensor_free(&t);
    /* fp64 inputs and accumulator: fused and unfused agree to ~1e-13 */
    c.dtype_in = c.dtype_out = KCS_FMT_FP64;
    CU_ASSERT_FATAL(kcs_acc_parse("fp64", &c.acc) == 0);
    c.variant = "own";
    CU_ASSERT_EQUAL(run(&c, &t), 0);
    memcpy(un, t.data, sizeof un);
    kcs_tensor_free(&t);
    c.variant = "fused";
    CU_ASSERT_EQUAL(run(&c, &t), 0);
    double bf = bound_fused(U64, U64, U64, E, 64) + bound_unfused(U64, U64, U64, E);
    CU_ASSERT(bf < 1e-12);
    CU_ASSERT_EQUAL(count_over(t.data, un, absref, n, bf, NULL), 0);
    kcs_tensor_free(&t);
}

/* Hand-derived: Q = 0 makes every score 0, so P = 1/n; with n = 4 that is
 * 0.25 exactly, every partial sum of 0.25 * small integers is exact, and
 * O_ic = (V_0c + V_1c + V_2c + V_3c) / 4 for every variant (fused with
 * block=2: the second block's correction is exp(0) = 1). */
static void test_attention_hand_derived(void)
{
    double q[2 * 3] = {0}, k[4 * 3], v[4 * 3];
    for (int i = 0; i < 12; i++) {
        k[i] = (i * 7) % 5 - 2.0;
        v[i] = (i * 5) % 7 - 3.0;
    }
    const char *variants[] = {"native", "own", "fused", "fused"};
    const char *attrs[] = {"", "", "block=2", "block=3"};
    for (int vi = 0; vi < 4; vi++) {
        kcs_call c = mk(KCS_OP_ATTENTION, variants[vi], "pairwise", "fp32", 2, 4, 3);
        c.attrs = attrs[vi];
        c.in[0] = q;
        c.in[1] = k;
        c.in[2] = v;
        kcs_tensor t;
        CU_ASSERT_EQUAL(run(&c, &t), 0);
        for (int i = 0; i < 2; i++)
            for (int col = 0; col < 3; col++)
                CU_ASSERT_EQUAL(t.data[i * 3 + col],
                                (v[col] + v[3 + col] + v[6 + col] + v[9 + col]) / 4);
        kcs_tensor_free(&t);
    }
    kcs_call c = mk(KCS_OP_ATTENTION, "fused", NULL, NULL, 2, 4, 3);
    c.in[0] = q;
    c.in[1] = k;
    c.in[2] = v;
    c.attrs = "block=0";
    kcs_tensor t;
    CU_ASSERT_EQUAL(run(&c, &t), KCS_E_INVAL);
    kcs_tensor_free(&t);
}

/* ---- gather ---------------------------------------------------------------- */

static void test_gather(void)
{
    enum { M = 4, K = 3 };
    double T[M * K], ref[5 * K], absref[5 * K], scale;
    for (int i = 0; i < M * K; i++)
        T[i] = 1.5 * i - 4;
    double idx[5] = {2, 0, 3, -1, 4};
    const char *pol[] = {"oob=clamp", "oob=zero", "oob=undefined; nan=propagate"};
    const int clamp[] = {1, 0, 1};
    for (int v = 0; v < 2; v++) {
        for (int p = 0; p < 3; p++) {
            kcs_call c = mk(KCS_OP_GATHER, v ? "own" : "native", NULL, NULL, M, 5, K);
            c.attrs = pol[p];
            c.in[0] = T;
            c.in[1] = idx;
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            for (int r = 0; r < 5; r++) {
                int row = idx[r] < 0 ? 0 : idx[r] >= M ? M - 1 : (int)idx[r];
                int oob = idx[r] < 0 || idx[r] >= M;
                for (int col = 0; col < K; col++)
                    CU_ASSERT_EQUAL(t.data[r * K + col],
                                    oob && !clamp[p] ? 0.0 : T[row * K + col]);
            }
            oracle(&c, KCS_ORACLE_FP64, ref, absref, &scale);
            if (p < 2) {
                CU_ASSERT_EQUAL(memcmp(ref, t.data, sizeof ref), 0);
            } else {
                /* oob=undefined: rows read through an out-of-range index are
                 * not judged (absref < 0); the others are the table's rows */
                for (int r = 0; r < 5; r++)
                    for (int col = 0; col < K; col++) {
                        int oob = idx[r] < 0 || idx[r] >= M;
                        if (oob) {
                            CU_ASSERT(absref[r * K + col] < 0.0);
                        } else {
                            CU_ASSERT_EQUAL(ref[r * K + col], t.data[r * K + col]);
                        }
                    }
            }
            kcs_tensor_free(&t);
        }
        /* raise (also the default): the first bad index and its position */
        const char *raise[] = {"", "oob=raise"};
        for (int p = 0; p < 2; p++) {
            kcs_call c = mk(KCS_OP_GATHER, v ? "own" : "native", NULL, NULL, M, 5, K);
            char msg[128] = "";
            c.msg = msg;
            c.msg_len = sizeof msg;
            c.attrs = raise[p];
            c.in[0] = T;
            c.in[1] = idx;
            kcs_tensor t;
            CU_ASSERT_EQUAL(run(&c, &t), KCS_E_RAISED);
            CU_ASSERT_PTR_NOT_NULL(strstr(msg, "index -1 at position 3"));
            CU_ASSERT_EQUAL(kcs_tensor_count_sentinel(&t), 5 * K); /* nothing written */
            kcs_tensor_free(&t);
            kcs_error err = {0};
            CU_ASSERT_EQUAL(kcs_oracle_run(KCS_ORACLE_FP64, NULL, &c, ref, absref, &scale, &err),
                            KCS_E_RAISED);
            /* in-range indices do not raise */
            c.n = 3;
            CU_ASSERT_EQUAL(run(&c, &t), 0);
            CU_ASSERT_EQUAL(t.data[0], T[2 * K]);
            kcs_tensor_free(&t);
        }
    }
    /* bad input: non-integer index, malformed attrs, unknown policy */
    double frac[2] = {1, 0.5};
    const char *bad_attrs[] = {"oob=clamp", "oob", "oob=wrap", "oob=zero;oob=clamp"};
    for (int i = 0; i < 4; i++) {
        kcs_call c = mk(KCS_OP_GATHER, "own", NULL, NULL, M, 2, K);
        c.attrs = bad_attrs[i];
        c.in[0] = T;
        c.in[1] = i == 0 ? frac : idx;
        kcs_tensor t;
        CU_ASSERT_EQUAL(run(&c, &t), KCS_E_INVAL);
        kcs_tensor_free(&t);
    }
}

/* ---- allreduce (one process), variants ------------------------------------- */

static void test_allreduce_op_and_variants(void)
{
    double x[4] = {1.0, 1.0 + 0x1p-20, -3.0, 0x1p-30 + 1.0};
    kcs_call c = mk(KCS_OP_ALLREDUCE, "own", NULL, "bf16", 1, 0, 4);
    c.dtype_in = KCS_FMT_FP64;
    c.in[0] = x;
    kcs_tensor t;
    CU_ASSERT_EQUAL(run(&c, &t), 0);
    /* y = RN_bf16(x): 1 + 2^-20 and 1 + 2^-30 round to 1 (bf16 spacing 2^-7) */
    CU_ASSERT(t.data[0] == 1.0 && t.data[1] == 1.0 && t.data[2] == -3.0 && t.data[3] == 1.0);
    kcs_tensor_free(&t);
    /* unknown variants are unsupported, fused only exists for attention */
    kcs_op ops[] = {KCS_OP_REDUCE_SUM, KCS_OP_SOFTMAX, KCS_OP_LAYERNORM, KCS_OP_GATHER};
    for (int i = 0; i < 4; i++) {
        kcs_call d = mk(ops[i], "fused", NULL, NULL, 1, 1, 4);
        d.in[0] = d.in[1] = d.in[2] = x;
        CU_ASSERT_EQUAL(run(&d, &t), KCS_E_UNSUPPORTED);
        kcs_tensor_free(&t);
    }
}

/* The own allreduce runs as a 1 x k x P GEMM on the own GEMM's fast
 * kernels, the native one and fp64 sums row by row: each must equal the
 * per-element model (kcs_cpu_sum over the ranks' contributions, seeded per
 * element) bit for bit, for every accumulator and schedule, ragged k,
 * inputs that overflow fp16, cancel, or hold NaN and Inf. */
static int same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void test_allreduce_equals_model(void)
{
    const char *accs[] = {"fp32", "fp32:rz", "bf16", "fp16", "fp64",
                          "bits:18", "bits:21", "bits:22", "bits:12"};
    const char *scheds[] = {"sequential", "pairwise", "blocked:7", "splitk:4", "atomic"};
    kcs_format ins[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16};
    int64_t Ps[] = {2, 3, 17, 300}, ks[] = {1, 5, 16, 17, 40};
    long long outs = 0, bad = 0;
    double *x = malloc(300 * 40 * sizeof *x), *terms = malloc(300 * sizeof *terms),
           *scratch = malloc(300 * sizeof *scratch);
    CU_ASSERT_FATAL(x && terms && scratch);
    kcs_rng r;
    kcs_rng_init(&r, 77, 0xa11, 3);
    for (int vi = 0; vi < 2; vi++)
        for (size_t ai = 0; ai < sizeof accs / sizeof *accs; ai++)
            for (size_t si = 0; si < sizeof scheds / sizeof *scheds; si++)
                for (size_t pi = 0; pi < 4; pi++)
                    for (size_t ki = 0; ki < 5; ki++)
                        for (int fl = 0; fl < 3; fl++) {
                            if (vi == 0 && si > 0)
                                continue; /* native has no schedule */
                            int64_t P = Ps[pi], k = ks[ki];
                            kcs_format f = ins[(ai + si + ki + (size_t)fl) % 3];
                            for (int64_t i = 0; i < P * k; i++) {
                                double v = kcs_rng_normal(&r);
                                if (fl == 1) /* wide: fp16 overflows, sums cancel */
                                    v *= ldexp(1.0, (int)(kcs_rng_u32(&r) % 30) - 10);
                                if (fl == 2 && kcs_rng_u32(&r) % 61 == 0)
                                    v = kcs_rng_u32(&r) % 3 == 0 ? NAN
                                        : (kcs_rng_u32(&r) & 1) ? INFINITY : -INFINITY;
                                x[i] = kcs_format_round(f, v, KCS_ROUND_DEFAULT);
                            }
                            kcs_call c = mk(KCS_OP_ALLREDUCE, vi ? "own" : "native", scheds[si],
                                            accs[ai], P, 1, k);
                            c.dtype_in = f;
                            c.dtype_out = fl == 1 ? KCS_FMT_FP64 : KCS_FMT_FP32;
                            c.in[0] = x;
                            kcs_tensor t;
                            CU_ASSERT_FATAL(run(&c, &t) == 0);
                            for (int64_t i = 0; i < k; i++) {
                                double s = 0.0;
                                for (int64_t p = 0; p < P; p++)
                                    terms[p] = x[p * k + i];
                                if (vi) {
                                    s = kcs_cpu_sum(terms, P, &c.schedule, &c.acc,
                                                    c.seed ^ ((uint64_t)i << 32), scratch);
                                } else {
                                    for (int64_t p = 0; p < P; p++)
                                        s += terms[p];
                                    s = kcs_acc_round(&c.acc, s);
                                }
                                s = kcs_format_round(c.dtype_out, s, KCS_ROUND_DEFAULT);
                                outs++;
                                if (!same_bits(s, t.data[i]) && bad++ < 5)
                                    fprintf(stderr, "allreduce %s %s %s P=%lld k=%lld i=%lld: %a vs model %a\n",
                                            c.variant, accs[ai], scheds[si], (long long)P,
                                            (long long)k, (long long)i, t.data[i], s);
                            }
                            kcs_tensor_free(&t);
                        }
    fprintf(stderr, "allreduce vs model: %lld outputs, %lld differ\n", outs, bad);
    CU_ASSERT(outs > 10000);
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(terms);
    free(scratch);
}

static const ut_test tests[] = {
    {"reduce_sum, dot vs fp64 (gamma_k bound)", test_sums_vs_oracle},
    {"sums: schedules differ (fp16, hand-derived)", test_sums_hand_derived},
    {"softmax: rows sum to 1, vs fp64", test_softmax},
    {"softmax: hand-derived", test_softmax_hand_derived},
    {"layernorm, rmsnorm vs fp64", test_norms},
    {"norms: hand-derived", test_norms_hand_derived},
    {"attention: unfused, fused, native vs fp64", test_attention},
    {"attention: hand-derived", test_attention_hand_derived},
    {"gather: raise, clamp, zero", test_gather},
    {"allreduce (one process), variants", test_allreduce_op_and_variants},
    {"allreduce equals the per-element model", test_allreduce_equals_model},
};

UT_MAIN_FIXTURE("cpu ops vs oracles", open_cpu, close_cpu, tests)
