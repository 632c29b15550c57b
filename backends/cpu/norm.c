/* CPU layernorm and rmsnorm, row-wise over k (two passes, eps = 1e-5 in
 * the working format, cpu/work.h):
 *   layernorm  mu = sum(x)/k, d = x - mu, var = sum(d*d)/k,
 *              y = d / sqrt(var + eps) * gamma + beta
 *   rmsnorm    ms = sum(x*x)/k, y = x / sqrt(ms + eps) * gamma
 * gamma (in[1]) and beta (in[2], layernorm) may be NULL: 1 and 0.
 *   native: the sums by OpenBLAS sdot/ddot (mean: x·1, variance: d·d,
 *           mean square: x·x), the rest a C loop in the working format with
 *           y = d * (1/sqrt(var + eps)) * gamma + beta.
 *   own:    both sums by kcs_cpu_sum under call->schedule into call->acc
 *           (the terms x, d*d, x*x are exact in double for inputs of <= 26
 *           bits), every elementwise step rounded once into the working
 *           format, in the order written above. */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>

#include "cpu.h"
#include "work.h"

#define NORM_EPS 1e-5

/* A row's work buffers, one block: t, scratch and d in double, f, g and
 * ones in float, k + 1 values each. */
typedef struct norm_bufs {
    double *t, *scratch, *d;
    float *f, *g, *ones;
} norm_bufs;

static void norm_free(norm_bufs *b)
{
    free(b->t);
}

static int norm_alloc(norm_bufs *b, size_t k)
{
    size_t n = k + 1;
    b->t = malloc(3 * n * (sizeof(double) + sizeof(float)));
    if (!b->t)
        return -1;
    b->scratch = b->t + n;
    b->d = b->scratch + n;
    b->f = (float *)(b->d + n);
    b->g = b->f + n;
    b->ones = b->g + n;
    return 0;
}

/* own: one row. */
static void row_own(const kcs_call *c, int rms, const double *x, double *y, norm_bufs *b,
                    uint64_t seed)
{
    const double *G = c->in[1], *Bt = rms ? NULL : c->in[2];
    int64_t k = c->k;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    double eps = kcs_cpu_wround(w, NORM_EPS), kk = (double)k, mu = 0.0;
    if (!rms) {
        double s = kcs_cpu_sum(x, k, &c->schedule, &c->acc, seed, b->scratch);
        mu = kcs_cpu_wround(w, s / kk);
    }
    for (int64_t t = 0; t < k; t++) {
        b->d[t] = rms ? x[t] : kcs_cpu_wround(w, x[t] - mu);
        b->t[t] = b->d[t] * b->d[t];
    }
    double v = kcs_cpu_sum(b->t, k, &c->schedule, &c->acc, seed ^ 0x5eedull, b->scratch);
    double var = kcs_cpu_wround(w, v / kk);
    double den = kcs_cpu_wsqrt(w, kcs_cpu_wround(w, var + eps));
    for (int64_t t = 0; t < k; t++) {
        double z = kcs_cpu_wround(w, b->d[t] / den);
        if (G)
            z = kcs_cpu_wround(w, z * G[t]);
        if (Bt)
            z = kcs_cpu_wround(w, z + Bt[t]);
        y[t] = z;
    }
}

static void row_native64(const kcs_call *c, int rms, const double *x, double *y, norm_bufs *b)
{
    const double *G = c->in[1], *Bt = rms ? NULL : c->in[2];
    int k = (int)c->k;
    double mu = 0.0;
    if (!rms) {
        for (int t = 0; t < k; t++)
            b->t[t] = 1.0;
        mu = cblas_ddot(k, x, 1, b->t, 1) / k;
    }
    for (int t = 0; t < k; t++)
        b->d[t] = x[t] - mu;
    double var = cblas_ddot(k, b->d, 1, b->d, 1) / k;
    double rstd = 1.0 / sqrt(var + NORM_EPS);
    for (int t = 0; t < k; t++) {
        double z = b->d[t] * rstd;
        if (G)
            z = z * G[t];
        if (Bt)
            z = z + Bt[t];
        y[t] = z;
    }
}

static void row_native32(const kcs_call *c, int rms, const double *x, double *y, norm_bufs *b)
{
    const double *G = c->in[1], *Bt = rms ? NULL : c->in[2];
    int k = (int)c->k;
    float mu = 0.0f;
    for (int t = 0; t < k; t++)
        b->f[t] = (float)x[t];
    if (!rms) {
        for (int t = 0; t < k; t++)
            b->ones[t] = 1.0f;
        mu = cblas_sdot(k, b->f, 1, b->ones, 1) / (float)k;
    }
    for (int t = 0; t < k; t++)
        b->g[t] = b->f[t] - mu;
    float var = cblas_sdot(k, b->g, 1, b->g, 1) / (float)k;
    float rstd = 1.0f / sqrtf(var + (float)NORM_EPS);
    for (int t = 0; t < k; t++) {
        float z = b->g[t] * rstd;
        if (G)
            z = z * (float)G[t];
        if (Bt)
            z = z + (float)Bt[t];
        y[t] = z;
    }
}

static int norm_run(const kcs_call *c, int rms, kcs_error *err)
{
    int v = kcs_cpu_variant(c, 0, err);
    if (v < 0)
        return v;
    if (v == 0 && c->k > INT_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s native: k beyond BLAS int range",
                        kcs_op_name(c->op));
    size_t k = (size_t)c->k;
    norm_bufs b;
    if (norm_alloc(&b, k))
        return kcs_fail(err, KCS_E_NOMEM, "cpu %s: out of memory (k=%zu)", kcs_op_name(c->op), k);
    double *y = b.scratch; /* native rows do not use the scratch */
    if (v == 1 && !(y = malloc((k + 1) * sizeof *y))) {
        norm_free(&b);
        return kcs_fail(err, KCS_E_NOMEM, "cpu %s: out of memory (k=%zu)", kcs_op_name(c->op), k);
    }
    for (int64_t i = 0; k > 0 && i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        if (v == 1)
            row_own(c, rms, x, y, &b, kcs_cpu_row_seed(c, (uint64_t)i, 0));
        else if (c->dtype_in == KCS_FMT_FP64)
            row_native64(c, rms, x, y, &b);
        else
            row_native32(c, rms, x, y, &b);
        for (size_t t = 0; t < k; t++)
            c->out[(size_t)i * k + t] = kcs_cpu_out(c, y[t]);
    }
    if (v == 1)
        free(y);
    norm_free(&b);
    return 0;
}

int kcs_cpu_layernorm(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    return norm_run(c, 0, err);
}

int kcs_cpu_rmsnorm(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    return norm_run(c, 1, err);
}
