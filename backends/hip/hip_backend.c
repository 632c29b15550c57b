/* The HIP backend's ops table: AMD devices through the HIP runtime API and
 * the shared GPU kernels (backends/cuda/gpu_kernels.cuh, built by hipcc
 * into hip_kernels.hip). Debian 12 ships no hipBLAS/rocBLAS, so the native
 * gemm is the kernels' own 64×64 tiled gemm (the same kernel as opencl's
 * gemm_tiled). The table itself is backends/cuda/gpu_backend.h, shared
 * with CUDA; here is what only HIP does. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_hip.h"

#include "backend.h"

struct kcs_backend_ctx {
    int device;
    hipStream_t stream;
    kcs_device_info info;
    int verbose;
};

#define KCS_GPU_LINK static
#define KCS_GPU_PROP hipDeviceProp_t
#define KCS_GPU_NATIVE_GEMM NULL /* native gemm: the tiled kernel */
#define KCS_GPU_OPS_MORE

/* HIP versions are major * 10^7 + minor * 10^5 + patch. */
static void gpu_version(char *buf, size_t len, int v)
{
    snprintf(buf, len, "%d.%d.%d", v / 10000000, (v / 100000) % 100, v % 100000);
}

static void gpu_prop_info(const hipDeviceProp_t *prop, int dev, kcs_device_info *d,
                          kcs_backend_ctx *ctx)
{
    (void)ctx;
    snprintf(d->arch, sizeof d->arch, "%.63s", prop->gcnArchName);
    hipDevice_t hd;
    hipUUID u;
    if (hipDeviceGet(&hd, dev) == hipSuccess && hipDeviceGetUuid(&u, hd) == hipSuccess) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(d->uuid, sizeof d->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
    } else {
        (void)hipGetLastError();
        snprintf(d->uuid, sizeof d->uuid, "hip-%d", dev);
    }
}

static int gpu_open_more(kcs_backend_ctx *ctx, kcs_error *err)
{
    (void)ctx;
    (void)err;
    return 0;
}

static void gpu_close(kcs_backend_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->stream)
        (void)hipStreamDestroy(ctx->stream);
    free(ctx);
}

#include "gpu_backend.h"
