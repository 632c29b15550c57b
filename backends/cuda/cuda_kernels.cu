/* The CUDA build of the shared GPU kernels (gpu_kernels.cuh). Compiled by
 * nvcc with -fmad=false: the kernels write every fma they mean. */
#include <cuda_runtime.h>

#define KCS_GPU_NS kcs_cuda
#define KCS_GPU_FN(name) kcs_cuda_##name
#define KCS_GPU_STREAM(p) ((cudaStream_t)(p))
#define KCS_GPU_LAST_ERROR() ((int)cudaGetLastError())

#include "gpu_kernels.cuh"
