/* Evidence for the normalisations (norm_evidence.h). */
#include "norm_evidence.h"

#include <math.h>
#include <stdlib.h>

static int is_norm(const kcs_call *c)
{
    return (c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM) && c->m >= 1 && c->k >= 2 &&
           c->in[0];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kcs_norm_cancel_bits(const kcs_call *c)
{
    if (!is_norm(c) || c->op == KCS_OP_RMSNORM)
        return 0.0;
    size_t k = (size_t)c->k, rows = (size_t)c->m;
    double *bits = malloc(rows * sizeof *bits);
    if (!bits)
        return 0.0;
    for (size_t i = 0; i < rows; i++) {
        const double *x = c->in[0] + i * k;
        double mu = 0.0, var = 0.0;
        for (size_t t = 0; t < k; t++)
            mu += x[t];
        mu /= (double)k;
        for (size_t t = 0; t < k; t++)
            var += (x[t] - mu) * (x[t] - mu); /* two-pass, fp64 */
        var /= (double)k;
        double b = var > 0.0 ? log2((var + mu * mu) / var) : 53.0;
        bits[i] = isfinite(b) ? fmin(b, 53.0) : 53.0;
    }
    qsort(bits, rows, sizeof *bits, cmp_double);
    double med = rows % 2 ? bits[rows / 2] : 0.5 * (bits[rows / 2 - 1] + bits[rows / 2]);
    free(bits);
    return med;
}

double kcs_norm_row_scale_fit(const kcs_call *c, const double *y, const double *ref, size_t n)
{
    if (!is_norm(c))
        return 0.0;
    size_t k = (size_t)c->k, rows = (size_t)c->m;
    if (n < rows * k)
        return 0.0;
    const double *beta = c->op == KCS_OP_LAYERNORM ? c->in[2] : NULL;
    double explained = 0.0, total = 0.0;
    for (size_t i = 0; i < rows; i++) {
        double et = 0.0, tt = 0.0, ee = 0.0;
        for (size_t t = 0; t < k; t++) {
            size_t o = i * k + t;
            if (!isfinite(y[o]) || !isfinite(ref[o]))
                continue;
            double e = y[o] - ref[o], s = ref[o] - (beta ? beta[t] : 0.0);
            et += e * s;
            tt += s * s;
            ee += e * e;
        }
        total += ee;
        if (tt > 0.0)
            explained += fmin(et * et / tt, ee);
    }
    return total > 0.0 ? explained / total : 0.0;
}
