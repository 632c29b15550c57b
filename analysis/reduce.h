/* kcs reduce: read datasets back from disk, one case at a time, and turn
 * them into /analysis tables, CSV files, figures and a Markdown report:
 * per-(case, rank) verdicts, cross-rank divergence, divergence baselines
 * (fits of divergence ~ n^alpha, recommended tolerances), ordering
 * signatures, merges of several datasets, and detection curves of
 * `kcs detect` datasets. */
#ifndef KCS_REDUCE_H
#define KCS_REDUCE_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "stats.h"
#include "store.h"
#include "store_read.h"

typedef struct kcs_reduce_opts {
    const char *const *inputs;
    int n_inputs;
    const char *out_dir;     /* report directory (while reducing: its partial copy) */
    const char *final_dir;   /* the report directory's own name (NULL: out_dir) */
    const char *merged_path; /* merge output (default OUT_DIR/merged.h5) */
    int quiet;
    int no_plots;            /* do not run analysis/plot.py */
    int no_recompute;        /* do not regenerate inputs (no |A||B| at samples) */
    double recompute_max;    /* largest case (multiply-adds) to regenerate */
    const char *plot_script; /* default: KCS_PLOT_SCRIPT or the installed/source one */
    const char *tolerances;  /* judge the dataset with this tolerances.json */
    int json;                /* stdout is a JSON document: no summary line */
    char **judged_json;      /* out (malloc'd, or NULL): with tolerances, the judgement's
                                members ("tolerances", "false_alarm_target", "judged") */
    double false_alarm;      /* target p of the recommended tolerances (0: 0.01) */
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

/* One row of /analysis/divergence: two ranks on one case (trial 0's
 * sampled outputs; identical: digests equal on every trial both ran). */
typedef struct kcs_divergence_row {
    int64_t case_id;
    int32_t rank_a, rank_b;
    int64_t k;
    double max_abs_diff;     /* max |y_a - y_b| over the sampled outputs of trial 0 */
    double max_rel_diff;     /* max_abs_diff / max |sample| */
    int32_t identical;       /* output digests equal on every trial */
    double max_scaled_diff;  /* max |y_a - y_b| / (|A||B|)_ij (NaN: not recomputed) */
    double max_ulp_diff;     /* in dtype_out */
    double frac_differ;      /* sampled outputs that differ bitwise */
    int32_t n_compared;
    char pattern[24];        /* none | everywhere | rows | cols | tiles:T | scattered */
} kcs_divergence_row;

/* /analysis/divergence_points: every divergence measurement, for plots.
 * rank_b = -1: against the oracle (one row per trial, max over all
 * outputs, from /results); otherwise two ranks (trial 0's samples). */
typedef struct kcs_point_row {
    int64_t case_id;
    int32_t group;
    int32_t rank_a, rank_b;
    int32_t trial;
    int64_t k;
    double abs_div;
    double scaled_div;
} kcs_point_row;

/* /analysis/baseline_groups */
typedef struct kcs_group_row {
    int32_t group;
    char op[KCS_STR_SHORT];
    char dtype_in[16], dtype_acc[16], dtype_out[16];
    char input_dist[KCS_STR_SHORT];
    double u;                /* unit roundoff of dtype_acc */
    int64_t n_cases, k_min, k_max;
    int32_t n_k;
    int32_t n_conforming;    /* ranks within tolerance on every trial of the group */
    char conforming[128];    /* their rank numbers, comma-separated */
} kcs_group_row;

/* /analysis/baseline_fits: divergence ~ C * n^alpha (n = k). rank_b = -1:
 * against the oracle; rank_a = -2: the reference population (every
 * conforming rank, against the oracle). */
typedef struct kcs_fit_row {
    int32_t group;
    int32_t rank_a, rank_b;
    char impl_a[64], impl_b[64];
    char metric[16];         /* abs | scaled */
    int64_t n_points, n_zero; /* zero divergences are left out of the log fit */
    int32_t n_k;
    int64_t k_min, k_max;
    double alpha, alpha_se, alpha_lo, alpha_hi; /* 95 % interval (t quantile) */
    double r2;
    double c_geomean;        /* geometric mean of c = divergence / (n u) */
    double c_max;
    int32_t conforming_a, conforming_b;
} kcs_fit_row;

/* /analysis/tolerances: eta = c_q * n * u from the reference population. */
typedef struct kcs_tol_row {
    int32_t group;
    char metric[16];         /* abs | scaled | backward */
    double q;                /* 0.99 or 1 (max) */
    double c_q;
    double u;
    double eta_kmin, eta_kmax;
    int32_t n_ref_ranks;
    int64_t ref_trials, ref_flagged;      /* in-sample false alarms */
    double c_heldout;                     /* c_q of the odd trials */
    int64_t heldout_trials, heldout_flagged; /* even trials judged by c_heldout */
    int32_t n_bad_ranks;
    int64_t bad_trials, bad_flagged;
} kcs_tol_row;

/* /analysis/tolerance_flags: per (group, rank) under the recommended
 * tolerances (q = max), the contract and torch's defaults. */
typedef struct kcs_flag_row {
    int32_t group;
    int32_t rank;
    char impl[64];
    int32_t conforming;
    int64_t n_trials;
    int64_t flagged_scaled, flagged_abs, flagged_backward; /* recommended eta, q = max */
    int64_t flagged_contract;    /* verdict not within_tolerance */
    int64_t torch_trials, torch_flagged; /* trial 0, sampled outputs */
} kcs_flag_row;

/* /analysis/torch_compare: conforming trials flagged, per (group, k). */
typedef struct kcs_torch_row {
    int32_t group;
    int64_t k;
    double rtol, atol;
    int64_t n_trials;            /* conforming (rank, case) trial-0 outputs judged */
    int64_t torch_flagged;
    int64_t elements, elements_flagged;
    int64_t contract_flagged;    /* contract eta (verdict), same trials */
    int64_t kcs_flagged;         /* recommended eta (scaled, q = max) */
    int64_t kcs_heldout_flagged; /* the same with c from the odd trials only */
    double torch_frac, contract_frac, kcs_frac, kcs_heldout_frac;
} kcs_torch_row;

/* /analysis/signatures: ordering signature of a (case, rank). */
typedef struct kcs_signature_row {
    int64_t case_id;
    int32_t rank;
    char impl[64];
    char contract[KCS_STR_SHORT];
    char protocol[24];
    int64_t k;
    int32_t n_trials;
    int32_t distinct_digests;    /* over trials */
    int32_t bitwise_class;       /* lowest rank with the same digests on every trial */
    int32_t n_classes;           /* bitwise classes among the case's ranks */
    int32_t reference_rank;      /* what it is compared with: the modal output when
                                    several ranks share it, else the closest rank */
    double max_ulp_spread;       /* max ULP distance to the reference, trial 0's samples */
    double frac_differ;          /* sampled outputs differing bitwise from the reference */
    char pattern[24];
    char determinism[24];        /* deterministic | nondeterministic | unmeasured */
    char klass[32];              /* bitwise-deterministic | run-to-run-nondeterministic |
                                    batch-variant | schedule-variant | schedule-invariant */
} kcs_signature_row;

/* /analysis/sources: the datasets of a merge. */
typedef struct kcs_source_row {
    int32_t index;
    char path[256];
    char study_name[64];
    char plan_hash[32];
    char created[32];
    char software_version[32];
    char git_hash[48];
    int32_t n_ranks, first_rank;
    int64_t n_cases, n_matched;
} kcs_source_row;

const kcs_field *kcs_verdict_row_fields(int *n_p);
const kcs_field *kcs_divergence_row_fields(int *n_p);
const kcs_field *kcs_point_row_fields(int *n_p);
const kcs_field *kcs_group_row_fields(int *n_p);
const kcs_field *kcs_fit_row_fields(int *n_p);
const kcs_field *kcs_tol_row_fields(int *n_p);
const kcs_field *kcs_flag_row_fields(int *n_p);
const kcs_field *kcs_torch_row_fields(int *n_p);
const kcs_field *kcs_signature_row_fields(int *n_p);
const kcs_field *kcs_source_row_fields(int *n_p);

/* Per (case, rank) summaries over trials (verdicts.c). */
void kcs_reduce_verdicts(const kcs_case_rec *cs, const kcs_result_rec *res,
                         const kcs_rank_rec *ranks, int n_ranks, int max_trials,
                         kcs_verdict_row *rows);

/* Rank pairs of one case (pairs.c). absref: |A||B| at the sampled
 * positions or NULL; out_fmt: the output format (ULP distances). */
void kcs_reduce_divergence(const kcs_case_rec *cs, const kcs_result_rec *res,
                           const double *samples, const double *absref, int n_ranks,
                           int max_trials, int n_samples, kcs_divergence_row *rows);

/* The layout of a case's output as rows x cols (pattern detection). */
void kcs_output_grid(const kcs_case_rec *cs, int64_t *rows_p, int64_t *cols_p);
/* Where sampled outputs differ: none, everywhere, rows, cols, tiles:T or
 * scattered. pos[i] are output positions (row-major in a rows x cols
 * grid), differ[i] != 0 where the two outputs differ; n positions. */
const char *kcs_pattern_classify(const size_t *pos, const unsigned char *differ, int n,
                                 int64_t rows, int64_t cols, char *buf, size_t len);

/* Torch's assert_close default tolerances for a dtype name. */
void kcs_torch_tol(const char *dtype, double *rtol_p, double *atol_p);

int kcs_reduce_run(const kcs_reduce_opts *o, kcs_error *err);

#endif
