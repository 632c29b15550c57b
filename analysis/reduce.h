/* kcs reduce: read datasets back from disk, one case at a time, and turn
 * them into /analysis tables, CSV files and a Markdown report. */
#ifndef KCS_REDUCE_H
#define KCS_REDUCE_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "store.h"
#include "store_read.h"

typedef struct kcs_reduce_opts {
    const char *const *inputs;
    int n_inputs;
    const char *out_dir;     /* report directory */
    int quiet;
} kcs_reduce_opts;

/* One row of /analysis/verdicts: a (case, rank) over its trials. */
typedef struct kcs_verdict_row {
    int64_t case_id;
    int32_t rank;
    char contract[KCS_STR_SHORT];
    char op[KCS_STR_SHORT];
    char dtype_in[16];
    int64_t m, n, k;
    char input_dist[KCS_STR_SHORT];
    char implementation[64];
    char verdict[24];        /* worst over trials */
    char signature[64];
    double max_tau;
    double max_backward_err;
    double max_ulp;
    int32_t n_trials;
    int32_t n_within;
    int32_t distinct_digests; /* over trials (fresh inputs: expected = trials) */
} kcs_verdict_row;

/* One row of /analysis/divergence: two ranks on one case. */
typedef struct kcs_divergence_row {
    int64_t case_id;
    int32_t rank_a, rank_b;
    int64_t k;
    double max_abs_diff;     /* over the sampled outputs of trial 0 */
    double max_rel_diff;     /* max_abs_diff / max |sample| */
    int32_t identical;       /* output digests equal on every trial */
} kcs_divergence_row;

const kcs_field *kcs_verdict_row_fields(int *n_p);
const kcs_field *kcs_divergence_row_fields(int *n_p);

/* Summaries of one case (verdicts.c, divergence.c). */
void kcs_reduce_verdicts(const kcs_case_rec *cs, const kcs_result_rec *res,
                         const kcs_rank_rec *ranks, int n_ranks, int max_trials,
                         kcs_verdict_row *rows);
void kcs_reduce_divergence(const kcs_case_rec *cs, const kcs_result_rec *res,
                           const double *samples, int n_ranks, int max_trials, int n_samples,
                           kcs_divergence_row *rows);

/* The report (report.c). */
typedef struct kcs_report_data {
    const char *dataset;
    const kcs_store_info *info;
    const kcs_rank_rec *ranks;
    const kcs_verdict_row *verdicts;
    int64_t n_verdicts;
    const kcs_divergence_row *div;
    int64_t n_div;
} kcs_report_data;

int kcs_report_write(const char *path, const kcs_report_data *d, kcs_error *err);

int kcs_reduce_run(const kcs_reduce_opts *o, kcs_error *err);

#endif
