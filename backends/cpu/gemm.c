/* CPU gemm / batched_gemm: D = C + A·B.
 *   native: OpenBLAS (sgemm for <= fp32 inputs, dgemm for fp64)
 *   own:    explicit reduction schedule and accumulator (cpu/acc.c)
 *   profile set on the context: emulated matrix unit (cpu/blockfma.c) */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "format_fast.h"
#include "profile.h"

static int gemm_native(const kcs_call *c, const double *A, const double *B, const double *C,
                       double *D, kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    if (c->dtype_in == KCS_FMT_FP64) {
        if (C)
            memcpy(D, C, m * n * sizeof *D);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, A,
                    (int)k, B, (int)n, C ? 1.0 : 0.0, D, (int)n);
        kcs_format_round_n(c->dtype_out, D, D, m * n);
        return 0;
    }
    float *fa = malloc(m * k * sizeof *fa), *fb = malloc(k * n * sizeof *fb);
    float *fd = malloc(m * n * sizeof *fd);
    if (!fa || !fb || !fd) {
        free(fa);
        free(fb);
        free(fd);
        return kcs_fail(err, KCS_E_NOMEM, "cpu gemm: out of memory (%zux%zux%zu)", m, n, k);
    }
    for (size_t i = 0; i < m * k; i++)
        fa[i] = (float)A[i];
    for (size_t i = 0; i < k * n; i++)
        fb[i] = (float)B[i];
    for (size_t i = 0; i < m * n; i++)
        fd[i] = C ? (float)C[i] : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, fa,
                (int)k, fb, (int)n, C ? 1.0f : 0.0f, fd, (int)n);
    for (size_t i = 0; i < m * n; i++)
        D[i] = (double)fd[i];
    kcs_format_round_n(c->dtype_out, D, D, m * n);
    free(fa);
    free(fb);
    free(fd);
    return 0;
}

int kcs_cpu_gemm_own_model(const kcs_call *c, const double *A, const double *B, const double *C,
                           double *D, kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    double *bt = malloc(k * n * sizeof *bt);
    double *terms = malloc((k ? k : 1) * sizeof *terms);
    double *scratch = malloc((k ? k : 1) * sizeof *scratch);
    if (!bt || !terms || !scratch) {
        free(bt);
        free(terms);
        free(scratch);
        return kcs_fail(err, KCS_E_NOMEM, "cpu gemm: out of memory (%zux%zux%zu)", m, n, k);
    }
    for (size_t p = 0; p < k; p++)
        for (size_t j = 0; j < n; j++)
            bt[j * k + p] = B[p * n + j];
    for (size_t i = 0; i < m; i++) {
        const double *a = A + i * k;
        for (size_t j = 0; j < n; j++) {
            const double *b = bt + j * k;
            for (size_t p = 0; p < k; p++)
                terms[p] = a[p] * b[p]; /* exact for inputs of <= 26 bits */
            uint64_t seed = kcs_cpu_gemm_tile_seed(c->seed, i, j); /* atomic: per tile */
            double s = kcs_cpu_sum(terms, (int64_t)k, &c->schedule, &c->acc, seed, scratch);
            if (C)
                s = kcs_acc_add(&c->acc, s, C[i * n + j]);
            D[i * n + j] = kcs_format_round(c->dtype_out, s, KCS_ROUND_DEFAULT);
        }
    }
    free(bt);
    free(terms);
    free(scratch);
    return 0;
}

static int gemm_profile(kcs_backend_ctx *ctx, const kcs_call *c, const double *A, const double *B,
                        const double *C, double *D, kcs_error *err)
{
    const kcs_profile_params *p;
    char name[KCS_PROFILE_SPEC_MAX];
    kcs_libpath lp;
    int rc = kcs_profile_spec_parse(ctx->profile, name, &lp, err);
    if (!rc)
        rc = kcs_profile_lookup(name, c->dtype_in, &p, err);
    if (rc)
        return rc;
    if (kcs_emulated_gemm_lib(p, &lp, c->m, c->n, c->k, A, B, C, D))
        return kcs_fail(err, KCS_E_NOMEM, "cpu: out of memory emulating %s", ctx->profile);
    if (c->dtype_out != KCS_FMT_FP32)
        kcs_format_round_n(c->dtype_out, D, D, (size_t)(c->m * c->n));
    return 0;
}

int kcs_cpu_gemm(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    size_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? (size_t)c->batch : 1;
    size_t sa = (size_t)(c->m * c->k), sb = (size_t)(c->k * c->n), sd = (size_t)(c->m * c->n);
    for (size_t b = 0; b < batch; b++) {
        const double *A = c->in[0] + b * sa, *B = c->in[1] + b * sb;
        const double *C = c->in[2] ? c->in[2] + b * sd : NULL;
        double *D = c->out + b * sd;
        int rc;
        if (ctx->profile[0])
            rc = gemm_profile(ctx, c, A, B, C, D, err);
        else if (strcmp(c->variant, "native") == 0)
            rc = gemm_native(c, A, B, C, D, err);
        else if (strcmp(c->variant, "own") == 0)
            rc = kcs_cpu_gemm_own_fast(c, A, B, C, D)
                     ? 0
                     : kcs_cpu_gemm_own_model(c, A, B, C, D, err);
        else if (strcmp(c->variant, "own:exact") == 0) /* the fast paths' oracle (kcs bench arith) */
            rc = kcs_cpu_gemm_own_model(c, A, B, C, D, err);
        else
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: gemm has no variant '%s'", c->variant);
        if (rc)
            return rc;
    }
    return 0;
}
