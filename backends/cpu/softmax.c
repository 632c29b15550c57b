/* CPU softmax, row-wise over k with max-subtraction:
 *   y_j = exp(x_j - max) / sum_t exp(x_t - max)
 * Elementwise steps in the working format (cpu/work.h: expf for fp32 and
 * narrower inputs, exp for fp64).
 *   native: a plain C loop in the working format, the denominator summed by
 *           OpenBLAS sasum/dasum (all terms are positive, so asum is the
 *           sum, in OpenBLAS's own order); y_j = e_j / s.
 *   own:    the denominator is kcs_cpu_sum of the exps under
 *           call->schedule into call->acc; y_j = RN_w(e_j / s).
 * NaN in a row makes the whole row NaN (x_j - max is NaN, so is the sum);
 * +Inf makes it NaN too (Inf - Inf). */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>

#include "cpu.h"
#include "work.h"

static double row_max(const double *x, int64_t k)
{
    double mx = -INFINITY;
    for (int64_t t = 0; t < k; t++)
        mx = fmax(mx, x[t]);
    return mx;
}

void kcs_cpu_softmax_row(const double *x, int64_t k, kcs_format w, const kcs_schedule *s,
                         const kcs_acc *acc, uint64_t seed, double *e, double *scratch, double *y)
{
    double mx = row_max(x, k);
    for (int64_t t = 0; t < k; t++)
        e[t] = kcs_cpu_wexp(w, kcs_cpu_wround(w, x[t] - mx));
    double sum = kcs_cpu_sum(e, k, s, acc, seed, scratch);
    for (int64_t t = 0; t < k; t++)
        y[t] = kcs_cpu_wround(w, e[t] / sum);
}

void kcs_cpu_softmax_row_native(const double *x, int64_t k, kcs_format w, double *e, float *fe,
                                double *y)
{
    double mx = row_max(x, k);
    double sum;
    if (w == KCS_FMT_FP64) {
        for (int64_t t = 0; t < k; t++)
            e[t] = exp(x[t] - mx);
        sum = cblas_dasum((int)k, e, 1);
    } else {
        float fmx = (float)mx;
        for (int64_t t = 0; t < k; t++) {
            fe[t] = expf((float)x[t] - fmx);
            e[t] = fe[t];
        }
        sum = cblas_sasum((int)k, fe, 1);
    }
    for (int64_t t = 0; t < k; t++)
        y[t] = kcs_cpu_wround(w, e[t] / sum);
}

int kcs_cpu_softmax(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    int v = kcs_cpu_variant(c, 0, err);
    if (v < 0)
        return v;
    if (v == 0 && c->k > INT_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: softmax native: k beyond BLAS int range");
    size_t k = (size_t)c->k;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    double *e = malloc((k + 1) * sizeof *e), *scratch = malloc((k + 1) * sizeof *scratch);
    double *y = malloc((k + 1) * sizeof *y);
    float *fe = malloc((k + 1) * sizeof *fe);
    if (!e || !scratch || !y || !fe) {
        free(e);
        free(scratch);
        free(y);
        free(fe);
        return kcs_fail(err, KCS_E_NOMEM, "cpu softmax: out of memory (k=%zu)", k);
    }
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        if (v == 0)
            kcs_cpu_softmax_row_native(x, c->k, w, e, fe, y);
        else
            kcs_cpu_softmax_row(x, c->k, w, &c->schedule, &c->acc,
                                kcs_cpu_row_seed(c, (uint64_t)i, 0), e, scratch, y);
        for (size_t t = 0; t < k; t++)
            c->out[(size_t)i * k + t] = kcs_cpu_out(c, y[t]);
    }
    free(e);
    free(scratch);
    free(y);
    free(fe);
    return 0;
}
