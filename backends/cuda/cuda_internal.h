/* CUDA backend internals: the context and the status translators. Only
 * files in backends/cuda/ include this header (and so the vendor headers). */
#ifndef KCS_CUDA_INTERNAL_H
#define KCS_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "backend.h"

struct kcs_backend_ctx {
    int device;
    int sm; /* compute capability, major * 10 + minor */
    cudaStream_t stream;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    kcs_device_info info;
    int verbose;
};

/* 0 on success, else kcs_fail(KCS_E_DEVICE or KCS_E_NOMEM) with
 * "cuda: <call>: <vendor message> (<vendor name>)". */
int kcs_cuda_check(cudaError_t e, const char *call, kcs_error *err);
int kcs_cublas_check(cublasStatus_t s, const char *call, kcs_error *err);

/* KCS_CUDA_CHECK(err, cudaMalloc, (&p, n)): call, name it in the message. */
#define KCS_CUDA_CHECK(err, fn, args) kcs_cuda_check(fn args, #fn, (err))
#define KCS_CUBLAS_CHECK(err, fn, args) kcs_cublas_check(fn args, #fn, (err))

/* cuda_blas.c: the native gemm / batched_gemm (cuBLAS, cuBLASLt for fp8).
 * ctx is the kcs_backend_ctx. */
int kcs_cuda_native_gemm(void *ctx, const kcs_call *c, kcs_error *err);

/* cuda_backend.c (gpu_backend.h): the device memory on stream for
 * cuda_blas.c (with_launches 0: no kernels of kcs's own). */
struct kcs_gpu_dev;
struct kcs_gpu_dev kcs_cuda_dev(void *stream, int with_launches);

#endif
