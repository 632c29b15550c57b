/* Recommended tolerances (internal to the reducer): per (op, dtype_in,
 * dtype_out, declared accumulator) a tolerance model (tolmodel.h) fitted on
 * the conforming ranks' trials, validated out of sample (trial-split
 * cross-validation, leave-one-implementation-out), written to
 * tolerances.json; and the judging of a dataset with a given
 * tolerances.json (`kcs reduce NEW.h5 --tolerances FILE`). */
#ifndef KCS_TOLERANCES_H
#define KCS_TOLERANCES_H

#include <stdio.h>

#include "error.h"
#include "store.h"
#include "tolmodel.h"

typedef struct kcs_tolset kcs_tolset;

int kcs_tolset_new(const kcs_rank_rec *ranks, int n_ranks, double p, kcs_tolset **ts_p,
                   kcs_error *err);
void kcs_tolset_free(kcs_tolset *ts);
/* One case (pass 1): its results [rank][trial]; trial 0's sampled outputs
 * the fp64 reference and (|A||B|) at them (or NULL) for the torch pairs. */
int kcs_tolset_case(kcs_tolset *ts, const kcs_case_rec *cs, const kcs_result_rec *res, int T,
                    const double *samples, const double *ref, const double *absref,
                    int n_samples, kcs_error *err);
/* Fits and cross-validation (after pass 1). */
int kcs_tolset_settle(kcs_tolset *ts, kcs_error *err);
/* tolerances.json; datasets: the input paths. */
int kcs_tolset_write_json(const kcs_tolset *ts, const char *path, const char *const *datasets,
                          int n_datasets, kcs_error *err);
/* tolerance_model.csv (one row per recommendation or withheld key). */
int kcs_tolset_write_csv(const kcs_tolset *ts, const char *path, kcs_error *err);
/* The report's leading section. */
void kcs_tolset_report(FILE *f, const kcs_tolset *ts, const char *out_dir);

/* Judging a dataset with tolerances.json. */
typedef struct kcs_toljudge kcs_toljudge;

/* Parse FILE (errors: file:line:col: field: message, KCS_E_INVAL). */
int kcs_toljudge_open(const char *path, const kcs_rank_rec *ranks, int n_ranks,
                      kcs_toljudge **j_p, kcs_error *err);
void kcs_toljudge_free(kcs_toljudge *j);
void kcs_toljudge_case(kcs_toljudge *j, const kcs_case_rec *cs, const kcs_result_rec *res, int T);
int kcs_toljudge_write_csv(const kcs_toljudge *j, const char *dir, kcs_error *err);
void kcs_toljudge_report(FILE *f, const kcs_toljudge *j);
/* One warning line per recommendation that judged trials outside its
 * scope: k outside its validity range (extrapolated, or outside an
 * envelope: not judged), or an absolute metric on inputs other than those
 * it was fitted on. Each line states the scope: op, dtypes, accumulator,
 * metric, valid k range, fitted output count N0 and the input scale. */
void kcs_toljudge_warn(FILE *f, const kcs_toljudge *j);
/* `kcs reduce --tolerances FILE --query op=,dtype_in=,k=,outputs=[,dtype_out=,acc=,inputs=]`:
 * the one matching recommendation evaluated at k for that many outputs,
 * as one JSON object on out: {"eta", "scale_free" (eta relative to |A||B|
 * for the scaled metric, else null), "valid", "scope": {op, dtype_in,
 * dtype_out, acc, metric, inputs, k, k_range, outputs, outputs_fitted,
 * input_scale}}; outside its scope a warning line on warn. KCS_E_INVAL for
 * a malformed query or not exactly one match. */
int kcs_toljudge_query(const kcs_toljudge *j, const char *query, FILE *out, FILE *warn,
                       kcs_error *err);
/* {"tolerances": FILE, "judged": [{"rank", "implementation", "trials", "flagged", ...}]} */
void kcs_toljudge_json(FILE *f, const kcs_toljudge *j);
/* The same object's members without the braces (malloc'd; NULL when out of memory),
 * for embedding in another JSON object. */
char *kcs_toljudge_json_members(const kcs_toljudge *j);

/* The output count of a case (kcs_op_out_len of its shape; 0 if unknown). */
double kcs_case_outputs(const kcs_case_rec *cs);

#endif
