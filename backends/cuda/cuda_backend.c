/* The CUDA backend's ops table: devices through the CUDA runtime API, the
 * shared GPU kernels (gpu_kernels.cuh, built by nvcc into cuda_kernels.cu)
 * for own schedules and row ops, cuBLAS for the native gemm. A machine
 * without a driver or device answers KCS_E_NODEV ("cuda: no device
 * (cudaGetDeviceCount: ...)"), never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "freivalds_device.h"

#define KCS_GPU_FN(name) kcs_cuda_##name
#include "gpu_run.h"
#include "gpu_run_ops.h"

int kcs_cuda_check(cudaError_t e, const char *call, kcs_error *err)
{
    if (e == cudaSuccess)
        return 0;
    (void)cudaGetLastError(); /* clear a non-sticky error */
    return kcs_fail(err, e == cudaErrorMemoryAllocation ? KCS_E_NOMEM : KCS_E_DEVICE,
                    "cuda: %s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

int kcs_cublas_check(cublasStatus_t s, const char *call, kcs_error *err)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 0;
    int code = s == CUBLAS_STATUS_NOT_SUPPORTED ? KCS_E_UNSUPPORTED
               : s == CUBLAS_STATUS_ALLOC_FAILED ? KCS_E_NOMEM
                                                 : KCS_E_DEVICE;
    return kcs_fail(err, code, "cuda: %s: %s (%s)", call, cublasGetStatusString(s),
                    cublasGetStatusName(s));
}

/* ---- device memory (kcs_gpu_dev) ------------------------------------------ */

int kcs_cuda_alloc(void **p_p, size_t bytes, kcs_error *err)
{
    return KCS_CUDA_CHECK(err, cudaMalloc, (p_p, bytes));
}

void kcs_cuda_release(void *p)
{
    (void)cudaFree(p);
}

int kcs_cuda_put(void *stream, void *dst, const void *src, size_t bytes, kcs_error *err)
{
    return KCS_CUDA_CHECK(err, cudaMemcpyAsync,
                          (dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
}

int kcs_cuda_get(void *stream, void *dst, const void *src, size_t bytes, kcs_error *err)
{
    int rc = KCS_CUDA_CHECK(err, cudaMemcpyAsync,
                            (dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    if (!rc)
        rc = KCS_CUDA_CHECK(err, cudaStreamSynchronize, ((cudaStream_t)stream));
    return rc;
}

static int cuda_launched(int status, const char *what, kcs_error *err)
{
    if (status == (int)cudaSuccess)
        return 0;
    if (status < 0) /* the launcher's own "no such type pair" */
        return kcs_fail(err, KCS_E_INTERNAL, "cuda: %s: no kernel for these types", what);
    char call[64];
    snprintf(call, sizeof call, "launch %s", what);
    return kcs_cuda_check((cudaError_t)status, call, err);
}

/* ---- discovery ------------------------------------------------------------- */

static void cuda_version(char *buf, size_t len, int v)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

static int cuda_fill_info(int dev, kcs_device_info *d, int *sm_p, kcs_error *err)
{
    struct cudaDeviceProp prop;
    int rc = KCS_CUDA_CHECK(err, cudaGetDeviceProperties, (&prop, dev));
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    snprintf(d->backend, sizeof d->backend, "cuda");
    d->index = dev;
    snprintf(d->vendor, sizeof d->vendor, "NVIDIA");
    snprintf(d->model, sizeof d->model, "%.127s", prop.name);
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", prop.major, prop.minor);
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        cuda_version(d->driver, sizeof d->driver, v);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        cuda_version(d->runtime, sizeof d->runtime, v);
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
    if (sm_p)
        *sm_p = prop.major * 10 + prop.minor;
    return 0;
}

/* Number of devices, or KCS_E_NODEV with the runtime's reason. */
static int cuda_count(int *n_p, kcs_error *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return kcs_fail(err, KCS_E_NODEV, "cuda: no device (cudaGetDeviceCount: %s)",
                        cudaGetErrorString(e));
    }
    *n_p = n;
    return 0;
}

static int cuda_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    int n = 0;
    int rc = cuda_count(&n, err);
    if (rc)
        return rc;
    for (int i = 0; i < n && i < max; i++) {
        rc = cuda_fill_info(i, &out[i], NULL, err);
        if (rc)
            return rc;
    }
    *count_p = n;
    return 0;
}

/* ---- context ---------------------------------------------------------------- */

static void cuda_close(kcs_backend_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->lt)
        cublasLtDestroy(ctx->lt);
    if (ctx->blas)
        cublasDestroy(ctx->blas);
    if (ctx->stream)
        cudaStreamDestroy(ctx->stream);
    free(ctx);
}

static int cuda_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                     kcs_error *err)
{
    int n = 0;
    int rc = cuda_count(&n, err);
    if (rc)
        return rc;
    if (device_index < 0 || device_index >= n)
        return kcs_fail(err, KCS_E_NODEV, "cuda: no device %d (%d found)", device_index, n);
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory");
    ctx->device = device_index;
    ctx->verbose = cfg ? cfg->verbose : 0;
    rc = cuda_fill_info(device_index, &ctx->info, &ctx->sm, err);
    if (!rc)
        rc = KCS_CUDA_CHECK(err, cudaSetDevice, (device_index));
    if (!rc)
        rc = KCS_CUDA_CHECK(err, cudaStreamCreateWithFlags, (&ctx->stream, cudaStreamNonBlocking));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasCreate, (&ctx->blas));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasSetStream, (ctx->blas, ctx->stream));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtCreate, (&ctx->lt));
    if (rc) {
        cuda_close(ctx);
        return rc;
    }
    *ctx_p = ctx;
    return 0;
}

static int cuda_run(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err)
{
    int rc = KCS_CUDA_CHECK(err, cudaSetDevice, (ctx->device));
    if (rc)
        return rc;
    kcs_gpu_dev dev = {
        .name = "cuda",
        .stream = ctx->stream,
        .alloc = kcs_cuda_alloc,
        .release = kcs_cuda_release,
        .put = kcs_cuda_put,
        .get = kcs_cuda_get,
        .launched = cuda_launched,
    };
    return gpu_run_call(&dev, call, kcs_cuda_native_gemm, ctx, err);
}

static int cuda_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    *info = ctx->info;
    return 0;
}

const kcs_backend_ops kcs_backend_cuda = {
    .abi = KCS_BACKEND_ABI,
    .name = "cuda",
    .discover = cuda_discover,
    .open = cuda_open,
    .run = cuda_run,
    .describe = cuda_describe,
    .close = cuda_close,
    .freivalds = kcs_cuda_freivalds_verify,
    .sgemm_seconds = kcs_cuda_sgemm_seconds,
};
