/* attention on OpenCL (kernels/attention.cl): own = the unfused
 * composition (scores, softmax, P·V: three kernels, schedules honoured,
 * intermediates in the accumulator type); native = one fused kernel with
 * an online softmax. Q batch×m×d, K and V batch×n×d, d = call->k. */
#include <math.h>

#include "ocl.h"

enum { BQ, BK, BV, BS, BO, NBUF };

#define KCS_OCL_ACOLS 16 /* attention.cl KCS_ACOLS */

static int launch(kcs_backend_ctx *ctx, const kcs_ocl_types *ty, const char *name,
                  const kcs_ocl_arg *a, int na, int dims, const size_t *g, const size_t *l,
                  kcs_error *err)
{
    cl_kernel k;
    int rc = kcs_ocl_kernel(ctx, "attention.cl", name, ty, &k, err);
    if (rc)
        return rc;
    rc = kcs_ocl_set_args(k, name, a, na, err);
    if (!rc)
        rc = kcs_ocl_launch(ctx, k, name, dims, g, l, err);
    clReleaseKernel(k);
    return rc;
}

int kcs_ocl_attention(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, int own,
                      kcs_error *err)
{
    cl_long m = c->m, n = c->n, d = c->k;
    cl_long batch = c->batch > 0 ? c->batch : 1;
    cl_long rows = batch * m;
    cl_int kind = (cl_int)c->schedule.kind;
    cl_long param = c->schedule.param;
    size_t acc_size = ty->tacc ? sizeof(cl_double) : sizeof(cl_float);
    /* scale = RN_acc(1/sqrt(d)) */
    double scale_d = d > 0 ? 1.0 / sqrt((double)d) : 1.0;
    cl_float scale_f = (cl_float)scale_d;
    kcs_ocl_arg scale = ty->tacc ? KCS_OCL_ARG(scale_d) : KCS_OCL_ARG(scale_f);
    if (!own && d > (cl_long)ctx->awg * KCS_OCL_ACOLS)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "opencl: fused attention handles head dimensions up to %d (k = %lld)",
                        ctx->awg * KCS_OCL_ACOLS, (long long)d);
    cl_mem buf[NBUF] = {0};
    int rc = kcs_ocl_upload(ctx, ty->tin, c->in[0], (size_t)(rows * d), 0, &buf[BQ], err);
    if (!rc)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[1], (size_t)(batch * n * d), 1, &buf[BK], err);
    if (!rc)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[2], (size_t)(batch * n * d), 2, &buf[BV], err);
    if (!rc)
        rc = kcs_ocl_alloc(ctx, (size_t)(rows * d), acc_size, &buf[BO], err);
    if (rc)
        goto out;
    if (own) {
        rc = kcs_ocl_alloc(ctx, (size_t)(rows * n), acc_size, &buf[BS], err);
        if (rc)
            goto out;
        kcs_ocl_arg a1[] = {KCS_OCL_ARG(buf[BQ]), KCS_OCL_ARG(buf[BK]), KCS_OCL_ARG(buf[BS]),
                            KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(d),
                            scale,                KCS_OCL_ARG(kind),    KCS_OCL_ARG(param)};
        size_t g1[3] = {(size_t)n, (size_t)m, (size_t)batch};
        rc = launch(ctx, ty, "attn_scores", a1, 9, 3, g1, NULL, err);
        if (rc)
            goto out;
        kcs_ocl_arg a2[] = {KCS_OCL_ARG(buf[BS]), KCS_OCL_ARG(rows), KCS_OCL_ARG(n),
                            KCS_OCL_ARG(kind), KCS_OCL_ARG(param)};
        size_t g2 = (size_t)rows;
        rc = launch(ctx, ty, "attn_softmax", a2, 5, 1, &g2, NULL, err);
        if (rc)
            goto out;
        kcs_ocl_arg a3[] = {KCS_OCL_ARG(buf[BS]), KCS_OCL_ARG(buf[BV]), KCS_OCL_ARG(buf[BO]),
                            KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(d),
                            KCS_OCL_ARG(kind),    KCS_OCL_ARG(param)};
        size_t g3[3] = {(size_t)d, (size_t)m, (size_t)batch};
        rc = launch(ctx, ty, "attn_pv", a3, 8, 3, g3, NULL, err);
    } else {
        kcs_ocl_arg a[] = {KCS_OCL_ARG(buf[BQ]), KCS_OCL_ARG(buf[BK]),
                           KCS_OCL_ARG(buf[BV]), KCS_OCL_ARG(buf[BO]),
                           KCS_OCL_ARG(m),       KCS_OCL_ARG(n),
                           KCS_OCL_ARG(d),       scale,
                           KCS_OCL_LOCAL((size_t)(d > 0 ? d : 1) * acc_size)};
        size_t l[2] = {(size_t)ctx->awg, 1};
        size_t g[2] = {(size_t)m * l[0], (size_t)batch};
        rc = launch(ctx, ty, "attn_fused", a, 9, 2, g, l, err);
    }
    if (!rc)
        rc = kcs_ocl_download(ctx, buf[BO], (size_t)(rows * d), ty->tacc, c->dtype_out, c->out,
                              err);
out:
    kcs_ocl_release(buf, NBUF);
    return rc;
}
