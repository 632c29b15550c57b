/* The Level Zero backend's ops table: Intel (and other Level Zero) GPUs
 * running the OpenCL C kernels of backends/kernels compiled offline to
 * SPIR-V. Variants, schedules and accumulators are those of the opencl
 * backend (the same kernels, launched the same way: both are checked and
 * planned by backends/kernels_host; l0_exec.c runs the plans): native /
 * own (and fused for attention), fp32 or fp64 accumulators, no atomic
 * schedule. Without a driver: KCS_E_NODEV ("level_zero: no driver (zeInit:
 * ...)"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l0_internal.h"

/* The drivers and devices of this node, in kcs's device order. */
typedef struct l0_found {
    ze_driver_handle_t drv[KCS_MAX_DEVICES];
    ze_device_handle_t dev[KCS_MAX_DEVICES];
    int n;
} l0_found;

static int l0_enumerate(l0_found *f, kcs_error *err)
{
    f->n = 0;
    return kcs_l0_devices(f->drv, f->dev, KCS_MAX_DEVICES, &f->n, err);
}

static int l0_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    l0_found f;
    int rc = l0_enumerate(&f, err);
    if (rc)
        return rc;
    for (int i = 0; i < f.n && i < max && i < KCS_MAX_DEVICES; i++) {
        rc = kcs_l0_device_info(f.drv[i], f.dev[i], i, &out[i], NULL, NULL, NULL, err);
        if (rc)
            return rc;
    }
    *count_p = f.n;
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
    l0_found f;
    int rc = l0_enumerate(&f, err);
    if (rc)
        return rc;
    if (device_index < 0 || device_index >= f.n || device_index >= KCS_MAX_DEVICES)
        return kcs_fail(err, KCS_E_NODEV, "level_zero: no device %d (%d found)", device_index,
                        f.n);
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "level_zero: out of memory");
    ctx->driver = f.drv[device_index];
    ctx->device = f.dev[device_index];
    ctx->verbose = cfg ? cfg->verbose : 0;
    if (cfg && cfg->options)
        snprintf(ctx->options, sizeof ctx->options, "%s", cfg->options);
    uint32_t ordinal = 0, max_group = 0, local_mem = 0;
    kcs_kh_device *kh = &ctx->kh;
    rc = kcs_l0_device_info(ctx->driver, ctx->device, device_index, &ctx->info, &kh->has_fp64,
                            &max_group, &local_mem, err);
    kh->name = "level_zero";
    kh->model = ctx->info.model;
    kh->fp64_ext = NULL;
    kh->max_wg = max_group;
    kh->check_native_wg = 1; /* the SPIR-V's tiles are fixed */
    kh->local_mem = local_mem;
    kh->ts = KCS_L0_TS;
    kh->wpt = KCS_L0_WPT;
    kh->rwg = KCS_L0_RWG;
    kh->awg = KCS_L0_AWG;
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

static int l0_run(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    return kcs_kh_run(&ctx->kh, ctx, c, kcs_l0_exec, err);
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
