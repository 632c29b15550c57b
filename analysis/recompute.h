/* Recomputing what a dataset does not store: the inputs of a case are
 * regenerated bit for bit from its seeds (Philox keyed by study seed, case
 * id, tensor and trial: src/plan/inputs.c), proven identical to what the ranks
 * used by recomputing the input digest over every trial and comparing it
 * with /cases.input_digest, and the fp64 oracle is run on trial 0 to get
 * the reference y_ref and the magnitudes |A||B| at the sampled output
 * positions of /samples. The study seed comes from the stored study text,
 * the contract from the stored contract text: the dataset alone suffices. */
#ifndef KCS_RECOMPUTE_H
#define KCS_RECOMPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "error.h"
#include "study.h"
#include "view.h"

/* The output position of sample j of n_samples (src/run/protocol.c). */
size_t kcs_sample_index(int j, size_t out_len, int n_samples);

/* A case record back into the case kcs ran (id = the case id it had in its
 * own dataset). KCS_E_INVAL when a name does not parse. */
int kcs_case_from_rec(const kcs_case_rec *r, int64_t id, kcs_case *cs, kcs_error *err);

typedef struct kcs_recompute kcs_recompute;

/* max_work: cases with more multiply-adds (m n k batch, or the inputs'
 * size for other ops) than this are not recomputed. */
int kcs_recompute_new(double max_work, kcs_recompute **rc_p, kcs_error *err);
void kcs_recompute_free(kcs_recompute *rc);

typedef struct kcs_recomputed {
    int ok;          /* 1: ref/absref filled and the digest matched */
    char why[160];   /* otherwise, why not */
    double scale;    /* normwise denominator of trial 0 */
} kcs_recomputed;

/* For view case c: ref[n_samples], absref[n_samples] at the sampled
 * positions of trial 0. Returns an error only for out-of-memory; a case
 * that cannot be recomputed sets out->ok = 0 and out->why. */
int kcs_recompute_case(kcs_recompute *rc, kcs_view *v, int64_t c, double *ref, double *absref,
                       kcs_recomputed *out, kcs_error *err);

/* The contract of view case c (loaded from the stored text, cached), or
 * NULL with err filled. */
const kcs_contract *kcs_recompute_contract(kcs_recompute *rc, kcs_view *v, int64_t c,
                                           kcs_error *err);

#endif
