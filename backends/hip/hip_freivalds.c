/* kcs_hip_freivalds_verify (backends/freivalds_device.h): the device
 * Freivalds check on HIP; the host code is backends/cuda/gpu_freivalds.h,
 * shared with CUDA, the kernels freivalds.hip (the HIP build of
 * backends/cuda/freivalds.cu). */
#include "gpu_hip.h"
#include "gpu_freivalds.h"
