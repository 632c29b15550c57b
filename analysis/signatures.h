/* Ordering signatures (internal to the reducer): per (case, rank), how
 * its bits relate to the other ranks' on identical inputs and to its own
 * repeated runs, and a classification:
 *   run-to-run-nondeterministic  the case's protocol is `repeat` and the
 *                                rank failed it (its repetitions on one
 *                                input did not agree, as the contract
 *                                judges them)
 *   batch-variant                protocol `batch_invariance` failed
 *   schedule-variant             the rank's outputs differ bitwise from
 *                                another rank's on the same inputs
 *                                (with determinism shown by a repeat
 *                                case, or marked unmeasured)
 *   bitwise-deterministic        repeat passed and bitwise equal to every
 *                                other rank
 *   schedule-invariant           bitwise equal to every other rank,
 *                                determinism not measured by this case
 * Per-rank summaries combine the cases (a rank is nondeterministic when any
 * of its repeat cases failed). */
#ifndef KCS_SIGNATURES_H
#define KCS_SIGNATURES_H

#include "contract.h"
#include "reduce.h"

enum {
    KCS_SIG_NONDET = 0,
    KCS_SIG_BATCH,
    KCS_SIG_SCHEDULE,
    KCS_SIG_DETERMINISTIC,
    KCS_SIG_INVARIANT,
    KCS_SIG_NONE, /* the rank ran nothing */
    KCS_SIG_N
};

extern const char *const kcs_sig_class_names[KCS_SIG_N];

typedef struct kcs_sig_summary {
    int nr;
    int64_t *count;          /* [nr * KCS_SIG_N] */
    int64_t *repeat_cases, *repeat_fail, *batch_cases, *batch_fail;
    double *max_ulp;         /* to the reference output (signature rows) */
    int64_t *pattern_rows, *pattern_tiles, *pattern_everywhere, *pattern_scattered;
} kcs_sig_summary;

int kcs_sig_summary_init(kcs_sig_summary *s, int nr);
void kcs_sig_summary_free(kcs_sig_summary *s);

/* rows[nr] for one case; pairs as kcs_reduce_divergence made them. */
void kcs_signatures_case(const kcs_case_rec *cs, int have_protocol, kcs_protocol_kind protocol,
                         const kcs_result_rec *res, int T, const kcs_divergence_row *pairs,
                         const kcs_rank_rec *ranks, int nr, kcs_signature_row *rows,
                         kcs_sig_summary *sum);

#endif
