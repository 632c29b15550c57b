/* The CUDA backend's ops table: devices through the CUDA runtime API, the
 * shared GPU kernels (gpu_kernels.cuh, built by nvcc into cuda_kernels.cu)
 * for own schedules and row ops, cuBLAS for the native gemm. The table
 * itself is gpu_backend.h, shared with HIP; here is what only CUDA does. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_cuda.h"

#include "cuda_internal.h"

#define KCS_GPU_LINK
#define KCS_GPU_PROP struct cudaDeviceProp
#define KCS_GPU_NATIVE_GEMM kcs_cuda_native_gemm
#define KCS_GPU_OPS_MORE .sgemm_seconds = kcs_cuda_sgemm_seconds,

static void gpu_version(char *buf, size_t len, int v)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void gpu_prop_info(const struct cudaDeviceProp *prop, int dev, kcs_device_info *d,
                          kcs_backend_ctx *ctx)
{
    (void)dev;
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", prop->major, prop->minor);
    const unsigned char *u = (const unsigned char *)prop->uuid.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
    if (ctx)
        ctx->sm = prop->major * 10 + prop->minor;
}

static int gpu_open_more(kcs_backend_ctx *ctx, kcs_error *err)
{
    int rc = KCS_CUBLAS_CHECK(err, cublasCreate, (&ctx->blas));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasSetStream, (ctx->blas, ctx->stream));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtCreate, (&ctx->lt));
    return rc;
}

static void gpu_close(kcs_backend_ctx *ctx)
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

#include "gpu_backend.h"

int kcs_cuda_check(cudaError_t e, const char *call, kcs_error *err)
{
    return gpu_rt_check(e, call, err);
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
