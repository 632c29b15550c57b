/* kcs_cuda_freivalds_verify (backends/freivalds_device.h): the device
 * Freivalds check on CUDA; the host code is gpu_freivalds.h, shared with
 * HIP, the kernels freivalds.cu. */
#include <cuda_runtime_api.h>

#define KCS_FV_RT(x) cuda##x
#define KCS_FV_NAME "cuda"
#define KCS_FV_OOM cudaErrorMemoryAllocation
#define KCS_GPU_FN(name) kcs_cuda_##name
#include "gpu_freivalds.h"
