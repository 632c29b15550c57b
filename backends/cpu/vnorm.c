/* CPU norm: y_i = ||x_i||_2 of each of the m rows of length k.
 *   native: OpenBLAS snrm2 per row (dnrm2 for fp64 inputs); the library's
 *           own scaling and accumulation, the declared accumulator not
 *           consulted (what the library does is what is measured).
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
