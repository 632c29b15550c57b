/* What every calibration wrapper (calib_wrap.c, calib_wrap_rows.c) is
 * built from: a call of the inner backend's native kernel on host buffers
 * (whole or by blocks of the rows), and rounding of intermediates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_wrap_impl.h"

int kcs_wrap_forward(kcs_backend_ctx *w, const kcs_call *c, const double *in0,
                     const double *in1, kcs_error *err)
{
    kcs_call f = *c;
    f.variant = "native";
    if (in0)
        f.in[0] = in0;
    if (in1)
        f.in[1] = in1;
    return w->inner->run(w->ictx, &f, err);
}

int kcs_wrap_native(kcs_backend_ctx *w, const kcs_call *tmpl, kcs_op op, int64_t m, int64_t n,
                    int64_t k, int64_t batch, kcs_format din, kcs_format dout, const double *in0,
                    const double *in1, const double *in2, double *out, kcs_error *err)
{
    kcs_call c = *tmpl;
    c.op = op;
    c.variant = "native";
    c.schedule = (kcs_schedule){KCS_SCHED_SEQUENTIAL, 0};
    c.profile = NULL;
    c.dtype_in = din;
    c.dtype_out = dout;
    c.m = m;
    c.n = n;
    c.k = k;
    c.batch = batch;
    const double *in[3] = {in0, in1, in2};
    for (int i = 0; i < KCS_MAX_INPUTS; i++) {
        c.in[i] = i < 3 ? in[i] : NULL;
        c.in_len[i] = c.in[i] ? kcs_op_in_len(&c, i) : 0;
    }
    c.out = out;
    c.out_len = kcs_op_out_len(&c);
    return w->inner->run(w->ictx, &c, err);
}

double *kcs_wrap_alloc(size_t n, kcs_error *err)
{
    double *p = malloc((n + 1) * sizeof *p);
    if (!p)
        kcs_fail(err, KCS_E_NOMEM, "calibration wrapper: out of memory (%zu values)", n);
    return p;
}

double kcs_wrap_round(kcs_format f, double x)
{
    return kcs_format_round(f, x, KCS_ROUND_DEFAULT);
}


int kcs_wrap_blocks(kcs_backend_ctx *w, const kcs_call *c, kcs_op op, size_t block,
                    double **p_p, size_t *nb_p, kcs_error *err)
{
    size_t m = (size_t)c->m, k = (size_t)c->k, nb = (k + block - 1) / block;
    double *x = kcs_wrap_alloc(m * nb * block, err), *p = kcs_wrap_alloc(m * nb, err);
    int rc = !x || !p ? KCS_E_NOMEM : 0;
    for (size_t i = 0; !rc && i < m; i++)
        for (size_t t = 0; t < nb * block; t++)
            x[i * nb * block + t] = t < k ? c->in[0][i * k + t] : 0.0;
    if (!rc)
        rc = kcs_wrap_native(w, c, op, (int64_t)(m * nb), 0, (int64_t)block, 0, c->dtype_in,
                             KCS_FMT_FP32, x, NULL, NULL, p, err);
    free(x);
    if (rc) {
        free(p);
        p = NULL;
    }
    *p_p = p;
    *nb_p = nb;
    return rc;
}
