/* The OpenCL executor of the plans of backends/kernels_host (which kernels
 * of backends/kernels run, with which arguments and work sizes, over which
 * buffers): buffers as cl_mem, arguments through clSetKernelArg, launches
 * through clEnqueueNDRangeKernel (then clFinish). */
#include <stdio.h>

#include "ocl.h"

static int make_buf(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                    const kcs_kh_plan *p, int i, void **buf_p, kcs_error *err)
{
    const kcs_kh_buf *b = &p->bufs[i];
    cl_mem m = NULL;
    int rc = 0;
    switch (b->kind) {
    case KCS_KH_BUF_INPUT:
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[b->input], b->n, b->input, &m, err);
        break;
    case KCS_KH_BUF_SCRATCH: rc = kcs_ocl_alloc(ctx, b->n, b->elem, &m, err); break;
    case KCS_KH_BUF_HOST: {
        /* the kernels write the flag; other host data is read-only */
        cl_int cr;
        cl_mem_flags f =
            (i == p->flag ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY) | CL_MEM_COPY_HOST_PTR;
        m = clCreateBuffer(ctx->context, f, (b->n ? b->n : 1) * b->elem, (void *)b->host, &cr);
        if (cr != CL_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "clCreateBuffer(%s)", kcs_op_name(c->op));
            return kcs_ocl_fail(err, what, cr);
        }
        break;
    }
    default: break; /* none: a NULL buffer */
    }
    *buf_p = m;
    return rc;
}

static long set_arg(void *k, unsigned i, size_t size, const void *value)
{
    return clSetKernelArg((cl_kernel)k, (cl_uint)i, size, value);
}

_Static_assert(sizeof(cl_mem) == sizeof(void *), "buffers travel as void *");

static int set_args(cl_kernel k, const kcs_kh_launch *l, void *const *buf, kcs_error *err)
{
    char what[96];
    long rc = kcs_kh_set_args(k, set_arg, l, buf, sizeof(cl_mem), "clSetKernelArg", what);
    return rc ? kcs_ocl_fail(err, what, (cl_int)rc) : 0;
}

/* Build the kernel, set its arguments, enqueue it over l->dims dimensions
 * and wait; nothing is enqueued when a global size is 0. */
static int launch(kcs_backend_ctx *ctx, const kcs_kh_types *ty, const kcs_kh_launch *l,
                  void *const *buf, kcs_error *err)
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

static int read_flag(kcs_backend_ctx *ctx, const kcs_call *c, void *buf, int32_t *bad_p,
                     kcs_error *err)
{
    _Static_assert(sizeof(cl_int) == sizeof(int32_t), "the flag is an int32");
    cl_int cr = clEnqueueReadBuffer(ctx->queue, (cl_mem)buf, CL_TRUE, 0, sizeof *bad_p, bad_p, 0,
                                    NULL, NULL);
    if (cr == CL_SUCCESS)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "clEnqueueReadBuffer(%s flag)", kcs_op_name(c->op));
    return kcs_ocl_fail(err, what, cr);
}

static int download(kcs_backend_ctx *ctx, const void *buf, size_t n, int dbl, kcs_format fmt,
                    double *out, kcs_error *err)
{
    return kcs_ocl_download(ctx, (cl_mem)buf, n, dbl, fmt, out, err);
}

static void release(kcs_backend_ctx *ctx, void *buf)
{
    (void)ctx;
    if (buf)
        clReleaseMemObject((cl_mem)buf);
}

static const kcs_kh_exec_ops ocl_ops = {make_buf, launch, read_flag, download, release};

int kcs_ocl_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                 const kcs_kh_plan *p, kcs_error *err)
{
    return kcs_kh_exec(ctx, &ctx->kh, &ocl_ops, c, ty, p, err);
}
