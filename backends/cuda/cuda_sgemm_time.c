/* kcs_cuda_sgemm_seconds: the time of one cuBLAS fp32 GEMM on device-resident
 * data (the ops table's sgemm_seconds slot), what `kcs bench freivalds
 * --backend cuda` sets the device Freivalds check against. The operands are
 * filled on the device (a constant byte pattern: GEMM time does not depend
 * on the values, subnormals aside, and 0x3e bytes are normal floats); one
 * warm-up call, then the median of `reps` calls timed between events. */
#include <stdint.h>
#include <stdlib.h>

#include "cuda_internal.h"
#include "freivalds_device.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int kcs_cuda_sgemm_seconds(int device, long m, long kk, long n, int reps, double *seconds_p,
                           kcs_error *err)
{
    if (m < 1 || kk < 1 || n < 1 || reps < 1 || reps > 1000 || m > INT32_MAX || kk > INT32_MAX ||
        n > INT32_MAX)
        return kcs_fail(err, KCS_E_INVAL, "cuda: sgemm %ldx%ldx%ld, %d reps: bad arguments", m,
                        kk, n, reps);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || device < 0 || device >= count)
        return kcs_fail(err, KCS_E_NODEV, "cuda: no device %d (%s)", device,
                        e != cudaSuccess ? cudaGetErrorString(e) : "index out of range");
    int rc = KCS_CUDA_CHECK(err, cudaSetDevice, (device));
    if (rc)
        return rc;
    float *A = NULL, *B = NULL, *C = NULL;
    cublasHandle_t h = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    double *times = calloc((size_t)reps, sizeof *times);
    if (!times)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory");
    const float alpha = 1.0f, beta = 0.0f;
    if ((rc = KCS_CUDA_CHECK(err, cudaMalloc, ((void **)&A, sizeof(float) * (size_t)m * (size_t)kk))) ||
        (rc = KCS_CUDA_CHECK(err, cudaMalloc, ((void **)&B, sizeof(float) * (size_t)kk * (size_t)n))) ||
        (rc = KCS_CUDA_CHECK(err, cudaMalloc, ((void **)&C, sizeof(float) * (size_t)m * (size_t)n))) ||
        (rc = KCS_CUDA_CHECK(err, cudaMemset, (A, 0x3e, sizeof(float) * (size_t)m * (size_t)kk))) ||
        (rc = KCS_CUDA_CHECK(err, cudaMemset, (B, 0x3e, sizeof(float) * (size_t)kk * (size_t)n))) ||
        (rc = KCS_CUBLAS_CHECK(err, cublasCreate, (&h))) ||
        (rc = KCS_CUDA_CHECK(err, cudaEventCreate, (&t0))) ||
        (rc = KCS_CUDA_CHECK(err, cudaEventCreate, (&t1))))
        goto out;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        if ((rc = KCS_CUDA_CHECK(err, cudaEventRecord, (t0, 0))) ||
            (rc = KCS_CUBLAS_CHECK(err, cublasSgemm,
                                   (h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)kk, &alpha,
                                    B, (int)n, A, (int)kk, &beta, C, (int)n))) ||
            (rc = KCS_CUDA_CHECK(err, cudaEventRecord, (t1, 0))) ||
            (rc = KCS_CUDA_CHECK(err, cudaEventSynchronize, (t1))))
            goto out;
        float ms = 0;
        if ((rc = KCS_CUDA_CHECK(err, cudaEventElapsedTime, (&ms, t0, t1))))
            goto out;
        if (r >= 0)
            times[r] = ms * 1e-3;
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    *seconds_p = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
out:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    if (h)
        cublasDestroy(h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    free(times);
    return rc;
}
