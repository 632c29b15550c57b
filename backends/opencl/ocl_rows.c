/* reduce_sum, softmax, layernorm and rmsnorm on OpenCL (kernels/rows.cl):
 * own = one work-item per row under the call's schedule (the cpu backend's
 * own definitions); native = one work-group per row with a local-memory
 * tree. */
#include "ocl.h"

enum { BX, BG, BBETA, BY, NBUF };

int kcs_ocl_rows(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, int own,
                 kcs_error *err)
{
    cl_long m = c->m, k = c->k;
    int norm = c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM;
    cl_int rms = c->op == KCS_OP_RMSNORM;
    cl_int has_g = norm && c->in[1] != NULL;
    cl_int has_b = c->op == KCS_OP_LAYERNORM && c->in[2] != NULL;
    cl_int kind = (cl_int)c->schedule.kind;
    cl_long param = c->schedule.param;
    size_t out_n = c->op == KCS_OP_REDUCE_SUM ? (size_t)m : (size_t)(m * k);
    cl_mem buf[NBUF] = {0};
    cl_kernel kern = NULL;
    const char *name;
    if (c->op == KCS_OP_REDUCE_SUM)
        name = own ? "reduce_sum_own" : "reduce_sum_native";
    else if (c->op == KCS_OP_SOFTMAX)
        name = own ? "softmax_own" : "softmax_native";
    else
        name = own ? "norm_own" : "norm_native";
    int rc = kcs_ocl_upload(ctx, ty->tin, c->in[0], (size_t)(m * k), 0, &buf[BX], err);
    if (!rc && has_g)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[1], (size_t)k, 1, &buf[BG], err);
    if (!rc && has_b)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[2], (size_t)k, 2, &buf[BBETA], err);
    if (!rc)
        rc = kcs_ocl_alloc(ctx, out_n, KCS_OCL_OUT_SIZE(ty), &buf[BY], err);
    if (!rc)
        rc = kcs_ocl_kernel(ctx, "rows.cl", name, ty, &kern, err);
    if (rc)
        goto out;
    kcs_ocl_arg a[11];
    int na = 0;
    a[na++] = KCS_OCL_ARG(buf[BX]);
    if (norm) {
        a[na++] = KCS_OCL_ARG(buf[BG]);
        a[na++] = KCS_OCL_ARG(buf[BBETA]);
    }
    a[na++] = KCS_OCL_ARG(buf[BY]);
    a[na++] = KCS_OCL_ARG(m);
    a[na++] = KCS_OCL_ARG(k);
    if (norm) {
        a[na++] = KCS_OCL_ARG(has_g);
        a[na++] = KCS_OCL_ARG(has_b);
        a[na++] = KCS_OCL_ARG(rms);
    }
    if (own) {
        a[na++] = KCS_OCL_ARG(kind);
        a[na++] = KCS_OCL_ARG(param);
    }
    rc = kcs_ocl_set_args(kern, name, a, na, err);
    if (rc)
        goto out;
    if (own) {
        size_t g = (size_t)m;
        rc = kcs_ocl_launch(ctx, kern, name, 1, &g, NULL, err);
    } else {
        size_t l = (size_t)ctx->rwg, g = (size_t)m * l;
        rc = kcs_ocl_launch(ctx, kern, name, 1, &g, &l, err);
    }
    if (!rc)
        rc = kcs_ocl_download(ctx, buf[BY], out_n, KCS_OCL_OUT_DBL(ty), c->dtype_out, c->out,
                              err);
out:
    if (kern)
        clReleaseKernel(kern);
    kcs_ocl_release(buf, NBUF);
    return rc;
}
