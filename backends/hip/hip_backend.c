/* The HIP backend's ops table: AMD devices through the HIP runtime API and
 * the shared GPU kernels (backends/cuda/gpu_kernels.cuh, built by hipcc
 * into hip_kernels.hip). Debian 12 ships no hipBLAS/rocBLAS, so the native
 * gemm is the kernels' own 64×64 tiled gemm (the same kernel as opencl's
 * gemm_tiled). A machine without an AMD GPU answers KCS_E_NODEV
 * ("hip: no device (hipGetDeviceCount: ...)"), never a crash. */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "freivalds_device.h"

#define KCS_GPU_FN(name) kcs_hip_##name
#include "gpu_run.h"
#include "gpu_run_ops.h"

struct kcs_backend_ctx {
    int device;
    hipStream_t stream;
    kcs_device_info info;
    int verbose;
};

static int hip_check(hipError_t e, const char *call, kcs_error *err)
{
    if (e == hipSuccess)
        return 0;
    (void)hipGetLastError();
    return kcs_fail(err, e == hipErrorOutOfMemory ? KCS_E_NOMEM : KCS_E_DEVICE,
                    "hip: %s: %s (%s)", call, hipGetErrorString(e), hipGetErrorName(e));
}

/* HIP_CHECK(err, hipMalloc, (&p, n)): call, name it in the message. */
#define HIP_CHECK(err, fn, args) hip_check(fn args, #fn, (err))

/* ---- device memory (kcs_gpu_dev) ------------------------------------------ */

static int hip_alloc(void **p_p, size_t bytes, kcs_error *err)
{
    return HIP_CHECK(err, hipMalloc, (p_p, bytes));
}

static void hip_release(void *p)
{
    (void)hipFree(p);
}

static int hip_put(void *stream, void *dst, const void *src, size_t bytes, kcs_error *err)
{
    return HIP_CHECK(err, hipMemcpyAsync,
                     (dst, src, bytes, hipMemcpyHostToDevice, (hipStream_t)stream));
}

static int hip_get(void *stream, void *dst, const void *src, size_t bytes, kcs_error *err)
{
    int rc = HIP_CHECK(err, hipMemcpyAsync,
                       (dst, src, bytes, hipMemcpyDeviceToHost, (hipStream_t)stream));
    if (!rc)
        rc = HIP_CHECK(err, hipStreamSynchronize, ((hipStream_t)stream));
    return rc;
}

static int hip_launched(int status, const char *what, kcs_error *err)
{
    if (status == (int)hipSuccess)
        return 0;
    if (status < 0)
        return kcs_fail(err, KCS_E_INTERNAL, "hip: %s: no kernel for these types", what);
    char call[64];
    snprintf(call, sizeof call, "launch %s", what);
    return hip_check((hipError_t)status, call, err);
}

/* ---- discovery ------------------------------------------------------------- */

/* HIP versions are major * 10^7 + minor * 10^5 + patch. */
static void hip_version(char *buf, size_t len, int v)
{
    snprintf(buf, len, "%d.%d.%d", v / 10000000, (v / 100000) % 100, v % 100000);
}

static int hip_fill_info(int index, kcs_device_info *d, kcs_error *err)
{
    hipDeviceProp_t prop;
    int rc = HIP_CHECK(err, hipGetDeviceProperties, (&prop, index));
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    snprintf(d->backend, sizeof d->backend, "hip");
    d->index = index;
    snprintf(d->vendor, sizeof d->vendor, "AMD");
    snprintf(d->model, sizeof d->model, "%.127s", prop.name);
    snprintf(d->arch, sizeof d->arch, "%.63s", prop.gcnArchName);
    int v = 0;
    if (hipDriverGetVersion(&v) == hipSuccess)
        hip_version(d->driver, sizeof d->driver, v);
    if (hipRuntimeGetVersion(&v) == hipSuccess)
        hip_version(d->runtime, sizeof d->runtime, v);
    hipDevice_t dev;
    hipUUID u;
    if (hipDeviceGet(&dev, index) == hipSuccess && hipDeviceGetUuid(&u, dev) == hipSuccess) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(d->uuid, sizeof d->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
    } else {
        (void)hipGetLastError();
        snprintf(d->uuid, sizeof d->uuid, "hip-%d", index);
    }
    return 0;
}

static int hip_count(int *n_p, kcs_error *err)
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return kcs_fail(err, KCS_E_NODEV, "hip: no device (hipGetDeviceCount: %s)",
                        hipGetErrorString(e));
    }
    *n_p = n;
    return 0;
}

static int hip_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    int n = 0;
    int rc = hip_count(&n, err);
    if (rc)
        return rc;
    for (int i = 0; i < n && i < max; i++) {
        rc = hip_fill_info(i, &out[i], err);
        if (rc)
            return rc;
    }
    *count_p = n;
    return 0;
}

/* ---- context ---------------------------------------------------------------- */

static void hip_close(kcs_backend_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->stream)
        (void)hipStreamDestroy(ctx->stream);
    free(ctx);
}

static int hip_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                    kcs_error *err)
{
    int n = 0;
    int rc = hip_count(&n, err);
    if (rc)
        return rc;
    if (device_index < 0 || device_index >= n)
        return kcs_fail(err, KCS_E_NODEV, "hip: no device %d (%d found)", device_index, n);
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "hip: out of memory");
    ctx->device = device_index;
    ctx->verbose = cfg ? cfg->verbose : 0;
    rc = hip_fill_info(device_index, &ctx->info, err);
    if (!rc)
        rc = HIP_CHECK(err, hipSetDevice, (device_index));
    if (!rc)
        rc = HIP_CHECK(err, hipStreamCreateWithFlags, (&ctx->stream, hipStreamNonBlocking));
    if (rc) {
        hip_close(ctx);
        return rc;
    }
    *ctx_p = ctx;
    return 0;
}

static int hip_run(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err)
{
    int rc = HIP_CHECK(err, hipSetDevice, (ctx->device));
    if (rc)
        return rc;
    kcs_gpu_dev dev = {
        .name = "hip",
        .stream = ctx->stream,
        .alloc = hip_alloc,
        .release = hip_release,
        .put = hip_put,
        .get = hip_get,
        .launched = hip_launched,
    };
    return gpu_run_call(&dev, call, NULL, ctx, err); /* native gemm: the tiled kernel */
}

static int hip_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    *info = ctx->info;
    return 0;
}

const kcs_backend_ops kcs_backend_hip = {
    .abi = KCS_BACKEND_ABI,
    .name = "hip",
    .discover = hip_discover,
    .open = hip_open,
    .run = hip_run,
    .describe = hip_describe,
    .close = hip_close,
    .freivalds = kcs_hip_freivalds_verify,
};
