/* Validation of a call for the backends of backends/kernels (opencl,
 * level_zero): what they offer and the types the kernels are built for. */
#include <string.h>

#include "kernels_host.h"

/* Input storage for a declared input format: values are exact in it. */
static int storage_of(kcs_format f, int *tin_p)
{
    switch (f) {
    case KCS_FMT_FP64: *tin_p = KCS_KH_F64; return 0;
    case KCS_FMT_FP16: *tin_p = KCS_KH_F16; return 0;
    case KCS_FMT_BF16: *tin_p = KCS_KH_BF16; return 0;
    case KCS_FMT_FP32:
    case KCS_FMT_TF32:
    case KCS_FMT_FP8_E4M3:
    case KCS_FMT_FP8_E5M2:
    case KCS_FMT_FP8_E4M3FNUZ:
    case KCS_FMT_FP8_E5M2FNUZ: *tin_p = KCS_KH_F32; return 0; /* exact in float */
    default: return -1;
    }
}

static int op_offered(kcs_op op)
{
    switch (op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_DOT:
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_SOFTMAX:
    case KCS_OP_LAYERNORM:
    case KCS_OP_RMSNORM:
    case KCS_OP_ATTENTION:
    case KCS_OP_GATHER:
    case KCS_OP_ELEMENTWISE: return 1;
    default: return 0;
    }
}

static int check_types(const kcs_kh_device *dev, const kcs_call *c, kcs_kh_types *ty,
                       kcs_error *err)
{
    const char *bk = dev->name;
    if (storage_of(c->dtype_in, &ty->tin))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: no storage for dtype_in %s", bk,
                        kcs_format_name(c->dtype_in));
    if (c->op == KCS_OP_GATHER) {
        ty->tacc = 0; /* a copy: no accumulator */
    } else if (c->acc.bits > 0 || c->acc.rz || (c->acc.fmt != KCS_FMT_FP32 && c->acc.fmt != KCS_FMT_FP64)) {
        char b[32];
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "%s: accumulator %s not offered (fp32 or fp64; bits:N and narrow "
                        "accumulators are emulated by the cpu backend)",
                        bk, kcs_acc_str(&c->acc, b, sizeof b));
    } else {
        ty->tacc = c->acc.fmt == KCS_FMT_FP64;
    }
    if ((ty->tacc || ty->tin == KCS_KH_F64) && !dev->has_fp64) {
        const char *what = ty->tacc ? "accumulator" : "input";
        if (dev->fp64_ext)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s has no %s (fp64 %s)", bk, dev->model,
                            dev->fp64_ext, what);
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s has no fp64 (%s)", bk, dev->model, what);
    }
    return 0;
}

static int check_schedule(const kcs_kh_device *dev, const kcs_schedule *s, kcs_error *err)
{
    if (s->kind == KCS_SCHED_ATOMIC)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: schedule atomic not offered", dev->name);
    if ((s->kind == KCS_SCHED_BLOCKED || s->kind == KCS_SCHED_SPLITK) && s->param <= 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: schedule parameter must be positive", dev->name);
    if (s->kind != KCS_SCHED_SEQUENTIAL && s->kind != KCS_SCHED_PAIRWISE &&
        s->kind != KCS_SCHED_BLOCKED && s->kind != KCS_SCHED_SPLITK)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: unknown schedule %d", dev->name,
                        (int)s->kind);
    return 0;
}

static int check_lengths(const kcs_kh_device *dev, const kcs_call *c, kcs_error *err)
{
    const char *op = kcs_op_name(c->op);
    int nin = kcs_op_n_inputs(c->op);
    for (int i = 0; i < nin; i++) {
        int optional = ((c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM) && i == 2) ||
                       ((c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM) && i >= 1);
        size_t need = kcs_op_in_len(c, i);
        if (!c->in[i]) {
            if (optional)
                continue;
            return kcs_fail(err, KCS_E_INVAL, "%s: %s: input %d missing", dev->name, op, i);
        }
        if (c->in_len[i] < need)
            return kcs_fail(err, KCS_E_INVAL, "%s: %s: input %d has %zu elements, needs %zu",
                            dev->name, op, i, c->in_len[i], need);
    }
    size_t need = kcs_op_out_len(c);
    if (need > 0 && (!c->out || c->out_len < need))
        return kcs_fail(err, KCS_E_INVAL, "%s: %s: output has %zu elements, needs %zu",
                        dev->name, op, c->out ? c->out_len : 0, need);
    return 0;
}

/* Work-items per group the op's kernels require (kh_args.c, kh_attn.c):
 * gemm_tiled (ts/wpt)^2, the native row kernels rwg, attention's streaming
 * kernel (native and fused) awg; 0 for kernels without a fixed group. */
static int kernel_wg(const kcs_kh_device *dev, kcs_op op, int variant)
{
    switch (op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_DOT:
        return variant == 0 && !dev->gemm_vec && dev->wpt > 0
                   ? (dev->ts / dev->wpt) * (dev->ts / dev->wpt)
                   : 0;
    case KCS_OP_ATTENTION: return variant == 1 ? 0 : dev->awg;
    case KCS_OP_GATHER:
    case KCS_OP_ELEMENTWISE: return 0;
    default: return variant == 0 ? dev->rwg : 0;
    }
}

int kcs_kh_check_call(const kcs_kh_device *dev, const kcs_call *c, kcs_kh_types *ty_p,
                      int *variant_p, kcs_error *err)
{
    const char *op = kcs_op_name(c->op);
    if (!op_offered(c->op))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: op %s is not offered by this backend",
                        dev->name, op);
    const char *v = c->variant ? c->variant : "native";
    int variant;
    if (strcmp(v, "native") == 0)
        variant = 0;
    else if (strcmp(v, "own") == 0)
        variant = 1;
    else if (strcmp(v, "fused") == 0 && c->op == KCS_OP_ATTENTION)
        variant = 2;
    else
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s has no variant '%s' (native, own%s)",
                        dev->name, op, v, c->op == KCS_OP_ATTENTION ? ", fused" : "");
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: %s: negative shape", dev->name, op);
    kcs_kh_types ty;
    int rc = check_types(dev, c, &ty, err);
    if (rc)
        return rc;
    int wg = kernel_wg(dev, c->op, variant);
    if (dev->check_native_wg && dev->max_wg < (size_t)wg)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s kernels need work groups of %d "
                        "(device: %u)", dev->name, variant == 2 ? "fused" : "native", wg,
                        (unsigned)dev->max_wg);
    if (variant > 0) { /* own and fused follow the schedule */
        rc = check_schedule(dev, &c->schedule, err);
        if (rc)
            return rc;
    }
    rc = check_lengths(dev, c, err);
    if (rc)
        return rc;
    *ty_p = ty;
    *variant_p = variant;
    return 0;
}
