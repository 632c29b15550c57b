/* Fast paths of the own GEMM kernel (gemm.c's "own" variant), bit-identical
 * to the accumulator model of acc.c (kcs_acc_add: one correctly rounded
 * addition into the accumulator per step) for fp32, bf16 and fp16
 * accumulators under the sequential, pairwise, blocked, splitk and
 * atomic schedules (atomic: each block's terms summed sequentially in the
 * block's drawn order). They vectorise across output columns (16 at a time, 4 rows
 * at once) and keep each output's order along k exactly as the model's:
 *   fp32: the model's step is round32(x + a*b) with a*b exact, i.e. fmaf;
 *         a sum of two fp32 partials is a float addition; a pairwise leaf
 *         is a float product. Used only when every A and B value is an
 *         fp32 value (checked while converting).
 *   fp32:rz (a truncating accumulator): the same operations with the
 *         FPU's rounding mode set toward zero around each block (fmaf, the
 *         float product and the float add round in the current mode).
 *   bf16/fp16 with inputs that are fp32 values, not NaN, on AVX-512:
 *         float lanes, each step's exact result rounded to odd in fp32
 *         and then to the accumulator (gemm_fast_n32_avx512.c).
 *   bf16/fp16 otherwise, bits:N (N <= 51, fp32's exponent range): the model itself,
 *         vectorised: the sum rounded to odd (AVX-512: the downward or
 *         upward sum, whichever is odd; elsewhere TwoSum and, where the
 *         sum is even, the one-ulp nudge toward the error) and one
 *         magic-number rounding to nearest even. Narrow accumulators that
 *         truncate take the model.
 *   fp64, sequential: a multiply and an add per term (fp64_sequential).
 * The exact model (kcs_cpu_gemm_own_model) is the oracle of
 * backends/cpu/test_gemm_fast.c. Built with -ffp-contract=off: only the
 * explicit fmaf fuses. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "format_fast.h"
#include "gemm_fast_impl.h"

#define KERN(name) kcs_gf_##name##_base
#include "gemm_fast_kern.h"

/* ---- driver ------------------------------------------------------------ */

static int plan_of(const kcs_schedule *s, size_t k, plan *pl)
{
    switch (s->kind) {
    case KCS_SCHED_SEQUENTIAL: pl->kind = 0; return 1;
    case KCS_SCHED_PAIRWISE: pl->kind = 1; return 1;
    case KCS_SCHED_BLOCKED:
        if (s->param < 1)
            return 0;
        pl->kind = 2;
        pl->chunk = (size_t)s->param;
        return 1;
    case KCS_SCHED_SPLITK: {
        if (s->param < 1)
            return 0;
        size_t chunk = (k + (size_t)s->param - 1) / (size_t)s->param;
        pl->kind = 2;
        pl->chunk = chunk > 0 ? chunk : 1;
        return 1;
    }
    case KCS_SCHED_ATOMIC: pl->kind = 0; return 1; /* sequential over each tile's order */
    default: return 0;
    }
}

_Static_assert((int)R == (int)KCS_GEMM_TILE_M && (int)W == (int)KCS_GEMM_TILE_N,
               "the atomic order is drawn per block of the fast kernels");

/* The packing loops, with an AVX2 copy chosen at run time (the baseline
 * has no vector compare of doubles into an int mask, so its check runs
 * scalar; the other copies' kernels are per-ISA files, these are not). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define PACK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PACK_CLONES
#endif

/* dst = (float)src; nonzero when some value is not an fp32 value (NaN is
 * one when nan_ok). A conversion loop, then a branch-free check, so that
 * both vectorise: a check that stopped at the first bad value took a
 * quarter of a long allreduce's time. */
PACK_CLONES static int to_floats(const double *restrict src, float *restrict dst, size_t n,
                                 int nan_ok)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)src[i];
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double v = src[i], f = (double)dst[i];
        bad |= (f != v) & (!nan_ok | (v == v));
    }
    return bad;
}

/* dst = src; nonzero when some finite value is beyond 2^200 */
PACK_CLONES static int to_nar(const double *restrict src, double *restrict dst, size_t n)
{
    memcpy(dst, src, n * sizeof *dst);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(src[i]);
        bad |= (a > 0x1p200) & (a != INFINITY);
    }
    return bad;
}

/* fp64 accumulator, sequential: the model's terms are fp64 products
 * (exact for inputs of <= 26 bits, else rounded) added in order with plain
 * fp64 additions (kcs_acc_add), so a separate multiply and add per term,
 * vectorised across the columns of a row of B (no fusing here:
 * -ffp-contract=off), is the model. */
static void fp64_sequential(const kcs_call *c, const double *A, const double *B, const double *C,
                            double *D)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    for (size_t i = 0; i < m; i++) {
        double *d = D + i * n;
        for (size_t j = 0; j < n; j++)
            d[j] = 0.0;
        for (size_t p = 0; p < k; p++) {
            double a = A[i * k + p];
            const double *b = B + p * n;
            for (size_t j = 0; j < n; j++)
                d[j] = d[j] + a * b[j];
        }
        if (C)
            for (size_t j = 0; j < n; j++)
                d[j] = d[j] + C[i * n + j];
    }
    kcs_format_round_n(c->dtype_out, D, D, m * n);
}

/* The packed copies of A and B and the atomic order: sc[KCS_SCRATCH_PACK_A,
 * PACK_B, ORDER] (scratch.c). */
static void *pack_get(kcs_cpu_scratch *sc, int which, size_t bytes)
{
    if (!sc[which].p || sc[which].cap < bytes) { /* first use, or fp32 lanes -> fp64 */
        free(sc[which].p);
        sc[which] = kcs_cpu_scratch_take(which, bytes);
    }
    return sc[which].p;
}

static void pack_release(kcs_cpu_scratch *sc)
{
    for (int i = KCS_SCRATCH_PACK_A; i <= KCS_SCRATCH_ORDER; i++)
        kcs_cpu_scratch_give(i, sc[i]);
}

int kcs_cpu_gemm_own_fast(const kcs_call *c, const double *A, const double *B, const double *C,
                          double *D)
{
    const kcs_acc *acc = &c->acc;
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    plan pl;
    if (k == 0 || m == 0 || n == 0 || !plan_of(&c->schedule, k, &pl))
        return 0;
    if (acc->bits == 0 && acc->fmt == KCS_FMT_FP64) {
        if (c->schedule.kind != KCS_SCHED_SEQUENTIAL)
            return 0;
        fp64_sequential(c, A, B, C, D);
        return 1;
    }
    int f32 = acc->bits == 0 && acc->fmt == KCS_FMT_FP32;
    int narrow = acc->bits > 0 ? acc->bits <= 51 : acc->fmt == KCS_FMT_BF16 || acc->fmt == KCS_FMT_FP16;
    if (!f32 && (!narrow || acc->rz))
        return 0;
    size_t mp = (m + R - 1) / R * R, np = (n + W - 1) / W * W;
    /* B's row stride: np (columns n..np zero), or n where n < W: then a
     * block's W-wide row of B runs into the next rows, whose lanes are
     * computed and dropped (their values are B's, checked as the others),
     * and B is not padded to 16 columns (m = n = 2, k = 2^20: 8 MB of
     * floats instead of 64); W zeros after the last row */
    size_t ldb = n < W ? n : np, lenb = k * ldb + W;
    int atomic = c->schedule.kind == KCS_SCHED_ATOMIC;
    f32_block_fn f32_block = kcs_gf_f32_block_base;
    nar_block_fn nar_block = kcs_gf_nar_block_base;
    n32_block_fn n32_block = NULL;
    /* KCS_GEMM_FAST_ISA=base|avx2 caps the copy used (tests run each) */
    const char *cap = getenv("KCS_GEMM_FAST_ISA");
    int max_isa = cap && !strcmp(cap, "base") ? 0 : cap && !strcmp(cap, "avx2") ? 1 : 2;
#if defined(__GNUC__) && defined(__x86_64__)
    if (max_isa >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        kcs_gf_f32_block_avx2() && kcs_gf_nar_block_avx2()) {
        f32_block = kcs_gf_f32_block_avx2();
        nar_block = kcs_gf_nar_block_avx2();
    }
    if (max_isa >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("fma") && kcs_gf_f32_block_avx512() && kcs_gf_nar_block_avx512()) {
        f32_block = kcs_gf_f32_block_avx512();
        nar_block = kcs_gf_nar_block_avx512();
        if (acc->bits == 0 && !f32)
            n32_block = kcs_gf_n32_block_avx512(acc->fmt == KCS_FMT_FP16);
    }
#endif
    void *a = NULL, *b = NULL;
    kcs_cpu_scratch sc[KCS_SCRATCH_ORDER + 1] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
    uint32_t *idx = NULL;
    int ok = !atomic || (k <= (size_t)KCS_ATOMIC_ORDER_MAX &&
                         (idx = pack_get(sc, KCS_SCRATCH_ORDER, k * sizeof *idx)));
    /* float lanes: fp32 accumulators (every value an fp32 value), and bf16
     * / fp16 ones where their float-lane copy runs and no input is NaN;
     * rows m..mp are zero (their outputs are dropped), B's stride ldb */
    int in_f32 = ok && (f32 || n32_block);
    if (in_f32) {
        ok = (a = pack_get(sc, KCS_SCRATCH_PACK_A, mp * k * sizeof(float))) &&
             (b = pack_get(sc, KCS_SCRATCH_PACK_B, lenb * sizeof(float)));
        float *af = a, *bf = b;
        if (ok)
            ok = !to_floats(A, af, m * k, f32);
        if (ok)
            memset(af + m * k, 0, (mp - m) * k * sizeof(float));
        if (ok && ldb == n)
            ok = !to_floats(B, bf, k * n, f32);
        for (size_t p = 0; p < k && ok && ldb != n; p++) {
            ok = !to_floats(B + p * n, bf + p * ldb, n, f32);
            for (size_t j = n; j < ldb; j++)
                bf[p * ldb + j] = 0.0f;
        }
        if (ok)
            memset(bf + k * ldb, 0, W * sizeof(float));
        if (!ok && !f32 && a && b) { /* the double lanes take them */
            in_f32 = 0;
            ok = 1;
        }
    }
    if (ok && !in_f32) {
        /* finite values up to 2^200 (every format but fp64 inputs): nar_round
         * needs the sums' exponents below 2^(1023 - 64) (gemm_fast_kern.h) */
        ok = (a = pack_get(sc, KCS_SCRATCH_PACK_A, mp * k * sizeof(double))) &&
             (b = pack_get(sc, KCS_SCRATCH_PACK_B, lenb * sizeof(double)));
        double *ad = a, *bd = b;
        if (ok)
            ok = !to_nar(A, ad, m * k);
        if (ok)
            memset(ad + m * k, 0, (mp - m) * k * sizeof(double));
        if (ok && ldb == n)
            ok = !to_nar(B, bd, k * n);
        for (size_t p = 0; p < k && ok && ldb != n; p++) {
            ok = !to_nar(B + p * n, bd + p * ldb, n);
            for (size_t j = n; j < ldb; j++)
                bd[p * ldb + j] = 0.0;
        }
        if (ok)
            memset(bd + k * ldb, 0, W * sizeof(double));
    }
    if (!ok) { /* the model path reports a memory failure */
        pack_release(sc);
        return 0;
    }
    f32_job fj = {a, b, k, ldb, idx}; /* idx: the atomic block's order, else NULL */
    nar_job nj = {a, b, k, ldb, idx, 0, 0, 0, 0};
    if (!f32) { /* RNE, Inf, -0, subnormals (nar_round); bits:N as
                 * kcs_round_bits: p = N in fp32's exponent range */
        const kcs_format_info *fi = kcs_format_get(acc->bits > 0 ? KCS_FMT_FP32 : acc->fmt);
        int p = acc->bits > 0 ? acc->bits : fi->p;
        nj.e_lo = (uint64_t)(fi->emin + 1023) << 52;
        nj.m_off = (uint64_t)(53 - p) << 52;
        nj.maxf = ldexp(2.0 - ldexp(1.0, 1 - p), fi->emax);
        nj.sums_exact = p <= 24;
    }
    for (size_t j0 = 0; j0 < np; j0 += W) {
        for (size_t i0 = 0; i0 < mp; i0 += R) {
            float of[R][W];
            double od[R][W];
            if (atomic) /* each block's terms in its drawn order, as the model */
                kcs_atomic_order(kcs_cpu_gemm_tile_seed(c->seed, i0, j0), (int64_t)k, idx);
            if (f32 && acc->rz) { /* only the block's float operations truncate */
                int mode = fegetround();
                fesetround(FE_TOWARDZERO);
                f32_block(&fj, &pl, i0, j0, of);
                fesetround(mode);
            } else if (f32)
                f32_block(&fj, &pl, i0, j0, of);
            else if (in_f32)
                n32_block(&fj, &pl, i0, j0, od);
            else
                nar_block(&nj, &pl, i0, j0, od);
            for (size_t r = 0; r < R && i0 + r < m; r++)
                for (size_t w = 0; w < W && j0 + w < n; w++) {
                    double s = f32 ? (double)of[r][w] : od[r][w];
                    size_t ij = (i0 + r) * n + j0 + w;
                    if (C)
                        s = kcs_acc_add(acc, s, C[ij]);
                    D[ij] = s;
                }
        }
    }
    pack_release(sc);
    kcs_format_round_n(c->dtype_out, D, D, m * n);
    return 1;
}
