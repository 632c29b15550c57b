/* Divergence baselines (internal to the reducer). Cases are grouped by
 * (op, dtype_in, dtype_acc, dtype_out, input distribution). Per group:
 *   - fits of divergence ~ C n^alpha (n = k) in log-log, for every rank
 *     against the oracle (/results max_abs, max_scaled over all outputs,
 *     every trial), every rank pair (trial 0's sampled outputs: absolute,
 *     and scaled by |A||B| at those positions when the inputs could be
 *     regenerated), and the reference population (the conforming ranks:
 *     within tolerance on every trial of the group) against the oracle;
 *   - recommended tolerances eta = c_q n u, c = divergence / (n u) taken
 *     from the reference population at q = 0.99 and q = 1 (the maximum),
 *     with in-sample and held-out false alarms (c from the odd trials,
 *     judged on the even ones) and the flags they raise on the other ranks;
 *   - torch.testing.assert_close's default tolerances applied element-wise
 *     to trial 0's sampled outputs against the fp64 reference.
 * Two streaming passes: pass 1 accumulates (co-moments for the fits, log
 * histograms for the quantiles), pass 2 re-reads /results and counts the
 * trials each tolerance flags. Memory: O(groups x ranks^2), not O(data). */
#ifndef KCS_BASELINES_H
#define KCS_BASELINES_H

#include "reduce.h"
#include "spool.h"

typedef struct kcs_baselines kcs_baselines;

int kcs_baselines_new(int n_ranks, const kcs_rank_rec *ranks, kcs_baselines **b_p,
                      kcs_error *err);
void kcs_baselines_free(kcs_baselines *b);

/* Pass 1, one case: its results, its pair rows, and (ref, absref at the
 * samples, or NULL) for torch's check. Appends points to pts. */
int kcs_baselines_case(kcs_baselines *b, const kcs_case_rec *cs, const kcs_result_rec *res,
                       int max_trials, const kcs_divergence_row *pairs, const double *samples,
                       const double *ref, int n_samples, kcs_spool *pts, kcs_error *err);
/* Between the passes: conformity and the tolerance constants. */
void kcs_baselines_settle(kcs_baselines *b);
/* Pass 2, one case. */
void kcs_baselines_count(kcs_baselines *b, const kcs_case_rec *cs, const kcs_result_rec *res,
                         int max_trials);

/* The tables (malloc'd rows; free() them). */
typedef struct kcs_baseline_tables {
    kcs_group_row *groups;
    int64_t n_groups;
    kcs_fit_row *fits;
    int64_t n_fits;
    kcs_tol_row *tols;
    int64_t n_tols;
    kcs_flag_row *flags;
    int64_t n_flags;
    kcs_torch_row *torch;
    int64_t n_torch;
} kcs_baseline_tables;

int kcs_baselines_tables(kcs_baselines *b, kcs_baseline_tables *t, kcs_error *err);
void kcs_baseline_tables_free(kcs_baseline_tables *t);

/* Unit roundoff of an accumulator name ("fp32", "bits:12"); NaN if unknown. */
double kcs_acc_unit_roundoff(const char *acc);

#endif
