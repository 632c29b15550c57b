/* Power curves of the elementwise exp contract (C-PRC-05) in kcs calibrate
 * --sweep (calib_sweep.h): the number of elements k = k_min, 4 k_min, ...
 * up to k_max (--min-k / --max-k bound it; one row of k values, m = n = 1),
 * every admitted dtype_in and every distribution the precondition admits
 * (normal, uniform_pm1, large for C-PRC-05; a trial is flagged when any
 * distribution's call is not within tolerance). Conforming: native and own
 * (glibc expf), the calibration good kernel, and the CPU's exp:cr,
 * exp:cephes and exp:ulp3 (backends/cpu/defect_exp.c); bad: the
 * calibration kernel (__expf's argument rounding) and the defect:exp-*
 * catalogue of the same file. A bad kernel's trial counts only where some
 * distribution's output differs from every conforming kernel's (the value
 * rule of the other sweeps); the others are inert. */
#ifndef KCS_CALIB_SWEEP_ELEM_H
#define KCS_CALIB_SWEEP_ELEM_H

#include "calib_sweep.h"
#include "progress.h"

/* The swept points of c (elementwise, oracle protocol, fn=exp, no
 * injected special values), at most max, into shapes; 0 when c is not
 * swept here. */
int kcs_sweep_elem_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_shape *shapes,
                          int max);

/* Sweep c (kcs_sweep_elem_points(c) > 0), appending its rows to *rows_p
 * (capacity *cap_p, *n_rows_p used); the progress counter *done_p
 * advances once per (point, dtype). */
int kcs_sweep_elem_run(const kcs_contract *c, const kcs_calib_run *run, const kcs_sweep_opts *o,
                       kcs_sweep_row **rows_p, int *n_rows_p, int *cap_p, kcs_progress *progress,
                       int64_t *done_p, kcs_error *err);

#endif
