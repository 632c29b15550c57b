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
#include "reduce.h"
#include "store.h"

#define KCS_DETECTORS 6
extern const char *const kcs_detector_names[KCS_DETECTORS];

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

/* /analysis/detection: one detector on one kind of injection at one
 * magnitude (magnitude 0: no injection, the conforming output itself). */
typedef struct kcs_det_row {
    int64_t case_id;
    char contract[KCS_STR_SHORT];
    char op[KCS_STR_SHORT];
    char dtype_in[16];
    int64_t m, n, k;
    char structure[24];      /* the contract's tolerance structure */
    double eta;              /* of the first input set */
    char detector[24];
    char kind[16];           /* single | dense | row */
    double magnitude;        /* multiple of eta */
    int64_t trials, detected;
    double p_detect;
    double magnitude_data;   /* the same injections in units of the data: mean over
                                trials of max_i |dy_i| / max_j |y_row(i),j| (the
                                corrupted element's row scale); one axis for every
                                detector and contract */
} kcs_det_row;

/* /analysis/detection_false_alarms: a placement's own outputs. */
typedef struct kcs_fa_row {
    int64_t case_id;
    int32_t rank;            /* placement index */
    char impl[64];
    int32_t conforming;      /* every input set within tolerance */
    char detector[24];
    int64_t outputs, flagged;
} kcs_fa_row;

/* /analysis/detection_summary: per (case, detector, kind). */
typedef struct kcs_det_summary_row {
    int64_t case_id;
    char detector[24];
    char kind[16];
    int64_t fa_outputs, fa_flagged; /* conforming placements other than the first included */
    double min_magnitude_99;        /* smallest magnitude detected at >= 99 % (NaN: none) */
    int32_t usable;                 /* detected at >= 99 % somewhere with zero false alarms */
} kcs_det_summary_row;

const kcs_field *kcs_det_row_fields(int *n_p);
const kcs_field *kcs_fa_row_fields(int *n_p);
const kcs_field *kcs_det_summary_row_fields(int *n_p);

int kcs_detect_run(const kcs_detect_opts *o, kcs_error *err);

/* kcs reduce on a detection dataset: CSVs, figures and report.md. */
int kcs_detect_report(const kcs_reduce_opts *o, kcs_error *err);

#endif
