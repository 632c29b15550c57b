/* kcs_cuda_freivalds_verify (backends/freivalds_device.h): the device
 * Freivalds check on CUDA; the host code is gpu_freivalds.h, shared with
 * HIP, the kernels freivalds.cu. */
#include "gpu_cuda.h"
#include "gpu_freivalds.h"
