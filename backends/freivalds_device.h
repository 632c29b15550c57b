/* Batched Freivalds verification on a GPU (issue #8): the same check as
 * kcs_freivalds_verify (src/arith/freivalds.h), with the per-row terms computed
 * by the device kernels of backends/cuda/freivalds.cu (CUDA) or
 * backends/hip/freivalds.hip (HIP) and the thresholds and verdict applied
 * on the host by kcs_freivalds_finish, exactly as on the CPU.
 *
 * A, B, C are host arrays (row-major fp32, as for kcs_freivalds_verify);
 * the call uploads them to `device`, runs the terms kernels, copies the
 * terms back and finishes. res_p->seconds is the device time of the terms
 * kernels (events around the launch) plus the host time of the finish;
 * uploads and allocations are not counted. Errors: KCS_E_INVAL (arguments,
 * checked before the device is touched), KCS_E_NODEV (no runtime / no such
 * device: "cuda: no device ..." / "hip: no device ..."), KCS_E_NOMEM,
 * KCS_E_DEVICE. res_p is set only on success. */
#ifndef KCS_FREIVALDS_DEVICE_H
#define KCS_FREIVALDS_DEVICE_H

#include <stdint.h>
#include <stddef.h>

#include "error.h"
#include "freivalds.h"

typedef int (*kcs_fv_device_fn)(int device, const float *A, const float *B, const float *C,
                                long m, long kk, long n, const kcs_fv_params *p,
                                const kcs_fv_detail *detail, kcs_fv_result *res_p,
                                kcs_error *err);

/* backends/cuda/cuda_freivalds.c + gpu_freivalds.h, in the cuda module
 * (reached through its ops table's freivalds slot). */
int kcs_cuda_freivalds_verify(int device, const float *A, const float *B, const float *C,
                              long m, long kk, long n, const kcs_fv_params *p,
                              const kcs_fv_detail *detail, kcs_fv_result *res_p,
                              kcs_error *err);

/* backends/hip/hip_freivalds.c + gpu_freivalds.h, in the hip module. */
int kcs_hip_freivalds_verify(int device, const float *A, const float *B, const float *C,
                             long m, long kk, long n, const kcs_fv_params *p,
                             const kcs_fv_detail *detail, kcs_fv_result *res_p,
                             kcs_error *err);

/* For the backends' verifiers: kcs_freivalds_check_args (before any
 * device call), then the element counts of A, B, C; each product of two
 * dimensions, k included, must be <= KCS_FV_DEV_MAX_ELEMS, so the kernels'
 * int64 offsets and the byte sizes of the work and terms buffers (at most
 * 6 such products) cannot overflow. 0 or KCS_E_INVAL. */
#define KCS_FV_DEV_MAX_ELEMS                                                                  \
    ((uint64_t)(SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX) / 64)

/* backends/cuda/cuda_sgemm_time.c: the cuda ops table's sgemm_seconds. */
int kcs_cuda_sgemm_seconds(int device, long m, long kk, long n, int reps, double *seconds_p,
                           kcs_error *err);

int kcs_fv_device_args(const float *A, const float *B, const float *C, long m, long kk, long n,
                       const kcs_fv_params *p, const kcs_fv_result *res_p, size_t *na_p,
                       size_t *nb_p, size_t *nc_p, kcs_error *err);

/* The device verifier of a backend ("cuda", "hip"): its ops table's
 * freivalds slot (loading its module, backends/registry.c), else NULL (any
 * other name, NULL, a GPU backend not built, excluded or not loadable). */
kcs_fv_device_fn kcs_freivalds_device(const char *backend);

#endif
