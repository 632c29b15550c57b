/* The HIP runtime's names for the sources shared with CUDA
 * (backends/cuda/gpu_rt.h, gpu_backend.h, gpu_freivalds.h, gpu_run.h):
 * include it first. */
#ifndef KCS_GPU_HIP_H
#define KCS_GPU_HIP_H

#include <hip/hip_runtime_api.h>

#define KCS_GPU_RT(x) hip##x
#define KCS_GPU_NAME "hip"
#define KCS_GPU_OOM hipErrorOutOfMemory
#define KCS_GPU_FN(name) kcs_hip_##name
#define KCS_GPU_OPS kcs_backend_hip /* the backend's ops table */
#define KCS_GPU_VENDOR "AMD"

#endif
