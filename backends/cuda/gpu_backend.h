/* gpu_backend.h: the ops table of the CUDA and HIP backends, one source for
 * both (their runtime APIs are name-parallel). The includer includes its
 * runtime's names first (gpu_cuda.h or hip/gpu_hip.h), then defines
 *   struct kcs_backend_ctx   with at least device, stream, info, verbose
 *   KCS_GPU_LINK             linkage of the device-memory functions
 *                            KCS_GPU_FN(alloc, release, put, get, dev):
 *                            empty (CUDA: cuda_blas.c uses them) or static
 *   KCS_GPU_PROP             the runtime's device-properties type
 *   KCS_GPU_NATIVE_GEMM      the native gemm for gpu_run_call, or NULL
 *   KCS_GPU_OPS_MORE         further members of the ops table, or nothing
 *   static void gpu_version(char *buf, size_t len, int v)    a runtime version
 *   static void gpu_prop_info(const KCS_GPU_PROP *prop, int dev,
 *                             kcs_device_info *d, kcs_backend_ctx *ctx)
 *       what the properties say beyond the common fields (arch, uuid; ctx
 *       NULL in discovery)
 *   static int gpu_open_more(kcs_backend_ctx *ctx, kcs_error *err)
 *       the rest of open, after the device is current and the stream made
 *   static void gpu_close(kcs_backend_ctx *ctx)    (ctx may be NULL)
 * and then includes this header once. It defines the backend's ops table,
 * KCS_GPU_OPS (kcs_backend_<name>, the symbol the registry looks up). A machine without a driver or device answers
 * KCS_E_NODEV ("<rt>: no device (<rt>GetDeviceCount: ...)"), never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freivalds_device.h"
#include "gpu_rt.h"
#include "gpu_run.h"
#include "gpu_run_ops.h"

/* ---- device memory (kcs_gpu_dev) ------------------------------------------ */

KCS_GPU_LINK int KCS_GPU_FN(alloc)(void **p_p, size_t bytes, kcs_error *err)
{
    return GPU_RT_CALL(err, Malloc, (p_p, bytes));
}

KCS_GPU_LINK void KCS_GPU_FN(release)(void *p)
{
    (void)KCS_GPU_RT(Free)(p);
}

KCS_GPU_LINK int KCS_GPU_FN(put)(void *stream, void *dst, const void *src, size_t bytes,
                                 kcs_error *err)
{
    return GPU_RT_CALL(err, MemcpyAsync, (dst, src, bytes, KCS_GPU_RT(MemcpyHostToDevice),
                                          (KCS_GPU_RT(Stream_t))stream));
}

KCS_GPU_LINK int KCS_GPU_FN(get)(void *stream, void *dst, const void *src, size_t bytes,
                                 kcs_error *err)
{
    int rc = GPU_RT_CALL(err, MemcpyAsync, (dst, src, bytes, KCS_GPU_RT(MemcpyDeviceToHost),
                                            (KCS_GPU_RT(Stream_t))stream));
    if (!rc)
        rc = GPU_RT_CALL(err, StreamSynchronize, ((KCS_GPU_RT(Stream_t))stream));
    return rc;
}

static int gpu_launched(int status, const char *what, kcs_error *err)
{
    if (status == (int)KCS_GPU_RT(Success))
        return 0;
    if (status < 0) /* the launcher's own "no such type pair" */
        return kcs_fail(err, KCS_E_INTERNAL, "%s: %s: no kernel for these types", KCS_GPU_NAME,
                        what);
    char call[64];
    snprintf(call, sizeof call, "launch %s", what);
    return gpu_rt_check((KCS_GPU_RT(Error_t))status, call, err);
}

/* The device memory on stream; with_launches: also the kernels' launch
 * status translator (the shared kernels), else none (vendor libraries). */
KCS_GPU_LINK kcs_gpu_dev KCS_GPU_FN(dev)(void *stream, int with_launches)
{
    kcs_gpu_dev d = {
        .name = KCS_GPU_NAME,
        .stream = stream,
        .alloc = KCS_GPU_FN(alloc),
        .release = KCS_GPU_FN(release),
        .put = KCS_GPU_FN(put),
        .get = KCS_GPU_FN(get),
        .launched = with_launches ? gpu_launched : NULL,
    };
    return d;
}

/* ---- discovery ------------------------------------------------------------- */

static int gpu_fill_info(int dev, kcs_device_info *d, kcs_backend_ctx *ctx, kcs_error *err)
{
    KCS_GPU_PROP prop;
    int rc = GPU_RT_CALL(err, GetDeviceProperties, (&prop, dev));
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    snprintf(d->backend, sizeof d->backend, "%s", KCS_GPU_NAME);
    d->index = dev;
    snprintf(d->vendor, sizeof d->vendor, "%s", KCS_GPU_VENDOR);
    snprintf(d->model, sizeof d->model, "%.127s", prop.name);
    int v = 0;
    if (KCS_GPU_RT(DriverGetVersion)(&v) == KCS_GPU_RT(Success))
        gpu_version(d->driver, sizeof d->driver, v);
    if (KCS_GPU_RT(RuntimeGetVersion)(&v) == KCS_GPU_RT(Success))
        gpu_version(d->runtime, sizeof d->runtime, v);
    gpu_prop_info(&prop, dev, d, ctx);
    return 0;
}

static int gpu_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    int n = 0;
    int rc = gpu_rt_count(&n, err);
    if (rc)
        return rc;
    for (int i = 0; i < n && i < max; i++) {
        rc = gpu_fill_info(i, &out[i], NULL, err);
        if (rc)
            return rc;
    }
    *count_p = n;
    return 0;
}

/* ---- context ---------------------------------------------------------------- */

static int gpu_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                    kcs_error *err)
{
    int rc = gpu_rt_exists(device_index, err);
    if (rc)
        return rc;
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", KCS_GPU_NAME);
    ctx->device = device_index;
    ctx->verbose = cfg ? cfg->verbose : 0;
    rc = gpu_fill_info(device_index, &ctx->info, ctx, err);
    if (!rc)
        rc = GPU_RT_CALL(err, SetDevice, (device_index));
    if (!rc)
        rc = GPU_RT_CALL(err, StreamCreateWithFlags,
                         (&ctx->stream, KCS_GPU_RT(StreamNonBlocking)));
    if (!rc)
        rc = gpu_open_more(ctx, err);
    if (rc) {
        gpu_close(ctx);
        return rc;
    }
    *ctx_p = ctx;
    return 0;
}

static int gpu_run(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err)
{
    int rc = GPU_RT_CALL(err, SetDevice, (ctx->device));
    if (rc)
        return rc;
    kcs_gpu_dev dev = KCS_GPU_FN(dev)(ctx->stream, 1);
    return gpu_run_call(&dev, call, KCS_GPU_NATIVE_GEMM, ctx, err);
}

static int gpu_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    *info = ctx->info;
    return 0;
}

const kcs_backend_ops KCS_GPU_OPS = {
    .abi = KCS_BACKEND_ABI,
    .name = KCS_GPU_NAME,
    .discover = gpu_discover,
    .open = gpu_open,
    .run = gpu_run,
    .describe = gpu_describe,
    .close = gpu_close,
    .freivalds = KCS_GPU_FN(freivalds_verify),
    KCS_GPU_OPS_MORE
};
