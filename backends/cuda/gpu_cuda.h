/* The CUDA runtime's names for the sources shared with HIP (gpu_rt.h,
 * gpu_backend.h, gpu_freivalds.h, gpu_run.h): include it first. */
#ifndef KCS_GPU_CUDA_H
#define KCS_GPU_CUDA_H

#include <cuda_runtime_api.h>

#define KCS_GPU_RT(x) cuda##x
#define KCS_GPU_NAME "cuda"
#define KCS_GPU_OOM cudaErrorMemoryAllocation
#define KCS_GPU_FN(name) kcs_cuda_##name
#define KCS_GPU_OPS kcs_backend_cuda /* the backend's ops table */
#define KCS_GPU_VENDOR "NVIDIA"

#endif
