/* The Level Zero backend's ops table: Intel (and other Level Zero) GPUs
 * running the OpenCL C kernels of backends/kernels compiled offline to
 * SPIR-V. Variants, schedules and accumulators are those of the opencl
 * backend (the same kernels, launched the same way): native / own (and
 * fused for attention), fp32 or fp64 accumulators, no atomic schedule. Without a driver: KCS_E_NODEV
 * ("level_zero: no driver (zeInit: ...)"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l0_internal.h"

static int l0_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    ze_driver_handle_t drv[KCS_MAX_DEVICES];
    ze_device_handle_t dev[KCS_MAX_DEVICES];
    int n = 0;
    int rc = kcs_l0_devices(drv, dev, KCS_MAX_DEVICES, &n, err);
    if (rc)
        return rc;
    for (int i = 0; i < n && i < max && i < KCS_MAX_DEVICES; i++) {
        rc = kcs_l0_device_info(drv[i], dev[i], i, &out[i], NULL, NULL, NULL, err);
        if (rc)
            return rc;
    }
    *count_p = n;
    return 0;
}

static void l0_close(kcs_backend_ctx *ctx)
{
    if (!ctx)
        return;
    kcs_l0_release_modules(ctx);
    if (ctx->list)
        zeCommandListDestroy(ctx->list);
    if (ctx->context)
        zeContextDestroy(ctx->context);
    free(ctx);
}

static int l0_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                   kcs_error *err)
{
    ze_driver_handle_t drv[KCS_MAX_DEVICES];
    ze_device_handle_t dev[KCS_MAX_DEVICES];
    int n = 0;
    int rc = kcs_l0_devices(drv, dev, KCS_MAX_DEVICES, &n, err);
    if (rc)
        return rc;
    if (device_index < 0 || device_index >= n || device_index >= KCS_MAX_DEVICES)
        return kcs_fail(err, KCS_E_NODEV, "level_zero: no device %d (%d found)", device_index, n);
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "level_zero: out of memory");
    ctx->driver = drv[device_index];
    ctx->device = dev[device_index];
    ctx->verbose = cfg ? cfg->verbose : 0;
    if (cfg && cfg->options)
        snprintf(ctx->options, sizeof ctx->options, "%s", cfg->options);
    uint32_t ordinal = 0;
    rc = kcs_l0_device_info(ctx->driver, ctx->device, device_index, &ctx->info, &ctx->has_fp64,
                            &ctx->max_group, &ctx->local_mem, err);
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    if (!rc)
        rc = KCS_ZE_CHECK(err, zeContextCreate, (ctx->driver, &cd, &ctx->context));
    if (!rc)
        rc = kcs_l0_compute_ordinal(ctx->device, &ordinal, err);
    ze_command_queue_desc_t qd = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        .ordinal = ordinal,
        .index = 0,
        .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
        .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    if (!rc)
        rc = KCS_ZE_CHECK(err, zeCommandListCreateImmediate,
                          (ctx->context, ctx->device, &qd, &ctx->list));
    if (rc) {
        l0_close(ctx);
        return rc;
    }
    *ctx_p = ctx;
    return 0;
}

static int storage_of(kcs_format f, int *tin_p)
{
    switch (f) {
    case KCS_FMT_FP64: *tin_p = KCS_L0_F64; return 0;
    case KCS_FMT_FP16: *tin_p = KCS_L0_F16; return 0;
    case KCS_FMT_BF16: *tin_p = KCS_L0_BF16; return 0;
    case KCS_FMT_FP32:
    case KCS_FMT_TF32:
    case KCS_FMT_FP8_E4M3:
    case KCS_FMT_FP8_E5M2:
    case KCS_FMT_FP8_E4M3FNUZ:
    case KCS_FMT_FP8_E5M2FNUZ: *tin_p = KCS_L0_F32; return 0; /* exact in float */
    default: return -1;
    }
}

/* The opencl backend's checks (ocl_backend.c check_call), same answers;
 * variant_p: 0 native, 1 own, 2 fused (attention). */
static int check_call(kcs_backend_ctx *ctx, const kcs_call *c, kcs_l0_types *ty, int *variant_p,
                      kcs_error *err)
{
    const char *op = kcs_op_name(c->op);
    const char *v = c->variant ? c->variant : "native";
    int variant;
    if (strcmp(v, "native") == 0)
        variant = 0;
    else if (strcmp(v, "own") == 0)
        variant = 1;
    else if (strcmp(v, "fused") == 0 && c->op == KCS_OP_ATTENTION)
        variant = 2;
    else
        return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: %s has no variant '%s' (native, own%s)",
                        op, v, c->op == KCS_OP_ATTENTION ? ", fused" : "");
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return kcs_fail(err, KCS_E_INVAL, "level_zero: %s: negative shape", op);
    if (storage_of(c->dtype_in, &ty->tin))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: no storage for dtype_in %s",
                        kcs_format_name(c->dtype_in));
    if (c->op == KCS_OP_GATHER) {
        ty->tacc = 0; /* a copy: no accumulator */
    } else if (c->acc.bits > 0 || (c->acc.fmt != KCS_FMT_FP32 && c->acc.fmt != KCS_FMT_FP64)) {
        char b[32];
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "level_zero: accumulator %s not offered (fp32 or fp64; bits:N and "
                        "narrow accumulators are emulated by the cpu backend)",
                        kcs_acc_str(&c->acc, b, sizeof b));
    } else {
        ty->tacc = c->acc.fmt == KCS_FMT_FP64;
    }
    if ((ty->tacc || ty->tin == KCS_L0_F64) && !ctx->has_fp64)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: %s has no fp64 (%s)",
                        ctx->info.model, ty->tacc ? "accumulator" : "input");
    if (variant == 0 && c->op != KCS_OP_GATHER && ctx->max_group < (uint32_t)(KCS_L0_TS / KCS_L0_WPT) *
                                                               (KCS_L0_TS / KCS_L0_WPT))
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "level_zero: native kernels need work groups of %d (device: %u)",
                        (KCS_L0_TS / KCS_L0_WPT) * (KCS_L0_TS / KCS_L0_WPT), ctx->max_group);
    if (variant > 0) { /* own and fused follow the schedule */
        const kcs_schedule *s = &c->schedule;
        if (s->kind == KCS_SCHED_ATOMIC)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: schedule atomic not offered");
        if ((s->kind == KCS_SCHED_BLOCKED || s->kind == KCS_SCHED_SPLITK) && s->param <= 0)
            return kcs_fail(err, KCS_E_INVAL, "level_zero: schedule parameter must be positive");
        if (s->kind != KCS_SCHED_SEQUENTIAL && s->kind != KCS_SCHED_PAIRWISE &&
            s->kind != KCS_SCHED_BLOCKED && s->kind != KCS_SCHED_SPLITK)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: unknown schedule %d",
                            (int)s->kind);
    }
    int nin = kcs_op_n_inputs(c->op);
    for (int i = 0; i < nin; i++) {
        int optional = ((c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM) && i == 2) ||
                       ((c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM) && i >= 1);
        size_t need = kcs_op_in_len(c, i);
        if (!c->in[i]) {
            if (optional)
                continue;
            return kcs_fail(err, KCS_E_INVAL, "level_zero: %s: input %d missing", op, i);
        }
        if (c->in_len[i] < need)
            return kcs_fail(err, KCS_E_INVAL,
                            "level_zero: %s: input %d has %zu elements, needs %zu", op, i,
                            c->in_len[i], need);
    }
    size_t need = kcs_op_out_len(c);
    if (need > 0 && (!c->out || c->out_len < need))
        return kcs_fail(err, KCS_E_INVAL, "level_zero: %s: output has %zu elements, needs %zu",
                        op, c->out ? c->out_len : 0, need);
    *variant_p = variant;
    return 0;
}

static int l0_run(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    switch (c->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_DOT:
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_SOFTMAX:
    case KCS_OP_LAYERNORM:
    case KCS_OP_RMSNORM:
    case KCS_OP_ATTENTION:
    case KCS_OP_GATHER: break;
    default:
        return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: op %s is not offered by this backend",
                        kcs_op_name(c->op));
    }
    kcs_l0_types ty;
    int variant = 0;
    int rc = check_call(ctx, c, &ty, &variant, err);
    if (rc)
        return rc;
    switch (c->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_DOT: return kcs_l0_gemm(ctx, c, &ty, variant == 1, err);
    case KCS_OP_ATTENTION: return kcs_l0_attention(ctx, c, &ty, variant, err);
    case KCS_OP_GATHER: return kcs_l0_gather(ctx, c, &ty, err);
    default: return kcs_l0_rows(ctx, c, &ty, variant == 1, err);
    }
}

static int l0_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    *info = ctx->info;
    return 0;
}

const kcs_backend_ops kcs_backend_level_zero = {
    .abi = KCS_BACKEND_ABI,
    .name = "level_zero",
    .discover = l0_discover,
    .open = l0_open,
    .run = l0_run,
    .describe = l0_describe,
    .close = l0_close,
};
