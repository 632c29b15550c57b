/* The detection dataset's schema (written by `kcs detect`, src/detect/;
 * read and reported by the reducer, detect_report.c). */
#ifndef KCS_DETECT_DATA_H
#define KCS_DETECT_DATA_H

#include <stdint.h>

#include "error.h"
#include "reduce.h"
#include "store.h"

#define KCS_DETECTORS 6
extern const char *const kcs_detector_names[KCS_DETECTORS];


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

int kcs_detect_report(const kcs_reduce_opts *o, kcs_error *err);

#endif
