/* The HIP build of the device Freivalds terms (backends/cuda/freivalds.cu,
 * one source for CUDA and HIP): kcs_hip_freivalds_terms and the size
 * helpers. Compiled by hipcc with -I backends/cuda. */
#include <hip/hip_runtime.h>

#define KCS_FV_HIP 1
#define KCS_FV_FN(name) kcs_hip_##name
#define KCS_FV_STREAM(p) ((hipStream_t)(p))
#define KCS_FV_STREAM_T hipStream_t
#define KCS_FV_LAST_ERROR() ((int)hipGetLastError())

#include "freivalds.cu"
