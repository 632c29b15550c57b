/* attention on OpenCL (kernels/attention.cl): own = the unfused
 * composition (scores, softmax, P*V: three kernels, schedules honoured,
 * S and P in the working format); native and fused = one streaming kernel
 * with an online softmax over key blocks of attrs "block=N" (default 64),
 * whose score dot is sequential (native) or follows the call's schedule
 * (fused). Q batch x m x d, K and V batch x n x d, d = call->k; n >= 1. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "attrs.h"
#include "ocl.h"

enum { BQ, BK, BV, BS, BO, NBUF };

#define KCS_OCL_ACOLS 16 /* attention.cl KCS_ACOLS */
#define KCS_OCL_BLOCK 64 /* default key block, as the cpu backend's fused */

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

static int block_attr(const kcs_call *c, cl_long *B_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(c->attrs, "block", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "opencl attention: attrs '%s' are malformed",
                        c->attrs);
    *B_p = KCS_OCL_BLOCK;
    if (rc == 1) {
        char *end;
        errno = 0;
        long long b = strtoll(v, &end, 10);
        if (errno || *end || b <= 0)
            return kcs_fail(err, KCS_E_INVAL,
                            "opencl attention: block=%s is not a positive integer", v);
        *B_p = b;
    }
    return 0;
}

static int fused(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, int variant,
                 cl_mem *buf, kcs_ocl_arg scale, kcs_error *err)
{
    cl_long m = c->m, n = c->n, d = c->k, B;
    cl_long batch = c->batch > 0 ? c->batch : 1;
    int rc = block_attr(c, &B, err);
    if (rc)
        return rc;
    if (B > n)
        B = n;
    size_t vs = KCS_OCL_VAL_SIZE(ty);
    if (d > (cl_long)ctx->awg * KCS_OCL_ACOLS)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "opencl: fused attention handles head dimensions up to %d (k = %lld)",
                        ctx->awg * KCS_OCL_ACOLS, (long long)d);
    if ((cl_ulong)(d + B + ctx->awg) * vs > ctx->local_mem)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "opencl: fused attention: d + block = %lld values exceed the device's "
                        "%llu bytes of local memory",
                        (long long)(d + B), (unsigned long long)ctx->local_mem);
    cl_int kind = variant == 2 ? (cl_int)c->schedule.kind : KCS_SCHED_SEQUENTIAL;
    cl_long param = variant == 2 ? c->schedule.param : 0;
    kcs_ocl_arg a[] = {KCS_OCL_ARG(buf[BQ]),          KCS_OCL_ARG(buf[BK]),
                       KCS_OCL_ARG(buf[BV]),          KCS_OCL_ARG(buf[BO]),
                       KCS_OCL_ARG(m),                KCS_OCL_ARG(n),
                       KCS_OCL_ARG(d),                scale,
                       KCS_OCL_ARG(B),                KCS_OCL_ARG(kind),
                       KCS_OCL_ARG(param),            KCS_OCL_LOCAL((size_t)d * vs),
                       KCS_OCL_LOCAL((size_t)B * vs)};
    size_t l[2] = {(size_t)ctx->awg, 1};
    size_t g[2] = {(size_t)m * l[0], (size_t)batch};
    return launch(ctx, ty, "attn_fused", a, 13, 2, g, l, err);
}

static int unfused(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, cl_mem *buf,
                   kcs_ocl_arg scale, kcs_error *err)
{
    cl_long m = c->m, n = c->n, d = c->k;
    cl_long batch = c->batch > 0 ? c->batch : 1, rows = batch * m;
    cl_int kind = (cl_int)c->schedule.kind;
    cl_long param = c->schedule.param;
    int rc = kcs_ocl_alloc(ctx, (size_t)(rows * n), KCS_OCL_VAL_SIZE(ty), &buf[BS], err);
    if (rc)
        return rc;
    kcs_ocl_arg a1[] = {KCS_OCL_ARG(buf[BQ]), KCS_OCL_ARG(buf[BK]), KCS_OCL_ARG(buf[BS]),
                        KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(d),
                        scale,                KCS_OCL_ARG(kind),    KCS_OCL_ARG(param)};
    size_t g1[3] = {(size_t)n, (size_t)m, (size_t)batch};
    rc = launch(ctx, ty, "attn_scores", a1, 9, 3, g1, NULL, err);
    if (rc)
        return rc;
    kcs_ocl_arg a2[] = {KCS_OCL_ARG(buf[BS]), KCS_OCL_ARG(rows), KCS_OCL_ARG(n),
                        KCS_OCL_ARG(kind), KCS_OCL_ARG(param)};
    size_t g2 = (size_t)rows;
    rc = launch(ctx, ty, "attn_softmax", a2, 5, 1, &g2, NULL, err);
    if (rc)
        return rc;
    kcs_ocl_arg a3[] = {KCS_OCL_ARG(buf[BS]), KCS_OCL_ARG(buf[BV]), KCS_OCL_ARG(buf[BO]),
                        KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(d),
                        KCS_OCL_ARG(kind),    KCS_OCL_ARG(param)};
    size_t g3[3] = {(size_t)d, (size_t)m, (size_t)batch};
    return launch(ctx, ty, "attn_pv", a3, 8, 3, g3, NULL, err);
}

int kcs_ocl_attention(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty,
                      int variant, kcs_error *err)
{
    cl_long m = c->m, n = c->n, d = c->k;
    cl_long batch = c->batch > 0 ? c->batch : 1, rows = batch * m;
    if (n < 1)
        return kcs_fail(err, KCS_E_INVAL, "opencl attention: needs n >= 1 keys (n=%lld)",
                        (long long)n);
    if (m == 0 || d == 0)
        return 0;
    /* scale = RN_w(1/sqrt(d)) in the working format */
    double scale_d = 1.0 / sqrt((double)d);
    cl_float scale_f = (cl_float)scale_d;
    kcs_ocl_arg scale = ty->tin == KCS_OCL_F64 ? KCS_OCL_ARG(scale_d) : KCS_OCL_ARG(scale_f);
    cl_mem buf[NBUF] = {0};
    int rc = kcs_ocl_upload(ctx, ty->tin, c->in[0], (size_t)(rows * d), 0, &buf[BQ], err);
    if (!rc)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[1], (size_t)(batch * n * d), 1, &buf[BK], err);
    if (!rc)
        rc = kcs_ocl_upload(ctx, ty->tin, c->in[2], (size_t)(batch * n * d), 2, &buf[BV], err);
    if (!rc)
        rc = kcs_ocl_alloc(ctx, (size_t)(rows * d), KCS_OCL_OUT_SIZE(ty), &buf[BO], err);
    if (!rc)
        rc = variant == 1 ? unfused(ctx, c, ty, buf, scale, err)
                          : fused(ctx, c, ty, variant, buf, scale, err);
    if (!rc)
        rc = kcs_ocl_download(ctx, buf[BO], (size_t)(rows * d), KCS_OCL_OUT_DBL(ty),
                              c->dtype_out, c->out, err);
    kcs_ocl_release(buf, NBUF);
    return rc;
}
