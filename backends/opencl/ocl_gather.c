/* gather on OpenCL (kernels/gather.cl): rows of a table m x k picked by n
 * integer indices (the cpu backend's semantics). Out-of-range indices
 * follow attrs "oob=": raise (the default; the kernel records the first
 * bad position, the call returns KCS_E_RAISED naming it, also in
 * call->msg, and writes no output), clamp (m = 0: KCS_E_INVAL), zero;
 * "undefined" is served as clamp (never a read outside the table). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "ocl.h"

enum { BT, BI, BY, BBAD, NBUF };
enum { OOB_RAISE = 0, OOB_CLAMP = 1, OOB_ZERO = 2 };

static int oob_mode(const char *attrs, int *mode_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(attrs, "oob", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "opencl gather: attrs '%s' are malformed (key=value;...)",
                        attrs);
    if (rc == 0 || strcmp(v, "raise") == 0)
        *mode_p = OOB_RAISE;
    else if (strcmp(v, "clamp") == 0 || strcmp(v, "undefined") == 0)
        *mode_p = OOB_CLAMP;
    else if (strcmp(v, "zero") == 0)
        *mode_p = OOB_ZERO;
    else
        return kcs_fail(err, KCS_E_INVAL,
                        "opencl gather: oob=%s (raise|clamp|zero|undefined)", v);
    return 0;
}

/* Indices as doubles holding integers -> cl_long (beyond +-2^62 saturate:
 * out of range either way, on the same side). A fraction, NaN or Inf is
 * bad input. */
static int indices(const double *x, size_t n, cl_long **idx_p, kcs_error *err)
{
    cl_long *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return kcs_fail(err, KCS_E_NOMEM, "opencl gather: out of memory");
    idx[0] = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (v != floor(v) || isinf(v)) { /* also NaN */
            free(idx);
            return kcs_fail(err, KCS_E_INVAL,
                            "opencl gather: index %g at position %zu is not an integer", v, i);
        }
        const double lim = 4611686018427387904.0; /* 2^62 */
        idx[i] = v >= lim ? (cl_long)lim : v <= -lim ? -(cl_long)lim : (cl_long)v;
    }
    *idx_p = idx;
    return 0;
}

int kcs_ocl_gather(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty,
                   kcs_error *err)
{
    cl_long m = c->m, n = c->n, k = c->k;
    cl_int mode;
    int rc = oob_mode(c->attrs, &mode, err);
    if (rc)
        return rc;
    if (n > INT_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl gather: n = %lld exceeds %d",
                        (long long)n, INT_MAX);
    if (mode == OOB_CLAMP && m == 0 && n > 0)
        return kcs_fail(err, KCS_E_INVAL, "opencl gather: oob=clamp on an empty table");
    cl_long *idx = NULL;
    rc = indices(c->in[1], (size_t)n, &idx, err);
    if (rc)
        return rc;
    cl_mem buf[NBUF] = {0};
    cl_kernel kern = NULL;
    cl_int bad = CL_INT_MAX;
    int dbl = KCS_OCL_OUT_DBL(ty);
    rc = kcs_ocl_upload(ctx, ty->tin, c->in[0], (size_t)(m * k), 0, &buf[BT], err);
    if (rc)
        goto out;
    cl_int cr;
    buf[BI] = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             (size_t)(n ? n : 1) * sizeof *idx, idx, &cr);
    if (cr == CL_SUCCESS)
        buf[BBAD] = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   sizeof bad, &bad, &cr);
    if (cr != CL_SUCCESS) {
        rc = kcs_ocl_fail(err, "clCreateBuffer(gather)", cr);
        goto out;
    }
    rc = kcs_ocl_alloc(ctx, (size_t)(n * k), dbl ? sizeof(cl_double) : sizeof(cl_float), &buf[BY],
                       err);
    if (!rc)
        rc = kcs_ocl_kernel(ctx, "gather.cl", "gather_rows", ty, &kern, err);
    if (rc)
        goto out;
    kcs_ocl_arg a[] = {KCS_OCL_ARG(buf[BT]), KCS_OCL_ARG(buf[BI]), KCS_OCL_ARG(buf[BY]),
                       KCS_OCL_ARG(m),       KCS_OCL_ARG(n),       KCS_OCL_ARG(k),
                       KCS_OCL_ARG(mode),    KCS_OCL_ARG(buf[BBAD])};
    size_t g[2] = {(size_t)(k ? k : 1), (size_t)n};
    rc = kcs_ocl_set_args(kern, "gather_rows", a, 8, err);
    if (!rc)
        rc = kcs_ocl_launch(ctx, kern, "gather_rows", 2, g, NULL, err);
    if (rc)
        goto out;
    cr = clEnqueueReadBuffer(ctx->queue, buf[BBAD], CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL);
    if (cr != CL_SUCCESS) {
        rc = kcs_ocl_fail(err, "clEnqueueReadBuffer(gather flag)", cr);
        goto out;
    }
    if (bad != CL_INT_MAX) {
        char msg[256];
        snprintf(msg, sizeof msg, "index %.0f at position %d is out of range [0, %lld)",
                 c->in[1][bad], (int)bad, (long long)m);
        if (c->msg && c->msg_len)
            snprintf(c->msg, c->msg_len, "%s", msg);
        rc = kcs_fail(err, KCS_E_RAISED, "opencl gather: %s", msg);
        goto out;
    }
    rc = kcs_ocl_download(ctx, buf[BY], (size_t)(n * k), dbl, c->dtype_out, c->out, err);
out:
    if (kern)
        clReleaseKernel(kern);
    kcs_ocl_release(buf, NBUF);
    free(idx);
    return rc;
}
