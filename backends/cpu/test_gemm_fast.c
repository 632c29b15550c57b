/* The own gemm kernel's fast paths (backends/cpu/gemm_fast.c) against the
 * exact accumulator model (kcs_cpu_gemm_own_model), bit for bit: fp32,
 * fp32:rz (truncating), bf16, fp16 and bits:N accumulators under every schedule (sequential, pairwise,
 * blocked, splitk, atomic: each block's drawn order), inputs in fp32/bf16/fp16/fp8,
 * with and without C, shapes with ragged edges, values that overflow the
 * fp16 accumulator, cancel, are subnormal in it, or are NaN/Inf, and
 * products beyond fp32's range (the bf16/fp16 float lanes). The fast path must also decline
 * what it does not model (narrow truncating accumulators, bits:N beyond 51,
 * non-fp32 values for fp32 acc). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "rng.h"
#include "unit_helpers.h"

static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void fill(double *x, size_t n, kcs_format f, kcs_rng *r, int flavour)
{
    for (size_t i = 0; i < n; i++) {
        double v = kcs_rng_normal(r);
        if (flavour == 1) /* wide magnitudes: fp16 accumulators overflow, terms cancel */
            v *= ldexp(1.0, (int)(kcs_rng_u32(r) % 24) - 8);
        if (flavour == 3) /* tiny: products are subnormal in bf16/fp16 accumulators */
            v *= ldexp(1.0, -(int)(kcs_rng_u32(r) % 20) - (f == KCS_FMT_FP32 || f == KCS_FMT_BF16 ? 60 : 4));
        if (flavour == 2 && kcs_rng_u32(r) % 97 == 0)
            v = kcs_rng_u32(r) % 3 == 0 ? NAN : (kcs_rng_u32(r) & 1 ? INFINITY : -INFINITY);
        x[i] = kcs_format_round(f, v, KCS_ROUND_DEFAULT);
    }
}

/* One case's operands (A, B, C filled; D1, D2 for the fast path and the
 * model). */
typedef struct bufs {
    double *A, *B, *C, *D1, *D2;
} bufs;

static bufs bufs_make(int64_t m, int64_t n, int64_t k, kcs_format f, kcs_rng *r, int flavour)
{
    bufs g = {malloc((size_t)(m * k) * sizeof(double)), malloc((size_t)(k * n) * sizeof(double)),
              malloc((size_t)(m * n) * sizeof(double)), malloc((size_t)(m * n) * sizeof(double)),
              malloc((size_t)(m * n) * sizeof(double))};
    CU_ASSERT_FATAL(g.A && g.B && g.C && g.D1 && g.D2);
    fill(g.A, (size_t)(m * k), f, r, flavour);
    fill(g.B, (size_t)(k * n), f, r, flavour);
    fill(g.C, (size_t)(m * n), f, r, 0);
    return g;
}

static void bufs_free(bufs *g)
{
    free(g->A);
    free(g->B);
    free(g->C);
    free(g->D1);
    free(g->D2);
}

/* An own gemm call of shape m x n x k (accumulator and schedule: the caller's). */
static kcs_call own_call(kcs_format in, kcs_format out, int64_t m, int64_t n, int64_t k)
{
    kcs_call c = {0};
    c.op = KCS_OP_GEMM;
    c.variant = "own";
    c.dtype_in = in;
    c.dtype_out = out;
    c.m = m;
    c.n = n;
    c.k = k;
    return c;
}

static void fast_equals_model(void)
{
    kcs_format ins[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP8_E4M3};
    /* fp32:rz: overflow to max finite, truncated sums; bits:N as
     * kcs_round_bits (fp32's exponent range) */
    kcs_acc accs[] = {{.fmt = KCS_FMT_FP32},           {.fmt = KCS_FMT_BF16},
                      {.fmt = KCS_FMT_FP16},           {.fmt = KCS_FMT_FP32, .rz = 1},
                      {.fmt = KCS_FMT_FP32, .bits = 14}, {.fmt = KCS_FMT_FP32, .bits = 3},
                      {.fmt = KCS_FMT_FP32, .bits = 40}};
    enum { NACC = sizeof accs / sizeof accs[0] };
    kcs_schedule scheds[] = {{KCS_SCHED_SEQUENTIAL, 0}, {KCS_SCHED_PAIRWISE, 0},
                             {KCS_SCHED_BLOCKED, 7},    {KCS_SCHED_BLOCKED, 64},
                             {KCS_SCHED_SPLITK, 3},     {KCS_SCHED_SPLITK, 5},
                             {KCS_SCHED_ATOMIC, 0}};
    /* n < 16: B's rows unpadded, a block's lanes run into the next rows */
    int64_t shapes[][3] = {{1, 1, 1}, {5, 17, 33}, {9, 35, 100}, {4, 16, 257}, {3, 2, 2},
                           {2, 3, 130}};
    kcs_rng r;
    kcs_rng_init(&r, 31, 41, 59);
    long long cases = 0, bad = 0, taken = 0;
    for (size_t fi = 0; fi < 4; fi++)
        for (size_t ai = 0; ai < NACC; ai++)
            for (size_t si = 0; si < 7; si++)
                for (size_t hi = 0; hi < 6; hi++)
                    for (int flavour = 0; flavour < 4; flavour++)
                        for (int withc = 0; withc < 2; withc++) {
                            int64_t m = shapes[hi][0], n = shapes[hi][1], k = shapes[hi][2];
                            bufs g = bufs_make(m, n, k, ins[fi], &r, flavour);
                            double *A = g.A, *B = g.B, *C = g.C, *D1 = g.D1, *D2 = g.D2;
                            /* fp64 out: every bit of a bits:40 sum shows */
                            kcs_call c = own_call(ins[fi], withc ? KCS_FMT_BF16 : KCS_FMT_FP64,
                                                  m, n, k);
                            c.acc = accs[ai];
                            c.schedule = scheds[si];
                            c.seed = kcs_rng_u64(&r); /* atomic: the call's order */
                            kcs_error err = {0};
                            const double *Cp = withc ? C : NULL;
                            char an[32];
                            int t = kcs_cpu_gemm_own_fast(&c, A, B, Cp, D1);
                            int rc = kcs_cpu_gemm_own_model(&c, A, B, Cp, D2, &err);
                            CU_ASSERT_EQUAL(rc, 0);
                            taken += t;
                            for (int64_t i = 0; t && i < m * n; i++)
                                if (!same(D1[i], D2[i]) && bad++ < 10)
                                    fprintf(stderr,
                                            "  in %s acc %s sched %d:%lld %lldx%lldx%lld "
                                            "flavour %d C %d [%lld]: fast %a model %a\n",
                                            kcs_format_name(ins[fi]),
                                            kcs_acc_str(&accs[ai], an, sizeof an),
                                            (int)scheds[si].kind, (long long)scheds[si].param,
                                            (long long)m, (long long)n, (long long)k, flavour,
                                            withc, (long long)i, D1[i], D2[i]);
                            cases++;
                            bufs_free(&g);
                        }
    printf("\n  %lld calls, fast path taken in %lld, %lld outputs differ\n", cases, taken, bad);
    CU_ASSERT_EQUAL(taken, cases);
    CU_ASSERT_EQUAL(bad, 0);
}

/* Sums whose fp64 rounding lands on a midpoint of the narrow accumulator
 * while the exact sum does not: x + h(1 - 2^-46) with h half an ulp of x
 * (fp32 inputs x, h(1 + 2^-23) times 1, 1 -+ 2^-23). Only the model's
 * nudge gets these right; a plain fp64 add then rounding does not. */
/* every instruction-set copy the CPU can run: baseline, AVX2, AVX-512 */
static void test_fast_equals_model(void)
{
    const char *isa[] = {"base", "avx2", "all"};
    for (int i = 0; i < 3; i++) {
        setenv("KCS_GEMM_FAST_ISA", isa[i], 1);
        printf("\n  kernels up to %s:", isa[i]);
        fast_equals_model();
    }
    unsetenv("KCS_GEMM_FAST_ISA");
}

/* An own sequential gemm of m x n outputs over k = 2 terms, fp32 out. */
static kcs_call two_term_call(kcs_format in, kcs_acc acc, int64_t m, int64_t n)
{
    kcs_call c = own_call(in, KCS_FMT_FP32, m, n, 2);
    c.acc = acc;
    return c;
}

static void test_double_rounding_cases(void)
{
    enum { M = 64, N = 16, K = 2 };
    kcs_format accs[] = {KCS_FMT_BF16, KCS_FMT_FP16};
    long long bad = 0, wrong_plain = 0, wrong_trunc = 0;
    kcs_rng r;
    kcs_rng_init(&r, 3, 1, 4);
    for (int ai = 0; ai < 2; ai++) {
        int p = kcs_format_get(accs[ai])->p;
        double A[M * K], B[K * N], D1[M * N], D2[M * N];
        for (int i = 0; i < M; i++) {
            /* x: an accumulator value with an odd last bit, either sign */
            int e = (int)(kcs_rng_u32(&r) % 8) - 4;
            double x = ldexp((double)((kcs_rng_u32(&r) % (1u << (p - 1))) | 1u | (1u << (p - 1))),
                             e - (p - 1));
            if (i & 1)
                x = -x;
            A[i * K] = x;
            /* rows i & 2: the second term against x's sign (the sum just
             * above the midpoint below x, where a sum rounded toward zero
             * ties the wrong way) */
            A[i * K + 1] = ldexp(1.0 + 0x1p-23, e - p) * ((x < 0) != !!(i & 2) ? -1 : 1);
        }
        for (int j = 0; j < N; j++) {
            B[j] = 1.0;
            B[N + j] = j & 1 ? 1.0 - 0x1p-23 : 1.0 + 0x1p-23;
        }
        kcs_call c = two_term_call(KCS_FMT_FP32, (kcs_acc){.fmt = accs[ai]}, M, N);
        kcs_error err = {0};
        CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D1), 1);
        CU_ASSERT_EQUAL(kcs_cpu_gemm_own_model(&c, A, B, NULL, D2, &err), 0);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                bad += !same(D1[i * N + j], D2[i * N + j]);
                double t0 = kcs_format_round(accs[ai], A[i * K] * B[j], KCS_ROUND_DEFAULT);
                double plain = kcs_format_round(accs[ai], t0 + A[i * K + 1] * B[N + j],
                                                KCS_ROUND_DEFAULT);
                wrong_plain += !same(plain, D2[i * N + j]);
                /* the fp64 sum rounded toward zero (TwoSum tells which way
                 * it was rounded), then to the accumulator */
                double y = A[i * K + 1] * B[N + j], s = t0 + y, bp = s - t0;
                double err = (t0 - (s - bp)) + (y - bp);
                if (err != 0 && (err < 0) != (s < 0))
                    s = nextafter(s, 0.0);
                wrong_trunc += !same(kcs_format_round(accs[ai], s, KCS_ROUND_DEFAULT), D2[i * N + j]);
            }
    }
    printf("\n  %lld of %d near-midpoint sums where fp64-then-round is wrong, %lld where "
           "fp64-toward-zero-then-round is; fast path differs from the model in %lld\n",
           wrong_plain, 2 * M * N, wrong_trunc, bad);
    CU_ASSERT(wrong_plain > 0); /* the cases do exercise the nudge */
    CU_ASSERT(wrong_trunc > 0); /* and the odd bit of the AVX-512 copy's sum */
    CU_ASSERT_EQUAL(bad, 0);
}

/* fp64 inputs, B all ones: the sums x + t of an accumulator value x and a
 * double t that puts the exact sum within 1.5 fp64 ulps of a midpoint of
 * the accumulator, on either side. Where fp64's nearest sum is odd and one
 * ulp from the midpoint, a nudge toward the exact sum would land on it:
 * the sum must be rounded to odd (test_acc checks the model against MPFR
 * on such sums). Sequential and pairwise: a pairwise sum adds two rounded
 * leaves, which only for p <= 24 makes the plain fp64 add right (with a
 * 40-bit accumulator both leaves hold t and x whole). Every
 * instruction-set copy against the model. */
static void odd_sums(long long *bad, long long *cases)
{
    enum { M = 96, N = 16, K = 2 };
    kcs_acc accs[] = {{.fmt = KCS_FMT_BF16},
                      {.fmt = KCS_FMT_FP16},
                      {.fmt = KCS_FMT_FP32, .bits = 14},
                      {.fmt = KCS_FMT_FP32, .bits = 40}};
    int prec[] = {8, 11, 14, 40};
    const double offs[] = {-1.5, -1.25, -1, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1, 1.25, 1.5};
    kcs_rng r;
    kcs_rng_init(&r, 2, 7, 1);
    for (int ai = 0; ai < 8; ai++) {
        int p = prec[ai % 4];
        double q = ldexp(1.0, 1 - p), A[M * K], B[K * N], D1[M * N], D2[M * N];
        for (int i = 0; i < M; i++) {
            uint64_t mant = p <= 32 ? kcs_rng_u32(&r) % (1u << (p - 1))
                                    : kcs_rng_u64(&r) % (1ull << (p - 1));
            double x = 1.0 + q * (double)mant;
            double t = q * (0.5 + (int)(kcs_rng_u32(&r) % 5) - 2) + offs[i % 12] * 0x1p-52;
            A[i * K] = i & 1 ? -x : x;
            A[i * K + 1] = i & 1 ? -t : t;
        }
        for (int j = 0; j < K * N; j++)
            B[j] = 1.0;
        kcs_call c = two_term_call(KCS_FMT_FP64, accs[ai % 4], M, N);
        c.dtype_out = KCS_FMT_FP64; /* fp32 would hide a 40-bit sum's last bits */
        if (ai >= 4)
            c.schedule.kind = KCS_SCHED_PAIRWISE;
        kcs_error err = {0};
        CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D1), 1);
        CU_ASSERT_EQUAL(kcs_cpu_gemm_own_model(&c, A, B, NULL, D2, &err), 0);
        for (int i = 0; i < M * N; i++)
            *bad += !same(D1[i], D2[i]);
        *cases += M * N;
    }
}

static void test_odd_sums(void)
{
    const char *isa[] = {"base", "avx2", "all"};
    for (int i = 0; i < 3; i++) {
        long long bad = 0, cases = 0;
        setenv("KCS_GEMM_FAST_ISA", isa[i], 1);
        odd_sums(&bad, &cases);
        printf("\n  kernels up to %s: %lld of %lld sums near midpoints differ from the model", isa[i],
               bad, cases);
        CU_ASSERT_EQUAL(bad, 0);
    }
    unsetenv("KCS_GEMM_FAST_ISA");
    printf("\n");
}

static void test_declines(void)
{
    double A[4] = {1, 2, 3, 4}, B[4] = {1, 0.1, 2, 3}, D[4];
    kcs_call c = {0};
    c.op = KCS_OP_GEMM;
    c.variant = "own";
    c.dtype_in = c.dtype_out = KCS_FMT_FP32;
    c.m = c.n = c.k = 2;
    c.acc.fmt = KCS_FMT_FP32;
    c.schedule.kind = KCS_SCHED_SEQUENTIAL;
    c.acc.bits = 52; /* beyond the sum rounded to odd */
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 0);
    c.acc.bits = 12;
    c.acc.rz = 1; /* narrow and truncating */
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 0);
    c.acc.bits = 0;
    c.acc.fmt = KCS_FMT_BF16;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 0);
    c.acc.fmt = KCS_FMT_FP32;
    c.acc.rz = 0;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 0); /* 0.1 is not an fp32 value */
    B[1] = 0.5;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 1);
    c.acc.fmt = KCS_FMT_FP64; /* fp64: sequential only */
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 1);
    c.schedule.kind = KCS_SCHED_PAIRWISE;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 0);
    c.schedule.kind = KCS_SCHED_SEQUENTIAL;
    /* narrow accumulators: finite inputs beyond 2^200 (fp64 only) go to the
     * model; Inf does not */
    c.acc.fmt = KCS_FMT_BF16;
    c.dtype_in = KCS_FMT_FP64;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 1);
    A[2] = 0x1p300;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 0);
    A[2] = INFINITY;
    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D), 1);
}

/* fp64 accumulator, sequential: fp64 inputs (products rounded), fp32 and
 * bf16 ones (exact products), NaN/Inf, with and without C, against the
 * model bit for bit. */
static void test_fp64_sequential(void)
{
    kcs_format ins[] = {KCS_FMT_FP64, KCS_FMT_FP32, KCS_FMT_BF16};
    int64_t shapes[][3] = {{1, 1, 1}, {5, 17, 33}, {3, 2, 300}, {9, 35, 100}};
    kcs_rng r;
    kcs_rng_init(&r, 5, 64, 1);
    long long outs = 0, bad = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int hi = 0; hi < 4; hi++)
            for (int flavour = 0; flavour < 3; flavour++)
                for (int withc = 0; withc < 2; withc++) {
                    int64_t m = shapes[hi][0], n = shapes[hi][1], k = shapes[hi][2];
                    bufs g = bufs_make(m, n, k, ins[fi], &r, flavour);
                    double *A = g.A, *B = g.B, *C = g.C, *D1 = g.D1, *D2 = g.D2;
                    kcs_call c = own_call(ins[fi], withc ? KCS_FMT_FP32 : KCS_FMT_FP64, m, n, k);
                    c.acc.fmt = KCS_FMT_FP64;
                    c.schedule.kind = KCS_SCHED_SEQUENTIAL;
                    kcs_error err = {0};
                    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, withc ? C : NULL, D1), 1);
                    CU_ASSERT_EQUAL(kcs_cpu_gemm_own_model(&c, A, B, withc ? C : NULL, D2, &err), 0);
                    for (int64_t i = 0; i < m * n; i++, outs++)
                        bad += !same(D1[i], D2[i]);
                    bufs_free(&g);
                }
    printf("\n  fp64 sequential: %lld outputs, %lld differ from the model\n", outs, bad);
    CU_ASSERT(outs > 5000);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The bf16/fp16 float-lane copy (gemm_fast_n32_avx512.c) at fp32's edges:
 * fp32 inputs with exponents in [-80, 70], so that products run from
 * below fp32's least subnormal (2^-149) through bf16's and fp16's
 * subnormals to beyond FLT_MAX, and some Inf inputs (no NaN: that copy
 * takes none), in every schedule, against the model. On a CPU without
 * AVX-512 the double lanes run the same calls. */
static void test_float_lane_edges(void)
{
    enum { M = 5, N = 19, K = 37 };
    kcs_acc accs[] = {{.fmt = KCS_FMT_BF16}, {.fmt = KCS_FMT_FP16}};
    kcs_schedule scheds[] = {{KCS_SCHED_SEQUENTIAL, 0}, {KCS_SCHED_PAIRWISE, 0},
                             {KCS_SCHED_BLOCKED, 4}, {KCS_SCHED_SPLITK, 3}, {KCS_SCHED_ATOMIC, 0}};
    kcs_rng r;
    kcs_rng_init(&r, 16, 8, 4);
    long long bad = 0, outs = 0, tiny = 0, huge = 0, inf_out = 0;
    for (int rep = 0; rep < 40; rep++)
        for (int ai = 0; ai < 2; ai++)
            for (int si = 0; si < 5; si++) {
                double A[M * K], B[K * N], D1[M * N], D2[M * N];
                /* rep 0-19: exponents over the whole span; 20-39: around
                 * the accumulator's least subnormal (bf16 2^-133, fp16 2^-24) */
                int lo = rep < 20 ? -80 : ai ? -20 : -74, span = rep < 20 ? 151 : 16;
                for (int i = 0; i < M * K + K * N; i++) {
                    double v = ldexp(1.0 + ldexp((double)(kcs_rng_u32(&r) & 0x7fffff), -23),
                                     lo + (int)(kcs_rng_u32(&r) % (unsigned)span));
                    if (kcs_rng_u32(&r) & 1)
                        v = -v;
                    if (rep % 4 == 3 && kcs_rng_u32(&r) % 200 == 0)
                        v = v < 0 ? -INFINITY : INFINITY;
                    if (i < M * K)
                        A[i] = v;
                    else
                        B[i - M * K] = v;
                }
                for (int i = 0; i < M * K; i++)
                    for (int j = 0; j < N; j++) {
                        double t = fabs(A[i] * B[(i % K) * N + j]);
                        tiny += t > 0 && t < 0x1p-149;
                        huge += t > 0x1.fffffep127;
                    }
                kcs_call c = two_term_call(KCS_FMT_FP32, accs[ai], M, N);
                c.k = K;
                c.schedule = scheds[si];
                c.seed = kcs_rng_u64(&r);
                kcs_error err = {0};
                CU_ASSERT_EQUAL(kcs_cpu_gemm_own_fast(&c, A, B, NULL, D1), 1);
                CU_ASSERT_EQUAL(kcs_cpu_gemm_own_model(&c, A, B, NULL, D2, &err), 0);
                for (int i = 0; i < M * N; i++) {
                    bad += !same(D1[i], D2[i]);
                    inf_out += isinf(D2[i]) || isnan(D2[i]);
                }
                outs += M * N;
            }
    printf("\n  %lld outputs (%lld Inf or NaN), %lld products below 2^-149, %lld above FLT_MAX: "
           "%lld differ from the model\n",
           outs, inf_out, tiny, huge, bad);
    CU_ASSERT(tiny > 0 && huge > 0 && inf_out > 0); /* the edges were reached */
    CU_ASSERT_EQUAL(bad, 0);
}

/* The atomic order is a real shuffle: not the identity, different under
 * another seed, a permutation; output tiles of 4 x 16 share one order and
 * neighbouring tiles have their own. */
static void test_atomic_order(void)
{
    enum { N = 100 };
    uint32_t a[N], b[N];
    kcs_atomic_order(7, N, a);
    kcs_atomic_order(8, N, b);
    int moved = 0, differ = 0, seen[N] = {0};
    for (int i = 0; i < N; i++) {
        moved += a[i] != (uint32_t)i;
        differ += a[i] != b[i];
        CU_ASSERT_FATAL(a[i] < N);
        seen[a[i]]++;
    }
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(seen[i], 1);
    CU_ASSERT(moved > N / 2);
    CU_ASSERT(differ > N / 2);
    CU_ASSERT_EQUAL(kcs_cpu_gemm_tile_seed(5, 0, 0), kcs_cpu_gemm_tile_seed(5, 3, 15));
    CU_ASSERT_NOT_EQUAL(kcs_cpu_gemm_tile_seed(5, 0, 0), kcs_cpu_gemm_tile_seed(5, 4, 0));
    CU_ASSERT_NOT_EQUAL(kcs_cpu_gemm_tile_seed(5, 0, 0), kcs_cpu_gemm_tile_seed(5, 0, 16));
}

static const ut_test tests[] = {
    {"fast paths equal the accumulator model", test_fast_equals_model},
    {"near-midpoint sums (the model's nudge)", test_double_rounding_cases},
    {"sums near midpoints (rounded to odd)", test_odd_sums},
    {"float lanes at fp32's edges", test_float_lane_edges},
    {"fast path declines what it does not model", test_declines},
    {"fp64 sequential equals the model", test_fp64_sequential},
    {"the atomic order", test_atomic_order},
};

UT_MAIN("gemm_fast", tests)
