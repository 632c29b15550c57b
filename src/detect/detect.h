/* kcs detect: detection curves by error injection. For every gemm case of
 * a study and a few input sets, the conforming output of the study's first
 * placement (cpu native) is corrupted at magnitudes m x eta, eta the
 * contract's tolerance:
 *   single  one random element moves by m eta w_i
 *   dense   every element moves by m eta w_i times a random sign (or, for a
 *           backward_error contract, a Gaussian matrix scaled so that
 *           ||E||_F = m eta ||A||_F ||B||_F)
 *   row     localized: every element of one random row moves by m eta w_i
 *           times a random sign (backward_error: ||E||_F = m eta ||A|| ||B||)
 * with w_i = (|A||B|)_ij for componentwise contracts (pointwise_relative),
 * ||A||_F ||B||_F for backward_error, 1 for pointwise_absolute and one ULP
 * of y_i for ulp contracts, and the result rounded to dtype_out. Each
 * corrupted output goes through every detector:
 *   oracle            the full contract verdict against the oracle
 *                     (kcs_verdict_judge)
 *   digest            its output digest differs from the conforming output's
 *   torch             torch.testing.assert_close defaults against the fp64
 *                     reference rounded to dtype_out
 *   freivalds-rig     kcs_freivalds_verify, rigorous mode (no conforming GEMM
 *                     fails), k probes
 *   freivalds-prob    probabilistic mode (Higham-Mary bound, P(false alarm)
 *                     <= 1e-9 per call)
 *   freivalds-fixed   the paper author's harness criterion on the same
 *                     residuals (atol = rtol = 1e-4 for fp32)
 * Mechanisms (rows with magnitude NaN): coerce-bf16, the first placement on
 * inputs rounded to bf16; stale-row, one row of the previous input set's
 * output. Every row also gives its size in units of the data
 * (magnitude_data). Magnitude 0 is the false-alarm check: every placement's own output (the
 * conforming ones: those the oracle judges within tolerance) through every
 * detector. The tables go to /analysis of a small HDF5 file whose root says
 * content = "detection"; `kcs reduce` renders them. */
#ifndef KCS_DETECT_H
#define KCS_DETECT_H

#include <stdint.h>

#include "error.h"
#include "detect_data.h"

typedef struct kcs_detect_opts {
    const char *study;
    const char *out;        /* det.h5 */
    int trials;             /* injections per magnitude and kind (default 200) */
    int n_magnitudes;       /* log-spaced in [mag_min, mag_max] (default 13) */
    double mag_min, mag_max;/* multiples of eta (default 0.01 .. 100) */
    int inputs;             /* input sets per case (default min(trials of the case, 4)) */
    int probes;             /* Freivalds probes (default 10) */
    int force;
    int quiet;
    const char *command_line;
} kcs_detect_opts;

int kcs_detect_run(const kcs_detect_opts *o, kcs_error *err);

#endif
