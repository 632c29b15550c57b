/* The C reference of the tiled device Freivalds kernels (v2, issue #47):
 * the same terms as backends/cuda/freivalds_tiled.cuh, from the same
 * blocking, probe packing and reduction tree (src/base/fv_tiled.h), summed
 * in the same order, so a device's terms equal these bit for bit. It runs
 * the kernels' threads one after another on one CPU thread: a check of the
 * device, not a fast path (the CPU's own verifier is kcs_freivalds_verify). */
#ifndef KCS_FREIVALDS_TILED_H
#define KCS_FREIVALDS_TILED_H

#include <stdint.h>

#include "error.h"
#include "freivalds.h"

/* P[c n + l] (c < ceil(k/32)): bit b set where R_{l, 32c+b} = -1, R the
 * probes of kcs_freivalds_probes(seed, stream, n, k). */
void kcs_freivalds_pack_probes(uint64_t seed, uint64_t stream, long n, int k, uint32_t *P);

/* The terms of kcs_freivalds_finish, laid out as the device kernels write
 * them: ya[m k] yc[m k] sab[m] na2[m] sc[m] nc2[m] nb2[1] (2 m k + 4 m + 1
 * doubles). 0, KCS_E_INVAL (arguments, as kcs_freivalds_verify) or
 * KCS_E_NOMEM. */
int kcs_freivalds_tiled_terms(const float *A, const float *B, const float *C, long m, long kk,
                              long n, int k, uint64_t seed, uint64_t stream, double *terms,
                              kcs_error *err);

/* kcs_freivalds_verify with the terms above (same verdict rules, any
 * p->mode); res_p->seconds is the wall time of the whole call. */
int kcs_freivalds_verify_tiled(const float *A, const float *B, const float *C, long m, long kk,
                               long n, const kcs_fv_params *p, const kcs_fv_detail *detail,
                               kcs_fv_result *res_p, kcs_error *err);

#endif
