/* kcs_hip_freivalds_verify (backends/freivalds_device.h): the device
 * Freivalds check on HIP; the host code is backends/cuda/gpu_freivalds.h,
 * shared with CUDA, the kernels freivalds.hip (the HIP build of
 * backends/cuda/freivalds.cu). */
#include <hip/hip_runtime_api.h>

#define KCS_FV_RT(x) hip##x
#define KCS_FV_NAME "hip"
#define KCS_FV_OOM hipErrorOutOfMemory
#define KCS_GPU_FN(name) kcs_hip_##name
#include "gpu_freivalds.h"
