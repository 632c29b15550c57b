/* gemm, batched_gemm and dot on OpenCL (kernels/gemm.cl).
 *   native: gemm_tiled (local-memory tiles, register blocking, fma) on
 *           GPUs and accelerators, gemm_vec (explicit vectors) on CPU
 *           devices; both add the k products in order with fma from 0, so
 *           their values equal own sequential's (bit for bit)
 *   own:    gemm_own (one work-item per output, schedule inside it), or
 *           for splitk:S the S partial sums computed by separate
 *           work-items (gemm_splitk_part) then added in order
 *           (gemm_splitk_sum): the same value as the cpu backend's splitk.
 * dot is the 1×k by k×1 gemm. */
#include <stdio.h>

#include "ocl.h"

enum { BA, BB, BC, BD, BW, NBUF };

/* gemm_vec blocking (gemm.cl KCS_VM, KCS_VW) */
#define KCS_OCL_VM 8
#define KCS_OCL_VW_F32 16
#define KCS_OCL_VW_F64 8

static int splitk(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty,
                  cl_mem *buf, cl_long m, cl_long n, cl_long k, cl_long batch, cl_int has_c,
                  kcs_error *err)
{
    cl_long s = c->schedule.param < k ? c->schedule.param : (k > 0 ? k : 1);
    cl_long chunk = (k + s - 1) / s;
    if (chunk < 1)
        chunk = 1;
    size_t acc_size = ty->tacc ? sizeof(cl_double) : sizeof(cl_float);
    int rc = kcs_ocl_alloc(ctx, (size_t)(s * batch * m * n), acc_size, &buf[BW], err);
    if (rc)
        return rc;
    cl_long sa = m * k, sb = k * n, sd = m * n;
    cl_kernel kp = NULL, ks = NULL;
    rc = kcs_ocl_kernel(ctx, "gemm.cl", "gemm_splitk_part", ty, &kp, err);
    if (rc)
        return rc;
    kcs_ocl_arg pa[] = {KCS_OCL_ARG(buf[BA]), KCS_OCL_ARG(buf[BB]), KCS_OCL_ARG(buf[BW]),
                        KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(k),
                        KCS_OCL_ARG(sa),      KCS_OCL_ARG(sb),      KCS_OCL_ARG(batch),
                        KCS_OCL_ARG(chunk)};
    size_t gp[3] = {(size_t)n, (size_t)m, (size_t)(batch * s)};
    rc = kcs_ocl_set_args(kp, "gemm_splitk_part", pa, 10, err);
    if (!rc)
        rc = kcs_ocl_launch(ctx, kp, "gemm_splitk_part", 3, gp, NULL, err);
    clReleaseKernel(kp);
    if (rc)
        return rc;
    rc = kcs_ocl_kernel(ctx, "gemm.cl", "gemm_splitk_sum", ty, &ks, err);
    if (rc)
        return rc;
    kcs_ocl_arg sa_[] = {KCS_OCL_ARG(buf[BW]), KCS_OCL_ARG(buf[BC]), KCS_OCL_ARG(buf[BD]),
                         KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(sd),
                         KCS_OCL_ARG(batch),   KCS_OCL_ARG(s),       KCS_OCL_ARG(has_c)};
    size_t gs[3] = {(size_t)n, (size_t)m, (size_t)batch};
    rc = kcs_ocl_set_args(ks, "gemm_splitk_sum", sa_, 9, err);
    if (!rc)
        rc = kcs_ocl_launch(ctx, ks, "gemm_splitk_sum", 3, gs, NULL, err);
    clReleaseKernel(ks);
    return rc;
}

int kcs_ocl_gemm(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, int own,
                 kcs_error *err)
{
    int dot = c->op == KCS_OP_DOT;
    cl_long m = dot ? 1 : c->m, n = dot ? 1 : c->n, k = c->k;
    cl_long batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    cl_long sa = m * k, sb = k * n, sd = m * n;
    cl_int has_c = !dot && c->in[2] != NULL;
    cl_mem buf[NBUF] = {0};
    cl_kernel kern = NULL;
    int rc = kcs_ocl_upload(ctx, ty->tin, c->in[0], (size_t)(batch * sa), 0, &buf[BA], err);
    if (!rc)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[1], (size_t)(batch * sb), 1, &buf[BB], err);
    if (!rc && has_c)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[2], (size_t)(batch * sd), 2, &buf[BC], err);
    if (!rc)
        rc = kcs_ocl_alloc(ctx, (size_t)(batch * sd), KCS_OCL_OUT_SIZE(ty), &buf[BD], err);
    if (rc)
        goto out;
    if (own && c->schedule.kind == KCS_SCHED_SPLITK) {
        rc = splitk(ctx, c, ty, buf, m, n, k, batch, has_c, err);
    } else if (own) {
        cl_int kind = (cl_int)c->schedule.kind;
        cl_long param = c->schedule.param;
        rc = kcs_ocl_kernel(ctx, "gemm.cl", "gemm_own", ty, &kern, err);
        if (rc)
            goto out;
        kcs_ocl_arg a[] = {KCS_OCL_ARG(buf[BA]), KCS_OCL_ARG(buf[BB]), KCS_OCL_ARG(buf[BC]),
                           KCS_OCL_ARG(buf[BD]), KCS_OCL_ARG(m),       KCS_OCL_ARG(n),
                           KCS_OCL_ARG(k),       KCS_OCL_ARG(sa),      KCS_OCL_ARG(sb),
                           KCS_OCL_ARG(sd),      KCS_OCL_ARG(has_c),   KCS_OCL_ARG(kind),
                           KCS_OCL_ARG(param)};
        size_t g[3] = {(size_t)n, (size_t)m, (size_t)batch};
        rc = kcs_ocl_set_args(kern, "gemm_own", a, 13, err);
        if (!rc)
            rc = kcs_ocl_launch(ctx, kern, "gemm_own", 3, g, NULL, err);
    } else {
        const char *name = ctx->cpu ? "gemm_vec" : "gemm_tiled";
        rc = kcs_ocl_kernel(ctx, "gemm.cl", name, ty, &kern, err);
        if (rc)
            goto out;
        kcs_ocl_arg a[] = {KCS_OCL_ARG(buf[BA]), KCS_OCL_ARG(buf[BB]), KCS_OCL_ARG(buf[BC]),
                           KCS_OCL_ARG(buf[BD]), KCS_OCL_ARG(m),       KCS_OCL_ARG(n),
                           KCS_OCL_ARG(k),       KCS_OCL_ARG(sa),      KCS_OCL_ARG(sb),
                           KCS_OCL_ARG(sd),      KCS_OCL_ARG(has_c)};
        rc = kcs_ocl_set_args(kern, name, a, 11, err);
        if (rc)
            goto out;
        if (ctx->cpu) {
            size_t vw = ty->tacc ? KCS_OCL_VW_F64 : KCS_OCL_VW_F32;
            size_t g[3] = {((size_t)m + KCS_OCL_VM - 1) / KCS_OCL_VM, ((size_t)n + vw - 1) / vw,
                           (size_t)batch};
            rc = kcs_ocl_launch(ctx, kern, name, 3, g, NULL, err);
        } else {
            size_t rts = (size_t)(ctx->ts / ctx->wpt), ts = (size_t)ctx->ts;
            size_t g[3] = {((size_t)n + ts - 1) / ts * rts, ((size_t)m + ts - 1) / ts * rts,
                           (size_t)batch};
            size_t l[3] = {rts, rts, 1};
            rc = kcs_ocl_launch(ctx, kern, name, 3, g, l, err);
        }
    }
    if (!rc)
        rc = kcs_ocl_download(ctx, buf[BD], (size_t)(batch * sd), KCS_OCL_OUT_DBL(ty), c->dtype_out,
                              c->out, err);
out:
    if (kern)
        clReleaseKernel(kern);
    kcs_ocl_release(buf, NBUF);
    return rc;
}
