/* The HIP build of the shared GPU kernels (backends/cuda/gpu_kernels.cuh,
 * one source for CUDA and HIP so both compute the same values). Compiled by
 * hipcc with -ffp-contract=off: the kernels write every fma they mean. */
#include <hip/hip_runtime.h>

#define KCS_GPU_NS kcs_hip
#define KCS_GPU_FN(name) kcs_hip_##name
#define KCS_GPU_STREAM(p) ((hipStream_t)(p))
#define KCS_GPU_LAST_ERROR() ((int)hipGetLastError())

#include "gpu_kernels.cuh"
