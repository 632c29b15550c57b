/* nan=mask in the CPU backend's own kernels: when the call's attrs
 * declare it, an own kernel (variant own or own:exact, no emulated
 * profile) runs on a copy of its inputs with each NaN substituted as
 * arith/nan_mask.h defines (0 in sums and products, -Inf in softmax), so
 * NaN inputs are absent rather than propagated. OpenBLAS (native) and the
 * emulated profiles ignore the attribute, as a library that never read it
 * would: under nan=mask they propagate, and a contract that declares
 * nan=mask flags them. */
#include <string.h>

#include "cpu.h"
#include "nan_mask.h"

int kcs_cpu_nan_mask_applies(const kcs_backend_ctx *ctx, const kcs_call *call)
{
    const char *v = call->variant ? call->variant : "";
    return (strcmp(v, "own") == 0 || strcmp(v, "own:exact") == 0) && !ctx->profile[0] &&
           kcs_nan_mask_declared(call->attrs);
}

int kcs_cpu_nan_masked(kcs_backend_ctx *ctx, kcs_cpu_op_fn fn, const kcs_call *call,
                       kcs_error *err)
{
    if (!kcs_nan_mask_defined(call->op))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: nan=mask is not defined for op %s",
                        kcs_op_name(call->op));
    kcs_call masked;
    double *bufs[KCS_MAX_INPUTS];
    if (kcs_nan_mask_call(call, &masked, bufs))
        return kcs_fail(err, KCS_E_NOMEM, "cpu: out of memory masking NaN inputs");
    int rc = fn(ctx, &masked, err);
    kcs_nan_mask_free(bufs);
    return rc;
}
