/* The OpenCL executor of the plans of backends/kernels_host (which kernels
 * of backends/kernels run, with which arguments and work sizes, over which
 * buffers): buffers as cl_mem, arguments through clSetKernelArg, launches
 * through clEnqueueNDRangeKernel (then clFinish). */
#include <stdio.h>

#include "ocl.h"

/* rw: the kernels write it (host data: the flag; others are read-only) */
static int make_buf(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                    const kcs_kh_buf *b, int rw, cl_mem *buf_p, kcs_error *err)
{
    switch (b->kind) {
    case KCS_KH_BUF_INPUT:
        return kcs_ocl_upload(ctx, ty->tin, c->in[b->input], b->n, b->input, buf_p, err);
    case KCS_KH_BUF_SCRATCH: return kcs_ocl_alloc(ctx, b->n, b->elem, buf_p, err);
    case KCS_KH_BUF_HOST: {
        cl_int cr;
        cl_mem_flags f = (rw ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY) | CL_MEM_COPY_HOST_PTR;
        cl_mem m = clCreateBuffer(ctx->context, f, (b->n ? b->n : 1) * b->elem, (void *)b->host,
                                  &cr);
        if (cr != CL_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "clCreateBuffer(%s)", kcs_op_name(c->op));
            return kcs_ocl_fail(err, what, cr);
        }
        *buf_p = m;
        return 0;
    }
    default: return 0; /* none: a NULL buffer */
    }
}

static int set_args(cl_kernel k, const kcs_kh_launch *l, const cl_mem *buf, kcs_error *err)
{
    for (int i = 0; i < l->nargs; i++) {
        const kcs_kh_arg *a = &l->args[i];
        const void *value;
        size_t size;
        if (a->kind == KCS_KH_ARG_BUF) {
            value = &buf[a->v.buf];
            size = sizeof buf[0];
        } else {
            size = kcs_kh_arg_value(a, &value);
        }
        cl_int rc = clSetKernelArg(k, (cl_uint)i, size, value);
        if (rc != CL_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "clSetKernelArg(%s, %d)", l->name, i);
            return kcs_ocl_fail(err, what, rc);
        }
    }
    return 0;
}

/* Build the kernel, set its arguments, enqueue it over l->dims dimensions
 * and wait; nothing is enqueued when a global size is 0. */
static int launch(kcs_backend_ctx *ctx, const kcs_kh_types *ty, const kcs_kh_launch *l,
                  const cl_mem *buf, kcs_error *err)
{
    cl_kernel k;
    int rc = kcs_ocl_kernel(ctx, l->file, l->name, ty, &k, err);
    if (rc)
        return rc;
    rc = set_args(k, l, buf, err);
    int empty = 0;
    for (int d = 0; d < l->dims; d++)
        if (l->global[d] == 0)
            empty = 1;
    if (!rc && !empty) {
        cl_int cr = clEnqueueNDRangeKernel(ctx->queue, k, (cl_uint)l->dims, NULL, l->global,
                                           l->has_local ? l->local : NULL, 0, NULL, NULL);
        if (cr == CL_SUCCESS)
            cr = clFinish(ctx->queue);
        if (cr != CL_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "clEnqueueNDRangeKernel(%s)", l->name);
            rc = kcs_ocl_fail(err, what, cr);
        }
    }
    clReleaseKernel(k);
    return rc;
}

int kcs_ocl_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                 const kcs_kh_plan *p, kcs_error *err)
{
    cl_mem buf[KCS_KH_MAX_BUFS] = {0};
    int rc = 0;
    for (int i = 0; !rc && i < p->nbufs; i++)
        rc = make_buf(ctx, c, ty, &p->bufs[i], i == p->flag, &buf[i], err);
    if (!rc)
        rc = kcs_kh_late(p, err);
    for (int i = 0; !rc && i < p->nlaunch; i++)
        rc = launch(ctx, ty, &p->launch[i], buf, err);
    if (!rc && p->flag >= 0) {
        cl_int bad;
        cl_int cr = clEnqueueReadBuffer(ctx->queue, buf[p->flag], CL_TRUE, 0, sizeof bad, &bad,
                                        0, NULL, NULL);
        if (cr != CL_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "clEnqueueReadBuffer(%s flag)", kcs_op_name(c->op));
            rc = kcs_ocl_fail(err, what, cr);
        } else {
            rc = kcs_kh_flag_raised(&ctx->kh, c, bad, err);
        }
    }
    if (!rc && p->out >= 0)
        rc = kcs_ocl_download(ctx, buf[p->out], p->out_n, p->out_dbl, c->dtype_out, c->out,
                              err);
    kcs_ocl_release(buf, KCS_KH_MAX_BUFS);
    return rc;
}
