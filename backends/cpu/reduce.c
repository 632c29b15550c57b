/* CPU reduce_sum (m rows of length k -> m sums), dot (x·y, length k) and
 * the single-process allreduce.
 *   native: OpenBLAS. reduce_sum = sgemv/dgemv of X with a vector of ones
 *           (x·1 is exact, so the sum is OpenBLAS's own reduction order);
 *           dot = sdot/ddot. fp32 arithmetic for fp32 and narrower
 *           inputs, fp64 for fp64 inputs; the declared accumulator is not
 *           consulted (what the library does is what is measured).
 *   own:    kcs_cpu_sum of the exact terms (x, or x_i*y_i: exact for
 *           inputs of <= 26 bits; for fp64 inputs the product is rounded
 *           to double first) under call->schedule, every addition rounded
 *           into call->acc.
 * allreduce: the CPU backend has no communicator, so the op is the
 *   collective's reduction in one process: in[0] holds the m ranks'
 *   contributions (m x k; m <= 1: one rank, y = x rounded into the
 *   accumulator), y_i = the sum over ranks of x_r,i.
 *   native: the "library" order of src/run/allreduce.c: the contributions
 *           summed in fp64 in rank order, then one rounding into acc.
 *   own:    kcs_cpu_sum of the m contributions of each element under
 *           call->schedule (sequential: rank order; pairwise: a tree;
 *           atomic: an order drawn from the call's seed, as a reduction in
 *           message-arrival order), every addition rounded into call->acc.
 *   The multi-rank collective itself is kcs_allreduce (src/run/allreduce.c,
 *   tests/integration/allreduce_test.c).
 * norm: y_i = ||x_i||_2 of each of the m rows of length k.
 *   native: OpenBLAS snrm2 per row (dnrm2 for fp64 inputs); the library's
 *           own scaling and accumulation, the declared accumulator not
 *           consulted.
 *   own:    the squares x_t^2 (exact in double for inputs of <= 26 bits;
 *           for fp64 inputs rounded to double), summed by kcs_cpu_sum
 *           under call->schedule, every addition rounded into call->acc,
 *           then one sqrt in the working format (cpu/work.h). No scaling:
 *           a row whose sum of squares overflows the accumulator gives Inf
 *           (the unscaled textbook kernel). */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>

#include "cpu.h"
#include "work.h"

static int blas_fits(const kcs_call *c, int64_t rows, kcs_error *err)
{
    if (c->k > INT_MAX || rows > INT_MAX || (rows > 0 && c->k > INT_MAX / rows))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s native: shape beyond BLAS int range",
                        kcs_op_name(c->op));
    return 0;
}

static int reduce_native(const kcs_call *c, kcs_error *err)
{
    int rc = blas_fits(c, c->m, err);
    if (rc)
        return rc;
    int m = (int)c->m, k = (int)c->k;
    size_t mk = (size_t)m * (size_t)k;
    const double *X = c->in[0];
    if (c->dtype_in == KCS_FMT_FP64) {
        double *ones = malloc(((size_t)k + 1) * sizeof *ones);
        double *y = malloc(((size_t)m + 1) * sizeof *y);
        if (!ones || !y) {
            free(ones);
            free(y);
            return kcs_fail(err, KCS_E_NOMEM, "cpu reduce_sum: out of memory");
        }
        for (int i = 0; i < k; i++)
            ones[i] = 1.0;
        if (m > 0 && k > 0)
            cblas_dgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0, X, k, ones, 1, 0.0, y, 1);
        for (int i = 0; i < m; i++)
            c->out[i] = kcs_cpu_out(c, k > 0 ? y[i] : 0.0);
        free(ones);
        free(y);
        return 0;
    }
    float *fx = malloc((mk + 1) * sizeof *fx), *ones = malloc(((size_t)k + 1) * sizeof *ones);
    float *y = malloc(((size_t)m + 1) * sizeof *y);
    if (!fx || !ones || !y) {
        free(fx);
        free(ones);
        free(y);
        return kcs_fail(err, KCS_E_NOMEM, "cpu reduce_sum: out of memory");
    }
    for (size_t i = 0; i < mk; i++)
        fx[i] = (float)X[i];
    for (int i = 0; i < k; i++)
        ones[i] = 1.0f;
    if (m > 0 && k > 0)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, fx, k, ones, 1, 0.0f, y, 1);
    for (int i = 0; i < m; i++)
        c->out[i] = kcs_cpu_out(c, k > 0 ? (double)y[i] : 0.0);
    free(fx);
    free(ones);
    free(y);
    return 0;
}

static int dot_native(const kcs_call *c, kcs_error *err)
{
    int rc = blas_fits(c, 1, err);
    if (rc)
        return rc;
    int k = (int)c->k;
    const double *x = c->in[0], *y = c->in[1];
    if (c->dtype_in == KCS_FMT_FP64) {
        c->out[0] = kcs_cpu_out(c, k > 0 ? cblas_ddot(k, x, 1, y, 1) : 0.0);
        return 0;
    }
    float *fx = malloc(((size_t)k + 1) * 2 * sizeof *fx);
    if (!fx)
        return kcs_fail(err, KCS_E_NOMEM, "cpu dot: out of memory");
    float *fy = fx + k;
    for (int i = 0; i < k; i++) {
        fx[i] = (float)x[i];
        fy[i] = (float)y[i];
    }
    c->out[0] = kcs_cpu_out(c, k > 0 ? (double)cblas_sdot(k, fx, 1, fy, 1) : 0.0);
    free(fx);
    return 0;
}

/* own: rows of X (reduce_sum) or the products x_i*y_i (dot). */
static int sum_own(const kcs_call *c, kcs_error *err)
{
    size_t k = (size_t)c->k;
    double *terms, *scratch;
    if (kcs_cpu_alloc2(k, &terms, &scratch))
        return kcs_fail(err, KCS_E_NOMEM, "cpu %s: out of memory (k=%zu)", kcs_op_name(c->op), k);
    if (c->op == KCS_OP_DOT) {
        for (size_t t = 0; t < k; t++)
            terms[t] = c->in[0][t] * c->in[1][t];
        double s = kcs_cpu_sum(terms, c->k, &c->schedule, &c->acc, kcs_cpu_row_seed(c, 0, 0),
                               scratch);
        c->out[0] = kcs_cpu_out(c, s);
    } else {
        for (int64_t i = 0; i < c->m; i++) {
            double s = kcs_cpu_sum(c->in[0] + (size_t)i * k, c->k, &c->schedule, &c->acc,
                                   kcs_cpu_row_seed(c, (uint64_t)i, 0), scratch);
            c->out[i] = kcs_cpu_out(c, s);
        }
    }
    free(terms);
    free(scratch);
    return 0;
}

int kcs_cpu_reduce_sum(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    return kcs_cpu_by_variant(c, reduce_native, sum_own, err);
}

int kcs_cpu_dot(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    return kcs_cpu_by_variant(c, dot_native, sum_own, err);
}

/* fp64 sums of each element's contributions in rank order, row by row
 * (the same additions as the per-element loop, without its strided
 * gather): the native order, and own with an fp64 accumulator, whose
 * every addition is a plain fp64 add (kcs_acc_add). */
static int allreduce_fp64_rows(const kcs_call *c, int64_t P, int round_acc, kcs_error *err)
{
    int64_t k = c->k;
    double *s = calloc((size_t)k + 1, sizeof *s);
    if (!s)
        return kcs_fail(err, KCS_E_NOMEM, "cpu allreduce: out of memory (k=%lld)", (long long)k);
    for (int64_t r = 0; r < P; r++) {
        const double *x = c->in[0] + r * k;
        for (int64_t i = 0; i < k; i++)
            s[i] += x[i];
    }
    for (int64_t i = 0; i < k; i++)
        c->out[i] = kcs_cpu_out(c, round_acc ? kcs_acc_round(&c->acc, s[i]) : s[i]);
    free(s);
    return 0;
}

/* own, every schedule but atomic: y = 1^T X, a 1 x k x P GEMM whose terms
 * 1 * x_r,i are exact, so the own GEMM's fast kernels (bit-identical to
 * kcs_cpu_sum over each column: gemm.c's model) give the same sums. The
 * atomic order is drawn per element here and per tile there: not taken.
 * Returns 1 when done. */
static int allreduce_fast(const kcs_call *c, int64_t P)
{
    if (c->schedule.kind == KCS_SCHED_ATOMIC)
        return 0;
    double *ones = malloc((size_t)P * sizeof *ones);
    if (!ones)
        return 0;
    for (int64_t r = 0; r < P; r++)
        ones[r] = 1.0;
    kcs_call g = *c;
    g.op = KCS_OP_GEMM;
    g.m = 1;
    g.n = c->k;
    g.k = P;
    int done = kcs_cpu_gemm_own_fast(&g, ones, c->in[0], NULL, c->out);
    free(ones);
    return done;
}

int kcs_cpu_allreduce(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    int v = kcs_cpu_variant(c, 0, err);
    if (v < 0)
        return v;
    int64_t P = c->m > 1 ? c->m : 1, k = c->k;
    if (P == 1) {
        for (int64_t i = 0; i < k; i++)
            c->out[i] = kcs_cpu_out(c, kcs_acc_round(&c->acc, c->in[0][i]));
        return 0;
    }
    if (v == 0)
        return allreduce_fp64_rows(c, P, 1, err);
    if (c->acc.bits == 0 && c->acc.fmt == KCS_FMT_FP64 &&
        c->schedule.kind == KCS_SCHED_SEQUENTIAL)
        return allreduce_fp64_rows(c, P, 0, err);
    if (allreduce_fast(c, P))
        return 0;
    double *terms, *scratch;
    if (kcs_cpu_alloc2((size_t)P, &terms, &scratch))
        return kcs_fail(err, KCS_E_NOMEM, "cpu allreduce: out of memory (m=%lld)", (long long)P);
    /* atomic: each element's order drawn in bulk (kcs_atomic_order, the
     * same swaps as kcs_cpu_sum's shuffle), then summed sequentially */
    int atomic = c->schedule.kind == KCS_SCHED_ATOMIC;
    uint32_t *idx = atomic && P <= KCS_ATOMIC_ORDER_MAX ? malloc((size_t)P * sizeof *idx) : NULL;
    if (atomic && !idx) {
        free(terms);
        free(scratch);
        return kcs_fail(err, KCS_E_NOMEM, "cpu allreduce: out of memory (m=%lld)", (long long)P);
    }
    kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0};
    for (int64_t i = 0; i < k; i++) {
        uint64_t seed = kcs_cpu_row_seed(c, (uint64_t)i, 0);
        if (atomic)
            kcs_atomic_order(seed, P, idx);
        for (int64_t r = 0; r < P; r++)
            terms[r] = c->in[0][(atomic ? idx[r] : r) * k + i];
        double s = kcs_cpu_sum(terms, P, atomic ? &seq : &c->schedule, &c->acc, seed, scratch);
        c->out[i] = kcs_cpu_out(c, s);
    }
    free(idx);
    free(terms);
    free(scratch);
    return 0;
}

/* ---- norm ------------------------------------------------------------ */

static int norm_native(const kcs_call *c, kcs_error *err)
{
    if (c->k > INT_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: norm native: k beyond BLAS int range");
    int k = (int)c->k;
    const double *X = c->in[0];
    if (c->dtype_in == KCS_FMT_FP64) {
        for (int64_t i = 0; i < c->m; i++)
            c->out[i] = kcs_cpu_out(c, k > 0 ? cblas_dnrm2(k, X + (size_t)i * (size_t)k, 1) : 0.0);
        return 0;
    }
    float *fx = malloc(((size_t)k + 1) * sizeof *fx);
    if (!fx)
        return kcs_fail(err, KCS_E_NOMEM, "cpu norm: out of memory (k=%d)", k);
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = X + (size_t)i * (size_t)k;
        for (int t = 0; t < k; t++)
            fx[t] = (float)x[t];
        c->out[i] = kcs_cpu_out(c, k > 0 ? (double)cblas_snrm2(k, fx, 1) : 0.0);
    }
    free(fx);
    return 0;
}

static int norm_own(const kcs_call *c, kcs_error *err)
{
    size_t k = (size_t)c->k;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    double *sq, *scratch;
    if (kcs_cpu_alloc2(k, &sq, &scratch))
        return kcs_fail(err, KCS_E_NOMEM, "cpu norm: out of memory (k=%zu)", k);
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        for (size_t t = 0; t < k; t++)
            sq[t] = x[t] * x[t];
        double s = kcs_cpu_sum(sq, c->k, &c->schedule, &c->acc,
                               kcs_cpu_row_seed(c, (uint64_t)i, 0), scratch);
        c->out[i] = kcs_cpu_out(c, kcs_cpu_wsqrt(w, s));
    }
    free(sq);
    free(scratch);
    return 0;
}

int kcs_cpu_norm(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    return kcs_cpu_by_variant(c, norm_native, norm_own, err);
}
