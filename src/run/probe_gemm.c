/* The probes' gemm call (probe_gemm.h). */
#include "probe_gemm.h"

#include <string.h>

int kcs_probe_gemm_run(const kcs_probe_gemm *g, double c, const double *a, const double *b,
                       int k, double *d_p)
{
    char msg[256] = "";
    int T = g->tile;
    if (T > 1) {
        size_t tk = (size_t)T * (size_t)k;
        memset(g->tA, 0, tk * sizeof *g->tA);
        memset(g->tB, 0, tk * sizeof *g->tB);
        memset(g->tC, 0, (size_t)T * (size_t)T * sizeof *g->tC);
        memcpy(g->tA, a, (size_t)k * sizeof *a); /* row 0 of A (T×k) */
        for (int t = 0; t < k; t++)
            g->tB[(size_t)t * (size_t)T] = b[t]; /* column 0 of B (k×T) */
        g->tC[0] = c;
        a = g->tA;
        b = g->tB;
    }
    kcs_call call = {0};
    call.op = KCS_OP_GEMM;
    call.variant = "native";
    call.schedule.kind = KCS_SCHED_SEQUENTIAL;
    call.dtype_in = g->in;
    call.dtype_out = KCS_FMT_FP32;
    call.acc.fmt = KCS_FMT_FP32;
    call.m = call.n = T;
    call.k = k;
    call.in[0] = a;
    call.in[1] = b;
    call.in[2] = T > 1 ? g->tC : &c;
    call.in_len[0] = call.in_len[1] = (size_t)T * (size_t)k;
    call.in_len[2] = (size_t)T * (size_t)T;
    call.out = g->out->data;
    call.out_len = (size_t)T * (size_t)T;
    call.attrs = "";
    call.msg = msg;
    call.msg_len = sizeof msg;
    kcs_tensor_poison(g->out);
    int rc = g->ops->run(g->ctx, &call, g->err);
    if (rc)
        return kcs_error_prefix(g->err, "%s: %s gemm %dx%dx%d", g->who, g->ops->name, T, T, k);
    const double *o = g->out->data;
    if (!kcs_tensor_guards_ok(g->out) || o[0] == g->out->sentinel)
        return kcs_fail(g->err, KCS_E_DEVICE,
                        "%s: %s gemm %dx%dx%d wrote outside its output or not at all", g->who,
                        g->ops->name, T, T, k);
    for (size_t i = 1; i < call.out_len; i++)
        if (o[i] != 0.0)
            return kcs_fail(g->err, KCS_E_DEVICE,
                            "%s: %s gemm %dx%dx%d: output %zu is %g, not the 0 of its zero inputs",
                            g->who, g->ops->name, T, T, k, i, o[i]);
    *d_p = o[0];
    return 0;
}
