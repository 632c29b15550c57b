/* The Level Zero executor of the plans of backends/kernels_host (which
 * kernels of backends/kernels run, with which arguments and work sizes,
 * over which buffers; the same as the opencl backend's, so equal calls
 * compute the same values on both): buffers as device allocations,
 * arguments through zeKernelSetArgumentValue, launches through
 * zeCommandListAppendLaunchKernel on the synchronous immediate list; the
 * order of the steps is kcs_kh_exec's, shared with the opencl backend. */
#include "l0_internal.h"

static int make_buf(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                    const kcs_kh_plan *p, int i, void **buf_p, kcs_error *err)
{
    const kcs_kh_buf *b = &p->bufs[i];
    switch (b->kind) {
    case KCS_KH_BUF_INPUT:
        return kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[b->input], b->n, buf_p, err);
    case KCS_KH_BUF_SCRATCH: return kcs_l0_alloc(ctx, b->n, b->elem, buf_p, err);
    case KCS_KH_BUF_HOST: {
        int rc = kcs_l0_alloc(ctx, b->n, b->elem, buf_p, err);
        return rc ? rc : kcs_l0_put(ctx, *buf_p, b->host, b->n * b->elem, err);
    }
    default: return 0; /* none: a NULL buffer */
    }
}

static int read_flag(kcs_backend_ctx *ctx, const kcs_call *c, void *buf, int32_t *bad_p,
                     kcs_error *err)
{
    (void)c;
    return kcs_l0_get(ctx, bad_p, buf, sizeof *bad_p, err);
}

static const kcs_kh_exec_ops l0_ops = {make_buf, kcs_l0_launch, read_flag, kcs_l0_download,
                                       kcs_l0_free};

int kcs_l0_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                const kcs_kh_plan *p, kcs_error *err)
{
    return kcs_kh_exec(ctx, &ctx->kh, &l0_ops, c, ty, p, err);
}
