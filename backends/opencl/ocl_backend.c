/* The OpenCL backend's ops table: every platform's GPU, CPU and accelerator
 * devices (PoCL in CI); kernels from backends/kernels/ embedded at build
 * time, built per (input storage, accumulator) on first use with the
 * options given at open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

static int ocl_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    cl_platform_id plats[KCS_MAX_DEVICES];
    cl_device_id devs[KCS_MAX_DEVICES];
    int n = 0;
    if (max > KCS_MAX_DEVICES)
        max = KCS_MAX_DEVICES;
    int rc = kcs_ocl_devices(plats, devs, max, &n, err);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        rc = kcs_ocl_device_info(plats[i], devs[i], i, &out[i], err);
        if (rc)
            return rc;
    }
    *count_p = n;
    return 0;
}

static size_t pow2_floor(size_t x)
{
    size_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* Options that let the compiler contract a*b+c (common.cl KCS_CONTRACT). */
static int options_contract(const char *o)
{
    return strstr(o, "-cl-mad-enable") || strstr(o, "-cl-fast-relaxed-math") ||
           strstr(o, "-cl-unsafe-math-optimizations");
}

static void ocl_close(kcs_backend_ctx *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < ctx->n_progs; i++)
        clReleaseProgram(ctx->progs[i].prog);
    if (ctx->queue)
        clReleaseCommandQueue(ctx->queue);
    if (ctx->context)
        clReleaseContext(ctx->context);
    free(ctx);
}

static int ocl_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                    kcs_error *err)
{
    cl_platform_id plats[KCS_MAX_DEVICES];
    cl_device_id devs[KCS_MAX_DEVICES];
    int n = 0;
    int rc = kcs_ocl_devices(plats, devs, KCS_MAX_DEVICES, &n, err);
    if (rc)
        return rc;
    if (device_index < 0 || device_index >= n)
        return kcs_fail(err, KCS_E_NODEV, "opencl: no device %d (found %d)", device_index, n);
    const char *opts = cfg && cfg->options ? cfg->options : "";
    if (strlen(opts) >= KCS_OCL_OPTS_MAX)
        return kcs_fail(err, KCS_E_INVAL, "opencl: build options longer than %d characters",
                        KCS_OCL_OPTS_MAX - 1);
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "opencl: out of memory");
    ctx->platform = plats[device_index];
    ctx->device = devs[device_index];
    snprintf(ctx->options, sizeof ctx->options, "%s", opts);
    ctx->contract = options_contract(opts) ? 1 : 0;
    ctx->verbose = cfg ? cfg->verbose : 0;
    rc = kcs_ocl_device_info(ctx->platform, ctx->device, device_index, &ctx->info, err);
    if (rc)
        goto err_free;
    cl_device_fp_config fp64 = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) !=
        CL_SUCCESS)
        fp64 = 0;
    ctx->has_fp64 = fp64 != 0;
    cl_device_type type = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        type = 0;
    /* -DKCS_GEMM_TILED in the options: the GPU kernel on a CPU device too */
    ctx->cpu = (type & CL_DEVICE_TYPE_CPU) != 0 && !strstr(opts, "-DKCS_GEMM_TILED");
    cl_int cr = clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                sizeof ctx->max_wg, &ctx->max_wg, NULL);
    if (cr == CL_SUCCESS)
        cr = clGetDeviceInfo(ctx->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ctx->local_mem,
                             &ctx->local_mem, NULL);
    if (cr != CL_SUCCESS) {
        rc = kcs_ocl_fail(err, "clGetDeviceInfo(work-group and local memory sizes)", cr);
        goto err_free;
    }
    /* gemm tiles: (TS/WPT)^2 work-items per group */
    ctx->wpt = 4;
    ctx->ts = ctx->max_wg >= 256 ? 64 : ctx->max_wg >= 64 ? 32 : 16;
    ctx->rwg = ctx->awg = (int)pow2_floor(ctx->max_wg < 64 ? ctx->max_wg : 64);
    ctx->context = clCreateContext(NULL, 1, &ctx->device, NULL, NULL, &cr);
    if (cr != CL_SUCCESS) {
        rc = kcs_ocl_fail(err, "clCreateContext", cr);
        goto err_free;
    }
    ctx->queue = clCreateCommandQueue(ctx->context, ctx->device, 0, &cr);
    if (cr != CL_SUCCESS) {
        rc = kcs_ocl_fail(err, "clCreateCommandQueue", cr);
        goto err_free;
    }
    /* Build the fp32 gemm program now: bad options or a broken compiler fail
     * at open, with the build log; other programs are built on first use. */
    cl_kernel k;
    rc = kcs_ocl_kernel(ctx, "gemm.cl", "gemm_tiled", &(kcs_ocl_types){KCS_OCL_F32, 0}, &k,
                        err);
    if (rc)
        goto err_free;
    clReleaseKernel(k);
    *ctx_p = ctx;
    return 0;
err_free:
    ocl_close(ctx);
    return rc;
}

static int ocl_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    *info = ctx->info;
    if (ctx->options[0]) {
        /* Build options change the arithmetic: record them with the arch,
         * first (the field is short). */
        char arch[sizeof info->arch + KCS_OCL_OPTS_MAX + 8];
        snprintf(arch, sizeof arch, "%s | %s", ctx->options, ctx->info.arch);
        kcs_ocl_copy(info->arch, sizeof info->arch, arch);
    }
    return 0;
}

/* Input storage for a declared input format: values are exact in it. */
static int storage_of(kcs_format f, int *tin_p)
{
    switch (f) {
    case KCS_FMT_FP64: *tin_p = KCS_OCL_F64; return 0;
    case KCS_FMT_FP16: *tin_p = KCS_OCL_F16; return 0;
    case KCS_FMT_BF16: *tin_p = KCS_OCL_BF16; return 0;
    case KCS_FMT_FP32:
    case KCS_FMT_TF32:
    case KCS_FMT_FP8_E4M3:
    case KCS_FMT_FP8_E5M2:
    case KCS_FMT_FP8_E4M3FNUZ:
    case KCS_FMT_FP8_E5M2FNUZ: *tin_p = KCS_OCL_F32; return 0;
    default: return -1;
    }
}

/* Validate a call; variant_p: 0 native, 1 own, 2 fused (attention). */
static int check_call(kcs_backend_ctx *ctx, const kcs_call *c, kcs_ocl_types *ty,
                      int *variant_p, kcs_error *err)
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
        return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl: %s has no variant '%s' (native, own%s)",
                        op, v, c->op == KCS_OP_ATTENTION ? ", fused" : "");
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return kcs_fail(err, KCS_E_INVAL, "opencl: %s: negative shape", op);
    if (storage_of(c->dtype_in, &ty->tin))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl: no storage for dtype_in %s",
                        kcs_format_name(c->dtype_in));
    if (c->op == KCS_OP_GATHER) {
        ty->tacc = 0; /* a copy: no accumulator */
    } else if (c->acc.bits > 0 || (c->acc.fmt != KCS_FMT_FP32 && c->acc.fmt != KCS_FMT_FP64)) {
        char b[32];
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "opencl: accumulator %s not offered (fp32 or fp64; bits:N and narrow "
                        "accumulators are emulated by the cpu backend)",
                        kcs_acc_str(&c->acc, b, sizeof b));
    } else {
        ty->tacc = c->acc.fmt == KCS_FMT_FP64;
    }
    if ((ty->tacc || ty->tin == KCS_OCL_F64) && !ctx->has_fp64)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl: %s has no cl_khr_fp64 (fp64 %s)",
                        ctx->info.model, ty->tacc ? "accumulator" : "input");
    if (variant > 0) { /* own and fused follow the schedule */
        const kcs_schedule *s = &c->schedule;
        if (s->kind == KCS_SCHED_ATOMIC)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl: schedule atomic not offered");
        if ((s->kind == KCS_SCHED_BLOCKED || s->kind == KCS_SCHED_SPLITK) && s->param <= 0)
            return kcs_fail(err, KCS_E_INVAL, "opencl: schedule parameter must be positive");
        if (s->kind != KCS_SCHED_SEQUENTIAL && s->kind != KCS_SCHED_PAIRWISE &&
            s->kind != KCS_SCHED_BLOCKED && s->kind != KCS_SCHED_SPLITK)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl: unknown schedule %d", (int)s->kind);
    }
    int nin = kcs_op_n_inputs(c->op);
    for (int i = 0; i < nin; i++) {
        int optional = ((c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM) && i == 2) ||
                       ((c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM) && i >= 1);
        size_t need = kcs_op_in_len(c, i);
        if (!c->in[i]) {
            if (optional)
                continue;
            return kcs_fail(err, KCS_E_INVAL, "opencl: %s: input %d missing", op, i);
        }
        if (c->in_len[i] < need)
            return kcs_fail(err, KCS_E_INVAL, "opencl: %s: input %d has %zu elements, needs %zu",
                            op, i, c->in_len[i], need);
    }
    size_t need = kcs_op_out_len(c);
    if (need > 0 && (!c->out || c->out_len < need))
        return kcs_fail(err, KCS_E_INVAL, "opencl: %s: output has %zu elements, needs %zu", op,
                        c->out ? c->out_len : 0, need);
    *variant_p = variant;
    return 0;
}

static int ocl_run(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
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
        return kcs_fail(err, KCS_E_UNSUPPORTED, "opencl: op %s is not offered by this backend",
                        kcs_op_name(c->op));
    }
    kcs_ocl_types ty;
    int variant = 0;
    int rc = check_call(ctx, c, &ty, &variant, err);
    if (rc)
        return rc;
    switch (c->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_DOT: return kcs_ocl_gemm(ctx, c, &ty, variant == 1, err);
    case KCS_OP_ATTENTION: return kcs_ocl_attention(ctx, c, &ty, variant, err);
    case KCS_OP_GATHER: return kcs_ocl_gather(ctx, c, &ty, err);
    default: return kcs_ocl_rows(ctx, c, &ty, variant == 1, err);
    }
}

const kcs_backend_ops kcs_backend_opencl = {
    .abi = KCS_BACKEND_ABI,
    .name = "opencl",
    .discover = ocl_discover,
    .open = ocl_open,
    .run = ocl_run,
    .describe = ocl_describe,
    .close = ocl_close,
};
