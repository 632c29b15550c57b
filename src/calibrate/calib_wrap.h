/* Calibration variants for any backend, as transformations around the
 * backend's own native kernels (calib_wrap.c): the column of `kcs
 * calibrate --backend B` for backends that have no calib kernels of their
 * own (OpenCL, CUDA, ...). The variants are those of the CPU backend,
 * "calib:<CONTRACT-ID>:<baseline|bad|good>":
 *   baseline  returns without writing (the poison stays);
 *   good      the backend's native kernel, untouched;
 *   bad       the catalogue's bad_wrap (calibrate.c): host-side
 *             transformations of inputs, outputs or k-slices around native
 *             calls (tf32 rounding of inputs, bf16 accumulation of slice
 *             results, a per-shape memo, ...). Where a defect cannot be
 *             expressed around a native kernel it is emulated on the host
 *             (the unshifted softmax's overflow; the one-pass variance),
 *             which the catalogue says.
 * Any other variant is forwarded to the backend unchanged. */
#ifndef KCS_CALIB_WRAP_H
#define KCS_CALIB_WRAP_H

#include "backend.h"

/* The wrapper's ops table: run/describe/close act on a context made by
 * kcs_calib_wrap_open (its own open slot answers KCS_E_UNSUPPORTED, since
 * it needs the inner backend; discover finds no devices). */
extern const kcs_backend_ops kcs_calib_wrap_ops;

/* Open device `device` of backend `inner` with cfg and wrap it. */
int kcs_calib_wrap_open(const kcs_backend_ops *inner, int device, const kcs_backend_config *cfg,
                        kcs_backend_ctx **ctx_p, kcs_error *err);

#endif
