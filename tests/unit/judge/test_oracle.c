/* The exact and model:<profile> oracles (src/judge/oracle.c, src/arith/exact.c) on
 * hand-derived cases, and the exact oracle against an independent MPFR
 * computation on random cases. */
#include <CUnit/Basic.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "backend.h"
#include "oracle.h"
#include "rng.h"
#include "tensor.h"
#include "unit_calls.h"
#include "unit_helpers.h"

extern const kcs_backend_ops kcs_backend_cpu;

static void fill(double *x, size_t n, kcs_format f, uint64_t seed)
{
    kcs_rng r;
    kcs_rng_init(&r, seed, 0x0AC1E, n);
    for (size_t i = 0; i < n; i++)
        x[i] = kcs_format_round(f, kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
}

static kcs_call mk(kcs_op op, int64_t m, int64_t n, int64_t k)
{
    kcs_call c = ut_fp32_call(op, m, n, k, KCS_FMT_FP32);
    c.variant = "native";
    c.attrs = "";
    return c;
}

/* 1e16 = 2^16 5^16 is a double; its spacing is 2, so in fp64
 * (1e16 + 1) is a tie that rounds to 1e16 (significand 5^16 2^15, even) and
 * the fp64 sum of [1e16, 1, -1e16] is 0; the exact sum is 1. */
static void test_exact_cancellation(void)
{
    double x[3] = {1e16, 1, -1e16}, ones[3] = {1, 1, 1}, ref[1], absref[1], scale;
    kcs_op ops[3] = {KCS_OP_REDUCE_SUM, KCS_OP_DOT, KCS_OP_GEMM};
    for (int i = 0; i < 3; i++) {
        kcs_call c = mk(ops[i], 1, 1, 3);
        c.dtype_in = c.dtype_out = KCS_FMT_FP64;
        c.in[0] = x;
        c.in[1] = ops[i] == KCS_OP_REDUCE_SUM ? NULL : ones;
        oracle(&c, KCS_ORACLE_FP64, ref, absref, &scale);
        CU_ASSERT_EQUAL(ref[0], 0.0);
        /* sum |x| in double: 1e16 + 1 rounds to 1e16 (tie to even), + 1e16 */
        CU_ASSERT_EQUAL(absref[0], 2e16);
        oracle(&c, KCS_ORACLE_EXACT, ref, absref, &scale);
        CU_ASSERT_EQUAL(ref[0], 1.0);
        c.dtype_out = KCS_FMT_FP32;
        oracle(&c, KCS_ORACLE_EXACT, ref, absref, &scale);
        CU_ASSERT_EQUAL(ref[0], 1.0);
    }
}

/* One rounding, not two: 1 + 2^-24 + 2^-80 lies just above the midpoint
 * between the fp32 neighbours 1 and 1 + 2^-23, so its correct fp32
 * rounding is 1 + 2^-23. Rounding first to double loses 2^-80 and leaves
 * an exact tie, which rounds to 1 (even): the wrong answer. */
static void test_exact_single_rounding(void)
{
    double x[3] = {1.0, 0x1p-24, 0x1p-80}, ref[1], absref[1], scale;
    CU_ASSERT_EQUAL((double)(float)(x[0] + x[1] + x[2]), 1.0); /* the double-rounding trap */
    kcs_call c = mk(KCS_OP_REDUCE_SUM, 1, 0, 3);
    c.dtype_in = KCS_FMT_FP64;
    c.dtype_out = KCS_FMT_FP32;
    c.in[0] = x;
    oracle(&c, KCS_ORACLE_EXACT, ref, absref, &scale);
    CU_ASSERT_EQUAL(ref[0], 1.0 + 0x1p-23);
    /* and below the midpoint (1 + 2^-24 - 2^-80) it rounds down to 1 */
    x[2] = -0x1p-80;
    oracle(&c, KCS_ORACLE_EXACT, ref, absref, &scale);
    CU_ASSERT_EQUAL(ref[0], 1.0);
    /* fp16 output: 2048 + 1 + 2^-30 -> 2050 (above the tie) */
    double y[3] = {2048, 1, 0x1p-30};
    c.in[0] = y;
    c.dtype_out = KCS_FMT_FP16;
    oracle(&c, KCS_ORACLE_EXACT, ref, absref, &scale);
    CU_ASSERT_EQUAL(ref[0], 2050.0);
}

/* model:<profile> is the CPU backend's emulated matrix unit, bit for bit. */
static void test_model_oracle(void)
{
    enum { M = 5, N = 7, K = 37 };
    double A[M * K], B[K * N], ref[M * N], absref[M * N], scale;
    fill(A, M * K, KCS_FMT_FP16, 3);
    fill(B, K * N, KCS_FMT_FP16, 4);
    kcs_call c = mk(KCS_OP_GEMM, M, N, K);
    c.dtype_in = KCS_FMT_FP16;
    c.in[0] = A;
    c.in[1] = B;
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_oracle_run(KCS_ORACLE_MODEL, "nvidia-a100", &c, ref, absref, &scale,
                                   &err) == 0);
    kcs_backend_config cfg = {.profile = "nvidia-a100"};
    kcs_backend_ctx *pctx;
    CU_ASSERT_FATAL(kcs_backend_cpu.open(0, &cfg, &pctx, &err) == 0);
    kcs_tensor t;
    c.out_len = M * N;
    CU_ASSERT_FATAL(kcs_tensor_alloc(&t, c.out_len, c.dtype_out, &err) == 0);
    c.out = t.data;
    CU_ASSERT_EQUAL(kcs_backend_cpu.run(pctx, &c, &err), 0);
    CU_ASSERT_EQUAL(memcmp(t.data, ref, sizeof ref), 0);
    kcs_tensor_free(&t);
    kcs_backend_cpu.close(pctx);
    /* unknown profile: the lookup's error */
    CU_ASSERT_NOT_EQUAL(kcs_oracle_run(KCS_ORACLE_MODEL, "nvidia-x1", &c, ref, absref, &scale,
                                       &err), 0);
    /* model of a non-gemm op: unsupported */
    c.op = KCS_OP_SOFTMAX;
    CU_ASSERT_EQUAL(kcs_oracle_run(KCS_ORACLE_MODEL, "nvidia-a100", &c, ref, absref, &scale,
                                   &err), KCS_E_UNSUPPORTED);
}

/* The exact oracle of gemm (fp16 inputs, fp32 and bf16 outputs, with C)
 * against an independent MPFR evaluation: the sum at 300 bits (exact: every
 * term lies on the grid 2^-149 and below 2^12, 161 bits), then one rounding
 * at the output precision (p = 24 or 8; no subnormal results here). */
static void test_exact_vs_mpfr(void)
{
    enum { M = 4, N = 5, K = 200 };
    double A[M * K], B[K * N], C[M * N], ref[M * N], absref[M * N], scale;
    fill(A, M * K, KCS_FMT_FP16, 5);
    fill(B, K * N, KCS_FMT_FP16, 6);
    fill(C, M * N, KCS_FMT_FP32, 7);
    kcs_format outs[2] = {KCS_FMT_FP32, KCS_FMT_BF16};
    int prec[2] = {24, 8};
    mpfr_t s, p, r;
    mpfr_inits2(300, s, p, (mpfr_ptr)0);
    mpfr_init2(r, 24);
    for (int o = 0; o < 2; o++) {
        kcs_call c = mk(KCS_OP_GEMM, M, N, K);
        c.dtype_in = KCS_FMT_FP16;
        c.dtype_out = outs[o];
        c.in[0] = A;
        c.in[1] = B;
        c.in[2] = C;
        oracle(&c, KCS_ORACLE_EXACT, ref, absref, &scale);
        int bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                mpfr_set_d(s, C[i * N + j], MPFR_RNDN);
                for (int t = 0; t < K; t++) {
                    mpfr_set_d(p, A[i * K + t], MPFR_RNDN);
                    mpfr_mul_d(p, p, B[t * N + j], MPFR_RNDN);
                    mpfr_add(s, s, p, MPFR_RNDN);
                }
                mpfr_set_prec(r, prec[o]);
                mpfr_set(r, s, MPFR_RNDN);
                bad += mpfr_get_d(r, MPFR_RNDN) != ref[i * N + j];
            }
        CU_ASSERT_EQUAL(bad, 0);
    }
    mpfr_clears(s, p, r, (mpfr_ptr)0);
}

static const ut_test tests[] = {
    {"exact oracle: cancellation", test_exact_cancellation},
    {"exact oracle: one rounding", test_exact_single_rounding},
    {"exact oracle vs MPFR (gemm)", test_exact_vs_mpfr},
    {"model oracle == emulated profile", test_model_oracle},
};

UT_MAIN("exact and model oracles", tests)
