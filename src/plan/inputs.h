/* The inputs of one trial of one case: every rank generates the same bits
 * from Philox keyed by (study seed, case, tensor, trial), shaped for the
 * op, with the contract's special values injected (NaN, Inf of either
 * sign, +Inf, -Inf, subnormal fractions; out-of-range gather indices). */
#ifndef KCS_INPUTS_H
#define KCS_INPUTS_H

#include "contract.h"
#include "error.h"
#include "study.h"

typedef struct kcs_inputs {
    double *t[KCS_MAX_INPUTS];
    size_t len[KCS_MAX_INPUTS];
    int64_t oob_count; /* gather indices outside [0, m) */
    uint64_t digest;   /* XXH3-based digest of every tensor */
} kcs_inputs;

/* Fill call->in/in_len from freshly generated tensors (owned by in). */
int kcs_inputs_make(const kcs_contract *c, const kcs_case *cs, int trial, uint64_t study_seed,
                    kcs_call *call, kcs_inputs *in, kcs_error *err);
void kcs_inputs_free(kcs_inputs *in);
/* A copy of src in fresh buffers (*dst, owned by it), set as call->in. */
int kcs_inputs_copy(const kcs_inputs *src, kcs_call *call, kcs_inputs *dst, kcs_error *err);

/* The call of trial `trial` of case cs under contract c, before inputs:
 * op, dtypes, accumulator, shape, the contract's attributes and the
 * trial's seed. The one setup that the protocol (src/run), the reducer's
 * recomputation (analysis/) and detection (src/detect) share. */
void kcs_trial_call(const kcs_contract *c, const kcs_case *cs, int trial, kcs_call *call);
/* A case's input digest with trial's folded in (order-independent XOR
 * of the trials' digests, each spread by its index). */
uint64_t kcs_input_digest_fold(uint64_t case_digest, uint64_t trial_digest, int trial);

#endif
