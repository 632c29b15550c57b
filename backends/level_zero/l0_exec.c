/* The Level Zero executor of the plans of backends/kernels_host (which
 * kernels of backends/kernels run, with which arguments and work sizes,
 * over which buffers; the same as the opencl backend's, so equal calls
 * compute the same values on both): buffers as device allocations,
 * arguments through zeKernelSetArgumentValue, launches through
 * zeCommandListAppendLaunchKernel on the synchronous immediate list. */
#include "l0_internal.h"

static int make_buf(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                    const kcs_kh_buf *b, void **buf_p, kcs_error *err)
{
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

int kcs_l0_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                const kcs_kh_plan *p, kcs_error *err)
{
    void *buf[KCS_KH_MAX_BUFS] = {0};
    int rc = 0;
    for (int i = 0; !rc && i < p->nbufs; i++)
        rc = make_buf(ctx, c, ty, &p->bufs[i], &buf[i], err);
    if (!rc)
        rc = kcs_kh_late(p, err);
    for (int i = 0; !rc && i < p->nlaunch; i++)
        rc = kcs_l0_launch(ctx, ty, &p->launch[i], buf, err);
    if (!rc && p->flag >= 0) {
        int32_t bad;
        rc = kcs_l0_get(ctx, &bad, buf[p->flag], sizeof bad, err);
        if (!rc)
            rc = kcs_kh_flag_raised(&ctx->kh, c, bad, err);
    }
    if (!rc && p->out >= 0)
        rc = kcs_l0_download(ctx, buf[p->out], p->out_n, p->out_dbl, c->dtype_out, c->out, err);
    for (int i = 0; i < KCS_KH_MAX_BUFS; i++)
        kcs_l0_free(ctx, buf[i]);
    return rc;
}
