/* A contract's measurement protocol, executed for one trial of one case on
 * one implementation: inputs, reference, guarded kernel call(s), metrics,
 * protocol extras (repetitions, batch invariance, stale-result replay) and
 * the verdict. Shared by `kcs run` (per rank) and `kcs calibrate`. */
#ifndef KCS_PROTOCOL_H
#define KCS_PROTOCOL_H

#include <mpi.h>

#include "placement.h"
#include "store.h"
#include "study.h"

#define KCS_REPLAY_MAX 64

/* What a case remembers across its trials (stale-result replay). */
typedef struct kcs_case_memory {
    int n;
    uint64_t input_digest[KCS_REPLAY_MAX];
    uint64_t output_digest[KCS_REPLAY_MAX];
} kcs_case_memory;

typedef struct kcs_trial_io {
    uint64_t study_seed;
    double timeout_s;
    int rank;
    int verbose;
    kcs_case_memory *memory;  /* reset per case by the caller */
    uint64_t *input_digest;   /* accumulated over trials */
    double *samples;          /* trial 0's sampled outputs, or NULL */
    int n_samples;
    /* share_oracle: the fp64 GEMM reference is split over comm's ranks
     * (oracle_shared.h); then every rank of comm must run every trial in
     * the same order (the runner does). 0: computed locally. */
    int share_oracle;
    MPI_Comm comm;
} kcs_trial_io;

/* Run trial `trial` of case cs under contract c on binding b and fill rec.
 * Kernel failures are recorded in rec (status), not returned; the return
 * value is an error of the run itself (out of memory). */
int kcs_protocol_trial(const kcs_contract *c, const kcs_case *cs, int trial,
                       kcs_rank_binding *b, const kcs_trial_io *io, kcs_result_rec *rec,
                       kcs_error *err);

/* A result row for a trial that did not run. */
void kcs_protocol_blank(kcs_result_rec *r, const kcs_case *cs, int rank, int trial,
                        kcs_status status, const char *verdict);

#endif
