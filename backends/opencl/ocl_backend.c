/* The OpenCL backend's ops table: every platform's GPU, CPU and accelerator
 * devices (PoCL in CI); kernels from backends/kernels/ embedded at build
 * time, built per (input storage, accumulator) on first use with the
 * options given at open. Calls are checked and planned by
 * backends/kernels_host (shared with level_zero), run by ocl_exec.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "declares.h"
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
    for (int i = 0; i < ctx->progs.n; i++)
        clReleaseProgram(ctx->progs.at[i].handle);
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
    kcs_kh_device *kh = &ctx->kh;
    kh->name = "opencl";
    kh->model = ctx->info.model;
    kh->fp64_ext = "cl_khr_fp64";
    cl_device_fp_config fp64 = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) !=
        CL_SUCCESS)
        fp64 = 0;
    kh->has_fp64 = fp64 != 0;
    cl_device_type type = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        type = 0;
    /* -DKCS_GEMM_TILED in the options: the GPU kernel on a CPU device too */
    kh->gemm_vec = (type & CL_DEVICE_TYPE_CPU) != 0 && !strstr(opts, "-DKCS_GEMM_TILED");
    cl_ulong local_mem = 0;
    cl_int cr = clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof kh->max_wg,
                                &kh->max_wg, NULL);
    if (cr == CL_SUCCESS)
        cr = clGetDeviceInfo(ctx->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem,
                             &local_mem, NULL);
    if (cr != CL_SUCCESS) {
        rc = kcs_ocl_fail(err, "clGetDeviceInfo(work-group and local memory sizes)", cr);
        goto err_free;
    }
    kh->local_mem = local_mem;
    /* gemm tiles: (TS/WPT)^2 work-items per group; the tiles follow the
     * device, so the native work-group size needs no check */
    kh->wpt = 4;
    kh->ts = kh->max_wg >= 256 ? 64 : kh->max_wg >= 64 ? 32 : 16;
    kh->rwg = kh->awg = (int)pow2_floor(kh->max_wg < 64 ? kh->max_wg : 64);
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
    rc = kcs_ocl_kernel(ctx, "gemm.cl", "gemm_tiled", &(kcs_kh_types){KCS_KH_F32, 0}, &k, err);
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

static int ocl_run(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    return kcs_kh_run(&ctx->kh, ctx, c, kcs_ocl_exec, err);
}

/* What the OpenCL kernels declare (backend.h): rounding to nearest, the
 * default rounding of OpenCL C for every float add and multiply, with
 * exp within 3 ulp (OpenCL C full profile), unless the build options
 * allow contraction into reduced-accuracy mad or relaxed math, or the
 * declared accumulator truncates. */
static uint32_t ocl_declares(kcs_backend_ctx *ctx, const kcs_call *call)
{
    if (!ctx || options_contract(ctx->options) || call->acc.rz)
        return 0;
    return KCS_DECL_BIT(KCS_DECL_ROUND_NEAREST);
}

const kcs_backend_ops kcs_backend_opencl = {
    .abi = KCS_BACKEND_ABI,
    .name = "opencl",
    .discover = ocl_discover,
    .open = ocl_open,
    .run = ocl_run,
    .describe = ocl_describe,
    .close = ocl_close,
    .declares = ocl_declares,
};
