/* Unit tests for the OpenCL backend (backends/opencl, backends/kernels) on
 * the first PoCL device (or the first device when there is no PoCL).
 * References are computed here, independently of the kernels:
 *   - fp64 C computations with componentwise error bounds derived from
 *     first principles (Higham's gamma_k for sums, the OpenCL C ulp limits
 *     of exp/divide/sqrt);
 *   - bit-for-bit C re-implementations of the own schedules' definitions
 *     (kernels/common.cl): sequential = fmaf steps, pairwise = recursive
 *     halving, blocked/splitk = chunked sums, in float (or double) here.
 * Outputs are surrounded by guard doubles holding a sentinel; every test
 * checks the guards. No OpenCL device fails the suite unless
 * KCS_TEST_ALLOW_NO_OPENCL=1. */
#include "backend.h"
#include "elementwise.h"
#include "error.h"
#include "format.h"
#include "op.h"

#include <CUnit/Basic.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_helpers.h"

#ifdef KCS_HAVE_OPENCL
/* the opencl module's table (backends/registry.c loads it in main) */
static const kcs_backend_ops *ops;
static kcs_backend_ctx *ctx;
static int dev = -1;

#define SENT (-777.25)
#define GUARD 16
#define U32 (ldexp(1.0, -24))

/* ---- deterministic inputs ------------------------------------------------ */
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double unif(void) /* [-1, 1) with 24 random bits: exact in fp32 */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return ldexp((double)(int64_t)((rng_state >> 40) & 0xffffff) - 8388608.0, -23);
}
/* Types of the calls mkcall makes (test_types varies them); inputs are
 * rounded to t_in (fp64 inputs stay fp32 values, exact either way). */
static kcs_format t_in = KCS_FMT_FP32, t_out = KCS_FMT_FP32;
static kcs_format t_acc = KCS_FMT_FP32;
static double *randv(size_t n, double scale)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i] = unif() * scale;
        if (t_in != KCS_FMT_FP32 && t_in != KCS_FMT_FP64)
            v[i] = kcs_format_round(t_in, v[i], KCS_ROUND_DEFAULT);
    }
    return v;
}

/* ---- guarded outputs --------------------------------------------------- */
typedef struct {
    double *base;
    double *out;
    size_t n;
} gbuf;
static gbuf galloc(size_t n)
{
    gbuf g;
    g.n = n;
    g.base = malloc((n + 2 * GUARD) * sizeof(double));
    for (size_t i = 0; i < n + 2 * GUARD; i++)
        g.base[i] = SENT;
    g.out = g.base + GUARD;
    return g;
}
static int guards_ok(const gbuf *g)
{
    for (size_t i = 0; i < GUARD; i++)
        if (g->base[i] != SENT || g->out[g->n + i] != SENT)
            return 0;
    return 1;
}
static int all_written(const gbuf *g)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->out[i] == SENT)
            return 0;
    return 1;
}

static kcs_call mkcall(kcs_op op, const char *variant, int64_t m, int64_t n, int64_t k)
{
    kcs_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.variant = variant;
    c.schedule.kind = KCS_SCHED_SEQUENTIAL;
    c.dtype_in = t_in;
    c.dtype_out = t_out;
    c.acc.fmt = t_acc;
    c.m = m;
    c.n = n;
    c.k = k;
    return c;
}
static void setin(kcs_call *c, int i, const double *x)
{
    c->in[i] = x;
    c->in_len[i] = kcs_op_in_len(c, i);
}
static int run(kcs_call *c, gbuf *g)
{
    kcs_error err = {0};
    c->out = g->out;
    c->out_len = g->n;
    int rc = ops->run(ctx, c, &err);
    if (rc && rc != KCS_E_RAISED)
        fprintf(stderr, "\n  run(%s, %s): %s\n", kcs_op_name(c->op), c->variant, err.msg);
    return rc;
}
/* Run c into a fresh guarded buffer of n values; the run must succeed. */
static gbuf run_new(kcs_call *c, size_t n)
{
    gbuf g = galloc(n);
    CU_ASSERT_EQUAL_FATAL(run(c, &g), 0);
    return g;
}

/* ---- references -------------------------------------------------------- */
/* Schedules as defined in kernels/common.cl, on float (acc fp32) terms
 * given by a and b (products) or a alone (b == NULL). */
typedef struct {
    const float *a, *b;
    size_t sa, sb;
} terms;
static float tstep(float s, const terms *t, int64_t i)
{
    if (!t->b)
        return s + t->a[i * t->sa];
    return fmaf(t->a[i * t->sa], t->b[i * t->sb], s);
}
static float tleaf(const terms *t, int64_t i)
{
    if (!t->b)
        return t->a[i * t->sa];
    float p = t->a[i * t->sa] * t->b[i * t->sb];
    return p;
}
static float seq_f(const terms *t, int64_t lo, int64_t hi)
{
    float s = 0.0f;
    for (int64_t i = lo; i < hi; i++)
        s = tstep(s, t, i);
    return s;
}
static float pair_f(const terms *t, int64_t lo, int64_t n)
{
    if (n == 0)
        return 0.0f;
    if (n == 1)
        return tleaf(t, lo);
    int64_t h = n / 2;
    float l = pair_f(t, lo, h);
    float r = pair_f(t, lo + h, n - h);
    return l + r;
}
static float chunks_f(const terms *t, int64_t n, int64_t chunk)
{
    float tot = 0.0f;
    for (int64_t s = 0; s < n; s += chunk) {
        float b = seq_f(t, s, s + chunk < n ? s + chunk : n);
        tot = tot + b;
    }
    return tot;
}
static float sched_f(const kcs_schedule *s, const terms *t, int64_t n)
{
    switch (s->kind) {
    case KCS_SCHED_PAIRWISE: return pair_f(t, 0, n);
    case KCS_SCHED_BLOCKED: return chunks_f(t, n, s->param);
    case KCS_SCHED_SPLITK: {
        int64_t c = (n + s->param - 1) / s->param;
        return chunks_f(t, n, c > 0 ? c : 1);
    }
    default: return seq_f(t, 0, n);
    }
}

static float *tof(const double *x, size_t n)
{
    float *f = malloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)x[i];
    return f;
}

/* ---- suite setup ------------------------------------------------------- */
static int suite_init(void)
{
    kcs_device_info d[KCS_MAX_DEVICES];
    int n = 0;
    kcs_error err = {0};
    int rc = ops->discover(d, KCS_MAX_DEVICES, &n, &err);
    if (rc) {
        fprintf(stderr, "opencl discover: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < n && dev < 0; i++)
        if (strstr(d[i].runtime, "PoCL") || strstr(d[i].arch, "PoCL"))
            dev = i;
    if (dev < 0)
        dev = 0;
    kcs_backend_config cfg = {0};
    rc = ops->open(dev, &cfg, &ctx, &err);
    if (rc) {
        fprintf(stderr, "opencl open(%d): %s\n", dev, err.msg);
        return 1;
    }
    fprintf(stderr, "opencl test device %d: %s (%s)\n", dev, d[dev].model, d[dev].runtime);
    return 0;
}
static int suite_clean(void)
{
    if (ctx)
        ops->close(ctx);
    return 0;
}

/* ---- discovery --------------------------------------------------------- */
static void test_discover(void)
{
    kcs_device_info a[KCS_MAX_DEVICES], b[KCS_MAX_DEVICES], info;
    int na = 0, nb = 0;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ops->discover(a, KCS_MAX_DEVICES, &na, &err), 0);
    CU_ASSERT_EQUAL_FATAL(ops->discover(b, KCS_MAX_DEVICES, &nb, &err), 0);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT(na >= 1);
    for (int i = 0; i < na; i++) {
        CU_ASSERT_STRING_EQUAL(a[i].backend, "opencl");
        CU_ASSERT_EQUAL(a[i].index, i);
        CU_ASSERT(a[i].model[0] && a[i].vendor[0] && a[i].arch[0] && a[i].driver[0]);
        CU_ASSERT(strncmp(a[i].runtime, "OpenCL ", 7) == 0); /* CL_PLATFORM_VERSION form */
        CU_ASSERT(strlen(a[i].uuid) > 4);
        CU_ASSERT_STRING_EQUAL(a[i].uuid, b[i].uuid); /* stable */
        for (int j = 0; j < i; j++)
            CU_ASSERT(strcmp(a[i].uuid, a[j].uuid) != 0);
    }
    CU_ASSERT_EQUAL(ops->describe(ctx, &info, &err), 0);
    CU_ASSERT_STRING_EQUAL(info.uuid, a[dev].uuid);
    CU_ASSERT_STRING_EQUAL(info.model, a[dev].model);
    /* max limits what is filled */
    int n1 = 0;
    CU_ASSERT_EQUAL(ops->discover(a, 1, &n1, &err), 0);
    CU_ASSERT_EQUAL(n1, 1);
    kcs_backend_ctx *c2 = NULL;
    CU_ASSERT_EQUAL(ops->open(na, &(kcs_backend_config){0}, &c2, &err), KCS_E_NODEV);
    CU_ASSERT_PTR_NULL(c2);
}

/* ---- gemm -------------------------------------------------------------- */
/* D = C + A·B against fp64 with |D - Dref| <= gamma_{k+1} (|C| + |A||B|),
 * gamma_j = j*u/(1 - j*u) <= 2*j*u, u = 2^-24 (fp32 accumulation and
 * output). */
static void check_gemm_bound(const char *variant, const kcs_schedule *s, int64_t batch,
                             int64_t m, int64_t n, int64_t k, int with_c)
{
    kcs_call c = mkcall(batch > 1 ? KCS_OP_BATCHED_GEMM : KCS_OP_GEMM, variant, m, n, k);
    c.batch = batch;
    if (s)
        c.schedule = *s;
    double *A = randv((size_t)(batch * m * k), 1), *B = randv((size_t)(batch * k * n), 1);
    double *C = with_c ? randv((size_t)(batch * m * n), 4) : NULL;
    setin(&c, 0, A);
    setin(&c, 1, B);
    if (C)
        setin(&c, 2, C);
    gbuf g = run_new(&c, kcs_op_out_len(&c));
    int bad = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double ref = C ? C[(b * m + i) * n + j] : 0, mag = fabs(ref);
                for (int64_t t = 0; t < k; t++) {
                    double p = A[(b * m + i) * k + t] * B[(b * k + t) * n + j];
                    ref += p;
                    mag += fabs(p);
                }
                double d = g.out[(b * m + i) * n + j];
                if (!(fabs(d - ref) <= 2.0 * (double)(k + 1) * U32 * mag))
                    bad++;
                if (t_out == KCS_FMT_FP32 && (double)(float)d != d)
                    bad++; /* dtype_out fp32 */
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(guards_ok(&g));
    CU_ASSERT(all_written(&g));
    free(A);
    free(B);
    free(C);
    free(g.base);
}

static const kcs_schedule scheds[] = {
    {KCS_SCHED_SEQUENTIAL, 0}, {KCS_SCHED_PAIRWISE, 0}, {KCS_SCHED_BLOCKED, 8},
    {KCS_SCHED_BLOCKED, 100},  {KCS_SCHED_SPLITK, 3},   {KCS_SCHED_SPLITK, 1000},
};
#define N_SCHED (sizeof scheds / sizeof scheds[0])

static void test_gemm_bound(void)
{
    /* shapes off the 64/16 tile grid, k = 1, and an empty reduction */
    check_gemm_bound("native", NULL, 1, 67, 45, 83, 0);
    check_gemm_bound("native", NULL, 1, 67, 45, 83, 1);
    check_gemm_bound("native", NULL, 1, 130, 70, 1, 1);
    check_gemm_bound("native", NULL, 3, 5, 7, 19, 1);
    check_gemm_bound("native", NULL, 1, 3, 4, 0, 1);
    for (size_t s = 0; s < N_SCHED; s++) {
        check_gemm_bound("own", &scheds[s], 1, 13, 11, 77, 1);
        check_gemm_bound("own", &scheds[s], 2, 9, 5, 40, 0);
    }
}

/* own schedules equal their C definitions bit for bit (fp32 accumulator). */
static void test_gemm_bitwise(void)
{
    const int64_t m = 7, n = 9, k = 131;
    double *A = randv(m * k, 1), *B = randv(k * n, 1), *C = randv(m * n, 2);
    float *fa = tof(A, m * k), *fb = tof(B, k * n), *fc = tof(C, m * n);
    for (size_t s = 0; s < N_SCHED; s++) {
        for (int with_c = 0; with_c < 2; with_c++) {
            kcs_call c = mkcall(KCS_OP_GEMM, "own", m, n, k);
            c.schedule = scheds[s];
            setin(&c, 0, A);
            setin(&c, 1, B);
            if (with_c)
                setin(&c, 2, C);
            gbuf g = run_new(&c, m * n);
            int bad = 0;
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    terms t = {fa + i * k, fb + j, 1, (size_t)n};
                    float r = sched_f(&scheds[s], &t, k);
                    if (with_c)
                        r = r + fc[i * n + j];
                    if (g.out[i * n + j] != (double)r)
                        bad++;
                }
            CU_ASSERT_EQUAL(bad, 0);
            if (bad)
                fprintf(stderr, "\n  schedule %d/%lld with_c=%d: %d mismatches\n",
                        (int)scheds[s].kind, (long long)scheds[s].param, with_c, bad);
            CU_ASSERT(guards_ok(&g));
            free(g.base);
        }
    }
    /* splitk:S across work-items == blocked:ceil(k/S) inside one */
    kcs_call c1 = mkcall(KCS_OP_GEMM, "own", m, n, k), c2 = c1;
    c1.schedule = (kcs_schedule){KCS_SCHED_SPLITK, 4};
    c2.schedule = (kcs_schedule){KCS_SCHED_BLOCKED, (k + 3) / 4};
    setin(&c1, 0, A);
    setin(&c1, 1, B);
    setin(&c2, 0, A);
    setin(&c2, 1, B);
    gbuf g1 = galloc(m * n), g2 = galloc(m * n);
    CU_ASSERT_EQUAL(run(&c1, &g1), 0);
    CU_ASSERT_EQUAL(run(&c2, &g2), 0);
    CU_ASSERT_EQUAL(memcmp(g1.out, g2.out, m * n * sizeof(double)), 0);
    free(g1.base);
    free(g2.base);
    free(A);
    free(B);
    free(C);
    free(fa);
    free(fb);
    free(fc);
}

/* Both native gemm kernels (gemm_vec on CPU devices, gemm_tiled on GPUs;
 * -DKCS_GEMM_TILED selects the latter anywhere) add the k products in order
 * with fma from 0, then C: the value of own sequential, bit for bit, on
 * tile-edge shapes, batched, for each input storage and accumulator. */
static void test_gemm_native_is_sequential(void)
{
    kcs_error err = {0};
    kcs_backend_ctx *tiled = NULL;
    kcs_backend_config cfg = {0};
    cfg.options = "-DKCS_GEMM_TILED";
    CU_ASSERT_EQUAL_FATAL(ops->open(dev, &cfg, &tiled, &err), 0);
    const int64_t batch = 2, m = 67, n = 45, k = 83;
    const kcs_format fin[4] = {KCS_FMT_FP32, KCS_FMT_FP16, KCS_FMT_BF16, KCS_FMT_FP64};
    for (int f = 0; f < 4; f++) {
        for (int acc = 0; acc < 2; acc++) {
            double *A = randv(batch * m * k, 1), *B = randv(batch * k * n, 1),
                   *C = randv(batch * m * n, 3);
            for (size_t i = 0; i < (size_t)(batch * m * k); i++)
                A[i] = kcs_format_round(fin[f], A[i], KCS_ROUND_DEFAULT);
            for (size_t i = 0; i < (size_t)(batch * k * n); i++)
                B[i] = kcs_format_round(fin[f], B[i], KCS_ROUND_DEFAULT);
            for (size_t i = 0; i < (size_t)(batch * m * n); i++)
                C[i] = kcs_format_round(fin[f], C[i], KCS_ROUND_DEFAULT);
            kcs_call c = mkcall(KCS_OP_BATCHED_GEMM, "own", m, n, k);
            c.batch = batch;
            c.dtype_in = fin[f];
            c.dtype_out = KCS_FMT_FP64;
            c.acc.fmt = acc ? KCS_FMT_FP64 : KCS_FMT_FP32;
            setin(&c, 0, A);
            setin(&c, 1, B);
            setin(&c, 2, C);
            gbuf gs = galloc(batch * m * n), gv = galloc(batch * m * n), gt = galloc(batch * m * n);
            int rc = run(&c, &gs);
            if (rc == KCS_E_UNSUPPORTED) /* no fp64 */
                goto next;
            CU_ASSERT_EQUAL(rc, 0);
            c.variant = "native";
            CU_ASSERT_EQUAL(run(&c, &gv), 0);
            c.out = gt.out;
            CU_ASSERT_EQUAL(ops->run(tiled, &c, &err), 0);
            CU_ASSERT_EQUAL(memcmp(gs.out, gv.out, gs.n * sizeof(double)), 0);
            CU_ASSERT_EQUAL(memcmp(gs.out, gt.out, gs.n * sizeof(double)), 0);
            CU_ASSERT(guards_ok(&gs) && guards_ok(&gv) && guards_ok(&gt));
        next:
            free(gs.base);
            free(gv.base);
            free(gt.base);
            free(A);
            free(B);
            free(C);
        }
    }
    ops->close(tiled);
}

/* fp64 inputs + fp64 accumulator: s = s + RN(a*b) (the cpu backend's own
 * semantics for 53-bit inputs); fp32 inputs + fp64 accumulator: fma in
 * double (exact products). dot = the 1 x k by k x 1 product. */
static void test_gemm_fp64(void)
{
    const int64_t m = 5, n = 6, k = 200;
    double *A = randv(m * k, 1), *B = randv(k * n, 1);
    for (size_t i = 0; i < (size_t)(m * k); i++)
        A[i] += ldexp(unif(), -30); /* not representable in fp32 */
    kcs_call c = mkcall(KCS_OP_GEMM, "own", m, n, k);
    c.dtype_in = c.dtype_out = KCS_FMT_FP64;
    c.acc.fmt = KCS_FMT_FP64;
    setin(&c, 0, A);
    setin(&c, 1, B);
    gbuf g = galloc(m * n);
    int rc = run(&c, &g);
    if (rc == KCS_E_UNSUPPORTED) { /* a device without cl_khr_fp64 */
        fprintf(stderr, "\n  no fp64 on this device: skipped\n");
        free(A);
        free(B);
        free(g.base);
        return;
    }
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    int bad = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t t = 0; t < k; t++) {
                double p = A[i * k + t] * B[t * n + j];
                s = s + p;
            }
            bad += g.out[i * n + j] != s;
        }
    CU_ASSERT_EQUAL(bad, 0);
    /* fp32 inputs are refused as not exact in fp32 storage */
    c.dtype_in = KCS_FMT_FP32;
    kcs_error err = {0};
    c.out = g.out;
    c.out_len = g.n;
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    free(A);
    /* dot, fp32 inputs, fp64 accumulator */
    double *x = randv(1000, 1), *y = randv(1000, 1);
    kcs_call d = mkcall(KCS_OP_DOT, "own", 0, 0, 1000);
    d.acc.fmt = KCS_FMT_FP64;
    d.dtype_out = KCS_FMT_FP64;
    setin(&d, 0, x);
    setin(&d, 1, y);
    gbuf gd = galloc(1);
    CU_ASSERT_EQUAL(run(&d, &gd), 0);
    double s = 0;
    for (int t = 0; t < 1000; t++)
        s = fma(x[t], y[t], s);
    CU_ASSERT_EQUAL(gd.out[0], s);
    CU_ASSERT(guards_ok(&gd) && guards_ok(&g));
    free(x);
    free(y);
    free(B);
    free(g.base);
    free(gd.base);
}

/* fp16 / bf16 inputs travel as 16-bit storage; arithmetic in fp32. */
static void test_gemm_half(void)
{
    const int64_t m = 6, n = 5, k = 64;
    const kcs_format fmts[2] = {KCS_FMT_FP16, KCS_FMT_BF16};
    for (int f = 0; f < 2; f++) {
        double *A = randv(m * k, 1), *B = randv(k * n, 1);
        for (size_t i = 0; i < (size_t)(m * k); i++)
            A[i] = kcs_format_round(fmts[f], A[i], KCS_ROUND_DEFAULT);
        for (size_t i = 0; i < (size_t)(k * n); i++)
            B[i] = kcs_format_round(fmts[f], B[i], KCS_ROUND_DEFAULT);
        float *fa = tof(A, m * k), *fb = tof(B, k * n);
        kcs_call c = mkcall(KCS_OP_GEMM, "own", m, n, k);
        c.dtype_in = fmts[f];
        c.dtype_out = fmts[f];
        setin(&c, 0, A);
        setin(&c, 1, B);
        gbuf g = run_new(&c, m * n);
        int bad = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                terms t = {fa + i * k, fb + j, 1, (size_t)n};
                double r = kcs_format_round(fmts[f], seq_f(&t, 0, k), KCS_ROUND_DEFAULT);
                bad += g.out[i * n + j] != r;
            }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(guards_ok(&g));
        /* a value not exact in the declared format is refused */
        A[3] = 1.0 + ldexp(1.0, -20);
        kcs_error err = {0};
        CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
        free(A);
        free(B);
        free(fa);
        free(fb);
        free(g.base);
    }
}

/* ---- reduce_sum -------------------------------------------------------- */
static void test_reduce_sum(void)
{
    const int64_t m = 9, k = 1001;
    double *X = randv(m * k, 1);
    float *fx = tof(X, m * k);
    for (size_t s = 0; s < N_SCHED; s++) {
        kcs_call c = mkcall(KCS_OP_REDUCE_SUM, "own", m, 0, k);
        c.schedule = scheds[s];
        setin(&c, 0, X);
        gbuf g = run_new(&c, m);
        int bad = 0;
        for (int64_t i = 0; i < m; i++) {
            terms t = {fx + i * k, NULL, 1, 0};
            bad += g.out[i] != (double)sched_f(&scheds[s], &t, k);
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(guards_ok(&g));
        free(g.base);
    }
    kcs_call c = mkcall(KCS_OP_REDUCE_SUM, "native", m, 0, k);
    setin(&c, 0, X);
    gbuf g = run_new(&c, m);
    for (int64_t i = 0; i < m; i++) {
        double r = 0, mag = 0;
        for (int64_t t = 0; t < k; t++) {
            r += X[i * k + t];
            mag += fabs(X[i * k + t]);
        }
        CU_ASSERT(fabs(g.out[i] - r) <= 2.0 * (double)k * U32 * mag);
    }
    CU_ASSERT(guards_ok(&g) && all_written(&g));
    free(g.base);
    free(X);
    free(fx);
}

/* ---- softmax ----------------------------------------------------------- */
/* Per element: |x - max| <= R gives a subtraction error <= R*u, exp adds at
 * most 3 ulp = 6u (OpenCL C float exp), the sum gamma_k, the division 2.5
 * ulp = 5u (own) or 1/s then a product (native): |y - yref| <= (2k + 4R +
 * 40) u yref. */
static void check_softmax(const char *variant, const kcs_schedule *s, double shift)
{
    const int64_t m = 6, k = 300;
    double *X = randv(m * k, 4);
    for (size_t i = 0; i < (size_t)(m * k); i++)
        X[i] = (float)(X[i] + shift); /* 100: exp(x) overflows fp32 without max-subtraction */
    kcs_call c = mkcall(KCS_OP_SOFTMAX, variant, m, 0, k);
    if (s)
        c.schedule = *s;
    setin(&c, 0, X);
    gbuf g = run_new(&c, m * k);
    int bad = 0;
    for (int64_t i = 0; i < m; i++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t t = 0; t < k; t++)
            mx = fmax(mx, X[i * k + t]);
        for (int64_t t = 0; t < k; t++)
            sum += exp(X[i * k + t] - mx);
        for (int64_t t = 0; t < k; t++) {
            double ref = exp(X[i * k + t] - mx) / sum;
            if (!(fabs(g.out[i * k + t] - ref) <= (2.0 * k + 4 * 8 + 40) * U32 * ref))
                bad++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(guards_ok(&g) && all_written(&g));
    free(g.base);
    free(X);
}
static void test_softmax(void)
{
    for (size_t s = 0; s < N_SCHED; s++)
        check_softmax("own", &scheds[s], 0);
    check_softmax("own", NULL, 100);
    check_softmax("native", NULL, 0);
    check_softmax("native", NULL, 100);
}

/* ---- layernorm / rmsnorm ----------------------------------------------- */
/* fp64 reference; the bound (4k + 64) u (|yref| + |gamma| + |beta|) covers
 * gamma_k in each of the two sums (relative to sum |x| ~ k/2 against sigma
 * ~ 0.58 for uniform [-1, 1] data, so the mean's absolute error stays below
 * k u |g|), sqrt/rsqrt (<= 3 ulp), the division (2.5 ulp) and the
 * final multiply-add. */
static void check_norm(kcs_op op, const char *variant, const kcs_schedule *s, int affine)
{
    const int64_t m = 5, k = 257;
    double *X = randv(m * k, 1), *G = randv(k, 2), *Bt = randv(k, 1);
    kcs_call c = mkcall(op, variant, m, 0, k);
    if (s)
        c.schedule = *s;
    setin(&c, 0, X);
    if (affine) {
        setin(&c, 1, G);
        if (op == KCS_OP_LAYERNORM)
            setin(&c, 2, Bt);
    }
    gbuf g = run_new(&c, m * k);
    int bad = 0;
    for (int64_t i = 0; i < m; i++) {
        const double *x = X + i * k;
        double mu = 0, var = 0;
        if (op == KCS_OP_LAYERNORM) {
            for (int64_t t = 0; t < k; t++)
                mu += x[t];
            mu /= (double)k;
        }
        for (int64_t t = 0; t < k; t++)
            var += (x[t] - mu) * (x[t] - mu);
        var /= (double)k;
        double den = sqrt(var + 1e-5);
        for (int64_t t = 0; t < k; t++) {
            double gt = affine ? G[t] : 1, bt = affine && op == KCS_OP_LAYERNORM ? Bt[t] : 0;
            double ref = (x[t] - mu) / den * gt + bt;
            double tol = (4.0 * k + 64) * U32 * (fabs(ref) + fabs(gt) + fabs(bt));
            if (!(fabs(g.out[i * k + t] - ref) <= tol))
                bad++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(guards_ok(&g) && all_written(&g));
    free(g.base);
    free(X);
    free(G);
    free(Bt);
}
static void test_norms(void)
{
    for (int op = 0; op < 2; op++) {
        kcs_op o = op ? KCS_OP_RMSNORM : KCS_OP_LAYERNORM;
        for (size_t s = 0; s < N_SCHED; s++)
            check_norm(o, "own", &scheds[s], 1);
        check_norm(o, "own", NULL, 0);
        check_norm(o, "native", NULL, 1);
        check_norm(o, "native", NULL, 0);
    }
}

/* ---- attention --------------------------------------------------------- */
/* Scores: gamma_d sum|q||k| / sqrt(d) <= d^1.5 u absolute (|q|,|k| <= 1),
 * which is a relative error of the same size in each p (exp); plus the
 * softmax (n + 30) u, the P·V sum gamma_n, rounding of the online rescales
 * (native): |o - oref| <= (2 d^1.5 + 4n + 64) u sum_j pref_j |v_jc|. */
static void check_attention(const char *variant, const kcs_schedule *s, int64_t batch, int64_t m,
                            int64_t n, int64_t d, const char *attrs)
{
    kcs_call c = mkcall(KCS_OP_ATTENTION, variant, m, n, d);
    c.batch = batch;
    c.attrs = attrs;
    if (s)
        c.schedule = *s;
    double *Q = randv(batch * m * d, 1), *K = randv(batch * n * d, 1),
           *V = randv(batch * n * d, 1);
    setin(&c, 0, Q);
    setin(&c, 1, K);
    setin(&c, 2, V);
    gbuf g = run_new(&c, kcs_op_out_len(&c));
    double *p = malloc(n * sizeof *p);
    int bad = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; j++) {
                double sc = 0;
                for (int64_t t = 0; t < d; t++)
                    sc += Q[(b * m + i) * d + t] * K[(b * n + j) * d + t];
                p[j] = sc / sqrt((double)d);
                mx = fmax(mx, p[j]);
            }
            for (int64_t j = 0; j < n; j++)
                sum += (p[j] = exp(p[j] - mx));
            for (int64_t cc = 0; cc < d; cc++) {
                double ref = 0, mag = 0;
                for (int64_t j = 0; j < n; j++) {
                    ref += p[j] / sum * V[(b * n + j) * d + cc];
                    mag += p[j] / sum * fabs(V[(b * n + j) * d + cc]);
                }
                double tol = (2.0 * d * sqrt((double)d) + 4.0 * n + 64) * U32 * mag;
                if (!(fabs(g.out[(b * m + i) * d + cc] - ref) <= tol))
                    bad++;
            }
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(guards_ok(&g) && all_written(&g));
    free(p);
    free(g.base);
    free(Q);
    free(K);
    free(V);
}
static void test_attention(void)
{
    check_attention("native", NULL, 2, 7, 150, 16, NULL); /* n spans 3 key blocks */
    check_attention("native", NULL, 1, 3, 10, 130, NULL); /* d > work-group size */
    check_attention("native", NULL, 1, 4, 150, 16, "block=7");
    check_attention("native", NULL, 1, 4, 150, 16, "block=150");
    check_attention("native", NULL, 1, 4, 150, 16, "block=1000"); /* one block of n */
    for (size_t s = 0; s < N_SCHED; s++) {
        check_attention("own", &scheds[s], 2, 5, 37, 24, NULL);
        check_attention("fused", &scheds[s], 2, 5, 37, 24, "block=10");
    }
    /* no keys: refused */
    double one = 1;
    kcs_call c0 = mkcall(KCS_OP_ATTENTION, "own", 1, 0, 1);
    setin(&c0, 0, &one);
    setin(&c0, 1, &one);
    setin(&c0, 2, &one);
    gbuf g0 = galloc(1);
    kcs_error e0 = {0};
    c0.out = g0.out;
    c0.out_len = 1;
    CU_ASSERT_EQUAL(ops->run(ctx, &c0, &e0), KCS_E_INVAL);
    c0.n = 1;
    c0.variant = "native";
    c0.attrs = "block=0";
    CU_ASSERT_EQUAL(ops->run(ctx, &c0, &e0), KCS_E_INVAL);
    CU_ASSERT(guards_ok(&g0) && g0.out[0] == SENT);
    free(g0.base);
    /* head dimension beyond the fused kernel's columns: unsupported */
    kcs_call c = mkcall(KCS_OP_ATTENTION, "native", 1, 1, 5000);
    double *z = calloc(5000, sizeof *z);
    setin(&c, 0, z);
    setin(&c, 1, z);
    setin(&c, 2, z);
    gbuf g = galloc(5000);
    kcs_error err = {0};
    c.out = g.out;
    c.out_len = g.n;
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_UNSUPPORTED);
    CU_ASSERT(guards_ok(&g) && g.out[0] == SENT);
    free(z);
    free(g.base);
}

/* ---- gather ------------------------------------------------------------ */
static void test_gather(void)
{
    const int64_t m = 10, k = 7, n = 6;
    double *T = randv(m * k, 1);
    double idx[6] = {3, 0, 9, -1, 10, 4};
    const char *modes[3] = {"oob=clamp", "oob=zero", "nan=propagate;oob=undefined"};
    for (int md = 0; md < 3; md++) {
        kcs_call c = mkcall(KCS_OP_GATHER, "native", m, n, k);
        c.attrs = modes[md];
        setin(&c, 0, T);
        setin(&c, 1, idx);
        gbuf g = run_new(&c, n * k);
        int bad = 0;
        for (int64_t p = 0; p < n; p++) {
            int64_t r = (int64_t)idx[p];
            int oob = r < 0 || r >= m;
            if (oob)
                r = r < 0 ? 0 : m - 1; /* clamp; undefined is served as clamp */
            for (int64_t t = 0; t < k; t++) {
                double want = oob && md == 1 ? 0.0 : T[r * k + t];
                bad += g.out[p * k + t] != want;
            }
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(guards_ok(&g));
        free(g.base);
    }
    /* raise (explicit and default): KCS_E_RAISED naming the first bad index,
     * no output written */
    const char *raise_attrs[2] = {"oob=raise", NULL};
    for (int a = 0; a < 2; a++) {
        kcs_call c = mkcall(KCS_OP_GATHER, "own", m, n, k);
        c.attrs = raise_attrs[a];
        setin(&c, 0, T);
        setin(&c, 1, idx);
        char msg[200] = "";
        c.msg = msg;
        c.msg_len = sizeof msg;
        gbuf g = galloc(n * k);
        CU_ASSERT_EQUAL(run(&c, &g), KCS_E_RAISED);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "-1"));        /* idx[3], the first bad one */
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "position 3")); /* not 10 at position 4 */
        int untouched = 1;
        for (size_t i = 0; i < g.n; i++)
            untouched &= g.out[i] == SENT;
        CU_ASSERT(untouched && guards_ok(&g));
        free(g.base);
    }
    /* all in range under raise: a plain copy */
    double ok_idx[3] = {9, 9, 0};
    kcs_call c = mkcall(KCS_OP_GATHER, "native", m, 3, k);
    setin(&c, 0, T);
    setin(&c, 1, ok_idx);
    gbuf g = galloc(3 * k);
    CU_ASSERT_EQUAL(run(&c, &g), 0);
    CU_ASSERT_EQUAL(memcmp(g.out, T + 9 * k, k * sizeof(double)), 0);
    CU_ASSERT_EQUAL(memcmp(g.out + 2 * k, T, k * sizeof(double)), 0);
    /* non-integer index, unknown mode */
    double frac[3] = {1, 2.5, 0};
    setin(&c, 1, frac);
    kcs_error err = {0};
    c.out = g.out;
    c.out_len = g.n;
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    double inf_idx[3] = {1, INFINITY, 0};
    setin(&c, 1, inf_idx);
    c.attrs = "oob=zero";
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    setin(&c, 1, ok_idx);
    c.attrs = "oob=wrap";
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    c.attrs = "oob=clamp;oob=zero"; /* malformed: a key twice */
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    c.attrs = "oob=clamp";
    c.m = 0; /* clamp into an empty table */
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    CU_ASSERT(guards_ok(&g));
    free(g.base);
    free(T);
}

/* ---- every (input storage, accumulator) build of every kernel file ------ */
/* Build f of 4 (input storage fp32, fp16, bf16, fp64) with accumulator a
 * of 2 (fp32, fp64), fp64 output. */
static void set_types(int f, int a)
{
    const kcs_format fin[4] = {KCS_FMT_FP32, KCS_FMT_FP16, KCS_FMT_BF16, KCS_FMT_FP64};
    const kcs_format facc[2] = {KCS_FMT_FP32, KCS_FMT_FP64};
    t_in = fin[f];
    t_acc = facc[a];
    t_out = KCS_FMT_FP64;
}

static void test_types(void)
{
    for (int f = 0; f < 4; f++)
        for (int a = 0; a < 2; a++) {
            set_types(f, a);
            /* probe fp64 support once per combination */
            double one = 1;
            kcs_call p = mkcall(KCS_OP_REDUCE_SUM, "own", 1, 0, 1);
            setin(&p, 0, &one);
            gbuf gp = galloc(1);
            int rc = run(&p, &gp);
            double got = gp.out[0];
            free(gp.base);
            if (rc == KCS_E_UNSUPPORTED)
                continue; /* no cl_khr_fp64 */
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_EQUAL(got, 1.0);
            const kcs_schedule pw = {KCS_SCHED_PAIRWISE, 0};
            check_softmax("own", &pw, 0);
            check_softmax("native", NULL, 0);
            check_norm(KCS_OP_LAYERNORM, "own", &pw, 1);
            check_norm(KCS_OP_RMSNORM, "native", NULL, 1);
            check_attention("own", &pw, 1, 3, 20, 8, NULL);
            check_attention("native", NULL, 1, 3, 70, 8, NULL);
            check_attention("fused", &pw, 1, 3, 70, 8, "block=32");
            check_gemm_bound("own", &pw, 1, 5, 6, 30, 1);
            check_gemm_bound("native", NULL, 2, 19, 17, 30, 1);
            /* gather copies values exactly */
            double *T = randv(4 * 3, 1), idx[2] = {3, 1};
            kcs_call g = mkcall(KCS_OP_GATHER, "native", 4, 2, 3);
            setin(&g, 0, T);
            setin(&g, 1, idx);
            gbuf go = galloc(6);
            CU_ASSERT_EQUAL(run(&g, &go), 0);
            CU_ASSERT_EQUAL(memcmp(go.out, T + 9, 3 * sizeof(double)), 0);
            CU_ASSERT_EQUAL(memcmp(go.out + 3, T + 3, 3 * sizeof(double)), 0);
            free(go.base);
            free(T);
        }
    t_in = t_out = t_acc = KCS_FMT_FP32;
}

/* ---- the cpu backend's own kernels, the same definitions ----------------- */
#ifdef KCS_HAVE_CPU
extern const kcs_backend_ops kcs_backend_cpu;

/* Run c on the cpu backend and here; tol < 0: bit for bit, else
 * |a - b| <= tol * u32 * (|b| + floor) elementwise. */
static int cross(kcs_backend_ctx *cpu, kcs_call c, double tol, double floor_)
{
    size_t n = kcs_op_out_len(&c);
    gbuf a = galloc(n), b = galloc(n);
    kcs_error err = {0};
    int bad = 0;
    c.out = b.out;
    c.out_len = n;
    int rc = kcs_backend_cpu.run(cpu, &c, &err);
    if (rc) {
        fprintf(stderr, "\n  cpu %s: %s\n", kcs_op_name(c.op), err.msg);
        bad = -1;
        goto out;
    }
    rc = run(&c, &a);
    if (rc) {
        bad = -1;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (tol < 0)
            bad += memcmp(&a.out[i], &b.out[i], sizeof(double)) != 0;
        else
            bad += !(fabs(a.out[i] - b.out[i]) <= tol * U32 * (fabs(b.out[i]) + floor_));
    }
    if (bad) {
        char sb[32];
        fprintf(stderr, "\n  %s %s %s in=%s acc=%s: %d of %zu differ from cpu\n",
                kcs_op_name(c.op), c.variant, kcs_schedule_str(&c.schedule, sb, sizeof sb),
                kcs_format_name(c.dtype_in), kcs_format_name(c.acc.fmt), bad, n);
    }
    bad += !guards_ok(&a) + !all_written(&a);
out:
    free(a.base);
    free(b.base);
    return bad;
}

static void test_matches_cpu(void)
{
    kcs_backend_ctx *cpu = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, &(kcs_backend_config){0}, &cpu, &err), 0);
    kcs_device_info info;
    ops->describe(ctx, &info, &err);
    /* PoCL on x86 rounds float division and sqrt correctly, as the cpu
     * backend does: the norms agree bit for bit there. */
    int pocl = strstr(info.runtime, "PoCL") != NULL;
    for (int f = 0; f < 4; f++)
        for (int a = 0; a < 2; a++) {
            set_types(f, a);
            double *A = randv(3 * 9 * 70, 1), *B = randv(3 * 70 * 11, 1),
                   *C = randv(3 * 9 * 11, 2), *V = randv(3 * 40 * 70, 1);
            for (size_t s = 0; s < N_SCHED; s++) {
                kcs_call c = mkcall(KCS_OP_BATCHED_GEMM, "own", 9, 11, 70);
                c.batch = 3;
                c.schedule = scheds[s];
                setin(&c, 0, A);
                setin(&c, 1, B);
                setin(&c, 2, C);
                if (c.acc.fmt == KCS_FMT_FP64 && t_in == KCS_FMT_FP64 && s == 0) {
                    /* the device may lack fp64 */
                    gbuf g = galloc(kcs_op_out_len(&c));
                    int rc = run(&c, &g);
                    free(g.base);
                    if (rc == KCS_E_UNSUPPORTED)
                        break;
                }
                CU_ASSERT_EQUAL(cross(cpu, c, -1, 0), 0);
                kcs_call d = mkcall(KCS_OP_DOT, "own", 0, 0, 630);
                d.schedule = scheds[s];
                setin(&d, 0, A);
                setin(&d, 1, B);
                CU_ASSERT_EQUAL(cross(cpu, d, -1, 0), 0);
                kcs_call r = mkcall(KCS_OP_REDUCE_SUM, "own", 9, 0, 70);
                r.schedule = scheds[s];
                setin(&r, 0, A);
                CU_ASSERT_EQUAL(cross(cpu, r, -1, 0), 0);
                for (int op = 0; op < 2; op++) {
                    kcs_call nm = mkcall(op ? KCS_OP_RMSNORM : KCS_OP_LAYERNORM, "own", 9, 0, 70);
                    nm.schedule = scheds[s];
                    setin(&nm, 0, A);
                    setin(&nm, 1, B);
                    if (!op)
                        setin(&nm, 2, C);
                    CU_ASSERT_EQUAL(cross(cpu, nm, pocl ? -1 : 16, 0), 0);
                }
                /* exp differs between libm and OpenCL by a few ulp */
                kcs_call sm = mkcall(KCS_OP_SOFTMAX, "own", 9, 0, 70);
                sm.schedule = scheds[s];
                setin(&sm, 0, A);
                CU_ASSERT_EQUAL(cross(cpu, sm, 32, 0), 0);
                const char *av[2] = {"own", "fused"};
                for (int v = 0; v < 2; v++) {
                    kcs_call at = mkcall(KCS_OP_ATTENTION, av[v], 9, 40, 7);
                    at.batch = 2;
                    at.schedule = scheds[s];
                    at.attrs = "block=16";
                    setin(&at, 0, A);
                    setin(&at, 1, B);
                    setin(&at, 2, V);
                    CU_ASSERT_EQUAL(cross(cpu, at, 64, 1), 0);
                }
            }
            /* gather: an exact copy */
            double idx[5] = {8, 0, -3, 40, 2};
            const char *modes[3] = {"oob=clamp", "oob=zero", "oob=undefined"};
            for (int md = 0; md < 3; md++) {
                kcs_call g = mkcall(KCS_OP_GATHER, "native", 9, 5, 70);
                g.attrs = modes[md];
                setin(&g, 0, A);
                setin(&g, 1, idx);
                CU_ASSERT_EQUAL(cross(cpu, g, -1, 0), 0);
            }
            free(A);
            free(B);
            free(C);
            free(V);
        }
    t_in = t_out = t_acc = KCS_FMT_FP32;
    kcs_backend_cpu.close(cpu);
}
/* fp64 inputs into an fp32 accumulator: x + t with the exact sum within
 * 1.5 fp64 ulps of a float midpoint, either side (B all ones). kcs_add_fd
 * must round the fp64 sum to odd as the cpu model does: a nudge of an odd
 * sum lands on the midpoint (test_acc checks the model against MPFR). */
static void test_odd_sums_match_cpu(void)
{
    enum { M = 96, N = 4 };
    const double offs[] = {-1.5, -1.25, -1, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1, 1.25, 1.5};
    t_in = t_out = KCS_FMT_FP64;
    t_acc = KCS_FMT_FP32;
    double A[M * 2], B[2 * N];
    for (int i = 0; i < M; i++) {
        double x = 1.0 + ldexp(1.0, -23) * (double)((unsigned)(fabs(unif()) * 0x1p22) | 1u);
        A[i * 2] = i & 1 ? -x : x;
        A[i * 2 + 1] = (i & 1 ? -1 : 1) * (ldexp(1.0, -24) + offs[i % 12] * 0x1p-52);
    }
    for (int j = 0; j < 2 * N; j++)
        B[j] = 1.0;
    kcs_call c = mkcall(KCS_OP_GEMM, "own", M, N, 2);
    setin(&c, 0, A);
    setin(&c, 1, B);
    gbuf g = galloc(kcs_op_out_len(&c));
    int rc = run(&c, &g);
    free(g.base);
    if (rc != KCS_E_UNSUPPORTED) { /* the device may lack fp64 */
        kcs_backend_ctx *cpu = NULL;
        kcs_error err = {0};
        CU_ASSERT_EQUAL_FATAL(kcs_backend_cpu.open(0, &(kcs_backend_config){0}, &cpu, &err), 0);
        CU_ASSERT_EQUAL(cross(cpu, c, -1, 0), 0);
        kcs_backend_cpu.close(cpu);
    }
    t_in = t_out = t_acc = KCS_FMT_FP32;
}
#endif


/* ---- refusals and bounds ----------------------------------------------- */
static void test_refusals(void)
{
    double A[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    kcs_error err = {0};
    kcs_call c = mkcall(KCS_OP_GEMM, "own", 2, 2, 3);
    setin(&c, 0, A);
    setin(&c, 1, A);
    gbuf g = galloc(4);
    c.out = g.out;
    c.out_len = 4;
    kcs_call x = c;
    x.variant = "bogus";
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_UNSUPPORTED);
    x = c;
    x.acc.bits = 12;
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_UNSUPPORTED);
    x = c;
    x.acc.fmt = KCS_FMT_FP16;
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_UNSUPPORTED);
    x = c;
    x.schedule.kind = KCS_SCHED_ATOMIC;
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_UNSUPPORTED);
    x = c;
    x.op = KCS_OP_ALLREDUCE;
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_UNSUPPORTED);
    x = c;
    x.out_len = 3; /* too small: refused, nothing written */
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_INVAL);
    x = c;
    x.in_len[1] = 5;
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_INVAL);
    x = c;
    x.in[0] = NULL;
    CU_ASSERT_EQUAL(ops->run(ctx, &x, &err), KCS_E_INVAL);
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(g.out[i], SENT);
    /* out_len larger than needed: only the first m*n are written */
    gbuf big = galloc(10);
    c.out = big.out;
    c.out_len = 10;
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), 0);
    CU_ASSERT_EQUAL(big.out[0], 1 * 1 + 2 * 3 + 3 * 5); /* row 0 of A · B (B = A as 3x2) */
    for (size_t i = 4; i < 10; i++)
        CU_ASSERT_EQUAL(big.out[i], SENT);
    CU_ASSERT(guards_ok(&g) && guards_ok(&big));
    free(g.base);
    free(big.base);
}

/* ---- build options ----------------------------------------------------- */
static void test_options(void)
{
    kcs_error err = {0};
    kcs_backend_ctx *c2 = NULL;
    kcs_backend_config cfg = {0};
    cfg.options = "-cl-mad-enable";
    CU_ASSERT_EQUAL_FATAL(ops->open(dev, &cfg, &c2, &err), 0);
    kcs_device_info info;
    CU_ASSERT_EQUAL(ops->describe(c2, &info, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(info.arch, "-cl-mad-enable")); /* recorded */
    /* The kernels keep a*b+c as two roundings (#pragma OPENCL FP_CONTRACT OFF)
     * unless the options allow contraction; PoCL then fuses layernorm's
     * z * gamma + beta into fma, and the results change (checked on PoCL
     * only: whether a compiler contracts is its choice). */
    const int64_t m = 16, k = 999;
    double *X = randv(m * k, 1), *G = randv(k, 2), *Bt = randv(k, 1);
    kcs_call c = mkcall(KCS_OP_LAYERNORM, "own", m, 0, k);
    setin(&c, 0, X);
    setin(&c, 1, G);
    setin(&c, 2, Bt);
    gbuf g1 = galloc(m * k), g2 = galloc(m * k);
    CU_ASSERT_EQUAL(run(&c, &g1), 0);
    c.out = g2.out;
    CU_ASSERT_EQUAL(ops->run(c2, &c, &err), 0);
    size_t diff = 0;
    for (size_t i = 0; i < g1.n; i++)
        diff += g1.out[i] != g2.out[i];
    fprintf(stderr, "\n  -cl-mad-enable changed %zu of %zu layernorm outputs\n", diff, g1.n);
    if (strstr(info.runtime, "PoCL"))
        CU_ASSERT(diff > 0);
    free(X);
    free(G);
    free(Bt);
    free(g1.base);
    free(g2.base);
    ops->close(c2);
    c2 = NULL;
    cfg.options = "-D"; /* malformed: the build fails at open, with a message */
    int rc = ops->open(dev, &cfg, &c2, &err);
    CU_ASSERT(rc == KCS_E_INVAL || rc == KCS_E_DEVICE);
    CU_ASSERT_PTR_NULL(c2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "clBuildProgram"));
}
/* elementwise (rows.cl) against the fp64 reference (src/arith/elementwise.h),
 * in fp32 ulps (the count of fp32 values between the output and the
 * reference rounded to fp32). Bounds from the OpenCL C full profile's ulp
 * limits (exp 3, tanh 5, rsqrt 2, x / y 2.5, sqrt 3; + and * correctly
 * rounded): an error of e ulp counts at most 2e + 1 (the spacing halves
 * below a power of two; the reference's rounding step). own's silu =
 * x / (1 + exp(-x)): 3 + 0.5 + 2.5 = 6 ulp; own's rsqrt = 1 / sqrt(x):
 * 2.5 + 3/2 = 4; own's gelu_tanh: s = 2 c0 (x + c1 x^3) to relative 6 u,
 * i.e. (6 |s| + 6) ulp after exp, the add and the divide. native's
 * gelu_tanh (0.5 x (1 + tanh z)) is measured on x >= -2, where 1 + tanh
 * keeps 2^-6 of the 1: 64 (5 + 1.5 + 2) ulp. */
static double ocl_ew_bound(kcs_ew_fn f, int own, double x)
{
    double s = 2.0 * KCS_EW_GELU_C0 * (x + KCS_EW_GELU_C1 * x * x * x);
    double e = f == KCS_EW_EXP    ? 3.0
               : f == KCS_EW_TANH ? 5.0
               : f == KCS_EW_SILU ? 6.0
               : f == KCS_EW_RSQRT ? (own ? 4.0 : 2.0)
               : own              ? 6.0 * fabs(s) + 6.0
                                  : 64.0 * 8.5;
    return 2.0 * e + 1.0;
}

static double ocl_ew_worst(kcs_backend_ctx *cx, kcs_ew_fn f, const char *variant, double lo,
                           double hi, int bounded)
{
    enum { N = 4096 };
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = (double)(float)(lo + (hi - lo) * 0.5 * (unif() + 1.0));
    char attrs[32];
    snprintf(attrs, sizeof attrs, "fn=%s", kcs_ew_name(f));
    kcs_call c = mkcall(KCS_OP_ELEMENTWISE, variant, 64, 0, N / 64);
    c.attrs = attrs;
    setin(&c, 0, x);
    gbuf g = galloc(N);
    kcs_error err = {0};
    c.out = g.out;
    c.out_len = g.n;
    int rc = ops->run(cx, &c, &err);
    if (rc)
        fprintf(stderr, "\n  elementwise %s %s: %s\n", attrs, variant, err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(guards_ok(&g));
    CU_ASSERT(all_written(&g));
    double worst = 0.0;
    for (int i = 0; i < N; i++) {
        double u = kcs_format_ulp_distance(KCS_FMT_FP32, g.out[i], kcs_ew_ref(f, x[i]));
        worst = fmax(worst, bounded ? u / ocl_ew_bound(f, !strcmp(variant, "own"), x[i]) : u);
    }
    free(x);
    free(g.base);
    return worst;
}

static void test_elementwise(void)
{
    for (int fi = 0; fi < KCS_EW_COUNT; fi++) {
        kcs_ew_fn f = (kcs_ew_fn)fi;
        double lo = f == KCS_EW_RSQRT ? 1e-6 : f == KCS_EW_EXP ? -103.0 : -8.0;
        double hi = f == KCS_EW_RSQRT ? 1e6 : f == KCS_EW_EXP ? 88.0 : 8.0;
        double own = ocl_ew_worst(ctx, f, "own", lo, hi, 1);
        double nat = ocl_ew_worst(ctx, f, "native", f == KCS_EW_GELU_TANH ? -2.0 : lo, hi, 1);
        fprintf(stderr, "\n  elementwise %-9s own %.0f, native %.0f ulp", kcs_ew_name(f),
                ocl_ew_worst(ctx, f, "own", lo, hi, 0),
                ocl_ew_worst(ctx, f, "native", f == KCS_EW_GELU_TANH ? -2.0 : lo, hi, 0));
        CU_ASSERT(own <= 1.0);
        CU_ASSERT(nat <= 1.0);
    }
    /* NaN in, NaN out; exp overflows to Inf and underflows to 0 */
    double x[4] = {NAN, 100.0, -120.0, 0.0};
    kcs_call c = mkcall(KCS_OP_ELEMENTWISE, "native", 1, 0, 4);
    c.attrs = "fn=exp";
    setin(&c, 0, x);
    gbuf g = galloc(4);
    CU_ASSERT_EQUAL(run(&c, &g), 0);
    CU_ASSERT(isnan(g.out[0]) && isinf(g.out[1]) && g.out[2] == 0.0 && g.out[3] == 1.0);
    c.attrs = "fn=erf";
    kcs_error err = {0};
    c.out = g.out;
    c.out_len = 4;
    CU_ASSERT_EQUAL(ops->run(ctx, &c, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "opencl"));
    free(g.base);
    /* -cl-fast-relaxed-math: what the device's relaxed exp measures (the
     * OpenCL spec leaves its accuracy to the implementation) */
    kcs_backend_ctx *c2 = NULL;
    kcs_backend_config cfg = {0};
    cfg.options = "-cl-fast-relaxed-math";
    CU_ASSERT_EQUAL_FATAL(ops->open(dev, &cfg, &c2, &err), 0);
    fprintf(stderr, "\n  -cl-fast-relaxed-math exp: %.0f ulp on [-103, 88), %.0f on [-4, 4)",
            ocl_ew_worst(c2, KCS_EW_EXP, "native", -103.0, 88.0, 0),
            ocl_ew_worst(c2, KCS_EW_EXP, "native", -4.0, 4.0, 0));
    ops->close(c2);
}

static const ut_test tests[] = {
    {"discover", test_discover},
    {"gemm_bound", test_gemm_bound},
    {"gemm_bitwise", test_gemm_bitwise},
    {"gemm_native_is_sequential", test_gemm_native_is_sequential},
    {"gemm_fp64", test_gemm_fp64},
    {"gemm_half", test_gemm_half},
    {"reduce_sum", test_reduce_sum},
    {"softmax", test_softmax},
    {"norms", test_norms},
    {"attention", test_attention},
    {"gather", test_gather},
    {"elementwise", test_elementwise},
    {"types", test_types},
#ifdef KCS_HAVE_CPU
    {"matches_cpu", test_matches_cpu},
    {"odd_sums_match_cpu", test_odd_sums_match_cpu},
#endif
    {"refusals", test_refusals},
    {"options", test_options},
};
#endif /* KCS_HAVE_OPENCL */

int main(void)
{
#ifndef KCS_HAVE_OPENCL
    printf("test_opencl: the OpenCL backend is not compiled in; nothing to test\n");
    return 0;
#else
    kcs_device_info d[KCS_MAX_DEVICES];
    int n = 0;
    kcs_error err = {0};
    ops = kcs_backend_find("opencl");
    if (!ops) {
        fprintf(stderr, "test_opencl: FAIL: the opencl backend is built but %s\n",
                kcs_backend_why("opencl"));
        return 1;
    }
    if (ops->discover(d, KCS_MAX_DEVICES, &n, &err) != 0 || n == 0) {
        const char *allow = getenv("KCS_TEST_ALLOW_NO_OPENCL");
        if (allow && strcmp(allow, "1") == 0) {
            printf("test_opencl: no OpenCL device (%s); skipped (KCS_TEST_ALLOW_NO_OPENCL=1)\n",
                   err.msg);
            return 0;
        }
        fprintf(stderr,
                "test_opencl: FAIL: no OpenCL device: %s\n"
                "  install PoCL (apt-get install pocl-opencl-icd) or set "
                "KCS_TEST_ALLOW_NO_OPENCL=1\n",
                err.msg);
        return 1;
    }
    return ut_run_suite("opencl", suite_init, suite_clean, tests, UT_COUNT(tests));
#endif
}
